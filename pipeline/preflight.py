"""Checks `gristmill run` makes before anything is created: options, input globs, the text field.

Each problem is a `UsageError` with one line naming the option, glob, file or field, so a
misspelled option or a wrong field name stops the run in a second instead of after the run.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from itertools import islice

from pipeline import fileio
from pipeline.document import Document
from pipeline.file_start import WHOLE_FILE_ERRORS
from pipeline.output_folder import (
    OTHER_DISK_ADVICE,
    check_inputs_outside,
    earlier_outputs,
    folders_by_disk,
    is_output_file,
    is_shard_of,
)
from pipeline.readers import (
    STREAM_ADVICE,
    InputConfig,
    InputError,
    Split,
    detect_format,
    glob_files,
    one_name_per_file,
    read_split,
)
from pipeline.recipe import Recipe
from pipeline.stages import CollectionStage, ConfigError, closest_name

PROBE_RECORDS = 20
FIELD_FORMATS = ("jsonl", "json", "parquet")  # WARC/WET have no field names
# Rough bytes of text per stored byte of input, for the disk-space note: a WARC's pages are mostly
# markup and headers (0.19-0.83 of a gzipped WARC's size on the shared samples), Parquet is compressed.
TEXT_PER_STORED_BYTE = {"warc": 0.15, "html": 0.3, "parquet": 2.0}
TEXT_PER_COMPRESSED_BYTE = 3.0  # gzip, zstd, bzip2 or xz on text
# A local run writes about (1 + 0.7 x its whole-collection stages) times the text it reads: output,
# checkpoints and spill files. Peaks measured: recipes/fineweb.toml (one) 1.4-2.2x, two dedup stages
# 2.2x, recipes/default.toml (five) 3.6-4.6x (benchmarks/results/memory.md, wave 17).
WRITTEN_PER_TEXT_BYTE = 1.0
WRITTEN_PER_TEXT_BYTE_PER_COLLECTION_STAGE = 0.7


class UsageError(ValueError):
    """A command line that cannot be what the user meant."""


def beam_option_names(flags: list[str]) -> tuple[list[str], list[str]]:
    """(unknown, known): which of `flags` Beam's own PipelineOptions parser does not recognize
    (options and stray positional arguments, in order), and the option names it knows.

    Uses the parser Beam builds from every registered PipelineOptions class (runner-specific
    classes included), reached through `get_all_options`'s public `add_extra_args_fn` hook.
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.runners import load_runner_options

    load_runner_options(flags)  # the runner's own options (e.g. Dask's) are registered on import
    parsers = []
    PipelineOptions([]).get_all_options(add_extra_args_fn=parsers.append)  # no flags: no warning of its own
    parser = parsers[0]
    _, unknown = parser.parse_known_args(flags)
    known = sorted(option for action in parser._actions for option in action.option_strings)
    return unknown, known


def check_beam_options(flags: list[str], own_options: list[str], command: str = "run") -> None:
    """Reject options that neither `gristmill COMMAND` nor Beam knows, suggesting the nearest real
    one, and positional arguments (Beam would drop them with a warning: `run other.toml` ran the
    default recipe)."""
    unknown, known = beam_option_names(flags)
    if not unknown:
        return
    if not unknown[0].startswith("-"):
        stray = unknown[0]
        meant = "--recipe" if stray.endswith(".toml") else "--input"
        hint = f" (did you mean {meant} {stray}?)" if command == "run" else ""
        raise UsageError(f"unexpected argument {stray!r}: `gristmill {command}` takes options only{hint}")
    name = unknown[0].split("=", 1)[0]
    close = closest_name(name, own_options + known)
    hint = f" (did you mean {close}?)" if close else ""
    raise UsageError(
        f"unknown option {name}{hint}; see `gristmill {command} --help` and Beam's pipeline options"
    )


