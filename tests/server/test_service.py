"""test_service.py: pbusd as a system service, on the host.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/server/test_service.py \
        --pbus-build build/dev

What systemd relies on, each checked against the real pbusd without
systemd itself: readiness through $NOTIFY_SOCKET (Type=notify), socket
activation ($LISTEN_FDS, the unit pbusd@.socket), log lines with syslog
priorities when stderr is the journal ($JOURNAL_STREAM), a clean shutdown
on SIGTERM (socket and segment removed), and that the unit files the build
generates pass `systemd-analyze verify`. Prints `PASS: service/<name>` or
`FAIL: service/<name>: reason` (tests/conftest.py). pbusd is started here
as systemd starts it, not through --notify-fd.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest

from pbustest.check import TIMEOUT, Failure, check
from pbustest.daemon import CLI_SCHEMA as SCHEMA

SUITE = "service"


def hello(sock):
    """HELLO and its reply (docs/socket-protocol.md §3.1); returns the reply's type."""
    body = struct.pack("<IIQI", 1, 1, 0, 4) + b"test"
    sock.sendall(struct.pack("<IHHI", 12 + len(body), 1, 0, 7) + body)
    head = b""
    while len(head) < 12:
        chunk = sock.recv(12 - len(head))
        check(chunk, "the server closed the connection during the handshake")
        head += chunk
    length, kind, _, ident = struct.unpack("<IHHI", head)
    rest = b""
    while len(rest) < length - 12:
        rest += sock.recv(length - 12 - len(rest))
    check(ident == 7, f"reply id {ident}")
    return kind


