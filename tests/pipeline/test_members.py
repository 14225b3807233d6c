"""Multi-member gzip, bzip2 and xz read member by member, on past a corrupt member."""

import bz2
import gzip
import io
import json
import lzma
import random
import zlib

import pytest

from pipeline import members as compressed_members
from pipeline.document import Document, Failure
from pipeline.members import GZIP, CompressedMembers
from tests.pipeline.test_readers import read_all
from tests.pipeline.test_warc import _response, _warc_record


def _page(i: int) -> bytes:
    body = f"Report number {i} on the state of the roads in the county. " * 12
    return f"<html><body><article><h1>Report {i}</h1><p>{body}</p></article></body></html>".encode()


def _members(count: int) -> list[bytes]:
    """A WARC file as Common Crawl writes it: one gzip member per record."""
    return [
        gzip.compress(_warc_record("response", _response(_page(i)), uri=f"http://e.com/{i}"))
        for i in range(count)
    ]


def _drain(stream, size: int) -> bytes:
    out = []
    while chunk := stream.read(size):
        out.append(chunk)
    return b"".join(out)


@pytest.mark.parametrize("read_size", [1, 7, 4096, 1 << 20])
def test_whole_members_decompress_as_gzip_does(read_size):
    rng = random.Random(read_size)
    members = [gzip.compress(rng.randbytes(rng.randint(0, 50_000))) for _ in range(30)]
    data = b"".join(members) + b"\x00" * 512  # zero padding after the last member, as gzip allows
    stream = CompressedMembers(io.BytesIO(data), GZIP)
    assert _drain(stream, read_size) == gzip.decompress(data) and stream.damage == []


def test_a_corrupt_member_costs_only_its_own_record(tmp_path):
    members = _members(12)
    damaged = bytearray(members[5])
    damaged[30:60] = bytes(b ^ 0x5A for b in damaged[30:60])
    members[5] = bytes(damaged)
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(b"".join(members))
    with pytest.raises(zlib.error):
        gzip.decompress(path.read_bytes())  # what a plain gzip reader makes of it
    records = read_all(path)
    docs = [r for r in records if isinstance(r, Document)]
    assert [d.url for d in docs] == [f"http://e.com/{i}" for i in range(12) if i != 5]
    corrupt = [r for r in records if isinstance(r, Failure) and r.error == "CorruptGzipMember"]
    offset = sum(map(len, members[:5]))
    assert [r.id for r in corrupt] == [f"{path}@gzip:{offset}"]
    assert f"compressed byte {offset:,} does not decompress" in corrupt[0].message