def check_inputs(
    config: InputConfig, notes: list[str] | None = None, output: str = "", work_dir: str | None = None
) -> dict[str, fileio.FileInfo]:
    """Every input file with its size and date (as `input_files`: listed once, each file once); a
    glob matching nothing or a text field absent from a file's first records is an error naming
    it, and so are files of an earlier gristmill output other than its shards, and (with `output`)
    files where the run replaces or deletes files (`check_inputs_outside`). A file whose first
    texts are HTML pages, and shards of an earlier output, add a line to `notes`."""
    if "-" in config.paths:
        raise UsageError(f"--input -: gristmill reads files, not standard input {STREAM_ADVICE}")
    listed = {pattern: glob_files(pattern) for pattern in config.paths}
    files: dict[str, fileio.FileInfo] = {}
    for matched in listed.values():
        files.update(matched)
    if output:  # before the text-field check: a checkpoint marker read as input said "no text field"
        check_inputs_outside(output, list(files), work_dir)
    for matched in listed.values():
        first = next(iter(matched))
        note = check_text_field(first, config, matched[first].size)
        if note and notes is not None:
            notes.append(note)
    for output, paths in earlier_outputs(list(files)).items():
        if own := [path for path in paths if not is_shard_of(path, output) and is_output_file(path)]:
            raise UsageError(
                f"{own[0]}: --input matches the files of an earlier gristmill output ({output}: its "
                "manifest, report and marker are not input); narrow the glob"
            )
        shards = [path for path in paths if is_shard_of(path, output)]
        if shards and notes is not None:
            notes.append(
                f"gristmill: note: {len(shards)} input files are shards of an earlier gristmill output "
                f"({output}: kept/, rejected/, failed/); they are read as input like any other file"
            )
    return dict(sorted(one_name_per_file(files).items()))


def check_mixture(recipe: Recipe, inputs: dict[str, fileio.FileInfo]) -> None:
    """A mixture pattern that no document's `source` can match (no input file, no generator) is
    a typo: its weight would silently give the other groups everything."""
    from pipeline.kept_output import mixture_group  # imports Beam: only when a run is starting

    sources = [*inputs, *(f"synthetic:{generator.name}" for generator in recipe.generators)]
    patterns = list(recipe.output.mixture)
    groups = {mixture_group(source, patterns) for source in sources}
    for pattern in patterns:
        if pattern in groups:
            continue
        where = f"{recipe.path}: [output] mixture: {pattern!r}"
        if any(fnmatch.fnmatchcase(source, pattern) for source in sources):
            raise UsageError(f"{where} gets no document: an earlier pattern matches its sources first")
        examples = ", ".join(repr(source) for source in sources[:3]) or "none"
        raise UsageError(
            f"{where} matches no input file and no generator (patterns are matched against "
            f"each document's source, such as {examples})"
        )


def check_tokenizer(recipe: Recipe) -> None:
    """Load a tokenizer the recipe names by path once, so a wrong path or file stops the run
    before anything runs (the workers load it only when the first kept rows reach them)."""
    from pipeline.tokenizer import BUNDLED, load_tokenizer, tokenizer_path

    if recipe.output.tokenizer not in ("none", BUNDLED):
        try:
            load_tokenizer(tokenizer_path(recipe.output.tokenizer))
        except ConfigError as error:  # named with its recipe, as every other recipe error is
            raise ConfigError(f"{recipe.path}: {error}") from None


def check_output(folder: str) -> None:
    """A local output folder can be created and written (an object store is checked by the run)."""
    if not fileio.is_local(folder):
        return
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--output {folder}: cannot create the folder: {error.strerror}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--output {folder}: the folder is not writable")


def check_folder(folder: str, option: str) -> None:
    """A local folder that `option` names (`--work-dir`, `--spill_dir`) can be made and written: the
    nearest path that exists at or above it is a writable folder (object stores: checked by the run)."""
    if not fileio.is_local(folder):
        return
    existing = os.path.abspath(folder)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(f"{option} {folder}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {folder}: {existing} is not writable")


