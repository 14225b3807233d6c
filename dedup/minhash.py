"""`minhash_dedup`: near-duplicate removal with MinHash-LSH, exact Jaccard checks and distributed
connected components, all inside the Beam graph.

Steps (each a Beam transform; no worker holds O(corpus) state):
1. signatures: batches of documents → word n-gram hashes → MinHash signatures → one key per band
   (`dedup.signatures`, numpy-vectorized);
2. band keys are written in `partitions` chunks per batch to spill files by band partition
   (`pipeline.spill.SpillGroups`: only the files' names are shuffled); each partition reads its
   files back, sorts its keys and turns every shared bucket into candidate pairs: all pairs, or,
   for a bucket larger than `max_bucket_size`, a star to its smallest id (no quadratic blow-up;
   counted as `oversized_buckets` / `star_edges`); a partition's distinct pairs leave as one chunk
   per pair partition, spilled again, where each pair is kept once (`distinct_pairs`: no shuffled
   element per pair and its copies from other bands);
3. verification (`VerifyPairs`): every candidate pair asks for its two shingle sets in their id
   partitions; the asks and the sets are spilled by id partition, each partition reads its asks
   first, streams its sets and ships the wanted ones to spill files by pair partition, where the
   two sets of a pair meet, and the pair is kept if their Jaccard similarity ≥ `jaccard_threshold`;
4. connected components of the verified pairs (`dedup.components`, large-star/small-star);
5. survivor orders (score, length, id: `dedup.survivor.survivor_key`) and component labels are
   spilled by id partition; each partition reads its labels first, streams its orders and sends
   every clustered document's order to its cluster's partition, where they are grouped by
   cluster; the smallest order survives, every other member gets a decision (cluster size,
   survivor id);
6. the decisions are joined to the documents by `pipeline.decisions.ApplyDecisions`: documents are
   spilled once to files partitioned by id and each partition streams its file against its own
   decisions; rejected members become `near_duplicate` with `duplicate_of` = the survivor's id.

Documents never go through a shuffle, and what every document has (band keys, shingle sets,
survivor orders) goes through files, not a shuffle: Beam's local runner holds a shuffle in the
driver's memory, so a shuffle of per-document keys still grows with the corpus. The shuffles hold
only what grows with the duplicates (candidate pairs, labels, cluster members: ids, not sets) and
the files' names. Writing per-partition chunks of a batch, not single items, keeps
the number of elements small (Beam's per-element cost dominates otherwise). The small side
(asks, labels) meets the big side (sets, orders) in the files of their partition, read in that
order (`SpillGroups` of a tuple), not through a side input or a CoGroupByKey: Beam's local runner
holds both in the driver (a side input, and the multi-input Flatten inside a CoGroupByKey).

Verification error: none from sampling. The sets compared are the low 32 bits of the 64-bit
n-gram hashes (half the shuffled bytes), so two distinct n-grams collide with probability 2**-32;
two 3 KB documents (~500 n-grams each) share a spurious value with probability ~6e-5, which moves
their Jaccard similarity by ~1/1000 in that rare case. Otherwise the similarity is exact.
"""

from __future__ import annotations

import pickle
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
import numpy as np
import xxhash
from apache_beam.metrics import Metrics

from dedup.components import ConnectedComponents
from dedup.lsh import bands_rows_for_threshold, curve_threshold, s_curve
from dedup.signatures import MinHasher, band_keys, jaccard, shingle_hasher
from dedup.survivor import SURVIVOR_PARAMS, PrefersScore, survivor_key
from pipeline.arrays import sorted_unique
from pipeline.beam_stages import LostElements
from pipeline.decisions import ApplyDecisions, decision_inputs, spill_dir
from pipeline.document import Document, Rejection, public_id
from pipeline.outcomes import KEPT, REJECTED, SplitByTag
from pipeline.spill import SpillGroups
from pipeline.stages import CollectionStage, ConfigError, Param, StageOutputs, register

NEAR_DUPLICATE = "near_duplicate"
BANDS, SETS, ORDERS = "bands", "sets", "orders"  # the signature step's outputs
LABEL = "label"  # a component label beside the survivor orders of its id partition
WANT = "want"  # a candidate pair that asks for a shingle set of its id partition
MET, VERIFIED = "met", "verified"  # the verification step's outputs
# Everything keyed by id partition declares this type (an int key, any value): Beam checks the key
# where it is made, and a spill file is named by it.
PartitionKeyed = tuple[int, Any]


