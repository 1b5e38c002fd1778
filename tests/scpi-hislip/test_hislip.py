"""test_hislip.py: pbus-scpi's HiSLIP server against the real pbusd serving the demo PSU.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/scpi-hislip \\
        --pbus-build build/dev

Each test starts pbusd (examples/psu/psu.pbs) and pbus-scpi (its tree
psu.scpi) with the raw socket and HiSLIP on ports the kernel picks
(--listen 127.0.0.1:0 --hislip 127.0.0.1:0, reported through --notify-fd
as PORT= and HISLIP_PORT=). Two kinds of client:

- pyvisa with pyvisa-py (ResourceManager('@py'), resource
  TCPIP::127.0.0.1::hislip0,PORT::INSTR): what a VISA user does, query,
  read_stb(), clear(). pyvisa-py has no VISA events (wait_on_event and
  install_handler are not implemented for any of its sessions), so the
  service request is read from pyvisa-py's own asynchronous socket with its
  own decoder (pyvisa_py.protocols.hislip.AsyncServiceRequest); its locks
  are driven through its HiSLIP client's async_lock_* calls.
- Hislip below: the protocol by hand over plain sockets, for what a
  well-behaved client never sends (bad prologue, unknown types, huge
  lengths, a disconnect in the middle of a message) and for the rules
  pyvisa-py does not exercise (MAV, RMT-delivered, Trigger).
"""
import contextlib
import os
import select
import socket
import struct
import threading
import time

import pytest
import pyvisa
from pyvisa_py.protocols import hislip as pyhislip

from pbustest.check import TIMEOUT, Failure, check
from pbustest.scpi import ScpiDaemon, method_server, slow_instrument, wait_for_methods

SUITE = "scpi-hislip"

# IVI-6.1 message types
INITIALIZE, INITIALIZE_RESPONSE, FATAL_ERROR, ERROR = 0, 1, 2, 3
ASYNC_LOCK, ASYNC_LOCK_RESPONSE, DATA, DATA_END = 4, 5, 6, 7
DEVICE_CLEAR_COMPLETE, DEVICE_CLEAR_ACKNOWLEDGE = 8, 9
TRIGGER = 12
ASYNC_MAX_MSG_SIZE, ASYNC_MAX_MSG_SIZE_RESPONSE = 15, 16
ASYNC_INITIALIZE, ASYNC_INITIALIZE_RESPONSE = 17, 18
ASYNC_DEVICE_CLEAR, ASYNC_SERVICE_REQUEST = 19, 20
ASYNC_STATUS_QUERY, ASYNC_STATUS_RESPONSE = 21, 22
ASYNC_DEVICE_CLEAR_ACKNOWLEDGE = 23
ASYNC_LOCK_INFO, ASYNC_LOCK_INFO_RESPONSE = 24, 25

HEADER = struct.Struct(">2sBBIQ")
FIRST_ID = 0xFFFFFF00
MAX_LINE = 1024  # the fixture's --max-line
MAX_CLIENTS = 4  # and --max-clients


def frame(kind, control=0, parameter=0, payload=b"", length=None):
    return HEADER.pack(b"HS", kind, control, parameter, len(payload) if length is None else length) + payload


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise Failure(f"pbus-scpi closed the connection ({len(data)} of {n} bytes read)")
        data += chunk
    return data


def recv_message(sock):
    """(type, control, parameter, payload) of the next message."""
    prologue, kind, control, parameter, length = HEADER.unpack(recv_exact(sock, HEADER.size))
    check(prologue == b"HS", f"prologue {prologue!r}")
    return kind, control, parameter, recv_exact(sock, length)


def closed(sock):
    """Whether the server closed the connection (within TIMEOUT)."""
    sock.settimeout(TIMEOUT)
    try:
        while sock.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


