"""The `verify` stage: containment of hostile samples, reason codes, rendering, pass-through."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

import numpy
import pytest

from pipeline.document import Document
from pipeline.stages import STAGES, ConfigError, load_builtin_stages
from synthesis.verify import Verify

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap not installed (make sandbox-deps)"
)

SECRET = "gristmill-test-secret-4f1c"


def code(doc_id: str, solution: str, tests: str = "assert True", **extra) -> Document:
    return Document(
        doc_id, "", kind="code", metadata={"prompt": "", "solution": solution, "tests": tests, **extra}
    )


@pytest.fixture()
def listener():
    """A server on 127.0.0.1 that records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            accepted.append(conn.recv(100))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@needs_bwrap
def test_hostile_samples_are_contained_and_rejected_with_the_right_reason(
    stage, listener, tmp_path, monkeypatch
):
    port, accepted = listener
    monkeypatch.setenv("GRISTMILL_SECRET", SECRET)
    outside = tmp_path / "escaped.txt"
    home_file = os.path.join(os.path.expanduser("~"), "gristmill-sandbox-escape.txt")
    find_secret = (
        "import os\n"
        "found = [v for v in os.environ.values() if 'gristmill-test' in v]\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "    except OSError:\n"
        "        continue\n"
        "    found += [data] if b'gristmill-test' in data else []\n"
    )
    cases = {
        "fork_bomb": (code("fork_bomb", "import os\nwhile True:\n    os.fork()\n"), "crashed"),
        "infinite_loop": (code("infinite_loop", "while True:\n    pass\n"), "timeout"),
        "memory_bomb": (
            code("memory_bomb", "x = []\nwhile True:\n    x.append(' ' * 10**7)\n", "assert x"),
            "memory_limit",
        ),
        "sleep": (code("sleep", "import time\ntime.sleep(30)\n"), "timeout"),
        "network": (
            code(
                "network",
                f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 1).send(b'leak')\n",
            ),
            "crashed",
        ),
        "write_outside": (code("write_outside", f"open({str(outside)!r}, 'w').write('x')\n"), "crashed"),
        "write_home": (code("write_home", f"open({home_file!r}, 'w').write('x')\n"), "crashed"),
        "read_secret": (code("read_secret", find_secret, "assert found"), "tests_failed"),
        "kill_parent": (  # its parent is the runner, the PID namespace's init: the signal is lost
            code("kill_parent", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"),
            None,
        ),
        "subprocess": (
            code("subprocess", "import subprocess\nsubprocess.run(['/bin/echo', 'hi'], check=True)\n"),
            "crashed",
        ),
        "output_flood": (
            code("output_flood", "import sys\nfor _ in range(1000):\n    sys.stdout.write('x' * 10**6)\n"),
            "output_limit",
        ),
        "segfault": (code("segfault", "import ctypes\nctypes.string_at(0)\n"), "crashed"),
        "fd_exhaustion": (
            code("fd_exhaustion", "files = [open('/dev/null') for _ in range(100000)]\n", "assert files"),
            "crashed",
        ),
        "report_flood": (  # what the runner kept of the report pipe was unbounded (1.3 GB in 5 s)
            code("report_flood", "import os\nwhile True:\n    os.write(1000, b'x' * 65536)\n"),
            "output_limit",
        ),
        "file_flood": (  # each file costs kernel memory that no rlimit bounds
            code("file_flood", "import os\nfor i in range(10**7):\n    os.mkdir(f'/tmp/d{i}')\n"),
            "file_limit",
        ),
        "good": (code("good", "def add(a, b):\n    return a + b\n", "assert add(2, 3) == 5"), None),
    }
    docs = [doc for doc, _ in cases.values()]
    verdicts = stage.check_batch(docs)
    got = {doc.id: verdict.reason for doc, verdict in zip(docs, verdicts)}
    assert got == {name: reason for name, (_, reason) in cases.items()}
    assert [v.keep for v in verdicts].count(True) == 2  # good, and kill_parent's harmless tests
    assert accepted == []
    assert not outside.exists()
    assert not os.path.exists(home_file)
    # The pool survives (the killed runner restarted) and the next sample still runs.
    assert stage.check_batch([code("after", "x = 1", "assert x == 1")])[0].keep


