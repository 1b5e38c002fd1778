"""test_options.py: the options `pbus` shares with EPICS's caget/camonitor,
against the real pbusd: timestamps (-t, --time-format), number formats
(-f/-e/-g, -x, -n), terse lines and a field separator (-T, -F), timeouts
(-w SECONDS, exit status 5) on every command that waits, and the help of
every command and sub-command (Examples, the man page).

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/cli/test_options.py --pbus-build build/dev

One pbusd serves tests/cli/fixtures/test.pbs for the module (as in
test_cli.py); the timeouts run against a pbusd of their own that is
stopped with SIGSTOP (it then answers nothing, as a hung pbusd would).
"""
import json
import os
import re
import signal
import subprocess
import time
from datetime import datetime, timezone

import pytest

from pbustest.check import TIMEOUT, check
from pbustest.cli import LineReader, finish, one_line_error, start_watch

SUITE = "cli"


def watch_across(ctx, assignment, *args):
    """pbus watch ARGS while `pbus set ASSIGNMENT` runs: (rc, first line, the
    rest of stdout, stderr). With --initial the first line (the current
    value) shows the watch is ready; without, it is given 0.3 s and the first
    line is ""."""
    w = start_watch(ctx, *args)
    try:
        if "--initial" in args:
            first = LineReader(w.stdout.fileno()).line()
        else:
            first = ""
            time.sleep(0.3)
        ctx.ok("set", assignment)
        rc, out, err = finish(w)
    finally:
        w.kill()
    return rc, first, out, err


def stamp(ctx, name):
    """The timestamp_ns and value of @name, from get --json."""
    entry = json.loads(ctx.ok("get", "--json", name).out)[name]
    return entry["timestamp_ns"], entry["value"]


# --- Help: every command and sub-command ------------------------------------

HELPS = {
    (): "pbus",
    ("list",): "pbus-list", ("get",): "pbus-get", ("set",): "pbus-set", ("watch",): "pbus-watch",
    ("dump",): "pbus-dump", ("info",): "pbus-info", ("stat",): "pbus-stat", ("call",): "pbus-call",
    ("listen",): "pbus-listen", ("help",): "pbus",
    ("gpio",): "pbus-gpio", ("gpio", "detect"): "pbus-gpio-detect", ("gpio", "info"): "pbus-gpio-info",
    ("gpio", "get"): "pbus-gpio-get", ("gpio", "set"): "pbus-gpio-set", ("gpio", "monitor"): "pbus-gpio-monitor",
    ("i2c",): "pbus-i2c", ("i2c", "detect"): "pbus-i2c-detect", ("i2c", "get"): "pbus-i2c-get",
    ("i2c", "set"): "pbus-i2c-set", ("i2c", "funcs"): "pbus-i2c-funcs", ("i2c", "dump"): "pbus-i2c-dump",
    ("i2c", "transfer"): "pbus-i2c-transfer",
    ("spi",): "pbus-spi", ("spi", "info"): "pbus-spi-info", ("spi", "transfer"): "pbus-spi-transfer",
}


@pytest.mark.parametrize("command", sorted(HELPS), ids=lambda c: "-".join(c) or "pbus")
def test_help_examples_and_man_page(ctx, command):
    """help2man's shape: Usage: first, an Options: section of '  -' lines,
    an Examples: block of 2-3 real pbus command lines, and the man page."""
    r = ctx.ok(*command, "--help", instance=False)
    lines = r.out.splitlines()
    check(lines[0].startswith("Usage: pbus"), f"{command}: Usage: first: {lines[0]!r}")
    if command and command != ("help",):
        check("Options:" in lines, f"{command}: no Options: section: {r.out}")
        options = lines[lines.index("Options:") + 1:]
        check(options and re.match(r"  +-", options[0]), f"{command}: Options: {options[:2]}")
    check("Examples:" in lines, f"{command}: no Examples: block: {r.out}")
    examples = []
    for line in lines[lines.index("Examples:") + 1:]:
        if not line.strip():
            break
        examples.append(line)
    check(2 <= len(examples) <= 3, f"{command}: {len(examples)} examples: {examples}")
    for e in examples:
        words = e.split()
        check(e.startswith("  ") and "pbus" in words[:2], f"{command}: example {e!r}")
        # A real command line: pbus [-i NAME] and the command named.
        if command and command != ("help",):
            rest = words[words.index("pbus") + 1:]
            if rest[:1] == ["-i"]:
                rest = rest[2:]
            check(rest[:len(command)] == list(command), f"{command}: example runs {rest[:2]}: {e!r}")
    check(lines[-1].startswith("See pbus(1)"), f"{command}: last line {lines[-1]!r}")
    check(f"{HELPS[command]}(1)" in lines[-1], f"{command}: {lines[-1]!r} does not name {HELPS[command]}(1)")


