"""Deterministic sharded Parquet writers for `kept/`, `rejected/` and `failed/`.

A row's shard is a seeded hash of its id; inside a shard rows are sorted by a total order, so the
same input and recipe give byte-identical shards whatever the runner, worker count or input
order. Shards are written through `pipeline.fileio`, row group by row group, after an
external sort (`ShardWriter`), so a worker's memory does not grow with the shard. Each written
shard reports its rows, bytes, sha256 and per-stage/reason counts.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from pipeline import fileio
from pipeline.decisions import spill_dir
from pipeline.document import Document, Failure, Rejection
from pipeline.spill import SpillGroups, external_sort

if TYPE_CHECKING:
    from pipeline.recipe import OutputConfig

SHARD_SEED = 0x9E3779B9
MB = 1024 * 1024

KEPT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("source", pa.string()),
        ("url", pa.string()),
        ("language", pa.string()),
        ("language_score", pa.float64()),
        ("scores", pa.null()),  # a struct of float64, one field per score name of the run: shard_schema
        ("kind", pa.string()),
        ("metadata", pa.string()),
        ("n_tokens", pa.int64()),
    ]
)
# Rejected rows also carry what was known about the document when it was removed (url,
# language, scores, kind, metadata), so thresholds can be tuned from the rejected set.
# With `[output] token_ids = true`, kept shards also hold the token ids.
TOKEN_IDS_FIELD = pa.field("token_ids", pa.list_(pa.int32()))
REJECTED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("stage", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("duplicate_of", pa.string()),
        ("text", pa.string()),
        ("url", pa.string()),
        ("language", pa.string()),
        ("language_score", pa.float64()),
        ("scores", pa.null()),
        ("kind", pa.string()),
        ("metadata", pa.string()),
    ]
)
FAILED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("stage", pa.string()),
        ("error", pa.string()),
        ("message", pa.string()),
    ]
)
SCHEMAS = {"kept": KEPT_SCHEMA, "rejected": REJECTED_SCHEMA, "failed": FAILED_SCHEMA}


def shard_schema(kind: str, score_names: list[str] | tuple[str, ...]) -> pa.Schema:
    """The part's schema for a run: `scores` is a struct with one float64 field per score name
    (null where a document has no such score), so DuckDB (`scores['x']`), pandas and Hugging Face
    `datasets` (which cannot read Arrow maps) all read it; null-typed when the run has no scores
    (Parquet cannot store a struct without fields)."""
    schema = SCHEMAS[kind]
    if "scores" not in schema.names:
        return schema
    scores = pa.struct([(name, pa.float64()) for name in sorted(score_names)]) if score_names else pa.null()
    return schema.set(schema.get_field_index("scores"), pa.field("scores", scores))


def _json(value: Any) -> str:
    """`metadata` as strict JSON (RFC 8259), which DuckDB, JavaScript and Rust readers parse:
    NaN and the infinities become the strings "NaN", "Infinity" and "-Infinity", bytes their
    UTF-8 text where valid, and other values JSON has no type for (dates, decimals) their str()."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, default=_json_text)
    except ValueError:  # a NaN or an infinity somewhere in it: rare, so only then walk it
        return json.dumps(
            _finite(value), sort_keys=True, ensure_ascii=False, allow_nan=False, default=_json_text
        )


def _json_text(value: Any) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return str(value)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _document_columns(doc: Document) -> dict[str, Any]:
    return {
        "url": doc.url,
        "language": doc.language,
        "language_score": doc.language_score,
        "scores": {k: float(v) for k, v in sorted(doc.scores.items())} or None,
        "kind": doc.kind,
        "metadata": _json(doc.metadata),
        "n_tokens": None,
    }


def kept_row(doc: Document) -> dict[str, Any]:
    """A kept document as a `kept/` row."""
    return {"id": doc.id, "text": doc.text, "source": doc.source, **_document_columns(doc)}


