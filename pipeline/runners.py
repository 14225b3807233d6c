"""Runner names and what gristmill's graph does so that every runner executes all of it.

Beam 2.77's DaskRunner has three faults (reproduced in docs/upstream/dask_runner.md); gristmill
works around them in its own graph, never by patching Beam:
1. Consumers of every `with_outputs` tag receive all of the step's outputs: gristmill emits
   `(tag, value)` pairs split by `pipeline.outcomes` instead.
2. What a DoFn emits in `finish_bundle` is dropped (a bundle's results are collected before
   `finish_bundle` runs): on Dask, document stages run on batches of one document and
   `BatchElements` makes batches of one, so nothing is left to emit when a bundle ends.
3. Only the steps that the last-applied step depends on are computed: `join_branches` ends every
   branch of the graph in one last step (on every runner, so all runners run the same graph).
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.pipeline import PipelineVisitor, PTransformOverride

DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
RUNNER_ALIASES = {"DaskRunner": DASK_RUNNER}


def expand_runner_alias(beam_args: list[str]) -> list[str]:
    """`--runner=DaskRunner` (or `--runner DaskRunner`) → Beam's full class path."""
    args = list(beam_args)
    for index, arg in enumerate(args):
        if arg.startswith("--runner="):
            name = arg.split("=", 1)[1]
            args[index] = f"--runner={RUNNER_ALIASES.get(name, name)}"
        elif arg == "--runner" and index + 1 < len(args):
            args[index + 1] = RUNNER_ALIASES.get(args[index + 1], args[index + 1])
    return args


def is_dask(runner: str | None) -> bool:
    return (runner or "") in (DASK_RUNNER, "DaskRunner")


def _nothing(_element) -> tuple:
    return ()


def join_branches(pipeline: beam.Pipeline) -> None:
    """Add one last step that consumes every PCollection nothing else consumes (write steps,
    in-graph checks), so a runner that computes only what the last step needs runs them all."""

    class Leaves(PipelineVisitor):
        def __init__(self) -> None:
            self.produced: list = []
            self.consumed: set[int] = set()

        def visit_transform(self, node) -> None:
            self.consumed.update(id(value) for value in node.inputs)
            self.consumed.update(id(side.pvalue) for side in node.side_inputs)
            self.produced.extend(node.outputs.values())

    leaves = Leaves()
    pipeline.visit(leaves)
    ends = [
        leaf | f"EndOfBranch{index}" >> beam.FlatMap(_nothing)
        for index, leaf in enumerate(p for p in leaves.produced if id(p) not in leaves.consumed)
        if isinstance(leaf, beam.PCollection)
    ]
    if ends:
        _ = tuple(ends) | "AllBranches" >> beam.Flatten(pipeline=pipeline)


def _one_element_batch(element) -> list:
    return [element]


class _OneElementBatches(PTransformOverride):
    def matches(self, applied_ptransform) -> bool:
        return isinstance(applied_ptransform.transform, beam.BatchElements)

    def get_replacement_transform_for_applied_ptransform(self, applied_ptransform):
        return beam.Map(_one_element_batch)


def dask_overrides() -> list[PTransformOverride]:
    """Replacements gristmill applies to its own graph before running it on Dask (fault 2)."""
    return [_OneElementBatches()]
