"""test_protocol.py: conformance tests of pbusd's socket protocol.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/server/test_protocol.py \
        --pbus-build build/dev

An independent check of docs/socket-protocol.md against the real server:
the client side (tests/pbustest/protocol.py) is written from the
specification alone and shares no code with the C library;
tests/vectors/socket-frames.txt holds frames with their meaning, which
protocol.py must encode and decode exactly and which are sent to the
server. --pbus-build holds daemon/pbusd and tools/pbus. Each test prints
`PASS: server/<name>` or `FAIL: server/<name>: reason` (tests/conftest.py).
Run as root (the access tests switch to the system user pbus-test, created
if missing).

One pbusd serves tests/server/fixtures/server.pbs under an instance name
unique to this run, with its socket and state in a temporary folder, for
every test that needs it (@needs_server; started again if a test killed
it); readiness comes through --notify-fd, conditions are polled with
deadlines, never waited for with a fixed sleep. Every pbusd started here
is killed at the end. What the specification leaves open, as this server
does it, is printed after the run.
"""
import json
import math
import os
import random
import select
import signal
import socket
import stat
import struct
import subprocess
import time

import pytest

from pbustest import protocol as P
from pbustest.check import TIMEOUT, Failure, check
from pbustest.daemon import Daemon, stopped
from pbustest.vectors import fields_from_json, load_vectors
from pbustest.secutil import TEST_GROUP, TEST_USER
from pbustest.server import (FIXTURE, WAIT, ServerContext, Witness, decode, drain_notifies, expect_closed,
                             expect_error, expect_reply, has, hostile, read_frame, request_error, send_raw,
                             snapshot, stats, summarize, wait_until)

SUITE = "server"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.path.join(TOP, "tests", "vectors", "socket-frames.txt")
STATS_KEYS = ["instance", "uptime_s", "clients", "max_clients", "subscriptions", "requests",
              "notifications", "values_notified", "bytes_in", "bytes_out", "errors",
              "connections_total", "rejected_connections", "service_watches", "clients_detail"]
CLIENT_KEYS = ["pid", "uid", "name", "subscriptions", "requests", "notifications", "tx_pending"]


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose, pbus_notes):
    ctx = ServerContext(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, verbose=pbus_verbose,
                        notes=pbus_notes)
    yield ctx
    ctx.cleanup()


@pytest.fixture(scope="module")
def server_build(request, pbus_build):
    """A build with the socket server, and the test users made before
    pbusd starts (the schema's group resolves then)."""
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd)
    h = subprocess.run([pbus_build.pbusd, "--help"], stdout=subprocess.PIPE, text=True).stdout
    check("--socket-dir" in h, "pbusd has no --socket-dir: no socket server in this build")
    if os.geteuid() == 0:
        try:
            request.getfixturevalue("pbus_user")
        except Failure as e:  # the access tests say so
            print(f"    cannot create {TEST_USER}/{TEST_GROUP}: {e}", flush=True)


@pytest.fixture
def server(ctx, server_build):
    """The module's pbusd (ctx.daemon, the instance ctx.instance), running
    before the test and still running after it."""
    ctx.serving()
    ctx.instance = ctx.daemon.instance
    yield ctx.daemon
    ctx.check_alive()


needs_server = pytest.mark.usefixtures("server")


# --- The vectors ----------------------------------------------------------------

def service_address(ctx, address):
    """A vector's service address with ctx's instance as its registry."""
    return address.replace("local:psu", "local:" + ctx.instance, 1)


# --- The tests ------------------------------------------------------------------

def test_vectors_codec(ctx):
    entries = load_vectors(VECTORS)
    names = set()
    seen_types = set()
    for e in entries:
        where = f"vector {e['name']} (line {e['line']})"
        check(e["name"] not in names, f"{where}: name twice")
        names.add(e["name"])
        check(P.NAMES.get(e["type"]) == e["type_name"], f"{where}: type {e['type']} is not {e['type_name']}")
        kind = ("request" if e["type"] in P.REQUESTS else
                "notification" if e["type"] == P.NOTIFY or (e["type"] in P.NOTIFICATIONS and e["id"] == 0) else
                "reply")
        check(e["kind"] == kind, f"{where}: kind {e['kind']}, expected {kind}")
        check((e["id"] == 0) == (kind == "notification"), f"{where}: id {e['id']}")
        seen_types.add(e["type"])
        data = e["bytes"]
        length, type_, flags, id_ = struct.unpack_from("<IHHI", data)
        check(length == len(data), f"{where}: length field {length}, frame has {len(data)} bytes")
        check((type_, flags, id_) == (e["type"], 0, e["id"]), f"{where}: header {type_, flags, id_}")
        frames = P.split_frames(data)
        check(len(frames) == 1, f"{where}: {len(frames)} frames")
        fields = fields_from_json(e["type"], e["fields"])
        try:
            got = frames[0].decode()
        except P.ProtocolError as ex:
            raise Failure(f"{where}: decoding failed: {ex}")
        check(got == fields, f"{where}: decoded {got!r}, expected {fields!r}")
        enc = P.encode_message(e["type"], e["id"], fields)
        check(enc == data, f"{where}: encoded {enc.hex()}, expected {data.hex()}")
        # The body must be consumed exactly: one byte less or more is malformed.
        body = data[12:]
        for bad in (body + b"\0", body[:-1]):
            if e["type"] in (P.PING, P.PONG) or (bad == body[:-1] and not body):
                continue
            try:
                P.decode_body(e["type"], bad)
                raise Failure(f"{where}: a body of {len(bad)} bytes instead of {len(body)} decoded")
            except P.ProtocolError:
                pass
        if "typed" in e:
            recs = fields.get("values") or fields.get("writes")
            check(len(recs) == len(e["typed"]), f"{where}: typed has {len(e['typed'])} entries")
            for rec, t in zip(recs, e["typed"]):
                check(rec["index"] == t["index"], f"{where}: typed index {t['index']}")
                raw = P.encode_value(t["type"], t["value"])
                check(raw == rec["value"], f"{where}: {t['type']} {t['value']!r} encodes to {raw.hex()}, "
                                           f"the frame has {rec['value'].hex()}")
                back = P.decode_value(t["type"], rec["value"])
                check(back == t["value"] and type(back) is type(t["value"]),
                      f"{where}: {rec['value'].hex()} decodes to {back!r}, expected {t['value']!r}")
    missing = set(P.NAMES) - seen_types
    check(not missing, f"message types without a vector: {sorted(P.NAMES[t] for t in missing)}")
    typed = {t["type"] for e in entries for t in e.get("typed", [])}
    for t in ("double", "bool", "string", "int32[]"):
        check(t in typed, f"no vector of a {t} value")
    # Every request vector names indexes that are valid in the fixture.
    for e in entries:
        for t in e.get("typed", []):
            p = ctx.schema[t["index"]]
            check(p.type == t["type"], f"vector {e['name']}: index {t['index']} is a {p.type} in the fixture")


@needs_server
def test_vectors_server(ctx):
    # Every request vector, as is, in file order on one connection; the
    # reply has the type (and shape) of the reply vector with the same id.
    entries = load_vectors(VECTORS)
    replies = {e["id"]: e for e in entries if e["kind"] == "reply"}
    with ctx.connect(hello=False) as c:
        sub = None
        for e in entries:
            if e["kind"] != "request":
                continue
            what = f"vector {e['name']}"
            req = fields_from_json(e["type"], e["fields"])
            want = replies[e["id"]]
            wf = fields_from_json(want["type"], want["fields"])
            if "address" in req:
                # A service's address names this server's instance as
                # its registry (the vectors' header comment).
                req["address"] = service_address(ctx, req["address"])
                c.send_bytes(P.encode_message(e["type"], e["id"], req))
            else:
                c.send_bytes(e["bytes"])
            if e["type"] == P.UNSUBSCRIBE and sub != req["subscription"]:
                # The server numbered the subscription differently: the
                # vector's id is unknown to it.
                ctx.note(f"the server's first subscription id is {sub}, not 1 as in the vector")
                expect_error(c, P.ENOENT, what, e["id"])
                continue
            if want["type"] == P.ERROR:
                expect_error(c, wf["code"], what, e["id"])
                continue
            got = expect_reply(c, e["id"], want["type"], what)
            t = e["type"]
            if t == P.HELLO:
                check(got["version"] == 1 and got["param_count"] == len(ctx.schema.params), f"{what}: {got}")
            elif t == P.SCHEMA_GET:
                check(got["text"] == ctx.schema_text, f"{what}: the schema differs")
            elif t == P.GET:
                check([v["index"] for v in got["values"]] == req["indexes"], f"{what}: {got}")
                for v in got["values"]:
                    ctx.value(v)  # decodes per the fixture's type
            elif t == P.SET:
                check(got["result"] == wf["result"], f"{what}: result {got['result']}, expected {wf['result']}")
                check([r["result"] for r in got["results"]] == [r["result"] for r in wf["results"]],
                      f"{what}: per-write results {got['results']}, expected {wf['results']}")
                for r in got["results"]:
                    check((r["seq"] > 0) == (got["result"] == 0), f"{what}: seq {r['seq']} with result {got['result']}")
            elif t == P.SUBSCRIBE:
                sub = got["subscription"]
                check(sub != 0, f"{what}: subscription 0")
                n = drain_notifies(c, lambda ns: ns, what)[0]
                check(n["subscription"] == sub and sorted(v["index"] for v in n["values"]) == sorted(req["indexes"]),
                      f"{what}: the first NOTIFY {summarize([n])}")
            elif t == P.STATS_GET:
                json.loads(got["json"])
            elif t == P.PING:
                check(got["data"] == req["data"], f"{what}: PONG {got['data'].hex()}")
            elif t == P.SERVICE_LOOKUP:
                wf["address"] = req["address"]
                check(got == dict(wf, pid=os.getpid(), uid=os.getuid()),
                      f"{what}: {got}, expected the vector's registration by this process")
            elif t == P.SERVICE_UNREGISTER:
                # The watch of the LOOKUP before: told at once.
                gone = next(x for x in entries if x["name"] == "service-gone")
                n = c.service_event(WAIT)
                check(n == dict(fields_from_json(P.SERVICE, gone["fields"]), address=req["address"]),
                      f"{what}: the watcher's notification {n}")
        # After the vectors: what the SET vector wrote is there.
        vals = {v["index"]: ctx.value(v) for v in c.get([21, 2, 15, 19])}
        check(vals == {21: -12.75, 2: False, 15: "\u00b5A", 19: [1, -2, 2147483647]}, f"after the SET vector: {vals}")


@needs_server
def test_socket_file(ctx):
    st = os.stat(ctx.path())
    check(stat.S_ISSOCK(st.st_mode), f"{ctx.path()} is not a socket")
    check(stat.S_IMODE(st.st_mode) == 0o666, f"socket mode {stat.S_IMODE(st.st_mode):o}, expected 666")
    # PBUS_SOCKET_DIR without --socket-dir; the folder is created, 0755.
    d2 = os.path.join(ctx.tmp, "sock-env")
    instance = ctx.new_instance_name()
    old = os.environ.get("PBUS_SOCKET_DIR")
    os.environ["PBUS_SOCKET_DIR"] = d2
    try:
        d = Daemon(ctx, instance, ctx.state_dir, FIXTURE).start()
    finally:
        if old is None:
            os.environ.pop("PBUS_SOCKET_DIR")
        else:
            os.environ["PBUS_SOCKET_DIR"] = old
    d.sock_dir = d2
    path = os.path.join(d2, instance + ".sock")
    check(os.path.exists(path), f"PBUS_SOCKET_DIR: no {path}")
    check(stat.S_IMODE(os.stat(d2).st_mode) == 0o755, f"created socket folder has mode {stat.S_IMODE(os.stat(d2).st_mode):o}")
    with ctx.connect(d) as c:
        check(c.hello_reply["instance"] == instance, "PBUS_SOCKET_DIR: another instance answers")
    # A clean shutdown removes the socket.
    check(d.stop() == 0, "pbusd's exit status after SIGTERM")
    check(not os.path.exists(path), "the socket is still there after a clean shutdown")
    # A socket file nobody listens on is replaced.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    d = Daemon(ctx, instance, ctx.state_dir, FIXTURE, ["--socket-dir", d2]).start()
    d.sock_dir = d2
    with ctx.connect(d) as c:
        c.ping()
    # P.socket_path finds it through PBUS_SOCKET_DIR (the client's search).
    os.environ["PBUS_SOCKET_DIR"] = d2
    try:
        check(P.socket_path(instance) == path, f"socket_path: {P.socket_path(instance)}")
    finally:
        if old is None:
            os.environ.pop("PBUS_SOCKET_DIR")
        else:
            os.environ["PBUS_SOCKET_DIR"] = old
    d.stop()


def hello_fields(min_v=1, max_v=1, h=0, name="conformance"):
    return {"min_version": min_v, "max_version": max_v, "schema_hash": h, "client_name": name}


