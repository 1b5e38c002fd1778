"""Methods and broadcasts: what the RPC back end (emit_rpc.py) prints.

Built from the checked model when --rpc-header/--rpc-source/--rpc-types-
source is given: the interface's methods and broadcasts numbered (those of
the base interfaces first), every Franca type their arguments use
(transitively, polymorphic subtypes included) mapped to its C
representation (docs/generator.md, "Methods and broadcasts"), and every C
identifier computed here, once. Names that would clash in C (two Franca
names mangled alike, a C or C++ keyword, a name the generated functions use
for themselves) are an error at the Franca element's file:line:column.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .errors import GenError, Location
from .model import (ArrayType, BasicType, Broadcast, EnumType, IntegerType,
                    MapType, Method, Model, StructType, Type, UnionType, unalias)
from .naming import snake

INT64_MIN, INT64_MAX, UINT64_MAX = -2**63, 2**63 - 1, 2**64 - 1

# Franca basic type -> (kind, C type, put/get suffix, minimal encoded size)
_BASIC = {
    "Boolean": ("bool", "bool", "bool", 1),
    "Int8": ("int", "int8_t", "i8", 1), "UInt8": ("int", "uint8_t", "u8", 1),
    "Int16": ("int", "int16_t", "i16", 2), "UInt16": ("int", "uint16_t", "u16", 2),
    "Int32": ("int", "int32_t", "i32", 4), "UInt32": ("int", "uint32_t", "u32", 4),
    "Int64": ("int", "int64_t", "i64", 8), "UInt64": ("int", "uint64_t", "u64", 8),
    "Float": ("float", "float", "float", 4), "Double": ("double", "double", "double", 8),
    "String": ("string", "char *", "", 4),
    "ByteBuffer": ("bytes", "struct pbus_rpc_bytes", "", 4),
}

# Franca basic type -> its token in the compiled schema
_SCHEMA_BASIC = {
    "Boolean": "bool", "Int8": "int8", "UInt8": "uint8", "Int16": "int16",
    "UInt16": "uint16", "Int32": "int32", "UInt32": "uint32", "Int64": "int64",
    "UInt64": "uint64", "Float": "float", "Double": "double", "String": "string",
    "ByteBuffer": "bytes",
}

# Identifiers a Franca name may not take in the generated C: C11 and C++
# keywords (the header is C++-clean), the names <stdbool.h>, <stdint.h>,
# <stddef.h> and <errno.h> define, and the fixed parameter names of the
# generated functions (an argument of that name would collide with them).
_C_WORDS = set("""
auto break case char const continue default do double else enum extern float for
goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool
_Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
alignas alignof and and_eq asm bitand bitor catch char16_t char32_t class compl
constexpr const_cast decltype delete dynamic_cast explicit export false friend
mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public reinterpret_cast static_assert static_cast template this
thread_local throw true try typeid typename using virtual wchar_t xor xor_eq
bool int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t
ptrdiff_t NULL offsetof errno
""".split())
# Parameters of the generated functions that take arguments, and the names
# of their locals without the '_' they end with (an argument `x` has a
# local `x_`): arguments may not take them.
RESERVED_ARGS = {"client", "server", "caller", "error", "arena", "fn", "userdata",
                 "receivers", "receiver_count", "in", "out", "reply", "result", "user_fn",
                 "broadcast", "local_args", "args", "call", "rd", "srv", "res",
                 "buf", "encoded", "local"}


def fnv1a32(text: str) -> int:
    """pbus_rpc_type_tag(): the 32-bit FNV-1a of a fully qualified name."""
    h = 2166136261
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 16777619) % 2**32
    return h


@dataclass(eq=False)
class RpcField:
    name: str
    type: "RpcType"
    index: int = 0
    member: str = ""            # union: the `which` constant, PSU_U_MEMBER
    loc: Optional[Location] = None


@dataclass(eq=False)
class RpcType:
    """One Franca type as C sees it. Named types (everything but basic types
    and Integer ranges) have a tag and codec functions."""

    kind: str       # bool int float double string bytes integer enum struct poly union array map
    c_type: str     # the C type of a value (a member, a decoded out-argument)
    in_type: str    # an in-argument's C type ("const char *", "const struct x *")
    put: str = ""   # suffix of pbus_rpc_put_/get_ (bool, int, float, double, integer, enum)
    var: bool = False       # holds variable-size data (strings, buffers, arrays, maps, pointers)
    min_size: int = 0       # the fewest bytes a value encodes to
    fqn: str = ""
    desc: str = ""
    loc: Optional[Location] = None
    stem: str = ""          # "content_filter"
    tag: str = ""           # "psu_content_filter": the struct/enum tag
    guard: str = ""         # "PSU_TYPE_CONTENT_FILTER_DEFINED"
    encode: str = ""
    decode: str = ""
    copy: str = ""          # "" unless var
    equal: str = ""
    fields: List[RpcField] = field(default_factory=list)  # struct (flattened), union
    element: Optional["RpcType"] = None                    # array
    key: Optional["RpcType"] = None                        # map
    value: Optional["RpcType"] = None                      # map
    entry_tag: str = ""                                    # map: "psu_m_entry"
    entry_guard: str = ""
    lo: str = ""            # integer: the C literal of the bound checked, or ""
    hi: str = ""
    enumerators: List[Tuple[str, int]] = field(default_factory=list)
    type_tag: int = 0       # poly: FNV-1a of fqn
    tag_macro: str = ""     # poly: PSU_X_TYPE_TAG
    concrete: List["RpcType"] = field(default_factory=list)  # poly: self, then subtypes
    empty: bool = False     # a struct without members in C (gets a placeholder)
    # What the compiled schema's type records say (emit_schema.py):
    int_lower: Optional[int] = None     # integer: Franca's bounds, None for minInt/maxInt
    int_upper: Optional[int] = None
    labels: List[Tuple[str, int]] = field(default_factory=list)  # enum: Franca labels
    base_fqn: str = ""      # struct, union: the type it extends
    basic: str = ""         # a basic type: its schema token (int16, string, ...)

    @property
    def ref(self) -> str:
        """How the compiled schema names this type (docs/schema-format.md,
        "Type references")."""
        if self.basic:
            return self.basic
        if self.kind == "integer":
            if self.int_lower is None and self.int_upper is None:
                return "integer"
            lo = "" if self.int_lower is None else str(self.int_lower)
            hi = "" if self.int_upper is None else str(self.int_upper)
            return f"integer:{lo}:{hi}"
        if self.kind == "array" and not self.fqn:
            return self.element.ref + "[]"
        return self.fqn

    @property
    def named(self) -> bool:
        return bool(self.tag)

    @property
    def by_pointer(self) -> bool:
        """An in-argument passed as `const T *` (aggregates but polymorphic
        structs, which are pointers already)."""
        return self.kind in ("struct", "union", "array", "map")


@dataclass(eq=False)
class RpcArg:
    name: str
    type: RpcType
    desc: str
    loc: Location


@dataclass(eq=False)
class RpcMethod:
    index: int
    name: str               # Franca name (":selector" appended for an overload)
    c_name: str             # "setVoltage", "foo_sel" with a selector
    fire_and_forget: bool
    callable_by: Optional[str]
    in_args: List[RpcArg]
    out_args: List[RpcArg]
    error: Optional[RpcType]
    desc: str
    loc: Location
    call: str               # psu_PowerSupply_setVoltage
    call_async: str
    reply_fn: str           # the async completion's typedef
    needs_arena: bool       # some out-argument holds variable-size data


@dataclass(eq=False)
class RpcBroadcast:
    index: int
    name: str
    c_name: str
    selective: bool
    args: List[RpcArg]
    desc: str
    loc: Location
    fn: str                 # handler typedef
    args_struct: str        # struct tag of the in-process arguments
    subscribe: str
    unsubscribe: str
    fire: str
    fire_selective: str
    subscribers: str
    on_subscription: str    # impl member (selective)


@dataclass(eq=False)
class RpcNames:
    prefix: str
    upper: str
    iface: str              # "PowerSupply"
    guard: str
    version_major: str
    version_minor: str
    interface: str          # psu_PowerSupply_interface
    client: str             # struct tag psu_client_PowerSupply
    server: str
    impl: str
    client_new: str
    client_free: str
    client_available: str
    client_wait_available: str
    client_on_availability: str
    client_set_timeout: str
    availability_fn: str    # typedef of the availability handler
    server_new: str
    server_new_with_options: str
    server_free: str
    server_userdata: str


@dataclass(eq=False)
class RpcModel:
    fqn: str
    version: Tuple[int, int]
    desc: str
    c: RpcNames
    types: List[RpcType]        # named types, definition order (by-value dependencies first)
    enums: List[RpcType]
    structs: List[RpcType]      # struct tags to declare ahead (struct, poly, union, array, map)
    items: List[Tuple[str, RpcType]]  # ("type" | "entry", t): definitions in order
    methods: List[RpcMethod]
    broadcasts: List[RpcBroadcast]
    source_files: List[str]
    named: List[RpcType] = field(default_factory=list)  # every named type, in the order met


class _Builder:
    def __init__(self, model: Model):
        self.model = model
        itf = model.interface
        self.prefix = model.c.prefix
        self.upper = model.c.upper
        self.local = set()
        i = itf
        while i is not None:
            self.local.add(i.fqn)
            i = i.base
        self.types: Dict[object, RpcType] = {}
        self.named: List[RpcType] = []
        self.min_busy: set = set()

    # --- names -------------------------------------------------------------

    def stem_of(self, fqn: str, name: str) -> str:
        owner = fqn.rsplit(".", 1)[0]
        if owner in self.local:
            return snake(name)
        return f"{snake(owner.rsplit('.', 1)[-1])}_{snake(name)}"

    def _name(self, t: RpcType, stem: str) -> None:
        p = self.prefix
        t.stem = stem
        t.tag = f"{p}_{stem}"
        t.guard = f"{self.upper}_TYPE_{stem.upper()}_DEFINED"
        t.encode = f"{p}_encode_{stem}"
        t.decode = f"{p}_decode_{stem}"
        t.equal = f"{p}_equal_{stem}"
        self.named.append(t)

    # --- types -------------------------------------------------------------

    def get(self, t: Type) -> RpcType:
        u = unalias(t)
        if isinstance(u, BasicType):
            key = ("basic", u.name)
        elif isinstance(u, IntegerType):
            key = ("integer", u.lower, u.upper)
        elif isinstance(u, ArrayType) and u.fqn is None:
            key = ("array", id(self.get(u.element)))
        else:
            key = ("named", u.fqn)
        found = self.types.get(key)
        if found is not None:
            return found
        if isinstance(u, BasicType):
            kind, c_type, put, size = _BASIC[u.name]
            in_type = {"string": "const char *"}.get(kind, c_type)
            r = RpcType(kind, c_type, in_type, put=put, min_size=size,
                        var=kind in ("string", "bytes"), basic=_SCHEMA_BASIC[u.name])
            self.types[key] = r
            return r
        if isinstance(u, IntegerType):
            lo = u.lower if u.lower is not None else INT64_MIN
            hi = u.upper if u.upper is not None else INT64_MAX
            unsigned = lo >= 0 and hi > INT64_MAX
            c_type = "uint64_t" if unsigned else "int64_t"
            r = RpcType("integer", c_type, c_type, put="u64" if unsigned else "i64",
                        min_size=8, int_lower=u.lower, int_upper=u.upper)
            lit = "UINT64_C" if unsigned else "INT64_C"
            if lo > (0 if unsigned else INT64_MIN):
                r.lo = f"{lit}({lo})"
            if hi < (UINT64_MAX if unsigned else INT64_MAX):
                r.hi = f"{lit}({hi})"
            self.types[key] = r
            return r
        if isinstance(u, EnumType):
            return self._enum(key, u)
        if isinstance(u, StructType):
            return self._struct(key, u)
        if isinstance(u, UnionType):
            r = RpcType("union", "", "", fqn=u.fqn, desc=u.desc or "", loc=u.loc,
                        base_fqn=u.base.fqn if u.base is not None else "")
            self._name(r, self.stem_of(u.fqn, u.name))
            self._aggregate(r)
            self.types[key] = r
            for i, f in enumerate(u.fields):
                ft = self.get(f.type)
                r.fields.append(RpcField(f.name, ft, i,
                                         f"{self.upper}_{r.stem.upper()}_{snake(f.name).upper()}",
                                         f.loc))
            return r
        if isinstance(u, ArrayType):
            r = RpcType("array", "", "", loc=u.loc, var=True, min_size=4,
                        fqn=u.fqn or "", desc=u.desc or "")
            self.types[key] = r
            r.element = self.get(u.element)
            stem = (self.stem_of(u.fqn, u.name) if u.fqn is not None
                    else "array_" + self._elem_stem(r.element))
            self._name(r, stem)
            self._aggregate(r)
            return r
        if isinstance(u, MapType):
            r = RpcType("map", "", "", fqn=u.fqn, desc=u.desc or "", loc=u.loc,
                        var=True, min_size=4)
            self._name(r, self.stem_of(u.fqn, u.name))
            self._aggregate(r)
            r.entry_tag = f"{r.tag}_entry"
            r.entry_guard = f"{self.upper}_TYPE_{r.stem.upper()}_ENTRY_DEFINED"
            self.types[key] = r
            r.key = self.get(u.key)
            r.value = self.get(u.value)
            return r
        raise AssertionError(u)

    def _elem_stem(self, e: RpcType) -> str:
        if e.named:
            return e.stem
        if e.kind == "integer":
            # the range is part of the type: Integer(0,5)[] and Integer[] differ
            if not e.lo and not e.hi:
                return "integer"
            num = lambda s: s[s.index("(") + 1:-1].replace("-", "m")
            return (f"integer_{num(e.lo) if e.lo else 'min'}_"
                    f"{num(e.hi) if e.hi else 'max'}")
        return {"bool": "bool", "float": "float", "double": "double",
                "string": "string", "bytes": "bytes"}.get(e.kind, e.c_type[:-2])

    def _aggregate(self, r: RpcType) -> None:
        r.c_type = f"struct {r.tag}"
        r.in_type = f"const struct {r.tag} *"

    def _enum(self, key, u: EnumType) -> RpcType:
        if not u.enumerators:
            raise GenError(u.loc, f"enumeration '{u.fqn}' has no enumerators: no value "
                                  "of it can be sent")
        wide = any(not -2**31 <= e.value < 2**31 for e in u.enumerators)
        r = RpcType("enum", "", "", put="i64" if wide else "i32",
                    min_size=8 if wide else 4, fqn=u.fqn, desc=u.desc or "", loc=u.loc,
                    labels=[(e.name, e.value) for e in u.enumerators])
        if u.c_type:    # a parameter's enumeration too: the table back end's names
            stem = u.c_type[len(self.prefix) + 1:]
            self._name(r, stem)
            r.enumerators = [(e.c_name, e.value) for e in u.enumerators]
        else:
            self._name(r, self.stem_of(u.fqn, u.name))
            r.enumerators = [(f"{self.upper}_{r.stem.upper()}_{e.name.upper()}", e.value)
                             for e in u.enumerators]
        r.c_type = f"enum {r.tag}"
        r.in_type = r.c_type
        r.equal = ""            # enumerations compare with ==
        self.types[key] = r
        return r

    def _root(self, s: StructType) -> Optional[StructType]:
        """The root of s's polymorphic hierarchy, or None if it has none."""
        chain = []
        while s is not None:
            chain.append(s)
            s = s.base
        return chain[-1] if any(x.polymorphic for x in chain) else None

    def _struct(self, key, u: StructType) -> RpcType:
        poly = self._root(u) is not None
        r = RpcType("poly" if poly else "struct", "", "", fqn=u.fqn,
                    desc=u.desc or "", loc=u.loc, var=poly,
                    base_fqn=u.base.fqn if u.base is not None else "")
        self._name(r, self.stem_of(u.fqn, u.name))
        self.types[key] = r
        if poly:
            r.c_type = f"struct {r.tag} *"
            r.in_type = f"const struct {r.tag} *"
            r.type_tag = fnv1a32(u.fqn)
            r.tag_macro = f"{self.upper}_{r.stem.upper()}_TYPE_TAG"
        else:
            self._aggregate(r)
        for f in u.fields:
            r.fields.append(RpcField(f.name, self.get(f.type), loc=f.loc))
        r.empty = not r.fields and not poly
        if poly:
            r.concrete = [r]
            for t in self.model.types.values():
                if isinstance(t, StructType) and t is not u:
                    b = t.base
                    while b is not None and b is not u:
                        b = b.base
                    if b is u:
                        r.concrete.append(self.get(t))
            seen: Dict[int, RpcType] = {}
            for c in r.concrete:
                if c.type_tag in seen:
                    raise GenError(c.loc, f"the type tags of '{c.fqn}' and "
                                          f"'{seen[c.type_tag].fqn}' are equal "
                                          f"(0x{c.type_tag:08x}); rename one")
                seen[c.type_tag] = c
        return r

    # --- derived properties -------------------------------------------------

    def finish(self) -> None:
        """var and min_size, now that every type is known (types may refer
        to themselves through arrays, maps and polymorphic pointers)."""
        changed = True
        while changed:      # a fixed point: var spreads through members
            changed = False
            for t in self.named:
                if t.var:
                    continue
                if t.kind in ("struct", "union") and any(f.type.var for f in t.fields):
                    t.var = changed = True
        for t in self.named:
            if t.var:
                t.copy = f"{self.prefix}_copy_{t.stem}"
        for t in self.named:
            t.min_size = self._min(t)

    def _min(self, t: RpcType) -> int:
        if t.kind not in ("struct", "poly", "union"):
            return t.min_size
        if id(t) in self.min_busy:
            return 0        # recursion: any lower bound will do
        self.min_busy.add(id(t))
        try:
            sizes = [self._min(f.type) for f in t.fields]
            if t.kind == "union":
                return 4 + (min(sizes) if sizes else 0)
            return (4 if t.kind == "poly" else 0) + sum(sizes)
        finally:
            self.min_busy.discard(id(t))

    def order(self) -> List[Tuple[str, RpcType]]:
        """Definitions so that every member held by value is complete first:
        struct and union members, map entries' keys and values. Arrays,
        maps and polymorphic members are pointers, which need only the
        declarations ahead."""
        out: List[Tuple[str, RpcType]] = []
        state: Dict[Tuple[str, int], int] = {}

        def deps(kind: str, t: RpcType) -> List[RpcType]:
            if kind == "entry":
                return [t.key, t.value]
            if t.kind in ("struct", "union"):
                return [f.type for f in t.fields]
            if t.kind == "poly":
                return [f.type for f in t.fields]
            return []

        def visit(kind: str, t: RpcType, via: RpcType) -> None:
            k = (kind, id(t))
            if state.get(k) == 2:
                return
            if state.get(k) == 1:
                raise GenError(via.loc, f"'{via.fqn}' contains itself by value "
                                        "(only an array, a map or a polymorphic "
                                        "struct may hold its own type)")
            state[k] = 1
            for d in deps(kind, t):
                if d.kind in ("struct", "union", "array", "map"):
                    visit("type", d, t)
            state[k] = 2
            out.append((kind, t))

        for t in self.named:
            if t.kind != "enum":
                visit("type", t, t)
        # A map holds its entries by pointer: they follow every type, so a
        # value may hold the very map it is an entry of.
        for t in self.named:
            if t.kind == "map":
                visit("entry", t, t)
        return out


