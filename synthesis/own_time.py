"""A process's own time: wall time minus the time it spent waiting for a CPU.

Time limits on verification measure this, not wall time, so a loaded machine does not turn a
correct sample into a timeout. The wait is the process's run-queue delay from /proc/PID/schedstat
(0 where the kernel does not report it, which makes the clock a wall clock). The sandbox runner
keeps its own copy of this reading, since it runs standalone inside the sandbox.
"""

from __future__ import annotations

import time


def run_queue_wait_s(pid: int) -> float:
    """Seconds process `pid` has spent runnable but waiting for a CPU (0 when unknown)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class OwnClock:
    """Own and wall time of process `pid` since the clock was made."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.start = time.monotonic()
        self.waited_before = run_queue_wait_s(pid)

    def wall(self) -> float:
        return time.monotonic() - self.start

    def own(self) -> float:
        return self.wall() - max(0.0, run_queue_wait_s(self.pid) - self.waited_before)
