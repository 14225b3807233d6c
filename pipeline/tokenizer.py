"""Token counts (and optionally token ids) for kept documents, with a Hugging Face tokenizer.

`[output] tokenizer` names a `tokenizer.json` file; "gristmill-bpe-32k" is gristmill's own
byte-level BPE (pipeline/data/, see its README.md), which ships in the package so no run downloads
anything; "none" (the default: tokenizing costs about as much as the FineWeb filter chain) turns
tokenization off and leaves `n_tokens` null.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.stages import ConfigError

BUNDLED = "gristmill-bpe-32k"
BUNDLED_TOKENIZER = Path(__file__).resolve().parent / "data" / "gristmill-bpe-32k.json"


def tokenizer_path(name: str) -> str | None:
    """The tokenizer.json a recipe's `tokenizer` value means (None: no tokenization)."""
    if name == "none":
        return None
    if name == BUNDLED:
        return str(BUNDLED_TOKENIZER)
    return name


def load_tokenizer(path: str):
    """A `tokenizers.Tokenizer` from a tokenizer.json on any Beam filesystem."""
    from apache_beam.io.filesystems import FileSystems
    from tokenizers import Tokenizer

    try:
        with FileSystems.open(path, compression_type="uncompressed") as handle:
            return Tokenizer.from_str(handle.read().decode("utf-8"))
    except Exception as error:
        raise ConfigError(f"[output] tokenizer: cannot load {path!r}: {error}") from error


class RowTokenizer:
    """Adds `n_tokens` (and `token_ids` when asked) to batches of kept rows; loads once per worker."""

    def __init__(self, path: str | None, token_ids: bool) -> None:
        self.path = path
        self.token_ids = token_ids
        self._tokenizer = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_tokenizer": None}

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.path is None:
            return [{**row, "n_tokens": None} for row in rows]
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.path)
        encodings = self._tokenizer.encode_batch(
            [row["text"] or "" for row in rows], add_special_tokens=False
        )
        if self.token_ids:
            return [{**row, "n_tokens": len(e.ids), "token_ids": e.ids} for row, e in zip(rows, encodings)]
        return [{**row, "n_tokens": len(e.ids)} for row, e in zip(rows, encodings)]
