"""Recipe loading: TOML → validated run, input, output, generator and stage settings.

Every problem is a `ConfigError` whose message names the file and, where it applies, the stage
(index and name) and the key, so a bad recipe fails before anything runs.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from filters.language import check_language_codes
from pipeline import fileio
from pipeline.readers import FORMATS, InputConfig, InputError, detect_format, glob_files
from pipeline.stages import (
    GENERATORS,
    STAGES,
    ConfigError,
    Generator,
    Stage,
    did_you_mean,
    load_plugins,
)

MIXTURE_STAGE = "mixture"  # the stage name of rows the output mixture leaves out
MAX_NAME_CHARS = 100  # of a stage's or generator's name
MAX_SHARDS = 100_000  # of each part (kept, rejected, failed): more is a typo, not a layout
MIN_SHARD_MB = 0.01  # a smaller target_shard_mb makes a shard per document or two

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RECIPE = REPO_ROOT / "recipes" / "default.toml"
HTML_EXTRACTORS = ("resiliparse", "trafilatura")


@dataclass(frozen=True)
class RunConfig:
    """The recipe's `[run]` table."""

    name: str = "gristmill"
    keep_rejected_text: bool = True
    max_failed_fraction: float = 0.001
    batch_size: int = 256


@dataclass(frozen=True)
class OutputConfig:
    """The recipe's `[output]` table: kept shards by count or by target size (MB, rows or tokens),
    row-group size, tokenizer, the seed of the global shuffle, and a mixture of sources."""

    shards: int = 0
    target_shard_mb: float = 0.0
    target_shard_rows: int = 0
    target_shard_tokens: int = 0
    row_group_mb: float = 32.0
    compression: str = "zstd"
    tokenizer: str = "none"
    token_ids: bool = False
    shuffle_seed: int = 0
    mixture: dict = field(default_factory=dict)
    mixture_max_repeat: float = 1.0


def verifies_candidates(stages: list[Stage]) -> bool:
    return any(stage.admits_candidates for stage in stages)


@dataclass
class Recipe:
    """A loaded, validated recipe; stages and generators are built but not set up."""

    path: str
    run: RunConfig
    input: InputConfig
    output: OutputConfig
    stages: list[Stage] = field(default_factory=list)
    generators: list[Generator] = field(default_factory=list)

    @property
    def verifies_candidates(self) -> bool:
        """Whether a stage admits synthesis candidates (`verify`): without one, reading rejects them."""
        return verifies_candidates(self.stages)

    def resolved(self) -> dict[str, Any]:
        """Everything with its effective value, for `gristmill validate` and the manifest."""
        return {
            "recipe": self.path,
            "run": vars(self.run),
            "input": {f.name: getattr(self.input, f.name) for f in fields(self.input) if f.name != "extra"},
            "output": vars(self.output),
            "synthesis": [{"use": g.registry_name, "name": g.name, **g.resolved()} for g in self.generators],
            "stages": [
                {
                    "use": s.registry_name,
                    "name": s.name,
                    **({"only_languages": sorted(s.only_languages)} if s.only_languages else {}),
                    **s.resolved(),
                }
                for s in self.stages
            ],
        }


def _check_output(output: OutputConfig, where: str) -> None:
    sizes = ("shards", "target_shard_mb", "target_shard_rows", "target_shard_tokens")
    for key in sizes:
        if not getattr(output, key) >= 0:  # nan too
            raise ConfigError(f"{where} {key} must be 0 (unset) or more, got {getattr(output, key)!r}")
    if not output.row_group_mb > 0:
        raise ConfigError(f"{where} row_group_mb must be above 0, got {output.row_group_mb!r}")
    if output.shards > MAX_SHARDS:
        raise ConfigError(f"{where} shards must be at most {MAX_SHARDS:,}, got {output.shards:,}")
    if 0 < output.target_shard_mb < MIN_SHARD_MB:
        raise ConfigError(
            f"{where} target_shard_mb must be at least {MIN_SHARD_MB}, got {output.target_shard_mb!r}"
        )
    chosen = [key for key in sizes if getattr(output, key)]
    if len(chosen) > 1:
        raise ConfigError(f"{where} set one of {', '.join(sizes)}, not {' and '.join(chosen)}")
    if output.compression not in ("zstd", "snappy", "gzip", "none"):
        raise ConfigError(f"{where} compression must be zstd, snappy, gzip or none")
    if output.target_shard_tokens and output.tokenizer == "none":
        raise ConfigError(f'{where} target_shard_tokens needs a tokenizer (tokenizer = "none")')
    if output.token_ids and output.tokenizer == "none":
        raise ConfigError(f'{where} token_ids needs a tokenizer (tokenizer = "none")')
    for pattern, weight in output.mixture.items():
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 < weight < math.inf:
            raise ConfigError(
                f"{where} mixture: weight of {pattern!r} must be a finite positive number, got {weight!r}"
            )
    if output.mixture_max_repeat < 1:
        raise ConfigError(f"{where} mixture_max_repeat must be at least 1 (1 = never repeat a document)")


