import pickle
import time

import pytest

from pipeline.document import Document
from synthesis.math.answers import extract_answer
from synthesis.math.equivalence import code_in_answer
from synthesis.math.latex import NotArithmetic
from synthesis.math.parse import evaluate_text
from synthesis.math.steps import check_steps
from synthesis.math.verifier import MathVerifier


@pytest.fixture(scope="module")
def verifier():
    v = MathVerifier(sympy_timeout_s=1.0)
    yield v
    v.close()


def math_doc(solution: str, answer: str | None = None, problem: str = "A problem.") -> Document:
    return Document(
        id="m", text="", kind="math", metadata={"problem": problem, "solution": solution, "answer": answer}
    )


@pytest.mark.parametrize(
    ("solution", "expected"),
    [
        ("So $x = \\boxed{\\frac{\\sqrt{3}}{2}}$.", "\\frac{\\sqrt{3}}{2}"),
        ("first \\boxed{1} then \\boxed{ {2} }", "{2}"),
        ("The total is \\fbox{7}.", "7"),
        ("48 + 24 = 72\n#### 1,080", "1,080"),
        ("So the answer is 18 apples. Great.", "18 apples"),
        ("Therefore, the final answer is: **$1,250**", "$1,250"),
        ("Answer: (1, 2), which checks out", "(1, 2)"),
        ("The answer is 5, not 6.", "5"),
        ("I computed 5 + 3 = 8 and stopped", None),
        ("So $\\boxed{3}$ is an intermediate value; the answer is $6$.", "$6$"),
        ("So $\\boxed{44}$. We check it: the answer is correct.", "44"),
        ("Final Answer: The final answer is $72$. I hope it is correct.", "$72$"),
    ],
)
def test_extract_answer(solution, expected):
    assert extract_answer(solution) == expected


@pytest.mark.parametrize(
    ("predicted", "reference"),
    [
        ("0.5", "\\frac{1}{2}"),
        ("1/2", "\\dfrac12"),
        ("-0.75", "-\\frac{3}{4}"),
        ("2\\frac{1}{2}", "2.5"),
        ("25\\%", "0.25"),
        ("50%", "50"),
        ("\\$1,000.00", "1000"),
        ("18 dollars", "18"),
        ("5\\text{ cm}^2", "5"),
        ("90^\\circ", "90"),
        ("twenty-one", "21"),
        ("x = 5", "5"),
        ("2 + 3 = 5", "5"),
        ("She sold 72 clips", "72"),
        ("(1, 2)", "(1,2)"),
        ("[2, 5)", "[2,5)"),
        ("(-\\infty, 3]", "(-\\infty,3]"),
        ("+\\infty", "\\infty"),
        ("\\binom{5}{2}", "10"),  # was unparseable
        ("\\dbinom{n}{2}", "\\frac{n(n-1)}{2}"),
        ("2, -3", "-3, 2"),
        ("1 \\pm \\sqrt{19}", "1-\\sqrt{19}, 1+\\sqrt{19}"),
        ("\\sqrt{8}", "2\\sqrt{2}"),
        ("\\frac{\\pi}{2}", "\\pi/2"),
        ("x^2+2x+1", "(x+1)^2"),
        ("\\text{(C)}", "C"),
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
        # function notation (each was wrong_answer or unparseable)
        ("\\log_2 8", "3"),
        ("\\log_{3}{81}", "4"),
        ("\\log_2(32)", "5"),
        ("\\log_{10} 1000", "3"),
        ("\\ln e^2", "2"),
        ("|{-3}|", "3"),
        ("\\left| -5 \\right|", "5"),
        ("\\lvert -2 \\rvert", "2"),
        ("\\lfloor 3.7 \\rfloor", "3"),
        ("\\left\\lceil \\frac{7}{2} \\right\\rceil", "4"),
        ("0.\\overline{3}", "\\frac13"),
        ("1.2\\overline{34}", "\\frac{611}{495}"),
        ("\\sin 2x", "\\sin(2x)"),
    ],
)
def test_equivalent_answers(verifier, predicted, reference):
    assert verifier.equivalent(predicted, reference)


