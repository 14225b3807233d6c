"""A small finished output folder with kept, rejected (a filter and a dedup) and failed rows."""

from __future__ import annotations

import pytest

from pipeline.cli import main
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe

CURATED_STAGES = """
[[stage]]
use = "fasttext_quality"

[[stage]]
use = "length"
min_words = 20

[[stage]]
use = "exact_dedup"
prefer_score = "fasttext_quality"
"""


def curated_records() -> list:
    records = []
    for i in range(24):
        text = f"{LONG_TEXT} unique{i}" if i % 6 else LONG_TEXT  # every 6th is an exact duplicate
        records.append({"id": f"doc{i:02d}", "text": text if i % 5 else "too short", "lang_hint": i})
    return [*records, "{not json"]


@pytest.fixture(scope="session")
def curated_output(tmp_path_factory):
    """(output folder, input file) of one in-process run."""
    folder = tmp_path_factory.mktemp("curated")
    data = write_jsonl(folder / "in.jsonl", curated_records())
    recipe = write_recipe(folder / "r.toml", [str(data)], CURATED_STAGES)
    out = folder / "out"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    return out
