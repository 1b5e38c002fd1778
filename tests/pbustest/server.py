"""server.py: pbusd's socket server as the socket suites (tests/server/,
tests/security/) check it: a ServerContext (the CLI Context plus a socket
folder and the fixture's schema, and connections through protocol.py), and
the frame-level helpers: a reply or an ERROR expected, a close expected,
notifications drained, a witness that must survive a hostile client.

Conditions are polled with deadlines, never waited for with a fixed sleep.
"""
import json
import os
import time

from . import protocol as P
from .check import Failure, check
from .cli import Context
from .daemon import TESTS_DIR, Daemon

FIXTURE = os.path.join(TESTS_DIR, "server", "fixtures", "server.pbs")
WAIT = 5.0  # seconds for any one frame or condition


# --- The context ----------------------------------------------------------------

class ServerContext(Context):
    """The CLI Context (pbus, a folder, daemons stopped at the end) plus the
    socket folder and the fixture's schema. @notes: a list that collects
    what the specification leaves open, as seen."""

    INSTANCE_PREFIX = "srvtest"

    def __init__(self, build, tmp, daemons, instances, fixture=FIXTURE, verbose=False, notes=None):
        super().__init__(build, tmp, daemons, instances, verbose)
        os.chmod(self.tmp, 0o755)          # the unprivileged user reaches the socket
        self.sock_dir = os.path.join(self.tmp, "sock")
        self.fixture = fixture
        with open(fixture, encoding="utf-8") as f:
            self.schema_text = f.read()
        self.schema = P.Schema(self.schema_text)
        self.notes = notes if notes is not None else []

    def start_server(self, instance=None, extra=(), sock_dir=None):
        d = Daemon(self, instance or self.new_instance_name(), self.state_dir, self.fixture,
                   ["--socket-dir", sock_dir or self.sock_dir] + list(extra))
        d.sock_dir = sock_dir or self.sock_dir
        return d.start()

    def serving(self):
        """The suite's pbusd (.daemon), started if it is not running (the
        first time, or after a test it did not survive)."""
        if self.daemon is None or self.daemon.proc.poll() is not None:
            try:
                self.daemon = self.start_server()
            except Failure as e:
                raise Failure(f"pbusd did not start: {e}")
        return self.daemon

    def check_alive(self):
        """After a test: the suite's pbusd still runs."""
        d = self.daemon
        check(d is None or d.proc.poll() is None,
              f"pbusd exited ({d.proc.returncode if d else None}) during the test: {d.log()[-1500:] if d else ''}")

    def path(self, daemon=None):
        d = daemon or self.daemon
        return os.path.join(d.sock_dir, d.instance + ".sock")

    def connect(self, daemon=None, hello=True, name="conformance"):
        c = P.Connection(self.path(daemon), timeout=WAIT)
        if hello:
            try:
                c.hello(name)
            except Exception:
                c.close()
                raise
        return c

    def get_value(self, name):
        return self.ok("get", name, instance=self.daemon.instance).out.rstrip("\n")

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
        if self.verbose:
            print(f"    note: {text}", flush=True)

    def log(self, text):
        if self.verbose:
            print(f"    {text}", flush=True)

    # Values through the schema.
    def w(self, name, value):
        """A write (index, bytes) of @value to parameter @name."""
        p = self.schema[name]
        return p.index, P.encode_value(p.type, value, p.enum)

    def value(self, rec):
        p = self.schema[rec["index"]]
        return P.decode_value(p.type, rec["value"], p.enum)

    def segment_set(self, *assignments, instance=None):
        """Write through the segment with the pbus command line (its
        `--direct` if it has one: then plain `set` may use the socket)."""
        if not hasattr(self, "_direct"):
            self._direct = "--direct" in self.run("set", "--help", instance=False).out
        args = ["set", "--direct"] if self._direct else ["set"]
        return self.ok(*args, *assignments, instance=instance or self.daemon.instance)


# --- Frames ---------------------------------------------------------------------

def read_frame(conn, what, timeout=WAIT):
    try:
        return conn.recv_frame(timeout)
    except TimeoutError:
        raise Failure(f"{what}: no frame within {timeout} s")
    except P.Closed as e:
        raise Failure(f"{what}: the server closed the connection ({e})")
    except P.ProtocolError as e:
        raise Failure(f"{what}: malformed frame from the server: {e}")


def expect_reply(conn, id_, type_, what):
    """The next frame other than a notification: @type_ with id @id_."""
    while True:
        f = read_frame(conn, what)
        if f.type == P.NOTIFY and f.id == 0:
            conn.notifications.append(decode(f, what))
            continue
        if f.type == P.SERVICE and f.id == 0:
            conn.service_events.append(decode(f, what))
            continue
        break
    if f.type == P.ERROR:
        e = decode(f, what)
        raise Failure(f"{what}: ERROR {P.errname(e['code'])} ({e['message']!r}), expected {P.typename(type_)}")
    check(f.type == type_, f"{what}: got {f!r}, expected {P.typename(type_)}")
    check(f.id == id_, f"{what}: reply id {f.id}, expected {id_}")
    return decode(f, what)


