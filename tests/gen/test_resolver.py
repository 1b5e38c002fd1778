"""Resolver: names, enumerator values, flattening, typedefs, constants,
and the parameters and C names of the model."""

import pytest

from pbustest.gen import FIXTURES, build
from pbusgen.model import EnumValue

LIB = {
    "lib.fidl": '''package org.lib
typeCollection Types {
    enumeration Base { A B = 5 C }
    typedef Volts is Double
    typedef Level is Volts
    struct Pair { Int32 first  Int32 second }
    const Int32 K = 4
}
''',
}


def test_names_and_inheritance(model_of):
    model = model_of({**LIB, "main.fidl": '''package org.app
import model "lib.fidl"
interface Root { attribute UInt8 root_attr }
interface Dev extends Root {
    version { major 2 minor 3 }
    enumeration More extends org.lib.Types.Base { D E = 0x20 F }
    struct Triple extends org.lib.Types.Pair { Boolean third }
    attribute More mode
    attribute Triple t
    attribute org.lib.Types.Level level
}
'''}, "main.fidl", interface="org.app.Dev")
    itf = model.interface
    assert itf.fqn == "org.app.Dev" and itf.version == (2, 3)
    assert itf.base.fqn == "org.app.Root"
    assert [p.name for p in model.parameters] == [
        "root_attr", "mode", "t.first", "t.second", "t.third", "level"]
    assert [p.index for p in model.parameters] == list(range(6))
    more = model.types["org.app.Dev.More"]
    assert [(e.name, e.value) for e in more.enumerators] == [
        ("A", 0), ("B", 5), ("C", 6), ("D", 7), ("E", 32), ("F", 33)]
    assert more.base is model.types["org.lib.Types.Base"]
    assert model.parameters[-1].type == "double"          # typedef of typedef
    assert model.enums == [more]
    assert model.source_files == ["main.fidl", "lib.fidl"]


def test_c_names(model_of):
    model = model_of({**LIB, "main.fidl": '''package p
import model "lib.fidl"
interface PowerSupply {
    enumeration OutputState { OFF ON }
    attribute OutputState outputState readonly
    attribute org.lib.Types.Pair limits
    attribute String name
    attribute Double[] samples
}
'''}, "main.fidl")
    c = model.c
    assert (c.prefix, c.upper, c.open, c.close, c.schema_hash, c.param_count) == (
        "power_supply", "POWER_SUPPLY", "power_supply_open", "power_supply_close",
        "POWER_SUPPLY_SCHEMA_HASH", "POWER_SUPPLY_PARAM_COUNT")
    state, first, second, name, samples = model.parameters
    assert (state.c_index, state.c_getter, state.c_setter) == (
        "POWER_SUPPLY_OUTPUTSTATE", "power_supply_get_outputState", "")
    assert (first.c_index, first.c_setter) == (
        "POWER_SUPPLY_LIMITS_FIRST", "power_supply_set_limits_first")
    assert name.c_capacity == "POWER_SUPPLY_NAME_MAX_SIZE"
    assert samples.c_capacity == "POWER_SUPPLY_SAMPLES_MAX_COUNT"
    enum = model.enums[0]
    assert enum.c_type == "power_supply_output_state"
    assert [e.c_name for e in enum.enumerators] == [
        "POWER_SUPPLY_OUTPUT_STATE_OFF", "POWER_SUPPLY_OUTPUT_STATE_ON"]


def test_prefix_option(model_of):
    model = model_of({"m.fidl": "package p interface I { attribute Int8 x }"},
                     "m.fidl", prefix="dev")
    assert model.parameters[0].c_getter == "dev_get_x"
    assert model.c.schema_hash == "DEV_SCHEMA_HASH"


