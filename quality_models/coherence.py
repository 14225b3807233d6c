"""Coherence features from one static-embedding pass, and the corruptions that train the `coherent` head.

A static embedder's document vector is the mean of its token vectors, so it cannot see sentence
order. The same token vectors, pooled per sentence (split at `.`, `!`, `?` tokens), can: in real
prose adjacent sentences are more alike than distant ones, and every sentence is close to the
document as a whole; shuffled or interleaved text loses both (`centered_adjacent_z` measures
adjacency after removing the direction all of a document's sentences share). The same holds, more
sharply, for the content words adjacent sentences share (`lexical_*`: overlap of content-token
sets) and for words that are near in meaning (`aligned_adjacent_z`: each content token's best
cosine in the other sentence). Truncation shows at the text's ends; shuffled dialogue leaves
quotes opened twice or closed before they open (`quote_breaks`).
"""

from __future__ import annotations

import random
import re

import numpy as np

MIN_SEGMENT_TOKENS = 3
ALIGNED_TOKENS = 128
FEATURES = (
    "segments_log",
    "few_segments",
    "adjacent_cos",
    "distant_cos",
    "adjacent_minus_distant",
    "adjacent_z",
    "centered_adjacent_z",
    "min_adjacent_cos",
    "doc_cos",
    "min_doc_cos",
    "ends_terminal",
    "starts_lower",
    "lexical_adjacent_z",
    "lexical_adjacent_minus_far",
    "aligned_adjacent_z",
    "quote_breaks",
)
_TERMINAL = (".", "!", "?", '"', "'", ")", "”", "’")
_QUOTE = re.compile('["“”]')


def _cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)


_FUNCTION_WORDS = frozenset(
    "that this these those them their there here have been being were does would could might shall "
    "should which whom what when where than then with from into over under about also just only very "
    "more most other some such your they will".split()
)


def content_tokens(vocab: dict[str, int]) -> np.ndarray:
    """A boolean per token id: whole alphabetic words of 4+ letters that are not function words."""
    mask = np.zeros(max(vocab.values()) + 1, dtype=bool)
    for token, index in vocab.items():
        mask[index] = len(token) >= 4 and token.isalpha() and token not in _FUNCTION_WORDS
    return mask


def _adjacent_z(sim: np.ndarray) -> float:
    """Mean similarity of adjacent rows against all pairs, in standard errors of a random order."""
    k = len(sim)
    pairs = sim[np.triu_indices(k, 1)]
    return float((np.diagonal(sim, 1).mean() - pairs.mean()) / (pairs.std() + 1e-6) * np.sqrt(k - 1))


def _aligned(vectors: np.ndarray, segment: np.ndarray, pick: np.ndarray) -> float:
    """`_adjacent_z` of soft word overlap: each content token's best cosine to the other sentence's.

    Over the first ALIGNED_TOKENS content tokens (the cost is quadratic in them).
    """
    rows = np.flatnonzero(pick)[:ALIGNED_TOKENS]
    first = np.flatnonzero(np.diff(segment[rows], prepend=-1))  # each sentence's first content token
    if len(first) < 3:
        return 0.0
    unit = vectors[rows] / np.maximum(np.linalg.norm(vectors[rows], axis=1, keepdims=True), 1e-12)
    best = np.maximum.reduceat(unit @ unit.T, first, axis=1)  # token x sentence
    sim = np.add.reduceat(best, first, axis=0) / np.diff(np.append(first, len(rows)))[:, None]
    return _adjacent_z(sim + sim.T)


def quote_breaks(text: str) -> int:
    """Quotes opened while one is open or closed while none is.

    A quote opens when it starts a word (space before, none after) and closes when it ends one.
    """
    inside, breaks = False, 0
    for match in _QUOTE.finditer(text):
        start, end, quote = match.start(), match.end(), match.group()
        space_before = start == 0 or text[start - 1].isspace()
        space_after = end == len(text) or text[end].isspace()
        if space_before == space_after or quote == ("“" if space_after else "”"):
            continue  # inside a word, standing alone, or a curly quote facing the wrong way
        breaks += space_before == inside
        inside = space_before
    return breaks


