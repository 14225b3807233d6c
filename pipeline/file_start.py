"""What a file's first bytes say about reading it: compressed though its name says plain, or
UTF-16/UTF-32 text where UTF-8 is read. Such a file is one failure for the whole file (its
exception's name is the error) instead of a failure per line of bytes no reader can use."""

from __future__ import annotations

import codecs
import io
import os
import re

from pipeline.members import BZIP2, GZIP, XZ
from pipeline.zstd_frames import ZSTD_MAGIC, starts_skippable_frame

# How compressed files start (codec, the suffix that reads it): a plain-named file starting so is
# refused. bzip2's "BZh" is text, so its level digit and first block (or end) marker are matched too.
COMPRESSED_MAGIC = {
    re.compile(rb"\x1f\x8b"): ("gzip", ".gz"),
    re.compile(rb"\x28\xb5\x2f\xfd"): ("zstd", ".zst"),
    re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)"): ("bzip2", ".bz2"),
    re.compile(rb"\xfd7zXZ\x00"): ("xz", ".xz"),
}
TEXT_PROBE_BYTES = 512  # read of a file named compressed whose start is not its codec's: is it text?
# How a file of each codec starts (a zstd file may start with a skippable frame instead).
CODEC_START = {codec.label: codec.magic for codec in (GZIP, BZIP2, XZ)} | {"zstd": ZSTD_MAGIC}
# Byte-order marks of UTF-32 and UTF-16 (UTF-32 first: its little-endian mark starts with UTF-16's).
WIDE_TEXT_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


class UnreadableFile(ValueError):
    """A file whose first bytes show that none of it can be read as its name says: `read_split`
    makes it the file's one failure (error: the subclass's name)."""


class CompressedInput(UnreadableFile):
    """A file whose first bytes say it is compressed though its name does not."""


class WideTextInput(UnreadableFile):
    """A UTF-16 or UTF-32 text file (Windows PowerShell's `>` writes UTF-16): every line of it
    failed as invalid UTF-8 or malformed JSON."""


class NotCompressed(UnreadableFile):
    """A file whose name says it is compressed (`.gz`, `.zst`, ...) and whose first bytes are text,
    or another codec's: its bytes were searched for compressed members."""


WHOLE_FILE_ERRORS = (CompressedInput.__name__, WideTextInput.__name__, NotCompressed.__name__)


def refuse_wide_text(head: bytes) -> None:
    """Raise WideTextInput when `head`, the first bytes of a file's text (decompressed), starts
    with a UTF-16 or UTF-32 byte-order mark."""
    wide = [encoding for bom, encoding in WIDE_TEXT_BOMS.items() if head.startswith(bom)]
    if wide:
        raise WideTextInput(
            f"the file is {wide[0]} text (its byte-order mark says so) and gristmill reads UTF-8: "
            f"convert it, e.g. `iconv -f {wide[0]} -t UTF-8`; nothing of it was read"
        )


def refuse_unreadable(handle: io.IOBase, path: str, wide_text_ok: bool = False) -> None:
    """Raise CompressedInput when the file's first bytes say it is compressed though its name does
    not, WideTextInput when they are a UTF-16 or UTF-32 byte-order mark (unless `wide_text_ok`);
    `handle` (the file's raw bytes) is left at its start."""
    head = handle.read(10)
    handle.seek(0)
    if not wide_text_ok:
        refuse_wide_text(head)
    found = [known for magic, known in COMPRESSED_MAGIC.items() if magic.match(head)]
    if not found:
        return
    codec, suffix = found[0]
    raise CompressedInput(
        f"the file is {codec}-compressed but its name does not say so: rename it to "
        f"{os.path.basename(path)}{suffix}; nothing of it was read"
    )


def _is_text(head: bytes) -> bool:
    """Whether a file's first bytes are UTF-8 text (a cut last character allowed) without control
    characters but tabs and line ends."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:
            return False
        text = head[: error.start].decode("utf-8")
    return all(character >= " " or character in "\t\n\r" for character in text)


def refuse_not_compressed(handle: io.IOBase, path: str, compression: str) -> None:
    """Raise NotCompressed when a file named `compression`-compressed starts as text or as another
    codec's file (one damaged or padded at its start is the member reader's to recover); `handle`
    (the file's raw bytes) is left at its start."""
    head = handle.read(TEXT_PROBE_BYTES)
    handle.seek(0)
    start = CODEC_START[compression]
    # a file cut inside that start (or empty) is the decompressor's to report (TruncatedInput)
    if (
        head.startswith(start)
        or start.startswith(head)
        or (compression == "zstd" and starts_skippable_frame(head))
    ):
        return
    found = [(codec, suffix) for magic, (codec, suffix) in COMPRESSED_MAGIC.items() if magic.match(head)]
    if not found and not _is_text(head):  # damaged or padded at its start: read from the next member
        return
    name = os.path.basename(path)
    stem = os.path.splitext(name)[0]
    actually, suffix = (f"{found[0][0]}-compressed", found[0][1]) if found else ("not compressed", "")
    raise NotCompressed(
        f"the file's name says {compression} but its first bytes say it is {actually}: rename it to "
        f"{stem}{suffix}; nothing of it was read"
    )
