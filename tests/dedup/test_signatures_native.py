"""The native MinHash hot paths (`dedup._minhash_native`) equal their numpy/Python reference."""

import random
import unicodedata

import numpy as np
import pytest

from dedup import signatures as sig
from tests.native_helpers import assert_falls_back_to_reference, random_text

native = pytest.importorskip("dedup._minhash_native")

PIECES = [
    "The", "cafe\u0301", "Café", "3.14", "1,000", "٣٫٥", "１２", "1.", ".5", "a-b", "İstanbul", "ǅ", "—",
    "«quote»", "x\u0301\u0302", "\u0301", "日本語", "😀", "\x1c", "\u00a0", "¹²", "Ⅻ", "ß", "ﬁ",
]  # fmt: skip
SPACES = [" ", "\n", "\t", "  ", "\u3000", ""]


def reference_normalize(text: str) -> str:
    """`normalize_text` as the numpy version always computed it (character by character)."""
    text = sig.Reference.simplify(text.lower(), sig._PUNCTUATION_SORTED)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    return text


def assert_same(text: str, hasher: sig.ShingleHasher) -> None:
    lowered = text.lower()
    assert native.simplify(lowered, sig._PUNCTUATION_SORTED) == sig.Reference.simplify(
        lowered, sig._PUNCTUATION_SORTED
    )
    normalized = sig.normalize_text(text)
    assert normalized == reference_normalize(text)
    data = normalized.encode()
    for ngram in (1, 2, 5):
        assert native.shingle_hashes(data, ngram, hasher.base) == sig.Reference.shingle_hashes(
            data, ngram, hasher.base
        )


def test_native_is_in_use():
    assert sig.SIGNATURES is native


def test_native_equals_reference_on_random_texts():
    rng = random.Random(18)
    hasher = sig.shingle_hasher(5, 1)
    for _ in range(400):
        assert_same(random_text(rng, PIECES, SPACES, rng.randrange(0, 80), odd=0.15, odd_chars=4), hasher)


def test_minhash_equals_reference_on_batches():
    rng = np.random.default_rng(18)
    minhasher = sig.MinHasher(112, 1)
    sizes = [0, 1, 5, 300, 0, 700, 2, 513, 1200]
    sets = [np.unique(rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64)) for n in sizes]
    got = native.minhash(sets, minhasher.a, minhasher.b)
    assert got == sig.Reference.minhash(sets, minhasher.a, minhasher.b)
    signatures = np.frombuffer(got, dtype=np.uint64).reshape(len(sets), 112)
    assert (signatures[0] == 2**64 - 1).all() and (signatures[1] < 2**61 + 8).all()


def test_native_rejects_bad_input():
    with pytest.raises(ValueError):
        native.shingle_hashes(b"a b", 0, 3)
    with pytest.raises(ValueError):
        native.minhash(
            [np.zeros(2, dtype=np.uint64)], np.ones(3, dtype=np.uint64), np.ones(2, dtype=np.uint64)
        )


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(deadline=None)
@hypothesis.given(st.text(max_size=200))
def test_native_equals_reference_on_any_unicode(text):
    assert_same(text, sig.shingle_hasher(5, 1))


def test_missing_extension_falls_back_to_reference_with_a_warning(monkeypatch):
    assert_falls_back_to_reference(monkeypatch, "dedup._minhash_native", sig._load_native, sig.Reference)
