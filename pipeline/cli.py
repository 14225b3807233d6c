"""The `gristmill` command line: run, validate, list, inspect, report, train-quality."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

from pipeline.fileio import user_path
from pipeline.inspect import read_manifest, summary
from pipeline.malloc import tune_malloc
from pipeline.readers import FORMATS
from pipeline.recipe import DEFAULT_RECIPE
from pipeline.signals import console_outlives_its_reader, sigterm_unwinds, stop_signals_exit_with

EXIT_OK, EXIT_RUN_FAILED, EXIT_BAD_INPUT = 0, 1, 2  # stopped by a signal: 128 + its number
EXIT_BROKEN_PIPE = 141  # what a shell reports for a program that SIGPIPE ended


def _default_recipe() -> str:
    local = Path("recipes/default.toml")
    return str(local if local.exists() else DEFAULT_RECIPE)


def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0:  # also NaN; 0 printed a progress line every poll
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {value!r}")
    return seconds


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more, not {value!r}")
    return number


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gristmill",
        description="Curate LLM pretraining corpora with one Apache Beam pipeline.",
        epilog="`run` also takes Beam's pipeline options (--runner, --direct_num_workers, --job_endpoint ...).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a recipe",
        allow_abbrev=False,
        epilog="Beam's pipeline options (--runner, --direct_num_workers, --job_endpoint ...) pass through; "
        "an option neither gristmill nor Beam knows is an error.",
    )
    run.add_argument("--recipe", default=None, help="recipe TOML (default: recipes/default.toml)")
    run.add_argument(
        "--input",
        nargs="+",
        action="extend",
        default=None,
        metavar="GLOB",
        help="input files (several globs, option may be repeated); replace [input] paths",
    )
    run.add_argument("--output", type=user_path, default="out", help="output folder (default: ./out)")
    run.add_argument("--text-field", help="field holding the text (replaces [input] text_field)")
    run.add_argument(
        "--html-field",
        help="field holding an HTML page whose main text is the document's text (replaces [input] html_field)",
    )
    run.add_argument("--id-field", help="field holding the id (replaces [input] id_field)")
    run.add_argument("--url-field", help="field holding the URL (replaces [input] url_field)")
    run.add_argument(
        "--input-format",
        choices=FORMATS,
        help="read every input as this format, whatever its name says (replaces [input] format; "
        "a .gz, .zst, .bz2 or .xz suffix still chooses the decompression)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress; print only the summary")
    run.add_argument(
        "--progress-interval",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="seconds between progress lines when output is not a terminal (default 30)",
    )
    run.add_argument(
        "--checkpoints",
        choices=("auto", "on", "off"),
        default="auto",
        help="checkpoint phases so a rerun resumes (auto: on with the local runner, off on clusters)",
    )
    run.add_argument("--work-dir", type=user_path, help="checkpoint folder (default: OUTPUT/.gristmill-work)")
    run.add_argument("--fresh", action="store_true", help="ignore and delete earlier checkpoints")
    run.add_argument("--keep-work", action="store_true", help="keep the checkpoints after a successful run")
    storage = (
        "Beam's filesystem options (--s3_endpoint_url, --s3_region_name ...) pass through, for object stores."
    )
    validate = commands.add_parser(
        "validate", help="parse a recipe, build every stage, print the resolved recipe", epilog=storage
    )
    recipe = validate.add_mutually_exclusive_group(required=True)
    recipe.add_argument("recipe", nargs="?", help="recipe TOML")
    recipe.add_argument(
        "--recipe", dest="recipe_option", metavar="FILE", help="the same, named as `run` takes it"
    )
    listing = commands.add_parser("list", help="registered stages and generators: doc, parameters, reasons")
    listing.add_argument("stage", nargs="?", help="show only this stage or generator")
    inspect = commands.add_parser("inspect", help="what an output folder holds, and why", epilog=storage)
    inspect.add_argument("directory", type=user_path)
    inspect.add_argument(
        "--reason", help="show rejected documents with this reason code (with --failed: this error)"
    )
    inspect.add_argument("--stage", help="show rejected documents from this stage")
    part = inspect.add_mutually_exclusive_group()  # before, --kept --failed showed failed silently
    part.add_argument("--failed", action="store_true", help="show failed records")
    part.add_argument("--kept", action="store_true", help="show kept documents")
    inspect.add_argument("--id", dest="doc_id", metavar="ID", help="one document's fate")
    inspect.add_argument("--sample", type=_count, default=5, help="how many examples (default 5)")
    inspect.add_argument("--json", action="store_true", help="machine-readable output (docs/inspect.md)")
    report = commands.add_parser("report", help="(re)write DIR/report.html", epilog=storage)
    report.add_argument("directory", type=user_path)
    commands.add_parser(
        "train-quality", help="train a quality model (see `gristmill train-quality --help`)", add_help=False
    )
    return parser


def _own_options(parser: argparse.ArgumentParser, command: str) -> list[str]:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [o for a in subparsers.choices[command]._actions for o in a.option_strings]


# Never reach for a model hub at run time; keep gRPC, Hugging Face and Dask chatter off the console
# (an in-process Dask cluster logged 26 lines of INFO a run). Worker processes inherit these.
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
    "DASK_LOGGING__DISTRIBUTED": "warning",
}


def main(argv: list[str] | None = None) -> int:
    for key, value in QUIET_OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(key, value)
    tune_malloc()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "train-quality":
        from quality_models.train import main as train_main

        return train_main(argv[1:])
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("run", *TAKE_FILESYSTEM_OPTIONS):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # Beam's notice about optional GCP clients is noise here
        handler.addFilter(lambda record: "apitools not found" not in record.getMessage())
    try:
        if args.command == "run":
            with sigterm_unwinds(), console_outlives_its_reader():
                return _run(args, extra, _own_options(parser, "run"))
        if args.command == "list":
            return _list(args.stage)
        own = _own_options(parser, args.command)
        _use_filesystem_options(getattr(args, "directory", None), extra, own, args.command)
        if args.command == "validate":
            return _validate(args.recipe or args.recipe_option)
        if args.command == "inspect":
            from pipeline.inspect import inspect_command

            return inspect_command(args)
        if args.command == "report":
            from pipeline.report import write_report

            print(write_report(args.directory, read_manifest(args.directory)))
            return EXIT_OK
    except ValueError as error:  # ConfigError, InputError, UsageError: one clear line
        print(f"gristmill: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM during `run`
        signum = getattr(interrupt, "signum", signal.SIGINT)
        stopped = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
        detail = f": {interrupt}" if str(interrupt) else ""
        print(f"gristmill: {stopped}{detail}", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # whatever read our output stopped (`gristmill inspect OUT | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing to flush at exit
        return EXIT_BROKEN_PIPE
    except OSError as error:  # `inspect`/`report` on a folder they may not read or write
        if args.command == "run":
            raise
        print(f"gristmill: error: {error}", file=sys.stderr)
        return EXIT_RUN_FAILED
    return EXIT_OK


TAKE_FILESYSTEM_OPTIONS = ("inspect", "report", "validate")


def _use_filesystem_options(
    directory: str | None, flags: list[str], own_options: list[str], command: str
) -> None:
    """Give Beam's filesystems the options the command was given (`--s3_endpoint_url`, keys,
    region: without any, Beam's S3 filesystem failed every call), and ask the store of an s3://
    output `directory` once for a key, so that a dead endpoint or refused credentials are one
    line at once."""
    from pipeline import fileio
    from pipeline.preflight import check_beam_options

    check_beam_options(flags, own_options, command)
    options = fileio.use_options(flags)
    if directory is not None:
        fileio.check_filesystem(directory, "output folder")
        fileio.check_reachable([("output folder", directory)], options)


def _run(args, beam_args: list[str], own_options: list[str]) -> int:
    from dataclasses import replace

    from apache_beam.options.pipeline_options import StandardOptions

    from pipeline import fileio
    from pipeline.checkpoints import CheckpointSettings
    from pipeline.decisions import SpillOptions
    from pipeline.output_folder import remove_if_empty
    from pipeline.preflight import (
        check_beam_options,
        check_folder,
        check_inputs,
        check_mixture,
        check_output,
        check_tokenizer,
    )
    from pipeline.progress import console_progress
    from pipeline.recipe import language_notes, load_recipe
    from pipeline.run import (
        LOCAL_RUNNERS,
        PipelineFailed,
        PublishFailed,
        RunFailed,
        checkpoints_enabled,
        pipeline_options,
        run_recipe,
    )
    from pipeline.runners import map_option

    check_beam_options(beam_args, own_options)
    # Object stores (s3://, gs://) take their credentials and endpoint from the Beam options, and
    # the input check below reads through them before any pipeline exists.
    options = fileio.set_options(pipeline_options(beam_args))
    recipe = load_recipe(args.recipe or _default_recipe(), args.input)
    fields = {
        "text_field": args.text_field,
        "html_field": args.html_field,
        "id_field": args.id_field,
        "url_field": args.url_field,
        "format": args.input_format,
    }
    recipe.input = replace(recipe.input, **{k: v for k, v in fields.items() if v})
    if (options.view_as(StandardOptions).runner or "") not in LOCAL_RUNNERS:
        # A cluster's workers run in folders of their own, where a relative path names other files.
        recipe.input = replace(recipe.input, paths=tuple(map(_absolute, recipe.input.paths)))
        # The documents' sources are then absolute: a mixture pattern naming a relative path is too
        # (one starting with a wildcard matches either way).
        mixture = {
            (pattern if pattern.startswith(("*", "?", "[")) else _absolute(pattern)): weight
            for pattern, weight in recipe.output.mixture.items()
        }
        recipe.output = replace(recipe.output, mixture=mixture)
        args.output = _absolute(args.output)
        args.work_dir = args.work_dir and _absolute(args.work_dir)
        beam_args = map_option(beam_args, "spill_dir", _absolute)
        options = fileio.set_options(pipeline_options(beam_args))
    for note in language_notes(recipe):
        print(note, file=sys.stderr)
    spill_dir = options.view_as(SpillOptions).spill_dir
    outputs = [("--output", args.output), ("--work-dir", args.work_dir), ("--spill_dir", spill_dir)]
    named = [(what, path) for what, path in [*(("--input", p) for p in recipe.input.paths), *outputs] if path]
    for what, path in named:
        fileio.check_filesystem(path, what)
    fileio.check_reachable(named, options)
    notes: list[str] = []
    checkpoints = CheckpointSettings(args.checkpoints, args.work_dir, args.fresh, args.keep_work)
    work_dir = args.work_dir if checkpoints_enabled(checkpoints, options) else None
    inputs = check_inputs(recipe.input, notes, args.output, work_dir)
    for note in notes:
        print(note, file=sys.stderr)
    check_mixture(recipe, inputs)
    check_tokenizer(recipe)
    for option, folder in (("--work-dir", args.work_dir), ("--spill_dir", spill_dir)):
        if folder:
            check_folder(folder, option)
    created = not os.path.exists(args.output)
    check_output(args.output)
    for note in _disk_space_notes(recipe, inputs, args.output, options, checkpoints):
        print(note, file=sys.stderr)
    if not args.quiet:
        print(
            f"gristmill: running {recipe.path} ({len(recipe.stages)} stages) into {args.output}",
            file=sys.stderr,
        )
    progress = None if args.quiet else console_progress(args.progress_interval)
    try:
        result = run_recipe(recipe, args.output, beam_args, progress, checkpoints, inputs)
    except PipelineFailed as error:
        if created:
            remove_if_empty(args.output)
        published = "" if isinstance(error, PublishFailed) else ", nothing published"
        print(f"gristmill: run failed{published}: {error}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except RunFailed as error:
        print(summary(read_manifest(args.output), args.output))
        print(f"gristmill: run failed: {error}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except (KeyboardInterrupt, ValueError):  # interrupted, or refused before anything ran
        if created:
            remove_if_empty(args.output)
        raise
    print(summary(result.manifest, args.output))
    return EXIT_OK


def _absolute(path: str) -> str:
    """A local path made absolute (`~` expanded); any other path as it is."""
    from pipeline import fileio

    return os.path.abspath(fileio.user_path(path)) if fileio.is_local(path) else path


def _disk_space_notes(recipe, inputs, output: str, options, checkpoints) -> list[str]:
    """preflight's notes on disks with less space free than the run may write, for the local
    runner (a cluster's workers write their spill files and checkpoints on their own disks)."""
    from apache_beam.options.pipeline_options import StandardOptions

    from pipeline.preflight import disk_space_notes
    from pipeline.run import LOCAL_RUNNERS, checkpoints_enabled, spill_root

    if (options.view_as(StandardOptions).runner or "") not in LOCAL_RUNNERS:
        return []
    folders = {"the output": output, "the spill files": spill_root(options, output) or output}
    if checkpoints_enabled(checkpoints, options):
        folders["the checkpoints"] = checkpoints.work_dir or output
    return disk_space_notes(recipe, inputs, folders)


def _validate(path: str) -> int:
    from pipeline.preflight import check_tokenizer
    from pipeline.recipe import language_notes, load_recipe

    recipe = load_recipe(path)
    check_tokenizer(recipe)
    if recipe.output.mixture:  # checked before anything is printed: a refused recipe prints no JSON
        _validate_mixture(recipe)
    print(json.dumps(recipe.resolved(), indent=2, default=str))
    for stage in recipe.stages:
        extra = stage.manifest_extra()
        if extra:
            print(f"\n{stage.name}:")
            print(json.dumps(extra, indent=2, default=str))
    for note in language_notes(recipe):
        print(note, file=sys.stderr)
    print(f"\nok: {len(recipe.stages)} stages, {len(recipe.generators)} generators", file=sys.stderr)
    return EXIT_OK


def _validate_mixture(recipe) -> None:
    """Check `[output] mixture` against the recipe's local inputs as `run` will (a pattern that no
    source matches is an error); with inputs elsewhere or not here, say it was not checked."""
    from pipeline import fileio
    from pipeline.preflight import check_mixture
    from pipeline.readers import InputError, input_files

    if not all(fileio.is_local(path) for path in recipe.input.paths):
        print("note: [output] mixture not checked: the inputs are not local", file=sys.stderr)
        return
    try:
        inputs = input_files(recipe.input.paths) if recipe.input.paths else {}
    except InputError as error:
        print(f"note: [output] mixture not checked: {error}", file=sys.stderr)
        return
    check_mixture(recipe, inputs)


def _list(stage: str | None) -> int:
    from pipeline.docs import registry_text

    print(registry_text(stage))
    return EXIT_OK


def console_main() -> None:
    """The `gristmill` command: `main`, then exit with its status. A stop signal that comes after
    the command ended, while the interpreter and Beam shut down, exits with that status too."""
    code = main()
    stop_signals_exit_with(code)
    sys.exit(code)


if __name__ == "__main__":
    console_main()
