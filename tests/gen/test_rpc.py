"""The RPC back end (--rpc-header, --rpc-source, --rpc-types-source): the
generated C of every fixture with methods or broadcasts compiles (C11, and
the header as C++), a byte-exact golden file of a small one, CallableBy, and
the one-line errors for names that cannot be C. The codec's round trip runs
in C: tests/gen/c/test-rpc-codec.c (suite gen-rpc-codec)."""

import shutil
import subprocess

import pytest

from pbustest.gen import FIXTURES, GOLDEN, ROOT, build, update_golden, write
from pbusgen import cli, rpc
from pbusgen.errors import GenError

CASES = {
    # name: (input relative to the fixtures, extra options)
    "E01HelloWorld": ("commonapi/E01HelloWorld.fidl", []),
    "E03Methods": ("commonapi/E03Methods.fidl", []),
    "E04PhoneBook": ("commonapi/E04PhoneBook.fidl", []),
    "E05Device": ("commonapi/E05Manual.fidl",
                  ["--interface", "commonapi.examples.E05Device"]),
    "E07Mainloop": ("commonapi/E07Mainloop.fidl", []),
    "E08CrashRecovery": ("commonapi/E08CrashRecovery.fidl", []),
    "alltypes": ("alltypes/alltypes.fdepl", []),
    "alltypes-rpc": ("rpc/alltypes-rpc.fdepl", ["--prefix", "ar"]),
}
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
STRICT = CFLAGS + ["-D_GNU_SOURCE", "-Wshadow", "-Wconversion", "-pedantic"]


def generate(name, out, separate=True):
    src, extra = CASES[name]
    paths = {"h": out / f"{name}-rpc.h", "c": out / f"{name}-rpc.c",
             "types": out / f"{name}-rpc-types.c"}
    args = ["--rpc-header", str(paths["h"]), "--rpc-source", str(paths["c"])]
    if separate:
        args += ["--rpc-types-source", str(paths["types"])]
    assert cli.main([*args, *extra, str(FIXTURES / src)]) == 0
    return paths


def cc(flags, source, tmp_path):
    subprocess.run(["cc", *flags, "-I", str(ROOT / "include"), "-I", str(tmp_path), "-c",
                    str(source), "-o", str(tmp_path / "out.o")], check=True)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("name", sorted(CASES))
def test_rpc_compiles(tmp_path, name):
    paths = generate(name, tmp_path)
    cc(CFLAGS, paths["c"], tmp_path)
    cc(STRICT, paths["c"], tmp_path)
    cc(STRICT, paths["types"], tmp_path)
    combined = generate(name, tmp_path / "one", separate=False)
    cc(CFLAGS, combined["c"], tmp_path / "one")
    if shutil.which("c++"):
        cpp = tmp_path / "use.cpp"
        cpp.write_text(f'#include "{name}-rpc.h"\n#include "{name}-rpc.h"\n'
                       "int main() { return 0; }\n")
        subprocess.run(["c++", "-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror",
                        "-I", str(ROOT / "include"), "-I", str(tmp_path), "-c", str(cpp),
                        "-o", str(tmp_path / "use.o")], check=True)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_table_and_rpc_headers_together(tmp_path):
    """alltypes' enumeration Mode is a parameter's and an argument's: both
    headers define it, under one guard."""
    rpc = generate("alltypes", tmp_path)
    assert cli.main(["--c-header", str(tmp_path / "alltypes.h"),
                     str(FIXTURES / "alltypes/alltypes.fdepl")]) == 0
    assert "#ifndef ALL_TYPES_TYPE_MODE_DEFINED" in (tmp_path / "alltypes.h").read_text()
    assert "#ifndef ALL_TYPES_TYPE_MODE_DEFINED" in rpc["h"].read_text()
    main = tmp_path / "both.c"
    main.write_text('#include "alltypes.h"\n#include "alltypes-rpc.h"\n'
                    "int f(void);\nint f(void) { return (int)ALL_TYPES_MODE_TEST; }\n")
    cc(STRICT, main, tmp_path)