@needs_bwrap
def test_reason_codes_for_wrong_code(stage):
    docs = [
        code("syntax", "def f(:\n    pass", "assert f()"),
        code("test_syntax", "def f():\n    return 1", "assert f( == 1"),
        code("failing", "def f():\n    return 1", "assert f() == 2"),
        code("raising", "def f():\n    return 1 / 0", "assert f() == 2"),
        code("no_tests", "def f():\n    return 1", "f()"),
        code("blank_tests", "def f():\n    return 1", "   "),
        code("exits_early", "import os\nos._exit(0)", "assert False"),
        code("sys_exit", "import sys\nsys.exit(0)", "assert False"),
        code(
            "exits_in_tests",  # the solution ends the run from inside a call: the later asserts never ran
            "import sys\ndef f(x):\n    if x > 1:\n        sys.exit()\n    return x",
            "assert f(1) == 1\nassert f(2) == 5",
        ),
        code(
            "check_fails", "def g(x):\n    return x", "def check(c):\n    assert c(1) == 2", entry_point="g"
        ),
        code(
            "missing_entry", "def g(x):\n    return x", "def check(c):\n    assert c(1) == 1", entry_point="h"
        ),
        code("ruby", "puts 1", "assert true", language="ruby"),
        code("no_solution", "  \n", "assert True"),  # trivially true tests admitted an empty solution
        code("untested", "def f():\n    return 2", "assert 1 + 1 == 2"),  # the tests never call f
        code("bad_entry", "def g(x):\n    return x", "def check(c):\n    assert c(1) == 1", entry_point=5),
    ]
    reasons = [v.reason for v in stage.check_batch(docs)]
    assert reasons == [
        "syntax_error",
        "syntax_error",
        "tests_failed",
        "tests_failed",
        "no_tests",
        "no_tests",
        "crashed",
        "crashed",
        "tests_failed",
        "tests_failed",
        "tests_failed",
        "unsupported",
        "no_solution",
        "no_tests",
        "unsupported",
    ]
    assert stage.check_batch([docs[13]])[0].detail == "the tests use nothing the solution defines (f)"
    exited = stage.check_batch([docs[8]])[0]
    assert exited.detail == (
        "tests: SystemExit: SystemExit(None) ended the tests early, not raised by the tests' own code"
    )


def test_source_too_large_or_nested_too_deep_to_parse_gets_a_verdict_not_an_error(stage):
    """The pre-sandbox checks parse solution and tests: a 100,000-deep `not` chain raised the
    parser's MemoryError out of the stage, and 3.2 MB of tests took 13 CPU-s and ~900 MB there."""
    docs = [
        code("deep", "def f():\n    return " + "not " * 100_000 + "1", "assert f()"),
        code("huge", "def f():\n    return 1", "assert f() == 1\n" * 70_000),
    ]
    deep, huge = stage.check_batch(docs)
    assert deep.reason == "memory_limit" and "nested too deep, to compile" in deep.detail
    assert huge.reason == "unsupported"
    assert huge.detail == (
        "solution and tests are 1,120,021 characters, over max_source_chars (1,048,576): not parsed or run"
    )


@needs_bwrap
def test_tests_may_end_the_run_themselves(stage):
    docs = [
        code("tests_exit", "def f(x):\n    return x", "import sys\nassert f(1) == 1\nsys.exit(0)"),
        code("tests_raise", "def f(x):\n    return x", "assert f(1) == 1\nraise SystemExit"),
    ]
    assert [v.keep for v in stage.check_batch(docs)] == [True, True]


