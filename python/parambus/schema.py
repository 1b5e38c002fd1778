"""schema.py: the compiled schema's text (docs/schema-format.md), the
stored encodings of values (docs/segment-format.md §2.6, §2.8) and the
typed value a reader returns.

The socket clients learn names, types, units and enumerators from the
schema pbusd sends (SCHEMA); the table reader gets the same from the
segment's descriptors (segment.py). Both give values as Value objects.
The parser refuses malformed text with SchemaError, never anything else,
whatever the bytes (tests/python/fuzz_schema.py).
"""
from __future__ import annotations

import datetime
import enum
import math
import re
import struct
from typing import Any, Union

from .errors import Error, ProtocolError, SchemaError

SCALARS = {"bool": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B",
           "uint16": "H", "uint32": "I", "uint64": "Q", "float": "f", "double": "d", "enum": "i"}
INTEGER = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
FLOATING = {"float", "double"}
ARRAY_ELEMENTS = INTEGER | FLOATING | {"bool"}
FLAGS = ("readonly", "persistent", "noread", "nosubscriptions")
CLASSES = ("constant", "rare", "setting", "live")

PythonValue = Union[bool, int, float, str, bytes, list[Any]]


class BadValue(Error, ValueError):
    """A Python value that cannot be a value of the parameter's type."""


class Status(enum.IntEnum):
    """A value's alarm status (EPICS severity)."""
    OK = 0
    MINOR = 1
    MAJOR = 2
    INVALID = 3

    def __str__(self) -> str:
        return self.name.lower()


_STATUSES = (Status.OK, Status.MINOR, Status.MAJOR, Status.INVALID)


def status_of(code: int) -> "Status | int":
    """The Status of a stored code; a code above 3 (no writer stores one,
    segment-format.md §2.8) is returned as the number itself."""
    return _STATUSES[code] if 0 <= code <= 3 else code


class Value:
    """One parameter's value as read: consistent with its status, timestamp
    and version (the read protocol never returns a mix of two writes).
    .name, .value (bool, int, float, str, bytes, an enum's label, or a
    list), .status, .timestamp_ns (CLOCK_REALTIME of the write), .seq (the
    version: 0 = the initial value, +1 per write), .unit, .index.
    (A plain class with slots: built on every read, it must be cheap.)"""
    __slots__ = ("name", "value", "status", "timestamp_ns", "seq", "unit", "index")

    def __init__(self, name: str, value: Any, status: "Status | int", timestamp_ns: int, seq: int,
                 unit: str = "", index: int = -1) -> None:
        self.name, self.value, self.status = name, value, status
        self.timestamp_ns, self.seq, self.unit, self.index = timestamp_ns, seq, unit, index

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.value, self.status, self.timestamp_ns, self.seq, self.unit, self.index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.timestamp_ns, self.seq))

    def __repr__(self) -> str:
        return ("Value(name={!r}, value={!r}, status={!r}, timestamp_ns={}, seq={}, unit={!r}, index={})"
                .format(*self._key()))

    @property
    def time(self) -> datetime.datetime:
        """The write's time, in UTC."""
        return datetime.datetime.fromtimestamp(self.timestamp_ns / 1e9, datetime.timezone.utc)

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name}={self.value!r}{unit} status={self.status} seq={self.seq}"