@register("minhash_dedup")
class MinHashDedup(PrefersScore, CollectionStage):
    """Remove near-duplicates: MinHash-LSH candidates, exact Jaccard check, one survivor per cluster.

    Reason codes: `near_duplicate` (`duplicate_of` = the cluster's survivor, `detail` =
    `cluster_size=N`). Defaults are FineWeb's: word 5-grams of normalized text,
    14 bands × 8 rows, 64-bit hashes, seed 1; candidate pairs are verified at Jaccard ≥ 0.75.
    """

    reasons = (NEAR_DUPLICATE,)
    params = {
        "ngram": Param(
            int,
            5,
            "words per shingle (n-gram of normalized words; in scripts written without spaces, "
            "such as Chinese, Japanese and Thai, the words are overlapping character pairs)",
            min=1,
            max=64,
        ),
        "bands": Param(
            int,
            14,
            "LSH bands: documents sharing one band's key become candidates (bands × rows <= 4096)",
            min=1,
            max=512,
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
            "similarity by minimizing false positive + false negative area under the S-curve; "
            "at least jaccard_threshold",
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
            "about 2**rounds nodes; `cc_unconverged_nodes` in the metrics counts the nodes they did not settle)",
            min=1,
            max=64,
        ),
        "partitions": Param(
            int,
            64,
            "shuffle partitions for band keys, shingle sets and documents: each holds about "
            "1/partitions of the corpus (64 is measured up to 3M documents; raise it when a "
            "partition's share outgrows a worker's memory)",
            min=1,
        ),
        **SURVIVOR_PARAMS,
    }

    def configure(self) -> None:
        if self.target_threshold > 0:
            if self.target_threshold < self.jaccard_threshold:  # its candidates would be refused
                raise ConfigError(
                    f"target_threshold {self.target_threshold} is below jaccard_threshold "
                    f"{self.jaccard_threshold}: the pairs between the two would be found, then refused; "
                    f"set jaccard_threshold = {self.target_threshold} too (or lower)"
                )
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
            "verification": "exact Jaccard of the shingle sets (the low 32 bits of their 64-bit hashes)"
            if self.jaccard_threshold > 0
            else "none (band collisions accepted)",
            "max_bucket_size": self.max_bucket_size,
            "cc_rounds": self.cc_rounds,
            "partitions": self.partitions,
            "s_curve": s_curve(self.bands, self.rows),
        }

    def expand(self, docs: beam.PCollection, passthrough=None) -> StageOutputs:
        verify = self.jaccard_threshold > 0
        parts = self.partitions
        batches = docs | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
        settings = (self.ngram, self.bands, self.rows, self.seed, parts, self.name, verify)
        order = (self.prefer_score, self.tie_break)
        hashed = (
            batches
            | "Signatures" >> beam.ParDo(_SignatureFn(*settings, order))
            | SplitByTag((BANDS, SETS, ORDERS))
        )
        shingles = hashed[SETS]
        spill = spill_dir(docs.pipeline, self.name)
        pairs = (
            hashed[BANDS]
            | "BucketPairs"
            >> SpillGroups(f"{spill}/bands", _bucket_pairs, self.max_bucket_size, self.name, parts)
            | "DistinctPairs" >> SpillGroups(f"{spill}/pairs", distinct_pairs)
        )
        edges = (
            pairs
            | "Verify" >> VerifyPairs(shingles, _endpoints, self.jaccard_threshold, self.name, parts, spill)
            if verify
            else pairs
        )
        labels = edges | "Components" >> ConnectedComponents(
            self.cc_rounds, self.name, parts, f"{spill}/components"
        )
        decisions = (
            (
                labels
                | "LabelsByPartition"
                >> beam.Map(lambda kv: (id_partition(kv[0], parts), (LABEL, kv))).with_output_types(
                    PartitionKeyed
                ),
                hashed[ORDERS]
                | "TagOrders"
                >> beam.MapTuple(lambda part, blob: (part, (ORDERS, blob))).with_output_types(PartitionKeyed),
            )
            | "AttachLabels" >> SpillGroups(f"{spill}/orders", _attach_labels, parts)
            | "Survivors" >> SpillGroups(f"{spill}/clusters", _survivors, self.name)
        )
        return decision_inputs(docs, decisions, passthrough) | "Apply" >> ApplyDecisions(
            self.name, _doc_id, self.apply, parts
        )

    def apply(self, doc: Document, decisions: list, occurrence: int):
        """Keep the document, or reject it as a near-duplicate of its cluster's survivor."""
        if not decisions:
            yield KEPT, doc
        else:
            size, survivor = min(decisions)
            yield REJECTED, Rejection(doc, self.name, NEAR_DUPLICATE, f"cluster_size={size}", survivor)