class Hislip:
    """A HiSLIP session by hand: the synchronous and asynchronous channels."""

    def __init__(self, port, sub_address=b"hislip0", connect_async=True):
        self.port = port
        self.sync = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.sync.sendall(frame(INITIALIZE, 0, 0x0100 << 16 | 0x7878, sub_address))
        kind, control, parameter, payload = recv_message(self.sync)
        if kind != INITIALIZE_RESPONSE:
            raise Failure(f"Initialize answered with type {kind} {control}: {payload!r}")
        self.overlap = control
        self.version = parameter >> 16
        self.session_id = parameter & 0xFFFF
        self.next_id = FIRST_ID
        self.last_id = FIRST_ID - 2  # what a status query names before any message
        self.rmt = 0
        self.async_ = None
        if connect_async:
            self.async_ = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            self.async_.sendall(frame(ASYNC_INITIALIZE, 0, self.session_id))
            kind, _, _, _ = recv_message(self.async_)
            check(kind == ASYNC_INITIALIZE_RESPONSE, f"AsyncInitialize answered with type {kind}")

    def send(self, text, kind=DATA_END, rmt=None):
        """A message on the synchronous channel; its MessageID."""
        ident = self.next_id
        self.next_id = (self.next_id + 2) & 0xFFFFFFFF
        self.sync.sendall(frame(kind, self.rmt if rmt is None else rmt, ident, text.encode()))
        self.rmt = 0
        self.last_id = ident
        return ident

    def read(self):
        """One response (Data... DataEnd): (text, MessageID)."""
        data, ids = b"", set()
        while True:
            kind, control, parameter, payload = recv_message(self.sync)
            check(kind in (DATA, DATA_END), f"expected Data or DataEnd, got type {kind}: {payload!r}")
            data += payload
            ids.add(parameter)
            if kind == DATA_END:
                break
        check(len(ids) == 1, f"one MessageID per response, got {ids}")
        self.rmt = 1
        return data.decode(), ids.pop()

    def query(self, text):
        ident = self.send(text)
        reply, reply_id = self.read()
        check(reply_id == ident, f"response MessageID {reply_id:#x}, sent {ident:#x}")
        check(reply.endswith("\n"), f"response ends with NL: {reply!r}")
        return reply[:-1]

    def transact(self, kind, control=0, parameter=0, payload=b""):
        self.async_.sendall(frame(kind, control, parameter, payload))
        return recv_message(self.async_)

    def status(self, message_id=None, rmt=0):
        kind, control, _, _ = self.transact(ASYNC_STATUS_QUERY, rmt,
                                            self.last_id if message_id is None else message_id)
        check(kind == ASYNC_STATUS_RESPONSE, f"AsyncStatusResponse, got type {kind}")
        return control

    def close(self):
        for s in (self.sync, self.async_):
            if s:
                s.close()


def errors(query):
    """Drain the error queue through QUERY: the codes, oldest first."""
    codes = []
    while True:
        code = int(query("SYST:ERR?").split(",")[0])
        if code == 0:
            return codes
        codes.append(code)


@contextlib.contextmanager
def serving(pbus_build, pbus_instance, pbus_tmp, tree, extra=()):
    """pbus-scpi with HiSLIP on @tree (the instance's pbusd running);
    yields an object with .hislip_port, .port, .proc, .log_path, .visa() (a
    pyvisa-py resource), .raw() (a Hislip session)."""
    log_path = os.path.join(pbus_tmp, f"pbus-scpi-{pbus_instance.name}.log")
    srv = ScpiDaemon(pbus_build, pbus_instance.name, pbus_instance.sock_dir, log_path,
                     ["--max-clients", str(MAX_CLIENTS), "--max-line", str(MAX_LINE)] + list(extra),
                     tree=tree, hislip=True).start()
    opened = []
    rm = pyvisa.ResourceManager("@py")

    def visa():
        inst = rm.open_resource(f"TCPIP::127.0.0.1::hislip0,{srv.hislip_port}::INSTR")
        inst.timeout = TIMEOUT * 1000
        inst.read_termination = "\n"
        opened.append(inst)
        return inst

    def raw(**kw):
        h = Hislip(srv.hislip_port, **kw)
        opened.append(h)
        return h

    srv.visa, srv.raw = visa, raw
    try:
        yield srv
        check(srv.running(), f"pbus-scpi exited with {srv.proc.returncode}")
    finally:
        for o in opened:
            try:
                o.close()
            except Exception:  # a session the test already broke
                pass
        rm.close()
        rc = srv.stop()
    check(rc == 0, f"pbus-scpi exit status {rc} after SIGTERM")


