"""Per-document text analysis shared by consecutive filters through `Document.cached`.

Every helper here takes a `Document` and memoizes its result in `doc.cache`, so a chain of
filters (gopher_repetition → gopher_quality → c4_quality → fineweb_quality) splits the text into
words, lines and paragraphs once per text version instead of once per filter.

Words: the reference filters (datatrove) split words with spaCy's English tokenizer. `split_words`
reproduces that tokenizer without spaCy: it runs spaCy's own algorithm (special cases, then
prefixes/suffixes, then URLs, then infixes) with spaCy's own patterns and exception table
(`data/spacy_en_tokenizer.json`, MIT, see `data/LICENSE.md`) on each whitespace-separated chunk
(spaCy matches multi-token special cases over the whole text: one spanning a single space blocks
an overlapping one there, not here; README, Known issues),
and memoizes chunks, so common words cost one lookup. The C extension splits the commonest unseen
chunk shapes itself (letters with at most an opening bracket or quote before and a punctuation mark
or 's after, when no special case is involved) and sends every other chunk to that Python tokenizer.
`benchmarks/filters_fidelity.py` measures its agreement with spaCy.

Speed: the hot loops (the chunk walk of `split_words`, C4's, Gopher's and FineWeb's line rules,
symbol/alphabetic word counts, n-gram statistics) run in the C extension `filters._text_native`,
built by `pip install` from `_text_native.c`. `Reference` is the pure-Python version of the same
functions: the tests hold the two equal, and it is used, with a warning, when the extension was not
built.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from collections import Counter
from functools import lru_cache
from itertools import accumulate
from pathlib import Path

from pipeline.document import Document

DATA_DIR = Path(__file__).resolve().parent / "data"

# datatrove.utils.text.PUNCTUATION and TERMINAL_PUNCTUATION (Apache-2.0), which decide what a
# "symbol word" is (gopher_quality) and which line endings count as punctuation (fineweb_quality);
# PUNCTUATION is also what MinHash's text normalization blanks out (`dedup.signatures`).
PUNCTUATION = (
    "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»"
    + "".join(map(chr, (x for a, b in ((0, 9), (11, 13), (13, 32), (127, 160)) for x in range(a, b))))
)
_PUNCT_DATA = json.loads((DATA_DIR / "punctuation.json").read_text(encoding="utf-8"))
TERMINAL_PUNCTUATION = frozenset(_PUNCT_DATA["terminal_punctuation (datatrove.utils.text, Apache-2.0)"])
PUNCTUATION_SET = frozenset(PUNCTUATION) | TERMINAL_PUNCTUATION
# spaCy's Sentencizer default punctuation: a token equal to one of these ends a sentence.
SENTENCE_END_CHARS = frozenset(_PUNCT_DATA["sentence_end (spaCy Sentencizer.default_punct_chars, MIT)"])

# C4's line rules (datatrove 0.10 `C4QualityFilter`, after TFDS c4_utils): citation markers removed
# from lines, and the phrases that drop a line.
CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
WHITESPACE_RUN = re.compile(r"(\s+)")
END_PUNCTUATION = (".", "?", "!", '"', "'")
POLICY_SUBSTRINGS = (
    "terms of use",
    "privacy policy",
    "cookie policy",
    "uses cookies",
    "use of cookies",
    "use cookies",
)

# Chunks memoized per process: 200,000 chunks of 32 random punctuation marks and digits (many
# tokens each, the costly shape) held 79 MB. A longer chunk (a long URL, a base64 blob) is memoized
# only while the longer ones memoized hold fewer than LONG_CHUNK_BUDGET characters and tokens:
# memoized without bound, 4,000 inline images of 50 KB held 560 MB; never memoized, pages repeating
# long URLs or hyphen chains split 12-52 times slower. The C memo (MEMO_MAX_CHARS in
# _text_native.c, the same 32) holds only the short ones; it finds the long ones in this cache.
_CHUNK_CACHE_LIMIT = 200_000
MAX_CACHED_CHUNK = 32
LONG_CHUNK_BUDGET = 4_000_000
AFFIX_WINDOW = 64  # characters at the start of a long piece searched for a prefix
# Characters at the end of a long piece searched for a suffix: wider than every suffix rule but the
# unbounded `\.\.+` (5 at most: `km²` after a digit; tests/filters/test_text_analysis.py checks),
# so a match that may go on starts at the window's first character. The suffix pattern is tried at
# every position of the window: 64 characters cost ~25 us a step, 8 about 4.
SUFFIX_WINDOW = 8
URL_USERINFO = r"(?:\S+(?::\S*)?@)?"  # spaCy's URL pattern's optional "user:password@"


class _SpacyEnglishTokenizer:
    """spaCy's English tokenizer algorithm on one whitespace-free chunk, in pure Python."""

    def __init__(self) -> None:
        spec = json.loads((DATA_DIR / "spacy_en_tokenizer.json").read_text(encoding="utf-8"))
        self.prefix_search = re.compile(spec["prefix"]).search
        self.suffix_search = re.compile(spec["suffix"]).search
        self.infix_finditer = re.compile(spec["infix"]).finditer
        # The user-info part `\S+(?::\S*)?@` says "anything before an '@'" (':' is \S too), and only
        # whether the anchored pattern matches is asked: written `\S+?@` it tries each '@' once,
        # where spaCy's form backtracked in quadratic time over a long chunk ("http://" x 8,000 and
        # "@x": 6 s); without an '@' the part cannot match and is left out.
        self.url_match = re.compile(spec["url"].replace(URL_USERINFO, r"(?:\S+?@)?", 1)).match
        self.url_match_without_userinfo = re.compile(spec["url"].replace(URL_USERINFO, "", 1)).match
        self.specials: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in spec["specials"].items()}
        self.longest_special = max(map(len, self.specials), default=0)
        # A run of one character longer than this is split without the affix loop (`_run_tokens`).
        self.run_check = AFFIX_WINDOW + SUFFIX_WINDOW + self.longest_special + 2
        self.run_steps: dict[str, tuple[int, int]] = {}  # per character: (prefix, suffix) peeled
        self.cache: dict[str, tuple[str, ...]] = {}
        self.long_held = 0  # characters and tokens of the memoized chunks over MAX_CACHED_CHUNK
        # spaCy also matches special cases that affix rules split apart (":)", "''", "Minn.")
        # against the token sequence afterwards; key them by that split.
        no_specials: dict[str, tuple[str, ...]] = {}
        self.merges: dict[tuple[str, ...], str] = {}
        for orth in self.specials:
            split = self._tokenize(orth, no_specials)
            if len(split) > 1:
                self.merges[split] = orth
        self.longest_merge = max(map(len, self.merges), default=0)
        # where a merge may start: its first token, and its first two
        self.merge_firsts = frozenset(split[0] for split in self.merges)
        self.merge_heads = frozenset(split[:2] for split in self.merges)

    def tokens(self, chunk: str) -> tuple[str, ...]:
        """Tokens of a chunk without whitespace, memoized."""
        found = self.cache.get(chunk)
        if found is None:
            found = self._tokenize(chunk, self.specials)
            if len(found) > 1:
                found = self._merge_specials(found)
            if len(self.cache) < _CHUNK_CACHE_LIMIT:
                size = len(chunk) + len(found) if len(chunk) > MAX_CACHED_CHUNK else 0
                if self.long_held + size <= LONG_CHUNK_BUDGET:
                    self.cache[chunk] = found
                    self.long_held += size
        return found

    def _tokenize(self, string: str, specials: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        special = specials.get(string)
        if special is not None:
            return special
        if string.isalpha():  # no affix or infix rule matches letters only
            return (string,)
        if len(string) > self.run_check and (run := self._run_tokens(string, specials)) is not None:
            return run
        prefixes: list[str] = []
        suffixes: list[str] = []
        string = self._split_affixes(string, prefixes, suffixes, specials)
        middle: tuple[str, ...] = ()
        if string:
            special = specials.get(string)
            if special is not None:
                middle = special
            elif (self.url_match if "@" in string else self.url_match_without_userinfo)(string):
                middle = (string,)
            else:
                middle = tuple(self._split_infixes(string))
        return (*prefixes, *middle, *reversed(suffixes))

    def _run_tokens(self, string: str, specials: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
        """Tokens of `string`, longer than `run_check`, when it is one character repeated whose
        affix rules peel a prefix shorter than AFFIX_WINDOW and/or a suffix shorter than SUFFIX_WINDOW
        (runs of `_`, `'`, `=`: a step of `_split_affixes` per character or two); else None.

        Past `run_check` characters every step of `_split_affixes` sees the same windows of the
        same character, so it peels the same prefix and suffix until the run is that short: the
        steps are counted, not taken, and what is left is split as usual.
        """
        first, length = string[0], len(string)
        if string.count(first) != length:
            return None
        step = self.run_steps.get(first)
        if step is None:
            probe = first * (self.run_check + 2)
            prefix = self._prefix_length(probe, 0, len(probe))
            suffix = self._suffix_length(probe, prefix, len(probe))
            step = (prefix, suffix) if prefix < AFFIX_WINDOW and suffix < SUFFIX_WINDOW else (0, 0)
            self.run_steps[first] = step
        prefix, suffix = step
        peeled = prefix + suffix
        if not peeled:
            return None
        steps = (length - self.run_check + peeled - 1) // peeled
        rest = self._tokenize(first * (length - steps * peeled), specials)
        prefixes = (first * prefix,) * steps if prefix else ()
        suffixes = (first * suffix,) * steps if suffix else ()
        return prefixes + rest + suffixes

    def _split_affixes(
        self, string: str, prefixes: list[str], suffixes: list[str], specials: dict[str, tuple[str, ...]]
    ) -> str:
        """spaCy `Tokenizer._split_affixes`: peel prefixes and suffixes until none or a special case.

        The same decisions, in linear time: spaCy slices the string and searches it whole at every
        step, so a long run of punctuation ('<' * 40,000: 115 s) took quadratic time. Here the
        piece is [start, end) of `string`, a special case is looked up only for a piece short enough
        to be one, and prefixes and suffixes are searched in a window at the piece's ends
        (`_prefix_length`, `_suffix_length`)."""
        start, end, last_size = 0, len(string), 0
        while start < end and end - start != last_size:
            if self._is_special(string, start, end, specials):
                break
            last_size = end - start
            pre_len = self._prefix_length(string, start, end)
            if pre_len and start + pre_len < end and self._is_special(string, start + pre_len, end, specials):
                prefixes.append(string[start : start + pre_len])
                return string[start + pre_len : end]
            suf_len = self._suffix_length(string, start + pre_len, end)
            if suf_len and start < end - suf_len and self._is_special(string, start, end - suf_len, specials):
                suffixes.append(string[end - suf_len : end])
                return string[start : end - suf_len]
            if pre_len and suf_len and pre_len + suf_len <= end - start:
                prefixes.append(string[start : start + pre_len])
                suffixes.append(string[end - suf_len : end])
                start, end = start + pre_len, end - suf_len
            elif pre_len:
                prefixes.append(string[start : start + pre_len])
                start += pre_len
            elif suf_len:
                suffixes.append(string[end - suf_len : end])
                end -= suf_len
        return string[start:end]

    def _is_special(self, string: str, start: int, end: int, specials: dict[str, tuple[str, ...]]) -> bool:
        return end - start <= self.longest_special and string[start:end] in specials

    def _prefix_length(self, string: str, start: int, end: int) -> int:
        """Length of the prefix rule's match at the start of [start, end), searched in the first
        AFFIX_WINDOW characters; a match reaching the window's end may go on (or a lookahead may
        see past it), so then the whole piece is searched."""
        head = string[start : min(end, start + AFFIX_WINDOW)]
        match = self.prefix_search(head)
        if match and match.end() == len(head) and start + len(head) < end:
            match = self.prefix_search(string[start:end])
        return match.end() - match.start() if match else 0

    def _suffix_length(self, string: str, start: int, end: int) -> int:
        """Length of the suffix rule's match at the end of [start, end). Searched from
        SUFFIX_WINDOW characters before the end (a lookbehind still sees the characters before);
        a match from the window's first character may begin earlier, so then the whole piece is
        searched, as is a piece no longer than the window."""
        if end - start <= SUFFIX_WINDOW:
            match = self.suffix_search(string[start:end])
        else:
            window = end - SUFFIX_WINDOW
            match = self.suffix_search(string, window, end)
            if match and match.start() == window:
                match = self.suffix_search(string[start:end])
        return match.end() - match.start() if match else 0

    def _merge_specials(self, tokens: tuple[str, ...]) -> tuple[str, ...]:
        """spaCy `Tokenizer._apply_special_cases`: longest special-case token runs win, then earliest
        (its `len_start_cmp`); a run overlapping one chosen before is not merged, and still blocks
        those after it from its tokens."""
        matches = []
        firsts, heads = self.merge_firsts, self.merge_heads
        starts = [
            i for i, token in enumerate(tokens[:-1]) if token in firsts and (token, tokens[i + 1]) in heads
        ]
        for start in starts:
            for end in range(start + 2, min(len(tokens), start + self.longest_merge) + 1):
                orth = self.merges.get(tokens[start:end])
                if orth is not None:
                    matches.append((end - start, start, orth))
        if not matches:
            return tokens
        seen: set[int] = set()
        chosen = []
        for length, start, orth in sorted(matches, key=lambda match: (-match[0], match[1])):
            if start not in seen and start + length - 1 not in seen:
                chosen.append((start, length, orth))
            seen.update(range(start, start + length))
        out: list[str] = []
        position = 0
        for start, length, orth in sorted(chosen):
            out.extend(tokens[position:start])
            out.extend(self.specials[orth])
            position = start + length
        out.extend(tokens[position:])
        return tuple(out)

    def _split_infixes(self, string: str) -> list[str]:
        """spaCy `Tokenizer._attach_tokens`: split at infixes (hyphens between letters, ...)."""
        out: list[str] = []
        start = 0
        for match in self.infix_finditer(string):
            infix_start, infix_end = match.start(), match.end()
            if infix_start == 0:
                continue
            if infix_start != start:
                out.append(string[start:infix_start])
            if infix_start != infix_end:
                out.append(string[infix_start:infix_end])
            start = infix_end
        if start < len(string):
            out.append(string[start:])
        return out


@lru_cache(maxsize=1)
def _tokenizer() -> _SpacyEnglishTokenizer:
    return _SpacyEnglishTokenizer()


class Reference:
    """The pure-Python reference of `filters._text_native`: the same functions, the same results."""

    @staticmethod
    def split_words(text: str, tokenizer: _SpacyEnglishTokenizer) -> list[str]:
        """Tokens of each whitespace chunk of `text`: `tokenizer.cache[chunk]`, else
        `tokenizer.tokens(chunk)` (the native side also reads `tokenizer.specials`)."""
        cached, tokens = tokenizer.cache.get, tokenizer.tokens
        words: list[str] = []
        for chunk in text.split():
            found = cached(chunk)
            words += found if found is not None else tokens(chunk)
        return words

    @staticmethod
    def word_count(text: str, tokenizer: _SpacyEnglishTokenizer) -> int:
        """`len(split_words(text, tokenizer))`."""
        return len(Reference.split_words(text, tokenizer))

    @staticmethod
    def sentence_tokens(text: str, tokenizer: _SpacyEnglishTokenizer) -> list[str]:
        """The tokens spaCy's Sentencizer sees: the words, and a whitespace token (" ") where
        spaCy's tokenizer makes one, for leading whitespace and for any later run of it but a
        single space (`a.\tb`, `a.  b`): after a sentence-final token it starts a sentence."""
        tokens: list[str] = []
        parts = WHITESPACE_RUN.split(text)  # words, and the runs of whitespace between them
        for k, part in enumerate(parts):
            if k % 2 == 0:
                tokens += Reference.split_words(part, tokenizer) if part else []
            elif (k == 1 and not parts[0]) or part != " ":
                tokens.append(" ")
        return tokens

    @staticmethod
    def sentence_count(words: list[str]) -> int:
        """Sentences as spaCy's Sentencizer counts them on these tokens: a sentence ends at a token
        equal to one sentence-final character, the next starts at the first following token that is
        not punctuation."""
        if not words:
            return 0
        sentences = 1
        seen_end = False
        for word in words:
            if word in SENTENCE_END_CHARS:
                seen_end = True
            elif seen_end and not is_punct(word):
                sentences += 1
                seen_end = False
        return sentences

    @staticmethod
    def c4_lines(text: str, rules: tuple, tokenizer: _SpacyEnglishTokenizer) -> tuple[str | None, int, str]:
        """C4's line rules (`C4Quality`) on each stripped line of `text`: (the rejecting reason or
        None, sentences counted in kept lines (until `min_num_sentences`), kept lines joined by
        newlines). `rules` = (max_word_length, remove_citations, filter_no_terminal_punct,
        min_words_per_line, filter_lorem_ipsum, filter_javascript, filter_curly_bracket,
        filter_policy, min_num_sentences); words are split with `tokenizer`."""
        max_word_length, citations, terminal, min_words, lorem, javascript, curly, policy, min_sentences = (
            rules
        )
        sentences = 0
        kept: list[str] = []
        for line in text.splitlines():
            line = line.strip()
            words = line.split()
            if max_word_length and max(map(len, words), default=0) > max_word_length:
                continue
            if citations and "[" in line:
                line = CITATION.sub("", line)
            if terminal and (not line.endswith(END_PUNCTUATION) or line.endswith("...")):
                continue
            if len(words) < min_words:
                continue
            lower = line.lower()
            if lorem and "lorem ipsum" in lower:
                return "lorem_ipsum", sentences, ""
            if javascript and "javascript" in lower:
                continue
            if curly and "{" in line:
                return "curly_bracket", sentences, ""
            if policy and any(phrase in lower for phrase in POLICY_SUBSTRINGS):
                continue
            if sentences < min_sentences:
                sentences += Reference.sentence_count(Reference.sentence_tokens(line, tokenizer))
            kept.append(line)
        return None, sentences, "\n".join(kept)

    @staticmethod
    def line_marks(text: str) -> tuple[int, int, int]:
        """(lines, lines starting with • or -, lines ending with ... or …) of `str.splitlines()`,
        each line stripped of whitespace first (Gopher)."""
        lines = text.splitlines()
        bullets = sum(line.lstrip().startswith(("•", "-")) for line in lines)
        ellipses = sum(line.rstrip().endswith(("...", "…")) for line in lines)
        return len(lines), bullets, ellipses

    @staticmethod
    def run_duplicates(text: str, shortest: int) -> tuple[int, int, int]:
        """`text` split at each run of at least `shortest` newlines: (pieces, `duplicates` of them)."""
        if shortest < 1:
            raise ValueError("run_duplicates: shortest must be at least 1")
        pieces = re.split(f"\n{{{shortest},}}", text)
        return (len(pieces), *duplicates(pieces))

    @staticmethod
    def fineweb_lines(text: str, short_length: int) -> tuple[int, int, int, int]:
        """Over the non-blank `\\n`-separated lines, unstripped: (lines, lines ending in terminal
        punctuation, lines of at most `short_length` characters, characters of repeated lines)."""
        lines = [line for line in text.split("\n") if line.strip()]
        punct = sum(line[-1] in TERMINAL_PUNCTUATION for line in lines)
        short = sum(len(line) <= short_length for line in lines)
        return len(lines), punct, short, duplicates(lines)[1]

    @staticmethod
    def word_classes(words: list[str]) -> tuple[int, int, int]:
        """(words with at least one character that is not punctuation, their characters, words with
        at least one alphabetic character)."""
        content = [w for w in words if not PUNCTUATION_SET.issuperset(w)]
        alpha = sum(any(ch.isalpha() for ch in word) for word in words)
        return len(content), sum(map(len, content)), alpha

    @staticmethod
    def top_ngram_chars(words: list[str], sizes: tuple[int, ...]) -> tuple[int, ...]:
        """For each n in `sizes`: len(" ".join(g)) × count of the most frequent word n-gram g, ties
        to the first seen (as `Counter.most_common`)."""
        out = []
        for n in sizes:
            if n < 1:
                raise ValueError("top_ngram_chars: n must be at least 1")
            if len(words) < n:
                out.append(0)
                continue
            gram, count = Counter(zip(*(words[i:] for i in range(n)))).most_common(1)[0]
            out.append((sum(map(len, gram)) + n - 1) * count)
        return tuple(out)

    @staticmethod
    def dup_ngram_chars(words: list[str], sizes: tuple[int, ...]) -> tuple[int, ...]:
        """For each n in `sizes`: characters in word n-grams that repeat an earlier n-gram,
        skipping past each repeat.

        As in the reference (Gopher), an n-gram is keyed by its words concatenated without a
        separator (here a slice of all words concatenated, which is the same string).
        """
        joined = "".join(words)
        offsets = [0, *accumulate(map(len, words))]
        out = []
        for n in sizes:
            if n < 1:
                raise ValueError("dup_ngram_chars: n must be at least 1")
            seen: set[str] = set()
            repeated = idx = 0
            last = len(offsets) - n
            while idx < last:
                gram = joined[offsets[idx] : offsets[idx + n]]
                if gram in seen:
                    repeated += len(gram)
                    idx += n
                else:
                    seen.add(gram)
                    idx += 1
            out.append(repeated)
        return tuple(out)


def unicode_punctuation() -> str:
    """Every character of Unicode category P* (spaCy's `is_punct`); none lies above U+1FFFF."""
    return "".join(ch for ch in map(chr, range(0x20000)) if unicodedata.category(ch)[0] == "P")


def _load_native():
    """`filters._text_native` ready to use, or `Reference` (with a one-time warning) if not built."""
    try:
        from filters import _text_native
    except ImportError as error:
        warnings.warn(
            f"filters._text_native is not built ({error}); text analysis runs in pure Python (slower)",
            RuntimeWarning,
            stacklevel=2,
        )
        return Reference
    _text_native.set_tables(
        "".join(sorted(PUNCTUATION_SET)),
        "".join(sorted(TERMINAL_PUNCTUATION)),
        "".join(sorted(SENTENCE_END_CHARS)),
        unicode_punctuation(),
    )
    return _text_native


ANALYSIS = _load_native()


def split_words(text: str) -> list[str]:
    """Words as spaCy's English tokenizer splits them (punctuation split off, whitespace dropped)."""
    return ANALYSIS.split_words(text, _tokenizer())


def is_punct(token: str) -> bool:
    """spaCy's `is_punct`: every character is Unicode punctuation (category P*)."""
    return all(unicodedata.category(ch)[0] == "P" for ch in token)


# ---- memoized views of a document ---------------------------------------------------------------


def words(doc: Document) -> list[str]:
    """spaCy-equivalent English words of the document."""
    return doc.cached("words", split_words)


def word_count(doc: Document) -> int:
    """Number of words; counted without the word list unless that is already made (FineWeb's
    newlines per word, on the text C4 edited)."""
    if doc.cache is not None and "words" in doc.cache:
        return len(doc.cache["words"])
    return doc.cached("word_count", lambda text: ANALYSIS.word_count(text, _tokenizer()))


def word_classes(doc: Document) -> tuple[int, int, int]:
    """(words with a character that is not punctuation, their characters, words with a letter):
    Gopher's word count, mean word length and alphabetic-word ratio."""
    return doc.cached("word_classes", lambda _: ANALYSIS.word_classes(words(doc)))


def line_marks(doc: Document) -> tuple[int, int, int]:
    """(lines, bullet lines, ellipsis lines) of `str.splitlines()` (Gopher quality)."""
    return doc.cached("line_marks", lambda text: ANALYSIS.line_marks(text))


def line_duplicates(doc: Document) -> tuple[int, int, int]:
    """(lines split on runs of `\\n`, repeated lines, their characters) (Gopher repetition)."""
    return doc.cached("line_duplicates", lambda text: ANALYSIS.run_duplicates(text, 1))


def paragraph_duplicates(doc: Document) -> tuple[int, int, int]:
    """(paragraphs split on two or more `\\n` after stripping the text, repeated ones, their
    characters) (Gopher repetition)."""
    return doc.cached("paragraph_duplicates", lambda text: ANALYSIS.run_duplicates(text.strip(), 2))


def fineweb_lines(doc: Document, short_length: int) -> tuple[int, int, int, int]:
    """`Reference.fineweb_lines` of the text (FineWeb quality)."""
    return doc.cached(f"fineweb_lines{short_length}", lambda text: ANALYSIS.fineweb_lines(text, short_length))


def c4_lines(doc: Document, rules: tuple) -> tuple[str | None, int, str]:
    """`Reference.c4_lines` of the text with the shared word-split memo (not cached: it depends on
    `rules`, and only `c4_quality` asks)."""
    return ANALYSIS.c4_lines(doc.text, rules, _tokenizer())


def duplicates(items: list[str]) -> tuple[int, int]:
    """(number of repeated elements, their total characters), counting each repeat after the first."""
    seen: set[str] = set()
    count = chars = 0
    for item in items:
        if item in seen:
            count += 1
            chars += len(item)
        else:
            seen.add(item)
    return count, chars


def top_ngram_chars(doc: Document, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """For each n in `sizes`, characters covered by the most frequent word n-gram: len(" ".join(ngram))
    × its count; one set of word ids serves every n."""
    return doc.cached(f"top_ngram_chars{sizes}", lambda _: ANALYSIS.top_ngram_chars(words(doc), sizes))


def duplicated_ngram_chars(doc: Document, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """For each n in `sizes`, characters in word n-grams that repeat an earlier n-gram, skipping
    past each repeat (Gopher); one pass over the words serves every n."""
    return doc.cached(f"dup_ngram_chars{sizes}", lambda _: ANALYSIS.dup_ngram_chars(words(doc), sizes))
