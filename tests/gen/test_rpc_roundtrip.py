"""The generated argument codec against the specification, on every
fixture whose methods or broadcasts use named types (the Common API
examples E03 and E04, the generator's alltypes and alltypes-rpc): values of every named type are
encoded here in Python, from docs/methods.md §4 alone (every enumerator,
every union member, every polymorphic subtype, empty and filled arrays and
maps, the bounds of Integer ranges, NaN, infinities, empty and non-ASCII
strings), and a C program generated for the fixture decodes each with the
generated decoder and encodes it again with the generated encoder: it must
get exactly the same bytes. Two implementations of the encoding, written
apart, agreeing on every type."""

import math
import shutil
import struct
import subprocess

import pytest

from pbustest.gen import FIXTURES, ROOT
from pbusgen import checks, cli, deep, loader, params, resolver, rpc
from pbusgen.errors import Diagnostics

# The fixtures whose methods and broadcasts use named types (E01, E05,
# E06, E07 and E08 pass only basic types, which tests/rpc covers).
CASES = {
    # name: (input relative to the fixtures, --interface, --prefix)
    "E03Methods": ("commonapi/E03Methods.fidl", None, None),
    "E04PhoneBook": ("commonapi/E04PhoneBook.fidl", None, None),
    "alltypes": ("alltypes/alltypes.fdepl", None, None),
    "alltypes-rpc": ("rpc/alltypes-rpc.fdepl", None, "ar"),
}
LIB_SOURCES = sorted((ROOT / "lib").glob("*.c"))
INTS = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
        "int64": "q", "uint64": "Q"}
MAX_SAMPLES = 6
MAX_DEPTH = 4


def rpc_model(src, interface, prefix):
    def stages():
        diag = Diagnostics()
        sources = loader.load(str(FIXTURES / src), [])
        resolved = resolver.resolve(sources, diag)
        model = params.build_model(resolved, sources, interface, prefix, diag,
                                   with_parameters=src.endswith(".fdepl"))
        checks.check(model)
        return rpc.build(model)
    return deep.run(stages)


def u32(n):
    return struct.pack("<I", n)


def text(s):
    raw = s.encode("utf-8")
    return u32(len(raw)) + raw


def samples(t, depth=0):
    """Encodings of values of @t (docs/methods.md §4), a few of them."""
    k = t.kind
    if k == "bool":
        out = [b"\x00", b"\x01"]
    elif k == "int":
        f = INTS[t.basic]
        lo, hi = (0, 2 ** (8 * struct.calcsize(f)) - 1) if f.isupper() else \
            (-2 ** (8 * struct.calcsize(f) - 1), 2 ** (8 * struct.calcsize(f) - 1) - 1)
        out = [struct.pack("<" + f, v) for v in (lo, hi, 0 if lo < 0 else 1)]
    elif k == "float":
        out = [struct.pack("<f", v) for v in (0.0, -1.5, math.inf)] + [bytes.fromhex("0000c07f")]
    elif k == "double":
        out = [struct.pack("<d", v) for v in (0.0, 1e300, -math.inf)] + [bytes.fromhex("000000000000f87f")]
    elif k == "string":
        out = [text(""), text("grüße")]
    elif k == "bytes":
        out = [u32(0), u32(3) + b"\x00\xff\x7f"]
    elif k == "integer":
        unsigned = t.int_lower is not None and t.int_lower >= 0 and \
            t.int_upper is not None and t.int_upper > 2 ** 63 - 1
        lo = t.int_lower if t.int_lower is not None else (0 if unsigned else -2 ** 63)
        hi = t.int_upper if t.int_upper is not None else 2 ** 63 - 1
        f = "<Q" if unsigned else "<q"
        out = [struct.pack(f, v) for v in sorted({lo, hi, min(max(0, lo), hi)})]
    elif k == "enum":
        values = [v for _, v in t.enumerators]
        f = "<i" if all(-2 ** 31 <= v < 2 ** 31 for v in values) else "<q"
        out = [struct.pack(f, v) for v in values]
    elif k == "struct":
        out = fields_samples(t.fields, depth)
    elif k == "poly":
        out = [struct.pack("<I", c.type_tag) + f for c in t.concrete for f in fields_samples(c.fields, depth)[:1]]
    elif k == "union":
        out = [u32(i) + samples(m.type, depth + 1)[-1] for i, m in enumerate(t.fields)]
    elif k == "array":
        out = [u32(0)]
        if depth < MAX_DEPTH:
            e = samples(t.element, depth + 1)
            out.append(u32(2) + e[0] + e[-1])
    elif k == "map":
        out = [u32(0)]
        if depth < MAX_DEPTH:
            out.append(u32(1) + samples(t.key, depth + 1)[-1] + samples(t.value, depth + 1)[-1])
    else:
        raise AssertionError(f"no samples of a {k}")
    return out[:MAX_SAMPLES]


