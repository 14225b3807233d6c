"""Phase 0 of a run: read each unit (an input split or a generator) and run the document stages
before the first collection stage on it, in one step, writing the unit's checkpoint as it goes;
or, in a run resumed after a later phase, read that phase's checkpoint files back (`RestoreFn`).

One unit is processed whole by one `process` call, so its outcomes can be checkpointed with a
completion marker of its own (`pipeline.checkpoints`), and a unit finished by an earlier,
interrupted run is read back from its checkpoint instead. Documents run through the stages in
batches of the recipe's `batch_size`; reads that fail or are rejected by the reader go straight
out. Every record read gives exactly one (outcome, record) pair. Each document read gets its
`origin` (its unit's hash and its number in the unit), so dedup stages tell apart documents
that share an id.
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
import xxhash

from pipeline import fileio
from pipeline.beam_stages import StageDoFn, run_document_stages
from pipeline.checkpoints import PairWriter, WorkArea, write_marker
from pipeline.document import READ_STAGE, Document, Failure, Rejection
from pipeline.outcomes import FAILED, KEPT, REJECTED
from pipeline.progress import Tally, split_bytes
from pipeline.readers import ReadPosition, Split, read_split
from pipeline.record_fields import candidate_problem
from pipeline.spill import read_values

UNVERIFIED = "a synthesis candidate is admitted only by a `verify` stage, and the recipe has none"
BYTES_EVERY = 64  # records between two reads of a split's byte position for progress


def generate(generator) -> Iterator:
    """A generator's records as it yields them (so progress counts them as they come); one that
    breaks ends with one failure, the records it gave before kept."""
    try:
        yield from generator.generate()
    except Exception as error:
        message = " ".join(str(error).split())[:1000]
        source = f"synthetic:{generator.name}"
        yield Failure(f"{source}:generate", source, "read", type(error).__name__, message)


def origin_of(unit) -> str:
    """A short hash of what a unit reads (a split's file and start, or a generator's name): with a
    record's number in the unit, a document's `origin`, the same on every run and runner."""
    what = f"split\x00{unit.path}\x00{unit.start}" if isinstance(unit, Split) else f"generator\x00{unit.name}"
    return xxhash.xxh3_64_hexdigest(what.encode("utf-8", "surrogatepass"))


def _outcome_of(record) -> tuple[str, object]:
    if isinstance(record, Document):
        return KEPT, record
    return (REJECTED if isinstance(record, Rejection) else FAILED), record


class ReadPhaseFn(StageDoFn):
    """(unit key, unit) → (outcome, record) pairs of phase 0, checkpointed per unit.

    `work` is None when checkpoints are off; `done` maps the keys of units an earlier run
    finished to their (checked) markers; `progress` is the progress channel's folder or None;
    `options` are the run's pipeline options, which its object-store reads use;
    `verifies_candidates` whether a stage of the recipe admits synthesis candidates (`verify`):
    without one, every candidate read is rejected `unverified`, never kept unchecked (an earlier
    run's admitted samples, read back, are verified again by a recipe that has one).
    """

    def __init__(
        self,
        stages,
        config,
        batch_size: int,
        work: WorkArea | None,
        done: dict,
        progress: str | None,
        options,
        verifies_candidates: bool,
    ):
        super().__init__(stages)
        self.config, self.batch_size, self.work, self.done, self.progress, self.options = (
            config,
            batch_size,
            work,
            done,
            progress,
            options,
        )
        self.verifies_candidates = verifies_candidates

    def setup(self) -> None:
        super().setup()
        fileio.use_object_store_options(self.options)
        self.tally = Tally(self.progress) if self.progress else None

    def process(self, keyed_unit) -> Iterator[tuple[str, object]]:
        key, unit = keyed_unit
        marker = self.done.get(key)
        position = ReadPosition()
        if marker:
            pairs = self._restore(marker)
        else:
            pairs = self._compute(unit, position)
            if self.work is not None:
                pairs = self._checkpoint(key, unit, pairs)
        size = split_bytes(unit) if self.tally and isinstance(unit, Split) else 0
        credited = 0  # bytes of this split already counted, so a long split shows progress
        for count, pair in enumerate(pairs, 1):
            if self.tally:
                if size and count % BYTES_EVERY == 0:
                    now = min(position.bytes_read(), size)
                    self.tally.add("bytes", now - credited)
                    credited = now
                self.tally.add("read")
            yield pair
        if size:
            self.tally.add("bytes", size - credited)
            self.tally.flush()

    def _restore(self, marker: dict) -> Iterator[tuple[str, object]]:
        for entry in marker["files"]:
            yield from read_values(f"{self.work.folder(0)}/{entry['file']}")

    def _compute(self, unit, position: ReadPosition) -> Iterator[tuple[str, object]]:
        records = read_split(unit, self.config, position) if isinstance(unit, Split) else generate(unit)
        unit_origin = origin_of(unit)
        batch: list[Document] = []
        for number, record in enumerate(records):
            if isinstance(record, Document) and record.kind:
                if problem := candidate_problem(record):
                    record = Failure(record.id, record.source, READ_STAGE, "BadCandidate", problem)
                elif not self.verifies_candidates:
                    record = Rejection(record, READ_STAGE, "unverified", UNVERIFIED)
            if not isinstance(record, Document):
                yield _outcome_of(record)
                continue
            batch.append(record.replace(origin=f"{unit_origin}.{number}"))
            if len(batch) >= self.batch_size:
                yield from run_document_stages(self.stages, batch)
                batch = []
        if batch:
            yield from run_document_stages(self.stages, batch)

    def _checkpoint(self, key: str, unit, pairs) -> Iterator[tuple[str, object]]:
        writer = PairWriter(self.work.folder(0), key)
        for pair in pairs:
            writer.add(pair)
            yield pair
        entry = writer.close()
        unit_name = unit.path if isinstance(unit, Split) else unit.name
        write_marker(self.work.unit_marker(key), {"unit": unit_name, **entry})

    def finish_bundle(self) -> None:
        if self.tally:
            self.tally.flush()


class RestoreFn(beam.DoFn):
    """A checkpoint file's path → its (outcome, record) pairs: the first step of a run resumed after
    phase 0. It gives its worker the run's `options` as `ReadPhaseFn` does, so the resumed run
    reads and writes `s3://` through one client per worker, not through Beam's filesystem, on
    runners whose workers do not have them from their start (`pipeline.worker`, Dask's bundles)."""

    def __init__(self, options) -> None:
        self.options = options

    def setup(self) -> None:
        fileio.use_object_store_options(self.options)

    def process(self, path: str) -> Iterator[tuple[str, object]]:
        yield from read_values(path)
