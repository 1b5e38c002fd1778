# SPDX-License-Identifier: MIT
"""hoststat: what the whole machine did meanwhile, for the benchmark runners.

A figure taken while another tenant or process used the machine says little,
so the runners read /proc/stat around each run (docs/benchmarks.md,
"Method") and repeat a run that others disturbed. Python 3 standard library
only.
"""
import os

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
