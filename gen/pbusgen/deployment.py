"""The parambus deployment specification, `parambus.deployment`.

The keys a .fdepl may set are listed in two tables: KEYS for the keys that
describe a parameter (adding one is one line here plus the code in
params.py that gives it a meaning) and HW_KEYS for the hardware-binding keys
(`Hw...`), which this module turns into a model.HwBinding by itself. A key
that is in neither table is an error, unless its name starts with one of the
RESERVED_NAMESPACES, which are kept for keys to come (fleet topics, and
SCPI keys in broadcast sections and the define itself): those are accepted,
warned about, and ignored. An unknown `Hw...` key is an error with a
suggestion, since that namespace is implemented, and so is an unknown
`Scpi...` key in an attribute, field or method section (the SCPI keys of
parameters and methods, scpi.py).
docs/deployment-spec.md describes every key.

This module checks the structure of the file (which interface, which
sections, which keys) and converts values; params.py applies them to
parameters and checks.py checks how they fit together (including the type
rules of hardware bindings and lines bound twice).
"""

import difflib
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

from . import syntax as S
from .errors import Diagnostics, GenError, Location, shown
from .model import INT_RANGES, EnumType, EnumValue, HwBinding, Interface

SPEC_NAME = "parambus.deployment"

# What a key's value is written as.
STRING = "string"
NUMBER = "number"           # a number in the parameter's (element) type
INTEGER = "integer"         # a plain integer, 1..65536
STATUS_BIT = "status bit"   # a SCPI status register bit: 0..12 or 14
TOPIC = "topic"             # an MQTT topic suffix (fleet.py checks it)
DEADBAND = "deadband"       # a finite number >= 0
RATE = "rate"               # a number above 0, at most MAX_FLEET_RATE_HZ
BOOLEAN = "boolean"
CHOICE = "choice"
VALUE = "value"             # a value of the parameter

# Which parameters a key applies to.
NUMERIC = "numeric"         # integer and floating-point types, and arrays of them
ANY = "any"
SIZED = "sized"             # String, ByteBuffer
ARRAY = "array"             # arrays
ENUM = "enum"               # enumerations


@dataclass(frozen=True)
class Key:
    name: str
    value: str
    applies: str
    inheritable: bool       # may be set on a struct attribute for all its fields
    choices: Tuple[str, ...] = ()


KEYS: Dict[str, Key] = {k.name: k for k in (
    Key("Unit", STRING, NUMERIC, False),
    Key("Minimum", NUMBER, NUMERIC, False),
    Key("Maximum", NUMBER, NUMERIC, False),
    Key("Step", NUMBER, NUMERIC, False),
    Key("Default", VALUE, ANY, False),
    Key("Persistent", BOOLEAN, ANY, True),
    Key("WritableBy", STRING, ANY, True),
    Key("UpdateClass", CHOICE, ANY, True, ("constant", "rare", "setting", "live")),
    Key("MaxSize", INTEGER, SIZED, False),
    Key("MaxLength", INTEGER, ARRAY, False),
    # How a subscriber that shows the value (pbus-web; pbus-bridge unless
    # its Fleet keys say otherwise) subscribes: schema `deadband`,
    # `max-rate-hz`.
    Key("Deadband", DEADBAND, NUMERIC, False),
    Key("MaxRateHz", RATE, ANY, True),
    Key("ScpiKeyword", STRING, ANY, False),
    Key("ScpiAccess", CHOICE, ANY, False, ("query", "set", "both")),
    Key("ScpiEnum", STRING, ENUM, False),
    Key("ScpiQuestionable", STATUS_BIT, ANY, False),
    Key("ScpiQuestionableLevel", CHOICE, ANY, False, ("minor", "major", "invalid")),
    Key("ScpiOperation", STATUS_BIT, ANY, False),
    # Fleet publishing through pbus-bridge (fleet.py, docs/fleet.md): the
    # defaults depend on the update class and are filled in by fleet.py.
    Key("FleetPublish", BOOLEAN, ANY, True),
    Key("FleetTopic", TOPIC, ANY, False),
    Key("FleetDeadband", DEADBAND, NUMERIC, False),
    Key("FleetMaxRateHz", RATE, ANY, True),
    Key("FleetRetain", BOOLEAN, ANY, True),
    Key("FleetCommand", BOOLEAN, ANY, True),
)}

