"""End-to-end speed and peak memory of `semantic_dedup` on gristmill's multi-process local runner.

Builds N documents (default 100,000) by recombining sentences of real documents (ABC news
transcripts, Brown corpus, movie reviews; 6-14 sentences each, ~1,000 characters) with 5 %
re-shuffled near-copies, writes them as JSONL under /tmp, then times
JSONL → Document → semantic_dedup (with its in-graph conservation check) → kept / rejected ids
written as text, on gristmill's local runner (multi-process FnApiRunner) with W workers. Peak
memory is the largest summed RSS of this process and all its children, sampled every 0.2 s; CPU seconds are the summed
user+system time of the same processes, so docs per CPU-second is the per-core speed even when
the machine is shared.

    PYTHONPATH=. .venv/bin/python benchmarks/semantic_speed.py --docs 100000 --embedder static --workers 2
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from pathlib import Path

import apache_beam as beam
from common import arguments, cached_corpus, skipped

from benchmarks.semantic_docs import SOURCES, sentences
from dedup.semantic import SemanticDedup
from pipeline.beam_stages import RunCollectionStage
from pipeline.document import Document
from pipeline.malloc import tune_malloc
from pipeline.outcomes import OUTCOMES
from pipeline.run import new_pipeline, pipeline_options


def build_jsonl(data: Path, n: int, path: Path, seed: int = 0) -> None:
    """N synthetic documents from real sentences; every 20th is a shuffled copy of an earlier one."""
    pool = []
    for name in SOURCES:
        for line in (data / "quality" / f"{name}.jsonl").read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            pool.extend(s for s in sentences(json.loads(line)["text"]) if 20 <= len(s) <= 400)
    rng = random.Random(seed)
    texts: list[str] = []
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            if i % 20 == 19:
                parts = sentences(texts[rng.randrange(len(texts))])
                rng.shuffle(parts)
            else:
                parts = rng.sample(pool, rng.randint(6, 14))
            texts.append(" ".join(parts))
            f.write(json.dumps({"id": f"doc{i:07d}", "text": texts[-1]}) + "\n")


def tree_usage(pid: int) -> dict[int, tuple[int, float]]:
    """{pid: (resident bytes, CPU seconds)} of `pid` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stats[int(entry)][1]), []).append(int(entry))
    usage, stack = {}, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while stack:
        current = stack.pop()
        if current in stats:
            fields = stats[current]  # fields[0] is the state: utime, stime, rss are 14th, 15th, 24th
            usage[current] = (
                int(fields[21]) * os.sysconf("SC_PAGE_SIZE"),
                (int(fields[11]) + int(fields[12])) / tick,
            )
        stack.extend(children.get(current, []))
    return usage


def to_document(line: str) -> Document:
    record = json.loads(line)
    return Document(id=record["id"], text=record["text"])


def _doc_id(doc: Document) -> str:
    return doc.id


def measure_stage(stage, source: Path, out: Path, workers: int, kept_row=_doc_id) -> tuple[float, float, int]:
    """Run one collection stage on a JSONL file with the local runner, writing ids of kept
    (or `kept_row` of each kept document), rejected and failed documents under `out`: (wall
    seconds, CPU-seconds of the process tree, peak RSS bytes of the process tree). With glibc
    malloc tuned as `gristmill run` tunes it, so the figures are what a run of the CLI gets."""
    tune_malloc()
    peak = [0]
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            usage = tree_usage(os.getpid())
            peak[0] = max(peak[0], sum(rss for rss, _ in usage.values()))
            for pid, (_, seconds) in usage.items():
                cpu[pid] = max(cpu.get(pid, 0.0), seconds)

    threading.Thread(target=sample, daemon=True).start()
    options = pipeline_options([f"--direct_num_workers={workers}"])
    started = time.perf_counter()
    with new_pipeline(options) as p:
        docs = p | beam.io.ReadFromText(str(source)) | beam.Map(to_document)
        result = docs | RunCollectionStage(stage)
        _ = result.kept | "KeptIds" >> beam.Map(kept_row) | "WriteKept" >> beam.io.WriteToText(f"{out}/kept")
        _ = (
            result.rejected
            | "RejectedIds" >> beam.Map(lambda r: f"{r.doc.id}\t{r.duplicate_of}\t{r.detail}")
            | "WriteRejected" >> beam.io.WriteToText(f"{out}/rejected")
        )
        _ = (
            result.failed
            | "FailedIds" >> beam.Map(lambda f: f"{f.id}\t{f.error}\t{f.message[:300]}")
            | "WriteFailed" >> beam.io.WriteToText(f"{out}/failed")
        )
    seconds = time.perf_counter() - started
    done.set()
    return seconds, sum(cpu.values()), peak[0]


def main() -> int:
    parser = arguments(__doc__, data=True, docs=100_000, workers=2)
    parser.add_argument("--embedder", default="static")
    args = parser.parse_args()
    if skipped(args.data / "quality"):
        return 0
    source = cached_corpus("semantic_bench", args.docs, lambda path, n: build_jsonl(args.data, n, path))
    out = source.parent / f"out_{args.embedder}_{args.docs}"
    shutil.rmtree(out, ignore_errors=True)

    seconds, cpu_seconds, peak_rss = measure_stage(
        SemanticDedup("semantic_dedup", embedder=args.embedder), source, out, args.workers
    )
    kept, rejected, failed = (sum(1 for f in out.glob(f"{kind}*") for _ in f.open()) for kind in OUTCOMES)
    print(
        f"{args.docs} docs, embedder {args.embedder}, {args.workers} workers: wall {seconds:.1f} s "
        f"({args.docs / seconds:.0f} docs/s), CPU {cpu_seconds:.1f} s ({args.docs / cpu_seconds:.0f} docs "
        f"per CPU-second), load average {os.getloadavg()[0]:.1f}, peak RSS {peak_rss / 2**30:.2f} GiB, "
        f"kept {kept}, rejected {rejected}, failed {failed}"
    )
    if kept + rejected + failed != args.docs:
        print(f"CONSERVATION BROKEN: {args.docs - kept - rejected - failed} documents missing")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
