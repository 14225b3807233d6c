"""`minhash_dedup`: near-duplicate removal with MinHash-LSH, exact Jaccard checks and distributed
connected components, all inside the Beam graph.

Steps (each a Beam transform; no worker holds O(corpus) state):
1. signatures: batches of documents → word n-gram hashes → MinHash signatures → one key per band
   (`dedup.signatures`, numpy-vectorized);
2. band keys are shuffled in `band_partitions` partitions (a few hundred thousand keys each at
   1M documents); each partition sorts its keys and turns every shared bucket into candidate
   pairs: all pairs, or, for a bucket larger than `max_bucket_size`, a star to its smallest id
   (no quadratic blow-up; counted as `oversized_buckets` / `star_edges`);
3. verification: each candidate pair is joined (CoGroupByKey by id, twice) with both documents'
   shingle sets and kept if their exact Jaccard similarity ≥ `jaccard_threshold`;
4. connected components of the verified pairs (`dedup.components`, large-star/small-star);
5. one survivor per component by `dedup.survivor.survivor_key`; the others are rejected as
   `near_duplicate` with `duplicate_of` = the survivor's id.
"""

from __future__ import annotations

from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics

from dedup.components import ConnectedComponents
from dedup.lsh import bands_rows_for_threshold, curve_threshold, s_curve
from dedup.signatures import MinHasher, band_keys, jaccard, shingle_hasher
from dedup.survivor import SURVIVOR_PARAMS, survivor_key
from pipeline.document import Document, Rejection
from pipeline.stages import CollectionStage, ConfigError, Param, StageOutputs, register

NEAR_DUPLICATE = "near_duplicate"


@register("minhash_dedup")
class MinHashDedup(CollectionStage):
    """Remove near-duplicates: MinHash-LSH candidates, exact Jaccard check, one survivor per cluster.

    Reason codes: `near_duplicate` (`duplicate_of` = the cluster's survivor, `detail` = cluster size
    and the verification threshold). Defaults are FineWeb's: word 5-grams of normalized text,
    14 bands × 8 rows, 64-bit hashes, seed 1; candidate pairs are verified at Jaccard ≥ 0.75.
    """

    reasons = (NEAR_DUPLICATE,)
    params = {
        "ngram": Param(int, 5, "words per shingle (n-gram of normalized words)", min=1, max=64),
        "bands": Param(
            int, 14, "LSH bands: documents sharing one band's key become candidates", min=1, max=512
        ),
        "rows": Param(int, 8, "MinHash values per band (signature length = bands × rows)", min=1, max=128),
        "jaccard_threshold": Param(
            float,
            0.75,
            "exact Jaccard similarity of the shingle sets a candidate pair needs to count as duplicates "
            "(0 accepts band collisions unverified)",
            min=0.0,
            max=1.0,
        ),
        "target_threshold": Param(
            float,
            0.0,
            "if > 0: derive bands and rows (bands × rows ≤ the configured product) from this target "
            "similarity by minimizing false positive + false negative area under the S-curve",
            min=0.0,
            max=0.99,
        ),
        "seed": Param(int, 1, "seed of the shingle hash, the permutations and the band keys", min=0),
        "max_bucket_size": Param(
            int,
            100,
            "a band bucket with more documents links them to its smallest id instead of all pairs",
            min=2,
        ),
        "cc_rounds": Param(
            int,
            20,
            "large-star/small-star rounds unrolled for connected components (enough for paths of "
            "about 2**rounds nodes; `cc_converged` in the metrics says whether they sufficed)",
            min=1,
            max=64,
        ),
        "band_partitions": Param(
            int,
            64,
            "shuffle partitions for band keys; each holds about bands × documents / partitions keys",
            min=1,
        ),
        **SURVIVOR_PARAMS,
    }

    def configure(self) -> None:
        if self.target_threshold > 0:
            self.bands, self.rows = bands_rows_for_threshold(self.target_threshold, self.bands * self.rows)
        if self.bands * self.rows > 4096:
            raise ConfigError(f"bands × rows = {self.bands * self.rows} is above the maximum 4096")

    def manifest_extra(self) -> dict[str, Any]:
        """The S-curve and the effective LSH settings, for `validate`/`explain` and the manifest."""
        return {
            "bands": self.bands,
            "rows": self.rows,
            "num_perm": self.bands * self.rows,
            "ngram": self.ngram,
            "hash_bits": 64,
            "seed": self.seed,
            "curve_threshold": round(curve_threshold(self.bands, self.rows), 4),
            "jaccard_threshold": self.jaccard_threshold,
            "verification": "exact Jaccard of 64-bit shingle-hash sets"
            if self.jaccard_threshold > 0
            else "none (band collisions accepted)",
            "s_curve": s_curve(self.bands, self.rows),
        }

    def expand(self, docs: beam.PCollection) -> StageOutputs:
        verify = self.jaccard_threshold > 0
        hashed = docs | "Signatures" >> _Signatures(self, emit_shingles=verify)
        pairs = (
            hashed.bands
            | "GroupBandPartitions" >> beam.GroupByKey()
            | "BucketPairs" >> beam.FlatMap(_bucket_pairs, self.max_bucket_size, self.name)
            | "DistinctPairs" >> beam.Distinct()
        )
        edges = _verify(pairs, hashed.shingles, self.jaccard_threshold, self.name) if verify else pairs
        labels = edges | "Components" >> ConnectedComponents(self.cc_rounds, self.name)
        joined = (
            {"doc": docs | "KeyById" >> beam.Map(lambda d: (d.id, d)), "label": labels}
            | "JoinLabels" >> beam.CoGroupByKey()
            | "SplitClustered" >> beam.FlatMap(_attach_label).with_outputs("clustered", main="alone")
        )
        clusters = (
            joined.clustered
            | "GroupClusters" >> beam.GroupByKey()
            | "Survivors"
            >> beam.FlatMap(_survivors, self.name, self.prefer_score, self.tie_break).with_outputs(
                "rejected", main="kept"
            )
        )
        kept = (joined.alone, clusters.kept) | "Kept" >> beam.Flatten()
        failed = docs.pipeline | "NoFailures" >> beam.Create([])
        return StageOutputs(kept, clusters.rejected, failed)


