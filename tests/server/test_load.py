"""test_load.py: 64 clients against the real pbusd for 60 s.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/server/test_load.py \\
        --pbus-build build/dev

The load run of benchmark scenario 2 (bench/run-socket-server.py
--load-only), as a test: 64 connections, each subscribing to all 200
parameters of bench/schemas/param-table.pbs and writing its own 100 times a
second. Passes if no request failed, every client's latest notified value of
every parameter equals the table at the end, and pbusd's resident memory did
not grow by more than 1 MiB after the first seconds. One run for the
module, one test per property (PASS: server-load/<property>);
PBUS_LOAD_SECONDS and PBUS_LOAD_CLIENTS change the run's length and size.
"""
import json
import os
import subprocess
import sys

import pytest

from pbustest.check import Failure, check

SUITE = "server-load"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECONDS = float(os.environ.get("PBUS_LOAD_SECONDS", "60"))
CLIENTS = int(os.environ.get("PBUS_LOAD_CLIENTS", "64"))


@pytest.fixture(scope="module")
def load(pbus_build):
    """The run's summary keys and its detail."""
    build = pbus_build.dir
    r = subprocess.run([sys.executable, os.path.join(TOP, "bench", "run-socket-server.py"), build,
                        "--load-only", "--load-seconds", str(SECONDS), "--load-clients", str(CLIENTS)],
                       capture_output=True, text=True, timeout=SECONDS + 300)
    sys.stderr.write(r.stderr)
    try:
        keys = json.loads(r.stdout)
        with open(os.path.join(os.path.dirname(build), "bench", "socket-server-load.json")) as f:
            detail = json.load(f).get("load_detail", {})
    except (ValueError, OSError) as e:
        raise Failure(f"no result ({e}): {r.stdout[-500:]}")
    check(r.returncode in (0, 1), f"run-socket-server.py exit status {r.returncode}: {r.stderr[-500:]}")
    return keys, detail


def test_clients(load):
    keys, detail = load
    check(keys.get("load_clients") == CLIENTS and detail.get("writes", 0) > 0,
          f"{keys.get('load_clients')} clients, {detail.get('writes')} writes")


def test_no_errors(load):
    keys, detail = load
    check(keys.get("load_errors") == 0, detail.get("first_problem", ""))


def test_views_equal_table(load):
    keys, detail = load
    check(detail.get("mismatches") == 0, detail.get("first_problem", ""))


def test_no_memory_growth(load):
    keys, detail = load
    check(keys.get("load_rss_growth_kib", 1 << 30) <= 1024,
          f"pbusd RSS grew by {keys.get('load_rss_growth_kib')} KiB")
