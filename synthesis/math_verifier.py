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
   (fractions, decimals, percentages, thousands separators, currency, units, number words), then
   structures (tuples, intervals, unordered answer lists, `\\pm`, ratios, matrices), then closed forms
   evaluated numerically (`\\frac{\\sqrt{3}}{2}`), and only then sympy in a worker process with a
   wall-clock timeout (sympy can hang; the worker is killed and restarted).

Without a reference answer a solution is admitted only if an answer can be extracted and at least one
step was checked and all checked steps are correct: otherwise nothing would have been verified.

Reasons: `wrong_answer`, `bad_step`, `no_answer`, `unparseable`.
"""

from __future__ import annotations

import json
import math
import os
import re
import select
import subprocess
import sys
import threading
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from pipeline.document import KEEP, Document, Verdict, reject

REASONS = ("wrong_answer", "bad_step", "no_answer", "unparseable")

Number = Fraction | float


class NotArithmetic(ValueError):
    """The text is not a (safely evaluable) arithmetic expression."""


# ---------------------------------------------------------------------------------------------
# LaTeX to plain arithmetic syntax
# ---------------------------------------------------------------------------------------------

_FRAC_COMMANDS = ("\\dfrac", "\\tfrac", "\\cfrac", "\\frac")
_MAX_NESTING = 40  # deeper LaTeX or parentheses are not read (no real step nests this deep)
_MAX_SIDE_TOKENS = 400
_DROPPED_COMMANDS = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|limits)(?![A-Za-z])")
_SPACING = re.compile(r"(?<!\\)\\[,;: ]|~|\\quad|\\qquad")


def _read_arg(s: str, i: int) -> tuple[str, int]:
    """One LaTeX argument at `s[i:]`: a `{...}` group (nested), a command, or one character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise NotArithmetic("missing argument")
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            if s[j] == "{":
                depth += 1
            elif s[j] == "}":
                depth -= 1
                if depth == 0:
                    return s[i + 1 : j], j + 1
        raise NotArithmetic("unbalanced braces")
    if s[i] == "\\":
        m = re.match(r"\\[A-Za-z]+", s[i:])
        if m:
            return m.group(), i + m.end()
    return s[i], i + 1


def delatex(s: str, mixed: bool = True, _depth: int = 0) -> str:
    """Rewrite LaTeX arithmetic (`\\frac`, `\\sqrt`, `\\cdot`, `^{}`, groups) in plain syntax.

    `2\\frac{1}{2}` becomes the mixed number `(2+1/2)` if `mixed`, else an ambiguous `\\juxt`
    (it is a product in `80\\frac{1}{2}\\frac{1}{5}`). Unknown commands are left in place.
    """
    if "\\" not in s and "{" not in s:
        return s
    if _depth > _MAX_NESTING:
        raise NotArithmetic("nesting too deep")
    s = _DROPPED_COMMANDS.sub("", s)
    s = _SPACING.sub(" ", s.replace("\\!", "")).replace("{,}", ",")
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            frac = next((f for f in _FRAC_COMMANDS if s.startswith(f, i)), None)
            if frac and not s[i + len(frac) : i + len(frac) + 1].isalpha():
                num, i = _read_arg(s, i + len(frac))
                den, i = _read_arg(s, i)
                whole = re.search(r"(?<![\d.^_])(\d+)$", "".join(out[-12:]))
                if whole and not mixed:
                    out.append(" \\juxt ")
                if whole and mixed and num.strip().isdigit() and den.strip().isdigit():
                    digits = whole.group(1)
                    del out[len(out) - len(digits) :]
                    out.append(f"({digits}+{num.strip()}/{den.strip()})")
                else:
                    out.append(f"(({delatex(num, mixed, _depth + 1)})/({delatex(den, mixed, _depth + 1)}))")
                continue
            if s.startswith("\\sqrt", i) and not s[i + 5 : i + 6].isalpha():
                i += 5
                index = None
                if s[i : i + 1] == "[":
                    close = s.find("]", i)
                    if close < 0:
                        raise NotArithmetic("unbalanced \\sqrt[")
                    index, i = s[i + 1 : close], close + 1
                arg, i = _read_arg(s, i)
                if index is None:
                    out.append(f"sqrt({delatex(arg, mixed, _depth + 1)})")
                else:
                    out.append(
                        f"(({delatex(arg, mixed, _depth + 1)})^(1/({delatex(index, mixed, _depth + 1)})))"
                    )
                continue
            m = re.match(r"\\([A-Za-z]+)", s[i:])
            if m:
                name = m.group(1)
                out.append({"cdot": "*", "times": "*", "div": "/", "ast": "*"}.get(name, m.group()))
                if name not in ("cdot", "times", "div", "ast"):
                    out.append(" ")  # a command never glues to what follows
                i += m.end()
                continue
            if s[i + 1 : i + 2] in ("{", "}"):  # set braces are not grouping
                out.append(" \\set ")
                i += 2
                continue
            out.append(s[i : i + 2])
            i += 2
            continue
        out.append({"{": "(", "}": ")"}.get(c, c))
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Tokens and a safe arithmetic evaluator (exact rationals; floats only for irrational roots)
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.\d+)?(?![\d])|\.\d+)(?P<pct>\s*%)?"
    r"|(?P<op>\*\*|[-+*/^×÷·−–])"
    r"|(?P<lp>\()|(?P<rp>\))"
    r"|(?P<eq>=)"
    r"|(?P<word>\\[A-Za-z]+|[A-Za-z]+)"
    r"|(?P<skip>\$)"
    r"|(?P<ws>[ \t\r]+)"
    r"|(?P<other>\.\.\.|.)",
    re.S,
)
_OP_ALIASES = {"**": "^", "×": "*", "÷": "/", "·": "*", "−": "-", "–": "-"}
_MAX_BITS = 20_000  # bigger intermediate results are not checked (and cannot hang the verifier)


