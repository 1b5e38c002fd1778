#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 5, its hardware part: Java FFM against C, in the VM.

    bench/run-java-hw.py [--quick] [--runs N] [--out build/bench/java.json]

Boots the kernel-test VM (tests/kernel: the same kernel, gpio-sim and mock
drivers, the guest's Java runtime cut from the host's JDK) with two programs
in the plan, run one after the other in the same boot:

  bench-hw-c     bench/hw/bench-hw.c built without libgpiod: libparambus-hw
                 ("parambus") and the bare ioctl ("raw_ioctl") for GPIO set,
                 GPIO get, a 24-byte prepared SPI transfer, an SMBus byte
                 read, and the edge round trip;
  bench-java-hw  bench/java-hw/ (io.parambus.bench.hw.HwBench): the same
                 operations through io.parambus.hw ("java"), and the bare
                 ioctl through an FFM downcall ("java_raw"), with the same
                 iterations, rounds and interleaving; the edge round trip to
                 a listener on the event poller, and 10,000 edges on 8 lines
                 at once counted for losses; bytes allocated per operation
                 (the thread's allocation counter).

The order of the two alternates between VM runs (default 3; --quick 1). A
figure is the median over rounds within a run; a key the median over runs of
C's figure divided by Java's (higher is better for Java). The keys are merged
into build/bench/java.json (the JMH part of bench/run-java.py keeps its own
keys there), with the per-run figures under "hardware".

PBUS_BENCH_JVM_FLAGS (environment): more options for the Java program's JVM,
for experiments (e.g. "-XX:-UsePerfData"); the figures name them.

Exit status 0, or 1 if a program failed to build or run; speed figures never
fail. Python 3 standard library only.
"""
import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KDIR = os.path.join(REPO, "tests", "kernel")
sys.dont_write_bytecode = True
sys.path.insert(0, KDIR)

import build  # noqa: E402  (tests/kernel/build.py)
import fetch  # noqa: E402
import hoststat  # noqa: E402  (bench/hoststat.py)
import vmbench  # noqa: E402  (bench/vmbench.py)
from targets import met_text as met  # noqa: E402  (bench/targets.py)

C_SRC = "bench/hw/bench-hw.c"
# The Java program's sources (bench/java-hw) are in the guest's jar of every kernel run
# (tests/kernel/build.py, JAVA_SOURCES).
JAVA_MAIN = "io.parambus.bench.hw.HwBench"

# key: (operation, C contender, Java contender); value = C ns / Java ns.
RATIOS = {
    "java_gpio_set_vs_c_gpio_set": ("gpio_set", "parambus", "java"),
    "java_gpio_get_vs_c_gpio_get": ("gpio_get", "parambus", "java"),
    "java_spi_prepared_vs_c": ("spi_24b", "prepared", "java"),
    "java_smbus_byte_vs_c": ("smbus_byte", "parambus", "java"),
    "java_gpio_set_vs_raw_ioctl": ("gpio_set", "raw_ioctl", "java"),
    "java_spi_prepared_vs_raw_ioctl": ("spi_24b", "raw_ioctl", "java"),
    "java_smbus_byte_vs_raw_ioctl": ("smbus_byte", "raw_ioctl", "java"),
    # The bounds: a bare FFM downcall of the same ioctl (no API around it), and one
    # linked critical (no thread-state transition), against C's bare ioctl.
    "java_raw_gpio_set_vs_c_raw_ioctl": ("gpio_set", "raw_ioctl", "java_raw"),
    "java_raw_critical_gpio_set_vs_c_raw_ioctl": ("gpio_set", "raw_ioctl", "java_raw_critical"),
    "java_raw_smbus_byte_vs_c_raw_ioctl": ("smbus_byte", "raw_ioctl", "java_raw"),
    "java_raw_locked_smbus_byte_vs_c_raw_ioctl": ("smbus_byte", "raw_ioctl", "java_raw_locked"),
    "java_raw_spi_vs_c_raw_ioctl": ("spi_24b", "raw_ioctl", "java_raw"),
}
TARGETS = {
    "java_gpio_set_vs_c_gpio_set": ">= 0.8",
    "java_spi_prepared_vs_c": ">= 0.8",
    "java_smbus_byte_vs_c": ">= 0.8",
    "java_edges_lost": "== 0",
    "java_edge_p99_over_p50": "< 10",
    "java_alloc_bytes_per_gpio_set": "== 0",
    "java_alloc_bytes_per_gpio_get": "== 0",
    "java_alloc_bytes_per_spi_prepared": "== 0",
}
PI4J_LISTENER_MS = "1.594 +- 5.830 ms (Pi4J 4.0 FFM plugin, JMH in a VM against gpio-sim)"


def log(msg):
    print(f"run-java-hw: {msg}", file=sys.stderr, flush=True)


def load_runner():
    loader = SourceFileLoader("kernel_run", os.path.join(KDIR, "run"))
    mod = module_from_spec(spec_from_loader("kernel_run", loader))
    loader.exec_module(mod)
    return mod


def run_keys(raw):
    c, j = raw.get("bench-hw-c", {}), raw.get("bench-java-hw", {})

    def ns(side, op, who):
        v = side.get(f"ns.{op}.{who}")
        return float(v) if v is not None else None

    keys = {}
    for k, (op, cw, jw) in RATIOS.items():
        a, b = ns(c, op, cw), ns(j, op, jw)
        keys[k] = round(a / b, 3) if a and b else None
    for k in ("edge_p50_us", "edge_p99_us", "edge_mean_us", "edge_stdev_us", "edges_lost",
              "edge_direct_p50_us", "edge_direct_p99_us", "edge_blocking_p50_us", "edge_blocking_p99_us",
              "edge_pool_p50_us", "edge_pool_p99_us",
              "edges_per_s"):
        keys["java_" + k] = float(j[k]) if k in j else None
    for k in ("edge_roundtrip_median_us", "edge_roundtrip_p99_us"):
        keys["c_" + k] = float(c[k]) if k in c else None
    p50, p99 = keys["java_edge_p50_us"], keys["java_edge_p99_us"]
    keys["java_edge_p99_over_p50"] = round(p99 / p50, 2) if p50 and p99 else None
    for op in ("gpio_set", "gpio_get", "spi_prepared", "smbus_byte"):
        v = j.get(f"alloc.{op}")
        keys[f"java_alloc_bytes_per_{op}"] = float(v) if v is not None else None
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few iterations (a smoke check, not the figures)")
    ap.add_argument("--runs", type=int, help="VM runs (default 3, --quick 1)")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench", "java.json"),
                    help="the JSON to merge the keys into (default build/bench/java.json)")
    args = ap.parse_args()
    runs_n = args.runs or (1 if args.quick else 3)
    iters, rounds = (100, 11) if args.quick else (500, 61)
    edges, storm = (100, 1000) if args.quick else (400, 10000)

    run = load_runner()
    kernel = fetch.fetch(quiet=False)
    moddir = build.build_modules(kernel, log)
    cprog = build.Program("bench-hw-c", C_SRC, "test")
    cprog.extra = ["-Ilib/hw", f"-DBENCH_ITERS={iters}", f"-DBENCH_ROUNDS={rounds}", "-Wextra", "-Werror", "-lm"]
    cprog.timeout = 600
    jprog = build.Program("bench-java-hw", None, "java")
    # The users' JIT (C2), not the C1-only default of the harness's test programs:
    # C1 leaves a 40-byte slice per errno-capturing downcall that C2 removes.
    jprog.extra = (["-XX:TieredStopAtLevel=4"] + os.environ.get("PBUS_BENCH_JVM_FLAGS", "").split()
                   + [JAVA_MAIN, str(iters), str(rounds), str(edges), str(storm)])
    jprog.timeout = 900
    runner = build.Program("pbus-guest-run", "tests/kernel/guest/pbus-guest-run.c", "runner")
    build.build_programs([runner, cprog], kernel.cache, log)
    for p in (runner, cprog):
        if p.error:
            log(p.error)
            return 1
    try:
        java = (build.build_jre(kernel.cache, log), build.build_java_jar(kernel.cache, log))
    except build.BuildError as e:
        log(str(e))
        return 1

    tmp = tempfile.mkdtemp(prefix="pbus-bench-java-hw-")
    per_run, raws, failures = [], [], []
    ok = True
    st0 = hoststat.cpu_jiffies()
    t0 = time.monotonic()
    try:
        for n in range(runs_n):
            order = [cprog, jprog] if n % 2 == 0 else [jprog, cprog]
            initramfs = os.path.join(tmp, f"initramfs-{n}.cpio")
            build.build_initramfs(kernel, moddir, order, [], [], runner, initramfs, java)
            memory = 1024 + (os.path.getsize(initramfs) >> 20)
            log(f"VM run {n + 1}/{runs_n}: {', '.join(p.name for p in order)} "
                f"({iters} iterations x {rounds} rounds)")
            out = io.StringIO()
            report = run.Report(True)
            with contextlib.redirect_stdout(out):
                ok = run.boot_and_report(kernel, initramfs, order, report,
                                         os.path.join(tmp, "console.log"), memory) and ok
            raw, fails = vmbench.parse(out.getvalue())
            failures += fails
            raws.append(raw)
            per_run.append(run_keys(raw))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    st1 = hoststat.cpu_jiffies()
    wall = time.monotonic() - t0
    for f in failures:
        log(f)

    keys, spread = {}, {}
    for k in per_run[0]:
        vals = [r[k] for r in per_run if r[k] is not None]
        keys[k] = round(statistics.median(vals), 3) if vals else None
        spread[k] = [min(vals), max(vals)] if vals else None
    if keys.get("java_edges_lost") is not None:  # losses add up, they are not a median
        keys["java_edges_lost"] = sum(r["java_edges_lost"] for r in per_run if r["java_edges_lost"] is not None)

    hardware = {
        "command": " ".join(["bench/run-java-hw.py"] + sys.argv[1:]),
        "mode": "quick" if args.quick else "full",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "vm": "qemu TCG -cpu max, 1 vCPU (tests/kernel harness); absolute times meaningless, ratios only",
        "jvm_options": jprog.extra[:jprog.extra.index(JAVA_MAIN)],
        "iterations": iters, "rounds": rounds, "edges": edges, "edge_storm": storm, "runs": runs_n,
        "pi4j_listener_figure": PI4J_LISTENER_MS,
        "keys": keys, "spread_over_runs": spread, "per_run": per_run, "raw": raws,
        "targets": {k: {"target": t, "met": met(keys.get(k), t)} for k, t in TARGETS.items()},
        "failures": failures, "vm_runs_s": round(wall, 1),
        "host": {"kernel": platform.release(), "cores": os.cpu_count(),
                 "busy_cpus_during_run": round((st1["busy"] - st0["busy"]) / max(1, st1["total"] - st0["total"])
                                               * (os.cpu_count() or 1), 2)},
    }
    doc = {}
    if os.path.exists(args.out):
        try:
            with open(args.out) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            log(f"{args.out} is not JSON; starting a new one")
            doc = {}
    doc.setdefault("benchmark", "java")
    doc.update({k: v for k, v in keys.items() if k.startswith("java_")})
    doc["hardware"] = hardware
    targets = doc.setdefault("targets", {})
    targets.update(hardware["targets"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    log(f"wrote {args.out} ({runs_n} VM run(s), {wall:.0f} s)")
    for k in sorted(keys):
        t = TARGETS.get(k)
        verdict = "" if t is None else ("met" if met(keys[k], t) else "MISSED") + f" (target {t})"
        print(f"{k:36s} {keys[k] if keys[k] is not None else '-':>10}  {spread[k]}  {verdict}")
    return 0 if ok and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
