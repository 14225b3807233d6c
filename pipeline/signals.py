"""A run that ends early: stopped by Ctrl-C (SIGINT) or SIGTERM (`kill`, `timeout`, a job
scheduler's stop), both the same way (nothing published, the work area kept for a rerun, workers
gone quietly), or failed because a worker process died (the out-of-memory killer), said so.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import signal
import sys
import threading
from dataclasses import dataclass

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORKER_MODULE = "pipeline.worker"  # the local runner's workers are `python -m pipeline.worker`
# How Beam's local runner reports a worker process that died (the thread that waited on it raises).
_WORKER_EXIT = re.compile(r"Worker subprocess exited with return code (-?\d+)")
# Beam's harness logs a failed bundle's traceback twice, and the runner prints both on relaying
# them; the worker has printed it once already, and the run's error carries it.
_BUNDLE_FAILED = re.compile(r"Error processing instruction|\[while running \\?'")  # quotes escaped
# Beam's runner mostly fails the pipeline within a few seconds of a worker's death; about one
# time in six it waited forever on the dead worker's bundle, so the driver is woken after this.
LOST_WORKER_WAIT_S = 10.0
WAKE_SIGNAL = signal.SIGUSR1
WORKER_THREAD = "run_worker"  # the name of Beam's local runner's thread waiting on each worker process
WORKER_THREAD_WAIT_S = 10.0  # how long a stopped run waits for those threads (their workers got SIGINT)


class Stopped(KeyboardInterrupt):
    """A run stopped by `signum`; the message says what was kept."""

    def __init__(self, message: str = "", signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signum = signum


@contextlib.contextmanager
def sigterm_unwinds():
    """While inside, SIGTERM unwinds like Ctrl-C (locks released, temporary folders removed)
    instead of killing the process where it stands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum, frame):
        raise Stopped(signum=signum)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_signals_exit_with(code: int) -> None:
    """From now on (the run is over, its output published or not), SIGINT and SIGTERM end the
    process at once with `code`, saying so: while the interpreter and Beam shut down (about a
    second), they killed it as 130 or 143 without a word, and a scheduler took a finished run for a
    killed one."""
    if threading.current_thread() is not threading.main_thread():
        return

    def on_stop(signum, frame):
        name = signal.Signals(signum).name
        print(
            f"gristmill: {name} after the command finished: exiting with its status, {code}", file=sys.stderr
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    for signum in STOP_SIGNALS:
        signal.signal(signum, on_stop)


@contextlib.contextmanager
def stop_signals_deferred(what: str):
    """While inside, SIGINT and SIGTERM wait: `what` (replacing the previous output) is finished
    first, then the run goes on to its end, saying the signal came (before, a Ctrl-C while the
    shards were moved left half the new shards and no manifest, and said nothing was published)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = {
        signum: signal.signal(signum, lambda number, frame: received.append(number))
        for signum in STOP_SIGNALS
    }
    finished = False
    try:
        yield
        finished = True
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if received:
            name = signal.Signals(received[0]).name
            outcome = "that was finished first" if finished else "which then failed"
            print(f"gristmill: {name} came while {what}; {outcome}", file=sys.stderr)


class _OutlivesItsReader:
    """A console stream that, when whatever reads it goes away (`gristmill run ... | head -1`),
    points its file descriptor at /dev/null and goes on: the broken pipe stopped the run, which
    published nothing, or left it waiting forever on a bundle."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def console_outlives_its_reader():
    """While inside, writes to a closed stdout or stderr pipe go to /dev/null instead of raising."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = map(_OutlivesItsReader, streams)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams


def signal_workers(signum: int) -> None:
    """Send `signum` to this process's children that are local runner workers (`pipeline.worker`;
    a program running gristmill may have children of its own)."""
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        with contextlib.suppress(OSError), open(path) as children:
            for pid in children.read().split():
                with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as command:
                    if WORKER_MODULE.encode() in command.read().split(b"\0"):
                        os.kill(int(pid), signum)


class WorkerLost(RuntimeError):
    """Raised in the driver when Beam's runner was still waiting on a dead worker."""


