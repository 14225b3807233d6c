"""Cost of `unit_dedup` next to `minhash_dedup` and `semantic_dedup` (static embedder), one stage
per run, on the same corpus (dedup_minhash_speed's ~3 KB documents of real paragraphs, 20 %
near-duplicates, 30 % of paragraphs drawn at random so paragraphs repeat across documents).

    python benchmarks/dedup_units_speed.py --stage unit_dedup --docs 100000 --workers 2
    python benchmarks/dedup_units_speed.py --stage unit_dedup --corpus /tmp/lead/corpus-100k.jsonl

`--corpus` takes an existing JSONL of the same kind (e.g. made by make_corpus) instead of building
one; `--docs` is then its line count.

Prints wall time, CPU-seconds of the runner and its workers, peak RSS and the outcome counts
(ids written under $TMPDIR/units_speed).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from common import DATA, arguments, cached_corpus, skipped

from benchmarks.dedup_minhash_speed import make_corpus
from benchmarks.semantic_speed import measure_stage
from pipeline.outcomes import OUTCOMES
from pipeline.stages import STAGES, load_builtin_stages


def main() -> int:
    parser = arguments(__doc__, docs=100_000, workers=2)
    parser.add_argument(
        "--stage", default="unit_dedup", choices=("unit_dedup", "minhash_dedup", "semantic_dedup")
    )
    parser.add_argument("--corpus", type=Path, help="an existing JSONL corpus instead of --docs")
    args = parser.parse_args()
    if args.corpus:
        source = args.corpus
        with source.open() as f:
            args.docs = sum(1 for _ in f)
    elif skipped(DATA / "quality"):
        return 0
    else:
        source = cached_corpus("units_speed", args.docs, make_corpus)
    out = Path(tempfile.gettempdir()) / "units_speed" / f"out_{args.stage}_{args.docs}"
    shutil.rmtree(out, ignore_errors=True)
    load_builtin_stages()
    stage = STAGES[args.stage](args.stage)
    seconds, cpu_seconds, peak_rss = measure_stage(stage, source, out, args.workers)
    kept, rejected, failed = (sum(1 for f in out.glob(f"{kind}*") for _ in f.open()) for kind in OUTCOMES)
    print(
        f"{args.stage}: {args.docs} docs, {args.workers} workers: wall {seconds:.1f} s, CPU {cpu_seconds:.1f} s "
        f"({args.docs / cpu_seconds:.0f} docs per CPU-second), load average {os.getloadavg()[0]:.1f}, "
        f"peak RSS {peak_rss / 2**30:.2f} GiB, kept {kept}, rejected {rejected}, failed {failed}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
