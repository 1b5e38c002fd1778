"""test_services.py: pbusd as the registry of method servers
(docs/socket-protocol.md §3.6) against the real pbusd.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/server/test_services.py \
        --pbus-build build/dev

Through tests/pbustest/protocol.py, the client written from the
specification alone: registering, looking up, watching and unregistering;
the notifications a watcher gets on every change (registered, replaced,
unregistered, the server's connection closed); one address per server
(EADDRINUSE); only root and pbusd's user register (EPERM, as the
unprivileged test user); malformed addresses and endpoints (EINVAL, the
connection stays) and frames (EPROTO, closed); the limits (EMFILE); STATS;
a watcher that stops reading. Each test prints `PASS: services/<name>` or
`FAIL: services/<name>: reason` (tests/conftest.py). Run as root.
"""
import json
import os
import select
import struct

import pytest

from pbustest import protocol as P
from pbustest.check import Failure, check
from pbustest.server import (WAIT, ServerContext, Witness, expect_error, expect_reply, read_frame,
                             request_error, stats, wait_until)

SUITE = "services"
IFACE = "com.example.psu.PowerSupply"


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose, pbus_notes):
    pbus_build.require(pbus_build.pbusd)
    ctx = ServerContext(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, verbose=pbus_verbose,
                        notes=pbus_notes)
    yield ctx
    ctx.cleanup()


@pytest.fixture
def server(ctx):
    ctx.serving()
    ctx.instance = ctx.daemon.instance
    yield ctx.daemon
    ctx.check_alive()


needs_server = pytest.mark.usefixtures("server")


def addr(ctx, sub="", iface=IFACE, daemon=None):
    """An address whose registry is the suite's pbusd (or @daemon)."""
    return f"local:{(daemon or ctx.daemon).instance}{sub}:{iface}"


def service(address, available, major=0, minor=0, pid=0, uid=0, endpoint=""):
    return {"address": address, "available": int(available), "major": major, "minor": minor, "pid": pid,
            "uid": uid, "endpoint": endpoint}


def no_service_event(conn, what):
    """Nothing more for @conn: a PING's PONG comes with no SERVICE before it."""
    conn.ping(b"x")
    check(not conn.service_events, f"{what}: unexpected notifications {conn.service_events}")


def next_event(conn, what):
    try:
        return conn.service_event(WAIT)
    except (TimeoutError, P.Closed, P.ProtocolError) as e:
        raise Failure(f"{what}: no SERVICE notification ({e})")


@needs_server
def test_register_lookup(ctx):
    a = addr(ctx, "/ch2")
    with ctx.connect(name="server") as s, ctx.connect(name="client") as c:
        check(c.lookup_service(a) == service(a, False), "lookup before registering")
        s.register_service(a, 1, 2, "pbus-test-ch2")
        me = dict(pid=os.getpid(), uid=os.getuid())
        check(c.lookup_service(a) == service(a, True, 1, 2, endpoint="pbus-test-ch2", **me),
              f"lookup after registering: {c.lookup_service(a)}")
        # The same connection again: a replacement (version, endpoint).
        s.register_service(a, 1, 3, "pbus-test-ch2b")
        check(c.lookup_service(a) == service(a, True, 1, 3, endpoint="pbus-test-ch2b", **me),
              "lookup after the replacement")
        # Another address of the same registry, and the registry's own.
        s.register_service(addr(ctx), 2, 0, "pbus-test-main")
        check(c.lookup_service(addr(ctx))["endpoint"] == "pbus-test-main", "the instance's own address")
        s.unregister_service(a)
        check(c.lookup_service(a) == service(a, False), "lookup after unregistering")
        check(c.lookup_service(addr(ctx))["available"] == 1, "the other address went too")
        msg = request_error(s, P.SERVICE_UNREGISTER, {"address": a}, P.ENOENT, "unregistering twice")
        check(a in msg, f"ENOENT message {msg!r} does not name the address")
        # Only the registering connection unregisters.
        request_error(c, P.SERVICE_UNREGISTER, {"address": addr(ctx)}, P.ENOENT, "another's unregistration")
        check(c.lookup_service(addr(ctx))["available"] == 1, "another connection unregistered it")
    # The server's connection closed: registered no more.
    with ctx.connect() as c:
        wait_until("the closed server's service to go", lambda: not c.lookup_service(addr(ctx))["available"])


