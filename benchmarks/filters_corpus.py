"""Real documents from ../shared/data for the filter fidelity and speed benchmarks.

Sources: whole-page texts and main-content extractions of the article-extraction pages, HTML
responses of the WARC samples (text extracted with resiliparse), the cc_net WET sample, cc_net
head documents, mixed-quality snippets, and the prose corpora (Brown, ABC transcripts, movie
reviews, presidential addresses, web text, chat logs, Enron e-mails). Nothing here is copied
into the repository; callers skip cleanly when the folder is absent.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from common import DATA

JSONL_SOURCES = {
    "full_page_text": "web/article_extraction/full_page_text.jsonl",
    "mixed_snippets": "web/mixed_quality_snippets.jsonl",
    "brown": "quality/brown_corpus.jsonl",
    "abc_news": "quality/abc_news_transcripts.jsonl",
    "movie_reviews": "quality/movie_reviews.jsonl",
    "state_union": "quality/state_union.jsonl",
    "inaugural": "quality/inaugural.jsonl",
    "webtext": "quality/webtext.jsonl",
    "nps_chat": "quality/nps_chat_logs.jsonl",
    "enron": "quality/enron1_spam_ham.jsonl.gz",
}


def _jsonl(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _html_text(html: bytes) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    return extract_plain_text(bytes_to_str(html, detect_encoding(html)), main_content=True)


def _warc_docs(path: Path):
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as handle:
        for i, record in enumerate(ArchiveIterator(handle)):
            url = record.rec_headers.get_header("WARC-Target-URI")
            if record.rec_type == "conversion":
                text = record.content_stream().read().decode("utf-8", "replace")
            elif record.rec_type == "response" and record.http_headers is not None:
                if "html" not in (record.http_headers.get_header("Content-Type") or ""):
                    continue
                text = _html_text(record.content_stream().read())
            else:
                continue
            yield {"id": f"{path.name}#{i}", "url": url, "text": text}


def load_corpus(data_dir: Path = DATA) -> list[dict]:
    """Every document as {"id", "source", "url", "text"}; empty when the data folder is absent."""
    docs: list[dict] = []
    if not data_dir.is_dir():
        return docs
    for source, rel in JSONL_SOURCES.items():
        path = data_dir / rel
        if not path.exists():
            continue
        for i, record in enumerate(_jsonl(path)):
            doc_id = record.get("id") or record.get("file") or f"{source}-{i}"
            docs.append(
                {"id": str(doc_id), "source": source, "url": record.get("url"), "text": record["text"]}
            )
    for path in sorted((data_dir / "web").glob("ccnet_head_*.jsonl")):
        for record in _jsonl(path):
            docs.append(
                {"id": record["id"], "source": "ccnet_head", "url": record["id"], "text": record["text"]}
            )
    for path in sorted((data_dir / "web/article_extraction/html").glob("*.html.gz")):
        text = _html_text(gzip.decompress(path.read_bytes()))
        docs.append({"id": path.name, "source": "article_html_extracted", "url": None, "text": text})
    for path in sorted((data_dir / "web/warc").glob("*.warc.gz")) + sorted(
        (data_dir / "web/warc").glob("*.wet")
    ):
        try:
            for record in _warc_docs(path):
                docs.append({**record, "source": "warc"})
        except Exception as error:  # the samples include deliberately broken records
            print(f"warning: {path.name}: stopped reading at {type(error).__name__}: {error}")
    return docs
