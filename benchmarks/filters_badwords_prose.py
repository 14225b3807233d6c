"""How much clean prose `c4_badwords` removes, and how much the default recipe's filters remove.

Corpora (../shared/data/quality, skipped when absent): movie reviews, ABC science transcripts,
the Brown corpus and State of the Union addresses, all ordinary edited prose. Prints, per
corpus, the share of documents `c4_badwords` (C4 defaults) rejects and the words that did it.
Usage: python benchmarks/filters_badwords_prose.py [DATA_DIR]
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import common

from filters.c4 import C4BadWords
from pipeline.document import Document

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else common.DATA
CORPORA = {
    "movie_reviews": "quality/movie_reviews.jsonl",
    "abc_news": "quality/abc_news_transcripts.jsonl",
    "brown": "quality/brown_corpus.jsonl",
    "state_union": "quality/state_union.jsonl",
}


def main() -> None:
    if not (DATA / "quality").is_dir():
        print(f"no corpora under {DATA}; nothing to measure")
        return
    stage = C4BadWords("c4_badwords")
    stage.setup()
    total = rejected_total = 0
    for name, rel in CORPORA.items():
        with open(DATA / rel, encoding="utf-8") as handle:
            docs = [
                Document(str(i), json.loads(line)["text"]) for i, line in enumerate(handle) if line.strip()
            ]
        words: Counter = Counter()
        for doc in docs:
            verdict = stage.check(doc)
            if not verdict.keep:
                words[re.search(r"word='(.*)'", verdict.detail).group(1)] += 1
        rejected = sum(words.values())
        total, rejected_total = total + len(docs), rejected_total + rejected
        top = ", ".join(f"{w} {n}" for w, n in words.most_common(3))
        print(
            f"{name:14s} {rejected:5d} / {len(docs):5d} rejected ({100 * rejected / len(docs):5.1f} %)  {top}"
        )
    print(f"{'all':14s} {rejected_total:5d} / {total:5d} rejected ({100 * rejected_total / total:5.1f} %)")


if __name__ == "__main__":
    main()
