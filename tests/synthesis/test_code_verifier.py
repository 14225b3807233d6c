"""Mapping sandbox results to reason codes, the no-tests rule and the training rendering."""

from __future__ import annotations

import signal
import time

from pipeline.document import Document
from synthesis.code_verifier import (
    classify,
    complete_solution,
    defines,
    has_tests,
    program,
    render_code,
    syntax_tree,
    untested_names,
)
from synthesis.sandbox import RunResult, signal_name


def status(phase: str, error: str = "") -> dict:
    return {"phase": phase, "error": error, "message": ""}


def test_classify_maps_every_outcome_to_its_reason():
    cases = [
        (RunResult("finished", status("ok"), exit_code=0), None),
        (RunResult("timeout"), "timeout"),
        (RunResult("output_limit"), "output_limit"),
        (RunResult("runner_died"), "crashed"),
        (RunResult("finished", signal=signal.SIGXCPU), "timeout"),
        (RunResult("finished", signal=signal.SIGSEGV), "crashed"),
        # SIGKILL at the hard CPU limit is a timeout; before it (the sample's own kill, the kernel's
        # out-of-memory killer) it is not
        (RunResult("finished", signal=signal.SIGKILL, cpu_s=2.0), "timeout"),
        (RunResult("finished", signal=signal.SIGKILL, cpu_s=0.01), "crashed"),
        (RunResult("finished", exit_code=0), "crashed"),  # exited before reporting
        (RunResult("finished", status("solution", "MemoryError"), exit_code=1), "memory_limit"),
        (RunResult("finished", status("compile_solution", "SyntaxError"), exit_code=1), "syntax_error"),
        (RunResult("finished", status("tests", "AssertionError"), exit_code=1), "tests_failed"),
        (RunResult("finished", status("check", "TypeError"), exit_code=1), "tests_failed"),
        (RunResult("finished", status("solution", "ImportError"), exit_code=1), "crashed"),
        (RunResult("finished", status("forged"), exit_code=0), "crashed"),
    ]
    for result, reason in cases:
        assert classify(result, 1.0).reason == reason, result
    # a real-time signal has no name in `signal.Signals`: `Signals(40)` raised out of the stage
    assert classify(RunResult("finished", signal=40), 1.0).detail == "killed by signal 40"
    assert (signal_name(9), signal_name(40)) == ("SIGKILL", "signal 40")  # the runner's death, too
    threads = {"phase": "tests", "error": "RuntimeError", "message": "can't start new thread"}
    assert classify(RunResult("finished", threads, exit_code=1), 1.0).detail.endswith(
        "(the sandbox allows max_processes processes and threads per sample: 1 by default)"
    )


def test_a_timeout_detail_does_not_depend_on_machine_load():
    """Whichever limit fired, however long the sample waited: one detail, so outputs are deterministic."""
    details = {
        classify(result, 5.0).detail
        for result in (
            RunResult("timeout", elapsed_s=5.2, waited_s=0.1),
            RunResult("timeout", elapsed_s=14.4, waited_s=9.4),
            RunResult("finished", signal=signal.SIGXCPU, elapsed_s=6.5),
            RunResult("finished", signal=signal.SIGKILL, elapsed_s=7.0, cpu_s=7.0),
        )
    }
    assert details == {"own time > 5s"}


def test_has_tests_needs_something_that_can_fail():
    assert has_tests(syntax_tree("assert f(1) == 2"))
    assert has_tests(syntax_tree("def check(c):\n    assert c(1)"))
    assert has_tests(syntax_tree("class T:\n    def test(self):\n        self.assertEqual(f(), 1)"))
    assert has_tests(syntax_tree("if f() != 1:\n    raise ValueError"))
    assert has_tests(syntax_tree("import sys\nif f(1) != 2:\n    sys.exit(1)"))  # was `no_tests`
    assert not has_tests(syntax_tree("import sys\nf(1)\nsys.exit(0)"))
    assert not has_tests(syntax_tree("f(1)\nexit()"))
    assert not has_tests(syntax_tree(""))
    assert not has_tests(syntax_tree("print(f(1))"))
    assert has_tests(syntax_tree("assert f(")) and syntax_tree("x = " + "not " * 100_000 + "1") is None


