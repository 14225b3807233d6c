"""Deterministic sharded Parquet writers for `kept/`, `rejected/` and `failed/`.

A row's shard is a seeded hash of its id; inside a shard rows are sorted by a total order, so the
same input and recipe give byte-identical shards whatever the runner, worker count or input
order. Each written shard reports its rows, bytes, sha256 and per-stage/reason counts.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
from collections import Counter
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from pipeline.document import Document, Failure, Rejection

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
        ("scores", pa.map_(pa.string(), pa.float64())),
        ("kind", pa.string()),
        ("metadata", pa.string()),
        ("n_tokens", pa.int64()),
    ]
)
# With `[output] token_ids = true`, kept shards also hold the token ids.
KEPT_SCHEMA_WITH_IDS = KEPT_SCHEMA.append(pa.field("token_ids", pa.list_(pa.int32())))
REJECTED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("stage", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("duplicate_of", pa.string()),
        ("text", pa.string()),
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


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def kept_row(doc: Document) -> dict[str, Any]:
    """A kept document as a `kept/` row."""
    return {
        "id": doc.id,
        "text": doc.text,
        "source": doc.source,
        "url": doc.url,
        "language": doc.language,
        "language_score": doc.language_score,
        "scores": sorted((k, float(v)) for k, v in doc.scores.items()),
        "kind": doc.kind,
        "metadata": _json(doc.metadata),
        "n_tokens": None,
    }


def rejected_row(rejection: Rejection, keep_text: bool) -> dict[str, Any]:
    """A rejection as a `rejected/` row; text only when the recipe keeps rejected text."""
    doc = rejection.doc
    return {
        "id": doc.id,
        "source": doc.source,
        "stage": rejection.stage,
        "reason": rejection.reason,
        "detail": rejection.detail,
        "duplicate_of": rejection.duplicate_of,
        "text": doc.text if keep_text else None,
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


def shard_of(row_id: str, shards: int) -> int:
    """Seeded, platform-independent shard assignment."""
    return xxhash.xxh64_intdigest(row_id.encode("utf-8", "surrogatepass"), seed=SHARD_SEED) % shards


def shard_name(index: int, shards: int) -> str:
    return f"part-{index:05d}-of-{shards:05d}.parquet"


def row_sort_key(row: dict[str, Any]) -> tuple:
    """Total order inside a shard, stable even when ids repeat."""
    return tuple(
        "" if row.get(k) is None else str(row[k]) for k in ("id", "source", "stage", "reason", "text")
    )


def encode_shard(
    kind: str,
    rows: list[dict[str, Any]],
    compression: str,
    row_group_mb: float,
    sort_key=row_sort_key,
    schema: pa.Schema | None = None,
) -> bytes:
    """Parquet bytes for one shard, rows in `sort_key` order, row groups sized for streaming."""
    rows = sorted(rows, key=sort_key)
    table = pa.Table.from_pylist(rows, schema=schema or SCHEMAS[kind])
    average = max(1, table.nbytes // max(1, len(rows)))
    rows_per_group = max(1, int(row_group_mb * MB // average))
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        row_group_size=rows_per_group,
        compression=None if compression == "none" else compression,
        write_statistics=True,
    )
    return sink.getvalue()


def write_file(path: str, data: bytes) -> None:
    """Write bytes through Beam's filesystems (local paths, gs://, s3://...)."""
    from apache_beam.io.filesystems import FileSystems

    if "://" not in path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with FileSystems.create(path) as handle:
        handle.write(data)


def _outcome_counts(kind: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    if kind == "rejected":
        return dict(Counter(f"{r['stage']}/{r['reason']}" for r in rows))
    if kind == "failed":
        return dict(Counter(f"{r['stage']}/{r['error']}" for r in rows))
    return {}


class _WriteShardFn(beam.DoFn):
    def __init__(
        self, directory: str, kind: str, compression: str, row_group_mb: float, sort_key, schema
    ) -> None:
        self.directory = directory
        self.kind = kind
        self.compression = compression
        self.row_group_mb = row_group_mb
        self.sort_key = sort_key
        self.schema = schema

    def process(self, element, shards: int):
        index, rows = element
        rows = list(rows)
        data = encode_shard(self.kind, rows, self.compression, self.row_group_mb, self.sort_key, self.schema)
        name = shard_name(index, shards)
        write_file(f"{self.directory}/{self.kind}/{name}", data)
        info = {
            "kind": self.kind,
            "file": f"{self.kind}/{name}",
            "shard": index,
            "of": shards,
            "rows": len(rows),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "counts": _outcome_counts(self.kind, rows),
        }
        if self.kind == "kept":
            info["n_tokens"] = sum(row.get("n_tokens") or 0 for row in rows)
            info["repeats"] = sum(1 for row in rows if row.get("repeat_of"))
            sources, source_tokens = Counter(), Counter()
            for row in rows:
                sources[row["source"]] += 1
                source_tokens[row["source"]] += row.get("n_tokens") or 0
            info["sources"], info["source_tokens"] = dict(sources), dict(source_tokens)
        yield info


def _text_bytes(row: dict[str, Any]) -> int:
    return len((row.get("text") or "").encode("utf-8", "surrogatepass")) + 64


class WriteShards(beam.PTransform):
    """Rows (dicts) → sharded Parquet files; outputs one info dict per written shard.

    `shards` fixes the shard count; otherwise `target_shard_mb` derives it from the rows' total
    uncompressed text size (computed in the pipeline, passed as a side input). With `keyed`, the
    input is already (shard, row) pairs and `shard_count` a singleton PCollection of the count.
    """

    def __init__(
        self,
        directory: str,
        kind: str,
        shards: int,
        target_shard_mb: float,
        compression: str,
        row_group_mb: float,
        keyed: bool = False,
        shard_count=None,
        sort_key=row_sort_key,
        token_ids: bool = False,
    ) -> None:
        super().__init__(label=f"Write{kind.capitalize()}")
        self.keyed = keyed
        self.shard_count = shard_count
        self.sort_key = sort_key
        self.schema = KEPT_SCHEMA_WITH_IDS if token_ids else SCHEMAS[kind]
        self.directory = directory
        self.kind = kind
        self.shards = shards
        self.target_shard_mb = target_shard_mb
        self.compression = compression
        self.row_group_mb = row_group_mb

    def expand(self, rows):
        write = _WriteShardFn(
            self.directory, self.kind, self.compression, self.row_group_mb, self.sort_key, self.schema
        )
        if self.keyed:
            shards = beam.pvalue.AsSingleton(self.shard_count)
            return rows | "Group" >> beam.GroupByKey() | "Write" >> beam.ParDo(write, shards)
        if self.shards:
            count = rows.pipeline | "ShardCount" >> beam.Create([self.shards])
        else:
            target = (self.target_shard_mb or 256.0) * MB
            count = (
                rows
                | "Bytes" >> beam.Map(_text_bytes)
                | "Total" >> beam.CombineGlobally(sum)
                | "ShardCount" >> beam.Map(lambda total: max(1, math.ceil(total / target)))
            )
        shards = beam.pvalue.AsSingleton(count)
        return (
            rows
            | "Key" >> beam.Map(lambda row, n: (shard_of(row["id"], n), row), shards)
            | "Group" >> beam.GroupByKey()
            | "Write" >> beam.ParDo(write, shards)
        )
