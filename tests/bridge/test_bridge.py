"""test_bridge.py: pbus-bridge between the real pbusd and a real broker.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/bridge \\
        --pbus-build build/dev

Each test starts Debian's mosquitto on a free loopback port with a config
it writes (persistence on, no anonymous login, users made with
mosquitto_passwd, an ACL), pbusd serving tests/bridge/bench.fdepl's schema,
and pbus-bridge with the fleet file pbus-gen writes from the same file
(ready through --notify-fd, never a sleep). Subscribers and commanders are
paho-mqtt clients (PyPI). Users: `bridge` (the daemon), `operator` (reads
everything, may send commands), `viewer` (reads only: the ACL refuses its
commands).
"""
import os
import signal
import time

import pytest

from pbustest.check import TIMEOUT, check
from pbustest.mqtt import Bridge, Broker, Client, PREFIX, compile_fleet, pbus, seq_of

SUITE = "bridge"
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def compiled(pbus_tmp):
    """bench.pbs and bench.fleet, made by this checkout's pbus-gen."""
    return compile_fleet(pbus_tmp, os.path.join(HERE, "bench.fdepl"), "bench")


class Stack:
    pass


@pytest.fixture
def stack(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, compiled):
    """A broker, pbusd and pbus-bridge, all ready; the bridge must still run
    at the end and exit 0 on SIGTERM."""
    s = Stack()
    s.build, s.instance, s.daemons, s.tmp = pbus_build, pbus_instance, pbus_daemons, pbus_tmp
    s.schema, s.fleet = compiled
    s.broker = Broker(pbus_tmp).start()
    s.pbusd_args = ["--socket-dir", pbus_instance.sock_dir]
    s.bridge = Bridge(pbus_build, pbus_instance, pbus_tmp, s.fleet, s.broker)
    try:
        s.pbusd = pbus_daemons.start(pbus_instance.name, pbus_instance.state_dir, schema=s.schema,
                                     extra=s.pbusd_args)
        s.bridge.start()
    except BaseException:               # nothing left running behind a failed start
        s.bridge.stop()
        s.broker.stop()
        raise
    s.clients = []

    def client(user="operator", topics=(f"{PREFIX}/#",), **kw):
        c = Client(s.broker, user, topics, **kw)
        s.clients.append(c)
        return c
    s.client = client
    s.topic = lambda t: f"{PREFIX}/{pbus_instance.name}/{t}"
    yield s
    for c in s.clients:
        c.close()
    alive = s.bridge.proc.poll() is None
    rc = s.bridge.stop()
    s.broker.stop()
    check(alive, f"pbus-bridge exited with {s.bridge.proc.returncode}: {s.bridge.log()}")
    check(rc == 0, f"pbus-bridge exit status {rc} after SIGTERM: {s.bridge.log()}")


# --- values ------------------------------------------------------------------------

def test_values_and_their_json(stack):
    c = stack.client(topics=(stack.topic("#"),))
    _, v, retained, _ = c.wait(lambda t, b: t == stack.topic("setpoint"), "setpoint's value")
    check(set(v) == {"value", "unit", "ts", "status", "seq"}, f"members: {v}")
    check(v["value"] == 1 and v["unit"] == "V" and v["status"] == "ok" and retained, f"setpoint: {v} {retained}")
    check(v["ts"].endswith("Z") and len(v["ts"]) == 30, f"ts is RFC 3339 with ns: {v['ts']}")
    _, v, _, _ = c.wait(lambda t, b: t == stack.topic("limits/current"), "the limit under its FleetTopic")
    check(v["value"] == 2 and v["unit"] == "A", f"limit: {v}")
    _, v, _, _ = c.wait(lambda t, b: t == stack.topic("taps"), "taps")
    check(v["value"] == [1, 2], f"an array is a JSON array: {v}")
    _, v, _, _ = c.wait(lambda t, b: t == stack.topic("model"), "model")
    check(v["value"] == "BENCH-1", f"a string: {v}")
    _, birth, retained, _ = c.wait(lambda t, b: t == stack.topic("$state"), "the birth")
    check(birth["state"] == "online" and birth["instance"] == stack.instance.name and retained, f"birth: {birth}")
    check(birth["interface"] == "org.example.bridge.Bench" and len(birth["schema"]) == 16, f"birth: {birth}")
    fleet_text = open(stack.fleet).read()
    check(f"schema {birth['schema']}" in fleet_text, "the birth's schema hash is the fleet file's")
    names = {p["name"]: p for p in birth["parameters"]}
    check("hidden" not in names and names["setpoint"]["command"] and not names["reading"]["retained"],
          f"birth's parameters: {birth['parameters']}")
    pbus(stack.build, stack.instance, "set", "setpoint=12.5")
    seq = seq_of(stack.build, stack.instance, "setpoint")
    _, v, _, _ = c.wait(lambda t, b: t == stack.topic("setpoint") and b["value"] == 12.5, "the new setpoint")
    check(v["seq"] == seq, f"seq {v['seq']}, pbus says {seq}")
    check(not c.of(stack.topic("hidden")), "a parameter with FleetPublish = false was published")