def test_version(ctx):
    r = ctx.ok("--version", instance=False)
    check(re.fullmatch(r"pbus \d+\.\d+\.\d+\n", r.out), f"{r!r}")


# --- Number formats ----------------------------------------------------------

def test_precision(ctx):
    ctx.ok("set", "voltage_setpoint=3.14159", "gain=0.5", "limits=1.5,-2,3")
    check(ctx.ok("get", "-f", "2", "voltage_setpoint").out == "3.14\n", "-f 2")
    check(ctx.ok("get", "--fixed=0", "voltage_setpoint").out == "3\n", "--fixed=0")
    check(ctx.ok("get", "-e", "3", "voltage_setpoint").out == "3.142e+00\n", "-e 3")
    check(ctx.ok("get", "-g", "3", "voltage_setpoint", "gain").out == "3.14\n0.5\n", "-g 3")
    check(ctx.ok("get", "-f", "1", "limits").out == "1.5,-2.0,3.0\n", "-f 1 on an array")
    # Integers, strings and enums are not floats: as they were.
    check(ctx.ok("get", "-f", "3", "trim", "mode", "label").out == ctx.ok("get", "trim", "mode", "label").out,
          "-f touches only floats and doubles")
    # The value itself is rounded, not its text: 0.5 is exact.
    check(ctx.ok("get", "-e", "1", "gain").out == "5.0e-01\n", "-e 1 gain")
    # Without the option, the round-trip text.
    check(ctx.ok("get", "voltage_setpoint").out == "3.14159\n", "plain")
    # list and watch format the same way.
    r = ctx.ok("list", "-f", "2", "voltage_setpoint")
    check(re.search(r"^voltage_setpoint +double +3\.14 +V$", r.out, re.M), f"list -f 2: {r.out}")
    one_line_error(ctx.run("get", "-f", "x", "gain"), 2, r"pbus: get: -f wants a number of digits 0-40, not 'x'.*")
    one_line_error(ctx.run("get", "-f", "41", "gain"), 2, r"pbus: get: -f wants a number of digits 0-40.*")
    one_line_error(ctx.run("get", "-f", "2", "-e", "2", "gain"), 2, r"pbus: get: -f and -e exclude each other.*")


def test_hex_integers(ctx):
    ctx.ok("set", "offset_counts=-5", "sample_rate=1000", "trim=-1", "counters=1,255,-1")
    r = ctx.ok("get", "-x", "offset_counts", "sample_rate", "trim", "counters", "gain")
    check(r.out == "0xfffb\n0x3e8\n0xff\n0x1,0xff,0xffffffff\n0.5\n", f"--hex: {r.out!r}")
    check(ctx.ok("get", "--hex", "sample_rate").out == "0x3e8\n", "--hex")
    # Values are read in decimal only: hex output does not read back.
    one_line_error(ctx.run("set", "sample_rate=0x3e8"), 1, r"pbus: set sample_rate=0x3e8: not a uint32 .*")


def test_numeric_enums(ctx):
    ctx.ok("set", "mode=ON")
    check(ctx.get("mode") == "ON", "label by default")
    check(ctx.ok("get", "-n", "mode").out == "1\n", "get -n")
    check(ctx.ok("get", "--numeric", "mode").out == "1\n", "get --numeric")
    check(json.loads(ctx.ok("get", "-n", "--json", "mode").out)["mode"]["value"] == 1, "get -n --json")
    check(re.search(r"^mode +enum +1 *$", ctx.ok("list", "-n", "mode").out, re.M), "list -n")
    params = {p["name"]: p for p in json.loads(ctx.ok("dump", "-n", "--json").out)["parameters"]}
    check(params["mode"]["value"] == 1 and params["mode"]["default"] == 0, f"dump -n --json: {params['mode']}")
    check(json.loads(ctx.ok("dump", "--json").out)["parameters"][17]["value"] == "ON", "dump --json: label")
    check(re.search(r"^    value    1  \(", ctx.ok("dump", "-n").out, re.M), "dump -n")
    one_line_error(ctx.run("info", "-n"), 2, r"pbus: info: unknown option '-n'.*")
    # watch -n: numbers, and -n is no longer the interval.
    rc, _, out, err = watch_across(ctx, "mode=OFF", "-n", "-c", "1", "mode")
    check(rc == 0 and out == "mode=0 ok\n", f"watch -n: rc={rc} out={out!r} err={err!r}")


