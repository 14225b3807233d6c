import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from dedup.exact import ExactDedup, normalize
from pipeline.document import Document
from pipeline.run import new_pipeline


def test_normalize_collapses_whitespace_and_nfc():
    assert normalize("  Caf\u0065\u0301  au\n\tlait ", lowercase=False) == "Caf\u00e9 au lait"
    assert normalize("A  B", lowercase=True) == "a b"


def run(stage, documents):
    with new_pipeline() as pipeline:
        outputs = stage.expand(pipeline | beam.Create(documents))
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        rejected = outputs.rejected | "R" >> beam.Map(
            lambda r: (r.doc.id, r.reason, r.duplicate_of, r.detail)
        )
        yield kept, rejected


def test_longest_survives_then_smallest_id():
    documents = [Document("b", "same text"), Document("a", "same  text "), Document("c", "other")]
    for kept, rejected in run(ExactDedup("exact_dedup"), documents):
        # "same  text " is longest after trailing space; survivor is the longest raw text
        assert_that(kept, equal_to(["a", "c"]), label="kept")
        assert_that(rejected, equal_to([("b", "exact_duplicate", "a", "group_size=2")]), label="rejected")


def test_prefer_score_beats_length():
    documents = [
        Document("long", "same text  ", scores={"q": 0.1}),
        Document("good", "same text", scores={"q": 0.9}),
        Document("none", "same text"),
    ]
    for kept, rejected in run(ExactDedup("dedup", prefer_score="q"), documents):
        assert_that(kept, equal_to(["good"]), label="kept")
        assert_that(
            rejected,
            equal_to(
                [
                    ("long", "exact_duplicate", "good", "group_size=3"),
                    ("none", "exact_duplicate", "good", "group_size=3"),
                ]
            ),
            label="rejected",
        )


def test_smallest_id_tie_break_is_order_independent():
    stage = ExactDedup("dedup", tie_break="smallest_id")
    for documents in ([Document("z", "t"), Document("m", "t ")], [Document("m", "t "), Document("z", "t")]):
        decisions = dict(stage.resolve_group(b"key", [stage.group_member(d)[1] for d in documents]))
        assert sorted(decisions.values(), key=str) == [(2, "m"), None]