@pytest.mark.parametrize("ext", ["h", "c"])
def test_rpc_golden(tmp_path, ext):
    out = generate("E03Methods", tmp_path, separate=False)[ext].read_bytes()
    golden = GOLDEN / f"E03Methods-rpc.{ext}"
    if update_golden():
        golden.write_bytes(out)
    assert golden.exists(), f"{golden} missing: run with UPDATE_GOLDEN=1"
    assert out == golden.read_bytes(), f"E03Methods-rpc.{ext} differs from {golden}"


def test_rpc_api_and_numbering(tmp_path):
    paths = generate("alltypes-rpc", tmp_path)
    h, c = paths["h"].read_text(), paths["c"].read_text()
    # base interface first, then own, in declaration order; selectors in names
    assert '{"ping", 0, "wheel"},\n\t{"echo", 0, NULL},' in c
    assert '{"reset", PBUS_RPC_FIRE_AND_FORGET, "operators"}' in c
    assert '{"describe:short", 0, NULL},\n\t{"describe:long", 0, NULL}' in c
    assert '{"tick", false},\n\t{"changed", false},\n\t{"alarm", true},' in c
    assert ('const struct pbus_rpc_interface ar_AllRpc_interface = {\n'
            '\t"org.example.rpc.AllRpc", 2, 5, 10, 4,') in c
    assert "#define AR_ALL_RPC_VERSION_MAJOR 2" in h
    for decl in (
            "int ar_AllRpc_lookup(struct ar_client_AllRpc *client, const char *key, "
            "enum ar_lookup_error *error, struct ar_more_value *found, "
            "struct ar_dictionary *dict, struct pbus_rpc_arena *arena);",
            "int ar_AllRpc_fixedOnly(struct ar_client_AllRpc *client, "
            "const struct ar_shared_point *p, const struct ar_base3_d *q, "
            "struct ar_shared_point *r2, enum ar_level *l);",
            "int ar_AllRpc_reset(struct ar_client_AllRpc *client, enum ar_level level, "
            "const char *why);",
            "int ar_AllRpc_shapes_async(struct ar_client_AllRpc *client, "
            "const struct ar_shape *s, const struct ar_array_shape *many,",
            "int ar_client_AllRpc_subscribe_alarm(struct ar_client_AllRpc *client, "
            "ar_AllRpc_alarm_fn fn, void *userdata);",
            "int ar_server_AllRpc_fire_alarm_selective(struct ar_server_AllRpc *server, "
            "const uint64_t *receivers,",
            "size_t ar_server_AllRpc_subscribers_alarm(struct ar_server_AllRpc *server, "
            "uint64_t *ids, size_t capacity);",
            "int (*on_alarm_subscription)(struct ar_server_AllRpc *server, "
            "const struct pbus_caller *caller,",
            "#define AR_SHAPE_TYPE_TAG UINT32_C(0xc3d54b2b)",
            "struct ar_shared_point {",                 # a foreign type: its collection's name
            "struct ar_array_integer_m5_5 {",           # an implicit array
            "struct ar_registry_entry {\n\tenum ar_level key;\n\tstruct ar_more_value value;",
            "int ar_copy_shape(struct ar_shape **dst, struct ar_shape *const *src, "
            "struct pbus_rpc_arena *arena);",
            "bool ar_decode_shape(struct pbus_rpc_reader *r, struct ar_shape **v);",
            "int ar_encode_shape(struct pbus_rpc_buf *b, const struct ar_shape *v);"):
        assert decl in h, decl
    # fixed-size results need no arena
    assert "int ar_AllRpc_ping(struct ar_client_AllRpc *client, uint32_t seq, " \
           "uint32_t *seq2);" in h
    # the codec apart needs no proxy or stub
    types = paths["types"].read_text()
    assert "pbus_proxy" not in types and "pbus_stub" not in types


IFACE = "package p\ninterface I {\n  version { major 1 minor 0 }\n"


