"""`make bench`: run the quick benchmarks one after another and summarize them.

Each runs as its own process with small, bounded arguments (the full-size runs and their figures
are in benchmarks/results/). Scripts that need ../shared/data skip cleanly without it. Prints
every script's output, then one line per script: exit status, wall seconds and CPU seconds
(user + system of the script and its children). Exits non-zero if any script failed.
Usage: python benchmarks/run_all.py [--only NAME ...] [--timeout SECONDS]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

from common import arguments

HERE = Path(__file__).resolve().parent
QUICK = {
    "foundation_throughput": ["foundation_throughput.py", "--docs", "2000"],
    "minhash_signatures": ["dedup_minhash_speed.py", "signatures", "--docs", "2000"],
    "readers_warc": ["readers_warc.py", "--repeat", "1"],
    "badwords_prose": ["filters_badwords_prose.py"],
    "math_eval": ["synthesis_math_eval.py", "--limit", "100"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(name: str, timeout: float) -> tuple[str, float, float]:
    """Run one benchmark; (status, wall seconds, CPU seconds)."""
    print(f"=== {name}: {' '.join(QUICK[name])}", flush=True)
    cpu, started = children_cpu(), time.perf_counter()
    try:
        code = subprocess.run(
            [sys.executable, str(HERE / QUICK[name][0]), *QUICK[name][1:]], timeout=timeout
        ).returncode
        status = "ok" if code == 0 else f"exit {code}"
    except subprocess.TimeoutExpired:
        status = f"timeout after {timeout:.0f}s"
    return status, time.perf_counter() - started, children_cpu() - cpu


def main() -> int:
    parser = arguments(__doc__)
    parser.add_argument("--only", nargs="+", choices=sorted(QUICK), default=list(QUICK))
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    results = {name: run(name, args.timeout) for name in args.only}
    print("\nbenchmark | status | wall s | CPU s")
    for name, (status, wall, cpu) in results.items():
        print(f"{name} | {status} | {wall:.1f} | {cpu:.1f}")
    return 0 if all(status == "ok" for status, _, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
