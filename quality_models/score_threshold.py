"""`score_threshold`: keep documents by a score's value, a boolean expression over scores, or a top fraction.

Scorers only write `doc.scores`; this stage decides, so a threshold can change without rescoring.
Beam figures (namespace = the stage's name): the runtime's counters (`in`, `kept`, `failed`,
`rejected.<reason>`; see pipeline/beam_stages.py); in keep-fraction mode also gauge `cut_micro`
(the cut value × 10^6, rounded) and distribution `score_micro` (scores × 10^6).
Achieved fraction = kept / in.
"""

from __future__ import annotations

import math
from typing import Any

import apache_beam as beam
import xxhash
from apache_beam.metrics import Metrics
from apache_beam.transforms.stats import ApproximateQuantiles

from pipeline.beam_stages import StageDoFn, failure, sees
from pipeline.decisions import DEFAULT_PARTITIONS, key_partition, spill_dir
from pipeline.document import Document, Rejection
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitOutcomes
from pipeline.spill import SpillGroups
from pipeline.stages import CollectionStage, ConfigError, Param, StageOutputs, register
from quality_models import score_expr

DEFAULT_MIN = 0.5
# 0.1% steps; Beam's ApproximateQuantiles then guarantees rank error below 0.1% of the input.
NUM_QUANTILES = 1001


def score_of(doc: Document, key: str) -> float | None:
    """The document's finite score under `key`, or None."""
    value = doc.scores.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def rank_key(doc: Document, score: float) -> tuple[float, int]:
    """Total order for keep-fraction cuts: the score, then a seeded hash of the id to split ties."""
    return (score, xxhash.xxh64_intdigest(doc.id.encode("utf-8"), seed=0))


def cut_from_quantiles(
    quantiles: list[tuple[float, int]], count: int, keep_fraction: float
) -> tuple[float, int]:
    """The rank key of the lowest kept document: rank n - round(keep_fraction * n) of `count`.

    `quantiles` are evenly spaced over ranks 0..n-1 (first = minimum, last = maximum).
    """
    keep = round(keep_fraction * count)
    if not quantiles or keep <= 0:
        return (math.inf, 0)
    position = (count - keep) / max(count - 1, 1)
    index = round(position * (len(quantiles) - 1))
    return tuple(quantiles[min(max(index, 0), len(quantiles) - 1)])


MICRO_LIMIT = (2**63 - 1) // 10**6  # the largest value whose millionths fit Beam's int64 metric cells


def micro(value: float) -> int:
    """A value in millionths, for a metric: clamped to what one holds (a score of 10^13 raised
    OverflowError and failed the run), 0 for NaN."""
    if math.isnan(value):
        return 0
    return round(max(-MICRO_LIMIT, min(MICRO_LIMIT, value)) * 1e6)


class _Decide(StageDoFn):
    """(outcome, value) for each document; `cut` (keep-fraction mode) comes as a singleton side input.

    The cut is computed from (score, id hash) keys only, so documents stream through this one pass.
    Outcomes are counted by the runtime (`RunCollectionStage`), not here.
    """

    def __init__(self, stage: ScoreThreshold) -> None:
        super().__init__([stage])
        self.stage = stage

    def setup(self) -> None:
        super().setup()
        self.cut_gauge = Metrics.gauge(self.stage.name, "cut_micro")
        self.distribution = Metrics.distribution(self.stage.name, "score_micro")

    def process(self, doc: Document, cut: tuple[float, int] | None = None):
        if doc.kind is not None or not sees(self.stage, doc):  # a synthesis candidate or a document
            yield KEPT, doc  # outside the stage's only_languages: not thresholded, and not in the cut
            return
        try:
            reason, detail = self.stage.decide(doc, cut)
        except Exception as error:  # a malformed record: a failure with its error, never a silent drop
            yield FAILED, failure(doc, self.stage.name, error)
            return
        if cut is not None:
            self.cut_gauge.set(micro(cut[0]))
            score = score_of(doc, self.stage.score)
            if score is not None:
                self.distribution.update(micro(score))
        if reason is None:
            yield KEPT, doc
        else:
            yield REJECTED, Rejection(doc, self.stage.name, reason, detail)


class _DecideBucket:
    """`_Decide` over one spilled bucket of documents (`pipeline.spill.SpillGroups`' `then`)."""

    def __init__(self, stage: ScoreThreshold) -> None:
        self.stage = stage
        self.decide = None

    def __call__(self, _bucket: int, docs, cut: tuple[float, int]):
        if self.decide is None:
            self.decide = _Decide(self.stage)
            self.decide.setup()
        for doc in docs:
            yield from self.decide.process(doc, cut)


