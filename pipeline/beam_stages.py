"""The one stage runtime: how every stage runs in Beam, with one counter vocabulary.

Consecutive `DocumentStage`s run fused in one `ParDo` over `BatchElements` batches, so Beam's
per-element overhead is paid once per batch and the stages share each document's cached
analysis. A collection stage builds its own composite; the runtime counts its outputs and checks
its conservation. Every stage, of either kind, gets these counters in its own namespace:

- `in`: documents given to the stage (synthesis candidates that bypass it are not counted, nor
  documents outside its `only_languages`, which `other_language` counts);
- `kept`, `failed`, `rejected.<reason>`: its outcomes (`in = kept + failed + Σ rejected.*`);
- `micros`: time spent deciding (document stages only; a collection stage spans shuffles).

A failure record is always `failure(doc, stage, error)`: the error class and a clean one-line
message. `setup()` runs once per DoFn instance before any document, `teardown()` in
`DoFn.teardown`; collection stages' own DoFns derive from `StageDoFn` for the same guarantee.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipeline.document import Document, Failure, Rejection
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag, SplitOutcomes
from pipeline.stages import CollectionStage, DocumentStage, Stage, StageOutputs

MAX_MESSAGE_CHARS = 1000


def clean_message(error: BaseException) -> str:
    """`error`'s message on one line (whitespace collapsed, capped), or its class name if empty."""
    return " ".join(str(error).split())[:MAX_MESSAGE_CHARS] or type(error).__name__


def failure(doc: Document, stage: str, error: BaseException) -> Failure:
    """The failure record of `doc` in `stage`: error class and clean one-line message."""
    return Failure(doc.id, doc.source, stage, type(error).__name__, clean_message(error))


def count(stage: str, name: str, value: int = 1) -> None:
    """Add `value` to the counter `name` (from the vocabulary above) of `stage`."""
    if value:
        Metrics.counter(stage, name).inc(value)


def outcome_counter(record) -> str:
    """The counter name one outcome record adds to: kept, failed or rejected.<reason>."""
    if isinstance(record, Rejection):
        return f"rejected.{record.reason}"
    return "failed" if isinstance(record, Failure) else "kept"


def sees(stage: Stage, doc: Document) -> bool:
    """Whether `doc` goes through `stage` rather than around it: synthesis candidates bypass stages
    that do not handle them, documents outside a stage's `only_languages` bypass it."""
    return (doc.kind is None or stage.handles_candidates) and (
        stage.only_languages is None or doc.language in stage.only_languages
    )


def _check_each(stage: DocumentStage, docs: list[Document]) -> list:
    """Per-document retry: each document alone, so one bad document fails only itself. Documents
    are immutable, so each is retried exactly as it entered the stage."""
    verdicts = []
    for doc in docs:
        try:
            verdicts.append(stage.check(doc))
        except Exception as error:
            verdicts.append(failure(doc, stage.name, error))
    return verdicts


def run_stage_on_batch(stage: DocumentStage, docs: list[Document]) -> tuple[list[Document], list, Counter]:
    """Apply one stage to a batch: (kept, rejections and failures, counts by outcome).

    A batch-level exception (or a wrong number of verdicts) is retried document by document.
    """
    counts: Counter = Counter()
    eligible = [d for d in docs if sees(stage, d)]
    bypass = [] if len(eligible) == len(docs) else [d for d in docs if not sees(stage, d)]
    counts["other_language"] = sum(d.kind is None for d in bypass)
    counts["in"] = len(eligible)
    try:
        verdicts = stage.check_batch(eligible)
        if len(verdicts) != len(eligible):
            raise RuntimeError(f"check_batch returned {len(verdicts)} verdicts for {len(eligible)} documents")
    except Exception:
        verdicts = _check_each(stage, eligible)
    kept, removed = [], []
    for doc, verdict in zip(eligible, verdicts):
        if isinstance(verdict, Failure):
            removed.append(verdict)
        elif verdict.keep:
            kept.append(verdict.doc or doc)
        else:
            reason = verdict.reason or "rejected"
            removed.append(Rejection(verdict.doc or doc, stage.name, reason, verdict.detail or ""))
    counts.update(outcome_counter(record) for record in removed)
    counts["kept"] = len(kept)
    return kept + bypass, removed, counts


class StageDoFn(beam.DoFn):
    """A DoFn that runs stages: `setup()` before the first element, `teardown()` at the end."""

    def __init__(self, stages: list[Stage]) -> None:
        self.stages = stages

    def setup(self) -> None:
        for stage in self.stages:
            stage.setup()

    def teardown(self) -> None:
        for stage in self.stages:
            stage.teardown()


def run_document_stages(stages: list[DocumentStage], batch: list[Document]) -> Iterator[tuple[str, object]]:
    """A chain of document stages over one batch: (outcome, record) pairs, counted per stage."""
    docs = batch
    for stage in stages:
        if not docs:
            break
        started = time.perf_counter()
        docs, removed, counts = run_stage_on_batch(stage, docs)
        counts["micros"] = int((time.perf_counter() - started) * 1e6)
        for name, value in counts.items():
            count(stage.name, name, value)
        for record in removed:
            if isinstance(record, Rejection):
                record.doc.without_cache()
                yield REJECTED, record
            else:
                yield FAILED, record
    for doc in docs:
        yield KEPT, doc.without_cache()


