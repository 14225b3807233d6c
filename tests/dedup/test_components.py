import random
from collections import defaultdict

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from dedup.components import (
    ConnectedComponents,
    component_label,
    components_local,
    is_star_member,
    large_star,
    small_star,
)
from pipeline.run import new_pipeline


def union_find(edges) -> dict:
    """Reference: {node: smallest node of its component}."""
    parent: dict = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent.setdefault(a, a)
        parent.setdefault(b, b)
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {node: find(node) for node in parent}


def rounds_without_dropping(edges, rounds: int) -> tuple[dict, list]:
    """Reference: every edge through every round (the rounds before finished stars left them)."""
    current = {(min(a, b), max(a, b)) for a, b in edges if a != b}
    changes = []
    for _ in range(rounds):
        changed = 0
        for step in (large_star, small_star):
            groups = defaultdict(list)
            for a, b in current:
                if step is large_star:
                    groups[a].append(b)
                groups[b].append(a)
            emitted = set()
            for node, nbrs in groups.items():
                out, n_changed = step(node, nbrs)
                emitted.update(out)
                changed += n_changed
            current = emitted
        changes.append(changed)
    neighbours = defaultdict(list)
    for a, b in current:
        neighbours[a].append(b)
        neighbours[b].append(a)
    return {node: component_label(node, nbrs) for node, nbrs in neighbours.items()}, changes


def chain(n: int, shuffle_seed: int | None = None) -> list:
    labels = list(range(n))
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(labels)
    return [(labels[i], labels[i + 1]) for i in range(n - 1)]


def star(n: int) -> list:
    return [(n, leaf) for leaf in range(n)]  # centre is the largest id: the worst case


def cliques(count: int, size: int) -> list:
    return [
        (c * size + i, c * size + j) for c in range(count) for i in range(size) for j in range(i + 1, size)
    ]


def random_graph(nodes: int, edges: int, seed: int) -> list:
    rng = random.Random(seed)
    return [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)]


def test_star_steps_keep_edges_inside_and_count_changes():
    edges, changed = large_star(5, [1, 7, 9])
    assert sorted(edges) == [(1, 7), (1, 9)] and changed == 2
    assert large_star(1, [7, 9])[1] == 0  # already the minimum: nothing changes
    edges, changed = small_star(9, [5, 3, 7])
    assert sorted(edges) == [(3, 5), (3, 7), (3, 9)] and changed == 2
    assert is_star_member(1, [4, 5]) and is_star_member(4, [1]) and not is_star_member(4, [1, 5])


def test_chain_of_20k_nodes_matches_union_find():
    # Rounds grow with log(length): 16 here (18 at 100k); 40 rounds would not do for a linear scheme.
    edges = chain(20_000)
    labels, changes, carried = components_local(edges, rounds=40)
    assert changes[-1] == 0 and len(changes) < 40
    assert labels == union_find(edges)
    # the chain is labelled, and leaves the rounds, one round after the first that changes nothing
    assert changes.index(0) == len(changes) - 2 == len(carried) - 2


def test_adversarial_graphs_match_union_find():
    for edges in (
        chain(5_000, shuffle_seed=3),
        star(20_000),
        cliques(2_000, 6),
        random_graph(20_000, 15_000, 7),
    ):
        labels, changes, carried = components_local(edges, rounds=40)
        assert changes[-1] == 0 and len(changes) < 40
        assert labels == union_find([e for e in edges if e[0] != e[1]])


def test_unconverged_labels_never_merge_components():
    edges = chain(1_000) + [(a + 5_000, b + 5_000) for a, b in chain(1_000)]
    labels, changes, _ = components_local(edges, rounds=2)
    assert changes[-1] > 0
    truth = union_find(edges)
    assert all(truth[label] == truth[node] for node, label in labels.items())
    assert len(set(labels.values())) > 2


def test_finished_stars_leave_the_rounds_without_changing_labels_or_changes():
    # A long chain (slow), a star centred on its largest id, a clique, and isolated pairs (finished
    # from round 1), also with too few rounds: labels and changes per round equal the rounds that
    # carry every edge to the end, and the finished components stop being carried.
    parts = [
        chain(3_000, shuffle_seed=5),
        star(500),
        cliques(1, 30),
        [(2 * i, 2 * i + 1) for i in range(200)],
    ]
    edges = [(g * 10_000 + a, g * 10_000 + b) for g, part in enumerate(parts) for a, b in part]
    for rounds in (1, 2, 3, 5, 8, 30):
        labels, changes, carried = components_local(edges, rounds)
        ref_labels, ref_changes = rounds_without_dropping(edges, rounds)
        assert labels == ref_labels
        assert changes == ref_changes[: len(changes)] and not any(ref_changes[len(changes) :])
    # the 200 pairs are finished stars at round 1 and labelled at round 2; the rest by round 8
    assert carried[1] < carried[0] - 2 * 200 and len(carried) < 30
    assert labels == union_find(edges)


def test_star_clique_and_pair_finish_in_the_first_rounds():
    for edges, finished_by in ((star(1_000), 3), (cliques(1, 50), 3), ([(1, 2)], 2)):
        labels, changes, carried = components_local(edges, rounds=10)
        assert labels == union_find(edges) and len(carried) == finished_by


def _run_beam(edges, rounds):
    """Run the Beam composite; return (labels, metrics by name)."""
    expected = sorted(union_find([e for e in edges if e[0] != e[1]]).items())
    pipeline = new_pipeline()
    out = pipeline | beam.Create(edges) | ConnectedComponents(rounds=rounds, namespace="cc_test")
    assert_that(out, equal_to(expected))
    result = pipeline.run()
    result.wait_until_finish()
    totals: dict = defaultdict(int)  # a counter is reported per step: summed over steps
    for c in result.metrics().query()["counters"]:
        if c.key.metric.namespace == "cc_test":
            totals[c.key.metric.name] += c.committed
    return dict(totals)


def test_beam_composite_matches_union_find_on_adversarial_graphs():
    # Disjoint graphs in one pipeline, string ids (as document ids are): a shuffled chain, a star
    # centred on its largest id, cliques, a random graph and a self-loop.
    parts = [chain(300, shuffle_seed=1), star(200), cliques(50, 4), random_graph(400, 300, 2), [(7, 7)]]
    edges = [(f"g{g}-{a:05d}", f"g{g}-{b:05d}") for g, part in enumerate(parts) for a, b in part]
    metrics = _run_beam(edges, rounds=12)
    assert metrics.get("cc_unconverged_nodes", 0) == 0
    assert metrics["cc_nodes"] == len({n for e in edges if e[0] != e[1] for n in e})
    assert metrics["cc_round_01_changes"] > 0 and "cc_round_12_changes" not in metrics
    # every component finished within the 12 rounds, so none reached the final labelling
    assert metrics["cc_finished_nodes"] == metrics["cc_nodes"]


def test_beam_composite_reports_unconverged_run():
    edges = [(f"{a:04d}", f"{b:04d}") for a, b in chain(64)]
    pipeline = new_pipeline()
    labels = pipeline | beam.Create(edges) | ConnectedComponents(rounds=1, namespace="cc_short")
    assert_that(labels | beam.Map(lambda kv: kv[1] <= kv[0]) | beam.Distinct(), equal_to([True]))
    result = pipeline.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    assert counters["cc_unconverged_nodes"] > 0 and counters["cc_round_01_changes"] > 0
