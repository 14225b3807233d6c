"""`--runner=DaskRunner`: Beam's DaskRunner, with no step given more Dask partitions than its inputs,
each ParDo task collecting its own outputs, and the graph run unfused.

Partitions (fault 5 in pipeline/runners.py): Beam 2.77's DaskRunner turns a `Flatten` into
`db.concat` (the sum of its inputs' partitions) and a `GroupByKey` into a task shuffle with at
least as many as its input; nothing lowers a count again, so each join of two branches of one
collection (a dedup stage's documents and decisions, a step and its side inputs as
`pipeline.runners` rewrites them) doubles the partitions below it. On `recipes/default.toml` one
step reached 37,293 partitions and the last step's graph 11.7 million tasks
(docs/upstream/dask_partitions.md). This runner translates each step as Beam does, then cuts a bag
with more partitions than its largest input back to that count (adjacent partitions concatenated,
no data shuffled): no step has more partitions than the most partitioned Create
(`--dask_npartitions`).

Outputs (fault 6): Beam's ParDo translation gives every partition of a step the same receiver
object, whose one list collects what the DoFn emits; where tasks share deserialized arguments (an
in-process cluster, a worker given several tasks at once) each partition returns the outputs of
the partitions before it too: elements duplicated, a global combine given several values
(docs/upstream/dask_shared_receivers.md). Here a ParDo without side inputs runs Beam's own
`apply_dofn_to_bundle` with receivers made inside its task.

Graph (fault 7): Beam's `run_pipeline` computes `dask.optimize(last bag)`, whose linear-chain
fusion renames each fused chain to its task names joined and, past 115 characters, cut there with
a 3-4 hex-digit suffix of Python's per-process `hash()`: two chains with the same first 115
characters (the joins of the global counts behind every conservation check are alike) collide
about once in ten runs of recipes/default.toml, and one chain's consumers get the other's output
(a count of 0, a list where a count was due: docs/upstream/dask_fused_keys.md). This runner
computes the bag graph as built, unfused. Beam is subclassed, not patched; only this runner
imports dask.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.common import DoFnContext, DoFnSignature
from apache_beam.runners.dask import dask_runner
from apache_beam.runners.dask import transform_evaluator as evaluator
from apache_beam.runners.runner import PipelineState

from pipeline import fileio


def _run_bundle(items, signature: DoFnSignature, window_fn, invoker_kwargs: dict, options) -> list:
    """One partition through Beam's `apply_dofn_to_bundle`, with receivers of its own, its
    filesystems configured by the run's options."""
    from apache_beam.runners.common import _OutputHandler  # what Beam's translation builds

    if options is not None:  # Beam's runner gives its workers none: S3 endpoint and keys were lost
        fileio.set_options(options)
    receivers = evaluator.OneReceiver()
    handler = _OutputHandler(
        window_fn=window_fn,
        main_receivers=receivers[None],
        tagged_receivers=receivers,
        per_element_output_counter=None,
        output_batch_converter=None,
        process_yields_batches=False,
        process_batch_yields_elements=False,
    )
    return evaluator.apply_dofn_to_bundle(items, [signature, handler], invoker_kwargs, receivers)


def _pardo_bag(node, input_bag, options):
    """Beam's ParDo translation (transform_evaluator.ParDo.apply, no side inputs), receivers per
    task; `options` (the run's) go to the task for the filesystems."""
    transform = node.transform
    args, kwargs = transform.raw_side_inputs
    main = next(iter(node.main_inputs.values()))
    window_fn = main.windowing.windowfn if hasattr(main, "windowing") else None
    invoker_kwargs = dict(
        context=DoFnContext(transform.label, state=None),
        side_inputs=None,
        input_args=list(args),
        input_kwargs=kwargs,
        user_state_context=None,
        bundle_finalizer_param=beam.DoFn.BundleFinalizerParam(),
    )
    return input_bag.map(evaluator.get_windowed_value, window_fn).map_partitions(
        _run_bundle, DoFnSignature(transform.fn), window_fn, invoker_kwargs, options
    )


class _NoMorePartitionsThanInputs(PipelineVisitor):
    """Beam's translation of each step (a ParDo's with receivers per task), then its bag cut
    back to its inputs' largest count."""

    def __init__(self, translate: PipelineVisitor, options: PipelineOptions | None) -> None:
        self.translate = translate
        self.options = options
        self.bags = translate.bags  # each step's bag, by AppliedPTransform: what run_pipeline reads

    def visit_transform(self, transform_node) -> None:
        inputs = [self.bags[v.producer] for v in transform_node.inputs if v.producer in self.bags]
        if (
            type(transform_node.transform) is beam.ParDo
            and not transform_node.side_inputs
            and len(inputs) == 1
        ):
            self.bags[transform_node] = _pardo_bag(transform_node, inputs[0], self.options)
        else:  # with side inputs (gristmill rewrites those into joins on Dask): Beam's translation
            self.translate.visit_transform(transform_node)
        counts = [bag.npartitions for bag in inputs]
        bag = self.bags[transform_node]
        if counts and bag.npartitions > max(counts):
            self.bags[transform_node] = bag.repartition(npartitions=max(counts))


class _Result(dask_runner.DaskRunnerResult):
    """Beam's result, which never closes its client: closed here once the run has ended, so the
    local cluster a client without an address starts stops with it. Beam's says DONE when the
    scheduler went away and the final tasks were cancelled: that is a failure here (before, the
    run failed later on a missing bookkeeping file, never naming the cluster)."""

    def wait_until_finish(self, duration=None) -> str:
        try:
            state = super().wait_until_finish(duration)
            unfinished = [future for future in self.futures if future.status != "finished"]
            if duration is None and unfinished:
                self._state = PipelineState.FAILED
                raise RuntimeError(
                    f"the Dask cluster lost the run: {len(unfinished)} of its {len(self.futures)} final "
                    f"tasks ended {unfinished[0].status!r}, not finished (was the scheduler stopped?)"
                )
            return state
        finally:
            if duration is None:  # ended (done, failed or interrupted), not merely waited on
                self.client.close()


class DaskRunner(dask_runner.DaskRunner):
    """Beam's DaskRunner whose bag graph keeps each step within its inputs' partition count, gives
    each ParDo task its own receivers, and is computed without fusing (faults 5-7)."""

    @staticmethod
    def to_dask_bag_visitor(bag_kwargs=None, options: PipelineOptions | None = None) -> PipelineVisitor:
        translate = dask_runner.DaskRunner.to_dask_bag_visitor(bag_kwargs)
        return _NoMorePartitionsThanInputs(translate, options)

    def run_pipeline(self, pipeline, options):
        """Beam's `run_pipeline`, with the last bag computed unoptimized: no fused chain renamed."""
        import dask.distributed as ddist
        from apache_beam.runners.dask.overrides import dask_overrides

        dask_options = options.view_as(dask_runner.DaskOptions).get_all_options(
            drop_default=True, current_only=True
        )
        bag_kwargs = dask_runner.DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        threads = sum(client.nthreads().values())
        # Beam's default, 128 elements a partition, ran a run of < 129 input splits on one thread.
        if not bag_kwargs and threads:
            bag_kwargs = {"npartitions": threads}
        pipeline.replace_all(dask_overrides())
        visitor = self.to_dask_bag_visitor(bag_kwargs, options)
        pipeline.visit(visitor)
        last = list(visitor.bags.values())[-1]
        return _Result(client, [client.compute(last, optimize_graph=False)])