# The keys of a `method NAME { ... }` section (methods.md, docs/deployment-
# spec.md "Methods"); a broadcast section takes reserved keys only.
METHOD_KEYS: Dict[str, Key] = {k.name: k for k in (
    Key("CallableBy", STRING, ANY, False),
    Key("ScpiKeyword", STRING, ANY, False),
    Key("ScpiAccess", CHOICE, ANY, False, ("set", "query")),
)}

# Key name prefixes reserved for later parts of parambus. `Scpi` keys of
# parameters (KEYS) and of methods (METHOD_KEYS) are implemented; in
# broadcast sections and in the define itself they are still reserved.
RESERVED_NAMESPACES = ("Scpi", "Fleet")
# The prefix of the SCPI keys of parameters.
SCPI_NAMESPACE = "Scpi"
# The prefix of the fleet keys of parameters (implemented in attribute and
# field sections; reserved in method and broadcast sections and the define).
FLEET_NAMESPACE = "Fleet"
MAX_FLEET_RATE_HZ = 1000
# The prefix of the hardware-binding keys (HW_KEYS, below).
HW_NAMESPACE = "Hw"

DEFAULT_MAX_SIZE = {"string": 64, "bytes": 256}
DEFAULT_MAX_LENGTH = 16
SIZE_LIMIT = 65536

_APPLIES_WORDS = {
    NUMERIC: "integer and floating-point attributes (and arrays of them)",
    SIZED: "String and ByteBuffer attributes",
    ARRAY: "array attributes",
    ENUM: "enumeration attributes",
}

_GROUP_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


def _in_namespace(key: str, ns: str) -> bool:
    return key.startswith(ns) and (len(key) == len(ns) or key[len(ns)].isupper())


def reserved_namespace(key: str) -> Optional[str]:
    for ns in RESERVED_NAMESPACES:
        if _in_namespace(key, ns):
            return ns
    return None


def inheritable(key: str) -> bool:
    """Whether a key written on a struct attribute applies to its fields;
    every other key belongs to leaves."""
    return key in KEYS and KEYS[key].inheritable


@dataclass
class Section:
    """The deployment of one attribute, or of one field of a struct."""

    loc: Location
    name: str
    props: Dict[str, S.DProperty] = field(default_factory=dict)
    fields: Dict[str, "Section"] = field(default_factory=dict)
    used: bool = False


