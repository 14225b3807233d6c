"""Observability at 100k documents: progress overhead, report size and render time, inspect time.

Builds a corpus of N documents from the real prose in ../shared/data (each source document
repeated with a distinct suffix, every 10th copy left exact, so dedup has clusters), runs a
filter + scorer + dedup recipe twice with 2 workers, once `--quiet` (no progress taps) and once
with live progress (plain lines), and reports wall and CPU seconds (this process's children:
driver and workers), the report's size and its render time in headless Chromium, and the time
of `gristmill inspect --json`. Skips cleanly without the data folder.

    python benchmarks/observability.py [--docs 100000] [--work /tmp/gristmill-observability]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from common import arguments

from benchmarks.filters_corpus import load_corpus

RECIPE = """[run]
name = "observability"
max_failed_fraction = 0.01

[output]
shards = 8

[input]
paths = ["{corpus}"]

[[stage]]
use = "language"
languages = ["en"]

[[stage]]
use = "gopher_quality"

[[stage]]
use = "fasttext_quality"

[[stage]]
use = "exact_dedup"
prefer_score = "fasttext_quality"
"""


def build_corpus(path: Path, docs: int) -> int:
    base = [d for d in load_corpus() if d["text"].strip()]
    if not base:
        return 0
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(docs):
            doc = base[i % len(base)]
            text = doc["text"] if i % 10 == 0 else f"{doc['text']}\n\nref {i}"
            handle.write(json.dumps({"id": f"d{i:07d}", "text": text, "url": doc["url"]}) + "\n")
    return len(base)


def timed(command: list[str], log: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of a command and all its descendants."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(log, "w") as handle:
        subprocess.run(command, check=True, stdout=handle, stderr=subprocess.STDOUT)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = arguments(__doc__, docs=100_000, workers=2)
    parser.add_argument("--work", default="/tmp/gristmill-observability")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl"
    if not corpus.exists() and not build_corpus(corpus, args.docs):
        print("skipped: ../shared/data not found")
        return 0
    recipe = work / "recipe.toml"
    recipe.write_text(RECIPE.format(corpus=corpus))
    run = [sys.executable, "-m", "pipeline.cli", "run", "--recipe", str(recipe)]
    beam = [f"--direct_num_workers={args.workers}"]
    rows = []
    for label, extra in (
        ("quiet (no progress)", ["--quiet"]),
        ("live progress", ["--progress-interval", "30"]),
    ):
        out = work / ("out-quiet" if extra == ["--quiet"] else "out")
        wall, cpu = timed([*run, "--output", str(out), *extra, *beam], work / f"{out.name}.log")
        rows.append((label, wall, cpu))
    lines = (work / "out.log").read_text().splitlines()
    manifest = json.loads((work / "out" / "manifest.json").read_text())
    report = work / "out" / "report.html"
    inspect_wall, inspect_cpu = timed(
        [sys.executable, "-m", "pipeline.cli", "inspect", str(work / "out"), "--json"], work / "inspect.json"
    )
    from tests.pipeline.browser import chromium, render

    rendered = render(report, work) if chromium() else None
    print(f"corpus: {args.docs} docs, {corpus.stat().st_size / 1e6:.1f} MB; counts {manifest['counts']}")
    for label, wall, cpu in rows:
        print(f"| {label} | {wall:.1f} | {cpu:.1f} |")
    print(
        f"progress lines: {sum(1 for line in lines if line.startswith('progress '))}; last: "
        f"{next((line for line in reversed(lines) if line.startswith('progress ')), '')}"
    )
    print(f"report.html: {report.stat().st_size / 1e6:.3f} MB")
    if rendered:
        import re

        render_ms = re.search(r'data-render-ms="(\d+)"', rendered["dom"]).group(1)
        print(
            f"chromium: load event at {render_ms} ms; --dump-dom wall {rendered['seconds']:.2f} s; "
            f"console lines {len(rendered['console'])}"
        )
    print(f"inspect --json: wall {inspect_wall:.1f} s, CPU {inspect_cpu:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
