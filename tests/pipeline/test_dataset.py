import hashlib
import json
import os
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import dataset
from pipeline.dataset import (
    BadOutputFolder,
    GristmillDataset,
    OutputStream,
    dataloader_positions,
    kept_units,
    shuffled_positions,
)
from pipeline.document import Document
from pipeline.writers import encode_shard, kept_row, shard_name

DOCS = 300


def token_ids(i: int) -> list[int] | None:
    """Some documents' token ids: varied lengths, ids past the small-int cache, one empty, one null."""
    return None if i == 7 else [(i * 7919 + k) % 40000 for k in range(i % 23)]


def write_output(folder, docs=DOCS, shards=3, row_group_mb=0.002, tokens=False) -> str:
    """A finished output folder: kept shards with small row groups and a manifest."""
    os.makedirs(folder / "kept")
    entries = []
    for index in range(shards):
        rows = [kept_row(Document(f"doc-{i:04d}", f"text {i} " * 20)) for i in range(index, docs, shards)]
        if tokens:
            rows = [
                {**row, "n_tokens": int(row["id"][4:]), "token_ids": token_ids(int(row["id"][4:]))}
                for row in rows
            ]
        data = encode_shard("kept", rows, "zstd", row_group_mb, token_ids=tokens)
        name = f"kept/{shard_name(index, shards)}"
        (folder / name).write_bytes(data)
        entries.append(
            {
                "kind": "kept",
                "file": name,
                "shard": index,
                "of": shards,
                "rows": len(rows),
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "counts": {},
            }
        )
    (folder / "manifest.json").write_text(json.dumps({"shards": entries, "counts": {"kept": docs}}))
    return str(folder)


@pytest.fixture
def output(tmp_path):
    return write_output(tmp_path / "out")


def ids(records):
    return [r["id"] for r in records]


def test_units_are_row_groups_of_every_kept_shard(output):
    units = kept_units(output)
    assert len(units) > 6  # several row groups per shard
    assert sum(u.rows for u in units) == DOCS


def test_two_ranks_three_workers_read_every_document_exactly_once(output):
    units = kept_units(output)
    seen = []
    for slot in range(6):
        seen += ids(OutputStream(units, seed=7, slot=slot, slots=6, buffer_size=16))
    assert sorted(seen) == [f"doc-{i:04d}" for i in range(DOCS)]


def test_torch_dataloader_workers_and_ranks_cover_the_output_once(output):
    from torch.utils.data import DataLoader

    seen = []
    for rank in range(2):
        dataset = GristmillDataset(output, rank=rank, world_size=2, seed=3, buffer_size=8, batch_size=5)
        loader = DataLoader(dataset, batch_size=5, num_workers=3, collate_fn=list)
        seen += [r["id"] for batch in loader for r in batch]
    assert sorted(seen) == [f"doc-{i:04d}" for i in range(DOCS)]


def test_slots_get_equal_shares_even_with_fewer_row_groups_than_slots(tmp_path):
    """Whole row groups were dealt round-robin: with two row groups and four ranks of three
    workers, rank 0 read all 300 documents and ranks 1-3 none."""
    units = kept_units(write_output(tmp_path / "out", shards=2, row_group_mb=64))
    assert len(units) == 2
    for epoch in range(3):
        streams = [OutputStream(units, seed=1, epoch=epoch, slot=s, slots=12) for s in range(12)]
        assert {len(stream) for stream in streams} == {25}
        assert sorted(i for stream in streams for i in ids(stream)) == [f"doc-{i:04d}" for i in range(DOCS)]
    uneven = [len(OutputStream(units, slot=s, slots=7)) for s in range(7)]
    assert sum(uneven) == DOCS and max(uneven) - min(uneven) == 1


def test_drop_remainder_gives_every_rank_the_same_batches(tmp_path):
    from torch.utils.data import DataLoader

    output = write_output(tmp_path / "out", docs=301, shards=2, row_group_mb=0.002)
    seen, batches = [], set()
    for rank in range(4):
        dataset = GristmillDataset(output, rank=rank, world_size=4, batch_size=4, drop_remainder=True)
        loader = DataLoader(dataset, batch_size=4, num_workers=2, collate_fn=list)
        rank_batches = [[r["id"] for r in batch] for batch in loader]
        batches.add(len(rank_batches))
        seen += [i for batch in rank_batches for i in batch]
    assert batches == {20} and len(seen) == len(set(seen)) == 8 * 37  # 2 workers × ceil(37 / 4)


