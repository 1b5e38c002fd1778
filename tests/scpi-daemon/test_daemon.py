"""test_daemon.py: pbus-scpi against the real pbusd serving the demo PSU.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/scpi-daemon \\
        --pbus-build build/dev

Each test starts pbusd (examples/psu/psu.pbs) and pbus-scpi (its tree
psu.scpi) on a port the kernel picks (--listen 127.0.0.1:0, reported
through --notify-fd; tests/pbustest/scpi.py), and talks raw SCPI over plain
TCP sockets. The method tests add a method server: the demo's simulator
(psu-sim, which serves clear_trip and calibrate), or pbus-test-slow-server
(tests/scpi-daemon/slow.fidl, built by pbus-gen like every other server),
whose methods take the time they are told to.
"""
import contextlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import time

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.scpi import ScpiDaemon, method_server, pbus_get, pbus_tool, slow_instrument, start_psu, wait_for_methods

SUITE = "scpi-daemon"


class Scpi:
    """One raw-socket SCPI client."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""

    def write(self, text):
        self.sock.sendall(text.encode() + b"\n")

    def read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Failure("pbus-scpi closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def query(self, text):
        self.write(text)
        return self.read()

    def close(self):
        self.sock.close()


# Every pbus-scpi here: at most 4 clients, 1024-byte lines.
LIMITS = ["--max-clients", "4", "--max-line", "1024"]


@contextlib.contextmanager
def clients_of(server):
    """Yields a function making clients of @server (a started ScpiDaemon),
    with .proc and .log_path; then stops it and checks its exit status."""
    clients = []

    def connect():
        c = Scpi(server.port)
        clients.append(c)
        return c

    try:
        connect.proc = server.proc
        connect.log_path = server.log_path
        yield connect
        check(server.running(), f"pbus-scpi exited with {server.proc.returncode}")
    finally:
        for c in clients:
            c.close()
        rc = server.stop()
    check(rc == 0, f"pbus-scpi exit status {rc} after SIGTERM")


@pytest.fixture
def scpi(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-scpi; yields a function making clients (and the port)."""
    with clients_of(start_psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, LIMITS)) as c:
        yield c


def errors(c):
    """Drain the error queue: the codes, oldest first."""
    codes = []
    while True:
        code = int(c.query("SYST:ERR?").split(",")[0])
        if code == 0:
            return codes
        codes.append(code)


def test_identity(scpi):
    c = scpi()
    check(c.query("*IDN?") == "ACME Instruments,PSU-3005,0,0", "identity")
    check(c.query("SYST:VERS?") == "1999.0", "SYSTem:VERSion?")
    check(c.query("*TST?") == "0", "*TST?")
    check(c.query("*OPC?") == "1", "*OPC?")


def test_generator_knows_the_daemons_commands(scpi):
    """pbus-gen's list of pbus-scpi's own commands (BUILTIN_COMMANDS, whose
    headers a schema keyword may not take) names commands the daemon has:
    every header form, long and short, with its access. The two lists are
    kept in two languages; this keeps them in step."""
    from pbusgen.scpi import BUILTIN_COMMANDS, parse_keyword
    c = scpi()
    tried = 0
    for keyword, access in BUILTIN_COMMANDS:
        nodes, _ = parse_keyword(keyword, None, "pbus-scpi")
        optional = [i for i, n in enumerate(nodes) if n.optional]
        for mask in range(1 << len(optional)):
            path = [n for i, n in enumerate(nodes) if not (i in optional and mask >> optional.index(i) & 1)]
            for header in (":".join(n.long.upper() for n in path), ":".join(n.short for n in path)):
                if access in ("query", "both"):
                    c.query(header + "?")
                if access in ("set", "both"):
                    c.write(header + (" 0" if access == "both" else ""))
                check(errors(c) == [], f"pbus-scpi does not take {header} ({access}) of pbus-gen's {keyword}")
                tried += 1
    c.write("STAT:PRES")
    check(tried >= 2 * len(BUILTIN_COMMANDS), f"{tried} headers tried")
    check(c.query("SYST:ERR:COUN?") == "0", "no error")


