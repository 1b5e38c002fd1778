"""web.py: pbus-web for the suites that run it (tests/web, the protocol;
tests/web-page, the page in a browser): the daemon started on a port the
kernel picks, the test users and their file of yescrypt hashes, and a
WebSocket client of the parambus.v1 protocol (websocket-client)."""
import json
import os
import subprocess
import time

import websocket

from .check import TIMEOUT, Failure, check
from .daemon import spawn_notified, stop_process

PASSWORDS = {"alice": "alice-pw-1", "bob": "bob-pw-2", "carol": "carol-pw-3"}
# alice may write the PSU's settings (group instrument), bob is in another
# group, carol in none (she may write only parameters without a group).
GROUPS = {"alice": "instrument,operators", "bob": "operators", "carol": ""}


class WebDaemon:
    """One pbus-web in front of @instance's pbusd."""

    def __init__(self, build, instance, tmp, extra=(), env=None):
        self.program = build.path("daemon", "pbus-web")
        build.require(self.program)
        self.instance, self.tmp, self.extra, self.env = instance, tmp, list(extra), env
        self.log_path = os.path.join(tmp, f"pbus-web-{instance.name}.log")
        self.proc = self.port = None

    def start(self):
        argv = [self.program, "--instance", self.instance.name, "--socket-dir", self.instance.sock_dir,
                "--listen", "127.0.0.1:0"] + self.extra
        self.proc, fields = spawn_notified(argv, self.log_path, env=self.env)
        if fields is None:
            self.stop()
            raise Failure(f"pbus-web not ready: {self.log()}")
        self.port = int(fields["PORT"])
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-1500:]

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])

    def stop(self):
        return stop_process(self.proc)



def make_users_file(build, tmp):
    """The users file of PASSWORDS and GROUPS in @tmp (hashes made by
    `pbus-web --hash-password`); its path."""
    program = build.path("daemon", "pbus-web")
    lines = []
    for name, password in PASSWORDS.items():
        r = subprocess.run([program, "--hash-password"], input=password, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(r.returncode == 0 and r.stdout.startswith("$y$"), f"--hash-password: {r.stdout!r} {r.stderr!r}")
        lines.append(f"{name}:{r.stdout.strip()}:{GROUPS[name]}")
    path = os.path.join(tmp, "users")
    with open(path, "w") as f:
        f.write("# test users\n\n" + "\n".join(lines) + "\n")
    return path


# --- clients ---------------------------------------------------------------------

def origin(web, scheme="http"):
    return f"{scheme}://127.0.0.1:{web.port}"


def connect(web, cookie=None, timeout=TIMEOUT, **kw):
    return websocket.create_connection(f"ws://127.0.0.1:{web.port}/ws", subprotocols=["parambus.v1"],
                                       origin=origin(web), cookie=cookie, timeout=timeout, **kw)


def recv(ws, timeout=TIMEOUT):
    ws.settimeout(timeout)
    return json.loads(ws.recv())


def recv_until(ws, pred, what, timeout=TIMEOUT):
    """Messages until one satisfies @pred (returned); Failure after @timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure(f"no {what} within {timeout} s")
        try:
            m = recv(ws, left)
        except websocket.WebSocketTimeoutException:
            raise Failure(f"no {what} within {timeout} s")
        if pred(m):
            return m


def greeting(ws):
    """hello, schema, pbusd, first values: the messages a new session gets."""
    hello = recv(ws)
    check(hello["t"] == "hello", f"first message: {hello}")
    schema = recv_until(ws, lambda m: m["t"] == "schema", "schema")
    recv_until(ws, lambda m: m["t"] == "pbusd" and m["connected"], "pbusd connected")
    return hello, schema
