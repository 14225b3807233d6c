"""Grouping by a small integer key through files instead of a shuffle.

Beam's local runner holds every shuffle, and every PCollection between two steps, in memory, so
a step that must gather large values by key (the rows of one output shard) spills them instead:
each worker appends its values to files named by key (`<dir>/k<key>-<uuid>.pkl`, chunks of
pickled values, through `pipeline.fileio`), only the files' names are grouped by key, and the
step that reads one key's files back runs a function on its values, streamed (`SpillGroups`). A function
that needs a key's values in order sorts them in bounded memory (`external_sort`: sorted runs
spilled the same way, then a heap merge).

A chunk on disk is its pickle behind an 8-byte little-endian length, zstd-compressed (level 1)
while that pays: pickled text takes about 2.3 times less disk (a run writes its text several
times: checkpoints, each dedup stage's document spill, the kept rows), for about 6.5 CPU-seconds
per GB to compress and 2.3 to read back (benchmarks/results/memory.md, wave 9); spills of random
64-bit hashes (the dedup stages' shingle sets) shrink by only 3-11 % for more CPU than pickling
them, so a writer whose first chunk does not shrink by `MIN_SAVING` writes the rest as plain
pickles (`ChunkEncoder`).
"""

from __future__ import annotations

import heapq
import itertools
import pickle
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam

from pipeline import fileio
from pipeline.runners import reruns_steps

# Bytes of (key, value) pairs one partition of `SortedGroups` sorts in memory before it spills a run.
GROUP_SORT_BYTES = 64 * 1024 * 1024
CHUNK_VALUES = 256  # values per chunk (the unit read back at once)
CHUNK_LEVEL = 1  # zstd level of a chunk: the fast end (level 3 wrote 40 % slower for 17 % less disk)
MIN_SAVING = 0.2  # a writer compresses only if its first chunk shrinks by this much
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's first bytes (a pickle starts with b"\x80")
LENGTH_BYTES = 8
# Bytes (`rough_size`) one SpillByKeyFn holds over all its keys before it writes them all out. A
# bundle of the local runner is a worker's whole share of a step, so with many keys (1,024 order
# buckets) or large values (minhash's packed chunks) the buffers would otherwise hold a share of the
# corpus (the kept rows, text and all) until `finish_bundle`, or up to keys × CHUNK_VALUES blobs.
HELD_BYTES = 16 * 1024 * 1024
MAX_OPEN_FILES = 256  # spill files one SpillByKeyFn holds open at once
SIZE_SAMPLE = 16  # items weighed of a long list or tuple (`rough_size`)
_GOLDEN = (5**0.5 - 1) / 2
SpilledFile = tuple[int, str]  # (key, path of one of its spill files): what a spilling step yields


def rough_size(value: Any) -> int:
    """About how many bytes `value` holds: strings and bytes by length, containers and slotted
    objects (`Document`) by their contents; anything else 32. A list or tuple of more than
    4 × `SIZE_SAMPLE` items is weighed by a sample of them at golden-ratio steps, which simple
    periodic patterns of sizes do not alias as evenly spaced steps do (a spilled chunk of
    decisions or a node's neighbour list holds thousands of small tuples of one shape); an
    estimate, as the rest is."""
    if isinstance(value, (str, bytes, bytearray)):
        return 49 + len(value)
    if isinstance(value, dict):
        return 64 + _items_size(value.values())
    if isinstance(value, (list, tuple)):
        if len(value) > 4 * SIZE_SAMPLE:
            n = len(value)
            sample = [value[int(n * (k * _GOLDEN % 1.0))] for k in range(SIZE_SAMPLE)]
            return 56 + _items_size(sample) * n // SIZE_SAMPLE
        return 56 + _items_size(value)
    slots = getattr(type(value), "__slots__", ())
    if slots and not isinstance(slots, str):
        return 56 + _items_size(getattr(value, name, None) for name in slots)
    return 32


_SCALARS = frozenset({int, float, bool, type(None)})


def _items_size(items: Iterable) -> int:
    """The sum of `rough_size` over `items`, with numbers and strings sized in the loop: every spilled
    value is weighed, and a call per tuple field was a tenth of `unit_dedup`'s CPU."""
    total = 0
    for item in items:
        kind = type(item)
        if kind in _SCALARS:
            total += 32
        elif kind is str or kind is bytes:
            total += 49 + len(item)
        else:
            total += rough_size(item)
    return total


