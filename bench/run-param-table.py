#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 1, the parameter table (docs/benchmarks.md).

Runs the variants of bench/param-table.c side by side, interleaved, every
variant of a round under the same placement, and writes
build/bench/param-table.json and a table.

    bench/run-param-table.py [--quick] BUILD_DIR

BUILD_DIR holds bench/param-table-<variant> and daemon/pbusd. For the
parambus variants (parambus: the Randomizers write each pass as a prepared
batch, each value on its own, which the keys use; parambus-setter: one typed
setter call per value; parambus-atomic: each pass as one all-or-nothing batch)
every run starts a fresh pbusd on bench/schemas/param-table.pbs (instance
bench-<pid>) and stops it with SIGTERM afterwards. A variant whose binary is
missing from BUILD_DIR (seqlock-param-cas, parambus-setter, parambus-atomic in
an older build) is left out; the keys need the others. A binary of an older
source without the roles the hot-parameter and dead-writer runs need (its
`info` lists no features) is left out of those two runs.

Runs (full mode: 6 rounds of the first two, 3 of the hot-parameter run, 1 of
the 60 Hz and dead-writer runs; --quick shortens all of them and does one
round):
  uncontended  one Displayer, no writers, 3 s, pinned to the last CPU;
  2+2          Displayer 1 and 2, Randomizer 200 and Randomizer 2, 5 s, pinned
               two to a CPU; round r uses pairing r % 3 of PAIRINGS for every
               variant (--placement rotate, the default), so that each
               variant meets each pairing equally often and a round compares
               variants under one placement;
  hot          one parameter, p000, and nothing else: a Randomizer writes it
               flat out pinned to the first CPU while a Displayer reads it flat
               out pinned to the last, 2 s (a starved reader or writer shows as
               windows with no operation);
  60hz         the same four at 60 iterations per second, 10 s, in round 0's
               pairing;
  dead writer  a writer of p000 dies holding its claim: for the lock variants
               the hold role takes p000's lock (the table's, or makes its
               sequence odd) and stops itself, and is SIGKILLed; for parambus,
               whose public API has no way to stop a writer inside its write,
               a writer of p000 writing flat out is SIGKILLed at random
               instants until the probe role finds that a kill landed while
               it held p000 (its bias's write announced, or its lock word).
               Then for 2 s a Displayer reads all 201 parameters (pinned to
               the last CPU) while Randomizer 2 writes p000, p001 and the
               record (the first CPU). A process still running 2 s after the
               end is blocked in a lock for good: it is SIGKILLed and
               reported as hung, with what it had done by then (the
               --progress lines its timer wrote). --quick: 0.5 s of each of
               the new runs, 1 s of grace.
Every round runs every variant once per scenario, in an order rotated by one
each round. A variant's figure for a process is the median of all its 100 ms
windows over all rounds; the per-round ratios are in the JSON too. A run in which other processes used more than --disturbed of
the machine (busy time from /proc/stat minus that of our processes), or the
hypervisor stole more than that, is repeated (at most --attempts times; the
least disturbed attempt is kept and flagged).

Exit status: 0, or 1 if a synchronised variant read a torn value, a process
crashed, hung or reported errors, or pbusd failed. Speed figures never fail.
In the dead-writer run the lock variants' hangs and wedged readers are the
finding, not a failure; a parambus process that hangs, fails or reads
nothing there is a failure.
Python 3 standard library only.
"""
import argparse
import contextlib
import json
import os
import random
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import hoststat  # bench/hoststat.py
from targets import met as target_met  # bench/targets.py

VARIANTS = ["none", "mutex-table", "mutex-param", "rwlock-table", "rwlock-param",
            "seqlock-table", "seqlock-param", "seqlock-param-cas",
            "parambus", "parambus-setter", "parambus-atomic"]
LOCK_VARIANTS = VARIANTS[1:8]
SYNCHRONISED = VARIANTS[1:]
# The keys need these; the others add figures beside them when their
# binaries exist (an older build has not got them all).
REQUIRED = ["none", "mutex-table", "mutex-param", "rwlock-table", "rwlock-param",
            "seqlock-table", "seqlock-param", "parambus"]
# What a binary must offer (its `info`) for the hot-parameter and dead-writer runs.
NEW_FEATURES = {"record-option", "progress", "hold", "hammer", "probe"}
WINDOW_S = 0.1

# name, role, N, writer id
PROCS = {
    "uncontended": [("displayer1", "displayer", 200, 0)],
    "2+2": [("displayer1", "displayer", 200, 0), ("displayer2", "displayer", 200, 0),
            ("randomizer2", "randomizer", 2, 2), ("randomizer200", "randomizer", 200, 1)],
}
PROCS["60hz"] = PROCS["2+2"]
# One parameter, p000, written and read flat out (--n 1 --record 0).
PROCS["hot"] = [("displayer1", "displayer", 1, 0), ("randomizer1", "randomizer", 1, 1)]
NO_RECORD = {"hot"}
# After the writer's death: a Displayer of everything and Randomizer 2.
DEAD_PROCS = [("displayer1", "displayer", 200, 0), ("randomizer2", "randomizer", 2, 2)]
COLUMNS = ["displayer1", "displayer2", "randomizer2", "randomizer200"]
# The three ways to put the four processes two to a CPU: which pair shares a
# CPU decides how often a read meets a write, so the figures of one variant
# differ by up to 3x between them (the third is the hardest: while a
# Displayer runs, a Randomizer always runs on the other CPU).
PAIRINGS = [
    ("D1+R200 & D2+R2", ({"displayer1", "randomizer200"}, {"displayer2", "randomizer2"})),
    ("D1+R2 & D2+R200", ({"displayer1", "randomizer2"}, {"displayer2", "randomizer200"})),
    ("D1+D2 & R2+R200", ({"displayer1", "displayer2"}, {"randomizer2", "randomizer200"})),
]
LABEL = {"displayer1": "Displayer 1", "displayer2": "Displayer 2",
         "randomizer2": "Randomizer 2", "randomizer200": "Randomizer 200"}

CLK_TCK = hoststat.CLK_TCK
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failure(Exception):
    pass


# --- machine --------------------------------------------------------------

def machine_info(build):
    info = hoststat.machine_info(REPO, build, "bench/param-table.c", "param-table-parambus")
    try:  # the compiler as the benchmark reports it (__VERSION__)
        out = subprocess.run([binary(build, "none"), "info"], capture_output=True, text=True,
                             check=True).stdout
        info["compiler"] = json.loads(out)["compiler"]
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        pass
    return info


def reap(p):
    """Kill @p (a Popen with a stdout pipe) if it still runs, and close its pipe."""
    if p.poll() is None:
        p.kill()
        p.wait()
    p.stdout.close()


def proc_stat_fields(pid):
    """The fields of /proc/PID/stat after the command (state first), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rindex(")") + 2:].split()


