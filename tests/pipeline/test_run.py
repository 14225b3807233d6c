import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from pipeline.output_folder import (
    LOCK_FILE,
    OUTPUT_MARKER,
    InputInsideOutput,
    OutputInUse,
    OutputNotOurs,
    exclusive,
)
from pipeline.recipe import load_recipe
from pipeline.run import RunFailed, pipeline_options, run_recipe, spill_root
from tests.conftest import IN_PROCESS, LONG_TEXT, write_bad_inputs, write_jsonl, write_recipe

STAGES = """
[[stage]]
use = "length"
min_words = 20

[[stage]]
use = "exact_dedup"
"""


def corpus(n: int = 60) -> list[dict]:
    records = []
    for i in range(n):
        text = f"{LONG_TEXT} unique{i}" if i % 5 else LONG_TEXT  # every 5th is an exact duplicate
        records.append(
            {"id": f"doc{i:03d}", "text": text if i % 7 else "too short", "url": f"http://e.com/{i}"}
        )
    return records


def read_part(output, part):
    folder = output / part
    rows = []
    for name in sorted(os.listdir(folder)):
        rows.extend(pq.read_table(folder / name).to_pylist())
    return rows


def shard_hashes(manifest):
    return {s["file"]: s["sha256"] for s in manifest["shards"]}


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """corpus() through STAGES in one in-memory worker, run once for this module: the parts and
    manifest test checks it, and it is the 1-worker side of the worker-count test, the earlier
    output of the rerun test (a copy) and the reference of the portable-runner test."""
    folder = tmp_path_factory.mktemp("shared-run")
    data = write_jsonl(folder / "in.jsonl", corpus())
    recipe = write_recipe(folder / "r.toml", [str(data)], STAGES)
    result = run_recipe(load_recipe(recipe), str(folder / "out"), IN_PROCESS)
    return SimpleNamespace(recipe=recipe, out=folder / "out", manifest=result.manifest)


def test_run_writes_three_parts_and_a_conserving_manifest(shared_run):
    out = shared_run.out
    manifest = json.loads((out / "manifest.json").read_text())
    kept, rejected = read_part(out, "kept"), read_part(out, "rejected")
    assert manifest == shared_run.manifest
    assert manifest["counts"] == {"input": 60, "kept": len(kept), "rejected": len(rejected), "failed": 0}
    assert manifest["conservation"] is True
    assert sorted(os.listdir(out / "kept")) == ["part-00000-of-00002.parquet", "part-00001-of-00002.parquet"]
    reasons = {(r["stage"], r["reason"]) for r in rejected}
    assert reasons == {("length", "too_few_words"), ("exact_dedup", "exact_duplicate")}
    duplicates = [r for r in rejected if r["reason"] == "exact_duplicate"]
    assert all(r["duplicate_of"] == "doc000" or r["duplicate_of"] == "doc005" for r in duplicates)
    assert set(kept[0]) == {
        "id",
        "text",
        "source",
        "url",
        "language",
        "language_score",
        "scores",
        "kind",
        "metadata",
        "n_tokens",
    }
    stages = {s["name"]: s for s in manifest["stages"]}
    assert stages["length"]["in"] == 60 and stages["length"]["rejected"] == {"too_few_words": 9}
    assert stages["exact_dedup"]["kept"] == len(kept)
    for shard in manifest["shards"]:
        assert os.path.getsize(out / shard["file"]) == shard["bytes"]
    assert (out / "report.html").read_text().startswith("<!doctype html>")
    assert not [name for name in os.listdir(out) if name.startswith(".staging")]