@needs_server
def test_handshake(ctx):
    # Version ranges that contain 1.
    for lo, hi in ((1, 1), (0, 1), (1, 7), (0, 0xFFFFFFFF)):
        with ctx.connect(hello=False) as c:
            r = c.request(P.HELLO, hello_fields(lo, hi))
            check(r["version"] == 1, f"HELLO {lo}…{hi}: version {r['version']}")
            c.ping()
    # No overlap: EPROTONOSUPPORT and a close.
    for lo, hi in ((2, 2), (2, 9), (0, 0), (5, 1)):
        with ctx.connect(hello=False) as c:
            request_error(c, P.HELLO, hello_fields(lo, hi), P.EPROTONOSUPPORT, f"HELLO {lo}…{hi}", closes=True)
    # Schema hash: 0 and the right one accepted, another refused.
    h = ctx.schema.hash
    with ctx.connect(hello=False) as c:
        check(c.request(P.HELLO, hello_fields(h=h))["schema_hash"] == h, "HELLO with the right hash")
        c.ping()
    for bad in (h ^ 1, 0xFFFFFFFFFFFFFFFF):
        with ctx.connect(hello=False) as c:
            msg = request_error(c, P.HELLO, hello_fields(h=bad), P.ESTALE, f"HELLO hash {bad:#x}", closes=True)
            for x in (h, bad):
                check(f"{x:x}" in msg.lower(), f"ESTALE message {msg!r} does not name 0x{x:x}")
    # Anything before HELLO: EPROTO and a close.
    for t, f in ((P.GET, {"indexes": [3]}), (P.PING, {"data": b"x"}), (P.SCHEMA_GET, {}),
                 (P.STATS_GET, {})):
        with ctx.connect(hello=False) as c:
            request_error(c, t, f, P.EPROTO, f"{P.typename(t)} before HELLO", closes=True)
    # HELLO twice: EPROTO and a close (§3.1).
    with ctx.connect() as c:
        request_error(c, P.HELLO, hello_fields(), P.EPROTO, "a second HELLO", closes=True)


@needs_server
def test_hello_reply(ctx):
    with ctx.connect(hello=False) as c:
        r = c.hello("hello-test")
    check(r["version"] == 1, f"version {r['version']}")
    check(r["schema_hash"] == ctx.schema.hash, f"schema_hash {r['schema_hash']:#x}, fixture {ctx.schema.hash:#x}")
    check(r["param_count"] == len(ctx.schema.params), f"param_count {r['param_count']}")
    check(r["max_frame"] == 1 << 20, f"max_frame {r['max_frame']}, the default is 1 MiB")
    check(r["max_subscriptions"] == 64, f"max_subscriptions {r['max_subscriptions']}, the default is 64")
    check(r["server_pid"] == ctx.daemon.pid, f"server_pid {r['server_pid']}, pbusd is {ctx.daemon.pid}")
    check(r["instance"] == ctx.daemon.instance, f"instance {r['instance']!r}")
    name, version = ctx.schema.interface, ctx.schema.version
    check(r["interface"] in (name, f"{name} {version}"), f"interface {r['interface']!r}, schema has {name} {version}")
    if r["interface"] != name:
        ctx.note(f"HELLO_REPLY interface is {r['interface']!r} (name and version)")
    # What `pbus dump` says agrees.
    doc = ctx.dump()
    check(doc["schema_hash"] == f"{r['schema_hash']:016x}", f"dump says schema {doc['schema_hash']}")
    check(doc["owner_pid"] == r["server_pid"], "dump's owner_pid")


@needs_server
def test_schema(ctx):
    with ctx.connect() as c:
        text = c.schema()
        check(text == ctx.schema_text, "SCHEMA differs from the fixture file: "
              f"{len(text)} bytes vs {len(ctx.schema_text)}; first difference at "
              f"{next((i for i, (a, b) in enumerate(zip(text, ctx.schema_text)) if a != b), min(len(text), len(ctx.schema_text)))}")
        check(P.Schema(text).hash == c.hello_reply["schema_hash"], "the hash of SCHEMA is not HELLO_REPLY's")


def json_equal(p, value, js):
    """A decoded value against `pbus get --json`'s value."""
    if p.type == "float":
        return struct.pack("<f", float(js)) == struct.pack("<f", value)
    if p.type == "bytes":
        return value.hex() == js
    return value == js and (type(value) is bool) == (type(js) is bool)


@needs_server
def test_get(ctx):
    readable = [p for p in ctx.schema.params if "noread" not in p.flags]
    with ctx.connect() as c:
        ctx.segment_set("trim=-3", "limits=7.25,-1", "label=pbus\u00e9", "calibration=a1b2c3")
        vals = c.get([p.index for p in readable])
        r = ctx.ok("get", "--json", *[p.name for p in readable], instance=ctx.daemon.instance)
        doc = json.loads(r.out)
        check([v["index"] for v in vals] == [p.index for p in readable], "VALUES not in the order asked")
        for p, v in zip(readable, vals):
            j = doc[p.name]
            value = ctx.value(v)
            check(json_equal(p, value, j["value"]), f"{p.name}: GET {value!r}, pbus get {j['value']!r}")
            check(P.STATUS[v["status"]] == j["status"], f"{p.name}: status {v['status']}, pbus get {j['status']}")
            check(v["seq"] == j["seq"] and v["timestamp_ns"] == j["timestamp_ns"],
                  f"{p.name}: seq/time {v['seq']}/{v['timestamp_ns']}, pbus get {j['seq']}/{j['timestamp_ns']}")
            check(len(v["value"]) <= p.capacity, f"{p.name}: {len(v['value'])} bytes")
        check(ctx.value(vals[3]) == -3, "trim")
        # One, and several in another order.
        one = c.get([17])
        check(len(one) == 1 and ctx.value(one[0]) == "OFF", f"GET mode: {one}")
        some = c.get([19, 0, 18, 3])
        check([v["index"] for v in some] == [19, 0, 18, 3], f"order: {[v['index'] for v in some]}")
        check(ctx.value(some[1]) == "ACME Instruments" and ctx.value(some[2]) == [7.25, -1.0],
              f"values: {[ctx.value(v) for v in some]}")
        # Never written: status invalid, seq 0.
        fresh = c.get([22])[0]
        if fresh["seq"] == 0:
            check(fresh["status"] == 3, f"fresh: status {fresh['status']} before any write")


@needs_server
def test_get_errors(ctx):
    n = len(ctx.schema.params)
    with ctx.connect() as c:
        for idx, code, named in (([n], P.ENOENT, str(n)), ([0xFFFFFFFF], P.ENOENT, "4294967295"),
                                 ([3, 99, 20], P.ENOENT, "99"), ([20], P.EACCES, None),
                                 ([3, 20, 99], P.EACCES, None)):
            msg = request_error(c, P.GET, {"indexes": idx}, code, f"GET {idx}")
            if named:
                check(named in msg, f"GET {idx}: message {msg!r} does not name index {named}")
            else:
                check("secret" in msg or "20" in msg, f"GET {idx}: message {msg!r} does not name secret")
        c.ping(b"still open")  # a refused GET is not malformed
    for idx in ([], [3] * (n + 1)):
        with ctx.connect() as c:
            request_error(c, P.GET, {"indexes": idx}, P.EPROTO, f"GET of {len(idx)} indexes", closes=True)


@needs_server
def test_set(ctx):
    with ctx.connect() as c:
        before = {v["index"]: v for v in c.get(range(20))}
        t0 = time.time_ns()
        r = c.set([ctx.w("trim", -7)])
        t1 = time.time_ns()
        check(r["result"] == 0 and len(r["results"]) == 1, f"SET trim: {r}")
        check(r["results"][0] == {"result": 0, "seq": before[3]["seq"] + 1}, f"SET trim: {r['results']}")
        j = json.loads(ctx.ok("get", "--json", "trim", instance=ctx.daemon.instance).out)["trim"]
        check(j["value"] == -7 and j["seq"] == before[3]["seq"] + 1 and j["status"] == "ok",
              f"pbus get after SET trim=-7: {j}")
        check(t0 <= j["timestamp_ns"] <= t1, f"timestamp {j['timestamp_ns']} not the server's clock in [{t0}, {t1}]")
        # A batch of every kind of value.
        batch = [("output_enable", True), ("offset_counts", -1000), ("energy_uj", -(1 << 63)),
                 ("fan_level", 5), ("averaging", 1024), ("sample_rate", 1000000), ("gain", 0.5),
                 ("level", -999.5), ("calibration", b"\x00\xff\x10"), ("mode", "STANDBY"),
                 ("limits", [100.0, -100.0, 0.25, 0.0]), ("counters", [-2147483648, 0, 2147483647]),
                 ("label", "12345678"), ("fresh", 0.0)]
        seqs = {v["index"]: v["seq"] for v in c.get([ctx.schema.index(n) for n, _ in batch])}
        r = c.set([ctx.w(n, v) for n, v in batch])
        check(r["result"] == 0, f"batch: {r}")
        check([x["result"] for x in r["results"]] == [0] * len(batch), f"batch results: {r['results']}")
        for (name, _), x in zip(batch, r["results"]):
            check(x["seq"] == seqs[ctx.schema.index(name)] + 1, f"batch: {name} seq {x['seq']}")
        doc = json.loads(ctx.ok("get", "--json", *[n for n, _ in batch], instance=ctx.daemon.instance).out)
        for (name, value), x in zip(batch, r["results"]):
            p = ctx.schema[name]
            check(json_equal(p, value, doc[name]["value"]), f"pbus get {name}: {doc[name]['value']!r}, set {value!r}")
            check(doc[name]["seq"] == x["seq"] and doc[name]["status"] == "ok", f"pbus get {name}: {doc[name]}")
        # noread is not read-only: the owner may write it.
        r = c.set([ctx.w("secret", 43)])
        check(r["result"] == 0 and r["results"][0]["seq"] > 0, f"SET secret (noread, writable): {r}")
        # Through GET, too: what SET stored, its seq.
        v = c.get([ctx.schema.index("limits")])[0]
        check(ctx.value(v) == [100.0, -100.0, 0.25, 0.0] and v["status"] == 0, f"GET limits {v}")


# (write, the code its refusal must have). Indexes resolve in the fixture.
def refusals(ctx):
    n = len(ctx.schema.params)
    i = ctx.schema.index
    d = lambda x: struct.pack("<d", x)  # noqa: E731
    return [
        ("level=5000", (i("level"), d(5000.0)), P.ERANGE),
        ("level=-1000.5", (i("level"), d(-1000.5)), P.ERANGE),
        ("trim=11", ctx.w("trim", 11), P.ERANGE),
        ("fan_level=6", ctx.w("fan_level", 6), P.ERANGE),
        ("averaging=0", ctx.w("averaging", 0), P.ERANGE),
        ("gain=8.5", ctx.w("gain", 8.5), P.ERANGE),
        ("limits element 200", ctx.w("limits", [0.0, 200.0]), P.ERANGE),
        ("offset_counts (int16) of 1 byte", (i("offset_counts"), b"\x01"), P.EINVAL),
        ("level of 4 bytes", (i("level"), b"\0\0\0\0"), P.EINVAL),
        ("output_enable of 0 bytes", (i("output_enable"), b""), P.EINVAL),
        ("limits of 12 bytes", (i("limits"), b"\0" * 12), P.EINVAL),
        ("counters of 5 bytes", (i("counters"), b"\0" * 5), P.EINVAL),
        ("label of 9 bytes", (i("label"), b"123456789"), P.EMSGSIZE),
        ("calibration of 5 bytes", (i("calibration"), b"\1\2\3\4\5"), P.EMSGSIZE),
        ("limits of 5 elements", ctx.w("limits", [1.0] * 5), P.EMSGSIZE),
        ("counters of 4 elements", ctx.w("counters", [1] * 4), P.EMSGSIZE),
        ("bool 2", (i("output_enable"), b"\x02"), P.EINVAL),
        ("enum 7", (i("mode"), struct.pack("<i", 7)), P.ERANGE),
        ("string not UTF-8", (i("label"), b"\xff\xfe"), P.EINVAL),
        ("read-only measured_voltage", ctx.w("measured_voltage", 1.0), P.EACCES),
        ("read-only identity.serial", ctx.w("identity.serial", "X"), P.EACCES),
        ("read-only uptime_ns", ctx.w("uptime_ns", 5), P.EACCES),
        (f"index {n}", (n, b"\0\0\0\0"), P.ENOENT),
        ("index 0xffffffff", (0xFFFFFFFF, b"\0"), P.ENOENT),
    ]


@needs_server
def test_set_refusals(ctx):
    with ctx.connect() as c:
        # Two writes that are fine, on parameters no refusal below touches.
        good1, good2 = ctx.w("sample_rate", 12345), ctx.w("energy_uj", 42)
        wrong = []
        for what, bad, code in refusals(ctx):
            before = snapshot(ctx, c)
            dump_before = ctx.snapshot()
            r = c.set([good1, bad, good2])
            res = [x["result"] for x in r["results"]]
            if r["result"] != code or res != [0, code, 0]:
                wrong.append(f"{what}: result {P.errname(r['result'])}, per write "
                             f"{[P.errname(x) if x else 0 for x in res]}, expected {P.errname(code)}")
            check([x["seq"] for x in r["results"]] == [0, 0, 0], f"{what}: seqs {r['results']} of a refused batch")
            check(snapshot(ctx, c) == before, f"{what}: the refused batch changed values (GET)")
            check(ctx.snapshot() == dump_before, f"{what}: the refused batch changed the segment (pbus dump)")
        # Two refusals: result is the first's; each write has its own.
        r = c.set([good1, ctx.w("trim", 11), ctx.w("measured_voltage", 2.0), (99, b"")])
        check(r["result"] == P.ERANGE and [x["result"] for x in r["results"]] == [0, P.ERANGE, P.EACCES, P.ENOENT],
              f"SET [good, ERANGE, EACCES, ENOENT]: {r}")
        # The same index twice.
        before = snapshot(ctx, c)
        r = c.set([ctx.w("trim", 2), good2, ctx.w("trim", 3)])
        res = [x["result"] for x in r["results"]]
        # §3.3: the second appearance gets EINVAL, the first is judged alone.
        check(r["result"] == P.EINVAL and res == [0, 0, P.EINVAL], f"SET trim twice: {r}")
        check(snapshot(ctx, c) == before, "SET trim twice changed values")
        # A scalar longer than its size is above its capacity (§3.3 step 4).
        r = c.set([(ctx.schema.index("trim"), b"\x01" * 8)])
        check(r["result"] == P.EMSGSIZE, f"SET trim of 8 bytes: {r}")
        ctx.note(f"SET of a scalar longer than its type (int8, 8 bytes): {P.errname(r['result'])}")
        # NaN and the infinities (§3.3 step 6): a double with limits refuses
        # them, one without takes them.
        for name, want in (("level", P.ERANGE), ("fresh", 0)):
            for x in (math.nan, math.inf, -math.inf):
                r = c.set([(ctx.schema.index(name), struct.pack("<d", x))])
                check(r["result"] == want, f"SET {name} = {x}: {P.errname(r['result'])}, expected "
                                           f"{P.errname(want) if want else 'accepted'}")
        c.set([ctx.w("fresh", 0.0), ctx.w("level", 0.0)])
        # One write with two faults: the first failing check of §3.3 decides.
        for what, wr, want in (("read-only and of the wrong length",
                                (ctx.schema.index("measured_voltage"), b"\1\2\3"), P.EACCES),
                               ("out of range and too long", (ctx.schema.index("trim"), b"\x7f\0"), P.EMSGSIZE)):
            r = c.set([wr])
            check(r["result"] == want, f"SET of a value {what}: {P.errname(r['result'])}, "
                                       f"expected {P.errname(want)}")
        c.ping()  # refusals are not malformed frames
        check(not wrong, "SET [good, BAD, good]: " + "; ".join(wrong))


