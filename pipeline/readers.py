"""Input readers: JSON Lines / JSON / plain text (plain, gzip, zstd, bzip2, xz), Parquet, WARC and WET.

Each reader turns one *split* of one file into `Document`s, `Rejection`s (stage `read`, for
records that are not documents we can use, such as a non-HTML response) and `Failure`s (stage
`read`, for records that could not be parsed). Splits let large plain files be read in parallel:
JSON Lines by byte range (aligned to line starts), Parquet by row group; compressed files,
WARC/WET and text files (one document each) are read whole. The same code serves the Beam
pipeline and `iter_documents`. Every file is matched, sized and opened through Beam's
`FileSystems` (`pipeline.fileio`), so inputs may live on any filesystem Beam knows (local,
`s3://`, `gs://`).
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any
from urllib.parse import unquote

from pipeline import fileio, json_array
from pipeline.document import READ_STAGE, Document, Failure, Record, Rejection, one_line
from pipeline.file_start import refuse_not_compressed, refuse_unreadable, refuse_wide_text
from pipeline.json_array import TOO_DEEP, TOO_LARGE, ElementTooLarge, JsonArray
from pipeline.json_lines import (
    MAX_LINE_BYTES,
    SURROGATE_ESCAPE_TEXT,
    TOO_DEEP_MESSAGE,
    lines_of,
    lone_surrogate,
    parse_json_line,
    read_jsonl_range,
)
from pipeline.members import BZIP2, GZIP, XZ, CompressedMembers, damage_failures, members_of
from pipeline.parquet_rows import read_parquet
from pipeline.record_fields import DEEPER, record_id, record_to_document, too_deep
from pipeline.warc import page_record, read_warc
from pipeline.zstd_frames import ZstdStream, open_zstd

JSONL_SUFFIXES = (".jsonl", ".ndjson")
FORMATS = ("jsonl", "json", "parquet", "warc", "wet", "text", "html")
HTML_SUFFIXES = (".html", ".htm")
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".bz2": "bzip2", ".xz": "xz"}
MAX_SPLIT_BYTES = 64 << 20  # the largest byte range `split_bytes` gives by default
MIN_SPLIT_BYTES = 1 << 20  # and the smallest: below it a split costs more than it spreads
SPLITS_PER_FILE = 8  # what a file of up to 512 MiB is cut into by default: one file keeps 8 workers busy
MAX_JSON_OBJECT_BYTES = 64 << 20  # a .json file holding one object is read whole up to this size
MAX_FILE_DOCUMENT_BYTES = 64 << 20  # a text or HTML file, one document, is read whole up to this size
MEMBERS_BUFFER = 1 << 20  # decompressed bytes read ahead (gzip's own reader buffers 8 KiB, then 1 MiB reads)
# Why a stream (standard input, a pipe) is no input, and what to do instead.
STREAM_ADVICE = "(workers read parts of each file in parallel): save the stream to a file and give its path"
HIVE_FOLDER = re.compile(r"[A-Za-z_][\w.-]*=[^=]*")


class TruncatedInput(EOFError):
    """A compressed file cut short (or corrupt) before its first bytes decompress."""


class InputError(ValueError):
    """An input that cannot be read at all (missing file, unknown format); names the file."""


@dataclass(frozen=True)
class InputConfig:
    """The recipe's `[input]` table."""

    paths: tuple[str, ...] = ()
    text_field: str = "text"
    id_field: str = "id"
    url_field: str = "url"
    html_field: str = ""  # a field holding an HTML page, whose main text is the document's text
    format: str = ""  # empty: from the file extension
    html_extractor: str = "resiliparse"  # or "trafilatura"
    split_bytes: int | None = None  # None: `default_split_bytes` of each file's size
    keep_carriage_returns: bool = False  # False: CR LF and lone CR in texts become LF
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class Split:
    """A part of one input file: a byte range (JSON Lines by lines, Parquet by row groups whose
    middle lies in it) or everything."""

    path: str
    start: int = 0
    end: int = -1  # -1: to the end of the file


