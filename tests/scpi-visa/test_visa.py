"""test_visa.py: pbus-scpi driven by a real VISA client, pyvisa with the
pyvisa-py backend, as a test engineer's script drives an instrument.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/scpi-visa \\
        --pbus-build build/dev

Each test starts pbusd on the demo PSU (examples/psu/psu.pbs) and pbus-scpi
in front of it (tests/pbustest/scpi.py: a port the kernel picks, readiness
through --notify-fd), and opens TCPIP::127.0.0.1::PORT::SOCKET with
read_termination and write_termination '\\n' (docs/scpi.md, "Using
pyvisa"). What a setting did is checked in the table too, with the pbus CLI
(`pbus -i INSTANCE get NAME`), not only read back through SCPI. Tests that
need the measurements and the output state run the demo's simulator
(psu-sim), the instance's provider.

The demo has no writable string, no byte buffer, no array and no integer
parameter: those kinds are covered by the parser's table (tests/scpi) and
not here.
"""
import os
import subprocess
import time

import pytest
import pyvisa
from pyvisa import constants, errors as visa_errors

from pbustest import secutil
from pbustest.check import TIMEOUT, Failure, check
from pbustest.scpi import pbus_get, start_psu

SUITE = "scpi-visa"


@pytest.fixture(scope="module")
def visa_rm():
    rm = pyvisa.ResourceManager("@py")
    yield rm
    rm.close()


class Psu:
    """The demo PSU behind pbus-scpi, seen through pyvisa and through the
    pbus CLI."""

    def __init__(self, build, instance, server, rm, tmp):
        self.build, self.instance, self.server, self.rm, self.tmp = build, instance, server, rm, tmp
        self.resources = []
        self.sim = None

    @property
    def address(self):
        return f"TCPIP::127.0.0.1::{self.server.port}::SOCKET"

    def open(self, **kw):
        """A pyvisa session with the terminations docs/scpi.md gives."""
        kw.setdefault("read_termination", "\n")
        kw.setdefault("write_termination", "\n")
        kw.setdefault("timeout", TIMEOUT * 1000)
        inst = self.rm.open_resource(self.address, **kw)
        self.resources.append(inst)
        return inst

    def get(self, name):
        """The table's value of @name, by `pbus get`."""
        return pbus_get(self.build, self.instance, name)

    def run_simulator(self):
        """Start psu-sim (the provider: measurements, output state, serial)
        and wait until it has published its identity."""
        self.build.require(self.build.psu_sim)
        self.sim = subprocess.Popen([self.build.psu_sim, self.instance.name], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=dict(os.environ, PBUS_SOCKET_DIR=self.instance.sock_dir))
        self.wait_for("identity.serial", lambda v: v == f"SIM-{self.instance.name}")

    def wait_for(self, name, predicate, timeout=TIMEOUT):
        """Poll the table (pbus get) until predicate(value); the value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.get(name)
            if predicate(value):
                return value
            if time.monotonic() > deadline:
                raise Failure(f"{name} is still {value!r} after {timeout} s")
            time.sleep(0.02)

    def close(self):
        for inst in self.resources:
            try:
                inst.close()
            except Exception:  # already closed by the test
                pass
        if self.sim is not None and self.sim.poll() is None:
            self.sim.terminate()
            try:
                self.sim.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.sim.kill()
                self.sim.wait()


def serve(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, visa_rm, user=None):
    server = start_psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, user=user,
                       extra=["--max-clients", "8"])
    psu = Psu(pbus_build, pbus_instance, server, visa_rm, pbus_tmp)
    try:
        yield psu
        check(server.running(), f"pbus-scpi exited with {server.proc.returncode}: {server.log()}")
    finally:
        psu.close()
        rc = server.stop()
    check(rc == 0, f"pbus-scpi exit status {rc} after SIGTERM")


@pytest.fixture
def psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, visa_rm):
    """pbusd + pbus-scpi, run by root (who may write every setting)."""
    yield from serve(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, visa_rm)


@pytest.fixture
def psu_unprivileged(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, visa_rm, pbus_user):
    """pbusd (root) + pbus-scpi run by the unprivileged pbus-test, who is
    not in the demo's write group `instrument`."""
    yield from serve(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, visa_rm, user=pbus_user.name)


