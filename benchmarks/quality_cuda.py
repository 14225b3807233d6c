"""MiniLM on a CUDA device: the embedders' automatic GPU path (bf16), its speed and its agreement
with fp32 on the CPU.

    python benchmarks/quality_cuda.py [--data DIR] [--docs 20000] [--batch-sizes 64 256]

Needs torch with a CUDA device (exits 2 without one). `embedding_quality` is set up as a recipe
sets it up, with the shipped MiniLM head and nothing about devices, and the script reports:
- the device and precision its embedder chose (CUDA and bf16 expected);
- docs per second (wall) and per CPU-second over `--docs` real crawl pages (the DCLM judged pages,
  the article-extraction full pages and the cc_net heads of ../shared/data, cycled), for each
  batch size (64 is the stage's default), after one untimed batch, with the GPU's peak memory;
- the same machine's CPU in fp32 (all its cores) over the distinct pages, for comparison;
- agreement with that CPU run on the distinct pages: the embeddings' cosine, the head score's
  largest difference and rank correlation, and each side's ROC-AUC against the human labels.
"""

from __future__ import annotations

import time

import numpy as np
from common import arguments, skipped
from quality_eval import read_jsonl, spearman

from pipeline.document import Document
from quality_models.embedders import MiniLMEmbedder, load_embedder
from quality_models.embedding_quality import DEFAULT_EMBEDDING_HEAD, EmbeddingQuality, LinearHead
from quality_models.train import roc_auc

STAGE_BATCH = 1000  # documents per check_batch call, as a Beam bundle hands them over


def crawl_pages(data) -> tuple[list[str], np.ndarray]:
    """Real crawl pages, the DCLM judged ones first, and the judged pages' labels."""
    judged = read_jsonl(data / "quality" / "dclm_human_judged_dev.jsonl")
    texts = [r["text"] for r in judged]
    for name in ("article_extraction/full_page_text.jsonl", "ccnet_head_0091.jsonl", "ccnet_head_0174.jsonl"):
        texts += [r["text"] for r in read_jsonl(data / "web" / name)]
    return texts, np.array([r["label"] for r in judged])


def timed(stage: EmbeddingQuality, docs: list[Document]) -> tuple[float, float]:
    """(wall-s, CPU-s) of stage.check_batch over `docs`, STAGE_BATCH at a time."""
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(docs), STAGE_BATCH):
        stage.check_batch(docs[start : start + STAGE_BATCH])
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    parser = arguments(__doc__, data=True, docs=20000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256])
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: torch.cuda.is_available() is False")
        return 2
    if skipped(args.data / "quality" / "dclm_human_judged_dev.jsonl"):
        return 0
    texts, labels = crawl_pages(args.data)
    docs = [Document(id=str(i), text=texts[i % len(texts)]) for i in range(args.docs)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {torch.get_num_threads()} CPU threads")
    print(
        f"{len(texts)} distinct crawl pages ({sum(map(len, texts)) / len(texts):,.0f} characters on average)"
    )

    print("\n| batch_size | docs/s (wall) | docs per CPU-second | GPU peak memory |\n|---|---|---|---|")
    for batch_size in args.batch_sizes:
        stage = EmbeddingQuality("embedding_quality", batch_size=batch_size)
        stage.setup()
        stage.check_batch(docs[:batch_size])  # untimed: CUDA context, kernels, allocator
        torch.cuda.reset_peak_memory_stats()
        wall, cpu = timed(stage, docs)
        peak = torch.cuda.max_memory_allocated() / 2**20
        print(f"| {batch_size} | {len(docs) / wall:,.0f} | {len(docs) / cpu:,.0f} | {peak:,.0f} MiB |")
    gpu = load_embedder("minilm-bf16")  # the one the stage loaded (one per process)
    print(f"\nembedder {gpu.name!r} chose device {gpu.device!r}, bf16={gpu.bf16}")

    cpu_embedder = MiniLMEmbedder(bf16=False, device="cpu")
    start = time.perf_counter()
    on_cpu = cpu_embedder.encode(texts)
    cpu_wall = time.perf_counter() - start
    print(
        f"same machine's CPU, fp32, {torch.get_num_threads()} threads: {len(texts) / cpu_wall:,.0f} docs/s (wall)"
    )

    on_gpu = gpu.encode(texts)
    cosine = (on_gpu * on_cpu).sum(axis=1)
    head = LinearHead.load(DEFAULT_EMBEDDING_HEAD)
    gpu_scores, cpu_scores = head.score(on_gpu), head.score(on_cpu)
    judged = len(labels)
    print(
        f"GPU bf16 vs CPU fp32 on {len(texts)} pages: cosine min {cosine.min():.4f}, median "
        f"{np.median(cosine):.4f}; head score max |diff| {np.abs(gpu_scores - cpu_scores).max():.4f}, "
        f"Spearman {spearman(gpu_scores, cpu_scores):.4f}; ROC-AUC vs the {judged} human labels: "
        f"GPU {roc_auc(labels, gpu_scores[:judged]):.4f}, CPU {roc_auc(labels, cpu_scores[:judged]):.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
