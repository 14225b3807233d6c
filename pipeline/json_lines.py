"""JSON Lines: one line of JSON as a record, and a split's lines read by byte range with the
file's own 1-based line numbers (counted for a split after the first only when a record needs
them: no id of its own, or a failure)."""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pipeline import fileio
from pipeline.document import READ_STAGE, Failure, Record, Rejection, one_line
from pipeline.file_start import UnreadableFile, refuse_unreadable
from pipeline.json_array import json_integer
from pipeline.record_fields import DEEPER, SURROGATE, record_id, record_to_document, too_deep

if TYPE_CHECKING:
    from pipeline.readers import InputConfig, ReadPosition, Split

TOO_DEEP_MESSAGE = "JSON nested too deeply to parse"
NEWLINE_COUNT_CHUNK = 16 * 1024 * 1024
UNNUMBERED = 0  # the line number a split's line is parsed with before its file's numbering is known
MAX_LINE_BYTES = 64 << 20  # a longer JSON Lines line is a failure, read past without being held
ONE_LINE_ARRAY = (
    "a JSON array written on one line (pandas' to_json without lines=True) is read, streamed, from a "
    "file named .json"
)
# A UTF-16 surrogate escape (\uD800-\uDFFF) in raw JSON; only such escapes can decode to a lone surrogate.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
SURROGATE_ESCAPE_TEXT = re.compile(SURROGATE_ESCAPE.pattern.decode())


def parse_json_line(raw: bytes | int, source: str, line_number: int, config: InputConfig) -> Record | None:
    """One JSON Lines line (or the length of one too long to hold) as a record."""
    if isinstance(raw, int):
        return Failure(
            f"{source}:{line_number}",
            source,
            READ_STAGE,
            "LineTooLong",
            f"line {line_number} is {raw:,} bytes, over {MAX_LINE_BYTES >> 20} MiB; {ONE_LINE_ARRAY}",
        )
    # a byte-order mark, as Windows tools write, is not part of a record: at a file's start, or at
    # any line's of files joined with `cat` (never valid at the start of a JSON text)
    stripped = raw.strip().removeprefix(codecs.BOM_UTF8).lstrip()
    if not stripped:
        return None
    where = f"{source}:{line_number}"
    try:
        line = stripped.decode("utf-8")
    except UnicodeDecodeError as error:
        return Failure(where, source, READ_STAGE, "InvalidUtf8", one_line(error))
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        return Failure(where, source, READ_STAGE, "MalformedJson", one_line(error))
    except RecursionError:  # without this, the file's remaining lines were lost with it
        return Failure(where, source, READ_STAGE, "TooDeeplyNested", TOO_DEEP_MESSAGE)
    except ValueError:  # an integer longer than Python converts; it cost the file's other lines
        record = json.loads(line, parse_int=json_integer)
    if SURROGATE_ESCAPE.search(stripped) and (problem := lone_surrogate(record)):
        return Failure(
            record_id(record, config.id_field, where), source, READ_STAGE, "LoneSurrogate", problem
        )
    if too_deep(line, record):
        return Failure(
            record_id(record, config.id_field, where), source, READ_STAGE, "TooDeeplyNested", DEEPER
        )
    if isinstance(record, list) and record and isinstance(record[0], dict):
        return Failure(
            where,
            source,
            READ_STAGE,
            "NotAnObject",
            f"a JSON array of {len(record)} objects; {ONE_LINE_ARRAY}",
        )
    return record_to_document(record, source, str(line_number), config)


def lone_surrogate(record: Any) -> str | None:
    """Why a decoded JSON object is not valid Unicode (a \\u escape left half of a surrogate pair), or None.

    Such a string cannot be encoded as UTF-8, so no stage, coder or Parquet writer could carry it.
    """
    if not isinstance(record, dict):
        return None  # record_to_document reports it as NotAnObject
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    for name, value in record.items():
        found = SURROGATE.search(json.dumps([name, value], ensure_ascii=False))
        if found:
            return (
                f"field {name!r} holds a lone surrogate U+{ord(found.group()):04X}"
                " (half of a \\u escape pair): not valid Unicode, so it cannot be written as UTF-8"
            )
    return None


def count_newlines(handle, end: int) -> int:
    """Newlines in the first `end` bytes of a file (to number lines of a split exactly)."""
    handle.seek(0)
    count, left = 0, end
    while left > 0:
        chunk = handle.read(min(NEWLINE_COUNT_CHUNK, left))
        if not chunk:
            break
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count


def read_jsonl_range(split: Split, config: InputConfig, read_position: ReadPosition) -> Iterator[Record]:
    """Lines whose first byte lies in [start, end); ids use 1-based line numbers of the file,
    counted for a split after the first only when one of its records needs them."""
    source = split.path
    with fileio.open_read(source) as handle:
        try:
            refuse_unreadable(handle, source)
        except UnreadableFile:
            if split.start == 0:  # the file's first split reports it, once
                raise
            return
        read_position.follow(handle, split.start)
        end = split.end if split.end >= 0 else fileio.size(source)
        offset = split.start
        if offset > 0:
            handle.seek(offset - 1)
            if handle.read(1) != b"\n":  # mid-line: that line belongs to the previous split
                offset += _span(next_line(handle))
        else:
            handle.seek(0)
        first_line_start = offset
        line_number = 1  # of the file once `numbered`; until then, of the split
        numbered = offset == 0
        unnumbered_id = f"{source}:{UNNUMBERED}"
        while offset < end and (raw := next_line(handle)):
            record = parse_json_line(raw, source, line_number if numbered else UNNUMBERED, config)
            if not numbered and _names_its_line(record, unnumbered_id):
                # It has no id of its own, or failed: count the lines before the split (a read of
                # the file up to there), once, and only for such a split.
                here = handle.tell()
                line_number += count_newlines(handle, first_line_start)
                handle.seek(here)
                numbered = True
                record = parse_json_line(raw, source, line_number, config)
            if record is not None:
                yield record
            offset += _span(raw)
            line_number += 1
        if offset < end:  # truncated or rewritten since it was listed: say so, not read nothing
            why = f"the file has {handle.seek(0, io.SEEK_END):,} bytes, fewer than the {end:,} it had when listed"
            yield Failure(f"{source}@{offset}", source, READ_STAGE, "InputChanged", why)


def _names_its_line(record: Record | None, unnumbered_id: str) -> bool:
    """Whether a record parsed as line `UNNUMBERED` took its id from that line number (its id is
    `unnumbered_id`, `<path>:0`)."""
    if record is None:
        return False
    return (record.doc.id if isinstance(record, Rejection) else record.id) == unnumbered_id


def next_line(handle: io.BufferedIOBase) -> bytes | int:
    """The next line of a binary stream (b"" at its end); a line over MAX_LINE_BYTES (a whole JSON
    array written on one line) is read past in chunks and given as its length, never held whole."""
    raw = handle.readline(MAX_LINE_BYTES + 1)
    if len(raw) <= MAX_LINE_BYTES:
        return raw
    length = len(raw)
    while not raw.endswith(b"\n") and (raw := handle.readline(1 << 20)):
        length += len(raw)
    return length


def lines_of(handle: io.BufferedIOBase) -> Iterator[bytes | int]:
    """`next_line` to the end of the stream."""
    while line := next_line(handle):
        yield line


def _span(line: bytes | int) -> int:
    return line if isinstance(line, int) else len(line)