@pytest.mark.parametrize(
    ("predicted", "reference"),
    [
        ("0.33", "\\frac{1}{3}"),
        ("(1, 2)", "(2, 1)"),
        ("[2, 5)", "(2, 5)"),
        ("2, 3", "2, 3, 4"),
        ("\\sqrt{2}", "1.414"),
        ("3\\pi", "3"),
        ("Monday", "Tuesday"),
        ("-5", "5"),
        ("\\frac{2}{2004!}", "\\frac{1}{2004!}"),  # tiny values compare relatively (MATH test #2854)
        ("x^2+2x", "(x+1)^2"),  # a constant difference from an expression (was a sympy TypeError)
        ("\\binom{10}{3}", "121"),
        ("100!+1", "100!"),  # within 1e-9 relative, but an exact difference is not a rounding error
        ("\\binom{100}{50}", "\\binom{100}{50}+1"),
        ("5", "\\infty"),  # every number was within oo/1e9 of oo
        ("0", "\\infty"),
        ("-\\infty", "\\infty"),
        ("(2, -\\infty)", "(2, \\infty)"),
        ("\\log_2 8", "4"),
        ("\\log_3 8", "2"),
        ("\\lfloor 3.7 \\rfloor", "4"),
        ("\\lceil 3.2 \\rceil", "3"),
        ("0.\\overline{3}", "0.33"),
        ("|x|", "x"),
    ],
)
def test_different_answers(verifier, predicted, reference):
    assert not verifier.equivalent(predicted, reference)


def test_safe_arithmetic_only():
    assert evaluate_text("\\frac{3}{4} \\cdot 8 + 2^{3}") == 14
    assert evaluate_text("12 x 1/2") == 6
    for text in ("__import__('os').system('true')", "9^9^9^9", "x + 1"):
        with pytest.raises(NotArithmetic):
            evaluate_text(text)


@pytest.mark.parametrize(
    "solution",
    [
        "Natalia sold 48/2 = <<48/2=24>>24 clips in May.",
        "Each gets 10/3 = <<10/3=3.33>>3.33 dollars.",  # rounded to the shown decimals
        "In total 5 + 3 = 8 * 2 = 16 apples.",  # a running chain
        "So 500/ 2/5 = 1250 seats.",  # `2/5` written as one fraction
        "Then $f'(3) = 9 \\cdot 3^{2} - 1 = 80$.",
        "10% of 150 = 75 + 15 = 90 in total",  # `of` makes 150 a factor, not a side
        "x + 2 = 10, so x = 10 - 2 = 8",
        "$2^10 = 1024$",  # LaTeX renders 2¹0: ambiguous, not checked
        "Day 1 = 5 miles",
        "**Step 1:** 48 / 2 = 24 clips**",  # markdown bold is not a power
        "She needs 20 + 5 = 25ml of oil.",
        "Lazlo has 4 pounds - 6 ounces = 58 ounces",  # a unit conversion is not checked
        "Week 2 sales * 3 = 600 dollars",  # `Week 2` is a label, not a quantity
        "Each pays 100/3 = 33.33 dollars, so 33.33 * 3 = 100 dollars in all.",  # a carried rounding
    ],
)
def test_correct_or_uncheckable_steps_pass(solution):
    assert check_steps(solution)[1] is None


@pytest.mark.parametrize(
    ("solution", "where"),
    [
        ("Natalia sold 48/2 = <<48/2=25>>25 clips in May.", "calculator step <<48/2=25>>"),
        ("She has 12 * 4 = 46 eggs.", "equation 12 * 4 = 46"),
        ("**Step 1:** 48 / 2 = 25 clips**", "equation 48 / 2 = 25"),
        ("There are 4 houses * 3 gnomes = 7 gnomes.", "equation 4 * 3 = 7"),
        ("Each pays 100/3 = 33.33, so 33.33 * 3 = 101 in all.", "equation 33.33 * 3 = 101"),
        ("It costs 0.25 * 4 = 1.01 dollars.", "equation 0.25 * 4 = 1.01"),
        ("He paid $83/necklace x 2 necklaces = $168 in all.", "equation 83 * 2 = 168"),
        ("She needs 20 + 5 = 28ml of oil.", "equation 20 + 5 = 28"),
        (".4 liters * 1000 ml/liter = 397 ml", "equation .4 * 1000 = 397"),
        ("$\\frac{3}{4} \\cdot 8 = 5$", "equation"),
        ("\\begin{align*} 7 \\cdot 6 &= 40 + 2 \\\\\n &= 43 \\end{align*}", "equation"),
    ],
)
def test_wrong_steps_are_found(solution, where):
    checked, bad, _ = check_steps(solution)
    assert checked >= 1 and bad is not None and bad.startswith(where)


@pytest.mark.parametrize("answer", ["3 or 4", "3 \\text{ or } 4", "\\text{3 or 4}", "3\\ \\text{or}\\ 4"])
def test_a_hedged_answer_is_not_read_as_its_first_number(verifier, answer):
    """`4` was read as a power of a unit word `or`, so the hedge matched a reference of 3."""
    assert not verifier.check(math_doc(f"So \\boxed{{{answer}}}.", "3")).keep
    assert verifier.check(math_doc("The area is \\boxed{20\\text{ cm}^2}.", "20")).keep


