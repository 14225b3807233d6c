"""Guards against solutions that game the tests instead of solving the task (stdlib only).

Runs inside the sandbox: `synthesis.sandbox` loads this source as the module `_test_guard` ahead of
`_sandbox_runner.py`, which imports it. `guard_unittest()` is called once in the warm interpreter;
per sample, the runner compiles the tests with `compile_tests` (every single comparison becomes a
call of one of HELPERS, which it puts in the tests' namespace) and calls `refuse_tampering` after
the solution's module code and after the tests. What is found is kept in `FOUND`, so tests that
catch a guard's exception do not hide it. `_frame_guard` keeps the sample away from the
verifier's own state.
"""

import ast
import builtins
import contextlib
import functools
import itertools
import opcode
import operator
import sys
import types

# Values of these types hold no code of the sample's: nothing to check inside them.
PLAIN_TYPES = (int, float, complex, str, bytes, bool, type(None))
PLAIN_SET = frozenset(PLAIN_TYPES)
CONTAINERS = (list, tuple, set, frozenset, dict)
HASHED_CONTAINERS = (set, frozenset, dict)
# Values inside a compared container checked for an always-equal object, at most.
GAMING_CHECK_BUDGET = 1_000
# Pairs of values of one type that differ in value (in truth and length too, then both true): no
# honest value equals both.
UNEQUAL_PAIRS = (
    (0, 1),
    (0.0, 2.5),
    ("", "gristmill"),
    ((), (None,)),
    ([], [None]),
    (1, 2),
    ("a", "b"),
    ((1,), (2,)),
    ({}, {None: None}),
    (set(), {None}),
    (frozenset(), frozenset({None})),
    (b"", b"gristmill"),
)
FOUND = []  # what a guard found; kept even if the tests catch the exception it raised
UNITTEST_RUNS, UNITTEST_FAILURES = [], []  # a None per test unittest started; what failed (`_record_results`)
TRUSTED_CODE = set()  # ids of unittest's and this module's code (`raised_through_other_code`)
TESTS_CODE = set()  # ids of the tests' code (`compile_tests`)
TESTS_IMPORTS = set()  # the modules the tests import, and their packages (`compile_tests`)
RAISE_VARARGS = opcode.opmap["RAISE_VARARGS"]
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code, not a builtin type
_type_flags = type.__dict__["__flags__"].__get__  # a class's real flags, whatever its metaclass says


class GamedTests(AssertionError):
    """Tests passed only because the solution's objects or patches answer for them."""


def compile_tests(tests):
    """The tests compiled with every single `==`, `!=`, `in`, `not in`, `<`, `<=`, `>` and `>=`
    and every `-` made a call of the helper for its operator (HELPERS), which refuses objects that
    answer any comparison or difference alike, and each `sys.exit(...)`, `exit(...)` or `quit(...)`
    statement made `raise SystemExit(...)` (how the tests' own end is told from a SystemExit raised
    by the solution: `raised_by_tests`); the modules they import are noted (`TESTS_IMPORTS`). A
    walk, not a NodeTransformer: 3x cheaper."""
    tree = ast.parse(tests, "<tests>")
    for node in ast.walk(tree):
        if type(node) in (ast.Import, ast.ImportFrom):
            _note_imports(node)
        for field, value in ast.iter_fields(node):
            if type(value) is list:
                for index, item in enumerate(value):
                    if call := _guarded_operation(item):
                        value[index] = call
                    elif type(item) is ast.Expr and _is_sys_exit(item.value):
                        value[index] = _raise_system_exit(item)
            elif call := _guarded_operation(value):
                setattr(node, field, call)
    code = compile(tree, "<tests>", "exec")
    TESTS_CODE.update(nested_code_ids([code]))
    return code


def _note_imports(node):
    """Add the modules an import statement of the tests loads (and their packages) to TESTS_IMPORTS."""
    if type(node) is ast.Import:
        names = [alias.name for alias in node.names]
    elif node.level or not node.module:
        return  # relative: the tests are no package
    else:  # `from a import b`: b may be a submodule
        names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    for name in names:
        parts = name.split(".")
        TESTS_IMPORTS.update(".".join(parts[: end + 1]) for end in range(len(parts)))


def _is_sys_exit(node):
    """Whether the call is `sys.exit(...)`, `exit(...)` or `quit(...)`."""
    function = getattr(node, "func", None)
    if type(node) is not ast.Call:
        return False
    if type(function) is ast.Name:
        return function.id in ("exit", "quit")
    return (
        type(function) is ast.Attribute
        and function.attr == "exit"
        and type(function.value) is ast.Name
        and function.value.id == "sys"
    )


