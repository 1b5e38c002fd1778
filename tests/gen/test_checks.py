"""One test per class of bad input: the exact one-line message, with file,
line and column."""

import pytest

from pbustest.gen import build, write
from pbusgen.errors import GenError

PSU = '''package p
interface Psu {
    enumeration State { OFF ON }
    struct Pair { Double a  Double b }
    attribute Double vset
    attribute Double vmeas readonly
    attribute String name
    attribute State state
    attribute Pair pair
    attribute Int8 small
    attribute UInt8[] arr
    attribute ByteBuffer blob
}
'''


def depl(body: str) -> str:
    return 'import "psu.fidl"\ndefine parambus.deployment for interface p.Psu {\n' \
        + body + "\n}\n"


# --- Franca input ------------------------------------------------------------

@pytest.mark.parametrize("fidl, message", [
    ("package p\ninterface I {\n  attribute Foo x\n}\n",
     "m.fidl:3:13: error: unknown type 'Foo'"),
    ("package p\ninterface I {\n  attribute Int8 x\n  attribute Int16 x\n}\n",
     "m.fidl:4:19: error: duplicate attribute 'x' (first at m.fidl:3:18)"),
    ("package p\ntypeCollection T { typedef A is Int8\n typedef A is Int16 }\n",
     "m.fidl:3:10: error: duplicate type 'p.T.A' (first defined at m.fidl:2:28)"),
    ("package p\ntypeCollection T { enumeration E { A B A } }\n",
     "m.fidl:2:40: error: duplicate enumerator 'A' in 'p.T.E' (first at m.fidl:2:36)"),
    ("package p\ntypeCollection T { enumeration E { A B = 5 C = 5 } }\n",
     "m.fidl:2:44: error: enumerator value 5 duplicates 'B'"),
    ("package p\ntypeCollection T { enumeration E { A = 0x80000000 } }\n",
     "m.fidl:2:36: error: enumerator value 2147483648 of 'A' does not fit in 32 bits"),
    ("package p\ntypeCollection T { typedef A is B\n typedef B is A }\n",
     "m.fidl:3:15: error: recursive definition of 'p.T.A' (declared at m.fidl:2:28)"),
    ("package p\ntypeCollection T { typedef A is Int8\n struct S extends A { } }\n",
     "m.fidl:3:19: error: 'A' is not a struct, it cannot be extended by a struct"),
    ("package p\ntypeCollection T { const UInt8 C = 300 }\n",
     "m.fidl:2:36: error: constant 'C': value 300 out of range of UInt8"),
    ("package p\ntypeCollection T { const Boolean C = 1 }\n",
     "m.fidl:2:38: error: constant 'C': expected true or false, found integer"),
    ("package p\ntypeCollection T { const Int32 A = B\n const Int32 B = A + 1 }\n",
     "m.fidl:3:18: error: constant defined in terms of itself: p.T.A -> p.T.B -> p.T.A"),
    ("package p\ntypeCollection T { const Int32 A = 1 / (2 - 2) }\n",
     "m.fidl:2:36: error: division by zero"),
    ("package p\ntypeCollection T { const Int32 A = true + 1 }\n",
     "m.fidl:2:36: error: operator '+' needs numbers, found Boolean"),
    ("package p\ntypeCollection T { struct S { Int8 a }\n const S C = { a: 1, b: 2 } }\n",
     "m.fidl:3:22: error: constant 'C': struct p.T.S has no field 'b'"),
    ("package p\ninterface I { attribute Integer(5, 1) x }\n",
     "m.fidl:2:25: error: Integer range (5,1) is empty: lower bound above upper bound"),
    # bounds fit 64 bits, minInt is a lower bound and maxInt an upper one
    ("package p\ninterface I {\n  attribute Integer(-9223372036854775809, 0) x\n}\n",
     "m.fidl:3:21: error: Integer lower bound -9223372036854775809 does not fit 64 "
     "bits (bounds are -2^63 ... 2^64-1)"),
    ("package p\ntypeCollection T {\n  typedef X is Integer(0, 18446744073709551616)\n}\n",
     "m.fidl:3:27: error: Integer upper bound 18446744073709551616 does not fit 64 "
     "bits (bounds are -2^63 ... 2^64-1)"),
    ("package p\ninterface I {\n  method m { in { Integer(0x10000000000000000, maxInt) a } }"
     "\n}\n",
     "m.fidl:3:27: error: Integer lower bound 18446744073709551616 does not fit 64 "
     "bits (bounds are -2^63 ... 2^64-1)"),
    ("package p\ninterface I {\n  attribute Integer(maxInt, 5) x\n}\n",
     "m.fidl:3:21: error: found 'maxInt', expected one of '-', 'minInt', integer"),
    ("package p\ninterface I {\n  attribute Integer(5, minInt) x\n}\n",
     "m.fidl:3:24: error: found 'minInt', expected one of '-', 'maxInt', integer"),
    # within 64 bits, outside the int64 that a parameter holds
    ("package p\ninterface I {\n  attribute Integer(0, 18446744073709551615) x\n}\n",
     "m.fidl:3:46: error: attribute 'x' of type Integer(0,18446744073709551615) cannot "
     "be a parameter: bound 18446744073709551615 is outside int64, the type of the "
     "parameter"),
    ("package p\ninterface I { method m fireAndForget { out { Int8 x } } }\n",
     "m.fidl:2:22: error: method 'm' is fireAndForget but has out arguments"),
    ("package p\ninterface I extends J { }\ninterface J extends I { }\n",
     "m.fidl:3:21: error: interface 'p.I' extends itself (through 'p.J')"),
    ("package p\ninterface I { attribute Int8 x readonly readonly }\n",
     "m.fidl:2:41: error: attribute 'x' says 'readonly' twice"),
])
def test_franca_errors(error_of, fidl, message):
    assert error_of({"m.fidl": fidl}, "m.fidl") == message


