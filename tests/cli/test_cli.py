"""test_cli.py: tests of `pbus`, the command line, against the real pbusd.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/cli --pbus-build build/dev

--pbus-build holds daemon/pbusd and tools/pbus. Each test prints
`PASS: cli/<name>` or `FAIL: cli/<name>: reason` (tests/conftest.py).

One pbusd serves tests/cli/fixtures/test.pbs under an instance name unique
to this run (it holds the pid) for the whole module, and the tests run in
the order of this file (the first ones see the defaults); readiness comes
through --notify-fd, never a sleep. Every pbusd started here is killed at
the end, whatever happens.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.cli import SCHEMA, LineReader, Result, finish, fnv1a64, one_line_error, schema_hash, start_watch
from pbustest.daemon import Daemon

SUITE = "cli"


@pytest.fixture(autouse=True)
def pbusd_alive(ctx):
    """After each test: the module's pbusd still runs."""
    yield
    check(ctx.daemon.proc.poll() is None,
          f"pbusd exited ({ctx.daemon.proc.returncode}): {ctx.daemon.log()}")


# The parameters of fixtures/test.pbs, in index order: name, type, default
# as `pbus get` prints it, unit.
PARAMS = [
    ("identity.manufacturer", "string", "ACME Instruments", ""),
    ("identity.serial", "string", "SN-0001", ""),
    ("output_enable", "bool", "false", ""),
    ("trim", "int8", "0", ""),
    ("offset_counts", "int16", "-5", "counts"),
    ("ramp_ms", "int32", "100", "ms"),
    ("energy_uj", "int64", "-1234567890123", "uJ"),
    ("fan_level", "uint8", "1", ""),
    ("averaging", "uint16", "16", ""),
    ("sample_rate", "uint32", "1000", "Hz"),
    ("uptime_ns", "uint64", "0", "ns"),
    ("gain", "float", "1", ""),
    ("voltage_setpoint", "double", "0", "V"),
    ("measured_voltage", "double", "0", "V"),
    ("temperature", "double", "25.5", "\u00b0C"),
    ("label", "string", "bench 1", ""),
    ("calibration", "bytes", "00ff", ""),
    ("mode", "enum", "OFF", ""),
    ("limits", "double[]", "1.5,-2,3", "V"),
    ("counters", "int32[]", "", ""),
    ("secret", "uint32", None, ""),  # noread
]
READABLE = [p for p in PARAMS if p[2] is not None]


# --- The tests ---------------------------------------------------------------

COMMANDS = ["list", "get", "set", "watch", "dump", "info", "stat"]


def test_help(ctx):
    r = ctx.ok("--help", instance=False)
    check(r.out.startswith("Usage: pbus"), f"pbus --help: {r!r}")
    for c in COMMANDS:
        check(re.search(rf"^  {c} ", r.out, re.M), f"pbus --help does not list {c}: {r.out}")
    for c in COMMANDS:
        a = ctx.ok(c, "--help", instance=False)
        b = ctx.ok("help", c, instance=False)
        h = ctx.ok(c, "-h", instance=False)
        check(a.out.startswith(f"Usage: pbus [-i NAME] {c}"), f"{c} --help: {a!r}")
        check(a.out == b.out == h.out, f"'{c} --help', '{c} -h' and 'help {c}' differ")
        check("--help" in a.out and "--instance" in a.out, f"{c} --help lacks options: {a.out}")
    ctx.ok("help", instance=False)
    check(ctx.ok("--version", instance=False).out.startswith("pbus "), "--version")
    one_line_error(ctx.run("help", "nosuch", instance=False), 2, r"pbus: unknown command 'nosuch'.*")
    one_line_error(ctx.run("nosuch", instance=False), 2, r"pbus: unknown command 'nosuch'.*")
    one_line_error(ctx.run(instance=False), 2, r"pbus: no command given.*")
    one_line_error(ctx.run("--bogus", "list", instance=False), 2, r"pbus: unknown option '--bogus'.*")
    one_line_error(ctx.run("get", "--bogus", "trim"), 2, r"pbus: get: unknown option '--bogus'.*")
    one_line_error(ctx.run("list", "-q"), 2, r"pbus: list: unknown option '-q'.*")
    one_line_error(ctx.run("-i", instance=False), 2, r"pbus: option '-i' needs an argument.*")


def test_no_instance_given(ctx):
    for args in (["list"], ["get", "trim"], ["set", "trim=1"], ["watch"], ["dump", "--json"], ["info"],
                 ["set", "--direct", "trim=1"], ["watch", "--server"], ["stat"]):
        one_line_error(ctx.run(*args, instance=False), 2,
                       re.escape("pbus: no instance given (use -i NAME or set PBUS_INSTANCE)"))


def test_missing_instance(ctx):
    name = f"clitest-{os.getpid()}-nope"
    msg = re.escape(f"pbus: instance '{name}' not found (is pbusd running?)")
    for args in (["list"], ["get", "trim"], ["set", "trim=1"], ["watch", "--count", "1"],
                 ["dump", "--json"], ["info"], ["set", "--direct", "trim=1"],
                 ["watch", "--server", "--count", "1"], ["stat", "--once"]):
        one_line_error(ctx.run("-i", name, *args), 3, msg)
        one_line_error(ctx.run(*args, instance=name), 3, msg)       # $PBUS_INSTANCE
        one_line_error(ctx.run(args[0], "-i", name, *args[1:], instance=False), 3, msg)
    one_line_error(ctx.run("-i", "bad/name", "list"), 2, r"pbus: invalid instance name 'bad/name'.*")


def test_instance_option(ctx):
    # -i beats $PBUS_INSTANCE, before or after the command.
    other = f"clitest-{os.getpid()}-other"
    check(ctx.run("-i", ctx.instance, "get", "trim", instance=other).rc == 0, "-i before the command")
    check(ctx.run("get", "-i", ctx.instance, "trim", instance=other).rc == 0, "-i after the command")
    check(ctx.run("get", f"--instance={ctx.instance}", "trim", instance=other).rc == 0, "--instance=")


