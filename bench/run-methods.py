#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 3, method calls (docs/benchmarks.md).

    bench/run-methods.py BUILD_DIR [--quick] [--runs N] [--calls N]
                         [--disturbed F] [--attempts N] [--out FILE]

A client calls a method synchronously, waiting for each reply before the
next call, --calls times (100,000; after a tenth as many untimed), and
reports the time per call; --runs runs (12) of every contender, method and
pinning, interleaved: round i runs every contender once for each pinning
and method before round i + 1 runs any, the contenders' order rotated by one
each round. Methods: `empty` (no arguments) and `copy` (Int32, four Double,
UInt32 in; the server returns them: 40 bytes each way). Pinnings: "same"
(client and server on the first CPU this runner may use, CPU 0 here) and
"cross" (client on the first, server on the second).

The contenders are the table CONTENDERS below, one program each in
BUILD_DIR/bench, all with one command line (bench/methods-common.h):
`PROGRAM --role server --method M --address ADDR` prints {"ready": true} and
serves until SIGTERM; `PROGRAM --role client --method M --calls N --address
ADDR` prints one JSON line with ns_per_call. A contender of kind "inprocess"
is run as `PROGRAM --role inprocess --method M --calls N`, pinned to the
first CPU, once per round and method (there is nothing to place across
CPUs; it is listed under "same"). A contender with a broadcast role is also
run once per round as `PROGRAM --role broadcast --address ADDR
--subscribers 64 --broadcasts B` (B = calls / 100), unpinned, and prints
p99_us. A fresh
server is started for every run.

  raw          methods-raw: a Unix-domain stream socket ping-pong of exactly
               parambus's frame sizes (empty: 16 bytes out, 12 back; copy:
               56 and 52), blocking read and write: the limit;
  sd-bus       methods-sdbus: libsystemd's sd-bus client and server on a
               private dbus-daemon that this runner starts (its own
               configuration and socket in a temporary directory) and stops
               at the end; the daemon is pinned with the server (same: the
               first CPU; cross: the second), so that a call crosses CPUs
               twice, as the raw pair's does (request and reply), and the
               daemon's hop to the server does not;
  parambus-socket, parambus-inprocess
               methods-parambus, when it is built.

A contender whose program is not built (or, for sd-bus, without a
dbus-daemon) is reported as unavailable, not an error; the keys that need it
are left out with a note.

Around each run the runner reads /proc/stat for the CPUs the run uses
(bench/hoststat.py): the busy time of every process but the run's own
(client, server, dbus-daemon) and the time the hypervisor stole. A run in
which the two together took more than --disturbed (0.05) of those CPUs is
repeated, at most --attempts (3) times, and the least disturbed attempt is
kept; the JSON has every run's figures, disturbance and attempts. (The
threshold is looser than scenario 2's 2 %: a same-CPU raw run lasts about a
second, a hundred ticks of /proc/stat, so a tick or two of rounding is
already 1-2 %.)

Writes BUILD_DIR/../bench/methods.json (or --out): per contender, pinning
and method the median, minimum and maximum time per call and the median's
calls per second; the keys calls_vs_raw_uds and calls_vs_sdbus (per pinning
and method: the other's time per call / parambus's, higher is better for
parambus), inprocess_call_ns (empty method) and broadcast_64_p99_us when
parambus's contenders are present; sdbus_vs_raw_uds (raw / sd-bus); the
machine (bench/hoststat.py). Prints a table.

--quick: 2 runs of 10,000 calls, one attempt each (a smoke check; its
figures are not the reported ones). Exit status 0, or 1 if a contender
failed; speed figures never fail the run. Python 3 standard library only.
"""
import argparse
import json
import os
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
METHODS = ("empty", "copy")
PLACEMENTS = ("same", "cross")
BROADCAST_SUBSCRIBERS = 64


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Failure(Exception):
    """A contender's program failed: the message names it and says why."""


