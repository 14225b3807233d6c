"""Tokens and a safe arithmetic evaluator: exact rationals, floats only for irrational roots; never `eval`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from synthesis.math.latex import MAX_NUMBER_CHARS, NotArithmetic, delatex

Number = Fraction | float

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
# Bigger intermediate results are not checked (and cannot hang the verifier); a value this size
# still has fewer than Python's 4,300 decimal digits, so it can be printed in a verdict's detail.
_MAX_BITS = 14_000


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
        if kind == "num" and (re.match(r"0\d", text) or len(text) > MAX_NUMBER_CHARS):
            tok.kind = "word"  # `0900`: a clock time or code, not a quantity; or too long to read
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


def _bounded(value: Number) -> Number:
    """`value`, unless an exact value's numerator or denominator is over `_MAX_BITS` bits (a sum of
    many small powers has a denominator that grows with each term: each sum cost more than the last)."""
    if (
        isinstance(value, Fraction)
        and max(value.numerator.bit_length(), value.denominator.bit_length()) > _MAX_BITS
    ):
        raise NotArithmetic("number too large to check")
    return value


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
            value = _bounded(value + rhs if tok.text == "+" else value - rhs)
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
            value = _bounded(value)
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