def errors(inst):
    """Drain the error queue: [(code, text)], oldest first."""
    out = []
    for _ in range(40):
        reply = inst.query("SYST:ERR?")
        code, text = reply.split(",", 1)
        if int(code) == 0:
            check(text == '"No error"', f"empty queue: {reply!r}")
            return out
        check(text.startswith('"') and text.endswith('"'), f"error text is a string: {reply!r}")
        out.append((int(code), text[1:-1]))
    raise Failure("the error queue does not empty")


def done(inst):
    """Wait until pbus-scpi has run what @inst sent (*OPC? answers after the
    commands before it), so that the table can be read with pbus get."""
    check(inst.query("*OPC?") == "1", "*OPC? answers 1")


def codes(inst):
    return [code for code, _ in errors(inst)]


def no_reply(inst):
    """True if nothing is waiting to be read (a read times out)."""
    old = inst.timeout
    inst.timeout = 200
    try:
        inst.read()
        return False
    except visa_errors.VisaIOError as e:
        return e.error_code == constants.StatusCode.error_timeout
    finally:
        inst.timeout = old


# --- Identity and the values of every kind of parameter ---------------------------

def test_identity(psu):
    inst = psu.open()
    check(inst.query("*IDN?") == "ACME Instruments,PSU-3005,0,0", "identity without a provider")
    psu.run_simulator()
    fields = inst.query("*IDN?").split(",")
    table = [psu.get(f"identity.{f}") for f in ("manufacturer", "model", "serial", "firmware")]
    check(fields == table, f"*IDN? {fields} is the table's identity {table}")
    check(fields[2] == f"SIM-{psu.instance.name}", f"serial from the simulator: {fields}")
    check(inst.query("SYST:VERS?") == "1999.0", "SYSTem:VERSion?")


def test_double_with_units(psu):
    inst = psu.open()
    inst.write("VOLT 1500 mV")
    check(inst.query("VOLT?") == "1.5" and psu.get("voltage_setpoint") == "1.5", "VOLT 1500 mV")
    inst.write("CURR 0.5")
    check(inst.query("CURR?") == "0.5" and psu.get("current_setpoint") == "0.5", "CURR 0.5")
    inst.write("SOURce:CURRent:LEVel:IMMediate:AMPLitude 250 MA")
    check(inst.query("SOUR:CURR?") == "0.25" and psu.get("current_setpoint") == "0.25", "250 MA is milliampere")
    inst.write("volt 0.012 kV")
    check(inst.query("VOLTAGE?") == "12.0" and psu.get("voltage_setpoint") == "12", "0.012 kV")
    inst.write("VOLT:PROT 20.5 V")
    check(inst.query("VOLT:PROT?") == "20.5" and psu.get("ovp_level") == "20.5", "VOLT:PROT 20.5 V")
    inst.write("VOLT 2.5e0")
    done(inst)
    check(psu.get("voltage_setpoint") == "2.5", "exponent")
    inst.write("SYST:FAN 55.5")  # a float parameter
    check(inst.query("SYST:FAN?") == "55.5" and psu.get("fan_duty") == "55.5", "SYST:FAN 55.5")
    inst.write("SYST:FAN 40 PCT")
    check(inst.query("SYST:FAN:DUTY?") == "40.0" and psu.get("fan_duty") == "40", "40 PCT")
    check(errors(inst) == [], "no error")
    inst.write("VOLT 3 A")
    inst.write("SYST:FAN 10 V")
    check(codes(inst) == [-131, -131], "a suffix of the wrong unit is -131")
    check(psu.get("voltage_setpoint") == "2.5" and psu.get("fan_duty") == "40", "nothing written")


