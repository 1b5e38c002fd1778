"""test_python.py: the parambus Python package (python/, docs/python.md),
as a user gets it: the wheel is built (`pip wheel --no-deps` into the build
tree) and installed into a folder of its own, and every test imports that
copy, against real pbusd daemons (tests/pbustest fixtures).

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/python --pbus-build build/dev
"""
import asyncio
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import zipfile

import pytest

from pbustest.check import check
from pbustest.daemon import CLI_SCHEMA, Daemon

SUITE = "python"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.path.join(TOP, "tests", "vectors")


# --- The package, from its wheel ---------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(pbus_build):
    out = pbus_build.path("tests", "python", "wheel")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.unlink(os.path.join(out, f))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out,
                        os.path.join(TOP, "python")], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"pip wheel failed: {r.stderr[-2000:]}")
    wheels = [f for f in os.listdir(out) if f.endswith(".whl")]
    check(len(wheels) == 1, f"pip wheel made {wheels}")
    return os.path.join(out, wheels[0])


@pytest.fixture(scope="module")
def pb(wheel, pbus_tmp):
    """The parambus module installed from the wheel (not the checkout's)."""
    target = os.path.join(pbus_tmp, "site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", target,
                        wheel], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"pip install of the wheel failed: {r.stderr[-2000:]}")
    saved = {k: v for k, v in sys.modules.items() if k == "parambus" or k.startswith("parambus.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, target)
    try:
        import parambus
        import parambus.aio  # noqa: F401
        import parambus.segment  # noqa: F401
        check(parambus.__file__.startswith(target), f"parambus imported from {parambus.__file__}, not the wheel")
        yield parambus
    finally:
        sys.path.remove(target)
        for k in [k for k in sys.modules if k == "parambus" or k.startswith("parambus.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def pbus_json(build, instance, names):
    r = subprocess.run([build.pbus, "-i", instance, "get", "--json"] + list(names), capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 0, f"pbus get --json: {r.stderr}")
    return json.loads(r.stdout)


def same_value(py, js):
    """A Python value against pbus's JSON of it (bytes as hex, NaN as null)."""
    if isinstance(py, bytes):
        return py.hex() == js
    if isinstance(py, float) and not math.isfinite(py):
        return js is None
    if isinstance(py, list):
        return len(py) == len(js) and all(same_value(a, b) for a, b in zip(py, js))
    return py == js and (type(py) is bool) == (type(js) is bool)


def one_line(e):
    text = str(e)
    return "\n" not in text and len(text) > 10


# --- The wheel -------------------------------------------------------------------------------

def test_wheel_is_typed_and_versioned(wheel, pb):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    check("parambus/py.typed" in names, f"no py.typed in {names}")
    with open(os.path.join(TOP, "CMakeLists.txt")) as f:
        version = re.search(r"project\(parambus VERSION ([0-9.]+)", f.read()).group(1)
    check(pb.__version__ == version, f"package version {pb.__version__}, project {version}")
    check(f"parambus-{version}-py3-none-any.whl" == os.path.basename(wheel), f"wheel {wheel}")


def test_install_rule_honours_prefix_and_destdir(pbus_build, pbus_tmp, pb):
    """`make install` (cmake --install) puts the package under the prefix's
    site-packages, below DESTDIR when given."""
    dest, prefix = os.path.join(pbus_tmp, "destdir"), "/opt/pbus-py-test"
    env = dict(os.environ, DESTDIR=dest)
    r = subprocess.run(["cmake", "--install", pbus_build.dir, "--component", "python", "--prefix", prefix],
                       capture_output=True, text=True, env=env, timeout=600)
    check(r.returncode == 0, f"cmake --install --component python: {r.stdout[-1000:]} {r.stderr[-1000:]}")
    found = [os.path.join(d, "parambus") for d, dirs, _ in os.walk(dest + prefix) if "parambus" in dirs]
    check(len(found) == 1 and "site-packages" in found[0], f"installed as {found}")
    check(not os.path.exists(prefix), f"{prefix} was written outside DESTDIR")
    site = os.path.dirname(found[0])
    r = subprocess.run([sys.executable, "-c", "import parambus, sys; print(parambus.__file__)"],
                       env=dict(os.environ, PYTHONPATH=site), capture_output=True, text=True, cwd="/")
    check(r.returncode == 0 and r.stdout.startswith(site), f"import from {site}: {r.stdout} {r.stderr}")


# --- Values ------------------------------------------------------------------------------------

def test_values_match_pbus_get_json(pb, pbus_build, pbusd):
    subprocess.run([pbus_build.pbus, "-i", pbusd.instance, "set", "voltage_setpoint=3.25", "mode=ON",
                    "limits=1,2", "calibration=0a0b0c"], check=True, capture_output=True, timeout=30)
    t = pb.Table(pbusd.instance)
    c = pb.Client(pbusd.instance)
    try:
        names = [n for n in t.names if "noread" not in t.params[n].flags]
        expected = pbus_json(pbus_build, pbusd.instance, names)
        from_socket = {v.name: v for v in c.get_many(names)}
        for n in names:
            e = expected[n]
            for source, v in (("table", t.read(n)), ("socket", from_socket[n])):
                where = f"{source} {n}"
                check(same_value(v.value, e["value"]), f"{where}: {v.value!r}, pbus says {e['value']!r}")
                check(v.unit == e["unit"], f"{where}: unit {v.unit!r}, pbus says {e['unit']!r}")
                check(str(v.status) == e["status"], f"{where}: status {v.status}, pbus says {e['status']}")
                check(v.timestamp_ns == e["timestamp_ns"] and v.seq == e["seq"],
                      f"{where}: ({v.timestamp_ns}, {v.seq}), pbus says ({e['timestamp_ns']}, {e['seq']})")
        check(t.read("voltage_setpoint").value == 3.25 and t["mode"] == "ON", "the values set")
        check(t.read("limits").value == [1.0, 2.0] and c["calibration"] == b"\n\x0b\x0c", "arrays, bytes")
        check(t.read("temperature").unit == "°C", "a unit outside ASCII")
        check(t.interface == "com.example.test.CliTest" and t.version == (1, 2), f"{t.interface} {t.version}")
        check(c.schema.hash == t.schema_hash, "the schema hash of the socket and of the segment")
    finally:
        t.close()
        c.close()


def test_batched_get_is_one_request(pb, pbusd):
    with pb.Client(pbusd.instance) as c:
        names = ["voltage_setpoint", "mode", "voltage_setpoint", "label", "limits"]
        before = json.loads(c.stats())["requests"]
        values = c.get_many(names)
        after = json.loads(c.stats())["requests"]
        check([v.name for v in values] == names, f"order {[v.name for v in values]}")
        # the STATS_GET itself and the GET: two frames
        check(after - before == 2, f"{after - before} requests for a batched get and a stats")
        check(all(values[0] == c.get(n) if n == "voltage_setpoint" else True for n in names), "values")


def test_atomic_set_all_or_nothing(pb, pbusd):
    with pb.Client(pbusd.instance) as c, pb.Table(pbusd.instance) as t:
        seqs = c.set_many({"voltage_setpoint": 4.0, "mode": "ON", "label": "bench 2"})
        check(set(seqs) == {"voltage_setpoint", "mode", "label"} and all(s > 0 for s in seqs.values()),
              f"versions {seqs}")
        check(t["voltage_setpoint"] == 4.0 and t["mode"] == "ON" and t["label"] == "bench 2", "all written")
        before = {n: t.read(n).seq for n in ("voltage_setpoint", "mode", "trim")}
        try:
            c.set_many([("voltage_setpoint", 5.0), ("trim", 99), ("mode", "OFF")])
            raise AssertionError("an out-of-range write was accepted")
        except pb.SetRefused as e:
            check(e.code == -34 and e.results == [("voltage_setpoint", 0), ("trim", -34), ("mode", 0)],
                  f"{e.code} {e.results}")
            check(one_line(e) and "trim=99" in str(e) and "out of range" in str(e) and "-10" in str(e)
                  and "nothing was written" in str(e), f"message: {e}")
        check({n: t.read(n).seq for n in before} == before and t["voltage_setpoint"] == 4.0, "something was written")
        for bad, cls in ((("measured_voltage", 1.0), pb.AccessError), (("nope", 1), pb.UnknownParameter),
                         (("trim", "x"), pb.BadValue), (("mode", "BOGUS"), pb.BadValue)):
            try:
                c.set(*bad)
                raise AssertionError(f"{bad} was accepted")
            except cls as e:
                check(one_line(e) and bad[0] in str(e) or cls is pb.AccessError, f"{bad}: {e}")


def test_subscription_honours_deadband(pb, pbusd):
    with pb.Client(pbusd.instance) as c, pb.Client(pbusd.instance) as w:
        w.set("voltage_setpoint", 1.0)
        sub = c.subscribe(["voltage_setpoint", "mode"], deadband=1.0)
        first = sub.next(5)
        check({v.name for v in first} == {"voltage_setpoint", "mode"} and first[0].value == 1.0, f"first {first}")
        w.set("voltage_setpoint", 1.5)    # within the deadband: not notified
        w.set("voltage_setpoint", 1.9)    # neither (|1.9 - 1.0| < 1)
        w.set("voltage_setpoint", 2.5)    # notified
        got = sub.next(5)
        check([(v.name, v.value) for v in got] == [("voltage_setpoint", 2.5)], f"after the deadband: {got}")
        try:
            extra = sub.next(0.3)
            raise AssertionError(f"a notification within the deadband: {extra}")
        except pb.Timeout as e:
            check(one_line(e), f"timeout message {e}")
        seen = []
        sub2 = c.subscribe(["mode"], callback=seen.append)
        c.dispatch(2.0)
        w.set("mode", "STANDBY")
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            c.dispatch(0.2)
        check([v[0].value for v in seen] == ["OFF", "STANDBY"] or [v[0].value for v in seen][-1] == "STANDBY",
              f"callbacks {seen}")
        sub2.close()
        sub.close()


def test_reconnect_after_pbusd_restart(pb, pbus_daemons, pbus_instance):
    d = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, CLI_SCHEMA).start()
    with pb.Client(pbus_instance.name, timeout=10) as c:
        sub = c.subscribe(["ramp_ms"])
        check(sub.next(5)[0].value == 100, "first value")
        old_pid = c.hello["server_pid"]
        d.stop()
        d2 = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, CLI_SCHEMA).start()
        try:
            check(c.get("trim").value == 0, "a get after the restart")
            check(c.hello["server_pid"] == d2.pid != old_pid, f"connected to {c.hello['server_pid']}")
            again = sub.next(5)
            check(again[0].name == "ramp_ms", f"renewed subscription's first notification: {again}")
            c.set("ramp_ms", 250)
            values = sub.next(5)
            while values[0].value != 250:
                values = sub.next(5)
            check(values[0].value == 250, "a change after the restart")
        finally:
            d2.stop()


def test_asyncio_client(pb, pbus_daemons, pbus_instance):
    d = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, CLI_SCHEMA).start()

    async def main():
        c = await pb.aio.Client.connect(pbus_instance.name, timeout=10)
        try:
            check((await c.get("gain")).value == 1.0, "get")
            values = await c.get_many(["trim", "mode"])
            check([v.value for v in values] == [0, "OFF"], f"get_many {values}")
            sub = await c.subscribe(["gain"], deadband=1.0)
            check((await sub.next(5))[0].value == 1.0, "first notification")
            await c.set("gain", 1.5)                       # within the deadband
            await c.set_many({"gain": 3.0, "mode": "ON"})
            got = await sub.next(5)
            check([v.value for v in got] == [3.0], f"after the deadband {got}")
            try:
                await c.set_many({"gain": 2.0, "fan_level": 9})
                raise AssertionError("accepted")
            except pb.SetRefused as e:
                check("fan_level=9" in str(e) and one_line(e), f"{e}")
            check((await c.get("gain")).value == 3.0, "nothing written")
            d.stop()
            d2 = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, CLI_SCHEMA).start()
            try:
                check((await c.get("mode")).value == "OFF", "a get after the restart (mode is not persistent)")
                renewed = await sub.next(5)
                check(renewed[0].name == "gain", f"renewed {renewed}")
            finally:
                d2.stop()
        finally:
            await c.close()

    asyncio.run(main())


