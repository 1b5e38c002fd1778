"""cli.py: the `pbus` command line run against an instance, as the suites
check it: a Context (pbus, pbusd, a folder, the daemons it started) and the
helpers around one run (Result, one_line_error, LineReader, finish)."""
import json
import os
import re
import select
import subprocess
import time

from .check import TIMEOUT, Failure, check
from .daemon import CLI_SCHEMA, Daemon
from .protocol import fnv1a64

SCHEMA = CLI_SCHEMA


class Result:
    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err

    def __repr__(self):
        return f"{' '.join(self.argv[1:])!r}: rc={self.rc} out={self.out[:300]!r} err={self.err[:300]!r}"


class Context:
    """pbus and pbusd of the tree @build, the folder @tmp (logs, state), the
    Daemons list @daemons (every pbusd started here, stopped at the end) and
    the Instances @instances (names unique to this run). .instance is the
    instance `run` addresses by default; .daemon the pbusd serving it, if a
    suite starts one."""

    INSTANCE_PREFIX = "clitest"

    def __init__(self, build, tmp, daemons, instances, verbose=False):
        self.build = build.dir
        self.pbus = build.pbus
        self.pbusd = build.pbusd
        self.verbose = verbose
        self.tmp = tmp
        self.state_dir = os.path.join(self.tmp, "state")
        os.makedirs(self.state_dir, exist_ok=True)
        self.daemons = daemons
        self.instances = instances
        self.instance = self.new_instance_name()
        self.daemon = None

    def new_instance_name(self):
        return self.instances.name(self.INSTANCE_PREFIX)

    def env(self, instance=True):
        env = dict(os.environ)
        env.pop("PBUS_INSTANCE", None)
        if instance is True:
            env["PBUS_INSTANCE"] = self.instance
        elif instance:
            env["PBUS_INSTANCE"] = instance
        return env

    def run(self, *args, instance=True, input=None):
        argv = [self.pbus] + list(args)
        p = subprocess.run(argv, env=self.env(instance), input=input, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        r = Result(argv, p.returncode, p.stdout.decode("utf-8", "replace"),
                   p.stderr.decode("utf-8", "replace"))
        if self.verbose:
            print(f"    {r!r}", flush=True)
        return r

    def ok(self, *args, **kw):
        r = self.run(*args, **kw)
        check(r.rc == 0, f"expected success: {r!r}")
        check(r.err == "", f"unexpected stderr: {r!r}")
        return r

    def get(self, name):
        return self.ok("get", name).out.rstrip("\n")

    def dump(self):
        r = self.ok("dump", "--json")
        try:
            return json.loads(r.out)
        except ValueError as e:
            raise Failure(f"dump --json is not valid JSON ({e}): {r.out[:2000]}")

    def snapshot(self):
        """Every parameter's value, status, timestamp and version."""
        return {p["name"]: (p["value"], p["status"], p["timestamp_ns"], p["seq"])
                for p in self.dump()["parameters"]}

    def start_daemon(self, instance=None, state_dir=None, schema=SCHEMA, extra=()):
        return Daemon(self, instance or self.instance, state_dir or self.state_dir,
                      schema, extra).start()

    def cleanup(self):
        self.daemons.stop_all()


def one_line_error(r, rc, pattern=None):
    """A refusal: exit status @rc, nothing on stdout, exactly one line on
    stderr that starts with "pbus: " (and matches @pattern)."""
    check(r.rc == rc, f"expected exit status {rc}: {r!r}")
    check(r.out == "", f"expected no stdout: {r!r}")
    check(r.err.endswith("\n") and r.err.count("\n") == 1, f"expected one line on stderr: {r!r}")
    check(r.err.startswith("pbus: "), f"expected 'pbus: ' first: {r!r}")
    if pattern is not None:
        check(re.fullmatch(pattern, r.err.rstrip("\n")), f"stderr does not match {pattern!r}: {r!r}")


class LineReader:
    """Lines from a pipe, with a deadline per line."""

    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def line(self, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise Failure(f"no line within {timeout} s (have {self.buf!r})")
            chunk = os.read(self.fd, 4096)
            if not chunk:
                raise Failure(f"end of output (have {self.buf!r})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")


def start_watch(ctx, *args):
    return subprocess.Popen([ctx.pbus, "watch"] + list(args), env=ctx.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc, timeout=TIMEOUT):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Failure(f"did not exit within {timeout} s")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def schema_hash(path):
    """docs/schema-format.md, "The schema hash": every record line with its LF."""
    h = b""
    with open(path, "rb") as f:
        for line in f:
            if line.strip(b"\n") and not line.startswith(b"#"):
                h += line
    return fnv1a64(h)
