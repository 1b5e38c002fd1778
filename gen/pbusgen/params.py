"""Resolver, second half: the interface's attributes -> parameters.

Each attribute of the chosen interface, inherited ones first, becomes one or
more parameters in declaration order: a scalar attribute one parameter, a
struct attribute one per leaf field (`attr.field.sub`, inherited fields
first). The deployment's keys are applied here, hardware bindings included;
how they fit together (default within limits, binding on a suitable type,
...) is for checks.py. The model built here carries every name the back ends
print, C identifiers included (naming.py).
"""

from typing import Dict, List, Optional, Tuple

from . import deep, deployment as D
from .errors import Diagnostics, GenError, Location
from .loader import Sources
from .model import (INT_RANGES, ArrayType, Attribute, BasicType, CNames,
                    EnumType, IntegerType, Interface, JavaComponent, JavaNames,
                    JavaRecord, JavaStructAccess, MapType, Model, Parameter,
                    StructType, Type, UnionType, unalias)
from .naming import (java_constant, java_lower_camel, java_package, java_upper_camel,
                     param_c_name, snake)
from .resolver import Resolver

_NUMERIC = set(INT_RANGES) | {"float", "double"}
_ARRAY_ELEMENTS = _NUMERIC | {"bool"}


class Unmappable(Exception):
    """Why a type cannot be a parameter."""


def _scalar(t: Type) -> Tuple[str, Optional[EnumType], Optional[Tuple[int, int]]]:
    """(token, enum, integer range) of a type that is one parameter value."""
    u = unalias(t)
    if isinstance(u, BasicType):
        if u.token == "undefined":
            raise Unmappable("'undefined' is Franca's placeholder for a type not "
                             "given, it has no wire or storage representation")
        return u.token, None, None
    if isinstance(u, IntegerType):
        lo, hi = INT_RANGES["int64"]
        for bound in (u.lower, u.upper):
            if bound is not None and not lo <= bound <= hi:
                raise Unmappable(f"bound {bound} is outside int64, the type of the "
                                 "parameter")
        return "int64", None, (u.lower, u.upper)
    if isinstance(u, EnumType):
        return "enum", u, None
    if isinstance(u, UnionType):
        raise Unmappable(f"union '{u.fqn}' has no fixed layout (a parameter "
                         "holds one type)")
    if isinstance(u, MapType):
        raise Unmappable(f"map '{u.fqn}' has no fixed size")
    raise AssertionError(u)


def _array_element(t: ArrayType):
    e = unalias(t.element)
    if isinstance(e, StructType):
        raise Unmappable(f"arrays of structs ('{e.fqn}') are not supported")
    if isinstance(e, ArrayType):
        raise Unmappable("arrays of arrays are not supported")
    token, enum, rng = _scalar(e)
    if token in ("string", "bytes"):
        raise Unmappable(f"arrays of {e} are not supported (array elements "
                         "must have a fixed size)")
    if token == "enum":
        raise Unmappable(f"arrays of enumerations ('{e}') are not supported by "
                         "the schema format")
    return token, rng