def test_list(ctx):
    r = ctx.ok("list")
    lines = r.out.splitlines()
    check(lines[0].split() == ["NAME", "TYPE", "VALUE", "UNIT"], f"header: {lines[0]!r}")
    check(len(lines) == 1 + len(PARAMS), f"expected {len(PARAMS)} rows: {r.out}")
    for (name, type_, default, unit), line in zip(PARAMS, lines[1:]):
        check(line == line.rstrip(), f"trailing blanks: {line!r}")
        cells = re.split(r"\s{2,}", line)
        check(cells[0] == name and cells[1] == type_, f"row {line!r} is not {name} {type_}")
        if default is None:
            check("(not readable)" in line, f"noread value shown: {line!r}")
        elif default:
            check(cells[2] == default, f"{name}: value {cells[2]!r}, expected {default!r}")
        if unit:
            check(cells[-1] == unit, f"{name}: unit {cells[-1]!r}, expected {unit!r}")
    # Values line up: the VALUE column starts at the same place in every row.
    col = lines[0].index("VALUE")
    check(all(l[col - 2:col] == "  " and l[col] != " " for l in lines[1:] if len(l) > col),
          "columns not aligned")

    r = ctx.ok("list", "--long")
    rows = {l.split()[0]: l for l in r.out.splitlines()[1:]}
    check(r.out.splitlines()[0].split()[:10] ==
          ["NAME", "TYPE", "VALUE", "UNIT", "FLAGS", "CLASS", "LIMITS", "DEFAULT", "GROUP",
           "DESCRIPTION"], f"long header: {r.out.splitlines()[0]!r}")
    v = rows["voltage_setpoint"]
    for text in ("persistent", "setting", "0 \u2026 30 V", "operators", 'Target voltage "set" \\ tab\\tend'):
        check(text in v, f"list --long voltage_setpoint lacks {text!r}: {v!r}")
    m = rows["identity.manufacturer"]
    for text in (" ro ", "constant", "Maker of the instrument"):
        check(text in m, f"list --long identity.manufacturer lacks {text!r}: {m!r}")
    check("-10 \u2026 10" in rows["trim"], rows["trim"])
    check("noread" in rows["secret"], rows["secret"])

    r = ctx.ok("list", "identity.*")
    check([l.split()[0] for l in r.out.splitlines()[1:]] == ["identity.manufacturer", "identity.serial"],
          f"list identity.*: {r.out}")
    one_line_error(ctx.run("list", "nomatch*"), 1, r"pbus: list: no parameter, method or broadcast matches 'nomatch\*'")


def test_get(ctx):
    for name, _, default, _ in READABLE:
        check(ctx.get(name) == default, f"get {name}: {ctx.get(name)!r}, expected {default!r}")
    r = ctx.ok("get", "trim", "mode", "limits", "energy_uj")
    check(r.out == "0\nOFF\n1.5,-2,3\n-1234567890123\n", f"get of several: {r.out!r}")

    r = ctx.ok("get", "--verbose", "voltage_setpoint", "label")
    lines = r.out.splitlines()
    check(re.fullmatch(r"voltage_setpoint=0 V status=ok time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z seq=\d+",
                       lines[0]), f"get --verbose: {lines[0]!r}")
    check(re.fullmatch(r"label=bench 1 status=ok time=\S+ seq=\d+", lines[1]), f"get --verbose: {lines[1]!r}")
    check(re.search(r"status=invalid", ctx.ok("get", "-v", "measured_voltage").out),
          "a parameter without default is invalid until written")

    r = ctx.ok("get", "--json", "voltage_setpoint", "output_enable", "limits", "mode", "calibration", "counters")
    doc = json.loads(r.out)
    check(list(doc) == ["voltage_setpoint", "output_enable", "limits", "mode", "calibration", "counters"],
          f"get --json keys: {list(doc)}")
    check(doc["voltage_setpoint"]["value"] == 0 and doc["voltage_setpoint"]["unit"] == "V", r.out)
    check(doc["output_enable"]["value"] is False, r.out)
    check(doc["limits"]["value"] == [1.5, -2, 3], r.out)
    check(doc["mode"]["value"] == "OFF" and doc["calibration"]["value"] == "00ff", r.out)
    check(doc["counters"]["value"] == [], r.out)
    for e in doc.values():
        check(e["status"] == "ok" and isinstance(e["timestamp_ns"], int) and isinstance(e["seq"], int), r.out)

    one_line_error(ctx.run("get", "trim", "foo", "mode"), 1, re.escape("pbus: unknown parameter 'foo'"))
    one_line_error(ctx.run("get", "secret"), 1, r"pbus: get secret: parameter is not readable.*")
    one_line_error(ctx.run("get"), 2, r"pbus: get: no parameter named.*")


# (name, text given to set, what get prints afterwards, the JSON value)
SETS = [
    ("output_enable", "true", "true", True),
    ("output_enable", "off", "false", False),
    ("output_enable", "1", "true", True),
    ("trim", "-10", "-10", -10),
    ("trim", "10", "10", 10),
    ("offset_counts", "-1000", "-1000", -1000),
    ("ramp_ms", "60000", "60000", 60000),
    ("energy_uj", "-9223372036854775808", "-9223372036854775808", -9223372036854775808),
    ("energy_uj", "9223372036854775807", "9223372036854775807", 9223372036854775807),
    ("fan_level", "5", "5", 5),
    ("averaging", "1024", "1024", 1024),
    ("sample_rate", "1000000", "1000000", 1000000),
    ("gain", "2.5", "2.5", 2.5),
    ("gain", "0.5", "0.5", 0.5),
    ("voltage_setpoint", "3.3", "3.3", 3.3),
    ("voltage_setpoint", "30", "30", 30),
    ("voltage_setpoint", "0.001", "0.001", 0.001),
    ("label", "h\u00e9llo", "h\u00e9llo", "h\u00e9llo"),
    ("label", "12345678", "12345678", "12345678"),
    ("label", "", "", ""),
    ("label", 'a"b\\c', 'a"b\\c', 'a"b\\c'),
    ("label", "x\ny\tz", "x\\ny\\tz", "x\ny\tz"),
    ("calibration", "DEADbeef", "deadbeef", "deadbeef"),
    ("calibration", "", "", ""),
    ("calibration", "01", "01", "01"),
    ("mode", "ON", "ON", "ON"),
    ("mode", "tripped", "TRIPPED", "TRIPPED"),
    ("mode", "-1", "STANDBY", "STANDBY"),
    ("limits", "-100,0.25,100,7", "-100,0.25,100,7", [-100, 0.25, 100, 7]),
    ("limits", "", "", []),
    ("limits", "42", "42", [42]),
    ("counters", "1,-2,2147483647", "1,-2,2147483647", [1, -2, 2147483647]),
]