@pytest.fixture
def server(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-scpi on the demo's tree (serving()'s object)."""
    pbus_daemons.start(pbus_instance.name, pbus_instance.state_dir, schema=pbus_build.psu_schema,
                       extra=["--socket-dir", pbus_instance.sock_dir])
    with serving(pbus_build, pbus_instance, pbus_tmp, pbus_build.path("examples", "psu", "psu.scpi")) as srv:
        yield srv


@pytest.fixture
def slow_server(pbus_build, pbus_daemons, pbus_instance, pbus_tmp):
    """pbusd + pbus-test-slow-server (tests/scpi-daemon/slow.fdepl: methods
    that take the time they are told to) + pbus-scpi on its tree."""
    with slow_instrument(pbus_build, pbus_daemons, pbus_instance, pbus_tmp) as tree:
        with serving(pbus_build, pbus_instance, pbus_tmp, tree) as srv:
            wait_for_methods(srv.visa(), "PING")
            yield srv


def interface(inst):
    """pyvisa-py's HiSLIP client (pyvisa_py.protocols.hislip.Instrument) of a resource."""
    return inst.visalib.sessions[inst.session].interface


# --- pyvisa with pyvisa-py ----------------------------------------------------

def test_identity(server):
    inst = server.visa()
    check(inst.query("*IDN?") == "ACME Instruments,PSU-3005,0,0", "identity over HiSLIP")
    iface = interface(inst)
    check(iface.max_msg_size == MAX_LINE + 16, f"the server's maximum message size {iface.max_msg_size}")
    check(inst.query("SYST:VERS?") == "1999.0", "SYSTem:VERSion?")


def test_setting_read_back(server):
    inst = server.visa()
    inst.write("SOUR:VOLT 1500 mV")
    check(inst.query("SOUR:VOLT?") == "1.5", "1500 mV reads back as 1.5")
    reply = inst.query("SOUR:VOLT 2;CURR 0.5;:OUTP ON;:SOUR:VOLT?;CURR?;:OUTP?")
    check(reply == "2.0;0.5;1", f"compound reply {reply!r}")
    # several program messages in one HiSLIP message: NL ends each, END the last
    inst.write("VOLT 3\nCURR 0.25")
    check(inst.query("VOLT?;:CURR?") == "3.0;0.25", "two messages in one DataEnd")
    check(errors(inst.query) == [], "no error")
    # the raw socket sees what HiSLIP wrote: one instrument
    s = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    s.sendall(b"VOLT?\n")
    check(s.recv(100) == b"3.0\n", "the raw socket reads the setting")
    s.close()


def test_read_stb_after_error(server):
    inst = server.visa()
    check(inst.read_stb() == 0, "status byte 0 at start")
    inst.write("SOUR:FOO 1")
    # the channels are independent: the status query may overtake the
    # message, so wait for it to have run
    check(inst.query("*OPC?") == "1", "the message ran")
    stb = inst.read_stb()
    check(stb & 0x04, f"EAV (bit 2) after an error: {stb:#x}")
    check(not stb & 0x40, f"no RQS without *SRE: {stb:#x}")
    inst.write("*ESE 32")
    check(inst.query("*OPC?") == "1", "*ESE ran")
    stb = inst.read_stb()
    check(stb & 0x24 == 0x24, f"ESB (bit 5) with *ESE 32 after a command error: {stb:#x}")
    check(inst.query("*STB?") == str(stb), "*STB? agrees with read_stb()")
    reply = inst.query("SYST:ERR?")
    check(reply.startswith('-113,"Undefined header'), f"-113: {reply!r}")
    check(inst.read_stb() & 0x04 == 0, "EAV clear with the queue empty")


def test_clear_recovers_a_session(server):
    inst = server.visa()
    iface = interface(inst)
    # a program message left unfinished: Data without DataEnd (pyvisa-py's own Data packet)
    iface._send_data_packet(b"SOUR:VOLT 7;:SOUR:F")
    inst.clear()
    # the fragment was dropped: the next message parses on its own
    inst.write("VOLT 4")
    check(inst.query("VOLT?") == "4.0", "the session works after clear()")
    check(errors(inst.query) == [], "the dropped fragment left no error and changed nothing")
    # clear() keeps the status (IEEE 488.2 device clear is not *CLS)
    inst.write("NOPE")
    check(inst.query("*OPC?") == "1", "NOPE ran")
    inst.clear()
    check(inst.read_stb() & 0x04, "EAV survives clear()")
    check(errors(inst.query) == [-113], "the error queue survives clear()")


