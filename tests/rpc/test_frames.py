"""test_frames.py: the messages between a proxy and a method server
(docs/methods.md §3), checked by an implementation written from the
specification alone (tests/pbustest/protocol.py) against the vectors of
tests/vectors/rpc-frames.txt and against the real server of the Calculator
example, found through a real pbusd the way a proxy finds it.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/rpc/test_frames.py \
        --pbus-build build/dev
"""
import os
import socket
import struct
import subprocess
import time

import pytest

from pbustest import protocol as P
from pbustest.check import Failure, check
from pbustest.server import WAIT, ServerContext
from pbustest.vectors import fields_from_json, load_vectors

SUITE = "rpc-frames"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.path.join(TOP, "tests", "vectors", "rpc-frames.txt")
INTERFACE = "org.test.Calculator"


def kind_of(e):
    if e["type"] in P.CALL_REQUESTS:
        return "request"
    return "notification" if e["type"] == P.BROADCAST else "reply"


def test_vectors_codec():
    entries = load_vectors(VECTORS)
    names, seen = set(), set()
    for e in entries:
        where = f"vector {e['name']} (line {e['line']})"
        check(e["name"] not in names, f"{where}: name twice")
        names.add(e["name"])
        check(P.CALL_NAMES.get(e["type"]) == e["type_name"], f"{where}: type {e['type']} is not {e['type_name']}")
        check(e["kind"] == kind_of(e), f"{where}: kind {e['kind']}, expected {kind_of(e)}")
        check((e["id"] == 0) == (e["kind"] == "notification"), f"{where}: id {e['id']}")
        seen.add(e["type"])
        data = e["bytes"]
        length, type_, flags, id_ = struct.unpack_from("<IHHI", data)
        check(length == len(data), f"{where}: length field {length}, frame has {len(data)} bytes")
        check((type_, flags, id_) == (e["type"], 0, e["id"]), f"{where}: header {type_, flags, id_}")
        fields = fields_from_json(e["type"], e["fields"])
        got = P.decode_body(e["type"], data[P.HEADER_SIZE:])
        check(got == fields, f"{where}: decoded {got!r}, expected {fields!r}")
        enc = P.encode_message(e["type"], e["id"], fields)
        check(enc == data, f"{where}: encoded {enc.hex()}, expected {data.hex()}")
        # Fixed bodies must be consumed exactly.
        if e["type"] in (P.CONNECT, P.CONNECTED, P.BROADCAST_SUBSCRIBE, P.BROADCAST_UNSUBSCRIBE,
                         P.BROADCAST_SUBSCRIBED, P.BROADCAST_UNSUBSCRIBED):
            body = data[P.HEADER_SIZE:]
            for bad in ([body + b"\0"] + ([body[:-1]] if body else [])):
                try:
                    P.decode_body(e["type"], bad)
                    raise Failure(f"{where}: a body of {len(bad)} bytes decoded")
                except P.ProtocolError:
                    pass
    call_types = set(range(P.CONNECT, P.BROADCAST + 1)) | {P.ERROR, P.PING, P.PONG}
    missing = call_types - seen
    check(not missing, f"message types without a vector: {sorted(P.CALL_NAMES[t] for t in missing)}")


# --- against the real server -------------------------------------------------------

