"""Throughput of code verification: verified short Python samples per second, and start-up costs.

    .venv/bin/python benchmarks/synthesis_code_throughput.py [--workers 2] [--samples 400]

Measures (1) the cost of a cold bubblewrap sandbox + interpreter per sample (what the warm pool
avoids), (2) the latency of a warm pool's first sample (runner start), and (3) samples/s through
the `verify` stage with `--workers` warm runners on: tiny function+asserts samples, the built-in
`code` generator's tasks (literal + 50 differential cases each), and MBPP sanitized reference
solutions when ../shared/data is present.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.document import Document  # noqa: E402
from synthesis.code_generators import CodeGenerator  # noqa: E402
from synthesis.sandbox import Limits, SandboxPool, _drop_privileges, bwrap_command, default_python  # noqa: E402
from synthesis.verify import Verify  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def cold_start_seconds(runs: int) -> float:
    """Mean wall time of a fresh bubblewrap + interpreter that runs nothing (runner fed no input)."""
    cmd = bwrap_command(default_python(), 64)
    start = time.perf_counter()
    for _ in range(runs):
        subprocess.run(cmd, input=b"", check=True, capture_output=True, **_drop_privileges())
    return (time.perf_counter() - start) / runs


def tiny_samples(count: int) -> list[Document]:
    return [
        Document(
            f"tiny-{i}",
            "",
            kind="code",
            metadata={
                "prompt": "Add two numbers.",
                "solution": f"def add(a, b):\n    return a + b + {i} - {i}\n",
                "tests": "assert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(10, 5) == 15\n",
            },
        )
        for i in range(count)
    ]


def mbpp_samples() -> list[Document]:
    path = DATA / "code" / "mbpp_sanitized.json"
    if not path.exists():
        return []
    return [
        Document(
            f"mbpp/{r['task_id']}",
            "",
            kind="code",
            metadata={
                "prompt": r["prompt"],
                "solution": r["code"],
                "tests": "\n".join(r.get("test_imports", []) + r["test_list"]),
            },
        )
        for r in json.loads(path.read_text())
        if r["task_id"] != 123  # amicable_numbers_sum(9999) alone takes ~6 s of CPU
    ]


def rate(stage: Verify, docs: list[Document]) -> tuple[float, int]:
    start = time.perf_counter()
    verdicts = stage.check_batch(docs)
    return len(docs) / (time.perf_counter() - start), sum(v.keep for v in verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--sandbox", default="bubblewrap")
    args = parser.parse_args()

    cold = cold_start_seconds(20)
    print(f"cold bubblewrap + python per sample: {cold * 1000:.1f} ms ({1 / cold:.0f}/s on one core at best)")
    with SandboxPool(args.sandbox, 1, Limits()) as pool:
        start = time.perf_counter()
        pool.run("x = 1", "assert x == 1")
        first = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(50):
            pool.run("x = 1", "assert x == 1")
        warm = (time.perf_counter() - start) / 50
    print(
        f"warm pool: first sample (runner start) {first * 1000:.1f} ms, then {warm * 1000:.2f} ms per sample"
    )

    stage = Verify("verify", sandbox=args.sandbox, workers=args.workers)
    stage.setup()
    rate(stage, tiny_samples(2 * args.workers))  # start every runner before timing
    sets = {
        "tiny (function + 3 asserts)": tiny_samples(args.samples),
        "code generator tasks (8 + 50 differential cases)": list(
            CodeGenerator("code", count=args.samples // 2, seed=1).generate()
        ),
        "MBPP sanitized reference": mbpp_samples(),
    }
    print(f"\n| samples ({args.sandbox}, {args.workers} workers) | n | admitted | samples/s |")
    print("|---|---|---|---|")
    for name, docs in sets.items():
        if docs:
            per_second, admitted = rate(stage, docs)
            print(f"| {name} | {len(docs)} | {admitted} | {per_second:.0f} |")
    stage._code.pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
