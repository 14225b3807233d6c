"""Texts whose lines end with CR LF (or a lone CR) are read with LF line ends."""

import json

from filters.gopher import GopherRepetition
from pipeline.document import Document
from pipeline.readers import InputConfig, plan_splits, read_split

PARAGRAPHS = [
    "The committee met on Tuesday to review the budget for the coming year.",
    "Several members asked why the road repairs had been postponed again.",
    "The chair answered that the contractor had not yet delivered the plans.",
    "A vote on the library extension was moved to the next meeting.",
    "Residents who attended asked for the minutes to be published online.",
    "The meeting closed shortly after nine in the evening.",
]
LF_TEXT = "\n\n".join(PARAGRAPHS)


def read_texts(path, **options):
    config = InputConfig((str(path),), **options)
    return [record.text for split in plan_splits(str(path), config) for record in read_split(split, config)]


def test_cr_lf_and_lone_cr_become_lf_in_every_format(tmp_path):
    crlf, cr = LF_TEXT.replace("\n", "\r\n"), LF_TEXT.replace("\n", "\r")
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate([crlf, cr])))
    text_file = tmp_path / "b.txt"
    text_file.write_bytes(crlf.encode())
    assert read_texts(jsonl) == [LF_TEXT, LF_TEXT]
    assert read_texts(text_file) == [LF_TEXT]
    assert read_texts(jsonl, keep_carriage_returns=True) == [crlf, cr]


def test_a_cr_lf_text_gets_the_decisions_of_its_lf_twin(tmp_path):
    """Before, each paragraph break of a CR LF text left a "\\r" line, so half its lines were the
    same line and gopher_repetition rejected it (dup_line_frac)."""
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"id": "d", "text": LF_TEXT.replace("\n", "\r\n")}) + "\n")
    for keep in (False, True):
        (text,) = read_texts(path, keep_carriage_returns=keep)
        doc = Document(id="d", text=text)
        verdict = GopherRepetition("gopher_repetition").check(doc)
        assert (verdict.keep, verdict.reason) == ((False, "dup_line_frac") if keep else (True, None))
