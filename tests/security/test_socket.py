"""test_socket.py: a local user attacks pbusd's socket, and fails.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/security/test_socket.py \
        --pbus-build build/dev

The attacks of the security issue "No local user can stall, crash, hide or
spoof an instrument" that go through pbusd's socket, each run for real:
the attacker is the unprivileged user pbus-test (pbustest/secutil.py creates it, and
a second one, pbus-test-owner, for an instrument that does not run as root
or a second tenant), the victim root or the instrument's owner.

- Fake socket directory: a directory made in advance where pbusd will put
  its socket (or pointed at with --socket-dir), and a socket of the
  attacker's where a client looks for pbusd's: pbusd refuses a directory
  that others can write (docs/socket-protocol.md §1), and the client
  refuses a server that is not a trusted owner before it sends a byte.
- A stuck writer: a writer stopped while it holds a parameter (hold-param)
  must not stop the server: a SET that needs the parameter waits alone, for
  at most a second, and fails whole with EBUSY (§3.3).
- Hoarded connections: one user holding connections locks out neither
  other users nor root (--max-clients-per-user, --reserved-clients, §4).
- Out of descriptors: pbusd neither spins nor floods its log when accept4()
  fails for want of descriptors, and serves again when some are free.

--pbus-build holds daemon/pbusd, tools/pbus and tests/security/hold-param.
Each test prints `PASS: security/<name>` or `FAIL: security/<name>: reason`
(tests/conftest.py). Runs as root (it switches users). pbusd serves tests/server/fixtures/security.pbs
under instance names unique to this run, with sockets and state in a
temporary folder; every process started here is stopped at the end.
"""
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import time

import pytest

from pbustest import protocol as P
from pbustest.attacker import hello
from pbustest.check import TIMEOUT, Failure, check
from pbustest.cli import Result, one_line_error
from pbustest.daemon import TESTS_DIR, Daemon
from pbustest.secutil import OWNER_USER, TEST_USER, as_user, popen_as, program, reachable, user_ids
from pbustest.server import ServerContext, expect_reply, stats, wait_until

SUITE = "security"
FIXTURE = os.path.join(TESTS_DIR, "server", "fixtures", "security.pbs")
WAIT = 5.0          # seconds for any one frame or condition
EBUSY = P.EBUSY     # docs/socket-protocol.md §5
BUSY_S = 1.0        # how long pbusd tries a SET whose parameter is held


class SecurityContext(ServerContext):
    """The ServerContext (pbus, a temporary folder and a socket folder,
    daemons stopped at the end, start_server/connect/path/w) with the
    security fixture, and clean-ups for what the attacks leave behind."""

    INSTANCE_PREFIX = "sectest"

    def __init__(self, build, tmp, daemons, instances, verbose=False):
        super().__init__(build, tmp, daemons, instances, FIXTURE, verbose)
        self.hold_param = build.hold_param
        self.cleanups = []
        self.procs = []

    def env(self, instance=True):
        env = super().env(instance)
        for k in ("XDG_RUNTIME_DIR", "PBUS_OWNER"):
            env.pop(k, None)
        env["PBUS_SOCKET_DIR"] = self.sock_dir
        return env

    def run_pbus(self, *args, instance, env=None):
        """Run pbus against @instance with these environment changes (a
        value None removes the variable)."""
        full = self.env(instance)
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = v
        argv = [self.pbus] + list(args)
        try:
            p = subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Failure(f"{' '.join(args)}: pbus did not finish within {TIMEOUT} s")
        r = Result(argv, p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))
        self.log(repr(r))
        return r

    def values(self, conn, *names):
        """{name: (value, seq)} through the socket."""
        recs = conn.get([self.schema.index(n) for n in names])
        return {n: (P.decode_value(self.schema[n].type, r["value"]), r["seq"]) for n, r in zip(names, recs)}

    def spawn(self, proc):
        self.procs.append(proc)
        return proc

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                    p.kill()
                    p.wait(timeout=TIMEOUT)
                except Exception:
                    pass
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception:
                pass
        super().cleanup()


# --- Helpers --------------------------------------------------------------------

