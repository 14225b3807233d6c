"""Labelled near-duplicate benchmark for `minhash_dedup`, built from real documents.

Corpus: real documents from ../shared/data (ABC news transcripts, movie reviews, Brown corpus,
cc_net pages), each wrapped in a real site's boilerplate (header/footer lines cut from the
article-extraction full-page texts, 20%..100% of the body's length), so pages of the same site are hard
negatives (same template, different page). About half the pages get 1-3 near-duplicates made with
1-3 realistic edits each: other boilerplate header/footer, a removed paragraph, reordered
paragraphs, changed dates and numbers, typos, truncation; some variants derive from another variant.

Ground truth: exact Jaccard of the sets of word 5-grams of the normalized text, its words as the
stage reads them (character pairs in scripts written without spaces; Python sets of strings,
independent of the stage's hashing), for every pair above 0.6 (found exactly with prefix
filtering) and for every pair the stage put in one cluster.

Reported, at the stage's defaults:
- pair relation "same cluster": recall over pairs with J ≥ 0.85, precision = clustered pairs with
  J ≥ 0.85 / (those + clustered pairs with J < 0.6) (pairs in between are not scored);
- text-dedup's per-document metric (benchmarks/utils.py there): a document is TP if it has true
  duplicates and all are in its predicted cluster, FP if predicted in a cluster otherwise, FN if it
  has true duplicates but no cluster, TN if neither; duplicate / non-duplicate precision, recall
  and macro F1. True duplicates = other documents with J ≥ 0.75 (the verification threshold).

    .venv/bin/python benchmarks/dedup_minhash_quality.py [--data DIR] [--bases 4000] [--workers 1 2]
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from itertools import combinations
from pathlib import Path

from common import arguments

from benchmarks.dedup_minhash_run import run_minhash
from dedup.signatures import normalize_text, words_of_unspaced_scripts
from pipeline.document import Document

SOURCES = (
    "quality/abc_news_transcripts.jsonl",
    "quality/movie_reviews.jsonl",
    "quality/brown_corpus.jsonl",
    "web/ccnet_head_0091.jsonl",
    "web/ccnet_head_0174.jsonl",
)
MONTHS = "January February March April May June July August September October November December".split()
EXTRA_BOILERPLATE = [
    "Share this article on Facebook Twitter LinkedIn Email",
    "We use cookies to improve your experience. By continuing to browse you agree to our cookie policy.",
    "Subscribe to our newsletter for the latest updates delivered to your inbox every morning",
    "Related articles You may also like Most popular this week",
    "Posted by the editorial team | Last updated on the date shown above | Print this page",
    "Advertisement Continue reading the main story below",
]


def load_bodies(data: Path, rng: random.Random, count: int) -> list[str]:
    """Real documents with 60..1500 words, as paragraphs separated by newlines."""
    bodies = []
    for rel in SOURCES:
        for line in filter(None, (data / rel).read_text().split("\n")):
            text = json.loads(line)["text"]
            paragraphs = [p.strip() for p in text.split("\n") if p.strip()]
            words = sum(len(p.split()) for p in paragraphs)
            if 60 <= words and len(paragraphs) >= 2:
                if words > 1500:  # long Brown/ccnet texts: keep the first ~1500 words
                    kept, total = [], 0
                    for p in paragraphs:
                        kept.append(p)
                        total += len(p.split())
                        if total > 1500:
                            break
                    paragraphs = kept
                bodies.append("\n".join(paragraphs))
    rng.shuffle(bodies)
    return bodies[:count]


def load_templates(data: Path) -> list[tuple[list[str], list[str]]]:
    """(header lines, footer lines) cut from real full-page texts (navigation, footers)."""
    templates = []
    for line in filter(None, (data / "web/article_extraction/full_page_text.jsonl").read_text().split("\n")):
        lines = [x.strip() for x in json.loads(line)["text"].split("\n") if x.strip()]
        if len(lines) >= 40:
            templates.append((lines[:20], lines[-20:]))
    return templates


def wrap(body: str, template: tuple[list[str], list[str]], rng: random.Random) -> str:
    """Body inside header/footer lines of a template: boilerplate of 20%..100% of the body's words."""
    budget = max(8, int(rng.uniform(0.2, 1.0) * len(body.split())))
    header, footer = [], []
    for source, target in ((template[0], header), (template[1], footer)):
        for line in source:
            if sum(len(x.split()) for x in header + footer) + len(line.split()) > budget:
                break
            target.append(line)
    return "\n".join(header + body.split("\n") + footer)


