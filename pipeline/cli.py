"""The `gristmill` command line: run, validate, list, inspect, report, train-quality."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from pipeline.recipe import DEFAULT_RECIPE
from pipeline.stages import ConfigError

EXIT_OK, EXIT_RUN_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _default_recipe() -> str:
    local = Path("recipes/default.toml")
    return str(local if local.exists() else DEFAULT_RECIPE)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gristmill",
        description="Curate LLM pretraining corpora with one Apache Beam pipeline.",
        epilog="Unknown options of `run` pass through to Beam (--runner, --direct_num_workers, --job_endpoint ...).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a recipe")
    run.add_argument("--recipe", default=None, help="recipe TOML (default: recipes/default.toml)")
    run.add_argument(
        "--input", nargs="+", default=None, metavar="GLOB", help="input files; replace [input] paths"
    )
    run.add_argument("--output", default="out", help="output folder (default: ./out)")
    run.add_argument("--quiet", action="store_true", help="print only the summary")
    validate = commands.add_parser(
        "validate", help="parse a recipe, build every stage, print the resolved recipe"
    )
    validate.add_argument("recipe")
    commands.add_parser("list", help="every registered stage and generator: doc, parameters, reason codes")
    inspect = commands.add_parser("inspect", help="summary of an output folder")
    inspect.add_argument("directory")
    inspect.add_argument("--reason", help="show rejected examples with this reason code")
    inspect.add_argument("--stage", help="show rejected examples from this stage")
    inspect.add_argument("--failed", action="store_true", help="show failed records")
    inspect.add_argument("--sample", type=int, default=5, help="how many examples (default 5)")
    report = commands.add_parser("report", help="(re)write DIR/report.html")
    report.add_argument("directory")
    commands.add_parser(
        "train-quality", help="train a quality model (see `gristmill train-quality --help`)", add_help=False
    )
    return parser


# Never reach for a model hub at run time; keep gRPC and Hugging Face chatter off the console.
# Worker processes inherit these.
QUIET_OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TQDM_DISABLE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "GRPC_VERBOSITY": "ERROR",
    "TOKENIZERS_PARALLELISM": "false",
}


def main(argv: list[str] | None = None) -> int:
    for key, value in QUIET_OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(key, value)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "train-quality":
        from quality_models.train import main as train_main

        return train_main(argv[1:])
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # Beam's notice about optional GCP clients is noise here
        handler.addFilter(lambda record: "apitools not found" not in record.getMessage())
    try:
        if args.command == "run":
            return _run(args, extra)
        if args.command == "validate":
            return _validate(args.recipe)
        if args.command == "list":
            return _list()
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "report":
            from pipeline.report import write_report

            _require_manifest(args.directory)
            print(write_report(args.directory))
            return EXIT_OK
    except ConfigError as error:
        print(f"gristmill: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as error:  # InputError and friends: one clear line
        print(f"gristmill: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


def _require_manifest(directory: str) -> dict:
    from pipeline import fileio

    path = fileio.join(directory, "manifest.json")
    if not fileio.exists(path):
        raise ConfigError(f"{directory}: no manifest.json (not a finished gristmill output folder)")
    return json.loads(fileio.read_bytes(path))


def _run(args, beam_args: list[str]) -> int:
    from pipeline.recipe import load_recipe
    from pipeline.run import PipelineFailed, RunFailed, run_recipe

    recipe = load_recipe(args.recipe or _default_recipe(), args.input)
    if not args.quiet:
        print(
            f"gristmill: running {recipe.path} ({len(recipe.stages)} stages) into {args.output}",
            file=sys.stderr,
        )
    try:
        result = run_recipe(recipe, args.output, beam_args)
    except PipelineFailed as error:
        print(f"gristmill: run failed, nothing published: {error}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except RunFailed as error:
        manifest = _require_manifest(args.output)
        print(summary(manifest, args.output))
        print(f"gristmill: run failed: {error}", file=sys.stderr)
        return EXIT_RUN_FAILED
    print(summary(result.manifest, args.output))
    return EXIT_OK


def summary(manifest: dict, directory: str) -> str:
    """The human summary printed after a run and by `inspect`."""
    counts = manifest["counts"]
    lines = [
        f"run {manifest['run']}: read {counts['input']}, kept {counts['kept']}, "
        f"rejected {counts['rejected']}, failed {counts['failed']} in {manifest['seconds']} s "
        f"(conservation {'ok' if manifest['conservation'] else 'BROKEN'})",
        f"{'stage':<22}{'in':>9}{'kept':>9}{'rejected':>10}{'failed':>8}{'sec':>8}  reasons",
    ]
    for stage in manifest["stages"]:
        rejected = sum(stage["rejected"].values())
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(stage["rejected"].items(), key=lambda kv: -kv[1]))
        fmt = lambda v: "-" if v is None else str(v)  # noqa: E731
        lines.append(
            f"{stage['name'][:21]:<22}{fmt(stage.get('in')):>9}{fmt(stage.get('kept')):>9}{rejected:>10}"
            f"{stage.get('failed') or 0:>8}{fmt(stage.get('seconds')):>8}  {reasons}"
        )
    for problem in manifest["problems"]:
        lines.append(f"PROBLEM: {problem}")
    lines.append(f"report: {os.path.join(directory, 'report.html')}")
    return "\n".join(lines)


def _validate(path: str) -> int:
    from pipeline.recipe import load_recipe

    recipe = load_recipe(path)
    print(json.dumps(recipe.resolved(), indent=2, default=str))
    for stage in recipe.stages:
        extra = stage.manifest_extra()
        if extra:
            print(f"\n{stage.name}:")
            print(json.dumps(extra, indent=2, default=str))
    print(f"\nok: {len(recipe.stages)} stages, {len(recipe.generators)} generators", file=sys.stderr)
    return EXIT_OK


def _list() -> int:
    from pipeline.docs import registry_text

    print(registry_text())
    return EXIT_OK


def _inspect(args) -> int:
    import pyarrow.dataset as ds

    manifest = _require_manifest(args.directory)
    print(summary(manifest, args.directory))
    part = "failed" if args.failed else "rejected"
    if not (args.reason or args.stage or args.failed):
        return EXIT_OK
    folder = os.path.join(args.directory, part)
    if not os.listdir(folder):
        print(f"no {part} records")
        return EXIT_OK
    table = ds.dataset(folder, format="parquet").to_table()
    rows = table.to_pylist()
    if args.reason:
        rows = [r for r in rows if r.get("reason") == args.reason]
    if args.stage:
        rows = [r for r in rows if r.get("stage") == args.stage]
    print(f"\n{len(rows)} {part} records match; showing {min(len(rows), args.sample)}:")
    for row in rows[: args.sample]:
        text = row.pop("text", None)
        print("-" * 80)
        print(json.dumps(row, ensure_ascii=False))
        if text:
            print(text[:600] + (" …" if len(text) > 600 else ""))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
