"""The total order that picks one survivor per duplicate cluster, shared by every dedup stage."""

from __future__ import annotations

import math

import xxhash

from pipeline.document import Document
from pipeline.stages import Param

SURVIVOR_PARAMS = {
    "prefer_score": Param(
        str,
        "",
        "name of a score written by an earlier stage; the highest-scoring duplicate survives "
        "(empty: ignore scores)",
    ),
    "tie_break": Param(
        str,
        "longest",
        "after the score: `longest` keeps the longest text, `smallest_id` the smallest id; "
        "the smallest id always settles the rest",
        choices=("longest", "smallest_id"),
    ),
}


class PrefersScore:
    """For dedup stages with SURVIVOR_PARAMS: the recipe's check that an earlier stage writes
    `prefer_score` (a misspelt name would silently choose survivors by length alone)."""

    prefer_score: str
    # A duplicate without the score ranks after those with it (recipe checks: no score is required).
    tolerates_missing_scores = True

    def required_scores(self) -> dict[str, list[str]]:
        return {"prefer_score": [self.prefer_score]} if self.prefer_score else {}


def survivor_key(doc: Document, prefer_score: str, tie_break: str) -> tuple:
    """Sort key: the smallest key in a cluster survives. Deterministic for any input order: after
    the id comes a hash of the text, so of two documents sharing an id the same one survives
    whichever was read first (it was the first read); it ends with the document's `unique_id`, so
    copies alike in id and text still have a total order. A NaN score (it has no order) ranks as a
    missing one."""
    score = doc.scores.get(prefer_score) if prefer_score else None
    score_rank = -score if score is not None and not math.isnan(score) else math.inf
    length_rank = -len(doc.text) if tie_break == "longest" else 0
    text_hash = xxhash.xxh3_64_intdigest(doc.text.encode("utf-8", "surrogatepass"))
    return (score_rank, length_rank, doc.id, text_hash, doc.unique_id)
