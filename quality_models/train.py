"""`gristmill train-quality`: train a fastText or embedding quality model and write its model card.

Examples come from files in any input format (`pipeline.readers`): `--positive`/`--negative` globs
(binary), or `--graded` globs with a numeric `--grade-field` (fastText: positive when the grade is
at least `--grade-threshold`; embedding: a linear regression on the grade). A stratified, seeded
validation split is held out; precision, recall and AUC on it are printed and written to the card.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.document import Failure
from quality_models.embedders import EMBEDDER_NAMES

FASTTEXT_FILE = "model.bin"
HEAD_FILE = "head.safetensors"


@dataclass
class Example:
    """One training document: its text, its target (0/1 label or a grade) and where it came from."""

    text: str
    target: float
    source: str


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gristmill train-quality", description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("fasttext", "embedding"), required=True)
    parser.add_argument("--positive", nargs="+", default=[], metavar="GLOB", help="high-quality examples")
    parser.add_argument("--negative", nargs="+", default=[], metavar="GLOB", help="low-quality examples")
    parser.add_argument(
        "--graded", nargs="+", default=[], metavar="GLOB", help="examples with a numeric grade"
    )
    parser.add_argument("--grade-field", default="score", help="field holding the grade (with --graded)")
    parser.add_argument("--grade-threshold", type=float, default=3.0, help="grade counted as positive")
    parser.add_argument("--text-field", default="text")
    parser.add_argument("--output", type=Path, required=True, help="folder for the model and README.md")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validation-fraction", type=float, default=0.1)
    parser.add_argument(
        "--notes", type=Path, help="markdown file appended to the model card (data rationale)"
    )
    fasttext = parser.add_argument_group("fasttext")
    fasttext.add_argument("--epoch", type=int, default=10)
    fasttext.add_argument("--lr", type=float, default=0.1)
    fasttext.add_argument("--dim", type=int, default=16)
    fasttext.add_argument("--word-ngrams", type=int, default=2)
    fasttext.add_argument("--min-count", type=int, default=3)
    fasttext.add_argument("--bucket", type=int, default=100_000)
    embedding = parser.add_argument_group("embedding")
    embedding.add_argument("--embedder", choices=EMBEDDER_NAMES, default="minilm-bf16")
    embedding.add_argument("--l2", type=float, default=1e-4, help="L2 penalty of the logistic/linear head")
    return parser


def read_examples(args: argparse.Namespace, skipped: list) -> list[Example]:
    """Every example in input order (sorted files, record order); empty texts dropped, records the
    reader cannot use (malformed, without the text field) appended to `skipped`."""
    from pipeline.readers import iter_documents

    examples: list[Example] = []
    for patterns, target in ((args.positive, 1.0), (args.negative, 0.0)):
        if patterns:
            for doc in iter_documents(patterns, text_field=args.text_field, skipped=skipped):
                if doc.text.strip():
                    examples.append(Example(doc.text, target, doc.source))
    if args.graded:
        for doc in iter_documents(args.graded, text_field=args.text_field, skipped=skipped):
            grade = doc.metadata.get(args.grade_field)
            if not isinstance(grade, (int, float)) or isinstance(grade, bool):
                raise SystemExit(f"{doc.source}: record {doc.id} has no numeric {args.grade_field!r}")
            if doc.text.strip():
                examples.append(Example(doc.text, float(grade), doc.source))
    return examples


def split(
    examples: list[Example], labels: np.ndarray, fraction: float, seed: int
) -> tuple[list[int], list[int]]:
    """Seeded, stratified train/validation index lists (each class keeps `fraction` for validation)."""
    rng = np.random.default_rng(seed)
    train, valid = [], []
    for label in (0, 1):
        idx = rng.permutation(np.flatnonzero(labels == label))
        cut = int(round(len(idx) * fraction))
        valid.extend(idx[:cut].tolist())
        train.extend(idx[cut:].tolist())
    return rng.permutation(train).tolist(), sorted(valid)


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with average ranks for ties)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=np.float64)
    sorted_scores = scores[order]
    start = 0
    while start < len(scores):
        end = start
        while end + 1 < len(scores) and sorted_scores[end + 1] == sorted_scores[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    positives = labels == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def binary_metrics(labels: np.ndarray, scores: np.ndarray, threshold: float) -> dict[str, float]:
    """Precision, recall, accuracy at `threshold`, and AUC, of the positive class."""
    predicted = scores >= threshold
    true_pos = int((predicted & (labels == 1)).sum())
    return {
        "n": int(len(labels)),
        "positives": int((labels == 1).sum()),
        "auc": round(roc_auc(labels, scores), 4),
        "precision": round(true_pos / max(int(predicted.sum()), 1), 4),
        "recall": round(true_pos / max(int((labels == 1).sum()), 1), 4),
        "accuracy": round(float((predicted == (labels == 1)).mean()), 4),
        "threshold": threshold,
    }


def train_fasttext(args: argparse.Namespace, texts: list[str], labels: np.ndarray, output: Path) -> Path:
    """Train a supervised fastText model (single thread, seeded, so deterministic) into `output`."""
    import fasttext

    from quality_models.fasttext_quality import NEGATIVE_LABEL, POSITIVE_LABEL, normalize_for_fasttext

    with tempfile.TemporaryDirectory() as tmp:
        train_file = Path(tmp) / "train.txt"
        with train_file.open("w", encoding="utf-8") as handle:
            for text, label in zip(texts, labels):
                handle.write(
                    f"{POSITIVE_LABEL if label else NEGATIVE_LABEL} {normalize_for_fasttext(text)}\n"
                )
        model = fasttext.train_supervised(
            input=str(train_file),
            epoch=args.epoch,
            lr=args.lr,
            dim=args.dim,
            wordNgrams=args.word_ngrams,
            minCount=args.min_count,
            bucket=args.bucket,
            loss="softmax",
            thread=1,
            seed=args.seed,
            verbose=0,
        )
        path = output / FASTTEXT_FILE
        model.save_model(str(path))
    return path


def fit_head(
    features: np.ndarray, targets: np.ndarray, logistic: bool, l2: float
) -> tuple[np.ndarray, float]:
    """Class-balanced L2-regularized logistic regression (Newton's method) or ridge regression."""
    x = np.hstack([features.astype(np.float64), np.ones((len(features), 1))])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0  # no penalty on the bias
    if not logistic:
        w = np.linalg.solve(x.T @ x + np.diag(penalty) * len(x), x.T @ targets)
        return w[:-1], float(w[-1])
    pos = targets == 1
    sample = np.where(pos, len(x) / (2.0 * max(pos.sum(), 1)), len(x) / (2.0 * max((~pos).sum(), 1))) / len(x)
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (sample * (p - targets)) + penalty * w
        hessian = (x * (sample * p * (1.0 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w[:-1], float(w[-1])


def describe_skipped(skipped: list) -> list[dict]:
    """Records the reader could not use, per file and error: how many, and the first one's message."""
    groups: dict[tuple[str, str], list] = {}
    for record in skipped:
        if isinstance(record, Failure):
            source, error, message = record.source, record.error, record.message
        else:  # a Rejection
            source, error, message = record.doc.source, record.reason, record.detail
        groups.setdefault((Path(source).name, error), [0, message])[0] += 1
    return [
        {"file": name, "error": error, "records": n, "example": message}
        for (name, error), (n, message) in sorted(groups.items())
    ]


def describe_data(args: argparse.Namespace, examples: list[Example], skipped: list) -> dict:
    """Training data summary for the card and the head metadata."""
    per_source = Counter((Path(e.source).name, e.target) for e in examples)
    return {
        "positive_globs": args.positive,
        "negative_globs": args.negative,
        "graded_globs": args.graded,
        "files": [
            {"file": name, "target": target, "documents": n}
            for (name, target), n in sorted(per_source.items())
        ],
        "not_read": describe_skipped(skipped),
    }


def score_meaning(args: argparse.Namespace) -> str:
    """What the model's scores are: an embedding head fit on grades predicts the grade itself."""
    if args.model == "embedding" and args.graded:
        return f"Scores are predicted {args.grade_field!r} grades (a linear head: not bounded to [0, 1])"
    return "Scores are P(high quality) in [0, 1]"


def not_read_lines(not_read: list[dict]) -> list[str]:
    """The card's account of the records the reader could not use (none: no lines)."""
    if not not_read:
        return []
    return [
        "Records not read (not in the training data):",
        "",
        "| file | error | records | first message |",
        "|---|---|---|---|",
        *[f"| {g['file']} | {g['error']} | {g['records']} | {g['example']} |" for g in not_read],
        "",
    ]


def write_card(
    args: argparse.Namespace, argv: list[str], path: Path, data: dict, metrics: dict, extra: dict
) -> None:
    """README.md next to the model: what it is, the exact command, the data, the metrics."""
    command = "gristmill train-quality " + " ".join(shlex.quote(a) for a in argv)
    lines = [
        f"# {args.output.name}: {args.model} quality model",
        "",
        f"Model file: `{path.name}`. {score_meaning(args)} ({'fasttext_quality' if args.model == 'fasttext' else 'embedding_quality'} stage).",
        "",
        "## Command",
        "",
        "```",
        command,
        "```",
        "",
        "## Settings",
        "",
        *[f"- {k}: {v}" for k, v in sorted(extra.items())],
        f"- seed: {args.seed}",
        f"- validation fraction: {args.validation_fraction}",
        "",
        "## Training data",
        "",
        "| file | target | documents |",
        "|---|---|---|",
        *[f"| {f['file']} | {f['target']:g} | {f['documents']} |" for f in data["files"]],
        "",
        *not_read_lines(data["not_read"]),
        "## Validation metrics (held-out split)",
        "",
        *[f"- {k}: {v}" for k, v in metrics.items()],
        "",
    ]
    if args.notes:
        lines += [args.notes.read_text(encoding="utf-8").rstrip(), ""]
    (args.output / "README.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Entry point of `gristmill train-quality`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if not args.graded and not (args.positive and args.negative):
        print("train-quality: give --positive and --negative globs, or --graded", file=sys.stderr)
        return 2
    if args.graded and (args.positive or args.negative):
        # Positives (target 1) would be graded below --grade-threshold: trained as negatives.
        print("train-quality: give --positive and --negative globs, or --graded, not both", file=sys.stderr)
        return 2
    if not 0.0 < args.validation_fraction < 0.5:
        print("train-quality: --validation-fraction must lie in (0, 0.5)", file=sys.stderr)
        return 2
    from pipeline.preflight import check_folder

    try:
        check_folder(str(args.output), "--output")
        skipped: list = []
        examples = read_examples(args, skipped)
    except ValueError as error:  # UsageError, or InputError: a glob that matches nothing, a folder
        print(f"train-quality: {error}", file=sys.stderr)
        return 2
    for group in describe_skipped(skipped):
        print(
            f"train-quality: note: {group['file']}: {group['records']} records not read "
            f"({group['error']}: {group['example']})",
            file=sys.stderr,
        )
    targets = np.array([e.target for e in examples], dtype=np.float64)
    labels = (targets >= args.grade_threshold if args.graded else targets == 1).astype(np.int64)
    if labels.sum() < 2 or (1 - labels).sum() < 2:
        print("train-quality: need at least 2 positive and 2 negative examples", file=sys.stderr)
        return 2
    train_idx, valid_idx = split(examples, labels, args.validation_fraction, args.seed)
    args.output.mkdir(parents=True, exist_ok=True)
    texts = [e.text for e in examples]
    if args.model == "fasttext":
        from quality_models.fasttext_quality import load_fasttext_model, predict_positive

        try:
            path = train_fasttext(args, [texts[i] for i in train_idx], labels[train_idx], args.output)
        except RuntimeError as exc:  # fastText raises "Encountered NaN." when training diverges
            print(
                f"train-quality: fastText training failed ({exc}): too little or too repetitive data, "
                "or --lr too high; keep --word-ngrams >= 2",
                file=sys.stderr,
            )
            return 1
        scores = np.array(predict_positive(load_fasttext_model(path), [texts[i] for i in valid_idx]))
        settings = {k: getattr(args, k) for k in ("epoch", "lr", "dim", "word_ngrams", "min_count", "bucket")}
    else:
        from quality_models.embedders import load_embedder
        from quality_models.embedding_quality import LinearHead

        embedder = load_embedder(args.embedder)
        features = embedder.encode(texts)
        logistic = not args.graded
        fit_targets = labels if logistic else targets
        weight, bias = fit_head(
            features[train_idx], fit_targets[train_idx].astype(np.float64), logistic, args.l2
        )
        head = LinearHead(embedder.name, weight, bias, "logistic" if logistic else "linear")
        scores = head.score(features[valid_idx])
        settings = {"embedder": embedder.name, "dims": embedder.dim, "head": head.kind, "l2": args.l2}
    if not np.all(np.isfinite(scores)):
        print(
            "train-quality: the model predicts NaN (degenerate data or learning rate too high)",
            file=sys.stderr,
        )
        return 1
    threshold = 0.5 if args.model == "fasttext" or not args.graded else args.grade_threshold
    metrics = binary_metrics(labels[valid_idx], scores, threshold)
    data = describe_data(args, examples, skipped)
    if args.model == "embedding":
        head.info = {"training_data": data, "metrics": metrics, "settings": settings, "seed": args.seed}
        path = args.output / HEAD_FILE
        head.save(path)
    (args.output / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    write_card(args, argv, path, data, metrics, settings)
    print(
        f"validation n={metrics['n']} precision={metrics['precision']:.4f} recall={metrics['recall']:.4f} "
        f"auc={metrics['auc']:.4f}; wrote {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
