"""The WARC reader (pipeline/warc.py, hand-written) against warcio on the shared WARC/WET files.

Per file: documents and failures from gristmill's reader, response/conversion records warcio
iterates (or the error it stops at), and CPU seconds for each over `--repeat` passes. Decides
whether the reader should use warcio (the figures are in benchmarks/results/reliability.md).
A last row reads a WET file written in Common Crawl's layout (CR LF header lines, texts with no
blank line, one gzip member per record) from the Brown corpus's texts, `--wet-records` records.
Usage: python benchmarks/readers_warc.py [--data DIR] [--repeat N] [--wet-records N]; skips when
DIR is absent.
"""

from __future__ import annotations

import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path

from common import arguments

from pipeline.document import Document, Failure
from pipeline.readers import InputConfig, plan_splits, read_split
from pipeline.warc import extract_html_text


def ours(path: Path) -> tuple[int, int]:
    config = InputConfig(paths=(str(path),))
    docs = failures = 0
    for split in plan_splits(str(path), config):
        for record in read_split(split, config):
            docs += isinstance(record, Document)
            failures += isinstance(record, Failure)
    return docs, failures


def theirs(path: Path) -> tuple[int, str]:
    """warcio's records, with the same text extraction as ours for HTML responses (fair CPU)."""
    from warcio.archiveiterator import ArchiveIterator

    records = 0
    try:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type not in ("response", "conversion"):
                    continue
                payload = record.content_stream().read()
                content_type = (record.http_headers and record.http_headers.get_header("Content-Type")) or ""
                if "html" in content_type.lower():
                    extract_html_text(payload, content_type, "resiliparse")
                records += 1
    except Exception as error:
        return records, f"stopped: {type(error).__name__}"
    return records, "complete"


def write_crawl_wet(texts_path: Path, records: int, path: Path) -> None:
    """`records` WET conversion records as Common Crawl writes them, texts from a JSON Lines file."""
    with texts_path.open() as handle:
        texts = [json.loads(line)["text"] for line in handle]
    with path.open("wb") as out:
        for number, text in zip(range(records), itertools.cycle(texts)):
            body = "\n".join(line for line in text.splitlines() if line.strip()).encode()
            head = (
                f"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: http://example.com/{number}\r\n"
                f"WARC-Record-ID: <urn:uuid:{number:08d}>\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            )
            out.write(gzip.compress(head.encode() + body + b"\r\n\r\n", compresslevel=1))


def cpu(function, path: Path, repeat: int):
    started = time.process_time()
    for _ in range(repeat):
        result = function(path)
    return result, (time.process_time() - started) / repeat


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wet-records", type=int, default=20_000)
    args = parser.parse_args()
    files = sorted((args.data / "web" / "warc").glob("*.warc*"))
    if not files:
        print(f"no WARC files under {args.data}/web/warc; nothing to measure")
        return
    with tempfile.TemporaryDirectory() as folder:
        crawl_wet = Path(folder) / "crawl_layout.warc.wet.gz"
        write_crawl_wet(args.data / "quality" / "brown_corpus.jsonl", args.wet_records, crawl_wet)
        ours(files[0])  # imports, outside the timings
        print("file | gristmill docs / failures | CPU s | warcio records | warcio | CPU s")
        for path in [*files, crawl_wet]:
            (docs, failures), our_s = cpu(ours, path, args.repeat)
            (records, status), their_s = cpu(theirs, path, args.repeat)
            print(f"{path.name} | {docs} / {failures} | {our_s:.3f} | {records} | {status} | {their_s:.3f}")


if __name__ == "__main__":
    main()
