"""WARC and WET records as documents: HTML responses reduced to their main text, WET conversions as is.

Reads one decompressed stream record by record through a forward-only buffer, and resynchronizes
on the next `WARC/` header when a record's Content-Length does not end at a record boundary (a
`failed` record names it; the records around it are read). Non-document records (warcinfo,
request, metadata, revisit) are skipped; a response that is not HTML is a `read` rejection.
"""

from __future__ import annotations

import codecs
import io
import re
import zlib
from collections.abc import Iterator

from pipeline.document import READ_STAGE, Document, Failure, Record, Rejection, one_line
from pipeline.members import damage_failures, members_of
from pipeline.urls import normalize_url
from pipeline.zstd_frames import FrameWalker

WARC_MAGIC = b"WARC/"
RECORD_START = b"\nWARC/"
HEAD_END = re.compile(rb"\n\r?\n")  # a blank line ends a header block: LF LF, CR LF CR LF, LF CR LF
READ_CHUNK = 1 << 20
MAX_DECODED_BYTES = 64 << 20  # an HTTP body decoding to more is a failure, not a page
MAX_HELD_BLOCK = 64 << 20  # a longer record block (a video in a wget WARC) is passed over, not held
HEAD_BYTES = 64 << 10  # what is kept of a block passed over: its HTTP headers and first bytes
CUT_SHORT = "the body ends before its compressed stream does"
# resiliparse's main-content pass takes time quadratic in <div>/<article> nesting (10,000 deep:
# 4.4 CPU-s, 20,000: 17); real pages nest tens deep, browsers stop nesting at 512.
MAX_BLOCK_NESTING = 1_000
BLOCK_START_TAG = re.compile(r"<(?:div|article)\b", re.IGNORECASE)


class HtmlTooDeep(ValueError):
    """A page whose block elements nest deeper than MAX_BLOCK_NESTING."""


class _Buffer:
    """A forward-only byte buffer over a stream, with look-ahead for resynchronizing."""

    def __init__(self, stream: io.BufferedIOBase) -> None:
        self.stream = stream
        self.data = b""
        self.pos = 0  # position in `data`
        self.base = 0  # stream offset of data[0]
        self.eof = False
        self.error: Exception | None = None  # why the stream broke off, if it did
        self.skipped: bytearray | None = None  # what `skip` held aside, from a record start
        self.skipped_at = -1  # and the stream offset where that starts

    def fill(self, needed: int) -> bool:
        """Make `needed` bytes available from `pos`; False at end of stream. Reads are joined once
        (a gzip member stream gives one record per read)."""
        have = len(self.data) - self.pos
        if have >= needed or self.eof:
            return have >= needed
        chunks = [self.data[self.pos :]]
        while have < needed:
            try:
                chunk = self.stream.read(max(READ_CHUNK, needed - have))
            except (OSError, EOFError, zlib.error) as error:  # cut short or corrupt: what came is read
                self.error, chunk = error, b""
            if not chunk:
                self.eof = True
                break
            chunks.append(chunk)
            have += len(chunk)
        self.data = b"".join(chunks)
        self.base += self.pos
        self.pos = 0
        return have >= needed

    def header_end(self, limit: int = 64 << 20) -> tuple[int, int]:
        """Where the first blank line ends the header block at pos (relative to pos) and that line's
        length, reading ahead as far as it needs, up to `limit` bytes, searching each byte once;
        (-1, 0) when none does."""
        searched = 0
        while True:
            end, terminator = _head_end(self.data, self.pos, self.pos + max(0, searched - 2))
            if end >= 0:
                return end - self.pos, terminator
            if self.eof or searched > limit:
                return -1, 0
            searched = len(self.data) - self.pos
            self.fill(searched + READ_CHUNK)

    def skip(self, count: int) -> bool:
        """Drop the next `count` bytes, a read at a time; False where the stream ends first. The
        bytes from the first record start (`\nWARC/`) among them, up to MAX_HELD_BLOCK, are held
        aside: where the stream ends inside them the length was false, and `resume_in_skipped`
        reads on from that record start (a record start across two reads is not seen)."""
        self.skipped, self.skipped_at = None, -1
        while count > 0:
            if self.pos == len(self.data) and not self.fill(1):
                return False
            step = min(count, len(self.data) - self.pos)
            if self.skipped is None:
                found = self.data.find(RECORD_START, self.pos, self.pos + step)
                if found >= 0:
                    self.skipped, self.skipped_at = (
                        bytearray(self.data[found : self.pos + step]),
                        self.base + found,
                    )
            elif len(self.skipped) < MAX_HELD_BLOCK:
                self.skipped += self.data[self.pos : self.pos + step]
            self.pos += step
            count -= step
        return True

    def resume_in_skipped(self) -> bool:
        """After a `skip` that the stream ended: read on from the first record start it held
        aside; False when it held none."""
        if self.skipped is None:
            return False
        self.data, self.pos, self.base = bytes(self.skipped), 0, self.skipped_at
        self.skipped = None
        return True

    def pass_over_to_next_record(self) -> bool:
        """Drop bytes up to the next record start (`\nWARC/`), however far, holding a read at a
        time; False when the stream ends first."""
        while True:
            available = len(self.data) - self.pos
            if available < len(RECORD_START) and not self.eof:
                self.fill(available + 1)  # a record start across two reads is searched whole
                continue
            if available == 0:
                return False
            found = self.data.find(RECORD_START, self.pos)
            if found >= 0:
                self.pos = found
                return True
            self.pos += available if self.eof else available - len(RECORD_START) + 1

    def take(self, count: int) -> bytes:
        self.fill(count)
        out = self.data[self.pos : self.pos + count]
        self.pos += len(out)
        return out

    def offset(self) -> int:
        return self.base + self.pos


