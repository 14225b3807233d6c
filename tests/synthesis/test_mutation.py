"""Mutants of a solution: one change each, deterministic, docstrings untouched."""

from __future__ import annotations

import ast

from synthesis.mutation import mutants

SOURCE = '''def f(xs, k):
    """Sum the even numbers below 7."""
    total = 0
    for x in xs:
        if x < k and x % 2 == 0:
            total += x
    return total
'''


def test_mutants_cover_operators_comparisons_constants_and_boundaries():
    found = mutants(SOURCE, 100)
    assert any("x <= k" in m for m in found)  # boundary off-by-one
    assert any("x % 2 != 0" in m for m in found)  # comparison
    assert any("total -= x" in m for m in found)  # operator
    assert any("total = 1" in m for m in found)  # constant
    assert any(" or " in m for m in found)  # boolean operator
    assert not any("below 8" in m or "below 6" in m for m in found)  # docstrings are not mutated
    for mutant in found:
        ast.parse(mutant)


def test_mutants_are_distinct_deterministic_and_limited():
    first = mutants(SOURCE, 5)
    assert first == mutants(SOURCE, 5)
    assert len(first) == len(set(first)) == 5
    assert mutants("def broken(:", 5) is None


def test_a_program_ast_cannot_rewrite_is_none_and_one_with_nothing_to_mutate_has_no_mutants():
    assert mutants("def add(a, b):\n    return a" + " + 0" * 20_000 + " + b\n", 5) is None
    # 4,300 nines unparse; the mutant adding one to them does not (it raised out of the stage)
    assert mutants("def f(x):\n    return x + " + "9" * 4300 + "\n", 20) is None
    assert (
        mutants(
            "from itertools import groupby\nrle = lambda s: [(len(list(r)), c) for c, r in groupby(s)]", 5
        )
        == []
    )


def test_each_mutant_changes_one_site_of_the_original():
    """The tree is changed in place for each mutant and changed back (it was copied per mutant)."""
    plain = SOURCE.replace('    """Sum the even numbers below 7."""\n', "")
    original = ast.unparse(ast.parse(plain)).splitlines()
    for mutant in mutants(plain, 100):
        changed = [(a, b) for a, b in zip(original, mutant.splitlines(), strict=True) if a != b]
        assert len(changed) == 1, changed
