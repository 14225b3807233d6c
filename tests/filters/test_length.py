import pytest

from filters.length import LengthFilter
from pipeline.document import Document
from pipeline.stages import ConfigError
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT


def length(text: str, **params):
    return LengthFilter("length", **params).check(Document(id="d", text=text))


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"min_words": 500}, "too_few_words"),
        ({"min_words": 0, "max_words": 10}, "too_many_words"),
        ({"min_chars": 10_000}, "too_few_chars"),
        ({"max_chars": 100}, "too_many_chars"),
    ],
)
def test_length_reasons(params, reason):
    verdict = length(GOOD_TEXT, **params)
    assert not verdict.keep and verdict.reason == reason


def test_length_keeps_good_text_and_checks_config():
    assert length(GOOD_TEXT).keep
    with pytest.raises(ConfigError, match="min_words"):
        LengthFilter("length", min_words=10, max_words=5)
    with pytest.raises(ConfigError, match="min_chars"):
        LengthFilter("length", min_chars=10, max_chars=5)


@pytest.mark.parametrize(
    ("edge", "reason"),
    [
        ("empty", "too_few_words"),
        ("one_word", "too_few_words"),
        ("whitespace", "too_few_words"),
        ("punctuation", "too_few_words"),
        ("long_line", None),
        ("non_latin", "too_few_words"),
        ("windows_newlines", None),
    ],
)
def test_length_edge_cases(edge, reason):
    assert length(EDGE_TEXTS[edge]).reason == reason