def test_boolean(psu):
    inst = psu.open()
    for word, scpi, table in (("ON", "1", "true"), ("OFF", "0", "false"), ("1", "1", "true"),
                              ("0", "0", "false"), ("on", "1", "true"), ("0.2", "0", "false")):
        inst.write(f"OUTP {word}")
        check(inst.query("OUTP?") == scpi and psu.get("output_enable") == table,
              f"OUTP {word}: {inst.query('OUTP?')} / {psu.get('output_enable')}")
    inst.write("OUTPut:STATe ON")
    check(inst.query("OUTP:STAT?") == "1" and psu.get("output_enable") == "true", "OUTPut:STATe ON")
    check(inst.query("SYST:INT?") == "0" and psu.get("interlock_open") == "false", "read-only boolean")
    inst.write("OUTP MAYBE")
    check(codes(inst) == [-141], "a word that is no boolean: -141")
    check(psu.get("output_enable") == "true", "unchanged")


def test_enumerations_and_measurements(psu):
    inst = psu.open()
    check(inst.query("OUTP:COND?") == "OFF" and inst.query("OUTP:PROT:CAUS?") == "NONE", "defaults")
    psu.run_simulator()
    inst.write("VOLT 5;CURR 1;:OUTP ON")
    psu.wait_for("output_state", lambda v: v == "ON")
    check(inst.query("OUTPut:CONDition?") == "ON", "OUTP:COND? ON")
    psu.wait_for("measured_voltage", lambda v: abs(float(v) - 5) < 0.05)
    volts = inst.query_ascii_values("MEAS:VOLT?")
    check(len(volts) == 1 and abs(volts[0] - 5) < 0.05, f"MEAS:VOLT? {volts}")
    amps, temp = inst.query_ascii_values("MEAS:CURR?;:MEAS:TEMP?", separator=";")
    check(0 < amps <= 1 and -40 <= temp <= 150, f"MEAS:CURR? {amps}, MEAS:TEMP? {temp}")
    # Over-voltage: the simulator trips the output; both enumerations by
    # their SCPI mnemonics (short forms), the table by label.
    inst.write("VOLT:PROT 4")
    psu.wait_for("output_state", lambda v: v == "TRIPPED")
    check(psu.get("trip_cause") == "OVER_VOLTAGE", "the table says why")
    check(inst.query("OUTP:COND?;PROT:CAUS?") == "TRIP;OVOL", "TRIPped and OVOLtage by their short forms")
    check(inst.query("MEAS:VOLT?") == "0.0", "no output when tripped")


def test_string(psu):
    inst = psu.open()
    check(inst.query("SYST:STAT:TEXT?") == '""', "the empty string, quoted")
    psu.run_simulator()
    inst.write("VOLT 5;CURR 0.1;:OUTP ON")  # the load draws more: constant current
    text = psu.wait_for("status_text", lambda v: v.startswith("constant current"))
    check(inst.query("SYSTem:STATus:TEXT?") == f'"{text}"', f"the table's text, quoted: {text!r}")


def test_struct_fields(psu):
    inst = psu.open()
    check(inst.query("VOLT:LIM?;:CURR:LIM?") == "30.0;5.0", "defaults of the limits struct")
    inst.write("VOLT:LIM 20;:CURR:LIM:HIGH 2500 mA")
    check(inst.query("SOUR:VOLT:LIM:HIGH?;:CURR:LIM?") == "20.0;2.5", "read back")
    check(psu.get("limits.voltage") == "20" and psu.get("limits.current") == "2.5", "the struct's fields")
    inst.write("VOLT:LIM 31")
    check(codes(inst) == [-222] and psu.get("limits.voltage") == "20", "a field's limit")