class ReadPosition:
    """How far a split's reader has come, in bytes of the file as stored (compressed bytes for
    `.gz` and `.zst`), for live progress inside a split that takes long (a whole `.warc.gz`)."""

    def __init__(self) -> None:
        self.handle: io.IOBase | None = None
        self.start = 0

    def follow(self, handle: io.IOBase, start: int = 0) -> None:
        self.handle, self.start = handle, start

    def bytes_read(self) -> int:
        if self.handle is None:
            return 0
        try:
            return max(0, self.handle.tell() - self.start)
        except (OSError, ValueError):  # closed, or a stream that cannot tell
            return 0


def detect_format(path: str, forced: str = "") -> tuple[str, str | None]:
    """Return (format, compression) from the extension, or the recipe's `format`."""
    name = path.lower()
    compression = None
    for suffix, codec in COMPRESSIONS.items():
        if name.endswith(suffix):
            compression, name = codec, name[: -len(suffix)]
    if forced:
        if forced not in FORMATS:
            raise InputError(f"{path}: unknown input format {forced!r} (known: {', '.join(FORMATS)})")
        return forced, compression
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl", compression
    for fmt in ("json", "parquet", "warc", "wet"):
        if name.endswith("." + fmt):
            return fmt, compression
    if name.endswith(".txt"):
        return "text", compression
    if name.endswith(HTML_SUFFIXES):
        return "html", compression
    raise InputError(
        f"{path}: cannot tell the format from the extension; set [input] format or --input-format"
    )


def input_files(patterns: list[str] | tuple[str, ...]) -> dict[str, fileio.FileInfo]:
    """Files matching the globs (`glob_files`), sorted, each file once (`one_name_per_file`)."""
    files: dict[str, fileio.FileInfo] = {}
    for pattern in patterns:
        files.update(glob_files(pattern))
    return dict(sorted(one_name_per_file(files).items()))


def glob_files(pattern: str) -> dict[str, fileio.FileInfo]:
    """Files matching one glob, sorted, with size and modification time (one listing); a pattern
    matching nothing is an error, unless its brackets name themselves (`data[1].jsonl`,
    `crawl [2024]/*.jsonl`)."""
    if not pattern.strip():  # Beam would list the working folder
        raise InputError("an empty input path (an unset variable?)")
    pattern = fileio.user_path(pattern)
    if pattern.endswith("/"):  # Beam lists a local folder's files, but every object under a prefix
        raise InputError(f"{pattern}: is a folder; give a glob of its files, e.g. '{pattern}*.jsonl'")
    matched = fileio.listing(pattern)
    if not matched and "[" in pattern:
        matched = fileio.listing(pattern.replace("[", fileio.escape("[")))
    if not matched and is_folder(pattern):
        raise InputError(
            f"{pattern}: is a folder; give a glob of its files, e.g. '{pattern.rstrip('/')}/*.jsonl'"
        )
    if not matched and fileio.is_local(pattern) and os.path.exists(pattern):  # /dev/stdin, <(zcat ...)
        raise InputError(
            f"{pattern}: not a file but a pipe or a device: gristmill reads files {STREAM_ADVICE}"
        )
    if not matched:
        relative = fileio.is_local(pattern) and not os.path.isabs(pattern)
        where = f" (relative to the working directory {os.getcwd()})" if relative else ""
        raise InputError(f"{pattern}: no input file matches{where}")
    return matched


def is_folder(path: str) -> bool:
    """Whether `path` is a local folder or an object store's prefix with objects under it."""
    if fileio.is_local(path):
        return os.path.isdir(path)
    return bool(fileio.listing(fileio.escape(path) + "/*"))


def one_name_per_file(files: dict[str, fileio.FileInfo]) -> dict[str, fileio.FileInfo]:
    """`files` with each local file once, under the first of its names: `a.jsonl`, `./a.jsonl`,
    its absolute path, a symbolic or a hard link are one file, read once."""
    seen: set[tuple[int, int]] = set()
    once: dict[str, fileio.FileInfo] = {}
    for path, info in files.items():
        if fileio.is_local(path):
            stat = os.stat(path)
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
        once[path] = info
    return once