def _arg(b: _Builder, a) -> RpcArg:
    return RpcArg(a.name, b.get(a.type), a.desc or "", a.loc)


def build(model: Model, check_names: bool = True) -> RpcModel:
    """The methods, broadcasts and their types of model.interface, named.
    check_names: refuse names that would clash in the generated C (not
    needed when only the compiled schema is written)."""
    itf = model.interface
    b = _Builder(model)
    p, up = b.prefix, b.upper
    iname = itf.name
    isnake = snake(iname).upper()
    c = RpcNames(
        prefix=p, upper=up, iface=iname, guard=f"{up}_{isnake}_RPC_H",
        version_major=f"{up}_{isnake}_VERSION_MAJOR",
        version_minor=f"{up}_{isnake}_VERSION_MINOR",
        interface=f"{p}_{iname}_interface",
        client=f"{p}_client_{iname}", server=f"{p}_server_{iname}",
        impl=f"{p}_server_{iname}_impl",
        client_new=f"{p}_client_{iname}_new", client_free=f"{p}_client_{iname}_free",
        client_available=f"{p}_client_{iname}_available",
        client_wait_available=f"{p}_client_{iname}_wait_available",
        client_on_availability=f"{p}_client_{iname}_on_availability",
        client_set_timeout=f"{p}_client_{iname}_set_timeout",
        availability_fn=f"{p}_client_{iname}_availability_fn",
        server_new=f"{p}_server_{iname}_new",
        server_new_with_options=f"{p}_server_{iname}_new_with_options",
        server_free=f"{p}_server_{iname}_free",
        server_userdata=f"{p}_server_{iname}_userdata")

    methods = []
    for i, m in enumerate(itf.all_methods()):
        c_name = f"{m.name}_{m.selector}" if m.selector else m.name
        ins = [_arg(b, a) for a in m.in_args]
        outs = [_arg(b, a) for a in m.out_args]
        err = b.get(m.error) if m.error is not None else None
        methods.append(RpcMethod(
            index=i, name=f"{m.name}:{m.selector}" if m.selector else m.name,
            c_name=c_name, fire_and_forget=m.fire_and_forget,
            callable_by=m.callable_by, in_args=ins, out_args=outs, error=err,
            desc=m.desc or "", loc=m.loc, call=f"{p}_{iname}_{c_name}",
            call_async=f"{p}_{iname}_{c_name}_async",
            reply_fn=f"{p}_{iname}_{c_name}_reply_fn", needs_arena=False))
    broadcasts = []
    for i, bc in enumerate(itf.all_broadcasts()):
        c_name = f"{bc.name}_{bc.selector}" if bc.selector else bc.name
        broadcasts.append(RpcBroadcast(
            index=i, name=f"{bc.name}:{bc.selector}" if bc.selector else bc.name,
            c_name=c_name, selective=bc.selective,
            args=[_arg(b, a) for a in bc.out_args], desc=bc.desc or "", loc=bc.loc,
            fn=f"{p}_{iname}_{c_name}_fn", args_struct=f"{p}_{iname}_{c_name}_args",
            subscribe=f"{p}_client_{iname}_subscribe_{c_name}",
            unsubscribe=f"{p}_client_{iname}_unsubscribe_{c_name}",
            fire=f"{p}_server_{iname}_fire_{c_name}",
            fire_selective=f"{p}_server_{iname}_fire_{c_name}_selective",
            subscribers=f"{p}_server_{iname}_subscribers_{c_name}",
            on_subscription=f"on_{c_name}_subscription"))
    b.finish()
    for m in methods:
        m.needs_arena = any(a.type.var for a in m.out_args)
    items = b.order()
    enums = [t for t in b.named if t.kind == "enum"]
    rm = RpcModel(fqn=itf.fqn, version=itf.version, desc=itf.desc or "", c=c,
                  types=[t for k, t in items if k == "type"], enums=enums,
                  structs=[t for t in b.named if t.kind != "enum"], items=items,
                  methods=methods, broadcasts=broadcasts,
                  source_files=model.source_files, named=list(b.named))
    if check_names:
        _check(rm, model)
    return rm


