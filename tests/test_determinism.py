"""The default recipe gives identical output with one worker and with two worker processes.

Runs recipes/default.toml three times on all of sample_data/ (it reaches every stage: duplicate
pairs for each dedup stage, records each filter removes, and synthesis candidates for `verify`):
1 worker in memory (conftest's `default_sample_run`, the run tests/test_end_to_end.py checks the
fates of), then 2 worker processes twice. Every kept, rejected and failed row (text, scores,
reasons, survivors) must be the same in all three runs.
The 10-run check is recorded in benchmarks/results/reliability.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from tests.conftest import REPO, SAMPLE_GLOB

TWO_WORKERS = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def outputs(folder: Path) -> dict[str, list]:
    return {
        part: sorted(
            (
                json.dumps(row, sort_keys=True)
                for f in sorted((folder / part).glob("*.parquet"))
                for row in pq.read_table(f).to_pylist()
            ),
        )
        for part in ("kept", "rejected", "failed")
    }


@pytest.mark.slow
def test_default_recipe_output_is_the_same_with_one_and_two_workers(tmp_path, default_sample_run):
    first = outputs(default_sample_run)
    records = sum(
        1 for path in sorted((REPO / "sample_data").glob("*.jsonl")) for line in path.open() if line.strip()
    )
    assert sum(map(len, first.values())) == records
    recipe = load_recipe(REPO / "recipes" / "default.toml", [SAMPLE_GLOB])
    for name in ("2 workers", "2 workers again"):
        run_recipe(recipe, str(tmp_path / name), TWO_WORKERS)
        found = outputs(tmp_path / name)
        for part in first:
            assert found[part] == first[part], f"{name}: {part}/ differs from the 1-worker run"