def test_message_too_long(server):
    inst = server.visa()
    # pyvisa-py splits at the server's maximum (max-line + 16): Data frames, then DataEnd
    inst.write("VOLT 5;" + ";".join(["VOLT 6"] * 200))
    check(inst.query("VOLT?") == "0.0", "nothing of the long message ran")
    check(errors(inst.query) == [-363], "-363 input buffer overrun")
    check(inst.query("*IDN?").startswith("ACME"), "the session goes on")


def test_service_request(server):
    inst = server.visa()
    iface = interface(inst)
    inst.write("*ESE 1;*SRE 32;*OPC")
    srq = pyhislip.AsyncServiceRequest(iface._async)  # pyvisa-py's decoder, its own socket
    check(srq.server_status & 0x60 == 0x60, f"AsyncServiceRequest with RQS and ESB: {srq.server_status:#x}")
    stb = inst.read_stb()
    check(stb & 0x60 == 0x60, f"read_stb(): RQS and ESB {stb:#x}")
    stb = inst.read_stb()
    check(stb & 0x60 == 0x20, f"RQS cleared by the poll, ESB stays: {stb:#x}")
    # no new request while the reason stays; a new one after it went away
    inst.write("*OPC")
    check(inst.query("*ESR?") == "1", "*ESR? reads OPC")
    inst.write("*OPC")
    srq = pyhislip.AsyncServiceRequest(iface._async)
    check(srq.server_status & 0x60 == 0x60, f"a second service request {srq.server_status:#x}")
    # an error with *SRE 4 (EAV)
    inst.write("*CLS;*SRE 4")
    inst.write("BAD:COMMAND")
    srq = pyhislip.AsyncServiceRequest(iface._async)
    check(srq.server_status & 0x44 == 0x44, f"service request for EAV {srq.server_status:#x}")
    iface._async.settimeout(0.3)
    with pytest.raises(socket.timeout):
        iface._async.recv(16)  # exactly one request per reason


def test_two_sessions(server):
    a, b = server.visa(), server.visa()
    check(interface(a).max_msg_size and interface(b).max_msg_size, "both open")
    a.write("NOPE")
    check(a.read_stb() & 0x04 and not b.read_stb() & 0x04, "each session its own error queue")
    b.write("VOLT 9")
    check(b.query("*OPC?") == "1", "b's setting done")  # two sockets: no order between them otherwise
    check(a.query("VOLT?") == "9.0", "one instrument: a setting of one is read by the other")
    results = {}

    def poll(name, inst):
        results[name] = [inst.query("MEAS:VOLT?;*IDN?") for _ in range(50)]

    threads = [threading.Thread(target=poll, args=(n, i)) for n, i in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
    check(all(len(results.get(n, [])) == 50 for n in "ab"), "both sessions answered 50 queries at once")
    check(all(r.endswith("ACME Instruments,PSU-3005,0,0") for n in "ab" for r in results[n]),
          "every answer whole")


def test_lock(server):
    a, b = server.visa(), server.visa()
    ia, ib = interface(a), interface(b)
    check(ia.async_lock_request(1.0) == "success", "exclusive lock granted")
    check(ia.async_lock_info() == 1, "AsyncLockInfo: exclusive lock granted")
    start = time.monotonic()
    check(ib.async_lock_request(0.3) == "failure", "a second exclusive lock fails after its timeout")
    waited = time.monotonic() - start
    check(0.25 <= waited < 3, f"waited its timeout: {waited:.2f} s")
    check(a.query("VOLT?") == "0.0", "the holder does I/O")
    b.write("VOLT 8")  # locked out: waits, is not refused
    time.sleep(0.3)
    check(a.query("VOLT?") == "0.0", "a locked-out session's message waits")
    # a request waiting for the lock is granted when it is released
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("b", ib.async_lock_request(5.0)))
    t.start()
    time.sleep(0.2)
    check(t.is_alive(), "the request waits while the lock is held")
    check(ia.async_lock_release() == "success", "release of the exclusive lock")
    t.join(TIMEOUT)
    check(result.get("b") == "success", f"the waiting request granted at release: {result}")
    check(b.query("VOLT?") == "8.0", "the waiting message ran")
    check(ia.async_lock_release() == "error", "releasing a lock not held is an error")
    check(ib.async_lock_release() == "success", "b releases")
    # shared locks by name
    check(ia.async_lock_request(0.1, "k") == "success", "shared lock k")
    check(ib.async_lock_request(0.1, "k") == "success", "shared lock k again")
    check(ia.async_lock_info() == 0, "no exclusive lock")
    c = server.visa()
    check(interface(c).async_lock_request(0.1, "other") == "failure", "another name is refused")
    check(ia.async_lock_release() == "success shared", "shared release")
    # a closed session gives its locks up
    b.close()
    check(interface(c).async_lock_request(1.0) == "success", "the lock of a closed session is free")


