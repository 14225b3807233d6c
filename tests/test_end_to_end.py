"""End to end: every sample_data/ record meets the fate it states, under the shipped recipes.

Each record says `expected` ("kept", or the stage of recipes/default.toml that removes it first),
optionally `expected_reason`, `duplicate_of` (the survivor a dedup stage must name) and
`expected_absent` (strings a kept text must no longer contain: redacted addresses, stripped
boilerplate). `expected_fineweb` is the fate under recipes/fineweb.toml (see sample_data/README.md).
A test is skipped, naming the stages, only while a stage its recipe uses is not registered yet.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from pipeline.stages import STAGES, load_builtin_stages

REPO = Path(__file__).resolve().parents[1]
SAMPLE_GLOB = str(REPO / "sample_data" / "*.jsonl")
# In memory (one process): the same fates as with worker processes (the runner contract, tested in
# tests/pipeline), with the models loaded once, which keeps this file's runtime near a minute.
IN_MEMORY = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]

# Records whose fate differs from their label because of a stage defect, not a wrong label (each was
# read and judged; see sample_data/README.md). They are checked apart: when a stage is fixed the
# record meets its label, the test fails, and its entry must be removed here.
_SEMANTIC_MISS = (
    "semantic_dedup (static, centered, eps=0.10, benchmark recall 0.87) misses this hand-written "
    "paraphrase: its cosine to the original is below 0.90"
)
_SEMANTIC_VERIFIED = (
    "semantic_dedup's lexical check (word 3-gram containment >= 0.2; this heavy rewrite shares 0.15) "
    "keeps this paraphrase: a looser check merged different pages (benchmarks/results/units.md)"
)
_QUALITY_MISS = "the MiniLM quality head scores this clean article 0.495, just under the recipe's 0.5"
KNOWN_STAGE_ISSUES: dict[str, dict[str, str]] = {
    "default": {
        "article-sourdough-starter-rewrite": _SEMANTIC_MISS,
        "article-home-composting-rewrite": _SEMANTIC_MISS,
        "article-wind-turbines-rewrite": _SEMANTIC_VERIFIED,
        "article-mushroom-foraging": _QUALITY_MISS,
    },
    "fineweb": {},
}


def load_records() -> list[dict]:
    records = []
    for path in sorted(glob.glob(SAMPLE_GLOB)):
        with open(path, encoding="utf-8") as handle:
            records.extend(json.loads(line) for line in handle if line.strip())
    return records


def missing_stages(recipe_path: Path) -> list[str]:
    load_builtin_stages()
    with open(recipe_path, "rb") as handle:
        uses = [stage["use"] for stage in tomllib.load(handle).get("stage", [])]
    return [name for name in uses if name not in STAGES]


def run_sample(recipe_path: Path, output: Path, beam_args: list[str]) -> dict:
    """Run a recipe on sample_data/ into `output`; the outputs read back, keyed by id."""
    missing = missing_stages(recipe_path)
    if missing:
        pytest.skip(f"{recipe_path.name}: stages not registered yet: {', '.join(missing)}")
    result = run_recipe(load_recipe(recipe_path, [SAMPLE_GLOB]), str(output), beam_args)

    def rows(folder: str) -> dict[str, dict]:
        files = sorted((output / folder).glob("*.parquet"))
        return {row["id"]: row for f in files for row in pq.read_table(f).to_pylist()}

    return {
        "manifest": result.manifest,
        "kept": rows("kept"),
        "rejected": rows("rejected"),
        "failed": rows("failed"),
    }


def fate_problems(record: dict, outputs: dict, field: str) -> list[str]:
    """How one record's actual fate differs from its label under `field`; empty when it matches."""
    doc_id, expected = record["id"], record[field]
    kept, rejected = outputs["kept"].get(doc_id), outputs["rejected"].get(doc_id)
    if doc_id in outputs["failed"]:
        return [f"{doc_id}: failed ({outputs['failed'][doc_id]['error']}), expected {expected}"]
    if kept is None and rejected is None:
        return [f"{doc_id}: missing from the output"]
    if expected == "kept":
        if kept is None:
            return [
                f"{doc_id}: expected kept, rejected by {rejected['stage']} "
                f"({rejected['reason']}: {rejected['detail']}; duplicate_of={rejected['duplicate_of']})"
            ]
        problems = [
            f"{doc_id}: kept text still contains {s[:50]!r}"
            for s in record.get("expected_absent", [])
            if s in kept["text"]
        ]
        if (
            record.get("kind")
            and field == "expected"
            and (kept["kind"] != record["kind"] or not kept["text"])
        ):
            problems.append(f"{doc_id}: admitted candidate without kind {record['kind']!r} or rendered text")
        return problems
    if rejected is None:
        return [f"{doc_id}: expected removal by {expected}, kept"]
    got = (rejected["stage"], rejected["reason"], rejected["duplicate_of"])
    reason = record.get("expected_reason") if field == "expected" else None
    survivor = record.get("duplicate_of") if expected.endswith("_dedup") else None
    if got != (expected, reason or got[1], survivor):
        return [f"{doc_id}: expected {(expected, reason, survivor)}, got {got} ({rejected['detail']})"]
    return []


