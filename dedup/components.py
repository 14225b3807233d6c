"""Connected components of an edge list in Beam, by alternating large-star / small-star rounds.

Why this algorithm: it is the distributed one from Kiveris et al., "Connected Components in
MapReduce and Beyond" (SoCC 2014). Each operation is one grouping of the edge list by node and
keeps every edge inside its component; a round is large-star then small-star, and after O(log² n)
rounds (O(log n) in practice) every component is a star whose centre is its smallest node. The
groupings go through spill files by node partition (`pipeline.spill.SpillStepFn`), each step
grouping one partition's values in memory: a worker holds 1/partitions of the edges, never
O(corpus) state, and the local runner's driver holds only file names (it holds a GroupByKey's
values in memory, which grew with the duplicates at millions of documents).

- large-star, for node u with neighbours Γ(u) and m = min(Γ(u) ∪ {u}):
  replace every edge (u, v) with v > u by (v, m)  (links all larger neighbours to the minimum)
- small-star, for node u with smaller neighbours N = {v ∈ Γ(u) : v < u} and m = min(N ∪ {u}):
  replace every edge (u, v), v ∈ N, by (v, m), and keep (u, m)

Beam graphs are static, so `rounds` rounds are unrolled. Each round counts the edges it changed;
a round that changes nothing means convergence. Components that have converged leave the rounds:
at the large-star grouping each node also reports whether it is a star centre (all neighbours
larger; with its degree d) or a leaf (one, smaller, neighbour) to the centre's key of the
small-star grouping. A centre that receives d leaf reports is, with its leaves, a whole component
of the current edges (its neighbours have no other edge) and a star around its smallest node,
since the rounds keep every component's node set: that is the component's final labelling. The
centre then sends itself a `DONE` mark instead of its edges; at the next large-star grouping it
labels itself and its leaves and emits nothing more, so the later rounds carry only the
components still changing. Stars finish exactly as in the rounds without the mark (a finished
star is a fixed point of both steps), so labels and change counts are the same.

If the last round still changed something the components are not final: the labels are then still safe
(every label is a node of the same true component, so unrelated documents are never merged) but
a true component may be split into several clusters. The final labelling step checks locally that
every node is a star centre or leaf (`is_star_member`) and counts the others in the Metrics
counter `cc_unconverged_nodes`, so a run says whether its components are exact.

Node ids may be any totally ordered, hashable values except None (document ids are strings). The
same round functions run in `components_local`, a dictionary-based driver used by tests on big
graphs.
"""

from __future__ import annotations

import pickle
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
import xxhash
from apache_beam.metrics import Metrics

from pipeline.decisions import spill_dir
from pipeline.runners import reruns_steps
from pipeline.spill import SpillByKeyFn, SpilledFile, SpillStepFn, run_key

Edge = tuple[Any, Any]


def large_star(node: Any, neighbours: Iterable[Any]) -> tuple[list[Edge], int]:
    """One node's large-star step: (edges to emit, number of edges changed)."""
    nbrs = set(neighbours)
    nbrs.discard(node)
    if not nbrs:
        return [], 0
    low = min(min(nbrs), node)
    larger = [v for v in nbrs if v > node]
    return [(low, v) for v in larger], (len(larger) if low != node else 0)


def small_star(node: Any, smaller_neighbours: Iterable[Any]) -> tuple[list[Edge], int]:
    """One node's small-star step over its smaller neighbours: (edges to emit, edges changed)."""
    nbrs = set(smaller_neighbours)
    nbrs.discard(node)
    if not nbrs:
        return [], 0
    low = min(nbrs)
    return [(low, v) for v in nbrs if v != low] + [(low, node)], len(nbrs) - 1


DONE = None  # large-star grouping value: the key is the centre of a finished star
EDGE, LEAF, CENTRE = 0, 1, 2  # tags of the small-star grouping's values
LABELS = -1  # spill key of the finished stars' (node, label) pairs


def large_round(node: Any, neighbours: set[Any]) -> tuple[list[tuple[Any, tuple[int, Any]]], int]:
    """A node's large-star step keyed for the small-star grouping, with its star report:
    ([(key, (tag, value))], edges changed)."""
    edges, changed = large_star(node, neighbours)
    out: list[tuple[Any, tuple[int, Any]]] = [(v, (EDGE, low)) for low, v in edges]
    low = min(neighbours)
    if low > node:
        out.append((node, (CENTRE, len(neighbours))))
    elif len(neighbours) == 1:
        out.append((low, (LEAF, None)))
    return out, changed


