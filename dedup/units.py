"""`unit_dedup`: remove repeated knowledge units (paragraphs) across documents, and documents that
are mostly contained in another.

Why a stage of its own rather than inside `minhash_dedup` or `paragraph_dedup`: it matches
near-identical *parts* of documents (a copied, truncated or lightly revised paragraph), which
neither whole-document MinHash (a half-page copy has Jaccard ~0.5 with its source) nor exact
paragraph hashes (one changed word breaks the hash) can see, and it decides at two levels
(drop the document, or cut units from it), which the other stages do not.

Steps (Beam; no worker holds O(corpus) state; only ids, hashes, shingle sets and unit vectors are
shuffled, never documents; steps 2 and 3's lexical half are in `dedup.unit_candidates`):
1. units: the lines of a document with at least `min_words` words (`dedup.content.units`); each
   unit's word n-gram shingles (`dedup.signatures`) and, with an `embedder`, its vector;
2. classes: units with the same shingle set are one class (grouped by the set's hash, in
   per-partition chunks of columns, through spill files: `pipeline.spill.SpillGroups`, and sorted
   there). Its representative is its smallest node; only representatives go on, so a paragraph
   repeated on many pages costs one unit below, not one per copy;
3. candidates among representatives: MinHash LSH bands (a shared bucket gives candidate pairs; a
   bucket above `max_bucket_size` becomes a star to its first unit; band chunks carry the nodes
   as columns, buckets and pairs are numpy arrays of class numbers; pairs travel as (end columns,
   row arrays) chunks by pair partition and are made distinct there, as in `minhash_dedup`, where
   a node tuple is built once per end), verified by the Jaccard
   similarity of the two shingle sets ≥ `jaccard_threshold` (each pair fetches the two
   representatives' sets, which the class step wrote out; the units are read once); with an
   `embedder`, also the `neighbours` nearest units by centered cosine within one (language,
   k-means cluster), kept at cosine ≥ `cosine_threshold` (`clusters.ClusterVectors`, `kmeans.neighbour_pairs`).
   Two units of one document are never a pair unless either class has copies in other documents;
4. connected components of the verified pairs (`dedup.components`); a unit is named by
   (survivor order of its document, unit index), so a component's label, its smallest node, is
   the copy in the best document by the shared survivor order (prefer_score, tie_break, id);
5. every unit (representative or class member) whose label lies in another document is a
   removal, keyed by its document's id: the labels meet their classes by class partition (spill
   files again), and each class partition sends its removals as one `DecisionChunk` per document
   partition, not one element per unit; `pipeline.decisions.ApplyDecisions` joins them to the
   documents (spilled once by id partition, never shuffled);
6. per document: removed content characters / content characters ≥ `max_containment` →
   rejected `contained_in` (`duplicate_of` = the document holding most of the removed
   characters); otherwise the removed lines are cut from the text (`metadata.units_removed`:
   [unit index, id of the document that keeps it] per cut unit; `metadata.unit_chars_removed`),
   and a text left with fewer than `min_remaining_chars` characters is rejected
   `too_short_after_dedup`. A document whose units could not be embedded fails.

Step 2 changes no decision: units of one class have equal MinHash signatures, so they fall into
the same buckets as their representative and verify against the same sets; it only removes the
copies' own pairs and edges, which on web text (shared boilerplate, reposted paragraphs) are most.

A unit's copies always keep the best document's copy, and a document that keeps a copy for the
others is never rejected (it is told so by a decision of its own, and kept with what is left), so
every copied unit survives in exactly one kept document. Only a document that keeps none loses its
few unique units with it when it is rejected as contained: that is what `max_containment` trades.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import apache_beam as beam
import numpy as np
import xxhash
from apache_beam.metrics import Metrics

from dedup import kmeans
from dedup.clusters import ClusterVectors
from dedup.components import ConnectedComponents
from dedup.content import units
from dedup.lsh import curve_threshold
from dedup.minhash import VerifyPairs, _doc_id, unpack
from dedup.semantic import _ENCODE_LOCK, load_embedder
from dedup.signatures import shingle_hasher
from dedup.survivor import SURVIVOR_PARAMS, PrefersScore, survivor_key
from dedup.unit_candidates import (
    BAND,
    MEMBERS,
    SETS,
    VECTORS,
    bucket_pairs,
    class_endpoints,
    distinct_class_pairs,
    node_doc,
    unit_chunks,
    unit_classes,
    unit_node,
)
from filters.language import check_language_codes
from pipeline.beam_stages import failure
from pipeline.decisions import ApplyDecisions, DecisionChunk, decision_inputs, key_partition, spill_dir
from pipeline.document import Document, Rejection, public_id
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag
from pipeline.spill import SpillGroups
from pipeline.stages import CollectionStage, Param, StageOutputs, register

CONTAINED = "contained_in"
TOO_SHORT = "too_short_after_dedup"
UNIT, LABEL = "unit", "label"
EMBEDDERS = ("", "static", "minilm", "minilm-bf16")
MAX_CLUSTER_SIZE = 10_000  # units; a larger k-means cluster is split before the neighbour search
PartitionKeyed = tuple[int, Any]


@register("unit_dedup")
class UnitDedup(PrefersScore, CollectionStage):
    """Remove paragraphs copied (exactly, truncated or lightly revised) from another document, and
    documents mostly contained in another.

    Reasons: `contained_in` (at least `max_containment` of the content characters are copies;
    `duplicate_of` = the document holding most of them), `too_short_after_dedup` (fewer than
    `min_remaining_chars` characters left after cutting copies). A document that keeps the
    surviving copy of a unit is never rejected, so every copied unit stays in exactly one kept
    document. Edited documents carry `metadata.units_removed` ([unit index, id of the document
    keeping it] per cut unit) and `metadata.unit_chars_removed`.
    """

    reasons = (CONTAINED, TOO_SHORT)
    params = {
        "min_words": Param(
            int,
            8,
            "a unit is a line with at least this many words (overlapping character pairs in scripts "
            "written without spaces, such as Chinese, Japanese and Thai); shorter lines are never touched",
            min=1,
        ),
        "ngram": Param(int, 3, "words per shingle of a unit", min=1, max=16),
        "bands": Param(int, 30, "LSH bands over the unit signatures", min=1, max=256),
        "rows": Param(int, 3, "MinHash values per band", min=1, max=32),
        "jaccard_threshold": Param(
            float,
            0.6,
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
        "seed": Param(
            int, 1, "seed of the shingle hash, the permutations and the band keys", min=0, max=2**31 - 1
        ),
        "max_bucket_size": Param(
            int, 100, "a band bucket with more units links them to its first unit instead of all pairs", min=2
        ),
        "cc_rounds": Param(int, 20, "large-star/small-star rounds for connected components", min=1, max=64),
        "partitions": Param(int, 64, "shuffle partitions for unit classes, band keys and documents", min=1),
        "embedder": Param(
            str,
            "",
            "also pair units by embedding (static, minilm, minilm-bf16): nearest neighbours within a "
            "language and k-means cluster; empty: lexical matching only (benchmarks/results/units.md)",
            choices=EMBEDDERS,
        ),
        "cosine_threshold": Param(
            float,
            0.95,
            "with an embedder: two units are copies when their centered cosine similarity reaches this",
            min=-1.0,
            max=1.0,
        ),
        "neighbours": Param(int, 8, "with an embedder: nearest units searched per unit", min=1, max=256),
        "embed_languages": Param(
            list[str],
            ["en"],
            "with an embedder: units of documents whose `language` is set and not listed are matched "
            "lexically only (the embedders are English models); empty: every document",
        ),
        **SURVIVOR_PARAMS,
    }

    def configure(self) -> None:
        check_language_codes(self.embed_languages, "embed_languages")

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
            "embedder": self.embedder or "none (lexical only)",
        } | (
            {
                "cosine_threshold": self.cosine_threshold,
                "neighbours": self.neighbours,
                "embed_languages": self.embed_languages,
            }
            if self.embedder
            else {}
        )

    def decide(self, doc: Document, decisions: list[tuple[int, str | None]]) -> Document | Rejection:
        """Apply one document's decisions ((unit index, survivor document id) to cut, (unit index,
        None) for a unit it keeps for the others): the edited document, the unchanged one (no
        cuts), or its Rejection. A document that keeps a unit for the others is never rejected:
        that copy is the last one."""
        removed = {index: survivor for index, survivor in decisions if survivor is not None}
        if not removed:
            return doc
        keeps_for_others = any(survivor is None for _, survivor in decisions)
        spans = units(doc.text, self.min_words)
        content = sum(b - a for a, b in spans)
        by_holder: Counter[str] = Counter()
        for index, survivor in removed.items():
            by_holder[survivor] += spans[index][1] - spans[index][0]
        removed_chars = sum(by_holder.values())
        contained = removed_chars / content
        holder = min(by_holder, key=lambda s: (-by_holder[s], s))
        if contained >= self.max_containment and not keeps_for_others:
            detail = f"containment={contained:.3f} units={len(removed)}/{len(spans)}"
            return Rejection(doc, self.name, CONTAINED, detail, holder)
        text = cut(doc.text, [spans[i] for i in sorted(removed)])
        if len(text.strip()) < self.min_remaining_chars and not keeps_for_others:
            detail = f"remaining_chars={len(text.strip())} units_removed={len(removed)}/{len(spans)}"
            return Rejection(doc, self.name, TOO_SHORT, detail, holder)
        cuts = [[index, removed[index]] for index in sorted(removed)]
        return doc.replace(
            text=text, metadata={**doc.metadata, "units_removed": cuts, "unit_chars_removed": removed_chars}
        )

    def expand(self, docs: beam.PCollection, passthrough=None) -> StageOutputs:
        name, parts = self.name, self.partitions
        spill = spill_dir(docs.pipeline, name)
        found = (
            docs
            | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
            | "Units" >> beam.ParDo(_UnitsFn(self))
            | "SplitUnits" >> SplitByTag((UNIT, FAILED))
        )
        classes = (
            found[UNIT]
            | "GroupClasses"
            >> SpillGroups(f"{spill}/units", unit_classes, self.bands, self.rows, self.seed, parts, name)
            | "SplitClasses" >> SplitByTag((BAND, SETS, MEMBERS, VECTORS))
        )
        pairs = (
            classes[BAND]
            | "BucketPairs" >> SpillGroups(f"{spill}/bands", bucket_pairs, self.max_bucket_size, name, parts)
            | "DistinctPairs" >> SpillGroups(f"{spill}/pairs", distinct_class_pairs)
        )
        edges = (
            pairs
            | "Verify"
            >> VerifyPairs(classes[SETS], class_endpoints, self.jaccard_threshold, name, parts, spill)
            | "UnpackPairs" >> beam.Map(unpack)
        )
        if self.embedder:
            edges = (edges, classes[VECTORS] | "EmbeddingPairs" >> _EmbeddingPairs(self))
        labels = edges | "Components" >> ConnectedComponents(
            self.cc_rounds, name, parts, f"{spill}/components"
        )
        removals = (
            labels
            | "LabelOfClass"
            >> beam.Map(lambda kv: (kv[0][1] % parts, (LABEL, (kv[0][0], kv[1][0])))).with_output_types(
                PartitionKeyed
            ),
            classes[MEMBERS]
            | "MembersOfClasses"
            >> beam.MapTuple(lambda part, blob: (part, (MEMBERS, blob))).with_output_types(PartitionKeyed),
        ) | "Removals" >> SpillGroups(f"{spill}/members", _removals, parts)
        return decision_inputs(docs, (removals, found[FAILED]), passthrough) | "Apply" >> ApplyDecisions(
            name, _doc_id, self.apply, parts
        )

    def apply(self, doc: Document, decisions: list, occurrence: int):
        """One document and its decisions (removals (unit index, survivor id), or a failure) → its outcome."""
        failures = [d[1] for d in decisions if d[0] == FAILED]
        if failures:
            yield FAILED, failures[0]
            return
        outcome = self.decide(doc, decisions)
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


class _UnitsFn(beam.DoFn):
    """A batch of documents → (UNIT, (class partition, packed chunk)): its units by column
    (`unit_candidates.unit_chunks`), keyed by the hash of each unit's shingle set; and (FAILED, (doc id,
    (FAILED, failure record))) per document whose units could not be embedded (its units are left
    out of the graph)."""

    def __init__(self, stage: UnitDedup) -> None:
        self.name, self.min_words = stage.name, stage.min_words
        self.ngram, self.seed = stage.ngram, stage.seed
        self.partitions, self.order = stage.partitions, (stage.prefer_score, stage.tie_break)
        self.embedder_name, self.languages = stage.embedder, frozenset(stage.embed_languages)

    def setup(self) -> None:
        self.hasher = shingle_hasher(self.ngram, self.seed)
        self.embedder = load_embedder(self.embedder_name) if self.embedder_name else None

    def process(self, batch: list[Document]):
        found = [self._units(doc) for doc in batch]
        vectors: list[np.ndarray | None] = [None] * len(batch)
        rows = [row for row, doc in enumerate(batch) if self.embedder is not None and self._embedded(doc)]
        try:
            for row, doc_vectors in zip(rows, self._embed([found[row] for row in rows]) if rows else []):
                vectors[row] = doc_vectors
        except Exception:  # isolate the document(s) that broke the batch
            for row in rows:
                try:
                    vectors[row] = self._embed([found[row]])[0]
                except Exception as exc:
                    Metrics.counter(self.name, "embed_failed").inc()
                    yield FAILED, (batch[row].unique_id, (FAILED, failure(batch[row], self.name, exc)))
                    found[row] = []
        keys, nodes, languages, shingles, unit_vectors = [], [], [], [], []
        for doc, units_of, doc_vectors in zip(batch, found, vectors):
            for i, (node, _, hashes) in enumerate(units_of):
                keys.append(xxhash.xxh64_intdigest(hashes))
                nodes.append(node)
                languages.append(doc.language or "")
                shingles.append(hashes)
                unit_vectors.append(None if doc_vectors is None else doc_vectors[i])
        Metrics.counter(self.name, "units").inc(len(keys))
        for part, chunk in unit_chunks(keys, nodes, languages, shingles, unit_vectors, self.partitions):
            yield UNIT, (part, chunk)

    def _units(self, doc: Document) -> list[tuple[tuple, str, np.ndarray]]:
        """(node, text, shingle hashes) of each unit of `doc` that has shingles."""
        order = survivor_key(doc, *self.order)
        found = []
        for index, (start, end) in enumerate(units(doc.text, self.min_words)):
            shingles = self.hasher(doc.text[start:end])
            if shingles.size:
                found.append((unit_node(order, index), doc.text[start:end], shingles))
        return found

    def _embedded(self, doc: Document) -> bool:
        return not self.languages or doc.language is None or doc.language in self.languages

    def _embed(self, grouped: list[list]) -> list[np.ndarray]:
        """float16 unit vectors of the units of each document of `grouped`."""
        texts = [text for units_of in grouped for _, text, _ in units_of]
        with _ENCODE_LOCK:  # threads of one SDK worker share the embedder
            x = self.embedder.encode(texts, batch_size=256).astype(np.float16)
        return np.split(x, np.cumsum([len(g) for g in grouped])[:-1])


def _removals(_partition: int, values: Iterable, partitions: int):
    """One class partition's component labels ((node, label node) of representatives in a verified
    pair) and classes of several units → `DecisionChunk`s of (doc id, (unit index, survivor id)),
    one per document partition, for every unit whose component keeps its copy in another document,
    and (doc id, (unit index, None)) for each copy kept that way (a component spread over several
    class partitions sends it from each)."""
    labels, classes = {}, {}
    for kind, value in values:
        if kind == LABEL:
            labels[value[0]] = value[1]
        else:
            classes.update(unpack(value))
    chunks: dict[int, list] = defaultdict(list)
    keepers: set[tuple] = set()
    for rep in sorted(labels.keys() | classes.keys()):
        label = labels.get(rep, rep)
        for node in (rep, *classes.get(rep, ())):
            if node_doc(node) != node_doc(label):
                chunks[key_partition(node_doc(node), partitions)].append(
                    (node_doc(node), (node[-1], public_id(node_doc(label))))
                )
                keepers.add(label)
    for label in sorted(keepers):  # (unit index, None): the document keeps that unit for the others
        chunks[key_partition(node_doc(label), partitions)].append((node_doc(label), (label[-1], None)))
    for part in sorted(chunks):
        yield DecisionChunk(part, chunks[part])


def _unit_key(member: tuple) -> str:
    """A unit's id for the k-means sample: document id and unit index."""
    return f"{node_doc(member[0])}#{member[0][-1]}"


