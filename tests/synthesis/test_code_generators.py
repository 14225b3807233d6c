"""Built-in code tasks: deterministic, varied, verified by their own tests, and the tests catch bugs."""

from __future__ import annotations

import shutil

import pytest

from pipeline.stages import GENERATORS, ConfigError, load_builtin_stages
from synthesis.code_generators import FAMILIES, CodeGenerator
from synthesis.verify import Verify

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox-deps)"
)


def test_generation_is_deterministic_by_seed_and_count():
    first = [(d.id, d.metadata) for d in CodeGenerator("code", count=16, seed=7).generate()]
    again = [(d.id, d.metadata) for d in CodeGenerator("code", count=16, seed=7).generate()]
    other = [(d.id, d.metadata) for d in CodeGenerator("code", count=16, seed=8).generate()]
    assert first == again
    assert first != other
    assert len({d["family"] for _, d in first}) == len(FAMILIES) >= 6


def test_candidates_follow_the_record_format():
    load_builtin_stages()
    assert GENERATORS["code"] is CodeGenerator
    doc = next(iter(CodeGenerator("my_code", count=1).generate()))
    assert doc.kind == "code" and doc.text == "" and doc.source == "synthetic:my_code"
    assert {"prompt", "solution", "tests", "entry_point", "language"} <= set(doc.metadata)
    assert "def check(candidate):" in doc.metadata["tests"] and "_reference(*args)" in doc.metadata["tests"]


def test_unknown_family_is_a_config_error():
    with pytest.raises(ConfigError, match="families"):
        CodeGenerator("code", families=["sorting_hat"])


@needs_bwrap
def test_every_family_passes_its_tests_and_the_tests_catch_wrong_solutions():
    docs = list(CodeGenerator("code", count=len(FAMILIES), seed=1).generate())
    broken = [
        type(doc)(doc.id + "-broken", "", kind="code", metadata=doc.metadata | {"solution": constant})
        for doc in docs
        for constant in [f"def {doc.metadata['entry_point']}(*args):\n    return 0\n"]
    ]
    # The tests are strong: most one-point mutants of every solution are caught.
    stage = Verify("verify", timeout_s=1.0, workers=2, min_mutation_score=0.5)
    stage.setup()
    try:
        verdicts = stage.check_batch(docs + broken)
    finally:
        stage.teardown()
    assert [v.reason for v in verdicts[: len(docs)]] == [None] * len(docs)
    assert [v.reason for v in verdicts[len(docs) :]] == ["tests_failed"] * len(docs)


@needs_bwrap
def test_every_variant_of_the_shipped_recipe_passes_its_own_tests():
    """Parameters and phrasings vary per task (names, output shapes, directions): all stay correct."""
    docs = list(CodeGenerator("code", count=64, seed=0, differential_cases=10).generate())
    assert len({d.metadata["entry_point"] for d in docs}) > 2 * len(FAMILIES)
    stage = Verify("verify", timeout_s=2.0, workers=2)
    stage.setup()
    try:
        verdicts = stage.check_batch(docs)
    finally:
        stage.teardown()
    assert [(d.id, v.reason) for d, v in zip(docs, verdicts) if not v.keep] == []