def small_round(node: Any, values: Iterable[tuple[int, Any]]) -> tuple[list[tuple[Any, Any]], int]:
    """A node's small-star step from its tagged values, keyed for the next large-star grouping
    (both directions of every edge), or its DONE mark when it is the centre of a finished star:
    ([(key, neighbour or DONE)], edges changed)."""
    smaller, leaves, degree = [], 0, None
    for tag, value in values:
        if tag == EDGE:
            smaller.append(value)
        elif tag == LEAF:
            leaves += 1
        else:
            degree = value
    if degree is not None and leaves == degree:
        return [(node, DONE)], 0
    edges, changed = small_star(node, smaller)
    return [pair for a, b in edges for pair in ((a, b), (b, a))], changed


def finished_labels(node: Any, values: Iterable[Any]) -> list[tuple[Any, Any]]:
    """At the large-star grouping: (node, label) for a finished star's centre and its leaves, or []."""
    values = list(values)
    if DONE not in values:
        return []
    return [(node, node)] + [(v, node) for v in set(values) if v is not DONE]


def component_label(node: Any, neighbours: Iterable[Any]) -> Any:
    """A node's cluster label: the smallest of itself and its neighbours (the star centre)."""
    return min(min(neighbours, default=node), node)


def _grouped(pairs: Iterable[tuple[Any, Any]]) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return groups


def components_local(edges: Iterable[Edge], rounds: int) -> tuple[dict[Any, Any], list[int], list[int]]:
    """Run the same rounds with dictionaries in one process: ({node: label}, edges changed per
    round, values entering each round's large-star grouping).

    A reference driver for tests and small inputs; the Beam composite is `ConnectedComponents`.
    """
    current = [pair for a, b in edges if a != b for pair in ((a, b), (b, a))]
    labels: dict[Any, Any] = {}
    changes: list[int] = []
    carried: list[int] = []
    for _ in range(rounds):
        if not current:
            break
        carried.append(len(current))
        changed, small = 0, []
        for node, values in _grouped(current).items():
            labels.update(finished_labels(node, values))
            if DONE not in values:
                out, n_changed = large_round(node, set(values))
                small.extend(out)
                changed += n_changed
        current = []
        for node, values in _grouped(small).items():
            out, n_changed = small_round(node, values)
            current.extend(out)
            changed += n_changed
        changes.append(changed)
    for node, values in _grouped(current).items():
        labels[node] = component_label(node, [v for v in values if v is not DONE])
    return labels, changes, carried


class ConnectedComponents(beam.PTransform):
    """PCollection of edges (a, b), or a tuple of them → PCollection of (node, label) for every
    node of an edge.

    `rounds` large-star/small-star rounds are unrolled; finished components leave them. Every
    grouping goes through spill files by node partition (`pipeline.spill.SpillStepFn`): each step
    reads one partition's files and writes the next step's, so only file names are shuffled and no
    PCollection of edges or labels lies between two steps (Beam's local runner would hold it in
    the driver's memory). The labels of finished stars are written once, and their files ride
    along the later groupings unread (key `LABELS`) to the last step. Spill files go under
    `directory` (default: a new spill folder of the pipeline). Metrics in `namespace`:
    `cc_round_NN_changes` (edges changed in round NN; absent when nothing changed), `cc_nodes`
    (nodes labelled), `cc_finished_nodes` (of them, nodes labelled when their component finished
    before the last round) and `cc_unconverged_nodes` (nodes whose final neighbourhood is not a
    star around the smallest node; 0 or absent means the components are exact).
    """

    def __init__(
        self, rounds: int = 20, namespace: str = "components", partitions: int = 64, directory=None
    ) -> None:
        super().__init__()
        self.rounds = rounds
        self.namespace = namespace
        self.partitions = partitions
        self.directory = directory

    def expand(self, edges):
        ns, parts = self.namespace, self.partitions
        edge_lists = edges if isinstance(edges, tuple) else (edges,)
        pipeline = edge_lists[0].pipeline
        spill = self.directory or spill_dir(pipeline, ns)
        delete = not reruns_steps(pipeline)
        # Each edge list is spilled where it is made (a Flatten of several would be held in memory).
        spilled = [
            made
            | f"BothDirections{index}" >> beam.FlatMap(_both_directions, parts)
            | f"SpillEdges{index}"
            >> beam.ParDo(SpillByKeyFn(f"{spill}/edges")).with_output_types(SpilledFile)
            for index, made in enumerate(edge_lists)
        ]
        files = tuple(spilled) | "AllEdgeFiles" >> beam.Flatten(pipeline=pipeline)
        for i in range(1, self.rounds + 1):
            counter = f"cc_round_{i:02d}_changes"
            for half, step in (("large", _large_step), ("small", _small_step)):
                files = (
                    files
                    | f"R{i}{half.title()}Group" >> beam.GroupByKey()
                    | f"R{i}{half.title()}Star"
                    >> beam.ParDo(
                        _RoundFn(f"{spill}/r{i:02d}-{half}", delete, step, ns, counter, parts)
                    ).with_output_types(SpilledFile)
                )
        return files | "FinalGroup" >> beam.GroupByKey() | "Label" >> beam.FlatMap(_final_labels, delete, ns)


