"""Apply a collection stage's decisions to documents that never travel through a shuffle.

A dedup stage shuffles only compact keys (ids, hashes, survivor order) and produces decisions:
(join key, decision) pairs, or `DecisionChunk`s (many pairs of one partition as one element, for a
stage that makes many decisions per document). `ApplyDecisions` joins them back to the documents:

1. spill: each worker writes the documents it holds once, into files partitioned by a hash of
   the join key (`<spill dir>/k<partition>-<uuid>.pkl`, `pipeline.spill`, streams of pickled chunks, written
   through Beam's FileSystems, so the spill directory may be gs:// or s3://), and emits
   (partition, file) when it opens a file (closed when its bundle ends);
2. join: the decisions are spilled the same way, by the partition of their key, and only the
   file names are grouped by partition (one marker per partition, so every partition is joined):
   the local runner holds every shuffle in its driver process, and a stage such as `unit_dedup`
   makes a decision per removed unit (millions). The GroupByKey starts each partition only after
   every spill bundle has finished, so each partition reads back exactly the files it was sent
   and applies its own decisions: no worker holds more than one partition's decisions and no
   shuffle ever holds a document or a decision. The files are deleted after, except on Dask, which may run a
   join twice over the same files (pipeline/runners.py, fault 4); the run's staging folder,
   which holds them, is deleted at the end of the run.

Documents the stage must not look at (synthesis candidates, for a stage that does not handle
them) come as a third input, `passthrough`: they are spilled the same way and the join emits them
unchanged among the kept. Rejoining them with a Flatten instead would make Beam's local runner hold
every kept document in memory (it materializes the output of every multi-input Flatten).

The stage's `apply(doc, decisions, occurrence)` turns one document and the decisions of its key
(a list; `occurrence` counts earlier documents with the same key in the partition, for identical
copies) into `(outcome, value)` pairs, which `pipeline.outcomes.SplitOutcomes` separates.

The spill directory is the pipeline option `--spill_dir` (a recipe run sets it inside its
staging folder); without it, a fresh local temporary directory that the process which made it
removes when it exits.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import apache_beam as beam
import xxhash
from apache_beam.options.pipeline_options import PipelineOptions

from pipeline import fileio
from pipeline.document import Document
from pipeline.outcomes import KEPT, SplitOutcomes
from pipeline.runners import reruns_steps
from pipeline.spill import SpillByKeyFn, read_values

# Everything keyed by partition declares this type, so the markers, decisions and spill file names
# grouped together use the same key coder (with inferred types an int key could be pickled).
PartitionKeyed = tuple[int, Any]
DEFAULT_PARTITIONS = 64

Apply = Callable[[Document, list, int], Iterable[tuple[str, Any]]]


class SpillOptions(PipelineOptions):
    """`--spill_dir`: where collection stages spill documents while their decisions are computed."""

    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        parser.add_argument(
            "--spill_dir",
            default=None,
            help="folder (local, gs://, s3://) for documents spilled by dedup stages and output writers "
            "(default: the output's staging folder; this machine's temporary folder for an object-store "
            "output on the local runner)",
        )


def content_key(doc: Document) -> str:
    """A join key that tells apart documents sharing an id: a run's documents have an origin, so
    their `unique_id`; a document made outside a run's reading, its id, then hashes of the text and
    of every other field (identical copies share it, and either may stand for the other)."""
    if doc.origin:
        return doc.unique_id
    rest = json.dumps(
        [doc.source, doc.url, doc.language, doc.language_score, doc.scores, doc.kind, doc.metadata],
        sort_keys=True,
        default=str,
    )
    text = xxhash.xxh3_64_hexdigest(doc.text.encode("utf-8", "surrogatepass"))
    return f"{doc.id}\x00{text}{xxhash.xxh3_64_hexdigest(rest.encode('utf-8', 'surrogatepass'))}"


def key_partition(key: str, partitions: int) -> int:
    """The partition of a join key (seedless xxh64: the same on every worker)."""
    return xxhash.xxh64_intdigest(key.encode("utf-8", "surrogatepass")) % partitions


def spill_dir(pipeline, stage: str) -> str:
    """This stage's spill folder: `--spill_dir`/<stage>-<token>, else a new temporary folder,
    removed when this process exits (the local runner's workers are done with it by then)."""
    root = pipeline.options.view_as(SpillOptions).spill_dir if pipeline.options else None
    if not root:
        folder = tempfile.mkdtemp(prefix=f"gristmill-spill-{stage}-")
        atexit.register(shutil.rmtree, folder, True)
        return folder
    return f"{root.rstrip('/')}/{stage}-{uuid.uuid4().hex[:12]}"


def decision_inputs(docs, decisions, passthrough=None) -> tuple:
    """`ApplyDecisions`' input: (docs, decisions[, passthrough]); Beam refuses a None input."""
    return (docs, decisions) if passthrough is None else (docs, decisions, passthrough)


class Passthrough(NamedTuple):
    """A spill file of documents the join emits unchanged (`ApplyDecisions`' passthrough)."""

    path: str


class DecisionFile(NamedTuple):
    """A spill file of one partition's decisions (what `DecisionsByPartition` made, not shuffled)."""

    path: str


class DecisionChunk(NamedTuple):
    """Decisions of one partition as one element: (join key, decision) pairs whose keys all lie in
    `partition` (`key_partition`), for a stage that makes many decisions per document."""

    partition: int
    decisions: list


class _JoinFn(beam.DoFn):
    """One partition, its decisions and its spill files: stream the files' documents and apply
    each one's decisions (then delete the files, if `delete`)."""

    def __init__(self, key: Callable[[Document], str], apply: Apply, delete: bool) -> None:
        self.key, self.apply, self.delete = key, apply, delete

    def process(self, item: tuple[int, Iterable]):
        _partition, values = item
        paths: list[str] = []
        passthrough: list[str] = []
        decision_files: list[str] = []
        for value in values:
            if isinstance(value, str):  # a spill file of this partition's documents
                paths.append(value)
            elif isinstance(value, Passthrough):
                passthrough.append(value.path)
            elif isinstance(value, DecisionFile):
                decision_files.append(value.path)
            # else None: the partition's marker, so every partition is joined
        decision_files.sort()
        by_key: dict[str, list] = defaultdict(list)
        for decision_value in (value for path in decision_files for value in read_values(path)):
            pairs = (
                decision_value.decisions if isinstance(decision_value, DecisionChunk) else [decision_value]
            )
            for doc_key, decision in pairs:
                by_key[doc_key].append(decision)
        paths.sort()
        seen: dict[str, int] = defaultdict(int)
        for path in paths:
            for doc in read_values(path):
                doc_key = self.key(doc)
                found = by_key.get(doc_key)
                if found is None:
                    yield from self.apply(doc, [], 0)
                    continue
                yield from self.apply(doc, found, seen[doc_key])
                seen[doc_key] += 1
        for path in sorted(passthrough):
            yield from ((KEPT, doc) for doc in read_values(path))
        if self.delete and (paths or passthrough or decision_files):
            fileio.delete(paths + passthrough + decision_files)


class ApplyDecisions(beam.PTransform):
    """(documents, decisions keyed by join key (or `DecisionChunk`s): a PCollection or a tuple of
    them[, passthrough documents]) → StageOutputs, documents spilled, not shuffled; passthrough
    documents (None: none) come out kept, unchanged."""

    def __init__(self, stage: str, key: Callable[[Document], str], apply: Apply, partitions: int) -> None:
        super().__init__()
        self.stage, self.key, self.apply, self.partitions = stage, key, apply, partitions

    def expand(self, inputs):
        docs, decisions, passthrough = inputs if len(inputs) == 3 else (*inputs, None)
        parts = self.partitions
        directory = spill_dir(docs.pipeline, self.stage)
        spilled = (
            docs
            | "Partition" >> beam.Map(lambda doc: (key_partition(self.key(doc), parts), doc))
            | "Spill" >> beam.ParDo(SpillByKeyFn(directory)).with_output_types(PartitionKeyed)
        )
        files = [spilled]
        if passthrough is not None:
            files.append(
                passthrough
                | "PassthroughPartition" >> beam.Map(lambda doc: (key_partition(self.key(doc), parts), doc))
                | "SpillPassthrough" >> beam.ParDo(SpillByKeyFn(f"{directory}/passthrough"))
                | "MarkPassthrough"
                >> beam.MapTuple(lambda part, path: (part, Passthrough(path))).with_output_types(
                    PartitionKeyed
                )
            )
        # Each PCollection of decisions is spilled where it is made: a Flatten of several would be
        # held in memory by the local runner.
        for index, made in enumerate(decisions if isinstance(decisions, tuple) else (decisions,)):
            files.append(
                made
                | f"DecisionsByPartition{index}"
                >> beam.Map(
                    lambda kv: (
                        (kv.partition, kv)
                        if isinstance(kv, DecisionChunk)
                        else (key_partition(kv[0], parts), kv)
                    )
                ).with_output_types(PartitionKeyed)
                | f"SpillDecisions{index}" >> beam.ParDo(SpillByKeyFn(f"{directory}/decisions"))
                | f"MarkDecisions{index}"
                >> beam.MapTuple(lambda part, path: (part, DecisionFile(path))).with_output_types(
                    PartitionKeyed
                )
            )
        markers = docs.pipeline | "Partitions" >> beam.Create(
            [(partition, None) for partition in range(parts)]
        ).with_output_types(PartitionKeyed)
        return (
            (markers, *files)
            | "AllDecisions" >> beam.Flatten()
            | "DecisionsOfPartition" >> beam.GroupByKey()
            | "Join" >> beam.ParDo(_JoinFn(self.key, self.apply, delete=not reruns_steps(docs.pipeline)))
            | SplitOutcomes()
        )