# --- Timestamps --------------------------------------------------------------

def test_time_formats(ctx):
    ctx.ok("set", "trim=7")
    ns, _ = stamp(ctx, "trim")
    seconds, frac = divmod(ns, 10**9)
    r = ctx.ok("get", "--time-format=unix", "trim")
    check(r.out == f"{seconds}.{frac:09d} 7\n", f"unix: {r.out!r} (timestamp_ns {ns})")
    utc = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    r = ctx.ok("get", "--time-format", "iso", "trim")
    check(r.out == f"{utc}.{frac // 1000:06d}Z 7\n", f"iso: {r.out!r}")
    local = datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")
    for args in (["-t"], ["--time"], ["--time-format=local"]):
        r = ctx.ok("get", *args, "trim")
        check(r.out == f"{local}.{frac // 1000:06d} 7\n", f"{args}: {r.out!r}")
    r = ctx.ok("get", "--time-format=%H:%M:%S.%f|%%", "trim")
    check(r.out == f"{local[11:]}.{frac // 1000:06d}|% 7\n", f"strftime: {r.out!r}")
    # rel: seconds since pbus started; the value was written before it.
    r = ctx.ok("get", "--time-format=rel", "trim")
    m = re.fullmatch(r"(-\d+\.\d{6}) 7\n", r.out)
    check(m and -TIMEOUT < float(m.group(1)) < 0, f"rel: {r.out!r}")
    # -v: time= in the chosen format; without -t, ISO with milliseconds.
    r = ctx.ok("get", "-v", "--time-format=unix", "trim")
    check(r.out == f"trim=7 status=ok time={seconds}.{frac:09d} seq={stamp_seq(ctx, 'trim')}\n", f"-v unix: {r.out!r}")
    r = ctx.ok("get", "-v", "trim")
    check(re.fullmatch(r"trim=7 status=ok time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z seq=\d+\n", r.out), f"-v: {r.out!r}")
    one_line_error(ctx.run("get", "--time-format=bogus", "trim"), 2,
                   r"pbus: get: --time-format 'bogus' is none of local, iso, unix, rel .*")


def stamp_seq(ctx, name):
    return json.loads(ctx.ok("get", "--json", name).out)[name]["seq"]


def test_terse_and_separator(ctx):
    ctx.ok("set", "trim=3", "voltage_setpoint=2.5")
    ns, _ = stamp(ctx, "trim")
    unix = f"{ns // 10**9}.{ns % 10**9:09d}"
    check(ctx.ok("get", "-T", "trim").out == "3\n", "get -T: the value")
    check(ctx.ok("get", "-T", "-F", ",", "--time-format=unix", "trim").out == f"{unix},3\n", "get -T -F , -t")
    r = ctx.ok("get", "-v", "-F", "|", "voltage_setpoint")
    check(re.fullmatch(r"voltage_setpoint=2\.5\|V\|status=ok\|time=[^|]+\|seq=\d+\n", r.out), f"get -v -F '|': {r.out!r}")
    one_line_error(ctx.run("get", "-T", "-v", "trim"), 2, r"pbus: get: --terse and --verbose exclude each other.*")
    one_line_error(ctx.run("get", "--json", "-t", "trim"), 2, r"pbus: get: --json has its own fields.*")
    one_line_error(ctx.run("get", "--json", "-f", "2", "trim"), 2, r"pbus: get: --json has its own fields.*")
    # watch: [TIME] NAME=VALUE STATUS; terse [TIME] NAME VALUE.
    for args, expect in ((["--initial", "-c", "1"], "trim=3 ok\ntrim=4 ok\n"),
                         (["--initial", "-c", "1", "-T"], "trim 3\ntrim 4\n"),
                         (["--initial", "-c", "1", "-T", "-F", ";"], "trim;3\ntrim;4\n"),
                         (["--initial", "-c", "1", "-F", "\t", "-x"], "trim=0x3\tok\ntrim=0x4\tok\n")):
        ctx.ok("set", "trim=3")
        rc, first, out, err = watch_across(ctx, "trim=4", *args, "trim")
        check(rc == 0 and first + "\n" + out == expect, f"watch {args}: rc={rc} {first!r} {out!r} {err!r}")
    rc, first, out, err = watch_across(ctx, "trim=5", "--initial", "-c", "1", "-t", "--time-format=unix", "-F", ",",
                                       "trim")
    ns, _ = stamp(ctx, "trim")
    check(rc == 0 and re.fullmatch(r"\d+\.\d{9},trim=4,ok", first) and out == f"{ns // 10**9}.{ns % 10**9:09d},trim=5,ok\n",
          f"watch -t -F ,: {first!r} {out!r}")


