"""Fidelity of gristmill's heuristic filters to datatrove 0.10 (default parameters) on real documents.

Runs every filter on every original document (not chained) on both sides and prints, per filter,
the keep/reject agreement overall and per source, the reason agreement where both reject, the
agreement of c4_quality's edited text where both keep, and examples of disagreements. Also
reports how often our spaCy-free word split equals spaCy's exactly, and PII output equality.

The reference side (`filters_reference.py`) runs in a throwaway venv (see its docstring):

    .venv/bin/python benchmarks/filters_fidelity.py [--data ../shared/data] \
        [--reference-python /tmp/dt-venv-filters/bin/python] [--reference-results FILE]
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from common import ROOT, arguments
from filters_corpus import load_corpus

from filters.c4 import C4Quality
from filters.fineweb import FineWebQuality
from filters.gopher import GopherQuality, GopherRepetition
from filters.language import LanguageFilter, lid176_path
from filters.pii import PIIRedact
from filters.text_analysis import split_words
from pipeline.document import Document

# our reason code -> datatrove's
GOPHER_QUALITY_REASONS = {
    "too_few_words": "gopher_short_doc",
    "too_many_words": "gopher_long_doc",
    "short_mean_word_length": "gopher_below_avg_threshold",
    "long_mean_word_length": "gopher_above_avg_threshold",
    "too_many_hashes": "gopher_too_many_hashes",
    "too_many_ellipses": "gopher_too_many_ellipsis",
    "too_many_bullet_lines": "gopher_too_many_bullets",
    "too_many_ellipsis_lines": "gopher_too_many_end_ellipsis",
    "too_few_alpha_words": "gopher_below_alpha_threshold",
    "too_few_stop_words": "gopher_enough_stop_words",
}


def reference_reason(stage: str, reason: str | None, detail: str | None) -> str | None:
    """Translate our reason code into datatrove's for comparison."""
    if reason is None:
        return None
    if stage == "gopher_quality":
        return GOPHER_QUALITY_REASONS[reason]
    if reason in ("top_ngram_chars", "dup_ngram_chars"):
        n = re.match(r"n=(\d+)", detail or "").group(1)
        return f"top_{n}_gram" if reason == "top_ngram_chars" else f"duplicated_{n}_n_grams"
    if stage == "language":
        return None  # datatrove's language filter gives no reason
    return reason


def our_stages() -> dict:
    language = LanguageFilter("language")
    language.setup()
    return {
        "gopher_quality": GopherQuality("gopher_quality"),
        "gopher_repetition": GopherRepetition("gopher_repetition"),
        "c4_quality[terminal_punct=True]": C4Quality("c4_quality", filter_no_terminal_punct=True),
        "c4_quality[terminal_punct=False]": C4Quality("c4_quality"),
        "fineweb_quality": FineWebQuality("fineweb_quality"),
        "language": language,
    }


def run_ours(records: list[dict]) -> tuple[list[dict], float]:
    stages = our_stages()
    pii = PIIRedact("pii_redact")
    rows = []
    start = time.perf_counter()
    for record in records:
        row = {"id": record["id"]}
        for name, stage in stages.items():
            doc = Document(id=record["id"], text=record["text"])
            verdict = stage.check(doc)
            row[name] = [verdict.keep, verdict.reason, verdict.detail]
            if name.startswith("c4"):
                edited = verdict.doc or doc  # documents are immutable: the edit comes back in the verdict
                row[name].append(hashlib.sha1(edited.text.encode()).hexdigest())
        words = split_words(record["text"])
        row["words"] = [len(words), hashlib.sha1("\x00".join(words).encode()).hexdigest()]
        redacted = pii.check(Document(id=record["id"], text=record["text"])).doc
        row["pii"] = hashlib.sha1(redacted.text.encode()).hexdigest()
        rows.append(row)
    return rows, time.perf_counter() - start


