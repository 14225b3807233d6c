"""MinHash signatures and LSH band keys, vectorized with numpy (no per-shingle Python loop).

Pipeline per document, as FineWeb/datatrove do it: normalize the text (`simplify_text`), split
into words, take word n-grams (shingles) and hash each one to 64 bits, then apply `num_perm`
hash permutations `(a * x + b) mod p` (p = 2**61 - 1) and keep each permutation's minimum.

Speed: the text simplification, the n-gram hashes (one prefix hash over the bytes, no Python
call per word or n-gram) and the permutations run in the C extension `dedup._minhash_native`;
the modulo uses the Mersenne-prime identity x mod p ≡ (x & p) + (x >> 61) instead of a division.
`Reference` is the numpy/Python version of the same functions (vectorized: a prefix sum per text,
permutations over batches in cache-sized blocks): the tests hold the two equal, and it is used,
with a warning, when the extension was not built.
"""

from __future__ import annotations

import re
import sys
import unicodedata
import warnings
from functools import cache, lru_cache

import numpy as np
import xxhash

from filters.text_analysis import PUNCTUATION

MERSENNE_PRIME = np.uint64((1 << 61) - 1)
_MAX_HASH = np.uint64((1 << 64) - 1)
_POLY = np.uint64(0x9E3779B97F4A7C15)  # odd: the n-gram polynomial is injective per position
_BLOCK = 512  # shingles per (shingles × perms) block: keeps the block in cache

