"""Phases and checkpoints, so a run killed part-way resumes where it stopped.

A recipe's stages are cut into phases at collection stages: phase 0 reads the input and runs the
document stages before the first collection stage; each later phase is one collection stage and
the document stages after it. While the run streams, phase 0 writes each input split's outcomes
(the documents it kept, and its rejections and failures) to the work area with a completion
marker per split, and every later phase but the last writes its outcomes with one marker for the
phase. The pipeline is still one job; checkpoints are taps on its streams, not a separate pass.

A rerun of the same command finds the markers: finished splits are read back instead of read
and filtered again, and when every split and phases 1..k are complete the run starts at phase
k+1 from their files. Each marker names its phase's fingerprint: the recipe up to the end of the
phase, the input settings and, per split, the file's path, size and modification time (later
phases: of every input). Changing a later stage's parameters keeps the earlier phases; anything
else starts over. Every file a marker lists is checked (size and sha256) before it is trusted; a
marker that does not check out is deleted and its work recomputed.

Work area: `--work-dir`, default `<output>/.gristmill-work`; removed after a successful run
unless `--keep-work`. Files are chunks of pickled (outcome, record) pairs, compressed like the
spill files (`pipeline.spill.ChunkEncoder`, read back by `pipeline.spill.read_values`): they
round-trip every field of a record exactly (scores, metadata of any JSON shape), which a rerun
must reproduce byte for byte; they are the run's scratch, not an output format.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam

from pipeline import fileio, gristmill_version
from pipeline.outcomes import FAILED, KEPT, REJECTED
from pipeline.output_folder import FINGERPRINT_CHARS, remove_if_empty
from pipeline.spill import ChunkEncoder, rough_size
from pipeline.stages import CollectionStage, Stage

LOG = logging.getLogger("gristmill")
CHECKPOINT_VERSION = 5  # 2: compressed chunks; 3: documents carry their origin; 4: Parquet split by bytes;
# 5: only_languages and data files in the phases' fingerprints
CHUNK_RECORDS = 512  # pairs per chunk (the unit read back at once)
# A later phase's records are written in batches of at most this many, and about this many bytes
# of text (before, 4,096 records whatever their size: 4 GB a stream per worker of 1 MB pages).
FILE_RECORDS, FILE_BYTES = 4096, 16 << 20
MARKER = ".done.json"
PHASE_MARKER = f"phase{MARKER}"
MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class CheckpointSettings:
    """`--checkpoints` (auto: on for the local runner only), `--work-dir`, `--fresh`, `--keep-work`."""

    mode: str = "auto"
    work_dir: str | None = None
    fresh: bool = False
    keep_work: bool = False


def cut_phases(stages: list[Stage]) -> list[list[Stage]]:
    """Phase 0: the document stages before the first collection stage; then one phase per
    collection stage with the document stages that follow it."""
    phases: list[list[Stage]] = [[]]
    for stage in stages:
        if isinstance(stage, CollectionStage):
            phases.append([stage])
        else:
            phases[-1].append(stage)
    return phases


def _digest(value: Any) -> str:
    digest = hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
    return digest[:FINGERPRINT_CHARS]


def data_files(component) -> list[tuple[str, int, float]]:
    """(path, size, modification time) of every file a stage or generator reads besides the input."""
    found = []
    for pattern in component.data_files():
        found += [
            (path, info.size, info.modified)
            for path, info in fileio.listing(fileio.user_path(pattern)).items()
        ]
    return found


def unit_identity(unit, input_meta: dict[str, tuple[int, float]]) -> str:
    """What a phase-0 unit (an input split or a generator) is: for a split its file's path, size
    and modification time and its byte range."""
    if hasattr(unit, "path"):
        size, mtime = input_meta[unit.path]
        return f"split {unit.path} [{unit.start}, {unit.end}) size={size} mtime={mtime}"
    return f"generator {unit.name}"


@dataclass
class WorkArea:
    """The fingerprinted folders of one recipe's phases under the work directory."""

    root: str
    phases: list[list[Stage]]
    fingerprints: list[str]
    units: dict[str, Any]  # unit fingerprint → split or generator

    @classmethod
    def for_recipe(cls, recipe, root: str, units: list, input_meta: dict) -> WorkArea:
        described = recipe.resolved()
        settings = {f: v for f, v in described["input"].items() if f != "paths"}
        generators = [
            {**table, "files": data_files(generator)}
            for table, generator in zip(described["synthesis"], recipe.generators)
        ]
        # each stage as the manifest gives it (only_languages too) and the data files it reads
        stages = {
            id(stage): {**table, "files": data_files(stage)}
            for table, stage in zip(described["stages"], recipe.stages)
        }
        phases = cut_phases(recipe.stages)
        resolved = [[stages[id(s)] for s in p] for p in phases]
        # Phase 0 rejects synthesis candidates as `unverified` when no later stage verifies them.
        first = [resolved[0], recipe.verifies_candidates]
        base = _digest([CHECKPOINT_VERSION, gristmill_version(), settings, generators, *first])
        by_key = {_digest([base, unit_identity(unit, input_meta)]): unit for unit in units}
        fingerprints = [base]
        for stages in resolved[1:]:
            fingerprints.append(_digest([fingerprints[-1], sorted(by_key), stages]))
        return cls(root.rstrip("/"), phases, fingerprints, by_key)

    def folder(self, phase: int) -> str:
        return f"{self.root}/phase-{phase}-{self.fingerprints[phase]}"

    def unit_marker(self, key: str) -> str:
        return f"{self.folder(0)}/{key}{MARKER}"

    def phase_marker(self, phase: int) -> str:
        return f"{self.folder(phase)}/{PHASE_MARKER}"

    @property
    def checkpointed_phases(self) -> range:
        """Phases after 0 that write checkpoints: all but the last (its output is the output)."""
        return range(1, len(self.phases) - 1)


