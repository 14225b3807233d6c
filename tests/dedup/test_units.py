import json
import random
import re

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.util import assert_that, equal_to

from dedup import unit_candidates
from dedup import units as units_module
from dedup.kmeans import neighbour_pairs
from dedup.units import UnitDedup, cut
from pipeline.document import Document
from pipeline.run import new_pipeline
from tests.dedup.test_semantic import BagOfWordsEmbedder  # a model that cannot embed 'EXPLODE'

NAV = "Home | News | Contact"  # a template line: fewer than min_words words, never a unit


DIGITS = str.maketrans("0123456789", "αβγδεζηθικ")  # normalization maps digits to 0: spell them


def para(tag: str, words: int = 20) -> str:
    """A paragraph that exists nowhere else (distinct words, also after normalization)."""
    return " ".join(f"{tag}w{i}".translate(DIGITS) for i in range(words))


def run(documents, **params):
    """Run `unit_dedup` and check kept (id, text, units_removed) and rejected (id, reason, detail,
    duplicate_of) against what `expect` returns for the same parameters."""
    stage = UnitDedup("unit_dedup", **{"min_remaining_chars": 50, **params})
    with new_pipeline() as pipeline:
        out = stage.expand(pipeline | beam.Create(documents))
        kept = out.kept | "K" >> beam.Map(lambda d: (d.id, d.text, d.metadata.get("units_removed")))
        rejected = out.rejected | "R" >> beam.Map(
            lambda r: (r.doc.id, r.stage, r.reason, r.detail, r.duplicate_of)
        )
        yield kept, rejected, out.failed


def test_cut_removes_lines_with_their_line_break():
    text = "one\r\ntwo\nthree\nfour"
    assert cut(text, [(0, 3), (9, 14)]) == "two\nfour"
    assert cut(text, [(15, 19)]) == "one\r\ntwo\nthree\n"
    assert cut(text, []) == text


def test_half_copy_is_contained_and_template_lines_do_not_count():
    a = Document("a", f"{NAV}\n{para('a1')}\n{para('a2')}\n{para('a3')}")
    half = Document("half", f"{NAV}\n{para('a1')}\n\n{para('a2')}\nShare this page")
    other = Document("other", f"{NAV}\n{para('o1')}")
    for kept, rejected, failed in run([a, half, other]):
        assert_that(kept, equal_to([("a", a.text, None), ("other", other.text, None)]), label="kept")
        assert_that(
            rejected,
            equal_to([("half", "unit_dedup", "contained_in", "containment=1.000 units=2/2", "a")]),
            label="rejected",
        )
        assert_that(failed, equal_to([]), label="failed")


def test_a_chinese_paragraph_copied_into_another_page_is_cut():
    """Chinese lines have no spaces: their characters count as words, for units and shingles."""
    copied = "北京是中华人民共和国的首都，也是全国的政治和文化中心，拥有故宫、天坛和长城等许多名胜古迹。"
    own = "上海位于长江入海口，是中国重要的经济、金融和贸易中心，港口的吞吐量多年位居世界前列。"
    elsewhere = "京都には千年以上の歴史を持つ神社やお寺が数多く残っており、春と秋には観光客でにぎわいます。"
    a = Document("a", f"{copied}\n{elsewhere}")
    b = Document("b", f"{own}\n{copied}")
    for kept, rejected, _ in run([a, b], tie_break="smallest_id", min_remaining_chars=10):
        assert_that(kept, equal_to([("a", a.text, None), ("b", f"{own}\n", [[1, "a"]])]), label="kept")
        assert_that(rejected, equal_to([]), label="rejected")


def test_copied_paragraph_is_cut_from_the_lower_ranked_document():
    a = Document("a", f"{para('a1')}\n{para('a2')}\n{para('a3')}")
    # b borrows a1 with one word changed; b is longer, so by `longest` b keeps the paragraph
    revised = para("a1").replace("a1w10".translate(DIGITS), "changed")
    b = Document("b", f"{para('b1')}\n{revised}\n{para('b2')}\n{para('b3')}")
    for kept, rejected, _ in run([a, b]):
        assert_that(
            kept,
            equal_to([("a", f"{para('a2')}\n{para('a3')}", [[0, "b"]]), ("b", b.text, None)]),
            label="kept",
        )
        assert_that(rejected, equal_to([]), label="rejected")