def test_retained_values_seen_by_a_late_subscriber(stack):
    pbus(stack.build, stack.instance, "set", "setpoint=7.25", "reading=3", ok=False)  # reading is read-only
    pbus(stack.build, stack.instance, "set", "setpoint=7.25", "enabled=true", "fast=3")
    first = stack.client(topics=(stack.topic("#"),))
    first.wait(lambda t, b: t == stack.topic("setpoint") and b["value"] == 7.25, "setpoint 7.25")
    first.wait(lambda t, b: t == stack.topic("fast") and b["value"] == 3, "fast 3")
    late = stack.client(topics=(stack.topic("#"),))
    _, v, retained, _ = late.wait(lambda t, b: t == stack.topic("setpoint"), "the retained setpoint")
    check(retained and v["value"] == 7.25, f"late subscriber: {v} retained={retained}")
    time.sleep(0.3)  # what is not retained would have come with the retained ones
    for t in ("enabled", "fast", "reading"):
        check(not late.of(stack.topic(t)), f"{t} (not retained) reached a late subscriber: {late.of(stack.topic(t))}")


def test_deadband_and_rate(stack):
    c = stack.client(topics=(stack.topic("noisy"), stack.topic("fast")))
    c.wait(lambda t, b: t == stack.topic("noisy"), "noisy's first value (never written: invalid)")
    pbus(stack.build, stack.instance, "set", "noisy=0.1")  # the status changes: always published
    c.wait(lambda t, b: t == stack.topic("noisy") and b["value"] == 0.1, "noisy 0.1")
    for x in ("0.2", "0.3", "0.55", "0.7", "0.9", "1.1", "1.3"):
        pbus(stack.build, stack.instance, "set", f"noisy={x}")
    c.wait(lambda t, b: t == stack.topic("noisy") and b["value"] == 1.3, "noisy 1.3 (past the deadband)")
    got = [v["value"] for v, _, _ in c.of(stack.topic("noisy"))][1:]
    check(got == [0.1, 0.7, 1.3], f"deadband 0.5: published {got}, expected 0.1, 0.7, 1.3")
    # fast: at most 5 per second
    c.wait(lambda t, b: t == stack.topic("fast"), "fast's first value")
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < 2.0:
        n += 1
        pbus(stack.build, stack.instance, "set", f"fast={n}")
    c.wait(lambda t, b: t == stack.topic("fast") and b["value"] == n, f"fast's last value {n}")
    times = [at for _, _, at in c.of(stack.topic("fast"))][1:]
    gaps = [b - a for a, b in zip(times, times[1:])]
    check(n > 15, f"only {n} writes in 2 s")
    check(len(times) <= 13 and all(g > 0.15 for g in gaps), f"{len(times)} values of {n} writes, gaps {gaps}")


# --- commands ----------------------------------------------------------------------