def test_min_max_def(psu):
    inst = psu.open()
    expect = {"VOLT": ("0.0", "30.0", "0.0"), "CURR": ("0.0", "5.0", "0.1"),
              "VOLT:PROT": ("1.0", "33.0", "33.0"), "VOLT:LIM": ("0.0", "30.0", "30.0"),
              "CURR:LIM": ("0.0", "5.0", "5.0"), "SYST:FAN": ("0.0", "100.0", "30.0")}
    for header, (lo, hi, default) in expect.items():
        reply = inst.query(f"{header}? MIN;:{header}? MAXimum;:{header}? DEFault")
        check(reply == f"{lo};{hi};{default}", f"{header}? MIN/MAX/DEF: {reply!r}")
    check(inst.query("MEAS:TEMP? MIN;:MEAS:TEMP? MAX") == "-40.0;150.0", "a read-only's limits")
    names = {"VOLT": "voltage_setpoint", "CURR": "current_setpoint", "VOLT:PROT": "ovp_level",
             "SYST:FAN": "fan_duty"}
    for header, name in names.items():
        lo, hi, default = expect[header]
        for word, value in (("MAX", hi), ("MIN", lo), ("DEF", default)):
            inst.write(f"{header} {word}")
            check(inst.query(f"{header}?") == value and float(psu.get(name)) == float(value),
                  f"{header} {word}: {inst.query(f'{header}?')} / {psu.get(name)}")
    inst.write("OUTP ON")
    inst.write("OUTP DEF")
    done(inst)
    check(psu.get("output_enable") == "false", "OUTP DEF")
    inst.write("OUTP MAX")
    inst.write("VOLT 30.001")
    inst.write("VOLT -0.001")
    got = codes(inst)
    check(got == [-141, -222, -222], f"MAX on a boolean, beyond the limits: {got}")
    check(psu.get("voltage_setpoint") == "0", "nothing written")


# --- Program messages ---------------------------------------------------------------

def test_compound_messages(psu):
    inst = psu.open()
    inst.write("SOUR:VOLT 2;CURR 0.5;:OUTP ON")  # CURR under SOUR:, then the root
    done(inst)
    check([psu.get(n) for n in ("voltage_setpoint", "current_setpoint", "output_enable")] == ["2", "0.5", "true"],
          "three settings from one message")
    check(inst.query("SOUR:VOLT?;CURR?;:OUTP?;*ESR?;:VOLT:PROT?") == "2.0;0.5;1;0;33.0",
          "five queries, one response line")
    inst.write("VOLT:PROT 20;LEV 4")  # LEV is VOLT:LEV: the path stays at VOLT:
    done(inst)
    check(psu.get("ovp_level") == "20" and psu.get("voltage_setpoint") == "4", "the path rule")
    inst.write("SYST:FAN 45;:VOLT 3")
    done(inst)
    check(psu.get("fan_duty") == "45" and psu.get("voltage_setpoint") == "3", "':' resets to the root")
    inst.write("SYST:FAN 50;VOLT 6")  # SYST:VOLT: no such header
    check(codes(inst) == [-113], "-113 for a header under the wrong path")
    check(psu.get("fan_duty") == "50" and psu.get("voltage_setpoint") == "3",
          "the command before the error ran, the one after it did not")
    inst.write("VOLT 7;VOLT 99;VOLT 8")  # one batch, refused whole
    check(codes(inst) == [-222] and psu.get("voltage_setpoint") == "3", "a refused batch writes nothing")
    values = inst.query_ascii_values("VOLT?;CURR?;:VOLT:PROT?;:SYST:FAN?", separator=";")
    check(values == [3.0, 0.5, 20.0, 50.0], f"query_ascii_values {values}")
    check(no_reply(inst), "settings send no response")


def test_same_parameter_twice(psu):
    """IEEE 488.2: the commands of a message run in order, so the last
    setting of a parameter is the one that holds."""
    inst = psu.open()
    inst.write("VOLT 1;VOLT 2")
    inst.write("OUTP ON;:OUTP OFF;:OUTP ON")
    got = errors(inst)
    check(got == [], f"a parameter set twice in one message is no error: {got}")
    check(inst.query("VOLT?;:OUTP?") == "2.0;1", "the last setting holds")
    check(psu.get("voltage_setpoint") == "2" and psu.get("output_enable") == "true", "in the table too")


def test_crlf_terminator(psu):
    inst = psu.open(write_termination="\r\n")
    inst.write("VOLT 1.25")
    check(inst.query("VOLT?") == "1.25" and psu.get("voltage_setpoint") == "1.25", "CR LF ends a message")
    check(errors(inst) == [], "no error")


# --- The IEEE 488.2 common commands --------------------------------------------------

