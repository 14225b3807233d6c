"""Parquet input: the rows of the row groups a split owns, one batch at a time, as documents."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pipeline import fileio
from pipeline.document import READ_STAGE, Failure, Record, one_line
from pipeline.record_fields import record_to_document

if TYPE_CHECKING:
    from pipeline.readers import InputConfig, Split

PARQUET_BATCH_ROWS = 1024


def _row_group_records(
    parquet: Any, group: int, first_row: int, path: str, config: InputConfig
) -> Iterator[Record]:
    """The rows of one row group, a batch at a time (a whole row group as Python objects took ~4x
    its text in memory); where it stops decoding, one `CorruptRowGroup` failure for the rest."""
    import pyarrow as pa

    batches = parquet.iter_batches(PARQUET_BATCH_ROWS, row_groups=[group], use_threads=False)
    row = first_row
    while True:
        try:
            batch = next(batches, None)
        except (OSError, pa.ArrowException) as error:
            last = first_row + parquet.metadata.row_group(group).num_rows - 1
            yield Failure(
                f"{path}@rowgroup:{group}",
                path,
                READ_STAGE,
                "CorruptRowGroup",
                f"row group {group} (rows {first_row:,} to {last:,}) does not decode from row {row:,} on "
                f"({one_line(error)}); those rows are lost, the file is read on from the next row group",
            )
            return
        if batch is None:
            return
        for record in _batch_rows(batch, path, row):
            yield (
                record if isinstance(record, Failure) else record_to_document(record, path, str(row), config)
            )
            row += 1


def _batch_rows(batch: Any, path: str, first_row: int) -> Iterator[dict | Failure]:
    """A batch's rows as dicts; a row whose string column holds bytes that are not UTF-8 (a writer
    that does not validate them can leave them there) is an `InvalidUtf8` failure. Converting the
    whole batch raised for the one row, which lost the rest of the file."""
    try:
        rows = batch.to_pylist()
    except UnicodeDecodeError:
        rows = None
    if rows is not None:
        yield from rows
        return
    for offset in range(batch.num_rows):
        row = batch.slice(offset, 1)
        try:
            yield row.to_pylist()[0]
        except UnicodeDecodeError:
            columns = [name for name, column in zip(row.schema.names, row.columns) if not _decodes(column)]
            where = f"{path}:{first_row + offset}"
            message = f"column {', '.join(map(repr, columns))} is not valid UTF-8"
            yield Failure(where, path, READ_STAGE, "InvalidUtf8", message)


def _decodes(column: Any) -> bool:
    try:
        column.to_pylist()
    except UnicodeDecodeError:
        return False
    return True


def _row_group_middle(group: Any) -> int:
    """The byte offset of the middle of a row group's column chunks."""
    columns = [group.column(c) for c in range(group.num_columns)]
    starts = [c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in columns]
    return min(starts, default=0) + sum(c.total_compressed_size for c in columns) // 2


def read_parquet(split: Split, config: InputConfig) -> Iterator[Record]:
    """The rows of the row groups whose middle lies in the split's byte range (as Hadoop splits
    Parquet), numbered by their row in the file. Pages that carry a CRC are checked; a row group
    that does not decode is one failure, and the row groups after it are read."""
    with fileio.open_random_access(split.path) as handle:
        try:
            parquet = fileio.parquet_reader(handle, page_checksum_verification=True)
        except Exception:
            if split.start == 0:  # an unreadable file is one failure, from its first split
                raise
            return
        metadata = parquet.metadata
        # The first and last splits reach past the file's ends, so a row group whose offsets a
        # writer got wrong is still read, once.
        start = split.start if split.start > 0 else -math.inf
        end = split.end if split.end >= 0 else math.inf
        row = 0
        for group in range(metadata.num_row_groups):
            described = metadata.row_group(group)
            if start <= _row_group_middle(described) < end:
                yield from _row_group_records(parquet, group, row, split.path, config)
            row += described.num_rows
