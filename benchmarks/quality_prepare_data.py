"""Build the training sets of the shipped quality models from ../shared/data (deterministic).

    python benchmarks/quality_prepare_data.py [--data DIR] [--output benchmarks/out/quality_data]

Writes OUTPUT/positive/*.jsonl and OUTPUT/negative/*.jsonl (fields id, text), then train with
`gristmill train-quality --positive 'OUTPUT/positive/*.jsonl' --negative 'OUTPUT/negative/*.jsonl' ...`
(exact commands in quality_models/models/*/README.md). Long texts are cut into ~3,000-character
chunks at line boundaries so both classes look like web documents of similar length; each source is
capped (seeded sample) so positives and negatives are roughly balanced and no genre dominates.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
from common import arguments

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "out" / "quality_data"
CHUNK_CHARS = 3000
SEED = 0


_DETACHED = re.compile(r" +([,.!?;:)]|n't|'s\b)|(\() +")


def detokenize(text: str) -> str:
    """Re-attach punctuation in pre-tokenized text ("price , now ." -> "price, now.").

    Enron-Spam is tokenized that way while no positive source is, so without this a model learns
    "detached punctuation = spam" and then rejects every tokenized corpus (movie reviews, too).
    """
    return _DETACHED.sub(lambda m: m.group(1) or m.group(2), text)


def read_jsonl(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """Consecutive pieces of about `size` characters, cut at line ends; a short tail is dropped."""
    piece: list[str] = []
    length = 0
    for line in text.splitlines(keepends=True):
        piece.append(line)
        length += len(line)
        if length >= size:
            yield "".join(piece).strip()
            piece, length = [], 0
    if length >= size // 3:
        yield "".join(piece).strip()


def groups(texts: list[str], n: int, sep: str = "\n") -> Iterator[str]:
    """Join consecutive short messages into documents of `n` messages."""
    for start in range(0, len(texts) - n + 1, n):
        yield sep.join(texts[start : start + n])


def sample(texts: Iterable[str], cap: int, seed: int = SEED) -> list[str]:
    """At most `cap` texts, a seeded sample kept in input order; texts under 200 characters dropped."""
    texts = [t for t in texts if len(t.strip()) >= 200]
    if len(texts) <= cap:
        return texts
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), cap, replace=False))
    return [texts[i] for i in keep]


def positives(data: Path) -> dict[str, list[str]]:
    quality = data / "quality"
    brown = [c for r in read_jsonl(quality / "brown_corpus.jsonl") for c in chunks(r["text"])]
    speeches = [
        c
        for name in ("state_union.jsonl", "inaugural.jsonl")
        for r in read_jsonl(quality / name)
        for c in chunks(r["text"])
    ]
    news = [r["text"] for r in read_jsonl(quality / "abc_news_transcripts.jsonl")]
    truth = json.loads(
        (data / "web" / "article_extraction" / "ground-truth.json").read_text(encoding="utf-8")
    )
    articles = [truth[key]["articleBody"] for key in sorted(truth)]
    return {
        "brown_prose": sample(brown, 1100),
        "presidential_speeches": sample(speeches, 450),
        "abc_news": sample(news, 1100),
        "web_articles_main_text": sample(articles, 400),
    }


def negatives(data: Path) -> dict[str, list[str]]:
    quality = data / "quality"
    enron = [
        detokenize(r["text"])
        for r in read_jsonl(quality / "enron1_spam_ham.jsonl.gz")
        if r["label"] == "spam"
    ]
    with (quality / "sms_spam_collection.tsv").open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE) if len(row) == 2][
            1:
        ]
    sms_spam = [text for label, text in rows if label == "spam"]
    sms_ham = [text for label, text in rows if label == "ham"]
    chat = [r["text"] for r in read_jsonl(quality / "nps_chat_logs.jsonl")]
    pages = [r["text"] for r in read_jsonl(data / "web" / "article_extraction" / "full_page_text.jsonl")]
    informal = [c for r in read_jsonl(quality / "webtext.jsonl") for c in sample(chunks(r["text"]), 80)]
    foreign = [
        text
        for path in sorted((data / "langid" / "sentences").glob("*.txt"))
        if path.stem != "en"
        for text in list(groups(path.read_text(encoding="utf-8").splitlines(), 12, " "))[:4]
    ]
    return {
        "enron_spam": sample(enron, 1000),
        "sms_spam": sample(groups(sms_spam, 4), 400),
        "sms_chat": sample(groups(sms_ham, 10), 300),
        "chat_logs": sample(chat, 300),
        "full_pages_with_boilerplate": sample(pages, 400),
        "informal_webtext": sample(informal, 500),
        "non_english": sample(foreign, 300),
    }


def write(folder: Path, sets: dict[str, list[str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, texts in sets.items():
        with (folder / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for i, text in enumerate(texts):
                handle.write(json.dumps({"id": f"{name}-{i}", "text": text}, ensure_ascii=False) + "\n")
        print(f"{folder.name}/{name}.jsonl: {len(texts)}")


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"skipped: data folder {args.data} not found")
        return 0
    write(args.output / "positive", positives(args.data))
    write(args.output / "negative", negatives(args.data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