# --- The table ---------------------------------------------------------------------------------

WRITER = r"""
import ctypes, struct, sys, time
lib = ctypes.CDLL(sys.argv[1])
class Write(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("status", ctypes.c_uint32), ("timestamp_ns", ctypes.c_uint64),
                ("value", ctypes.c_void_p), ("length", ctypes.c_size_t), ("result", ctypes.c_int),
                ("seq", ctypes.c_uint64)]
t = ctypes.c_void_p()
r = lib.pbus_table_open(sys.argv[2].encode(), 1, ctypes.byref(t))
assert r == 0, r
index, seconds, t0 = int(sys.argv[3]), float(sys.argv[4]), 1_700_000_000_000_000_000
w = Write()
w.index = index
buf = ctypes.create_string_buffer(32)
end = time.monotonic() + seconds
k = 0
def write():
    global k
    k += 1
    v = float(k % 200 - 100)
    struct.pack_into("<4d", buf, 0, v, v, v, v)
    w.status, w.timestamp_ns, w.value, w.length = k % 4, t0 + k, ctypes.addressof(buf), 32
    r = lib.pbus_table_write_many(t, ctypes.byref(w), 1)
    assert r == 0, r
write()  # the first write before "ready": every read from then on is the writer's
print("ready", flush=True)
while time.monotonic() < end:
    for _ in range(1000):
        write()
print(k, flush=True)
"""


