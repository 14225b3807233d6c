"""`length`: reject documents with too few or too many words or characters."""

from __future__ import annotations

from pipeline.document import KEEP, Document, Verdict, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register

# lid.176 labels of languages written without spaces between words.
UNSPACED_LANGUAGES = frozenset({"bo", "ja", "km", "lo", "my", "th", "wuu", "yue", "zh"})


def unspaced_caveat(languages: frozenset[str] | None, consequence: str) -> str:
    """A word-counting stage's note (`Stage.language_caveat`) for the languages written without
    spaces among `languages` (None: any): what `consequence` befalls their documents; '' for none."""
    unspaced = UNSPACED_LANGUAGES if languages is None else languages & UNSPACED_LANGUAGES
    if not unspaced:
        return ""
    return (
        f"words are split at spaces, so documents in {', '.join(sorted(unspaced))} (written without "
        f"spaces) {consequence}; leave those languages out of it (only_languages)"
    )


def count_words(text: str) -> int:
    """Whitespace-separated word count."""
    return len(text.split())


@register("length")
class LengthFilter(DocumentStage):
    """Keep documents whose word and character counts lie within bounds.

    Reasons: `too_few_words`, `too_many_words`, `too_few_chars`, `too_many_chars`.
    """

    reasons = ("too_few_words", "too_many_words", "too_few_chars", "too_many_chars")
    params = {
        "min_words": Param(int, 50, "minimum whitespace-separated words", min=0),
        "max_words": Param(int, 100_000, "maximum whitespace-separated words", min=1),
        "min_chars": Param(int, 0, "minimum characters", min=0),
        "max_chars": Param(int, 10_000_000, "maximum characters", min=1),
    }

    def configure(self) -> None:
        if self.min_words > self.max_words:
            raise ConfigError(f"min_words: {self.min_words} is above max_words {self.max_words}")
        if self.min_chars > self.max_chars:
            raise ConfigError(f"min_chars: {self.min_chars} is above max_chars {self.max_chars}")

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        return unspaced_caveat(languages, "are rejected as too_few_words") if self.min_words > 1 else ""

    def check(self, doc: Document) -> Verdict:
        chars = len(doc.text)
        if chars < self.min_chars:
            return reject("too_few_chars", f"chars={chars}<{self.min_chars}")
        if chars > self.max_chars:
            return reject("too_many_chars", f"chars={chars}>{self.max_chars}")
        words = doc.cached("whitespace_word_count", count_words)  # not text_analysis's spaCy count
        if words < self.min_words:
            return reject("too_few_words", f"words={words}<{self.min_words}")
        if words > self.max_words:
            return reject("too_many_words", f"words={words}>{self.max_words}")
        return KEEP
