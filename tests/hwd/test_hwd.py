"""test_hwd.py: pbus-hwd and its supervision by pbusd, on the host.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/hwd --pbus-build build/dev \
        [--pbus-suite asan/hwd]

The host has none of the bound devices, which is the point here: the
bindings are checked (`pbus-hwd --check`, one-line errors for every class
of bad binding), missing devices turn their parameters invalid without
stopping anything, and pbusd starts, restarts and stops pbus-hwd. That the
bindings move real values is the VM's part (tests/kernel/suite/
test-bindings.c). Prints `PASS: hwd/<name>` / `FAIL: hwd/<name>: reason`
(the prefix is --pbus-suite's for a sanitizer build), and last
hwd/sanitizer-reports: no daemon's log holds a sanitizer's report.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.daemon import stopped

SUITE = "hwd"
HERE = os.path.dirname(os.path.abspath(__file__))
HW_SCHEMA = os.path.join(HERE, "fixtures", "hw.pbs")
BOUND = ["relay", "door", "volts", "fan"]


def hwd_path(ctx):
    return os.path.join(ctx.build, "daemon", "pbus-hwd")


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_context):
    """The module's Context (no pbusd of its own: each test starts its own)."""
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd, pbus_build.hwd)
    pbus_context.dump_of = lambda instance: json.loads(pbus_context.ok("dump", "--json", instance=instance).out)
    return pbus_context


def run_hwd(ctx, *args):
    argv = [hwd_path(ctx)] + list(args)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    out, err = p.stdout.decode(), p.stderr.decode()
    if ctx.verbose:
        print(f"    {argv[1:]}: rc={p.returncode} out={out!r} err={err!r}", flush=True)
    return p.returncode, out, err


