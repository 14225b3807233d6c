"""The shard writer streams (external sort, one row group at a time) and writes the bytes that
`pq.write_table` of the whole sorted table writes."""

import hashlib
import io
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import writers
from pipeline.kept_output import shard_order
from pipeline.writers import ArrowSize, ShardWriter, encode_shard, full_schema, row_sort_key

WORDS = "grain mill river stone flour wheel wéir ünd 水車 🌾".split()


def kept_rows(n: int, seed: int, token_ids: bool = False) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 300)))
        scores = rng.choice([None, {"a": rng.random()}, {"a": rng.random(), "b": rng.random()}])
        rows.append(
            {
                "id": f"d{rng.randrange(n // 2 + 1):05d}",  # repeated ids: the sort key's ties matter
                "text": text,
                "source": rng.choice(["web.jsonl", "books.jsonl"]),
                "url": rng.choice([None, f"https://x.org/{i}"]),
                "language": rng.choice([None, "en"]),
                "language_score": rng.choice([None, rng.random()]),
                "scores": scores,
                "kind": None,
                "metadata": "{}",
                "n_tokens": rng.choice([None, rng.randint(0, 900)]),
                **(
                    {"token_ids": [rng.randrange(32000) for _ in range(rng.randint(0, 40))]}
                    if token_ids
                    else {}
                ),
            }
        )
    return rows


def rejected_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "id": f"r{rng.randrange(n):05d}",
            "source": "web.jsonl",
            "stage": rng.choice(["gopher", "minhash_dedup"]),
            "reason": rng.choice(["too_short", "near_duplicate"]),
            "detail": rng.choice([None, "x" * rng.randint(0, 50)]),
            "duplicate_of": rng.choice([None, "d00001"]),
            "text": rng.choice([None, " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 80)))]),
            "url": None,
            "language": "en",
            "language_score": None,
            "scores": None,
            "kind": None,
            "metadata": "{}",
        }
        for _ in range(n)
    ]


