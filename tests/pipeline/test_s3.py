"""A recipe reading from and publishing to S3: a real S3-compatible server (moto_server) on loopback."""

import gzip
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.io.filesystems import FileSystems

from pipeline import fileio, s3_objects
from pipeline.checkpoints import CheckpointSettings
from pipeline.dataset import GristmillDataset, OutputStream
from pipeline.preflight import UsageError, check_inputs
from pipeline.readers import InputConfig
from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe
from tests.pipeline.conftest import BUCKET
from tests.pipeline.test_dataset import write_output
from tests.pipeline.test_run import STAGES, _free_port, corpus, read_part

boto3 = pytest.importorskip("boto3")


def _objects(client, prefix: str) -> list[str]:
    listing = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(item["Key"] for item in listing.get("Contents", []))


def _rows(client, prefix: str) -> list[dict]:
    rows = []
    for key in _objects(client, prefix):
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        rows.extend(pq.read_table(io.BytesIO(body)).to_pylist())
    return rows


def test_recipe_reads_and_publishes_on_s3_like_a_local_run(tmp_path, s3_server):
    client, s3_options = s3_server
    # Options another command gave this process (`inspect --s3_region_name=...`): the run's report
    # read its S3 shards with them, without keys or endpoint, once inspect read S3 its own way.
    fileio.use_options(["--s3_region_name=eu-west-1"])
    # 15 + 9 records: both rejection reasons, duplicates within and across files (the local
    # runner spills on local disk even into S3: `run.spill_root`)
    local_input = write_jsonl(tmp_path / "in.jsonl", corpus(15))
    more = [{**record, "id": f"more{i}"} for i, record in enumerate(corpus(9))]
    compressed = tmp_path / "more.jsonl.gz"
    compressed.write_bytes(gzip.compress(write_jsonl(tmp_path / "more.jsonl", more).read_bytes()))
    client.upload_file(str(local_input), BUCKET, "input/in.jsonl")
    client.upload_file(str(compressed), BUCKET, "input/more/more.jsonl.gz")
    local = run_recipe(
        load_recipe(write_recipe(tmp_path / "local.toml", [str(local_input), str(compressed)], STAGES)),
        str(tmp_path / "out"),
        IN_PROCESS,
    )
    # `*` stays within a folder, `**` crosses folders, as in Beam's FileSystems.match
    recipe = load_recipe(write_recipe(tmp_path / "s3.toml", [f"s3://{BUCKET}/input/**.jsonl*"], STAGES))
    remote = run_recipe(recipe, f"s3://{BUCKET}/out", [*IN_PROCESS, *s3_options])

    keys = _objects(client, "out/")
    assert "out/manifest.json" in keys and "out/report.html" in keys
    assert not [k for k in keys if ".staging-" in k]  # staging removed after publishing
    manifest = json.loads(client.get_object(Bucket=BUCKET, Key="out/manifest.json")["Body"].read())
    assert manifest == remote.manifest
    assert manifest["counts"] == local.manifest["counts"] and manifest["conservation"] is True
    # the credentials were published in the manifest, as given
    assert "--s3_secret_access_key=***" in manifest["beam_args"] and "testing" not in json.dumps(manifest)
    assert {f"out/{s['file']}" for s in manifest["shards"]} == {k for k in keys if k.endswith(".parquet")}
    kept = {(r["id"], r["text"]) for r in _rows(client, "out/kept/")}
    assert kept == {(r["id"], r["text"]) for r in read_part(tmp_path / "out", "kept")}
    rejected = {(r["id"], r["reason"], r["duplicate_of"]) for r in _rows(client, "out/rejected/")}
    assert rejected == {
        (r["id"], r["reason"], r["duplicate_of"]) for r in read_part(tmp_path / "out", "rejected")
    }
    assert all(r["source"].startswith(f"s3://{BUCKET}/input/") for r in _rows(client, "out/kept/"))
    # The trainer's reader streams the published output straight from S3, page CRCs checked, in a
    # process that has not set Beam's filesystem options (Beam's S3 filesystem then failed every
    # call), and again in a worker that holds none (a DataLoader worker started by `spawn`).
    fileio.set_options(None)
    dataset = GristmillDataset(f"s3://{BUCKET}/out", seed=3, filesystem_options=s3_options)
    fileio.set_options(None)
    streamed = [(r["id"], r["text"]) for r in dataset]
    assert sorted(streamed) == sorted(kept) and len(streamed) == len(kept)
    assert [(r["id"], r["text"]) for r in OutputStream(dataset.units, seed=3)] == streamed

    # A rerun into the same prefix replaces the previous output (no stale shard left behind).
    smaller = load_recipe(write_recipe(tmp_path / "s3b.toml", [f"s3://{BUCKET}/input/in.jsonl"], STAGES))
    # (its scratch spill files on local disk: the run above already spilled through S3, at about
    # one moto request per second)
    local_spill = f"--spill_dir={tmp_path / 'spill'}"
    rerun = run_recipe(smaller, f"s3://{BUCKET}/out", [*IN_PROCESS, *s3_options, local_spill])
    parquet = [k for k in _objects(client, "out/") if k.endswith(".parquet")]
    assert sorted(parquet) == sorted(f"out/{s['file']}" for s in rerun.manifest["shards"])
    assert rerun.manifest["counts"]["input"] == 15