def children(pid, name="pbus-hwd"):
    """The live child processes of @pid called @name."""
    found = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return found
    for k in kids:
        try:
            with open(f"/proc/{k}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
        if comm == name and state != "Z":
            found.append(k)
    return found


def wait_until(what, predicate, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise Failure(f"timed out waiting for {what}")


def write_schema(ctx, name, replace=None, append=None):
    """A copy of fixtures/hw.pbs with one binding changed."""
    with open(HW_SCHEMA) as f:
        text = f.read()
    if replace:
        old, new = replace
        check(old in text, f"fixture lacks {old!r}")
        text = text.replace(old, new, 1)
    if append:
        text += append + "\n"
    path = os.path.join(ctx.tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def statuses(ctx, instance):
    doc = ctx.dump_of(instance)
    return {p["name"]: p["status"] for p in doc["parameters"]}


# --- The tests ---------------------------------------------------------------

def test_help(ctx):
    rc, out, err = run_hwd(ctx, "--help")
    check(rc == 0 and out.startswith("Usage: pbus-hwd ") and err == "", f"--help: {rc} {err!r}")
    for option in ("--schema", "--instance", "--check", "--log-level"):
        check(option in out, f"--help does not mention {option}")
    rc, out, err = run_hwd(ctx)
    check(rc == 2 and out == "" and "--schema FILE and --instance NAME are required" in err,
          f"no arguments: {rc} {err!r}")
    rc, out, err = run_hwd(ctx, "--bogus")
    check(rc == 2 and "Try 'pbus-hwd --help'." in err, f"unknown option: {rc} {err!r}")


def test_check_lists_bindings(ctx):
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA, extra=["--no-hardware"])
    rc, out, err = run_hwd(ctx, "--check", "--schema", HW_SCHEMA, "--instance", d.instance)
    check(rc == 0 and err == "", f"--check: {rc} {err!r}")
    lines = out.splitlines()
    check(len(lines) == 5 and lines[-1] == "4 hardware bindings, all valid", f"--check: {out!r}")
    expect = [r"relay\s+gpio-output\s+no-such-chip line RELAY",
              r"door\s+gpio-input\s+/dev/no-such-gpiochip line 3",
              r"volts\s+i2c-register\s+no-such-adapter address 0x48 register 0x10, 16 bits at 20 Hz",
              r"fan\s+pwm-duty\s+pwmchip99 channel 0, period 40000 ns"]
    for pattern, line in zip(expect, lines):
        check(re.fullmatch(pattern, line), f"--check line {line!r} does not match {pattern!r}")
    check(children(d.pid) == [], "--no-hardware started pbus-hwd anyway")
    d.stop()


# Bad bindings: (what is changed, the error's text). Each is one line on
# stderr naming the parameter and the key, exit status 1.
BAD = [
    (("hw=gpio-output", "hw=gpio-sideways"), r"parameter 'relay': unknown binding hw='gpio-sideways'"),
    (("param relay bool default=false", "param relay double default=0"), r"parameter 'relay': a gpio-output binding needs a writable bool parameter"),
    (("param door bool flags=readonly", "param door bool"), r"parameter 'door': a gpio-input binding needs a read-only bool or unsigned parameter"),
    (("param volts double unit=V flags=readonly", "param volts double unit=V"), r"parameter 'volts': an i2c-register binding needs a read-only numeric parameter"),
    (("param fan float unit=%25 min=0 max=100 default=30", "param fan string size=8"), r"parameter 'fan': a pwm-duty binding needs a writable numeric parameter"),
    ((" hw-device=no-such-adapter", ""), r"parameter 'volts': binding needs hw-device="),
    (("hw-width=16", "hw-width=12"), r"parameter 'volts': hw-width=12 is not 8, 16 or 32"),
    (("hw-address=72", "hw-address=1024"), r"parameter 'volts': hw-address='1024' is not an integer in 0\.\.1023"),
    (("hw-rate-hz=20", "hw-rate-hz=0"), r"parameter 'volts': hw-rate-hz=0 is not in \(0, 1000\]"),
    (("hw-scale=0.001", "hw-scale=0"), r"parameter 'volts': hw-scale must not be 0"),
    (("hw-scale=0.001", "hw-scale=lots"), r"parameter 'volts': hw-scale='lots' is not a number"),
    (("hw-edges=both", "hw-edges=sideways"), r"parameter 'door': hw-edges='sideways' is not one of the values"),
    (("hw-debounce-us=1000", "hw-debounce-us=-1"), r"parameter 'door': hw-debounce-us='-1' is not an integer in 0\.\.1000000"),
    ((" hw-line=RELAY", ""), r"parameter 'relay': binding needs hw-line-offset="),
    (("hw-period-ns=40000", "hw-period-ns=0"), r"parameter 'fan': hw-period-ns='0' is not an integer in 1\.\.1000000000000"),
    (("hw-active-low=true", "hw-active-low=yes"), r"parameter 'door': hw-active-low='yes' is not true or false"),
]


def test_bad_bindings_refused(ctx):
    for i, (change, pattern) in enumerate(BAD):
        path = write_schema(ctx, f"bad-{i}.pbs", replace=change)
        d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=path, extra=["--no-hardware"])
        rc, out, err = run_hwd(ctx, "--check", "--schema", path, "--instance", d.instance)
        d.stop()
        lines = err.splitlines()
        check(rc == 1 and out == "" and len(lines) == 1, f"{change}: expected one error line, rc 1: {rc} {out!r} {err!r}")
        check(re.search(r"^pbus-hwd\[\d+\]: error: " + re.escape(path) + ": " + pattern, lines[0]),
              f"{change}: {lines[0]!r} does not match {pattern!r}")


def test_wrong_schema_or_instance(ctx):
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA, extra=["--no-hardware"])
    other = write_schema(ctx, "other.pbs", append="param extra int32")
    rc, out, err = run_hwd(ctx, "--check", "--schema", other, "--instance", d.instance)
    check(rc == 1 and re.search(rf"error: instance '{d.instance}' is served from another schema than {re.escape(other)}", err),
          f"schema mismatch: {rc} {err!r}")
    d.stop()
    rc, out, err = run_hwd(ctx, "--schema", HW_SCHEMA, "--instance", "no-such-instance-here")
    check(rc == 1 and "cannot open instance 'no-such-instance-here'" in err and len(err.splitlines()) == 1,
          f"missing instance: {rc} {err!r}")
    rc, out, err = run_hwd(ctx, "--schema", "/no/such.pbs", "--instance", d.instance)
    check(rc == 1 and len(err.splitlines()) == 1, f"missing schema: {rc} {err!r}")


def test_missing_devices_are_invalid_not_fatal(ctx):
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA)
    wait_until("pbus-hwd to start", lambda: children(d.pid))
    # Every bound parameter turns invalid; the unbound one stays ok.
    wait_until("the bound parameters to turn invalid",
               lambda: all(statuses(ctx, d.instance)[n] == "invalid" for n in BOUND))
    check(statuses(ctx, d.instance)["plain"] == "ok", "an unbound parameter changed status")
    # Clients still write settings; pbus-hwd applies them when the device comes.
    r = ctx.run("set", "relay=true", "fan=55", instance=d.instance)
    check(r.rc == 0, f"set while the devices are missing: {r!r}")
    check(ctx.run("get", "relay", instance=d.instance).out == "true\n", "relay not stored")
    wait_until("the written outputs to turn invalid again",
               lambda: all(statuses(ctx, d.instance)[n] == "invalid" for n in ("relay", "fan")))
    check(d.proc.poll() is None and children(d.pid), "pbusd or pbus-hwd died")
    log = d.log()
    for name in BOUND:
        check(re.search(rf"pbus-hwd\[\d+\]: warning: {name}: .*status invalid, retrying every second", log),
              f"no warning about {name} in the log: {log}")
    # Logged once per device, not once per retry.
    time.sleep(2.2)
    check(d.log().count("relay: gpio-output") == 1, f"the retries are logged: {d.log()}")
    d.stop()