def _raise_system_exit(statement):
    """`raise SystemExit(...)` for the statement `sys.exit(...)` (the real class: the name is the tests')."""
    call = statement.value
    exit_class = ast.copy_location(ast.Name(EXIT_NAME, ast.Load()), call.func)
    raised = ast.copy_location(ast.Call(exit_class, call.args, call.keywords), call)
    return ast.copy_location(ast.Raise(raised, None), statement)


def _guarded_operation(node):
    """`__gristmill_eq__(a, b)` for `a == b`, and so on (chained comparisons are left as they
    are), `__gristmill_sub__(a, b)` for `a - b`; None for any other node."""
    kind = type(node)
    if kind is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in HELPER_NAMES:
        operator_type, operands = type(node.ops[0]), [node.left, node.comparators[0]]
    elif kind is ast.BinOp and type(node.op) is ast.Sub:
        operator_type, operands = ast.Sub, [node.left, node.right]
    else:
        return None
    at = {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}
    helper = ast.Name(HELPER_NAMES[operator_type], ast.Load(), **at)
    return ast.Call(helper, operands, [], **at)


# Each helper compares as the operator does, then, when it found two different objects equal (or
# a member), looks at the operands. Membership in a dict or set goes by hash, not `__eq__`: there
# only the value looked up is. An object of a class made by Python code is also looked at before
# (an `__eq__` that answers True only the first time it is asked).
def _equal(left, right):
    _check_made_objects(left, right)
    result = left == right
    if result is not False and left is not right:
        _check_operands(left, right, False)
    return result


def _not_equal(left, right):
    _check_made_objects(left, right)
    result = left != right
    if result is not True and left is not right:
        _check_operands(left, right, False)
    return result


def _subtract(left, right):
    """`left - right`, refusing an operand made by Python code whose difference from any number is
    the same (`abs(area(1) - 3.14159) < 1e-3` passed by a `__sub__` that returns 0.0)."""
    for value in (left, right):
        _refuse_fake_number(value)
    return left - right


def _check_made_objects(*values):
    """`_check_equality` for each of `values` of a class made by Python code (not a container's subclass)."""
    for value in values:
        kind = type(value)
        if kind not in PLAIN_SET and _type_flags(kind) & HEAP_TYPE and not issubclass(kind, CONTAINERS):
            _check_equality(value, kind)


def _member(left, right):
    result = left in right
    if result:
        _check_operands(left, right, type(right) in HASHED_CONTAINERS)
        _refuse_holds_anything(right)
    return result


def _not_member(left, right):
    result = left not in right
    if not result:
        _check_operands(left, right, type(right) in HASHED_CONTAINERS)
        _refuse_holds_anything(right)
    return result


def _ordering(compare):
    """The helper for an ordering operator: when it holds, neither operand may be an object that
    says it is ordered against anything (`_refuse_fake_number`)."""

    def ordered(left, right):
        result = compare(left, right)
        if result:
            for value in (left, right):
                _refuse_fake_number(value)
        return result

    return ordered


def _refuse_holds_anything(container):
    """Raise GamedTests if a container of a class made by Python code says it holds a fresh object()."""
    kind = type(container)
    if _type_flags(kind) & HEAP_TYPE and _claims(lambda: object() in container):
        _gamed(f"{kind.__module__}.{kind.__qualname__} says it holds any object")


def _refuse_fake_number(value):
    """Raise GamedTests if `value`, of a class made by Python code, says it is ordered against a
    fresh object() (`abs(area(1) - 3.14) < 1e-3` passed by an object that is less than anything), or
    its difference from a number does not depend on the number (`assertAlmostEqual`)."""
    kind = type(value)
    if kind in PLAIN_SET or not _type_flags(kind) & HEAP_TYPE:
        return
    probe, name = object(), f"{kind.__module__}.{kind.__qualname__}"
    if any(_claims(lambda order=order: order(value, probe)) for order in ORDERS):
        _gamed(f"{name} says it is ordered against any object")
    if _same_difference(value):
        _gamed(f"{name} says its difference from 0, 1 and 3 is the same")


def _same_difference(value):
    """Whether `value`'s differences from 0, 1 and 3 (either way round, or as distances: no number
    is as far from all three) are the same."""
    for difference in (lambda n: value - n, lambda n: n - value, lambda n: abs(value - n)):
        try:
            first, second, third = (difference(n) for n in (0, 1, 3))
        except Exception:
            continue
        if _same(first, second) and _same(second, third):
            return True
    return False


