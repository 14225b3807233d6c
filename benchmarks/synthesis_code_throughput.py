"""Throughput of code verification: verified short Python samples per second, and start-up costs.

    .venv/bin/python benchmarks/synthesis_code_throughput.py [--workers 2] [--samples 400]

Measures (1) the cost of a cold bubblewrap sandbox + interpreter per sample (what the warm pool
avoids), (2) the latency of a warm pool's first sample (runner start), and (3) samples/s through
the `verify` stage with `--workers` warm runners on: tiny function+asserts samples, the built-in
`code` generator's tasks (literal + 50 differential cases each), and MBPP sanitized reference
solutions when ../shared/data is present.
"""

from __future__ import annotations

import json
import resource
import subprocess
import time

from common import DATA, arguments

from pipeline.document import Document
from synthesis.code_generators import CodeGenerator
from synthesis.code_verifier import tests_text
from synthesis.sandbox import Limits, SandboxPool, _drop_privileges, bwrap_command, default_python
from synthesis.verify import Verify


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


def host_cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def measure(docs: list[Document], sandbox: str, workers: int) -> tuple[float, float, int]:
    """(samples/s wall, samples per CPU-second, admitted) through a fresh, warmed-up verify stage.

    The CPU figure comes from a second pass straight through the stage's pool: this process's CPU
    (threads, JSON) + every sample process's CPU (wait4 in the runner) + the runners' own CPU per
    sample. It does not depend on how loaded the shared machine is, unlike the wall-clock rate.
    """
    stage = Verify("verify", sandbox=sandbox, workers=workers)
    stage.setup()
    stage.check_batch(tiny_samples(2 * workers))  # start every runner before timing
    start = time.perf_counter()
    verdicts = stage.check_batch(docs)
    wall = time.perf_counter() - start
    pool = stage._code.pool
    jobs = [(d.metadata["solution"], tests_text(d), d.metadata.get("entry_point")) for d in docs]
    host = host_cpu_seconds()
    results = pool.run_many(jobs)
    cpu = host_cpu_seconds() - host + sum((r.cpu_s or 0) + (r.runner_cpu_s or 0) for r in results)
    stage.teardown()
    return len(docs) / wall, len(docs) / cpu, sum(v.keep for v in verdicts)


def main() -> int:
    parser = arguments(__doc__, workers=2)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--sandbox", default="bubblewrap")
    args = parser.parse_args()

    cold = cold_start_seconds(20)
    print(f"cold bubblewrap + python (what a per-sample sandbox would pay): {cold * 1000:.1f} ms wall")
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

    sets = {
        "tiny (function + 3 asserts)": tiny_samples(args.samples),
        "code generator tasks (8 + 50 differential cases)": list(
            CodeGenerator("code", count=args.samples // 2, seed=1).generate()
        ),
        "MBPP sanitized reference": mbpp_samples(),
    }
    print(
        f"\n| samples ({args.sandbox}, {args.workers} workers) | n | admitted | samples/s (wall, shared machine) | samples per CPU-second (per core) |"
    )
    print("|---|---|---|---|---|")
    for name, docs in sets.items():
        if docs:
            per_second, per_cpu_second, admitted = measure(docs, args.sandbox, args.workers)
            print(f"| {name} | {len(docs)} | {admitted} | {per_second:.0f} | {per_cpu_second:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