def test_the_trainer_reader_reads_row_groups_on_s3_through_one_client_per_process(
    tmp_path, s3_server, monkeypatch
):
    """Each row group was opened through Beam's S3 filesystem, which makes a boto3 client per open
    (64 small row groups on this server: 11.4 s against 1.1 s now)."""
    client, s3_options = s3_server
    local = write_output(tmp_path / "out")  # 3 shards of tiny row groups, a manifest without row_groups
    for path in Path(local).rglob("*"):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"reader/{path.relative_to(local)}")
    made, beam_opened = [], []
    make_client, beam_open = s3_objects.new_client, FileSystems.open
    monkeypatch.setattr(fileio, "_s3_client", (0, None, None))  # none made by an earlier test
    monkeypatch.setattr(s3_objects, "new_client", lambda *args: made.append(args) or make_client(*args))
    monkeypatch.setattr(
        FileSystems, "open", lambda path, **kw: beam_opened.append(path) or beam_open(path, **kw)
    )
    dataset = GristmillDataset(f"s3://{BUCKET}/reader", seed=4, filesystem_options=s3_options)
    streamed = [r["id"] for r in dataset]
    assert streamed == [r["id"] for r in GristmillDataset(local, seed=4)] and len(dataset.units) > 10
    assert [path for path in beam_opened if path.startswith("s3://")] == []
    assert len(made) == 2  # the reachability check's, and one for the footers and the row groups


