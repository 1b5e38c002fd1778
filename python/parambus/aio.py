"""aio.py: pbusd's socket client for asyncio — the blocking Client's API
with coroutines (docs/python.md).

    async with await parambus.aio.Client.connect("psu") as c:
        await c.set_many({"voltage_setpoint": 5.0})
        print(await c.get("measured_voltage"))
        async for values in c.subscribe(["measured_voltage"], deadband=0.01):
            ...

One task reads the socket and hands replies to the requests waiting for
them (in order: replies come in the order of the requests) and
notifications to their subscriptions' queues. When pbusd goes away, that
task connects again (every 50 ms, doubling up to 1 s) and subscribes
again; requests made meanwhile wait for the new connection up to the
client's timeout, and requests that were under way raise NotConnected.

Threads: use a Client from the event loop it was connected in only.
"""
from __future__ import annotations

import asyncio
import collections
import socket
from typing import Any, AsyncIterator, Iterable, Mapping

from . import _session
from ._owner import describe_trusted, trusted
from .connection import peer_uid, socket_path
from .errors import ConnectionClosed, Error, NotConnected, ProtocolError, Timeout, UntrustedOwner, server_error
from .schema import Param, Schema, Value
from .wire import (APPLIED, ERROR, GET, HELLO, NOTIFY, REPLY_OF, SCHEMA_GET, SERVICE, SET, SUBSCRIBE, SUBSCRIBED, UNSUBSCRIBE,
                   DEFAULT_MAX_FRAME, Fields, FrameReader, encode_message, typename)

RETRY_FIRST, RETRY_MAX = 0.05, 1.0


