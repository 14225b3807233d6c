"""`math` generator: built-in math problems whose step-by-step solutions are derived with sympy.

Every solution writes its arithmetic as checkable steps (GSM8K calculator annotations `<<a*b=c>>` or
LaTeX equation chains `a = b = c`) and ends with `#### x` or `\\boxed{x}`, so the `verify` stage's
math verifier checks each step and the final answer; the answer itself is computed by sympy
(`solve`, `linsolve`, `diff`, `integrate`, `summation`), independently of the written steps.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pipeline.stages import Param, register_generator
from synthesis.families import FamilyGenerator

Problem = tuple[str, str, str]  # problem, solution, answer
NAMES = ("Ava", "Ben", "Chloe", "Diego", "Emma", "Farid", "Grace", "Hiro", "Isla", "Jonas", "Kemi", "Lena")


def _sympy():
    import sympy

    return sympy


def _tex(value: Any) -> str:
    """LaTeX of a sympy number (`\\frac{7}{2}`, `-3`)."""
    return _sympy().latex(value)


def _par(value: Any) -> str:
    """A number as a factor: negative ones in parentheses."""
    text = _tex(value)
    return f"({text})" if value < 0 else text


def _decimal(value: Any) -> str:
    """A terminating rational as a plain decimal (`12.5`, `40`)."""
    sympy = _sympy()
    value = sympy.Rational(value)
    if value.q == 1:
        return str(value.p)
    text = f"{sympy.N(value, 30):f}".rstrip("0")
    return text.rstrip(".")


def linear_equation(rng: random.Random) -> Problem:
    sympy = _sympy()
    x = sympy.Symbol("x")
    a = rng.choice([n for n in range(-12, 13) if n not in (-1, 0, 1)])
    b = rng.choice([n for n in range(-40, 41) if n != 0])
    solution_value = sympy.Rational(rng.randint(-15, 15), rng.choice([1, 1, 1, 2, 3]))
    c = a * solution_value + b
    if c.q != 1:
        c = sympy.Integer(round(c))
    equation = sympy.Eq(a * x + b, c)
    (root,) = sympy.solve(equation, x)
    rhs = c - b
    move = f"Subtract ${b}$ from" if b > 0 else f"Add ${-b}$ to"
    steps = [
        f"{move} both sides: ${_tex(a)}x = {_tex(c)} {'-' if b > 0 else '+'} {abs(b)} = {_tex(rhs)}$.",
        f"Divide both sides by ${_tex(a)}$: $x = \\frac{{{_tex(rhs)}}}{{{_tex(a)}}} = {_tex(root)}$.",
        f"The answer is $\\boxed{{{_tex(root)}}}$.",
    ]
    return f"Solve for $x$: ${sympy.latex(equation.lhs)} = {_tex(c)}$.", "\n".join(steps), _tex(root)


def linear_system(rng: random.Random) -> Problem:
    sympy = _sympy()
    x, y = sympy.symbols("x y")
    while True:
        a1, b1, a2, b2 = (rng.choice([n for n in range(-9, 10) if n != 0]) for _ in range(4))
        det = a1 * b2 - a2 * b1
        if det != 0:
            break
    xv, yv = rng.randint(-10, 10), rng.randint(-10, 10)
    c1, c2 = a1 * xv + b1 * yv, a2 * xv + b2 * yv
    eq1, eq2 = sympy.Eq(a1 * x + b1 * y, c1), sympy.Eq(a2 * x + b2 * y, c2)
    ((sx, sy),) = sympy.linsolve([eq1, eq2], [x, y])
    dx, dy = c1 * b2 - c2 * b1, a1 * c2 - a2 * c1
    answer = f"({_tex(sx)}, {_tex(sy)})"
    steps = [
        "Use Cramer's rule. The determinant of the coefficients is "
        f"$D = {a1} \\cdot {_par(b2)} - {_par(a2)} \\cdot {_par(b1)} = {det}$.",
        f"Replacing the $x$ column by the constants gives $D_x = {c1} \\cdot {_par(b2)} - {_par(c2)} \\cdot {_par(b1)} = {dx}$, "
        f"and replacing the $y$ column gives $D_y = {a1} \\cdot {_par(c2)} - {_par(a2)} \\cdot {_par(c1)} = {dy}$.",
        f"So $x = \\frac{{{dx}}}{{{det}}} = {_tex(sx)}$ and $y = \\frac{{{dy}}}{{{det}}} = {_tex(sy)}$.",
        f"The answer is $\\boxed{{{answer}}}$.",
    ]
    problem = (
        f"Solve the system $${sympy.latex(eq1.lhs)} = {c1}, \\quad {sympy.latex(eq2.lhs)} = {c2}$$ "
        "and give the answer as an ordered pair $(x, y)$."
    )
    return problem, "\n".join(steps), answer


def word_problem(rng: random.Random) -> Problem:
    sympy = _sympy()
    name = rng.choice(NAMES)
    if rng.random() < 0.5:
        trays, per_tray = rng.randint(3, 12), rng.randint(6, 24)
        made = sympy.Integer(trays) * per_tray
        sold, given = rng.randint(1, int(made) // 2), rng.randint(1, int(made) // 4)
        gone = sympy.Integer(sold) + given
        left = made - gone
        problem = (
            f"{name} bakes {trays} trays of cookies with {per_tray} cookies on each tray. {name} sells {sold} "
            f"cookies and gives {given} to friends. How many cookies are left?"
        )
        steps = [
            f"{name} bakes {trays} * {per_tray} = <<{trays}*{per_tray}={made}>>{made} cookies.",
            f"{name} sells or gives away {sold} + {given} = <<{sold}+{given}={gone}>>{gone} cookies.",
            f"So {made} - {gone} = <<{made}-{gone}={left}>>{left} cookies are left.",
            f"#### {left}",
        ]
        return problem, "\n".join(steps), str(left)
    books, book_price = rng.randint(2, 6), rng.randint(4, 25)
    pens, pen_price = rng.randint(2, 10), rng.randint(1, 5)
    spent_books, spent_pens = sympy.Integer(books) * book_price, sympy.Integer(pens) * pen_price
    total = spent_books + spent_pens
    paid = (int(total) // 50 + 1) * 50
    change = paid - total
    problem = (
        f"{name} buys {books} books at ${book_price} each and {pens} pens at ${pen_price} each, and pays with "
        f"${paid}. How much change does {name} get, in dollars?"
    )
    steps = [
        f"The books cost {books} * ${book_price} = $<<{books}*{book_price}={spent_books}>>{spent_books}.",
        f"The pens cost {pens} * ${pen_price} = $<<{pens}*{pen_price}={spent_pens}>>{spent_pens}.",
        f"Together that is {spent_books} + {spent_pens} = $<<{spent_books}+{spent_pens}={total}>>{total}.",
        f"The change is {paid} - {total} = $<<{paid}-{total}={change}>>{change}.",
        f"#### {change}",
    ]
    return problem, "\n".join(steps), str(change)


def percentage(rng: random.Random) -> Problem:
    sympy = _sympy()
    price = sympy.Integer(rng.randint(2, 40) * 10)
    off, tax = rng.choice([5, 10, 15, 20, 25, 30, 40, 50]), rng.choice([5, 8, 10, 12, 20])
    discount = price * off / 100
    sale = price - discount
    added = sale * tax / 100
    final = sale + added
    d, s, t, f = (_decimal(v) for v in (discount, sale, added, final))
    problem = (
        f"A jacket costs ${price}. It is on sale for {off}% off, and then a {tax}% sales tax is added to the "
        "sale price. What is the final price in dollars?"
    )
    steps = [
        f"The discount is {price} * {off} / 100 = $<<{price}*{off}/100={d}>>{d}.",
        f"The sale price is {price} - {d} = $<<{price}-{d}={s}>>{s}.",
        f"The tax is {s} * {tax} / 100 = $<<{s}*{tax}/100={t}>>{t}.",
        f"The final price is {s} + {t} = $<<{s}+{t}={f}>>{f}.",
        f"#### {f}",
    ]
    return problem, "\n".join(steps), f


def rate(rng: random.Random) -> Problem:
    sympy = _sympy()
    a, b = rng.sample(range(2, 13), 2)
    t = sympy.Symbol("t", positive=True)
    (together,) = sympy.solve(sympy.Eq(t / a + t / b, 1), t)
    combined = sympy.Rational(1, a) + sympy.Rational(1, b)
    problem = (
        f"One pipe fills a tank in {a} hours and another fills it in {b} hours. Working together, how many "
        "hours do they take to fill the tank?"
    )
    steps = [
        f"Together they fill $\\frac{{1}}{{{a}}} + \\frac{{1}}{{{b}}} = {_tex(combined)}$ of the tank per hour.",
        f"So the tank is full after $1 \\div {_tex(combined)} = {_tex(together)}$ hours.",
        f"The answer is $\\boxed{{{_tex(together)}}}$.",
    ]
    return problem, "\n".join(steps), _tex(together)


def _polynomial(rng: random.Random, degree: int):
    sympy = _sympy()
    x = sympy.Symbol("x")
    coefficients = [rng.randint(-9, 9) for _ in range(degree)] + [rng.choice([-5, -4, -3, -2, 2, 3, 4, 5])]
    return x, sum(c * x**k for k, c in enumerate(coefficients))


def _evaluation(poly, x, point) -> str:
    """`3 \\cdot 2^{2} - 4 \\cdot 2 + 1`: a polynomial written out at a point, term by term."""
    sympy = _sympy()
    terms = []
    for (power,), coefficient in sorted(sympy.Poly(poly, x).terms(), reverse=True):
        factor = f"{_par(point)}^{{{power}}}" if power > 1 else _par(point)
        if power == 0:
            body = _tex(abs(coefficient))
        else:
            body = factor if abs(coefficient) == 1 else f"{_tex(abs(coefficient))} \\cdot {factor}"
        sign = "-" if coefficient < 0 else "+"
        terms.append(f"{sign} {body}" if terms else f"{'-' if coefficient < 0 else ''}{body}")
    return " ".join(terms) or "0"


def derivative(rng: random.Random) -> Problem:
    sympy = _sympy()
    x, f = _polynomial(rng, rng.randint(2, 4))
    df = sympy.diff(f, x)
    point = rng.randint(-4, 4)
    value = df.subs(x, point)
    problem = f"Let $f(x) = {sympy.latex(f)}$. Find $f'({point})$."
    steps = [
        f"By the power rule, $f'(x) = {sympy.latex(df)}$.",
        f"So $f'({point}) = {_evaluation(df, x, point)} = {_tex(value)}$.",
        f"The answer is $\\boxed{{{_tex(value)}}}$.",
    ]
    return problem, "\n".join(steps), _tex(value)


def integral(rng: random.Random) -> Problem:
    sympy = _sympy()
    x, f = _polynomial(rng, rng.randint(1, 3))
    lo = rng.randint(-3, 2)
    hi = lo + rng.randint(1, 4)
    antiderivative = sympy.integrate(f, x)
    upper, lower = antiderivative.subs(x, hi), antiderivative.subs(x, lo)
    value = upper - lower  # the fundamental theorem, on sympy's antiderivative
    problem = f"Evaluate $\\int_{{{lo}}}^{{{hi}}} \\left({sympy.latex(f)}\\right)\\,dx$."
    steps = [
        f"An antiderivative is $F(x) = {sympy.latex(antiderivative)}$.",
        f"At the upper limit, $F({hi}) = {_evaluation(antiderivative, x, hi)} = {_tex(upper)}$.",
        f"At the lower limit, $F({lo}) = {_evaluation(antiderivative, x, lo)} = {_tex(lower)}$.",
        f"So the integral is ${_tex(upper)} - {_par(lower)} = {_tex(value)}$.",
        f"The answer is $\\boxed{{{_tex(value)}}}$.",
    ]
    return problem, "\n".join(steps), _tex(value)


def arithmetic_sequence(rng: random.Random) -> Problem:
    sympy = _sympy()
    k = sympy.Symbol("k", integer=True)
    first, step, n = (
        rng.randint(-20, 30),
        rng.choice([n for n in range(-7, 10) if n != 0]),
        rng.randint(5, 40),
    )
    last = first + (n - 1) * step
    total = sympy.summation(first + (k - 1) * step, (k, 1, n))
    problem = (
        f"An arithmetic sequence has first term ${first}$ and common difference ${step}$. "
        f"What is the sum of its first ${n}$ terms?"
    )
    steps = [
        f"The ${n}$th term is $a_{{{n}}} = {first} + ({n} - 1) \\cdot {_par(step)} = {last}$.",
        f"The sum is $\\frac{{{n} \\cdot ({first} + {_par(last)})}}{{2}} = {_tex(total)}$.",
        f"The answer is $\\boxed{{{_tex(total)}}}$.",
    ]
    return problem, "\n".join(steps), _tex(total)


def geometric_sequence(rng: random.Random) -> Problem:
    sympy = _sympy()
    k = sympy.Symbol("k", integer=True)
    first, ratio, n = rng.randint(1, 9), rng.choice([-3, -2, 2, 3, 4, 5]), rng.randint(3, 9)
    total = sympy.summation(first * sympy.Integer(ratio) ** (k - 1), (k, 1, n))
    problem = (
        f"A geometric sequence has first term ${first}$ and common ratio ${ratio}$. "
        f"What is the sum of its first ${n}$ terms?"
    )
    steps = [
        "The sum of the first $n$ terms is $a \\cdot \\frac{r^n - 1}{r - 1}$.",
        f"Here that is ${first} \\cdot \\frac{{{_par(ratio)}^{{{n}}} - 1}}{{{ratio} - 1}} = {_tex(total)}$.",
        f"The answer is $\\boxed{{{_tex(total)}}}$.",
    ]
    return problem, "\n".join(steps), _tex(total)


def quadratic(rng: random.Random) -> Problem:
    sympy = _sympy()
    x = sympy.Symbol("x")
    r1, r2 = rng.sample(range(-12, 13), 2)
    b, c = -(r1 + r2), r1 * r2
    poly = x**2 + b * x + c
    roots = sorted(sympy.solve(poly, x))
    disc = b * b - 4 * c
    root_disc = sympy.sqrt(disc)
    answer = ", ".join(_tex(r) for r in roots)
    problem = f"Find all solutions of ${sympy.latex(poly)} = 0$."
    steps = [
        f"The discriminant is ${_par(b)}^{{2}} - 4 \\cdot {_par(c)} = {disc}$, and $\\sqrt{{{disc}}} = {_tex(root_disc)}$.",
        f"By the quadratic formula the roots are $\\frac{{{-b} - {_tex(root_disc)}}}{{2}} = {_tex(roots[0])}$ "
        f"and $\\frac{{{-b} + {_tex(root_disc)}}}{{2}} = {_tex(roots[1])}$.",
        f"The answer is $\\boxed{{{answer}}}$.",
    ]
    return problem, "\n".join(steps), answer


FAMILIES: dict[str, Callable[[random.Random], Problem]] = {
    f.__name__: f
    for f in (
        linear_equation,
        linear_system,
        word_problem,
        percentage,
        rate,
        derivative,
        integral,
        arithmetic_sequence,
        geometric_sequence,
        quadratic,
    )
}


@register_generator("math")
class MathGenerator(FamilyGenerator):
    """Built-in math problems (10 families) with sympy-derived, step-checkable solutions."""

    params = {
        "count": Param(int, 100, "number of problems", min=0),
        "seed": Param(int, 0, "seed; the same seed and count give the same problems"),
        "families": Param(list[str], sorted(FAMILIES), "problem families to draw from (round robin)"),
    }

    FAMILIES = FAMILIES
    kind = "math"

    def identity(self, problem: Problem) -> str:
        return problem[0] + "\n" + problem[1]

    def metadata(self, family: str, problem: Problem, rng: random.Random) -> dict:
        question, solution, answer = problem
        return {"family": family, "problem": question, "solution": solution, "answer": answer}
