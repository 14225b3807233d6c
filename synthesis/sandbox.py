"""Run untrusted Python under bubblewrap, with a pool of warm per-worker runners.

Containment (`bubblewrap`, the default): new user, PID, network, IPC, UTS and cgroup namespaces
(no network at all, no view of host processes), `/usr` bound read-only and nothing else of the host
(no `/etc`, `/home`, `/root`, `/work`) but the recipe's `import_paths` (read-only), the root and
`/dev` and `/proc/sys` read-only (sysctls of the sandbox's namespaces, as `pid_max`, would carry
over to later samples), a private size-limited tmpfs on `/tmp` as the only writable place (a
fresh scratch folder per sample, all of `/tmp` wiped after each) besides a private 8 MB `/dev/shm` (multiprocessing's semaphores; wiped
after each sample too), an empty environment, `--new-session`, `--die-with-parent`, and no nested
user namespaces (bubblewrap >= 0.8). When the host runs as root, bubblewrap itself is started as
`nobody` (65534) and builds an unprivileged user namespace: RLIMIT_NPROC is never enforced for
uid 0, so this is what makes the process limit real. That needs unprivileged user namespaces (the
default on Debian 12 and on this machine's 6.x kernel; Ubuntu's AppArmor userns restriction would
need a bwrap profile). Inside, one warm interpreter (`_sandbox_runner.py`) forks a fresh child per
sample, sets rlimits (CPU seconds, address space, processes, file size, open files), counts the
files and folders it creates on its tmpfs mounts (kernel memory no rlimit bounds), enforces the
time limit on the sample's own time (wall time minus the time it waited for a CPU, so a loaded
machine does not time out correct samples), caps the captured stdout/stderr, refuses System V IPC
by a seccomp filter (its objects outlive the sample: memory no limit counts), and afterwards kills
every process left in the namespace. A host-side watchdog kills the whole bubblewrap process group
if the runner itself stops answering (e.g. a sample stopped it with SIGSTOP).

Infrastructure faults are not verdicts: a runner that does not start (no `ready` line) is started
again once, then `SandboxError`; a sample whose runner dies, hangs or hits the wall-clock backstop
is retried once on a fresh runner. Only a sample that kills a fresh runner again gets the outcome
`runner_died` (both attempts in `attempts`); a backstop or start-up fault that persists raises
`SandboxError`, which the stage runtime records as a failure (after a start-up fault the pool
fails every later sample at once, rather than waiting for each one's start-up to fail too).

`process` is the weaker fallback (rlimits and a scratch folder, no namespaces): used only when a
recipe names it, and it logs a warning. Nothing falls back silently.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.cores import usable_cores

log = logging.getLogger(__name__)

SANDBOXES = ("bubblewrap", "process")


def _runner_source() -> str:
    """`_sandbox_runner.py` preceded by code that loads `_test_guard.py`, `_frame_guard.py`,
    `_test_run.py` and `_runner_isolation.py` as the modules it imports: the sandbox's
    `python -I -S -c` sees no files of ours."""
    preload = "import sys as _sys, types as _types\n"
    for name in ("_test_guard", "_frame_guard", "_test_run", "_runner_isolation"):
        source = Path(__file__).with_name(f"{name}.py").read_text(encoding="utf-8")
        preload += (
            f"_sys.modules[{name!r}] = _types.ModuleType({name!r})\n"
            f"exec(compile({source!r}, '{name}.py', 'exec'), _sys.modules[{name!r}].__dict__)\n"
        )
    return preload + Path(__file__).with_name("_sandbox_runner.py").read_text(encoding="utf-8")


RUNNER_SOURCE = _runner_source()
NOBODY = 65534
WATCHDOG_GRACE_S = 30.0  # host-side, beyond the runner's own wall-clock backstop
IMPORTS_MOUNT = "/gristmill-imports"  # the recipe's import_paths appear as /gristmill-imports/0, 1, ...
STARTUP_TIMEOUT_S = 60.0  # a runner that has not said `ready` by then is replaced
SAMPLE_KILLED_RUNNER = ("runner_died", "runner_hung")
INFRASTRUCTURE = (*SAMPLE_KILLED_RUNNER, "backstop")  # outcomes retried once on a fresh runner


def signal_name(number: int) -> str:
    """`SIGKILL` and the like; a signal without a name (a real-time one, 34 to 64) by its number:
    `signal.Signals(40)` raised, and the verify stage with it."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class SandboxError(RuntimeError):
    """The sandbox cannot run samples (bubblewrap missing or refused, or a fault that persists)."""


class StartError(SandboxError):
    """No runner could be started, twice in a row: the pool fails every later sample at once."""