@needs_bwrap
def test_only_a_check_of_the_tests_taking_the_candidate_is_called(stage):
    """With an entry point, any callable `check` was called on it: the solution's own helper named
    check (MBPP+'s Mbpp/56) or a tests' `check()` that takes no candidate failed correct code."""
    positives = "def check(x):\n    return x > 0\ndef positives(xs):\n    return [x for x in xs if check(x)]"
    add = "def add(a, b):\n    return a + b"
    docs = [
        code("solution_check", positives, "assert positives([-1, 2, 3]) == [2, 3]", entry_point="positives"),
        code("own_check", add, "def check():\n    assert add(1, 2) == 3\n\ncheck()", entry_point="add"),
        code("helper_check", add, "def check(args, want):\n    assert add(*args) == want\n\ncheck((1, 2), 3)",
             entry_point="add"),
        code("humaneval", add, "def check(candidate):\n    assert candidate(1, 2) == 3", entry_point="add"),
        code("humaneval_wrong", add, "def check(candidate):\n    assert candidate(1, 2) == 4", entry_point="add"),
    ]  # fmt: skip
    assert [v.reason for v in stage.check_batch(docs)] == [None, None, None, None, "tests_failed"]


@needs_bwrap
def test_tests_may_read_the_solutions_source_and_end_with_a_failing_status(stage):
    """`inspect.getsource` on a solution function raised OSError (no source for `<solution>`), and
    tests that report failure by `sys.exit(1)` were taken for tests without an assertion."""
    bubble = "def my_sort(xs):\n    out = list(xs)\n    out.sort()\n    return out\n"
    reads_source = (
        "import inspect\nassert 'sorted(' not in inspect.getsource(my_sort)\nassert my_sort([2, 1]) == [1, 2]"
    )
    exits = "import sys\nif my_sort([2, 1]) != [1, 2]:\n    sys.exit(1)"
    docs = [
        code("source", bubble, reads_source),
        code(
            "source_wrong", bubble.replace("out.sort()\n    return out", "return sorted(out)"), reads_source
        ),
        code("exits", bubble, exits),
        code("exits_wrong", bubble.replace("out.sort()", "pass"), exits),
    ]
    assert [v.reason for v in stage.check_batch(docs)] == [None, "tests_failed", None, "tests_failed"]


@needs_bwrap
def test_pytest_xunit_hooks_run_around_the_collected_tests(stage):
    """Only `setup_method` ran: tests set up by `setup_class`, `setup_module` or `setup_function`
    failed correct code (AttributeError, empty data)."""
    right, wrong = "def my_sort(xs):\n    return sorted(xs)", "def my_sort(xs):\n    return list(xs)"
    by_class = (
        "class TestSort:\n    @classmethod\n    def setup_class(cls):\n        cls.data = [3, 1, 2]\n"
        "    def test_sorted(self):\n        assert my_sort(self.data) == [1, 2, 3]\n"
        "    @classmethod\n    def teardown_class(cls):\n        del cls.data"
    )
    by_module = (
        "DATA = []\ndef setup_module(module):\n    DATA.extend([3, 1, 2])\n"
        "def setup_function(function):\n    DATA.append(0)\ndef teardown_function():\n    DATA.pop()\n"
        "def test_sorted():\n    assert my_sort(DATA) == [0, 1, 2, 3]\n"
        "def test_again():\n    assert my_sort(DATA) == [0, 1, 2, 3]"
    )
    docs = [code(f"{n}{i}", solution, tests) for i, solution in enumerate((right, wrong)) for n, tests in
            (("class", by_class), ("module", by_module))]  # fmt: skip
    assert [v.reason for v in stage.check_batch(docs)] == [None, None, "tests_failed", "tests_failed"]
    # a collected test that sets a global changed the namespace being walked: RuntimeError
    sets_global = "def test_a():\n    global SEEN\n    SEEN = my_sort([2, 1])\n\ndef test_b():\n    assert SEEN == [1, 2]"
    assert stage.check_batch([code("global", right, sets_global)])[0].keep