def read_state(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    check(data.endswith(b"\n") and lines[-2].startswith(b"end "), f"state file does not end with 'end HASH': {data[-80:]!r}")
    body = data[:data.rindex(b"\nend ") + 1]
    check(lines[-2] == b"end " + f"{P.fnv1a64(body):016x}".encode(), "state file's end hash is wrong")
    return {k: v for k, _, v in (l.decode().partition("=") for l in lines if b"=" in l and not l.startswith(b"#"))}


@needs_server
def test_set_persistent(ctx):
    path = os.path.join(ctx.state_dir, ctx.daemon.instance + ".state")
    with ctx.connect() as c:
        for k in range(6):
            ramp, label, volts = 4321 + k, f"saved {k}", 12.5 + k
            r = c.set([ctx.w("ramp_ms", ramp), ctx.w("trim", k), ctx.w("label", label),
                       ctx.w("voltage_setpoint", volts)])
            check(r["result"] == 0, f"SET persistent: {r}")
            # At once: the reply came only after the save.
            try:
                st = read_state(path)
            except FileNotFoundError:
                raise Failure(f"no state file {path} when SET_REPLY arrived")
            want = {"ramp_ms": str(ramp), "label": f"saved%20{k}", "voltage_setpoint": str(volts)}
            for name, text in want.items():
                check(st.get(name) == text, f"round {k}: state file has {name}={st.get(name)!r} when SET_REPLY "
                                            f"arrived, expected {text!r}")
            check("trim" not in st, "trim is not persistent but is in the state file")


@needs_server
def test_set_unsaved(ctx):
    """§3.3: a persistent write whose save does not come within 10 s gets
    ERROR EIO, though applied; pbusd keeps trying to save (every second) and
    stores it once it can, with no further change."""
    state_dir = os.path.join(ctx.tmp, f"unsaved-{os.getpid()}")
    os.makedirs(state_dir)
    instance = ctx.new_instance_name()
    d = Daemon(ctx, instance, state_dir, FIXTURE, ["--socket-dir", ctx.sock_dir])
    d.sock_dir = ctx.sock_dir
    d.start()
    path = os.path.join(state_dir, instance + ".state")
    try:
        with ctx.connect(d) as c:
            check(c.set([ctx.w("ramp_ms", 111)])["result"] == 0, "SET ramp_ms before the state folder went")
            os.rename(state_dir, state_dir + ".gone")   # no place to save any more
            t0 = time.monotonic()
            i = c.send(P.SET, {"writes": [{"index": ctx.schema.index("ramp_ms"), "value": ctx.w("ramp_ms", 222)[1]}]})
            f = c.reply(i, timeout=25)
            took = time.monotonic() - t0
            e = f.decode() if f.type == P.ERROR else {}
            check(e.get("code") == P.EIO, f"SET ramp_ms with nowhere to save: {f!r} {e}, expected ERROR EIO")
            msg = e["message"]
            check(9 <= took <= 20, f"ERROR EIO came after {took:.1f} s, expected about 10")
            check("written" in msg and "saved" in msg, f"EIO message {msg!r}: should say written but not saved")
            check(ctx.value(c.get([ctx.schema.index("ramp_ms")])[0]) == 222, "the unsaved write was not applied")
            os.rename(state_dir + ".gone", state_dir)
            wait_until("pbusd to save ramp_ms=222 without another change",
                       lambda: read_state(path).get("ramp_ms") == "222", timeout=10)
            check(c.set([ctx.w("ramp_ms", 333)])["result"] == 0, "SET ramp_ms after the state folder came back")
            check(read_state(path).get("ramp_ms") == "333", "the state file after the folder came back")
        log = d.log()
        check("trying again" in log and "saved" in log and "again, after" in log,
              f"pbusd's log does not tell of the failed save and the recovery: {log[-600:]!r}")
    finally:
        d.stop()


@needs_server
def test_replies_in_order_behind_a_save(ctx):
    """§3, §3.3: replies come in the order of the requests even while a
    persistent SET waits for its save: a PING, a GET, a non-persistent SET
    and a SUBSCRIBE sent right behind it are answered after its SET_REPLY,
    and the subscription's first NOTIFY comes after its SUBSCRIBED."""
    with ctx.connect() as c:
        for rnd in range(3):
            ids = [c.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in
                                             [ctx.w("ramp_ms", 500 + rnd)]]}),
                   c.send(P.PING, {"data": b"behind the save"}),
                   c.send(P.GET, {"indexes": [ctx.schema.index("ramp_ms")]}),
                   c.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in
                                             [ctx.w("trim", rnd)]]}),
                   c.send(P.SUBSCRIBE, {"indexes": [ctx.schema.index("trim")], "min_interval_us": 0,
                                        "deadband": 0.0}),
                   c.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in
                                             [ctx.w("label", f"order {rnd}")]]}),
                   c.send(P.PING, {"data": b"last"})]
            want = [P.SET_REPLY, P.PONG, P.VALUES, P.SET_REPLY, P.SUBSCRIBED, P.SET_REPLY, P.PONG]
            got, notified_before_subscribed, sub = [], False, None
            while len(got) < len(ids):
                f = read_frame(c, f"round {rnd}: reply {len(got) + 1} of {len(ids)}")
                if f.type == P.NOTIFY:
                    if sub is None or f.decode()["subscription"] == sub:
                        notified_before_subscribed = True
                    continue
                got.append((f.id, f.type))
                if f.type == P.SUBSCRIBED:
                    sub = f.decode()["subscription"]
            check(got == list(zip(ids, want)),
                  f"round {rnd}: replies {[(i, P.NAMES.get(t, t)) for i, t in got]}, expected "
                  f"{[(i, P.NAMES.get(t, t)) for i, t in zip(ids, want)]}")
            check(not notified_before_subscribed, f"round {rnd}: a NOTIFY of the new subscription "
                                                  f"came before its SUBSCRIBED")
            check(ctx.value(c.get([ctx.schema.index("ramp_ms")])[0]) == 500 + rnd, "ramp_ms after the round")
            c.unsubscribe(sub)
        # More SETs waiting for a save than the server holds (256): it reads
        # no further until saves come, and every reply still comes, in order.
        idx = ctx.schema.index("ramp_ms")
        frames, expect = [], []
        for k in range(400):
            frames.append(P.encode_message(P.SET, 10000 + 2 * k,
                                           {"writes": [{"index": idx, "value": ctx.w("ramp_ms", k)[1]}]}))
            frames.append(P.encode_message(P.PING, 10001 + 2 * k, {"data": b"%d" % k}))
            expect += [(10000 + 2 * k, P.SET_REPLY), (10001 + 2 * k, P.PONG)]
        c.send_bytes(b"".join(frames))
        got = []
        while len(got) < len(expect):
            f = read_frame(c, f"burst: reply {len(got) + 1} of {len(expect)}", timeout=20)
            if f.type == P.NOTIFY:
                continue
            got.append((f.id, f.type))
            if f.type == P.SET_REPLY:
                check(f.decode()["result"] == 0, f"burst: SET {f.id} refused: {f.decode()}")
        bad = [k for k in range(len(got)) if got[k] != expect[k]]
        check(not bad, f"burst: reply {bad[:1]} out of order: {got[bad[0]] if bad else ''}")
        check(ctx.value(c.get([idx])[0]) == 399, "ramp_ms after the burst")


# --- SET with flag APPLIED (§2, §3.3 "Applied") --------------------------------

# Output bindings on devices no test machine has (a gpio-output on a missing
# chip, a persistent one, a pwm-duty on a missing chip) and a parameter
# without a binding: pbus-hwd, when it runs, reports every application of
# the outputs as failed. The VM test (tests/kernel/suite/test-applied.c)
# has the devices.
APPLIED_SCHEMA = """pbus-schema 1
interface test.Applied 1.0
param relay bool default=false hw=gpio-output hw-device=no-such-chip hw-line=RELAY hw-active-low=false hw-bias=as-is hw-drive=push-pull
param saved bool default=false flags=persistent hw=gpio-output hw-device=no-such-chip hw-line=SAVED hw-active-low=false hw-bias=as-is hw-drive=push-pull
param fan float min=0 max=100 default=30 hw=pwm-duty hw-device=pwmchip99 hw-channel=0 hw-period-ns=40000 hw-polarity=normal hw-scale=400 hw-offset=0
param plain double default=1
"""
RELAY, SAVED, FAN, PLAIN = range(4)


def applied_server(ctx, extra):
    """A pbusd of APPLIED_SCHEMA with @extra options (its pbus-hwd, unless
    --no-hardware) and its state folder."""
    path = os.path.join(ctx.tmp, "applied.pbs")
    with open(path, "w") as f:
        f.write(APPLIED_SCHEMA)
    state_dir = os.path.join(ctx.tmp, f"applied-state-{ctx.new_instance_name()}")
    os.makedirs(state_dir)
    d = Daemon(ctx, ctx.new_instance_name(), state_dir, path, ["--socket-dir", ctx.sock_dir] + list(extra))
    d.sock_dir = ctx.sock_dir
    d.start()
    d.state_path = os.path.join(state_dir, d.instance + ".state")
    return d


def hwd_children(d):
    """pbusd @d's running pbus-hwd children (pids)."""
    try:
        with open(f"/proc/{d.pid}/task/{d.pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return []
    found = []
    for k in kids:
        try:
            with open(f"/proc/{k}/stat") as f:
                st = f.read()
        except OSError:
            continue
        if st[st.index("(") + 1:st.rindex(")")] == "pbus-hwd" and st[st.rindex(")") + 2] not in "ZT":
            found.append(k)
    return found


def set_applied(c, writes, flags=P.APPLIED):
    """Send a SET of (index, bytes) writes with @flags; its id."""
    return c.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in writes]}, flags=flags)


def timed_set_reply(c, writes, what, timeout=WAIT):
    """SET @writes with APPLIED: (its SET_REPLY's fields, seconds it took)."""
    t0 = time.monotonic()
    i = set_applied(c, writes)
    f = c.reply(i, timeout)
    took = time.monotonic() - t0
    check(f.type == P.SET_REPLY, f"{what}: {f!r} {decode(f, what) if f.type == P.ERROR else ''}, expected SET_REPLY")
    return decode(f, what), took


@needs_server
def test_set_applied_flag(ctx):
    """§2: bit 0 of a SET's flags is APPLIED; every other bit, and any bit on
    another type, is refused (EPROTO, closed). This schema has no output
    binding: a SET with APPLIED is answered as without it, at once (a
    persistent value after its save), not after pbusd's --apply-timeout."""
    idx = ctx.schema.index
    with Witness(ctx) as w:
        with ctx.connect() as c:
            for k in range(5):
                before = {v["index"]: v["seq"] for v in c.get([idx("trim"), idx("ramp_ms")])}
                r, took = timed_set_reply(c, [ctx.w("trim", k), ctx.w("ramp_ms", 700 + k)], f"round {k}")
                check(r["result"] == 0 and r["results"] == [
                    {"result": 0, "seq": before[idx("trim")] + 1}, {"result": 0, "seq": before[idx("ramp_ms")] + 1}],
                    f"round {k}: SET with APPLIED: {r}")
                check(took < 0.8, f"round {k}: the reply took {took:.3f} s: no parameter here waits for hardware")
                check(read_state(os.path.join(ctx.state_dir, ctx.daemon.instance + ".state")).get("ramp_ms") ==
                      str(700 + k), f"round {k}: the persistent value was not saved when the reply came")
                check(ctx.value(c.get([idx("trim")])[0]) == k, f"round {k}: trim not written")
            # Refused SETs are refused as without the flag.
            i = set_applied(c, [ctx.w("trim", 1), (idx("uptime_ns"), struct.pack("<Q", 1))])
            r = expect_reply(c, i, P.SET_REPLY, "a refused SET with APPLIED")
            check(r["result"] == P.EACCES and [x["seq"] for x in r["results"]] == [0, 0],
                  f"a refused SET with APPLIED: {r}")
        body = P.encode_body(P.SET, {"writes": [{"index": i, "value": v} for i, v in [ctx.w("trim", 2)]]})
        for fl in (0x0002, 0x0003, 0x0100, 0x8000, 0xFFFF):
            hostile(ctx, frame(P.SET, body, flags=fl), P.EPROTO, f"SET with flags {fl:#x}", witness=w)
        for t, fields in ((P.GET, {"indexes": [3]}), (P.PING, {"data": b"x"}), (P.STATS_GET, {}),
                          (P.SUBSCRIBE, {"min_interval_us": 0, "deadband": 0.0, "indexes": [3]})):
            hostile(ctx, frame(t, P.encode_body(t, fields), flags=P.APPLIED), P.EPROTO,
                    f"{P.typename(t)} with flag APPLIED", witness=w)
        hostile(ctx, frame(P.HELLO, P.encode_body(P.HELLO, hello_fields()), flags=P.APPLIED), P.EPROTO,
                "HELLO with flag APPLIED", hello=False, witness=w)