def decode(frame, what):
    try:
        return frame.decode()
    except P.ProtocolError as e:
        raise Failure(f"{what}: malformed {P.typename(frame.type)} body from the server: {e}")


def expect_error(conn, code, what, id_=None, closes=False):
    """The next frame (not a notification) is ERROR @code (with id @id_ if
    given); with @closes the server then closes the connection."""
    while True:
        f = read_frame(conn, what)
        if f.type == P.SERVICE and f.id == 0:
            conn.service_events.append(decode(f, what))
            continue
        if not (f.type == P.NOTIFY and f.id == 0):
            break
    check(f.type == P.ERROR, f"{what}: got {f!r}, expected ERROR {P.errname(code)}")
    e = decode(f, what)
    check(e["code"] == code, f"{what}: ERROR {P.errname(e['code'])} ({e['message']!r}), "
                             f"expected {P.errname(code)}")
    check(e["message"] and "\n" not in e["message"], f"{what}: ERROR message {e['message']!r} is not one line")
    if id_ is not None:
        check(f.id == id_, f"{what}: ERROR id {f.id}, expected the request's {id_}")
    if closes:
        expect_closed(conn, what)
    return e["message"], f.id


def expect_closed(conn, what):
    try:
        rest = conn.wait_closed(WAIT)
    except TimeoutError:
        raise Failure(f"{what}: the server did not close the connection within {WAIT} s")
    except P.ProtocolError as e:
        raise Failure(f"{what}: malformed frame from the server before the close: {e}")
    check(not rest, f"{what}: frames after the ERROR: {rest}")


def send_raw(conn, data):
    try:
        conn.send_bytes(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may close before reading all of it


def request_error(conn, type_, fields, code, what, closes=False):
    id_ = conn.send(type_, fields)
    return expect_error(conn, code, what, id_, closes)[0]


def wait_until(what, predicate, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Failure(f"timed out ({timeout} s) waiting for {what}")
        time.sleep(0.01)


def stats(conn):
    text = conn.stats()
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Failure(f"STATS is not JSON ({e}): {text[:500]!r}")
    check(isinstance(doc, dict), f"STATS is not a JSON object: {text[:300]!r}")
    return doc


class Witness:
    """A connection made before a hostile client acts; afterwards it must
    still work, and pbusd must still be running and accepting."""

    def __init__(self, ctx, daemon=None):
        self.ctx, self.daemon = ctx, daemon or ctx.daemon
        self.conn = ctx.connect(self.daemon, name="witness")

    def check(self, what):
        check(self.daemon.proc.poll() is None, f"{what}: pbusd exited ({self.daemon.proc.returncode}): "
                                              f"{self.daemon.log()[-800:]}")
        try:
            check(self.conn.ping(b"still there") == b"still there", f"{what}: the witness's PONG differs")
            self.conn.get([3])
        except (P.Closed, TimeoutError, P.ServerError, P.ProtocolError, OSError) as e:
            raise Failure(f"{what}: the other, already connected client stopped working: {e}")
        with self.ctx.connect(self.daemon, name="newcomer") as c:
            c.ping(b"x")

    def close(self):
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def hostile(ctx, data, code, what, hello=True, witness=None, id_=None):
    """Send @data on a fresh connection: ERROR @code, the connection
    closed, everybody else fine."""
    own = witness is None
    w = witness or Witness(ctx)
    try:
        with ctx.connect(hello=hello, name="hostile") as c:
            send_raw(c, data)
            msg, got_id = expect_error(c, code, what, id_, closes=True)
            ctx.log(f"{what}: ERROR {P.errname(code)} id={got_id} {msg!r}")
        w.check(what)
    finally:
        if own:
            w.close()


def snapshot(ctx, conn):
    """Every readable parameter's record, through the socket."""
    idx = [p.index for p in ctx.schema.params if "noread" not in p.flags]
    return {v["index"]: (v["value"], v["status"], v["seq"], v["timestamp_ns"]) for v in conn.get(idx)}


def drain_notifies(conn, until, what, timeout=WAIT):
    """NOTIFYs until @until(list so far) is true."""
    got = []
    deadline = time.monotonic() + timeout
    while not until(got):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure(f"{what}: timed out; NOTIFYs so far: {summarize(got)}")
        if conn.notifications:
            got.append(conn.notifications.pop(0))
            continue
        f = read_frame(conn, what, left)
        check(f.type == P.NOTIFY and f.id == 0, f"{what}: unexpected {f!r}")
        got.append(decode(f, what))
    return got


def summarize(notifies, limit=8):
    out = []
    for n in notifies[:limit]:
        out.append(f"sub {n['subscription']}: " + ", ".join(
            f"[{v['index']}] seq {v['seq']} {v['value'].hex()} st {v['status']}" for v in n["values"]))
    if len(notifies) > limit:
        out.append(f"... {len(notifies) - limit} more")
    return "; ".join(out) or "none"


def has(notifies, sub, index, pred=lambda v: True):
    return any(n["subscription"] == sub and any(v["index"] == index and pred(v) for v in n["values"])
               for n in notifies)


