"""`toxicity`: word-list profanity score plus a learned offensive-language probability; rejects above thresholds."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from filters.unicode_text import folded
from pipeline.document import Document, Verdict, keep, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register

LIST_DIR = Path(__file__).resolve().parent / "data" / "toxicity"
# Scripts written without spaces: their entries are matched as substrings of the text.
UNSEGMENTED = frozenset({"ja", "th", "zh"})
MIN_SUBSTRING_CHARS = 3  # shorter unsegmented entries ("しな") occur inside ordinary words

_SPLIT = re.compile(r"[\s,;:/()\[\]{}\"“”«»<>]+")
_EDGE = ".!?'’‘`´-_~*#^=…"
_SEPARATED = re.compile(r"\w(?:[.\-_*·]\w){2,}+")  # f.u.c.k, f-u-c-k
_WITHOUT_SEPARATORS = str.maketrans("", "", ".-_*·")  # f.u.c.k -> fuck (re.sub kept a piece per dot)
_MASKS = frozenset("*#")
_RUN3 = re.compile(r"(\w)\1{2,}+")  # possessive, here and above: no regex state kept per repeat
_RUN2 = re.compile(r"(\w)\1++")
_LEET = str.maketrans("0134578@$!|+€", "oieastbasilte")
_MODEL_CODE = re.compile(r"[^\W\d_]\d+")  # A55, S20: a product's model, not l33t (a55 -> ass)


@lru_cache(maxsize=1)
def available_languages() -> tuple[str, ...]:
    """Languages with a shipped list (regional variants merged into their base language)."""
    return tuple(sorted({path.stem.split("_")[0] for path in LIST_DIR.glob("*.txt")}))


@dataclass
class Lexicon:
    """Bad-word entries of some languages, indexed for token, phrase, mask and substring lookups."""

    words: set[str] = field(default_factory=set)
    phrases: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    hyphenated: dict[str, str] = field(default_factory=dict)  # "blow-job" -> the phrase "blow job"
    shapes: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    substrings: set[str] = field(default_factory=set)

    def add(self, entry: str, unsegmented: bool) -> None:
        parts = tuple(entry.split())
        if not parts:
            return
        if unsegmented and not entry.isascii():
            if len(entry.replace(" ", "")) >= MIN_SUBSTRING_CHARS:
                self.substrings.add(entry.replace(" ", ""))
        elif len(parts) > 1:
            self.phrases.setdefault(parts[0], []).append(parts)
            self.hyphenated["-".join(parts)] = entry
        elif not _MODEL_CODE.fullmatch(entry):  # en.txt's "a55" matched every Galaxy A55 review
            self.words.add(entry)
            self.shapes.setdefault((len(entry), entry[0]), []).append(entry)


def read_list(path: Path) -> list[str]:
    """Normalized entries of one list file (`#` lines are comments)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [" ".join(folded(line).split()) for line in lines if line.strip() and not line.startswith("#")]


@lru_cache(maxsize=64)
def load_lexicon(languages: frozenset[str], exclude: frozenset[str] = frozenset()) -> Lexicon:
    """The merged lists of `languages` (e.g. `en.txt` plus any `en_*.txt`), minus `exclude`."""
    lexicon = Lexicon()
    for language in sorted(languages):
        for path in sorted(LIST_DIR.glob(f"{language}.txt")) + sorted(LIST_DIR.glob(f"{language}_*.txt")):
            for entry in read_list(path):
                if entry not in exclude:
                    lexicon.add(entry, language in UNSEGMENTED)
    for parts in lexicon.phrases.values():
        parts.sort(key=len, reverse=True)  # longest phrase first
    return lexicon


def ambiguous_entries(languages: frozenset[str]) -> frozenset[str]:
    """Entries with a common inoffensive or clinical meaning (`data/toxicity/ambiguous/<lang>.txt`)."""
    paths = (LIST_DIR / "ambiguous" / f"{language}.txt" for language in languages)
    return frozenset(entry for path in paths if path.exists() for entry in read_list(path))


@dataclass(frozen=True)
class ToxicityCounts:
    """What the lexicon found in one text."""

    tokens: int
    flagged: int
    chars: int
    flagged_chars: int
    terms: tuple[tuple[str, int], ...]

    @property
    def score(self) -> float:
        """Flagged fraction of the text: flagged tokens / tokens, or flagged characters / characters
        for unsegmented-script entries, whichever is higher."""
        token_rate = self.flagged / self.tokens if self.tokens else 0.0
        char_rate = self.flagged_chars / self.chars if self.chars else 0.0
        return max(token_rate, char_rate)


class _Special(NamedTuple):
    """A token that needs a closer look: it is an entry, may start a phrase, or is a lone letter."""

    entry: str | None
    phrases: tuple[tuple[str, ...], ...]
    letter: bool


NONWORD = object()  # no letter or digit: not counted
PLAIN = object()  # an ordinary word