def _refuse_repeated_names(names: list[str], kind: str, path: str) -> None:
    if repeated := sorted({name for name in names if names.count(name) > 1}):
        raise ConfigError(f"{path}: two {kind} are named {repeated[0]!r}; give one a `name`")


def _typed_table(cls, table: dict[str, Any], where: str, types: dict[str, tuple]):
    """Build a frozen config dataclass from a TOML table, rejecting unknown or mistyped keys."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table, got {type(table).__name__} {table!r}")
    known = {f.name for f in fields(cls)}
    for key, value in table.items():
        if key not in known or key == "extra":
            known -= {"extra"}
            raise ConfigError(
                f"{where}: unknown key {key!r} ({did_you_mean(key, known)}known: {', '.join(sorted(known))})"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{where}: {key} must be a finite number, got {value!r}")
        expected = types.get(key)
        if expected and (
            not isinstance(value, expected) or (bool not in expected and isinstance(value, bool))
        ):
            names = "/".join(t.__name__ for t in expected)
            raise ConfigError(f"{where}: {key} must be {names}, got {value!r}")
    return cls(**table)


def _recipe_hint(path: str) -> str:
    """Where the recipe meant by a missing `path` may be: with `.toml` added, or shipped."""
    toml = Path(f"{path}.toml")
    shipped = sorted(DEFAULT_RECIPE.parent.glob("*.toml"))
    same = [toml] if toml.exists() else [recipe for recipe in shipped if recipe.stem == Path(path).stem]
    if same:
        return f" (did you mean {same[0]}?)"
    return f" (shipped recipes: {', '.join(map(str, shipped))})" if shipped else ""


def load_recipe(path: str | Path, input_paths: list[str] | None = None) -> Recipe:
    """Parse and validate a recipe; `input_paths` (from --input) replaces `[input] paths`."""
    path = str(path)
    try:
        with open(path, "rb") as handle:
            data = tomllib.loads(handle.read().decode("utf-8-sig"))  # -sig: a BOM, as Notepad writes
    except FileNotFoundError:
        raise ConfigError(f"{path}: recipe file not found{_recipe_hint(path)}") from None
    except OSError as error:  # a folder, no permission
        raise ConfigError(f"{path}: cannot read the recipe: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (TOML must be): {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: values nested too deeply") from None
    return build_recipe(data, path, input_paths)


def build_recipe(
    data: dict[str, Any], path: str = "<recipe>", input_paths: list[str] | None = None
) -> Recipe:
    """Validate a parsed recipe and build its stages and generators."""
    load_plugins()
    tables = ("run", "input", "output", "stage", "synthesis")
    unknown = sorted(set(data) - set(tables))
    if unknown:
        raise ConfigError(
            f"{path}: unknown table [{unknown[0]}] ({did_you_mean(unknown[0], tables)}known: {', '.join(tables)})"
        )
    run = _typed_table(
        RunConfig,
        data.get("run", {}),
        f"{path}: [run]",
        {
            "name": (str,),
            "keep_rejected_text": (bool,),
            "max_failed_fraction": (float, int),
            "batch_size": (int,),
        },
    )
    if not 0 <= run.max_failed_fraction <= 1:
        raise ConfigError(
            f"{path}: [run] max_failed_fraction must be within 0..1, got {run.max_failed_fraction}"
        )
    if run.batch_size < 1:
        raise ConfigError(f"{path}: [run] batch_size must be at least 1")
    output = _typed_table(
        OutputConfig,
        data.get("output", {}),
        f"{path}: [output]",
        {
            "shards": (int,),
            "target_shard_mb": (float, int),
            "target_shard_rows": (int,),
            "target_shard_tokens": (int,),
            "row_group_mb": (float, int),
            "compression": (str,),
            "tokenizer": (str,),
            "token_ids": (bool,),
            "shuffle_seed": (int,),
            "mixture": (dict,),
            "mixture_max_repeat": (float, int),
        },
    )
    _check_output(output, f"{path}: [output]")
    input_table = data.get("input", {})
    if not isinstance(input_table, dict):
        raise ConfigError(
            f"{path}: [input] must be a table, got {type(input_table).__name__} {input_table!r}"
        )
    input_table = dict(input_table)
    if input_paths:
        input_table["paths"] = list(input_paths)
    if isinstance(input_table.get("paths"), str):
        input_table["paths"] = [input_table["paths"]]
    if "paths" in input_table:
        paths = input_table["paths"]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ConfigError(f"{path}: [input] paths must be a list of strings")
        if any(not p.strip() for p in paths):  # an unset shell variable: Beam lists the working folder
            where = "--input" if input_paths else "[input] paths"
            raise ConfigError(f"{path}: {where}: an empty path (an unset variable?)")
        input_table["paths"] = tuple(input_table["paths"])
    input_config = _typed_table(
        InputConfig,
        input_table,
        f"{path}: [input]",
        {
            "text_field": (str,),
            "id_field": (str,),
            "url_field": (str,),
            "html_field": (str,),
            "format": (str,),
            "html_extractor": (str,),
            "split_bytes": (int,),
            "keep_carriage_returns": (bool,),
        },
    )
    if input_config.split_bytes is not None and input_config.split_bytes < 1:
        raise ConfigError(f"{path}: [input] split_bytes must be at least 1, got {input_config.split_bytes}")
    if input_config.format and input_config.format not in FORMATS:
        raise ConfigError(f"{path}: [input] format must be one of {', '.join(FORMATS)}")
    if input_config.html_extractor not in HTML_EXTRACTORS:
        raise ConfigError(f"{path}: [input] html_extractor must be one of {', '.join(HTML_EXTRACTORS)}")
    generators = [
        _build(GENERATORS, table, f"{path}: synthesis {index}", "generator")
        for index, table in enumerate(_table_list(data, "synthesis", path), start=1)
    ]
    # a generator's candidates are told apart (checkpoints, decisions) by its name
    _refuse_repeated_names([generator.name for generator in generators], "generators", path)
    stages = [
        _build_stage(table, f"{path}: stage {index}")
        for index, table in enumerate(_table_list(data, "stage", path), start=1)
    ]
    names = [stage.name for stage in stages]
    _refuse_repeated_names(names, "stages", path)
    for name, owner in (("read", "the readers"), (MIXTURE_STAGE, "the output mixture's rejections")):
        if name in names:
            raise ConfigError(f"{path}: the stage name {name!r} is reserved for {owner}")
    slashed = [name for name in names if "/" in name]
    if slashed:  # a run's figures are keyed 'stage/reason'
        raise ConfigError(f"{path}: stage name {slashed[0]!r}: a stage name may not hold '/'")
    _check_score_names(stages, path, input_config)
    for stage in stages:
        if stage.admits_candidates and stage.only_languages is not None:  # candidates have no language
            raise ConfigError(
                f"{path}: stage {stage.name!r}: only_languages would send every synthesis candidate "
                "around it unverified (candidates have no language)"
            )
    if generators and not verifies_candidates(stages):
        raise ConfigError(
            f"{path}: [[synthesis]] generators make candidates that only a `verify` stage admits, "
            'and the recipe has none: add one ([[stage]] use = "verify")'
        )
    if not input_config.paths and not generators:
        raise ConfigError(
            f"{path}: no input: set [input] paths, pass --input, or add [[synthesis]] generators"
        )
    return Recipe(path, run, input_config, output, stages, generators)


def _check_score_names(stages: list, path: str, input_config: InputConfig) -> None:
    """Every score a stage reads (`required_scores()`: {param: names}) is written by an earlier one
    (the names its `score_names()` lists) or carried by the inputs (an output read back);
    a stage reading a score written only for some languages sees only those languages."""
    known: dict[str, frozenset[str] | None] = {}  # score -> the only_languages of its writer
    carried: set[str] | None = None  # looked up only when a name is not written by a stage
    for index, stage in enumerate(stages, start=1):
        required = stage.required_scores() if hasattr(stage, "required_scores") else {}
        for key, names in required.items():
            if not getattr(stage, "tolerates_missing_scores", False):
                _check_score_languages(stage, key, names, known, f"{path}: stage {index} ({stage.name})")
            unknown = [n for n in names if n not in known]
            if unknown and carried is None:
                carried = scores_in_inputs(input_config)
            unknown = [n for n in unknown if n not in (carried or ())]
            if unknown:
                owner, _, head = unknown[0].rpartition(".")
                hint = (
                    f"; add {head!r} to the heads of stage {owner!r}"
                    if any(s.name == owner and hasattr(s, "heads") for s in stages[: index - 1])
                    else "; a stage of your own declares the scores it writes: `writes_scores = True` "
                    "or `score_names()`"
                )
                raise ConfigError(
                    f"{path}: stage {index} ({stage.name}): {key}: unknown score {unknown[0]!r} "
                    f"(no earlier stage writes it; {did_you_mean(unknown[0], known)}"
                    f"known: {', '.join(sorted(known)) or 'none'}{hint})"
                )
        for name in stage.score_names():
            if name in known:  # the later one would overwrite the earlier's
                raise ConfigError(
                    f"{path}: stage {index} ({stage.name}): writes score {name!r}, which an earlier "
                    "stage writes too; rename one of them"
                )
            known[name] = stage.only_languages


def _check_score_languages(stage, key: str, names: list[str], known: dict, where: str) -> None:
    """A stage fails or rejects every document that lacks a score it reads: refuse one that sees
    languages a score's writer passes over (its `only_languages`)."""
    sees = stage.only_languages
    for name in names:
        written_for = known.get(name)
        if written_for is not None and (sees is None or not sees <= written_for):
            raise ConfigError(
                f"{where}: {key}: score {name!r} is written only for documents in "
                f"{', '.join(sorted(written_for))} (its stage's only_languages); give this stage "
                f"only_languages within those"
            )


