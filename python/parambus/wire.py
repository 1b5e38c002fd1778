"""wire.py: pbusd's socket protocol, version 1, on the wire
(docs/socket-protocol.md §2, §3; docs/methods.md §3 for the method
messages that share the frame).

Two layers, each usable on its own:

- frames:   encode_frame() / FrameReader (header, length checks);
- messages: encode_body() / decode_body() for every type of §3, with the
            fields as plain dicts (bytes for values and PING data).

Every message is encoded and decoded here and nowhere else in the package;
the clients (client.py, aio.py), the raw Connection (connection.py) and the
project's conformance tests (tests/pbustest/protocol.py re-exports this
module) use it. Decoders raise ProtocolError, never anything else, whatever
the bytes (tests/python/fuzz_wire.py).
"""
from __future__ import annotations

import builtins
import struct
from typing import Any

from .errors import ProtocolError

Fields = dict[str, Any]

VERSION = 1
HEADER = struct.Struct("<IHHI")  # length, type, flags, id
HEADER_SIZE = HEADER.size        # 12
DEFAULT_MAX_FRAME = 1 << 20

# §3: message types.
HELLO, HELLO_REPLY, SCHEMA_GET, SCHEMA, GET, VALUES, SET, SET_REPLY, SUBSCRIBE, SUBSCRIBED, \
    UNSUBSCRIBE, UNSUBSCRIBED, NOTIFY, STATS_GET, STATS, ERROR, PING, PONG = range(1, 19)
# §3.6: services.
SERVICE_REGISTER, SERVICE_REGISTERED, SERVICE_UNREGISTER, SERVICE_UNREGISTERED, SERVICE_LOOKUP, \
    SERVICE, SERVICE_UNWATCH, SERVICE_UNWATCHED = range(19, 27)
NAMES = {HELLO: "HELLO", HELLO_REPLY: "HELLO_REPLY", SCHEMA_GET: "SCHEMA_GET", SCHEMA: "SCHEMA",
         GET: "GET", VALUES: "VALUES", SET: "SET", SET_REPLY: "SET_REPLY", SUBSCRIBE: "SUBSCRIBE",
         SUBSCRIBED: "SUBSCRIBED", UNSUBSCRIBE: "UNSUBSCRIBE", UNSUBSCRIBED: "UNSUBSCRIBED",
         NOTIFY: "NOTIFY", STATS_GET: "STATS_GET", STATS: "STATS", ERROR: "ERROR", PING: "PING",
         PONG: "PONG", SERVICE_REGISTER: "SERVICE_REGISTER", SERVICE_REGISTERED: "SERVICE_REGISTERED",
         SERVICE_UNREGISTER: "SERVICE_UNREGISTER", SERVICE_UNREGISTERED: "SERVICE_UNREGISTERED",
         SERVICE_LOOKUP: "SERVICE_LOOKUP", SERVICE: "SERVICE", SERVICE_UNWATCH: "SERVICE_UNWATCH",
         SERVICE_UNWATCHED: "SERVICE_UNWATCHED"}
TYPES = {v: k for k, v in NAMES.items()}
REQUESTS = {HELLO, SCHEMA_GET, GET, SET, SUBSCRIBE, UNSUBSCRIBE, STATS_GET, PING, SERVICE_REGISTER,
            SERVICE_UNREGISTER, SERVICE_LOOKUP, SERVICE_UNWATCH}
# The types that come as notifications (id 0): NOTIFY always, SERVICE when
# it is not the reply to a SERVICE_LOOKUP.
NOTIFICATIONS = {NOTIFY, SERVICE}
# The reply each request gets (ERROR is possible for every one).
REPLY_OF = {HELLO: HELLO_REPLY, SCHEMA_GET: SCHEMA, GET: VALUES, SET: SET_REPLY,
            SUBSCRIBE: SUBSCRIBED, UNSUBSCRIBE: UNSUBSCRIBED, STATS_GET: STATS, PING: PONG,
            SERVICE_REGISTER: SERVICE_REGISTERED, SERVICE_UNREGISTER: SERVICE_UNREGISTERED,
            SERVICE_LOOKUP: SERVICE, SERVICE_UNWATCH: SERVICE_UNWATCHED}