@dataclass(slots=True)
class Token:
    kind: str  # num, op, lp, rp, eq, func, word, opword (`of` between numbers), other
    text: str
    spaced: bool  # whitespace (or `$`) before it
    value: Fraction | None = None
    percent: bool = False
    unit: str | None = None  # unit words dropped after the number (`4 houses * 3 = 12`)


def tokenize(line: str) -> list[Token]:
    """Split one line into tokens; `x` between two operands becomes a multiplication."""
    tokens: list[Token] = []
    spaced = True
    for m in _TOKEN.finditer(line):
        kind = m.lastgroup
        if kind in ("ws", "skip"):
            spaced = True
            continue
        if kind == "pct":
            kind = "num"
        text = m.group()
        tok = Token(kind, text, spaced)
        if kind == "num" and re.match(r"0\d", text):
            tok.kind = "word"  # `0900`: a clock time or code, not a quantity
        elif kind == "num":
            tok.value = Fraction(m.group("num").replace(",", ""))
            tok.percent = m.group("pct") is not None
        elif kind == "op":
            tok.text = _OP_ALIASES.get(text, text)
        elif kind == "word" and text == "sqrt":
            tok.kind = "func"
        tokens.append(tok)
        spaced = False
    tokens = _drop_units(tokens)
    for i in range(1, len(tokens) - 1):
        tok = tokens[i]
        before, after = tokens[i - 1], tokens[i + 1]
        between_operands = before.kind in ("num", "rp") and after.kind in ("num", "lp", "func")
        if tok.kind == "word" and tok.text in ("x", "X") and between_operands:
            tok.kind, tok.text = "op", "*"
        elif tok.kind == "word" and tok.text.lower() in _OPERATOR_WORDS and between_operands:
            tok.kind = "opword"  # `10% of 150`, `3 times 5`: the numbers are factors, not sides
    return tokens


# Words that act as operators between two numbers (`10% of 150`, `3 times 5`).
_OPERATOR_WORDS = frozenset("of times plus minus by over per and divided multiplied".split())
# Words that label a number rather than measure it (`Week 2 sales * 3`).
_LABEL_WORDS = frozenset(
    "day week month year step part round level grade chapter page test game phase stage floor row room box"
    " group team quarter lap trip".split()
)


_NOT_UNITS = _OPERATOR_WORDS | frozenset(
    "because so then thus hence therefore which that is are was were be the to for from in on at with if when"
    " since as this it its he she they we you his her their our total each every more less left".split()
)


def _is_unit_word(tok: Token) -> bool:
    if tok.kind != "word":
        return False
    if tok.text == "\\text":
        return True
    return len(tok.text) >= 2 and tok.text.isalpha() and tok.text.lower() not in _NOT_UNITS