def test_drop_remainder_with_fewer_documents_than_slots_is_refused_not_an_empty_epoch(tmp_path):
    output = write_output(tmp_path / "out", docs=3, shards=1)
    assert len(list(GristmillDataset(output, rank=1, world_size=3, drop_remainder=True))) == 1
    with pytest.raises(ValueError, match="3 documents, fewer than the 4 reader slots .4 ranks x 1"):
        list(GristmillDataset(output, rank=0, world_size=4, drop_remainder=True))


def test_a_state_from_the_whole_row_group_dealing_is_refused(output):
    state = GristmillDataset(output).state_dict()
    del state["dealing"]
    with pytest.raises(ValueError, match="dealt whole row groups"):
        GristmillDataset(output).load_state_dict(state)


def test_same_seed_same_order_other_seed_other_order(output):
    units = kept_units(output)
    first = ids(OutputStream(units, seed=1, buffer_size=32))
    assert first == ids(OutputStream(units, seed=1, buffer_size=32))
    assert first != ids(OutputStream(units, seed=2, buffer_size=32))
    assert first != ids(OutputStream(units, seed=1, epoch=1, buffer_size=32))
    assert sorted(first) == sorted(ids(OutputStream(units, seed=2, buffer_size=32)))


@pytest.mark.parametrize("total, buffer_size", [(500, 64), (40, 64), (64, 64), (9, 1), (300, 1000)])
def test_shuffle_buffer_order_is_the_plain_randrange_buffer(total, buffer_size):
    """The inlined draw gives the order of the straightforward buffer (`randrange`), so a seed's
    order, and resuming a state saved before the change, stay as they were."""
    rng = random.Random("buffer:4:1:2")
    buffer, expected = [], []
    for position in range(total):
        if len(buffer) < buffer_size:
            buffer.append(position)
            continue
        pick = rng.randrange(buffer_size)
        expected.append(buffer[pick])
        buffer[pick] = position
    rng.shuffle(buffer)
    assert list(shuffled_positions(total, buffer_size, 4, 1, 2)) == expected + buffer


def test_token_ids_are_what_pyarrow_reads_as_lists_or_numpy_arrays(tmp_path):
    output = write_output(tmp_path / "out", tokens=True)
    columns = ["id", "n_tokens", "token_ids"]
    plain = {}
    for unit in kept_units(output):
        for row in pq.ParquetFile(unit.path).read_row_group(unit.row_group, columns=columns).to_pylist():
            plain[row["id"]] = row
    records = list(OutputStream(kept_units(output), seed=2, buffer_size=16, columns=tuple(columns)))
    assert len(records) == DOCS and {r["id"]: r for r in records} == plain
    assert all(type(t) is int for r in records if r["token_ids"] for t in r["token_ids"])
    arrays = list(
        OutputStream(kept_units(output), seed=2, buffer_size=16, columns=tuple(columns), arrays=True)
    )
    assert [r["id"] for r in arrays] == [r["id"] for r in records]
    for record, array_record in zip(records, arrays):
        if record["token_ids"] is None:
            assert array_record["token_ids"] is None
        else:
            assert array_record["token_ids"].dtype == np.int32
            assert array_record["token_ids"].tolist() == record["token_ids"]
    assert plain["doc-0007"]["token_ids"] is None and plain["doc-0000"]["token_ids"] == []


def test_resume_in_process_yields_exactly_the_remaining_documents(output):
    full = ids(GristmillDataset(output, seed=5, buffer_size=20))
    dataset = GristmillDataset(output, seed=5, buffer_size=20)
    iterator = iter(dataset)
    head = [next(iterator)["id"] for _ in range(137)]
    state = json.loads(json.dumps(dataset.state_dict()))  # survives a checkpoint file
    resumed = GristmillDataset(output, seed=5, buffer_size=20)
    resumed.load_state_dict(state)
    assert head + ids(resumed) == full


@pytest.mark.parametrize("batches", [1, 11, 36, 70])
def test_resume_with_dataloader_workers_continues_at_the_next_batch(output, batches):
    from torch.utils.data import DataLoader

    def loader(dataset):
        return DataLoader(dataset, batch_size=4, num_workers=2, collate_fn=list)

    make = lambda: GristmillDataset(output, seed=9, buffer_size=10, batch_size=4)  # noqa: E731
    full = [r["id"] for batch in loader(make()) for r in batch]
    head = []
    for count, batch in enumerate(loader(make()), 1):
        head += [r["id"] for r in batch]
        if count == batches:  # near the end one worker has run out and the other goes on alone
            break
    dataset = make()
    state = dataset.state_dict(samples_seen=len(head))
    resumed = make()
    resumed.load_state_dict(state)
    assert head + [r["id"] for batch in loader(resumed) for r in batch] == full