def test_table_read_never_torn(pb, pbus_build, pbusd, pbus_tmp):
    """A writer process writes a 4-double array flat out, each write's four
    elements, status and timestamp derived from one counter; every read must
    be one write's whole."""
    script = os.path.join(pbus_tmp, "writer.py")
    with open(script, "w") as f:
        f.write(WRITER)
    t = pb.Table(pbusd.instance)
    index = t.param("limits").index
    w = subprocess.Popen([sys.executable, script, pbus_build.path("libparambus.so"), pbusd.instance, str(index), "3"],
                         stdout=subprocess.PIPE, text=True)
    try:
        check(w.stdout.readline().strip() == "ready", "the writer did not start")
        reads, seqs, t0 = 0, set(), 1_700_000_000_000_000_000
        end = time.monotonic() + 2.5
        while time.monotonic() < end:
            v = t.read("limits")
            k = v.timestamp_ns - t0
            want = float(k % 200 - 100)
            check(v.value == [want] * 4 and int(v.status) == k % 4,
                  f"a torn read: {v.value} status {v.status} timestamp {v.timestamp_ns} (k={k})")
            reads += 1
            seqs.add(v.seq)
        written = int(w.stdout.readline())
        check(w.wait(30) == 0, "the writer failed")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        t.close()
    check(reads > 1000 and len(seqs) > 100 and written > 1000,
          f"{reads} reads saw {len(seqs)} versions of {written} writes: not concurrent enough to mean anything")


