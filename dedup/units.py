"""`unit_dedup`: remove repeated knowledge units (paragraphs) across documents, and documents that
are mostly contained in another.

Why a stage of its own rather than inside `minhash_dedup` or `paragraph_dedup`: it matches
near-identical *parts* of documents (a copied, truncated or lightly revised paragraph), which
neither whole-document MinHash (a half-page copy has Jaccard ~0.5 with its source) nor exact
paragraph hashes (one changed word breaks the hash) can see, and it decides at two levels
(drop the document, or cut units from it), which the other stages do not.

Steps (Beam; no worker holds O(corpus) state; only ids, hashes, shingle sets and unit vectors are
shuffled, never documents):
1. units: the lines of a document with at least `min_words` words (`dedup.content.units`); each
   unit's word n-gram shingles (`dedup.signatures`) and, with an `embedder`, its vector;
2. classes: units with the same shingle set are one class (grouped by the set's hash, in
   per-partition chunks, through spill files: `pipeline.spill.SpillGroups`). Its representative is
   its smallest node; only representatives go on, so a paragraph repeated on many pages costs one
   unit below, not one per copy;
3. candidates among representatives: MinHash LSH bands (a shared bucket gives candidate pairs; a
   bucket above `max_bucket_size` becomes a star to its first unit; band chunks carry the nodes
   as columns, buckets and pairs are numpy arrays of class numbers, and a node tuple is rebuilt
   once per class in a shared bucket; pairs travel as (ends, row arrays) chunks by pair
   partition and are made distinct there, as in `minhash_dedup`), verified by the Jaccard
   similarity of the two shingle sets ≥ `jaccard_threshold` (each pair fetches the two
   representatives' sets, which the class step wrote out; the units are read once); with an
   `embedder`, also the `neighbours` nearest units by centered cosine within one (language,
   k-means cluster), kept at cosine ≥ `cosine_threshold` (`semantic.ClusterVectors`, `kmeans.neighbour_pairs`).
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

A unit's copies always keep the best document's copy, so a unit survives in exactly one kept
document unless that document is itself rejected as contained (then its few unique units go with
it: that is what `max_containment` trades).
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
from dedup.components import ConnectedComponents
from dedup.content import units
from dedup.lsh import curve_threshold
from dedup.minhash import (
    VerifyPairs,
    _doc_id,
    pack,
    report,
    unpack,
    verification_sets,
)
from dedup.semantic import _ENCODE_LOCK, ClusterVectors, load_embedder
from dedup.signatures import MinHasher, band_keys, shingle_hasher
from dedup.survivor import SURVIVOR_PARAMS, survivor_key
from pipeline.beam_stages import failure
from pipeline.decisions import ApplyDecisions, DecisionChunk, decision_inputs, key_partition, spill_dir
from pipeline.document import Document, Rejection
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag
from pipeline.spill import SpillGroups
from pipeline.stages import CollectionStage, Param, StageOutputs, register

CONTAINED = "contained_in"
TOO_SHORT = "too_short_after_dedup"
UNIT, BAND, SETS, MEMBERS, VECTORS, LABEL = "unit", "band", "sets", "members", "vectors", "label"
EMBEDDERS = ("", "static", "minilm", "minilm-bf16")
MAX_CLUSTER_SIZE = 10_000  # units; a larger k-means cluster is split before the neighbour search
PartitionKeyed = tuple[int, Any]


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
            >> SpillGroups(f"{spill}/units", _classes, self.bands, self.rows, self.seed, parts, name)
            | "SplitClasses" >> SplitByTag((BAND, SETS, MEMBERS, VECTORS))
        )
        pairs = (
            classes[BAND]
            | "BucketPairs"
            >> SpillGroups(f"{spill}/bands", _unit_bucket_pairs, self.max_bucket_size, name, parts)
            | "DistinctPairs" >> SpillGroups(f"{spill}/pairs", _distinct_class_pairs)
        )
        edges = (
            pairs
            | "Verify"
            >> VerifyPairs(classes[SETS], _class_endpoints, self.jaccard_threshold, name, parts, spill)
            | "UnpackPairs" >> beam.Map(unpack)
        )
        if self.embedder:
            near = classes[VECTORS] | "EmbeddingPairs" >> _EmbeddingPairs(self)
            edges = (edges, near) | "AllEdges" >> beam.Flatten()
        labels = edges | "Components" >> ConnectedComponents(self.cc_rounds, name)
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
        decisions = (removals, found[FAILED]) | "AllDecisions" >> beam.Flatten()
        return decision_inputs(docs, decisions, passthrough) | "Apply" >> ApplyDecisions(
            name, _doc_id, self.apply, parts
        )

    def apply(self, doc: Document, decisions: list, occurrence: int):
        """One document and its decisions (removals (unit index, survivor id), or a failure) → its outcome."""
        failures = [d[1] for d in decisions if d[0] == FAILED]
        if failures:
            yield FAILED, failures[0]
            return
        outcome = self.decide(doc, sorted(decisions))
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
    """A batch of documents → (UNIT, (class partition, packed [(class key, node, language, shingle
    bytes, float16 vector bytes or None)])) chunks, keyed by the hash of each unit's shingle set
    (bytes, not arrays: a chunk pickles and unpickles much faster); and (FAILED, (doc id,
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
                    yield FAILED, (batch[row].id, (FAILED, failure(batch[row], self.name, exc)))
                    found[row] = []
        chunks: dict[int, list] = defaultdict(list)
        for doc, units_of, doc_vectors in zip(batch, found, vectors):
            for i, (node, _, shingles) in enumerate(units_of):
                shingle_bytes = shingles.tobytes()
                key = xxhash.xxh64_intdigest(shingle_bytes)
                vector = None if doc_vectors is None else doc_vectors[i].tobytes()
                chunks[key % self.partitions].append((key, node, doc.language or "", shingle_bytes, vector))
        Metrics.counter(self.name, "units").inc(sum(map(len, chunks.values())))
        for part in sorted(chunks):
            yield UNIT, (part, pack(chunks[part]))

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


def _classes(
    partition: int, blobs: Iterable[bytes], bands: int, rows: int, seed: int, partitions: int, name: str
):
    """One class partition's units → for each class (same shingle set) its representative (the
    smallest node): band key chunks (BAND, (band partition, packed (keys, node fields as columns,
    multi, class keys))), the representatives' verification sets (SETS, (partition, packed [(class key, set)])),
    the classes of several units (MEMBERS, (partition, packed [(node, other nodes)])) and, with an
    embedder, (VECTORS, (members, vectors)). `multi`: the class has units in several documents."""
    classes: dict[int, list] = defaultdict(list)
    for blob in blobs:
        for key, *unit in unpack(blob):
            classes[key].append(unit)
    reps, embedded, members_of = [], [], []
    for key in sorted(classes):
        members = sorted(classes[key], key=lambda unit: unit[0])
        multi = len({node_doc(unit[0]) for unit in members}) > 1
        if len(members) > 1:
            members_of.append((members[0][0], [unit[0] for unit in members[1:]]))
        reps.append((members[0], multi, key))
        vector = next((unit for unit in members if unit[3] is not None), None)  # its embedded copy
        if vector is not None:
            member = (members[0][0], multi, vector[1], key)
            embedded.append((member, np.frombuffer(vector[3], dtype=np.float16)))
    if not reps:
        return
    Metrics.counter(name, "unit_classes").inc(len(reps))
    shingles = [np.frombuffer(unit[2], dtype=np.uint64) for unit, _, _ in reps]
    sets = list(zip((key for _, _, key in reps), verification_sets(shingles)))
    signatures = MinHasher(bands * rows, seed).signatures(shingles)
    keys = band_keys(signatures, bands, rows, seed).ravel()
    owner = np.repeat(np.arange(len(reps)), bands)
    part = keys % np.uint64(partitions)
    order = np.argsort(part, kind="stable")
    columns = [_column(field) for field in zip(*(unit[0] for unit, _, _ in reps))]
    multi = np.array([m for _, m, _ in reps], dtype=bool)
    class_keys = np.array([key for _, _, key in reps], dtype=np.uint64)
    for chunk in np.split(order, np.flatnonzero(np.diff(part[order])) + 1):
        rows = owner[chunk]
        nodes = [_take(column, rows) for column in columns]
        yield BAND, (int(part[chunk[0]]), pack((keys[chunk], nodes, multi[rows], class_keys[rows])))
    yield SETS, (partition, pack(sets))
    if members_of:
        yield MEMBERS, (partition, pack(members_of))
    if embedded:
        yield VECTORS, ([m for m, _ in embedded], np.stack([v for _, v in embedded]).astype(np.float32))


def _column(values: tuple) -> np.ndarray | list:
    """One field of many nodes: a numpy array when every value is a float, or every one an int
    that fits int64 (it pickles as one buffer and `tolist` restores the same values); else a list."""
    kind = type(values[0])
    if kind in (float, int) and all(type(value) is kind for value in values):
        try:
            return np.array(values, dtype=np.float64 if kind is float else np.int64)
        except OverflowError:
            pass
    return list(values)


def _take(column: np.ndarray | list, rows: np.ndarray) -> np.ndarray | list:
    return column[rows] if isinstance(column, np.ndarray) else [column[i] for i in rows.tolist()]


def _gather(parts: list, rows: np.ndarray) -> list:
    """The values at `rows` of one node field split over several chunks, as Python values."""
    if all(isinstance(part, np.ndarray) for part in parts):
        return np.concatenate(parts)[rows].tolist()
    ends = np.cumsum([len(part) for part in parts])
    which = np.searchsorted(ends, rows, side="right")
    within = rows - np.concatenate(([0], ends))[which]
    lists = [part.tolist() if isinstance(part, np.ndarray) else part for part in parts]
    return [lists[c][i] for c, i in zip(which.tolist(), within.tolist())]


def _unit_bucket_pairs(
    _partition: int, blobs: Iterable[bytes], max_bucket_size: int, name: str, partitions: int
):
    """One band partition's chunks (band keys and, by column, the representatives' nodes, `multi`
    flags and class keys) → its distinct linkable candidate pairs as one chunk per pair partition:
    (pair partition, packed (ends, first end rows, second end rows)), an end being (node, class
    key) and a pair's first end the one of smaller class key. Buckets and pairs are numpy arrays of
    class numbers; a node tuple is rebuilt once per class in a shared bucket."""
    chunks = [unpack(blob) for blob in blobs]
    rows, bucket = _shared_rows(np.concatenate([chunk[0] for chunk in chunks]))
    if not rows.size:
        return
    class_keys, first, member = np.unique(
        np.concatenate([chunk[3] for chunk in chunks])[rows], return_index=True, return_inverse=True
    )
    picked = rows[first]
    fields = len(chunks[0][1])
    nodes = list(zip(*(_gather([chunk[1][f] for chunk in chunks], picked) for f in range(fields))))
    multi = np.concatenate([chunk[2] for chunk in chunks])[picked]
    entries = list(zip(nodes, multi.tolist(), class_keys.tolist()))
    counts: Counter[str] = Counter(shared_buckets=int(np.unique(bucket).size))
    a, b = _member_pairs(bucket, member.ravel(), max_bucket_size, entries, counts)
    doc = np.unique([node_doc(node) for node in nodes], return_inverse=True)[1].ravel()
    linkable = multi[a] | multi[b] | (doc[a] != doc[b])  # not two classes of one document alone
    a, b = a[linkable], b[linkable]
    part = _class_pair_partition(class_keys[a], class_keys[b], partitions)
    report(name, counts)
    for p in np.unique(part).tolist():
        in_part = part == p
        used, rows_of = np.unique(np.concatenate((a[in_part], b[in_part])), return_inverse=True)
        half = int(in_part.sum())
        ends = [(nodes[i], entries[i][2]) for i in used.tolist()]
        yield p, pack((ends, rows_of[:half], rows_of[half:]))


def _shared_rows(band_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of `band_keys` in buckets (equal keys) of more than one row, and each one's bucket
    number (buckets numbered in key order)."""
    order = np.argsort(band_keys, kind="stable")
    ordered = band_keys[order]
    bucket = np.cumsum(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    shared = np.bincount(bucket)[bucket] > 1
    return order[shared], bucket[shared]


def _member_pairs(
    bucket: np.ndarray, member: np.ndarray, max_bucket_size: int, entries: list, counts: Counter
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct candidate pairs (a, b), a < b, of class numbers over all buckets: every pair of
    a bucket's distinct members, or, above `max_bucket_size` members, a star to the smallest by
    `entries` (counted in `counts`)."""
    order = np.lexsort((member, bucket))
    bucket, member = bucket[order], member[order]
    distinct = np.concatenate(([True], (bucket[1:] != bucket[:-1]) | (member[1:] != member[:-1])))
    bucket, member = bucket[distinct], member[distinct]
    starts = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1])))
    sizes = np.diff(np.append(starts, bucket.size))
    firsts, seconds = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for size in np.unique(sizes[(sizes > 1) & (sizes <= max_bucket_size)]).tolist():
        i, j = np.triu_indices(size, 1)
        at = starts[sizes == size][:, None]
        firsts.append(member[at + i].ravel())
        seconds.append(member[at + j].ravel())
    oversized = sizes > max_bucket_size
    for start, size in zip(starts[oversized].tolist(), sizes[oversized].tolist()):
        members = member[start : start + size]
        center = min(members.tolist(), key=entries.__getitem__)
        others = members[members != center]
        firsts.append(np.minimum(others, center))
        seconds.append(np.maximum(others, center))
    counts["oversized_buckets"] += int(oversized.sum())
    counts["star_edges"] += int((sizes[oversized] - 1).sum())
    span = len(entries)
    codes = np.unique(np.concatenate(firsts) * span + np.concatenate(seconds))
    return codes // span, codes % span


