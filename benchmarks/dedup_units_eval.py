"""Evaluate `unit_dedup` and `semantic_dedup` on the benchmark built by dedup_units_build.py.

unit_dedup runs as the real Beam stage (in-process runner). Its `jaccard_threshold` is chosen on
the calibration half, precision first: the highest of `--thresholds` whose figures reach every aim
of the issue (AIMS, precision ≥ 0.99 over predicted pairs) with no hard negative merged; then
it is reported on the held-out half.
With `--embedder`, the embedding path is added at that Jaccard threshold and its
`cosine_threshold` chosen on the calibration half among `--cosines` (highest recall on every copy
kind, paraphrase included, with precision ≥ 0.95 and no more hard negatives merged than the
lexical path alone), then reported on the held-out half.
semantic_dedup's decisions are computed with the stage's own functions (embedding of main content,
centering, pairwise cosine, lexical verification), one cluster per language (the benchmark is far
smaller than one k-means cluster), before (whole page, no verification, all languages together)
and after this change.

    python benchmarks/dedup_units_build.py --out /tmp/units_bench
    python benchmarks/dedup_units_eval.py --bench /tmp/units_bench
    python benchmarks/dedup_units_eval.py --bench /tmp/units_bench --thresholds 0.6 --skip-semantic \
        --embedder static --cosines 0.8,0.85,0.9,0.95
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import apache_beam as beam
import common  # noqa: F401  (puts this checkout first on sys.path)
import numpy as np

from dedup import clusters, semantic
from dedup.content import main_content, shingle_set, sketch
from dedup.units import UnitDedup
from pipeline.document import Document
from pipeline.run import new_pipeline

COPY_KINDS = ("partial", "half", "truncated", "revised", "paraphrase")
NEGATIVE_KINDS = ("hard_negative", "paraphrase_negative")


def load(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def content(lineages) -> set[str]:
    return {lin for lin in lineages if not lin.startswith("tpl:")}


def _dump(rows, path: str) -> None:
    Path(path).write_text(json.dumps(rows))


def run_unit_dedup(records: list[dict], **params) -> tuple[dict, list]:
    """(kept id → (text, units_removed), rejected [(id, reason, duplicate_of)]) from the Beam stage."""
    stage = UnitDedup("unit_dedup", **params)
    docs = [Document(r["id"], r["text"], language=r["language"]) for r in records]
    with tempfile.TemporaryDirectory() as tmp:
        with new_pipeline() as p:
            out = stage.expand(p | beam.Create(docs))
            kept = out.kept | "K" >> beam.Map(
                lambda d: ["k", d.id, d.text, d.metadata.get("units_removed", [])]
            )
            rej = out.rejected | "R" >> beam.Map(lambda r: ["r", r.doc.id, r.reason, r.duplicate_of])
            _ = (kept, rej) | beam.Flatten() | beam.combiners.ToList() | beam.Map(_dump, f"{tmp}/out.json")
        rows = json.loads(Path(f"{tmp}/out.json").read_text())
    kept_docs = {r[1]: (r[2], r[3]) for r in rows if r[0] == "k"}
    rejected = [tuple(r[1:]) for r in rows if r[0] == "r"]
    assert len(kept_docs) + len(rejected) == len(records), "conservation"
    return kept_docs, rejected


def score_units(records: list[dict], kept: dict, rejected: list) -> dict:
    """Survival of unique and copied paragraphs, recall per kind, precision over predicted pairs.

    A predicted pair is (removed or cut document, document named as holding the copy): a
    `contained_in`/`too_short_after_dedup` rejection is right if the two share a content line, a
    cut unit if the named document holds that line. Cut template lines are counted apart.
    """
    by_id = {r["id"]: r for r in records}
    holders: dict[str, set[str]] = defaultdict(set)
    for r in records:
        for lin in content(r["lineage"]):
            holders[lin].add(r["id"])
    survives: dict[str, int] = defaultdict(int)
    for doc_id, (text, _) in kept.items():
        lines = set(text.split("\n"))
        rec = by_id[doc_id]
        for line, lin in zip(rec["text"].split("\n"), rec["lineage"]):
            if not lin.startswith("tpl:") and line in lines:
                survives[lin] += 1
                lines.discard(line)
    unique = [lin for lin, h in holders.items() if len(h) == 1]
    copied = [lin for lin, h in holders.items() if len(h) > 1]
    result = {
        "unique_paragraphs_surviving": sum(survives[lin] >= 1 for lin in unique) / len(unique),
        "copied_paragraphs_in_one_kept_doc": sum(survives[lin] == 1 for lin in copied) / len(copied),
        "copied_paragraphs_lost": sum(survives[lin] == 0 for lin in copied),
    }
    for kind in COPY_KINDS:
        inst = [
            (r["id"], lin)
            for r in records
            if r["kind"] == kind
            for lin in content(r["lineage"])
            if len(holders[lin]) > 1
        ]
        result[f"recall_{kind}"] = sum(survives[lin] == 1 for _, lin in inst) / max(len(inst), 1)
    pairs: dict[tuple[str, str], bool] = {}
    for doc_id, _, survivor in rejected:
        ok = bool(content(by_id[doc_id]["lineage"]) & content(by_id[survivor]["lineage"]))
        pairs[(doc_id, survivor)] = pairs.get((doc_id, survivor), True) and ok
    for doc_id, (_, cuts) in kept.items():
        lineage = by_id[doc_id]["lineage"]
        unit_lineages = [
            lin for line, lin in zip(by_id[doc_id]["text"].split("\n"), lineage) if len(line.split()) >= 8
        ]
        for index, survivor in cuts:
            if unit_lineages[index].startswith("tpl:"):  # a template line: not content, counted apart
                result["template_line_cuts"] = result.get("template_line_cuts", 0) + 1
                continue
            ok = unit_lineages[index] in set(by_id[survivor]["lineage"])
            pairs[(doc_id, survivor)] = pairs.get((doc_id, survivor), True) and ok
    wrong = [p for p, ok in pairs.items() if not ok]
    result["predicted_pairs"] = len(pairs)
    result["precision"] = 1 - len(wrong) / max(len(pairs), 1)
    result["hard_negatives_merged"] = sum(
        by_id[a]["kind"] in NEGATIVE_KINDS or by_id[b]["kind"] in NEGATIVE_KINDS for a, b in wrong
    )
    result["wrong_pairs_sample"] = wrong[:5]
    return result


def semantic_pairs(
    records: list[dict], embedder, *, eps: float, min_unit_words: int, min_overlap: float, by_language: bool
):
    """Predicted (removed, survivor) pairs of semantic_dedup's decision functions, one cluster per
    language (or one for all)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        groups[r["language"] if by_language else ""].append(r)
    pairs = []
    for members in groups.values():
        texts = [main_content(r["text"], min_unit_words) for r in members]
        x = semantic.embed_documents(embedder, texts, 20_000, 256)
        x = clusters.center(x, x.mean(axis=0))
        orders = [semantic.member_order(Document(r["id"], r["text"]), "") for r in members]
        cap = semantic.SemanticDedup.params["max_shingles"].default
        sketches = (
            [sketch(shingle_set(t, semantic.OVERLAP_NGRAM, 1234), cap) for t in texts]
            if min_overlap > 0
            else None
        )
        for d in semantic.decide_cluster(
            x, np.zeros(len(x)), orders, eps=eps, block_size=512, survivor="longest",
            sketches=sketches, min_overlap=min_overlap, max_shingles=cap,
        ):  # fmt: skip
            pairs.append((members[d.row]["id"], members[d.survivor]["id"]))
    return pairs


