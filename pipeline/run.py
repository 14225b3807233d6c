"""Build the Beam graph for a recipe, run it, and publish the output folder atomically.

The pipeline writes into a staging folder inside OUT; when it has finished, the driver checks
conservation (read = kept + rejected + failed), fills in empty kept shards, moves the staged
shards into place and writes `manifest.json` last, so a folder with a manifest is complete. All
of it goes through Beam's `FileSystems` (`pipeline.fileio`), so OUT may be local, `s3://` or
`gs://`; the figures the driver needs come from files the pipeline wrote there, never a worker's
local disk, and a missing one fails the run.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline import fileio, gristmill_version
from pipeline.beam_fixes import apply_local_runner_fixes
from pipeline.beam_stages import ApplyStages, LostElements
from pipeline.checkpoints import (
    CheckpointSettings,
    ResumePlan,
    WorkArea,
    WritePhase,
    cut_phases,
    describe,
    plan_resume,
    remove_leftovers,
)
from pipeline.cores import usable_cores
from pipeline.decisions import SpillOptions
from pipeline.document import Document
from pipeline.inspect import reuse_line
from pipeline.kept_output import WriteKept
from pipeline.manifest_figures import kept_output_figures, stage_figures
from pipeline.outcomes import SplitOutcomes
from pipeline.output_folder import (
    OUTPUT_PARTS,
    WORK_FOLDER,
    check_inputs_outside,
    check_replaceable,
    check_work_root,
    clear_work_area,
    exclusive,
    full_disk_advice,
    mark_output,
    remove_if_empty,
    remove_stale_staging,
)
from pipeline.progress import Channel, ConsoleProgress, size_text
from pipeline.read_phase import ReadPhaseFn, RestoreFn
from pipeline.readers import input_changes, input_files, plan_splits
from pipeline.recipe import Recipe
from pipeline.runners import dask_overrides, expand_runner_alias, is_dask, join_branches, redact_secrets
from pipeline.signals import WORKER_MODULE, Stopped, stop_signals_deferred, watch_run
from pipeline.writers import (
    ScoreNames,
    WriteShards,
    empty_shards,
    failed_row,
    rejected_row,
)

LOG = logging.getLogger("gristmill")
FORMAT_VERSION = 1  # of the output folder; pipeline.dataset refuses versions it does not know
LOCAL_RUNNERS = ("DirectRunner", "FnApiRunner", "")


class RunFailed(RuntimeError):
    """The run finished but its output breaks a rule (conservation, failure budget)."""


class RunInterrupted(Stopped):
    """Ctrl-C or SIGTERM: nothing was published; the message says what the work area keeps for a rerun."""


class PipelineFailed(RuntimeError):
    """The Beam pipeline itself failed (e.g. a stage's in-graph conservation check); nothing was
    published."""


class PublishFailed(PipelineFailed):
    """The run finished but replacing the output failed part way: the folder holds no manifest."""


def error_summary(error: BaseException) -> str:
    """The line of a runner's (often very long) error that says what went wrong."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    marker = f"{LostElements.__name__}: "
    for line in reversed(lines):
        if marker in line:
            return line[line.index(marker) + len(marker) :]
    return lines[-1] if lines else type(error).__name__


@dataclass
class RunResult:
    output: str
    manifest: dict[str, Any]


def pipeline_options(beam_args: list[str]) -> PipelineOptions:
    """Beam options; locally, every core in separate processes unless told otherwise."""
    beam_args = expand_runner_alias(beam_args)
    if not any(arg.startswith("--default_sdk_harness_log_level") for arg in beam_args):
        beam_args = [*beam_args, "--default_sdk_harness_log_level=ERROR"]
    options = PipelineOptions(beam_args)
    direct = options.view_as(DirectOptions)
    standard = options.view_as(StandardOptions)
    given = " ".join(beam_args)
    if (standard.runner or "") in LOCAL_RUNNERS:
        if "--direct_running_mode" not in given:
            direct.direct_running_mode = "multi_processing"
        if "--direct_num_workers" not in given or direct.direct_num_workers == 0:
            # one worker per usable core (Beam's 0 counts the host's); in-memory mode has exactly one
            direct.direct_num_workers = 1 if direct.direct_running_mode == "in_memory" else usable_cores()
    return options


def _local_runner_class():
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    from apache_beam.transforms import environments

    class LocalRunner(fn_runner.FnApiRunner):
        """FnApiRunner whose worker processes start through `pipeline.worker` (quiet console)."""

        @property
        def _default_environment(self):
            return self._environment

        @_default_environment.setter
        def _default_environment(self, environment):
            if isinstance(environment, environments.SubprocessSDKEnvironment):
                command = f"exec {sys.executable} -m {WORKER_MODULE}"  # no shell in between: Ctrl-C reaches the worker
                environment = environments.SubprocessSDKEnvironment.from_command_string(
                    command_string=command
                )
            self._environment = environment

    return LocalRunner


def make_runner(options: PipelineOptions):
    """The default local runner is Beam's FnApiRunner directly: DirectRunner first tries to
    download and start Prism, which must never happen here."""
    runner = options.view_as(StandardOptions).runner or ""
    if runner in LOCAL_RUNNERS:
        from apache_beam.portability.api import beam_provision_api_pb2
        from apache_beam.runners.portability.fn_api_runner import fn_runner
        from apache_beam.runners.portability.portable_runner import JobServiceHandle

        apply_local_runner_fixes()
        # As DirectRunner does: workers get the pipeline options (log level, ...) this way.
        encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
        provision = fn_runner.ExtendedProvisionInfo(
            beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)
        )
        return _local_runner_class()(provision_info=provision)
    return None  # Beam resolves --runner itself