def test_common_rst(psu):
    inst = psu.open()
    inst.write("VOLT 7;CURR 1;:OUTP ON;:VOLT:PROT 20;:SYST:FAN 80;:VOLT:LIM 25;:CURR:LIM 3")
    done(inst)
    check(psu.get("fan_duty") == "80", "set before *RST")
    inst.write("*RST")
    check(inst.query("*OPC?") == "1", "*OPC? after *RST")
    table = {n: psu.get(n) for n in ("voltage_setpoint", "current_setpoint", "output_enable", "ovp_level",
                                     "fan_duty", "limits.voltage", "limits.current")}
    check(table == {"voltage_setpoint": "0", "current_setpoint": "0.1", "output_enable": "false",
                    "ovp_level": "33", "fan_duty": "30", "limits.voltage": "30", "limits.current": "5"},
          f"*RST: every setting at its default in the table: {table}")
    check(errors(inst) == [], "no error")


def test_common_status_commands(psu):
    inst = psu.open()
    check(inst.query("*ESE?;*SRE?;*STB?;*ESR?") == "0;0;0;0", "all clear at the start")
    inst.write("*ESE 60")
    inst.write("*SRE 48")
    check(inst.query("*ESE?") == "60" and inst.query("*SRE?") == "48", "*ESE, *SRE")
    inst.write("*SRE 255")
    check(inst.query("*SRE?") == "191", "*SRE: bit 6 is ignored")
    inst.write("*ESE 256")
    check(codes(inst) == [-222] and inst.query("*ESE?") == "60", "*ESE 256 is out of range")
    inst.write("BOGUS")  # CME (32), enabled by *ESE 60: ESB; EAV while queued
    check(int(inst.query("*STB?")) == 4 | 32 | 64, "EAV, ESB and MSS")
    check(inst.query("*STB?") == inst.query("*STB?"), "*STB? clears nothing")
    inst.write("*CLS")
    check(inst.query("*STB?;*ESR?;SYST:ERR:COUN?") == "0;0;0", "*CLS clears ESR and the queue")
    check(inst.query("*ESE?;*SRE?") == "60;191", "*CLS keeps the enables")
    inst.write("*OPC")
    check(inst.query("*ESR?") == "1", "*OPC sets OPC in the ESR")
    check(inst.query("*ESR?") == "0", "*ESR? reads and clears")
    inst.write("VOLT 99")
    check(inst.query("*ESR?") == "16", "EXE for -222")
    inst.write("*CLS")
    inst.write("VOLT 2;*WAI;VOLT?")
    check(inst.read() == "2.0", "*WAI then a query")
    check(inst.query("VOLT 3;*OPC?") == "1" and psu.get("voltage_setpoint") == "3", "*OPC? after a setting")
    check(inst.query("*TST?") == "0", "*TST? passes with pbusd up")
    check(inst.query("*OPT?") == "0", "*OPT?: no options")
    inst.write("*PSC 1")
    check(inst.query("*PSC?") == "1", "*PSC 1")
    inst.write("*PSC 0")
    check(inst.query("*PSC?") == "0", "*PSC 0")
    inst.write("*TRG")
    inst.write("*ESE")
    check(codes(inst) == [-113, -109], "*TRG is not supported; *ESE needs its value")
    check(no_reply(inst), "no stray response")


def test_query_ascii_values(psu):
    inst = psu.open()
    inst.write("VOLT 4.5;CURR 1.25")
    check(inst.query_ascii_values("VOLT?") == [4.5], "one value")
    check(inst.query_ascii_values("VOLT?;CURR?;*ESR?", separator=";") == [4.5, 1.25, 0.0], "three values")
    check(inst.query_ascii_values("*ESE?", converter="d") == [0], "an NR1 as an int")


# --- The error queue -----------------------------------------------------------------

def test_error_queue(psu):
    inst = psu.open()
    check(inst.query("SYST:ERR?") == '0,"No error"', "empty queue")
    check(inst.query("SYST:ERR:COUN?") == "0", "count 0")
    inst.write("SOUR:FOO 1")
    inst.write("VOLT 31")
    check(inst.query("SYSTem:ERRor:COUNt?") == "2", "two queued")
    reply = inst.query("SYSTem:ERRor:NEXT?")
    check(reply.startswith('-113,"Undefined header'), f"oldest first: {reply!r}")
    reply = inst.query("SYST:ERR?")
    check(reply.startswith('-222,"Data out of range;') and "voltage_setpoint" in reply,
          f"-222 names the parameter: {reply!r}")
    check(inst.query("SYST:ERR:COUN?") == "0", "drained")