def _drop_units(tokens: list[Token]) -> list[Token]:
    """Remove unit words inside an expression: `4 houses * 3 gnomes = 12`, `$60/large painting x 8`.

    Only where the number is part of an expression (an operator follows the words, or precedes the
    number and `=` follows) and the number is not a label (`Week 2 sales`); `10 percent` becomes 10%.
    """
    out: list[Token] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        out.append(tok)
        i += 1
        if tok.kind != "num":
            continue
        j = i
        while j < n:
            if _is_unit_word(tokens[j]):
                j += 1
            elif tokens[j].text == "/" and j + 1 < n and _is_unit_word(tokens[j + 1]):
                j += 2
            else:
                break
        if j == i or j == n or sum(t.kind == "word" for t in tokens[i:j]) > 2:
            continue
        before = out[-2] if len(out) >= 2 else None
        after = tokens[j]
        if (
            before is not None
            and before.kind == "word"
            and (before.text[:1].isupper() or before.text.lower() in _LABEL_WORDS)
        ):
            continue
        if after.text == "/" and j + 1 < n and tokens[j + 1].kind == "num":
            continue  # `5 minutes/100 meters`: a rate per quantity, not a division to check
        operator_follows = after.kind == "op" or (after.kind == "word" and after.text in ("x", "X"))
        operator_before = before is not None and (before.kind == "op" or before.text in ("x", "X"))
        if operator_follows or (operator_before and after.kind == "eq"):
            if after.text == "^":
                continue  # `5 \\text{ cm}^2`: the power belongs to the unit
            if any(t.text.lower() == "percent" for t in tokens[i:j]):
                tok.percent = True
            tok.unit = " ".join(t.text.lower() for t in tokens[i:j])
            after.spaced = True
            i = j
    return out


def _exact_sqrt(value: Fraction) -> Number:
    if value < 0:
        raise NotArithmetic("square root of a negative number")
    num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
    if num * num == value.numerator and den * den == value.denominator:
        return Fraction(num, den)
    return math.sqrt(value)


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, Fraction) and exponent.denominator == 1 and isinstance(base, Fraction):
        e = exponent.numerator
        size = max(abs(base.numerator), abs(base.denominator)).bit_length()
        if abs(e) * size > _MAX_BITS:
            raise NotArithmetic("power too large to check")
        if base == 0 and e < 0:
            raise NotArithmetic("division by zero")
        return base**e
    if isinstance(exponent, Fraction) and isinstance(base, Fraction) and exponent == Fraction(1, 2):
        return _exact_sqrt(base)
    try:
        result = float(base) ** float(exponent)
    except (OverflowError, ZeroDivisionError) as exc:
        raise NotArithmetic(str(exc)) from None
    if isinstance(result, complex) or math.isinf(result) or math.isnan(result):
        raise NotArithmetic("not a real number")
    return result


class _Parser:
    """Recursive descent over tokens: + - * / ^, parentheses, sqrt, implicit `2(3)`, percentages."""

    def __init__(self, tokens: list[Token], percent_scale: bool) -> None:
        self.tokens = tokens
        self.i = 0
        self.percent_scale = percent_scale

    def parse(self) -> Number:
        if not self.tokens:
            raise NotArithmetic("empty")
        value = self.expr()
        if self.i != len(self.tokens):
            raise NotArithmetic(f"unexpected {self.tokens[self.i].text!r}")
        return value

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def expr(self) -> Number:
        value = self.term()
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.text in "+-":
            self.i += 1
            rhs = self.term()
            value = value + rhs if tok.text == "+" else value - rhs
        return value

    def term(self) -> Number:
        value = self.factor()
        while (tok := self.peek()) is not None:
            if tok.kind == "op" and tok.text in "*/":
                self.i += 1
                rhs = self.factor()
                if tok.text == "*":
                    value = value * rhs
                elif rhs == 0:
                    raise NotArithmetic("division by zero")
                else:
                    value = value / rhs
            elif tok.kind in ("lp", "func") and not tok.spaced:  # implicit product: 2(3), 2sqrt(3)
                value = value * self.factor()
            else:
                break
            if isinstance(value, Fraction) and value.numerator.bit_length() > _MAX_BITS:
                raise NotArithmetic("number too large to check")
        return value

    def factor(self) -> Number:
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in "+-":
            self.i += 1
            value = self.factor()
            return -value if tok.text == "-" else value
        return self.power()

    def power(self) -> Number:
        base = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "^":
            self.i += 1
            return _power(base, self.factor())
        return base

    def atom(self) -> Number:
        tok = self.peek()
        if tok is None:
            raise NotArithmetic("unexpected end")
        self.i += 1
        if tok.kind == "num":
            value = tok.value / 100 if tok.percent and self.percent_scale else tok.value
            rest = self.tokens[self.i : self.i + 3]
            if (  # `500 / 2/5`: an unspaced fraction after a spaced operator is one number
                len(rest) >= 2
                and rest[0].kind == "op"
                and rest[0].text == "/"
                and not rest[0].spaced
                and rest[1].kind == "num"
                and not rest[1].spaced
                and tok.spaced
                and not (len(rest) == 3 and rest[2].kind == "op" and rest[2].text == "^")
                and rest[1].value != 0
            ):
                self.i += 2
                den = rest[1].value / 100 if rest[1].percent and self.percent_scale else rest[1].value
                return value / den
            return value
        if tok.kind == "lp":
            value = self.expr()
            close = self.peek()
            if close is None or close.kind != "rp":
                raise NotArithmetic("unbalanced parenthesis")
            self.i += 1
            return value
        if tok.kind == "func":
            arg = self.atom()
            if isinstance(arg, float):
                if arg < 0:
                    raise NotArithmetic("square root of a negative number")
                return math.sqrt(arg)
            return _exact_sqrt(arg)
        raise NotArithmetic(f"unexpected {tok.text!r}")


