"""Math candidate verification: final answer up to symbolic equivalence, and every checkable step.

`MathVerifier.check(doc)` reads `doc.metadata["problem"]`, `["solution"]` and optionally `["answer"]`:

1. The final answer is extracted from the solution: the last-written of `\\boxed{}` (nested braces), a
   `#### x` line and a "final answer / the answer is / Answer:" phrase; failing those, and only when
   there is a reference to compare with, the last number written (`last_number_fallback`).
2. Every checkable step is evaluated with exact rational arithmetic (a small parser, never `eval`):
   GSM8K calculator annotations `<<48/2=24>>` and equation chains `a = b = c` in prose or LaTeX whose
   sides are all arithmetic. A side whose context makes it ambiguous (a variable, `2\\pi`, `f(2)`, a
   label such as `Day 1`) is not checked, nor are unit conversions or problems with their own
   operations or modular arithmetic; unit words inside an expression are dropped (`4 houses * 3`); a
   written value may be a rounding or truncation of the true value to its shown decimals; "running"
   chains (`5 + 3 = 8 * 2 = 16`) are read as intended.
3. The extracted answer is compared with the reference: normalised strings, then exact numbers
   (fractions, decimals, percentages, thousands separators, currency, units, number words, sign and
   scale words, base subscripts), then structures (tuples, intervals, unions, unordered answer lists,
   labelled unknowns, `\\pm`, ratios, matrices), then closed forms evaluated numerically
   (`\\frac{\\sqrt{3}}{2}` against a decimal), and only then sympy in a worker process with a
   wall-clock timeout (sympy can hang; the worker is killed and restarted); two exact irrational
   answers are equal only when sympy proves it.

Without a reference answer a solution is admitted only if every checked step is correct and its final
answer is a value its last computation established (a side of a correct equality on the last line
that has one, up to exact or 1e-9 relative agreement): otherwise nothing would have verified the
answer. GSM8K's 7,473 training solutions with their final answer changed were admitted at 98.6 % on
their correct steps alone, at 3.7 % when any step's value counted (the changed answer was often an
intermediate value), and at 0.07 % with the last computation's.

Reasons: `wrong_answer`, `bad_step`, `no_answer`, `unparseable`.
"""

from __future__ import annotations

import math
from fractions import Fraction

from pipeline.document import KEEP, Document, Verdict, reject
from synthesis.math.answers import extract_answer, last_number, normalize_answer
from synthesis.math.equivalence import AnswerUnparseable, Equivalence
from synthesis.math.latex import NotArithmetic
from synthesis.math.parse import Number, evaluate_text
from synthesis.math.steps import ANNOTATION, check_steps

REASONS = ("wrong_answer", "bad_step", "no_answer", "unparseable")


def render_math(doc: Document, keep_annotations: bool = False) -> str:
    """Training text: the problem, a blank line, the solution (calculator annotations removed)."""
    solution = doc.metadata.get("solution") or ""
    if not keep_annotations:
        solution = ANNOTATION.sub("", solution)
    return f"{(doc.metadata.get('problem') or '').strip()}\n\n{solution.strip()}"


class MathVerifier:
    """Admit a math candidate only if its final answer matches and every checkable step is right.

    `sympy_timeout_s` bounds one symbolic comparison's own time and `sympy_memory_mb` the sympy
    worker's address space (a comparison that exceeds either is `unparseable`); `check_steps`
    turns step checking off; `keep_annotations` keeps `<<...>>` in the rendered training text;
    `last_number_fallback` reads the last number as the answer when a solution states none (only
    with a reference answer).
    """

    reasons = REASONS

    def __init__(
        self,
        sympy_timeout_s: float = 2.0,
        sympy_memory_mb: int = 1024,
        check_steps: bool = True,
        keep_annotations: bool = False,
        last_number_fallback: bool = True,
    ):
        self.sympy_timeout_s = sympy_timeout_s
        self.sympy_memory_mb = sympy_memory_mb
        self.check_steps = check_steps
        self.keep_annotations = keep_annotations
        self.last_number_fallback = last_number_fallback
        self._equivalence = Equivalence(sympy_timeout_s, sympy_memory_mb)

    def __getstate__(self) -> dict:
        keys = (
            "sympy_timeout_s",
            "sympy_memory_mb",
            "check_steps",
            "keep_annotations",
            "last_number_fallback",
        )
        return {k: getattr(self, k) for k in keys}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def close(self) -> None:
        """Stop the sympy worker process (it is restarted on demand)."""
        self._equivalence.close()

    def check(self, doc: Document) -> Verdict:
        try:
            return self._check(doc)
        except RecursionError:  # absurdly deep nesting of braces or parentheses
            return reject("unparseable", "nesting too deep to read")

    def _check(self, doc: Document) -> Verdict:
        meta = doc.metadata
        solution = meta.get("solution")
        if not isinstance(solution, str) or not solution.strip():
            return reject("no_answer", "empty solution")
        reference = meta.get("answer")
        if reference is not None and not str(reference).strip():
            reference = None
        raw = extract_answer(solution)
        if raw is None and reference is not None and self.last_number_fallback:
            raw = last_number(solution)
        if raw is None:
            return reject("no_answer", "no \\boxed{}, '####' or 'the answer is' in the solution")
        checked, results = 0, []
        if self.check_steps:
            checked, bad, results = check_steps(solution, str(meta.get("problem") or ""), reference is None)
            if bad:
                return reject("bad_step", bad)
        if reference is None:
            if checked == 0:
                return reject("no_answer", "no reference answer and no checkable step: nothing verified")
            if not _established(raw, results):
                return reject(
                    "no_answer",
                    f"no reference answer, and the final answer {_quoted(raw)} is not a value that the last "
                    "checked step establishes: nothing verified it",
                )
            return KEEP
        try:
            same = self.equivalent(raw, str(reference))
        except AnswerUnparseable as exc:
            return reject("unparseable", f"answer {_quoted(raw)}: {exc}")
        if not same:
            return reject("wrong_answer", f"{_quoted(raw)} != {_quoted(str(reference))}")
        return KEEP

    def render(self, doc: Document) -> str:
        return render_math(doc, self.keep_annotations)

    def equivalent(self, predicted: str, reference: str) -> bool:
        """Whether two final answers are the same up to presentation and symbolic equivalence."""
        return self._equivalence.equivalent(predicted, reference)


def _quoted(answer: str, limit: int = 200) -> str:
    """An answer in a rejection's detail: quoted, its first `limit` characters (a 300,000-digit
    answer made a 300 KB detail)."""
    return repr(answer[:limit]) + ("…" if len(answer) > limit else "")


def _established(raw: str, results: list[Number]) -> bool:
    """Whether a final answer is one of the `results` of the last computation."""
    answer = normalize_answer(raw)
    value: Number | None = answer.value
    if value is None:
        try:
            value = evaluate_text(answer.text)  # a closed form: `\frac{\sqrt6}{3}`
        except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
            return False
    for result in results:
        if isinstance(value, Fraction) and isinstance(result, Fraction):
            if value == result:
                return True
        elif _close(value, result):
            return True
    return False


def _close(a: Number, b: Number) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    except OverflowError:  # a rational too large for a float
        return False