def new_pipeline(options: PipelineOptions | None = None) -> beam.Pipeline:
    """A Beam pipeline on the runner `make_runner` picks for `options` (none given: the local one).
    Tests and benchmarks build theirs here too, so that they run where `gristmill run` runs."""
    options = options or PipelineOptions([])
    return beam.Pipeline(runner=make_runner(options), options=options)


def _write_count(directory: str, name: str):
    def write(count: int) -> int:
        fileio.write_bytes(f"{directory}/{name}.json", json.dumps({"count": count}).encode())
        return count

    return write


def _scores_only(doc: Document) -> dict:
    return {"scores": doc.scores}


def list_inputs(recipe: Recipe) -> dict[str, fileio.FileInfo]:
    """The recipe's input files with their sizes and modification times (one listing per glob)."""
    return input_files(recipe.input.paths) if recipe.input.paths else {}


def plan_units(recipe: Recipe, inputs: dict[str, fileio.FileInfo]) -> list:
    """Phase 0's units: every split of the `inputs` (`list_inputs`), then every generator."""
    units: list = []
    for path, info in inputs.items():
        units.extend(plan_splits(path, recipe.input, info.size))
    return units + list(recipe.generators)


def build_pipeline(
    pipeline: beam.Pipeline,
    recipe: Recipe,
    staging: str,
    channel: Channel | None = None,
    resume: ResumePlan | None = None,
    inputs: dict[str, fileio.FileInfo] | None = None,
) -> None:
    """Add the whole recipe to `pipeline`, writing into `staging`; `channel` adds progress taps;
    `resume` (checkpoints on) writes phase checkpoints and reuses what an earlier run finished;
    `inputs` are the input files as `list_inputs` gives them (listed here when not given)."""
    work = resume.work if resume else None
    phases = cut_phases(recipe.stages)
    first = resume.resume_after + 1 if resume else 0
    if first == 0:
        if work:
            units = list(work.units.items())
        else:
            inputs = list_inputs(recipe) if inputs is None else inputs
            units = [(str(i), unit) for i, unit in enumerate(plan_units(recipe, inputs))]
        done = resume.done_units if resume else {}
        reader = ReadPhaseFn(
            phases[0],
            recipe.input,
            recipe.run.batch_size,
            work,
            done,
            channel.directory if channel else None,
            pipeline.options,
            verifies_candidates=recipe.verifies_candidates,
        )
        pairs = (
            pipeline
            | "Units" >> beam.Create(units)
            | "SpreadUnits" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(reader)
        )
        _ = (
            pairs
            | "CountRead" >> beam.combiners.Count.Globally()
            | "WriteReadCount" >> beam.Map(_write_count(staging, "read_count"))
        )
        first = 1
    else:  # every unit and phases 1..k are checkpointed: start at phase k+1 from their files
        _write_count(staging, "read_count")(resume.read_count())
        pairs = (
            pipeline
            | "Checkpoints" >> beam.Create(resume.restore_files())
            | "SpreadCheckpoints" >> beam.Reshuffle()
            | "Restore" >> beam.ParDo(RestoreFn(pipeline.options))
        )
        if channel:
            channel.tap(pairs, "read", "Progress_restored")
            channel.all_bytes_read()
    read = pairs | "SplitRead" >> SplitOutcomes()
    rejected, failed = [read.rejected], [read.failed]
    if channel:  # taps before any Flatten: the local runner holds a Flatten's output until it ends
        last = phases[0][-1].name if phases[0] and first == 1 else "read"
        channel.tap_stage_outputs(read, last)
    tap = channel.tap_stage_outputs if channel else None
    docs = read.kept
    for index in range(first, len(phases)):
        stages = ApplyStages(phases[index], recipe.run.batch_size, tap, flatten=False)
        outputs = docs | f"Phase{index}" >> stages
        if work and index in work.checkpointed_phases:
            _ = outputs | WritePhase(work, index)
        docs = outputs.kept
        rejected.extend(outputs.rejected)
        failed.extend(outputs.failed)
    if channel:
        channel.tap(docs, "kept", "Progress_kept")
    write_outputs(recipe, staging, docs, rejected, failed, channel)
    join_branches(pipeline)


