import os
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to

from dedup.exact import ExactDedup
from pipeline.decisions import ApplyDecisions, DecisionChunk, content_key, key_partition
from pipeline.document import Document, Rejection
from pipeline.outcomes import KEPT, REJECTED
from pipeline.run import new_pipeline
from pipeline.spill import SpillByKeyFn, read_values


def _apply(doc, decisions, occurrence):
    if decisions:
        yield REJECTED, Rejection(doc, "s", "decided", ",".join(sorted(decisions)), None)
    else:
        yield KEPT, doc


def test_decisions_reach_their_documents_and_the_spill_files_are_deleted(tmp_path):
    docs = [Document(f"d{i}", f"text {i}") for i in range(300)]
    decisions = [(f"d{i}", f"r{i % 3}") for i in range(0, 300, 7)] + [("d7", "extra")]
    options = PipelineOptions([f"--spill_dir={tmp_path}"])
    with new_pipeline(options=options) as pipeline:
        outputs = (
            pipeline | "Docs" >> beam.Create(docs),
            pipeline | "Decisions" >> beam.Create(decisions),
        ) | ApplyDecisions("s", lambda d: d.id, _apply, partitions=5)
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        rejected = outputs.rejected | "R" >> beam.Map(lambda r: (r.doc.id, r.detail))
        expected = {f"d{i}": f"r{i % 3}" for i in range(0, 300, 7)}
        expected["d7"] = "extra,r1"
        assert_that(kept, equal_to([d.id for d in docs if d.id not in expected]), label="kept")
        assert_that(rejected, equal_to(sorted(expected.items())), label="rejected")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_decision_chunks_join_like_single_decisions(tmp_path):
    docs = [Document(f"d{i}", f"text {i}") for i in range(40)]
    decided = [(f"d{i}", f"r{i % 4}") for i in range(0, 40, 3)] + [("d3", "extra")]
    chunks: dict[int, list] = {}
    for doc_id, decision in decided[1:]:  # the first one stays a single (key, decision) element
        chunks.setdefault(key_partition(doc_id, 4), []).append((doc_id, decision))
    options = PipelineOptions([f"--spill_dir={tmp_path}"])
    with new_pipeline(options=options) as pipeline:
        decisions = [decided[0]] + [DecisionChunk(part, items) for part, items in chunks.items()]
        outputs = (
            pipeline | "Docs" >> beam.Create(docs),
            pipeline | "Decisions" >> beam.Create(decisions),
        ) | ApplyDecisions("s", lambda d: d.id, _apply, partitions=4)
        rejected = outputs.rejected | "R" >> beam.Map(lambda r: (r.doc.id, r.detail))
        expected = {f"d{i}": f"r{i % 4}" for i in range(0, 40, 3)} | {"d3": "extra,r3"}
        assert_that(rejected, equal_to(sorted(expected.items())), label="rejected")
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        assert_that(kept, equal_to([d.id for d in docs if d.id not in expected]), label="kept")


def test_passthrough_documents_come_out_kept_unchanged(tmp_path):
    docs = [Document(f"d{i}", f"text {i}") for i in range(20)]
    # a passthrough document sharing an id with a decided document is not decided on
    passthrough = [Document(f"c{i}", "", kind="code") for i in range(7)] + [Document("d3", "", kind="math")]
    options = PipelineOptions([f"--spill_dir={tmp_path}"])
    with new_pipeline(options=options) as pipeline:
        outputs = (
            pipeline | "Docs" >> beam.Create(docs),
            pipeline | "Decisions" >> beam.Create([("d3", "r")]),
            pipeline | "Passthrough" >> beam.Create(passthrough),
        ) | ApplyDecisions("s", lambda d: d.id, _apply, partitions=3)
        kept = outputs.kept | "K" >> beam.Map(lambda d: (d.id, d.kind))
        expected = [(d.id, None) for d in docs if d.id != "d3"] + [(d.id, d.kind) for d in passthrough]
        assert_that(kept, equal_to(expected), label="kept")
        assert_that(
            outputs.rejected | "R" >> beam.Map(lambda r: r.doc.id), equal_to(["d3"]), label="rejected"
        )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_spill_files_stream_back_in_chunks(tmp_path):
    spill = SpillByKeyFn(str(tmp_path))
    spill.start_bundle()
    docs = [Document(f"x{i}", "t" * i) for i in range(1000)]
    # each file's name comes out of `process` (a runner may drop what `finish_bundle` emits)
    files = [file for doc in docs for file in spill.process((key_partition(doc.id, 3), doc))]
    assert spill.finish_bundle() is None
    assert sorted(p for p, _ in files) == [0, 1, 2]
    back = [doc for partition, path in files for doc in read_values(path)]
    assert sorted(back, key=lambda d: d.id) == sorted(docs, key=lambda d: d.id)
    for partition, path in files:
        assert {key_partition(d.id, 3) for d in read_values(path)} == {partition}


def test_content_key_tells_apart_documents_sharing_an_id():
    a, b = Document("x", "one"), Document("x", "one", source="other.jsonl")
    assert content_key(a) != content_key(b) != content_key(Document("x", "two"))
    assert content_key(a) == content_key(Document("x", "one"))
    assert content_key(Document("x", "t", metadata={"a": 1, "b": 2})) == content_key(
        Document("x", "t", metadata={"b": 2, "a": 1})
    )


def test_exact_dedup_keeps_one_of_identical_copies_and_separates_same_id_sources():
    documents = [
        Document("a", "same text"),
        Document("a", "same text"),
        Document("a", "same text", source="b.jsonl"),
        Document("c", "other"),
    ]
    with new_pipeline() as pipeline:
        outputs = ExactDedup("exact_dedup", tie_break="smallest_id").expand(pipeline | beam.Create(documents))
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        rejected = outputs.rejected | "R" >> beam.Map(lambda r: (r.doc.id, r.duplicate_of, r.detail))
        # which of the equal-order copies survives is fixed by the content key, not input order
        assert_that(kept, equal_to(["a", "c"]), label="kept")
        assert_that(rejected, equal_to([("a", "a", "group_size=3")] * 2), label="rejected")


def test_a_temporary_spill_folder_is_removed_when_its_process_exits(tmp_path):
    """Without --spill_dir a stage spills into a fresh temporary folder; the process that made it
    removes it at exit (speed scripts left empty gristmill-spill-* folders behind)."""
    code = (
        "import apache_beam as beam, os\n"
        "from pipeline.decisions import spill_dir\n"
        "folder = spill_dir(beam.Pipeline(), 'stage')\n"
        "open(os.path.join(folder, 'left.pkl'), 'w').close()\n"
        "print(folder)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    folder = Path(done.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("gristmill-spill-stage-")
    assert not folder.exists()
