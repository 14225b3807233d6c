"""Step checking: GSM8K calculator annotations `<<48/2=24>>` and equation chains `a = b = c`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

from synthesis.math.latex import NotArithmetic, delatex
from synthesis.math.parse import Number, Token, evaluate, tokenize

_MAX_SIDE_TOKENS = 400
ANNOTATION = re.compile(r"<<([^<>]*)>>")
# Commands that read as prose or units next to a number (not as a factor of it).
_HARMLESS_COMMANDS = frozenset(
    r"\text \textbf \textit \mbox \mathrm \textrm \quad \qquad \approx \implies \Rightarrow \rightarrow"
    r" \Longrightarrow \to \iff \therefore \text \hspace \newline \end \begin \le \ge \leq \geq \ne \neq"
    r" \lt \gt \pmod \bmod \mod \equiv \because \boxed \label \tag".split()
)
_CLEAN_BEFORE = frozenset('[("“')
_CLEAN_AFTER = frozenset(".,;:?)]\"'”")


_ASY = re.compile(r"\[asy\].*?\[/asy\]", re.S)
_MATH_REGION = re.compile(
    r"\$\$.*?\$\$|\$.*?\$|\\\[.*?\\\]|\\\(.*?\\\)|\\begin\{(align|equation|eqnarray|gather)\*?\}.*?\\end\{\1\*?\}",
    re.S,
)
_MATH_LETTERS = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")
# A problem that defines its own operations or works in another base: `*`, juxtaposition and digits
# do not mean ordinary arithmetic there, so its equation chains are not checked.
_CUSTOM_NOTATION = re.compile(
    r"\b(?:defin|denot|operation|notation|base\b|modul|congruen|remainder)|\*|\\(?:pmod|bmod|mod|equiv)\b|\\(?:ast|star|#|&|diamond|nabla|clubsuit|spadesuit|heartsuit"
    r"|diamondsuit|oplus|otimes|odot|bowtie|dagger|boxed|circledast|triangle|square|boxtimes|Delta)",
    re.I,
)


def _text_for_steps(text: str) -> str:
    """Solution text with annotations removed and LaTeX arithmetic rewritten (for chain finding).

    In LaTeX text, letters inside math regions are variables (`ab\\sqrt{15}`), unlike prose words.
    """
    text = ANNOTATION.sub("", text)
    if "**" in text:  # markdown bold, unless it sits between operands (`2**3`)
        text = re.sub(r"(?<![\d)])\*\*|\*\*(?![\d(])", " ", text)
    if "\\" in text or "{" in text:
        text = _ASY.sub(" ", text)
        text = re.sub(r"\\(?:text|textbf|textit|mbox|mathrm|textrm)\s*\{[^{}]*\}", r" \\text ", text)
        text = re.sub(r"\\operatorname\s*\{[^{}]*\}", r" \\function ", text)
        # An aligned chain continued on the next line (`... \\` then `&= ...` or `+ &(...)`).
        text = re.sub(r"\\\\[ \t]*\n(?=[ \t]*[-+*/=&])", " ", text)
        if "\\" in text:
            text = _MATH_REGION.sub(lambda m: _MATH_LETTERS.sub(r"\\var", m.group()), text)
        text = text.replace("\\\\", " ").replace("&", " ").replace("\\$", "$").replace("\\%", "%")
        text = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|\\degree", "", text)
        text = re.sub(r"\\[lc]?dots[bc]?|\\ldots|\\cdots", r" \\dots ", text)
        text = re.sub(r"\\boxed\s*(?=\{)", "", text)
        text = re.sub(r"\^(?=\d\d)", r" \\powamb ", text)  # `2^10` renders as 2¹0 in LaTeX: ambiguous
        try:
            text = delatex(text, mixed=False)
        except NotArithmetic:  # malformed LaTeX somewhere: read the lines that parse
            text = "\n".join(_delatex_or_empty(line) for line in text.split("\n"))
    text = text.replace("°", "")
    # A chain broken over lines (`... \\cdot` / `&= ...`) continues on the next line.
    return re.sub(r"(?<=[-+*/=^])[ \t]*\n|\n(?=[ \t]*=)", " ", text)


def _delatex_or_empty(line: str) -> str:
    try:
        return delatex(line, mixed=False)
    except NotArithmetic:
        return ""


def _is_dirty_neighbour(tok: Token, adjacent: bool) -> bool:
    """Whether a token next to a run makes the run's end value ambiguous (a factor, a variable)."""
    if tok.kind in ("num", "lp", "rp", "func", "opword"):
        return True
    if tok.kind == "word":
        if adjacent and tok.text.isalpha() and len(tok.text) >= 2:
            return False  # a unit glued to its number: `28ml`, `80cm`
        if adjacent or tok.text[:1].isdigit():
            return True
        if tok.text.startswith("\\"):
            return tok.text not in _HARMLESS_COMMANDS
        return len(tok.text) == 1 and tok.text not in ("a", "A", "I")
    if tok.kind == "other":
        return adjacent and tok.text not in _CLEAN_BEFORE and tok.text not in _CLEAN_AFTER
    return tok.kind == "op"


