"""Answer equivalence side by side: our math verifier against Hugging Face's `math-verify`.

    .venv/bin/python benchmarks/synthesis_math_compare.py [--data DIR] [--limit N] [--only gsm8k|math] [--show K]

On GSM8K train and MATH test (`../shared/data/math`), each tool decides whether a solution's final
answer equals the gold answer: for the reference solution it must (a miss is a false reject), and
for the same solution with a number of its final answer altered it must not (a match is a false
accept). GSM8K is run as published (`#### 72`) and restyled like model output ("The answer is
$72."). Ours is `MathVerifier(check_steps=False)` (answer extraction and equivalence only); theirs
is `math_verify.verify(parse(gold), parse(solution))`. Prints a markdown table with the two tools'
false rejects, false accepts, their agreement and CPU seconds. Needs `pip install math-verify`
(the `mathverify` extra); skips cleanly without it or without the data.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable

from common import arguments
from synthesis_math_eval import alter_number, doc

from synthesis.math.answers import last_boxed
from synthesis.math.verifier import MathVerifier

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def gsm8k_cases(rows: list[dict], rng: random.Random, restyled: bool) -> list[tuple[str, str, str, bool]]:
    """(id, solution, gold, should match) for reference solutions and altered final answers."""
    cases = []
    for i, r in enumerate(rows):
        head, _, tail = r["answer"].rpartition("####")
        gold = tail.strip()
        if restyled:
            head = re.sub(r"<<[^<>]*>>", "", head).strip()
        ending = "\nThe answer is ${}." if restyled else "#### {}"
        cases.append((f"gsm-{i}", head + ending.format(gold), gold, True))
        altered = alter_number(gold.replace(",", ""), rng)
        cases.append((f"gsm-{i}-altered", head + ending.format(altered), gold, False))
    return cases


def math_cases(rows: list[dict]) -> list[tuple[str, str, str, bool]]:
    """Reference solutions against their boxed answer; with the first number in it increased by 1
    (never doubled: `\\frac12` doubled is `\\frac24`, the same value)."""
    cases = []
    for i, r in enumerate(rows):
        gold = last_boxed(r["solution"])
        if gold is None:
            continue
        cases.append((f"math-{i}", r["solution"], gold, True))
        found = NUMBER.search(gold)
        boxed = "\\boxed{" + gold + "}"
        at = r["solution"].rfind(boxed)
        if found and at >= 0:
            number = found.group()
            places = len(number.split(".")[1]) if "." in number else 0
            altered = gold[: found.start()] + f"{float(number) + 1:.{places}f}" + gold[found.end() :]
            solution = r["solution"][:at] + "\\boxed{" + altered + "}" + r["solution"][at + len(boxed) :]
            cases.append((f"math-{i}-altered", solution, gold, False))
    return cases


def ours() -> Callable[[str, str], bool]:
    verifier = MathVerifier(check_steps=False)
    return lambda solution, gold: verifier.check(doc("x", "", solution, gold)).keep


def theirs() -> Callable[[str, str], bool]:
    from math_verify import parse, verify

    def decide(solution: str, gold: str) -> bool:
        try:
            return bool(verify(parse(f"${gold}$"), parse(solution)))
        except Exception:  # noqa: BLE001 - a tool failure is a non-match, as in its own harness
            return False

    return decide


def measure(decide: Callable[[str, str], bool], cases: list) -> tuple[list[bool], float]:
    start = time.process_time()
    decisions = [decide(solution, gold) for _, solution, gold, _ in cases]
    return decisions, time.process_time() - start


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--limit", type=int, default=None, help="problems per dataset (default: all)")
    parser.add_argument("--show", type=int, default=0, help="print this many wrong decisions per set")
    parser.add_argument("--only", choices=["gsm8k", "math"], default=None)
    args = parser.parse_args()
    math_dir = args.data / "math"
    try:
        import math_verify  # noqa: F401
    except ImportError:
        print("math-verify is not installed (pip install math-verify): skipped")
        return 0
    if not math_dir.is_dir():
        print(f"no data at {math_dir}: skipped")
        return 0

    def load(name: str) -> list[dict]:
        with open(math_dir / name) as f:
            return [json.loads(line) for line in f][: args.limit]

    gsm, hendrycks = load("gsm8k_train.jsonl"), load("math_hendrycks_test.jsonl")
    sets: dict[str, list] = {}
    if args.only in (None, "gsm8k"):
        sets |= {
            "GSM8K train, as published (`#### x`)": gsm8k_cases(gsm, random.Random(0), restyled=False),
            'GSM8K train, restyled ("The answer is $x.")': gsm8k_cases(gsm, random.Random(0), restyled=True),
        }
    if args.only in (None, "math"):
        sets["MATH test (`\\boxed{}`)"] = math_cases(hendrycks)
    tools = {"ours": ours(), "math-verify": theirs()}
    print("| set | correct / altered | tool | false reject | false accept | CPU s |")
    print("|---|---|---|---|---|---|")
    for name, cases in sets.items():
        want = [should for *_, should in cases]
        n_true, n_false = sum(want), len(want) - sum(want)
        decided = {}
        for tool, decide in tools.items():
            decisions, cpu = measure(decide, cases)
            decided[tool] = decisions
            rejects = sum(w and not d for w, d in zip(want, decisions))
            accepts = sum(d and not w for w, d in zip(want, decisions))
            print(
                f"| {name} | {n_true:,} / {n_false:,} | {tool} | {rejects} ({100 * rejects / n_true:.2f} %) "
                f"| {accepts} ({100 * accepts / max(n_false, 1):.2f} %) | {cpu:.0f} |"
            )
        agree = sum(a == b for a, b in zip(decided["ours"], decided["math-verify"]))
        print(
            f"| {name} | | agreement | {agree:,} of {len(cases):,} ({100 * agree / len(cases):.2f} %) | | |"
        )
        shown = 0
        for case, a, b in zip(cases, decided["ours"], decided["math-verify"]):
            if (a != case[3] or b != case[3]) and shown < args.show:
                shown += 1
                print(
                    f"   ours={a} math-verify={b} want={case[3]} {case[0]} gold={case[2]!r}", file=sys.stderr
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