def test_a_state_saved_with_another_worker_count_is_refused(output):
    """Resumed with a different num_workers, 27 of 110 documents came twice and 27 never."""
    from torch.utils.data import DataLoader

    state = GristmillDataset(output, batch_size=4, num_workers=2).state_dict(samples_seen=8)
    assert state["num_workers"] == 2
    with pytest.raises(ValueError, match="state was saved with num_workers=2, this dataset has 1"):
        GristmillDataset(output, batch_size=4, num_workers=1).load_state_dict(state)
    dataset = GristmillDataset(output, batch_size=4, num_workers=2)
    with pytest.raises(ValueError, match="made for num_workers=2, and the DataLoader runs 0"):
        next(iter(DataLoader(dataset, batch_size=4, num_workers=0, collate_fn=list)))


def test_dataloader_positions_follow_round_robin_and_exhaustion():
    assert dataloader_positions(0, [5, 5], 2) == ([0, 0], 0)
    assert dataloader_positions(6, [5, 5], 2) == ([4, 2], 1)
    assert dataloader_positions(9, [3, 10], 2) == ([3, 6], 0)  # worker 0 ends with a short batch
    assert dataloader_positions(11, [3, 10], 2) == ([3, 8], 0)  # then worker 1 alone
    with pytest.raises(ValueError, match="batch boundary"):
        dataloader_positions(3, [5, 5], 2)
    with pytest.raises(ValueError, match="more than"):
        dataloader_positions(11, [5, 5], 2)


def test_a_state_from_another_layout_is_refused(output):
    state = GristmillDataset(output, world_size=2).state_dict()
    with pytest.raises(ValueError, match="world_size"):
        GristmillDataset(output).load_state_dict(state)


def test_a_column_the_shards_do_not_have_is_refused_not_read_as_nothing(output):
    """`columns=("token_ids",)` on an output written without token ids gave an empty dict per
    document (pyarrow skips a column a file does not have)."""
    with pytest.raises(
        BadOutputFolder, match=r"no column token_ids \(written by runs with \[output\] token_ids"
    ):
        GristmillDataset(output, columns=("token_ids",))
    with pytest.raises(BadOutputFolder, match="no column txt; the kept shards have id, text"):
        next(iter(OutputStream(kept_units(output), columns=("id", "txt"))))


def test_unfinished_run_without_manifest_is_refused(output):
    os.remove(os.path.join(output, "manifest.json"))
    with pytest.raises(BadOutputFolder, match="no manifest.json; the run did not finish"):
        GristmillDataset(output)
    with pytest.raises(ValueError, match="output folder nosuchfs://b/out: cannot use nosuchfs:// paths"):
        GristmillDataset("nosuchfs://b/out")


def test_a_path_as_people_write_it_is_read_and_a_manifest_of_no_shards_refused(output, monkeypatch, tmp_path):
    """`~` was not expanded (the CLI expands it), `file://` hit Beam's "pip install
    apache-beam[gcp]", a missing folder read as an unfinished run, and a manifest holding `[]`
    or no shards raised AttributeError or gave an empty dataset."""
    monkeypatch.setenv("HOME", os.path.dirname(output))
    expected = [r["id"] for r in GristmillDataset(output)]
    assert [r["id"] for r in GristmillDataset("~/" + os.path.basename(output))] == expected
    assert [r["id"] for r in GristmillDataset("file://" + output)] == expected
    with pytest.raises(BadOutputFolder, match="nowhere: no such folder"):
        GristmillDataset(str(tmp_path / "nowhere"))
    with pytest.raises(BadOutputFolder, match="manifest.json: a file, not an output folder"):
        GristmillDataset(os.path.join(output, "manifest.json"))
    for manifest in ("[]", "{}"):
        with open(os.path.join(output, "manifest.json"), "w") as handle:
            handle.write(manifest)
        with pytest.raises(BadOutputFolder, match="not a gristmill manifest"):
            GristmillDataset(output)