def test_garbage_after_the_last_member_is_reported_and_a_cut_member_still_says_truncated(tmp_path):
    members = _members(4)
    path = tmp_path / "tail.warc.gz"
    path.write_bytes(b"".join(members) + b"not gzip at all")
    records = read_all(path)
    assert sum(isinstance(r, Document) for r in records) == 4
    assert [r.error for r in records if isinstance(r, Failure)] == ["CorruptGzipMember"]
    cut = tmp_path / "cut.warc.gz"
    whole = b"".join(members)
    cut.write_bytes(whole[: len(whole) - len(members[-1]) // 2])
    records = read_all(cut)
    assert sum(isinstance(r, Document) for r in records) == 3  # every record before the cut
    assert [r.error for r in records if isinstance(r, Failure)] == ["TruncatedInput"]


def test_a_damaged_member_larger_than_a_read_is_reported_at_its_own_start():
    rng = random.Random(3)
    members = [gzip.compress(rng.randbytes(size)) for size in (1_000, 300_000, 2_000)]  # 300 KB: 5 reads
    damaged = bytearray(b"".join(members))
    middle = len(members[0]) + len(members[1]) // 2
    damaged[middle : middle + 64] = bytes(64)
    stream = CompressedMembers(io.BytesIO(bytes(damaged)), GZIP)
    out = _drain(stream, 1 << 20)
    assert stream.damage and [d.offset for d in stream.damage] == [len(members[0])]
    assert out.startswith(gzip.decompress(members[0])) and out.endswith(gzip.decompress(members[2]))


def test_a_member_cut_short_does_not_take_the_members_after_it(tmp_path):
    """A cut member reads the members after it as its own deflate data (here: the rest of a stored
    block) before it fails; the search for the next member starts after the cut member's header."""
    members = _members(12)
    members[5] = gzip.compress(random.Random(5).randbytes(300_000))[:100_000]  # stored blocks, cut
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(b"".join(members))
    records = read_all(path)
    docs = [r for r in records if isinstance(r, Document)]
    assert [d.url for d in docs] == [f"http://e.com/{i}" for i in range(12) if i != 5]
    failures = [r for r in records if isinstance(r, Failure)]
    assert [(r.error, r.id) for r in failures] == [
        ("CorruptGzipMember", f"{path}@gzip:{sum(map(len, members[:5]))}")
    ]


@pytest.mark.parametrize("members_after", [1, 3, 10])
def test_a_false_header_with_an_extra_field_does_not_take_the_members_after_it(members_after):
    """Garbage that looks like a member header with a 64 KiB extra field (FEXTRA), followed by
    fewer or more bytes than that: the members after it are read, and the garbage is one damage."""
    rng = random.Random(members_after)
    texts = [rng.randbytes(rng.randint(100, 20_000)) for _ in range(13)]
    members = [gzip.compress(text) for text in texts]
    garbage = b"\x1f\x8b\x08\x04" + bytes(6) + b"\xff\xff" + b"not an extra field"
    cut = len(members) - members_after
    data = b"".join(members[:cut]) + garbage + b"".join(members[cut:])
    stream = CompressedMembers(io.BytesIO(data), GZIP)
    assert _drain(stream, 1 << 16) == b"".join(texts)
    assert [d.offset for d in stream.damage] == [sum(map(len, members[:cut]))]


def test_a_damaged_member_gives_none_of_what_it_decompressed_before_its_crc_failed(tmp_path):
    """Stored (level 0) deflate data decodes whatever its bytes: a flipped byte shows only in the
    member's CRC, after 200 KB (several reads) of output. None of it is read as a document."""
    lines = [json.dumps({"id": str(i), "text": f"record {i} " * 40}) + "\n" for i in range(1_500)]
    members = [gzip.compress("".join(lines[k : k + 500]).encode(), 0) for k in (0, 500, 1_000)]
    damaged = bytearray(members[1])
    damaged[len(damaged) // 2] ^= 0x04  # "record" becomes "rebord", or a digit another digit
    path = tmp_path / "m.jsonl.gz"
    path.write_bytes(members[0] + bytes(damaged) + members[2])
    records = read_all(path)
    ids = [r.id for r in records if isinstance(r, Document)]
    assert ids == [str(i) for i in range(500)] + [str(i) for i in range(1_000, 1_500)]
    failures = [(r.error, r.id) for r in records if isinstance(r, Failure)]
    assert failures == [("CorruptGzipMember", f"{path}@gzip:{len(members[0])}")]


def test_a_member_longer_than_is_held_streams_up_to_where_its_damage_shows(monkeypatch):
    monkeypatch.setattr(compressed_members, "HELD_BYTES", 1 << 16)
    rng = random.Random(4)
    texts = [rng.randbytes(1_000), rng.randbytes(300_000), rng.randbytes(1_000)]
    members = [gzip.compress(text) for text in texts]
    damaged = bytearray(b"".join(members))
    damaged[len(members[0]) + 250_000] ^= 0x01  # stored data: only the CRC tells
    stream = CompressedMembers(io.BytesIO(bytes(damaged)), GZIP)
    out = _drain(stream, 1 << 16)
    assert [d.offset for d in stream.damage] == [len(members[0])]
    assert out.startswith(texts[0] + texts[1][:200_000]) and out.endswith(texts[2])


def _json_lines_members(compress, members: int = 10, lines: int = 100) -> list[bytes]:
    return [
        compress(
            "".join(
                json.dumps({"id": f"{k}-{i}", "text": f"record {k} {i} " * 20}) + "\n" for i in range(lines)
            ).encode()
        )
        for k in range(members)
    ]


@pytest.mark.parametrize(
    ("suffix", "compress", "error", "label"),
    [
        (".bz2", bz2.compress, "CorruptBzip2Stream", "bzip2"),
        (".xz", lzma.compress, "CorruptXzStream", "xz"),
        (".gz", gzip.compress, "CorruptGzipMember", "gzip"),
    ],
)
def test_a_corrupt_stream_of_a_multi_stream_bz2_or_xz_file_costs_only_its_own_records(
    tmp_path, suffix, compress, error, label
):
    """pbzip2 and parallel xz write many streams. Python's BZ2File and LZMAFile end quietly at a
    stream that does not start to decompress: a .jsonl.bz2 damaged in its 5th of 10 streams read
    400 records, and the 600 after were lost without a failure."""
    members = _json_lines_members(compress)
    damaged = bytearray(members[4])
    damaged[len(damaged) // 2 : len(damaged) // 2 + 16] = bytes(16)
    members[4] = bytes(damaged)
    path = tmp_path / f"m.jsonl{suffix}"
    path.write_bytes(b"".join(members) + b"trailing bytes that are not a stream")
    records = read_all(path)
    ids = [r.id for r in records if isinstance(r, Document)]
    assert ids == [f"{k}-{i}" for k in range(10) if k != 4 for i in range(100)]
    failures = [(r.error, r.id) for r in records if isinstance(r, Failure)]
    whole = sum(map(len, members))
    assert failures == [
        (error, f"{path}@{label}:{sum(map(len, members[:4]))}"),
        (error, f"{path}@{label}:{whole}"),
    ]
