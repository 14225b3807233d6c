"""The decisions of `semantic_dedup` (real Beam stage, in process) on fixed corpora, to compare versions.

Corpora: sample_data/*.jsonl (in the repository), the document benchmark of semantic_docs.py and
the two halves of the dedup_units benchmark (both from ../shared/data; skipped without it). For
each corpus: sorted kept ids, (rejected id, reason, duplicate_of) and (failed id, error), written
as JSON; `--compare OLD.json` reports whether every corpus's decisions are identical.

    python benchmarks/semantic_decisions.py --out /tmp/after.json --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import apache_beam as beam

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.common import DATA  # noqa: E402
from benchmarks.dedup_units_eval import load  # noqa: E402
from benchmarks.semantic_docs import build_corpus  # noqa: E402
from dedup.semantic import SemanticDedup  # noqa: E402
from pipeline.document import Document  # noqa: E402
from pipeline.run import new_pipeline  # noqa: E402


def corpora(data: Path, units_bench: Path) -> dict[str, list[Document]]:
    """name → documents, for every corpus whose data is present."""
    found = {}
    sample = []
    for path in sorted((REPO / "sample_data").glob("*.jsonl")):
        sample += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    found["sample_data"] = [Document(r["id"], r.get("text") or r.get("prompt") or "") for r in sample]
    if (data / "quality").is_dir():
        found["semantic_docs"] = build_corpus(data, 0)[0]
    for half in ("calib", "heldout"):
        if (units_bench / f"{half}.jsonl.gz").is_file():
            records = load(units_bench / f"{half}.jsonl.gz")
            found[f"units_{half}"] = [Document(r["id"], r["text"], language=r["language"]) for r in records]
    return found


def decisions(docs: list[Document], stage: SemanticDedup) -> dict[str, list]:
    """Sorted kept ids, rejections and failures of one run of the stage."""
    with tempfile.TemporaryDirectory() as tmp:
        with new_pipeline() as p:
            out = stage.expand(p | beam.Create(docs))
            rows = (
                out.kept | "K" >> beam.Map(lambda d: ["kept", d.id]),
                out.rejected | "R" >> beam.Map(lambda r: ["rejected", r.doc.id, r.reason, r.duplicate_of]),
                out.failed | "F" >> beam.Map(lambda f: ["failed", f.id, f.error]),
            )
            _ = rows | beam.Flatten() | beam.Map(json.dumps) | beam.io.WriteToText(f"{tmp}/out")
        lines = [json.loads(line) for f in Path(tmp).glob("out*") for line in f.open()]
    return {
        kind: sorted(row[1:] for row in lines if row[0] == kind) for kind in ("kept", "rejected", "failed")
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--units-bench", type=Path, default=Path("/tmp/i14_units_bench"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    variants = {"defaults": {}, "all_languages": {"languages": []}}
    report = {}
    for name, docs in corpora(args.data, args.units_bench).items():
        for variant, params in variants.items():
            if variant != "defaults" and not name.startswith("units_"):
                continue
            started = time.perf_counter()
            result = decisions(docs, SemanticDedup("semantic_dedup", **params))
            report[f"{name}/{variant}"] = result
            counts = {kind: len(rows) for kind, rows in result.items()}
            print(
                f"{name}/{variant}: {len(docs)} docs, {counts}, {time.perf_counter() - started:.1f} s",
                flush=True,
            )
    finish(args.out, args.compare, report)
    return 0


def finish(out: Path, old: Path | None, report: dict) -> None:
    """Print this process's CPU and peak memory, write the report to `out`, compare it with `old`."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"CPU {usage.ru_utime + usage.ru_stime:.1f} s, peak RSS {usage.ru_maxrss / 2**20:.2f} GiB")
    out.write_text(json.dumps(report))
    if old:
        compare(json.loads(old.read_text()), report)


def compare(old: dict, report: dict) -> None:
    """Print, per corpus of either report, whether its decisions are identical, and samples of the differences."""
    for key in sorted(set(old) | set(report)):
        if key not in old or key not in report:
            print(f"{key}: only in the {'new' if key in report else 'old'} report")
            continue
        same = old[key] == report[key]
        print(f"{key}: {'identical' if same else 'DIFFERENT'}")
        if not same:
            for kind in ("kept", "rejected", "failed"):
                a, b = {json.dumps(r) for r in old[key][kind]}, {json.dumps(r) for r in report[key][kind]}
                print(f"  {kind}: only before {sorted(a - b)[:5]}, only after {sorted(b - a)[:5]}")


if __name__ == "__main__":
    raise SystemExit(main())