def test_set_every_type(ctx):
    for name, text, shown, value in SETS:
        before = ctx.snapshot()
        ctx.ok("set", f"{name}={text}")
        check(ctx.get(name) == shown, f"set {name}={text!r}: get prints {ctx.get(name)!r}, expected {shown!r}")
        after = ctx.snapshot()
        check(after[name][0] == value and type(after[name][0]) is type(value),
              f"set {name}={text!r}: dump --json value {after[name][0]!r}, expected {value!r}")
        check(after[name][1] == "ok" and after[name][3] == before[name][3] + 1,
              f"set {name}: status/seq {after[name]} after {before[name]}")
        for other in before:
            if other != name:
                check(after[other] == before[other], f"set {name} changed {other}")


def test_set_several(ctx):
    before = ctx.snapshot()
    args = ["trim=3", "mode=ON", "label=two word", "limits=1,2", "voltage_setpoint=12.5",
            "output_enable=true", "calibration=abcd"]
    ctx.ok("set", *args)
    after = ctx.snapshot()
    expect = {"trim": 3, "mode": "ON", "label": "two word", "limits": [1, 2],
              "voltage_setpoint": 12.5, "output_enable": True, "calibration": "abcd"}
    for name, value in expect.items():
        check(after[name][0] == value, f"{name}: {after[name][0]!r}, expected {value!r}")
        check(after[name][3] == before[name][3] + 1, f"{name}: seq {after[name][3]} after {before[name][3]}")
    # The same parameter twice: applied in order, the last one stays.
    ctx.ok("set", "trim=1", "trim=2")
    check(ctx.get("trim") == "2", "set trim=1 trim=2")


# Refusals: (arguments, exit status, the stderr line as a regex). Valid
# assignments come first in some of them: they must not be written either.
BAD = [
    # The examples of the specification, word for word.
    (["voltage_setpoint=40"], 1, re.escape("pbus: set voltage_setpoint=40: value out of range (0 \u2026 30 V)")),
    (["foo=1"], 1, re.escape("pbus: unknown parameter 'foo'")),
    (["measured_voltage=1"], 1, re.escape("pbus: set measured_voltage: parameter is read-only")),
    (["output_enable=maybe"], 1, re.escape("pbus: set output_enable=maybe: not a bool (true/false)")),
    # Unknown names, also after valid ones.
    (["trim=1", "mode=ON", "nosuch.param=3"], 1, re.escape("pbus: unknown parameter 'nosuch.param'")),
    (["Trim=1"], 1, re.escape("pbus: unknown parameter 'Trim'")),
    # Wrong type.
    (["trim=x"], 1, re.escape("pbus: set trim=x: not an int8 (a decimal integer)")),
    (["ramp_ms=1.5"], 1, r"pbus: set ramp_ms=1\.5: not an int32 .*"),
    (["sample_rate=0x10"], 1, r"pbus: set sample_rate=0x10: not a uint32 .*"),
    (["gain=abc"], 1, r"pbus: set gain=abc: not a float .*"),
    (["voltage_setpoint=nan"], 1, r"pbus: set voltage_setpoint=nan: not a double .*"),
    (["voltage_setpoint=inf"], 1, r"pbus: set voltage_setpoint=inf: not a double .*"),
    (["voltage_setpoint=-infinity"], 1, r"pbus: set voltage_setpoint=-infinity: not a double .*"),
    # Decimal only (docs/cli.md): strtod's hexadecimal floats are not.
    (["gain=0x1p1"], 1, re.escape("pbus: set gain=0x1p1: not a float (a finite decimal number)")),
    (["voltage_setpoint=0x10"], 1, r"pbus: set voltage_setpoint=0x10: not a double .*"),
    (["limits=1,0x1p-2"], 1, r"pbus: set limits=1,0x1p-2: not a list of double .*"),
    (["trim=0x1"], 1, r"pbus: set trim=0x1: not an int8 .*"),
    (["voltage_setpoint=1V"], 1, r"pbus: set voltage_setpoint=1V: not a double .*"),
    (["calibration=0g"], 1, r"pbus: set calibration=0g: not hex bytes .*"),
    (["calibration=abc"], 1, r"pbus: set calibration=abc: not hex bytes .*"),
    (["limits=1,,2"], 1, r"pbus: set limits=1,,2: not a list of double .*"),
    (["counters=1,x"], 1, r"pbus: set counters=1,x: not a list of int32 .*"),
    (["output_enable=2"], 1, re.escape("pbus: set output_enable=2: not a bool (true/false)")),
    (["label=\udcff"], 1, r"pbus: set label=\\xff: not valid UTF-8 text"),
    # Out of range: limits, type ranges, array elements.
    (["trim=2", "voltage_setpoint=-0.5"], 1, r"pbus: set voltage_setpoint=-0\.5: value out of range \(0 \u2026 30 V\)"),
    (["trim=11"], 1, re.escape("pbus: set trim=11: value out of range (-10 \u2026 10)")),
    (["fan_level=6"], 1, re.escape("pbus: set fan_level=6: value out of range (0 \u2026 5)")),
    (["fan_level=-1"], 1, re.escape("pbus: set fan_level=-1: value out of range (0 \u2026 5)")),
    (["averaging=0"], 1, re.escape("pbus: set averaging=0: value out of range (1 \u2026 1024)")),
    (["gain=8.5"], 1, re.escape("pbus: set gain=8.5: value out of range (0.5 \u2026 8)")),
    (["gain=1e39"], 1, r"pbus: set gain=1e39: value out of range .*"),
    (["energy_uj=9223372036854775808"], 1, r"pbus: set energy_uj=9223372036854775808: value out of range .*"),
    (["ramp_ms=-1"], 1, re.escape("pbus: set ramp_ms=-1: value out of range (0 \u2026 60000 ms)")),
    (["limits=1,200"], 1, re.escape("pbus: set limits=1,200: element out of range (-100 \u2026 100 V)")),
    # Read-only, also after valid ones.
    (["trim=1", "identity.manufacturer=Evil"], 1, re.escape("pbus: set identity.manufacturer: parameter is read-only")),
    (["uptime_ns=5"], 1, re.escape("pbus: set uptime_ns: parameter is read-only")),
    (["temperature=20"], 1, re.escape("pbus: set temperature: parameter is read-only")),
    # Too long.
    (["label=123456789"], 1, re.escape("pbus: set label=123456789: too long (at most 8 bytes)")),
    (["label=" + "x" * 100], 1, r"pbus: set label=x{40}\u2026: too long \(at most 8 bytes\)"),
    (["calibration=0011223344"], 1, re.escape("pbus: set calibration=0011223344: too long (at most 4 bytes)")),
    (["limits=1,2,3,4,5"], 1, re.escape("pbus: set limits=1,2,3,4,5: too many elements (at most 4)")),
    # Bad enumerators.
    (["mode=BOGUS"], 1, re.escape("pbus: set mode=BOGUS: not an enumerator (one of OFF, ON, TRIPPED, STANDBY)")),
    (["mode=7"], 1, re.escape("pbus: set mode=7: not an enumerator (one of OFF, ON, TRIPPED, STANDBY)")),
    (["mode="], 1, r"pbus: set mode=: not an enumerator .*"),
    # Malformed NAME=VALUE: a usage error, found before the instance is opened.
    (["voltage_setpoint"], 2, r"pbus: set: 'voltage_setpoint' is not NAME=VALUE.*"),
    (["trim=1", "=3"], 2, r"pbus: set: '=3' is not NAME=VALUE.*"),
    ([], 2, r"pbus: set: no NAME=VALUE given.*"),
]


