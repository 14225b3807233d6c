"""Scoring speed per core: fasttext_quality, embedding_quality (static: one head, the default's
three heads, four with `coherent`), the default recipe's scoring chain with and without the
combined `quality` score, `toxicity`, and MiniLM fp32/bf16.

    python benchmarks/quality_speed.py [--data DIR] [--docs 5000] [--rounds 5] [--minilm-docs 16]

Every configuration is measured the same way: the same documents (~3 KB pieces of real text from
../shared/data, or stdlib docstrings without it), one untimed pass first (so every per-process
cache, e.g. the static embedder's word cache, is warm for all alike), then `rounds` timed passes,
in alternating order (forward in even rounds, backward in odd ones), each the CPU time of the
whole process (all threads; the main thread's share is printed too). Figures are medians over the
rounds, in docs per CPU-second, i.e. per-core speeds even on a shared, loaded machine. The lines
after the table are the issue's three aims: the default scoring's docs per CPU-second (>= 500),
3 heads / 1 head (per round, the two measured next to each other; >= 0.90) and what `quality`
adds to the chain (its own CPU-seconds inside the chain / the other stages'; < 5 %).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from common import arguments

from filters.toxicity import Toxicity
from pipeline.document import Document
from quality_models.combined import CombinedQuality
from quality_models.embedding_quality import EmbeddingQuality
from quality_models.fasttext_quality import FastTextQuality

DOC_CHARS = 3000
BATCH = 1000
DEFAULT_HEADS = ["informative", "depth", "toxic"]


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


def run_once(stage, docs: list[Document], batch: int = BATCH) -> tuple[float, float, float]:
    """(process CPU-s, main-thread CPU-s, wall-s) of one pass of stage.check_batch over `docs`."""
    cpu, thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
    for start in range(0, len(docs), batch):
        stage.check_batch(docs[start : start + batch])
    return time.process_time() - cpu, time.thread_time() - thread, time.perf_counter() - wall


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


def default_scorers() -> tuple:
    """The default recipe's scoring stages, as configured there."""
    return (
        FastTextQuality("fasttext_quality"),
        EmbeddingQuality("embedding_quality", model="", heads=DEFAULT_HEADS),
    )


def configurations() -> dict:
    """Label -> stage; `one` and `three` heads next to each other (their ratio is per round)."""
    return {
        "fasttext_quality": FastTextQuality("ft"),
        "embedding_quality static, one head": EmbeddingQuality("one", model="", heads=["informative"]),
        "embedding_quality static, 3 heads (default)": EmbeddingQuality(
            "three", model="", heads=DEFAULT_HEADS
        ),
        "embedding_quality static, 4 heads (+ coherent)": EmbeddingQuality(
            "four", model="", heads=["informative", "coherent", "depth", "toxic"]
        ),
        "default scoring: fasttext_quality + 3 heads": Chain(*default_scorers()),
        "default scoring: fasttext_quality + 3 heads + quality": Chain(
            *default_scorers(), CombinedQuality("quality")
        ),
        "toxicity": Toxicity("tox"),
    }


def rounds_of(stages: dict, docs: list[Document], rounds: int) -> dict[str, list[tuple]]:
    """Label -> one (process, main-thread, wall) seconds per round; `quality` shares kept per round."""
    for stage in stages.values():
        stage.setup()
        run_once(stage, docs)  # untimed: warm caches for every configuration alike
    times: dict[str, list[tuple]] = {label: [] for label in stages}
    chain = stages["default scoring: fasttext_quality + 3 heads + quality"]
    times["quality share"] = []
    for r in range(rounds):
        order = list(stages) if r % 2 == 0 else list(stages)[::-1]
        for label in order:
            chain.cpu = [0.0] * len(chain.stages)
            times[label].append(run_once(stages[label], docs))
            if stages[label] is chain:
                times["quality share"].append((chain.cpu[-1], sum(chain.cpu[:-1])))
    return times


def main() -> int:
    parser = arguments(__doc__, data=True, docs=5000)
    parser.add_argument("--rounds", type=int, default=5, help="timed passes per configuration")
    parser.add_argument("--minilm-docs", type=int, default=16, help="documents for MiniLM (0: skip)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    docs = documents(corpus(args.data), args.docs)
    times = rounds_of(configurations(), docs, args.rounds)
    n = len(docs)
    print(f"{n} documents of {DOC_CHARS} characters, batches of {BATCH}, {args.rounds} alternating rounds")
    print("| scorer | docs per CPU-second (median) | range | main thread's share of the CPU | docs/s wall |")
    print("|---|---|---|---|---|")
    rate = {}
    for label, runs in times.items():
        if label == "quality share":
            continue
        rates = [n / cpu for cpu, _, _ in runs]
        rate[label] = statistics.median(rates)
        main_share = sum(t for _, t, _ in runs) / sum(c for c, _, _ in runs)
        wall = statistics.median(n / w for _, _, w in runs)
        print(
            f"| {label} | {rate[label]:,.0f} | {min(rates):,.0f}-{max(rates):,.0f} | {main_share:.1%} | {wall:,.0f} |"
        )
    for label, name in (("MiniLM fp32", "minilm"), ("MiniLM bf16", "minilm-bf16")):
        if args.minilm_docs:
            stage = EmbeddingQuality(label, embedder=name)
            stage.setup()
            cpu, _, wall = run_once(stage, docs[: args.minilm_docs], batch=32)
            print(
                f"| {label} ({args.minilm_docs} docs, one pass) | {args.minilm_docs / cpu:,.1f} | | | {args.minilm_docs / wall:,.1f} |"
            )
    ratios = [
        one[0] / three[0]
        for one, three in zip(
            times["embedding_quality static, one head"], times["embedding_quality static, 3 heads (default)"]
        )
    ]
    shares = [q / rest for q, rest in times["quality share"]]
    chain = rate["default scoring: fasttext_quality + 3 heads + quality"]
    print(
        f"\nDefault scoring (fasttext_quality + 3 heads + quality): {chain:,.0f} docs per CPU-second (aim >= 500)"
    )
    print(
        f"3 heads / 1 head docs per CPU-second: median {statistics.median(ratios):.3f} "
        f"(rounds: {', '.join(f'{x:.3f}' for x in ratios)}; aim >= 0.90)"
    )
    print(
        f"quality adds to the chain: median {statistics.median(shares):.1%} "
        f"(rounds: {', '.join(f'{x:.1%}' for x in shares)}; aim < 5 %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