@needs_server
def test_set_applied_without_hardware(ctx):
    """§3.3: parameters with output bindings do not wait while pbusd runs no
    pbus-hwd (--no-hardware): the reply comes at once, not after
    --apply-timeout (5 s here, when it would be ETIMEDOUT)."""
    d = applied_server(ctx, ["--no-hardware", "--apply-timeout", "5000"])
    try:
        with ctx.connect(d) as c:
            for k in range(4):
                r, took = timed_set_reply(c, [(RELAY, bytes([k & 1])), (SAVED, bytes([k & 1])),
                                              (FAN, struct.pack("<f", 10.0 * k)),
                                              (PLAIN, struct.pack("<d", k))], f"round {k}")
                check(r["result"] == 0 and all(x["result"] == 0 and x["seq"] > 0 for x in r["results"]),
                      f"round {k}: {r}")
                check(took < 1.0, f"round {k}: the reply took {took:.3f} s without pbus-hwd")
                check(read_state(d.state_path).get("saved") == ("true" if k & 1 else "false"),
                      f"round {k}: the persistent value was not saved when the reply came")
        check(not hwd_children(d), "pbusd --no-hardware runs pbus-hwd")
    finally:
        d.stop()


@needs_server
def test_set_applied_hardware_fails(ctx):
    """§3.3 with the real pbus-hwd, whose devices are missing: each write of
    a bound parameter is answered EIO as soon as pbus-hwd reports the
    failure (well within --apply-timeout, 5 s here), the others 0, every
    write written (seq, table, state file); replies stay in order behind
    it."""
    d = applied_server(ctx, ["--apply-timeout", "5000"])
    try:
        wait_until("pbus-hwd to start", lambda: hwd_children(d))
        with ctx.connect(d) as c:
            wait_until("pbus-hwd to find the devices missing",
                       lambda: all(v["status"] == 3 for v in c.get([RELAY, SAVED, FAN])))
            for k in range(3):
                before = {v["index"]: v["seq"] for v in c.get(range(4))}
                t0 = time.monotonic()
                ids = [set_applied(c, [(RELAY, bytes([1 - k % 2])), (PLAIN, struct.pack("<d", k)),
                                       (SAVED, bytes([1 - k % 2]))]),
                       c.send(P.PING, {"data": b"behind"}),
                       c.send(P.SET, {"writes": [{"index": PLAIN, "value": struct.pack("<d", 10 + k)}]}),
                       set_applied(c, [(FAN, struct.pack("<f", 40.0 + k))]),
                       c.send(P.GET, {"indexes": [RELAY, PLAIN]})]
                got = [read_frame(c, f"round {k}: reply {n + 1}", timeout=10) for n in range(len(ids))]
                took = time.monotonic() - t0
                check([(f.id, f.type) for f in got] == list(zip(ids, [P.SET_REPLY, P.PONG, P.SET_REPLY,
                                                                      P.SET_REPLY, P.VALUES])),
                      f"round {k}: replies {got}")
                r = decode(got[0], "the SET of three")
                check(r["result"] == P.EIO and [x["result"] for x in r["results"]] == [P.EIO, 0, P.EIO],
                      f"round {k}: {r}, expected EIO for relay and saved, 0 for plain")
                check(all(x["seq"] > before[i] for x, i in zip(r["results"], (RELAY, PLAIN, SAVED))),
                      f"round {k}: the writes' seqs {r['results']} (before: {before}): they were written")
                r = decode(got[3], "the SET of fan")
                check(r["result"] == P.EIO and r["results"][0]["result"] == P.EIO and r["results"][0]["seq"] > 0,
                      f"round {k}: fan: {r}")
                check(took < 3.0, f"round {k}: the failures took {took:.2f} s to be reported (a timeout?)")
                vals = decode(got[4], "GET")["values"]
                check(vals[0]["value"] == bytes([1 - k % 2]) and struct.unpack("<d", vals[1]["value"])[0] == 10 + k,
                      f"round {k}: the values are not in the table: {vals}")
    finally:
        d.stop()


@needs_server
def test_set_applied_hwd_stopped(ctx):
    """§3.3: pbus-hwd stopped (SIGSTOP, so pbusd does not restart it): a SET
    of a bound parameter with APPLIED is answered ETIMEDOUT after
    --apply-timeout (300 ms), written all the same; one of an unbound
    parameter at once. More such SETs than pbusd holds (256) are all
    answered, in order. pbus-hwd continued: failures are reported again."""
    d = applied_server(ctx, ["--apply-timeout", "300"])
    hwd = None
    try:
        hwd = wait_until("pbus-hwd to start", lambda: hwd_children(d))[0]
        with ctx.connect(d) as c:
            wait_until("pbus-hwd to find the devices missing", lambda: c.get([RELAY])[0]["status"] == 3)
            os.kill(hwd, signal.SIGSTOP)
            wait_until("pbus-hwd to stop", lambda: stopped(hwd))
            for k in range(3):
                r, took = timed_set_reply(c, [(RELAY, bytes([k % 2])), (PLAIN, struct.pack("<d", k))], f"round {k}")
                check(r["result"] == P.ETIMEDOUT and [x["result"] for x in r["results"]] == [P.ETIMEDOUT, 0],
                      f"round {k}: {r}")
                check(all(x["seq"] > 0 for x in r["results"]), f"round {k}: not written? {r}")
                check(0.29 <= took < 1.5, f"round {k}: ETIMEDOUT after {took:.3f} s, expected 0.3 s")
                r, took = timed_set_reply(c, [(PLAIN, struct.pack("<d", 100 + k))], f"round {k}: plain")
                check(r["result"] == 0 and took < 0.25, f"round {k}: unbound: {r} after {took:.3f} s")
            frames, expect = [], []
            for k in range(300):
                frames.append(P.encode_frame(P.SET, 20000 + 2 * k, P.encode_body(
                    P.SET, {"writes": [{"index": RELAY, "value": bytes([k % 2])}]}), P.APPLIED))
                frames.append(P.encode_message(P.PING, 20001 + 2 * k, {"data": b"%d" % k}))
                expect += [(20000 + 2 * k, P.SET_REPLY), (20001 + 2 * k, P.PONG)]
            c.send_bytes(b"".join(frames))
            got = []
            while len(got) < len(expect):
                f = read_frame(c, f"burst: reply {len(got) + 1} of {len(expect)}", timeout=20)
                got.append((f.id, f.type))
                if f.type == P.SET_REPLY:
                    check(f.decode()["result"] == P.ETIMEDOUT, f"burst: SET {f.id}: {f.decode()}")
            bad = [k for k in range(len(got)) if got[k] != expect[k]]
            check(not bad, f"burst: reply {bad[:1]} out of order: {got[bad[0]] if bad else ''}")
            os.kill(hwd, signal.SIGCONT)
            hwd = None
            r, took = timed_set_reply(c, [(RELAY, b"\1")], "pbus-hwd continued")
            check(r["result"] == P.EIO and took < 3.0, f"pbus-hwd continued: {r} after {took:.2f} s")
        check(d.proc.poll() is None, "pbusd died")
    finally:
        if hwd:
            os.kill(hwd, signal.SIGCONT)
        d.stop()


def subscribe_wait_initial(c, indexes, what, **kw):
    sub = c.subscribe(indexes, **kw)
    check(sub != 0, f"{what}: subscription id 0")
    n = drain_notifies(c, lambda ns: any(x["subscription"] == sub for x in ns), what)
    mine = [x for x in n if x["subscription"] == sub]
    return sub, mine[0], [x for x in n if x["subscription"] != sub]


@needs_server
def test_subscribe_initial(ctx):
    with ctx.connect() as c:
        idx = [3, 21, 15, 19, 17]
        sub, first, _ = subscribe_wait_initial(c, idx, "SUBSCRIBE")
        got = {v["index"]: v for v in first["values"]}
        check(sorted(got) == sorted(idx) and len(first["values"]) == len(idx),
              f"the first NOTIFY has {[v['index'] for v in first['values']]}, expected {idx}")
        now = {v["index"]: v for v in c.get(idx)}
        check(got == now, f"the first NOTIFY's values differ from GET's: {summarize([first])}")
        sub2, first2, _ = subscribe_wait_initial(c, [3], "second SUBSCRIBE")
        check(sub2 != sub, f"two subscriptions of one connection have the id {sub}")
        check([v["index"] for v in first2["values"]] == [3], "second subscription's first NOTIFY")


@needs_server
def test_subscribe_changes(ctx):
    with ctx.connect() as c, ctx.connect(name="writer") as w:
        sub, _, _ = subscribe_wait_initial(c, [3, 21, 17], "SUBSCRIBE")
        # Through the socket (another connection).
        r = w.set([ctx.w("trim", 6)])
        n = drain_notifies(c, lambda ns: has(ns, sub, 3, lambda v: ctx.value(v) == 6), "after SET trim=6")
        check(n[-1]["values"] and all(v["index"] == 3 for v in n[-1]["values"]),
              f"NOTIFY after SET trim carries other parameters: {summarize(n)}")
        v = [x for x in n[-1]["values"] if x["index"] == 3][0]
        check(v["seq"] == r["results"][0]["seq"] and v["status"] == 0, f"NOTIFY trim seq/status: {v}")
        # Through the segment.
        ctx.segment_set("mode=TRIPPED")
        n = drain_notifies(c, lambda ns: has(ns, sub, 17, lambda v: ctx.value(v) == "TRIPPED"), "after pbus set mode")
        ctx.segment_set("level=3.5", "trim=-2")
        drain_notifies(c, lambda ns: has(ns, sub, 21, lambda v: ctx.value(v) == 3.5)
                       and has(ns, sub, 3, lambda v: ctx.value(v) == -2), "after pbus set level trim")
        # A SET the table refuses (out of range) and then a write of the
        # same parameter through the segment: that one is notified.
        r = w.set([ctx.w("trim", 11)])
        check(r["result"] == P.ERANGE, f"SET trim=11: {r}")
        ctx.segment_set("trim=4")
        drain_notifies(c, lambda ns: has(ns, sub, 3, lambda v: ctx.value(v) == 4),
                       "after a refused SET trim=11 and pbus set trim=4")
        # Its own writes notify the writer's subscription too.
        c.set([ctx.w("level", 4.5)])
        drain_notifies(c, lambda ns: has(ns, sub, 21, lambda v: ctx.value(v) == 4.5), "after its own SET")
        # A parameter outside the subscription: nothing.
        w.set([ctx.w("fan_level", 2)])
        c.ping()
        w.set([ctx.w("trim", 5)])
        n = drain_notifies(c, lambda ns: has(ns, sub, 3, lambda v: ctx.value(v) == 5), "after SET trim=5")
        check(not any(v["index"] == 7 for x in n for v in x["values"]), f"fan_level notified: {summarize(n)}")


def notify_problems(notifies, sub, index, final, value_of):
    """What is wrong with a subscription's stream of one parameter: a
    version notified twice or going back, the last value not @final."""
    problems = []
    seqs = [v["seq"] for n in notifies if n["subscription"] == sub for v in n["values"] if v["index"] == index]
    dups = sorted({q for q in seqs if seqs.count(q) > 1})
    if dups:
        problems.append(f"{len(dups)} versions notified more than once (e.g. seq {dups[:5]}), i.e. NOTIFYs for "
                        f"a parameter that had not changed since the previous NOTIFY")
    back = [(a, b) for a, b in zip(seqs, seqs[1:]) if b < a]
    if back:
        problems.append(f"versions going back: {back[:5]}")
    if any(sum(v["index"] == index for v in n["values"]) > 1 for n in notifies):
        problems.append("a NOTIFY holds the parameter twice")
    last = [v for n in notifies if n["subscription"] == sub for v in n["values"] if v["index"] == index]
    if not last or value_of(last[-1]) != final:
        problems.append(f"the last NOTIFY's value is {value_of(last[-1]) if last else None!r}, not {final!r}")
    return problems


@needs_server
def test_subscribe_first_change(ctx):
    # The first change after the first subscription of a fresh pbusd must be
    # notified like any other. (A race would lose it now and then: so 40
    # fresh daemons, each: SUBSCRIBE, the first NOTIFY, one SET.)
    for k in range(40):
        d = ctx.start_server()
        try:
            with ctx.connect(d) as c, ctx.connect(d, name="writer") as w:
                sub, first, _ = subscribe_wait_initial(c, [3, 21], f"daemon {k}: SUBSCRIBE")
                r = w.set([ctx.w("trim", 6)])
                check(r["result"] == 0, f"SET trim: {r}")
                try:
                    n = drain_notifies(c, lambda ns: has(ns, sub, 3, lambda v: ctx.value(v) == 6), "")
                except Failure:
                    w.set([ctx.w("level", 1.0)])
                    try:
                        later = drain_notifies(c, lambda ns: ns, "")
                        after = f"; the next write (level) brought {summarize(later)}"
                    except Failure:
                        after = "; the next write (level) was not notified either"
                    raise Failure(f"fresh pbusd {k + 1}: SET trim=6 (seq {r['results'][0]['seq']}) right after "
                                  f"the first NOTIFY ({summarize([first])}) was never notified{after}")
                check(len(n) == 1 and [v["index"] for v in n[0]["values"]] == [3], f"NOTIFY: {summarize(n)}")
        finally:
            d.stop()


