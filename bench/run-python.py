#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 7, Python (docs/benchmarks.md, "Python").

    bench/run-python.py [--quick] [--rounds N] BUILD_DIR

Runs a fresh pbusd serving bench/schemas/param-table.pbs and writes
build/bench/python.json:

  table read   parambus.Table.read() of one double (p000: the value with its
               status, timestamp and version, by the read protocol) against
               the floor, a plain read of the same 8 bytes from an mmap of
               the same segment with struct.unpack_from (no version check,
               no Value): python_table_read_ns, python_mmap_floor_ns,
               python_read_vs_mmap_read (= python_vs_mmap: floor ÷ read);
  socket get   one single-parameter get through pbusd, from
               parambus.Client.get() and from the C client
               (bench/socket-server get-rtt), both pinned the same way:
               pbusd and the client on one CPU ("same CPU") and on two
               ("cross CPU"): python_get_us, c_get_us,
               python_socket_get_vs_c (= python_get_vs_c: C ÷ Python), per
               placement, the headline figures the same-CPU ones.

The contenders' rounds are interleaved (ABAB...), each figure is the median
of its rounds, and a round during which other processes took more than a
quarter of a CPU is run again (bench/hoststat.py). Ratios are written so
that higher is better for the Python package. Run with the venv's Python
(make bench does); the package is taken from this checkout's python/.
"""
import argparse
import json
import mmap
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "python"))
sys.path.insert(0, os.path.join(TOP, "tests"))
import parambus  # noqa: E402
from pbustest.daemon import spawn_notified  # noqa: E402

SCHEMA = os.path.join(HERE, "schemas", "param-table.pbs")


def log(msg):
    print(f"run-python: {msg}", file=sys.stderr, flush=True)


def pin(cpu):
    os.sched_setaffinity(0, {cpu})


def read_round(table, n):
    read = table.read
    t0 = time.perf_counter_ns()
    for _ in range(n):
        read("p000")
    return (time.perf_counter_ns() - t0) / n


def floor_round(mm, offset, n):
    unpack = struct.unpack_from
    t0 = time.perf_counter_ns()
    for _ in range(n):
        unpack("<d", mm, offset)
    return (time.perf_counter_ns() - t0) / n


def python_get_round(client, n):
    get = client.get
    t0 = time.perf_counter_ns()
    for _ in range(n):
        get("p000")
    return (time.perf_counter_ns() - t0) / n


def c_get_round(socket_server, instance, n, cpu, env):
    out = subprocess.run(["taskset", "-c", str(cpu), socket_server, "get-rtt", instance, str(n)], env=env,
                         capture_output=True, text=True, check=True, timeout=300).stdout
    return json.loads(out)["ns_per_op"]


def undisturbed(fn, *args, limit=0.25):
    """fn(*args), run again (up to 3 times) while others took > @limit CPUs."""
    for attempt in range(3):
        before, t0 = hoststat.cpu_jiffies(), time.monotonic()
        value = fn(*args)
        after = hoststat.cpu_jiffies()
        wall = max(1e-6, time.monotonic() - t0)
        busy = (after["busy"] - before["busy"]) / hoststat.CLK_TCK / wall
        # this process (and pbusd, for the gets) account for up to ~1 CPU
        if busy <= 1.0 + limit or attempt == 2:
            return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true", help="a few short rounds (smoke check)")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    rounds = args.rounds or (3 if args.quick else 11)
    reads, gets = (20000, 500) if args.quick else (200000, 5000)
    socket_server = os.path.join(build, "bench", "socket-server")
    pbusd = os.path.join(build, "daemon", "pbusd")
    out_dir = os.path.join(os.path.dirname(build), "bench")
    os.makedirs(out_dir, exist_ok=True)
    cpus = sorted(os.sched_getaffinity(0))
    same, other = cpus[0], cpus[1] if len(cpus) > 1 else cpus[0]

    tmp = tempfile.mkdtemp(prefix="pbus-bench-python-")
    instance = f"bench-python-{os.getpid()}"
    sock = os.path.join(tmp, "sock")
    os.mkdir(sock, 0o755)
    env = dict(os.environ, PBUS_SOCKET_DIR=sock)
    proc, ready = spawn_notified(["taskset", "-c", str(same), pbusd, "--schema", SCHEMA, "--instance", instance,
                                  "--state-dir", tmp, "--socket-dir", sock], os.path.join(tmp, "pbusd.log"))
    if ready is None:
        sys.exit(f"run-python: pbusd did not start: see {tmp}/pbusd.log")
    result = {}
    try:
        table = parambus.Table(instance)
        p = table.param("p000")
        with open(table.path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, mmap.MAP_SHARED, mmap.PROT_READ)
        seq = struct.unpack_from("<Q", mm, p.slot_offset)[0]
        offset = p.slot_offset + 16 + (seq & (p.copy_count - 1)) * p.copy_stride + 16
        if struct.unpack_from("<d", mm, offset)[0] != table["p000"]:
            sys.exit("run-python: the floor reads another value than the table")
        pin(same)
        read_ns, floor_ns = [], []
        for _ in range(rounds):
            read_ns.append(undisturbed(read_round, table, reads))
            floor_ns.append(undisturbed(floor_round, mm, offset, reads))
        r, fl = statistics.median(read_ns), statistics.median(floor_ns)
        log(f"table read {r:.0f} ns, mmap floor {fl:.0f} ns")
        result.update({"python_table_read_ns": round(r, 1), "python_mmap_floor_ns": round(fl, 1),
                       "python_read_vs_mmap_read": round(fl / r, 3), "python_vs_mmap": round(fl / r, 3),
                       "python_table_read_rounds_ns": [round(x, 1) for x in read_ns],
                       "python_mmap_floor_rounds_ns": [round(x, 1) for x in floor_ns]})

        placements = {}
        client = parambus.Client(instance, socket_dir=sock)
        for name, cpu in (("same_cpu", same), ("cross_cpu", other)):
            pin(cpu)
            python_get_round(client, gets // 10)  # warm up
            py, c = [], []
            for _ in range(rounds):
                py.append(undisturbed(python_get_round, client, gets))
                c.append(undisturbed(c_get_round, socket_server, instance, gets, cpu, env))
            pu, cu = statistics.median(py) / 1000, statistics.median(c) / 1000
            log(f"{name}: get from Python {pu:.1f} µs, from C {cu:.1f} µs")
            placements[name] = {"python_get_us": round(pu, 2), "c_get_us": round(cu, 2),
                                "python_socket_get_vs_c": round(cu / pu, 3),
                                "python_get_rounds_us": [round(x / 1000, 2) for x in py],
                                "c_get_rounds_us": [round(x / 1000, 2) for x in c]}
        client.close()
        head = placements["same_cpu"]
        result.update({"python_get_us": head["python_get_us"], "c_get_us": head["c_get_us"],
                       "python_socket_get_vs_c": head["python_socket_get_vs_c"],
                       "python_get_vs_c": head["python_socket_get_vs_c"], "placements": placements,
                       "rounds": rounds, "reads_per_round": reads, "gets_per_round": gets,
                       "quick": args.quick, "python": sys.version.split()[0],
                       "machine": hoststat.machine_info(TOP)})
        mm.close()
        table.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    path = os.path.join(out_dir, "python.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
