"""What a file's first bytes say about reading it: compressed though its name says plain, or
UTF-16/UTF-32 text where UTF-8 is read. Such a file is one failure for the whole file (its
exception's name is the error) instead of a failure per line of bytes no reader can use."""

from __future__ import annotations

import codecs
import io
import os
import re

# How compressed files start (codec, the suffix that reads it): a plain-named file starting so is
# refused. bzip2's "BZh" is text, so its level digit and first block (or end) marker are matched too.
COMPRESSED_MAGIC = {
    re.compile(rb"\x1f\x8b"): ("gzip", ".gz"),
    re.compile(rb"\x28\xb5\x2f\xfd"): ("zstd", ".zst"),
    re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)"): ("bzip2", ".bz2"),
    re.compile(rb"\xfd7zXZ\x00"): ("xz", ".xz"),
}
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


WHOLE_FILE_ERRORS = (CompressedInput.__name__, WideTextInput.__name__)


def refuse_wide_text(head: bytes) -> None:
    """Raise WideTextInput when `head`, the first bytes of a file's text (decompressed), starts
    with a UTF-16 or UTF-32 byte-order mark."""
    wide = [encoding for bom, encoding in WIDE_TEXT_BOMS.items() if head.startswith(bom)]
    if wide:
        raise WideTextInput(
            f"the file is {wide[0]} text (its byte-order mark says so) and gristmill reads UTF-8: "
            f"convert it, e.g. `iconv -f {wide[0]} -t UTF-8`; nothing of it was read"
        )


def refuse_unreadable(handle: io.IOBase, path: str) -> None:
    """Raise CompressedInput when the file's first bytes say it is compressed though its name does
    not, WideTextInput when they are a UTF-16 or UTF-32 byte-order mark; `handle` (the file's raw
    bytes) is left at its start."""
    head = handle.read(10)
    handle.seek(0)
    refuse_wide_text(head)
    found = [known for magic, known in COMPRESSED_MAGIC.items() if magic.match(head)]
    if not found:
        return
    codec, suffix = found[0]
    raise CompressedInput(
        f"the file is {codec}-compressed but its name does not say so: rename it to "
        f"{os.path.basename(path)}{suffix}; nothing of it was read"
    )