@needs_server
def test_subscribe_coalescing(ctx):
    total = 2000
    with ctx.connect(name="sleeper") as c, ctx.connect(name="writer") as w, ctx.connect(name="live") as live:
        idx = ctx.schema.index("sample_rate")
        w.set([ctx.w("sample_rate", 1)])
        sub, first, _ = subscribe_wait_initial(c, [idx], "SUBSCRIBE sample_rate")
        live_sub, _, _ = subscribe_wait_initial(live, [idx], "the live SUBSCRIBE sample_rate")
        seq0 = first["values"][0]["seq"]
        # The writer writes while the subscriber does not read; another
        # subscriber, which reads, hears of every 250th value at once.
        last_seq = None
        for k in range(total):
            r = w.set([ctx.w("sample_rate", 2 + k)])
            check(r["result"] == 0, f"SET sample_rate: {r}")
            last_seq = r["results"][0]["seq"]
            if k % 250 == 249:
                t0 = time.monotonic()
                drain_notifies(live, lambda ns: has(ns[-1:], live_sub, idx, lambda v: ctx.value(v) == 2 + k),
                               f"the live subscriber, for value {2 + k}, while the sleeper does not read")
                took = time.monotonic() - t0
                check(took < 1, f"the live subscriber heard of value {2 + k} only after {took:.2f} s")
        final = total + 1
        check(last_seq == seq0 + total, f"seq after {total} SETs: {last_seq}, expected {seq0 + total}")
        # Now it reads: a few NOTIFYs, never older values, the last one final.
        n = []
        deadline = time.monotonic() + WAIT
        while not (n and has(n[-1:], sub, idx, lambda v: ctx.value(v) == final)):
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                f = c.recv_frame(left)
            except TimeoutError:
                break
            check(f.type == P.NOTIFY, f"unexpected {f!r}")
            n.append(decode(f, "NOTIFY"))
        else:
            c.ping()  # anything still queued arrives before the PONG
            n += c.notifications
            c.notifications.clear()
        ctx.log(f"{total} writes while not reading: {len(n)} NOTIFYs")
        problems = notify_problems(n, sub, idx, final, ctx.value)
        if problems and "not" in problems[-1] and problems[-1].startswith("the last"):
            problems[-1] += f" after {WAIT} s: the pending change was lost"
        if len(n) > 100:
            problems.insert(0, f"{len(n)} NOTIFYs for {total} writes to one parameter while the client did not "
                               f"read: a backlog, not the latest values (spec: at most a small number)")
        check(not problems, "; ".join(problems))


@needs_server
def test_subscribe_min_interval(ctx):
    interval = 0.2
    with ctx.connect(name="slow") as c, ctx.connect(name="writer") as w:
        idx = ctx.schema.index("level")
        sub, _, _ = subscribe_wait_initial(c, [idx], "SUBSCRIBE", min_interval_us=int(interval * 1e6))
        t_first = time.monotonic()
        arrivals = [(t_first, None)]
        value = 0.0
        end = t_first + 1.2
        while time.monotonic() < end:
            value += 1
            r = w.set([ctx.w("level", value)])
            check(r["result"] == 0, f"SET level: {r}")
            # Read what comes meanwhile, for about 10 ms.
            stop = time.monotonic() + 0.01
            while (left := stop - time.monotonic()) > 0:
                try:
                    f = c.recv_frame(left)
                except TimeoutError:
                    break
                check(f.type == P.NOTIFY, f"unexpected {f!r}")
                arrivals.append((time.monotonic(), decode(f, "NOTIFY")))
        got = [x for _, x in arrivals[1:]]
        if not has(got, sub, idx, lambda v: ctx.value(v) == value):
            more = drain_notifies(c, lambda ns: has(ns, sub, idx, lambda v: ctx.value(v) == value),
                                  f"the final value {value} (last of {len(arrivals) - 1} NOTIFYs "
                                  f"{[ctx.value(v) for x in got for v in x['values']][-4:]})", timeout=2)
            arrivals += [(time.monotonic(), x) for x in more]
        times = [t for t, _ in arrivals]
        gaps = [b - a for a, b in zip(times, times[1:])]
        ctx.log(f"min_interval {interval} s: {len(arrivals)} NOTIFYs, gaps {[round(g, 3) for g in gaps]}")
        problems = notify_problems([x for _, x in arrivals[1:]], sub, idx, value, ctx.value)
        # Arrival times jitter by a scheduling delay: 25 % tolerance.
        if not all(g >= interval * 0.75 for g in gaps):
            problems.append(f"NOTIFYs closer than min_interval_us ({interval} s): gaps {[round(g, 3) for g in gaps]}")
        if len(arrivals) < 4:
            problems.append(f"only {len(arrivals)} NOTIFYs in 1.2 s of changes: changes were not coalesced "
                            f"into the next interval")
        check(not problems, "; ".join(problems))


@needs_server
def test_subscribe_dropped_change_starts_no_interval(ctx):
    """min_interval_us counts from the previous NOTIFY sent: a change that
    the deadband drops sends nothing and must not hold back the next one."""
    i = ctx.schema.index
    interval = 0.4
    with ctx.connect(name="interval") as c, ctx.connect(name="writer") as w:
        w.set([ctx.w("level", 0.0)])
        sub, _, _ = subscribe_wait_initial(c, [i("level")], "SUBSCRIBE", min_interval_us=int(interval * 1e6),
                                           deadband=1.0)
        time.sleep(interval + 0.05)  # the initial NOTIFY's interval is over
        w.set([ctx.w("level", 0.5)])  # within the deadband: nothing is sent
        time.sleep(0.05)
        t0 = time.monotonic()
        w.set([ctx.w("level", 5.0)])
        drain_notifies(c, lambda ns: has(ns, sub, i("level"), lambda v: ctx.value(v) == 5.0), "after level 5")
        delay = time.monotonic() - t0
        check(delay < interval / 2, f"the NOTIFY of level 5 came {delay:.3f} s after the write, held back by "
                                    f"the interval of a change that was not sent")


def deferred_arrives(ctx, c, sub, writes, expect, interval, what):
    """Make @writes ((connection, [(name, value)]) each, 10 ms apart) and
    then nothing more: the changes that fell within @sub's interval must
    come, as their latest values @expect {name: value}, when it ends, with
    no later write to trigger them. Returns the delay after the last write."""
    i = ctx.schema.index
    for k, (writer, assignments) in enumerate(writes):
        if k:
            time.sleep(0.01)
        r = writer.set([ctx.w(n, v) for n, v in assignments])
        check(r["result"] == 0, f"{what}: SET {assignments}: {r}")
    t0 = time.monotonic()
    margin = 0.5  # a loaded machine's scheduling delay; a deferred change that is lost never comes
    try:
        drain_notifies(c, lambda ns: all(has(ns, sub, i(n), lambda v, n=n, x=x: ctx.value(v) == x)
                                         for n, x in expect.items()), what, timeout=interval + margin)
    except Failure as e:
        raise Failure(f"{e}: the change made within the interval was not sent when the interval ended "
                      f"(min_interval_us defers a change; it must not drop it or hold it until another write)")
    return time.monotonic() - t0


@needs_server
def test_subscribe_min_interval_defers_last_change(ctx):
    """A change within a subscription's interval is deferred, not dropped:
    when the interval ends the subscriber gets the latest values without
    any further change to trigger them (docs/socket-protocol.md §3.4). Two
    writes 10 ms apart, the first notified at once, the second when the
    interval ends: of one parameter, of two parameters of one subscription;
    by another connection and by the subscriber itself; of persistent
    parameters, whose SET_REPLY waits for the save (--save-delay, 20 ms):
    with an interval of 300 ms it surely goes out while the NOTIFY waits
    (pbus-scpi's case: it subscribes to the status at 50 ms and sets the
    persistent output_enable on the same connection)."""
    for interval, rounds in ((0.05, 3), (0.3, 1)):
        with ctx.connect(name="interval") as c, ctx.connect(name="writer") as w:
            w.set([ctx.w("output_enable", False), ctx.w("trim", 0), ctx.w("ramp_ms", 100), ctx.w("label", "x")])
            sub, _, _ = subscribe_wait_initial(c, [ctx.schema.index(n) for n in
                                                  ("output_enable", "trim", "ramp_ms", "label")],
                                               "SUBSCRIBE", min_interval_us=int(interval * 1e6))
            cases = [
                ("one parameter, another connection writes",
                 [(w, [("output_enable", True)]), (w, [("output_enable", False)])], {"output_enable": False}),
                ("two parameters, another connection writes",
                 [(w, [("output_enable", True)]), (w, [("trim", 3)])], {"output_enable": True, "trim": 3}),
                ("one parameter, the subscriber writes",
                 [(c, [("trim", 4)]), (c, [("trim", -4)])], {"trim": -4}),
                ("two parameters, the subscriber writes",
                 [(c, [("trim", 5)]), (c, [("output_enable", False)])], {"trim": 5, "output_enable": False}),
                ("a persistent parameter, the subscriber writes",
                 [(c, [("ramp_ms", 200)]), (c, [("ramp_ms", 300)])], {"ramp_ms": 300}),
                ("two persistent parameters, the subscriber writes",
                 [(c, [("ramp_ms", 400)]), (c, [("label", "y")])], {"ramp_ms": 400, "label": "y"}),
                ("a persistent parameter, another connection writes",
                 [(w, [("ramp_ms", 500)]), (w, [("ramp_ms", 600)])], {"ramp_ms": 600}),
            ]
            for rnd in range(rounds):
                for what, writes, expect in cases:
                    what = f"interval {interval * 1000:.0f} ms, round {rnd + 1}: {what}"
                    time.sleep(interval + 0.02)  # the previous NOTIFY's interval is over
                    c.notifications.clear()
                    delay = deferred_arrives(ctx, c, sub, writes, expect, interval, what)
                    ctx.log(f"{what}: the deferred NOTIFY came {delay * 1000:.1f} ms after the last write")


@needs_server
def test_subscribe_behind_save_first_notify(ctx):
    """A SUBSCRIBE sent right behind a SET of a persistent parameter: its
    SUBSCRIBED waits for the save with the SET_REPLY, and its first NOTIFY
    follows them when the save releases them, with nothing else happening
    on the server to bring it out."""
    for rnd in range(5):
        with ctx.connect(name="behind a save") as c:
            ids = [c.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in [ctx.w("ramp_ms", 700 + rnd)]]}),
                   c.send(P.SUBSCRIBE, {"indexes": [ctx.schema.index("trim")], "min_interval_us": 50000,
                                        "deadband": 0.0})]
            got = [read_frame(c, f"round {rnd + 1}: reply {k + 1} of 2") for k in range(2)]
            check([(f.id, f.type) for f in got] == list(zip(ids, [P.SET_REPLY, P.SUBSCRIBED])),
                  f"round {rnd + 1}: replies {got!r}")
            sub = got[1].decode()["subscription"]
            t0 = time.monotonic()
            drain_notifies(c, lambda ns: has(ns, sub, ctx.schema.index("trim")),
                           f"round {rnd + 1}: the first NOTIFY after SUBSCRIBED, which waited for a save", timeout=1)
            ctx.log(f"the first NOTIFY came {(time.monotonic() - t0) * 1000:.1f} ms after SUBSCRIBED")


@needs_server
def test_subscribe_deadband(ctx):
    i = ctx.schema.index
    with ctx.connect(name="deadband") as c, ctx.connect(name="writer") as w:
        w.set([ctx.w("level", 0.0), ctx.w("offset_counts", -5), ctx.w("calibration", b"")])
        s1, _, _ = subscribe_wait_initial(c, [i("level"), i("calibration"), i("label")], "SUBSCRIBE 1",
                                          deadband=1.0)
        s2, _, _ = subscribe_wait_initial(c, [i("offset_counts"), i("calibration")], "SUBSCRIBE 2", deadband=5.0)
        marker = [0]

        def step(writes, expect, what):
            """Write, then a marker (bytes: the deadband does not apply);
            after both subscriptions' marker: @expect {(sub, index):
            value or None (must not appear)}."""
            r = w.set([ctx.w(n, v) for n, v in writes])
            check(r["result"] == 0, f"{what}: {r}")
            marker[0] += 1
            m = bytes([marker[0]])
            w.set([ctx.w("calibration", m)])
            got = drain_notifies(c, lambda ns: has(ns, s1, i("calibration"), lambda v: v["value"] == m)
                                 and has(ns, s2, i("calibration"), lambda v: v["value"] == m), what)
            for (sub, index), value in expect.items():
                seen = [ctx.value(v) for x in got if x["subscription"] == sub
                        for v in x["values"] if v["index"] == index]
                if value is None:
                    check(not seen, f"{what}: notified {ctx.schema[index].name} {seen} within the deadband "
                                    f"(sub {sub}): {summarize(got)}")
                else:
                    check(seen and seen[-1] == value, f"{what}: {ctx.schema[index].name} not notified as "
                                                      f"{value!r} (sub {sub}): {summarize(got)}")
            return got

        L, O = (s1, i("level")), (s2, i("offset_counts"))
        step([("level", 0.5)], {L: None}, "level 0 -> 0.5 (deadband 1)")
        step([("level", 0.9)], {L: None}, "level 0.9")
        step([("level", 1.2)], {L: 1.2}, "level 1.2: 1.2 from the last sent 0")
        step([("level", 2.1)], {L: None}, "level 2.1: 0.9 from the last sent 1.2")
        step([("level", 0.1)], {L: 0.1}, "level 0.1: 1.1 from the last sent 1.2")
        step([("level", -0.899)], {L: None}, "level -0.899")
        step([("level", -0.9)], {L: -0.9}, "level -0.9: exactly the deadband is not smaller")
        step([("offset_counts", -3)], {O: None}, "offset_counts -5 -> -3 (deadband 5)")
        step([("offset_counts", 0)], {O: 0}, "offset_counts 0: 5 from the last sent -5")
        step([("offset_counts", 4)], {O: None}, "offset_counts 4")
        # Other types ignore the deadband: a string changes by any amount.
        step([("label", "a")], {(s1, i("label")): "a"}, "label (string)")
        got = step([("label", "a")], {}, "label written with the same text")
        same = [v for x in got if x["subscription"] == s1 for v in x["values"] if v["index"] == i("label")]
        ctx.note(f"a write of the same value (a new version) is {'notified' if same else 'not notified'}")
        # A change of status is notified whatever the value: pristine is
        # invalid until written (only this test writes it); its first write
        # keeps the value 0.0 and makes the status ok.
        pv = c.get([i("pristine")])[0]
        check(pv["status"] == 3 and pv["seq"] == 0 and ctx.value(pv) == 0.0, f"pristine before any write: {pv}")
        s3, first, _ = subscribe_wait_initial(c, [i("pristine"), i("calibration")], "SUBSCRIBE 3", deadband=1.0)
        check(first["values"][0]["status"] == 3 or first["values"][1]["status"] == 3, "pristine's first NOTIFY")
        w.set([ctx.w("pristine", 0.0)])
        marker[0] += 1
        m = bytes([marker[0]])
        w.set([ctx.w("calibration", m)])
        got = drain_notifies(c, lambda ns: has(ns, s3, i("calibration"), lambda v: v["value"] == m), "pristine")
        check(has(got, s3, i("pristine"), lambda v: v["status"] == 0),
              f"status invalid -> ok with the same value (0.0, deadband 1) not notified: {summarize(got)}")


