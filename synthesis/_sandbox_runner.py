"""The zygote that runs inside the sandbox: one persistent interpreter, one fresh forked child per sample.

Stdlib-only: `synthesis.sandbox` passes this file's source to `python -I -S -c`, after code that
loads `_test_guard.py` (the checks against gamed tests), `_frame_guard.py` (the verifier's state
out of the sample's reach), `_test_run.py` (tests only defined) and `_runner_isolation.py` (this
process's protection, the seccomp filter, what samples could leave behind) as the modules it imports, so
nothing from the host is imported or bound. Protocol: one JSON request per line on fd 0, one JSON reply per
line on fd 1. Each sample runs in a child forked from this warm interpreter (no start-up
cost), in its own fresh scratch folder, with rlimits, an empty environment and no inherited
descriptors except its stdout/stderr pipes and a status pipe. After every sample, everything but
this process is killed (inside a private PID namespace `kill(-1)` reaches exactly the sandbox).

Time limits measure the sample's own time, not the machine's load: `own = wall - time spent waiting
for a CPU` (the run-queue delay of its longest-waiting thread, from /proc/PID/task/*/schedstat), plus
RLIMIT_CPU on its CPU time.
A generous wall-clock backstop (`backstop`) ends a sample that a starved machine could not run; the
host treats that as an infrastructure fault, not a verdict. The first line written is `ready`.
"""

import builtins
import json
import linecache
import os
import resource
import select
import shutil
import signal
import sys
import time
import types

import _frame_guard  # loaded by synthesis.sandbox ahead of this file, as the three below
import _runner_isolation
import _test_guard
import _test_run

# not for samples to import (the runner's own globals are not either)
del (
    sys.modules["_test_guard"],
    sys.modules["_frame_guard"],
    sys.modules["_test_run"],
    sys.modules["_runner_isolation"],
)

MiB = 1024 * 1024
CHUNK = 65536
STATUS_BYTES = 4096  # of the child's report pipe kept (a report is one line of 2 KB at most)
# Address space kept above the limit so the child can still report a MemoryError.
REPORT_RESERVE = 32 * MiB
# Thread counts of the numerical libraries samples may import from `import_paths` (OpenBLAS, OpenMP, MKL).
SINGLE_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Modules that tests commonly import, loaded once here so forked children get them for free; what
# they hold may not be replaced by the solution (`math.isclose = lambda *a, **k: True`).
WARM_MODULES = (
    "bisect",
    "cmath",
    "collections",
    "copy",
    "decimal",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "typing",
)


def _set_limits(req, base_tasks):
    """Apply the per-sample rlimits; processes counts tasks of this uid in the sandbox."""
    cpu = int(req["timeout"]) + 1
    mem = int(req["memory_mb"]) * MiB
    limits = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, mem, mem + REPORT_RESERVE),
        (resource.RLIMIT_FSIZE, int(req["max_file_mb"]) * MiB, int(req["max_file_mb"]) * MiB),
        (resource.RLIMIT_NOFILE, int(req["max_open_files"]), int(req["max_open_files"])),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if base_tasks is not None:
        nproc = base_tasks + int(req["max_processes"])
        limits.append((resource.RLIMIT_NPROC, nproc, nproc))
    for which, soft, hard in limits:
        resource.setrlimit(which, (soft, hard))


def _reporter(status_fd, nonce, write=os.write):
    """The child's report of how far the sample got, made before any of the sample's code runs: the
    nonce goes to no function a sample could replace (a solution that swapped `json.dumps`,
    `os.write` or a builtin would see it and report passed tests), only to methods of str and bytes
    taken now. One line: nonce, phase, then the error's class and message as hex (tab-separated;
    `_read_status`)."""

    kind, text_type, encode, to_hex, join = type, str, str.encode, bytes.hex, "\t".join  # builtins too
    me, current = os.getpid(), os.getpid

    def report(phase, error="", message=""):
        if current() != me:  # a process the sample forked, leaving by sys.exit: its report is not this one
            return
        fields = [nonce, phase]
        for text in (error, message):
            text = text if kind(text) is text_type else "(not a string)"
            fields.append(to_hex(encode(text[:500], "utf-8", "replace")[:500]))
        write(status_fd, encode(join(fields)))

    return report


def _read_status(data, nonce):
    """The child's report (`_reporter`) as a dict, a forgery if another nonce wrote it, or None."""
    try:
        seen, phase, error, message = data.decode().split("\t")
        error, message = (bytes.fromhex(text).decode("utf-8", "replace") for text in (error, message))
        report = {"phase": phase, "error": error, "message": message}
    except ValueError:
        return None
    if seen != nonce:
        return {"phase": "forged", "error": "", "message": "status written by the sample"}
    return report


