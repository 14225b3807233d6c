"""Main-text extraction of saved HTML pages (`html` input format) against human-checked text.

    python benchmarks/html_extraction.py [--data ../shared/data]

Reads every page of web/article_extraction/html/ (181 news and blog pages, gzipped) as gristmill
reads an `--input 'html/*.html.gz'`, once per extractor, and compares the text with the page's
`articleBody` in ground-truth.json: precision, recall and F1 of the words (lowercased `\\w+`
tokens, counted with multiplicity), the mean over pages, and CPU-seconds per page.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter

from common import arguments

from pipeline.document import Document
from pipeline.readers import InputConfig, expand_paths, plan_splits, read_split

WORD = re.compile(r"\w+")


def words(text: str) -> Counter:
    return Counter(WORD.findall(text.lower()))


def scores(extracted: str, truth: str) -> tuple[float, float, float]:
    got, want = words(extracted), words(truth)
    common = sum((got & want).values())
    precision = common / max(1, sum(got.values()))
    recall = common / max(1, sum(want.values()))
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-12)


def main() -> None:
    args = arguments(__doc__, data=True).parse_args()
    folder = args.data / "web" / "article_extraction"
    truth = json.loads((folder / "ground-truth.json").read_text())
    print("| extractor | pages read | precision | recall | F1 | CPU-ms per page |")
    print("|---|---|---|---|---|---|")
    for extractor in ("resiliparse", "trafilatura"):
        config = InputConfig((str(folder / "html" / "*.html.gz"),), html_extractor=extractor)
        figures, started = [], time.process_time()
        for path in expand_paths(config.paths):
            (record,) = [r for split in plan_splits(path, config) for r in read_split(split, config)]
            key = path.rsplit("/", 1)[-1].split(".")[0]  # the page's key in ground-truth.json
            text = record.text if isinstance(record, Document) else ""
            figures.append(scores(text, truth[key]["articleBody"]))
        per_page = (time.process_time() - started) / len(figures) * 1000
        mean = [sum(column) / len(figures) for column in zip(*figures)]
        print(
            f"| {extractor} | {len(figures)} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | {per_page:.1f} |"
        )


if __name__ == "__main__":
    main()
