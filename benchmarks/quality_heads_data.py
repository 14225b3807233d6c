"""Derive the training and held-out data of the embedding_quality heads from ../shared/data.

    python benchmarks/quality_prepare_data.py --output benchmarks/out/quality_data
    python benchmarks/quality_heads_data.py [--data DIR] [--quality-data benchmarks/out/quality_data]
        [--output benchmarks/out/quality_heads]

Writes OUTPUT/<head>.jsonl with fields text, target, source, split ("train" or "heldout"; held-out
rows come from sources the head is not trained on). Deterministic (seeded). Labels:
- informative: quality_prepare_data's positives (edited prose, news, article main text, speeches)
  = 1 and negatives (spam, chat, boilerplate pages, informal web text, non-English) = 0; held out:
  the presidential speeches and SMS chat.
- coherent (self-supervised): ~1,500-character passages of real prose = 1; the same passages with
  sentences shuffled, cut at both ends, or interleaved with another passage's sentences = 0 (one
  corruption per passage, in turn). Train: Brown, ABC transcripts; held out: State of the Union,
  inaugural speeches, article main text.
- depth (graded 0-3): Brown genre (learned/scientific 3; government, lore, hobbies, religion,
  belles-lettres 2; press and fiction 1), chat and spam 0. Held out: ABC science (2) vs rural (1).
- toxic: the `toxicity` stage's verdict with its defaults (word lists and learned model:
  rejected = 1) on Enron spam/ham, SMS, Brown, ABC. Held out: NPS chat, movie reviews, webtext.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator
from pathlib import Path

from common import arguments
from quality_prepare_data import read_jsonl

from quality_models import coherence

ROOT = Path(__file__).resolve().parent
SEED = 0
PASSAGE_CHARS = 1500
HEADS = ["informative", "coherent", "depth", "toxic"]
DEPTH = {"cj": 3, "ch": 2, "cf": 2, "ce": 2, "cd": 2, "cg": 2}  # other Brown genres: 1


def passages(text: str, size: int = PASSAGE_CHARS) -> Iterator[str]:
    """Consecutive runs of whole sentences of about `size` characters (a short tail is dropped)."""
    piece: list[str] = []
    length = 0
    for sentence in coherence.sentences(" ".join(text.split())):
        piece.append(sentence)
        length += len(sentence) + 1
        if length >= size:
            yield " ".join(piece)
            piece, length = [], 0


def row(text: str, target: float, source: str, split: str) -> dict:
    return {"text": text, "target": target, "source": source, "split": split}


def informative(quality_data: Path) -> list[dict]:
    heldout = {"presidential_speeches", "sms_chat"}
    rows = []
    for target, folder in ((1.0, "positive"), (0.0, "negative")):
        for path in sorted((quality_data / folder).glob("*.jsonl")):
            split = "heldout" if path.stem in heldout else "train"
            rows += [row(r["text"], target, path.stem, split) for r in read_jsonl(path)]
    return rows


def coherent(data: Path, rng: random.Random) -> list[dict]:
    q = data / "quality"
    sources = {
        "brown": ("train", [r["text"] for r in read_jsonl(q / "brown_corpus.jsonl")]),
        "abc": ("train", [r["text"] for r in read_jsonl(q / "abc_news_transcripts.jsonl")]),
        "state_union": ("heldout", [r["text"] for r in read_jsonl(q / "state_union.jsonl")]),
        "inaugural": ("heldout", [r["text"] for r in read_jsonl(q / "inaugural.jsonl")]),
        "article_main_text": (
            "heldout",
            list(json.loads((data / "web/article_extraction/ground-truth.json").read_text()).values()),
        ),
    }
    rows = []
    for source, (split, texts) in sources.items():
        texts = [t["articleBody"] if isinstance(t, dict) else t for t in texts]
        found = [p for text in texts for p in passages(text) if len(coherence.sentences(p)) >= 4]
        rng.shuffle(found)
        found = found[:1500]
        for i, passage in enumerate(found):
            rows.append(row(passage, 1.0, source, split))
            kind = ("shuffled", "truncated", "interleaved")[i % 3]
            if kind == "shuffled":
                bad = coherence.shuffled(passage, rng)
            elif kind == "truncated":
                bad = coherence.truncated(passage, rng)
            else:
                bad = coherence.interleaved(passage, found[(i + 1) % len(found)], rng)
            rows.append(row(bad, 0.0, f"{source}:{kind}", split))
    return rows


def depth(data: Path, quality_data: Path, rng: random.Random) -> list[dict]:
    q = data / "quality"
    rows = []
    for record in read_jsonl(q / "brown_corpus.jsonl"):
        grade = float(DEPTH.get(record["genre"], 1))
        rows += [
            row(p, grade, f"brown:{record['genre']}", "train")
            for p in list(passages(record["text"], 3000))[:3]
        ]
    for name in ("chat_logs", "sms_chat", "enron_spam", "sms_spam"):
        rows += [
            row(r["text"], 0.0, name, "train")
            for r in read_jsonl(quality_data / "negative" / f"{name}.jsonl")
        ]
    abc = list(read_jsonl(q / "abc_news_transcripts.jsonl"))
    rng.shuffle(abc)
    for record in abc[:1000]:
        grade = 2.0 if record["id"].startswith("abc-science") else 1.0
        rows.append(row(record["text"], grade, record["id"].rsplit("-", 1)[0], "heldout"))
    return rows


def toxic(data: Path, rng: random.Random) -> list[dict]:
    from filters.toxicity import Toxicity
    from pipeline.document import Document

    stage = Toxicity("toxicity")
    stage.setup()
    q = data / "quality"
    texts: dict[str, tuple[str, list[str]]] = {
        "enron": ("train", [r["text"] for r in read_jsonl(q / "enron1_spam_ham.jsonl.gz")]),
        "brown": ("train", [r["text"] for r in read_jsonl(q / "brown_corpus.jsonl")]),
        "abc": ("train", [r["text"] for r in read_jsonl(q / "abc_news_transcripts.jsonl")]),
        "nps_chat": ("heldout", [r["text"] for r in read_jsonl(q / "nps_chat_logs.jsonl")]),
        "movie_reviews": ("heldout", [r["text"] for r in read_jsonl(q / "movie_reviews.jsonl")]),
        "webtext": ("heldout", [p for r in read_jsonl(q / "webtext.jsonl") for p in passages(r["text"])]),
    }
    with (q / "sms_spam_collection.tsv").open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        sms = [fields[1] for fields in reader if len(fields) > 1 and fields[0] != "Label"]
    texts["sms"] = ("train", [" ".join(sms[i : i + 5]) for i in range(0, len(sms), 5)])
    rows = []
    for source, (split, items) in texts.items():
        for text in items:
            if text.strip():
                verdict = stage.check(Document(id="x", text=text, source=source))
                rows.append(row(text, 0.0 if verdict.keep else 1.0, source, split))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--quality-data", type=Path, default=ROOT / "out" / "quality_data")
    parser.add_argument("--output", type=Path, default=ROOT / "out" / "quality_heads")
    parser.add_argument("--heads", nargs="+", default=HEADS, choices=HEADS, help="which sets to write")
    args = parser.parse_args(argv)
    needs_quality_data = {"informative", "depth"} & set(args.heads)
    if not (args.data / "quality").is_dir() or (
        needs_quality_data and not (args.quality_data / "positive").is_dir()
    ):
        print(f"skipped: {args.data}/quality or {args.quality_data}/positive not found")
        return 0
    args.output.mkdir(parents=True, exist_ok=True)
    sets = {
        "informative": lambda: informative(args.quality_data),
        "coherent": lambda: coherent(args.data, random.Random(SEED)),
        "depth": lambda: depth(args.data, args.quality_data, random.Random(SEED)),
        "toxic": lambda: toxic(args.data, random.Random(SEED)),
    }
    for name in args.heads:
        rows = sets[name]()
        with (args.output / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for r in rows:
                handle.write(json.dumps(r, ensure_ascii=False) + "\n")
        split = sum(r["split"] == "heldout" for r in rows)
        print(
            f"{name}: {len(rows)} rows ({split} held out), mean target {sum(r['target'] for r in rows) / len(rows):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