def _head_end(data: bytes, start: int = 0, search_from: int | None = None) -> tuple[int, int]:
    """Index where the header block at `start` ends and the length of its terminator, the first
    blank line (LF LF, CR LF CR LF or LF CR LF); (-1, 0) when it does not end in `data`.
    `search_from`: where to look from, when the bytes before it are known to hold no blank line."""
    match = HEAD_END.search(data, start if search_from is None else search_from)
    if match is None:
        return -1, 0
    end = match.start()
    if match.end() - end == 3 and end > start and data[end - 1] == ord("\r"):
        return end - 1, 4
    return end, match.end() - end


def _parse_headers(block: bytes) -> dict[str, str]:
    headers = {}
    for line in block.split(b"\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().decode("latin-1").lower()] = value.strip().decode("latin-1")
    return headers


def read_warc(stream: io.BufferedIOBase, path: str, fmt: str, html_extractor: str) -> Iterator[Record]:
    """WARC response (HTML → main text) or WET conversion records of one decompressed stream;
    survives bad Content-Length and corrupt gzip members (`CompressedMembers`), and keeps the records
    before a point where the stream broke off."""
    buffer = _Buffer(stream)
    members = members_of(stream)
    for record in _warc_records(buffer, path, fmt, html_extractor):
        yield record
        if members is not None and members.damage:
            yield from damage_failures(members, path)
    if buffer.error is not None:
        where = f"{path}@{buffer.offset()}"
        yield Failure(where, path, READ_STAGE, "TruncatedInput", one_line(buffer.error))
    if members is not None:
        yield from damage_failures(members, path)


def _warc_records(buffer: _Buffer, path: str, fmt: str, html_extractor: str) -> Iterator[Record]:
    pages_told = False  # whether the response records of a file read as WET were reported
    while True:
        buffer.fill(len(WARC_MAGIC))
        if buffer.pos >= len(buffer.data) and buffer.eof:
            return
        start = buffer.offset()
        header_end, terminator = buffer.header_end()
        if not buffer.data.startswith(WARC_MAGIC, buffer.pos) or header_end < 0:
            if buffer.eof and not buffer.data[buffer.pos :].strip():
                return  # line ends after the last record
            found = buffer.pass_over_to_next_record()
            if found or buffer.error is None:  # else TruncatedInput says it
                skipped = f"{buffer.offset() - start:,} bytes without a WARC header"
                yield Failure(f"{path}@{start}", path, READ_STAGE, "BadWarcRecord", skipped)
            if not found:
                return
            buffer.take(1)
            continue
        headers = _parse_headers(buffer.take(header_end))
        buffer.take(terminator)
        try:
            length = int(headers.get("content-length", ""))
        except ValueError:
            length = -1
        head = None  # the first bytes of a block too long to hold, passed over
        resumed = False  # whether reading went on inside it (its length ran past the end)
        if length > MAX_HELD_BLOCK:
            buffer.fill(HEAD_BYTES)
            head = buffer.data[buffer.pos : buffer.pos + HEAD_BYTES]
            # passed over by its length, unsearched: a block may hold WARC records (a crawled .warc)
            claimed = buffer.offset()
            length = 0 if buffer.skip(length) else -1
            passed = buffer.offset() - claimed
            resumed = length < 0 and buffer.resume_in_skipped()  # the length ran past the end: false
        # A record is well formed when its block is followed by two line ends and the next record,
        # or ends the file (the last record's closing line ends are sometimes cut off).
        well_formed = False
        if length >= 0:
            buffer.fill(length + 4 + len(WARC_MAGIC))
            after = buffer.data[buffer.pos + length : buffer.pos + length + 4 + len(WARC_MAGIC)]
            rest = after.lstrip(b"\r\n")
            gap = len(after) - len(rest)
            block_held = buffer.pos + length <= len(buffer.data)
            ends_file = block_held and not rest and buffer.eof
            well_formed = ends_file or (gap >= 2 and rest.startswith(WARC_MAGIC))
        if not well_formed:
            why = f"Content-Length {headers.get('content-length')!r} does not end at a record boundary"
            if resumed:
                why += "; it runs past the end of the file: read on from a record start inside it"
            elif head is not None:  # the records those bytes held are lost: said, whatever the type
                why += f"; the {passed:,} bytes it claimed were passed over unsearched"
            found = buffer.pass_over_to_next_record()
            if not found and buffer.error is not None:
                return  # the record runs into where the stream broke off: TruncatedInput says so
            if head is not None or _is_document_record(headers, fmt):
                yield Failure(f"{path}@{start}", path, READ_STAGE, "BadContentLength", why)
            if not found:
                return
            buffer.take(1)
            continue
        block = buffer.take(length) if head is None else head
        buffer.take(gap)
        if fmt == "wet" and not pages_told and headers.get("warc-type") == "response":
            pages_told = True  # else a WARC read as WET was read whole and gave nothing, silently
            why = (
                "a WARC response record in a file read as WET: its pages are passed over; read the "
                "file as WARC (name it .warc.gz or pass --input-format warc)"
            )
            yield Failure(f"{path}@{start}", path, READ_STAGE, "PagesInWet", why)
        try:
            record = _warc_block_to_record(headers, block, path, start, fmt, html_extractor, head is None)
        except Exception as error:  # a page no rule foresaw fails alone; the file is read on
            doc_id = _record_id(headers, path, start)
            record = Failure(doc_id, path, READ_STAGE, type(error).__name__, one_line(error))
        if record is not None:
            yield record


def _record_id(headers: dict[str, str], path: str, offset: int) -> str:
    return headers.get("warc-record-id", "").strip("<>") or f"{path}@{offset}"


def _is_document_record(headers: dict[str, str], fmt: str) -> bool:
    """Conversion records (WET) and response records (WARC) are documents; the rest are not."""
    return headers.get("warc-type", "") in (("conversion",) if fmt == "wet" else ("conversion", "response"))


def _warc_block_to_record(
    headers: dict[str, str], block: bytes, path: str, offset: int, fmt: str, html_extractor: str, whole: bool
) -> Record | None:
    """A document, rejection or failure from a record's block (only its first bytes when not
    `whole`: enough to tell HTML from the rest); None for records that are not documents."""
    warc_type = headers.get("warc-type", "")
    url = normalize_url(headers.get("warc-target-uri"))
    doc_id = _record_id(headers, path, offset)
    metadata = {"warc_date": headers.get("warc-date"), "warc_offset": offset}
    if not _is_document_record(headers, fmt):
        return None  # warcinfo, request, metadata, revisit: not documents
    if warc_type == "conversion":
        if not whole:
            return _too_large(doc_id, path, headers)
        text = block.decode("utf-8", errors="replace")
        return Document(doc_id, text, source=path, url=url, metadata=metadata)
    status_end, terminator = _head_end(block)
    if status_end < 0:
        return Failure(doc_id, path, READ_STAGE, "BadHttpResponse", "no end of HTTP headers")
    http_headers = _parse_headers(block[:status_end])
    payload = block[status_end + terminator :]
    content_type = http_headers.get("content-type", "").lower()
    doc = Document(doc_id, "", source=path, url=url, metadata=metadata)
    if "html" not in content_type and not payload.lstrip()[:15].lower().startswith(
        (b"<!doctype html", b"<html")
    ):
        return Rejection(doc, READ_STAGE, "not_html", f"content-type={content_type or 'none'}")
    if not whole:
        return _too_large(doc_id, path, headers)
    try:
        payload = _decode_transfer(payload, http_headers)
    except (zlib.error, ValueError, EOFError, OSError) as error:
        return Failure(doc_id, path, READ_STAGE, "BadHttpEncoding", one_line(error))
    return page_record(doc, payload, content_type, html_extractor)


def page_record(doc: Document, html: bytes | str, content_type: str, extractor: str) -> Record:
    """`doc` with the main text of its HTML page (bytes as served, or text); `no_text_extracted`
    when the page has none, `HtmlTooDeep` when its blocks nest too deep to extract."""
    try:
        text = extract_html_text(html, content_type, extractor)
    except HtmlTooDeep as error:
        return Failure(doc.id, doc.source, READ_STAGE, "HtmlTooDeep", str(error))
    if not text.strip():
        size = len(html if isinstance(html, bytes) else html.encode("utf-8", "surrogatepass"))
        return Rejection(doc, READ_STAGE, "no_text_extracted", f"{size} bytes of HTML")
    return doc.with_text(text)


def _too_large(doc_id: str, path: str, headers: dict[str, str]) -> Failure:
    length = int(headers["content-length"])
    why = f"a block of {length:,} bytes, longer than the {MAX_HELD_BLOCK:,} read whole: passed over"
    return Failure(doc_id, path, READ_STAGE, "RecordTooLarge", why)


def _decode_transfer(payload: bytes, http_headers: dict[str, str]) -> bytes:
    """The body as the server meant it: de-chunked, then every Content-Encoding undone (last first)."""
    if "chunked" in http_headers.get("transfer-encoding", "").lower():
        payload = _dechunk(payload)
    encodings = [e.strip() for e in http_headers.get("content-encoding", "").lower().split(",")]
    for encoding in reversed([e for e in encodings if e not in ("", "identity")]):
        if encoding not in CONTENT_DECODERS:
            raise ValueError(
                f"Content-Encoding {encoding!r} is not one gristmill decodes ({', '.join(CONTENT_DECODERS)})"
            )
        try:
            payload = CONTENT_DECODERS[encoding](payload)
        except Exception as error:  # each codec raises its own error type
            # crawlers often store the decoded body, header unchanged (maybe behind a byte order mark)
            if payload.lstrip().removeprefix(codecs.BOM_UTF8).lstrip()[:1] == b"<":
                continue
            raise ValueError(f"{encoding} body does not decode: {one_line(error)}") from None
        if len(payload) > MAX_DECODED_BYTES:
            raise ValueError(f"{encoding} body decodes to over {MAX_DECODED_BYTES >> 20} MiB")
    return payload


def _inflate(payload: bytes) -> bytes:
    """gzip or zlib (header detected), else raw deflate, as servers send `deflate` both ways."""
    try:
        return _whole(zlib.decompressobj(47), payload)
    except zlib.error:
        return _whole(zlib.decompressobj(-zlib.MAX_WBITS), payload)


def _whole(decompressor, payload: bytes) -> bytes:
    out = decompressor.decompress(payload, MAX_DECODED_BYTES + 1)
    if not decompressor.eof and not decompressor.unconsumed_tail:
        raise ValueError(CUT_SHORT)
    return out


def _unbrotli(payload: bytes) -> bytes:
    import brotli

    decompressor = brotli.Decompressor()
    out = decompressor.process(payload, output_buffer_limit=MAX_DECODED_BYTES + 1)
    if not decompressor.is_finished() and len(out) <= MAX_DECODED_BYTES:
        raise ValueError(CUT_SHORT)
    return out


def _unzstd(payload: bytes) -> bytes:
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(payload), read_across_frames=True)
    out = reader.read(MAX_DECODED_BYTES + 1)
    frames = FrameWalker()
    frames.feed(payload)
    if not frames.between_frames() and len(out) <= MAX_DECODED_BYTES:
        raise ValueError(CUT_SHORT)
    return out


