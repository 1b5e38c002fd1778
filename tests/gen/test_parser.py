"""Front end: grammar -> syntax tree, and imports across files."""

from importlib import resources

import pytest
from lark import Lark

from pbustest.gen import FIXTURES, build, write
from pbusgen import loader, resolver, syntax as S
from pbusgen.errors import Diagnostics, GenError
from pbusgen.frontend import parse_annotation_block, parse_fdepl, parse_fidl

EVERYTHING = '''\
<** @description: file-level annotation **>
package org.example.every   // trailing comment

import model "a.fidl"
import org.other.Types.* from "b.fidl"
import org.other.Types.Point from "b.fidl"

/* block
   comment */
<** @description: Collection
    spanning lines.
    @author: someone
    @deprecated: use v2 **>
typeCollection Types {
    version { major 2 minor 5 }
    public array Names of String
    enumeration Color { RED GREEN = 5, BLUE = 0x10 OLD = "7" }
    enumeration MoreColor extends Color { PINK }
    struct Pt polymorphic { Int32 x  Int32 y }
    struct Pt3 extends Pt { Int32[] z }
    union Any extends Base { UInt32 n  String s }
    map Dict { String to Pt }
    typedef Id is UInt64
    const Double PI = 3.14
    const Int32 N = (1 + 2) * 3 - -4 / 2
    const Boolean B = 1 < 2 && !false || N == 7
    const Pt ORIGIN = { x: 0, y: 0 }
    const Int32[] LIST = [1, 2, 3]
    const Dict D = [ "a" => { x: 1, y: 2 } ]
}

typeCollection { typedef Anonymous is Int8 }

interface Thing extends Base manages Other, Other2 {
    version { major 1 minor 0 }
    <** @description: an attribute **>
    attribute Int32 a readonly noSubscriptions
    attribute Integer(-10, maxInt) r noRead
    attribute Integer(minInt, 0x10) r2
    attribute Integer plain
    attribute Types.Pt[] pts
    attribute ^version escaped
    method ping fireAndForget { in { UInt8 n } }
    method get:byName {
        in { String name }
        out { Int32 value  Double[] more }
        error Types.Color
    }
    method other { error extends Types.Color { FAIL = 3 } }
    broadcast changed selective { out { Int32 value } }
    broadcast plain_bc { }
    const Float F = 1.5f
    enumeration Local { A }
    contract {
        vars { Int32 n; }
        PSM {
            initial idle
            state idle { on call ping -> busy }    // comment in a contract
            state busy { on respond get [n >= 1] -> idle }
        }
    }
}
'''


def test_every_construct_parses():
    f = parse_fidl(EVERYTHING, "every.fidl")
    assert f.package == "org.example.every"
    assert f.annotations[0].text == "file-level annotation"
    assert [(i.uri, i.namespace, i.wildcard) for i in f.imports] == [
        ("a.fidl", None, False), ("b.fidl", "org.other.Types", True),
        ("b.fidl", "org.other.Types.Point", False)]

    tc, anon = f.type_collections
    assert tc.name == "Types" and (tc.version.major, tc.version.minor) == (2, 5)
    assert [(a.tag, a.text) for a in tc.annotations] == [
        ("description", "Collection spanning lines."), ("author", "someone"),
        ("deprecated", "use v2")]
    kinds = [type(t).__name__ for t in tc.types]
    assert kinds == ["ArrayDecl", "EnumerationDecl", "EnumerationDecl", "StructDecl",
                     "StructDecl", "UnionDecl", "MapDecl", "TypedefDecl"]
    color = tc.types[1]
    assert [e.name for e in color.enumerators] == ["RED", "GREEN", "BLUE", "OLD"]
    assert color.enumerators[2].value.value == 16
    assert color.enumerators[3].value.value == "7"
    assert tc.types[2].base[0] == "Color"
    assert tc.types[3].polymorphic and tc.types[4].base[0] == "Pt"
    assert tc.types[4].fields[0].is_array
    assert (tc.types[6].key.name, tc.types[6].value.name) == ("String", "Pt")
    assert [c.name for c in tc.constants] == ["PI", "N", "B", "ORIGIN", "LIST", "D"]
    assert isinstance(tc.constants[3].value, S.StructInit)
    assert isinstance(tc.constants[4].value, S.ArrayInit)
    assert isinstance(tc.constants[5].value, S.MapInit)
    assert anon.name is None and anon.types[0].name == "Anonymous"

    itf = f.interfaces[0]
    assert itf.name == "Thing" and itf.base[0] == "Base"
    assert [m[0] for m in itf.manages] == ["Other", "Other2"]
    assert itf.has_contract
    a, r, r2, plain, pts, esc = itf.attributes
    assert (a.readonly, a.no_read, a.no_subscriptions) == (True, False, True)
    assert a.annotation("description") == "an attribute"
    assert (r.type.lower, r.type.upper, r.no_read) == (-10, None, True)
    assert (r2.type.lower, r2.type.upper) == (None, 16)
    assert (plain.type.name, plain.type.lower, plain.type.upper) == ("Integer", None, None)
    assert pts.is_array and pts.type.name == "Types.Pt"
    assert esc.name == "escaped" and esc.type.name == "version"
    ping, get, other = itf.methods
    assert ping.fire_and_forget and ping.in_args[0].name == "n"
    assert get.selector == "byName" and get.error_ref[0] == "Types.Color"
    assert [x.name for x in get.out_args] == ["value", "more"] and get.out_args[1].is_array
    assert other.error_enum.base[0] == "Types.Color"
    assert other.error_enum.enumerators[0].name == "FAIL"
    assert itf.broadcasts[0].selective and not itf.broadcasts[1].selective
    assert itf.constants[0].value.value == 1.5


