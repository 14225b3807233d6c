"""Guards against solutions that game the tests instead of solving the task (stdlib only).

Runs inside the sandbox: `synthesis.sandbox` loads this source as the module `_test_guard` ahead of
`_sandbox_runner.py`, which imports it. `guard_unittest()` is called once in the warm interpreter;
per sample, the runner compiles the tests with `compile_tests` (every single comparison becomes a
call of one of HELPERS, which it puts in the tests' namespace) and calls `refuse_tampering` after
the solution's module code and after the tests. What is found is kept in `FOUND`, so tests that catch a guard's exception do not hide it.
Before the sample runs, the child calls `guard_introspection` (with `frame_users()`, taken once in
the warm interpreter), which keeps the verifier's frames and memory, and so its report, out of the
sample's reach.
"""

import _thread
import ast
import builtins
import contextlib
import functools
import itertools
import os
import sys
import types

# Values of these types hold no code of the sample's: nothing to check inside them.
PLAIN_TYPES = (int, float, complex, str, bytes, bool, type(None))
PLAIN_SET = frozenset(PLAIN_TYPES)
CONTAINERS = (list, tuple, set, frozenset, dict)
HASHED_CONTAINERS = (set, frozenset, dict)
# Values inside a compared container checked for an always-equal object, at most.
GAMING_CHECK_BUDGET = 1_000
# Pairs of values of one type that differ in value, truth, length and remainder: no honest value
# equals both.
UNEQUAL_PAIRS = ((0, 1), (0.0, 2.5), ("", "gristmill"), ((), (None,)), ([], [None]))
FOUND = []  # what a guard found; kept even if the tests catch the exception it raised
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code, not a builtin type
_type_flags = type.__dict__["__flags__"].__get__  # a class's real flags, whatever its metaclass says
# What `guard_introspection` refuses a sample: ways to the verifier's frames, objects and memory.
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
REFUSED_EVENTS = frozenset(
    {
        "sys._current_frames",
        "sys.addaudithook",  # a later hook is given the frames the allowed callers take
        "sys.settrace",
        "sys.setprofile",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        # ctypes may load libraries (numpy does), not call C functions or read memory by address
        "ctypes.call_function",
        "ctypes.cdata",
        "ctypes.string_at",
        "ctypes.wstring_at",
    }
)
PATH_EVENTS = frozenset({"open", "os.chdir", "os.symlink"})
PROCESS_FOLDERS = frozenset({"proc", "fd"})  # /proc/self/mem; /dev/fd/.. is /proc/self


class GamedTests(AssertionError):
    """Tests passed only because the solution's objects or patches answer for them."""


def compile_tests(tests):
    """The tests compiled with every single `==`, `!=`, `in` and `not in` made a call of the
    helper for its operator (HELPERS), which refuses always-equal objects (a walk, not a
    NodeTransformer: 3x cheaper)."""
    tree = ast.parse(tests, "<tests>")
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if type(value) is list:
                for index, item in enumerate(value):
                    if type(item) is ast.Compare and (call := _guarded_comparison(item)):
                        value[index] = call
            elif type(value) is ast.Compare and (call := _guarded_comparison(value)):
                setattr(node, field, call)
    return compile(tree, "<tests>", "exec")


def _guarded_comparison(node):
    """`__gristmill_eq__(a, b)` for `a == b`, and so on (chained comparisons are left as they are)."""
    if len(node.ops) != 1 or type(node.ops[0]) not in HELPER_NAMES:
        return None
    at = {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}
    helper = ast.Name(HELPER_NAMES[type(node.ops[0])], ast.Load(), **at)
    return ast.Call(helper, [node.left, node.comparators[0]], [], **at)


# Each helper compares as the operator does, then, when it found two different objects equal (or
# a member), looks at the operands. Membership in a dict or set goes by hash, not `__eq__`: there
# only the value looked up is.
def _equal(left, right):
    result = left == right
    if result is not False and left is not right:
        _check_operands(left, right, False)
    return result