def test_a_second_run_into_a_folder_in_use_stops_without_touching_it(tmp_path, shared_run):
    out = tmp_path / "out"
    live_staging = out / ".staging-livebeef0000"  # what the first run is writing
    live_staging.mkdir(parents=True)
    holder = subprocess.Popen(  # another process runs into `out`: it holds the folder until stdin closes
        [
            sys.executable,
            "-c",
            f"from pipeline.output_folder import exclusive\nwith exclusive({str(out)!r}):\n"
            "    print('held', flush=True)\n    input()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(
            OutputInUse, match=rf"another gristmill run \(pid {holder.pid}\) is using this folder"
        ):
            run_recipe(load_recipe(shared_run.recipe), str(out), IN_PROCESS)
        assert live_staging.is_dir() and not (out / "manifest.json").exists()
    finally:
        holder.communicate("\n", timeout=30)
    result = run_recipe(load_recipe(shared_run.recipe), str(out), IN_PROCESS)
    assert shard_hashes(result.manifest) == shard_hashes(shared_run.manifest)
    assert not (out / LOCK_FILE).exists() and not live_staging.exists()  # stale once nobody holds it


def test_an_output_folder_deleted_during_the_run_leaves_the_runs_own_error(tmp_path):
    """Releasing the lock raised FileNotFoundError instead, hiding why the run stopped."""
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="the run's own error"), exclusive(str(out)):
        shutil.rmtree(out)
        raise RuntimeError("the run's own error")


def test_a_run_lists_its_inputs_by_glob_and_asks_nothing_per_file(tmp_path, monkeypatch):
    """Sizes and dates come with the glob's listing. A request per file, three times per run
    (progress, splits, checkpoints), made a 200-file run on a local S3 server take 168 s, not 24;
    the CLI's input check and the run listed each glob once each. The run lists it once more at its
    end, to name input files that changed meanwhile (manifest `inputs_changed`)."""
    from pipeline import fileio
    from pipeline.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):
        write_jsonl(folder / f"part{i}.jsonl", corpus()[i::3])
    glob = str(folder / "*.jsonl")
    listed, sized = [], []
    listing, size = fileio.listing, fileio.size
    monkeypatch.setattr(fileio, "listing", lambda pattern: listed.append(pattern) or listing(pattern))
    monkeypatch.setattr(fileio, "size", lambda path: sized.append(path) or size(path))
    recipe = write_recipe(tmp_path / "r.toml", [glob], STAGES)
    assert main(["run", "--recipe", str(recipe), "--output", str(tmp_path / "out"), *IN_PROCESS]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"]["input"] == 60 and manifest["checkpoints"]
    assert listed.count(glob) == 2 and manifest["inputs_changed"] == []
    assert not [path for path in sized if path.startswith(str(folder))]


def test_a_given_spill_dir_is_left_as_it_was_found(tmp_path, shared_run):
    """The dedup stages delete their spill files but not their folders: every run left one empty
    folder per stage under --spill_dir."""
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "theirs.txt").write_text("not ours")
    result = run_recipe(
        load_recipe(shared_run.recipe), str(tmp_path / "out"), [*IN_PROCESS, f"--spill_dir={spill}"]
    )
    assert shard_hashes(result.manifest) == shard_hashes(shared_run.manifest)
    assert os.listdir(spill) == ["theirs.txt"]


def test_a_run_whose_graph_fails_to_build_leaves_no_beam_temp_folder(tmp_path, monkeypatch):
    """Beam deletes a pipeline's local temp folder when it runs; a run that failed while building
    the graph left an empty `beam-pipeline-temp*` folder in the system temp folder."""
    from pipeline import run

    built = []

    def failing_build(pipeline, *args):
        built.append(pipeline)
        raise RuntimeError("graph failed")

    monkeypatch.setattr(run, "build_pipeline", failing_build)
    recipe = write_recipe(tmp_path / "r.toml", [str(write_jsonl(tmp_path / "in.jsonl", corpus(3)))], STAGES)
    with pytest.raises(RuntimeError, match="graph failed"):
        run_recipe(load_recipe(str(recipe)), str(tmp_path / "out"), IN_PROCESS)
    assert built and not os.path.exists(built[0].local_tempdir)


