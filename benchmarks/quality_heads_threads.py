"""Why 3 heads measured 0.788 of one head's docs per CPU-second in quality_speed.py but 0.92-0.96 in
a direct check: the heads' matrix product on OpenBLAS's threads (issue 13).

    python benchmarks/quality_heads_threads.py [--data DIR] [--rounds 3]

Two setups, as measured before: A = quality_speed.py's (5,000 distinct ~3 KB documents, batches of
1,000), B = the direct check's (the 200 DCLM judged pages cut to 3,000 characters, repeated to
4,000 documents, batches of 256). Each with the heads scored as before this fix (as many BLAS
threads as OpenBLAS has) and as now (one BLAS thread, `one_blas_thread`), one head and three in
alternating order. Prints per configuration the process's and the main thread's CPU-seconds:
what is not the main thread's is OpenBLAS's worker threads (cProfile sees only the main thread).
"""

from __future__ import annotations

import contextlib
import json
import statistics

from common import arguments, skipped
from quality_speed import DEFAULT_HEADS, corpus, documents, run_once

from pipeline.document import Document
from quality_models import embedding_quality
from quality_models.embedders import one_blas_thread


def setups(data) -> dict[str, tuple[list[Document], int]]:
    """Setup name -> (documents, batch size)."""
    with (data / "quality" / "dclm_human_judged_dev.jsonl").open(encoding="utf-8") as handle:
        pages = [json.loads(line)["text"][:3000] for line in handle]
    repeated = [Document(id=str(i), text=pages[i % len(pages)]) for i in range(4000)]
    return {
        "A: 5,000 distinct docs, batches of 1,000": (documents(corpus(data), 5000), 1000),
        "B: 200 DCLM pages x 20, batches of 256": (repeated, 256),
    }


def main() -> int:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if skipped(args.data / "quality" / "dclm_human_judged_dev.jsonl"):
        return 0
    heads = {"1 head": ["informative"], "3 heads": DEFAULT_HEADS}
    stages = {k: embedding_quality.EmbeddingQuality(k, model="", heads=v) for k, v in heads.items()}
    blas = {"before (BLAS threads)": contextlib.nullcontext, "now (one BLAS thread)": one_blas_thread}
    for stage in stages.values():
        stage.setup()
    print(
        "| setup | heads scored | heads | docs per CPU-s (median) | CPU-s not on the main thread, per 1,000 docs | 3 / 1 heads |"
    )
    print("|---|---|---|---|---|---|")
    for setup, (docs, batch) in setups(args.data).items():
        for mode, limit in blas.items():
            embedding_quality.one_blas_thread = limit
            for stage in stages.values():
                run_once(stage, docs, batch)  # warm
            runs = {k: [] for k in stages}
            for r in range(args.rounds):
                for name in list(stages) if r % 2 == 0 else list(stages)[::-1]:
                    runs[name].append(run_once(stages[name], docs, batch))
            ratio = statistics.median(
                one[0] / three[0] for one, three in zip(runs["1 head"], runs["3 heads"])
            )
            for name, times in runs.items():
                rate = statistics.median(len(docs) / cpu for cpu, _, _ in times)
                other = statistics.median((cpu - main) * 1000 / len(docs) for cpu, main, _ in times)
                last = f"{ratio:.3f}" if name == "3 heads" else ""
                print(f"| {setup} | {mode} | {name} | {rate:,.0f} | {other:.3f} | {last} |", flush=True)
    embedding_quality.one_blas_thread = one_blas_thread
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
