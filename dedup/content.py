"""Main-content units of a page and their lexical overlap, shared by `semantic_dedup` and `unit_dedup`.

A unit is one line or paragraph of the text (blank lines and newlines both separate units). Units
with fewer than `min_words` words (menus, bylines, buttons, cookie notices) are template rather
than content: they neither represent a page nor make two pages duplicates.
"""

from __future__ import annotations

import numpy as np

from dedup.signatures import shingle_hasher, words_of_unspaced_scripts
from pipeline.arrays import sorted_unique


def units(text: str, min_words: int) -> list[tuple[int, int]]:
    """(start, end) character spans of the lines of `text` (the maximal runs of characters other
    than '\\r' and '\\n') that have at least `min_words` words.

    Words are counted up to `min_words` only (`split` stops there), not split out of the whole line;
    in scripts written without spaces the words are character pairs, as in the shingles.
    '\\r' becomes '\\n' one for one, so one `split` yields the lines and their offsets hold."""
    most = max(min_words - 1, 0)
    spans, start = [], 0
    for line in text.replace("\r", "\n").split("\n"):
        end = start + len(line)
        if line and (
            len(line.split(None, most)) >= min_words
            or (not line.isascii() and len(words_of_unspaced_scripts(line).split(None, most)) >= min_words)
        ):
            spans.append((start, end))
        start = end + 1
    return spans


def main_content(text: str, min_words: int) -> str:
    """The content units of `text` joined by newlines; the whole text when it has none."""
    spans = units(text, min_words)
    return "\n".join(text[a:b] for a, b in spans) if spans else text


def shingle_set(text: str, ngram: int, seed: int) -> np.ndarray:
    """Sorted unique word-`ngram` hashes of the normalized text (the MinHash shingles)."""
    return shingle_hasher(ngram, seed)(text)


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """|A ∩ B| / min(|A|, |B|) of two sorted unique shingle arrays (0 when either is empty)."""
    if a.size == 0 or b.size == 0:
        return 0.0
    return np.intersect1d(a, b, assume_unique=True).size / min(a.size, b.size)


def sketch(shingles: np.ndarray, cap: int) -> tuple[bytes, int]:
    """A capped stand-in for a shingle set: (the `cap` smallest of its distinct low-32-bit hashes,
    as bytes; the number of distinct hashes). A set of at most `cap` hashes is kept whole."""
    small = sorted_unique(shingles.astype(np.uint32))
    return small[:cap].tobytes(), int(small.size)


def sketch_containment(a: tuple[bytes, int], b: tuple[bytes, int], cap: int) -> float:
    """`containment` of two sets from their sketches: exact when neither set exceeds `cap`;
    otherwise |A ∩ B| from the Jaccard similarity J estimated on the `cap` smallest hashes of the
    union (bottom-k), |A ∩ B| = J (|A| + |B|) / (1 + J)."""
    (bytes_a, size_a), (bytes_b, size_b) = a, b
    hashes_a, hashes_b = np.frombuffer(bytes_a, dtype=np.uint32), np.frombuffer(bytes_b, dtype=np.uint32)
    if size_a <= cap and size_b <= cap:
        return containment(hashes_a, hashes_b)
    if size_a == 0 or size_b == 0:
        return 0.0
    union = np.union1d(hashes_a, hashes_b)[:cap]
    both = np.isin(union, hashes_a, assume_unique=True) & np.isin(union, hashes_b, assume_unique=True)
    jaccard = both.sum() / union.size
    return float(jaccard * (size_a + size_b) / (1 + jaccard) / min(size_a, size_b))
