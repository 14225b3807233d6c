"""The WARC and WET reader (pipeline/warc.py) through `read_split`: records, bodies, damage, speed."""

import gzip
import time
import zlib

import pytest

from pipeline.document import Document, Rejection
from tests.pipeline.test_readers import read_all


def _warc_record(warc_type: str, block: bytes, length: int | None = None, uri="http://example.com/") -> bytes:
    head = (
        f"WARC/1.0\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\n"
        f"WARC-Record-ID: <urn:uuid:{abs(hash(block)) % 10**8}>\r\n"
        f"Content-Length: {len(block) if length is None else length}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


HTML = (
    b"<html><body><article><h1>Title</h1><p>"
    + b"A real paragraph of article text. " * 20
    + b"</p></article></body></html>"
)


def _response(body: bytes, content_type: str = "text/html; charset=utf-8", encoding: str = "") -> bytes:
    header = f"Content-Encoding: {encoding}\r\n" if encoding else ""
    return f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{header}\r\n".encode() + body


def test_warc_html_extracted_and_non_html_rejected(tmp_path):
    path = tmp_path / "a.warc.gz"
    data = (
        _warc_record("warcinfo", b"software: test\r\n")
        + _warc_record("response", _response(HTML))
        + _warc_record("response", _response(b"\x89PNG...", "image/png"))
    )
    path.write_bytes(gzip.compress(data))
    records = read_all(path)
    docs = [r for r in records if isinstance(r, Document)]
    rejected = [r for r in records if isinstance(r, Rejection)]
    assert len(docs) == 1 and "real paragraph" in docs[0].text and docs[0].url == "http://example.com/"
    assert [r.reason for r in rejected] == ["not_html"]


def test_warc_trafilatura_extractor(tmp_path):
    path = tmp_path / "a.warc"
    path.write_bytes(_warc_record("response", _response(HTML)))
    (doc,) = read_all(path, html_extractor="trafilatura")
    assert "real paragraph" in doc.text


def test_warc_bodies_in_every_common_content_encoding_are_decoded(tmp_path):
    import brotli
    import zstandard

    zstd = zstandard.ZstdCompressor().compress
    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    bodies = [
        (gzip.compress(HTML), "gzip"),
        (zlib.compress(HTML), "deflate"),
        (deflate.compress(HTML) + deflate.flush(), "deflate"),  # raw deflate, as some servers send it
        (brotli.compress(HTML), "br"),
        (zstd(HTML), "zstd"),
        (brotli.compress(gzip.compress(HTML)), "gzip, br"),  # applied in order, undone last first
        (HTML, "br"),  # stored decoded under the header the server sent
        (HTML, "identity"),
    ]
    path = tmp_path / "enc.warc"
    path.write_bytes(
        b"".join(_warc_record("response", _response(body, encoding=enc)) for body, enc in bodies)
    )
    records = read_all(path)
    assert [type(r).__name__ for r in records] == ["Document"] * len(bodies)
    assert all(r.text.startswith("Title\n\nA real paragraph of article text.") for r in records)


def test_chunked_bodies_are_dechunked_and_one_stored_dechunked_is_read_as_it_is(tmp_path):
    """A body stored de-chunked under its `Transfer-Encoding: chunked` header was read as empty
    (`no_text_extracted`, "0 bytes of HTML") or failed on its first line as a chunk size."""

    def chunked(body: bytes, line_end: bytes = b"\r\n") -> bytes:
        halves = (body[:100], body[100:])
        return (
            b"".join(b"%x;ext=1%s%s%s" % (len(h), line_end, h, line_end) for h in halves)
            + b"0"
            + line_end * 2
        )

    bodies = [
        (chunked(HTML), ""),
        (chunked(HTML, b"\n"), ""),
        (chunked(gzip.compress(HTML)), "Content-Encoding: gzip\r\n"),
        (HTML, ""),
        (b"\r\n" + HTML, ""),
        (chunked(HTML)[:112] + b"zz\r\n" + HTML, ""),  # damaged after its first chunk
    ]
    head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n{}\r\n"
    path = tmp_path / "chunked.warc"
    path.write_bytes(b"".join(_warc_record("response", head.format(h).encode() + b) for b, h in bodies))
    *docs, damaged = read_all(path)
    assert all(doc.text.startswith("Title\n\nA real paragraph of article text.") for doc in docs)
    assert len(docs) == 5 and damaged.error == "BadHttpEncoding"
    assert damaged.message == "chunked body: no chunk size at byte 112"


def test_a_warc_body_that_cannot_be_decoded_is_a_failure_not_garbage_text(tmp_path):
    import brotli

    bomb = gzip.compress(b"<p>" + b" " * (65 << 20))
    path = tmp_path / "bad.warc"
    import zstandard

    bodies = [(b"\x00\x01garbage" * 50, "br"), (b"\x1f\x8b" + b"x" * 50, "compress"), (bomb, "gzip")]
    compressors = {"gzip": gzip.compress, "br": brotli.compress, "zstd": zstandard.ZstdCompressor().compress}
    bodies += [(compress(HTML)[:-8], name) for name, compress in compressors.items()]  # cut short
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(HTML)
    bodies.append((unsized[:-8], "zstd"))  # no declared size to compare with: told by its frame
    bodies.append((brotli.compress(HTML), "br"))
    path.write_bytes(
        b"".join(_warc_record("response", _response(body, encoding=enc)) for body, enc in bodies)
    )
    records = read_all(path)
    assert [type(r).__name__ for r in records] == ["Failure"] * 7 + ["Document"]
    assert {r.error for r in records[:7]} == {"BadHttpEncoding"}
    assert "br body does not decode" in records[0].message
    assert "Content-Encoding 'compress' is not one gristmill decodes" in records[1].message
    assert "gzip body decodes to over 64 MiB" in records[2].message
    for record, name in zip(records[3:6], compressors):
        assert (
            record.message == f"{name} body does not decode: the body ends before its compressed stream does"
        )


@pytest.mark.parametrize("name", ["bad.wet", "bad.wet.gz"])
def test_warc_wrong_content_length_is_one_failure_and_the_rest_is_read(tmp_path, name):
    path = tmp_path / name
    records = [
        _warc_record("conversion", b"first text"),
        _warc_record("conversion", b"second text is longer", length=5),
        _warc_record("conversion", b"third text", length=500),
        _warc_record("conversion", b"fourth text"),
    ]
    # As Common Crawl writes them, one gzip member per record: a record start spans two reads.
    path.write_bytes(b"".join(map(gzip.compress, records)) if name.endswith(".gz") else b"".join(records))
    records = read_all(path)
    assert [type(r).__name__ for r in records] == ["Document", "Failure", "Failure", "Document"]
    assert records[1].error == "BadContentLength" and records[1].id.startswith(f"{path}@")
    assert [r.text for r in records if isinstance(r, Document)] == ["first text", "fourth text"]


@pytest.mark.parametrize("cut", [1, 2, 4])
def test_a_last_record_whose_closing_line_ends_are_cut_off_is_read(tmp_path, cut):
    """Its block is whole: it was a BadContentLength failure."""
    path = tmp_path / "cut.wet"
    path.write_bytes((_warc_record("conversion", b"first") + _warc_record("conversion", b"last"))[:-cut])
    assert [r.text for r in read_all(path)] == ["first", "last"]


def test_a_last_record_whose_block_is_cut_short_is_still_a_failure(tmp_path):
    path = tmp_path / "short.wet"
    path.write_bytes((_warc_record("conversion", b"first") + _warc_record("conversion", b"last"))[:-5])
    records = read_all(path)
    assert [type(r).__name__ for r in records] == ["Document", "Failure"]
    assert records[1].error == "BadContentLength"


def test_a_wet_file_whose_headers_end_in_crlf_and_texts_hold_no_blank_line_reads_in_linear_time(tmp_path):
    """Common Crawl's WET layout. Each record's header search looked for LF LF, found only in a
    later record or nowhere, and so scanned the rest of the file: 8,000 records took 193 CPU-s."""
    lines = "\n".join(f"line {i} of a page of text without blank lines" for i in range(40)).encode()
    path = tmp_path / "crawl.warc.wet.gz"
    path.write_bytes(gzip.compress(b"".join(_warc_record("conversion", lines) for _ in range(6_000))))
    started = time.process_time()
    records = read_all(path)
    assert time.process_time() - started < 10
    assert len(records) == 6_000 and all(r.text == lines.decode() for r in records)


@pytest.mark.parametrize("blank_line", [b"\r\n\r\n", b"\n\n", b"\r\n\n", b"\n\r\n"])
def test_a_warc_header_block_ends_at_its_first_blank_line_however_the_lines_end(tmp_path, blank_line):
    head = b"WARC/1.0\r\nWARC-Type: conversion\nWARC-Record-ID: <urn:x>\r\nContent-Length: 9"
    path = tmp_path / "a.wet"
    path.write_bytes(head + blank_line + b"some text\r\n\r\n" + _warc_record("conversion", b"next"))
    records = read_all(path)
    assert [r.text for r in records] == ["some text", "next"] and records[0].id == "urn:x"


def test_records_after_a_long_stretch_that_is_not_warc_are_read(tmp_path):
    """The search for the next record start stopped after 64 MiB, and the records beyond were lost
    without a word; now it passes over any length, holding a read at a time."""
    junk = b"a line that is not part of any record\n" * (70 << 20 >> 5)
    path = tmp_path / "long.warc.gz"
    path.write_bytes(gzip.compress(junk + _warc_record("conversion", b"the record after it")))
    failure, record = read_all(path)
    assert failure.error == "BadWarcRecord"
    assert failure.message == f"{len(junk) - 1:,} bytes without a WARC header"
    assert record.text == "the record after it"


def test_a_warc_read_as_wet_says_its_pages_are_passed_over(tmp_path):
    """`--input-format wet` on a WARC file (or a WARC named .wet) read 0 documents, exit 0, silently."""
    path = tmp_path / "crawl.wet"
    path.write_bytes(b"".join(_warc_record("response", _response(HTML)) for _ in range(3)))
    (told,) = read_all(path)
    assert (told.error, told.id) == ("PagesInWet", f"{path}@0")
    assert "read the file as WARC" in told.message


def test_a_record_the_reader_raises_on_fails_alone_and_the_file_is_read_on(tmp_path, monkeypatch):
    from pipeline import warc

    def extract(html, content_type, extractor):
        if b"poison" in html:
            raise RuntimeError("an extractor bug")
        return "some text"

    monkeypatch.setattr(warc, "extract_html_text", extract)
    path = tmp_path / "a.warc.gz"
    pages = [HTML, b"<html>poison</html>", HTML, HTML]
    path.write_bytes(b"".join(gzip.compress(_warc_record("response", _response(page))) for page in pages))
    records = read_all(path)
    assert [type(r).__name__ for r in records] == ["Document", "Failure", "Document", "Document"]
    assert (records[1].error, records[1].message) == ("RuntimeError", "an extractor bug")
    assert records[1].id.startswith("urn:uuid:")
