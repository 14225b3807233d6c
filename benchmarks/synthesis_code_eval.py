"""Accuracy of the code verifier on real benchmarks: reference solutions admitted, buggy ones rejected.

    .venv/bin/python benchmarks/synthesis_code_eval.py [--data DIR] [--workers N] [--timeout S]

Reads HumanEval (canonical solutions), QuixBugs (fixed and buggy programs), MBPP sanitized and
MBPP+ (reference solutions) from `../shared/data/code` and runs them through the `verify` stage
with its default sandbox (bubblewrap). Prints admitted/rejected counts per set and every
unexpected verdict with its reason. Skips cleanly when the data folder is absent.
"""

from __future__ import annotations

import gzip
import json
import time
from collections import Counter
from pathlib import Path

from common import arguments

from pipeline.document import Document
from synthesis.verify import Verify


def candidate(
    doc_id: str, prompt: str, solution: str, tests: str, entry_point: str | None = None
) -> Document:
    meta = {"language": "python", "prompt": prompt, "solution": solution, "tests": tests}
    if entry_point:
        meta["entry_point"] = entry_point
    return Document(doc_id, "", source="eval", kind="code", metadata=meta)


def load_sets(code_dir: Path) -> dict[str, tuple[list[Document], bool]]:
    """Set name -> (candidates, whether they should be admitted)."""
    with gzip.open(code_dir / "humaneval.jsonl.gz", "rt") as f:
        humaneval = [json.loads(line) for line in f]
    quixbugs = [json.loads(line) for line in (code_dir / "quixbugs_python.jsonl").open()]
    mbpp = json.loads((code_dir / "mbpp_sanitized.json").read_text())
    mbpp_plus = json.loads((code_dir / "mbpp_plus.json").read_text())
    return {
        "humaneval_canonical": (
            [
                candidate(
                    r["task_id"],
                    r["prompt"],
                    r["prompt"] + r["canonical_solution"],
                    r["test"],
                    r["entry_point"],
                )
                for r in humaneval
            ],
            True,
        ),
        "humaneval_completion_style": (  # solution = the canonical body only; the verifier adds the prompt
            [
                candidate(r["task_id"], r["prompt"], r["canonical_solution"], r["test"], r["entry_point"])
                for r in humaneval
            ],
            True,
        ),
        "quixbugs_fixed": (
            [candidate(f"qb/{r['name']}/fixed", r["docstring"], r["solution"], r["tests"]) for r in quixbugs],
            True,
        ),
        "quixbugs_buggy": (
            [
                candidate(f"qb/{r['name']}/buggy", r["docstring"], r["buggy_program"], r["tests"])
                for r in quixbugs
            ],
            False,
        ),
        "mbpp_sanitized_reference": (
            [
                candidate(
                    f"mbpp/{r['task_id']}",
                    r["prompt"],
                    r["code"],
                    "\n".join(r.get("test_imports", []) + r["test_list"]),
                )
                for r in mbpp
            ],
            True,
        ),
        "mbpp_plus_reference": (
            # EvalPlus runs the assertions with `math` imported (they call math.isclose).
            [
                candidate(
                    r["task_id"], r["prompt"], r["canonical_solution"], "import math\n" + r["assertion"]
                )
                for r in mbpp_plus
            ],
            True,
        ),
    }


def main() -> int:
    parser = arguments(__doc__, data=True, workers=0)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--sandbox", default="bubblewrap")
    parser.add_argument("--sets", nargs="*", default=[], help="only these sets (default: all)")
    parser.add_argument("--min-mutation-score", type=float, default=0.0, help="turn the mutation gate on")
    args = parser.parse_args()
    code_dir = args.data / "code"
    if not code_dir.is_dir():
        print(f"skipped: {code_dir} not found")
        return 0
    stage = Verify(
        "verify",
        sandbox=args.sandbox,
        workers=args.workers,
        timeout_s=args.timeout,
        min_mutation_score=args.min_mutation_score,
    )
    stage.setup()
    print("| set | candidates | expected | admitted | rejected | correct | seconds |")
    print("|---|---|---|---|---|---|---|")
    problems = []
    for name, (docs, should_admit) in load_sets(code_dir).items():
        if args.sets and name not in args.sets:
            continue
        start = time.perf_counter()
        verdicts = stage.check_batch(docs)
        seconds = time.perf_counter() - start
        admitted = sum(v.keep for v in verdicts)
        correct = admitted if should_admit else len(docs) - admitted
        expected = "admit" if should_admit else "reject"
        print(
            f"| {name} | {len(docs)} | {expected} | {admitted} | {len(docs) - admitted} "
            f"| {correct}/{len(docs)} ({100 * correct / len(docs):.1f}%) | {seconds:.1f} |"
        )
        reasons = Counter(v.reason for v in verdicts if not v.keep)
        scores = sorted(d.scores["mutation_score"] for d in docs if "mutation_score" in d.scores)
        if scores:
            quartiles = [scores[int(q * (len(scores) - 1))] for q in (0.1, 0.25, 0.5, 0.75)]
            problems.append(
                f"{name} mutation score p10/p25/p50/p75: " + "/".join(f"{q:.2f}" for q in quartiles)
            )
        if reasons:
            problems.append(f"{name} rejection reasons: {dict(reasons)}")
        for doc, verdict in zip(docs, verdicts):
            if verdict.keep != should_admit:
                problems.append(f"  unexpected: {doc.id}: {verdict.reason} {str(verdict.detail)[:160]}")
    stage.teardown()
    print()
    print("\n".join(problems))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
