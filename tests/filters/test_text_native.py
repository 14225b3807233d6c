"""The native text analysis (`filters._text_native`) equals its pure-Python reference."""

import random
from types import SimpleNamespace

import pytest

from filters import text_analysis as ta
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT
from tests.native_helpers import assert_falls_back_to_reference, random_text

native = pytest.importorskip("filters._text_native")
FUNCTIONS = ("word_classes",)
TOP_SIZES = (1, 2, 3, 4)
DUP_SIZES = (1, 2, 5, 6, 7, 8, 9, 10)

# pieces that exercise the tokenizer's rules, scripts of every width, and whitespace of every kind
PIECES = [
    "the", "The", "a", "don't", "U.S.", "e.g.", "well-known", "(really).", ":)", "''", "http://x.org/a?b",
    "...", "…", "#", "-", "•", "3-day", "$5", "5km", "—", "。", "中文", "日本語", "ß", "İ", "Ωμέγα",
    "😀", "𝔘𝔫𝔦", "٣", "x", "ab", "abc", "a b", "\u200b", "\x1c", "\u3000",
    # C4's and Gopher's line rules: citations, phrases (with case mappings that change them), marks
    "[1]", "[]", "[12", "[edit]", "[citation needed]", "[٣]", "[a]", "lorem ipsum", "Lorem Ipsum", "JavaScript",
    "{", "}", *ta.POLICY_SUBSTRINGS, "prİvacy policy", "uses coo\u212aies", "ΣΑΣ", "x...", "y…", "•", "- x",
]  # fmt: skip
SPACES = [" ", " ", " ", "\n", "\n", "\n\n", "\t", "\r\n", "\r", "\u00a0", "\u2028", "\x0b", "\x85", "\n \n"]
# c4_lines rules: (max_word_length, citations, terminal punctuation, min words per line, lorem,
# javascript, curly bracket, policy, min sentences)
C4_RULES = [
    (1000, True, False, 3, True, True, True, True, 5),
    (1000, True, True, 3, True, True, True, True, 5),
    (3, False, False, 0, False, True, False, True, 1000),
    (0, True, True, 1, True, False, True, False, 0),
]


def fresh(tokenizer):
    """The tokenizer with an empty chunk cache (and so an emptied native memo): every chunk is split
    anew, natively for the common shapes."""
    return SimpleNamespace(cache={}, tokens=tokenizer.tokens, specials=tokenizer.specials)


def assert_same(text: str) -> None:
    tokenizer = ta._tokenizer()  # its cache only ever holds the Python tokenizer's splits
    words = native.split_words(text, fresh(tokenizer))
    assert words == ta.Reference.split_words(text, tokenizer)
    assert native.split_words(text, tokenizer) == words  # through the memo
    assert native.word_count(text, fresh(tokenizer)) == native.word_count(text, tokenizer) == len(words)
    for shortest in (1, 2, 3):
        assert native.run_duplicates(text, shortest) == ta.Reference.run_duplicates(text, shortest)
    assert native.line_marks(text) == ta.Reference.line_marks(text)
    for short in (0, 30):
        assert native.fineweb_lines(text, short) == ta.Reference.fineweb_lines(text, short)
    for rules in C4_RULES:
        reference = ta.Reference.c4_lines(text, rules, tokenizer)
        assert native.c4_lines(text, rules, fresh(tokenizer)) == reference, rules
    for name in FUNCTIONS:
        assert getattr(native, name)(words) == getattr(ta.Reference, name)(words), name
    assert_same_ngrams(words)


def assert_same_ngrams(words: list[str]) -> None:
    for sizes in (TOP_SIZES, (3, 1, 2, 2, 40)):
        assert native.top_ngram_chars(words, sizes) == ta.Reference.top_ngram_chars(words, sizes)
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
    assert native.top_ngram_chars(words, (2,)) == ta.Reference.top_ngram_chars(words, (2,)) == (3 * 2,)
    words = ["ab", "c", "x", "a", "bc", "y"]  # "ab"+"c" and "a"+"bc" are the same key
    assert native.dup_ngram_chars(words, (2,)) == ta.Reference.dup_ngram_chars(words, (2,)) == (3,)


