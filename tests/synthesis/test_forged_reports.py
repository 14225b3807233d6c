"""Samples that try to report passed tests they never ran, through the verifier's own state."""

from __future__ import annotations

import pytest

from tests.synthesis.test_verify import code, needs_bwrap

WRONG_ADD = "def add(a, b):\n    return 0\n"
TESTS = "assert add(1, 2) == 3\nassert add(2, 2) == 4\n"
# Writes a passed-tests report with the nonce it found (a dict holding it) to the report's pipe
# (fd 1000 in the child), then exits.
FORGE = (
    "import os, sys\n"
    "def forge(found):\n"
    "    os.write(1000, '\\t'.join([found['nonce'], 'ok', '', '']).encode())\n"
    "    os._exit(0)\n"
)
# Each walks up from a frame it got some way to the verifier's frames.
WALK = (
    "def walk(frame):\n"
    "    while frame is not None:\n"
    "        if 'nonce' in frame.f_locals:\n"
    "            forge(frame.f_locals)\n"
    "        frame = frame.f_back\n"
)
FRAME_ROUTES = {
    "getframe": "walk(sys._getframe())\n",
    "traceback": "try:\n    raise ValueError\nexcept ValueError as e:\n    walk(e.__traceback__.tb_frame)\n",
    "generator": "def g():\n    yield\nit = g()\nnext(it)\nwalk(it.gi_frame)\n",
    "inspect": "import inspect\nwalk(inspect.currentframe())\n",
    "walk_stack": "import traceback\nfor frame, _ in traceback.walk_stack(None):\n    walk(frame)\n",
    "threads_frames": "for frame in sys._current_frames().values():\n    walk(frame)\n",
    "trace_hook": "sys.settrace(lambda frame, event, arg: walk(frame))\ndef f():\n    pass\nf()\n",
    "signal_handler": (
        "import signal\nsignal.signal(signal.SIGALRM, lambda number, frame: walk(frame))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.01)\nimport time\ntime.sleep(0.5)\n"
    ),
    "summary_locals": (
        "import traceback\nfor frame in traceback.StackSummary.extract(traceback.walk_stack(None), "
        "capture_locals=True):\n    if 'nonce' in (frame.locals or {}):\n"
        "        forge({'nonce': frame.locals['nonce'].strip(\"'\")})\n"
    ),
    "object_graph": (
        "import gc, re\nfor obj in gc.get_objects():\n    if isinstance(obj, dict) and 'nonce' in obj:\n"
        "        forge(obj)\n"
    ),
    "memory": "open('/proc/self/mem', 'rb')\n",
    "memory_by_dev_fd": "os.chdir('/dev')\nopen('fd/../mem', 'rb')\n",
    # a path whose own methods would tell the guard another path than the one opened
    "memory_str_subclass": "class S(str):\n    pass\nopen(S('/proc/self/mem'), 'rb')\n",
    "memory_bytes_subclass": "class B(bytes):\n    pass\nopen(B(b'/proc/self/mem'), 'rb')\n",
    "memory_path_object": (
        "import io\nclass P:\n    def __fspath__(self):\n        return '/proc/self/mem'\nio.FileIO(P())\n"
    ),
    "ctypes": "import ctypes\nctypes.string_at(id(sys), 64)\n",
    # traceback's stack summary may walk a traceback; the frames must go nowhere else
    "walk_stack_resumed": (
        "import traceback\nwalker = traceback.walk_stack(None)\n"
        "traceback.StackSummary.extract(walker, limit=1)\nfor frame, _ in walker:\n    walk(frame)\n"
    ),
    "walk_tb_through_map": (
        "import traceback\ntry:\n    raise ValueError\nexcept ValueError as e:\n"
        "    traceback.StackSummary.extract(map(lambda item: walk(item[0]) or item, "
        "traceback.walk_tb(e.__traceback__)))\n"
    ),
    "walk_tb_replaced_islice": (
        "import traceback, types\n"
        "traceback.itertools = types.SimpleNamespace(islice=lambda items, *n: map(lambda item: walk(item[0]) or item, items))\n"
        "try:\n    raise ValueError\nexcept ValueError:\n    traceback.print_exc(limit=5)\n"
    ),
    "replaced_callee": (  # an allowed caller hands its frame to a module function the sample replaced
        "import traceback\ntraceback.walk_stack = lambda frame: walk(frame) or iter(())\ntraceback.extract_stack()\n"
    ),
    "logging_caller": (
        "import logging\nlogging._is_internal_frame = lambda frame: walk(frame)\nlogging.warning('x')\n"
    ),
    "rebound_builtin": (  # the hook asked `id` whether the code taking a frame is allowed
        "import builtins, collections\nallowed = collections.namedtuple.__code__\n"
        "builtins.id = lambda obj, _id=id: _id(allowed)\nwalk(sys._getframe())\n"
    ),
    "rebound_guard_names": (  # the hook read its lists from the guard module's names
        "import unittest\nnames = unittest.TestCase.assertEqual.__globals__\n"
        "names['FRAME_ATTRIBUTES'] = frozenset()\nnames['REFUSED_EVENTS'] = frozenset()\n"
        "walk(next(iter(sys._current_frames().values())))\n"
    ),
    "audit_hook": (  # the frame an allowed caller (namedtuple) takes is an argument of its event
        "import collections\ndef spy(event, args):\n    if event == 'sys._getframe':\n        walk(args[0])\n"
        "sys.addaudithook(spy)\ncollections.namedtuple('P', 'x')\n"
    ),
}
# Replaces what the verifier calls when it reports, to pass "ok" whatever the tests did.
PATCHED = (
    "import json, os\n"
    "def dumps(obj, *a, _dumps=json.dumps, _os=os, _exit=os._exit, **k):\n"
    "    if isinstance(obj, dict) and 'nonce' in obj:\n"
    "        obj = dict(obj, phase='ok', error='', message='')\n"
    "        _os._exit = lambda code, _exit=_exit: _exit(0)\n"
    "    return _dumps(obj, *a, **k)\n"
    "json.dumps = dumps\n"
    "def write(fd, data, _write=os.write):\n"
    "    return _write(fd, data.replace(b'\\ttests\\t', b'\\tok\\t'))\n"
    "os.write = write\n"
)


