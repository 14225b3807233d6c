"""`candidate_dedup`: exact dedup of synthesis candidates on their training rendering, before `verify`."""

from __future__ import annotations

from dedup.exact import ExactDedup
from pipeline.document import Document
from pipeline.stages import register
from synthesis.code_verifier import render_code
from synthesis.math.verifier import render_math


def training_text(doc: Document) -> str:
    """The text `verify` gives an admitted candidate (a document's own text when it is none)."""
    if doc.kind == "code":
        return render_code(doc)
    if doc.kind == "math":
        return render_math(doc)
    return doc.text


@register("candidate_dedup")
class CandidateDedup(ExactDedup):
    """Remove candidates whose training text repeats another's, before they cost a verification.

    `exact_dedup` (normalised text, GroupByKey on a seeded hash, survivor by the shared order) that
    also sees synthesis candidates and compares them by the text `verify` would give them (code:
    prompt and program; math: problem and solution); other documents by their own text. A code
    candidate's text is compared with its whitespace (indentation is part of a program);
    `tie_break = "longest"` ranks candidates by their training text's length. Candidates alike in
    training text but not in tests or reference answer are one group: only the survivor's are run.
    Reasons: `exact_duplicate` (`duplicate_of` = survivor id, `detail` = group size).
    """

    handles_candidates = True

    def compared(self, doc: Document) -> Document:
        return doc.with_text(training_text(doc))

    def normalized(self, doc: Document) -> str:
        if doc.kind == "code":  # whitespace kept
            return doc.text.lower() if self.lowercase else doc.text
        return super().normalized(doc)
