"""The sandbox pool: isolation between samples, limits, capture, the explicit weak fallback."""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from synthesis import sandbox as sandbox_module
from synthesis.code_verifier import classify
from synthesis.sandbox import NOBODY, Limits, SandboxError, SandboxPool

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox-deps)"
)


@pytest.fixture(scope="module")
def pool():
    with SandboxPool("bubblewrap", workers=2, limits=Limits(timeout_s=1.0, max_output_bytes=4096)) as sandbox:
        yield sandbox


@needs_bwrap
def test_each_sample_gets_a_fresh_scratch_folder_and_process(pool):
    first = pool.run(
        "import os\nopen('left_behind.txt', 'w').write('x')\nprint(os.getcwd(), os.getpid())", "assert True"
    )
    second = pool.run("import os\nprint(os.listdir('.'))", "assert True")
    assert first.passed and second.passed
    assert second.stdout.strip() == "[]"


@needs_bwrap
def test_nothing_carries_over_even_from_undeletable_files_outside_the_scratch_folder(pool):
    leave = "import os\nos.makedirs('/tmp/keep/inner')\nopen('/tmp/keep/inner/f', 'w').write('x')\nos.chmod('/tmp/keep', 0o500)"
    assert pool.run(leave, "assert True").passed
    after = pool.run_many([("import os\nprint(sorted(os.listdir('/tmp')))", "assert True", None)] * 4)
    # Each sample sees only its own fresh scratch folder in /tmp.
    assert all(re.fullmatch(r"\['s\d+'\]", r.stdout.strip()) for r in after), [r.stdout for r in after]


@needs_bwrap
def test_multiprocessing_runs_when_the_process_limit_allows_and_dev_shm_is_private_and_bounded():
    pool_program = (
        "import multiprocessing\ndef square(x):\n    return x * x\ndef squares(xs):\n"
        "    with multiprocessing.Pool(2) as workers:\n        return workers.map(square, xs)\n"
    )
    with SandboxPool(
        "bubblewrap", workers=1, limits=Limits(max_processes=8)
    ) as sandbox:  # 2 processes + 3 pool threads
        assert sandbox.run(pool_program, "assert squares([1, 2, 3]) == [1, 4, 9]").passed
        fill = sandbox.run("open('/dev/shm/big', 'wb').write(b'x' * (9 << 20))", "assert True")
        assert fill.status["error"] == "OSError" and "No space left" in fill.status["message"]
        assert sandbox.run("open('/dev/shm/left', 'w').write('x')", "assert True").passed
        after = sandbox.run("import os\nprint(os.listdir('/dev/shm'))", "assert True")
        assert after.stdout.strip() == "[]"


