import pickle
import random

import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to

import pipeline.spill
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.spill import (
    ChunkEncoder,
    SortedGroups,
    SpillByKeyFn,
    SpillGroups,
    external_sort,
    hash_partition,
    read_values,
    rough_size,
    write_values,
)


def test_write_values_round_trips_in_chunks(tmp_path):
    values = [{"id": i, "text": "x" * i} for i in range(1000)]
    write_values(str(tmp_path / "v.pkl"), values)
    assert list(read_values(str(tmp_path / "v.pkl"))) == values


def test_spilled_text_is_compressed_and_a_cut_file_is_refused(tmp_path):
    path = tmp_path / "v.pkl"
    values = [f"sentence {i % 7} of a page that repeats itself. " * 20 for i in range(600)]
    write_values(str(path), values)
    assert path.stat().st_size < sum(map(len, values)) / 5
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(EOFError, match="truncated chunk"):
        list(read_values(str(path)))


def test_values_that_do_not_compress_are_written_as_plain_pickles(tmp_path):
    hashes = [random.Random(i).randbytes(400) for i in range(600)]  # hashes, as the dedup stages spill
    encode = ChunkEncoder()
    first, later = encode(hashes[:256]), encode(hashes[256:])
    assert first[8:] == pickle.dumps(hashes[:256], protocol=pickle.HIGHEST_PROTOCOL)
    assert later[8:] == pickle.dumps(hashes[256:], protocol=pickle.HIGHEST_PROTOCOL)
    assert encode.compressor is None  # decided by the first chunk: no more compressing
    path = tmp_path / "mixed.pkl"
    text = ["the same sentence, again and again. " * 20] * 300
    path.write_bytes(first + ChunkEncoder()(text) + later)  # plain and compressed chunks in one file
    assert list(read_values(str(path))) == hashes[:256] + text + hashes[256:]


@pytest.mark.parametrize(
    ("budget", "runs", "spilled"), [(30, 667, 666), (10_000, 2, 2), (15_000, 2, 1), (10**9, 1, 0)]
)
def test_external_sort_is_sorted_and_stable_whatever_the_budget(tmp_path, budget, runs, spilled):
    """2000 values of 10 bytes: full runs are spilled, the last one stays in memory."""
    rng = random.Random(budget)
    values = [(rng.randrange(30), i) for i in range(2000)]  # many equal keys: input order kept
    seen = []
    merged = external_sort(values, lambda v: v[0], str(tmp_path), budget, lambda v: 10, seen.append)
    assert len(list(tmp_path.glob("run-*.pkl"))) == spilled and len(seen) == runs
    assert all(run == sorted(run, key=lambda v: v[0]) for run in seen)
    assert list(merged) == sorted(values, key=lambda v: v[0])
    assert not list(tmp_path.glob("run-*.pkl"))  # deleted once merged


def test_external_sort_of_nothing(tmp_path):
    assert list(external_sort([], lambda v: v, str(tmp_path), 100, len)) == []


def test_spill_by_key_holds_at_most_its_cap_over_all_keys(tmp_path):
    """Many keys, few values each (a worker's share of 1,024 buckets): no key's buffer fills to
    a chunk, yet the buffers together never hold much more than the cap, at most MAX_OPEN_FILES
    files are open (before, one per key: `Too many open files` at a limit of 1,024), and every
    key's files read back its values in input order."""
    spill = SpillByKeyFn(str(tmp_path), held_bytes=10_000)
    spill.start_bundle()
    values = [(i % 1024, {"id": str(i), "text": "x" * 100}) for i in range(5000)]
    files, most, most_open = {}, 0, 0
    for item in values:
        for key, path in spill.process(item):
            files.setdefault(key, []).append(path)
        held = sum(rough_size(v) for buffer in spill._buffers.values() for v in buffer)
        most, most_open = max(most, held), max(most_open, len(spill._files))
    spill.finish_bundle()
    assert 9_000 < most < 10_000 + rough_size(values[0][1]) and not spill._buffers
    assert most_open == pipeline.spill.MAX_OPEN_FILES
    assert sorted(files) == list(range(1024))
    for key, paths in files.items():
        assert [v for path in paths for v in read_values(path)] == [value for k, value in values if k == key]


