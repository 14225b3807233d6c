"""Phases, checkpoints and resume: a killed run's rerun gives the uninterrupted run's output."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.checkpoints import CheckpointSettings, WorkArea, cut_phases, describe
from pipeline.outcomes import KEPT as KEPT_OUTCOME
from pipeline.output_folder import LOCK_FILE
from pipeline.progress import size_text
from pipeline.recipe import load_recipe
from pipeline.run import RunInterrupted, checkpoints_enabled, pipeline_options, run_recipe
from tests.conftest import IN_PROCESS, write_jsonl, write_recipe

ROOT = Path(__file__).resolve().parents[2]
# Words of letters only (dedup normalizes digits away, so "w1" and "w2" would be one word).
WORDS = ["".join(random.Random(i).choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for i in range(400)]

# Phase 0: length; phase 1: exact_dedup + gopher_repetition (checkpointed); phase 2: minhash (last).
STAGES = """
[[stage]]
use = "length"
min_words = 20

[[stage]]
use = "exact_dedup"

[[stage]]
use = "gopher_repetition"

[[stage]]
use = "minhash_dedup"
jaccard_threshold = {threshold}
"""


def corpus_files(folder: Path, files: int = 6, per_file: int = 150) -> list[str]:
    """Seeded random-word documents with exact copies, near copies and short ones."""
    rng = random.Random(7)
    folder.mkdir()
    paths = []
    previous: list[str] = []
    for f in range(files):
        records = []
        for i in range(per_file):
            roll = rng.random()
            if previous and roll < 0.1:
                text = rng.choice(previous)
            elif previous and roll < 0.2:
                words = rng.choice(previous).split()
                words[rng.randrange(len(words))] = "changed"
                text = " ".join(words)
            elif roll < 0.25:
                text = "too short"
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 200)))
            previous.append(text)
            records.append({"id": f"f{f}-{i:03d}", "text": text})
        paths.append(str(write_jsonl(folder / f"part{f}.jsonl", records)))
    return paths


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(folder, recipe path, the uninterrupted run's manifest with checkpoints off); and
    `folder/kept-work`, a finished run whose work area was kept (tests copy it)."""
    folder = tmp_path_factory.mktemp("checkpoints")
    inputs = corpus_files(folder / "in")
    recipe = write_recipe(folder / "r.toml", inputs, STAGES.format(threshold=0.8))
    reference = run_recipe(load_recipe(recipe), str(folder / "reference"), IN_PROCESS, checkpoints=OFF)
    kept = run_recipe(load_recipe(recipe), str(folder / "kept-work"), IN_PROCESS, checkpoints=KEEP)
    same_output(kept.manifest, reference.manifest)
    assert kept.manifest["checkpoints"]["units_reused"] == 0
    return folder, recipe, reference.manifest


def copy_of_kept_work(folder: Path, name: str) -> Path:
    shutil.copytree(folder / "kept-work", folder / name)
    return folder / name


OFF = CheckpointSettings(mode="off")
KEEP = CheckpointSettings(keep_work=True)


def same_output(manifest: dict, reference: dict) -> None:
    """Byte-identical shards and the same counts as the reference run."""
    assert manifest["counts"] == reference["counts"] and manifest["conservation"]
    assert manifest["rejected_by_reason"] == reference["rejected_by_reason"]
    shards = lambda m: {s["file"]: s["sha256"] for s in m["shards"]}  # noqa: E731
    assert shards(manifest) == shards(reference)


def work_state(work: Path) -> tuple[int, set[int]]:
    """(finished units, finished later phases) in a work area."""
    units, phases = 0, set()
    for marker in work.glob("phase-*/*.done.json"):
        if marker.name == "phase.done.json":
            phases.add(int(marker.parent.name.split("-")[1]))
        else:
            units += 1
    return units, phases


def test_phases_are_cut_at_collection_stages(setup):
    _, recipe, _ = setup
    phases = cut_phases(load_recipe(recipe).stages)
    assert [[s.name for s in p] for p in phases] == [
        ["length"],
        ["exact_dedup", "gopher_repetition"],
        ["minhash_dedup"],
    ]


def test_auto_checkpoints_only_on_the_local_runner():
    auto = CheckpointSettings()
    assert checkpoints_enabled(auto, pipeline_options(IN_PROCESS))
    assert not checkpoints_enabled(auto, pipeline_options(["--runner=DaskRunner"]))
    assert checkpoints_enabled(CheckpointSettings(mode="on"), pipeline_options(["--runner=DaskRunner"]))


