"""A disk that fills up during a run: one traceback and a line that says which disk, how much is
free, and what to do (before: the same traceback five times, then `RuntimeError: OSError: [Errno
28] No space left on device [while running 'Read']`); and a note before the run starts when a disk
has less room than the run may write."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.fileio import FileInfo
from pipeline.output_folder import full_disk_advice
from pipeline.preflight import disk_space_notes, written_bytes
from pipeline.recipe import load_recipe
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


def test_the_estimate_of_what_a_run_writes_grows_with_its_text_and_whole_collection_stages(tmp_path):
    def estimate(files: dict[str, int], stages: str) -> float:
        recipe = load_recipe(write_recipe(tmp_path / "r.toml", list(files), stages))
        return written_bytes(recipe, {path: FileInfo(size, 0.0) for path, size in files.items()})

    plain = estimate({"a.jsonl": 1000}, "")
    assert estimate({"a.jsonl": 2000}, "") == 2 * plain
    # compressed text and Parquet hold more text than their size; a WARC's pages are mostly markup
    assert estimate({"a.jsonl.gz": 1000}, "") > estimate({"a.parquet": 1000}, "") > plain
    assert estimate({"a.warc.gz": 1000}, "") < plain
    one_dedup = estimate({"a.jsonl": 1000}, '[[stage]]\nuse = "exact_dedup"\n')
    two_dedups = estimate(
        {"a.jsonl": 1000}, '[[stage]]\nuse = "exact_dedup"\n[[stage]]\nuse = "minhash_dedup"\n'
    )
    assert plain < one_dedup < two_dedups


def test_a_note_only_for_a_disk_with_less_room_than_the_run_may_write(tmp_path):
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", ["in.jsonl"], '[[stage]]\nuse = "exact_dedup"\n'))
    folders = {"the output": str(tmp_path / "out"), "the checkpoints": str(tmp_path / "out")}
    free = shutil.disk_usage(tmp_path).free
    assert disk_space_notes(recipe, {"in.jsonl": FileInfo(free // 100, 0.0)}, folders) == []
    (note,) = disk_space_notes(recipe, {"in.jsonl": FileInfo(free, 0.0)}, folders)
    assert note.startswith("note: ") and f" free on {tmp_path} (the output, the checkpoints), " in note


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap mounts the small disk")
def test_a_run_says_before_it_starts_when_its_disk_has_less_room_than_it_may_write(tmp_path):
    text = " ".join(f"w{i % 97}" for i in range(100))
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": str(i), "text": f"{i} {text}."} for i in range(3_000)])
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "exact_dedup"\n')
    out = tmp_path / "out"
    out.mkdir()
    small_disk = ["bwrap", "--dev-bind", "/", "/", "--size", "1000000", "--tmpfs", str(out)]
    run = ["run", "--quiet", "--recipe", str(recipe), "--output", str(out / "o"), "--direct_num_workers=1"]
    done = subprocess.run(
        [*small_disk, sys.executable, "-m", "pipeline.cli", *run],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "No space left" not in done.stderr:
        pytest.skip(f"no small disk here: {done.stderr[-300:]}")
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and done.stderr.startswith(notes[0])
    assert (
        f" free on {out / 'o'} (the output, the spill files, the checkpoints), and this run may write about "
        in notes[0]
    )
    assert "(output, checkpoints, and the spill files of its 1 whole-collection stage); " in notes[0]
