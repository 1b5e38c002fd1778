#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 4, hardware access (docs/benchmarks.md).

    bench/run-hw.py [--quick] [--out build/bench/hw.json] [--no-gpiod2]

Fetches the libgpiod peers into the cache (~/.cache/parambus/bench/libgpiod,
never into git): Debian bookworm's libgpiod-dev 1.6.3 (`apt-get download`,
static libgpiod.a) and libgpiod v2's C library from PyPI's gpiod 2.5.0 sdist
(`pip download --no-deps --no-binary :all:`), built here into a static
archive. Then builds bench/hw/bench-hw.c through the kernel harness
(tests/kernel/build.py: same compiler flags, lib/hw/*.c, kenv) into two
static binaries, bench-hw (libgpiod v1) and bench-hw-gpiod2 (libgpiod v2),
boots the harness's VM with only those two in the plan (the harness's
`make test` selection is untouched: nothing here is named test-*), collects
their `bench KEY VALUE` lines and writes the JSON.

Python 3 standard library only. Exit status 0, or 1 if a benchmark failed
to build or run (speed figures never fail the run).
"""
import argparse
import contextlib
import glob
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
import hoststat  # noqa: E402  (bench/hoststat.py, beside this file)
import vmbench  # noqa: E402  (bench/vmbench.py)
from targets import met  # noqa: E402  (bench/targets.py)

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "parambus", "bench", "libgpiod")
V1_DEB = "libgpiod-dev=1.6.3-1+b3"
V1_VERSION = "1.6.3"
V2_PYPI = "gpiod==2.5.0"
V2_DIR = "gpiod-2.5.0"
SRC = "bench/hw/bench-hw.c"

TARGETS = {
    "gpio_set_vs_raw_ioctl": 0.9,
    "gpio_get_vs_raw_ioctl": 0.9,
    "smbus_byte_vs_raw_ioctl": 0.9,
    "gpio_set_vs_libgpiod": 0.95,
    "gpio_bulk8_vs_8_single": 4.0,
    "spi_prepared_vs_raw_ioctl": 0.95,
}


def log(msg):
    print(f"run-hw: {msg}", file=sys.stderr, flush=True)


def fetch_peers(want_v2):
    """Return (v1_include, v1_lib, v2_include or None, v2_lib or None, v2_version)."""
    os.makedirs(CACHE, exist_ok=True)
    v1root = os.path.join(CACHE, "v1")
    v1lib = os.path.join(v1root, "usr", "lib", "x86_64-linux-gnu", "libgpiod.a")
    if not os.path.exists(v1lib):
        log(f"apt-get download {V1_DEB}")
        subprocess.run(["apt-get", "download", V1_DEB], cwd=CACHE, check=True,
                       stdout=subprocess.DEVNULL)
        deb = sorted(glob.glob(os.path.join(CACHE, "libgpiod-dev_1.6.3*.deb")))[-1]
        subprocess.run(["dpkg-deb", "-x", deb, v1root], check=True)
    v1inc = os.path.join(v1root, "usr", "include")
    if not want_v2:
        return v1inc, v1lib, None, None, None
    src = os.path.join(CACHE, V2_DIR)
    v2lib = os.path.join(CACHE, "libgpiod2.a")
    try:
        if not os.path.isdir(src):
            tgz = os.path.join(CACHE, V2_DIR + ".tar.gz")
            if not os.path.exists(tgz):
                log(f"pip download {V2_PYPI} (sdist)")
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                                "--no-binary", ":all:", V2_PYPI, "-d", CACHE], check=True,
                               stdout=subprocess.DEVNULL)
            subprocess.run(["tar", "xzf", tgz, "-C", CACHE], check=True)
        version = open(os.path.join(src, "libgpiod-version.txt")).read().strip()
        if not os.path.exists(v2lib):
            log(f"building libgpiod {version} (C library of the {V2_PYPI} sdist)")
            objdir = tempfile.mkdtemp(prefix="gpiod2-", dir=CACHE)
            objs = []
            for c in sorted(glob.glob(os.path.join(src, "lib", "*.c"))):
                o = os.path.join(objdir, os.path.basename(c)[:-2] + ".o")
                subprocess.run(["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-w",
                                "-I" + os.path.join(src, "include"), "-I" + os.path.join(src, "lib"),
                                f'-DGPIOD_API_VERSION_STR="{version}"', "-c", c, "-o", o], check=True)
                objs.append(o)
            tmp = v2lib + ".tmp"
            subprocess.run(["ar", "rcs", tmp] + objs, check=True)
            os.replace(tmp, v2lib)
            shutil.rmtree(objdir, ignore_errors=True)
        return v1inc, v1lib, os.path.join(src, "include"), v2lib, version
    except (subprocess.CalledProcessError, OSError) as e:
        log(f"libgpiod v2 unavailable ({e}); comparing against v1 only")
        return v1inc, v1lib, None, None, None


def load_runner():
    loader = SourceFileLoader("kernel_run", os.path.join(KDIR, "run"))
    mod = module_from_spec(spec_from_loader("kernel_run", loader))
    loader.exec_module(mod)
    return mod


def warnings_check(flags_v1, flags_v2):
    """The benchmark source must build warning-free with -Wall -Wextra."""
    base = ["gcc", "-c", "-o", os.devnull, "-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
            "-Iinclude", "-Itests/kernel/lib", SRC]
    for flags in (flags_v1, flags_v2):
        if flags is None:
            continue
        r = subprocess.run(base + [f for f in flags if f.startswith(("-D", "-I"))], cwd=REPO,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise build.BuildError("warnings/errors in " + SRC + ":\n" + r.stdout)


def main():
    ap = argparse.ArgumentParser(description="Scenario 4: hardware access, in the kernel-test VM.")
    ap.add_argument("--quick", action="store_true", help="few iterations (smoke check; not the reported figures)")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench", "hw.json"))
    ap.add_argument("--runs", type=int, default=None,
                    help="VM runs; each key is the median over runs (default 3, --quick 1)")
    ap.add_argument("--no-gpiod2", action="store_true", help="skip libgpiod v2")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    iters, rounds = (100, 11) if args.quick else (500, 61)

    v1inc, v1lib, v2inc, v2lib, v2ver = fetch_peers(not args.no_gpiod2)
    f1 = [f"-DBENCH_ITERS={iters}", f"-DBENCH_ROUNDS={rounds}", "-DBENCH_GPIOD_V1", "-I" + v1inc, "-Wextra", v1lib, "-lm"]
    f2 = ([f"-DBENCH_ITERS={iters}", f"-DBENCH_ROUNDS={rounds}", "-DBENCH_GPIOD_V2", "-I" + v2inc, "-Wextra", v2lib, "-lm"]
          if v2lib else None)
    warnings_check(f1, f2)

    run = load_runner()
    kernel = fetch.fetch(quiet=False)
    moddir = build.build_modules(kernel, log)
    progs = []
    for name, flags in (("bench-hw", f1), ("bench-hw-gpiod2", f2)):
        if flags is None:
            continue
        p = build.Program(name, SRC, "test")
        p.extra = ["-Ilib/hw"] + flags
        p.timeout = 300
        progs.append(p)
    runner = build.Program("pbus-guest-run", "tests/kernel/guest/pbus-guest-run.c", "runner")
    build.build_programs([runner] + progs, kernel.cache, log)
    for p in [runner] + progs:
        if p.error:
            log(p.error)
            return 1

    tmp = tempfile.mkdtemp(prefix="pbus-bench-hw-")
    runs = []
    failures = []
    ok = True
    st0 = hoststat.cpu_jiffies()
    t0 = time.monotonic()
    try:
        initramfs = os.path.join(tmp, "initramfs.cpio")
        build.build_initramfs(kernel, moddir, progs, [], [], runner, initramfs)
        for n in range(args.runs):
            log(f"VM run {n + 1}/{args.runs} ({', '.join(p.name for p in progs)}, "
                f"{iters} iterations x {rounds} rounds)")
            out = io.StringIO()
            report = run.Report(True)
            with contextlib.redirect_stdout(out):
                ok = run.boot_and_report(kernel, initramfs, progs, report,
                                         os.path.join(tmp, "console.log")) and ok
            raw, fails = vmbench.parse(out.getvalue())
            failures += fails
            runs.append(raw)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    st1 = hoststat.cpu_jiffies()
    wall = time.monotonic() - t0
    log(f"{args.runs} VM run(s) took {wall:.1f} s")
    for f in failures:
        log(f)

    b1, b2 = "bench-hw", "bench-hw-gpiod2"

    def run_keys(raw):
        def ns(binary, op, who):
            v = raw.get(binary, {}).get(f"ns.{op}.{who}")
            return float(v) if v is not None else None

        def ratio(a, b):
            return round(a / b, 3) if a and b else None

        keys = {
            "gpio_set_vs_raw_ioctl": ratio(ns(b1, "gpio_set", "raw_ioctl"), ns(b1, "gpio_set", "parambus")),
            "gpio_get_vs_raw_ioctl": ratio(ns(b1, "gpio_get", "raw_ioctl"), ns(b1, "gpio_get", "parambus")),
            "gpio_bulk8_vs_8_single": ratio(ns(b1, "gpio_8lines", "single8"), ns(b1, "gpio_8lines", "bulk8")),
            "spi_prepared_vs_raw_ioctl": ratio(ns(b1, "spi_24b", "raw_ioctl"), ns(b1, "spi_24b", "prepared")),
            "spi_prepared_vs_per_call": ratio(ns(b1, "spi_24b", "per_call"), ns(b1, "spi_24b", "prepared")),
            "smbus_byte_vs_raw_ioctl": ratio(ns(b1, "smbus_byte", "raw_ioctl"), ns(b1, "smbus_byte", "parambus")),
            "gpio_set_vs_libgpiod_v1": ratio(ns(b1, "gpio_set", "libgpiod"), ns(b1, "gpio_set", "parambus")),
            "gpio_set_vs_libgpiod_v2": ratio(ns(b2, "gpio_set", "libgpiod"), ns(b2, "gpio_set", "parambus")),
            "gpio_set_vs_raw_ioctl_gpiod2_binary": ratio(ns(b2, "gpio_set", "raw_ioctl"),
                                                         ns(b2, "gpio_set", "parambus")),
            "gpio_set_vs_sysfs": ratio(ns(b1, "gpio_set", "sysfs"), ns(b1, "gpio_set", "parambus")),
            "pwm_duty_vs_sysfs_write": ratio(ns(b1, "pwm_duty", "sysfs_write"), ns(b1, "pwm_duty", "parambus")),
        }
        v2 = keys["gpio_set_vs_libgpiod_v2"]
        keys["gpio_set_vs_libgpiod"] = v2 if v2 is not None else keys["gpio_set_vs_libgpiod_v1"]
        r1 = raw.get(b1, {})
        for k in ("edge_roundtrip_median_us", "edge_roundtrip_p99_us", "edge_roundtrip_mean_us",
                  "edge_roundtrip_stdev_us"):
            keys[k] = float(r1[k]) if k in r1 else None
        return keys

    per_run = [run_keys(r) for r in runs]
    keys, spread = {}, {}
    for k in per_run[0]:
        vals = [pk[k] for pk in per_run if pk[k] is not None]
        keys[k] = round(statistics.median(vals), 3) if vals else None
        spread[k] = [min(vals), max(vals)] if vals else None
    v2key = keys["gpio_set_vs_libgpiod_v2"]
    raw = runs[-1]
    r1 = raw.get(b1, {})

    per_op = {}  # the last run's per-contender ns/op and rounds
    for binary, kv in raw.items():
        for k, v in kv.items():
            if k.startswith("ns."):
                _, op, who = k.split(".", 2)
                per_op.setdefault(binary, {}).setdefault(op, {})[who] = float(v)
            elif k.startswith("rounds."):
                _, op, who = k.split(".", 2)
                per_op.setdefault(binary, {}).setdefault(op + ".rounds", {})[who] = [float(x) for x in v.split()]

    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cc = subprocess.run(["gcc", "--version"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]
    doc = {
        "scenario": 4,
        "quick": args.quick,
        "command": " ".join(["bench/run-hw.py"] + sys.argv[1:]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **keys,
        "gpio_set_vs_libgpiod_version": (f"libgpiod {v2ver} (PyPI gpiod 2.5.0 sdist, static)" if v2key is not None
                                         else f"libgpiod {V1_VERSION} (Debian bookworm libgpiod-dev)"),
        "runs": args.runs,
        "spread_over_runs": spread,
        "per_run": per_run,
        "targets": TARGETS,
        "met": {k: met(keys[k], ">=", t) for k, t in TARGETS.items()},
        "ns_per_op": per_op,
        "iterations": iters,
        "rounds": int(r1.get("rounds", 0) or 0),
        "ns_per_op_note": "ns_per_op: the last VM run, median over rounds per contender",
        "guest_kernel": r1.get("kernel"),
        "libgpiod_versions": {"v1": raw.get(b1, {}).get("libgpiod_version"),
                              "v2": raw.get(b2, {}).get("libgpiod_version")},
        "vm": "qemu TCG -cpu max, 1 vCPU, 512 MiB (tests/kernel harness); absolute times meaningless",
        "host_cpu": cpu,
        "host_cores": os.cpu_count(),
        "host_kernel": platform.release(),
        "compiler": cc,
        "failures": failures,
        "vm_runs_s": round(wall, 1),
        # Host load during the VM run (/proc/stat): qemu (one TCG thread) is
        # about one CPU of busy; more means other tenants were active.
        "host_busy_cpus_during_run": round((st1["busy"] - st0["busy"]) / max(1, st1["total"] - st0["total"]) * (os.cpu_count() or 1), 2),
        "host_steal_fraction_during_run": round((st1["steal"] - st0["steal"]) / max(1, st1["total"] - st0["total"]), 3),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    log(f"wrote {args.out}")
    for k, t in TARGETS.items():
        v = keys[k]
        print(f"{k:28s} {v if v is not None else '-':>8}  {spread[k]}  target >= {t}  "
              f"{'met' if met(v, '>=', t) else 'MISSED'}")
    for k in ("spi_prepared_vs_per_call", "gpio_set_vs_libgpiod_v1", "gpio_set_vs_libgpiod_v2",
              "gpio_set_vs_sysfs", "pwm_duty_vs_sysfs_write", "edge_roundtrip_median_us", "edge_roundtrip_p99_us"):
        print(f"{k:28s} {keys[k] if keys[k] is not None else '-':>8}")
    return 0 if ok and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
