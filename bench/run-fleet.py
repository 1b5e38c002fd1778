#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 6, fleet (docs/benchmarks.md, "Fleet").

    bench/run-fleet.py [--quick] [--seconds S] [--rounds N] BUILD_DIR

Runs Debian's mosquitto on a loopback port (tests/pbustest/mqtt.py's
broker: users, ACL, persistence; set_tcp_nodelay, without which the
broker's Nagle delays the last message of a burst by a 40 ms delayed ACK:
p99 43 ms instead of 5), a pbusd serving
bench/schemas/param-table.pbs (200 doubles) with bench/web/web-load as its
writer and pbus-bridge publishing every parameter (plain topics, no
deadband, no rate limit), and bench/fleet/mqtt-sub, a libmosquitto
subscriber that takes each message's latency from the "ts" in its payload
(the table write's CLOCK_REALTIME stamp). Against it, the limit:
bench/fleet/mqtt-pub, a libmosquitto publisher loop of the same payloads
(same JSON, same 200 topics) on the same broker, read by the same
subscriber. Writes build/bench/fleet.json:

  throughput   messages per second reaching the subscriber, the table
               written as fast as web-load goes (10,000 passes of 200
               values a second asked; pbusd coalesces, the bridge publishes
               the latest) against mqtt-pub as fast as the socket takes:
               bridge_vs_mosquitto_pub (bridge / loop, higher is better);
  latency      at 10,000 changes per second (web-load: 200 values, 50
               passes a second), table write -> subscriber, p50/p99:
               bridge_latency_p50_ms, bridge_latency_p99_ms; mqtt-pub at
               10,000 messages a second beside it (the broker's own share);
  demo         pbus-bridge's CPU% with the demo PSU (psu-sim at its default
               1000 writes a second, the output on at 12 V,
               examples/psu/psu.fleet's deadbands and rates):
               bridge_cpu_percent_demo.

The contenders' runs are interleaved (--rounds, 3; 1 with --quick) and the
median round is reported; every run records how much of the machine other
processes took (bench/hoststat.py). Nothing is pinned: broker, bridge,
pbusd, writer and subscriber are five processes on this 2-CPU machine, so
every placement occurs within a run, for both contenders alike.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests"))
sys.path.insert(0, os.path.join(TOP, "gen"))
from pbusgen.emit_schema import schema_hash  # noqa: E402
from pbustest.build import Build  # noqa: E402
from pbustest.daemon import Instance, spawn_notified, stop_process  # noqa: E402
from pbustest.mqtt import PASSWORDS, PREFIX, Bridge, Broker  # noqa: E402

SCHEMA = os.path.join(HERE, "schemas", "param-table.pbs")
COUNT = 200
LATENCY_HZ = 50  # x 200 parameters: 10,000 changes a second


def log(msg):
    print(f"run-fleet: {msg}", flush=True)


def fleet_file(path):
    """Every p000..p199 published, not retained, no deadband, no rate limit."""
    with open(SCHEMA) as f:
        text = f.read()
    names = [line.split()[1] for line in text.splitlines() if line.startswith("param ")]
    with open(path, "w") as f:
        f.write(f"parambus-fleet 1\nschema {schema_hash(text):016x}\n")
        for i, name in enumerate(names):
            if name.startswith("p"):
                f.write(f"param {i} {name} {name} 1 0 0 0 0\n")


class Subscriber:
    """mqtt-sub on @topic for @seconds; started, it has subscribed."""

    def __init__(self, build, broker, topic, seconds):
        self.proc = subprocess.Popen([build.path("bench", "mqtt-sub"), "127.0.0.1", str(broker.port), "operator",
                                      PASSWORDS["operator"], topic, str(seconds)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "SUBSCRIBED":
            raise SystemExit(f"run-fleet: mqtt-sub did not subscribe: {line!r} {self.proc.stderr.read()}")

    def result(self, timeout):
        out, err = self.proc.communicate(timeout=timeout)
        if self.proc.returncode != 0:
            raise SystemExit(f"run-fleet: mqtt-sub failed: {err.strip()}")
        return json.loads(out)


def measured(run):
    """@run() with the machine's busy time around it."""
    h0, t0 = hoststat.cpu_jiffies(), time.monotonic()
    result = run()
    h1, wall = hoststat.cpu_jiffies(), time.monotonic() - t0
    result["machine_busy_percent"] = round(100 * (h1["busy"] - h0["busy"]) / hoststat.CLK_TCK / wall
                                           / os.cpu_count(), 1)
    return result


def loop_run(build, broker, rate, seconds):
    """mqtt-pub at @rate (0: flat out), read by mqtt-sub."""
    sub = Subscriber(build, broker, f"{PREFIX}/limit/#", seconds)
    pub = subprocess.Popen([build.path("bench", "mqtt-pub"), "127.0.0.1", str(broker.port), "bridge",
                            PASSWORDS["bridge"], f"{PREFIX}/limit", str(COUNT), str(rate), str(seconds + 2)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = sub.result(seconds + 60)
    out, err = pub.stdout.read(), pub.stderr.read()
    _, status, usage = os.wait4(pub.pid, 0)
    pub.returncode = 0
    if status != 0:
        raise SystemExit(f"run-fleet: mqtt-pub failed: {err.strip()}")
    published = int(out.split("=")[1])
    # the publisher's CPU per message: what the bridge's own cost per message is held against
    result["publisher_cpu_us_per_message"] = round((usage.ru_utime + usage.ru_stime) * 1e6 / published, 2)
    return result


def bridge_run(build, broker, instance, env, hz, seconds, bridge_pid):
    """web-load at @hz passes of 200 values, through pbusd and the bridge,
    read by mqtt-sub; with the bridge's CPU% over the run."""
    sub = Subscriber(build, broker, f"{PREFIX}/{instance.name}/+", seconds)
    load = subprocess.Popen([build.path("bench", "web-load"), instance.name, str(hz), str(seconds + 2)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    c0, t0 = hoststat.sched_ns(bridge_pid), time.monotonic()
    result = sub.result(seconds + 60)
    c1, t1 = hoststat.sched_ns(bridge_pid), time.monotonic()
    result["bridge_cpu_percent"] = round(100 * (c1 - c0) / 1e9 / (t1 - t0), 1)
    result["publisher_cpu_us_per_message"] = round((c1 - c0) / 1e3 / max(result["messages"], 1), 2)
    out, _ = load.communicate(timeout=60)
    result["load"] = out.strip()
    return result


def median_of(runs, key):
    return round(statistics.median(r[key] for r in runs), 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true", help="short runs (a smoke check; not the reported figures)")
    ap.add_argument("--seconds", type=float, help="length of each measured run (10; 3 with --quick)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds of the contenders (3; 1 with --quick)")
    args = ap.parse_args()
    build = Build(os.path.abspath(args.build))
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    rounds = args.rounds or (1 if args.quick else 3)
    for f in (build.pbusd, build.path("daemon", "pbus-bridge"), build.path("bench", "web-load"),
              build.path("bench", "mqtt-sub"), build.path("bench", "mqtt-pub"), build.psu_sim):
        if not os.path.exists(f):
            raise SystemExit(f"run-fleet: {f} is missing; build first (make build)")
    tmp = tempfile.mkdtemp(prefix="pbus-bench-fleet.")
    procs, bridges, broker = [], [], None
    try:
        broker = Broker(tmp, conf="set_tcp_nodelay true\n").start()  # no Nagle towards the subscriber
        fleet = os.path.join(tmp, "bench.fleet")
        fleet_file(fleet)
        instance = Instance(f"bench-fleet-{os.getpid()}", tmp, tmp)
        env = dict(os.environ, PBUS_SOCKET_DIR=tmp)
        d, fields = spawn_notified([build.pbusd, "--schema", SCHEMA, "--instance", instance.name, "--state-dir", tmp,
                                    "--socket-dir", tmp, "--log-level", "warning"], os.path.join(tmp, "pbusd.log"))
        procs.append(d)
        if fields is None:
            raise SystemExit(f"run-fleet: pbusd did not start; see {tmp}/pbusd.log")
        bridge = Bridge(build, instance, tmp, fleet, broker, extra=["--log-level", "warning"]).start()
        bridges.append(bridge)
        log(f"mosquitto on 127.0.0.1:{broker.port}, pbusd and pbus-bridge for {COUNT} doubles; "
            f"{rounds} round(s) of {seconds:.0f} s runs")

        flat_loop, flat_bridge, lat_loop, lat_bridge = [], [], [], []
        for r in range(rounds):
            flat_loop.append(measured(lambda: loop_run(build, broker, 0, seconds)))
            flat_bridge.append(measured(lambda: bridge_run(build, broker, instance, env, 10000, seconds,
                                                           bridge.proc.pid)))
            lat_loop.append(measured(lambda: loop_run(build, broker, COUNT * LATENCY_HZ, seconds)))
            lat_bridge.append(measured(lambda: bridge_run(build, broker, instance, env, LATENCY_HZ, seconds,
                                                          bridge.proc.pid)))
            log(f"round {r + 1}: flat out: loop {flat_loop[-1]['per_s']:.0f}/s, bridge "
                f"{flat_bridge[-1]['per_s']:.0f}/s; at 10,000/s: loop p99 {lat_loop[-1]['p99_ms']} ms, bridge "
                f"p50 {lat_bridge[-1]['p50_ms']} ms p99 {lat_bridge[-1]['p99_ms']} ms "
                f"({lat_bridge[-1]['per_s']:.0f}/s, bridge {lat_bridge[-1]['bridge_cpu_percent']} % CPU)")

        # the demo: psu-sim at its default rate, psu.fleet
        log(f"demo: psu-sim (1000 writes/s) and pbus-bridge with psu.fleet, {seconds:.0f} s")
        demo = Instance(f"bench-fleet-demo-{os.getpid()}", tmp, tmp)
        dd, fields = spawn_notified([build.pbusd, "--schema", build.psu_schema, "--instance", demo.name, "--state-dir",
                                     tmp, "--socket-dir", tmp, "--log-level", "warning"],
                                    os.path.join(tmp, "pbusd-demo.log"))
        procs.append(dd)
        with open(os.path.join(tmp, "psu-sim.log"), "ab") as out:
            sim = subprocess.Popen([build.psu_sim, demo.name], env=env, stdout=out, stderr=out)
        procs.append(sim)
        demo_bridge = Bridge(build, demo, tmp, build.path("examples", "psu", "psu.fleet"), broker,
                             extra=["--log-level", "warning"]).start()
        bridges.append(demo_bridge)
        # the output on at 12 V into the simulated load, as `make demo` runs it
        subprocess.run([build.pbus, "-i", demo.name, "set", "voltage_setpoint=12", "current_setpoint=1",
                        "output_enable=true"], env=env, check=True, capture_output=True, timeout=30)
        time.sleep(1)
        c0, t0 = hoststat.sched_ns(demo_bridge.proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = hoststat.sched_ns(demo_bridge.proc.pid), time.monotonic()
        demo_cpu = round(100 * (c1 - c0) / 1e9 / (t1 - t0), 2)
        log(f"  pbus-bridge {demo_cpu} % CPU")

        loop_per_s, bridge_per_s = median_of(flat_loop, "per_s"), median_of(flat_bridge, "per_s")
        result = {
            "machine": hoststat.machine_info(TOP, build.dir, "bridge/main.c", "pbus-bridge"),
            "quick": args.quick,
            "seconds": seconds,
            "rounds": rounds,
            "parameters": COUNT,
            "bridge_vs_mosquitto_pub": round(bridge_per_s / loop_per_s, 3),
            "bridge_per_s": bridge_per_s,
            "mosquitto_pub_per_s": loop_per_s,
            "bridge_latency_p50_ms": median_of(lat_bridge, "p50_ms"),
            "bridge_latency_p99_ms": median_of(lat_bridge, "p99_ms"),
            "bridge_latency_changes_per_s": COUNT * LATENCY_HZ,
            "bridge_latency_carried_per_s": median_of(lat_bridge, "per_s"),
            "bridge_cpu_percent_at_10000_per_s": median_of(lat_bridge, "bridge_cpu_percent"),
            "mosquitto_pub_latency_p50_ms": median_of(lat_loop, "p50_ms"),
            "mosquitto_pub_latency_p99_ms": median_of(lat_loop, "p99_ms"),
            "bridge_cpu_percent_demo": demo_cpu,
            "bridge_cpu_us_per_message": median_of(flat_bridge, "publisher_cpu_us_per_message"),
            "mosquitto_pub_cpu_us_per_message": median_of(flat_loop, "publisher_cpu_us_per_message"),
            "runs": {"flat_out_loop": flat_loop, "flat_out_bridge": flat_bridge,
                     "latency_loop": lat_loop, "latency_bridge": lat_bridge},
        }
        out_dir = os.path.join(os.path.dirname(build.dir), "bench")
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "fleet.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        log(f"wrote {path}")
        for key in ("bridge_vs_mosquitto_pub", "bridge_latency_p50_ms", "bridge_latency_p99_ms",
                    "bridge_cpu_percent_demo"):
            print(f"  {key}: {result[key]}")
    finally:
        for b in bridges:
            b.stop()
        for p in reversed(procs):
            stop_process(p, signal.SIGTERM)
        if broker:
            broker.stop()


if __name__ == "__main__":
    main()
