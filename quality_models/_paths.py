"""Where model files are: the shipped models folder, and how recipe paths resolve."""

from __future__ import annotations

from pathlib import Path

from pipeline.stages import non_english

PACKAGE_DIR = Path(__file__).resolve().parent
MODELS_DIR = PACKAGE_DIR / "models"
PROJECT_DIR = PACKAGE_DIR.parent


def resolve_model_path(value: str) -> Path:
    """A recipe's model path: absolute; else relative to the working directory if it exists there;
    else relative to the project root (so `quality_models/models/...` works from any directory)."""
    path = Path(value).expanduser()
    if path.is_absolute() or path.exists():
        return path
    return PROJECT_DIR / path


def is_shipped(path: Path) -> bool:
    """Whether `path` is one of the models shipped in quality_models/models/ (English models)."""
    return path.resolve().is_relative_to(MODELS_DIR.resolve())


def english_model_caveat(languages: frozenset[str] | None) -> str:
    """The caveat of a stage scoring with a shipped model (see `Stage.language_caveat`)."""
    others = non_english(languages)
    if not others:
        return ""
    return (
        f"its shipped model was trained on English text, so documents in {others} score low and a "
        'threshold on its score removes them; give it only_languages = ["en"] (and the stages that '
        "read its score), or a model trained for those languages"
    )
