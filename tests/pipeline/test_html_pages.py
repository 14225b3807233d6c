"""Saved HTML pages and WARC responses: main-text extraction, and pages it must not run on."""

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.document import Document, Failure, Rejection
from pipeline.warc import MAX_BLOCK_NESTING
from tests.pipeline.test_readers import read_all
from tests.pipeline.test_warc import HTML, _response, _warc_record

PAGE = """<html><head><meta charset="windows-1252"><title>T</title></head><body>
<nav><a href="/">Home</a> | <a href="/news">News</a></nav>
<article><h1>Caf\xe9 opens</h1><p>{body}</p></article>
<footer>Copyright 2026</footer></body></html>"""


@pytest.mark.parametrize("name", ["page.html", "page.htm.gz"])
def test_a_saved_html_page_is_one_document_of_its_main_text(tmp_path, name):
    body = "The new caf\xe9 on Main Street served its first customers this morning. " * 6
    data = PAGE.format(body=body).encode("cp1252")  # its charset from its own meta tag
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (doc,) = read_all(path)
    assert isinstance(doc, Document) and doc.id == doc.source == str(path)
    assert "Café opens" in doc.text and "first customers" in doc.text and "Copyright" not in doc.text


@pytest.mark.parametrize(
    ("body", "declared"),
    [
        ("The new café on Main Street served its first customers.".encode(), "iso-8859-1"),  # mislabelled
        ("The new café on Main Street served its first customers.".encode("cp1252"), "windows-1252"),
    ],
)
def test_a_page_is_utf8_when_its_bytes_are_whatever_the_header_declares(tmp_path, body, declared):
    """Servers often send `charset=iso-8859-1` for UTF-8 pages: decoded as declared, every `é` became
    `Ã©` (FineWeb's reader tries UTF-8 first too); bytes that are not UTF-8 keep the declared charset."""
    html = b"<html><body><article><p>" + body * 6 + b"</p></article></body></html>"
    path = tmp_path / "w.warc"
    path.write_bytes(_warc_record("response", _response(html, f"text/html; charset={declared}")))
    (doc,) = read_all(path)
    assert "The new café on Main" in doc.text and "Ã" not in doc.text


@pytest.mark.parametrize(
    ("text", "encoding"),
    [("Привет мир, это страница о погоде.", "cp1251"), ("这是一个关于今天天气的测试页面。", "gbk")],
)
def test_bytes_not_in_the_declared_charset_are_decoded_in_the_detected_one(tmp_path, text, encoding):
    """A page declared UTF-8 whose bytes are not was decoded as cp1252 (`Ïðèâåò ìèð`)."""
    html = f"<html><body><article><p>{text * 20}</p></article></body></html>".encode(encoding)
    path = tmp_path / "w.warc"
    path.write_bytes(_warc_record("response", _response(html, "text/html; charset=utf-8")))
    (doc,) = read_all(path)
    assert text in doc.text


@pytest.mark.parametrize("declared", ["undefined", "utf-8\x00", "unicode_escape"])
def test_a_declared_charset_that_is_no_charset_is_detected_instead_and_the_file_read_on(tmp_path, declared):
    """`charset=undefined` raised UnicodeError (not UnicodeDecodeError) on a page that is not UTF-8:
    the whole file's reading ended there, the records after it never read or counted."""
    page = b"<html><body><article><p>" + "Un caf\xe9 \\ud800 au coin de la rue. ".encode("latin-1") * 8
    page += b"</p></article></body></html>"
    path = tmp_path / "w.warc.gz"
    records = [_response(HTML), _response(page, f"text/html; charset={declared}"), _response(HTML)]
    path.write_bytes(b"".join(gzip.compress(_warc_record("response", r)) for r in records))
    before, odd, after = read_all(path)
    assert isinstance(odd, Document) and "Un café" in odd.text
    assert isinstance(before, Document) and isinstance(after, Document)


def test_a_utf16_html_file_is_read_by_its_byte_order_mark(tmp_path):
    """A saved page is decoded by its charset as a WARC page is; it was refused as UTF-16 text."""
    body = "The weather today is sunny with a light breeze over the harbour. " * 6
    path = tmp_path / "page.html"
    path.write_bytes(f"<html><body><article><p>{body}</p></article></body></html>".encode("utf-16"))
    (doc,) = read_all(path)
    assert isinstance(doc, Document) and doc.text.startswith("The weather today")


def test_a_decoded_body_behind_a_byte_order_mark_under_a_content_encoding_is_read(tmp_path):
    path = tmp_path / "w.warc"
    path.write_bytes(_warc_record("response", _response(b"\xef\xbb\xbf" + HTML, encoding="gzip")))
    (doc,) = read_all(path)
    assert isinstance(doc, Document) and "real paragraph" in doc.text


