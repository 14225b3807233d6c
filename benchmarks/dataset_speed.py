"""Reader throughput and the pipeline cost of tokenizing and shuffling the kept output.

    PYTHONPATH=. .venv/bin/python benchmarks/dataset_speed.py --docs 20000 \
        [--parts pipeline reader shuffle] [--repeats 3]

1. pipeline: the same corpus through a recipe with no stages, `tokenizer = "none"` against the
   default tokenizer (the tokenize cost), and with the global shuffle + token-balanced shards.
2. reader: `pipeline.dataset.OutputStream` (one slot, and 16 slots in turn for texts; shuffle
   buffer 1000) against plain pyarrow reading the same token-balanced shards, each yielding the
   same type: texts (`iter_batches` + `to_pylist`), token ids as Python lists (`to_pylist` of
   whole batches, and of 256-row batches, the faster way on this data) and as numpy int32 arrays
   (one copied slice of the batch's values per document; the reader's `arrays=True`): docs/s and
   tokens/s. The readers take turns, `--repeats` rounds; the median round is printed (without
   `pipeline`, the output is written first, untimed, unless `--output` names one already written
   by that recipe).
3. shuffle: the global shuffle's own cost. The same kept rows (read from JSONL) written to 4
   shards by `WriteShards` alone (hash of the id picks the shard, rows in id order: the layout
   before the shuffle) and through `AssignShards` (seeded positions, shard starts from bucketed
   keys, rows in shuffled order), with a read-and-count pass as the baseline; one in-memory Beam
   worker, so the difference is the step's own work, not scheduling across processes.
Texts: ../shared/data prose (ABC transcripts, Brown, movie reviews), cycled with an index suffix.
CPU-seconds include child processes (Beam workers).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from common import DATA, arguments, cpu_seconds, skipped

from pipeline.dataset import OutputStream, kept_units
from pipeline.recipe import OutputConfig, load_recipe
from pipeline.run import run_recipe

QUALITY = DATA / "quality"


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


def plain_pyarrow(output: Path, columns: list[str], batch_size: int = 65536) -> tuple[int, int]:
    docs = tokens = 0
    for shard in sorted((output / "kept").glob("*.parquet")):
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=batch_size, columns=columns):
            for row in batch.to_pylist():
                docs += 1
                tokens += len(row.get("token_ids") or ())
    return docs, tokens


def pyarrow_arrays(output: Path) -> tuple[int, int]:
    """Token ids as numpy arrays straight from pyarrow: a copied slice of each batch's values."""
    docs = tokens = 0
    for shard in sorted((output / "kept").glob("*.parquet")):
        for batch in pq.ParquetFile(shard).iter_batches(columns=["token_ids"]):
            ids = batch.column(0)
            values, offsets = ids.values.to_numpy(), ids.offsets.to_pylist()
            for start, end in zip(offsets, offsets[1:]):
                docs += 1
                tokens += len(values[start:end].copy())
    return docs, tokens


def gristmill_reader(
    output: Path, columns: tuple[str, ...], arrays: bool = False, slots: int = 1
) -> tuple[int, int]:
    """Every slot's stream in turn (a slot may share a row group with the next one)."""
    docs = tokens = 0
    units = kept_units(str(output))
    for slot in range(slots):
        stream = OutputStream(units, buffer_size=1000, columns=columns, arrays=arrays, slot=slot, slots=slots)
        for row in stream:
            docs += 1
            tokens += len(row["token_ids"]) if "token_ids" in row else 0
    return docs, tokens


