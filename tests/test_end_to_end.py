"""End to end: every sample_data/ record meets the fate it states, under the shipped recipes.

Each record says `expected` ("kept", or the stage of recipes/default.toml that removes it first),
optionally `expected_reason`, `duplicate_of` (the survivor a dedup stage must name) and
`expected_absent` (strings a kept text must no longer contain: redacted addresses, stripped
boilerplate). Its fate under recipes/fineweb.toml follows from `expected` (`fineweb_fate`).
A record whose stage is known to miss it carries `known_issues: {recipe: why}`; its test is a
strict xfail, so it fails as soon as the stage gets it right and the entry must be removed.
Each recipe runs once, in memory (one process: the same fates as with worker processes, the
runner contract tested in tests/pipeline, with the models loaded once); every record is its own test.
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
from tests.conftest import IN_PROCESS, REPO, SAMPLE_GLOB

RECIPES = {"default": REPO / "recipes" / "default.toml", "fineweb": REPO / "recipes" / "fineweb.toml"}


def load_records() -> list[dict]:
    records = []
    for path in sorted(glob.glob(SAMPLE_GLOB)):
        with open(path, encoding="utf-8") as handle:
            records.extend(json.loads(line) for line in handle if line.strip())
    return records


RECORDS = load_records()


def stage_uses(recipe: str) -> dict[str, str]:
    """Stage name → registry name, in recipe order."""
    with open(RECIPES[recipe], "rb") as handle:
        return {stage.get("name", stage["use"]): stage["use"] for stage in tomllib.load(handle)["stage"]}


def fineweb_fate(record: dict) -> str:
    """The fate under recipes/fineweb.toml: synthesis candidates are rejected by `read` (it has no
    `verify` stage to admit them), a removal by one of its stages is unchanged, exact copies fall
    to its MinHash stage (Jaccard 1), anything else (scorers, semantic dedup) is kept."""
    expected = record["expected"]
    if record.get("kind"):
        return "read"
    if expected == "exact_dedup":
        return "minhash_dedup"
    return expected if expected in stage_uses("fineweb") else "kept"


def expectation(record: dict, recipe: str) -> str:
    return record["expected"] if recipe == "default" else fineweb_fate(record)


def check_registered(recipe: str) -> None:
    load_builtin_stages()
    missing = [use for use in stage_uses(recipe).values() if use not in STAGES]
    if missing:
        pytest.skip(f"{recipe}: stages not registered yet: {', '.join(missing)}")


def read_outputs(output: Path) -> dict:
    """A finished run's manifest and its rows, keyed by id."""

    def rows(folder: str) -> dict[str, dict]:
        files = sorted((output / folder).glob("*.parquet"))
        return {row["id"]: row for f in files for row in pq.read_table(f).to_pylist()}

    return {
        "manifest": json.loads((output / "manifest.json").read_text()),
        "kept": rows("kept"),
        "rejected": rows("rejected"),
        "failed": rows("failed"),
    }


def fate_problems(record: dict, outputs: dict, recipe: str) -> list[str]:
    """How one record's actual fate differs from its label under `recipe`; empty when it matches."""
    doc_id, expected = record["id"], expectation(record, recipe)
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
            and recipe == "default"
            and (kept["kind"] != record["kind"] or not kept["text"])
        ):
            problems.append(f"{doc_id}: admitted candidate without kind {record['kind']!r} or rendered text")
        return problems
    if rejected is None:
        return [f"{doc_id}: expected removal by {expected}, kept"]
    got = (rejected["stage"], rejected["reason"], rejected["duplicate_of"])
    reason = record.get("expected_reason") if recipe == "default" else None
    survivor = record.get("duplicate_of") if expected.endswith("_dedup") else None
    if got != (expected, reason or got[1], survivor):
        return [f"{doc_id}: expected {(expected, reason, survivor)}, got {got} ({rejected['detail']})"]
    return []


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, request) -> dict:
    """The recipe's run on sample_data/ read back; the default recipe's run is shared with
    tests/test_determinism.py (conftest's `default_sample_run`)."""
    recipe = request.param
    check_registered(recipe)
    if recipe == "default":
        return read_outputs(request.getfixturevalue("default_sample_run"))
    output = tmp_path_factory.mktemp(recipe)
    run_recipe(load_recipe(RECIPES[recipe], [SAMPLE_GLOB]), str(output), IN_PROCESS)
    return read_outputs(output)


def record_params(recipe: str) -> list:
    """One pytest param per record; a known stage issue under `recipe` is a strict xfail."""
    params = []
    for record in RECORDS:
        why = record.get("known_issues", {}).get(recipe)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        params.append(pytest.param(record, id=record["id"], marks=marks))
    return params


@pytest.mark.slow
@pytest.mark.parametrize("outputs", ["default"], indirect=True)
@pytest.mark.parametrize("record", record_params("default"))
def test_default_recipe_fate(outputs, record):
    problems = fate_problems(record, outputs, "default")
    assert not problems, problems[0]


@pytest.mark.slow
@pytest.mark.parametrize("outputs", ["fineweb"], indirect=True)
@pytest.mark.parametrize("record", record_params("fineweb"))
def test_fineweb_recipe_fate(outputs, record):
    problems = fate_problems(record, outputs, "fineweb")
    assert not problems, problems[0]


@pytest.mark.slow
@pytest.mark.parametrize("outputs", ["default", "fineweb"], indirect=True)
def test_every_record_is_accounted_for_and_none_failed(outputs):
    counts = outputs["manifest"]["counts"]
    assert counts["input"] == len(RECORDS) == counts["kept"] + counts["rejected"] + counts["failed"]
    assert (counts["kept"], counts["rejected"], counts["failed"]) == (
        len(outputs["kept"]),
        len(outputs["rejected"]),
        0,
    )


def test_sample_records_are_well_formed():
    """Ids are unique; every label names a stage of the default recipe and a reason it declares."""
    load_builtin_stages()
    stage_names = stage_uses("default")
    assert len({r["id"] for r in RECORDS}) == len(RECORDS)
    assert len(RECORDS) >= 200
    for record in RECORDS:
        assert record["expected"] == "kept" or record["expected"] in stage_names, record["id"]
        reason = record.get("expected_reason")
        use = stage_names.get(record["expected"])
        if reason and use in STAGES:
            assert reason in STAGES[use].reasons, (record["id"], reason)
        assert set(record.get("known_issues", {})) <= set(RECIPES), record["id"]
        if "kind" not in record:
            assert record["text"].strip() and record["url"].startswith("http"), record["id"]


def test_derived_sample_file_is_current():
    """duplicates.jsonl is exactly what sample_data/derive.py makes of articles.jsonl."""
    spec = importlib.util.spec_from_file_location("derive", REPO / "sample_data" / "derive.py")
    derive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(derive)
    assert (REPO / "sample_data" / "duplicates.jsonl").read_text(encoding="utf-8") == derive.render()
