"""The local runner sizes itself by the cores this process may use, not the host's."""

import os

import pytest
from apache_beam.options.pipeline_options import DirectOptions

from pipeline import cores, run
from pipeline.cores import cgroup_cpu_quota, usable_cores


@pytest.mark.parametrize(
    "files, quota",
    [
        ({"cpu.max": "150000 100000\n"}, 1.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_cgroup_cpu_quota_v1_and_v2(tmp_path, files, quota):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cgroup_cpu_quota(tmp_path) == quota


def test_usable_cores_is_the_affinity_capped_by_the_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert usable_cores(str(tmp_path)) == 4  # no quota file
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert usable_cores(str(tmp_path)) == 2  # 1.5 CPUs: two workers share them
    (tmp_path / "cpu.max").write_text("1000000 100000\n")
    assert usable_cores(str(tmp_path)) == 4


@pytest.mark.parametrize(
    "given, workers", [([], 3), (["--direct_num_workers=0"], 3), (["--direct_num_workers=5"], 5)]
)
def test_the_local_runner_has_one_worker_per_usable_core(monkeypatch, given, workers):
    """Beam's own default, os.cpu_count(), counts the host's cores (64 workers in a 2-CPU container)."""
    monkeypatch.setattr(run, "usable_cores", lambda: 3)
    assert run.pipeline_options(given).view_as(DirectOptions).direct_num_workers == workers
    assert (
        run.pipeline_options(["--direct_running_mode=in_memory"]).view_as(DirectOptions).direct_num_workers
        == 1
    )
    assert cores.usable_cores() >= 1
