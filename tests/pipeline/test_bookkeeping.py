"""The driver's figures come from files the pipeline wrote; a missing or unreadable one fails the run."""

import os

import pytest

import pipeline.run as run
from pipeline.recipe import load_recipe
from tests.conftest import IN_PROCESS, write_jsonl, write_recipe
from tests.pipeline.test_run import STAGES, corpus


@pytest.mark.parametrize(
    ("name", "damage"),
    [("read_count.json", None), ("shards.json", None), ("read_count.json", b"{not json")],
)
def test_lost_bookkeeping_fails_the_run_and_publishes_nothing(tmp_path, monkeypatch, name, damage):
    """As when a runner skips the step that writes it: never read as 0 (0 = 0 would publish nothing)."""
    data = write_jsonl(tmp_path / "in.jsonl", corpus(10))
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [str(data)], STAGES))
    real_finalize = run.finalize

    def finalize_after_loss(recipe, output, staging, *args):
        path = os.path.join(staging, name)
        os.remove(path)
        if damage is not None:
            with open(path, "wb") as handle:
                handle.write(damage)
        return real_finalize(recipe, output, staging, *args)

    monkeypatch.setattr(run, "finalize", finalize_after_loss)
    with pytest.raises(run.PipelineFailed, match=f"{name}: bookkeeping file missing or unreadable"):
        run.run_recipe(recipe, str(tmp_path / "out"), IN_PROCESS)
    out = tmp_path / "out"
    assert not (out / "manifest.json").exists() and not (out / "kept").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]