def test_constant_expressions(model_of):
    model = model_of({**LIB, "main.fidl": '''package p
import org.lib.Types.* from "lib.fidl"
typeCollection C {
    const Int32 A = K * 3 + 1            // 13, K imported by namespace
    const Int32 B = -A / 2               // truncates toward zero: -6
    const Int64 H = 0x10 + 0b101         // 21
    const Double R = A / 2.0             // 6.5
    const Boolean T = A > B && !(R == 6.5) || A != 13
    const Boolean U = (A >= 13) && B <= -6
    const String S = "x" + "y"
    const Int32 E = Base.B + 1           // enumerator reference: 6
    const Base L = Base.C
    const Pair P = { first: A, second: K }
    const UInt8[] ARR = [1, 2, K]
    const Float F = 1.5f
}
interface I { attribute Int8 x }
'''}, "main.fidl")
    v = {k.rsplit(".", 1)[1]: c.value for k, c in model.constants.items()
         if k.startswith("p.C.")}
    assert v["A"] == 13 and v["B"] == -6 and v["H"] == 21 and v["R"] == 6.5
    assert v["T"] is False and v["U"] is True and v["S"] == "xy" and v["E"] == 6
    assert isinstance(v["L"], EnumValue) and (v["L"].name, v["L"].value) == ("C", 6)
    assert v["P"] == {"first": 13, "second": 4}
    assert v["ARR"] == [1, 2, 4] and v["F"] == 1.5


def test_union_and_nested_constants(model_of):
    """Union constants name one member; a struct constant may hold a union
    constant by reference (the shape of Common API's ti_datatypes_constants)."""
    model = model_of({"main.fidl": '''package p
typeCollection C {
    union U { UInt16 e1 Boolean e2 String e3 }
    union V extends U { Double e4 }
    struct CE { String key U value }
    const String K = "123"
    const U v1 = {e3: K}
    const U v2 = {e2: false}
    const V v4 = {e4: 2.5}
    const CE kv1 = {key: K, value: v1}
    const CE kv2 = {key: "x", value: {e1: 7}}
    const CE kv3 = kv1
}
interface I { attribute Int8 x }
'''}, "main.fidl")
    v = {k.rsplit(".", 1)[1]: c.value for k, c in model.constants.items()}
    assert (v["v1"].member, v["v1"].value) == ("e3", "123")
    assert (v["v2"].member, v["v2"].value) == ("e2", False)
    assert (v["v4"].member, v["v4"].value) == ("e4", 2.5)
    assert v["kv1"]["key"] == "123" and v["kv1"]["value"] == v["v1"]
    assert (v["kv2"]["value"].member, v["kv2"]["value"].value) == ("e1", 7)
    assert v["kv3"] == v["kv1"]


@pytest.mark.parametrize("init, message", [
    ("{e1: 1, e2: true}", "expected a union initializer naming one member"),
    ("{e9: 1}", "union p.C.U has no member 'e9'"),
    ("{e1: true}", "expected an integer for UInt16"),
    ("5", "expected a union initializer naming one member"),
])
def test_bad_union_constants(error_of, init, message):
    error = error_of({"m.fidl": "package p\ntypeCollection C {\n"
                                "  union U { UInt16 e1 Boolean e2 }\n"
                                f"  const U c = {init}\n}}\n"}, "m.fidl")
    assert message in error and error.startswith("m.fidl:4:")