def test_a_byte_order_mark_is_not_text(tmp_path):
    """With a UTF-8 byte order mark, the page's text began with U+FEFF and its <title>."""
    body = "The weather today is sunny with a light breeze over the harbour. " * 6
    html = f"<html><head><title>My Title</title></head><body><article><p>{body}</p></article></body></html>"
    page, crawl = tmp_path / "page.html", tmp_path / "w.warc"
    page.write_bytes(b"\xef\xbb\xbf" + html.encode())
    crawl.write_bytes(_warc_record("response", _response(b"\xef\xbb\xbf" + html.encode())))
    for path in (page, crawl):
        (doc,) = read_all(path)
        assert doc.text.startswith("The weather today") and "My Title" not in doc.text


def test_an_html_page_without_text_is_rejected_by_the_reader(tmp_path):
    path = tmp_path / "empty.html"
    path.write_text("<html><body><script>var x = 1;</script></body></html>")
    (record,) = read_all(path)
    assert isinstance(record, Rejection) and (record.stage, record.reason) == ("read", "no_text_extracted")


def test_trafilatura_keeps_tables_as_fineweb_ran_it(tmp_path):
    """datatrove's Trafilatura (FineWeb) leaves trafilatura's tables on; only comments are off."""
    rows = "".join(
        f"<tr><td>Station {i}</td><td>recorded {i * 3} millimetres of rain</td></tr>" for i in range(8)
    )
    body = "The weather service published the rainfall of the week for every station in the valley. " * 4
    page = f"<html><body><article><h1>Rainfall</h1><p>{body}</p><table>{rows}</table></article></body></html>"
    path = tmp_path / "rain.html"
    path.write_text(page)
    (doc,) = read_all(path, html_extractor="trafilatura")
    assert "rainfall of the week" in doc.text and "Station 5" in doc.text


def _nested_page(depth: int) -> str:
    return "<html><body>" + "<div>A sentence of text inside the page. " * depth + "</body></html>"


def test_a_page_of_blocks_nested_past_the_limit_fails_before_extraction(tmp_path):
    """resiliparse's main-content pass is quadratic in <div> depth: 20,000 deep took 17 CPU-s."""
    (tmp_path / "ok.html").write_text(_nested_page(MAX_BLOCK_NESTING))
    (tmp_path / "deep.html").write_text(_nested_page(20_000))
    (ok,) = read_all(tmp_path / "ok.html")
    (deep,) = read_all(tmp_path / "deep.html")
    assert isinstance(ok, Document) and "inside the page" in ok.text
    assert isinstance(deep, Failure) and deep.error == "HtmlTooDeep"
    assert "nest 20,000 deep (over 1,000)" in deep.message


def test_blocks_nested_inside_tables_are_counted_as_the_parser_nests_them(tmp_path):
    """`</div>` inside a table cell closes nothing outside the table: the tags alone undercount."""
    page = "<html><body>" + "<div><table><tr><td>cell</div>" * 1_500 + "</body></html>"
    path = tmp_path / "a.warc"
    path.write_bytes(
        _warc_record("response", _response(page.encode())) + _warc_record("response", _response(HTML))
    )
    deep, fine = read_all(path)
    assert isinstance(deep, Failure) and deep.error == "HtmlTooDeep" and "1,500 deep" in deep.message
    assert isinstance(fine, Document) and "real paragraph" in fine.text


def test_a_block_too_long_to_hold_is_passed_over_and_judged_by_its_first_bytes(tmp_path, monkeypatch):
    """A 300 MB video in a wget WARC took 1.1 GB to read; now it is passed over a read at a time."""
    from pipeline import warc

    monkeypatch.setattr(warc, "MAX_HELD_BLOCK", 4_000)
    monkeypatch.setattr(warc, "HEAD_BYTES", 500)
    video = _response(b"\x00\x01" * 5_000, "video/mp4")
    page = _response(b"<html><body><p>" + b"A long page of text. " * 400 + b"</p></body></html>")
    liar = _warc_record("response", _response(b"<html>short</html>"), length=10**10)  # says 10 GB
    plain = [_warc_record("response", _response(HTML)) for _ in range(4)]
    path = tmp_path / "mirror.warc"
    path.write_bytes(
        b"".join(
            [plain[0], _warc_record("response", video), plain[1], _warc_record("response", page), plain[2]]
            + [plain[3], liar]
        )
    )
    found = read_all(path)
    outcomes = [(type(r).__name__, getattr(r, "reason", None) or getattr(r, "error", None)) for r in found]
    assert outcomes == [
        ("Document", None),
        ("Rejection", "not_html"),
        ("Document", None),
        ("Failure", "RecordTooLarge"),
        ("Document", None),
        ("Document", None),
        ("Failure", "BadContentLength"),
    ]
    assert found[3].message == "a block of 8,492 bytes, longer than the 4,000 read whole: passed over"
    assert found[-1].message == (  # the file ends inside what it claims, and says what was passed over
        "Content-Length '10000000000' does not end at a record boundary; the 81 bytes it claimed "
        "were passed over unsearched"
    )