# docs/methods.md §3: the messages between a proxy and a method server
# (its own socket, not pbusd's).
CONNECT, CONNECTED, CALL, RETURN, BROADCAST_SUBSCRIBE, BROADCAST_SUBSCRIBED, BROADCAST_UNSUBSCRIBE, \
    BROADCAST_UNSUBSCRIBED, BROADCAST = range(27, 36)
CALL_NAMES = {CONNECT: "CONNECT", CONNECTED: "CONNECTED", CALL: "CALL", RETURN: "RETURN",
              BROADCAST_SUBSCRIBE: "BROADCAST_SUBSCRIBE", BROADCAST_SUBSCRIBED: "BROADCAST_SUBSCRIBED",
              BROADCAST_UNSUBSCRIBE: "BROADCAST_UNSUBSCRIBE",
              BROADCAST_UNSUBSCRIBED: "BROADCAST_UNSUBSCRIBED", BROADCAST: "BROADCAST",
              ERROR: "ERROR", PING: "PING", PONG: "PONG"}
CALL_REQUESTS = {CONNECT, CALL, BROADCAST_SUBSCRIBE, BROADCAST_UNSUBSCRIBE, PING}
CALL_REPLY_OF = {CONNECT: CONNECTED, CALL: RETURN, BROADCAST_SUBSCRIBE: BROADCAST_SUBSCRIBED,
                 BROADCAST_UNSUBSCRIBE: BROADCAST_UNSUBSCRIBED, PING: PONG}
NO_REPLY = 1  # CALL flags: fireAndForget
APPLIED = 1  # §2 frame flags: a SET's bit 0, reply once the hardware applied it (§3.3)

# §2: value record status.
STATUS = ["ok", "minor", "major", "invalid"]


def typename(t: int) -> str:
    return NAMES.get(t, f"type {t}")


# --- Frames (§2) ----------------------------------------------------------------

def encode_frame(type_: int, id_: int, body: bytes = b"", flags: int = 0) -> bytes:
    return HEADER.pack(HEADER_SIZE + len(body), type_, flags, id_) + body


class Frame:
    __slots__ = ("type", "flags", "id", "body")

    def __init__(self, type_: int, flags: int, id_: int, body: bytes) -> None:
        self.type, self.flags, self.id, self.body = type_, flags, id_, body

    def decode(self) -> Fields:
        """The body's fields (decode_body)."""
        return decode_body(self.type, self.body)

    def __repr__(self) -> str:
        return f"Frame({typename(self.type)}, id={self.id}, flags={self.flags}, {len(self.body)} bytes)"


class FrameReader:
    """Cuts a byte stream into frames; refuses what §2 forbids."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self.buf = bytearray()

    def feed(self, data: bytes) -> None:
        self.buf += data

    def next(self) -> "Frame | None":
        """The next complete frame, or None if more bytes are needed."""
        if len(self.buf) < 4:
            return None
        length = struct.unpack_from("<I", self.buf)[0]
        if length < HEADER_SIZE:
            raise ProtocolError(f"frame length {length} below {HEADER_SIZE}")
        if length > self.max_frame:
            raise ProtocolError(f"frame length {length} above max_frame {self.max_frame}")
        if len(self.buf) < length:
            return None
        _, type_, flags, id_ = HEADER.unpack_from(self.buf)
        body = bytes(self.buf[HEADER_SIZE:length])
        del self.buf[:length]
        if flags != 0:
            raise ProtocolError(f"flags 0x{flags:x} in a {typename(type_)} frame")
        return Frame(type_, flags, id_, body)


def split_frames(data: bytes, max_frame: int = DEFAULT_MAX_FRAME) -> list[Frame]:
    """All frames of @data, which must end at a frame's end."""
    r = FrameReader(max_frame)
    r.feed(data)
    frames = []
    while (f := r.next()) is not None:
        frames.append(f)
    if r.buf:
        raise ProtocolError(f"{len(r.buf)} bytes of an incomplete frame")
    return frames