class ChunkEncoder:
    """Lists of values → chunks of a spill or checkpoint file, read back by `read_values`. One per
    writer (zstd compressors are not thread-safe). The first chunk decides: if zstd does not save
    `MIN_SAVING` of its bytes, this and every later chunk is written as a plain pickle."""

    def __init__(self) -> None:
        import zstandard

        self.compressor: Any = zstandard.ZstdCompressor(level=CHUNK_LEVEL)
        self.decided = False

    def __call__(self, values: list) -> bytes:
        data = pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
        if self.compressor is not None:
            packed = self.compressor.compress(data)
            if not self.decided:
                self.decided = True
                if len(packed) > (1 - MIN_SAVING) * len(data):
                    self.compressor = None
            if len(packed) < len(data):
                data = packed
        return len(data).to_bytes(LENGTH_BYTES, "little") + data


class SpillByKeyFn(beam.DoFn):
    """(key, value) → values appended to the key's spill file; yields (key, path) when it opens a
    file. The name comes from `process` (Beam 2.77's DaskRunner drops what `finish_bundle` emits);
    it reaches the reader through a GroupByKey, so only after the bundle, and its files, closed.
    A key's values are written in chunks of `CHUNK_VALUES`, and all keys' buffers as soon as they
    hold `held_bytes` together, so memory does not grow with the bundle. At most `MAX_OPEN_FILES`
    are open at once: the oldest is closed for another, and its key's later values go to a new
    file (before, the kept output's 1,024 buckets, twice over in two fused steps, ran past the
    1,024 open files many systems allow: `Too many open files`)."""

    def __init__(self, directory: str, held_bytes: int = HELD_BYTES) -> None:
        self.directory, self.held_bytes = directory, held_bytes

    def start_bundle(self) -> None:
        self._files: dict[int, Any] = {}
        self._buffers: dict[int, list] = defaultdict(list)
        self._sizes: dict[int, int] = defaultdict(int)
        self._held = 0
        self._encode = ChunkEncoder()

    def _write(self, key: int) -> None:
        self._held -= self._sizes.pop(key)
        self._files[key].write(self._encode(self._buffers.pop(key)))

    def _write_all(self) -> None:
        for key in list(self._buffers):
            self._write(key)

    def process(self, item: tuple[int, Any]) -> Iterator[tuple[int, str]]:
        key, value = item
        if key not in self._files:
            if len(self._files) >= MAX_OPEN_FILES:
                oldest = next(iter(self._files))
                if oldest in self._buffers:
                    self._write(oldest)
                self._files.pop(oldest).close()
            path = f"{self.directory}/k{key:06d}-{uuid.uuid4().hex}.pkl"
            self._files[key] = fileio.create(path)
            yield key, path
        buffer = self._buffers[key]
        buffer.append(value)
        size = rough_size(value)
        self._sizes[key] += size
        self._held += size
        if len(buffer) >= CHUNK_VALUES:
            self._write(key)
        elif self._held >= self.held_bytes:
            self._write_all()

    def finish_bundle(self) -> None:
        self._write_all()
        for handle in self._files.values():
            handle.close()


class SpillStepFn(SpillByKeyFn):
    """(key, its spill files' names, grouped) → the (key, value) pairs that `then(key, values,
    *args)` yields, spilled under `directory` as `SpillByKeyFn` spills them (it yields (key, path)):
    the step of a chain of groupings (GroupByKey, SpillStepFn, GroupByKey, ...) that shuffles only
    file names, reading each key's files once and deleting them after, if `delete`."""

    def __init__(self, directory: str, delete: bool, then, *args) -> None:
        super().__init__(directory)
        self.delete, self.then, self.args = delete, then, args

    def process(self, item: tuple[int, Iterable[str]]) -> Iterator[SpilledFile]:
        for pair in run_key(item, self.delete, self.then, *self.args):
            yield from super().process(pair)


def read_values(path: str) -> Iterator[Any]:
    """The values of one spill or checkpoint file, one chunk in memory at a time."""
    import zstandard

    decompressor = zstandard.ZstdDecompressor()
    with fileio.open_read(path) as handle:
        while header := handle.read(LENGTH_BYTES):
            size = int.from_bytes(header, "little")
            data = handle.read(size) if len(header) == LENGTH_BYTES else b""
            if len(data) < size or not data:
                raise EOFError(f"{path}: truncated chunk")
            yield from pickle.loads(decompressor.decompress(data) if data.startswith(ZSTD_MAGIC) else data)


def write_values(path: str, values: list) -> None:
    """`values` as one spill file (chunks of `CHUNK_VALUES`), read back by `read_values`."""
    encode = ChunkEncoder()
    with fileio.create(path) as handle:
        for start in range(0, len(values), CHUNK_VALUES):
            handle.write(encode(values[start : start + CHUNK_VALUES]))