class Calculator:
    """pbusd (the registry, instance 'calculator', serving the example's
    schema) and the example's server, registered there."""

    def __init__(self, ctx):
        server = os.path.join(ctx.build, "examples", "calculator", "calculator-server")
        check(os.access(server, os.X_OK), f"{server} not built")
        self.ctx = ctx
        self.daemon = ctx.start_server(instance="calculator")
        env = dict(os.environ, PBUS_SOCKET_DIR=self.daemon.sock_dir)
        self.server = subprocess.Popen([server], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.address = f"local:calculator:{INTERFACE}"
        self.service = self.wait_registered()

    def wait_registered(self):
        deadline = time.monotonic() + WAIT
        c = self.ctx.connect(self.daemon)
        try:
            while True:
                f = c.request(P.SERVICE_LOOKUP, {"address": self.address, "watch": 0})
                if f["available"]:
                    return f
                if self.server.poll() is not None:
                    raise Failure(f"calculator-server exited: {self.server.stderr.read()!r}")
                check(time.monotonic() < deadline, "calculator-server did not register")
                time.sleep(0.02)
        finally:
            c.close()

    def connect(self):
        """A connection to the server's endpoint, its credentials checked
        as docs/methods.md §3 says."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(WAIT)
        s.connect(b"\0" + self.service["endpoint"].encode())
        pid, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        check((pid, uid) == (self.service["pid"], self.service["uid"]),
              f"the endpoint is served by pid {pid} uid {uid}, registered: {self.service}")
        return s

    def stop(self):
        self.server.kill()
        self.server.wait()
        self.daemon.stop()


def read_frame(s, reader):
    while True:
        f = reader.next()
        if f is not None:
            return f
        data = s.recv(65536)
        if not data:
            return None
        reader.feed(data)


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose):
    schema = os.path.join(pbus_build.dir, "examples", "calculator", "calculator.pbs")
    pbus_build.require(pbus_build.pbusd)
    check(os.path.exists(schema), f"{schema} not built")
    ctx = ServerContext(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, fixture=schema,
                        verbose=pbus_verbose)
    yield ctx
    ctx.cleanup()


@pytest.fixture
def calculator(ctx):
    c = Calculator(ctx)
    yield c
    c.stop()


def test_vectors_server(calculator):
    """Every request vector in file order on one connection (a fresh one
    after a vector that the server answers by closing)."""
    entries = load_vectors(VECTORS)
    by_id = {}
    for e in entries:
        if e["kind"] != "request":
            by_id.setdefault(e["id"], []).append(e)
    s, reader = calculator.connect(), P.FrameReader()
    connected = False
    for e in entries:
        if e["kind"] != "request":
            continue
        where = f"vector {e['name']}"
        if e["type"] == P.CONNECT and connected:
            s.close()
            s, reader = calculator.connect(), P.FrameReader()
        s.sendall(e["bytes"])
        fields = fields_from_json(e["type"], e["fields"])
        if e["type"] == P.CALL and fields["flags"] & P.NO_REPLY:
            continue
        f = read_frame(s, reader)
        check(f is not None, f"{where}: the server closed the connection")
        want = [x for x in by_id.get(e["id"], []) if x is not e]
        got = f.decode()
        if e["name"] == "connect-newer-minor":
            check(f.type == P.ERROR and got["code"] == P.EPROTO, f"{where}: {P.typename(f.type)} {got}")
            check("server org.test.Calculator 0.1, client 0.2" in got["message"], f"{where}: {got['message']}")
            check(read_frame(s, reader) is None, f"{where}: the connection stays open")
            connected = True
            continue
        check(f.id == e["id"], f"{where}: reply id {f.id}")
        reply = [x for x in want if x["kind"] == "reply"]
        if reply:
            r = reply[0]
            check(f.type == r["type"], f"{where}: {P.typename(f.type)}, expected {r['type_name']} ({got})")
            rf = fields_from_json(r["type"], r["fields"])
            for k, v in rf.items():
                if k in ("server_pid",):
                    continue
                check(got.get(k) == v, f"{where}: {k} {got.get(k)!r}, expected {v!r}")
        connected = True
    s.close()


def test_malformed_arguments_close(calculator):
    """Arguments the server cannot decode: ERROR EPROTO, then a close;
    the server serves on."""
    s, reader = calculator.connect(), P.FrameReader()
    s.sendall(P.encode_message(P.CONNECT, 1, {"min_version": 1, "max_version": 1, "interface": INTERFACE,
                                              "major": 0, "minor": 1, "client_name": "t"}))
    check(read_frame(s, reader).type == P.CONNECTED, "no CONNECTED")
    s.sendall(P.encode_message(P.CALL, 2, {"method": 0, "flags": 0, "args": b"\0" * 15}))
    f = read_frame(s, reader)
    check(f is not None and f.type == P.ERROR and f.decode()["code"] == P.EPROTO, f"reply {f}")
    check(read_frame(s, reader) is None, "the connection stays open")
    s.close()
    # A CALL before CONNECT.
    s, reader = calculator.connect(), P.FrameReader()
    s.sendall(P.encode_message(P.CALL, 1, {"method": 0, "flags": 0, "args": struct.pack("<dd", 1, 2)}))
    f = read_frame(s, reader)
    check(f is not None and f.type == P.ERROR and f.decode()["code"] == P.EPROTO, f"reply {f}")
    s.close()
    # The server still answers.
    s, reader = calculator.connect(), P.FrameReader()
    s.sendall(P.encode_message(P.CONNECT, 1, {"min_version": 1, "max_version": 1, "interface": INTERFACE,
                                              "major": 0, "minor": 1, "client_name": "t"}))
    check(read_frame(s, reader).type == P.CONNECTED, "no CONNECTED after the bad connections")
    s.sendall(P.encode_message(P.CALL, 2, {"method": 0, "flags": 0, "args": struct.pack("<dd", 1.5, 2)}))
    f = read_frame(s, reader)
    check(f.type == P.RETURN and f.decode()["args"] == struct.pack("<d", 3.5), f"reply {f}")
    s.close()
