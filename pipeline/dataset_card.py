"""`OUT/README.md`: a dataset card for an output folder, written from its manifest after every run.

The YAML header names the Parquet parts as Hugging Face `datasets` configs, so
`load_dataset("OUT")` loads `kept` (and `load_dataset("OUT", "rejected")` the removals).
"""

from __future__ import annotations

import html
import re
from typing import Any

DEDUP_STAGES = (
    "exact_dedup",
    "minhash_dedup",
    "semantic_dedup",
    "paragraph_dedup",
    "unit_dedup",
    "candidate_dedup",
)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|#])")  # `_` inside a name (url_filter) is no emphasis
_SHELL_DOUBLE_QUOTED = re.compile(r'([\\"$`])')  # special inside "..." (`\!` keeps its backslash)


def _text(value: Any) -> str:
    """A recipe value (run, stage or file name) as Markdown text and table cell: no HTML it
    holds is rendered, no `|` splits a row, no `*` turns on emphasis."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=False))


def _code(value: Any) -> str:
    """A value as an inline code span, fenced by more backticks than it holds in a row."""
    text = str(value)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _shell(command: str) -> str:
    """`command` quoted as one double-quoted shell argument (a `$(...)` in a path stays text)."""
    return '"' + _SHELL_DOUBLE_QUOTED.sub(r"\\\1", command) + '"'


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


def _sql_text(text: str) -> str:
    """`text` inside an SQL string literal (quotes doubled)."""
    return text.replace("'", "''")


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
    sources = [f"- files: {_code(p)}" for p in recipe["input"].get("paths") or ()]
    sources += [f"- generator {_code(g['name'])} ({_text(g['use'])})" for g in recipe.get("synthesis", [])]
    stage_rows = []
    for stage in manifest["stages"]:
        removed = sum(stage["rejected"].values()) + (stage.get("failed") or 0)
        reasons = ", ".join(
            f"{_text(k)} {v}"
            for k, v in sorted(stage["rejected"].items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        )
        stage_rows.append(
            f"| {_text(stage['name'])} | {_text(stage['use'])} | {stage.get('in')} | {removed} | "
            f"{_rate(removed, stage.get('in'))} | {reasons} |"
        )
    dedup = [s for s in manifest["stages"] if s["use"] in DEDUP_STAGES]
    dedup_lines = [
        f"- {_text(s['name'])} ({_text(s['use'])}): {sum(s['rejected'].values())} duplicates removed of "
        f"{s.get('in')} ({_rate(sum(s['rejected'].values()), s.get('in'))})"
        + (
            f"; {s['metrics']['docs_edited']} documents edited"
            if "docs_edited" in s.get("metrics", {})
            else ""
        )
        for s in dedup
    ] or ["- no dedup stage in this recipe"]
    kept = (directory.rstrip("/") or ".") + "/kept"
    figures = manifest.get("kept_output", {})
    repeats = (
        f"\n`kept/` holds {figures['rows']} rows: the {counts['kept']} kept documents and "
        f"{figures['repeats']} repeats written by the mixture's up-sampling."
        if figures.get("repeats")
        else ""
    )
    names = manifest.get("score_names") or []
    score = "quality" if "quality" in names else next(iter(names), None)  # the run's own (it names them)
    column = f", scores['{_sql_text(score)}'] AS score" if score else ""
    sql = f"SELECT id{column} FROM '{_sql_text(kept)}/*.parquet' LIMIT 5"
    status = (
        "all checks passed" if not manifest["problems"] else "PROBLEMS: " + "; ".join(manifest["problems"])
    )
    changed = manifest.get("inputs_changed") or []
    if changed:  # what was read is not what the files hold now
        status += "; input files changed during the run: " + "; ".join(map(_text, changed))
    return f"""{_header()}
# {_text(manifest["run"])}

Curated with gristmill {manifest.get("gristmill_version", "")} from recipe
{_code(recipe["recipe"])} in {manifest["seconds"]} s; {status}. `manifest.json` has every figure and
each shard's sha256; `report.html` has the charts.

## Sources

{chr(10).join(sources) or "- none"}

## Counts

| read | kept | rejected | failed | kept share |
|---:|---:|---:|---:|---:|
| {counts["input"]} | {counts["kept"]} | {counts["rejected"]} | {counts["failed"]} | {_rate(counts["kept"], counts["input"])} |

Conservation (read = kept + rejected + failed): {"holds" if manifest["conservation"] else "BROKEN"}.{repeats}

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
duckdb -c {_shell(sql)}
python -c {_shell(f"import pandas as pd; print(pd.read_parquet({kept!r}))")}
python -c {_shell(f"import pyarrow.dataset as ds; print(ds.dataset({kept!r}).to_table().num_rows)")}
python -c {_shell(f"from datasets import load_dataset; print(load_dataset('parquet', data_files={kept + '/*.parquet'!r}, split='train'))")}
```
"""
