"""test_tls.py: pbus-bridge to a broker over TLS (docs/fleet.md, "Security").

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/bridge/test_tls.py \\
        --pbus-build build/dev

Debian's mosquitto with a TLS-only listener and certificates of a test CA
made by openssl (pbustest.mqtt.make_pki): the bridge trusts the CA
(--tls-ca), logs in with a password, and with --tls-cert/--tls-key shows a
client certificate where the broker requires one. A bridge that trusts
another CA must not connect, and says why.
"""
import os
import time

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.mqtt import Bridge, Broker, Client, PREFIX, compile_fleet, make_pki, pbus

SUITE = "bridge"
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def compiled(pbus_tmp):
    return compile_fleet(pbus_tmp, os.path.join(HERE, "bench.fdepl"), "tls")


@pytest.fixture(scope="module")
def pki(pbus_tmp):
    return make_pki(os.path.join(pbus_tmp, "pki"))


@pytest.fixture
def rig(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, compiled):
    """start(tls, require_cert, bridge_args) -> (broker, bridge or None);
    everything stopped after the test."""
    started = []

    def start(tls, require_cert, bridge_args, ready=True):
        broker = Broker(pbus_tmp, tls=tls, require_cert=require_cert).start()
        started.append(broker)
        pbus_daemons.start(pbus_instance.name, pbus_instance.state_dir, schema=compiled[0],
                           extra=["--socket-dir", pbus_instance.sock_dir])
        bridge = Bridge(pbus_build, pbus_instance, pbus_tmp, compiled[1], broker, extra=bridge_args)
        started.append(bridge)
        return broker, bridge.start() if ready else bridge.launch()
    yield start
    for thing in reversed(started):
        thing.stop()


def commanded_over_tls(broker, pki, pbus_build, pbus_instance):
    """A TLS subscriber sees the bridge's values and its command applies."""
    c = Client(broker, "operator", (f"{PREFIX}/#",), tls=pki)
    try:
        topic = f"{PREFIX}/{pbus_instance.name}/setpoint"
        c.wait(lambda t, b: t == topic, "the setpoint over TLS")
        c.command(pbus_instance.name, "setpoint", 6.5, "tls-1").wait_for_publish(TIMEOUT)
        c.wait(lambda t, b: t == topic and b["value"] == 6.5, "the commanded setpoint over TLS")
        check(pbus(pbus_build, pbus_instance, "get", "setpoint") == "6.5", "the command did not reach pbusd")
    finally:
        c.close()


def test_tls_with_password(rig, pki, pbus_build, pbus_instance):
    broker, bridge = rig(pki, False, ["--tls-ca", pki["ca"]])
    commanded_over_tls(broker, pki, pbus_build, pbus_instance)


def test_tls_with_client_certificate(rig, pki, pbus_build, pbus_instance):
    broker, bridge = rig(pki, True, ["--tls-ca", pki["ca"], "--tls-cert", pki["client_cert"],
                                     "--tls-key", pki["client_key"]])
    commanded_over_tls(broker, pki, pbus_build, pbus_instance)


def test_tls_refuses_a_broker_of_another_ca(rig, pki, pbus_tmp):
    other = make_pki(os.path.join(pbus_tmp, "other-pki"))
    broker, bridge = rig(pki, False, ["--tls-ca", other["ca"]], ready=False)
    deadline = time.monotonic() + TIMEOUT
    # one warning naming OpenSSL's reason, then retries
    while "A TLS error occurred.: OpenSSL Error[0]: " not in bridge.log() or \
            "certificate verify failed (trying again)" not in bridge.log():
        if time.monotonic() > deadline or bridge.proc.poll() is not None:
            raise Failure(f"no certificate error in the bridge's log: {bridge.log()}")
        time.sleep(0.1)
    check(bridge.proc.poll() is None, "the bridge gave up instead of retrying")
    # and nothing of it reached the broker
    c = Client(broker, "operator", (f"{PREFIX}/#",), tls=pki)
    time.sleep(0.5)
    check(not c.messages, f"a bridge that does not trust the broker published: {c.messages[:2]}")
    c.close()