def test_reasons(verifier):
    good = "She sold 48/2 = <<48/2=24>>24 clips.\n#### 24"
    assert verifier.check(math_doc(good, "24")).keep
    assert verifier.check(math_doc(good, "25")).reason == "wrong_answer"
    assert verifier.check(math_doc(good.replace("=24>>24", "=23>>23"), "24")).reason == "bad_step"
    assert verifier.check(math_doc("She sold 24 clips.", "24")).keep  # the last number, as a fallback
    assert verifier.check(math_doc("She sold 23 clips.", "24")).reason == "wrong_answer"
    assert verifier.check(math_doc("She sold all of them.", "24")).reason == "no_answer"
    strict = MathVerifier(last_number_fallback=False)
    assert strict.check(math_doc("She sold 24 clips.", "24")).reason == "no_answer"
    assert verifier.check(math_doc("", "24")).reason == "no_answer"
    assert verifier.check(math_doc("So \\boxed{\\foo{3}}", "3")).reason == "unparseable"


def test_without_reference_steps_must_verify(verifier):
    assert verifier.check(math_doc("48/2 = <<48/2=24>>24\n#### 24")).keep
    assert verifier.check(math_doc("It is 24.\n#### 24")).reason == "no_answer"


@pytest.mark.parametrize(
    ("solution", "keep"),
    [
        ("48/2 = <<48/2=24>>24 in May, 48+24 = <<48+24=72>>72 in all.\n#### 72", True),
        ("48/2 = <<48/2=24>>24 in May, 48+24 = <<48+24=72>>72 in all.\n#### 24", True),  # on the last line
        ("48/2 = <<48/2=24>>24 in May.\n48+24 = <<48+24=72>>72 in all.\n#### 24", False),  # an earlier line's
        ("$48/2 = 24$ in May.\n\n$48+24 = 72$ in all, $\\boxed{24}$", False),  # chains alike
        ("$48/2 = 24$ in May.\n\n$48+24 = 72$ in all, $\\boxed{72}$", True),
        ("48+24 = 72 in all, 48/2 = <<48/2=24>>24 in May.\nSo 24.\n#### 72", True),  # one line, either kind
        ("48/2 = <<48/2=24>>24 in May, 48+24 = <<48+24=72>>72 in all.\n#### 73", False),
        ("48/2 = <<48/2=24>>24 in May, so 72 in all.\n#### 72", False),  # 72 computed by no step
        ("Chances: 30% * 50% = 15%.\n#### 15", True),  # a percentage as written
        ("$\\sqrt{\\frac{2}{3}} = \\frac{\\sqrt2}{\\sqrt3}$, so $\\boxed{\\frac{\\sqrt6}{3}}$", True),
        ("$\\sqrt{\\frac{2}{3}} = \\frac{\\sqrt2}{\\sqrt3}$, so $\\boxed{\\frac{\\sqrt5}{3}}$", False),
        ("Half is 10**400/2 = <<10**400/2=5*10**399>>5*10**399.\n#### \\sqrt{2}", False),  # too big a float
    ],
)
def test_without_reference_the_answer_must_be_what_the_last_checked_step_computed(verifier, solution, keep):
    verdict = verifier.check(math_doc(solution))
    assert verdict.keep == keep
    assert keep or (verdict.reason == "no_answer" and "the last checked step" in verdict.detail)


def test_step_checking_can_be_disabled():
    lax = MathVerifier(check_steps=False)
    assert lax.check(math_doc("12 * 4 = 46\n#### 46", "46")).keep


def test_sympy_timeout_gives_a_verdict(verifier):
    start = time.monotonic()
    verdict = verifier.check(math_doc("So \\boxed{10^{10^{10}}}", "5"))
    assert verdict.reason == "unparseable" and "timed out" in verdict.detail
    assert time.monotonic() - start < 30
    assert verifier.equivalent("\\sqrt{12}", "2\\sqrt{3}")  # the worker was restarted


def test_sympy_memory_limit_gives_a_verdict():
    """`(x+1)^{1000000}` grows the sympy worker by gigabytes within a raised time limit (3.0 GiB in
    10 s, 7.2 GiB in 30 s: benchmarks/synthesis_math_memory.py); capped, it runs out of memory first."""
    capped = MathVerifier(sympy_timeout_s=10.0, sympy_memory_mb=256)
    try:
        start = time.monotonic()
        verdict = capped.check(math_doc("So \\boxed{(x+1)^{1000000} - 1}", "x^2"))
        assert verdict.reason == "unparseable" and "256 MiB memory limit" in verdict.detail
        assert time.monotonic() - start < 30
        assert capped.equivalent("\\sqrt{12}", "2\\sqrt{3}")  # the worker goes on
    finally:
        capped.close()