def test_a_worker_reads_its_s3_inputs_through_one_client_with_the_run_s_options(
    tmp_path, s3_server, monkeypatch
):
    """A worker's Beam filesystems hold the run's options, and Beam's S3 filesystem makes a boto3
    client for every open (~0.12 CPU-s, more than a small object's whole read: 200 one-document
    objects took 46.5 CPU-s, now 13.3): the read step gives the one-client reader the run's options."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.read_phase import ReadPhaseFn
    from pipeline.readers import InputConfig, Split

    client, s3_options = s3_server
    client.upload_file(str(write_jsonl(tmp_path / "a.jsonl", corpus(3))), BUCKET, "worker/a.jsonl")
    parquet = io.BytesIO()
    pq.write_table(pa.table({"id": ["p0", "p1"], "text": [LONG_TEXT, LONG_TEXT]}), parquet)
    client.put_object(Bucket=BUCKET, Key="worker/b.parquet", Body=parquet.getvalue())
    paths = [
        f"s3://{BUCKET}/worker/a.jsonl",
        f"s3://{BUCKET}/worker/b.parquet",
        f"s3://{BUCKET}/worker/gone.jsonl",
    ]

    options = PipelineOptions(s3_options)
    FileSystems.set_options(options)  # a worker as it starts: Beam's filesystems have the options,
    monkeypatch.setattr(fileio, "_given_s3_settings", None)  # gristmill's reader none
    monkeypatch.setattr(fileio, "_s3_client", (0, None, None))
    made, beam_opened = [], []
    make_client, beam_open = s3_objects.new_client, FileSystems.open
    monkeypatch.setattr(s3_objects, "new_client", lambda *args: made.append(args) or make_client(*args))
    monkeypatch.setattr(
        FileSystems, "open", lambda path, **kw: beam_opened.append(path) or beam_open(path, **kw)
    )
    read = ReadPhaseFn([], InputConfig(tuple(paths)), 64, None, {}, None, options, verifies_candidates=False)
    read.setup()
    records = [record for path in paths for _, record in read.process(("unit", Split(path)))]

    assert [record.id for record in records] == ["doc000", "doc001", "doc002", "p0", "p1", paths[2]]
    assert (
        records[-1].error == "FileNotFoundError"
        and records[-1].message == f"[Errno 2] no such object: '{paths[2]}'"
    )
    assert beam_opened == [] and len(made) == 1


def test_an_s3_glob_matching_nothing_is_an_input_error(tmp_path, s3_server):
    client, s3_options = s3_server
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [f"s3://{BUCKET}/nothing/*.jsonl"], STAGES))
    with pytest.raises(ValueError, match=f"s3://{BUCKET}/nothing/\\*.jsonl: no input file matches"):
        run_recipe(recipe, f"s3://{BUCKET}/emptyout", [*IN_PROCESS, *s3_options])
    assert _objects(client, "emptyout") == []
    client.put_object(Bucket=BUCKET, Key="crawl/part-0.jsonl", Body=b'{"text": "a"}\n')
    with pytest.raises(ValueError, match=f"s3://{BUCKET}/crawl: is a folder; give a glob of its files"):
        check_inputs(InputConfig((f"s3://{BUCKET}/crawl",)))  # said "no input file matches"


def test_the_cli_runs_against_s3_and_exits_2_on_a_missing_input(tmp_path, s3_server, monkeypatch, capsys):
    client, s3_options = s3_server
    data = write_jsonl(tmp_path / "in.jsonl", corpus(20))
    client.upload_file(str(data), BUCKET, "cli/in.jsonl")
    recipe = write_recipe(tmp_path / "r.toml", [f"s3://{BUCKET}/cli/*.jsonl"], STAGES)
    spill = f"--spill_dir={tmp_path / 'spill'}"  # scratch on local disk: the test above spills through S3
    cli = [sys.executable, "-m", "pipeline.cli", "run", "--recipe", str(recipe)]
    base = [*cli, *IN_PROCESS, *s3_options, spill]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [*base, "--output", f"s3://{BUCKET}/cliout"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "read 20" in done.stdout
    missing = subprocess.run(
        [*base, "--input", f"s3://{BUCKET}/none/*.jsonl", "--output", f"s3://{BUCKET}/x"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert missing.returncode == 2 and "none/*.jsonl: no input file matches" in missing.stderr
    # `inspect` and `report` read (and write) an output on S3 with the same options: without
    # them Beam's S3 filesystem failed their first call with a traceback.
    for command, shown in (("inspect", "read 20"), ("report", f"s3://{BUCKET}/cliout/report.html")):
        done = subprocess.run(
            [sys.executable, "-m", "pipeline.cli", command, f"s3://{BUCKET}/cliout", *s3_options],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0 and shown in done.stdout, done.stderr[-3000:]
    # ... reading the shards through one S3 client, not Beam's (64 shards: 21 s before, 4 s after)
    from pipeline.cli import main

    opened, beam_open = [], FileSystems.open
    monkeypatch.setattr(FileSystems, "open", lambda path, **kw: opened.append(path) or beam_open(path, **kw))
    assert main(["inspect", f"s3://{BUCKET}/cliout", *s3_options]) == 0
    assert "read 20" in capsys.readouterr().out
    assert opened == []  # not even the manifest


def test_checkpoints_in_an_s3_work_dir_are_written_reused_and_deleted(tmp_path, s3_server):
    """`--checkpoints=on --work-dir s3://...`: a unit with nothing removed made an empty checkpoint
    file, and Beam's S3 writer cannot complete an upload of no bytes, so every such run failed."""
    client, s3_options = s3_server
    long_enough = [{"id": str(i), "text": f"{LONG_TEXT} {i % 7}"} for i in range(20)]  # no length rejection
    data = write_jsonl(tmp_path / "in.jsonl", long_enough)
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [str(data)], STAGES))
    beam_args = [*IN_PROCESS, *s3_options, f"--spill_dir={tmp_path / 'spill'}"]
    work = f"s3://{BUCKET}/checkpoints"
    first = run_recipe(
        recipe, str(tmp_path / "first"), beam_args, checkpoints=CheckpointSettings("on", work, keep_work=True)
    )
    assert _objects(client, "checkpoints/")  # kept for the next run
    again = run_recipe(recipe, str(tmp_path / "again"), beam_args, checkpoints=CheckpointSettings("on", work))
    assert again.manifest["checkpoints"]["units_reused"] == first.manifest["checkpoints"]["units"] > 0
    assert again.manifest["counts"] == first.manifest["counts"]
    assert sorted(s["sha256"] for s in again.manifest["shards"]) == sorted(
        s["sha256"] for s in first.manifest["shards"]
    )
    assert _objects(client, "checkpoints/") == []  # deleted after the successful run