def test_command_applied_and_answered(stack):
    c = stack.client(topics=("replies/#", stack.topic("$reply"), stack.topic("setpoint")))
    info = c.command(stack.instance.name, "setpoint", 4.5, "cmd-1", response="replies/op", correlation=b"\x01\x02")
    info.wait_for_publish(TIMEOUT)
    _, r, _, props = c.wait(lambda t, b: t == "replies/op", "the reply on the response topic")
    check(r["ok"] and r["id"] == "cmd-1" and r["value"] == 4.5, f"reply: {r}")
    check(getattr(props, "CorrelationData", None) == b"\x01\x02", f"correlation data: {props}")
    check(pbus(stack.build, stack.instance, "get", "setpoint") == "4.5", "setpoint not 4.5 in the table")
    check(r["seq"] == seq_of(stack.build, stack.instance, "setpoint"), "reply's seq")
    c.wait(lambda t, b: t == stack.topic("setpoint") and b["value"] == 4.5, "the new value published")
    # no response topic: the default one; an array; a FleetTopic
    c.command(stack.instance.name, "taps", [3, 4, 5], "cmd-2").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: t == stack.topic("$reply") and b["id"] == "cmd-2", "reply on $reply")
    check(r["ok"] and r["value"] == [3, 4, 5], f"taps reply {r}")
    c.command(stack.instance.name, "limits/current", 1.5, "cmd-3").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: t == stack.topic("$reply") and b["id"] == "cmd-3", "limit's reply")
    check(r["ok"] and pbus(stack.build, stack.instance, "get", "limit") == "1.5", f"limit reply {r}")
    # refusals: out of range, bad JSON, no id; nothing written
    before = seq_of(stack.build, stack.instance, "setpoint")
    c.command(stack.instance.name, "setpoint", 99, "cmd-4").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: t == stack.topic("$reply") and b["id"] == "cmd-4", "refusal")
    check(not r["ok"] and "out of range" in r["error"] and r["value"] == 4.5, f"out of range: {r}")
    c.command(stack.instance.name, "setpoint", 5, None).wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: t == stack.topic("$reply") and b["id"] == "", "no-id refusal")
    check(not r["ok"] and "needs an \"id\"" in r["error"], f"no id: {r}")
    check(seq_of(stack.build, stack.instance, "setpoint") == before, "a refused command wrote the setpoint")


def test_read_only_and_unauthorised_commands_refused(stack):
    c = stack.client(topics=(stack.topic("$reply"),))
    c.command(stack.instance.name, "reading", 1, "ro-1").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: b and b.get("id") == "ro-1", "read-only refusal")
    check(not r["ok"] and "read-only" in r["error"], f"read-only: {r}")
    c.command(stack.instance.name, "model", "X", "ro-2").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: b and b.get("id") == "ro-2", "read-only refusal of model")
    check(not r["ok"], f"model: {r}")
    viewer = stack.client("viewer", topics=(stack.topic("$reply"),))
    viewer.command(stack.instance.name, "setpoint", 9, "viewer-1").wait_for_publish(TIMEOUT)
    # the operator's command after it is answered: the viewer's is not applied
    c.command(stack.instance.name, "setpoint", 8, "op-1").wait_for_publish(TIMEOUT)
    c.wait(lambda t, b: b and b.get("id") == "op-1", "operator's reply")
    check(not [m for m in c.messages if b"viewer-1" in m[1]], "the viewer's command was answered")
    check(pbus(stack.build, stack.instance, "get", "setpoint") == "8", "setpoint is not the operator's 8")
    check("viewer-1" not in stack.bridge.log(), "the bridge saw the viewer's command")


def test_duplicate_id_not_applied_again_across_bridge_restart(stack):
    c = stack.client(topics=(stack.topic("$reply"),))
    c.command(stack.instance.name, "setpoint", 3, "once").wait_for_publish(TIMEOUT)
    c.wait(lambda t, b: b and b.get("id") == "once", "first reply")
    seq = seq_of(stack.build, stack.instance, "setpoint")
    stack.bridge.stop(signal.SIGKILL)
    # commands sent while the bridge is away wait in its persistent session
    c.command(stack.instance.name, "setpoint", 6, "while-away").wait_for_publish(TIMEOUT)
    stack.bridge.start()
    _, r, _, _ = c.wait(lambda t, b: b and b.get("id") == "while-away", "the queued command's reply")
    check(r["ok"] and pbus(stack.build, stack.instance, "get", "setpoint") == "6", f"queued: {r}")
    c.command(stack.instance.name, "setpoint", 3, "once").wait_for_publish(TIMEOUT)
    _, r, _, _ = c.wait(lambda t, b: b and b.get("id") == "once" and b.get("duplicate"), "the duplicate's reply")
    check(r["ok"] and r["seq"] == seq, f"duplicate: {r}")
    check(pbus(stack.build, stack.instance, "get", "setpoint") == "6", "the duplicate was applied again")
    check(seq_of(stack.build, stack.instance, "setpoint") == seq + 1, "setpoint written more than once")