class Matcher:
    """Finds lexicon entries in text, seeing through simple obfuscations; memoizes per token."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.cache: dict[str, object] = {}

    def info(self, token: str) -> object:
        """What one token is, memoized (the cache stops growing at 200k distinct tokens)."""
        found = self.cache.get(token)
        if found is None:
            if not any(c.isalnum() for c in token):
                found = NONWORD
            else:
                entry = self.token_match(token)
                phrases = tuple(self.lexicon.phrases.get(token.lstrip(_EDGE), ()))
                letter = len(token) == 1 and token.isalpha()
                found = _Special(entry, phrases, letter) if entry or phrases or letter else PLAIN
            if len(self.cache) < 200_000:
                self.cache[token] = found
        return found

    def token_match(self, token: str) -> str | None:
        """The entry a token spells (plain, possessive, l33t, f.u.c.k, f**k, fuuuck, x-rated), or None."""
        words = self.lexicon.words
        plain = token.strip(_EDGE)
        if not plain or _MODEL_CODE.fullmatch(plain):  # no l33t: A55 is a phone, a chip
            return None
        forms = [plain]
        if plain.endswith(("'s", "’s")):
            forms.append(plain[:-2])
        if not plain.isalpha():
            if _SEPARATED.fullmatch(plain):
                forms.append(plain.translate(_WITHOUT_SEPARATORS))
            if any(c.isalpha() for c in plain):
                forms.append(plain.translate(_LEET).strip(_EDGE))
            if "-" in plain:
                if plain in self.lexicon.hyphenated:
                    return self.lexicon.hyphenated[plain]
                forms.extend(part for part in plain.split("-") if len(part) > 1)
        for form in forms:
            if form in words:
                return form
        for form in forms:
            if _RUN3.search(form):
                for collapsed in (_RUN3.sub(r"\1\1", form), _RUN2.sub(r"\1", form)):
                    if collapsed in words:
                        return collapsed
        if _MASKS.intersection(plain[1:-1]):
            return self._unmask(plain)
        return None

    def _unmask(self, token: str) -> str | None:
        """f**k, sh#t: the token as written (s**t may be shit, scat, slut or smut) when an entry of
        the same length agrees on every unmasked character, else None."""
        if token[0] in _MASKS or sum(c.isalpha() for c in token) < 2:
            return None
        entries = self.lexicon.shapes.get((len(token), token[0]), ())
        if any(all(t == e or t in _MASKS for t, e in zip(token, entry)) for entry in entries):
            return token
        return None

    def count(self, text: str) -> ToxicityCounts:
        """Tokens, flagged tokens and matched terms of one text."""
        raw = _SPLIT.split(folded(text))
        cache, info = self.cache, self.info
        infos = [cache.get(token) or info(token) for token in raw]
        specials = [i for i, found in enumerate(infos) if found is not PLAIN and found is not NONWORD]
        flagged: set[int] = set()
        terms: Counter = Counter()
        run: list[int] = []  # consecutive lone letters: f u c k
        for i in specials:
            found = infos[i]
            if run and i != run[-1] + 1:
                self._spelled_out(raw, run, flagged, terms)
            if found.letter:
                run.append(i)
            if found.entry and i not in flagged:
                flagged.add(i)
                terms[found.entry] += 1
            for phrase in found.phrases:
                following = list(
                    islice((j for j in range(i, len(raw)) if infos[j] is not NONWORD), len(phrase))
                )
                words = [raw[j] for j in following]
                words[0], words[-1] = words[0].lstrip(_EDGE), words[-1].rstrip(_EDGE)  # "a blow job."
                if tuple(words) == phrase:
                    flagged.update(following)
                    terms[" ".join(phrase)] += 1
                    break
        self._spelled_out(raw, run, flagged, terms)
        words = len(raw) - infos.count(NONWORD)
        chars = flagged_chars = 0
        if self.lexicon.substrings:
            joined = "".join(token for token, found in zip(raw, infos) if found is not NONWORD)
            chars = len(joined)
            for entry in self.lexicon.substrings:
                hits = joined.count(entry)
                if hits:
                    flagged_chars += hits * len(entry)
                    terms[entry] += hits
        return ToxicityCounts(
            words, len(flagged), chars, min(flagged_chars, chars), tuple(terms.most_common())
        )

    def _spelled_out(self, raw: list[str], run: list[int], flagged: set[int], terms: Counter) -> None:
        """Three or more consecutive one-letter tokens that together spell an entry; empties `run`."""
        if len(run) >= 3:
            entry = self.token_match("".join(raw[i] for i in run))
            if entry is not None:
                flagged.update(run)
                terms[entry] += 1
        run.clear()


@register("toxicity")
class Toxicity(DocumentStage):
    """Score profanity/obscenity with word lists and a learned model; reject above `max_score` or `max_learned`.

    Learned: alt-profanity-check's linear SVM (TF-IDF of words, calibrated; trained by its authors
    on ~200k human-labelled comments from Wikipedia's toxic-comment and Twitter hate-speech sets),
    writing `scores["<name>.learned"]` = P(offensive) of the whole document; `learned = false` turns
    it off. It judges vocabulary, not intent: quoted or discussed slurs score high, and polite
    hostility scores low; documents are scored whole, so one insult in a long page is diluted.
    Lexicon: `scores[<name>]` = the flagged fraction of the text
    (flagged tokens / tokens; for Japanese/Thai entries, matched as substrings, flagged characters
    / characters; the higher of the two), in 0..1. Lists: LDNOOBW and washyourmouthoutwithsoap
    via badwords-py (`filters/data/toxicity/LICENSE.md`), for `languages` plus the document's own
    language. Matching is on NFKC-casefolded tokens and sees through l33t (sh1t, a$$), separators
    (f.u.c.k, f u c k), masks (f**k, shown as written in `detail`), repeated letters (fuuuck), possessives,
    hyphenated parts and phrases (blow-job); a letter and digits (A55) is a model number, no l33t;
    it flags words, not meaning. Entries with a common inoffensive or clinical meaning in a
    language (`data/toxicity/ambiguous/<lang>.txt`: "hell", "sex", "smut" in English, "cum" =
    "how" in Romanian) are not counted unless `count_ambiguous` is set.
    Reasons: `toxic` (`detail` = which rule fired: the lexicon score with flagged/total tokens, the
    learned probability, and the most frequent listed terms found).
    """

    reasons = ("toxic",)
    params = {
        "languages": Param(
            list[str],
            ["en"],
            "languages whose lists always apply (English profanity is common in every web language)",
        ),
        "use_doc_language": Param(bool, True, "also apply the list of the document's detected language"),
        "max_score": Param(
            float,
            0.02,
            "reject when the score is above this (1.0: score only, never reject)",
            min=0.0,
            max=1.0,
        ),
        "min_flagged": Param(
            int, 2, "reject only documents with at least this many flagged words or phrases", min=1
        ),
        "count_ambiguous": Param(
            bool,
            False,
            "also count entries with a common inoffensive or clinical meaning (hell, sex, rape, "
            "smut, balls; `data/toxicity/ambiguous/`)",
        ),
        "exclude": Param(list[str], [], "further list entries to ignore (words ordinary in your domain)"),
        "learned": Param(bool, True, "also score with the learned model (alt-profanity-check)"),
        "max_learned": Param(
            float, 0.9, "reject when the learned P(offensive) is at least this", min=0.0, max=1.0
        ),
    }

    def configure(self) -> None:
        known = available_languages()
        for language in self.languages:
            if language not in known:
                raise ConfigError(f"languages: no list for {language!r} (known: {', '.join(known)})")
        self.matchers: dict[frozenset[str], Matcher] = {}
        self._predict = None

    def __getstate__(self) -> dict:
        """Matchers hold lists and caches, the model is loaded per worker: each worker rebuilds its own."""
        return {**self.__dict__, "matchers": {}, "_predict": None}

    def matcher(self, language: str | None) -> Matcher:
        """The matcher for `languages` plus `language` when it has a list."""
        chosen = set(self.languages)
        if self.use_doc_language and language:
            base = language.replace("-", "_").split("_")[0].lower()
            if base in available_languages():
                chosen.add(base)
        key = frozenset(chosen)
        found = self.matchers.get(key)
        if found is None:
            exclude = frozenset(" ".join(folded(e).split()) for e in self.exclude)
            if not self.count_ambiguous:
                exclude |= ambiguous_entries(key)
            found = self.matchers[key] = Matcher(load_lexicon(key, exclude))
        return found

    def setup(self) -> None:
        self.matcher(None)
        if self.learned and self._predict is None:
            from profanity_check import predict_prob

            self._predict = predict_prob

    def manifest_extra(self) -> dict:
        """Size of the always-applied lexicon, so a run records which lists it scored with."""
        lexicon = self.matcher(None).lexicon
        phrases = sum(map(len, lexicon.phrases.values()))
        return {"languages": sorted(self.languages), "entries": len(lexicon.words) + phrases}

    def counts(self, doc: Document) -> ToxicityCounts:
        return self.matcher(doc.language).count(doc.text)

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        learned: list[float | None] = [None] * len(docs)
        if self.learned:
            self.require_setup(self._predict)
            learned = [float(p) for p in self._predict([d.text for d in docs])]
        return [self._verdict(doc, p) for doc, p in zip(docs, learned)]

    def _verdict(self, doc: Document, learned: float | None) -> Verdict:
        counts = self.counts(doc)
        score = counts.score
        scores = (
            {self.name: score} if learned is None else {self.name: score, f"{self.name}.learned": learned}
        )
        doc = doc.with_scores(scores)
        rules = []
        if score > self.max_score and sum(n for _, n in counts.terms) >= self.min_flagged:
            rules.append(f"score={score:.4f}>{self.max_score} flagged={counts.flagged}/{counts.tokens}")
        if learned is not None and learned >= self.max_learned:
            rules.append(f"learned={learned:.3f}>={self.max_learned}")
        if rules:
            if counts.terms:  # the evidence in the word lists, when they hold any
                rules.append("terms=" + ",".join(term for term, _ in counts.terms[:3]))
            return reject("toxic", " ".join(rules), doc)
        return keep(doc)

    def score_names(self) -> list[str]:
        """The scores this stage writes."""
        return [self.name, f"{self.name}.learned"] if self.learned else [self.name]