def write_outputs(
    recipe: Recipe, staging: str, kept, rejected: list, failed: list, channel: Channel | None = None
) -> None:
    """Kept, rejected and failed shards, the score names and the shard list, into `staging`; the
    mixture's removals counted in `channel`.

    `rejected` and `failed` are lists of PCollections, one per step that removes documents; they
    are never flattened into one (Beam's local runner would hold it in memory)."""
    pipeline = kept.pipeline
    out = recipe.output
    keep_text = recipe.run.keep_rejected_text
    rejected_rows = [
        part | f"RejectedRows{index}" >> beam.Map(rejected_row, keep_text)
        for index, part in enumerate(rejected)
    ]
    # Documents the [output] mixture leaves out carry only score names the kept documents have.
    kept_scores = kept | "KeptScores" >> beam.Map(_scores_only)
    names = (kept_scores, *rejected_rows) | ScoreNames()
    _ = names | "WriteScoreNames" >> beam.Map(
        lambda n: fileio.write_bytes(f"{staging}/score_names.json", json.dumps(n).encode())
    )
    kept_infos, mixture_rejected = kept | "Kept" >> WriteKept(staging, recipe.output, names)
    if channel and recipe.output.mixture:
        channel.tap(mixture_rejected, "rejected", "Progress_mixture_rejected")
    rejected_rows.append(mixture_rejected | "MixtureRows" >> beam.Map(rejected_row, keep_text))
    failed_rows = tuple(
        part | f"FailedRows{index}" >> beam.Map(failed_row) for index, part in enumerate(failed)
    )
    shard_options = (out.shards, out.target_shard_mb, out.compression, out.row_group_mb)
    infos = [
        kept_infos,
        tuple(rejected_rows) | WriteShards(staging, "rejected", *shard_options, names),
        failed_rows | WriteShards(staging, "failed", *shard_options),
    ]
    _ = (
        tuple(infos)
        | "AllShards" >> beam.Flatten(pipeline=pipeline)
        | "ShardList" >> beam.combiners.ToList()
        | "WriteShardList"
        >> beam.Map(lambda shards: fileio.write_bytes(f"{staging}/shards.json", json.dumps(shards).encode()))
    )


def _stage_metrics(result, recipe: Recipe) -> dict[str, dict[str, int]]:
    """Counters per stage from the runner, where it reports them (empty otherwise)."""
    names = {stage.name for stage in recipe.stages}
    figures: dict[str, dict[str, int]] = {name: {} for name in names}
    try:
        counters = result.metrics().query()["counters"]
    except Exception as error:  # Dask reports none; the in-graph counts are the figures that matter
        LOG.info("runner reported no metrics (no seconds per stage): %s", error)
        return figures
    for counter in counters:
        namespace = counter.key.metric.namespace
        if namespace in figures:
            value = counter.committed if counter.committed is not None else counter.attempted
            figures[namespace][counter.key.metric.name] = figures[namespace].get(
                counter.key.metric.name, 0
            ) + (value or 0)
    return figures