def test_field_access_with_arrow(model_of):
    """`c->field` reads a field of a struct constant, or the member of a
    union constant (Franca's FQualifiedElementRef), in constants and in
    enumerator values, chained and mixed with operators."""
    model = model_of({"main.fidl": '''package p
typeCollection T {
    enumeration E { A B C }
    struct In { E e1  Int32 n }
    struct S { In inner  Int32 a  String s }
    union U { Int32 i  String t }
    const S str3 = { inner: { e1: E.B, n: 4 }, a: 10, s: "x" }
    const U u1 = { i: 5 }
    const Int32 x = 2
    enumeration E6 { Enum5 = 1  Enum6 = str3->inner->e1 + x }
    const Int32 y = str3->a
    const Int32 z = u1->i * 2 + str3 -> inner -> n
    const String w = str3->s + "y"
    const In inn = str3->inner
    const Boolean b = str3->inner->e1 == E.B
}
interface I { const Int32 own = T.str3->a + 1  attribute Int8 q }
'''}, "main.fidl")
    v = {k.rsplit(".", 1)[1]: c.value for k, c in model.constants.items()}
    assert (v["y"], v["z"], v["w"], v["b"], v["own"]) == (10, 14, "xy", True, 11)
    assert v["inn"]["n"] == 4 and v["inn"].type is model.types["p.T.In"]
    assert [(e.name, e.value) for e in model.types["p.T.E6"].enumerators] == [
        ("Enum5", 1), ("Enum6", 3)]


@pytest.mark.parametrize("expr, message", [
    ("s->b", "m.fidl:6:26: error: 's' is a p.C.S, which has no field 'b'"),
    ("s->a->x", "m.fidl:6:29: error: 's->a' is not a struct or union constant, it "
                "has no field 'x'"),
    ("u->f", "m.fidl:6:26: error: 'u' holds member 'i', not 'f'"),
    ("u->g", "m.fidl:6:26: error: 'u' is a p.C.U, which has no member 'g'"),
    ("K->a", "m.fidl:6:26: error: 'K' is not a struct or union constant, it has "
             "no field 'a'"),
])
def test_bad_field_access(error_of, expr, message):
    assert error_of({"m.fidl": "package p\ntypeCollection C {\n"
                               "  struct S { Int32 a }  union U { Int32 i  Float f }\n"
                               "  const S s = { a: 1 }  const U u = { i: 2 }\n"
                               "  const Int32 K = 3\n"
                               f"  const Int32 c = 1 + {expr}\n}}\n"}, "m.fidl") == message


def test_byte_buffer_constants(model_of):
    model = model_of({"main.fidl": '''package p
typeCollection T {
    const ByteBuffer bb1 = [ ]
    const ByteBuffer bb2 = [ 1, 2, 0xff ]
    const ByteBuffer bb3 = [ 0b101, 2 * 100, K ]
    const ByteBuffer bb4 = bb2
    const ByteBuffer bb5 = "ab"
    const ByteBuffer[] bbs = [ [], [ 7 ], bb2 ]
    const UInt8 K = 5
}
interface I { attribute Int8 q }
'''}, "main.fidl")
    v = {k.rsplit(".", 1)[1]: c.value for k, c in model.constants.items()}
    assert (v["bb1"], v["bb2"], v["bb3"], v["bb4"], v["bb5"]) == (
        b"", b"\x01\x02\xff", b"\x05\xc8\x05", b"\x01\x02\xff", b"ab")
    assert v["bbs"] == [b"", b"\x07", b"\x01\x02\xff"]


@pytest.mark.parametrize("init, message", [
    ("[ 1, 256 ]", "m.fidl:2:46: error: constant 'b': byte 256 out of range 0..255"),
    ("[ 0, -1 ]", "m.fidl:2:46: error: constant 'b': byte -1 out of range 0..255"),
    ('[ 1, "x" ]', "m.fidl:2:46: error: constant 'b': expected a byte 0..255 in "
                   "ByteBuffer, found string"),
    ("[ 1.5 ]", "m.fidl:2:43: error: constant 'b': expected a byte 0..255 in "
                "ByteBuffer, found number"),
    ("[ 1 => 2 ]", "m.fidl:2:41: error: constant 'b': expected an array of bytes "
                   "'[...]', found a map initializer"),
    ("7", "m.fidl:2:41: error: constant 'b': expected a string or an array of bytes "
          "'[...]', found integer"),
])
def test_bad_byte_buffer_constants(error_of, init, message):
    assert error_of({"m.fidl": "package p\ntypeCollection C { const ByteBuffer b = "
                               f"{init} }}\n"}, "m.fidl") == message


