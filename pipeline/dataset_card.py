"""`OUT/README.md`: a dataset card for an output folder, written from its manifest after every run.

The YAML header names the Parquet parts as Hugging Face `datasets` configs, so
`load_dataset("OUT")` loads `kept` (and `load_dataset("OUT", "rejected")` the removals).
"""

from __future__ import annotations

from typing import Any

DEDUP_STAGES = ("exact_dedup", "minhash_dedup", "semantic_dedup", "paragraph_dedup")


def _header() -> str:
    configs = []
    for index, part in enumerate(("kept", "rejected", "failed")):
        configs.append(
            f"- config_name: {'default' if index == 0 else part}\n"
            f"  data_files:\n  - split: train\n    path: {part}/*.parquet"
        )
    return "---\nconfigs:\n" + "\n".join(configs) + "\n---\n"


def _rate(part: int, whole: int | None) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _schema_table(score_names: list[str], token_ids: bool) -> str:
    from pipeline.writers import SCHEMAS, full_schema

    lines = []
    for part in SCHEMAS:
        schema = full_schema(part, score_names, token_ids and part == "kept")
        columns = ", ".join(f"`{f.name}` {f.type}" for f in schema)
        lines.append(f"- `{part}/`: {columns}")
    return "\n".join(lines)


def render_card(manifest: dict[str, Any], directory: str) -> str:
    """Markdown card: recipe, sources, counts, removal rates, dedup figures, schema, how to load."""
    recipe = manifest["recipe"]
    counts = manifest["counts"]
    sources = [f"- files: `{p}`" for p in recipe["input"].get("paths") or ()]
    sources += [f"- generator `{g['name']}` ({g['use']})" for g in recipe.get("synthesis", [])]
    stage_rows = []
    for stage in manifest["stages"]:
        removed = sum(stage["rejected"].values()) + (stage.get("failed") or 0)
        reasons = ", ".join(
            f"{k} {v}" for k, v in sorted(stage["rejected"].items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        )
        stage_rows.append(
            f"| {stage['name']} | {stage['use']} | {stage.get('in')} | {removed} | "
            f"{_rate(removed, stage.get('in'))} | {reasons} |"
        )
    dedup = [s for s in manifest["stages"] if s["use"] in DEDUP_STAGES]
    dedup_lines = [
        f"- {s['name']} ({s['use']}): {sum(s['rejected'].values())} duplicates removed of {s.get('in')} "
        f"({_rate(sum(s['rejected'].values()), s.get('in'))})"
        for s in dedup
    ] or ["- no dedup stage in this recipe"]
    path = directory.rstrip("/") or "."
    status = (
        "all checks passed" if not manifest["problems"] else "PROBLEMS: " + "; ".join(manifest["problems"])
    )
    return f"""{_header()}
# {manifest["run"]}

Curated with gristmill {manifest.get("gristmill_version", "")} from recipe
`{recipe["recipe"]}` in {manifest["seconds"]} s; {status}. `manifest.json` has every figure and
each shard's sha256; `report.html` has the charts.

## Sources

{chr(10).join(sources) or "- none"}

## Counts

| read | kept | rejected | failed | kept share |
|---:|---:|---:|---:|---:|
| {counts["input"]} | {counts["kept"]} | {counts["rejected"]} | {counts["failed"]} | {_rate(counts["kept"], counts["input"])} |

Conservation (read = kept + rejected + failed): {"holds" if manifest["conservation"] else "BROKEN"}.

## Removal by stage

| stage | use | in | removed | rate | top reasons |
|---|---|---:|---:|---:|---|
{chr(10).join(stage_rows)}

## Deduplication

{chr(10).join(dedup_lines)}

## Schema

Every part is sharded Parquet (`part-SSSSS-of-NNNNN.parquet`); `scores` is a struct with one
float field per score of this run (null where a document has none), `metadata` a JSON string of
the other input fields.

{_schema_table(manifest.get("score_names", []), bool(recipe.get("output", {}).get("token_ids")))}

## Loading

```
duckdb -c "SELECT id, scores['fasttext_quality'] AS q FROM '{path}/kept/*.parquet' LIMIT 5"
python -c "import pandas as pd; print(pd.read_parquet('{path}/kept'))"
python -c "import pyarrow.dataset as ds; print(ds.dataset('{path}/kept').to_table().num_rows)"
python -c "from datasets import load_dataset; print(load_dataset('parquet', data_files='{path}/kept/*.parquet', split='train'))"
```
"""

