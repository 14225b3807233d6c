"""What keeps samples away from the runner that forks them, and from each other (stdlib only;
loaded into the sandbox as `_test_guard.py` is, ahead of `_sandbox_runner.py`): the runner's
process attributes, a seccomp filter every sample inherits, and the state a sample could leave
to the next one."""

import os
import resource

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36  # prctl options (linux/prctl.h)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
# System calls refused to samples, per machine: (audit architecture, call numbers) from
# linux/audit.h and the syscall tables. System V IPC objects (shmget, semget, msgget) and POSIX
# message queues (mq_open) outlive the process that made them: memory no limit of a sample's
# counts, and state the next sample would see, as are keys (add_key, request_key, keyctl: the
# user keyring outlives them). ptrace, process_vm_readv/writev and pidfd_getfd reach into another
# process of the sandbox (its memory, its descriptors).
REFUSED_CALLS = {
    "x86_64": (0xC000003E, (29, 64, 68, 240, 248, 249, 250, 101, 310, 311, 438)),
    "aarch64": (0xC00000B7, (194, 190, 186, 180, 217, 218, 219, 117, 270, 271, 438)),
}
# What a sample can change of the runner that forks every later one (same uid: no ptrace needed):
# its rlimits, priority and CPU scheduling; and of the writable folders' roots, their mode and
# extended attributes. Any change, and the host starts a fresh runner (`clean` false).
RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
X32_CALL_BIT = 0x40000000  # x86_64's x32 calls: another table, refused whole


def protect_runner():
    """Keep samples away from this process, run as the same user: not dumpable (a sample that
    leaves its audit hook behind by exec may not read or write this process's memory, where its
    nonce is, through /proc), and the subreaper of what a sample detaches (to kill it after)."""
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    for option, value in ((PR_SET_DUMPABLE, 0), (PR_SET_CHILD_SUBREAPER, 1)):
        if prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}, {value})")


def refuse_calls():
    """Install a seccomp filter on this runner (and so on every sample, across `exec` too): the
    `REFUSED_CALLS` fail with EPERM, and a program of another architecture (a 32-bit one a sample
    wrote) is killed at its first system call (its call numbers are another table). Python's
    multiprocessing uses POSIX semaphores in /dev/shm, not these. Nothing on a machine not listed."""
    import ctypes
    import errno

    machine = REFUSED_CALLS.get(os.uname().machine)
    if machine is None:
        return
    architecture, calls = machine
    load, equal, at_least, answer = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE|K, BPF_RET|K
    allow, refuse, kill = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x80000000  # SECCOMP_RET_*
    # (code, jump if true, jump if false, k); seccomp_data: the call number at 0, the architecture at 4
    program = [
        (load, 0, 0, 4),
        (equal, 1, 0, architecture),
        (answer, 0, 0, kill),
        (load, 0, 0, 0),
        (at_least, len(calls) + 1, 0, X32_CALL_BIT),
        *[(equal, len(calls) - index, 0, number) for index, number in enumerate(calls)],
        (answer, 0, 0, allow),
        (answer, 0, 0, refuse),
    ]

    class Instruction(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint),
        ]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    instructions = (Instruction * len(program))(*program)
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    filter_program = Program(len(program), instructions)
    if prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0 or (
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(filter_program), 0, 0) != 0
    ):
        raise OSError(ctypes.get_errno(), "installing the seccomp filter")


def inherited_state(roots):
    """What the next sample would inherit that a sample could change (`RLIMITS` and the rest)."""
    roots_state = []
    for root in roots:
        try:
            attributes = tuple(sorted(os.listxattr(root)))
        except OSError:  # a filesystem without extended attributes
            attributes = ()
        roots_state.append((os.stat(root).st_mode, attributes))
    scheduling = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0), os.sched_getscheduler(0))
    return tuple(map(resource.getrlimit, RLIMITS)), scheduling, tuple(roots_state)
