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
import hashlib
import json
import logging
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline import fileio
from pipeline.beam_fixes import apply_local_runner_fixes
from pipeline.beam_stages import ApplyStages, LostElements
from pipeline.decisions import SpillOptions
from pipeline.document import Document, Failure, Rejection
from pipeline.kept_output import MIXTURE_STAGE, WriteKept, mixture_group
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitOutcomes
from pipeline.progress import Channel, ConsoleProgress, read_step
from pipeline.readers import Split, expand_paths, plan_splits, read_split
from pipeline.recipe import Recipe
from pipeline.runners import dask_overrides, expand_runner_alias, is_dask, join_branches
from pipeline.writers import (
    ScoreNames,
    WriteShards,
    encode_shard,
    failed_row,
    rejected_row,
    shard_name,
)

LOG = logging.getLogger("gristmill")
OUTPUT_PARTS = ("kept", "rejected", "failed")
FORMAT_VERSION = 1  # of the output folder; pipeline.dataset refuses versions it does not know
LOCAL_RUNNERS = ("DirectRunner", "FnApiRunner", "")


class RunFailed(RuntimeError):
    """The run finished but its output breaks a rule (conservation, failure budget)."""


class PipelineFailed(RuntimeError):
    """The Beam pipeline itself failed (e.g. a stage's in-graph conservation check); nothing was
    published."""


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
        if "--direct_num_workers" not in given:
            # 0: one worker per core; in-memory mode has exactly one.
            direct.direct_num_workers = 1 if direct.direct_running_mode == "in_memory" else 0
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
                command = f"exec {sys.executable} -m pipeline.worker"  # no shell in between: Ctrl-C reaches the worker
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


def _outcome_of(record) -> tuple:
    if isinstance(record, Document):
        return KEPT, record
    return (REJECTED if isinstance(record, Rejection) else FAILED), record


def _generate(generator) -> list:
    """Run one generator; a generator that breaks becomes one failure, not a lost run."""
    try:
        return list(generator.generate())
    except Exception as error:
        message = " ".join(str(error).split())[:1000]
        source = f"synthetic:{generator.name}"
        return [Failure(f"{source}:generate", source, "read", type(error).__name__, message)]


def _write_count(directory: str, name: str):
    def write(count: int) -> int:
        fileio.write_bytes(f"{directory}/{name}.json", json.dumps({"count": count}).encode())
        return count

    return write


def _scores_only(doc: Document) -> dict:
    return {"scores": doc.scores}