def _props(items, owner: str, diag: Diagnostics, allow_fields: bool,
           section: Section, keys: Optional[Dict[str, Key]] = None) -> None:
    """The keys of one section; `keys` is the table it takes (KEYS when
    None: an attribute or field section)."""
    if keys is None:
        keys = KEYS
    for item in items:
        if isinstance(item, S.DSection):
            if not allow_fields or item.kind != "field" or item.name is None:
                expected = "'field NAME { ... }' or a key" if allow_fields else "a key"
                raise GenError(item.loc, f"found section '{item.kind}' in {owner}, "
                                         f"expected {expected}")
            if item.name in section.fields:
                raise GenError(item.loc, f"duplicate section 'field {item.name}' "
                                         f"in {owner}")
            sub = Section(item.loc, item.name)
            _props(item.items, f"field '{item.name}' of {owner}", diag, True, sub)
            section.fields[item.name] = sub
            continue
        if item.key in section.props:
            raise GenError(item.loc, f"duplicate key '{item.key}' in {owner}")
        if item.key in HW_KEYS:
            if not allow_fields:
                raise GenError(item.loc, f"'{item.key}' does not apply to {owner}: "
                                         "hardware bindings belong to attributes "
                                         "and their fields")
            section.props[item.key] = item
            continue
        if _in_namespace(item.key, HW_NAMESPACE):
            close = difflib.get_close_matches(item.key, list(HW_KEYS), n=1)
            hint = (f"; did you mean '{close[0]}'?" if close else
                    ", expected one of " + ", ".join(HW_KEYS))
            raise GenError(item.loc, f"unknown hardware binding key '{item.key}' "
                                     f"in {owner}{hint}")
        if (item.key not in keys and (allow_fields or keys is METHOD_KEYS)
                and _in_namespace(item.key, SCPI_NAMESPACE)):
            scpi = [k for k in keys if _in_namespace(k, SCPI_NAMESPACE)]
            close = difflib.get_close_matches(item.key, scpi, n=1)
            hint = (f"; did you mean '{close[0]}'?" if close else
                    ", expected one of " + ", ".join(scpi))
            raise GenError(item.loc, f"unknown SCPI key '{item.key}' in {owner}{hint}")
        if (item.key not in keys and allow_fields
                and _in_namespace(item.key, FLEET_NAMESPACE)):
            fleet = [k for k in keys if _in_namespace(k, FLEET_NAMESPACE)]
            close = difflib.get_close_matches(item.key, fleet, n=1)
            hint = (f"; did you mean '{close[0]}'?" if close else
                    ", expected one of " + ", ".join(fleet))
            raise GenError(item.loc, f"unknown fleet key '{item.key}' in {owner}{hint}")
        if item.key not in keys:
            ns = reserved_namespace(item.key)
            if ns is None:
                expected = ("expected one of " + ", ".join(keys) if keys else
                            "expected a key of a reserved namespace ("
                            + ", ".join(RESERVED_NAMESPACES) + ")")
                raise GenError(item.loc, f"unknown key '{item.key}' in {owner}, "
                                         f"{expected}")
            diag.warn(item.loc, f"key '{item.key}' belongs to the reserved "
                                f"namespace '{ns}' and is not implemented yet; ignored")
            continue
        section.props[item.key] = item


def read(fdepl: S.FdeplFile, interface_fqn: Optional[str], interfaces: Dict[str, Interface],
         diag: Diagnostics) -> Tuple[Interface, Dict[str, Section]]:
    """Pick the interface the deployment is for and return its attribute
    sections by attribute name. `interface_fqn` is the --interface choice."""
    defines = []
    for d in fdepl.defines:
        if d.spec != SPEC_NAME:
            raise GenError(d.loc, f"unknown deployment specification '{d.spec}', "
                                  f"expected '{SPEC_NAME}'")
        if d.target_kind != "interface":
            raise GenError(d.loc, f"found deployment for '{d.target_kind}', "
                                  "expected 'interface' (parambus deploys interfaces)")
        if d.target not in interfaces:
            raise GenError(d.target_loc, f"unknown interface '{d.target}'")
        defines.append(d)
    if interface_fqn is not None:
        chosen = [d for d in defines if d.target == interface_fqn]
        if not chosen:
            raise GenError(Location(fdepl.path, 1, 1),
                           f"no deployment for interface '{interface_fqn}'")
    else:
        chosen = defines
        if not chosen:
            raise GenError(Location(fdepl.path, 1, 1), "no 'define "
                           f"{SPEC_NAME} for interface ...' in the deployment")
        if len({d.target for d in chosen}) > 1:
            names = ", ".join(sorted({d.target for d in chosen}))
            raise GenError(chosen[1].loc, f"deployment defines several interfaces "
                                          f"({names}); choose one with --interface")
    if len(chosen) > 1:
        raise GenError(chosen[1].loc, f"second deployment of interface "
                                      f"'{chosen[0].target}' (first at {chosen[0].loc})")
    define = chosen[0]
    itf = interfaces[define.target]
    attrs = {a.name: a for a in itf.all_attributes()}
    methods = {m.name: m for m in itf.all_methods()}
    broadcasts = {b.name for b in itf.all_broadcasts()}
    method_sections: Dict[str, Section] = {}
    sections: Dict[str, Section] = {}
    for item in define.items:
        if isinstance(item, S.DProperty):
            _props([item], f"interface '{itf.fqn}'", diag, False,
                   Section(item.loc, ""), {})
            # only reserved keys get here without an error; nothing is kept
            continue
        owner = f"{item.kind} '{item.name}'"
        if item.kind == "attribute" and item.name is not None:
            if item.name not in attrs:
                raise GenError(item.loc, f"no attribute '{item.name}' in "
                                         f"interface '{itf.fqn}'")
            if item.name in sections:
                raise GenError(item.loc, f"duplicate section 'attribute {item.name}' "
                                         f"(first at {sections[item.name].loc})")
            sec = Section(item.loc, item.name)
            _props(item.items, owner, diag, True, sec)
            sections[item.name] = sec
        elif item.kind == "method" and item.name is not None:
            if item.name not in methods:
                raise GenError(item.loc, f"no method '{item.name}' in "
                                         f"interface '{itf.fqn}'")
            if item.name in method_sections:
                raise GenError(item.loc, f"duplicate section 'method {item.name}' "
                                         f"(first at {method_sections[item.name].loc})")
            sec = Section(item.loc, item.name)
            _props(item.items, owner, diag, False, sec, METHOD_KEYS)
            method_sections[item.name] = sec
        elif item.kind == "broadcast" and item.name is not None:
            if item.name not in broadcasts:
                raise GenError(item.loc, f"no broadcast '{item.name}' in "
                                         f"interface '{itf.fqn}'")
            _props(item.items, owner, diag, False, Section(item.loc, item.name), {})
        else:
            raise GenError(item.loc, f"found section '{item.kind}', expected "
                                     "'attribute NAME', 'method NAME' or "
                                     "'broadcast NAME'")
    _apply_method_keys(itf, method_sections)
    return itf, sections


