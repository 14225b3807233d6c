"""Speed of the FineWeb filter chain, gristmill vs datatrove 0.10, side by side on the same documents.

Chain: language → gopher_repetition → gopher_quality → c4_quality → fineweb_quality (FineWeb's
order and settings; c4 without the terminal-punctuation rule); `--no-language` times the four
filters alone on both sides (issue 18's filter chain). Both sides run in plain
multiprocessing with the same number of workers, call the filters directly (no Beam, no
datatrove executor), get the documents in batches of 64 and warm up their models first, so the
figure compares filter cost only. Our side shares one text analysis between the stages.
Besides wall time it sums each worker's CPU time, which is steadier on a shared, loaded machine.
The reference side runs `filters_reference.py chain` in the throwaway venv (see that file).

    .venv/bin/python benchmarks/filters_speed.py [--data ../shared/data] [--workers 2] [--every 4] [--repeat 1]
        [--no-language]

`--repeat N` passes each document N times (ids suffixed), to reach a corpus size the shared data
alone does not have; both sides see the same repeated documents.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

from common import ROOT, arguments
from filters_corpus import load_corpus
from speed import FILTERS

_STAGES: list = []


def _init(chain: tuple[str, ...]) -> None:
    from pipeline.stages import STAGES, load_builtin_stages

    load_builtin_stages()
    _STAGES[:] = [STAGES[name](name) for name in chain]
    for stage in _STAGES:
        stage.setup()


def _run(records: list[dict]) -> tuple[int, float]:
    """(documents kept, CPU seconds this worker spent on them)."""
    from pipeline.document import Document

    start = time.process_time()
    docs = [Document(id=r["id"], text=r["text"]) for r in records]
    for stage in _STAGES:
        docs = [verdict.doc or doc for doc, verdict in zip(docs, stage.check_batch(docs)) if verdict.keep]
    return len(docs), time.process_time() - start


def run_ours(records: list[dict], workers: int, chain: tuple[str, ...]) -> dict:
    batches = [records[i : i + 64] for i in range(0, len(records), 64)]
    with Pool(workers, initializer=_init, initargs=(chain,)) as pool:
        pool.map(_run, batches[:2])
        start = time.perf_counter()
        results = pool.map(_run, batches, chunksize=1)
        seconds = time.perf_counter() - start
    return {
        "docs": len(records),
        "kept": sum(kept for kept, _ in results),
        "seconds": seconds,
        "cpu_seconds": sum(cpu for _, cpu in results),
    }


def run_reference(records: list[dict], workers: int, python: str, language: bool) -> dict:
    from filters.language import lid176_path

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs.jsonl"
        with open(docs, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")
        script = str(ROOT / "benchmarks" / "filters_reference.py")
        out = subprocess.run(
            [python, script, "chain", str(docs), str(workers), str(lid176_path()) if language else "-"],
            check=True,
            capture_output=True,
            text=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = arguments(__doc__, data=True, workers=2)
    parser.add_argument("--every", type=int, default=4, help="take every N-th document of the corpus")
    parser.add_argument("--repeat", type=int, default=1, help="pass each document this many times")
    parser.add_argument("--reference-python", default="/tmp/dt-venv-filters/bin/python")
    parser.add_argument("--no-language", action="store_true", help="time the four filters without language")
    args = parser.parse_args()
    chain = FILTERS if args.no_language else ("language", *FILTERS)
    corpus = load_corpus(args.data)[:: args.every]
    records = [
        {**r, "id": f"{r['id']}#{copy}" if copy else r["id"]} for copy in range(args.repeat) for r in corpus
    ]
    if not records:
        print(f"no data under {args.data}; nothing to measure")
        return
    chars = sum(len(r["text"]) for r in records)
    print(
        f"{len(records)} documents, {chars / 1e6:.1f} M characters, {args.workers} workers, {os.cpu_count()} cores"
    )
    print("chain:", " -> ".join(chain))
    results = {"gristmill": run_ours(records, args.workers, chain)}
    print("gristmill:", json.dumps(results["gristmill"]), flush=True)
    if not Path(args.reference_python).exists():
        print(f"datatrove skipped: no {args.reference_python}")
        return
    results["datatrove 0.10"] = run_reference(
        records, args.workers, args.reference_python, not args.no_language
    )
    print("side            kept   wall s   docs/s  docs/s per core   CPU s  docs per CPU-second")
    for name, r in results.items():
        rate = r["docs"] / r["seconds"]
        print(
            f"{name:15} {r['kept']:5} {r['seconds']:8.1f} {rate:8.1f} {rate / args.workers:16.1f} "
            f"{r['cpu_seconds']:7.1f} {r['docs'] / r['cpu_seconds']:20.1f}"
        )
    ours, ref = results["gristmill"], results["datatrove 0.10"]
    wall, cpu = ref["seconds"] / ours["seconds"], ref["cpu_seconds"] / ours["cpu_seconds"]
    print(f"speed-up: wall {wall:.1f}x, CPU {cpu:.1f}x (same kept count: {ours['kept'] == ref['kept']})")


if __name__ == "__main__":
    main()