# Decoders of HTTP Content-Encoding; each stops past MAX_DECODED_BYTES (a decompression bomb).
CONTENT_DECODERS = {
    "gzip": _inflate,
    "x-gzip": _inflate,
    "deflate": _inflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}


# A chunk's size line: hex digits, maybe extensions, CRLF (or LF, as some servers and crawlers write).
CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


def _dechunk(payload: bytes) -> bytes:
    """The body without its chunked transfer coding. A body that does not begin with a chunk size
    is taken as stored de-chunked (crawlers often store it so, the header unchanged: it was read
    as empty, or failed)."""
    if not CHUNK_SIZE.match(payload):
        return payload
    out, pos = bytearray(), 0
    while pos < len(payload):
        size_line = CHUNK_SIZE.match(payload, pos)
        if size_line is None:
            raise ValueError(f"chunked body: no chunk size at byte {pos:,}")
        size = int(size_line.group(1), 16)
        if size == 0:
            break
        out += payload[size_line.end() : size_line.end() + size]
        pos = size_line.end() + size
        if payload.startswith(b"\r\n", pos):
            pos += 2
        elif payload.startswith(b"\n", pos):
            pos += 1
    return bytes(out)


def extract_html_text(html: bytes | str, content_type: str, extractor: str) -> str:
    """Main text of an HTML page (bytes, or text already decoded) with resiliparse (fast) or
    trafilatura (recipe choice)."""
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    try:  # bytes that are valid UTF-8 are UTF-8 whatever a header says (as FineWeb's reader decodes)
        markup = html if isinstance(html, str) else html.decode("utf-8")
    except UnicodeDecodeError:
        charset = content_type.partition("charset=")[2].split(";")[0].strip() or detect_encoding(html)
        try:  # bytes that are not in the declared charset (often "utf-8") were decoded as cp1252
            html.decode(charset).encode("utf-8")
        except (UnicodeError, ValueError):  # not in it, or no charset ("undefined", "unicode_escape")
            charset = detect_encoding(html)
        except LookupError:  # a name Python does not know: resiliparse may
            pass
        try:
            markup = bytes_to_str(html, charset)
        except (LookupError, ValueError):
            markup = bytes_to_str(html, detect_encoding(html))
    markup = markup.removeprefix("\ufeff")  # a byte order mark, else text before the <html> tag
    if extractor == "trafilatura":
        import trafilatura

        # FineWeb's settings (datatrove's Trafilatura) but `deduplicate`, which drops a passage once
        # the process has seen it a few times: the text would depend on which pages came before.
        return trafilatura.extract(markup, favor_precision=True, include_comments=False) or ""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(markup)
    if len(BLOCK_START_TAG.findall(markup)) > MAX_BLOCK_NESTING:  # only then can they nest that deep
        depth = _block_nesting(tree)
        if depth > MAX_BLOCK_NESTING:
            raise HtmlTooDeep(
                f"<div>/<article> elements nest {depth:,} deep (over {MAX_BLOCK_NESTING:,}); "
                "main-content extraction would take time quadratic in that depth"
            )
    return extract_plain_text(tree, main_content=True)


def _block_nesting(tree) -> int:
    """The deepest nesting of <div>/<article> elements in a parsed page (one walk of its nodes)."""
    from resiliparse.parse.html import NodeType

    deepest = 0
    pending = [(tree.document, 0)]
    while pending:
        node, depth = pending.pop()
        if node.type == NodeType.ELEMENT and node.tag in ("div", "article"):
            depth += 1
            deepest = max(deepest, depth)
        child = node.first_child
        while child is not None:
            pending.append((child, depth))
            child = child.next
    return deepest
