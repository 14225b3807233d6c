"""Synthesis through the whole pipeline: generators + candidates from input files -> verify -> kept/rejected."""

from __future__ import annotations

import glob
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from synthesis.candidate_dedup import training_text
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def rows(out: Path, part: str) -> list[dict]:
    return [
        row
        for path in sorted(glob.glob(str(out / part / "*.parquet")))
        for row in pq.read_table(path).to_pylist()
    ]


def test_shipped_synthesis_recipe_loads():
    recipe = load_recipe(ROOT / "recipes" / "synthesis.toml")
    assert {g.registry_name for g in recipe.generators} >= {"code", "math"}
    assert [s.registry_name for s in recipe.stages] == ["candidate_dedup", "verify"]


def test_every_generated_sample_of_the_shipped_synthesis_recipe_is_distinct():
    recipe = load_recipe(ROOT / "recipes" / "synthesis.toml")
    for generator in recipe.generators:
        texts = [training_text(doc) for doc in generator.generate()]
        assert len(texts) == generator.count >= 64
        assert len(set(texts)) == len(texts), generator.registry_name


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox-deps)")
def test_only_verified_candidates_are_kept(tmp_path):
    data = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "web", "text": LONG_TEXT},
            {
                "id": "good",
                "kind": "code",
                "prompt": "Add.",
                "solution": "def add(a, b):\n    return a + b",
                "tests": "assert add(1, 2) == 3",
            },
            {
                "id": "bad",
                "kind": "code",
                "prompt": "Add.",
                "solution": "def add(a, b):\n    return a - b",
                "tests": "assert add(1, 2) == 3",
            },
            {
                "id": "loop",
                "kind": "code",
                "prompt": "Add.",
                "solution": "while True:\n    pass",
                "tests": "assert True",
            },
        ],
    )
    recipe_path = tmp_path / "r.toml"
    recipe_path.write_text(
        f"""[run]
name = "synth"
[output]
shards = 1
[input]
paths = [{json.dumps(str(data))}]
[[synthesis]]
use = "code"
count = 8
seed = 3
[[stage]]
use = "verify"
timeout_s = 1.0
workers = 2
"""
    )
    manifest = run_recipe(load_recipe(recipe_path), str(tmp_path / "out"), IN_PROCESS).manifest
    kept = {row["id"]: row for row in rows(tmp_path / "out", "kept")}
    rejected = {row["id"]: row for row in rows(tmp_path / "out", "rejected")}
    assert manifest["counts"]["input"] == 12 and manifest["counts"]["kept"] == 10
    assert kept["web"]["kind"] is None and kept["web"]["text"] == LONG_TEXT
    assert kept["good"]["kind"] == "code" and "def add(a, b):" in kept["good"]["text"]
    generated = [row for row in kept.values() if row["source"] == "synthetic:code"]
    assert len(generated) == 8 and all(row["kind"] == "code" and row["text"] for row in generated)
    assert {(i, r["stage"], r["reason"]) for i, r in rejected.items()} == {
        ("bad", "verify", "tests_failed"),
        ("loop", "verify", "timeout"),
    }