class Subscription(_session.SubscriptionBase):
    """An asyncio subscription: `async for values in sub` (lists of
    Values), or `await sub.next(timeout)`."""

    def __init__(self, client: "Client", params: list[Param], deadband: float, min_interval: float) -> None:
        super().__init__(client, params, deadband, min_interval)
        self.queue: asyncio.Queue[list[Value]] = asyncio.Queue()

    async def next(self, timeout: "float | None" = None) -> list[Value]:
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"no notification of {', '.join(self.names)} within {timeout} s") from None

    def __aiter__(self) -> AsyncIterator[list[Value]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[list[Value]]:
        while not self.closed:
            yield await self.queue.get()

    async def close(self) -> None:
        await self.client.unsubscribe(self)


class _Link:
    """One connection: its streams, frame reader and requests waiting."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.frames = FrameReader(DEFAULT_MAX_FRAME)
        self.waiting: collections.deque[tuple[int, int, asyncio.Future[Any], Any]] = collections.deque()
        self.next_id = 1


class Client:
    """The asyncio client; make one with `await Client.connect(instance)`."""

    def __init__(self, instance: str, *, socket_dir: "str | None" = None, schema_hash: int = 0,
                 name: "str | None" = None, timeout: float = 5.0, reconnect: bool = True) -> None:
        self.instance, self.socket_dir, self.schema_hash = instance, socket_dir, schema_hash
        self.name, self.timeout, self.reconnect = name, timeout, reconnect
        self.schema: Schema
        self.hello: Fields = {}
        self._link: "_Link | None" = None
        self._up = asyncio.Event()
        self._subs: dict[int, Subscription] = {}
        self._all_subs: list[Subscription] = []
        self._task: "asyncio.Task[None] | None" = None
        self._closed = False

    @classmethod
    async def connect(cls, instance: str, **options: Any) -> "Client":
        """Connect to @instance's pbusd (options as the blocking Client's):
        NotConnected, UntrustedOwner, SchemaMismatch, Timeout."""
        c = cls(instance, **options)
        await c._open()
        c._task = asyncio.ensure_future(c._run())
        return c

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._link is not None

    # --- The connection ----------------------------------------------------------------

    async def _open(self) -> None:
        path = socket_path(self.instance, self.socket_dir)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, path)
            uid = peer_uid(sock)
            if not trusted(uid):
                raise UntrustedOwner(f"{path} is served by uid {uid}, not a trusted owner ({describe_trusted()})")
        except (FileNotFoundError, ConnectionRefusedError) as e:
            sock.close()
            raise NotConnected(f"no pbusd serves instance '{self.instance}' at {path} ({e.strerror})") from None
        except OSError as e:
            sock.close()
            raise NotConnected(f"cannot connect to {path}: {e.strerror or e}") from None
        except BaseException:
            sock.close()
            raise
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        link = _Link(reader, writer)
        try:
            self.hello = await self._handshake(link, HELLO, _session.hello_fields(self.name, self.schema_hash))
            link.frames.max_frame = self.hello["max_frame"]
            self.schema = Schema((await self._handshake(link, SCHEMA_GET, {}))["text"])
            self._subs.clear()
            for sub in self._all_subs:
                sub.server_id = (await self._handshake(link, SUBSCRIBE, sub.fields()))["subscription"]
                self._subs[sub.server_id] = sub
        except BaseException:
            writer.close()
            raise
        self._link = link
        self._up.set()

    async def _handshake(self, link: _Link, type_: int, fields: Fields) -> Fields:
        """A request answered before the reading task runs: read frames here
        (notifications of renewed subscriptions are queued)."""
        id_ = link.next_id
        link.next_id += 1
        link.writer.write(encode_message(type_, id_, fields))
        await link.writer.drain()
        while True:
            f = link.frames.next()
            if f is None:
                try:
                    data = await asyncio.wait_for(link.reader.read(1 << 16), self.timeout)
                except asyncio.TimeoutError:
                    raise Timeout(f"pbusd of '{self.instance}' did not answer within {self.timeout} s") from None
                if not data:
                    raise NotConnected(f"pbusd of '{self.instance}' closed the connection")
                link.frames.feed(data)
                continue
            if f.type == NOTIFY and f.id == 0:
                self._notify(f.decode())
                continue
            if f.type == ERROR:
                e = f.decode()
                raise server_error(e["code"], e["message"])
            if f.id != id_ or f.type != REPLY_OF[type_]:
                raise ProtocolError(f"{typename(type_)} answered with {f!r}")
            return f.decode()

    def _notify(self, n: Fields) -> None:
        sub = self._subs.get(n["subscription"])
        if sub is not None and not sub.closed:
            sub.queue.put_nowait([_session.to_value(self.schema, rec) for rec in n["values"]])

    async def _run(self) -> None:
        """Read frames for ever; reconnect when the connection ends."""
        while not self._closed:
            link = self._link
            if link is not None:
                try:
                    await self._read(link)
                except (OSError, ConnectionClosed, Error) as e:
                    why = e
                else:
                    why = ConnectionClosed("closed")
                self._lost(link, why)
            if not self.reconnect or self._closed:
                return
            delay = RETRY_FIRST
            while not self._closed:
                try:
                    await self._open()
                    break
                except (NotConnected, Timeout, OSError):
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RETRY_MAX)
                except Error:
                    # SchemaMismatch, an untrusted owner: not worth retrying fast.
                    await asyncio.sleep(RETRY_MAX)

    async def _read(self, link: _Link) -> None:
        while True:
            f = link.frames.next()
            if f is None:
                data = await link.reader.read(1 << 16)
                if not data:
                    return
                link.frames.feed(data)
                continue
            if f.id == 0 and f.type == NOTIFY:
                self._notify(f.decode())
            elif f.id == 0 and f.type == SERVICE:
                pass
            elif f.id == 0 and f.type == ERROR:
                e = f.decode()
                raise server_error(e["code"], e["message"])
            else:
                if not link.waiting or link.waiting[0][0] != f.id:
                    raise ProtocolError(f"reply {f!r} to no request")
                _, type_, fut, sub = link.waiting.popleft()
                if f.type == SUBSCRIBED and type_ == SUBSCRIBE and sub is not None and not sub.closed:
                    # Its first NOTIFY may follow in this very read: known from now on.
                    sub.server_id = f.decode()["subscription"]
                    self._subs[sub.server_id] = sub
                if fut.done():
                    continue  # its caller stopped waiting (timeout): dropped
                if f.type == ERROR:
                    e = f.decode()
                    fut.set_exception(server_error(e["code"], e["message"]))
                elif f.type != REPLY_OF[type_]:
                    fut.set_exception(ProtocolError(f"{typename(type_)} answered with {f!r}"))
                else:
                    try:
                        fut.set_result(f.decode())
                    except ProtocolError as e:
                        fut.set_exception(e)

    def _lost(self, link: _Link, why: BaseException) -> None:
        if self._link is link:
            self._link = None
            self._up.clear()
        link.writer.close()
        for _, _, fut, _ in link.waiting:
            if not fut.done():
                fut.set_exception(NotConnected(f"the connection to pbusd of '{self.instance}' was lost ({why})"))
        link.waiting.clear()

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        if self._link is not None:
            self._lost(self._link, ConnectionClosed("closed by the client"))
        for sub in self._all_subs:
            sub.closed = True

    # --- Requests ------------------------------------------------------------------------

    async def _request(self, type_: int, fields: Fields, flags: int = 0, sub: Any = None) -> Fields:
        if self._closed:
            raise Error("the client is closed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while self._link is None:
            # The connection may be lost again between the event and now.
            try:
                await asyncio.wait_for(self._up.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise NotConnected(f"pbusd of '{self.instance}' is not back within {self.timeout} s") from None
        link = self._link
        id_ = link.next_id
        link.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        link.waiting.append((id_, type_, fut, sub))
        link.writer.write(encode_message(type_, id_, fields, flags))
        try:
            await link.writer.drain()
            return await asyncio.wait_for(asyncio.shield(fut), self.timeout)
        except asyncio.TimeoutError:
            fut.cancel()  # the reply, if it comes, is dropped by the reader
            raise Timeout(f"pbusd of '{self.instance}' did not answer within {self.timeout} s") from None
        except (ConnectionError, OSError) as e:
            self._lost(link, e)  # the reading task reconnects; a retry waits for it
            raise NotConnected(f"the connection to pbusd of '{self.instance}' was lost ({e})") from None

    async def _ready(self) -> None:
        if not self._up.is_set():
            try:
                await asyncio.wait_for(self._up.wait(), self.timeout)
            except asyncio.TimeoutError:
                raise NotConnected(f"pbusd of '{self.instance}' is not back within {self.timeout} s") from None

    async def get(self, name: "str | int") -> Value:
        return (await self.get_many([name]))[0]

    async def get_many(self, names: Iterable["str | int"]) -> list[Value]:
        await self._ready()
        params = _session.params_of(self.schema, names)
        try:
            reply = await self._request(GET, {"indexes": [p.index for p in params]})
        except NotConnected:
            if not self.reconnect:
                raise
            reply = await self._request(GET, {"indexes": [p.index for p in params]})
        return [_session.to_value(self.schema, rec) for rec in reply["values"]]

    async def set(self, name: str, value: Any, *, applied: bool = False) -> int:
        return (await self.set_many([(name, value)], applied=applied))[name]

    async def set_many(self, items: "Mapping[str, Any] | Iterable[tuple[str, Any]]", *,
                       applied: bool = False) -> dict[str, int]:
        await self._ready()
        pairs = _session.write_items(items)
        fields, params = _session.set_fields(self.schema, pairs)
        reply = await self._request(SET, fields, APPLIED if applied else 0)
        return _session.set_result(reply, params, pairs)

    async def subscribe(self, names: Iterable["str | int"], *, deadband: float = 0.0,
                        min_interval: float = 0.0) -> Subscription:
        await self._ready()
        sub = Subscription(self, _session.params_of(self.schema, names), deadband, min_interval)
        self._all_subs.append(sub)
        try:
            reply = await self._request(SUBSCRIBE, sub.fields(), sub=sub)
        except BaseException:
            self._all_subs.remove(sub)
            raise
        sub.server_id = reply["subscription"]
        self._subs[sub.server_id] = sub
        return sub

    async def unsubscribe(self, sub: Subscription) -> None:
        if not _session.forget(sub, self._subs, self._all_subs):
            return
        if self._link is not None:
            await self._request(UNSUBSCRIBE, {"subscription": sub.server_id})