def test_rough_size_counts_the_text_inside_rows_documents_and_blobs():
    text = "y" * 10_000
    for value in ({"id": "a", "text": text}, Document("a", text), (3, text.encode()), [text]):
        assert 10_000 < rough_size(value) < 10_600


def test_rough_size_of_numbers_strings_and_nested_containers():
    class Label(str):
        pass

    assert rough_size((1, 2.0, None, True, "ab", b"c", (1,), [])) == 56 + 4 * 32 + 51 + 50 + (56 + 32) + 56
    assert rough_size({"a": Label("xyz"), "b": bytearray(b"zz"), "c": {}}) == 64 + 52 + 51 + 64
    assert rough_size(Document("a", "t", metadata={"n": 1})) == rough_size(Document("a", "t")) + 32


def test_rough_size_of_a_long_list_from_a_sample_of_its_items():
    same = [("doc-7", (3, "doc-1"))] * 1_000  # one shape: the sample gives the exact sum
    assert rough_size(same) == 56 + 1_000 * rough_size(same[0])
    rng = random.Random(5)
    periodic = ["x" * (i % 100) for i in range(10_000)]  # an evenly spaced sample would see one length
    varied = ["x" * rng.randrange(1_000) for _ in range(5_000)]
    for values in (periodic, varied):
        exact = 56 + sum(49 + len(s) for s in values)
        assert 0.8 * exact < rough_size(values) < 1.2 * exact
    assert rough_size(tuple(range(64))) == 56 + 64 * 32  # up to 4 × SIZE_SAMPLE items: each one


def _runs_of_kinds(key, values):
    """A key's values' first elements as runs in arrival order: [(kind, how many in a row)]."""
    runs: list[list] = []
    for kind, _ in values:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    yield key, [tuple(run) for run in runs]


def test_spill_groups_of_a_tuple_reads_each_input_after_the_one_before(tmp_path):
    """Minhash indexes a partition's asks before it streams its sets: a key's values from the
    tuple's first PCollection come first, however the bundles interleave them."""
    small = [(key, ("small", i)) for i in range(40) for key in range(3)]
    large = [(key, ("large", i)) for i in range(300) for key in range(3)]
    with new_pipeline() as pipeline:
        first = pipeline | "Small" >> beam.Create(small, reshuffle=True)
        second = pipeline | "Large" >> beam.Create(large, reshuffle=True)
        in_order = (first, second) | "InOrder" >> SpillGroups(str(tmp_path / "in_order"), _runs_of_kinds)
        reversed_ = (second, first) | "Reversed" >> SpillGroups(str(tmp_path / "reversed"), _runs_of_kinds)
        small_first = [("small", 40), ("large", 300)]
        assert_that(in_order, equal_to([(key, small_first) for key in range(3)]), label="SmallFirst")
        large_first = small_first[::-1]
        assert_that(reversed_, equal_to([(key, large_first) for key in range(3)]), label="LargeFirst")


def _key_and_values(key, values):
    yield key, list(values)


@pytest.mark.parametrize("sort_bytes", [200, 64 * 1024 * 1024])
@pytest.mark.parametrize("keys", [[b"a" * 16, b"b" * 16, b"c" * 16], [7, 2**62 + 5, 11]])
def test_sorted_groups_gives_every_key_its_values_in_order(tmp_path, monkeypatch, sort_bytes, keys):
    """Like a GroupByKey with sorted values, for bytes and int keys, whether or not each
    partition's sort spills runs (a tiny budget: a run every few pairs)."""
    monkeypatch.setattr(pipeline.spill, "GROUP_SORT_BYTES", sort_bytes)
    rng = random.Random(5)
    pairs = [(rng.choice(keys), (rng.randrange(5), f"d{i}")) for i in range(400)]
    expected = {}
    for key, value in pairs:
        expected.setdefault(key, []).append(value)
    with new_pipeline() as pipeline_:
        groups = (
            pipeline_
            | beam.Create(pairs, reshuffle=True)
            | SortedGroups(str(tmp_path / "groups"), _key_and_values, 3)
        )
        assert_that(groups, equal_to([(key, sorted(values)) for key, values in expected.items()]))


def test_hash_partition_of_bytes_and_ints():
    assert hash_partition((5).to_bytes(8, "little") + b"rest", 4) == 1
    assert hash_partition(2**64 + 6, 4) == 2
    assert {hash_partition(bytes([i]) * 16, 8) for i in range(64)} == set(range(8))