def rejected_row(rejection: Rejection, keep_text: bool) -> dict[str, Any]:
    """A rejection as a `rejected/` row: why, plus the document as known when it was removed
    (text only when the recipe keeps rejected text)."""
    doc = rejection.doc
    return {
        "id": doc.id,
        "source": doc.source,
        "stage": rejection.stage,
        "reason": rejection.reason,
        "detail": rejection.detail,
        "duplicate_of": rejection.duplicate_of,
        "text": doc.text if keep_text else None,
        **_document_columns(doc),
    }


def failed_row(failure: Failure) -> dict[str, Any]:
    """A failure as a `failed/` row."""
    return {
        "id": failure.id,
        "source": failure.source,
        "stage": failure.stage,
        "error": failure.error,
        "message": failure.message,
    }


ID_BUCKETS = 256  # rows are spilled by id bucket until the shard count is known


def id_bucket(row: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(bucket of the row's id, row): the key rows are spilled by before a step that needs all of them."""
    return xxhash.xxh64_intdigest(row["id"].encode("utf-8", "surrogatepass")) % ID_BUCKETS, row


def _shard_rows(_bucket: int, rows, shards: int):
    for row in rows:
        yield shard_of(row["id"], shards), row


def shard_of(row_id: str, shards: int) -> int:
    """Seeded, platform-independent shard assignment."""
    return xxhash.xxh64_intdigest(row_id.encode("utf-8", "surrogatepass"), seed=SHARD_SEED) % shards


def shard_name(index: int, shards: int) -> str:
    return f"part-{index:05d}-of-{shards:05d}.parquet"


SORTED_FIRST = ("id", "source", "stage", "reason", "text", "metadata")


def row_sort_key(row: dict[str, Any]) -> tuple:
    """Total order inside a shard, stable even when ids repeat: rows that share id, source and text
    (or have none, `keep_rejected_text = false`) are settled by every other column in turn (the
    token ids follow from the text)."""
    first = tuple("" if row.get(k) is None else str(row[k]) for k in SORTED_FIRST)
    rest = tuple(
        (row[k] is None, str(row[k])) for k in sorted(row) if k not in SORTED_FIRST and k != "token_ids"
    )
    return first + rest


MAX_ROW_GROUP_ROWS = 64 * 1024 * 1024  # pyarrow's cap on the rows of one row group
RUN_BYTES = 64 * MB  # rows a shard writer sorts in memory at once (Python sizes, `row_memory`)


def row_memory(row: dict[str, Any]) -> int:
    """About how many bytes of Python objects a row holds (a list counts its ints too)."""
    return sum(sys.getsizeof(v) + (28 * len(v) if isinstance(v, list) else 0) for v in row.values())


class ArrowSize:
    """`pa.Table.from_pylist(rows, schema).nbytes` of all the rows, summed from tables of parts.

    Per array node (a column, a struct field, a list's values): length, nulls and value bytes add
    up across parts. Arrow counts offsets as 4 (or 8) bytes per row and a validity bitmap (only
    when the node has a null) as one bit per row rounded up to a byte, for the whole length
    (`test_writers_streaming` checks these rules against pyarrow).
    """

    def __init__(self) -> None:
        self.nodes: list[list[int]] = []

    def add(self, table: pa.Table) -> None:
        found: list[list[int]] = []
        for column in table.columns:
            if column.num_chunks != 1:  # pyarrow splits a column holding over 2 GB of strings
                raise ValueError(f"a {column.type} column in {column.num_chunks} chunks: write smaller parts")
            _array_nodes(column.chunks[0], found)
        if not self.nodes:
            self.nodes = found
        else:
            for total, part in zip(self.nodes, found, strict=True):
                total[1:] = [a + b for a, b in zip(total[1:], part[1:], strict=True)]

    def nbytes(self) -> int:
        total = 0
        for offset_width, length, nulls, values in self.nodes:
            if offset_width < 0:  # a null-typed array or a struct: no bytes of its own
                continue
            total += values + offset_width * length
            total += (length + 7) // 8 if nulls else 0
        return total


def _array_nodes(array: pa.Array, out: list[list[int]]) -> None:
    """Append [offset width, length, nulls, value bytes] of `array` and its children, depth first."""
    kind = array.type
    if pa.types.is_null(kind):
        out.append([-1, len(array), 0, 0])
    elif pa.types.is_struct(kind):  # Arrow's nbytes leaves out a struct's own validity bitmap
        out.append([-1, len(array), 0, 0])
        for index in range(kind.num_fields):
            _array_nodes(array.field(index), out)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        out.append([8 if pa.types.is_large_list(kind) else 4, len(array), array.null_count, 0])
        _array_nodes(array.values, out)
    elif pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind):
        width = 8 if pa.types.is_large_string(kind) else 4
        offsets = (
            np.frombuffer(
                array.buffers()[1], dtype=f"<i{width}", count=len(array) + 1, offset=array.offset * width
            )
            if len(array)
            else np.zeros(2, dtype="<i4")
        )
        out.append([width, len(array), array.null_count, int(offsets[-1] - offsets[0])])
    elif pa.types.is_primitive(kind) and not pa.types.is_boolean(kind):
        out.append([0, len(array), array.null_count, len(array) * kind.bit_width // 8])
    else:
        raise TypeError(f"no size rule for Arrow type {kind}")


def rows_per_group(nbytes: int, rows: int, row_group_mb: float) -> int:
    """Rows of one Parquet row group: `row_group_mb` of the table's average row."""
    average = max(1, nbytes // max(1, rows))
    return min(MAX_ROW_GROUP_ROWS, max(1, int(row_group_mb * MB // average)))


class _HashingSink(io.RawIOBase):
    """Passes writes on to `handle` and keeps their sha256 and byte count."""

    def __init__(self, handle) -> None:
        super().__init__()
        self.handle, self.sha256, self.size = handle, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.handle.write(data)
        self.sha256.update(data)
        size = memoryview(data).nbytes
        self.size += size
        return size

    def tell(self) -> int:
        return self.size


def write_parquet(
    handle,
    schema: pa.Schema,
    rows: Iterable[dict],
    count: int,
    nbytes: int,
    compression: str,
    row_group_mb: float,
) -> tuple[int, str]:
    """Stream `count` rows, already in order, to `handle` as Parquet, one row group in memory at a
    time (`nbytes`: the whole table's Arrow size, which sets the rows per group). The bytes are
    those `pq.write_table` writes for the whole table; every page carries a CRC, so a reader can
    check what it reads (a flipped byte in a zstd page otherwise decoded to other text, silently).
    No rows: the schema and no row group (Hugging Face `datasets` refuses a row group of 0 rows).
    Returns (bytes written, sha256, rows of each row group)."""
    group = rows_per_group(nbytes, count, row_group_mb)
    sink = _HashingSink(handle)
    writer = pq.ParquetWriter(
        sink,
        schema,
        compression=None if compression == "none" else compression,
        write_statistics=True,
        write_page_checksum=True,
    )
    batch: list[dict] = []
    row_groups: list[int] = []
    for row in rows:
        batch.append(row)
        if len(batch) == group:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=group)
            row_groups.append(group)
            batch = []
    if batch:
        writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=group)
        row_groups.append(len(batch))
    writer.close()
    return sink.size, sink.sha256.hexdigest(), row_groups


def full_schema(kind: str, score_names=(), token_ids: bool = False) -> pa.Schema:
    schema = shard_schema(kind, score_names)
    return schema.append(TOKEN_IDS_FIELD) if token_ids else schema


def encode_shard(
    kind: str,
    rows: list[dict[str, Any]],
    compression: str,
    row_group_mb: float,
    score_names=(),
    sort_key=row_sort_key,
    token_ids: bool = False,
) -> bytes:
    """Parquet bytes for one small shard held in memory, rows in `sort_key` order."""
    schema = full_schema(kind, score_names, token_ids)
    rows = sorted(rows, key=sort_key)
    size = ArrowSize()
    if rows:
        size.add(pa.Table.from_pylist(rows, schema=schema))
    sink = io.BytesIO()
    write_parquet(sink, schema, rows, len(rows), size.nbytes(), compression, row_group_mb)
    return sink.getvalue()


class ShardStats:
    """What a shard's info reports about its rows, counted as they stream past."""

    def __init__(self, kind: str) -> None:
        self.kind, self.rows, self.n_tokens, self.repeats = kind, 0, 0, 0
        self.counts, self.sources, self.source_tokens = Counter(), Counter(), Counter()

    def counted(self, rows: Iterable[dict]) -> Iterator[dict]:
        for row in rows:
            self.rows += 1
            if self.kind == "rejected":
                self.counts[f"{row['stage']}/{row['reason']}"] += 1
            elif self.kind == "failed":
                self.counts[f"{row['stage']}/{row['error']}"] += 1
            else:
                tokens = row.get("n_tokens") or 0
                self.n_tokens += tokens
                self.repeats += bool(row.get("repeat_of"))
                self.sources[row["source"]] += 1
                self.source_tokens[row["source"]] += tokens
            yield row

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"rows": self.rows, "counts": dict(self.counts)}
        if self.kind == "kept":
            info.update(n_tokens=self.n_tokens, repeats=self.repeats)
            info.update(sources=dict(self.sources), source_tokens=dict(self.source_tokens))
        return info


SIZE_ROWS = 4096  # rows converted to Arrow at once to size a run (sizes of parts add up: ArrowSize)


def _add_sizes(size: ArrowSize, run: list[dict], schema: pa.Schema) -> None:
    """Add a sorted run's Arrow size in slices, so no Arrow copy of the whole run is held."""
    for start in range(0, len(run), SIZE_ROWS):
        size.add(pa.Table.from_pylist(run[start : start + SIZE_ROWS], schema=schema))


class ShardWriter:
    """`(shard index, its rows, shard count, score names)` → the written shard's info.

    The rows stream in (`pipeline.spill.SpillGroups`), are sorted in runs of `RUN_BYTES` spilled
    under `scratch` (`external_sort`) and streamed into the shard one row group at a time, so a
    worker holds about `RUN_BYTES` plus one row group whatever the shard's size.
    """

    def __init__(
        self,
        directory: str,
        kind: str,
        compression: str,
        row_group_mb: float,
        sort_key,
        token_ids: bool,
        scratch: str,
    ) -> None:
        self.directory = directory
        self.kind = kind
        self.compression = compression
        self.row_group_mb = row_group_mb
        self.sort_key = sort_key
        self.token_ids = token_ids
        self.scratch = scratch

    def __call__(self, index: int, rows: Iterable, shards: int, score_names: list[str]):
        schema = full_schema(self.kind, score_names, self.token_ids)
        stats, size = ShardStats(self.kind), ArrowSize()
        ordered = external_sort(
            stats.counted(rows),
            self.sort_key,
            f"{self.scratch}/{self.kind}-{index:05d}",
            RUN_BYTES,
            row_memory,
            lambda run: _add_sizes(size, run, schema),
        )
        name = shard_name(index, shards)
        path = f"{self.directory}/{self.kind}/{name}"
        if fileio.is_local(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with fileio.create(path) as handle:
            written, digest, row_groups = write_parquet(
                handle, schema, ordered, stats.rows, size.nbytes(), self.compression, self.row_group_mb
            )
        info = {"kind": self.kind, "file": f"{self.kind}/{name}", "shard": index, "of": shards}
        info.update(rows=stats.rows, bytes=written, sha256=digest, row_groups=row_groups)
        yield {**info, **stats.info()}


def _score_names(row: dict[str, Any]) -> frozenset:
    return frozenset(row.get("scores") or ())


def _union(sets) -> frozenset:
    return frozenset().union(*sets)


class ScoreNames(beam.PTransform):
    """Rows of several parts → one sorted list of every score name (the `scores` struct's fields)."""

    def expand(self, parts):
        names = [
            rows | f"Names{index}" >> beam.Map(_score_names) | f"Union{index}" >> beam.CombineGlobally(_union)
            for index, rows in enumerate(parts)
        ]
        return (
            tuple(names)
            | "AllNames" >> beam.Flatten()
            | "Union" >> beam.CombineGlobally(_union)
            | "Sorted" >> beam.Map(sorted)
        )


def _text_bytes(row: dict[str, Any]) -> int:
    return len((row.get("text") or "").encode("utf-8", "surrogatepass")) + 64


class WriteShards(beam.PTransform):
    """Rows (dicts) → sharded Parquet files; outputs one info dict per written shard.

    `shards` fixes the shard count; otherwise `target_shard_mb` derives it from the rows' total
    uncompressed text size (computed in the pipeline, passed as a side input). `score_names`
    (a singleton PCollection from `ScoreNames`) gives the `scores` struct's fields. With `keyed`,
    the input is already (shard, row) pairs and `shard_count` a singleton PCollection of the count.
    """

    def __init__(
        self,
        directory: str,
        kind: str,
        shards: int,
        target_shard_mb: float,
        compression: str,
        row_group_mb: float,
        score_names=None,
        keyed: bool = False,
        shard_count=None,
        sort_key=row_sort_key,
        token_ids: bool = False,
    ) -> None:
        super().__init__(label=f"Write{kind.capitalize()}")
        self.score_names = score_names
        self.keyed = keyed
        self.shard_count = shard_count
        self.sort_key = sort_key
        self.token_ids = token_ids
        self.directory = directory
        self.kind = kind
        self.shards = shards
        self.target_shard_mb = target_shard_mb
        self.compression = compression
        self.row_group_mb = row_group_mb

    def expand(self, rows):
        """`rows`: a PCollection or a tuple of them (never flattened: see `pipeline.spill`)."""
        parts = rows if isinstance(rows, tuple) else (rows,)
        pipeline = parts[0].pipeline
        names = self.score_names
        if names is None:
            names = pipeline | "NoScoreNames" >> beam.Create([[]])
        spill = spill_dir(pipeline, f"write-{self.kind}")
        write = ShardWriter(
            self.directory,
            self.kind,
            self.compression,
            self.row_group_mb,
            self.sort_key,
            self.token_ids,
            f"{spill}/runs",
        )
        if self.keyed:
            count = self.shard_count
        elif self.shards:
            count = pipeline | "ShardCount" >> beam.Create([self.shards])
        else:
            target = (self.target_shard_mb or 256.0) * MB
            count = (
                tuple(part | f"Bytes{i}" >> beam.Map(_text_bytes) for i, part in enumerate(parts))
                | "AllBytes" >> beam.Flatten(pipeline=pipeline)
                | "Total" >> beam.CombineGlobally(sum)
                | "ShardCount" >> beam.Map(lambda total: max(1, math.ceil(total / target)))
            )
        shards = beam.pvalue.AsSingleton(count)
        if not self.keyed:  # a row's shard needs the count: spill by a fixed bucket of the id first
            parts = tuple(part | f"Bucket{i}" >> beam.Map(id_bucket) for i, part in enumerate(parts)) | (
                "ByBucket" >> SpillGroups(f"{spill}/buckets", _shard_rows, shards)
            )
        return parts | "ByShard" >> SpillGroups(
            f"{spill}/shards", write, shards, beam.pvalue.AsSingleton(names)
        )


def empty_shards(
    out: OutputConfig, staging: str, part: str, shards: list[dict], score_names: list[str]
) -> list[dict[str, Any]]:
    """Write the shards of `part` that got no rows, so part-i-of-N is complete; their infos."""
    count = out.shards or max([s["of"] for s in shards if s["kind"] == part], default=1)
    present = {s["shard"] for s in shards if s["kind"] == part}
    infos = []
    for index in sorted(set(range(count)) - present):
        token_ids = part == "kept" and out.token_ids
        data = encode_shard(part, [], out.compression, out.row_group_mb, score_names, token_ids=token_ids)
        name = shard_name(index, count)
        fileio.write_bytes(f"{staging}/{part}/{name}", data)
        infos.append(
            {
                "kind": part,
                "file": f"{part}/{name}",
                "shard": index,
                "of": count,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "row_groups": [],
                **ShardStats(part).info(),  # rows and counts; a kept shard's tokens, repeats, sources
            }
        )
    return infos