# --- the protocol by hand -------------------------------------------------------

def test_initialize_response(server):
    h = server.raw()
    check(h.overlap == 0, "the server prefers synchronized mode")
    check(h.version == 0x0100, f"protocol version 1.0, got {h.version:#x}")
    check(h.query("*IDN?") == "ACME Instruments,PSU-3005,0,0", "a query by hand")
    kind, control, parameter, payload = h.transact(ASYNC_MAX_MSG_SIZE, payload=struct.pack(">Q", 1 << 20))
    check(kind == ASYNC_MAX_MSG_SIZE_RESPONSE and struct.unpack(">Q", payload)[0] == MAX_LINE + 16,
          f"AsyncMaximumMessageSizeResponse {kind} {payload!r}")
    h2 = Hislip(server.hislip_port, sub_address=b"")
    check(h2.query("VOLT?") == "0.0", "an empty sub-address is the default instrument")
    h2.close()


def test_response_split_to_client_maximum(server):
    h = server.raw()
    kind, _, _, _ = h.transact(ASYNC_MAX_MSG_SIZE, payload=struct.pack(">Q", 64))
    check(kind == ASYNC_MAX_MSG_SIZE_RESPONSE, "AsyncMaximumMessageSize")
    ident = h.send("*IDN?;*IDN?;*IDN?")
    kinds, data = [], b""
    while not kinds or kinds[-1] != DATA_END:
        kind, _, parameter, payload = recv_message(h.sync)
        check(parameter == ident and 16 + len(payload) <= 64, f"message of {len(payload)} bytes, id {parameter:#x}")
        kinds.append(kind)
        data += payload
    check(len(kinds) > 1 and set(kinds[:-1]) == {DATA}, f"Data... DataEnd: {kinds}")
    check(data == b";".join([b"ACME Instruments,PSU-3005,0,0"] * 3) + b"\n", "reassembled")


def test_mav_and_rmt(server):
    h = server.raw()
    ident = h.send("*IDN?")
    # wait until the response arrives (unread): the server has handled the message
    check(select.select([h.sync], [], [], TIMEOUT)[0], "a response")
    check(h.status(ident) & 0x10, "MAV: a response to the last message is unread")
    check(not h.status(ident - 2) & 0x10, "MAV is 0 for another MessageID")
    h.read()
    check(not h.status(ident, rmt=1) & 0x10, "MAV 0 once RMT-delivered says it was read")
    h.rmt = 0  # the status query carried it
    # a new message before the response was read: query interrupted (-410)
    h.send("*IDN?")
    h.send("VOLT?")  # rmt 0 while a response is unacknowledged
    h.read()
    h.read()
    check(errors(h.query) == [-410], "-410 query interrupted")


def test_trigger(server):
    h = server.raw()
    h.sync.sendall(frame(TRIGGER, 0, h.next_id))
    h.next_id += 2
    check(errors(h.query) == [-113], "Trigger runs *TRG, which the PSU does not support: -113")


def test_device_clear_by_hand(server):
    h = server.raw()
    h.send("VOLT 1;:VOLT?")  # a response on its way, never read
    check(select.select([h.sync], [], [], TIMEOUT)[0], "a response")  # the message ran
    kind, control, _, _ = h.transact(ASYNC_DEVICE_CLEAR)
    check(kind == ASYNC_DEVICE_CLEAR_ACKNOWLEDGE and control & 1 == 0,
          f"AsyncDeviceClearAcknowledge, synchronized: {kind} {control}")
    h.sync.sendall(frame(DATA_END, 0, 0x1234, b"VOLT 2"))  # discarded until DeviceClearComplete
    h.sync.sendall(frame(DEVICE_CLEAR_COMPLETE, 1))  # asks for overlap mode
    while True:  # the client discards Data until the acknowledgement (IVI-6.1 6.12)
        kind, control, _, _ = recv_message(h.sync)
        if kind not in (DATA, DATA_END):
            break
    check(kind == DEVICE_CLEAR_ACKNOWLEDGE and control & 1 == 0,
          f"DeviceClearAcknowledge, synchronized granted: {kind} {control}")
    h.next_id, h.rmt = FIRST_ID, 0
    check(h.query("VOLT?") == "1.0", "the message sent while clearing was discarded")
    check(errors(h.query) == [], "no error")