def check_text_field(path: str, config: InputConfig, size: int) -> str:
    """Stop when none of `path` (of `size` bytes) can be read (compressed but named as plain,
    UTF-16: any format), or when its first records (JSON, JSON Lines, Parquet) all lack the text
    field (e.g. GSM8K's question/answer), hold something else than a string there (a list of
    paragraphs), or all fail alike (not JSON Lines, arrays instead of objects). Returns a note
    when most of those texts are whole HTML pages (the filters would judge their markup)."""
    fields = detect_format(path, config.format)[0] in FIELD_FORMATS
    # The whole file as one split, read lazily: only the first records are parsed (of a text, HTML
    # or WARC file, the first, for a file none of which can be read).
    records = list(islice(read_split(Split(path, 0, size), config), PROBE_RECORDS if fields else 1))
    if records and getattr(records[0], "error", None) in WHOLE_FILE_ERRORS:
        raise InputError(f"{path}: {records[0].message}")
    if not fields:
        return ""
    text_errors = ("MissingText", "NonStringText")  # answered below: choose another text field
    errors = {getattr(r, "error", None) for r in records}
    if len(errors) == 1 and None not in errors and not errors & set(text_errors):
        malformed = records[0].error == "MalformedJson"
        hint = " (JSON Lines needs one object per line; `jq -c` writes them so)" if malformed else ""
        raise InputError(
            f"{path}: none of the first {len(records)} records could be read: {records[0].error}: "
            f"{records[0].message}{hint}"
        )
    unusable = [r for r in records if getattr(r, "error", None) in text_errors]
    option = "html-field" if config.html_field else "text-field"
    if unusable and not any(getattr(r, "text", None) is not None for r in records):
        field = config.html_field or config.text_field
        what = "a text field" if unusable[0].error == "MissingText" else f"a string in {field!r}"
        raise InputError(
            f"{path}: none of the first {len(records)} records has {what}: {unusable[0].message}; "
            f"choose one with --{option} or [input] {option.replace('-', '_')}"
        )
    documents = [r for r in records if isinstance(r, Document) and r.kind is None]
    check_named_fields(path, documents, config)
    texts = [doc.text for doc in documents]
    pages = sum(text.lstrip()[:20].lower().startswith(("<!doctype html", "<html")) for text in texts)
    if not config.html_field and pages * 2 > len(texts):
        return (
            f"note: {path}: {pages} of the first {len(texts)} texts in {config.text_field!r} are HTML "
            "pages, which the filters would judge as text, markup included; to read each page's main "
            f"text, name the field with --html-field {config.text_field} (or [input] html_field)"
        )
    return ""


def check_named_fields(path: str, documents: list[Document], config: InputConfig) -> None:
    """Stop when an id or URL field named in place of the default (`--id-field`, `--url-field`)
    is in none of a file's first documents: most likely misspelt, it would give every document
    a `file:position` id or no URL without a word."""
    if not documents:
        return
    default = InputConfig()
    named = [  # (key, the field named, whether none of the documents has a value in it)
        ("id_field", config.id_field, all(doc.id.startswith(f"{doc.source}:") for doc in documents)),
        ("url_field", config.url_field, all(doc.url is None for doc in documents)),
    ]
    for key, field, missing in named:
        if missing and field != getattr(default, key):
            option = key.replace("_", "-")
            raise InputError(
                f"{path}: none of the first {len(documents)} documents has a value in {field!r} "
                f"(--{option} / [input] {key}); name a field they hold, or leave {key} out"
            )


def estimated_text_bytes(inputs: dict[str, fileio.FileInfo], config: InputConfig) -> float:
    """About how many bytes of text `inputs` hold, from their sizes, formats and compression."""
    total = 0.0
    for path, info in inputs.items():
        fmt, compression = detect_format(path, config.format)
        per_byte = TEXT_PER_STORED_BYTE.get(fmt, 1.0)
        total += info.size * per_byte * (TEXT_PER_COMPRESSED_BYTE if compression else 1.0)
    return total


def collection_stages(recipe: Recipe) -> int:
    """How many of `recipe`'s stages see the whole collection (dedup, `score_threshold`)."""
    return sum(isinstance(stage, CollectionStage) for stage in recipe.stages)


def written_bytes(recipe: Recipe, inputs: dict[str, fileio.FileInfo]) -> float:
    """About how many bytes a local run of `recipe` over `inputs` writes at its peak."""
    factor = WRITTEN_PER_TEXT_BYTE + WRITTEN_PER_TEXT_BYTE_PER_COLLECTION_STAGE * collection_stages(recipe)
    return estimated_text_bytes(inputs, recipe.input) * factor


def disk_space_notes(
    recipe: Recipe, inputs: dict[str, fileio.FileInfo], folders: dict[str, str]
) -> list[str]:
    """A note for each local disk among `folders` ({what is written: folder}) with less space free
    than a local run of `recipe` over `inputs` may write (a rough estimate: the run goes on)."""
    from pipeline.progress import size_text

    written = written_bytes(recipe, inputs)
    count = collection_stages(recipe)
    stages = f"{count} whole-collection stage{'' if count == 1 else 's'}"
    notes = []
    for folder, whats in folders_by_disk(folders):
        free = shutil.disk_usage(folder).free
        if free < written:
            notes.append(
                f"note: {size_text(free)} free on {folder} ({', '.join(whats)}), and this run may write "
                f"about {size_text(written)} (output, checkpoints, and the spill files of its {stages}); "
                f"if the disk fills, the run stops: make room first, or {OTHER_DISK_ADVICE}"
            )
    return notes