def _unit_public_key(member: tuple) -> str:
    """`_unit_key` with the record's id instead of the run-unique one."""
    return f"{public_id(node_doc(member[0]))}#{member[0][-1]}"


def _unit_language(member: tuple) -> str:
    return member[2]


class _EmbeddingPairs(beam.PTransform):
    """Representatives' vectors → ((node, class key), (node, class key)) of units whose centered cosine reaches
    `cosine_threshold`, among each unit's `neighbours` nearest within one (language, cluster)."""

    def __init__(self, stage: UnitDedup) -> None:
        super().__init__()
        self.stage = stage

    def expand(self, vectors):
        stage = self.stage
        args = (stage.neighbours, stage.cosine_threshold, stage.seed, stage.name)
        clustered = ClusterVectors(
            stage.name, _unit_key, _unit_public_key, _unit_language, _nearest_pairs, args=args,
            seed=stage.seed, sample_size=20_000, center=True, clusters=0, iterations=20,
        )  # fmt: skip
        return vectors | "ClusterUnits" >> clustered


def _nearest_pairs(_cluster: tuple, members: list, neighbours: int, threshold: float, seed: int, name: str):
    """One (language, cluster) of (member, centered vector, centroid cosine) → linkable node pairs."""
    members = sorted(members, key=lambda m: m[0][0])
    x = np.stack([m[1] for m in members])
    parts = np.zeros(len(members), dtype=np.int64)
    if len(members) > MAX_CLUSTER_SIZE:
        parts = kmeans.split_oversized(x, MAX_CLUSTER_SIZE, seed)
    for part in np.unique(parts):
        rows = np.flatnonzero(parts == part)
        a, b, _ = kmeans.neighbour_pairs(x[rows], neighbours, threshold)
        for i, j in zip(rows[a].tolist(), rows[b].tolist()):
            (node_a, multi_a, _, key_a), (node_b, multi_b, _, key_b) = members[i][0], members[j][0]
            if multi_a or multi_b or node_doc(node_a) != node_doc(node_b):
                Metrics.counter(name, "embedding_pairs").inc()
                yield (node_a, key_a), (node_b, key_b)
