"""Build the unit-dedup benchmark from ../shared/data: real pages, their partial, half, truncated
and lightly revised copies, MSRP paraphrases placed into pages, and same-template / same-language
hard negatives, in two halves (calibration and held-out) that share no source page.

Every line of every document carries a lineage id (`lineage[i]` for line i): lines with the same
id are copies of one another (exact, truncated or revised); `tpl:` ids are template lines of a
site, `msrp:` ids MSRP paraphrase pairs. `kind` says how the document was made.

    python benchmarks/dedup_units_build.py --out /tmp/units_bench   # writes calib.jsonl, heldout.jsonl
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import sys
from pathlib import Path

import xxhash
from common import DATA

LANGS = ("de", "fr", "es", "it", "pt", "nl", "ru", "pl")  # langid sentences: pages in other languages
MIN_WORDS = 8


def english_pages() -> list[dict]:
    """Article bodies (paragraph lines) with their site's template lines from the full page."""
    truth = json.loads((DATA / "web/article_extraction/ground-truth.json").read_text())
    full = {}
    with open(DATA / "web/article_extraction/full_page_text.jsonl") as f:
        for line in f:
            rec = json.loads(line)
            full[rec["id"]] = rec["text"]
    pages = []
    for key in sorted(truth):
        body = [p.strip() for p in truth[key]["articleBody"].split("\n") if len(p.split()) >= MIN_WORDS]
        body_set = set(body)
        template = [
            t.strip() for t in full.get(key, "").split("\n") if t.strip() and t.strip() not in body_set
        ]
        # template lines: the first and last few non-body lines of the real page (menus, footers)
        template = template[:6] + template[-6:] if len(template) > 12 else template
        if len(body) >= 4:
            pages.append({"src": key[:12], "lang": "en", "body": body, "template": template})
    for path in sorted(DATA.glob("web/ccnet_head_*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            body = [p.strip() for p in rec["text"].split("\n") if len(p.split()) >= MIN_WORDS]
            if len(body) >= 4:
                pages.append(
                    {"src": xxhash.xxh64_hexdigest(rec["id"].encode())[:12], "lang": "en", "body": body}
                )
    return pages


def language_pages(rng: random.Random) -> list[dict]:
    """Pages of real sentences in other languages: 3 sentences a paragraph, 5 paragraphs a page."""
    pages = []
    for lang in LANGS:
        path = DATA / "langid/sentences" / f"{lang}.txt"
        sentences = [s.strip() for s in path.read_text(encoding="utf-8-sig").splitlines() if s.strip()]
        paragraphs = [" ".join(sentences[i : i + 3]) for i in range(0, len(sentences) - 2, 3)]
        paragraphs = [p for p in paragraphs if len(p.split()) >= MIN_WORDS]
        for i in range(0, len(paragraphs) - 4, 5):
            pages.append({"src": f"{lang}{i:03d}", "lang": lang, "body": paragraphs[i : i + 5]})
    rng.shuffle(pages)
    return pages


def msrp_pairs() -> list[tuple[int, str, str]]:
    with open(DATA / "dedup/msrp_train.tsv", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    return [(int(r[0]), r[3], r[4]) for r in rows if len(r) == 5]


def line_id(text: str) -> str:
    """Lineage of an original line: its text, so identical lines of two real pages are copies."""
    return xxhash.xxh64_hexdigest(" ".join(text.lower().split()).encode())


def revise(text: str, rng: random.Random) -> str:
    """A light revision: about one word in twelve dropped, doubled or swapped with its neighbour."""
    words = text.split()
    out, i = [], 0
    while i < len(words):
        r = rng.random()
        if r < 1 / 36 and len(words) > MIN_WORDS + 2:
            i += 1
            continue
        if r < 2 / 36:
            out += [words[i], words[i]]
        elif r < 3 / 36 and i + 1 < len(words):
            out += [words[i + 1], words[i]]
            i += 1
        else:
            out.append(words[i])
        i += 1
    return " ".join(out)


def page(doc_id: str, kind: str, lang: str, lines: list[tuple[str, str]], template: list[str], site: str):
    """A document: template header, content lines, template footer; lineage per line."""
    head, foot = template[: len(template) // 2], template[len(template) // 2 :]
    rows = [(t, "tpl:" + line_id(t)) for t in head] + lines + [(t, "tpl:" + line_id(t)) for t in foot]
    return {
        "id": doc_id,
        "kind": kind,
        "language": lang,
        "text": "\n".join(t for t, _ in rows),
        "lineage": [lin for _, lin in rows],
    }


def build_half(
    pages: list[dict], msrp: list, english_sentences: list[str], rng: random.Random, tag: str
) -> list[dict]:
    """Sources, then copies of each kind, all from this half's pages only."""
    pool = pages[::5]  # content of hard negatives only: these pages appear nowhere else
    pages = [p for k, p in enumerate(pages) if k % 5]
    docs = []
    own = {p["src"]: [(b, line_id(b)) for b in p["body"]] for p in pages}
    tpl = {p["src"]: p.get("template", []) for p in pages}
    for p in pages:
        docs.append(
            page(f"{tag}-src-{p['src']}", "source", p["lang"], own[p["src"]], tpl[p["src"]], p["src"])
        )
    n = len(pages)
    for i, p in enumerate(pages):
        other = pages[(i * 7 + 3) % n]
        if other["lang"] != p["lang"] or other is p:
            other = next(q for q in pages[i + 1 :] + pages[:i] if q["lang"] == p["lang"])
        src, lines, site = p["src"], own[p["src"]], p["src"]
        kind = ("partial", "half", "truncated", "revised", "hard_negative")[i % 5]
        if kind == "partial":  # 1-3 paragraphs of p inside the other page (its own template)
            k = rng.randint(1, min(3, len(lines) - 1))
            taken = rng.sample(lines, k)
            host = list(own[other["src"]])
            for line in taken:
                host.insert(rng.randint(0, len(host)), line)
            docs.append(page(f"{tag}-partial-{src}", kind, p["lang"], host, tpl[other["src"]], other["src"]))
        elif kind == "half":  # the first half republished on another site (no template)
            docs.append(
                page(f"{tag}-half-{src}", kind, p["lang"], lines[: max(2, len(lines) // 2)], [], site)
            )
        elif kind == "truncated":  # the first ~60 % of the characters, cut inside a paragraph
            text = "\n".join(t for t, _ in lines)
            cut = text.rfind(" ", 0, int(len(text) * 0.6))
            kept, at = [], 0
            for t, lin in lines:
                if at + len(t) <= cut:
                    kept.append((t, lin))
                elif at < cut and len(text[at:cut].split()) >= MIN_WORDS:
                    kept.append((text[at:cut], lin))
                at += len(t) + 1
            docs.append(page(f"{tag}-truncated-{src}", kind, p["lang"], kept, tpl[src], site))
        elif kind == "revised":  # 1-2 paragraphs of p, lightly revised, inside the other page
            host = list(own[other["src"]])
            for t, lin in rng.sample(lines, min(2, len(lines))):
                host.insert(rng.randint(0, len(host)), (revise(t, rng), lin))
            docs.append(page(f"{tag}-revised-{src}", kind, p["lang"], host, tpl[other["src"]], other["src"]))
        else:  # same site and template as p (same language), content found nowhere else
            filler = next((q for q in pool if q["lang"] == p["lang"]), None)
            if filler is not None:
                pool.remove(filler)
                body = [(t, line_id(t)) for t in filler["body"]]
                docs.append(page(f"{tag}-negative-{src}", kind, p["lang"], body, tpl[src], site))
    # MSRP: each sentence of a pair as its own paragraph after a paragraph found nowhere else
    for j, (label, s1, s2) in enumerate(msrp):
        for side, sentence in (("a", s1), ("b", s2)):
            filler = english_sentences[2 * j + (side == "b")]
            lines = [(filler, line_id(filler))]
            lines.insert(1, (sentence, f"msrp:{tag}:{j}" if label else f"msrp:{tag}:{j}{side}"))
            kind = "paraphrase" if label else "paraphrase_negative"
            docs.append(page(f"{tag}-{kind}-{j}{side}", kind, "en", lines, [], f"msrp{j}{side}"))
    return docs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/units_bench"))
    parser.add_argument("--msrp", type=int, default=60, help="MSRP pairs per half (half paraphrases)")
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args(argv)
    if not (DATA / "web/article_extraction/ground-truth.json").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    rng = random.Random(args.seed)
    pages = english_pages() + language_pages(rng)
    halves: dict[str, list[dict]] = {"calib": [], "heldout": []}
    for p in pages:  # a page's half depends only on its source id
        halves["calib" if xxhash.xxh64_intdigest(p["src"].encode()) % 2 == 0 else "heldout"].append(p)
    english = (DATA / "langid/sentences/en.txt").read_text(encoding="utf-8-sig").split("\n")
    english = [s.strip() for s in english if s.strip()]
    msrp = msrp_pairs()
    rng.shuffle(msrp)
    positives = [m for m in msrp if m[0] == 1]
    negatives = [m for m in msrp if m[0] == 0]
    args.out.mkdir(parents=True, exist_ok=True)
    for h, (name, half) in enumerate(halves.items()):
        k = args.msrp // 2
        chosen = positives[h * k : (h + 1) * k] + negatives[h * k : (h + 1) * k]
        filler = [" ".join(english[i : i + 2]) for i in range(0, len(english) - 1, 2)]
        docs = build_half(half, chosen, filler[h::2], random.Random(args.seed + h), name)
        with gzip.open(args.out / f"{name}.jsonl.gz", "wt") as f:
            for doc in docs:
                f.write(json.dumps(doc, ensure_ascii=False) + "\n")
        kinds = {}
        for doc in docs:
            kinds[doc["kind"]] = kinds.get(doc["kind"], 0) + 1
        print(name, len(docs), "documents", json.dumps(kinds, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
