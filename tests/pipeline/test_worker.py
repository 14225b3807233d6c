"""The local worker entry point (pipeline.worker): child processes forked inside a busy worker start."""

import os
import subprocess

import apache_beam as beam
import pytest

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