def test_prefer_score_decides_which_copy_survives():
    a = Document("a", f"{para('a1')}\n{para('a2')}\n{para('a3')}", scores={"q": 0.9})
    b = Document("b", f"{para('b1')}\n{para('a1')}\n{para('b2')}\n{para('b3')}", scores={"q": 0.2})
    for kept, _, _ in run([a, b], prefer_score="q"):
        expected_b = f"{para('b1')}\n{para('b2')}\n{para('b3')}"
        assert_that(kept, equal_to([("a", a.text, None), ("b", expected_b, [[1, "a"]])]))


def test_int_float_and_missing_scores_order_the_copies():
    """Scores of mixed types (an int, a float, none) make an object column of survivor orders: the
    highest score still keeps the paragraph, and a document without the score ranks last."""
    a = Document("a", f"{para('a1')}\n{para('s')}\n{para('a2')}\n{para('a3')}", scores={"q": 2})
    b = Document("b", f"{para('b1')}\n{para('s')}\n{para('b2')}\n{para('b3')}", scores={"q": 0.5})
    c = Document("c", f"{para('c1')}\n{para('s')}\n{para('c2')}\n{para('c3')}")
    for kept, _, _ in run([c, b, a], prefer_score="q"):
        cut = [
            (d.id, f"{para(d.id + '1')}\n{para(d.id + '2')}\n{para(d.id + '3')}", [[1, "a"]]) for d in (b, c)
        ]
        assert_that(kept, equal_to([("a", a.text, None), *cut]))


def test_too_short_after_cutting():
    a = Document("a", f"{para('a1')}\n{para('a2')}\n{para('a3')}")
    b = Document("b", f"{para('a1')}\n{para('a2')}\nshort tail of five words\n{para('b1', 8)}")
    for kept, rejected, _ in run([a, b], max_containment=0.9, min_remaining_chars=200):
        assert_that(kept, equal_to([("a", a.text, None)]), label="kept")
        assert_that(
            rejected,
            equal_to(
                [("b", "unit_dedup", "too_short_after_dedup", "remaining_chars=64 units_removed=2/3", "a")]
            ),
            label="rejected",
        )


def test_a_document_keeping_a_unit_for_others_is_never_rejected():
    """d loses p to the longer a but keeps q, which the shorter e loses to it: rejecting d as too
    short (or as contained) left q in no kept document, and e's `duplicate_of` named d."""
    p, q = para("p"), para("q")
    a = Document("a", f"{p}\n{para('a1', 60)}")
    d = Document("d", f"{p}\n{q}")
    e = Document("e", f"{q}\n{para('e1', 8)}")
    for kept, rejected, _ in run([a, d, e], min_remaining_chars=200):
        assert_that(kept, equal_to([("a", a.text, None), ("d", q, [[0, "a"]])]), label="kept")
        assert_that(
            rejected,
            equal_to(
                [("e", "unit_dedup", "too_short_after_dedup", "remaining_chars=39 units_removed=1/2", "d")]
            ),
            label="rejected",
        )


def test_identical_documents_tie_on_the_smallest_id():
    text = f"{para('x1')}\n{para('x2')}"
    docs = [Document(i, text) for i in ("m", "k", "z")]
    for kept, rejected, _ in run(docs):
        assert_that(kept, equal_to([("k", text, None)]), label="kept")
        assert_that(
            rejected,
            equal_to(
                [
                    ("m", "unit_dedup", "contained_in", "containment=1.000 units=2/2", "k"),
                    ("z", "unit_dedup", "contained_in", "containment=1.000 units=2/2", "k"),
                ]
            ),
            label="rejected",
        )


def test_empty_input_and_documents_without_units():
    for kept, rejected, failed in run([]):
        assert_that(kept, equal_to([]), label="kept")
        assert_that(rejected, equal_to([]), label="rejected")
        assert_that(failed, equal_to([]), label="failed")
    docs = [Document("s", "too short"), Document("t", "too short"), Document("e", "")]
    for kept, rejected, _ in run(docs):
        assert_that(kept, equal_to([("e", "", None), ("s", "too short", None), ("t", "too short", None)]))
        assert_that(rejected, equal_to([]), label="rejected")


def test_a_paragraph_repeated_inside_one_document():
    """Copies inside one document never cut each other; when another document keeps the
    paragraph, every copy of it is cut."""
    p1 = para("p1")
    a = Document("a", f"{p1}\n{p1}\n{para('a2')}\n{para('a3')}")
    b = Document("b", f"{para('b1')}\n{p1}\n{para('b2')}\n{para('b3')}\n{para('b4')}")  # longer: kept
    c = Document("c", f"{para('c1')}\n{para('c1')}\n{para('c2')}")
    for kept, rejected, _ in run([a, b, c]):
        assert_that(
            kept,
            equal_to(
                [
                    ("a", f"{para('a2')}\n{para('a3')}", [[0, "b"], [1, "b"]]),
                    ("b", b.text, None),
                    ("c", c.text, None),
                ]
            ),
            label="kept",
        )
        assert_that(rejected, equal_to([]), label="rejected")