def build_pipeline(
    pipeline: beam.Pipeline, recipe: Recipe, staging: str, channel: Channel | None = None
) -> None:
    """Add the whole recipe to `pipeline`, writing into `staging`; `channel` adds progress taps."""
    config = recipe.input
    splits: list[Split] = []
    for path in expand_paths(config.paths) if config.paths else []:
        splits.extend(plan_splits(path, config))
    sources = []
    if splits:
        sources.append(
            pipeline
            | "Splits" >> beam.Create(splits)
            | "SpreadSplits" >> beam.Reshuffle()
            | "Read" >> read_step(read_split, config, channel)
        )
    if recipe.generators:
        sources.append(
            pipeline | "Generators" >> beam.Create(recipe.generators) | "Generate" >> beam.FlatMap(_generate)
        )
    records = tuple(sources) | "AllRecords" >> beam.Flatten(pipeline=pipeline)
    _ = (
        records
        | "CountRead" >> beam.combiners.Count.Globally()
        | "WriteReadCount" >> beam.Map(_write_count(staging, "read_count"))
    )
    read = records | "ByOutcome" >> beam.Map(_outcome_of) | "SplitRead" >> SplitOutcomes()
    # On Dask, a batch left over at the end of a bundle would be lost (pipeline.runners, fault 2).
    batch_size = 1 if is_dask(pipeline.options.view_as(StandardOptions).runner) else recipe.run.batch_size
    tap = channel.tap_stage_outputs if channel else None
    outputs = read.kept | "Stages" >> ApplyStages(recipe.stages, batch_size, tap)
    rejected = (read.rejected, outputs.rejected) | "Rejected" >> beam.Flatten()
    failed = (read.failed, outputs.failed) | "Failed" >> beam.Flatten()
    if channel:  # taps before any Flatten: the local runner holds a Flatten's output until it ends
        taps = [(source, "read") for source in sources]
        taps += [(read.rejected, "rejected"), (read.failed, "failed"), (outputs.kept, "kept")]
        for index, (pcoll, prefix) in enumerate(taps):
            channel.tap(pcoll, prefix, f"Progress_{prefix}_{index}")
    out = recipe.output
    keep_text = recipe.run.keep_rejected_text
    rejected_rows = rejected | "RejectedRows" >> beam.Map(rejected_row, keep_text)
    # Documents the [output] mixture leaves out carry only score names the kept documents have.
    kept_scores = outputs.kept | "KeptScores" >> beam.Map(_scores_only)
    names = (kept_scores, rejected_rows) | ScoreNames()
    _ = names | "WriteScoreNames" >> beam.Map(
        lambda n: fileio.write_bytes(f"{staging}/score_names.json", json.dumps(n).encode())
    )
    kept_infos, mixture_rejected = outputs.kept | "Kept" >> WriteKept(staging, recipe.output, names)
    mixture_rows = mixture_rejected | "MixtureRows" >> beam.Map(rejected_row, keep_text)
    rejected_rows = (rejected_rows, mixture_rows) | "AllRejectedRows" >> beam.Flatten()
    shard_options = (out.shards, out.target_shard_mb, out.compression, out.row_group_mb)
    infos = [
        kept_infos,
        rejected_rows | WriteShards(staging, "rejected", *shard_options, names),
        failed | "FailedRows" >> beam.Map(failed_row) | WriteShards(staging, "failed", *shard_options),
    ]
    _ = (
        tuple(infos)
        | "AllShards" >> beam.Flatten()
        | "ShardList" >> beam.combiners.ToList()
        | "WriteShardList"
        >> beam.Map(lambda shards: fileio.write_bytes(f"{staging}/shards.json", json.dumps(shards).encode()))
    )
    join_branches(pipeline)


def _stage_metrics(result, recipe: Recipe) -> dict[str, dict[str, int]]:
    """Counters per stage from the runner, where it reports them (empty otherwise)."""
    names = {stage.name for stage in recipe.stages}
    figures: dict[str, dict[str, int]] = {name: {} for name in names}
    try:
        counters = result.metrics().query()["counters"]
    except Exception as error:  # some runners report no metrics; the manifest still has file counts
        LOG.warning("runner reported no metrics: %s", error)
        return figures
    for counter in counters:
        namespace = counter.key.metric.namespace
        if namespace in figures:
            value = counter.committed if counter.committed is not None else counter.attempted
            figures[namespace][counter.key.metric.name] = figures[namespace].get(
                counter.key.metric.name, 0
            ) + (value or 0)
    return figures