def test_annotation_before_error():
    """Franca's FMethod: `(errorComment=FAnnotationBlock)? 'error' ...`."""
    f = parse_fidl('''package p
interface I {
    method a {
        in { Int8 x }
        <** @description: how a fails **>
        error E
    }
    method b {
        out { Int8 y }
        <** @description: how b fails
            @see: the manual **>
        error extends E { LATE }
    }
    method c { <** @description: c's own **> error { X Y } }
    enumeration E { BAD }
}
''', "x.fidl")
    a, b, c = f.interfaces[0].methods
    assert a.error_ref[0] == "E" and [x.text for x in a.error_annotations] == ["how a fails"]
    assert [(x.tag, x.text) for x in b.error_annotations] == [
        ("description", "how b fails"), ("see", "the manual")]
    assert b.error_enum.base[0] == "E" and b.error_enum.loc.line == 12
    assert (b.error_enum.loc.line, b.error_enum.loc.column) == (12, 9)
    assert c.error_enum.annotation("description") == "c's own"


def test_annotation_before_error_resolves(model_of):
    model = model_of({"m.fidl": "package p\ninterface I {\n"
                                "  method a { <** @description: why **> error E }\n"
                                "  method c { <** @description: own **> error { X Y } }\n"
                                "  enumeration E { BAD }  attribute Int8 q\n}\n"}, "m.fidl")
    a, c = model.interface.methods
    assert (a.error.fqn, a.error_desc) == ("p.I.E", "why")
    assert (c.error.fqn, c.error.desc, c.error_desc) == ("p.I.cError", "own", "own")


EVERYTHING_FIDL = FIXTURES / "franca" / "everything.fidl"


def test_everything_fixture_uses_every_rule_and_terminal():
    """The fixture exercises the whole grammar: every rule (each alias) is in
    its parse tree, every terminal among its tokens (comments and white space
    included)."""
    grammar = resources.files("pbusgen").joinpath("grammar/franca.lark").read_text()
    seen = set()
    ignored = {name: (lambda tok: seen.add(tok.type))
               for name in ("LINE_COMMENT", "BLOCK_COMMENT", "WS")}
    parser = Lark(grammar, parser="lalr", lexer="contextual", keep_all_tokens=True,
                  maybe_placeholders=False, lexer_callbacks=ignored)
    tree = parser.parse(EVERYTHING_FIDL.read_text())
    seen |= {tok.type for tok in tree.scan_values(lambda v: True)}
    assert {t.name for t in parser.terminals} - seen == set()
    rules = {str(r.alias or r.origin.name) for r in parser.rules
             if not str(r.origin.name).startswith("_")
             and not (r.options.expand1 and r.alias is None)}
    assert rules - {str(t.data) for t in tree.iter_subtrees()} == set()