# Real English paragraphs on unrelated topics, for the embedding path with the shipped static model.
TOPICS = [
    "The committee approved the new budget for public schools after a long debate about teacher "
    "salaries and the cost of repairing old buildings in the northern districts.",
    "Heavy rain flooded several roads near the river on Sunday, and emergency crews rescued two "
    "drivers whose cars had stalled in the rising water overnight.",
    "The museum will open an exhibition of medieval manuscripts next spring, including illuminated "
    "prayer books that have never been shown to the public before.",
    "Researchers found that the bacteria survive in frozen soil for thousands of years and can "
    "become active again when the ground thaws during warmer summers.",
    "The team lost its third match in a row after the goalkeeper was injured in the first half and "
    "the coach refused to change the defensive formation.",
]


def test_embedding_path_pairs_a_rewritten_paragraph():
    """The same words in reverse order share no word 3-gram (lexical path: no match) but have the
    same static embedding; with `embedder` set, the copy is cut from the lower-ranked document."""
    reversed_first, reversed_second = (" ".join(reversed(t.split())) for t in TOPICS[:2])
    a = Document("a", "\n".join(TOPICS[:3]), language="en")
    b = Document("b", f"{TOPICS[3]}\n{reversed_first}\n{TOPICS[4]}", language="en")
    # a language the embedder does not cover: matched lexically only
    de = Document("de", f"{para('d1')}\n{reversed_second}", language="de")
    for kept, rejected, _ in run([a, b, de], tie_break="smallest_id"):
        assert_that(kept, equal_to([(d.id, d.text, None) for d in (a, b, de)]), label="kept")
        assert_that(rejected, equal_to([]), label="rejected")
    for kept, rejected, failed in run([a, b, de], tie_break="smallest_id", embedder="static"):
        expected_b = f"{TOPICS[3]}\n{TOPICS[4]}"
        assert_that(
            kept,
            equal_to([("a", a.text, None), ("b", expected_b, [[1, "a"]]), ("de", de.text, None)]),
            label="kept",
        )
        assert_that(rejected, equal_to([]), label="rejected")
        assert_that(failed, equal_to([]), label="failed")


def test_a_document_that_cannot_be_embedded_fails_alone(monkeypatch):
    monkeypatch.setattr(units_module, "load_embedder", lambda name: BagOfWordsEmbedder())
    a = Document("a", f"{para('a1')}\n{para('a2')}")
    b = Document("b", f"{para('b1')}\n{para('a1')}\n{para('b2')}")
    bad = Document("bad", f"{para('a1')}\nEXPLODE {para('x1')}")
    for kept, rejected, failed in run([a, b, bad], embedder="minilm"):
        expected_a = para("a2")  # b is longer: it keeps a1; the failed document is no survivor
        assert_that(kept, equal_to([("a", expected_a, [[0, "b"]]), ("b", b.text, None)]), label="kept")
        assert_that(rejected, equal_to([]), label="rejected")
        assert_that(
            failed | beam.Map(lambda f: (f.id, f.stage, f.error, f.message)),
            equal_to([("bad", "unit_dedup", "RuntimeError", "cannot embed EXPLODE")]),
            label="failed",
        )


def test_neighbour_pairs_are_the_pairs_above_the_threshold_among_k_nearest():
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(6, 16))
    x = np.repeat(centres, 4, axis=0) + 0.05 * rng.normal(size=(24, 16))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    sims = x @ x.T
    brute = {(i, j) for i in range(24) for j in range(i + 1, 24) if sims[i, j] >= 0.9}
    rows, cols, cosines = neighbour_pairs(x, 23, 0.9)
    assert set(zip(rows.tolist(), cols.tolist())) == brute and len(rows) == len(brute)
    np.testing.assert_allclose(cosines, sims[rows, cols], atol=1e-5)
    rows, cols, _ = neighbour_pairs(x, 1, 0.9)  # each row adds at most its nearest other row
    assert len(rows) <= 24 and set(zip(rows.tolist(), cols.tolist())) <= brute
    assert all(len(a) == 0 for a in neighbour_pairs(x[:1], 4, 0.0))


