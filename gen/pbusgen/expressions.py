"""Evaluation of Franca constant expressions and initializers.

Values are plain Python values: int, float, bool, str, EnumValue (an
enumerator), list (array initializer; a list of pairs for a map), an
Initializer as written `{a: 1}`, and once checked against a type a
StructValue (a dict that knows its struct type) or a UnionValue. `c->f`
reads a field of a struct constant or the member of a union constant.
Integer division truncates toward zero, as in C. A reference is looked up by
the caller-supplied function, which also detects cycles between constants.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from . import syntax as S
from .errors import GenError, Location
from .model import (ArrayType, BasicType, EnumType, EnumValue, INT_RANGES,
                    IntegerType, MapType, StructType, Type, UnionType,
                    unalias)

RefResolver = Callable[[str, Location], Any]


def _kind(v: Any) -> str:
    if isinstance(v, StructValue):
        return f"struct {v.type.fqn}"
    if isinstance(v, UnionValue):
        return f"union {v.type.fqn}"
    if isinstance(v, bool):
        return "Boolean"
    if isinstance(v, (int, EnumValue)):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, bytes)):
        return "array"
    return "struct"


def _num(v: Any, loc: Location, op: str) -> Any:
    if isinstance(v, EnumValue):
        return v.value
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise GenError(loc, f"operator '{op}' needs numbers, found {_kind(v)}")
    return v


def operands(expr: S.Expr) -> list:
    """The sub-expressions of `expr`, in the order they are evaluated."""
    if isinstance(expr, S.Unary):
        return [expr.operand]
    if isinstance(expr, S.Binary):
        return [expr.left, expr.right]
    if isinstance(expr, S.StructInit):
        return [value for _, _, value in expr.fields]
    if isinstance(expr, S.ArrayInit):
        return list(expr.items)
    if isinstance(expr, S.MapInit):
        return [x for pair in expr.items for x in pair]
    return []


def evaluate(expr: S.Expr, ref: RefResolver) -> Any:
    """The value of an expression or initializer. The tree is walked with a
    stack of its own, not by recursion, so that `1 + 1 + ... + 1` may have
    any number of terms: operands left to right, then their operator."""
    todo = [(expr, False)]
    values: list = []
    while todo:
        node, operands_done = todo.pop()
        if isinstance(node, S.Literal):
            values.append(node.value)
        elif isinstance(node, S.Ref):
            value = ref(node.name, node.loc)
            path = node.name
            for name, loc in node.fields:
                value = field_of(value, path, name, loc)
                path += "->" + name
            values.append(value)
        elif isinstance(node, S.CurrentError):
            raise GenError(node.loc, "'errorval' has a value only in a contract, "
                                     "where a method's error is answered")
        elif isinstance(node, S.ErrorDefRef):
            raise GenError(node.loc, f"'errordef.{node.name}' has a value only in a "
                                     "contract, where a method's error is answered")
        elif not operands_done:
            todo.append((node, True))
            todo.extend((x, False) for x in reversed(operands(node)))
        else:
            n = len(operands(node))
            args = values[len(values) - n:]
            del values[len(values) - n:]
            values.append(_combine(node, args))
    value, = values
    return value


def _combine(expr: S.Expr, args: list) -> Any:
    """The value of `expr` from the values of its operands."""
    if isinstance(expr, S.Unary):
        v, = args
        if expr.op == "!":
            if not isinstance(v, bool):
                raise GenError(expr.loc, f"operator '!' needs a Boolean, found {_kind(v)}")
            return not v
        return -_num(v, expr.loc, "-")
    if isinstance(expr, S.Binary):
        left, right = args
        op = expr.op
        if op in ("&&", "||"):
            for v in (left, right):
                if not isinstance(v, bool):
                    raise GenError(expr.loc, f"operator '{op}' needs Booleans, "
                                             f"found {_kind(v)}")
            return (left and right) if op == "&&" else (left or right)
        if op in ("==", "!="):
            if isinstance(left, EnumValue):
                left = left.value
            if isinstance(right, EnumValue):
                right = right.value
            return (left == right) if op == "==" else (left != right)
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            return left + right
        a = _num(left, expr.loc, op)
        b = _num(right, expr.loc, op)
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if b == 0:
                raise GenError(expr.loc, "division by zero")
            if isinstance(a, int) and isinstance(b, int):
                q = abs(a) // abs(b)
                return q if (a >= 0) == (b >= 0) else -q
            return a / b
        raise AssertionError(op)
    if isinstance(expr, S.StructInit):
        out = Initializer()
        for (name, loc, _), value in zip(expr.fields, args):
            if name in out:
                raise GenError(loc, f"duplicate field '{name}' in initializer")
            out[name] = (value, loc)
        return out
    if isinstance(expr, S.ArrayInit):
        return ArrayValue(args, [item.loc for item in expr.items])
    if isinstance(expr, S.MapInit):
        return list(zip(args[0::2], args[1::2]))
    raise AssertionError(type(expr))


class Initializer(dict):
    """A `{name: value, ...}` initializer as written: name -> (value, loc).
    Coercion turns it into a StructValue or a UnionValue; a reference to a
    constant brings that canonical form instead."""


class ArrayValue(list):
    """An array initializer `[a, b]` as written: its values, and where each
    element was written (for messages about one element)."""

    def __init__(self, values: list, locs: list) -> None:
        super().__init__(values)
        self.locs = locs


def _element_locs(value: list, loc: Location) -> list:
    return value.locs if isinstance(value, ArrayValue) else [loc] * len(value)


class StructValue(dict):
    """A struct constant: field name -> value, every field of `type` (its
    inherited ones first)."""

    def __init__(self, type_: StructType, *args: Any) -> None:
        super().__init__(*args)
        self.type = type_


@dataclass(frozen=True)
class UnionValue:
    """A union constant: which member holds the value."""
    member: str
    value: Any
    type: Optional[UnionType] = field(default=None, compare=False, repr=False)


def field_of(value: Any, path: str, name: str, loc: Location) -> Any:
    """`path->name`: a field of a struct constant, or the member of a union
    constant that holds its value."""
    if isinstance(value, StructValue):
        if name not in value:
            raise GenError(loc, f"'{path}' is a {value.type.fqn}, which has no "
                                f"field '{name}'")
        return value[name]
    if isinstance(value, UnionValue):
        if value.member != name:
            if name not in {f.name for f in value.type.fields}:
                raise GenError(loc, f"'{path}' is a {value.type.fqn}, which has "
                                    f"no member '{name}'")
            raise GenError(loc, f"'{path}' holds member '{value.member}', "
                                f"not '{name}'")
        return value.value
    raise GenError(loc, f"'{path}' is not a struct or union constant, it has "
                        f"no field '{name}'")


def _extends(t: Any, base: Any) -> bool:
    """Whether struct, union or enumeration `t` is `base` or derived from it."""
    while t is not None:
        if t is base:
            return True
        t = t.base
    return False


def _unrelated(have: Any, want: Any) -> str:
    return f" ({have.fqn} and {want.fqn}: neither extends the other)"


def coerce(value: Any, t: Type, loc: Location, what: str) -> Any:
    """Check that `value` fits type `t` and return it in its canonical form
    (ints for integers, floats for Float/Double, bytes for ByteBuffer (from
    `[1, 0xff]`, or a string's UTF-8), lists, StructValue, UnionValue)."""
    t = unalias(t)
    if isinstance(t, BasicType):
        tok = t.token
        if tok == "undefined":
            raise GenError(loc, f"{what}: type 'undefined' (Franca's placeholder "
                                "for a type not given) has no values")
        if tok in INT_RANGES:
            if isinstance(value, EnumValue):
                value = value.value
            if isinstance(value, bool) or not isinstance(value, int):
                raise GenError(loc, f"{what}: expected an integer for {t.name}, "
                                    f"found {_kind(value)}")
            lo, hi = INT_RANGES[tok]
            if not lo <= value <= hi:
                raise GenError(loc, f"{what}: value {value} out of range of {t.name}")
            return value
        if tok in ("float", "double"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise GenError(loc, f"{what}: expected a number for {t.name}, "
                                    f"found {_kind(value)}")
            return float(value)
        if tok == "bool":
            if not isinstance(value, bool):
                raise GenError(loc, f"{what}: expected true or false, found {_kind(value)}")
            return value
        if tok == "bytes" and isinstance(value, (bytes, list)):
            # `[1, 2, 0xff]`, or a ByteBuffer constant's value (bytes)
            if value and isinstance(value[0], tuple):
                raise GenError(loc, f"{what}: expected an array of bytes '[...]', "
                                    "found a map initializer")
            for b, bloc in zip(value, _element_locs(value, loc)):
                if isinstance(b, bool) or not isinstance(b, int):
                    raise GenError(bloc, f"{what}: expected a byte 0..255 in "
                                         f"ByteBuffer, found {_kind(b)}")
                if not 0 <= b <= 255:
                    raise GenError(bloc, f"{what}: byte {b} out of range 0..255")
            return bytes(value)
        if tok in ("string", "bytes"):
            if not isinstance(value, str):
                expected = "a string" if tok == "string" else \
                    "a string or an array of bytes '[...]'"
                raise GenError(loc, f"{what}: expected {expected}, found {_kind(value)}")
            return value if tok == "string" else value.encode("utf-8")
    if isinstance(t, IntegerType):
        if isinstance(value, bool) or not isinstance(value, int):
            raise GenError(loc, f"{what}: expected an integer, found {_kind(value)}")
        if (t.lower is not None and value < t.lower) or \
                (t.upper is not None and value > t.upper):
            raise GenError(loc, f"{what}: value {value} out of range of {t}")
        return value
    if isinstance(t, EnumType):
        # An enumerator of a base enumeration is one of the derived one too
        # (Franca's ActualType.isCompatibleType); so is an inherited one named
        # through the derived enumeration.
        if not isinstance(value, EnumValue):
            raise GenError(loc, f"{what}: expected an enumerator of {t.fqn}, "
                                f"found {_kind(value)}")
        have = value.enum
        if _extends(t, have) or (_extends(have, t) and
                                 value.name in {e.name for e in t.enumerators}):
            return value
        why = f" ('{value.name}' is one that {have.fqn} adds)" \
            if _extends(have, t) else _unrelated(have, t)
        raise GenError(loc, f"{what}: expected an enumerator of {t.fqn}, found "
                            f"{have.fqn}.{value.name}{why}")
    if isinstance(t, ArrayType):
        if not isinstance(value, list) or (value and isinstance(value[0], tuple)):
            raise GenError(loc, f"{what}: expected an array initializer '[...]'")
        return [coerce(v, t.element, vloc, what)
                for v, vloc in zip(value, _element_locs(value, loc))]
    if isinstance(t, MapType):
        if not isinstance(value, list) or (value and not isinstance(value[0], tuple)):
            raise GenError(loc, f"{what}: expected a map initializer '[k => v, ...]'")
        return [(coerce(k, t.key, loc, what), coerce(v, t.value, loc, what))
                for k, v in value]
    if isinstance(t, StructType):
        names = [f.name for f in t.fields]
        if isinstance(value, StructValue):
            # A constant's value, already checked against its own type. A
            # derived struct's value is one of its base too (Franca's
            # ActualType.isCompatibleType); it keeps its own type and fields.
            have = value.type
            if not _extends(have, t):
                why = f" (it is a base of {t.fqn}, without the fields {t.fqn} adds)" \
                    if _extends(t, have) else _unrelated(have, t)
                raise GenError(loc, f"{what}: a value of struct {have.fqn} cannot "
                                    f"initialize a {t.fqn}{why}")
            return value
        if not isinstance(value, Initializer):
            raise GenError(loc, f"{what}: expected a struct initializer '{{...}}', "
                                f"found {_kind(value)}")
        out = StructValue(t)
        for name, (v, floc) in value.items():
            if name not in names:
                raise GenError(floc, f"{what}: struct {t.fqn} has no field '{name}'")
        for f in t.fields:
            if f.name not in value:
                raise GenError(loc, f"{what}: field '{f.name}' of {t.fqn} not initialized")
            v, floc = value[f.name]
            out[f.name] = coerce(v, f.type, floc, what)
        return out
    if isinstance(t, UnionType):
        fields = {f.name: f for f in t.fields}      # inherited ones included
        if isinstance(value, UnionValue):
            # As for structs, a derived union's value is one of its base; a
            # base's value is one of a derived union too (it has every
            # member of its base).
            have = value.type
            if not (_extends(have, t) or _extends(t, have)):
                raise GenError(loc, f"{what}: a value of union {have.fqn} cannot "
                                    f"initialize a {t.fqn}{_unrelated(have, t)}")
            return value
        if not isinstance(value, Initializer) or len(value) != 1:
            raise GenError(loc, f"{what}: expected a union initializer naming one member "
                                "'{member: value}'")
        (name, (v, floc)), = value.items()
        if name not in fields:
            raise GenError(floc, f"{what}: union {t.fqn} has no member '{name}'")
        return UnionValue(name, coerce(v, fields[name].type, floc, what), t)
    raise AssertionError(t)