def test_fileio_deletes_and_sizes_objects_on_s3(s3_server):
    client, s3_options = s3_server
    fileio.use_options(s3_options)
    base = f"s3://{BUCKET}/fileio"
    fileio.write_bytes(f"{base}/a.bin", b"abc")
    fileio.write_bytes(f"{base}/sub/b.bin", b"de")
    fileio.write_bytes(f"{base}-sibling/c.bin", b"x")
    assert fileio.size(f"{base}/a.bin") == 3
    with pytest.raises(FileNotFoundError):
        fileio.size(f"{base}/missing.bin")

    fileio.delete([f"{base}/a.bin", f"{base}/missing.bin"])  # one batch; the missing one is fine
    assert _objects(client, "fileio") == ["fileio-sibling/c.bin", "fileio/sub/b.bin"]
    fileio.delete([f"{base}/missing.bin"])

    fileio.delete_tree(base)  # everything under fileio/, not the sibling prefix fileio-sibling/
    assert _objects(client, "fileio") == ["fileio-sibling/c.bin"]
    fileio.delete_tree(base)  # an empty prefix is fine too


def test_an_s3_glob_lists_no_folder_marker_and_refuses_an_earlier_outputs_own_files(tmp_path, s3_server):
    """A zero-byte `sub/` key (an S3 console's folder) was listed as a file whose format is
    unknown; an earlier output's manifest on S3 was read as input (only local ones were refused)."""
    client, s3_options = s3_server
    fileio.use_options(s3_options)
    base = f"s3://{BUCKET}/layout"
    for key in ("data/a.jsonl", "data/sub/b.jsonl", "out/.gristmill-output", "out/manifest.json"):
        fileio.write_bytes(f"{base}/{key}", b'{"text": "some text"}\n')
    fileio.write_bytes(f"{base}/data/sub/", b"")
    fileio.write_bytes(f"{base}/out/kept/part-00000-of-00001.jsonl", b'{"text": "kept text"}\n')
    assert list(fileio.listing(f"{base}/data/**")) == [f"{base}/data/a.jsonl", f"{base}/data/sub/b.jsonl"]
    with pytest.raises(
        UsageError, match=f"{base}/out/.gristmill-output: --input matches the files of an earlier"
    ):
        check_inputs(InputConfig((f"{base}/out/**",), format="jsonl"))
    notes = []
    assert list(check_inputs(InputConfig((f"{base}/out/kept/*",)), notes)) == [
        f"{base}/out/kept/part-00000-of-00001.jsonl"
    ]
    assert notes == [
        f"gristmill: note: 1 input files are shards of an earlier gristmill output ({base}/out: kept/, "
        "rejected/, failed/); they are read as input like any other file"
    ]


