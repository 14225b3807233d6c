"""`quality`: one calibrated probability from the scorers' outputs and cheap document statistics.

scores[<name>] = sigmoid(w · standardized features + b), features = the scores named in the
weights file (e.g. `embedding_quality.informative`, `fasttext_quality`) and the STATS below. The
weights file (JSON) holds feature names, means, scales, weights, bias and how they were fitted
(benchmarks/quality_combine_fit.py; quality_models/models/quality-combined/README.md).
"""

from __future__ import annotations

import itertools
import json
import math
import operator
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


def doc_stats(text: str) -> dict[str, float]:
    """Cheap statistics (Gopher-style ratios) of one text, from its words and lines."""
    nwords, word_chars, lettered, stopwords, upper, digits = _word_counts(text)
    n = max(nwords, 1)
    lines = list(filter(None, map(str.strip, text.splitlines())))
    nlines = max(len(lines), 1)
    chars = max(len(text), 1)
    return {
        "log_words": math.log1p(nwords),
        "mean_word_length": word_chars / n,
        "alpha_word_fraction": lettered / n,
        "stopword_fraction": stopwords / n,
        "symbol_ratio": (text.count("#") + text.count("...") + text.count("…")) / n,
        "lines_end_punct": sum(map(_ENDS_PUNCT, lines)) / nlines,
        "bullet_lines": sum(map(_STARTS_BULLET, lines)) / nlines,
        "short_lines": sum(map((30).__gt__, map(len, lines))) / nlines,
        "duplicate_lines": 1.0 - len(set(lines)) / nlines if lines else 0.0,
        "log_lines": math.log1p(len(lines)),
        "log_words_per_line": math.log1p(nwords / nlines),
        "upper_fraction": upper / chars,
        "digit_fraction": digits / chars,
    }


def _word_counts(text: str) -> tuple[int, int, int, int, int, int]:
    """Words (str.split()'s), their characters, words with a letter, stop words, A-Z, digits (any script).

    ASCII text, the common case, is counted by byte translation, without regexes or lower-casing.
    """
    words = text.split()
    if not text.isascii():
        return (
            len(words),
            len("".join(words)),
            len(words) - len(_LETTERLESS_WORD.findall(text)),
            sum(map(_STOPWORDS.__contains__, map(str.lower, words))),
            len(_UPPER.findall(text)),
            len(_DIGIT.findall(text)),
        )
    data = text.encode("ascii")
    letters = data.translate(_LETTER_SHAPE, _NEITHER_LETTER_NOR_SPACE)
    return (
        len(words),
        len("".join(words)),
        letters.count(b" a") + letters.startswith(b"a"),
        sum(map(_STOPWORD_CASES.__contains__, words)),
        len(data) - len(data.translate(None, _ASCII_UPPER)),
        len(data) - len(data.translate(None, _ASCII_DIGITS)),
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
