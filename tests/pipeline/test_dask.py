"""Runs on Beam's DaskRunner against a dask.distributed cluster: a scheduler and two workers started
as separate processes on loopback, compared with the default runner."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipeline.cli import QUIET_OFFLINE_ENVIRONMENT, main
from pipeline.recipe import load_recipe
from pipeline.run import build_pipeline, run_recipe
from pipeline.runners import DASK_RUNNER, dask_overrides
from tests.conftest import IN_PROCESS, write_bad_inputs, write_jsonl, write_recipe
from tests.pipeline.conftest import BUCKET
from tests.pipeline.test_run import STAGES, _free_port, corpus, read_part

pytest.importorskip("distributed")
pytest.importorskip("dask.bag")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """`dask scheduler` + two `dask worker` processes; workers import gristmill via PYTHONPATH."""
    logs = tmp_path_factory.mktemp("dask")
    port = _free_port()
    env = {**os.environ, **QUIET_OFFLINE_ENVIRONMENT, "PYTHONPATH": str(ROOT)}
    address = f"127.0.0.1:{port}"
    commands = [["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    commands += [
        [
            "worker",
            f"tcp://{address}",
            "--host",
            "127.0.0.1",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--name",
            f"w{i}",
        ]
        for i in (1, 2)
    ]
    processes = []
    for index, command in enumerate(commands):
        log = open(logs / f"{command[0]}{index}.log", "w")
        processes.append(
            subprocess.Popen([sys.executable, "-m", "dask", *command], env=env, stdout=log, stderr=log)
        )
        if index == 0:
            time.sleep(2)
    from distributed import Client

    try:
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _dask(address: str) -> list[str]:
    return ["--runner=DaskRunner", f"--dask_client_address={address}"]


DOCUMENT_STAGES = """
[[stage]]
use = "length"
min_words = 20

