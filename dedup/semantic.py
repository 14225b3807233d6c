"""`semantic_dedup`: SemDeDup on CPU inside the Beam graph.

embed (batched, model loaded once per worker; the first `max_chars` characters of a document's
main content, its lines of at least `min_unit_words` words, in chunks the model sees whole,
averaged) → subtract the corpus mean embedding (`center`) →
spherical k-means (faiss) trained on a deterministic sample (the lowest seeded id hashes), mean
and centroids as a side input → every document to its nearest centroid → grouped by (language,
cluster) through spill files → oversized clusters split by a second-level k-means → blocked
pairwise cosine inside each (sub)cluster → pairs with cosine > 1 − eps verified by word 3-gram
containment ≥ `min_overlap` → verified pairs joined into connected groups → one survivor per
group, the rest rejected as `semantic_duplicate`.

Documents never go through a shuffle: the embedding step turns each into a compact member
(content key, survivor order, language, a sketch of its 3-gram hashes capped at `max_shingles`)
and its vector; only members travel to the clusters, and the decisions (removed key → survivor,
detail; failed key → failure record) are joined back to the documents by
`pipeline.decisions.ApplyDecisions` (documents spilled once by key partition).

Why main content and verification: one vector per whole page is dominated by what pages of one
site or one language share (navigation, template, function words); such pages were merged at
word Jaccard 0.0 (issue 14). Embedding only content lines and confirming every candidate pair
lexically keeps different content apart (benchmarks/results/units.md).

Semantics versus the SemDeDup paper's code (facebookresearch/SemDeDup, also NeMo Curator): the
original sorts a cluster by distance to its centroid and removes every point whose maximum
similarity to any *earlier* point exceeds 1 − eps, even when that earlier point was itself
removed. Here the near-duplicate pairs form connected groups and exactly one document per group
survives (the paper's "keep one per group"), chosen by a total order: prefer_score (highest),
then `survivor` (`hard`: farthest from the centroid, SemDeDup's default; `easy`: nearest;
`longest`: most characters), then the smallest id.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics

from dedup import kmeans
from dedup.clusters import DOCS_PER_CLUSTER, ClusterVectors
from dedup.content import main_content, shingle_set, sketch, sketch_containment
from dedup.survivor import SURVIVOR_PARAMS, PrefersScore, survivor_key
from filters.language import check_language_codes
from pipeline.beam_stages import failure
from pipeline.decisions import DEFAULT_PARTITIONS, ApplyDecisions, content_key, decision_inputs
from pipeline.document import Document, Rejection, public_id
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag
from pipeline.stages import CollectionStage, ConfigError, Param, StageOutputs, register

REASON = "semantic_duplicate"
EMBEDDED = "embedded"
_ENCODE_LOCK = threading.Lock()
OVERLAP_NGRAM = 3  # word 3-grams: the shingles whose containment verifies a candidate pair


def load_embedder(name: str) -> Any:
    """The one place where `semantic_dedup` gets its embedder (shared with `embedding_quality`)."""
    from quality_models.embedders import load_embedder as load

    return load(name)


def chunks(text: str, size: int) -> list[str]:
    """`text` cut into pieces of at most `size` characters, at a space where one is near the end."""
    pieces = []
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = size if cut <= 0 else cut
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text or not pieces else pieces


def embed_documents(embedder: Any, texts: list[str], max_chars: int, batch_size: int) -> np.ndarray:
    """Unit document vectors: the first `max_chars` characters cut into chunks the model sees whole
    (3 characters per model token), embedded, averaged weighted by chunk length, renormalized.

    A document is thus represented by all of its first `max_chars` characters, not only by its
    opening, so reordered or partly edited documents still match.
    """
    size = max(embedder.max_tokens * 3, 1)
    pieces, owner, weight = [], [], []
    for row, text in enumerate(texts):
        for piece in chunks(text[:max_chars], size):
            pieces.append(piece)
            owner.append(row)
            weight.append(max(len(piece), 1))
    vectors = np.asarray(embedder.encode(pieces, batch_size=batch_size), dtype=np.float32)
    summed = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
    np.add.at(summed, np.array(owner), vectors * np.array(weight, dtype=np.float32)[:, None])
    return kmeans.normalize(np.nan_to_num(summed))


# float32 dot products of unit vectors are off by up to a few 1e-7: an identical pair's is
# 0.99999994 or 1.0000001, and at eps = 0 one in eight pairs of copies passed `> 1.0`
ROUNDING = 1e-6
VERIFY_PAIRS = 4096  # pairs `duplicate_groups` hands its `verify` at once


def similar_pairs(x: np.ndarray, threshold: float, block_size: int):
    """Yield (rows, cols, sims) of every pair i < j with x_i·x_j > threshold (less ROUNDING),
    `block_size` rows at a time.

    Only a block_size × n slice of the similarity matrix exists at once, never n × n.
    """
    for start in range(0, len(x), block_size):
        sims = x[start : start + block_size] @ x[start:].T
        rows, cols = np.nonzero(sims > threshold - ROUNDING)
        rows_abs = rows + start
        cols_abs = cols + start
        upper = cols_abs > rows_abs
        yield rows_abs[upper], cols_abs[upper], sims[rows[upper], cols[upper]]


def duplicate_groups(x: np.ndarray, threshold: float, block_size: int, verify=None) -> np.ndarray:
    """Connected-group label (the group's smallest row index) per row of unit vectors `x`.

    Union-find over the pairs above `threshold` (and, if given, accepted by `verify(rows, cols)`
    → boolean mask), vectorized per block: roots are found by pointer jumping and the larger root
    is hooked under the smaller until every pair shares a root. `verify` sees `VERIFY_PAIRS` pairs
    at a time, only those not joined already (they cannot change the groups): a group of n copies
    costs about n checks, not n²/2 (4,000 copies of a page took 117 s).
    """
    parent = np.arange(len(x))
    for rows, cols, _ in similar_pairs(x, threshold, block_size):
        if verify is None:
            _join(parent, rows, cols)
            continue
        for start in range(0, len(rows), VERIFY_PAIRS):
            some_rows, some_cols = rows[start : start + VERIFY_PAIRS], cols[start : start + VERIFY_PAIRS]
            apart = _roots(parent, some_rows) != _roots(parent, some_cols)
            some_rows, some_cols = some_rows[apart], some_cols[apart]
            if len(some_rows):
                accepted = verify(some_rows, some_cols)
                _join(parent, some_rows[accepted], some_cols[accepted])
    return _roots(parent, np.arange(len(x)))


def _join(parent: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """Union of each pair's groups in `parent`."""
    while len(rows):
        root_a, root_b = _roots(parent, rows), _roots(parent, cols)
        differ = root_a != root_b
        rows, cols = rows[differ], cols[differ]
        high = np.maximum(root_a[differ], root_b[differ])
        low = np.minimum(root_a[differ], root_b[differ])
        np.minimum.at(parent, high, low)


def _roots(parent: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Root of each node, compressing `parent` in place as it goes."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return parent[nodes]
        parent[:] = grand


@dataclass(frozen=True)
class ClusterDecision:
    """One removed document: its row, the survivor's row and their cosine similarity."""

    row: int
    survivor: int
    similarity: float


def member_order(doc: Document, prefer_score: str) -> tuple:
    """What a cluster needs of a document to pick survivors: (score rank, −length, id)."""
    return survivor_key(doc, prefer_score, "longest")


def decide_cluster(
    x: np.ndarray,
    centroid_sims: np.ndarray,
    orders: list[tuple],
    *,
    eps: float,
    block_size: int,
    survivor: str,
    sketches: list[tuple[bytes, int]] | None = None,
    min_overlap: float = 0.0,
    max_shingles: int = 0,
    cut_for: list[tuple[str, ...]] | None = None,
) -> list[ClusterDecision]:
    """Removals for one (sub)cluster: one survivor per connected group of near-duplicates.

    `orders` are the rows' `member_order`s. With `sketches` (one `dedup.content.sketch` per row,
    capped at `max_shingles`), a pair above the cosine threshold joins a group only if its
    shingle containment reaches `min_overlap`: the embedding proposes, the words confirm, so two
    pages that merely share a topic, a language or a template stay apart. With `cut_for` (each
    row's `cut_for`), a survivor whose units `unit_dedup` cut for another member of its group
    gives way to that member: removing the holder for its cut-down copy lost the cut units.
    """
    verify = None
    if sketches is not None:

        def verify(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            return np.array(
                [
                    sketch_containment(sketches[a], sketches[b], max_shingles) >= min_overlap
                    for a, b in zip(rows, cols)
                ]
            )

    groups = duplicate_groups(x, 1.0 - eps, block_size, verify)
    keys = [_survivor_order(order, sim, survivor) for order, sim in zip(orders, centroid_sims)]
    best: dict[int, int] = {}
    for row, group in enumerate(groups.tolist()):
        if group not in best or keys[row] < keys[best[group]]:
            best[group] = row
    if cut_for is not None and any(cut_for):
        _prefer_holders(best, groups, keys, orders, cut_for)
    removed = []
    for row, group in enumerate(groups.tolist()):
        keep = best[group]
        if row != keep:
            removed.append(ClusterDecision(row, keep, float(x[row] @ x[keep])))
    return removed


def _prefer_holders(
    best: dict[int, int],
    groups: np.ndarray,
    keys: list[tuple],
    orders: list[tuple],
    cut_for: list[tuple[str, ...]],
) -> None:
    """Move each group's survivor to the best member keeping units cut from it, as long as
    there is one (each member once: holders may have had units cut in turn). Only groups whose
    survivor had units cut are looked into."""
    ids = [public_id(order[-1]) for order in orders]
    for group, chosen in best.items():
        if not cut_for[chosen]:
            continue
        members = np.flatnonzero(groups == group).tolist()
        seen = {chosen}
        while holders := [r for r in members if r not in seen and ids[r] in cut_for[chosen]]:
            chosen = min(holders, key=keys.__getitem__)
            seen.add(chosen)
        best[group] = chosen


def _survivor_order(order: tuple, centroid_sim: float, survivor: str) -> tuple:
    """Sort key: the smallest key in a group survives (score, then the `survivor` rule, then id)."""
    if survivor == "longest":
        return order
    score_rank, _, *identity = order
    # hard: lowest similarity to the centroid (farthest) first; easy: highest first.
    geometry_rank = centroid_sim if survivor == "hard" else -centroid_sim
    return (score_rank, round(float(geometry_rank), 6), *identity)


@register("semantic_dedup")
class SemanticDedup(PrefersScore, CollectionStage):
    """Remove documents whose embedding is within cosine 1 − eps of another's, one survivor per group (SemDeDup).

    Pairs above the threshold join connected groups, so a removed document may be further than
    1 − eps from its survivor when others link them (A~B, B~C: A and B removed for C).
    Reasons: `semantic_duplicate` (`duplicate_of` is the survivor; `detail` gives the cosine
    similarity to it, the cluster and the group size).
    """

    reasons = (REASON,)
    params = {
        "eps": Param(
            float,
            0.10,
            "documents are duplicates when their (centered) cosine similarity is above 1 - eps (0: "
            "identical embeddings only); "
            "calibrated for the static embedder in benchmarks/results/semantic.md",
            min=0.0,
            max=1.0,
        ),
        "embedder": Param(
            str,
            "static",
            "static (model2vec distilled from MiniLM, ~70x its docs per CPU-second), minilm, or minilm-bf16",
            choices=("static", "minilm", "minilm-bf16"),
        ),
        "center": Param(
            bool,
            True,
            "subtract the corpus mean embedding (estimated on the k-means sample) before cosine: "
            "mean-pooled embeddings share a large common direction that makes unrelated documents "
            "of one genre look alike",
        ),
        "clusters": Param(int, 0, f"k-means clusters; 0: one per {DOCS_PER_CLUSTER} documents", min=0),
        "sample_size": Param(
            int, 20_000, "documents (lowest seeded id hashes) that k-means trains on", min=1
        ),
        "kmeans_iterations": Param(int, 20, "k-means iterations", min=1, max=1000),
        "seed": Param(int, 1234, "seed of the sample hash and of k-means", min=0, max=2**31 - 1),
        "max_cluster_size": Param(
            int, 10_000, "clusters larger than this are split by a second-level k-means", min=100
        ),
        "block_size": Param(int, 512, "rows of the similarity matrix computed at once", min=1),
        "max_chars": Param(
            int, 20_000, "characters of each document embedded (in chunks the model sees whole)", min=1
        ),
        "batch_size": Param(int, 256, "documents per embedding batch", min=1),
        "survivor": Param(
            str,
            "hard",
            "after prefer_score: hard keeps the document farthest from its centroid (SemDeDup), "
            "easy the nearest, longest the longest; the smallest id settles the rest",
            choices=("hard", "easy", "longest"),
        ),
        "prefer_score": SURVIVOR_PARAMS["prefer_score"],
        "min_unit_words": Param(
            int,
            8,
            "only lines with at least this many words are embedded and compared (main content; "
            "shorter lines are menus, bylines and other template); 0: the whole text",
            min=0,
        ),
        "min_overlap": Param(
            float,
            0.2,
            "a pair above the cosine threshold is a duplicate only if this fraction of the smaller "
            "document's word 3-grams (main content) also occurs in the other; 0: no check",
            min=0.0,
            max=1.0,
        ),
        "max_shingles": Param(
            int,
            2048,
            "3-gram hashes shipped per document for that check (the smallest ones): containment is "
            "exact for documents with at most this many distinct 3-grams, estimated (bottom-k) above",
            min=16,
        ),
        "languages": Param(
            list[str],
            ["en"],
            "documents whose `language` is set and not listed pass through untouched (the embedders "
            "are English models: same-language documents in other languages look alike); "
            "empty: every document; documents are only ever compared within one language",
        ),
    }

    def configure(self) -> None:
        check_language_codes(self.languages, "languages")
        if self.eps >= 1.0:
            raise ConfigError(f"eps: {self.eps} would make every pair of documents a duplicate")

    def manifest_extra(self) -> dict[str, Any]:
        return {
            "eps": self.eps,
            "similarity_threshold": 1.0 - self.eps,
            "embedder": self.embedder,
            "centered": self.center,
            "languages": self.languages,
            "min_unit_words": self.min_unit_words,
            "min_overlap": self.min_overlap,
            "max_shingles": self.max_shingles,
            "clusters": self.clusters or f"auto ({DOCS_PER_CLUSTER} documents per cluster)",
            "sample_size": self.sample_size,
            "max_cluster_size": self.max_cluster_size,
            "survivor": self.survivor,
            "prefer_score": self.prefer_score,
        }

    def expand(self, docs: beam.PCollection, passthrough=None) -> StageOutputs:
        decisions = docs | "Decide" >> _SemanticDecisions(self)
        return decision_inputs(docs, decisions, passthrough) | "Apply" >> ApplyDecisions(
            self.name, content_key, self.apply, DEFAULT_PARTITIONS
        )

    def apply(self, doc: Document, decisions: list, occurrence: int):
        """Keep, reject or fail one document by its content key's decisions; identical copies
        (same content key) take the decisions in turn, and the copies left over are kept."""
        if occurrence >= len(decisions):
            yield KEPT, doc
            return
        decision = sorted(decisions, key=repr)[occurrence]
        if decision[0] == FAILED:
            yield FAILED, decision[1]
        else:
            _, detail, survivor = decision
            yield REJECTED, Rejection(doc, self.name, REASON, detail, survivor)


class _SemanticDecisions(beam.PTransform):
    """Documents → two PCollections of (content key, decision), for the removed and the failed
    documents: (REJECTED, detail, survivor id) and (FAILED, failure record). Only compact members
    are shuffled."""

    def __init__(self, stage: SemanticDedup) -> None:
        super().__init__()
        self.stage = stage

    def expand(self, docs):
        stage = self.stage
        embedded = (
            docs
            | "ComparedLanguages" >> beam.Filter(_compared, frozenset(stage.languages))
            | "Batch" >> beam.BatchElements(min_batch_size=stage.batch_size, max_batch_size=stage.batch_size)
            | "Embed" >> beam.ParDo(_EmbedBatch(stage))
            | "SplitEmbedded" >> SplitByTag((EMBEDDED, FAILED))
        )
        clustered = ClusterVectors(
            stage.name,
            member_id,
            member_public_id,
            member_language,
            _dedup_cluster,
            args=(stage,),
            seed=stage.seed,
            sample_size=stage.sample_size,
            center=stage.center,
            clusters=stage.clusters,
            iterations=stage.kmeans_iterations,
        )
        removed = embedded[EMBEDDED] | "Cluster" >> clustered
        return removed, embedded[FAILED]  # not flattened: `ApplyDecisions` spills each where it is made


def _compared(doc: Document, languages: frozenset[str]) -> bool:
    """Whether `doc` is embedded and compared: no `languages` given, no language set, or one listed."""
    return not languages or doc.language is None or doc.language in languages


def cut_for(doc: Document) -> tuple[str, ...]:
    """The ids of the documents `unit_dedup` cut this one's units for (they keep them); an input's
    own `units_removed` field of another shape names none."""
    cuts = doc.metadata.get("units_removed")
    if not isinstance(cuts, list):
        return ()
    return tuple(sorted({str(cut[1]) for cut in cuts if isinstance(cut, list) and len(cut) == 2}))


def member_id(member: tuple) -> str:
    """The document id of a member (content key, member order, language, sketch or None, `cut_for`)."""
    return member[1][-1]


def member_public_id(member: tuple) -> str:
    """The id a member's record gave (not unique: ids may repeat across files)."""
    return public_id(member_id(member))


def member_language(member: tuple) -> str:
    return member[2]


class _EmbedBatch(beam.DoFn):
    """A batch of documents → (EMBEDDED, (members, vectors)); (FAILED, (content key, (FAILED,
    failure record))) per document that fails. A member is (content key, member order, language,
    3-gram sketch or None, `cut_for`): everything later steps need of the document, never its text."""

    def __init__(self, stage: SemanticDedup) -> None:
        self.stage_name = stage.name
        self.embedder_name = stage.embedder
        self.max_chars = stage.max_chars
        self.batch_size = stage.batch_size
        self.min_unit_words = stage.min_unit_words
        self.prefer_score = stage.prefer_score
        self.seed = stage.seed
        self.max_shingles = stage.max_shingles if stage.min_overlap > 0 else 0
        self.embedded = Metrics.counter(stage.name, "embedded")
        self.failed = Metrics.counter(stage.name, "embed_failed")

    def setup(self) -> None:
        self.embedder = load_embedder(self.embedder_name)

    def process(self, docs: list[Document]):
        try:
            members, vectors = self._members(docs)
        except Exception:  # isolate the document(s) that broke the batch
            members, rows = [], []
            for doc in docs:
                try:
                    member, vector = self._members([doc])
                except Exception as exc:
                    self.failed.inc()
                    yield FAILED, (content_key(doc), (FAILED, failure(doc, self.stage_name, exc)))
                    continue
                members += member
                rows.append(vector[0])
            if not members:
                return
            vectors = np.stack(rows)
        self.embedded.inc(len(members))
        yield EMBEDDED, (members, vectors)

    def _members(self, docs: list[Document]) -> tuple[list[tuple], np.ndarray]:
        texts = [main_content(doc.text, self.min_unit_words) for doc in docs]
        # Threads of one SDK worker share the embedder; HF fast tokenizers can change their
        # truncation state inside a call and then fail ("Already borrowed") under concurrent calls.
        with _ENCODE_LOCK:
            vectors = embed_documents(self.embedder, texts, self.max_chars, self.batch_size)
        members = [
            (
                content_key(doc),
                member_order(doc, self.prefer_score),
                doc.language or "",
                sketch(shingle_set(text, OVERLAP_NGRAM, self.seed), self.max_shingles)
                if self.max_shingles
                else None,
                cut_for(doc),
            )
            for doc, text in zip(docs, texts)
        ]
        return members, vectors


def _dedup_cluster(cluster: tuple[str, int], members: list, stage: SemanticDedup):
    """One (language, cluster): an oversized cluster is split, then one survivor is kept per
    near-duplicate group in each part: (content key, (REJECTED, detail, survivor id)) per removed member."""
    members = sorted(members, key=lambda m: (member_id(m[0]), m[0][0]))
    Metrics.distribution(stage.name, "cluster_size").update(len(members))
    keys = [m[0][0] for m in members]
    orders = [m[0][1] for m in members]
    sketches = [m[0][3] for m in members] if stage.min_overlap > 0 else None
    x = np.stack([m[1] for m in members])
    centroid_sims = np.array([m[2] for m in members], dtype=np.float32)
    parts = np.zeros(len(members), dtype=np.int64)
    if len(members) > stage.max_cluster_size:
        parts = kmeans.split_oversized(x, stage.max_cluster_size, stage.seed)
        Metrics.counter(stage.name, "split_clusters").inc()
    for part in np.unique(parts):
        rows = np.flatnonzero(parts == part)
        decisions = decide_cluster(
            x[rows],
            centroid_sims[rows],
            [orders[r] for r in rows],
            eps=stage.eps,
            block_size=stage.block_size,
            survivor=stage.survivor,
            sketches=None if sketches is None else [sketches[r] for r in rows],
            min_overlap=stage.min_overlap,
            max_shingles=stage.max_shingles,
            cut_for=[members[r][0][4] for r in rows],
        )
        group_sizes: dict[int, int] = {}
        for d in decisions:
            group_sizes[d.survivor] = group_sizes.get(d.survivor, 1) + 1
        Metrics.counter(stage.name, "duplicate_groups").inc(len(group_sizes))
        for d in decisions:
            Metrics.counter(stage.name, REASON).inc()
            detail = (
                f"cos_to_survivor={d.similarity:.4f} threshold={1 - stage.eps:.4f} "
                f"cluster={cluster[1]} group_size={group_sizes[d.survivor]}"
            )
            survivor = int(rows[d.survivor])
            yield keys[rows[d.row]], (REJECTED, detail, public_id(member_id(members[survivor][0])))