@pytest.mark.parametrize("body, message", [
    ("  method m { in { Int32 client } }\n}\n",
     "x.fidl:4:25: error: argument of method 'm' 'client' is a reserved word in the "
     "generated C (a C or C++ keyword, a standard name or a name the generated "
     "functions use); rename it"),
    ("  struct S { Int32 ^int }\n  method m { in { S s } }\n}\n",
     "x.fidl:4:20: error: field 'int' of 'p.I.S' 'int' is a reserved word in the "
     "generated C (a C or C++ keyword, a standard name or a name the generated "
     "functions use); rename it"),
    ("  method m { in { Int32 x_ } }\n}\n",
     "x.fidl:4:25: error: argument of method 'm' 'x_' ends with '_', which the "
     "generated C keeps for its own names; rename it"),
    ("  struct a_b { Int32 x }\n  struct A_B { Int32 y }\n"
     "  method m { in { a_b one  A_B two } }\n}\n",
     "x.fidl:5:10: error: C name 'i_a_b' of type 'p.I.A_B' clashes with type 'p.I.a_b'; "
     "rename one or use --prefix"),
    ("  method m { }\n  method m_async { }\n}\n",
     "x.fidl:5:10: error: C name 'i_I_m_async' of method 'm_async' clashes with "
     "method 'm'; rename one or use --prefix"),
    ("  struct S { S s }\n  method m { in { S s } }\n}\n",
     "x.fidl:4:10: error: 'p.I.S' contains itself by value (only an array, a map or a "
     "polymorphic struct may hold its own type)"),
])
def test_rpc_name_errors(tmp_path, monkeypatch, body, message):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"x.fidl": IFACE + body})
    model, _ = build("x.fidl")
    with pytest.raises(GenError) as info:
        rpc.build(model)
    assert str(info.value) == message


DEPL = ('import "x.fidl"\ndefine parambus.deployment for interface p.I {\n')


@pytest.mark.parametrize("depl, message", [
    ('  method m { CallableBy = "Bad Group" }\n}\n',
     "x.fdepl:3:27: error: 'CallableBy' of method 'm': \"Bad Group\" is not a Unix "
     "group name"),
    ('  method m { CallableBy = 3 }\n}\n',
     "x.fdepl:3:27: error: 'CallableBy' of method 'm': found 3, expected a string in "
     "double quotes"),
    ('  method m { Unit = "V" }\n}\n',
     "x.fdepl:3:14: error: unknown key 'Unit' in method 'm', expected one of CallableBy, "
     "ScpiKeyword, ScpiAccess"),
    ('  method nope { CallableBy = "ops" }\n}\n',
     "x.fdepl:3:3: error: no method 'nope' in interface 'p.I'"),
    ('  broadcast b { CallableBy = "ops" }\n}\n',
     "x.fdepl:3:17: error: unknown key 'CallableBy' in broadcast 'b', expected a key "
     "of a reserved namespace (Scpi, Fleet)"),
    ('  method m { CallableBy = "a" }\n  method m { CallableBy = "b" }\n}\n',
     "x.fdepl:4:3: error: duplicate section 'method m' (first at x.fdepl:3:3)"),
])
def test_callable_by_errors(error_of, depl, message):
    fidl = IFACE + "  method m { }\n  broadcast b { }\n}\n"
    assert error_of({"x.fidl": fidl, "x.fdepl": DEPL + depl}, "x.fdepl") == message


def test_callable_by_inherited_method(model_of):
    fidl = ("package p\ninterface B {\n  version { major 1 minor 0 }\n  method m { }\n}\n"
            "interface I extends B {\n  version { major 1 minor 0 }\n  method n { }\n}\n")
    model = model_of({"x.fidl": fidl, "x.fdepl": 'import "x.fidl"\n'
                      'define parambus.deployment for interface p.I {\n'
                      '  method m { CallableBy = "operators" }\n}\n'}, "x.fdepl")
    assert [(m.name, m.callable_by) for m in model.interface.all_methods()] == \
        [("m", "operators"), ("n", None)]
