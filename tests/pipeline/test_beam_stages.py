import pickle
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to

from dedup.exact import ExactDedup
from filters.length import LengthFilter
from pipeline.beam_stages import ApplyStages, failure, group_stages, run_stage_on_batch
from pipeline.document import KEEP, Document, keep, reject
from pipeline.run import error_summary, new_pipeline
from pipeline.stages import (
    STAGES,
    CollectionStage,
    DocumentStage,
    Param,
    Stage,
    StageOutputs,
    load_builtin_stages,
)


class Explodes(DocumentStage):
    """Fails on documents whose text contains 'boom'."""

    def check(self, doc):
        if "boom" in doc.text:
            raise ValueError("boom found")
        return KEEP


class Uppercases(DocumentStage):
    """Edits text; rejects nothing."""

    def check(self, doc):
        return keep(doc.with_text(doc.text.upper()))


def docs(*texts):
    return [Document(f"d{i}", text) for i, text in enumerate(texts)]


def test_batch_failure_is_isolated_to_the_bad_document():
    kept, removed, counts = run_stage_on_batch(Explodes("explodes"), docs("fine", "boom", "also fine"))
    assert [d.id for d in kept] == ["d0", "d2"]
    assert [(f.id, f.stage, f.error, f.message) for f in removed] == [
        ("d1", "explodes", "ValueError", "boom found")
    ]
    assert counts["failed"] == 1 and counts["kept"] == 2


def test_candidates_bypass_stages_that_do_not_handle_them():
    candidate = Document("c", "", kind="code")
    kept, removed, counts = run_stage_on_batch(LengthFilter("length", min_words=1), [candidate, *docs("")])
    assert [d.id for d in kept] == ["c"]
    assert [r.reason for r in removed] == ["too_few_words"]
    assert counts["in"] == 1


def test_group_stages_fuses_consecutive_document_stages():
    a, b, c, d = LengthFilter("a"), Uppercases("b"), ExactDedup("c"), LengthFilter("d")
    assert [[s.name for s in g] for g in group_stages([a, b, c, d])] == [["a", "b"], ["c"], ["d"]]


def test_apply_stages_three_outcomes_in_beam():
    inputs = docs("one two three", "boom two three", "x", "ONE two three")
    stages = [
        Explodes("explodes"),
        LengthFilter("length", min_words=2),
        Uppercases("upper"),
        ExactDedup("exact"),
    ]
    with new_pipeline() as pipeline:
        outputs = pipeline | beam.Create(inputs) | ApplyStages(stages, batch_size=2)
        assert_that(
            outputs.kept | "KeptIds" >> beam.Map(lambda d: (d.id, d.text)),
            equal_to([("d0", "ONE TWO THREE")]),
            label="kept",
        )
        assert_that(
            outputs.rejected
            | "RejectedIds" >> beam.Map(lambda r: (r.doc.id, r.stage, r.reason, r.duplicate_of)),
            equal_to([("d2", "length", "too_few_words", None), ("d3", "exact", "exact_duplicate", "d0")]),
            label="rejected",
        )
        assert_that(
            outputs.failed | "FailedIds" >> beam.Map(lambda f: (f.id, f.stage)),
            equal_to([("d1", "explodes")]),
            label="failed",
        )


def test_verdict_helpers():
    assert reject("too_short", "n=1").keep is False
    assert KEEP.keep is True


class LosesOne(CollectionStage):
    """A broken collection stage: drops the document with id d1."""

    def expand(self, docs, passthrough=None):
        kept = docs | "Drop" >> beam.Filter(lambda doc: doc.id != "d1")
        failed = docs.pipeline | "NoFailures" >> beam.Create([])
        return StageOutputs(kept, failed | "NoRejections" >> beam.Map(lambda x: x), failed)


def test_collection_stage_that_loses_a_document_fails_the_pipeline():
    with pytest.raises(Exception) as raised:
        with new_pipeline() as pipeline:
            _ = pipeline | beam.Create(docs("a", "b", "c")) | ApplyStages([LosesOne("lossy")])
    summary = error_summary(raised.value)
    assert summary.startswith("stage lossy: 3 documents in, but 2 kept + 0 rejected + 0 failed = 2 out")


def test_conserving_collection_stage_passes_the_check():
    with new_pipeline() as pipeline:
        out = pipeline | beam.Create(docs("a", "b", "a")) | ApplyStages([ExactDedup("exact_dedup")])
        assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["d0", "d1"]))


def test_error_summary_picks_the_conservation_line_out_of_a_worker_traceback():
    worker_error = RuntimeError(
        "Pipeline failed\nTraceback (most recent call last):\n  File x\n"
        "pipeline.beam_stages.LostElements: stage s: 5 documents in [while running 'X']\n"
    )
    assert error_summary(worker_error) == "stage s: 5 documents in [while running 'X']"
    assert error_summary(ValueError("one\ntwo")) == "two"


def stage_counters(result) -> dict[tuple[str, str], int]:
    found = {}
    for counter in result.metrics().query()["counters"]:
        key = (counter.key.metric.namespace, counter.key.metric.name)
        found[key] = found.get(key, 0) + (counter.committed or counter.attempted or 0)
    return found