@dataclass(frozen=True)
class Limits:
    """Per-sample resource limits."""

    timeout_s: float = 5.0
    memory_mb: int = 512
    max_output_bytes: int = 1 << 20
    max_processes: int = 1
    max_open_files: int = 64
    max_file_mb: int = 16
    max_files: int = 10_000  # files and folders created in /tmp and /dev/shm

    @property
    def backstop_s(self) -> float:
        """Wall-clock backstop: ends a sample the machine was too loaded to run (then retried)."""
        return max(60.0, 10 * self.timeout_s)

    def request_fields(self) -> dict[str, Any]:
        return {
            "timeout": self.timeout_s,
            "backstop": self.backstop_s,
            "memory_mb": self.memory_mb,
            "max_output_bytes": self.max_output_bytes,
            "max_processes": self.max_processes,
            "max_open_files": self.max_open_files,
            "max_file_mb": self.max_file_mb,
            "max_files": self.max_files,
        }


@dataclass(frozen=True)
class RunResult:
    """What happened to one sample.

    `outcome`: `finished` (the child exited; see `status`, `exit_code`, `signal`), `timeout` (its own
    time ran out), `output_limit`, `file_limit` (it created more than `max_files` files and
    folders: each costs the kernel memory that no rlimit bounds), or, from `Runner.run`, the
    infrastructure outcomes `runner_died`, `runner_hung` and `backstop`; `SandboxPool.run` retries
    those once, so it returns `runner_died` only for a sample that killed a fresh runner too. `status` is the runner's report:
    `{"phase": "ok"}` only when solution, tests and check all completed; otherwise the phase that
    failed and the exception's type and message. `attempts` describes earlier attempts that hit an
    infrastructure fault.
    """

    outcome: str
    status: dict[str, Any] | None = None
    exit_code: int | None = None
    signal: int | None = None
    elapsed_s: float = 0.0
    waited_s: float = 0.0  # of elapsed_s, time the sample waited for a CPU (machine load)
    cpu_s: float | None = None  # the sample process's CPU time (None when it was killed)
    runner_cpu_s: float | None = None  # the runner's own CPU time spent on this sample (overhead)
    stdout: str = ""
    stderr: str = ""
    attempts: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for an infrastructure outcome: what happened and what the runner left on stderr."""
        text = f"{self.outcome} after {self.elapsed_s:.1f}s"
        return f"{text}: {self.stderr.strip()[:300]}" if self.stderr.strip() else text

    @property
    def passed(self) -> bool:
        return (
            self.outcome == "finished"
            and self.exit_code == 0
            and self.status is not None
            and self.status.get("phase") == "ok"
        )


def _drop_privileges() -> dict[str, Any]:
    """Popen arguments that run the sandbox as `nobody` when we are root."""
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def default_python() -> str:
    """The interpreter used inside the sandbox: the system one when root (readable by `nobody`)."""
    if os.geteuid() == 0 and os.path.exists("/usr/bin/python3"):
        return "/usr/bin/python3"
    return os.path.realpath(sys.executable)


@functools.cache
def _bwrap_supports(bwrap: str, option: str) -> bool:
    help_text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, check=False)
    return option in help_text.stdout + help_text.stderr


def seen_import_paths(kind: str, import_paths: tuple[str, ...]) -> list[str]:
    """Where the sample sees `import_paths`: under IMPORTS_MOUNT in bubblewrap (a path under /tmp
    would be hidden by the sandbox's own /tmp), as they are in the `process` sandbox."""
    if kind == "bubblewrap":
        return [f"{IMPORTS_MOUNT}/{index}" for index in range(len(import_paths))]
    return list(import_paths)


def bwrap_command(python: str, scratch_mb: int, import_paths: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line (documented in the module docstring); `import_paths` are bound
    read-only under IMPORTS_MOUNT."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "bubblewrap (`bwrap`) is not installed: run `make sandbox-deps` or `apt-get install bubblewrap`, "
            'or set sandbox = "process" in the recipe to accept the weaker rlimit-only sandbox'
        )
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"]
    cmd += ["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--hostname", "sandbox"]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    interpreter = os.path.realpath(python)
    prefix = os.path.dirname(os.path.dirname(interpreter))
    if not interpreter.startswith("/usr/"):
        cmd += ["--ro-bind", prefix, prefix]
    for path, inside in zip(import_paths, seen_import_paths("bubblewrap", import_paths)):
        cmd += ["--ro-bind", path, inside]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(scratch_mb << 20), "--tmpfs", "/tmp"]
    # The sandbox's own sysctls (its PID namespace's pid_max, its IPC limits) would carry over to
    # the next sample: read-only.
    cmd += ["--ro-bind", "/proc/sys", "/proc/sys"]
    # multiprocessing's semaphores live in /dev/shm: a private one of 8 MB (or scratch_mb if smaller).
    cmd += ["--size", str(min(scratch_mb, 8) << 20), "--tmpfs", "/dev/shm"]
    # Only the size-limited /tmp and /dev/shm stay writable: bubblewrap's root and /dev are unlimited tmpfs.
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
    if _bwrap_supports(bwrap, "--disable-userns"):  # bubblewrap >= 0.8: no nested user namespaces
        cmd += ["--disable-userns"]
    # The runner is the PID namespace's init, not bubblewrap's reaper: the reaper held the host's
    # request and reply pipes and could be traced, so a sample that exec'd a program took the reply
    # pipe from it (pidfd_getfd) and wrote verdicts for itself and the samples after it. As init,
    # the (not dumpable) runner is also out of reach of the sample's signals.
    cmd += ["--as-pid-1"]
    runner = [interpreter, "-I", "-S", "-c", RUNNER_SOURCE, "/tmp", "pidns", "/dev/shm"]  # wiped per sample
    return cmd + ["--chdir", "/tmp", "--", *runner]