def test_a_rerun_reuses_every_phase_and_gives_the_same_output(setup):
    folder, recipe, reference = setup
    out = copy_of_kept_work(folder, "rerun")
    assert work_state(out / ".gristmill-work") == (6, {1})  # the last phase is the output itself
    second = run_recipe(load_recipe(recipe), str(out), IN_PROCESS).manifest
    same_output(second, reference)
    assert second["checkpoints"]["units_reused"] == 6
    assert [p["phase"] for p in second["checkpoints"]["phases_reused"]] == [0, 1]
    assert not (out / ".gristmill-work").exists()  # removed after a successful run


def test_the_console_says_what_a_rerun_reused(setup):
    folder, recipe, _ = setup
    out = copy_of_kept_work(folder, "told")
    command = [sys.executable, "-m", "pipeline.cli", "run", "--recipe", str(recipe), "--output", str(out)]
    done = subprocess.run([*command, *IN_PROCESS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    reused = (
        f"reused from an earlier run ({out / '.gristmill-work'}): 6 of 6 input units, "
        "phases 0-1 (through gopher_repetition), "
    )
    assert f"gristmill: {reused}" in done.stderr and "; --fresh starts over" in done.stderr
    assert reused in done.stdout.splitlines()[1]  # the summary's second line
    fresh = subprocess.run(
        [*command, "--fresh", *IN_PROCESS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert fresh.returncode == 0 and "reused" not in fresh.stderr + fresh.stdout


def test_a_change_to_the_last_stage_reuses_the_earlier_phases(setup):
    folder, recipe, _ = setup
    out = copy_of_kept_work(folder, "changed")
    changed = write_recipe(folder / "changed.toml", [], STAGES.format(threshold=0.5))
    changed.write_text(changed.read_text().replace("paths = []", f"paths = {json.dumps(inputs_of(recipe))}"))
    resumed = run_recipe(load_recipe(changed), str(out), IN_PROCESS, checkpoints=KEEP).manifest
    assert [p["phase"] for p in resumed["checkpoints"]["phases_reused"]] == [0, 1]
    fresh = run_recipe(load_recipe(changed), str(folder / "changed-fresh"), IN_PROCESS, checkpoints=OFF)
    same_output(resumed, fresh.manifest)
    # and a change to the first stage recomputes everything
    first = write_recipe(folder / "first.toml", inputs_of(recipe), STAGES.format(threshold=0.5))
    first.write_text(first.read_text().replace("min_words = 20", "min_words = 30"))
    redone = run_recipe(load_recipe(first), str(out), IN_PROCESS, checkpoints=KEEP).manifest
    assert redone["checkpoints"]["units_reused"] == 0 and redone["checkpoints"]["phases_reused"] == []


def inputs_of(recipe: Path) -> list[str]:
    return load_recipe(recipe).input.paths


def damage_file(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["phase 1 file corrupted", "phase 0 file truncated, marker half-written"])
def test_a_damaged_checkpoint_is_recomputed_never_trusted(setup, damage):
    folder, recipe, reference = setup
    out = copy_of_kept_work(folder, f"damaged-{damage[:7].replace(' ', '-')}")
    work = out / ".gristmill-work"
    if damage.startswith("phase 1"):
        damage_file(sorted(work.glob("phase-1-*/part-*.kept.pkl"))[0])
        reused = {"units_reused": 6, "phases_reused": [0]}  # phase 1 recomputed from phase 0
    else:
        unit = sorted(work.glob("phase-0-*/*.removed.pkl"))[0]
        unit.write_bytes(unit.read_bytes()[:-10])
        marker = sorted(work.glob("phase-0-*/*.done.json"))[-1]
        marker.write_bytes(marker.read_bytes()[:40])
        # a marker of the right version that lists no files was a KeyError
        other = sorted(work.glob("phase-0-*/*.done.json"))[-2]
        other.write_text(json.dumps({"version": json.loads(other.read_text())["version"]}))
        uncounted = sorted(work.glob("phase-0-*/*.done.json"))[-3]  # and one without its counts
        uncounted.write_text(
            json.dumps({k: v for k, v in json.loads(uncounted.read_text()).items() if k != "counts"})
        )
        reused = {"units_reused": 2, "phases_reused": []}  # four units recomputed, then every phase
    resumed = run_recipe(load_recipe(recipe), str(out), IN_PROCESS, checkpoints=KEEP).manifest
    same_output(resumed, reference)
    figures = resumed["checkpoints"]
    assert {
        "units_reused": figures["units_reused"],
        "phases_reused": [p["phase"] for p in figures["phases_reused"]],
    } == reused


def listed_and_present(work: Path) -> tuple[set[str], set[str]]:
    """(files the work area's markers list, with the markers; every file in it but the lock)."""
    listed = set()
    for marker in work.glob("phase-*/*.done.json"):
        listed |= {marker.name, *(entry["file"] for entry in json.loads(marker.read_text())["files"])}
    present = {path.name for path in work.glob("phase-*/*")}
    return listed, present


def test_a_rerun_deletes_the_work_that_no_resume_can_use(setup):
    """An interrupted run's partial files stayed beside the rerun's own: the work area grew with
    every attempt (a full disk stayed full after the rerun freed room)."""
    folder, recipe, reference = setup
    out = copy_of_kept_work(folder, "leftovers")
    work = out / ".gristmill-work"
    phase0, phase1 = next(work.glob("phase-0-*")), next(work.glob("phase-1-*"))
    sorted(phase0.glob("*.done.json"))[0].unlink()  # an unfinished unit: its files are partial work
    shutil.copy(next(phase1.glob("part-*.kept.pkl")), phase1 / "part-x.kept.pkl")  # a stopped phase's
    other_recipe = work / "phase-0-0123456789abcdef01234567"
    shutil.copytree(phase0, other_recipe)
    listed, _ = listed_and_present(work)
    # phase 1 stands on the unfinished phase 0, so all of it is recomputed
    unusable = [
        *(p for p in phase0.iterdir() if p.name not in listed),
        *phase1.iterdir(),
        *other_recipe.iterdir(),
    ]
    deleted = size_text(sum(path.stat().st_size for path in unusable))
    command = [sys.executable, "-m", "pipeline.cli", "run", "--recipe", str(recipe), "--output", str(out)]
    done = subprocess.run(
        [*command, "--keep-work", *IN_PROCESS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"gristmill: deleted {deleted} of checkpoints that no resume can use" in done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    same_output(manifest, reference)
    assert manifest["checkpoints"]["units_reused"] == 5
    listed, present = listed_and_present(work)
    assert present == listed and not other_recipe.exists()


def test_fresh_ignores_earlier_checkpoints(setup):
    folder, recipe, reference = setup
    out = copy_of_kept_work(folder, "fresh")
    fresh = CheckpointSettings(fresh=True, work_dir=str(folder / "elsewhere"))
    manifest = run_recipe(load_recipe(recipe), str(out), IN_PROCESS, checkpoints=fresh).manifest
    same_output(manifest, reference)
    assert manifest["checkpoints"]["units_reused"] == 0
    assert manifest["checkpoints"]["work_dir"] == str(folder / "elsewhere")


def test_a_work_dir_holding_anything_but_checkpoints_is_refused_and_kept(setup, capsys):
    """The work area is deleted after a successful run: `--work-dir` on a folder with other files
    deleted them, and `--work-dir .` the current folder."""
    from pipeline.cli import main

    folder, recipe, reference = setup
    scratch = folder / "scratch"
    scratch.mkdir()
    (scratch / "precious.txt").write_text("keep me")
    run = ["run", "--quiet", "--recipe", str(recipe), "--output"]
    assert main([*run, str(folder / "refused"), "--work-dir", str(scratch)]) == 2
    assert "holds 'precious.txt' besides checkpoints" in capsys.readouterr().err
    assert (scratch / "precious.txt").read_text() == "keep me" and not (folder / "refused").exists()
    assert main([*run, str(folder / "inside"), "--work-dir", str(folder)]) == 2
    assert "input inside the --work-dir, whose checkpoints a rerun would read" in capsys.readouterr().err
    assert main([*run, str(folder / "same"), "--work-dir", str(folder / "same")]) == 2  # its own lock:
    assert "the output folder would be inside the work area" in capsys.readouterr().err  # "another run"
    assert main([*run, str(folder / "on_a_file"), "--work-dir", str(scratch / "precious.txt")]) == 2
    assert f"precious.txt: {scratch / 'precious.txt'} is a file, not a folder" in capsys.readouterr().err
    # inside the output's kept/, which publishing replaces (the checkpoints were deleted, unsaid)
    assert main([*run, str(folder / "o"), "--work-dir", str(folder / "o" / "kept"), "--keep-work"]) == 2
    assert "inside the output folder's kept/, rejected/ or failed/" in capsys.readouterr().err
    # A folder of one's own merely named like a phase folder was taken for one and deleted.
    notes = folder / "mywork" / "phase-1-planning"
    notes.mkdir(parents=True)
    (notes / "notes.txt").write_text("keep me")
    assert main([*run, str(folder / "refused"), "--work-dir", str(folder / "mywork")]) == 2
    assert "holds 'phase-1-planning' besides checkpoints" in capsys.readouterr().err
    assert (notes / "notes.txt").read_text() == "keep me"
    # The spill folder in the work area: a killed run's spill blocked the rerun ("holds '.staging-...'").
    spill_args = [
        str(folder / "refused"),
        "--work-dir",
        str(folder / "scr"),
        "--spill_dir",
        str(folder / "scr"),
    ]
    assert main([*run, *spill_args]) == 2
    assert "--spill_dir is inside the work area" in capsys.readouterr().err
    # Inputs inside the work area: a rerun read the checkpoints' markers as input.
    marker = folder / "corpus" / "work" / f"phase-0-{'a' * 24}" / "0.done.json"
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    inside = write_recipe(
        folder / "inside.toml", [f"{folder}/corpus/**/*.json*"], STAGES.format(threshold=0.8)
    )
    inside_args = ["run", "--quiet", "--recipe", str(inside), "--output", str(folder / "refused")]
    assert main([*inside_args, "--work-dir", str(folder / "corpus" / "work")]) == 2
    assert "0.done.json: input inside the --work-dir" in capsys.readouterr().err
    # A work area an earlier run kept (only its phase folders) is reused, then deleted.
    kept = copy_of_kept_work(folder, "kept-again") / ".gristmill-work"
    assert main([*run, str(folder / "reuse"), "--work-dir", str(kept)]) == 0
    assert json.loads((folder / "reuse" / "manifest.json").read_text())["checkpoints"]["units_reused"] > 0
    assert not kept.exists()


def test_the_fingerprints_cover_only_languages_and_the_data_files_a_stage_reads(tmp_path):
    """A rerun reused checkpoints made with another `only_languages`, or from an eval set (or
    candidate files) that has changed since: stale decisions, new candidates never read."""
    item = {"text": "an eval item of some words, thirteen of them at least, as an n-gram needs"}
    evals = write_jsonl(tmp_path / "evals.jsonl", [item])
    stages = (
        '[[stage]]\nuse = "length"\nonly_languages = ["{language}"]\n\n'
        f'[[stage]]\nuse = "decontaminate"\npaths = ["{evals}"]\n\n[[stage]]\nuse = "exact_dedup"\n'
    )

    def phase_0(language: str = "en") -> str:
        recipe = write_recipe(tmp_path / "r.toml", ["x.jsonl"], stages.replace("{language}", language))
        return WorkArea.for_recipe(load_recipe(recipe), "work", [], {}).fingerprints[0]

    first = phase_0()
    assert phase_0() == first and phase_0("fr") != first
    write_jsonl(evals, [item, {"text": "and one more"}])
    assert phase_0() != first


def test_phase_0_is_not_reused_when_a_later_verify_stage_comes_or_goes(tmp_path):
    """Phase 0 rejects synthesis candidates as `unverified` without a verify stage anywhere: adding
    one after a dedup stage reused phase 0 (valid candidates stayed rejected), removing it kept
    unverified candidates, the wrong ones too."""
    stages = '[[stage]]\nuse = "length"\n\n[[stage]]\nuse = "exact_dedup"\n'

    def phase_0(more: str) -> str:
        recipe = write_recipe(tmp_path / "r.toml", ["x.jsonl"], stages + more)
        return WorkArea.for_recipe(load_recipe(recipe), "work", [], {}).fingerprints[0]

    assert phase_0("") != phase_0('\n[[stage]]\nuse = "verify"\n')


def test_a_run_holds_its_default_work_area_too(setup, monkeypatch):
    """Before, only a `--work-dir` was held: another run given OUT/.gristmill-work as its own
    deleted the first run's live checkpoints."""
    import pipeline.run

    folder, recipe, _ = setup
    plan, held = pipeline.run.plan_checkpoints, []

    def plan_and_try_the_lock(recipe, work_root, *args):
        probe = (  # exit 3: another process holds the lock
            "import fcntl, sys\ntry:\n    fcntl.flock(open(sys.argv[1], 'a'), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
            "except BlockingIOError:\n    sys.exit(3)"
        )
        tried = subprocess.run([sys.executable, "-c", probe, os.path.join(work_root, LOCK_FILE)], check=False)
        held.append(tried.returncode)
        return plan(recipe, work_root, *args)

    monkeypatch.setattr(pipeline.run, "plan_checkpoints", plan_and_try_the_lock)
    run_recipe(load_recipe(recipe), str(folder / "default-work"), IN_PROCESS)
    assert held == [3]


def test_a_work_dir_in_use_by_another_run_is_refused_and_left_alone(setup, capsys):
    """Two runs with one `--work-dir`: the second one's `--fresh`, or its cleanup after success,
    deleted the first one's checkpoints while it ran."""
    from pipeline.cli import main

    folder, recipe, reference = setup
    work = copy_of_kept_work(folder, "shared-work") / ".gristmill-work"
    checkpoints = sorted(path.relative_to(work) for path in work.rglob("*"))
    holder = subprocess.Popen(  # another run holds the work area until stdin closes
        [
            sys.executable,
            "-c",
            f"from pipeline.output_folder import exclusive\nwith exclusive({str(work)!r}, '--work-dir'):\n"
            "    print('held', flush=True)\n    input()",
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    run = ["run", "--quiet", "--recipe", str(recipe), "--work-dir", str(work), "--output"]
    try:
        assert holder.stdout.readline() == "held\n"
        assert main([*run, str(folder / "second"), "--fresh"]) == 2
        error = capsys.readouterr().err
        assert f"another gristmill run (pid {holder.pid}) is using this folder" in error
        assert "choose another --work-dir" in error
        assert sorted(path.relative_to(work) for path in work.rglob("*") if path.name != LOCK_FILE) == (
            checkpoints
        )
        assert not (folder / "second").exists()
    finally:
        holder.communicate("\n", timeout=30)
    assert main([*run, str(folder / "second")]) == 0  # reuses the checkpoints, then deletes them
    manifest = json.loads((folder / "second" / "manifest.json").read_text())
    same_output(manifest, reference)
    assert manifest["checkpoints"]["units_reused"] > 0 and not work.exists()


def _cli(recipe: Path, out: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "pipeline.cli", "run", "--quiet", "--recipe", str(recipe)]
    return subprocess.Popen(
        [*command, "--output", str(out), *IN_PROCESS],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _kill_when(process: subprocess.Popen, work: Path, ready, delay: float, sig=signal.SIGKILL) -> bool:
    """Send `sig` to the run `delay` s after the work area satisfies `ready`; False if it ended first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if ready(*work_state(work)):
            time.sleep(delay)
            if process.poll() is not None:
                return False
            os.killpg(process.pid, sig)
            process.wait(timeout=60)
            return True
        time.sleep(0.02)
    process.wait(timeout=60)
    return False


# A random point in each phase: after the first finished unit (phase 0), once phase 0 is done
# (phase 1), once phase 1 is done (phase 2), plus a seeded random delay.
KILL_POINTS = {
    0: lambda units, phases: units >= 1,
    1: lambda units, phases: units == 6,
    2: lambda units, phases: 1 in phases,
}


@pytest.mark.parametrize("phase, seed", [(0, 1), (1, 2), (2, 3)])
def test_kill_9_in_any_phase_then_the_rerun_matches_the_uninterrupted_run(setup, phase, seed):
    folder, recipe, reference = setup
    out = folder / f"killed-{phase}-{seed}"
    delay = random.Random(seed).uniform(0.0, 0.3)
    killed = _kill_when(_cli(recipe, out), out / ".gristmill-work", KILL_POINTS[phase], delay)
    assert not (out / "manifest.json").exists() or not killed
    before = work_state(out / ".gristmill-work")
    resumed = run_recipe(load_recipe(recipe), str(out), IN_PROCESS).manifest
    same_output(resumed, reference)
    if killed:
        assert resumed["checkpoints"]["units_reused"] == before[0]
        assert len(resumed["checkpoints"]["phases_reused"]) == (1 + len(before[1]) if before[0] == 6 else 0)
    assert not list(out.glob(".staging-*"))  # the killed run's staging folder is gone


def test_a_stop_before_any_split_finished_names_no_checkpoint_folder(tmp_path):
    """A --work-dir made for the run is removed when empty: the line named a folder gone."""
    assert describe(str(tmp_path / "gone"), " (a rerun resumes there)") == (
        "no input split had finished, so no checkpoint was kept"
    )


def test_ctrl_c_publishes_nothing_and_says_what_was_kept(setup):
    folder, recipe, _ = setup
    out = folder / "interrupted"
    process = _cli(recipe, out)
    interrupted = _kill_when(process, out / ".gristmill-work", KILL_POINTS[0], 0.0, signal.SIGINT)
    if not interrupted:
        pytest.skip("the run finished before it could be interrupted")
    assert process.returncode == 130
    message = process.stderr.read().decode()
    assert "interrupted: nothing was published" in message and "finished input splits" in message
    assert not (out / "manifest.json").exists()
    assert issubclass(RunInterrupted, KeyboardInterrupt)


def test_a_stop_signal_while_a_published_run_tidies_up_waits(setup, monkeypatch, capsys):
    """A SIGTERM while the published run deleted its checkpoints exited 143, as if killed."""
    from pipeline import run as run_module

    folder, recipe, reference = setup
    clear = run_module.clear_work_area

    def interrupted_clear(work_root: str) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # SIGINT: without the fix it raises here, not kills pytest
        clear(work_root)

    monkeypatch.setattr(run_module, "clear_work_area", interrupted_clear)
    try:
        manifest = run_recipe(load_recipe(recipe), str(folder / "tidied"), IN_PROCESS).manifest
    except KeyboardInterrupt:
        pytest.fail("the signal stopped a run that had published")
    same_output(manifest, reference)
    assert "gristmill: SIGINT came while the published run was tidied up; that was finished first" in (
        capsys.readouterr().err
    )
    assert not (folder / "tidied" / ".gristmill-work").exists()


def test_a_failure_while_publishing_says_so_and_a_rerun_publishes(setup, monkeypatch, capsys):
    """A shard that could not be moved into place was a traceback, the folder half replaced."""
    from pipeline import fileio
    from pipeline.cli import main

    folder, recipe, reference = setup
    out = folder / "publish-fails"
    move = fileio.move

    def refused_move(source: str, destination: str) -> None:
        if "/kept/" in destination:
            raise PermissionError(1, "Operation not permitted", destination)
        move(source, destination)

    monkeypatch.setattr(fileio, "move", refused_move)
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out)]) == 1
    error = capsys.readouterr().err
    assert (
        f"gristmill: run failed: publishing into {out} failed (" in error
        and "Operation not permitted" in error
    )
    assert "no manifest.json until a run publishes there" in error and "(a rerun resumes there)" in error
    assert not (out / "manifest.json").exists()
    monkeypatch.setattr(fileio, "move", move)
    write_whole = fileio.write_whole

    def full_disk(path: str, data: bytes) -> None:
        if path.endswith("manifest.json"):
            raise OSError(28, "No space left on device", path)
        write_whole(path, data)

    monkeypatch.setattr(fileio, "write_whole", full_disk)  # the manifest, written last, was a traceback
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out)]) == 1
    assert "No space left on device" in capsys.readouterr().err and not (out / "manifest.json").exists()
    monkeypatch.setattr(fileio, "write_whole", write_whole)
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out)]) == 0
    same_output(json.loads((out / "manifest.json").read_text()), reference)


def test_a_later_phase_is_written_in_batches_bounded_by_bytes_and_by_records():
    """Before, 4,096 records a batch whatever their size: with 500 KB pages, 2 GB held per stream
    and worker while a later phase was checkpointed."""
    import apache_beam as beam
    from apache_beam.testing.util import assert_that

    from pipeline.checkpoints import FILE_BYTES, FILE_RECORDS, file_batches
    from pipeline.document import Document
    from pipeline.run import new_pipeline

    big = [(KEPT_OUTCOME, Document(f"b{n}", "x" * 500_000)) for n in range(100)]
    small = [(KEPT_OUTCOME, Document(f"s{n}", "y")) for n in range(10_000)]

    def bounded(batches):
        assert sum(count for count, _ in batches) == 10_100
        assert all(count <= FILE_RECORDS and size <= FILE_BYTES + 600_000 for count, size in batches)

    pipeline = new_pipeline()
    batches = (
        pipeline
        | beam.Create(big + small)
        | file_batches()
        | beam.Map(lambda batch: (len(batch), sum(len(doc.text) for _, doc in batch)))
    )
    assert_that(batches, bounded)
    pipeline.run().wait_until_finish()