def test_syntax_error_through_pipeline(error_of):
    assert error_of({"m.fidl": "package p\ninterface I {\n  attribute Int8 x = 3\n}\n"},
                    "m.fidl") == (
        "m.fidl:3:20: error: found '=', expected one of 'array', 'attribute', "
        "'broadcast', 'const', 'contract', 'enumeration', 'map', 'method', 'noRead', "
        "'noSubscriptions', 'public', 'readonly', 'struct', 'typedef', 'union', '}', "
        "annotation '<** ... **>'")


def test_not_utf8(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.fidl").write_bytes(b"package p\n// caf\xe9\n")
    with pytest.raises(GenError) as info:
        build("m.fidl")
    assert str(info.value) == "m.fidl:2:7: error: found a byte that is not UTF-8, " \
                              "expected UTF-8 text"


def test_import_cycle(error_of):
    assert error_of({
        "a.fidl": 'package p\nimport model "b.fidl"\ninterface I { attribute Int8 x }\n',
        "b.fidl": 'package q\nimport model "a.fidl"\n',
    }, "a.fidl") == "b.fidl:2:14: error: import cycle a.fidl -> b.fidl -> a.fidl"


def test_missing_import(error_of):
    assert error_of({"a.fidl": 'package p\nimport model "gone.fidl"\n'}, "a.fidl") == \
        "a.fidl:2:14: error: imported file 'gone.fidl' not found (looked for 'gone.fidl')"


def test_name_from_file_not_imported(error_of):
    assert error_of({
        "a.fidl": 'package p\nimport model "b.fidl"\ninterface I { attribute r.T.X x }\n',
        "b.fidl": 'package q\nimport model "c.fidl"\n',
        "c.fidl": 'package r\ntypeCollection T { typedef X is Int8 }\n',
    }, "a.fidl") == ("a.fidl:3:25: error: type 'r.T.X' is defined in 'c.fidl', "
                     "which 'a.fidl' does not import")


# --- contracts ---------------------------------------------------------------

CONTRACT = '''package p
interface I {{
  attribute Int32 a
  struct P {{ Int32 f }}
  enumeration Err {{ BAD }}
  method m:one {{ in {{ Int32 x  P p }} error Err }}
  method m:two {{ }}
  method k {{ }}
  broadcast b {{ out {{ Int32 v }} }}
  contract {{
    vars {{ Int32 n  P pv {vars} }}
    PSM {{
      initial {initial}
      state s {{ {transition} }}
      {extra}
    }}
  }}
}}
'''


@pytest.mark.parametrize("initial, transition, extra, vars, message", [
    ("t", "", "", "", "13:15: error: unknown state 't' in the contract of 'p.I'"),
    ("s", "on call k -> t", "", "",
     "14:30: error: unknown state 't' in the contract of 'p.I'"),
    ("s", "", "state s { }", "",
     "15:13: error: duplicate state 's' (first at m.fidl:14:13)"),
    ("s", "", "", "Int8 n",
     "11:31: error: duplicate state variable 'n' (first at m.fidl:11:18)"),
    ("s", "", "", "Boolean ok = 1",
     "11:39: error: state variable 'ok': expected true or false, found integer"),
    ("s", "on call m -> s", "", "",
     "14:25: error: no method 'm' in interface 'p.I' (a method or broadcast declared "
     "with a selector is named 'name:selector')"),
    ("s", "on call q -> s", "", "", "14:25: error: no method 'q' in interface 'p.I'"),
    ("s", "on set nope -> s", "", "",
     "14:24: error: no attribute 'nope' in interface 'p.I'"),
    ("s", "on signal b:x -> s", "", "",
     "14:27: error: no broadcast 'b:x' in interface 'p.I' (a method or broadcast "
     "declared with a selector is named 'name:selector')"),
    ("s", "on call m:one [y > 0] -> s", "", "",
     "14:32: error: unknown state variable, argument, attribute, constant or "
     "enumerator 'y'"),
    ("s", "on call k [x > 0] -> s", "", "",       # x: an argument of m:one only
     "14:28: error: unknown state variable, argument, attribute, constant or "
     "enumerator 'x'"),
    ("s", "on call m:one [p->g > 0] -> s", "", "",
     "14:35: error: 'p' is a p.I.P, which has no field 'g'"),
    ("s", "on call m:one [x->g > 0] -> s", "", "",
     "14:35: error: 'x' is of type Int32, which has no field 'g'"),
    ("s", "on call m:one -> s { x = 1 }", "", "",
     "14:38: error: 'x' is not a state variable of the contract; only those are "
     "assigned"),
    ("s", "on call k -> s { pv->z = 1 }", "", "",
     "14:38: error: 'pv' is a p.I.P, which has no field 'z'"),
    ("s", "on call m:one [errordef.BAD == errorval] -> s", "", "",
     "14:32: error: 'errordef.BAD' needs an 'on error' trigger, this one is 'on call'"),
    ("s", "on error m:one [errordef.WORSE == errorval] -> s", "", "",
     "14:33: error: method 'm:one' has no error 'WORSE'"),
    ("s", "on error k [errordef.BAD == errorval] -> s", "", "",
     "14:29: error: method 'k' has no error 'BAD'"),
])
def test_bad_contracts(error_of, initial, transition, extra, vars, message):
    fidl = CONTRACT.format(initial=initial, transition=transition, extra=extra,
                           vars=vars)
    assert error_of({"m.fidl": fidl}, "m.fidl") == "m.fidl:" + message


@pytest.mark.parametrize("fidl, message", [
    ("package p\ninterface I {\n  contract { PSM { initial s state s { } } }\n"
     "  contract { PSM { initial s state s { } } }\n}\n",
     "m.fidl:4:3: error: interface 'I' has a second contract (first at m.fidl:3:3)"),
    ("package p\ninterface I {\n  method m { }  method m { }\n"
     "  contract { PSM { initial s state s { on call m -> s } } }\n}\n",
     "m.fidl:4:48: error: method 'm' is declared 2 times in 'p.I'; give each a "
     "selector"),
    ("package p\ntypeCollection T { const Boolean B = errorval == 1 }\n",
     "m.fidl:2:38: error: 'errorval' has a value only in a contract, where a "
     "method's error is answered"),
    ("package p\ntypeCollection T { enumeration E { A = errordef.X } }\n",
     "m.fidl:2:40: error: 'errordef.X' has a value only in a contract, where a "
     "method's error is answered"),
])
def test_contract_elements_out_of_place(error_of, fidl, message):
    assert error_of({"m.fidl": fidl}, "m.fidl") == message


# --- attributes that cannot be parameters ----------------------------------

@pytest.mark.parametrize("decl, attr, message", [
    ("union U { Int8 a  String b }", "U",
     "attribute 'x' of type p.I.U cannot be a parameter: union 'p.I.U' has no fixed "
     "layout (a parameter holds one type)"),
    ("map M { String to Int8 }", "M",
     "attribute 'x' of type p.I.M cannot be a parameter: map 'p.I.M' has no fixed size"),
    ("struct S { Int8 a }", "S[]",
     "attribute 'x' of type p.I.S[] cannot be a parameter: arrays of structs "
     "('p.I.S') are not supported"),
    ("typedef T is Int8", "String[]",
     "attribute 'x' of type String[] cannot be a parameter: arrays of String are not "
     "supported (array elements must have a fixed size)"),
    ("enumeration E { A }", "E[]",
     "attribute 'x' of type p.I.E[] cannot be a parameter: arrays of enumerations "
     "('p.I.E') are not supported by the schema format"),
    ("struct S polymorphic { Int8 a }", "S",
     "attribute 'x' of type p.I.S cannot be a parameter: struct 'p.I.S' is "
     "polymorphic (its fields depend on the value)"),
    ("struct B polymorphic { Int8 a }  struct M extends B { }  struct S extends M "
     "{ Int8 b }", "S",
     "attribute 'x' of type p.I.S cannot be a parameter: struct 'p.I.S' extends "
     "polymorphic struct 'p.I.B' (its fields depend on the value)"),
    ("struct S { Int8 a  U u }  union U { Int8 b }", "S",
     "attribute 'x' (field 'u') of type p.I.U cannot be a parameter: union 'p.I.U' "
     "has no fixed layout (a parameter holds one type)"),
    ("struct S { }", "S",
     "attribute 'x' of type p.I.S cannot be a parameter: struct 'p.I.S' has no fields"),
    # Franca's placeholder type: accepted, but it has no representation
    ("typedef T is Int8", "undefined",
     "attribute 'x' of type undefined cannot be a parameter: 'undefined' is Franca's "
     "placeholder for a type not given, it has no wire or storage representation"),
    ("typedef Later is undefined", "Later",
     "attribute 'x' of type p.I.Later cannot be a parameter: 'undefined' is Franca's "
     "placeholder for a type not given, it has no wire or storage representation"),
    ("struct S { Int8 a  undefined later }", "S",
     "attribute 'x' (field 'later') of type undefined cannot be a parameter: "
     "'undefined' is Franca's placeholder for a type not given, it has no wire or "
     "storage representation"),
    ("typedef T is Int8", "undefined[]",
     "attribute 'x' of type undefined[] cannot be a parameter: 'undefined' is Franca's "
     "placeholder for a type not given, it has no wire or storage representation"),
])
def test_unmappable_attributes(error_of, decl, attr, message):
    fidl = f"package p\ninterface I {{\n  {decl}\n  attribute {attr} x\n}}\n"
    assert error_of({"m.fidl": fidl}, "m.fidl") == "m.fidl:4:" + \
        str(14 + len(attr)) + ": error: " + message


# --- the deployment --------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("attribute nope { Unit = \"V\" }",
     "3:1: error: no attribute 'nope' in interface 'p.Psu'"),
    ("attribute vset { Colour = \"red\" }",
     "3:18: error: unknown key 'Colour' in attribute 'vset', expected one of Unit, "
     "Minimum, Maximum, Step, Default, Persistent, WritableBy, UpdateClass, MaxSize, "
     "MaxLength, Deadband, MaxRateHz, ScpiKeyword, ScpiAccess, ScpiEnum, ScpiQuestionable, ScpiQuestionableLevel, ScpiOperation, FleetPublish, FleetTopic, "
     "FleetDeadband, FleetMaxRateHz, FleetRetain, FleetCommand"),
    ("attribute vset { Unit = \"V\" Unit = \"A\" }",
     "3:29: error: duplicate key 'Unit' in attribute 'vset'"),
    ("attribute vset { }\nattribute vset { }",
     "4:1: error: duplicate section 'attribute vset' (first at psu.fdepl:3:1)"),
    ("attribute vset { Minimum = \"0\" }",
     "3:28: error: 'Minimum' of 'vset': found \"0\", expected a number"),
    ("attribute small { Maximum = 200 }",
     "3:29: error: 'Maximum' of 'small': 200 out of range of int8"),
    ("attribute vset { Default = 1e400 }",
     "3:28: error: 'Default' of 'vset': the number is out of range of double"),
    ("attribute vset { Maximum = -2e308 }",
     "3:28: error: 'Maximum' of 'vset': the number is out of range of double"),
    ("attribute small { Default = 1.5 }",
     "3:29: error: 'Default' of 'small': found 1.5, expected an integer (int8)"),
    ("attribute vset { Minimum = 0 Maximum = 30 Default = 40 }",
     "3:43: error: default 40 above max 30 for 'vset'"),
    ("attribute vset { Minimum = 0 Default = -1 }",
     "3:30: error: default -1 below min 0 for 'vset'"),
    ("attribute vset { Minimum = 10 Maximum = 5 }",
     "3:18: error: min 10 above max 5 for 'vset'"),
    ("attribute vset { Step = 0 }",
     "3:18: error: step 0 is not positive for 'vset'"),
    ("attribute vmeas { Persistent = true }",
     "3:19: error: 'Persistent' on readonly attribute 'vmeas': only writable "
     "parameters are restored at start"),
    ("attribute vmeas { WritableBy = \"ops\" }",
     "3:19: error: 'WritableBy' on readonly attribute 'vmeas': nobody may write it"),
    ("attribute vset { WritableBy = \"Bad Group\" }",
     "3:31: error: 'WritableBy' of 'vset': \"Bad Group\" is not a Unix group name"),
    ("attribute vset { Persistent = yes }",
     "3:31: error: 'Persistent' of 'vset': found yes, expected true or false"),
    ("attribute vset { UpdateClass = often }",
     "3:32: error: 'UpdateClass' of 'vset': found often, expected one of constant, "
     "rare, setting, live"),
    ("attribute vset { MaxSize = 10 }",
     "3:18: error: 'MaxSize' does not apply to 'vset' of type Double (only to String "
     "and ByteBuffer attributes)"),
    ("attribute name { Unit = \"V\" }",
     "3:18: error: 'Unit' does not apply to 'name' of type String (only to integer "
     "and floating-point attributes (and arrays of them))"),
    ("attribute name { MaxLength = 3 }",
     "3:18: error: 'MaxLength' does not apply to 'name' of type String (only to "
     "array attributes)"),
    ("attribute name { MaxSize = 0 }",
     "3:28: error: 'MaxSize' of 'name': found 0, expected an integer from 1 to 65536"),
    ("attribute name { MaxSize = 4 Default = \"hello\" }",
     "3:30: error: default is 5 bytes long, above size 4 for 'name'"),
    ("attribute arr { MaxLength = 2 Default = {1, 2, 3} }",
     "3:31: error: default has 3 elements, above count 2 for 'arr'"),
    ("attribute arr { Default = 1 }",
     "3:27: error: 'Default' of 'arr': found 1, expected an array '{a, b, ...}'"),
    ("attribute state { Default = MAYBE }",
     "3:29: error: 'Default' of 'state': found MAYBE, expected an enumerator of "
     "p.Psu.State (OFF, ON)"),
    ("attribute blob { Default = \"0g\" }",
     "3:28: error: 'Default' of 'blob': \"0g\" is not hexadecimal bytes (two digits "
     "per byte)"),
    ("attribute vset { field a { } }",
     "3:18: error: 'field' sections apply to structs; 'vset' is of type Double"),
    ("attribute pair { field c { } }",
     "3:18: error: struct 'pair' (p.Psu.Pair) has no field 'c'"),
    ("attribute pair { Maximum = 3 }",
     "3:18: error: 'Maximum' applies to the fields of struct 'pair'; put it in a "
     "'field NAME { ... }' section"),
    ("attribute pair { field a { field b { } } }",
     "3:28: error: 'field' sections apply to structs; 'pair.a' is of type Double"),
    ("method run { }",
     "3:1: error: no method 'run' in interface 'p.Psu'"),
    ("interface x { }",
     "3:1: error: found section 'interface', expected 'attribute NAME', "
     "'method NAME' or 'broadcast NAME'"),
    ("attribute vset { section { } }",
     "3:18: error: found section 'section' in attribute 'vset', expected "
     "'field NAME { ... }' or a key"),
])
def test_deployment_errors(error_of, body, message):
    assert error_of({"psu.fidl": PSU, "psu.fdepl": depl(body)}, "psu.fdepl") == \
        "psu.fdepl:" + message


