#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 5, Java through FFM (docs/benchmarks.md).

    bench/run-java.py [--quick] [--rounds N] [--rounds-22 N] BUILD_DIR

Builds the parambus jar from java/ (into BUILD_DIR/java) and the JMH
benchmarks of bench/java/ (into BUILD_DIR/bench/java/benchmarks.jar, with
JMH from Maven Central; Maven needs the network only the first time), starts
a pbusd serving bench/schemas/param-table.pbs (instance bench-java-<pid>,
its socket in a directory of its own), and runs the contenders side by side,
interleaved, each pair under the same placement, and writes
build/bench/java.json and a table.

Per round (full: 5 rounds; --quick: 1, with iterations of 0.1 s), in an
order rotated by one every round, the two halves of each comparison in
alternating order:
  read     JMH ReadBench (javaRead: ParamTable.getDouble of p000; arrayRead:
           a double[] element, the floor; segmentAcquireRead: one acquire
           load from the mapped segment; segmentSeqlockRead: the protocol's
           read by hand on that mapping), pinned to the last CPU; then
           BUILD/bench/read-double (pbus_param_get_double() of p000, and
           --array: the C floor) on the same CPU, timed the way JMH times:
           warm-up and measured iterations of the same length;
  call     JMH CallBench: an empty C function through an FFM downcall, the
           same linked critical, and an empty JNI native method
           (BUILD/bench/libpbus-bench-null.so), pinned to the last CPU;
  socket   a single GET of p000 through pbusd: JMH SocketGetBench (the Java
           client) and BUILD/bench/socket-server get-rtt (the C client),
           with pbusd and the client on one CPU ("same": the key) and on
           two ("cross");
and then, --rounds-22 times (full 3, one per pairing of scenario 1; quick 1),
the 2 + 2 run of scenario 1 twice: two Java Displayers (io.parambus.bench.
Displayer) and two C Displayers (param-table-parambus), each time against
the C Randomizers 200 and 2 of param-table-parambus, 5 s, pinned two to a CPU
in the round's pairing, a fresh pbusd for each run, the figures read with
bench/run-param-table.py's code.

JMH runs with 1 fork, 3 warm-up and 8 measured iterations of 0.5 s, the gc
profiler (B/op), average time in ns. A figure is the median over the rounds
of each run's score; a key is the ratio of two such medians, written so that
higher is better for the Java side. Before each run the runner waits (up to
--quiet-wait s) until others use under --disturbed of the CPUs it will use,
and repeats a run (at most --attempts times, keeping the least disturbed)
when others or the hypervisor took more than that of those CPUs during it, or
when a JMH score's error (99.9 %) exceeds 10 % of the score.

