"""Connected components of an edge list in Beam, by alternating large-star / small-star rounds.

Why this algorithm: it is the distributed one from Kiveris et al., "Connected Components in
MapReduce and Beyond" (SoCC 2014). Each operation is one GroupByKey of the edge list and keeps
every edge inside its component; a round is large-star then small-star, and after O(log² n)
rounds (O(log n) in practice) every component is a star whose centre is its smallest node. No
worker ever holds more than one node's neighbourhood, never O(corpus) state.

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

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

Edge = tuple[Any, Any]


def _edge(a: Any, b: Any) -> Edge:
    """An undirected edge, smaller endpoint first."""
    return (a, b) if a < b else (b, a)


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
    """PCollection of edges (a, b) → PCollection of (node, label) for every node of an edge.

    `rounds` large-star/small-star rounds are unrolled; finished components leave them. Metrics
    in `namespace`: `cc_round_NN_changes` (edges changed in round NN; absent when nothing
    changed), `cc_nodes` (nodes labelled), `cc_finished_nodes` (of them, nodes labelled when
    their component finished before the last round) and `cc_unconverged_nodes` (nodes whose final
    neighbourhood is not a star around the smallest node; 0 or absent means the components are
    exact).
    """

    def __init__(self, rounds: int = 20, namespace: str = "components") -> None:
        super().__init__()
        self.rounds = rounds
        self.namespace = namespace

    def expand(self, edges):
        ns = self.namespace
        current = (
            edges
            | "Normalize" >> beam.Map(lambda e: _edge(*e))
            | "DropLoops" >> beam.Filter(lambda e: e[0] != e[1])
            | "BothDirections" >> beam.FlatMap(_both_directions)
        )
        finished = []
        for i in range(1, self.rounds + 1):
            counter = f"cc_round_{i:02d}_changes"
            grouped = current | f"R{i}LargeGroup" >> beam.GroupByKey()
            finished.append(grouped | f"R{i}Finished" >> beam.FlatMap(_finished, ns))
            current = (
                grouped
                | f"R{i}LargeStar" >> beam.FlatMap(_large_step, ns, counter)
                | f"R{i}SmallGroup" >> beam.GroupByKey()
                | f"R{i}SmallStar" >> beam.FlatMap(_small_step, ns, counter)
            )
        last = current | "FinalGroup" >> beam.GroupByKey() | "Label" >> beam.FlatMap(_label, ns)
        return (*finished, last) | "AllLabels" >> beam.Flatten()


def is_star_member(node: Any, neighbours: list[Any]) -> bool:
    """True if the node is a star centre (smaller than all neighbours) or a leaf (one, smaller,
    neighbour). Every node passing this local check ⟺ every component is a star around its
    minimum, i.e. the rounds have converged."""
    return min(neighbours) > node or len(neighbours) == 1


def _label(item: tuple[Any, Iterable[Any]], namespace: str) -> Iterator[tuple[Any, Any]]:
    node, values = item
    nbrs = list({v for v in values if v is not DONE})
    Metrics.counter(namespace, "cc_nodes").inc()
    if not is_star_member(node, nbrs):
        Metrics.counter(namespace, "cc_unconverged_nodes").inc()
    yield node, component_label(node, nbrs)


def _finished(item: tuple[Any, Iterable[Any]], namespace: str) -> list[tuple[Any, Any]]:
    labels = finished_labels(*item)
    if labels:
        Metrics.counter(namespace, "cc_nodes").inc(len(labels))
        Metrics.counter(namespace, "cc_finished_nodes").inc(len(labels))
    return labels


def _large_step(item: tuple[Any, Iterable[Any]], namespace: str, counter: str) -> list:
    """`large_round` of one grouped node that is not a finished centre; count the edges it changed."""
    node, values = item
    neighbours = set(values)
    if DONE in neighbours:
        return []
    out, changed = large_round(node, neighbours)
    if changed:
        Metrics.counter(namespace, counter).inc(changed)
    return out


def _small_step(item: tuple[Any, Iterable[tuple[int, Any]]], namespace: str, counter: str) -> list:
    """`small_round` of one grouped node; count the edges it changed."""
    out, changed = small_round(*item)
    if changed:
        Metrics.counter(namespace, counter).inc(changed)
    return out


def _both_directions(edge: Edge) -> Iterator[Edge]:
    yield edge
    yield (edge[1], edge[0])