def test_unknown_specification(error_of):
    assert error_of({"psu.fidl": PSU, "psu.fdepl":
                     'import "psu.fidl"\ndefine other.spec for interface p.Psu { }\n'},
                    "psu.fdepl") == ("psu.fdepl:2:8: error: unknown deployment "
                                     "specification 'other.spec', expected "
                                     "'parambus.deployment'")


def test_deployment_for_type_collection(error_of):
    assert error_of({"psu.fidl": PSU, "psu.fdepl":
                     'import "psu.fidl"\ndefine parambus.deployment for '
                     'typeCollection p.T { }\n'}, "psu.fdepl") == (
        "psu.fdepl:2:8: error: found deployment for 'typeCollection', expected "
        "'interface' (parambus deploys interfaces)")


def test_deployment_unknown_interface(error_of):
    assert error_of({"psu.fidl": PSU, "psu.fdepl":
                     'import "psu.fidl"\ndefine parambus.deployment for '
                     'interface p.Nope { }\n'}, "psu.fdepl") == (
        "psu.fdepl:2:42: error: unknown interface 'p.Nope'")


def test_deployment_without_fidl(error_of):
    assert error_of({"psu.fdepl": "define parambus.deployment for interface p.Psu { }\n"},
                    "psu.fdepl") == ("psu.fdepl:1:1: error: deployment imports no .fidl "
                                     "file, expected 'import \"NAME.fidl\"'")