def test_derived_values_fit_their_base(model_of):
    """A derived struct's (or union's) value is one of its base (Franca's
    ActualType.isCompatibleType), and keeps its own type and fields; an
    enumerator of a base enumeration is one of a derived one."""
    model = model_of({"main.fidl": '''package p
typeCollection T {
    struct Base { Int32 a }
    struct Mid extends Base { Int32 b }
    struct Derived extends Mid { String c }
    const Derived d = { a: 1, b: 2, c: "x" }
    const Base b1 = d
    const Mid m1 = d
    const Base b2 = m1
    struct Holder { Base inner }
    const Holder h = { inner: d }
    union U { Int32 i }
    union V extends U { String s }
    const V v = { s: "y" }
    const U u = v
    const U u0 = { i: 3 }
    const V v0 = u0
    enumeration E { A B }
    enumeration F extends E { C }
    const F f = E.B
    const E e = F.A
    const Int32 r = b1->a + h->inner->a
}
interface I { attribute Int8 q }
'''}, "main.fidl")
    c = {k.rsplit(".", 1)[1]: x.value for k, x in model.constants.items()}
    derived = model.types["p.T.Derived"]
    assert c["b1"] == {"a": 1, "b": 2, "c": "x"} and c["b1"].type is derived
    assert c["b2"].type is derived and c["h"]["inner"].type is derived
    assert (c["u"].member, c["u"].value) == ("s", "y")
    assert (c["v0"].member, c["v0"].value) == ("i", 3)
    assert (c["f"].name, c["e"].name, c["r"]) == ("B", "A", 2)


@pytest.mark.parametrize("decl, message", [
    ("const Derived x = base",
     "constant 'x': a value of struct p.T.Base cannot initialize a p.T.Derived "
     "(it is a base of p.T.Derived, without the fields p.T.Derived adds)"),
    ("const Base x = other",
     "constant 'x': a value of struct p.T.Other cannot initialize a p.T.Base "
     "(p.T.Other and p.T.Base: neither extends the other)"),
    ("const Base x = w",
     "constant 'x': expected a struct initializer '{...}', found union p.T.W"),
    ("const U x = w",
     "constant 'x': a value of union p.T.W cannot initialize a p.T.U "
     "(p.T.W and p.T.U: neither extends the other)"),
    ("const E x = F.C",
     "constant 'x': expected an enumerator of p.T.E, found p.T.F.C "
     "('C' is one that p.T.F adds)"),
    ("const E x = G.A",
     "constant 'x': expected an enumerator of p.T.E, found p.T.G.A "
     "(p.T.G and p.T.E: neither extends the other)"),
])
def test_values_that_do_not_fit(error_of, decl, message):
    error = error_of({"m.fidl": "package p\ntypeCollection T {\n"
                                "  struct Base { Int32 a }  struct Derived extends Base "
                                "{ Int32 b }  struct Other { Int32 a }\n"
                                "  union U { Int32 i }  union W { Int32 i }\n"
                                "  enumeration E { A B }  enumeration F extends E { C }"
                                "  enumeration G { A }\n"
                                "  const Base base = { a: 1 }  const Other other = { a: 2 }"
                                "  const W w = { i: 1 }\n"
                                f"  {decl}\n}}\n"}, "m.fidl")
    assert error.startswith("m.fidl:7:") and error.endswith(message), error


