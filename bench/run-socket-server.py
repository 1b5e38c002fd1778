#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 2, the parameter server (docs/benchmarks.md).

    bench/run-socket-server.py [--quick] [--load-only] [--load-seconds S]
                               [--hz-rounds N] [--disturbed F] [--attempts N] BUILD_DIR

Runs bench/socket-server (BUILD_DIR/bench/socket-server) against a fresh pbusd
serving bench/schemas/param-table.pbs, side by side with a bare Unix-socket
ping-pong, and writes build/bench/socket-server.json:

  round trip   a single GET through pbusd against the raw ping-pong of the
               same sizes (20-byte request, 52-byte reply), interleaved,
               5 rounds (1 with --quick), both pinned to one CPU ("same")
               and to two ("cross"); roundtrip_vs_raw_uds is the same-CPU
               median (raw time / pbusd time), the cross figure beside it;
  2 + 2        Displayer 1 and 2 (all 201 parameters per iteration) and
               Randomizer 200 and 2, 5 s, unbatched (one parameter per
               request, as the study) and batched (one request per
               iteration), and the Displayers subscribed; parameter
               operations per second of all four; batched_vs_unbatched;
  60 Hz        the four at 60 iterations per second for 10 s, pbusd's CPU%
               (all its threads, from schedstat): each client one request
               per iteration (server_cpu_percent_60hz), 5 rounds
               (--hz-rounds; 1 with --quick) interleaved with the same I/O
               against a raw epoll server that only reads each request and
               writes a reply of the same size (raw_server_cpu_percent_60hz:
               the limit of this path; server_cpu_60hz_vs_raw = raw /
               pbusd), medians; a run in which other processes and the
               hypervisor took more than --disturbed of the machine
               (/proc/stat) is repeated, at most --attempts times, and the
               least disturbed attempt kept; and beside them the Displayers
               subscribed (at most 60 notifications a second) and
               everything unbatched, as the study did;
  load         64 clients, each subscribing to all parameters and writing
               its own 100 times a second for 60 s: errors, views that
               differ from the table at the end, pbusd's RSS growth after
               the first 5 s (load_clients, load_errors, load_rss_growth_kib).