def _runs(tokens: list[Token]) -> list[tuple[list[Token], bool, bool]]:
    """Maximal arithmetic runs with whether their first / last sides are cut by dirty context."""
    runs = []
    current: list[Token] = []
    start_dirty = False

    def close(next_tok: Token | None) -> None:
        nonlocal current
        if current:
            end_dirty = next_tok is not None and _is_dirty_neighbour(next_tok, not next_tok.spaced)
            if next_tok is not None and next_tok.kind == "other" and not next_tok.spaced:
                end_dirty = next_tok.text not in _CLEAN_AFTER
            runs.append((current, start_dirty, end_dirty))
        current = []

    prev: Token | None = None
    for tok in tokens:
        arithmetic = tok.kind in ("num", "op", "lp", "rp", "eq", "func")
        if arithmetic and current and prev is not None:
            operand_end = prev.kind in ("num", "rp")
            operand_start = tok.kind in ("num", "lp", "func")
            implicit = tok.kind in ("lp", "func") and not tok.spaced
            if operand_end and operand_start and not implicit:
                close(tok)
                start_dirty = True
                current = [tok]
                prev = tok
                continue
        if arithmetic:
            if not current:
                if prev is None:
                    start_dirty = False
                elif prev.kind == "other" and not tok.spaced:
                    start_dirty = prev.text not in _CLEAN_BEFORE
                else:
                    start_dirty = _is_dirty_neighbour(prev, not tok.spaced)
            current.append(tok)
        else:
            close(tok)
        prev = tok
    close(None)
    return runs


@dataclass(slots=True)
class _Side:
    tokens: list[Token]

    def __post_init__(self) -> None:
        while len(self.tokens) > 2 and self.tokens[0].kind == "lp" and self.tokens[-1].kind == "rp":
            depth = 0
            for k, t in enumerate(self.tokens):
                depth += (t.kind == "lp") - (t.kind == "rp")
                if depth == 0 and k < len(self.tokens) - 1:
                    return
            self.tokens = self.tokens[1:-1]

    @property
    def bare(self) -> bool:
        """A single written number (its shown decimals bound the rounding it may carry)."""
        return len(self.tokens) == 1 and self.tokens[0].kind == "num"

    @property
    def has_operator(self) -> bool:
        return any(t.kind in ("op", "func") for t in self.tokens[1:]) or (
            len(self.tokens) > 1 and self.tokens[0].kind == "func"
        )

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


def _decimals(tok: Token) -> int:
    text = tok.text.rstrip("% ")
    return len(text.split(".")[1]) if "." in text else 0


def _agree(value: Number, shown: Number, decimals: int | None) -> bool:
    """`shown` equals `value`, or is its rounding/truncation to the `decimals` shown."""
    if value == shown:
        return True
    if isinstance(value, float) or isinstance(shown, float):
        if math.isclose(float(value), float(shown), rel_tol=1e-9, abs_tol=1e-12):
            return True
    if decimals is None:
        return False
    scale = 10**decimals
    exact_at_shown = isinstance(value, Fraction) and (value * scale).denominator == 1
    return not exact_at_shown and abs(value - shown) < Fraction(1, scale)


