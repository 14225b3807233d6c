"""Several heads on one embedding pass, coherence features, and the combined `quality` score."""

import json
import random
import sys
import tracemalloc

import numpy as np
import pytest

from pipeline.document import Document
from pipeline.stages import STAGES, ConfigError
from quality_models import coherence, combined
from quality_models.combined import COUNTS, STATS, CombinedQuality, doc_stats, reference_counts, stats_matrix
from quality_models.embedders import load_embedder, one_blas_thread
from quality_models.embedding_quality import HEADS_DIR, EmbeddingQuality, HeadStack, LinearHead

from .conftest import BAD, GOOD

HEADS = ["informative", "coherent", "depth", "toxic"]
PROSE = (
    "The river rises in the hills above the town. It gathers water from a dozen small streams. "
    "By the time it reaches the town it is wide enough for boats. The old mill used its current "
    "to grind grain for two hundred years. Today the mill is a museum, and its wheel still turns. "
    "Visitors can watch the millstones and buy flour ground on the spot. The museum opens at ten."
)


def test_shipped_heads_carry_their_metrics_and_share_one_embedder():
    for name in HEADS:
        head = LinearHead.load(HEADS_DIR / f"{name}.safetensors")
        assert head.embedder == "static" and head.embedding_dim == 256
        assert head.info["metrics"]["heldout_auc"] > 0.7 and head.info["metrics"]["heldout_sources"]
    assert LinearHead.load(HEADS_DIR / "coherent.safetensors").features == "embedding+coherence"
    assert LinearHead.load(HEADS_DIR / "depth.safetensors").kind == "linear"


class CountingEmbedder:
    """The real static embedder, counting its passes over the texts."""

    def __init__(self, embedder) -> None:
        self.inner, self.name, self.dim, self.passes = embedder, embedder.name, embedder.dim, 0

    def encode(self, texts, batch_size=64):
        self.passes += 1
        return self.inner.encode(texts, batch_size)

    def encode_with_coherence(self, texts):
        self.passes += 1
        return self.inner.encode_with_coherence(texts)


def test_all_heads_score_from_one_pass_per_batch():
    stage = EmbeddingQuality("eq", model="", heads=HEADS)
    stage.setup()
    stage._embedder = CountingEmbedder(stage._embedder)
    docs = [Document("good", " ".join(GOOD)), Document("spam", " ".join(BAD)), Document("empty", "")]
    verdicts = stage.check_batch(docs)
    assert stage._embedder.passes == 1
    assert stage.score_names() == [f"eq.{h}" for h in HEADS]
    good, spam, _ = (v.doc.scores for v in verdicts)
    assert set(good) == {f"eq.{h}" for h in HEADS} and "eq" not in good
    assert good["eq.informative"] > spam["eq.informative"]
    assert all(np.isfinite(v) for s in (good, spam) for v in s.values())


def test_main_head_and_heads_together_and_config_errors(tmp_path):
    stage = EmbeddingQuality(
        "eq", model="quality_models/models/embedding-quality-static/head.safetensors", heads=["depth"]
    )
    stage.setup()
    scores = stage.check(Document("d", PROSE)).doc.scores
    assert set(scores) == {"eq", "eq.depth"}
    with pytest.raises(ConfigError, match="heads: embedding head file not found"):
        EmbeddingQuality("eq", heads=["no_such_head"])
    with pytest.raises(ConfigError, match="model: give a main head"):
        EmbeddingQuality("eq", model="")
    # before, these loaded, then failed at setup on every worker
    with pytest.raises(
        ConfigError, match="heads: 'informative' expects 256 dims .*embedder 'minilm' gives 384"
    ):
        EmbeddingQuality("eq", model="", heads=["informative"], embedder="minilm")
    with pytest.raises(ConfigError, match="model expects 384 dims"):
        EmbeddingQuality("eq", embedder="static")


def test_coherence_pass_matches_the_plain_embedding():
    embedder = load_embedder("static")
    texts = [PROSE, " ".join(GOOD), "", "one"]
    plain = embedder.encode(texts)
    with_features, features = embedder.encode_with_coherence(texts)
    assert np.abs(plain - with_features).max() < 2e-3
    assert features.shape == (4, len(coherence.FEATURES)) and np.isfinite(features).all()


def test_corruptions_keep_or_mix_the_sentences():
    rng = random.Random(0)
    parts = coherence.sentences(PROSE)
    assert len(parts) == 7 and parts[0] == "The river rises in the hills above the town."
    assert sorted(coherence.sentences(coherence.shuffled(PROSE, rng))) == sorted(parts)
    cut = coherence.truncated(PROSE, rng)
    assert cut in PROSE and cut != PROSE
    mixed = coherence.interleaved(PROSE, " ".join(GOOD), rng)
    assert set(parts) < set(coherence.sentences(mixed))


