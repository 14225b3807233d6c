"""Grouping by a small integer key through files instead of a shuffle.

Beam's local runner holds every shuffle, and every PCollection between two steps, in memory, so
a step that must gather large values by key (the rows of one output shard) spills them instead:
each worker appends its values to files named by key (`<dir>/k<key>-<uuid>.pkl`, pickled
chunks, through Beam's FileSystems), only the files' names are grouped by key, and the step that
reads one key's files back runs a function on its values (`SpillGroups`). No worker holds more
than one key's values.
"""

from __future__ import annotations

import pickle
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam

from pipeline.runners import reruns_steps

CHUNK_VALUES = 256  # values per pickled chunk (the unit read back at once)


class SpillByKeyFn(beam.DoFn):
    """(key, value) → values appended to the key's spill file; yields (key, path) when it opens a
    file. The name comes from `process` (Beam 2.77's DaskRunner drops what `finish_bundle` emits);
    it reaches the reader through a GroupByKey, so only after the bundle, and its files, closed."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def start_bundle(self) -> None:
        self._files: dict[int, Any] = {}
        self._buffers: dict[int, list] = defaultdict(list)

    def _write(self, key: int) -> None:
        pickle.dump(self._buffers.pop(key), self._files[key], protocol=pickle.HIGHEST_PROTOCOL)

    def process(self, item: tuple[int, Any]) -> Iterator[tuple[int, str]]:
        from apache_beam.io.filesystems import FileSystems

        key, value = item
        if key not in self._files:
            path = f"{self.directory}/k{key:06d}-{uuid.uuid4().hex}.pkl"
            self._files[key] = FileSystems.create(path)
            yield key, path
        buffer = self._buffers[key]
        buffer.append(value)
        if len(buffer) >= CHUNK_VALUES:
            self._write(key)

    def finish_bundle(self) -> None:
        for key in list(self._buffers):
            self._write(key)
        for handle in self._files.values():
            handle.close()


def read_values(path: str) -> Iterator[Any]:
    """The values of one spill file, one chunk in memory at a time."""
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type="uncompressed") as handle:
        while True:
            try:
                chunk = pickle.load(handle)
            except EOFError:
                return
            yield from chunk


def _run_key(item: tuple[int, Iterable[str]], delete: bool, then, *sides) -> Iterator:
    """What `then(key, values, *sides)` yields for one key's spilled values (the files it was
    sent, never a folder listing); the files are deleted after, if `delete`."""
    from apache_beam.io.filesystems import FileSystems

    key, paths = item
    paths = sorted(paths)
    values = [value for path in paths for value in read_values(path)]
    yield from then(key, values, *sides)
    if delete:
        FileSystems.delete(paths)


class SpillGroups(beam.PTransform):
    """(key, value) pairs, from one PCollection or a tuple of them → what `then(key, values,
    *side values)` yields for every key that has values.

    The values are written to files by key in the step that produces them; only the files' names
    are grouped, and `then` runs in the step that reads a key's files back, so no PCollection of
    values lies between two steps and no multi-input Flatten gathers them (Beam's local runner
    holds both in memory). `sides` are side inputs passed on to `then`.
    """

    def __init__(self, directory: str, then, *sides) -> None:
        super().__init__()
        self.directory, self.then, self.sides = directory, then, sides

    def expand(self, pairs):
        parts = pairs if isinstance(pairs, tuple) else (pairs,)
        named = [
            part
            | f"Spill{index}" >> beam.ParDo(SpillByKeyFn(self.directory)).with_output_types(tuple[int, str])
            for index, part in enumerate(parts)
        ]
        return (
            tuple(named)
            | "AllFiles" >> beam.Flatten(pipeline=parts[0].pipeline)
            | "FilesByKey" >> beam.GroupByKey()
            # A runner that may run a step twice (Dask) keeps the files until the staging folder goes.
            | "RunKey" >> beam.FlatMap(_run_key, not reruns_steps(parts[0].pipeline), self.then, *self.sides)
        )
