import pytest

from pipeline.stages import ConfigError
from synthesis.math_generators import FAMILIES, MathGenerator
from synthesis.math_verifier import MathVerifier, check_steps


@pytest.fixture(scope="module")
def docs():
    return list(MathGenerator("math", count=2 * len(FAMILIES), seed=3).generate())


def test_at_least_six_families_round_robin(docs):
    assert len(FAMILIES) >= 6
    assert {d.metadata["family"] for d in docs} == set(FAMILIES)


def test_deterministic_by_seed(docs):
    again = list(MathGenerator("math", count=len(docs), seed=3).generate())
    assert [(d.id, d.metadata) for d in again] == [(d.id, d.metadata) for d in docs]
    other = list(MathGenerator("math", count=len(docs), seed=4).generate())
    assert [d.metadata for d in other] != [d.metadata for d in docs]


def test_candidates_are_admitted_with_checked_steps(docs):
    verifier = MathVerifier()
    try:
        for d in docs:
            assert (d.kind, d.text, d.source) == ("math", "", "synthetic:math")
            assert verifier.check(d).keep, (d.metadata, verifier.check(d))
            assert check_steps(d.metadata["solution"], d.metadata["problem"])[0] >= 1
    finally:
        verifier.close()
    assert len({d.id for d in docs}) == len(docs)


def test_a_wrong_answer_is_rejected(docs):
    doc = next(d for d in docs if d.metadata["family"] == "word_problem")
    head, _, _ = doc.metadata["solution"].rpartition("####")
    wrong = doc.with_metadata({"solution": f"{head}#### {int(doc.metadata['answer']) + 1}"})
    assert MathVerifier().check(wrong).reason == "wrong_answer"


def test_unknown_family_is_a_config_error():
    with pytest.raises(ConfigError, match="families"):
        MathGenerator("math", families=["linear_equation", "nope"])
