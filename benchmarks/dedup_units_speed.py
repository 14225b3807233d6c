"""Cost of `unit_dedup` next to `minhash_dedup` and `semantic_dedup` (static embedder), one stage
per run, on the same corpus (dedup_minhash_speed's ~3 KB documents of real paragraphs, 20 %
near-duplicates, 30 % of paragraphs drawn at random so paragraphs repeat across documents).

    python benchmarks/dedup_units_speed.py --stage unit_dedup --docs 100000 --workers 2
    python benchmarks/dedup_units_speed.py --stage unit_dedup --corpus /tmp/lead/corpus-100k.jsonl

`--corpus` takes an existing JSONL of the same kind (e.g. made by make_corpus) instead of building
one; `--docs` is then its line count.

Prints wall time, CPU-seconds of the runner and its workers, peak RSS and the outcome counts
(written under $TMPDIR/units_speed: kept id, sha1 of the kept text and `units_removed`; rejected
id, `duplicate_of` and detail), and the md5 of those sorted lines, to compare decisions of two runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from common import DATA, arguments, cached_corpus, skipped

from benchmarks.dedup_minhash_speed import make_corpus
from benchmarks.semantic_speed import measure_stage
from pipeline.document import Document
from pipeline.outcomes import OUTCOMES
from pipeline.stages import STAGES, load_builtin_stages


def kept_row(doc: Document) -> str:
    """A kept document's id, the sha1 of its text and the units removed from it (to compare runs)."""
    text_hash = hashlib.sha1(doc.text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{doc.id}\t{text_hash}\t{json.dumps(doc.metadata.get('units_removed', []))}"


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
    seconds, cpu_seconds, peak_rss = measure_stage(stage, source, out, args.workers, kept_row)
    lines = {kind: sorted(line for f in out.glob(f"{kind}*") for line in f.open()) for kind in OUTCOMES}
    kept, rejected, failed = (len(lines[kind]) for kind in OUTCOMES)
    digest = hashlib.md5("".join(lines["kept"] + lines["rejected"]).encode()).hexdigest()
    print(
        f"{args.stage}: {args.docs} docs, {args.workers} workers: wall {seconds:.1f} s, CPU {cpu_seconds:.1f} s "
        f"({args.docs / cpu_seconds:.0f} docs per CPU-second), load average {os.getloadavg()[0]:.1f}, "
        f"peak RSS {peak_rss / 2**30:.2f} GiB, kept {kept}, rejected {rejected}, failed {failed}, decisions md5 {digest}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
