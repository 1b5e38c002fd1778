"""test_fleet.py: a fleet of instruments on one real broker.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/fleet \\
        --pbus-build build/dev

Twenty instances of the demo power supply run on this machine, each its own
pbusd (examples/psu/psu.pbs), its simulator (psu-sim, writing the
measurements 20 times a second; the temperature, published at most once
a second, always moves a little) and its pbus-bridge (psu.fleet, which the
build makes with `pbus-gen --fleet`), all on one Debian mosquitto
(pbustest.mqtt: users, passwords, an ACL). One paho-mqtt subscriber must see
every instrument born and its values live, and command each of them: every
instrument takes its own setpoint and no other.
"""
import contextlib
import os
import subprocess
import time

from pbustest.check import TIMEOUT, check
from pbustest.daemon import stop_process
from pbustest.mqtt import PREFIX, Bridge, Broker, Client, pbus

SUITE = "fleet"
COUNT = 20


@contextlib.contextmanager
def fleet(pbus_build, pbus_daemons, pbus_instances, pbus_tmp, count, rate_hz=20):
    """@count instruments (pbusd, psu-sim writing @rate_hz times a second,
    pbus-bridge) on one broker;
    yields (broker, instances). Every bridge must still run at the end and
    exit 0 on SIGTERM."""
    fleet_file = pbus_build.path("examples", "psu", "psu.fleet")
    check(os.path.isfile(fleet_file), f"{fleet_file} not built")
    pbus_build.require(pbus_build.psu_sim)
    broker = Broker(pbus_tmp).start()
    sims, bridges, instances = [], [], []
    try:
        for _ in range(count):
            inst = pbus_instances.new("fleet")
            pbus_daemons.start(inst.name, inst.state_dir, schema=pbus_build.psu_schema,
                               extra=["--socket-dir", inst.sock_dir])
            with open(os.path.join(pbus_tmp, f"psu-sim-{inst.name}.log"), "ab") as log:
                sims.append(subprocess.Popen([pbus_build.psu_sim, inst.name, str(rate_hz)], stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=log,
                                             env=dict(os.environ, PBUS_SOCKET_DIR=inst.sock_dir)))
            bridges.append(Bridge(pbus_build, inst, pbus_tmp, fleet_file, broker).start())
            instances.append(inst)
        yield broker, instances
        for b in bridges:
            check(b.proc.poll() is None, f"pbus-bridge of {b.instance.name} exited: {b.log()}")
            rc = b.stop()
            check(rc == 0, f"pbus-bridge of {b.instance.name}: exit status {rc} after SIGTERM: {b.log()}")
    finally:
        for b in bridges:
            b.stop()
        for s in sims:
            stop_process(s)
        broker.stop()


def test_twenty_instruments_one_subscriber(pbus_build, pbus_daemons, pbus_instances, pbus_tmp):
    with fleet(pbus_build, pbus_daemons, pbus_instances, pbus_tmp, COUNT) as (broker, instances):
        sub = Client(broker, "operator", topics=(f"{PREFIX}/#", "replies/#"))
        topic = lambda inst, t: f"{PREFIX}/{inst.name}/{t}"  # noqa: E731
        for inst in instances:
            _, birth, _, _ = sub.wait(lambda t, b, i=inst: t == topic(i, "$state") and b["state"] == "online",
                                      f"the birth of {inst.name}")
            check(birth["interface"] == "com.example.psu.PowerSupply", f"birth of {inst.name}: {birth}")
            # a live measurement (not retained: it came after this
            # subscription), written by this instrument's simulator
            _, v, retained, _ = sub.wait(lambda t, b, i=inst: t == topic(i, "temperature") and b["status"] == "ok",
                                         f"a temperature of {inst.name}")
            check(v["unit"] == "degC" and v["status"] == "ok" and not retained and isinstance(v["value"], float),
                  f"{inst.name}: {v} retained={retained}")
        # command each instrument its own setpoint; each answers on its own reply topic
        for n, inst in enumerate(instances):
            sub.command(inst.name, "voltage_setpoint", round(1 + n * 0.25, 2), f"fleet-{n}",
                        response=f"replies/{inst.name}")
        for n, inst in enumerate(instances):
            _, r, _, _ = sub.wait(lambda t, b, i=inst: t == f"replies/{i.name}", f"the reply of {inst.name}",
                                  timeout=TIMEOUT * 2)
            check(r["ok"] and r["id"] == f"fleet-{n}" and r["value"] == round(1 + n * 0.25, 2),
                  f"{inst.name}: {r}")
        for n, inst in enumerate(instances):
            got = pbus(pbus_build, inst, "get", "voltage_setpoint")
            check(float(got) == round(1 + n * 0.25, 2), f"{inst.name}: voltage_setpoint is {got}")
            # and the new setpoint is published (retained) by its own bridge
            sub.wait(lambda t, b, i=inst, n=n: t == topic(i, "voltage_setpoint") and b["value"] == round(1 + n * 0.25, 2),
                     f"the new setpoint of {inst.name}")
        sub.close()


BROKER_AWAY_S = 60


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def test_memory_flat_while_the_broker_is_away(pbus_build, pbus_daemons, pbus_instances, pbus_tmp):
    """The broker stopped for 60 s while the simulator writes 1000 times a
    second: the bridge keeps only the latest value of each parameter, so
    its memory stays flat; when the broker is back it births again with
    the values of now, not those from before the outage."""
    with fleet(pbus_build, pbus_daemons, pbus_instances, pbus_tmp, 1, rate_hz=1000) as (broker, instances):
        inst = instances[0]
        bridge_pid = int(subprocess.run(["pgrep", "-f", f"pbus-bridge --instance {inst.name} "], capture_output=True,
                                        text=True, timeout=TIMEOUT).stdout.split()[0])
        before = Client(broker, "operator", topics=(f"{PREFIX}/{inst.name}/$state",))
        _, birth, _, _ = before.wait(lambda t, b: b["state"] == "online", "the birth")
        before.close()
        broker.stop()
        time.sleep(5)                       # the first reconnect attempts, buffers settled
        start = rss_kib(bridge_pid)
        samples = []
        deadline = time.monotonic() + BROKER_AWAY_S - 5
        n = 0
        while time.monotonic() < deadline:
            n += 1
            pbus(pbus_build, inst, "set", f"current_setpoint={1 + (n % 100) * 0.01:.2f}")
            samples.append(rss_kib(bridge_pid))
            time.sleep(0.5)
        growth = max(samples) - start
        check(growth <= 512, f"pbus-bridge grew by {growth} KiB while the broker was away ({start} KiB at 5 s; "
                             f"samples {samples[::10]})")
        last = pbus(pbus_build, inst, "get", "current_setpoint")
        broker.start()
        sub = Client(broker, "operator", topics=(f"{PREFIX}/{inst.name}/#",))
        # (the broker's store may first hand out the value retained before
        # the outage; the bridge's fresh birth brings the value of now)
        sub.wait(lambda t, b: t == f"{PREFIX}/{inst.name}/$state" and b["state"] == "online"
                 and b["session"] > birth["session"], "a birth of a new session after the outage", timeout=TIMEOUT * 2)
        _, v, retained, _ = sub.wait(lambda t, b: t == f"{PREFIX}/{inst.name}/current_setpoint"
                                     and b["value"] == float(last), f"the setpoint {last} after the outage")
        check(retained and v["status"] == "ok", f"after the outage: {v} retained={retained}")
        sub.close()