def test_setting_of_a_failing_device_is_saved(ctx):
    """A persistent setting written while its device is missing is saved
    (pbus-hwd marks it invalid, it stays the setting to apply) and restored
    by the next pbusd; the state file never loses it."""
    schema = write_schema(ctx, "persistent-fan.pbs", replace=(" default=30 hw=pwm-duty",
                                                              " default=30 flags=persistent hw=pwm-duty"))
    instance = ctx.new_instance_name()
    state_dir = os.path.join(ctx.tmp, f"state-{instance}")
    os.makedirs(state_dir)
    path = os.path.join(state_dir, instance + ".state")
    d = ctx.start_daemon(instance=instance, state_dir=state_dir, schema=schema)
    wait_until("fan to turn invalid", lambda: statuses(ctx, instance)["fan"] == "invalid")
    check(ctx.run("set", "fan=55", instance=instance).rc == 0, "set fan")
    wait_until("fan to turn invalid again", lambda: statuses(ctx, instance)["fan"] == "invalid")
    check(ctx.run("set", "relay=true", instance=instance).rc == 0, "set relay (a later save)")
    d.stop()
    with open(path) as f:
        state = f.read()
    check("\nfan=55\n" in state, f"the state file lost the setting: {state!r}")
    d = ctx.start_daemon(instance=instance, state_dir=state_dir, schema=schema)
    check(ctx.run("get", "fan", instance=instance).out == "55\n", "fan not restored")
    d.stop()


def test_hwd_restarted_and_stopped_by_pbusd(ctx):
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA)
    first = wait_until("pbus-hwd to start", lambda: children(d.pid))[0]
    os.kill(first, signal.SIGKILL)
    second = wait_until("pbus-hwd to be restarted",
                        lambda: [p for p in children(d.pid) if p != first], timeout=5)[0]
    check(re.search(rf"pbus-hwd \(pid {first}\) died of Killed; restarting in 1000 ms", d.log()), d.log())
    # Stop it once it runs (a sanitizer build starts slowly): then it must
    # shut down in order, not just die.
    wait_until("the new pbus-hwd to run its bindings",
               lambda: re.search(rf"pbus-hwd\[{second}\]: info: running 4 hardware bindings", d.log()))
    check(d.stop() == 0, "pbusd did not exit cleanly")
    check(not os.path.exists(f"/proc/{second}") or "Z" in open(f"/proc/{second}/stat").read().split()[2],
          "pbus-hwd outlived pbusd")
    check(re.search(r"pbus-hwd\[\d+\]: info: shutting down on Terminated", d.log()), d.log())


def test_hwd_dies_with_pbusd(ctx):
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA)
    hwd = wait_until("pbus-hwd to start", lambda: children(d.pid))[0]
    d.stop(signal.SIGKILL)
    wait_until("pbus-hwd to go with pbusd", lambda: not os.path.exists(f"/proc/{hwd}"), timeout=5)


def test_bad_binding_pbusd_carries_on(ctx):
    path = write_schema(ctx, "bad-served.pbs", replace=("hw-width=16", "hw-width=12"))
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=path)
    wait_until("pbusd to give up on pbus-hwd",
               lambda: "pbus-hwd refused the hardware bindings (exit 1" in d.log())
    check(re.search(r"hw-width=12 is not 8, 16 or 32", d.log()), d.log())
    time.sleep(1.5)
    check(children(d.pid) == [] and d.proc.poll() is None, "pbus-hwd restarted, or pbusd died")
    check(ctx.run("get", "plain", instance=d.instance).out == "1\n", "pbusd no longer serves")
    d.stop()


def timed_set(ctx, instance, *args):
    t0 = time.monotonic()
    r = ctx.run("set", *args, instance=instance)
    return r, time.monotonic() - t0


