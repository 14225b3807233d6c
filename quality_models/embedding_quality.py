"""`embedding_quality`: one embedding pass, several linear heads (FineWeb-Edu style).

A head is one safetensors file: tensors `weight` (dim,) and `bias` (1,), and a JSON header
(`metadata["gristmill"]`) naming the embedder, dims, head kind, input features, training data and
metrics. No pickle. Inputs (`features`): `embedding` (the document vector) or
`embedding+coherence` (plus quality_models/coherence.py's features, static embedder only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register
from quality_models._paths import (
    MODELS_DIR,
    PROJECT_DIR,
    english_model_caveat,
    is_shipped,
    resolve_model_path,
)
from quality_models.coherence import FEATURES as COHERENCE_FEATURES
from quality_models.embedders import EMBEDDER_NAMES, embedder_dim, load_embedder

DEFAULT_EMBEDDING_HEAD = MODELS_DIR / "embedding-quality-minilm" / "head.safetensors"
HEADS_DIR = MODELS_DIR / "heads"
HEAD_KINDS = ("logistic", "linear")
HEAD_FEATURES = ("embedding", "embedding+coherence")


@dataclass
class LinearHead:
    """score = sigmoid(w·x + b) for `logistic` heads (a probability), w·x + b for `linear` ones."""

    embedder: str
    weight: np.ndarray
    bias: float
    kind: str = "logistic"
    info: dict[str, Any] = field(default_factory=dict)
    features: str = "embedding"

    @property
    def dim(self) -> int:
        return int(self.weight.shape[0])

    def score(self, embeddings: np.ndarray, coherence: np.ndarray | None = None) -> np.ndarray:
        """Scores for an (n, dim) embedding array (with coherence features when the head uses them)."""
        return HeadStack([self]).score(embeddings, coherence)[:, 0]

    def save(self, path: Path) -> None:
        """Write the head and its metadata as one safetensors file."""
        from safetensors.numpy import save_file

        meta = {
            "embedder": self.embedder,
            "dim": self.dim,
            "kind": self.kind,
            "features": self.features,
            **self.info,
        }
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
        features = meta.get("features", "embedding")
        if (
            meta.get("embedder") not in EMBEDDER_NAMES
            or meta.get("kind") not in HEAD_KINDS
            or features not in HEAD_FEATURES
        ):
            raise RuntimeError(f"embedding head {path}: bad embedder/kind/features in metadata {meta}")
        if weight.shape != (meta.get("dim"),):
            raise RuntimeError(f"embedding head {path}: weight shape {weight.shape} != dim {meta.get('dim')}")
        if not (np.isfinite(weight).all() and np.isfinite(bias)):  # every score would be NaN
            raise RuntimeError(f"embedding head {path}: its weight or bias holds NaN or infinity")
        info = {k: v for k, v in meta.items() if k not in ("embedder", "dim", "kind", "features")}
        return cls(meta["embedder"], weight, bias, meta["kind"], info, features)

    @property
    def embedding_dim(self) -> int:
        """Dimension of the document vector this head expects."""
        return self.dim - (len(COHERENCE_FEATURES) if self.features == "embedding+coherence" else 0)


class HeadStack:
    """Several heads as one (features, heads) weight matrix: one matrix product scores them all.

    Heads on the embedding alone get zero weights on the coherence features when another head
    uses them.
    """

    def __init__(self, heads: list[LinearHead]) -> None:
        self.coherence = any(head.features == "embedding+coherence" for head in heads)
        rows = max(head.dim for head in heads) if self.coherence else heads[0].dim
        self.weight = np.zeros((rows, len(heads)))
        for column, head in enumerate(heads):
            self.weight[: head.dim, column] = head.weight
        self.bias = np.array([head.bias for head in heads])
        self.logistic = np.array([head.kind == "logistic" for head in heads])

    def score(self, embeddings: np.ndarray, coherence: np.ndarray | None = None) -> np.ndarray:
        """(n, heads) scores of an (n, dim) embedding array (and coherence features when a head uses them).

        Each document's scores are its own row's sums (einsum, not a BLAS matrix product, whose
        last bits depend on how many rows come with it): the same whatever the batch.
        """
        if self.coherence:
            embeddings = np.hstack([embeddings, coherence])
        scores = np.einsum("nd,dh->nh", embeddings.astype(np.float64), self.weight) + self.bias
        if self.logistic.any():
            scores[:, self.logistic] = 1.0 / (1.0 + np.exp(-scores[:, self.logistic]))
        return scores


def head_path(value: str) -> Path:
    """A `heads` entry: the name of a shipped head (quality_models/models/heads/NAME.safetensors) or a path."""
    if "/" not in value and not value.endswith(".safetensors"):
        return HEADS_DIR / f"{value}.safetensors"
    return resolve_model_path(value)


@register("embedding_quality")
class EmbeddingQuality(DocumentStage):
    """Score documents with one embedding pass and linear heads; writes scores[<name>] and scores[<name>.<head>].

    `model` is the main head (scores[<name>]; "" for none); each of `heads` (a shipped head's name:
    informative, coherent, depth, toxic, or a .safetensors path) writes scores["<name>.<head>"]. All
    heads share one forward pass, so they must name the same embedder (`minilm`, `minilm-bf16`,
    `static`); `embedder` overrides it with a compatible one (same dims). Logistic heads give a
    probability in [0, 1]; `depth` is a linear grade (0 chat/spam .. 3 scholarly). Never rejects
    (reasons: none); `score_threshold` decides.
    """

    reasons = ()
    params = {
        "model": Param(
            str,
            str(DEFAULT_EMBEDDING_HEAD.relative_to(PROJECT_DIR)),
            'main head (.safetensors) writing scores[<name>] (relative: to the project; "": none)',
        ),
        "heads": Param(list[str], [], "further heads on the same pass: shipped names or .safetensors paths"),
        "embedder": Param(
            str, "", "embedder to use instead of the heads' own (same dims)", choices=("", *EMBEDDER_NAMES)
        ),
        "batch_size": Param(int, 64, "documents embedded per batch", min=1),
    }

    def configure(self) -> None:
        paths = {self.name: resolve_model_path(self.model)} if self.model else {}
        for value in self.heads:
            key = f"{self.name}.{Path(value).name.removesuffix('.safetensors')}"
            if key in paths:  # the second would replace the first's score
                raise ConfigError(f"heads: two heads would both write scores[{key!r}]; rename one file")
            paths[key] = head_path(value)
        if not paths:
            raise ConfigError("model: give a main head or at least one of `heads`")
        heads = {}
        for key, path in paths.items():
            try:  # a few KB each: a wrong file stops the recipe, not the run
                heads[key] = LinearHead.load(path)
            except RuntimeError as error:
                raise ConfigError(f"{'model' if key == self.name else 'heads'}: {error}") from None
        embedders = {head.embedder for head in heads.values()}
        if len(embedders) > 1 and not self.embedder:
            raise ConfigError(f"heads: the heads name different embedders: {sorted(embedders)}")
        self._check_embedder(heads, self.embedder or embedders.pop())
        self._paths = paths
        self._heads: HeadStack | None = None
        self._embedder = None

    def _check_embedder(self, heads: dict[str, LinearHead], embedder: str) -> None:
        """The embedder (`embedder`, or the heads' own) must give each head the vectors it reads."""
        dim = embedder_dim(embedder)
        for key, head in heads.items():
            label = "model" if key == self.name else f"heads: {key.removeprefix(self.name + '.')!r}"
            if head.embedding_dim != dim:
                raise ConfigError(
                    f"{label} expects {head.embedding_dim} dims (made for {head.embedder!r}); "
                    f"embedder {embedder!r} gives {dim}"
                )
            if head.features == "embedding+coherence" and embedder != "static":
                raise ConfigError(f"{label} reads coherence features only the static embedder gives")

    def score_names(self) -> list[str]:
        """The scores this stage writes."""
        return list(self._paths)

    def language_caveat(self, languages: frozenset[str] | None) -> str:
        return english_model_caveat(languages) if any(map(is_shipped, self._paths.values())) else ""

    def setup(self) -> None:
        heads = {key: LinearHead.load(path) for key, path in self._paths.items()}
        embedder = load_embedder(self.embedder or next(iter(heads.values())).embedder)
        self._heads, self._embedder = HeadStack(list(heads.values())), embedder

    def __getstate__(self) -> dict[str, Any]:
        # Models are loaded per worker in setup(); never pickle them with the stage.
        return {**self.__dict__, "_heads": None, "_embedder": None}

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        self.require_setup(self._heads)
        texts = [d.text for d in docs]
        coherence = None
        if self._heads.coherence:
            embeddings, coherence = self._embedder.encode_with_coherence(texts)
        else:
            embeddings = self._embedder.encode(texts, batch_size=self.batch_size)
        keys = list(self._paths)
        rows = self._heads.score(embeddings, coherence).tolist()
        return [keep(doc.with_scores(dict(zip(keys, row)))) for doc, row in zip(docs, rows)]