def evaluate(tokens: list[Token], percent_scale: bool = True) -> Number:
    """Value of an arithmetic token list; raises NotArithmetic for anything else."""
    return _Parser(tokens, percent_scale).parse()


def evaluate_text(text: str) -> Number:
    """Value of a plain or LaTeX arithmetic expression such as `48/2`, `\\frac{3}{4}\\cdot 8`."""
    tokens = tokenize(delatex(text))
    if any(t.kind in ("eq", "word", "other") for t in tokens):
        raise NotArithmetic(f"not arithmetic: {text!r}")
    return evaluate(tokens)


# ---------------------------------------------------------------------------------------------
# Step checking
# ---------------------------------------------------------------------------------------------

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
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
    text = _ANNOTATION.sub("", text)
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


def _check_run(sides: list[list[Token]], clean_ends: bool, rounded: set[Number]) -> tuple[int, str | None]:
    """Check adjacent sides of one chain; returns (checked pairs, first failure or None)."""
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
    return checked, None


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


def check_steps(solution: str, problem: str = "") -> tuple[int, str | None]:
    """Check every calculator annotation and arithmetic equation chain.

    Returns (number of checked equalities, description of the first wrong one or None).
    """
    checked = 0
    rounded: set[Number] = set()
    for m in _ANNOTATION.finditer(solution):
        body = m.group(1)
        if "=" not in body:
            continue
        sides = _split_sides(tokenize(delatex(body) if "\\" in body else body))
        if any(t.kind in ("word", "other") for side in sides for t in side):
            continue
        n, bad = _check_run(sides, True, rounded)
        checked += n
        if bad:
            return checked, f"calculator step <<{body}>>"
    if _CUSTOM_NOTATION.search(problem):
        return checked, None
    for line in _text_for_steps(solution).split("\n"):
        if "=" not in line:
            continue
        tokens = tokenize(line)
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
            n, bad = _check_run(sides, False, rounded)
            checked += n
            if bad:
                return checked, f"equation {bad}"
    return checked, None


