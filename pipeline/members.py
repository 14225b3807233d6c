"""A multi-member gzip, bzip2 or xz stream that reads on past a corrupt member.

WARC files are gzipped one record per member (Common Crawl's hold ~40,000); JSON Lines joined
with `cat`, or written by bgzip, pbzip2 or a parallel xz, hold many members (streams) too, so one
damaged member need not cost the rest of the file. `CompressedMembers` decompresses member by
member; where a member does not decompress it notes the damage, looks for the next member header
in the compressed bytes and goes on from there. The search starts just after the failed member's
header, not where the failure showed: a false gzip header in damaged bytes can take up to 64 KiB
after it as its "extra field" (FEXTRA), and a member cut short takes the members after it as its
own data, before either fails. A member's output is held until its check (CRC) passes, up to
4 MiB (a longer member streams), so a damaged member gives no garbage to the reader. A stream cut
short inside a member gives what decompressed before the cut, then raises EOFError, as `gzip`
does, unless a member header follows that member's own. (Python's `BZ2File` and `LZMAFile` end
quietly at a member that does not start to decompress: everything after it was lost unsaid.)
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from pipeline.document import READ_STAGE, Failure, one_line

READ_SIZE = 1 << 16  # compressed bytes per read: the rest after a member is copied once per member
STEP_OUTPUT = 1 << 20  # decompressed bytes per step at most
HELD_BYTES = 4 << 20  # a member's output is held until its check passes, up to this; then streamed
RESCAN_BYTES = 1 << 20  # compressed bytes kept to search again for a header after a member fails


class Damage(NamedTuple):
    """Compressed bytes skipped: where they start and why."""

    offset: int
    message: str


class Codec(NamedTuple):
    """What `CompressedMembers` needs of a compression format."""

    label: str  # in a failure's id (`file@gzip:offset`) and message
    unit: str  # what the format calls a member: "member", "stream"
    error: str  # the failure's error class
    magic: bytes  # how every member starts
    header_size: int  # bytes from the magic on that `plausible` looks at
    plausible: Callable[[bytes, int], bool]  # a header at this index, as far as the bytes show
    decompressor: Callable[[], Any]  # with bz2's interface: decompress, eof, unused_data, needs_input
    errors: tuple[type[Exception], ...]


class _Inflate:
    """zlib's gzip decompressor with bz2's interface (it keeps the input it has not consumed)."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(31)
        self._tail = b""

    def decompress(self, data: bytes, max_length: int) -> bytes:
        out = self._zlib.decompress(self._tail + data if self._tail else data, max_length)
        self._tail = self._zlib.unconsumed_tail
        return out

    @property
    def eof(self) -> bool:
        return self._zlib.eof

    @property
    def unused_data(self) -> bytes:
        return self._zlib.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._tail


def _gzip_header(data: bytes, at: int) -> bool:
    return len(data) <= at + 3 or not data[at + 3] & 0xE0  # reserved flag bits clear (RFC 1952)


BZIP2_LEVELS = (b"", *(bytes([d]) for d in b"123456789"))  # the block size digit (or not read yet)


def _bzip2_header(data: bytes, at: int) -> bool:
    """`BZh`, a block size digit, then a block's or the stream end's 48-bit magic."""
    level, block = data[at + 3 : at + 4], data[at + 4 : at + 10]
    return level in BZIP2_LEVELS and (
        b"1AY&SY".startswith(block) or b"\x17\x72\x45\x38\x50\x90".startswith(block)
    )


def _xz_header(data: bytes, at: int) -> bool:
    """The stream flags (a null byte, a known check type) and their CRC32."""
    flags, crc = data[at + 6 : at + 8], data[at + 8 : at + 12]
    if flags[:1] not in (b"", b"\x00") or flags[1:2] not in (b"", b"\x00", b"\x01", b"\x04", b"\x0a"):
        return False
    return len(crc) < 4 or zlib.crc32(flags) == int.from_bytes(crc, "little")