def readers(output: Path, repeats: int) -> list[dict]:
    """Part 2: each reader `repeats` times, in turns; the median round of each (by CPU-s)."""
    cases = {
        "pyarrow (id, text)": lambda: plain_pyarrow(output, ["id", "text"]),
        "OutputStream (id, text)": lambda: gristmill_reader(output, ("id", "text")),
        "OutputStream (id, text), 16 slots": lambda: gristmill_reader(output, ("id", "text"), slots=16),
        "pyarrow token_ids lists": lambda: plain_pyarrow(output, ["token_ids"]),
        "pyarrow token_ids lists, 256-row batches": lambda: plain_pyarrow(output, ["token_ids"], 256),
        "OutputStream token_ids lists": lambda: gristmill_reader(output, ("token_ids",)),
        "pyarrow token_ids numpy": lambda: pyarrow_arrays(output),
        "OutputStream token_ids numpy": lambda: gristmill_reader(output, ("token_ids",), arrays=True),
    }
    rounds = {name: [] for name in cases}
    for _ in range(repeats):
        for name, read in cases.items():
            rounds[name].append(timed(name, read))
    docs, tokens = rounds["pyarrow token_ids lists"][0]["value"]
    for name, runs in rounds.items():
        if {run["value"] for run in runs} != {(docs, tokens if "token_ids" in name else 0)}:
            raise SystemExit(f"{name} read {runs[0]['value']} (docs, tokens); pyarrow {(docs, tokens)}")
        print(f"{name}: CPU-s " + " ".join(str(run["cpu_s"]) for run in runs))
    return [sorted(runs, key=lambda run: run["cpu_s"])[len(runs) // 2] for runs in rounds.values()]


def write_kept(data: Path, out: Path, layout: str) -> int:
    """The corpus as kept rows through one in-memory Beam worker; `layout`: "read" (count only),
    "hash" (WriteShards alone) or "shuffle" (AssignShards + WriteShards). Rows written."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.document import Document
    from pipeline.kept_output import AssignShards, order_key
    from pipeline.writers import WriteShards, kept_row

    output = OutputConfig(shards=4)
    options = PipelineOptions(["--direct_running_mode=in_memory", "--direct_num_workers=1"])
    with beam.Pipeline(options=options) as pipeline:
        rows = (
            pipeline
            | beam.io.ReadFromText(str(data))
            | beam.Map(lambda line: kept_row(Document(**json.loads(line))))
        )
        written = (str(out), "kept", output.shards, 0, output.compression, output.row_group_mb)
        if layout == "read":
            _ = rows | beam.combiners.Count.Globally()
        elif layout == "hash":
            _ = rows | WriteShards(*written)
        else:
            keyed, count = rows | AssignShards(output, "bytes", str(out.parent / f"spill_{layout}"))
            sort_key = lambda row: order_key(row, output.shuffle_seed)  # noqa: E731
            _ = keyed | WriteShards(*written, keyed=True, shard_count=count, sort_key=sort_key)
    return sum(pq.ParquetFile(f).metadata.num_rows for f in (out / "kept").glob("*.parquet"))


TOKEN_BALANCED = 'tokenizer = "gristmill-bpe-32k"\ntarget_shard_tokens = 2000000\ntoken_ids = true'


def pipelines(work: Path, data: Path, workers: int) -> list[dict]:
    """Part 1: the recipe runs; the last one writes the token-balanced output the readers read."""
    results = []
    for name, output in (
        ("no_tokenizer", 'shards = 4\ntokenizer = "none"'),
        ("tokenized", 'shards = 4\ntokenizer = "gristmill-bpe-32k"'),
        ("token_balanced", TOKEN_BALANCED),
    ):
        counts = lambda n=name, o=output: run(work, data, n, o, workers)["counts"]  # noqa: E731
        results.append(timed(f"pipeline {name}", counts))
    return results


def shuffle(work: Path, data: Path, docs: int) -> list[dict]:
    """Part 3: kept rows read and counted, written without, and written with the global shuffle."""
    results = []
    for layout in ("read", "hash", "shuffle"):
        result = timed(f"kept rows: {layout}", lambda k=layout: write_kept(data, work / f"layout_{k}", k))
        if layout != "read" and result["value"] != docs:
            raise SystemExit(f"{layout}: {result['value']} rows written of {docs}")
        results.append({**result, "value": (docs, 0)})
    return results


def main() -> None:
    parser = arguments(__doc__, docs=20000, workers=2)
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=("pipeline", "reader", "shuffle"),
        default=["pipeline", "reader", "shuffle"],
    )
    parser.add_argument("--repeats", type=int, default=3, help="reader rounds (default: %(default)s)")
    parser.add_argument("--output", type=Path, help="a token-balanced output to read (reader part)")
    args = parser.parse_args()
    if skipped(QUALITY):
        return
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        data = work / "corpus.jsonl"
        corpus(data, args.docs)
        if "pipeline" in args.parts:
            results += pipelines(work, data, args.workers)
        if "reader" in args.parts:
            if "pipeline" not in args.parts and not args.output:
                run(work, data, "token_balanced", TOKEN_BALANCED, args.workers)
            results += readers(args.output or work / "token_balanced", args.repeats)
        if "shuffle" in args.parts:
            results += shuffle(work, data, args.docs)
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