def test_a_changed_page_is_refused_as_it_is_read_and_a_changed_shard_when_hashed(output):
    """Every rank hashed every shard before its first document (a read of the whole output, in
    each rank); pages now carry CRCs, checked as read. Unchecked, a flipped byte in a zstd page
    can decode to other text without any error."""
    path = os.path.join(output, "kept", shard_name(1, 3))
    original = open(path, "rb").read()
    text = pq.ParquetFile(path).metadata.row_group(0).column(1)  # the text column's pages
    start = text.dictionary_page_offset or text.data_page_offset
    first_group = [unit for unit in kept_units(output) if unit.path == path][:1]
    expected = [r["text"] for r in OutputStream(first_group)]

    def flip(offset: int) -> None:
        data = bytearray(original)
        data[offset] ^= 0xFF
        open(path, "wb").write(bytes(data))

    def unchecked_texts() -> list[str] | None:
        try:
            return [r["text"] for r in OutputStream(first_group, verify=False)]
        except Exception:  # unchecked, a damaged page fails in many ways; wanted: one that does not
            return None

    for silent in range(start, start + text.total_compressed_size):
        flip(silent)
        if unchecked_texts() not in (None, expected):
            break
    else:
        pytest.fail("no flipped byte of the text pages decoded to other text")
    for offset, error in ((silent, "CRC checksum verification failed"), (text.data_page_offset, "thrift")):
        flip(offset)
        units = kept_units(output)  # size and rows only: nothing read beyond the footers
        with pytest.raises(BadOutputFolder, match=f"{path}: row group 0: .*{error}.*the shard is damaged"):
            list(OutputStream(units, buffer_size=1))
    with pytest.raises(BadOutputFolder, match="sha256 .* does not match"):
        kept_units(output, hash_shards=True)


def test_units_come_from_one_listing_and_one_footer_when_the_manifest_has_row_groups(output, monkeypatch):
    """Each shard's size and footer were two requests on an object store (64 shards on a local S3
    server: 18 s before the first document); the manifest now carries each shard's row groups."""
    from_footers = kept_units(output)
    manifest_path = os.path.join(output, "manifest.json")
    manifest = json.load(open(manifest_path))
    for shard in manifest["shards"]:
        footer = pq.ParquetFile(os.path.join(output, shard["file"])).metadata
        shard["row_groups"] = [footer.row_group(i).num_rows for i in range(footer.num_row_groups)]
    json.dump(manifest, open(manifest_path, "w"))
    opened, sized = [], []
    monkeypatch.setattr(
        dataset.FileSystems, "open", lambda path, **kw: opened.append(path) or open(path, "rb")
    )
    monkeypatch.setattr(dataset.fileio, "size", lambda path: sized.append(path) or os.path.getsize(path))
    assert kept_units(output) == from_footers and len(from_footers) > 3
    assert opened == [manifest_path, os.path.join(output, manifest["shards"][0]["file"])] and sized == []
    shard = manifest["shards"][1]
    shard["row_groups"] = shard["row_groups"][:-1]
    json.dump(manifest, open(manifest_path, "w"))
    with pytest.raises(BadOutputFolder, match=f"{shard['file']}: .* rows, the manifest says {shard['rows']}"):
        kept_units(output)


def test_truncated_shard_is_refused_even_without_hashing(output):
    path = os.path.join(output, "kept", shard_name(0, 3))
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-10])
    with pytest.raises(BadOutputFolder, match="bytes, the manifest says"):
        kept_units(output)


def test_other_format_version_and_foreign_schema_are_refused(tmp_path, output):
    manifest_path = os.path.join(output, "manifest.json")
    manifest = json.load(open(manifest_path))
    json.dump({**manifest, "format_version": 99}, open(manifest_path, "w"))
    with pytest.raises(BadOutputFolder, match="format version 99"):
        kept_units(output)
    foreign = tmp_path / "foreign"
    os.makedirs(foreign / "kept")
    pq.write_table(pa.table({"id": ["a"], "content": ["x"]}), foreign / "kept" / "part.parquet")
    data = (foreign / "kept" / "part.parquet").read_bytes()
    entry = {
        "kind": "kept",
        "file": "kept/part.parquet",
        "rows": 1,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    (foreign / "manifest.json").write_text(json.dumps({"shards": [entry]}))
    with pytest.raises(BadOutputFolder, match="not a gristmill kept shard .*needs text"):
        kept_units(str(foreign))


def test_row_groups_are_read_on_the_calling_thread(output, monkeypatch, reads_off_thread):
    """Reads through a Python file object on arrow's thread pool made 5 of 16 scripts abort at exit
    ("terminate called without an active exception", exit 134) once torch was loaded."""
    threaded = []
    read_row_group = pq.ParquetFile.read_row_group

    def recording(self, *args, **kwargs):
        threaded.append(kwargs.get("use_threads", True))
        return read_row_group(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", recording)
    dataset = GristmillDataset(output, rank=0, world_size=1, seed=0, batch_size=8)
    assert len(ids(dataset)) == DOCS
    assert threaded and not any(threaded)
    assert reads_off_thread == []  # nor its pre_buffer reads (`fileio.parquet_reader`)