def _check(rm: RpcModel, model: Model) -> None:
    """Every identifier the RPC back end prints is a valid, unique C name."""
    seen: Dict[str, str] = {}
    itf_loc = model.interface.loc

    def claim(ident: str, owner: str, loc) -> None:
        if ident in seen:
            raise GenError(loc, f"C name '{ident}' of {owner} clashes with "
                                f"{seen[ident]}; rename one or use --prefix")
        seen[ident] = owner

    def word(name: str, what: str, loc, reserved=()) -> None:
        if reserved and name.endswith("_"):
            raise GenError(loc, f"{what} '{name}' ends with '_', which the generated "
                                "C keeps for its own names; rename it")
        if name in _C_WORDS or name in reserved:
            raise GenError(loc, f"{what} '{name}' is a reserved word in the generated "
                                "C (a C or C++ keyword, a standard name or a name "
                                "the generated functions use); rename it")

    c = rm.c
    for ident in (c.guard, c.version_major, c.version_minor, c.interface, c.client,
                  c.client_new, c.client_free, c.client_available,
                  c.client_wait_available, c.client_on_availability,
                  c.client_set_timeout, c.availability_fn, c.server_new,
                  c.server_new_with_options, c.server_free, c.server_userdata,
                  c.impl, c.server):
        claim(ident, "the generated code", itf_loc)
    # Enumerators of parameter enumerations are claimed by checks.py too, but
    # they live in one namespace with everything here.
    for t in rm.structs + rm.enums:
        what = f"type '{t.fqn or t.tag}'"
        claim(t.tag, what, t.loc)
        claim(t.guard, what, t.loc)
        for fn in (t.encode, t.decode, t.equal, t.copy):
            if fn:
                claim(fn, what, t.loc)
        if t.kind == "enum":
            for name, _ in t.enumerators:
                claim(name, f"an enumerator of '{t.fqn}'", t.loc)
        if t.kind == "map":
            claim(t.entry_tag, what, t.loc)
            claim(t.entry_guard, what, t.loc)
        if t.tag_macro:
            claim(t.tag_macro, what, t.loc)
        members: Dict[str, str] = {}
        if t.kind == "poly":
            members["type_tag"] = "the type tag"
        for f in t.fields:
            word(f.name, f"field '{f.name}' of '{t.fqn}'", f.loc or t.loc)
            if f.name in members:
                raise GenError(f.loc or t.loc, f"field '{f.name}' of '{t.fqn}' clashes with "
                                      f"{members[f.name]} in C")
            members[f.name] = f"field '{f.name}'"
            if f.member:
                claim(f.member, f"member '{f.name}' of '{t.fqn}'", t.loc)
    impl: Dict[str, str] = {}
    for m in rm.methods:
        what = f"method '{m.name}'"
        for ident in (m.call, m.call_async, m.reply_fn):
            claim(ident, what, m.loc)
        if m.c_name in impl:
            raise GenError(m.loc, f"method '{m.name}' clashes with {impl[m.c_name]} "
                                  "in struct " + c.impl)
        impl[m.c_name] = what
        word(m.c_name, "method", m.loc)
        names: Dict[str, RpcArg] = {}
        for a in m.in_args + m.out_args:
            word(a.name, f"argument of method '{m.name}'", a.loc, RESERVED_ARGS)
            if a.name in names:
                raise GenError(a.loc, f"argument '{a.name}' of method '{m.name}' "
                                      f"given twice (first at {names[a.name].loc})")
            names[a.name] = a
    for bc in rm.broadcasts:
        what = f"broadcast '{bc.name}'"
        for ident in (bc.fn, bc.args_struct, bc.subscribe, bc.unsubscribe, bc.fire,
                      bc.fire_selective, bc.subscribers):
            claim(ident, what, bc.loc)
        if bc.selective:
            if bc.on_subscription in impl:
                raise GenError(bc.loc, f"broadcast '{bc.name}' clashes with "
                                       f"{impl[bc.on_subscription]} in struct {c.impl}")
            impl[bc.on_subscription] = what
        names = {}
        for a in bc.args:
            word(a.name, f"argument of broadcast '{bc.name}'", a.loc, RESERVED_ARGS)
            if a.name in names:
                raise GenError(a.loc, f"argument '{a.name}' of broadcast '{bc.name}' "
                                      f"given twice (first at {names[a.name].loc})")
            names[a.name] = a
