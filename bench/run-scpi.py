#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 6, SCPI (docs/benchmarks.md, "SCPI").

    bench/run-scpi.py [--quick] [--rounds N] [--seconds S] [--hz-seconds S]
                      [--hz-rounds N] [--disturbed F] [--attempts N] BUILD_DIR

Runs pbus-scpi in front of a fresh pbusd serving the demo PSU
(examples/psu/psu.pbs; the simulator runs for a moment first, so that the
measurements hold real values, then stops so that every response has one
size), side by side with bench/scpi/raw-echo, a bare TCP server answering
each line with a line of the size of pbus-scpi's response (the limit), and
writes build/bench/scpi.json:

  query rate   blocking round trips for --seconds (2; 0.5 with --quick),
               --rounds interleaved rounds (5; 1 with --quick), each with
               every contender pinned to one CPU ("same": client, pbus-scpi
               and pbusd, or raw-echo, on one) and to two ("cross": the
               client on one, the servers on the other):
               - pyvisa (pyvisa-py, bench/scpi/visa-client.py, this
                 Python's) querying MEAS:VOLT? of pbus-scpi and of raw-echo:
                 scpi_query_vs_raw_tcp = pbus-scpi's queries/s ÷ raw-echo's
                 (same CPU, medians; _cross_cpu beside it);
               - the C client (bench/scpi-load) with one MEAS:VOLT? per
                 message: scpi_queries_per_s_c (same CPU; _cross_cpu), and
                 with ten per message (scpi_queries_per_s_c_10_per_message),
                 each beside raw-echo's figure with the same client;
               - pbus-scpi answers queries from the instance's table
                 (docs/scpi.md): the requests pbusd received from
                 pbus-scpi during all the query runs, from its STATS
                 (pbusd_requests_from_scpi_during_queries: 0 when every
                 query read the table; beside it the queries of the runs
                 kept, scpi_queries_during_queries: a repeated run made
                 more);
               - what a query costs where pbus-scpi cannot read the table
                 and asks pbusd (a user who may not map it; a noread
                 parameter): one GET of measured_voltage through pbusd
                 (scpi-load get-rtt, the client where pbus-scpi is, pbusd
                 where it is), and from it the bound of each ratio on that
                 path (the raw round trip ÷ the raw round trip plus the
                 GET: a pbus-scpi costing nothing itself),
                 *_bound_via_pbusd;
  60 Hz        the C client polling 10 parameters 60 times a second for
               --hz-seconds (10; 3 with --quick), one message of ten
               queries per tick, unpinned: pbus-scpi's CPU% from
               /proc/PID/stat (utime + stime, 10 ms ticks) over the run
               (scpi_cpu_percent_60hz; from schedstat, in ns, beside it),
               pbusd's beside it, raw-echo's
               under the same load (the limit), and the same with the ten
               queries as ten messages per tick; --hz-rounds interleaved
               rounds (3; 1 with --quick), medians.

A run in which other processes and the hypervisor took more than
--disturbed of the machine (/proc/stat, bench/hoststat.py) is repeated, at
most --attempts times, and the least disturbed attempt kept. Needs pyvisa
and pyvisa-py: run it with the venv's Python (make bench does).
"""
import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from pbustest.daemon import spawn_notified  # noqa: E402  (tests/pbustest: one way to start a daemon)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
QUERY = "MEAS:VOLT?"
TEN = ";:".join([QUERY] * 10)
# The ten parameters the 60 Hz client polls (every query the demo has,
# but the two enumerations' second one and SYST:STAT:TEXT?).
POLL = ["MEAS:VOLT?", "MEAS:CURR?", "MEAS:TEMP?", "VOLT?", "CURR?", "OUTP?", "VOLT:PROT?",
        "SYST:FAN?", "OUTP:COND?", "SYST:INT?"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def start(argv, tmp, name):
    """A daemon with --notify-fd (pbustest.daemon.spawn_notified()): the
    process and the KEY=VALUE lines it notified."""
    log_path = os.path.join(tmp, f"{name}.log")
    proc, fields = spawn_notified(argv, log_path)
    if fields is None:
        proc.kill()
        with open(log_path, errors="replace") as f:
            raise SystemExit(f"run-scpi: {name} did not become ready: {f.read()[-500:]}")
    return proc, fields


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pin(pid, cpus):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass


def stat_ticks(pid):
    """utime + stime of @pid (all its threads) in clock ticks, from
    /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measured(argv, cpus, server_pids, timeout):
    """Run the client @argv (pinned to @cpus, or not) to its end: its JSON,
    each server's CPU% meanwhile ({pid: (from /proc/PID/stat, from
    schedstat)}), and how much of the machine others took meanwhile
    ({"others", "steal"}, fractions)."""
    t0 = time.monotonic()
    s0 = {pid: stat_ticks(pid) for pid in server_pids}
    n0 = {pid: hoststat.sched_ns(pid) for pid in server_pids}
    h0, k0 = hoststat.cpu_jiffies(), children_cpu_s()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    wall = time.monotonic() - t0
    s1 = {pid: stat_ticks(pid) for pid in server_pids}
    n1 = {pid: hoststat.sched_ns(pid) for pid in server_pids}
    h1, clients_s = hoststat.cpu_jiffies(), children_cpu_s() - k0
    if p.returncode != 0 or not p.stdout.strip():
        raise SystemExit(f"run-scpi: {' '.join(argv[:3])} failed ({p.returncode}): {p.stderr.strip()}")
    servers_s = {pid: (n1[pid] - n0[pid]) / 1e9 for pid in server_pids}
    capacity = max(1, h1["total"] - h0["total"]) / hoststat.CLK_TCK
    others = (h1["busy"] - h0["busy"]) / hoststat.CLK_TCK - sum(servers_s.values()) - clients_s
    disturbance = {"others": round(max(0.0, others) / capacity, 4),
                   "steal": round((h1["steal"] - h0["steal"]) / hoststat.CLK_TCK / capacity, 4)}
    cpu = {pid: (round((s1[pid] - s0[pid]) / hoststat.CLK_TCK / wall * 100, 3),
                 round(servers_s[pid] / wall * 100, 3)) for pid in server_pids}
    return json.loads(p.stdout.strip().splitlines()[-1]), cpu, disturbance


def least_disturbed(args, what, run):
    """run() until others took at most --disturbed of the machine (at most
    --attempts times): the least disturbed attempt's result, its
    disturbance with "attempts"."""
    best = None
    for attempt in range(1, args.attempts + 1):
        out = run()
        level = out[-1]["others"] + out[-1]["steal"]
        if best is None or level < best[0]:
            best = (level, out)
        if level <= args.disturbed:
            break
        log(f"  {what}: others took {100 * level:.1f} % of the machine; repeating")
    out = best[1]
    return out[:-1] + (dict(out[-1], attempts=attempt),)


def query(port, message):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(message.encode() + b"\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise SystemExit(f"run-scpi: pbus-scpi closed the connection on {message!r}")
            reply += chunk
    return reply.decode()


def scpi_requests(exe, instance, env, pid):
    """The requests pbusd has received on the connections of process @pid
    (pbus-scpi): its STATS (docs/socket-protocol.md §7), through pbus stat."""
    out = subprocess.run([exe["pbus"], "-i", instance, "stat", "--json", "--once"], env=env, check=True,
                         capture_output=True, text=True, timeout=30).stdout
    return sum(c["requests"] for c in json.loads(out)["clients_detail"] if c["pid"] == pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--hz-seconds", type=float, default=10.0)
    ap.add_argument("--hz-rounds", type=int, default=3)
    ap.add_argument("--disturbed", type=float, default=0.05,
                    help="repeat a run in which others took more than this fraction of the machine (0.05)")
    ap.add_argument("--attempts", type=int, default=3)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.hz_seconds, args.hz_rounds = 1, 0.5, 3.0, 1
    build = os.path.abspath(args.build)
    exe = {name: os.path.join(build, *path) for name, path in
           {"pbusd": ("daemon", "pbusd"), "pbus-scpi": ("daemon", "pbus-scpi"), "pbus": ("tools", "pbus"),
            "sim": ("examples", "psu", "psu-sim"), "load": ("bench", "scpi-load"),
            "raw": ("bench", "raw-echo")}.items()}
    for path in exe.values():
        if not os.access(path, os.X_OK):
            raise SystemExit(f"run-scpi: {path} is not built")
    try:
        import pyvisa  # noqa: F401 - the pyvisa contender needs it
        import pyvisa_py  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"run-scpi: {e}: run it with the venv's Python (build/venv/bin/python)")
    visa_client = [sys.executable, os.path.join(HERE, "scpi", "visa-client.py")]
    tmp = tempfile.mkdtemp(prefix="pbus-bench-scpi-")
    os.environ["PBUS_SOCKET_DIR"] = tmp  # for the pbus CLI, the simulator and scpi-load get-rtt
    env = dict(os.environ)
    instance = f"bench-scpi-{os.getpid()}"
    procs = []
    result = {"machine": hoststat.machine_info(TOP, build, "pbus-scpi/main.c", "pbus-scpi")}
    try:
        pbusd, _ = start([exe["pbusd"], "--schema", os.path.join(build, "examples", "psu", "psu.pbs"),
                          "--instance", instance, "--state-dir", os.path.join(tmp, "state"),
                          "--socket-dir", tmp, "--log-level", "warning"], tmp, "pbusd")
        procs.append(pbusd)
        # Real measurements, then frozen: the simulator runs for a moment.
        sim = subprocess.Popen([exe["sim"], instance], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        subprocess.run([exe["pbus"], "-i", instance, "set", "voltage_setpoint=5", "current_setpoint=1",
                        "output_enable=true"], env=env, check=True, capture_output=True, timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            v = subprocess.run([exe["pbus"], "-i", instance, "get", "measured_voltage"], env=env,
                               capture_output=True, text=True, timeout=30).stdout.strip()
            if v and abs(float(v) - 5) < 0.05:
                break
            time.sleep(0.05)
        stop(sim)
        scpi, fields = start([exe["pbus-scpi"], "--instance", instance, "--tree",
                              os.path.join(build, "examples", "psu", "psu.scpi"), "--socket-dir", tmp,
                              "--listen", "127.0.0.1:0", "--hislip", "off", "--log-level", "warning"], tmp,
                             "pbus-scpi")
        procs.append(scpi)
        port = int(fields["PORT"])
        poll_message = ";:".join(POLL)
        sizes = {"one": len(query(port, QUERY)), "ten": len(query(port, TEN)),
                 "poll": len(query(port, poll_message))}
        log(f"pbus-scpi on port {port}; MEAS:VOLT? answers {query(port, QUERY).strip()!r} "
            f"({sizes['one']} bytes), ten of them {sizes['ten']} bytes, the poll {sizes['poll']} bytes")
        raw = {}
        for kind, size in sizes.items():
            proc = subprocess.Popen([exe["raw"], str(size)], stdout=subprocess.PIPE, text=True)
            procs.append(proc)
            raw[kind] = (proc, int(proc.stdout.readline().split("=")[1]))
        result["reply_bytes"] = sizes

        cpus = sorted(os.sched_getaffinity(0))
        same, cross = ([cpus[-1]], [cpus[-1]]), ([cpus[0]], [cpus[-1]])  # (client, servers)
        contenders = {  # name: (client argv for a port, message kind, queries per message)
            "visa": (lambda p: visa_client + [str(p), str(args.seconds), QUERY], "one", 1),
            "c": (lambda p: [exe["load"], "rtt", str(p), str(args.seconds), QUERY], "one", 1),
            "c10": (lambda p: [exe["load"], "rtt", str(p), str(args.seconds), TEN], "ten", 10),
        }
        requests_before = scpi_requests(exe, instance, env, scpi.pid)
        queries_made = 0
        rounds = {pl: {c: {"pbus-scpi": [], "raw": []} for c in contenders} for pl in ("same", "cross")}
        for pl in rounds:
            rounds[pl]["pbusd_get"] = []
        disturb = []
        for r in range(args.rounds):
            for placement, (client_cpus, server_cpus) in (("same", same), ("cross", cross)):
                for pid in (scpi.pid, pbusd.pid) + tuple(p.pid for p, _ in raw.values()):
                    pin(pid, server_cpus)
                for name, (argv, kind, per) in contenders.items():
                    order = ("pbus-scpi", "raw") if r % 2 == 0 else ("raw", "pbus-scpi")
                    for who in order:
                        target = port if who == "pbus-scpi" else raw[kind][1]
                        servers = [scpi.pid, pbusd.pid] if who == "pbus-scpi" else [raw[kind][0].pid]
                        out, _, d = least_disturbed(args, f"{placement} {name} {who}", lambda: measured(
                            argv(target), client_cpus, servers, args.seconds + 60))
                        if out["reply_bytes"] != sizes[kind]:
                            raise SystemExit(f"run-scpi: {who} answered {out['reply_bytes']} bytes, "
                                             f"not {sizes[kind]}")
                        rounds[placement][name][who].append(round(out["messages_per_s"] * per, 1))
                        if who == "pbus-scpi":
                            queries_made += out["messages"] * per
                        disturb.append(d)
                # pbus-scpi's own GET per query, from where pbus-scpi runs
                out, _, d = least_disturbed(args, f"{placement} pbusd get", lambda: measured(
                    [exe["load"], "get-rtt", instance, "measured_voltage", str(args.seconds)], server_cpus,
                    [pbusd.pid], args.seconds + 60))
                rounds[placement]["pbusd_get"].append(out["messages_per_s"])
                disturb.append(d)
                f = rounds[placement]
                log(f"round {r + 1}, {placement} CPU, queries/s: pyvisa {f['visa']['pbus-scpi'][-1]:.0f} "
                    f"(raw {f['visa']['raw'][-1]:.0f}), C {f['c']['pbus-scpi'][-1]:.0f} "
                    f"(raw {f['c']['raw'][-1]:.0f}), C 10/message {f['c10']['pbus-scpi'][-1]:.0f} "
                    f"(raw {f['c10']['raw'][-1]:.0f}); GETs through pbusd {f['pbusd_get'][-1]:.0f}/s")
        result["pbusd_requests_from_scpi_during_queries"] = (
            scpi_requests(exe, instance, env, scpi.pid) - requests_before)
        result["scpi_queries_during_queries"] = queries_made
        log(f"pbusd received {result['pbusd_requests_from_scpi_during_queries']} requests from pbus-scpi "
            f"during the {queries_made} queries of the query runs")
        for pid in (scpi.pid, pbusd.pid) + tuple(p.pid for p, _ in raw.values()):
            pin(pid, cpus)
        med = {pl: {c: {w: statistics.median(v) for w, v in rounds[pl][c].items()} for c in contenders}
               for pl in rounds}
        for pl in rounds:
            med[pl]["pbusd_get"] = statistics.median(rounds[pl]["pbusd_get"])
        result["queries_per_s"] = med
        result["query_rounds"] = rounds
        result["query_disturbance"] = disturb
        for pl, suffix in (("same", ""), ("cross", "_cross_cpu")):
            m = med[pl]
            result[f"scpi_query_vs_raw_tcp{suffix}"] = round(m["visa"]["pbus-scpi"] / m["visa"]["raw"], 3)
            result[f"scpi_queries_per_s_c{suffix}"] = round(m["c"]["pbus-scpi"])
            result[f"scpi_queries_per_s_c_10_per_message{suffix}"] = round(m["c10"]["pbus-scpi"])
            result[f"scpi_c_vs_raw_tcp{suffix}"] = round(m["c"]["pbus-scpi"] / m["c"]["raw"], 3)
            result[f"scpi_c_10_per_message_vs_raw_tcp{suffix}"] = round(
                m["c10"]["pbus-scpi"] / m["c10"]["raw"], 3)
            result[f"visa_queries_per_s{suffix}"] = round(m["visa"]["pbus-scpi"])
            result[f"visa_raw_tcp_queries_per_s{suffix}"] = round(m["visa"]["raw"])
            result[f"pbusd_gets_per_s{suffix}"] = round(m["pbusd_get"])
            t_get = 1 / m["pbusd_get"]
            for key, c in (("scpi_query_vs_raw_tcp", "visa"), ("scpi_c_vs_raw_tcp", "c")):
                t_raw = 1 / m[c]["raw"]
                result[f"{key}_bound_via_pbusd{suffix}"] = round(t_raw / (t_raw + t_get), 3)

        # 60 Hz: ten parameters, as one message of ten queries and as ten
        # messages, against pbus-scpi (its and pbusd's CPU) and raw-echo.
        hz = {mode: {"pbus-scpi": [], "pbus-scpi_schedstat": [], "pbusd": [], "raw": [], "raw_schedstat": [],
                     "late": []} for mode in ("one_message", "ten_messages")}
        for r in range(args.hz_rounds):
            for mode, messages in (("one_message", [poll_message]), ("ten_messages", POLL)):
                for who in (("pbus-scpi", "raw") if r % 2 == 0 else ("raw", "pbus-scpi")):
                    if who == "raw" and mode == "ten_messages":
                        continue  # the limit of one line per tick is enough
                    target = port if who == "pbus-scpi" else raw["poll"][1]
                    servers = [scpi.pid, pbusd.pid] if who == "pbus-scpi" else [raw["poll"][0].pid]
                    out, cpu, d = least_disturbed(args, f"60 Hz {mode} {who}", lambda: measured(
                        [exe["load"], "poll", str(target), "60", str(args.hz_seconds)] + messages, None,
                        servers, args.hz_seconds + 60))
                    if who == "pbus-scpi":
                        hz[mode]["pbus-scpi"].append(cpu[scpi.pid][0])
                        hz[mode]["pbus-scpi_schedstat"].append(cpu[scpi.pid][1])
                        hz[mode]["pbusd"].append(cpu[pbusd.pid][0])
                        hz[mode]["late"].append(out["late"])
                    else:
                        hz[mode]["raw"].append(cpu[raw["poll"][0].pid][0])
                        hz[mode]["raw_schedstat"].append(cpu[raw["poll"][0].pid][1])
                    log(f"60 Hz {mode}, round {r + 1}: {who} "
                        + (f"{cpu[scpi.pid][0]:.2f} % CPU ({cpu[scpi.pid][1]:.3f} % by schedstat; "
                           f"pbusd {cpu[pbusd.pid][0]:.2f} %)" if who == "pbus-scpi"
                           else f"{cpu[raw['poll'][0].pid][0]:.2f} % CPU "
                                f"({cpu[raw['poll'][0].pid][1]:.3f} % by schedstat)")
                        + f", {out['messages']} messages, {out['late']} late; "
                        f"others {100 * d['others']:.1f} %, steal {100 * d['steal']:.1f} %")
        result["cpu_60hz"] = hz
        result["cpu_60hz_seconds"] = args.hz_seconds
        result["scpi_cpu_percent_60hz"] = statistics.median(hz["one_message"]["pbus-scpi"])
        result["scpi_cpu_percent_60hz_schedstat"] = statistics.median(hz["one_message"]["pbus-scpi_schedstat"])
        result["raw_tcp_cpu_percent_60hz_schedstat"] = statistics.median(hz["one_message"]["raw_schedstat"])
        result["pbusd_cpu_percent_60hz"] = statistics.median(hz["one_message"]["pbusd"])
        result["raw_tcp_cpu_percent_60hz"] = statistics.median(hz["one_message"]["raw"])
        result["scpi_cpu_percent_60hz_ten_messages"] = statistics.median(hz["ten_messages"]["pbus-scpi"])
        result["pbusd_cpu_percent_60hz_ten_messages"] = statistics.median(hz["ten_messages"]["pbusd"])
        if scpi.poll() is not None or pbusd.poll() is not None:
            raise SystemExit("run-scpi: pbus-scpi or pbusd died during the run")
    finally:
        for proc in reversed(procs):
            stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    outdir = os.path.join(os.path.dirname(build), "bench")
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "scpi.json"), "w") as f:
        json.dump(result, f, indent=2)
    keys = ["scpi_query_vs_raw_tcp", "scpi_query_vs_raw_tcp_bound_via_pbusd", "scpi_query_vs_raw_tcp_cross_cpu",
            "scpi_query_vs_raw_tcp_bound_via_pbusd_cross_cpu", "visa_queries_per_s",
            "visa_raw_tcp_queries_per_s", "pbusd_gets_per_s", "pbusd_gets_per_s_cross_cpu",
            "pbusd_requests_from_scpi_during_queries", "scpi_queries_during_queries",
            "scpi_queries_per_s_c", "scpi_queries_per_s_c_cross_cpu",
            "scpi_c_vs_raw_tcp", "scpi_c_vs_raw_tcp_bound_via_pbusd", "scpi_queries_per_s_c_10_per_message",
            "scpi_queries_per_s_c_10_per_message_cross_cpu", "scpi_c_10_per_message_vs_raw_tcp",
            "scpi_cpu_percent_60hz", "scpi_cpu_percent_60hz_schedstat", "pbusd_cpu_percent_60hz",
            "raw_tcp_cpu_percent_60hz", "raw_tcp_cpu_percent_60hz_schedstat",
            "scpi_cpu_percent_60hz_ten_messages", "pbusd_cpu_percent_60hz_ten_messages"]
    print(json.dumps({k: result[k] for k in keys if k in result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
