"""Several heads on one embedding pass, coherence features, and the combined `quality` score."""

import json
import random

import numpy as np
import pytest

from pipeline.document import Document
from pipeline.stages import STAGES, ConfigError
from quality_models import coherence
from quality_models.combined import STATS, CombinedQuality, _word_counts, doc_stats
from quality_models.embedders import load_embedder
from quality_models.embedding_quality import HEADS_DIR, EmbeddingQuality, LinearHead

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


def test_aligned_overlap_sees_related_words_and_quote_breaks_see_split_dialogue():
    features = features_in_and_out_of_order(
        [
            ("The volcano erupted at dawn.", "Lava and ash buried the crater slopes."),
            ("A violinist tuned the instrument.", "The orchestra began its symphony."),
            ("The glacier has retreated for decades.", "Melting ice feeds the frozen lake."),
        ]
    )
    aligned = coherence.FEATURES.index("aligned_adjacent_z")
    assert features[0, aligned] > 0.0 > features[1, aligned]
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
    words, chars, lettered, stop, upper, digits = _word_counts(text + " é")
    assert _word_counts(text) == (words - 1, chars - 1, lettered - 1, stop, upper, digits)


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


def test_quality_weights_file_errors(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps({"features": ["a"], "mean": [0], "scale": [1, 2], "weight": [1], "bias": 0}))
    with pytest.raises(ConfigError, match="differ in length"):
        CombinedQuality("quality", model=str(bad))
    with pytest.raises(ConfigError, match="not found"):
        CombinedQuality("quality", model=str(tmp_path / "none.json"))
