"""`c4_quality` and `c4_badwords`: C4's line and document rules (Raffel et al. 2020).

`c4_quality` reproduces datatrove 0.10's `C4QualityFilter` (which follows the TFDS c4_utils code)
and edits the text: dropped lines disappear from the output. `c4_badwords` rejects documents
containing a word from the shipped per-language lists in `filters/data/toxicity/`.
"""

from __future__ import annotations

import re
from functools import cache

import xxhash

from filters import text_analysis as ta
from filters.language import check_language_codes
from filters.length import unspaced_caveat
from filters.text_analysis import DATA_DIR
from pipeline.document import KEEP, Document, Verdict, keep, reject
from pipeline.stages import DocumentStage, Param, register


@register("c4_quality")
class C4Quality(DocumentStage):
    """C4 rules: drop boilerplate lines (javascript, policy/cookies, < 3 words, very long words), then reject lorem ipsum, curly braces, too few sentences.

    Line rules, in the reference's order, on each stripped line: a word longer than
    `max_word_length` drops the line; citation markers ([1], [edit], [citation needed]) are
    removed; optionally a line without terminal punctuation is dropped (off in FineWeb); a line
    with fewer than `min_words_per_line` words is dropped; "lorem ipsum" rejects the document;
    "javascript" drops the line; "{" rejects the document; policy/cookie phrases drop the line.
    Kept lines are joined with newlines and, when that changes the text, written back with
    `doc.replace_text`. Sentences are counted on kept lines as spaCy's Sentencizer does.
    Reasons: `lorem_ipsum`, `curly_bracket`, `too_few_sentences`.
    """

    reasons = ("lorem_ipsum", "curly_bracket", "too_few_sentences")
    params = {
        "remove_citations": Param(bool, True, "remove [1], [edit] and [citation needed] markers"),
        "filter_no_terminal_punct": Param(
            bool, False, "drop lines not ending in . ? ! \" ' (or ending in ...); off in FineWeb"
        ),
        "min_num_sentences": Param(int, 5, "reject with fewer sentences in kept lines (0 disables)", min=0),
        "min_words_per_line": Param(int, 3, "drop lines with fewer whitespace-separated words", min=0),
        "max_word_length": Param(int, 1000, "drop lines containing a longer word (0 disables)", min=0),
        "filter_lorem_ipsum": Param(bool, True, "reject documents containing 'lorem ipsum'"),
        "filter_javascript": Param(bool, True, "drop lines mentioning 'javascript'"),
        "filter_curly_bracket": Param(bool, True, "reject documents containing '{' in a kept line"),
        "filter_policy": Param(bool, True, "drop lines with terms-of-use / privacy / cookie phrases"),
    }

    def configure(self) -> None:
        self._rules = (
            self.max_word_length,
            self.remove_citations,
            self.filter_no_terminal_punct,
            self.min_words_per_line,
            self.filter_lorem_ipsum,
            self.filter_javascript,
            self.filter_curly_bracket,
            self.filter_policy,
            self.min_num_sentences,
        )

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        if self.min_words_per_line <= 1 or not self.min_num_sentences:
            return ""
        return unspaced_caveat(languages, "lose every line and are rejected as too_few_sentences")

    def check(self, doc: Document) -> Verdict:
        reason, sentences, text = ta.c4_lines(doc, self._rules)
        if reason == "lorem_ipsum":
            return reject("lorem_ipsum", "'lorem ipsum' in a kept line")
        if reason == "curly_bracket":
            return reject("curly_bracket", "'{' in a kept line")
        if sentences < self.min_num_sentences:
            return reject("too_few_sentences", f"sentences={sentences}<{self.min_num_sentences}")
        return keep(doc.with_text(text.strip()))


# The same per-language lists as `toxicity` (badwords-py's, which take in LDNOOBW; see its
# LICENSE.md), so one curated set serves both stages.
BADWORDS_DIR = DATA_DIR / "toxicity"
# Words allowed because they are common sub-words in languages written without spaces (from C4).
BADWORDS_ALLOWLIST = {"ja": {"sm", "グロ", "女の子"}, "zh": {"性"}}
NO_SPACE_LANGUAGES = ("ja", "th", "zh")


@cache
def _badwords_pattern(language: str, extra: tuple[str, ...]) -> re.Pattern | None:
    """One regex per language: shipped list + extra words, matched between non-word characters."""
    path = BADWORDS_DIR / f"{language}.txt"
    words = set(extra)
    if path.exists():
        words.update(
            line.strip().lower() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        )
    words -= BADWORDS_ALLOWLIST.get(language, set())
    if not words:
        return None
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=lambda w: (-len(w), w)))
    if language in NO_SPACE_LANGUAGES:
        return re.compile(alternatives)
    return re.compile(rf"(?:\W|^)({alternatives})(?:\W|$)")


def available_badword_languages() -> list[str]:
    """Languages with a shipped list."""
    return sorted(path.stem for path in BADWORDS_DIR.glob("*.txt"))


@register("c4_badwords")
class C4BadWords(DocumentStage):
    """Reject documents containing a word from the language's bad-word list (C4's bad-word rule).

    C4's matching, with badwords-py's lists (the `toxicity` stage's), not C4's LDNOOBW lists: they
    hold LDNOOBW's words and more (English: 796 entries, some with a common inoffensive sense such
    as `hell`, `balls`, `abortion`), so this stage removes more than C4's did, and languages that
    LDNOOBW covers but badwords-py does not (zh, ar, fa, hi, ...) keep every document. The language
    is `doc.language` (set by the `language` stage) or `default_language`. Words match
    case-insensitively between non-word characters (anywhere for ja/th/zh). Languages without a
    list keep their documents. `keep_fraction` keeps that share of matching documents,
    chosen by a seeded hash of the document id (deterministic whatever the worker order).
    Reasons: `badwords`.
    """

    reasons = ("badwords",)
    params = {
        "default_language": Param(str, "en", "language for documents without doc.language"),
        "extra_words": Param(list[str], [], "words added to every language's list"),
        "keep_fraction": Param(float, 0.0, "fraction of matching documents kept anyway", min=0, max=1),
        "seed": Param(int, 0, "seed of the keep_fraction hash"),
    }

    def configure(self) -> None:
        check_language_codes([self.default_language], "default_language")
        self._extra = tuple(sorted(word.lower() for word in self.extra_words))

    def check(self, doc: Document) -> Verdict:
        language = doc.language or self.default_language
        pattern = _badwords_pattern(language, self._extra)
        if pattern is None:
            return KEEP
        found = pattern.search(doc.text.lower())
        if found is None:
            return KEEP
        if (
            self.keep_fraction
            and xxhash.xxh64_intdigest(doc.id.encode(), seed=self.seed) / 2**64 < self.keep_fraction
        ):
            return KEEP
        return reject("badwords", f"language={language} word={found.group(found.lastindex or 0).strip()!r}")