def test_units(scpi):
    c = scpi()
    c.write("SOUR:VOLT 1500 mV")
    check(c.query("SOUR:VOLT?") == "1.5", "1500 mV reads back as 1.5")
    c.write("VOLTAGE:LEVEL 12.345")
    check(c.query("VOLT?") == "12.345", "12.345 V")
    c.write("CURR 250 MA")
    check(c.query("CURR?") == "0.25", "250 mA")
    check(errors(c) == [], "no error")


def test_min_max_def(scpi):
    c = scpi()
    check(c.query("VOLT? MIN;VOLT? MAX;VOLT? DEF") == "0.0;30.0;0.0", "voltage limits")
    c.write("CURR MAX")
    check(c.query("CURR?") == "5.0", "CURR MAX")
    c.write("CURR DEF")
    check(c.query("CURR?") == "0.1", "CURR DEF")
    c.write("VOLT:PROT MIN")
    check(c.query("VOLT:PROT?") == "1.0", "VOLT:PROT MIN")


def test_bool_and_enum(scpi):
    c = scpi()
    c.write("OUTP ON")
    check(c.query("OUTP?") == "1", "OUTP ON")
    c.write("OUTPut:STATe OFF")
    check(c.query("OUTP:STAT?") == "0", "OUTP OFF")
    c.write("OUTP 1")
    check(c.query("OUTP?") == "1", "OUTP 1")
    check(c.query("OUTP:COND?") == "OFF", "enum by mnemonic")
    check(c.query("OUTP:PROT:CAUS?") == "NONE", "enum NONE")


def test_compound(scpi):
    c = scpi()
    reply = c.query("SOUR:VOLT 2;CURR 0.5;:OUTP ON;:SOUR:VOLT?;CURR?;:OUTP?;*ESR?")
    check(reply == "2.0;0.5;1;0", f"compound reply {reply!r}")
    check(c.query("MEAS:VOLT?;:MEAS:CURR?").count(";") == 1, "two measurements on one line")


def test_out_of_range(scpi):
    c = scpi()
    c.write("VOLT 3")
    c.write("VOLT 31")
    c.write("VOLT 4;CURR 99")  # one batch: nothing of it is written
    check(c.query("VOLT?;:CURR?") == "3.0;0.1", "values unchanged")
    check(errors(c) == [-222, -222], "two -222")


def test_undefined_header(scpi):
    c = scpi()
    c.write("SOUR:FOO 1")
    reply = c.query("SYST:ERR?")
    check(reply.startswith("-113,\"Undefined header"), f"-113: {reply!r}")
    check(c.query("*ESR?") == "32", "CME in ESR")
    check(c.query("*ESR?") == "0", "*ESR? clears")


def test_queue_overflow(scpi):
    c = scpi()
    for _ in range(20):
        c.write("FOO")
    check(c.query("SYST:ERR:COUN?") == "16", "queue full")
    codes = errors(c)
    check(codes == [-113] * 15 + [-350], f"codes {codes}")
    c.write("FOO")
    c.write("*CLS")
    check(c.query("SYST:ERR:COUN?") == "0", "*CLS empties the queue")


def test_rst(scpi):
    c = scpi()
    c.write("VOLT 7;CURR 1;:OUTP ON;:VOLT:PROT 20;:SYST:FAN 80")
    c.write("*RST")
    reply = c.query("VOLT?;CURR?;:OUTP?;:VOLT:PROT?;:SYST:FAN?")
    check(reply == "0.0;0.1;0;33.0;30.0", f"defaults {reply!r}")
    check(errors(c) == [], "no error")


