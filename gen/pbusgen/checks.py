"""Checks on the resolved model: how the pieces fit together.

Run after the model is built and before any back end; the first problem
found is raised as a GenError naming the file, line and column of the
deployment key (or Franca element) at fault. A hardware binding's problems
with its parameter (type, readonly, a line bound twice) are reported at its
`HwBinding` key.
"""

import re
from typing import Dict

from . import deployment as D, fleet, scpi
from .errors import GenError, shown
from .model import INT_RANGES, EnumValue, Model, Parameter
from .naming import (JAVA_OBJECT_METHODS, JAVA_TYPE_RESTRICTED, JAVA_USED_TYPES,
                     is_java_identifier)

MAX_PARAMS = 65535
MAX_NAME_BYTES = 127
_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _loc(p: Parameter, *keys):
    for k in keys:
        if k in p.origins:
            return p.origins[k]
    return p.loc


def _check_param(p: Parameter) -> None:
    name = p.name
    for seg in name.split("."):
        if not _SEGMENT.fullmatch(seg):
            raise GenError(p.loc, f"parameter name '{name}' has a segment '{seg}' "
                                  "that is not [A-Za-z_][A-Za-z0-9_]*")
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise GenError(p.loc, f"parameter name '{name}' is {size} bytes long, "
                              f"above the limit of {MAX_NAME_BYTES}")

    if p.min is not None and p.max is not None and p.min > p.max:
        raise GenError(_loc(p, "Minimum"), f"min {_fmt(p.min)} above max "
                                           f"{_fmt(p.max)} for '{name}'")
    if p.step is not None and p.step <= 0:
        raise GenError(_loc(p, "Step"), f"step {_fmt(p.step)} is not positive "
                                        f"for '{name}'")
    if p.readonly and p.persistent:
        raise GenError(_loc(p, "Persistent"), f"'Persistent' on readonly attribute "
                       f"'{p.attribute.name}': only writable parameters are "
                       "restored at start")
    if p.deadband is not None and (p.is_array or p.element not in _NUMERIC):
        raise GenError(_loc(p, "Deadband"), f"'Deadband' of '{name}': a deadband applies "
                                            f"to numeric scalars, not {p.type}")
    for key, given in (("Deadband", p.deadband), ("MaxRateHz", p.max_rate_hz)):
        if given is not None and (p.no_read or p.no_subscriptions):
            raise GenError(_loc(p, key), f"'{key}' of '{name}': a "
                                         f"{'noRead' if p.no_read else 'noSubscriptions'} "
                                         "attribute has no subscribers")
    if p.readonly and p.group is not None:
        raise GenError(_loc(p, "WritableBy"), f"'WritableBy' on readonly "
                       f"attribute '{p.attribute.name}': nobody may write it")

    if p.default is None:
        return
    dloc = _loc(p, "Default")
    values = p.default if p.is_array else [p.default]
    if p.is_array and len(values) > p.count:
        raise GenError(dloc, f"default has {len(values)} elements, above count "
                             f"{p.count} for '{name}'")
    for v in values:
        if isinstance(v, (bool, EnumValue, str, bytes)):
            continue
        if p.min is not None and v < p.min:
            raise GenError(dloc, f"default {_fmt(v)} below min {_fmt(p.min)} "
                                 f"for '{name}'")
        if p.max is not None and v > p.max:
            raise GenError(dloc, f"default {_fmt(v)} above max {_fmt(p.max)} "
                                 f"for '{name}'")
    if p.element == "string":
        n = len(p.default.encode("utf-8"))
        if n > p.size:
            raise GenError(dloc, f"default is {n} bytes long, above size "
                                 f"{p.size} for '{name}'")
        if "\0" in p.default:
            raise GenError(dloc, f"default of '{name}' contains a NUL character")
    if p.element == "bytes" and len(p.default) > p.size:
        raise GenError(dloc, f"default is {len(p.default)} bytes long, above size "
                             f"{p.size} for '{name}'")


_UNSIGNED = {"uint8", "uint16", "uint32", "uint64"}
_NUMERIC = set(INT_RANGES) | {"float", "double"}
_NEVER_BOUND = {"string": "strings", "bytes": "byte buffers", "enum": "enumerations"}