def _apply_method_keys(itf: Interface, method_sections: Dict[str, Section]) -> None:
    """Give the methods their keys. A section named after a method applies
    to every method of that name (overloads with selectors included)."""
    for m in itf.all_methods():
        m.callable_by = None
        m.scpi_keyword = m.scpi_access = None
        m.scpi_origins = {}
        sec = method_sections.get(m.name)
        if sec is None:
            continue
        prop = sec.props.get("CallableBy")
        if prop is not None:
            m.callable_by = group(prop.value, "CallableBy", f"method '{m.name}'")
        for key in ("ScpiKeyword", "ScpiAccess"):
            prop = sec.props.get(key)
            if prop is None:
                continue
            where = f"method '{m.name}'"
            if key == "ScpiKeyword":
                m.scpi_keyword = string(prop.value, key, where)
            else:
                m.scpi_access = choice(prop.value, METHOD_KEYS[key], where)
            m.scpi_origins[key] = prop.loc


# --- values --------------------------------------------------------------

def _show(v: S.DValue) -> str:
    if v.kind == "string":
        return f'"{shown(v.value)}"'
    if v.kind == "array":
        return "{...}"
    return str(v.value)


def check_applies(key: Key, category: str, is_array: bool, where: str,
                  type_name: str, loc: Location) -> None:
    ok = (key.applies == ANY or
          (key.applies == NUMERIC and category == "numeric") or
          (key.applies == SIZED and category == "sized" and not is_array) or
          (key.applies == ENUM and category == "enum") or
          (key.applies == ARRAY and is_array))
    if not ok:
        raise GenError(loc, f"'{key.name}' does not apply to {where} of type "
                            f"{type_name} (only to {_APPLIES_WORDS[key.applies]})")


def number(v: S.DValue, element: str, key: str, where: str,
           int_range: Optional[Tuple[int, int]] = None):
    """A number in the scalar type `element` ("int32", "double", ...)."""
    if v.kind not in ("int", "float"):
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected a number")
    if element in INT_RANGES:
        if v.kind != "int":
            raise GenError(v.loc, f"'{key}' of {where}: found {v.value}, expected "
                                  f"an integer ({element})")
        lo, hi = int_range or INT_RANGES[element]
        if not lo <= v.value <= hi:
            raise GenError(v.loc, f"'{key}' of {where}: {v.value} out of range "
                                  f"of {element}")
        return v.value
    try:
        value = float(v.value)
    except OverflowError:               # an integer literal beyond a double
        value = math.inf
    if not math.isfinite(value):
        raise GenError(v.loc, f"'{key}' of {where}: the number is out of range of {element}")
    if element == "float" and abs(value) > 3.4028234663852886e38:
        raise GenError(v.loc, f"'{key}' of {where}: {v.value} out of range of float")
    return v.value if v.kind == "int" else value


