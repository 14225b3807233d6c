"""`unit_dedup`'s classes and lexical candidate pairs (steps 2 and 3 of `dedup.units`): units of
one shingle set become one class with a representative, and representatives that share a MinHash
LSH band bucket become candidate pairs, as numpy arrays of class numbers by pair partition.

A unit is named in the graph by a node: its document's survivor order (ending with the id), then
its index. Nodes travel between steps as columns (`_column`), one array or list per field.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np
from apache_beam.metrics import Metrics

from dedup.minhash import pack, report, unpack, verification_sets
from dedup.signatures import MinHasher, band_keys

BAND, SETS, MEMBERS, VECTORS = "band", "sets", "members", "vectors"


def unit_node(order: tuple, index: int) -> tuple:
    """A unit's name in the graph: its document's survivor order (ending with the id), then its index.
    The smallest node of a component is the copy to keep."""
    return (*order, index)


def node_doc(node: tuple) -> str:
    return node[-2]


def unit_classes(
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


def bucket_pairs(_partition: int, blobs: Iterable[bytes], max_bucket_size: int, name: str, partitions: int):
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


def distinct_class_pairs(_partition: int, chunks: Iterable[bytes]):
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


def class_endpoints(packed: bytes, partitions: int):
    """Where a packed pair's two verification sets are stored: (class partition, class key) of
    each. Pairs go through verification packed: one bytes object each in the side input and the
    shipped values, not nested tuples of nodes to encode and weigh."""
    return ((key % partitions, key) for _, key in unpack(packed))
