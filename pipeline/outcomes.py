"""Several outputs of one step as a single PCollection of (tag, value) pairs, split by `Filter`.

Beam 2.77's DaskRunner delivers the main output's elements to the consumers of every
`with_outputs` tag, so gristmill never uses tagged outputs: a step that has several outputs
yields `(tag, value)` pairs on its one output, and `SplitByTag` separates them with one `Filter`
per tag, which every runner executes correctly.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam

from pipeline.stages import StageOutputs

KEPT = "kept"
REJECTED = "rejected"
FAILED = "failed"
OUTCOMES = (KEPT, REJECTED, FAILED)


def _has_tag(pair: tuple, tag: str) -> bool:
    return pair[0] == tag


def _value(pair: tuple):
    return pair[1]


class SplitByTag(beam.PTransform):
    """(tag, value) pairs → {tag: PCollection of values}; a pair with an unknown tag fails the run."""

    def __init__(self, tags: Sequence[str], label: str | None = None) -> None:
        super().__init__(label=label)
        self.tags = tuple(tags)

    def expand(self, pairs):
        _ = pairs | "CheckTags" >> beam.Map(_check_tag, self.tags)
        return {
            tag: pairs | f"Only_{tag}" >> beam.Filter(_has_tag, tag) | f"Values_{tag}" >> beam.Map(_value)
            for tag in self.tags
        }


def _check_tag(pair: tuple, tags: tuple[str, ...]) -> None:
    if pair[0] not in tags:
        raise ValueError(f"output tag {pair[0]!r} is not one of {list(tags)}")


class SplitOutcomes(beam.PTransform):
    """(outcome, value) pairs with outcome kept / rejected / failed → StageOutputs."""

    def expand(self, pairs) -> StageOutputs:
        split = pairs | SplitByTag(OUTCOMES)
        return StageOutputs(split[KEPT], split[REJECTED], split[FAILED])
