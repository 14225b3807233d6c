"""semantic_dedup: blocked similarity, near-duplicate groups, survivor policies and the Beam composite."""

import itertools
import pickle
import zlib

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.util import assert_that, equal_to

from dedup import semantic
from dedup.clusters import center
from dedup.content import containment, sketch, sketch_containment
from dedup.semantic import (
    REASON,
    SemanticDedup,
    chunks,
    cut_for,
    decide_cluster,
    duplicate_groups,
    embed_documents,
    member_order,
    similar_pairs,
)
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.stages import ConfigError


def unit_rows(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def planted(n_groups: int, copies: int, dim: int = 24, noise: float = 0.02, seed: int = 0) -> np.ndarray:
    """Random directions, each repeated `copies` times with small noise, rows shuffled."""
    rng = np.random.default_rng(seed)
    base = np.repeat(unit_rows(rng.normal(size=(n_groups, dim))), copies, axis=0)
    x = unit_rows(base + noise * rng.normal(size=base.shape))
    return x[rng.permutation(len(x))]


def brute_pairs(x: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    sims = x @ x.T
    return {(i, j) for i, j in itertools.combinations(range(len(x)), 2) if sims[i, j] > threshold}


def brute_groups(x: np.ndarray, threshold: float) -> list[int]:
    """Connected components by repeated relabelling to the smallest member."""
    label = list(range(len(x)))
    pairs = brute_pairs(x, threshold)
    changed = True
    while changed:
        changed = False
        for i, j in pairs:
            low = min(label[i], label[j])
            if label[i] != low or label[j] != low:
                label[i] = label[j] = low
                changed = True
    return label


@pytest.mark.parametrize("block_size", [1, 7, 64, 1000])
def test_blocked_pairs_equal_brute_force(block_size):
    x = planted(20, 4)
    found = set()
    for rows, cols, sims in similar_pairs(x, 0.9, block_size):
        found |= set(zip(rows.tolist(), cols.tolist()))
        np.testing.assert_allclose(sims, np.einsum("ij,ij->i", x[rows], x[cols]), atol=1e-5)
    assert found == brute_pairs(x, 0.9)
    assert len(found) == 20 * 6  # C(4, 2) pairs per planted group


@pytest.mark.parametrize("block_size", [3, 50, 512])
def test_groups_equal_brute_force_components(block_size):
    x = planted(30, 3, noise=0.15, seed=5)  # noisy: some planted groups split, some chain
    assert duplicate_groups(x, 0.8, block_size).tolist() == brute_groups(x, 0.8)


def test_cluster_bigger_than_block_size():
    x = planted(40, 5, seed=2)  # 200 rows, block of 16
    groups = duplicate_groups(x, 0.9, block_size=16)
    assert groups.tolist() == brute_groups(x, 0.9)
    assert len(set(groups.tolist())) == 40


def test_chain_is_one_group():
    a = np.array([1.0, 0.0])
    angle = np.deg2rad(20)  # a-b and b-c at 20°, a-c at 40°
    x = unit_rows(np.stack([a, [np.cos(angle), np.sin(angle)], [np.cos(2 * angle), np.sin(2 * angle)]]))
    assert duplicate_groups(x, np.cos(np.deg2rad(25)), block_size=1).tolist() == [0, 0, 0]


def docs_for(n: int, **scores) -> list[Document]:
    return [
        Document(id=f"d{i}", text="x" * (10 + i), scores={k: v[i] for k, v in scores.items()})
        for i in range(n)
    ]


def survivors(docs, sims, survivor, prefer_score=""):
    x = np.tile(unit_rows(np.ones((1, 4))), (len(docs), 1))  # all identical: one group
    orders = [member_order(doc, prefer_score) for doc in docs]
    removed = decide_cluster(x, np.array(sims), orders, eps=0.05, block_size=2, survivor=survivor)
    assert len(removed) == len(docs) - 1
    kept = set(range(len(docs))) - {d.row for d in removed}
    assert {d.survivor for d in removed} == kept
    return docs[kept.pop()].id


def test_survivor_policies():
    sims = [0.7, 0.9, 0.5, 0.8]  # cosine to the centroid
    docs = docs_for(4, quality=[0.1, 0.3, 0.2, 0.3])
    assert survivors(docs, sims, "hard") == "d2"  # farthest from the centroid
    assert survivors(docs, sims, "easy") == "d1"  # nearest
    assert survivors(docs, sims, "longest") == "d3"
    assert survivors(docs, sims, "hard", prefer_score="quality") == "d3"  # score tie d1/d3, d3 farther
    assert survivors(docs, sims, "easy", prefer_score="quality") == "d1"
    assert survivors(docs_for(3), [0.5, 0.5, 0.5], "hard") == "d0"  # then the smallest id


def test_a_survivor_gives_way_to_the_member_keeping_the_units_cut_from_it():
    """`unit_dedup` cut lines from one page because another keeps them; `semantic_dedup` then
    removed the other, the lines' last holder, for the cut-down page: lost from the corpus."""
    cut, plain, holder = docs_for(3, quality=[0.9, 0.5, 0.1])
    x = np.tile(unit_rows(np.ones((1, 4))), (3, 1))
    orders = [member_order(doc, "quality") for doc in (cut, plain, holder)]
    for survivor in ("hard", "easy", "longest"):
        for holders, kept in ((["d2"], 2), (["d1"], 1), ([], 0)):  # by score, d0 would survive
            removed = decide_cluster(x, np.array([0.1, 0.5, 0.9]), orders, eps=0.05, block_size=2,
                                     survivor=survivor, cut_for=[tuple(holders), (), ()])  # fmt: skip
            assert {d.survivor for d in removed} == {kept}, (survivor, holders)
    assert cut_for(Document("x", "t", metadata={"units_removed": "n/a"})) == ()  # an input's own field
    assert cut_for(Document("x", "t", metadata={"units_removed": [7, [0, "h"]]})) == ("h",)
    chain = [("d1",), ("d2",), ()]  # d2 keeps units cut from d1, which keeps units cut from d0
    removed = decide_cluster(x, np.zeros(3), orders, eps=0.05, block_size=2, survivor="hard", cut_for=chain)
    assert {d.survivor for d in removed} == {2}


def test_at_eps_0_every_identical_pair_is_a_duplicate_whatever_the_rounding():
    """At eps = 0 the threshold was `> 1.0` on float32 dot products: 21 of 40 exact copies removed."""
    rng = np.random.default_rng(3)
    x = unit_rows(rng.normal(size=(200, 64)).astype(np.float32))
    pairs = sum(len(rows) for rows, _, _ in similar_pairs(np.concatenate([x, x]), 1.0, 64))
    assert pairs == 200
    assert sum(len(rows) for rows, _, _ in similar_pairs(x, 1.0, 64)) == 0


def test_survivor_independent_of_input_order():
    docs, sims = docs_for(5), [0.6, 0.2, 0.9, 0.2, 0.4]
    order = [3, 1, 4, 0, 2]
    assert survivors([docs[i] for i in order], [sims[i] for i in order], "hard") == "d1"
    assert survivors(docs, sims, "hard") == "d1"


def test_removed_similarity_is_to_the_survivor():
    x = planted(1, 3, seed=9)
    orders = [member_order(doc, "") for doc in docs_for(3)]
    removed = decide_cluster(x, np.zeros(3), orders, eps=0.1, block_size=8, survivor="hard")
    for d in removed:
        assert d.similarity == pytest.approx(float(x[d.row] @ x[d.survivor]), abs=1e-6)
        assert d.similarity > 0.9


def test_config_checks():
    assert SemanticDedup("semantic_dedup").eps == 0.10
    with pytest.raises(ConfigError, match="eps"):
        SemanticDedup("semantic_dedup", eps=1.0)
    with pytest.raises(ConfigError, match="embedder"):
        SemanticDedup("semantic_dedup", embedder="bert")


class BagOfWordsEmbedder:
    """Test double for the model: texts with the same word multiset get the same vector."""

    name, dim, max_tokens = "bow", 64, 512

    def encode(self, texts, batch_size=64):
        if any("EXPLODE" in t for t in texts):
            raise RuntimeError("cannot embed EXPLODE")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                rng = np.random.default_rng(zlib.crc32(word.encode()))
                out[row] += rng.normal(size=self.dim)
        return unit_rows(out)


def test_chunks_cover_text_at_spaces():
    text = " ".join(f"word{i}" for i in range(200))
    pieces = chunks(text, 50)
    assert "".join(pieces) == text
    assert all(len(p) <= 50 for p in pieces)
    assert all(p.startswith(" ") for p in pieces[1:])  # cut before a space, never inside a word
    assert chunks("", 10) == [""]
    assert chunks("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


def test_long_document_is_the_length_weighted_mean_of_its_chunks():
    embedder = BagOfWordsEmbedder()
    embedder.max_tokens = 10  # 30-character chunks
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho"
    pieces = chunks(text, 30)
    assert len(pieces) > 2
    weights = np.array([len(p) for p in pieces], dtype=np.float32)[:, None]
    expected = unit_rows((embedder.encode(pieces) * weights).sum(axis=0, keepdims=True))
    got = embed_documents(embedder, [text, "alpha"], max_chars=1000, batch_size=4)
    np.testing.assert_allclose(got[0], expected[0], atol=1e-6)
    np.testing.assert_allclose(got[1], embedder.encode(["alpha"])[0], atol=1e-6)


def test_center_removes_the_common_direction():
    rng = np.random.default_rng(4)
    common = unit_rows(rng.normal(size=(1, 16)))
    x = unit_rows(5 * common + rng.normal(size=(200, 16)))
    assert (x @ x.T).mean() > 0.5
    centered = center(x, x.mean(axis=0))
    assert abs((centered @ centered.T).mean()) < 0.05
    np.testing.assert_allclose(np.linalg.norm(centered, axis=1), 1.0, rtol=1e-5)
    assert center(x, None) is x


def test_a_row_at_the_mean_keeps_its_own_direction():
    """Centered, a corpus of one text repeated was all zero rows (or rounding noise), whose
    cosines are 0: `semantic_dedup` removed none of 20 copies."""
    rng = np.random.default_rng(5)
    copies = np.repeat(unit_rows(rng.normal(size=(1, 16))), 20, axis=0)
    centered = center(copies, copies.mean(axis=0, dtype=np.float64).astype(np.float32))
    np.testing.assert_allclose(centered @ centered.T, 1.0, rtol=1e-5)
    x = unit_rows(rng.normal(size=(50, 16)))
    mean = x.mean(axis=0)
    x[7] = mean
    centered = center(x, mean)
    np.testing.assert_allclose(centered[7], unit_rows(x[7:8])[0], rtol=1e-5)
    np.testing.assert_allclose(centered[:7], unit_rows(x[:7] - mean), rtol=1e-5)


def test_a_corpus_of_one_text_repeated_keeps_one_copy(monkeypatch):
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    docs = [Document(id=f"d{i:02d}", text="alpha beta gamma delta epsilon zeta") for i in range(20)]
    with new_pipeline() as p:
        out = SemanticDedup("semdup", sample_size=50).expand(p | beam.Create(docs))
        assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["d00"]), label="kept")


def topic_docs(n_topics: int, n_dups: int) -> list[Document]:
    """Distinct documents t00.., plus reordered copies u00.. of the first n_dups (same word multiset)."""
    topics = [f"alpha{i} beta{i} gamma{i} delta{i}" for i in range(n_topics)]
    docs = [Document(id=f"t{i:03d}", text=t) for i, t in enumerate(topics)]
    return docs + [
        Document(id=f"u{i:03d}", text=" ".join(reversed(topics[i].split()))) for i in range(n_dups)
    ]


def test_composite_removes_duplicates(monkeypatch):
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    docs = topic_docs(60, 5)
    docs.append(Document(id="bad", text="EXPLODE"))
    # an exact copy in a language the embedder does not cover passes through untouched
    docs.append(Document(id="de", text=docs[0].text, language="de"))
    # the copies are reversed word orders: min_overlap=0 lets the embedding alone decide
    stage = SemanticDedup(
        "semdup", batch_size=8, block_size=4, survivor="longest", sample_size=50, min_overlap=0.0
    )

    with new_pipeline() as p:
        out = stage.expand(p | beam.Create(docs))
        assert_that(
            out.kept | beam.Map(lambda d: d.id),
            equal_to([f"t{i:03d}" for i in range(60)] + ["de"]),
            label="kept",
        )
        assert_that(
            out.rejected
            | beam.Map(
                lambda r: (r.doc.id, r.stage, r.reason, r.duplicate_of, "cos_to_survivor=1.0000" in r.detail)
            ),
            equal_to([(f"u{i:03d}", "semdup", REASON, f"t{i:03d}", True) for i in range(5)]),
            label="rejected",
        )
        assert_that(
            out.failed | beam.Map(lambda f: (f.id, f.stage, f.error, f.message)),
            equal_to([("bad", "semdup", "RuntimeError", "cannot embed EXPLODE")]),
            label="failed",
        )


def test_composite_splits_oversized_cluster(monkeypatch):
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    stage = SemanticDedup(
        "semdup", clusters=1, max_cluster_size=100, block_size=16, sample_size=500, min_overlap=0.0
    )
    with new_pipeline() as p:
        out = stage.expand(p | beam.Create(topic_docs(240, 30)))
        assert_that(out.kept | beam.combiners.Count.Globally(), equal_to([240]), label="kept")
        assert_that(
            out.rejected | beam.Map(lambda r: (r.doc.id, r.duplicate_of[1:])),
            equal_to([(f"u{i:03d}", f"{i:03d}") for i in range(30)]),
            label="rejected",
        )


def test_real_static_embedder_flags_reordered_document():
    from quality_models.embedders import STATIC_MODEL_DIR

    if not (STATIC_MODEL_DIR / "model.safetensors").is_file():
        pytest.skip("static embedder weights not built")
    text = (
        "The council approved the new budget on Tuesday after a long debate. Spending on schools rises "
        "by four percent. Road repairs get an extra two million dollars. The mayor said taxes stay flat."
    )
    reordered = " ".join(reversed(text.split(". ")))
    other = "Heavy rain flooded the valley overnight, and rescue teams moved families to higher ground."
    docs = [Document(id="a", text=text), Document(id="b", text=reordered), Document(id="c", text=other)]
    x = semantic.load_embedder("static").encode([d.text for d in docs])
    orders = [member_order(doc, "") for doc in docs]
    removed = decide_cluster(x, np.zeros(3), orders, eps=0.08, block_size=2, survivor="hard")
    assert [(docs[d.row].id, docs[d.survivor].id) for d in removed] == [("b", "a")]


def test_verification_keeps_same_words_in_other_order_apart(monkeypatch):
    """Same bag of words (cosine 1.0 for the test embedder) but no shared 3-gram: not a duplicate
    at the default min_overlap; an exact copy is; a copy labelled with another language is never
    compared."""
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    # spelled words: normalization maps digits to 0, so `w0 w1 w2` and its reversal were one 3-gram
    words = "river mill grain stone wheel water flour bread town market road bridge".split()
    text = " ".join(words)
    docs = [
        Document(id="a", text=text, language="en"),
        Document(id="b", text=" ".join(reversed(words)), language="en"),
        Document(id="c", text=text, language="en"),
        Document(id="d", text=text, language="de"),
    ]
    stage = SemanticDedup("semdup", languages=[], sample_size=10, survivor="longest")
    with new_pipeline() as p:
        out = stage.expand(p | beam.Create(docs))
        assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["a", "b", "d"]), label="kept")
        assert_that(
            out.rejected | beam.Map(lambda r: (r.doc.id, r.duplicate_of)), equal_to([("c", "a")]), label="rej"
        )


