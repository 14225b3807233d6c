"""Runner names and what gristmill's graph does so that every runner executes all of it.

Beam 2.77's DaskRunner (with dask 2026.8) has seven faults (reproduced in docs/upstream/dask_*.md); gristmill works
around them in its own graph or in a subclass of the runner, never by patching Beam:
1. Consumers of every `with_outputs` tag receive all of the step's outputs: gristmill emits
   `(tag, value)` pairs split by `pipeline.outcomes` instead.
2. What a DoFn emits in `finish_bundle` is dropped (a bundle's results are collected before
   `finish_bundle` runs): on Dask, document stages run on batches of one document,
   `BatchElements` makes batches of one, so nothing is left to emit when a bundle ends, and
   `Top.Of` (whose per-bundle tops are emitted there: an empty list on Dask) becomes the
   equivalent `CombineGlobally(TopCombineFn)`.
3. Only the steps that the last-applied step depends on are computed: `join_branches` ends every
   branch of the graph in one last step (on every runner, so all runners run the same graph).
4. A side input is computed inside each task that reads it, as a second computation of every
   step upstream of it (a step runs more than once, concurrently with itself), and building the
   graph pickles each side input's whole upstream graph into its readers' tasks (side inputs of
   side inputs: minutes to hours before anything runs). On Dask, `_SideInputsAsJoin` rewrites
   every step that reads side inputs into a join: its input spread over `SIDE_INPUT_GROUPS`
   keys by content (the same key when a lost worker's part is computed again), each side input
   copied to every key, one GroupByKey, then the step's own DoFn per element with the side
   inputs built from the group. Steps with side effects must still give
   the same result when run again (a lost Dask worker's tasks are rerun): collection stages send
   their spill files' names through the graph and, on Dask, keep the files until the run ends
   (`reruns_steps`, pipeline/decisions.py).
5. A Flatten gets the sum of its inputs' Dask partitions and nothing lowers a count again, so
   partitions double at each join of two branches of one collection: `--runner=DaskRunner` is
   gristmill's subclass of Beam's runner (pipeline/dask_runner.py), which cuts each step back to
   its largest input's count.
6. Every partition of a ParDo appends its outputs to one list shared through the task arguments,
   so where tasks share them (an in-process cluster) a partition also returns the ones before it:
   the same subclass builds each ParDo task's receivers inside the task.
7. `run_pipeline` fuses the bag graph (`dask.optimize`), and dask names a fused chain by its
   task names cut at 115 characters plus 16 bits of `hash()`: look-alike chains (every global
   count read as a side input) can get one key, and one step then reads another's output (about
   one run in ten of the default recipe): the same subclass computes the graph unfused.
"""

from __future__ import annotations

import pickle
import re
from collections import defaultdict

import apache_beam as beam
import xxhash
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.pipeline import PipelineVisitor, PTransformOverride
from apache_beam.pvalue import AsSideInput

SIDE_INPUT_GROUPS = 16  # keys a side-input reader's input is spread over on Dask (fault 4)
MAIN = -1  # the tag of a reader's own input elements in the join (side inputs: their index)
DASK_RUNNER = "pipeline.dask_runner.DaskRunner"  # Beam's, with partitions kept in check (fault 5)
BEAM_DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
# Beam's names for a runner, lower-cased → the one gristmill knows it by: `direct` went to Beam's
# own choice of local runner (which fetches Prism) and the run was taken for a cluster's.
RUNNER_ALIASES = {
    "daskrunner": DASK_RUNNER,
    BEAM_DASK_RUNNER.lower(): DASK_RUNNER,
    "direct": "DirectRunner",
    "directrunner": "DirectRunner",
    "switchingdirectrunner": "DirectRunner",
    "fnapirunner": "FnApiRunner",
}
# Options whose values are credentials: written as `***` where a run records its arguments.
SECRET_OPTION = re.compile(r"secret|token|password|access_key|credential", re.IGNORECASE)


def expand_runner_alias(beam_args: list[str]) -> list[str]:
    """`--runner=DaskRunner` (or `--runner DaskRunner`, or Beam's class path) → gristmill's DaskRunner;
    Beam's other spellings of its local runner (`direct`) → `DirectRunner`."""
    return map_option(beam_args, "runner", lambda name: RUNNER_ALIASES.get(name.lower(), name))


def redact_secrets(beam_args: list[str]) -> list[str]:
    """The arguments with the values of credential options (`--s3_secret_access_key`) as `***`:
    the manifest, which ships with the dataset, held them in plain text."""
    args = list(beam_args)
    for index, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        if not name.startswith("--") or not SECRET_OPTION.search(name):
            continue
        if "=" in arg:
            args[index] = f"{name}=***"
        elif index + 1 < len(args) and not args[index + 1].startswith("--"):
            args[index + 1] = "***"
    return args


def map_option(beam_args: list[str], name: str, change) -> list[str]:
    """The arguments with the value of `--name=VALUE` (or `--name VALUE`) replaced by change(VALUE)."""
    args, flag = list(beam_args), f"--{name}"
    for index, arg in enumerate(args):
        if arg.startswith(f"{flag}="):
            args[index] = f"{flag}={change(arg.split('=', 1)[1])}"
        elif arg == flag and index + 1 < len(args):
            args[index + 1] = change(args[index + 1])
    return args