@needs_server
def test_watch(ctx):
    a = addr(ctx, "/w")
    me = dict(pid=os.getpid(), uid=os.getuid())
    with ctx.connect(name="watcher") as w:
        with ctx.connect(name="server") as s:
            check(w.lookup_service(a, watch=True) == service(a, False), "watching LOOKUP reply")
            no_service_event(w, "a watch of nothing")
            s.register_service(a, 1, 0, "ep1")
            check(next_event(w, "registered") == service(a, True, 1, 0, endpoint="ep1", **me), "registered")
            s.register_service(a, 1, 1, "ep2")
            check(next_event(w, "replaced") == service(a, True, 1, 1, endpoint="ep2", **me), "replaced")
            s.unregister_service(a)
            check(next_event(w, "unregistered") == service(a, False), "unregistered")
            # Watching again is no error and stays one watch: one notification per change.
            check(w.lookup_service(a, watch=True) == service(a, False), "the second watching LOOKUP")
            check(stats(w)["service_watches"] == 1, "two watches of one address on one connection")
            s.register_service(a, 1, 2, "ep3")
            check(next_event(w, "registered again")["available"] == 1, "registered again")
            no_service_event(w, "after one change")
        # The server's connection closed.
        check(next_event(w, "the server closed") == service(a, False), "the server's connection closed")
        w.unwatch_service(a)
        with ctx.connect(name="server") as s:
            s.register_service(a, 1, 0, "ep")
            no_service_event(w, "after UNWATCH")
        msg = request_error(w, P.SERVICE_UNWATCH, {"address": a}, P.ENOENT, "UNWATCH twice")
        check(a in msg, f"ENOENT message {msg!r}")
        # A watcher that closes takes its watch along.
        w.lookup_service(a, watch=True)
    with ctx.connect() as c:
        wait_until("the closed watcher's watch to go", lambda: stats(c)["service_watches"] == 0)


@needs_server
def test_watch_order(ctx):
    # A watch made while the address changes: the reply, then only later states.
    a = addr(ctx, "/order")
    with ctx.connect(name="watcher") as w, ctx.connect(name="server") as s:
        s.register_service(a, 1, 0, "ep")
        first = w.lookup_service(a, watch=True)
        s.unregister_service(a)
        s.register_service(a, 2, 0, "ep")
        check(first["available"] == 1, f"reply {first}")
        check([next_event(w, "1")["available"], next_event(w, "2")["available"]] == [0, 1],
              "the notifications after the reply")


@needs_server
def test_address_in_use(ctx):
    a = addr(ctx, "/busy")
    with ctx.connect(name="first") as s1, ctx.connect(name="second") as s2:
        s1.register_service(a, 1, 0, "first")
        msg = request_error(s2, P.SERVICE_REGISTER, {"address": a, "major": 1, "minor": 0, "endpoint": "second"},
                            P.EADDRINUSE, "a second server")
        check(a in msg and f"pid {os.getpid()}" in msg, f"EADDRINUSE message {msg!r}")
        check(s2.ping(b"y") == b"y", "the refused connection stays")
        check(s2.lookup_service(a)["endpoint"] == "first", "the first server's registration changed")
        s1.close()
        wait_until("the address to be free",
                   lambda: s2.lookup_service(a)["available"] == 0)
        s2.register_service(a, 1, 0, "second")
        check(s2.lookup_service(a)["endpoint"] == "second", "the second server after the first closed")


@needs_server
def test_unprivileged(ctx, pbus_user):
    a = addr(ctx, "/priv")
    path = ctx.path()

    def probe():
        res = {}
        with P.Connection(path, timeout=WAIT) as c:
            c.hello("unprivileged")
            try:
                c.register_service(a, 1, 0, "mine")
                res["register"] = 0
            except P.ServerError as e:
                res["register"], res["message"] = e.code, e.message
            res["lookup"] = c.lookup_service(a, watch=True)
            res["ping"] = c.ping(b"p").decode()
        return res

    with ctx.connect(name="server") as s:
        s.register_service(a, 1, 0, "real")
        r = pbus_user.run(probe)
    check(r["register"] == P.EPERM, f"REGISTER as {pbus_user.name}: {r['register']}")
    check(f"uid {os.geteuid()}" in r["message"] and "root" in r["message"], f"EPERM message {r['message']!r}")
    check(r["lookup"]["endpoint"] == "real" and r["lookup"]["uid"] == os.getuid(),
          f"LOOKUP as {pbus_user.name}: {r['lookup']}")
    check(r["ping"] == "p", "the refused connection stays")


BAD_ADDRESSES = [
    ("", "the domain"), ("psu:" + IFACE, "the domain"), ("remote:{i}:" + IFACE, "the domain"),
    ("LOCAL:{i}:" + IFACE, "the domain"), ("local:{i}", "no interface"), ("local::" + IFACE, "instance"),
    ("local:/x:" + IFACE, "registry"), ("local:{i} x:" + IFACE, "character"),
    ("local:{i}:x:" + IFACE, "interface"), ("local:" + "x" * 65 + ":" + IFACE, "instance"),
    ("local:{i}:", "interface"), ("local:{i}:1abc", "interface"), ("local:{i}:a..b", "interface"),
    ("local:{i}:a.", "interface"), ("local:{i}:.a", "interface"), ("local:{i}:a-b", "interface"),
    ("local:{i}:a b", "interface"), ("local:{i}:" + "a" * 250, "255"),
    ("local:other-pbusd:" + IFACE, "other-pbusd"), ("local:other/{i}:" + IFACE, "other"),
    ("local:{i}:\x01bad", "interface"),
]
GOOD_ADDRESSES = ["local:{i}:a", "local:{i}:_A.b_1.C9", "local:{i}/x/y.z-1_2:a.b", "local:{i}/:a",
                  "local:{i}:LONG"]