def features_in_and_out_of_order(pairs: list[tuple[str, str]]) -> np.ndarray:
    """Coherence features of three related sentence pairs in order (row 0) and pulled apart (row 1)."""
    ordered = [s for pair in pairs for s in pair]
    scrambled = [ordered[i] for i in (0, 2, 4, 1, 3, 5)]
    return load_embedder("static").encode_with_coherence([" ".join(ordered), " ".join(scrambled)])[1]


def test_lexical_features_see_which_sentences_share_words():
    features = features_in_and_out_of_order(
        [
            ("The volcano erupted at dawn.", "Ash from the volcano covered the valley."),
            ("A violinist played for the crowd.", "Her violin was two centuries old."),
            ("The glacier has retreated for decades.", "Meltwater from the glacier feeds the lake."),
        ]
    )
    z, minus_far = (coherence.FEATURES.index(f) for f in ("lexical_adjacent_z", "lexical_adjacent_minus_far"))
    assert features[0, z] > 1.0 > 0.0 > features[1, z]
    assert features[0, minus_far] > 0.0 > features[1, minus_far]
    content = coherence.content_tokens({"volcano": 0, "the": 1, "which": 2, "##ing": 3, "ash": 4})
    assert content.tolist() == [True, False, False, False, False]


def test_vector_and_aligned_overlap_see_related_words_and_quote_breaks_see_split_dialogue():
    features = features_in_and_out_of_order(
        [
            ("The volcano erupted at dawn.", "Lava and ash buried the crater slopes."),
            ("A violinist tuned the instrument.", "The orchestra began its symphony."),
            ("The glacier has retreated for decades.", "Melting ice feeds the frozen lake."),
        ]
    )
    for name in ("aligned_adjacent_z", "adjacent_z", "centered_adjacent_z"):
        column = coherence.FEATURES.index(name)
        assert features[0, column] > 0.0 > features[1, column], name
    dialogue = [
        '"We set out at dawn.',
        'The river was high," she said.',
        '"It rained all week.',
        'Nobody slept."',
    ]
    assert coherence.quote_breaks(" ".join(dialogue)) == 0
    assert coherence.quote_breaks(" ".join(dialogue[i] for i in (0, 2, 1, 3))) == 2


def test_coherent_head_prefers_real_prose_to_its_interleaving():
    stage = EmbeddingQuality("eq", model="", heads=["coherent"])
    stage.setup()
    other = " ".join(GOOD)
    rng = random.Random(1)
    real = stage.check(Document("r", PROSE)).doc.scores["eq.coherent"]
    broken = stage.check(Document("b", coherence.truncated(coherence.interleaved(PROSE, other, rng), rng)))
    assert real > broken.doc.scores["eq.coherent"]


def test_doc_stats_count_letterless_words_upper_case_and_digits_in_any_script():
    text = "Ünïcode ١٢٣ 42 __ -- a1 ... Word"
    stats = doc_stats(text)
    assert stats["alpha_word_fraction"] == pytest.approx(3 / 8)  # Ünïcode, a1, Word
    assert stats["digit_fraction"] == pytest.approx(6 / len(text))  # ١٢٣, 4, 2, 1
    assert stats["upper_fraction"] == pytest.approx(1 / len(text))  # W (A-Z only)
    ascii_stats = doc_stats("AB 12 x")
    assert (ascii_stats["upper_fraction"], ascii_stats["digit_fraction"]) == (2 / 7, 2 / 7)


@pytest.mark.parametrize(
    "text",
    [
        "the The tHE that",
        "a\x1cb -- 12 x_y __\x1f.. Ab\x0bof",
        "To be,\tor not to BE.\r\n- with it",
        "",
        "  ",
    ],
)
def test_ascii_fast_path_counts_as_the_general_path(text):
    # One non-ASCII word sends the text down the regex path: one more word (with a letter, 1 character).
    plain, accented = (
        dict(zip(COUNTS, reference_counts(text))),
        dict(zip(COUNTS, reference_counts(text + " é"))),
    )
    for name in ("words", "word_chars", "lettered_words"):
        assert accented[name] == plain[name] + 1
    for name in ("stopwords", "upper", "digits"):
        assert accented[name] == plain[name]


def test_doc_stats_are_gopher_style_ratios():
    stats = doc_stats("Hello world.\n\n- item one\n- item one\nABC 123")
    assert set(stats) == set(STATS)
    assert stats["bullet_lines"] == pytest.approx(2 / 4) and stats["duplicate_lines"] == pytest.approx(1 / 4)
    assert stats["digit_fraction"] > 0 and 0 < stats["upper_fraction"] < 1
    assert all(v == 0.0 for k, v in doc_stats("").items())


