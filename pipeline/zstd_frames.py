"""Telling a zstd stream that was cut short from a whole one.

python-zstandard's readers end quietly when the data stops inside a frame: a `.jsonl.zst`
download cut short read as a shorter file, every document after the cut lost without a word.
`FrameWalker` follows the frame and block headers (RFC 8878) of the compressed bytes, without
decompressing, so a reader can say whether the data ended between frames; `open_zstd` raises
`EOFError` when it did not.
"""

from __future__ import annotations

import io
from typing import BinaryIO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SKIPPABLE_MAGIC_TAIL = b"\x2a\x4d\x18"  # skippable frames: 0x184D2A50 .. 0x184D2A5F, little-endian
FRAME_CONTENT_SIZE_BYTES = (0, 2, 4, 8)
DICTIONARY_ID_BYTES = (0, 1, 2, 4)
RESERVED_BLOCK = 3
RLE_BLOCK = 1
CHECKSUM_BYTES = 4


class FrameWalker:
    """Follows zstd frame and block headers through compressed bytes fed in pieces of any size."""

    def __init__(self) -> None:
        self.header = b""  # the header being read, while incomplete
        self.skip = 0  # bytes of block content, checksum or skippable frame still to pass over
        self.in_frame = False  # inside a zstd frame: the next header is a block's
        self.checksum = False  # the current frame ends with a 4-byte checksum
        self.fed = 0  # bytes followed so far

    def between_frames(self) -> bool:
        """True when the bytes fed so far end exactly where a frame ended (or are none)."""
        return not (self.in_frame or self.header or self.skip)

    def feed(self, data: bytes) -> None:
        """Follow `data`; raises ValueError where the bytes cannot be zstd frames."""
        position = 0
        while position < len(data):
            if self.skip:
                step = min(self.skip, len(data) - position)
                self.skip -= step
            else:
                step = min(self._header_size() - len(self.header), len(data) - position)
                self.header += data[position : position + step]
            position += step
            self.fed += step
            if self.header and len(self.header) == self._header_size():
                self._finish_header()

    def _header_size(self) -> int:
        """Bytes of the header being read, as far as its bytes so far tell."""
        header = self.header
        if self.in_frame:
            return 3
        if len(header) < 4:
            return 4
        if header[1:4] == SKIPPABLE_MAGIC_TAIL and header[0] & 0xF0 == 0x50:
            return 8
        if header[:4] != ZSTD_MAGIC:
            raise ValueError(f"not zstd data at byte {self.fed - len(header):,} (where a frame should start)")
        if len(header) < 5:
            return 5
        descriptor = header[4]
        single_segment = bool(descriptor & 0x20)
        content_size = FRAME_CONTENT_SIZE_BYTES[descriptor >> 6] or int(single_segment)
        return 5 + (not single_segment) + DICTIONARY_ID_BYTES[descriptor & 3] + content_size

    def _finish_header(self) -> None:
        header, self.header = self.header, b""
        if self.in_frame:  # a block header: last-block bit, type, size
            value = int.from_bytes(header, "little")
            kind, size = (value >> 1) & 3, value >> 3
            if kind == RESERVED_BLOCK:
                raise ValueError("zstd block of the reserved type: corrupt data")
            self.skip = 1 if kind == RLE_BLOCK else size
            if value & 1:
                self.in_frame = False
                self.skip += CHECKSUM_BYTES if self.checksum else 0
        elif header[:4] == ZSTD_MAGIC:
            self.in_frame, self.checksum = True, bool(header[4] & 4)
        else:  # a skippable frame: its size follows the magic
            self.skip = int.from_bytes(header[4:8], "little")


class _CheckedSource:
    """A file's compressed bytes, followed by a FrameWalker; an end inside a frame is an error."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.frames = FrameWalker()

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if data:
            self.frames.feed(data)
        elif not self.frames.between_frames():
            raise EOFError(
                f"zstd data ended inside a frame after {self.frames.fed:,} bytes: the file was cut short"
            )
        return data


def open_zstd(raw: BinaryIO) -> io.BufferedReader:
    """The decompressed bytes of a zstd file of one or more frames; reading past a cut raises EOFError."""
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(
        _CheckedSource(raw), read_across_frames=True, closefd=False
    )
    return io.BufferedReader(reader)