def input_changes(
    patterns: list[str] | tuple[str, ...], planned: dict[str, fileio.FileInfo], written: tuple[str, ...] = ()
) -> list[str]:
    """How the files matching `patterns` differ from `planned` (`input_files` when the run began):
    one line per input file changed, gone or new, which a run's count of documents read cannot show
    (a JSON Lines file is read in byte ranges of its size at the start). New files under the
    `written` folders (the run's output, spill and work folders) are the run's own, not inputs."""
    now: dict[str, fileio.FileInfo] = {}
    for pattern in patterns:
        with suppress(InputError):
            now.update(glob_files(pattern))
    with suppress(OSError):  # a file deleted since this listing: it is reported as gone or not seen
        now = one_name_per_file({**{path: now[path] for path in planned if path in now}, **now})
    lines = []
    for path, info in planned.items():
        current = now.pop(path, None)
        if current is None:
            lines.append(
                f"{path}: gone by the end of the run (what was read of it, or its failure, is counted)"
            )
        elif current != info:
            lines.append(
                f"{path}: changed during the run ({info.size:,} -> {current.size:,} bytes); a change made "
                "after the run planned or read it is not in this output: rerun to read it as it is now"
            )
    own = tuple(fileio.canonical(folder).rstrip("/") + "/" for folder in written)
    new = [path for path in now if not (own and fileio.canonical(path).startswith(own))]
    return lines + [f"{path}: appeared during the run and was not read" for path in new]


def expand_paths(patterns: list[str] | tuple[str, ...]) -> list[str]:
    """Sorted, de-duplicated files matching the globs; a pattern matching nothing is an error."""
    return list(input_files(patterns))


def plan_splits(path: str, config: InputConfig, size: int | None = None) -> list[Split]:
    """Cut one file (of `size` bytes, if known from a listing) into independently readable splits:
    byte ranges of plain JSON Lines and Parquet from the size alone, so planning opens no file
    (each Parquet split's reader reads the footer)."""
    fmt, compression = detect_format(path, config.format)
    if compression is None and fmt in ("jsonl", "parquet"):
        size = fileio.size(path) if size is None else size
        step = config.split_bytes or default_split_bytes(size)
        splits = [Split(path, start, min(start + step, size)) for start in range(0, size, step)]
        if fmt == "parquet" and splits:  # the last split takes every row group after its start
            splits[-1] = replace(splits[-1], end=-1)
        return splits or [Split(path)]
    return [Split(path)]


