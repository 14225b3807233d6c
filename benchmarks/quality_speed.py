"""Scoring speed per core: fasttext_quality, embedding_quality (static: one head, the default's
three heads, four with `coherent`; MiniLM fp32/bf16), the combined `quality` score, the default
recipe's scoring chain, and `toxicity`.

    python benchmarks/quality_speed.py [--data DIR] [--fasttext-docs 20000] [--minilm-docs 96] [--rounds 5]

Then, on the same documents: each stage's CPU-seconds in the default chain + `quality` (what
`quality` adds), and one head against three in alternating runs (their median ratio).

Documents are ~3 KB pieces of real text from ../shared/data (or stdlib docstrings without it).
Everything runs on one thread (torch.set_num_threads(1)) and figures are docs per CPU-second of
this process (best of several runs for the fast scorers), so they read as per-core speeds even on a
shared, loaded machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from common import arguments

from filters.toxicity import Toxicity
from pipeline.document import Document
from quality_models.combined import CombinedQuality
from quality_models.embedding_quality import EmbeddingQuality
from quality_models.fasttext_quality import FastTextQuality

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


class Chain:
    """Stages run one after the other on each batch, as the default recipe's scoring runs.

    `cpu[i]` accumulates the CPU-seconds of stage i, so one run gives each stage's share.
    """

    def __init__(self, *stages) -> None:
        self.stages = stages
        self.cpu = [0.0] * len(stages)

    def setup(self) -> None:
        for stage in self.stages:
            stage.setup()

    def check_batch(self, docs: list[Document]) -> list:
        for i, stage in enumerate(self.stages):
            start = time.process_time()
            docs = [v.doc or d for v, d in zip(stage.check_batch(docs), docs)]
            self.cpu[i] += time.process_time() - start
        return docs


def shares(docs: list[Document], batch: int, rounds: int) -> None:
    """CPU-seconds of each stage of the default chain + `quality`, and `quality` against the rest.

    One chain, so every stage sees the same documents under the same load; `rounds` passes.
    """
    chain = Chain(*default_scorers(), CombinedQuality("quality"))
    chain.setup()
    measure(chain, docs, batch, 1)
    print(f"\nCPU-seconds per stage, default chain + quality, {rounds} passes over {len(docs)} documents:")
    for _ in range(rounds):
        chain.cpu = [0.0] * len(chain.stages)
        measure(chain, docs, batch, 1)
        rest = sum(chain.cpu[:-1])
        parts = ", ".join(f"{stage.name} {cpu:.3f}" for stage, cpu in zip(chain.stages, chain.cpu))
        print(f"- {parts}; quality adds {chain.cpu[-1] / rest:.1%} to the chain")


def heads_ratio(docs: list[Document], batch: int, rounds: int) -> None:
    """One head against three, alternating runs on the same documents (load drifts between runs)."""
    one = EmbeddingQuality("one", model="", heads=["informative"])
    three = EmbeddingQuality("three", model="", heads=["informative", "depth", "toxic"])
    one.setup()
    three.setup()
    ratios = []
    for _ in range(rounds):
        rate_one, rate_three = measure(one, docs, batch, 1)[0], measure(three, docs, batch, 1)[0]
        ratios.append(rate_three / rate_one)
        print(f"- one head {rate_one:,.0f}, three heads {rate_three:,.0f} docs per CPU-second")
    print(f"3 heads / 1 head, median of {rounds}: {sorted(ratios)[rounds // 2]:.3f}")


def default_scorers() -> tuple:
    """The default recipe's scoring stages, as configured there."""
    return (
        FastTextQuality("fasttext_quality"),
        EmbeddingQuality("embedding_quality", model="", heads=["informative", "depth", "toxic"]),
    )


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--fasttext-docs", type=int, default=20000)
    parser.add_argument("--minilm-docs", type=int, default=96)
    parser.add_argument("--static-docs", type=int, default=5000)
    parser.add_argument(
        "--rounds", type=int, default=5, help="passes for the per-stage shares and head ratio"
    )
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
            "embedding_quality static, one head (informative)",
            EmbeddingQuality("st", model="", heads=["informative"]),
            args.static_docs,
            1000,
            3,
        ),
        (
            "embedding_quality static, 3 heads (default: informative, depth, toxic)",
            EmbeddingQuality("st", model="", heads=["informative", "depth", "toxic"]),
            args.static_docs,
            1000,
            3,
        ),
        (
            "embedding_quality static, 4 heads (+ coherent: sentence features)",
            EmbeddingQuality("st", model="", heads=["informative", "coherent", "depth", "toxic"]),
            args.static_docs,
            1000,
            3,
        ),
        (
            "default scoring: fasttext_quality + 3 heads",
            Chain(*default_scorers()),
            args.static_docs,
            1000,
            3,
        ),
        (
            "default scoring: fasttext_quality + 3 heads + quality",
            Chain(*default_scorers(), CombinedQuality("quality")),
            args.static_docs,
            1000,
            3,
        ),
        ("toxicity (word lists + learned model)", Toxicity("tox"), args.static_docs, 1000, 3),
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
    docs = documents(text, args.static_docs)
    shares(docs, 1000, args.rounds)
    print(
        f"\nOne embedding pass, one head vs three, {args.rounds} alternating runs over {len(docs)} documents:"
    )
    heads_ratio(docs, 1000, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