# ---------------------------------------------------------------------------------------------
# Final answer extraction
# ---------------------------------------------------------------------------------------------

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
_HASHES = re.compile(r"^[ \t]*####[ \t]*(.+?)[ \t]*$", re.M)
_PHRASE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer)\s*(?:is|would\s+be|will\s+be|should\s+be|=|:)\s*:?\s*(.+)",
    re.I,
)
_PHRASE_CUT = re.compile(
    r"\.(?:\s|$)|;|\n|,\s+(?:which|so|since|because|as|and\s+(?:this|that|so)|but|that)\b", re.I
)


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` (nested braces), or `\\boxed 5`."""
    matches = list(_BOXED.finditer(text))
    for m in reversed(matches):
        i = m.end()
        if i < len(text) and text[i] == "{":
            depth = 0
            for j in range(i, len(text)):
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        return text[i + 1 : j].strip()
            continue
        tail = re.match(r"[^\s$]+", text[i:])
        if tail:
            return tail.group()
    return None


def extract_answer(solution: str) -> str | None:
    """The final answer written in a solution, or None when it states none.

    The last-written of `\\boxed{}`, `#### x` and an answer phrase wins (a solution may box an
    intermediate result and state its answer after it).
    """
    boxed_at = max((m.start() for m in _BOXED.finditer(solution)), default=-1)
    hashes = list(_HASHES.finditer(solution))
    if hashes and hashes[-1].start() > boxed_at:
        return hashes[-1].group(1)
    for m in reversed(list(_PHRASE.finditer(solution))):
        if m.start() < boxed_at or "\\boxed" in m.group(1):
            break
        tail = _phrase_answer(m.group(1))
        # After a boxed answer, only a phrase stating math overrides it (not "our answer is correct").
        if tail and (boxed_at < 0 or re.search(r"[\d$\\]", tail)):
            return tail
    return last_boxed(solution)


def _phrase_answer(text: str) -> str:
    """The answer stated after "the answer is": up to the end of its sentence or clause."""
    tail = text.strip()
    while inner := _PHRASE.search(tail):  # `Final Answer: The final answer is 72.`
        tail = inner.group(1).strip()
    cut = _PHRASE_CUT.search(tail)
    return (tail[: cut.start()] if cut else tail).strip().strip("*").strip()


def last_number(solution: str) -> str | None:
    """The last number written in the solution (a fallback when it states no answer explicitly)."""
    numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+", _ANNOTATION.sub("", solution))
    return numbers[-1].rstrip(",") if numbers else None


# ---------------------------------------------------------------------------------------------
# Answer normalisation and equivalence
# ---------------------------------------------------------------------------------------------

_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
        " sixteen seventeen eighteen nineteen".split()
    )
}
_WORD_NUMBERS.update(
    {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
)
_WORD_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_UNIT_TAIL = re.compile(r"^(.*?\d\)?)\s+(?:[A-Za-z]{2,}[A-Za-z.'’]*\s*)+(?:\^?\d)?$")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_SIMPLE_FRACTION = re.compile(r"^([+-]?)\(*([+-]?\d+(?:\.\d+)?)\)*/\(*(\d+(?:\.\d+)?)\)*$")
_CHOICE = re.compile(r"^\(?([A-Ea-e])\)?$")


def words_to_number(text: str) -> int | None:
    """`twenty-one` → 21, `one hundred five` → 105; None if `text` is not a number in words."""
    words = text.lower().replace("-", " ").replace(" and ", " ").split()
    if not words:
        return None
    total = current = 0
    for w in words:
        if w in _WORD_NUMBERS:
            current += _WORD_NUMBERS[w]
        elif w in _WORD_SCALES:
            current = max(current, 1) * _WORD_SCALES[w]
            if _WORD_SCALES[w] >= 1000:
                total, current = total + current, 0
        else:
            return None
    return total + current


@dataclass(frozen=True, slots=True)
class Answer:
    """A normalised final answer: its string, its exact value when it is a plain number."""

    text: str
    percent: bool = False
    value: Fraction | None = None


def normalize_answer(raw: str) -> Answer:
    """Strip presentation (math delimiters, `\\text` units, currency, degrees, separators, `x =`)."""
    s = raw.strip().replace("−", "-")
    s = re.sub(r"^\$+|\$+$|^\\[(\[]|\\[)\]]$", "", s).strip()
    s = s.replace("\\$", "").replace("$", "").replace("**", "")
    s = _DROPPED_COMMANDS.sub("", s)
    s = _SPACING.sub(" ", s)
    s = re.sub(r"\\[dtc]frac", r"\\frac", s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|\\degree|°|\\circ", "", s)
    s = re.sub(r"\\(?:text|textbf|textit|mbox|mathrm|textrm)\s*\{([^{}]*)\}", r" \1 ", s)
    s = s.replace("{,}", ",").replace("\\!", "").strip()
    s = re.sub(r"(?<![\d.])(\d+)\s+(?=\\frac\{?\d+\}?\{?\d+\}?$)", r"\1", s)  # `3 \frac{3}{8}`: mixed
    s = re.sub(r"(?<=\d)\\?,(?=\d{3}\b)", ",", s)
    percent = False
    if re.search(r"\\?%|\bpercent\b", s):
        percent = True
        s = re.sub(r"\\?%|\bpercent(age)?\b", "", s).strip()
    s = s.rstrip(".").strip()
    m = re.match(r"^[A-Za-z](?:_\{?\w+\}?)?\s*(?:=|\\in\b)\s*([^=]+)$", s)
    if m:
        s = m.group(1).strip()
    elif s.count("=") == 1 and _is_arithmetic(s.split("=")[0]):  # `2+3=5`: the computed value
        s = s.split("=")[1].strip()
    if ", " not in s and not re.search(r"[(\[]", s):  # `5,525` (not a list or interval): thousands
        s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)
    if re.search(r"\d", s):
        s = re.sub(r"\s*,?\s*\band\b\s*", ", ", s)  # `19 and 43`: a list
    m = _UNIT_TAIL.match(s)
    if m and re.search(r"\d", m.group(1)) and not re.search(r"[A-Za-z\\]", m.group(1)):
        s = m.group(1).strip()
    s = re.sub(r"^(?:USD|Rs\.?|€|£|¥)\s*", "", s).strip()
    s = re.sub(r"\s+", " ", s).strip()
    words = s.split(" ")
    numbers = [w for w in words if re.fullmatch(r"-?\d+(?:\.\d+)?", w)]
    if (
        len(numbers) == 1
        and len(words) > 1
        and all(w in numbers or re.fullmatch(r"[A-Za-z][A-Za-z'’]+", w) for w in words)
    ):
        s = numbers[0]  # `She sold 72 clips`: prose around one number
    if re.fullmatch(r"[A-Za-z][A-Za-z \-]*", s):
        n = words_to_number(s)
        if n is not None:
            return Answer(str(n), percent, Fraction(n))
    return Answer(s, percent, _plain_value(s))


def _is_arithmetic(text: str) -> bool:
    try:
        evaluate_text(text)
    except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
        return False
    return True


def _plain_value(s: str) -> Fraction | None:
    """Exact value of a plain number, `a/b`, `\\frac{a}{b}`, or mixed number; else None (cheap)."""
    compact = s.replace(" ", "")
    if _PLAIN_NUMBER.match(compact):
        return Fraction(compact)
    m = _SIMPLE_FRACTION.match(compact)
    if m:
        den = Fraction(m.group(3))
        if den == 0:
            return None
        value = Fraction(m.group(2)) / den
        return -value if m.group(1) == "-" else value
    if "\\frac" in compact and re.fullmatch(r"[-+]?\d*\\frac\{?\d+\}?\{?\d+\}?", compact):
        try:
            value = evaluate_text(compact)
        except NotArithmetic:
            return None
        return value if isinstance(value, Fraction) else None
    return None


def _split_top_level(s: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return [p.strip() for p in parts]


def _matching_close(s: str) -> int:
    depth = 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


@dataclass(frozen=True, slots=True)
class _Structure:
    """A compound answer: an ordered tuple/interval (with its brackets) or an unordered list."""

    open: str
    items: tuple[str, ...]
    close: str
    ordered: bool


def _structure(s: str) -> _Structure | None:
    s = s.strip()
    matrix = re.fullmatch(r"\\begin\{[pbvB]?matrix\}(.*)\\end\{[pbvB]?matrix\}", s, re.S)
    if matrix:
        rows = [r for r in re.split(r"\\\\", matrix.group(1)) if r.strip()]
        return _Structure("M", tuple(c.strip() for r in rows for c in r.split("&")), str(len(rows)), True)
    if s.count("\\pm") == 1:  # `1 \pm \sqrt{19}`: both solutions, in any order
        a, b = (p.strip() for p in s.split("\\pm"))
        return _Structure("", (f"{a}+{b}", f"{a}-{b}") if a else (b, f"-{b}"), "", False)
    if re.fullmatch(r"[\d.\s]+(?::[\d.\s]+)+", s):  # a ratio `3:1`
        return _Structure(":", tuple(p.strip() for p in s.split(":")), ":", True)
    if "\\cup" in s:
        return _Structure("U", tuple(p.strip() for p in s.split("\\cup")), "U", True)
    set_braces = re.fullmatch(r"\\\{(.*)\\\}", s)
    if set_braces:
        return _Structure("{", tuple(_split_top_level(set_braces.group(1))), "}", False)
    if s[:1] in "([" and s[-1:] in ")]" and _matching_close(s) in (len(s) - 1, -1):
        items = _split_top_level(s[1:-1])
        if len(items) > 1:
            return _Structure(s[0], tuple(items), s[-1], True)
    items = _split_top_level(s)
    if len(items) > 1 and all(items):
        return _Structure("", tuple(items), "", False)
    return None


def _text_key(s: str) -> str:
    m = _CHOICE.match(s.strip())
    if m:
        return m.group(1).lower()
    return re.sub(r"[\s{}\\]|\b(?:text|mathrm)\b", "", s).lower()


def to_sympy_source(s: str) -> str:
    """A string `sympy.parse_expr` understands, from a normalised LaTeX answer."""
    s = delatex(s)
    s = re.sub(r"\\(?:pi)\b", " pi ", s)
    s = re.sub(r"\\infty\b|∞", " oo ", s)
    s = re.sub(r"\\ln\b", " log ", s)
    s = re.sub(r"\\(sin|cos|tan|cot|sec|csc|log|exp|arcsin|arccos|arctan)\b", r" \1 ", s)
    s = s.replace("π", " pi ").replace("√", "sqrt")
    if "\\" in s:
        raise NotArithmetic(f"unknown command in {s!r}")
    return s.replace("^", "**")


class _AnswerUnparseable(Exception):
    """An answer that cannot be read as math (detail in the message)."""


class _SympyWorker:
    """sympy equivalence in a child process that is killed (and restarted) when it overruns.

    A plain `python -c` child speaking JSON lines: no dependence on multiprocessing start methods
    or on the caller's `__main__`, and it exits when its stdin closes (the parent went away).
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from synthesis.math_verifier import sympy_worker_loop; sympy_worker_loop()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        if not _readable(proc.stdout, 120) or proc.stdout.readline().strip() != '"ready"':
            proc.kill()
            proc.wait()
            raise RuntimeError("sympy worker did not start")
        self._proc = proc

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc.stdin.close()
            self._proc.stdout.close()
        self._proc = None

    def equal(self, a: str, b: str) -> bool | str:
        """True/False, or a string saying why it could not be decided (timeout, parse error)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            self._proc.stdin.write(json.dumps([a, b]) + "\n")
            self._proc.stdin.flush()
            if _readable(self._proc.stdout, self.timeout_s):
                line = self._proc.stdout.readline()
                if line:
                    return json.loads(line)
            self.stop()
            return f"sympy timed out after {self.timeout_s}s"


def _readable(stream, timeout_s: float) -> bool:
    return bool(select.select([stream], [], [], timeout_s)[0])


def sympy_worker_loop() -> None:  # pragma: no cover - runs in the child process
    """The worker's main loop: one JSON `[a, b]` per line in, one JSON result per line out."""
    import sympy  # noqa: F401  (paid once, before "ready")

    print('"ready"', flush=True)
    for line in sys.stdin:
        a, b = json.loads(line)
        try:
            result = sympy_equal(a, b)
        except Exception as exc:  # noqa: BLE001 - any sympy failure is an undecidable comparison
            result = f"sympy could not compare: {type(exc).__name__}"
        print(json.dumps(result), flush=True)