def test_decide_cluster_verifies_pairs_by_shingle_containment():
    x = np.tile(unit_rows(np.ones((1, 4))), (3, 1))  # cosine 1.0 between all three
    sets = [np.array([1, 2, 3, 4], dtype=np.uint64), np.array([3, 4, 5], dtype=np.uint64)]
    sets.append(np.array([9], dtype=np.uint64))
    sketches = [sketch(s, 16) for s in sets]
    orders = [member_order(doc, "") for doc in docs_for(3)]
    removed = decide_cluster(
        x, np.zeros(3), orders, eps=0.05, block_size=2, survivor="hard",
        sketches=sketches, min_overlap=0.6, max_shingles=16,
    )  # fmt: skip
    assert [(d.row, d.survivor) for d in removed] == [(1, 0)]  # containment 2/3 ≥ 0.6; row 2 shares none
    removed = decide_cluster(
        x, np.zeros(3), orders, eps=0.05, block_size=2, survivor="hard",
        sketches=sketches, min_overlap=0.7, max_shingles=16,
    )  # fmt: skip
    assert removed == []


def test_a_large_group_of_copies_checks_each_member_about_once_not_every_pair(monkeypatch):
    """Every pair above the cosine threshold had its words checked, joined or not: 4,000 copies of
    a page took 117 s in `semantic_dedup` (n²/2 checks); pairs already joined are skipped now."""
    calls = []

    def counted(a, b, cap):
        calls.append(1)
        return sketch_containment(a, b, cap)

    monkeypatch.setattr(semantic, "sketch_containment", counted)
    n = 3_000
    x = np.tile(unit_rows(np.ones((1, 4))), (n, 1))
    pages = [sketch(np.arange(50, dtype=np.uint64), 64)] * (n - 1) + [
        sketch(np.arange(900, 950, dtype=np.uint64), 64)
    ]
    orders = [member_order(doc, "") for doc in docs_for(n)]
    removed = decide_cluster(
        x, np.zeros(n), orders, eps=0.05, block_size=512, survivor="hard",
        sketches=pages, min_overlap=0.5, max_shingles=64,
    )  # fmt: skip
    assert sorted(d.row for d in removed) == list(range(1, n - 1))  # the last page shares no words
    assert len(calls) < 3 * n  # each copy joins once; the odd page out is checked against every copy


