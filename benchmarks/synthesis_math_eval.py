"""Accuracy and throughput of the math verifier on real reference solutions.

GSM8K train (7,473): reference solutions admitted; the same with the final answer altered, and with
one calculator step altered, rejected. MATH test (5,000): reference solutions admitted against their
own boxed answers; with another problem's (different) answer, rejected. SVAMP (1,000): the reference
equation written as a solution, admitted; with the result altered, rejected. Without a reference
answer (a candidate with no `answer`): the GSM8K solutions and those with the final answer altered,
the MATH solutions and those whose boxed answer is another problem's.

    .venv/bin/python benchmarks/synthesis_math_eval.py [--data DIR] [--limit N] [--show K]
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter

from common import arguments

from pipeline.document import Document
from synthesis.math.answers import last_boxed
from synthesis.math.verifier import MathVerifier
from synthesis.math_generators import MathGenerator

ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>([^\s]*)")
ANNOTATION_ONLY = re.compile(r"<<[^<>]*>>")


def doc(i: str, problem: str, solution: str, answer: str | None) -> Document:
    return Document(
        id=i, text="", kind="math", metadata={"problem": problem, "solution": solution, "answer": answer}
    )


def without_reference(docs: list[Document]) -> list[Document]:
    return [doc(d.id + "-noref", d.metadata["problem"], d.metadata["solution"], None) for d in docs]


def boxed_span(solution: str) -> tuple[int, int] | None:
    """Where the last `\\boxed{...}` starts and ends (past its closing brace)."""
    start = solution.rfind("\\boxed{")
    if start < 0:
        return None
    depth = 0
    for end in range(start + len("\\boxed"), len(solution)):
        depth += {"{": 1, "}": -1}.get(solution[end], 0)
        if depth == 0:
            return start, end + 1
    return None


def alter_number(text: str, rng: random.Random) -> str:
    """A different number in the same style (integer stays integer, decimals keep their places)."""
    value = float(text.replace(",", ""))
    decimals = len(text.split(".")[1]) if "." in text else 0
    delta = rng.choice([1, 2, 3, 5, 10]) * (10**-decimals) * rng.choice([-1, 1])
    new = value * 2 if rng.random() < 0.25 and value != 0 else value + delta
    return f"{new:.{decimals}f}"


def alter_step(solution: str, rng: random.Random) -> str | None:
    """Change the result of one calculator annotation (and the copy written after it)."""
    steps = [m for m in ANNOTATION.finditer(solution) if re.fullmatch(r"-?\d+(?:\.\d+)?", m.group(2))]
    if not steps:
        return None
    m = rng.choice(steps)
    new = alter_number(m.group(2), rng)
    after = m.group(3).replace(m.group(2), new, 1)
    return solution[: m.start()] + f"<<{m.group(1)}={new}>>{after}" + solution[m.end() :]


def run(verifier: MathVerifier, docs: list[Document], want_keep: bool, show: int, label: str) -> dict:
    reasons: Counter = Counter()
    wrong = []
    start = time.process_time()
    wall = time.perf_counter()
    for d in docs:
        verdict = verifier.check(d)
        reasons[verdict.reason or "kept"] += 1
        if verdict.keep != want_keep:
            wrong.append((d, verdict))
    cpu = time.process_time() - start
    wall = time.perf_counter() - wall
    good = len(docs) - len(wrong)
    print(
        f"{label}: {good}/{len(docs)} = {100 * good / max(1, len(docs)):.2f}% {'admitted' if want_keep else 'rejected'}"
        f"  {dict(reasons)}  {len(docs) / max(cpu, 1e-9):.0f} samples/s per core (cpu), wall {wall:.1f}s"
    )
    for d, verdict in wrong[:show]:
        print("  --", d.id, verdict.reason, verdict.detail)
        print("    ", d.metadata["solution"][-400:].replace("\n", " | "))
        print("     answer:", d.metadata["answer"])
    return {"label": label, "n": len(docs), "good": good, "reasons": dict(reasons), "cpu_s": cpu}


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--show", type=int, default=0, help="print this many misclassified samples per set")
    parser.add_argument("--only", choices=["gsm8k", "math", "svamp", "generator"], default=None)
    args = parser.parse_args()
    math_dir = args.data / "math"
    if not math_dir.is_dir():
        raise SystemExit(f"no data at {math_dir}; pass --data")
    rng = random.Random(0)
    verifier = MathVerifier()

    def load(name: str) -> list[dict]:
        with open(math_dir / name) as f:
            return [json.loads(line) for line in f][: args.limit]

    if args.only in (None, "gsm8k"):
        gsm = load("gsm8k_train.jsonl")
        refs = [r["answer"].split("####")[-1].strip() for r in gsm]
        admitted = [doc(f"gsm-{i}", r["question"], r["answer"], a) for i, (r, a) in enumerate(zip(gsm, refs))]
        run(verifier, admitted, True, args.show, "gsm8k reference")
        wrong_final = []
        for i, (r, a) in enumerate(zip(gsm, refs)):
            head, _, tail = r["answer"].rpartition("####")
            wrong_final.append(
                doc(f"gsm-final-{i}", r["question"], f"{head}#### {alter_number(tail.strip(), rng)}", a)
            )
        run(verifier, wrong_final, False, args.show, "gsm8k final answer altered")
        run(verifier, without_reference(admitted), True, args.show, "gsm8k reference, no reference answer")
        run(
            verifier,
            without_reference(wrong_final),
            False,
            args.show,
            "gsm8k final altered, no reference answer",
        )
        wrong_step = []
        for i, (r, a) in enumerate(zip(gsm, refs)):
            altered = alter_step(r["answer"], rng)
            if altered is not None:
                wrong_step.append(doc(f"gsm-step-{i}", r["question"], altered, a))
        run(verifier, wrong_step, False, args.show, "gsm8k one calculator step altered")
        # Model-style: no calculator annotations, the answer in a sentence with currency/thousands.
        styled, styled_step = [], []
        for i, (r, a) in enumerate(zip(gsm, refs)):
            head, _, tail = r["answer"].rpartition("####")
            body = ANNOTATION_ONLY.sub("", head).strip()
            styled.append(doc(f"gsm-styled-{i}", r["question"], f"{body}\nThe answer is ${tail.strip()}.", a))
            altered = alter_step(r["answer"], rng)
            if altered is not None:
                head = altered.rpartition("####")[0]
                text = f"{ANNOTATION_ONLY.sub('', head).strip()}\nThe answer is {a}."
                styled_step.append(doc(f"gsm-styled-step-{i}", r["question"], text, a))
        run(verifier, styled, True, args.show, "gsm8k restyled (no annotations, 'The answer is $x.')")
        run(verifier, styled_step, False, args.show, "gsm8k restyled, one step altered (chains only)")

    if args.only in (None, "math"):
        rows = load("math_hendrycks_test.jsonl")
        answers = [last_boxed(r["solution"]) for r in rows]
        admitted = [doc(f"math-{r['idx']}", r["problem"], r["solution"], a) for r, a in zip(rows, answers)]
        run(verifier, admitted, True, args.show, "MATH reference vs own boxed answer")
        others = []
        for k, (r, a) in enumerate(zip(rows, answers)):
            other = answers[(k + 1 + rng.randrange(len(rows) - 1)) % len(rows)]
            if other and a and other.replace(" ", "") != a.replace(" ", ""):
                others.append(doc(f"math-other-{r['idx']}", r["problem"], r["solution"], other))
        run(verifier, others, False, args.show, "MATH reference vs another problem's answer")
        reboxed = []
        for d in others:
            start, end = boxed_span(d.metadata["solution"])
            text = (
                d.metadata["solution"][:start]
                + f"\\boxed{{{d.metadata['answer']}}}"
                + d.metadata["solution"][end:]
            )
            reboxed.append(doc(d.id + "-reboxed", d.metadata["problem"], text, None))
        run(verifier, without_reference(admitted), True, args.show, "MATH reference, no reference answer")
        run(verifier, reboxed, False, args.show, "MATH boxed another problem's answer, no reference answer")
        restyled = []
        for d in admitted:
            solution = d.metadata["solution"]
            span = boxed_span(solution)
            if span and d.metadata["answer"]:
                plain = solution[: span[0]] + d.metadata["answer"] + solution[span[1] :]
                text = f"{plain}\nThe final answer is ${d.metadata['answer']}$."
                restyled.append(doc(d.id + "-styled", d.metadata["problem"], text, d.metadata["answer"]))
        run(verifier, restyled, True, args.show, "MATH restyled ('The final answer is $x$.', no \\boxed)")

    if args.only in (None, "svamp"):
        rows = load("svamp.jsonl")
        good, bad = [], []
        for r in rows:
            answer = f"{r['Answer']:g}"
            eq = r["Equation"].strip()
            problem = f"{r['Body']} {r['Question']}"
            good.append(doc(f"svamp-{r['ID']}", problem, f"{eq} = {answer}\nThe answer is {answer}.", answer))
            wrong = alter_number(answer, rng)
            bad.append(
                doc(f"svamp-bad-{r['ID']}", problem, f"{eq} = {wrong}\nThe answer is {answer}.", answer)
            )
        run(verifier, good, True, args.show, "svamp equation solutions")
        run(verifier, bad, False, args.show, "svamp equation result altered")
    if args.only in (None, "generator"):
        start = time.perf_counter()
        generated = list(MathGenerator("math", count=args.limit or 1000, seed=0).generate())
        seconds = time.perf_counter() - start
        print(
            f"math generator: {len(generated)} problems in {seconds:.1f}s = {len(generated) / seconds:.0f}/s"
        )
        run(verifier, generated, True, args.show, "math generator output")
    verifier.close()


if __name__ == "__main__":
    main()