def corpus() -> list[Document]:
    """Sources, partial copies, a half copy and unrelated pages, for the ordering check."""
    rng = random.Random(3)
    docs = []
    for i in range(12):
        docs.append(Document(f"s{i:02d}", "\n".join(para(f"s{i}p{j}") for j in range(4))))
    for i in range(12):
        borrowed = para(f"s{rng.randrange(12)}p{rng.randrange(4)}")
        docs.append(Document(f"c{i:02d}", f"{para(f'c{i}')}\n{borrowed}\n{para(f'c{i}b')}"))
    docs.append(Document("h00", f"{para('s3p0')}\n{para('s3p1')}"))
    return docs


def write_json(rows, path):
    with open(path, "w") as f:
        json.dump(rows, f)


@pytest.mark.parametrize("seed,partitions", [(1, 1), (2, 7), (3, 64)])
def test_same_output_for_any_input_order_and_partitions(seed, partitions, tmp_path):
    docs = corpus()
    shuffled = docs[:]
    random.Random(seed).shuffle(shuffled)
    for name, batch, parts in (("ref", docs, 64), ("shuffled", shuffled, partitions)):
        stage = UnitDedup("unit_dedup", min_remaining_chars=50, partitions=parts)
        with new_pipeline() as pipeline:
            out = stage.expand(pipeline | beam.Create(batch))
            _ = (
                (
                    out.kept | "K" >> beam.Map(lambda d: [d.id, d.text]),
                    out.rejected | "R" >> beam.Map(lambda r: [r.doc.id, r.reason, r.duplicate_of]),
                )
                | beam.Flatten()
                | beam.combiners.ToList()
                | beam.Map(lambda rows: sorted(rows))
                | beam.Map(write_json, str(tmp_path / f"{name}.json"))
            )
    reference = json.loads((tmp_path / "ref.json").read_text())
    assert json.loads((tmp_path / "shuffled.json").read_text()) == reference
    assert len(reference) == len(docs)
    rejected = {row[0]: row for row in reference if len(row) == 3}
    assert rejected["h00"] == ["h00", "contained_in", "s03"]


def test_verification_sets_equal_one_set_at_a_time():
    from dedup.minhash import verification_set, verification_sets

    rng = np.random.default_rng(3)
    sets = [np.unique(rng.integers(0, 2**64, size=n, dtype=np.uint64)) for n in (0, 5, 1, 300, 0, 77)]
    sets.append(np.array([2**32 + 5, 5, 2**33 + 5, 7], dtype=np.uint64))  # equal low 32 bits
    assert verification_sets(sets) == [verification_set(s) for s in sets]
    assert verification_sets(sets)[-1] == np.array([5, 7], dtype=np.uint32).tobytes()
    assert verification_sets([]) == []


def test_node_columns_restore_the_same_values_and_types():
    nodes = [(float("inf"), -120, "doc-b", 3), (-0.5, 0, "doc-a", 0), (2.0, -7, "doc-c", 11)]
    columns = [unit_candidates._column(field) for field in zip(*nodes)]
    assert [column.dtype.kind for column in columns] == ["f", "i", "O", "i"]
    rebuilt = unit_candidates._nodes(columns, np.array([2, 0]))
    assert rebuilt == [nodes[2], nodes[0]]
    assert [type(v) for v in rebuilt[0]] == [float, int, str, int]
    mixed = unit_candidates._column((1, 2.0, 3))  # mixed types stay the values themselves
    assert mixed.tolist() == [1, 2.0, 3] and [type(v) for v in mixed.tolist()] == [int, float, int]
    huge = unit_candidates._column((2**70, 1))  # an int beyond int64 too
    assert huge.dtype.kind == "O" and huge.tolist() == [2**70, 1]