def _run_child(req, scratch, out_w, err_w, status_fd, nonce, base_tasks, guards):
    """In the forked child: isolate, limit, then run solution, tests and check(entry_point). What
    ends it and reports is taken before the sample runs (it may replace `os._exit`, `json`)."""
    leave, gamed = os._exit, _test_guard.GamedTests
    watched, frame_users, intact = guards
    os.chdir(scratch)
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    report = _reporter(os.dup2(status_fd, 1000, inheritable=False), nonce)  # not a program it execs
    os.closerange(3, 1000)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "TMPDIR": scratch, "LANG": "C.UTF-8"})
    if req.get("import_paths"):  # numerical libraries start a thread per core, which max_processes counts
        os.environ.update(dict.fromkeys(SINGLE_THREAD_VARIABLES, "1"))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    sys.stdin = open(0, closefd=False)
    _set_limits(req, base_tasks)
    _frame_guard.guard_introspection(frame_users)
    phase = "compile_solution"
    # The solution runs as a module (its `if __name__ == "__main__":` demo or input() block does not
    # run, as in the HumanEval/MBPP harnesses); the tests run as the main program (unittest.main()).
    module = types.ModuleType("solution")
    module.__builtins__ = builtins
    namespace = module.__dict__
    tests_module = types.ModuleType("__main__")
    tests_namespace = tests_module.__dict__
    sys.modules["solution"] = module  # what pickle looks up for the solution's functions (multiprocessing)
    sys.path[:0] = req.get("import_paths", [])  # packages the recipe lets samples import
    sys.argv = ["tests.py"]
    try:
        solution = compile(req["solution"], "<solution>", "exec")
        # its source for `inspect.getsource` (tests that check how a function is written)
        linecache.cache["<solution>"] = (
            len(req["solution"]),
            None,
            req["solution"].splitlines(True),
            "<solution>",
        )
        phase = "compile_tests"
        tests = _test_guard.compile_tests(req["tests"])
        phase = "solution"
        imports = _test_guard.import_machinery()
        exec(solution, namespace)
        phase = "tests"
        # the builtins, the modules loaded, how modules are found, and unittest as the solution's
        # own code left them (unittest.main() takes its tests from a `load_tests` of the module's,
        # its options, as `-k`, from sys.argv)
        _test_guard.refuse_tampering(watched[0], imports)
        if "load_tests" in namespace:
            raise gamed("the solution defines load_tests, which chooses the tests unittest.main() runs")
        sys.argv = ["tests.py"]
        # The tests run in a module of their own, over a copy of the solution's names: a solution's
        # function (its __globals__) cannot reach the tests' functions or comparison helpers, to
        # call `check` with a spy that learns the expected answers.
        tests_namespace.update(namespace, __name__="__main__", **_test_guard.HELPERS)
        sys.modules["__main__"] = tests_module  # what unittest.main() and pickle look up
        before = dict(tests_namespace)
        try:
            exec(tests, tests_namespace)
        except SystemExit as exit_:
            # The tests' own `sys.exit()` ends them (unittest.main() returns here); from anywhere
            # else, asserts were skipped.
            if exit_.code not in (0, None):
                raise
            if not _test_guard.raised_by_tests(exit_):
                raise SystemExit(
                    f"SystemExit({exit_.code!r}) ended the tests early, not raised by the tests' own code"
                ) from None
        _test_run.run_defined_tests(tests_namespace, before, req["tests"], bool(_test_guard.UNITTEST_RUNS))
        _test_guard.refuse_failed_unittest()
        entry = req.get("entry_point")
        if entry and _test_run.tests_check(tests_namespace.get("check"), before.get("check")):
            phase = "check"
            if entry not in tests_namespace:
                raise NameError(f"entry point {entry!r} is not defined by the solution")
            check = tests_namespace.pop("check")  # out of the module the solution can import too
            check(tests_namespace[entry])
        phase = "tests"
        # the tests may replace builtins (`input`, to feed a program) or patch a module, not
        # change unittest's behaviour
        _test_guard.refuse_tampering(watched[1])
        sys.stdout.flush()
        sys.stderr.flush()
        if not intact():
            raise gamed("the sample replaced the verifier's own functions")
        report("ok")
        leave(0)
    except BaseException as exc:  # every outcome of untrusted code is reported, never raised
        try:
            namespace.clear()  # free what the sample allocated, and use the reserve to report
            tests_namespace.clear()
            resource.setrlimit(resource.RLIMIT_AS, resource.getrlimit(resource.RLIMIT_AS)[1:] * 2)
            # the tests may have caught a guard's exception and raised their own
            reported = _test_guard.GamedTests(_test_guard.FOUND[0]) if _test_guard.FOUND else exc
            report(phase, type(reported).__name__, str(reported))
        finally:
            leave(1)