def test_set_refused_changes_nothing(ctx):
    ctx.ok("set", "trim=0", "mode=OFF", "voltage_setpoint=1", "label=keep")
    for args, rc, pattern in BAD:
        before = ctx.snapshot()
        r = ctx.run("set", *args)  # str args: "\udcff" becomes the byte 0xff
        try:
            one_line_error(r, rc, pattern)
        except Failure as e:
            raise Failure(f"set {args!r}: {e}")
        after = ctx.snapshot()
        changed = [n for n in before if before[n] != after[n]]
        check(not changed, f"set {args!r} was refused but changed {changed}")


def test_set_hex_float_refused(ctx):
    # The same parser writes directly and reads the state file: hex is
    # refused there too, decimal exponents are not.
    one_line_error(ctx.run("set", "--direct", "gain=0x1p1"), 1,
                   re.escape("pbus: set gain=0x1p1: not a float (a finite decimal number)"))
    ctx.ok("set", "gain=2e0", "voltage_setpoint=1.5E1")
    check(ctx.get("gain") == "2" and ctx.get("voltage_setpoint") == "15", "decimal exponents")


def test_set_missing_instance_changes_nothing(ctx):
    before = ctx.snapshot()
    name = f"clitest-{os.getpid()}-absent"
    one_line_error(ctx.run("-i", name, "set", "trim=5"), 3,
                   re.escape(f"pbus: instance '{name}' not found (is pbusd running?)"))
    check(ctx.snapshot() == before, "a set on a missing instance changed this one")


def test_set_wait_saved(ctx, pbus_instance, pbusd):
    # A persistent parameter: once `set --wait-saved` returns, the value is
    # on disk, so it survives a pbusd killed at once with SIGKILL.
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    d = pbusd
    start = time.monotonic()
    ctx.ok("set", "--wait-saved", "ramp_ms=4321", "label=saved", "trim=4", instance=instance)
    check(time.monotonic() - start < 5, "set --wait-saved took 5 s or more")
    d.stop(signal.SIGKILL)
    d = Daemon(ctx, instance, state_dir).start()
    check(ctx.run("get", "ramp_ms", "label", "trim", instance=instance).out == "4321\nsaved\n0\n",
          "persistent values lost after set --wait-saved and SIGKILL (trim is not persistent)")
    # Only non-persistent parameters: nothing to wait for.
    ctx.ok("set", "--wait-saved", "trim=2", instance=instance)
    d.stop()


def test_set_orphaned_refused(ctx, pbus_instance, pbusd):
    # pbusd killed: nobody would save a write, and its restart replaces the
    # segment: `set` refuses; `info` tells why.
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    d = pbusd
    d.stop(signal.SIGKILL)
    one_line_error(ctx.run("set", "trim=1", instance=instance), 3,
                   re.escape(f"pbus: instance '{instance}' is orphaned (pbusd is not running)"))
    check(re.search(r"^state:\s+orphaned$", ctx.ok("info", instance=instance).out, re.M), "info: orphaned")
    # A new pbusd takes the instance over.
    d = Daemon(ctx, instance, state_dir).start()
    ctx.ok("set", "trim=1", instance=instance)
    d.stop()


def test_set_direct(ctx):
    # --direct writes the segment itself, with the same checks and messages.
    before = ctx.snapshot()
    ctx.ok("set", "--direct", "trim=4", "mode=STANDBY", "trim=5")
    after = ctx.snapshot()
    check(after["trim"][0] == 5 and after["mode"][0] == "STANDBY", f"set --direct: {after['trim']} {after['mode']}")
    check(after["trim"][3] == before["trim"][3] + 2, "--direct writes a name given twice twice")
    for args, rc, pattern in BAD[:4]:
        one_line_error(ctx.run("set", "--direct", *args), rc, pattern)
    ctx.ok("set", "--direct", "--wait-saved", "ramp_ms=250")
    check(ctx.get("ramp_ms") == "250", "set --direct --wait-saved")
    # Through pbusd, a name twice is sent once, with its last value.
    before = ctx.snapshot()
    ctx.ok("set", "trim=1", "trim=0")
    after = ctx.snapshot()
    check(after["trim"][0] == 0 and after["trim"][3] == before["trim"][3] + 1, f"trim: {after['trim']}")
    ctx.ok("set", "ramp_ms=100", "mode=OFF")


def test_set_without_socket(ctx, pbus_instance):
    # A pbusd that serves no socket: `set` says so and names --direct;
    # --direct works; the server-only commands say what to use instead.
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    d = Daemon(ctx, instance, state_dir, extra=["--no-socket"]).start()
    one_line_error(ctx.run("set", "trim=1", instance=instance), 3,
                   re.escape(f"pbus: instance '{instance}': pbusd serves no socket (--no-socket, or another "
                             "PBUS_SOCKET_DIR); 'pbus set --direct' writes the segment itself"))
    ctx.ok("set", "--direct", "trim=1", instance=instance)
    check(ctx.run("get", "trim", instance=instance).out == "1\n", "set --direct without a socket")
    one_line_error(ctx.run("watch", "--server", instance=instance), 3,
                   r"pbus: instance '.*': pbusd serves no socket .*; 'pbus watch' without --server reads the segment")
    one_line_error(ctx.run("stat", instance=instance), 3, r"pbus: instance '.*': pbusd serves no socket .*")
    d.stop()