class _DocumentStagesFn(StageDoFn):
    """Runs a chain of document stages over one batch; yields (outcome, record) pairs."""

    def process(self, batch: list[Document]) -> Iterator[tuple[str, object]]:
        yield from run_document_stages(self.stages, batch)


class RunDocumentStages(beam.PTransform):
    """Composite: a fused chain of document stages → StageOutputs."""

    def __init__(self, stages: list[DocumentStage], batch_size: int = 256) -> None:
        super().__init__(label="+".join(stage.name for stage in stages))
        self.stages = stages
        self.batch_size = batch_size

    def expand(self, docs):
        return (
            docs
            | "Batch" >> beam.BatchElements(min_batch_size=self.batch_size, max_batch_size=self.batch_size)
            | "Run" >> beam.ParDo(_DocumentStagesFn(self.stages))
            | "Split" >> SplitOutcomes()
        )


class LostElements(RuntimeError):
    """A stage's accounting inside the graph does not add up (documents in vs. out, or a stage's
    own intermediate counts): elements were lost or duplicated by the stage or the runner."""


class RunCollectionStage(beam.PTransform):
    """Composite: a collection stage, with the documents it does not see (`sees`) passed through it.

    The runtime counts the stage's input and outcomes (the vocabulary above), and checks inside
    the graph that input = kept + rejected + failed; a mismatch fails the run with
    `LostElements` naming the stage, so a document lost between shuffles never passes silently.
    """

    def __init__(self, stage: CollectionStage) -> None:
        super().__init__(label=stage.name)
        self.stage = stage

    def expand(self, docs):
        stage, name = self.stage, self.stage.name
        if stage.handles_candidates:  # it passes through itself what it does not see
            passthrough, regular = None, docs
        else:
            split = (
                docs
                | "TagPassthrough"
                >> beam.Map(lambda doc: ("regular" if sees(stage, doc) else "passthrough", doc))
                | "SplitPassthrough" >> SplitByTag(["passthrough", "regular"])
            )
            passthrough, regular = split["passthrough"], split["regular"]
        outputs = stage.expand(regular, passthrough)
        _ = docs | "CountIn" >> beam.Map(_count_in, stage)
        _ = outputs.kept | "CountKeptOutcomes" >> beam.Map(_count_kept, stage)
        for label, pcoll in zip(("Rejected", "Failed"), outputs[1:]):
            _ = pcoll | f"Count{label}Outcomes" >> beam.Map(lambda r, n: count(n, outcome_counter(r)), name)
        _check_conservation(name, docs, outputs)  # documents passed through included
        return outputs


def _count_in(doc: Document, stage: CollectionStage) -> None:
    """Count a document the stage sees as `in`, one outside its languages as `other_language`."""
    if sees(stage, doc):
        count(stage.name, "in")
    elif doc.kind is None:
        count(stage.name, "other_language")


def _count_kept(doc: Document, stage: CollectionStage) -> None:
    """Count a kept document, unless the stage passed it through (as document stages do)."""
    if sees(stage, doc):
        count(stage.name, "kept")


def count_as_side_input(pcoll, label: str):
    """The number of elements of `pcoll`, as a singleton side input (for in-graph checks)."""
    return beam.pvalue.AsSingleton(pcoll | label >> beam.combiners.Count.Globally())


def _check_conservation(name: str, docs, outputs: StageOutputs) -> None:
    _ = (
        docs
        | "CountRead" >> beam.combiners.Count.Globally()
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

    def __init__(
        self, stages: list[Stage], batch_size: int = 256, on_group_output=None, flatten: bool = True
    ) -> None:
        super().__init__()
        self.stages = stages
        self.batch_size = batch_size
        self.on_group_output = on_group_output  # (StageOutputs, last stage name): progress taps
        # False: rejected and failed stay tuples of PCollections, one per stage group (a
        # multi-input Flatten is held in memory by Beam's local runner; the writers take tuples).
        self.flatten = flatten

    def expand(self, docs):
        rejected, failed = [], []
        for group in group_stages(self.stages):
            if isinstance(group[0], DocumentStage):
                outputs = docs | RunDocumentStages(group, self.batch_size)
            else:
                outputs = docs | RunCollectionStage(group[0])
            docs = outputs.kept
            if self.on_group_output:
                self.on_group_output(outputs, group[-1].name)
            rejected.append(outputs.rejected)
            failed.append(outputs.failed)
        pipeline = docs.pipeline
        if not self.flatten:
            return StageOutputs(docs, tuple(rejected), tuple(failed))
        return StageOutputs(
            docs,
            tuple(rejected) | "AllRejected" >> beam.Flatten(pipeline=pipeline),
            tuple(failed) | "AllFailed" >> beam.Flatten(pipeline=pipeline),
        )
