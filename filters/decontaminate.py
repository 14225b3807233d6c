"""`decontaminate`: reject documents that share word n-grams with evaluation sets (GPT-3 style)."""

from __future__ import annotations

import itertools
import re
import sys
import unicodedata
from functools import cache
from typing import Any

import numpy as np
import xxhash

from filters.unicode_text import folded
from pipeline.document import KEEP, Document, Verdict, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register
from synthesis.candidate_dedup import training_text

HASH_SEED = 0x6465636F6E  # "decon"
# Odd 64-bit multiplier of the polynomial that combines token hashes into n-gram hashes.
MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
# Han, kana and compatibility ideographs are unsegmented: each character is a token. The Thai,
# Lao, Tibetan, Myanmar and Khmer scripts are written without spaces too, but their characters are
# letters: a token is a run of letters between two vowel signs or tone marks (a syllable or part of
# one; on Thai news sentences, 1 of 50 unrelated documents matched an eval set, where 13 single
# characters matched 33).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNSPACED = (0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF)
_ASCII_WORD = re.compile(r"[^\W_]+")


@cache
def _word_pattern() -> re.Pattern[str]:
    """A CJK character; a run of letters of a script written without spaces (Thai), up to a
    vowel sign or tone mark; or a run of letters and digits with the combining marks inside it: a
    word. The marks (vowel signs and viramas of Indic scripts, Hebrew points) are no `\\w`: a
    plain run split words apart ("हिन्दी" read as 'ह', 'न', 'द'). Punctuation, `_` included, and
    symbols are dropped. Built once per process (0.2 s)."""
    marks = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c))[0] == "M"]
    unspaced = [c for low, high in _UNSPACED for c in range(low, high + 1)]
    unspaced_letters = [c for c in unspaced if chr(c).isalnum()]
    letters = f"[^\\W_{_CJK}{_char_class(unspaced)}]"
    return re.compile(
        rf"[{_CJK}]|[{_char_class(unspaced_letters)}]++|{letters}++(?:[{_char_class(marks)}]++{letters}*+)*+"
    )


def _char_class(codes: list[int]) -> str:
    """The inside of a regex character class holding `codes` (sorted), as ranges."""
    spans, start = [], codes[0]
    for before, code in itertools.pairwise(codes + [-1]):
        if code != before + 1:
            spans.append(re.escape(chr(start)) + ("-" + re.escape(chr(before)) if before > start else ""))
            start = code
    return "".join(spans)


def tokens(text: str) -> list[str]:
    """Normalized tokens: NFKC, casefolded, invisible format characters and punctuation removed,
    CJK split per character, Thai and the other scripts written without spaces at their vowel
    signs and tone marks."""
    text = folded(text)
    return (_ASCII_WORD if text.isascii() else _word_pattern()).findall(text)


def ngram_hashes(words: list[str], n: int) -> np.ndarray:
    """Seeded 64-bit hash of every n-token window, as uint64 (empty when fewer than n tokens).

    Each token is hashed once with xxh3; a window's hash is the polynomial sum of its token
    hashes modulo 2**64, computed for all windows at once with numpy.
    """
    if len(words) < n:
        return np.empty(0, dtype=np.uint64)
    token = np.fromiter(
        (xxhash.xxh3_64_intdigest(w.encode("utf-8", "surrogatepass"), HASH_SEED) for w in words),
        dtype=np.uint64,
        count=len(words),
    )
    windows = len(words) - n + 1
    acc = token[:windows].copy()
    for offset in range(1, n):
        acc *= MULTIPLIER
        acc += token[offset : offset + windows]
    return acc


def eval_text(doc: Document, fields: list[str]) -> str:
    """An eval item's text: the given fields (first is the reader's text field) joined by newlines."""
    parts = [doc.text]
    for field in fields[1:]:
        value = doc.metadata.get(field)
        if isinstance(value, list):
            value = "\n".join(map(str, value))
        if value is not None:
            parts.append(str(value))
    return "\n".join(parts)