def test_status_registers(scpi):
    c = scpi()
    c.write("*ESE 60;*SRE 32")
    check(c.query("*ESE?;*SRE?") == "60;32", "ESE, SRE")
    check(c.query("*STB?") == "0", "STB clear")
    c.write("FOO")
    check(int(c.query("*STB?")) == 4 | 32 | 64, "EAV, ESB, MSS")
    c.write("*OPC")
    check(c.query("*ESR?") == "33", "OPC and CME")


def test_two_clients(scpi):
    a, b = scpi(), scpi()
    a.write("FOO")
    check(b.query("SYST:ERR:COUN?") == "0", "b has its own queue")
    check(a.query("SYST:ERR:COUN?") == "1", "a has its error")
    # *OPC? answers once b's setting is done, so a's query comes after it
    check(b.query("VOLT 9;*OPC?") == "1", "b's setting completes")
    check(a.query("VOLT?") == "9.0", "a sees b's setting")


def test_disconnect_mid_message(scpi):
    a, b = scpi(), scpi()
    a.sock.sendall(b"VOLT 5;CURR")
    a.close()
    check(b.query("VOLT?") == "0.0", "the partial message did nothing")
    check(b.query("*IDN?").startswith("ACME"), "b keeps working")
    c = scpi()
    check(c.query("SYST:ERR:COUN?") == "0", "a new client works")


def test_long_line(scpi):
    c = scpi()
    c.sock.sendall(b"VOLT " + b"1" * 5000 + b"\n")
    check(c.query("SYST:ERR?").startswith("-363,"), "input buffer overrun")
    check(c.query("VOLT?") == "0.0", "nothing written")
    c.sock.sendall(b"SYST:STAT:TEXT? " + b"x" * 3000)  # no terminator yet
    c.sock.sendall(b"\n*IDN?\n")
    check(c.read().startswith("ACME"), "alive after the discarded line")


def test_client_limit_and_garbage(scpi):
    clients = [scpi() for _ in range(4)]
    extra = scpi()
    extra.sock.settimeout(TIMEOUT)
    check(extra.sock.recv(16) == b"", "the fifth client is closed")
    junk = bytes(b for b in range(256) if b not in b"\"'#\n") * 8
    # a quote opens a string that newlines do not end: the closing quote does
    clients[0].sock.sendall(junk + b"\n#0abc\nSYST:STAT:TEXT? #15abcde\n\"unterminated\n\"\n")
    check(clients[1].query("*IDN?").startswith("ACME"), "alive after garbage")
    clients[0].write("*CLS")
    check(clients[0].query("*OPC?") == "1", "the garbage client still works")


def test_unit_file_verifies(pbus_build, pbus_tmp):
    """dist/systemd/pbus-scpi@.service as the build generates it, checked
    by systemd-analyze with ExecStart pointed at the build's programs."""
    import shutil
    if not shutil.which("systemd-analyze"):
        raise Failure("systemd-analyze is not installed (package systemd)")
    work = os.path.join(pbus_tmp, "units")
    os.makedirs(work, exist_ok=True)
    copies = []
    for unit, program in (("pbus-scpi@.service", "pbus-scpi"), ("pbusd@.service", "pbusd")):
        text = open(pbus_build.path("systemd", unit)).read()
        text = "\n".join("ExecStart=" + pbus_build.path("daemon", program) + " " + line.split(" ", 1)[1]
                         if line.startswith("ExecStart=") else line for line in text.splitlines())
        path = os.path.join(work, unit.replace("@.", "@psu."))
        with open(path, "w") as f:
            f.write(text.replace("@%i.service", "@psu.service") + "\n")
        copies.append(path)
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + copies, capture_output=True,
                       text=True, cwd=work, timeout=60)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          f"systemd-analyze verify: rc {r.returncode}: {r.stdout}{r.stderr}")


# --- methods -------------------------------------------------------------------------------