def _same(a, b):
    return type(a) is type(b) and (a is b or (type(a) in PLAIN_SET and a == b))


def _claims(question):
    """Whether `question()` answers true (an error or NotImplemented: it does not)."""
    try:
        answer = question()
        return answer is not NotImplemented and bool(answer)
    except Exception:
        return False


def _gamed(found):
    FOUND.append(found)
    raise GamedTests(found)


def _check_operands(left, right, by_hash):
    if type(left) not in PLAIN_TYPES:
        _refuse_always_equal(left)
    if not by_hash and type(right) not in PLAIN_TYPES:
        _refuse_always_equal(right)


ORDERED_ASSERTS = (
    "assertAlmostEqual",
    "assertNotAlmostEqual",
    "assertLess",
    "assertGreater",
    "failUnlessAlmostEqual",
    "failIfAlmostEqual",
)
# unittest's names for the values an assertion compares, when they are given by keyword
COMPARED_KEYWORDS = (
    *("first", "second", "a", "b", "member", "container", "expr", "obj"),
    *("seq1", "seq2", "list1", "list2", "tuple1", "tuple2", "set1", "set2", "d1", "d2"),
)
ORDERS = (operator.lt, operator.le, operator.gt, operator.ge)
HELPER_NAMES = {
    ast.Eq: "__gristmill_eq__",
    ast.NotEq: "__gristmill_ne__",
    ast.In: "__gristmill_in__",
    ast.NotIn: "__gristmill_not_in__",
    ast.Lt: "__gristmill_lt__",
    ast.LtE: "__gristmill_le__",
    ast.Gt: "__gristmill_gt__",
    ast.GtE: "__gristmill_ge__",
    ast.Sub: "__gristmill_sub__",
}
EXIT_NAME = "__gristmill_exit__"
# for the tests' namespace
HELPERS = {
    **dict(
        zip(
            HELPER_NAMES.values(),
            (_equal, _not_equal, _member, _not_member, *map(_ordering, ORDERS), _subtract),
        )
    ),
    EXIT_NAME: SystemExit,
}


def _refuse_always_equal(value):
    """Raise GamedTests if `value`, or a value inside it (at most GAMING_CHECK_BUDGET values), is
    an object that equals anything (`_check_equality`)."""
    stack, budget = [value], GAMING_CHECK_BUDGET
    while stack and budget > 0:
        item = stack.pop()
        kind = type(item)
        if kind in PLAIN_SET:
            continue
        base = kind if kind in CONTAINERS else next((c for c in CONTAINERS if issubclass(kind, c)), None)
        if base is None:
            budget -= 1
        else:
            # A dict's keys are matched by hash, its values compared with `==`; a subclass's values
            # are read as its builtin type reads them (its own `__iter__` could hide some).
            values = list(
                itertools.islice(dict.values(item) if base is dict else base.__iter__(item), budget)
            )
            budget -= len(values) + 1
            if not PLAIN_SET.issuperset(map(type, values)):  # the type check runs in C
                stack.extend(v for v in values if type(v) not in PLAIN_SET)
        if kind is not base and _type_flags(kind) & HEAP_TYPE:
            _check_equality(item, kind)


def _check_equality(item, kind):
    """Raise GamedTests if `item`, of a class made by Python code (the solution's, or a module's, as
    `unittest.mock.ANY`'s; however its `__eq__` was made), says it equals a fresh `object()`, or
    both values of a pair no honest value equals at once (an `__eq__` that only answers True to
    numbers, strings, tuples or lists). A builtin type's own equality (numpy's too) is trusted."""
    if _claims(lambda: item == object()) or any(
        _claims(lambda a=a: item == a) and _claims(lambda b=b: item == b) for a, b in UNEQUAL_PAIRS
    ):
        _gamed(f"{kind.__module__}.{kind.__qualname__} says it equals any object")


