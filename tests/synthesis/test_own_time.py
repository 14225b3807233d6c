"""Own time: wall time minus the time a process waited for a CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from synthesis.own_time import OwnClock, run_queue_wait_s

needs_schedstat = pytest.mark.skipif(
    not os.path.exists("/proc/self/schedstat"), reason="the kernel reports no run-queue delay"
)


def test_sleeping_is_own_time_and_an_unknown_process_waits_zero():
    clock = OwnClock(os.getpid())
    time.sleep(0.2)
    assert 0.19 <= clock.own() <= clock.wall()
    assert run_queue_wait_s(2**22 + 12345) == 0.0


@needs_schedstat
def test_time_spent_waiting_for_a_busy_cpu_is_not_own_time():
    cpu = min(os.sched_getaffinity(0))
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    worker = subprocess.Popen([sys.executable, "-c", spin])
    try:
        clock = OwnClock(worker.pid)
        time.sleep(1.0)
        own, wall = clock.own(), clock.wall()
    finally:
        for process in [*hogs, worker]:
            process.kill()
            process.wait()
    assert own < 0.7 * wall  # three spinners share one CPU: each waits about two thirds of the time
