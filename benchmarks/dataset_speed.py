"""Reader throughput and the pipeline cost of tokenizing and shuffling the kept output.

    PYTHONPATH=. .venv/bin/python benchmarks/dataset_speed.py --docs 20000

1. reader: `pipeline.dataset.OutputStream` (one slot, shuffle buffer 1000) against plain pyarrow
   reading the same shards (`iter_batches` + `to_pylist`), texts and token ids: docs/s and tokens/s.
2. pipeline: the same corpus through a recipe with no stages, `tokenizer = "none"` against the
   default tokenizer (the tokenize cost), and with the global shuffle + token-balanced shards.
Texts: ../shared/data prose (ABC transcripts, Brown, movie reviews), cycled with an index suffix.
CPU-seconds include child processes (Beam workers).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.dataset import OutputStream, kept_units
from pipeline.recipe import load_recipe
from pipeline.run import run_recipe

ROOT = Path(__file__).resolve().parents[1]
QUALITY = ROOT.parent / "shared" / "data" / "quality"


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(label: str, function):
    wall, cpu = time.perf_counter(), cpu_seconds()
    value = function()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {"step": label, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "value": value}


def corpus(path: Path, docs: int) -> None:
    texts = []
    for name in ("abc_news_transcripts", "brown_corpus", "movie_reviews"):
        with open(QUALITY / f"{name}.jsonl", encoding="utf-8") as handle:
            texts += [json.loads(line)["text"] for line in handle]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(docs):
            out.write(json.dumps({"id": f"d{i:07d}", "text": f"{texts[i % len(texts)]} ({i})"}) + "\n")


def run(work: Path, data: Path, name: str, output: str, workers: int) -> dict:
    recipe = work / f"{name}.toml"
    recipe.write_text(f'[run]\nname = "{name}"\n[output]\n{output}\n[input]\npaths = ["{data}"]\n')
    args = [f"--direct_num_workers={workers}"]
    return run_recipe(load_recipe(str(recipe)), str(work / name), args).manifest


def plain_pyarrow(output: Path, columns: list[str]) -> tuple[int, int]:
    docs = tokens = 0
    for shard in sorted((output / "kept").glob("*.parquet")):
        for batch in pq.ParquetFile(shard).iter_batches(columns=columns):
            for row in batch.to_pylist():
                docs += 1
                tokens += len(row.get("token_ids") or ())
    return docs, tokens


def gristmill_reader(output: Path, columns: tuple[str, ...]) -> tuple[int, int]:
    docs = tokens = 0
    for row in OutputStream(kept_units(str(output), verify=False), buffer_size=1000, columns=columns):
        docs += 1
        tokens += len(row.get("token_ids") or ())
    return docs, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not QUALITY.is_dir():
        raise SystemExit(f"{QUALITY} is missing")
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        data = work / "corpus.jsonl"
        corpus(data, args.docs)
        for name, output in (
            ("no_tokenizer", 'shards = 4\ntokenizer = "none"'),
            ("tokenized", 'shards = 4\ntokenizer = "gristmill-bpe-32k"'),
            (
                "token_balanced",
                'tokenizer = "gristmill-bpe-32k"\ntarget_shard_tokens = 2000000\ntoken_ids = true',
            ),
        ):
            results.append(
                timed(
                    f"pipeline {name}", lambda n=name, o=output: run(work, data, n, o, args.workers)["counts"]
                )
            )
        ids = work / "token_balanced"
        for columns in (("id", "text"), ("token_ids",)):
            results.append(timed(f"pyarrow {columns}", lambda c=columns: plain_pyarrow(ids, list(c))))
            results.append(timed(f"gristmill reader {columns}", lambda c=columns: gristmill_reader(ids, c)))
    for result in results:
        docs = result["value"][0] if isinstance(result["value"], tuple) else args.docs
        rate = (
            f"{docs / result['wall_s']:,.0f} docs/s wall, {docs / max(result['cpu_s'], 1e-9):,.0f} docs/CPU-s"
        )
        if isinstance(result["value"], tuple) and result["value"][1]:
            rate += f", {result['value'][1] / result['wall_s']:,.0f} tokens/s"
        print(f"{result['step']:<40} {result['wall_s']:>8} s wall {result['cpu_s']:>8} CPU-s  {rate}")


if __name__ == "__main__":
    main()