class _Signatures(beam.PTransform):
    """Documents → (partition, (band keys, ids)) chunks, plus (id, shingle bytes) if verifying."""

    def __init__(self, stage: MinHashDedup, emit_shingles: bool) -> None:
        super().__init__()
        self.settings = (stage.ngram, stage.bands, stage.rows, stage.seed, stage.band_partitions, stage.name)
        self.emit_shingles = emit_shingles

    def expand(self, docs):
        return (
            docs
            | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
            | "Hash"
            >> beam.ParDo(_SignatureFn(*self.settings, self.emit_shingles)).with_outputs(
                "shingles", main="bands"
            )
        )


class _SignatureFn(beam.DoFn):
    """Batch of documents → band keys grouped by shuffle partition (and shingle sets)."""

    def __init__(self, ngram: int, bands: int, rows: int, seed: int, partitions: int, name: str, emit: bool):
        self.ngram, self.bands, self.rows, self.seed = ngram, bands, rows, seed
        self.partitions, self.emit = partitions, emit
        self.no_shingles = Metrics.counter(name, "docs_without_shingles")

    def setup(self) -> None:
        self.hasher = shingle_hasher(self.ngram, self.seed)
        self.minhasher = MinHasher(self.bands * self.rows, self.seed)

    def process(self, batch: list[Document]):
        shingles = [self.hasher(doc.text) for doc in batch]
        present = [i for i, s in enumerate(shingles) if s.size]
        if len(present) < len(batch):
            self.no_shingles.inc(len(batch) - len(present))
        if not present:
            return
        ids = [batch[i].id for i in present]
        if self.emit:
            for doc_id, i in zip(ids, present):
                yield beam.pvalue.TaggedOutput("shingles", (doc_id, shingles[i].tobytes()))
        keys = band_keys(
            self.minhasher.signatures([shingles[i] for i in present]), self.bands, self.rows, self.seed
        )
        flat = keys.ravel()
        owner = np.repeat(np.arange(len(ids)), self.bands)
        part = flat % np.uint64(self.partitions)
        order = np.argsort(part, kind="stable")
        cuts = np.flatnonzero(np.diff(part[order])) + 1
        for chunk in np.split(order, cuts):
            yield int(part[chunk[0]]), (flat[chunk], [ids[i] for i in owner[chunk]])


