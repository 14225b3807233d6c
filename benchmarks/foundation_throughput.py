"""Throughput of the plumbing: read JSONL → length → exact_dedup → sharded Parquet.

Generates N documents (~1 KB each, 5% exact duplicates) and runs the pipeline with 1 and with 2
worker processes, reporting docs/s, docs/s per worker and the peak RSS of the whole process tree.

    .venv/bin/python benchmarks/foundation_throughput.py --docs 100000
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

from common import arguments

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no what up out who them some "
    "river market season engine village theory garden signal harbour method letter winter council"
).split()


def make_corpus(path: str, docs: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "w") as handle:
        previous = []
        for i in range(docs):
            if previous and rng.random() < 0.05:
                text = rng.choice(previous)
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(120, 220)))
                previous = (previous + [text])[-100:]
            handle.write(json.dumps({"id": f"doc{i:07d}", "text": text}) + "\n")


RECIPE = """[run]
name = "bench"
[output]
shards = 4
[input]
paths = ["{path}"]
split_bytes = 16777216
[[stage]]
use = "length"
[[stage]]
use = "exact_dedup"
"""


def run(recipe: str, output: str, workers: int) -> dict:
    command = [
        sys.executable,
        "-m",
        "pipeline.cli",
        "run",
        "--recipe",
        recipe,
        "--output",
        output,
        "--quiet",
        f"--direct_num_workers={workers}",
        "--direct_running_mode=multi_processing",
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    with open(os.path.join(output, "manifest.json")) as handle:
        manifest = json.load(handle)
    return {"seconds": seconds, "counts": manifest["counts"]}


def main() -> None:
    parser = arguments(__doc__, docs=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "corpus.jsonl")
        make_corpus(data, args.docs)
        recipe = os.path.join(scratch, "recipe.toml")
        with open(recipe, "w") as handle:
            handle.write(RECIPE.format(path=data))
        print(f"corpus: {args.docs} docs, {os.path.getsize(data) / 1e6:.1f} MB")
        for workers in (1, 2):
            result = run(recipe, os.path.join(scratch, f"out{workers}"), workers)
            rate = args.docs / result["seconds"]
            print(
                f"workers={workers}: {result['seconds']:.1f} s wall, {rate:,.0f} docs/s, "
                f"{rate / workers:,.0f} docs/s per worker, counts={result['counts']}"
            )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of the largest child process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