def test_quality_combines_earlier_scores_into_a_probability():
    assert STAGES["quality"] is CombinedQuality
    stage = CombinedQuality("quality")
    required = stage.required_scores()["model"]
    assert "fasttext_quality" in required and "embedding_quality.informative" in required
    scores = {name: 0.5 for name in required}
    good = stage.check(Document("g", PROSE, scores={**scores, "fasttext_quality": 0.95}))
    bad = stage.check(Document("b", PROSE, scores={**scores, "fasttext_quality": 0.05}))
    assert 0.0 <= bad.doc.scores["quality"] < good.doc.scores["quality"] <= 1.0
    with pytest.raises(KeyError, match="fasttext_quality"):
        stage.check(Document("m", PROSE, scores={k: v for k, v in scores.items() if k != "fasttext_quality"}))


def test_quality_clips_each_feature_to_the_range_it_was_fitted_on():
    stage = CombinedQuality("quality")
    model = json.loads(combined.DEFAULT_WEIGHTS.read_text())
    assert all(low <= high for low, high in zip(model["low"], model["high"]))
    scores = {name: 0.5 for name in stage.required_scores()["model"]}
    # One 100,000-character "word": its mean word length is ~200,000 scales above the fitted pages'.
    word = stage.check(Document("w", "x" * 100_000, scores=scores)).doc.scores["quality"]
    longer = stage.check(Document("l", "x" * 1_000_000, scores=scores)).doc.scores["quality"]
    assert word == longer and word < 0.5
    unclipped = {k: v for k, v in model.items() if k not in ("low", "high")}
    assert combined.combine(unclipped, [Document("w", "x" * 100_000, scores=scores)])[0] > 0.99


def test_quality_weights_file_errors(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps({"features": ["a"], "mean": [0], "scale": [1, 2], "weight": [1], "bias": 0}))
    with pytest.raises(ConfigError, match="differ in length"):
        CombinedQuality("quality", model=str(bad))
    bounds = {"features": ["a"], "mean": [0], "scale": [1], "weight": [1], "bias": 0, "low": [0]}
    bad.write_text(json.dumps(bounds))
    with pytest.raises(ConfigError, match="differ in length"):
        CombinedQuality("quality", model=str(bad))
    with pytest.raises(ConfigError, match="not found"):
        CombinedQuality("quality", model=str(tmp_path / "none.json"))
    # before, these loaded: every score NaN, or every document failed
    good = {"features": ["log_words", "mean_word_length"], "mean": [0, 4], "scale": [1, 1], "weight": [1, 1]}
    for change, message in (
        ({"mean": [float("nan"), 4]}, "mean holds something other than finite numbers"),
        ({"weight": ["1", 1]}, "weight holds something other than finite numbers"),
        ({"bias": True}, "bias holds"),
        ({"scale": [0, 1]}, "every scale must be above 0"),
        ({"low": [0, 5], "high": [1, 4]}, "low is above its high"),
        ({"features": [5, "log_words"]}, "every feature must be a name"),  # AttributeError, exit 1
        ({"features": ["log_words", "log_words"]}, "a feature is named twice"),
    ):
        bad.write_text(json.dumps({**good, "bias": 0, **change}))
        with pytest.raises(ConfigError, match=message):
            CombinedQuality("quality", model=str(bad))


FUZZ_ALPHABET = [
    *" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\u00a0\u3000\u200b.!?\"':\u201d\u201c",
    *"\u2022-*\u00b7\u2013\u25ba#\u2026_0123456789\u0661\u0662AbZz\u00e9\u00dc\u00df\u212a\u0130\u00bd\u00b2",
    *"\U0001f600\x00",
    *("the", "The", "THE", "of", "and", "wIth", "that", "have", "be", "to", "...", "tHaT", "item one"),
]


