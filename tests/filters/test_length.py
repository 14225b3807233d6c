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


def test_length_and_fineweb_quality_decide_alike_in_either_order():
    """Both cached their word count as "word_count" (whitespace words, spaCy words): the second
    stage read the first one's count, so `length` then `fineweb_quality` rejected a text for
    list_ratio 0.45 (18/40 spaCy words, 9/20 was read) that `fineweb_quality` alone keeps."""
    from filters.fineweb import FineWebQuality

    text = "\n".join(f"Extraordinarily{i}, incomprehensibly{i}." for i in range(10))
    fineweb, length = FineWebQuality("fineweb_quality"), LengthFilter("length", min_words=30)
    alone = (fineweb.check(Document(id="a", text=text)), length.check(Document(id="a", text=text)))
    shared = Document(id="b", text=text)
    assert length.check(shared) == alone[1] and not alone[1].keep  # 20 words < 30
    assert fineweb.check(shared) == alone[0] and alone[0].keep
    shared = Document(id="c", text=text)
    assert fineweb.check(shared) == alone[0] and length.check(shared) == alone[1]
