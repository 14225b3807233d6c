"""Spherical k-means on unit vectors (faiss-cpu), nearest-centroid assignment, oversized-cluster splits.

Pure numpy/faiss helpers for `semantic_dedup`; faiss is imported inside the functions so that
loading the stage registry stays cheap. Results depend only on the input rows, their order and
the seed.
"""

from __future__ import annotations

import math

import numpy as np

# faiss warns below 39 training points per centroid; we cap k there instead of training a poor model.
MIN_POINTS_PER_CENTROID = 39


def train_spherical_kmeans(x: np.ndarray, k: int, seed: int, niter: int = 20) -> np.ndarray:
    """Return `k` unit-norm centroids (float32, k×d) trained on the rows of `x` (unit vectors).

    `k` is capped so that every centroid has at least MIN_POINTS_PER_CENTROID training points.
    """
    import faiss

    x = np.ascontiguousarray(x, dtype=np.float32)
    if len(x) == 0:
        raise ValueError("k-means needs at least one training vector")
    k = max(1, min(k, len(x) // MIN_POINTS_PER_CENTROID or 1))
    if k == 1:
        centroid = x.mean(axis=0, keepdims=True)
        return normalize(centroid)
    kmeans = faiss.Kmeans(
        x.shape[1], k, niter=niter, seed=seed, spherical=True, verbose=False, max_points_per_centroid=512
    )
    kmeans.train(x)
    return normalize(np.array(kmeans.centroids, dtype=np.float32))


def assign(x: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centroid by cosine for each row: (cluster index, cosine similarity to that centroid).

    The similarity is recomputed row by row: a matrix product's last bits depend on the rows it is
    given with, so identical documents in other batches (another file layout) got other values,
    and `survivor = "hard"` kept another copy."""
    x = np.asarray(x, dtype=np.float32)
    labels = (x @ centroids.T).argmax(axis=1)
    return labels, np.einsum("ij,ij->i", x, centroids[labels])


def split_oversized(x: np.ndarray, max_size: int, seed: int) -> np.ndarray:
    """Labels that split the rows of `x` into parts of at most `max_size` rows by nested k-means.

    A part that k-means cannot split (e.g. thousands of identical vectors) is left whole: the
    blocked similarity still handles it exactly, only more slowly.
    """
    labels = np.zeros(len(x), dtype=np.int64)
    pending = [np.arange(len(x))]
    next_label = 1
    while pending:
        rows = pending.pop()
        if len(rows) <= max_size:
            continue
        k = math.ceil(len(rows) / max_size) + 1
        sub, _ = assign(x[rows], train_spherical_kmeans(x[rows], k, seed))
        if np.bincount(sub).max() == len(rows):
            continue
        for part in np.unique(sub):
            members = rows[sub == part]
            labels[members] = next_label
            next_label += 1
            pending.append(members)
    _, dense = np.unique(labels, return_inverse=True)
    return dense


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); an all-zero row stays zero."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms == 0, 1, norms)).astype(np.float32)


def neighbour_pairs(x: np.ndarray, k: int, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, cosines) of the distinct pairs i < j where one row is among the other's `k`
    nearest neighbours (exact inner-product search, faiss) with cosine ≥ `threshold`.

    Each row contributes at most `k` pairs, so a large family of near-identical rows costs
    O(n·k) pairs, not O(n²); connected groups still join it whole.
    """
    import faiss

    x = np.ascontiguousarray(x, dtype=np.float32)
    if len(x) < 2 or k < 1:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    sims, cols = index.search(x, min(k + 1, len(x)))
    rows = np.repeat(np.arange(len(x)), cols.shape[1])
    cols, sims = cols.ravel(), sims.ravel()
    keep = (cols >= 0) & (cols != rows) & (sims >= threshold)
    low, high = np.minimum(rows, cols)[keep], np.maximum(rows, cols)[keep]
    pairs, first = np.unique(low * len(x) + high, return_index=True)
    return pairs // len(x), pairs % len(x), sims[keep][first]
