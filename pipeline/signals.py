"""Stopping a run by signal: Ctrl-C (SIGINT) and SIGTERM (`kill`, `timeout`, a job scheduler's
stop) end it the same way: nothing published, the work area kept for a rerun, workers gone quietly.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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


def signal_children(signum: int) -> None:
    """Send `signum` to this process's children (the local runner's workers)."""
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        with contextlib.suppress(OSError), open(path) as children:
            for pid in children.read().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signum)


@contextlib.contextmanager
def stop_signals():
    """A list that receives the signal stopping the pipeline (Beam may re-raise the
    KeyboardInterrupt it causes as its own error, which must still count as a stop, not a failed
    run). The workers get SIGINT, on which they leave quietly: Ctrl-C reaches them with the
    terminal's process group, SIGTERM and a `kill -INT` of the driver did not (they died later
    of the lost connection, each printing gRPC tracebacks). Once stopped, the driver's own
    threads and Beam's logger say nothing more of the connections the workers drop."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_signal(signum, frame):
        received.append(signum)
        signal_children(signal.SIGINT)
        raise Stopped(signum=signum)

    def not_after_a_stop(record: logging.LogRecord) -> bool:
        """Beam's and gRPC's log lines once stopped: the interrupt, then every broken connection."""
        return not (received and record.name.startswith(("apache_beam", "grpc")))

    def quiet_thread_errors(args) -> None:
        if not received:
            previous_hook(args)

    handlers = logging.getLogger().handlers
    for handler in handlers:
        handler.addFilter(not_after_a_stop)
    previous_hook, threading.excepthook = threading.excepthook, quiet_thread_errors
    previous = {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        threading.excepthook = previous_hook
        for handler in handlers:
            handler.removeFilter(not_after_a_stop)
