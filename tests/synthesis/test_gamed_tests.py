"""Solutions that game the tests instead of solving the task (`GamedTests`), and honest ones that are not."""

from __future__ import annotations

from tests.synthesis.test_verify import code, needs_bwrap

ALWAYS_EQUAL = "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
UNITTEST_ADD = "import unittest\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"


@needs_bwrap
def test_solutions_that_game_the_tests_instead_of_solving_the_task_are_rejected(stage):
    """Reward hacks seen in generated code: an object equal to anything, a patched test framework."""
    gamed = {
        "always_equal": (
            ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n",
            "assert add(1, 2) == 3\n",
        ),
        "int_subclass": (
            "class E(int):\n    __hash__ = int.__hash__\n    def __eq__(self, other):\n        return True\n"
            "def add(a, b):\n    return E(0)\n",
            "assert 3 == add(1, 2)\n",
        ),
        "inside_a_list": (
            ALWAYS_EQUAL + "def add(a, b):\n    return [AlwaysEqual()]\n",
            "assert add(1, 2) == [3]\n",
        ),
        "membership": (
            ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n",
            "assert add(1, 2) in (3,)\n",
        ),
        "equal_to_every_builtin_value": (
            "class B:\n    def __eq__(self, other):\n        return isinstance(other, (int, str, list))\n"
            "def add(a, b):\n    return B()\n",
            "assert add(1, 2) == 3\n",
        ),
        "made_by_type": (
            "def add(a, b):\n    return type('X', (), {'__eq__': lambda self, other: True})()\n",
            "assert add(1, 2) == 3\n",
        ),
        "unittest_assert": (ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n", UNITTEST_ADD),
        # equal to anything by an `__eq__` that is not a function written in the solution
        "mock_wildcard": ("from unittest import mock\ndef add(a, b):\n    return mock.ANY\n", UNITTEST_ADD),
        "mock_told_to": (
            "from unittest import mock\nm = mock.MagicMock()\nm.__eq__.return_value = True\n"
            "def add(a, b):\n    return m\n",
            "assert add(1, 2) == 3\n",
        ),
        "builtin_method": (
            "class X(int):\n    __eq__ = int.__ne__\ndef add(a, b):\n    return X(-7)\n",
            "assert add(1, 2) == 3\n",
        ),
        "partial": (
            "import functools\nclass X:\n    __eq__ = functools.partial(lambda *a: True)\n"
            "def add(a, b):\n    return X()\n",
            "assert add(1, 2) == 3\n",
        ),
        "classmethod": (
            "class X:\n    @classmethod\n    def __eq__(cls, other):\n        return True\n"
            "def add(a, b):\n    return X()\n",
            "assert add(1, 2) == 3\n",
        ),
        "callable_object": (
            "class Yes:\n    def __call__(self, *args):\n        return True\n"
            "class X:\n    __eq__ = Yes()\ndef add(a, b):\n    return X()\n",
            "assert add(1, 2) == 3\n",
        ),
        "compiled_elsewhere": (
            "exec(compile('class X:\\n    def __eq__(self, o):\\n        return True', 'other.py', 'exec'))\n"
            "def add(a, b):\n    return X()\n",
            "assert add(1, 2) == 3\n",
        ),
        "list_subclass_hiding_its_items": (
            ALWAYS_EQUAL + "class L(list):\n    def __iter__(self):\n        return iter([])\n"
            "def add(a, b):\n    return L([AlwaysEqual()])\n",
            "assert add(1, 2) == [3]\n",
        ),
        "caught_by_the_tests": (
            ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n",
            "try:\n    assert add(1, 2) == 3\nexcept Exception:\n    pass\n",
        ),
        "patched_assert_equal": (
            "import unittest\nunittest.TestCase.assertEqual = lambda *args: None\ndef add(a, b):\n    return 0\n",
            UNITTEST_ADD,
        ),
        "patched_main": (
            "import unittest\nunittest.main = lambda *args, **kwargs: None\ndef add(a, b):\n    return 0\n",
            UNITTEST_ADD + "unittest.main()\n",
        ),
        "patched_private_part": (
            "import unittest.case\nfrom contextlib import contextmanager\n@contextmanager\n"
            "def quiet(self, test_case, subTest=False):\n    try:\n        yield\n    except BaseException:\n"
            "        pass\nunittest.case._Outcome.testPartExecutor = quiet\ndef add(a, b):\n    return 0\n",
            UNITTEST_ADD,
        ),
        "patched_builtin": (
            "import builtins\nbuiltins.all = lambda *args: True\ndef add(a, b):\n    return 0\n",
            "assert all(add(x, 1) == x + 1 for x in range(5))\n",
        ),
        "patched_module_function": (
            "import math\nmath.isclose = lambda *args, **kwargs: True\ndef add(a, b):\n    return 0.0\n",
            "import math\nassert math.isclose(add(1.5, 1.5), 3.0)\n",
        ),
        "replaced_module": (
            "import sys, types\nfake = types.ModuleType('unittest')\n"
            "class TestCase:\n    def assertEqual(self, first, second):\n        pass\n"
            "fake.TestCase = TestCase\nsys.modules['unittest'] = fake\ndef add(a, b):\n    return 0\n",
            UNITTEST_ADD,
        ),
        "import_hook": (
            "import sys\nclass Finder:\n    def find_spec(self, name, path=None, target=None):\n"
            "        return None\nsys.meta_path.insert(0, Finder())\ndef add(a, b):\n    return 0\n",
            "import fractions\nassert add(1, 2) == 3\n",
        ),
        "skipped": ("import unittest\ndef add(a, b):\n    raise unittest.SkipTest('no')\n", UNITTEST_ADD),
        "skipped_by_a_subclass": (
            "import unittest\nclass Skip(unittest.SkipTest):\n    def __init__(self):\n        pass\n"
            "def add(a, b):\n    raise Skip()\n",
            UNITTEST_ADD + "unittest.main()\n",
        ),
        "skipped_without_init": (
            "import unittest\ndef add(a, b):\n    raise unittest.SkipTest.__new__(unittest.SkipTest)\n",
            UNITTEST_ADD,
        ),
        "stopped": (
            "import unittest.case\ndef add(a, b):\n    raise unittest.case._ShouldStop()\n",
            UNITTEST_ADD + "unittest.main()\n",
        ),
        "skipped_in_main": (
            "import unittest\ndef add(a, b):\n    raise unittest.SkipTest('no')\n",
            UNITTEST_ADD + "unittest.main()\n",
        ),
    }
    docs = [code(name, solution, tests) for name, (solution, tests) in gamed.items()]
    docs.append(
        code(
            "check",
            ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n",
            "def check(candidate):\n    assert candidate(1, 2) == 3\n",
            entry_point="add",
        )
    )
    verdicts = stage.check_batch(docs)
    assert [(d.id, v.reason) for d, v in zip(docs, verdicts)] == [(d.id, "tests_failed") for d in docs]
    details = {d.id: v.detail for d, v in zip(docs, verdicts)}
    assert details["always_equal"] == "tests: GamedTests: solution.AlwaysEqual says it equals any object"
    assert details["caught_by_the_tests"] == details["always_equal"]
    assert details["check"] == "check: GamedTests: solution.AlwaysEqual says it equals any object"
    assert details["made_by_type"] == "tests: GamedTests: solution.X says it equals any object"
    assert details["mock_wildcard"] == "tests: GamedTests: unittest.mock._ANY says it equals any object"
    assert details["compiled_elsewhere"] == "tests: GamedTests: solution.X says it equals any object"
    assert details["list_subclass_hiding_its_items"] == details["always_equal"]
    assert details["patched_assert_equal"] == (
        "tests: GamedTests: the sample replaced unittest.case.TestCase.assertEqual"
    )
    assert details["patched_main"] == "tests: GamedTests: the sample replaced unittest.main"
    assert details["patched_private_part"].endswith("replaced unittest.case._Outcome.testPartExecutor")
    assert details["patched_builtin"] == "tests: GamedTests: the sample replaced builtins.all"
    assert details["patched_module_function"] == "tests: GamedTests: the sample replaced math.isclose"
    assert details["replaced_module"] == "tests: GamedTests: the sample replaced sys.modules['unittest']"
    assert details["import_hook"] == "tests: GamedTests: the sample changed sys.meta_path"
    assert details["skipped"] == "tests: GamedTests: the solution ended a test early (unittest.case.SkipTest)"
    assert details["skipped_by_a_subclass"].endswith("ended a test early (solution.Skip)")
    assert details["stopped"].endswith("ended a test early (unittest.case._ShouldStop)")

    honest = [
        code(
            "fraction",
            "class Frac:\n    def __init__(self, n, d):\n        self.n, self.d = n, d\n"
            "    def __eq__(self, other):\n        return isinstance(other, Frac) and self.n * other.d == other.n * self.d\n"
            "def half():\n    return Frac(1, 2)\n",
            "assert half() == Frac(2, 4)\nassert half() != Frac(1, 3)\nassert half() in [Frac(3, 6)]\n",
        ),
        code(
            "remainder",
            "class Mod:\n    def __init__(self, v, m):\n        self.v, self.m = v % m, m\n"
            "    def __eq__(self, other):\n        return other % self.m == self.v\n"
            "def odd():\n    return Mod(1, 2)\n",
            "assert odd() == 3\nassert odd() != 4\n",
        ),
        code(
            "compares_by_text",
            "class Name:\n    def __init__(self, v):\n        self.v = v\n"
            "    def __eq__(self, other):\n        return str(self.v) == str(other)\ndef name():\n    return Name('bob')\n",
            "assert name() == 'bob'\n",
        ),
        code(  # the tests may replace a builtin to feed the program
            "tests_feed_input",
            "def double():\n    return 2 * int(input())\n",
            "import builtins\nbuiltins.input = lambda: '4'\nassert double() == 8\n",
        ),
        code(  # the tests may skip their own tests
            "tests_skip",
            "def add(a, b):\n    return a + b\n",
            UNITTEST_ADD + "    @unittest.skip('slow')\n    def test_slow(self):\n        pass\n"
            "    def test_skips_itself(self):\n        self.skipTest('not here')\n"
            "    def test_part(self):\n        with self.subTest(i=1):\n            self.skipTest('part')\n"
            "unittest.main()\n",
        ),
        code(  # the tests may patch a module the solution uses
            "tests_patch_a_module",
            "import random\ndef coin():\n    return 'heads' if random.random() < 0.5 else 'tails'\n",
            "import random\nrandom.random = lambda: 0.25\nassert coin() == 'heads'\n",
        ),
        code(  # tests may change unittest's settings
            "tests_settings",
            "def add(a, b):\n    return a + b\n",
            "import unittest\nunittest.TestCase.maxDiff = None\n" + UNITTEST_ADD,
        ),
        code(  # a subclass of a builtin type, and builtin types other than the plain ones
            "subclasses",
            "import decimal, fractions\nclass Pair(tuple):\n    pass\nclass Name(str):\n    pass\n"
            "def parts():\n    return Pair((fractions.Fraction(1, 2), decimal.Decimal('0.5'), Name('x')))\n",
            "assert parts() == (0.5, 0.5, 'x')\nassert parts() != (1, 1, 'y')\n",
        ),
    ]
    assert [v.reason for v in stage.check_batch(honest)] == [None] * len(honest)


@needs_bwrap
def test_a_wildcard_in_the_tests_is_refused_as_one_the_solution_returned_would_be(stage):
    """`unittest.mock.ANY` in the tests is refused too: the solution could return it just as well."""
    wildcard = code(
        "tests_wildcard",
        "def pair(a):\n    return [a, object()]\n",
        "from unittest import mock\nassert pair(1) == [1, mock.ANY]\n",
    )
    (verdict,) = stage.check_batch([wildcard])
    assert verdict.detail == "tests: GamedTests: unittest.mock._ANY says it equals any object"


@needs_bwrap
def test_the_equality_guard_costs_little_when_tests_compare_big_values_many_times(stage):
    """Checking every membership in a big dict (or every big list) whole took ~2 ms a comparison."""
    heavy = code(
        "heavy",
        "def build(n):\n    return {i: i for i in range(n)}\n",
        "d = build(100_000)\nfor k in range(20_000):\n    assert k in d\n"
        "big = list(range(10_000))\nfor _ in range(2_000):\n    assert list(big) == big\n",
    )
    assert stage.check_batch([heavy])[0].reason is None  # the stage's time limit is 1 s


WRONG_ADD = "def add(a, b):\n    return 0\n"
# Each a wrong solution that the tests' own way of running, or code other than a replaced
# function, would have let pass.
ENDED_OR_UNCOUNTED = {
    # tests whose own run reports failures without raising
    "main_without_exit": (WRONG_ADD, UNITTEST_ADD + "unittest.main(argv=['x'], exit=False)\n"),
    "runner_run": (
        WRONG_ADD,
        UNITTEST_ADD + "unittest.TextTestRunner().run(unittest.defaultTestLoader.loadTestsFromTestCase(T))\n",
    ),
    # unittest.main() finds no TestCase and exits 0 before the test functions ran
    "functions_and_main": (
        WRONG_ADD,
        "import unittest\ndef test_add():\n    assert add(1, 2) == 3\nunittest.main()\n",
    ),
    # a solution function named `main` kept the TestCase from running
    "named_main": ("def main(x):\n    return 0\n", UNITTEST_ADD.replace("add(1, 2), 3", "main(2), 4")),
    # a SystemExit(0) or a skip raised by something the solution made, with no frame of its own
    "exit_as_the_function": (
        "import sys\nadd = lambda a, b: sys.exit(0)\nfib = sys.exit\n",
        "assert fib(0) == 0\n",
    ),
    "exit_builtin_in_the_function": ("def add(a, b):\n    exit(0)\n", "assert add(1, 2) == 3\n"),
    "exit_compiled_by_exec": (
        "exec('def add(a, b):\\n    raise SystemExit\\n')\n",
        "assert add(1, 2) == 3\n",
    ),
    "skip_compiled_by_exec": (
        "import unittest\nexec('def add(a, b):\\n    raise unittest.SkipTest(\"x\")\\n')\n",
        UNITTEST_ADD + "unittest.main()\n",
    ),
    # unittest's settings, hooks and options set by the solution
    "skip_every_test": (
        "import unittest\nunittest.TestCase.__unittest_skip__ = True\n" + WRONG_ADD,
        UNITTEST_ADD,
    ),
    "no_test_prefix": (
        "import unittest\nunittest.TestLoader.testMethodPrefix = 'zzz'\n" + WRONG_ADD,
        UNITTEST_ADD,
    ),
    "load_tests": (
        WRONG_ADD
        + "import unittest\ndef load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n",
        UNITTEST_ADD + "unittest.main()\n",
    ),
    "argv_filter": (
        "import sys\nsys.argv += ['-k', 'nomatch']\n" + WRONG_ADD,
        UNITTEST_ADD + "unittest.main()\n",
    ),
    # values that answer every comparison of one kind alike
    "equal_to_every_true_value": (
        "class A:\n    __hash__ = None\n    def __eq__(self, o):\n        return bool(o) and type(o) is not object\n"
        "def add(a, b):\n    return A()\n",
        "assert add(1, 2) == 3\nassert add(2, 2) == 4\n",
    ),
    "less_than_anything": (
        "class Z:\n    def __sub__(self, o):\n        return self\n    __rsub__ = __sub__\n"
        "    def __abs__(self):\n        return self\n    def __lt__(self, o):\n        return True\n"
        "def area(r):\n    return Z()\n",
        "assert abs(area(1.0) - 3.14159) < 1e-3\n",
    ),
    "difference_always_zero": (
        "class Z:\n    def __sub__(self, o):\n        return 0\n    __rsub__ = __sub__\ndef area(r):\n    return Z()\n",
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertAlmostEqual(area(1.0), 3.14159)\nunittest.main()\n",
    ),
    "holds_anything": (
        "class C:\n    def __contains__(self, x):\n        return True\ndef factors(n):\n    return C()\n",
        "assert 2 in factors(6)\n",
    ),
}


@needs_bwrap
def test_wrong_solutions_that_tests_ending_early_or_unittest_settings_would_admit_are_rejected(stage):
    docs = [code(name, solution, tests) for name, (solution, tests) in ENDED_OR_UNCOUNTED.items()]
    verdicts = stage.check_batch(docs)
    assert [(d.id, v.reason) for d, v in zip(docs, verdicts)] == [(d.id, "tests_failed") for d in docs]
    details = {d.id: v.detail for d, v in zip(docs, verdicts)}
    assert details["main_without_exit"] == (
        "tests: AssertionError: unittest: __main__.T.test_add: AssertionError: 0 != 3"
    )
    assert details["exit_as_the_function"] == (
        "tests: SystemExit: SystemExit(0) ended the tests early, not raised by the tests' own code"
    )
    assert (
        details["skip_every_test"]
        == "tests: GamedTests: the sample set unittest.case.TestCase.__unittest_skip__"
    )
    assert details["holds_anything"] == "tests: GamedTests: solution.C says it holds any object"
    assert (
        details["less_than_anything"] == "tests: GamedTests: solution.Z says it is ordered against any object"
    )
    assert details["difference_always_zero"] == (
        "tests: GamedTests: solution.Z says its difference from 0, 1 and 3 is the same"
    )


@needs_bwrap
def test_right_solutions_with_tests_that_end_or_run_themselves_or_compare_by_order_are_admitted(stage):
    right = "def add(a, b):\n    return a + b\n"
    honest = {
        "tests_exit": (right, "import sys\nassert add(1, 2) == 3\nsys.exit(0)\n"),
        "tests_raise_exit": (right, "assert add(1, 2) == 3\nraise SystemExit\n"),
        # the builtins `site` adds (the sandbox runs without it): the tests' own end too
        "tests_exit_builtin": (right, "assert add(1, 2) == 3\nexit(0)\n"),
        "tests_quit_builtin": (right, "if add(1, 2) != 3:\n    quit(1)\nquit()\n"),
        "main_without_exit": (right, UNITTEST_ADD + "unittest.main(exit=False)\nassert add(2, 2) == 4\n"),
        "functions_and_main": (
            right,
            "import unittest\ndef test_add():\n    assert add(1, 2) == 3\nunittest.main()\n",
        ),
        "named_main": (
            "def main(x):\n    return 2 * x\n",
            UNITTEST_ADD.replace("add(1, 2), 3", "main(2), 4"),
        ),
        "numbers_by_order": (
            "import decimal, fractions\ndef third():\n    return fractions.Fraction(1, 3)\n"
            "def tenth():\n    return decimal.Decimal('0.1')\n",
            "import unittest\nassert abs(third() - 0.3333) < 1e-3\nassert third() > 0 and tenth() <= 1\n"
            "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(third(), 1 / 3)\n"
            "        self.assertLess(tenth(), 1)\n",
        ),
        "container": (
            "class Bag:\n    def __init__(self, items):\n        self.items = list(items)\n"
            "    def __contains__(self, x):\n        return x in self.items\n"
            "def evens(n):\n    return Bag(range(0, n, 2))\n",
            "assert 2 in evens(6)\nassert 3 not in evens(6)\n",
        ),
    }
    docs = [code(name, solution, tests) for name, (solution, tests) in honest.items()]
    assert [(d.id, v.reason) for d, v in zip(docs, stage.check_batch(docs))] == [(d.id, None) for d in docs]


# A solution that implements nothing: it runs the tests' own test (found as RUN_TESTS says) with
# an `add` that answers what it learned, and a recorder for the rest that stores what it is
# compared with (and compares unequal, so no guard sees an object equal to everything).
LEARNS_FROM_THE_TESTS = (
    "import sys\nlearned, learning = {}, []\n"
    "class Recorder:\n    def __init__(self, key):\n        self.key = key\n"
    "    def __eq__(self, expected):\n        learned[self.key] = expected\n        return False\n"
    "def add(*args):\n"
    "    if learning:\n        return learned[args] if args in learned else Recorder(args)\n"
    "    if args not in learned:\n        learning.append(True)\n"
    "        for _ in range(5):\n            try:\n                RUN_TESTS\n                break\n"
    "            except (AssertionError, KeyError, AttributeError):\n                pass\n"
    "        learning.pop()\n"
    "    return learned.get(args)\n"
)
CHECK_ADD = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 2) == 4\n"
PYTEST_ADD = "def test_add():\n    assert add(1, 2) == 3\n    assert add(2, 2) == 4\n"