def run_recipe(
    recipe: Recipe, output: str, beam_args: list[str] | None = None, progress: ConsoleProgress | None = None
) -> RunResult:
    """Run a recipe into `output`; raises RunFailed after publishing if a rule is broken.

    `progress` shows live figures while the pipeline runs."""
    beam_args = list(beam_args or [])
    output = output.rstrip("/") or "."
    fileio.make_folder(output)
    staging = fileio.join(output, f".staging-{uuid.uuid4().hex[:12]}")
    started = time.time()
    options = pipeline_options(beam_args)
    spill = options.view_as(SpillOptions)
    spill.spill_dir = spill.spill_dir or fileio.join(staging, "spill")  # dedup stages' spilled documents
    try:
        pipeline = beam.Pipeline(runner=make_runner(options), options=options)
        channel = Channel.for_recipe(recipe, staging) if progress else None
        build_pipeline(pipeline, recipe, staging, channel)
        if is_dask(options.view_as(StandardOptions).runner):
            pipeline.replace_all(dask_overrides())
        try:
            with progress.running(channel) if progress else contextlib.nullcontext():
                result = pipeline.run()
                result.wait_until_finish()
        except Exception as error:
            raise PipelineFailed(error_summary(error)) from error
        metrics = _stage_metrics(result, recipe)
        manifest = finalize(recipe, output, staging, metrics, time.time() - started, beam_args)
    finally:
        fileio.delete_tree(staging)
    problems = manifest["problems"]
    if problems:
        raise RunFailed("; ".join(problems))
    return RunResult(output, manifest)


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
    recipe: Recipe, output: str, staging: str, metrics: dict, seconds: float, beam_args: list[str]
) -> dict[str, Any]:
    """Check the staged output, publish it in place of any previous run, write the manifest."""
    read_count = read_bookkeeping(f"{staging}/read_count.json")["count"]
    shards = read_bookkeeping(f"{staging}/shards.json")
    score_names = read_bookkeeping(f"{staging}/score_names.json")
    for part in OUTPUT_PARTS:  # every part holds a file with the schema, even with no rows
        shards.extend(_empty_shards(recipe, staging, part, shards, score_names))
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
        "gristmill_version": _version(),
        "run": recipe.run.name,
        "recipe": recipe.resolved(),
        "beam_args": beam_args,
        "seconds": round(seconds, 3),
        "counts": {"input": read_count, **totals},
        "conservation": conserved,
        "failed_fraction": failed_fraction,
        "problems": problems,
        "stages": stages,
        "score_names": score_names,
        "kept_output": kept_output_figures(recipe, shards),
        "rejected_by_reason": outcome_counts["rejected"],
        "failed_by_error": outcome_counts["failed"],
        "shards": shards,
    }
    manifest = json.loads(json.dumps(manifest, default=str))  # exactly what manifest.json will hold
    _publish(output, staging, manifest)
    return manifest


def _empty_shards(
    recipe: Recipe, staging: str, part: str, shards: list[dict], score_names: list[str]
) -> list[dict[str, Any]]:
    """Write the shards of `part` that got no rows, so part-i-of-N is complete; their infos."""
    count = recipe.output.shards or max([s["of"] for s in shards if s["kind"] == part], default=1)
    present = {s["shard"] for s in shards if s["kind"] == part}
    infos = []
    for index in sorted(set(range(count)) - present):
        data = encode_shard(part, [], recipe.output.compression, recipe.output.row_group_mb, score_names)
        name = shard_name(index, count)
        fileio.write_bytes(f"{staging}/{part}/{name}", data)
        infos.append(
            {
                "kind": part,
                "file": f"{part}/{name}",
                "shard": index,
                "of": count,
                "rows": 0,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "counts": {},
            }
        )
    return infos


def kept_output_figures(recipe: Recipe, shards: list[dict]) -> dict[str, Any]:
    """Rows, repeats, tokens and (with a mixture) the achieved share of each group."""
    kept = [s for s in shards if s["kind"] == "kept"]
    out = recipe.output
    figures: dict[str, Any] = {
        "rows": sum(s["rows"] for s in kept),
        "repeats": sum(s.get("repeats", 0) for s in kept),
        "tokenizer": out.tokenizer,
        "n_tokens": sum(s.get("n_tokens", 0) for s in kept) if out.tokenizer != "none" else None,
        "shuffle_seed": out.shuffle_seed,
    }
    if out.mixture:
        unit = "source_tokens" if out.tokenizer != "none" else "sources"
        achieved: dict[str, int] = dict.fromkeys(out.mixture, 0)
        for shard in kept:
            for source, amount in shard.get(unit, {}).items():
                group = mixture_group(source, list(out.mixture))
                if group is not None:
                    achieved[group] += amount
        total_weight, total = sum(out.mixture.values()), sum(achieved.values())
        figures["mixture"] = {
            group: {
                "weight": round(weight / total_weight, 6),
                "achieved": round(achieved[group] / total, 6) if total else 0.0,
                "unit": "tokens" if unit == "source_tokens" else "rows",
            }
            for group, weight in out.mixture.items()
        }
    return figures


