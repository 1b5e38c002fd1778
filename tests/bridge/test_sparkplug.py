"""test_sparkplug.py: pbus-bridge --mode sparkplug between the real pbusd and
a real broker, checked by a Sparkplug B host application written here.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/bridge \\
        --pbus-build build/dev

The host application decodes the payloads with the protobuf package (PyPI)
and message classes made from the bridge's own bridge/sparkplug_b.proto:
Debian's protoc compiles it into a descriptor set in the module's tmp
folder, which the protobuf runtime loads (no second .proto, no generated
code in the tree). The broker, pbusd and the bridge are those of
test_bridge.py (pbustest.mqtt; tests/bridge/bench.fdepl's instrument), the
host subscribes before the bridge starts, so it sees the first births.
"""
import json
import os
import signal
import subprocess
import time

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from pbustest.check import TIMEOUT, check
from pbustest.mqtt import Bridge, Broker, Client, compile_fleet, pbus, seq_of

SUITE = "bridge"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
GROUP, NODE = "plant-a", "bench-node"
NS = "spBv1.0"
# Sparkplug's DataType numbers, as the specification gives them
INT32, INT64, DOUBLE, BOOLEAN, STRING, INT32_ARRAY = 3, 4, 10, 11, 12, 24
GOOD, BAD = 192, 0


@pytest.fixture(scope="module")
def compiled(pbus_tmp):
    return compile_fleet(pbus_tmp, os.path.join(HERE, "bench.fdepl"), "bench")