@pytest.fixture
def psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-scpi on the demo's tree + the demo simulator (which
    serves clear_trip and calibrate; pbus-scpi's proxy connects when it
    registers)."""
    sim = pbus_build.path("examples", "psu", "psu-sim")
    pbus_build.require(sim)
    with clients_of(start_psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, LIMITS)) as connect:
        with method_server([sim, pbus_instance.name, "200"], pbus_instance.sock_dir,
                           os.path.join(pbus_tmp, "psu-sim.log")):
            wait_for_methods(connect(), "OUTP:PROT:CLE")
            yield connect


@contextlib.contextmanager
def slow_rig(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, with_server):
    """pbusd on tests/scpi-daemon/slow.fdepl's schema, pbus-test-slow-server
    if @with_server, pbus-scpi (--call-timeout 1500) on its tree; yields the
    function making clients."""
    log_path = os.path.join(pbus_tmp, f"pbus-scpi-{pbus_instance.name}.log")
    extra = LIMITS + ["--call-timeout", "1500", "--log-level", "debug"]
    with slow_instrument(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, with_server) as tree:
        with clients_of(ScpiDaemon(pbus_build, pbus_instance.name, pbus_instance.sock_dir, log_path,
                                   extra, tree=tree).start()) as connect:
            if with_server:
                wait_for_methods(connect(), "PING")
            yield connect


@pytest.fixture
def slow(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-test-slow-server + pbus-scpi (--call-timeout 1500) on
    tests/scpi-daemon/slow.fdepl's tree."""
    with slow_rig(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, True) as connect:
        yield connect


def poll(c, query, want, what):
    deadline = time.monotonic() + TIMEOUT
    while (got := c.query(query)) != want:
        check(time.monotonic() < deadline, f"{what}: {query} stays {got}, not {want}")
        time.sleep(0.02)


def test_method_clears_trip(psu):
    """OUTPut:PROTection:CLEar (clear_trip, a set method) clears an
    over-voltage trip; *OPC? answers once it ran."""
    c = psu()
    check(c.query("VOLT 12;CURR 5;OUTP ON;*OPC?") == "1", "output on")
    poll(c, "OUTP:COND?", "ON", "switched on")
    check(c.query("VOLT:PROT 5;*OPC?") == "1", "OVP below the setpoint")
    poll(c, "OUTP:COND?", "TRIP", "tripped")
    check(c.query("OUTP:PROT:CLE;*OPC?") == "1", "*OPC? after the clear")
    # clear_trip switches output_enable off before it replies: *OPC? waited
    check(c.query("OUTP?") == "0", "the method ran before *OPC? answered")
    poll(c, "OUTP:COND?", "OFF", "no longer tripped")
    check(errors(c) == [], "no error")


def test_calibrate_answers_gain(psu):
    """CALibration:VOLTage? REF (calibrate, a query method) answers the
    gain; its error enumeration's OUTPUT_OFF and OUT_OF_RANGE are -200."""
    c = psu()
    c.write("CAL:VOLT? 12")  # the output is off
    check(c.query("SYST:ERR?") == '-200,"Execution error;calibrate: OUTPUT_OFF"', "output off")
    check(c.query("VOLT 12;CURR 5;OUTP ON;*OPC?") == "1", "output on")
    poll(c, "OUTP:COND?", "ON", "switched on")
    time.sleep(0.05)
    measured = float(c.query("MEAS:VOLT?"))
    gain = float(c.query("CAL:VOLT? %.4f" % (measured * 1.002)))
    check(abs(gain - 1.002) < 0.002, f"gain {gain}, expected about 1.002")
    c.write("CAL:VOLT? 20;*IDN?")  # the failed query ends the message: no answer
    check(c.query("SYST:ERR?") == '-200,"Execution error;calibrate: OUT_OF_RANGE"', "out of range")
    check(c.query("*IDN?").startswith("ACME"), "the next message is served")