def stage_figures(recipe: Recipe, read_count: int, outcomes: dict, metrics: dict) -> list[dict[str, Any]]:
    """Per stage: in, kept, rejected by reason, failed, seconds, plus the stage's own figures."""
    figures = []
    read_rejected = {k.split("/", 1)[1]: v for k, v in outcomes["rejected"].items() if k.startswith("read/")}
    read_failed = sum(v for k, v in outcomes["failed"].items() if k.startswith("read/"))
    figures.append(
        {
            "name": "read",
            "use": "read",
            "in": read_count,
            "kept": read_count - sum(read_rejected.values()) - read_failed,
            "rejected": read_rejected,
            "failed": read_failed,
        }
    )
    reaching = figures[0]["kept"]
    for stage in recipe.stages:
        prefix = f"{stage.name}/"
        rejected = {k[len(prefix) :]: v for k, v in outcomes["rejected"].items() if k.startswith(prefix)}
        failed = sum(v for k, v in outcomes["failed"].items() if k.startswith(prefix))
        counters = metrics.get(stage.name, {})
        kept = reaching - sum(rejected.values()) - failed
        # `in` and `kept` come from the written files, so they hold on every runner; candidates
        # that bypass a stage count as reaching and passing it.
        entry: dict[str, Any] = {
            "name": stage.name,
            "use": stage.registry_name,
            "in": reaching,
            "kept": kept,
            "rejected": rejected,
            "failed": failed,
            "seconds": round(counters["micros"] / 1e6, 3) if "micros" in counters else None,
        }
        extra = {k: v for k, v in counters.items() if k not in ("in", "kept", "failed", "micros")}
        extra = {k: v for k, v in extra.items() if not k.startswith("rejected.")}
        if extra:
            entry["metrics"] = extra
        static = stage.manifest_extra()
        if static:
            entry["figures"] = static
        figures.append(entry)
        reaching = kept
    if recipe.output.mixture:  # the [output] mixture removes documents too
        prefix = f"{MIXTURE_STAGE}/"
        rejected = {k[len(prefix) :]: v for k, v in outcomes["rejected"].items() if k.startswith(prefix)}
        kept = reaching - sum(rejected.values())
        figures.append(
            {
                "name": MIXTURE_STAGE,
                "use": "[output] mixture",
                "in": reaching,
                "kept": kept,
                "rejected": rejected,
                "failed": 0,
            }
        )
    return figures


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gristmill")
    except Exception:
        return "unknown"


def _publish(output: str, staging: str, manifest: dict[str, Any]) -> None:
    """Replace the previous output: drop its manifest first, move the staged shards into place
    (copy then delete on object stores), write the report, and the manifest last."""
    manifest_path = fileio.join(output, "manifest.json")
    fileio.delete([manifest_path])
    for part in OUTPUT_PARTS:
        fileio.delete_tree(fileio.join(output, part))
        fileio.make_folder(fileio.join(output, part))
    for shard in manifest["shards"]:
        fileio.move(fileio.join(staging, shard["file"]), fileio.join(output, shard["file"]))
    from pipeline.dataset_card import write_card
    from pipeline.report import write_report

    write_report(output, manifest)
    write_card(output, manifest)
    encoded = json.dumps(manifest, indent=2, sort_keys=False).encode()
    if fileio.is_local(output):  # an object store's PUT is atomic; a local file needs a rename
        fileio.write_bytes(manifest_path + ".tmp", encoded)
        fileio.move(manifest_path + ".tmp", manifest_path)
    else:
        fileio.write_bytes(manifest_path, encoded)
