"""A small boolean language over scores, parsed without eval: `quality >= 0.5 and embedding_quality.toxic < 0.2`.

Grammar: expr := and ("or" and)*; and := not ("and" not)*; not := "not" not | "(" expr ")" | cmp;
cmp := operand OP operand, OP one of < <= > >= == !=, operand a score name (letters, digits,
`_`, `.`, `-`) or a number; at least one side is a score name. Parsed once into nested tuples.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any

OPS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
KEYWORDS = ("and", "or", "not")
# Longer expressions are refused: parsing and evaluation recurse once per level of nesting.
MAX_TOKENS = 200
_TOKEN = re.compile(
    r"\s*(?:(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<op><=|>=|==|!=|<|>)"
    r"|(?P<paren>[()])|(?P<name>[A-Za-z_][\w.\-]*))"
)


class ExprError(ValueError):
    """A syntax error, with the position in the expression."""


class MissingScore(KeyError):
    """A document lacks a score the expression reads."""


def tokenize(text: str) -> list[tuple[str, str]]:
    """The expression's tokens; ExprError past MAX_TOKENS (counted as they are read: a long
    expression is refused at once)."""
    tokens, pos, end = [], 0, len(text.rstrip())
    while pos < end:
        if len(tokens) == MAX_TOKENS:
            raise ExprError(f"expression too long: more than {MAX_TOKENS} tokens")
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExprError(f"unexpected {text[pos : pos + 40].strip()[:10]!r} at character {pos + 1}")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "name" and value in KEYWORDS:
            kind = value
        tokens.append((kind, value))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, kind: str) -> str:
        if self.peek() != kind:
            found = self.tokens[self.i][1] if self.i < len(self.tokens) else "end of expression"
            wanted = f"a comparison ({' '.join(OPS)})" if kind == "op" else kind
            raise ExprError(f"expected {wanted}, found {found!r}")
        self.i += 1
        return self.tokens[self.i - 1][1]

    def parse(self) -> tuple:
        if not self.tokens:
            raise ExprError("empty expression")
        node = self.disjunction()
        if self.i != len(self.tokens):
            raise ExprError(f"unexpected {self.tokens[self.i][1]!r} after a complete expression")
        return node

    def disjunction(self) -> tuple:
        node = self.conjunction()
        while self.peek() == "or":
            self.i += 1
            node = ("or", node, self.conjunction())
        return node

    def conjunction(self) -> tuple:
        node = self.negation()
        while self.peek() == "and":
            self.i += 1
            node = ("and", node, self.negation())
        return node

    def negation(self) -> tuple:
        if self.peek() == "not":
            self.i += 1
            return ("not", self.negation())
        if self.peek() == "paren" and self.tokens[self.i][1] == "(":
            self.i += 1
            node = self.disjunction()
            if self.peek() != "paren" or self.tokens[self.i][1] != ")":
                raise ExprError("missing ')'")
            self.i += 1
            return node
        left = self.operand()
        op = self.take("op")
        right = self.operand()
        if left[0] == "num" and right[0] == "num":
            raise ExprError(f"comparison of two numbers: {left[1]} {op} {right[1]}")
        if self.peek() == "op":  # `0.2 < q < 0.5`: said so, not as a missing ')' further on
            middle = right[1] if right[0] == "name" else "x"
            raise ExprError(
                f"chained comparisons are not supported: write `... {op} {middle} and {middle} "
                f"{self.tokens[self.i][1]} ...`"
            )
        return ("cmp", op, left, right)

    def operand(self) -> tuple:
        kind = self.peek()
        if kind == "num":
            return ("num", float(self.take("num")))
        if kind == "name":
            return ("name", self.take("name"))
        found = self.tokens[self.i][1] if self.i < len(self.tokens) else "end of expression"
        raise ExprError(f"expected a score name or a number, found {found!r}")


def parse(text: str) -> tuple:
    """The expression as nested tuples; ExprError on a syntax error."""
    return _Parser(text).parse()


def names(node: tuple) -> list[str]:
    """Score names the expression reads, in order of first use."""
    if node[0] == "cmp":
        found = [side[1] for side in node[2:] if side[0] == "name"]
    else:
        found = [n for child in node[1:] for n in names(child)]
    return list(dict.fromkeys(found))


def evaluate(node: tuple, scores: dict[str, Any]) -> bool:
    """Truth of the expression for these scores; MissingScore when one is absent or not finite."""
    kind = node[0]
    if kind == "or":
        return evaluate(node[1], scores) or evaluate(node[2], scores)
    if kind == "and":
        return evaluate(node[1], scores) and evaluate(node[2], scores)
    if kind == "not":
        return not evaluate(node[1], scores)
    return OPS[node[1]](_value(node[2], scores), _value(node[3], scores))


def _value(operand: tuple, scores: dict[str, Any]) -> float:
    if operand[0] == "num":
        return operand[1]
    value = scores.get(operand[1])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MissingScore(operand[1])
    return float(value)
