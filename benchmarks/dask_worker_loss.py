"""A Dask worker killed while a step that reads a side input runs: is every element still output
exactly once? On Dask, gristmill rewrites such a step into a join (pipeline/runners.py, fault 4);
the lost worker's part of the input is computed again, here in another order (as spill files,
whose names are random, are read back in another order). Starts a scheduler and two one-thread
workers (each under its nanny, which restarts a killed worker) on loopback, kills worker 1's
process once `--kill-after` elements went through the step, and prints the elements output
twice and never, per run.

    .venv/bin/python benchmarks/dask_worker_loss.py [--runs 3] [--kill-after 30]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from distributed_runners import ENV, start_dask_cluster

ELEMENTS, PER_SEED = 96, 8


def _emit_in_another_order(seed: int) -> list[int]:
    values = list(range(seed * PER_SEED, (seed + 1) * PER_SEED))
    random.shuffle(values)  # each computation of the partition gives another order
    return values


def _slow(value: int, total: int, log: str) -> int:
    with open(log, "a") as handle:
        handle.write(f"{value}\n")
    time.sleep(0.15)
    return value


def _write(values: list[int], path: str) -> None:
    Path(path).write_text(json.dumps(sorted(values)))


def pipeline_main(address: str, out: str, log: str) -> None:
    """The pipeline, run in its own process: a Map whose side input is a global count."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.dask_runner import DaskRunner
    from pipeline.runners import dask_overrides

    pipeline = beam.Pipeline(
        runner=DaskRunner(), options=PipelineOptions([f"--dask_client_address={address}"])
    )
    values = (
        pipeline | beam.Create(range(ELEMENTS // PER_SEED)) | "Emit" >> beam.FlatMap(_emit_in_another_order)
    )
    total = values | beam.combiners.Count.Globally()
    applied = values | "Slow" >> beam.Map(_slow, beam.pvalue.AsSingleton(total), log)
    _ = applied | beam.combiners.ToList() | beam.Map(_write, out)
    pipeline.replace_all(dask_overrides())
    pipeline.run().wait_until_finish()


def one_run(folder: Path, kill_after: int) -> tuple[list[int], list[int]]:
    services, address = start_dask_cluster(folder)
    out, log = folder / "out.json", folder / "applied.log"
    log.write_text("")
    try:
        command = [sys.executable, __file__, "--pipeline", address, str(out), str(log)]
        driver = subprocess.Popen(command, env=ENV)
        while len(log.read_text().splitlines()) < kill_after and driver.poll() is None:
            time.sleep(0.05)
        applied = len(log.read_text().splitlines())
        killed = psutil.Process(services[1].pid).children(recursive=True)  # the worker, not its nanny
        for child in killed:
            child.kill()
        driver.wait(timeout=600)
        print(f"killed {len(killed)} worker process(es) after {applied} elements went through the step")
        counts = collections.Counter(json.loads(out.read_text()))
    finally:
        for service in services:
            service.kill()
            service.wait()
    twice = sorted(value for value, count in counts.items() if count > 1)
    return twice, sorted(set(range(ELEMENTS)) - set(counts))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kill-after", type=int, default=30)
    args = parser.parse_args()
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory() as folder:
            twice, never = one_run(Path(folder), args.kill_after)
        print(
            f"run {run}: {ELEMENTS} elements, {len(twice)} output twice {twice}, {len(never)} never {never}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pipeline"]:
        sys.path.insert(0, os.fspath(Path(__file__).resolve().parents[1]))
        pipeline_main(*sys.argv[2:5])
    else:
        main()