def test_error_queue_overflow(psu):
    inst = psu.open()
    for i in range(20):
        inst.write("FOO" if i % 2 else "VOLT 99")
    check(inst.query("SYST:ERR:COUN?") == "16", "the queue holds 16")
    got = errors(inst)
    check([c for c, _ in got] == [-222, -113] * 7 + [-222, -350], f"codes {[c for c, _ in got]}")
    check(got[-1][1].startswith("Queue overflow"), f"-350's text: {got[-1]}")
    check(inst.query("SYST:ERR:COUN?") == "0", "empty after reading")
    inst.write("FOO")
    inst.write("*CLS")
    check(inst.query("SYST:ERR:COUN?") == "0", "*CLS empties the queue")


# --- Access -------------------------------------------------------------------------

def test_read_only_parameters(psu):
    inst = psu.open()
    for command in ("MEAS:VOLT 1", "OUTP:COND ON", 'SYST:STAT:TEXT "x"', "SYST:INT ON"):
        inst.write(command)
    got = errors(inst)
    check([c for c, _ in got] == [-113] * 4 and all("query only" in t for _, t in got),
          f"a query-only header cannot be set: {got}")
    check(psu.get("measured_voltage") == "0" and psu.get("output_state") == "OFF"
          and psu.get("interlock_open") == "false", "nothing written")


def test_access_refused(psu_unprivileged):
    """pbus-scpi runs as a user who may read but not write: pbusd refuses
    its settings and the client sees -203 with pbusd's reason."""
    psu = psu_unprivileged
    inst = psu.open()
    check(inst.query("*IDN?").startswith("ACME Instruments,"), "queries work")
    check(inst.query("VOLT?;:OUTP?") == "0.0;0", "reads work")
    inst.write("VOLT 3;CURR 1")
    got = errors(inst)
    check(len(got) == 1 and got[0][0] == -203, f"one -203: {got}")
    check("voltage_setpoint" in got[0][1] and "instrument" in got[0][1],
          f"the text names the parameter and the write group: {got[0][1]!r}")
    check(psu.get("voltage_setpoint") == "0" and psu.get("current_setpoint") == "0.1", "nothing written")
    inst.write("*RST")
    check(codes(inst) == [-203], "*RST is refused as a whole")
    inst.write("OUTP ON")
    check(inst.query("*ESR?") == "16", "EXE for a refusal")
    errors(inst)
    check(psu.get("output_enable") == "false", "still off")
    inst.write("VOLT 3")
    reply = inst.query("SYST:ERR?")
    check(reply.startswith('-203,"Command protected;'),
          f"-203's standard text (SCPI-99: 'Command protected'): {reply!r}")


def test_method_refused(psu_unprivileged):
    """The demo's methods are CallableBy "instrument": pbus-scpi run by a
    user outside that group is refused by the method server (-EPERM), and
    the client sees -203 naming the method and the group; the method did
    not run. (Root, who may call them, runs them in scpi-daemon's
    test_method_clears_trip.)"""
    psu = psu_unprivileged
    psu.run_simulator()
    r = subprocess.run([psu.build.pbus, "-i", psu.instance.name, "set", "output_enable=true"],
                       capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, PBUS_SOCKET_DIR=psu.instance.sock_dir))
    check(r.returncode == 0, f"pbus set output_enable true (as root): {r.stderr.strip()}")
    inst = psu.open()
    deadline = time.monotonic() + TIMEOUT
    while True:  # until pbus-scpi's proxy has connected to the simulator
        reply = inst.query("OUTP:PROT:CLE;*OPC?")
        check(reply == "1", f"*OPC? after a refused call: {reply!r}")
        got = errors(inst)
        check(len(got) == 1, f"one error per call: {got}")
        if got[0][0] != -241:
            break
        check(time.monotonic() < deadline, "the simulator never became available to pbus-scpi")
        time.sleep(0.05)
    check(got[0] == (-203, "Command protected;clear_trip: Operation not permitted "
                           "(callable by group instrument)"), f"clear_trip refused: {got}")
    check(psu.get("output_enable") == "true", "clear_trip did not run (it switches the output off)")
    inst.write("CAL:VOLT? 12;*IDN?")  # a refused query ends its message: no answer
    check(errors(inst) == [(-203, "Command protected;calibrate: Operation not permitted "
                                  "(callable by group instrument)")], "calibrate refused")
    check(inst.query("*IDN?").startswith("ACME Instruments,"), "the next message is served")


