"""protocol.py: the client side of pbusd's socket protocol, version 1.

Written from docs/socket-protocol.md alone (and, for the text of the schema
and the value encodings, docs/schema-format.md and docs/segment-format.md
§2.6); it shares no code with the C library. Python 3 standard library
only. Three layers, each usable on its own:

- frames:   encode_frame() / FrameReader (header, length checks);
- messages: encode_body() / decode_body() for every type of §3, with the
            fields as plain dicts (bytes for values, PING data);
- values:   Schema (a parser of the compiled schema) with encode_value() /
            decode_value() between the stored encoding and Python values.

Connection ties them to a socket: request() sends one request and returns
its reply, keeping the notifications that arrive meanwhile.
"""
import os
import select
import socket
import struct
import time

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

# §5: error codes (negated Linux errno numbers).
EPERM, ENOENT, EIO, ENOMEM, EACCES, EBUSY, EINVAL, EMFILE, ERANGE = -1, -2, -5, -12, -13, -16, -22, -24, -34
EPROTO, EUSERS, EMSGSIZE, EPROTONOSUPPORT, EADDRINUSE, ESTALE = -71, -87, -90, -93, -98, -116
ENOSYS, ETIMEDOUT = -38, -110
ERRNAMES = {EPERM: "EPERM", ENOENT: "ENOENT", EIO: "EIO", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
            EINVAL: "EINVAL", EMFILE: "EMFILE", ERANGE: "ERANGE", EPROTO: "EPROTO", EUSERS: "EUSERS",
            EMSGSIZE: "EMSGSIZE", EPROTONOSUPPORT: "EPROTONOSUPPORT", EADDRINUSE: "EADDRINUSE",
            ESTALE: "ESTALE", ENOSYS: "ENOSYS", ETIMEDOUT: "ETIMEDOUT"}

# §2: value record status.
STATUS = ["ok", "minor", "major", "invalid"]


def errname(code):
    return ERRNAMES.get(code, str(code))


def typename(t):
    return NAMES.get(t, f"type {t}")


class ProtocolError(Exception):
    """Bytes that do not follow the protocol (a malformed frame or body)."""


class ServerError(Exception):
    """An ERROR reply: .code (negative errno) and .message."""

    def __init__(self, code, message):
        super().__init__(f"{errname(code)} ({code}): {message}")
        self.code, self.message = code, message


# --- Frames (§2) ----------------------------------------------------------------

def encode_frame(type_, id_, body=b"", flags=0):
    return HEADER.pack(HEADER_SIZE + len(body), type_, flags, id_) + body


class Frame:
    __slots__ = ("type", "flags", "id", "body")

    def __init__(self, type_, flags, id_, body):
        self.type, self.flags, self.id, self.body = type_, flags, id_, body

    def decode(self):
        """The body's fields (decode_body)."""
        return decode_body(self.type, self.body)

    def __repr__(self):
        return f"Frame({typename(self.type)}, id={self.id}, flags={self.flags}, {len(self.body)} bytes)"


class FrameReader:
    """Cuts a byte stream into frames; refuses what §2 forbids."""

    def __init__(self, max_frame=DEFAULT_MAX_FRAME):
        self.max_frame = max_frame
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data

    def next(self):
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


def split_frames(data, max_frame=DEFAULT_MAX_FRAME):
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
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n, what):
        if n > len(self.data) - self.pos:
            raise ProtocolError(f"body too short: {what} needs {n} bytes, {len(self.data) - self.pos} left")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def fmt(self, f, what):
        s = struct.Struct("<" + f)
        return s.unpack(self.take(s.size, what))[0]

    def u32(self, what):
        return self.fmt("I", what)

    def str(self, what):
        raw = self.take(self.u32(what + " length"), what)
        if b"\0" in raw:
            raise ProtocolError(f"{what}: NUL in a str")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError(f"{what}: not UTF-8 ({e})")

    def count(self, what, item_min_size):
        n = self.u32(what + " count")
        # Checked before allocating anything: each item needs bytes.
        if n * item_min_size > len(self.data) - self.pos:
            raise ProtocolError(f"body too short for {n} × {what}")
        return n

    def end(self):
        if self.pos != len(self.data):
            raise ProtocolError(f"body too long: {len(self.data) - self.pos} bytes left over")


