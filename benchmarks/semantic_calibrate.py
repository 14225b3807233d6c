"""Calibrate `semantic_dedup.eps` on Microsoft Research Paraphrase pairs (msrp_train.tsv).

For each embedder: ROC-AUC of the cosine similarity of a pair for paraphrase (label 1) versus
not, raw and centered on the mean sentence embedding (as `semantic_dedup` does with `center`),
and precision / recall / F1 of "centered cosine > 1 - eps" for a sweep of eps.

    .venv/bin/python benchmarks/semantic_calibrate.py [--data DIR] [--embedders static minilm minilm-bf16]
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np
from common import arguments

from dedup.clusters import center
from quality_models.embedders import load_embedder

EPS_GRID = (0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20, 0.25, 0.30)


def read_msrp(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    """(first sentences, second sentences, labels) from the TSV (BOM, no quoting)."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    rows = [r for r in rows if len(r) == 5]
    return [r[3] for r in rows], [r[4] for r in rows], np.array([int(r[0]) for r in rows])


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    # average ranks for ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    for start, count in zip(first, counts):
        ranks[order[start : start + count]] = start + (count + 1) / 2
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def precision_recall(scores: np.ndarray, labels: np.ndarray, threshold: float) -> tuple[float, float]:
    predicted = scores > threshold
    true_pos = int((predicted & (labels == 1)).sum())
    precision = true_pos / max(int(predicted.sum()), 1)
    return precision, true_pos / max(int((labels == 1).sum()), 1)


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--embedders", nargs="+", default=["static", "minilm", "minilm-bf16"])
    args = parser.parse_args()
    path = args.data / "dedup" / "msrp_train.tsv"
    if not path.is_file():
        print(f"skipped: {path} not found")
        return 0
    first, second, labels = read_msrp(path)
    print(f"MSRP train: {len(labels)} pairs, {int(labels.sum())} paraphrases\n")
    for name in args.embedders:
        embedder = load_embedder(name)
        started = time.perf_counter()
        a, b = embedder.encode(first, batch_size=128), embedder.encode(second, batch_size=128)
        seconds = time.perf_counter() - started
        raw = np.einsum("ij,ij->i", a, b)
        mean = np.concatenate([a, b]).mean(axis=0)
        cos = np.einsum("ij,ij->i", center(a, mean), center(b, mean))
        print(f"## {name} ({2 * len(labels) / seconds:.0f} sentences/s)")
        print(f"ROC-AUC: raw cosine {roc_auc(raw, labels):.4f}, centered cosine {roc_auc(cos, labels):.4f}")
        print(
            f"mean centered cosine: paraphrase {cos[labels == 1].mean():.3f}, not {cos[labels == 0].mean():.3f}\n"
        )
        print("| eps | cosine > | precision | recall | F1 |\n|---|---|---|---|---|")
        for eps in EPS_GRID:
            p, r = precision_recall(cos, labels, 1 - eps)
            print(f"| {eps:.2f} | {1 - eps:.2f} | {p:.3f} | {r:.3f} | {2 * p * r / max(p + r, 1e-9):.3f} |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