class EvalIndex:
    """The eval sets' n-gram hashes, sorted, once per eval item holding each (`owners`: the item's
    index), so a document's figures name the item it shares the most with (with one item per
    n-gram, the first holding it, boilerplate two items share credited the first)."""

    def __init__(self, hashes: np.ndarray, owners: np.ndarray, ids: list[str], figures: dict[str, Any]):
        self.hashes = hashes
        self.owners = owners
        self.ids = ids
        self.figures = figures

    @classmethod
    def load(cls, patterns: list[str], fields: list[str], id_field: str, n: int) -> EvalIndex:
        """Read every eval file; raise RuntimeError naming a file that is missing or has no usable item.

        Records the reader cannot use (bad JSON, no `fields[0]`) are skipped and counted.
        """
        from pipeline.readers import InputConfig, InputError, expand_paths, plan_splits, read_split

        try:
            files = expand_paths(patterns)
        except InputError as error:
            raise RuntimeError(f"decontaminate: eval file missing: {error}") from error
        chunks: list[np.ndarray] = []
        owners: list[np.ndarray] = []
        ids: list[str] = []
        short = skipped = 0
        for path in files:
            config = InputConfig((path,), text_field=fields[0], id_field=id_field)
            before, short_before = len(ids), short
            problem = f"no record has the field {fields[0]!r}"
            for split in plan_splits(path, config):
                for record in read_split(split, config):
                    if not isinstance(record, Document):
                        skipped += 1
                        problem = getattr(record, "message", problem)
                        continue
                    found = ngram_hashes(tokens(eval_text(record, fields)), n)
                    if not len(found):
                        short += 1
                        continue
                    chunks.append(found)
                    owners.append(np.full(len(found), len(ids), dtype=np.uint32))
                    ids.append(record.id)
            if len(ids) == before:
                if short > short_before:
                    problem = f"{short - short_before} shorter"
                raise RuntimeError(
                    f"decontaminate: eval file {path} has no item of at least {n} words ({problem})"
                )
        hashes = np.concatenate(chunks)
        owner = np.concatenate(owners)
        order = np.lexsort((owner, hashes))  # by hash, then eval item
        hashes, owner = hashes[order], owner[order]
        new_pair = np.ones(len(hashes), dtype=bool)  # an item's repeated n-gram counts once
        new_pair[1:] = (hashes[1:] != hashes[:-1]) | (owner[1:] != owner[:-1])
        hashes, owner = hashes[new_pair], owner[new_pair]
        figures = {
            "eval_files": len(files),
            "eval_items": len(ids),
            "eval_items_too_short": short,
            "eval_records_skipped": skipped,
            "eval_ngrams": int(len(hashes) and 1 + np.count_nonzero(hashes[1:] != hashes[:-1])),
        }
        return cls(hashes, owner, ids, figures)

    def matches(self, found: np.ndarray) -> tuple[int, np.ndarray]:
        """(How many distinct n-grams of `found` the eval sets contain, the eval item of every
        (n-gram, item) pair they hold them in)."""
        found = np.unique(found)
        starts, ends = (
            np.searchsorted(self.hashes, found, "left"),
            np.searchsorted(self.hashes, found, "right"),
        )
        held = ends > starts
        starts, lengths = starts[held], (ends - starts)[held]
        pairs = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        return int(held.sum()), self.owners[pairs]


@register("decontaminate")
class Decontaminate(DocumentStage):
    """Remove documents sharing word n-grams (default 13) with evaluation sets, as GPT-3 did.

    Text is NFKC-normalized, casefolded and stripped of invisible format characters and
    punctuation (CJK characters count as words); every n-gram is a seeded 64-bit hash. The eval
    sets (`paths`, any reader format) are read once per worker into a sorted numpy array of n-gram
    hashes, one per eval item holding it (8 bytes, plus 4 for the item), so a document costs one
    vectorized hash and two `searchsorted`.
    Eval items shorter than `ngram` tokens cannot be matched and are counted in the manifest.
    Synthesis candidates are checked too, by the text `verify` gives them (code: prompt and
    program; math: problem and solution), before `verify` as after it.
    Reasons: `contaminated` (`detail` = distinct matching n-grams and the id of the eval item
    sharing the most of them).
    """

    reasons = ("contaminated",)
    handles_candidates = True
    params = {
        "paths": Param(
            list[str],
            [],
            "eval files or globs (JSONL/JSON/Parquet, plain or compressed; relative to the working "
            "directory); required",
        ),
        "text_fields": Param(
            list[str],
            ["text"],
            'record fields joined (newline) into one eval item, e.g. ["question", "answer"]',
        ),
        "id_field": Param(str, "id", "record field naming an eval item (else `file:line`)"),
        "ngram": Param(
            int,
            13,
            "words per n-gram (13 as in GPT-3; 8 also catches paraphrases, with more false positives)",
            min=3,
            max=50,
        ),
        "min_matches": Param(
            int, 1, "distinct eval n-grams a document must contain to be rejected", min=1, max=1_000_000
        ),
    }

    def data_files(self) -> list[str]:
        return list(self.paths)

    def configure(self) -> None:
        from pipeline.readers import InputError, expand_paths

        if not self.paths:
            raise ConfigError("paths: give at least one eval file or glob")
        if not self.text_fields:
            raise ConfigError("text_fields: give at least one field")
        try:
            expand_paths(self.paths)
        except InputError as error:
            raise ConfigError(f"paths: {error}") from error
        self.index: EvalIndex | None = None
        try:  # an eval file with no usable item stops the recipe here, not a worker mid-run
            self.setup()
        except RuntimeError as error:
            raise ConfigError(f"paths: {str(error).removeprefix('decontaminate: ')}") from error

    def __getstate__(self) -> dict[str, Any]:
        """Never ship the index inside the pipeline graph: each worker loads it in `setup()`."""
        return {**self.__dict__, "index": None}

    def setup(self) -> None:
        if self.index is None:
            self.index = EvalIndex.load(self.paths, self.text_fields, self.id_field, self.ngram)

    def manifest_extra(self) -> dict[str, Any]:
        self.setup()
        return dict(self.index.figures)

    def check(self, doc: Document) -> Verdict:
        self.require_setup(self.index)
        if doc.kind is not None and not doc.text:  # a candidate before `verify`: the text it would get
            words = tokens(training_text(doc))
        else:
            words = doc.cached("decontaminate_tokens", tokens)
        found = ngram_hashes(words, self.ngram)
        if len(found) < self.min_matches:
            return KEEP
        shared, owners = self.index.matches(found)
        if shared < self.min_matches:
            return KEEP
        values, counts = np.unique(owners, return_counts=True)
        top = int(values[np.argmax(counts)])  # the eval item sharing most n-grams (first on ties)
        return reject("contaminated", f"ngrams={shared} eval={self.index.ids[top]}")
