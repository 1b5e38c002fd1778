#!/usr/bin/env python3
"""test_load.py: 64 clients against the real pbusd for 60 s.

    python3 tests/server/test_load.py BUILD_DIR [--seconds S] [--clients N]

The load run of benchmark scenario 2 (bench/run-socket-server.py
--load-only), as a test: 64 connections, each subscribing to all 200
parameters of bench/schemas/param-table.pbs and writing its own 100 times a
second. Passes if no request failed, every client's latest notified value of
every parameter equals the table at the end, and pbusd's resident memory did
not grow by more than 1 MiB after the first seconds. Prints one PASS/FAIL
line per property.
"""
import argparse
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("PBUS_LOAD_SECONDS", "60")))
    ap.add_argument("--clients", type=int, default=64)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    r = subprocess.run([sys.executable, os.path.join(TOP, "bench", "run-socket-server.py"), build,
                        "--load-only", "--load-seconds", str(args.seconds), "--load-clients", str(args.clients)],
                       capture_output=True, text=True, timeout=args.seconds + 300)
    sys.stderr.write(r.stderr)
    try:
        keys = json.loads(r.stdout)
        with open(os.path.join(os.path.dirname(build), "bench", "socket-server-load.json")) as f:
            detail = json.load(f).get("load_detail", {})
    except (ValueError, OSError) as e:
        print(f"FAIL: server-load/run: no result ({e}): {r.stdout[-500:]}")
        return 1
    checks = [
        ("clients", keys.get("load_clients") == args.clients and detail.get("writes", 0) > 0,
         f"{keys.get('load_clients')} clients, {detail.get('writes')} writes"),
        ("no-errors", keys.get("load_errors") == 0, detail.get("first_problem", "")),
        ("views-equal-table", detail.get("mismatches") == 0, detail.get("first_problem", "")),
        ("no-memory-growth", keys.get("load_rss_growth_kib", 1 << 30) <= 1024,
         f"pbusd RSS grew by {keys.get('load_rss_growth_kib')} KiB"),
    ]
    failed = 0
    for name, ok, why in checks:
        if ok:
            print(f"PASS: server-load/{name}")
        else:
            failed += 1
            print(f"FAIL: server-load/{name}: {why}")
    return 1 if failed or r.returncode not in (0, 1) else 0


if __name__ == "__main__":
    sys.exit(main())
