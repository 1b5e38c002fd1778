"""Resolver: syntax trees of all loaded files -> resolved Franca elements.

Every named element is registered under its fully qualified name
(`package.Collection.Name`, `package.Interface.Name`; an anonymous type
collection puts its elements directly in the package). A name written in a
file is looked up, first match wins, in:
  1. the enclosing type collection or interface, then the interfaces it
     extends;
  2. the package of the file and each enclosing package, then as written
     (a fully qualified name);
  3. the namespaces the file imports (`import a.b.* from ...`).
The element found must be defined in the same file or in a file that this
file imports. Types, constants and interfaces are resolved once each;
recursion through typedefs or `extends` is an error. Chains of typedefs and
of `extends` are followed by loops (any length works); nesting (fields of
structs in structs, constants from constants) recurses, with the room that
deep.run gives.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

from . import contracts, deep, syntax as S
from .errors import Diagnostics, GenError, Location, shown
from .expressions import coerce, evaluate
from .loader import Sources
from .model import (BASIC_TYPES, INT_RANGES, Argument, ArrayType, Attribute,
                    Broadcast, Constant, EnumType, EnumValue, Enumerator,
                    Field, IntegerType, Interface, MapType, Method,
                    StructType, Type, TypeCollection, TypedefType, UnionType)

INT32_MIN, INT32_MAX = INT_RANGES["int32"]
INT64_MIN = INT_RANGES["int64"][0]
UINT64_MAX = INT_RANGES["uint64"][1]


@dataclass
class _Entry:
    kind: str                   # "type", "const", "interface", "typeCollection"
    decl: Any
    file: S.FidlFile
    container: Optional[str]    # fqn of the enclosing collection / interface


@dataclass
class _Scope:
    file: S.FidlFile
    container: Optional[str]


_KIND_WORDS = {"type": "type", "const": "constant", "interface": "interface",
               "typeCollection": "type collection"}


def _desc(node: S.Annotated) -> Optional[str]:
    return node.annotation("description")


def _annotated_desc(annotations: List[S.Annotation]) -> Optional[str]:
    for a in annotations:
        if a.tag == "description":
            return a.text
    return None


class Resolver:
    def __init__(self, sources: Sources, diagnostics: Diagnostics):
        self.sources = sources
        self.diag = diagnostics
        self.symbols: Dict[str, _Entry] = {}
        self.types: Dict[str, Type] = {}
        self.constants: Dict[str, Constant] = {}
        self.interfaces: Dict[str, Interface] = {}
        self.type_collections: Dict[str, TypeCollection] = {}
        self._busy: Set[str] = set()        # elements being resolved
        self._const_busy: List[str] = []
        # container -> it and the interfaces it extends (fixed once all is
        # registered; looked up for every name written in an interface)
        self._container_chains: Dict[Optional[str], List[str]] = {}

    # --- registration -----------------------------------------------------

    def _register(self, fqn: str, kind: str, decl: Any, file: S.FidlFile,
                  container: Optional[str]) -> None:
        old = self.symbols.get(fqn)
        if old is not None:
            what = _KIND_WORDS[kind]
            raise GenError(decl.loc, f"duplicate {what} '{fqn}' (first defined "
                                     f"at {old.decl.loc})")
        self.symbols[fqn] = _Entry(kind, decl, file, container)

    def register_all(self) -> None:
        for f in self.sources.fidl_files:
            for tc in f.type_collections:
                tc_fqn = f"{f.package}.{tc.name}" if tc.name else f.package
                if tc.name:
                    self._register(tc_fqn, "typeCollection", tc, f, None)
                for t in tc.types:
                    self._register(f"{tc_fqn}.{t.name}", "type", t, f, tc_fqn)
                for c in tc.constants:
                    self._register(f"{tc_fqn}.{c.name}", "const", c, f, tc_fqn)
            for itf in f.interfaces:
                i_fqn = f"{f.package}.{itf.name}"
                self._register(i_fqn, "interface", itf, f, None)
                for t in itf.types:
                    self._register(f"{i_fqn}.{t.name}", "type", t, f, i_fqn)
                for c in itf.constants:
                    self._register(f"{i_fqn}.{c.name}", "const", c, f, i_fqn)

    # --- lookup -----------------------------------------------------------

    def _containers(self, container: Optional[str]) -> List[str]:
        """The container and, for an interface, the interfaces it extends."""
        if container in self._container_chains:
            return self._container_chains[container]
        out: List[str] = []
        self._container_chains[container] = out
        seen: Set[str] = set()
        while container is not None and container not in seen:
            seen.add(container)
            out.append(container)
            entry = self.symbols.get(container)
            if entry is None or entry.kind != "interface" or entry.decl.base is None:
                break
            base_name, _ = entry.decl.base
            container = self._find(base_name, _Scope(entry.file, None),
                                   ("interface",))
        return out

    def _candidates(self, name: str, scope: _Scope):
        if scope.container is not None:
            for c in self._containers(scope.container):
                yield f"{c}.{name}"
        parts = scope.file.package.split(".")
        for i in range(len(parts), 0, -1):
            yield ".".join(parts[:i]) + "." + name
        yield name
        for imp in scope.file.imports:
            if imp.namespace is None:
                continue
            if imp.wildcard:
                yield f"{imp.namespace}.{name}"
            else:
                last = imp.namespace.rsplit(".", 1)[-1]
                if name == last or name.startswith(last + "."):
                    yield imp.namespace + name[len(last):]

    def _visible(self, entry: _Entry, scope: _Scope) -> bool:
        if entry.file is scope.file:
            return True
        return entry.file in self.sources.imports.get(scope.file.path, [])

    def _find(self, name: str, scope: _Scope, kinds: Tuple[str, ...]) -> Optional[str]:
        for fqn in self._candidates(name, scope):
            entry = self.symbols.get(fqn)
            if entry is not None and entry.kind in kinds and self._visible(entry, scope):
                return fqn
        return None

    def _lookup(self, name: str, scope: _Scope, kinds: Tuple[str, ...],
                loc: Location, what: str) -> str:
        fqn = self._find(name, scope, kinds)
        if fqn is not None:
            return fqn
        # Give a better message when it exists but is not imported.
        for cand in self._candidates(name, scope):
            entry = self.symbols.get(cand)
            if entry is not None and entry.kind in kinds:
                raise GenError(loc, f"{what} '{name}' is defined in "
                                    f"'{entry.file.path}', which "
                                    f"'{scope.file.path}' does not import")
        raise GenError(loc, f"unknown {what} '{name}'")

    # --- types ------------------------------------------------------------

    def type_ref(self, ref: S.TypeRef, is_array: bool, scope: _Scope) -> Type:
        t = self._type_ref(ref, scope)
        if is_array:
            return ArrayType(None, None, ref.loc, t)
        return t

    def _type_ref(self, ref: S.TypeRef, scope: _Scope) -> Type:
        if ref.name == "Integer":
            # Every integer a parameter or a back end handles fits int64 or
            # uint64; so must the bounds.
            for side, value, loc in (("lower", ref.lower, ref.lower_loc),
                                     ("upper", ref.upper, ref.upper_loc)):
                if value is not None and not INT64_MIN <= value <= UINT64_MAX:
                    raise GenError(loc, f"Integer {side} bound {value} does not fit "
                                        "64 bits (bounds are -2^63 ... 2^64-1)")
            if ref.lower is not None and ref.upper is not None and ref.lower > ref.upper:
                raise GenError(ref.loc, f"Integer range ({ref.lower},{ref.upper}) "
                                        "is empty: lower bound above upper bound")
            return IntegerType(ref.lower, ref.upper)
        if ref.name in BASIC_TYPES:
            return BASIC_TYPES[ref.name]
        fqn = self._lookup(ref.name, scope, ("type",), ref.loc, "type")
        return self.type_by_fqn(fqn, ref.loc)

    def type_by_fqn(self, fqn: str, used_at: Location) -> Type:
        if fqn in self._busy:
            decl = self.symbols[fqn].decl
            raise GenError(used_at, f"recursive definition of '{fqn}' "
                                    f"(declared at {decl.loc})")
        if fqn in self.types:
            return self.types[fqn]
        # A typedef needs the type it names, a struct, union or enumeration
        # its base, before it can be built. Follow that chain first and build
        # it from its far end, so that a chain of any length is a loop here
        # rather than one level of recursion per link. A chain that comes
        # back on itself is left to the recursive build, which reports it.
        chain = [fqn]
        seen = {fqn}
        nxt = self._first_need(fqn)
        while nxt is not None and nxt not in self.types and nxt not in self._busy:
            if nxt in seen:
                chain = [fqn]
                break
            chain.append(nxt)
            seen.add(nxt)
            nxt = self._first_need(nxt)
        for link in reversed(chain):
            if link not in self.types:      # building one may build the next
                self._build_type(link)
        return self.types[fqn]

    def _first_need(self, fqn: str) -> Optional[str]:
        """The named type that type `fqn` must have complete before it is
        built (a typedef's actual type, a base), if any and if found."""
        entry = self.symbols[fqn]
        d = entry.decl
        if isinstance(d, S.TypedefDecl):
            if d.actual.name == "Integer" or d.actual.name in BASIC_TYPES:
                return None
            name = d.actual.name
        elif isinstance(d, (S.StructDecl, S.UnionDecl, S.EnumerationDecl)) \
                and d.base is not None:
            name = d.base[0]
        else:
            return None
        return self._find(name, _Scope(entry.file, entry.container), ("type",))

    def _build_type(self, fqn: str) -> Type:
        entry = self.symbols[fqn]
        d = entry.decl
        scope = _Scope(entry.file, entry.container)
        if isinstance(d, S.TypedefDecl):
            self._busy.add(fqn)
            actual = self._type_ref(d.actual, scope)
            self._busy.discard(fqn)
            t = TypedefType(fqn, d.name, d.loc, actual, _desc(d))
            self.types[fqn] = t
        elif isinstance(d, S.EnumerationDecl):
            self._busy.add(fqn)
            t = self._enumeration(fqn, d, scope)
            self._busy.discard(fqn)
            self.types[fqn] = t
        elif isinstance(d, S.StructDecl):
            t = StructType(fqn, d.name, d.loc, None, d.polymorphic, [], _desc(d))
            self._busy.add(fqn)
            if d.base is not None:
                base = self._named_base(d.base, scope, StructType, "struct")
                t.base = base
                t.fields.extend(base.fields)
            self._busy.discard(fqn)
            # Fields may refer back to the struct (through arrays, say).
            self.types[fqn] = t
            self._fields(t, d.fields, scope, "struct")
        elif isinstance(d, S.UnionDecl):
            t = UnionType(fqn, d.name, d.loc, None, [], _desc(d))
            self._busy.add(fqn)
            if d.base is not None:
                base = self._named_base(d.base, scope, UnionType, "union")
                t.base = base
                t.fields.extend(base.fields)
            self._busy.discard(fqn)
            self.types[fqn] = t
            self._fields(t, d.fields, scope, "union")
        elif isinstance(d, S.ArrayDecl):
            t = ArrayType(fqn, d.name, d.loc, None, _desc(d))
            self.types[fqn] = t
            t.element = self._type_ref(d.element, scope)
        elif isinstance(d, S.MapDecl):
            t = MapType(fqn, d.name, d.loc, None, None, _desc(d))
            self.types[fqn] = t
            t.key = self._type_ref(d.key, scope)
            t.value = self._type_ref(d.value, scope)
        else:
            raise AssertionError(d)
        return t

    def _named_base(self, base: Tuple[str, Location], scope: _Scope, cls, word: str):
        name, loc = base
        fqn = self._lookup(name, scope, ("type",), loc, word)
        t = self.type_by_fqn(fqn, loc)
        if not isinstance(t, cls):
            raise GenError(loc, f"'{name}' is not a {word}, it cannot be extended "
                                f"by a {word}")
        return t

    def _fields(self, t, fields: List[S.Field], scope: _Scope, word: str) -> None:
        seen = {f.name: f for f in t.fields}
        for f in fields:
            if f.name in seen:
                raise GenError(f.loc, f"duplicate field '{f.name}' in {word} "
                                      f"'{t.fqn}' (first at {seen[f.name].loc})")
            field = Field(f.name, self.type_ref(f.type, f.is_array, scope),
                          _desc(f), f.loc)
            seen[f.name] = field
            t.fields.append(field)

    def _enumeration(self, fqn: str, d: S.EnumerationDecl, scope: _Scope) -> EnumType:
        t = EnumType(fqn, d.name, d.loc, None, [], _desc(d))
        if d.base is not None:
            base = self._named_base(d.base, scope, EnumType, "enumeration")
            t.base = base
            t.enumerators.extend(base.enumerators)
        by_name = {e.name: e for e in t.enumerators}
        by_value = {e.value: e for e in t.enumerators}
        next_value = t.enumerators[-1].value + 1 if t.enumerators else 0
        for e in d.enumerators:
            if e.name in by_name:
                raise GenError(e.loc, f"duplicate enumerator '{e.name}' in "
                                      f"'{fqn}' (first at {by_name[e.name].loc})")
            if e.value is None:
                value = next_value
            else:
                value = evaluate(e.value, lambda n, l: self.ref_value(n, l, scope))
                if isinstance(value, EnumValue):
                    value = value.value
                if isinstance(value, str):      # Franca 0.8 style: = "3"
                    try:
                        value = int(value.strip(), 0)
                    except ValueError:
                        # Franca leaves a non-numeric string value to the
                        # generator (Common API's own test files use one):
                        # number it by position, and say so.
                        self.diag.warn(e.value.loc, f"enumerator '{e.name}': value "
                                       f"\"{shown(value)}\" is not an integer; numbered "
                                       f"{next_value} by position")
                        value = next_value
                if isinstance(value, bool) or not isinstance(value, int):
                    raise GenError(e.value.loc, f"enumerator '{e.name}': "
                                                "value is not an integer")
            if not INT32_MIN <= value <= INT32_MAX:
                raise GenError(e.loc, f"enumerator value {value} of '{e.name}' "
                                      "does not fit in 32 bits")
            if value in by_value:
                raise GenError(e.loc, f"enumerator value {value} duplicates "
                                      f"'{by_value[value].name}'")
            en = Enumerator(e.name, value, _desc(e), e.loc)
            t.enumerators.append(en)
            by_name[e.name] = en
            by_value[value] = en
            next_value = value + 1
        return t

    # --- constants --------------------------------------------------------

    def ref_value(self, name: str, loc: Location, scope: _Scope,
                  what: str = "constant") -> Any:
        """The value of a constant or enumerator (`Enum.LABEL`) named in an
        expression; `what` names what was expected, if it is unknown."""
        fqn = self._find(name, scope, ("const",))
        if fqn is not None:
            return self.constant_by_fqn(fqn, loc).value
        if "." in name:
            enum_name, label = name.rsplit(".", 1)
            efqn = self._find(enum_name, scope, ("type",))
            if efqn is not None:
                t = self.type_by_fqn(efqn, loc)
                while isinstance(t, TypedefType):
                    t = t.actual
                if isinstance(t, EnumType):
                    for e in t.enumerators:
                        if e.name == label:
                            return EnumValue(t, e.name, e.value)
                    raise GenError(loc, f"enumeration '{t.fqn}' has no "
                                        f"enumerator '{label}'")
        return self.constant_by_fqn(
            self._lookup(name, scope, ("const",), loc, what), loc).value

    def constant_by_fqn(self, fqn: str, used_at: Location) -> Constant:
        if fqn in self.constants:
            return self.constants[fqn]
        if fqn in self._const_busy:
            chain = self._const_busy[self._const_busy.index(fqn):] + [fqn]
            raise GenError(used_at, "constant defined in terms of itself: "
                                    + " -> ".join(chain))
        entry = self.symbols[fqn]
        d: S.ConstantDecl = entry.decl
        scope = _Scope(entry.file, entry.container)
        self._const_busy.append(fqn)
        t = self.type_ref(d.type, d.is_array, scope)
        raw = evaluate(d.value, lambda n, l: self.ref_value(n, l, scope))
        value = coerce(raw, t, d.value.loc, f"constant '{d.name}'")
        self._const_busy.pop()
        c = Constant(fqn, d.name, t, value, _desc(d), d.loc)
        self.constants[fqn] = c
        return c

    # --- interfaces -------------------------------------------------------

    def _args(self, args: List[S.Argument], scope: _Scope, what: str) -> List[Argument]:
        out: List[Argument] = []
        seen: Dict[str, Argument] = {}
        for a in args:
            if a.name in seen:
                raise GenError(a.loc, f"duplicate argument '{a.name}' in {what}")
            arg = Argument(a.name, self.type_ref(a.type, a.is_array, scope),
                           _desc(a), a.loc)
            seen[a.name] = arg
            out.append(arg)
        return out

    def interface_by_fqn(self, fqn: str, used_at: Optional[Location] = None,
                         via: Optional[str] = None) -> Interface:
        if fqn in self.interfaces:
            return self.interfaces[fqn]
        if fqn in self._busy:
            raise GenError(used_at, f"interface '{fqn}' extends itself "
                                    f"(through '{via}')")
        # As for types: build the chain of bases from its far end.
        chain = [fqn]
        seen = {fqn}
        nxt = self._interface_base(fqn)
        while nxt is not None and nxt not in self.interfaces and nxt not in self._busy:
            if nxt in seen:
                chain = [fqn]
                break
            chain.append(nxt)
            seen.add(nxt)
            nxt = self._interface_base(nxt)
        for link in reversed(chain):
            if link not in self.interfaces:
                self._build_interface(link)
        return self.interfaces[fqn]

    def _interface_base(self, fqn: str) -> Optional[str]:
        entry = self.symbols[fqn]
        if entry.decl.base is None:
            return None
        return self._find(entry.decl.base[0], _Scope(entry.file, None), ("interface",))

    def _build_interface(self, fqn: str) -> Interface:
        entry = self.symbols[fqn]
        d: S.InterfaceDecl = entry.decl
        file_scope = _Scope(entry.file, None)
        scope = _Scope(entry.file, fqn)
        self._busy.add(fqn)
        base = None
        if d.base is not None:
            name, loc = d.base
            base = self.interface_by_fqn(
                self._lookup(name, file_scope, ("interface",), loc, "interface"), loc,
                via=fqn)
        self._busy.discard(fqn)
        version = (d.version.major, d.version.minor) if d.version else (0, 0)
        itf = Interface(fqn, d.name, entry.file.package, version, base, [], [],
                        [], [], [], [], d.has_contract, _desc(d), d.loc)
        self.interfaces[fqn] = itf
        for name, loc in d.manages:
            itf.manages.append(self.interface_by_fqn(
                self._lookup(name, file_scope, ("interface",), loc, "interface"), loc))
        for t in d.types:
            itf.types.append(self.type_by_fqn(f"{fqn}.{t.name}", t.loc))
        for c in d.constants:
            itf.constants.append(self.constant_by_fqn(f"{fqn}.{c.name}", c.loc))

        inherited = {a.name: a for a in (base.all_attributes() if base else [])}
        for a in d.attributes:
            if a.name in inherited:
                first = inherited[a.name]
                where = "" if first.interface is itf else \
                    f", inherited from '{first.interface.fqn}'"
                raise GenError(a.loc, f"duplicate attribute '{a.name}' (first at "
                                      f"{first.loc}{where})")
            attr = Attribute(a.name, self.type_ref(a.type, a.is_array, scope),
                             a.readonly, a.no_read, a.no_subscriptions, _desc(a),
                             a.loc, itf)
            inherited[a.name] = attr
            itf.attributes.append(attr)

        for m in d.methods:
            error = None
            if m.error_ref is not None:
                name, loc = m.error_ref
                t = self.type_by_fqn(self._lookup(name, scope, ("type",), loc, "type"), loc)
                while isinstance(t, TypedefType):
                    t = t.actual
                if not isinstance(t, EnumType):
                    raise GenError(loc, f"error type '{name}' of method '{m.name}' "
                                        "is not an enumeration")
                error = t
            elif m.error_enum is not None:
                error = self._enumeration(f"{fqn}.{m.error_enum.name}", m.error_enum, scope)
            what = f"method '{m.name}'"
            itf.methods.append(Method(m.name, m.selector, m.fire_and_forget,
                                      self._args(m.in_args, scope, what),
                                      self._args(m.out_args, scope, what),
                                      error, _desc(m), m.loc,
                                      error_desc=_annotated_desc(m.error_annotations)))
            if m.fire_and_forget and m.out_args:
                raise GenError(m.loc, f"method '{m.name}' is fireAndForget but "
                                      "has out arguments")
        seen_b: Dict[Tuple[str, Optional[str]], Broadcast] = {}
        for b in d.broadcasts:
            key = (b.name, b.selector)
            if key in seen_b:
                raise GenError(b.loc, f"duplicate broadcast '{b.name}' (first at "
                                      f"{seen_b[key].loc})")
            bc = Broadcast(b.name, b.selector, b.selective,
                           self._args(b.out_args, scope, f"broadcast '{b.name}'"),
                           _desc(b), b.loc)
            seen_b[key] = bc
            itf.broadcasts.append(bc)
        if d.contract is not None:
            itf.contract = contracts.resolve(self, itf, d.contract, scope)
        return itf

    def resolve_all(self) -> None:
        """Resolve every element of every file, so that an error anywhere
        is reported even if the interface compiled does not use it."""
        for f in self.sources.fidl_files:
            for tc in f.type_collections:
                tc_fqn = f"{f.package}.{tc.name}" if tc.name else f.package
                types = []
                for t in tc.types:
                    deep.at(t.loc, f"type '{tc_fqn}.{t.name}'")
                    types.append(self.type_by_fqn(f"{tc_fqn}.{t.name}", t.loc))
                consts = []
                for c in tc.constants:
                    deep.at(c.loc, f"constant '{tc_fqn}.{c.name}'")
                    consts.append(self.constant_by_fqn(f"{tc_fqn}.{c.name}", c.loc))
                version = (tc.version.major, tc.version.minor) if tc.version else None
                self.type_collections[tc_fqn] = TypeCollection(
                    tc_fqn, version, types, consts, _desc(tc), tc.loc)
            for itf in f.interfaces:
                deep.at(itf.loc, f"interface '{f.package}.{itf.name}'")
                self.interface_by_fqn(f"{f.package}.{itf.name}")


def resolve(sources: Sources, diagnostics: Diagnostics) -> Resolver:
    r = Resolver(sources, diagnostics)
    r.register_all()
    r.resolve_all()
    return r