def test_query_method_waits_and_others_are_served(slow):
    """WAIT? 800 answers after 800 ms; meanwhile another client is served
    at once, and the waiting one gets nothing else."""
    a, b = slow(), slow()
    t0 = time.monotonic()
    a.write("WAIT? 800;DONE?")
    time.sleep(0.1)
    t1 = time.monotonic()
    check(b.query("DONE?;*IDN?") == "0;parambus,pbus-scpi,0,0", "b served")
    check(time.monotonic() - t1 < 0.4, f"b waited {time.monotonic() - t1:.3f} s for a's method")
    check(not select.select([a.sock], [], [], 0)[0], "a has an answer before its method replied")
    check(a.read() == "800;0", "the method's answer, then the next query's, on one line")
    check(time.monotonic() - t0 >= 0.8, "answered before the method slept 800 ms")


def test_opc_after_completion(slow):
    """*OPC sets ESR bit 0 when the pending method completes, not before:
    `pause` counts in DONE before it replies, so DONE is 1 whenever ESR
    bit 0 is seen."""
    c = slow()
    t0 = time.monotonic()
    c.write("*CLS;PAUS 600;*OPC")
    check(c.query("*ESR?") == "0", "ESR bit 0 while the pause runs")
    check(time.monotonic() - t0 < 0.5, "the first *ESR? came too late to prove anything")
    while True:
        esr, done = c.query("*ESR?;DONE?").split(";")
        if esr == "1":
            break
        check(esr == "0" and done == "0", f"ESR {esr}, DONE {done} while pausing")
        check(time.monotonic() - t0 < TIMEOUT, "ESR bit 0 never came")
        time.sleep(0.02)
    check(done == "1", "ESR bit 0 set before the method completed")
    check(time.monotonic() - t0 >= 0.6, "ESR bit 0 before 600 ms")
    check(c.query("*OPC;*ESR?") == "1", "*OPC with nothing pending sets it at once")


def test_wai_and_opc_query_order(slow):
    """A set method runs overlapped: a query after it does not wait; *WAI
    and *OPC? hold the session until every pending call replied."""
    c = slow()
    check(c.query("PAUS 300;DONE?") == "0", "overlapped: DONE? before the pause ends")
    check(c.query("PAUS 300;*WAI;DONE?") == "2", "*WAI waits for both pauses")
    t0 = time.monotonic()
    check(c.query("PAUS 300;*OPC?;DONE?") == "1;3", "*OPC? answers once the pause is done")
    check(time.monotonic() - t0 >= 0.3, "*OPC? before the pause ended")
    check(errors(c) == [], "no error")


def test_method_arguments_and_errors(slow):
    c = slow()
    check(c.query('ECHO? ON,-3,2.5,0.1,"a""b",#13xyz,HIGH,-5') ==
          '1,-3,2.5,0.1,"a""b",#13xyz,HIGH,-5', "every type there and back")
    check(c.query("ECHO? 0,32767,1e-7,-1E300,'',#10,low,5") ==
          '0,32767,1.0E-07,-1.0E+300,"",#10,LOW,5', "their other ends")
    c.write("ECHO? ON,1")
    c.write("ECHO? ON,1,1,1,\"\",#10,HIGH,6")
    c.write("JAM? ON")
    c.write("BROK?")
    check(c.query("JAM? OFF") == "7", "no error: the answer")
    check(c.query("SYST:ERR?").startswith("-109,"), "missing arguments")
    check(c.query("SYST:ERR?").startswith("-222,"), "Integer(-5, 5) refuses 6")
    check(c.query("SYST:ERR?") == '-200,"Execution error;jam: JAMMED"', "the error enumerator")
    check(c.query("SYST:ERR?") == '-200,"Execution error;broken: Input/output error"',
          "the server function's -EIO")
    check(errors(c) == [], "no more")


def test_method_timeout(slow):
    c = slow()
    t0 = time.monotonic()
    c.write("WAIT? 2500;*IDN?")
    check(c.query("SYST:ERR?") == '-200,"Execution error;wait: timed out after 1500 ms"', "timeout")
    check(1.4 <= time.monotonic() - t0 < 2.4, f"answered after {time.monotonic() - t0:.3f} s")