def score_pairs(records: list[dict], pairs) -> dict:
    by_id = {r["id"]: r for r in records}
    wrong = [(a, b) for a, b in pairs if not content(by_id[a]["lineage"]) & content(by_id[b]["lineage"])]
    return {
        "predicted_pairs": len(pairs),
        "precision": round(1 - len(wrong) / max(len(pairs), 1), 4),
        "wrong_pairs": len(wrong),
        "hard_negatives_merged": sum(
            by_id[a]["kind"] in NEGATIVE_KINDS or by_id[b]["kind"] in NEGATIVE_KINDS for a, b in wrong
        ),
        "languages_in_wrong_pairs": sorted({by_id[a]["language"] for a, _ in wrong}),
    }


def calibrate_embedding(halves: dict, args, jaccard_threshold: float, lexical: dict) -> dict:
    """Cosine threshold of the embedding path on the calibration half, then the held-out half."""
    params = {"jaccard_threshold": jaccard_threshold, "embedder": args.embedder}
    calib = {}
    for t in (float(v) for v in args.cosines.split(",")):
        kept, rejected = run_unit_dedup(halves["calib"], cosine_threshold=t, **params)
        calib[t] = score_units(halves["calib"], kept, rejected)
        print("calib", args.embedder, t, json.dumps(calib[t]), flush=True)
    ok = [
        t
        for t, r in calib.items()
        if r["precision"] >= 0.95 and r["hard_negatives_merged"] <= lexical["hard_negatives_merged"]
    ]
    result: dict = {"embedder": args.embedder, "calibration": calib, "chosen_cosine": None}
    if not ok:
        print("no cosine threshold keeps precision >= 0.95 without new hard negatives", flush=True)
        return result
    recall = lambda r: sum(r[f"recall_{k}"] for k in COPY_KINDS)  # noqa: E731
    chosen = max(ok, key=lambda t: (recall(calib[t]), -t))
    kept, rejected = run_unit_dedup(halves["heldout"], cosine_threshold=chosen, **params)
    result["chosen_cosine"] = chosen
    result["heldout"] = score_units(halves["heldout"], kept, rejected)
    print("heldout", args.embedder, chosen, json.dumps(result["heldout"]), flush=True)
    return result


