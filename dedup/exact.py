"""`exact_dedup`: one survivor per group of documents with the same normalized text."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

import xxhash

from dedup.survivor import SURVIVOR_PARAMS, PrefersScore, survivor_key
from pipeline.beam_stages import LostElements
from pipeline.decisions import DEFAULT_PARTITIONS, ApplyDecisions, content_key, decision_inputs, spill_dir
from pipeline.document import Document, Rejection, public_id
from pipeline.outcomes import KEPT, REJECTED
from pipeline.spill import SortedGroups
from pipeline.stages import CollectionStage, Param, StageOutputs, register

HASH_SEED = 0x6772697374  # "grist"


def normalize(text: str, lowercase: bool) -> str:
    """NFC, whitespace collapsed and trimmed, optionally lowercased."""
    text = " ".join(unicodedata.normalize("NFC", text).split())
    return text.lower() if lowercase else text


@register("exact_dedup")
class ExactDedup(PrefersScore, CollectionStage):
    """Remove exact duplicates (after whitespace/Unicode normalization), keeping one per group.

    Groups compact members (seeded 128-bit hash of the normalized text → survivor order and
    content key; never the documents) through files (`pipeline.spill.SortedGroups`: Beam's local
    runner would hold a GroupByKey of one member per document in its driver); the survivor is the
    smallest member under the shared survivor order (score, then longest text or smallest id, then
    id). The decisions are joined back to the spilled documents by `pipeline.decisions.ApplyDecisions`.
    Reasons: `exact_duplicate` (`duplicate_of` = survivor id, `detail` = group size).
    """

    reasons = ("exact_duplicate",)
    params = {
        "lowercase": Param(bool, False, "compare case-insensitively"),
        **SURVIVOR_PARAMS,
    }

    def compared(self, doc: Document) -> Document:
        """The document as it is compared and ranked (its own text here)."""
        return doc

    def normalized(self, doc: Document) -> str:
        """The text that is hashed: `normalize`d."""
        return normalize(doc.text, self.lowercase)

    def text_key(self, doc: Document) -> bytes:
        return xxhash.xxh3_128_digest(self.normalized(doc).encode("utf-8", "surrogatepass"), HASH_SEED)

    def group_member(self, doc: Document) -> tuple[bytes, tuple]:
        """(text hash, (survivor order, content key)): all a group needs, not the document."""
        compared = self.compared(doc)
        order = survivor_key(compared, self.prefer_score, self.tie_break)
        return self.text_key(compared), (order, content_key(doc))

    def resolve_group(self, _text_key: bytes, members: Iterable[tuple]):
        """One text hash's members → (content key, decision) for each, if the group has several:
        None for the survivor, (group size, survivor id) for every other member."""
        members = sorted(members)
        if len(members) == 1:
            return
        survivor_order, survivor = members[0]
        yield survivor, None
        for _, key in members[1:]:
            yield key, (len(members), public_id(survivor_order[-1]))

    def apply(self, doc: Document, decisions: list, occurrence: int):
        """Keep or reject one document by its key's decisions; identical copies (same content key)
        take the decisions in order, the survivor's keep first."""
        if not decisions:
            yield KEPT, doc
            return
        decisions = sorted(decisions, key=lambda d: (d is not None, d))
        if occurrence >= len(decisions):
            raise LostElements(f"stage {self.name}: document {doc.id!r} has no exact_dedup decision")
        decision = decisions[occurrence]
        if decision is None:
            yield KEPT, doc
        else:
            size, survivor = decision
            yield REJECTED, Rejection(doc, self.name, "exact_duplicate", f"group_size={size}", survivor)

    def expand(self, docs, passthrough=None) -> StageOutputs:
        import apache_beam as beam

        decisions = (
            docs
            | "KeyByText" >> beam.Map(self.group_member)
            | "PickSurvivors"
            >> SortedGroups(
                f"{spill_dir(docs.pipeline, self.name)}/groups", self.resolve_group, DEFAULT_PARTITIONS
            )
        )
        return decision_inputs(docs, decisions, passthrough) | "Apply" >> ApplyDecisions(
            self.name, content_key, self.apply, DEFAULT_PARTITIONS
        )
