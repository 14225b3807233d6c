"""How many cores this process may use: what the local runner and the sandbox pool size themselves by."""

from __future__ import annotations

import math
import os
from pathlib import Path


def usable_cores(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may run on (its affinity: `taskset`, cpusets), capped by a cgroup CPU
    quota (a container's `--cpus`, a Kubernetes CPU limit). `os.cpu_count()`, which Beam's local
    runner used for "one worker per core", counts the host's: 64 workers in a 2-CPU container."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpu_quota(Path(cgroup_root))
    return max(1, min(cores, math.ceil(quota))) if quota else cores


def cgroup_cpu_quota(root: Path) -> float | None:
    """CPUs the cgroup's quota allows (v2 `cpu.max`, else v1 `cpu.cfs_quota_us` / period); None
    when unlimited or unknown."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        allowed = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):  # "max": no quota
        return None
    return allowed if allowed > 0 else None  # v1 writes -1 for none