def test_everything_fixture_parses():
    f = parse_fidl(EVERYTHING_FIDL.read_text(), "everything.fidl")
    assert [(i.namespace, i.wildcard) for i in f.imports] == [
        (None, False), ("org.example.lib.Lib", True),
        ("org.example.lib.Lib.Celsius", False)]
    device = f.interfaces[0]
    get_by_name = device.methods[1]
    assert (get_by_name.selector, get_by_name.error_annotations[0].text) == (
        "byName", "why it failed")
    c = device.contract
    assert [v.name for v in c.variables] == ["count", "busy", "last", "samples"]
    assert c.variables[0].value.value == 0 and c.variables[1].value is None
    assert c.initial == "idle" and [s.name for s in c.states] == ["idle", "working"]
    assert c.states[0].annotation("description") == "waiting for a call"
    kinds = [(t.trigger.kind, t.trigger.name, t.trigger.selector)
             for s in c.states for t in s.transitions]
    assert kinds == [("call", "get", "byName"), ("call", "set", None),
                     ("set", "color", None), ("update", "sample", None),
                     ("call", "reset", None), ("respond", "get", "byName"),
                     ("error", "get", "byName"), ("error", "set", None),
                     ("respond", "get", "byId"), ("signal", "changed", "color"),
                     ("signal", "tick", None)]
    respond = c.states[1].transitions[0]
    first_if = respond.action.statements[0]
    assert isinstance(first_if, S.IfStatement)
    assert isinstance(first_if.otherwise, S.IfStatement)         # else if
    assert isinstance(first_if.otherwise.then, S.Assignment)
    assert isinstance(first_if.otherwise.otherwise, S.Block)
    assert respond.action.statements[1].otherwise is None
    error_guard = c.states[1].transitions[1].guard
    assert isinstance(error_guard.left, S.CurrentError)
    assert isinstance(error_guard.right, S.ErrorDefRef) and error_guard.right.name == "DENIED"
    assign = c.states[0].transitions[1].action.statements[1]
    assert (assign.target.name, assign.target.fields[0][0]) == ("last", "x")
    assert [t.name for t in device.types] == ["Failure", "Local"]      # after the contract


def test_locations_point_at_names():
    f = parse_fidl("package p\ninterface I {\n  attribute Int32 speed\n}\n", "x.fidl")
    attr = f.interfaces[0].attributes[0]
    assert (attr.loc.line, attr.loc.column) == (3, 19)
    assert (attr.type.loc.line, attr.type.loc.column) == (3, 13)


def test_annotation_block_tags():
    out = parse_annotation_block("<** @description : one\n   two  @see: x\\@y **>")
    assert [(a.tag, a.text) for a in out] == [("description", "one two"), ("see", "x@y")]


def test_commonapi_examples_parse_and_resolve():
    files = sorted((FIXTURES / "commonapi").glob("*.fidl"))
    assert len(files) == 9
    for path in files:
        sources = loader.load(str(path))
        r = resolver.resolve(sources, Diagnostics())
        assert r.interfaces or r.type_collections, path


@pytest.mark.parametrize("text, message", [
    ("package a\ninterface X {\n  attribute Int32\n}\n",
     "x.fidl:4:1: error: found '}', expected one of '[', identifier"),
    ("package a interface X { version { major 1 } }",
     "x.fidl:1:43: error: found '}', expected 'minor'"),
    ("package a interface X {",
     "x.fidl:1:24: error: found end of file, expected one of 'array', 'attribute', "
     "'broadcast', 'const', 'contract', 'enumeration', 'map', 'method', 'public', "
     "'struct', 'typedef', 'union', 'version', '}', annotation '<** ... **>'"),
    ("interface X { }", "x.fidl:1:1: error: found 'interface', expected one of "
                        "'package', annotation '<** ... **>'"),
    ('package a typeCollection T { const String S = "a\\q" }',
     "x.fidl:1:47: error: unknown escape '\\q' in string"),
    # what never ends is reported where it starts (not as a bare '/')
    ("package a\ntypeCollection T {\n  typedef A is Int8 /* open\n}\n",
     "x.fidl:3:21: error: unterminated comment"),
    ("package a\n/* closed */ typeCollection T { } /* open",
     "x.fidl:2:35: error: unterminated comment"),
    ('package a\ntypeCollection T {\n  const String S = "abc\n}\n',
     "x.fidl:3:20: error: unterminated string"),
    ("package a\ntypeCollection T { const String S = 'it\\'s\n}\n",
     "x.fidl:2:37: error: unterminated string"),
    ('package a\ntypeCollection T { const String S = "a /* b" }\n'
     'typeCollection U { const String S = "c\n',
     "x.fidl:3:37: error: unterminated string"),
    ("package a\n<** @description: never closed\ninterface I { }\n",
     "x.fidl:2:1: error: unterminated annotation"),
    ("package a\ninterface I {\n  <** @description: a ** > b\n  attribute Int8 x\n}\n",
     "x.fidl:3:3: error: unterminated annotation"),
])
def test_syntax_errors(text, message):
    with pytest.raises(GenError) as info:
        parse_fidl(text, "x.fidl")
    assert str(info.value) == message


