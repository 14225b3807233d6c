"""Saved HTML pages and WARC responses: main-text extraction, and pages it must not run on."""

import gzip

import pytest

from pipeline.document import Document, Failure, Rejection
from pipeline.warc import MAX_BLOCK_NESTING
from tests.pipeline.test_readers import HTML, _response, _warc_record, read_all

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