def test_sketch_containment_is_exact_under_the_cap_and_close_above_it():
    rng = np.random.default_rng(3)
    pool = rng.permutation(np.unique(rng.integers(0, 2**32, size=20_000, dtype=np.uint64)))
    small, large = np.sort(pool[:300]), np.sort(pool[200:6200])  # 100 of small's 300 in large
    assert sketch_containment(sketch(small, 300), sketch(pool[250:400], 300), 300) == containment(
        small, pool[250:400]
    )  # both within the cap: exact (50 / 150)
    assert sketch(small, 300)[1] == 300 and len(sketch(large, 512)[0]) == 512 * 4
    estimate = sketch_containment(sketch(small, 512), sketch(large, 512), 512)
    assert abs(estimate - 100 / 300) < 0.1  # capped: bottom-k estimate (exact 1/3)
    assert sketch_containment(sketch(large, 512), sketch(large, 512), 512) == pytest.approx(1.0)
    assert sketch_containment(sketch(small, 8), sketch(np.array([], dtype=np.uint64), 8), 8) == 0.0


def test_members_carry_no_text(monkeypatch):
    """What the embedding step sends to the clusters holds keys, orders and hashes, never a text."""
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    fn = semantic._EmbedBatch(SemanticDedup("semdup"))
    fn.setup()
    docs = [Document(id=f"d{i}", text=f"distinctive{i} words of document number {i} " * 20) for i in range(3)]
    (tag, (members, vectors)),  = fn.process(docs)  # fmt: skip
    assert tag == semantic.EMBEDDED and vectors.shape == (3, BagOfWordsEmbedder.dim)
    blob = pickle.dumps(members)
    assert not any(f"distinctive{i}".encode() in blob for i in range(3))
    assert [semantic.member_id(m) for m in members] == ["d0", "d1", "d2"]


def test_identical_copies_share_a_content_key_and_one_survives(monkeypatch):
    """Byte-identical documents (same id too) meet their decisions by one content key: one copy is
    kept, the other rejected, whatever order they arrive in."""
    monkeypatch.setattr(semantic, "load_embedder", lambda name: BagOfWordsEmbedder())
    text = " ".join(f"w{i}" for i in range(12))
    docs = [
        Document(id="same", text=text),
        Document(id="same", text=text),
        Document(id="z", text="other words here"),
    ]
    stage = SemanticDedup("semdup", sample_size=10)
    with new_pipeline() as p:
        out = stage.expand(p | beam.Create(docs))
        assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["same", "z"]), label="kept")
        assert_that(
            out.rejected | beam.Map(lambda r: (r.doc.id, r.duplicate_of)),
            equal_to([("same", "same")]),
            label="rej",
        )