def test_disconnect_with_call_outstanding(slow):
    """A client that hangs up while its message waits: the session is
    closed, the late reply finds no session and is dropped; pbus-scpi goes
    on."""
    a = slow()
    a.write("WAIT? 500")
    time.sleep(0.1)
    a.sock.close()
    b = slow()
    check(b.query("WAIT? 10") == "10", "served after a's call completed")
    with open(slow.log_path, errors="replace") as f:
        log = f.read()
    check("disconnected while waiting for a method" in log, "a's session closed while waiting")
    check("wait: reply for a closed session dropped" in log, "the orphaned reply dropped")


def test_no_method_server(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    with slow_rig(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, False) as connect:
        c = connect()
        c.write("WAIT? 10")
        e = c.query("SYST:ERR?")
        check(e.startswith('-241,"Hardware missing;wait: no server of local:'), e)
        check(c.query("*OPC?;DONE?") == "1;0", "nothing pending")


def test_scaled_unit_in_base_unit(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """A parameter in ms (settle) is read and answered in seconds, SCPI's
    base unit (SCPI-99 7.2.1.2), the table holding milliseconds; a suffix
    names the unit outright; MAX is the maximum in seconds too."""
    with slow_rig(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, False) as connect:
        c = connect()
        check(c.query("SETT?") == "0.1", "the default, 100 ms, is 0.1 s")
        check(c.query("SETT 0.25;*OPC?") == "1", "set")
        check(pbus_get(pbus_build, pbus_instance, "settle") == "250", "0.25 s is 250 ms in the table")
        check(c.query("SETT?") == "0.25", "answered in seconds")
        check(c.query("SETT 300 MS;*OPC?") == "1", "set with a suffix")
        check(pbus_get(pbus_build, pbus_instance, "settle") == "300", "300 MS is 300 ms")
        check(c.query("SETT?") == "0.3", "300 ms answered as 0.3")
        # A scaled value answers as a real (NR2), whole or not.
        got = c.query("SETT 2 S;SETT?")
        check(got == "2.0", f"2 S is 2 s: {got!r}")
        check(pbus_get(pbus_build, pbus_instance, "settle") == "2000", "2 s is 2000 ms in the table")
        got = c.query("SETT MAX;SETT?")
        check(got == "60.0", f"the maximum, 60000 ms, is 60 s: {got!r}")
        check(c.query("SETT 2;*OPC?") == "1", "back to 2 s")
        c.write("SETT 61")  # refused: the message ends there
        check(c.query("SYST:ERR?").startswith("-222,"), "61 s is beyond the maximum")
        check(pbus_get(pbus_build, pbus_instance, "settle") == "2000", "the refused value changed nothing")


# --- queries read the table --------------------------------------------------------------


def requests_from(build, instance, pid):
    """The requests pbusd has received on the connections of process @pid
    (pbus-scpi's): its STATS (docs/socket-protocol.md §7)."""
    stats = json.loads(pbus_tool(build, instance, "stat", "--json", "--once"))
    mine = [c for c in stats["clients_detail"] if c["pid"] == pid]
    check(mine, f"process {pid} is not a client of pbusd: {stats['clients_detail']}")
    return sum(c["requests"] for c in mine)


def test_queries_read_the_table(scpi, pbus_build, pbus_instance):
    """Queries are answered from the table (pbusd sees no request for
    them), with what pbusd would have answered, a value written into the
    table without pbusd included; settings still go to pbusd, one SET per
    message."""
    c = scpi()
    check(c.query("VOLT 7;CURR 1.5;:OUTP ON;*OPC?") == "1", "settings")
    before = requests_from(pbus_build, pbus_instance, scpi.proc.pid)
    for _ in range(100):
        reply = c.query("VOLT?;CURR?;:OUTP?;:VOLT:PROT?;:OUTP:PROT:CAUS?;*IDN?")
        check(reply == "7.0;1.5;1;33.0;NONE;ACME Instruments,PSU-3005,0,0", f"reply {reply!r}")
    check(requests_from(pbus_build, pbus_instance, scpi.proc.pid) == before,
          "pbus-scpi asked pbusd for the values of queries")
    pbus_tool(pbus_build, pbus_instance, "set", "--direct", "voltage_setpoint=6.25")
    check(c.query("VOLT?") == "6.25", "a value written into the table by another writer")
    c.write("VOLT 3;CURR 2")
    check(c.query("VOLT?;CURR?") == "3.0;2.0", "the settings read back")
    check(requests_from(pbus_build, pbus_instance, scpi.proc.pid) == before + 1,
          "not one SET for the message's settings and nothing for its queries")
    check(errors(c) == [], "no error")


def test_noread_query_goes_to_pbusd(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """A noread parameter is never read from the table: its query goes to
    pbusd, which refuses it as ever. pbus-gen gives a noRead attribute no
    query form, so the tree is edited by hand to have one."""
    with slow_instrument(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, False) as tree:
        tree_copy = os.path.join(pbus_tmp, "secret.scpi")
        with open(tree) as f:
            text = f.read()
        line = re.search(r"^param \d+ secret uint32 set 0$", text, re.M)
        check(line is not None, "slow.scpi's secret is set-only")
        with open(tree_copy, "w") as f:
            f.write(text.replace(line.group(0), line.group(0).replace(" set ", " both ")))
        log_path = os.path.join(pbus_tmp, f"pbus-scpi-{pbus_instance.name}.log")
        with clients_of(ScpiDaemon(pbus_build, pbus_instance.name, pbus_instance.sock_dir, log_path,
                                   LIMITS, tree=tree_copy).start()) as connect:
            c = connect()
            c.write("SECR 42")
            check(c.query("DONE?") == "0", "a readable parameter")
            before = requests_from(pbus_build, pbus_instance, connect.proc.pid)
            c.write("SECR?")
            e = c.query("SYST:ERR?")
            check(e == '-203,"Command protected;secret: permission denied (read-only parameter or no write '
                  'access)"', f"refusal {e!r}")
            check(requests_from(pbus_build, pbus_instance, connect.proc.pid) == before + 1,
                  "the noread query was not a GET to pbusd")
            check(c.query("DONE?;*ESR?") == "0;16", "the next message is served")


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_queries_after_pbusd_restart(how, pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd stops (cleanly, or killed): queries fail as they did through
    the socket, not with the old table's values; once a new pbusd serves
    the instance (a new segment), they read its table."""
    server = start_psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, LIMITS)
    with clients_of(server) as connect:
        c = connect()
        check(c.query("VOLT 5;*OPC?;VOLT?") == "1;5.0", "the first pbusd")
        server.pbusd.stop(getattr(signal, how))
        c.write("VOLT?")
        e = c.query("SYST:ERR?")
        check(e.startswith('-240,"Hardware error;pbusd: '), f"VOLT? without pbusd: {e!r}")
        server.pbusd.start()
        deadline = time.monotonic() + TIMEOUT
        while True:
            c.write("*CLS")
            reply = c.query("CURR?;*ESR?")
            if reply.endswith(";0"):
                break  # a GET through pbusd reconnected pbus-scpi
            check(time.monotonic() < deadline, f"pbus-scpi does not reach the new pbusd: {reply!r}")
            time.sleep(0.05)
        pbus_tool(pbus_build, pbus_instance, "set", "--direct", "voltage_setpoint=6.5")
        before = requests_from(pbus_build, pbus_instance, connect.proc.pid)
        for _ in range(50):
            check(c.query("VOLT?") == "6.5", "the new table's value")
        check(requests_from(pbus_build, pbus_instance, connect.proc.pid) == before,
              "the queries went to pbusd: the new table was not opened")
        check(errors(c) == [], "no error")
