"""Beam wrappers that run stages: fused batched document stages, and collection stages.

Consecutive `DocumentStage`s run in one `ParDo` over batches of documents, so Beam's per-element
overhead is paid once per batch and the stages share each document's cached analysis. Counters
per stage: `in`, `kept`, `failed`, `rejected.<reason>`, and `micros` (time spent in the stage).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from pipeline.document import Document, Failure, Rejection
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag, SplitOutcomes
from pipeline.stages import CollectionStage, DocumentStage, Stage, StageOutputs


def _failure(doc: Document, stage: str, error: BaseException) -> Failure:
    message = " ".join(str(error).split())[:1000] or type(error).__name__
    return Failure(doc.id, doc.source, stage, type(error).__name__, message)


def run_stage_on_batch(stage: DocumentStage, docs: list[Document]) -> tuple[list[Document], list, Counter]:
    """Apply one stage to a batch: (kept, rejections and failures, counts by outcome).

    A batch-level exception is retried document by document, so one bad document becomes one
    failure instead of failing its neighbours.
    """
    counts: Counter = Counter()
    eligible = [d for d in docs if d.kind is None or stage.handles_candidates]
    if len(eligible) == len(docs):
        bypass: list[Document] = []
    else:
        bypass = [d for d in docs if not (d.kind is None or stage.handles_candidates)]
    counts["in"] = len(eligible)
    try:
        verdicts = stage.check_batch(eligible)
        if len(verdicts) != len(eligible):
            raise RuntimeError(f"check_batch returned {len(verdicts)} verdicts for {len(eligible)} documents")
        pairs = list(zip(eligible, verdicts))
    except Exception:  # isolate the failing document(s)
        pairs = []
        for doc in eligible:
            try:
                pairs.append((doc, stage.check(doc)))
            except Exception as error:
                pairs.append((doc, _failure(doc, stage.name, error)))
    kept, removed = [], []
    for doc, verdict in pairs:
        if isinstance(verdict, Failure):
            removed.append(verdict)
            counts["failed"] += 1
        elif verdict.keep:
            kept.append(verdict.doc or doc)
        else:
            removed.append(
                Rejection(verdict.doc or doc, stage.name, verdict.reason or "rejected", verdict.detail or "")
            )
            counts[f"rejected.{verdict.reason}"] += 1
    counts["kept"] = len(kept)
    return kept + bypass, removed, counts


class _DocumentStagesFn(beam.DoFn):
    """Runs a chain of document stages over buffered batches of documents."""

    def __init__(self, stages: list[DocumentStage], batch_size: int) -> None:
        self.stages = stages
        self.batch_size = batch_size

    def setup(self) -> None:
        for stage in self.stages:
            stage.setup()
        self._counters: dict[tuple[str, str], object] = {}

    def start_bundle(self) -> None:
        self._buffer: list[Document] = []

    def _count(self, stage: str, name: str, value: int) -> None:
        key = (stage, name)
        counter = self._counters.get(key)
        if counter is None:
            counter = self._counters[key] = Metrics.counter(stage, name)
        counter.inc(value)

    def _flush(self) -> Iterator:
        docs, self._buffer = self._buffer, []
        for stage in self.stages:
            if not docs:
                break
            started = time.perf_counter()
            docs, removed, counts = run_stage_on_batch(stage, docs)
            self._count(stage.name, "micros", int((time.perf_counter() - started) * 1e6))
            for name, value in counts.items():
                self._count(stage.name, name, value)
            for record in removed:
                if isinstance(record, Rejection):
                    record.doc.without_cache()
                    yield REJECTED, record
                else:
                    yield FAILED, record
        for doc in docs:
            yield KEPT, doc.without_cache()

    def process(self, doc: Document) -> Iterator:
        self._buffer.append(doc)
        if len(self._buffer) >= self.batch_size:
            yield from self._flush()

    def finish_bundle(self) -> Iterator:
        for output in self._flush():
            yield WindowedValue(output, 0, [GlobalWindow()])


class RunDocumentStages(beam.PTransform):
    """Composite: a fused chain of document stages → StageOutputs."""

    def __init__(self, stages: list[DocumentStage], batch_size: int = 256) -> None:
        super().__init__(label="+".join(stage.name for stage in stages))
        self.stages = stages
        self.batch_size = batch_size

    def expand(self, docs):
        return (
            docs
            | "Run" >> beam.ParDo(_DocumentStagesFn(self.stages, self.batch_size))
            | "Outcomes" >> SplitOutcomes()
        )


class LostElements(RuntimeError):
    """A stage's accounting inside the graph does not add up (documents in vs. out, or a stage's
    own intermediate counts): elements were lost or duplicated by the stage or the runner."""


class RunCollectionStage(beam.PTransform):
    """Composite: a collection stage, with synthesis candidates routed around it if it ignores them.

    Inside the graph, the stage's input is counted against its kept + rejected + failed outputs;
    a mismatch fails the run with `LostElements` naming the stage, so a document lost
    between shuffles (by the stage or by the runner) never passes silently.
    """

    def __init__(self, stage: CollectionStage) -> None:
        super().__init__(label=stage.name)
        self.stage = stage

    def expand(self, docs):
        if self.stage.handles_candidates:
            candidates, regular = None, docs
        else:
            split = (
                docs
                | "TagCandidates"
                >> beam.Map(lambda doc: ("regular" if doc.kind is None else "candidate", doc))
                | "SplitCandidates" >> SplitByTag(["candidate", "regular"])
            )
            candidates, regular = split["candidate"], split["regular"]
        outputs = self.stage.expand(regular)
        _check_conservation(self.stage.name, regular, outputs)
        if candidates is None:
            return outputs
        kept = (outputs.kept, candidates) | "RejoinCandidates" >> beam.Flatten()
        return StageOutputs(kept, outputs.rejected, outputs.failed)


def count_as_side_input(pcoll, label: str):
    """The number of elements of `pcoll`, as a singleton side input (for in-graph checks)."""
    return beam.pvalue.AsSingleton(pcoll | label >> beam.combiners.Count.Globally())


def _check_conservation(name: str, docs, outputs: StageOutputs) -> None:
    _ = (
        docs
        | "CountIn" >> beam.combiners.Count.Globally()
        | "CheckConservation"
        >> beam.Map(
            _assert_conserved,
            name,
            count_as_side_input(outputs.kept, "CountKept"),
            count_as_side_input(outputs.rejected, "CountRejected"),
            count_as_side_input(outputs.failed, "CountFailed"),
        )
    )


def _assert_conserved(read: int, name: str, kept: int, rejected: int, failed: int) -> None:
    if read != kept + rejected + failed:
        raise LostElements(
            f"stage {name}: {read} documents in, but {kept} kept + {rejected} rejected + {failed} failed "
            f"= {kept + rejected + failed} out; the run is stopped rather than publish incomplete output "
            "(a stage or runner bug; please report it with the recipe and the runner used)"
        )


def group_stages(stages: Iterable[Stage]) -> list[list[Stage]]:
    """Consecutive document stages form one group; each collection stage is its own group."""
    groups: list[list[Stage]] = []
    for stage in stages:
        if isinstance(stage, DocumentStage) and groups and isinstance(groups[-1][-1], DocumentStage):
            groups[-1].append(stage)
        else:
            groups.append([stage])
    return groups


class ApplyStages(beam.PTransform):
    """All recipe stages in order → StageOutputs with every rejection and failure flattened."""

    def __init__(self, stages: list[Stage], batch_size: int = 256) -> None:
        super().__init__()
        self.stages = stages
        self.batch_size = batch_size

    def expand(self, docs):
        rejected, failed = [], []
        for group in group_stages(self.stages):
            if isinstance(group[0], DocumentStage):
                outputs = docs | RunDocumentStages(group, self.batch_size)
            else:
                outputs = docs | RunCollectionStage(group[0])
            docs = outputs.kept
            rejected.append(outputs.rejected)
            failed.append(outputs.failed)
        pipeline = docs.pipeline
        return StageOutputs(
            docs,
            tuple(rejected) | "AllRejected" >> beam.Flatten(pipeline=pipeline),
            tuple(failed) | "AllFailed" >> beam.Flatten(pipeline=pipeline),
        )