def boolean(v: S.DValue, key: str, where: str) -> bool:
    if v.kind == "ident" and v.value in ("true", "false"):
        return v.value == "true"
    raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected true or false")


def string(v: S.DValue, key: str, where: str) -> str:
    if v.kind != "string":
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected a "
                              "string in double quotes")
    return v.value


def group(v: S.DValue, key: str, where: str) -> str:
    s = string(v, key, where)
    if not _GROUP_NAME.fullmatch(s):
        raise GenError(v.loc, f"'{key}' of {where}: \"{shown(s)}\" is not a Unix "
                              "group name")
    return s


def choice(v: S.DValue, key: Key, where: str) -> str:
    if v.kind == "ident" and v.value in key.choices:
        return v.value
    raise GenError(v.loc, f"'{key.name}' of {where}: found {_show(v)}, expected "
                          "one of " + ", ".join(key.choices))


def integer(v: S.DValue, key: str, where: str) -> int:
    if v.kind != "int" or not 1 <= v.value <= SIZE_LIMIT:
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected an "
                              f"integer from 1 to {SIZE_LIMIT}")
    return v.value


def _number(v: S.DValue, key: str, where: str, ok, expected: str) -> float:
    """A finite number for which ok(x) holds, or an error naming what was expected."""
    if v.kind in ("int", "float"):
        try:
            x = float(v.value)
        except OverflowError:
            x = math.inf
        if math.isfinite(x) and ok(x):
            return x
    raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected {expected}")


def deadband(v: S.DValue, key: str, where: str) -> float:
    """A fleet deadband: a finite number, zero or more."""
    return _number(v, key, where, lambda x: x >= 0, "a number, zero or more")


def rate(v: S.DValue, key: str, where: str) -> float:
    """A fleet maximum rate in Hz: above 0, at most MAX_FLEET_RATE_HZ."""
    return _number(v, key, where, lambda x: 0 < x <= MAX_FLEET_RATE_HZ,
                   f"a number above 0 and at most {MAX_FLEET_RATE_HZ} (Hz)")


def status_bit(v: S.DValue, key: str, where: str) -> int:
    """A bit of a SCPI status register a parameter may drive: 0 to 12 and
    14 (SCPI-99 9.3: 13 is the INSTrument summary, 15 is never used)."""
    if v.kind != "int" or not (0 <= v.value <= 12 or v.value == 14):
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected a status "
                              "register bit: 0 to 12, or 14")
    return v.value


def scalar_value(v: S.DValue, element: str, enum: Optional[EnumType], key: str,
                 where: str, int_range=None):
    """A value of one element of a parameter."""
    if element == "bool":
        return boolean(v, key, where)
    if element == "string":
        return string(v, key, where)
    if element == "bytes":
        s = string(v, key, where)
        if not re.fullmatch(r"(?:[0-9a-fA-F]{2})*", s):
            raise GenError(v.loc, f"'{key}' of {where}: \"{shown(s)}\" is not hexadecimal "
                                  "bytes (two digits per byte)")
        return bytes.fromhex(s)
    if element == "enum":
        assert enum is not None
        if v.kind in ("ident", "string"):
            for e in enum.enumerators:
                if e.name == v.value:
                    return EnumValue(enum, e.name, e.value)
        labels = ", ".join(e.name for e in enum.enumerators)
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected an "
                              f"enumerator of {enum.fqn} ({labels})")
    return number(v, element, key, where, int_range)


def value(v: S.DValue, element: str, is_array: bool, enum: Optional[EnumType],
          key: str, where: str, int_range=None):
    if is_array:
        if v.kind != "array":
            raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected "
                                  "an array '{a, b, ...}'")
        return [scalar_value(i, element, enum, key, where, int_range) for i in v.value]
    return scalar_value(v, element, enum, key, where, int_range)


