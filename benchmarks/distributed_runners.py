"""Wall time and CPU-seconds of one recipe on three runners: the default runner, the PortableRunner
against Beam's local job service, and a Dask cluster (a scheduler and two one-thread workers, each
a separate process on loopback). Every run goes through the CLI in its own process; CPU-seconds
are summed over the CLI process, its children, and the job service or cluster processes, and so
is the peak resident memory (sampled every 0.5 s). Prints one Markdown table row per runner and
checks that every runner kept the same ids.

    .venv/bin/python benchmarks/distributed_runners.py [--recipe recipes/default.toml] [--input GLOB]
        [--runners default,portable,dask] [--beam-arg=--dask_npartitions=8 ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pyarrow.parquet as pq
from dedup_memory import tree_rss

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.cli import QUIET_OFFLINE_ENVIRONMENT  # noqa: E402

ENV = {**os.environ, **QUIET_OFFLINE_ENVIRONMENT, "PYTHONPATH": str(ROOT)}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu(process: psutil.Process) -> float:
    """CPU-seconds of a live process and its live children (the job service, a Dask process)."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _start(commands: list[list[str]], logs: Path) -> list[subprocess.Popen]:
    started = []
    for index, command in enumerate(commands):
        log = open(logs / f"service{index}.log", "w")
        started.append(subprocess.Popen([sys.executable, *command], env=ENV, stdout=log, stderr=log))
        time.sleep(3 if index == 0 else 0)
    return started


def _services(runner: str, logs: Path) -> tuple[list[subprocess.Popen], list[str]]:
    """The processes a runner needs (started here) and its Beam options."""
    port = _port()
    if runner == "portable":
        services = _start([["-m", "pipeline.job_service", "--port", str(port)]], logs)
        time.sleep(5)
        return services, [
            "--runner=PortableRunner",
            f"--job_endpoint=localhost:{port}",
            "--environment_type=LOOPBACK",
        ]
    if runner == "dask":
        services, address = start_dask_cluster(logs)
        return services, ["--runner=DaskRunner", f"--dask_client_address={address}"]
    return [], []


def start_dask_cluster(logs: Path) -> tuple[list[subprocess.Popen], str]:
    """A scheduler and two one-thread workers (each under its nanny) on loopback, ready; their
    processes (scheduler first) and the scheduler's address."""
    port = _port()
    address = f"127.0.0.1:{port}"
    worker = ["-m", "dask", "worker", f"tcp://{address}", "--host", "127.0.0.1", "--nthreads", "1"]
    services = _start(
        [["-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
        + [[*worker, "--no-dashboard", "--name", f"w{i}"] for i in (1, 2)],
        logs,
    )
    from distributed import Client

    with Client(address, timeout=120) as client:
        client.wait_for_workers(2, timeout=300)
    return services, address


def run(runner: str, recipe: str, inputs: list[str], folder: Path, beam_args: list[str]) -> dict:
    services, options = _services(runner, folder)
    try:
        service_cpu = sum(_cpu(psutil.Process(s.pid)) for s in services)
        command = [
            sys.executable,
            "-m",
            "pipeline.cli",
            "run",
            "--recipe",
            recipe,
            "--output",
            str(folder / "out"),
        ]
        command += [arg for path in inputs for arg in ("--input", path)] + options + beam_args
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.time()
        cli = subprocess.Popen(
            command, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(folder / "cli.log", "w")
        )
        peak = 0
        while cli.poll() is None:  # the CLI's process tree and every service process, together
            peak = max(peak, sum(tree_rss(pid) for pid in [cli.pid, *(s.pid for s in services)]))
            time.sleep(0.5)
        wall = time.time() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI and every process it waited for
        cli_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        service_cpu = sum(_cpu(psutil.Process(s.pid)) for s in services) - service_cpu
        if cli.returncode:
            raise SystemExit(f"{runner}: exit {cli.returncode}, see {folder / 'cli.log'}")
    finally:
        for service in reversed(services):
            service.terminate()
        for service in services:
            service.wait(timeout=60)
    kept = sorted(
        row["id"]
        for f in sorted((folder / "out" / "kept").glob("*.parquet"))
        for row in pq.read_table(f).to_pylist()
    )
    return {"runner": runner, "wall": wall, "cpu": cli_cpu + service_cpu, "peak": peak, "kept": kept}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "default.toml"))
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--runners", default="default,portable,dask")
    parser.add_argument("--beam-arg", action="append", default=[], help="a Beam option for every run")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="gristmill-runners-") as tmp:
        for runner in args.runners.split(","):
            folder = Path(tmp) / runner
            folder.mkdir()
            results.append(run(runner, args.recipe, args.input, folder, args.beam_arg))
            r = results[-1]
            print(
                f"| {runner} | {r['wall']:.1f} s | {r['cpu']:.1f} s | {r['peak'] / 2**20:,.0f} MiB | {len(r['kept'])} |",
                flush=True,
            )
    assert all(r["kept"] == results[0]["kept"] for r in results), "runners kept different ids"
    print("same kept ids on every runner")


if __name__ == "__main__":
    main()