def test_rerun_replaces_previous_output(tmp_path, shared_run):
    out = tmp_path / "out"
    shutil.copytree(shared_run.out, out)  # a finished run's output folder
    (out / "kept" / "stale-file.parquet").write_text("old")
    small = write_jsonl(tmp_path / "small.jsonl", corpus()[:3])
    result = run_recipe(
        load_recipe(write_recipe(tmp_path / "r2.toml", [str(small)], STAGES)), str(out), IN_PROCESS
    )
    assert "stale-file.parquet" not in os.listdir(out / "kept")
    assert result.manifest["counts"]["input"] == 3


def test_a_report_that_fails_leaves_the_previous_output_whole(tmp_path, shared_run, monkeypatch):
    """The report was written after the previous shards were deleted and the new ones moved in,
    before the manifest: a report that failed left a folder of new shards, no manifest."""
    from pipeline import report

    out = tmp_path / "out"
    shutil.copytree(shared_run.out, out)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}

    def failing_report(manifest, directory):
        raise OverflowError("report failed")

    monkeypatch.setattr(report, "render_report", failing_report)
    small = write_jsonl(tmp_path / "small.jsonl", corpus()[:3])
    with pytest.raises(OverflowError, match="report failed"):
        run_recipe(
            load_recipe(write_recipe(tmp_path / "r2.toml", [str(small)], STAGES)), str(out), IN_PROCESS
        )
    after = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert {path: data for path, data in after.items() if ".gristmill-work" not in path.parts} == before


def test_a_folder_gristmill_did_not_write_is_not_replaced(tmp_path, shared_run):
    """A run replaced `kept/`, `rejected/`, `failed/`, the manifest, report and README of any folder."""
    recipe = load_recipe(shared_run.recipe)
    theirs = tmp_path / "theirs"
    (theirs / "kept").mkdir(parents=True)
    (theirs / "kept" / "important.txt").write_text("mine")
    (theirs / "README.md").write_text("my notes")
    with pytest.raises(OutputNotOurs, match=r"holds README.md, kept/, which a run replaces"):
        run_recipe(recipe, str(theirs), IN_PROCESS)
    assert (theirs / "kept" / "important.txt").read_text() == "mine"
    assert (theirs / "README.md").read_text() == "my notes"
    # A manifest.json of their own (a web app's) does not make the folder a gristmill output: it was
    # taken for an earlier version's, and the folder's kept/ and README.md were replaced.
    (theirs / "manifest.json").write_text('{"name": "my-app", "icons": []}')
    with pytest.raises(OutputNotOurs, match=r"holds manifest.json, README.md, kept/, which a run replaces"):
        run_recipe(recipe, str(theirs), IN_PROCESS)
    assert (theirs / "kept" / "important.txt").read_text() == "mine"
    # Other files do not stop a run and are left alone; an earlier version's output (a manifest,
    # no marker) is replaced as before.
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("kept")
    run_recipe(recipe, str(shared), IN_PROCESS)
    (shared / OUTPUT_MARKER).unlink()
    result = run_recipe(recipe, str(shared), IN_PROCESS)
    assert shard_hashes(result.manifest) == shard_hashes(shared_run.manifest)
    assert (shared / "notes.txt").read_text() == "kept" and (shared / OUTPUT_MARKER).exists()


def test_input_files_the_run_would_replace_are_refused(tmp_path, shared_run):
    """A glob over a folder that holds the output read the last run's shards, then replaced them."""
    out = tmp_path / "data" / "out"
    shutil.copytree(shared_run.out, out)
    recipe = load_recipe(
        write_recipe(tmp_path / "r.toml", [str(tmp_path / "data" / "**" / "*.parquet")], STAGES)
    )
    with pytest.raises(
        InputInsideOutput, match=r"failed/part-00000-of-00002.parquet and 5 more: input inside"
    ):
        run_recipe(recipe, str(out), IN_PROCESS)
    assert shard_hashes(json.loads((out / "manifest.json").read_text())) == shard_hashes(shared_run.manifest)
    kept_back = load_recipe(write_recipe(tmp_path / "k.toml", [str(out / "kept" / "*.parquet")], STAGES))
    assert run_recipe(kept_back, str(tmp_path / "again"), IN_PROCESS).manifest["conservation"]
    # a folder whose name only starts like a part's is the user's (`kept_2023/` was refused)
    (out / "kept_2023").mkdir()
    write_jsonl(out / "kept_2023" / "a.jsonl", corpus(3))
    beside = load_recipe(write_recipe(tmp_path / "b.toml", [str(out / "kept_2023" / "*.jsonl")], STAGES))
    assert run_recipe(beside, str(out), IN_PROCESS).manifest["counts"]["input"] == 3