def edit(text: str, rng: random.Random, templates) -> tuple[str, list[str]]:
    """Apply 1-3 realistic edits; return the new text and the edit names."""
    names = rng.sample(
        ["boilerplate", "remove", "reorder", "numbers", "typos", "truncate"], rng.randint(1, 3)
    )
    paragraphs = text.split("\n")
    for name in names:
        if name == "boilerplate":
            header, footer = rng.choice(templates)
            extra = rng.sample(EXTRA_BOILERPLATE, 2)
            paragraphs = [rng.choice(header), extra[0]] + paragraphs + [extra[1], rng.choice(footer)]
        elif name == "remove" and len(paragraphs) >= 4:
            del paragraphs[rng.randrange(1, len(paragraphs) - 1)]
        elif name == "reorder" and len(paragraphs) >= 3:
            i, j = rng.sample(range(len(paragraphs)), 2)
            paragraphs[i], paragraphs[j] = paragraphs[j], paragraphs[i]
        elif name == "numbers":
            paragraphs = [
                re.sub(
                    r"\d+",
                    lambda m: str(rng.randint(1, 2030)),
                    re.sub("|".join(MONTHS), lambda m: rng.choice(MONTHS), p),
                )
                for p in paragraphs
            ]
        elif name == "typos":
            rate = rng.uniform(0.01, 0.03)
            paragraphs = [
                " ".join(_typo(w, rng) if rng.random() < rate else w for w in p.split()) for p in paragraphs
            ]
        elif name == "truncate":
            words = "\n".join(paragraphs).split(" ")
            paragraphs = " ".join(words[: int(len(words) * rng.uniform(0.85, 0.97))]).split("\n")
    return "\n".join(paragraphs), names


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 3:
        return word
    i = rng.randrange(len(word) - 1)
    return (
        word[:i] + word[i + 1] + word[i] + word[i + 2 :] if rng.random() < 0.5 else word[:i] + word[i + 1 :]
    )


def build(data: Path, bases: int, seed: int) -> tuple[list[Document], dict[str, str]]:
    """The corpus and each document's family (its original page)."""
    rng = random.Random(seed)
    templates = load_templates(data)
    docs, family = [], {}
    for b, body in enumerate(load_bodies(data, rng, bases)):
        site = b % len(templates)
        original = wrap(body, templates[site], rng)
        doc_id = f"p{b:05d}-0"
        docs.append(Document(doc_id, original, source=f"site{site}"))
        family[doc_id] = doc_id
        versions = [original]
        for v in range(1, 1 + (rng.choice([1, 1, 2, 3]) if rng.random() < 0.5 else 0)):
            text, _ = edit(rng.choice(versions), rng, templates)
            versions.append(text)
            docs.append(Document(f"p{b:05d}-{v}", text, source=f"site{site}"))
            family[f"p{b:05d}-{v}"] = doc_id
    return docs, family


