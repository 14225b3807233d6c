"""What a flipped byte in a kept shard's text pages does, read with and without page CRC checks.

    .venv/bin/python benchmarks/page_checksums.py [--docs 300] [--flips 400]

One kept shard of real prose (ABC transcripts, Brown, movie reviews from ../shared/data), written
by gristmill's shard writer (zstd, every page with a CRC). `--flips` bytes spread evenly over the
text column's pages of the first row group are flipped one at a time, and the row group is read
back: unchecked (`page_checksum_verification=False`) and checked. Each read either fails, gives
the same texts, or gives other texts without any error (silent damage).
"""

from __future__ import annotations

import io
import json
from collections import Counter

import pyarrow.parquet as pq
from common import DATA, arguments, skipped

from pipeline.document import Document
from pipeline.writers import encode_shard, kept_row

SOURCES = ("abc_news_transcripts", "brown_corpus", "movie_reviews")


def prose(docs: int) -> list[str]:
    texts = []
    for name in SOURCES:
        with open(DATA / "quality" / f"{name}.jsonl", encoding="utf-8") as handle:
            texts += [json.loads(line)["text"] for line in handle]
    return texts[:: max(1, len(texts) // docs)][:docs]


def outcome(data: bytes, expected: list[str], verify: bool) -> str:
    try:
        parquet = pq.ParquetFile(io.BytesIO(data), page_checksum_verification=verify)
        texts = parquet.read_row_group(0, columns=["text"]).column("text").to_pylist()
    except Exception:  # a damaged page fails in many ways (thrift, zstd, UTF-8, CRC)
        return "error"
    return "same texts" if texts == expected else "other texts, no error"


def main() -> None:
    parser = arguments(__doc__, docs=300)
    parser.add_argument("--flips", type=int, default=400, help="bytes flipped, one at a time")
    args = parser.parse_args()
    if skipped(DATA / "quality"):
        return
    rows = [kept_row(Document(f"d{i:05d}", text)) for i, text in enumerate(prose(args.docs))]
    shard = encode_shard("kept", rows, "zstd", 32.0)
    parquet = pq.ParquetFile(io.BytesIO(shard))
    expected = parquet.read_row_group(0, columns=["text"]).column("text").to_pylist()
    text = parquet.metadata.row_group(0).column(parquet.schema_arrow.get_field_index("text"))
    start = text.dictionary_page_offset or text.data_page_offset
    step = max(1, text.total_compressed_size // args.flips)
    tally = {False: Counter(), True: Counter()}
    for offset in range(start, start + text.total_compressed_size, step):
        damaged = bytearray(shard)
        damaged[offset] ^= 0xFF
        for verify in (False, True):
            tally[verify][outcome(bytes(damaged), expected, verify)] += 1
    print(
        f"{len(rows)} documents, shard {len(shard):,} bytes, text pages {text.total_compressed_size:,} bytes"
    )
    for verify, counts in tally.items():
        print(f"{'checked  ' if verify else 'unchecked'}: {dict(counts)}")


if __name__ == "__main__":
    main()
