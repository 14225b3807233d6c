import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to

from pipeline.document import Document
from pipeline.outcomes import FAILED, KEPT, REJECTED, SplitByTag, SplitOutcomes
from pipeline.run import new_pipeline


def test_split_outcomes_sends_each_value_to_its_outcome():
    pairs = [(KEPT, "a"), (REJECTED, "b"), (KEPT, "c"), (FAILED, "d")]
    with new_pipeline() as pipeline:
        outputs = pipeline | beam.Create(pairs) | SplitOutcomes()
        assert_that(outputs.kept, equal_to(["a", "c"]), label="kept")
        assert_that(outputs.rejected, equal_to(["b"]), label="rejected")
        assert_that(outputs.failed, equal_to(["d"]), label="failed")


def test_unknown_tag_fails_the_run_instead_of_dropping_the_value():
    with pytest.raises(Exception, match="'lost' is not one of"):
        with new_pipeline() as pipeline:
            _ = pipeline | beam.Create([("x", 1), ("lost", 2)]) | SplitByTag(["x"])


def test_score_and_metadata_copies_change_only_their_field_and_keep_the_cache():
    doc = Document(
        id="d", text="some words", source="s", url="u", language="en", language_score=0.9,
        scores={"a": 1.0}, kind="web", metadata={"m": 1},
    )  # fmt: skip
    words = doc.cached("words", str.split)
    scored = doc.with_scores({"a": 2.0, "b": 3.0})
    tagged = scored.with_metadata({"n": 2})
    assert scored == doc.replace(scores={"a": 2.0, "b": 3.0}) and doc.scores == {"a": 1.0}
    assert tagged == scored.replace(metadata={"m": 1, "n": 2}) and scored.metadata == {"m": 1}
    assert tagged.cached("words", lambda text: []) is words  # same text: the analysis carries over
