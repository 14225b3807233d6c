"""Vectors grouped by k-means cluster inside the Beam graph, for `semantic_dedup` (documents) and
`unit_dedup` (units): a deterministic training sample, spherical k-means, every vector to its
nearest centroid, and each (language, cluster) handed to a function, through spill files.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import apache_beam as beam
import numpy as np
import xxhash
from apache_beam.metrics import Metrics

from dedup import kmeans
from pipeline.decisions import spill_dir
from pipeline.spill import SpillGroups

# Auto k: about this many documents per first-level cluster. Pairwise cost per document grows
# with the cluster size (one dot product per member), which stays small next to embedding.
DOCS_PER_CLUSTER = 2000
BATCH_PARTITIONS = 64  # spill keys of the embedded batches waiting for k-means


def sample_key(doc_id: str, seed: int) -> int:
    """Seeded hash that orders documents for the k-means training sample (lowest keys are taken)."""
    return xxhash.xxh64_intdigest(doc_id.encode("utf-8"), seed=seed)


# A row within this share of its own length of the mean is taken as the mean itself.
AT_MEAN = 1e-3


def center(x: np.ndarray, mean: np.ndarray | None) -> np.ndarray:
    """Unit rows after subtracting the corpus mean embedding (None: unchanged). A row at the mean
    keeps its own direction: centered, it was zero (or rounding noise), so copies of it, all there
    is in a corpus of one text repeated, matched nothing."""
    if mean is None:
        return x
    centered = x - mean
    at_mean = np.linalg.norm(centered, axis=1) <= AT_MEAN * np.linalg.norm(x, axis=1)
    centered[at_mean] = x[at_mean]
    return kmeans.normalize(centered)


class ClusterVectors(beam.PTransform):
    """Batches (members, unit vectors) → what `then((language, cluster), [(member, centered vector,
    cosine to its centroid)], *args)` yields for every (language, k-means cluster); shared by
    `semantic_dedup` (documents) and `unit_dedup` (units).

    Spherical k-means is trained on a deterministic sample (the `sample_size` lowest seeded hashes
    of `sample_id(member)`, ties ordered by the unique `key(member)`): hashing ids without the
    records' origins makes the sample, so the clusters, the same however the input is cut into
    files (the same 6,000 documents as one file and as 6,000 files: 296 and 299 removals, 31
    apart, when origins were hashed). With `center` the sample's mean is subtracted first; k is
    `clusters`, or one per DOCS_PER_CLUSTER vectors. Mean and centroids reach every worker as a side input. The
    batches wait for them in files, and the assigned vectors reach their cluster through files
    (`pipeline.spill.SpillGroups`): a local runner would otherwise hold every vector in memory
    twice (the batches until k-means is trained, and the clusters' GroupByKey).
    """

    def __init__(
        self,
        name,
        key,
        sample_id,
        language,
        then,
        *,
        seed,
        sample_size,
        center,
        clusters,
        iterations,
        args=(),
    ):
        super().__init__()
        self.name, self.key, self.language, self.then, self.args = name, key, language, then, args
        self.sample_id = sample_id
        self.seed, self.sample_size, self.center = seed, sample_size, center
        self.clusters, self.iterations = clusters, iterations

    def expand(self, batches):
        count = (
            batches
            | "BatchSizes" >> beam.Map(lambda batch: len(batch[0]))
            | "Count" >> beam.CombineGlobally(sum)
        )
        seed, key, sample_id = self.seed, self.key, self.sample_id
        sample = (
            batches
            | "SampleKeys"
            >> beam.FlatMap(
                lambda batch: (
                    (sample_key(sample_id(m), seed), key(m), vec) for m, vec in zip(batch[0], batch[1])
                )
            )
            | "Sample" >> beam.combiners.Top.Of(self.sample_size, key=lambda t: (t[0], t[1]), reverse=True)
        )
        spec = (self.name, self.center, self.clusters, self.seed, self.iterations)
        model = sample | "TrainKMeans" >> beam.Map(_train_centroids, beam.pvalue.AsSingleton(count), spec)
        spill = spill_dir(batches.pipeline, self.name)
        return (
            batches
            | "BatchPartition"
            >> beam.Map(lambda batch: (sample_key(key(batch[0][0]), seed) % BATCH_PARTITIONS, batch))
            | "Assign"
            >> SpillGroups(f"{spill}/embedded", _assign, self.language, beam.pvalue.AsSingleton(model))
            | "GroupByCluster" >> SpillGroups(f"{spill}/clusters", _each_cluster, self.then, *self.args)
        )


def _assign(_partition: int, batches: Iterable, language, model):
    """Batches of one partition: each vector centered and keyed by language and nearest centroid,
    (cluster file key, ((language, cluster), (member, vector, cosine to centroid))); languages are
    never compared."""
    mean, centroids = model
    for members, vectors in batches:
        vectors = center(vectors, mean)
        labels, sims = kmeans.assign(vectors, centroids)
        for member, vec, label, sim in zip(members, vectors, labels.tolist(), sims.tolist()):
            cluster = (language(member), label)
            yield _cluster_file_key(cluster), (cluster, (member, vec, sim))


def _cluster_file_key(cluster: tuple[str, int]) -> int:
    """The spill key of a (language, cluster): a 62-bit hash (a collision only shares files)."""
    return xxhash.xxh64_intdigest(f"{cluster[0]}\x00{cluster[1]}".encode()) >> 2


def _each_cluster(_key: int, values: Iterable, then, *args):
    """`then(cluster, members, *args)` for each (language, cluster) of one spill key, in order."""
    clusters: dict[tuple, list] = {}
    for cluster, member in values:
        clusters.setdefault(cluster, []).append(member)
    for cluster in sorted(clusters):
        yield from then(cluster, clusters[cluster], *args)


def _train_centroids(
    sample: list[tuple], count: int, spec: tuple
) -> tuple[np.ndarray | None, np.ndarray] | None:
    """(corpus mean or None, centroids) from the sorted sample; k = `clusters` or from `count`."""
    if not sample:
        return None
    name, centered, clusters, seed, iterations = spec
    x = np.stack([vec for _, _, vec in sorted(sample, key=lambda t: (t[0], t[1]))])
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32) if centered else None
    k = clusters or math.ceil(count / DOCS_PER_CLUSTER)
    centroids = kmeans.train_spherical_kmeans(center(x, mean), k, seed, iterations)
    Metrics.counter(name, "kmeans_clusters").inc(len(centroids))
    Metrics.counter(name, "kmeans_sample").inc(len(x))
    return mean, centroids
