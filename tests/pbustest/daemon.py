"""daemon.py: pbusd as the suites start it, and the instances it serves.

Daemon starts one pbusd and returns once it is ready: readiness comes
through --notify-fd ("READY=1\n"), never from a sleep. Every Daemon is
registered with a Daemons list, which stops them all at the end of a suite
whatever happened (SIGTERM, then SIGKILL). Instances hands out instance
names unique to a run (they hold the pid) with folders for their state and
socket, and removes at the end what a killed pbusd (or an attacker) left in
/dev/shm under those names.
"""
import glob
import os
import select
import signal
import subprocess
import time

from .check import TIMEOUT, Failure, check

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI_SCHEMA = os.path.join(TESTS_DIR, "cli", "fixtures", "test.pbs")  # every type of parameter


def stop_process(proc, sig=signal.SIGTERM):
    """@sig to the daemon @proc (a Popen) unless it has exited, then wait
    for it; SIGKILL after TIMEOUT s. Its exit status (-9 if killed)."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def stopped(pid):
    """Whether every thread of @pid is stopped (kill(SIGSTOP) returns before
    they are)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
        states = []
        for t in tids:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                st = f.read()
            states.append(st[st.rindex(")") + 2])
    except OSError:
        return False
    return bool(states) and all(s == "T" for s in states)


def read_notify(r, timeout=TIMEOUT):
    """What a daemon wrote to the pipe end @r of its --notify-fd until
    READY=1, EOF or @timeout seconds; closes @r."""
    data, deadline = b"", time.monotonic() + timeout
    try:
        while b"READY=1\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                break
            chunk = os.read(r, 64)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
    return data


def spawn_notified(argv, log_path, popen=subprocess.Popen, **kw):
    """Starts @argv (a daemon of parambus's other than pbusd, which Daemon
    checks more strictly) with "--notify-fd FD" appended, its output
    appended to @log_path, by @popen (subprocess.Popen, or one that starts
    it as another user) with @kw. Returns (proc, fields): the KEY=VALUE
    lines it wrote to FD as a dict, or None if READY=1 did not come within
    TIMEOUT (the process is left running for the caller to stop)."""
    r, w = os.pipe()
    log = open(log_path, "ab")
    try:
        proc = popen(list(argv) + ["--notify-fd", str(w)], pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=log,
                     stderr=log, **kw)
    finally:
        os.close(w)
        log.close()
    data = read_notify(r)
    if b"READY=1\n" not in data:
        return proc, None
    return proc, dict(line.split("=", 1) for line in data.decode().split("\n") if "=" in line)


class Daemon:
    """One pbusd serving a schema; started ready, stopped for sure."""

    def __init__(self, ctx, instance, state_dir, schema=CLI_SCHEMA, extra=(), popen=None, pbusd=None):
        """@ctx: where pbusd is (.pbusd), its log goes (.tmp) and it is
        registered (.daemons): a Context or a Daemons list;
        @popen: more arguments for subprocess.Popen (user, env, preexec_fn);
        @pbusd: another copy of the daemon (one another user can reach)."""
        self.ctx, self.instance, self.state_dir = ctx, instance, state_dir
        self.pbusd = pbusd or ctx.pbusd
        self.schema, self.extra = schema, list(extra)
        self.popen = dict(popen or {})
        self.proc = None
        self.log_path = os.path.join(ctx.tmp, f"pbusd-{instance}-{len(ctx.daemons)}.log")

    def start(self):
        r, w = os.pipe()
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [self.pbusd, "--schema", self.schema, "--instance", self.instance,
                 "--state-dir", self.state_dir, "--notify-fd", str(w)] + self.extra,
                pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=log, stderr=log, **self.popen)
        finally:
            os.close(w)
            log.close()
        self.ctx.daemons.append(self)
        data = b""
        deadline = time.monotonic() + TIMEOUT
        try:
            while b"\n" not in data:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([r], [], [], left)[0]:
                    raise Failure(f"pbusd not ready within {TIMEOUT} s: {self.log()}")
                chunk = os.read(r, 64)
                if not chunk:
                    raise Failure(f"pbusd closed --notify-fd without READY: {self.log()}")
                data += chunk
            check(data == b"READY=1\n", f"pbusd wrote {data!r} to --notify-fd")
            # pbusd closes it right after READY (and no child of it holds
            # it): wait for that, so that a test counting pbusd's
            # descriptors does not count one that is about to go.
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([r], [], [], left)[0]:
                    raise Failure(f"pbusd did not close --notify-fd after READY within {TIMEOUT} s")
                chunk = os.read(r, 64)
                if not chunk:
                    break
                raise Failure(f"pbusd wrote {data + chunk!r} to --notify-fd")
        finally:
            os.close(r)
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    @property
    def pid(self):
        return self.proc.pid

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.proc, sig) if self.proc else None


class Daemons(list):
    """Every pbusd a suite started, with what a Daemon needs to start: the
    program (.pbusd) and the folder for the logs (.tmp)."""

    def __init__(self, pbusd, tmp):
        super().__init__()
        self.pbusd, self.tmp = pbusd, tmp

    @property
    def daemons(self):
        return self

    def start(self, instance, state_dir, schema=CLI_SCHEMA, extra=(), popen=None, pbusd=None):
        return Daemon(self, instance, state_dir, schema, extra, popen, pbusd).start()

    def stop_all(self):
        # SIGTERM: a clean shutdown removes the segment (stop() falls back
        # to SIGKILL if pbusd does not exit).
        for d in self:
            try:
                d.stop()
            except Exception:
                pass

    def sanitizer_reports(self):
        """The lines of every log that a sanitizer wrote."""
        reports = []
        for d in self:
            try:
                with open(d.log_path, errors="replace") as f:
                    reports += [line for line in f if "Sanitizer" in line or "runtime error:" in line]
            except OSError:
                pass
        return reports


class Instance:
    """An instance name of this run, and its own folders."""

    def __init__(self, name, state_dir, sock_dir):
        self.name, self.state_dir, self.sock_dir = name, state_dir, sock_dir

    def __repr__(self):
        return f"Instance({self.name!r})"


class Instances:
    """Instance names unique to this run (PREFIX-PID-N), made under @tmp."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.serial = 0
        self.names = []

    def name(self, prefix="pbustest"):
        self.serial += 1
        name = f"{prefix}-{os.getpid()}-{self.serial}"
        self.names.append(name)
        return name

    def new(self, prefix="pbustest"):
        """A fresh name with an empty state folder and socket folder (mode
        0755: a test user reaches the socket)."""
        name = self.name(prefix)
        top = os.path.join(self.tmp, name)
        state_dir, sock_dir = os.path.join(top, "state"), os.path.join(top, "sock")
        for d in (top, state_dir, sock_dir):
            os.mkdir(d)
            os.chmod(d, 0o755)
        return Instance(name, state_dir, sock_dir)

    def cleanup(self):
        """Remove what is left in /dev/shm under the names of this run."""
        for name in self.names:
            for path in glob.glob(f"/dev/shm/pbus.{glob.escape(name)}") + \
                    glob.glob(f"/dev/shm/pbus.{glob.escape(name)}.*"):
                try:
                    os.unlink(path)
                except OSError:
                    pass