def _lexical(
    ids: np.ndarray, vectors: np.ndarray, starts: np.ndarray, keep: np.ndarray, content: np.ndarray
) -> list[float]:
    """Content-token overlap of adjacent sentences against all pairs (z), pairs 3+ apart, and aligned."""
    segment = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(ids))))
    pick = content[ids] & keep[segment]
    rank = np.cumsum(keep) - 1  # kept segments renumbered 0..k-1
    k = int(keep.sum())
    _, column = np.unique(ids[pick], return_inverse=True)
    present = np.zeros((k, int(column.max(initial=-1)) + 1), dtype=np.float32)
    present[rank[segment[pick]], column] = 1.0
    sizes = np.maximum(present.sum(axis=1), 1.0)
    overlap = np.einsum("iw,jw->ij", present, present) / np.sqrt(np.outer(sizes, sizes))
    upper = np.triu_indices(k, 1)
    pairs, gap = overlap[upper], upper[1] - upper[0]
    far = pairs[gap >= 3].mean() if k > 3 else pairs.mean()
    return [
        _adjacent_z(overlap),
        pairs[gap == 1].mean() - far,
        _aligned(vectors, segment, pick),
    ]


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (zero rows stay zero)."""
    return matrix / np.maximum(np.sqrt(np.einsum("id,id->i", matrix, matrix)), 1e-12)[:, None]


def features(
    text: str, vectors: np.ndarray, ids: np.ndarray, boundary_ids: np.ndarray, content: np.ndarray
) -> np.ndarray:
    """The FEATURES of one text, from its token ids and their float32 vectors (one row per token).

    `content` marks the vocabulary's content tokens (a boolean per token id). Written without BLAS
    calls (reduceat, einsum): tiny matrix products are slow on a busy machine.
    """
    stripped = text.strip()
    edges = [stripped.endswith(_TERMINAL), bool(stripped[:1].islower())]
    quotes = np.log1p(quote_breaks(stripped))
    starts = np.concatenate([[0], np.flatnonzero(np.isin(ids[:-1], boundary_ids)) + 1]) if len(ids) else []
    sizes = np.diff(np.append(starts, len(ids)))
    keep = sizes >= MIN_SEGMENT_TOKENS
    k = int(keep.sum())
    if k < 3:
        return np.array(
            [np.log1p(k), 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, *edges, 0.0, 0.0, 0.0, quotes],
            dtype=np.float32,
        )
    segments = np.add.reduceat(vectors, starts, axis=0)[keep]
    unit = _unit_rows(segments)
    sim = np.einsum("id,jd->ij", unit, unit)
    adjacent = np.diagonal(sim, 1)
    upper = np.triu_indices(k, 1)
    pairs = sim[upper]
    distant = pairs[upper[1] - upper[0] >= 2]
    total = segments.sum(axis=0)
    to_doc = np.einsum("id,d->i", unit, total) / max(float(np.sqrt(total @ total)), 1e-12)
    adjacent_mean, pairs_mean, distant_mean = adjacent.mean(), pairs.mean(), distant.mean()
    # Adjacent similarity against what a random order would give, in standard errors.
    z = (adjacent_mean - pairs_mean) / (pairs.std() + 1e-6) * np.sqrt(k - 1)
    # The same against the document's mean direction: what all its sentences share (topic, register)
    # no longer hides how much closer neighbours are.
    centered = _unit_rows(unit - unit.mean(axis=0))
    return np.array(
        [
            np.log1p(k),
            0.0,
            adjacent_mean,
            distant_mean,
            adjacent_mean - distant_mean,
            z,
            _adjacent_z(np.einsum("id,jd->ij", centered, centered)),
            adjacent.min(),
            to_doc.mean(),
            to_doc.min(),
            *edges,
            *_lexical(ids, vectors, np.asarray(starts), keep, content),
            quotes,
        ],
        dtype=np.float32,
    )


# --- Corruptions (self-supervised negatives) ------------------------------------------------------


def sentences(text: str) -> list[str]:
    """Sentences of plain prose: split after . ! ? followed by whitespace."""
    out, start = [], 0
    for i, char in enumerate(text):
        if char in ".!?" and (i + 1 == len(text) or text[i + 1].isspace()):
            piece = text[start : i + 1].strip()
            if piece:
                out.append(piece)
            start = i + 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def shuffled(text: str, rng: random.Random) -> str:
    """The same sentences in a random order."""
    parts = sentences(text)
    rng.shuffle(parts)
    return " ".join(parts)


def truncated(text: str, rng: random.Random) -> str:
    """Cut in the middle of words at both ends (a fragment of a page)."""
    words = text.split()
    if len(words) < 20:
        return text
    start = rng.randint(1, len(words) // 4)
    end = rng.randint(len(words) * 3 // 4, len(words) - 1)
    return " ".join(words[start:end])


def interleaved(text: str, other: str, rng: random.Random) -> str:
    """Sentences of `text` alternating, in runs of one or two, with sentences of `other`."""
    mine, theirs = sentences(text), sentences(other)
    out: list[str] = []
    while mine or theirs:
        for source in (mine, theirs):
            take = rng.randint(1, 2)
            out.extend(source[:take])
            del source[:take]
    return " ".join(out)