# Per binding kind: the element types it takes, the same in words, whether
# the parameter must be readonly (else writable), and why.
_HW_TYPES = {
    D.GPIO_OUTPUT: ({"bool"}, "a Boolean attribute", False,
                    "it drives the line from the parameter"),
    D.GPIO_INPUT: ({"bool"} | _UNSIGNED, "a Boolean or unsigned integer (UInt8, "
                   "UInt16, UInt32, UInt64) attribute", True,
                   "the line writes the parameter"),
    D.I2C_REGISTER: (_NUMERIC, "an integer or floating-point attribute", True,
                     "the register writes the parameter"),
    D.PWM_DUTY: (_NUMERIC, "an integer or floating-point attribute", False,
                 "it drives the channel from the parameter"),
}


def _check_hw(p: Parameter) -> None:
    b = p.hw
    name = p.name
    if p.is_array or p.element in _NEVER_BOUND:
        what = "arrays" if p.is_array else _NEVER_BOUND[p.element]
        raise GenError(b.loc, f"'{name}' of type {p.franca_type} cannot be bound to "
                              f"hardware: {what} never are")
    types, words, readonly, why = _HW_TYPES[b.kind]
    kind = D.article(b.kind)
    if p.element not in types:
        raise GenError(b.loc, f"{kind} binding needs {words}; '{name}' is of type "
                              f"{p.franca_type}")
    if readonly and not p.readonly:
        raise GenError(b.loc, f"{kind} binding needs a readonly attribute ({why}); "
                              f"'{name}' is writable")
    if not readonly and p.readonly:
        raise GenError(b.loc, f"{kind} binding needs a writable attribute ({why}); "
                              f"'{name}' is readonly")


def _check_hw_shared(model: Model) -> None:
    """A GPIO line or a PWM channel drives or feeds one parameter; several
    I2C registers may share a device."""
    taken: Dict[tuple, Parameter] = {}
    for p in model.parameters:
        b = p.hw
        if b is None:
            continue
        if b.kind in (D.GPIO_OUTPUT, D.GPIO_INPUT):
            # a name and an offset are never compared: which offset a name
            # has is known only on the running system
            key = ("gpio", b.device, b.line)
            what = (f"GPIO line \"{shown(b.line)}\"" if isinstance(b.line, str)
                    else f"GPIO line offset {b.line}")
        elif b.kind == D.PWM_DUTY:
            key, what = ("pwm", b.device, b.channel), f"PWM channel {b.channel}"
        else:
            continue
        first = taken.get(key)
        if first is not None:
            raise GenError(b.loc, f"{what} of device \"{shown(b.device)}\" is "
                                  f"already bound to '{first.name}' (at "
                                  f"{first.hw.loc}); '{p.name}' cannot bind it too")
        taken[key] = p


def check(model: Model) -> None:
    if len(model.parameters) > MAX_PARAMS:
        raise GenError(model.interface.loc, f"interface '{model.interface.fqn}' has "
                       f"{len(model.parameters)} parameters, above the limit of "
                       f"{MAX_PARAMS}")
    for p in model.parameters:
        _check_param(p)
        if p.hw is not None:
            _check_hw(p)
    _check_hw_shared(model)
    scpi.check(model)
    fleet.check(model)

    # Every C identifier the back end will print must be unique.
    seen: Dict[str, str] = {}

    def claim(ident: str, owner: str, loc) -> None:
        if ident in seen:
            raise GenError(loc, f"C name '{ident}' of {owner} clashes with "
                                f"{seen[ident]}; rename one or use --prefix")
        seen[ident] = owner

    c = model.c
    for ident in (c.schema_hash, c.param_count, c.schema_text, c.schema_length,
                  c.guard, c.index_enum, c.handle, c.open, c.close, c.table, c.param,
                  c.describe_open_error):
        claim(ident, "the generated code", model.interface.loc)
    for p in model.parameters:
        claim(p.c_index, f"parameter '{p.name}'", p.loc)
        claim(p.c_getter, f"parameter '{p.name}'", p.loc)
        if p.c_setter:
            claim(p.c_setter, f"parameter '{p.name}'", p.loc)
        if p.c_publisher:
            claim(p.c_publisher, f"parameter '{p.name}'", p.loc)
        if p.c_capacity:
            claim(p.c_capacity, f"parameter '{p.name}'", p.loc)
    for e in model.enums:
        claim(e.c_type, f"enumeration '{e.fqn}'", e.loc)
        for en in e.enumerators:
            claim(en.c_name, f"enumerator '{e.fqn}.{en.name}'", en.loc)