--load-only runs only the load run (make test does, as a test: exit status
1 on an error, a wrong view or RSS growth above 1 MiB). Speed figures never
fail the run. Python 3 standard library only.
"""
import argparse
import json
import os
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SCHEMA = os.path.join(HERE, "schemas", "param-table.pbs")
REQ, REP = 20, 52


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Pbusd:
    def __init__(self, build, tmp):
        self.instance = f"bench-sock-{os.getpid()}"
        self.tmp = tmp
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [os.path.join(build, "daemon", "pbusd"), "--schema", SCHEMA, "--instance", self.instance,
             "--state-dir", os.path.join(tmp, "state"), "--socket-dir", tmp, "--notify-fd", str(w),
             "--max-clients", "1024"],
            pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "pbusd.log"), "wb"))
        os.close(w)
        ready = select.select([r], [], [], 10)[0] and os.read(r, 16)
        os.close(r)
        if ready != b"READY=1\n":
            raise SystemExit("run-socket-server: pbusd did not become ready")

    def pin(self, cpus):
        for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
            os.sched_setaffinity(int(tid), cpus)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run(exe, args, cpus=None, env=None, timeout=300):
    p = subprocess.run([exe] + args, capture_output=True, text=True, env=env, timeout=timeout,
                       preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        raise SystemExit(f"run-socket-server: {' '.join(args[:2])} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1]), p.returncode


def roundtrips(exe, d, env, tmp, rounds, n):
    cpus = sorted(os.sched_getaffinity(0))
    same, cross = [cpus[-1]], ([cpus[0]], [cpus[-1]])
    results = {"same": {"raw": [], "pbusd": []}, "cross": {"raw": [], "pbusd": []}}
    raw_path = os.path.join(tmp, "raw.sock")
    for r in range(rounds):
        for placement in ("same", "cross"):
            server_cpu, client_cpu = (same, same) if placement == "same" else cross
            order = ["raw", "pbusd"] if r % 2 == 0 else ["pbusd", "raw"]
            for who in order:
                if who == "raw":
                    srv = subprocess.Popen([exe, "raw-server", raw_path, str(REQ), str(REP)],
                                           stdout=subprocess.PIPE, text=True,
                                           preexec_fn=lambda c=server_cpu: os.sched_setaffinity(0, c))
                    srv.stdout.readline()
                    out, _ = run(exe, ["raw-client", raw_path, str(REQ), str(REP), str(n)], client_cpu, env)
                    srv.kill()
                    srv.wait()
                else:
                    d.pin(server_cpu)
                    out, _ = run(exe, ["get-rtt", d.instance, str(n)], client_cpu, env)
                results[placement][who].append(out["ns_per_op"])
        log(f"round trip, round {r + 1}: same CPU raw {results['same']['raw'][-1]:.0f} ns, "
            f"pbusd {results['same']['pbusd'][-1]:.0f} ns; cross raw {results['cross']['raw'][-1]:.0f} ns, "
            f"pbusd {results['cross']['pbusd'][-1]:.0f} ns")
    d.pin(sorted(os.sched_getaffinity(0)))
    return results


def clients_at_once(exe, argvs, server_pid, seconds, env, what):
    """Run the clients @argvs at once; their JSON (each one's last line), the
    server's CPU% meanwhile, and how much of the machine others took
    meanwhile: {"others": busy time of every other process, "steal": time
    the hypervisor gave away}, as fractions of the machine (bench/hoststat.py)."""
    t0, c0 = time.monotonic(), hoststat.sched_ns(server_pid)
    h0, k0 = hoststat.cpu_jiffies(), children_cpu_s()
    procs = [subprocess.Popen([exe] + a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for a in argvs]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=seconds + 60)
        if p.returncode != 0:
            raise SystemExit(f"run-socket-server: {what} failed: {err.strip()}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall, server_s = time.monotonic() - t0, (hoststat.sched_ns(server_pid) - c0) / 1e9
    h1, clients_s = hoststat.cpu_jiffies(), children_cpu_s() - k0
    capacity = max(1, h1["total"] - h0["total"]) / hoststat.CLK_TCK
    others = (h1["busy"] - h0["busy"]) / hoststat.CLK_TCK - server_s - clients_s
    disturbance = {"others": round(max(0.0, others) / capacity, 4),
                   "steal": round((h1["steal"] - h0["steal"]) / hoststat.CLK_TCK / capacity, 4)}
    return outs, server_s / wall * 100, disturbance


def children_cpu_s():
    """CPU seconds of our children that have been waited for (the clients)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def four(exe, d, env, mode, seconds, hz=0):
    """Displayer 1, 2, Randomizer 200, 2 at once; their JSON and pbusd's CPU%."""
    display_mode = "subscribed" if mode == "subscribed" else mode
    write_mode = "batched" if mode == "subscribed" else mode
    extra = [str(hz)] if hz else []
    argvs = [["displayer", d.instance, display_mode, str(seconds)] + extra,
             ["displayer", d.instance, display_mode, str(seconds)] + extra,
             ["randomizer", d.instance, "200", write_mode, str(seconds)] + extra,
             ["randomizer", d.instance, "2", write_mode, str(seconds)] + extra]
    outs, cpu, disturbance = clients_at_once(exe, argvs, d.proc.pid, seconds, env, f"{mode} client")
    names = ["displayer1", "displayer2", "randomizer200", "randomizer2"]
    return {n: o["ops_per_s"] for n, o in zip(names, outs)}, cpu, disturbance


def server_bytes(build, d, env):
    """[bytes received, bytes sent] by pbusd since it started (its STATS)."""
    p = subprocess.run([os.path.join(build, "tools", "pbus"), "-i", d.instance, "stat", "--json"],
                       capture_output=True, text=True, env=env, timeout=30)
    if p.returncode != 0:
        raise SystemExit(f"run-socket-server: pbus stat failed: {p.stderr.strip()}")
    st = json.loads(p.stdout)
    return [st["bytes_in"], st["bytes_out"]]


# The frames of one iteration of the batched four (docs/socket-protocol.md
# §2-3): request and reply bytes of a GET of 201 parameters (200 doubles and
# the 64-byte rec), a SET of 201 and a SET of 3.
GET_ALL = (12 + 4 + 201 * 4, 12 + 4 + 200 * (28 + 8) + (28 + 64))
SET_ALL = (12 + 4 + 200 * (8 + 8) + (8 + 64), 12 + 4 + 4 + 201 * 12)
SET_3 = (12 + 4 + 2 * (8 + 8) + (8 + 64), 12 + 4 + 4 + 3 * 12)


def raw_four(exe, tmp, seconds, hz):
    """The batched four's I/O against the raw multiplexing server: its CPU%,
    [bytes received, bytes sent] and the disturbance (clients_at_once())."""
    path = os.path.join(tmp, "raw-mux.sock")
    srv = subprocess.Popen([exe, "raw-mux-server", path], stdout=subprocess.PIPE, text=True)
    try:
        srv.stdout.readline()
        argvs = [["raw-hz-client", path, str(req), str(rep), str(seconds), str(hz)]
                 for req, rep in (GET_ALL, GET_ALL, SET_ALL, SET_3)]
        outs, cpu, disturbance = clients_at_once(exe, argvs, srv.pid, seconds, None, "raw-hz-client")
        io = [sum(o["bytes_sent"] for o in outs), sum(o["bytes_received"] for o in outs)]
    finally:
        srv.kill()
        srv.wait()
    return cpu, io, disturbance


def hz_run(exe, build, d, env, tmp, who, seconds, args):
    """One 60 Hz run of the batched four against @who ("pbusd" or "raw"),
    repeated while others took more than --disturbed of the machine (at
    most --attempts times; the least disturbed attempt is kept): its CPU%,
    I/O and disturbance (with "attempts")."""
    best = None
    for attempt in range(1, args.attempts + 1):
        if who == "pbusd":
            io0 = server_bytes(build, d, env)
            _, cpu, disturbance = four(exe, d, env, "batched", seconds, 60)
            io = [b - a for a, b in zip(io0, server_bytes(build, d, env))]
        else:
            cpu, io, disturbance = raw_four(exe, tmp, seconds, 60)
        level = disturbance["others"] + disturbance["steal"]
        if best is None or level < best[0]:
            best = (level, cpu, io, disturbance)
        if level <= args.disturbed:
            break
        log(f"  60 Hz {who}: others took {100 * level:.1f} % of the machine; repeating")
    _, cpu, io, disturbance = best
    return cpu, io, dict(disturbance, attempts=attempt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load-only", action="store_true")
    ap.add_argument("--load-seconds", type=float, default=60)
    ap.add_argument("--load-clients", type=int, default=64)
    ap.add_argument("--hz-rounds", type=int, default=5,
                    help="interleaved 60 Hz rounds of pbusd and the raw server (default 5)")
    ap.add_argument("--disturbed", type=float, default=0.02,
                    help="repeat a 60 Hz run in which other processes and the hypervisor "
                         "took more than this fraction of the machine (default 0.02)")
    ap.add_argument("--attempts", type=int, default=3, help="at most this many tries per 60 Hz run")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    exe = os.path.join(build, "bench", "socket-server")
    if not os.access(exe, os.X_OK):
        raise SystemExit(f"run-socket-server: {exe} is not built")
    tmp = tempfile.mkdtemp(prefix="pbus-bench-sock-")
    env = dict(os.environ, PBUS_SOCKET_DIR=tmp)
    result = {"machine": hoststat.machine_info(TOP, build, "bench/socket-server.c", "socket-server")}
    status = 0
    d = Pbusd(build, tmp)
    try:
        if not args.load_only:
            rounds, n = (1, 20000) if args.quick else (5, 50000)
            rt = roundtrips(exe, d, env, tmp, rounds, n)
            med = {p: {w: statistics.median(v) for w, v in rt[p].items()} for p in rt}
            result["roundtrip_ns"] = med
            result["roundtrip_rounds"] = rt
            result["roundtrip_vs_raw_uds"] = round(med["same"]["raw"] / med["same"]["pbusd"], 3)
            result["roundtrip_vs_raw_uds_cross_cpu"] = round(med["cross"]["raw"] / med["cross"]["pbusd"], 3)
            seconds = 2 if args.quick else 5
            runs = {}
            for mode in ("unbatched", "batched", "subscribed"):
                runs[mode], cpu, _ = four(exe, d, env, mode, seconds)
                runs[mode]["pbusd_cpu_percent"] = round(cpu, 1)
                log(f"2+2 {mode}: {runs[mode]}")
            result["two_plus_two_ops_per_s"] = runs
            total = {m: sum(v for k, v in runs[m].items() if k != "pbusd_cpu_percent") for m in runs}
            result["batched_vs_unbatched"] = round(total["batched"] / total["unbatched"], 2)
            hz_seconds = 3 if args.quick else 10
            for mode in ("subscribed", "unbatched"):
                ops, cpu, _ = four(exe, d, env, mode, hz_seconds, 60)
                result[f"cpu_60hz_{mode}"] = {"pbusd_cpu_percent": round(cpu, 2), "ops_per_s": ops}
                log(f"60 Hz {mode}: pbusd {cpu:.2f} % CPU")
            # The key: the four polling as the study's did, but one request
            # per iteration, side by side with the raw server doing the same
            # I/O (interleaved rounds, medians).
            hz = {"pbusd": [], "raw": [], "pbusd_bytes": [], "raw_bytes": [],
                  "pbusd_disturbance": [], "raw_disturbance": []}
            for r in range(1 if args.quick else args.hz_rounds):
                for who in (("pbusd", "raw") if r % 2 == 0 else ("raw", "pbusd")):
                    cpu, io, disturbance = hz_run(exe, build, d, env, tmp, who, hz_seconds, args)
                    hz[who].append(round(cpu, 2))
                    hz[who + "_bytes"].append(io)
                    hz[who + "_disturbance"].append(disturbance)
                    log(f"60 Hz batched, round {r + 1}: {who} {cpu:.2f} % CPU, "
                        f"{io[0] / hz_seconds / 1024:.0f} KiB/s in, {io[1] / hz_seconds / 1024:.0f} KiB/s out; "
                        f"others {100 * disturbance['others']:.1f} %, steal {100 * disturbance['steal']:.1f} %"
                        + (f" (least disturbed of {disturbance['attempts']})" if disturbance["attempts"] > 1 else ""))
            result["cpu_60hz_batched"] = {"pbusd_cpu_percent": statistics.median(hz["pbusd"]),
                                          "raw_server_cpu_percent": statistics.median(hz["raw"]),
                                          "rounds": hz}
            result["server_cpu_percent_60hz"] = statistics.median(hz["pbusd"])
            result["raw_server_cpu_percent_60hz"] = statistics.median(hz["raw"])
            result["server_cpu_60hz_vs_raw"] = round(statistics.median(hz["raw"]) /
                                                     statistics.median(hz["pbusd"]), 3)
            result["server_cpu_percent_60hz_subscribed"] = result["cpu_60hz_subscribed"]["pbusd_cpu_percent"]
        seconds = min(args.load_seconds, 10) if args.quick else args.load_seconds
        warm = min(5.0, seconds / 4)
        log(f"load: {args.load_clients} clients for {seconds:.0f} s")
        p = subprocess.Popen([exe, "load", d.instance, str(args.load_clients), str(seconds)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(warm)
        rss0 = d.rss_kib()
        out, err = p.communicate(timeout=seconds + 120)
        rss1 = d.rss_kib()
        load = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"errors": -1, "first_problem": err}
        result.update(load_clients=args.load_clients, load_errors=load["errors"],
                      load_mismatches=load.get("mismatches"), load_rss_growth_kib=rss1 - rss0,
                      load_detail=load)
        if p.returncode != 0 or load["errors"] or load.get("mismatches") or rss1 - rss0 > 1024:
            status = 1
            log(f"load run FAILED: {load} rss {rss0} -> {rss1} KiB")
        else:
            log(f"load run: {load['writes']} writes, {load['values_notified']} values notified, "
                f"no error, every view equal to the table, pbusd RSS {rss0} -> {rss1} KiB")
        if d.proc.poll() is not None:
            status = 1
            log("pbusd died")
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    outdir = os.path.join(os.path.dirname(build), "bench")
    os.makedirs(outdir, exist_ok=True)
    name = "socket-server-load.json" if args.load_only else "socket-server.json"
    with open(os.path.join(outdir, name), "w") as f:
        json.dump(result, f, indent=2)
    keys = ["roundtrip_vs_raw_uds", "roundtrip_vs_raw_uds_cross_cpu", "batched_vs_unbatched",
            "server_cpu_percent_60hz", "raw_server_cpu_percent_60hz", "server_cpu_60hz_vs_raw",
            "server_cpu_percent_60hz_subscribed", "load_clients",
            "load_errors", "load_rss_growth_kib"]
    print(json.dumps({k: result[k] for k in keys if k in result}, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
