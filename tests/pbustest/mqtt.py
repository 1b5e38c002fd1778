"""mqtt.py: a real MQTT broker, pbus-bridge and MQTT clients for the
bridge's tests (tests/bridge) and benchmark.

- Broker: Debian's mosquitto on a free loopback port with a config written
  here (persistence on, no anonymous login, users made with
  mosquitto_passwd, an ACL for the users of PASSWORDS); restartable on the
  same port and store.
- Bridge: pbus-bridge for one instance, ready through --notify-fd.
- Client: a paho-mqtt (PyPI) MQTT 5 client that keeps every message;
  payloads are decoded as JSON unless given another decoder.
Users: `bridge` (the daemon), `operator` (reads everything, may send
commands), `viewer` (reads only: the ACL refuses its commands).
"""
import json
import os
import signal
import socket
import subprocess
import threading
import time
import uuid

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from pbustest.check import TIMEOUT, Failure, check
from pbustest.daemon import spawn_notified, stop_process
from pbustest.gen import run_pbus_gen

PASSWORDS = {"bridge": "bridge-pw", "operator": "operator-pw", "viewer": "viewer-pw"}
PREFIX = "plant"
SPARKPLUG = "spBv1.0"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_pki(directory):
    """A test CA and two certificates it signs, made with openssl (Debian's):
    the broker's (CN and subjectAltName 127.0.0.1) and a client's (CN
    bridge). Returns a dict of PEM paths: ca, server_cert, server_key,
    client_cert, client_key."""
    os.makedirs(directory, exist_ok=True)
    p = {k: os.path.join(directory, f"{k}.pem") for k in
         ("ca", "ca_key", "server_cert", "server_key", "client_cert", "client_key")}

    def openssl(*args):
        r = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise Failure(f"openssl {args[0]}: {r.stderr[-300:]}")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=parambus test CA", "-keyout", p["ca_key"], "-out", p["ca"])
    for who, cn, ext in (("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1"), ("client", "bridge", None)):
        csr = os.path.join(directory, f"{who}.csr")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={cn}",
                "-keyout", p[f"{who}_key"], "-out", csr)
        extfile = os.path.join(directory, f"{who}.ext")
        with open(extfile, "w") as f:
            f.write((ext or "basicConstraints=CA:FALSE") + "\n")
        openssl("x509", "-req", "-in", csr, "-CA", p["ca"], "-CAkey", p["ca_key"], "-CAcreateserial",
                "-days", "1", "-extfile", extfile, "-out", p[f"{who}_cert"])
    return p


class Broker:
    """mosquitto with persistence, users and an ACL; restartable on the
    same port and store. With @tls (make_pki()'s dict) its listener is TLS
    only, and with @require_cert it asks clients for a certificate of the
    same CA."""

    def __init__(self, tmp, tls=None, require_cert=False, conf=""):
        self.dir = os.path.join(tmp, f"broker-{uuid.uuid4().hex[:8]}")
        os.makedirs(self.dir)
        self.port = free_port()
        passwd = os.path.join(self.dir, "passwd")
        for i, (user, pw) in enumerate(PASSWORDS.items()):
            subprocess.run(["mosquitto_passwd", "-b"] + (["-c"] if i == 0 else []) + [passwd, user, pw],
                           check=True, capture_output=True, timeout=TIMEOUT)
        acl = os.path.join(self.dir, "acl")
        with open(acl, "w") as f:
            f.write(f"user bridge\ntopic readwrite {PREFIX}/#\ntopic write replies/#\n\n"
                    f"user operator\ntopic read {PREFIX}/#\ntopic write {PREFIX}/+/+/set\n"
                    f"topic write {PREFIX}/+/limits/current/set\ntopic read replies/#\n\n"
                    f"user viewer\ntopic read {PREFIX}/#\n")
            # Sparkplug B (tests/bridge/test_sparkplug.py): the bridge is an
            # edge node, the operator a host application (data, commands,
            # its STATE), the viewer reads
            f.write(f"\nuser bridge\ntopic readwrite {SPARKPLUG}/#\n\n"
                    f"user operator\ntopic readwrite {SPARKPLUG}/#\n\n"
                    f"user viewer\ntopic read {SPARKPLUG}/#\n")
        self.conf = os.path.join(self.dir, "mosquitto.conf")
        with open(self.conf, "w") as f:
            f.write(f"user root\nlistener {self.port} 127.0.0.1\n")
            if tls:
                f.write(f"cafile {tls['ca']}\ncertfile {tls['server_cert']}\nkeyfile {tls['server_key']}\n"
                        f"require_certificate {'true' if require_cert else 'false'}\n")
            f.write(f"allow_anonymous false\n"
                    f"password_file {passwd}\nacl_file {acl}\npersistence true\n"
                    f"persistence_location {self.dir}/\nautosave_interval 1\nautosave_on_changes true\n"
                    "log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n" + conf)
        self.proc = None

    def start(self):
        log = open(os.path.join(self.dir, "log"), "ab")
        self.proc = subprocess.Popen(["mosquitto", "-c", self.conf], stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=log)
        log.close()
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise Failure(f"mosquitto did not start: {self.log()}")
                time.sleep(0.02)

    def log(self):
        with open(os.path.join(self.dir, "log"), errors="replace") as f:
            return f.read()[-1500:]

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.proc, sig) if self.proc else None


