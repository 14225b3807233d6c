import os
import platform
import subprocess
import sys

import pytest

from pipeline.malloc import MALLOC_ENVIRONMENT, tune_malloc

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc settings")


@glibc
def test_settings_apply_here_and_reach_the_processes_a_run_starts(monkeypatch):
    for name in MALLOC_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    assert tune_malloc()
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ['MALLOC_ARENA_MAX'], os.environ['MALLOC_MMAP_THRESHOLD_'])"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert child.stdout.split() == ["2", "1048576"]


@glibc
def test_a_setting_the_user_made_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert tune_malloc()
    assert os.environ["MALLOC_ARENA_MAX"] == "4"
