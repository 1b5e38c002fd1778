"""connection.py: one raw connection to pbusd (socket-protocol.md §1, §3):
send any frame, receive frames, match replies to requests. It is the
layer under the clients (client.py) and the project's conformance tests'
connection (tests/pbustest/protocol.py): it does nothing on its own — no
handshake, no reconnect, no owner check unless asked — so that a test can
send exactly the bytes it wants.

Threads: one thread at a time per Connection.
"""
from __future__ import annotations

import os
import select
import socket
import struct
import time
from typing import Any

from ._owner import describe_trusted, trusted
from .errors import ConnectionClosed as Closed
from .errors import ProtocolError, UntrustedOwner, server_error
from .wire import (DEFAULT_MAX_FRAME, ERROR, GET, HELLO, NOTIFY, PING, REPLY_OF, SCHEMA_GET, SERVICE,
                   SERVICE_LOOKUP, SERVICE_REGISTER, SERVICE_UNREGISTER, SERVICE_UNWATCH, SET, STATS_GET,
                   SUBSCRIBE, UNSUBSCRIBE, VERSION, Fields, Frame, FrameReader, encode_message, typename)




def peer_uid(sock: socket.socket) -> int:
    """The uid of the process that listens on @sock's peer (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def socket_path(instance: str, socket_dir: "str | None" = None) -> str:
    """Where a client finds NAME.sock (§1): the first directory that has it."""
    if socket_dir:
        return os.path.join(socket_dir, instance + ".sock")
    dirs = []
    if os.environ.get("PBUS_SOCKET_DIR"):
        dirs.append(os.environ["PBUS_SOCKET_DIR"])
    dirs.append("/run/parambus")
    if os.environ.get("XDG_RUNTIME_DIR"):
        dirs.append(os.path.join(os.environ["XDG_RUNTIME_DIR"], "parambus"))
    dirs.append(f"/tmp/parambus-{os.getuid()}")
    for d in dirs:
        p = os.path.join(d, instance + ".sock")
        if os.path.exists(p):
            return p
    return os.path.join(dirs[0], instance + ".sock")


class Connection:
    """One connection to pbusd. Replies come back in order; notifications
    that arrive while waiting for a reply are kept in .notifications."""

    def __init__(self, path: str, timeout: float = 5.0, max_frame: int = DEFAULT_MAX_FRAME,
                 check_owner: bool = False) -> None:
        """Connect to @path. @check_owner: talk only to a trusted owner
        (§1): UntrustedOwner, before a byte is sent, otherwise."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.timeout = timeout
        self.path = path
        try:
            self.sock.connect(path)
            if check_owner:
                uid = peer_uid(self.sock)
                if not trusted(uid):
                    raise UntrustedOwner(f"{path} is served by uid {uid}, not a trusted owner ({describe_trusted()})")
        except BaseException:
            self.sock.close()
            raise
        self.reader = FrameReader(max_frame)
        self.next_id = 1
        self.notifications: list[Fields] = []
        self.service_events: list[Fields] = []  # SERVICE notifications (§3.6), kept like NOTIFYs
        self.eof = False
        self.hello_reply: "Fields | None" = None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def fileno(self) -> int:
        return self.sock.fileno()

    # Raw I/O.
    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, type_: int, fields: "Fields | None" = None, id_: "int | None" = None, flags: int = 0) -> int:
        """Send a message; returns its id."""
        if id_ is None:
            id_, self.next_id = self.next_id, self.next_id + 1
        self.send_bytes(encode_message(type_, id_, fields, flags))
        return id_

    def recv_frame(self, timeout: "float | None" = None) -> Frame:
        """The next frame from the server; Closed at end of stream,
        TimeoutError when none comes within @timeout seconds."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            f = self.reader.next()
            if f is not None:
                return f
            if self.eof:
                raise Closed(f"connection closed ({len(self.reader.buf)} bytes of a frame pending)")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                raise TimeoutError(f"no frame within {timeout if timeout is not None else self.timeout} s")
            try:
                data = self.sock.recv(1 << 16)
            except ConnectionResetError:
                data = b""
            if not data:
                self.eof = True
            self.reader.feed(data)

    def wait_closed(self, timeout: "float | None" = None) -> list[Frame]:
        """Frames until the server closes; TimeoutError if it does not."""
        frames = []
        while True:
            try:
                frames.append(self.recv_frame(timeout))
            except Closed:
                return frames

    # Requests.
    def reply(self, id_: int, timeout: "float | None" = None) -> Frame:
        """The reply to request @id_ (notifications before it are kept)."""
        while True:
            f = self.recv_frame(timeout)
            if f.type == NOTIFY and f.id == 0:
                self.notifications.append(f.decode())
                continue
            if f.type == SERVICE and f.id == 0:
                self.service_events.append(f.decode())
                continue
            if f.type == ERROR and f.id == 0 and id_ != 0:
                # Not an answer to a request: about the connection (EUSERS
                # on accept), which the server then closes.
                e = f.decode()
                raise server_error(e["code"], e["message"])
            if f.id != id_:
                raise ProtocolError(f"reply {f!r} to request {id_}")
            return f

    def request(self, type_: int, fields: "Fields | None" = None, expect: "int | None" = None,
                timeout: "float | None" = None, flags: int = 0) -> Fields:
        """Send a request and return its reply's fields; ServerError for an
        ERROR, ProtocolError for another reply type than @expect
        (default: the request's reply type)."""
        f = self.reply(self.send(type_, fields, flags=flags), timeout)
        if f.type == ERROR:
            e = f.decode()
            raise server_error(e["code"], e["message"])
        want = expect if expect is not None else REPLY_OF[type_]
        if f.type != want:
            raise ProtocolError(f"{typename(type_)} answered with {f!r}")
        return f.decode()

    def hello(self, name: str = "conformance", schema_hash: int = 0, min_version: int = VERSION,
              max_version: int = VERSION) -> Fields:
        self.hello_reply = self.request(HELLO, {"min_version": min_version, "max_version": max_version,
                                                "schema_hash": schema_hash, "client_name": name})
        self.reader.max_frame = self.hello_reply["max_frame"]
        return self.hello_reply

    def schema(self) -> str:
        return str(self.request(SCHEMA_GET)["text"])

    def get(self, indexes: Any) -> list[Fields]:
        values: list[Fields] = self.request(GET, {"indexes": list(indexes)})["values"]
        return values

    def set(self, writes: Any, flags: int = 0) -> Fields:
        """@writes: (index, value bytes) pairs; returns the SET_REPLY fields."""
        return self.request(SET, {"writes": [{"index": i, "value": v} for i, v in writes]}, flags=flags)

    def subscribe(self, indexes: Any, min_interval_us: int = 0, deadband: float = 0.0) -> int:
        return int(self.request(SUBSCRIBE, {"min_interval_us": min_interval_us, "deadband": deadband,
                                        "indexes": list(indexes)})["subscription"])

    def unsubscribe(self, subscription: int) -> None:
        self.request(UNSUBSCRIBE, {"subscription": subscription})

    def stats(self) -> str:
        return str(self.request(STATS_GET)["json"])

    def ping(self, data: bytes = b"") -> bytes:
        return bytes(self.request(PING, {"data": data})["data"])

    # Services (§3.6).
    def register_service(self, address: str, major: int = 1, minor: int = 0, endpoint: str = "pbus-test") -> None:
        self.request(SERVICE_REGISTER, {"address": address, "major": major, "minor": minor, "endpoint": endpoint})

    def unregister_service(self, address: str) -> None:
        self.request(SERVICE_UNREGISTER, {"address": address})

    def lookup_service(self, address: str, watch: bool = False) -> Fields:
        return self.request(SERVICE_LOOKUP, {"address": address, "watch": int(watch)})

    def unwatch_service(self, address: str) -> None:
        self.request(SERVICE_UNWATCH, {"address": address})

    def service_event(self, timeout: "float | None" = None) -> Fields:
        """The next SERVICE notification's fields (kept ones first)."""
        if self.service_events:
            return self.service_events.pop(0)
        f = self.recv_frame(timeout)
        if f.type != SERVICE or f.id != 0:
            raise ProtocolError(f"expected a SERVICE notification, got {f!r}")
        return f.decode()

    def notification(self, timeout: "float | None" = None) -> Fields:
        """The next NOTIFY's fields (kept ones first)."""
        if self.notifications:
            return self.notifications.pop(0)
        f = self.recv_frame(timeout)
        if f.type != NOTIFY or f.id != 0:
            raise ProtocolError(f"expected a NOTIFY, got {f!r}")
        return f.decode()
