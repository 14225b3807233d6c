"""A record's fields as a Document: ids, URLs, kinds, custom and dotted field names, metadata
(a record's own, a gristmill output's, Hive partition folders)."""

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import readers, record_fields
from pipeline.document import Failure
from pipeline.readers import InputConfig
from tests.conftest import write_jsonl
from tests.pipeline.test_readers import read_all


def test_jsonl_fields_id_url_metadata(tmp_path):
    path = write_jsonl(
        tmp_path / "a.jsonl", [{"id": 7, "text": "hello", "url": "http://x", "lang": "en"}, {"text": "no id"}]
    )
    first, second = read_all(path)
    assert (first.id, first.text, first.url, first.metadata) == ("7", "hello", "http://x", {"lang": "en"})
    assert second.id == f"{path}:2"  # stable id from source path and line number


def test_ids_of_other_types_and_urls_that_are_not_text(tmp_path):
    """A list id was written as Python's repr, and a url that was not a string was dropped."""
    path = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"id": ["g", 1], "text": "a", "url": 5},
            {"id": {"shard": 2}, "text": "b", "url": {"href": "http://x"}},
            {"id": True, "text": "c", "url": None},
        ],
    )
    listed, mapped, flag = read_all(path)
    assert (listed.id, listed.url, listed.metadata) == ('["g", 1]', None, {"url": 5})
    assert (mapped.id, mapped.metadata) == ('{"shard": 2}', {"url": {"href": "http://x"}})
    assert (flag.id, flag.metadata) == ("True", {})
    table = pa.table(
        {"id": pa.array([1.0, float("nan"), None]), "binary_id": [b"\xe2\x82\xac", b"\xff", b"x"]}
    )
    pq.write_table(table.append_column("text", pa.array(["x", "y", "z"])), tmp_path / "t.parquet")
    numbered = read_all(tmp_path / "t.parquet")  # a Parquet row's position counts from 0
    assert [d.id for d in numbered] == ["1.0", f"{tmp_path / 't.parquet'}:1", f"{tmp_path / 't.parquet'}:2"]
    binary = read_all(tmp_path / "t.parquet", id_field="binary_id")
    assert [d.id for d in binary] == ["\u20ac", "\\xff", "x"]


def test_a_documents_own_kind_field_is_metadata_and_only_candidates_kinds_are_candidates(tmp_path):
    """A dataset labelling its records ("kind": "news") had every record fail as BadKind."""
    path = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"id": "news", "text": "a story", "kind": "news"},
            {"id": "cand", "kind": "code", "solution": "x = 1", "tests": "assert x == 1"},
            {"id": "typo", "kind": "Code", "solution": "x = 1"},
        ],
    )
    news, candidate, typo = read_all(path)
    assert (news.kind, news.text, news.metadata) == (None, "a story", {"kind": "news"})
    assert candidate.kind == "code" and "kind" not in candidate.metadata
    assert (typo.error, typo.message) == (
        "BadKind",
        "kind='Code' and no 'text' text; a synthesis candidate's kind is one of ('code', 'math')",
    )


def test_custom_field_names(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [{"doc_id": "x1", "content": "hi", "id": "other"}])
    (doc,) = read_all(path, text_field="content", id_field="doc_id")
    assert (doc.id, doc.text, doc.metadata) == ("x1", "hi", {"id": "other"})


def test_token_columns_of_an_output_read_back_are_not_metadata_but_a_records_own_fields_are():
    output_row = {
        "id": "a",
        "text": "aa",
        "scores": {"q": 0.5},
        "language": "en",
        "language_score": 0.9,
        "metadata": '{"lang_hint": 1}',
        "n_tokens": 2,
        "token_ids": [7, 8],
    }
    config = InputConfig(("x",))
    doc = readers.record_to_document(output_row, "kept.parquet", "0", config)
    assert doc.metadata == {"lang_hint": 1} and doc.scores == {"q": 0.5}
    own = {"id": "b", "text": "bb", "n_tokens": 2, "token_ids": [7, 8]}
    assert readers.record_to_document(own, "in.jsonl", "1", config).metadata == {
        "n_tokens": 2,
        "token_ids": [7, 8],
    }