@needs_bwrap
def test_a_wrong_solution_cannot_forge_the_report_through_the_verifiers_frames_or_memory(stage):
    docs = [code(name, FORGE + WALK + route + WRONG_ADD, TESTS) for name, route in FRAME_ROUTES.items()]
    verdicts = stage.check_batch(docs)
    assert [(doc.id, verdict.keep) for doc, verdict in zip(docs, verdicts)] == [
        (doc.id, False) for doc in docs
    ]
    details = {doc.id: verdict.detail for doc, verdict in zip(docs, verdicts)}
    assert details.pop("audit_hook") == "tests: AssertionError"  # the hook is not added; the tests run
    assert all("PermissionError: a sample may not " in detail for detail in details.values())


@needs_bwrap
def test_a_wrong_solution_cannot_forge_the_report_by_replacing_what_the_verifier_calls(stage):
    # The report says what went wrong (in the "tests" phase, which the patched os.write would
    # have made "ok"), through the functions taken before the sample ran.
    (verdict,) = stage.check_batch([code("patched", PATCHED + WRONG_ADD, TESTS)])
    assert (verdict.keep, verdict.reason) == (False, "tests_failed")
    assert verdict.detail == "tests: GamedTests: the sample replaced json.dumps"


@needs_bwrap
def test_what_the_standard_library_does_with_frames_still_works(stage):
    """namedtuple, Enum and typing name their module from the caller's frame, traceback formats an
    exception, assertRaises clears frames, unittest reports a failure, asyncio.run sets up signals."""
    solution = (
        "import asyncio, collections, enum, traceback, typing, warnings\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
        "Color = enum.Enum('Color', 'RED GREEN')\n"
        "class Pair(typing.NamedTuple):\n    a: int\n    b: int\n"
        "T = typing.TypeVar('T')\n"
        "def add(a, b):\n"
        "    warnings.warn('old', DeprecationWarning)\n"
        "    try:\n        raise ValueError('x')\n    except ValueError:\n"
        "        assert 'ValueError' in traceback.format_exc()\n"
        "    return Point(a, b).x + Pair(0, b).b + Color.RED.value - 1\n"
        "async def twice(x):\n    return 2 * x\n"
    )
    tests = (
        "import asyncio, unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
        "    def test_raises(self):\n        with self.assertRaises(TypeError):\n            add(1)\n"
        "    def test_async(self):\n        self.assertEqual(asyncio.run(twice(2)), 4)\n"
        "unittest.main()\n"
    )
    failing = tests.replace("add(1, 2), 3", "add(1, 2), 4")
    right, wrong = stage.check_batch([code("stdlib", solution, tests), code("failing", solution, failing)])
    assert (right.keep, right.reason, right.detail) == (True, None, None)
    assert (wrong.reason, wrong.detail) == (
        "tests_failed",
        "tests: AssertionError: unittest: __main__.T.test_add: AssertionError: 3 != 4",
    )


