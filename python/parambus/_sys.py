"""_sys.py: the system calls and atomic operations the table reader needs
and Python's standard library lacks, through ctypes: futex waits and
wakes, membarrier, System V shared memory (the wake segment), and the
atomic read-modify-writes of the wake segment's counts and turns (GCC's
libatomic, which Debian's gcc depends on).

Loads of the value segment need none of this: an aligned 1-, 4- or 8-byte
item of a memoryview is read with one load of its size, and on x86-64 the
CPU never reorders loads with loads, so each is an acquire load
(segment-format.md §4.7 asks for acquire on the first load of seq and an
acquire fence after the copy's loads). Elsewhere acquire_fence() calls
libatomic's atomic_thread_fence.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import time

_MACHINE = platform.machine()
# System call numbers: x86-64 and the generic table (aarch64, riscv64).
if _MACHINE == "x86_64":
    SYS_FUTEX, SYS_MEMBARRIER = 202, 324
else:
    SYS_FUTEX, SYS_MEMBARRIER = 98, 283

FUTEX_WAIT_BITSET, FUTEX_WAKE = 9, 1
FUTEX_BITSET_MATCH_ANY = 0xFFFFFFFF
MEMBARRIER_CMD_GLOBAL, MEMBARRIER_CMD_GLOBAL_EXPEDITED = 1, 2
INT_MAX = 2**31 - 1
SEQ_CST, ACQUIRE, RELEASE, RELAXED = 5, 2, 3, 0

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmdt.argtypes = [ctypes.c_void_p]

_atomic = None


def atomic() -> ctypes.CDLL:
    """libatomic, loaded once."""
    global _atomic
    if _atomic is None:
        name = ctypes.util.find_library("atomic") or "libatomic.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            from .errors import Error
            raise Error(f"libatomic is needed to wait for changes ({e}); install Debian's libatomic1") from None
        lib.__atomic_fetch_add_4.restype = ctypes.c_uint32
        lib.__atomic_fetch_add_4.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
        lib.__atomic_fetch_sub_4.restype = ctypes.c_uint32
        lib.__atomic_fetch_sub_4.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
        lib.__atomic_load_4.restype = ctypes.c_uint32
        lib.__atomic_load_4.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.__atomic_load_8.restype = ctypes.c_uint64
        lib.__atomic_load_8.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.__atomic_compare_exchange_8.restype = ctypes.c_bool
        lib.__atomic_compare_exchange_8.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                                     ctypes.c_int, ctypes.c_int]
        lib.atomic_thread_fence.argtypes = [ctypes.c_int]
        _atomic = lib
    return _atomic


def acquire_fence() -> None:
    """An acquire fence between the copy's loads and the second load of seq
    (§4.1): nothing to do on x86-64 (loads are not reordered with loads)."""
    if _MACHINE != "x86_64":
        atomic().atomic_thread_fence(ACQUIRE)


def fetch_add_32(addr: int, n: int) -> int:
    return int(atomic().__atomic_fetch_add_4(addr, n, SEQ_CST))


def fetch_sub_32(addr: int, n: int) -> int:
    return int(atomic().__atomic_fetch_sub_4(addr, n, SEQ_CST))


def load_32(addr: int) -> int:
    return int(atomic().__atomic_load_4(addr, SEQ_CST))


def load_64(addr: int) -> int:
    return int(atomic().__atomic_load_8(addr, ACQUIRE))


def cas_64(addr: int, expected: int, desired: int, success: int = SEQ_CST, failure: int = RELAXED) -> bool:
    exp = ctypes.c_uint64(expected)
    return bool(atomic().__atomic_compare_exchange_8(addr, ctypes.byref(exp), desired, success, failure))


def full_fence() -> None:
    atomic().atomic_thread_fence(SEQ_CST)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def futex_wait_until(addr: int, expected: int, deadline_ns: int) -> None:
    """FUTEX_WAIT_BITSET on the shared 32-bit word at @addr while it holds
    @expected, until CLOCK_MONOTONIC @deadline_ns at the latest. Returns on
    a wake-up, a changed word, a signal or the deadline alike: the caller
    looks again."""
    ts = _Timespec(deadline_ns // 1_000_000_000, deadline_ns % 1_000_000_000)
    _libc.syscall(ctypes.c_long(SYS_FUTEX), ctypes.c_void_p(addr), ctypes.c_int(FUTEX_WAIT_BITSET),
                  ctypes.c_uint32(expected & 0xFFFFFFFF), ctypes.byref(ts), ctypes.c_void_p(0),
                  ctypes.c_uint32(FUTEX_BITSET_MATCH_ANY))


def futex_wake(addr: int) -> None:
    _libc.syscall(ctypes.c_long(SYS_FUTEX), ctypes.c_void_p(addr), ctypes.c_int(FUTEX_WAKE),
                  ctypes.c_int(INT_MAX), ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_int(0))


def membarrier() -> bool:
    """MEMBARRIER_CMD_GLOBAL_EXPEDITED, else MEMBARRIER_CMD_GLOBAL (§5.1);
    whether one succeeded."""
    for cmd in (MEMBARRIER_CMD_GLOBAL_EXPEDITED, MEMBARRIER_CMD_GLOBAL):
        if _libc.syscall(ctypes.c_long(SYS_MEMBARRIER), ctypes.c_int(cmd), ctypes.c_int(0), ctypes.c_int(0)) == 0:
            return True
    return False


def monotonic_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def shm_attach(shmid: int) -> int:
    """shmat(@shmid, NULL, 0): the address, or OSError."""
    addr = _libc.shmat(shmid, None, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return int(addr)


def shm_detach(addr: int) -> None:
    _libc.shmdt(ctypes.c_void_p(addr))


def shm_info(shmid: int) -> "dict[str, int] | None":
    """The size, creator pid and creator uid of System V segment @shmid,
    from /proc/sysvipc/shm (what shmctl(IPC_STAT) gives, without its
    architecture-dependent struct); None if there is none."""
    try:
        with open("/proc/sysvipc/shm") as f:
            head = f.readline().split()
            for line in f:
                fields = dict(zip(head, line.split()))
                if int(fields["shmid"]) == shmid:
                    return {"size": int(fields["size"]), "cpid": int(fields["cpid"]), "cuid": int(fields["cuid"])}
    except (OSError, KeyError, ValueError):
        return None
    return None
