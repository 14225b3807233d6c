"""Outputs the usual tools read: DuckDB, Hugging Face `datasets`, and gristmill itself."""

import json
import shlex
import shutil
import subprocess
import sys

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

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


def test_the_card_renders_recipe_names_as_text_and_quotes_its_paths(curated_output, tmp_path):
    """A run or stage name holding HTML was rendered by Markdown viewers, a `|` split its table
    row, `unit_dedup` was left out of the dedup figures, and a path with a quote broke the
    card's one-liners (a `$(...)` in it would have run)."""
    from pipeline.dataset_card import render_card

    manifest = json.loads((curated_output / "manifest.json").read_text())
    manifest["run"] = '<script>alert("run")</script>'
    manifest["stages"][1] |= {"name": "dd<svg onload=alert(1)>|pipe", "use": "unit_dedup"}
    manifest["stages"][1]["metrics"] = {"docs_edited": 3}
    folder = tmp_path / "bob's $(touch pwned) out!"
    shutil.copytree(curated_output / "kept", folder / "kept")
    card = render_card(manifest, str(folder))
    assert '# &lt;script&gt;alert("run")&lt;/script&gt;' in card and "<svg" not in card
    assert "| dd&lt;svg onload=alert(1)&gt;\\|pipe | unit\\_dedup |" not in card  # `_` is left alone
    assert "| dd&lt;svg onload=alert(1)&gt;\\|pipe | unit_dedup |" in card
    assert "dd&lt;svg onload=alert(1)&gt;\\|pipe (unit_dedup): " in card and "; 3 documents edited" in card
    manifest["inputs_changed"] = ["in.jsonl: changed"]
    assert "all checks passed; input files changed during the run: in.jsonl: changed." in render_card(
        manifest, "."
    )
    one_liner = next(line for line in card.splitlines() if line.startswith('python -c "import pyarrow'))
    done = subprocess.run(["bash", "-c", one_liner.replace("python", sys.executable, 1)], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    assert done.stdout.strip() == "17" and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("score_names", [["fq"], ["fasttext_quality", "quality"], []])
def test_the_cards_duckdb_one_liner_reads_the_runs_own_scores(curated_output, score_names):
    """It named `fasttext_quality` whatever the run wrote: with a scorer named otherwise, or no
    scorer, DuckDB answered `Could not find key "fasttext_quality" in struct`."""
    import duckdb

    from pipeline.dataset_card import render_card

    manifest = json.loads((curated_output / "manifest.json").read_text()) | {"score_names": score_names}
    card = render_card(manifest, str(curated_output))
    one_liner = next(line for line in card.splitlines() if line.startswith("duckdb -c "))
    query = shlex.split(one_liner)[2]
    score = "quality" if "quality" in score_names else next(iter(score_names), None)
    assert (
        query
        == f"SELECT id{f', scores[{score!r}] AS score' if score else ''} FROM '{curated_output}/kept/*.parquet' LIMIT 5"
    )
    if score in (None, "fasttext_quality"):  # the scores the shared run wrote
        assert len(duckdb.sql(query).fetchall()) == 5


def test_a_clean_run_still_has_an_empty_failed_part(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": LONG_TEXT}])
    out = tmp_path / "o"
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    for part in ("rejected", "failed"):
        tables = [pq.read_table(f) for f in sorted((out / part).glob("*.parquet"))]
        assert len(tables) == 2 and all(t.num_rows == 0 and t.schema.equals(SCHEMAS[part]) for t in tables)
    manifest = json.loads((out / "manifest.json").read_text())
    empty_kept = next(s for s in manifest["shards"] if s["kind"] == "kept" and not s["rows"])
    # an empty kept shard lacked the keys every kept shard carries
    assert empty_kept | {"n_tokens": 0, "repeats": 0, "sources": {}, "source_tokens": {}} == empty_kept


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


def test_an_output_with_empty_shards_and_token_ids_loads_in_datasets_and_duckdb(tmp_path, monkeypatch):
    """Empty shards had a row group of 0 rows (`datasets` stopped: "BatchSize must be greater than
    0") and, with `token_ids = true`, no `token_ids` column (DuckDB's glob stopped)."""
    import duckdb

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    docs = [{"id": f"d{i}", "text": LONG_TEXT if i % 2 else "too short"} for i in range(4)]
    data = write_jsonl(tmp_path / "in.jsonl", docs)
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        f'[output]\nshards = 4\ntokenizer = "gristmill-bpe-32k"\ntoken_ids = true\n\n'
        f'[input]\npaths = ["{data}"]\n\n[[stage]]\nuse = "length"\n'
    )
    out = tmp_path / "o"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    kept_files = sorted((out / "kept").glob("*.parquet"))
    assert any(pq.ParquetFile(f).metadata.num_rows == 0 for f in kept_files)
    assert len({pq.read_schema(f) for f in kept_files}) == 1
    assert duckdb.sql(f"SELECT count(*), sum(len(token_ids)) > 0 FROM '{out}/kept/*.parquet'").fetchall() == [
        (2, True)
    ]
    for config, rows in (("default", 2), ("rejected", 2)):
        loaded = load_dataset(str(out), config, split="train", cache_dir=str(tmp_path / "cache"))
        assert loaded.num_rows == rows
    assert "`token_ids` list<item: int32>" in (out / "README.md").read_text()


def test_an_output_read_back_puts_no_empty_output_column_into_metadata(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": LONG_TEXT, "extra": 1}])
    first, again = tmp_path / "first", tmp_path / "again"
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(first), *IN_PROCESS]) == 0
    recipe = write_recipe(tmp_path / "r2.toml", [f"{first}/kept/*.parquet"], "")
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(again), *IN_PROCESS]) == 0
    (row,) = _kept(again)
    assert json.loads(row["metadata"]) == {"extra": 1, "source": str(data)}


def test_the_report_draws_no_before_lengths_when_rejected_text_is_not_kept(curated_output):
    """With keep_rejected_text = false, "before" was drawn from the kept rows alone (before = after)."""
    from pipeline.report import render_report

    manifest = json.loads((curated_output / "manifest.json").read_text())
    assert "Length (characters, log scale): before vs after" in render_report(manifest, str(curated_output))
    manifest["recipe"]["run"]["keep_rejected_text"] = False
    page = render_report(manifest, str(curated_output))
    assert "Length (characters, log scale): kept" in page and "before (n=" not in page
