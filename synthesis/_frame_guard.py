"""Keeps the verifier's frames and memory, and so its report, out of a sample's reach (stdlib only).

Loaded into the sandbox as `_test_guard.py` is. Before the sample runs, the child calls
`guard_introspection` (with `frame_users()`, taken once in the warm interpreter); at the end it
asks `intact_check`'s check whether the verifier's own names still hold what they held.
"""

import _thread
import os
import sys
import types

import _test_guard

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
    """Code allowed to take a frame once a sample runs: ids of code objects (a code object the
    sample makes under the same name is another object). Readers read a frame, pass it to nothing
    the sample could replace and hand out only names: namedtuple's, an Enum's and typing's module
    lookups, unittest's frame checks, traceback's clearing, the verifier's traceback check. A
    traceback walk (`walk_tb`) may take a frame only while it feeds traceback's stack summary
    straight, without local variables (`fed_to_summary` in the hook); `walk_stack` is not allowed:
    only its first step takes a frame, so a sample could go on with it after the summary stopped.
    Functions this Python lacks are left out. (logging's caller lookup passes the frame to a
    module function a sample could replace, and importing logging here would slow every fork: its
    at-fork hooks.)"""
    import collections
    import enum
    import linecache
    import traceback
    import typing
    import unittest.result

    readers = [
        _lookup(collections, "namedtuple"),
        _lookup(enum, "EnumType", "_create_"),
        _lookup(typing, "_caller"),
        _lookup(traceback, "clear_frames"),
        _lookup(unittest.result, "TestResult", "_is_relevant_tb_level"),
        _test_guard.raised_through_other_code,
        _test_guard.raised_by_tests,
    ]
    walks = [_lookup(traceback, name) for name in ("walk_tb", "_walk_tb_with_full_positions")]
    extract = _lookup(traceback, "StackSummary", "extract")  # its own generator relays a walk
    relays = _code_ids([extract]) - {id(extract.__code__)} if extract else frozenset()
    summary = _lookup(traceback, "StackSummary", "_extract_from_extended_frame_gen")
    # The summary hands each frame's globals to linecache: these names must stay the originals.
    summary_names = [
        (vars(traceback), "linecache", linecache),
        (vars(linecache), "lazycache", linecache.lazycache),
        (vars(linecache), "checkcache", linecache.checkcache),
    ]
    summary_code = summary.__code__ if summary else None
    return _code_ids(readers), _code_ids(walks), relays, summary_code, summary_names


def _lookup(owner, *names):
    """A function by its path from a module, or None where this Python has none (another version)."""
    for name in names:
        owner = vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None)
        owner = getattr(owner, "__func__", owner)  # a classmethod's function
    return owner if isinstance(owner, types.FunctionType) else None


def _code_ids(functions):
    """Ids of the code of `functions` (None: left out) and of the functions defined inside them."""
    return frozenset(_test_guard.nested_code_ids([f.__code__ for f in functions if f is not None]))


def guard_introspection(users):
    """Refuse the sample every way found to the verifier's state, which would let it report passed
    tests it never ran: frames (sys._getframe, a traceback's, generator's or coroutine's frame)
    but for `users` (`frame_users`), other threads' frames, audit hooks of its own (they would be
    given the frames `users` take), the garbage collector's object graph, trace and profile hooks,
    ctypes' calls and reads by address, and /proc (its memory). An audit hook cannot be removed;
    this one keeps its state in its closure and calls nothing the sample could replace. The refusal
    is a PermissionError (a builtin: no code of the sample's runs in raising it)."""
    readers, walks, relays, summary, summary_names = users
    # Everything the hook uses is bound here, before the sample runs: module globals and builtins
    # (`id`, `type`) are the sample's to rebind.
    get_frame, thread_id, identity, kind = sys._getframe, _thread.get_ident, id, type
    split, decode, text, raw_bytes, denied = str.split, bytes.decode, str, bytes, PermissionError
    get, generator = dict.get, types.GeneratorType
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
        inside.add(thread)  # the hook's own frame reads below raise events too
        try:
            accessor = get_frame(1)
            code = identity(accessor.f_code)
            if code in readers or (code in walks and fed_to_summary(accessor)):
                return
        finally:
            inside.discard(thread)
        refuse(f"frames ({event} in {accessor.f_code.co_qualname})")

    def fed_to_summary(walk):
        """Whether the walk running in frame `walk` is the very iterator traceback's stack summary
        (or extract's relay feeding it) loops over, without local variables and with its helpers
        unchanged: a walk wrapped in anything else (`map`, `islice`: a `limit`) would hand the
        frames to code of the sample's."""
        consumer = walk.f_back
        if consumer is not None and identity(consumer.f_code) in relays:
            if not iterates(consumer, walk):
                return False
            walk, consumer = consumer, consumer.f_back
        if consumer is None or consumer.f_code is not summary:
            return False
        if consumer.f_locals["capture_locals"] is not False or not iterates(consumer, walk):
            return False
        for names, name, value in summary_names:  # a loop: builtins such as `all` are the sample's
            if get(names, name) is not value:
                return False
        return True

    def iterates(consumer, walk):
        """Whether `consumer`'s `frame_gen` is the generator running in frame `walk`."""
        source = consumer.f_locals["frame_gen"]
        return kind(source) is generator and source.gi_frame is walk

    sys.addaudithook(hook)
    _refuse_signal_handlers()


def _refuse_signal_handlers():
    """A signal handler is called with the frame the signal interrupted: `signal.signal` keeps only
    SIG_DFL and SIG_IGN. SIGINT is set to SIG_DFL, so asyncio.run installs no handler of its own."""
    raw = sys.modules["_signal"]
    set_handler, is_callable, denied, is_a, integer = raw.signal, callable, PermissionError, isinstance, int
    set_handler(raw.SIGINT, raw.SIG_DFL)

    def signal(signalnum, handler):
        if is_callable(handler):
            raise denied("a sample may not install a signal handler (it is given the verifier's frame)")
        # signal.SIG_IGN and SIG_DFL are an IntEnum, which the raw call refused (TypeError)
        return set_handler(signalnum, integer(handler) if is_a(handler, integer) else handler)

    sys.modules["signal"].signal = raw.signal = signal
