"""Speed and scale of `minhash_dedup`.

    # signatures per CPU-second on ~3 KB real documents, vs datasketch MinHash.update_batch on the
    # same word 5-grams (112 permutations, the same normalized text)
    .venv/bin/python benchmarks/dedup_minhash_speed.py signatures [--docs 2000]

    # end-to-end dedup of N documents: gristmill (Beam, 2 workers) and datatrove's 4-stage MinHash
    # (signatures, buckets, cluster, filter; same 5-gram shingles on simplify_text, 14x8, 2 workers)
    # on the same JSONL, in one run. datatrove lives in a throwaway venv, never a project dependency:
    #   python3.11 -m venv /tmp/dt-venv-minhash
    #   /tmp/dt-venv-minhash/bin/pip install datatrove "xxhash<4" numpy regex tokenizers orjson
    .venv/bin/python benchmarks/dedup_minhash_speed.py e2e [--docs 100000] [--datatrove-python PATH]

    # scale: N documents through the Beam pipeline, peak RSS of the process tree
    .venv/bin/python benchmarks/dedup_minhash_speed.py scale --docs 1000000

Corpus: documents of ~3 KB made of paragraphs of real documents from ../shared/data (ABC news,
movie reviews, Brown, cc_net), 20% of them near-duplicates of earlier ones (1-3 realistic edits,
see dedup_minhash_quality.py). Timings were taken on a shared 2-core machine, loaded by other work.
"""

from __future__ import annotations

import json
import random
import resource
import tempfile
import time
from pathlib import Path

from common import DATA, arguments, run_with_tree_cpu

from benchmarks.dedup_minhash_quality import edit, load_bodies, load_templates
from benchmarks.dedup_minhash_run import run_minhash
from dedup.signatures import MinHasher, normalize_text, shingle_hasher

DATATROVE_PYTHON = "/tmp/dt-venv-minhash/bin/python"
DATATROVE_SCRIPT = r"""
import sys, time
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
from datatrove.pipeline.dedup.minhash import MinhashConfig
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import HashConfig
from datatrove.utils.word_tokenizers import WordTokenizer

class Whitespace(WordTokenizer):  # simplify_text output split on spaces: the same 5-grams as gristmill
    def word_tokenize(self, text): return text.split()
    def sent_tokenize(self, text): return [text]
    def span_tokenize(self, text): return [(0, len(text))]

corpus, work, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = MinhashConfig(n_grams=5, num_buckets=14, hashes_per_bucket=8, seed=1, hash_config=HashConfig(precision=64))
reader = lambda: JsonlReader(corpus, text_key="text", id_key="id")
stages = [
    ([reader(), MinhashDedupSignature(f"{work}/sigs", config=config, language=Whitespace())], workers),
    ([MinhashDedupBuckets(f"{work}/sigs", f"{work}/buckets", config=config)], config.num_buckets),
    ([MinhashDedupCluster(f"{work}/buckets", f"{work}/remove_ids", config=config)], 1),
    ([reader(), MinhashDedupFilter(f"{work}/remove_ids"), JsonlWriter(f"{work}/kept")], workers),
]
start = time.perf_counter()
for i, (steps, tasks) in enumerate(stages):
    t = time.perf_counter()
    LocalPipelineExecutor(steps, tasks=tasks, workers=min(workers, tasks), logging_dir=f"{work}/logs{i}", skip_completed=False).run()
    print(f"datatrove stage {i + 1}: {time.perf_counter() - t:.1f}s", flush=True)
print(f"datatrove total: {time.perf_counter() - start:.1f}s")
"""


def make_corpus(path: Path, count: int, seed: int = 0, size: int = 3000, dup_fraction: float = 0.2) -> int:
    """Write `count` ~`size`-char documents (JSONL {id, text}); return the number of near-dups."""
    rng = random.Random(seed)
    paragraphs = [p for body in load_bodies(DATA, rng, 10**6) for p in body.split("\n") if len(p) > 40]
    templates = load_templates(DATA)
    recent: list[str] = []
    dups = 0
    with path.open("w") as f:
        for i in range(count):
            if recent and rng.random() < dup_fraction:
                text, _ = edit(rng.choice(recent), rng, templates)
                dups += 1
            else:
                start = rng.randrange(len(paragraphs))
                parts, length = [], 0
                while length < size:
                    part = (
                        paragraphs[(start + len(parts)) % len(paragraphs)]
                        if rng.random() < 0.7
                        else rng.choice(paragraphs)
                    )
                    parts.append(part)
                    length += len(part) + 1
                text = "\n".join(parts)[:size]
                recent = (recent + [text])[-1000:]
            f.write(json.dumps({"id": f"d{i:08d}", "text": text}) + "\n")
    return dups


