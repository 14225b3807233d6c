import pytest

from filters.fineweb import FineWebQuality
from pipeline.document import Document
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT

LIST_TEXT = "\n".join(f"Incomprehensibilities{i} overcompensation." for i in range(30))


def fineweb(text: str, **params):
    return FineWebQuality("fineweb_quality", **params).check(Document(id="d", text=text))


def test_good_text_passes():
    assert fineweb(GOOD_TEXT).keep


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("\n \n\t\n", "empty"),
        (GOOD_TEXT.replace(".", ""), "line_punct_ratio"),
        (GOOD_TEXT + "".join(f"\nShort line {i}." for i in range(20)), "short_line_ratio"),
        (GOOD_TEXT + "\n" + GOOD_TEXT.split("\n")[0], "char_dup_ratio"),
        (LIST_TEXT, "list_ratio"),
    ],
)
def test_fineweb_reasons(text, reason):
    verdict = fineweb(text)
    assert not verdict.keep and verdict.reason == reason


def test_line_punct_exclude_zero_and_blog_dup_ratio():
    assert fineweb(GOOD_TEXT.replace(".", ""), line_punct_exclude_zero=True).keep
    one_dup = GOOD_TEXT + "\n" + GOOD_TEXT.split("\n")[0]
    assert fineweb(one_dup, char_duplicates_ratio=0.2).keep


@pytest.mark.parametrize(
    ("edge", "reason"),
    [
        ("empty", "empty"),
        ("one_word", "line_punct_ratio"),
        ("whitespace", "empty"),
        ("punctuation", "line_punct_ratio"),
        ("long_line", "line_punct_ratio"),
        ("non_latin", None),
        ("windows_newlines", None),  # "\r" ends 5 of 6 lines; the last one still counts (1/6 >= 0.12)
    ],
)
def test_fineweb_edge_cases(edge, reason):
    assert fineweb(EDGE_TEXTS[edge]).reason == reason