def shingles(text: str) -> frozenset[str]:
    """Word 5-grams of the normalized text, its words as the stage reads them (in scripts written
    without spaces, such as some sites' boilerplate, each pair of characters)."""
    words = words_of_unspaced_scripts(normalize_text(text)).split()
    if len(words) < 5:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + 5]) for i in range(len(words) - 4))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def similar_pairs(sets: dict[str, frozenset], threshold: float) -> dict[tuple[str, str], float]:
    """Every pair with exact Jaccard ≥ threshold, by prefix filtering (no pair is missed):
    two sets with J ≥ t share a token among the first |x| - ceil(t·|x|) + 1 of each, in any fixed
    global order (here: rarest first)."""
    frequency: dict[str, int] = defaultdict(int)
    for s in sets.values():
        for token in s:
            frequency[token] += 1
    index: dict[str, list[str]] = defaultdict(list)
    candidates: set[tuple[str, str]] = set()
    for doc_id, s in sets.items():
        ordered = sorted(s, key=lambda t: (frequency[t], t))
        prefix = len(ordered) - int(-(-threshold * len(ordered) // 1)) + 1
        for token in ordered[:prefix]:
            for other in index[token]:
                candidates.add((other, doc_id) if other < doc_id else (doc_id, other))
            index[token].append(doc_id)
    pairs = {}
    for a, b in candidates:
        j = jaccard(sets[a], sets[b])
        if j >= threshold:
            pairs[(a, b)] = j
    return pairs


def evaluate(docs: list[Document], outcome: dict, sets: dict[str, frozenset], true_pairs: dict) -> dict:
    survivor = {doc_id: outcome["duplicate_of"].get(doc_id, doc_id) for doc_id in sets}
    clusters: dict[str, list[str]] = defaultdict(list)
    for doc_id, s in survivor.items():
        clusters[s].append(doc_id)
    predicted = {tuple(sorted(p)) for members in clusters.values() for p in combinations(members, 2)}
    high = {p for p, j in true_pairs.items() if j >= 0.85}
    clustered_j = {p: true_pairs.get(p, jaccard(sets[p[0]], sets[p[1]])) for p in predicted}
    tp = sum(1 for j in clustered_j.values() if j >= 0.85)
    fp = sum(1 for j in clustered_j.values() if j < 0.6)
    pair = {
        "pairs_true_j>=0.85": len(high),
        "pairs_clustered": len(predicted),
        "clustered_j>=0.85": tp,
        "clustered_j<0.6": fp,
        "clustered_0.6<=j<0.85": len(predicted) - tp - fp,
        "recall_j>=0.85": round(len(high & predicted) / max(1, len(high)), 4),
        "precision": round(tp / max(1, tp + fp), 4),
    }
    per_doc = {}
    for cutoff in (0.75,):
        truth: dict[str, set[str]] = defaultdict(set)
        for (a, b), j in true_pairs.items():
            if j >= cutoff:
                truth[a].add(b)
                truth[b].add(a)
        counts = {"TP": 0, "FP": 0, "TN": 0, "FN": 0}
        for doc_id in sets:
            preds = set(clusters[survivor[doc_id]]) - {doc_id}
            dups = truth[doc_id]
            if not preds:
                counts["TN" if not dups else "FN"] += 1
            else:
                counts["TP" if dups and dups <= preds else "FP"] += 1
        p_dup = counts["TP"] / max(1, counts["TP"] + counts["FP"])
        r_dup = counts["TP"] / max(1, counts["TP"] + counts["FN"])
        p_non = counts["TN"] / max(1, counts["TN"] + counts["FN"])
        r_non = counts["TN"] / max(1, counts["TN"] + counts["FP"])
        f1 = [2 * p * r / (p + r) if p + r else 0.0 for p, r in ((p_dup, r_dup), (p_non, r_non))]
        per_doc[f"truth_j>={cutoff}"] = {
            **counts,
            "precision_dup": round(p_dup, 4),
            "recall_dup": round(r_dup, 4),
            "precision_nondup": round(p_non, 4),
            "recall_nondup": round(r_non, 4),
            "macro_f1": round(sum(f1) / 2, 4),
        }
    by_site: dict[str, list[str]] = defaultdict(list)
    for doc in docs:
        if doc.id.endswith("-0"):
            by_site[doc.source].append(doc.id)
    negatives = [jaccard(sets[a], sets[b]) for ids in by_site.values() for a, b in combinations(ids, 2)]
    hard = {
        "same_site_page_pairs": len(negatives),
        "mean_j": round(sum(negatives) / max(1, len(negatives)), 3),
        "max_j": round(max(negatives, default=0.0), 3),
        "with_j>=0.2": sum(1 for j in negatives if j >= 0.2),
        "clustered": sum(
            1 for ids in by_site.values() for a, b in combinations(ids, 2) if survivor[a] == survivor[b]
        ),
    }
    return {"pair_relation": pair, "text_dedup_per_document": per_doc, "hard_negatives_same_template": hard}


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--bases", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    if not (args.data / "quality").is_dir():
        print(f"skipped: no data at {args.data}")
        return
    docs, family = build(args.data, args.bases, args.seed)
    sets = {d.id: shingles(d.text) for d in docs}
    true_pairs = similar_pairs(sets, 0.6)
    print(
        f"corpus: {len(docs)} documents from {len({*family.values()})} pages; pairs with J>=0.6: {len(true_pairs)}"
    )
    cross = sum(1 for a, b in true_pairs if family[a] != family[b])
    print(f"  of which across different pages (same template or real duplicates): {cross}")
    outcomes = []
    for workers in args.workers:
        shuffled = list(docs)
        random.Random(workers).shuffle(shuffled)
        outcome = run_minhash(shuffled, workers=workers)
        outcomes.append(outcome)
        print(
            f"workers={workers} (shuffled input): {outcome['seconds']:.1f}s, kept {len(outcome['kept'])}, "
            f"removed {len(outcome['duplicate_of'])}, reasons {outcome['reasons']}"
        )
        print("  counters:", json.dumps(outcome["counters"], sort_keys=True))
    same = all(
        o["kept"] == outcomes[0]["kept"] and o["duplicate_of"] == outcomes[0]["duplicate_of"]
        for o in outcomes
    )
    print(f"identical kept ids and duplicate_of across runs {args.workers}: {same}")
    print(json.dumps(evaluate(docs, outcomes[0], sets, true_pairs), indent=1))


if __name__ == "__main__":
    main()
