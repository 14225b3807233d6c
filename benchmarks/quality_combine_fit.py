"""Fit and cross-validate the combined `quality` score on DCLM's human-judged pages; AUC of every input.

    python benchmarks/quality_combine_fit.py [--data DIR] [--write]

Scores the 200 judged pages (../shared/data/quality/dclm_human_judged_dev.jsonl) with fastText,
the static-embedder heads, the two older single heads and the document statistics, prints the
ROC-AUC of each against the human label, then fits an L2 logistic regression on standardized
features (each clipped to the range of the pages it was fitted on, as the stage clips them). The
dev set is also the only human-labelled data, so its AUC is reported by repeated stratified
10-fold cross-validation (5 seeds): every page is scored by weights fitted without it.
The L2 penalty is chosen from L2_GRID by 5-fold CV AUC; the reported figure is nested (the choice
is made again inside every outer training fold), so it is not optimistic about that choice.
`--write` saves the weights fitted on all 200 pages to quality_models/models/quality-combined/.
"""

from __future__ import annotations

import json

import numpy as np
from common import arguments

from pipeline.document import Document
from quality_models.combined import DEFAULT_WEIGHTS, STATS, doc_stats
from quality_models.train import roc_auc

HEADS = ("informative", "coherent", "depth", "toxic")
# `coherent` is scored and reported but left out of the combination: it adds 0.0002 nested CV AUC
# here (0.004 at penalty 10) and its sentence-level features make the embedding pass about six
# times slower (benchmarks/results/quality.md).
COMBINED_HEADS = ("informative", "depth", "toxic")
FEATURES = ("fasttext_quality", *(f"embedding_quality.{h}" for h in COMBINED_HEADS), *STATS)
L2_GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)  # per feature, on standardized features


def score_pages(texts: list[str]) -> dict[str, np.ndarray]:
    """Every candidate input and reference score of each text."""
    from quality_models.embedding_quality import EmbeddingQuality
    from quality_models.fasttext_quality import FastTextQuality

    docs = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
    stages = [
        FastTextQuality("fasttext_quality"),
        EmbeddingQuality("embedding_quality", model="", heads=list(HEADS)),
        EmbeddingQuality("minilm_head"),
        EmbeddingQuality(
            "static_head", model="quality_models/models/embedding-quality-static/head.safetensors"
        ),
    ]
    for stage in stages:
        stage.setup()
        docs = [v.doc or d for v, d in zip(stage.check_batch(docs), docs)]
    columns = {key: np.array([d.scores[key] for d in docs]) for key in docs[0].scores}
    stats = [doc_stats(t) for t in texts]
    columns.update({name: np.array([s[name] for s in stats]) for name in STATS})
    return columns


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Unweighted L2 logistic regression by Newton's method (so probabilities stay calibrated)."""
    a = np.hstack([x, np.ones((len(x), 1))])
    penalty = np.full(a.shape[1], l2)
    penalty[-1] = 0.0
    w = np.zeros(a.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        step = np.linalg.solve(
            (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty), a.T @ (p - y) + penalty * w
        )
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w[:-1], float(w[-1])


def standardize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.mean(axis=0), np.maximum(x.std(axis=0), 1e-9)


def folds_of(y: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """A stratified fold number per row."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=int)
    for label in (0, 1):
        idx = rng.permutation(np.flatnonzero(y == label))
        fold[idx] = np.arange(len(idx)) % folds
    return fold


def fit_predict(x: np.ndarray, y: np.ndarray, test: np.ndarray, l2: float) -> np.ndarray:
    """Logits for `test` from a model standardized and fitted on (x, y), its features clipped to the
    range of x as the `quality` stage clips them."""
    mean, scale = standardize(x)
    w, b = fit_logistic((x - mean) / scale, y, l2)
    return ((np.clip(test, x.min(axis=0), x.max(axis=0)) - mean) / scale) @ w + b


def cross_validated(
    x: np.ndarray, y: np.ndarray, l2, folds: int = 10, seeds: range = range(5)
) -> list[float]:
    """AUC of out-of-fold predictions, one per seed; `l2` is a penalty or a function (x, y) -> penalty."""
    aucs = []
    for seed in seeds:
        fold = folds_of(y, folds, seed)
        predicted = np.empty(len(y))
        for k in range(folds):
            train = fold != k
            penalty = l2(x[train], y[train]) if callable(l2) else l2
            predicted[~train] = fit_predict(x[train], y[train], x[~train], penalty)
        aucs.append(roc_auc(y.astype(np.int64), predicted))
    return aucs


def choose_l2(x: np.ndarray, y: np.ndarray) -> float:
    """The L2_GRID penalty with the best 5-fold CV AUC (one seed) on (x, y)."""
    return max(L2_GRID, key=lambda l2: (cross_validated(x, y, l2, folds=5, seeds=range(100, 101))[0], l2))


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--write", action="store_true", help="save the weights fitted on all pages")
    args = parser.parse_args(argv)
    path = args.data / "quality" / "dclm_human_judged_dev.jsonl"
    if not path.is_file():
        print(f"skipped: {path} not found")
        return 0
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    y = np.array([r["label"] for r in rows], dtype=np.float64)
    columns = score_pages([r["text"] for r in rows])
    print(f"pages: {len(y)} ({int(y.sum())} useful)")
    for name, values in columns.items():
        print(f"AUC {name}: {roc_auc(y.astype(np.int64), values):.4f}")
    x = np.column_stack([columns[name] for name in FEATURES])
    for l2 in L2_GRID:
        aucs = cross_validated(x, y, l2)
        print(f"AUC combined, L2 {l2} (10-fold CV, 5 seeds): mean {np.mean(aucs):.4f} min {min(aucs):.4f}")
    aucs = cross_validated(x, y, choose_l2)
    print(
        f"AUC combined, L2 chosen inside each fold (nested 10-fold CV, 5 seeds): "
        f"mean {np.mean(aucs):.4f} min {min(aucs):.4f} max {max(aucs):.4f}"
    )
    l2 = choose_l2(x, y)
    mean, scale = standardize(x)
    w, b = fit_logistic((x - mean) / scale, y, l2)
    fitted = roc_auc(y.astype(np.int64), ((x - mean) / scale) @ w + b)
    print(f"L2 chosen on all pages: {l2}; AUC fitted on all pages (optimistic): {fitted:.4f}")
    if args.write:
        DEFAULT_WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
        model = {
            "features": list(FEATURES),
            "mean": mean.round(6).tolist(),
            "scale": scale.round(6).tolist(),
            "weight": w.round(6).tolist(),
            "bias": round(b, 6),
            "low": x.min(axis=0).round(6).tolist(),
            "high": x.max(axis=0).round(6).tolist(),
            "fitted_on": "dclm_human_judged_dev.jsonl (200 pages), L2 logistic, standardized features",
            "l2": l2,
            "nested_cv_auc_10fold_5seeds": {
                "mean": round(float(np.mean(aucs)), 4),
                "min": round(min(aucs), 4),
            },
            "command": "python benchmarks/quality_combine_fit.py --write",
        }
        DEFAULT_WEIGHTS.write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {DEFAULT_WEIGHTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