class _Builder:
    def __init__(self, interface: Interface, sections: Dict[str, D.Section],
                 diag: Diagnostics):
        self.interface = interface
        self.sections = sections
        self.diag = diag
        self.params: List[Parameter] = []

    def build(self) -> List[Parameter]:
        for attr in self.interface.all_attributes():
            deep.at(attr.loc, f"attribute '{attr.name}'")
            sec = self.sections.get(attr.name)
            if sec is not None:
                sec.used = True
            self._node(attr, attr.type, attr.name, sec, {}, attr.desc, attr.loc, [])
        return self.params

    def _fail(self, attr: Attribute, name: str, t: Type, why: str):
        what = f"attribute '{attr.name}'"
        if name != attr.name:
            what += f" (field '{name[len(attr.name) + 1:]}')"
        raise GenError(attr.loc, f"{what} of type {t} cannot be a parameter: {why}")

    def _node(self, attr: Attribute, t: Type, name: str, sec: Optional[D.Section],
              inherited: Dict[str, Tuple[str, object]], desc: Optional[str],
              loc: Location, stack: List[StructType]) -> None:
        u = unalias(t)
        if isinstance(u, StructType):
            root = u
            while root.base is not None and not root.polymorphic:
                root = root.base
            if root is u and u.polymorphic:
                self._fail(attr, name, t, f"struct '{u.fqn}' is polymorphic (its "
                                          "fields depend on the value)")
            if root.polymorphic:        # Franca: derived from a polymorphic one
                self._fail(attr, name, t, f"struct '{u.fqn}' extends polymorphic "
                                          f"struct '{root.fqn}' (its fields depend "
                                          "on the value)")
            if u in stack:
                self._fail(attr, name, t, f"struct '{u.fqn}' contains itself")
            if not u.fields:
                self._fail(attr, name, t, f"struct '{u.fqn}' has no fields")
            inherit = dict(inherited)
            if sec is not None:
                for key, prop in sec.props.items():
                    if not D.inheritable(key):
                        raise GenError(prop.loc, f"'{key}' applies to the fields of "
                                       f"struct '{name}'; put it in a 'field NAME "
                                       "{ ... }' section")
                    inherit[key] = prop
                names = {f.name for f in u.fields}
                for fname, fsec in sec.fields.items():
                    if fname not in names:
                        raise GenError(fsec.loc, f"struct '{name}' ({u.fqn}) has no "
                                                 f"field '{fname}'")
            for f in u.fields:
                fsec = sec.fields.get(f.name) if sec is not None else None
                self._node(attr, f.type, f"{name}.{f.name}", fsec, inherit,
                           f.desc or desc, f.loc, stack + [u])
            return
        if sec is not None and sec.fields:
            first = next(iter(sec.fields.values()))
            raise GenError(first.loc, f"'field' sections apply to structs; "
                                      f"'{name}' is of type {t}")
        try:
            if isinstance(u, ArrayType):
                element, rng = _array_element(u)
                enum = None
                is_array = True
            else:
                element, enum, rng = _scalar(u)
                is_array = False
        except Unmappable as exc:
            self._fail(attr, name, t, str(exc))
        props = dict(inherited)
        if sec is not None:
            props.update(sec.props)
        self.params.append(self._param(attr, t, name, element, is_array, enum, rng,
                                       props, desc, loc))

    def _param(self, attr, t, name, element, is_array, enum, rng, props, desc, loc):
        p = Parameter(index=len(self.params), name=name,
                      type=element + "[]" if is_array else element,
                      element=element, is_array=is_array, enum=enum,
                      readonly=attr.readonly, no_read=attr.no_read,
                      no_subscriptions=attr.no_subscriptions, desc=desc,
                      attribute=attr, franca_type=t, loc=loc)
        if element in D.DEFAULT_MAX_SIZE and not is_array:
            p.size = D.DEFAULT_MAX_SIZE[element]
        if is_array:
            p.count = D.DEFAULT_MAX_LENGTH
        if rng is not None:
            p.min, p.max = rng
            p.origins["Minimum"] = p.origins["Maximum"] = attr.loc
        category = ("numeric" if element in _NUMERIC else
                    "sized" if element in ("string", "bytes") else
                    "enum" if element == "enum" else "other")
        where = f"'{name}'"
        for key in D.KEYS:                  # table order, so errors are stable
            prop = props.get(key)
            if prop is None:
                continue
            spec = D.KEYS[key]
            D.check_applies(spec, category, is_array, f"'{name}'", str(t), prop.loc)
            v = prop.value
            p.origins[key] = prop.loc
            if key == "Unit":
                p.unit = D.string(v, key, where)
            elif key == "Minimum":
                value = D.number(v, element, key, where)
                p.min = value if p.min is None else max(p.min, value)
            elif key == "Maximum":
                value = D.number(v, element, key, where)
                p.max = value if p.max is None else min(p.max, value)
            elif key == "Step":
                p.step = D.number(v, element, key, where)
            elif key == "Default":
                p.default = D.value(v, element, is_array, enum, key, where)
            elif key == "Persistent":
                p.persistent = D.boolean(v, key, where)
            elif key == "WritableBy":
                p.group = D.group(v, key, where)
            elif key == "UpdateClass":
                p.update_class = D.choice(v, spec, where)
            elif key == "MaxSize":
                p.size = D.integer(v, key, where)
            elif key == "MaxLength":
                p.count = D.integer(v, key, where)
            elif key == "Deadband":
                p.deadband = D.deadband(v, key, where)
            elif key == "MaxRateHz":
                p.max_rate_hz = D.rate(v, key, where)
            elif key == "ScpiKeyword":
                p.scpi_keyword = D.string(v, key, where)
            elif key == "ScpiAccess":
                p.scpi_access = D.choice(v, spec, where)
            elif key == "ScpiEnum":
                p.scpi_enum = D.string(v, key, where)
            elif key in ("ScpiQuestionable", "ScpiOperation"):
                p.scpi_status[key] = D.status_bit(v, key, where)
            elif key == "ScpiQuestionableLevel":
                p.scpi_questionable_level = D.choice(v, spec, where)
            elif key in ("FleetPublish", "FleetRetain", "FleetCommand"):
                p.fleet_keys[key] = D.boolean(v, key, where)
            elif key == "FleetTopic":
                p.fleet_keys[key] = D.string(v, key, where)
            elif key == "FleetDeadband":
                p.fleet_keys[key] = D.deadband(v, key, where)
            elif key == "FleetMaxRateHz":
                p.fleet_keys[key] = D.rate(v, key, where)
            else:
                raise AssertionError(key)
        p.hw = D.hw_binding(props, where)
        for key in D.HW_KEYS:
            if key in props:
                p.origins[key] = props[key].loc
        return p


