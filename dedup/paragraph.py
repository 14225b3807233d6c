"""`paragraph_dedup`: keep every repeated paragraph in one document only and cut it from the others."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

import xxhash

from dedup.exact import HASH_SEED, normalize
from dedup.survivor import SURVIVOR_PARAMS, PrefersScore, survivor_key
from pipeline.decisions import DEFAULT_PARTITIONS, ApplyDecisions, decision_inputs, spill_dir
from pipeline.document import Document, Rejection, public_id
from pipeline.outcomes import KEPT, REJECTED
from pipeline.spill import SortedGroups
from pipeline.stages import CollectionStage, Param, StageOutputs, register

# Separators, captured so that a rebuilt text keeps the original line breaks (CRLF included).
SEPARATORS = {
    "blank_line": re.compile(r"((?:[ \t]*+(?:\r\n|\r|\n)){2,}+)"),
    "newline": re.compile(r"(\r\n|\r|\n)"),
}


def split_paragraphs(text: str, split: str) -> tuple[list[str], list[str]]:
    """(paragraphs, separators): `separators[i]` sits between `paragraphs[i]` and `paragraphs[i+1]`."""
    parts = SEPARATORS[split].split(text)
    return parts[0::2], parts[1::2]


def join_paragraphs(paragraphs: list[str], separators: list[str], removed: set[int]) -> str:
    """The text without the `removed` paragraphs; each kept one keeps the separator that preceded it."""
    out: list[str] = []
    for index, paragraph in enumerate(paragraphs):
        if index in removed:
            continue
        if out:
            out.append(separators[index - 1])
        out.append(paragraph)
    return "".join(out)


def doc_key(doc: Document) -> str:
    """Join key for one document: its `unique_id` plus a text hash, so two documents sharing an id stay apart."""
    return (
        f"{doc.unique_id}\x00{xxhash.xxh3_64_hexdigest(doc.text.encode('utf-8', 'surrogatepass'), HASH_SEED)}"
    )


@register("paragraph_dedup")
class ParagraphDedup(PrefersScore, CollectionStage):
    """Remove paragraphs repeated across documents, keeping each in one document (dolma-style).

    Paragraphs (blank-line or line separated) are hashed after normalization (NFC, whitespace
    collapsed, optionally lowercased) with a seeded 64-bit xxh3; grouping by the hash through files
    (`pipeline.spill.SortedGroups`: only hashes, orders and keys, and no shuffle held in memory)
    picks, for each repeated paragraph, the document that keeps it by the shared survivor order,
    and `pipeline.decisions.ApplyDecisions` joins the removals to the spilled documents and
    rebuilds every other holder's text without it. Paragraphs shorter than `min_chars` are never
    touched; repeats inside one document are left alone
    (that is `gopher_repetition`'s job). Edited documents carry `metadata["paragraphs_removed"]`.
    Reasons: `duplicate_paragraphs`, when an edited document keeps fewer than
    `min_remaining_chars` characters or none of its eligible paragraphs (`detail` = duplicated/
    eligible paragraphs, `duplicate_of` = the survivor holding most of them). A document that keeps
    the surviving copy of a paragraph is never rejected, so every repeated paragraph stays in
    exactly one kept document.
    """

    reasons = ("duplicate_paragraphs",)
    params = {
        "split": Param(
            str,
            "blank_line",
            "paragraph boundary: `blank_line` (one or more empty lines) or `newline` (every line)",
            choices=tuple(SEPARATORS),
        ),
        "min_chars": Param(
            int, 30, "paragraphs shorter than this (normalized characters) are never deduplicated", min=1
        ),
        "min_remaining_chars": Param(
            int,
            200,
            "an edited document with less text left than this (stripped characters) is rejected; "
            "0 keeps every edited document that has an eligible paragraph left",
            min=0,
        ),
        "lowercase": Param(bool, False, "compare paragraphs case-insensitively"),
        **SURVIVOR_PARAMS,
    }

    def paragraph_hashes(self, text: str) -> list[int | None]:
        """Seeded 64-bit hash per paragraph, None for paragraphs below `min_chars`."""
        hashes: list[int | None] = []
        for paragraph in split_paragraphs(text, self.split)[0]:
            normalized = normalize(paragraph, self.lowercase)
            if len(normalized) < self.min_chars:
                hashes.append(None)
            else:
                hashes.append(
                    xxhash.xxh3_64_intdigest(normalized.encode("utf-8", "surrogatepass"), HASH_SEED)
                )
        return hashes

    def occurrences(self, doc: Document) -> Iterator[tuple[int, tuple]]:
        """(paragraph hash, (survivor order, doc key, paragraph index)) for every eligible paragraph."""
        key = doc_key(doc)
        order = survivor_key(doc, self.prefer_score, self.tie_break)
        for index, digest in enumerate(self.paragraph_hashes(doc.text)):
            if digest is not None:
                yield digest, (order, key, index)

    @staticmethod
    def removals(_digest: int, values: Iterable[tuple]) -> Iterator[tuple[str, tuple[int, str | None]]]:
        """For one paragraph hash, its values in sorted order (the survivor's first): (doc key,
        (index, survivor id)) for each copy outside the survivor, in one pass, so a very common
        paragraph does not have to fit in a list; then (survivor key, (index, None)) when it keeps
        a paragraph that others lose."""
        values = iter(values)
        order, survivor, survivor_index = next(values)
        survivor_id = public_id(order[-1])  # the survivor order ends with the document's unique id
        cut_elsewhere = False
        for _, key, index in values:
            if key != survivor:
                cut_elsewhere = True
                yield key, (index, survivor_id)
        if cut_elsewhere:
            yield survivor, (survivor_index, None)

    def apply(self, doc: Document, decisions: list[tuple[int, str | None]], occurrence: int):
        """Apply one document's decisions ((paragraph index, survivor id) to cut, (index, None) for
        a paragraph it keeps for the others): kept as it is, kept edited, or rejected."""
        from apache_beam.metrics import Metrics

        removed = sorted({(index, survivor) for index, survivor in decisions if survivor is not None})
        if not removed:
            yield KEPT, doc
            return
        Metrics.counter(self.name, "docs_edited").inc()
        Metrics.counter(self.name, "paragraphs_removed").inc(len({index for index, _ in removed}))
        keeps = any(survivor is None for _, survivor in decisions)
        result = self.edit(doc, removed, keeps_for_others=keeps)
        yield (REJECTED if isinstance(result, Rejection) else KEPT), result

    def edit(
        self, doc: Document, removed: list[tuple[int, str]], keeps_for_others: bool
    ) -> Document | Rejection:
        """The document without the `removed` (index, survivor id) paragraphs, or its Rejection; a
        document that keeps a paragraph for the others is never rejected (that copy is the last)."""
        paragraphs, separators = split_paragraphs(doc.text, self.split)
        indices = {index for index, _ in removed}
        text = join_paragraphs(paragraphs, separators, indices)
        eligible = sum(digest is not None for digest in self.paragraph_hashes(doc.text))
        too_short = len(text.strip()) < self.min_remaining_chars or len(indices) >= eligible
        if too_short and not keeps_for_others:
            holders = Counter(survivor for _, survivor in removed)
            most = max(holders.values())
            duplicate_of = min(survivor for survivor, count in holders.items() if count == most)
            detail = f"duplicate_paragraphs={len(indices)}/{eligible} remaining_chars={len(text.strip())}"
            return Rejection(doc, self.name, "duplicate_paragraphs", detail, duplicate_of)
        metadata = {**doc.metadata, "paragraphs_removed": len(indices)}
        return doc.replace(text=text, metadata=metadata)

    def expand(self, docs, passthrough=None) -> StageOutputs:
        import apache_beam as beam

        removed = (
            docs
            | "Paragraphs" >> beam.FlatMap(self.occurrences)
            | "PickSurvivors"
            >> SortedGroups(
                f"{spill_dir(docs.pipeline, self.name)}/groups", self.removals, DEFAULT_PARTITIONS
            )
        )
        return decision_inputs(docs, removed, passthrough) | "Apply" >> ApplyDecisions(
            self.name, doc_key, self.apply, DEFAULT_PARTITIONS
        )