def read_json_line(proc, what, timeout=WAIT):
    """The next line of @proc's stdout, as JSON."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise Failure(f"{what}: no line within {timeout} s (have {line!r})")
        c = os.read(proc.stdout.fileno(), 1)  # unbuffered: select() sees what is left
        if not c:
            raise Failure(f"{what}: the program ended (have {line!r}, status {proc.poll()})")
        line += c
    return json.loads(line)


def error_lines(log):
    return [l for l in log.splitlines() if ": error: " in l]


def owner_daemon(ctx, instance, state_dir, extra):
    """A pbusd to run as pbus-test-owner, from copies that user can reach."""
    pbusd, fixture = reachable(ctx.tmp, ctx.pbusd, FIXTURE)
    return Daemon(ctx, instance, state_dir, fixture, extra, owner_popen(), pbusd=pbusd)


def refused_start(ctx, instance, extra, popen, state_dir, what):
    """Start pbusd (as pbus-test-owner if @popen is owner_popen()), which
    must refuse: exit status 1, no READY. Its log."""
    if popen and "user" in popen:
        d = owner_daemon(ctx, instance, state_dir, extra)
    else:
        d = Daemon(ctx, instance, state_dir, FIXTURE, extra, popen)
    try:
        d.start()
    except Failure:
        pass
    else:
        d.stop()
        raise Failure(f"{what}: pbusd started and served ({d.log()[-600:]})")
    try:
        rc = d.proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure(f"{what}: pbusd neither served nor exited")
    check(rc == 1, f"{what}: pbusd exit status {rc}, expected 1: {d.log()[-600:]}")
    return d.log()


def owner_state_dir(ctx, name):
    """A state folder that pbus-test-owner may write."""
    uid, gid = user_ids(OWNER_USER)
    path = os.path.join(ctx.tmp, name)
    os.makedirs(path, exist_ok=True)
    os.chown(path, uid, gid)
    return path


def owner_env():
    """pbusd's environment as pbus-test-owner: nothing that picks its
    socket folder, so that the default /tmp/parambus-UID applies."""
    env = dict(os.environ)
    for k in ("PBUS_SOCKET_DIR", "XDG_RUNTIME_DIR", "PBUS_INSTANCE", "PBUS_OWNER"):
        env.pop(k, None)
    return env


def owner_popen():
    uid, gid = user_ids(OWNER_USER)
    return {"user": uid, "group": gid, "extra_groups": [], "env": owner_env()}


def remove_tree(path):
    if os.path.islink(path):
        os.unlink(path)
    elif os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


class Holder:
    """hold-param: a writer stopped while it holds a parameter."""

    def __init__(self, ctx, daemon, param):
        self.ctx = ctx
        if not os.access(ctx.hold_param, os.X_OK):
            raise Failure(f"{ctx.hold_param} not built")
        self.proc = ctx.spawn(subprocess.Popen([ctx.hold_param, daemon.instance, param],
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        try:
            line = b""
            deadline = time.monotonic() + WAIT
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                    raise Failure(f"hold-param: no 'held' ({line!r}, {self.proc.poll()})")
                c = os.read(self.proc.stdout.fileno(), 1)
                if not c:
                    raise Failure(f"hold-param ended: {self.proc.wait()} {self.proc.stderr.read()!r}")
                line += c
            check(line == b"held\n", f"hold-param said {line!r}")
            wait_until("hold-param stopped", lambda: proc_state(self.proc.pid) == "T")
        except BaseException:
            self.__exit__()
            raise

    def release(self):
        """SIGCONT: it lets go and exits 0."""
        self.proc.send_signal(signal.SIGCONT)
        try:
            rc = self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            raise Failure("hold-param did not exit after SIGCONT")
        check(rc == 0, f"hold-param exit status {rc}: {self.proc.stderr.read()!r}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            try:
                self.proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_seconds(pid):
    """utime + stime of process @pid (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- The tests ------------------------------------------------------------------

@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose, pbus_user, pbus_owner_user):
    """The module's SecurityContext, once both test users exist (they run
    as root: pbus_user fails otherwise)."""
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd, pbus_build.hold_param)
    ctx = SecurityContext(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose)
    yield ctx
    ctx.cleanup()