def test_undefined_type_where_nothing_is_stored(model_of, error_of):
    """`undefined` (Franca's FBasicTypeId.undefined, a placeholder) is a
    type wherever no value of it has to be represented."""
    model = model_of({"m.fidl": '''package p
typeCollection T {
    typedef Later is undefined
    struct S { Int8 a  undefined b }
    union U { undefined u  Int8 i }
    array A of undefined
    map M { undefined to Later }
}
interface I {
    attribute Int8 q
    method m { in { undefined x  T.Later[] y } out { undefined z } }
    broadcast b { out { undefined w } }
}
'''}, "m.fidl")
    assert model.types["p.T.Later"].actual.name == "undefined"
    assert model.interface.methods[0].in_args[0].type.name == "undefined"
    assert error_of({"m.fidl": "package p\ntypeCollection T { const undefined c = 1 }\n"},
                    "m.fidl") == ("m.fidl:2:40: error: constant 'c': type 'undefined' "
                                  "(Franca's placeholder for a type not given) has no values")


def test_integer_ranges_intersect_with_deployment(model_of):
    model = model_of({
        "m.fidl": "package p interface I { attribute Integer(-5, 100) a "
                  "attribute Integer(minInt, 10) b  attribute Integer c }",
        "m.fdepl": 'import "m.fidl"\ndefine parambus.deployment for interface p.I {\n'
                   "attribute a { Minimum = -10 Maximum = 50 }\n"
                   "attribute b { Minimum = 0 Maximum = 20 } }\n",
    }, "m.fdepl")
    a, b, c = model.parameters
    assert (a.type, a.min, a.max) == ("int64", -5, 50)
    assert (b.min, b.max) == (0, 10)
    assert (c.min, c.max) == (None, None)



def test_integer_bounds_at_the_64_bit_limits(model_of):
    model = model_of({"m.fidl": "package p\ntypeCollection T {\n"
                                "  typedef U is Integer(0, 18446744073709551615)\n"
                                "  const U big = 18446744073709551615\n}\n"
                                "interface I { attribute Integer(-9223372036854775808, "
                                "9223372036854775807) a }\n"}, "m.fidl")
    a, = model.parameters
    assert (a.type, a.min, a.max) == ("int64", -2**63, 2**63 - 1)
    assert model.constants["p.T.big"].value == 2**64 - 1


def test_struct_deployment_inherits_to_fields(model_of):
    model = model_of({
        **LIB,
        "m.fidl": 'package p import model "lib.fidl"\n'
                  'interface I { struct Box { org.lib.Types.Pair inner  Double w } '
                  'attribute Box box }',
        "m.fdepl": 'import "m.fidl"\ndefine parambus.deployment for interface p.I {\n'
                   "attribute box { Persistent = true WritableBy = \"ops\"\n"
                   "  field inner { UpdateClass = rare field second { Default = 2 } }\n"
                   "  field w { Unit = \"kg\" Persistent = false } } }\n",
    }, "m.fdepl")
    first, second, w = model.parameters
    assert [p.name for p in model.parameters] == ["box.inner.first", "box.inner.second",
                                                  "box.w"]
    assert (first.persistent, first.group, first.update_class) == (True, "ops", "rare")
    assert (second.default, second.update_class) == (2, "rare")
    assert (w.persistent, w.unit, w.update_class) == (False, "kg", "setting")


def test_sizes_defaults(model_of):
    model = model_of({"m.fidl": "package p interface I { attribute String s "
                                "attribute ByteBuffer b  attribute UInt8[] a }"}, "m.fidl")
    s, b, a = model.parameters
    assert (s.size, b.size, a.count, a.type) == (64, 256, 16, "uint8[]")