def test_s3_files_are_written_through_one_client_whole_or_not_at_all(s3_server, monkeypatch):
    """Beam's S3 filesystem made a client and a multipart upload for every file (500 documents
    spilled on S3: 275 s, 470 CPU-s and 7.7 GB before, 22 s, 19 CPU-s and 0.3 GB now), and a
    client for every move. Only a closed file is published."""
    client, s3_options = s3_server
    fileio.use_options(s3_options)
    beam_created, beam_create = [], FileSystems.create
    monkeypatch.setattr(
        FileSystems, "create", lambda path, **kw: beam_created.append(path) or beam_create(path, **kw)
    )
    base = f"s3://{BUCKET}/upload"
    fileio.write_bytes(f"{base}/small.bin", b"abc")  # one PUT
    large = bytes(range(256)) * (21 * 1024)  # 5.25 MiB: two parts
    with fileio.create(f"{base}/large.bin") as handle:
        for start in range(0, len(large), 1 << 19):
            handle.write(large[start : start + (1 << 19)])
    with pytest.raises(RuntimeError), fileio.create(f"{base}/broken.bin") as handle:
        handle.write(large)  # a part sent, then the writer fails: the upload is aborted
        raise RuntimeError("the writer failed")
    with pytest.raises(ValueError, match="after close"), fileio.create(f"{base}/closed.bin") as handle:
        handle.write(large)
        handle.close()  # published; the error after it is the one raised, not a failed abort
        raise ValueError("an error after close")
    dropped = fileio.create(f"{base}/dropped.bin")  # never closed (a failed bundle's spill file):
    dropped.write(b"partial")  # discarded, where io's finalizer used to publish it
    del dropped

    assert fileio.read_bytes(f"{base}/small.bin") == b"abc"
    assert fileio.read_bytes(f"{base}/large.bin") == fileio.read_bytes(f"{base}/closed.bin") == large
    assert _objects(client, "upload/") == ["upload/closed.bin", "upload/large.bin", "upload/small.bin"]
    assert client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
    monkeypatch.setattr(FileSystems, "rename", None)  # publishing moves shards through the client too
    fileio.move(f"{base}/small.bin", f"{base}/published/small.bin")
    assert _objects(client, "upload/") == [
        "upload/closed.bin",
        "upload/large.bin",
        "upload/published/small.bin",
    ]
    assert beam_created == []


def test_progress_tallies_on_s3_are_replaced_whole_and_read_back(s3_server):
    from pipeline.progress import Channel, Tally

    client, s3_options = s3_server
    fileio.use_options(s3_options)
    channel = Channel(f"s3://{BUCKET}/progress", ["length"])
    first, second = Tally(channel.directory), Tally(channel.directory)
    first.add("read", 3)
    first.flush()
    second.add("read", 2)
    second.flush()
    first.add("read", 4)
    first.flush()  # replaces the first tally's file
    assert channel.read() == {"read": 9}
    assert len(_objects(client, "progress/")) == 2  # one file per tally, no temporary left