# --- Bodies (§2, §3) ------------------------------------------------------------

class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if n > len(self.data) - self.pos:
            raise ProtocolError(f"body too short: {what} needs {n} bytes, {len(self.data) - self.pos} left")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def fmt(self, f: str, what: str) -> Any:
        s = struct.Struct("<" + f)
        return s.unpack(self.take(s.size, what))[0]

    def u32(self, what: str) -> int:
        return int(self.fmt("I", what))

    def str(self, what: str) -> str:
        raw = self.take(self.u32(what + " length"), what)
        if b"\0" in raw:
            raise ProtocolError(f"{what}: NUL in a str")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError(f"{what}: not UTF-8 ({e})")

    def count(self, what: builtins.str, item_min_size: int) -> int:
        n = self.u32(what + " count")
        # Checked before allocating anything: each item needs bytes.
        if n * item_min_size > len(self.data) - self.pos:
            raise ProtocolError(f"body too short for {n} × {what}")
        return n

    def end(self) -> None:
        if self.pos != len(self.data):
            raise ProtocolError(f"body too long: {len(self.data) - self.pos} bytes left over")


def encode_str(s: "str | bytes") -> bytes:
    """A str field (§2): a u32 byte count, then the UTF-8 bytes."""
    raw = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<I", len(raw)) + raw


VAL_HEAD = struct.Struct("<IIQQI")  # index, status, timestamp_ns, seq, length


def encode_val(v: Fields) -> bytes:
    return VAL_HEAD.pack(v["index"], v["status"], v["timestamp_ns"], v["seq"], len(v["value"])) + bytes(v["value"])


def _read_val(r: _Reader) -> Fields:
    index, status, ts, seq, length = VAL_HEAD.unpack(r.take(VAL_HEAD.size, "value record"))
    if status > 3:
        raise ProtocolError(f"value record of {index}: status {status}")
    return {"index": index, "status": status, "timestamp_ns": ts, "seq": seq,
            "value": r.take(length, "value")}


