#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark scenario 6, web (docs/benchmarks.md, "Web").

    bench/run-web.py [--quick] [--seconds S] [--clients N] BUILD_DIR

Runs a fresh pbusd serving bench/schemas/param-table.pbs, bench/web/web-load
writing its 200 doubles 60 times a second (12,000 changes/s), pbus-web
(--interval at its default, 20 ms) serving the built page
(BUILD_DIR/web/assets), and Debian's headless Chromium through Selenium
(chromium and chromium-driver by path, nothing downloaded), and writes
build/bench/web.json:

  page         what the first load of the page fetched, as served
               (web_page_kib: the bytes of every response, from the
               browser's resource timing, checked against the files), and
               the time from navigation to every parameter's value painted
               (web_first_render_ms, the page's pbusStats.firstRenderMs);
  1 browser    for --seconds (10; 3 with --quick) with the load running:
               the latency from each table write to the page's DOM update,
               measured in the page (window.pbusStats: the wall clock after
               the update minus the value's timestamp, which web-load
               stamps at the write; both clocks are this machine's
               CLOCK_REALTIME): web_update_p50_ms, web_update_p99_ms; and
               pbus-web's CPU% over the run (/proc/PID/schedstat of all its
               threads): web_cpu_percent_1_client;
  N browsers   --clients (10) windows of the page in the same Chromium, one
               WebSocket each, the same run: web_cpu_percent_10_clients,
               and the latencies seen by the first window;
  the floor    what the interval alone adds: a value waits up to --interval
               for pbus-web's next update (web_interval_ms), and the load's
               own late passes (web_load_late_passes).

Beside them: pbusd's CPU%, the messages and entries the page applied, and
how much of the machine other processes took (/proc/stat, bench/hoststat.py;
Chromium's own rendering is most of it on this 2-CPU machine, which is why
the latencies are the browser's as much as pbus-web's). Needs selenium (the
venv's test extras): run it with the venv's Python (make bench does).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import hoststat  # bench/hoststat.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from pbustest.daemon import spawn_notified  # noqa: E402  (tests/pbustest: one way to start a daemon)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SCHEMA = os.path.join(HERE, "schemas", "param-table.pbs")
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,900",
                  # every window is drawn as if in front: no throttling of
                  # the other windows' timers and frames
                  "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                  "--disable-backgrounding-occluded-windows"]
HZ = 60
INTERVAL_MS = 20


def log(msg):
    print(f"run-web: {msg}", flush=True)


def start_notified(argv, env, log_path):
    proc, fields = spawn_notified(argv, log_path, env=env)
    if fields is None:
        proc.kill()
        raise SystemExit(f"run-web: {argv[0]} did not start; see {log_path}")
    return proc, fields


def browser(tmp):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    os.environ["SE_OFFLINE"] = "true"
    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            raise SystemExit(f"run-web: {program} missing (scripts/install-deps installs chromium, chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={os.path.join(tmp, 'profile')}"]:
        options.add_argument(flag)
    service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(tmp, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(60)
    return driver


def wait_js(driver, script, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"run-web: {what} did not happen within {timeout} s")


def cpu_s(pid):
    return hoststat.sched_ns(pid) / 1e9


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, int(round(p / 100.0 * (len(sorted_values) - 1)))))
    return sorted_values[k]


def measure(driver, handles, pids, seconds):
    """Reset every window's stats, let the load run @seconds, then the
    first window's latencies and each pid's CPU% over the run."""
    for h in handles:
        driver.switch_to.window(h)
        driver.execute_script("window.pbusStats.reset()")
    driver.switch_to.window(handles[0])
    c0 = {name: cpu_s(pid) for name, pid in pids.items()}
    h0, t0 = hoststat.cpu_jiffies(), time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    c1 = {name: cpu_s(pid) for name, pid in pids.items()}
    h1 = hoststat.cpu_jiffies()
    got = driver.execute_script(
        "const s = window.pbusStats; const n = Math.min(s.count, s.latencies.length);"
        "return {count: s.count, messages: s.messages, latencies: Array.from(s.latencies.subarray(0, n))};")
    lat = sorted(got["latencies"])
    busy = (h1["busy"] - h0["busy"]) / hoststat.CLK_TCK
    return {
        "seconds": round(elapsed, 3),
        "entries": got["count"], "messages": got["messages"],
        "p50_ms": round(percentile(lat, 50), 2) if lat else None,
        "p99_ms": round(percentile(lat, 99), 2) if lat else None,
        "max_ms": round(lat[-1], 2) if lat else None,
        "mean_ms": round(statistics.fmean(lat), 2) if lat else None,
        "cpu_percent": {name: round(100.0 * (c1[name] - c0[name]) / elapsed, 2) for name in pids},
        "machine_busy_percent": round(100.0 * busy / elapsed / (os.cpu_count() or 1), 1),
    }


def page_weight(driver, url, assets):
    """Every response of the page's first load, as served: the bytes of
    the document and of each resource the browser fetched (resource
    timing's encodedBodySize: the body as it came over the wire, compressed
    if it was), each checked by fetching it again."""
    entries = driver.execute_script(
        "const nav = performance.getEntriesByType('navigation')[0];"
        "return [{name: nav.name, size: nav.encodedBodySize}].concat("
        "performance.getEntriesByType('resource').map(e => ({name: e.name, size: e.encodedBodySize})));")
    total, files = 0, {}
    for e in entries:
        if not e["name"].startswith(url):  # the WebSocket is not a resource
            continue
        with urllib.request.urlopen(e["name"], timeout=10) as r:
            body = r.read()
            encoding = r.headers.get("Content-Encoding")
        size = e["size"] or len(body)
        if not encoding and size != len(body):
            raise SystemExit(f"run-web: {e['name']}: the browser counted {size} bytes, the server sent {len(body)}")
        files[e["name"][len(url):] or "/"] = size
        total += size
    on_disk = sum(os.path.getsize(os.path.join(assets, f)) for f in os.listdir(assets))
    return total, files, on_disk


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true", help="short runs (a smoke check; not the reported figures)")
    ap.add_argument("--seconds", type=float, help="length of each measured run (10; 3 with --quick)")
    ap.add_argument("--clients", type=int, default=10, help="browser windows of the second run (10)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    pbusd, web, load = (os.path.join(build, p) for p in ("daemon/pbusd", "daemon/pbus-web", "bench/web-load"))
    assets = os.path.join(build, "web", "assets")
    for f in (pbusd, web, load, os.path.join(assets, "index.html")):
        if not os.path.exists(f):
            raise SystemExit(f"run-web: {f} is missing; build first (make build)")
    tmp = tempfile.mkdtemp(prefix="pbus-bench-web.")
    instance = f"bench-web-{os.getpid()}"
    env = dict(os.environ, PBUS_SOCKET_DIR=tmp)
    procs, driver = [], None
    try:
        d, _ = start_notified([pbusd, "--schema", SCHEMA, "--instance", instance, "--state-dir", tmp,
                               "--socket-dir", tmp, "--log-level", "warning"], env, os.path.join(tmp, "pbusd.log"))
        procs.append(d)
        w, info = start_notified([web, "--instance", instance, "--socket-dir", tmp, "--listen", "127.0.0.1:0",
                                  "--assets", assets, "--interval", str(INTERVAL_MS), "--log-level", "warning"],
                                 env, os.path.join(tmp, "pbus-web.log"))
        procs.append(w)
        url = f"http://127.0.0.1:{info['PORT']}/"
        total_s = 2 * seconds + 60  # both runs, the windows' loading and margins
        with open(os.path.join(tmp, "web-load.log"), "wb") as out:
            loader = subprocess.Popen([load, instance, str(HZ), str(total_s)], env=env, stdout=out,
                                      stderr=subprocess.STDOUT)
        procs.append(loader)
        log(f"pbusd, pbus-web on {url}, web-load at {HZ} Hz x 200 parameters; Chromium starting")
        driver = browser(tmp)
        driver.get(url)
        first_render = wait_js(driver, "return window.pbusStats && window.pbusStats.firstRenderMs",
                               "the page's first full render")
        wait_js(driver, "return window.pbusStats.count > 0", "the first update in the page")
        kib, files, on_disk = page_weight(driver, url, assets)
        log(f"page: {kib / 1024:.1f} KiB as served, first full render {first_render:.0f} ms")
        pids = {"pbus-web": w.pid, "pbusd": d.pid}

        log(f"1 browser: {seconds:.0f} s")
        one = measure(driver, [driver.current_window_handle], pids, seconds)
        log(f"  p50 {one['p50_ms']} ms, p99 {one['p99_ms']} ms, pbus-web {one['cpu_percent']['pbus-web']} %")

        handles = [driver.current_window_handle]
        for _ in range(args.clients - 1):
            driver.switch_to.new_window("window")
            driver.get(url)
            wait_js(driver, "return window.pbusStats && window.pbusStats.count > 0", "an update in a new window")
            handles.append(driver.current_window_handle)
        log(f"{len(handles)} browser windows: {seconds:.0f} s")
        many = measure(driver, handles, pids, seconds)
        log(f"  p50 {many['p50_ms']} ms, p99 {many['p99_ms']} ms, pbus-web {many['cpu_percent']['pbus-web']} %")
        driver.quit()
        driver = None
        loader.send_signal(signal.SIGTERM)
        loader.wait(timeout=10)
        with open(os.path.join(tmp, "web-load.log")) as f:
            load_out = f.read()
        late = None
        for part in load_out.split():
            if part.startswith("late="):
                late = int(part[5:])

        result = {
            "machine": hoststat.machine_info(TOP, build, "web/panel.c", "pbus-web"),
            "quick": args.quick,
            "load": {"parameters": 200, "hz": HZ, "changes_per_s": 200 * HZ, "pbus_web_interval_ms": INTERVAL_MS},
            "web_update_p50_ms": one["p50_ms"],
            "web_update_p99_ms": one["p99_ms"],
            "web_cpu_percent_1_client": one["cpu_percent"]["pbus-web"],
            "web_cpu_percent_10_clients": many["cpu_percent"]["pbus-web"],
            "web_page_kib": round(kib / 1024, 1),
            "web_first_render_ms": round(first_render, 1),
            "web_interval_ms": INTERVAL_MS,
            "web_load_late_passes": late,
            "clients_of_second_run": len(handles),
            "one_browser": one,
            "browsers": many,
            "page_files": files,
            "page_files_on_disk_kib": round(on_disk / 1024, 1),
        }
        out_dir = os.path.join(os.path.dirname(build), "bench")
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "web.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        log(f"wrote {path}")
        for key in ("web_update_p50_ms", "web_update_p99_ms", "web_cpu_percent_1_client",
                    "web_cpu_percent_10_clients", "web_page_kib"):
            print(f"  {key}: {result[key]}")
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
