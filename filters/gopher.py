"""`gopher_quality` and `gopher_repetition`: Gopher's document rules (Rae et al. 2021, table A1).

Both reproduce datatrove 0.10's `GopherQualityFilter` / `GopherRepetitionFilter` with their default
parameters (FineWeb's settings), on words split as spaCy's English tokenizer splits them
(`filters.text_analysis`), and share that analysis with the other filters.
"""

from __future__ import annotations

from filters import text_analysis as ta
from filters.length import unspaced_caveat
from pipeline.document import KEEP, Document, Verdict, reject
from pipeline.stages import ConfigError, DocumentStage, Param, non_english, register

STOP_WORDS = ["the", "be", "to", "of", "and", "that", "have", "with"]


@register("gopher_quality")
class GopherQuality(DocumentStage):
    """Gopher quality rules: word count, mean word length, symbols, bullets, ellipses, alphabetic words, stop words.

    Words are spaCy-English tokens; the word count and mean length use words with at least one
    non-punctuation character, the ratios use every token (as the reference does).
    Reasons: `too_few_words`, `too_many_words`, `short_mean_word_length`, `long_mean_word_length`,
    `too_many_hashes`, `too_many_ellipses`, `too_many_bullet_lines`, `too_many_ellipsis_lines`,
    `too_few_alpha_words`, `too_few_stop_words`.
    """

    reasons = (
        "too_few_words",
        "too_many_words",
        "short_mean_word_length",
        "long_mean_word_length",
        "too_many_hashes",
        "too_many_ellipses",
        "too_many_bullet_lines",
        "too_many_ellipsis_lines",
        "too_few_alpha_words",
        "too_few_stop_words",
    )
    params = {
        "min_words": Param(int, 50, "minimum words with a non-punctuation character", min=0),
        "max_words": Param(int, 100_000, "maximum words with a non-punctuation character", min=1),
        "min_avg_word_length": Param(float, 3.0, "minimum mean word length (characters)", min=0),
        "max_avg_word_length": Param(float, 10.0, "maximum mean word length (characters)", min=0),
        "max_symbol_word_ratio": Param(float, 0.1, "maximum '#' and maximum '...'/'…' per word", min=0),
        "max_bullet_lines_ratio": Param(
            float, 0.9, "maximum fraction of lines starting with • or -", min=0, max=1
        ),
        "max_ellipsis_lines_ratio": Param(
            float, 0.3, "maximum fraction of lines ending with ... or …", min=0, max=1
        ),
        "min_alpha_words_ratio": Param(float, 0.8, "minimum fraction of words with a letter", min=0, max=1),
        "min_stop_words": Param(int, 2, "minimum distinct stop words present", min=0),
        "stop_words": Param(list[str], STOP_WORDS, "stop words (matched case-sensitively, as the reference)"),
    }

    def configure(self) -> None:
        if self.min_words > self.max_words:
            raise ConfigError(f"min_words: {self.min_words} is above max_words {self.max_words}")
        if self.min_avg_word_length > self.max_avg_word_length:
            raise ConfigError(
                f"min_avg_word_length: {self.min_avg_word_length} is above max_avg_word_length "
                f"{self.max_avg_word_length}"
            )
        self._stop_words = frozenset(self.stop_words)

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        caveats = []
        others = non_english(languages)
        if others and self.min_stop_words and self._stop_words == frozenset(STOP_WORDS):
            caveats.append(
                f"its stop_words are Gopher's English ones, so documents in {others} are rejected "
                "as too_few_stop_words; give those languages a gopher_quality stage of their own "
                "(only_languages, stop_words in that language)"
            )
        if self.min_words:
            caveats.append(
                unspaced_caveat(languages, "are rejected as too_few_words or long_mean_word_length")
            )
        return "; ".join(filter(None, caveats))

    def check(self, doc: Document) -> Verdict:
        text = doc.text
        n_content, content_chars, n_alpha = ta.word_classes(doc)
        if n_content < self.min_words or n_content == 0:
            return reject("too_few_words", f"words={n_content}<{self.min_words}")
        if n_content > self.max_words:
            return reject("too_many_words", f"words={n_content}>{self.max_words}")
        mean_length = content_chars / n_content
        if mean_length < self.min_avg_word_length:
            return reject("short_mean_word_length", f"mean={mean_length:.2f}<{self.min_avg_word_length}")
        if mean_length > self.max_avg_word_length:
            return reject("long_mean_word_length", f"mean={mean_length:.2f}>{self.max_avg_word_length}")
        words = ta.words(doc)
        n_words = len(words)
        hashes = text.count("#") / n_words
        if hashes > self.max_symbol_word_ratio:
            return reject("too_many_hashes", f"hash/word={hashes:.3f}>{self.max_symbol_word_ratio}")
        ellipses = (text.count("...") + text.count("…")) / n_words
        if ellipses > self.max_symbol_word_ratio:
            return reject("too_many_ellipses", f"ellipsis/word={ellipses:.3f}>{self.max_symbol_word_ratio}")
        lines, bullet_lines, ellipsis_lines = ta.line_marks(doc)
        bullets = bullet_lines / lines
        if bullets > self.max_bullet_lines_ratio:
            return reject(
                "too_many_bullet_lines", f"bullet_lines={bullets:.3f}>{self.max_bullet_lines_ratio}"
            )
        ellipsis_lines = ellipsis_lines / lines
        if ellipsis_lines > self.max_ellipsis_lines_ratio:
            return reject(
                "too_many_ellipsis_lines",
                f"ellipsis_lines={ellipsis_lines:.3f}>{self.max_ellipsis_lines_ratio}",
            )
        alpha = n_alpha / n_words
        if alpha < self.min_alpha_words_ratio:
            return reject("too_few_alpha_words", f"alpha_words={alpha:.3f}<{self.min_alpha_words_ratio}")
        stop_words = len(self._stop_words.intersection(words))
        if stop_words < self.min_stop_words:
            return reject("too_few_stop_words", f"stop_words={stop_words}<{self.min_stop_words}")
        return KEEP


