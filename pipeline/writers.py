"""Deterministic sharded Parquet writers for `kept/`, `rejected/` and `failed/`.

A row's shard is a seeded hash of its id; inside a shard rows are sorted by a total order, so the
same input and recipe give byte-identical shards whatever the runner, worker count or input
order. Shards are written through Beam's `FileSystems` (`pipeline.fileio`). Each written shard reports its rows, bytes, sha256 and per-stage/reason counts.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections import Counter
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from pipeline.decisions import spill_dir
from pipeline.document import Document, Failure, Rejection
from pipeline.fileio import write_bytes
from pipeline.spill import SpillGroups

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
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


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


OUTPUT_COLUMNS = ("scores", "language", "language_score", "metadata")


def restore_output_columns(record: dict[str, Any]) -> dict[str, Any]:
    """The document fields of a gristmill output row read back as input (the inverse of
    `_document_columns`): scores, language and language_score as such, metadata unpacked.
    Only records with all of `OUTPUT_COLUMNS` count as output rows (a code candidate's own
    `language` field stays in its metadata); others give {}."""
    if not all(name in record for name in OUTPUT_COLUMNS):
        return {}
    restored: dict[str, Any] = {}
    scores = record.get("scores")
    if isinstance(scores, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in scores):
        scores = dict(scores)  # outputs written with a map column
    if isinstance(scores, dict):
        scores = {k: v for k, v in scores.items() if v is not None}  # struct fields a doc lacks
        if all(isinstance(v, (int, float)) for v in scores.values()):
            restored["scores"] = {str(k): float(v) for k, v in scores.items()}
    if isinstance(record.get("language"), str):
        restored["language"] = record["language"]
    if isinstance(record.get("language_score"), (int, float)):
        restored["language_score"] = float(record["language_score"])
    metadata = record.get("metadata")
    if isinstance(metadata, str) and metadata.startswith("{"):
        try:
            restored["metadata"] = json.loads(metadata)
        except ValueError:
            pass
    elif isinstance(metadata, dict):
        restored["metadata"] = metadata
    return restored


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


def _id_bucket(row: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return xxhash.xxh64_intdigest(row["id"].encode("utf-8", "surrogatepass")) % ID_BUCKETS, row


def _shard_rows(_bucket: int, rows: list, shards: int):
    for row in rows:
        yield shard_of(row["id"], shards), row


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
    score_names=(),
    sort_key=row_sort_key,
    token_ids: bool = False,
) -> bytes:
    """Parquet bytes for one shard, rows in `sort_key` order, row groups sized for streaming."""
    rows = sorted(rows, key=sort_key)
    schema = shard_schema(kind, score_names)
    if token_ids:
        schema = schema.append(TOKEN_IDS_FIELD)
    table = pa.Table.from_pylist(rows, schema=schema)
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


def _outcome_counts(kind: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    if kind == "rejected":
        return dict(Counter(f"{r['stage']}/{r['reason']}" for r in rows))
    if kind == "failed":
        return dict(Counter(f"{r['stage']}/{r['error']}" for r in rows))
    return {}


class ShardWriter:
    """`(shard index, its rows, shard count, score names)` → the written shard's info."""

    def __init__(
        self, directory: str, kind: str, compression: str, row_group_mb: float, sort_key, token_ids: bool
    ) -> None:
        self.directory = directory
        self.kind = kind
        self.compression = compression
        self.row_group_mb = row_group_mb
        self.sort_key = sort_key
        self.token_ids = token_ids

    def __call__(self, index: int, rows: list, shards: int, score_names: list[str]):
        data = encode_shard(
            self.kind, rows, self.compression, self.row_group_mb, score_names, self.sort_key, self.token_ids
        )
        name = shard_name(index, shards)
        write_bytes(f"{self.directory}/{self.kind}/{name}", data)
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
        write = ShardWriter(
            self.directory, self.kind, self.compression, self.row_group_mb, self.sort_key, self.token_ids
        )
        parts = rows if isinstance(rows, tuple) else (rows,)
        pipeline = parts[0].pipeline
        names = self.score_names
        if names is None:
            names = pipeline | "NoScoreNames" >> beam.Create([[]])
        spill = spill_dir(pipeline, f"write-{self.kind}")
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
            parts = tuple(part | f"Bucket{i}" >> beam.Map(_id_bucket) for i, part in enumerate(parts)) | (
                "ByBucket" >> SpillGroups(f"{spill}/buckets", _shard_rows, shards)
            )
        return parts | "ByShard" >> SpillGroups(
            f"{spill}/shards", write, shards, beam.pvalue.AsSingleton(names)
        )
