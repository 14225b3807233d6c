"""cProfile of one dedup stage on a JSONL corpus with the in-process runner, reading the corpus
from its file (no `beam.Create`, whose compression of the input would dominate the profile), and
the md5 of its decisions in `dedup_units_speed.py`'s format (kept id, sha1 of the text,
`units_removed`; rejected id, `duplicate_of`, detail), to compare with a run of that script.

    python benchmarks/dedup_units_profile.py --corpus /tmp/lead/corpus-20k.jsonl --profile /tmp/after.pstats
    python benchmarks/dedup_units_profile.py --corpus /tmp/lead/corpus-20k.jsonl --stage minhash_dedup
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import resource
import tempfile
import time
from pathlib import Path

import apache_beam as beam
import common  # noqa: F401  (puts this checkout first on sys.path)
from apache_beam.metrics.metric import MetricsFilter

from benchmarks.dedup_units_speed import kept_row
from benchmarks.semantic_speed import to_document
from pipeline.beam_stages import RunCollectionStage
from pipeline.outcomes import OUTCOMES
from pipeline.run import new_pipeline, pipeline_options
from pipeline.stages import STAGES, load_builtin_stages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--stage", default="unit_dedup", choices=("unit_dedup", "minhash_dedup"))
    parser.add_argument("--profile", type=Path, help="write the cProfile stats here (else no profiler)")
    args = parser.parse_args()
    if not args.corpus.is_file():
        print(f"skipped: {args.corpus} not found")
        return 0
    load_builtin_stages()
    options = pipeline_options(["--direct_running_mode=in_memory", "--direct_num_workers=1"])
    profiler = cProfile.Profile() if args.profile else None
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    with tempfile.TemporaryDirectory() as out:
        if profiler:
            profiler.enable()
        p = new_pipeline(options)
        result = (
            p
            | beam.io.ReadFromText(str(args.corpus))
            | beam.Map(to_document)
            | RunCollectionStage(STAGES[args.stage](args.stage))
        )
        _ = result.kept | "K" >> beam.Map(kept_row) | "WK" >> beam.io.WriteToText(f"{out}/kept")
        rejected = result.rejected | "R" >> beam.Map(lambda r: f"{r.doc.id}\t{r.duplicate_of}\t{r.detail}")
        _ = rejected | "WR" >> beam.io.WriteToText(f"{out}/rejected")
        _ = (
            result.failed
            | "F" >> beam.Map(lambda f: f"{f.id}\t{f.error}")
            | "WF" >> beam.io.WriteToText(f"{out}/failed")
        )
        run = p.run()
        run.wait_until_finish()
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        lines = {
            kind: sorted(line for f in Path(out).glob(f"{kind}*") for line in f.open()) for kind in OUTCOMES
        }
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    digest = hashlib.md5("".join(lines["kept"] + lines["rejected"]).encode()).hexdigest()
    counters: dict[str, int] = {}  # a counter is reported per step: summed over steps
    for c in run.metrics().query(MetricsFilter().with_namespace(args.stage))["counters"]:
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    kept, rejected_count, failed = (len(lines[kind]) for kind in OUTCOMES)
    print(
        f"{args.stage} {args.corpus}: wall {time.perf_counter() - started:.1f} s, CPU {cpu:.1f} s, kept {kept}, "
        f"rejected {rejected_count}, failed {failed}, decisions md5 {digest}"
    )
    print(f"counters: {dict(sorted(counters.items()))}")
    if profiler:
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats(r"(dedup|pipeline)/", 30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
