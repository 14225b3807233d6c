"""Multi-member gzip read member by member, on past a corrupt member (WARC files)."""

import gzip
import io
import random
import zlib

import pytest

from pipeline.document import Document, Failure
from pipeline.gzip_members import GzipMembers
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
    stream = GzipMembers(io.BytesIO(data))
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
    stream = GzipMembers(io.BytesIO(bytes(damaged)))
    out = _drain(stream, 1 << 20)
    assert stream.damage and [d.offset for d in stream.damage] == [len(members[0])]
    assert out.startswith(gzip.decompress(members[0])) and out.endswith(gzip.decompress(members[2]))
