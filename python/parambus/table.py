"""table.py: an instance's parameter table, read in place through mmap
(docs/segment-format.md), read-only.

    with parambus.Table("psu") as t:
        v = t.read("measured_voltage")      # Value: .value .unit .status .timestamp_ns .seq
        t.wait_change(["output"], timeout=5.0)

Opening checks the file as §1 says (a regular file of a trusted owner that
others cannot write) and the segment as §7 says, then attaches the wake
segment (§3). A read is the protocol of §4.1: load seq, copy the value out
of the copy it names, load seq again, and retry unless at most
copy_count − 2 writes completed in between, so a value is never torn; the
reader's turn (§4.5) keeps a flat-out writer from starving it. Reads take
no lock and make no system call. wait_change() is §5.1: a futex wait on the
wake segment's notify word, woken by the writers.

Threads: a Table may be read from several threads at once; close() only
when no other thread uses it. Values are copied out of the mapping (once:
the copy is what the version check validates).
"""
from __future__ import annotations

import mmap
import os
import re
import stat
import ctypes
from typing import Any, Callable, Iterable, Iterator

from . import _sys
from ._owner import describe_trusted, process_alive, trusted
from .errors import Error, InstanceGone, SegmentError, UntrustedOwner
from .schema import UnknownParameter, Value, status_of
from .segment import (SAVE_COUNT_OFFSET, STATE_OFFSET, WAKE_ANY_WAITERS, WAKE_NOTIFY, WAKE_PARAM_WAITERS,
                      WAKE_WAITERS, ParamLayout, decoder, parse, wake_turns_offset)

SHM_DIR = "/dev/shm"
SHM_PREFIX = "pbus."
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,48}")
_MASK64 = (1 << 64) - 1
TURN_NS = 200_000


def instance_name_valid(name: str) -> bool:
    """segment-format.md §1: letters, digits, _, -, .; 1–48 bytes; not
    starting with . or -."""
    return bool(_NAME.fullmatch(name)) and name[0] not in ".-"


