"""`--runner=DaskRunner`: Beam's DaskRunner, with no step given more Dask partitions than its inputs.

Beam 2.77's DaskRunner turns a `Flatten` into `db.concat` (the sum of its inputs' partitions) and a
`GroupByKey` into a task shuffle with at least as many as its input; nothing lowers a count again,
so each join of two branches of one collection (a dedup stage's documents and decisions, a step
and its side inputs as `pipeline.runners` rewrites them) doubles the partitions below it. On
`recipes/default.toml` one step reached 37,293 partitions and the last step's graph 11.7 million
tasks (docs/upstream/dask_partitions.md). This runner translates each step as Beam does, then cuts
a bag with more partitions than its largest input back to that count (adjacent partitions
concatenated, no data shuffled): no step has more partitions than the most partitioned Create
(`--dask_npartitions`). Beam is subclassed, not patched; only this runner imports dask.
"""

from __future__ import annotations

from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.dask import dask_runner


class _NoMorePartitionsThanInputs(PipelineVisitor):
    """Beam's translation of each step, then its bag cut back to its inputs' largest count."""

    def __init__(self, translate: PipelineVisitor) -> None:
        self.translate = translate
        self.bags = translate.bags  # each step's bag, by AppliedPTransform: what run_pipeline reads

    def visit_transform(self, transform_node) -> None:
        self.translate.visit_transform(transform_node)
        counts = [
            self.bags[value.producer].npartitions
            for value in transform_node.inputs
            if value.producer in self.bags
        ]
        bag = self.bags[transform_node]
        if counts and bag.npartitions > max(counts):
            self.bags[transform_node] = bag.repartition(npartitions=max(counts))


class DaskRunner(dask_runner.DaskRunner):
    """Beam's DaskRunner whose bag graph keeps each step within its inputs' partition count."""

    @staticmethod
    def to_dask_bag_visitor(bag_kwargs=None) -> PipelineVisitor:
        return _NoMorePartitionsThanInputs(dask_runner.DaskRunner.to_dask_bag_visitor(bag_kwargs))