def _not_equal(left, right):
    result = left != right
    if result is not True and left is not right:
        _check_operands(left, right, False)
    return result


def _member(left, right):
    result = left in right
    if result:
        _check_operands(left, right, type(right) in HASHED_CONTAINERS)
    return result


def _not_member(left, right):
    result = left not in right
    if not result:
        _check_operands(left, right, type(right) in HASHED_CONTAINERS)
    return result


def _check_operands(left, right, by_hash):
    if type(left) not in PLAIN_TYPES:
        _refuse_always_equal(left)
    if not by_hash and type(right) not in PLAIN_TYPES:
        _refuse_always_equal(right)


HELPER_NAMES = {
    ast.Eq: "__gristmill_eq__",
    ast.NotEq: "__gristmill_ne__",
    ast.In: "__gristmill_in__",
    ast.NotIn: "__gristmill_not_in__",
}
HELPERS = dict(zip(HELPER_NAMES.values(), (_equal, _not_equal, _member, _not_member)))  # for the namespace


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
    if _claims_equal(item, object()) or any(
        _claims_equal(item, a) and _claims_equal(item, b) for a, b in UNEQUAL_PAIRS
    ):
        FOUND.append(f"{kind.__module__}.{kind.__qualname__} says it equals any object")
        raise GamedTests(FOUND[-1])


def _claims_equal(item, other):
    try:
        claims = item == other
        return claims is not NotImplemented and bool(claims)
    except Exception:
        return False


def guard_unittest(watched_modules):
    """Check the arguments of every TestCase assert method, and where every skip or stop that a
    test part ends with comes from. Return what the sample may not replace, as it is now, to tell
    afterwards whether it did: (before the tests: the builtins, and the functions, classes and
    `sys.modules` entries of `watched_modules`, as `math.isclose`; after them too: unittest's
    modules and classes). (Every loaded module would cost 1.5 ms a sample: reading a forked
    child's objects copies their memory pages.)"""
    import unittest
    import unittest.case

    for name, method in list(vars(unittest.TestCase).items()):
        if name.startswith("assert") and callable(method):
            setattr(unittest.TestCase, name, _guarded(method))
    outcome = unittest.case._Outcome
    ends = (unittest.SkipTest, getattr(unittest.case, "_ShouldStop", unittest.SkipTest))
    outcome.testPartExecutor = _part_executor(outcome.testPartExecutor, ends)
    modules = [m for n, m in sys.modules.items() if n == "unittest" or n.startswith("unittest.")]
    owners = modules + [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]
    after_tests = _behaviour(owners)
    loaded = {name: sys.modules[name] for name in [*watched_modules, *(m.__name__ for m in modules)]}
    others = [sys.modules[name] for name in watched_modules]
    before_tests = [("sys.modules[{!r}]", sys.modules, loaded), *_behaviour([builtins, *others])]
    return before_tests + after_tests, after_tests


def _behaviour(owners):
    """(label, live attributes, attributes now) of each of `owners`: its functions and classes."""
    return [
        (_qualified(owner) + ".{}", vars(owner), {k: v for k, v in vars(owner).items() if _is_code(v)})
        for owner in owners
    ]


def import_machinery():
    """Where modules are found from now: sys.path, meta_path and path_hooks, and the finder cached
    for each path (a sample that changes them can hand the tests a module of its own)."""
    lists = [(name, list(getattr(sys, name))) for name in ("path", "meta_path", "path_hooks")]
    return lists, dict(sys.path_importer_cache)


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
                if raised_in_solution(error):
                    kind = type(error)
                    FOUND.append(f"the solution ended a test early ({kind.__module__}.{kind.__qualname__})")
                raise

    return part_executor


def raised_in_solution(error):
    """Whether the solution's own code is on the exception's traceback."""
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<solution>":
            return True
        trace = trace.tb_next
    return False


