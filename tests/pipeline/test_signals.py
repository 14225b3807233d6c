"""A run that ends early: SIGTERM (a scheduler's stop, `kill`) ends it as Ctrl-C does, and a
worker's death is named; either way one line, nothing published, no worker left, no tracebacks."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline import signals
from tests.conftest import write_jsonl, write_recipe

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    found = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in path.read_text().split()]
    return found


@pytest.mark.parametrize(
    "kill, status, message",
    [
        ("driver", 128 + signal.SIGTERM, "gristmill: stopped by SIGTERM: nothing was published"),
        ("worker", 1, "gristmill: run failed, nothing published: a worker process was killed (SIGKILL)"),
    ],
)
def test_a_run_stopped_or_losing_a_worker_says_so_in_one_line(tmp_path, kill, status, message):
    words = " ".join(f"w{i % 97}" for i in range(120))
    data = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "text": f"{i} {words}."} for i in range(40_000)]
    )
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "gopher_quality"\n')
    out = tmp_path / "out"
    run = ["run", "--quiet", "--recipe", str(recipe), "--output", str(out), "--direct_num_workers=2"]
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *run, "--direct_running_mode=multi_processing"],
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
        if kill == "driver":
            process.send_signal(signal.SIGTERM)  # the driver only, not its process group
        else:
            os.kill(workers[0], signal.SIGKILL)  # as the out-of-memory killer does
        error = process.communicate(timeout=60)[1]
        time.sleep(1)
        alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    finally:
        os.killpg(process.pid, signal.SIGKILL) if process.poll() is None else None
    assert process.returncode == status
    assert message in error
    assert "Traceback" not in error and "ERROR" not in error, error[:2000]
    assert not alive  # SIGTERM: before, they died only later, each of the lost connection
    assert not (out / "manifest.json").exists() and not list(out.glob(".staging-*"))
    assert not (out / ".gristmill-lock").exists()


def test_a_run_whose_console_reader_goes_away_still_publishes(tmp_path):
    """`gristmill run ... 2>&1 | head -1`: the first write after `head` left raised BrokenPipeError,
    which stopped the run (exit 141, nothing published)."""
    data = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "text": f"text {i} " * 30} for i in range(3000)]
    )
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "gopher_repetition"\n')
    out = tmp_path / "out"
    run = ["run", "--recipe", str(recipe), "--output", str(out), "--progress-interval", "0.2"]
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *run, "--direct_num_workers=1"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    process.stdout.readline()
    process.stdout.close()  # as `head -1` exits
    assert process.wait(timeout=120) == 0
    assert (out / "manifest.json").exists()


def test_a_driver_left_waiting_on_a_dead_worker_is_woken(monkeypatch):
    """Beam's runner sometimes waited forever on a dead worker's bundle (4 of 23 runs of the test
    above hung): the driver's main thread, blocked on a lock as it was then, gets WorkerLost."""
    monkeypatch.setattr(signals, "LOST_WORKER_WAIT_S", 0.2)
    started = time.monotonic()
    with pytest.raises(signals.WorkerLost, match=r"a worker process was killed \(SIGKILL\)"):
        with signals.watch_run():
            dead = threading.Thread(target=_worker_exits, name="run_worker")
            dead.start()
            dead.join()
            threading.Event().wait(timeout=30)  # what Beam's runner did: wait on the dead worker
    assert time.monotonic() - started < 10
    assert signal.getsignal(signals.WAKE_SIGNAL) is signal.SIG_DFL  # restored


def _worker_exits() -> None:
    raise RuntimeError("Worker subprocess exited with return code -9")  # as Beam's local runner says


def test_a_stop_signal_while_the_output_is_replaced_waits_until_it_is_whole(tmp_path, monkeypatch, capsys):
    """Before, Ctrl-C while the shards were moved left half the new shards and no manifest in the
    output, and said "nothing was published"."""
    import json

    from pipeline import run
    from pipeline.cli import main
    from tests.conftest import IN_PROCESS, LONG_TEXT

    data = write_jsonl(tmp_path / "in.jsonl", [{"id": str(n), "text": LONG_TEXT} for n in range(6)])
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "length"\n')
    mark_output = run.mark_output
    signalled = []

    def mark_then_signal(output):  # Ctrl-C as the previous output starts to be replaced
        mark_output(output)
        signalled.append(True)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(run, "mark_output", mark_then_signal)
    out = tmp_path / "out"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    assert "gristmill: SIGINT came while the output was being replaced; that was finished first" in (
        capsys.readouterr().err
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert all((out / shard["file"]).is_file() for shard in manifest["shards"]) and signalled


def test_a_deferred_stop_signal_says_when_the_block_failed(capsys):
    """Before, "that was finished first" was said of a replacement that had failed."""
    with pytest.raises(OSError), signals.stop_signals_deferred("the output was being replaced"):
        os.kill(os.getpid(), signal.SIGTERM)
        raise OSError("the object store went away")
    assert capsys.readouterr().err == (
        "gristmill: SIGTERM came while the output was being replaced; which then failed\n"
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_after_the_command_ended_exits_with_its_status_saying_so(signum):
    """A SIGTERM in the second after a run published (the interpreter and Beam shutting down)
    killed it as 143 without a word: a scheduler took a finished run for a killed one. Here the
    signal comes from an exit handler, as late as it can."""
    late = f"atexit.register(lambda: os.kill(os.getpid(), {int(signum)}) or time.sleep(5))"
    code = f"import atexit, os, sys, time; {late}; sys.argv = ['gristmill', 'list']; from pipeline import cli; cli.console_main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    name = signal.Signals(signum).name
    assert (done.returncode, done.stderr.strip()) == (
        0,
        f"gristmill: {name} after the command finished: exiting with its status, 0",
    )
    assert "length" in done.stdout  # the command's own output came whole


def test_a_worker_thread_failing_just_after_a_stop_prints_no_traceback():
    """The threads Beam runs per worker process raise when their worker exits; after a stop that
    was heard only while the run was watched, and one that raised a moment later printed its
    traceback (one time in nine under `timeout`). The watch now waits for them. (A process of its
    own: pytest catches thread exceptions itself.)"""
    code = """
import signal, threading, time
from pipeline import signals

def worker_exits():
    time.sleep(0.5)
    raise RuntimeError("Worker subprocess exited with return code -2")

with signals.watch_run() as ending:
    ending.signum = signal.SIGTERM  # as a stop signal records it
    threading.Thread(name="run_worker", target=worker_exits).start()  # Beam's name for them
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Worker subprocess exited" not in done.stderr, done.stderr
