"""test_call.py: `pbus call` and `pbus listen` against a real pbusd serving
the RPC fixture's compiled schema (tests/gen/fixtures/rpc/alltypes-rpc.fdepl,
built into BUILD/tests/gen-rpc/alltypes-rpc.pbs) and a real server of it
made from generated stubs (tests/cli/rpc-server.c). pbus has no generated
code: it learns the methods and types from the schema.
"""
import json
import os
import select
import subprocess
import time

import pytest

from pbustest.check import TIMEOUT, check
from pbustest.cli import one_line_error

SUITE = "cli"
ITF = "org.example.rpc.AllRpc"


@pytest.fixture(scope="module")
def rig(pbus_build, pbus_context):
    schema = os.path.join(pbus_build.dir, "tests/gen-rpc/alltypes-rpc.pbs")
    server = os.path.join(pbus_build.dir, "tests/pbus-test-rpc-server")
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd, server)
    check(os.path.exists(schema), f"{schema} not built")
    ctx = pbus_context
    ctx.daemon = ctx.start_daemon(schema=schema)
    ctx.server_path = server
    ctx.server = start_server(ctx)
    yield ctx
    ctx.server.kill()
    ctx.server.wait()


def start_server(ctx):
    p = subprocess.Popen([ctx.server_path, f"local:{ctx.instance}:{ITF}"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    check(p.stdout.readline() == b"ready\n", "the server did not start")
    return p


def call(ctx, *args):
    return ctx.run("call", ctx.instance, *args, instance=False)


def reply(ctx, *args):
    r = call(ctx, *args)
    check(r.rc == 0 and r.err == "", f"expected success: {r!r}")
    check(r.out.endswith("\n") and r.out.count("\n") == 1, f"expected one line: {r!r}")
    return json.loads(r.out)


BASICS = {"b": True, "i8": -128, "u8": 255, "i16": -32768, "u16": 65535, "i32": -2147483648,
          "u32": 4294967295, "i64": -9223372036854775808, "u64": "18446744073709551615",
          "f32": 1.5, "f64": 0.25, "text": "h\u00e9llo", "blob": "00ff7f", "small": -5, "level": "LOW"}


def everything():
    shape = {"$type": f"{ITF}.Square", "name": "sq", "side": float("1"), "children": [
        {"$type": f"{ITF}.Circle", "name": "c", "radius": 2.5},
        {"$type": f"{ITF}.Ring", "name": "r", "radius": 3.0, "inner": -2.0}]}
    basics = dict(BASICS)
    del basics["small"], basics["level"]
    basics["f64"] = "nan"
    return {
        "basics": basics,
        "ranges": {"any": 9223372036854775807, "small": 5, "huge": "18446744073709551615",
                   "capped": -9223372036854775808, "floor": 10},
        "level": "HIGH", "more": "EXTRA", "color": "BLUE", "point": {"x": 1, "y": -2},
        "pos": {"x": 1.0, "y": 2.0, "z": 3.0}, "nothing": {}, "shape": shape,
        "value": {"word": "w"}, "more_value": {"shape": shape},
        "names": ["a", ""], "matrix": [[1.0, "-inf"], []],
        "dict": [{"key": "a", "value": -1}, {"key": "a", "value": 2}],
        "registry": [{"key": "MID", "value": {"flag": True}}],
        "nested": [{"key": 65535, "value": [{"key": "k", "value": 0}]}],
        "route": [0.5, -0.0], "word": "label",
        "tree": {"label": "root", "kids": [{"label": "leaf", "kids": [], "attrs": []}], "attrs": []},
        "bools": [True, False], "i8s": [-1, 127], "u64s": ["18446744073709551615", 0],
        "floats": [0.1, "nan"], "strings": ["x"], "blobs": ["", "ab"], "smalls": [-5, 0, 5],
        "levels": ["LOW"], "points": [{"x": 0, "y": 0}], "shapes": [{"name": "plain"}],
        "values": [{"number": 7}], "dicts": [[]], "name_lists": [["p", "q"]],
    }


def test_call_ping(rig):
    check(reply(rig, "ping", '{"seq": 41}') == {"seq2": 42}, "ping")


def test_call_basics_every_basic_type(rig):
    out = reply(rig, "basics", json.dumps(BASICS))
    check(out["ob"] is False and out["otext"] == "h\u00e9llo!" and out["oblob"] == "00ff7f"
          and out["osmall"] == 5 and out["olevel"] == "LOW" and out["of64"] == 1.75, f"{out}")
    check(list(out) == ["ob", "oi64", "of64", "otext", "oblob", "osmall", "olevel"], "order")


def test_call_echo_every_type(rig):
    e = everything()
    out = reply(rig, "echo", json.dumps({"e": e}))
    check(list(out) == ["error", "e2"] and out["error"] == "NONE", f"{list(out)}")
    e2 = out["e2"]
    e["shapes"][0]["$type"] = f"{ITF}.Shape"   # printed always
    for k in e:
        check(e2[k] == e[k], f"field {k}: sent {e[k]!r}, got {e2[k]!r}")


def test_call_typed_error(rig):
    e = everything()
    e["basics"]["i32"] = 13
    check(reply(rig, "echo", json.dumps({"e": e}))["error"] == "BUSY", "BUSY")
    check(reply(rig, "lookup", '{"key": "missing"}')["error"] == "NOT_FOUND", "NOT_FOUND")
    out = reply(rig, "lookup", '{"key": "abc"}')
    check(out == {"error": "NONE", "found": {"word": "abc"}, "dict": [{"key": "abc", "value": 3}]}, f"{out}")


def test_call_selector_and_no_args(rig):
    check(reply(rig, "describe:short", '{"id": 7}') == {"text": "id 7"}, "describe:short")
    check(reply(rig, "nothing") == {}, "nothing")
    check(reply(rig, "reset", '{"level": "MID", "why": "x"}') == {}, "fireAndForget")


def test_call_pretty(rig):
    r = call(rig, "-p", "fixedOnly", '{"p": {"x": 1, "y": 2}, "q": {"x": 0, "y": 0, "z": 3}}')
    check(r.rc == 0 and r.out.count("\n") > 3, f"{r!r}")
    check(json.loads(r.out) == {"r2": {"x": 4, "y": 2}, "l": "LOW"}, f"{r!r}")


@pytest.mark.parametrize("args,rc,pattern", [
    (["ping", '{"seq": '], 4, r"pbus: ping: not JSON: .*"),
    (["ping", '[1]'], 4, r"pbus: ping: the arguments must be a JSON object .*"),
    (["ping", '{}'], 4, r"pbus: ping: argument 'seq' \(UInt32\) missing"),
    (["ping", '{"seq": 1, "x": 2}'], 4, r"pbus: ping: method 'ping' has no argument 'x'"),
    (["ping", '{"seq": "one"}'], 4, r"pbus: ping: argument 'seq': 'one' is not a decimal integer"),
    (["ping", '{"seq": 4294967296}'], 4, r"pbus: ping: argument 'seq': 4294967296 is outside UInt32"),
    (["ping", '{"seq": true}'], 4, r"pbus: ping: argument 'seq': expected UInt32, not a boolean"),
    (["nope"], 4, r"pbus: org.example.rpc.AllRpc has no method 'nope'"),
    (["describe:long", '{"id": 1, "verbose": true}'], 1, r"pbus: describe:long: .*out of range"),
    ([], 2, r"pbus: call: expected INSTANCE METHOD \[JSON\].*"),
])
def test_call_refused(rig, args, rc, pattern):
    r = call(rig, *args)
    if rc == 2:
        check(r.rc == 2, f"{r!r}")
        return
    one_line_error(r, rc, pattern)


def test_call_no_instance(rig):
    r = rig.run("call", "nosuchinstance-x", "ping", '{"seq": 1}', instance=False)
    one_line_error(r, 3, r"pbus: instance 'nosuchinstance-x' not found .*")


def test_call_no_server(rig):
    r = rig.run("call", rig.instance + "/none", "ping", '{"seq": 1}', instance=False)
    # No server registered: the instance's server is missing (status 3; 5 is a timeout).
    one_line_error(r, 3, r"pbus: ping: no server of .* is registered with pbusd")


def wait_listening(p):
    """Until `pbus listen` (@p) says on stderr that it listens."""
    deadline = time.monotonic() + TIMEOUT
    seen = b""
    while b"listening" not in seen:
        left = deadline - time.monotonic()
        check(left > 0 and select.select([p.stderr], [], [], left)[0], f"pbus listen did not listen: {seen!r}")
        chunk = os.read(p.stderr.fileno(), 4096)
        check(chunk, f"pbus listen ended: {seen!r}")
        seen += chunk
    return seen


def test_listen_survives_restart(rig):
    p = subprocess.Popen([rig.pbus, "listen", "-c", "4", "-w", str(TIMEOUT), rig.instance, "tick", "empty"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        early = wait_listening(p)
        reply(rig, "nothing")
        rig.server.kill()
        rig.server.wait()
        rig.server = start_server(rig)
        deadline = time.monotonic() + TIMEOUT
        out = b""
        while p.poll() is None and time.monotonic() < deadline:
            reply(rig, "nothing")
            time.sleep(0.3)
        out, err = p.communicate(timeout=TIMEOUT)
        err = early + err
    finally:
        if p.poll() is None:
            p.kill()
    lines = [json.loads(x) for x in out.decode().splitlines()]
    check(p.returncode == 0 and len(lines) == 4, f"{p.returncode} {out!r} {err!r}")
    check({x["broadcast"] for x in lines} == {"tick", "empty"}, f"{lines}")
    check(all(set(x) == {"broadcast", "args", "time"} for x in lines), f"{lines}")
    check(lines[0]["args"] == {"now": 42} or lines[0]["args"] == {}, f"{lines}")
    check(b"went away" in err and b"is back" in err, f"{err!r}")


def test_listen_broadcast_of_every_type(rig):
    p = subprocess.Popen([rig.pbus, "listen", "-c", "1", "-w", str(TIMEOUT), rig.instance, "changed"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_listening(p)
        reply(rig, "echo", json.dumps({"e": everything()}))
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    line = json.loads(out)
    check(line["broadcast"] == "changed" and line["args"]["level"] == "HIGH"
          and line["args"]["e"]["ranges"]["huge"] == "18446744073709551615", f"{out!r} {err!r}")


def test_listen_unknown_broadcast(rig):
    r = rig.run("listen", rig.instance, "nope", instance=False)
    one_line_error(r, 4, r"pbus: org.example.rpc.AllRpc has no broadcast 'nope'")


def test_list_shows_methods_and_broadcasts(rig):
    # The table holds only parameters: `pbus list` takes the methods and
    # broadcasts from the schema pbusd serves, after the parameters.
    r = rig.ok("list")
    tables = r.out.split("\n\n")
    check(len(tables) == 3, f"expected parameters, methods and broadcasts: {r.out}")
    methods, broadcasts = tables[1].splitlines(), tables[2].splitlines()
    check(methods[0].split() == ["METHOD", "IN", "OUT"], f"methods header: {methods[0]!r}")
    check(broadcasts[0].split() == ["BROADCAST", "ARGUMENTS"], f"broadcasts header: {broadcasts[0]!r}")
    rows = {l.split()[0]: l for l in methods[1:]}
    check(rows["ping"].split() == ["ping", "(seq:", "uint32)", "(seq2:", "uint32)"], f"ping: {rows['ping']!r}")
    check(rows["reset"].split()[-3:] == ["(fire", "and", "forget)"], f"reset: {rows['reset']!r}")
    check(rows["nothing"].split() == ["nothing", "()", "()"], f"nothing: {rows['nothing']!r}")
    check("describe:short" in rows and "describe:long" in rows, f"overloads missing: {list(rows)}")
    check(any(l.split()[:3] == ["tick", "(now:", "uint64)"] for l in broadcasts[1:]), f"tick: {broadcasts}")
    check(all(l == l.rstrip() for l in tables[1].splitlines() + tables[2].splitlines()), "trailing blanks")
    # Patterns select methods and broadcasts too.
    r = rig.ok("list", "describe:*")
    lines = r.out.splitlines()
    check(lines[0].split() == ["METHOD", "IN", "OUT"] and [l.split()[0] for l in lines[1:]] ==
          ["describe:short", "describe:long"], f"list describe:* selected: {r.out}")
    r = rig.ok("list", "tick")
    check(r.out.splitlines()[0].split() == ["BROADCAST", "ARGUMENTS"] and len(r.out.splitlines()) == 2,
          f"list tick: {r.out}")