def _choose_interface(resolver: Resolver, sources: Sources,
                      interface_fqn: Optional[str]) -> Interface:
    if interface_fqn is not None:
        if interface_fqn not in resolver.interfaces:
            raise GenError(None, f"unknown interface '{interface_fqn}'")
        return resolver.interfaces[interface_fqn]
    main = sources.fidl_files[0]
    found = [resolver.interfaces[f"{main.package}.{i.name}"] for i in main.interfaces]
    if not found:
        raise GenError(Location(main.path, 1, 1), "no interface in this file; "
                       "parambus compiles the attributes of an interface")
    if len(found) > 1:
        names = ", ".join(i.fqn for i in found)
        raise GenError(Location(main.path, 1, 1), f"several interfaces ({names}); "
                       "choose one with --interface")
    return found[0]


def _c_names(prefix: str) -> CNames:
    up = prefix.upper()
    return CNames(prefix=prefix, upper=up, guard=f"{up}_PBUS_H",
                  schema_hash=f"{up}_SCHEMA_HASH", param_count=f"{up}_PARAM_COUNT",
                  schema_text=f"{prefix}_schema_text",
                  schema_length=f"{prefix}_schema_length",
                  index_enum=f"{prefix}_param_index", handle=prefix,
                  open=f"{prefix}_open", close=f"{prefix}_close",
                  table=f"{prefix}_table", param=f"{prefix}_param",
                  describe_open_error=f"{prefix}_describe_open_error")