def _is_code(value):
    """Whether a class or module attribute is behaviour (settings such as `maxDiff` are the tests' to change)."""
    return callable(value) or isinstance(value, (classmethod, staticmethod, property))


def _guarded(method):
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        for value in args[:2]:
            _refuse_always_equal(value)
        return method(self, *args, **kwargs)

    return guarded


def _qualified(owner):
    return (
        owner.__name__ if isinstance(owner, types.ModuleType) else f"{owner.__module__}.{owner.__qualname__}"
    )


def refuse_tampering(watched, imports=None):
    """Raise GamedTests if a guard found something, or the sample replaced something `watched`
    ((label, live mapping, what it held) each) or changed the `import_machinery` from `imports`."""
    for label, live, held in watched:
        for name, value in held.items():
            if live.get(name) is not value:
                FOUND.append("the sample replaced " + label.format(name))
    if imports is not None:
        lists, finders = imports
        for name, items in lists:
            now = getattr(sys, name)
            if len(now) != len(items) or any(a is not b for a, b in zip(now, items)):
                FOUND.append(f"the sample changed sys.{name}")
        refuse_tampering([("sys.path_importer_cache[{!r}]", sys.path_importer_cache, finders)])
    if FOUND:
        raise GamedTests(FOUND[0])


def intact_check(namespaces):
    """A check, made before any sample runs, that every name of `namespaces` (the verifier's module
    dicts) still holds the object it held: a sample that replaced the verifier's own functions or
    lists (reachable from a guarded unittest method's `__globals__`) to skip its checks is found.
    It calls nothing a sample could replace."""
    snapshots = [(namespace, dict(namespace)) for namespace in namespaces]
    get, items = dict.get, dict.items

    def intact():
        for namespace, snapshot in snapshots:
            for name, value in items(snapshot):
                if get(namespace, name, snapshots) is not value:
                    return False
        return True

    return intact


def frame_users():
    """Code allowed to take a frame once a sample runs, as ids of code objects (a code object the
    sample makes under the same name is another object): (code that reads a frame, passes it to
    nothing the sample could replace, and hands out only names: namedtuple's, an Enum's and typing's
    module lookups, unittest's frame checks, traceback's clearing, the verifier's traceback check;
    traceback's frame walks, allowed when they feed its stack summary without local variables; that
    summary's code). Functions this Python lacks are left out. (logging's caller lookup passes the
    frame to a module function a sample could replace, and importing logging here would slow every
    fork: its at-fork hooks.)"""
    import collections
    import enum
    import traceback
    import typing
    import unittest.result

    readers = [
        _lookup(collections, "namedtuple"),
        _lookup(enum, "EnumType", "_create_"),
        _lookup(typing, "_caller"),
        _lookup(traceback, "clear_frames"),
        _lookup(unittest.result, "TestResult", "_is_relevant_tb_level"),
        raised_in_solution,
    ]
    walks = [_lookup(traceback, name) for name in ("walk_tb", "walk_stack", "_walk_tb_with_full_positions")]
    extract = _lookup(traceback, "StackSummary", "extract")  # its frame generator is a walk too
    summary = _lookup(traceback, "StackSummary", "_extract_from_extended_frame_gen")
    walk_codes = _code_ids(walks) | (_code_ids([extract]) - {id(extract.__code__)} if extract else set())
    return _code_ids(readers), walk_codes, summary.__code__ if summary else None


def _lookup(owner, *names):
    """A function by its path from a module, or None where this Python has none (another version)."""
    for name in names:
        owner = vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None)
        owner = getattr(owner, "__func__", owner)  # a classmethod's function
    return owner if isinstance(owner, types.FunctionType) else None


def _code_ids(functions):
    """Ids of the code of `functions` (None: left out) and of the functions defined inside them."""
    ids, pending = set(), [f.__code__ for f in functions if f is not None]
    while pending:
        code = pending.pop()
        ids.add(id(code))
        pending.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return frozenset(ids)


