"""The record that flows through every stage, and the three outcomes a stage can give it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ORIGIN_SEPARATOR = "\x00"


def public_id(unique_id: str) -> str:
    """The document id in a `Document.unique_id` (what `duplicate_of` and metadata report)."""
    head, separator, _ = unique_id.rpartition(ORIGIN_SEPARATOR)
    return head if separator else unique_id


@dataclass(frozen=True, slots=True)
class Document:
    """One document (or synthesis candidate); immutable, so a retry sees it as it entered a stage.

    Stages return updated copies (`with_text`, `with_scores`, `with_metadata`, `replace`) through
    their verdict and never edit a document in place. `cache` holds per-text analysis shared by
    consecutive stages (words, lines, n-grams); a copy with new text starts without it, and it is
    never compared, pickled or written to the output.
    """

    id: str
    text: str
    source: str = ""
    url: str | None = None
    language: str | None = None
    language_score: float | None = None
    scores: dict[str, float] = field(default_factory=dict)
    kind: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    origin: str = ""  # where the run read it (`pipeline.read_phase`); tells apart documents sharing an id
    cache: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __reduce__(self):
        """Pickle as a plain tuple (5x faster than the slots default) and never ship the cache."""
        return (Document, self._fields(self.scores, self.metadata))

    def _fields(self, scores: dict[str, float], metadata: dict[str, Any]) -> tuple:
        """The constructor's arguments but the cache, with these scores and metadata."""
        return (
            self.id,
            self.text,
            self.source,
            self.url,
            self.language,
            self.language_score,
            scores,
            self.kind,
            metadata,
            self.origin,
        )

    @property
    def unique_id(self) -> str:
        """The id, made unique within the run by the document's origin: what dedup stages join on
        and cluster by, since input ids may repeat (ids numbered per file, a record read twice).
        `public_id` gives the id back."""
        return f"{self.id}{ORIGIN_SEPARATOR}{self.origin}" if self.origin else self.id

    def cached(self, key: str, compute):
        """Return `compute(self.text)` once per text version, shared by every stage."""
        cache = self.cache
        if cache is None:
            cache = {}
            object.__setattr__(self, "cache", cache)  # derived data, not part of the value
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = compute(self.text)
            return value

    def replace(self, **changes: Any) -> Document:
        """A copy with `changes`; the analysis cache carries over only while the text is the same."""
        if "text" in changes and changes["text"] != self.text:
            changes.setdefault("cache", None)
        return dataclasses.replace(self, **changes)

    def with_text(self, text: str) -> Document:
        """A copy with new text (c4_quality, pii_redact) and no analysis of the old text."""
        return self if text == self.text else self.replace(text=text)

    def with_scores(self, scores: Mapping[str, float]) -> Document:
        """A copy whose scores also hold `scores` (same names replaced)."""
        return self._same_text({**self.scores, **scores}, self.metadata)

    def with_metadata(self, metadata: Mapping[str, Any]) -> Document:
        """A copy whose metadata also holds `metadata` (same keys replaced)."""
        return self._same_text(self.scores, {**self.metadata, **metadata})

    def _same_text(self, scores: dict[str, float], metadata: dict[str, Any]) -> Document:
        """A copy with these scores and metadata, keeping the analysis cache. Every scorer calls
        this per document: built directly, it costs a third of `dataclasses.replace`."""
        return Document(*self._fields(scores, metadata), self.cache)

    def without_cache(self) -> Document:
        """The same document with its analysis cache dropped (before it leaves a fused step)."""
        object.__setattr__(self, "cache", None)
        return self


@dataclass(frozen=True, slots=True)
class Verdict:
    """A stage's policy decision on one document: keep, or reject with a reason code.

    `doc` is the document as the stage leaves it (new text, scores, language); None means
    unchanged. A rejection may carry it too, so `rejected/` records what was known.
    """

    keep: bool
    reason: str | None = None
    detail: str | None = None
    doc: Document | None = None


KEEP = Verdict(True)


def keep(doc: Document) -> Verdict:
    """Keep `doc`, the updated copy of the document the stage was given."""
    return Verdict(True, doc=doc)


def reject(reason: str, detail: str = "", doc: Document | None = None) -> Verdict:
    """A rejection with a low-cardinality `reason` code and free-text `detail`."""
    return Verdict(False, reason, detail, doc)


@dataclass(slots=True)
class Rejection:
    """A removed document, as written to `rejected/`."""

    doc: Document
    stage: str
    reason: str
    detail: str = ""
    duplicate_of: str | None = None


@dataclass(slots=True)
class Failure:
    """A record that could not be processed, as written to `failed/`."""

    id: str
    source: str
    stage: str
    error: str
    message: str


Record = Document | Rejection | Failure  # what reading one input record gives
READ_STAGE = "read"  # the stage of the records that reading the input makes


def one_line(error: BaseException) -> str:
    """A read failure's message: `error`'s text on one line, at most 500 characters (else its class)."""
    return " ".join(str(error).split())[:500] or type(error).__name__