[[stage]]
use = "gopher_repetition"
"""


def _same_result(dask: Path, default: Path) -> None:
    """Same counts, kept ids and texts, and rejected rows (stage, reason, `duplicate_of`)."""
    for part, fields in {
        "kept": ("id", "text"),
        "rejected": ("id", "stage", "reason", "duplicate_of"),
    }.items():
        rows = sorted(tuple(r[f] for f in fields) for r in read_part(dask, part))
        assert rows == sorted(tuple(r[f] for f in fields) for r in read_part(default, part)), part


def test_dask_cluster_gives_the_same_result_as_the_default_runner(tmp_path, dask_cluster):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(60))
    recipe_path = write_recipe(tmp_path / "r.toml", [str(data)], DOCUMENT_STAGES)
    default = run_recipe(load_recipe(recipe_path), str(tmp_path / "default"), IN_PROCESS)
    dask = run_recipe(load_recipe(recipe_path), str(tmp_path / "dask"), _dask(dask_cluster))
    assert dask.manifest["counts"] == default.manifest["counts"] and dask.manifest["conservation"]
    _same_result(tmp_path / "dask", tmp_path / "default")
    # seeded shards: byte-identical whatever the runner
    assert {s["file"]: s["sha256"] for s in dask.manifest["shards"]} == {
        s["file"]: s["sha256"] for s in default.manifest["shards"]
    }


def _sample(**first: int) -> list[dict]:
    """The first `first[stage]` sample_data/ records each stage should remove (none with a known
    issue), with the originals of those that are duplicates."""
    records = [
        json.loads(line) for path in sorted((ROOT / "sample_data").glob("*.jsonl")) for line in path.open()
    ]
    chosen = [
        r
        for stage, count in first.items()
        for r in [r for r in records if r.get("expected") == stage and not r.get("known_issues")][:count]
    ]
    originals = {r["duplicate_of"] for r in chosen if r.get("duplicate_of")}
    return [r for r in records if r["id"] in originals] + chosen


def test_fineweb_minhash_on_dask_gives_the_same_result_as_the_default_runner(tmp_path, dask_cluster):
    """recipes/fineweb.toml (its filters, then MinHash dedup joined to spilled documents)."""
    data = write_jsonl(tmp_path / "in.jsonl", _sample(minhash_dedup=6))
    recipe = load_recipe(ROOT / "recipes" / "fineweb.toml", [str(data)])
    default = run_recipe(recipe, str(tmp_path / "default"), IN_PROCESS)
    dask = run_recipe(recipe, str(tmp_path / "dask"), _dask(dask_cluster))
    assert dask.manifest["counts"] == default.manifest["counts"] and dask.manifest["conservation"]
    _same_result(tmp_path / "dask", tmp_path / "default")
    removed = [r for r in read_part(tmp_path / "dask", "rejected") if r["stage"] == "minhash_dedup"]
    assert removed and all(r["duplicate_of"] for r in removed)


def test_default_recipe_on_dask_gives_the_same_result_as_the_default_runner(tmp_path, dask_cluster):
    """recipes/default.toml (model stages, a score threshold, exact, MinHash, unit and semantic
    dedup) on a small sample_data/ subset with duplicates for each dedup stage."""
    data = write_jsonl(
        tmp_path / "in.jsonl",
        _sample(exact_dedup=2, minhash_dedup=2, semantic_dedup=2, verify=2, kept=3, c4_quality=1),
    )
    recipe = load_recipe(ROOT / "recipes" / "default.toml", [str(data)])
    default = run_recipe(recipe, str(tmp_path / "default"), IN_PROCESS)
    dask = run_recipe(recipe, str(tmp_path / "dask"), _dask(dask_cluster))
    assert dask.manifest["counts"] == default.manifest["counts"] and dask.manifest["conservation"]
    _same_result(tmp_path / "dask", tmp_path / "default")
    stages = {r["stage"] for r in read_part(tmp_path / "dask", "rejected") if r["duplicate_of"]}
    assert {"exact_dedup", "minhash_dedup", "semantic_dedup"} <= stages


def _joins(pipeline: beam.Pipeline, rounds: int) -> None:
    """`rounds` joins of a collection with its own counts per key (a Flatten, then a GroupByKey)."""
    nums = pipeline | "Nums" >> beam.Create(range(100))
    for i in range(rounds):
        keyed = nums | f"Key{i}" >> beam.Map(lambda x: (x % 10, x))
        counts = keyed | f"Count{i}" >> beam.combiners.Count.PerKey()
        grouped = (keyed, counts) | f"Join{i}" >> beam.Flatten() | f"Group{i}" >> beam.GroupByKey()
        nums = grouped | f"Values{i}" >> beam.FlatMap(lambda kv: kv[1])


def _partitions(pipeline: beam.Pipeline, runner) -> list[int]:
    """Dask partitions of each step as `runner` translates the pipeline (3 per Create; no cluster)."""
    import dask
    from apache_beam.runners.dask.overrides import dask_overrides as beam_dask_overrides

    pipeline.replace_all(beam_dask_overrides())
    visitor = runner.to_dask_bag_visitor({"npartitions": 3})
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):  # as with a cluster's client
        pipeline.visit(visitor)
    return [bag.npartitions for bag in visitor.bags.values()]


def test_beams_dask_runner_doubles_partitions_at_each_join_and_gristmills_does_not():
    from apache_beam.runners.dask.dask_runner import DaskRunner as BeamDaskRunner

    from pipeline.dask_runner import DaskRunner

    most = {}
    for runner in (BeamDaskRunner, DaskRunner):
        pipeline = beam.Pipeline(options=PipelineOptions())
        _joins(pipeline, 5)
        most[runner] = max(_partitions(pipeline, runner))
    assert most[BeamDaskRunner] >= 3 * 2**5  # at least doubled by each join (a task shuffle rounds up)
    assert most[DaskRunner] == 3


def _outputs(runner) -> list:
    """What a ParDo on a 3-partition Create gives when its bag graph runs on one thread, where
    tasks share their arguments (as in an in-process cluster)."""
    from apache_beam.runners.dask.overrides import dask_overrides as beam_dask_overrides

    pipeline = beam.Pipeline(options=PipelineOptions())
    _ = pipeline | "Nums" >> beam.Create(range(9)) | "Double" >> beam.Map(lambda x: 2 * x)
    pipeline.replace_all(beam_dask_overrides())
    visitor = runner.to_dask_bag_visitor({"npartitions": 3})
    pipeline.visit(visitor)
    return sorted(list(visitor.bags.values())[-1].compute(scheduler="sync"))


def test_beams_dask_runner_shares_one_output_list_between_partitions_and_gristmills_does_not():
    from apache_beam.runners.dask.dask_runner import DaskRunner as BeamDaskRunner

    from pipeline.dask_runner import DaskRunner

    assert len(_outputs(BeamDaskRunner)) > 9  # each partition also returns the ones before it
    assert _outputs(DaskRunner) == [0, 2, 4, 6, 8, 10, 12, 14, 16]


@pytest.mark.parametrize("recipe", ["default", "synthesis"])  # fineweb runs on the cluster below
def test_no_step_of_a_shipped_recipe_has_more_dask_partitions_than_a_create(tmp_path, recipe):
    from pipeline.dask_runner import DaskRunner

    options = PipelineOptions([f"--runner={DASK_RUNNER}", f"--spill_dir={tmp_path}"])
    pipeline = beam.Pipeline(options=options)
    build_pipeline(pipeline, load_recipe(ROOT / "recipes" / f"{recipe}.toml"), str(tmp_path))
    pipeline.replace_all(dask_overrides())
    assert max(_partitions(pipeline, DaskRunner)) == 3


def _write_json(_, path: str, *values) -> None:
    Path(path).write_text(json.dumps(values))


def _counts(pipeline: beam.Pipeline, path: str) -> None:
    """Three global counts (5, 7, 11), written to `path` by a step that reads them as side inputs:
    three joins alike but for their inputs, whose fused chains dask names alike (fault 7)."""
    counts = [
        beam.pvalue.AsSingleton(
            pipeline | f"Nums{n}" >> beam.Create(range(n)) | f"Count{n}" >> beam.combiners.Count.Globally()
        )
        for n in (5, 7, 11)
    ]
    _ = pipeline | "Once" >> beam.Create([None]) | "Write" >> beam.Map(_write_json, path, *counts)


def _fused_chains_sharing_a_key(pipeline: beam.Pipeline) -> int:
    """How many fused chains `dask.optimize` (what Beam's DaskRunner runs) renames to a key that
    another chain was given too (each fused chain's last key is aliased to its new name)."""
    import dask
    from apache_beam.runners.dask.overrides import dask_overrides as beam_dask_overrides
    from dask._task_spec import Alias

    from pipeline.dask_runner import DaskRunner

    pipeline.replace_all(beam_dask_overrides())
    visitor = DaskRunner.to_dask_bag_visitor()
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):  # as with a cluster's client
        pipeline.visit(visitor)
    (optimized,) = dask.optimize(list(visitor.bags.values())[-1])
    targets = [task.target for task in dict(optimized.__dask_graph__()).values() if isinstance(task, Alias)]
    return len(targets) - len(set(targets))


def test_global_counts_are_right_on_dask_when_dasks_fused_chain_names_collide(
    tmp_path, dask_cluster, monkeypatch
):
    """dask cuts a fused chain's name at 115 characters plus a 3-4 hex-digit `hash()` suffix; a
    constant hash forces the collision that a random one gives about one run in ten."""
    import dask.optimization

    from pipeline.dask_runner import DaskRunner

    monkeypatch.setattr(dask.optimization, "hash", lambda _name: 0xABCD, raising=False)
    forced = beam.Pipeline(options=PipelineOptions())
    _counts(forced, str(tmp_path / "unused.json"))
    forced.replace_all(dask_overrides())
    assert _fused_chains_sharing_a_key(forced) > 0  # the forced condition holds: Beam's graph is wrong

    options = PipelineOptions([f"--dask_client_address={dask_cluster}"])
    pipeline = beam.Pipeline(runner=DaskRunner(), options=options)
    _counts(pipeline, str(tmp_path / "counts.json"))
    pipeline.replace_all(dask_overrides())
    pipeline.run().wait_until_finish()
    assert json.loads((tmp_path / "counts.json").read_text()) == [5, 7, 11]


class _BundleIds(beam.DoFn):
    """Each element with its bundle's own id: on Dask, a bundle is a partition."""

    def start_bundle(self):
        self.bundle = os.urandom(8).hex()

    def process(self, element):
        yield self.bundle


def test_a_run_gets_a_dask_partition_per_worker_thread_unless_told_otherwise(tmp_path, dask_cluster):
    """Beam's default puts up to 128 elements in one partition, so a run of fewer than 129 input
    splits ran on one worker thread of the cluster; the client closes when the run ends."""
    from pipeline.dask_runner import DaskRunner

    def bundles(*flags: str) -> int:
        options = PipelineOptions([f"--dask_client_address={dask_cluster}", *flags])
        pipeline = beam.Pipeline(runner=DaskRunner(), options=options)
        path = tmp_path / f"bundles{len(flags)}.json"
        seen = pipeline | beam.Create(range(8)) | beam.ParDo(_BundleIds()) | beam.combiners.ToList()
        _ = seen | beam.Map(lambda ids: path.write_text(json.dumps(ids)))
        result = pipeline.run()
        result.wait_until_finish()
        assert result.client.status == "closed"
        return len(set(json.loads(path.read_text())))

    assert bundles() == 2  # the cluster's two one-thread workers
    assert bundles("--dask_npartitions=1") == 1


def test_bad_input_is_handled_the_same_on_dask(tmp_path, dask_cluster):
    """The bad-input end-to-end case (tests/pipeline/test_run.py) on the Dask cluster."""
    folder = write_bad_inputs(tmp_path / "in", corpus(10))
    recipe_path = write_recipe(tmp_path / "r.toml", [str(folder / "*")], DOCUMENT_STAGES)
    default = run_recipe(load_recipe(recipe_path), str(tmp_path / "default"), IN_PROCESS)
    dask = run_recipe(load_recipe(recipe_path), str(tmp_path / "dask"), _dask(dask_cluster))
    assert dask.manifest["counts"] == default.manifest["counts"]
    assert dask.manifest["failed_by_error"] == default.manifest["failed_by_error"]
    errors = {f["error"] for f in read_part(tmp_path / "dask", "failed")}
    assert {"InvalidUtf8", "MalformedJson", "MissingText"} <= errors
    failed = lambda out: sorted((f["id"], f["error"]) for f in read_part(out, "failed"))  # noqa: E731
    assert failed(tmp_path / "dask") == failed(tmp_path / "default")


def test_relative_paths_name_the_drivers_files_on_the_cluster(tmp_path, dask_cluster, monkeypatch):
    """The workers run in a folder of their own: a relative --output, --input or --spill_dir was
    sent to them as written (the run failed, its spill files left in the workers' folder)."""
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "in.jsonl", corpus(20))
    recipe = write_recipe(tmp_path / "r.toml", ["in.jsonl"], DOCUMENT_STAGES)
    run = ["run", "--quiet", "--recipe", str(recipe), "--output", "out", "--spill_dir", "spill"]
    assert main([*run, *_dask(dask_cluster)]) == 0
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]["input"] == 20