@needs_bwrap
def test_admitted_code_gets_its_training_rendering_and_keeps_kind(stage):
    prompt = 'def inc(x):\n    """Add one."""\n'
    humaneval_style = code(
        "he",
        prompt + "    return x + 1\n",
        "def check(c):\n    assert c(1) == 2",
        entry_point="inc",
        prompt=prompt,
    )
    mbpp_style = code("mbpp", "def inc(x):\n    return x + 1", ["assert inc(1) == 2"], prompt="Write inc.")
    plain = Document("web", "some web text")
    verdicts = stage.check_batch([humaneval_style, mbpp_style, plain])
    assert all(v.keep for v in verdicts)
    humaneval_kept, mbpp_kept = verdicts[0].doc, verdicts[1].doc
    assert humaneval_kept.text == prompt + "    return x + 1\n"
    assert mbpp_kept.text == "Write inc.\n\n```python\ndef inc(x):\n    return x + 1\n```\n"
    assert humaneval_kept.kind == "code" and mbpp_kept.kind == "code"
    assert verdicts[2].doc is None and plain.text == "some web text" and plain.kind is None


@needs_bwrap
def test_mutation_gate_rejects_weak_tests():
    verify = Verify("verify", timeout_s=1.0, workers=2, min_mutation_score=0.8)
    verify.setup()
    try:
        solution = "def bucket(x):\n    if x < 10:\n        return 0\n    if x < 100:\n        return 1\n    return 2\n"
        strong = "for x, want in [(0, 0), (9, 0), (10, 1), (11, 1), (99, 1), (100, 2), (101, 2)]:\n    assert bucket(x) == want"
        weak = "assert bucket(50) == 1"
        # No mutant can be made of a program `ast.unparse` refuses (an int literal of 4,000 digits):
        # it scored 1.0 and its weak tests passed the gate.
        padded = f"_PAD = 0x{'f' * 4000}\n{solution}"
        verdicts = verify.check_batch(
            [code("strong", solution, strong), code("weak", solution, weak), code("padded", padded, weak)]
        )
    finally:
        verify.teardown()
    assert verdicts[0].keep and verdicts[0].doc.scores["mutation_score"] >= 0.8
    assert verdicts[1].reason == "weak_tests"
    assert verdicts[2].reason == "weak_tests" and "cannot be rewritten" in verdicts[2].detail


def test_verify_is_registered_and_declares_its_reasons():
    load_builtin_stages()
    assert STAGES["verify"] is Verify
    for reason in ("tests_failed", "timeout", "memory_limit", "crashed", "syntax_error", "no_tests"):
        assert reason in Verify.reasons and f"`{reason}`" in Verify.__doc__
    for reason in ("wrong_answer", "bad_step", "no_answer", "unparseable"):
        assert reason in Verify.reasons


def test_missing_bubblewrap_is_a_clear_error_not_a_silent_fallback(monkeypatch):
    from synthesis import sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(sandbox.SandboxError, match="bubblewrap"):
        Verify("verify").setup()


@needs_bwrap
def test_a_sandbox_that_cannot_start_fails_the_stage_instead_of_rejecting_samples():
    """The runtime records an exception from the stage as a failure; no sample gets a verdict."""
    from synthesis.sandbox import SandboxError

    broken = Verify("verify", workers=1, python="/nonexistent/bin/python3")
    broken.setup()
    try:
        with pytest.raises(SandboxError, match="could not start"):
            broken.check_batch([code("good", "x = 1", "assert x == 1")])
        with pytest.raises(SandboxError, match="could not start"):
            broken.check(code("next", "x = 1", "assert x == 1"))
    finally:
        broken.teardown()