def test_error_unknown_types(server):
    other = server.visa()
    h = server.raw()
    h.sync.sendall(frame(99, 0, 0, b"xyz"))
    kind, control, _, text = recv_message(h.sync)
    check(kind == ERROR and control == 1, f"Error 1 (unrecognized message type): {kind} {control}")
    check(b"99" in text, f"the text names the type: {text!r}")
    h.sync.sendall(frame(200))
    kind, control, _, _ = recv_message(h.sync)
    check(kind == ERROR and control == 3, f"Error 3 (vendor-defined): {kind} {control}")
    h.async_.sendall(frame(DATA_END, 0, 0, b"*IDN?"))
    kind, control, _, _ = recv_message(h.async_)
    check(kind == ERROR and control == 1, f"Error 1 for Data on the asynchronous channel: {kind} {control}")
    kind, control, _, _ = h.transact(ASYNC_LOCK, 7)
    check(kind == ERROR and control == 2, f"Error 2 (unrecognized control code): {kind} {control}")
    kind, control, _, text = h.transact(ASYNC_LOCK, 1, 0, b"x" * 1000)
    check(kind == ERROR and control == 4, f"Error 4 (message too large): {kind} {control} {text!r}")
    check(h.status() == 0, "the asynchronous channel goes on")
    check(h.query("*IDN?").startswith("ACME"), "the session goes on after non-fatal errors")
    check(other.query("*IDN?").startswith("ACME"), "and the others")


def test_fatal_errors(server):
    other = server.visa()
    h = server.raw()
    h.sync.sendall(b"XX" + bytes(14))
    kind, control, _, text = recv_message(h.sync)
    check(kind == FATAL_ERROR and control == 1, f"FatalError 1 (poorly formed header): {kind} {control}")
    check(closed(h.sync) and closed(h.async_), "both channels closed")
    # anything but Initialize/AsyncInitialize first
    s = socket.create_connection(("127.0.0.1", server.hislip_port), timeout=TIMEOUT)
    s.sendall(frame(DATA_END, 0, FIRST_ID, b"*IDN?"))
    kind, control, _, _ = recv_message(s)
    check(kind == FATAL_ERROR and control == 3, f"FatalError 3 (initialization sequence): {kind} {control}")
    check(closed(s), "closed")
    s.close()
    # AsyncInitialize for a session that does not exist
    s = socket.create_connection(("127.0.0.1", server.hislip_port), timeout=TIMEOUT)
    s.sendall(frame(ASYNC_INITIALIZE, 0, 0xBEEF))
    kind, control, _, _ = recv_message(s)
    check(kind == FATAL_ERROR and control == 3, f"FatalError 3 for an unknown session: {kind} {control}")
    s.close()
    # a wrong sub-address
    with pytest.raises(Failure):
        Hislip(server.hislip_port, sub_address=b"inst7")
    # data before the asynchronous channel
    h = server.raw(connect_async=False)
    h.send("*IDN?")
    kind, control, _, _ = recv_message(h.sync)
    check(kind == FATAL_ERROR and control == 2, f"FatalError 2 (channels not established): {kind} {control}")
    check(other.query("*IDN?").startswith("ACME"), "the other session is served throughout")


def test_session_limit(server):
    sessions = [server.raw() for _ in range(MAX_CLIENTS)]
    s = socket.create_connection(("127.0.0.1", server.hislip_port), timeout=TIMEOUT)
    s.sendall(frame(INITIALIZE, 0, 0x0100 << 16, b"hislip0"))
    kind, control, _, _ = recv_message(s)
    check(kind == FATAL_ERROR and control == 4, f"FatalError 4 (too many clients): {kind} {control}")
    s.close()
    sessions[0].close()
    # the server frees the slot when it sees the close: retry until then
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            h = server.raw()
            break
        except Failure:
            check(time.monotonic() < deadline, "no session slot freed by a close")
    check(h.query("*IDN?").startswith("ACME"), "a session again once one closed")


