import pytest

from filters.gopher import GopherQuality, GopherRepetition
from pipeline.document import Document
from pipeline.stages import ConfigError
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT


def quality(text: str, **params):
    return GopherQuality("gopher_quality", **params).check(Document(id="d", text=text))


def repetition(text: str, **params):
    return GopherRepetition("gopher_repetition", **params).check(Document(id="d", text=text))


def test_good_text_passes_both():
    assert quality(GOOD_TEXT).keep
    assert repetition(GOOD_TEXT).keep


@pytest.mark.parametrize(
    ("text", "params", "reason"),
    [
        ("hello world", {}, "too_few_words"),
        (GOOD_TEXT, {"max_words": 60}, "too_many_words"),
        ("ab " * 60, {}, "short_mean_word_length"),
        ("extraordinarily " * 60, {}, "long_mean_word_length"),
        (GOOD_TEXT + " #tag" * 20, {}, "too_many_hashes"),
        (GOOD_TEXT + " ..." * 15, {}, "too_many_ellipses"),
        ("\n".join("- " + line for line in GOOD_TEXT.split("\n")), {}, "too_many_bullet_lines"),
        ("\n".join(line + " ..." for line in GOOD_TEXT.split("\n")), {}, "too_many_ellipsis_lines"),
        (GOOD_TEXT + " 1234" * 40, {}, "too_few_alpha_words"),
        (" ".join(f"apple{i} banana cherry orange" for i in range(20)), {}, "too_few_stop_words"),
    ],
)
def test_quality_reasons(text, params, reason):
    verdict = quality(text, **params)
    assert not verdict.keep
    assert verdict.reason == reason


def test_quality_stop_words_are_case_sensitive_like_reference():
    text = " ".join(f"The And word{i} more" for i in range(20))
    assert quality(text).reason == "too_few_stop_words"


LONG = "Historians describe the remarkable transformation of this coastal settlement into a lively port"
DUP_NGRAMS = " ".join([*GOOD_TEXT.split("\n")[:3], LONG, LONG])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("\n\n".join(["Same paragraph here."] * 4 + ["Other one."]), "dup_para_frac"),
        ("\n\n".join([LONG, LONG, "short a.", "short b.", "short c."]), "dup_para_char_frac"),
        ("\n".join(["line one is here", "line two is here"] * 3), "dup_line_frac"),
        ("\n".join([LONG, LONG, "short a.", "short b.", "short c."]), "dup_line_char_frac"),
        (GOOD_TEXT + " click here" * 30, "top_ngram_chars"),
        (DUP_NGRAMS, "dup_ngram_chars"),
    ],
)
def test_repetition_reasons(text, reason):
    verdict = repetition(text)
    assert not verdict.keep
    assert verdict.reason == reason


def test_repetition_detail_names_n():
    assert repetition(GOOD_TEXT + " click here" * 30).detail.startswith("n=2 ")
    assert repetition(DUP_NGRAMS).detail.startswith("n=6 ")


def test_repetition_ngram_params_validated():
    with pytest.raises(ConfigError, match="top_ngrams"):
        GopherRepetition("r", top_ngrams=[[2, 2.0]])
    with pytest.raises(ConfigError, match="dup_ngrams"):
        GopherRepetition("r", dup_ngrams=[5])


def test_quality_config_checks():
    with pytest.raises(ConfigError, match="min_words"):
        GopherQuality("q", min_words=10, max_words=5)


@pytest.mark.parametrize(
    ("edge", "quality_reason", "repetition_reason"),
    [
        ("empty", "too_few_words", "empty"),
        ("one_word", "too_few_words", None),
        ("whitespace", "too_few_words", None),
        ("punctuation", "too_few_words", "top_ngram_chars"),
        ("long_line", "too_few_stop_words", "top_ngram_chars"),
        ("non_latin", "too_few_words", "top_ngram_chars"),
        ("windows_newlines", None, None),
    ],
)
def test_edge_cases(edge, quality_reason, repetition_reason):
    assert quality(EDGE_TEXTS[edge]).reason == quality_reason
    assert repetition(EDGE_TEXTS[edge]).reason == repetition_reason