class Bridge:
    def __init__(self, build, instance, tmp, fleet, broker, extra=()):
        self.program = build.path("daemon", "pbus-bridge")
        build.require(self.program)
        self.instance, self.fleet, self.broker, self.extra = instance, fleet, broker, list(extra)
        self.state = os.path.join(tmp, f"bridge-state-{instance.name}")
        os.makedirs(self.state, exist_ok=True)
        self.pwfile = os.path.join(tmp, "bridge-password")
        with open(self.pwfile, "w") as f:
            f.write(PASSWORDS["bridge"] + "\n")
        self.log_path = os.path.join(tmp, f"pbus-bridge-{instance.name}.log")
        self.proc = None

    def argv(self):
        return [self.program, "--instance", self.instance.name, "--socket-dir", self.instance.sock_dir,
                "--fleet", self.fleet, "--broker", f"127.0.0.1:{self.broker.port}", "--prefix", PREFIX,
                "--username", "bridge", "--password-file", self.pwfile, "--state-dir", self.state,
                "--reconnect-max", "300", "--log-level", "debug"] + self.extra

    def launch(self):
        """Started, not waited for (one that is never ready)."""
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        return self

    def start(self):
        """Started and ready: its values are on the broker."""
        self.proc, fields = spawn_notified(self.argv(), self.log_path)
        if fields is None:
            self.stop()
            raise Failure(f"pbus-bridge not ready: {self.log()}")
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-2500:]

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.proc, sig) if self.proc else None


class Client:
    """A paho-mqtt client (MQTT 5) that keeps every message it gets."""

    def __init__(self, broker, user, topics=(), client_id=None, clean=True, decode=json.loads, tls=None):
        """@decode: bytes -> the payload as the tests see it (ValueError
        when it is not one); @tls: make_pki()'s dict, to connect over TLS
        (with the client certificate)."""
        self.decode = decode
        self.messages, self.cond = [], threading.Condition()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or f"t-{uuid.uuid4().hex[:8]}",
                             protocol=mqtt.MQTTv5)
        self.c.username_pw_set(user, PASSWORDS[user])
        self.c.on_message = self._on_message
        self.subscribed = threading.Event()
        self.c.on_subscribe = lambda *a: self.subscribed.set()
        self.connected = threading.Event()
        self.c.on_connect = lambda c, u, f, rc, p: self.connected.set() if rc == 0 else None
        self.c.on_disconnect = lambda *a: self.connected.clear()
        self.c.reconnect_delay_set(min_delay=1, max_delay=1)
        if tls:
            self.c.tls_set(ca_certs=tls["ca"], certfile=tls["client_cert"], keyfile=tls["client_key"])
        props = Properties(PacketTypes.CONNECT)
        if not clean:
            props.SessionExpiryInterval = 3600
        self.c.connect("127.0.0.1", broker.port, keepalive=30, clean_start=clean, properties=props)
        self.c.loop_start()
        check(self.connected.wait(TIMEOUT), f"{user} could not connect to the broker")
        for t in topics:
            self.subscribed.clear()
            # Retain As Published: a retained value that the broker
            # forwards live (the bridge published it just after this
            # subscription) keeps its retain flag, as a late subscriber sees it.
            self.c.subscribe(t, options=SubscribeOptions(qos=1, retainAsPublished=True))
            check(self.subscribed.wait(TIMEOUT), f"subscribe {t}: no SUBACK")

    def _on_message(self, c, u, msg):
        with self.cond:
            self.messages.append((msg.topic, msg.payload, msg.retain, msg.properties, time.monotonic()))
            self.cond.notify_all()

    def wait(self, pred, what, timeout=TIMEOUT):
        """The first message (topic, json, retain, props) that satisfies
        @pred(topic, json); Failure after @timeout s."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self.cond:
            while True:
                for m in self.messages[seen:]:
                    try:
                        body = self.decode(m[1])
                    except ValueError:
                        body = None
                    if pred(m[0], body):
                        return m[0], body, m[2], m[3]
                seen = len(self.messages)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"no {what} within {timeout} s; got {[(m[0], m[1][:80]) for m in self.messages[-8:]]}")
                self.cond.wait(left)

    def of(self, topic):
        with self.cond:
            return [(self.decode(m[1]), m[2], m[4]) for m in self.messages if m[0] == topic]

    def command(self, instance, topic, value, ident, response=None, correlation=None):
        props = Properties(PacketTypes.PUBLISH)
        if response:
            props.ResponseTopic = response
        if correlation:
            props.CorrelationData = correlation
        body = {"value": value}
        if ident is not None:
            body["id"] = ident
        info = self.c.publish(f"{PREFIX}/{instance}/{topic}/set", json.dumps(body), qos=1, properties=props)
        return info

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def pbus(build, instance, *args, ok=True):
    r = subprocess.run([build.pbus, "-i", instance.name] + list(args), capture_output=True, text=True,
                       timeout=TIMEOUT, env=dict(os.environ, PBUS_SOCKET_DIR=instance.sock_dir))
    if ok and r.returncode != 0:
        raise Failure(f"pbus {' '.join(args)[:80]}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout.strip()


def seq_of(build, instance, name):
    return json.loads(pbus(build, instance, "get", "--json", name))[name]["seq"]


def compile_fleet(tmp, fdepl, stem):
    """(schema, fleet): @fdepl compiled by this checkout's pbus-gen into
    @tmp/@stem.pbs and @tmp/@stem.fleet."""
    schema, fleet = os.path.join(tmp, f"{stem}.pbs"), os.path.join(tmp, f"{stem}.fleet")
    run_pbus_gen("--schema", schema, "--fleet", fleet, fdepl)
    return schema, fleet