def test_huge_length(server):
    other = server.visa()
    h = server.raw()
    h.sync.sendall(frame(DATA_END, 0, FIRST_ID, length=1 << 63))
    kind, control, _, text = recv_message(h.sync)
    check(kind == ERROR and control == 4, f"Error 4 (message too large): {kind} {control} {text!r}")
    h.sync.sendall(b"A" * 100000)  # the announced payload, dropped as it comes
    check(h.status() & 0x04, "EAV: -363 queued")
    check(other.query("*IDN?").startswith("ACME"), "the other session is served")
    h.close()
    check(other.query("VOLT?") == "0.0", "and after that one left")


def test_disconnect_mid_message(server):
    other = server.visa()
    for text in (frame(DATA_END, 0, FIRST_ID, b"VOLT 5", length=100),   # payload cut short
                 frame(DATA, 0, FIRST_ID, b"VOLT 5;"),                   # Data, no DataEnd
                 frame(DATA_END, 0, FIRST_ID, b"VOLT 5")[:9]):           # header cut short
        h = server.raw()
        h.sync.sendall(text)
        h.close()
        check(other.query("VOLT?") == "0.0", f"nothing of the cut message ran ({text[:12]!r})")
    check(other.query("*IDN?").startswith("ACME"), "the server goes on")
    # (which channel's close the server sees first, and so what it logs,
    # is the kernel's order: the values above are the test)


def test_methods_over_hislip(server, pbus_build, pbus_instance, pbus_tmp):
    """A method command over HiSLIP, with the demo simulator serving the
    methods: CAL:VOLT? waits for calibrate's reply (the session's message
    is suspended and resumed; the response carries its DataEnd's
    MessageID), OUTP:PROT:CLE;*OPC? for clear_trip's."""
    sim = pbus_build.path("examples", "psu", "psu-sim")
    pbus_build.require(sim)
    with method_server([sim, pbus_instance.name, "200"], pbus_instance.sock_dir,
                       os.path.join(pbus_tmp, "psu-sim.log")):
        inst = server.visa()
        wait_for_methods(inst, "OUTP:PROT:CLE")
        check(inst.query("VOLT 12;CURR 5;OUTP ON;*OPC?") == "1", "output on")
        deadline = time.monotonic() + TIMEOUT
        while inst.query("OUTP:COND?") != "ON":
            check(time.monotonic() < deadline, "the output never came on")
            time.sleep(0.02)
        time.sleep(0.05)
        measured = float(inst.query("MEAS:VOLT?"))
        gain = float(inst.query("CAL:VOLT? %.4f;*OPC?" % (measured * 1.002)).split(";")[0])
        check(abs(gain - 1.002) < 0.002, f"gain {gain}, expected about 1.002")
        check(inst.query("OUTP:PROT:CLE;*OPC?") == "1", "*OPC? after clear_trip")
        check(inst.query("*IDN?").startswith("ACME"), "the session goes on")
        check(inst.query("SYST:ERR?") == '0,"No error"', "no error")


def test_clear_while_a_method_runs(slow_server):
    """A device clear while the session's message waits for a query
    method's reply: clear() completes at once (the waiting message is
    dropped and the synchronous channel read again), the session is served
    meanwhile, the method's answer is never sent, and the call stays a
    pending operation (*OPC? answers once it replied)."""
    inst = slow_server.visa()
    t0 = time.monotonic()
    inst.write("WAIT? 1000;*IDN?")
    time.sleep(0.1)
    inst.clear()
    check(time.monotonic() - t0 < 0.6, f"clear() took until {time.monotonic() - t0:.3f} s")
    check(inst.query("DONE?") == "0", "the next message answers its own query")
    check(time.monotonic() - t0 < 0.8, "served before the method replied")
    check(inst.query("*OPC?") == "1", "*OPC? after the dropped query")
    check(time.monotonic() - t0 >= 1.0, "*OPC? answered before the call replied: it was not pending")
    # had the dropped message's answer ("1000;...") been sent, this reads it
    check(inst.query("*IDN?") == "parambus,pbus-scpi,0,0", "no late answer of the dropped message")
    check(errors(inst.query) == [], "no error")
