"""`unit_dedup`: remove repeated knowledge units (paragraphs) across documents, and documents that
are mostly contained in another.

Why a stage of its own rather than inside `minhash_dedup` or `paragraph_dedup`: it matches
near-identical *parts* of documents (a copied, truncated or lightly revised paragraph), which
neither whole-document MinHash (a half-page copy has Jaccard ~0.5 with its source) nor exact
paragraph hashes (one changed word breaks the hash) can see, and it decides at two levels
(drop the document, or cut units from it), which the other stages do not.

Steps (Beam; no worker holds O(corpus) state; only ids, hashes and shingle sets are shuffled,
never documents):
1. units: the lines of a document with at least `min_words` words (`dedup.content.units`); each
   unit's word n-gram shingles (`dedup.signatures`), MinHash signature and band keys;
2. band keys shuffled in per-partition chunks; every shared bucket gives candidate unit pairs of
   different documents (a bucket above `max_bucket_size` becomes a star to its first unit);
3. verification: each pair meets its two shingle sets (a join keyed by unit) and is kept if
   their Jaccard similarity ≥ `jaccard_threshold`;
4. connected components of the verified pairs (`dedup.components`); a unit is named by
   (survivor order of its document, unit index), so a component's label, its smallest node, is
   the copy in the best document by the shared survivor order (prefer_score, tie_break, id);
5. every unit whose label lies in another document is a removal, keyed by its document's id;
   `pipeline.decisions.ApplyDecisions` joins the removals to the documents (spilled once by id
   partition, never shuffled), so a worker holds one partition's removals at a time;
6. per document: removed content characters / content characters ≥ `max_containment` →
   rejected `contained_in` (`duplicate_of` = the document holding most of the removed
   characters); otherwise the removed lines are cut from the text (`metadata.units_removed`:
   [unit index, id of the document that keeps it] per cut unit; `metadata.unit_chars_removed`), and a text left with fewer than `min_remaining_chars`
   characters is rejected `too_short_after_dedup`.

A unit's copies always keep the best document's copy, so a unit survives in exactly one kept
document unless that document is itself rejected as contained (then its few unique units go with
it: that is what `max_containment` trades).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics

from dedup.components import ConnectedComponents
from dedup.content import units
from dedup.lsh import curve_threshold
from dedup.minhash import _bucket_pairs, _doc_id, pack, verification_set
from dedup.signatures import MinHasher, band_keys, jaccard, shingle_hasher
from dedup.survivor import SURVIVOR_PARAMS, survivor_key
from pipeline.beam_stages import LostElements
from pipeline.decisions import ApplyDecisions, decision_inputs, spill_dir
from pipeline.document import Document, Rejection
from pipeline.outcomes import KEPT, REJECTED
from pipeline.spill import SpillGroups
from pipeline.stages import CollectionStage, Param, StageOutputs, register

CONTAINED = "contained_in"
TOO_SHORT = "too_short_after_dedup"


def unit_node(order: tuple, index: int) -> tuple:
    """A unit's name in the graph: its document's survivor order (ending with the id), then its index.
    The smallest node of a component is the copy to keep."""
    return (*order, index)


def node_doc(node: tuple) -> str:
    return node[-2]


@register("unit_dedup")
class UnitDedup(CollectionStage):
    """Remove paragraphs copied (exactly, truncated or lightly revised) from another document, and
    documents mostly contained in another.

    Reasons: `contained_in` (at least `max_containment` of the content characters are copies;
    `duplicate_of` = the document holding most of them), `too_short_after_dedup` (fewer than
    `min_remaining_chars` characters left after cutting copies). Edited documents carry
    `metadata.units_removed` ([unit index, id of the document keeping it] per cut unit) and
    `metadata.unit_chars_removed`.
    """

    reasons = (CONTAINED, TOO_SHORT)
    params = {
        "min_words": Param(
            int, 8, "a unit is a line with at least this many words; shorter lines are never touched", min=1
        ),
        "ngram": Param(int, 3, "words per shingle of a unit", min=1, max=16),
        "bands": Param(int, 30, "LSH bands over the unit signatures", min=1, max=256),
        "rows": Param(int, 3, "MinHash values per band", min=1, max=32),
        "jaccard_threshold": Param(
            float,
            0.5,
            "two units are copies when the Jaccard similarity of their shingle sets reaches this "
            "(calibrated in benchmarks/results/units.md)",
            min=0.01,
            max=1.0,
        ),
        "max_containment": Param(
            float,
            0.8,
            "a document whose content characters are at least this fraction copies is rejected "
            "whole as `contained_in`; below it, only the copied units are cut",
            min=0.0,
            max=1.0,
        ),
        "min_remaining_chars": Param(
            int, 200, "an edited document with fewer characters left (stripped) is rejected", min=0
        ),
        "seed": Param(int, 1, "seed of the shingle hash, the permutations and the band keys", min=0),
        "max_bucket_size": Param(
            int, 100, "a band bucket with more units links them to its first unit instead of all pairs", min=2
        ),
        "cc_rounds": Param(int, 20, "large-star/small-star rounds for connected components", min=1, max=64),
        "partitions": Param(int, 64, "shuffle partitions for band keys and documents", min=1),
        **SURVIVOR_PARAMS,
    }

    def manifest_extra(self) -> dict[str, Any]:
        return {
            "min_words": self.min_words,
            "ngram": self.ngram,
            "bands": self.bands,
            "rows": self.rows,
            "curve_threshold": round(curve_threshold(self.bands, self.rows), 4),
            "jaccard_threshold": self.jaccard_threshold,
            "max_containment": self.max_containment,
            "min_remaining_chars": self.min_remaining_chars,
        }

    def decide(self, doc: Document, removals: list[tuple[int, str]]) -> Document | Rejection:
        """Apply one document's removals ((unit index, survivor document id)): the edited
        document, the unchanged one (no removals), or its Rejection."""
        if not removals:
            return doc
        spans = units(doc.text, self.min_words)
        removed = {index: survivor for index, survivor in removals}
        content = sum(b - a for a, b in spans)
        by_holder: Counter[str] = Counter()
        for index, survivor in removed.items():
            by_holder[survivor] += spans[index][1] - spans[index][0]
        removed_chars = sum(by_holder.values())
        contained = removed_chars / content
        holder = min(by_holder, key=lambda s: (-by_holder[s], s))
        if contained >= self.max_containment:
            detail = f"containment={contained:.3f} units={len(removed)}/{len(spans)}"
            return Rejection(doc, self.name, CONTAINED, detail, holder)
        text = cut(doc.text, [spans[i] for i in sorted(removed)])
        if len(text.strip()) < self.min_remaining_chars:
            detail = f"remaining_chars={len(text.strip())} units_removed={len(removed)}/{len(spans)}"
            return Rejection(doc, self.name, TOO_SHORT, detail, holder)
        cuts = [[index, removed[index]] for index in sorted(removed)]
        return doc.replace(
            text=text, metadata={**doc.metadata, "units_removed": cuts, "unit_chars_removed": removed_chars}
        )

    def expand(self, docs: beam.PCollection, passthrough=None) -> StageOutputs:
        parts, name = self.partitions, self.name
        batches = docs | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
        fingerprints = batches | "Units" >> beam.FlatMap(_unit_fingerprints, self)
        bands = fingerprints | "OnlyBands" >> beam.FlatMap(lambda t: [t[1]] if t[0] == "band" else [])
        sets = fingerprints | "OnlySets" >> beam.FlatMap(lambda t: [t[1]] if t[0] == "set" else [])
        pairs = (
            bands
            | "BucketPairs"
            >> SpillGroups(
                f"{spill_dir(docs.pipeline, name)}/bands", _bucket_pairs, self.max_bucket_size, name
            )
            | "OtherDocuments" >> beam.Filter(lambda p: node_doc(p[0]) != node_doc(p[1]))
            | "DistinctPairs" >> beam.Distinct()
        )
        wants = pairs | "WantSets" >> beam.FlatMap(lambda p: ((p[0], ("pair", p)), (p[1], ("pair", p))))
        have = sets | "HaveSets" >> beam.Map(lambda kv: (kv[0], ("set", kv[1])))
        edges = (
            (wants, have)
            | "WantsAndSets" >> beam.Flatten()
            | "GroupByUnit" >> beam.GroupByKey()
            | "ShipSets" >> beam.FlatMap(_ship_sets)
            | "GroupPairs" >> beam.GroupByKey()
            | "CheckPairs" >> beam.FlatMap(_check_pair, self.jaccard_threshold, name)
        )
        removals = (
            edges
            | "Components" >> ConnectedComponents(self.cc_rounds, name)
            | "Removals" >> beam.FlatMap(_removal)
        )
        return decision_inputs(docs, removals, passthrough) | "Apply" >> ApplyDecisions(
            name, _doc_id, self.apply, parts
        )

    def apply(self, doc: Document, removals: list, occurrence: int):
        """One document and its removals ((unit index, survivor id)) → its outcome."""
        outcome = self.decide(doc, sorted(removals))
        if isinstance(outcome, Rejection):
            Metrics.counter(self.name, outcome.reason).inc()
            yield REJECTED, outcome
            return
        if outcome is not doc:
            Metrics.counter(self.name, "docs_edited").inc()
        yield KEPT, outcome


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the given line spans (sorted) and the line break that ends each."""
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        at = end
        if text.startswith("\r\n", at):
            at += 2
        elif at < len(text) and text[at] in "\r\n":
            at += 1
    out.append(text[at:])
    return "".join(out)


