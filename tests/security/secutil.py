#!/usr/bin/env python3
"""secutil.py: what the attack tests share (tests/security/, and the access
tests of tests/server/test_protocol.py): the unprivileged test users, code
run as one of them, and the programs an attacker runs.

Users (created when missing, as system users without a home or a shell):

- TEST_USER (`pbus-test`): the attacker, a local user without any right;
  member of nothing. TEST_GROUP (`pbus-test-writers`) is the write group of
  a parameter of tests/server/fixtures/server.pbs.
- OWNER_USER (`pbus-test-owner`): a second unprivileged user, for an
  instrument whose pbusd does not run as root, or a second tenant.

As a program (run as the attacker by the tests, Python 3 standard library
and tests/server/protocol.py only):

    secutil.py fake-server SOCKET SCHEMA
        binds SOCKET and answers like pbusd (HELLO, SCHEMA_GET, SET, ...)
        with the schema SCHEMA; prints "listening", then a JSON line per
        frame received ({"conn": N, "type": "SET", ...}) and per connection
        closed ({"conn": N, "closed": true, "bytes": B}).
    secutil.py hoard SOCKET MAX
        connects and sends HELLO until the server refuses a connection (or
        MAX are held); prints one JSON line {"held": N, "refused": CODE,
        "message": TEXT}, then keeps them until its stdin closes.
"""
import grp
import json
import os
import pwd
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "server"))
sys.path.insert(0, HERE)  # a copy run by a test user has protocol.py beside it (reachable())
sys.path.insert(0, os.path.join(TOP, "tests", "cli"))
import protocol as P  # noqa: E402

TEST_USER = "pbus-test"
TEST_GROUP = "pbus-test-writers"   # the group of parameter `shared` in server.pbs
OWNER_USER = "pbus-test-owner"
USER_TIMEOUT = 10  # seconds for useradd and friends


class Failure(Exception):
    """A failed check (test_cli's, when the tests import it)."""


try:
    from test_cli import Failure  # noqa: E402,F811 - one exception type for every suite
except ImportError:  # run as a program by the attacker: test_cli is not needed
    pass


# --- Users ------------------------------------------------------------------------

def _ensure_system_user(name):
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=USER_TIMEOUT)


def ensure_user():
    """The group of `shared` and the unprivileged user (idempotent)."""
    try:
        grp.getgrnam(TEST_GROUP)
    except KeyError:
        subprocess.run(["groupadd", "--system", TEST_GROUP], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=USER_TIMEOUT)
    _ensure_system_user(TEST_USER)


def ensure_owner_user():
    """The second unprivileged user (idempotent)."""
    _ensure_system_user(OWNER_USER)


def user_ids(name):
    """(uid, gid) of user @name."""
    pw = pwd.getpwnam(name)
    return pw.pw_uid, pw.pw_gid


def as_user(uid, gid, groups, fn):
    """Run @fn() in a child with these credentials; its JSON result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            out = {"ok": fn()}
        except BaseException as e:  # noqa: B902 - reported to the parent
            out = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
        try:
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    deadline = time.monotonic() + 20
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise Failure("the unprivileged child did not finish")
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    out = json.loads(data or b'{"error": "no output"}')
    if "error" in out:
        raise Failure(f"unprivileged child: {out['error']}\n{out.get('trace', '')}")
    return out["ok"]


def popen_as(user, argv, **kw):
    """subprocess.Popen of @argv as @user (its primary group, no other)."""
    uid, gid = user_ids(user)
    return subprocess.Popen(argv, user=uid, group=gid, extra_groups=[], **kw)


def _python_for_everybody():
    """A Python 3 that the test users may run: this one if others may
    execute it (a venv under /root may not be), else the system's."""
    exe = os.path.realpath(sys.executable)
    path = exe
    while path != "/":
        if not os.stat(path).st_mode & 0o001:
            break
        path = os.path.dirname(path)
    else:
        return exe
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return exe


def reachable(tmp, *paths):
    """Copies of the files @paths that the test users can reach and run:
    the checkout and its build may lie below a folder only root may enter (a
    CI's temporary clone). @tmp: the test's own folder, mode 0755, where
    the copies go (its subfolder for-everybody)."""
    folder = os.path.join(tmp, "for-everybody")
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o755)
    copies = []
    for path in paths:
        copy = os.path.join(folder, os.path.basename(path))
        if not os.path.exists(copy):
            shutil.copy2(path, copy)
            os.chmod(copy, 0o755)
        copies.append(copy)
    return copies[0] if len(copies) == 1 else copies


