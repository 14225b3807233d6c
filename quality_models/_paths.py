"""Where model files are: the shipped models folder, and how recipe paths resolve."""

from __future__ import annotations

from pathlib import Path

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