class ChunkWriter:
    """Streams (outcome, record) pairs into one checkpoint file; `close()` gives its entry, or None
    when nothing came (no file: Beam's S3 writer cannot complete an upload of no bytes)."""

    def __init__(self, folder: str, name: str, kind: str) -> None:
        self.folder, self.name, self.kind = folder, name, kind
        self.counts: Counter = Counter()
        self.handle = None  # opened with the first chunk
        self.sha = hashlib.sha256()
        self.size = 0
        self.buffer: list = []
        self.encode = ChunkEncoder()

    def add(self, pair: tuple[str, Any]) -> None:
        self.buffer.append(pair)
        self.counts[pair[0]] += 1
        if len(self.buffer) >= CHUNK_RECORDS:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            if self.handle is None:
                self.handle = fileio.create(f"{self.folder}/{self.name}")
            data = self.encode(self.buffer)
            self.handle.write(data)
            self.sha.update(data)
            self.size += len(data)
            self.buffer = []

    def close(self) -> dict[str, Any] | None:
        self._flush()
        if self.handle is None:
            return None
        self.handle.close()
        return {
            "kind": self.kind,
            "file": self.name,
            "bytes": self.size,
            "sha256": self.sha.hexdigest(),
            "counts": {outcome: self.counts[outcome] for outcome in (KEPT, REJECTED, FAILED)},
        }


class PairWriter:
    """Kept documents and removals of one unit or batch, in two files (a resume at a later phase
    reads only the removals of this one)."""

    def __init__(self, folder: str, prefix: str) -> None:
        self.folder = folder
        token = uuid.uuid4().hex[:12]
        self.kept = ChunkWriter(folder, f"{prefix}-{token}.kept.pkl", "kept")
        self.removed = ChunkWriter(folder, f"{prefix}-{token}.removed.pkl", "removed")

    def add(self, pair: tuple[str, Any]) -> None:
        (self.kept if pair[0] == KEPT else self.removed).add(pair)

    def close(self) -> dict[str, Any]:
        files = [entry for entry in (self.kept.close(), self.removed.close()) if entry]
        return {"files": files, "counts": total_counts(files)}


def total_counts(files: list[dict]) -> dict[str, int]:
    counts: Counter = Counter()
    for entry in files:
        counts.update(entry["counts"])
    return {outcome: counts[outcome] for outcome in (KEPT, REJECTED, FAILED)}


def write_marker(path: str, content: dict[str, Any]) -> None:
    """A completion marker, written whole (a rename locally; an object store's PUT is atomic)."""
    fileio.write_whole(path, json.dumps({"version": CHECKPOINT_VERSION, **content}, sort_keys=True).encode())