def fields_samples(fields, depth):
    """A struct's (or polymorphic struct's) fields: each field's first
    sample, and each field's last."""
    if not fields:
        return [b""]
    each = [samples(f.type, depth + 1) for f in fields]
    return [b"".join(s[0] for s in each), b"".join(s[-1] for s in each)]


def c_bytes(data):
    return "{" + ", ".join(str(b) for b in data) + "}" if data else "{0}"


def driver(model, header):
    """A C program: every sample decoded and encoded again, one result line each."""
    lines = ['#include <stdio.h>', '#include <string.h>', f'#include "{header}"', "",
             "static int failed;", "",
             "static void report(const char *name, int n, bool ok, const char *what)", "{",
             '\tprintf(ok ? "PASS: %s/%d\\n" : "FAIL: %s/%d: %s\\n", name, n, what);',
             "\tfailed += !ok;", "}", "", "int main(void)", "{",
             "\tstruct pbus_rpc_arena *arena = pbus_rpc_arena_new();", ""]
    count = 0
    for t in model.named:
        if not t.decode:
            continue
        for n, data in enumerate(samples(t)):
            value = "v" if t.kind == "poly" else "&v"
            lines += [
                "\t{",
                f"\t\tstatic const unsigned char in[] = {c_bytes(data)};",
                f"\t\t{t.c_type} v;",
                "\t\tstruct pbus_rpc_reader r;",
                "\t\tstruct pbus_rpc_buf b;",
                "\t\tbool ok;", "",
                "\t\tmemset(&v, 0, sizeof v);",
                f"\t\tpbus_rpc_reader_init(&r, in, {len(data)}, arena);",
                f"\t\tok = {t.decode}(&r, &v) && pbus_rpc_reader_end(&r) == 0;",
                f'\t\treport("{t.fqn}", {n}, ok, "does not decode");',
                "\t\tif (ok) {",
                "\t\t\tpbus_rpc_buf_init(&b);",
                f"\t\t\tok = {t.encode}(&b, {value}) == 0 && b.size == {len(data)} && !memcmp(b.data, in, {len(data)});",
                f'\t\t\treport("{t.fqn}", {n}, ok, "encodes to other bytes");',
                "\t\t\tpbus_rpc_buf_release(&b);",
                "\t\t}",
                "\t\tpbus_rpc_arena_reset(arena);",
                "\t}",
            ]
            count += 1
    lines += ["\tpbus_rpc_arena_free(arena);", "\treturn failed != 0;", "}", ""]
    return "\n".join(lines), count


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_codec_agrees_with_the_spec(tmp_path, name):
    src, interface, prefix = CASES[name]
    model = rpc_model(src, interface, prefix)
    header, types = tmp_path / f"{name}-rpc.h", tmp_path / f"{name}-rpc-types.c"
    args = ["--rpc-header", str(header), "--rpc-source", str(tmp_path / f"{name}-rpc.c"),
            "--rpc-types-source", str(types)]
    args += ["--interface", interface] if interface else []
    args += ["--prefix", prefix] if prefix else []
    assert cli.main([*args, str(FIXTURES / src)]) == 0
    program, count = driver(model, header.name)
    assert count, f"{name} has no named type to check"
    (tmp_path / "driver.c").write_text(program)
    exe = tmp_path / "driver"
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O1", "-w", "-I", str(ROOT / "include"),
                    "-I", str(tmp_path), str(tmp_path / "driver.c"), str(types), *map(str, LIB_SOURCES),
                    "-o", str(exe), "-lpthread", "-lm", "-ljansson"], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    failures = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    passes = [line for line in r.stdout.splitlines() if line.startswith("PASS")]
    assert not failures and r.returncode == 0, "\n".join(failures[:20]) + r.stderr[-2000:]
    assert len(passes) >= count, f"{len(passes)} results for {count} samples"