def _doc_id(doc: Document) -> str:
    return doc.unique_id


def verification_set(shingles: np.ndarray) -> bytes:
    """The set shipped to verify candidate pairs: the low 32 bits of each 64-bit shingle hash
    (sorted, unique), half the bytes of the full hashes."""
    return sorted_unique(shingles.astype(np.uint32)).tobytes()


def verification_sets(shingle_sets: list[np.ndarray]) -> list[bytes]:
    """`verification_set` of each of many shingle sets, in one sort (not one per set)."""
    sizes = [shingles.size for shingles in shingle_sets]
    owner = np.repeat(np.arange(len(shingle_sets), dtype=np.uint64), sizes)
    if owner.size == 0:
        return [b""] * len(shingle_sets)
    low = np.concatenate(shingle_sets).astype(np.uint32)
    tagged = sorted_unique((owner << np.uint64(32)) | low)  # sorted by set, then by value; unique per set
    values = tagged.astype(np.uint32).tobytes()
    bounds = np.searchsorted(tagged >> np.uint64(32), np.arange(len(shingle_sets) + 1, dtype=np.uint64)) * 4
    return [values[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


def id_partition(doc_id: str, partitions: int) -> int:
    """The shuffle partition of a document id (seedless xxh64: the same on every worker)."""
    return xxhash.xxh64_intdigest(doc_id.encode()) % partitions


def by_partition(items: list[tuple[str, Any]], partitions: int) -> list[tuple[int, bytes]]:
    """Split (id, value) items into one (partition, packed items) chunk per id partition.

    Shuffling chunks instead of single documents makes a join cost one element per batch and
    partition; each partition then holds about 1/partitions of the corpus. A chunk travels as
    one opaque `pack`ed blob, so a shuffle that holds it (in the local runner: in memory) keeps
    its bytes, not thousands of decoded Python objects, and does not re-encode them.
    """
    chunks: dict[int, list[tuple[str, Any]]] = defaultdict(list)
    for doc_id, value in items:
        chunks[id_partition(doc_id, partitions)].append((doc_id, value))
    return [(partition, pack(chunks[partition])) for partition in sorted(chunks)]


def pack(value: Any) -> bytes:
    """A shuffled chunk as one blob (pickle; produced and read only by this stage's own steps)."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> Any:
    return pickle.loads(blob)


class _SignatureFn(beam.DoFn):
    """Batch of documents → (tag, chunk) pairs: band keys by band partition (`BANDS`), and by id
    partition the shingle sets (`SETS`, if verifying) and every document's survivor order
    (`ORDERS`): the compact keys that stand for the documents in every shuffle."""

    def __init__(
        self,
        ngram: int,
        bands: int,
        rows: int,
        seed: int,
        partitions: int,
        name: str,
        emit: bool,
        order: tuple[str, str],
    ):
        self.ngram, self.bands, self.rows, self.seed = ngram, bands, rows, seed
        self.partitions, self.emit, self.order = partitions, emit, order
        self.no_shingles = Metrics.counter(name, "docs_without_shingles")

    def setup(self) -> None:
        self.hasher = shingle_hasher(self.ngram, self.seed)
        self.minhasher = MinHasher(self.bands * self.rows, self.seed)

    def process(self, batch: list[Document]):
        orders = [(doc.unique_id, survivor_key(doc, *self.order)) for doc in batch]
        yield from ((ORDERS, chunk) for chunk in by_partition(orders, self.partitions))
        shingles = [self.hasher(doc.text) for doc in batch]
        present = [i for i, s in enumerate(shingles) if s.size]
        if len(present) < len(batch):
            self.no_shingles.inc(len(batch) - len(present))
        if not present:
            return
        ids = [batch[i].unique_id for i in present]
        if self.emit:
            sets = verification_sets([shingles[i] for i in present])
            chunks = by_partition(list(zip(ids, sets)), self.partitions)
            yield from ((SETS, chunk) for chunk in chunks)
        keys = band_keys(
            self.minhasher.signatures([shingles[i] for i in present]), self.bands, self.rows, self.seed
        )
        flat = keys.ravel()
        owner = np.repeat(np.arange(len(ids)), self.bands)
        part = flat % np.uint64(self.partitions)
        order = np.argsort(part, kind="stable")
        cuts = np.flatnonzero(np.diff(part[order])) + 1
        for chunk in np.split(order, cuts):
            yield BANDS, (int(part[chunk[0]]), pack((flat[chunk], [ids[i] for i in owner[chunk]])))


def _bucket_pairs(_partition: int, blobs: Iterable[bytes], max_bucket_size: int, name: str, partitions: int):
    """One partition's band keys → its distinct candidate pairs (a, b), a < b, from every shared
    bucket, as one packed chunk per pair partition (`pairs_by_partition`)."""
    chunks = [unpack(blob) for blob in blobs]
    keys = np.concatenate([k for k, _ in chunks])
    ids = [doc_id for _, chunk_ids in chunks for doc_id in chunk_ids]
    counts: Counter[str] = Counter()
    pairs = {
        pair
        for bucket in shared_buckets(keys)
        for pair in bucket_pairs(sorted({ids[j] for j in bucket}), max_bucket_size, counts)
    }
    report(name, counts)
    yield from pairs_by_partition(pairs, partitions, pair_partition)


def shared_buckets(keys: np.ndarray) -> Iterator[list[int]]:
    """The positions in `keys` of each bucket (equal keys) that has more than one entry."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    sizes = np.diff(np.append(starts, keys.size))
    for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist()):
        yield order[start : start + size].tolist()


def bucket_pairs(members: list, max_bucket_size: int, counts: Counter) -> Iterator[tuple]:
    """Candidate pairs (a, b), a < b, of one shared bucket's sorted distinct members: every pair,
    or, above `max_bucket_size` members, a star to the smallest (counted in `counts`)."""
    counts["shared_buckets"] += 1
    if len(members) > max_bucket_size:
        counts["oversized_buckets"] += 1
        counts["star_edges"] += len(members) - 1
        return ((members[0], other) for other in members[1:])
    return ((a, b) for i, a in enumerate(members) for b in members[i + 1 :])


def report(name: str, counts: Counter) -> None:
    """Add one step's counts to the stage's Metrics counters (once per step, not per item)."""
    for counter, value in counts.items():
        if value:
            Metrics.counter(name, counter).inc(value)


def pairs_by_partition(pairs: Iterable[tuple], partitions: int, partition) -> Iterator[tuple[int, bytes]]:
    """Pairs as one (pair partition, packed pairs) chunk per `partition(pair, partitions)`: a
    bucket step's pairs reach `distinct_pairs` as a few chunks, not one shuffled element each."""
    chunks: dict[int, list] = defaultdict(list)
    for pair in pairs:
        chunks[partition(pair, partitions)].append(pair)
    for part in sorted(chunks):
        yield part, pack(chunks[part])


def distinct_pairs(_partition: int, chunks: Iterable[bytes]) -> Iterator[tuple]:
    """One pair partition's chunks of candidate pairs → each distinct pair once."""
    seen: set[tuple] = set()
    for chunk in chunks:
        seen.update(unpack(chunk))
    yield from seen


class VerifyPairs(beam.PTransform):
    """Candidate pairs → the pairs whose exact Jaccard similarity reaches `threshold`.

    `sets`: (id partition, packed [(id, set bytes)]) chunks; `endpoints(pair, partitions)` → the
    (id partition, id) of each of the pair's two sets. Each pair asks for its sets in their id
    partitions (spilled beside the sets and read before them; a side input would be held in the
    driver); the shipped (pair, set) values are spilled again, by pair partition, and each pair
    partition meets and compares its pairs' sets in memory (1/partitions of them). Grouping them
    in a GroupByKey instead would make Beam's local runner hold every shipped set in the driver
    (2 sets per candidate pair). In-graph check: every distinct candidate pair meets its two sets.
    """

    def __init__(self, sets, endpoints, threshold: float, name: str, partitions: int, spill: str) -> None:
        super().__init__()
        self.sets, self.endpoints, self.threshold = sets, endpoints, threshold
        self.name, self.partitions, self.spill = name, partitions, spill

    def expand(self, pairs):
        endpoints, parts = self.endpoints, self.partitions
        wants = pairs | "WantSets" >> beam.FlatMap(
            lambda pair: ((part, (WANT, (doc_id, pair))) for part, doc_id in endpoints(pair, parts))
        ).with_output_types(PartitionKeyed)
        sets = self.sets | "TagSets" >> beam.MapTuple(
            lambda part, blob: (part, (SETS, blob))
        ).with_output_types(PartitionKeyed)
        checked = (
            (wants, sets)
            | "ShipSets" >> SpillGroups(f"{self.spill}/sets", _ship_sets, parts)
            | "MeetSets" >> SpillGroups(f"{self.spill}/met", _check_pairs, self.threshold, self.name)
            | SplitByTag((MET, VERIFIED))
        )
        met = beam.pvalue.AsSingleton(checked[MET] | "CountMetPairs" >> beam.CombineGlobally(sum))
        _ = (
            pairs
            | "CountPairs" >> beam.combiners.Count.Globally()
            | "CheckEveryPairMet" >> beam.Map(_assert_every_pair_met, met, self.name)
        )
        return checked[VERIFIED]


def _endpoints(pair: tuple[str, str], partitions: int):
    """Where a pair's two shingle sets are stored: (id partition, id) of each document."""
    return ((id_partition(doc_id, partitions), doc_id) for doc_id in pair)


def _assert_every_pair_met(candidates: int, met: int, name: str) -> None:
    """Every distinct candidate pair must reach verification; fewer means a shuffle lost some."""
    if candidates != met:
        raise LostElements(
            f"stage {name}: {candidates} candidate pairs, but {met} reached verification "
            "(elements lost between shuffles; the run is stopped rather than keep duplicates)"
        )


def pair_partition(pair: tuple, partitions: int) -> int:
    """The partition of a candidate pair (of str/int endpoints: their repr is the same everywhere)."""
    return xxhash.xxh64_intdigest(repr(pair).encode()) % partitions


def _ship_sets(_partition: int, values: Iterable[tuple[str, Any]], partitions: int):
    """One id partition's asks (WANT (id, pair), read first) and shingle sets (SETS chunks,
    streamed) → (pair partition, (pair, shingle bytes)) for every pair that wants a set stored here."""
    wanted: dict[Any, list[tuple]] = defaultdict(list)
    for kind, value in values:
        if kind == WANT:
            doc_id, pair = value
            wanted[doc_id].append(pair)
            continue
        for doc_id, shingle_bytes in unpack(value):
            for pair in wanted.get(doc_id, ()):
                yield pair_partition(pair, partitions), (pair, shingle_bytes)


def _check_pairs(_partition: int, shipped, threshold: float, name: str):
    """One pair partition's (pair, set) values → (`VERIFIED`, pair) for each pair whose exact
    Jaccard similarity reaches the threshold, then (`MET`, number of pairs met)."""
    sets: dict[tuple, list[bytes]] = defaultdict(list)
    for pair, shingle_bytes in shipped:
        sets[pair].append(shingle_bytes)
    counts: Counter[str] = Counter()
    permille = Metrics.distribution(name, "candidate_jaccard_permille")
    for pair, both in sets.items():
        similarity = _similarity(pair, both, name)
        permille.update(int(similarity * 1000))
        counts["candidate_pairs"] += 1
        if similarity >= threshold:
            counts["verified_pairs"] += 1
            yield VERIFIED, pair
        else:
            counts["false_candidate_pairs"] += 1
    report(name, counts)
    yield MET, len(sets)


def _similarity(pair: tuple, sets: list[bytes], name: str) -> float:
    """The Jaccard similarity of the pair's two sets."""
    if len(sets) != 2:  # each endpoint ships its set exactly once: anything else is lost data
        raise LostElements(
            f"stage {name}: candidate pair {pair} met {len(sets)} shingle sets instead of 2 (elements lost upstream)"
        )
    first, second = (np.frombuffer(b, dtype=np.uint32) for b in sets)
    return jaccard(first, second)


def _attach_labels(_partition: int, values: Iterable[tuple[str, Any]], partitions: int):
    """One id partition's component labels (LABEL (id, label), read first) and survivor orders
    (ORDERS chunks, streamed) → (label's partition, (label, (order, id))) for each document in a cluster."""
    labels = {}
    for kind, value in values:
        if kind == LABEL:
            labels[value[0]] = value[1]
            continue
        for doc_id, order in unpack(value):
            if doc_id in labels:
                label = labels[doc_id]
                yield id_partition(label, partitions), (label, (order, doc_id))


def _survivors(_partition: int, values: Iterable[tuple[str, Any]], name: str):
    """One partition's clusters → (id, (cluster size, survivor id)) for every member but the survivor.

    The survivor is the smallest survivor order (`dedup.survivor.survivor_key`, which ends with
    the id, so the choice is a total order whatever the input order)."""
    clusters: dict[str, list] = defaultdict(list)
    for label, member in values:
        clusters[label].append(member)  # compact (order, id) pairs, not documents
    for members in clusters.values():
        _, survivor = min(members)
        Metrics.counter(name, "clusters").inc()
        Metrics.distribution(name, "cluster_size").update(len(members))
        for _, doc_id in members:
            if doc_id != survivor:
                Metrics.counter(name, "near_duplicates").inc()
                yield doc_id, (len(members), public_id(survivor))