def test_an_unreachable_endpoint_or_a_missing_bucket_is_one_line_before_the_run(tmp_path, capsys, s3_server):
    """Beam retries an endpoint that does not answer for 5 to 10 minutes, a traceback each time."""
    from pipeline.cli import main

    _, s3_options = s3_server
    recipe = write_recipe(tmp_path / "r.toml", [f"s3://{BUCKET}/cli/*.jsonl"], STAGES)
    closed = f"--s3_endpoint_url=http://127.0.0.1:{_free_port()}"  # nothing listens there
    run = ["run", "--recipe", str(recipe), *IN_PROCESS]
    started = time.monotonic()
    assert main([*run, *s3_options, closed, "--output", str(tmp_path / "o")]) == 2
    assert time.monotonic() - started < 60
    err = capsys.readouterr().err
    assert f"--input s3://{BUCKET}/cli/*.jsonl: Could not connect to the endpoint URL" in err
    assert "check --s3_endpoint_url" in err and "Traceback" not in err
    assert main([*run, *s3_options, "--output", "s3://no-such-bucket/out"]) == 2
    assert (
        "--output s3://no-such-bucket/out: the bucket 'no-such-bucket' does not exist"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "o").exists()
    # An HTTP server that is no S3 store (a web console's port) said "refused to list it (: )".
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotS3(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>console</html>")

        def log_message(self, *args) -> None:
            pass

    web = ThreadingHTTPServer(("127.0.0.1", 0), NotS3)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        console = f"--s3_endpoint_url=http://127.0.0.1:{web.server_address[1]}"
        assert main([*run, *s3_options, console, "--output", str(tmp_path / "o")]) == 2
    finally:
        web.shutdown()
        web.server_close()
    assert "answered HTTP 404 and no S3 error: it does not look like an S3 store" in capsys.readouterr().err
    assert main(["inspect", f"s3://{BUCKET}/cli", *s3_options, closed]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"gristmill: error: output folder s3://{BUCKET}/cli: Could not connect to the endpoint"
    )
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_validate_reads_the_scores_an_s3_input_carries_with_the_options_it_is_given(
    tmp_path, capsys, s3_server
):
    """`validate` knows the scores of gristmill output read back as input, as `run` does; on S3
    it could not read the file (no options: Beam's S3 filesystem fails), so a recipe that `run`
    accepts was refused."""
    from pipeline.cli import main

    client, s3_options = s3_server
    rows = {"id": ["a"], "text": ["t"], "language": ["en"], "language_score": [0.9], "metadata": ["{}"]}
    local = tmp_path / "part-0.parquet"
    pq.write_table(pa.table({**rows, "scores": pa.array([{"quality": 0.7}])}), local)
    client.upload_file(str(local), BUCKET, "scored/part-0.parquet")
    stages = '[[stage]]\nuse = "score_threshold"\nexpr = "quality >= 0.5"\n'
    recipe = write_recipe(tmp_path / "r.toml", [f"s3://{BUCKET}/scored/*.parquet"], stages)
    fileio.set_options(None)  # a fresh process: no earlier run set them
    assert main(["validate", str(recipe), *s3_options]) == 0, capsys.readouterr().err


def test_a_resumed_run_gives_its_workers_the_one_s3_client(tmp_path, s3_server, monkeypatch):
    """A run resumed after phase 0 has no read step to hand its workers the run's options: they
    restored the checkpoints and wrote the shards through Beam's S3 filesystem, a client per call.
    The restore step carries them now, as the read step does (for runners whose workers are not
    `pipeline.worker`, which has them from its start: test_worker.py)."""
    import apache_beam as beam

    _, s3_options = s3_server
    data = write_jsonl(tmp_path / "in.jsonl", corpus(20))
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [str(data)], STAGES))
    beam_args = [*IN_PROCESS, *s3_options, f"--spill_dir={tmp_path / 'spill'}"]
    work = f"s3://{BUCKET}/resumed-work"
    settings = CheckpointSettings("on", work, keep_work=True)
    first = run_recipe(recipe, str(tmp_path / "first"), beam_args, checkpoints=settings)
    run_pipeline = beam.Pipeline.run

    def as_in_fresh_workers(pipeline, *args, **kwargs):  # Beam's filesystems have the options there
        fileio.use_object_store_options(None)
        return run_pipeline(pipeline, *args, **kwargs)

    monkeypatch.setattr(beam.Pipeline, "run", as_in_fresh_workers)
    beam_opened, beam_created, beam_open, beam_create = [], [], FileSystems.open, FileSystems.create
    monkeypatch.setattr(
        FileSystems, "open", lambda path, **kw: beam_opened.append(path) or beam_open(path, **kw)
    )
    monkeypatch.setattr(
        FileSystems, "create", lambda path, **kw: beam_created.append(path) or beam_create(path, **kw)
    )
    again = run_recipe(
        recipe, f"s3://{BUCKET}/resumed-out", beam_args, checkpoints=CheckpointSettings("on", work)
    )
    assert again.manifest["checkpoints"]["units_reused"] == first.manifest["checkpoints"]["units"] > 0
    assert again.manifest["counts"] == first.manifest["counts"]
    assert [path for path in beam_opened + beam_created if path.startswith("s3://")] == []
