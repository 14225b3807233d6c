"""Build the Beam graph for a recipe, run it, and publish the output folder atomically.

The pipeline writes into a staging folder inside OUT; when it has finished, the driver checks
conservation (read = kept + rejected + failed), fills in empty kept shards, swaps the staging
folders into place and writes `manifest.json` last, so a folder with a manifest is complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipeline.beam_fixes import apply_local_runner_fixes
from pipeline.beam_stages import ApplyStages, LostElements
from pipeline.document import Document, Failure, Rejection
from pipeline.progress import Channel, ConsoleProgress, read_step
from pipeline.readers import Split, expand_paths, plan_splits, read_split
from pipeline.recipe import Recipe
from pipeline.writers import (
    ScoreNames,
    WriteShards,
    encode_shard,
    failed_row,
    kept_row,
    rejected_row,
    shard_name,
    write_file,
)

LOG = logging.getLogger("gristmill")
OUTPUT_PARTS = ("kept", "rejected", "failed")
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


def _to_document_stream(record):
    if isinstance(record, Document):
        return record
    if isinstance(record, Rejection):
        return beam.pvalue.TaggedOutput("rejected", record)
    return beam.pvalue.TaggedOutput("failed", record)


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
        write_file(f"{directory}/{name}.json", json.dumps({"count": count}).encode())
        return count

    return write


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
    read = records | "ByOutcome" >> beam.Map(_to_document_stream).with_outputs(
        "rejected", "failed", main="docs"
    )
    tap = channel.tap_stage_outputs if channel else None
    outputs = read.docs | "Stages" >> ApplyStages(recipe.stages, recipe.run.batch_size, tap)
    rejected = (read.rejected, outputs.rejected) | "Rejected" >> beam.Flatten()
    failed = (read.failed, outputs.failed) | "Failed" >> beam.Flatten()
    if channel:  # taps before any Flatten: the local runner holds a Flatten's output until it ends
        taps = [(source, "read") for source in sources]
        taps += [(read.rejected, "rejected"), (read.failed, "failed"), (outputs.kept, "kept")]
        for index, (pcoll, prefix) in enumerate(taps):
            channel.tap(pcoll, prefix, f"Progress_{prefix}_{index}")
    out = recipe.output
    keep_text = recipe.run.keep_rejected_text
    kept_rows = outputs.kept | "KeptRows" >> beam.Map(kept_row)
    rejected_rows = rejected | "RejectedRows" >> beam.Map(rejected_row, keep_text)
    names = (kept_rows, rejected_rows) | ScoreNames()
    _ = names | "WriteScoreNames" >> beam.Map(
        lambda n: write_file(f"{staging}/score_names.json", json.dumps(n).encode())
    )
    shard_options = (out.shards, out.target_shard_mb, out.compression, out.row_group_mb)
    infos = [
        kept_rows | WriteShards(staging, "kept", *shard_options, names),
        rejected_rows | WriteShards(staging, "rejected", *shard_options, names),
        failed | "FailedRows" >> beam.Map(failed_row) | WriteShards(staging, "failed", *shard_options),
    ]
    _ = (
        tuple(infos)
        | "AllShards" >> beam.Flatten()
        | "ShardList" >> beam.combiners.ToList()
        | "WriteShardList"
        >> beam.Map(lambda shards: write_file(f"{staging}/shards.json", json.dumps(shards).encode()))
    )


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
    os.makedirs(output, exist_ok=True)
    staging = os.path.join(output, f".staging-{uuid.uuid4().hex[:12]}")
    started = time.time()
    options = pipeline_options(beam_args)
    try:
        pipeline = beam.Pipeline(runner=make_runner(options), options=options)
        channel = Channel.for_recipe(recipe, staging) if progress else None
        build_pipeline(pipeline, recipe, staging, channel)
        try:
            with progress.running(channel) if progress else contextlib.nullcontext():
                result = pipeline.run()
                result.wait_until_finish()
        except Exception as error:
            raise PipelineFailed(error_summary(error)) from error
        metrics = _stage_metrics(result, recipe)
        manifest = finalize(recipe, output, staging, metrics, time.time() - started, beam_args)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    problems = manifest["problems"]
    if problems:
        raise RunFailed("; ".join(problems))
    return RunResult(output, manifest)


def _read_json(path: str, default: Any) -> Any:
    try:
        with open(path) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return default


def finalize(
    recipe: Recipe, output: str, staging: str, metrics: dict, seconds: float, beam_args: list[str]
) -> dict[str, Any]:
    """Check the staged output, publish it in place of any previous run, write the manifest."""
    read_count = _read_json(f"{staging}/read_count.json", {"count": 0})["count"]
    shards = _read_json(f"{staging}/shards.json", [])
    score_names = _read_json(f"{staging}/score_names.json", [])
    for part in OUTPUT_PARTS:  # every part holds a file with the schema, even with no rows
        shards.extend(_empty_shards(recipe, staging, part, shards, score_names))
    shards.sort(key=lambda s: s["file"])
    totals = {part: sum(s["rows"] for s in shards if s["kind"] == part) for part in OUTPUT_PARTS}
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
        write_file(f"{staging}/{part}/{name}", data)
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
    return figures


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gristmill")
    except Exception:
        return "unknown"


def _publish(output: str, staging: str, manifest: dict[str, Any]) -> None:
    """Replace the previous output: drop its manifest first, swap folders, write the manifest last."""
    manifest_path = os.path.join(output, "manifest.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    for part in OUTPUT_PARTS:
        target = os.path.join(output, part)
        shutil.rmtree(target, ignore_errors=True)
        source = os.path.join(staging, part)
        if os.path.isdir(source):
            os.replace(source, target)
        else:
            os.makedirs(target)
    from pipeline.dataset_card import write_card
    from pipeline.report import write_report

    write_report(output, manifest)
    write_card(output, manifest)
    temporary = manifest_path + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=False)
    os.replace(temporary, manifest_path)