def test_wait_change_wakes_on_a_change(pb, pbus_build, pbusd):
    with pb.Table(pbusd.instance) as t:
        start = time.monotonic()
        check(t.wait_change(["trim"], timeout=0.3) == [], "a change without a write")
        waited = time.monotonic() - start
        check(0.25 <= waited < 2.0, f"a timeout of 0.3 s took {waited:.3f} s")
        writer = threading.Timer(0.3, lambda: subprocess.run([pbus_build.pbus, "-i", pbusd.instance, "set", "trim=3"],
                                                              capture_output=True, timeout=30))
        writer.start()
        start = time.monotonic()
        changed = t.wait_change(["trim", "gain"], timeout=10)
        took = time.monotonic() - start
        writer.join()
        check(changed == ["trim"] and t["trim"] == 3, f"changed {changed}")
        check(took < 5, f"woken after {took:.3f} s")
        # A change between two waits is not lost.
        subprocess.run([pbus_build.pbus, "-i", pbusd.instance, "set", "trim=4"], capture_output=True, timeout=30)
        check(t.wait_change(["trim"], timeout=5) == ["trim"], "a change made before the wait")
        check(t.state() == "live", f"state {t.state()}")


def test_bad_instance_and_wrong_schema_are_one_clear_line(pb, pbusd, pbus_instances):
    ghost = pbus_instances.name("ghost")
    cases = [
        (lambda: pb.Table(ghost), pb.Error, [ghost, "does not exist"]),
        (lambda: pb.Table("../etc"), pb.Error, ["../etc", "not a valid instance name"]),
        (lambda: pb.Client(ghost, reconnect=False), pb.NotConnected, [ghost, "no pbusd"]),
        (lambda: pb.Table(pbusd.instance, schema_hash=0x1234), pb.SegmentError, ["schema hash", "0000000000001234"]),
        (lambda: pb.Client(pbusd.instance, schema_hash=0x1234), pb.SchemaMismatch, ["schema hash differs"]),
    ]
    for make, cls, words in cases:
        try:
            obj = make()
            obj.close()
            raise AssertionError(f"{words} opened")
        except cls as e:
            check(one_line(e) and all(w in str(e) for w in words), f"{cls.__name__}: {e!r}")
    with pb.Table(pbusd.instance) as t:
        try:
            t.read("nope")
            raise AssertionError("read an unknown parameter")
        except pb.UnknownParameter as e:
            check(str(e) == "unknown parameter 'nope'", f"{e}")


# --- The segment's test vectors (docs/segment-format.md §8) ---------------------------------------

def _records(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]


def _hex(name):
    with open(os.path.join(VECTORS, name)) as f:
        return bytes.fromhex(f.read().replace("\n", ""))


def _literal(text):
    return eval(text, {"__builtins__": {}}, {"nan": math.nan, "inf": math.inf})  # the project's own files


