"""Stage base classes, typed parameters and the registry that recipes name stages from.

Two kinds of stage:
- `DocumentStage`: decides per document (`check(doc) -> Verdict`); consecutive ones are fused
  into one batched Beam step by the pipeline. Pure Python, no Beam import.
- `CollectionStage`: needs the whole collection (dedup, keep-fraction thresholds); it builds its
  own Beam composite in `expand()` and returns kept / rejected / failed PCollections.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from pipeline.document import Document, Verdict

if TYPE_CHECKING:  # pragma: no cover
    import apache_beam as beam


class ConfigError(ValueError):
    """A recipe or stage configuration problem; the message names the file, stage or key."""


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name nearest a misspelt one, if one is near enough."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`did you mean 'x'? ` for the known name nearest a misspelt one, or an empty string."""
    close = closest_name(name, known)
    return f"did you mean {close!r}? " if close else ""


_UNSET = object()


@dataclass(frozen=True)
class Param:
    """A typed stage parameter with its default, its doc line and its allowed range."""

    type: Any
    default: Any
    doc: str
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None

    def validate(self, key: str, value: Any) -> Any:
        """Return `value` checked (and int→float widened); raise ConfigError naming `key`."""
        expected = self.type
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if expected is list or getattr(expected, "__origin__", None) is list:
            if not isinstance(value, list):
                raise ConfigError(f"{key}: expected a list, got {type(value).__name__} {value!r}")
            inner = getattr(expected, "__args__", (None,))[0]
            if inner is not None and not all(isinstance(v, inner) for v in value):
                raise ConfigError(f"{key}: expected a list of {inner.__name__}, got {value!r}")
        elif expected is dict:
            if not isinstance(value, dict):
                raise ConfigError(f"{key}: expected a table, got {type(value).__name__}")
        elif value is not None and (
            not isinstance(value, expected) or (expected is not bool and isinstance(value, bool))
        ):
            raise ConfigError(f"{key}: expected {expected.__name__}, got {type(value).__name__} {value!r}")
        if isinstance(value, float) and value != value:  # TOML's nan: every comparison with it is false
            raise ConfigError(f"{key}: nan is not a number a stage can compare with")
        if isinstance(value, float) and value in (math.inf, -math.inf):  # not JSON: the manifest holds it
            raise ConfigError(f"{key}: {value} is not a finite number")
        if self.min is not None and value is not None and value < self.min:
            raise ConfigError(f"{key}: {value!r} is below the minimum {self.min}")
        if self.max is not None and value is not None and value > self.max:
            raise ConfigError(f"{key}: {value!r} is above the maximum {self.max}")
        if self.choices is not None and value is not None and value not in self.choices:
            raise ConfigError(f"{key}: {value!r} is not one of {list(self.choices)}")
        return value

    def type_name(self) -> str:
        """Human-readable type for `gristmill list` and the README."""
        return getattr(self.type, "__name__", str(self.type)).replace("typing.", "")


class Configurable:
    """Something built from a recipe table: declares `params`, gets them as attributes."""

    params: ClassVar[dict[str, Param]] = {}

    def __init__(self, name: str, **values: Any) -> None:
        self.name = name
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            known = ", ".join(sorted(self.params)) or "none"
            hint = did_you_mean(unknown[0], self.params)
            raise ConfigError(f"unknown parameter {unknown[0]!r} ({hint}known: {known})")
        for key, param in self.params.items():
            value = values.get(key, param.default)
            setattr(self, key, param.validate(key, value) if key in values else value)
        self.configure()

    def configure(self) -> None:
        """Cross-parameter checks and derived settings; raise ConfigError on bad combinations."""

    def resolved(self) -> dict[str, Any]:
        """Every parameter with its effective value (for `validate` and the manifest)."""
        return {key: getattr(self, key) for key in self.params}

    def data_files(self) -> list[str]:
        """Paths or globs of the data files it reads besides the run's input (an eval set, lists,
        candidate files): a rerun resumes from checkpoints only while they are unchanged."""
        return []


class Stage(Configurable):
    """Base of every stage. `reasons` lists every reason code the stage can reject with."""

    reasons: ClassVar[tuple[str, ...]] = ()
    # Synthesis candidates (documents with `kind`) bypass every stage that does not handle them.
    handles_candidates: ClassVar[bool] = False
    # Whether the stage admits candidates (`verify`): a recipe without such a stage keeps none.
    admits_candidates: ClassVar[bool] = False
    # The recipe's `only_languages`: documents whose `language` is not listed bypass the stage
    # too. None: every document.
    only_languages: frozenset[str] | None = None
    # Whether the stage writes `scores[<its name>]` (a scorer); one writing other names overrides
    # `score_names`. A recipe may read only the scores an earlier stage declares.
    writes_scores: ClassVar[bool] = False

    def score_names(self) -> list[str]:
        """The scores this stage writes."""
        return [self.name] if self.writes_scores else []

    def setup(self) -> None:
        """Load models, sandboxes and lists. The runtime calls it once per worker before any
        document reaches `check`/`check_batch`, so those never need to call it themselves."""

    def teardown(self) -> None:
        """Release what `setup` started (sandbox pools, subprocesses); called when the worker
        retires the stage (`DoFn.teardown`). Beam calls it on a best-effort basis."""

    def require_setup(self, *loaded: object) -> None:
        """Raise a clear error if any of `loaded` (what `setup` loads) is still None."""
        for value in loaded:
            if value is None:
                raise RuntimeError(
                    f"stage {self.name!r} used before setup(): the runtime calls it; "
                    "outside Beam, call stage.setup() first (and stage.teardown() when done)"
                )

    def manifest_extra(self) -> dict[str, Any]:
        """Extra figures for the manifest known at build time (e.g. an S-curve)."""
        return {}

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        """How this stage, as configured, misjudges documents in `languages` (None: any language);
        '' when it does not. `validate` and `run` print it as a note."""
        return ""


