"""`quality`: one calibrated probability from the scorers' outputs and cheap document statistics.

scores[<name>] = sigmoid(w · standardized features + b), features = the scores named in the
weights file (e.g. `embedding_quality.informative`, `fasttext_quality`) and the STATS below. The
weights file (JSON) holds feature names, means, scales, weights, bias and how they were fitted
(benchmarks/quality_combine_fit.py; quality_models/models/quality-combined/README.md), and
optionally `low`/`high`: each feature is first clipped to the range of the pages it was fitted
on, so a document unlike any of them (one 100,000-character "word", 200,000 words on one line)
is not pushed to 0 or 1 by a linear term far outside what the fit saw.
A batch is scored at once: the statistics' counts come from one C pass per text
(`_stats_native.c`; `reference_counts` is the Python reference and fallback), the logit from a
few array operations over the batch.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
import warnings
from typing import Any

import numpy as np

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register
from quality_models._paths import (
    MODELS_DIR,
    PROJECT_DIR,
    english_model_caveat,
    is_shipped,
    resolve_model_path,
)

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
STATS_SET = frozenset(STATS)
_PUNCT_END = (".", "!", "?", '"', "'", ":", "”")
_BULLETS = ("•", "-", "*", "·", "–", "►")
# A whitespace-separated word without a letter: symbols, digits and underscores only. Unrolled and
# possessive: `(?:[^\w\s]|[\d_])+` matched the same words but kept regex-engine state per
# character (1.1 GB for one 10 MB word).
_LETTERLESS_WORD = re.compile(r"(?<!\S)(?=\S)[^\w\s]*+(?:[\d_][^\w\s]*+)*+(?!\S)")
_UPPER = re.compile(r"[A-Z]")
_DIGIT = re.compile(r"\d")
_ASCII_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_ASCII_DIGITS = b"0123456789"
_ASCII_SPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.split() splits ASCII text on
# ASCII text with only letters ("a") and whitespace (" ") left: one b" a" per word with a letter,
# counted without making an object per word.
_LETTER_SHAPE = bytes.maketrans(bytes(range(128)), bytes(32 if b in _ASCII_SPACE else 97 for b in range(128)))
_NEITHER_LETTER_NOR_SPACE = bytes(b for b in range(128) if not (chr(b).isalpha() or b in _ASCII_SPACE))
_ENDS_PUNCT = operator.methodcaller("endswith", _PUNCT_END)
_STARTS_BULLET = operator.methodcaller("startswith", _BULLETS)
# Gopher's stop words (its quality filter requires at least two of them).
_STOPWORDS = frozenset(("the", "be", "to", "of", "and", "that", "have", "with"))
# Every ASCII spelling of them ("The", "THE", ...): ASCII words are looked up without lower-casing.
_STOPWORD_CASES = frozenset(
    "".join(spelling) for word in _STOPWORDS for spelling in itertools.product(*zip(word, word.upper()))
)


COUNTS = (
    "words",
    "word_chars",
    "lettered_words",
    "stopwords",
    "symbols",
    "lines",
    "lines_end_punct",
    "bullet_lines",
    "short_lines",
    "distinct_lines",
    "upper",
    "digits",
    "chars",
)


def stats_matrix(texts: list[str]) -> np.ndarray:
    """The STATS of each text, one float64 row each (columns in STATS order), from one pass per text."""
    c = _counts(texts).astype(np.float64)
    w, lines = (c[:, COUNTS.index(name)] for name in ("words", "lines"))
    n, nlines, chars = np.maximum(w, 1.0), np.maximum(lines, 1.0), np.maximum(c[:, -1], 1.0)
    col = dict(zip(COUNTS, c.T))
    duplicate = np.where(lines > 0, 1.0 - col["distinct_lines"] / nlines, 0.0)
    return np.column_stack(
        [
            np.log1p(w),
            col["word_chars"] / n,
            col["lettered_words"] / n,
            col["stopwords"] / n,
            col["symbols"] / n,
            col["lines_end_punct"] / nlines,
            col["bullet_lines"] / nlines,
            col["short_lines"] / nlines,
            duplicate,
            np.log1p(lines),
            np.log1p(w / nlines),
            col["upper"] / chars,
            col["digits"] / chars,
        ]
    )


def doc_stats(text: str) -> dict[str, float]:
    """Cheap statistics (Gopher-style ratios) of one text, from its words and lines."""
    return dict(zip(STATS, stats_matrix([text])[0].tolist()))


def reference_counts(text: str) -> tuple[int, ...]:
    """The COUNTS of one text in Python: str.split() words, str.splitlines() lines, stripped, non-empty.

    What `_stats_native.counts` computes (and the fallback without it); ASCII text is counted by
    byte translation, without regexes or lower-casing.
    """
    words = text.split()
    lines = list(filter(None, map(str.strip, text.splitlines())))
    if text.isascii():
        data = text.encode("ascii")
        letters = data.translate(_LETTER_SHAPE, _NEITHER_LETTER_NOR_SPACE)
        lettered = letters.count(b" a") + letters.startswith(b"a")
        stopwords = sum(map(_STOPWORD_CASES.__contains__, words))
        upper = len(data) - len(data.translate(None, _ASCII_UPPER))
        digits = len(data) - len(data.translate(None, _ASCII_DIGITS))
    else:
        lettered = len(words) - len(_LETTERLESS_WORD.findall(text))
        stopwords = sum(map(_STOPWORDS.__contains__, map(str.lower, words)))
        upper, digits = len(_UPPER.findall(text)), len(_DIGIT.findall(text))
    return (
        len(words),
        len("".join(words)),
        lettered,
        stopwords,
        text.count("#") + text.count("...") + text.count("…"),
        len(lines),
        sum(map(_ENDS_PUNCT, lines)),
        sum(map(_STARTS_BULLET, lines)),
        sum(map((30).__gt__, map(len, lines))),
        len(set(lines)),
        upper,
        digits,
        len(text),
    )


def _load_counts():
    """`_stats_native.counts` as an (n, COUNTS) int64 array, or the Python reference (warning once)."""
    try:
        from quality_models._stats_native import counts
    except ImportError as error:
        warnings.warn(
            f"quality_models._stats_native is not built ({error}); document statistics run in Python (slower)",
            RuntimeWarning,
            stacklevel=2,
        )
        return lambda texts: np.array([reference_counts(t) for t in texts], dtype=np.int64).reshape(
            -1, len(COUNTS)
        )
    return lambda texts: np.frombuffer(counts(texts), dtype=np.int64).reshape(-1, len(COUNTS))


_counts = _load_counts()


def load_weights(path) -> dict[str, Any]:
    """The weights file, checked; RuntimeError naming it when missing or malformed."""
    try:
        model = json.loads(path.read_text(encoding="utf-8"))
        sizes = {len(model[k]) for k in ("features", "mean", "scale", "weight")}
        float(model["bias"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"quality weights {path}: missing or malformed ({exc})") from exc
    if "low" in model or "high" in model:
        sizes |= {len(model.get(k, ())) for k in ("low", "high")}
    if len(sizes) != 1:
        raise RuntimeError(
            f"quality weights {path}: features, mean, scale, weight (low, high) differ in length"
        )
    features = model["features"]
    if not all(isinstance(name, str) and name for name in features):
        raise RuntimeError(f"quality weights {path}: every feature must be a name (a score or a statistic)")
    if len(set(features)) != len(features):
        raise RuntimeError(f"quality weights {path}: a feature is named twice")
    for key in ("mean", "scale", "weight", "bias", "low", "high"):
        values = model.get(key, [])
        if not all(_is_finite_number(v) for v in (values if isinstance(values, list) else [values])):
            raise RuntimeError(f"quality weights {path}: {key} holds something other than finite numbers")
    if not all(scale > 0 for scale in model["scale"]):
        raise RuntimeError(f"quality weights {path}: every scale must be above 0")
    if any(low > high for low, high in zip(model.get("low", ()), model.get("high", ()))):
        raise RuntimeError(f"quality weights {path}: a feature's low is above its high")
    return model


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def combine(model: dict[str, Any], docs: list[Document]) -> np.ndarray:
    """P(useful) for each document, as one batch; KeyError naming the first missing input score."""
    stats = stats_matrix([d.text for d in docs]) if not STATS_SET.isdisjoint(model["features"]) else None
    logit = np.full(len(docs), float(model["bias"]))
    n = len(model["features"])
    bounds = zip(model.get("low", [-math.inf] * n), model.get("high", [math.inf] * n))
    columns = zip(model["features"], model["mean"], model["scale"], model["weight"], bounds)
    for name, mean, scale, weight, (low, high) in columns:
        if name in STATS_SET:
            values = stats[:, STATS.index(name)]
        else:
            values = _input_score(name, [d.scores.get(name) for d in docs])
        logit += weight * (np.clip(values, low, high) - mean) / scale
    return 1.0 / (1.0 + np.exp(-np.clip(logit, -60.0, 60.0)))


def _input_score(name: str, raw: list[Any]) -> np.ndarray:
    """One input score of the batch as float64; KeyError if a document lacks it or it is not finite."""
    if set(map(type, raw)) <= {float, int} or all(isinstance(v, (int, float)) for v in raw):
        values = np.array(raw, dtype=np.float64)
        if np.isfinite(values).all():
            return values
    bad = next(v for v in raw if not isinstance(v, (int, float)) or not math.isfinite(v))
    raise KeyError(f"input score {name!r} missing (got {bad!r})")


@register("quality")
class CombinedQuality(DocumentStage):
    """Combine earlier scores and document statistics into one calibrated P(useful); writes scores[<name>].

    Needs the scores its weights file names (the default: `fasttext_quality` and the
    `embedding_quality` heads informative, depth, toxic) from earlier stages; a document
    lacking one fails with the name of the missing score. Never rejects (reasons: none).
    """

    reasons = ()
    writes_scores = True
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

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        """Its shipped weights were fit on English pages (English stop words among its features)."""
        return english_model_caveat(languages) if is_shipped(resolve_model_path(self.model)) else ""

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        values = combine(self._model, docs).tolist() if docs else []
        return [keep(doc.with_scores({self.name: value})) for doc, value in zip(docs, values)]