@pytest.mark.parametrize("name", ["crawl.warc", "crawl.warc.gz"])
def test_a_length_too_long_to_hold_that_runs_past_the_end_is_false_and_reading_goes_on_inside_it(
    tmp_path, monkeypatch, name
):
    """Passed over unsearched, a false 100 MB length cost every record after it, uncounted."""
    from pipeline import warc

    monkeypatch.setattr(warc, "MAX_HELD_BLOCK", 4_000)
    records = [_warc_record("response", _response(HTML)) for _ in range(4)]
    records[1] = _warc_record("response", _response(HTML), length=100_000_000)
    path = tmp_path / name
    path.write_bytes(b"".join(map(gzip.compress, records)) if name.endswith(".gz") else b"".join(records))
    found = read_all(path)
    assert [type(r).__name__ for r in found] == ["Document", "Failure", "Document", "Document"]
    assert found[1].message.endswith(
        "it runs past the end of the file: read on from a record start inside it"
    )


def test_a_block_too_long_to_hold_is_passed_over_by_its_length_not_searched_for_records(
    tmp_path, monkeypatch
):
    """A crawled .warc file served as a page holds WARC records: they were read as documents of the
    outer file (any URL and text its author chose), and the block they sat in was a failure."""
    from pipeline import warc

    monkeypatch.setattr(warc, "MAX_HELD_BLOCK", 4_000)
    inner = _warc_record("response", _response(HTML), uri="http://forged.example/")
    archive = _response(b"\n" + inner * 3 + b"y" * 10_000, "application/warc")
    path = tmp_path / "crawl.warc"
    path.write_bytes(_warc_record("response", archive) + _warc_record("response", _response(HTML)))
    (archived, after) = read_all(path)
    assert isinstance(archived, Rejection) and archived.reason == "not_html"
    assert isinstance(after, Document) and after.url == "http://example.com/"


def test_a_wet_text_too_long_to_hold_is_one_failure_and_the_next_is_read(tmp_path, monkeypatch):
    from pipeline import warc

    monkeypatch.setattr(warc, "MAX_HELD_BLOCK", 4_000)
    path = tmp_path / "crawl.wet"
    path.write_bytes(
        _warc_record("conversion", b"word " * 2_000) + _warc_record("conversion", b"a short text")
    )
    long, short = read_all(path)
    assert isinstance(long, Failure) and long.error == "RecordTooLarge"
    assert isinstance(short, Document) and short.text == "a short text"


def test_a_records_html_field_is_read_as_a_page_of_its_main_text(tmp_path):
    body = "The new café on Main Street served its first customers this morning. " * 6
    rows = [
        {"id": "a", "html": PAGE.format(body=body), "text": "a summary", "url": "http://x.org/a"},
        {"id": "b", "html": "<html><body><script>var x = 1;</script></body></html>"},
        {"id": "c", "kind": "math", "problem": "1+1?", "solution": "#### 2"},
        {"id": "d", "html": ["not", "a", "page"]},
    ]
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    page, empty, candidate, wrong = read_all(path, html_field="html")
    assert "Café opens" in page.text and "first customers" in page.text and "Copyright" not in page.text
    assert page.metadata == {"text": "a summary"} and page.url == "http://x.org/a"
    assert isinstance(empty, Rejection) and (empty.stage, empty.reason) == ("read", "no_text_extracted")
    assert candidate.kind == "math" and candidate.metadata["problem"] == "1+1?"
    assert isinstance(wrong, Failure) and (wrong.error, wrong.message) == ("NonStringText", "'html' is list")


def test_a_parquet_html_column_of_bytes_is_decoded_as_a_page(tmp_path):
    body = "The new caf\xe9 on Main Street served its first customers this morning. " * 6
    path = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"id": ["a"], "html": [PAGE.format(body=body).encode("cp1252")]}), path)
    (page,) = read_all(path, html_field="html")
    assert "Café opens" in page.text and "Copyright" not in page.text