def test_render_and_pickle(verifier):
    doc = math_doc("48/2 = <<48/2=24>>24\n#### 24", "24", problem="How many?")
    assert verifier.render(doc) == "How many?\n\n48/2 = 24\n#### 24"
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.check(doc).keep
    clone.close()


def test_plain_numbers_never_start_sympy():
    fresh = MathVerifier()
    assert fresh.check(math_doc("She sold 48/2 = <<48/2=24>>24 clips.\n#### 24", "24.0")).keep
    assert fresh.check(math_doc("So \\boxed{\\frac{3}{4}}", "0.75")).keep
    # A closed form against a decimal: numerically (two closed forms that agree go to sympy to be proved).
    assert fresh.check(math_doc("So \\boxed{2\\sqrt{2}}", "2.828427124746")).keep
    assert fresh._equivalence._worker._proc is None


@pytest.mark.parametrize(
    "answer",
    [
        "__import__('os').system('touch {marker}')",
        "getattr(__import__('os'), 'system')('touch {marker}')",
        "exec('import os; os.system(\"touch {marker}\")')",
        "preview(x, viewer='file', filename='{marker}')",
    ],
)
def test_an_answer_is_never_run_as_python(verifier, tmp_path, answer):
    """sympy's parse_expr evaluates its input as Python, with builtins and all of sympy in reach:
    an answer that is code is unparseable, and nothing of it runs (these made the file before)."""
    marker = tmp_path / "ran"
    for solution in (f"#### {answer}", f"So the answer is \\boxed{{{answer}}}"):
        verdict = verifier.check(math_doc(solution.replace("{marker}", str(marker)), "5"))
        assert (verdict.keep, verdict.reason) == (False, "unparseable")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("2*x + 3", ""),
        ("sqrt(2)/2 + pi*e", ""),
        ("5! - 3.5e-2", ""),
        ("[(-2), 7]", ""),
        ("a.b", "'.'"),
        ("'s'", "\"'s'\""),
        ("x := 1", "':='"),
        ("lambda: 1", "'lambda'"),
        ("__class__", "'__class__'"),
        ("{1: 2}", "'{'"),
    ],
)
def test_code_in_answer(source, code):
    assert code_in_answer(source) == code


@pytest.mark.parametrize(
    ("solution", "reason"),
    [
        ("#### 1 " + "a" * 40 + "!", "wrong_answer"),  # unit words: exponential backtracking (hours)
        ("#### 1" + " " * 200_000 + "x", "wrong_answer"),  # `and` lists, then `####`'s own pattern (175 s)
        ("2+2=4 " + "\\boxed{" * 20_000, "wrong_answer"),  # unclosed boxes scanned to the end: quadratic
        ("The answer is" + "\n" * 100_000, "no_answer"),  # line ends after `the answer is`: quadratic
        ("#### 1" + "$" * 100_000 + "x", "wrong_answer"),  # closing `$`s stripped by a pattern: quadratic
    ],
)
def test_pathological_answers_are_read_in_linear_time(verifier, solution, reason):
    """Each took from minutes to hours before (a generated solution could stall a worker)."""
    started = time.perf_counter()
    verdict = verifier.check(math_doc(solution, "1"))
    assert verdict.reason == reason
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize(
    ("solution", "answer", "reason"),
    [
        ("#### " + "1" * 5_000, "1", "unparseable"),
        ("#### " + "1" * 5_000, "1" * 5_000, None),  # the same digits: equal as text
        ("\\boxed{0.\\overline{" + "3" * 5_000 + "}}", "1", "unparseable"),
        ("\\boxed{\\frac{" + "1" * 5_000 + "}{3}}", "1", "unparseable"),
        ("<<" + "1" * 5_000 + "+1=2>>2\n#### 2", None, "no_answer"),  # a step too long to check
    ],
)
def test_numbers_too_long_to_convert_are_verdicts_not_errors(verifier, solution, answer, reason):
    """Python converts at most 4,300 digits between int and str: a longer number raised ValueError
    out of `check`, so the sample landed in `failed` instead of getting a verdict."""
    verdict = verifier.check(math_doc(solution, answer))
    assert verdict.reason == reason


def test_a_huge_answer_is_clipped_in_the_rejection_detail(verifier):
    """A 300,000-digit boxed answer made a 300 KB detail, shown whole in report.html."""
    verdict = verifier.check(math_doc("So \\boxed{" + "7" * 300_000 + "}", answer="5"))
    assert verdict.detail == "answer '" + "7" * 200 + "'…: number too long to read"
