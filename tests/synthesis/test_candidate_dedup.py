"""`candidate_dedup`: candidates with the same training text are removed before verification."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from pipeline.decisions import content_key
from pipeline.document import Document
from pipeline.run import new_pipeline
from synthesis.candidate_dedup import CandidateDedup, training_text


def code(doc_id: str, solution: str, tests: str) -> Document:
    meta = {"prompt": "Add two numbers.", "solution": solution, "tests": tests}
    return Document(doc_id, "", kind="code", metadata=meta)


def math(doc_id: str, solution: str) -> Document:
    meta = {"problem": "What is 2 + 3?", "solution": solution, "answer": "5"}
    return Document(doc_id, "", kind="math", metadata=meta)


def test_candidates_are_compared_by_their_training_text():
    add = "def add(a, b):\n    return a + b\n"
    assert training_text(code("a", add, "assert add(1, 2) == 3")) == training_text(
        code("b", add, "assert add(2, 2) == 4")
    )
    # Calculator annotations are not part of the training text.
    assert training_text(math("m1", "2 + 3 = <<2+3=5>>5\n#### 5")) == training_text(
        math("m2", "2 + 3 = 5\n#### 5")
    )
    assert training_text(Document("web", "plain text")) == "plain text"


def test_duplicate_candidates_are_rejected_and_distinct_ones_kept():
    add = "def add(a, b):\n    return a + b\n"
    documents = [
        code("code-b", add, "assert add(1, 2) == 3"),
        code("code-a", add, "assert add(2, 2) == 4"),  # same training text, other tests
        code("code-c", "def add(a, b):\n    return b + a\n", "assert add(1, 2) == 3"),
        math("math-2", "2 + 3 = <<2+3=5>>5\n#### 5"),
        math("math-1", "2 + 3 = 5\n#### 5"),
        Document("web", "some web text"),
    ]
    with new_pipeline() as pipeline:
        outputs = CandidateDedup("candidate_dedup").expand(pipeline | beam.Create(documents))
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        rejected = outputs.rejected | "R" >> beam.Map(lambda r: (r.doc.id, r.reason, r.duplicate_of))
        assert_that(kept, equal_to(["code-a", "code-c", "math-1", "web"]), label="kept")
        assert_that(
            rejected,
            equal_to([("code-b", "exact_duplicate", "code-a"), ("math-2", "exact_duplicate", "math-1")]),
            label="rejected",
        )


def test_code_indentation_is_part_of_the_compared_text():
    """Whitespace was collapsed as for prose: a program returning inside its `if` and one returning
    after it were one group, and the right one could be removed for the wrong one."""
    inside = "def f(x):\n    if x:\n        return 1\n        return 0\n"
    after = "def f(x):\n    if x:\n        return 1\n    return 0\n"
    tests = "assert f(0) == 0"
    documents = [
        code("a-inside", inside, tests),
        code("b-after", after, tests),
        code("c-after", after, tests),
    ]
    with new_pipeline() as pipeline:
        outputs = CandidateDedup("candidate_dedup").expand(pipeline | beam.Create(documents))
        kept = outputs.kept | "K" >> beam.Map(lambda d: d.id)
        rejected = outputs.rejected | "R" >> beam.Map(lambda r: (r.doc.id, r.duplicate_of))
        assert_that(kept, equal_to(["a-inside", "b-after"]), label="kept")
        assert_that(rejected, equal_to([("c-after", "b-after")]), label="rejected")


def test_lowercase_applies_to_code_too():
    upper, lower = code("a", "def F(x):\n    return 1\n", "t"), code("b", "def f(x):\n    return 1\n", "t")
    for lowercase, alike in ((True, True), (False, False)):
        stage = CandidateDedup("candidate_dedup", lowercase=lowercase)
        assert (stage.text_key(stage.compared(upper)) == stage.text_key(stage.compared(lower))) is alike


def test_longest_ranks_candidates_by_their_training_text():
    """A candidate's own text is empty until verify: `tie_break = "longest"` picked by id alone."""
    short, long = math("a-short", "5\n#### 5"), math("b-long", "2 + 3 = 5\n#### 5")
    stage = CandidateDedup("candidate_dedup", tie_break="longest")
    assert stage.text_key(stage.compared(short)) != stage.text_key(stage.compared(long))
    same = [math("a-short", "2 + 3 = 5\n#### 5"), math("b-long", "2 + 3 = 5\n\n#### 5")]
    members = sorted(stage.group_member(doc) for doc in same)
    assert members[0][0] == members[1][0]  # one group (whitespace collapsed for math)
    assert min(member[1] for member in members)[1] == content_key(same[1])  # the longer one survives


def test_a_math_candidate_with_a_null_solution_has_a_training_text():
    """A null `solution` (a mixed Parquet file's empty cell) raised in `candidate_dedup` and failed
    the whole run; verify rejects it (`no_answer`)."""
    doc = Document(
        "m", "", kind="math", metadata={"problem": "What is 2+3?", "solution": None, "answer": "5"}
    )
    assert training_text(doc) == "What is 2+3?\n\n"
    assert training_text(doc.with_metadata({"problem": None})) == "\n\n"