def _class_pair_partition(first: np.ndarray, second: np.ndarray, partitions: int) -> np.ndarray:
    """The partitions of pairs, from their two class keys (xxh64 values, so their xor is uniform)."""
    return (first ^ second) % np.uint64(partitions)


def _distinct_class_pairs(_partition: int, chunks: Iterable[bytes]):
    """One pair partition's chunks of candidate pairs → each distinct pair once, packed ((node,
    class key), (node, class key)) in node order: the form in which verification takes a pair."""
    ends, firsts, seconds = {}, [], []
    for chunk in chunks:
        chunk_ends, first, second = unpack(chunk)
        keys = np.array([key for _, key in chunk_ends], dtype=np.uint64)
        ends.update(zip(keys.tolist(), chunk_ends))
        firsts.append(keys[first])
        seconds.append(keys[second])
    pairs = np.unique(np.stack((np.concatenate(firsts), np.concatenate(seconds)), axis=1), axis=0)
    for first, second in pairs.tolist():
        a, b = ends[first], ends[second]
        yield pack((a, b) if a < b else (b, a))


def _class_endpoints(packed: bytes, partitions: int):
    """Where a packed pair's two verification sets are stored: (class partition, class key) of
    each. Pairs go through verification packed: one bytes object each in the side input and the
    shipped values, not nested tuples of nodes to encode and weigh."""
    return ((key % partitions, key) for _, key in unpack(packed))


def _removals(_partition: int, values: Iterable, partitions: int):
    """One class partition's component labels ((node, label node) of representatives in a verified
    pair) and classes of several units → `DecisionChunk`s of (doc id, (unit index, survivor id)),
    one per document partition, for every unit whose component keeps its copy in another document."""
    labels, classes = {}, {}
    for kind, value in values:
        if kind == LABEL:
            labels[value[0]] = value[1]
        else:
            classes.update(unpack(value))
    chunks: dict[int, list] = defaultdict(list)
    for rep in sorted(labels.keys() | classes.keys()):
        label = labels.get(rep, rep)
        for node in (rep, *classes.get(rep, ())):
            if node_doc(node) != node_doc(label):
                chunks[key_partition(node_doc(node), partitions)].append(
                    (node_doc(node), (node[-1], node_doc(label)))
                )
    for part in sorted(chunks):
        yield DecisionChunk(part, chunks[part])


def _unit_key(member: tuple) -> str:
    """A unit's id for the k-means sample: document id and unit index."""
    return f"{node_doc(member[0])}#{member[0][-1]}"


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
            stage.name, _unit_key, _unit_language, _nearest_pairs, args=args, seed=stage.seed, sample_size=20_000,
            center=True, clusters=0, iterations=20,
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
