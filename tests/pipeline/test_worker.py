"""The local worker entry point (pipeline.worker): child processes forked inside a busy worker start;
workers start with the run's object-store settings."""

import json
import os
import subprocess

import apache_beam as beam
import pytest

from pipeline import s3_objects
from pipeline.run import new_pipeline, pipeline_options

SPAWNS = 60


class SpawnAsNobody(beam.DoFn):
    """Start /bin/true the way the sandbox starts bubblewrap as root (a fork, then setuid and exec)."""

    def process(self, element):
        for _ in range(SPAWNS):
            child = subprocess.run(
                ["/bin/true"], user=65534, group=65534, extra_groups=[], capture_output=True, check=False
            )
            yield element, child.returncode, child.stderr.decode(errors="replace")[:200]


@pytest.mark.skipif(os.geteuid() != 0, reason="changing the child's user needs root (as the sandbox does)")
def test_children_forked_inside_a_busy_worker_start(tmp_path):
    # Before pipeline.worker turned gRPC's fork handlers off, 10-25 % of these children died with
    # SIGABRT in gRPC's epoll code before exec (and so did sandbox runners).
    options = pipeline_options(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    out = tmp_path / "codes"
    with new_pipeline(options) as pipeline:
        codes = pipeline | beam.Create(range(6)) | beam.Reshuffle() | beam.ParDo(SpawnAsNobody())
        codes | beam.Map(repr) | beam.io.WriteToText(str(out))
    results = [line for path in tmp_path.glob("codes*") for line in path.read_text().splitlines()]
    assert len(results) == 6 * SPAWNS
    assert all(line.split(", ")[1] == "0" for line in results), [r for r in results if ", 0, " not in r][:3]


def _object_store_settings(_) -> str:
    from pipeline import fileio

    return json.dumps(fileio._given_s3_settings, sort_keys=True)


def test_workers_start_with_the_run_s_object_store_settings(tmp_path):
    """Each worker reads and writes S3 through one client with the run's settings from its first
    bundle: steps that carried no options (every step of a run resumed after its read) went through
    Beam's S3 filesystem, a client per call (benchmarks/s3_writes.py, 64 shards resumed from
    checkpoints on S3: 24.0-25.8 s and 28.0-29.1 CPU-s before, 14.9-15.5 s and 13.7-14.2 now)."""
    s3 = ["--s3_endpoint_url=http://127.0.0.1:9", "--s3_access_key_id=k", "--s3_secret_access_key=s"]
    options = pipeline_options(["--direct_running_mode=multi_processing", "--direct_num_workers=2", *s3])
    with new_pipeline(options) as pipeline:
        settings = pipeline | beam.Create(range(8)) | beam.Reshuffle() | beam.Map(_object_store_settings)
        settings | beam.io.WriteToText(str(tmp_path / "settings"))
    seen = {line for path in tmp_path.glob("settings*") for line in path.read_text().splitlines()}
    assert [json.loads(line) for line in seen] == [s3_objects.settings_of(options)]
