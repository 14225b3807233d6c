"""`candidate_dedup`: candidates with the same training text are removed before verification."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

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