def _ngram_limits(key: str, value: list) -> list[tuple[int, float]]:
    """Validate a list of [n, max_fraction] pairs."""
    pairs = []
    for item in value:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], int)
            or isinstance(item[0], bool)
            or item[0] < 1
            or not isinstance(item[1], int | float)
            or not 0 <= item[1] <= 1
        ):
            raise ConfigError(
                f"{key}: expected [n, max_fraction] pairs with n >= 1 and 0 <= fraction <= 1, got {item!r}"
            )
        pairs.append((item[0], float(item[1])))
    return pairs


@register("gopher_repetition")
class GopherRepetition(DocumentStage):
    """Gopher repetition rules: duplicate lines/paragraphs, top n-gram and duplicated n-gram character fractions.

    Character fractions are over the whole text length. Lines split on runs of newlines,
    paragraphs on two or more newlines; n-grams are over spaCy-English words.
    Reasons: `empty`, `dup_para_frac`, `dup_para_char_frac`, `dup_line_frac`, `dup_line_char_frac`,
    `top_ngram_chars` (detail names n), `dup_ngram_chars` (detail names n).
    """

    reasons = (
        "empty",
        "dup_para_frac",
        "dup_para_char_frac",
        "dup_line_frac",
        "dup_line_char_frac",
        "top_ngram_chars",
        "dup_ngram_chars",
    )
    params = {
        "dup_line_frac": Param(float, 0.3, "maximum fraction of duplicate lines", min=0, max=1),
        "dup_para_frac": Param(float, 0.3, "maximum fraction of duplicate paragraphs", min=0, max=1),
        "dup_line_char_frac": Param(
            float, 0.2, "maximum character fraction in duplicate lines", min=0, max=1
        ),
        "dup_para_char_frac": Param(
            float, 0.2, "maximum character fraction in duplicate paragraphs", min=0, max=1
        ),
        "top_ngrams": Param(
            list, [[2, 0.2], [3, 0.18], [4, 0.16]], "[n, max character fraction of the most frequent n-gram]"
        ),
        "dup_ngrams": Param(
            list,
            [[5, 0.15], [6, 0.14], [7, 0.13], [8, 0.12], [9, 0.11], [10, 0.10]],
            "[n, max character fraction of duplicated n-grams]",
        ),
    }

    def configure(self) -> None:
        self._top = _ngram_limits("top_ngrams", self.top_ngrams)
        self._dup = _ngram_limits("dup_ngrams", self.dup_ngrams)

    def check(self, doc: Document) -> Verdict:
        text = doc.text
        if not text:
            return reject("empty", "no text")
        length = len(text)
        paragraphs, count, chars = ta.paragraph_duplicates(doc)
        if count / paragraphs > self.dup_para_frac:
            return reject("dup_para_frac", f"dup_paragraphs={count}/{paragraphs}>{self.dup_para_frac}")
        if chars / length > self.dup_para_char_frac:
            return reject(
                "dup_para_char_frac", f"dup_paragraph_chars={chars / length:.3f}>{self.dup_para_char_frac}"
            )
        lines, count, chars = ta.line_duplicates(doc)
        if count / lines > self.dup_line_frac:
            return reject("dup_line_frac", f"dup_lines={count}/{lines}>{self.dup_line_frac}")
        if chars / length > self.dup_line_char_frac:
            return reject(
                "dup_line_char_frac", f"dup_line_chars={chars / length:.3f}>{self.dup_line_char_frac}"
            )
        top = ta.top_ngram_chars(doc, tuple(n for n, _ in self._top))
        for (n, limit), chars in zip(self._top, top):
            fraction = chars / length
            if fraction > limit:
                return reject("top_ngram_chars", f"n={n} top_{n}gram_chars={fraction:.3f}>{limit}")
        repeated = ta.duplicated_ngram_chars(doc, tuple(n for n, _ in self._dup))
        for (n, limit), chars in zip(self._dup, repeated):
            fraction = chars / length
            if fraction > limit:
                return reject("dup_ngram_chars", f"n={n} dup_{n}gram_chars={fraction:.3f}>{limit}")
        return KEEP