def guard_introspection(users):
    """Refuse the sample every way found to the verifier's state, which would let it report passed
    tests it never ran: frames (sys._getframe, a traceback's, generator's or coroutine's frame)
    but for `users` (`frame_users`), other threads' frames, audit hooks of its own (they would be
    given the frames `users` take), the garbage collector's object graph, trace and profile hooks,
    ctypes' calls and reads by address, and /proc (its memory). An audit hook cannot be removed;
    this one keeps its state in its closure and calls nothing the sample could replace. The refusal
    is a PermissionError (a builtin: no code of the sample's runs in raising it)."""
    readers, walks, summary = users
    # Everything the hook uses is bound here, before the sample runs: module globals and builtins
    # (`id`, `type`) are the sample's to rebind.
    get_frame, thread_id, identity, kind = sys._getframe, _thread.get_ident, id, type
    split, decode, text, raw_bytes, denied = str.split, bytes.decode, str, bytes, PermissionError
    exact_text, is_subclass, dir_entry, entry_path = (
        str.__str__,
        issubclass,
        os.DirEntry,
        os.DirEntry.path.__get__,
    )
    frame_attributes, refused, path_events, process_folders = (
        FRAME_ATTRIBUTES,
        REFUSED_EVENTS,
        PATH_EVENTS,
        PROCESS_FOLDERS,
    )
    inside = set()  # threads running the hook (its own get_frame raises the event again)

    def refuse(what):
        raise denied(f"a sample may not use {what} (the verifier's state is out of its reach)")

    def hook(event, args):
        if event == "object.__getattr__":
            if args[1] not in frame_attributes:
                return
        elif event != "sys._getframe":
            if event in refused:
                refuse(event)
            if event in path_events:
                path = args[0]
                if kind(path) is dir_entry:
                    path = entry_path(path)
                # The path as the call used it: a str or bytes subclass is read as its exact value
                # (its own methods could say otherwise); any other object converted itself to a
                # path, and converting it again here could give another.
                if is_subclass(kind(path), raw_bytes):
                    path = decode(path, "utf-8", "replace")
                elif is_subclass(kind(path), text):
                    path = exact_text(path)
                elif kind(path) is not int:  # a file descriptor already open
                    refuse(f"a path object in {event} (give it the path as a str)")
                if kind(path) is text and not process_folders.isdisjoint(split(path, "/")):
                    refuse(f"{path!r} ({event})")
            return
        thread = thread_id()
        if thread in inside:
            return
        inside.add(thread)
        try:
            accessor = get_frame(1)
        finally:
            inside.discard(thread)
        code = identity(accessor.f_code)
        if code in readers:
            return
        consumer = accessor.f_back
        if code in walks:
            while consumer is not None and identity(consumer.f_code) in walks:
                consumer = consumer.f_back
            if (
                consumer is not None
                and consumer.f_code is summary
                and not consumer.f_locals["capture_locals"]
            ):
                return
        refuse(f"frames ({event} in {accessor.f_code.co_qualname})")

    sys.addaudithook(hook)
    _refuse_signal_handlers()


def _refuse_signal_handlers():
    """A signal handler is called with the frame the signal interrupted: `signal.signal` keeps only
    SIG_DFL and SIG_IGN. SIGINT is set to SIG_DFL, so asyncio.run installs no handler of its own."""
    raw = sys.modules["_signal"]
    set_handler, is_callable, denied = raw.signal, callable, PermissionError
    set_handler(raw.SIGINT, raw.SIG_DFL)

    def signal(signalnum, handler):
        if is_callable(handler):
            raise denied("a sample may not install a signal handler (it is given the verifier's frame)")
        return set_handler(signalnum, handler)

    sys.modules["signal"].signal = raw.signal = signal