def _pair_ok(left: _Side, right: _Side, rounded: set[Number]) -> bool:
    """Whether `left = right` holds (either reading of `%` if present).

    `rounded` collects written values that were roundings (`100/3 = 33.33`); a later step that uses
    one (`33.33 * 3 = 100`) may be off by what the rounding carries.
    """
    scales = (True, False) if any(t.percent for t in left.tokens + right.tokens) else (True,)
    for scale in scales:
        lv, rv = evaluate(left.tokens, scale), evaluate(right.tokens, scale)
        for computed, shown_side, shown in ((lv, right, rv), (rv, left, lv)):
            if shown_side.bare and _agree(computed, shown, _decimals(shown_side.tokens[0])):
                if computed != shown:
                    rounded.add(shown)
                return True
        if not left.bare and not right.bare and _agree(lv, rv, None):
            return True
        # A running chain `5 + 3 = 8 * 2 = 16`: the right side starts with the left's value.
        first = right.tokens[0]
        if (
            first.kind == "num"
            and len(right.tokens) > 1
            and right.tokens[1].kind == "op"
            and right.tokens[1].text in "+-*/"
        ):
            shown = first.value / 100 if first.percent and scale else first.value
            if _agree(lv, shown, _decimals(first)):
                return True
    return _within_carried_rounding(left, right, rounded)


def _within_carried_rounding(left: _Side, right: _Side, rounded: set[Number]) -> bool:
    """Whether the sides differ by no more than the earlier roundings they use can explain."""
    tolerance: Number = 0
    for side in (left, right):
        for k, tok in enumerate(side.tokens):
            if tok.kind == "num" and not tok.percent and tok.value in rounded:
                unit = Fraction(1, 10 ** _decimals(tok))
                bumped = side.tokens[:k] + [replace(tok, value=tok.value + unit)] + side.tokens[k + 1 :]
                tolerance += abs(evaluate(bumped) - evaluate(side.tokens))
    if not tolerance:
        return False
    for side in (left, right):
        if side.bare and side.tokens[0].value not in rounded:
            tolerance += Fraction(1, 2 * 10 ** _decimals(side.tokens[0]))  # its own rounding
    return abs(evaluate(left.tokens) - evaluate(right.tokens)) <= tolerance


def _split_sides(run: list[Token]) -> list[list[Token]]:
    sides: list[list[Token]] = [[]]
    for tok in run:
        if tok.kind == "eq":
            sides.append([])
        else:
            sides[-1].append(tok)
    return sides


def _balance(tokens: list[Token], first: bool, last: bool) -> list[Token]:
    """Drop an unmatched `(` opening the first side or `)` closing the last side of a chain."""
    depth = 0
    for t in tokens:
        depth += (t.kind == "lp") - (t.kind == "rp")
    while first and depth > 0 and tokens and tokens[0].kind == "lp":
        tokens, depth = tokens[1:], depth - 1
    while last and depth < 0 and tokens and tokens[-1].kind == "rp":
        tokens, depth = tokens[:-1], depth + 1
    return tokens


def _check_run(
    sides: list[list[Token]], clean_ends: bool, rounded: set[Number], results: list[Number] | None
) -> tuple[int, str | None]:
    """Check adjacent sides of one chain; returns (checked pairs, first failure or None) and adds
    the values of the sides of correct pairs to `results` (when given)."""
    checked = 0
    usable: list[_Side | None] = []
    for k, tokens in enumerate(sides):
        tokens = _balance(tokens, k == 0, k == len(sides) - 1)
        ok = 0 < len(tokens) <= _MAX_SIDE_TOKENS
        if ok and k == 0 and not clean_ends and tokens[0].kind == "op":
            ok = False  # `apples - 3 = 7`: the left operand is prose
        if ok and tokens[-1].kind == "op":
            ok = False
        usable.append(_Side(tokens) if ok else None)
    for left, right in zip(usable, usable[1:]):
        if left is None or right is None:
            continue
        if not (left.has_operator or right.has_operator or clean_ends):
            continue  # `Day 1 = 5`: two written numbers are a label, not a computation
        try:
            ok = _pair_ok(left, right, rounded)
        except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
            continue
        if not ok and _mixes_units(left.tokens + right.tokens):
            continue  # `4 pounds - 6 ounces = 58 ounces`: a conversion the checker does not do
        checked += 1
        if not ok:
            return checked, f"{left.text} = {right.text}"
        if results is not None:
            results.extend(_side_values(left) + _side_values(right))
    return checked, None


