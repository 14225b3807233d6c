"""Document-level precision / recall of `semantic_dedup` on real documents with planted rewrites.

Originals: ABC science-news transcripts, Brown corpus samples and movie reviews (same-genre
documents are the hard negatives). For a seeded subset of originals one variant each is added:
- `reorder`: every sentence shuffled;
- `synonyms`: words from a fixed synonym table swapped (about 1 word in 8 changes);
- `rewrite`: paragraphs rewritten by edits: 1 sentence in 6 dropped, neighbouring sentences
  swapped, synonym swaps, a new opening line and a footer;
- `msrp`: documents of 6 human-written paraphrase sentences (MSRP label 1) against their
  originals; MSRP label-0 pairs (same story, different facts) give hard *negative* documents.
The real Beam stage runs once (gristmill's local runner, in process) at the given eps; an eps sweep then
reuses the stage's embedding, centering and per-cluster code over one cluster (no k-means split).
A removal is correct when its `duplicate_of` is in its own family.

    .venv/bin/python benchmarks/semantic_docs.py [--data DIR] [--embedder static] [--eps 0.08]
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import apache_beam as beam
import numpy as np
from common import arguments

from benchmarks.semantic_calibrate import read_msrp
from dedup.clusters import center
from dedup.semantic import SemanticDedup, decide_cluster, embed_documents, load_embedder, member_order
from pipeline.document import Document
from pipeline.run import new_pipeline

SOURCES = {"abc_news_transcripts": 1500, "brown_corpus": 500, "movie_reviews": 1000}
VARIANTS = ("reorder", "synonyms", "rewrite")
PER_VARIANT = 200
MSRP_DOCS = 100  # positive document pairs; as many negative pairs
SENTENCE = re.compile(r"(?<=[.!?])\s+")
SYNONYMS = dict(
    pair.split(":")
    for pair in (
        "big:large large:big small:little little:small said:stated stated:said begin:start start:begin "
        "buy:purchase help:assist show:demonstrate shows:demonstrates use:utilize used:utilized "
        "many:numerous often:frequently quickly:rapidly fast:rapid important:significant "
        "problem:issue problems:issues people:individuals children:kids kids:children job:occupation "
        "area:region areas:regions need:require needs:requires enough:sufficient about:approximately "
        "also:additionally but:however because:since get:obtain got:obtained try:attempt "
        "find:discover found:discovered make:create made:created think:believe thinks:believes "
        "new:novel old:aged good:fine bad:poor great:excellent hard:difficult easy:simple "
        "very:extremely really:truly maybe:perhaps like:such-as end:finish ended:finished "
        "answer:response answers:responses ask:inquire asked:inquired study:investigation "
        "studies:investigations research:inquiry scientists:researchers doctors:physicians "
        "film:movie movie:film films:movies movies:films story:tale plot:storyline funny:amusing "
        "actor:performer actors:performers character:role characters:roles scene:sequence "
        "scenes:sequences director:filmmaker world:globe country:nation city:town house:home "
        "car:automobile money:funds cost:price costs:prices rich:wealthy poor:impoverished "
        "happy:glad sad:unhappy angry:furious afraid:scared smart:clever begin:commence "
        "went:travelled go:travel come:arrive came:arrived give:provide gave:provided "
        "keep:retain kept:retained want:wish wants:wishes look:appear looks:appears "
        "small:tiny huge:enormous far:distant near:close whole:entire every:each "
        "most:majority-of water:H2O disease:illness diseases:illnesses sick:ill "
        "patients:sufferers result:outcome results:outcomes increase:rise reduce:lower"
    ).split()
)


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE.split(text.strip()) if s]


def swap_synonyms(text: str, rng: random.Random, rate: float = 0.9) -> str:
    def swap(match: re.Match) -> str:
        word = match.group(0)
        new = SYNONYMS.get(word.lower())
        if new is None or rng.random() > rate:
            return word
        new = new.replace("-", " ")
        return new.capitalize() if word[0].isupper() else new

    return re.sub(r"[A-Za-z]+", swap, text)


def reorder(text: str, rng: random.Random) -> str:
    parts = sentences(text)
    rng.shuffle(parts)
    return " ".join(parts)


def rewrite(text: str, rng: random.Random) -> str:
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n|\n", text):
        parts = [s for s in sentences(paragraph) if rng.random() > 1 / 6] or sentences(paragraph)[:1]
        for i in range(0, len(parts) - 1, 3):
            parts[i], parts[i + 1] = parts[i + 1], parts[i]
        if parts:
            paragraphs.append(swap_synonyms(" ".join(parts), rng, rate=0.5))
    opening = "Here is the full story, updated with the latest details."
    footer = "Share this article with your friends. All rights reserved."
    return "\n\n".join([opening, *paragraphs, footer])


def build_corpus(data: Path, seed: int) -> tuple[list[Document], dict[str, str], dict[str, str]]:
    """Documents, family of each id, and variant type of each variant id."""
    rng = random.Random(seed)
    docs, family, kind = [], {}, {}
    for name, limit in SOURCES.items():
        for line in (data / "quality" / f"{name}.jsonl").read_text(encoding="utf-8").split("\n")[:limit]:
            record = json.loads(line)
            doc_id = f"{name}:{record['id']}"
            docs.append(Document(id=doc_id, text=record["text"]))
            family[doc_id] = doc_id
    originals = [d for d in docs if len(sentences(d.text)) >= 4]
    chosen = rng.sample(originals, PER_VARIANT * len(VARIANTS))
    makers = {"reorder": reorder, "synonyms": swap_synonyms, "rewrite": rewrite}
    for i, original in enumerate(chosen):
        variant = VARIANTS[i % len(VARIANTS)]
        doc_id = f"{variant}:{original.id}"
        docs.append(Document(id=doc_id, text=makers[variant](original.text, rng)))
        family[doc_id], kind[doc_id] = original.id, variant
    first, second, labels = read_msrp(data / "dedup" / "msrp_train.tsv")
    for label, tag in ((1, "msrp"), (0, "msrp_negative")):
        rows = [i for i in range(len(labels)) if labels[i] == label][: MSRP_DOCS * 6]
        for d in range(MSRP_DOCS):
            block = rows[d * 6 : (d + 1) * 6]
            a, b = f"{tag}:{d}:a", f"{tag}:{d}:b"
            docs.append(Document(id=a, text=" ".join(first[i] for i in block)))
            docs.append(Document(id=b, text=" ".join(second[i] for i in block)))
            family[a] = a
            family[b] = a if label == 1 else b
            if label == 1:
                kind[b] = "msrp"
    return docs, family, kind


def score(removals: list[tuple[str, str]], family: dict[str, str], kind: dict[str, str]) -> dict:
    """Precision, recall, recall per variant type, and the wrong removals."""
    sizes = Counter(family.values())
    expected = sum(n - 1 for n in sizes.values())
    correct = [(r, s) for r, s in removals if family[r] == family[s]]
    wrong = [(r, s) for r, s in removals if family[r] != family[s]]
    found_families = {family[r] for r, _ in correct}
    per_kind = Counter(kind.values())
    hit_kind = Counter(k for v, k in kind.items() if family[v] in found_families)
    return {
        "removed": len(removals),
        "precision": len(correct) / max(len(removals), 1),
        "recall": len(correct) / max(expected, 1),
        "per_kind": {k: hit_kind[k] / per_kind[k] for k in sorted(per_kind)},
        "wrong": wrong,
    }


def run_stage(docs: list[Document], stage: SemanticDedup) -> list[tuple[str, str]]:
    """Run the real Beam composite and return (removed id, survivor id) pairs."""
    with tempfile.TemporaryDirectory() as tmp:
        with new_pipeline() as p:
            out = stage.expand(p | beam.Create(docs))
            _ = (
                out.rejected
                | beam.Map(lambda r: json.dumps([r.doc.id, r.duplicate_of]))
                | beam.io.WriteToText(f"{tmp}/rejected")
            )
        return [tuple(json.loads(line)) for f in Path(tmp).glob("rejected*") for line in f.open()]


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--eps", type=float, default=SemanticDedup.params["eps"].default)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.data / "quality").is_dir():
        print(f"skipped: {args.data} not found")
        return 0
    docs, family, kind = build_corpus(args.data, args.seed)
    print(
        f"{len(docs)} documents, {len(kind)} planted duplicates {dict(Counter(kind.values()))}, embedder {args.embedder}"
    )

    started = time.perf_counter()
    stage = SemanticDedup("semantic_dedup", embedder=args.embedder, eps=args.eps)
    result = score(run_stage(docs, stage), family, kind)
    print(
        f"\nBeam stage, eps={args.eps}: removed {result['removed']}, precision {result['precision']:.3f}, "
        f"recall {result['recall']:.3f} ({time.perf_counter() - started:.0f} s)"
    )
    print("recall per variant:", {k: round(v, 3) for k, v in result["per_kind"].items()})
    for removed, survivor in result["wrong"][:8]:
        print(f"  wrong: {removed} -> {survivor}")

    x = embed_documents(load_embedder(args.embedder), [d.text for d in docs], stage.max_chars, 256)
    x = center(x, x.mean(axis=0))
    orders = [member_order(doc, "") for doc in docs]
    print(
        "\n| eps | removed | precision | recall | reorder | synonyms | rewrite | msrp |\n|---|---|---|---|---|---|---|---|"
    )
    for eps in (0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20, 0.25, 0.30):
        decisions = decide_cluster(x, np.zeros(len(docs)), orders, eps=eps, block_size=512, survivor="hard")
        r = score([(docs[d.row].id, docs[d.survivor].id) for d in decisions], family, kind)
        k = r["per_kind"]
        print(
            f"| {eps:.2f} | {r['removed']} | {r['precision']:.3f} | {r['recall']:.3f} | {k['reorder']:.3f} | "
            f"{k['synonyms']:.3f} | {k['rewrite']:.3f} | {k['msrp']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