def _str(s):
    raw = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<I", len(raw)) + raw


VAL_HEAD = struct.Struct("<IIQQI")  # index, status, timestamp_ns, seq, length


def encode_val(v):
    return VAL_HEAD.pack(v["index"], v["status"], v["timestamp_ns"], v["seq"], len(v["value"])) + bytes(v["value"])


def _read_val(r):
    index, status, ts, seq, length = VAL_HEAD.unpack(r.take(VAL_HEAD.size, "value record"))
    if status > 3:
        raise ProtocolError(f"value record of {index}: status {status}")
    return {"index": index, "status": status, "timestamp_ns": ts, "seq": seq,
            "value": r.take(length, "value")}


def encode_body(type_, f):
    """The body of a message of @type_ with fields @f (a dict)."""
    p = struct.pack
    if type_ == HELLO:
        return p("<IIQ", f["min_version"], f["max_version"], f["schema_hash"]) + _str(f["client_name"])
    if type_ == HELLO_REPLY:
        return (p("<IQIIII", f["version"], f["schema_hash"], f["param_count"], f["max_frame"],
                  f["max_subscriptions"], f["server_pid"]) + _str(f["instance"]) + _str(f["interface"]))
    if type_ in (SCHEMA_GET, UNSUBSCRIBED, STATS_GET, SERVICE_REGISTERED, SERVICE_UNREGISTERED,
                 SERVICE_UNWATCHED):
        return b""
    if type_ == SCHEMA:
        return _str(f["text"])
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
        return _str(f["json"])
    if type_ == ERROR:
        return p("<i", f["code"]) + _str(f["message"])
    if type_ in (PING, PONG):
        return bytes(f["data"])
    if type_ == SERVICE_REGISTER:
        return _str(f["address"]) + p("<II", f["major"], f["minor"]) + _str(f["endpoint"])
    if type_ in (SERVICE_UNREGISTER, SERVICE_UNWATCH):
        return _str(f["address"])
    if type_ == SERVICE_LOOKUP:
        return _str(f["address"]) + p("<I", f["watch"])
    if type_ == SERVICE:
        return (_str(f["address"]) + p("<IIIII", f["available"], f["major"], f["minor"], f["pid"], f["uid"])
                + _str(f["endpoint"]))
    if type_ == CONNECT:
        return (p("<II", f["min_version"], f["max_version"]) + _str(f["interface"])
                + p("<II", f["major"], f["minor"]) + _str(f["client_name"]))
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


def decode_body(type_, body):
    """The fields of a body of @type_; ProtocolError if it is malformed."""
    r = _Reader(bytes(body))
    f = {}
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


def encode_message(type_, id_, fields=None, flags=0):
    return encode_frame(type_, id_, encode_body(type_, fields or {}), flags)


# --- The schema and values (schema-format.md, segment-format.md §2.6) -----------

SCALARS = {"bool": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B",
           "uint16": "H", "uint32": "I", "uint64": "Q", "float": "f", "double": "d", "enum": "i"}
INTEGER = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def _pct(token):
    out, i = bytearray(), 0
    raw = token.encode("utf-8")
    while i < len(raw):
        if raw[i] == 0x25:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8")