# --- Timeouts ------------------------------------------------------------------

def test_watch_interval_letter(ctx):
    # -d is the interval now; --interval still is.
    for args in (["-d", "20"], ["--interval", "20"]):
        rc, _, out, err = watch_across(ctx, "trim=9", *args, "-c", "1", "trim")
        check(rc == 0 and out == "trim=9 ok\n", f"watch {args}: {rc} {out!r} {err!r}")
    one_line_error(ctx.run("watch", "-d", "0"), 2, r"pbus: watch: --interval '0'.*")


def test_watch_timeout(ctx):
    for server in ([], ["--server"]):
        start = time.monotonic()
        r = ctx.run("watch", *server, "-w", "0.5", "-c", "3", "identity.serial")
        check(time.monotonic() - start < TIMEOUT, "watch -w took too long")
        one_line_error(r, 5, re.escape("pbus: watch: timed out after 0.5 s with 0 of 3 changes"))
        # Without --count the end of -w is the end of the watch.
        r = ctx.run("watch", *server, "-w", "0.3", "identity.serial")
        check(r.rc == 0 and r.out == "" and r.err == "", f"watch -w without -c: {r!r}")
    one_line_error(ctx.run("watch", "-w", "0", "trim"), 2, r"pbus: watch: -w wants seconds above 0, not '0'.*")
    one_line_error(ctx.run("watch", "-w", "0x10", "trim"), 2, r"pbus: watch: -w wants seconds above 0.*")


def test_get_waits_for_the_instance(ctx):
    name = ctx.new_instance_name()
    r = ctx.run("get", "-w", "0.3", "trim", instance=name)
    one_line_error(r, 5, re.escape(f"pbus: get: instance '{name}' not found within 0.3 s (is pbusd running?)"))
    # Without -w: at once, status 3 as before.
    one_line_error(ctx.run("get", "trim", instance=name), 3, r"pbus: instance '.*' not found \(is pbusd running\?\)")
    # pbusd starting while get waits.
    p = subprocess.Popen([ctx.pbus, "get", "-w", str(TIMEOUT), "trim"], env=ctx.env(name),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.3)
        check(p.poll() is None, "get -w did not wait")
        d = ctx.start_daemon(instance=name, state_dir=os.path.join(ctx.tmp, "state-" + name))
        rc, out, err = finish(p)
        d.stop()
    finally:
        p.kill()
    check(rc == 0 and out == "0\n" and err == "", f"get -w while pbusd starts: {rc} {out!r} {err!r}")


@pytest.fixture
def hung(ctx):
    """A pbusd of its own, stopped with SIGSTOP once it is up: it answers
    nothing (the kernel still accepts connections on its socket)."""
    name = ctx.new_instance_name()
    d = ctx.start_daemon(instance=name, state_dir=os.path.join(ctx.tmp, "state-" + name))
    os.kill(d.proc.pid, signal.SIGSTOP)
    yield name
    os.kill(d.proc.pid, signal.SIGCONT)
    d.stop()