@needs_server
def test_subscribe_refusals(ctx):
    n = len(ctx.schema.params)
    with ctx.connect() as c:
        for idx, code in (([ctx.schema.index("quiet")], P.EACCES), ([ctx.schema.index("secret")], P.EACCES),
                          ([3, ctx.schema.index("quiet")], P.EACCES), ([3, n], P.ENOENT), ([0xFFFFFFFF], P.ENOENT)):
            request_error(c, P.SUBSCRIBE, {"min_interval_us": 0, "deadband": 0.0, "indexes": idx}, code,
                          f"SUBSCRIBE {idx}")
        c.ping()
        check(not c.notifications, f"a refused SUBSCRIBE notified: {summarize(c.notifications)}")
        # A refused subscription did not count: the stats say 0 on this connection.
        doc = stats(c)
        mine = [d for d in doc["clients_detail"] if d.get("pid") == os.getpid() and d.get("name") == "conformance"]
        check(mine and all(d["subscriptions"] == 0 for d in mine), f"clients_detail: {mine}")
    with ctx.connect() as c:
        request_error(c, P.SUBSCRIBE, {"min_interval_us": 0, "deadband": 0.0, "indexes": []}, P.EPROTO,
                      "SUBSCRIBE of 0 indexes", closes=True)


@needs_server
def test_subscribe_limit(ctx):
    with ctx.connect() as c:
        limit = c.hello_reply["max_subscriptions"]
        subs = [c.subscribe([3]) for _ in range(limit)]
        check(len(set(subs)) == limit and 0 not in subs, f"subscription ids not unique and non-zero: {subs}")
        request_error(c, P.SUBSCRIBE, {"min_interval_us": 0, "deadband": 0.0, "indexes": [3]}, P.EMFILE,
                      f"subscription {limit + 1}")
        c.ping()  # the connection stays
        c.unsubscribe(subs[0])
        subs.append(c.subscribe([3]))
        check(subs[-1] != 0 and subs[-1] not in subs[1:-1], f"a new id after UNSUBSCRIBE: {subs[-1]}")


@needs_server
def test_unsubscribe(ctx):
    with ctx.connect() as c, ctx.connect(name="writer") as w:
        s1, _, _ = subscribe_wait_initial(c, [3], "SUBSCRIBE 1")
        s2, _, _ = subscribe_wait_initial(c, [3], "SUBSCRIBE 2")
        w.set([ctx.w("trim", 9)])
        c.unsubscribe(s1)
        c.notifications.clear()  # those came before UNSUBSCRIBED: allowed
        for k in range(3):
            w.set([ctx.w("trim", -k)])
            got = drain_notifies(c, lambda ns: has(ns, s2, 3, lambda v: ctx.value(v) == -k), f"trim={-k}")
            check(not any(x["subscription"] == s1 for x in got), f"NOTIFY of {s1} after UNSUBSCRIBED: {summarize(got)}")
        c.ping()
        check(not any(x["subscription"] == s1 for x in c.notifications), "NOTIFY of an ended subscription")
        for bad in (s1, 0, 0xFFFFFFFF, s2 + 1000):
            request_error(c, P.UNSUBSCRIBE, {"subscription": bad}, P.ENOENT, f"UNSUBSCRIBE {bad}")
        c.ping()


# --- Hostile input (§4) ---------------------------------------------------------

def frame(type_, body=b"", id_=7, flags=0, length=None):
    return struct.pack("<IHHI", 12 + len(body) if length is None else length, type_, flags, id_) + body