@needs_bwrap
def test_a_solution_cannot_run_the_tests_own_functions_to_learn_the_answers(stage):
    """The tests run in a module of their own; `check` and the collected tests leave it before
    they run. Before, such a solution passed 154 of 164 HumanEval tasks."""
    routes = {
        "check_in_globals": ("globals()['check'](add)", CHECK_ADD),
        "check_in_main": ("sys.modules['__main__'].check(add)", CHECK_ADD),
        "test_in_globals": ("globals()['test_add']()", PYTEST_ADD),
        "test_in_main": ("sys.modules['__main__'].test_add()", PYTEST_ADD),
    }
    docs = [
        code(name, LEARNS_FROM_THE_TESTS.replace("RUN_TESTS", run), tests, entry_point="add")
        for name, (run, tests) in routes.items()
    ]
    verdicts = stage.check_batch(docs)
    assert [(doc.id, verdict.keep) for doc, verdict in zip(docs, verdicts)] == [
        (doc.id, False) for doc in docs
    ]
    honest = stage.check_batch(
        [code("honest", "def add(a, b):\n    return a + b\n", CHECK_ADD, entry_point="add")]
    )
    assert honest[0].keep


@needs_bwrap
def test_a_module_the_solution_puts_in_sys_modules_for_the_tests_is_refused(stage):
    """A `pytest` of the solution's own, whose `parametrize` turned every test into nothing, passed a
    wrong solution (the right one fails: no pytest here). A module really imported is not refused."""
    planted = (
        "import sys, types\nfake = types.ModuleType('pytest')\n"
        "fake.fixture = lambda *a, **k: (lambda f: f)\n"
        "class Mark:\n    def __getattr__(self, name):\n        return lambda *a, **k: (lambda f: (lambda *x, **y: None))\n"
        "fake.mark = Mark()\nsys.modules['pytest'] = fake\n" + WRONG_ADD
    )
    tests = (
        "import pytest\n@pytest.mark.parametrize('a,b,total', [(1, 2, 3), (2, 2, 4)])\n"
        "def test_add(a, b, total):\n    assert add(a, b) == total\n"
    )
    imported = "import sys, graphlib\nsys.modules['graphlib'] = graphlib\ndef add(a, b):\n    return a + b\n"
    verdicts = stage.check_batch(
        [
            code("planted", planted, tests),
            code("imported", imported, "import graphlib\nassert add(1, 2) == 3\n"),
        ]
    )
    assert [(v.keep, v.detail) for v in verdicts] == [
        (False, "tests: GamedTests: the sample put a module of its own in sys.modules['pytest']"),
        (True, None),
    ]
