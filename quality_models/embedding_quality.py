"""`embedding_quality`: sentence embedding + linear head (FineWeb-Edu style); writes scores[<name>].

The head is one safetensors file: tensors `weight` (dim,) and `bias` (1,), and a JSON header
(`metadata["gristmill"]`) naming the embedder, dims, head kind, training data and metrics. No pickle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register
from quality_models._paths import MODELS_DIR, PROJECT_DIR, resolve_model_path
from quality_models.embedders import EMBEDDER_NAMES, load_embedder

DEFAULT_EMBEDDING_HEAD = MODELS_DIR / "embedding-quality-minilm" / "head.safetensors"
HEAD_KINDS = ("logistic", "linear")


@dataclass
class LinearHead:
    """score = sigmoid(w·x + b) for `logistic` heads (a probability), w·x + b for `linear` ones."""

    embedder: str
    weight: np.ndarray
    bias: float
    kind: str = "logistic"
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.weight.shape[0])

    def score(self, embeddings: np.ndarray) -> np.ndarray:
        """Scores for an (n, dim) embedding array."""
        logits = embeddings.astype(np.float64) @ self.weight.astype(np.float64) + self.bias
        if self.kind == "logistic":
            return 1.0 / (1.0 + np.exp(-logits))
        return logits

    def save(self, path: Path) -> None:
        """Write the head and its metadata as one safetensors file."""
        from safetensors.numpy import save_file

        meta = {"embedder": self.embedder, "dim": self.dim, "kind": self.kind, **self.info}
        tensors = {
            "weight": np.ascontiguousarray(self.weight, dtype=np.float32),
            "bias": np.array([self.bias], dtype=np.float32),
        }
        save_file(tensors, str(path), metadata={"gristmill": json.dumps(meta, sort_keys=True)})

    @classmethod
    def load(cls, path: Path) -> LinearHead:
        """Read a head; RuntimeError naming the file if it is missing, corrupt or inconsistent."""
        from safetensors import safe_open

        if not path.is_file():
            raise RuntimeError(f"embedding head file not found: {path}")
        try:
            with safe_open(str(path), framework="numpy") as handle:
                meta = json.loads((handle.metadata() or {})["gristmill"])
                weight = handle.get_tensor("weight")
                bias = float(handle.get_tensor("bias")[0])
        except Exception as exc:  # safetensors raises its own error types for bad headers
            raise RuntimeError(
                f"embedding head file {path} is corrupt or not a gristmill head: {exc}"
            ) from exc
        if meta.get("embedder") not in EMBEDDER_NAMES or meta.get("kind") not in HEAD_KINDS:
            raise RuntimeError(f"embedding head {path}: bad embedder/kind in metadata {meta}")
        if weight.shape != (meta.get("dim"),):
            raise RuntimeError(f"embedding head {path}: weight shape {weight.shape} != dim {meta.get('dim')}")
        info = {k: v for k, v in meta.items() if k not in ("embedder", "dim", "kind")}
        return cls(meta["embedder"], weight, bias, meta["kind"], info)


@register("embedding_quality")
class EmbeddingQuality(DocumentStage):
    """Score documents with an embedding model plus a linear head (FineWeb-Edu style); writes scores[<name>].

    The head file names its embedder (`minilm`, `minilm-bf16` or `static`); `embedder` overrides it
    with a compatible one (same dims, e.g. `minilm` for a `minilm-bf16` head). Logistic heads give a
    probability in [0, 1]. Never rejects (reasons: none); `score_threshold` decides.
    """

    reasons = ()
    params = {
        "model": Param(
            str,
            str(DEFAULT_EMBEDDING_HEAD.relative_to(PROJECT_DIR)),
            "head (.safetensors) to score with (relative: to the project)",
        ),
        "embedder": Param(
            str, "", "embedder to use instead of the head's own (same dims)", choices=("", *EMBEDDER_NAMES)
        ),
        "batch_size": Param(int, 64, "documents embedded per batch", min=1),
    }

    def configure(self) -> None:
        if not resolve_model_path(self.model).is_file():
            raise ConfigError(f"model: embedding head file not found: {self.model}")
        self._head: LinearHead | None = None
        self._embedder = None

    def setup(self) -> None:
        head = LinearHead.load(resolve_model_path(self.model))
        embedder = load_embedder(self.embedder or head.embedder)
        if embedder.dim != head.dim:
            raise RuntimeError(
                f"embedding head {self.model} expects {head.dim} dims, embedder {embedder.name} gives {embedder.dim}"
            )
        self._head, self._embedder = head, embedder

    def __getstate__(self) -> dict[str, Any]:
        # Models are loaded per worker in setup(); never pickle them with the stage.
        return {**self.__dict__, "_head": None, "_embedder": None}

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        if self._head is None:
            self.setup()
        scores = self._head.score(self._embedder.encode([d.text for d in docs], batch_size=self.batch_size))
        return [keep(doc.with_scores({self.name: float(score)})) for doc, score in zip(docs, scores)]
