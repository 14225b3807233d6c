import bz2
import codecs
import datetime
import gzip
import json
import lzma
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import json_lines, parquet_rows, readers
from pipeline.document import Document, Failure
from pipeline.readers import (
    InputConfig,
    InputError,
    Split,
    detect_format,
    expand_paths,
    iter_documents,
    plan_splits,
    read_split,
)
from pipeline.writers import kept_row
from tests.conftest import write_jsonl


def read_all(path, **options):
    config = InputConfig((str(path),), **options)
    return [r for split in plan_splits(str(path), config) for r in read_split(split, config)]


def test_detect_format_by_extension():
    assert detect_format("a/b.jsonl") == ("jsonl", None)
    assert detect_format("b.jsonl.gz") == ("jsonl", "gzip")
    assert detect_format("b.jsonl.zst") == ("jsonl", "zstd")
    assert detect_format("b.jsonl.bz2") == ("jsonl", "bzip2")
    assert detect_format("b.jsonl.xz") == ("jsonl", "xz")
    assert detect_format("b.warc.gz") == ("warc", "gzip")
    assert detect_format("b.wet") == ("wet", None)
    assert detect_format("page.HTML") == ("html", None) and detect_format("p.htm.gz") == ("html", "gzip")
    assert detect_format("b.data", forced="jsonl") == ("jsonl", None)
    with pytest.raises(InputError, match="b.data"):
        detect_format("b.data")


def test_missing_input_names_the_pattern(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="nothing-here"):
        expand_paths([str(tmp_path / "nothing-here*.jsonl")])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        InputError, match=f"nothing/x: no input file matches .relative to the working directory {tmp_path}"
    ):
        expand_paths(["nothing/x"])


def test_brackets_that_match_nothing_as_a_glob_are_read_as_names(tmp_path):
    folder = tmp_path / "crawl [2024]"
    folder.mkdir()
    for name in ("a.jsonl", "b[1].jsonl"):
        (folder / name).write_text('{"text": "x"}\n')
    assert expand_paths([f"{folder}/*.jsonl"]) == [str(folder / "a.jsonl"), str(folder / "b[1].jsonl")]
    assert expand_paths([f"{folder}/b[1].jsonl"]) == [str(folder / "b[1].jsonl")]
    (tmp_path / "data1.jsonl").write_text('{"text": "x"}\n')
    (tmp_path / "data[1-2].jsonl").write_text('{"text": "x"}\n')
    assert expand_paths([f"{tmp_path}/data[1-2].jsonl"]) == [str(tmp_path / "data1.jsonl")]  # a glob first


