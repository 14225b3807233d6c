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
a round that changes nothing means convergence, and the later rounds are no-ops. If the last
round still changed something the components are not final: the labels are then still safe
(every label is a node of the same true component, so unrelated documents are never merged) but
a true component may be split into several clusters. The final labelling step checks locally that
every node is a star centre or leaf (`is_star_member`) and counts the others in the Metrics
counter `cc_unconverged_nodes`, so a run says whether its components are exact.

Node ids may be any totally ordered, hashable values (document ids are strings). The same round
functions run in `components_local`, a dictionary-based driver used by tests on big graphs.
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


def component_label(node: Any, neighbours: Iterable[Any]) -> Any:
    """A node's cluster label: the smallest of itself and its neighbours (the star centre)."""
    return min(min(neighbours, default=node), node)


def components_local(edges: Iterable[Edge], rounds: int) -> tuple[dict[Any, Any], list[int]]:
    """Run the same rounds with dictionaries in one process: ({node: label}, changes per round).

    A reference driver for tests and small inputs; the Beam composite is `ConnectedComponents`.
    """
    current = {_edge(a, b) for a, b in edges if a != b}
    changes: list[int] = []
    for _ in range(rounds):
        changed = 0
        for step in ("large", "small"):
            groups: dict[Any, list[Any]] = defaultdict(list)
            for a, b in current:
                if step == "large":
                    groups[a].append(b)
                groups[b].append(a)
            emitted: set[Edge] = set()
            for node, nbrs in groups.items():
                out, n_changed = (large_star if step == "large" else small_star)(node, nbrs)
                emitted.update(out)
                changed += n_changed
            current = emitted
        changes.append(changed)
        if changed == 0:
            break
    neighbours: dict[Any, list[Any]] = defaultdict(list)
    for a, b in current:
        neighbours[a].append(b)
        neighbours[b].append(a)
    return {node: component_label(node, nbrs) for node, nbrs in neighbours.items()}, changes


class ConnectedComponents(beam.PTransform):
    """PCollection of edges (a, b) → PCollection of (node, label) for every node of an edge.

    `rounds` large-star/small-star rounds are unrolled. Metrics in `namespace`:
    `cc_round_NN_changes` (edges changed in round NN; absent when nothing changed), `cc_nodes`
    (nodes labelled) and `cc_unconverged_nodes` (nodes whose final neighbourhood is not a star
    around the smallest node; 0 or absent means the components are exact).
    """

    def __init__(self, rounds: int = 20, namespace: str = "components") -> None:
        super().__init__()
        self.rounds = rounds
        self.namespace = namespace

    def expand(self, edges):
        current = (
            edges
            | "Normalize" >> beam.Map(lambda e: _edge(*e))
            | "DropLoops" >> beam.Filter(lambda e: e[0] != e[1])
        )
        for i in range(1, self.rounds + 1):
            counter = f"cc_round_{i:02d}_changes"
            current = (
                current
                | f"R{i}LargeKeys" >> beam.FlatMap(_both_directions)
                | f"R{i}LargeGroup" >> beam.GroupByKey()
                | f"R{i}LargeStar" >> beam.FlatMap(_star_step, large_star, self.namespace, counter)
                | f"R{i}SmallKeys" >> beam.Map(lambda e: (e[1], e[0]))
                | f"R{i}SmallGroup" >> beam.GroupByKey()
                | f"R{i}SmallStar" >> beam.FlatMap(_star_step, small_star, self.namespace, counter)
            )
        return (
            current
            | "FinalKeys" >> beam.FlatMap(_both_directions)
            | "FinalGroup" >> beam.GroupByKey()
            | "Label" >> beam.FlatMap(_label, self.namespace)
        )


def is_star_member(node: Any, neighbours: list[Any]) -> bool:
    """True if the node is a star centre (smaller than all neighbours) or a leaf (one, smaller,
    neighbour). Every node passing this local check ⟺ every component is a star around its
    minimum, i.e. the rounds have converged."""
    return min(neighbours) > node or len(neighbours) == 1


def _label(item: tuple[Any, Iterable[Any]], namespace: str) -> Iterator[tuple[Any, Any]]:
    node, nbrs = item
    nbrs = list(set(nbrs))
    Metrics.counter(namespace, "cc_nodes").inc()
    if not is_star_member(node, nbrs):
        Metrics.counter(namespace, "cc_unconverged_nodes").inc()
    yield node, component_label(node, nbrs)


def _star_step(item: tuple[Any, Iterable[Any]], step, namespace: str, counter: str) -> Iterator[Edge]:
    """Apply `large_star` or `small_star` to one grouped node; count the edges it changed."""
    node, nbrs = item
    out, changed = step(node, nbrs)
    if changed:
        Metrics.counter(namespace, counter).inc(changed)
    yield from out


def _both_directions(edge: Edge) -> Iterator[Edge]:
    yield edge
    yield (edge[1], edge[0])
