"""The default recipe gives identical output with one worker and with two worker processes.

Runs recipes/default.toml three times (1 worker in memory, then 2 worker processes twice) on a
slice of sample_data/ that reaches every stage: duplicate pairs for each dedup stage, records
each filter removes, and synthesis candidates for `verify`. Every kept, rejected and failed row
(text, scores, reasons, survivors) must be the same in all three runs.
The 10-run check is recorded in benchmarks/results/reliability.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.recipe import load_recipe
from pipeline.run import run_recipe

REPO = Path(__file__).resolve().parents[1]
RUNS = {
    "1 worker": ["--direct_running_mode=in_memory", "--direct_num_workers=1"],
    "2 workers": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    "2 workers again": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
}


def sample_slice() -> list[dict]:
    """Every duplicate with its original, every 4th other record, and every candidate."""
    records = [
        json.loads(line) for path in sorted((REPO / "sample_data").glob("*.jsonl")) for line in path.open()
    ]
    originals = {r["duplicate_of"] for r in records if r.get("duplicate_of")}
    return [
        r
        for i, r in enumerate(records)
        if r.get("duplicate_of") or r["id"] in originals or r.get("kind") or i % 4 == 0
    ]


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
def test_default_recipe_output_is_the_same_with_one_and_two_workers(tmp_path):
    data = tmp_path / "slice.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in sample_slice()))
    recipe = load_recipe(REPO / "recipes" / "default.toml", [str(data)])
    results = {}
    for name, args in RUNS.items():
        run_recipe(recipe, str(tmp_path / name), args)
        results[name] = outputs(tmp_path / name)
    first = results["1 worker"]
    assert sum(map(len, first.values())) == len(sample_slice())
    for name, found in results.items():
        for part in first:
            assert found[part] == first[part], f"{name}: {part}/ differs from the 1-worker run"