def test_bad_records_become_failures_and_the_rest_is_read(tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps({"id": "ok1", "text": "fine"}).encode(),
        b'{"id": "broken", "text": ',
        b'{"id": "utf", "text": "\xff\xfe"}',
        json.dumps({"id": "notext"}).encode(),
        json.dumps({"id": "num", "text": 12}).encode(),
        json.dumps([1, 2]).encode(),
        b'{"id": "half", "text": "a broken emoji \\ud83d here"}',
        b'{"id": "pair", "text": "a whole emoji \\ud83d\\ude00 and a literal \\\\udc00"}',
        json.dumps({"id": "ok2", "text": "also fine"}).encode(),
        b'{"id": "\\udc00", "text": "an id that is half a pair"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    records = read_all(path)
    docs = [r.id for r in records if isinstance(r, Document)]
    failures = {r.id: r.error for r in records if isinstance(r, Failure)}
    assert docs == ["ok1", "pair", "ok2"]
    assert failures == {
        f"{path}:2": "MalformedJson",
        f"{path}:3": "InvalidUtf8",
        "notext": "MissingText",
        "num": "NonStringText",
        f"{path}:6": "NotAnObject",
        "half": "LoneSurrogate",  # filed under the record's id, as the other failures with one
        f"{path}:10": "LoneSurrogate",
    }
    message = next(r.message for r in records if isinstance(r, Failure) and r.error == "LoneSurrogate")
    assert "'text'" in message and "U+D83D" in message
    pair = next(r for r in records if isinstance(r, Document) and r.id == "pair")
    assert pair.text == "a whole emoji \U0001f600 and a literal \\udc00"


def test_empty_file_yields_nothing(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert read_all(path) == []


@pytest.mark.parametrize("name", ["b.jsonl", "b.jsonl.gz", "lines.json", "array.json"])
def test_a_byte_order_mark_before_the_first_record_is_skipped(tmp_path, name):
    records = [{"id": "a", "text": "aa"}, {"id": "b", "text": "bb"}]
    if name == "array.json":
        body = json.dumps(records).encode()
    else:
        body = "".join(json.dumps(r) + "\r\n" for r in records).encode()
    data = b"\xef\xbb\xbf" + body
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    assert [(type(r).__name__, r.id) for r in read_all(path)] == [("Document", "a"), ("Document", "b")]


def test_truncated_gzip_keeps_the_records_before_the_damage(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    data = gzip.compress(
        "".join(json.dumps({"id": str(i), "text": "x" * 200}) + "\n" for i in range(200)).encode()
    )
    path.write_bytes(data[: len(data) // 2])
    records = read_all(path)
    assert any(isinstance(r, Document) for r in records)
    assert isinstance(records[-1], Failure) and records[-1].error in ("TruncatedInput", "EOFError")


def test_a_corrupt_member_of_a_multi_member_jsonl_gz_costs_only_its_own_records(tmp_path):
    """Concatenated or bgzip-ed JSON Lines: the members after a corrupt one are read (all of the
    file after it was lost), and the damage is one failure naming where it is."""
    lines = [json.dumps({"id": str(i), "text": f"record {i} " * 40}) + "\n" for i in range(300)]
    members = [gzip.compress("".join(lines[k : k + 100]).encode()) for k in (0, 100, 200)]
    damaged = bytearray(members[1])
    damaged[20:40] = bytes(range(200, 220))  # deflate data that does not decode
    path = tmp_path / "m.jsonl.gz"
    path.write_bytes(members[0] + bytes(damaged) + members[2])
    records = read_all(path)
    ids = [r.id for r in records if isinstance(r, Document)]
    assert ids[:100] == [str(i) for i in range(100)] and ids[-100:] == [str(i) for i in range(200, 300)]
    corrupt = [r for r in records if isinstance(r, Failure) and r.error == "CorruptGzipMember"]
    assert [r.id for r in corrupt] == [f"{path}@gzip:{len(members[0])}"]


COMPRESSORS = {
    "gzip": gzip.compress,
    "zstd": lambda data: __import__("zstandard").ZstdCompressor().compress(data),
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}


@pytest.mark.parametrize("codec", COMPRESSORS)
@pytest.mark.parametrize("name", ["a.jsonl", "a.json", "a.txt"])
def test_a_file_cut_inside_its_compression_header_is_one_failure_not_an_empty_file(tmp_path, codec, name):
    """Found by hypothesis: a read after the first failed one gave b"", so the file read as empty."""
    packed = COMPRESSORS[codec](b'{"id": "1", "text": "a"}\n')
    suffix = {"gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}[codec]
    path = tmp_path / (name + suffix)
    path.write_bytes(packed[:5])
    (record,) = read_all(path)
    assert isinstance(record, Failure) and record.error == "TruncatedInput"


@pytest.mark.parametrize("codec", COMPRESSORS)
@pytest.mark.parametrize("name", ["data.jsonl", "data.json", "crawl.warc", "crawl.wet"])
def test_a_compressed_file_named_as_plain_is_one_failure_saying_what_to_do(tmp_path, codec, name):
    body = "".join(json.dumps({"id": str(i), "text": "word " * 50}) + "\n" for i in range(2000)).encode()
    path = tmp_path / name
    path.write_bytes(COMPRESSORS[codec](body))
    records = read_all(path, split_bytes=1024)  # a JSON Lines file of many splits reports once
    assert (
        len(plan_splits(str(path), InputConfig((str(path),), split_bytes=1024))) > 1 or name != "data.jsonl"
    )
    assert [(type(r).__name__, r.id, r.error) for r in records] == [("Failure", str(path), "CompressedInput")]
    suffix = {"gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}[codec]
    assert (
        f"{codec}-compressed but its name does not say so: rename it to {name}{suffix}" in records[0].message
    )


@pytest.mark.parametrize(
    "codec, suffix", [("gzip", ".gz"), ("zstd", ".zst"), ("bzip2", ".bz2"), ("xz", ".xz")]
)
def test_every_compression_reads_json_lines_arrays_and_text_and_reports_a_cut_file(tmp_path, codec, suffix):
    """`.bz2` and `.xz` (OpenWebText's format) were refused: "cannot tell the format"."""
    compress = COMPRESSORS[codec]
    records = [{"id": str(i), "text": f"document {i} " * 30} for i in range(400)]
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    (tmp_path / f"a.jsonl{suffix}").write_bytes(compress(lines))
    (tmp_path / f"b.json{suffix}").write_bytes(compress(json.dumps(records[:2]).encode()))
    (tmp_path / f"c.txt{suffix}").write_bytes(compress("Été\n".encode()))
    assert [d.id for d in read_all(tmp_path / f"a.jsonl{suffix}")] == [str(i) for i in range(400)]
    assert [d.id for d in read_all(tmp_path / f"b.json{suffix}")] == ["0", "1"]
    assert [d.text for d in read_all(tmp_path / f"c.txt{suffix}")] == ["Été\n"]
    whole = compress(lines)
    (tmp_path / f"cut.jsonl{suffix}").write_bytes(whole[: len(whole) * 3 // 4])
    *documents, last = read_all(tmp_path / f"cut.jsonl{suffix}")
    assert all(isinstance(d, Document) for d in documents) and len(documents) < 400
    assert isinstance(last, Failure) and last.error == "TruncatedInput"


@pytest.mark.parametrize("codec", COMPRESSORS)
@pytest.mark.parametrize("actual", [None, *COMPRESSORS])
@pytest.mark.parametrize("name", ["data.jsonl", "crawl.warc"])
def test_a_file_named_compressed_that_is_not_so_compressed_is_one_failure_saying_what_to_do(
    tmp_path, codec, actual, name
):
    """A plain file named .gz failed as a 'corrupt gzip member'; a plain WARC named .warc.gz was
    searched for gzip members, and the gzip bodies of its pages were read as such."""
    if actual == codec:
        return
    body = "".join(json.dumps({"id": str(i), "text": "word " * 50}) + "\n" for i in range(200)).encode()
    suffix = {"gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}
    path = tmp_path / f"{name}{suffix[codec]}"
    path.write_bytes(COMPRESSORS[actual](body) if actual else body)
    records = read_all(path)
    assert [(type(r).__name__, r.id, r.error) for r in records] == [("Failure", str(path), "NotCompressed")]
    actually = (
        f"{actual}-compressed: rename it to {name}{suffix[actual]}"
        if actual
        else f"not compressed: rename it to {name}"
    )
    assert (
        records[0].message
        == f"the file's name says {codec} but its first bytes say it is {actually}; nothing of it was read"
    )


@pytest.mark.parametrize("damage", ["first byte flipped", "line end before", "zeros before"])
def test_a_gzip_file_damaged_or_padded_at_its_start_is_read_from_its_next_member(tmp_path, damage):
    """Refused whole as `NotCompressed` for a while: only text (or another codec) is refused so."""
    members = [
        gzip.compress(json.dumps({"id": str(i), "text": "word " * 20}).encode() + b"\n") for i in range(6)
    ]
    data = b"".join(members)
    data = {
        "first byte flipped": bytes([data[0] ^ 0xFF]) + data[1:],
        "line end before": b"\n" + data,
        "zeros before": b"\0" * 4 + data,
    }[damage]
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(data)
    documents = [r.id for r in read_all(path) if isinstance(r, Document)]
    assert documents == [str(i) for i in range(1 if damage == "first byte flipped" else 0, 6)]


def test_a_zstd_file_may_begin_with_a_skippable_frame(tmp_path):
    import zstandard

    path = tmp_path / "a.jsonl.zst"
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    path.write_bytes(skippable + zstandard.ZstdCompressor().compress(b'{"id": "a", "text": "one"}\n'))
    (doc,) = read_all(path)
    assert doc.text == "one"


@pytest.mark.parametrize("name", ["data.jsonl", "data.jsonl.gz"])
def test_files_joined_with_cat_that_each_begin_with_a_byte_order_mark_read_whole(tmp_path, name):
    """The second file's first record failed as `MalformedJson` (Unexpected UTF-8 BOM)."""
    part = codecs.BOM_UTF8 + b'{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n'
    path = tmp_path / name
    path.write_bytes(gzip.compress(part + part) if name.endswith(".gz") else part + part)
    assert [r.text for r in read_all(path)] == ["one", "two", "one", "two"]


def test_a_record_the_mapping_raises_on_fails_alone_and_the_records_after_it_are_read(tmp_path):
    """An output row read back with a score of 10^400 raised OverflowError, which ended the split:
    the records after it were neither read nor counted."""
    huge = "1" + "0" * 400
    path = tmp_path / "a.jsonl"
    lines = ['{"id": "r0", "text": "fine"}']
    lines.append(
        '{"id": "r1", "text": "x", "scores": {"q": '
        + huge
        + '}, "language": "en", "language_score": 0.9, "metadata": "{}"}'
    )
    lines += [json.dumps({"id": f"r{i}", "text": "fine"}) for i in range(2, 5)]
    path.write_text("\n".join(lines) + "\n")
    records = read_all(path)
    assert [(type(r).__name__, r.id) for r in records] == [("Document", "r0"), ("Failure", "r1")] + [
        ("Document", f"r{i}") for i in range(2, 5)
    ]
    assert records[1].error == "OverflowError"


@pytest.mark.parametrize(
    "encoding, name", [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")]
)
@pytest.mark.parametrize("file", ["data.jsonl", "data.json", "book.txt"])
@pytest.mark.parametrize("codec", [None, *COMPRESSORS])
def test_a_utf16_or_utf32_file_is_one_failure_saying_how_to_convert_it(tmp_path, encoding, name, file, codec):
    text = "".join(json.dumps({"id": str(i), "text": "word " * 50}) + "\n" for i in range(500))
    bom = "\ufeff" if encoding.endswith("-be") else ""  # the -be codec writes no mark of its own
    data = (bom + text).encode(encoding)
    suffix = {None: "", "gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}[codec]
    path = tmp_path / f"{file}{suffix}"
    path.write_bytes(COMPRESSORS[codec](data) if codec else data)
    records = read_all(path, split_bytes=4096)  # a JSON Lines file of many splits reports once
    assert [(type(r).__name__, r.id, r.error) for r in records] == [("Failure", str(path), "WideTextInput")]
    assert records[0].message.startswith(f"the file is {name} text (its byte-order mark says so)")


def test_a_json_file_is_told_apart_after_any_leading_whitespace(tmp_path):
    """Only its first 64 bytes were looked at: an array after 80 line ends was read as JSON Lines,
    a failure per line."""
    records = [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]
    array, lines = tmp_path / "array.json", tmp_path / "lines.json"
    array.write_bytes(codecs.BOM_UTF8 + b"\n" * 80 + json.dumps(records, indent=2).encode())
    lines.write_text("\n" * 80 + "".join(json.dumps(r) + "\n" for r in records) + "{")
    assert [(type(r).__name__, r.id) for r in read_all(array)] == [("Document", "a"), ("Document", "b")]
    assert [r.id for r in read_all(lines)] == ["a", "b", f"{lines}:83"]  # line numbers as in the file


def test_a_json_file_holding_one_object_is_one_record_not_a_failure_per_line(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"id": "a", "text": "aa", "meta": {"x": [1, 2]}}, indent=2))
    assert [(type(r).__name__, r.id, r.metadata) for r in read_all(one)] == [
        ("Document", "a", {"meta": {"x": [1, 2]}})
    ]
    export = {"version": "1", "data": [{"id": str(i), "text": f"t{i}"} for i in range(30)]}
    for indent in (2, None):
        wrapped = tmp_path / "export.json.gz"
        wrapped.write_bytes(gzip.compress(json.dumps(export, indent=indent).encode()))
        (failure,) = read_all(wrapped)
        assert failure.error == "MissingText" and failure.id == f"{wrapped}:1"
        assert "'data' holds a list of 30 records" in failure.message
        assert "jq -c '.data[]' export.json.gz > records.jsonl" in failure.message
    lines = tmp_path / "lines.json"  # JSON Lines whose first line is damaged: the rest is read
    lines.write_text(
        '{"id": "a", "text": \n' + "".join(json.dumps({"id": i, "text": "x"}) + "\n" for i in range(3))
    )
    assert [(type(r).__name__, r.id) for r in read_all(lines)] == [
        ("Failure", f"{lines}:1"),
        ("Document", "0"),
        ("Document", "1"),
        ("Document", "2"),
    ]


def test_a_text_file_is_one_document_named_by_its_path(tmp_path):
    book = tmp_path / "book.txt"
    book.write_bytes(b"\xef\xbb\xbfChapter 1\r\n\r\nIt was a dark night.\n")
    packed = tmp_path / "notes.md.zst"
    import zstandard

    packed.write_bytes(zstandard.ZstdCompressor().compress("Été\n".encode()))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    assert detect_format(str(book)) == ("text", None)
    assert [(d.id, d.text) for d in read_all(book)] == [
        (str(book), "Chapter 1\n\nIt was a dark night.\n")  # CR LF read as LF (test_newlines.py)
    ]
    assert [(d.id, d.text) for d in read_all(packed, format="text")] == [(str(packed), "Été\n")]
    (failure,) = read_all(latin)
    assert (failure.id, failure.error) == (str(latin), "InvalidUtf8")


@pytest.mark.parametrize("name", ["log.txt", "bomb.txt.gz", "page.html.gz"])
def test_a_one_document_file_too_large_to_hold_is_a_failure(tmp_path, monkeypatch, name):
    """A text or HTML file was read whole: a 5 GB log, or a small .gz decompressing to terabytes,
    went into memory at once. Now it is read up to the limit and no further."""
    monkeypatch.setattr(readers, "MAX_FILE_DOCUMENT_BYTES", 1 << 20)
    body = b"<html><body><p>" + b"Words of the page. " * (200 << 10) + b"</p></body></html>"  # 3.8 MB
    path = tmp_path / name
    path.write_bytes(gzip.compress(body) if name.endswith(".gz") else body)
    (failure,) = read_all(path)
    assert (failure.id, failure.error) == (str(path), "RecordTooLarge")
    assert failure.message == (
        "over 1 MiB (decompressed): a text or HTML file is one document, read whole up to 1 MiB"
    )
    small = body[: 100 << 10] + b"</p></body></html>"
    path.write_bytes(gzip.compress(small) if name.endswith(".gz") else small)
    (document,) = read_all(path)
    assert document.text.startswith(("<html>", "Words of the page."))


def test_zstd_and_json_array(tmp_path):
    import zstandard

    path = tmp_path / "z.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b'{"id": "z", "text": "zz"}\n'))
    assert [d.id for d in read_all(path)] == ["z"]
    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"id": "a", "text": "aa"}, {"text": "bb"}]))
    assert [d.id for d in read_all(array)] == ["a", f"{array}:1"]
    array.write_text('[{"id": "a", "text": "aa"}, {"id": "b", "text": "b\\udc00b"}]')
    assert [(r.id, type(r).__name__) for r in read_all(array)] == [
        ("a", "Document"),
        ("b", "Failure"),  # the lone surrogate, filed under the element's id
    ]


def test_a_json_array_is_read_element_by_element(tmp_path, monkeypatch):
    array = tmp_path / "a.json"
    array.write_text(
        '[{"id": "a", "text": "aa"}, {"id": "b", "text": "bb"}, {"id": "c", "text": b}, {"id": "d"}]'
    )
    found = read_all(array)
    assert [(r.id, type(r).__name__) for r in found] == [
        ("a", "Document"),
        ("b", "Document"),
        (f"{array}:2", "Failure"),
    ]
    assert found[-1].error == "MalformedJson"
    assert found[-1].message == "array element 2: Expecting value; the rest of the file is not read"
    array.write_bytes(b'[{"id": "a", "text": "a"}, {"id": "b", "text": "\xff"}, {"id": "c", "text": "c"}]')
    found = read_all(array)
    assert [(r.id, type(r).__name__) for r in found] == [
        ("a", "Document"),
        (f"{array}:1", "Failure"),
        ("c", "Document"),
    ]
    assert (found[1].error, found[1].message) == ("InvalidUtf8", "array element 1 is not valid UTF-8")
    array.write_text('[{"id": "a", "text": "aa"}, {"id": "b", "text": "bb"}')  # never closed
    found = read_all(array)
    assert [r.id for r in found] == ["a", "b", f"{array}:2"]
    assert "found the end of the file" in found[-1].message
    deep = "[" * 100_000 + '"]}[{\\"x"' + "]" * 100_000  # brackets inside a string do not count
    before = '[{"id": "a", "text": "aa"}, {"id": "b", "text": "b", "m": '
    array.write_text(before + deep + '}, {"id": "c", "text": "c"}]')
    found = read_all(array)  # as a JSON Lines line nested too deeply: named, and the rest is read
    assert [r.id for r in found] == ["a", f"{array}:1", "c"]
    assert (found[1].error, found[1].message) == (
        "TooDeeplyNested",
        "array element 1: JSON nested too deeply to parse",
    )
    with monkeypatch.context() as patch:  # the skipped element spans many reads, one ending mid-string
        patch.setattr("pipeline.json_array.CHUNK", len(before) + 100_004)  # the first read ends in `"]}[`
        assert [(r.id, type(r).__name__) for r in read_all(array)] == [
            (r.id, type(r).__name__) for r in found
        ]
    array.write_text('[{"id": "a", "text": "aa"}, ' + "[" * 100_000)  # never closed
    assert [(r.id, getattr(r, "error", None)) for r in read_all(array)] == [
        ("a", None),
        (f"{array}:1", "MalformedJson"),
    ]
    big = [
        {"id": str(i), "text": "word " * (i % 50), "n": 10**15 + i} for i in range(20000)
    ]  # several chunks
    packed = gzip.compress(json.dumps(big).encode())
    array = tmp_path / "big.json.gz"
    array.write_bytes(packed)
    assert [d.id for d in read_all(array)] == [r["id"] for r in big]
    array.write_bytes(packed[: len(packed) // 2])  # truncated: the first half is still read
    found = read_all(array)
    assert 5000 < len(found) - 1 < 15000 and [d.id for d in found[:-1]] == [
        r["id"] for r in big[: len(found) - 1]
    ]
    assert found[-1].error == "TruncatedInput"


def test_byte_range_splits_read_every_line_once_with_exact_line_numbers(tmp_path):
    records = [{"text": f"document number {i} " * (i % 7 + 1)} for i in range(500)]
    path = write_jsonl(tmp_path / "big.jsonl", records)
    whole = read_all(path, split_bytes=1 << 30)
    split = read_all(path, split_bytes=997)
    assert len(plan_splits(str(path), InputConfig(split_bytes=997))) > 10
    assert [(d.id, d.text) for d in split] == [(d.id, d.text) for d in whole]
    assert split[-1].id == f"{path}:500"


def test_a_file_is_cut_into_eight_splits_by_default_each_from_1_to_64_mib(monkeypatch):
    """One file of a few MB is read by several workers (a 24 MB file was one split, filtered on
    one core); the split size comes from the file's own size, so other files keep their splits."""
    monkeypatch.setattr(readers.fileio, "open_read", None)  # planning opens nothing
    counts = {
        size: len(plan_splits("x.jsonl", InputConfig(), size))
        for size in (1, 3 << 19, 5 << 20, 24 << 20, 100 << 20, 512 << 20, 1 << 30)
    }
    assert counts == {1: 1, 3 << 19: 2, 5 << 20: 5, 24 << 20: 8, 100 << 20: 8, 512 << 20: 8, 1 << 30: 16}
    assert len(plan_splits("x.jsonl", InputConfig(split_bytes=1 << 30), 24 << 20)) == 1


def test_a_split_reads_the_file_before_it_only_when_a_record_needs_its_line_number(tmp_path, monkeypatch):
    """Numbering a split's lines read the whole file up to its start: a file cut into n splits
    was read about n/2 times over (on an object store, downloaded). Records with ids need none."""
    counted = []
    count = json_lines.count_newlines
    monkeypatch.setattr(
        json_lines, "count_newlines", lambda handle, end: counted.append(end) or count(handle, end)
    )
    with_ids = write_jsonl(
        tmp_path / "ids.jsonl", [{"id": f"d{i}", "text": "word " * 40} for i in range(200)]
    )
    docs = read_all(with_ids, split_bytes=1000)
    assert [d.id for d in docs] == [f"d{i}" for i in range(200)] and counted == []
    lines = [{"id": f"d{i}", "text": "word " * 40} for i in range(200)]
    lines[150] = {"text": "no id"}
    without = write_jsonl(tmp_path / "some.jsonl", lines)
    docs = read_all(without, split_bytes=1000)
    assert docs[150].id == f"{without}:151" and len(counted) == 1  # only the split holding line 151


def test_parquet_is_split_by_bytes_and_each_row_group_read_once(tmp_path, monkeypatch, reads_off_thread):
    """Splits come from the file's size: planning read every file's footer, which on an object
    store is a request (and, through Beam, a new S3 client) per file, in the driver."""
    path = tmp_path / "p.parquet"
    table = pa.table({"text": [f"t{i}" * 40 for i in range(100)], "extra": list(range(100))})
    pq.write_table(table, path, row_group_size=7)
    docs = read_all(path)
    assert reads_off_thread == []  # (see fileio.parquet_reader)
    assert [d.id for d in docs] == [f"{path}:{i}" for i in range(100)]
    assert docs[4].metadata == {"extra": 4}
    monkeypatch.setattr(readers.fileio, "open_read", None)  # planning opens nothing
    splits = plan_splits(str(path), InputConfig(split_bytes=200), path.stat().st_size)
    monkeypatch.undo()
    assert len(splits) > 15  # more splits than the file's 15 row groups: some read none
    # Row groups are read in batches smaller than themselves; each split numbers its rows exactly.
    monkeypatch.setattr(parquet_rows, "PARQUET_BATCH_ROWS", 2)
    by_split = [[d.id for d in read_split(split, InputConfig())] for split in splits]
    assert [i for ids in by_split for i in ids] == [f"{path}:{i}" for i in range(100)]
    assert sorted(len(ids) for ids in by_split if ids) == [2] + [7] * 14  # whole row groups


def test_an_unreadable_parquet_file_of_many_splits_is_one_failure(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 5000)
    records = read_all(path, split_bytes=1000)
    assert [(type(r).__name__, r.id) for r in records] == [("Failure", str(path))]


def test_each_split_of_a_file_gone_before_it_was_read_fails_naming_its_bytes(tmp_path):
    """A file deleted mid-run failed once per split under one id: eight identical records."""
    path = write_jsonl(tmp_path / "gone.jsonl", [{"text": "word " * 40} for _ in range(60)])
    config = InputConfig(split_bytes=4000)
    splits = plan_splits(str(path), config)
    path.unlink()
    records = [record for split in splits for record in read_split(split, config)]
    assert [(type(r).__name__, r.error) for r in records] == [("Failure", "FileNotFoundError")] * len(splits)
    assert [r.id for r in records] == [str(path)] + [f"{path}@{s.start}" for s in splits[1:]]
    assert records[1].message.startswith("bytes 4000 to 8000 of the file: [Errno 2] No such file")


def test_parquet_binary_text_is_decoded_and_a_null_text_says_so(tmp_path):
    path = tmp_path / "b.parquet"
    texts = pa.array([b"caf\xc3\xa9", b"\xff\xfe", None], type=pa.binary())
    pq.write_table(pa.table({"id": ["ok", "bad", "null"], "text": texts}), path)
    records = {r.id: r for r in read_all(path)}
    assert records["ok"].text == "café"
    assert (records["bad"].error, records["null"].error) == ("InvalidUtf8", "MissingText")
    assert records["null"].message == "'text' is null"


def test_parquet_string_columns_holding_bytes_that_are_not_utf8_fail_their_rows_only(tmp_path):
    """A writer that does not validate can put such bytes in a `string` column: converting the
    batch raised, and the split ended with one failure, the file's later rows not even read."""
    path = tmp_path / "s.parquet"
    texts, langs = [f"row {i}".encode() for i in range(3_000)], [b"en"] * 3_000
    texts[1_500], langs[2_500] = b"bad \xff\xfe", b"\xff"
    unchecked = [
        pa.Array.from_buffers(pa.string(), 3_000, pa.array(v, pa.binary()).buffers()) for v in (texts, langs)
    ]
    pq.write_table(pa.table({"text": unchecked[0], "lang": unchecked[1]}), path, row_group_size=1_000)
    records = read_all(path)
    failures = {r.id: r.message for r in records if isinstance(r, Failure)}
    assert failures == {
        f"{path}:1500": "column 'text' is not valid UTF-8",
        f"{path}:2500": "column 'lang' is not valid UTF-8",
    }
    assert [r.text for r in records if isinstance(r, Document)] == [
        f"row {i}" for i in range(3_000) if i not in (1_500, 2_500)
    ]


def test_parquet_columns_json_has_no_type_for_become_strict_json_metadata(tmp_path):
    path = tmp_path / "typed.parquet"
    columns = {
        "text": ["a"] * 4,
        "ratio": [float("nan"), float("inf"), -float("inf"), 0.5],
        "raw": pa.array([b"caf\xc3\xa9", b"\xff", None, b""], pa.binary()),
        "nested": [{"x": float("nan")}, {"x": 1.0}, None, {"x": None}],
        "day": pa.array([datetime.date(2024, 1, 2)] * 4),
    }
    pq.write_table(pa.table(columns), path)

    def strict(text):  # as DuckDB, JavaScript and Rust parse JSON: no NaN or Infinity
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in {text}"))

    rows = [strict(kept_row(doc)["metadata"]) for doc in read_all(path)]
    assert [r["ratio"] for r in rows] == ["NaN", "Infinity", "-Infinity", 0.5]
    assert [r["raw"] for r in rows] == ["café", "b'\\xff'", None, ""]
    assert [r["nested"] for r in rows] == [{"x": "NaN"}, {"x": 1.0}, None, {"x": None}]
    assert {r["day"] for r in rows} == {"2024-01-02"}


def test_iter_documents_skips_failures(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"id": "1", "text": "a"}, "not json"])
    assert [d.id for d in iter_documents(str(tmp_path / "*.jsonl"))] == ["1"]


def test_split_ordering_is_total():
    assert sorted([Split("b", 5, 9), Split("a", 0, 3)])[0].path == "a"


@pytest.mark.parametrize("name", ["a.jsonl", "a.jsonl.gz"])
def test_a_line_too_long_to_hold_is_one_failure_read_past_in_every_split(tmp_path, monkeypatch, name):
    monkeypatch.setattr(json_lines, "MAX_LINE_BYTES", 200)
    huge = json.dumps([{"id": str(i), "text": "x" * 40} for i in range(20)])  # ~1,000 bytes, one line
    lines = [json.dumps({"id": "before", "text": "a"}), huge, json.dumps({"id": "after", "text": "b"})]
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    records = read_all(path, split_bytes=64)  # splits that start inside the long line skip it too
    assert [r.id for r in records] == ["before", f"{path}:2", "after"]
    assert records[1].error == "LineTooLong" and f"line 2 is {len(huge) + 1:,} bytes" in records[1].message
    assert "read, streamed, from a file named .json" in records[1].message


def test_a_json_array_on_one_line_of_a_jsonl_file_says_to_name_it_json(tmp_path):
    path = tmp_path / "pandas.jsonl"
    path.write_text(json.dumps([{"id": "1", "text": "a"}, {"id": "2", "text": "b"}]))
    (failure,) = read_all(path)
    assert failure.error == "NotAnObject" and failure.message.startswith("a JSON array of 2 objects; ")
    (tmp_path / "pandas.json").write_text(path.read_text())
    assert [d.id for d in read_all(tmp_path / "pandas.json")] == ["1", "2"]


@pytest.mark.parametrize("name", ["records.jsonl", "records.json"])
def test_an_integer_longer_than_python_converts_costs_neither_its_record_nor_the_rest(tmp_path, name):
    """json.loads raises ValueError past 4,300 digits: it ended the whole file with one failure."""
    digits = "9" * 5_000
    lines = [
        f'{{"id": 1, "text": "a", "n": {digits}}}',
        f'{{"id": {digits}, "text": "b"}}',
        '{"id": 3, "text": "c"}',
    ]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n" if name.endswith("l") else "[" + ",".join(lines) + "]")
    records = read_all(path)
    assert [(r.id, r.text) for r in records] == [("1", "a"), (digits, "b"), ("3", "c")]
    assert records[0].metadata == {"n": digits}


def test_a_file_shorter_than_when_listed_is_a_failure_not_silence(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [{"id": str(i), "text": "x" * 100} for i in range(100)])
    config = InputConfig((str(path),), split_bytes=4000)
    splits = plan_splits(str(path), config)
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:5000])  # truncated after the run listed it
    records = [r for split in splits for r in read_split(split, config)]
    changed = [r for r in records if isinstance(r, Failure) and r.error == "InputChanged"]
    assert len(splits) == 4 and len(changed) == 3  # each split that lost lines says so
    assert [r.message for r in changed] == [
        f"the file has 5,000 bytes, fewer than the {end:,} it had when listed" for end in (8000, 12000, size)
    ]


@pytest.mark.parametrize("checksums", [False, True])
def test_a_corrupt_parquet_row_group_is_one_failure_and_the_rest_is_read(tmp_path, checksums):
    """A row group that did not decode ended its split (the whole file, for most files): 6,000 of
    10,000 rows lost. Pages with a CRC are checked: a byte changed in a zstd page decoded, without
    the check, to other text."""
    rows = [{"id": str(i), "text": f"document {i} " + "word " * (50 + i % 150)} for i in range(10_000)]
    path = tmp_path / "rg.parquet"
    pq.write_table(
        pa.Table.from_pylist(rows),
        path,
        row_group_size=1_000,
        compression="zstd",
        write_page_checksum=checksums,
    )
    data = bytearray(path.read_bytes())
    page = pq.ParquetFile(path).metadata.row_group(4).column(1).data_page_offset
    spot = page + (2_000 if checksums else 20)  # page data (checked by its CRC), or its header
    data[spot : spot + 64] = bytes(64)
    path.write_bytes(bytes(data))
    records = read_all(path)
    docs = [r for r in records if isinstance(r, Document)]
    assert [d.id for d in docs] == [str(i) for i in range(10_000) if not 4_000 <= i < 5_000]
    assert all(d.text == rows[int(d.id)]["text"] for d in docs)
    (failure,) = [r for r in records if isinstance(r, Failure)]
    assert (failure.id, failure.error) == (f"{path}@rowgroup:4", "CorruptRowGroup")
    assert failure.message.startswith("row group 4 (rows 4,000 to 4,999) does not decode from row 4,000 on (")


@pytest.mark.parametrize("name", ["deep.jsonl", "deep.json"])
def test_a_record_nested_deeper_than_pickling_goes_is_one_failure(tmp_path, name):
    """A valid record nested 500 deep parsed, then could not be pickled between Beam steps: the
    whole run failed, and every rerun of its unfinished split failed alike."""
    records = [
        '{"id": "a", "text": "aa"}',
        '{"id": "deep", "text": "b", "x": ' + "[" * 500 + "]" * 500 + "}",
        '{"id": "c", "text": "[[[[ brackets in text are no nesting ]]]]" , "m": '
        + "[" * 100
        + "]" * 100
        + "}",
    ]
    path = tmp_path / name
    path.write_text("\n".join(records) if name.endswith(".jsonl") else "[" + ", ".join(records) + "]")
    found = read_all(path)
    assert [(r.id, type(r).__name__) for r in found] == [
        ("a", "Document"),
        ("deep", "Failure"),
        ("c", "Document"),
    ]
    assert (found[1].error, found[1].message) == ("TooDeeplyNested", "JSON nested more than 100 levels deep")


@pytest.mark.parametrize(
    "suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_a_cut_off_compressed_json_array_keeps_the_elements_before_the_cut(tmp_path, suffix, compress):
    """The buffered read over the decompressed stream dropped what it had gathered when the cut
    raised: 0 of 1,497 whole elements kept, and the failure named element 0."""
    records = [{"id": f"r{i}", "text": f"text number {i} " * 20} for i in range(10_000)]  # bz2: 3 blocks
    data = compress(json.dumps(records).encode())
    path = tmp_path / f"cut.json{suffix}"
    path.write_bytes(data[: len(data) // 2])
    found = read_all(path)
    documents = [r for r in found if isinstance(r, Document)]
    assert [r.id for r in documents] == [f"r{i}" for i in range(len(documents))] and len(documents) > 1000
    assert [(r.id, r.error) for r in found[len(documents) :]] == [
        (f"{path}:{len(documents)}", "TruncatedInput")
    ]


@pytest.mark.parametrize(
    "suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_a_line_end_after_the_last_member_is_no_cut_off_member(tmp_path, suffix, compress):
    """`echo >> file.jsonl.gz` left a line end read as a member cut off: one failure for a record
    that does not exist. A cut-off compressed text file failed as `EOFError`, not `TruncatedInput`."""
    path = tmp_path / f"whole.jsonl{suffix}"
    path.write_bytes(compress(b'{"id": "a", "text": "aa"}\n') + b"\n")
    assert [(r.id, type(r).__name__) for r in read_all(path)] == [("a", "Document")]
    text = compress(b"a page of text " * 10_000)
    cut = tmp_path / f"cut.txt{suffix}"
    cut.write_bytes(text[: len(text) // 2])
    assert [(r.id, r.error) for r in read_all(cut)] == [(str(cut), "TruncatedInput")]


def test_a_large_element_of_a_compressed_json_array_is_read_in_bounded_reads(tmp_path):
    """Each retry doubled the size asked of one read1 call, which reserves that many bytes: an
    8 MB element in a .json.gz asked for 16 GiB, and the file ended in one MemoryError."""
    records = [{"id": f"a{i}", "text": "small"} for i in range(25)]
    records += [{"id": "big", "text": "word " * 1_600_000}] + [
        {"id": f"b{i}", "text": "small"} for i in range(10)
    ]
    path = tmp_path / "mid.json.gz"
    path.write_bytes(gzip.compress(json.dumps(records).encode()))
    found = read_all(path)
    assert [r.id for r in found] == [r["id"] for r in records] and all(isinstance(r, Document) for r in found)


def test_an_output_row_s_metadata_nested_too_deep_stays_a_string(tmp_path):
    """An output row's `metadata` JSON string was unpacked unchecked: 600 levels crashed the run
    when pickled, and 5,000 raised RecursionError, failing the file with the lines after it unread."""
    path = tmp_path / "rows.jsonl"
    deep = {"600": "[" * 600 + "]" * 600, "5000": "[" * 5000 + "]" * 5000, "3": "[[[1]]]"}
    output_row = {"text": "t", "scores": {}, "language": "en", "language_score": 1.0}
    rows = [output_row | {"id": key, "metadata": '{"x": ' + value + "}"} for key, value in deep.items()]
    write_jsonl(path, [*rows, {"id": "after", "text": "t"}])
    found = read_all(path)
    assert [(r.id, type(r.metadata.get("metadata")).__name__) for r in found] == [
        ("600", "str"),
        ("5000", "str"),
        ("3", "NoneType"),
        ("after", "NoneType"),
    ]
    assert found[2].metadata == {"x": [[[1]]]}
    pickle.dumps(found)