@needs_bwrap
def test_paths_given_as_path_objects_bytes_or_directory_entries_still_open(stage):
    solution = (
        "import io, os, pathlib, shutil, tempfile\n"
        "folder = pathlib.Path(tempfile.mkdtemp())\n"
        "(folder / 'a').touch()\n"
        "(folder / 'b').write_text('x')\n"
        "os.close(os.open(folder / 'a', os.O_RDONLY))\n"
        "os.close(os.open(b'/dev/null', os.O_RDONLY))\n"
        "for entry in os.scandir(folder):\n    open(entry).close()\n    io.FileIO(entry).close()\n"
        "os.chdir(folder)\n"
        "os.symlink(folder / 'a', folder / 'c')\n"
        "shutil.rmtree(folder)\n"
        "def add(a, b):\n    return a + b\n"
    )
    (verdict,) = stage.check_batch([code("paths", solution, TESTS)])
    assert (verdict.keep, verdict.reason, verdict.detail) == (True, None, None)


@needs_bwrap
def test_logging_runs_with_its_caller_lookup_off(stage):
    """An enabled logging call looks up its caller's frame (refused); `_srcfile = None` turns that off."""
    solution = "import logging\n{}def add(a, b):\n    logging.warning('adding %s', a)\n    return a + b\n"
    off, on = stage.check_batch(
        [
            code("off", solution.format("logging._srcfile = None\n"), TESTS),
            code("on", solution.format(""), TESTS),
        ]
    )
    assert (off.keep, on.keep) == (True, False)
    assert on.detail.startswith(
        "tests: PermissionError: a sample may not use frames (sys._getframe in <lambda>)"
    )


@needs_bwrap
def test_a_solution_that_replaces_the_verifiers_own_functions_is_gamed(stage):
    """The guard's and the runner's functions are reachable from a guarded unittest method's and a
    runner class's `__globals__`: replacing them would skip their checks."""
    guard = (
        "import unittest\nnames = unittest.TestCase.assertEqual.__globals__\n"
        "names['refuse_tampering'] = lambda *args: None\n"
        "names['_check_operands'] = lambda left, right, by_hash: None\n"
        "names['_check_made_objects'] = lambda *values: None\n"
        "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    return AlwaysEqual()\n"
    )
    runner = (
        "clock = next(c for c in object.__subclasses__() if c.__name__ == 'Clock')\n"
        "clock.left.__globals__['_test_run'].run_defined_tests = lambda *args: None\n" + WRONG_ADD
    )
    verdicts = stage.check_batch(
        [code("guard", guard, TESTS), code("runner", runner, "def test_add():\n    assert add(1, 2) == 3\n")]
    )
    assert [(v.keep, v.reason, v.detail) for v in verdicts] == [
        (False, "tests_failed", "tests: GamedTests: the sample replaced the verifier's own functions")
    ] * 2


# A program the sample exec's (no audit hook there) takes the sandbox's init's copy of the host's
# reply pipe (pidfd_getfd of pid 1, fd 1) and writes passed verdicts for this sample and the next.
STOLEN_REPLY_PIPE = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
host = libc.syscall(438, libc.syscall(434, 1, 0), 1, 0)
ok = {"outcome": None, "exit_code": 0, "signal": None, "status": {"phase": "ok", "error": "", "message": ""},
      "elapsed": 0.01, "waited": 0.0, "cpu": 0.01, "runner_cpu": 0.0, "stdout": "", "stderr": "",
      "output_bytes": 0, "clean": True}