class Param:
    def __init__(self, index, name, type_, keys):
        self.index, self.name, self.type, self.keys = index, name, type_, keys
        self.is_array = type_.endswith("[]")
        self.element = type_[:-2] if self.is_array else type_
        self.flags = set(filter(None, keys.get("flags", "").split(",")))
        self.group = keys.get("group")
        if type_ in ("string", "bytes"):
            self.capacity = int(keys["size"])
        elif self.is_array:
            self.capacity = int(keys["count"]) * struct.calcsize("<" + SCALARS[self.element])
        else:
            self.capacity = struct.calcsize("<" + SCALARS[type_])
        self.enum = None  # label -> value, for enums

    def __repr__(self):
        return f"Param({self.index}, {self.name}, {self.type})"


class Schema:
    """The compiled schema as SCHEMA carries it: names, types, flags, enums."""

    def __init__(self, text):
        self.text = text
        self.params, self.enums, self.by_name = [], {}, {}
        self.interface = self.version = None
        records = b""
        for line in text.split("\n"):
            if not line or line.startswith("#"):
                continue
            records += line.encode("utf-8") + b"\n"
            tok = line.split(" ")
            if tok[0] == "interface":
                self.interface, self.version = _pct(tok[1]), tok[2]
            elif tok[0] == "enum":
                self.enums[_pct(tok[1])] = {_pct(k): int(v) for k, v in (t.split("=", 1) for t in tok[2:])}
            elif tok[0] == "param":
                keys = {k: _pct(v) for k, v in (t.split("=", 1) for t in tok[3:])}
                p = Param(len(self.params), _pct(tok[1]), tok[2], keys)
                if p.type == "enum":
                    p.enum = self.enums[keys["enum"]]
                self.params.append(p)
                self.by_name[p.name] = p
        self.hash = fnv1a64(records)

    def __getitem__(self, key):
        return self.by_name[key] if isinstance(key, str) else self.params[key]

    def index(self, name):
        return self.by_name[name].index


def encode_value(param_type, value, enum=None):
    """The stored encoding of a Python value: bool, int, float, str (string,
    or an enum label when @enum maps labels to values), bytes, or a list for
    arrays (`double[]`)."""
    if param_type == "string":
        return value.encode("utf-8")
    if param_type == "bytes":
        return bytes(value)
    if param_type.endswith("[]"):
        return b"".join(encode_value(param_type[:-2], v) for v in value)
    if param_type == "enum" and isinstance(value, str):
        value = enum[value]
    return struct.pack("<" + SCALARS[param_type], value)


def decode_value(param_type, raw, enum=None):
    """The Python value of a stored encoding (inverse of encode_value; an
    enum becomes its label when @enum is given and knows the value)."""
    if param_type == "string":
        return raw.decode("utf-8")
    if param_type == "bytes":
        return bytes(raw)
    if param_type.endswith("[]"):
        f = "<" + SCALARS[param_type[:-2]]
        size = struct.calcsize(f)
        if len(raw) % size:
            raise ProtocolError(f"{param_type} of {len(raw)} bytes")
        out = [decode_value(param_type[:-2], raw[i:i + size]) for i in range(0, len(raw), size)]
        return out
    f = "<" + SCALARS[param_type]
    if len(raw) != struct.calcsize(f):
        raise ProtocolError(f"{param_type} of {len(raw)} bytes")
    v = struct.unpack(f, raw)[0]
    if param_type == "bool":
        if v > 1:
            raise ProtocolError(f"bool {v}")
        return bool(v)
    if param_type == "enum" and enum:
        for label, n in enum.items():
            if n == v:
                return label
    return v


# --- The socket (§1) and a connection -------------------------------------------

def socket_path(instance, socket_dir=None):
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


class Closed(Exception):
    """The server closed the connection."""


