"""LSH banding math: the S-curve of detection probability, and bands/rows from a target threshold.

Two documents with Jaccard similarity `s` agree on one MinHash row with probability `s`, on a band
of `rows` rows with probability `s**rows`, and share at least one of `bands` band keys (become a
candidate pair) with probability `1 - (1 - s**rows)**bands`.
"""

from __future__ import annotations

import numpy as np

S_CURVE_SIMILARITIES = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # 0.50, 0.55, ..., 0.95


def detection_probability(similarity: float, bands: int, rows: int) -> float:
    """Probability that two documents with this Jaccard similarity share at least one band."""
    return float(1.0 - (1.0 - similarity**rows) ** bands)


def s_curve(
    bands: int, rows: int, similarities: tuple[float, ...] = S_CURVE_SIMILARITIES
) -> dict[str, float]:
    """Detection probability at each similarity, keyed by the similarity printed with 2 decimals."""
    return {f"{s:.2f}": round(detection_probability(s, bands, rows), 4) for s in similarities}


def curve_threshold(bands: int, rows: int) -> float:
    """The similarity where the S-curve is steepest, approximately (1/bands)**(1/rows)."""
    return float((1.0 / bands) ** (1.0 / rows))


def _area(bands: int, rows: int, lo: float, hi: float, miss: bool) -> float:
    """Integral of the false-positive (below threshold) or false-negative (above) probability."""
    s = np.linspace(lo, hi, 201)
    p = 1.0 - (1.0 - s**rows) ** bands
    y = 1.0 - p if miss else p
    return float(np.trapezoid(y, s))


def bands_rows_for_threshold(
    threshold: float, num_perm: int = 112, false_positive_weight: float = 0.5
) -> tuple[int, int]:
    """Choose (bands, rows) with bands * rows <= num_perm for a target Jaccard threshold.

    Minimizes the weighted area of false positives (below `threshold`) plus false negatives
    (above it) under the S-curve, as datasketch's `_optimal_param` does; ties go to fewer hashes.
    """
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    best: tuple[float, int, int] | None = None
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            cost = false_positive_weight * _area(bands, rows, 0.0, threshold, miss=False) + (
                1.0 - false_positive_weight
            ) * _area(bands, rows, threshold, 1.0, miss=True)
            key = (round(cost, 12), bands * rows, bands)
            if best is None or key < best:
                best = key
    assert best is not None
    _, product, bands = best
    return bands, product // bands