def check_run(outputs: dict, records: list[dict], field: str, known: dict[str, str]) -> None:
    counts = outputs["manifest"]["counts"]
    assert counts["input"] == len(records) == counts["kept"] + counts["rejected"] + counts["failed"]
    assert (counts["kept"], counts["rejected"], counts["failed"]) == (
        len(outputs["kept"]),
        len(outputs["rejected"]),
        0,
    )
    problems = [p for r in records if r["id"] not in known for p in fate_problems(r, outputs, field)]
    assert not problems, f"{len(problems)} sample records off their label:\n" + "\n".join(problems)
    fixed = [r["id"] for r in records if r["id"] in known and not fate_problems(r, outputs, field)]
    assert not fixed, f"known stage issues now pass; remove them from KNOWN_STAGE_ISSUES: {fixed}"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return load_records()


@pytest.mark.slow
def test_default_recipe_meets_every_label(tmp_path_factory, records):
    outputs = run_sample(REPO / "recipes" / "default.toml", tmp_path_factory.mktemp("default"), IN_MEMORY)
    check_run(outputs, records, "expected", KNOWN_STAGE_ISSUES["default"])
    if KNOWN_STAGE_ISSUES["default"]:
        pytest.xfail(f"{len(KNOWN_STAGE_ISSUES['default'])} known stage issues (KNOWN_STAGE_ISSUES)")


@pytest.mark.slow
def test_fineweb_recipe_meets_every_label(tmp_path_factory, records):
    recipe = REPO / "recipes" / "fineweb.toml"
    if not recipe.exists():
        pytest.skip("recipes/fineweb.toml does not exist yet")
    outputs = run_sample(recipe, tmp_path_factory.mktemp("fineweb"), IN_MEMORY)
    check_run(outputs, records, "expected_fineweb", KNOWN_STAGE_ISSUES["fineweb"])
    if KNOWN_STAGE_ISSUES["fineweb"]:
        pytest.xfail(f"{len(KNOWN_STAGE_ISSUES['fineweb'])} known stage issues (KNOWN_STAGE_ISSUES)")


def test_sample_records_are_well_formed(records):
    """Ids are unique; every label names a stage of the default recipe and a reason it declares."""
    load_builtin_stages()
    with open(REPO / "recipes" / "default.toml", "rb") as handle:
        stage_names = {
            stage.get("name", stage["use"]): stage["use"] for stage in tomllib.load(handle)["stage"]
        }
    assert len({r["id"] for r in records}) == len(records)
    assert len(records) >= 200
    for record in records:
        assert record["expected"] == "kept" or record["expected"] in stage_names, record["id"]
        assert record["expected_fineweb"] in ("kept", *stage_names), record["id"]
        reason = record.get("expected_reason")
        use = stage_names.get(record["expected"])
        if reason and use in STAGES:
            assert reason in STAGES[use].reasons, (record["id"], reason)
        if "kind" not in record:
            assert record["text"].strip() and record["url"].startswith("http"), record["id"]


def test_sample_files_match_their_generator():
    """The committed JSONL files are exactly what sample_data/make_sample_data.py writes."""
    spec = importlib.util.spec_from_file_location(
        "make_sample_data", REPO / "sample_data" / "make_sample_data.py"
    )
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    rendered = generator.render()
    assert sorted(rendered) == sorted(p.name for p in (REPO / "sample_data").glob("*.jsonl"))
    for name, content in rendered.items():
        assert (REPO / "sample_data" / name).read_text(encoding="utf-8") == content, name