def test_failure_budget_fails_the_run_after_writing_everything(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", [*corpus(10), "{broken", "{also broken"])
    path = write_recipe(tmp_path / "r.toml", [str(data)], STAGES)
    path.write_text(path.read_text().replace("max_failed_fraction = 1.0", "max_failed_fraction = 0.1"))
    recipe = load_recipe(path)
    with pytest.raises(RunFailed, match="max_failed_fraction"):
        run_recipe(recipe, str(tmp_path / "out"), IN_PROCESS)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"]["failed"] == 2 and manifest["conservation"] is True
    assert len(read_part(tmp_path / "out", "failed")) == 2


def test_bad_inputs_become_failures_and_the_rest_is_processed(tmp_path):
    folder = write_bad_inputs(tmp_path / "in", corpus(10))
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [str(folder / "*")], STAGES))
    manifest = run_recipe(recipe, str(tmp_path / "out"), IN_PROCESS).manifest
    failed = read_part(tmp_path / "out", "failed")
    errors = sorted(f["error"] for f in failed)
    assert {"InvalidUtf8", "MalformedJson", "MissingText", "LoneSurrogate"} <= set(errors)
    assert any(f["source"].endswith("cut.jsonl.gz") for f in failed)
    counts = manifest["counts"]
    assert counts["input"] == counts["kept"] + counts["rejected"] + counts["failed"]
    assert counts["kept"] > 0


def test_target_shard_mb_derives_the_shard_count(tmp_path):
    records = [{"id": f"d{i}", "text": LONG_TEXT + f" n{i}"} for i in range(300)]
    data = write_jsonl(tmp_path / "in.jsonl", records)
    path = write_recipe(tmp_path / "r.toml", [str(data)], STAGES)
    path.write_text(path.read_text().replace("shards = 2", "target_shard_mb = 0.05"))
    manifest = run_recipe(load_recipe(path), str(tmp_path / "out"), IN_PROCESS).manifest
    kept_shards = [s for s in manifest["shards"] if s["kind"] == "kept"]
    assert len(kept_shards) > 2 and sum(s["rows"] for s in kept_shards) == 300


def test_same_output_whatever_the_worker_count_and_input_order(tmp_path, shared_run):
    shuffled = corpus()
    random.Random(3).shuffle(shuffled)
    folder = tmp_path / "shuffled"
    folder.mkdir()
    write_jsonl(folder / "in.jsonl", shuffled)
    one, o1 = shared_run, shared_run.out  # 1 worker, in memory
    two = run_recipe(
        load_recipe(write_recipe(tmp_path / "r2.toml", [str(folder / "in.jsonl")], STAGES)),
        str(tmp_path / "o2"),
        ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    )
    kept_one = {r["id"]: r["text"] for r in read_part(o1, "kept")}
    kept_two = {r["id"]: r["text"] for r in read_part(tmp_path / "o2", "kept")}
    assert kept_one == kept_two
    assert two.manifest["counts"] == one.manifest["counts"]
    dups_one = {(r["id"], r["duplicate_of"]) for r in read_part(o1, "rejected")}
    dups_two = {(r["id"], r["duplicate_of"]) for r in read_part(tmp_path / "o2", "rejected")}
    assert dups_one == dups_two
    # same source path too → byte-identical shards
    same = run_recipe(
        load_recipe(shared_run.recipe),
        str(tmp_path / "o3"),
        ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    )
    assert shard_hashes(same.manifest) == shard_hashes(one.manifest)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def job_service(tmp_path):
    """Beam's local job service (through `pipeline.job_service`) on loopback, for the PortableRunner."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.job_service", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "job_service.log", "w"),
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("local job service did not start")
    yield f"localhost:{port}"
    process.terminate()
    process.wait(timeout=20)


def test_portable_runner_gives_the_same_output_as_the_default_runner(tmp_path, job_service, shared_run):
    """Against the local runner's in-memory run; the worker-count test shows that run byte-identical
    to the local runner with worker processes (the default without flags)."""
    default = shared_run
    portable = run_recipe(
        load_recipe(shared_run.recipe),
        str(tmp_path / "portable"),
        ["--runner=PortableRunner", f"--job_endpoint={job_service}", "--environment_type=LOOPBACK"],
    )
    assert portable.manifest["counts"] == default.manifest["counts"]
    assert shard_hashes(portable.manifest) == shard_hashes(default.manifest)


def test_beam_timed_flush_stream_drops_bytes_written_during_a_flush():
    """Why the local runner turns Beam's timed data flush off (see `pipeline.beam_fixes`).

    The periodic flusher sends the buffer and then clears it; bytes written while its send is
    blocked (a full queue, in the runner) are cleared unsent. Made deterministic with events.
    """
    import threading

    from apache_beam.runners.worker.data_plane import ClosableOutputStream

    in_flush, written = threading.Event(), threading.Event()
    received: list[bytes] = []

    def send(data: bytes) -> None:  # the flusher thread blocks here until the writer has written
        if data and not in_flush.is_set():
            in_flush.set()
            assert written.wait(5)
        received.append(data)

    stream = ClosableOutputStream.create(received.append, send, data_buffer_time_limit_ms=5)
    stream.write(b"first ")
    assert in_flush.wait(5)
    stream.write(b"second")  # lands in the buffer the flusher is about to clear
    written.set()
    time.sleep(0.05)
    stream.close()
    assert b"".join(received) == b"first "  # "second" is lost

    received.clear()
    stream = ClosableOutputStream.create(received.append, received.append, data_buffer_time_limit_ms=0)
    stream.write(b"first ")
    stream.write(b"second")
    stream.close()
    assert b"".join(received) == b"first second"


def test_an_object_store_output_spills_on_local_disk_when_the_runner_is_local(tmp_path, monkeypatch):
    """Each spill file on an object store costs several requests (356 s against 13-15 s for
    500 documents on a local S3 server); the local runner's workers share this machine's disk."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    local = pipeline_options([])
    assert spill_root(local, "s3://bucket/out") == str(tmp_path)
    assert spill_root(local, str(tmp_path / "out")) is None  # the staging folder, on the same disk
    assert spill_root(pipeline_options(["--spill_dir", "s3://b/spill"]), "s3://bucket/out") == "s3://b/spill"
    cluster = pipeline_options(["--runner", "DataflowRunner"])  # workers on other machines
    assert spill_root(cluster, "gs://bucket/out") is None


def test_a_temporary_folder_that_cannot_be_deleted_is_a_warning_not_the_runs_error(
    tmp_path, monkeypatch, caplog
):
    """Before, the staging folder's delete on an object store gone away raised from the run's
    `finally`, hiding the run's own error behind a traceback."""
    from pipeline import fileio, run

    def delete_tree(folder):
        if folder.endswith("gone"):
            raise OSError("Max retries exceeded")
        shutil.rmtree(folder)

    (tmp_path / "spill").mkdir()
    monkeypatch.setattr(fileio, "delete_tree", delete_tree)
    run._remove_temporary([str(tmp_path / "gone"), None, str(tmp_path / "spill")])
    assert not (tmp_path / "spill").exists()
    assert f"could not delete {tmp_path / 'gone'}: Max retries exceeded" in caplog.text
