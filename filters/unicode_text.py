"""Unicode normalization shared by the filters that match words (`toxicity`, `decontaminate`)."""

from __future__ import annotations

import unicodedata

# Invisible format characters (category Cf) that text carries inside words: the soft hyphen of
# `&shy;` hyphenation, zero-width spaces and (non-)joiners, word joiners, bidirectional marks and
# a byte-order mark. Kept, they split a word in two for a tokenizer that keeps letters: 43 % of
# MATH test problems hyphenated with soft hyphens escaped `decontaminate`, and `fu\u200bcking`
# escaped toxicity's word lists.
INVISIBLE = dict.fromkeys(
    [
        0xAD,
        0x61C,
        0x180E,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x2070),
        0xFEFF,
    ]
)


def folded(text: str) -> str:
    """`text` NFKC-normalized (full-width and compatibility forms), casefolded, without its
    invisible format characters."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text).translate(INVISIBLE).casefold()