def test_everything_fixture_resolves_and_compiles():
    """The fixture that uses every grammar rule resolves, and its interface
    compiles to parameters (tests/gen/fixtures/franca/everything.fidl)."""
    model, diag = build(FIXTURES / "franca" / "everything.fidl",
                        interface="org.example.franca.Device")
    assert diag.warnings == []
    c = {k.rsplit(".", 1)[1]: x.value for k, x in model.constants.items()}
    assert (c["C_I8"], c["C_U8"], c["C_I16"], c["C_U16"]) == (-128, 255, -32768, 65535)
    assert (c["C_I32"], c["C_U32"], c["C_I64"], c["C_U64"]) == (
        21, 2**32 - 1, -2**63, 2**64 - 1)
    assert c["C_BOOL"] is True and c["C_FIELD"] is True
    assert (c["C_FLOAT"], c["C_DOUBLE"]) == (1.5, 5.125)
    assert c["C_STRING"] == 'tab\t, quote ", unicode \u00e9 single'
    assert (c["C_BYTES"], c["C_NO_BYTES"]) == (b"\x01\x02\xff", b"")
    assert c["C_INTEGER"] == 123456789012345678901234567890
    assert (c["C_COLOR"].name, c["C_SHADE"].name, c["C_LEVEL"].name) == (
        "BLUE", "GREEN", "HIGH")
    assert c["C_BASE"] == {"x": 1, "y": 2, "z": 3}
    assert (c["C_FROM_MORE"].member, c["C_EMPTY"]) == ("real", {})
    assert c["C_TABLE"][1] == ("far", {"x": 1, "y": 2, "z": 3})
    assert c["C_LOOKUP"][1][1].value == 3
    assert (c["C_ARRAY"], c["C_IMPLICIT"], c["C_NO_NAMES"]) == ([1, 2, 3], [21, -1], [])
    assert c["LIMIT"] == 22 and c["DEFAULT_COLOR"].name == "TEAL"
    shade = model.types["org.example.franca.Types.Shade"]
    assert [(e.name, e.value) for e in shade.enumerators][-2:] == [("DARK", 37),
                                                                   ("LIGHT", 38)]
    assert model.types["org.example.franca.Types.Later"].actual.name == "undefined"

    itf = model.interface
    assert (itf.version, itf.base.fqn, [m.fqn for m in itf.manages]) == (
        (2, 0), "org.example.lib.Peer", ["org.example.lib.Peer",
                                         "org.example.franca.Helper"])
    assert [(m.name, m.selector) for m in itf.methods] == [
        ("reset", None), ("get", "byName"), ("get", "byId"), ("set", None),
        ("nothing", None)]
    assert itf.methods[1].error_desc == "why it failed"
    assert [e.name for e in itf.methods[3].error.enumerators] == [
        "UNKNOWN", "DENIED", "TOO_LATE"]
    assert [(b.name, b.selector, b.selective) for b in itf.broadcasts] == [
        ("changed", "color", True), ("changed", "value", False), ("tick", None, False)]
    contract = itf.contract
    assert contract.initial.name == "idle" and contract.variables[2].value["z"] == 22
    idle, working = contract.states
    first = idle.transitions[0]
    assert (first.trigger, first.element is itf.methods[1], first.target) == (
        "call", True, working)
    assert working.transitions[4].element is itf.broadcasts[0]

    names = [p.name for p in model.parameters]
    assert names[0] == "peer_id" and names[1:4] == ["sample.i8", "sample.u8", "sample.i16"]
    assert names[-7:] == ["history", "ratio", "color", "temperature", "small",
                          "attribute", "blob"]
    ratio = model.parameters[names.index("ratio")]
    assert (ratio.type, ratio.min, ratio.max) == ("int64", -100, 100)


def test_psu_example_model():
    model, diag = build(FIXTURES.parents[2] / "examples" / "psu" / "psu.fdepl")
    assert diag.warnings == []
    names = [p.name for p in model.parameters]
    assert names[:4] == ["identity.manufacturer", "identity.model", "identity.serial",
                         "identity.firmware"]
    assert "limits.voltage" in names and "measured_voltage" in names
    vset = model.parameters[names.index("voltage_setpoint")]
    assert (vset.unit, vset.min, vset.max, vset.step, vset.persistent, vset.group) == (
        "V", 0, 30, 0.001, True, "instrument")
    assert [m.name for m in model.interface.methods] == ["clear_trip", "calibrate", "selfTest"]
    assert [b.name for b in model.interface.broadcasts] == ["protectionTripped"]