class WritePhase(beam.PTransform):
    """Tap on a phase's outputs (kept, and tuples of rejected and failed PCollections, never
    flattened): write them in batches as they stream, then the phase marker."""

    def __init__(self, work: WorkArea, phase: int) -> None:
        super().__init__(label=f"Checkpoint{phase}")
        self.folder, self.marker, self.phase = work.folder(phase), work.phase_marker(phase), phase
        self.stages = [s.name for s in work.phases[phase]]

    def expand(self, outputs):
        streams = [(KEPT, outputs.kept)]
        streams += [(REJECTED, pcoll) for pcoll in outputs.rejected]
        streams += [(FAILED, pcoll) for pcoll in outputs.failed]
        written = [
            pcoll
            | f"Pairs{index}" >> beam.Map(lambda record, outcome: (outcome, record), outcome)
            | f"Batch{index}" >> file_batches()
            | f"Write{index}" >> beam.Map(_write_batch, self.folder, "kept" if outcome == KEPT else "removed")
            for index, (outcome, pcoll) in enumerate(streams)
        ]
        return (
            tuple(written)
            | "AllFiles" >> beam.Flatten()
            | "Files" >> beam.combiners.ToList()
            | "Marker" >> beam.Map(_write_phase_marker, self.marker, self.phase, self.stages)
        )


def file_batches() -> beam.BatchElements:
    """Batches of (outcome, record) pairs, one checkpoint file each: FILE_RECORDS or FILE_BYTES at most."""
    return beam.BatchElements(
        min_batch_size=FILE_BYTES, max_batch_size=FILE_BYTES, element_size_fn=_batch_weight
    )


