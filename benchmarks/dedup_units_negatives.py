"""The wrong predicted pairs of `unit_dedup` on the units benchmark, by how they were made: a
document rejected as contained in (or left too short by) a page it shares no content line with,
or a unit cut from a page because a line of another lineage was judged its copy; by the kinds of
the two documents, with the two lines, so each "hard negative merged" can be read.

Reads the decisions written by dedup_units_decisions.py (same definitions as dedup_units_eval.py's
`score_units`: a rejection is wrong if the two documents share no content lineage, a cut if the
named document does not hold the cut line's lineage; template lines are not content).

    python benchmarks/dedup_units_decisions.py --only units --out /tmp/units.json
    python benchmarks/dedup_units_negatives.py --decisions /tmp/units.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import common  # noqa: F401  (puts this checkout first on sys.path)

from benchmarks.dedup_units_eval import NEGATIVE_KINDS, content, load
from dedup.content import units

MIN_WORDS = 8  # unit_dedup's default `min_words`, which the decisions were made with


def wrong_pairs(records: list[dict], decisions: dict) -> list[dict]:
    """Every wrong rejection and every wrong cut, with the kinds and the lines involved."""
    by_id = {r["id"]: r for r in records}
    found = []
    for doc_id, reason, survivor, detail in decisions["rejected"]:
        if not content(by_id[doc_id]["lineage"]) & content(by_id[survivor]["lineage"]):
            found.append({"how": f"rejected {reason}", "doc": doc_id, "holder": survivor, "detail": detail})
    for doc_id, _, cuts, _ in decisions["kept"]:
        record = by_id[doc_id]
        lines = record["text"].split("\n")
        spans = units(record["text"], MIN_WORDS)
        line_of = {start: i for i, start in enumerate(_starts(lines))}
        for index, survivor in cuts:
            line = line_of[spans[index][0]]
            lineage = record["lineage"][line]
            if lineage.startswith("tpl:") or lineage in set(by_id[survivor]["lineage"]):
                continue
            holder = by_id[survivor]
            copies = [
                text for text, lin in zip(holder["text"].split("\n"), holder["lineage"]) if lin != lineage
            ]
            found.append({"how": "unit cut", "doc": doc_id, "holder": survivor, "line": lines[line],
                          "holder_lines": [t for t in copies if _shared_words(t, lines[line]) >= 8]})  # fmt: skip
    for pair in found:
        pair["kinds"] = (by_id[pair["doc"]]["kind"], by_id[pair["holder"]]["kind"])
        pair["negative"] = any(kind in NEGATIVE_KINDS for kind in pair["kinds"])
    return found


def _starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return starts


def _shared_words(a: str, b: str) -> int:
    return len(set(a.lower().split()) & set(b.lower().split()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=Path, required=True, help="dedup_units_decisions.py's --out JSON")
    parser.add_argument("--units-bench", type=Path, default=Path("/tmp/i14_units_bench"))
    args = parser.parse_args()
    report = json.loads(args.decisions.read_text())
    for half in ("calib", "heldout"):
        path = args.units_bench / f"{half}.jsonl.gz"
        if f"units_{half}" not in report or not path.is_file():
            print(f"units_{half}: skipped (no decisions or no benchmark)")
            continue
        found = wrong_pairs(load(path), report[f"units_{half}"])
        tally = Counter((pair["how"], *pair["kinds"], pair["negative"]) for pair in found)
        print(f"units_{half}: {len(found)} wrong pair(s)")
        for (how, kind, holder_kind, negative), n in sorted(tally.items()):
            print(f"  {n} × {how}: {kind} → {holder_kind}{' (a negative kind)' if negative else ''}")
        for pair in found:
            print("   ", json.dumps(pair, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