@needs_bwrap
def test_environment_is_empty_and_the_system_is_read_only(pool):
    result = pool.run(
        "import os\nprint(sorted(os.environ))\nprint(sorted(os.listdir('/')))\ntry:\n"
        "    open('/usr/x', 'w')\nexcept OSError as e:\n    print(type(e).__name__)",
        "assert True",
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "['LANG', 'PATH', 'TMPDIR']"
    assert (
        "home" not in lines[1] and "root" not in lines[1] and "work" not in lines[1] and "etc" not in lines[1]
    )
    assert lines[2] in ("OSError", "PermissionError")


# A program the sample execs (no audit hook there) asks for System V shared memory, then tries to
# lower the sandbox's pid_max for the samples after it.
SYSTEM_V_AND_SYSCTL = (
    "import os\nos.execv('/usr/bin/python3', ['python3', '-c', '''\n"
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "print(libc.shmget(0, 1 << 20, 0o1600), ctypes.get_errno())\n"
    "try:\n    open('/proc/sys/kernel/pid_max', 'w').write('301')\nexcept OSError as error:\n"
    "    print(error.errno)\n'''])\n"
)


@needs_bwrap
def test_system_v_ipc_and_the_sandboxs_sysctls_are_refused(pool):
    """Before, a sample held 600 MB of host memory in shared-memory segments that outlived it (none
    of its limits counts them), and could lower pid_max for the samples after it."""
    result = pool.run(SYSTEM_V_AND_SYSCTL, "assert True")
    assert result.stdout.split() == ["-1", str(errno.EPERM), str(errno.EROFS)]


@needs_bwrap
def test_output_is_captured_and_capped(pool):
    result = pool.run("import sys\nprint('a' * 3000)\nprint('b' * 3000, file=sys.stderr)", "assert True")
    assert result.outcome == "output_limit"
    assert len(result.stdout) + len(result.stderr) <= 2 * 4096


@needs_bwrap
def test_run_many_keeps_job_order(pool):
    jobs = [(f"x = {i}", f"assert x == {i}\nprint(x)", None) for i in range(12)]
    assert [r.stdout.strip() for r in pool.run_many(jobs)] == [str(i) for i in range(12)]


def kill_runners_mid_sample(monkeypatch, times: int) -> None:
    """The next `times` samples' runners are killed (their whole process group, from the host)
    while the sample runs: a sample cannot kill its runner, the PID namespace's init."""
    left = [times]
    send = sandbox_module.Runner.run

    def run(self, request, limits):
        if left[0] > 0:
            left[0] -= 1
            if self.proc is None or self.proc.poll() is not None:  # started here: the kill is mid-sample
                self.close()
                self._start()
            read_line = self._read_line

            def killed_first(timeout_s):
                del self._read_line  # once: the class's again
                os.killpg(self.proc.pid, 9)
                return read_line(timeout_s)

            self._read_line = killed_first
        return send(self, request, limits)

    monkeypatch.setattr(sandbox_module.Runner, "run", run)


@needs_bwrap
def test_a_sample_cannot_kill_its_runner(pool):
    """Its parent is the PID namespace's init, which a signal from inside does not reach."""
    result = pool.run("import os\nos.kill(os.getppid(), 9)\nprint(os.getppid())", "assert True")
    assert result.passed and result.stdout.split() == ["1"]


@needs_bwrap
def test_a_killed_runner_is_restarted(pool, monkeypatch):
    kill_runners_mid_sample(monkeypatch, 2)
    assert pool.run("import time\ntime.sleep(0.5)", "assert True").outcome == "runner_died"
    assert all(r.passed for r in pool.run_many([("x = 1", "assert x == 1", None)] * 4))


@needs_bwrap
def test_a_sample_whose_runner_dies_once_is_retried_on_a_fresh_runner_and_admitted(monkeypatch):
    with SandboxPool("bubblewrap", workers=1, limits=Limits(timeout_s=1.0)) as one:
        assert one.run("x = 1", "assert x == 1").passed  # the runner is warm
        kill_runners_mid_sample(monkeypatch, 1)
        result = one.run("import time\ntime.sleep(0.5)", "assert True")
    assert result.passed
    assert len(result.attempts) == 1 and result.attempts[0].startswith("runner_died")


@needs_bwrap
def test_a_sample_whose_fresh_runner_dies_too_is_rejected_crashed_with_both_attempts(pool, monkeypatch):
    kill_runners_mid_sample(monkeypatch, 2)
    result = pool.run("import time\ntime.sleep(0.5)", "assert True")
    assert result.outcome == "runner_died" and len(result.attempts) == 2
    verdict = classify(result, 1.0)
    assert verdict.reason == "crashed"
    assert verdict.detail.count("runner_died") == 2 and "SIGKILL" in verdict.detail


@needs_bwrap
def test_a_reply_that_is_not_json_is_a_runner_fault_not_an_error(pool, monkeypatch):
    """A sample that reached the reply pipe could write a partial line: the next reply did not
    parse, and `json.loads` raised out of `check_batch`."""
    read_line = sandbox_module.Runner._read_line
    replies = iter([b'{"outcome": nul'])

    def garbled_once(self, timeout_s):
        line = read_line(self, timeout_s)
        return next(replies, line) if line.startswith(b"{") else line

    monkeypatch.setattr(sandbox_module.Runner, "_read_line", garbled_once)
    result = pool.run("x = 1", "assert x == 1")
    assert result.passed and len(result.attempts) == 1
    assert result.attempts[0].startswith("runner_died") and result.attempts[0].endswith(
        "its reply was not JSON"
    )


@needs_bwrap
def test_a_sandbox_that_cannot_start_is_an_error_not_a_verdict():
    with SandboxPool("bubblewrap", workers=1, python="/nonexistent/bin/python3") as broken:
        with pytest.raises(SandboxError, match="could not start"):
            broken.run("x = 1", "assert x == 1")


def test_a_runner_that_hangs_at_start_up_is_replaced_then_an_error(monkeypatch):
    monkeypatch.setattr(sandbox_module, "STARTUP_TIMEOUT_S", 0.5)
    folder = tempfile.mkdtemp()
    try:
        os.chmod(folder, 0o755)  # the runner may run as nobody
        hanging_python = Path(folder) / "python"
        hanging_python.write_text("#!/bin/sh\nexec sleep 30\n")
        hanging_python.chmod(0o755)
        started = time.monotonic()
        with SandboxPool("process", workers=1, python=str(hanging_python)) as hanging:
            with pytest.raises(SandboxError, match="no `ready` within 0.5s.*no `ready` within 0.5s"):
                hanging.run("x = 1", "assert x == 1")
            failed_at = time.monotonic()
            with pytest.raises(SandboxError, match="an earlier sample's attempt"):
                hanging.run("x = 2", "assert x == 2")  # at once: the pool is known not to start
            assert time.monotonic() - failed_at < 0.4
        assert time.monotonic() - started < 10
    finally:
        shutil.rmtree(folder)


@needs_bwrap
@pytest.mark.skipif(
    not os.path.exists("/proc/self/schedstat"),
    reason="the kernel reports no run-queue delay (CONFIG_SCHED_INFO)",
)
def test_time_limits_count_the_samples_own_time_not_the_machines_load():
    """Four busy loops share the sandbox's one CPU: a sample needing 0.5 s of CPU (on its main thread
    or a worker thread) takes > 0.8 s of wall."""
    cpu = min(os.sched_getaffinity(0))
    hog = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(4)]
    affinity = os.sched_getaffinity(0)
    busy = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.5:\n    pass\n"
    in_a_thread = "import threading\nworker = threading.Thread(target=exec, args=(BUSY,))\nworker.start()\nworker.join()\n"
    try:
        os.sched_setaffinity(0, {cpu})  # the runner started from this thread inherits it
        limits = Limits(timeout_s=0.8, max_processes=2)
        with SandboxPool("bubblewrap", workers=1, limits=limits) as loaded:
            result = loaded.run(busy, "assert True")
            threaded = loaded.run(in_a_thread.replace("BUSY", repr(busy)), "assert True")
            looping = loaded.run("while True:\n    pass\n", "assert True")
    finally:
        os.sched_setaffinity(0, affinity)
        for process in hogs:
            process.kill()
            process.wait()
    assert result.passed, result
    assert result.elapsed_s > 0.8 and result.waited_s > 0.3  # a wall-clock limit would have rejected it
    assert threaded.passed, threaded  # the worker thread's wait counts (before, only the main thread's)
    assert looping.outcome == "timeout"
    assert classify(looping, 0.8).reason == "timeout"


