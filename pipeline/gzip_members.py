"""A multi-member gzip stream that reads on past a corrupt member.

WARC files are gzipped one record per member (Common Crawl's hold ~40,000), and JSON Lines joined
with `cat` or written by bgzip hold many too, so one damaged member need not cost the rest of the
file. `GzipMembers` decompresses member by member; where a member does not decompress it notes
the damage, looks for the next member header in the compressed bytes and goes on from there. A
stream cut short inside a member still raises EOFError, as `gzip` does.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from pipeline.document import READ_STAGE, Failure, one_line

MEMBER_HEADER = b"\x1f\x8b\x08"  # ID1, ID2, CM = deflate (RFC 1952)
RESERVED_FLAGS = 0xE0
READ_SIZE = 1 << 16  # compressed bytes per read: the rest after a member is copied once per member


class Damage(NamedTuple):
    """Compressed bytes skipped: where they start and why."""

    offset: int
    message: str


class GzipMembers(io.RawIOBase):
    """The decompressed bytes of a gzip stream, member by member; `damage` lists what was skipped
    (`damage_failures` takes it)."""

    def __init__(self, raw: io.IOBase) -> None:
        self.raw = raw
        self.input = b""  # compressed bytes not yet given to the decompressor
        self.offset = 0  # compressed offset of input[0]
        self.member_start = 0  # compressed offset of the current member's header
        self.decompressor = zlib.decompressobj(31)
        self.in_member = False  # the current member has had input
        self.searching = False  # skipping compressed bytes up to the next member header
        self.recovered = True  # a member decompressed whole since the last damage (or none yet)
        self.damage: list[Damage] = []

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """`read` into `buffer` (what `io.BufferedReader` calls)."""
        data = self._decompressed(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes, those of one member at most (no buffer of `size` made up front)."""
        return self.readall() if size is None or size < 0 else self._decompressed(size)

    def _decompressed(self, size: int) -> bytes:
        """Up to `size` decompressed bytes (b"" at the end of the stream)."""
        while True:
            if not self.input and not self._read():
                return b""
            if self.searching:
                self._search()
                continue
            try:
                out = self.decompressor.decompress(self.input, size)
            except zlib.error as error:
                self._skip(one_line(error))
                continue
            rest = (
                self.decompressor.unused_data if self.decompressor.eof else self.decompressor.unconsumed_tail
            )
            self.offset += len(self.input) - len(rest)
            self.input = rest
            self.in_member = not self.decompressor.eof
            if self.decompressor.eof:
                self.decompressor = zlib.decompressobj(31)
                self.member_start = self.offset
                self.recovered = True
            if out:
                return out

    def _read(self) -> bool:
        """Read more compressed bytes; False at their end (EOFError inside a member)."""
        self.input = self.raw.read(READ_SIZE)
        if self.input:
            return True
        if self.in_member and not self.searching:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        return False

    def _skip(self, why: str) -> None:
        """The current member does not decompress: note it and look for the next one."""
        if not self.in_member and not self.input.strip(b"\x00"):
            self.offset += len(self.input)  # zero padding after the last member, as gzip allows
            self.input = b""
            return
        if self.recovered:  # one damage however many false headers follow it
            self.damage.append(Damage(self.member_start, why))
        self.recovered = False
        self.offset += 1
        self.input = self.input[1:]  # past this member's own header
        self.searching = True
        self.in_member = False
        self.decompressor = zlib.decompressobj(31)

    def _search(self) -> None:
        """Drop compressed bytes up to the next plausible member header."""
        start = self.input.find(MEMBER_HEADER)
        while start >= 0 and len(self.input) > start + 3 and self.input[start + 3] & RESERVED_FLAGS:
            start = self.input.find(MEMBER_HEADER, start + 1)
        if start < 0:
            keep = len(MEMBER_HEADER)  # a header may straddle two reads
            dropped = max(0, len(self.input) - keep)
            self.offset += dropped
            self.input = self.input[dropped:]
            more = self.raw.read(READ_SIZE)
            if not more:
                self.offset += len(self.input)
                self.input = b""
            self.input += more
            return
        self.offset += start
        self.input = self.input[start:]
        self.member_start = self.offset
        self.searching = False


def members_of(stream: io.IOBase) -> GzipMembers | None:
    """The `GzipMembers` that `stream` is or buffers, if any."""
    if isinstance(stream, io.BufferedReader):
        stream = stream.raw
    return stream if isinstance(stream, GzipMembers) else None


def damage_failures(members: GzipMembers, path: str) -> Iterator[Failure]:
    """One `CorruptGzipMember` failure per member skipped since the last call."""
    while members.damage:
        offset, why = members.damage.pop(0)
        yield Failure(
            f"{path}@gzip:{offset}",
            path,
            READ_STAGE,
            "CorruptGzipMember",
            f"the gzip member at compressed byte {offset:,} does not decompress ({why}); what it held is "
            "lost, the file is read on from the next member",
        )