def _unit_fingerprints(batch: list[Document], stage: UnitDedup):
    """("band", (partition, packed keys and nodes)) chunks and ("set", (node, shingle bytes)) per unit."""
    hasher = shingle_hasher(stage.ngram, stage.seed)
    nodes, shingles = [], []
    for doc in batch:
        order = survivor_key(doc, stage.prefer_score, stage.tie_break)
        for index, (start, end) in enumerate(units(doc.text, stage.min_words)):
            unit_shingles = hasher(doc.text[start:end])
            if unit_shingles.size:
                nodes.append(unit_node(order, index))
                shingles.append(unit_shingles)
    Metrics.counter(stage.name, "units").inc(len(nodes))
    if not nodes:
        return
    for node, unit_shingles in zip(nodes, shingles):
        yield "set", (node, verification_set(unit_shingles))
    signatures = MinHasher(stage.bands * stage.rows, stage.seed).signatures(shingles)
    keys = band_keys(signatures, stage.bands, stage.rows, stage.seed).ravel()
    owner = np.repeat(np.arange(len(nodes)), stage.bands)
    part = keys % np.uint64(stage.partitions)
    order = np.argsort(part, kind="stable")
    for chunk in np.split(order, np.flatnonzero(np.diff(part[order])) + 1):
        yield "band", (int(part[chunk[0]]), pack((keys[chunk], [nodes[i] for i in owner[chunk]])))