# --- hardware bindings ---------------------------------------------------
#
# `HwBinding = KIND` in an attribute or field section binds that parameter to
# a device; the other Hw keys configure the binding. Each key applies to some
# kinds only, has a default or is required, and is converted by a function
# of (value, key name, where). HW_KEYS is in the order of the spec's table,
# which is also the order of the compiled schema's `hw-*` keys.

GPIO_OUTPUT = "gpio_output"
GPIO_INPUT = "gpio_input"
I2C_REGISTER = "i2c_register"
PWM_DUTY = "pwm_duty"
HW_KINDS = (GPIO_OUTPUT, GPIO_INPUT, I2C_REGISTER, PWM_DUTY)
_GPIO = (GPIO_OUTPUT, GPIO_INPUT)
_SCALED = (I2C_REGISTER, PWM_DUTY)

MAX_DEVICE_BYTES = 255
MAX_LINE_NAME_BYTES = 31        # the kernel's GPIO_MAX_NAME_SIZE, less the NUL
MAX_LINE_OFFSET = 4095
MAX_RATE_HZ = 1000


def article(kind: str) -> str:
    """'a gpio_output', 'an i2c_register'."""
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _and(words) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _text(v: S.DValue, key: str, where: str, what: str, limit: int) -> str:
    s = string(v, key, where)
    if not s:
        raise GenError(v.loc, f"'{key}' of {where}: the {what} is empty")
    size = len(s.encode("utf-8"))
    if size > limit:
        raise GenError(v.loc, f"'{key}' of {where}: the {what} is {size} bytes "
                              f"long, above the limit of {limit}")
    if any(unicodedata.category(c) == "Cc" for c in s):
        raise GenError(v.loc, f"'{key}' of {where}: the {what} \"{shown(s)}\" "
                              "contains a control character")
    return s


def _hw_device(v: S.DValue, key: str, where: str) -> str:
    return _text(v, key, where, "device name", MAX_DEVICE_BYTES)


def _hw_line(v: S.DValue, key: str, where: str):
    if v.kind == "string":
        return _text(v, key, where, "line name", MAX_LINE_NAME_BYTES)
    if v.kind == "int" and 0 <= v.value <= MAX_LINE_OFFSET:
        return v.value
    raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected a line "
                          "name in double quotes or a line offset from 0 to "
                          f"{MAX_LINE_OFFSET}")


def _hw_boolean(v: S.DValue, key: str, where: str) -> bool:
    return boolean(v, key, where)


def _hw_choice(*choices: str) -> Callable:
    def convert(v: S.DValue, key: str, where: str) -> str:
        if v.kind == "ident" and v.value in choices:
            return v.value
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected "
                              "one of " + ", ".join(choices))
    return convert


def _hw_integer(lo: int, hi: int) -> Callable:
    def convert(v: S.DValue, key: str, where: str) -> int:
        if v.kind == "int" and lo <= v.value <= hi:
            return v.value
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected an "
                              f"integer from {lo} to {hi}")
    return convert


def _hw_width(v: S.DValue, key: str, where: str) -> int:
    if v.kind == "int" and v.value in (8, 16, 32):
        return v.value
    raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected 8, 16 "
                          "or 32 (bits)")


def _hw_number(accept: Callable[[float], bool], expected: str) -> Callable:
    """A number that a C double holds exactly as written (finite), kept as a
    float."""
    def convert(v: S.DValue, key: str, where: str) -> float:
        if v.kind in ("int", "float"):
            try:
                x = float(v.value)
            except OverflowError:       # an integer literal beyond a double
                x = math.inf
            if math.isfinite(x) and accept(x):
                return x
        raise GenError(v.loc, f"'{key}' of {where}: found {_show(v)}, expected "
                              f"{expected}")
    return convert


@dataclass(frozen=True)
class HwKey:
    name: str                       # "HwLine"
    attr: str                       # the model.HwBinding field: "line"
    kinds: Tuple[str, ...]          # the binding kinds it applies to
    convert: Callable               # (DValue, key, where) -> value
    required: bool = False
    default: object = None          # when not required and not written


