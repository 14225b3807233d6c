"""The record that flows through every stage, and the three outcomes a stage can give it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Document:
    """One document (or synthesis candidate).

    `cache` holds per-text analysis shared by consecutive stages (words, lines, n-grams);
    it is cleared whenever the text is replaced and never written to the output.
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
    cache: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __reduce__(self):
        """Pickle as a plain tuple (5x faster than the slots default) and never ship the cache."""
        return (
            Document,
            (
                self.id,
                self.text,
                self.source,
                self.url,
                self.language,
                self.language_score,
                self.scores,
                self.kind,
                self.metadata,
            ),
        )

    def cached(self, key: str, compute):
        """Return `compute(self.text)` once per text version, shared by every stage."""
        if self.cache is None:
            self.cache = {}
        try:
            return self.cache[key]
        except KeyError:
            value = self.cache[key] = compute(self.text)
            return value

    def replace_text(self, text: str) -> None:
        """Edit the text (c4_quality, pii_redact) and drop analysis made for the old text."""
        self.text = text
        self.cache = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """A stage's policy decision on one document: keep, or reject with a reason code."""

    keep: bool
    reason: str | None = None
    detail: str | None = None


KEEP = Verdict(True)


def reject(reason: str, detail: str = "") -> Verdict:
    """A rejection with a low-cardinality `reason` code and free-text `detail`."""
    return Verdict(False, reason, detail)


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