def load_runner_options(beam_args: list[str]) -> None:
    """Import the module of the runner `--runner` names (a class path, after the aliases), so the
    options it declares (Dask's `--dask_client_address`, ...) are known to Beam's option parser."""
    import importlib

    runner = PipelineOptions(expand_runner_alias(beam_args)).view_as(StandardOptions).runner or ""
    if "." in runner:
        importlib.import_module(runner.rsplit(".", 1)[0])


def is_dask(runner: str | None) -> bool:
    return (runner or "") in (DASK_RUNNER, BEAM_DASK_RUNNER, "DaskRunner")


def reruns_steps(pipeline: beam.Pipeline) -> bool:
    """Whether the pipeline's runner may run a step again over the same inputs (fault 4)."""
    options = pipeline.options
    return options is not None and is_dask(options.view_as(StandardOptions).runner)


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


class _TopAsCombine(PTransformOverride):
    def matches(self, applied_ptransform) -> bool:
        return isinstance(applied_ptransform.transform, beam.combiners.Top.Of)

    def get_replacement_transform_for_applied_ptransform(self, applied_ptransform):
        top = applied_ptransform.transform  # Beam 2.77 keeps its arguments in these attributes
        return beam.CombineGlobally(beam.combiners.TopCombineFn(top._n, top._key, top._reverse))


def _key_by_content(element, groups: int):
    """element → (group, (MAIN, element)), the group a hash of the element's pickle. When a lost
    worker's part of the input is computed again, its elements may come in another order (spill
    files are read in name order, and their names are random); keyed by their place in that order
    (they were), some then joined a group twice and others none: documents duplicated and lost,
    with the counts still balanced."""
    digest = xxhash.xxh64_intdigest(pickle.dumps(element, protocol=pickle.HIGHEST_PROTOCOL))
    return digest % groups, (MAIN, element)


def _to_every_group(value, index: int, groups: int):
    for group in range(groups):
        yield group, (index, value)


class _Side:
    """Where a side input stood in a step's arguments: its index in the join, and its view."""

    def __init__(self, index: int, view: AsSideInput) -> None:
        self.index, self.view_type, self.options = index, type(view), view._view_options()

    def value(self, sides: dict[int, list]):
        return self.view_type._from_runtime_iterable(sides[self.index], self.options)


class _WithSideInputs(beam.DoFn):
    """The replaced step's DoFn, called on each element of a group with the group's side inputs."""

    def __init__(self, fn: beam.DoFn, args: list, kwargs: dict) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def setup(self) -> None:
        self.fn.setup()

    def start_bundle(self) -> None:
        self.fn.start_bundle()

    def process(self, item):
        _group, values = item
        elements, sides = [], defaultdict(list)
        for tag, value in values:
            (elements if tag == MAIN else sides[tag]).append(value)
        args = [a.value(sides) if isinstance(a, _Side) else a for a in self.args]
        kwargs = {k: a.value(sides) if isinstance(a, _Side) else a for k, a in self.kwargs.items()}
        for element in elements:
            yield from self.fn.process(element, *args, **kwargs) or ()

    def finish_bundle(self):
        yield from self.fn.finish_bundle() or ()

    def teardown(self) -> None:
        self.fn.teardown()


class _JoinedSideInputs(beam.PTransform):
    """A ParDo with side inputs, as a GroupByKey join of its input with its side inputs."""

    def __init__(self, pardo: beam.ParDo) -> None:
        super().__init__()
        self.pardo = pardo

    def expand(self, pcoll):
        views: list[AsSideInput] = []

        def place(arg):
            if not isinstance(arg, AsSideInput):
                return arg
            views.append(arg)
            return _Side(len(views) - 1, arg)

        raw_args, raw_kwargs = self.pardo.raw_side_inputs  # the arguments as given, side inputs included
        args = [place(arg) for arg in raw_args]
        kwargs = {key: place(arg) for key, arg in raw_kwargs.items()}
        parts = [pcoll | "SpreadInput" >> beam.Map(_key_by_content, SIDE_INPUT_GROUPS)]
        parts += [
            view.pvalue
            | f"SideInput{index}ToEveryGroup" >> beam.FlatMap(_to_every_group, index, SIDE_INPUT_GROUPS)
            for index, view in enumerate(views)
        ]
        return (
            tuple(parts)
            | "WithSideInputs" >> beam.Flatten()
            | "JoinSideInputs" >> beam.GroupByKey()
            | "Apply" >> beam.ParDo(_WithSideInputs(self.pardo.fn, args, kwargs))
        )


class _SideInputsAsJoin(PTransformOverride):
    def matches(self, applied_ptransform) -> bool:
        return isinstance(applied_ptransform.transform, beam.ParDo) and bool(applied_ptransform.side_inputs)

    def get_replacement_transform_for_applied_ptransform(self, applied_ptransform):
        return _JoinedSideInputs(applied_ptransform.transform)

    def get_replacement_inputs(self, applied_ptransform):
        return tuple(applied_ptransform.main_inputs.values())  # the side inputs are joined in expand


def dask_overrides() -> list[PTransformOverride]:
    """Replacements gristmill applies to its own graph before running it on Dask (faults 2, 4)."""
    return [_OneElementBatches(), _TopAsCombine(), _SideInputsAsJoin()]