# Issue 14's aims for `unit_dedup`, with precision raised from 0.95 to 0.99.
AIMS = {
    "unique_paragraphs_surviving": 0.99,
    "copied_paragraphs_in_one_kept_doc": 0.90,
    "recall_partial": 0.9,
    "recall_half": 0.9,
    "recall_truncated": 0.9,
    "recall_revised": 0.8,
    "precision": 0.99,
}


def meets_aims(result: dict) -> bool:
    """Every figure of AIMS reached and no hard negative merged."""
    return result["hard_negatives_merged"] == 0 and all(result[k] >= v for k, v in AIMS.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bench", type=Path, default=Path("/tmp/units_bench"))
    parser.add_argument("--thresholds", default="0.3,0.4,0.5,0.6")
    parser.add_argument("--skip-semantic", action="store_true")
    parser.add_argument("--embedder", default="", help="also calibrate unit_dedup's embedding path")
    parser.add_argument("--cosines", default="0.8,0.85,0.9,0.95")
    args = parser.parse_args(argv)
    if not (args.bench / "calib.jsonl.gz").is_file():
        print(f"skipped: run benchmarks/dedup_units_build.py --out {args.bench} first")
        return 0
    halves = {name: load(args.bench / f"{name}.jsonl.gz") for name in ("calib", "heldout")}
    report: dict = {"unit_dedup": {}, "semantic_dedup": {}}
    calib = {}
    for t in (float(v) for v in args.thresholds.split(",")):
        kept, rejected = run_unit_dedup(halves["calib"], jaccard_threshold=t)
        calib[t] = score_units(halves["calib"], kept, rejected)
        print("calib", t, json.dumps(calib[t]), flush=True)
    ok = [t for t, r in calib.items() if meets_aims(r)]
    chosen = max(ok) if ok else max(calib)
    kept, rejected = run_unit_dedup(halves["heldout"], jaccard_threshold=chosen)
    report["unit_dedup"] = {"calibration": calib, "chosen_threshold": chosen}
    report["unit_dedup"]["heldout"] = score_units(halves["heldout"], kept, rejected)
    print("heldout", chosen, json.dumps(report["unit_dedup"]["heldout"]), flush=True)
    if args.embedder:
        report["unit_dedup_embedding"] = calibrate_embedding(halves, args, chosen, calib[chosen])
    if not args.skip_semantic:
        embedder = semantic.load_embedder("static")
        for name, records in halves.items():
            before = semantic_pairs(
                records, embedder, eps=0.10, min_unit_words=0, min_overlap=0.0, by_language=False
            )
            after = semantic_pairs(
                records, embedder, eps=0.10, min_unit_words=8, min_overlap=0.2, by_language=True
            )
            report["semantic_dedup"][name] = {
                "before (whole page, unverified, languages together)": score_pairs(records, before),
                "after (main content, verified, per language)": score_pairs(records, after),
            }
            print(name, "semantic", json.dumps(report["semantic_dedup"][name]), flush=True)
    print(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