def build_model(resolver: Resolver, sources: Sources, interface_fqn: Optional[str],
                prefix: Optional[str], diag: Diagnostics,
                with_parameters: bool = True) -> Model:
    """The whole resolved model for one interface. Without parameters (only
    the methods and broadcasts are generated) the attributes are left
    alone, so that an interface whose attributes are no parameters (a
    union, an array of structs) still has its methods compiled."""
    if sources.fdepl is not None:
        itf, sections = D.read(sources.fdepl, interface_fqn, resolver.interfaces, diag)
    else:
        itf, sections = _choose_interface(resolver, sources, interface_fqn), {}
    params = _Builder(itf, sections, diag).build() if with_parameters else []

    c = _c_names(prefix if prefix is not None else snake(itf.name))
    enums: List[EnumType] = []
    for p in params:
        p.c_name = param_c_name(p.name)
        p.c_index = f"{c.upper}_{p.c_name.upper()}"
        p.c_getter = f"{c.prefix}_get_{p.c_name}"
        p.c_setter = "" if p.readonly else f"{c.prefix}_set_{p.c_name}"
        # A read-only parameter is written by the instrument's own code
        # (PBUS_OPEN_PROVIDER): its typed setter says so by its name.
        p.c_publisher = f"{c.prefix}_publish_{p.c_name}" if p.readonly else ""
        if p.is_array:
            p.c_capacity = f"{p.c_index}_MAX_COUNT"
        elif p.size is not None:
            p.c_capacity = f"{p.c_index}_MAX_SIZE"
        if p.enum is not None and p.enum not in enums:
            enums.append(p.enum)
    for e in enums:
        e.c_type = f"{c.prefix}_{snake(e.name)}"
        e.c_guard = f"{c.upper}_TYPE_{snake(e.name).upper()}_DEFINED"
        for en in e.enumerators:
            en.c_name = f"{e.c_type.upper()}_{en.name.upper()}"
    return Model(interface=itf, parameters=params, enums=enums,
                 source_files=sources.file_names, c=c, types=dict(resolver.types),
                 constants=dict(resolver.constants),
                 interfaces=dict(resolver.interfaces),
                 type_collections=dict(resolver.type_collections))


def java_names(model: Model, package: Optional[str] = None) -> None:
    """Name the Java class of @model (the back end emit_java prints them):
    model.java, each parameter's java_* and each used enumeration's
    java_name. @package is --java-package, default the Franca package in
    lower case. Whether the names make valid Java is checks.check_java()'s."""
    itf = model.interface
    pkg = package if package is not None else java_package(itf.package)
    for p in model.parameters:
        p.java_index = java_constant(p.name)
        camel = java_upper_camel(p.name)
        p.java_getter = f"get{camel}"
        p.java_setter = "" if p.readonly else f"set{camel}"
        if p.is_array:
            p.java_capacity = f"{p.java_index}_MAX_COUNT"
        elif p.size is not None:
            p.java_capacity = f"{p.java_index}_MAX_SIZE"
    for e in model.enums:
        e.java_name = e.name

    # Struct attributes: their leaves are consecutive parameters in the
    # order of the struct's fields, depth first (_Builder._node), which is
    # also the order of the record components.
    records: Dict[int, JavaRecord] = {}
    ordered: List[JavaRecord] = []

    def record(struct: StructType, leaves) -> JavaRecord:
        rec = records.get(id(struct))
        fresh = rec is None
        if fresh:
            rec = JavaRecord(struct=struct, name=struct.name, components=[])
            records[id(struct)] = rec
            ordered.append(rec)
        for i, f in enumerate(struct.fields):
            u = unalias(f.type)
            if isinstance(u, StructType):
                inner = record(u, leaves)
                if fresh:
                    rec.components.append(JavaComponent(
                        name=java_lower_camel(f.name), field=f, record=inner))
            else:
                leaf = next(leaves)
                if fresh:
                    rec.components.append(JavaComponent(
                        name=java_lower_camel(f.name), field=f, leaf=leaf))
        return rec

    by_attribute: Dict[int, List[Parameter]] = {}
    for p in model.parameters:
        by_attribute.setdefault(id(p.attribute), []).append(p)
    access: List[JavaStructAccess] = []
    for attr in itf.all_attributes():
        u = unalias(attr.type)
        if not isinstance(u, StructType):
            continue
        leaves = by_attribute.get(id(attr), [])
        rec = record(u, iter(leaves))
        camel = java_upper_camel(attr.name)
        access.append(JavaStructAccess(
            attribute=attr, record=rec, parameters=leaves, getter=f"get{camel}",
            setter="" if attr.readonly else f"set{camel}"))
    model.java = JavaNames(
        package=pkg, class_name=itf.name,
        path="/".join(pkg.split(".") + [f"{itf.name}.java"]) if pkg else f"{itf.name}.java",
        records=ordered, struct_access=access)