class _RoundFn(SpillStepFn):
    """One half round of one node partition (a `SpillStepFn`); the finished labels' files (key
    `LABELS`) are passed on unread."""

    def process(self, item: tuple[int, Iterable[str]]) -> Iterator[SpilledFile]:
        key, paths = item
        if key == LABELS:
            yield from ((LABELS, path) for path in paths)
        else:
            yield from super().process(item)


def is_star_member(node: Any, neighbours: list[Any]) -> bool:
    """True if the node is a star centre (smaller than all neighbours) or a leaf (one, smaller,
    neighbour). Every node passing this local check ⟺ every component is a star around its
    minimum, i.e. the rounds have converged."""
    return min(neighbours) > node or len(neighbours) == 1


def _final_labels(item: tuple[int, Iterable[str]], delete: bool, namespace: str) -> Iterator[tuple[Any, Any]]:
    """The last grouping of one key → (node, label): the finished stars' labels as written, or a
    node partition's labels from its neighbourhood after the last round."""
    if item[0] == LABELS:
        return run_key(item, delete, _stored_labels)
    return run_key(item, delete, _label, namespace)


def _stored_labels(_key: int, labels: Iterable[tuple[Any, Any]]) -> Iterable[tuple[Any, Any]]:
    return labels


def _label(_partition: int, values: Iterable[tuple[Any, Any]], namespace: str) -> Iterator[tuple[Any, Any]]:
    """A partition's nodes after the last round → (node, `component_label`)."""
    nodes = 0
    for node, neighbours in _grouped(values).items():
        nbrs = list({v for v in neighbours if v is not DONE})
        if not is_star_member(node, nbrs):
            Metrics.counter(namespace, "cc_unconverged_nodes").inc()
        nodes += 1
        yield node, component_label(node, nbrs)
    Metrics.counter(namespace, "cc_nodes").inc(nodes)


def _large_step(_partition: int, values: Iterable, namespace: str, counter: str, partitions: int) -> Iterator:
    """A partition's large-star grouping → (LABELS, (node, label)) for the finished stars' nodes
    and `large_round`'s output keyed by node partition for every other node; count the edges changed."""
    finished, changed = 0, 0
    for node, neighbours in _grouped(values).items():
        if DONE in neighbours:
            labels = finished_labels(node, neighbours)
            finished += len(labels)
            yield from ((LABELS, label) for label in labels)
            continue
        step, n_changed = large_round(node, set(neighbours))
        yield from _keyed(step, partitions)
        changed += n_changed
    if finished:
        Metrics.counter(namespace, "cc_nodes").inc(finished)
        Metrics.counter(namespace, "cc_finished_nodes").inc(finished)
    if changed:
        Metrics.counter(namespace, counter).inc(changed)


def _small_step(_partition: int, values: Iterable, namespace: str, counter: str, partitions: int) -> Iterator:
    """A partition's small-star grouping → `small_round`'s output keyed by node partition; count
    the edges changed."""
    changed = 0
    for node, tagged in _grouped(values).items():
        step, n_changed = small_round(node, tagged)
        yield from _keyed(step, partitions)
        changed += n_changed
    if changed:
        Metrics.counter(namespace, counter).inc(changed)


def _keyed(pairs: Iterable[tuple[Any, Any]], partitions: int) -> Iterator[tuple[int, tuple[Any, Any]]]:
    """(node, value) pairs → (node's partition, pair)."""
    return ((node_partition(pair[0], partitions), pair) for pair in pairs)


def _both_directions(edge: Edge, partitions: int) -> Iterator[tuple[int, Edge]]:
    """An edge → both of its directions keyed by node partition (loops dropped)."""
    a, b = edge
    if a != b:
        yield from _keyed(((a, b), (b, a)), partitions)


def node_partition(node: Any, partitions: int) -> int:
    """The spill partition of a node (seedless xxh64 of its bytes: the same on every worker)."""
    if isinstance(node, str):
        data = node.encode("utf-8", "surrogatepass")
    else:
        data = pickle.dumps(node, protocol=pickle.HIGHEST_PROTOCOL)
    return xxhash.xxh64_intdigest(data) % partitions