def sandbox_python_matches_this_one() -> bool:
    """numpy built for this interpreter loads in the sandbox's only when their versions match."""
    from synthesis.sandbox import default_python

    version = subprocess.run(
        [default_python(), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True
    )
    return version.stdout.decode().strip() == str(sys.version_info[:2])


@needs_bwrap
def test_samples_import_packages_only_from_the_folders_the_recipe_names(stage):
    if not sandbox_python_matches_this_one():
        pytest.skip("the sandbox's Python is another version than the one numpy was built for")
    site_packages = os.path.dirname(os.path.dirname(numpy.__file__))
    solution = "import numpy as np\n\ndef total(xs):\n    return int(np.sum(xs))\n"
    samples = [
        code("right", solution, "assert total([1, 2, 3]) == 6"),
        code("wrong", solution, "assert total([1, 2, 3]) == 7"),
        code("write", f"open({os.path.join(site_packages, 'x.py')!r}, 'w')\n"),
    ]
    verdicts = stage.check_batch(samples[:1])
    assert (verdicts[0].reason, verdicts[0].detail) == (
        "crashed",
        "solution: ModuleNotFoundError: No module named 'numpy'",
    )
    with_numpy = Verify("verify", timeout_s=5.0, workers=1, import_paths=[site_packages])
    with_numpy.setup()
    try:
        assert [v.reason for v in with_numpy.check_batch(samples)] == [None, "tests_failed", "crashed"]
    finally:
        with_numpy.teardown()
    with pytest.raises(ConfigError, match="import_paths: '/nonexistent' is not a folder"):
        Verify("verify", import_paths=["/nonexistent"])


@needs_bwrap
def test_import_paths_under_tmp_are_seen_inside_the_sandbox():
    """The sandbox has its own /tmp: a folder of packages under the host's /tmp is bound elsewhere."""
    folder = tempfile.mkdtemp()
    try:
        os.makedirs(os.path.join(folder, "mypkg"))
        with open(os.path.join(folder, "mypkg", "__init__.py"), "w") as handle:
            handle.write("VALUE = 42\n")
        for path in (folder, os.path.join(folder, "mypkg")):
            os.chmod(path, 0o755)  # the sandbox runs as `nobody` when the tests run as root
        verify = Verify("verify", workers=1, import_paths=[folder])
        verify.setup()
        try:
            (verdict,) = verify.check_batch([code("tmp", "from mypkg import VALUE\n", "assert VALUE == 42")])
        finally:
            verify.teardown()
        assert verdict.keep, verdict.detail
    finally:
        shutil.rmtree(folder)


@needs_bwrap
def test_math_candidates_go_to_the_math_verifier(stage):
    right = Document(
        "m1",
        "",
        kind="math",
        metadata={"problem": "What is 6*7?", "solution": "6*7=42\n#### 42", "answer": "42"},
    )
    wrong = Document(
        "m2",
        "",
        kind="math",
        metadata={"problem": "What is 6*7?", "solution": "6*7=42\n#### 41", "answer": "42"},
    )
    missing = Document(
        "m3", "", kind="math", metadata={"problem": "What is 6*7?", "solution": "It is big.", "answer": "42"}
    )
    verdicts = stage.check_batch([right, wrong, missing])
    assert [v.reason for v in verdicts] == [None, "wrong_answer", "no_answer"]
    rendered = verdicts[0].doc
    assert rendered.text.startswith("What is 6*7?") and "42" in rendered.text and rendered.kind == "math"
    assert right.text == "" and verdicts[1].doc is None


def test_manifest_names_the_sandbox_used():
    extra = Verify("verify", sandbox="process").manifest_extra()
    assert extra["sandbox"] == "process" and extra["interpreter"]


@needs_bwrap
def test_solution_main_blocks_do_not_run_but_unittest_tests_do(stage):
    solution = (
        "def double(x):\n    return 2 * x\n\nif __name__ == '__main__':\n    print(double(int(input())))\n"
    )
    unittest_tests = (
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_double(self):\n"
        "        self.assertEqual(double(4), {})\n\nif __name__ == '__main__':\n    unittest.main()\n"
    )
    passing = code("passing", solution, unittest_tests.format(8))
    failing = code("failing", solution, unittest_tests.format(9))
    assert [v.reason for v in stage.check_batch([passing, failing])] == [None, "tests_failed"]


@needs_bwrap
def test_tests_that_are_only_defined_are_run_as_pytest_and_unittest_would(stage):
    """A wrong solution passed tests that defined test functions or classes and never called them."""
    defined_only = {
        "functions": "def test_add():\n    assert add(1, 2) == 3\n\ndef test_zero(n=0):\n    assert add(n, n) == 0\n",
        "classes": (
            "class TestAdd:\n    def setup_method(self, method):\n        self.calls = [method.__name__]\n\n"
            "    def test_add(self):\n        assert self.calls == ['test_add'] and add(1, 2) == 3\n\n"
            "    def test_fresh(self):\n        self.calls.append(0)\n        assert self.calls == ['test_fresh', 0]\n"
        ),
        "testcase": (
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n"
            "        self.assertEqual(add(1, 2), 3)\n"
        ),
        "async": "async def test_add():\n    assert add(1, 2) == 3\n",
        # Tests that call their own test functions run them once: a second run would see the state
        # the first one left (QuixBugs' detect_cycle tests are written so).
        "called": "calls = []\n\ndef test_once():\n    calls.append(1)\n    assert add(len(calls), 1) == 2\n\ntest_once()\n",
    }
    docs = [
        code(f"{name}-{which}", f"def add(a, b):\n    return a {operator} b\n", tests)
        for name, tests in defined_only.items()
        for which, operator in (("right", "+"), ("wrong", "-"))
    ]
    verdicts = stage.check_batch(docs)
    assert [(doc.id, v.reason) for doc, v in zip(docs, verdicts)] == [
        (doc.id, None if doc.id.endswith("right") else "tests_failed") for doc in docs
    ]
    assert verdicts[5].detail == "tests: AssertionError: __main__.T.test_add: AssertionError: -1 != 3"
    fixture = code(
        "fixture", "def add(a, b):\n    return a + b\n", "def test_add(a):\n    assert add(a, 0) == a\n"
    )
    assert stage.check_batch([fixture])[0].detail == (
        "tests: TypeError: test_add takes arguments (pytest fixtures?) and the tests never call it"
    )


@needs_bwrap
def test_teardown_stops_the_runners_setup_started():
    verify = Verify("verify", timeout_s=1.0, workers=1)
    with pytest.raises(RuntimeError, match="used before setup"):
        verify.check(code("early", "x = 1", "assert x == 1"))
    verify.setup()
    assert verify.check(code("good", "x = 1", "assert x == 1")).keep
    started = [runner.proc for runner in verify._code.pool._all]
    verify.teardown()
    assert started and all(proc.poll() is not None for proc in started)
    with pytest.raises(RuntimeError, match="used before setup"):
        verify.check(code("late", "x = 1", "assert x == 1"))


@needs_bwrap
def test_code_nested_too_deep_for_python_is_a_verdict_not_an_exception(stage):
    """ast.parse on the host raised RecursionError out of the stage (20,000 chained `+`)."""
    deep = "def add(a, b):\n    return a" + " + 0" * 20_000 + " + b\n"
    solution, tests = (
        code("solution", deep, "assert add(1, 2) == 3"),
        code("tests", "def add(a, b):\n    return a + b\n", "assert add(1, 2) == 3" + " + 0" * 20_000),
    )
    verdicts = stage.check_batch([solution, tests])
    assert [(v.reason, v.detail.split(":")[0]) for v in verdicts] == [
        ("crashed", "compile_solution"),
        ("crashed", "compile_tests"),
    ]
    assert all("RecursionError" in v.detail for v in verdicts)


def test_math_memory_mb_caps_the_sympy_worker():
    verify = Verify("verify", sandbox="process", math_timeout_s=10.0, math_memory_mb=256)
    verify.setup()
    try:
        solution = "Expanded, it is \\boxed{(x+1)^{1000000} - 1}"
        candidate = Document(
            "m", "", kind="math", metadata={"problem": "Expand.", "solution": solution, "answer": "x^2"}
        )
        verdict = verify.check_batch([candidate])[0]
    finally:
        verify.teardown()
    assert verdict.reason == "unparseable" and "256 MiB memory limit" in verdict.detail