# --- Several clients, broken clients ---------------------------------------------------

def test_two_clients(psu):
    a, b = psu.open(), psu.open()
    a.write("FOO")
    a.write("*ESE 36")
    check(b.query("SYST:ERR:COUN?") == "0" and b.query("*ESE?") == "0", "b has its own queue and ESE")
    check(a.query("SYST:ERR:COUN?") == "1" and a.query("*ESE?") == "36", "a has its own")
    b.write("VOLT 9")
    done(b)
    check(a.query("VOLT?") == "9.0" and psu.get("voltage_setpoint") == "9", "a sees b's setting")
    a.write("VOLT 99")
    b.write("CURR 99")
    check(codes(a) == [-113, -222] and codes(b) == [-222], "each gets its own errors")
    # Interleaved queries: each gets its own responses.
    a.write("VOLT?")
    b.write("*ESE?")
    check(b.read() == "0" and a.read() == "9.0", "interleaved responses")


def test_disconnect_mid_message(psu):
    keep = psu.open()
    keep.write("VOLT 1")
    gone = psu.open()
    gone.write_raw(b"VOLT 5;CURR")
    gone.close()
    check(keep.query("VOLT?") == "1.0" and psu.get("voltage_setpoint") == "1", "the partial message did nothing")
    quoted = psu.open()
    quoted.write_raw(b'VOLT 6;SYST:STAT:TEXT? "abc')  # inside a string, newline or not
    quoted.close()
    unread = psu.open()
    unread.write("*IDN?;VOLT?")  # a query whose response is never read
    unread.close()
    check(keep.query("*IDN?").startswith("ACME"), "the server keeps serving")
    check(psu.get("voltage_setpoint") == "1", "value unchanged")
    fresh = psu.open()
    check(fresh.query("SYST:ERR:COUN?") == "0" and fresh.query("VOLT?") == "1.0", "a new client works")
    check(psu.server.running(), "pbus-scpi alive")


def test_pbusd_gone(psu):
    """pbusd stops under a connected client: settings and reads fail with
    -240 (no response to the failed query, as IEEE 488.2 has it), *TST?
    fails, and pbus-scpi keeps answering."""
    inst = psu.open()
    inst.write("VOLT 2")
    done(inst)
    check(psu.server.pbusd.stop() == 0, "pbusd stopped cleanly")
    inst.write("VOLT 3")
    check(inst.query("*TST?") == "1", "*TST? fails without pbusd")
    inst.write("VOLT?")
    check(no_reply(inst), "no response to a query that failed")
    got = errors(inst)
    check([c for c, _ in got] == [-240, -240], f"-240 for the setting and the query: {got}")
    check(got[0][1].startswith("Hardware error;"), f"-240's standard text (SCPI-99: 'Hardware error'): {got}")
    check(psu.server.running(), "pbus-scpi alive")