def spill_root(options: PipelineOptions, output: str) -> str | None:
    """Where a run's own spill folder goes: under the given --spill_dir; for an object-store output
    on the local runner, under this machine's temporary folder (its workers share the disk, and each
    small spill file on an object store costs several requests: 500 documents took 356 s there
    against 13-15 s on local disk, on a local S3 server); else None (in the staging folder)."""
    given = options.view_as(SpillOptions).spill_dir
    if given:
        return given
    if not fileio.is_local(output) and (options.view_as(StandardOptions).runner or "") in LOCAL_RUNNERS:
        return tempfile.gettempdir()
    return None


def checkpoints_enabled(settings: CheckpointSettings, options: PipelineOptions) -> bool:
    """`auto`: on for the local runner, off on cluster runners (they retry failed work themselves,
    and a resumed job needs the work area on storage every worker shares)."""
    if settings.mode == "auto":
        return (options.view_as(StandardOptions).runner or "") in LOCAL_RUNNERS
    return settings.mode == "on"


def plan_checkpoints(
    recipe: Recipe, work_root: str, fresh: bool, inputs: dict[str, fileio.FileInfo]
) -> ResumePlan:
    """The work area of this recipe and its `inputs` (`list_inputs`), and what an earlier run left in it."""
    if fresh:
        clear_work_area(work_root)
    units = plan_units(recipe, inputs)
    return plan_resume(WorkArea.for_recipe(recipe, work_root, units, inputs))