def test_native_counts_equal_the_python_reference():
    native = pytest.importorskip("quality_models._stats_native")
    rng = random.Random(0)
    texts = [PROSE, *GOOD, *BAD, "", "   ", "a\r\nb\r\n\r\na", "x" * 40 + "\n" + "x" * 29 + "\n"]
    # Duplicate lines of every length around the line hash's 8-byte steps, in each storage kind.
    texts += [
        "\n".join(f" {line} \n{line}\n{line[:-1]}" for line in (w * k for k in range(1, 20)))
        for w in ("a", "é", "ā", "😀")
    ]
    texts += ["".join(rng.choice(FUZZ_ALPHABET) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    # ASCII texts go 16 bytes at a time: words, lines and runs of dots across and inside blocks.
    ascii_pieces = [piece for piece in FUZZ_ALPHABET if piece.isascii()]
    texts += ["".join(rng.choice(ascii_pieces) for _ in range(rng.randint(16, 160))) for _ in range(3000)]
    texts += [" " * shift + PROSE for shift in range(16)]
    counts = np.frombuffer(native.counts(texts), dtype=np.int64).reshape(len(texts), len(COUNTS))
    for text, row in zip(texts, counts.tolist()):
        assert tuple(row) == reference_counts(text), repr(text)
    with pytest.raises(TypeError, match="str"):
        native.counts(["a", 1])


def test_stats_matrix_rows_are_doc_stats():
    texts = [PROSE, "", "Hello world.\n\n- item one\n- item one\nABC 123"]
    matrix = stats_matrix(texts)
    assert matrix.shape == (3, len(STATS))
    for text, row in zip(texts, matrix.tolist()):
        assert row == [doc_stats(text)[name] for name in STATS]


def test_head_stack_scores_every_head_as_its_own_formula():
    heads = [LinearHead.load(HEADS_DIR / f"{name}.safetensors") for name in HEADS]
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(50, 256)).astype(np.float32)
    features = rng.normal(size=(50, len(coherence.FEATURES))).astype(np.float32)
    stacked = HeadStack(heads).score(embeddings, features)
    for column, head in enumerate(heads):
        x = np.hstack([embeddings, features]) if head.features == "embedding+coherence" else embeddings
        logit = x.astype(np.float64) @ head.weight.astype(np.float64) + head.bias
        expected = 1.0 / (1.0 + np.exp(-logit)) if head.kind == "logistic" else logit
        np.testing.assert_allclose(stacked[:, column], expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(head.score(embeddings, features), expected, rtol=1e-12, atol=1e-12)


def test_one_blas_thread_is_restored_after():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    before = blas_threads()
    with one_blas_thread():
        assert set(blas_threads().values()) == {1}
    assert blas_threads() == before


def test_a_documents_head_scores_are_the_same_whatever_its_batch():
    """A BLAS matrix product's last bits depend on the rows beside it: the same corpus cut into
    other splits (so other batches) got scores 1e-17 apart in 127 of 20,000 documents."""
    heads = [LinearHead.load(HEADS_DIR / f"{name}.safetensors") for name in ("informative", "depth", "toxic")]
    stack = HeadStack(heads)
    embeddings = np.random.default_rng(1).normal(size=(1000, 256)).astype(np.float32)
    whole = stack.score(embeddings)
    for size in (1, 7, 64):
        parts = np.vstack([stack.score(embeddings[i : i + size]) for i in range(0, len(embeddings), size)])
        assert np.array_equal(parts, whole)


def test_quality_batch_equals_one_document_at_a_time_and_fails_only_in_the_batch():
    stage = CombinedQuality("quality")
    required = stage.required_scores()["model"]
    rng = random.Random(3)
    docs = [
        Document(str(i), text, scores={name: rng.random() for name in required})
        for i, text in enumerate([PROSE, *GOOD, *BAD, ""])
    ]
    batch = [v.doc.scores["quality"] for v in stage.check_batch(docs)]
    assert batch == [stage.check(doc).doc.scores["quality"] for doc in docs]
    nan = Document("n", PROSE, scores={**docs[0].scores, "embedding_quality.depth": float("nan")})
    with pytest.raises(KeyError, match="embedding_quality.depth"):
        stage.check_batch([docs[0], nan])
    assert stage.check_batch([]) == []


def test_stats_without_the_native_module_come_from_the_python_reference(monkeypatch):
    monkeypatch.setitem(sys.modules, "quality_models._stats_native", None)  # import fails
    with pytest.warns(RuntimeWarning, match="not built"):
        counts = combined._load_counts()
    texts = [PROSE, "", "a\n\nb"]
    assert counts(texts).tolist() == [list(reference_counts(t)) for t in texts]
    assert counts([]).shape == (0, len(COUNTS))


def test_a_long_word_without_letters_is_counted_in_memory_about_its_size():
    """The Python counts (non-ASCII text, no native module) kept regex state per character of a
    word without letters: one 10 MB run of dashes took 1.1 GB."""
    text = "é " + "-" * 2_000_000 + " word"
    tracemalloc.start()
    try:
        counts = dict(zip(COUNTS, reference_counts(text)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (counts["words"], counts["lettered_words"]) == (3, 2)
    assert peak < 10 * len(text)  # about 4 MB; 230 MB before