def proc_ticks(pid):
    fields = proc_stat_fields(pid)
    return None if fields is None else int(fields[11]) + int(fields[12])  # utime, stime


# --- one run ---------------------------------------------------------------

def binary(build, variant):
    return os.path.join(build, "bench", "param-table-" + variant)


def features(build, variant):
    """What the binary offers beyond the 2 + 2 runs (its `info`)."""
    try:
        out = subprocess.run([binary(build, variant), "info"], capture_output=True,
                             text=True, check=True, timeout=10).stdout
        return set(json.loads(out).get("features", []))
    except (OSError, subprocess.SubprocessError, ValueError):
        return set()


def collect_runs(procs, end_ns, label):
    """Wait for the processes of one run ((name, Popen, JSON file, cpus) each,
    due to end at end_ns) and read what each wrote: ({name: result}, problems),
    a process that hangs (killed 10 s after the end), fails or reports failed
    calls being a problem named with `label`."""
    results, problems = {}, []
    for name, p, out, cpuset in procs:
        try:
            rc = p.wait(timeout=max(1.0, (end_ns - time.monotonic_ns()) / 1e9 + 10))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            problems.append("%s %s hung (killed 10 s after the end)" % (label, name))
            continue
        if rc != 0:
            problems.append("%s %s exited with %s" % (label, name, rc))
            continue
        with open(out) as f:
            r = json.load(f)
        r["cpus"] = cpuset
        if r["errors"]:
            problems.append("%s %s reported %d failed calls" % (label, name, r["errors"]))
        results[name] = r
    return results, problems


def sleep_until(t_ns):
    while True:
        d = t_ns - time.monotonic_ns()
        if d <= 0:
            return
        time.sleep(d / 1e9)