# --- restarts ----------------------------------------------------------------------

BROKER_RESTARTS = 20  # issue 21's target: 0 commands lost or doubled across 20 broker restarts


def test_broker_restart_reconnect_birth_no_command_lost_or_doubled(stack):
    """Five acknowledged commands before each of 20 broker restarts (SIGTERM:
    mosquitto saves its store), a value changed while the broker is away:
    the bridge births again, publishes the value, and pbusd's version of the
    setpoint grew by exactly the number of commands (none lost, none
    applied twice)."""
    c = stack.client(topics=(stack.topic("$state"),))
    _, birth, _, _ = c.wait(lambda t, b: b["state"] == "online", "birth")
    session = birth["session"]
    seq0 = seq_of(stack.build, stack.instance, "setpoint")
    sender = Client(stack.broker, "operator", (), client_id="sender-1", clean=False)
    stack.clients.append(sender)
    sent = []
    for round_ in range(BROKER_RESTARTS):
        for k in range(5):
            ident = f"r{round_}-{k}"
            value = (round_ * 5 + k) * 0.25 + 0.5  # within setpoint's 0 … 30
            info = sender.command(stack.instance.name, "setpoint", value, ident)
            sent.append((ident, value, info))
        for ident, value, info in sent[-5:]:
            info.wait_for_publish(TIMEOUT)
        stack.broker.stop(signal.SIGTERM)
        pbus(stack.build, stack.instance, "set", "limit=%d" % (100 + round_))  # while the broker is away
        stack.broker.start()
        check(sender.connected.wait(TIMEOUT), "sender reconnect")
    watcher = stack.client(topics=(stack.topic("#"), stack.topic("$reply")))
    _, birth, _, _ = watcher.wait(lambda t, b: t == stack.topic("$state") and b["state"] == "online"
                                  and b["session"] > session, "a fresh birth after the restarts", timeout=20)
    watcher.wait(lambda t, b: t == stack.topic("limits/current") and b["value"] == 100 + BROKER_RESTARTS - 1,
                 "the value set while away")
    deadline = time.monotonic() + 20
    last = sent[-1]
    while pbus(stack.build, stack.instance, "get", "setpoint") != ("%g" % last[1]) and time.monotonic() < deadline:
        time.sleep(0.1)
    applied = seq_of(stack.build, stack.instance, "setpoint") - seq0
    check(applied == len(sent), f"{applied} writes for {len(sent)} acknowledged commands: {stack.bridge.log()}")


def test_pbusd_restarted_under_the_bridge(stack):
    c = stack.client(topics=(stack.topic("#"),))
    c.wait(lambda t, b: t == stack.topic("setpoint"), "first value")
    stack.pbusd.stop()
    c.wait(lambda t, b: t == stack.topic("$state") and b["state"] == "online" and not b["pbusd"],
           "the state saying pbusd is away")
    stack.pbusd = stack.daemons.start(stack.instance.name, stack.instance.state_dir, schema=stack.schema,
                                      extra=stack.pbusd_args)
    c.wait(lambda t, b: t == stack.topic("$state") and b["state"] == "online" and b["pbusd"], "pbusd back")
    pbus(stack.build, stack.instance, "set", "setpoint=21")
    c.wait(lambda t, b: t == stack.topic("setpoint") and b["value"] == 21, "a value after pbusd's restart")
    c.command(stack.instance.name, "setpoint", 22, "after-restart").wait_for_publish(TIMEOUT)
    c.wait(lambda t, b: t == stack.topic("setpoint") and b["value"] == 22, "a command after pbusd's restart")


def test_killed_bridge_leaves_its_death(stack):
    c = stack.client(topics=(stack.topic("$state"),))
    c.wait(lambda t, b: b["state"] == "online", "birth")
    stack.bridge.stop(signal.SIGKILL)
    _, death, _, _ = c.wait(lambda t, b: b["state"] == "offline", "the will", timeout=60)
    check(death["instance"] == stack.instance.name, f"death: {death}")
    late = stack.client(topics=(stack.topic("$state"),))
    _, kept, retained, _ = late.wait(lambda t, b: True, "the retained state")
    check(retained and kept["state"] == "offline", f"the retained state after the will: {kept} {retained}")
    stack.bridge.start()
    c.wait(lambda t, b: b["state"] == "online", "birth again")