def guard_unittest(watched_modules):
    """Check the arguments of every TestCase assert method, and where every skip or stop that a
    test part ends with comes from; record every unittest test run and failure, whoever runs it
    (`refuse_failed_unittest`); make `unittest.main()` return instead of exiting. Return what the
    sample may not replace, as it is now, to tell afterwards whether it did: (before the tests:
    the builtins, the functions, classes and `sys.modules` entries of `watched_modules`, as
    `math.isclose`, and every attribute of unittest's classes and default loader, as
    `testMethodPrefix`; after them too: unittest's modules' and classes' functions). (Every loaded
    module would cost 1.5 ms a sample: reading a forked child's objects copies their memory pages.)"""
    import unittest
    import unittest.case

    for name, method in list(vars(unittest.TestCase).items()):
        # `fail*` too: Python 3.11's deprecated aliases (`failUnlessEqual`) call the unguarded original
        if (
            name.startswith(("assert", "fail"))
            and name not in ("fail", "failureException")
            and callable(method)
        ):
            setattr(unittest.TestCase, name, _guarded(method, name))
    outcome = unittest.case._Outcome
    ends = (unittest.SkipTest, getattr(unittest.case, "_ShouldStop", unittest.SkipTest))
    outcome.testPartExecutor = _part_executor(outcome.testPartExecutor, ends)
    _record_results(unittest.TestResult)
    unittest.TestProgram.runTests = _without_exit(unittest.TestProgram.runTests)
    modules = [
        m
        for n, m in sys.modules.items()
        if (n == "unittest" or n.startswith("unittest.")) and n != "unittest.mock"
    ]
    classes = [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]
    TRUSTED_CODE.update(nested_code_ids(_codes([*map(vars, modules + classes), globals()])))
    after_tests = _behaviour(modules + classes)
    loaded = {name: sys.modules[name] for name in [*watched_modules, *(m.__name__ for m in modules)]}
    others = [sys.modules[name] for name in watched_modules]
    settings = [(_qualified(c) + ".{}", vars(c), dict(vars(c)), True) for c in classes]
    loader = (
        "unittest.defaultTestLoader.{}",
        vars(unittest.defaultTestLoader),
        dict(vars(unittest.defaultTestLoader)),
        True,
    )
    before_tests = [
        ("sys.modules[{!r}]", sys.modules, loaded, False),
        *_behaviour([builtins, *others]),
        *settings,
        loader,
    ]
    return before_tests + after_tests, after_tests


def _behaviour(owners):
    """(label, live attributes, attributes now, False: names may be added) of each of `owners`: its
    functions and classes."""
    return [
        (_qualified(owner) + ".{}", vars(owner), {k: v for k, v in vars(owner).items() if _is_code(v)}, False)
        for owner in owners
    ]


def _codes(namespaces):
    """The code objects of the functions, methods and properties of modules' or classes' namespaces,
    and of the functions they wrap (`functools.wraps`: a context manager's, a guarded assert's)."""
    found = []
    for namespace in namespaces:
        for value in namespace.values():
            for function in (value, getattr(value, "__func__", None), getattr(value, "fget", None)):
                while isinstance(function, types.FunctionType):
                    found.append(function.__code__)
                    function = getattr(function, "__wrapped__", None)
    return found