def test_native_rejects_bad_input():
    with pytest.raises(TypeError):
        native.word_classes(["a", 1])
    with pytest.raises(ValueError):
        native.top_ngram_chars(["a"], (2, 0))
    with pytest.raises(ValueError):
        native.run_duplicates("a", 0)
    with pytest.raises(TypeError):
        native.c4_lines("a", (1, 2), ta._tokenizer())
    with pytest.raises(AttributeError):
        native.split_words("a", object())
    with pytest.raises(ValueError):
        native.dup_ngram_chars(["a"], (3, 0))


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(deadline=None)
@hypothesis.given(st.text(max_size=300))
def test_native_equals_reference_on_any_unicode(text):
    assert_same(text)


@hypothesis.settings(deadline=None)
@hypothesis.given(st.lists(st.sampled_from(["a", "b", "ab", "ba", "", "é", "😀"]), max_size=60))
def test_ngram_statistics_on_repetitive_word_lists(words):
    assert_same_ngrams(words)


# the shapes the native word split handles itself (common_shape in _text_native.c)
PREFIXES = "([{\"'`“‘«"
SUFFIXES = [*",;:!?)]}\"'”’»", "'s", "'S", "’s", "’S"]
LETTERS = [chr(c) for c in range(0x110000) if chr(c).isalpha()]


def test_spacy_rules_never_match_inside_letters_or_digits():
    tokenizer = ta._tokenizer()
    for ch in [*LETTERS, *"0123456789"]:
        word = ch * 3
        assert tokenizer.prefix_search(word) is None, ch
        assert tokenizer.suffix_search(word) is None, ch
        assert next(tokenizer.infix_finditer(word), None) is None, ch


def test_spacy_rules_peel_common_affixes_off_letters_and_digits():
    tokenizer = ta._tokenizer()
    sample = random.Random(18).sample(LETTERS, 3000) + list("abcxyzABCXYZéßĳЖж0123456789")
    for ch in sample:
        for prefix in PREFIXES:
            assert tokenizer.prefix_search(prefix + ch + ch).span() == (0, 1), prefix + ch
        for suffix in SUFFIXES:
            assert tokenizer.suffix_search(ch + ch + suffix).span() == (2, 2 + len(suffix)), ch + suffix
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789":
        for before in sample:
            assert tokenizer.suffix_search(before + ch + ".").span() == (2, 3), before + ch


def test_spacy_infix_rule_splits_hyphens_between_ascii_letters():
    tokenizer = ta._tokenizer()
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for left in letters:
        for right in letters:
            word = f"{left}{left}-{right}{right}"
            assert [m.span() for m in tokenizer.infix_finditer(word)] == [(2, 3)], word
            assert tokenizer.url_match(word) is None and tokenizer.url_match(word + "-" + word) is None


CORES = ["word", "Word", "a", "I", "US", "dont", "cannot", "gonna", "em", "bout", "s", "Mr", "etc", "é", "日本",
         "2019", "7", "well-known", "e-mail", "x-ray", "a-b-c", "A-Z", "co-op", "Jean-Luc", "vs", "Inc", "it"]  # fmt: skip


@pytest.mark.parametrize("prefix", ["", *PREFIXES])
@pytest.mark.parametrize("suffix", ["", *SUFFIXES, ".", '."', ".”", ",'", "'s,", "))", "?!'", "),"])
def test_common_shapes_split_like_the_python_tokenizer(prefix, suffix):
    tokenizer = ta._tokenizer()
    words = CORES + [w for w in tokenizer.specials if w.isalpha() or "-" in w][:300]
    text = " ".join(prefix + w + suffix for w in words)
    assert native.split_words(text, fresh(tokenizer)) == ta.Reference.split_words(text, tokenizer)


def test_unicode_punctuation_table_is_complete():
    import unicodedata

    assert not [c for c in range(0x20000, 0x110000) if unicodedata.category(chr(c))[0] == "P"]
    assert ta.unicode_punctuation() == "".join(
        chr(c) for c in range(0x20000) if unicodedata.category(chr(c))[0] == "P"
    )


def test_missing_extension_falls_back_to_reference_with_a_warning(monkeypatch):
    assert_falls_back_to_reference(monkeypatch, "filters._text_native", ta._load_native, ta.Reference)