def test_several_interfaces_need_a_choice(error_of):
    fidl = "package p\ninterface A { attribute Int8 x }\ninterface B { attribute Int8 y }\n"
    assert error_of({"m.fidl": fidl}, "m.fidl") == (
        "m.fidl:1:1: error: several interfaces (p.A, p.B); choose one with --interface")


def test_reserved_namespace_key_is_a_warning(model_of, tmp_path):
    write(tmp_path, {"psu.fidl": PSU})
    # Fleet keys are implemented in attribute sections (test_fleet.py);
    # directly in the define they are still reserved
    files = {"psu.fdepl": depl('attribute vset { ScpiKeyword = "VOLT" } FleetTopic = 3')}
    write(tmp_path, files)
    model, diag = build("psu.fdepl")
    # ScpiKeyword is implemented on attributes now (test_scpi.py)
    assert [str(w) for w in diag.warnings] == [
        "psu.fdepl:3:41: warning: key 'FleetTopic' belongs to the reserved namespace "
        "'Fleet' and is not implemented yet; ignored"]
    assert model.parameters[0].unit is None


# --- limits of the schema format and of C ---------------------------------------

def test_parameter_name_too_long(error_of):
    long = "a" * 120
    fidl = (f"package p\ninterface I {{\n struct S {{ Int8 {long} }}\n"
            " attribute S outer_name\n}\n")
    assert error_of({"m.fidl": fidl}, "m.fidl") == (
        f"m.fidl:3:18: error: parameter name 'outer_name.{long}' is 131 bytes long, "
        "above the limit of 127")


def test_c_name_clash(error_of):
    fidl = ("package p\ninterface I {\n struct S { Int8 b }\n attribute S a\n"
            " attribute Int8 a_b\n}\n")
    assert error_of({"m.fidl": fidl}, "m.fidl") == (
        "m.fidl:5:17: error: C name 'I_A_B' of parameter 'a_b' clashes with "
        "parameter 'a.b'; rename one or use --prefix")


def test_non_numeric_enumerator_string_is_numbered_with_a_warning(tmp_path, monkeypatch):
    """Common API's own test files write `E1 = "A"`: the file is accepted,
    the enumerator numbered by position, and the user told where."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"m.fidl": "package p\ninterface I {\n  attribute E x\n"
                               "  enumeration E { E1 = \"A\" E2 E3 = \"0x05\" }\n}\n"})
    model, diag = build("m.fidl")
    enum = next(p for p in model.parameters if p.name == "x").enum
    assert [(e.name, e.value) for e in enum.enumerators] == [("E1", 0), ("E2", 1), ("E3", 5)]
    assert [str(w) for w in diag.warnings] == [
        "m.fidl:4:24: warning: enumerator 'E1': value \"A\" is not an integer; numbered 0 by position"]
