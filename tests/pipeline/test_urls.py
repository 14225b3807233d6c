import gzip
import os
from collections import Counter
from pathlib import Path

import pytest

from filters.url import URLFilter
from pipeline.readers import iter_documents
from pipeline.urls import normalize_url
from tests.conftest import write_jsonl

# ../shared/data next to the repository (override with GRISTMILL_SHARED_DATA).
SHARED_DATA = Path(
    os.environ.get("GRISTMILL_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")
)
WGET_WARCS = sorted((SHARED_DATA / "web" / "warc").glob("wget_sample_*.warc.gz"))


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("<https://CreativeCommons.org/mission/>", "https://creativecommons.org/mission/"),
        ("  https://Example.COM:8080/Path?Q=A#F \n", "https://example.com:8080/Path?Q=A#F"),
        ("< http://example.com/a >", "http://example.com/a"),
        ("HTTP://User@Example.com/x", "http://User@example.com/x"),
        ("http://exa\tmple.com/a\nb", "http://example.com/ab"),
        ("http://[::1/", "http://[::1/"),  # urllib cannot split it: kept, not a crash
        ("example.com/page", "example.com/page"),
        ("<>", None),
        ("   ", None),
        (None, None),
        (42, None),
    ],
)
def test_normalize_url(raw, clean):
    assert normalize_url(raw) == clean


def _warc_response(uri: str) -> bytes:
    body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body><p>Hello there, reader.</p></body></html>"
    head = f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body + b"\r\n\r\n"


def blocked(docs) -> Counter:
    stage = URLFilter("url_filter", blocked_domains=["creativecommons.org"])
    stage.setup()
    return Counter(stage.check(doc).reason for doc in docs)


def test_bracketed_warc_uri_and_jsonl_url_are_normalized_before_stages(tmp_path):
    warc = tmp_path / "wget.warc.gz"
    warc.write_bytes(gzip.compress(_warc_response("<https://CreativeCommons.org/about>")))
    jsonl = write_jsonl(
        tmp_path / "a.jsonl", [{"id": "j", "text": "t", "url": " HTTPS://WWW.CreativeCommons.ORG/x "}]
    )
    docs = list(iter_documents([str(warc), str(jsonl)]))
    assert sorted(doc.url for doc in docs) == [
        "https://creativecommons.org/about",
        "https://www.creativecommons.org/x",
    ]
    assert blocked(docs) == {"blocked_domain": 2}


@pytest.mark.skipif(not WGET_WARCS, reason="../shared/data/web/warc (wget sample) not present")
def test_url_filter_blocks_a_domain_in_the_real_wget_warc_sample():
    docs = list(iter_documents([str(path) for path in WGET_WARCS]))
    assert docs and not [doc.url for doc in docs if doc.url is None or doc.url.startswith("<")]
    assert blocked(docs)["blocked_domain"] == sum("//creativecommons.org/" in doc.url for doc in docs) > 0
