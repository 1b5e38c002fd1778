"""secutil.py: what the attack tests share (tests/security/, and the access
tests of tests/server/test_protocol.py): the unprivileged test users, code
run as one of them, and the attacker's programs made runnable by them.

Users (created when missing, as system users without a home or a shell;
tests/conftest.py's fixtures pbus_user and pbus_owner_user):

- TEST_USER (`pbus-test`): the attacker, a local user without any right;
  member of nothing. TEST_GROUP (`pbus-test-writers`) is the write group of
  a parameter of tests/server/fixtures/server.pbs.
- OWNER_USER (`pbus-test-owner`): a second unprivileged user, for an
  instrument whose pbusd does not run as root, or a second tenant.

The attacker's programs are in attacker.py; program() gives the argv that
runs it as any user.
"""
import grp
import json
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import time
import traceback

from .check import Failure

HERE = os.path.dirname(os.path.abspath(__file__))

TEST_USER = "pbus-test"
TEST_GROUP = "pbus-test-writers"   # the group of parameter `shared` in server.pbs
OWNER_USER = "pbus-test-owner"
USER_TIMEOUT = 10  # seconds for useradd and friends


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
        if os.path.isdir(path):
            if not os.path.exists(copy):
                shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
                for top, dirs, files in os.walk(copy):
                    for d in dirs:
                        os.chmod(os.path.join(top, d), 0o755)
                    for f in files:
                        os.chmod(os.path.join(top, f), 0o644)
                os.chmod(copy, 0o755)
        elif not os.path.exists(copy):
            shutil.copy2(path, copy)
            os.chmod(copy, 0o755)
        copies.append(copy)
    return copies[0] if len(copies) == 1 else copies


def program(tmp, *args):
    """The argv that runs attacker.py as a program with @args, as any user
    (from copies in @tmp, protocol.py and the parambus package beside it:
    see reachable())."""
    # protocol.py re-exports the parambus package: its copy goes beside it.
    package = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "parambus")
    script, _, _ = reachable(tmp, os.path.join(HERE, "attacker.py"), os.path.join(HERE, "protocol.py"), package)
    return [_python_for_everybody(), script] + [str(a) for a in args]


class UnprivilegedUser:
    """A test user (created if missing): its ids, code and programs run as
    it. The write group of `shared` is .group (.group_gid)."""

    def __init__(self, name):
        if os.geteuid() != 0:
            raise Failure(f"run as root: the tests switch to the unprivileged user {name}")
        try:
            if name == OWNER_USER:
                ensure_owner_user()
            else:
                ensure_user()
        except (subprocess.CalledProcessError, OSError) as e:
            raise Failure(f"cannot create the test user {name}: {e}")
        self.name = name
        self.uid, self.gid = user_ids(name)
        self.group = TEST_GROUP
        self.group_gid = grp.getgrnam(TEST_GROUP).gr_gid if name == TEST_USER else None

    def run(self, fn, groups=(), gid=None):
        """@fn() in a child as this user (primary group @gid, by default its
        own; supplementary @groups); its JSON result."""
        return as_user(self.uid, self.gid if gid is None else gid, list(groups), fn)

    def popen(self, argv, **kw):
        return popen_as(self.name, argv, **kw)

    def __repr__(self):
        return f"UnprivilegedUser({self.name!r}, uid={self.uid})"


