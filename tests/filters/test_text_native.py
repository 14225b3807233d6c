"""The native text analysis (`filters._text_native`) equals its pure-Python reference."""

import random

import pytest

from filters import text_analysis as ta
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT
from tests.native_helpers import assert_falls_back_to_reference, random_text

native = pytest.importorskip("filters._text_native")
FUNCTIONS = ("content_words", "alpha_word_count")
TOP_SIZES = (1, 2, 3, 4)
DUP_SIZES = (1, 2, 5, 6, 7, 8, 9, 10)

# pieces that exercise the tokenizer's rules, scripts of every width, and whitespace of every kind
PIECES = [
    "the", "The", "a", "don't", "U.S.", "e.g.", "well-known", "(really).", ":)", "''", "http://x.org/a?b",
    "...", "…", "#", "-", "•", "3-day", "$5", "5km", "—", "。", "中文", "日本語", "ß", "İ", "Ωμέγα",
    "😀", "𝔘𝔫𝔦", "٣", "x", "ab", "abc", "a b", "\u200b", "\x1c", "\u3000",
]  # fmt: skip
SPACES = [" ", " ", " ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "\u2028", "\x0b"]


def assert_same(text: str) -> None:
    tokenizer = ta._tokenizer()
    words = native.split_words(text, tokenizer.cache, tokenizer.tokens)
    assert words == ta.Reference.split_words(text, tokenizer.cache, tokenizer.tokens)
    for shortest in (1, 2, 3):
        assert native.split_newline_runs(text, shortest) == ta.Reference.split_newline_runs(text, shortest)
    for name in FUNCTIONS:
        assert getattr(native, name)(words) == getattr(ta.Reference, name)(words), name
    assert_same_ngrams(words)


def assert_same_ngrams(words: list[str]) -> None:
    for n in TOP_SIZES:
        assert native.top_ngram_chars(words, n) == ta.Reference.top_ngram_chars(words, n), n
    assert native.dup_ngram_chars(words, DUP_SIZES) == ta.Reference.dup_ngram_chars(words, DUP_SIZES)


def test_native_is_in_use():
    assert ta.ANALYSIS is native


@pytest.mark.parametrize("text", [GOOD_TEXT, *EDGE_TEXTS.values()])
def test_native_equals_reference_on_fixtures(text):
    assert_same(text)


def test_native_equals_reference_on_random_texts():
    rng = random.Random(18)
    for _ in range(300):
        assert_same(random_text(rng, PIECES, SPACES, rng.randrange(0, 400), odd=0.1, odd_chars=5))


def test_ngram_ties_and_concatenation_collisions():
    words = ["a", "b", "c", "d", "c", "d", "a", "b"]  # "a b" and "c d" both twice: the first seen wins
    assert native.top_ngram_chars(words, 2) == ta.Reference.top_ngram_chars(words, 2) == 3 * 2
    words = ["ab", "c", "x", "a", "bc", "y"]  # "ab"+"c" and "a"+"bc" are the same key
    assert native.dup_ngram_chars(words, (2,)) == ta.Reference.dup_ngram_chars(words, (2,)) == (3,)


def test_native_rejects_bad_input():
    with pytest.raises(TypeError):
        native.alpha_word_count(["a", 1])
    with pytest.raises(ValueError):
        native.top_ngram_chars(["a"], 0)
    with pytest.raises(ValueError):
        native.split_newline_runs("a", 0)
    with pytest.raises(ValueError):
        native.dup_ngram_chars(["a"], (3, 0))


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.text(max_size=300))
def test_native_equals_reference_on_any_unicode(text):
    assert_same(text)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.lists(st.sampled_from(["a", "b", "ab", "ba", "", "é", "😀"]), max_size=60))
def test_ngram_statistics_on_repetitive_word_lists(words):
    assert_same_ngrams(words)


def test_missing_extension_falls_back_to_reference_with_a_warning(monkeypatch):
    assert_falls_back_to_reference(monkeypatch, "filters._text_native", ta._load_native, ta.Reference)