@pytest.fixture(scope="module")
def Payload(pbus_tmp):
    """The Payload message class of bridge/sparkplug_b.proto."""
    desc = os.path.join(pbus_tmp, "sparkplug_b.desc")
    r = subprocess.run(["protoc", "--proto_path", os.path.join(TOP, "bridge"), "--descriptor_set_out", desc,
                        "sparkplug_b.proto"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"protoc: {r.stderr}")
    with open(desc, "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
        pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("spb.Payload"))


def topic(verb, device=None):
    return f"{NS}/{GROUP}/{verb}/{NODE}" + (f"/{device}" if device else "")


class Host:
    """A Sparkplug host application: a paho client of the operator that
    decodes every payload under the group as a Sparkplug B Payload."""

    def __init__(self, broker, Payload, device, **kw):
        self.Payload, self.device = Payload, device

        def decode(data):
            try:
                return Payload.FromString(data)
            except DecodeError as e:
                raise ValueError(str(e))
        self.client = Client(broker, "operator", (f"{NS}/{GROUP}/#",), decode=decode, **kw)

    def wait(self, verb, pred=lambda p: True, what=None, device=False, timeout=TIMEOUT):
        t = topic(verb, self.device if device else None)
        _, p, retained, _ = self.client.wait(lambda tt, body: tt == t and body is not None and pred(body),
                                             what or verb, timeout=timeout)
        check(not retained, f"{verb} was retained")
        return p

    def all(self):
        """Every (topic, payload) the edge node published, in order (not
        the commands this host sees itself send)."""
        with self.client.cond:
            return [(m[0], self.Payload.FromString(m[1])) for m in self.client.messages
                    if m[0].split("/")[2] not in ("NCMD", "DCMD")]

    def count(self):
        return len(self.all())

    def command(self, verb, metrics, device=False, timestamp=None, qos=1):
        p = self.Payload()
        p.timestamp = timestamp if timestamp is not None else int(time.time() * 1000)
        for m in metrics:
            p.metrics.add().CopyFrom(m)
        info = self.client.c.publish(topic(verb, self.device if device else None), p.SerializeToString(), qos=qos)
        info.wait_for_publish(TIMEOUT)
        return p

    def metric(self, **fields):
        m = self.Payload.Metric()
        for k, v in fields.items():
            setattr(m, k, v)
        return m

    def rebirth(self):
        self.command("NCMD", [self.metric(name="Node Control/Rebirth", datatype=BOOLEAN, boolean_value=True)])

    def close(self):
        self.client.close()


def bdseq(nbirth):
    (m,) = [m for m in nbirth.metrics if m.name == "bdSeq"]
    check(m.datatype == INT64 and m.WhichOneof("value") == "long_value", f"bdSeq metric: {m}")
    return m.long_value


def props(metric):
    out = {}
    for k, v in zip(metric.properties.keys, metric.properties.values):
        out[k] = (v.type, getattr(v, v.WhichOneof("value")))
    return out


class Stack:
    pass


@pytest.fixture
def spb(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, compiled, Payload):
    """start(extra=(), before=None): a broker, pbusd, a host application
    subscribed, then pbus-bridge --mode sparkplug, ready. The bridge must
    still run at the end and exit 0 on SIGTERM."""
    s = Stack()
    s.build, s.instance, s.daemons, s.tmp, s.Payload = pbus_build, pbus_instance, pbus_daemons, pbus_tmp, Payload
    s.schema, s.fleet = compiled
    s.broker = Broker(pbus_tmp).start()
    s.pbusd = pbus_daemons.start(pbus_instance.name, pbus_instance.state_dir, schema=s.schema,
                                 extra=["--socket-dir", pbus_instance.sock_dir])
    s.device = pbus_instance.name.replace("/", "_")
    s.hosts, s.bridge = [], None

    def host(**kw):
        h = Host(s.broker, Payload, s.device, **kw)
        s.hosts.append(h)
        return h
    s.host = host

    def start(extra=(), before=None):
        s.h = host()
        if before:
            before(s)
        s.bridge = Bridge(pbus_build, pbus_instance, pbus_tmp, s.fleet, s.broker,
                          extra=["--mode", "sparkplug", "--group", GROUP, "--edge-node", NODE] + list(extra))
        s.bridge.start()
        return s
    s.start = start
    s.pbus = lambda *a, **kw: pbus(pbus_build, pbus_instance, *a, **kw)
    yield s
    for h in s.hosts:
        h.close()
    if s.bridge:
        alive = s.bridge.proc.poll() is None
        rc = s.bridge.stop()
        check(alive, f"pbus-bridge exited with {s.bridge.proc.returncode}: {s.bridge.log()}")
        check(rc == 0, f"pbus-bridge exit status {rc} after SIGTERM: {s.bridge.log()}")
    s.broker.stop()


def births(s, h):
    """The first NBIRTH and DBIRTH the host sees."""
    nb = h.wait("NBIRTH", what="NBIRTH")
    db = h.wait("DBIRTH", device=True, what="DBIRTH")
    return nb, db


# --- births ------------------------------------------------------------------------

def test_sparkplug_birth_certificates(spb):
    s = spb.start()
    nb, db = births(s, s.h)
    check(nb.seq == 0 and nb.HasField("seq") and nb.timestamp > 0, f"NBIRTH seq/timestamp: {nb.seq} {nb.timestamp}")
    check(bdseq(nb) == 0, f"the first session's bdSeq is 0, not {bdseq(nb)}")
    (rebirth,) = [m for m in nb.metrics if m.name == "Node Control/Rebirth"]
    check(rebirth.datatype == BOOLEAN and rebirth.boolean_value is False and not rebirth.HasField("alias"),
          f"Node Control/Rebirth: {rebirth}")
    check(db.seq == 1, f"DBIRTH seq {db.seq}, expected 1 (after NBIRTH's 0)")
    by_name = {m.name: m for m in db.metrics}
    published = {"model", "setpoint", "limit", "reading", "noisy", "fast", "taps", "enabled"}
    check(set(by_name) == published, f"DBIRTH metrics {sorted(by_name)}, expected {sorted(published)}")
    aliases = [m.alias for m in db.metrics]
    check(all(m.HasField("alias") for m in db.metrics) and len(set(aliases)) == len(aliases) and 0 not in aliases,
          f"aliases: {aliases}")
    types = {n: m.datatype for n, m in by_name.items()}
    check(types == {"model": STRING, "setpoint": DOUBLE, "limit": DOUBLE, "reading": DOUBLE, "noisy": DOUBLE,
                    "fast": INT32, "taps": INT32_ARRAY, "enabled": BOOLEAN}, f"datatypes: {types}")
    sp = by_name["setpoint"]
    check(sp.double_value == 1.0, f"setpoint's value: {sp}")
    check(props(sp) == {"engUnit": (STRING, "V"), "writable": (BOOLEAN, True), "Quality": (INT32, GOOD),
                        "alarmStatus": (STRING, "ok")}, f"setpoint's properties: {props(sp)}")
    table = json.loads(s.pbus("get", "--json", "setpoint"))["setpoint"]
    check(sp.timestamp == table["timestamp_ns"] // 1000000, f"setpoint's timestamp {sp.timestamp}, table {table}")
    rd = by_name["reading"]
    check(props(rd)["Quality"] == (INT32, BAD) and props(rd)["alarmStatus"] == (STRING, "invalid")
          and props(rd)["writable"] == (BOOLEAN, False), f"reading (never written): {props(rd)}")
    check(by_name["model"].string_value == "BENCH-1" and by_name["enabled"].boolean_value is False,
          f"model/enabled: {by_name['model']} {by_name['enabled']}")
    taps = by_name["taps"].bytes_value
    check(taps == (1).to_bytes(4, "little", signed=True) + (2).to_bytes(4, "little", signed=True),
          f"taps (Int32Array, packed little-endian): {taps.hex()}")
    check(props(by_name["limit"])["engUnit"] == (STRING, "A"), f"limit's unit: {props(by_name['limit'])}")


def test_sparkplug_ddata_by_alias(spb):
    s = spb.start()
    _, db = births(s, s.h)
    alias = {m.name: m.alias for m in db.metrics}
    s.pbus("set", "setpoint=12.5")
    p = s.h.wait("DDATA", lambda p: any(m.alias == alias["setpoint"] and m.double_value == 12.5 for m in p.metrics),
                 "DDATA setpoint 12.5", device=True)
    (m,) = [m for m in p.metrics if m.alias == alias["setpoint"]]
    check(not m.name and not m.HasField("datatype"), f"a DDATA metric by alias alone: {m}")
    table = json.loads(s.pbus("get", "--json", "setpoint"))["setpoint"]
    check(m.timestamp == table["timestamp_ns"] // 1000000, "the metric's timestamp is the table's")
    check(p.seq == 2 and p.timestamp > 0, f"the first DDATA's seq {p.seq} (NBIRTH 0, DBIRTH 1)")
    check(not m.HasField("properties"), f"properties sent while the status did not change: {m}")
    # noisy was never written (invalid): its first value changes the status,
    # and the quality and alarm status go with it
    s.pbus("set", "noisy=0.25", "taps=7,8,9")
    p = s.h.wait("DDATA", lambda p: any(m.alias == alias["noisy"] for m in p.metrics), "DDATA noisy", device=True)
    (m,) = [m for m in p.metrics if m.alias == alias["noisy"]]
    check(m.double_value == 0.25 and props(m) == {"Quality": (INT32, GOOD), "alarmStatus": (STRING, "ok")},
          f"noisy with its new status: {m}")
    p = s.h.wait("DDATA", lambda p: any(m.alias == alias["taps"] for m in p.metrics), "DDATA taps", device=True)
    (m,) = [m for m in p.metrics if m.alias == alias["taps"]]
    check(m.bytes_value == b"".join(v.to_bytes(4, "little") for v in (7, 8, 9)), f"taps: {m.bytes_value.hex()}")


def test_sparkplug_seq_wraps_at_256(spb):
    s = spb.start()
    _, db = births(s, s.h)
    alias = {m.name: m.alias for m in db.metrics}["fast"]
    # fast is rate-limited to 5/s; setpoint is not: each write is one DDATA
    # unless the bridge coalesces, so write until the host saw seq wrap
    value, wrapped = 0, False
    while not wrapped and value < 700:
        value += 1
        s.pbus("set", f"setpoint={value % 30}.5")
        if value % 20 == 0:
            seqs = [p.seq for t, p in s.h.all() if "/DDATA/" in t]
            wrapped = any(a == 255 and b == 0 for a, b in zip(seqs, seqs[1:]))
    s.h.wait("DDATA", lambda p: any(m.double_value == value % 30 + 0.5 and m.alias != alias for m in p.metrics),
             "the last DDATA", device=True)
    msgs = [(t, p) for t, p in s.h.all() if not t.startswith(f"{NS}/STATE")]
    check(msgs[0][0] == topic("NBIRTH"), f"first message {msgs[0][0]}")
    seqs = [p.seq for _, p in msgs]
    check(len(seqs) > 257, f"only {len(seqs)} messages for {value} writes")
    bad = [(i, a, b) for i, (a, b) in enumerate(zip(seqs, seqs[1:])) if b != (a + 1) % 256]
    check(not bad, f"seq not consecutive modulo 256 at {bad[:5]}")
    check(max(seqs) == 255 and seqs.count(0) >= 2, f"seq did not wrap: max {max(seqs)}")


def test_sparkplug_rebirth_keeps_bdseq_resets_seq(spb):
    s = spb.start()
    nb, db = births(s, s.h)
    s.pbus("set", "setpoint=3.5")
    s.h.wait("DDATA", lambda p: p.seq == 2, "a DDATA", device=True)
    seen = s.h.count()
    s.h.rebirth()
    deadline = time.monotonic() + TIMEOUT
    while s.h.count() < seen + 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    again = s.h.all()[seen:]
    check([t for t, _ in again[:2]] == [topic("NBIRTH"), topic("DBIRTH", s.device)], f"after rebirth: {again}")
    nb2, db2 = again[0][1], again[1][1]
    check(bdseq(nb2) == bdseq(nb), f"bdSeq changed on a rebirth: {bdseq(nb)} -> {bdseq(nb2)}")
    check(nb2.seq == 0 and db2.seq == 1, f"seq after rebirth: NBIRTH {nb2.seq}, DBIRTH {db2.seq}")
    check({m.name: m.alias for m in db2.metrics} == {m.name: m.alias for m in db.metrics}, "aliases changed")
    check([m.double_value for m in db2.metrics if m.name == "setpoint"] == [3.5], "DBIRTH's current value")
    # a Rebirth of false, an unknown node metric: nothing born again
    seen = s.h.count()
    s.h.command("NCMD", [s.h.metric(name="Node Control/Rebirth", datatype=BOOLEAN, boolean_value=False),
                         s.h.metric(name="Node Control/Reboot", datatype=BOOLEAN, boolean_value=True)])
    s.pbus("set", "setpoint=4.5")
    p = s.h.wait("DDATA", lambda p: any(m.double_value == 4.5 for m in p.metrics), "DDATA 4.5", device=True)
    check(p.seq == 2 and not [t for t, _ in s.h.all()[seen:] if "BIRTH" in t], "born again without a request")


# --- commands ----------------------------------------------------------------------

def test_sparkplug_dcmd_applied_and_refused(spb):
    s = spb.start()
    _, db = births(s, s.h)
    alias = {m.name: m.alias for m in db.metrics}
    h = s.h
    before = seq_of(s.build, s.instance, "setpoint")
    sent = h.command("DCMD", [h.metric(alias=alias["setpoint"], timestamp=int(time.time() * 1000),
                                       datatype=DOUBLE, double_value=4.5)], device=True)
    h.wait("DDATA", lambda p: any(m.alias == alias["setpoint"] and m.double_value == 4.5 for m in p.metrics),
           "setpoint 4.5 published", device=True)
    check(s.pbus("get", "setpoint") == "4.5", "the DCMD did not set setpoint")
    check(seq_of(s.build, s.instance, "setpoint") == before + 1, "setpoint written more than once")
    # the same command again (a host's retry: same timestamps and value): not applied twice
    h.client.c.publish(topic("DCMD", s.device), sent.SerializeToString(), qos=1).wait_for_publish(TIMEOUT)
    # by name, an array, a Boolean
    h.command("DCMD", [h.metric(name="taps", datatype=INT32_ARRAY,
                                bytes_value=b"".join(v.to_bytes(4, "little", signed=True) for v in (3, -4, 5))),
                       h.metric(alias=alias["enabled"], boolean_value=True)], device=True)
    h.wait("DDATA", lambda p: any(m.alias == alias["enabled"] and m.boolean_value for m in p.metrics),
           "enabled true", device=True)
    check(s.pbus("get", "taps") == "3,-4,5" and s.pbus("get", "enabled") == "true",
          f"taps {s.pbus('get', 'taps')}, enabled {s.pbus('get', 'enabled')}")
    check(seq_of(s.build, s.instance, "setpoint") == before + 1, "the repeated DCMD was applied again")
    check("duplicate" in s.bridge.log(), f"the repeated DCMD not seen as a duplicate: {s.bridge.log()}")
    # refusals: out of range, read-only, a wrong value type; nothing written
    reading = seq_of(s.build, s.instance, "reading")
    h.command("DCMD", [h.metric(alias=alias["setpoint"], double_value=99.0)], device=True)
    h.command("DCMD", [h.metric(alias=alias["reading"], double_value=1.0)], device=True)
    h.command("DCMD", [h.metric(alias=alias["setpoint"], string_value="12")], device=True)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and not ("out of range" in s.bridge.log() and "read-only" in s.bridge.log()
                                               and "string_value where double_value" in s.bridge.log()):
        time.sleep(0.05)
    log = s.bridge.log()
    check("out of range" in log and "read-only" in log and "string_value where double_value" in log,
          f"the refusals in the log: {log}")
    check(s.pbus("get", "setpoint") == "4.5" and seq_of(s.build, s.instance, "setpoint") == before + 1,
          "a refused DCMD wrote setpoint")
    check(seq_of(s.build, s.instance, "reading") == reading, "a DCMD wrote the read-only reading")
    # a payload that is not Sparkplug, a DCMD without timestamp: refused whole
    h.client.c.publish(topic("DCMD", s.device), b"\xff\xff not protobuf", qos=1).wait_for_publish(TIMEOUT)
    p = s.Payload()
    p.metrics.add().CopyFrom(h.metric(alias=alias["setpoint"], double_value=2.0))
    h.client.c.publish(topic("DCMD", s.device), p.SerializeToString(), qos=1).wait_for_publish(TIMEOUT)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and "no payload timestamp" not in s.bridge.log():
        time.sleep(0.05)
    check("not a Sparkplug B payload" in s.bridge.log() and "no payload timestamp" in s.bridge.log(),
          f"bad payloads: {s.bridge.log()}")
    check(s.pbus("get", "setpoint") == "4.5", "a refused payload wrote setpoint")


# --- deaths and sessions -----------------------------------------------------------

def test_sparkplug_ndeath_by_will_on_sigkill(spb):
    s = spb.start()
    nb, _ = births(s, s.h)
    s.bridge.stop(signal.SIGKILL)
    death = s.h.wait("NDEATH", what="the will (NDEATH)", timeout=60)
    check(bdseq(death) == bdseq(nb), f"NDEATH bdSeq {bdseq(death)}, NBIRTH's {bdseq(nb)}")
    check(not death.HasField("seq"), f"NDEATH carries a seq: {death}")
    s.bridge.start()
    nb2 = s.h.wait("NBIRTH", lambda p: bdseq(p) != bdseq(nb), "NBIRTH after the restart")
    check(bdseq(nb2) == bdseq(nb) + 1, f"bdSeq after a killed bridge: {bdseq(nb)} -> {bdseq(nb2)}")


def test_sparkplug_bdseq_per_session_across_restarts(spb):
    s = spb.start()
    nb, _ = births(s, s.h)
    first = bdseq(nb)
    # a clean stop publishes NDEATH itself, with the session's bdSeq
    check(s.bridge.stop() == 0, f"exit status: {s.bridge.log()}")
    death = s.h.wait("NDEATH", what="NDEATH of a clean stop")
    check(bdseq(death) == first, f"NDEATH {bdseq(death)} of session {first}")
    s.bridge.start()
    nb = s.h.wait("NBIRTH", lambda p: bdseq(p) != first, "NBIRTH after the bridge's restart")
    check(bdseq(nb) == first + 1, f"bdSeq after the bridge's restart: {first} -> {bdseq(nb)}")
    # the broker restarted: a new MQTT session, bdSeq + 1 (a new host
    # subscribes, then asks for a rebirth, which keeps the session's bdSeq)
    s.broker.stop(signal.SIGTERM)
    s.broker.start()
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and s.bridge.log().count("sparkplug: NBIRTH") < 2:
        time.sleep(0.05)
    h2 = s.host()
    h2.rebirth()
    nb = h2.wait("NBIRTH", what="NBIRTH after the broker's restart")
    check(bdseq(nb) == first + 2, f"bdSeq after the broker's restart: {first + 1} -> {bdseq(nb)}")
    check(nb.seq == 0, f"NBIRTH seq {nb.seq}")
    db = h2.wait("DBIRTH", device=True)
    check(db.seq == 1 and {m.name for m in db.metrics} >= {"setpoint", "taps"}, "DBIRTH after the broker's restart")


def test_sparkplug_primary_host_state(spb):
    host_id = "scada-1"
    state_topic = f"{NS}/STATE/{host_id}"

    def state(s, online, ts):
        s.hosts[0].client.c.publish(state_topic, json.dumps({"online": online, "timestamp": ts}), qos=1,
                                    retain=True).wait_for_publish(TIMEOUT)
    t0 = int(time.time() * 1000)
    s = spb.start(["--primary-host", host_id], before=lambda s: state(s, True, t0))
    nb, _ = births(s, s.h)
    # an older STATE saying offline: ignored (the latest timestamp wins)
    state(s, False, t0 - 1000)
    s.pbus("set", "setpoint=2.5")
    s.h.wait("DDATA", lambda p: any(m.double_value == 2.5 for m in p.metrics), "DDATA still", device=True)
    check(not [t for t, _ in s.h.all() if t == topic("NDEATH")], "an older STATE took the node offline")
    # offline: NDEATH, a new session that waits
    state(s, False, t0 + 1)
    death = s.h.wait("NDEATH", what="NDEATH on the host's offline STATE")
    check(bdseq(death) == bdseq(nb), f"NDEATH's bdSeq {bdseq(death)}")
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and s.bridge.log().count("broker 127.0.0.1") < 2:
        time.sleep(0.05)
    time.sleep(1.0)  # the reconnected bridge must stay silent: nothing to wait on but time
    check(not [t for t, p in s.h.all() if t == topic("NBIRTH") and bdseq(p) != bdseq(nb)],
          "born while the primary host is offline")
    s.pbus("set", "setpoint=3.5")
    # online again: born in the new session
    state(s, True, t0 + 2)
    nb2 = s.h.wait("NBIRTH", lambda p: bdseq(p) != bdseq(nb), "NBIRTH when the host is back")
    check(bdseq(nb2) == bdseq(nb) + 1 and nb2.seq == 0, f"NBIRTH {bdseq(nb2)} seq {nb2.seq}")
    db = s.h.wait("DBIRTH", lambda p: p.seq == 1 and any(m.name == "setpoint" and m.double_value == 3.5
                                                         for m in p.metrics), "DBIRTH with 3.5", device=True)
    check(db.seq == 1, "DBIRTH seq")