def encode_body(type_: int, f: Fields) -> bytes:
    """The body of a message of @type_ with fields @f (a dict)."""
    p = struct.pack
    if type_ == HELLO:
        return p("<IIQ", f["min_version"], f["max_version"], f["schema_hash"]) + encode_str(f["client_name"])
    if type_ == HELLO_REPLY:
        return (p("<IQIIII", f["version"], f["schema_hash"], f["param_count"], f["max_frame"],
                  f["max_subscriptions"], f["server_pid"]) + encode_str(f["instance"]) + encode_str(f["interface"]))
    if type_ in (SCHEMA_GET, UNSUBSCRIBED, STATS_GET, SERVICE_REGISTERED, SERVICE_UNREGISTERED,
                 SERVICE_UNWATCHED):
        return b""
    if type_ == SCHEMA:
        return encode_str(f["text"])
    if type_ == GET:
        return p("<I", len(f["indexes"])) + b"".join(p("<I", i) for i in f["indexes"])
    if type_ in (VALUES, NOTIFY):
        head = p("<I", f["subscription"]) if type_ == NOTIFY else b""
        return head + p("<I", len(f["values"])) + b"".join(encode_val(v) for v in f["values"])
    if type_ == SET:
        return p("<I", len(f["writes"])) + b"".join(
            p("<II", w["index"], len(w["value"])) + bytes(w["value"]) for w in f["writes"])
    if type_ == SET_REPLY:
        return p("<iI", f["result"], len(f["results"])) + b"".join(
            p("<iQ", w["result"], w["seq"]) for w in f["results"])
    if type_ == SUBSCRIBE:
        return (p("<Id", f["min_interval_us"], f["deadband"]) + p("<I", len(f["indexes"]))
                + b"".join(p("<I", i) for i in f["indexes"]))
    if type_ in (SUBSCRIBED, UNSUBSCRIBE):
        return p("<I", f["subscription"])
    if type_ == STATS:
        return encode_str(f["json"])
    if type_ == ERROR:
        return p("<i", f["code"]) + encode_str(f["message"])
    if type_ in (PING, PONG):
        return bytes(f["data"])
    if type_ == SERVICE_REGISTER:
        return encode_str(f["address"]) + p("<II", f["major"], f["minor"]) + encode_str(f["endpoint"])
    if type_ in (SERVICE_UNREGISTER, SERVICE_UNWATCH):
        return encode_str(f["address"])
    if type_ == SERVICE_LOOKUP:
        return encode_str(f["address"]) + p("<I", f["watch"])
    if type_ == SERVICE:
        return (encode_str(f["address"]) + p("<IIIII", f["available"], f["major"], f["minor"], f["pid"], f["uid"])
                + encode_str(f["endpoint"]))
    if type_ == CONNECT:
        return (p("<II", f["min_version"], f["max_version"]) + encode_str(f["interface"])
                + p("<II", f["major"], f["minor"]) + encode_str(f["client_name"]))
    if type_ == CONNECTED:
        return p("<IIIII", f["version"], f["major"], f["minor"], f["max_frame"], f["server_pid"])
    if type_ == CALL:
        return p("<HH", f["method"], f["flags"]) + bytes(f["args"])
    if type_ == BROADCAST:
        return p("<HH", f["broadcast"], f["flags"]) + bytes(f["args"])
    if type_ == RETURN:
        return bytes(f["args"])
    if type_ in (BROADCAST_SUBSCRIBE, BROADCAST_UNSUBSCRIBE):
        return p("<H", f["broadcast"])
    if type_ in (BROADCAST_SUBSCRIBED, BROADCAST_UNSUBSCRIBED):
        return b""
    raise ValueError(f"no message type {type_}")