@needs_server
def test_malformed_header(ctx):
    with Witness(ctx) as w:
        for length in (0, 4, 11):
            hostile(ctx, frame(P.PING, length=length), P.EPROTO, f"length {length}", witness=w)
        mf = 1 << 20
        for length in (mf + 1, 0xFFFFFFFF):
            hostile(ctx, frame(P.PING, length=length), P.EMSGSIZE, f"length {length}", witness=w)
        for t in (0, 19, 0x7FFF, 0xFFFF):
            hostile(ctx, frame(t, b"abcd"), P.EPROTO, f"unknown type {t}", witness=w)
        for fl in (1, 0x8000):
            hostile(ctx, frame(P.PING, b"x", flags=fl), P.EPROTO, f"flags {fl:#x}", witness=w)
            hostile(ctx, frame(P.HELLO, P.encode_body(P.HELLO, hello_fields()), flags=fl), P.EPROTO,
                    f"HELLO with flags {fl:#x}", hello=False, witness=w)
        # A frame of exactly max_frame is fine.
        with ctx.connect() as c:
            data = bytes(range(256)) * ((mf - 12) // 256) + b"\x55" * ((mf - 12) % 256)
            check(c.ping(data) == data, "PING of max_frame bytes")


def body_cases(ctx):
    u = lambda *v: struct.pack("<" + "I" * len(v), *v)  # noqa: E731
    d8 = struct.pack("<d", 1.0)
    return [
        ("GET empty body", P.GET, b""),
        ("GET count 2, one index", P.GET, u(2, 3)),
        ("GET count 1, two indexes", P.GET, u(1, 3, 4)),
        ("GET count 1, 2 bytes of index", P.GET, u(1) + b"\3\0"),
        ("GET huge count", P.GET, u(0xFFFFFFFF, 3)),
        ("SET empty body", P.SET, b""),
        ("SET count 0", P.SET, u(0)),
        ("SET value shorter than its length", P.SET, u(1, 3, 8) + b"\1\0\0\0"),
        ("SET no length", P.SET, u(1, 3)),
        ("SET count 2, one write", P.SET, u(1 + 1, 3, 1) + b"\1"),
        ("SET a byte too many", P.SET, u(1, 3, 1) + b"\1\0"),
        ("SET huge length", P.SET, u(1, 3, 0xFFFFFFFF) + b"\1"),
        ("SET count above param_count", P.SET, u(len(ctx.schema.params) + 1) + u(3, 1) + b"\0"),
        ("SUBSCRIBE too short", P.SUBSCRIBE, u(0) + d8 + u(2, 3)),
        ("SUBSCRIBE too long", P.SUBSCRIBE, u(0) + d8 + u(1, 3) + b"\0"),
        ("UNSUBSCRIBE too short", P.UNSUBSCRIBE, b"\1\0"),
        ("UNSUBSCRIBE too long", P.UNSUBSCRIBE, u(1, 0)),
        ("SCHEMA_GET with a body", P.SCHEMA_GET, b"\0"),
        ("STATS_GET with a body", P.STATS_GET, u(0)),
    ]


@needs_server
def test_malformed_body(ctx):
    with Witness(ctx) as w:
        for what, t, body in body_cases(ctx):
            hostile(ctx, frame(t, body, id_=41), P.EPROTO, what, witness=w, id_=41)
        # HELLO malformed, as the first frame.
        good = P.encode_body(P.HELLO, hello_fields())
        for what, body in (("HELLO too short", good[:10]), ("HELLO too long", good + b"\0"),
                           ("HELLO name length beyond the body", good[:20] + struct.pack("<I", 1000) + b"x"),
                           ("HELLO empty", b"")):
            hostile(ctx, frame(P.HELLO, body, id_=1), P.EPROTO, what, hello=False, witness=w, id_=1)


@needs_server
def test_malformed_count_messages(ctx):
    """A count out of bounds is named as such, with the schema's parameter
    count, not as a length problem (every index list: GET, SUBSCRIBE, SET)."""
    u = lambda *v: struct.pack("<" + "I" * len(v), *v)  # noqa: E731
    d8 = struct.pack("<d", 1.0)
    n = len(ctx.schema.params)
    cases = [
        ("GET", P.GET, u(n + 11) + u(*([3] * (n + 11))), f"malformed GET: count {n + 11} exceeds the {n} "
                                                         "parameters of the schema"),
        ("GET", P.GET, u(n + 11, 3, 4), f"malformed GET: count {n + 11} exceeds the {n} parameters of the schema"),
        ("GET", P.GET, u(0), "malformed GET: count 0 (at least 1 index)"),
        ("GET", P.GET, u(3, 3, 4), "malformed GET: count 3 needs 12 bytes of indexes, the frame has 8"),
        ("SUBSCRIBE", P.SUBSCRIBE, u(0) + d8 + u(n + 1, 3),
         f"malformed SUBSCRIBE: count {n + 1} exceeds the {n} parameters of the schema"),
        ("SUBSCRIBE", P.SUBSCRIBE, u(0) + d8 + u(0), "malformed SUBSCRIBE: count 0 (at least 1 index)"),
        ("SET", P.SET, u(n + 1) + u(3, 1) + b"\0",
         f"malformed SET: count {n + 1} exceeds the {n} parameters of the schema"),
        ("SET", P.SET, u(0), "malformed SET: count 0 (at least 1 write)"),
    ]
    with Witness(ctx) as w:
        for what, t, body, want in cases:
            with ctx.connect(name="counts") as c:
                send_raw(c, frame(t, body, id_=43))
                msg, _ = expect_error(c, P.EPROTO, want, id_=43, closes=True)
                check(msg == want, f"{what}: ERROR message {msg!r}, expected {want!r}")
        w.check("after the bad counts")


@needs_server
def test_reply_as_request(ctx):
    with Witness(ctx) as w:
        samples = {
            P.HELLO_REPLY: {"version": 1, "schema_hash": 0, "param_count": 1, "max_frame": 4096,
                            "max_subscriptions": 1, "server_pid": 1, "instance": "x", "interface": "y"},
            P.SCHEMA: {"text": "pbus-schema 1\n"}, P.VALUES: {"values": []},
            P.SET_REPLY: {"result": 0, "results": []}, P.SUBSCRIBED: {"subscription": 1},
            P.UNSUBSCRIBED: {}, P.NOTIFY: {"subscription": 1, "values": []}, P.STATS: {"json": "{}"},
            P.ERROR: {"code": -22, "message": "no"}, P.PONG: {"data": b"hi"},
        }
        for t, f in samples.items():
            hostile(ctx, P.encode_message(t, 9, f), P.EPROTO, f"{P.typename(t)} sent as a request", witness=w)


@needs_server
def test_truncated_frame(ctx):
    with Witness(ctx) as w:
        for data in (frame(P.PING, b"x" * 100)[:50], frame(P.GET, struct.pack("<II", 1, 3))[:14], b"\x20\0\0",
                     frame(P.SET, struct.pack("<III", 1, 3, 1) + b"\1")[:-1]):
            c = ctx.connect(name="truncated")
            send_raw(c, data)
            c.close()
            w.check(f"a frame cut after {len(data)} bytes")
        # Without HELLO, too.
        c = ctx.connect(hello=False)
        send_raw(c, frame(P.HELLO, P.encode_body(P.HELLO, hello_fields()))[:20])
        c.close()
        w.check("a HELLO cut short")
        # Only the witness stays (every other connection of the tests is closed).
        wait_until("the dropped connections to leave the client count", lambda: stats(w.conn)["clients"] == 1)


@needs_server
def test_late_clients(ctx):
    """§4: a client that owes its HELLO, or the rest of a frame it began,
    for longer than --frame-timeout gets ERROR EPROTO and a close; one that
    is merely idle between frames is left alone."""
    d = ctx.start_server(extra=["--frame-timeout", "400"])
    try:
        with Witness(ctx, d) as w:
            cases = []
            c = ctx.connect(d, hello=False)                       # nothing at all
            cases.append((c, "no HELLO", "no HELLO"))
            c = ctx.connect(d, hello=False)                       # half a HELLO
            send_raw(c, frame(P.HELLO, P.encode_body(P.HELLO, hello_fields()))[:20])
            cases.append((c, "half a HELLO", "truncated frame: 20 of"))
            c = ctx.connect(d)                                    # half a GET
            send_raw(c, frame(P.GET, struct.pack("<II", 1, 3))[:14])
            cases.append((c, "half a GET", "truncated frame: 14 of its 20 bytes"))
            c = ctx.connect(d)                                    # a PING, then 3 bytes
            send_raw(c, frame(P.PING, b"x") + b"\x20\0\0")
            cases.append((c, "3 bytes of a header after a PING", "3 bytes of a header"))
            t0 = time.monotonic()
            for conn, what, text in cases:
                frames = [f for f in conn.wait_closed(WAIT) if f.type != P.PONG]
                check(len(frames) == 1 and frames[0].type == P.ERROR,
                      f"{what}: {frames!r} before the close, expected one ERROR")
                e = frames[0].decode()
                check(e["code"] == P.EPROTO and text in e["message"],
                      f"{what}: ERROR {P.errname(e['code'])} {e['message']!r}, expected EPROTO naming {text!r}")
                conn.close()
            took = time.monotonic() - t0
            check(took < 3, f"the late clients were closed only after {took:.1f} s (--frame-timeout 400 ms)")
            # A client trickling a frame a byte at a time gains nothing: the
            # time runs from the frame's first byte.
            c = ctx.connect(d)
            data, t0 = frame(P.PING, b"y" * 50), time.monotonic()
            for k in range(20):  # 1 s, well past the 400 ms, 20 of its 62 bytes
                send_raw(c, data[k:k + 1])
                time.sleep(0.05)
            frames = c.wait_closed(WAIT)
            check(frames and frames[-1].type == P.ERROR and time.monotonic() - t0 < 3,
                  f"a frame sent a byte every 50 ms: {frames!r} after {time.monotonic() - t0:.1f} s")
            c.close()
            # Idle after HELLO and between frames: not late. The witness
            # (connected before all this, idle since) still answers.
            idle = ctx.connect(d)
            time.sleep(1.0)
            check(idle.ping(b"idle") == b"idle", "a client idle for 1 s after HELLO was closed")
            idle.close()
            w.check("after the late clients")
    finally:
        d.stop()


@needs_server
def test_garbage(ctx):
    d = ctx.start_server()
    rng = random.Random(20261122)
    known = set(P.NAMES)
    codes = set(P.ERRNAMES)
    tally = {}
    with Witness(ctx, d) as w:
        for k in range(300):
            c = ctx.connect(d, hello=rng.random() < 0.7, name=f"garbage{k}")
            mode = rng.randrange(4)
            if mode == 0:      # any bytes
                data = rng.randbytes(rng.randrange(1, 200))
            elif mode == 1:    # a header that fits, any type and body
                body = rng.randbytes(rng.randrange(0, 64))
                data = frame(rng.randrange(0, 24), body, id_=rng.getrandbits(32),
                             flags=0 if rng.random() < 0.8 else rng.getrandbits(16))
            elif mode == 2:    # a request type, a random body
                body = rng.randbytes(rng.randrange(0, 64))
                data = frame(rng.choice(sorted(P.REQUESTS)), body, id_=rng.getrandbits(32))
            else:              # a valid request with bytes flipped
                t = rng.choice([P.GET, P.SET, P.SUBSCRIBE, P.UNSUBSCRIBE, P.PING, P.HELLO])
                f = {P.GET: {"indexes": [rng.randrange(30)]},
                     P.SET: {"writes": [{"index": rng.randrange(30), "value": rng.randbytes(rng.randrange(9))}]},
                     P.SUBSCRIBE: {"min_interval_us": 0, "deadband": 0.0, "indexes": [rng.randrange(30)]},
                     P.UNSUBSCRIBE: {"subscription": rng.randrange(3)}, P.PING: {"data": rng.randbytes(8)},
                     P.HELLO: hello_fields()}[t]
                data = bytearray(P.encode_message(t, rng.getrandbits(32), f))
                for _ in range(rng.randrange(1, 4)):
                    data[rng.randrange(len(data))] = rng.getrandbits(8)
                data = bytes(data)
            send_raw(c, data * rng.choice((1, 1, 2)))
            try:
                c.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            what = f"garbage {k} ({data[:40].hex()})"
            try:
                frames = c.wait_closed(WAIT)
            except TimeoutError:
                raise Failure(f"{what}: the server kept the connection open after the client's end")
            except P.ProtocolError as e:
                raise Failure(f"{what}: malformed frame from the server: {e}")
            finally:
                c.close()
            for f in frames:
                check(f.type in known and f.type not in P.REQUESTS, f"{what}: the server sent {f!r}")
                fields = decode(f, what)
                if f.type == P.ERROR:
                    check(fields["code"] in codes, f"{what}: ERROR code {fields['code']}")
            key = P.errname(decode(frames[-1], what)["code"]) if frames and frames[-1].type == P.ERROR else \
                P.typename(frames[-1].type) if frames else "closed silently"
            tally[key] = tally.get(key, 0) + 1
            if k % 50 == 49:
                w.check(what)
        w.check("after 300 garbage connections")
        ctx.log(f"garbage: how the 300 connections ended: {tally}")
        check(d.proc.poll() is None, "pbusd died")
    d.stop()


@needs_server
def test_max_clients(ctx):
    if "--max-clients" not in subprocess.run([ctx.pbusd, "--help"], stdout=subprocess.PIPE, text=True).stdout:
        raise Failure("pbusd has no --max-clients (docs/socket-protocol.md §4)")
    d = ctx.start_server(extra=["--max-clients", "4", "--max-subscriptions", "3"])
    conns = []
    try:
        for k in range(4):
            conns.append(ctx.connect(d, name=f"client{k}"))
        r = conns[0].hello_reply
        check(r["max_subscriptions"] == 3, f"--max-subscriptions 3: HELLO_REPLY says {r['max_subscriptions']}")
        # One more: EUSERS and a close (whether before or after its HELLO).
        extra = ctx.connect(d, hello=False)
        send_raw(extra, P.encode_message(P.HELLO, 1, hello_fields()))
        try:
            f = extra.recv_frame(WAIT)
        except P.Closed:
            raise Failure("connection 5 of 4 closed without ERROR EUSERS")
        except TimeoutError:
            raise Failure("connection 5 of 4: no answer")
        check(f.type == P.ERROR and f.decode()["code"] == P.EUSERS, f"connection 5 of 4: {f!r} {f.body[:60]!r}")
        ctx.note(f"EUSERS frame id: {f.id}")
        expect_closed(extra, "connection 5 of 4")
        extra.close()
        for c in conns:
            c.ping()
        doc = stats(conns[0])
        check(doc["max_clients"] == 4 and doc["clients"] == 4 and doc["rejected_connections"] >= 1,
              f"STATS: max_clients {doc['max_clients']}, clients {doc['clients']}, "
              f"rejected_connections {doc['rejected_connections']}")
        # --max-subscriptions: a fourth is EMFILE.
        for _ in range(3):
            conns[1].subscribe([3])
        request_error(conns[1], P.SUBSCRIBE, {"min_interval_us": 0, "deadband": 0.0, "indexes": [3]}, P.EMFILE,
                      "subscription 4 of 3")
        # A place freed is a place taken.
        conns.pop().close()

        def try_connect():
            # Until pbusd has seen the close, a newcomer still gets EUSERS.
            c = ctx.connect(d, hello=False)
            send_raw(c, P.encode_message(P.HELLO, 1, hello_fields()))
            try:
                f = c.recv_frame(WAIT)
            except P.Closed:
                f = None
            if f is not None and f.type == P.HELLO_REPLY:
                conns.append(c)
                return True
            c.close()
            check(f is None or (f.type == P.ERROR and f.decode()["code"] == P.EUSERS), f"a late client got {f!r}")
            return False
        wait_until("a connection after one closed", try_connect)
    finally:
        for c in conns:
            c.close()
        d.stop()


@needs_server
def test_max_frame_option(ctx):
    d = ctx.start_server(extra=["--max-frame", "4096"])
    try:
        with Witness(ctx, d) as w:
            check(w.conn.hello_reply["max_frame"] == 4096, f"--max-frame 4096: {w.conn.hello_reply['max_frame']}")
            with ctx.connect(d) as c:
                data = b"m" * (4096 - 12)
                check(c.ping(data) == data, "a PING of 4096 bytes")
                send_raw(c, frame(P.PING, b"m" * (4097 - 12)))
                expect_error(c, P.EMSGSIZE, "a PING of 4097 bytes", closes=True)
            w.check("after EMSGSIZE")
    finally:
        d.stop()
    for bad in ("4095", str(64 * 1024 * 1024 + 1)):
        p = subprocess.run([ctx.pbusd, "--schema", FIXTURE, "--instance", ctx.new_instance_name(),
                            "--state-dir", ctx.state_dir, "--socket-dir", ctx.sock_dir, "--max-frame", bad],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        check(p.returncode != 0, f"pbusd --max-frame {bad} started (range 4096 … 64 MiB)")


@needs_server
def test_frame_limit_replies(ctx):
    # max_frame bounds every frame, the server's too (§2). pbusd refuses a
    # --max-frame too small for the schema's text or its largest value
    # (fixtures/big.pbs: both); with fixtures/many.pbs every value fits
    # alone but not all together: a GET of all is EMSGSIZE, a NOTIFY of all
    # is split into frames that each fit.
    big = os.path.join(HERE, "fixtures", "big.pbs")
    log = os.path.join(ctx.tmp, "big-refused.log")
    with open(log, "w") as f:
        r = subprocess.run([ctx.pbusd, "--schema", big, "--instance", ctx.new_instance_name(),
                            "--state-dir", ctx.state_dir, "--socket-dir", ctx.sock_dir,
                            "--max-frame", "4096"], stdout=f, stderr=f, timeout=WAIT)
    text = open(log).read()
    check(r.returncode == 1 and "--max-frame 4096 is below the schema's text" in text,
          f"pbusd with a schema larger than --max-frame: rc {r.returncode}: {text}")
    many = os.path.join(HERE, "fixtures", "many.pbs")
    d = Daemon(ctx, ctx.new_instance_name(), ctx.state_dir, many,
               ["--socket-dir", ctx.sock_dir, "--max-frame", "4096"]).start()
    d.sock_dir = ctx.sock_dir
    try:
        with ctx.connect(d) as c:
            check(c.hello_reply["max_frame"] == 4096, f"max_frame {c.hello_reply['max_frame']}")
            n = c.hello_reply["param_count"]
            for first in range(0, n, 10):   # a SET of all would not fit either
                c.set([(k, b"v" * 200) for k in range(first, min(first + 10, n))])
            try:
                c.get(range(n))
                raise Failure("a GET of more than max_frame answered")
            except P.ServerError as e:
                check(e.code == P.EMSGSIZE, f"GET of all: {e}")
            sub = c.subscribe(range(n))
            seen, frames = set(), 0
            deadline = time.monotonic() + WAIT
            while len(seen) < n and time.monotonic() < deadline:
                f = c.recv_frame(WAIT)   # ProtocolError if above max_frame
                check(f.type == P.NOTIFY, f"{f!r}")
                frames += 1
                for v in f.decode()["values"]:
                    check(v["value"] == b"v" * 200, f"value {v}")
                    seen.add(v["index"])
            check(len(seen) == n and frames > 1, f"first NOTIFY: {len(seen)} of {n} values in {frames} frames")
            ctx.note(f"the first NOTIFY of {n} values of 200 bytes came in {frames} frames under max_frame 4096")
            c.unsubscribe(sub)
        check(d.proc.poll() is None, "pbusd died")
    finally:
        d.stop()


@needs_server
def test_unread_replies(ctx):
    # A client that sends and never reads: closed once 4 MiB of replies
    # wait for it (§4); the others carry on.
    with Witness(ctx) as w:
        c = ctx.connect(name="deaf")
        c.sock.setblocking(False)
        ping = frame(P.PING, b"p" * 65000)
        sent, pending, closed, stuck = 0, b"", False, False
        while sent < 64 << 20:
            if not pending:
                pending = ping
            try:
                n = c.sock.send(pending)
                sent += n
                pending = pending[n:]
            except BlockingIOError:
                # The server reads slower than this client writes; if it
                # reads nothing for 3 s, it stopped reading without closing.
                if not select.select([], [c.sock], [], 3)[1]:
                    stuck = True
                    break
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        c.sock.setblocking(True)
        received = 0
        try:
            while not stuck:
                if not select.select([c.sock], [], [], WAIT)[0]:
                    break
                chunk = c.sock.recv(1 << 20)
                if not chunk:
                    closed = True
                    break
                received += len(chunk)
        except ConnectionResetError:
            closed = True
        c.close()
        ctx.log(f"deaf client: sent {sent >> 10} KiB, received {received >> 10} KiB before the close")
        check(not stuck, f"after {sent >> 10} KiB of PINGs from a client that reads nothing, the server stopped "
                         f"reading it but did not close it")
        check(closed, f"sent {sent >> 20} MiB of PINGs without reading: not closed")
        check(received < sent, f"received {received} of {sent}: everything was answered")
        w.check("after the deaf client")


# --- Access (§6) ----------------------------------------------------------------

@needs_server
def test_segment_group(ctx, pbus_user):
    """docs/service.md, Permissions: with --group G the table is G's and
    mode 0664, so G's members (only they, besides pbusd's user) map it for
    writing; --mode still decides when given."""
    writers = pbus_user.group_gid

    def open_rdwr(seg):
        def probe():
            try:
                os.close(os.open(seg, os.O_RDWR))
                return "opened"
            except PermissionError:
                return "EACCES"
        return probe

    for extra, mode, member in ((["--group", TEST_GROUP], 0o664, "opened"),
                                (["--group", TEST_GROUP, "--mode", "0644"], 0o644, "EACCES")):
        d = ctx.start_server(extra=extra)
        try:
            seg = f"/dev/shm/pbus.{d.instance}"
            st = os.stat(seg)
            check(st.st_gid == writers and stat.S_IMODE(st.st_mode) == mode,
                  f"pbusd {' '.join(extra)}: {seg} has gid {st.st_gid} mode {stat.S_IMODE(st.st_mode):o}, "
                  f"expected {writers} and {mode:o}")
            got = pbus_user.run(open_rdwr(seg), [writers])
            check(got == member, f"pbusd {' '.join(extra)}: a member of {TEST_GROUP} opening the table O_RDWR: "
                                 f"{got}, expected {member}")
            got = pbus_user.run(open_rdwr(seg))
            check(got == "EACCES", f"pbusd {' '.join(extra)}: a non-member opening the table O_RDWR: {got}")
        finally:
            d.stop()


@needs_server
def test_access(ctx, pbus_user):
    writers = pbus_user.group_gid
    path = ctx.path()
    seg = f"/dev/shm/pbus.{ctx.daemon.instance}"
    sch = ctx.schema

    def probe():
        res = {"uid": os.getuid(), "groups": os.getgroups()}
        with P.Connection(path, timeout=WAIT) as c:
            c.hello("unprivileged")
            res["get"] = [(v["index"], v["status"]) for v in c.get([3, 21, 15])]
            for name, value in (("shared", 5), ("trim", 4), ("voltage_setpoint", 1.0), ("measured_voltage", 1.0),
                                ("identity.serial", "x"), ("level", 2.0)):
                p = sch[name]
                r = c.set([(p.index, P.encode_value(p.type, value, p.enum))])
                res["set " + name] = [r["result"]] + [x["result"] for x in r["results"]]
            r = c.set([(sch.index("shared"), struct.pack("<i", 6)), (sch.index("trim"), b"\1"),
                       (sch.index("measured_voltage"), struct.pack("<d", 0))])
            res["batch"] = [r["result"]] + [x["result"] for x in r["results"]]
            try:
                sub = c.subscribe([3])
                c.notification()
                res["subscribe"] = sub
            except P.ServerError as e:
                res["subscribe"] = e.code
            res["stats"] = bool(json.loads(c.stats()))
        fd = os.open(seg, os.O_RDONLY)
        os.close(fd)
        res["rdonly"] = True
        try:
            os.close(os.open(seg, os.O_RDWR))
            res["rdwr"] = "opened"
        except PermissionError:
            res["rdwr"] = "EACCES"
        return res

    with ctx.connect() as c:
        c.set([ctx.w("shared", 0)])
    # No group: reads, but writes nothing.
    r = pbus_user.run(probe)
    check(r["uid"] == pbus_user.uid, f"child uid {r['uid']}")
    check([x[0] for x in r["get"]] == [3, 21, 15], f"GET as {TEST_USER}: {r['get']}")
    for name, code in (("shared", P.EPERM), ("trim", P.EPERM), ("voltage_setpoint", P.EPERM),
                       ("measured_voltage", P.EACCES), ("identity.serial", P.EACCES), ("level", P.EPERM)):
        check(r["set " + name] == [code, code], f"SET {name} as {TEST_USER} without groups: {r['set ' + name]}, "
                                                f"expected {P.errname(code)}")
    check(r["batch"] == [P.EPERM, P.EPERM, P.EPERM, P.EACCES], f"batch as {TEST_USER}: {r['batch']}")
    check(isinstance(r["subscribe"], int) and r["subscribe"] > 0, f"SUBSCRIBE as {TEST_USER}: {r['subscribe']}")
    check(r["rdwr"] == "EACCES", f"{TEST_USER} opened {seg} O_RDWR")
    with ctx.connect() as c:
        check(ctx.value(c.get([ctx.schema.index("shared")])[0]) == 0, "shared changed by a refused write")
    # The group as a supplementary group: `shared` only.
    r = pbus_user.run(probe, [writers])
    check(writers in r["groups"], f"child groups {r['groups']}")
    check(r["set shared"] == [0, 0], f"SET shared as a member of {TEST_GROUP} (supplementary): {r['set shared']}")
    check(r["set trim"] == [P.EPERM, P.EPERM] and r["set measured_voltage"] == [P.EACCES, P.EACCES],
          f"{TEST_GROUP} member: trim {r['set trim']}, measured_voltage {r['set measured_voltage']}")
    check(r["batch"] == [P.EPERM, 0, P.EPERM, P.EACCES], f"batch as a {TEST_GROUP} member: {r['batch']}")
    check(ctx.get_value("shared") == "5", f"pbus get shared after the member's SET: {ctx.get_value('shared')}")
    # The group as the primary group.
    ctx.segment_set("shared=0")
    r = pbus_user.run(probe, gid=writers)
    check(r["set shared"] == [0, 0], f"SET shared with {TEST_GROUP} as primary group: {r['set shared']}")
    check(r["set trim"] == [P.EPERM, P.EPERM], f"primary group member: trim {r['set trim']}")
    check(r["rdwr"] == "EACCES", f"{TEST_USER} (group {TEST_GROUP}) opened {seg} O_RDWR")


@needs_server
def test_stats(ctx):
    with ctx.connect(name="stats-probe") as c:
        doc = stats(c)
        for k in STATS_KEYS:
            check(k in doc, f"STATS lacks {k!r}: {sorted(doc)}")
        check(doc["instance"] == ctx.daemon.instance, f"instance {doc['instance']!r}")
        for k in STATS_KEYS[1:-1]:
            check(isinstance(doc[k], (int, float)) and not isinstance(doc[k], bool) and doc[k] >= 0,
                  f"{k}: {doc[k]!r}")
        check(doc["max_clients"] == 256, f"max_clients {doc['max_clients']}, the default is 256")
        check(isinstance(doc["clients_detail"], list) and len(doc["clients_detail"]) == doc["clients"],
              f"clients {doc['clients']}, {len(doc['clients_detail'])} in clients_detail")
        for d in doc["clients_detail"]:
            for k in CLIENT_KEYS:
                check(k in d, f"clients_detail entry lacks {k!r}: {d}")
        mine = [d for d in doc["clients_detail"] if d["name"] == "stats-probe"]
        check(len(mine) == 1 and mine[0]["pid"] == os.getpid() and mine[0]["uid"] == os.getuid(),
              f"this client in clients_detail: {mine}")
        others = [ctx.connect(name=f"extra{k}") for k in range(3)]

        def extras(doc):
            check(doc["clients"] == len(doc["clients_detail"]),
                  f"clients {doc['clients']}, {len(doc['clients_detail'])} in clients_detail")
            return [x for x in doc["clients_detail"] if x["name"].startswith("extra")]
        try:
            others[0].subscribe([3])
            others[0].subscribe([21])
            d2 = wait_until("3 more clients", lambda: len(extras(s := stats(c))) == 3 and s)
            check(d2["subscriptions"] >= doc["subscriptions"] + 2, f"subscriptions {d2['subscriptions']}")
            e = [x for x in d2["clients_detail"] if x["name"] == "extra0"]
            check(len(e) == 1 and e[0]["subscriptions"] == 2, f"extra0 in clients_detail: {e}")
            check(d2["requests"] > doc["requests"] and d2["connections_total"] >= doc["connections_total"] + 3,
                  "requests/connections_total did not grow")
            check(d2["bytes_in"] > doc["bytes_in"] and d2["bytes_out"] > doc["bytes_out"], "bytes did not grow")
        finally:
            for o in others:
                o.close()
        wait_until("the 3 clients to leave", lambda: not extras(stats(c)))
        # An ERROR counts.
        errs = stats(c)["errors"]
        request_error(c, P.GET, {"indexes": [99]}, P.ENOENT, "GET 99")
        check(stats(c)["errors"] > errs, "errors did not count an ERROR")


@needs_server
def test_stats_client_names(ctx):
    # A `str` is UTF-8 without NUL (§2), STATS a JSON object (§7): whatever
    # name a client gives in HELLO, either the HELLO is refused (EPROTO) or
    # STATS stays a valid str holding valid JSON for everybody else.
    with ctx.connect(name="observer") as o:
        for name in (b"\xff\xfe", b"a\0b", b"\xc3", 'q"\\\n\t\x01\u2028'.encode(), "\u00b5A".encode()):
            with ctx.connect(hello=False) as c:
                c.send_bytes(frame(P.HELLO, struct.pack("<IIQ", 1, 1, 0) + P._str(name), id_=1))
                f = read_frame(c, f"HELLO named {name!r}")
                if f.type == P.ERROR:
                    check(decode(f, "ERROR")["code"] == P.EPROTO, f"HELLO named {name!r}: {decode(f, 'ERROR')}")
                    continue
                check(f.type == P.HELLO_REPLY, f"HELLO named {name!r}: {f!r}")
                r = o.reply(o.send(P.STATS_GET))
                check(r.type == P.STATS, f"STATS: {r!r}")
                try:
                    doc = json.loads(r.decode()["json"])
                except P.ProtocolError as e:
                    raise Failure(f"with a client named {name!r} (accepted by HELLO), STATS is not a valid str: {e}")
                except ValueError as e:
                    raise Failure(f"with a client named {name!r} (accepted by HELLO), STATS is not JSON: {e}")
                check(isinstance(doc, dict) and len(doc["clients_detail"]) == doc["clients"], "STATS")
                if name == "\u00b5A".encode():
                    check(any(d["name"] == "\u00b5A" for d in doc["clients_detail"]),
                          f"a UTF-8 name is not kept: {[d['name'] for d in doc['clients_detail']]}")


@needs_server
def test_edge_cases(ctx):
    """The cases docs/socket-protocol.md settles one by one."""
    with Witness(ctx) as w:
        # §3.1: a client_name of more than 64 bytes, not UTF-8 or with a
        # NUL is a malformed HELLO (EPROTO, close); 64 bytes or none is fine.
        for what, name, ok in (("of 65 bytes", "n" * 65, False), ("of 1000 bytes", "n" * 1000, False),
                               ("not UTF-8", b"\xff\xfe", False), ("with a NUL", b"a\0b", False),
                               ("of 64 bytes", "n" * 64, True), ("empty", "", True)):
            with ctx.connect(hello=False) as c:
                body = struct.pack("<IIQ", 1, 1, 0) + P._str(name)
                c.send_bytes(frame(P.HELLO, body, id_=1))
                if ok:
                    f = read_frame(c, f"HELLO with a client_name {what}")
                    check(f.type == P.HELLO_REPLY, f"HELLO with a client_name {what}: {f!r}")
                    c.ping()
                else:
                    expect_error(c, P.EPROTO, f"HELLO with a client_name {what}", 1, closes=True)
        # §3.2: an index may appear more than once in a GET.
        with ctx.connect() as c:
            vals = c.get([3, 3])
            check([v["index"] for v in vals] == [3, 3], f"GET [3, 3]: records of {[v['index'] for v in vals]}")
        # §3.4: an index given twice is reported twice.
        with ctx.connect() as c:
            c.subscribe([3, 3], 0, 0.0)
            n = drain_notifies(c, lambda ns: ns, "the first NOTIFY of SUBSCRIBE [3, 3]")[0]
            check([v["index"] for v in n["values"]] == [3, 3], f"SUBSCRIBE [3, 3]: first NOTIFY {summarize([n])}")
        # §3.4: a deadband that is negative, NaN or infinite is EINVAL (the
        # connection stays); min_interval_us takes any value.
        with ctx.connect() as c:
            for db in (-1.0, math.nan, math.inf):
                request_error(c, P.SUBSCRIBE, {"min_interval_us": 0, "deadband": db, "indexes": [3]},
                              P.EINVAL, f"SUBSCRIBE with deadband {db}")
            c.ping()
            i = c.send(P.SUBSCRIBE, {"min_interval_us": 0xFFFFFFFF, "deadband": 0.0, "indexes": [3]})
            f = c.reply(i)
            check(f.type == P.SUBSCRIBED, f"SUBSCRIBE with min_interval_us 2^32-1: {f!r}")
        # §4: EUSERS comes at once, before the new connection's HELLO.
        d = ctx.start_server(extra=["--max-clients", "1"])
        try:
            with ctx.connect(d):
                with ctx.connect(d, hello=False) as c:
                    expect_error(c, P.EUSERS, "connection 2 of 1, before its HELLO", closes=True)
        finally:
            d.stop()
        w.check("after the edge cases")


@needs_server
def test_ping(ctx):
    with ctx.connect() as c:
        for data in (b"", b"\0", bytes(range(256)) * 4, "h\u00e9".encode()):
            check(c.ping(data) == data, f"PONG of {len(data)} bytes differs")
        # Pipelined requests: replies in order, ids copied.
        reqs = [(P.PING, {"data": b"a"}), (P.GET, {"indexes": [3]}), (P.STATS_GET, {}),
                (P.SET, {"writes": [{"index": 3, "value": b"\1"}]}), (P.SCHEMA_GET, {}),
                (P.GET, {"indexes": [99]}), (P.PING, {"data": b"z"})]
        ids = [c.send(t, f, id_=1000 + k * 7) for k, (t, f) in enumerate(reqs)]
        for (t, f), i in zip(reqs, ids):
            want = P.ERROR if f == {"indexes": [99]} else P.REPLY_OF[t]
            fr = read_frame(c, f"pipelined {P.typename(t)}")
            while fr.type == P.NOTIFY:
                fr = read_frame(c, f"pipelined {P.typename(t)}")
            check(fr.type == want and fr.id == i, f"pipelined: {fr!r}, expected {P.typename(want)} id {i}")
        check(c.ping(b"end") == b"end", "PING after the pipeline")