HW_KEYS: Dict[str, HwKey] = {k.name: k for k in (
    HwKey("HwBinding", "kind", HW_KINDS, _hw_choice(*HW_KINDS), required=True),
    HwKey("HwDevice", "device", HW_KINDS, _hw_device, required=True),
    HwKey("HwLine", "line", _GPIO, _hw_line, required=True),
    HwKey("HwActiveLow", "active_low", _GPIO, _hw_boolean, default=False),
    HwKey("HwBias", "bias", _GPIO,
          _hw_choice("as_is", "disabled", "pull_up", "pull_down"), default="as_is"),
    HwKey("HwDrive", "drive", (GPIO_OUTPUT,),
          _hw_choice("push_pull", "open_drain", "open_source"), default="push_pull"),
    HwKey("HwEdges", "edges", (GPIO_INPUT,),
          _hw_choice("both", "rising", "falling"), default="both"),
    HwKey("HwDebounceUs", "debounce_us", (GPIO_INPUT,), _hw_integer(0, 1000000),
          default=0),
    HwKey("HwAddress", "address", (I2C_REGISTER,), _hw_integer(0, 0x3ff),
          required=True),
    HwKey("HwRegister", "register", (I2C_REGISTER,), _hw_integer(0, 255),
          required=True),
    HwKey("HwWidth", "width", (I2C_REGISTER,), _hw_width, default=8),
    HwKey("HwByteOrder", "byte_order", (I2C_REGISTER,), _hw_choice("big", "little"),
          default="big"),
    HwKey("HwSigned", "signed", (I2C_REGISTER,), _hw_boolean, default=False),
    HwKey("HwRateHz", "rate_hz", (I2C_REGISTER,),
          _hw_number(lambda x: 0 < x <= MAX_RATE_HZ,
                     f"a number above 0 and at most {MAX_RATE_HZ}"), default=10.0),
    HwKey("HwChannel", "channel", (PWM_DUTY,), _hw_integer(0, 1023), default=0),
    HwKey("HwPeriodNs", "period_ns", (PWM_DUTY,), _hw_integer(1, 10**12),
          required=True),
    HwKey("HwPolarity", "polarity", (PWM_DUTY,), _hw_choice("normal", "inversed"),
          default="normal"),
    HwKey("HwScale", "scale", _SCALED,
          _hw_number(lambda x: x != 0, "a non-zero number"), default=1.0),
    HwKey("HwOffset", "offset", _SCALED,
          _hw_number(lambda x: True, "a number"), default=0.0),
)}


def hw_binding(props: Dict[str, S.DProperty], where: str) -> Optional[HwBinding]:
    """The hardware binding that the Hw keys of one leaf's section describe
    (None without Hw keys). Checks which keys the binding's kind takes and
    converts their values; the type rules are for checks.py."""
    written = [prop for key, prop in props.items() if key in HW_KEYS]
    if not written:
        return None
    kind_prop = props.get("HwBinding")
    if kind_prop is None:
        first = written[0]
        raise GenError(first.loc, f"'{first.key}' of {where} needs 'HwBinding' in "
                                  "the same section (" + ", ".join(HW_KINDS) + ")")
    kind = HW_KEYS["HwBinding"].convert(kind_prop.value, "HwBinding", where)
    binding = HwBinding(kind=kind, loc=kind_prop.loc)
    missing = []
    for key in HW_KEYS.values():
        if key.name == "HwBinding":
            continue
        prop = props.get(key.name)
        if kind not in key.kinds:
            if prop is not None:
                raise GenError(prop.loc, f"'{key.name}' does not apply to "
                                         f"{article(kind)} binding (only to "
                                         f"{_and(key.kinds)})")
            continue
        if prop is not None:
            setattr(binding, key.attr, key.convert(prop.value, key.name, where))
        elif key.required:
            missing.append(f"'{key.name}'")
        else:
            setattr(binding, key.attr, key.default)
    if missing:
        raise GenError(kind_prop.loc, f"'HwBinding' of {where}: {article(kind)} "
                                      f"binding needs {_and(missing)}")
    return binding
