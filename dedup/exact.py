"""`exact_dedup`: one survivor per group of documents with the same normalized text."""

from __future__ import annotations

import unicodedata

import xxhash

from dedup.survivor import SURVIVOR_PARAMS, survivor_key
from pipeline.document import Document, Rejection
from pipeline.stages import CollectionStage, Param, StageOutputs, register

HASH_SEED = 0x6772697374  # "grist"


def normalize(text: str, lowercase: bool) -> str:
    """NFC, whitespace collapsed and trimmed, optionally lowercased."""
    text = " ".join(unicodedata.normalize("NFC", text).split())
    return text.lower() if lowercase else text


@register("exact_dedup")
class ExactDedup(CollectionStage):
    """Remove exact duplicates (after whitespace/Unicode normalization), keeping one per group.

    GroupByKey on a seeded 128-bit hash of the normalized text; the survivor is the smallest
    document under the shared survivor order (score, then longest text or smallest id, then id).
    Reasons: `exact_duplicate` (`duplicate_of` = survivor id, `detail` = group size).
    """

    reasons = ("exact_duplicate",)
    params = {
        "lowercase": Param(bool, False, "compare case-insensitively"),
        **SURVIVOR_PARAMS,
    }

    def text_key(self, doc: Document) -> bytes:
        return xxhash.xxh3_128_digest(
            normalize(doc.text, self.lowercase).encode("utf-8", "surrogatepass"), HASH_SEED
        )

    def resolve_group(self, docs: list[Document]):
        """Yield the survivor, then a Rejection for every other member of the group."""
        if len(docs) == 1:
            yield docs[0]
            return
        docs = sorted(docs, key=lambda d: survivor_key(d, self.prefer_score, self.tie_break))
        survivor = docs[0]
        yield survivor
        for doc in docs[1:]:
            yield Rejection(doc, self.name, "exact_duplicate", f"group_size={len(docs)}", survivor.id)

    def expand(self, docs) -> StageOutputs:
        import apache_beam as beam

        from pipeline.outcomes import KEPT, REJECTED, SplitByTag

        grouped = (
            docs
            | "KeyByText" >> beam.Map(lambda doc: (self.text_key(doc), doc))
            | "GroupByText" >> beam.GroupByKey()
            | "PickSurvivor" >> beam.FlatMap(lambda kv: self.resolve_group(list(kv[1])))
        )
        split = (
            grouped
            | "Outcomes" >> beam.Map(lambda r: (REJECTED if isinstance(r, Rejection) else KEPT, r))
            | "Split" >> SplitByTag([KEPT, REJECTED])
        )
        kept, rejected = split[KEPT], split[REJECTED]
        failed = docs.pipeline | "NoFailures" >> beam.Create([])
        return StageOutputs(kept, rejected, failed)
