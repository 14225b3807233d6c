"""The elements of one JSON array, parsed one at a time from a byte stream (a `.json` input file)."""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from typing import Any

CHUNK = 1 << 20  # bytes read at a time
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_QUOTE_OR_BRACKET = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+(")?', re.DOTALL)  # to a string's closing quote
# (possessive, unrolled: `(?:[^"\\]|\\.)*` kept a backtracking entry a character, 4 GB for 40 MB)
MAX_ELEMENT_CHARS = 64 << 20  # a longer element is not held: TOO_LARGE (as a JSON Lines line)
TOO_DEEP = object()  # yielded in place of an element nested too deeply to parse (passed over)
TOO_LARGE = object()  # yielded in place of an element over MAX_ELEMENT_CHARS (passed over, not held)


class ElementTooLarge(ValueError):
    """An element longer than MAX_ELEMENT_CHARS that is not an array, object or string (which are
    passed over): the array is read no further (memory stays bounded)."""


def json_integer(digits: str) -> int | str:
    """A JSON integer as an int, or as its digits when it is longer than Python converts (4,300
    digits by default, `sys.set_int_max_str_digits`): one such number must not cost its record."""
    try:
        return int(digits)
    except ValueError:
        return digits


class JsonArray:
    """The elements of one JSON array, parsed one at a time from a byte stream.

    Memory is about the largest element held, not the file. A malformed element or array raises
    ValueError after the elements before it were yielded. An element longer than
    MAX_ELEMENT_CHARS is passed over by its brackets and quotes, a read at a time, and yielded as
    TOO_LARGE; one nested too deeply for the parser is passed over the same way and yielded as
    TOO_DEEP; the elements after either are read.
    Bytes that are not UTF-8 are decoded to lone surrogates (`surrogateescape`), which valid JSON
    text never holds, so the caller can fail just the element that has them.
    """

    def __init__(self, handle: io.BufferedIOBase) -> None:
        self.handle = handle
        self.read_some = getattr(handle, "read1", handle.read)  # one read below, at most what is asked
        self.error: Exception | None = None  # what ended the stream, raised once its bytes are parsed
        self.decode = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode
        self.decoder = json.JSONDecoder()
        self.long_numbers_decoder = json.JSONDecoder(parse_int=json_integer)
        self.text = ""
        self.pos = 0
        self.eof = False

    def _read(self, size: int) -> bool:
        """Append the next `size` bytes to the text (dropping what was parsed); False at the end."""
        if self.eof:
            return False
        if len(self.text) - self.pos > MAX_ELEMENT_CHARS:  # only an element's text is held this long
            raise ElementTooLarge(f"an element of over {MAX_ELEMENT_CHARS >> 20} MiB, more than is held")
        data = self._take(size)
        self.eof = not data
        self.text = self.text[self.pos :] + self.decode(data, final=self.eof)
        self.pos = 0
        return not self.eof

    def _take(self, size: int) -> bytes:
        """Up to `size` bytes, read CHUNK at a time. What ends the stream early (a cut-off
        compressed file) is raised on the next call, once the bytes before it are parsed: a
        BufferedReader's read(size) dropped the bytes it had gathered when its next read raised."""
        if self.error is not None:
            raise self.error
        parts: list[bytes] = []
        got = 0
        while got < size:
            try:
                data = self.read_some(min(size - got, CHUNK))
            except Exception as error:  # the reader names it (TruncatedInput, ...)
                if not parts:
                    raise
                self.error = error
                break
            if not data:
                break
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    def _next_char(self) -> str:
        """The next character that is not JSON whitespace ('' at the end), not consumed."""
        while True:
            self.pos = _JSON_SPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._read(CHUNK):
                return ""

    def _element(self) -> tuple[Any, str]:
        """The next value and its JSON text; TOO_LARGE and "" for one over MAX_ELEMENT_CHARS."""
        self._next_char()
        try:
            return self._parsed_element()
        except ElementTooLarge:
            if self.text[self.pos] not in '[{"':
                raise
        self._pass_over("an element too large to hold is never closed")
        return TOO_LARGE, ""

    def _parsed_element(self) -> tuple[Any, str]:
        """The next value and its JSON text, reading more (doubling) until it parses or the stream ends."""
        size = CHUNK
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.eof:  # else a number may go on in the next chunk
                    break
            except json.JSONDecodeError:
                if self.eof:
                    raise
            except RecursionError:
                self._pass_over("an element nested too deeply to parse is never closed")
                return TOO_DEEP, ""
            except ValueError:  # an integer longer than Python converts: read again, kept as digits
                value, end = self.long_numbers_decoder.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.eof:
                    break
            self._read(size)
            size *= 2
        source, self.pos = self.text[self.pos : end], end
        return value, source

    def _pass_over(self, never_closed: str) -> None:
        """Consume one array, object or string by its brackets and quotes, holding a read at a time
        (ValueError `never_closed` where the stream ends first)."""
        depth = 0
        in_string = False
        while True:
            if in_string:
                rest = _STRING_REST.match(self.text, self.pos)
                self.pos = rest.end()
                in_string = rest.group(1) is None
                if not in_string and depth == 0:
                    return
            elif token := _QUOTE_OR_BRACKET.search(self.text, self.pos):
                self.pos = token.end()
                mark = token.group()
                in_string = mark == '"'
                depth += 0 if in_string else 1 if mark in "[{" else -1
                if depth == 0 and not in_string:
                    return
            else:
                self.pos = len(self.text)
            if self.pos == len(self.text) or (in_string and self.pos == len(self.text) - 1):
                if not self._read(CHUNK):  # (a backslash at the end of a read is kept with the next)
                    raise ValueError(never_closed)

    def __iter__(self) -> Iterator[tuple[Any, str]]:
        if self._next_char() != "[":
            raise ValueError("not a JSON array")
        self.pos += 1
        if self._next_char() == "]":
            self.pos += 1
        else:
            while True:
                yield self._element()
                separator = self._next_char()
                self.pos += 1
                if separator == "]":
                    break
                if separator != ",":
                    found = repr(separator) if separator else "the end of the file"
                    raise ValueError(f"expected ',' or ']' after an element, found {found}")
        if self._next_char():
            raise ValueError("extra data after the array")