def _record_results(result_class):
    """Count every test a unittest result starts, and keep every failure one records (the tests'
    own `unittest.main(exit=False)` or `TextTestRunner().run(...)` report failures, raising none)."""
    start, add_error, add_failure = result_class.startTest, result_class.addError, result_class.addFailure
    add_sub_test, add_unexpected_success = result_class.addSubTest, result_class.addUnexpectedSuccess

    def startTest(self, test):
        UNITTEST_RUNS.append(None)
        return start(self, test)

    def addError(self, test, err):
        _note_failure(test, err)
        return add_error(self, test, err)

    def addFailure(self, test, err):
        _note_failure(test, err)
        return add_failure(self, test, err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            _note_failure(subtest, err)
        return add_sub_test(self, test, subtest, err)

    def addUnexpectedSuccess(self, test):
        _note_failure(test, (None, "passed, though expected to fail"))
        return add_unexpected_success(self, test)

    for method in (startTest, addError, addFailure, addSubTest, addUnexpectedSuccess):
        setattr(result_class, method.__name__, method)


def _note_failure(test, err):
    try:
        kind = f"{err[0].__name__}: " if err[0] is not None else ""
        UNITTEST_FAILURES.append(f"{test.id()}: {kind}{err[1]}")
    except Exception:  # the sample's exception may not convert to a string
        UNITTEST_FAILURES.append("a unittest test failed")


def refuse_failed_unittest():
    """Raise AssertionError if a unittest run recorded a failure, an error or an unexpected success."""
    if UNITTEST_FAILURES:
        raise AssertionError(f"unittest: {UNITTEST_FAILURES[0]}")


def _without_exit(run_tests):
    """`TestProgram.runTests` that returns instead of exiting: failures are the recorded ones, and
    a SystemExit that ends the tests is their own (`raised_by_tests`)."""

    @functools.wraps(run_tests)
    def runTests(self):
        self.exit = False
        return run_tests(self)

    return runTests


def import_machinery():
    """Where modules are found from now: sys.path, meta_path and path_hooks, and the finder cached
    for each path (a sample that changes them can hand the tests a module of its own)."""
    lists = [(name, list(getattr(sys, name))) for name in ("path", "meta_path", "path_hooks")]
    return lists, dict(sys.path_importer_cache), dict(sys.modules)


def _planted(name, module):
    """Whether `module`, put in sys.modules[name] by the sample, is not what the import machinery
    finds under that name (a `pytest` of the sample's own that turns every test into nothing)."""
    package = name.rpartition(".")[0]
    path = getattr(sys.modules.get(package), "__path__", None) if package else None
    found = None
    if path is not None or not package:
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is not None and (found := find_spec(name, path)) is not None:
                break
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    return found is None or origin is None or origin != found.origin


def _part_executor(executor, ends):
    """unittest's `_Outcome.testPartExecutor`, noting an exception of `ends` (a skip, any subclass
    of SkipTest however it was made, or unittest's internal stop) raised through the solution's
    code: unittest counts that test as skipped or passed, though it did not run to its end."""

    @contextlib.contextmanager
    def part_executor(self, test_case, subTest=False):
        with executor(self, test_case, subTest):
            try:
                yield
            except ends as error:
                if raised_through_other_code(error):
                    kind = type(error)
                    FOUND.append(f"the solution ended a test early ({kind.__module__}.{kind.__qualname__})")
                raise

    return part_executor


def raised_through_other_code(error):
    """Whether code other than the tests', unittest's and the guard's own is on the exception's
    traceback: the solution's, or code it compiled (`exec`)."""
    trace = error.__traceback__
    while trace is not None:
        code = id(trace.tb_frame.f_code)
        if code not in TRUSTED_CODE and code not in TESTS_CODE:
            return True
        trace = trace.tb_next
    return False


def raised_by_tests(error):
    """Whether the exception was raised by a `raise` statement of the tests' own code (a
    `sys.exit(...)` statement of theirs is one: `compile_tests`), not by a call made there of
    something the solution made (`fib = sys.exit`, then `fib(0)`)."""
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return False
    code = trace.tb_frame.f_code
    return id(code) in TESTS_CODE and code.co_code[trace.tb_lasti] == RAISE_VARARGS


def _is_code(value):
    """Whether a class or module attribute is behaviour (settings such as `maxDiff` are the tests' to change)."""
    return callable(value) or isinstance(value, (classmethod, staticmethod, property))


def _guarded(method, name):
    ordered = name.startswith(ORDERED_ASSERTS)

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        # the two values compared, given by position or by name (`assertEqual(first=..., second=...)`)
        compared = [*args[:2], *(kwargs[key] for key in COMPARED_KEYWORDS if key in kwargs)]
        for value in compared:
            _refuse_always_equal(value)
            if ordered:
                _refuse_fake_number(value)
        result = method(self, *args, **kwargs)
        _check_made_objects(*compared)  # asked again: an `__eq__` that says True after some calls
        return result

    return guarded


def _qualified(owner):
    return (
        owner.__name__ if isinstance(owner, types.ModuleType) else f"{owner.__module__}.{owner.__qualname__}"
    )


def refuse_tampering(watched, imports=None):
    """Raise GamedTests if a guard found something, or the sample replaced something `watched`
    ((label, live mapping, what it held, whether it held every name) each), added a name to one
    that held every name, changed the `import_machinery` from `imports`, or planted a module the
    tests import."""
    for label, live, held, complete in watched:
        for name, value in held.items():
            if live.get(name) is not value:
                FOUND.append("the sample replaced " + label.format(name))
        if complete and len(live) != len(held):
            added = sorted(str(name) for name in live.keys() - held.keys())
            FOUND.append("the sample set " + label.format(added[0] if added else "?"))
    if imports is not None:
        lists, finders, modules = imports
        for name in sorted(TESTS_IMPORTS):
            module = sys.modules.get(name)
            if module is not None and modules.get(name) is not module and _planted(name, module):
                FOUND.append(f"the sample put a module of its own in sys.modules[{name!r}]")
        for name, items in lists:
            now = getattr(sys, name)
            if len(now) != len(items) or any(a is not b for a, b in zip(now, items)):
                FOUND.append(f"the sample changed sys.{name}")
        refuse_tampering([("sys.path_importer_cache[{!r}]", sys.path_importer_cache, finders, False)])
    if FOUND:
        raise GamedTests(FOUND[0])


def nested_code_ids(codes):
    """Ids of `codes` and of the code defined inside them."""
    ids, pending = set(), list(codes)
    while pending:
        code = pending.pop()
        ids.add(id(code))
        pending.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return frozenset(ids)
