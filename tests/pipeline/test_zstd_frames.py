import io
import os
import re

import pytest
import zstandard

from pipeline.zstd_frames import CorruptZstd, FrameWalker, open_zstd
from tests.pipeline.test_readers import read_all

TEXT = b"".join(b"line %d of a document\n" % i for i in range(20000))


def frames() -> list[bytes]:
    """Frames of every kind the walker must follow: sizes declared or not, checksums,
    compressed, raw (incompressible) and RLE blocks, an empty frame, a skippable frame."""
    plain = zstandard.ZstdCompressor(level=3).compress(TEXT)
    return [
        plain,
        zstandard.ZstdCompressor(level=19, write_checksum=True, write_content_size=False).compress(TEXT),
        zstandard.ZstdCompressor().compress(os.urandom(200_000)),
        zstandard.ZstdCompressor().compress(b"\0" * 300_000),
        zstandard.ZstdCompressor().compress(b""),
        b"\x5a\x2a\x4d\x18" + (5).to_bytes(4, "little") + b"12345",
    ]


def walk(data: bytes, piece: int) -> FrameWalker:
    walker = FrameWalker()
    for start in range(0, len(data), piece):
        walker.feed(data[start : start + piece])
    return walker


@pytest.mark.parametrize("piece", [1, 5, 4096, 1 << 30])
def test_whole_streams_end_between_frames_however_they_are_fed(piece):
    for frame in frames():
        assert walk(frame, piece).between_frames()
    assert walk(b"".join(frames()), piece).between_frames()


def test_a_stream_cut_anywhere_inside_a_frame_is_told():
    whole = b"".join(frames())
    ends, position = set(), 0
    for frame in frames():
        position += len(frame)
        ends.add(position)
    step = max(1, len(whole) // 3000)
    for cut in [*range(1, len(whole), step), *(end - 1 for end in ends)]:
        assert walk(whole[:cut], 4096).between_frames() == (cut in ends), cut


def test_bytes_that_are_not_zstd_are_an_error():
    with pytest.raises(ValueError, match="not zstd data at byte 0"):
        FrameWalker().feed(b'{"text": "plain"}\n')


def test_open_zstd_reads_every_frame_and_raises_at_a_cut():
    whole = b"".join(frames()[:2])
    stream = open_zstd(io.BytesIO(whole))
    assert stream.read() == TEXT + TEXT and stream.damage is None
    cut = open_zstd(io.BytesIO(whole[:-3]))
    assert (TEXT + TEXT).startswith(cut.read())
    assert re.fullmatch("zstd data ended inside a frame .* cut short", str(cut.damage))


@pytest.mark.parametrize("tail", [b"\n", b"GARBAGE", b"{not zstd at all}\n" * 100])
def test_bytes_after_the_last_frame_are_an_error_after_every_byte_before_them(tail):
    """The decompressor was given the stray bytes and raised, and what it had decompressed but not
    yet returned was lost: 79 records of a .jsonl.zst followed by one line end. Now the stream
    ends where the frames do, and says why."""
    whole = b"".join(frames()[:2])
    stream = open_zstd(io.BytesIO(whole + tail))
    out = b""
    while chunk := stream.read(8192):
        out += chunk
    assert out == TEXT + TEXT
    assert isinstance(stream.damage, CorruptZstd) and f"byte {len(whole):,}" in str(stream.damage)


def test_every_record_of_a_zstd_file_before_stray_bytes_is_read(tmp_path):
    path = tmp_path / "a.jsonl.zst"
    lines = b"".join(b'{"id": "%d", "text": "doc %d"}\n' % (i, i) for i in range(100_000))
    path.write_bytes(zstandard.ZstdCompressor().compress(lines) + b"\n")
    records = read_all(path)
    assert [r.id for r in records[:-1]] == [str(i) for i in range(100_000)]
    assert (records[-1].error, records[-1].id) == ("CorruptZstd", f"{path}:100001")


def test_a_zstd_warc_file_with_stray_bytes_keeps_its_records_and_says_so(tmp_path):
    from tests.pipeline.test_warc import HTML, _response, _warc_record

    path = tmp_path / "a.warc.zst"
    records = b"".join(_warc_record("response", _response(HTML)) for _ in range(3))
    path.write_bytes(zstandard.ZstdCompressor().compress(records) + b"junk!")
    *docs, failure = read_all(path)
    assert len(docs) == 3 and all("real paragraph" in doc.text for doc in docs)
    assert (failure.id, failure.error) == (str(path), "CorruptZstd")
