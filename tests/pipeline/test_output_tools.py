"""Outputs the usual tools read: DuckDB, Hugging Face `datasets`, and gristmill itself."""

import json

import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pipeline.cli import main
from pipeline.writers import SCHEMAS, shard_schema
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe


def _kept(out):
    return ds.dataset(str(out / "kept"), format="parquet").to_table().to_pylist()


def test_duckdb_filters_kept_shards_by_score(curated_output):
    import duckdb

    expected = sorted(r["id"] for r in _kept(curated_output) if r["scores"]["fasttext_quality"] > 0.5)
    query = (
        f"SELECT id FROM '{curated_output}/kept/*.parquet' WHERE scores['fasttext_quality'] > 0.5 ORDER BY id"
    )
    assert [row[0] for row in duckdb.sql(query).fetchall()] == expected
    assert duckdb.sql(f"SELECT count(*) FROM '{curated_output}/failed/*.parquet'").fetchall() == [(1,)]


def test_datasets_loads_kept_with_the_parquet_loader_and_the_card(curated_output, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    kept = load_dataset(
        "parquet", data_files=f"{curated_output}/kept/*.parquet", split="train", cache_dir=str(tmp_path)
    )
    assert kept.num_rows == 17 and {"id", "text", "scores", "metadata"} <= set(kept.column_names)
    rejected = load_dataset(str(curated_output), "rejected", split="train", cache_dir=str(tmp_path))
    assert rejected.num_rows == 7 and "stage" in rejected.column_names  # via OUT/README.md's configs


def test_every_part_has_a_file_with_the_schema_and_rejected_rows_carry_what_was_known(curated_output):
    for part in SCHEMAS:
        schema = shard_schema(part, ["fasttext_quality"])
        files = sorted((curated_output / part).glob("*.parquet"))
        assert files and all(pq.read_schema(f).equals(schema) for f in files)
    rejected = ds.dataset(str(curated_output / "rejected"), format="parquet").to_table().to_pylist()
    short = next(r for r in rejected if r["reason"] == "too_few_words")
    assert short["scores"].keys() == {"fasttext_quality"} and 0 <= short["scores"]["fasttext_quality"] <= 1
    assert json.loads(short["metadata"]) == {"lang_hint": int(short["id"][3:])}
    card = (curated_output / "README.md").read_text()
    assert "| 25 | 17 | 7 | 1 |" in card and "exact_dedup (exact_dedup): 2 duplicates removed of 19" in card


def test_a_clean_run_still_has_an_empty_failed_part(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": LONG_TEXT}])
    out = tmp_path / "o"
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    for part in ("rejected", "failed"):
        tables = [pq.read_table(f) for f in sorted((out / part).glob("*.parquet"))]
        assert len(tables) == 2 and all(t.num_rows == 0 and t.schema.equals(SCHEMAS[part]) for t in tables)


def test_an_output_folder_read_back_keeps_scores_language_and_metadata(curated_output, tmp_path):
    out = tmp_path / "again"
    recipe = write_recipe(tmp_path / "r.toml", [f"{curated_output}/kept/*.parquet"], "")
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    before = {r["id"]: r for r in _kept(curated_output)}
    after = {r["id"]: r for r in _kept(out)}
    assert before.keys() == after.keys()
    for doc_id, row in after.items():
        assert row["scores"] == before[doc_id]["scores"]
        assert row["language"] == before[doc_id]["language"]
        metadata = json.loads(row["metadata"])
        assert metadata["lang_hint"] == json.loads(before[doc_id]["metadata"])["lang_hint"]
        assert "metadata" not in metadata and "scores" not in metadata and "n_tokens" not in metadata
