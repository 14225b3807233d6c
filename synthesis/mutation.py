"""Mutants of a Python solution, for measuring how strong its tests are.

A mutant changes one thing the tests should notice: an arithmetic or boolean operator, a
comparison (including the boundary off-by-ones `<`/`<=`), or an integer constant (n ± 1). Tests
that let most mutants pass only check that the code runs, so `verify` can reject the sample as
`weak_tests`. Mutants are chosen deterministically (by position in the source).
"""

from __future__ import annotations

import ast

BINARY_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
COMPARE_SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BOOL_SWAPS: dict[type, type] = {ast.And: ast.Or, ast.Or: ast.And}

# What `ast.parse` raises for source it cannot read (RecursionError: nested too deep for it;
# MemoryError: CPython's parser stack overflowing, as on `not not ... 1` 100,000 deep).
UNPARSEABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


def _sites(nodes: list[ast.AST]) -> list[tuple[int, str, object]]:
    """Every (node index, field, replacement) mutation site in a stable walk order (`ast.walk`'s)."""
    sites: list[tuple[int, str, object]] = []
    for index, node in enumerate(nodes):
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in BINARY_SWAPS:
            sites.append((index, "op", BINARY_SWAPS[type(node.op)]))
        elif isinstance(node, ast.BoolOp):
            sites.append((index, "op", BOOL_SWAPS[type(node.op)]))
        elif isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                if type(op) in COMPARE_SWAPS:
                    sites.append((index, f"ops.{position}", COMPARE_SWAPS[type(op)]))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sites.append((index, "value", node.value + 1))
            sites.append((index, "value", node.value - 1))
    return sites


def _mutated(tree: ast.AST, nodes: list[ast.AST], site: tuple[int, str, object]) -> str:
    """The source of `tree` with one site changed; the tree is changed back after (a copy of a
    1 MB program's tree per mutant took most of 104 CPU-s for 20 mutants)."""
    index, field, replacement = site
    node = nodes[index]
    if field.startswith("ops."):
        ops, position = node.ops, int(field.split(".")[1])
        old, ops[position] = ops[position], replacement()
        try:
            return ast.unparse(tree)
        finally:
            ops[position] = old
    old = getattr(node, field)
    setattr(node, field, replacement() if field == "op" else replacement)
    try:
        return ast.unparse(tree)
    finally:
        setattr(node, field, old)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    """Drop docstrings so constants inside them and doctest text are not mutation sites."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0] = ast.Pass()
    return tree


def mutants(source: str, limit: int) -> list[str] | None:
    """Up to `limit` distinct mutant sources, spread evenly over the solution's mutation sites;
    None when the source cannot be parsed and written back (`ast.unparse` refuses an int literal of
    over 4,300 digits, `ast` a program nested too deep)."""
    try:
        tree = _without_docstrings(ast.parse(source))
        original = ast.unparse(tree)
    except UNPARSEABLE:
        return None
    nodes = list(ast.walk(tree))
    sites = _sites(nodes)
    if len(sites) > limit:
        step = len(sites) / limit
        sites = [sites[int(i * step)] for i in range(limit)]
    out: list[str] = []
    seen = {original}
    for site in sites:
        try:
            text = _mutated(tree, nodes, site)
        except UNPARSEABLE:  # 4,300 nines unparse; their + 1 does not
            return None
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