def fnv1a64(data: bytes) -> int:
    """The schema hash's function (schema-format.md, "The schema hash")."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


_PCT = re.compile(rb"%([0-9A-F]{2})")


def _pct_bytes(token: str, where: str) -> bytes:
    raw = token.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 0x25:
            m = _PCT.match(raw, i)
            if not m:
                raise SchemaError(f"{where}: '%' not followed by two upper-case hex digits")
            b = int(m.group(1), 16)
            if b == 0:
                raise SchemaError(f"{where}: %00 (a NUL byte) in a token")
            out.append(b)
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def _pct(token: str, where: str = "token") -> str:
    """A percent-encoded token as text (bytes that are not UTF-8 replaced)."""
    return _pct_bytes(token, where).decode("utf-8", "replace")


def _int(text: str, lo: int, hi: int, where: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text):
        raise SchemaError(f"{where}: '{text}' is not a decimal integer")
    n = int(text)
    if not lo <= n <= hi:
        raise SchemaError(f"{where}: {n} is not in {lo} … {hi}")
    return n


class Param:
    """One parameter of a compiled schema: .index, .name, .type ("double",
    "int32[]" ...), .element, .is_array, .unit, .description, .flags,
    .group, .capacity (bytes), .enum (label -> value) and .keys (every key
    of its record, decoded)."""

    def __init__(self, index: int, name: str, type_: str, keys: dict[str, str], where: str = "param") -> None:
        self.index, self.name, self.type, self.keys = index, name, type_, keys
        self.is_array = type_.endswith("[]")
        self.element = type_[:-2] if self.is_array else type_
        if self.is_array and self.element not in ARRAY_ELEMENTS or \
                not self.is_array and self.element not in SCALARS and self.element not in ("string", "bytes"):
            raise SchemaError(f"{where}: unknown type '{type_}'")
        self.flags = set(filter(None, keys.get("flags", "").split(",")))
        self.group = keys.get("group")
        self.unit = keys.get("unit", "")
        self.description = keys.get("desc", "")
        if type_ in ("string", "bytes"):
            if "size" not in keys:
                raise SchemaError(f"{where}: a {type_} needs size=")
            self.capacity = _int(keys["size"], 1, 65536, where + " size")
        elif self.is_array:
            if "count" not in keys:
                raise SchemaError(f"{where}: an array needs count=")
            self.capacity = _int(keys["count"], 1, 65536, where + " count") * struct.calcsize("<" + SCALARS[self.element])
        else:
            self.capacity = struct.calcsize("<" + SCALARS[type_])
        self.enum: dict[str, int] | None = None  # label -> value, for enums

    @property
    def readonly(self) -> bool:
        return "readonly" in self.flags

    def __repr__(self) -> str:
        return f"Param({self.index}, {self.name}, {self.type})"


class Schema:
    """The compiled schema as pbusd's SCHEMA carries it: .params in index
    order, .by_name, .enums (name -> {label: value}), .interface,
    .version ("1.2") and .hash (FNV-1a-64 of the record lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.params: list[Param] = []
        self.enums: dict[str, dict[str, int]] = {}
        self.by_name: dict[str, Param] = {}
        self.interface: str | None = None
        self.version: str | None = None
        records = bytearray()
        first = True
        for n, line in enumerate(text.split("\n"), 1):
            if not line or line.startswith("#"):
                continue
            records += line.encode("utf-8", "surrogateescape") + b"\n"
            where = f"schema line {n}"
            tok = line.split(" ")
            if any(not t for t in tok):
                raise SchemaError(f"{where}: an empty token (two spaces, or a space at an end)")
            if first:
                if tok != ["pbus-schema", "1"]:
                    raise SchemaError(f"{where}: not 'pbus-schema 1' (a compiled schema of format 1 starts so)")
                first = False
                continue
            kind = tok[0]
            if kind == "interface":
                if len(tok) != 3 or self.interface is not None:
                    raise SchemaError(f"{where}: an interface record is 'interface FQN MAJOR.MINOR', once")
                self.interface, self.version = _pct(tok[1], where), tok[2]
            elif kind == "enum":
                if len(tok) < 3:
                    raise SchemaError(f"{where}: an enum without enumerators")
                labels: dict[str, int] = {}
                for t in tok[2:]:
                    label, eq, value = t.partition("=")
                    if not eq:
                        raise SchemaError(f"{where}: enumerator '{t}' is not LABEL=VALUE")
                    labels.setdefault(_pct(label, where), _int(value, -2**31, 2**31 - 1, where))
                self.enums[_pct(tok[1], where)] = labels
            elif kind == "param":
                if len(tok) < 3:
                    raise SchemaError(f"{where}: a param record is 'param NAME TYPE KEY=VALUE ...'")
                keys: dict[str, str] = {}
                for t in tok[3:]:
                    k, eq, v = t.partition("=")
                    if not eq:
                        raise SchemaError(f"{where}: '{t}' is not KEY=VALUE")
                    keys[_pct(k, where)] = _pct(v, where)
                name = _pct(tok[1], where)
                if name in self.by_name:
                    raise SchemaError(f"{where}: parameter '{name}' appears twice")
                p = Param(len(self.params), name, tok[2], keys, f"{where} ({name})")
                if p.element == "enum":
                    if keys.get("enum") not in self.enums:
                        raise SchemaError(f"{where} ({name}): enum '{keys.get('enum')}' has no enum record above")
                    p.enum = self.enums[keys["enum"]]
                self.params.append(p)
                self.by_name[p.name] = p
            elif kind in ("type", "method", "broadcast"):
                pass  # methods and broadcasts: not values (docs/methods.md)
            else:
                pass  # a later format's record: ignored, as keys are
        if first:
            raise SchemaError("schema: no 'pbus-schema 1' record")
        self.hash = fnv1a64(bytes(records))

    def __getitem__(self, key: "str | int") -> Param:
        return self.by_name[key] if isinstance(key, str) else self.params[key]

    def __len__(self) -> int:
        return len(self.params)

    def index(self, name: str) -> int:
        return self.by_name[name].index

    def find(self, name: str) -> Param:
        """The parameter @name; NotFound (a KeyError) naming it if none."""
        try:
            return self.by_name[name]
        except KeyError:
            raise UnknownParameter(name) from None


class UnknownParameter(Error, KeyError):
    """A name that is not a parameter of the instance."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown parameter '{name}'")
        self.name = name

    def __str__(self) -> str:
        return str(self.args[0])


# --- Stored encodings (segment-format.md §2.6) ------------------------------------

def _scalar(param_type: str, value: Any, enum: "dict[str, int] | None") -> bytes:
    if param_type == "enum" and isinstance(value, str):
        if not enum or value not in enum:
            raise BadValue(f"'{value}' is not one of the enumerators ({', '.join(enum or [])})")
        value = enum[value]
    if param_type == "bool":
        if value not in (0, 1) or isinstance(value, float):
            raise BadValue(f"a bool is True or False, not {value!r}")
        value = int(value)
    elif param_type in FLOATING:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadValue(f"a {param_type} is a number, not {value!r}")
        value = float(value)
        if param_type == "float" and math.isfinite(value) and abs(value) > 3.4028234663852886e38:
            raise BadValue(f"{value!r} does not fit a float")
    elif isinstance(value, bool) or not isinstance(value, int):
        raise BadValue(f"an {param_type} is an integer, not {value!r}")
    try:
        return struct.pack("<" + SCALARS[param_type], value)
    except struct.error:
        raise BadValue(f"{value!r} does not fit an {param_type}") from None


def encode_value(param_type: str, value: Any, enum: "dict[str, int] | None" = None) -> bytes:
    """The stored encoding of a Python value: bool, int, float, str (a
    string, or an enum's label when @enum maps labels to values), bytes,
    or a list for arrays (`double[]`). BadValue if it cannot be one."""
    if param_type == "string":
        if not isinstance(value, str):
            raise BadValue(f"a string is a str, not {value!r}")
        if "\0" in value:
            raise BadValue("a string holds no NUL character")
        return value.encode("utf-8")
    if param_type == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise BadValue(f"bytes are bytes, not {value!r}")
        return bytes(value)
    if param_type.endswith("[]"):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise BadValue(f"an array is a list, not {value!r}")
        return b"".join(_scalar(param_type[:-2], v, None) for v in value)
    if param_type not in SCALARS:
        raise BadValue(f"unknown type '{param_type}'")
    return _scalar(param_type, value, enum)


def decode_value(param_type: str, raw: bytes, enum: "dict[str, int] | None" = None) -> Any:
    """The Python value of a stored encoding (the inverse of encode_value;
    an enum becomes its label when @enum is given and has the value, else
    its number). Strings that are not UTF-8 have U+FFFD in place of the
    ill-formed bytes (§2.8). ProtocolError for a length the type cannot
    have."""
    raw = bytes(raw)
    if param_type == "string":
        return raw.decode("utf-8", "replace")
    if param_type == "bytes":
        return raw
    if param_type.endswith("[]"):
        f = "<" + SCALARS[param_type[:-2]]
        size = struct.calcsize(f)
        if len(raw) % size:
            raise ProtocolError(f"{param_type} of {len(raw)} bytes")
        return [decode_value(param_type[:-2], raw[i:i + size]) for i in range(0, len(raw), size)]
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