def default_split_bytes(size: int) -> int:
    """A file's split size when the recipe sets none: an eighth of the file, within 1 to 64 MiB, so
    that one file is read and filtered by several workers (the stages before the first dedup run
    where the split is read) and adding a file leaves the other files' splits as they were."""
    return min(MAX_SPLIT_BYTES, max(MIN_SPLIT_BYTES, -(-size // SPLITS_PER_FILE)))


def read_split(split: Split, config: InputConfig, position: ReadPosition | None = None) -> Iterator[Record]:
    """Read one split; never raises for bad content, yields Failures instead. `position`, when
    given, follows the bytes read (not for Parquet, whose reads jump to the footer first)."""
    records = _read_split_records(split, config, position or ReadPosition())
    if not config.keep_carriage_returns:
        records = map(_unix_newlines, records)
    partitions = hive_partitions(split.path)
    if not partitions:
        return records
    return (
        record.replace(metadata={**partitions, **record.metadata}) if isinstance(record, Document) else record
        for record in records
    )


def _unix_newlines(record: Record) -> Record:
    """A document whose text ends lines with CR LF or CR, with LF instead: the line and paragraph
    rules split on LF, so a CR LF text's blank lines ("\r") counted as repeated lines."""
    if isinstance(record, Document) and "\r" in record.text:
        return record.with_text(record.text.replace("\r\n", "\n").replace("\r", "\n"))
    return record


def hive_partitions(path: str) -> dict[str, str]:
    """The `key=value` folders of a path as Spark and Hive write partitioned datasets
    (`lang=en/year=2024/part-0.parquet`), values unescaped; {} for other paths."""
    folders = path.split("://", 1)[-1].split("/")[:-1]
    return {
        key: unquote(value)
        for key, _, value in (folder.partition("=") for folder in folders if HIVE_FOLDER.fullmatch(folder))
    }


def _read_split_records(split: Split, config: InputConfig, position: ReadPosition) -> Iterator[Record]:
    path = split.path
    try:
        fmt, compression = detect_format(path, config.format)
        if fmt == "jsonl" and compression is None:
            yield from read_jsonl_range(split, config, position)
        elif fmt in ("jsonl", "json"):
            yield from _read_json_stream(path, fmt, compression, config, position)
        elif fmt == "parquet":
            yield from read_parquet(split, config)
        elif fmt == "text":
            yield _read_text_file(path, compression, position)
        elif fmt == "html":
            yield _read_html_file(path, compression, position, config.html_extractor)
        else:
            with _open_decompressed(path, compression, position, unbuffered=True) as stream:
                yield from read_warc(stream, path, fmt, config.html_extractor)
                raise_zstd_damage(stream)
    except Exception as error:  # unreadable file, exotic corruption or reader bug: never lose the run
        # a compressed text or page cut off: EOFError from the decompressor
        error_class = "TruncatedInput" if isinstance(error, EOFError) else type(error).__name__
        if split.start == 0:
            yield Failure(path, path, READ_STAGE, error_class, one_line(error))
        else:  # every later split of a file that vanished fails too: each names its bytes
            end = "its end" if split.end < 0 else split.end
            message = f"bytes {split.start} to {end} of the file: {one_line(error)}"
            yield Failure(f"{path}@{split.start}", path, READ_STAGE, error_class, message)


def iter_documents(
    patterns: list[str] | tuple[str, ...] | str,
    text_field: str = "text",
    id_field: str = "id",
    skipped: list[Rejection | Failure] | None = None,
    **options: Any,
) -> Iterator[Document]:
    """Documents from files matching the globs, outside Beam (training, generators, scripts).

    Records that fail or are rejected by the reader are not yielded: they go to `skipped` if given.
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    config = InputConfig(tuple(patterns), text_field=text_field, id_field=id_field, **options)
    for path in expand_paths(config.paths):
        for split in plan_splits(path, config):
            for record in read_split(split, config):
                if isinstance(record, Document):
                    yield record
                elif skipped is not None:
                    skipped.append(record)


def _read_text_file(path: str, compression: str | None, position: ReadPosition) -> Record:
    """A plain-text file (a book, a page) as one document whose id is the file's path."""
    data = _file_document_bytes(path, compression, position)
    if data is None:
        return _file_too_large(path)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        return Failure(path, path, READ_STAGE, "InvalidUtf8", one_line(error))
    return Document(id=path, text=text, source=path)


def _read_html_file(path: str, compression: str | None, position: ReadPosition, extractor: str) -> Record:
    """A saved HTML page as one document (its main text, as for WARC responses; the charset from
    the page itself); its path is its id and source."""
    html = _file_document_bytes(path, compression, position, wide_text_ok=True)
    if html is None:
        return _file_too_large(path)
    return page_record(Document(id=path, text="", source=path), html, "", extractor)


def _file_document_bytes(
    path: str, compression: str | None, position: ReadPosition, wide_text_ok: bool = False
) -> bytes | None:
    """A one-document file's bytes, decompressed; None past MAX_FILE_DOCUMENT_BYTES (read no further:
    a log file or a decompression bomb is not held in memory). `wide_text_ok`: a UTF-16 or UTF-32
    file is read too (an HTML page, whose charset is detected, its byte-order mark first)."""
    with _open_decompressed(path, compression, position, wide_text_ok=wide_text_ok) as handle:
        data = handle.read(MAX_FILE_DOCUMENT_BYTES + 1)
        if len(data) > MAX_FILE_DOCUMENT_BYTES:
            return None
        raise_zstd_damage(handle)
    return data


def _file_too_large(path: str) -> Failure:
    limit = f"{MAX_FILE_DOCUMENT_BYTES >> 20} MiB"
    why = f"over {limit} (decompressed): a text or HTML file is one document, read whole up to {limit}"
    return Failure(path, path, READ_STAGE, "RecordTooLarge", why)


@contextmanager
def _open_decompressed(
    path: str,
    compression: str | None,
    position: ReadPosition,
    unbuffered: bool = False,
    wide_text_ok: bool = False,
) -> Iterator[io.BufferedIOBase]:
    """The decompressed bytes of a file (gzip, bzip2 and xz member by member, on past a corrupt one);
    `unbuffered`: gzip as `CompressedMembers` itself, so a read gives what decompressed before a cut
    (WARC files, which buffer their own reads); UTF-16 and UTF-32 text is refused unless
    `wide_text_ok`."""
    with fileio.open_read(path) as raw:
        position.follow(raw)
        if compression is None:
            refuse_unreadable(raw, path, wide_text_ok)
            yield raw
            return
        refuse_not_compressed(raw, path, compression)
        if unbuffered and compression == "gzip":
            yield CompressedMembers(raw, GZIP)
            return
        with _decompressor(raw, compression) as handle:
            try:
                head = handle.peek(4)[:4]
            except (OSError, EOFError, zlib.error) as error:  # reading on would give b"", not the error
                raise TruncatedInput(one_line(error)) from None
            if not head:  # nothing decompressed: a zstd stream says here why
                raise_zstd_damage(handle)
            if not wide_text_ok:
                refuse_wide_text(head)
            yield handle


def raise_zstd_damage(handle: io.BufferedIOBase) -> None:
    """A zstd stream read to its end raises what ended it early: `CorruptZstd` (bytes that are not
    zstd), `TruncatedInput` (a cut inside a frame); other streams raise nothing here."""
    damage = handle.damage if isinstance(handle, ZstdStream) else None
    if isinstance(damage, EOFError):
        raise TruncatedInput(one_line(damage))
    if damage is not None:
        raise damage


def _decompressor(raw: io.IOBase, compression: str) -> io.BufferedIOBase:
    if compression == "zstd":
        return open_zstd(raw)
    codec = {"gzip": GZIP, "bzip2": BZIP2, "xz": XZ}[compression]
    # member by member: a corrupt one costs only itself (`damage`)
    return io.BufferedReader(CompressedMembers(raw, codec), MEMBERS_BUFFER)


def _read_json_stream(
    path: str, fmt: str, compression: str | None, config: InputConfig, position: ReadPosition
) -> Iterator[Record]:
    """Compressed JSON Lines, or a `.json` file (one array of objects, or JSON Lines)."""
    with _open_decompressed(path, compression, position) as handle:
        lines: Iterable[bytes | int] = lines_of(handle)
        line_number = 0
        if fmt == "json":
            head = handle.peek(64)[:64] if hasattr(handle, "peek") else b""
            if head.startswith(codecs.BOM_UTF8):
                handle.read(len(codecs.BOM_UTF8))
            if head:
                line_number = _skip_blank(handle)
                head = handle.peek(64)[:64]
            if head.startswith(b"["):
                yield from _read_json_array(handle, path, config)
                raise_zstd_damage(handle)
                return
            if head.startswith(b"{"):
                first = next(lines, b"")
                lines = chain([first], lines)
                if isinstance(first, bytes) and not _parses(first):  # one object, usually pretty-printed
                    whole = first + handle.read(MAX_JSON_OBJECT_BYTES) + handle.readline(MAX_LINE_BYTES)
                    one_object = len(whole) <= MAX_JSON_OBJECT_BYTES and _parses(whole)
                    lines = (
                        iter([whole]) if one_object else chain(lines_of(io.BytesIO(whole)), lines_of(handle))
                    )
        first_line = line_number + 1
        members = members_of(handle)
        try:
            for raw in lines:
                line_number += 1
                record = parse_json_line(raw, path, line_number, config)
                if fmt == "json" and line_number == first_line:
                    record = _hint_at_a_list_of_records(record, raw, path)
                if record is not None:
                    yield record
                if members is not None and members.damage:
                    yield from damage_failures(members, path)
            raise_zstd_damage(handle)
        except (OSError, EOFError, zlib.error) as error:
            where = f"{path}:{line_number + 1}"
            yield Failure(where, path, READ_STAGE, "TruncatedInput", one_line(error))
        except Exception as error:  # zstd raises its own error types
            where = f"{path}:{line_number + 1}"
            yield Failure(where, path, READ_STAGE, type(error).__name__, one_line(error))
        if members is not None:
            yield from damage_failures(members, path)


def _skip_blank(handle: io.BufferedReader) -> int:
    """Read past the whitespace at the handle's position (however long); the line ends it held."""
    line_ends = 0
    while chunk := handle.peek(1):
        rest = chunk.lstrip(b" \t\r\n")
        blank = len(chunk) - len(rest)
        line_ends += chunk.count(b"\n", 0, blank)
        handle.read(blank)
        if rest:
            break
    return line_ends


def _parses(raw: bytes) -> bool:
    try:
        json.loads(raw)
        return True
    except (ValueError, RecursionError):
        return False


def _hint_at_a_list_of_records(record: Record | None, raw: bytes, path: str) -> Record | None:
    """A `.json` file's first object without the text field that holds a list of records (an
    export such as `{"data": [...]}`): its failure says how to read them."""
    if not (isinstance(record, Failure) and record.error == "MissingText"):
        return record
    lists = [
        (k, v) for k, v in json.loads(raw).items() if isinstance(v, list) and v and isinstance(v[0], dict)
    ]
    if not lists:
        return record
    key, items = lists[0]
    hint = (
        f"; the file is one JSON object whose {key!r} holds a list of {len(items)} records: gristmill reads "
        f"a .json array or JSON Lines, e.g. `jq -c '.{key}[]' {os.path.basename(path)} > records.jsonl`"
    )
    return replace(record, message=record.message + hint)


def _read_json_array(handle: io.BufferedIOBase, path: str, config: InputConfig) -> Iterator[Record]:
    """Records of a `.json` file holding one array, element by element (see `pipeline.json_array`).

    An element with bytes that are not UTF-8, nested too deeply to parse, or too large to hold is
    one failure; a malformed element ends the file with one failure naming it; the elements before
    it are read.
    """
    index = 0
    try:
        for record, source in JsonArray(handle):
            where = f"{path}:{index}"
            if record is TOO_DEEP:  # as a JSON Lines line: named, and the elements after it are read
                yield Failure(
                    where, path, READ_STAGE, "TooDeeplyNested", f"array element {index}: {TOO_DEEP_MESSAGE}"
                )
            elif record is TOO_LARGE:
                yield Failure(where, path, READ_STAGE, "RecordTooLarge", _too_large_element(index))
            elif _not_utf8(source):
                yield Failure(
                    where, path, READ_STAGE, "InvalidUtf8", f"array element {index} is not valid UTF-8"
                )
            elif SURROGATE_ESCAPE_TEXT.search(source) and (problem := lone_surrogate(record)):
                yield Failure(
                    record_id(record, config.id_field, where), path, READ_STAGE, "LoneSurrogate", problem
                )
            elif too_deep(source, record):
                yield Failure(
                    record_id(record, config.id_field, where), path, READ_STAGE, "TooDeeplyNested", DEEPER
                )
            else:
                yield record_to_document(record, path, str(index), config)
            index += 1
    except ValueError as error:
        error_class = "RecordTooLarge" if isinstance(error, ElementTooLarge) else "MalformedJson"
        yield Failure(f"{path}:{index}", path, READ_STAGE, error_class, _rest_unread(index, error))
    except (OSError, EOFError, zlib.error) as error:
        yield Failure(f"{path}:{index}", path, READ_STAGE, "TruncatedInput", _rest_unread(index, error))


def _too_large_element(index: int) -> str:
    limit = json_array.MAX_ELEMENT_CHARS >> 20
    return f"array element {index} is over {limit} MiB, more than is held; passed over unread"


def _not_utf8(text: str) -> bool:
    """Whether `text` holds lone surrogates (what `surrogateescape` makes of bytes that are not UTF-8)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _rest_unread(index: int, error: Exception) -> str:
    reason = error.msg if isinstance(error, json.JSONDecodeError) else one_line(error)
    return f"array element {index}: {reason}; the rest of the file is not read"