@needs_server
def test_einval(ctx):
    i = ctx.instance
    with ctx.connect() as c:
        for bad, named in BAD_ADDRESSES:
            a = bad.replace("{i}", i)
            for t, f in ((P.SERVICE_REGISTER, {"address": a, "major": 1, "minor": 0, "endpoint": "ep"}),
                         (P.SERVICE_LOOKUP, {"address": a, "watch": 0}),
                         (P.SERVICE_LOOKUP, {"address": a, "watch": 1})):
                msg = request_error(c, t, f, P.EINVAL, f"{P.typename(t)} {a!r}")
                check(named in msg, f"{P.typename(t)} {a!r}: message {msg!r} does not name {named!r}")
        for good in GOOD_ADDRESSES:
            a = good.replace("{i}", i)
            a = a.replace("LONG", "a" * (255 - len(a) + 4))  # 255 bytes in all
            c.register_service(a, 1, 0, "ep")
            check(c.lookup_service(a)["available"] == 1, f"{a!r} registered")
            c.unregister_service(a)
        for ep, ok in (("", False), ("x" * 107, True), ("x" * 108, False), ("with space/and:colon", True)):
            f = {"address": addr(ctx), "major": 1, "minor": 0, "endpoint": ep}
            if ok:
                c.request(P.SERVICE_REGISTER, f)
                check(c.lookup_service(addr(ctx))["endpoint"] == ep, f"endpoint {ep!r}")
            else:
                msg = request_error(c, P.SERVICE_REGISTER, f, P.EINVAL, f"endpoint of {len(ep)} bytes")
                check("endpoint" in msg, f"message {msg!r}")
        check(stats(c)["service_watches"] == 0, "a refused watching LOOKUP watches")
        c.ping()


def raw_frame(type_, body, id_=7):
    return struct.pack("<IHHI", 12 + len(body), type_, 0, id_) + body


def pstr(b):
    return struct.pack("<I", len(b)) + b


@needs_server
def test_malformed(ctx):
    a = addr(ctx).encode()
    cases = [
        ("LOOKUP watch 2", raw_frame(P.SERVICE_LOOKUP, pstr(a) + struct.pack("<I", 2))),
        ("LOOKUP without watch", raw_frame(P.SERVICE_LOOKUP, pstr(a))),
        ("LOOKUP one byte more", raw_frame(P.SERVICE_LOOKUP, pstr(a) + struct.pack("<I", 0) + b"\0")),
        ("REGISTER not UTF-8", raw_frame(P.SERVICE_REGISTER, pstr(a + b"\xff") + struct.pack("<II", 1, 0)
                                         + pstr(b"ep"))),
        ("REGISTER endpoint with NUL", raw_frame(P.SERVICE_REGISTER, pstr(a) + struct.pack("<II", 1, 0)
                                                 + pstr(b"e\0p"))),
        ("REGISTER without endpoint", raw_frame(P.SERVICE_REGISTER, pstr(a) + struct.pack("<II", 1, 0))),
        ("UNREGISTER string too long", raw_frame(P.SERVICE_UNREGISTER, struct.pack("<I", 99) + a)),
        ("UNWATCH empty", raw_frame(P.SERVICE_UNWATCH, b"")),
        ("REGISTERED as a request", raw_frame(P.SERVICE_REGISTERED, b"")),
        ("SERVICE as a request", raw_frame(P.SERVICE, P.encode_body(P.SERVICE, service(addr(ctx), False)))),
    ]
    with Witness(ctx) as w:
        for what, data in cases:
            with ctx.connect(name="hostile") as c:
                c.send_bytes(data)
                msg, _ = expect_error(c, P.EPROTO, what, closes=True)
                ctx.log(f"{what}: {msg}")
            w.check(what)