class Table:
    """An instance's table, mapped read-only. Attributes: .instance,
    .interface, .version ((major, minor)), .schema_hash, .names (in index
    order), .params (name -> ParamLayout: type, unit, limits, enumerators)."""

    def __init__(self, instance: str, *, schema_hash: "int | None" = None) -> None:
        """Open @instance. @schema_hash: the hash the program was written
        for (schema-format.md); a segment of another schema is refused with
        a SegmentError (check "schema-hash"). Raises Error subclasses,
        each one line: no such instance, an untrusted owner, a segment that
        §7 refuses."""
        self._map: "mmap.mmap | None" = None
        self._wake_addr = 0
        self._wake_private: "ctypes.Array[ctypes.c_char] | None" = None
        if not isinstance(instance, str) or not instance_name_valid(instance):
            raise Error(f"'{instance}' is not a valid instance name (1 to 48 letters, digits, '_', '-', '.')")
        self.instance = instance
        self.path = os.path.join(SHM_DIR, SHM_PREFIX + instance)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise Error(f"no instance '{instance}': {self.path} does not exist (is its pbusd running?)") from None
        except OSError as e:
            if e.errno == 40:  # ELOOP
                raise UntrustedOwner(f"{self.path} is a symbolic link: refused") from None
            raise Error(f"cannot open {self.path}: {e.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SegmentError("file", f"{self.path} is not a regular file")
            if not trusted(st.st_uid):
                raise UntrustedOwner(f"{self.path} is owned by uid {st.st_uid}, not a trusted owner "
                                     f"({describe_trusted()})")
            if st.st_mode & stat.S_IWOTH:
                raise UntrustedOwner(f"{self.path} is writable by everybody: refused")
            if st.st_size < 256:
                raise SegmentError("size", f"not a valid parambus segment (size: {self.path} has {st.st_size} bytes)")
            self._map = mmap.mmap(fd, st.st_size, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        self._owner_uid = st.st_uid
        try:
            self._mv = memoryview(self._map)
            layout = parse(self._mv, instance)
            if schema_hash is not None and layout.schema_hash != schema_hash:
                raise SegmentError("schema-hash", f"instance '{instance}' has schema hash {layout.schema_hash:016x}, "
                                                  f"not {schema_hash:016x}: it was made from another schema")
            self.layout = layout
            self.interface = layout.interface
            self.version = layout.version
            self.schema_hash = layout.schema_hash
            self.params: dict[str, ParamLayout] = {p.name: p for p in layout.params}
            self._list = layout.params
            self.names = [p.name for p in layout.params]
            self._decoders = [decoder(p) for p in layout.params]
            size8 = len(self._mv) // 8 * 8
            self._q = self._mv[:size8].cast("Q")
            self._l = self._mv[:size8].cast("I")
            self._attach_wake()
        except BaseException:
            self.close()
            raise
        self._seen: dict[int, int] = {}

    # --- Life ---------------------------------------------------------------------

    def _attach_wake(self) -> None:
        """Attach the wake segment and check that the owner made it (§3); an
        orphan's stands in as private zeroes."""
        layout = self.layout
        addr = 0
        err: "OSError | None" = None
        try:
            if layout.wake_id > 2**31 - 1:
                raise SegmentError("wake", f"{self.path}: wake_id {layout.wake_id} above 2^31 − 1")
            addr = _sys.shm_attach(layout.wake_id)
            info = _sys.shm_info(layout.wake_id)
            if not info or info["cuid"] != self._owner_uid or info["cpid"] != layout.owner_pid or \
                    info["size"] < layout.wake_size:
                _sys.shm_detach(addr)
                addr = 0
        except OSError as e:
            addr, err = 0, e
        if addr:
            self._wake_addr = addr
            return
        if process_alive(layout.owner_pid, layout.owner_start) and self._state_word() <= 1:
            why = f"shmat: {err.strerror}" if err else "it was not made by the instance's owner"
            raise SegmentError("wake", f"{self.path}: cannot use its wake segment {layout.wake_id} ({why})")
        self._wake_private = ctypes.create_string_buffer(layout.wake_size)
        self._wake_addr = ctypes.addressof(self._wake_private)

    def close(self) -> None:
        """Unmap the table; reads fail afterwards. Idempotent."""
        for name in ("_q", "_l", "_mv"):
            view = self.__dict__.pop(name, None)
            if view is not None:
                view.release()
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._wake_addr and self._wake_private is None:
            _sys.shm_detach(self._wake_addr)
        self._wake_addr = 0
        self._wake_private = None

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _state_word(self) -> int:
        return self._l[STATE_OFFSET // 4]

    def state(self) -> str:
        """"live", "orphaned" (its pbusd died: the values are the last
        written), "closed" or "replaced" (open the instance again) — §6."""
        s = self._state_word()
        if s <= 1:
            alive = process_alive(self.layout.owner_pid, self.layout.owner_start)
            return "live" if alive else "orphaned"
        return "closed" if s == 2 else "replaced"

    # --- Reading ------------------------------------------------------------------

    def param(self, name: "str | int") -> ParamLayout:
        """A parameter's description by name or index."""
        if isinstance(name, int):
            if not 0 <= name < len(self._list):
                raise UnknownParameter(str(name))
            return self._list[name]
        try:
            return self.params[name]
        except KeyError:
            raise UnknownParameter(name) from None

    def read(self, name: "str | int") -> Value:
        """The current value of parameter @name (or index), consistent with
        its status, timestamp and version."""
        p = self.params.get(name) if isinstance(name, str) else None
        if p is None:
            p = self.param(name)
        raw, ts, st, seq = self._read(p)
        return Value(p.name, self._decoders[p.index](raw), status_of(st), ts, seq, p.unit, p.index)

    def read_raw(self, name: "str | int") -> tuple[bytes, int, int, int]:
        """(stored bytes, timestamp_ns, status code, seq) of @name: the
        encoding of segment-format.md §2.6, undecoded."""
        return self._read(self.param(name))

    def read_many(self, names: Iterable["str | int"]) -> dict[str, Value]:
        """Each of @names read on its own (consistent each, not a snapshot
        of the whole table), by name."""
        return {v.name: v for v in (self.read(n) for n in names)}

    def read_all(self) -> dict[str, Value]:
        return self.read_many(range(len(self._list)))

    def __getitem__(self, name: "str | int") -> Any:
        """The value alone: table["measured_voltage"] -> 3.3."""
        return self.read(name).value

    def __contains__(self, name: object) -> bool:
        return name in self.params

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self._list)

    def _read(self, p: ParamLayout) -> tuple[bytes, int, int, int]:
        q, mv = self._q, self._mv
        n = p.copy_count
        mask, stride, base = n - 1, p.copy_stride, p.slot_offset
        seq_at = base >> 3
        scalar, value_size = p.scalar, p.value_size
        limit = n - 2
        attempt = posted = 0
        while True:
            attempt += 1
            s = q[seq_at]                       # one 8-byte load (acquire: see _sys)
            c = base + 16 + (s & mask) * stride
            ts = q[c >> 3]
            st = mv[c + 8]                      # the status's low byte (§2.8)
            if scalar:
                length = value_size
            else:
                length = self._l[(c + 12) >> 2]
                if length > value_size:
                    length = value_size         # bounded before it is used (§4.1)
            raw = mv[c + 16:c + 16 + length].tobytes()
            _sys.acquire_fence()
            s2 = q[seq_at]
            if ((s2 - s) & _MASK64) <= limit:
                break
            if attempt % 8 == 0:
                posted = self._post_turn(p.index, posted)
        if posted:
            self._give_back_turn(p.index, posted)
        return raw, ts, st, s

    def _turn_addr(self, index: int) -> int:
        return self._wake_addr + wake_turns_offset(len(self._list)) + 8 * index

    def _post_turn(self, index: int, posted: int) -> int:
        """§4.5: ask writers of @index to hold off for 200 µs, unless another
        reader's turn runs now. Returns the deadline this read posted."""
        addr = self._turn_addr(index)
        now = _sys.monotonic_ns()
        cur = _sys.load_64(addr)
        if now < cur <= now + TURN_NS and cur != posted:
            return posted
        deadline = now + TURN_NS
        return deadline if _sys.cas_64(addr, cur, deadline) else posted

    def _give_back_turn(self, index: int, posted: int) -> None:
        addr = self._turn_addr(index)
        if _sys.cas_64(addr, posted, 0, _sys.RELEASE, _sys.RELAXED):
            _sys.futex_wake(addr)

    # --- Waiting (§5.1) -------------------------------------------------------------

    def wait_change(self, names: "Iterable[str | int] | None" = None, timeout: float = 1.0) -> list[str]:
        """Wait until one of @names (None: any parameter) has a new version
        since this Table last reported it (or, for one never reported, since
        this call began), or @timeout seconds pass. Returns the names that
        changed, in index order; [] when the time ran out. InstanceGone if
        the instance is closed or replaced meanwhile."""
        watched = [self.param(n).index for n in names] if names is not None else list(range(len(self._list)))
        q = self._q
        seq_at = {i: self._list[i].slot_offset >> 3 for i in watched}
        base = {i: self._seen.get(i, q[seq_at[i]]) for i in watched}

        def changed() -> list[int]:
            return [i for i in watched if q[seq_at[i]] != base[i]]

        deadline = _sys.monotonic_ns() + max(0, int(timeout * 1e9))
        found = changed()
        if not found and self._state_word() >= 2:
            raise InstanceGone(f"instance '{self.instance}' was {self.state()}: open it again")
        if not found and timeout > 0:
            found = self._sleep(watched if names is not None else None, changed, deadline)
        for i in watched:
            self._seen[i] = q[seq_at[i]] if i in found else base[i]
        return [self._list[i].name for i in sorted(set(found))]

    def _sleep(self, indexes: "list[int] | None", changed: Callable[[], list[int]], deadline: int) -> list[int]:
        w = self._wake_addr
        self._count_waiters(indexes, _sys.fetch_add_32)
        try:
            _sys.full_fence()
            slice_ns = 100_000_000 if _sys.membarrier() else 1_000_000
            while True:
                n = _sys.load_32(w + WAKE_NOTIFY)
                found = changed()
                if found:
                    return found
                if self._state_word() >= 2:
                    raise InstanceGone(f"instance '{self.instance}' was {self.state()}: open it again")
                now = _sys.monotonic_ns()
                if now >= deadline:
                    return []
                _sys.futex_wait_until(w + WAKE_NOTIFY, n, min(deadline, now + slice_ns))
        finally:
            self._count_waiters(indexes, _sys.fetch_sub_32)

    def _count_waiters(self, indexes: "list[int] | None", op: Any) -> None:
        """Announce (op: fetch_add_32) or withdraw (fetch_sub_32) a waiter:
        on every parameter (@indexes None) or on each of @indexes (§5.1)."""
        w = self._wake_addr
        if indexes is None:
            op(w + WAKE_ANY_WAITERS, 1)
        else:
            for i in indexes:
                op(w + WAKE_WAITERS + 4 * i, 1)
            op(w + WAKE_PARAM_WAITERS, len(indexes))

    def save_count(self) -> int:
        """The header's save counter (§5.2), bumped after each save."""
        return self._l[SAVE_COUNT_OFFSET // 4]
