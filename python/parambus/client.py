"""client.py: pbusd's socket client, blocking (docs/socket-protocol.md;
parity with the C client, include/parambus/client.h).

    with parambus.Client("psu") as c:
        c.set_many({"voltage_setpoint": 5.0, "output": "ON"})   # one atomic batch
        print(c.get("measured_voltage"))                         # Value
        for values in c.subscribe(["measured_voltage"], deadband=0.01):
            ...

Connecting checks the server's uid (SO_PEERCRED) before a byte is sent,
shakes hands and fetches the schema, from which names, types, units and
enumerators come. Requests wait up to the client's timeout for their reply
(Timeout). When pbusd restarts, the client connects again by itself —
before the next request, or while a subscription is being iterated —
trying every 50 ms, doubling up to 1 s, and subscribes again, so that an
iterator simply sees fresh values (the first batch after a reconnect holds
every parameter of the subscription). A request that was under way when
the connection broke raises NotConnected; a GET is sent again once.

Errors are parambus.Error subclasses whose text is one line: the server's
own message for an ERROR (ServerError and its subclasses: NotFoundError,
AccessError, RangeError ...), SetRefused naming the refused write.

Threads: one thread at a time per Client (as the C client); callbacks run
in the thread that calls dispatch() or iterates.
"""
from __future__ import annotations

import collections
import select
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

from . import _session
from .connection import Connection, socket_path
from .errors import ConnectionClosed, Error, NotConnected, ProtocolError, Timeout, server_error
from .schema import Param, Schema, Value
from .wire import (APPLIED, ERROR, GET, HELLO, NOTIFY, PING, SERVICE, SET, STATS_GET, SUBSCRIBE, UNSUBSCRIBE,
                   Fields)

Callback = Callable[[list[Value]], None]
RETRY_FIRST, RETRY_MAX = 0.05, 1.0


class Subscription(_session.SubscriptionBase):
    """A subscription: iterate it for lists of Values (each a notification:
    the parameters that changed, the first one all of them), or give a
    callback and call Client.dispatch(). .names, .deadband, .min_interval."""

    def __init__(self, client: "Client", params: list[Param], deadband: float, min_interval: float,
                 callback: "Callback | None") -> None:
        super().__init__(client, params, deadband, min_interval)
        self.callback = callback
        self.queue: collections.deque[list[Value]] = collections.deque()

    def next(self, timeout: "float | None" = None) -> list[Value]:
        """The next notification's values; Timeout if none within @timeout
        seconds (None: wait for ever, reconnecting as needed)."""
        values: list[Value] = self.client._next(self, timeout)
        return values

    def __iter__(self) -> Iterator[list[Value]]:
        while not self.closed:
            yield self.next()

    def close(self) -> None:
        """Unsubscribe (nothing more is delivered)."""
        self.client.unsubscribe(self)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.closed:
            try:
                self.close()
            except Error:
                self.closed = True