class Daemon:
    def __init__(self, pbusd, schema, instance, tmp):
        self.instance = instance
        rfd, wfd = os.pipe()
        self.log = open(os.path.join(tmp, "pbusd.log"), "w")
        state = os.path.join(tmp, "state")
        os.makedirs(state, exist_ok=True)
        self.proc = subprocess.Popen(
            [pbusd, "--schema", schema, "--instance", instance, "--notify-fd", str(wfd),
             "--state-dir", state],
            pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(wfd)
        buf = b""
        deadline = time.monotonic() + 10
        try:
            while b"READY=1\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([rfd], [], [], left)[0]:
                    raise Failure("pbusd did not report READY=1 within 10 s")
                chunk = os.read(rfd, 256)
                if not chunk:
                    self.proc.wait(timeout=5)
                    raise Failure("pbusd exited (%s) before READY=1: %s"
                                  % (self.proc.returncode, self.logtext()))
                buf += chunk
        except Failure:
            self.kill()
            raise
        finally:
            os.close(rfd)

    def logtext(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read().strip()[-2000:]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """SIGTERM; returns None if it exited cleanly, else a complaint."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return "pbusd did not exit within 10 s of SIGTERM"
        finally:
            self.log.close()
        return None if rc == 0 else "pbusd exited with %d: %s" % (rc, self.logtext())


def pairing(scenario, cpus, mode, rd):
    """The index in PAIRINGS that @scenario's processes use in round @rd
    under @mode, or None (uncontended, a single CPU, or unpinned)."""
    if scenario == "uncontended" or len(cpus) < 2:
        return None
    return {"rotate": rd % len(PAIRINGS), "pairs": 0}.get(mode)


def placement(scenario, procname, cpus, mode, rd):
    if scenario == "uncontended":
        return {cpus[-1]}
    if scenario in ("hot", "dead"):  # the writer on the first CPU, the reader on the last
        return {cpus[0]} if procname.startswith("randomizer") else {cpus[-1]}
    k = pairing(scenario, cpus, mode, rd)
    if k is None:
        return set(cpus)
    return {cpus[0]} if procname in PAIRINGS[k][1][0] else {cpus[1]}


@contextlib.contextmanager
def table_of(cfg, variant, tmp):
    """A fresh table for one run of @variant: yields (target, daemon). The
    parambus variants get an instance served by a pbusd of their own
    (daemon), the others a segment made by their binary (daemon None);
    either is gone afterwards, and a pbusd that complains fails the run."""
    daemon = None
    target = None
    try:
        if variant.startswith("parambus"):
            daemon = Daemon(cfg.pbusd, cfg.schema, "bench-%d" % os.getpid(), tmp)
            target = daemon.instance
        else:
            target = "pt-%d-%s" % (os.getpid(), variant)
            subprocess.run([binary(cfg.build, variant), "create", target], check=True)
        yield target, daemon
    finally:
        if daemon:
            complaint = daemon.stop()
            if complaint:
                raise Failure(complaint)
        elif target:
            subprocess.run([binary(cfg.build, variant), "destroy", target], check=False)


def run_once(cfg, variant, scenario, seconds, tmp, rd):
    """One run of one variant in one scenario: returns its record."""
    build = cfg.build
    with table_of(cfg, variant, tmp) as (target, daemon):

        windows = max(1, int(round(seconds / WINDOW_S)))
        hz = 60 if scenario == "60hz" else 0
        start_ns = time.monotonic_ns() + int(cfg.lead * 1e9)
        end_ns = start_ns + int(windows * WINDOW_S * 1e9)
        procs = []
        for name, role, n, wid in PROCS[scenario]:
            out = os.path.join(tmp, "%s-%s-%s.json" % (variant, scenario, name))
            if os.path.exists(out):
                os.unlink(out)
            cpuset = placement(scenario, name, cfg.cpus, cfg.placement, rd)
            argv = [binary(build, variant), "run", "--role", role, "--n", str(n),
                    "--id", str(wid), "--target", target, "--start-ns", str(start_ns),
                    "--windows", str(windows), "--out", out]
            if hz:
                argv += ["--hz", str(hz)]
            if scenario in NO_RECORD:
                argv += ["--record", "0"]
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                 preexec_fn=lambda c=cpuset: os.sched_setaffinity(0, c))
            procs.append((name, p, out, sorted(cpuset)))

        used = set().union(*(set(c) for _, _, _, c in procs))
        sleep_until(start_ns)
        s0 = hoststat.cpu_jiffies(used)
        d0 = proc_ticks(daemon.proc.pid) if daemon else None
        sleep_until(end_ns)
        s1 = hoststat.cpu_jiffies(used)
        d1 = proc_ticks(daemon.proc.pid) if daemon else None

        results, problems = collect_runs(procs, end_ns, variant)

    dur = windows * WINDOW_S
    capacity = len(used) * dur * CLK_TCK
    k = pairing(scenario, cfg.cpus, cfg.placement, rd)
    ours = sum(max(0, r["cpu_ticks"]) for r in results.values())
    daemon_ticks = (d1 - d0) if d0 is not None and d1 is not None else 0
    other = s1["busy"] - s0["busy"] - ours - daemon_ticks
    rec = {
        "variant": variant, "scenario": scenario, "seconds": dur, "windows": windows,
        "procs": results, "problems": problems, "cpus_watched": sorted(used),
        "pairing": PAIRINGS[k][0] if k is not None else None,
        "other_cpu_fraction": round(max(0, other) / capacity, 4),
        "steal_fraction": round((s1["steal"] - s0["steal"]) / capacity, 4),
    }
    if daemon:
        rec["pbusd_cpu_percent"] = round(100.0 * daemon_ticks / CLK_TCK / dur, 2)
    rec["disturbed"] = (rec["other_cpu_fraction"] > cfg.disturbed or
                        rec["steal_fraction"] > cfg.disturbed)
    return rec


def wait_quiet(cfg, cpus, log):
    """Before a run: wait (at most cfg.quiet_wait s) until the others' load over
    half a second stays under the disturbance threshold. Returns the seconds
    waited."""
    t0 = time.monotonic()
    said = False
    while True:
        a = hoststat.cpu_jiffies(cpus)
        time.sleep(0.5)
        b = hoststat.cpu_jiffies(cpus)
        load = ((b["busy"] - a["busy"]) + (b["steal"] - a["steal"])) / (
            len(cpus) * 0.5 * CLK_TCK)
        waited = time.monotonic() - t0
        if load <= cfg.disturbed or waited >= cfg.quiet_wait:
            return round(waited, 1)
        if not said:
            log("  (machine busy: %.0f%% of it used by others; waiting up to %.0f s)"
                % (100 * load, cfg.quiet_wait))
            said = True


def run_checked(cfg, variant, scenario, seconds, tmp, rd, log):
    """run_once, repeated while disturbed; keeps the least disturbed attempt."""
    best = None
    for attempt in range(1, cfg.attempts + 1):
        cpus = set().union(*(placement(scenario, p[0], cfg.cpus, cfg.placement, rd)
                             for p in PROCS[scenario]))
        waited = wait_quiet(cfg, cpus, log) if cfg.quiet_wait > 0 else 0
        rec = run_once(cfg, variant, scenario, seconds, tmp, rd)
        rec["waited_for_quiet_s"] = waited
        rec["attempt"] = attempt
        score = max(rec["other_cpu_fraction"], rec["steal_fraction"])
        log("  %-8s %-17s attempt %d: other %.1f%% steal %.1f%%%s%s" % (
            scenario, variant, attempt, 100 * rec["other_cpu_fraction"],
            100 * rec["steal_fraction"], " DISTURBED" if rec["disturbed"] else "",
            "".join("\n    PROBLEM: " + p for p in rec["problems"])))
        if best is None or rec["problems"] or score < best[0]:
            best = (score, rec)
        if not rec["disturbed"] or rec["problems"]:
            break
    best[1]["attempts"] = attempt
    return best[1]


# --- the dead writer ---------------------------------------------------------

def proc_state(pid):
    """The state letter of /proc/PID/stat (R, S, T, Z ...), or None."""
    fields = proc_stat_fields(pid)
    return None if fields is None else fields[0]


def read_line(p, timeout):
    """The first line @p writes on its stdout (a pipe), or None if it writes
    none within @timeout s."""
    deadline = time.monotonic() + timeout
    buf = b""
    fd = p.stdout.fileno()
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 256)
        if not chunk:
            return None
        buf += chunk
    return buf.split(b"\n", 1)[0].decode(errors="replace")


def probe(cfg, variant, target, pid):
    """The probe role's view of p000's claim (held by @pid or not)."""
    r = subprocess.run([binary(cfg.build, variant), "probe", "--target", target,
                        "--pid", str(pid)], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise Failure("%s probe failed (%d): %s" % (variant, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def kill_mid_write(cfg, variant, target):
    """Make p000's writer die holding its claim. Returns (how, attempts,
    the probe's view after the death)."""
    cpus = {cfg.cpus[0]}
    if not variant.startswith("parambus"):
        # The hold role claims p000 and stops itself; we kill it there.
        p = subprocess.Popen([binary(cfg.build, variant), "hold", "--target", target],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        try:
            line = read_line(p, 10)
            deadline = time.monotonic() + 10
            while line == "held" and proc_state(p.pid) not in ("T", "t"):
                if time.monotonic() > deadline:
                    line = None
                    break
                time.sleep(0.002)
            if line != "held":
                raise Failure("%s: the hold role did not claim p000 and stop (said %r)"
                              % (variant, line))
            p.kill()
            p.wait()
        finally:
            reap(p)
        return ("claimed p000 as a write does (hold role), stopped itself, SIGKILLed",
                1, probe(cfg, variant, target, p.pid))
    # parambus: no way to stop a writer inside its write through the public
    # API, so kill a real one writing flat out until a kill lands there.
    rng = random.Random()
    for attempt in range(1, cfg.kill_attempts + 1):
        p = subprocess.Popen([binary(cfg.build, variant), "hammer", "--target", target,
                              "--id", "1"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        try:
            line = read_line(p, 10)
            if line != "ready":
                raise Failure("%s: the hammer role did not start (said %r)" % (variant, line))
            # Past its start (opening, its first write takes the bias):
            # then about a tenth of its time is spent holding p000.
            time.sleep(rng.uniform(0.01, 0.03))
            p.kill()
            p.wait()
        finally:
            reap(p)
        seen = probe(cfg, variant, target, p.pid)
        if seen["held"]:
            return ("wrote p000 flat out (hammer role), SIGKILLed at a random instant until "
                    "a kill landed while it held p000", attempt, seen)
    raise Failure("%s: none of %d SIGKILLs of a writer of p000 landed while it held p000"
                  % (variant, cfg.kill_attempts))


def progress_of(path, nwindows):
    """The --progress lines of a process, up to the end of the run's
    @nwindows windows (its timer goes on while it hangs): (ops, iterations,
    per-window ops)."""
    cum = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and 0 < int(parts[0]) <= nwindows:
                    cum[int(parts[0])] = (int(parts[1]), int(parts[2]))
    except OSError:
        pass
    if not cum:
        return 0, 0, []
    last = max(cum)
    windows, prev = [], 0
    for t in range(1, last + 1):
        ops = cum.get(t, (prev, 0))[0]
        windows.append(ops - prev)
        prev = ops
    return cum[last][0], cum[last][1], windows


def kill_left(procs):
    """Kill and reap what still runs of @procs (records whose second item is
    the process)."""
    for entry in procs:
        if entry[1].poll() is None:
            entry[1].kill()
            entry[1].wait()


def run_dead(cfg, variant, seconds, tmp):
    """The dead-writer run of one variant: returns its record."""
    build = cfg.build
    rec = {"variant": variant, "seconds": seconds, "problems": []}
    procs = []
    with table_of(cfg, variant, tmp) as (target, daemon), contextlib.ExitStack() as reaper:
        reaper.callback(kill_left, procs)  # blocked for good, if interrupted
        rec["how"], rec["kill_attempts"], rec["claim_at_death"] = kill_mid_write(
            cfg, variant, target)

        windows = max(1, int(round(seconds / WINDOW_S)))
        start_ns = time.monotonic_ns() + int(cfg.lead * 1e9)
        end_ns = start_ns + int(windows * WINDOW_S * 1e9)
        for name, role, n, wid in DEAD_PROCS:
            out = os.path.join(tmp, "%s-dead-%s.json" % (variant, name))
            prog = os.path.join(tmp, "%s-dead-%s.progress" % (variant, name))
            for f in (out, prog):
                if os.path.exists(f):
                    os.unlink(f)
            cpuset = placement("dead", name, cfg.cpus, cfg.placement, 0)
            argv = [binary(build, variant), "run", "--role", role, "--n", str(n),
                    "--id", str(wid), "--target", target, "--start-ns", str(start_ns),
                    "--windows", str(windows), "--progress", prog, "--out", out]
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                 preexec_fn=lambda c=cpuset: os.sched_setaffinity(0, c))
            procs.append((name, p, out, prog, sorted(cpuset)))
        sleep_until(start_ns)
        t0 = {name: proc_ticks(p.pid) for name, p, _, _, _ in procs}
        sleep_until(end_ns)
        t1 = {name: proc_ticks(p.pid) for name, p, _, _, _ in procs}
        deadline = time.monotonic() + cfg.dead_grace
        for name, p, out, prog, cpuset in procs:
            r = {"cpus": cpuset, "hung": False}
            try:
                rc = p.wait(timeout=max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = None
                r["hung"] = True
            if rc is None:
                ops, its, w = progress_of(prog, windows)
                a, b = t0[name], t1[name]
                r.update({"ops": ops, "iterations": its, "windows": w, "torn": 0, "errors": 0,
                          "cpu_percent": round(100.0 * (b - a) / CLK_TCK / (windows * WINDOW_S), 1)
                          if a is not None and b is not None else None})
            elif rc != 0:
                rec["problems"].append("%s dead-writer %s exited with %s" % (variant, name, rc))
                continue
            else:
                with open(out) as f:
                    j = json.load(f)
                r.update({"ops": j["ops"], "iterations": j["iterations"], "windows": j["windows"],
                          "torn": j["torn_double"] + j["torn_record"], "errors": j["errors"],
                          "cpu_percent": round(100.0 * j["cpu_ns"] / 1e9 / (windows * WINDOW_S), 1)})
            w = r["windows"] or [0]
            r["mops_median"] = round(mops(statistics.median(w)), 3)
            r["worst_window_ops"] = min(w)
            r["empty_windows"] = sum(1 for x in w if x == 0)
            # ok: whole passes done (each begins with the dead writer's p000);
            # blocked: hung in a lock for good; spinning: retried to the end.
            r["state"] = ("blocked" if r["hung"] else "ok" if r["iterations"] > 0
                          else "spinning")
            rec[name] = r
    d, w = rec.get("displayer1"), rec.get("randomizer2")
    rec["reads_ok"] = bool(d and d["state"] == "ok")
    rec["writes_ok"] = bool(w and w["state"] == "ok")
    rec["wedged"] = not rec["reads_ok"]
    for name in ("displayer1", "randomizer2"):
        r = rec.get(name)
        if r and r["torn"] and variant in SYNCHRONISED:
            rec["problems"].append("%s dead-writer %s read %d torn values"
                                   % (variant, name, r["torn"]))
        if r and r["errors"]:
            rec["problems"].append("%s dead-writer %s reported %d failed calls"
                                   % (variant, name, r["errors"]))
    if variant.startswith("parambus"):
        for name, what in (("displayer1", "reads"), ("randomizer2", "writes")):
            r = rec.get(name)
            if r and r["state"] != "ok":
                rec["problems"].append("%s: after a writer died holding p000, %s %s"
                                       % (variant, what, r["state"]))
    return rec


# --- figures ---------------------------------------------------------------

def mops(ops_per_window):
    return ops_per_window / WINDOW_S / 1e6


def summarise(runs):
    """Pool the windows of every kept run per variant, scenario and process."""
    out = {}
    for rec in runs:
        v = out.setdefault(rec["variant"], {}).setdefault(rec["scenario"], {})
        for name, r in rec["procs"].items():
            p = v.setdefault(name, {"windows": [], "torn_double": 0, "torn_record": 0,
                                    "errors": 0, "cpu_percent": [], "cpu_percent_precise": [],
                                    "iterations_per_s": [], "round_mops": []})
            p["windows"] += r["windows"]
            p["torn_double"] += r["torn_double"]
            p["torn_record"] += r["torn_record"]
            p["errors"] += r["errors"]
            dur = rec["seconds"]
            p["cpu_percent"].append(round(100.0 * r["cpu_ticks"] / r["clk_tck"] / dur, 2))
            p["cpu_percent_precise"].append(round(100.0 * r["cpu_ns"] / 1e9 / dur, 3))
            p["iterations_per_s"].append(round(r["iterations"] / dur, 1))
            p["round_mops"].append(round(mops(statistics.median(r["windows"])), 3))
    for v in out.values():
        for s in v.values():
            for p in s.values():
                w = p.pop("windows")
                p["mops_median"] = round(mops(statistics.median(w)), 3)
                p["worst_window_ops"] = min(w)
                p["empty_windows"] = sum(1 for x in w if x == 0)
                p["windows_counted"] = len(w)
                p["torn"] = p["torn_double"] + p["torn_record"]
    return out


def ratio(a, b):
    return round(a / b, 3) if b else None


def displayer_rate(s):
    return (s["displayer1"]["mops_median"] + s["displayer2"]["mops_median"]) / 2


def beaten_by(summary, p22):
    """The lock-based variants of @summary that beat @p22 (a 2+2 summary) on
    Displayer and Randomizer 200 throughput at once."""
    return [v for v in LOCK_VARIANTS if "2+2" in summary.get(v, {})
            and displayer_rate(summary[v]["2+2"]) > displayer_rate(p22)
            and summary[v]["2+2"]["randomizer200"]["mops_median"]
            > p22["randomizer200"]["mops_median"]]


def keys(summary, runs):
    pb, floor = summary["parambus"], summary["none"]
    res = {}
    res["uncontended_read_vs_floor"] = ratio(pb["uncontended"]["displayer1"]["mops_median"],
                                             floor["uncontended"]["displayer1"]["mops_median"])
    p22, f22 = pb["2+2"], floor["2+2"]
    res["displayer_vs_floor"] = ratio(displayer_rate(p22), displayer_rate(f22))
    res["randomizer_vs_floor"] = ratio(p22["randomizer200"]["mops_median"],
                                       f22["randomizer200"]["mops_median"])
    locks = [v for v in LOCK_VARIANTS if "2+2" in summary.get(v, {})]
    best_d = max(locks, key=lambda v: displayer_rate(summary[v]["2+2"]))
    best_r = max(locks, key=lambda v: summary[v]["2+2"]["randomizer200"]["mops_median"])
    res["displayer_vs_best_lock"] = ratio(displayer_rate(p22),
                                          displayer_rate(summary[best_d]["2+2"]))
    res["randomizer_vs_best_lock"] = ratio(p22["randomizer200"]["mops_median"],
                                           summary[best_r]["2+2"]["randomizer200"]["mops_median"])
    res["best_lock_displayer"] = best_d
    res["best_lock_randomizer"] = best_r
    res["worst_window_ops"] = min(p["worst_window_ops"] for p in p22.values())
    dominators = beaten_by(summary, p22)
    res["dominated_by"] = len(dominators)
    res["dominated_by_variants"] = dominators
    # The same run with one typed setter call per value instead of a batch
    # per pass: informative, beside the keys above.
    if "parambus-setter" in summary:
        s22 = summary["parambus-setter"]["2+2"]
        res["setter_randomizer_vs_floor"] = ratio(s22["randomizer200"]["mops_median"],
                                                  f22["randomizer200"]["mops_median"])
        res["setter_displayer_vs_floor"] = ratio(displayer_rate(s22), displayer_rate(f22))
        res["setter_dominated_by"] = len(beaten_by(summary, s22))
    # And with each pass as one all-or-nothing batch.
    if "parambus-atomic" in summary:
        a22 = summary["parambus-atomic"]["2+2"]
        res["atomic_randomizer_vs_floor"] = ratio(a22["randomizer200"]["mops_median"],
                                                  f22["randomizer200"]["mops_median"])
        res["atomic_displayer_vs_floor"] = ratio(displayer_rate(a22), displayer_rate(f22))
        res["atomic_dominated_by"] = len(beaten_by(summary, a22))
    if "60hz" in pb:
        res["cpu_percent_60hz_max"] = max(max(p["cpu_percent"]) for p in pb["60hz"].values())
        res["cpu_percent_60hz_max_precise"] = max(max(p["cpu_percent_precise"])
                                                  for p in pb["60hz"].values())
        res["pbusd_cpu_percent_60hz"] = max(r.get("pbusd_cpu_percent", 0) for r in runs
                                            if r["variant"] == "parambus"
                                            and r["scenario"] == "60hz")
    # The same ratios within each round (each a side-by-side run of its own).
    per_round = {"uncontended_read_vs_floor": [], "displayer_vs_floor": [],
                 "randomizer_vs_floor": [], "dominated_by": []}
    rounds = sorted({r["round"] for r in runs})
    for rd in rounds:
        by = {(r["variant"], r["scenario"]): r["procs"] for r in runs if r["round"] == rd}

        def med(v, s, p):
            return mops(statistics.median(by[(v, s)][p]["windows"]))
        if ("parambus", "uncontended") in by and ("none", "uncontended") in by:
            per_round["uncontended_read_vs_floor"].append(
                ratio(med("parambus", "uncontended", "displayer1"),
                      med("none", "uncontended", "displayer1")))
        if ("parambus", "2+2") in by and ("none", "2+2") in by:
            d = [(med(v, "2+2", "displayer1") + med(v, "2+2", "displayer2")) / 2
                 for v in ("parambus", "none")]
            per_round["displayer_vs_floor"].append(ratio(d[0], d[1]))
            per_round["randomizer_vs_floor"].append(
                ratio(med("parambus", "2+2", "randomizer200"),
                      med("none", "2+2", "randomizer200")))
            pr = med("parambus", "2+2", "randomizer200")
            per_round["dominated_by"].append(sum(
                1 for v in LOCK_VARIANTS if (v, "2+2") in by
                and (med(v, "2+2", "displayer1") + med(v, "2+2", "displayer2")) / 2 > d[0]
                and med(v, "2+2", "randomizer200") > pr))
    res["per_round"] = per_round
    # The 2+2 ratios within each pairing (the rounds that used it, pooled).
    per_pairing = {}
    for name, _ in PAIRINGS:
        chosen = [r for r in runs if r["scenario"] == "2+2" and r.get("pairing") == name]
        sub = summarise(chosen)
        if "2+2" not in sub.get("parambus", {}) or "2+2" not in sub.get("none", {}):
            continue
        p, f = sub["parambus"]["2+2"], sub["none"]["2+2"]
        per_pairing[name] = {
            "rounds": len({r["round"] for r in chosen}),
            "displayer_vs_floor": ratio(displayer_rate(p), displayer_rate(f)),
            "randomizer_vs_floor": ratio(p["randomizer200"]["mops_median"],
                                         f["randomizer200"]["mops_median"]),
            "dominated_by": len(beaten_by(sub, p)),
            "mops": {v: [round(displayer_rate(sub[v]["2+2"]), 1),
                         round(sub[v]["2+2"]["randomizer200"]["mops_median"], 1)]
                     for v in sub if "2+2" in sub[v]},
        }
    res["per_pairing"] = per_pairing
    return res


def hot_figures(summary):
    """Per variant, the hot-parameter run's figures (pooled over its rounds)."""
    out = {}
    for v in VARIANTS:
        h = summary.get(v, {}).get("hot", {})
        if "displayer1" not in h or "randomizer1" not in h:
            continue
        d, r = h["displayer1"], h["randomizer1"]
        out[v] = {"displayer_mops": d["mops_median"], "randomizer_mops": r["mops_median"],
                  "displayer_worst_window_ops": d["worst_window_ops"],
                  "displayer_empty_windows": d["empty_windows"],
                  "randomizer_worst_window_ops": r["worst_window_ops"],
                  "randomizer_empty_windows": r["empty_windows"],
                  "windows": d["windows_counted"], "torn": d["torn"] + r["torn"]}
    return out


def describe(r):
    if r is None:
        return "-"
    if r["state"] == "blocked":
        return "**hung** in the lock (%s%% CPU)" % r["cpu_percent"]
    if r["state"] == "spinning":
        return "**wedged**: no pass, retried to the end (%s%% CPU)" % r["cpu_percent"]
    return "ok, %.1f Mops/s, worst window %d" % (r["mops_median"], r["worst_window_ops"])


def extra_tables(hot, dead, cfg):
    lines = []
    if hot:
        lines.append("")
        lines.append("Hot parameter: p000 alone, written flat out (Randomizer, CPU %d) and read "
                     "flat out (Displayer, CPU %d); Mops/s (median of 100 ms windows), worst = "
                     "fewest ops in a window, empty = windows with none:"
                     % (cfg.cpus[0], cfg.cpus[-1]))
        lines.append("| variant | Displayer | Randomizer | Displayer worst window "
                     "| Displayer empty windows | Randomizer worst window "
                     "| Randomizer empty windows | torn |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for v, h in hot.items():
            lines.append("| %s | %.2f | %.2f | %d | %d of %d | %d | %d of %d | %d |" % (
                v, h["displayer_mops"], h["randomizer_mops"], h["displayer_worst_window_ops"],
                h["displayer_empty_windows"], h["windows"], h["randomizer_worst_window_ops"],
                h["randomizer_empty_windows"], h["windows"], h["torn"]))
    if dead:
        secs = next(iter(dead.values()))["seconds"]
        lines.append("")
        lines.append("Dead writer: p000's writer SIGKILLed holding its claim; then for %.1f s a "
                     "Displayer reads all 201 parameters (p000 first) and Randomizer 2 writes "
                     "p000, p001 and the record. hung = still blocked %.0f s after the end "
                     "(killed); wedged = no pass completed:" % (secs, cfg.dead_grace))
        lines.append("| variant | writer killed | claim left | Displayer | reads | read p000 "
                     "| Randomizer 2 | writes |")
        lines.append("|---|---|---|---|---:|---|---|---:|")
        for v, r in dead.items():
            if "claim_at_death" not in r:
                lines.append("| %s | not measured: %s | | | | | | |" % (
                    v, "; ".join(r["problems"])))
                continue
            d, w = r.get("displayer1"), r.get("randomizer2")
            killed = ("holding p000 (hold role)" if not v.startswith("parambus") else
                      "while writing p000 flat out (kill %d)" % r["kill_attempts"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                v, killed, r["claim_at_death"]["how"], describe(d),
                d["ops"] if d else "-", "yes" if r["reads_ok"] else "**no**",
                describe(w), w["ops"] if w else "-"))
    return "\n".join(lines)


TARGETS = [("uncontended_read_vs_floor", ">=", 0.5), ("displayer_vs_floor", ">=", 0.5),
           ("randomizer_vs_floor", ">=", 0.3), ("worst_window_ops", ">", 0),
           ("dominated_by", "==", 0), ("cpu_percent_60hz_max", "<", 1.0)]


def table(summary, res, machine, cfg):
    lines = []
    lines.append("2 + 2 run, Mops/s (median of 100 ms windows), placement %s:" % cfg.placement)
    lines.append("| variant | Displayer 1 | Displayer 2 | Randomizer 2 | Randomizer 200 "
                 "| worst window | torn |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for v in [v for v in VARIANTS if "2+2" in summary.get(v, {})]:
        s = summary[v]["2+2"]
        lines.append("| %s | %s | %d | %d |" % (
            v, " | ".join("%.2f" % s[c]["mops_median"] for c in COLUMNS),
            min(s[c]["worst_window_ops"] for c in COLUMNS),
            sum(s[c]["torn"] for c in COLUMNS)))
    lines.append("")
    lines.append("Uncontended read (one Displayer) and 60 Hz CPU% (from /proc/PID/stat):")
    lines.append("| variant | uncontended Mops/s | 60 Hz CPU% D1 | D2 | R2 | R200 |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for v in [v for v in VARIANTS if "uncontended" in summary.get(v, {})]:
        u = summary[v]["uncontended"]["displayer1"]["mops_median"]
        h = summary[v].get("60hz")
        cpu = " | ".join("%.2f" % max(h[c]["cpu_percent"]) for c in COLUMNS) if h else \
            " | ".join("-" for _ in COLUMNS)
        lines.append("| %s | %.1f | %s |" % (v, u, cpu))
    lines.append("")
    lines.append("| key | value | target | |")
    lines.append("|---|---:|---|---|")
    for k, op, lim in TARGETS:
        val = res.get(k)
        lines.append("| `%s` | %s | %s %s | %s |" % (
            k, val, op, lim, "met" if target_met(val, op, lim) else "MISSED"))
    for k in ("displayer_vs_best_lock", "randomizer_vs_best_lock"):
        lines.append("| `%s` | %s | | |" % (k, res.get(k)))
    for k in ("hot_worst_window_ops", "dead_writer_reads_ok"):
        if k in res:
            lines.append("| `%s` | %s | | |" % (k, res[k]))
    if res.get("per_pairing"):
        lines.append("")
        lines.append("2 + 2 by pairing (Displayer mean / Randomizer 200, Mops/s):")
        lines.append("| pairing | rounds | none | seqlock-param | seqlock-param-cas | parambus "
                     "| displayer_vs_floor | randomizer_vs_floor | dominated_by |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, pp in res["per_pairing"].items():
            m = pp["mops"]
            cell = lambda v: "%.1f / %.1f" % tuple(m[v]) if v in m else "-"
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %d |" % (
                name, pp["rounds"], cell("none"), cell("seqlock-param"),
                cell("seqlock-param-cas"), cell("parambus"),
                pp["displayer_vs_floor"], pp["randomizer_vs_floor"], pp["dominated_by"]))
    return "\n".join(lines)


# --- main ------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the CMake build directory")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run of a few seconds (figures not for reporting)")
    ap.add_argument("--rounds", type=int, help="rounds (full: 6, quick: 1)")
    ap.add_argument("--rounds-60hz", type=int, help="rounds of the 60 Hz run (full: 1)")
    ap.add_argument("--rounds-hot", type=int,
                    help="rounds of the hot-parameter run (full: 3, quick: 1)")
    ap.add_argument("--kill-attempts", type=int, default=200,
                    help="dead-writer run, parambus: SIGKILLs of a writer of p000 to try "
                         "until one lands while it holds p000 (default 200)")
    ap.add_argument("--placement", choices=["rotate", "pairs", "shared"], default="rotate",
                    help="2+2 and 60 Hz: 'rotate' (default) pins the four two to a CPU, "
                         "round r in pairing r %% 3 (D1+R200 & D2+R2, D1+R2 & D2+R200, "
                         "D1+D2 & R2+R200) for every variant; 'pairs' always in the "
                         "first; 'shared' lets every process run on every CPU")
    ap.add_argument("--disturbed", type=float, default=0.05,
                    help="fraction of the machine others may use before a run is repeated")
    ap.add_argument("--attempts", type=int, help="attempts per run (full: 3, quick: 1)")
    ap.add_argument("--quiet-wait", type=float,
                    help="before each run, wait at most this long for the machine to be "
                         "quiet (full: 120 s, quick: 0)")
    ap.add_argument("--pbusd", help="the daemon (default BUILD/daemon/pbusd)")
    ap.add_argument("--out", help="JSON output (default build/bench/param-table.json)")
    ap.add_argument("--variants", help="comma-separated subset (for debugging; the keys "
                                       "need all of them)")
    cfg = ap.parse_args()

    cfg.build = os.path.abspath(cfg.build)
    cfg.pbusd = cfg.pbusd or os.path.join(cfg.build, "daemon", "pbusd")
    cfg.schema = os.path.join(REPO, "bench", "schemas", "param-table.pbs")
    cfg.out = cfg.out or os.path.join(REPO, "build", "bench", "param-table.json")
    cfg.cpus = sorted(os.sched_getaffinity(0))
    if cfg.quick:
        durations = {"uncontended": 0.3, "2+2": 0.5, "hot": 0.5, "60hz": 0.5, "dead": 0.5}
        cfg.rounds = cfg.rounds or 1
        cfg.rounds_60hz = cfg.rounds_60hz or 1
        cfg.rounds_hot = cfg.rounds_hot or 1
        cfg.dead_grace = 1.0
        cfg.attempts = cfg.attempts or 1
        cfg.quiet_wait = 0 if cfg.quiet_wait is None else cfg.quiet_wait
        cfg.lead = 0.15
    else:
        durations = {"uncontended": 3.0, "2+2": 5.0, "hot": 2.0, "60hz": 10.0, "dead": 2.0}
        cfg.rounds = cfg.rounds or 6
        cfg.rounds_60hz = cfg.rounds_60hz or 1
        cfg.rounds_hot = cfg.rounds_hot or 3
        cfg.dead_grace = 2.0
        cfg.attempts = cfg.attempts or 3
        cfg.quiet_wait = 120 if cfg.quiet_wait is None else cfg.quiet_wait
        cfg.lead = 0.3

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    variants = cfg.variants.split(",") if cfg.variants else list(VARIANTS)
    for v in list(variants):
        if v not in VARIANTS:
            ap.error("unknown variant %s" % v)
        if not os.access(binary(cfg.build, v), os.X_OK):
            if cfg.variants or v in REQUIRED:
                ap.error("%s is missing: build the bench targets first" % binary(cfg.build, v))
            log("param-table: %s is not in this build: left out" % v)
            variants.remove(v)
    if any(v.startswith("parambus") for v in variants) and not os.access(cfg.pbusd, os.X_OK):
        ap.error("%s is missing: build pbusd first" % cfg.pbusd)
    # The hot-parameter and dead-writer runs need roles an older binary lacks.
    new_runs = [v for v in variants if NEW_FEATURES <= features(cfg.build, v)]
    for v in variants:
        if v not in new_runs:
            log("param-table: %s has no hot-parameter and dead-writer roles (an older "
                "build?): left out of those runs" % v)

    machine = machine_info(cfg.build)
    log("param-table: %s, %d CPUs, kernel %s, %s; %s mode, %d rounds, placement %s"
        % (machine["cpu_model"], machine["cores"], machine["kernel"], machine["compiler"],
           "quick" if cfg.quick else "full", cfg.rounds, cfg.placement))

    runs, failures, dead = [], [], {}
    tmp = tempfile.mkdtemp(prefix="param-table-")
    t_begin = time.monotonic()
    try:
        schedule = []
        for rd in range(max(cfg.rounds, cfg.rounds_60hz, cfg.rounds_hot)):
            order = variants[rd % len(variants):] + variants[:rd % len(variants)]
            for scenario in ("uncontended", "2+2", "hot", "60hz"):
                if rd >= {"60hz": cfg.rounds_60hz, "hot": cfg.rounds_hot}.get(scenario,
                                                                             cfg.rounds):
                    continue
                for v in order:
                    if scenario != "hot" or v in new_runs:
                        schedule.append((rd, scenario, v))
        for rd, scenario, v in schedule:
            rec = run_checked(cfg, v, scenario, durations[scenario], tmp, rd, log)
            rec["round"] = rd
            runs.append(rec)
            failures += rec["problems"]
            for name, r in rec["procs"].items():
                if v in SYNCHRONISED and (r["torn_double"] or r["torn_record"]):
                    failures.append("%s %s %s read %d torn doubles and %d torn records"
                                    % (scenario, v, name, r["torn_double"], r["torn_record"]))
        # Last, once: a writer dies holding p000 (not a speed figure: not
        # repeated when disturbed).
        for v in new_runs:
            try:
                rec = run_dead(cfg, v, durations["dead"], tmp)
            except Failure as e:
                rec = {"variant": v, "seconds": durations["dead"], "problems": [str(e)]}
            dead[v] = rec
            d = rec.get("displayer1")
            log("  %-8s %-17s %s%s" % (
                "dead", v, "reads %s (%s), writes %s" % (
                    "ok" if rec.get("reads_ok") else "WEDGED", d["state"] if d else "-",
                    "ok" if rec.get("writes_ok") else "WEDGED") if "claim_at_death" in rec
                else "not measured",
                "".join("\n    PROBLEM: " + p for p in rec["problems"])))
            failures += rec["problems"]
    except Failure as e:
        failures.append(str(e))
    except KeyboardInterrupt:
        failures.append("interrupted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    summary = summarise(runs)
    doc = {
        "benchmark": "param-table",
        "mode": "quick" if cfg.quick else "full",
        "command": "bench/run-param-table.py %s%s" % ("--quick " if cfg.quick else "",
                                                      os.path.relpath(cfg.build, REPO)),
        "machine": machine,
        "config": {
            "variants": variants, "rounds": cfg.rounds, "rounds_60hz": cfg.rounds_60hz,
            "rounds_hot": cfg.rounds_hot, "hot_and_dead_writer_variants": new_runs,
            "seconds": durations, "window_s": WINDOW_S, "placement": cfg.placement,
            "placement_detail": {
                "uncontended": "the Displayer pinned to CPU %d" % cfg.cpus[-1],
                "2+2": ("every process may run on CPUs %s" % cfg.cpus
                        if pairing("2+2", cfg.cpus, cfg.placement, 0) is None else
                        "pinned two to a CPU (CPU %d | CPU %d): %s" % (
                            cfg.cpus[0], cfg.cpus[-1],
                            "; ".join("round %d: %s" % (
                                rd, PAIRINGS[pairing("2+2", cfg.cpus, cfg.placement, rd)][0])
                                for rd in range(cfg.rounds)))),
                "hot": "the Randomizer pinned to CPU %d, the Displayer to CPU %d"
                       % (cfg.cpus[0], cfg.cpus[-1]),
                "dead": "the killed writer and Randomizer 2 pinned to CPU %d, the Displayer "
                        "to CPU %d" % (cfg.cpus[0], cfg.cpus[-1]),
            },
            "hot": "one parameter: Randomizer --n 1 --record 0 writes p000 flat out, "
                   "Displayer --n 1 --record 0 reads p000 flat out; 1 op per iteration",
            "dead": "p000's writer dies holding its claim (lock variants: hold role, "
                    "SIGSTOP, SIGKILL; parambus: a flat-out writer SIGKILLed until the probe "
                    "finds it died holding p000); then Displayer (201 params) and "
                    "Randomizer 2 run for the period; a process still running %.1f s after "
                    "the end is killed and reported hung" % cfg.dead_grace,
            "kill_attempts_max": cfg.kill_attempts,
            "disturbed_threshold": cfg.disturbed, "attempts": cfg.attempts,
            "quiet_wait_s": cfg.quiet_wait,
            "ops": "Displayer iteration: 200 double reads + 1 record read = 201 ops; "
                   "Randomizer N iteration: N double writes + 1 record write = N + 1 ops",
        },
        "elapsed_s": round(time.monotonic() - t_begin, 1),
        "failures": failures,
    }
    # The keys need the floor, the lock variants and parambus; the other
    # parambus variants add figures beside them when they ran.
    have_all = all(v in summary and sc in summary[v]
                   and {p[0] for p in PROCS[sc]} <= set(summary[v][sc])
                   for v in REQUIRED for sc in ("uncontended", "2+2"))
    hot = hot_figures(summary)
    res = keys(summary, runs) if have_all else {}
    # parambus's keys from the two runs against the classics: its Displayer's
    # worst window with p000 written flat out, and whether it read on after
    # a writer died holding p000.
    if "parambus" in hot:
        res["hot_worst_window_ops"] = hot["parambus"]["displayer_worst_window_ops"]
    if "claim_at_death" in dead.get("parambus", {}):
        res["dead_writer_reads_ok"] = dead["parambus"]["reads_ok"]
    doc.update({k: v for k, v in res.items()})
    if have_all:
        doc["targets"] = {k: {"target": "%s %s" % (op, lim),
                              "met": target_met(res.get(k), op, lim)}
                          for k, op, lim in TARGETS}
    doc["hot_parameter"] = hot
    doc["dead_writer"] = dead
    doc["variants"] = summary
    doc["runs"] = runs
    os.makedirs(os.path.dirname(cfg.out), exist_ok=True)
    with open(cfg.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(cfg.out + ".tmp", cfg.out)

    if have_all:
        print(table(summary, res, machine, cfg))
    else:
        for v, s in summary.items():
            for sc, procs in s.items():
                print("%-17s %-11s %s" % (v, sc, "  ".join(
                    "%s %.2f Mops/s worst %d torn %d" % (n, p["mops_median"],
                                                         p["worst_window_ops"], p["torn"])
                    for n, p in procs.items())))
        for k in ("hot_worst_window_ops", "dead_writer_reads_ok"):
            if k in res:
                print("%s: %s" % (k, res[k]))
    print(extra_tables(hot, dead, cfg))
    disturbed = [r for r in runs if r["disturbed"]]
    if disturbed:
        print("\n%d run(s) stayed disturbed after %d attempts: %s" % (
            len(disturbed), cfg.attempts,
            ", ".join("%s/%s r%d" % (r["scenario"], r["variant"], r["round"])
                      for r in disturbed)))
    print("\nwritten: %s (%.0f s)" % (os.path.relpath(cfg.out), doc["elapsed_s"]))
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
