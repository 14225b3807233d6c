"""Token counts (and optionally token ids) for kept documents, with a Hugging Face tokenizer.

`[output] tokenizer` names a `tokenizer.json` file; "gristmill-bpe-32k" is gristmill's own
byte-level BPE (pipeline/data/, see its README.md), which ships in the package so no run downloads
anything; "none" (the default: tokenizing costs about as much as the FineWeb filter chain) turns
tokenization off and leaves `n_tokens` null.

Memory follows `ENCODE_BATCH_CHARS`, not the batch or the longest document: a batch is encoded a
few MB of text at a time, and a text longer than `PIECE_CHARS` in pieces cut where the tokenizer
itself splits (a cut is used only when the text around it encodes to the same ids whole and in two;
for tokenizers that prepend a space to every text, the cut drops the space the second piece gets).
Encoding 20 MB at once took ~140 bytes of memory per character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from pipeline import fileio
from pipeline.stages import ConfigError

BUNDLED = "gristmill-bpe-32k"
BUNDLED_TOKENIZER = Path(__file__).resolve().parent / "data" / "gristmill-bpe-32k.json"
PIECE_CHARS = 1 << 17  # a longer text is encoded in pieces of about this many characters
ENCODE_BATCH_CHARS = 4 << 20  # characters encoded per call
CUT_CONTEXT = 256  # characters each side of a cut that must encode the same whole and in two
CUT_TRIES = 16  # candidate cuts checked before a piece is left longer
# Where tokenizers split: before whitespace that follows a non-space, after an ideographic full stop.
CUT_CANDIDATE = re.compile(r"(?<=\S)(?=\s)|(?<=[\u3002\uff01\uff1f])")


def tokenizer_path(name: str) -> str | None:
    """The tokenizer.json a recipe's `tokenizer` value means (None: no tokenization)."""
    if name == "none":
        return None
    if name == BUNDLED:
        return str(BUNDLED_TOKENIZER)
    return name


def load_tokenizer(path: str):
    """A `tokenizers.Tokenizer` from a tokenizer.json on any Beam filesystem."""
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_str(fileio.read_bytes(path).decode("utf-8"))
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
        pieces = [text_pieces(self._tokenizer, row["text"] or "") for row in rows]
        encoded = encode_pieces(self._tokenizer, [piece for text in pieces for piece in text], self.token_ids)
        out = []
        for row, text in zip(rows, pieces):
            parts = [next(encoded) for _ in text]
            if self.token_ids:
                ids = parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))
                out.append({**row, "n_tokens": len(ids), "token_ids": ids})
            else:
                out.append({**row, "n_tokens": sum(parts)})
        return out


def encode_pieces(tokenizer, texts: list[str], token_ids: bool) -> Iterator[list[int] | int]:
    """The token ids (or only their number) of each text, encoded ENCODE_BATCH_CHARS at a time."""
    start = 0
    while start < len(texts):
        end, size = start, 0
        while end < len(texts) and (end == start or size + len(texts[end]) <= ENCODE_BATCH_CHARS):
            size += len(texts[end])
            end += 1
        for encoding in tokenizer.encode_batch_fast(texts[start:end], add_special_tokens=False):
            yield encoding.ids if token_ids else len(encoding)
        start = end


def text_pieces(tokenizer, text: str) -> list[str]:
    """`text` in pieces of about PIECE_CHARS whose token ids, joined, are the whole text's
    (a space between two pieces is left out where the tokenizer prepends one to every text)."""
    pieces, start = [], 0
    while len(text) - start > PIECE_CHARS:
        cut = _cut_near(tokenizer, text, start + PIECE_CHARS)
        if cut is None:
            break
        end, start_after = cut
        pieces.append(text[start:end])
        start = start_after
    pieces.append(text[start:])
    return pieces


def _cut_near(tokenizer, text: str, at: int) -> tuple[int, int] | None:
    """The first place from `at` on where the text around it encodes the same whole and cut in two,
    as (end of the first piece, start of the second); None after CUT_TRIES places that do not.

    A cut goes before whitespace, or drops one space there: tokenizers that prepend a space to
    every text (Llama-2 and other SentencePiece conversions without a pre-tokenizer) give the
    second piece back the space as its own prepended one."""
    for tries, candidate in enumerate(CUT_CANDIDATE.finditer(text, at)):
        if tries == CUT_TRIES:
            return None
        cut = candidate.start()
        if cut >= len(text) - CUT_CONTEXT:
            return None
        before = text[cut - CUT_CONTEXT : cut]
        for start_after in (cut, cut + 1) if text[cut] == " " else (cut,):
            after = text[start_after : start_after + CUT_CONTEXT]
            whole, left, right = tokenizer.encode_batch_fast(
                [text[cut - CUT_CONTEXT : start_after + CUT_CONTEXT], before, after],
                add_special_tokens=False,
            )
            if whole.ids == left.ids + right.ids:
                return cut, start_after
    return None