class Client:
    """A connection to instance @instance's pbusd that reconnects by itself.
    .schema (names, types, units), .hello (HELLO_REPLY's fields)."""

    def __init__(self, instance: str, *, socket_dir: "str | None" = None, schema_hash: int = 0,
                 name: "str | None" = None, timeout: float = 5.0, reconnect: bool = True) -> None:
        """Connect, shake hands and fetch the schema. @schema_hash: the hash
        the program was written for (0: any schema; another is refused with
        SchemaMismatch). NotConnected if no pbusd serves @instance,
        UntrustedOwner if an untrusted user serves its socket."""
        self.instance, self.socket_dir, self.schema_hash = instance, socket_dir, schema_hash
        self.name, self.timeout, self.reconnect = name, timeout, reconnect
        self._conn: "Connection | None" = None
        self._subs: dict[int, Subscription] = {}      # by the server's id
        self._all_subs: list[Subscription] = []
        self.schema: Schema
        self.hello: Fields = {}
        self._connect()

    # --- The connection ---------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def _connect(self) -> None:
        path = socket_path(self.instance, self.socket_dir)
        try:
            conn = Connection(path, self.timeout, check_owner=True)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            raise NotConnected(f"no pbusd serves instance '{self.instance}' at {path} ({e.strerror})") from None
        except OSError as e:
            raise NotConnected(f"cannot connect to {path}: {e.strerror or e}") from None
        try:
            self.hello = conn.request(HELLO, _session.hello_fields(self.name, self.schema_hash))
            conn.reader.max_frame = self.hello["max_frame"]
            conn.hello_reply = self.hello
            self.schema = Schema(conn.schema())
            self._conn = conn
            self._subs.clear()
            for sub in self._all_subs:
                sub.server_id = conn.request(SUBSCRIBE, sub.fields())["subscription"]
                self._subs[sub.server_id] = sub
            self._route()
        except TimeoutError:
            conn.close()
            self._conn = None
            raise Timeout(f"pbusd of '{self.instance}' did not answer within {self.timeout} s") from None
        except (ConnectionClosed, OSError) as e:
            conn.close()
            self._conn = None
            raise NotConnected(f"pbusd of '{self.instance}' closed the connection ({e})") from None
        except BaseException:
            conn.close()
            self._conn = None
            raise

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _ensure(self, deadline: "float | None") -> Connection:
        """A live connection: the current one (after taking what it has
        waiting, and noticing a close), or a new one, tried until @deadline
        (monotonic seconds; None: for ever) if reconnecting is on."""
        if self._conn is not None:
            self._pump(0.0)
        delay = RETRY_FIRST
        while self._conn is None:
            try:
                self._connect()
            except NotConnected:
                if not self.reconnect:
                    raise
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise
                time.sleep(delay if left is None else min(delay, left))
                delay = min(delay * 2, RETRY_MAX)
        return self._conn

    def close(self) -> None:
        """Close the connection; the client cannot be used afterwards."""
        self.reconnect = False
        self._drop()
        for sub in self._all_subs:
            sub.closed = True
        self._all_subs.clear()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def fileno(self) -> int:
        """The socket's descriptor, for select(); it changes on a reconnect."""
        if self._conn is None:
            raise NotConnected(f"not connected to pbusd of '{self.instance}'")
        return self._conn.fileno()

    # --- Frames between requests -----------------------------------------------------------

    def _route(self) -> None:
        """Hand the notifications the connection kept to their subscriptions."""
        conn = self._conn
        if conn is None:
            return
        while conn.notifications:
            n = conn.notifications.pop(0)
            sub = self._subs.get(n["subscription"])
            if sub is None or sub.closed:
                continue  # a subscription ended meanwhile
            values = [_session.to_value(self.schema, rec) for rec in n["values"]]
            sub.queue.append(values)
        conn.service_events.clear()

    def _pump(self, timeout: float) -> None:
        """Read what arrives within @timeout seconds (and what is there
        already, at least one read's worth); a close drops the connection."""
        conn = self._conn
        if conn is None:
            return
        deadline = time.monotonic() + timeout
        reads = 0
        try:
            while True:
                f = conn.reader.next()
                if f is not None:
                    self._frame_between(f)
                    continue
                if conn.eof:
                    raise ConnectionClosed("closed")
                left = deadline - time.monotonic()
                if left <= 0 and reads:
                    break
                if not select.select([conn.sock], [], [], max(0.0, left))[0]:
                    break
                try:
                    data = conn.sock.recv(1 << 16)
                except ConnectionResetError:
                    data = b""
                reads += 1
                if not data:
                    conn.eof = True
                conn.reader.feed(data)
        except (ConnectionClosed, OSError):
            self._drop()
            return
        except Error:
            self._drop()
            raise
        self._route()

    def _frame_between(self, f: Any) -> None:
        """A frame that came between requests: a notification, or an ERROR
        about the connection (which the server then closes)."""
        conn = self._conn
        assert conn is not None
        if f.type == NOTIFY and f.id == 0:
            conn.notifications.append(f.decode())
        elif f.type == SERVICE and f.id == 0:
            pass
        elif f.type == ERROR:
            e = f.decode()
            raise server_error(e["code"], e["message"])
        else:
            raise ProtocolError(f"unexpected {f!r} between requests")

    # --- Requests ------------------------------------------------------------------------

    def _request(self, type_: int, fields: Fields, flags: int = 0, retry: bool = False) -> Fields:
        deadline = time.monotonic() + self.timeout
        for attempt in (1, 2):
            conn = self._ensure(deadline if self.reconnect else time.monotonic())
            try:
                reply = conn.request(type_, fields, flags=flags)
            except TimeoutError:
                # The late reply would answer the next request: start afresh.
                self._drop()
                raise Timeout(f"pbusd of '{self.instance}' did not answer within {self.timeout} s") from None
            except (ConnectionClosed, OSError) as e:
                self._drop()
                if retry and attempt == 1 and self.reconnect:
                    continue
                raise NotConnected(f"the connection to pbusd of '{self.instance}' was lost ({e})") from None
            self._route()
            return reply
        raise AssertionError("unreachable")

    def get(self, name: "str | int") -> Value:
        """Parameter @name's current value (consistent with its status,
        timestamp and version)."""
        return self.get_many([name])[0]

    def get_many(self, names: Iterable["str | int"]) -> list[Value]:
        """@names' values in one request (one pass over the table), in the
        order named."""
        self._ensure(time.monotonic() + self.timeout if self.reconnect else time.monotonic())
        params = _session.params_of(self.schema, names)
        reply = self._request(GET, {"indexes": [p.index for p in params]}, retry=True)
        return [_session.to_value(self.schema, rec) for rec in reply["values"]]

    def __getitem__(self, name: str) -> Any:
        return self.get(name).value

    def set(self, name: str, value: Any, *, applied: bool = False) -> int:
        """Write one parameter; its new version. See set_many()."""
        return self.set_many([(name, value)], applied=applied)[name]

    def set_many(self, items: "Mapping[str, Any] | Iterable[tuple[str, Any]]", *, applied: bool = False) -> dict[str, int]:
        """Write several parameters as one atomic batch: all of them or
        none (SetRefused naming the first refused write and why). Returns
        each parameter's new version. @applied: return only once the
        hardware bound to them applied the values (socket-protocol.md §3.3).
        Persistent parameters are on disk when it returns."""
        self._ensure(time.monotonic() + self.timeout if self.reconnect else time.monotonic())
        pairs = _session.write_items(items)
        fields, params = _session.set_fields(self.schema, pairs)
        reply = self._request(SET, fields, APPLIED if applied else 0)
        return _session.set_result(reply, params, pairs)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(name, value)

    def subscribe(self, names: Iterable["str | int"], *, deadband: float = 0.0, min_interval: float = 0.0,
                  callback: "Callback | None" = None) -> Subscription:
        """Subscribe to @names: a notification when some of them change,
        at most one per @min_interval seconds (later changes coalesced,
        never dropped), numeric scalars only when they moved by @deadband
        or more (or their status changed). The first notification holds
        every parameter's current value. @callback(values) is called from
        dispatch(); without one, iterate the Subscription."""
        self._ensure(time.monotonic() + self.timeout if self.reconnect else time.monotonic())
        sub = Subscription(self, _session.params_of(self.schema, names), deadband, min_interval, callback)
        sub.server_id = self._request(SUBSCRIBE, sub.fields())["subscription"]
        self._subs[sub.server_id] = sub
        self._all_subs.append(sub)
        self._route()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if not _session.forget(sub, self._subs, self._all_subs):
            return
        if self._conn is not None:
            self._request(UNSUBSCRIBE, {"subscription": sub.server_id})

    def _deliver(self) -> int:
        """Run the callbacks of the subscriptions that have values waiting."""
        n = 0
        for sub in list(self._all_subs):
            while sub.callback is not None and sub.queue and not sub.closed:
                sub.callback(sub.queue.popleft())
                n += 1
        return n

    def dispatch(self, timeout: float = 0.0) -> int:
        """Read notifications for up to @timeout seconds (reconnecting if
        pbusd went away) and run the callbacks; the number of callbacks run."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._ensure(deadline)
            except NotConnected:
                return self._deliver()
            self._pump(max(0.0, deadline - time.monotonic()))
            n = self._deliver()
            if n or time.monotonic() >= deadline:
                return n

    def _next(self, sub: Subscription, timeout: "float | None") -> list[Value]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if sub.queue:
                return sub.queue.popleft()
            if sub.closed:
                raise Error("the subscription is closed")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise Timeout(f"no notification of {', '.join(sub.names)} within {timeout} s")
            try:
                self._ensure(deadline)
            except NotConnected:
                if deadline is not None and time.monotonic() >= deadline:
                    raise Timeout(f"no notification of {', '.join(sub.names)} within {timeout} s "
                                  f"(pbusd of '{self.instance}' is not back)") from None
                continue
            self._pump(0.5 if left is None else min(left, 0.5))

    def stats(self) -> str:
        """pbusd's statistics, JSON text (socket-protocol.md §7)."""
        return str(self._request(STATS_GET, {}, retry=True)["json"])

    def ping(self, data: bytes = b"") -> bytes:
        return bytes(self._request(PING, {"data": data}, retry=True)["data"])