def test_the_cli_knows_dasks_options_once_the_runner_is_dask():
    from pipeline.preflight import UsageError, check_beam_options

    check_beam_options(["--runner=DaskRunner", "--dask_client_address=h:1", "--dask_npartitions=2"], [])
    with pytest.raises(UsageError, match="did you mean --dask_npartitions"):
        check_beam_options(["--runner=DaskRunner", "--dask_npartition=2"], [])


def test_a_glob_matching_nothing_exits_2_naming_it(tmp_path):
    recipe = write_recipe(tmp_path / "r.toml", [str(tmp_path / "none" / "*.jsonl")], STAGES)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "run",
            "--recipe",
            str(recipe),
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2
    assert f"{tmp_path / 'none' / '*.jsonl'}: no input file matches" in done.stderr


def test_a_quiet_run_on_a_local_dask_cluster_prints_only_its_summary(tmp_path):
    """Without an address Beam's runner starts a cluster in the driver: its scheduler and nannies
    logged 26 lines of INFO, Beam's partition notice 12 warnings, and the missing metrics one more."""
    data = write_jsonl(tmp_path / "in.jsonl", corpus(20))
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], DOCUMENT_STAGES)
    # Dask's own notice when another cluster here holds the dashboard's port 8787 is not the point
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore:Port 8787 is already in use"}
    command = ["--recipe", str(recipe), "--output", str(tmp_path / "o"), "-q", "--runner=DaskRunner"]
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "run", *command], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("run ") and "read 20, kept" in done.stdout


