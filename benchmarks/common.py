"""What the benchmark scripts share: the project on sys.path (theirs and their Beam workers'),
../shared/data, their command line (described by the script's docstring, with the usual options),
cached generated corpora and CPU-seconds.

Scripts run as `python benchmarks/NAME.py`, so this folder is on sys.path and `from common import
...` (first, before any project import) also makes the project importable.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# Beam's worker processes unpickle functions of these scripts (`benchmarks.x`, which import `common`).
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), str(ROOT / "benchmarks"), *filter(None, [os.environ.get("PYTHONPATH")])]
)


def arguments(
    doc: str | None, *, data: bool = False, docs: int | None = None, workers: int | None = None
) -> argparse.ArgumentParser:
    """A parser described by the first line of `doc` (the script's docstring), with the options
    asked for: `--data` (default ../shared/data), `--docs N`, `--workers N`."""
    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0] if doc else None)
    if data:
        parser.add_argument(
            "--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)"
        )
    if docs is not None:
        parser.add_argument("--docs", type=int, default=docs, help="documents (default: %(default)s)")
    if workers is not None:
        parser.add_argument("--workers", type=int, default=workers, help="workers (default: %(default)s)")
    return parser


def skipped(path: Path) -> bool:
    """Whether `path` (under ../shared/data) is absent; if so, says the benchmark is skipped."""
    if path.exists():
        return False
    print(f"skipped: {path} not found")
    return True


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished child processes."""
    return sum(sum(resource.getrusage(who)[:2]) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def run_with_tree_cpu(command: list[str], interval: float = 0.2) -> tuple[subprocess.CompletedProcess, float]:
    """Run `command` to completion; also return the CPU-seconds of its whole process tree, sampled
    every `interval` s (each process's last reading; getrusage misses a tool's worker processes
    that nobody waits for). Up to `interval` s of each process's last moments is not counted."""
    import psutil

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root, latest = psutil.Process(process.pid), {}
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            tree = []
        for member in tree:
            try:
                latest[member.pid] = sum(member.cpu_times()[:2])
            except psutil.NoSuchProcess:
                pass
        time.sleep(interval)
    stdout, stderr = process.communicate()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), sum(latest.values())


def cached_corpus(folder: str, docs: int, build) -> Path:
    """`<temp>/<folder>/docs_<docs>.jsonl`, made by `build(path, docs)` on first use, reused after."""
    path = Path(tempfile.gettempdir()) / folder / f"docs_{docs}.jsonl"
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        build(path, docs)
    return path