def whole_table_bytes(
    kind, rows, compression, row_group_mb, score_names=(), sort_key=row_sort_key, token_ids=False
):
    """What the writer wrote before it streamed: the whole sorted table in one `pq.write_table`
    (with page CRCs, as the writer now writes them)."""
    rows = sorted(rows, key=sort_key)
    table = pa.Table.from_pylist(rows, schema=full_schema(kind, score_names, token_ids))
    average = max(1, table.nbytes // max(1, len(rows)))
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        row_group_size=max(1, int(row_group_mb * writers.MB // average)),
        compression=None if compression == "none" else compression,
        write_statistics=True,
        write_page_checksum=True,
    )
    return sink.getvalue()


@pytest.mark.parametrize("seed", range(6))
def test_arrow_size_of_parts_is_the_whole_tables(seed):
    rng = random.Random(seed)
    kind = rng.choice(["kept", "rejected"])
    token_ids = kind == "kept" and seed % 2 == 0
    rows = kept_rows(300, seed, token_ids) if kind == "kept" else rejected_rows(300, seed)
    names = ["a", "b"] if kind == "kept" or seed % 3 else []  # kept rows carry scores
    schema = full_schema(kind, names, token_ids)
    cuts = sorted(rng.sample(range(1, len(rows)), 7))
    size = ArrowSize()
    for start, end in zip([0, *cuts], [*cuts, len(rows)]):
        size.add(pa.Table.from_pylist(rows[start:end], schema=schema))
    assert size.nbytes() == pa.Table.from_pylist(rows, schema=schema).nbytes


def test_arrow_size_counts_a_bitmap_once_nulls_appear_in_any_part():
    schema = full_schema("failed")
    rows = [{"id": "a", "source": "s", "stage": "x", "error": "E", "message": "m"}] * 9
    rows.append({"id": "b", "source": "s", "stage": "x", "error": "E", "message": None})
    size = ArrowSize()
    size.add(pa.Table.from_pylist(rows[:9], schema=schema))
    size.add(pa.Table.from_pylist(rows[9:], schema=schema))
    assert size.nbytes() == pa.Table.from_pylist(rows, schema=schema).nbytes


@pytest.mark.parametrize(
    ("kind", "compression", "row_group_mb", "token_ids"),
    [("kept", "zstd", 0.01, False), ("kept", "snappy", 0.002, True), ("rejected", "none", 0.004, False)],
)
def test_encode_shard_writes_the_whole_tables_bytes(kind, compression, row_group_mb, token_ids):
    rows = kept_rows(500, 3, token_ids) if kind == "kept" else rejected_rows(500, 3)
    names = ["a", "b"] if kind == "kept" else []
    data = encode_shard(kind, rows, compression, row_group_mb, names, token_ids=token_ids)
    assert data == whole_table_bytes(kind, rows, compression, row_group_mb, names, token_ids=token_ids)
    assert pq.ParquetFile(io.BytesIO(data)).num_row_groups > 3


def test_an_empty_shard_has_the_schema_and_no_row_group():
    """A row group of 0 rows (what `pq.write_table` writes for no rows) stops Hugging Face `datasets`."""
    empty = pq.ParquetFile(io.BytesIO(encode_shard("kept", [], "zstd", 32.0, ["a"], token_ids=True)))
    assert empty.num_row_groups == 0 and empty.schema_arrow.equals(full_schema("kept", ["a"], True))


def test_rows_that_tie_on_the_first_columns_are_ordered_by_the_rest():
    """Two rejections of one id with no text (`keep_rejected_text = false`) came in arrival order."""
    (row,) = rejected_rows(1, 1)
    rows = [{**row, "id": "dup", "text": None, "detail": detail} for detail in ("words=2<50", "words=1<50")]
    assert encode_shard("rejected", rows, "zstd", 32.0) == encode_shard("rejected", rows[::-1], "zstd", 32.0)


@pytest.mark.parametrize("token_ids", [False, True])
def test_shard_writer_spills_sorted_runs_and_writes_identical_bytes(tmp_path, monkeypatch, token_ids):
    """Runs of a few KB, each sized in slices of 7 rows: the shard is sorted from many spilled
    runs, its bytes and info unchanged."""
    monkeypatch.setattr(writers, "RUN_BYTES", 20_000)
    monkeypatch.setattr(writers, "SIZE_ROWS", 7)
    rows = kept_rows(800, 5, token_ids)
    for index, row in enumerate(rows):
        row["repeat_of"] = "d00000" if index % 50 == 0 else None
    sort_key = lambda row: shard_order(row, 7)  # noqa: E731 - the kept shards' order
    write = ShardWriter(
        str(tmp_path / "out"), "kept", "zstd", 0.01, sort_key, token_ids, str(tmp_path / "runs")
    )
    spilled = []
    real_write = writers.external_sort.__globals__["write_values"]

    def counting_write(path, values):
        spilled.append(path)
        real_write(path, values)

    monkeypatch.setitem(writers.external_sort.__globals__, "write_values", counting_write)
    (info,) = write(2, iter(rows), 5, ["a", "b"])
    data = (tmp_path / "out" / info["file"]).read_bytes()
    assert len(spilled) > 10 and not list((tmp_path / "runs").rglob("*.pkl"))  # merged, then deleted
    assert data == whole_table_bytes("kept", rows, "zstd", 0.01, ["a", "b"], sort_key, token_ids)
    assert info["file"] == "kept/part-00002-of-00005.parquet" and info["rows"] == 800
    assert info["bytes"] == len(data) and info["sha256"] == hashlib.sha256(data).hexdigest()
    footer = pq.ParquetFile(io.BytesIO(data)).metadata  # the trainer's reader takes them from the info
    assert info["row_groups"] == [footer.row_group(i).num_rows for i in range(footer.num_row_groups)]
    assert len(info["row_groups"]) > 3
    assert info["n_tokens"] == sum(r["n_tokens"] or 0 for r in rows)
    assert info["repeats"] == 16 and sum(info["sources"].values()) == 800


def test_shard_writer_counts_rejections_by_stage_and_reason(tmp_path):
    rows = rejected_rows(200, 9)
    write = ShardWriter(str(tmp_path), "rejected", "zstd", 1.0, row_sort_key, False, str(tmp_path / "runs"))
    (info,) = write(0, iter(rows), 1, [])
    assert sum(info["counts"].values()) == 200 and "minhash_dedup/near_duplicate" in info["counts"]
    assert (tmp_path / info["file"]).read_bytes() == whole_table_bytes("rejected", rows, "zstd", 1.0)