def _bucket_pairs(item: tuple[int, Any], max_bucket_size: int, name: str):
    """One partition's band keys → candidate pairs (a, b), a < b, from every shared bucket."""
    _, chunks = item
    chunks = list(chunks)
    keys = np.concatenate([k for k, _ in chunks])
    ids = [doc_id for _, chunk_ids in chunks for doc_id in chunk_ids]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    sizes = np.diff(np.append(starts, keys.size))
    for start, size in zip(starts[sizes > 1], sizes[sizes > 1]):
        members = sorted({ids[j] for j in order[start : start + size]})
        Metrics.counter(name, "shared_buckets").inc()
        if len(members) > max_bucket_size:
            Metrics.counter(name, "oversized_buckets").inc()
            Metrics.counter(name, "star_edges").inc(len(members) - 1)
            yield from ((members[0], other) for other in members[1:])
        else:
            yield from ((a, b) for i, a in enumerate(members) for b in members[i + 1 :])


def _verify(pairs, shingles, threshold: float, name: str):
    """Keep candidate pairs whose exact Jaccard similarity reaches `threshold` (two id joins)."""
    half = (
        {"set": shingles, "pair": pairs}
        | "JoinFirst" >> beam.CoGroupByKey()
        | "ShipFirst" >> beam.FlatMap(_ship_first)
    )
    return (
        {"set": shingles, "half": half}
        | "JoinSecond" >> beam.CoGroupByKey()
        | "CheckPairs" >> beam.FlatMap(_check_pairs, threshold, name)
    )


def _ship_first(item: tuple[str, dict]):
    """(a, {set, pair: [b...]}) → (b, (a, set_a)) for each candidate partner b."""
    doc_id, grouped = item
    for shingle_bytes in grouped["set"]:
        for other in grouped["pair"]:
            yield other, (doc_id, shingle_bytes)


def _check_pairs(item: tuple[str, dict], threshold: float, name: str):
    """(b, {set, half: [(a, set_a)...]}) → verified edges (a, b)."""
    doc_id, grouped = item
    for shingle_bytes in grouped["set"]:
        mine = np.frombuffer(shingle_bytes, dtype=np.uint64)
        for other, other_bytes in grouped["half"]:
            similarity = jaccard(np.frombuffer(other_bytes, dtype=np.uint64), mine)
            Metrics.counter(name, "candidate_pairs").inc()
            Metrics.distribution(name, "candidate_jaccard_permille").update(int(similarity * 1000))
            if similarity >= threshold:
                Metrics.counter(name, "verified_pairs").inc()
                yield other, doc_id
            else:
                Metrics.counter(name, "false_candidate_pairs").inc()


def _attach_label(item: tuple[str, dict]):
    """(id, {doc, label}) → the doc unchanged if it is in no cluster, else (label, doc)."""
    _, grouped = item
    labels = list(grouped["label"])
    for doc in grouped["doc"]:
        if labels:
            yield beam.pvalue.TaggedOutput("clustered", (labels[0], doc))
        else:
            yield doc


def _survivors(item: tuple[str, Any], name: str, prefer_score: str, tie_break: str):
    """One cluster → its survivor (kept) and a `near_duplicate` Rejection for every other member.

    Two passes over the grouped iterable (Beam iterables are re-iterable), so a cluster's
    documents need not all be in memory at once.
    """
    _, members = item
    size = 0
    best_key, survivor = None, ""
    for doc in members:
        size += 1
        key = survivor_key(doc, prefer_score, tie_break)
        if best_key is None or key < best_key:
            best_key, survivor = key, doc.id
    Metrics.counter(name, "clusters").inc()
    Metrics.distribution(name, "cluster_size").update(size)
    for doc in members:
        if doc.id == survivor:
            yield doc
        else:
            Metrics.counter(name, "near_duplicates").inc()
            detail = f"cluster_size={size}"
            yield beam.pvalue.TaggedOutput("rejected", Rejection(doc, name, NEAR_DUPLICATE, detail, survivor))
