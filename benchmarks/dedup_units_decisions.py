"""The decisions of `unit_dedup` (or `--stage minhash_dedup`; real Beam stage, in process) on fixed
corpora, to compare versions, and optionally a cProfile of each run.

Corpora: both halves of the dedup_units benchmark (dedup_units_build.py, from ../shared/data) and
the first `--speed-docs` documents of a speed corpus (`--corpus`, JSONL of id/text, e.g. made by
dedup_minhash_speed.make_corpus); each skipped when absent. For each corpus: kept (id, sha1 of the
text, `units_removed`, `unit_chars_removed`), rejected (id, reason, duplicate_of, detail) and
failed (id, error), sorted, written as JSON; `--compare OLD.json` says whether every corpus's
decisions are identical. `--profile DIR` writes DIR/<corpus>.pstats and prints the top functions.

    python benchmarks/dedup_units_decisions.py --out /tmp/after.json --compare /tmp/before.json
    python benchmarks/dedup_units_decisions.py --out /tmp/p.json --only speed --speed-docs 20000 --profile /tmp/prof
    python benchmarks/dedup_units_decisions.py --stage minhash_dedup --out /tmp/m.json --only speed --speed-docs 20000
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import itertools
import json
import pstats
import resource
import tempfile
import time
from pathlib import Path

import apache_beam as beam
import common  # noqa: F401  (puts this checkout first on sys.path)
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from benchmarks.dedup_units_eval import load
from benchmarks.semantic_decisions import finish
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.stages import STAGES, load_builtin_stages


def corpora(units_bench: Path, corpus: Path, speed_docs: int) -> dict[str, list[Document]]:
    """name → documents, for every corpus whose data is present."""
    found = {}
    for half in ("calib", "heldout"):
        if (units_bench / f"{half}.jsonl.gz").is_file():
            records = load(units_bench / f"{half}.jsonl.gz")
            found[f"units_{half}"] = [Document(r["id"], r["text"], language=r["language"]) for r in records]
    if corpus.is_file() and speed_docs:
        with corpus.open(encoding="utf-8") as f:
            records = [json.loads(line) for line in itertools.islice(f, speed_docs)]
        found[f"speed_{speed_docs}"] = [Document(r["id"], r["text"]) for r in records]
    return found


def _kept_row(doc: Document) -> list:
    text_hash = hashlib.sha1(doc.text.encode("utf-8", "surrogatepass")).hexdigest()
    return [
        "kept",
        doc.id,
        text_hash,
        doc.metadata.get("units_removed", []),
        doc.metadata.get("unit_chars_removed", 0),
    ]


def decisions(docs: list[Document], stage) -> tuple[dict[str, list], dict[str, int]]:
    """(sorted kept rows, rejections and failures; the stage's counters) of one in-process run."""
    options = PipelineOptions(["--direct_running_mode=in_memory", "--direct_num_workers=1"])
    with tempfile.TemporaryDirectory() as tmp:
        p = new_pipeline(options)
        out = stage.expand(p | beam.Create(docs))
        rows = (
            out.kept | "K" >> beam.Map(_kept_row),
            out.rejected
            | "R" >> beam.Map(lambda r: ["rejected", r.doc.id, r.reason, r.duplicate_of, r.detail]),
            out.failed | "F" >> beam.Map(lambda f: ["failed", f.id, f.error]),
        )
        _ = rows | beam.Flatten() | beam.Map(json.dumps) | beam.io.WriteToText(f"{tmp}/out")
        result = p.run()
        result.wait_until_finish()
        counters: dict[str, int] = {}  # a counter is reported per step: summed over steps
        for c in result.metrics().query(MetricsFilter().with_namespace(stage.name))["counters"]:
            counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
        lines = [json.loads(line) for f in Path(tmp).glob("out*") for line in f.open()]
    found = {
        kind: sorted(row[1:] for row in lines if row[0] == kind) for kind in ("kept", "rejected", "failed")
    }
    return found, dict(sorted(counters.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units-bench", type=Path, default=Path("/tmp/i14_units_bench"))
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/lead/corpus-100k.jsonl"))
    parser.add_argument("--speed-docs", type=int, default=2000)
    parser.add_argument("--only", help="run only the corpora whose name contains this")
    parser.add_argument("--stage", default="unit_dedup", choices=("unit_dedup", "minhash_dedup"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--profile", type=Path, help="folder for one cProfile .pstats per corpus")
    args = parser.parse_args()
    load_builtin_stages()
    report = {}
    for name, docs in corpora(args.units_bench, args.corpus, args.speed_docs).items():
        if args.only and args.only not in name:
            continue
        started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        result, counters = decisions(docs, STAGES[args.stage](args.stage))
        if profiler:
            profiler.disable()
            args.profile.mkdir(parents=True, exist_ok=True)
            profiler.dump_stats(args.profile / f"{name}.pstats")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        report[name] = result
        after = resource.getrusage(resource.RUSAGE_SELF)
        seconds = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        counts = {kind: len(rows) for kind, rows in result.items()}
        print(
            f"{name}: {len(docs)} docs, {counts}, wall {time.perf_counter() - started:.1f} s, CPU {seconds:.1f} s"
        )
        print(f"  counters: {counters}", flush=True)
    finish(args.out, args.compare, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