class Runner:
    """One warm sandboxed interpreter; runs one sample at a time; restarts itself after a crash."""

    def __init__(self, kind: str, python: str, scratch_mb: int, import_paths: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.python = python
        self.scratch_mb = scratch_mb
        self.import_paths = import_paths
        self.proc: subprocess.Popen | None = None
        self.scratch: str | None = None
        self._buffer = b""

    def _spawn(self) -> None:
        popen_args: dict[str, Any] = {
            "stdin": subprocess.PIPE,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "start_new_session": True,
            **_drop_privileges(),
        }
        if self.kind == "bubblewrap":
            cmd = bwrap_command(self.python, self.scratch_mb, self.import_paths)
            env = {"PATH": "/usr/bin:/bin"}
        else:
            self.scratch = tempfile.mkdtemp(prefix="gristmill-sandbox-")
            if os.geteuid() == 0:
                os.chown(self.scratch, NOBODY, NOBODY)
            cmd = [self.python, "-I", "-S", "-c", RUNNER_SOURCE, self.scratch, "plain"]
            env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
            popen_args["cwd"] = self.scratch
        self.proc = subprocess.Popen(cmd, env=env, **popen_args)
        self._buffer = b""

    def _start(self) -> None:
        """Start the runner and wait for its `ready` line; one more try, then SandboxError."""
        problems = []
        for _ in range(2):
            self._spawn()
            line = self._read_line(STARTUP_TIMEOUT_S)
            if line == b"ready":
                return
            if line == b"timeout":
                problems.append(f"no `ready` within {STARTUP_TIMEOUT_S:g}s")
            else:
                problems.append(self._exit_report("exited before `ready`"))
            self.close()
        raise StartError(f"the {self.kind} sandbox runner could not start: {' | '.join(problems)}")

    def run(self, request: dict[str, Any], limits: Limits) -> RunResult:
        """Send one sample to the runner and wait for its reply; a runner that died is restarted."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        line = json.dumps({**request, **limits.request_fields()}) + "\n"
        sent = time.monotonic()
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died("its input pipe broke", sent)
        reply = self._read_line(limits.backstop_s + WATCHDOG_GRACE_S)
        if reply is None:
            return self._died("it exited mid-sample", sent)
        if reply == b"timeout":
            self.close()
            return RunResult("runner_hung", elapsed_s=limits.backstop_s + WATCHDOG_GRACE_S)
        try:
            data = json.loads(reply)
        except ValueError:  # not the runner's (it writes JSON lines only): a fault, retried
            self.close()
            return RunResult(
                "runner_died", elapsed_s=time.monotonic() - sent, stderr="its reply was not JSON"
            )
        if not data["clean"]:
            self.close()  # the runner exits: its /tmp holds something the sample made undeletable
        return RunResult(
            outcome=data["outcome"] or "finished",
            status=data["status"],
            exit_code=data["exit_code"],
            signal=data["signal"],
            elapsed_s=data["elapsed"],
            waited_s=data["waited"],
            cpu_s=data["cpu"],
            runner_cpu_s=data["runner_cpu"],
            stdout=data["stdout"],
            stderr=data["stderr"],
        )

    def _read_line(self, timeout_s: float) -> bytes | None:
        """One reply line; None when the runner died, b"timeout" when it stopped answering."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout_s)
            if not ready:
                return b"timeout"
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exit_report(self, what: str) -> str:
        """`what`, how the runner ended, and the start of its stderr (bubblewrap's own errors)."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"{what}; its output closed but it did not exit"
        if code < 0 or code > 128:  # bubblewrap reports its child's death by signal N as 128 + N
            ended = f"killed by {signal_name(abs(code) % 128)}"
        else:
            ended = f"exit status {code}"
        detail = self.proc.stderr.read(2000).decode("utf-8", "replace").strip() if self.proc.stderr else ""
        return f"{what} ({ended}){': ' + detail if detail else ''}"

    def _died(self, how: str, sent: float) -> RunResult:
        """The runner vanished mid-sample; report how (the pool retries on a fresh runner)."""
        report = self._exit_report(f"the runner died: {how}")
        self.close()
        return RunResult("runner_died", elapsed_s=time.monotonic() - sent, stderr=report)

    def close(self) -> None:
        """Kill the runner's whole process group and remove its scratch folder."""
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    try:
                        stream.close()
                    except BrokenPipeError:  # unsent input to a runner that is gone
                        pass
            try:
                self.proc.wait(timeout=1)  # end of input: the runner exits by itself
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # its group: bubblewrap and everything inside
                self.proc.wait()
            self.proc = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


class SandboxPool:
    """`workers` warm runners shared by threads; `run_many` runs samples in parallel."""

    def __init__(
        self,
        kind: str = "bubblewrap",
        workers: int = 0,
        limits: Limits | None = None,
        python: str | None = None,
        scratch_mb: int = 64,
        import_paths: tuple[str, ...] = (),
    ) -> None:
        if kind not in SANDBOXES:
            raise SandboxError(f"unknown sandbox {kind!r} (known: {', '.join(SANDBOXES)})")
        if kind == "bubblewrap":
            bwrap_command(
                python or default_python(), scratch_mb
            )  # fails early and clearly if bwrap is missing
        else:
            log.warning(
                "sandbox = 'process': untrusted code runs with rlimits only, without namespaces; "
                "it can read the host filesystem and reach the network"
            )
        self.kind = kind
        self.limits = limits or Limits()
        self.workers = workers or usable_cores()
        self._idle: queue.Queue[Runner] = queue.Queue()
        self.import_paths = seen_import_paths(kind, import_paths)  # put first on the sample's sys.path
        self._all = [
            Runner(kind, python or default_python(), scratch_mb, import_paths) for _ in range(self.workers)
        ]
        for runner in self._all:
            self._idle.put(runner)
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
        self._broken: StartError | None = None

    def run(
        self, solution: str, tests: str, entry_point: str | None = None, timeout_s: float | None = None
    ) -> RunResult:
        """Run one sample on the next idle runner (blocks while all are busy); `timeout_s` may shorten
        the pool's timeout for this sample."""
        limits = self.limits
        if timeout_s is not None and timeout_s < limits.timeout_s:
            limits = dataclasses.replace(limits, timeout_s=timeout_s)
        request = {
            "solution": solution,
            "tests": tests,
            "entry_point": entry_point,
            "import_paths": self.import_paths,
        }
        runner = self._idle.get()
        try:
            if self._broken is not None:  # do not wait for every later sample's start-up to fail too
                raise StartError(f"{self._broken} (an earlier sample's attempt)")
            return self._run_twice(runner, request, limits)
        except StartError as error:
            self._broken = self._broken or error
            raise
        finally:
            self._idle.put(runner)

    def _run_twice(self, runner: Runner, request: dict[str, Any], limits: Limits) -> RunResult:
        """One run, and one more on a fresh runner after an infrastructure outcome."""
        first = runner.run(request, limits)
        if first.outcome not in INFRASTRUCTURE:
            return first
        log.warning("sandbox fault (%s); retrying the sample on a fresh runner", first.describe())
        runner.close()
        second = runner.run(request, limits)
        attempts = (first.describe(), second.describe())
        if second.outcome not in INFRASTRUCTURE:
            return dataclasses.replace(second, attempts=attempts[:1])
        if first.outcome in SAMPLE_KILLED_RUNNER and second.outcome in SAMPLE_KILLED_RUNNER:
            return dataclasses.replace(second, outcome="runner_died", attempts=attempts)
        runner.close()
        raise SandboxError(f"sandbox fault persisted on a fresh runner: {' | '.join(attempts)}")

    def run_many(self, jobs: list[tuple]) -> list[RunResult]:
        """Run jobs (the arguments of `run`) in parallel; results in job order."""
        return list(self._executor.map(lambda job: self.run(*job), jobs))

    def close(self) -> None:
        """Stop every runner."""
        self._executor.shutdown(wait=True)
        for runner in self._all:
            runner.close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