def test_render_code():
    prompt = "def f():\n"
    full = Document("a", "", kind="code", metadata={"prompt": prompt, "solution": prompt + "    return 1\n"})
    assert render_code(full) == "def f():\n    return 1\n"
    natural = Document(
        "b", "", kind="code", metadata={"prompt": "Return one.", "solution": "def f():\n    return 1"}
    )
    assert render_code(natural) == "Return one.\n\n```python\ndef f():\n    return 1\n```\n"


def test_completion_style_solutions_continue_the_prompt():
    prompt = 'def inc(x):\n    """Add one."""\n'
    body_only = Document(
        "a",
        "",
        kind="code",
        metadata={"prompt": prompt, "solution": "    return x + 1\n", "entry_point": "inc"},
    )
    assert program(body_only) == prompt + "    return x + 1\n"
    assert render_code(body_only) == prompt + "    return x + 1\n"
    standalone = Document(
        "b",
        "",
        kind="code",
        metadata={"prompt": prompt, "solution": "def inc(x):\n    return x + 1\n", "entry_point": "inc"},
    )
    assert program(standalone) == "def inc(x):\n    return x + 1\n"


def test_full_solutions_get_the_prompt_imports_they_lack():
    prompt = 'from typing import List\nimport math\n\n\ndef total(xs: List[int]) -> int:\n    """Sum."""\n'
    solution = "import math\n\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n"
    doc = Document(
        "a", "", kind="code", metadata={"prompt": prompt, "solution": solution, "entry_point": "total"}
    )
    assert program(doc) == "from typing import List\n" + solution
    plain = Document("b", "", kind="code", metadata={"prompt": "Sum a list.", "solution": solution})
    assert program(plain) == solution
    # after the solution's `from __future__` imports (before them: a syntax error)
    future = "from __future__ import annotations\n\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n"
    assert complete_solution(prompt, future, "total") == future.replace(
        "\n\n", "\nfrom typing import List\nimport math\n\n", 1
    )
    # a prose prompt's import-like lines are examples (`No module named 'mypkg'`) or prose (a syntax error)
    prose = "Parse lines such as:\nfrom mypkg.utils import helper\nimport the values from a list\n"
    assert complete_solution(prose, "def parse(s):\n    return s.split()\n", "parse").startswith("def parse")
    # an import inside a function is not one at the top: `math` was missing in `area`
    nested = "def helper():\n    import math\n\ndef total(xs):\n    return math.fsum(xs)\n"
    assert complete_solution(prompt, nested, "total") == "from typing import List\nimport math\n" + nested


def test_defines_finds_def_lines_in_time_linear_in_blank_lines():
    """`^\\s*` ran from every line start of a run of blank lines to its end: 32,000 took 26 s."""
    assert defines("class A:\n\tasync  def f (x):\n        pass\n", "f")
    assert not defines("def g():\n    f(1)\n# def f(\n", "f") and not defines("def\nf():", "f")
    started = time.process_time()
    assert not defines("x = 1" + "\n" * 50_000 + "y", "f")
    assert time.process_time() - started < 5


def test_definitions_in_blocks_that_run_at_import_count_as_the_solutions():
    """`def lcm` under `except ImportError` (or `if sys.version_info ...`) was not seen: tests
    calling it were taken for tests that use nothing of the solution (`no_tests`)."""
    solution = syntax_tree(
        "def _gcd(a, b):\n    return a\ntry:\n    from math import lcm\nexcept ImportError:\n"
        "    def lcm(a, b):\n        return a * b // _gcd(a, b)\n"
    )
    assert untested_names(solution, syntax_tree("assert lcm(4, 6) == 12"), None) is None
    assert untested_names(solution, syntax_tree("assert max(4, 6) == 6"), None) == ["_gcd", "lcm"]
    inner = syntax_tree("def outer():\n    def inner():\n        pass\n")  # a function's body is not run
    assert untested_names(inner, syntax_tree("assert inner()"), None) == ["outer"]