def _reference_pairs(entries: list[tuple], keys: list[int], max_bucket_size: int) -> tuple[set, dict]:
    """The candidate pairs and counters of the former per-bucket step: every shared bucket's
    sorted members, all pairs (or a star to the smallest above max_bucket_size), then the
    linkable ones (either class has copies in several documents, or the two lie in different ones)."""
    buckets: dict[int, set] = {}
    entries_in: dict[int, int] = {}
    for key, entry in zip(keys, entries):
        buckets.setdefault(key, set()).add(entry)
        entries_in[key] = entries_in.get(key, 0) + 1
    found = set()
    counts = {
        "shared_buckets": sum(n > 1 for n in entries_in.values()),
        "oversized_buckets": 0,
        "star_edges": 0,
    }
    for members in buckets.values():
        members = sorted(members)
        if len(members) < 2:
            continue
        if len(members) > max_bucket_size:
            counts["oversized_buckets"] += 1
            counts["star_edges"] += len(members) - 1
            pairs = [(members[0], other) for other in members[1:]]
        else:
            pairs = [(a, b) for i, a in enumerate(members) for b in members[i + 1 :]]
        found.update(
            ((a, key_a), (b, key_b))
            for (a, multi_a, key_a), (b, multi_b, key_b) in pairs
            if multi_a or multi_b or unit_candidates.node_doc(a) != unit_candidates.node_doc(b)
        )
    return found, {name: value for name, value in counts.items() if value}


@pytest.mark.parametrize("max_bucket_size", [2, 3, 100])
def test_bucket_pairs_from_columns_equal_the_per_entry_pairs(max_bucket_size, monkeypatch):
    from dedup.minhash import pack, unpack

    reported = {}
    monkeypatch.setattr(unit_candidates, "report", lambda name, counts: reported.update(counts))
    rng = random.Random(7)
    entries, keys, blobs = [], [], []
    for chunk in range(3):  # three chunks, as from three class partitions (nodes are unique)
        nodes = [
            (rng.choice([float("inf"), -1.0]), -rng.randrange(5), f"d{rng.randrange(6)}", 40 * chunk + i)
            for i in range(40)
        ]
        multi = [rng.random() < 0.3 for _ in nodes]
        class_keys = [rng.randrange(2**64) for _ in nodes]
        band = [rng.randrange(12) for _ in nodes]
        band += [b + 12 for b in band]  # a second band where the same units meet: equal member sets
        nodes, multi, class_keys = nodes * 2, multi * 2, class_keys * 2
        entries += [(node, m, k) for node, m, k in zip(nodes, multi, class_keys)]
        keys += band
        columns = [unit_candidates._column(field) for field in zip(*nodes)]
        blobs.append(
            pack(
                (
                    np.array(band, dtype=np.uint64),
                    columns,
                    np.array(multi),
                    np.array(class_keys, dtype=np.uint64),
                )
            )
        )
    chunks = list(unit_candidates.bucket_pairs(0, blobs, max_bucket_size, "unit_dedup", 4))
    assert sorted({part for part, _ in chunks}) == sorted(
        part for part, _ in chunks
    )  # one chunk per partition
    by_part = {  # each chunk twice, as from two band partitions: its pairs once
        part: [unpack(packed) for packed in unit_candidates.distinct_class_pairs(part, [blob, blob])]
        for part, blob in chunks
    }
    found = [pair for pairs in by_part.values() for pair in pairs]
    assert all(
        unit_candidates._class_pair_partition(np.uint64(a[1]), np.uint64(b[1]), 4) == part
        for part, pairs in by_part.items()
        for a, b in pairs
    )
    assert len(found) == len(set(found))
    reference, counts = _reference_pairs(entries, keys, max_bucket_size)
    assert set(found) == reference
    assert {name: value for name, value in reported.items() if value} == counts
    assert found  # the data has linkable shared buckets


@pytest.mark.parametrize("min_words", [1, 2, 3, 4, 8])
def test_unit_lines_are_the_lines_with_enough_words_as_str_split_counts_them(min_words):
    """`units` against its definition (runs of characters other than CR and LF, words by `split`,
    each character a word in scripts written without spaces), on a fixed text and on random texts
    of mixed line ends, Unicode spaces and scripts."""
    from dedup.content import units
    from dedup.signatures import words_of_unspaced_scripts

    rng = random.Random(min_words)
    pieces = [
        "word",
        "two words",
        " ",
        "\u3000",
        "\t",
        "\r",
        "\n",
        "\r\n",
        "\x0b",
        "\u2028",
        "é",
        "xxx",
        "東京",
    ]
    fixed = "a b c\n  a\tb  c \n\u00a0a\u2028b c\r\nab c\r\n\nx y z w\n" + " ".join("w" * 3 for _ in range(8))
    texts = [fixed, ""] + [
        "".join(rng.choice(pieces) for _ in range(rng.randrange(40))) for _ in range(1_000)
    ]
    for text in texts:
        lines = list(re.finditer(r"[^\r\n]+", text))
        words = (len(words_of_unspaced_scripts(m.group()).split()) for m in lines)
        assert units(text, min_words) == [m.span() for m, n in zip(lines, words) if n >= min_words]
