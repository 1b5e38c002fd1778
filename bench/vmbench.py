# SPDX-License-Identifier: MIT
"""What the benchmark programs in the kernel-test VM print, read back.

The VM benchmarks (bench/run-hw.py, bench/run-java-hw.py) run their programs
through the kernel harness (tests/kernel/run) with a verbose report, whose
stdout carries each program's diagnostic lines as '# kernel/BINARY: LINE'.
A program prints its figures as 'bench KEY VALUE' and notes as '# TEXT'.
"""


def parse(out):
    """({binary: {key: value, "notes": [text...]}}, [FAIL lines]) from the report's stdout."""
    raw, failures = {}, []
    for line in out.splitlines():
        if line.startswith("FAIL:"):
            failures.append(line)
        if not line.startswith("# kernel/"):
            continue
        head, _, payload = line.partition(": ")
        binary = head[len("# kernel/"):]
        if payload.startswith("bench "):
            _, key, value = payload.split(" ", 2)
            raw.setdefault(binary, {})[key] = value
        elif payload.startswith("# "):
            raw.setdefault(binary, {}).setdefault("notes", []).append(payload[2:])
    return raw, failures