def test_a_dolma_record_has_its_metadata_object_unpacked_and_its_url_reached_by_a_dotted_path(tmp_path):
    record = {
        "id": "cc-1",
        "text": "A page of text.",
        "source": "common-crawl",
        "added": "2024-01-02",
        "metadata": {"url": "HTTP://Example.com/a", "warc_date": "2023-12-30"},
    }
    write_jsonl(tmp_path / "dolma.jsonl", [record])
    (plain,) = read_all(tmp_path / "dolma.jsonl")
    assert plain.url is None and plain.metadata["url"] == "HTTP://Example.com/a"
    (doc,) = read_all(tmp_path / "dolma.jsonl", url_field="metadata.url")
    assert (doc.id, doc.text, doc.url) == ("cc-1", "A page of text.", "http://example.com/a")
    assert doc.metadata == {"warc_date": "2023-12-30", "source": "common-crawl", "added": "2024-01-02"}


def test_dotted_field_paths_reach_into_parquet_structs_and_a_literal_name_comes_first(tmp_path):
    rows = [
        {"content": {"body": "nested text", "title": "T"}, "meta": {"id": 7}},
        {"content": {"body": None, "title": "U"}, "meta": {"id": 8}},
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "a.parquet")
    doc, missing = read_all(tmp_path / "a.parquet", text_field="content.body", id_field="meta.id")
    assert (doc.id, doc.text, doc.metadata) == ("7", "nested text", {"content": {"title": "T"}})
    assert isinstance(missing, Failure) and missing.error == "MissingText" and missing.id == "8"
    assert missing.message == "'content.body' is null"  # was "no 'content.body' field", which it has
    write_jsonl(tmp_path / "b.jsonl", [{"content.body": "literal", "content": {"body": "nested"}}])
    (literal,) = read_all(tmp_path / "b.jsonl", text_field="content.body")
    assert literal.text == "literal" and literal.metadata == {"content": {"body": "nested"}}


def test_hive_partition_folders_become_metadata_fields_and_a_record_s_own_field_wins(tmp_path):
    english = tmp_path / "lang=en" / "year=2024"
    english.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"id": "1", "text": "a"}]), english / "part-0.parquet")
    other = tmp_path / "lang=pt%2DBR" / "year=2023"
    other.mkdir(parents=True)
    write_jsonl(other / "part-0.jsonl", [{"id": "2", "text": "b", "year": 1999}])
    docs = {d.id: d for path in (english / "part-0.parquet", other / "part-0.jsonl") for d in read_all(path)}
    assert docs["1"].metadata == {"lang": "en", "year": "2024"}
    assert docs["2"].metadata == {"lang": "pt-BR", "year": 1999}
    assert docs["1"].source == str(english / "part-0.parquet")


def test_only_whole_key_value_folders_are_partitions():
    from pipeline.readers import hive_partitions

    assert hive_partitions("s3://b/data/lang=en/a=b=c/2024=x/year=/part-0.parquet") == {
        "lang": "en",
        "year": "",
    }
    assert hive_partitions("lang=en.jsonl") == {}  # a file name is no folder


def test_a_parquet_text_longer_than_a_json_lines_line_may_be_is_a_failure(tmp_path, monkeypatch):
    """A JSON Lines line over 64 MiB was a failure, and a 150 MB Parquet text one document."""
    monkeypatch.setattr(record_fields, "MAX_TEXT_CHARS", 1_000)
    path = tmp_path / "big.parquet"
    texts = ["short text", "x" * 1_001, "é" * 1_000]  # the limit counts characters
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": texts}), path)
    found = read_all(path)
    assert [(r.id, type(r).__name__) for r in found] == [
        ("a", "Document"),
        ("b", "Failure"),
        ("c", "Document"),
    ]
    assert (found[1].error, found[1].message) == (
        "RecordTooLarge",
        "'text' holds 1,001 characters, more than the 1,000 read as one document",
    )