@register("score_threshold")
class ScoreThreshold(CollectionStage):
    """Keep documents whose score lies within [min, max], that satisfy `expr`, or the top keep_fraction.

    Absolute mode (`min`/`max`) decides per document. Expression mode keeps documents for which a
    boolean expression over scores holds (`quality >= 0.5 and embedding_quality.toxic < 0.2`;
    `and`, `or`, `not`, parentheses, < <= > >= == !=; parsed, never eval'd; its score names must be
    written by earlier stages, checked when the recipe loads). Keep-fraction mode computes the cut in
    the pipeline with approximate quantiles over (score, id hash) keys of the whole input, never the
    documents, and keeps scores above the cut (ties split by a seeded hash of the id, so the kept
    fraction holds even with many equal scores). With nothing set, keeps scores >= 0.5.
    Reasons: `score_below_min`, `score_above_max`, `expression_false`, `below_keep_fraction_cut`,
    `missing_score`.
    """

    # Synthesis candidates (and documents outside `only_languages`) pass unthresholded; the stage
    # keeps them in its own step, so that they leave it with the kept documents (no Flatten).
    handles_candidates = True
    reasons = (
        "score_below_min",
        "score_above_max",
        "expression_false",
        "below_keep_fraction_cut",
        "missing_score",
    )
    params = {
        "score": Param(str, "fasttext_quality", "name of the score to threshold (a scorer stage's name)"),
        "min": Param(float, None, "keep documents with score >= min (default 0.5 when nothing is set)"),
        "max": Param(float, None, "keep documents with score <= max"),
        "keep_fraction": Param(
            float,
            None,
            "keep this top fraction of all documents by score (exclusive with min/max)",
            min=0.0,
            max=1.0,
        ),
        "expr": Param(
            str, "", "boolean expression over scores to keep (exclusive with score/min/max/keep_fraction)"
        ),
    }

    def configure(self) -> None:
        self._expr = None
        if self.expr:
            if self.keep_fraction is not None or self.min is not None or self.max is not None:
                raise ConfigError("expr: cannot be combined with min, max or keep_fraction")
            if self.score != self.params["score"].default:  # it would be ignored
                raise ConfigError(f"expr: cannot be combined with score ({self.score!r}); name it in expr")
            try:
                self._expr = score_expr.parse(self.expr)
                self._names = score_expr.names(self._expr)
            except score_expr.ExprError as exc:
                shown = self.expr if len(self.expr) <= 200 else self.expr[:200] + " …"
                raise ConfigError(f"expr: {exc} in {shown!r}") from None
            return
        if self.keep_fraction is not None and (self.min is not None or self.max is not None):
            raise ConfigError("keep_fraction: cannot be combined with min or max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ConfigError(f"min: {self.min} is above max {self.max}")
        if self.keep_fraction is None and self.min is None and self.max is None:
            self.min = DEFAULT_MIN

    def required_scores(self) -> dict[str, list[str]]:
        """Scores earlier stages must write, by parameter (checked when the recipe loads)."""
        return {"expr": self._names} if self._expr else {"score": [self.score]}

    def decide(self, doc: Document, cut: tuple[float, int] | None) -> tuple[str | None, str]:
        """(None, "") to keep, or (reason, detail)."""
        if self._expr is not None:
            # every score it reads, whichever `and`/`or` would skip: the same verdict in any order
            for name in self._names:
                if score_of(doc, name) is None:
                    return "missing_score", f"no finite score {name!r} (got {doc.scores.get(name)!r})"
            if score_expr.evaluate(self._expr, doc.scores):
                return None, ""
            values = " ".join(f"{n}={doc.scores[n]:.4g}" for n in self._names if n in doc.scores)
            return "expression_false", f"{values}: not ({self.expr})"
        score = score_of(doc, self.score)
        if score is None:
            return "missing_score", f"no finite score {self.score!r} (got {doc.scores.get(self.score)!r})"
        if cut is not None:
            if rank_key(doc, score) < cut:
                return "below_keep_fraction_cut", f"{self.score}={score:.6g}<cut={cut[0]:.6g}"
            return None, ""
        if self.min is not None and score < self.min:
            return "score_below_min", f"{self.score}={score:.6g}<{self.min:g}"
        if self.max is not None and score > self.max:
            return "score_above_max", f"{self.score}={score:.6g}>{self.max:g}"
        return None, ""

    def expand(self, docs: Any, passthrough=None) -> StageOutputs:
        label = f"{self.name}"
        if self.keep_fraction is None:
            decided = docs | f"{label}/Decide" >> beam.ParDo(_Decide(self))
        else:
            key = self.score
            keep_fraction = self.keep_fraction
            keys = docs | f"{label}/Keys" >> beam.FlatMap(
                lambda doc: (
                    [rank_key(doc, s)]
                    if doc.kind is None and sees(self, doc) and (s := score_of(doc, key)) is not None
                    else []
                )
            )
            count = keys | f"{label}/Count" >> beam.combiners.Count.Globally()
            cut = (
                keys
                | f"{label}/Quantiles" >> ApproximateQuantiles.Globally(NUM_QUANTILES)
                | f"{label}/Cut"
                >> beam.Map(
                    cut_from_quantiles, count=beam.pvalue.AsSingleton(count), keep_fraction=keep_fraction
                )
            )
            # The documents wait for the cut in spill files, not in the runner's buffers.
            decided = (
                docs
                | f"{label}/ByIdBucket"
                >> beam.Map(lambda doc: (key_partition(doc.id, DEFAULT_PARTITIONS), doc))
                | f"{label}/Decide"
                >> SpillGroups(
                    spill_dir(docs.pipeline, label), _DecideBucket(self), beam.pvalue.AsSingleton(cut)
                )
            )
        return decided | f"{label}/Split" >> SplitOutcomes()

    def manifest_extra(self) -> dict[str, Any]:
        mode = "keep_fraction" if self.keep_fraction is not None else "expr" if self.expr else "absolute"
        return {
            "mode": mode,
            "metrics": {
                "counters": ["in", "kept", "failed", *(f"rejected.{r}" for r in self.reasons)],
                "achieved_fraction": "kept / in",
                **(
                    {"gauge": "cut_micro (cut value x 1e6)", "distribution": "score_micro"}
                    if mode == "keep_fraction"
                    else {}
                ),
            },
        }
