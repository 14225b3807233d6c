"""A disk that fills up during a run: one traceback and a line that says which disk, how much is
free, and what to do (before: the same traceback five times, then `RuntimeError: OSError: [Errno
28] No space left on device [while running 'Read']`)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.output_folder import full_disk_advice
from tests.conftest import write_jsonl, write_recipe

ROOT = Path(__file__).resolve().parents[2]


def test_the_advice_names_each_disk_once_with_its_free_space(tmp_path):
    output, temp = tmp_path / "out", tmp_path / "tmp"
    temp.mkdir()
    folders = {
        "the output": str(output),
        "the checkpoints": str(output / ".work"),
        "temporary files": str(temp),
    }
    # as Python and as pyarrow say it
    for error in ("OSError: [Errno 28] No space left on device", "[errno 122] Disk quota exceeded"):
        advice = full_disk_advice(error, folders)
        assert advice.startswith(f"a disk is full ({error}); ") and "(--work-dir)" in advice
        # output's folder is gone with the failed run: its nearest existing parent is the same disk
        assert f" free on {tmp_path} (the output, the checkpoints, temporary files)" in advice
    assert full_disk_advice("KeyError: 'text'", folders) is None


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap mounts the small disk")
def test_a_run_that_fills_its_disk_says_so_once(tmp_path):
    words = " ".join(f"w{i % 97}" for i in range(120))
    data = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "text": f"{i} {words}."} for i in range(20_000)]
    )
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "gopher_quality"\n')
    out = tmp_path / "out"
    out.mkdir()
    small_disk = ["bwrap", "--dev-bind", "/", "/", "--size", "300000", "--tmpfs", str(out)]
    run = ["run", "--quiet", "--recipe", str(recipe), "--output", str(out), "--direct_num_workers=2"]
    done = subprocess.run(
        [*small_disk, sys.executable, "-m", "pipeline.cli", *run, "--direct_running_mode=multi_processing"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "No space left" not in done.stderr and done.returncode != 1:
        pytest.skip(f"no small disk here: {done.stderr[-300:]}")
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1
    assert last.startswith("gristmill: run failed, nothing published: a disk is full (")
    assert f"free on {out} (the output, the spill files, the checkpoints)" in last
    assert last.endswith("(a rerun resumes there)")
    # each failing worker's one traceback (an exception raised while handling another), one or
    # both workers, in the same step or not: no copies (there were five of one)
    failed_steps = [line for line in done.stderr.splitlines() if line.startswith("RuntimeError: ")]
    assert 1 <= len(failed_steps) <= 2
    assert done.stderr.count("Traceback (most recent call last)") == 2 * len(failed_steps)
    assert "Worker: severity: ERROR" not in done.stderr
