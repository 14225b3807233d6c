"""glibc malloc settings that keep a long local run's memory near what Python actually holds.

The local runner's driver receives every shuffle's bytes on several threads, and its workers
decode and free millions of small and large objects. With glibc's defaults, each thread gets its
own arena (up to 8 per core), memory freed in an arena stays in the process, and every large
free raises the mmap threshold (up to 32 MB), so later large buffers also come from arenas
instead of being handed back. On `recipes/fineweb.toml` the driver's resident memory grew by
about 0.6 GB per million documents while tracemalloc saw 0.13 GB of live Python objects.
Two arenas, a fixed 1 MB mmap threshold and a 4 MB trim threshold cut the peak of all processes
from 1.99 to 1.51 GB on 600k documents at the same CPU time (benchmarks/results/memory.md, wave 10).
"""

from __future__ import annotations

import ctypes
import os
import platform

# glibc's environment tunables: read by each process when it starts (the workers the runner spawns).
MALLOC_ENVIRONMENT = {
    "MALLOC_ARENA_MAX": "2",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(4 << 20),
}
# The same settings for the running process, through mallopt(3) (its constants in malloc.h).
_MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_MMAP_THRESHOLD_": -3, "MALLOC_ARENA_MAX": -8}


def tune_malloc() -> bool:
    """Apply MALLOC_ENVIRONMENT to this process and to the processes it starts (a variable the user
    already set wins); False where the C library is not glibc (nothing is changed there)."""
    if platform.libc_ver()[0] != "glibc":
        return False
    mallopt = ctypes.CDLL(None).mallopt
    for name, default in MALLOC_ENVIRONMENT.items():
        value = os.environ.setdefault(name, default)
        if value.isdigit() and mallopt(_MALLOPT[name], int(value)) != 1:
            return False
    return True