class Connection:
    """One connection to pbusd. Replies come back in order; notifications
    that arrive while waiting for a reply are kept in .notifications."""

    def __init__(self, path, timeout=5.0, max_frame=DEFAULT_MAX_FRAME):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.timeout = timeout
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.reader = FrameReader(max_frame)
        self.next_id = 1
        self.notifications = []
        self.service_events = []  # SERVICE notifications (§3.6), kept like NOTIFYs
        self.eof = False
        self.hello_reply = None

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fileno(self):
        return self.sock.fileno()

    # Raw I/O.
    def send_bytes(self, data):
        self.sock.sendall(data)

    def send(self, type_, fields=None, id_=None, flags=0):
        """Send a message; returns its id."""
        if id_ is None:
            id_, self.next_id = self.next_id, self.next_id + 1
        self.send_bytes(encode_message(type_, id_, fields, flags))
        return id_

    def recv_frame(self, timeout=None):
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

    def wait_closed(self, timeout=None):
        """Frames until the server closes; TimeoutError if it does not."""
        frames = []
        while True:
            try:
                frames.append(self.recv_frame(timeout))
            except Closed:
                return frames

    # Requests.
    def reply(self, id_, timeout=None):
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
                raise ServerError(e["code"], e["message"])
            if f.id != id_:
                raise ProtocolError(f"reply {f!r} to request {id_}")
            return f

    def request(self, type_, fields=None, expect=None, timeout=None):
        """Send a request and return its reply's fields; ServerError for an
        ERROR, ProtocolError for another reply type than @expect
        (default: the request's reply type)."""
        f = self.reply(self.send(type_, fields), timeout)
        if f.type == ERROR:
            e = f.decode()
            raise ServerError(e["code"], e["message"])
        want = expect if expect is not None else REPLY_OF[type_]
        if f.type != want:
            raise ProtocolError(f"{typename(type_)} answered with {f!r}")
        return f.decode()

    def hello(self, name="conformance", schema_hash=0, min_version=VERSION, max_version=VERSION):
        self.hello_reply = self.request(HELLO, {"min_version": min_version, "max_version": max_version,
                                                "schema_hash": schema_hash, "client_name": name})
        self.reader.max_frame = self.hello_reply["max_frame"]
        return self.hello_reply

    def schema(self):
        return self.request(SCHEMA_GET)["text"]

    def get(self, indexes):
        return self.request(GET, {"indexes": list(indexes)})["values"]

    def set(self, writes):
        """@writes: (index, value bytes) pairs; returns the SET_REPLY fields."""
        return self.request(SET, {"writes": [{"index": i, "value": v} for i, v in writes]})

    def subscribe(self, indexes, min_interval_us=0, deadband=0.0):
        return self.request(SUBSCRIBE, {"min_interval_us": min_interval_us, "deadband": deadband,
                                        "indexes": list(indexes)})["subscription"]

    def unsubscribe(self, subscription):
        self.request(UNSUBSCRIBE, {"subscription": subscription})

    def stats(self):
        return self.request(STATS_GET)["json"]

    def ping(self, data=b""):
        return self.request(PING, {"data": data})["data"]

    # Services (§3.6).
    def register_service(self, address, major=1, minor=0, endpoint="pbus-test"):
        self.request(SERVICE_REGISTER, {"address": address, "major": major, "minor": minor, "endpoint": endpoint})

    def unregister_service(self, address):
        self.request(SERVICE_UNREGISTER, {"address": address})

    def lookup_service(self, address, watch=False):
        return self.request(SERVICE_LOOKUP, {"address": address, "watch": int(watch)})

    def unwatch_service(self, address):
        self.request(SERVICE_UNWATCH, {"address": address})

    def service_event(self, timeout=None):
        """The next SERVICE notification's fields (kept ones first)."""
        if self.service_events:
            return self.service_events.pop(0)
        f = self.recv_frame(timeout)
        if f.type != SERVICE or f.id != 0:
            raise ProtocolError(f"expected a SERVICE notification, got {f!r}")
        return f.decode()

    def notification(self, timeout=None):
        """The next NOTIFY's fields (kept ones first)."""
        if self.notifications:
            return self.notifications.pop(0)
        f = self.recv_frame(timeout)
        if f.type != NOTIFY or f.id != 0:
            raise ProtocolError(f"expected a NOTIFY, got {f!r}")
        return f.decode()
