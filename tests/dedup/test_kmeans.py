"""Spherical k-means, nearest-centroid assignment and oversized-cluster splits."""

import numpy as np

from dedup.kmeans import assign, split_oversized, train_spherical_kmeans


def unit_rows(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def blobs(
    n_per: int, k: int, dim: int = 32, spread: float = 0.05, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """k well-separated directions with n_per noisy unit vectors around each."""
    rng = np.random.default_rng(seed)
    centers = unit_rows(rng.normal(size=(k, dim)))
    labels = np.repeat(np.arange(k), n_per)
    return unit_rows(centers[labels] + spread * rng.normal(size=(len(labels), dim))), labels


def test_same_seed_gives_identical_centroids():
    x, _ = blobs(200, 5)
    first = train_spherical_kmeans(x, 5, seed=7)
    second = train_spherical_kmeans(x, 5, seed=7)
    assert first.shape == (5, 32)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-5)


def test_kmeans_recovers_separated_clusters():
    x, truth = blobs(100, 4)
    labels, sims = assign(x, train_spherical_kmeans(x, 4, seed=1))
    # every true blob maps to exactly one cluster
    for blob in range(4):
        assert len(set(labels[truth == blob].tolist())) == 1
    assert len(set(labels.tolist())) == 4
    assert sims.min() > 0.9


def test_k_is_capped_by_points_per_centroid():
    x, _ = blobs(10, 3)  # 30 points: too few for more than one centroid at 39 points each
    assert train_spherical_kmeans(x, 3, seed=0).shape == (1, 32)


def test_assign_matches_brute_force():
    rng = np.random.default_rng(3)
    x, centroids = unit_rows(rng.normal(size=(50, 8))), unit_rows(rng.normal(size=(6, 8)))
    labels, sims = assign(x, centroids)
    brute = [max(range(6), key=lambda c, row=row: float(row @ centroids[c])) for row in x]
    assert labels.tolist() == brute
    np.testing.assert_allclose(sims, [x[i] @ centroids[c] for i, c in enumerate(brute)], atol=1e-6)


def test_split_oversized_bounds_every_part():
    x, _ = blobs(300, 6)
    parts = split_oversized(x, max_size=400, seed=0)
    sizes = np.bincount(parts)
    assert sizes.max() <= 400
    assert sizes.sum() == len(x)
    np.testing.assert_array_equal(parts, split_oversized(x, max_size=400, seed=0))


def test_split_leaves_unsplittable_part_whole():
    x = np.tile(unit_rows(np.ones((1, 16))), (500, 1))
    assert np.bincount(split_oversized(x, max_size=100, seed=0)).tolist() == [500]