def test_set_not_allowed(ctx):
    # pbusd decides who may write from the client's credentials: another
    # user than pbusd's own gets a one-line refusal, and nothing changes.
    # make test runs as root; elsewhere this fails rather than pass unseen.
    check(os.geteuid() == 0, "needs root (to run pbus as another user)")
    before = ctx.snapshot()
    # The build tree may sit where nobody cannot enter (a clone in a
    # private temporary directory): give nobody its own copy of pbus and
    # the libraries it loads.
    public = tempfile.mkdtemp(prefix="pbus-cli-nobody-")
    os.chmod(public, 0o755)
    libs = []
    for line in subprocess.run(["ldd", ctx.pbus], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and "libparambus" in parts[0]:
            shutil.copy(parts[2], os.path.join(public, parts[0]))
            libs.append(parts[0])
    shutil.copy(ctx.pbus, os.path.join(public, "pbus"))
    for f in os.listdir(public):
        os.chmod(os.path.join(public, f), 0o755)
    argv = [os.path.join(public, "pbus"), "set", "trim=3", "voltage_setpoint=2"]
    env = dict(ctx.env(), LD_LIBRARY_PATH=public)

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)

    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, preexec_fn=as_nobody)
    finally:
        shutil.rmtree(public, ignore_errors=True)
    r = Result(argv, p.returncode, p.stdout.decode(), p.stderr.decode())
    one_line_error(r, 1, re.escape("pbus: set trim: permission denied (only pbusd's user may write it)"))
    check(ctx.snapshot() == before, "a refused set changed something")


