"""CPU cost of each speed-critical stage against a floor: the same documents read and written as
Parquet by pyarrow alone.

One process; every figure is CPU-seconds (process time, all threads), the minimum of `--repeats`
passes over warm caches, so it is far steadier than wall time on a shared machine. Each stage runs
on fresh documents (its own text analysis, as when it runs first), the FineWeb chain on documents
that share the analysis, and every figure twice: with the C extensions (`native`) and with the
Python references they are tested against (`python`).

    .venv/bin/python benchmarks/speed.py [--data ../shared/data] [--every 4] [--repeats 3]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from common import arguments
from filters_corpus import load_corpus

FILTERS = ("gopher_repetition", "gopher_quality", "c4_quality", "fineweb_quality")


def cpu_seconds(run, repeats: int) -> float:
    """Minimum process time of `run()` over `repeats` passes (after one warm-up pass)."""
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def parquet_floor(records: list[dict], repeats: int) -> float:
    """Read the documents from a zstd Parquet file and write them to another (the writer's codec)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.parquet", Path(tmp) / "out.parquet"
        pq.write_table(pa.Table.from_pylist(records), source, compression="zstd")

        def run() -> None:
            pq.write_table(pq.read_table(source), target, compression="zstd")

        return cpu_seconds(run, repeats)


def stage_runner(names: tuple[str, ...], records: list[dict]):
    """A function running the stages in order on fresh documents (the chain drops rejects)."""
    from pipeline.document import Document
    from pipeline.stages import STAGES, load_builtin_stages

    load_builtin_stages()
    stages = [STAGES[name](name) for name in names]
    for stage in stages:
        stage.setup()

    def run() -> None:
        docs = [Document(id=r["id"], text=r["text"]) for r in records]
        for stage in stages:
            docs = [verdict.doc or doc for doc, verdict in zip(docs, stage.check_batch(docs)) if verdict.keep]

    return run


def signature_runner(records: list[dict]):
    """minhash_dedup's per-document work: normalize, shingle hashes, signatures, band keys (14x8)."""
    from dedup.signatures import MinHasher, band_keys, shingle_hasher

    hasher, minhasher = shingle_hasher(5, 1), MinHasher(112, 1)
    texts = [r["text"] for r in records]

    def run() -> None:
        for lo in range(0, len(texts), 256):
            band_keys(minhasher.signatures([hasher(t) for t in texts[lo : lo + 256]]), 14, 8, 1)

    return run


def use_python_references(on: bool) -> None:
    """Switch text analysis, MinHash signatures and lid.176 (stages set up after the switch) between
    the C extensions and their references (for lid.176: fastText's binding)."""
    from dedup import signatures
    from filters import language, text_analysis

    language.REFERENCE = on
    text_analysis.ANALYSIS = text_analysis.Reference if on else text_analysis._load_native()
    signatures.SIGNATURES = signatures.Reference if on else signatures._load_native()


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--every", type=int, default=4, help="take every N-th document of the corpus")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records = [{"id": r["id"], "text": r["text"]} for r in load_corpus(args.data)[:: args.every]]
    if not records:
        print(f"no data under {args.data}; nothing to measure")
        return
    three_kb = [
        {"id": r["id"], "text": (r["text"].replace("\n", " ") * 3)[:3000]}
        for r in records
        if len(r["text"]) > 1000
    ]
    n = len(records)
    chars = sum(len(r["text"]) for r in records)
    print(f"{n} documents, {chars / n:,.0f} characters on average; CPU-seconds, min of {args.repeats}")
    floor = parquet_floor(records, args.repeats)
    print(f"floor (pyarrow: read + write zstd Parquet): {floor / n * 1e6:8.1f} µs/doc  = 1.0x")
    rows = [(name, (name,), records) for name in ("language", *FILTERS)]
    rows += [
        ("chain of the 4 filters", FILTERS, records),
        ("language + 4 filters", ("language", *FILTERS), records),
    ]
    print(
        f"{'stage':32} {'python µs/doc':>14} {'native µs/doc':>14} {'native docs/CPU-s':>18} {'x floor':>8}"
    )
    for label, names, docs in [*rows, ("minhash signatures", None, records)]:
        cost = {}
        for mode in ("python", "native"):
            use_python_references(mode == "python")
            run = signature_runner(docs) if names is None else stage_runner(names, docs)
            cost[mode] = cpu_seconds(run, args.repeats) / len(docs)
        print(
            f"{label:32} {cost['python'] * 1e6:14.1f} {cost['native'] * 1e6:14.1f} "
            f"{1 / cost['native']:18,.0f} {cost['native'] / (floor / n):8.1f}"
        )
    use_python_references(False)
    language = cpu_seconds(stage_runner(("language",), three_kb), args.repeats)
    print(
        f"language on {len(three_kb)} documents of 3,000 characters: {len(three_kb) / language:,.0f} docs per CPU-second"
    )


if __name__ == "__main__":
    main()