def poll(inst, query, predicate, what):
    """Ask @query until predicate(answer) (pbus-scpi follows the status
    parameters at --status-interval, 50 ms); the answer."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        answer = inst.query(query)
        if predicate(answer):
            return answer
        if time.monotonic() > deadline:
            raise Failure(f"{what}: {query} still answers {answer!r}")
        time.sleep(0.02)


def test_status_questionable_over_voltage(psu):
    """An over-voltage trip sets QUEStionable bit 0 (VOLTage, from
    measured_voltage's alarm status), its event, and with ENABle and *SRE
    the status byte's summary bit 3 and MSS; clearing the trip clears the
    condition while the event stays latched until read."""
    psu.run_simulator()
    inst = psu.open()
    inst.write("*CLS;:STAT:PRES")
    inst.write("VOLT 12;CURR 5;:OUTP ON")
    psu.wait_for("output_state", lambda v: v == "ON")
    poll(inst, "STAT:QUES:COND?", lambda a: int(a) & 1 == 0, "no over-voltage yet")
    check(int(inst.query("STAT:QUES?")) & 1 == 0, "no VOLTage event before the trip")
    inst.write("STAT:QUES:ENAB 1;*SRE 8")
    check(int(inst.query("*STB?")) & 0x48 == 0, "no summary, no MSS before the trip")
    inst.write("VOLT:PROT 10")
    psu.wait_for("output_state", lambda v: v == "TRIPPED")
    poll(inst, "STAT:QUES:COND?", lambda a: int(a) & 1 == 1, "QUEStionable VOLTage after the trip")
    stb = int(inst.query("*STB?"))
    check(stb & 0x08 and stb & 0x40, f"*STB? {stb}: bit 3 (QUEStionable) and MSS set")
    # the trip ends when the output is switched off: condition clears
    inst.write("OUTP OFF")
    psu.wait_for("output_state", lambda v: v == "OFF")
    poll(inst, "STAT:QUES:COND?", lambda a: int(a) & 1 == 0, "condition after the trip is gone")
    check(int(inst.query("*STB?")) & 0x08, "the event stays latched until read")
    check(int(inst.query("STAT:QUES:EVEN?")) & 1 == 1, "the VOLTage event")
    check(int(inst.query("STAT:QUES:EVEN?")) == 0, "read and cleared")
    check(int(inst.query("*STB?")) & 0x48 == 0, "no summary after the event was read")


def test_status_operation_and_filters(psu):
    """OPERation bit 8 follows output_enable; the transition filters pick
    which changes become events; STATus:PRESet; *CLS clears the events;
    each client has its own event registers."""
    inst, other = psu.open(), psu.open()
    inst.write("OUTP OFF")
    poll(inst, "STAT:OPER:COND?", lambda a: int(a) & 256 == 0, "output off")
    check(inst.query("STAT:OPER:PTR?;NTR?;ENAB?") == "32767;0;0", "SCPI-99 preset values")
    inst.query("STAT:OPER?")
    other.query("STAT:OPER?")
    inst.write("OUTP ON")
    check(inst.query("OUTP?") == "1" and codes(inst) == [], "the output is on")
    poll(inst, "STAT:OPER:COND?", lambda a: int(a) & 256, "OPERation bit 8 while the output is on")
    check(int(inst.query("STAT:OPER?")) == 256, "a rising edge passes the positive filter")
    check(int(other.query("STAT:OPER?")) == 256, "the other client saw the change too")
    # only falling edges from now on, for this client
    inst.write("STAT:OPER:PTR 0;NTR 256")
    other.write("STAT:OPER:ENAB 256;*SRE 128")
    inst.write("OUTP OFF")
    poll(inst, "STAT:OPER:COND?", lambda a: int(a) & 256 == 0, "output off again")
    check(int(inst.query("STAT:OPER?")) == 256, "the falling edge passed the negative filter")
    check(int(other.query("STAT:OPER?")) == 0, "the other client's preset filters ignore it")
    inst.write("OUTP ON")
    poll(inst, "STAT:OPER:COND?", lambda a: int(a) & 256, "output on again")
    check(int(inst.query("STAT:OPER?")) == 0, "the rising edge is filtered out now")
    stb = int(other.query("*STB?"))
    check(stb & 0x80 and stb & 0x40, f"other: *STB? {stb} has the OPERation summary and MSS")
    other.write("*CLS")
    check(int(other.query("*STB?")) & 0xC0 == 0, "*CLS clears the event registers")
    inst.write("STAT:PRES")
    check(inst.query("STAT:OPER:PTR?;NTR?;ENAB?;:STAT:QUES:ENAB?") == "32767;0;0;0",
          "STATus:PRESet")
    inst.write("STAT:QUES:ENAB 32768")
    check(codes(inst) == [-222], "an enable beyond 32767 is out of range")
    check(inst.query("STAT:QUES:ENAB MAX;ENAB?") == "32767", "MAX")
