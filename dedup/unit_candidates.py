"""`unit_dedup`'s classes and lexical candidate pairs (steps 2 and 3 of `dedup.units`): units of
one shingle set become one class with a representative, and representatives that share a MinHash
LSH band bucket become candidate pairs, as numpy arrays of class numbers by pair partition.

A unit is named in the graph by a node: its document's survivor order (ending with the id), then
its index. Nodes travel between steps as columns (`_column`), one array per field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from apache_beam.metrics import Metrics

from dedup.minhash import pack, report, unpack, verification_sets
from dedup.signatures import MinHasher, band_keys
from pipeline.arrays import sorted_unique

BAND, SETS, MEMBERS, VECTORS = "band", "sets", "members", "vectors"


def unit_node(order: tuple, index: int) -> tuple:
    """A unit's name in the graph: its document's survivor order (ending with the id), then its index.
    The smallest node of a component is the copy to keep."""
    return (*order, index)


def node_doc(node: tuple) -> str:
    return node[-2]


def unit_chunks(
    keys: list[int],
    nodes: list[tuple],
    languages: list[str],
    shingles: list[np.ndarray],
    vectors: list[np.ndarray | None],
    partitions: int,
):
    """A batch's units → one (class partition, packed chunk) per partition, by class key (the
    hash of the unit's shingle set). A chunk holds its units by column: class keys, node fields
    (`_column`), languages, the shingle hashes end to end and each unit's number of them, whether
    each has a vector, and those float16 vectors (None when none has one)."""
    if not keys:
        return
    class_keys = np.array(keys, dtype=np.uint64)
    columns = [_column(field) for field in zip(*nodes)]
    language = _column(languages)
    sizes = np.array([hashes.size for hashes in shingles], dtype=np.int64)
    has_vector = np.array([vector is not None for vector in vectors])
    stacked = np.stack([vector for vector in vectors if vector is not None]) if has_vector.any() else None
    vector_rows = np.cumsum(has_vector) - 1
    part = class_keys % np.uint64(partitions)
    for rows in _by_partition(part):
        with_vector = has_vector[rows]
        chunk_vectors = stacked[vector_rows[rows[with_vector]]] if with_vector.any() else None
        chunk = (
            class_keys[rows],
            [column[rows] for column in columns],
            language[rows],
            np.concatenate([shingles[i] for i in rows.tolist()]),
            sizes[rows],
            with_vector,
            chunk_vectors,
        )
        yield int(part[rows[0]]), pack(chunk)


def unit_classes(
    partition: int, blobs: Iterable[bytes], bands: int, rows: int, seed: int, partitions: int, name: str
):
    """One class partition's unit chunks (`unit_chunks`) → for each class (same shingle set) its
    representative (the smallest node): band key chunks (BAND, (band partition, packed (keys, node
    columns, multi, class keys))), the representatives' verification sets (SETS, (partition, packed
    [(class key, set)])), the classes of several units (MEMBERS, (partition, packed [(node, other
    nodes)])) and, with an embedder, (VECTORS, (members, vectors)). `multi`: the class has units in
    several documents. Units are grouped by sorting their columns; node tuples are built only for
    classes of several units and for embedded representatives."""
    fields = list(zip(*map(unpack, blobs)))  # each field's parts, one per chunk
    if not fields:
        return
    keys, node_parts, language_parts, shingle_parts, size_parts, vector_flags, vector_parts = fields
    del fields
    shingles, shingle_counts = np.concatenate(shingle_parts), np.concatenate(size_parts)
    del shingle_parts  # the largest field: its chunks' arrays are freed once joined
    keys = np.concatenate(keys)
    columns = [np.concatenate(parts) for parts in zip(*node_parts)]
    ends = np.cumsum(shingle_counts)
    order = np.lexsort((*columns[::-1], keys))  # by class key, then node
    ordered_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered_keys[1:] != ordered_keys[:-1])))
    sizes = np.diff(np.append(starts, keys.size))
    reps, class_keys = order[starts], ordered_keys[starts]
    docs = _doc_codes(columns)[order]
    multi = np.minimum.reduceat(docs, starts) != np.maximum.reduceat(docs, starts)
    Metrics.counter(name, "unit_classes").inc(len(reps))
    spans = zip((ends - shingle_counts)[reps].tolist(), ends[reps].tolist())
    rep_shingles = [shingles[start:end] for start, end in spans]
    sets = list(zip(class_keys.tolist(), verification_sets(rep_shingles)))
    signatures = MinHasher(bands * rows, seed).signatures(rep_shingles)
    band = band_keys(signatures, bands, rows, seed).ravel()
    owner = np.repeat(np.arange(len(reps)), bands)
    part = band % np.uint64(partitions)
    rep_columns = [column[reps] for column in columns]
    for chunk in _by_partition(part):
        taken = owner[chunk]
        nodes = [column[taken] for column in rep_columns]
        yield BAND, (int(part[chunk[0]]), pack((band[chunk], nodes, multi[taken], class_keys[taken])))
    yield SETS, (partition, pack(sets))
    if (sizes > 1).any():
        yield MEMBERS, (partition, pack(_members_of(columns, order, sizes)))
    vectors = [chunk_vectors for chunk_vectors in vector_parts if chunk_vectors is not None]
    if vectors:
        has_vector = np.concatenate(vector_flags)
        at = np.flatnonzero(has_vector[order])  # sorted positions of the units that have a vector
        classes, first = np.unique(np.searchsorted(starts, at, side="right") - 1, return_index=True)
        copies = order[at[first]]  # each class's first unit with a vector: its embedded copy
        languages = np.concatenate(language_parts)[copies].tolist()
        members = zip(
            _nodes(columns, reps[classes]), multi[classes].tolist(), languages, class_keys[classes].tolist()
        )
        x = np.concatenate(vectors)[(np.cumsum(has_vector) - 1)[copies]].astype(np.float32)
        yield VECTORS, (list(members), x)


def _by_partition(part: np.ndarray) -> list[np.ndarray]:
    """Row numbers grouped by their value in `part`, in ascending partition order, rows in order."""
    order = np.argsort(part, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(part[order])) + 1)


def _doc_codes(columns: list[np.ndarray]) -> np.ndarray:
    """A number per node of node columns for its document (the field `node_doc` reads), in id order."""
    return np.unique(columns[-2], return_inverse=True)[1].ravel()


def _nodes(columns: list[np.ndarray], rows: np.ndarray) -> list[tuple]:
    """The node tuples at `rows` of node columns, as Python values."""
    return list(zip(*(column[rows].tolist() for column in columns)))


def _members_of(columns: list[np.ndarray], order: np.ndarray, sizes: np.ndarray) -> list[tuple]:
    """(representative node, [other nodes]) of each class of several units, in class order, from
    the units sorted by (class, node) (`order`) and the class sizes."""
    nodes = _nodes(columns, order[np.repeat(sizes > 1, sizes)])
    classes, at = [], 0
    for size in sizes[sizes > 1].tolist():
        classes.append((nodes[at], nodes[at + 1 : at + size]))
        at += size
    return classes


def _column(values: tuple) -> np.ndarray:
    """One field of many nodes as an array: int64 or float64 when every value is a float, or every
    one an int that fits int64 (it pickles as one buffer and `tolist` restores the same values);
    else an object array of the values themselves."""
    kinds = set(map(type, values))
    if kinds == {float} or kinds == {int}:
        try:
            return np.array(values, dtype=np.float64 if float in kinds else np.int64)
        except OverflowError:
            pass
    return np.fromiter(values, dtype=object, count=len(values))


def bucket_pairs(_partition: int, blobs: Iterable[bytes], max_bucket_size: int, name: str, partitions: int):
    """One band partition's chunks (band keys and, by column, the representatives' nodes, `multi`
    flags and class keys) → its distinct linkable candidate pairs as one chunk per pair partition:
    (pair partition, packed (node columns of the ends, their class keys, first end rows, second
    end rows)), a pair's first end being the one of smaller class key. Buckets, pairs and ends
    stay numpy arrays of class numbers and columns; no node tuple is built."""
    chunks = [unpack(blob) for blob in blobs]
    rows, bucket = _shared_rows(np.concatenate([chunk[0] for chunk in chunks]))
    if not rows.size:
        return
    class_keys, first, member = np.unique(
        np.concatenate([chunk[3] for chunk in chunks])[rows], return_index=True, return_inverse=True
    )
    picked = rows[first]
    columns = [np.concatenate(parts)[picked] for parts in zip(*(chunk[1] for chunk in chunks))]
    multi = np.concatenate([chunk[2] for chunk in chunks])[picked]
    rank = np.empty(len(picked), dtype=np.int64)  # each class's place in (node, multi, class key) order
    rank[np.lexsort((class_keys, multi, *columns[::-1]))] = np.arange(len(picked))
    counts: Counter[str] = Counter(shared_buckets=int(sorted_unique(bucket).size))
    a, b = _member_pairs(bucket, member.ravel(), max_bucket_size, rank, counts)
    doc = _doc_codes(columns)
    linkable = multi[a] | multi[b] | (doc[a] != doc[b])  # not two classes of one document alone
    a, b = a[linkable], b[linkable]
    part = _class_pair_partition(class_keys[a], class_keys[b], partitions)
    report(name, counts)
    for p in np.unique(part).tolist():
        in_part = part == p
        used, rows_of = np.unique(np.concatenate((a[in_part], b[in_part])), return_inverse=True)
        half = int(in_part.sum())
        ends = [column[used] for column in columns]
        yield p, pack((ends, class_keys[used], rows_of[:half], rows_of[half:]))


def _shared_rows(band_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of `band_keys` in buckets (equal keys) of more than one row, and each one's bucket
    number (buckets numbered in key order)."""
    order = np.argsort(band_keys, kind="stable")
    ordered = band_keys[order]
    bucket = np.cumsum(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    shared = np.bincount(bucket)[bucket] > 1
    return order[shared], bucket[shared]


def _member_pairs(
    bucket: np.ndarray, member: np.ndarray, max_bucket_size: int, rank: np.ndarray, counts: Counter
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct candidate pairs (a, b), a < b, of class numbers over all buckets: every pair of
    a bucket's distinct members, or, above `max_bucket_size` members, a star to the one of smallest
    `rank` (counted in `counts`)."""
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
        center = members[np.argmin(rank[members])]
        others = members[members != center]
        firsts.append(np.minimum(others, center))
        seconds.append(np.maximum(others, center))
    counts["oversized_buckets"] += int(oversized.sum())
    counts["star_edges"] += int((sizes[oversized] - 1).sum())
    span = len(rank)
    codes = sorted_unique(np.concatenate(firsts) * span + np.concatenate(seconds))
    return codes // span, codes % span


def _class_pair_partition(first: np.ndarray, second: np.ndarray, partitions: int) -> np.ndarray:
    """The partitions of pairs, from their two class keys (xxh64 values, so their xor is uniform)."""
    return (first ^ second) % np.uint64(partitions)


def distinct_class_pairs(_partition: int, blobs: Iterable[bytes]):
    """One pair partition's chunks of candidate pairs → each distinct pair once, packed ((node,
    class key), (node, class key)) in node order: the form in which verification takes a pair."""
    chunks = [unpack(blob) for blob in blobs]
    columns = [np.concatenate(parts) for parts in zip(*(chunk[0] for chunk in chunks))]
    keys = np.concatenate([chunk[1] for chunk in chunks])
    firsts = np.concatenate([chunk[1][chunk[2]] for chunk in chunks])
    seconds = np.concatenate([chunk[1][chunk[3]] for chunk in chunks])
    pairs = np.unique(np.stack((firsts, seconds), axis=1), axis=0)
    class_keys, row = np.unique(keys, return_index=True)  # one end per class: its representative
    ends = row[np.searchsorted(class_keys, pairs.ravel())]
    used, at = np.unique(ends, return_inverse=True)
    nodes = list(zip(_nodes(columns, used), keys[used].tolist()))
    for i, j in at.reshape(-1, 2).tolist():
        a, b = nodes[i], nodes[j]
        yield pack((a, b) if a < b else (b, a))


def class_endpoints(packed: bytes, partitions: int):
    """Where a packed pair's two verification sets are stored: (class partition, class key) of
    each. Pairs go through verification packed: one bytes object each in the side input and the
    shipped values, not nested tuples of nodes to encode and weigh."""
    return ((key % partitions, key) for _, key in unpack(packed))