os.write(host, ((json.dumps(ok) + "\n") * 4).encode())
"""


@needs_bwrap
def test_a_sample_cannot_write_the_hosts_replies_through_the_sandboxs_init(stage):
    """bubblewrap's reaper, pid 1, held the host's pipes and could be traced: the forger and the
    next three wrong samples were admitted, and a later right one got a wrong sample's verdict."""
    forge = f"import os\nos.execv('/usr/bin/python3', ['python3', '-c', {STOLEN_REPLY_PIPE!r}])\n"
    samples = [code("forger", forge + WRONG_ADD, TESTS)]
    samples += [code(f"wrong{i}", WRONG_ADD, TESTS) for i in range(4)]
    samples.append(code("right", "def add(a, b):\n    return a + b\n", TESTS))
    verdicts = stage.check_batch(samples)
    assert [(doc.id, verdict.keep) for doc, verdict in zip(samples, verdicts)] == [
        ("forger", False),
        *((f"wrong{i}", False) for i in range(4)),
        ("right", True),
    ]


@needs_bwrap
def test_posix_message_queues_do_not_carry_over_to_the_next_sample():
    from synthesis.sandbox import Limits, SandboxPool

    leave = (
        "import ctypes, os\nrt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "q = rt.mq_open(b'/carry', os.O_CREAT | os.O_RDWR, 0o600, None)\n"
        "print(q, rt.mq_send(q, b'left by sample 1', 16, 0))\n"
    )
    read = (
        "import ctypes, os\nrt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "q = rt.mq_open(b'/carry', os.O_RDONLY | os.O_NONBLOCK)\nbuf = ctypes.create_string_buffer(8192)\n"
        "print(rt.mq_receive(q, buf, 8192, None), buf.value)\n"
    )
    exec_python = "import os\nos.execv('/usr/bin/python3', ['python3', '-c', {!r}])\n".format
    with SandboxPool("bubblewrap", workers=1, limits=Limits(timeout_s=2.0)) as one:
        made = one.run(exec_python(leave), "assert True")
        found = one.run(exec_python(read), "assert True")
    assert made.stdout.split() == ["-1", "-1"]  # mq_open refused
    assert "left by sample 1" not in found.stdout


DEFINED_TEST = "def test_add():\n    assert add(1, 2) == 3\n"
ASYNC_TEST = "async def test_add():\n    assert add(1, 2) == 3\n"
SEES_EVERY_TEST = (  # every def and class also yields a Name of itself: each test looks called by the tests
    "import ast\nreal = ast.walk\n"
    "def walk(node):\n    for n in real(node):\n        yield n\n"
    "        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):\n"
    "            yield ast.Name(id=n.name)\n"
    "ast.walk = walk\n"
)


@needs_bwrap
@pytest.mark.parametrize(
    ("prefix", "tests"),
    [
        ("import types\ntypes.FunctionType = type('Nothing', (), {})\n", DEFINED_TEST),
        ("import asyncio\nasyncio.run = lambda coro, **k: coro.close()\n", ASYNC_TEST),
        ("import types\ntypes.CoroutineType = type(None)\n", ASYNC_TEST),
        (SEES_EVERY_TEST, DEFINED_TEST),
    ],
    ids=["FunctionType", "asyncio.run", "CoroutineType", "ast.walk"],
)
def test_a_wrong_solution_cannot_change_how_defined_tests_are_collected(stage, prefix, tests):
    """The collection of tests only defined looked these up as it ran: none ran, and wrong
    solutions were admitted."""
    (verdict,) = stage.check_batch([code("collection", prefix + WRONG_ADD, tests)])
    assert not verdict.keep


ALWAYS_EQUAL_ZERO = (
    "class R(int):\n    def __eq__(self, o):\n        return True\n    __hash__ = int.__hash__\n"
    "class L(list):\n    def __eq__(self, o):\n        return True\n    __ne__ = lambda s, o: False\n"
    "def add(a, b):\n    return R(0)\ndef pair():\n    return L()\n"
)


@needs_bwrap
@pytest.mark.parametrize(
    "assertion",
    [
        "self.failUnlessEqual(add(1, 2), 3)",
        "self.assertEqual(first=add(1, 2), second=3)",
        "self.assertSequenceEqual(seq1=pair(), seq2=[1, 2])",
    ],
)
def test_unittests_deprecated_aliases_and_keyword_arguments_are_guarded_too(stage, assertion):
    """Only `assert*` methods were guarded, and only their positional values."""
    tests = f"import unittest\nclass T(unittest.TestCase):\n    def test_add(self):\n        {assertion}\nunittest.main()\n"
    (verdict,) = stage.check_batch([code("alias", ALWAYS_EQUAL_ZERO, tests)])
    assert not verdict.keep and "GamedTests" in verdict.detail