def _batch_weight(pair: tuple) -> int:
    """A record's share of a batch: its bytes, and at least 1/FILE_RECORDS of the batch."""
    return max(rough_size(pair[1]), FILE_BYTES // FILE_RECORDS)


def _write_batch(batch: list, folder: str, kind: str) -> dict[str, Any]:
    writer = ChunkWriter(folder, f"part-{uuid.uuid4().hex[:12]}.{kind}.pkl", kind)
    for pair in batch:
        writer.add(pair)
    return writer.close()


def _write_phase_marker(files: list[dict], path: str, phase: int, stages: list[str]) -> None:
    files = sorted(files, key=lambda entry: entry["file"])
    write_marker(path, {"phase": phase, "stages": stages, "files": files, "counts": total_counts(files)})


def needed_files(marker: dict, with_kept: bool) -> list[dict]:
    """The entries of a marker that a resume reads: removals, and kept documents if asked."""
    return [entry for entry in marker["files"] if with_kept or entry["kind"] == "removed"]


ENTRY_KEYS = frozenset({"file", "kind", "bytes", "sha256"})  # of a marker's file entry


def _load_marker(path: str) -> dict[str, Any] | None:
    """A marker's content, or None if it is missing, half-written, from another version or not a
    marker (a JSON object of the version without its files or counts was a KeyError)."""
    try:
        content = json.loads(fileio.read_bytes(path))
    except Exception:
        return None
    if not isinstance(content, dict) or content.get("version") != CHECKPOINT_VERSION:
        return None
    files, counts = content.get("files"), content.get("counts")
    if not isinstance(files, list) or not all(isinstance(e, dict) and ENTRY_KEYS <= e.keys() for e in files):
        return None
    if not isinstance(counts, dict) or not all(type(n) is int for n in counts.values()):
        return None
    return content


def _file_ok(folder: str, entry: dict[str, Any]) -> bool:
    """The file exists with the size and sha256 its marker recorded."""
    path = f"{folder}/{entry['file']}"
    try:
        if fileio.size(path) != entry["bytes"]:
            return False
        sha = hashlib.sha256()
        with fileio.open_read(path) as handle:
            while block := handle.read(1 << 22):
                sha.update(block)
        return sha.hexdigest() == entry["sha256"]
    except Exception:
        return False


@dataclass
class ResumePlan:
    """What a run reuses: finished units (phase 0 incomplete), or the files of phases 0..k."""

    work: WorkArea
    done_units: dict[str, dict] = field(default_factory=dict)  # unit key → marker
    resume_after: int = -1  # last complete phase, or -1 while phase 0 is unfinished
    phase_markers: dict[int, dict] = field(default_factory=dict)

    def restore_files(self) -> list[str]:
        """Files to read when resuming after phase k: removals of phases 0..k, kept of phase k."""
        k = self.resume_after
        files = []
        for _, marker in sorted(self.done_units.items()):
            files += [f"{self.work.folder(0)}/{e['file']}" for e in needed_files(marker, k == 0)]
        for phase in range(1, k + 1):
            marker = self.phase_markers[phase]
            files += [f"{self.work.folder(phase)}/{e['file']}" for e in needed_files(marker, phase == k)]
        return files

    def read_count(self) -> int:
        """Records read, from the phase-0 markers (when phase 0 is reused whole)."""
        return sum(sum(m["counts"].values()) for m in self.done_units.values())

    def summary(self) -> dict[str, Any]:
        reused = [0] if self.resume_after >= 0 else []
        reused += list(range(1, self.resume_after + 1))
        return {
            "work_dir": self.work.root,
            "units": len(self.work.units),
            "units_reused": len(self.done_units),
            "phases": len(self.work.phases),
            "phases_reused": [
                {"phase": p, "stages": [s.name for s in self.work.phases[p]] or ["read"]} for p in reused
            ],
            "records_reused": sum(sum(m["counts"].values()) for m in self.done_units.values()),
        }


def plan_resume(work: WorkArea) -> ResumePlan:
    """Find what the work area holds for this recipe and input; check every file that will be
    read; drop (delete) markers whose files do not check out, and plan again without them."""
    units = {key: _load_marker(work.unit_marker(key)) for key in work.units}
    phases = {p: _load_marker(work.phase_marker(p)) for p in work.checkpointed_phases}
    while True:
        done = {key: marker for key, marker in units.items() if marker}
        k = -1
        if done and len(done) == len(units):
            k = 0
            while k + 1 in phases and phases[k + 1]:
                k += 1
        plan = ResumePlan(work, done, k, {p: m for p, m in phases.items() if m and p <= k})
        bad = _unchecked(plan)
        if not bad:
            return plan
        for owner in bad:
            LOG.warning("checkpoint %s does not check out; recomputing its work", owner)
            fileio.delete([owner])
            if owner.endswith(PHASE_MARKER):
                phases[next(p for p in phases if work.phase_marker(p) == owner)] = None
            else:
                units[owner.rsplit("/", 1)[1][: -len(MARKER)]] = None


def remove_leftovers(plan: ResumePlan) -> int:
    """Delete from the work area what no resume of this recipe and input can use, and return its
    bytes: the files of unfinished attempts (an interrupted run's partial splits and phases, which
    each rerun wrote anew beside them), markers of phases after the last complete one, and the
    folders of other recipes or inputs."""
    work = plan.work
    keep = {work.unit_marker(key) for key in plan.done_units}
    keep |= {work.phase_marker(phase) for phase in plan.phase_markers}
    for marker in plan.done_units.values():
        keep |= {f"{work.folder(0)}/{entry['file']}" for entry in marker["files"]}
    for phase, marker in plan.phase_markers.items():
        keep |= {f"{work.folder(phase)}/{entry['file']}" for entry in marker["files"]}
    present = fileio.listing(f"{fileio.escape(work.root)}/phase-*/*")
    leftovers = [path for path in present if path not in keep]
    fileio.delete(leftovers)
    current = {work.folder(phase) for phase in range(len(work.phases))}
    for folder in {path.rsplit("/", 1)[0] for path in leftovers} - current:
        if fileio.is_local(folder):  # an object store's prefix goes with its last file
            remove_if_empty(folder)
    return sum(present[path].size for path in leftovers)


def _unchecked(plan: ResumePlan) -> list[str]:
    """Markers of `plan` with a file that is missing, of the wrong size or the wrong sha256."""
    work, k = plan.work, plan.resume_after
    checks: list[tuple[str, str, dict]] = []  # (marker, folder, file entry)
    for key, marker in plan.done_units.items():
        checks += [(work.unit_marker(key), work.folder(0), e) for e in needed_files(marker, k <= 0)]
    for phase, marker in plan.phase_markers.items():
        checks += [
            (work.phase_marker(phase), work.folder(phase), e) for e in needed_files(marker, phase == k)
        ]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda check: _file_ok(check[1], check[2]), checks))
    return sorted({owner for (owner, _, _), ok in zip(checks, results) if not ok})


def describe(work_root: str, resume_note: str = "") -> str:
    """One line on what a work area holds (after an interrupted or failed run), and `resume_note`
    when it holds anything."""
    markers = fileio.match(f"{fileio.escape(work_root)}/phase-*/*{MARKER}")
    units = sum(1 for m in markers if not m.endswith(PHASE_MARKER))
    phases = sum(1 for m in markers if m.endswith(PHASE_MARKER))
    if not units and not phases:  # and a --work-dir made for the run is removed with it
        return "no input split had finished, so no checkpoint was kept"
    return f"{units} finished input splits and {phases} finished later phases are checkpointed in {work_root}{resume_note}"
