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


def starts_skippable_frame(data: bytes) -> bool:
    """Whether `data` (at least 4 bytes) begins with a skippable frame's magic number."""
    return data[1:4] == SKIPPABLE_MAGIC_TAIL and data[0] & 0xF0 == 0x50


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
        if starts_skippable_frame(header):
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


class CorruptZstd(ValueError):
    """Bytes where a zstd frame should start are not one (the frames before them were read)."""


class _CheckedSource:
    """A file's compressed bytes, followed by a FrameWalker. The decompressor gets only bytes the
    walker has seen fit: a frame header is held back until it is whole and valid, and reading stops
    where the bytes stop being frames. What went wrong (`damage`: bytes that are not zstd, or data
    that ends inside a frame) is kept, not raised: raised here, it cost what the decompressor had
    decompressed and not yet returned (79 records before one stray line end)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.frames = FrameWalker()
        self.held = b""  # the start of a frame header, not yet whole
        self.damage: Exception | None = None

    def read(self, size: int = -1) -> bytes:
        while self.damage is None:
            data = self.raw.read(size)
            if not data:
                self.damage = self._end_damage()
                return b""
            passed = self.frames.fed - len(self.held)  # bytes handed on so far
            pending = self.held + data
            try:
                self.frames.feed(data)
            except ValueError as error:
                self.damage = CorruptZstd(str(error))
                self.held = b""
                return pending[: self.frames.fed - len(self.frames.header) - passed]
            cut = len(pending) - (0 if self.frames.in_frame else len(self.frames.header))
            self.held = pending[cut:]
            if cut:
                return pending[:cut]
        return b""

    def _end_damage(self) -> Exception | None:
        """At the end of the file: None when it ends between frames."""
        if self.frames.between_frames():
            return None
        if self.held and not (self.held.startswith(ZSTD_MAGIC) or ZSTD_MAGIC.startswith(self.held)):
            return CorruptZstd(
                f"the last {len(self.held)} bytes (from byte {self.frames.fed - len(self.held):,}) are not zstd data"
            )
        return EOFError(
            f"zstd data ended inside a frame after {self.frames.fed:,} bytes: the file was cut short"
        )


class ZstdStream(io.BufferedReader):
    """`open_zstd`'s decompressed bytes. Where the file stops being zstd frames they end, and,
    once read to that end, `damage` says why (raised as the data ran out, it cost what the
    decompressor had not yet returned)."""

    def __init__(self, reader: BinaryIO, source: _CheckedSource) -> None:
        super().__init__(reader)
        self.source = source

    @property
    def damage(self) -> Exception | None:
        return self.source.damage


def open_zstd(raw: BinaryIO) -> ZstdStream:
    """The decompressed bytes of a zstd file of one or more frames, up to where it stops being
    frames: then its `damage` is `CorruptZstd` (bytes that are not zstd) or `EOFError` (a cut)."""
    import zstandard

    source = _CheckedSource(raw)
    return ZstdStream(
        zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True, closefd=False), source
    )