@dataclass
class RunEnding:
    """How a pipeline ended early, if it did: the signal that stopped it, or a worker's death."""

    signum: int | None = None
    worker_exit: int | None = None  # a local runner's worker process's return code

    def lost_worker(self) -> str:
        """What happened to the worker, and what to do."""
        code = self.worker_exit or 0
        if code >= 0:
            return f"a worker process exited with status {code}"
        if code == -signal.SIGKILL:
            return (
                "a worker process was killed (SIGKILL): the kernel's out-of-memory killer does that "
                "when memory runs out (see `dmesg`); fewer workers (--direct_num_workers) use less"
            )
        return f"a worker process was killed by {signal.Signals(-code).name}"


@contextlib.contextmanager
def watch_run():
    """A `RunEnding` that records the signal stopping the pipeline (Beam may re-raise the
    KeyboardInterrupt it causes as its own error, which must still count as a stop, not a failed
    run) or a worker's death (Beam reports only a closed channel). On a stop the workers get
    SIGINT, on which they leave quietly: Ctrl-C reaches them with the terminal's process group,
    SIGTERM and a `kill -INT` of the driver did not (they died later of the lost connection).
    The driver's threads and Beam's logger say nothing of the connections the workers drop (a
    screen of gRPC tracebacks before); the run's error says why they dropped. A failed bundle's
    traceback is printed once (by the worker), not again as each of its relayed log records."""
    from grpc import RpcError  # Beam's local runner talks to its workers over gRPC

    ending = RunEnding()

    def on_signal(signum, frame):
        ending.signum = signum
        signal_workers(signal.SIGINT)
        raise Stopped(signum=signum)

    def ended() -> bool:
        return ending.signum is not None or ending.worker_exit is not None

    def not_once_ended(record: logging.LogRecord) -> bool:
        """Beam's and gRPC's lines after a stop or a worker's death, and a lost connection's (the
        driver's threads may see a dead worker's socket close before its exit is known)."""
        from_beam = record.name.startswith(("apache_beam", "grpc"))
        lost = record.exc_info is not None and isinstance(record.exc_info[1], RpcError)
        relayed_traceback = record.name.endswith("local_job_service") and _BUNDLE_FAILED.search(
            record.getMessage()
        )
        return not (from_beam and (ended() or lost or relayed_traceback))

    watching, done = threading.Lock(), threading.Event()

    def wake_main() -> None:
        with watching:  # never once the handler below is gone (SIGUSR1's default is to exit)
            if not done.is_set():
                signal.pthread_kill(threading.main_thread().ident, WAKE_SIGNAL)

    def on_wake(signum, frame):
        raise WorkerLost(ending.lost_worker())

    def on_thread_error(args) -> None:
        lost = _WORKER_EXIT.search(str(args.exc_value))
        if lost and ending.worker_exit is None:
            ending.worker_exit = int(lost.group(1))
            if in_main:
                timer = threading.Timer(LOST_WORKER_WAIT_S, wake_main)
                timer.daemon = True  # the process may exit before it fires
                timer.start()
        if not (ended() or isinstance(args.exc_value, RpcError)):
            previous_hook(args)

    handlers = logging.getLogger().handlers
    for handler in handlers:
        handler.addFilter(not_once_ended)
    previous_hook, threading.excepthook = threading.excepthook, on_thread_error
    in_main = threading.current_thread() is threading.main_thread()
    previous = {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS} if in_main else {}
    if in_main:
        previous[WAKE_SIGNAL] = signal.signal(WAKE_SIGNAL, on_wake)
    try:
        yield ending
    finally:
        with watching:
            done.set()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if ended():  # Beam's threads waiting on the stopped workers may raise yet: heard here, not after
            for thread in threading.enumerate():
                if thread.name == WORKER_THREAD and not thread.daemon:  # in-process workers' are daemons
                    thread.join(timeout=WORKER_THREAD_WAIT_S)
        threading.excepthook = previous_hook
        for handler in handlers:
            handler.removeFilter(not_once_ended)
