"""What a resume saves: a run killed (kill -9) at a fraction of its time, then rerun.

    .venv/bin/python benchmarks/resume.py --docs 100000 [--kill-at 0.8] [--recipe recipes/fineweb.toml]

Four whole runs of the CLI with 2 workers on the same corpus (`dedup_memory`'s, cut into `--files`
input files, as a crawl comes): checkpoints off
(the cost of checkpoints), checkpoints on (the reference), the same run killed at `--kill-at` of
the reference's wall time, and the rerun that resumes it. Reports wall and CPU seconds of each,
what the rerun reused, and whether its shards are byte-identical to the reference's.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from common import DATA, arguments

from benchmarks.dedup_memory import measure


def split_corpus(corpus: Path, files: int) -> str:
    """The corpus as `files` JSONL files next to it (a crawl comes as many files); their glob."""
    folder = corpus.with_suffix(f".{files}-files")
    if not folder.is_dir():
        folder.mkdir()
        lines = corpus.read_text().splitlines(keepends=True)
        step = -(-len(lines) // files)
        for index in range(files):
            (folder / f"part-{index:03d}.jsonl").write_text("".join(lines[index * step : (index + 1) * step]))
    return str(folder / "*.jsonl")


def run(inputs: str, out: Path, args, checkpoints: str, kill_after: float = 0.0) -> dict:
    command = [sys.executable, "-m", "pipeline.cli", "run", "--quiet", "--recipe", args.recipe]
    command += ["--input", inputs, "--output", str(out), f"--direct_num_workers={args.workers}"]
    figures = measure([*command, f"--checkpoints={checkpoints}"], 1.0, disk=out, kill_after=kill_after)
    manifest = out / "manifest.json"
    figures["manifest"] = json.loads(manifest.read_text()) if manifest.exists() else None
    return figures


def shards(manifest: dict) -> dict:
    return {s["file"]: s["sha256"] for s in manifest["shards"]}


def line(name: str, figures: dict) -> str:
    return (
        f"| {name} | {figures['wall']:.0f} s | {figures['cpu']:.0f} | {figures['peak'] / 1e9:.2f} GB "
        f"| {figures['peak_disk'] / 1e9:.2f} GB |"
    )


def main() -> None:
    parser = arguments(__doc__, docs=100_000, workers=2)
    parser.add_argument("--recipe", default="recipes/fineweb.toml")
    parser.add_argument("--kill-at", type=float, default=0.8, help="fraction of the reference's wall time")
    parser.add_argument("--corpus", type=Path, help="reuse this JSONL")
    parser.add_argument("--files", type=int, default=16, help="input files the corpus is cut into")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus or args.work / f"memory-corpus-{args.docs}-3000.jsonl"
    if not corpus.exists():
        from benchmarks.dedup_minhash_speed import make_corpus

        if not (DATA / "quality").is_dir():
            print(f"skipped: no data at {DATA}")
            return
        make_corpus(corpus, args.docs)
    inputs = split_corpus(corpus, args.files)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        off = run(inputs, Path(tmp) / "off", args, "off")
        shutil.rmtree(Path(tmp) / "off")
        reference = run(inputs, Path(tmp) / "reference", args, "on")
        killed = run(inputs, Path(tmp) / "resumed", args, "on", kill_after=args.kill_at * reference["wall"])
        resumed = run(inputs, Path(tmp) / "resumed", args, "on")
    same = shards(resumed["manifest"]) == shards(reference["manifest"])
    counts = resumed["manifest"]["counts"]
    print(f"{args.recipe}, {args.docs} docs, {args.workers} workers, killed at {args.kill_at:.0%}")
    print("| run | wall | CPU-s | peak memory (all processes) | peak disk (output + work) |")
    print("|---|---|---|---|---|")
    for name, figures in (
        ("checkpoints off", off),
        ("checkpoints on", reference),
        (f"killed at {args.kill_at:.0%}", killed),
        ("rerun (resumes)", resumed),
    ):
        print(line(name, figures))
    print(f"reused: {json.dumps(resumed['manifest']['checkpoints'])}")
    print(f"rerun byte-identical to the uninterrupted run: {same}; counts {counts}")
    print(
        f"time to a finished output after the kill: {resumed['wall']:.0f} s resumed vs "
        f"{reference['wall']:.0f} s from zero ({1 - resumed['wall'] / reference['wall']:.0%} saved)"
    )


if __name__ == "__main__":
    main()