def scores_in_inputs(config: InputConfig) -> set[str]:
    """Scores that gristmill output read back as input carries (`--input 'OUT/kept/*.parquet'`): the
    `scores` fields of the first Parquet file of each glob. Inputs that cannot be read add none (the
    run's input checks report them)."""
    import pyarrow as pa

    from pipeline.record_fields import OUTPUT_COLUMNS

    names: set[str] = set()
    for pattern in config.paths:
        try:
            parquet = [f for f in glob_files(pattern) if detect_format(f, config.format)[0] == "parquet"]
            if not parquet:
                continue
            with fileio.open_random_access(parquet[0]) as handle:
                schema = fileio.parquet_reader(handle).schema_arrow
        except (InputError, OSError, ValueError):
            continue
        is_output = all(column in schema.names for column in OUTPUT_COLUMNS)
        if is_output and pa.types.is_struct(scores := schema.field("scores").type):
            names.update(scores.field(i).name for i in range(scores.num_fields))
    return names


def _table_list(data: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    tables = data.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{path}: use [[{key}]] tables for {key}s")
    return tables


def _build_stage(table: dict[str, Any], where: str) -> Stage:
    """A stage from its table; `only_languages`, a key every stage takes, limits it to documents
    whose `language` is listed (the others pass it untouched)."""
    params = dict(table)
    only_languages = params.pop("only_languages", None)
    stage = _build(STAGES, params, where, "stage")
    if only_languages is not None:
        where = f"{where} ({stage.name}): only_languages"
        if not isinstance(only_languages, list) or not only_languages:
            raise ConfigError(f"{where}: must be a non-empty list of language codes, got {only_languages!r}")
        if not all(isinstance(code, str) for code in only_languages):
            raise ConfigError(f"{where}: must be a list of language codes, got {only_languages!r}")
        check_language_codes(only_languages, where)
        stage.only_languages = frozenset(only_languages)
    return stage


def language_notes(recipe: Recipe) -> list[str]:
    """After a `language` stage that keeps languages other than English, the caveats of the later
    stages that documents in those languages reach (see `Stage.language_caveat`); before one, the
    stages limited by `only_languages`, which documents without a language pass untouched."""
    notes, reaching, identified = [], None, False
    for index, stage in enumerate(recipe.stages, start=1):
        where = f"note: {recipe.path}: stage {index} ({stage.name})"
        if stage.registry_name == "language":
            reaching, identified = frozenset(stage.languages) or None, True
            continue
        if not identified:
            if stage.only_languages is not None:
                notes.append(
                    f"{where}: only_languages, and no language stage before it: it sees only documents "
                    "whose input carries a language (a gristmill output read back)"
                )
            continue
        seen = reaching
        if stage.only_languages is not None:
            seen = stage.only_languages if reaching is None else reaching & stage.only_languages
        caveat = stage.language_caveat(seen)
        if caveat:
            notes.append(f"{where}: {caveat}")
    return notes


def _build(registry: dict[str, type], table: dict[str, Any], where: str, what: str):
    params = dict(table)
    use = params.pop("use", None)
    if not isinstance(use, str):
        raise ConfigError(f'{where}: missing `use = "<{what} name>"`')
    name = params.pop("name", use)
    where = f"{where} ({name})"
    if use not in registry:
        raise ConfigError(
            f"{where}: unknown {what} {use!r} ({did_you_mean(use, registry)}known: {', '.join(sorted(registry))})"
        )
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: `name` must be a non-empty string")
    if len(name) > MAX_NAME_CHARS:  # it names spill and checkpoint folders (255 bytes a file name)
        raise ConfigError(f"{where}: `name` is longer than {MAX_NAME_CHARS} characters")
    try:
        return registry[use](name, **params)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
