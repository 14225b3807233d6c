import math

import apache_beam as beam
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.util import assert_that, equal_to

from pipeline.beam_stages import RunCollectionStage
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.stages import ConfigError
from quality_models.score_threshold import ScoreThreshold, cut_from_quantiles


def doc(i: int, score: float | None) -> Document:
    return Document(id=f"d{i:04d}", text="x", scores={} if score is None else {"q": score})


def run(stage: ScoreThreshold, docs: list[Document], expect_kept, expect_rejected, expect_failed=()):
    """Run `stage` in the runtime; check its outcomes and return its counters by name."""
    pipeline = new_pipeline()
    out = pipeline | beam.Create(docs) | RunCollectionStage(stage)
    assert_that(out.kept | "KeptIds" >> beam.Map(lambda d: d.id), equal_to(expect_kept), label="kept")
    assert_that(
        out.rejected | "Reasons" >> beam.Map(lambda r: (r.doc.id, r.stage, r.reason)),
        equal_to(expect_rejected),
        label="rejected",
    )
    assert_that(
        out.failed | "Failures" >> beam.Map(lambda f: (f.id, f.stage, f.error, f.message)),
        equal_to(list(expect_failed)),
        label="failed",
    )
    result = pipeline.run()
    result.wait_until_finish()
    counters = result.metrics().query(MetricsFilter().with_namespace(stage.name))["counters"]
    return {m.key.metric.name: m.result for m in counters}


def test_absolute_mode_rejects_outside_bounds_and_missing_scores():
    docs = [doc(0, 0.1), doc(1, 0.5), doc(2, 0.95), doc(3, None), doc(4, math.nan)]
    stage = ScoreThreshold("thr", score="q", min=0.3, max=0.9)
    counters = run(
        stage,
        docs,
        ["d0001"],
        [
            ("d0000", "thr", "score_below_min"),
            ("d0002", "thr", "score_above_max"),
            ("d0003", "thr", "missing_score"),
            ("d0004", "thr", "missing_score"),
        ],
    )
    assert counters == {
        "in": 5,
        "kept": 1,
        "rejected.score_below_min": 1,
        "rejected.score_above_max": 1,
        "rejected.missing_score": 2,
    }


def test_a_malformed_document_is_a_failure_record_counted_as_failed():
    malformed = Document(id="bad", text="x", scores=None)
    stage = ScoreThreshold("thr", score="q")
    counters = run(
        stage,
        [doc(0, 0.9), malformed],
        ["d0000"],
        [],
        [("bad", "thr", "AttributeError", "'NoneType' object has no attribute 'get'")],
    )
    assert counters == {"in": 2, "kept": 1, "failed": 1}


def test_default_keeps_scores_of_at_least_one_half():
    stage = ScoreThreshold("score_threshold")
    assert stage.min == 0.5 and stage.score == "fasttext_quality"
    assert stage.decide(Document("a", "x", scores={"fasttext_quality": 0.4}), None)[0] == "score_below_min"
    assert stage.decide(Document("b", "x", scores={"fasttext_quality": 0.5}), None) == (None, "")


def test_keep_fraction_keeps_the_top_fraction_of_the_whole_input():
    docs = [doc(i, (i * 37 % 200) / 200.0) for i in range(200)]
    stage = ScoreThreshold("top", score="q", keep_fraction=0.25)
    top = sorted(docs, key=lambda d: d.scores["q"], reverse=True)[:50]
    rest = [(d.id, "top", "below_keep_fraction_cut") for d in docs if d not in top]
    counters = run(stage, docs, [d.id for d in top], rest)
    assert counters["in"] == 200 and counters["kept"] == 50
    assert counters["rejected.below_keep_fraction_cut"] == 150


def test_keep_fraction_takes_scores_too_large_for_a_metric():
    """A score of 10^13 (a perplexity, an unbounded linear head) overflowed Beam's int64 score
    distribution and failed the whole run."""
    docs = [doc(0, 0.1), doc(1, 0.5), doc(2, 1e13), doc(3, -math.inf), doc(4, 1e300)]
    stage = ScoreThreshold("top", score="q", keep_fraction=0.4)
    counters = run(
        stage,
        docs,
        ["d0002", "d0004"],
        [
            ("d0000", "top", "below_keep_fraction_cut"),
            ("d0001", "top", "below_keep_fraction_cut"),
            ("d0003", "top", "missing_score"),
        ],
    )
    assert counters["kept"] == 2


@pytest.mark.parametrize("settings", [{"min": 0.5}, {"keep_fraction": 0.5}])
def test_documents_outside_only_languages_pass_unthresholded_and_outside_the_cut(settings):
    english = [Document(f"en{i}", "x", scores={"q": i / 4}, language="en") for i in range(4)]
    german = [Document("de0", "x", language="de"), Document("de1", "x", scores={"q": 0.0}, language="de")]
    stage = ScoreThreshold("thr", score="q", **settings)
    stage.only_languages = frozenset({"en"})
    reason = "score_below_min" if "min" in settings else "below_keep_fraction_cut"
    rejected = [("en0", "thr", reason), ("en1", "thr", reason)]
    counters = run(stage, [*english, *german], ["en2", "en3", "de0", "de1"], rejected)
    assert (counters["in"], counters["kept"], counters["other_language"]) == (4, 2, 2)


def test_keep_fraction_splits_ties_deterministically():
    docs = [doc(i, 1.0 if i < 60 else 0.0) for i in range(100)] + [doc(100, None)]
    stage = ScoreThreshold("top", score="q", keep_fraction=0.3)
    pipeline = new_pipeline()
    out = stage.expand(pipeline | beam.Create(docs))
    assert_that(
        out.kept | beam.Map(lambda d: d.scores["q"]) | beam.combiners.Count.Globally(),
        equal_to([30]),
        label="count",
    )
    assert_that(
        out.rejected | beam.Map(lambda r: r.reason) | beam.combiners.Count.PerElement(),
        equal_to([("below_keep_fraction_cut", 70), ("missing_score", 1)]),
        label="reasons",
    )
    pipeline.run().wait_until_finish()


def test_cut_edge_cases():
    assert cut_from_quantiles([], 0, 0.5) == (math.inf, 0)
    assert cut_from_quantiles([(0.0, 1), (1.0, 2)], 2, 0.0) == (math.inf, 0)
    assert cut_from_quantiles([(0.0, 1), (0.5, 3), (1.0, 2)], 3, 1.0) == (0.0, 1)
    assert cut_from_quantiles([(0.0, 1), (0.5, 3), (1.0, 2)], 3, 1 / 3) == (1.0, 2)


def test_bad_combinations_are_config_errors_naming_the_key():
    with pytest.raises(ConfigError, match="keep_fraction"):
        ScoreThreshold("t", keep_fraction=0.1, min=0.2)
    with pytest.raises(ConfigError, match="min"):
        ScoreThreshold("t", min=0.9, max=0.1)
    with pytest.raises(ConfigError, match="keep_fraction"):
        ScoreThreshold("t", keep_fraction=1.5)
