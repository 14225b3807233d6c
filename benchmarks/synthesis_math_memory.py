"""Peak memory and time of the sympy worker that compares math answers, on answers that grow sympy
without bound, with `verify`'s `math_memory_mb` cap and without it (a cap of 1 TiB).

    python benchmarks/synthesis_math_memory.py [--timeout-s 10] [--cap-mb 1024]

Each answer is checked against `x^2` by a fresh `MathVerifier`; a thread samples the resident
memory of this process's children (the worker) every 20 ms. Needs several GiB free: uncapped,
the first answer grows the worker by gigabytes within its time limit.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from dedup_memory import process_rss

from pipeline.document import Document
from synthesis.math.verifier import MathVerifier

ANSWERS = ("(x+1)^{1000000} - 1", "(x+y+z+w)^{300}", "2^{2^{36}}")
UNCAPPED_MB = 1 << 20
SAMPLE_S = 0.02


def children_rss_bytes() -> int:
    """The summed resident memory of this process's descendants (the sympy worker)."""
    own = os.getpid()
    return sum(rss for pid, rss in process_rss(own).items() if pid != own)


def measure(answer: str, timeout_s: float, cap_mb: int) -> tuple[str, float, int]:
    """(the verdict's detail, seconds, peak worker memory in bytes) of one check."""
    verifier = MathVerifier(sympy_timeout_s=timeout_s, sympy_memory_mb=cap_mb)
    verifier.equivalent("x+x", "2*x")  # the worker started, sympy imported: not part of the figures
    peak, done = [children_rss_bytes()], threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            peak.append(children_rss_bytes())

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    doc = Document(
        id="m",
        text="",
        kind="math",
        metadata={"problem": "", "solution": f"So \\boxed{{{answer}}}", "answer": "x^2"},
    )
    started = time.perf_counter()
    try:
        verdict = verifier.check(doc)
    finally:
        seconds = time.perf_counter() - started
        done.set()
        watcher.join()
        verifier.close()
    return f"{verdict.reason}: {verdict.detail}", seconds, max(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout-s", type=float, default=10.0, help="sympy's own-time limit per answer")
    parser.add_argument("--cap-mb", type=int, default=1024, help="the capped runs' math_memory_mb")
    args = parser.parse_args()
    print("| answer | math_memory_mb | seconds | peak worker memory | verdict |")
    print("|---|---|---|---|---|")
    for answer in ANSWERS:
        for cap in (args.cap_mb, UNCAPPED_MB):
            detail, seconds, peak = measure(answer, args.timeout_s, cap)
            shown = "none (1 TiB)" if cap == UNCAPPED_MB else f"{cap:,}"
            print(f"| `{answer}` | {shown} | {seconds:.1f} | {peak / 2**30:.2f} GiB | {detail} |", flush=True)


if __name__ == "__main__":
    main()