def run_reference(records: list[dict], python: str) -> tuple[list[dict], float]:
    with tempfile.TemporaryDirectory() as tmp:
        docs, out = Path(tmp) / "docs.jsonl", Path(tmp) / "ref.jsonl"
        with open(docs, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")
        start = time.perf_counter()
        script = str(ROOT / "benchmarks" / "filters_reference.py")
        subprocess.run([python, script, "decide", str(docs), str(out), str(lid176_path())], check=True)
        seconds = time.perf_counter() - start
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], seconds


def report(records: list[dict], ours: list[dict], ref: list[dict], examples: int) -> None:
    by_id = {row["id"]: row for row in ref}
    sources = Counter(r["source"] for r in records)
    print(f"documents: {len(records)}  " + ", ".join(f"{s}={n}" for s, n in sources.most_common()))
    same_words = sum(by_id[o["id"]]["words"] == o["words"] for o in ours)
    print(
        f"word split identical to spaCy's: {same_words}/{len(ours)} documents ({same_words / len(ours):.2%})"
    )
    same_pii = sum(by_id[o["id"]]["pii"] == o["pii"] for o in ours)
    print(f"pii_redact output identical: {same_pii}/{len(ours)} ({same_pii / len(ours):.2%})")
    source_of = {r["id"]: r["source"] for r in records}
    for name in ours[0]:
        if name in ("id", "words", "pii"):
            continue
        stage = name.split("[")[0]
        agree = reason_agree = both_reject = text_agree = both_keep = kept = 0
        per_source: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        disagreements = []
        for row in ours:
            mine, theirs = row[name], by_id[row["id"]][name]
            same = mine[0] == theirs[0]
            agree += same
            kept += mine[0]
            per_source[source_of[row["id"]]][0] += same
            per_source[source_of[row["id"]]][1] += 1
            if not same:
                disagreements.append((row["id"], mine, theirs))
            elif not mine[0]:
                both_reject += 1
                reason_agree += stage == "language" or reference_reason(stage, mine[1], mine[2]) == theirs[1]
            elif stage == "c4_quality":
                both_keep += 1
                text_agree += mine[3] == theirs[2]
        line = f"\n{name}: decision agreement {agree}/{len(ours)} = {agree / len(ours):.2%} (we keep {kept})"
        if both_reject:
            line += f"; same reason {reason_agree}/{both_reject}"
        if both_keep:
            line += f"; same edited text {text_agree}/{both_keep}"
        print(line)
        print("  per source: " + ", ".join(f"{s} {a}/{n}" for s, (a, n) in sorted(per_source.items())))
        for doc_id, mine, theirs in disagreements[:examples]:
            print(f"  differs: {source_of[doc_id]} {doc_id[:60]}: ours={mine[:3]} datatrove={theirs[:2]}")


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--reference-python", default="/tmp/dt-venv-filters/bin/python")
    parser.add_argument(
        "--reference-results",
        type=Path,
        help="reuse a `filters_reference.py decide` output (its documents only)",
    )
    parser.add_argument("--examples", type=int, default=8, help="disagreements shown per filter")
    args = parser.parse_args()
    records = load_corpus(args.data)
    if not records:
        print(f"no data under {args.data}; nothing to measure")
        return
    if args.reference_results:
        ref = [json.loads(line) for line in args.reference_results.read_text(encoding="utf-8").splitlines()]
        ref_ids = {row["id"] for row in ref}
        records = [record for record in records if record["id"] in ref_ids]
        ref_seconds = None
    else:
        ref, ref_seconds = run_reference(records, args.reference_python)
    ours, our_seconds = run_ours(records)
    report(records, ours, ref, args.examples)
    print(f"\nwall time, all filters one by one on every document: ours {our_seconds:.1f}s", end="")
    print(f", datatrove {ref_seconds:.1f}s" if ref_seconds else "")


if __name__ == "__main__":
    main()