def _ship_sets(item: tuple[tuple, Any]):
    """One unit: (pair, its shingle bytes) for every candidate pair it belongs to."""
    _, values = item
    shingle_bytes, pairs = None, []
    for kind, value in values:
        if kind == "set":
            shingle_bytes = value
        else:
            pairs.append(value)
    for pair in pairs:
        yield pair, shingle_bytes


def _check_pair(item: tuple[tuple, Any], threshold: float, name: str):
    """(pair, [set_a, set_b]) → the pair if the units' Jaccard similarity reaches `threshold`."""
    pair, sets = item
    sets = list(sets)
    if len(sets) != 2 or any(s is None for s in sets):
        raise LostElements(f"stage {name}: unit pair {pair} met {len(sets)} shingle sets instead of 2")
    similarity = jaccard(*(np.frombuffer(s, dtype=np.uint32) for s in sets))
    Metrics.counter(name, "candidate_pairs").inc()
    if similarity >= threshold:
        Metrics.counter(name, "verified_pairs").inc()
        yield pair


def _removal(item: tuple[tuple, tuple]):
    """(unit, component label) → (doc id, (unit index, survivor id)) when the component's best copy
    is in another document."""
    node, label = item
    if node_doc(node) != node_doc(label):
        yield node_doc(node), (node[-1], node_doc(label))