def program(tmp, *args):
    """The argv that runs this file as a program with @args, as any user
    (from copies in @tmp: see reachable())."""
    script, _ = reachable(tmp, os.path.abspath(__file__), os.path.join(TOP, "tests", "server", "protocol.py"))
    return [_python_for_everybody(), script] + [str(a) for a in args]


# --- The attacker's programs -------------------------------------------------------

def _say(obj):
    print(json.dumps(obj), flush=True)


def fake_server(path, schema_path):
    """Answer like pbusd on @path, with the schema at @schema_path."""
    with open(schema_path, encoding="utf-8") as f:
        text = f.read()
    schema = P.Schema(text)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)
    listener.listen(16)
    _say("listening")
    conns = {}  # socket -> [number, reader, bytes]
    serial = 0
    while True:
        ready = select.select([listener] + list(conns), [], [])[0]
        for s in ready:
            if s is listener:
                c, _ = listener.accept()
                serial += 1
                conns[c] = [serial, P.FrameReader(), 0]
                continue
            number, reader, count = conns[s]
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                _say({"conn": number, "closed": True, "bytes": count})
                del conns[s]
                s.close()
                continue
            conns[s][2] += len(data)
            reader.feed(data)
            while True:
                try:
                    frame = reader.next()
                except P.ProtocolError:
                    frame = None
                if frame is None:
                    break
                fields = {}
                try:
                    fields = P.decode_body(frame.type, frame.body)
                except P.ProtocolError:
                    pass
                report = {"conn": number, "type": P.typename(frame.type)}
                if frame.type == P.SET:
                    report["writes"] = [[w["index"], w["value"].hex()] for w in fields.get("writes", [])]
                _say(report)
                reply = None
                if frame.type == P.HELLO:
                    reply = P.encode_message(P.HELLO_REPLY, frame.id, {
                        "version": 1, "schema_hash": schema.hash, "param_count": len(schema.params),
                        "max_frame": P.DEFAULT_MAX_FRAME, "max_subscriptions": 64, "server_pid": os.getpid(),
                        "instance": os.path.basename(path)[:-len(".sock")],
                        "interface": schema.interface})
                elif frame.type == P.SCHEMA_GET:
                    reply = P.encode_message(P.SCHEMA, frame.id, {"text": text})
                elif frame.type == P.SET:
                    reply = P.encode_message(P.SET_REPLY, frame.id, {
                        "result": 0, "results": [{"result": 0, "seq": 1} for _ in fields.get("writes", [])]})
                elif frame.type == P.PING:
                    reply = P.encode_message(P.PONG, frame.id, {"data": frame.body})
                if reply is not None:
                    try:
                        s.sendall(reply)
                    except OSError:
                        pass


def hello(path, name):
    """Connect and shake hands: (connection, None), or (None, (code,
    message)) if the server refused. A refused connection gets its ERROR at
    once and is closed, perhaps before our HELLO is sent (§4: the client
    reads it even if sending failed)."""
    c = P.Connection(path, timeout=5.0)
    try:
        c.send(P.HELLO, {"min_version": 1, "max_version": 1, "schema_hash": 0, "client_name": name})
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        f = c.recv_frame()
        fields = f.decode()
    except (P.Closed, P.ProtocolError, TimeoutError, OSError) as e:
        c.close()
        return None, (0, f"{type(e).__name__}: {e}")
    if f.type == P.ERROR:
        c.close()
        return None, (fields["code"], fields["message"])
    if f.type != P.HELLO_REPLY:
        c.close()
        return None, (0, f"unexpected {f!r}")
    c.hello_reply = fields
    return c, None


def hoard(path, most):
    """Connections with HELLO until one is refused or @most are held."""
    held, refused, message = [], None, ""
    while len(held) < most:
        try:
            c, error = hello(path, "hoard")
        except OSError as e:
            refused, message = -e.errno, str(e)
            break
        if error:
            refused, message = error
            break
        held.append(c)
    _say({"held": len(held), "refused": refused, "message": message})
    sys.stdin.read()  # until the test closes our stdin
    for c in held:
        c.close()


def main(argv):
    if len(argv) == 4 and argv[1] == "fake-server":
        fake_server(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "hoard":
        hoard(argv[2], int(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