def bench_signatures(args) -> None:
    from datasketch import MinHash

    rng = random.Random(0)
    bodies = load_bodies(DATA, rng, args.docs * 2)
    docs = [(b.replace("\n", " ") * 3)[:3000] for b in bodies if len(b) > 1000][: args.docs]
    hasher, minhasher = shingle_hasher(5, 1), MinHasher(112, 1)
    cpu = time.process_time()
    for lo in range(0, len(docs), 256):
        minhasher.signatures([hasher(d) for d in docs[lo : lo + 256]])
    ours = len(docs) / (time.process_time() - cpu)
    cpu = time.process_time()
    for d in docs:
        words = normalize_text(d).split()
        m = MinHash(num_perm=112, seed=1)
        m.update_batch([" ".join(words[i : i + 5]).encode() for i in range(len(words) - 4)])
    reference = len(docs) / (time.process_time() - cpu)
    mean = sum(map(len, docs)) / len(docs)
    print(f"{len(docs)} docs of {mean:.0f} chars, 5-grams, 112 permutations, per CPU-second (= per core):")
    print(f"  gristmill (normalize + shingles + signatures): {ours:,.0f} docs/s")
    print(f"  datasketch update_batch (normalize + shingles + update_batch): {reference:,.0f} docs/s")
    print(f"  ratio: {ours / reference:.2f}x")


def bench_e2e(args) -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        corpus = args.corpus or Path(tmp) / "corpus.jsonl"
        if not args.corpus:
            dups = make_corpus(corpus, args.docs)
            print(
                f"corpus: {args.docs} docs ({corpus.stat().st_size / 1e6:.0f} MB), {dups} generated near-dups"
            )
        outcome = run_minhash(corpus, workers=args.workers)
        print(
            f"gristmill minhash_dedup (Beam FnApiRunner, {args.workers} workers): {outcome['seconds']:.1f}s wall, "
            f"{outcome['cpu_seconds']:.1f}s CPU, removed {len(outcome['duplicate_of'])}"
        )
        print("  counters:", json.dumps(outcome["counters"], sort_keys=True))
        if not Path(args.datatrove_python).exists():
            print(f"datatrove skipped: no {args.datatrove_python} (see the module docstring)")
            return
        start = time.perf_counter()
        run, cpu = run_with_tree_cpu(
            [args.datatrove_python, "-c", DATATROVE_SCRIPT, str(corpus), f"{tmp}/dt", str(args.workers)]
        )
        seconds = time.perf_counter() - start
        print("\n".join(line for line in run.stdout.splitlines() if line.startswith("datatrove")))
        if run.returncode:
            print(run.stderr[-3000:])
            return
        removed = sum(
            f.stat().st_size // 4 for f in Path(f"{tmp}/dt/remove_ids").glob("*.remove")
        )  # uint32 ids
        print(
            f"datatrove 4-stage MinHash ({args.workers} workers): {seconds:.1f}s wall, {cpu:.1f}s CPU, removed {removed}"
        )
        print(
            f"ratio datatrove / gristmill: wall {seconds / outcome['seconds']:.2f}, "
            f"CPU {cpu / outcome['cpu_seconds']:.2f} (> 1: gristmill faster)"
        )


def bench_scale(args) -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        start = time.perf_counter()
        dups = make_corpus(corpus, args.docs, size=args.size)
        print(
            f"corpus: {args.docs} docs ({corpus.stat().st_size / 1e9:.2f} GB), {dups} near-duplicates, "
            f"written in {time.perf_counter() - start:.0f}s"
        )
        outcome = run_minhash(corpus, workers=args.workers)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6
    print(
        f"gristmill minhash_dedup, {args.workers} workers: {outcome['seconds']:.0f}s, removed {len(outcome['duplicate_of'])}"
    )
    print(f"peak RSS: main process {own:.2f} GB, largest worker process {children:.2f} GB")
    print("  counters:", json.dumps(outcome["counters"], sort_keys=True))


def main() -> None:
    parser = arguments(__doc__, workers=2)
    parser.add_argument("what", choices=["signatures", "e2e", "scale"])
    parser.add_argument("--docs", type=int, default=None)
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--datatrove-python", default=DATATROVE_PYTHON)
    parser.add_argument(
        "--corpus", type=Path, help="e2e: use this JSONL (from an earlier make_corpus) instead"
    )
    args = parser.parse_args()
    if not (DATA / "quality").is_dir():
        print(f"skipped: no data at {DATA}")
        return
    args.docs = args.docs or {"signatures": 2000, "e2e": 100_000, "scale": 1_000_000}[args.what]
    {"signatures": bench_signatures, "e2e": bench_e2e, "scale": bench_scale}[args.what](args)


if __name__ == "__main__":
    main()