def test_a_run_on_dask_reads_and_publishes_on_s3_with_the_options_it_was_given(
    tmp_path, dask_cluster, s3_server
):
    """Beam's DaskRunner gives its workers none of the run's options, so a worker's S3 client knew
    neither the endpoint nor the keys (`--s3_*`); the workers here have no AWS settings of their own."""
    client, s3_options = s3_server
    data = write_jsonl(tmp_path / "in.jsonl", corpus(30))
    client.upload_file(str(data), BUCKET, "dask/in.jsonl")
    recipe = load_recipe(write_recipe(tmp_path / "r.toml", [f"s3://{BUCKET}/dask/*.jsonl"], DOCUMENT_STAGES))
    default = run_recipe(recipe, str(tmp_path / "default"), [*IN_PROCESS, *s3_options])
    dask = run_recipe(recipe, f"s3://{BUCKET}/dask/out", [*_dask(dask_cluster), *s3_options])
    assert dask.manifest["counts"] == default.manifest["counts"] and dask.manifest["conservation"]
    listing = client.list_objects_v2(Bucket=BUCKET, Prefix="dask/out/kept/")
    assert [item["Key"] for item in listing["Contents"]]


def test_a_run_whose_final_tasks_were_cancelled_fails_naming_the_cluster(monkeypatch):
    """With the scheduler killed, Beam's result said DONE over cancelled futures, and the run
    failed later on a missing bookkeeping file, never naming the cluster."""
    from types import SimpleNamespace

    from apache_beam.runners.dask import dask_runner as beams

    from pipeline.dask_runner import _Result

    monkeypatch.setattr(beams.DaskRunnerResult, "wait_until_finish", lambda self, duration=None: "DONE")
    closed = []
    futures = [SimpleNamespace(status="finished"), SimpleNamespace(status="cancelled")]
    result = _Result(SimpleNamespace(close=lambda: closed.append(True)), futures)
    with pytest.raises(RuntimeError, match="lost the run: 1 of its 2 final tasks ended 'cancelled'"):
        result.wait_until_finish()
    assert closed == [True] and result.state == "FAILED"