def run_recipe(
    recipe: Recipe,
    output: str,
    beam_args: list[str] | None = None,
    progress: ConsoleProgress | None = None,
    checkpoints: CheckpointSettings | None = None,
    inputs: dict[str, fileio.FileInfo] | None = None,
) -> RunResult:
    """Run a recipe into `output`; raises RunFailed after publishing if a rule is broken.

    `progress` shows live figures while the pipeline runs; `checkpoints` says where phases are
    checkpointed and whether to reuse them (`pipeline.checkpoints`); `inputs` are the input files
    as `list_inputs` gives them, when the caller has listed them already."""
    beam_args = list(beam_args or [])
    checkpoints = checkpoints or CheckpointSettings()
    output = output.rstrip("/") or "."
    options = pipeline_options(beam_args)
    fileio.set_options(options)  # object stores take credentials and endpoint from them
    fileio.make_folder(output)
    with exclusive(output), contextlib.ExitStack() as held:
        check_replaceable(output)
        if inputs is None:  # listed once: sizes and dates come with the listing
            inputs = list_inputs(recipe)
        enabled = checkpoints_enabled(checkpoints, options)
        # Dedup stages' spilled documents: in the staging folder, or in this run's own folder under
        # `spill_root`, deleted with it (the stages delete files, not their folders).
        spill_folder = spill_root(options, output)
        work_root = checkpoints.work_dir or fileio.join(output, WORK_FOLDER)
        if enabled:  # before its lock: `--work-dir OUT` is not "another run"
            check_work_root(work_root, output, spill_folder)
        check_inputs_outside(output, list(inputs), checkpoints.work_dir if enabled else None)
        remove_stale_staging(output)
        staging = fileio.join(output, f".staging-{uuid.uuid4().hex[:12]}")
        started = time.time()
        own_spill = fileio.join(spill_folder, staging.rsplit("/", 1)[-1]) if spill_folder else None
        spill_dir = options.view_as(SpillOptions).spill_dir = own_spill or fileio.join(staging, "spill")
        resume = None
        if enabled:
            # held like the output folder, the default one too (another run may be given it as
            # its --work-dir: before, that run deleted this one's live checkpoints)
            fileio.make_folder(work_root)
            held.callback(remove_if_empty, work_root)  # after the lock's release
            held.enter_context(exclusive(work_root, "--work-dir"))
            resume = plan_checkpoints(recipe, work_root, checkpoints.fresh, inputs)
            if (unusable := remove_leftovers(resume)) and progress:
                progress.note(
                    f"gristmill: deleted {size_text(unusable)} of checkpoints that no resume can use "
                    f"(unfinished work of a stopped run, or another recipe's or input's) in {work_root}"
                )
            if progress and (reused := reuse_line(resume.summary())):
                progress.note(f"gristmill: {reused}; --fresh starts over")
        pipeline = manifest = None
        try:
            pipeline = new_pipeline(options)
            total_bytes = sum(info.size for info in inputs.values())
            channel = Channel.for_recipe(recipe, staging, total_bytes) if progress else None
            build_pipeline(pipeline, recipe, staging, channel, resume, inputs)
            if is_dask(options.view_as(StandardOptions).runner):
                pipeline.replace_all(dask_overrides())
            with watch_run() as ending:
                try:
                    with progress.running(channel) if progress else contextlib.nullcontext():
                        result = pipeline.run()
                        result.wait_until_finish()
                except KeyboardInterrupt:
                    raise
                except Exception as error:
                    if ending.signum is not None:  # the runner wrapped the KeyboardInterrupt in its own error
                        raise Stopped(signum=ending.signum) from error
                    if ending.worker_exit is not None:  # the runner's error says only "Channel closed"
                        raise PipelineFailed(ending.lost_worker()) from error
                    written = {
                        "the output": output,
                        "the spill files": spill_dir,
                        "temporary files": tempfile.gettempdir(),
                    }
                    if resume:
                        written["the checkpoints"] = work_root
                    reason = error_summary(error)
                    raise PipelineFailed(full_disk_advice(reason, written) or reason) from error
            metrics = _stage_metrics(result, recipe)
            summary = resume.summary() if resume else None
            changed = input_changes(recipe.input.paths, inputs, (output, spill_dir, work_root))
            manifest = finalize(
                recipe, output, staging, metrics, time.time() - started, beam_args, summary, changed
            )
        except KeyboardInterrupt as interrupt:
            kept = describe(work_root) if resume else "checkpoints were off, nothing was kept"
            signum = getattr(interrupt, "signum", signal.SIGINT)
            raise RunInterrupted(f"nothing was published; {kept}", signum) from interrupt
        except PipelineFailed as failed:
            if resume:  # a full disk, a lost worker: what finished is not lost
                raise type(failed)(f"{failed}; {describe(work_root, ' (a rerun resumes there)')}") from failed
            raise
        finally:
            # Once published, a stop signal while the run tidies up waits: it made a finished run
            # exit 143 as if killed.
            with (
                stop_signals_deferred("the published run was tidied up")
                if manifest
                else contextlib.nullcontext()
            ):
                _remove_temporary([staging, own_spill])
                if pipeline is not None:  # Beam deletes its local temp folder only when the pipeline runs
                    shutil.rmtree(pipeline.local_tempdir, ignore_errors=True)
                if manifest and resume and not manifest["problems"] and not checkpoints.keep_work:
                    clear_work_area(work_root)
        problems = manifest["problems"]
        if problems:  # published, but a rerun after fixing the recipe can still reuse the work
            raise RunFailed("; ".join(problems))
        return RunResult(output, manifest)


def _remove_temporary(folders: list[str | None]) -> None:
    """Delete the run's staging and spill folders; one that cannot be deleted (its object store
    gone) is a warning: before, its error replaced the run's own (a traceback, no summary line)."""
    for folder in filter(None, folders):
        try:
            fileio.delete_tree(folder)
        except Exception as error:  # any filesystem's error
            LOG.warning("could not delete %s: %s", folder, error_summary(error))


def read_bookkeeping(path: str) -> Any:
    """A figure the pipeline wrote for the driver; missing or unreadable fails the run (a zero
    here would let an empty output pass the conservation check)."""
    try:
        return json.loads(fileio.read_bytes(path))
    except Exception as error:
        raise PipelineFailed(
            f"{path}: bookkeeping file missing or unreadable ({type(error).__name__}: {error}); the "
            "runner did not run every step of the pipeline, so nothing was published"
        ) from error


