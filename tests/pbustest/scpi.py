"""scpi.py: pbus-scpi as the SCPI suites start it (tests/scpi-daemon,
tests/scpi-visa, tests/scpi-hislip), in front of a real pbusd serving the demo PSU.

ScpiDaemon starts pbus-scpi on a port the kernel picks (--listen
127.0.0.1:0, and --hislip 127.0.0.1:0 when asked) and returns once it is
ready: the ports and readiness come through --notify-fd
("PORT=N\nHISLIP_PORT=N\nREADY=1\n"), never from a sleep. stop() sends
SIGTERM and returns the exit status (0 after a clean shutdown).
start_psu() starts pbusd on the demo's psu.pbs for an instance, and
pbus-scpi in front of it, as the user given (None: the tests' own).
method_server() runs a method server (the demo simulator, a test's own)
beside them; wait_for_methods() waits until pbus-scpi's proxy has found it;
slow_instrument() is pbusd and pbus-test-slow-server for
tests/scpi-daemon/slow.fdepl, whose methods take the time they are told to.
"""
import contextlib
import os
import select
import subprocess
import time

from . import secutil
from .check import TIMEOUT, Failure, check
from .daemon import spawn_notified, stop_process



class ScpiDaemon:
    """One pbus-scpi serving @instance's pbusd (its socket in @sock_dir)."""

    def __init__(self, build, instance, sock_dir, log_path, extra=(), user=None, tmp=None,
                 tree=None, hislip=False):
        """@extra: more options (--max-clients ...); @user: run it as this
        unprivileged user (from copies it can reach, made in @tmp); @tree:
        its command tree (default: the demo's psu.scpi); @hislip: serve
        HiSLIP too (.hislip_port)."""
        self.program = build.path("daemon", "pbus-scpi")
        self.tree = tree or build.path("examples", "psu", "psu.scpi")
        build.require(self.program)
        self.instance, self.sock_dir, self.log_path = instance, sock_dir, log_path
        self.extra, self.user, self.tmp = list(extra), user, tmp
        self.hislip = hislip
        self.proc = None
        self.port = self.hislip_port = None

    def start(self):
        program, tree = self.program, self.tree
        if self.user:
            program, tree = secutil.reachable(self.tmp, program, tree)
        argv = [program, "--instance", self.instance, "--tree", tree, "--socket-dir", self.sock_dir,
                "--listen", "127.0.0.1:0", "--hislip", "127.0.0.1:0" if self.hislip else "off"] + self.extra
        popen = (lambda a, **kw: secutil.popen_as(self.user, a, **kw)) if self.user else subprocess.Popen
        self.proc, fields = spawn_notified(argv, self.log_path, popen)
        if fields is None:
            self.stop()
            raise Failure(f"pbus-scpi not ready: {self.log()}")
        self.port = int(fields["PORT"])
        if self.hislip:
            self.hislip_port = int(fields["HISLIP_PORT"])
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-1000:]
        except OSError:
            return ""

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM; the exit status (SIGKILL after TIMEOUT s: not 0)."""
        if self.proc is None:
            return None
        return stop_process(self.proc)


def start_psu(build, daemons, instance, tmp, extra=(), user=None):
    """pbusd on the demo's psu.pbs for @instance (registered with @daemons,
    stopped with them), then pbus-scpi in front of it: the ScpiDaemon,
    ready, with the pbusd Daemon as .pbusd. The caller stops it."""
    pbusd = daemons.start(instance.name, instance.state_dir, schema=build.psu_schema,
                          extra=["--socket-dir", instance.sock_dir])
    log_path = os.path.join(tmp, f"pbus-scpi-{instance.name}.log")
    server = ScpiDaemon(build, instance.name, instance.sock_dir, log_path, extra, user, tmp).start()
    server.pbusd = pbusd
    return server


def pbus_tool(build, instance, *args):
    """`pbus -i INSTANCE ARGS...` against @instance's pbusd: its stdout;
    Failure if it exits non-zero."""
    r = subprocess.run([build.pbus, "-i", instance.name] + list(args), capture_output=True, text=True,
                       timeout=TIMEOUT, env=dict(os.environ, PBUS_SOCKET_DIR=instance.sock_dir))
    if r.returncode != 0:
        raise Failure(f"pbus {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def pbus_get(build, instance, name):
    """The value of parameter @name as `pbus get` prints it: what is in the
    table, read without SCPI."""
    return pbus_tool(build, instance, "get", name).strip()


@contextlib.contextmanager
def method_server(args, sock_dir, log_path, ready_line=None):
    """A method server process (its socket folder in PBUS_SOCKET_DIR); with
    @ready_line, wait for it on its stdout."""
    log = open(log_path, "ab")
    env = dict(os.environ, PBUS_SOCKET_DIR=sock_dir)
    proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if ready_line else log, stderr=log)
    log.close()
    try:
        if ready_line:
            check(select.select([proc.stdout], [], [], TIMEOUT)[0] and
                  proc.stdout.readline() == ready_line, f"{args[0]} did not start")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def wait_for_methods(c, probe):
    """Until the method server is there for pbus-scpi: @probe (a harmless set
    method) stops queueing -241."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        c.write(probe)
        e = c.query("SYST:ERR?")
        if e.startswith("0,"):
            return
        check(e.startswith("-241,"), f"probe: {e}")
        if time.monotonic() > deadline:
            raise Failure("the method server never became available to pbus-scpi")
        time.sleep(0.05)


@contextlib.contextmanager
def slow_instrument(build, daemons, instance, tmp, with_server=True):
    """pbusd on tests/scpi-daemon/slow.fdepl's schema for @instance
    (registered with @daemons) and, if @with_server, pbus-test-slow-server
    serving its methods; yields the path of its SCPI tree (slow.scpi)."""
    server = build.path("tests", "pbus-test-slow-server")
    build.require(server)
    daemons.start(instance.name, instance.state_dir, schema=build.path("tests", "slow.pbs"),
                  extra=["--socket-dir", instance.sock_dir])
    tree = build.path("tests", "slow.scpi")
    if not with_server:
        yield tree
        return
    with method_server([server, instance.name, instance.sock_dir], instance.sock_dir,
                       os.path.join(tmp, "slow-server.log"), b"ready\n"):
        yield tree