GZIP = Codec("gzip", "member", "CorruptGzipMember", b"\x1f\x8b\x08", 4, _gzip_header, _Inflate, (zlib.error,))
BZIP2 = Codec(
    "bzip2", "stream", "CorruptBzip2Stream", b"BZh", 10, _bzip2_header, bz2.BZ2Decompressor, (OSError,)
)
XZ = Codec(
    "xz",
    "stream",
    "CorruptXzStream",
    b"\xfd7zXZ\x00",
    12,
    _xz_header,
    lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ),
    (lzma.LZMAError,),
)


PADDING = b"\x00\t\n\r "  # before or after a member, never its first byte


class CompressedMembers(io.RawIOBase):
    """The decompressed bytes of a `codec` stream, member by member; `damage` lists what was
    skipped (`damage_failures` takes it)."""

    def __init__(self, raw: io.IOBase, codec: Codec) -> None:
        self.raw = raw
        self.codec = codec
        self.input = b""  # compressed bytes not yet given to the decompressor
        self.offset = 0  # compressed offset of input[0]
        self.member_start = 0  # compressed offset of the current member's header
        self.decompressor = codec.decompressor()
        self.in_member = False  # the current member has had input
        self.searching = False  # skipping compressed bytes up to the next member header
        self.recovered = True  # a member decompressed whole since the last damage (or none yet)
        self.damage: list[Damage] = []
        self.recent: deque[bytes] = deque()  # the last reads, RESCAN_BYTES or more; input ends them
        self.recent_start = 0  # compressed offset of recent[0]
        self.recent_size = 0
        self.held: list[bytes] = []  # the current member's output, given out when it ends whole
        self.held_size = 0
        self.ready = b""  # output that may be read, from ready_at on
        self.ready_at = 0
        self.cut_short: str | None = None  # why the stream ended inside a member, once ready is read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """`read` into `buffer` (what `io.BufferedReader` calls)."""
        data = self._decompressed(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (no buffer of `size` made up front)."""
        return self.readall() if size is None or size < 0 else self._decompressed(size)

    def _decompressed(self, size: int) -> bytes:
        """Up to `size` decompressed bytes (b"" at the end of the stream)."""
        while self.ready_at >= len(self.ready):
            if self.cut_short is not None:
                raise EOFError(self.cut_short)
            if not self._step():
                return b""
        if self.ready_at == 0 and size >= len(self.ready):
            out = self.ready  # not copied: a whole member, as a WARC reader's read takes it
        else:
            out = self.ready[self.ready_at : self.ready_at + size]
        self.ready_at += len(out)
        return out

    def _step(self) -> bool:
        """Decompress or search the next compressed bytes; False at the end of the stream."""
        if not self.input and (self.searching or self.decompressor.needs_input):
            self.input = self._raw_read()
            if not self.input:
                return self._at_end()
        if self.searching:
            self._search()
            return True
        if not self.in_member and self.input and self.input[0] in PADDING:
            self._pass_padding()  # between or after members: xz's stream padding, a line end
            return True
        try:
            out = self.decompressor.decompress(self.input, STEP_OUTPUT)
        except self.codec.errors as error:
            self._skip(one_line(error))
            return True
        rest = self.decompressor.unused_data if self.decompressor.eof else b""
        self.offset += len(self.input) - len(rest)
        self.input = rest
        self.in_member = not self.decompressor.eof
        self.held.append(out)
        self.held_size += len(out)
        if self.decompressor.eof:
            self.decompressor = self.codec.decompressor()
            self.member_start = self.offset
            self.recovered = True
            self._give_out_held()
        elif self.held_size >= HELD_BYTES:
            self._give_out_held()
            self.held_size = HELD_BYTES  # the rest of this member streams
        return True

    def _pass_padding(self) -> None:
        """Drop the null bytes and whitespace before a member, which never starts with them (no
        data lost, so no damage: a line end after the last member was a cut-off member before)."""
        kept = self.input.lstrip(PADDING)
        self.offset += len(self.input) - len(kept)
        self.input = kept
        self.member_start = self.offset

    def _give_out_held(self) -> None:
        """What the current member decompressed so far may be read."""
        self.ready = b"".join(self.held)
        self.ready_at = 0
        self.held = []
        self.held_size = 0

    def _at_end(self) -> bool:
        """The compressed bytes are done: False, unless they end inside a member. Then the member
        was cut short: what it decompressed is read and EOFError follows, or, where a member header
        follows its own, it is damage and the stream goes on from there."""
        if not self.in_member or self.searching:
            return False
        why = "Compressed file ended before the end-of-stream marker was reached"
        start, rest = self._recent_from(self.member_start + 1)
        if next_header(self.codec, rest) < 0:
            self._give_out_held()
            self.cut_short = why
        else:
            self._fail_member(why)
            self._search_from(start, rest)
        return True

    def _raw_read(self) -> bytes:
        """The next compressed bytes, also kept in `recent`."""
        data = self.raw.read(READ_SIZE)
        self.recent.append(data)
        self.recent_size += len(data)
        while len(self.recent) > 2 and self.recent_size - len(self.recent[0]) >= RESCAN_BYTES:
            dropped = self.recent.popleft()
            self.recent_start += len(dropped)
            self.recent_size -= len(dropped)
        return data

    def _recent_from(self, start: int) -> tuple[int, bytes]:
        """The compressed bytes read from offset `start` (or the oldest kept) on, and their offset."""
        start = max(start, self.recent_start)
        position = self.recent_start
        parts = []
        for data in self.recent:
            if position + len(data) > start:
                parts.append(data[max(0, start - position) :])
            position += len(data)
        return start, b"".join(parts)

    def _skip(self, why: str) -> None:
        """The current member does not decompress: note it and look for the next one."""
        self._fail_member(why)
        self._search_from(*self._recent_from(self.member_start + 1))  # past this member's own header

    def _fail_member(self, why: str) -> None:
        """The current member does not decompress: what it gave is dropped unread where it was held
        (unchecked by its CRC, it may be garbage); one damage however many false headers follow."""
        self.held = []
        self.held_size = 0
        if self.recovered:
            self.damage.append(Damage(self.member_start, why))
        self.recovered = False

    def _search_from(self, offset: int, data: bytes) -> None:
        """Look for the next member header in `data` (at compressed `offset`) and on."""
        self.offset = offset
        self.input = data
        self.searching = True
        self.in_member = False
        self.decompressor = self.codec.decompressor()

    def _search(self) -> None:
        """Drop compressed bytes up to the next plausible member header."""
        start = next_header(self.codec, self.input)
        if start < 0:
            keep = self.codec.header_size - 1  # a header may straddle two reads
            dropped = max(0, len(self.input) - keep)
            self.offset += dropped
            self.input = self.input[dropped:]
            more = self._raw_read()
            if not more:
                self.offset += len(self.input)
                self.input = b""
            self.input += more
            return
        self.offset += start
        self.input = self.input[start:]
        self.member_start = self.offset
        self.searching = False


def next_header(codec: Codec, data: bytes) -> int:
    """Where the first plausible member header in `data` starts (-1 if none)."""
    start = data.find(codec.magic)
    while start >= 0 and not codec.plausible(data, start):
        start = data.find(codec.magic, start + 1)
    return start


def members_of(stream: io.IOBase) -> CompressedMembers | None:
    """The `CompressedMembers` that `stream` is or buffers, if any."""
    if isinstance(stream, io.BufferedReader):
        stream = stream.raw
    return stream if isinstance(stream, CompressedMembers) else None


def damage_failures(members: CompressedMembers, path: str) -> Iterator[Failure]:
    """One failure (`CorruptGzipMember`, ...) per member skipped since the last call."""
    codec = members.codec
    while members.damage:
        offset, why = members.damage.pop(0)
        yield Failure(
            f"{path}@{codec.label}:{offset}",
            path,
            READ_STAGE,
            codec.error,
            f"the {codec.label} {codec.unit} at compressed byte {offset:,} does not decompress ({why}); "
            f"what it held is lost, the file is read on from the next {codec.unit}",
        )