def external_sort(
    values: Iterable,
    key: Callable | None,
    directory: str,
    budget: int,
    size: Callable[[Any], int],
    on_run=None,
) -> Iterator:
    """`values` in `key` order (None: by the values themselves), as `sorted(values, key=key)` gives
    them (equal keys keep their input order), holding about `budget` bytes (the sum of
    `size(value)`) at a time.

    Values are cut into consecutive runs of `budget` bytes, each sorted in memory; every full
    run is written to `<directory>/run-<uuid>.pkl`, the last one stays in memory, and the runs are
    merged by a heap reading one chunk per run at a time (the files are deleted once merged).
    `on_run(run)` sees each sorted run before it is written. Reads all of `values` before returning.
    """
    paths, run, held = [], [], 0
    for value in values:
        run.append(value)
        held += size(value)
        if held >= budget:
            run.sort(key=key)
            if on_run is not None:
                on_run(run)
            paths.append(f"{directory}/run-{uuid.uuid4().hex}.pkl")
            write_values(paths[-1], run)
            run, held = [], 0
    run.sort(key=key)
    if run and on_run is not None:
        on_run(run)
    return _merged(paths, run, key)


def _merged(paths: list[str], last: list, key: Callable | None) -> Iterator:
    # heapq.merge breaks ties by the order of its inputs, and the runs are in input order: stable.
    yield from heapq.merge(*(read_values(path) for path in paths), last, key=key)
    if paths:
        fileio.delete(paths)


def run_key(item: tuple[int, Iterable[str]], delete: bool, then, *sides) -> Iterator:
    """What `then(key, values, *sides)` yields for one key's spilled values (an iterator over the
    files it was sent, never a folder listing, read one chunk at a time); the files are deleted
    after, if `delete`."""
    key, paths = item
    paths = sorted(paths)
    values = (value for path in paths for value in read_values(path))
    yield from then(key, values, *sides)
    if delete:
        fileio.delete(paths)


class SpillGroups(beam.PTransform):
    """(key, value) pairs, from one PCollection or a tuple of them → what `then(key, values,
    *side values)` yields for every key that has values (`values`: an iterator, read once).

    The values are written to files by key in the step that produces them; only the files' names
    are grouped, and `then` runs in the step that reads a key's files back, so no PCollection of
    values lies between two steps and no multi-input Flatten gathers them (Beam's local runner
    holds both in memory). With a tuple, a key's values from the first PCollection come before
    those from the second, and so on (each one's files lie in their own folder, and a key's files
    are read in the order of their paths), so `then` can index the small side before it streams
    the large one. `sides` are side inputs passed on to `then`.
    """

    def __init__(self, directory: str, then, *sides) -> None:
        super().__init__()
        self.directory, self.then, self.sides = directory, then, sides

    def expand(self, pairs):
        parts = pairs if isinstance(pairs, tuple) else (pairs,)
        named = [
            part
            | f"Spill{index}"
            >> beam.ParDo(SpillByKeyFn(f"{self.directory}/{index:02d}")).with_output_types(SpilledFile)
            for index, part in enumerate(parts)
        ]
        return (
            tuple(named)
            | "AllFiles" >> beam.Flatten(pipeline=parts[0].pipeline)
            | "FilesByKey" >> beam.GroupByKey()
            # A runner that may run a step twice (Dask) keeps the files until the staging folder goes.
            | "RunKey" >> beam.FlatMap(run_key, not reruns_steps(parts[0].pipeline), self.then, *self.sides)
        )


def hash_partition(key: bytes | int, partitions: int) -> int:
    """The partition of a hash key (bytes: its first 8 bytes, little-endian; int: itself)."""
    if isinstance(key, bytes):
        key = int.from_bytes(key[:8], "little")
    return key % partitions


def _sorted_groups(partition: int, pairs: Iterable[tuple], scratch: str, then) -> Iterator:
    ordered = external_sort(pairs, None, f"{scratch}/p{partition:05d}", GROUP_SORT_BYTES, rough_size)
    for key, group in itertools.groupby(ordered, key=lambda pair: pair[0]):
        yield from then(key, (value for _, value in group))


class SortedGroups(beam.PTransform):
    """(hash key, value) pairs → what `then(key, values)` yields for every key, its values in
    sorted order (an iterator, read once): a GroupByKey for a key per document or paragraph that
    holds neither a shuffle nor a group in memory.

    The pairs are spilled by `hash_partition(key, partitions)` (`SpillGroups`); each partition
    sorts its pairs in runs of `GROUP_SORT_BYTES` (`external_sort`) and walks the keys in order.
    Values must be comparable within a key.
    """

    def __init__(self, directory: str, then, partitions: int) -> None:
        super().__init__()
        self.directory, self.then, self.partitions = directory, then, partitions

    def expand(self, pairs):
        partitions = self.partitions
        return (
            pairs
            | "ByPartition" >> beam.Map(lambda pair: (hash_partition(pair[0], partitions), pair))
            | "Groups"
            >> SpillGroups(f"{self.directory}/pairs", _sorted_groups, f"{self.directory}/sort", self.then)
        )
