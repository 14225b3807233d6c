"""Stream a finished gristmill output folder into a trainer, resumable at the exact next document.

The kept shards are cut into units (one Parquet row group each). Each epoch the units are put in
a seeded order and their rows cut into contiguous ranges, one per global reader slot (rank ×
dataloader worker), that differ by at most one document however few row groups there are: every
kept document is read exactly once per epoch across all ranks and workers. Each slot mixes its
documents through a seeded shuffle buffer. Which document comes out next depends only on
positions (seed, epoch, slot, row counts), never on content, so a saved position — documents
consumed — is enough to restore the stream exactly: the buffer is rebuilt by replaying indices
and reading back only the rows it held.

`OutputStream` is the plain iterator (no torch); `GristmillDataset` wraps it as a PyTorch
`IterableDataset` with `state_dict()` / `load_state_dict()`.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import os
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
from apache_beam.io.filesystems import FileSystems

from pipeline import fileio
from pipeline.document import one_line
from pipeline.output_folder import is_gristmill_manifest

SUPPORTED_FORMAT_VERSIONS = (1,)
REQUIRED_COLUMNS = {"id": pa.string(), "text": pa.string()}
HASH_CHUNK = 8 << 20
DEALING = "row-ranges"  # how documents are dealt to reader slots; a saved state names it


class BadOutputFolder(ValueError):
    """The folder is not a complete gristmill output this reader can trust."""


@dataclass(frozen=True)
class Unit:
    """Rows `first` .. `first + rows` of one Parquet row group of one kept shard."""

    path: str
    row_group: int
    rows: int
    first: int = 0


def load_manifest(output: str) -> dict[str, Any]:
    """The manifest of a finished run; refuses an unfinished run or one of an unknown format."""
    output = fileio.user_path(output)
    fileio.check_filesystem(output, "output folder")
    path = FileSystems.join(output, "manifest.json")
    if fileio.is_local(output) and not os.path.isdir(output):
        what = "a file, not an output folder" if os.path.exists(output) else "no such folder"
        raise BadOutputFolder(f"{output}: {what}")
    if not fileio.exists(path):
        raise BadOutputFolder(
            f"{output}: no manifest.json; the run did not finish (a folder without a manifest is never complete)"
        )
    try:
        manifest = json.loads(fileio.read_bytes(path))
    except ValueError as error:
        raise BadOutputFolder(f"{path}: unreadable manifest ({error})") from error
    if not is_gristmill_manifest(manifest):
        raise BadOutputFolder(f"{path}: not a gristmill manifest (no list of shards)")
    version = manifest.get("format_version", 1)
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise BadOutputFolder(
            f"{path}: output format version {version!r}, this reader supports {list(SUPPORTED_FORMAT_VERSIONS)}"
        )
    return manifest


def _check_sha256(path: str, expected: str) -> None:
    digest = hashlib.sha256()
    with fileio.open_read(path) as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != expected:
        raise BadOutputFolder(
            f"{path}: sha256 {digest.hexdigest()} does not match the manifest's {expected}; "
            "the shard was changed or truncated after the run"
        )


def _check_schema(path: str, schema: pa.Schema, columns: tuple[str, ...] = ()) -> None:
    """A kept shard's `id` and `text`, and the `columns` a reader asks for (pyarrow reads a column
    a file does not have as nothing: every record was an empty dict)."""
    for name, kind in REQUIRED_COLUMNS.items():
        index = schema.get_field_index(name)
        if index < 0 or schema.field(index).type not in (kind, pa.large_string()):
            found = ", ".join(f"{f.name}: {f.type}" for f in schema)
            raise BadOutputFolder(f"{path}: not a gristmill kept shard (needs {name}: {kind}; found {found})")
    missing = [name for name in columns if schema.get_field_index(name) < 0]
    if missing:
        hint = " (written by runs with [output] token_ids = true)" if "token_ids" in missing else ""
        raise BadOutputFolder(
            f"{path}: no column {', '.join(missing)}{hint}; the kept shards have {', '.join(schema.names)}"
        )


def kept_units(
    output: str,
    hash_shards: bool = False,
    columns: tuple[str, ...] = (),
    filesystem_options: Sequence[str] = (),
) -> list[Unit]:
    """Every row group of every kept shard, in manifest order; shards checked against the manifest
    (size and rows; with `hash_shards`, the sha256 of every byte: a read of the whole output) and
    for the `columns` a reader will ask for. The sizes come from one listing and the row groups
    from the manifest, so one footer is read whatever the number of shards (an object store
    charged two requests a shard; outputs written before 2026-12-06 still have every footer
    read). An output on an object store is read with Beam's `filesystem_options`
    (`--s3_endpoint_url=...`; none: the AWS environment's), its store asked once first, so that a
    dead endpoint is one error at once."""
    output = fileio.user_path(output)
    if not fileio.is_local(output):
        fileio.check_filesystem(output, "output folder")
        fileio.check_reachable([("output folder", output)], fileio.use_options(filesystem_options))
    manifest = load_manifest(output)
    listed = fileio.listing(fileio.join(fileio.escape(output), "kept", "*.parquet"))
    sizes = {path.rsplit("/", 1)[-1]: info.size for path, info in listed.items()}
    units: list[Unit] = []
    for shard in manifest.get("shards", []):
        if shard.get("kind") != "kept" or not shard.get("rows"):
            continue
        path = fileio.join(output, shard["file"])
        size = sizes.get(shard["file"].rsplit("/", 1)[-1])
        if size is None:
            raise BadOutputFolder(f"{path}: listed in the manifest but missing")
        if size != shard["bytes"]:
            raise BadOutputFolder(
                f"{path}: {size} bytes, the manifest says {shard['bytes']}; "
                "the shard was changed or truncated after the run"
            )
        if hash_shards:
            _check_sha256(path, shard["sha256"])
        row_groups = shard.get("row_groups")
        if row_groups is None or not units:  # an older manifest; the first shard's schema
            row_groups = _footer_row_groups(path, columns)
        if sum(row_groups) != shard["rows"]:
            raise BadOutputFolder(f"{path}: {sum(row_groups)} rows, the manifest says {shard['rows']}")
        units.extend(Unit(path, i, rows) for i, rows in enumerate(row_groups))
    return units


def _footer_row_groups(path: str, columns: tuple[str, ...]) -> list[int]:
    """The rows of each row group of a kept shard, from its footer, whose schema is checked."""
    with fileio.open_random_access(path) as handle:
        metadata = fileio.parquet_reader(handle).metadata
    _check_schema(path, metadata.schema.to_arrow_schema(), columns)
    return [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]


def slot_units(
    units: list[Unit], seed: int, epoch: int, slot: int, slots: int, drop_remainder: bool = False
) -> list[Unit]:
    """The units a reader slot reads this epoch: the rows of all units in a seeded order, cut into
    `slots` contiguous ranges (sizes differ by at most one; all `total // slots` with
    `drop_remainder`, the last `total % slots` rows of the order left out); this slot's range."""
    order = list(range(len(units)))
    random.Random(f"units:{seed}:{epoch}").shuffle(order)
    total = sum(unit.rows for unit in units)
    if drop_remainder:
        start, end = slot * (total // slots), (slot + 1) * (total // slots)
    else:
        start, end = slot * total // slots, (slot + 1) * total // slots
    taken, position = [], 0
    for unit in (units[i] for i in order):
        low, high = max(start, position), min(end, position + unit.rows)
        if low < high:
            taken.append(replace(unit, first=unit.first + low - position, rows=high - low))
        position += unit.rows
        if position >= end:
            break
    return taken


def shuffled_positions(total: int, buffer_size: int, seed: int, epoch: int, slot: int) -> Iterator[int]:
    """Replays the shuffle buffer on positions: yields the positions 0..total-1 (reading order) in
    the order they leave the buffer; the sequence depends only on the arguments.

    Each read position replaces a random slot of the full buffer, whose position goes out; the
    slot is drawn as `random.randrange(buffer_size)` draws it (bits of `getrandbits`, rejected
    while out of range), inlined because the draw is most of the per-document cost.
    """
    rng = random.Random(f"buffer:{seed}:{epoch}:{slot}")
    getrandbits, bits = rng.getrandbits, buffer_size.bit_length()
    buffer = list(range(min(buffer_size, total)))
    for position in range(len(buffer), total):
        pick = getrandbits(bits)
        while pick >= buffer_size:
            pick = getrandbits(bits)
        yield buffer[pick]
        buffer[pick] = position
    rng.shuffle(buffer)
    yield from buffer


def _integer_lists(kind: pa.DataType) -> bool:
    return (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and pa.types.is_integer(kind.value_type)


def _column_values(column: pa.ChunkedArray, arrays: bool) -> Callable[[int], Any]:
    """`row -> value` for one column of a row group, the value `to_pylist` gives. Lists of integers
    (token ids) stay in Arrow memory until their row is read, then become a Python list, or with
    `arrays` a numpy view of one writable copy of the row group's ids; converting a whole row
    group of token ids at once costs more (millions of Python ints allocated and freed together).
    Other columns are converted whole."""
    if not _integer_lists(column.type):
        return column.to_pylist().__getitem__
    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if array.values.null_count:
        return array.to_pylist().__getitem__
    values, offsets = array.values.to_numpy(), array.offsets.to_pylist()
    if arrays:
        values = values.copy()
        take = lambda row: values[offsets[row] : offsets[row + 1]]  # noqa: E731
    else:
        take = lambda row: values[offsets[row] : offsets[row + 1]].tolist()  # noqa: E731
    if array.null_count == 0:
        return take
    valid = array.is_valid().to_pylist()
    return lambda row: take(row) if valid[row] else None


def _records(table: pa.Table, arrays: bool) -> Callable[[int], dict[str, Any]]:
    """`row -> record` (a dict of the table's columns) for one loaded row group."""
    if not any(_integer_lists(kind) for kind in table.schema.types):
        return table.to_pylist().__getitem__
    columns = [(name, _column_values(table.column(name), arrays)) for name in table.column_names]
    if len(columns) == 1:
        [(name, value)] = columns
        return lambda row: {name: value(row)}
    return lambda row: {name: value(row) for name, value in columns}


class OutputStream:
    """Documents of one reader slot for one epoch, in shuffled order; resumable by count.

    `columns`: what each yielded record holds (a dict of those columns); `arrays`: lists of integers
    (token ids) as numpy arrays instead of Python lists (views of their row group's ids, which stay
    in memory while a view is kept; a pickled view, as DataLoader workers send them, is a copy). `skip`: documents of this epoch already
    consumed (from a saved state); the stream continues with the next one. `drop_remainder`: every
    slot gets the same number of documents (see `slot_units`). `verify`: each page's CRC is
    checked as its row group is read (shards written before 2026-12-06 carry none).
    """

    def __init__(
        self,
        units: list[Unit],
        *,
        seed: int = 0,
        epoch: int = 0,
        slot: int = 0,
        slots: int = 1,
        buffer_size: int = 1000,
        columns: tuple[str, ...] = ("id", "text"),
        arrays: bool = False,
        skip: int = 0,
        drop_remainder: bool = False,
        verify: bool = True,
    ) -> None:
        self.units = slot_units(units, seed, epoch, slot, slots, drop_remainder)
        self.verify = verify
        self.starts = list(itertools.accumulate((unit.rows for unit in self.units), initial=0))[:-1]
        self.total = sum(unit.rows for unit in self.units)
        self.columns = list(columns)
        self.arrays = arrays
        self._order = shuffled_positions(self.total, max(1, buffer_size), seed, epoch, slot)
        self._loaded: dict[int, Callable] = {}  # unit index -> (row -> record)
        self._done = [0] * len(self.units)  # rows of each unit already yielded, to free it when done
        self.consumed = min(skip, self.total)
        for _ in range(self.consumed):
            self._done[self._unit_of(next(self._order))] += 1

    def __len__(self) -> int:
        return self.total

    def _unit_of(self, position: int) -> int:
        return bisect.bisect_right(self.starts, position) - 1

    def _load(self, index: int) -> Callable[[int], dict[str, Any]]:
        unit = self.units[index]
        # The calling thread only (`fileio.parquet_reader`): a read through a Python file object on
        # arrow's threads can abort the interpreter at exit (apache/arrow#34314; 5 exits of 16 here).
        with fileio.open_random_access(unit.path) as handle:
            parquet = fileio.parquet_reader(handle, page_checksum_verification=self.verify)
            try:
                table = parquet.read_row_group(unit.row_group, columns=self.columns, use_threads=False)
            except OSError as error:
                if type(error) is not OSError:  # a connection or timeout error, not the shard's bytes
                    raise
                raise BadOutputFolder(
                    f"{unit.path}: row group {unit.row_group}: {one_line(error)}; the shard is damaged "
                    "or was changed after the run"
                ) from None
        if table.num_columns < len(set(self.columns)):  # units from kept_units without `columns`
            _check_schema(unit.path, parquet.schema_arrow, tuple(self.columns))
        table = table.slice(unit.first, unit.rows)  # a slot may hold only part of a row group
        records = self._loaded[index] = _records(table, self.arrays)
        return records

    def __iter__(self) -> Iterator[dict]:
        starts, done, loaded = self.starts, self._done, self._loaded
        sizes = [unit.rows for unit in self.units]
        for position in self._order:
            index = bisect.bisect_right(starts, position) - 1
            record = (loaded.get(index) or self._load(index))(position - starts[index])
            done[index] += 1
            if done[index] == sizes[index]:
                del loaded[index]
            self.consumed += 1
            yield record


def dataloader_positions(samples_seen: int, totals: list[int], batch_size: int) -> tuple[list[int], int]:
    """Where each DataLoader worker was when the trainer had seen `samples_seen`, and whose turn
    came next: (documents each worker had handed over, next worker).

    A PyTorch DataLoader (in order) takes one batch from each worker in turn, skips workers that
    are exhausted, and lets a worker's last batch be short; replaying that on counts gives each
    worker's position.
    """
    taken = [0] * len(totals)
    remaining = samples_seen
    turn = 0
    while remaining > 0:
        if all(taken[w] == totals[w] for w in range(len(totals))):
            raise ValueError(
                f"samples_seen={samples_seen} is more than this rank's epoch holds ({sum(totals)})"
            )
        worker, turn = turn, (turn + 1) % len(totals)
        size = min(batch_size, totals[worker] - taken[worker])
        if remaining < size:
            raise ValueError(
                f"samples_seen={samples_seen} is not at a batch boundary of batch_size={batch_size}"
            )
        taken[worker] += size
        remaining -= size
    return taken, turn


def _torch_dataset_base():
    try:
        from torch.utils.data import IterableDataset
    except ImportError:  # the plain OutputStream needs no torch
        return object
    return IterableDataset


class GristmillDataset(_torch_dataset_base()):
    """A PyTorch `IterableDataset` over a gristmill output folder, for one data-parallel rank.

    Shards and row groups are split across `world_size` ranks and the DataLoader's workers
    without overlap; documents are shuffled by a seeded buffer. `columns` picks what each record
    holds (`("token_ids",)` for pre-tokenized output; `arrays=True` gives them as numpy arrays,
    ready for `torch.from_numpy`). Resume: save `state_dict(samples_seen)`
    (the samples this rank's trainer consumed; with `num_workers=0` the dataset counts them
    itself) and `load_state_dict` it into a fresh dataset; iteration continues with the next
    document. `batch_size` must be the DataLoader's, so positions can be restored per worker.
    Ranks differ by at most one document per slot; `drop_remainder=True` leaves out the last
    `total % (world_size × workers)` documents of each epoch's order so that every rank has the
    same number, and so the same number of batches, as DistributedDataParallel needs. Shards are
    checked for size and rows at the start, and each page's CRC as it is read (`verify`);
    `hash_shards=True` also hashes every shard whole at the start (a read of the whole output, in
    every rank). An output on an object store is read with Beam's `filesystem_options`
    (`["--s3_endpoint_url=..."]`; none: the AWS environment's endpoint, region and credentials),
    in every worker. `num_workers`, when given, is the DataLoader's: iteration checks it, and a
    state saved with another count is refused (resumed positions hold only for the same count).
    `set_epoch` and `load_state_dict` reach the workers when the DataLoader starts them, so they
    need `persistent_workers=False` (the DataLoader's default).
    """

    def __init__(
        self,
        output: str,
        *,
        rank: int = 0,
        world_size: int = 1,
        seed: int = 0,
        buffer_size: int = 1000,
        columns: tuple[str, ...] = ("id", "text"),
        arrays: bool = False,
        batch_size: int = 1,
        verify: bool = True,
        hash_shards: bool = False,
        drop_remainder: bool = False,
        filesystem_options: Sequence[str] = (),
        num_workers: int | None = None,
    ) -> None:
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in [0, {world_size})")
        self.output = fileio.user_path(output)
        self.rank = rank
        self.world_size = world_size
        self.seed = seed
        self.buffer_size = buffer_size
        self.columns = tuple(columns)
        self.arrays = arrays
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.filesystem_options = tuple(filesystem_options)
        self.num_workers = num_workers
        self.verify = verify
        self.units = kept_units(output, hash_shards, self.columns, self.filesystem_options)
        self.epoch = 0
        self._resume_from = 0  # samples of `epoch` this rank had consumed when the state was saved
        self._seen = 0  # samples yielded in this process (num_workers=0)

    def set_epoch(self, epoch: int) -> None:
        """Start `epoch` (a new seeded order) from its beginning."""
        self.epoch, self._resume_from, self._seen = epoch, 0, 0

    def _stream(self, worker: int, workers: int, skip: int) -> OutputStream:
        return OutputStream(
            self.units,
            seed=self.seed,
            epoch=self.epoch,
            slot=self.rank * workers + worker,
            slots=self.world_size * workers,
            buffer_size=self.buffer_size,
            columns=self.columns,
            arrays=self.arrays,
            skip=skip,
            drop_remainder=self.drop_remainder,
            verify=self.verify,
        )

    def _worker(self) -> tuple[int, int]:
        from torch.utils.data import get_worker_info

        info = get_worker_info()
        running = 0 if info is None else info.num_workers
        if self.num_workers is not None and running != self.num_workers:
            raise ValueError(
                f"the dataset was made for num_workers={self.num_workers}, and the DataLoader runs {running}"
            )
        return (0, 1) if info is None else (info.id, info.num_workers)

    def __iter__(self) -> Iterator[dict]:
        if not fileio.is_local(self.output):  # a DataLoader worker started by `spawn` holds none
            fileio.use_options(self.filesystem_options)
        worker, workers = self._worker()
        total, slots = sum(unit.rows for unit in self.units), self.world_size * workers
        if self.drop_remainder and 0 < total < slots:
            raise ValueError(
                f"{self.output}: {total} documents, fewer than the {slots} reader slots "
                f"({self.world_size} ranks x {workers} DataLoader workers): with drop_remainder=True "
                "every rank would get none; use fewer ranks or workers"
            )
        totals = [len(self._stream(w, workers, 0)) for w in range(workers)]
        taken, turn = dataloader_positions(self._resume_from, totals, self.batch_size)
        # A new DataLoader starts its round at worker 0: worker k takes over the part of the worker
        # whose turn is k places after the saved one, so batches come in the uninterrupted order.
        role = (worker + turn) % workers
        self._seen = self._resume_from
        for record in self._stream(role, workers, taken[role]):
            self._seen += 1
            yield record

    def state_dict(self, samples_seen: int | None = None) -> dict[str, Any]:
        """Where this rank is: its epoch and the samples its trainer consumed in that epoch."""
        return {
            "epoch": self.epoch,
            "samples_seen": self._seen if samples_seen is None else samples_seen,
            "seed": self.seed,
            "rank": self.rank,
            "world_size": self.world_size,
            "batch_size": self.batch_size,
            "buffer_size": self.buffer_size,
            "drop_remainder": self.drop_remainder,
            "num_workers": self.num_workers,
            "dealing": DEALING,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from `state`; refuses a state saved with a different layout or seed."""
        if state.get("dealing") != DEALING:  # before 2026-12-05: whole row groups per slot
            raise ValueError(
                "state was saved by an older gristmill that dealt whole row groups to the reader "
                "slots; resume it with that version, or start its epoch over (set_epoch)"
            )
        for key in ("seed", "rank", "world_size", "batch_size", "buffer_size", "drop_remainder"):
            if state[key] != getattr(self, key):
                raise ValueError(
                    f"state was saved with {key}={state[key]!r}, this dataset has {getattr(self, key)!r}"
                )
        saved_workers = state.get("num_workers")
        if None not in (saved_workers, self.num_workers) and saved_workers != self.num_workers:
            raise ValueError(
                f"state was saved with num_workers={saved_workers}, this dataset has {self.num_workers}: "
                "the saved count restores positions only for the same number of DataLoader workers"
            )
        self.epoch, self._resume_from, self._seen = (
            state["epoch"],
            state["samples_seen"],
            state["samples_seen"],
        )