# datatrove.utils.text: PUNCTUATION (+ control characters) become spaces, numbers become "0".
_PUNCTUATION_SORTED = "".join(sorted(set(PUNCTUATION)))
_NUMBERS = re.compile(r"\d+([.,،٫⎖⎗⎘]\d+)?")  # str-pattern \d is Unicode category Nd
# Scripts written without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer, Japanese kana,
# Han): their words are the overlapping character pairs of each run (Lucene's CJK bigrams), so a
# shingle there spans ngram + 1 characters (datatrove segments words with a tokenizer per language
# instead; none ships offline for all of them). Single characters were too common in Thai: pages
# on different subjects shared a fifth of their character 3-grams.
_UNSPACED = (
    "\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_UNSPACED_RANGES = [(ord(low), ord(high)) for low, high in re.findall(r"(.)-(.)", _UNSPACED)]
_UNSPACED_CHARACTER = re.compile(f"[{_UNSPACED}]")
# One range from the first of those scripts to the last: a quick test that text (Latin, Cyrillic,
# Arabic, Devanagari...) has none of them, 3x faster than searching for the ranges themselves.
_FROM_FIRST_UNSPACED = re.compile(f"[{_UNSPACED[0]}-{_UNSPACED[-1]}]")


@cache
def _blanking(characters: str) -> dict[int, str]:
    """A `str.translate` table turning each of `characters` into a space."""
    return str.maketrans(characters, " " * len(characters))


def _fmix64(x: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finalizer, in place: a bijection that mixes every input bit."""
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


def _power_table(base: int, size: int) -> np.ndarray:
    """[1, base, base**2, ...] mod 2**64 (numpy integer products wrap)."""
    table = np.ones(size, dtype=np.uint64)
    table[1:] = np.cumprod(np.full(size - 1, base, dtype=np.uint64))
    return table


class Reference:
    """numpy/Python reference of `dedup._minhash_native`: the same functions, the same results."""

    @staticmethod
    def simplify(lowered: str, punctuation: str) -> str:
        """Numbers → "0", `punctuation` → spaces, whitespace runs → one space, stripped."""
        return " ".join(_NUMBERS.sub("0", lowered).translate(_blanking(punctuation)).split())

    @staticmethod
    def shingle_hashes(data: bytes, ngram: int, base: int) -> bytes:
        """Sorted unique hashes of the word n-grams of space-separated `data` (see ShingleHasher)."""
        if ngram < 1:
            raise ValueError("shingle_hashes: ngram must be at least 1")
        data = np.frombuffer(data, dtype=np.uint8)
        n = data.size
        if n == 0:
            return b""
        powers, inverse_powers = _power_table(base, n), _power_table(pow(base, -1, 1 << 64), n)
        spaces = np.flatnonzero(data == 32)
        width = min(ngram, spaces.size + 1)
        starts = np.concatenate(([0], spaces + 1))[: spaces.size + 2 - width]
        ends = np.concatenate((spaces, [n]))[width - 1 :]
        prefix = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(data * inverse_powers[:n], out=prefix[1:])
        hashes = (prefix[ends] - prefix[starts]) * powers[ends - 1]
        hashes += (ends - starts).astype(np.uint64) * _POLY
        return np.unique(_fmix64(hashes)).tobytes()

    @staticmethod
    def minhash(shingle_sets: list, a: np.ndarray, b: np.ndarray) -> bytes:
        """(documents × permutations) minima of (a·x + b) folded mod 2**61-1, as bytes; a set
        without shingles gets all 2**64-1. Runs over cache-sized (shingles × perms) blocks."""
        sets = [np.frombuffer(s, dtype=np.uint64) for s in shingle_sets]
        out = np.full((len(sets), a.size), _MAX_HASH, dtype=np.uint64)
        group: list[int] = []
        size = 0
        for i, shingles in enumerate(sets):
            if shingles.size == 0:
                continue
            if group and size + shingles.size > _BLOCK:
                _fill(out, sets, group, a, b)
                group, size = [], 0
            group.append(i)
            size += shingles.size
        if group:
            _fill(out, sets, group, a, b)
        return out.tobytes()


def _permute_min(shingles: np.ndarray, starts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-document minimum of the permuted shingles (documents begin at `starts`)."""
    v = np.multiply.outer(shingles, a)  # wraps mod 2**64, as datasketch and datatrove do
    v += b
    low = v & MERSENNE_PRIME
    v >>= np.uint64(61)
    v += low  # ≡ v mod p, in [0, p + 7): the canonical residue but for 8 of 2**61 values
    return np.minimum.reduceat(v, starts, axis=0)


def _fill(out: np.ndarray, sets: list[np.ndarray], group: list[int], a: np.ndarray, b: np.ndarray) -> None:
    if len(group) == 1:  # one document, possibly longer than a block: running minimum
        shingles = sets[group[0]]
        for lo in range(0, shingles.size, _BLOCK):
            block_min = _permute_min(shingles[lo : lo + _BLOCK], np.zeros(1, dtype=np.intp), a, b)[0]
            np.minimum(out[group[0]], block_min, out=out[group[0]])
        return
    sizes = np.array([sets[i].size for i in group])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out[group] = _permute_min(np.concatenate([sets[i] for i in group]), starts, a, b)


def _load_native():
    """`dedup._minhash_native`, or `Reference` (with a one-time warning) if it was not built."""
    try:
        from dedup import _minhash_native
    except ImportError as error:
        warnings.warn(
            f"dedup._minhash_native is not built ({error}); MinHash signatures run in numpy (slower)",
            RuntimeWarning,
            stacklevel=2,
        )
        return Reference
    return _minhash_native


SIGNATURES = _load_native()


@cache
def _combining_marks() -> dict[int, None]:
    """A `str.translate` table deleting every combining mark (Unicode category Mn)."""
    return dict.fromkeys(c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Mn")


def normalize_text(text: str) -> str:
    """datatrove's `simplify_text` with its defaults: lowercase, numbers → 0, punctuation removed,
    whitespace collapsed to single spaces, diacritics stripped (NFD, combining marks dropped)."""
    text = SIGNATURES.simplify(text.lower(), _PUNCTUATION_SORTED)
    if not text.isascii():
        text = unicodedata.normalize("NFD", text).translate(_combining_marks())
    return text


def words_of_unspaced_scripts(text: str) -> str:
    """Normalized text with each run of characters of a script written without spaces
    (`_UNSPACED`) replaced by its overlapping character pairs as words ("東京タワー" -> "東京 京タ
    タワ ワー"; a lone character stays one word), spaced from the words around it.

    Built on the text's UTF-32 code points with numpy: each character gives up to three (itself,
    the next one or a space, a space), kept by masks; a Python string per pair cost more than the
    page's shingle hashes."""
    if text.isascii() or not _FROM_FIRST_UNSPACED.search(text) or not _UNSPACED_CHARACTER.search(text):
        return text  # (the second search for text between those scripts: Korean jamo, emoji)
    code = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    unspaced = np.zeros(len(code), dtype=bool)
    for low, high in _UNSPACED_RANGES:
        unspaced |= (code >= low) & (code <= high)
    space, n = ord(" "), len(code)
    padded, padded_unspaced = np.append(code, [space, space]), np.append(unspaced, [False, False])
    following, after_next = padded[1 : n + 1], padded[2 : n + 2]  # the end of the text acts as a space
    unspaced_next, unspaced_after_next = padded_unspaced[1 : n + 1], padded_unspaced[2 : n + 2]
    unspaced_before = np.insert(unspaced[:-1], 0, False)
    pair = unspaced & unspaced_next
    lone = unspaced & ~unspaced_next & ~unspaced_before
    out = np.empty((n, 3), dtype=np.uint32)
    out[:, 0], out[:, 1], out[:, 2] = code, np.where(pair, following, space), space
    keep = np.empty((n, 3), dtype=bool)
    keep[:, 0] = ~(unspaced & ~unspaced_next & unspaced_before)  # a run's last character ends its last pair
    keep[:, 1] = pair | (
        (lone | ~unspaced) & (unspaced_next != unspaced) & (following != space) & (code != space)
    )
    keep[:, 2] = pair & (unspaced_after_next | (after_next != space))
    return out[keep].tobytes().decode("utf-32-le")


class ShingleHasher:
    """64-bit hashes of the word n-grams of normalized text, all n-grams of a text at once.

    Normalized text has single spaces between words, so an n-gram is the byte range from its first
    word's start to its last word's end. Its hash is the polynomial Σ c_j·B^(end-1-j) mod 2**64
    (seeded odd base B) plus the length·P, through fmix64. Distinct short strings collide with
    negligible probability.
    """

    def __init__(self, ngram: int, seed: int) -> None:
        self.ngram = ngram
        self.base = int(np.random.Generator(np.random.PCG64(seed)).integers(1 << 62)) * 2 + 1

    def __call__(self, text: str) -> np.ndarray:
        """Sorted unique shingle hashes. Fewer than `ngram` words: one shingle of all the words,
        so short duplicates still match; empty normalized text: no shingles. In scripts written
        without spaces the words are character pairs (`words_of_unspaced_scripts`)."""
        data = words_of_unspaced_scripts(normalize_text(text)).encode()
        return np.frombuffer(SIGNATURES.shingle_hashes(data, self.ngram, self.base), dtype=np.uint64)


@lru_cache(maxsize=8)
def shingle_hasher(ngram: int, seed: int) -> ShingleHasher:
    """One shared hasher per setting."""
    return ShingleHasher(ngram, seed)


def shingle_hashes(text: str, ngram: int, seed: int) -> np.ndarray:
    """Sorted unique 64-bit hashes of the word `ngram`-grams of the normalized text."""
    return shingle_hasher(ngram, seed)(text)


def _polynomial(columns: np.ndarray, start: np.uint64) -> np.ndarray:
    """Hash the rows of a (n × k) uint64 array: fmix64(((start·P + c0)·P + c1)·P + ...)."""
    acc = np.full(columns.shape[0], start, dtype=np.uint64)
    for j in range(columns.shape[1]):
        acc *= _POLY
        acc += columns[:, j]
    return _fmix64(acc)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard similarity of two sorted unique shingle-hash arrays."""
    if a.size == 0 and b.size == 0:
        return 1.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


class MinHasher:
    """`num_perm` seeded permutations (a·x + b) mod (2**61 - 1), applied to batches of documents."""

    def __init__(self, num_perm: int, seed: int) -> None:
        rng = np.random.Generator(np.random.PCG64(seed))
        self.a = rng.integers(1, MERSENNE_PRIME, size=num_perm, dtype=np.uint64)
        self.b = rng.integers(0, MERSENNE_PRIME, size=num_perm, dtype=np.uint64)
        self.num_perm = num_perm

    def signatures(self, shingle_sets: list[np.ndarray]) -> np.ndarray:
        """A (documents × num_perm) uint64 array; a document without shingles gets all 2**64-1."""
        out = SIGNATURES.minhash(shingle_sets, self.a, self.b)
        return np.frombuffer(out, dtype=np.uint64).reshape(len(shingle_sets), self.num_perm)


def band_keys(signatures: np.ndarray, bands: int, rows: int, seed: int) -> np.ndarray:
    """(documents × bands) uint64 keys: band i's key hashes rows i·rows … (i+1)·rows-1 and i itself,
    so equal keys mean equal band values in the same band (up to 64-bit hash collisions)."""
    n = signatures.shape[0]
    keys = np.empty((n, bands), dtype=np.uint64)
    for band in range(bands):
        start = np.uint64(xxhash.xxh64_intdigest(band.to_bytes(4, "little"), seed=seed))
        keys[:, band] = _polynomial(signatures[:, band * rows : (band + 1) * rows], start)
    return keys