def check_java(model: Model) -> None:
    """The names of the Java class (params.java_names()) are Java: each a
    valid identifier and no keyword, none shadowing a type the class uses
    or a method of java.lang.Object, and each unique in its namespace
    (constants, methods, nested types, the components of a record, the
    constants of an enum). Run only when the class is generated."""
    j = model.java
    itf = model.interface

    def ident(name: str, owner: str, loc, type_name: bool = False) -> None:
        if not is_java_identifier(name) or (type_name and name in JAVA_TYPE_RESTRICTED):
            raise GenError(loc, f"Java name '{name}' of {owner} is not a Java identifier "
                                "or is a keyword; rename it")

    for seg in j.package.split("."):
        ident(seg, f"package '{j.package}'", itf.loc)
    ident(j.class_name, f"interface '{itf.fqn}'", itf.loc, type_name=True)
    if j.class_name in JAVA_USED_TYPES:
        raise GenError(itf.loc, f"Java class name '{j.class_name}' of interface "
                                f"'{itf.fqn}' is a type the generated class uses; "
                                "rename the interface")

    def namespace(kind: str):
        seen: Dict[str, str] = {}

        def claim(name: str, owner: str, loc) -> None:
            if name in seen:
                raise GenError(loc, f"Java {kind} '{name}' of {owner} clashes with "
                                    f"{seen[name]}; rename one")
            seen[name] = owner
        return claim

    fields = namespace("constant")
    for c in j.constants:
        fields(c, "the generated class", itf.loc)
    methods = namespace("method")
    for m in j.methods:
        methods(m, "the generated class", itf.loc)
    for m in sorted(JAVA_OBJECT_METHODS):
        methods(m, "java.lang.Object", itf.loc)
    for p in model.parameters:
        owner = f"parameter '{p.name}'"
        for name in (p.java_index, p.java_getter, p.java_setter, p.java_capacity):
            if name:
                ident(name, owner, p.loc)
        fields(p.java_index, owner, p.loc)
        if p.java_capacity:
            fields(p.java_capacity, owner, p.loc)
        methods(p.java_getter, owner, p.loc)
        if p.java_setter:
            methods(p.java_setter, owner, p.loc)
    for a in j.struct_access:
        owner = f"struct attribute '{a.attribute.name}'"
        methods(a.getter, owner, a.attribute.loc)
        if a.setter:
            methods(a.setter, owner, a.attribute.loc)

    types = namespace("type name")
    types(j.class_name, "the generated class", itf.loc)
    for name in sorted(JAVA_USED_TYPES):
        types(name, "a type the generated class uses", itf.loc)
    for e in model.enums:
        owner = f"enumeration '{e.fqn}'"
        ident(e.java_name, owner, e.loc, type_name=True)
        types(e.java_name, owner, e.loc)
        constants = namespace("enum constant")
        constants("value", "the enum's own field", e.loc)
        for en in e.enumerators:
            ident(en.name, f"enumerator '{e.fqn}.{en.name}'", en.loc)
            constants(en.name, f"enumerator '{e.fqn}.{en.name}'", en.loc)
    for r in j.records:
        owner = f"struct '{r.struct.fqn}'"
        ident(r.name, owner, r.struct.loc, type_name=True)
        types(r.name, owner, r.struct.loc)
        components = namespace("record component")
        for name in sorted(JAVA_OBJECT_METHODS):
            components(name, "java.lang.Object", r.struct.loc)
        for c in r.components:
            cowner = f"field '{c.field.name}' of struct '{r.struct.fqn}'"
            ident(c.name, cowner, c.field.loc)
            components(c.name, cowner, c.field.loc)