class DbusDaemon:
    """A private dbus-daemon: its own configuration and socket in @tmp, no
    activation, everyone allowed everything; stopped by stop()."""

    CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

    @staticmethod
    def unavailable():
        return None if shutil.which("dbus-daemon") else "no dbus-daemon in PATH (Debian: dbus-daemon)"

    def __init__(self, tmp):
        conf = os.path.join(tmp, "bus.conf")
        with open(conf, "w") as f:
            f.write(self.CONFIG.format(socket=os.path.join(tmp, "bus.sock")))
        self.log_path = os.path.join(tmp, "dbus-daemon.log")
        self.proc = subprocess.Popen(
            ["dbus-daemon", "--config-file=" + conf, "--nofork", "--nosyslog", "--print-address=1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(self.log_path, "wb"),
            text=True)
        line = read_line(self.proc, 10)
        if not line.startswith("unix:"):
            self.stop()
            raise Failure(f"dbus-daemon did not start: {tail(self.log_path)}")
        self.address = line.strip()

    def pin(self, cpus):
        for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
            os.sched_setaffinity(int(tid), cpus)

    def cpu_ns(self):
        return hoststat.sched_ns(self.proc.pid, gone_ok=True)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Contender:
    """One row of the table of contenders: @name (the key in the results),
    @program (in BUILD_DIR/bench), @kind "pair" (a server and a client
    process) or "inprocess", @fixture a class of what it needs running
    (started once, pinned with the server, stopped at the end: its
    unavailable() says why it cannot run, its address is the contender's
    ADDR), @broadcast whether the program has the broadcast role."""

    def __init__(self, name, program, kind="pair", fixture=None, broadcast=False, about=""):
        self.name, self.program, self.kind = name, program, kind
        self.fixture, self.broadcast, self.about = fixture, broadcast, about
        self.exe = None
        self.running = None  # the started fixture

    def address(self, tmp, method):
        if self.running:
            return self.running.address
        return os.path.join(tmp, f"{self.name}-{method}.sock")


CONTENDERS = [
    Contender("raw", "methods-raw",
              about="Unix-domain stream socket ping-pong of parambus's frame sizes (the limit)"),
    Contender("sd-bus", "methods-sdbus", fixture=DbusDaemon,
              about="libsystemd sd-bus client and server through a private dbus-daemon"),
    Contender("parambus-socket", "methods-parambus", broadcast=True,
              about="parambus generated proxy and stub over the socket transport"),
    Contender("parambus-inprocess", "methods-parambus", kind="inprocess",
              about="parambus generated proxy and stub, in-process backend"),
]


def read_line(proc, timeout):
    """The first line @proc writes on its stdout within @timeout s, or ""."""
    if not select.select([proc.stdout], [], [], timeout)[0]:
        return ""
    return proc.stdout.readline()


def tail(path):
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
        return lines[-1] if lines else "(no message)"
    except OSError:
        return "(no log)"


def children_cpu_s():
    """CPU seconds of our children that have been waited for."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def pinned(cpu):
    return (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None


def last_json(out, what):
    for line in reversed(out.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise Failure(f"{what} printed no JSON line")


def run_once(c, method, client_cpu, server_cpu, calls, tmp):
    """One run of contender @c: its client's JSON line and the disturbance
    {"others", "steal"} as fractions of the CPUs used."""
    cpus = {client_cpu} if c.kind == "inprocess" else {client_cpu, server_cpu}
    if c.running:
        c.running.pin({server_cpu})
    address = c.address(tmp, method)
    h0, k0 = hoststat.cpu_jiffies(cpus), children_cpu_s()
    f0 = c.running.cpu_ns() if c.running else 0
    server = None
    server_log = os.path.join(tmp, f"{c.name}-server.log")
    try:
        if c.kind == "pair":
            server = subprocess.Popen([c.exe, "--role", "server", "--method", method,
                                       "--address", address],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=open(server_log, "wb"), text=True,
                                      preexec_fn=pinned(server_cpu))
            if '"ready"' not in read_line(server, 10):
                raise Failure(f"{c.name} server ({method}) did not become ready: {tail(server_log)}")
            args = ["--role", "client", "--method", method, "--calls", str(calls), "--address", address]
        else:
            args = ["--role", "inprocess", "--method", method, "--calls", str(calls)]
        p = subprocess.run([c.exe] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=60 + calls * 2e-3, preexec_fn=pinned(client_cpu))
        if p.returncode != 0:
            why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit status {p.returncode}"
            raise Failure(f"{c.name} {args[1]} ({method}): {why}")
        out = last_json(p.stdout, f"{c.name} {args[1]} ({method})")
        if server and server.poll() is not None:
            raise Failure(f"{c.name} server ({method}) died: {tail(server_log)}")
    except subprocess.TimeoutExpired:
        raise Failure(f"{c.name} client ({method}) took longer than {60 + calls * 2e-3:.0f} s")
    finally:
        if server:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            server.stdout.close()
    h1, ours = hoststat.cpu_jiffies(cpus), children_cpu_s() - k0
    if c.running:
        ours += (c.running.cpu_ns() - f0) / 1e9
    capacity = max(1, h1["total"] - h0["total"]) / hoststat.CLK_TCK
    others = (h1["busy"] - h0["busy"]) / hoststat.CLK_TCK - ours
    return out, {"others": round(max(0.0, others) / capacity, 4),
                 "steal": round((h1["steal"] - h0["steal"]) / hoststat.CLK_TCK / capacity, 4)}


def measure(c, method, client_cpu, server_cpu, calls, tmp, args):
    """Run @c until a run is undisturbed (at most --attempts times): the
    least disturbed run's ns per call and disturbance (with "attempts")."""
    best = None
    for attempt in range(1, args.attempts + 1):
        out, disturbance = run_once(c, method, client_cpu, server_cpu, calls, tmp)
        level = disturbance["others"] + disturbance["steal"]
        if best is None or level < best[0]:
            best = (level, out["ns_per_call"], disturbance)
        if level <= args.disturbed:
            break
    _, ns, disturbance = best
    return ns, dict(disturbance, attempts=attempt)


def broadcast_once(c, tmp, broadcasts):
    address = c.address(tmp, "broadcast")
    p = subprocess.run([c.exe, "--role", "broadcast", "--address", address, "--subscribers",
                        str(BROADCAST_SUBSCRIBERS), "--broadcasts", str(broadcasts)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit status {p.returncode}"
        raise Failure(f"{c.name} broadcast: {why}")
    return last_json(p.stdout, f"{c.name} broadcast")


def summarise(runs):
    ns = [r["ns_per_call"] for r in runs]
    med = statistics.median(ns)
    return {"median_ns": round(med, 1), "min_ns": round(min(ns), 1), "max_ns": round(max(ns), 1),
            "calls_per_s": round(1e9 / med), "runs": len(ns)}


def ratios(results, numerator, denominator):
    """{pinning: {method: numerator's median / denominator's}} where both
    have results."""
    out = {}
    for placement in PLACEMENTS:
        for method in METHODS:
            try:
                a = results[numerator][placement][method]["median_ns"]
                b = results[denominator][placement][method]["median_ns"]
            except KeyError:
                continue
            out.setdefault(placement, {})[method] = round(a / b, 3)
    return out


def keys(summary, broadcast, unavailable):
    """The keys of BENCHMARKS.md from the contenders' results by name, and
    notes on those that cannot be computed."""
    result, notes = {}, []

    def why(name):
        return unavailable.get(name, "not in the table of contenders")

    ps, pi = "parambus-socket", "parambus-inprocess"
    for key, other in (("calls_vs_raw_uds", "raw"), ("calls_vs_sdbus", "sd-bus")):
        if ps not in summary:
            notes.append(f"{key}: absent, {ps} unavailable ({why(ps)})")
        elif other not in summary:
            notes.append(f"{key}: absent, {other} unavailable ({why(other)})")
        else:
            result[key] = ratios(summary, other, ps)
    if pi in summary:
        result["inprocess_call_ns"] = summary[pi]["same"]["empty"]["median_ns"]
    else:
        notes.append(f"inprocess_call_ns: absent, {pi} unavailable ({why(pi)})")
    if ps in broadcast:
        result["broadcast_64_p99_us"] = round(statistics.median(r["p99_us"] for r in broadcast[ps]), 2)
    else:
        notes.append(f"broadcast_64_p99_us: absent, no broadcast run of {ps} ({why(ps)})")
    if "raw" in summary and "sd-bus" in summary:
        result["sdbus_vs_raw_uds"] = ratios(summary, "raw", "sd-bus")
    return result, notes


def table(summary, contenders, args):
    lines = [f"Scenario 3, method calls: {args.runs} runs of {args.calls} calls each, "
             "time per call (median, min, max) and calls/s at the median",
             "",
             f"{'contender':<20} {'method':<6} {'pinning':<7} {'median ns':>11} {'min ns':>11} "
             f"{'max ns':>11} {'calls/s':>10}"]
    for c in contenders:
        for placement in PLACEMENTS:
            for method in METHODS:
                s = summary.get(c.name, {}).get(placement, {}).get(method)
                if s:
                    lines.append(f"{c.name:<20} {method:<6} {placement:<7} {s['median_ns']:>11,.0f} "
                                 f"{s['min_ns']:>11,.0f} {s['max_ns']:>11,.0f} {s['calls_per_s']:>10,}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="the build tree (BUILD_DIR/bench holds the programs)")
    ap.add_argument("--quick", action="store_true", help="2 runs of 10,000 calls, one attempt each")
    ap.add_argument("--runs", type=int, help="runs of every contender, method and pinning (default 12)")
    ap.add_argument("--calls", type=int, help="timed calls per run (default 100,000)")
    ap.add_argument("--disturbed", type=float, default=0.05,
                    help="repeat a run in which other processes and the hypervisor took more than "
                         "this fraction of its CPUs (default 0.05)")
    ap.add_argument("--attempts", type=int,
                    help="at most this many tries per run (default 3; 1 with --quick)")
    ap.add_argument("--out", help="JSON output (default BUILD_DIR/../bench/methods.json)")
    args = ap.parse_args()
    args.runs = args.runs or (2 if args.quick else 12)
    args.calls = args.calls or (10000 if args.quick else 100000)
    args.attempts = args.attempts or (1 if args.quick else 3)
    if args.runs < 1 or args.calls < 1 or args.attempts < 1:
        raise SystemExit("run-methods: --runs, --calls and --attempts must be at least 1")
    build = os.path.abspath(args.build)
    out_path = args.out or os.path.join(os.path.dirname(build), "bench", "methods.json")

    cpus = sorted(os.sched_getaffinity(0))
    placements = {"same": (cpus[0], cpus[0])}
    if len(cpus) > 1:
        placements["cross"] = (cpus[0], cpus[1])
    else:
        log("run-methods: one CPU only: no cross-CPU pinning")

    unavailable, present = {}, []
    for c in CONTENDERS:
        c.exe = os.path.join(build, "bench", c.program)
        if not os.access(c.exe, os.X_OK):
            unavailable[c.name] = f"{os.path.relpath(c.exe)} is not built"
        elif c.fixture and c.fixture.unavailable():
            unavailable[c.name] = c.fixture.unavailable()
        else:
            present.append(c)
    for name, why in unavailable.items():
        log(f"run-methods: {name} unavailable: {why}")
    if not present:
        raise SystemExit("run-methods: no contender is available")

    tmp = tempfile.mkdtemp(prefix="pbus-bench-methods-")
    runs = {c.name: {p: {m: [] for m in METHODS} for p in placements} for c in present}
    broadcast = {}
    status, failure = 0, None
    t0 = time.monotonic()
    try:
        for c in present:
            if c.fixture:
                c.running = c.fixture(tmp)
        for r in range(args.runs):
            order = present[r % len(present):] + present[:r % len(present)]
            for placement, (client_cpu, server_cpu) in placements.items():
                for method in METHODS:
                    for c in order:
                        if c.kind == "inprocess" and placement != "same":
                            continue
                        ns, disturbance = measure(c, method, client_cpu, server_cpu, args.calls,
                                                  tmp, args)
                        runs[c.name][placement][method].append(dict(ns_per_call=ns, **disturbance))
            for c in order:
                if c.broadcast:
                    broadcast.setdefault(c.name, []).append(
                        broadcast_once(c, tmp, max(1, args.calls // 100)))
            log(f"round {r + 1}/{args.runs} ({time.monotonic() - t0:.0f} s): " + "; ".join(
                f"{c.name} " + ", ".join(f"{p} {m} {runs[c.name][p][m][-1]['ns_per_call'] / 1000:.1f}"
                                         for p in placements for m in METHODS if runs[c.name][p][m])
                for c in present) + " µs")
    except Failure as e:
        status, failure = 1, str(e)
        log(f"run-methods: FAILED: {e}")
    finally:
        for c in present:
            if c.running:
                c.running.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    summary = {name: {p: {m: summarise(v) for m, v in by_method.items() if v}
                      for p, by_method in by_placement.items() if any(by_method.values())}
               for name, by_placement in runs.items()}
    if failure:
        key_values, notes = {}, ["no key computed: a contender failed (see failure)"]
    else:
        key_values, notes = keys(summary, broadcast, unavailable)
    result = {
        "machine": hoststat.machine_info(TOP, build, "bench/methods-raw.c", "methods-raw"),
        "config": {"runs": args.runs, "calls": args.calls, "warmup_calls": args.calls // 10,
                   "quick": args.quick, "disturbed": args.disturbed, "attempts": args.attempts,
                   "placements": {p: {"client_cpu": cc, "server_cpu": sc}
                                  for p, (cc, sc) in placements.items()},
                   "dbus_daemon_pinned_with": "server"},
        "contenders": {c.name: {"program": c.program, "kind": c.kind, "about": c.about,
                                "available": c.name not in unavailable,
                                **({"unavailable": unavailable[c.name]} if c.name in unavailable else {})}
                       for c in CONTENDERS},
        "ns_per_call": summary,
        **key_values,
        "runs": runs,
        "broadcast_runs": broadcast,
        "notes": notes,
        "elapsed_s": round(time.monotonic() - t0, 1),
    }
    if failure:
        result["failure"] = failure
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)

    print(table(summary, CONTENDERS, args))
    print()
    for k in ("calls_vs_raw_uds", "calls_vs_sdbus", "inprocess_call_ns", "broadcast_64_p99_us",
              "sdbus_vs_raw_uds"):
        if k in key_values:
            print(f"{k}: {json.dumps(key_values[k])}")
    for note in notes:
        print(f"note: {note}")
    disturbed = [(name, p, m, i + 1) for name, by_p in runs.items() for p, by_m in by_p.items()
                 for m, rs in by_m.items() for i, r in enumerate(rs)
                 if r["others"] + r["steal"] > args.disturbed]
    if disturbed:
        print(f"note: {len(disturbed)} run(s) stayed disturbed after {args.attempts} attempt(s) "
              f"(least disturbed kept): " + ", ".join(f"{n} {p} {m} #{i}" for n, p, m, i in disturbed))
    print(f"\nwritten: {os.path.relpath(out_path)} ({result['elapsed_s']:.0f} s)")
    if failure:
        log(f"\nFAILED: {failure}")
    return status


if __name__ == "__main__":
    sys.exit(main())
