# SPDX-License-Identifier: MIT
"""hoststat: what the whole machine did meanwhile, for the benchmark runners.

A figure taken while another tenant or process used the machine says little,
so the runners read /proc/stat around each run (docs/benchmarks.md,
"Method") and repeat a run that others disturbed. Python 3 standard library
only.
"""
import json
import os
import platform
import shlex
import subprocess

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_jiffies(cpus=None):
    """Busy, steal and total jiffies (1 / CLK_TCK s) from /proc/stat: of the
    CPUs in @cpus, or of the whole machine. Busy is user, nice, system, irq
    and softirq time (guest time is counted within user and nice); steal is
    time the hypervisor gave to someone else."""
    busy = steal = total = 0
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu"):
                continue
            fields = line.split()
            if cpus is None:
                if fields[0] != "cpu":
                    continue
            elif fields[0] == "cpu" or int(fields[0][3:]) not in cpus:
                continue
            v = [int(x) for x in fields[1:9]] + [0] * 8
            busy += v[0] + v[1] + v[2] + v[5] + v[6]
            steal += v[7]
            total += sum(v[:8])
    return {"busy": busy, "steal": steal, "total": total}


def machine_info(repo, build=None, source=None, output=None):
    """What a result file records about where it was measured: the CPU
    model, core count, kernel and architecture; with @build, the exact
    command that compiled @source (a path ending) into an object whose path
    contains @output, and its compiler's version; the git revision of
    @repo, marked if lib/, include/, daemon/ or bench/ had uncommitted
    changes."""
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    info = {"cpu_model": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "machine": platform.machine()}
    if build:
        try:
            with open(os.path.join(build, "compile_commands.json")) as f:
                for entry in json.load(f):
                    if entry.get("file", "").endswith(source) and \
                            output in entry.get("output", entry["command"]):
                        info["compile_command"] = entry["command"]
                        break
        except (OSError, ValueError, KeyError):
            pass
        try:
            cc = shlex.split(info["compile_command"])[0]
            info["compiler"] = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                              check=True).stdout.splitlines()[0]
        except (KeyError, IndexError, OSError, subprocess.CalledProcessError):
            info["compiler"] = "?"
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--", "lib",
                                "include", "daemon", "bench"],
                               capture_output=True, text=True, check=True).stdout.strip()
        info["source"] = head + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def sched_ns(pid, gone_ok=False):
    """CPU time of all threads of @pid in ns, from schedstat (finer than the
    10 ms ticks of /proc/PID/stat). A thread that ends meanwhile counts 0;
    a process that is gone raises OSError, or counts 0 with @gone_ok."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        if gone_ok:
            return 0
        raise
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total