def test_a_candidate_whose_fields_hold_no_text_is_one_failure(tmp_path):
    """`problem: null` or `12`, `solution: 4`, `entry_point: 5` crashed `candidate_dedup` (the
    whole run, nothing published); without it, `problem: null` failed after verify admitted it."""
    math = {"kind": "math", "problem": "What is 2+2?", "solution": "2+2 = 4\n#### 4", "answer": "4"}
    code = {"kind": "code", "prompt": "Add.", "solution": "def add(a, b):\n    return a + b",
            "tests": "assert add(1, 2) == 3"}  # fmt: skip
    records = [
        math | {"id": "good"},
        math
        | {"id": "numeric-answer", "problem": "What is 3+3?", "solution": "3+3 = 6\n#### 6", "answer": 6},
        math | {"id": "null-problem", "problem": None},
        math | {"id": "no-problem", "problem": ""},
        math | {"id": "number-problem", "problem": 12},
        math | {"id": "number-solution", "solution": 4},
        code | {"id": "number-entry-point", "entry_point": 5},
        code | {"id": "test-lines", "tests": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},
    ]
    data = write_jsonl(tmp_path / "cands.jsonl", records)
    recipe_path = tmp_path / "r.toml"
    recipe_path.write_text(
        f"""[run]
name = "typed"
max_failed_fraction = 1.0
[output]
shards = 1
[[synthesis]]
use = "file"
paths = [{json.dumps(str(data))}]
[[stage]]
use = "candidate_dedup"
[[stage]]
use = "verify"
timeout_s = 5.0
workers = 1
"""
    )
    manifest = run_recipe(load_recipe(recipe_path), str(tmp_path / "out"), IN_PROCESS).manifest
    assert sorted(row["id"] for row in rows(tmp_path / "out", "kept")) == [
        "good",
        "numeric-answer",
        "test-lines",
    ]
    failed = {row["id"]: (row["error"], row["message"]) for row in rows(tmp_path / "out", "failed")}
    assert failed == {
        "null-problem": (
            "BadCandidate",
            "a math candidate needs a 'problem' (its training text begins with it)",
        ),
        "no-problem": (
            "BadCandidate",
            "a math candidate needs a 'problem' (its training text begins with it)",
        ),
        "number-problem": ("BadCandidate", "'problem' is int, not text"),
        "number-solution": ("BadCandidate", "'solution' is int, not text"),
        "number-entry-point": ("BadCandidate", "'entry_point' is int, not text"),
    }
    assert manifest["counts"] == {"input": 8, "kept": 3, "rejected": 0, "failed": 5}


def test_a_recipe_with_generators_and_no_verify_stage_is_refused(tmp_path):
    """Its candidates were kept unverified, with an empty text; `validate` said ok."""
    from pipeline.recipe import ConfigError

    recipe_path = tmp_path / "r.toml"
    recipe_path.write_text('[[synthesis]]\nuse = "math"\ncount = 3\n[[stage]]\nuse = "length"\n')
    with pytest.raises(ConfigError, match=r"only a `verify` stage admits, and the recipe has none"):
        load_recipe(recipe_path)


def test_a_verify_stage_limited_to_some_languages_is_refused(tmp_path):
    """Candidates have no language: every one went around it, unverified, into kept."""
    from pipeline.recipe import ConfigError

    recipe_path = tmp_path / "r.toml"
    recipe_path.write_text(
        '[[synthesis]]\nuse = "math"\n[[stage]]\nuse = "verify"\nonly_languages = ["en"]\n'
    )
    with pytest.raises(ConfigError, match="only_languages would send every synthesis candidate around it"):
        load_recipe(recipe_path)


def test_candidates_read_by_a_recipe_without_verify_are_rejected_unverified(tmp_path):
    """A candidate in an input file went around every stage into `kept`, its text empty."""
    candidate = {
        "id": "c1",
        "kind": "code",
        "solution": 'import os; os.system("true")',
        "tests": "assert False",
    }
    # with a text of its own (an earlier run's admitted sample, or a record claiming to be one)
    texted = {"id": "c2", "kind": "math", "problem": "2+2?", "solution": "2+2=5. #### 5", "text": "2+2? 5"}
    data = write_jsonl(tmp_path / "in.jsonl", [candidate, texted, {"id": "web", "text": LONG_TEXT}])
    recipe_path = tmp_path / "r.toml"
    recipe_path.write_text(
        f'[input]\npaths = [{json.dumps(str(data))}]\n[[stage]]\nuse = "length"\nmin_chars = 5\n'
    )
    manifest = run_recipe(load_recipe(recipe_path), str(tmp_path / "out"), IN_PROCESS).manifest
    assert [row["id"] for row in rows(tmp_path / "out", "kept")] == ["web"]
    rejected = sorted((row["id"], row["stage"], row["reason"]) for row in rows(tmp_path / "out", "rejected"))
    assert rejected == [("c1", "read", "unverified"), ("c2", "read", "unverified")]
    assert manifest["counts"] == {"input": 3, "kept": 1, "rejected": 2, "failed": 0}
