"""test_table.py: the attacks on the shared-memory table, run as a local
user without rights against the real pbusd and the demo simulator.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/security/test_table.py \
        --pbus-build build/dev

docs/security.md is the threat model; each case runs one attack of its §4
with tests/security/attack.c as the unprivileged user pbus-test (created if
missing) and checks the outcome against the bound it states: writers keep
their rate, nothing crashes, nothing is hidden, no fake instance is
believed, the real pbusd starts, batches are all or nothing. --pbus-build
holds daemon/pbusd, tools/pbus, examples/psu/psu-sim and psu.pbs, and
tests/security/attack and hold-param. Each case, on an instance of its
own, prints `PASS: security/table/<name>` or `FAIL: security/table/<name>:
reason` (tests/conftest.py). Run as root.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from pbustest import secutil
from pbustest.check import TIMEOUT, Failure, check
from pbustest.cli import Context
from pbustest.daemon import Daemon

SUITE = "security/table"
ATTACK_S = 3.0        # how long the long attacks run
RATE_KEPT = 0.9       # the share of its rate a writer must keep under attack
QUICK_S = 0.5         # a request that must not be held up (seconds)


class TableContext(Context):
    """test_cli's Context, serving the demo's schema with its simulator."""

    def __init__(self, build, tmp, daemons, instances, verbose=False):
        super().__init__(build, tmp, daemons, instances, verbose)
        os.chmod(self.tmp, 0o755)  # the attacker reads the copy of a segment here
        self.schema = build.psu_schema
        self.sim = build.psu_sim
        self.attack = build.attack
        self.hold = build.hold_param
        self.procs = []

    def start(self, instance=None):
        """A fresh instance: pbusd and the simulator writing at 1 kHz."""
        self.instance = instance or self.new_instance_name()
        d = Daemon(self, self.instance, self.state_dir, self.schema).start()
        self.spawn([self.sim, self.instance])
        wait_until("the simulator writes", lambda: self.seq("measured_voltage") > 10)
        return d

    def spawn(self, argv, user=None, **kw):
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        p = secutil.popen_as(user, argv, **kw) if user else subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def attacker(self, *args, wait_for="ready"):
        """attack ARGS as the unprivileged user; returns once it printed a
        line starting with @wait_for (or ended), with the lines so far."""
        p = self.spawn([secutil.reachable(self.tmp, self.attack)] + [str(a) for a in args], user=secutil.TEST_USER,
                       stdout=subprocess.PIPE, text=True)
        lines = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith(wait_for):
                break
        p.lines = lines
        return p

    def finish(self, p, timeout=ATTACK_S + TIMEOUT):
        out, _ = p.communicate(timeout=timeout)
        return p.lines + out.splitlines()

    def seq(self, name):
        for p in self.dump()["parameters"]:
            if p["name"] == name:
                return p["seq"]
        raise Failure(f"no parameter {name}")

    def timed(self, *args):
        t0 = time.monotonic()
        r = self.run(*args)
        return r, time.monotonic() - t0

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        super().cleanup()
        # What the attacker left in /dev/shm under this run's names.
        self.instances.cleanup()


@pytest.fixture
def ctx(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose, pbus_user):
    """A TableContext of the test's own (its folder, its instances): each
    attack starts from a fresh pbusd."""
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd, pbus_build.psu_sim, pbus_build.attack,
                       pbus_build.hold_param)
    ctx = TableContext(pbus_build, tempfile.mkdtemp(dir=pbus_tmp), pbus_daemons, pbus_instances, pbus_verbose)
    yield ctx
    ctx.cleanup()


def wait_until(what, predicate, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise Failure(f"timed out waiting until {what}")


def rate(ctx, name, seconds):
    """Versions per second of parameter @name over @seconds."""
    s0, t0 = ctx.seq(name), time.monotonic()
    time.sleep(seconds)
    return (ctx.seq(name) - s0) / (time.monotonic() - t0)


def alive(ctx, d):
    check(d.proc.poll() is None, f"pbusd died (status {d.proc.returncode}): {d.log()}")
    for p in ctx.procs[:1]:
        check(p.poll() is None, f"the simulator died (status {p.returncode})")


# --- The attacks ---------------------------------------------------------------------

def test_turns_stall_no_writer(ctx):
    """§4.1: a reader that posts turns on every parameter without end delays
    each write by 200 us at most: the simulator keeps its 1 kHz, a socket SET
    and another client's GET are served at once, a direct write goes
    through; a turn 1000 s ahead delays nobody."""
    d = ctx.start()
    before = rate(ctx, "measured_voltage", 1.0)
    a = ctx.attacker("post-turns", ctx.instance, ATTACK_S)
    during = rate(ctx, "measured_voltage", 1.5)
    r, t_set = ctx.timed("set", "voltage_setpoint=1.5")
    check(r.rc == 0, f"socket SET under attack: {r!r}")
    r, t_get = ctx.timed("get", "measured_voltage", "voltage_setpoint")
    check(r.rc == 0 and "1.5" in r.out, f"GET under attack: {r!r}")
    r, t_direct = ctx.timed("set", "--direct", "fan_duty=40")
    check(r.rc == 0, f"direct write under attack: {r!r}")
    lines = ctx.finish(a)
    check(any(l.startswith("ok: posted") for l in lines), f"the attack did not run: {lines}")
    print(f"    simulator {before:.0f}/s before, {during:.0f}/s under attack; SET {t_set * 1e3:.1f} ms, "
          f"GET {t_get * 1e3:.1f} ms, direct set {t_direct * 1e3:.1f} ms", flush=True)
    check(during >= RATE_KEPT * before, f"the simulator slowed from {before:.0f} to {during:.0f} writes/s")
    for what, t in (("SET", t_set), ("GET", t_get), ("direct set", t_direct)):
        check(t < QUICK_S, f"{what} took {t:.3f} s under attack")
    # Far-future deadlines: cleared by the first write of each parameter.
    a = ctx.attacker("far-turns", ctx.instance, wait_for="ok")
    ctx.finish(a)
    r, t_direct = ctx.timed("set", "--direct", "fan_duty=41")
    check(r.rc == 0 and t_direct < QUICK_S, f"direct write after turns 1000 s ahead: {t_direct:.3f} s {r!r}")
    check(rate(ctx, "measured_voltage", 0.5) >= RATE_KEPT * before, "the simulator slowed after far turns")
    alive(ctx, d)


def test_wake_tampering_hides_nothing(ctx):
    """§4.1: scribbling over the whole wake segment, zeroing the waiter
    counts or raising them changes no value, hides nothing, and delays a
    waiter by 100 ms at most."""
    d = ctx.start()
    before = rate(ctx, "measured_voltage", 1.0)
    ctx.finish(ctx.attacker("scribble-wake", ctx.instance, wait_for="ok"))
    r = ctx.run("get", "measured_voltage")
    check(r.rc == 0, f"get after the wake segment was scribbled over: {r!r}")
    r = ctx.run("info")
    check(r.rc == 0 and "live" in r.out, f"info after the scribble: {r!r}")
    r = ctx.run("set", "--direct", "fan_duty=55")
    check(r.rc == 0 and ctx.get("fan_duty").startswith("55"), f"direct set after the scribble: {r!r}")
    check(rate(ctx, "measured_voltage", 1.0) >= RATE_KEPT * before, "the simulator slowed after the scribble")
    # Counts at 1: every write wakes (a system call), as for a real waiter.
    ctx.finish(ctx.attacker("wake-counts", ctx.instance, wait_for="ok"))
    check(rate(ctx, "measured_voltage", 1.0) >= RATE_KEPT * before, "the simulator slowed with raised counts")
    # Counts kept at 0 while a watcher sleeps: it still sees every change,
    # at most a wait slice late.
    watch = ctx.spawn([ctx.pbus, "-i", ctx.instance, "watch", "--initial", "voltage_setpoint"],
                      stdout=subprocess.PIPE, text=True)
    wait_until("pbus watch prints the first value", lambda: bool(watch.stdout.readline()))
    a = ctx.attacker("zero-counts", ctx.instance, ATTACK_S)
    time.sleep(0.3)
    late = []
    for v in ("2.25", "2.5", "2.75"):
        t0 = time.monotonic()
        r = ctx.run("set", f"voltage_setpoint={v}")
        check(r.rc == 0, f"set under zeroed counts: {r!r}")
        line = watch.stdout.readline()
        late.append(time.monotonic() - t0)
        check(v in line, f"pbus watch printed {line!r} after voltage_setpoint={v}")
    ctx.finish(a)
    print(f"    with counts kept at 0, a watcher heard of each change after "
          f"{', '.join(f'{x * 1e3:.0f}' for x in late)} ms", flush=True)
    check(max(late) < 0.1 + QUICK_S, f"a watcher heard of a change {max(late):.3f} s late")
    alive(ctx, d)


def test_nothing_to_truncate(ctx):
    """§4.1, §5: the attacker can neither resize, remove nor re-permission
    the wake segment, nor open the value segment for writing; there is no
    wake file any more."""
    d = ctx.start()
    lines = ctx.finish(ctx.attacker("resize", ctx.instance, wait_for="never"))
    check(len(lines) == 4 and all(l.startswith("refused") for l in lines), f"the attacker managed: {lines}")
    check(ctx.run("get", "measured_voltage").rc == 0, "get after the tries")
    time.sleep(0.2)
    alive(ctx, d)


def test_lock_file_taken(ctx):
    """§4.2: the lock file cannot be held by anybody else while pbusd runs
    (mode 0600), and one made and held by the attacker while pbusd is down
    does not keep the real pbusd from starting."""
    d = ctx.start()
    lines = ctx.finish(ctx.attacker("lock", ctx.instance, wait_for="refused"), timeout=TIMEOUT)
    check(lines and lines[0].startswith("refused"), f"the attacker holds the live lock: {lines}")
    check(d.stop() == 0, "pbusd did not stop cleanly")
    a = ctx.attacker("lock", ctx.instance, wait_for="ok")
    check(a.lines and a.lines[-1].startswith("ok: holding"), f"the attacker could not make the lock: {a.lines}")
    d = Daemon(ctx, ctx.instance, ctx.state_dir, ctx.schema).start()
    r = ctx.run("info")
    check(r.rc == 0 and "live" in r.out and str(d.pid) in r.out, f"info after the restart: {r!r}")
    st = os.stat(f"/dev/shm/pbus.{ctx.instance}.lock")
    check(st.st_uid == 0 and st.st_mode & 0o777 == 0o600,
          f"the lock file is uid {st.st_uid} mode {st.st_mode & 0o777:o}")
    alive(ctx, d)


def test_lock_file_of_another_user(ctx, pbus_owner_user):
    """§4.2, the stated limit: a pbusd that is not root cannot remove a lock
    file another user made in the sticky /dev/shm; it refuses to start with
    one line naming the file (a root pbusd replaces it: lock-file-taken)."""
    uid, gid = pbus_owner_user.uid, pbus_owner_user.gid
    state = os.path.join(ctx.tmp, "owner-state")
    os.mkdir(state)
    os.chown(state, uid, gid)
    ctx.instance = ctx.new_instance_name()
    a = ctx.attacker("lock", ctx.instance, wait_for="ok")
    check(a.lines and a.lines[-1].startswith("ok: holding"), f"the attacker could not make the lock: {a.lines}")
    pbusd, schema = secutil.reachable(ctx.tmp, ctx.pbusd, ctx.schema)
    p = subprocess.run([pbusd, "--schema", schema, "--instance", ctx.instance, "--state-dir", state,
                        "--no-socket"], user=uid, group=gid, extra_groups=[], capture_output=True, text=True,
                       timeout=TIMEOUT)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and f"pbus.{ctx.instance}.lock" in lines[0]
          and "only root" in lines[0], f"a user's pbusd against another user's lock file: {p}")
    check(not os.path.exists(f"/dev/shm/pbus.{ctx.instance}"), "a segment was made anyway")


def test_fake_instance_refused(ctx):
    """§3, §4.2: with the real pbusd down, the attacker serves a copy of the
    real table with a value outside its limits, looking live (its own
    process as owner, a wake segment of its own): root's pbus refuses it,
    naming the owner; the real pbusd replaces it when it starts."""
    d = ctx.start()
    copy = os.path.join(ctx.tmp, "segment.copy")
    shutil.copyfile(f"/dev/shm/pbus.{ctx.instance}", copy)
    os.chmod(copy, 0o644)
    real = ctx.get("voltage_setpoint")
    check(d.stop() == 0, "pbusd did not stop cleanly")
    a = ctx.attacker("fake", ctx.instance, copy, "voltage_setpoint", "99", wait_for="ok")
    check(a.lines and a.lines[-1].startswith("ok: made"), f"the attacker could not make the fake: {a.lines}")
    uid = secutil.user_ids(secutil.TEST_USER)[0]
    for args in (("info",), ("get", "voltage_setpoint"), ("dump",)):
        r = ctx.run(*args)
        check(r.rc != 0 and "99" not in r.out, f"root believed the fake: {r!r}")
        check(r.err.count("\n") == 1 and (str(uid) in r.err or secutil.TEST_USER in r.err),
              f"the refusal does not name the owner in one line: {r!r}")
    # Trusting that user on purpose is possible (and shows the fake).
    env = dict(ctx.env(), PBUS_OWNER=secutil.TEST_USER)
    p = subprocess.run([ctx.pbus, "get", "voltage_setpoint"], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    check(p.returncode == 0 and p.stdout.startswith("99"), f"PBUS_OWNER={secutil.TEST_USER}: {p}")
    d = Daemon(ctx, ctx.instance, ctx.state_dir, ctx.schema).start()
    r = ctx.run("get", "voltage_setpoint")
    check(r.rc == 0 and r.out.rstrip("\n") == real, f"after the real pbusd started: {r!r}, expected {real}")
    check(os.stat(f"/dev/shm/pbus.{ctx.instance}").st_uid == 0, "the segment is not root's")
    alive(ctx, d)


def test_direct_batch_is_atomic(ctx):
    """§4.5: a direct batch with a parameter a stopped writer holds changes
    nothing, and says which parameter is busy."""
    d = ctx.start()
    hold = ctx.spawn([ctx.hold, ctx.instance, "current_setpoint"], stdout=subprocess.PIPE, text=True)
    check(hold.stdout.readline().strip() == "held", "hold-param did not hold")
    before = ctx.get("voltage_setpoint")
    r, t = ctx.timed("set", "--direct", "voltage_setpoint=2.2", "current_setpoint=0.5")
    check(r.rc != 0 and r.err.count("\n") == 1 and "current_setpoint" in r.err,
          f"a batch with a held parameter: {r!r}")
    check(ctx.get("voltage_setpoint") == before, f"voltage_setpoint changed to {ctx.get('voltage_setpoint')}")
    hold.send_signal(signal.SIGCONT)
    hold.wait(timeout=TIMEOUT)
    r = ctx.run("set", "--direct", "voltage_setpoint=2.2", "current_setpoint=0.5")
    check(r.rc == 0 and ctx.get("voltage_setpoint").startswith("2.2"), f"after the holder let go: {r!r}")
    alive(ctx, d)


