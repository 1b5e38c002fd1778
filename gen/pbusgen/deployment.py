"""The parambus deployment specification, `parambus.deployment`.

The keys a .fdepl may set are listed in one table, KEYS: adding a key is one
line here (plus the code in params.py that gives it a meaning). A key that
is not in the table is an error, unless its name starts with one of the
RESERVED_NAMESPACES, which are kept for keys to come (SCPI keywords,
hardware bindings, fleet topics): those are accepted, warned about, and
ignored. docs/deployment-spec.md describes every key.

This module checks the structure of the file (which interface, which
sections, which keys) and converts values; params.py applies them to
parameters and checks.py checks how they fit together.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

from . import syntax as S
from .errors import Diagnostics, GenError, Location, shown
from .model import INT_RANGES, EnumType, EnumValue, Interface

SPEC_NAME = "parambus.deployment"

# What a key's value is written as.
STRING = "string"
NUMBER = "number"           # a number in the parameter's (element) type
INTEGER = "integer"         # a plain integer, 1..65536
BOOLEAN = "boolean"
CHOICE = "choice"
VALUE = "value"             # a value of the parameter

# Which parameters a key applies to.
NUMERIC = "numeric"         # integer and floating-point types, and arrays of them
ANY = "any"
SIZED = "sized"             # String, ByteBuffer
ARRAY = "array"             # arrays


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
)}

# Key name prefixes reserved for later parts of parambus.
RESERVED_NAMESPACES = ("Scpi", "Hw", "Fleet")

DEFAULT_MAX_SIZE = {"string": 64, "bytes": 256}
DEFAULT_MAX_LENGTH = 16
SIZE_LIMIT = 65536

_APPLIES_WORDS = {
    NUMERIC: "integer and floating-point attributes (and arrays of them)",
    SIZED: "String and ByteBuffer attributes",
    ARRAY: "array attributes",
}

_GROUP_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


def reserved_namespace(key: str) -> Optional[str]:
    for ns in RESERVED_NAMESPACES:
        if key.startswith(ns) and (len(key) == len(ns) or key[len(ns)].isupper()):
            return ns
    return None


@dataclass
class Section:
    """The deployment of one attribute, or of one field of a struct."""

    loc: Location
    name: str
    props: Dict[str, S.DProperty] = field(default_factory=dict)
    fields: Dict[str, "Section"] = field(default_factory=dict)
    used: bool = False


def _props(items, owner: str, diag: Diagnostics, allow_fields: bool,
           section: Section) -> None:
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
        if item.key not in KEYS:
            ns = reserved_namespace(item.key)
            if ns is None:
                raise GenError(item.loc, f"unknown key '{item.key}' in {owner}, "
                                         "expected one of " + ", ".join(KEYS))
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
    methods = {m.name for m in itf.methods}
    broadcasts = {b.name for b in itf.broadcasts}
    sections: Dict[str, Section] = {}
    for item in define.items:
        if isinstance(item, S.DProperty):
            _props([item], f"interface '{itf.fqn}'", diag, False,
                   Section(item.loc, ""))
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
        elif item.kind in ("method", "broadcast") and item.name is not None:
            known = methods if item.kind == "method" else broadcasts
            if item.name not in known:
                raise GenError(item.loc, f"no {item.kind} '{item.name}' in "
                                         f"interface '{itf.fqn}'")
            _props(item.items, owner, diag, False, Section(item.loc, item.name))
        else:
            raise GenError(item.loc, f"found section '{item.kind}', expected "
                                     "'attribute NAME', 'method NAME' or "
                                     "'broadcast NAME'")
    return itf, sections


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
    value = float(v.value)
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