@needs_server
def test_limits(ctx):
    # 64 registrations per connection.
    with ctx.connect() as c:
        for k in range(64):
            c.register_service(addr(ctx, f"/n{k}"), 1, 0, "ep")
        request_error(c, P.SERVICE_REGISTER, {"address": addr(ctx, "/n64"), "major": 1, "minor": 0,
                                              "endpoint": "ep"}, P.EMFILE, "the 65th registration")
        c.register_service(addr(ctx, "/n0"), 1, 1, "ep")  # a replacement is no new one
        mine = [x for x in stats(c)["services"] if x["address"].startswith(addr(ctx, "/n")[:-len(IFACE) - 1])]
        check(len(mine) == 64, f"{len(mine)} of this connection's services in STATS, not 64")
    # --max-services in all, --max-subscriptions watches per connection.
    d = ctx.start_server(extra=["--max-services", "3", "--max-subscriptions", "2"])
    try:
        with ctx.connect(d) as c1, ctx.connect(d) as c2:
            c1.register_service(addr(ctx, "/a", daemon=d), 1, 0, "ep")
            c1.register_service(addr(ctx, "/b", daemon=d), 1, 0, "ep")
            c2.register_service(addr(ctx, "/c", daemon=d), 1, 0, "ep")
            msg = request_error(c2, P.SERVICE_REGISTER, {"address": addr(ctx, "/d", daemon=d), "major": 1,
                                                         "minor": 0, "endpoint": "ep"}, P.EMFILE, "a 4th service")
            check("3" in msg, f"EMFILE message {msg!r}")
            c1.unregister_service(addr(ctx, "/a", daemon=d))
            c2.register_service(addr(ctx, "/d", daemon=d), 1, 0, "ep")
            c1.lookup_service(addr(ctx, "/x", daemon=d), watch=True)
            c1.lookup_service(addr(ctx, "/y", daemon=d), watch=True)
            c1.lookup_service(addr(ctx, "/y", daemon=d), watch=True)  # the same again: no new one
            request_error(c1, P.SERVICE_LOOKUP, {"address": addr(ctx, "/z", daemon=d), "watch": 1}, P.EMFILE,
                          "a 3rd watch")
            c1.lookup_service(addr(ctx, "/z", daemon=d))  # a plain LOOKUP is no watch
            c1.unwatch_service(addr(ctx, "/x", daemon=d))
            c1.lookup_service(addr(ctx, "/z", daemon=d), watch=True)
            # Subscriptions are counted apart from watches.
            c1.subscribe([3])
            c1.subscribe([21])
    finally:
        d.stop()


@needs_server
def test_stats(ctx):
    with ctx.connect(name="server") as s, ctx.connect(name="watcher") as w:
        before = stats(s)
        check(isinstance(before["services"], list) and isinstance(before["service_watches"], int),
              f"STATS services {before.get('services')!r}, service_watches {before.get('service_watches')!r}")
        s.register_service(addr(ctx, "/st"), 3, 4, "ep")
        w.lookup_service(addr(ctx, "/st"), watch=True)
        w.lookup_service(addr(ctx, "/other"), watch=True)
        doc = stats(s)
        mine = [x for x in doc["services"] if x["address"] == addr(ctx, "/st")]
        check(mine == [{"address": addr(ctx, "/st"), "pid": os.getpid(), "uid": os.getuid(), "major": 3,
                        "minor": 4}], f"STATS services: {doc['services']}")
        check(doc["service_watches"] == before["service_watches"] + 2, f"service_watches {doc['service_watches']}")
        json.dumps(doc)


@needs_server
def test_deaf_watcher(ctx):
    # A watcher that never reads: closed once 4 MiB of notifications wait
    # for it (§4); the server it watches and everybody else carry on.
    a = addr(ctx, "/deaf", "x." + "a" * 150)
    with Witness(ctx) as wit, ctx.connect(name="server") as s:
        deaf = ctx.connect(name="deaf")
        deaf.lookup_service(a, watch=True)
        reg = raw_frame(P.SERVICE_REGISTER, P.encode_body(P.SERVICE_REGISTER, {"address": a, "major": 1, "minor": 0,
                                                                              "endpoint": "e" * 100}), 1)
        unreg = raw_frame(P.SERVICE_UNREGISTER, P.encode_body(P.SERVICE_UNREGISTER, {"address": a}), 2)
        closed = False
        # Each pair sends the deaf watcher two notifications of ~400 bytes:
        # 4 MiB are some 5,500 pairs; the replies are read as they come.
        for batch in range(40):
            s.send_bytes((reg + unreg) * 250)
            for _ in range(500):
                f = read_frame(s, f"batch {batch}")
                check(f.type in (P.SERVICE_REGISTERED, P.SERVICE_UNREGISTERED), f"reply {f!r}")
            if batch % 4 == 3:
                doc = stats(s)
                if not [x for x in doc["clients_detail"] if x["name"] == "deaf"]:
                    closed = True
                    ctx.log(f"the deaf watcher was closed after {250 * (batch + 1)} changes")
                    break
        deaf.close()
        check(closed, "a watcher that read nothing of 10,000 changes was not closed")
        wit.check("after the deaf watcher")
