"""SIGTERM (a scheduler's stop, `kill`) ends a run as Ctrl-C does: one line, nothing published,
the local runner's workers gone, no tracebacks."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import write_jsonl, write_recipe

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    found = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in path.read_text().split()]
    return found


def test_sigterm_to_the_driver_alone_stops_workers_and_run_quietly(tmp_path):
    words = " ".join(f"w{i % 97}" for i in range(120))
    data = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "text": f"{i} {words}."} for i in range(40_000)]
    )
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "gopher_quality"\n')
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "pipeline.cli",
        "run",
        "--quiet",
        "--recipe",
        str(recipe),
        "--output",
        str(out),
    ]
    process = subprocess.Popen(
        [*command, "--direct_num_workers=2", "--direct_running_mode=multi_processing"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_children(process.pid)) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        time.sleep(2)  # the workers are reading
        assert process.poll() is None, "the run ended before it could be stopped"
        workers = _children(process.pid)
        process.send_signal(signal.SIGTERM)  # to the driver only, not its process group
        error = process.communicate(timeout=60)[1]
        time.sleep(1)
        alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    finally:
        os.killpg(process.pid, signal.SIGKILL) if process.poll() is None else None
    assert process.returncode == 128 + signal.SIGTERM
    assert "gristmill: stopped by SIGTERM: nothing was published" in error
    assert "Traceback" not in error and "ERROR" not in error, error[:2000]
    assert not alive  # before, they died only later, each of the lost connection
    assert not (out / "manifest.json").exists() and not list(out.glob(".staging-*"))
    assert not (out / ".gristmill-lock").exists()