def decode_body(type_: int, body: bytes) -> Fields:
    """The fields of a body of @type_; ProtocolError if it is malformed."""
    r = _Reader(bytes(body))
    f: Fields = {}
    if type_ == HELLO:
        f["min_version"], f["max_version"] = r.u32("min_version"), r.u32("max_version")
        f["schema_hash"], f["client_name"] = r.fmt("Q", "schema_hash"), r.str("client_name")
    elif type_ == HELLO_REPLY:
        for k in ("version",):
            f[k] = r.u32(k)
        f["schema_hash"] = r.fmt("Q", "schema_hash")
        for k in ("param_count", "max_frame", "max_subscriptions", "server_pid"):
            f[k] = r.u32(k)
        f["instance"], f["interface"] = r.str("instance"), r.str("interface")
    elif type_ in (SCHEMA_GET, UNSUBSCRIBED, STATS_GET, SERVICE_REGISTERED, SERVICE_UNREGISTERED,
                   SERVICE_UNWATCHED):
        pass
    elif type_ == SCHEMA:
        f["text"] = r.str("text")
    elif type_ == GET:
        f["indexes"] = [r.u32("index") for _ in range(r.count("index", 4))]
    elif type_ in (VALUES, NOTIFY):
        if type_ == NOTIFY:
            f["subscription"] = r.u32("subscription")
        f["values"] = [_read_val(r) for _ in range(r.count("value record", VAL_HEAD.size))]
    elif type_ == SET:
        writes = []
        for _ in range(r.count("write", 8)):
            index = r.u32("index")
            writes.append({"index": index, "value": r.take(r.u32("length"), "value")})
        f["writes"] = writes
    elif type_ == SET_REPLY:
        f["result"] = r.fmt("i", "result")
        f["results"] = [{"result": r.fmt("i", "result"), "seq": r.fmt("Q", "seq")}
                        for _ in range(r.count("write result", 12))]
    elif type_ == SUBSCRIBE:
        f["min_interval_us"], f["deadband"] = r.u32("min_interval_us"), r.fmt("d", "deadband")
        f["indexes"] = [r.u32("index") for _ in range(r.count("index", 4))]
    elif type_ in (SUBSCRIBED, UNSUBSCRIBE):
        f["subscription"] = r.u32("subscription")
    elif type_ == STATS:
        f["json"] = r.str("json")
    elif type_ == ERROR:
        f["code"], f["message"] = r.fmt("i", "code"), r.str("message")
    elif type_ in (PING, PONG):
        f["data"] = r.take(len(r.data), "data")
    elif type_ == SERVICE_REGISTER:
        f["address"], f["major"], f["minor"] = r.str("address"), r.u32("major"), r.u32("minor")
        f["endpoint"] = r.str("endpoint")
    elif type_ in (SERVICE_UNREGISTER, SERVICE_UNWATCH):
        f["address"] = r.str("address")
    elif type_ == SERVICE_LOOKUP:
        f["address"], f["watch"] = r.str("address"), r.u32("watch")
        if f["watch"] > 1:
            raise ProtocolError(f"SERVICE_LOOKUP watch {f['watch']} (0 or 1)")
    elif type_ == SERVICE:
        f["address"] = r.str("address")
        for k in ("available", "major", "minor", "pid", "uid"):
            f[k] = r.u32(k)
        f["endpoint"] = r.str("endpoint")
        if f["available"] > 1:
            raise ProtocolError(f"SERVICE available {f['available']} (0 or 1)")
        if not f["available"] and (f["major"] or f["minor"] or f["pid"] or f["uid"] or f["endpoint"]):
            raise ProtocolError("SERVICE not available, with a version, pid, uid or endpoint")
    elif type_ == CONNECT:
        f["min_version"], f["max_version"] = r.u32("min_version"), r.u32("max_version")
        f["interface"], f["major"], f["minor"] = r.str("interface"), r.u32("major"), r.u32("minor")
        f["client_name"] = r.str("client_name")
        if not f["interface"] or len(f["interface"].encode()) > 255:
            raise ProtocolError("CONNECT interface is not 1 to 255 bytes")
        if len(f["client_name"].encode()) > 64:
            raise ProtocolError("CONNECT client_name is longer than 64 bytes")
    elif type_ == CONNECTED:
        for k in ("version", "major", "minor", "max_frame", "server_pid"):
            f[k] = r.u32(k)
        if f["max_frame"] < HEADER_SIZE:
            raise ProtocolError(f"CONNECTED max_frame {f['max_frame']} is below the header")
    elif type_ in (CALL, BROADCAST):
        key = "method" if type_ == CALL else "broadcast"
        f[key], f["flags"] = r.fmt("H", key), r.fmt("H", "flags")
        if f["flags"] & ~(NO_REPLY if type_ == CALL else 0):
            raise ProtocolError(f"{NAMES.get(type_, CALL_NAMES[type_])} flags {f['flags']:#x}")
        f["args"] = r.take(len(r.data) - r.pos, "args")
    elif type_ == RETURN:
        f["args"] = r.take(len(r.data), "args")
    elif type_ in (BROADCAST_SUBSCRIBE, BROADCAST_UNSUBSCRIBE):
        f["broadcast"] = r.fmt("H", "broadcast")
    elif type_ in (BROADCAST_SUBSCRIBED, BROADCAST_UNSUBSCRIBED):
        pass
    else:
        raise ProtocolError(f"unknown message type {type_}")
    r.end()
    return f


def encode_message(type_: int, id_: int, fields: "Fields | None" = None, flags: int = 0) -> bytes:
    return encode_frame(type_, id_, encode_body(type_, fields or {}), flags)