def _kill_everything_else(child, in_pid_namespace):
    """Kill the sample's child and every process it left behind."""
    if in_pid_namespace:
        # Inside our own PID namespace kill(-1) reaches every process but init and us.
        for _ in range(100):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _reap()
            if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]:
                return
            time.sleep(0.001)
    else:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        # What the sample detached (setsid, a double fork) was reparented to this subreaper.
        for _ in range(100):
            _reap()
            children = _children()
            if not children:
                return
            for pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.001)


def _children():
    """Ids of this process's children, from /proc."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.isdigit() and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap_orphans(sample):
    """Reap the exited processes other than the sample that were left to this runner (the sandbox's
    init, or the process sandbox's subreaper), as each one ends (SIGCHLD): their zombies counted
    against the sample's `max_processes` (`sh -c 'true &'` six times under 4 failed: `Cannot fork`)."""
    while True:
        try:
            exited = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if exited is None or exited.si_pid == sample:
            return
        os.waitpid(exited.si_pid, 0)


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _run_delay(pid):
    """Seconds the longest-waiting thread of process `pid` has waited on a run queue (0 when the
    kernel does not report it): the sample's own time is its wall time less the wait of the thread
    it waited for, its main thread or a worker thread it joins (before, only the main thread's
    counted, and a worker thread's work timed out on a loaded machine)."""
    longest = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat", "rb") as stat:
                longest = max(longest, int(stat.read().split()[1]))
        except (OSError, IndexError, ValueError):
            continue
    return longest / 1e9


class Clock:
    """The sample's own time (wall minus the time it waited for a CPU) against its limits."""

    def __init__(self, pid, timeout, backstop):
        self.pid = pid
        self.start = time.monotonic()
        self.timeout = timeout
        self.backstop = backstop
        self.waited = 0.0

    def left(self):
        """(seconds left, the nearer limit): `timeout` for the sample's own time, `backstop` for wall."""
        wall = time.monotonic() - self.start
        self.waited = max(self.waited, _run_delay(self.pid))
        own_left, wall_left = self.timeout - (wall - self.waited), self.backstop - wall
        return (own_left, "timeout") if own_left <= wall_left else (wall_left, "backstop")


def run_one(req, scratch_root, seq, base_tasks, in_pid_namespace, other_writable, guards, runner_state):
    """Run one sample and return the reply dict (status, exit, timing, captured output)."""
    scratch = os.path.join(scratch_root, f"s{seq}")
    os.mkdir(scratch, 0o700)
    nonce = os.urandom(16).hex()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    st_r, st_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        leave = os._exit
        try:
            os.setsid()
            for fd in (out_r, err_r, st_r):
                os.close(fd)
            _run_child(req, scratch, out_w, err_w, st_w, nonce, base_tasks, guards)
        finally:
            leave(1)
    for fd in (out_w, err_w, st_w):
        os.close(fd)
    cap = int(req["max_output_bytes"])
    # Files and folders cost the kernel memory no rlimit bounds; counted on the sandbox's own tmpfs
    # mounts only (the `process` sandbox's scratch folder shares the host's filesystem).
    writable = (scratch_root, *other_writable) if in_pid_namespace else ()
    files_allowed = _files_on(writable) + int(req["max_files"])
    buffers = {out_r: bytearray(), err_r: bytearray(), st_r: bytearray()}
    total = 0
    clock = Clock(pid, float(req["timeout"]), float(req["backstop"]))
    outcome = None
    open_fds = set(buffers)
    status = None
    usage = None
    signal.signal(signal.SIGCHLD, lambda number, frame: _reap_orphans(pid))
    while open_fds:
        remaining, limit = clock.left()
        if remaining <= 0:
            outcome = limit
            break
        if _files_on(writable) > files_allowed:
            outcome = "file_limit"
            break
        if status is not None:
            # The child has exited; a descendant still holds its pipes: take what is there and stop.
            remaining = 0
        ready, _, _ = select.select(list(open_fds), [], [], min(remaining, 0.05))
        if not ready and status is not None:
            break
        if not ready:
            pid_done, child_status, child_usage = os.wait4(pid, os.WNOHANG)
            if pid_done:
                status, usage = child_status, child_usage
            continue
        for fd in ready:
            data = os.read(fd, CHUNK)
            if not data:
                open_fds.discard(fd)
                continue
            total += len(data)  # a report is 2 KB at most: more written to its pipe is output too
            kept = STATUS_BYTES if fd == st_r else cap
            buffers[fd] += data[: max(0, kept - len(buffers[fd]))]
            if total > cap:
                outcome = "output_limit"
        if outcome:
            break
    if outcome is None and status is None:
        # Output closed: give the child the rest of its time to exit.
        while True:
            pid_done, status, usage = os.wait4(pid, os.WNOHANG)
            if pid_done:
                break
            remaining, limit = clock.left()
            if remaining <= 0:
                outcome = limit
                break
            if _files_on(writable) > files_allowed:
                outcome = "file_limit"
                break
            time.sleep(0.0005)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    elapsed = time.monotonic() - clock.start
    exit_code = None
    signal_number = None
    if outcome is None:
        if os.WIFSIGNALED(status):
            signal_number = os.WTERMSIG(status)
        else:
            exit_code = os.WEXITSTATUS(status)
    _kill_everything_else(pid, in_pid_namespace)
    for fd in buffers:
        os.close(fd)
    clean = all([_wipe(root) for root in (scratch_root, *other_writable)])
    clean = clean and _runner_isolation.inherited_state((scratch_root, *other_writable)) == runner_state
    status_report = _read_status(bytes(buffers[st_r]), nonce)
    return {
        "outcome": outcome,
        "exit_code": exit_code,
        "signal": signal_number,
        "status": status_report,
        "elapsed": elapsed,
        "waited": clock.waited,
        "cpu": usage.ru_utime + usage.ru_stime if usage else None,
        "runner_cpu": _runner_cpu_delta(),
        "stdout": bytes(buffers[out_r]).decode("utf-8", "replace"),
        "stderr": bytes(buffers[err_r]).decode("utf-8", "replace"),
        "output_bytes": total,
        "clean": clean,
    }


def _runner_cpu_delta(last=[0.0]):  # noqa: B006 - the mutable default keeps the previous reading
    """This runner's own CPU time since the previous sample: the per-sample overhead of the pool."""
    now = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    delta, last[0] = now - last[0], now
    return delta


def _files_on(mounts):
    """Files and folders on the filesystems of `mounts`."""
    total = 0
    for mount in mounts:
        usage = os.statvfs(mount)
        total += usage.f_files - usage.f_ffree
    return total


def _wipe(root):
    """Empty the whole writable area, so nothing carries over to the next sample; False if it could not."""
    for entry in os.listdir(root):
        path = os.path.join(root, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    return not os.listdir(root)


def _count_tasks(uid):
    """Processes of `uid` visible here (init + this zygote inside a fresh PID namespace)."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
        except OSError:
            continue
    return count


def main():
    for name in WARM_MODULES:
        __import__(name)
    builtins.exit = builtins.quit = sys.exit  # what `site` (left out: -S) adds, for tests that end with them
    # (unittest and builtins as they are, code that may take frames, the runner's and guard's names)
    watched = _test_guard.guard_unittest([m for m in WARM_MODULES if m != "typing"])  # it compares nothing
    frame_users = _frame_guard.frame_users()
    guards = (
        watched,
        frame_users,
        _frame_guard.intact_check(
            [globals(), *map(vars, (_test_guard, _frame_guard, _test_run, _runner_isolation))]
        ),
    )
    scratch_root = sys.argv[1]
    in_pid_namespace = sys.argv[2] == "pidns" and os.getpid() <= 3
    other_writable = sys.argv[3:]  # emptied after every sample too (the sandbox's /dev/shm)
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as the sandbox's init, a sample's SIGINT is then lost
    # Tasks already counted against this uid in the sandbox (init + us), so the child's limit is relative.
    base_tasks = _count_tasks(os.getuid()) if in_pid_namespace or os.getuid() != 0 else None
    _runner_isolation.protect_runner()
    _runner_isolation.refuse_calls()
    runner_state = _runner_isolation.inherited_state((scratch_root, *other_writable))
    replies.write("ready\n")
    replies.flush()
    for seq, line in enumerate(requests):
        reply = run_one(
            json.loads(line),
            scratch_root,
            seq,
            base_tasks,
            in_pid_namespace,
            other_writable,
            guards,
            runner_state,
        )
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
        if not reply["clean"]:
            return  # the sample left something it made undeletable: the host starts a fresh runner


main()
