"""Evaluate the shipped quality scorers on ../shared/data (skips cleanly without it).

    python benchmarks/quality_eval.py [--data DIR] [--embedding-model PATH ...]

1. DCLM's check: text extracted (resiliparse, main content) from quality/wiki_vs_cc_html; every
   Wikipedia page must score above every Common Crawl page, for every scorer.
2. Agreement (Spearman) between the scorers on web texts, and per-source mean scores. Sets: held
   out of training (cc_net head documents, WARC/WET records, raw multilingual snippets, movie
   reviews, Enron ham) and all web pages (article main text and the same pages with boilerplate).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
from common import arguments

from pipeline.document import Document
from quality_models.embedding_quality import DEFAULT_EMBEDDING_HEAD, EmbeddingQuality
from quality_models.fasttext_quality import FastTextQuality

STATIC_HEAD = DEFAULT_EMBEDDING_HEAD.parents[1] / "embedding-quality-static" / "head.safetensors"


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties)."""

    def ranks(x: np.ndarray) -> np.ndarray:
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        for value in np.unique(x):
            tied = x == value
            r[tied] = r[tied].mean()
        return r

    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def web_sets(data: Path) -> dict[str, list[str]]:
    """Named lists of texts; the first five are not in the training data."""
    from pipeline.readers import iter_documents

    web = data / "web"
    truth = json.loads((web / "article_extraction" / "ground-truth.json").read_text(encoding="utf-8"))
    warc = [
        d.text for d in iter_documents([str(p) for p in sorted((web / "warc").glob("*"))]) if d.text.strip()
    ]
    return {
        "ccnet_head": [
            r["raw_content"] if "raw_content" in r else r["text"]
            for p in sorted(web.glob("ccnet_head_*.jsonl"))
            for r in read_jsonl(p)
        ],
        "warc_wet_records": warc,
        "raw_snippets": [r["text"] for r in read_jsonl(web / "mixed_quality_snippets.jsonl")],
        "movie_reviews": [r["text"] for r in read_jsonl(data / "quality" / "movie_reviews.jsonl")][::20],
        "enron_ham": [
            r["text"]
            for r in read_jsonl(data / "quality" / "enron1_spam_ham.jsonl.gz")
            if r["label"] == "ham"
        ][::40],
        "article_main_text": [truth[k]["articleBody"] for k in sorted(truth)],
        "article_full_pages": [
            r["text"] for r in read_jsonl(web / "article_extraction" / "full_page_text.jsonl")
        ],
    }


def wiki_vs_cc(data: Path) -> dict[str, str]:
    from resiliparse.extract.html2text import extract_plain_text

    pages = sorted((data / "quality" / "wiki_vs_cc_html").glob("*.html"))
    return {
        p.stem: extract_plain_text(p.read_text(encoding="utf-8", errors="replace"), main_content=True)
        for p in pages
    }


def score(stage, texts: list[str]) -> np.ndarray:
    docs = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
    scored = []
    for start in range(0, len(docs), 256):
        scored += [verdict.doc for verdict in stage.check_batch(docs[start : start + 256])]
    return np.array([d.scores[stage.name] for d in scored])


def main() -> int:
    parser = arguments(__doc__, data=True)
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"skipped: data folder {args.data} not found")
        return 0
    scorers = [
        FastTextQuality("fasttext"),
        EmbeddingQuality("minilm_head"),
        EmbeddingQuality("static_head", model=str(STATIC_HEAD)),
    ]
    for stage in scorers:
        stage.setup()
    pages = wiki_vs_cc(args.data)
    print("## wiki_vs_cc_html (resiliparse main-content text)\n")
    print("| page | chars | " + " | ".join(s.name for s in scorers) + " |")
    print("|---|---|" + "---|" * len(scorers))
    page_scores = {s.name: score(s, list(pages.values())) for s in scorers}
    for i, (name, text) in enumerate(pages.items()):
        print(
            f"| {name} | {len(text)} | " + " | ".join(f"{page_scores[s.name][i]:.4f}" for s in scorers) + " |"
        )
    ok = True
    for s in scorers:
        values = dict(zip(pages, page_scores[s.name]))
        wiki = min(v for k, v in values.items() if k.startswith("wikipedia"))
        cc = max(v for k, v in values.items() if k.startswith("common_crawl"))
        ok &= wiki > cc
        print(f"\n{s.name}: min wikipedia {wiki:.4f} > max common crawl {cc:.4f}: {wiki > cc}")
    print("\n## Scorer agreement on web texts\n")
    sets = web_sets(args.data)
    all_scores: dict[str, list[np.ndarray]] = {s.name: [] for s in scorers}
    print(
        "| set | docs | "
        + " | ".join(f"mean {s.name}" for s in scorers)
        + " | spearman fasttext~minilm | spearman fasttext~static | spearman minilm~static |"
    )
    print("|---|---|" + "---|" * (len(scorers) + 3))
    held_out = {s.name: [] for s in scorers}
    for i, (name, texts) in enumerate(sets.items()):
        values = {s.name: score(s, texts) for s in scorers}
        for s in scorers:
            all_scores[s.name].append(values[s.name])
            if i < 5:
                held_out[s.name].append(values[s.name])
        f, m, st = (values[s.name] for s in scorers)
        rho = [spearman(f, m), spearman(f, st), spearman(m, st)] if len(texts) > 2 else [float("nan")] * 3
        print(
            f"| {name} | {len(texts)} | "
            + " | ".join(f"{v.mean():.3f}" for v in (f, m, st))
            + " | "
            + " | ".join(f"{r:.3f}" for r in rho)
            + " |"
        )
    for label, group in (("held-out sets pooled", held_out), ("all web sets pooled", all_scores)):
        f, m, st = (np.concatenate(group[s.name]) for s in scorers)
        print(
            f"| {label} | {len(f)} | "
            + " | ".join(f"{v.mean():.3f}" for v in (f, m, st))
            + f" | {spearman(f, m):.3f} | {spearman(f, st):.3f} | {spearman(m, st):.3f} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
