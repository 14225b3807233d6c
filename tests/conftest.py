"""Shared test helpers: small recipes and input files written into tmp folders."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests: `ci` in make test; `pytest --hypothesis-profile=deep` for a long search.
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=5000, deadline=None)
settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
SAMPLE_GLOB = str(REPO / "sample_data" / "*.jsonl")
LONG_TEXT = " ".join(f"word{i % 37} is here" for i in range(40))


def write_jsonl(path: Path, records: list) -> Path:
    """Write records (dicts, or raw str lines) as JSON Lines."""
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


def write_bad_inputs(folder: Path, good: list) -> Path:
    """A folder of inputs that exercise every reader failure: bad UTF-8, malformed JSON, a missing
    text, a lone surrogate escape, an empty file and a truncated gzip, next to `good` records."""
    folder.mkdir()
    write_jsonl(folder / "good.jsonl", good)
    (folder / "empty.jsonl").write_text("")
    (folder / "bad.jsonl").write_bytes(
        b'{"id": "u", "text": "\xff"}\n{"id": 1\n{"id": "n", "text": null}\n{"id": "s", "text": "\\ud800"}\n'
    )
    whole = gzip.compress(
        b"".join(json.dumps({"id": f"g{i}", "text": LONG_TEXT}).encode() + b"\n" for i in range(50))
    )
    (folder / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    return folder


def write_recipe(path: Path, inputs: list[str], stages: str = "", extra: str = "") -> Path:
    """A small recipe file: the given inputs, the given [[stage]] tables."""
    path.write_text(
        f"""[run]
name = "test"
max_failed_fraction = 1.0
{extra}
[output]
shards = 2

[input]
paths = {json.dumps(inputs)}

{stages}
"""
    )
    return path


@pytest.fixture(scope="session", autouse=True)
def remove_unrun_pipelines_temp_folders():
    """Beam makes a `beam-pipeline-temp*` folder per Pipeline and deletes it only when the pipeline
    runs; tests that only build a graph would leave theirs. Empty ones made during the session go.
    A `beam-temp*` folder is Beam's DirectRunner trying to start Prism: the session fails, since
    every test pipeline must run where `gristmill run` runs (`pipeline.run.new_pipeline`)."""
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("beam-pipeline-temp*")) | set(temp.glob("beam-temp*"))
    yield
    for folder in set(temp.glob("beam-pipeline-temp*")) - before:
        try:
            os.rmdir(folder)  # only when empty: another process's pipeline may still use a full one
        except OSError:
            pass
    prism = sorted(set(temp.glob("beam-temp*")) - before)
    for folder in prism:
        shutil.rmtree(folder, ignore_errors=True)
    assert not prism, f"a test ran a pipeline on Beam's DirectRunner (it tried Prism, leaving {prism[0]})"


@pytest.fixture
def long_text() -> str:
    return LONG_TEXT


IN_PROCESS = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]


@pytest.fixture(scope="session")
def default_sample_run(tmp_path_factory) -> Path:
    """recipes/default.toml on all of sample_data/ in one in-memory worker; its output folder.
    One run serves the end-to-end fates and the 1-worker side of the determinism test."""
    from pipeline.recipe import load_recipe
    from pipeline.run import run_recipe

    output = tmp_path_factory.mktemp("default-sample")
    run_recipe(load_recipe(REPO / "recipes" / "default.toml", [SAMPLE_GLOB]), str(output), IN_PROCESS)
    return output
