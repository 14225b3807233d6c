"""Property-based tests (hypothesis) of the readers and the recipe loader on hostile input.

Readers: random bytes under every format, truncated gzip/zstd/bzip2/xz, invalid UTF-8, deeply nested and
wrongly typed JSON, unknown keys, empty files, one 50 MB document. Never an exception; every
non-blank JSON line becomes exactly one record (document, rejection or failure: conservation);
every failure names an error class and has a one-line message. Recipe loader: any bytes and any
TOML-shaped table either give a Recipe or a ConfigError with a message, nothing else.
Example counts are kept small (see MAX_EXAMPLES) so the file runs in seconds.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import tempfile
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.document import Document, Failure, Rejection
from pipeline.file_start import COMPRESSED_MAGIC, WIDE_TEXT_BOMS
from pipeline.readers import InputConfig, plan_splits, read_split
from pipeline.recipe import build_recipe, load_recipe
from pipeline.stages import ConfigError

MAX_EXAMPLES = 60
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COMPRESSORS = {
    "gz": gzip.compress,
    "zst": zstandard.ZstdCompressor().compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
}
SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".parquet", ".warc", ".warc.gz", ".wet")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Records with the reader's fields present, absent or of any type, plus unknown keys.
records = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values,
        "text": st.text(max_size=50) | json_values,
        "url": st.text(max_size=30) | json_values,
        "kind": st.sampled_from(["code", "math", "poem"]) | json_values,
        "unknown_key": json_values,
    },
)

# Records whose strings hold code points around and inside the surrogate range, keys included.
near_surrogates = st.lists(st.integers(0xD7F0, 0xE010).map(chr) | st.sampled_from("a😀"), max_size=6).map(
    "".join
)
surrogate_records = st.dictionaries(
    st.sampled_from(["id", "text", "url"]) | near_surrogates, near_surrogates | json_values, max_size=3
)


def read_file(path: Path, split_bytes: int = 64 << 20) -> list:
    """Every record read from `path` through its splits, as the pipeline reads it."""
    config = InputConfig(paths=(str(path),), split_bytes=split_bytes)
    return [record for split in plan_splits(str(path), config) for record in read_split(split, config)]


def assert_well_formed(found: list) -> None:
    for record in found:
        assert isinstance(record, Document | Rejection | Failure), type(record)
        if isinstance(record, Failure):
            assert record.error and record.error.isidentifier(), record
            assert record.message and "\n" not in record.message and len(record.message) <= 1000, record


def write(suffix: str, data: bytes) -> Path:
    handle = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)
    handle.write(data)
    handle.close()
    return Path(handle.name)


@SETTINGS
@given(data=st.binary(max_size=2000), suffix=st.sampled_from(SUFFIXES))
def test_random_bytes_in_any_format_never_raise(data, suffix):
    path = write(suffix, data)
    try:
        assert_well_formed(read_file(path))
    finally:
        path.unlink()


def non_blank_lines(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if line.strip())


@SETTINGS
@given(
    lines=st.lists(
        st.one_of(
            records.map(lambda r: json.dumps(r).encode()),
            st.binary(max_size=60).filter(lambda b: b"\n" not in b),  # invalid UTF-8, broken JSON
            st.integers(1, 5000).map(lambda depth: b"[" * depth + b"]" * depth),  # deep nesting
            surrogate_records.map(lambda r: json.dumps(r).encode()),  # \uD800-style escapes, paired or not
        ),
        max_size=12,
    ),
    split_bytes=st.integers(1, 400),
)
@example(lines=[b"[" * 5000 + b"]" * 5000, b'{"text": "after"}'], split_bytes=400)
@example(lines=[b"BZh", b"{}"], split_bytes=1)  # text that starts as bzip2 does
@example(lines=[b"\xff\xfe{}", b"{}"], split_bytes=1)  # a UTF-16 byte-order mark: one failure for the file
@example(lines=[b"(\xb5/\xfd", b"{}"], split_bytes=1)  # zstd's magic (found by hypothesis): likewise
def test_every_json_line_becomes_exactly_one_record(lines, split_bytes):
    data = b"\n".join(lines) + b"\n"
    path = write(".jsonl", data)
    try:
        found = read_file(path, split_bytes)
        whole = read_file(path)
    finally:
        path.unlink()
    assert found == whole  # ids and failures name the file's own line numbers whatever the splits
    assert_well_formed(found)
    if data.startswith(tuple(WIDE_TEXT_BOMS)):
        assert [record.error for record in found] == ["WideTextInput"]
        return
    if any(magic.match(data) for magic in COMPRESSED_MAGIC):  # a compressed file under a plain name
        assert [record.error for record in found] == ["CompressedInput"]
        return
    assert len(found) == non_blank_lines(data)
    for record in found:
        if isinstance(record, Document):
            assert isinstance(record.text, str) and (record.url is None or isinstance(record.url, str))
            # Valid Unicode throughout: every stage, coder and writer encodes it as UTF-8.
            json.dumps([record.id, record.text, record.url, record.metadata], ensure_ascii=False).encode()


@SETTINGS
@given(
    items=st.lists(records, min_size=1, max_size=10),
    codec=st.sampled_from(list(COMPRESSORS)),
    cut=st.floats(0, 1),
)
@example(items=[{}], codec="gz", cut=0.25)  # cut inside the gzip header: read as an empty file before
def test_truncated_compressed_input_keeps_what_came_before_and_says_why(items, codec, cut):
    data = b"".join(json.dumps(r).encode() + b"\n" for r in items)
    packed = COMPRESSORS[codec](data)
    kept = int(len(packed) * cut)
    path = write(f".jsonl.{codec}", packed[:kept])
    try:
        found = read_file(path)
    finally:
        path.unlink()
    assert_well_formed(found)
    assert len(found) <= len(items) + 1
    assert len([r for r in found if not isinstance(r, Failure)]) <= len(items)
    if 0 < kept < len(packed):  # a truncated .zst ended quietly, the documents after the cut lost
        assert isinstance(found[-1], Failure) and found[-1].error == "TruncatedInput"


@SETTINGS
@given(items=st.lists(records, min_size=1, max_size=10), cut=st.floats(0, 1), compressed=st.booleans())
def test_a_json_array_cut_anywhere_keeps_every_element_before_the_cut(items, cut, compressed):
    texts = [json.dumps(item) for item in items]
    data = ("[" + ", ".join(texts) + "]").encode()
    kept = data[: int(len(data) * cut)]
    path = write(".json.gz" if compressed else ".json", gzip.compress(kept) if compressed else kept)
    try:
        found = read_file(path)
    finally:
        path.unlink()
    assert_well_formed(found)
    ends = [
        1 + sum(len(t.encode()) + 2 for t in texts[:i]) + len(texts[i].encode()) for i in range(len(texts))
    ]
    complete = sum(end <= len(kept) for end in ends)
    if not kept:
        assert found == []
    elif kept == data:
        assert len(found) == len(items)
    else:  # one record per complete element, then one failure for the rest of the file
        assert len(found) == complete + 1
        assert isinstance(found[-1], Failure) and found[-1].error == "MalformedJson"
        assert found[-1].message.endswith("the rest of the file is not read")


def test_empty_files_give_no_records(tmp_path):
    for suffix in SUFFIXES:
        path = tmp_path / f"empty{suffix}"
        path.write_bytes(b"")
        found = read_file(path)
        assert_well_formed(found)
        assert not [r for r in found if isinstance(r, Document)], suffix


def test_a_single_50_mb_document_is_read_whole(tmp_path):
    text = "word " * (10 << 20)  # 50 MiB
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"id": "big", "text": text}) + "\n")
    (doc,) = read_file(path, split_bytes=1 << 20)
    assert isinstance(doc, Document) and doc.id == "big" and len(doc.text) == len(text)


@SETTINGS
@given(data=st.binary(max_size=500) | st.text(max_size=300).map(str.encode))
def test_any_recipe_file_loads_or_fails_with_a_config_error(data):
    path = write(".toml", data)
    try:
        load_recipe(path)
    except ConfigError as error:
        assert str(error).startswith(str(path)), error
    finally:
        path.unlink()


toml_values = st.recursive(
    st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
table_keys = st.sampled_from(
    ["name", "use", "paths", "shards", "format", "batch_size", "min_words", "max_failed_fraction", "zzz"]
)
tables = st.dictionaries(
    table_keys, toml_values | st.sampled_from(["length", "exact_dedup", "x.jsonl"]), max_size=4
)
recipes = st.fixed_dictionaries(
    {},
    optional={
        "run": tables | toml_values,
        "input": tables | toml_values,
        "output": tables | toml_values,
        "stage": st.lists(tables, max_size=3) | toml_values,
        "synthesis": st.lists(tables, max_size=2) | toml_values,
        "unknown": toml_values,
    },
)


@SETTINGS
@given(data=recipes)
def test_any_recipe_table_builds_or_fails_with_a_config_error(data):
    try:
        build_recipe(data, "r.toml")
    except ConfigError as error:
        message = str(error)
        assert message.startswith("r.toml") and "\n" not in message, message


@pytest.mark.parametrize("depth", [10_000])
def test_deeply_nested_recipe_value_is_a_config_error(tmp_path, depth):
    path = tmp_path / "deep.toml"
    path.write_text("[run]\nname = " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError):
        load_recipe(path)