@pytest.fixture
def server(ctx):
    """The module's pbusd (ctx.daemon), started again if a test ended it."""
    return ctx.serving()


needs_server = pytest.mark.usefixtures("server")


# Attack 6: a fake socket directory, a fake server.

def test_socket_dir_refused(ctx):
    """pbusd refuses a socket folder that another user made or can write,
    whether it found it (the default /tmp/parambus-UID, made in advance by
    the attacker) or was pointed at it (--socket-dir); and a symbolic link.
    One line in the log names the folder, its owner and its mode."""
    attacker, _ = user_ids(TEST_USER)
    owner, owner_gid = user_ids(OWNER_USER)
    default_dir = f"/tmp/parambus-{owner}"
    ctx.cleanups.append(lambda: remove_tree(default_dir))
    state = owner_state_dir(ctx, "state-owner")
    remove_tree(default_dir)

    def mkdir_0777():
        os.mkdir(default_dir)
        os.chmod(default_dir, 0o777)
        return True

    cases = []
    # The default folder, made by the attacker before pbusd first ran.
    as_user(attacker, user_ids(TEST_USER)[1], [], mkdir_0777)
    cases.append(("/tmp/parambus-UID made by pbus-test, mode 0777", [], default_dir, attacker, "0777"))
    # A sticky world-writable folder is no better: a missing socket can be bound by anybody.
    sticky = os.path.join(ctx.tmp, "sticky")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    cases.append(("--socket-dir root's, mode 1777", ["--socket-dir", sticky], sticky, 0, "1777"))
    # A folder of the attacker's, however it is mode'd.
    theirs = os.path.join(ctx.tmp, "theirs")
    os.mkdir(theirs)
    os.chmod(theirs, 0o755)
    os.chown(theirs, attacker, user_ids(TEST_USER)[1])
    cases.append(("--socket-dir pbus-test's, mode 0755", ["--socket-dir", theirs], theirs, attacker, "0755"))
    # The owner's own, but its group may write it.
    group_writable = os.path.join(ctx.tmp, "group-writable")
    os.mkdir(group_writable)
    os.chmod(group_writable, 0o775)
    os.chown(group_writable, owner, owner_gid)
    cases.append(("--socket-dir the owner's, mode 0775", ["--socket-dir", group_writable], group_writable,
                  owner, "0775"))
    # A symbolic link (to a good folder).
    good = os.path.join(ctx.tmp, "good")
    os.mkdir(good)
    os.chown(good, owner, owner_gid)
    link = os.path.join(ctx.tmp, "link")
    os.symlink(good, link)
    cases.append(("--socket-dir a symbolic link", ["--socket-dir", link], link, None, None))

    for what, extra, folder, uid, mode in cases:
        log = refused_start(ctx, ctx.new_instance_name(), extra, owner_popen(), state, what)
        errors = error_lines(log)
        check(len(errors) == 1, f"{what}: expected one error line, got {errors}")
        line = errors[0]
        check(folder in line, f"{what}: the error does not name {folder}: {line!r}")
        if uid is not None:
            check(f"uid {uid}," in line and mode in line,
                  f"{what}: the error does not name the owner uid {uid} and mode {mode}: {line!r}")
        else:
            check("symbolic link" in line, f"{what}: the error does not say it is a symbolic link: {line!r}")
    # pbusd as root, pointed at the attacker's folder.
    refused_start(ctx, ctx.new_instance_name(), ["--socket-dir", theirs], None, ctx.state_dir,
                  "root's pbusd with --socket-dir of pbus-test's")
    # And the default folder, when pbusd makes it itself: its own, 0755.
    remove_tree(default_dir)
    d = owner_daemon(ctx, ctx.new_instance_name(), state, []).start()
    try:
        st = os.lstat(default_dir)
        check(stat.S_ISDIR(st.st_mode) and st.st_uid == owner and stat.S_IMODE(st.st_mode) == 0o755,
              f"{default_dir} made by pbusd: uid {st.st_uid} mode {stat.S_IMODE(st.st_mode):o}, expected "
              f"{owner} and 755")
        check(os.path.exists(os.path.join(default_dir, d.instance + ".sock")), "no socket in the folder pbusd made")
    finally:
        d.stop()


