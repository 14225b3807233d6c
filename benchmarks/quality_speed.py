"""Scoring speed per core of fasttext_quality and embedding_quality (MiniLM fp32, MiniLM bf16, static).

    python benchmarks/quality_speed.py [--data DIR] [--fasttext-docs 20000] [--minilm-docs 96]

Documents are ~3 KB pieces of real text from ../shared/data (or stdlib docstrings without it).
Everything runs on one thread (torch.set_num_threads(1)) and figures are docs per CPU-second of
this process (best of several runs for the fast scorers), so they read as per-core speeds even on a
shared, loaded machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.document import Document  # noqa: E402
from quality_models.embedding_quality import DEFAULT_EMBEDDING_HEAD, EmbeddingQuality  # noqa: E402
from quality_models.fasttext_quality import FastTextQuality  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
STATIC_HEAD = DEFAULT_EMBEDDING_HEAD.parents[1] / "embedding-quality-static" / "head.safetensors"
DOC_CHARS = 3000


def corpus(data: Path) -> str:
    """A long real text to cut documents from."""
    if data.is_dir():
        texts = []
        for name in ("brown_corpus.jsonl", "movie_reviews.jsonl", "abc_news_transcripts.jsonl"):
            with (data / "quality" / name).open(encoding="utf-8") as handle:
                texts += [json.loads(line)["text"] for line in handle]
        return "\n".join(texts)
    import inspect
    import json as module

    return "\n".join(inspect.getdoc(getattr(module, a)) or "" for a in dir(module)) * 50


def documents(text: str, n: int) -> list[Document]:
    """n documents of DOC_CHARS characters taken at staggered offsets of `text`."""
    step = max((len(text) - DOC_CHARS) // n, 1)
    return [Document(id=str(i), text=text[i * step : i * step + DOC_CHARS]) for i in range(n)]


def measure(stage, docs: list[Document], batch: int, repeats: int) -> tuple[float, float]:
    """Best of `repeats` (docs per CPU-second, docs per wall-second) of stage.check_batch over `docs`.

    The best run is the one least disturbed by other processes on a shared machine.
    """
    stage.check_batch(docs[:batch])  # warm-up
    best = (0.0, 0.0)
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        for start in range(0, len(docs), batch):
            stage.check_batch(docs[start : start + batch])
        rates = (len(docs) / (time.process_time() - cpu), len(docs) / (time.perf_counter() - wall))
        best = max(best, rates)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fasttext-docs", type=int, default=20000)
    parser.add_argument("--minilm-docs", type=int, default=96)
    parser.add_argument("--static-docs", type=int, default=5000)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    text = corpus(args.data)
    runs = [
        (
            "fasttext_quality (fastText, normalized bigrams)",
            FastTextQuality("ft"),
            args.fasttext_docs,
            1000,
            5,
        ),
        (
            "embedding_quality static",
            EmbeddingQuality("st", model=str(STATIC_HEAD)),
            args.static_docs,
            1000,
            3,
        ),
        (
            "embedding_quality minilm fp32",
            EmbeddingQuality("m32", embedder="minilm"),
            args.minilm_docs,
            32,
            1,
        ),
        (
            "embedding_quality minilm-bf16",
            EmbeddingQuality("m16", embedder="minilm-bf16"),
            args.minilm_docs,
            32,
            1,
        ),
    ]
    print(f"| scorer | docs ({DOC_CHARS} chars) | docs/s per core (CPU time) | docs/s wall, 1 thread |")
    print("|---|---|---|---|")
    for label, stage, n, batch, repeats in runs:
        stage.setup()
        per_cpu, per_wall = measure(stage, documents(text, n), batch, repeats)
        print(f"| {label} | {n} | {per_cpu:,.0f} | {per_wall:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
