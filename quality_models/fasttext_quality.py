"""`fasttext_quality`: DCLM-style fastText quality classifier; writes P(high quality) to `scores`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register
from quality_models._paths import (
    MODELS_DIR,
    PROJECT_DIR,
    english_model_caveat,
    is_shipped,
    resolve_model_path,
)

DEFAULT_FASTTEXT_MODEL = MODELS_DIR / "fasttext-quality" / "model.bin"
POSITIVE_LABEL = "__label__hq"
NEGATIVE_LABEL = "__label__lq"
MAX_CHARS = 100_000

# Line breaks (fastText scores one line) and the Unicode spaces fastText does not split on: text
# whose words are joined by no-break spaces (HTML `&nbsp;`) was one long unknown token (score 0).
_TO_SPACE = str.maketrans(
    dict.fromkeys(
        "\n\r\x0b\x0c\x85\u2028\u2029\u00a0\u1680\u202f\u205f\u3000"
        + "".join(map(chr, range(0x2000, 0x200B))),
        " ",
    )
)


def normalize_for_fasttext(text: str) -> str:
    """The text lower-cased on one line, Unicode spaces made plain (DCLM joins lines the same way).

    The same normalization is used for training and scoring. fastText splits on whitespace itself,
    so no Python tokenization is needed: this keeps scoring above 10k 3 KB documents/s per core.
    Only the first MAX_CHARS characters count.
    """
    return text[:MAX_CHARS].lower().translate(_TO_SPACE)


def load_fasttext_model(path: Path) -> Any:
    """Load a fastText model, raising RuntimeError naming the file when it is missing or corrupt."""
    import fasttext

    if not path.is_file():
        raise RuntimeError(f"fastText model file not found: {path}")
    fasttext.FastText.eprint = lambda *args, **kwargs: None  # silence the load_model banner
    try:
        model = fasttext.load_model(str(path))
    except (ValueError, RuntimeError, MemoryError) as exc:
        raise RuntimeError(f"fastText model file {path} is corrupt or not a fastText model: {exc}") from exc
    labels = model.get_labels()
    if POSITIVE_LABEL not in labels:
        shown = ", ".join(labels[:4]) + (f" and {len(labels) - 4:,} more" if len(labels) > 4 else "")
        raise RuntimeError(f"fastText model {path} has no {POSITIVE_LABEL} label (labels: {shown})")
    return model


def predict_positive(model: Any, texts: list[str]) -> list[float]:
    """P(high quality) for each raw text, predicted in one batch: with two labels from the top one,
    with more from all of them (1 - P(top) is P(hq) only when hq is the other label)."""
    if not texts:
        return []
    normalized = [normalize_for_fasttext(t) for t in texts]
    if len(model.get_labels()) > 2:
        labels, probs = model.predict(normalized, k=-1)
        return [_unit(dict(zip(lab, p)).get(POSITIVE_LABEL, 0.0)) for lab, p in zip(labels, probs)]
    labels, probs = model.predict(normalized, k=1)
    return [_unit(p[0]) if lab[0] == POSITIVE_LABEL else _unit(1.0 - p[0]) for lab, p in zip(labels, probs)]


def _unit(probability: float) -> float:
    return float(min(max(probability, 0.0), 1.0))


@register("fasttext_quality")
class FastTextQuality(DocumentStage):
    """Score documents with a fastText quality classifier (DCLM style); writes scores[<name>].

    The score is the probability of the high-quality label, in [0, 1]. Never rejects (reasons:
    none); `score_threshold` decides. The default model is shipped in quality_models/models/.
    """

    reasons = ()
    writes_scores = True
    params = {
        "model": Param(
            str,
            str(DEFAULT_FASTTEXT_MODEL.relative_to(PROJECT_DIR)),
            "fastText .bin/.ftz model (relative: to the project)",
        ),
    }

    def configure(self) -> None:
        path = resolve_model_path(self.model)
        if not path.is_file():
            raise ConfigError(f"model: fastText model file not found: {self.model}")
        if path.resolve() != DEFAULT_FASTTEXT_MODEL.resolve():  # loaded now: a wrong file stops the recipe
            try:
                load_fasttext_model(path)
            except RuntimeError as error:
                raise ConfigError(f"model: {error}") from None
        self._model = None

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        return english_model_caveat(languages) if is_shipped(resolve_model_path(self.model)) else ""

    def setup(self) -> None:
        self._model = load_fasttext_model(resolve_model_path(self.model))

    def __getstate__(self) -> dict[str, Any]:
        # The loaded model is per worker: never pickle it with the stage.
        return {**self.__dict__, "_model": None}

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        self.require_setup(self._model)
        scores = predict_positive(self._model, [d.text for d in docs])
        return [keep(doc.with_scores({self.name: score})) for doc, score in zip(docs, scores)]
