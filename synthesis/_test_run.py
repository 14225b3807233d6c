"""How the runner runs tests that the tests' code only defined, as pytest and unittest would (stdlib
only; loaded into the sandbox as `_test_guard.py` is, ahead of `_sandbox_runner.py`)."""

import ast
import asyncio
import sys
import types

# Bound once, in the warm interpreter: a solution that replaces `types.FunctionType`,
# `types.CoroutineType`, `asyncio.run` or `ast.walk` changed which tests were collected, or ran
# none (wrong solutions were admitted); the runner checks that these names stay as bound.
FunctionType, MethodType, CoroutineType = types.FunctionType, types.MethodType, types.CoroutineType
run_coroutine = asyncio.run
parse_source, walk_tree, NameNode, AttributeNode = ast.parse, ast.walk, ast.Name, ast.Attribute

XUNIT_HOOKS = ("setup_module", "teardown_module", "setup_function", "teardown_function")


def _call_test(function, *bound):
    """Call a collected test; one that needs arguments (pytest fixtures) cannot run, so it fails.

    An `async def` test is run to its end (calling it only made a coroutine: nothing ran).
    """
    code = function.__code__
    required = code.co_argcount - len(bound) - len(function.__defaults__ or ())
    if required > 0 or code.co_kwonlyargcount > len(function.__kwdefaults__ or {}):
        raise TypeError(
            f"{function.__qualname__} takes arguments (pytest fixtures?) and the tests never call it"
        )
    result = function(*bound)
    if isinstance(result, CoroutineType):
        run_coroutine(result)


def _run_test_method(instance, method):
    """One test method between its class's `setup_method` and `teardown_method` (pytest's hooks)."""
    _call_hook(instance, "setup_method", method)
    _call_test(method, instance)
    _call_hook(instance, "teardown_method", method)


def _call_hook(instance, name, method):
    hook = getattr(type(instance), name, None)
    if isinstance(hook, FunctionType):  # pytest passes the test method when the hook takes it
        if hook.__code__.co_argcount > 1:
            hook(instance, method)
        else:
            hook(instance)


def _call_xunit(hook, argument):
    """A pytest module or function hook (None: none), given the module or test when it takes one."""
    if hook is not None and hook.__code__.co_argcount:
        hook(argument)
    elif hook is not None:
        hook()


def _call_class_hook(cls, name):
    """`setup_class`/`teardown_class`, a classmethod or a function taking the class, as pytest."""
    hook = getattr(cls, name, None)
    if isinstance(hook, MethodType):
        hook()
    elif isinstance(hook, FunctionType):
        hook(cls)


def _referenced_names(tests):
    """Every name and attribute the tests' source mentions (a `def` or `class` line mentions none)."""
    nodes = list(walk_tree(parse_source(tests)))
    return {n.id for n in nodes if isinstance(n, NameNode)} | {
        n.attr for n in nodes if isinstance(n, AttributeNode)
    }


def run_defined_tests(namespace, before, tests, unittest_ran):
    """Run the tests that the tests' code only defined, as pytest and unittest would collect them.

    Top-level `test*` functions and `test*` methods of `Test*` classes (no `__init__`; a fresh
    instance per test, with `setup_method`) in definition order, then unittest.TestCase subclasses,
    with pytest's xunit hooks (`setup_module`, `setup_function`, `setup_class` and their teardowns);
    one that needs arguments fails. Without this, a wrong solution passed tests that were defined
    and never called. What the tests' source mentions (`test1()` at the end) is theirs to run, and
    TestCase subclasses are when unittest ran any test (`unittest.main()`): running a test twice
    can fail when tests share state.
    """
    if "def test" not in tests and "class " not in tests:
        return
    mentioned = _referenced_names(tests)
    hooks = {
        name: hook
        for name in XUNIT_HOOKS
        if isinstance(hook := namespace.get(name), FunctionType)
        and hook.__code__.co_filename == "<tests>"
        and name not in mentioned
    }
    collected, cases = [], []  # test functions and (Test class, its tests), in definition order
    taken = []  # their names
    for name, value in list(namespace.items()):
        if before.get(name) is value or name in mentioned:
            continue
        unittest = sys.modules.get("unittest")
        if isinstance(value, FunctionType):
            if name.startswith("test") and value.__code__.co_filename == "<tests>":
                collected.append(value)
                taken.append(name)
        elif not isinstance(value, type) or value.__module__ != "__main__":
            continue
        elif unittest is not None and issubclass(value, unittest.TestCase):
            cases.append(value)
            taken.append(name)
        elif name.startswith("Test") and "__init__" not in vars(value):
            methods = [
                method
                for method_name, method in vars(value).items()
                if method_name.startswith("test")
                and method_name not in mentioned
                and isinstance(method, FunctionType)
            ]
            if methods:
                collected.append((value, methods))
                taken.append(name)
    cases = cases if not unittest_ran else []
    if not (collected or cases):
        return
    for name in taken:  # out of the module a solution can import (nothing else names them)
        del namespace[name]
    module = sys.modules["__main__"]
    _call_xunit(hooks.get("setup_module"), module)
    for item in collected:
        if isinstance(item, tuple):
            cls, methods = item
            _call_class_hook(cls, "setup_class")
            for method in methods:
                _run_test_method(cls(), method)  # a fresh instance per test, as pytest
            _call_class_hook(cls, "teardown_class")
        else:
            _call_xunit(hooks.get("setup_function"), item)
            _call_test(item)
            _call_xunit(hooks.get("teardown_function"), item)
    if cases:
        unittest = sys.modules["unittest"]
        suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(case) for case in cases)
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
        if result.testsRun == 0 and any(name.startswith("test") for case in cases for name in dir(case)):
            raise AssertionError("unittest collected no test from " + ", ".join(c.__name__ for c in cases))
        if not result.wasSuccessful():
            test, trace = (result.errors + result.failures)[0]
            raise AssertionError(f"{test.id()}: {trace.strip().splitlines()[-1]}")
    _call_xunit(hooks.get("teardown_module"), module)


def tests_check(check, before_tests) -> bool:
    """Whether the tests defined a HumanEval `check(candidate)`: one the solution defined (a
    helper named check), or a `check()` of the tests' own that takes no candidate, is not called."""
    code = getattr(check, "__code__", None)
    if not callable(check) or check is before_tests or code is None:
        return False
    required = code.co_argcount - len(getattr(check, "__defaults__", None) or ())
    return required <= 1 <= code.co_argcount