def test_document_and_collection_stages_count_in_one_vocabulary():
    pipeline = new_pipeline()
    stages = [Explodes("explodes"), LengthFilter("length", min_words=2), ExactDedup("exact")]
    _ = pipeline | beam.Create(docs("a b", "boom b", "x", "a b")) | ApplyStages(stages, batch_size=3)
    counters = stage_counters(pipeline.run())
    assert {k: v for k, v in counters.items() if k[1] != "micros"} == {
        ("explodes", "in"): 4,
        ("explodes", "kept"): 3,
        ("explodes", "failed"): 1,
        ("length", "in"): 3,
        ("length", "kept"): 2,
        ("length", "rejected.too_few_words"): 1,
        ("exact", "in"): 2,
        ("exact", "kept"): 1,
        ("exact", "rejected.exact_duplicate"): 1,
    }
    assert ("length", "micros") in counters


def test_candidates_pass_a_collection_stage_that_ignores_them_uncounted():
    twins = [Document("c1", "same", kind="code"), Document("c2", "same", kind="code")]
    pipeline = new_pipeline()
    out = pipeline | beam.Create([*twins, *docs("a b", "a b")]) | ApplyStages([ExactDedup("exact")])
    assert_that(
        out.kept | beam.Map(lambda d: (d.id, d.kind)),
        equal_to([("c1", "code"), ("c2", "code"), ("d0", None)]),
    )
    counters = stage_counters(pipeline.run())
    assert {k[1]: v for k, v in counters.items() if k[0] == "exact"} == {
        "in": 2,
        "kept": 1,
        "rejected.exact_duplicate": 1,
    }


def test_failure_record_has_the_error_class_and_a_one_line_message():
    record = failure(Document("d", "t", source="s.jsonl"), "stage", ValueError("no\n  such\tfield"))
    assert (record.id, record.source, record.stage, record.error) == ("d", "s.jsonl", "stage", "ValueError")
    assert record.message == "no such field"
    assert failure(Document("d", "t"), "stage", RuntimeError()).message == "RuntimeError"


class Tracked(DocumentStage):
    """Marks setup and teardown in files (DoFns are copies, so state is shared via the disk)."""

    params = {"marks": Param(str, "", "folder for the marks")}

    def setup(self):
        self.ready = True
        (Path(self.marks) / "setup").touch()

    def teardown(self):
        (Path(self.marks) / "teardown").touch()

    def check(self, doc):
        assert self.ready, "check before setup"
        return KEEP


def test_runtime_calls_setup_before_check_and_teardown_at_the_end(tmp_path):
    with new_pipeline() as pipeline:
        out = pipeline | beam.Create(docs("a", "b")) | ApplyStages([Tracked("tracked", marks=str(tmp_path))])
        assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["d0", "d1"]))
    assert (tmp_path / "setup").exists() and (tmp_path / "teardown").exists()


def test_a_stage_with_only_languages_passes_other_documents_untouched():
    length = LengthFilter("length", min_words=2)
    length.only_languages = frozenset({"en"})
    german, english, unknown = (
        Document("de", "kurz", language="de"),
        Document("en", "x", language="en"),
        Document("u", "y"),
    )
    kept, removed, counts = run_stage_on_batch(length, [german, english, unknown])
    assert [d.id for d in kept] == ["de", "u"] and [r.doc.id for r in removed] == ["en"]
    assert (counts["in"], counts["other_language"], counts["kept"]) == (1, 2, 0)


def test_a_collection_stage_with_only_languages_passes_other_documents_through_counted():
    exact = ExactDedup("exact")
    exact.only_languages = frozenset({"en"})
    pair = [Document(f"{lang}{i}", f"same {lang}", language=lang) for lang in ("en", "de") for i in (1, 2)]
    pipeline = new_pipeline()
    out = pipeline | beam.Create(pair) | ApplyStages([exact])
    assert_that(out.kept | beam.Map(lambda d: d.id), equal_to(["en1", "de1", "de2"]))
    counters = stage_counters(pipeline.run())
    assert {k[1]: v for k, v in counters.items() if k[0] == "exact"} == {
        "in": 2,
        "other_language": 2,
        "kept": 1,
        "rejected.exact_duplicate": 1,
    }


load_builtin_stages()
SET_UP_STAGES = sorted(
    name for name, cls in STAGES.items() if issubclass(cls, DocumentStage) and cls.setup is not Stage.setup
)


@pytest.mark.parametrize("name", SET_UP_STAGES)
def test_a_document_stage_used_before_its_setup_says_so(name, tmp_path):
    (tmp_path / "eval.jsonl").write_text(
        '{"id": "q", "text": "an eval item of thirteen words or more, as an n-gram needs"}\n'
    )
    params = {"paths": [str(tmp_path / "eval.jsonl")]} if name == "decontaminate" else {}
    stage = pickle.loads(pickle.dumps(STAGES[name](name, **params)))  # as a worker receives it
    with pytest.raises(RuntimeError, match=f"stage {name!r} used before setup"):
        stage.check(Document("d", "some words " * 30, url="http://example.com/page"))