def finalize(
    recipe: Recipe,
    output: str,
    staging: str,
    metrics: dict,
    seconds: float,
    beam_args: list[str],
    resume: dict | None = None,
    inputs_changed: list[str] | None = None,
) -> dict[str, Any]:
    """Check the staged output, publish it in place of any previous run, write the manifest.
    `inputs_changed`: `input_changes`' lines on input files changed, gone or new during the run."""
    read_count = read_bookkeeping(f"{staging}/read_count.json")["count"]
    shards = read_bookkeeping(f"{staging}/shards.json")
    score_names = read_bookkeeping(f"{staging}/score_names.json")
    for part in OUTPUT_PARTS:  # every part holds a file with the schema, even with no rows
        shards.extend(empty_shards(recipe.output, staging, part, shards, score_names))
    shards.sort(key=lambda s: s["file"])
    # Repeats written by an up-sampling mixture are rows, not documents read.
    totals = {
        part: sum(s["rows"] - s.get("repeats", 0) for s in shards if s["kind"] == part)
        for part in OUTPUT_PARTS
    }
    outcome_counts: dict[str, dict[str, int]] = {"rejected": {}, "failed": {}}
    for shard in shards:
        for key, value in shard["counts"].items():
            bucket = outcome_counts[shard["kind"]]
            bucket[key] = bucket.get(key, 0) + value
    stages = stage_figures(recipe, read_count, outcome_counts, metrics)
    problems = []
    conserved = read_count == totals["kept"] + totals["rejected"] + totals["failed"]
    if not conserved:
        problems.append(
            f"conservation broken: read {read_count} != kept {totals['kept']} + rejected "
            f"{totals['rejected']} + failed {totals['failed']}"
        )
    failed_fraction = totals["failed"] / read_count if read_count else 0.0
    if failed_fraction > recipe.run.max_failed_fraction:
        problems.append(
            f"{totals['failed']} of {read_count} records failed ({failed_fraction:.2%}), above "
            f"max_failed_fraction {recipe.run.max_failed_fraction:.2%}; see {output}/failed/"
        )
    manifest = {
        "format_version": FORMAT_VERSION,
        "gristmill_version": gristmill_version(),
        "run": recipe.run.name,
        "recipe": recipe.resolved(),
        "beam_args": redact_secrets(beam_args),
        "seconds": round(seconds, 3),
        "counts": {"input": read_count, **totals},
        "conservation": conserved,
        "failed_fraction": failed_fraction,
        "problems": problems,
        "stages": stages,
        "checkpoints": resume,
        "inputs_changed": inputs_changed or [],
        "score_names": score_names,
        "kept_output": kept_output_figures(recipe, shards),
        "rejected_by_reason": outcome_counts["rejected"],
        "failed_by_error": outcome_counts["failed"],
        "shards": shards,
    }
    manifest = json.loads(json.dumps(manifest, default=str))  # exactly what manifest.json will hold
    _publish(output, staging, manifest)
    return manifest


def _publish(output: str, staging: str, manifest: dict[str, Any]) -> None:
    """Replace the previous output: render the report and the card from the staged shards (one
    that fails leaves the previous output whole), drop the previous manifest, move the staged
    shards into place (copy then delete on object stores), write the pages, and the manifest last."""
    from pipeline.dataset_card import render_card
    from pipeline.report import render_report

    pages = {"report.html": render_report(manifest, staging), "README.md": render_card(manifest, output)}
    with stop_signals_deferred("the output was being replaced"):
        manifest_path = fileio.join(output, "manifest.json")
        try:
            mark_output(output)
            fileio.delete([manifest_path])
            for part in OUTPUT_PARTS:
                fileio.delete_tree(fileio.join(output, part))
                fileio.make_folder(fileio.join(output, part))
            for shard in manifest["shards"]:
                fileio.move(fileio.join(staging, shard["file"]), fileio.join(output, shard["file"]))
            for name, page in pages.items():
                fileio.write_bytes(fileio.join(output, name), page.encode("utf-8"))
            fileio.write_whole(manifest_path, json.dumps(manifest, indent=2, sort_keys=False).encode())
        except OSError as error:  # was a traceback, and the folder looked like an output
            raise PublishFailed(
                f"publishing into {output} failed ({error_summary(error)}); it may hold parts of the "
                "old and the new output, and no manifest.json until a run publishes there"
            ) from error
