"""`quality`: one calibrated probability from the scorers' outputs and cheap document statistics.

scores[<name>] = sigmoid(w · standardized features + b), features = the scores named in the
weights file (e.g. `embedding_quality.informative`, `fasttext_quality`) and the STATS below. The
weights file (JSON) holds feature names, means, scales, weights, bias and how they were fitted
(benchmarks/quality_combine_fit.py; quality_models/models/quality-combined/README.md).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register
from quality_models._paths import MODELS_DIR, PROJECT_DIR, resolve_model_path

DEFAULT_WEIGHTS = MODELS_DIR / "quality-combined" / "weights.json"
STATS = (
    "log_words",
    "mean_word_length",
    "alpha_word_fraction",
    "stopword_fraction",
    "symbol_ratio",
    "lines_end_punct",
    "bullet_lines",
    "short_lines",
    "duplicate_lines",
    "log_lines",
    "log_words_per_line",
    "upper_fraction",
    "digit_fraction",
)
_PUNCT_END = (".", "!", "?", '"', "'", ":", "”")
_BULLETS = ("•", "-", "*", "·", "–", "►")
# A whitespace-separated word without a letter: symbols, digits and underscores only.
_LETTERLESS_WORD = re.compile(r"(?<!\S)(?:[^\w\s]|[\d_])+(?!\S)")
_UPPER = re.compile(r"[A-Z]")
_DIGIT = re.compile(r"\d")
_ASCII_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_ASCII_DIGITS = b"0123456789"
# Gopher's stop words (its quality filter requires at least two of them).
_STOPWORDS = frozenset(("the", "be", "to", "of", "and", "that", "have", "with"))


def doc_stats(text: str) -> dict[str, float]:
    """Cheap statistics (Gopher-style ratios) of one text, from its words and lines."""
    words = text.split()
    n = max(len(words), 1)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    nlines = max(len(lines), 1)
    chars = max(len(text), 1)
    upper, digits = _upper_and_digits(text)
    return {
        "log_words": math.log1p(len(words)),
        "mean_word_length": sum(map(len, words)) / n,
        "alpha_word_fraction": (len(words) - len(_LETTERLESS_WORD.findall(text))) / n,
        "stopword_fraction": sum(map(_STOPWORDS.__contains__, map(str.lower, words))) / n,
        "symbol_ratio": (text.count("#") + text.count("...") + text.count("…")) / n,
        "lines_end_punct": sum(line.endswith(_PUNCT_END) for line in lines) / nlines,
        "bullet_lines": sum(line.startswith(_BULLETS) for line in lines) / nlines,
        "short_lines": sum(len(line) < 30 for line in lines) / nlines,
        "duplicate_lines": 1.0 - len(set(lines)) / nlines if lines else 0.0,
        "log_lines": math.log1p(len(lines)),
        "log_words_per_line": math.log1p(len(words) / nlines),
        "upper_fraction": upper / chars,
        "digit_fraction": digits / chars,
    }


def _upper_and_digits(text: str) -> tuple[int, int]:
    """Counts of A-Z and of digits (any script); by byte deletion when the text is ASCII."""
    if not text.isascii():
        return len(_UPPER.findall(text)), len(_DIGIT.findall(text))
    data = text.encode("ascii")
    return len(data) - len(data.translate(None, _ASCII_UPPER)), len(data) - len(
        data.translate(None, _ASCII_DIGITS)
    )


def load_weights(path) -> dict[str, Any]:
    """The weights file, checked; RuntimeError naming it when missing or malformed."""
    try:
        model = json.loads(path.read_text(encoding="utf-8"))
        sizes = {len(model[k]) for k in ("features", "mean", "scale", "weight")}
        float(model["bias"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"quality weights {path}: missing or malformed ({exc})") from exc
    if len(sizes) != 1:
        raise RuntimeError(f"quality weights {path}: features, mean, scale and weight differ in length")
    return model


def combine(model: dict[str, Any], doc: Document) -> float:
    """P(useful) for one document; KeyError naming the first missing input score."""
    stats = None
    logit = float(model["bias"])
    for name, mean, scale, weight in zip(model["features"], model["mean"], model["scale"], model["weight"]):
        if name in STATS:
            stats = stats or doc_stats(doc.text)
            value = stats[name]
        else:
            value = doc.scores.get(name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise KeyError(f"input score {name!r} missing (got {value!r})")
        logit += weight * (float(value) - mean) / scale
    return 1.0 / (1.0 + math.exp(-min(max(logit, -60.0), 60.0)))


@register("quality")
class CombinedQuality(DocumentStage):
    """Combine earlier scores and document statistics into one calibrated P(useful); writes scores[<name>].

    Needs the scores its weights file names (the default: `fasttext_quality` and the
    `embedding_quality` heads informative, depth, toxic) from earlier stages; a document
    lacking one fails with the name of the missing score. Never rejects (reasons: none).
    """

    reasons = ()
    params = {
        "model": Param(
            str,
            str(DEFAULT_WEIGHTS.relative_to(PROJECT_DIR)),
            "weights file (.json) from benchmarks/quality_combine_fit.py (relative: to the project)",
        ),
    }

    def configure(self) -> None:
        path = resolve_model_path(self.model)
        if not path.is_file():
            raise ConfigError(f"model: quality weights file not found: {self.model}")
        try:
            self._model = load_weights(path)
        except RuntimeError as exc:
            raise ConfigError(f"model: {exc}") from None

    def required_scores(self) -> dict[str, list[str]]:
        """Scores earlier stages must write, by parameter (checked when the recipe loads)."""
        return {"model": [name for name in self._model["features"] if name not in STATS]}

    def check(self, doc: Document) -> Verdict:
        return keep(doc.with_scores({self.name: combine(self._model, doc)}))