def test_timeouts_of_a_hung_pbusd(ctx, hung):
    for args, pattern in (
            (["set", "-w", "0.5", "trim=1"], r"pbus: (instance '.*': pbusd|set: pbusd) did not answer within 0\.5 s.*"),
            (["stat", "-w", "0.5"], r"pbus: (instance '.*': pbusd|stat: pbusd) did not answer within 0\.5 s"),
            (["stat", "--timeout=0.5", "--once"], r"pbus: (instance '.*': pbusd|stat: pbusd) did not answer within 0\.5 s"),
            (["watch", "--server", "-w", "0.5", "-c", "1", "trim"], r"pbus: .*(did not answer within 0\.5 s|timed out after 0\.5 s).*")):
        start = time.monotonic()
        r = ctx.run(*args, instance=hung)
        took = time.monotonic() - start
        one_line_error(r, 5, pattern)
        check(took < 3, f"{args}: took {took:.1f} s")


def test_stat_watch_letter(ctx):
    # -W is stat's watch now (-w is the timeout); --watch still is.
    for letter in ("-W", "--watch"):
        p = subprocess.Popen([ctx.pbus, "stat", letter, "--json"], env=ctx.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            reader = LineReader(p.stdout.fileno())
            a, b = json.loads(reader.line()), json.loads(reader.line())
            p.send_signal(signal.SIGTERM)
            rc, _, err = finish(p)
        finally:
            p.kill()
        check(rc == 0 and err == "" and b["uptime_s"] > a["uptime_s"], f"stat {letter}: {rc} {err!r}")
    one_line_error(ctx.run("stat", "-w"), 2, r"pbus: stat: option '-w' needs an argument.*")


def test_set_wait_saved_has_no_letter(ctx):
    # -w is the timeout: "set -w trim=1" is a malformed timeout, not --wait-saved.
    one_line_error(ctx.run("set", "-w", "trim=1"), 2, r"pbus: set: -w wants seconds above 0, not 'trim=1'.*")
    ctx.ok("set", "-w", "5", "trim=2")
    ctx.ok("set", "--direct", "--wait-saved", "-w", "5", "ramp_ms=120")
    check(ctx.get("trim") == "2" and ctx.get("ramp_ms") == "120", "set -w 5")


# --- gpio and i2c: the command lines (the devices: tests/kernel test-tools) ---

@pytest.mark.parametrize("args,pattern", [
    (["gpio", "get", "--drive", "open-drain", "c", "1"], r"pbus: gpio get: --drive applies only to gpio set .*"),
    (["gpio", "monitor", "--toggle", "100", "c", "1"], r"pbus: gpio monitor: --toggle applies only to gpio set .*"),
    (["gpio", "get", "-w", "1", "c", "1"], r"pbus: gpio get: --timeout applies only to gpio monitor .*"),
    (["gpio", "detect", "--bias", "pull-up"], r"pbus: gpio detect: --bias applies only to gpio get, set and monitor .*"),
    (["gpio", "info", "-l"], r"pbus: gpio info: --active-low applies only to gpio get, set and monitor .*"),
    (["gpio", "set", "--hold-ms", "1", "--edge", "both", "c", "1=1"], r"pbus: gpio set: --edge applies only to gpio monitor .*"),
    (["gpio", "get", "--bias", "sideways", "c", "1"],
     r"pbus: gpio get: --bias: expected pull-up, pull-down, disabled or as-is, not 'sideways' .*"),
    (["gpio", "set", "--drive", "open", "c", "1=1"],
     r"pbus: gpio set: --drive: expected push-pull, open-drain or open-source, not 'open' .*"),
    (["gpio", "set", "--toggle", "0,100", "c", "1=1"], r"pbus: gpio set: --toggle: not a list of periods .*'0,100'.*"),
    (["gpio", "set", "--toggle", "10x", "c", "1=1"], r"pbus: gpio set: --toggle: not a list of periods .*"),
    (["gpio", "set", "--toggle", "0", "c", "1=1"], r"pbus: gpio set: --toggle: not a list of periods .*"),
    (["gpio", "monitor", "-w", "0", "c", "1"], r"pbus: gpio monitor: -w wants seconds above 0, not '0' .*"),
    (["i2c", "detect", "--word", "1"], r"pbus: i2c detect: --word applies only to i2c get, set and dump .*"),
    (["i2c", "get", "-y", "1", "0x50", "0"], r"pbus: i2c get: --yes applies only to i2c detect .*"),
    (["i2c", "transfer", "--range", "0-1", "1", "r1@0x50"], r"pbus: i2c transfer: --range applies only to i2c dump .*"),
    (["i2c", "dump", "1"], r"pbus: i2c dump: expected BUS ADDR .*"),
    (["i2c", "transfer", "1"], r"pbus: i2c transfer: expected BUS MSG\.\.\. .*"),
])
def test_hardware_option_refusals(ctx, args, pattern):
    one_line_error(ctx.run(*args, instance=False), 2, pattern)


@pytest.mark.parametrize("args,pattern", [
    (["x1@0x50"], r"pbus: i2c transfer 99: not a message \{r\|w\}LENGTH\[@ADDR\]: 'x1@0x50'"),
    ([""], r"pbus: i2c transfer 99: not a message \{r\|w\}LENGTH\[@ADDR\]: ''"),  # found by fuzz-tools
    (["@0x50"], r"pbus: i2c transfer 99: not a message \{r\|w\}LENGTH\[@ADDR\]: '@0x50'"),
    (["r1"], r"pbus: i2c transfer 99: 'r1': the first message needs an address \(r1@0x50\)"),
    (["r0@0x50"], r"pbus: i2c transfer 99: 'r0@0x50': not a length 1-8192"),
    (["r8193@0x50"], r"pbus: i2c transfer 99: 'r8193@0x50': not a length 1-8192"),
    (["r1@0x78"], r"pbus: i2c transfer 99: address 0x78 out of range \(0x03-0x77\)"),
    (["w2@0x50", "0x00"], r"pbus: i2c transfer 99: 'w2@0x50' has 1 of its 2 bytes"),
    (["w1@0x50", "0x100"], r"pbus: i2c transfer 99: '0x100': not a byte 0x00-0xff .*"),
    (["w1@0x50", "0x10*"], r"pbus: i2c transfer 99: '0x10\*': not a byte 0x00-0xff .*"),
    (["w1@0x50", "1", "2"], r"pbus: i2c transfer 99: not a message \{r\|w\}LENGTH\[@ADDR\]: '2'"),
    (["r1@0x50"] * 43, r"pbus: i2c transfer 99: more than 42 messages"),
])
def test_i2c_transfer_syntax(ctx, args, pattern):
    """Checked before the bus is opened (bus 99 is not there)."""
    one_line_error(ctx.run("i2c", "transfer", "99", *args, instance=False), 1, pattern)
    # The same messages well formed reach the bus: no bus 99.
    one_line_error(ctx.run("i2c", "transfer", "99", "w2@0x50", "0x00", "0x01+", "r4", instance=False), 3,
                   r"pbus: i2c transfer 99: no bus /dev/i2c-99 \(is i2c-dev loaded\?\)")


def test_i2c_dump_range_syntax(ctx):
    for bad in ("0x10", "0x20-0x10", "0-0x100", "a-b"):
        one_line_error(ctx.run("i2c", "dump", "99", "0x50", "-r", bad, instance=False), 1,
                       re.escape(f"pbus: i2c dump 99 0x50: -r: not a range FIRST-LAST of registers 0x00-0xff: '{bad}'"))
    one_line_error(ctx.run("i2c", "dump", "99", "0x50", "-r", "0x10-0x1f", instance=False), 3,
                   r"pbus: i2c dump 99 0x50: no bus /dev/i2c-99 .*")


def test_list_waits_for_methods_at_most_w(ctx, hung):
    """list reads the parameters from the table and asks pbusd for the
    methods: -w bounds that wait (a hung pbusd cost a fixed second)."""
    for args, low, high in ((["list", "-w", "0.2"], 0.15, 0.8), (["list"], 0.9, 3)):
        start = time.monotonic()
        r = ctx.run(*args, instance=hung)
        took = time.monotonic() - start
        check(r.rc == 0 and r.err == "" and "voltage_setpoint" in r.out, f"{args}: {r!r}")
        check(low <= took < high, f"{args}: took {took:.2f} s, not {low}..{high}")
    r = ctx.run("list", "--long", "--timeout=0.2", instance=hung)
    check(r.rc == 0 and "voltage_setpoint" in r.out, f"list --long: {r!r}")
    check(re.fullmatch(r"pbus: list: methods and broadcasts not shown: pbusd of '.*': .*\n", r.err), f"{r.err!r}")
    one_line_error(ctx.run("list", "-w", "0"), 2, r"pbus: list: -w wants seconds above 0, not '0' .*")