def test_report_fd_option(ctx):
    rc, out, err = run_hwd(ctx, "--help")
    check("--report-fd FD" in out, "--help does not mention --report-fd")
    for bad, why in (("x", "is not a file descriptor"), ("-1", "is not a file descriptor"),
                     ("999", "Bad file descriptor")):
        rc, out, err = run_hwd(ctx, "--report-fd", bad, "--schema", HW_SCHEMA, "--instance", "x")
        check(rc == 2 and why in err and len(err.splitlines()) <= 2, f"--report-fd {bad}: {rc} {err!r}")
    h = subprocess.run([ctx.build + "/daemon/pbusd", "--help"], stdout=subprocess.PIPE, text=True).stdout
    check("--apply-timeout MS" in h, "pbusd --help does not mention --apply-timeout")
    for bad in ("0", "600001", "x"):
        p = subprocess.run([ctx.build + "/daemon/pbusd", "--schema", HW_SCHEMA, "--instance", "x",
                            "--apply-timeout", bad], stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        check(p.returncode == 2 and "--apply-timeout" in p.stderr, f"pbusd --apply-timeout {bad}: {p.returncode} {p.stderr!r}")


def test_set_applied_missing_devices(ctx):
    """pbus set --applied with pbus-hwd running and the devices missing:
    each bound output is written but not applied (EIO from pbus-hwd's
    report, long before --apply-timeout), one line per parameter, status 1;
    unbound parameters and inputs do not wait."""
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA, extra=["--apply-timeout", "5000"])
    hwd = wait_until("pbus-hwd to start", lambda: children(d.pid))[0]
    wait_until("the outputs to turn invalid",
               lambda: all(statuses(ctx, d.instance)[n] == "invalid" for n in ("relay", "fan")))
    r, took = timed_set(ctx, d.instance, "--applied", "relay=true", "fan=55", "plain=2")
    check(r.rc == 1 and r.out == "" and took < 3.0, f"set --applied: {r!r} after {took:.2f} s")
    lines = r.err.splitlines()
    check(lines == [f"pbus: set {n}: written, but the hardware failed to apply it (pbus-hwd: the device is "
                    "missing or failing; see pbusd's log)" for n in ("relay", "fan")], f"set --applied: {r.err!r}")
    check(ctx.run("get", "relay", "fan", "plain", instance=d.instance).out == "true\n55\n2\n",
          "the values were not written")
    r, took = timed_set(ctx, d.instance, "-a", "plain=3")
    check(r.rc == 0 and r.err == "" and took < 1.0, f"set -a of an unbound parameter: {r!r} after {took:.2f} s")
    r = ctx.run("set", "--applied", "--direct", "plain=4", instance=d.instance)
    check(r.rc == 2 and "--direct does not go through pbusd" in r.err, f"--applied --direct: {r!r}")
    check(hwd in children(d.pid), "pbus-hwd was restarted")
    d.stop()
    # pbus-hwd stopped: no word within --apply-timeout.
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA, extra=["--apply-timeout", "300"])
    hwd = wait_until("the second pbus-hwd to start", lambda: children(d.pid))[0]
    wait_until("its relay to turn invalid", lambda: statuses(ctx, d.instance)["relay"] == "invalid")
    os.kill(hwd, signal.SIGSTOP)
    try:
        wait_until("pbus-hwd to stop", lambda: stopped(hwd))
        r, took = timed_set(ctx, d.instance, "--applied", "relay=true", "plain=5")
    finally:
        os.kill(hwd, signal.SIGCONT)
    check(r.rc == 1 and 0.29 < took < 2.0 and r.err == "pbus: set relay: written, but the hardware did "
          "not apply it in time (is pbus-hwd running? pbusd --apply-timeout)\n",
          f"set --applied, pbus-hwd stopped: {r!r} after {took:.2f} s")
    check(ctx.run("get", "relay", "plain", instance=d.instance).out == "true\n5\n", "not written")
    d.stop()


def test_set_applied_without_hwd(ctx):
    """No pbus-hwd, nothing waits: --no-hardware, and a pbus-hwd that
    refused its bindings (given up)."""
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=HW_SCHEMA,
                         extra=["--no-hardware", "--apply-timeout", "5000"])
    r, took = timed_set(ctx, d.instance, "--applied", "relay=true", "fan=20")
    check(r.rc == 0 and r.err == "" and took < 1.0, f"--no-hardware: {r!r} after {took:.2f} s")
    d.stop()
    path = write_schema(ctx, "bad-applied.pbs", replace=("hw-width=16", "hw-width=12"))
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=path, extra=["--apply-timeout", "5000"])
    wait_until("pbusd to give up on pbus-hwd",
               lambda: "SETs with the APPLIED flag no longer wait for the hardware" in d.log())
    r, took = timed_set(ctx, d.instance, "--applied", "relay=true")
    check(r.rc == 0 and took < 1.0, f"pbus-hwd given up: {r!r} after {took:.2f} s")
    d.stop()


def test_sanitizer_reports(ctx):
    # Last: in a sanitizer build a report may come from pbus-hwd, whose
    # death pbusd covers up by restarting it: read every daemon's log.
    ctx.daemons.stop_all()
    reports = ctx.daemons.sanitizer_reports()
    check(not reports, reports[0] if reports else "")