def test_fdepl_parses_sections_and_values():
    f = parse_fdepl('import "x.fidl"\n'
                    'define parambus.deployment for interface a.B {\n'
                    '  attribute v { Unit = "V" Minimum = -1.5 Maximum = 0x1F '
                    'Default = {1, 2,} UpdateClass = live\n'
                    '    field f { Persistent = true } }\n'
                    '  method m { ScpiKeyword = "X" }\n}\n', "d.fdepl")
    assert f.imports[0][0] == "x.fidl"
    d = f.defines[0]
    assert (d.spec, d.target_kind, d.target) == ("parambus.deployment", "interface", "a.B")
    attr = d.items[0]
    assert (attr.kind, attr.name) == ("attribute", "v")
    props = {p.key: p.value for p in attr.items if isinstance(p, S.DProperty)}
    assert (props["Unit"].kind, props["Unit"].value) == ("string", "V")
    assert (props["Minimum"].kind, props["Minimum"].value) == ("float", -1.5)
    assert props["Maximum"].value == 31
    assert [v.value for v in props["Default"].value] == [1, 2]
    assert (props["UpdateClass"].kind, props["UpdateClass"].value) == ("ident", "live")
    assert attr.items[-1].kind == "field" and attr.items[-1].name == "f"
    assert (props["Minimum"].loc.line, props["Minimum"].loc.column) == (3, 38)


def test_fdepl_unterminated():
    for text, message in [
            ('define parambus.deployment for interface a.B {\n'
             '  attribute v { Unit = "V }\n}\n', "d.fdepl:2:24: error: unterminated string"),
            ('define parambus.deployment for interface a.B {\n /* x\n}\n',
             "d.fdepl:2:2: error: unterminated comment")]:
        with pytest.raises(GenError) as info:
            parse_fdepl(text, "d.fdepl")
        assert str(info.value) == message


def test_fdepl_syntax_error():
    with pytest.raises(GenError) as info:
        parse_fdepl("define parambus.deployment for interface a.B {\n"
                    "  attribute v { Unit = }\n}\n", "d.fdepl")
    assert str(info.value) == ("d.fdepl:2:24: error: found '}', expected one of "
                               "'-', '{', identifier, integer, number, string")


# --- imports across files ------------------------------------------------

def test_imports_relative_to_importing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "main.fidl": 'package m\nimport model "sub/a.fidl"\n'
                     'interface I { attribute t.T.E e }\n',
        "sub/a.fidl": 'package t\nimport model "b.fidl"\n'
                      'typeCollection T { typedef E is t.U.Inner }\n',
        "sub/b.fidl": 'package t\ntypeCollection U { typedef Inner is Int8 }\n',
    })
    sources = loader.load("main.fidl")
    assert [f.path for f in sources.fidl_files] == ["main.fidl", "sub/a.fidl",
                                                     "sub/b.fidl"]
    assert sources.file_names == ["main.fidl", "a.fidl", "b.fidl"]
    model, _ = build("main.fidl")
    assert model.parameters[0].type == "int8"


def test_imports_through_include_dirs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "src/main.fidl": 'package m\nimport lib.Types.* from "types.fidl"\n'
                         'interface I { attribute Speed s }\n',
        "inc/types.fidl": 'package lib\ntypeCollection Types { typedef Speed is UInt16 }\n',
    })
    with pytest.raises(GenError) as info:
        build("src/main.fidl")
    assert str(info.value) == ("src/main.fidl:2:25: error: imported file 'types.fidl' "
                               "not found (looked for 'src/types.fidl')")
    model, _ = build("src/main.fidl", include=["inc"])
    assert model.parameters[0].type == "uint16"


def test_diamond_import_loads_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {
        "main.fidl": 'package m\nimport model "a.fidl"\nimport model "b.fidl"\n'
                     'interface I { attribute c.C.X x }\n',
        "a.fidl": 'package a\nimport model "c.fidl"\ntypeCollection A { typedef Y is Int8 }\n',
        "b.fidl": 'package b\nimport model "c.fidl"\ntypeCollection B { typedef Z is Int8 }\n',
        "c.fidl": 'package c\ntypeCollection C { typedef X is Int8 }\n',
    })
    sources = loader.load("main.fidl")
    assert sources.file_names == ["main.fidl", "a.fidl", "c.fidl", "b.fidl"]