Exit status: 1 if a build or a process failed, a Java Displayer read a torn
value or reported errors, or pbusd failed; speed figures never fail.
Python 3 standard library only.
"""
import argparse
import importlib.util
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
import zipfile

import hoststat  # bench/hoststat.py
from targets import met as target_met  # bench/targets.py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCHEMA = os.path.join(HERE, "schemas", "param-table.pbs")
CLK_TCK = hoststat.CLK_TCK
PARAM = "p000"

# Scenario 1's runner: its 2 + 2 placement, pbusd handling and summaries.
_spec = importlib.util.spec_from_file_location("run_param_table",
                                               os.path.join(HERE, "run-param-table.py"))
pt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pt)

BENCH = "io.parambus.bench."
# t quantiles (two-sided 99.9 %) for JMH's error and the same of the C runs.
T999 = {1: 636.62, 2: 31.599, 3: 12.924, 4: 8.610, 5: 6.869, 6: 5.959, 7: 5.408, 8: 5.041,
        9: 4.781, 10: 4.587, 11: 4.437, 12: 4.318, 13: 4.221, 14: 4.140, 15: 4.073,
        16: 4.015, 17: 3.965, 18: 3.922, 19: 3.883, 20: 3.850, 25: 3.725, 30: 3.646,
        40: 3.551, 60: 3.460, 120: 3.373}


class Failure(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def t999(df):
    for k in sorted(T999):
        if df <= k:
            return T999[k]
    return 3.291


def mean_error(xs):
    """Mean and the half-width of its 99.9 % confidence interval, as JMH
    reports a score and its error."""
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, t999(len(xs) - 1) * statistics.stdev(xs) / len(xs) ** 0.5


# --- building -------------------------------------------------------------

def build_jars(cfg):
    """The parambus jar (java/) and the benchmarks' jar (bench/java/), built
    with Maven and the JDK that scripts/java-env finds."""
    env = dict(os.environ, JAVA_HOME=cfg.java_home,
               MAVEN_OPTS=("--sun-misc-unsafe-memory-access=allow "
                           + os.environ.get("MAVEN_OPTS", "")).strip())
    steps = [
        ("the parambus jar", ["mvn", "-q", "-B", "-Dstyle.color=never", "-f",
                              os.path.join(REPO, "java", "pom.xml"),
                              "-Dpbus.java.out=" + os.path.join(cfg.build, "java"),
                              "-DskipTests", "package"]),
        ("the benchmarks' jar", ["mvn", "-q", "-B", "-Dstyle.color=never", "-f",
                                 os.path.join(HERE, "java", "pom.xml"),
                                 "-Dparambus.jar=" + cfg.parambus_jar,
                                 "-Dpbus.bench.out=" + os.path.join(cfg.build, "bench", "java"),
                                 "package"]),
    ]
    for what, cmd in steps:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise Failure("building %s failed (%s):\n%s" % (what, " ".join(cmd),
                                                          (p.stdout + p.stderr)[-3000:]))


def jmh_benchmarks(cfg):
    """The benchmarks the jar holds (JMH's -l), without the package."""
    p = subprocess.run(cfg.java_cmd + ["org.openjdk.jmh.Main", "-l"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise Failure("listing the JMH benchmarks failed: %s" % p.stderr.strip()[-2000:])
    return {line.strip()[len(BENCH):] for line in p.stdout.splitlines()
            if line.strip().startswith(BENCH)}


def java_version(cfg):
    p = subprocess.run([cfg.java, "-version"], capture_output=True, text=True)
    return (p.stderr or p.stdout).strip().splitlines()


# --- pbusd ----------------------------------------------------------------

class Pbusd:
    """A pbusd of our own on the benchmark schema, its socket in @tmp."""

    def __init__(self, cfg, tmp, instance):
        self.instance = instance
        r, w = os.pipe()
        self.log = open(os.path.join(tmp, "pbusd-%s.log" % instance), "wb")
        self.proc = subprocess.Popen(
            [cfg.pbusd, "--schema", SCHEMA, "--instance", instance,
             "--state-dir", os.path.join(tmp, "state-" + instance), "--socket-dir", tmp,
             "--notify-fd", str(w)],
            pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(w)
        ready = select.select([r], [], [], 10)[0] and os.read(r, 16)
        os.close(r)
        if ready != b"READY=1\n":
            self.stop()
            raise Failure("pbusd did not become ready (see %s)" % self.log.name)

    def pin(self, cpus):
        for tid in os.listdir("/proc/%d/task" % self.proc.pid):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass

    def cpu_ns(self):
        """CPU time of all its threads (schedstat, ns)."""
        total = 0
        for tid in os.listdir("/proc/%d/task" % self.proc.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (self.proc.pid, tid)) as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total

    def stop(self):
        """SIGTERM; None if it exited cleanly, else a complaint."""
        if self.proc.poll() is not None:
            return "pbusd exited early with %s" % self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "pbusd did not exit within 10 s of SIGTERM"
        finally:
            self.log.close()
        return None if rc == 0 else "pbusd exited with %d" % rc


# --- one run, measured ----------------------------------------------------

def children_cpu_ticks():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (ru.ru_utime + ru.ru_stime) * CLK_TCK


def wait_quiet(cfg, cpus):
    """Wait (at most cfg.quiet_wait s) until others use under cfg.disturbed
    of @cpus over half a second; the seconds waited."""
    t0 = time.monotonic()
    said = False
    while cfg.quiet_wait > 0:
        a = hoststat.cpu_jiffies(cpus)
        time.sleep(0.5)
        b = hoststat.cpu_jiffies(cpus)
        load = ((b["busy"] - a["busy"]) + (b["steal"] - a["steal"])) / (len(cpus) * 0.5 * CLK_TCK)
        waited = time.monotonic() - t0
        if load <= cfg.disturbed or waited >= cfg.quiet_wait:
            break
        if not said:
            log("  (machine busy: %.0f%% of CPUs %s used by others; waiting up to %.0f s)"
                % (100 * load, sorted(cpus), cfg.quiet_wait))
            said = True
    return round(time.monotonic() - t0, 1)


def measured(cfg, cpus, daemon, fn):
    """Run @fn() (which runs our processes on @cpus and waits for them) and
    return (its result, the disturbance): the busy time others took on
    @cpus (their busy time from /proc/stat minus our children's and
    pbusd's) and the hypervisor's steal, as fractions of those CPUs."""
    h0, c0, d0, t0 = hoststat.cpu_jiffies(cpus), children_cpu_ticks(), \
        daemon.cpu_ns() if daemon else 0, time.monotonic()
    result = fn()
    h1, c1, d1, t1 = hoststat.cpu_jiffies(cpus), children_cpu_ticks(), \
        daemon.cpu_ns() if daemon else 0, time.monotonic()
    capacity = max(1.0, len(cpus) * (t1 - t0) * CLK_TCK)
    ours = (c1 - c0) + (d1 - d0) / 1e9 * CLK_TCK
    return result, {"other_cpu_fraction": round(max(0.0, h1["busy"] - h0["busy"] - ours) / capacity, 4),
                    "steal_fraction": round((h1["steal"] - h0["steal"]) / capacity, 4),
                    "seconds": round(t1 - t0, 2)}


def pinned(cpus):
    return lambda: os.sched_setaffinity(0, cpus)


def run_jmh(cfg, regex, cpus, tag, extra_props=()):
    """One JMH invocation of the benchmarks matching @regex, pinned to
    @cpus: {benchmark: {score, error, unit, alloc_b_per_op, raw}}."""
    out = os.path.join(cfg.tmp, "jmh-%s.json" % tag)
    logf = os.path.join(cfg.tmp, "jmh-%s.log" % tag)
    props = ["--enable-native-access=ALL-UNNAMED",
             "-Dpbus.bench.instance=" + cfg.instance,
             "-Dpbus.bench.null=" + cfg.null_lib,
             "-Dpbus.bench.socket.dir=" + cfg.tmp] + list(extra_props)
    j = cfg.jmh
    t = "%dms" % j["time_ms"]
    cmd = cfg.java_cmd + ["org.openjdk.jmh.Main", regex, "-f", "1", "-wi", str(j["warmup"]),
                          "-w", t, "-i", str(j["iterations"]), "-r", t,
                          "-bm", "avgt", "-tu", "ns", "-prof", "gc", "-rf", "json", "-rff", out,
                          "-jvmArgsAppend", " ".join(props)]
    with open(logf, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, preexec_fn=pinned(cpus),
                           env=dict(os.environ, PBUS_SOCKET_DIR=cfg.tmp), timeout=1800)
    if p.returncode != 0 or not os.path.exists(out):
        with open(logf) as f:
            raise Failure("JMH %s failed (%d): %s" % (regex, p.returncode, f.read()[-3000:]))
    with open(out) as f:
        results = json.load(f)
    os.unlink(out)
    figures = {}
    for r in results:
        name = r["benchmark"][len(BENCH):]
        pm = r["primaryMetric"]
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        figures[name] = {"score": float(pm["score"]), "error": float(pm["scoreError"]),
                         "unit": pm["scoreUnit"],
                         "alloc_b_per_op": alloc,
                         "raw": [x for fork in pm["rawData"] for x in fork]}
    return figures


def run_c_read(cfg, cpus, array):
    """read-double on @cpus: {score, error, raw} in ns per read."""
    j = cfg.jmh
    cmd = [cfg.read_double] + (["--array"] if array else [cfg.instance, PARAM]) + [
        "--warmup", str(j["warmup"]), "--iterations", str(j["iterations"]),
        "--time-ms", str(j["time_ms"])]
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=pinned(cpus), timeout=600)
    if p.returncode != 0:
        raise Failure("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    raw = json.loads(p.stdout)["ns_per_op"]
    m, e = mean_error(raw)
    return {"score": m, "error": e, "unit": "ns/op", "raw": raw}


def run_c_get(cfg, cpus, n):
    """socket-server get-rtt on @cpus: {score} in ns per get."""
    cmd = [cfg.socket_server, "get-rtt", cfg.instance, str(n)]
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=pinned(cpus), timeout=600,
                       env=dict(os.environ, PBUS_SOCKET_DIR=cfg.tmp))
    if p.returncode != 0:
        raise Failure("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return {"score": json.loads(p.stdout.strip().splitlines()[-1])["ns_per_op"], "error": None,
            "unit": "ns/op", "gets": n}


def too_uncertain(figures, cfg):
    """The JMH-style scores of @figures whose error exceeds cfg.max_error."""
    return [k for k, f in figures.items()
            if f.get("error") is not None and f["error"] == f["error"]  # not NaN
            and f["score"] > 0 and f["error"] / f["score"] > cfg.max_error]


def checked(cfg, what, cpus, daemon, fn):
    """@fn under measured(), repeated while disturbed (others or steal above
    cfg.disturbed, or an error above cfg.max_error): the least disturbed
    attempt's figures, each with the run's disturbance."""
    best = None
    for attempt in range(1, cfg.attempts + 1):
        waited = wait_quiet(cfg, cpus)
        figures, dist = measured(cfg, cpus, daemon, fn)
        dist.update(attempt=attempt, waited_for_quiet_s=waited)
        noisy = too_uncertain(figures, cfg)
        level = max(dist["other_cpu_fraction"], dist["steal_fraction"])
        dist["disturbed"] = level > cfg.disturbed or bool(noisy)
        if noisy:
            dist["error_above_limit"] = noisy
        log("  %-24s attempt %d: %s; other %.1f%% steal %.1f%%%s" % (
            what, attempt, ", ".join("%s %.3f ± %s ns" % (k, f["score"],
                                                          "%.3f" % f["error"] if f.get("error") is not None
                                                          else "-") for k, f in figures.items()),
            100 * dist["other_cpu_fraction"], 100 * dist["steal_fraction"],
            " DISTURBED" + (" (error > %d%%: %s)" % (100 * cfg.max_error, ", ".join(noisy))
                            if noisy else "") if dist["disturbed"] else ""))
        score = level + (1.0 if noisy else 0.0)
        if best is None or score < best[0]:
            best = (score, figures, dist)
        if not dist["disturbed"]:
            break
    _, figures, dist = best
    dist["attempts"] = attempt
    for f in figures.values():
        f["run"] = dist
    return figures


# --- the rounds -----------------------------------------------------------

def round_groups(cfg, have):
    """The comparisons of one round: (group, [(contender label, cpus, daemon
    pinning, function returning {name: figure})])."""
    last, first = {cfg.cpus[-1]}, {cfg.cpus[0]}
    groups = []
    read_regex = "ReadBench"
    groups.append(("read", [
        ("java", last, None, lambda: run_jmh(cfg, BENCH + read_regex, last, "read")),
        ("c", last, None, lambda: {"c_read": run_c_read(cfg, last, False),
                                   "c_array_read": run_c_read(cfg, last, True)}),
    ]))
    groups.append(("call", [
        ("java", last, None, lambda: run_jmh(cfg, BENCH + "CallBench", last, "call")),
    ]))
    for placement, server in (("same", last), ("cross", first)):
        cpus = last | server
        contenders = []
        if "SocketGetBench.javaGet" in have:
            contenders.append(("java", cpus, server, lambda s=server, p=placement: {
                "java_get_" + p: run_jmh(cfg, BENCH + "SocketGetBench", last,
                                         "socket-" + p)["SocketGetBench.javaGet"]}))
        contenders.append(("c", cpus, server, lambda p=placement: {
            "c_get_" + p: run_c_get(cfg, last, cfg.gets[p])}))
        groups.append(("socket-" + placement, contenders))
    return [g for g in groups if g[0].split("-")[0] in cfg.parts]


def micro_rounds(cfg, have, daemon):
    """Every round of the read, call and socket comparisons: a list of
    {round, group, contender, figures}."""
    runs = []
    groups = round_groups(cfg, have)
    for rd in range(cfg.rounds):
        k = rd % len(groups)
        order = groups[k:] + groups[:k]
        log("round %d of %d" % (rd + 1, cfg.rounds))
        for group, contenders in order:
            if rd % 2:
                contenders = list(reversed(contenders))
            for label, cpus, server, fn in contenders:
                if server is not None:
                    daemon.pin(server)
                else:
                    daemon.pin(set(cfg.cpus))
                figures = checked(cfg, "%s/%s" % (group, label), cpus,
                                  daemon if server is not None else None, fn)
                runs.append({"round": rd, "group": group, "contender": label,
                             "figures": figures})
    daemon.pin(set(cfg.cpus))
    return runs


# --- the 2 + 2 run ----------------------------------------------------------

PROCS_22 = pt.PROCS["2+2"]  # (name, role, N, writer id)


def run_22(cfg, variant, rd):
    """One 2 + 2 run: Displayers in @variant ("java" or "c") against the C
    Randomizers, pinned in pairing rd % 3; a record like scenario 1's."""
    seconds = cfg.seconds_22
    windows = max(1, int(round(seconds / pt.WINDOW_S)))
    d = pt.Daemon(cfg.pbusd, SCHEMA, "bench-java22-%d" % os.getpid(), cfg.tmp)
    procs, problems, results = [], [], {}
    try:
        start_ns = time.monotonic_ns() + int(cfg.lead_22 * 1e9)
        end_ns = start_ns + int(windows * pt.WINDOW_S * 1e9)
        for name, role, n, wid in PROCS_22:
            out = os.path.join(cfg.tmp, "22-%s-%s.json" % (variant, name))
            if os.path.exists(out):
                os.unlink(out)
            cpuset = pt.placement("2+2", name, cfg.cpus, "rotate", rd)
            args = ["run", "--role", role, "--n", str(n), "--id", str(wid), "--target",
                    d.instance, "--start-ns", str(start_ns), "--windows", str(windows),
                    "--out", out]
            if role == "displayer" and variant == "java":
                argv = cfg.java_cmd + [BENCH + "Displayer"] + args
            else:
                argv = [cfg.param_table] + args
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, preexec_fn=pinned(cpuset))
            procs.append((name, p, out, sorted(cpuset)))
        used = set().union(*(set(c) for _, _, _, c in procs))
        pt.sleep_until(start_ns)
        s0, d0 = hoststat.cpu_jiffies(used), pt.proc_ticks(d.proc.pid)
        pt.sleep_until(end_ns)
        s1, d1 = hoststat.cpu_jiffies(used), pt.proc_ticks(d.proc.pid)
        got, trouble = pt.collect_runs(procs, end_ns, "2+2 %s" % variant)
        problems.extend(trouble)
        for name, r in got.items():
            if r["torn_double"] or r["torn_record"]:
                problems.append("2+2 %s %s read %d torn doubles and %d torn records"
                                % (variant, name, r["torn_double"], r["torn_record"]))
            results[name] = r
    finally:
        for _, p, _, _ in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        complaint = d.stop()
        if complaint:
            problems.append(complaint)
    dur = windows * pt.WINDOW_S
    capacity = len(used) * dur * CLK_TCK
    ours = sum(max(0, r["cpu_ticks"]) for r in results.values())
    other = s1["busy"] - s0["busy"] - ours - ((d1 - d0) if d0 is not None and d1 is not None else 0)
    k = pt.pairing("2+2", cfg.cpus, "rotate", rd)
    return {"variant": variant, "scenario": "2+2", "round": rd, "seconds": dur,
            "windows": windows, "procs": results, "problems": problems,
            "pairing": pt.PAIRINGS[k][0] if k is not None else None,
            "other_cpu_fraction": round(max(0, other) / capacity, 4),
            "steal_fraction": round((s1["steal"] - s0["steal"]) / capacity, 4)}


def rounds_22(cfg):
    runs = []
    for rd in range(cfg.rounds_22):
        order = cfg.variants_22 if rd % 2 == 0 else list(reversed(cfg.variants_22))
        for variant in order:
            best = None
            for attempt in range(1, cfg.attempts + 1):
                cpus = set(cfg.cpus)
                waited = wait_quiet(cfg, cpus)
                rec = run_22(cfg, variant, rd)
                rec.update(attempt=attempt, waited_for_quiet_s=waited)
                level = max(rec["other_cpu_fraction"], rec["steal_fraction"])
                rec["disturbed"] = level > cfg.disturbed
                s = rec["procs"]
                log("  2+2 %-4s round %d (%s) attempt %d: %s; other %.1f%% steal %.1f%%%s%s" % (
                    variant, rd + 1, rec["pairing"], attempt, ", ".join(
                        "%s %.1f Mops/s worst %d torn %d" % (
                            n, pt.mops(statistics.median(s[n]["windows"])), min(s[n]["windows"]),
                            s[n]["torn_double"] + s[n]["torn_record"])
                        for n in pt.COLUMNS if n in s),
                    100 * rec["other_cpu_fraction"], 100 * rec["steal_fraction"],
                    " DISTURBED" if rec["disturbed"] else "",
                    "".join("\n    PROBLEM: " + p for p in rec["problems"])))
                if best is None or rec["problems"] or level < best[0]:
                    best = (level, rec)
                if not rec["disturbed"] or rec["problems"]:
                    break
            best[1]["attempts"] = attempt
            runs.append(best[1])
    return runs


# --- figures --------------------------------------------------------------

def collect(runs):
    """Per figure name: the list of its runs' figures, over the rounds."""
    out = {}
    for r in runs:
        for name, f in r["figures"].items():
            out.setdefault(name, []).append(dict(f, round=r["round"]))
    return out


def median_score(figs, name):
    xs = [f["score"] for f in figs.get(name, [])]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


TARGETS = [("java_read_vs_c_read", ">=", 0.8), ("java_read_vs_array_read", ">=", 0.25),
           ("java_read_bytes_per_op", "<", 0.01), ("ffm_call_vs_jni_call", ">=", 1.0),
           ("java_socket_get_vs_c_socket_get", ">=", 0.8),
           ("java_displayer_torn", "==", 0), ("java_displayer_empty_windows", "==", 0)]


def keys(figs, summary22):
    m = {name: median_score(figs, name) for name in figs}
    res = {}
    res["java_read_vs_c_read"] = ratio(m.get("c_read"), m.get("ReadBench.javaRead"))
    res["java_read_vs_array_read"] = ratio(m.get("ReadBench.arrayRead"), m.get("ReadBench.javaRead"))
    res["ffm_call_vs_jni_call"] = ratio(m.get("CallBench.jniNull"), m.get("CallBench.ffmCriticalNull"))
    res["java_socket_get_vs_c_socket_get"] = ratio(m.get("c_get_same"), m.get("java_get_same"))
    # Beside the keys: the same comparisons another way.
    res["java_socket_get_vs_c_socket_get_cross_cpu"] = ratio(m.get("c_get_cross"),
                                                             m.get("java_get_cross"))
    res["ffm_noncritical_call_vs_jni_call"] = ratio(m.get("CallBench.jniNull"),
                                                    m.get("CallBench.ffmNull"))
    res["java_read_vs_segment_acquire_read"] = ratio(m.get("ReadBench.segmentAcquireRead"),
                                                     m.get("ReadBench.javaRead"))
    res["java_read_vs_segment_seqlock_read"] = ratio(m.get("ReadBench.segmentSeqlockRead"),
                                                     m.get("ReadBench.javaRead"))
    res["c_read_vs_c_array_read"] = ratio(m.get("c_array_read"), m.get("c_read"))
    res["java_array_read_vs_c_array_read"] = ratio(m.get("c_array_read"),
                                                   m.get("ReadBench.arrayRead"))

    def alloc(name):
        xs = [f["alloc_b_per_op"] for f in figs.get(name, []) if f.get("alloc_b_per_op") is not None]
        return round(max(xs), 5) if xs else None
    res["java_read_bytes_per_op"] = alloc("ReadBench.javaRead")
    res["java_socket_get_bytes_per_op"] = alloc("java_get_same")
    res["ffm_call_bytes_per_op"] = alloc("CallBench.ffmCriticalNull")
    res["ns_per_op"] = {k: round(v, 4) if v is not None else None for k, v in sorted(m.items())}
    # Per round, the same ratios (each round a side-by-side run of its own).
    per_round = {}
    rounds = sorted({f["round"] for fs in figs.values() for f in fs})
    for rd in rounds:
        s = {name: next((f["score"] for f in fs if f["round"] == rd), None)
             for name, fs in figs.items()}
        for key, a, b in (("java_read_vs_c_read", "c_read", "ReadBench.javaRead"),
                          ("java_read_vs_array_read", "ReadBench.arrayRead", "ReadBench.javaRead"),
                          ("ffm_call_vs_jni_call", "CallBench.jniNull", "CallBench.ffmCriticalNull"),
                          ("java_socket_get_vs_c_socket_get", "c_get_same", "java_get_same")):
            per_round.setdefault(key, []).append(ratio(s.get(a), s.get(b)))
    res["per_round"] = per_round
    # The largest JMH-style error of each figure over the rounds (fraction).
    res["max_error_fraction"] = {
        name: round(max(f["error"] / f["score"] for f in fs), 4)
        for name, fs in sorted(figs.items())
        if all(f.get("error") is not None and f["error"] == f["error"] and f["score"] > 0 for f in fs)}
    if summary22:
        j, c = summary22.get("java"), summary22.get("c")
        if j:
            d = [j["2+2"][n] for n in ("displayer1", "displayer2") if n in j["2+2"]]
            res["java_displayer_worst_window_ops"] = min(p["worst_window_ops"] for p in d)
            res["java_displayer_empty_windows"] = sum(p["empty_windows"] for p in d)
            res["java_displayer_torn"] = sum(p["torn"] for p in d)
            res["java_displayer_mops"] = [p["mops_median"] for p in d]
        if j and c:
            res["java_displayer_vs_c_displayer"] = ratio(pt.displayer_rate(j["2+2"]),
                                                         pt.displayer_rate(c["2+2"]))
            res["c_displayer_worst_window_ops"] = min(c["2+2"][n]["worst_window_ops"]
                                                      for n in ("displayer1", "displayer2"))
            res["randomizer200_with_java_vs_with_c"] = ratio(
                j["2+2"]["randomizer200"]["mops_median"], c["2+2"]["randomizer200"]["mops_median"])
    return res


def table(res, figs, summary22):
    lines = ["ns per operation (median of the rounds; the largest 99.9 % error of a round):",
             "| figure | ns/op | error | B/op |", "|---|---:|---:|---:|"]
    for name in sorted(figs):
        fs = figs[name]
        b = [f.get("alloc_b_per_op") for f in fs if f.get("alloc_b_per_op") is not None]
        err = res["max_error_fraction"].get(name)
        lines.append("| %s | %.3f | %s | %s |" % (
            name, median_score(figs, name), "%.1f %%" % (100 * err) if err is not None else "-",
            "%.4f" % max(b) if b else "-"))
    if summary22:
        lines += ["", "2 + 2 (Mops/s, median of the 100 ms windows):",
                  "| Displayers | Displayer 1 | Displayer 2 | Randomizer 2 | Randomizer 200 "
                  "| worst window (Displayers) | torn |", "|---|---:|---:|---:|---:|---:|---:|"]
        for v in ("java", "c"):
            if v in summary22:
                s = summary22[v]["2+2"]
                lines.append("| %s | %s | %d | %d |" % (
                    v, " | ".join("%.2f" % s[c]["mops_median"] if c in s else "-"
                                  for c in pt.COLUMNS),
                    min(s[c]["worst_window_ops"] for c in ("displayer1", "displayer2")),
                    sum(s[c]["torn"] for c in pt.COLUMNS if c in s)))
    lines += ["", "| key | value | target | |", "|---|---:|---|---|"]
    for k, op, lim in TARGETS:
        v = res.get(k)
        lines.append("| `%s` | %s | %s %s | %s |" % (k, v, op, lim,
                                                     "met" if target_met(v, op, lim) else "MISSED"))
    for k in ("java_socket_get_vs_c_socket_get_cross_cpu", "ffm_noncritical_call_vs_jni_call",
              "java_read_vs_segment_acquire_read", "java_read_vs_segment_seqlock_read",
              "c_read_vs_c_array_read",
              "java_array_read_vs_c_array_read", "java_displayer_worst_window_ops",
              "java_displayer_vs_c_displayer", "java_socket_get_bytes_per_op"):
        if res.get(k) is not None:
            lines.append("| `%s` | %s | | |" % (k, res[k]))
    return "\n".join(lines)


# --- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the CMake build directory")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run of seconds (figures not for reporting)")
    ap.add_argument("--rounds", type=int, help="rounds of the read, call and socket runs "
                                               "(full: 5, quick: 1)")
    ap.add_argument("--rounds-22", type=int, help="rounds of the 2 + 2 run (full: 3, quick: 1)")
    ap.add_argument("--disturbed", type=float, default=0.05,
                    help="fraction of the CPUs in use that others may take before a run is "
                         "repeated (default 0.05)")
    ap.add_argument("--max-error", type=float, default=0.10,
                    help="repeat a run whose 99.9 %% error exceeds this fraction of its score "
                         "(full mode; default 0.10)")
    ap.add_argument("--attempts", type=int, help="attempts per run (full: 3, quick: 1)")
    ap.add_argument("--quiet-wait", type=float,
                    help="before each run, wait at most this long for quiet (full: 60 s, quick: 0)")
    ap.add_argument("--parts", default="read,call,socket,2+2",
                    help="which comparisons to run (default all: read,call,socket,2+2; the "
                         "keys of the others are left out)")
    ap.add_argument("--out", help="JSON output (default BUILD_DIR/../bench/java.json: "
                                  "build/bench/java.json for build/dev)")
    cfg = ap.parse_args()

    cfg.build = os.path.abspath(cfg.build)
    cfg.parts = set(cfg.parts.split(","))
    if not cfg.parts <= {"read", "call", "socket", "2+2"}:
        ap.error("--parts: read, call, socket or 2+2")
    cfg.out = cfg.out or os.path.join(os.path.dirname(cfg.build), "bench", "java.json")
    cfg.cpus = sorted(os.sched_getaffinity(0))
    cfg.pbusd = os.path.join(cfg.build, "daemon", "pbusd")
    cfg.read_double = os.path.join(cfg.build, "bench", "read-double")
    cfg.null_lib = os.path.join(cfg.build, "bench", "libpbus-bench-null.so")
    cfg.socket_server = os.path.join(cfg.build, "bench", "socket-server")
    cfg.param_table = os.path.join(cfg.build, "bench", "param-table-parambus")
    for f in (cfg.pbusd, cfg.read_double, cfg.null_lib, cfg.socket_server, cfg.param_table):
        if not os.path.exists(f):
            ap.error("%s is missing: build the bench targets first (ninja -C %s)"
                     % (f, os.path.relpath(cfg.build)))
    if cfg.quick:
        cfg.rounds = cfg.rounds or 1
        cfg.rounds_22 = cfg.rounds_22 or 1
        cfg.attempts = cfg.attempts or 1
        cfg.quiet_wait = 0 if cfg.quiet_wait is None else cfg.quiet_wait
        cfg.jmh = {"warmup": 1, "iterations": 2, "time_ms": 100}
        cfg.gets = {"same": 5000, "cross": 1000}
        cfg.seconds_22, cfg.lead_22 = 1.0, 1.5
        cfg.max_error = float("inf")  # 2 iterations: the error means nothing
    else:
        cfg.rounds = cfg.rounds or 5
        cfg.rounds_22 = cfg.rounds_22 or 3
        cfg.attempts = cfg.attempts or 3
        cfg.quiet_wait = 60 if cfg.quiet_wait is None else cfg.quiet_wait
        cfg.jmh = {"warmup": 3, "iterations": 8, "time_ms": 500}
        cfg.gets = {"same": 300000, "cross": 60000}
        cfg.seconds_22, cfg.lead_22 = 5.0, 3.0

    try:
        cfg.java_home = subprocess.run([os.path.join(REPO, "scripts", "java-env")], check=True,
                                       capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        log("run-java: %s" % e.stderr.strip())
        return 1
    cfg.java = os.path.join(cfg.java_home, "bin", "java")
    version = subprocess.run(["sed", "-n", r"s/^project(parambus VERSION \([0-9.]*\).*/\1/p",
                              os.path.join(REPO, "CMakeLists.txt")],
                             capture_output=True, text=True).stdout.strip() or "0.1.0"
    cfg.parambus_jar = os.path.join(cfg.build, "java", "parambus-%s.jar" % version)
    cfg.bench_jar = os.path.join(cfg.build, "bench", "java", "benchmarks.jar")
    cfg.java_cmd = [cfg.java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    cfg.bench_jar + ":" + cfg.parambus_jar]

    t_begin = time.monotonic()
    failures = []
    cfg.tmp = tempfile.mkdtemp(prefix="pbus-bench-java-")
    runs, runs22, have = [], [], set()
    machine = hoststat.machine_info(REPO, cfg.build, "bench/java/native/read-double.c",
                                    "read-double")
    daemon = None
    try:
        log("run-java: building the jars (Maven)")
        build_jars(cfg)
        have = jmh_benchmarks(cfg)
        machine["java"] = java_version(cfg)
        log("run-java: %s, %d CPUs, kernel %s; %s; %s mode, %d rounds; benchmarks: %s"
            % (machine["cpu_model"], machine["cores"], machine["kernel"], machine["java"][0],
               "quick" if cfg.quick else "full", cfg.rounds, ", ".join(sorted(have))))
        for part, needed in (("read", "ReadBench.javaRead"), ("socket", "SocketGetBench.javaGet")):
            if part in cfg.parts and needed not in have:
                failures.append("%s is not in the benchmarks' jar" % needed)
        cfg.instance = "bench-java-%d" % os.getpid()
        if cfg.parts - {"2+2"}:
            daemon = Pbusd(cfg, cfg.tmp, cfg.instance)
            runs = micro_rounds(cfg, have, daemon)
            complaint = daemon.stop()
            daemon = None
            if complaint:
                failures.append(complaint)
        if "2+2" in cfg.parts:
            with zipfile.ZipFile(cfg.bench_jar) as z:
                cfg.variants_22 = ["java", "c"] if "io/parambus/bench/Displayer.class" in \
                    z.namelist() else ["c"]
            if "java" not in cfg.variants_22:
                failures.append("io.parambus.bench.Displayer is not in the benchmarks' jar")
            runs22 = rounds_22(cfg)
            for r in runs22:
                failures += r["problems"]
    except Failure as e:
        failures.append(str(e))
    except KeyboardInterrupt:
        failures.append("interrupted")
    finally:
        if daemon:
            daemon.stop()
        shutil.rmtree(cfg.tmp, ignore_errors=True)

    figs = collect(runs)
    summary22 = {}
    for v in ("java", "c"):
        s = pt.summarise([r for r in runs22 if r["variant"] == v])
        if v in s:
            summary22[v] = s[v]
    res = keys(figs, summary22)
    doc = {
        "benchmark": "java",
        "mode": "quick" if cfg.quick else "full",
        "command": "bench/run-java.py %s%s%s" % (
            "--quick " if cfg.quick else "",
            "--parts %s " % ",".join(sorted(cfg.parts)) if len(cfg.parts) < 4 else "",
            os.path.relpath(cfg.build, REPO)),
        "machine": machine,
        "config": {
            "rounds": cfg.rounds, "rounds_22": cfg.rounds_22, "jmh": cfg.jmh,
            "jmh_options": "-f 1 -bm avgt -tu ns -prof gc (JMH 1.37)",
            "c_read": "bench/read-double: the same warm-up and measured iterations as JMH's, "
                      "an acquire look at a done flag per read as JMH's loop",
            "gets": cfg.gets, "param": PARAM,
            "placement": {"read, call": "pinned to CPU %d" % cfg.cpus[-1],
                          "socket same": "client and pbusd on CPU %d" % cfg.cpus[-1],
                          "socket cross": "client on CPU %d, pbusd on CPU %d"
                                          % (cfg.cpus[-1], cfg.cpus[0]),
                          "2+2": "two to a CPU, round r in scenario 1's pairing r % 3"},
            "seconds_22": cfg.seconds_22, "lead_22_s": cfg.lead_22,
            "disturbed_threshold": cfg.disturbed, "max_error": cfg.max_error,
            "attempts": cfg.attempts, "quiet_wait_s": cfg.quiet_wait,
        },
        "benchmarks_in_jar": sorted(have),
        "elapsed_s": round(time.monotonic() - t_begin, 1),
        "failures": failures,
    }
    doc.update(res)
    doc["targets"] = {k: {"target": "%s %s" % (op, lim), "met": target_met(res.get(k), op, lim)}
                      for k, op, lim in TARGETS}
    doc["two_plus_two"] = summary22
    doc["runs"] = runs
    doc["runs_22"] = runs22
    # The hardware part (bench/run-java-hw.py, in the VM) shares this file: keep its keys.
    try:
        with open(cfg.out) as f:
            old = json.load(f)
        hw = old.get("hardware")
        if isinstance(hw, dict):
            doc["hardware"] = hw
            doc.update({k: v for k, v in hw.get("keys", {}).items() if k.startswith("java_")})
            doc["targets"].update(hw.get("targets", {}))
    except (OSError, ValueError):
        pass
    os.makedirs(os.path.dirname(cfg.out), exist_ok=True)
    with open(cfg.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(cfg.out + ".tmp", cfg.out)
    print(table(res, figs, summary22))
    print("\nwritten: %s (%.0f s)" % (os.path.relpath(cfg.out), doc["elapsed_s"]))
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
