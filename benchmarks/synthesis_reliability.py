"""Reliability of `verify` on a loaded machine: every correct sample admitted, every time.

    .venv/bin/python benchmarks/synthesis_reliability.py [--repeats 20] [--hogs 2] [--data DIR]

Runs the 164 HumanEval canonical solutions (`../shared/data/code/humaneval.jsonl.gz`) and
`sample_data/candidates.jsonl` through the `verify` stage (default limits, bubblewrap) `repeats`
times, each time with a fresh stage (fresh runners, as a new run has), while `hogs` busy-loop
processes keep the cores saturated. Prints per repeat the correct samples admitted, every wrong
verdict (id, reason, detail), sandbox retries, and wall and CPU seconds (this process and the
sandboxes, not the hogs). Exit status 1 if any verdict was wrong. Without the HumanEval file it runs
the sample candidates alone and says so.
"""

from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import sys
import time
from pathlib import Path

from common import ROOT, arguments, cpu_seconds
from synthesis_code_eval import candidate

from pipeline.document import Document
from synthesis.verify import Verify


def load(data: Path) -> list[tuple[Document, bool]]:
    """(candidate, whether verify must admit it)."""
    cases = []
    path = data / "code" / "humaneval.jsonl.gz"
    if path.exists():
        with gzip.open(path, "rt") as f:
            for r in map(json.loads, f):
                doc = candidate(
                    r["task_id"],
                    r["prompt"],
                    r["prompt"] + r["canonical_solution"],
                    r["test"],
                    r["entry_point"],
                )
                cases.append((doc, True))
    else:
        print(f"{path} not found: sample candidates only")
    for line in (ROOT / "sample_data" / "candidates.jsonl").open():
        r = json.loads(line)
        meta = {k: v for k, v in r.items() if k not in ("id", "kind")}
        cases.append(
            (Document(r["id"], "", source="sample", kind=r["kind"], metadata=meta), r["expected"] == "kept")
        )
    return cases


def hog() -> None:
    while True:
        pass


class Retries(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "retrying the sample on a fresh runner" in record.getMessage()


def count_sandbox_cpu(pool, total: list[float]) -> None:
    """Add each sample's CPU time and its runner's, as the sandbox reports them, to `total[0]`
    (the sandboxes run as another user in their own namespaces, outside this process's rusage)."""
    run = pool.run

    def counted(*args, **kwargs):
        result = run(*args, **kwargs)
        total[0] += (result.cpu_s or 0.0) + (result.runner_cpu_s or 0.0)
        return result

    pool.run = counted


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--hogs", type=int, default=2, help="busy-loop processes started for the run")
    args = parser.parse_args()
    cases = load(args.data)
    docs = [doc for doc, _ in cases]
    expected = {doc.id: admit for doc, admit in cases}
    retries = Retries()
    logging.getLogger("synthesis.sandbox").addHandler(retries)
    hogs = [multiprocessing.Process(target=hog, daemon=True) for _ in range(args.hogs)]
    for process in hogs:
        process.start()
    wrong_total = 0
    sandbox_cpu = [0.0]
    started, cpu_started = time.monotonic(), cpu_seconds()
    try:
        for repeat in range(1, args.repeats + 1):
            t0, c0, r0, s0 = time.monotonic(), cpu_seconds(), retries.count, sandbox_cpu[0]
            stage = Verify("verify")
            stage.setup()
            count_sandbox_cpu(stage._code.pool, sandbox_cpu)
            try:
                verdicts = stage.check_batch(docs)
            finally:
                stage.teardown()
                stage._math.close()
            wrong = [(d.id, v.reason, v.detail) for d, v in zip(docs, verdicts) if v.keep != expected[d.id]]
            admitted = sum(v.keep and expected[d.id] for d, v in zip(docs, verdicts))
            wrong_total += len(wrong)
            print(
                f"repeat {repeat}: {admitted}/{sum(expected.values())} correct admitted, "
                f"{len(wrong)} wrong verdicts, {retries.count - r0} retries, "
                f"{time.monotonic() - t0:.1f}s wall, {cpu_seconds() - c0:.1f}s CPU here + "
                f"{sandbox_cpu[0] - s0:.1f}s in sandboxes",
                flush=True,
            )
            for item in wrong:
                print("   wrong:", *item, flush=True)
    finally:
        cpu_total = cpu_seconds() - cpu_started  # before the hogs are reaped (their CPU is not ours)
        for process in hogs:
            process.terminate()
    print(
        f"{args.repeats} repeats x {len(docs)} candidates with {args.hogs} hogs: {wrong_total} wrong verdicts, "
        f"{retries.count} retries, {time.monotonic() - started:.0f}s wall, {cpu_total:.0f}s CPU here + "
        f"{sandbox_cpu[0]:.0f}s in sandboxes (loaded machine)"
    )
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