def sympy_equal(a: str, b: str) -> bool | str:
    """Symbolic equivalence of two sympy-source strings (runs inside the worker process)."""
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    transformations = standard_transformations + (implicit_multiplication_application, convert_xor)
    names = {"e": sympy.E, "i": sympy.I, "pi": sympy.pi, "oo": sympy.oo}

    def parse(src: str):
        if "=" in src:
            lhs, rhs = src.split("=", 1)
            return parse(lhs) - parse(rhs)
        return parse_expr(src, local_dict=names, transformations=transformations, evaluate=True)

    try:
        y = parse(b)
    except Exception:  # noqa: BLE001 - a reference sympy cannot read was already compared as text
        return False
    try:
        x = parse(a)
    except Exception as exc:  # noqa: BLE001
        return f"unparseable: {type(exc).__name__}"
    if x == y:
        return True
    diff = sympy.simplify(x - y)
    if diff == 0:
        return True
    if not diff.free_symbols:
        scale = sympy.Max(1, sympy.Abs(sympy.N(y, 30)))
        return bool(sympy.Abs(sympy.N(diff, 30)) <= scale / 10**9)
    return False


class MathVerifier:
    """Admit a math candidate only if its final answer matches and every checkable step is right.

    `sympy_timeout_s` bounds one symbolic comparison; `check_steps` turns step checking off;
    `keep_annotations` keeps `<<...>>` in the rendered training text; `last_number_fallback` reads
    the last number as the answer when a solution states none (only with a reference answer).
    """

    reasons = REASONS

    def __init__(
        self,
        sympy_timeout_s: float = 2.0,
        check_steps: bool = True,
        keep_annotations: bool = False,
        last_number_fallback: bool = True,
    ):
        self.sympy_timeout_s = sympy_timeout_s
        self.check_steps = check_steps
        self.keep_annotations = keep_annotations
        self.last_number_fallback = last_number_fallback
        self._worker = _SympyWorker(sympy_timeout_s)

    def __getstate__(self) -> dict:
        keys = ("sympy_timeout_s", "check_steps", "keep_annotations", "last_number_fallback")
        return {k: getattr(self, k) for k in keys}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def close(self) -> None:
        """Stop the sympy worker process (it is restarted on demand)."""
        self._worker.stop()

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
        checked = 0
        if self.check_steps:
            checked, bad = check_steps(solution, str(meta.get("problem") or ""))
            if bad:
                return reject("bad_step", bad)
        if reference is None:
            if checked == 0:
                return reject("no_answer", "no reference answer and no checkable step: nothing verified")
            return KEEP
        try:
            same = self.equivalent(raw, str(reference))
        except _AnswerUnparseable as exc:
            return reject("unparseable", f"answer {raw!r}: {exc}")
        if not same:
            return reject("wrong_answer", f"{raw!r} != {str(reference)!r}")
        return KEEP

    def render(self, doc: Document) -> str:
        """Training text: the problem, a blank line, the solution (calculator annotations removed)."""
        solution = doc.metadata.get("solution", "")
        if not self.keep_annotations:
            solution = _ANNOTATION.sub("", solution)
        return f"{doc.metadata.get('problem', '').strip()}\n\n{solution.strip()}"

    def equivalent(self, predicted: str, reference: str) -> bool:
        """Whether two final answers are the same up to presentation and symbolic equivalence."""
        return self._equivalent(normalize_answer(predicted), normalize_answer(reference))

    def _equivalent(self, a: Answer, b: Answer) -> bool:
        if a.text == b.text:
            return True
        if a.value is not None and b.value is not None:
            return _same_number(a, b)
        sa, sb = _structure(a.text), _structure(b.text)
        if sa is not None or sb is not None:
            return sa is not None and sb is not None and self._same_structure(sa, sb)
        if _text_key(a.text) == _text_key(b.text):
            return True
        textual = [bool(re.fullmatch(r"[A-Za-z][A-Za-z ,.'\-]*", x.text)) for x in (a, b)]
        if any(textual):
            return False
        numeric = _numeric_equal(a, b)
        if numeric is not None:
            return numeric
        try:
            sb_src = to_sympy_source(b.text)
        except NotArithmetic:
            return False  # a reference that is not math (`\overline{CD}`) was compared as text
        try:
            sa_src = to_sympy_source(a.text)
        except NotArithmetic as exc:
            raise _AnswerUnparseable(str(exc)) from None
        pairs = [(sa_src, sb_src)]
        if a.percent != b.percent:  # `25%` against `0.25`
            pct_a, pct_b = (f"({sa_src})/100", sb_src) if a.percent else (sa_src, f"({sb_src})/100")
            pairs.append((pct_a, pct_b))
        for x, y in pairs:
            result = self._worker.equal(x, y)
            if result is True:
                return True
            if isinstance(result, str):
                raise _AnswerUnparseable(result)
        return False

    def _same_structure(self, a: _Structure, b: _Structure) -> bool:
        if len(a.items) != len(b.items):
            return False
        if a.ordered or b.ordered:
            if (a.open, a.close) != (b.open, b.close):
                return False
            return all(self.equivalent(x, y) for x, y in zip(a.items, b.items))
        remaining = list(b.items)
        for x in a.items:
            match = next((k for k, y in enumerate(remaining) if self.equivalent(x, y)), None)
            if match is None:
                return False
            remaining.pop(match)
        return True


def _numeric_equal(a: Answer, b: Answer) -> bool | None:
    """Compare two closed-form numbers (`\\frac{\\sqrt{3}}{2}`, `2^{10}`) without sympy; None if
    either is not plain arithmetic. Irrational values agree when equal to 1e-12 relative."""
    try:
        x, y = evaluate_text(a.text), evaluate_text(b.text)
    except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
        return None
    candidates = [(x, y)]
    if a.percent != b.percent:
        candidates.append((x / 100, y) if a.percent else (x, y / 100))
    for u, v in candidates:
        if isinstance(u, Fraction) and isinstance(v, Fraction):
            if u == v:
                return True
        elif math.isclose(float(u), float(v), rel_tol=1e-12, abs_tol=1e-15):
            return True
    return False


def _same_number(a: Answer, b: Answer) -> bool:
    """Exact comparison; a percentage also matches its fraction (`25%` vs `0.25`)."""
    if a.value == b.value:
        return True
    if a.percent != b.percent:
        pct, other = (a, b) if a.percent else (b, a)
        return pct.value / 100 == other.value
    return False