def connect_once(path):
    """Connect to pbusd at @path, complete the handshake, leave."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(path)
        check(hello(sock) == 2, "HELLO not answered with HELLO_REPLY")


class Env:
    """pbusd of the tree @build, the folder @tmp (sockets, state, logs) and
    the Instances @instances; every pbusd started here is killed at the end."""

    def __init__(self, build, tmp, instances, verbose=False):
        self.build = build.dir
        self.pbusd = build.pbusd
        self.verbose = verbose
        self.tmp = tmp
        self.instances = instances
        self.procs = []

    def instance(self):
        return self.instances.name("svctest")

    def start(self, instance, extra=(), env=None, pass_fds=(), shell_prefix=None, stderr=None):
        argv = [self.pbusd, "--schema", SCHEMA, "--instance", instance,
                "--state-dir", os.path.join(self.tmp, "state"), "--socket-dir", self.tmp] + list(extra)
        if shell_prefix:
            # LISTEN_PID must be pbusd's own pid: let a shell export its $$
            # and exec pbusd in its place. bash: dash takes one-digit
            # descriptors only in a redirection, and the listener's may be
            # above 9 (under pytest it is).
            argv = ["bash", "-c", shell_prefix + ' exec "$@"', "bash"] + argv
        proc = subprocess.Popen(argv, env=env, pass_fds=pass_fds, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr or subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.fixture(scope="module")
def env(pbus_build, pbus_tmp, pbus_instances, pbus_verbose):
    pbus_build.require(pbus_build.pbusd)
    env = Env(pbus_build, pbus_tmp, pbus_instances, pbus_verbose)
    yield env
    env.cleanup()


def test_notify_socket_readiness(env):
    path = os.path.join(env.tmp, "notify")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    listener.settimeout(TIMEOUT)
    instance = env.instance()
    proc = env.start(instance, env=dict(os.environ, NOTIFY_SOCKET=path))
    try:
        message = listener.recv(64)
    except socket.timeout:
        raise Failure("no READY=1 on $NOTIFY_SOCKET")
    check(message == b"READY=1", f"$NOTIFY_SOCKET got {message!r}")
    # Ready means ready: the table and the socket exist already.
    check(os.path.exists(f"/dev/shm/pbus.{instance}"), "READY=1 before the table exists")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(os.path.join(env.tmp, f"{instance}.sock"))
        check(hello(s) == 2, "no HELLO_REPLY")
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(TIMEOUT) == 0, "pbusd did not exit 0 on SIGTERM")
    check(not os.path.exists(os.path.join(env.tmp, f"{instance}.sock")), "socket left behind")
    check(not os.path.exists(f"/dev/shm/pbus.{instance}"), "segment left behind")


def test_socket_activation(env):
    instance = env.instance()
    path = os.path.join(env.tmp, f"activated-{instance}.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    # A client connects before pbusd runs, as with pbusd@.socket: it waits
    # in the backlog instead of failing.
    early = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    early.connect(path)
    fd = listener.fileno()
    # The socket goes to fd 3 in pbusd, where systemd puts the first one.
    move = "" if fd == 3 else f"exec 3<&{fd} {fd}<&-;"
    proc = env.start(instance, pass_fds=(fd,),
                     shell_prefix=move + " LISTEN_PID=$$ LISTEN_FDS=1; export LISTEN_PID LISTEN_FDS;")
    listener.close()
    early.settimeout(TIMEOUT)
    check(hello(early) == 2, "the early client got no HELLO_REPLY")
    # It served the socket it was given, and made none of its own.
    check(not os.path.exists(os.path.join(env.tmp, f"{instance}.sock")), "pbusd made its own socket too")
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(TIMEOUT) == 0, "pbusd did not exit 0")
    # systemd owns an activated socket: pbusd must leave it in place.
    check(os.path.exists(path), "pbusd removed the socket systemd passed it")
    early.close()


def test_journal_priorities(env):
    instance = env.instance()
    log_path = os.path.join(env.tmp, f"journal-{instance}.log")
    with open(log_path, "wb") as log:
        st = os.fstat(log.fileno())
        e = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
        proc = env.start(instance, extra=["--log-level", "debug"], env=e, stderr=log)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and "serving instance" not in open(log_path).read():
            time.sleep(0.02)
        connect_once(os.path.join(env.tmp, instance + ".sock"))  # a debug line
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT)
    lines = open(log_path).read().splitlines()
    check(lines, "nothing logged")
    for line in lines:
        check(line[:3] in ("<3>", "<4>", "<6>", "<7>"), f"line without a syslog priority: {line!r}")
    check(any(line.startswith("<6>info: serving instance") for line in lines), f"{lines}")
    # Not the journal (a file whose inode differs): the plain format.
    plain = os.path.join(env.tmp, f"plain-{instance}.log")
    with open(plain, "wb") as log:
        e = dict(os.environ, JOURNAL_STREAM="1:1")
        proc = env.start(env.instance(), env=e, stderr=log)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and "serving instance" not in open(plain).read():
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT)
    text = open(plain).read()
    check(text.startswith("pbusd["), f"plain log: {text[:200]!r}")
    check(any(line.startswith("<7>debug: ") for line in lines), f"--log-level debug logged no debug line: {lines}")
    check("debug: " not in text, f"the default level (info) logged debug lines: {text[:400]!r}")
    # --log-level warning: the same start, client and stop log none of
    # their info and debug lines.
    quiet = os.path.join(env.tmp, f"quiet-{instance}.log")
    with open(quiet, "wb") as log:
        e = dict(os.environ, JOURNAL_STREAM="1:1")
        name = env.instance()
        proc = env.start(name, extra=["--log-level", "warning"], env=e, stderr=log)
        path = os.path.join(env.tmp, name + ".sock")
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not os.path.exists(path):
            time.sleep(0.02)
        check(os.path.exists(path), f"pbusd --log-level warning made no socket: {open(quiet).read()[-300:]!r}")
        connect_once(path)
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT)
    text = open(quiet).read()
    check("info: " not in text and "debug: " not in text,
          f"--log-level warning logged info or debug lines: {text[:400]!r}")


def test_unit_files_verify(env):
    units = [os.path.join(env.build, "systemd", u) for u in ("pbusd@.service", "pbusd@.socket")]
    for u in units:
        check(os.path.exists(u), f"{u} not generated by the build")
    if not shutil.which("systemd-analyze"):
        raise Failure("systemd-analyze is not installed (package systemd)")
    # Verify as installed: ExecStart must name an existing pbusd, so point
    # a copy at the build's.
    work = os.path.join(env.tmp, "units")
    os.makedirs(work, exist_ok=True)
    copies = []
    for u in units:
        text = open(u).read()
        text = "\n".join(line if not line.startswith("ExecStart=") else
                         "ExecStart=" + env.pbusd + " " + line.split(" ", 1)[1] for line in text.splitlines())
        name = os.path.basename(u).replace("@.", "@psu.")
        with open(os.path.join(work, name), "w") as f:
            f.write(text.replace("pbusd@%i.service", "pbusd@psu.service") + "\n")
        copies.append(os.path.join(work, name))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + copies, capture_output=True,
                       text=True, cwd=work, timeout=60)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          f"systemd-analyze verify: rc {r.returncode}: {r.stdout}{r.stderr}")


