"""Train the shipped embedding_quality heads (one embedding pass, several dimensions) and their card.

    python -m quality_models.train_heads --data benchmarks/out/quality_heads [--dev DEV.jsonl]

Reads DATA/<head>.jsonl (benchmarks/quality_heads_data.py: text, target, source, split), embeds
every text once with the static embedder, fits each head on its `train` rows only, and reports
AUC on its `heldout` rows (sources it was not trained on) and, when `--dev` is given, against the
human labels of DCLM's judged pages (validation only: never used for fitting). Writes
quality_models/models/heads/<head>.safetensors and heads/README.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from quality_models.embedding_quality import HEADS_DIR, LinearHead
from quality_models.train import fit_head, roc_auc

# head: (kind, input features, L2 penalty, grade counted positive for AUC)
HEADS = {
    "informative": ("logistic", "embedding", 1e-4, 1.0),
    "coherent": ("logistic", "embedding+coherence", 1e-4, 1.0),
    "depth": ("linear", "embedding", 1e-3, 2.0),
    "toxic": ("logistic", "embedding", 1e-4, 1.0),
}


def read_rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def inputs(embedder, texts: list[str], features: str) -> np.ndarray:
    embeddings, coherence = embedder.encode_with_coherence(texts)
    return np.hstack([embeddings, coherence]) if features == "embedding+coherence" else embeddings


def train_one(name: str, rows: list[dict], embedder, dev: list[dict]) -> tuple[LinearHead, dict]:
    kind, features, l2, positive = HEADS[name]
    x = inputs(embedder, [r["text"] for r in rows], features)
    y = np.array([r["target"] for r in rows], dtype=np.float64)
    train = np.array([r["split"] == "train" for r in rows])
    weight, bias = fit_head(x[train], y[train], kind == "logistic", l2)
    head = LinearHead(embedder.name, weight, bias, kind, features=features)
    scores = head.score(x[:, : embedder.dim], x[:, embedder.dim :])
    labels = (y >= positive).astype(np.int64)
    heldout_sources = sorted({r["source"] for r in rows if r["split"] == "heldout"})
    metrics = {
        "train_rows": int(train.sum()),
        "heldout_rows": int((~train).sum()),
        "heldout_sources": heldout_sources,
        "train_auc": round(roc_auc(labels[train], scores[train]), 4),
        "heldout_auc": round(roc_auc(labels[~train], scores[~train]), 4),
    }
    if name == "coherent":
        for corruption in ("shuffled", "truncated", "interleaved"):
            pick = ~train & np.array([r["target"] == 1 or r["source"].endswith(corruption) for r in rows])
            metrics[f"heldout_auc_real_vs_{corruption}"] = round(roc_auc(labels[pick], scores[pick]), 4)
    if dev:
        dev_x = inputs(embedder, [r["text"] for r in dev], features)
        dev_scores = head.score(dev_x[:, : embedder.dim], dev_x[:, embedder.dim :])
        metrics["dclm_dev_auc"] = round(roc_auc(np.array([r["label"] for r in dev]), dev_scores), 4)
    head.info = {"metrics": metrics, "training_data": "benchmarks/quality_heads_data.py", "l2": l2}
    return head, metrics


def main(argv: list[str] | None = None) -> int:
    from quality_models.embedders import load_embedder

    parser = argparse.ArgumentParser(
        prog="python -m quality_models.train_heads", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--data", type=Path, required=True, help="folder of <head>.jsonl files")
    parser.add_argument("--dev", type=Path, help="DCLM human-judged pages (validation only)")
    parser.add_argument("--output", type=Path, default=HEADS_DIR)
    parser.add_argument("--heads", nargs="+", default=list(HEADS), choices=list(HEADS))
    args = parser.parse_args(argv)
    embedder = load_embedder("static")
    dev = read_rows(args.dev) if args.dev else []
    args.output.mkdir(parents=True, exist_ok=True)
    for name in args.heads:
        head, metrics = train_one(name, read_rows(args.data / f"{name}.jsonl"), embedder, dev)
        head.save(args.output / f"{name}.safetensors")
        (args.output / f"{name}.metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        print(name, json.dumps(metrics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