# Run by a program the sample execs (no audit hook there), as the sandbox's user: each access
# prints what it got. The report's nonce is in the runner's memory and in the sample's.
EXECED_PROGRAM = (
    "import os\n"
    "def attempt(name, action):\n"
    "    try:\n        action()\n        print(name, 'reached', flush=True)\n"
    "    except OSError as error:\n        print(name, type(error).__name__, flush=True)\n"
    "attempt('report_pipe', lambda: os.write(1000, b'forged'))\n"
    "attempt('parent_memory', lambda: open('/proc/%d/mem' % os.getppid(), 'rb'))\n"
)
EXEC_IT = "import os, sys, time\nos.execv(sys.executable, [sys.executable, '-I', '-S', '-c', PROGRAM])\n"
# The same from a fork: its parent, the sample's process, holds the pipe and the nonce.
FORK_AND_EXEC_IT = (
    "import os, sys, time\nif os.fork() == 0:\n"
    "    os.execv(sys.executable, [sys.executable, '-I', '-S', '-c', PROGRAM])\ntime.sleep(1)\n"
)


@needs_bwrap
@pytest.mark.parametrize("launch", [EXEC_IT, FORK_AND_EXEC_IT], ids=["from_runner", "from_sample"])
def test_a_program_the_sample_execs_cannot_reach_the_report_pipe_or_the_verifiers_memory(launch):
    with SandboxPool("bubblewrap", 1, Limits(timeout_s=2.0, max_processes=4)) as sandbox:
        result = sandbox.run(f"PROGRAM = {EXECED_PROGRAM!r}\n" + launch, "assert True")
    assert result.stdout.split("\n")[:2] == ["report_pipe OSError", "parent_memory PermissionError"]


def test_process_sandbox_only_by_name_and_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING), SandboxPool("process", 1, Limits(timeout_s=0.5)) as weak:
        assert weak.run("def f():\n    return 2", "assert f() == 2").passed
        assert weak.run("while True:\n    pass", "assert True").outcome == "timeout"
        assert weak.run("x = bytearray(10**10)", "assert True").status["error"] == "MemoryError"
    assert any("rlimits only" in record.getMessage() for record in caplog.records)
    with pytest.raises(SandboxError, match="unknown sandbox"):
        SandboxPool("none")


def test_the_process_sandbox_kills_what_a_sample_detached_before_the_next_sample():
    detach = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        print(os.getpid(), flush=True)\n        time.sleep(60)\n    os._exit(0)\ntime.sleep(0.2)\n"
    )
    with SandboxPool("process", 1, Limits(timeout_s=2.0, max_processes=4)) as weak:
        result = weak.run(detach, "assert True")
        assert result.passed
        detached = int(result.stdout.split()[0])
        assert not Path(f"/proc/{detached}").exists()