def test_stat_one_request_per_sample(ctx):
    # A sample is one STATS request (a second one, to learn the size first,
    # would be another sample, whose text may have grown by a digit): pbus
    # stat sends HELLO, SCHEMA_GET and one STATS_GET. Its own line in the
    # JSON it printed counts its requests so far.
    p = subprocess.Popen([ctx.pbus, "stat", "--json"], env=ctx.env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    rc, out, err = finish(p)
    check(rc == 0 and err == "", f"stat --json: rc={rc} err={err!r}")
    doc = json.loads(out)
    mine = [c for c in doc["clients_detail"] if c["pid"] == p.pid]
    check(len(mine) == 1, f"stat --json does not show pbus itself (pid {p.pid}): {doc['clients_detail']}")
    check(mine[0]["requests"] == 3, f"pbus stat --json made {mine[0]['requests']} requests before its sample, "
                                    "expected 3 (HELLO, SCHEMA_GET, one STATS_GET)")
    # --once: one sample; --watch: one per second, each one request.
    p = subprocess.Popen([ctx.pbus, "stat", "--watch", "--json"], env=ctx.env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        lines = LineReader(p.stdout.fileno())
        counts = []
        for _ in range(3):
            doc = json.loads(lines.line())
            counts += [c["requests"] for c in doc["clients_detail"] if c["pid"] == p.pid]
        check(counts == [3, 4, 5], f"pbus stat --watch: its requests at each sample {counts}, expected [3, 4, 5]")
    finally:
        p.kill()
        p.wait()


def test_restore_counts(ctx, pbus_instance):
    # pbusd says how many saved values it restored, and how many it skipped
    # and why: 3 restored, 4 skipped (docs/persistence.md, Restoring).
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    body = ("# parambus state file, written by pbusd: do not edit\n"
            "pbus-state 1\n"
            f"instance {instance}\n"
            f"schema 0x{schema_hash(SCHEMA):016x}\n"
            "ramp_ms=250\n"
            "label=kept%201\n"
            "voltage_setpoint=2.5\n"
            "gone=1\n"
            "trim=3\n"
            "ramp_ms=999999\n"
            "no equals sign\n")
    data = body.encode() + f"end {fnv1a64(body.encode()):016x}\n".encode()
    with open(os.path.join(state_dir, instance + ".state"), "wb") as f:
        f.write(data)
    d = Daemon(ctx, instance, state_dir).start()
    try:
        check(ctx.run("get", "ramp_ms", "label", "voltage_setpoint", "trim", instance=instance).out ==
              "250\nkept 1\n2.5\n0\n", "restored values")
        lines = [l for l in d.log().splitlines() if "restored" in l]
        check(len(lines) == 1 and lines[0].endswith(
            f"restored 3 saved values from {os.path.join(state_dir, instance + '.state')} (4 skipped: "
            "1 malformed, 1 not in the schema, 1 not persistent, 1 refused by the schema's checks)"),
            f"the restore's summary: {lines}")
    finally:
        d.stop()


def test_stat(ctx):
    r = ctx.ok("stat", "--once")
    check(re.search(rf"^instance\s+{re.escape(ctx.instance)}$", r.out, re.M), f"stat: {r.out}")
    check(re.search(r"^clients\s+\d+ \(at most \d+\)$", r.out, re.M), f"stat: {r.out}")
    check(re.search(r"^PID\s+UID\s+NAME\s+SUBS\s+REQUESTS\s+NOTIFICATIONS\s+TX PENDING$", r.out, re.M),
          f"stat: {r.out}")
    check(re.search(rf"^\d+\s+{os.getuid()}\s+pbus\s", r.out, re.M), f"stat shows itself: {r.out}")
    check("/s)" not in r.out, "--once shows no rates")
    doc = json.loads(ctx.ok("stat", "--json").out)
    check(doc["instance"] == ctx.instance and isinstance(doc["requests"], int), f"stat --json: {doc}")
    check(any(c["name"] == "pbus" for c in doc["clients_detail"]), f"stat --json: {doc}")
    start = time.monotonic()
    r = ctx.ok("stat")
    check(time.monotonic() - start >= 0.9, "stat takes two samples a second apart")
    check(re.search(r"^requests\s+\d+  \(\d+\.\d/s\)$", r.out, re.M), f"stat rates: {r.out}")
    w = subprocess.Popen([ctx.pbus, "stat", "--watch", "--json"], env=ctx.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = LineReader(w.stdout.fileno())
        first, second = json.loads(lines.line()), json.loads(lines.line())
        check(second["uptime_s"] > first["uptime_s"], "stat --watch: samples")
        w.send_signal(signal.SIGTERM)
        rc, _, err = finish(w)
        check(rc == 0 and err == "", f"stat --watch after SIGTERM: rc={rc} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
    one_line_error(ctx.run("stat", "--once", "--watch"), 2, r"pbus: stat: --once and --watch exclude each other.*")
    one_line_error(ctx.run("stat", "extra"), 2, r"pbus: stat: unexpected argument 'extra'.*")


def test_watch_server(ctx):
    # The same lines as the segment watch, fed by a subscription.
    ctx.ok("set", "trim=0", "mode=OFF", "label=start")
    w = start_watch(ctx, "--server", "--initial", "--count", "3", "trim", "mode", "label")
    try:
        lines = LineReader(w.stdout.fileno())
        initial = [lines.line() for _ in range(3)]
        check(initial == ["trim=0 ok", "mode=OFF ok", "label=start ok"], f"--initial: {initial}")
        ctx.ok("set", "trim=7")
        check(lines.line() == "trim=7 ok", "watch --server: trim")
        ctx.ok("set", "mode=TRIPPED", "label=2\nlines")
        got = sorted([lines.line(), lines.line()])
        check(got == ["label=2\\nlines ok", "mode=TRIPPED ok"], f"watch --server: {got}")
        rc, out, err = finish(w)
        check(rc == 0 and out == "" and err == "", f"watch --server --count 3: rc={rc} out={out!r} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
    one_line_error(ctx.run("watch", "--server", "nosuch"), 1, re.escape("pbus: unknown parameter 'nosuch'"))
    one_line_error(ctx.run("watch", "--server", "secret"), 1, r"pbus: watch secret: parameter is not readable.*")


def test_watch_server_terminal(ctx):
    ctx.ok("set", "trim=0")
    master, slave = pty.openpty()
    w = subprocess.Popen([ctx.pbus, "watch", "--server", "--interval", "20", "trim", "mode"], env=ctx.env(),
                         stdin=slave, stdout=slave, stderr=subprocess.PIPE, start_new_session=True)
    os.close(slave)
    out = b""

    def read_until(pred, timeout=TIMEOUT):
        nonlocal out
        deadline = time.monotonic() + timeout
        while not pred(out):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([master], [], [], left)[0]:
                raise Failure(f"terminal output lacks what was expected: {out[-600:]!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise Failure(f"terminal closed: {out[-600:]!r}")
            out += chunk

    try:
        read_until(lambda o: re.search(rb"trim +0 ", o) is not None and b"via pbusd  connected" in o)
        check(out.startswith(b"\x1b[?25l"), f"cursor not hidden first: {out[:40]!r}")
        ctx.ok("set", "trim=9")
        read_until(lambda o: re.search(rb"\x1b\[3A(.|\n)*trim +9 ", o) is not None)
        w.send_signal(signal.SIGINT)
        read_until(lambda o: o.endswith(b"\x1b[?25h"), 5)
        rc = w.wait(timeout=5)
        err = w.stderr.read().decode()
        check(rc == 0 and err == "", f"watch --server on a terminal after SIGINT: rc={rc} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        os.close(master)


def test_watch_server_reconnects(ctx, pbus_instance, pbusd):
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    d = pbusd
    ctx.ok("set", "trim=3", instance=instance)
    w = subprocess.Popen([ctx.pbus, "-i", instance, "watch", "--server", "--initial", "--count", "2", "trim"],
                         env=ctx.env(False), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = LineReader(w.stdout.fileno())
        check(lines.line() == "trim=3 ok", "initial")
        d.stop()
        d = Daemon(ctx, instance, state_dir).start()
        check(lines.line() == "trim=0 ok", "the fresh value after reconnecting (trim is not persistent)")
        ctx.ok("set", "trim=6", instance=instance)
        check(lines.line() == "trim=6 ok", "a change after reconnecting")
        rc, out, err = finish(w)
        check(rc == 0, f"rc={rc} err={err!r}")
        check(re.search(rf"pbus: watch: lost the connection to pbusd of instance '{instance}'.*reconnecting", err)
              and f"pbus: watch: instance '{instance}' is back" in err, f"stderr: {err!r}")
        # And when it does not come back: exit status 3 within a few seconds.
        w = subprocess.Popen([ctx.pbus, "-i", instance, "watch", "--server", "--initial", "trim"],
                             env=ctx.env(False), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        LineReader(w.stdout.fileno()).line()
        d.stop()
        rc, out, err = finish(w, 15)
        check(rc == 3 and "did not come back" in err, f"rc={rc} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        d.stop()


def test_watch_lines(ctx):
    ctx.ok("set", "trim=0", "mode=OFF", "label=start")
    w = start_watch(ctx, "--initial", "--count", "3", "trim", "mode", "label")
    try:
        lines = LineReader(w.stdout.fileno())
        initial = [lines.line() for _ in range(3)]
        check(initial == ["trim=0 ok", "mode=OFF ok", "label=start ok"], f"--initial: {initial}")
        ctx.ok("set", "trim=7")
        check(lines.line() == "trim=7 ok", "watch: trim")
        ctx.ok("set", "mode=TRIPPED", "label=2\nlines")
        got = sorted([lines.line(), lines.line()])
        check(got == ["label=2\\nlines ok", "mode=TRIPPED ok"], f"watch: {got}")
        rc, out, err = finish(w)
        check(rc == 0 and out == "" and err == "", f"watch --count 3: rc={rc} out={out!r} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()


def test_watch_all(ctx):
    # No names: every readable parameter, in schema order.
    w = start_watch(ctx, "--initial", "--count", "1")
    try:
        lines = LineReader(w.stdout.fileno())
        names = [lines.line().split("=", 1)[0] for _ in READABLE]
        check(names == [p[0] for p in READABLE], f"watch --initial: {names}")
        ctx.ok("set", "gain=4")
        check(lines.line() == "gain=4 ok", "watch of everything: gain")
        rc, _, err = finish(w)
        check(rc == 0 and err == "", f"rc={rc} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()


def test_watch_errors(ctx):
    one_line_error(ctx.run("watch", "nosuch"), 1, re.escape("pbus: unknown parameter 'nosuch'"))
    one_line_error(ctx.run("watch", "secret"), 1, r"pbus: watch secret: parameter is not readable.*")
    one_line_error(ctx.run("watch", "--interval", "0"), 2, r"pbus: watch: --interval '0'.*")
    one_line_error(ctx.run("watch", "--interval", "x"), 2, r"pbus: watch: --interval 'x'.*")
    one_line_error(ctx.run("watch", "--count", "-1"), 2, r"pbus: watch: --count '-1'.*")
    one_line_error(ctx.run("watch", "--count"), 2, r"pbus: watch: option '--count' needs an argument.*")


def test_watch_signal(ctx):
    for sig in (signal.SIGTERM, signal.SIGINT):
        w = start_watch(ctx, "--initial", "trim")
        try:
            LineReader(w.stdout.fileno()).line()
            start = time.monotonic()
            w.send_signal(sig)
            rc, out, err = finish(w, 5)
            check(rc == 0 and err == "", f"watch after {sig.name}: rc={rc} err={err!r}")
            check(time.monotonic() - start < 2, f"watch took {time.monotonic() - start:.1f} s to stop")
        finally:
            if w.poll() is None:
                w.kill()
                w.wait()


def test_watch_terminal(ctx):
    # On a terminal: drawn in place (cursor up, line erase), the cursor
    # hidden while it runs and shown again after Ctrl-C.
    ctx.ok("set", "trim=0")
    master, slave = pty.openpty()
    w = subprocess.Popen([ctx.pbus, "watch", "--interval", "20", "trim", "mode"], env=ctx.env(),
                         stdin=slave, stdout=slave, stderr=subprocess.PIPE, start_new_session=True)
    os.close(slave)
    out = b""

    def read_until(pred, timeout=TIMEOUT):
        nonlocal out
        deadline = time.monotonic() + timeout
        while not pred(out):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([master], [], [], left)[0]:
                raise Failure(f"terminal output lacks what was expected: {out[-600:]!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise Failure(f"terminal closed: {out[-600:]!r}")
            out += chunk

    try:
        read_until(lambda o: b"trim" in o and b"mode" in o)
        check(out.startswith(b"\x1b[?25l"), f"cursor not hidden first: {out[:40]!r}")
        ctx.ok("set", "trim=9")
        read_until(lambda o: re.search(rb"\x1b\[3A(.|\n)*trim +9 ", o) is not None)
        check(b"\x1b[2K" in out, "lines are not erased before being redrawn")
        w.send_signal(signal.SIGINT)
        read_until(lambda o: o.endswith(b"\x1b[?25h"), 5)
        rc = w.wait(timeout=5)
        err = w.stderr.read().decode()
        check(rc == 0 and err == "", f"watch on a terminal after SIGINT: rc={rc} err={err!r}")
        # Nothing but the block was written: each frame has the header and
        # the two parameters, never a scrolling stream of lines.
        frames = out.count(b"\x1b[2K" + ctx.instance.encode())
        newlines = out.count(b"\n")
        check(newlines == 3 * frames, f"{newlines} newlines for {frames} frames")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        os.close(master)


def test_watch_reopens(ctx, pbus_instance, pbusd):
    # pbusd restarts: the watch says so, reopens and goes on.
    instance, state_dir = pbus_instance.name, pbus_instance.state_dir
    d = pbusd
    w = subprocess.Popen([ctx.pbus, "-i", instance, "watch", "--initial", "--count", "2", "trim"],
                         env=ctx.env(False), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = LineReader(w.stdout.fileno())
        check(lines.line() == "trim=0 ok", "initial")
        d.stop()
        d = Daemon(ctx, instance, state_dir).start()
        check(lines.line() == "trim=0 ok", "the value after reopening")
        ctx.ok("set", "trim=6", instance=instance)
        check(lines.line() == "trim=6 ok", "a change after reopening")
        rc, out, err = finish(w)
        check(rc == 0, f"rc={rc}")
        check(re.search(rf"pbus: watch: instance '{instance}' was (closed|replaced).*reopening", err)
              and "is back" in err, f"stderr: {err!r}")
        # And when it does not come back: exit status 3 within a few seconds.
        w = subprocess.Popen([ctx.pbus, "-i", instance, "watch", "--initial", "trim"],
                             env=ctx.env(False), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        LineReader(w.stdout.fileno()).line()
        d.stop()
        rc, out, err = finish(w, 15)
        check(rc == 3 and "did not come back" in err, f"rc={rc} err={err!r}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        d.stop()


def test_dump_json(ctx):
    ctx.ok("set", 'label=q"\\\x01\u00e9', "mode=STANDBY", "limits=", "voltage_setpoint=2.25")
    doc = ctx.dump()
    check(doc["instance"] == ctx.instance, f"instance {doc['instance']!r}")
    check(doc["interface"] == "com.example.test.CliTest" and doc["version"] == "1.2"
          and doc["version_major"] == 1 and doc["version_minor"] == 2, "interface and version")
    check(doc["schema_hash"] == f"{schema_hash(SCHEMA):016x}",
          f"schema_hash {doc['schema_hash']} is not FNV-1a-64 of the fixture's records")
    check(doc["state"] == "live" and doc["owner_pid"] == ctx.daemon.pid, f"state/owner: {doc['state']} {doc['owner_pid']}")
    params = doc["parameters"]
    check([p["name"] for p in params] == [p[0] for p in PARAMS], "parameters in schema order")
    check([p["type"] for p in params] == [p[1] for p in PARAMS], "types")
    check([p["index"] for p in params] == list(range(len(PARAMS))), "indexes")
    by = {p["name"]: p for p in params}
    for name, _, _, unit in PARAMS:
        check(by[name]["unit"] == unit, f"{name}: unit {by[name]['unit']!r}")
    v = by["voltage_setpoint"]
    check(v["min"] == 0 and v["max"] == 30 and v["step"] == 0.001 and v["default"] == 0, f"limits: {v}")
    check(v["flags"] == ["persistent"] and v["class"] == "setting" and v["group"] == "operators", f"{v}")
    check(v["description"] == 'Target voltage "set" \\ tab\tend', f"description {v['description']!r}")
    check(v["value"] == 2.25 and v["status"] == "ok" and v["seq"] >= 1 and v["timestamp_ns"] > 0, f"{v}")
    check(by["label"]["value"] == 'q"\\\x01\u00e9', f"label {by['label']['value']!r}")
    check(by["label"]["size"] == 8 and by["label"]["default"] == "bench 1", f"{by['label']}")
    m = by["mode"]
    check(m["enumerators"] == [{"label": "OFF", "value": 0}, {"label": "ON", "value": 1},
                               {"label": "TRIPPED", "value": 2}, {"label": "STANDBY", "value": -1}],
          f"enumerators {m.get('enumerators')}")
    check(m["value"] == "STANDBY" and m["default"] == "OFF", f"{m}")
    check(by["limits"]["value"] == [] and by["limits"]["count"] == 4 and by["limits"]["default"] == [1.5, -2, 3]
          and by["limits"]["min"] == -100, f"{by['limits']}")
    check(by["identity.manufacturer"]["flags"] == ["readonly"] and by["identity.manufacturer"]["class"] == "constant"
          and by["identity.manufacturer"]["description"] == "Maker of the instrument", f"{by['identity.manufacturer']}")
    check(by["energy_uj"]["default"] == -1234567890123 and by["energy_uj"]["min"] is None, f"{by['energy_uj']}")
    check(by["measured_voltage"]["status"] == "invalid" and by["measured_voltage"]["default"] is None, "no default")
    check(by["temperature"]["unit"] == "\u00b0C", "UTF-8 unit")
    s = by["secret"]
    check(s["flags"] == ["noread"] and s["value"] is None and s["status"] is None, f"noread: {s}")
    check(by["output_enable"]["default"] is False and by["calibration"]["default"] == "00ff", "defaults")
    check(ctx.run("dump", "--json", "extra").rc == 2, "dump with an argument")


def test_dump_text(ctx):
    r = ctx.ok("dump")
    check(re.search(rf"^instance:\s+{re.escape(ctx.instance)}$", r.out, re.M), "instance line")
    check(re.search(r"^interface:\s+com\.example\.test\.CliTest 1\.2$", r.out, re.M), "interface line")
    check(re.search(rf"^schema hash:\s+{schema_hash(SCHEMA):016x}$", r.out, re.M), "schema hash line")
    for i, (name, type_, _, _) in enumerate(PARAMS):
        check(re.search(rf"^\[{i}\] {re.escape(name)}: {re.escape(type_)}", r.out, re.M), f"{name} block")
    check("limits   0 \u2026 30 V, step 0.001" in r.out, "voltage_setpoint limits")
    check("enum     OFF=0 ON=1 TRIPPED=2 STANDBY=-1" in r.out, "enumerators")


def test_info(ctx):
    r = ctx.ok("info")
    check(re.search(rf"^instance:\s+{re.escape(ctx.instance)}$", r.out, re.M), f"info: {r.out}")
    check(re.search(r"^interface:\s+com\.example\.test\.CliTest 1\.2$", r.out, re.M), f"info: {r.out}")
    check(re.search(r"^state:\s+live$", r.out, re.M), f"info: {r.out}")
    check(re.search(rf"^owner pid:\s+{ctx.daemon.pid}$", r.out, re.M), f"info: {r.out}")
    doc = json.loads(ctx.ok("info", "--json").out)
    check(doc["owner_pid"] == ctx.daemon.pid and doc["state"] == "live" and doc["param_count"] == len(PARAMS), f"{doc}")




def test_daemons_share_their_common_options(ctx, pbus_build):
    """pbusd, pbus-hwd, pbus-scpi, pbus-web and pbus-bridge take -l/--log-level,
    -h/--help and -V/--version alike (common/options.c), and refuse an
    unknown option or a bad level in one form."""
    for name in ("pbusd", "pbus-hwd", "pbus-scpi", "pbus-web", "pbus-bridge"):
        exe = pbus_build.path("daemon", name)
        pbus_build.require(exe)

        def run(*args):
            r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=TIMEOUT)
            return r.returncode, r.stdout, r.stderr

        for flag in ("-V", "--version"):
            rc, out, err = run(flag)
            check(rc == 0 and re.fullmatch(rf"{name} \d+\.\d+\.\d+\n", out) and err == "",
                  f"{name} {flag}: {rc} {out!r} {err!r}")
        for flag in ("-h", "--help"):
            rc, out, err = run(flag)
            check(rc == 0 and out.startswith(f"Usage: {name} ") and "--version" in out
                  and "--log-level" in out and err == "", f"{name} {flag}: {rc} {err!r}")
        rc, out, err = run("--log-level", "loud")
        check(rc == 2 and out == "" and err == f"{name}: --log-level 'loud': use error, warning, info or debug\n",
              f"{name} --log-level loud: {rc} {err!r}")
        rc, out, err = run("--bogus")
        check(rc == 2 and out == "" and err.endswith(f"Try '{name} --help'.\n") and err.count("\n") == 2,
              f"{name} --bogus: {rc} {err!r}")


def test_out_of_range_without_limits_names_the_types_range(ctx, tmp_path):
    """A float or double without limits, set beyond what the type holds:
    the message says the type's range (it said "out of range ()")."""
    schema = tmp_path / "nolimits.pbs"
    schema.write_text("pbus-schema 1\ninterface a.B 1.0\nparam f float\nparam d double\nparam fa float[] count=2\n")
    name = ctx.new_instance_name()
    ctx.start_daemon(instance=name, schema=str(schema))
    for arg, want in (("f=3.4028236e38", "value out of range (a float is at most \u00b13.4028235e38)"),
                      ("f=-1e39", "value out of range (a float is at most \u00b13.4028235e38)"),
                      ("fa=1,1e39", "element out of range (a float is at most \u00b13.4028235e38)"),
                      ("d=1e400", "value out of range (a double is at most \u00b11.7976931348623157e308)")):
        one_line_error(ctx.run("-i", name, "set", arg, instance=False), 1, re.escape(f"pbus: set {arg}: {want}"))
    check(ctx.ok("-i", name, "set", "f=3.4028235e38", instance=False).out == "", "FLT_MAX refused")


def test_missing_writer_group_is_one_warning_per_group(ctx, tmp_path):
    """A WritableBy group missing on this system: one warning per group,
    naming its parameters and how to create it (the demo printed seven
    lines saying the same)."""
    schema = tmp_path / "groups.pbs"
    params = "".join(f"param setting_number_{k} int32 group=pbus-nosuch-a\n" for k in range(40))
    schema.write_text("pbus-schema 1\ninterface a.B 1.0\n" + params + "param q int32 group=pbus-nosuch-b\n"
                      "param r int32 group=root\n")
    d = ctx.start_daemon(instance=ctx.new_instance_name(), schema=str(schema))
    lines = [line for line in d.log().splitlines() if "does not exist" in line]
    check(len(lines) == 2, f"expected one warning per missing group: {lines}")
    check(re.search(r"warning: server: group 'pbus-nosuch-a' does not exist, so only pbusd's user and root "
                    r"may write its parameters setting_number_0, setting_number_1, .*, setting_number_\d+ and \d+ more \(WritableBy in the deployment\); "
                    r"to let others, create it \(groupadd pbus-nosuch-a\) and add their users "
                    r"\(docs/security\.md\)$", lines[0]), lines[0])
    check(lines[1].endswith("group 'pbus-nosuch-b' does not exist, so only pbusd's user and root may write its "
                            "parameter q (WritableBy in the deployment); to let others, create it "
                            "(groupadd pbus-nosuch-b) and add their users (docs/security.md)"), lines[1])