def is_language_code(code: object) -> bool:
    """Whether `code` is written as language labels are (`en`, `zh_Hant`): letters, digits, `_`."""
    return isinstance(code, str) and code.replace("_", "").isalnum()


def non_english(languages: frozenset[str] | None) -> str:
    """`languages` other than English, for a caveat: "de, fr", "languages other than English"
    (None: any language), or "" when there are none."""
    if languages is None:
        return "languages other than English"
    return ", ".join(sorted(languages - {"en"}))


class DocumentStage(Stage):
    """A per-document stage: filter, editor or scorer. Must not import Beam."""

    def check(self, doc: Document) -> Verdict:
        """Decide on one document; documents are immutable, so an edited or scored document is
        returned in the verdict (`keep(doc.with_text(...))`, `keep(doc.with_scores(...))`)."""
        raise NotImplementedError

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        """Decide on a batch; override for models that predict in batches."""
        return [self.check(doc) for doc in docs]


class StageOutputs(NamedTuple):
    """What a collection stage returns: PCollections of Document, Rejection and Failure."""

    kept: Any
    rejected: Any
    failed: Any


class CollectionStage(Stage):
    """A stage that needs the whole collection; builds its own Beam composite.

    The runtime (`pipeline.beam_stages`) counts its input and outcomes and checks conservation;
    its DoFns derive from `beam_stages.StageDoFn` (setup/teardown) and build failure records
    with `beam_stages.failure`.
    """

    def expand(self, docs: beam.PCollection, passthrough: beam.PCollection | None = None) -> StageOutputs:
        """Apply the stage to a PCollection of Document.

        `passthrough` (None: none): documents the stage must not look at (synthesis candidates, if
        it does not handle them, and documents outside its `only_languages`); return them among the
        kept, unchanged, from the step that emits the kept documents (`ApplyDecisions` takes them
        as a third input), never through a Flatten: Beam's local runner holds the whole output of a
        multi-input Flatten in memory. A stage that handles candidates gets every document in
        `docs` and keeps those outside its `only_languages` unchanged itself."""
        raise NotImplementedError


class Generator(Configurable):
    """A synthesis generator from a recipe `[[synthesis]]` table; yields candidate documents."""

    def generate(self) -> Iterable[Document]:
        """Yield candidates (documents with `kind` set); ids must be deterministic."""
        raise NotImplementedError


STAGES: dict[str, type[Stage]] = {}
GENERATORS: dict[str, type[Generator]] = {}

# Packages whose public modules register the built-in stages and generators when imported;
# heavy libraries are imported inside `setup()`, so this is cheap.
STAGE_MODULES = (
    "filters",
    "quality_models",
    "dedup",
    "synthesis",
)


def _check_free(registry: dict[str, type], name: str, cls: type, what: str) -> None:
    """Refuse a second class under a registered name (a plugin must not replace a stage)."""
    taken = registry.get(name)
    if taken is not None and taken is not cls:
        raise RuntimeError(
            f"{what} name {name!r} of {cls.__module__}.{cls.__qualname__} is already taken by "
            f"{taken.__module__}.{taken.__qualname__}"
        )


def register(name: str):
    """Class decorator: make a Stage available to recipes as `use = "<name>"`."""

    def wrap(cls: type[Stage]) -> type[Stage]:
        _check_free(STAGES, name, cls, "stage")
        cls.registry_name = name
        STAGES[name] = cls
        return cls

    return wrap


def register_generator(name: str):
    """Class decorator: make a Generator available to recipe `[[synthesis]]` tables."""

    def wrap(cls: type[Generator]) -> type[Generator]:
        _check_free(GENERATORS, name, cls, "generator")
        cls.registry_name = name
        GENERATORS[name] = cls
        return cls

    return wrap


def load_builtin_stages() -> None:
    """Import every public module of the stage packages, which registers their stages."""
    import importlib
    import pkgutil

    for package_name in STAGE_MODULES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{package_name}.{info.name}")


# Entry-point group through which installed packages add stages and generators: each entry
# names a module that registers them when imported (`my_filters = "my_pkg.stages"`).
PLUGIN_GROUP = "gristmill.plugins"
_plugins_loaded = False


def load_plugins() -> None:
    """Import the modules of every installed `gristmill.plugins` entry point, once per process."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    from importlib.metadata import entry_points

    load_builtin_stages()
    for entry in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        try:
            entry.load()
        except Exception as error:
            raise ConfigError(
                f"plugin {entry.name!r} ({entry.value}, entry point group {PLUGIN_GROUP}) "
                f"failed to load: {type(error).__name__}: {error}"
            ) from error
    _plugins_loaded = True


def is_builtin(cls: type) -> bool:
    """Whether a stage or generator class ships with gristmill (not with a plugin)."""
    return cls.__module__.split(".")[0] in STAGE_MODULES
