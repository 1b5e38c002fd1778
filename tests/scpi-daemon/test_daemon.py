"""test_daemon.py: pbus-scpi against the real pbusd serving the demo PSU.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/scpi-daemon \\
        --pbus-build build/dev

Each test starts pbusd (examples/psu/psu.pbs) and pbus-scpi (its tree
psu.scpi) on a port the kernel picks (--listen 127.0.0.1:0, reported
through --notify-fd; tests/pbustest/scpi.py), and talks raw SCPI over plain
TCP sockets.
"""
import os
import socket
import subprocess

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.scpi import start_psu

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


@pytest.fixture
def scpi(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-scpi; yields a function making clients (and the port)."""
    server = start_psu(pbus_build, pbus_daemons, pbus_instance, pbus_tmp,
                       extra=["--max-clients", "4", "--max-line", "1024"])
    clients = []

    def connect():
        c = Scpi(server.port)
        clients.append(c)
        return c

    try:
        connect.proc = server.proc
        yield connect
        check(server.running(), f"pbus-scpi exited with {server.proc.returncode}")
    finally:
        for c in clients:
            c.close()
        rc = server.stop()
    check(rc == 0, f"pbus-scpi exit status {rc} after SIGTERM")


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