def _same(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and type(a) is type(b) or isinstance(a, float) and isinstance(b, float) and abs(a - b) <= abs(b) * 1e-7


def test_segment_vectors(pb):
    """Every valid image decodes to its .expected values; every invalid one
    is refused for the check segment-bad.expected names."""
    segment = pb.segment
    for image, expected, instance in (("segment-v2.hex", "segment.expected", "vector"),
                                      ("segment-edge.hex", "segment-edge.expected", None),
                                      ("segment-small.hex", "segment-small.expected", None)):
        data = _hex(image)
        layout = segment.parse(data, instance)
        by_name = {p.name: p for p in layout.params}
        n = 0
        for r in _records(expected):
            if r[0] == "header" and r[1] == "param_count":
                check(layout.param_count == _literal(r[2]), f"{image}: param_count")
            if r[0] != "value":
                continue
            p = by_name[r[1]]
            seq = struct_u64(data, p.slot_offset)
            c = p.slot_offset + 16 + (seq & (p.copy_count - 1)) * p.copy_stride
            length = p.value_size if p.scalar else min(struct_u32(data, c + 12), p.value_size)
            stored = data[c + 16:c + 16 + length]
            want = _literal(r[6])
            got = segment.decode_stored(p, stored)
            if p.element == "bytes":
                got = got.hex()
            check(seq == int(r[2]) and stored.hex() == (r[5] if r[5] != "-" else ""), f"{image} {r[1]}: seq, bytes")
            check(_same(got, want), f"{image} {r[1]}: decoded {got!r}, expected {want!r}")
            n += 1
        check(n >= 4, f"{image}: only {n} values checked")
    refused = 0
    for r in _records("segment-bad.expected"):
        try:
            segment.parse(_hex(r[0]), "small")
            raise AssertionError(f"{r[0]} was accepted")
        except pb.SegmentError as e:
            check(e.check == r[2], f"{r[0]}: refused for {e.check}, expected {r[2]}")
            refused += 1
    check(refused >= 40, f"only {refused} invalid images")


def struct_u64(data, off):
    return int.from_bytes(data[off:off + 8], "little")


def struct_u32(data, off):
    return int.from_bytes(data[off:off + 4], "little")


# --- docs/python.md --------------------------------------------------------------------------------

def test_docs_examples_run(pb, pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """Every ```python block of docs/python.md runs, in order, against the
    demo's schema served under this test's instance name."""
    with open(os.path.join(TOP, "docs", "python.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    check(len(blocks) >= 3, f"{len(blocks)} examples")
    d = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, pbus_build.psu_schema).start()
    site = os.path.dirname(os.path.dirname(pb.__file__))
    try:
        for i, code in enumerate(blocks):
            path = os.path.join(pbus_tmp, f"example-{i}.py")
            with open(path, "w") as f:
                f.write(code.replace('"psu"', repr(pbus_instance.name)))
            r = subprocess.run([sys.executable, path], env=dict(os.environ, PYTHONPATH=site), capture_output=True,
                               text=True, timeout=60, cwd=pbus_tmp)
            check(r.returncode == 0, f"example {i + 1} of docs/python.md failed: {r.stderr[-1500:]}")
    finally:
        d.stop()


# --- Fuzz targets -------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["fuzz_wire", "fuzz_schema", "fuzz_segment"])
def test_fuzz(target, pb, pbus_tmp):
    """The decoders under atheris for a few seconds each (PBUS_FUZZ_SECONDS):
    any exception but the decoder's own error is a crash."""
    seconds = os.environ.get("PBUS_FUZZ_SECONDS", "5")
    site = os.path.dirname(os.path.dirname(pb.__file__))
    corpus = os.path.join(pbus_tmp, "corpus-" + target)
    os.makedirs(corpus, exist_ok=True)
    r = subprocess.run([sys.executable, os.path.join(HERE, target + ".py"), f"-max_total_time={seconds}",
                        "-rss_limit_mb=1024", corpus], env=dict(os.environ, PYTHONPATH=site), capture_output=True,
                       text=True, timeout=int(seconds) + 120)
    check(r.returncode == 0, f"{target}: {r.stderr[-2500:]}")
    check(re.search(r"Done \d+ runs", r.stderr), f"{target} did not run: {r.stderr[-500:]}")


# --- Types ---------------------------------------------------------------------------------------

def test_types_are_strict(pbus_tmp):
    """The package's annotations hold: mypy --strict (python/pyproject.toml's
    [tool.mypy]) finds nothing, so a program that uses parambus gets the
    types its py.typed promises."""
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", os.path.join(TOP, "python", "pyproject.toml"),
                        "--cache-dir", os.path.join(pbus_tmp, "mypy-cache"), os.path.join(TOP, "python", "parambus")],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and "Success" in r.stdout, f"mypy --strict: {(r.stdout + r.stderr)[-3000:]}")