def test_fake_server(ctx):
    """A socket of the attacker's where root's `pbus set` looks for pbusd's
    (PBUS_SOCKET_DIR naming a folder of the attacker's): pbus refuses the
    server, naming the socket and its uid, and sends it nothing."""
    attacker, attacker_gid = user_ids(TEST_USER)
    evil = os.path.join(ctx.tmp, "evil")
    os.mkdir(evil)
    os.chown(evil, attacker, attacker_gid)
    instance = ctx.new_instance_name()
    sock = os.path.join(evil, instance + ".sock")
    fake = ctx.spawn(popen_as(TEST_USER, program(ctx.tmp, "fake-server", sock, reachable(ctx.tmp, FIXTURE)), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    check(read_json_line(fake, "fake server") == "listening", "fake server not listening")
    env = {"PBUS_SOCKET_DIR": evil}
    message = (rf"pbus: instance '{re.escape(instance)}': socket {re.escape(sock)} is served by uid {attacker} "
               rf"\({re.escape(TEST_USER)}\), not a trusted owner \(root, you, or \$PBUS_OWNER\)")
    try:
        r = ctx.run_pbus("set", "d1=5", "text=secret", instance=instance, env=env)
        check(r.rc != 0, f"root's pbus set was served by pbus-test's fake server (which took the SET): {r!r}")
        one_line_error(r, 1, message)
        one_line_error(ctx.run_pbus("stat", "--once", instance=instance, env=env), 1, message)
        # Trusting the attacker explicitly ($PBUS_OWNER) is what lets it in.
        r = ctx.run_pbus("set", "d1=6", instance=instance, env=dict(env, PBUS_OWNER=TEST_USER))
        check(r.rc == 0, f"with PBUS_OWNER={TEST_USER}, pbus set to its server: {r!r}")
    finally:
        fake.terminate()
    out = fake.communicate(timeout=WAIT)[0].decode("utf-8", "replace")
    events = [json.loads(l) for l in out.splitlines() if l.strip()]
    frames = [e for e in events if "type" in e]
    # Everything before the PBUS_OWNER run: connections that sent nothing.
    trusted_from = next((e["conn"] for e in frames if e["type"] == "HELLO"), None)
    check(trusted_from is not None and any(e["type"] == "SET" and e["conn"] == trusted_from for e in frames),
          f"the fake server did not serve the trusting pbus (the test is broken): {events}")
    early = [e for e in frames if e["conn"] < trusted_from]
    check(not early, f"pbus sent frames to the untrusted server before it was trusted: {early}")
    sent = [e for e in events if e.get("closed") and e["conn"] < trusted_from and e["bytes"]]
    check(not sent, f"pbus sent bytes to the untrusted server: {sent}")


def test_owner_by_env(ctx):
    """A pbusd that runs as an unprivileged user (pbus-test-owner) is not
    root's to trust by default; $PBUS_OWNER names it."""
    owner, _ = user_ids(OWNER_USER)
    folder = os.path.join(ctx.tmp, "owner-sock")
    os.mkdir(folder)
    os.chown(folder, owner, user_ids(OWNER_USER)[1])
    state = owner_state_dir(ctx, "state-owner-env")
    d = owner_daemon(ctx, ctx.new_instance_name(), state, ["--socket-dir", folder]).start()
    try:
        env = {"PBUS_SOCKET_DIR": folder}
        one_line_error(ctx.run_pbus("set", "d1=3", instance=d.instance, env=env), 1,
                       rf"pbus: instance '{re.escape(d.instance)}': socket .* is served by uid {owner} "
                       rf"\({re.escape(OWNER_USER)}\), not a trusted owner .*")
        r = ctx.run_pbus("set", "d1=3", instance=d.instance, env=dict(env, PBUS_OWNER=OWNER_USER))
        check(r.rc == 0 and r.err == "", f"with PBUS_OWNER={OWNER_USER}: {r!r}")
        r = ctx.run_pbus("set", "d1=4", instance=d.instance, env=dict(env, PBUS_OWNER=f"nobody,{owner}"))
        check(r.rc == 0 and r.err == "", f"with PBUS_OWNER=nobody,{owner}: {r!r}")
    finally:
        d.stop()


# Attack 8: a writer stopped while it holds a parameter.

SET_BOTH = (("d1", 777.0), ("text", "XXXX"))


def send_set(ctx, conn, pairs):
    return conn.send(P.SET, {"writes": [{"index": i, "value": v} for i, v in (ctx.w(n, x) for n, x in pairs)]})


@needs_server
def test_busy_set_others_served(ctx):
    """While a SET waits for the held parameter, another client connects,
    shakes hands and reads in far less than the second the SET may wait;
    the SET's answer comes after that second."""
    with Holder(ctx, ctx.daemon, "text"):
        with ctx.connect(name="writer") as a:
            t0 = time.monotonic()
            send_set(ctx, a, SET_BOTH)
            with P.Connection(ctx.path(), timeout=WAIT) as b:
                b.hello("bystander")
                b.get([ctx.schema.index("d1"), ctx.schema.index("text")])
                took = time.monotonic() - t0
            check(took < 0.05, f"another client's connect, HELLO and GET took {took * 1000:.0f} ms while "
                               f"a SET waited for a held parameter (the server waited with it)")
            check(not select.select([a.sock], [], [], 0)[0],
                  "the SET was answered before the other client's GET: it did not wait for the parameter")
            f = a.recv_frame(BUSY_S + WAIT)
            waited = time.monotonic() - t0
            check(f.type == P.SET_REPLY, f"SET with a held parameter: {f!r}")
            check(waited >= BUSY_S * 0.9, f"the SET was answered after {waited:.2f} s, before the second")


@needs_server
def test_busy_set_refused(ctx):
    """The SET gets SET_REPLY EBUSY after about a second, the busy write
    EBUSY, the other 0, nothing applied; the client's later requests are
    answered after it, in order."""
    with Holder(ctx, ctx.daemon, "text"):
        with ctx.connect(name="writer") as a, ctx.connect(name="reader") as b:
            before = ctx.values(b, "d1", "text")
            t0 = time.monotonic()
            id_set = send_set(ctx, a, SET_BOTH)
            id_ping = a.send(P.PING, {"data": b"after"})
            id_get = a.send(P.GET, {"indexes": [ctx.schema.index("d1")]})
            f = a.recv_frame(BUSY_S + WAIT)
            waited = time.monotonic() - t0
            check(f.type == P.SET_REPLY and f.id == id_set, f"first reply: {f!r}, expected SET_REPLY {id_set}")
            r = f.decode()
            check(r["result"] == EBUSY, f"SET_REPLY result {r['result']}, expected EBUSY ({EBUSY})")
            check([(x["result"], x["seq"]) for x in r["results"]] == [(0, 0), (EBUSY, 0)],
                  f"SET_REPLY writes {r['results']}, expected d1 (0, seq 0) and text (EBUSY, seq 0)")
            check(BUSY_S * 0.9 <= waited <= BUSY_S + 2, f"EBUSY after {waited:.2f} s, expected about {BUSY_S} s")
            expect_reply(a, id_ping, P.PONG, "PING after the busy SET")
            expect_reply(a, id_get, P.VALUES, "GET after the busy SET")
            after = ctx.values(b, "d1", "text")
            check(after == before, f"a refused SET changed values: before {before}, after {after}")


@needs_server
def test_busy_set_cli(ctx):
    """`pbus set` of a batch with a held parameter: one line that names
    it, a failure status, nothing changed."""
    with Holder(ctx, ctx.daemon, "text"):
        with ctx.connect(name="reader") as b:
            before = ctx.values(b, "d1", "text")
            r = ctx.run_pbus("set", "d1=111", "text=UUUU", instance=ctx.daemon.instance)
            one_line_error(r, 1, r"pbus: set: parameter 'text' is busy \(another writer has held it for 1 s\); "
                                 r"nothing was changed")
            after = ctx.values(b, "d1", "text")
            check(after == before, f"a refused pbus set changed values: before {before}, after {after}")


@needs_server
def test_busy_set_after_release(ctx):
    """Once the writer lets go, the same SET is applied."""
    with Holder(ctx, ctx.daemon, "text") as h:
        h.release()
    with ctx.connect(name="writer") as a:
        r = a.set([ctx.w(n, x) for n, x in SET_BOTH])
        check(r["result"] == 0 and all(x["result"] == 0 and x["seq"] > 0 for x in r["results"]),
              f"SET after the writer let go: {r}")
        got = ctx.values(a, "d1", "text")
        check(got["d1"][0] == 777.0 and got["text"][0] == "XXXX", f"values after the SET: {got}")


# Attack 9: connections hoarded.

def hoarder(ctx, user, daemon, most):
    proc = ctx.spawn(popen_as(user, program(ctx.tmp, "hoard", ctx.path(daemon), most), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    return proc, read_json_line(proc, f"hoarder {user}", timeout=30)


def stop_hoarder(proc):
    proc.stdin.close()
    try:
        proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def unprivileged_hello(ctx, user, daemon):
    """HELLO as @user: "ok", or the ERROR's code and message."""
    uid, gid = user_ids(user)
    path = ctx.path(daemon)

    def probe():
        c, error = hello(path, "late")
        if c:
            c.close()
            return ["ok", ""]
        return list(error)
    return as_user(uid, gid, [], probe)


def test_hoarding_per_user(ctx):
    """pbus-test opens connections until it is refused and holds them:
    it gets its share (a quarter of --max-clients), and root's `pbus set`,
    and another user, still get in; its next one is refused with the
    per-user message."""
    d = ctx.start_server()
    hoard = None
    try:
        attacker, _ = user_ids(TEST_USER)
        hoard, got = hoarder(ctx, TEST_USER, d, 300)
        check(got["refused"] == P.EUSERS and got["held"] == 64 and
              got["message"] == f"too many connections for uid {attacker} (at most 64)",
              f"pbus-test holding connections: {got}, expected 64 held, then EUSERS 'too many connections for "
              f"uid {attacker} (at most 64)'")
        r = ctx.run_pbus("set", "d1=5", instance=d.instance)
        check(r.rc == 0 and r.err == "", f"root's pbus set while pbus-test holds its share: {r!r}")
        got = unprivileged_hello(ctx, TEST_USER, d)
        check(got == [P.EUSERS, f"too many connections for uid {attacker} (at most 64)"],
              f"one more connection of pbus-test: {got}")
        got = unprivileged_hello(ctx, OWNER_USER, d)
        check(got == ["ok", ""], f"another user's connection while pbus-test holds its share: {got}")
        with ctx.connect(d) as c:
            doc = stats(c)
            check(doc.get("max_clients_per_user") == 64 and doc.get("reserved_clients") == 8,
                  f"STATS limits: {doc.get('max_clients_per_user')}, {doc.get('reserved_clients')}")
    finally:
        if hoard:
            stop_hoarder(hoard)
        d.stop()


def test_hoarding_reserved(ctx):
    """Unprivileged users together cannot take the last --reserved-clients
    places: those stay for root (and pbusd's user)."""
    d = ctx.start_server(extra=["--max-clients", "16", "--max-clients-per-user", "8", "--reserved-clients", "4"])
    procs, conns = [], []
    try:
        attacker, _ = user_ids(TEST_USER)
        p, got = hoarder(ctx, TEST_USER, d, 100)
        procs.append(p)
        check(got["held"] == 8 and got["refused"] == P.EUSERS and
              got["message"] == f"too many connections for uid {attacker} (at most 8)", f"pbus-test: {got}")
        p, got = hoarder(ctx, OWNER_USER, d, 100)
        procs.append(p)
        full = "server full: the last 4 connections are kept for root and the instance's owner"
        check(got["held"] == 4 and got["refused"] == P.EUSERS and got["message"] == full,
              f"pbus-test-owner after pbus-test: {got}, expected 4 held, then {full!r}")
        r = ctx.run_pbus("set", "d1=7", instance=d.instance)
        check(r.rc == 0 and r.err == "", f"root's pbus set with the unprivileged places taken: {r!r}")
        # Root takes the reserved places (once pbusd has seen pbus go).
        conns.append(ctx.connect(d))
        wait_until("pbus's connection closed", lambda: stats(conns[0])["clients"] == 13)
        for _ in range(3):
            conns.append(ctx.connect(d))
        extra, error = hello(ctx.path(d), "17th")
        if extra:
            extra.close()
        check(error == (P.EUSERS, "too many clients (at most 16)"), f"a 17th connection of --max-clients 16: "
                                                                     f"{error or 'served'}")
    finally:
        for c in conns:
            c.close()
        for p in procs:
            stop_hoarder(p)
        d.stop()
    r = subprocess.run([ctx.pbusd, "--schema", FIXTURE, "--instance", "x", "--max-clients", "8",
                        "--reserved-clients", "8"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=TIMEOUT)
    check(r.returncode == 2 and "--reserved-clients" in r.stderr,
          f"--reserved-clients 8 with --max-clients 8: {r.returncode} {r.stderr!r}")


# Attack 10: out of descriptors.

def test_accept_out_of_descriptors(ctx):
    """With RLIMIT_NOFILE reached, pending connections wait in the backlog:
    pbusd does not spin on accept4() (CPU), logs one warning, and serves
    them once descriptors are free again."""
    limit = 48

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    d = Daemon(ctx, ctx.new_instance_name(), ctx.state_dir, FIXTURE, ["--socket-dir", ctx.sock_dir],
               {"preexec_fn": low_limit})
    d.sock_dir = ctx.sock_dir
    d.start()
    conns = []
    try:
        base = len(os.listdir(f"/proc/{d.pid}/fd"))
        check(base < limit - 4, f"pbusd has {base} descriptors open already (limit {limit})")
        hello = P.encode_message(P.HELLO, 1, {"min_version": 1, "max_version": 1, "schema_hash": 0,
                                               "client_name": "fd"})
        for _ in range(limit - base + 4):
            c = P.Connection(ctx.path(d), timeout=WAIT)
            c.send_bytes(hello)
            conns.append(c)
        served, waiting = [], []
        deadline = time.monotonic() + WAIT
        pending = list(conns)
        # Those pbusd accepted answer; the others wait in the backlog.
        while pending and time.monotonic() < deadline:
            ready = select.select(pending, [], [], 0.5)[0]
            if not ready and len(served) >= limit - base - 4:
                break
            for c in ready:
                f = c.recv_frame(WAIT)
                check(f.type == P.HELLO_REPLY, f"a connection got {f!r}")
                served.append(c)
                pending.remove(c)
        waiting = pending
        check(waiting, f"all {len(conns)} connections were served with a limit of {limit} descriptors")
        t0, cpu0 = time.monotonic(), cpu_seconds(d.pid)
        time.sleep(2.0)  # a measurement over an interval, not a synchronisation
        cpu = cpu_seconds(d.pid) - cpu0
        elapsed = time.monotonic() - t0
        check(cpu < 0.2, f"pbusd used {cpu:.2f} s of CPU in {elapsed:.1f} s while out of descriptors")
        wait_until("the warning", lambda: "cannot accept" in d.log())
        lines = [l for l in d.log().splitlines() if "cannot accept" in l]
        check(len(lines) == 1 and ": warning: " in lines[0],
              f"expected one warning about accepting, got {len(lines)}: {lines[:3]}")
        # Descriptors free again: the waiting connections are served.
        for c in served[:len(waiting) + 1]:
            c.close()
            conns.remove(c)
        for c in waiting:
            f = c.recv_frame(WAIT)
            check(f.type == P.HELLO_REPLY, f"a connection that waited got {f!r}")
        wait_until("the recovery in the log", lambda: "accepting connections again" in d.log())
    finally:
        for c in conns:
            c.close()
        d.stop()