def _side_values(side: _Side) -> list[Number]:
    """What a side of a correct equality establishes: its value, and a written number as written
    (`30% * 50% = 15%` establishes 0.15 and 15)."""
    if side.bare:
        return [side.tokens[0].value, evaluate(side.tokens)]
    try:
        return [evaluate(side.tokens)]
    except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
        return []  # true only under the other reading of `%`


_UNIT_FAMILIES = {
    unit: family
    for family, units in {
        "length": "inch inches foot feet ft yard yards mile miles meter meters metre metres cm km mm centimeters",
        "time": "second seconds minute minutes min hour hours hr hrs day days week weeks month months year years",
        "weight": "ounce ounces oz pound pounds lb lbs gram grams kg kilograms ton tons",
        "money": "cent cents dollar dollars",
        "volume": "cup cups pint pints quart quarts gallon gallons liter liters litre litres ml milliliters",
    }.items()
    for unit in units.split()
}


def _mixes_units(tokens: list[Token]) -> bool:
    """Whether dropped units include two different units of one quantity (pounds and ounces).

    A rate unit (`ml/liter`) is an explicit conversion factor: the step is then checked literally.
    """
    if any("/" in (t.unit or "") for t in tokens):
        return False
    seen: dict[str, set[str]] = {}
    for t in tokens:
        for word in (t.unit or "").split():
            family = _UNIT_FAMILIES.get(word)
            if family:
                seen.setdefault(family, set()).add(word.rstrip("s"))
    return any(len(units) > 1 for units in seen.values())


class StepCheck(NamedTuple):
    """What checking a solution's steps found."""

    checked: int  # equalities checked
    bad: str | None  # the first wrong one
    results: list[Number] | None  # if asked for: the values of the last line with a correct step


def _on_line(values: dict[int, list[Number]] | None, line: int) -> list[Number] | None:
    """The list collecting the values established on `line` (None: not collecting)."""
    return None if values is None else values.setdefault(line, [])


def _last_line(values: dict[int, list[Number]] | None) -> list[Number] | None:
    """The values established on the last line that established any."""
    if values is None:
        return None
    lines = [line for line, found in values.items() if found]
    return values[max(lines)] if lines else []


def check_steps(solution: str, problem: str = "", collect: bool = False) -> StepCheck:
    """Check every calculator annotation and arithmetic equation chain; `collect`: also gather the
    values that the correct ones on the solution's last line holding any establish (its final
    computation; lines as in the solution, LaTeX chains continued with `\\\\` counting as one)."""
    checked = 0
    rounded: set[Number] = set()
    values: dict[int, list[Number]] | None = {} if collect else None
    line, counted = 0, 0  # the line of an annotation (newlines before it), counted when collecting
    for m in ANNOTATION.finditer(solution):
        if values is not None:
            line, counted = line + solution.count("\n", counted, m.start()), m.start()
        body = m.group(1)
        if "=" not in body:
            continue
        sides = _split_sides(tokenize(delatex(body) if "\\" in body else body))
        if any(t.kind in ("word", "other") for side in sides for t in side):
            continue
        n, bad = _check_run(sides, True, rounded, _on_line(values, line))
        checked += n
        if bad:
            return StepCheck(checked, f"calculator step <<{body}>>", _last_line(values))
    if _CUSTOM_NOTATION.search(problem):
        return StepCheck(checked, None, _last_line(values))
    for number, text in enumerate(_text_for_steps(solution).split("\n")):
        if "=" not in text:
            continue
        tokens = tokenize(text)
        if len(tokens) > 1 and tokens[0].kind == "op" and tokens[1].spaced:  # a bullet: `- 5 + 3 = 8`
            tokens = tokens[1:]
            tokens[0].spaced = True
        for run, start_dirty, end_dirty in _runs(tokens):
            sides = _split_sides(run)
            if len(sides) < 2:
                continue
            if start_dirty:
                sides[0] = []
            if end_dirty:
                sides[-1] = []
            n, bad = _check_run(sides, False, rounded, _on_line(values, number))
            checked += n
            if bad:
                return StepCheck(checked, f"equation {bad}", _last_line(values))
    return StepCheck(checked, None, _last_line(values))
