import io
import os

import pytest
import zstandard

from pipeline.zstd_frames import FrameWalker, open_zstd

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
    assert open_zstd(io.BytesIO(whole)).read() == TEXT + TEXT
    with pytest.raises(EOFError, match="zstd data ended inside a frame .* cut short"):
        open_zstd(io.BytesIO(whole[:-3])).read()