def _sandbox_processes() -> set[int]:
    """Live (non-zombie) processes of the sandbox uid on the host."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except (OSError, ValueError):
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(NOBODY)] and not fields.get(
            "State", ""
        ).strip().startswith("Z"):
            found.add(int(entry))
    return found


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox uid differs from the host's only when run as root")
def test_closing_the_pool_leaves_no_process_behind():
    before = _sandbox_processes()
    with SandboxPool("bubblewrap", workers=2, limits=Limits(timeout_s=1.0, max_processes=4)) as sandbox:
        daemon = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
        assert all(r.passed for r in sandbox.run_many([(daemon, "assert True", None)] * 2))
        assert _sandbox_processes() - before  # the runners are up
    deadline = time.monotonic() + 5
    while _sandbox_processes() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sandbox_processes() - before


ADD = "def add(a, b):\n    return a + b\n"
ADD_TESTS = "assert add(1, 2) == 3\n"


@needs_bwrap
@pytest.mark.parametrize(
    "change",
    [
        "import resource\nresource.prlimit(1, resource.RLIMIT_AS, (300 << 20, 300 << 20))\n",
        "import os\nos.setpriority(os.PRIO_PROCESS, 1, 19)\nos.sched_setaffinity(1, {0})\n",
        "import os\nos.chmod('/tmp', 0o777)\n",
        "import os\nos.setxattr('/tmp', 'user.note', b'from an earlier sample')\n",
    ],
    ids=["rlimit", "scheduling", "mode", "xattr"],
)
def test_what_a_sample_changes_of_its_runner_does_not_reach_the_next_sample(change):
    """The runner forks every later sample: an address-space limit a sample set on it (`prlimit`
    needs no ptrace) made every later correct sample crash, for the pool's life."""
    with SandboxPool("bubblewrap", workers=1, limits=Limits(timeout_s=2.0)) as one:
        results = [one.run(source, ADD_TESTS) for source in (ADD, ADD + change, ADD, ADD)]
        seen = one.run(
            "import os, resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[1] != 300 << 20,"
            " os.getpriority(os.PRIO_PROCESS, 1), oct(os.stat('/tmp').st_mode & 0o777), os.listxattr('/tmp'))",
            "assert True",
        )
    assert [r.passed for r in results] == [True] * 4
    assert seen.stdout.strip().split(maxsplit=3) == ["True", "0", oct(0o755), "[]"]


@needs_bwrap
def test_a_sample_may_ignore_signals_and_cannot_interrupt_its_runner(pool):
    """`signal.signal(SIGPIPE, SIG_DFL)` raised TypeError (an IntEnum to the raw call), so
    `multiprocessing.Manager()` failed; and a SIGINT to pid 1 killed the runner."""
    ignore = "import signal\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
    assert pool.run(ignore + ADD, ADD_TESTS).passed
    interrupt = "import os, signal\nos.kill(1, signal.SIGINT)\n"
    result = pool.run(interrupt + ADD, ADD_TESTS)
    assert result.passed and result.attempts == ()


@needs_bwrap
def test_keys_are_refused_a_sample():
    """A key in the user keyring outlived its sample (add_key from an exec'd program)."""
    add_key = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.syscall(248, b'user', b'note', b'secret', 6, -4), ctypes.get_errno())\n"
    )
    exec_python = f"import os\nos.execv('/usr/bin/python3', ['python3', '-c', {add_key!r}])\n"
    with SandboxPool("bubblewrap", workers=1, limits=Limits(timeout_s=2.0)) as one:
        result = one.run(exec_python, "assert True")
    if os.uname().machine == "x86_64":
        assert result.stdout.split() == ["-1", str(errno.EPERM)]


@needs_bwrap
def test_a_process_the_sample_forks_and_that_leaves_by_sys_exit_does_not_report(pool):
    """It unwound into the verifier's handler and wrote a report of its own beside the sample's:
    the verdict was `crashed` though the tests passed."""
    forking = "import os, sys\ndef add(a, b):\n    pid = os.fork()\n    if pid == 0:\n        sys.exit(0)\n    os.waitpid(pid, 0)\n    return a + b\n"
    limits = Limits(timeout_s=2.0, max_processes=2)
    with SandboxPool("bubblewrap", workers=1, limits=limits) as two:
        assert two.run(forking, ADD_TESTS).passed


@needs_bwrap
def test_orphans_a_sample_leaves_are_reaped_while_it_runs():
    """Their zombies counted against `max_processes`: `sh -c 'true &'` six times under 4 failed."""
    orphans = (
        "import subprocess\nfor _ in range(6):\n    subprocess.run(['sh', '-c', 'true &'], check=True)\n"
    )
    with SandboxPool("bubblewrap", workers=1, limits=Limits(timeout_s=5.0, max_processes=4)) as four:
        result = four.run(orphans, "assert True")
    assert result.passed, result.stderr
