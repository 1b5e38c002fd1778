"""conftest.py: what every Python suite of tests/ gets from pytest.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/cli \\
        --pbus-build build/dev [--pbus-suite NAME]

Options:
  --pbus-build DIR   the CMake tree holding daemon/pbusd, tools/pbus,
                     daemon/pbus-hwd, tests/security/... (default: $PBUS_BUILD,
                     else build/dev of this checkout)
  --pbus-suite NAME  the prefix of the result names instead of the suite's
                     own (asan/hwd for the hwd suite on build/asan)

Fixtures (their machinery is in tests/pbustest/):
  pbus_build       the Build of --pbus-build (where each program is)
  pbus_tmp         a folder of the test module (mode 0755), removed after it
  pbus_instances   instance names unique to this run, with their folders;
                   what is left in /dev/shm under them is removed at the end
  pbus_instance    one fresh instance (.name, .state_dir, .sock_dir)
  pbus_daemons     every pbusd the module started (a Daemons list), all
                   stopped at its end, whatever happened
  pbusd            a real pbusd serving tests/cli/fixtures/test.pbs on
                   pbus_instance, ready (--notify-fd, never a sleep), stopped
                   after the test
  pbus_context     the CLI Context of the module (pbus against an instance)
  pbus_user        the unprivileged user pbus-test (created if missing; the
                   tests run as root), with code and programs run as it
  pbus_owner_user  the second unprivileged user pbus-test-owner
  pbus_notes       a list of what a specification leaves open, as seen;
                   printed after the run

Result lines: each test prints exactly one line when it is over (teardown
included), `PASS: <suite>/<case>` or `FAIL: <suite>/<case>: <reason>`, the
lines tests/run-all counts. A test module names its suite with SUITE
(cli, server, security/table ...) and <case> is the test function's name
without test_, with - for _ (test_get_all: cli/get-all). Modules without
SUITE (tests/gen) are named as their JUnit XML would be:
<folder>/<class or module>.<test name>. A skip, an xfail and an error in
setup or teardown are failures.
"""
import os
import shutil
import sys
import tempfile

import pytest

from pbustest import secutil
from pbustest.build import Build
from pbustest.check import Failure
from pbustest.cli import Context
from pbustest.daemon import CLI_SCHEMA, Daemon, Daemons, Instances

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_addoption(parser):
    group = parser.getgroup("parambus")
    group.addoption("--pbus-build", metavar="DIR",
                    default=os.environ.get("PBUS_BUILD") or os.path.join(TOP, "build", "dev"),
                    help="CMake tree with daemon/pbusd, tools/pbus, ... (default: $PBUS_BUILD, else build/dev)")
    group.addoption("--pbus-suite", metavar="NAME", default=None,
                    help="prefix of the PASS/FAIL names instead of the suite's own (e.g. asan/hwd)")


def pytest_configure(config):
    config.pluginmanager.register(ResultLines(config), "pbus-result-lines")


# --- Fixtures --------------------------------------------------------------------

@pytest.fixture(scope="session")
def pbus_build(pytestconfig):
    return Build(pytestconfig.getoption("pbus_build"))


@pytest.fixture(scope="session")
def pbus_verbose(pytestconfig):
    """-vv: the suites show every command they run (when output is shown)."""
    return pytestconfig.get_verbosity() >= 2


@pytest.fixture(scope="module")
def pbus_tmp():
    path = tempfile.mkdtemp(prefix="pbus-test-")
    os.chmod(path, 0o755)  # the unprivileged users reach sockets and copies here
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def pbus_instances(pbus_tmp):
    instances = Instances(pbus_tmp)
    yield instances
    instances.cleanup()


@pytest.fixture
def pbus_instance(pbus_instances):
    return pbus_instances.new()


@pytest.fixture(scope="module")
def pbus_daemons(pbus_build, pbus_tmp, pbus_instances):
    daemons = Daemons(pbus_build.pbusd, pbus_tmp)
    yield daemons
    daemons.stop_all()


@pytest.fixture
def pbusd(pbus_build, pbus_daemons, pbus_instance):
    pbus_build.require(pbus_build.pbusd)
    d = Daemon(pbus_daemons, pbus_instance.name, pbus_instance.state_dir, CLI_SCHEMA).start()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def pbus_context(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose):
    ctx = Context(pbus_build, pbus_tmp, pbus_daemons, pbus_instances, pbus_verbose)
    yield ctx
    ctx.cleanup()


@pytest.fixture(scope="session")
def pbus_user():
    return secutil.UnprivilegedUser(secutil.TEST_USER)


@pytest.fixture(scope="session")
def pbus_owner_user():
    return secutil.UnprivilegedUser(secutil.OWNER_USER)


@pytest.fixture(scope="session")
def pbus_notes(pytestconfig):
    return pytestconfig.pluginmanager.get_plugin("pbus-result-lines").notes


# --- Result lines ----------------------------------------------------------------

def case_name(function_name):
    """test_get_all -> get-all: a test function's name as the result lines give it."""
    if function_name.startswith("test_"):
        function_name = function_name[len("test_"):]
    return function_name.rstrip("_").replace("_", "-")


def result_name(item, suite=None):
    """<suite>/<case> of a test (see the top of this file)."""
    module = getattr(item, "module", None)
    folder = os.path.basename(os.path.dirname(str(item.path)))
    if module is not None and hasattr(module, "SUITE"):
        original = getattr(item, "originalname", item.name)
        return f"{suite or module.SUITE}/{case_name(original)}{item.name[len(original):]}"
    cls = getattr(item, "cls", None)
    owner = cls.__name__ if cls is not None else item.path.stem
    return f"{suite or folder}/{owner}.{item.name}"


def one_line(text, limit=3000):
    text = " | ".join(line.rstrip() for line in str(text).strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


def last_line(longrepr):
    lines = str(longrepr).strip().splitlines()
    return lines[-1] if lines else "failed"


def reason_of(report, call):
    """Why a phase of a test did not pass (None if it did)."""
    if hasattr(report, "wasxfail"):
        return f"marked xfail ({report.wasxfail or 'no reason'}): an expected failure is a defect"
    if report.passed:
        return None
    if report.skipped:
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        return f"skipped ({one_line(why)}): a skipped test is a defect"
    e = call.excinfo.value if call.excinfo is not None else None
    if isinstance(e, Failure):
        text = str(e)
    elif e is not None:
        text = f"{type(e).__name__}: {e}"
    else:
        text = last_line(report.longrepr)
    text = one_line(text)
    return text if report.when == "call" else f"in {report.when}: {text}"


class ResultLines:
    """The plugin that prints one PASS/FAIL line per test."""

    def __init__(self, config):
        self.config = config
        self.suite = config.getoption("pbus_suite")
        self.reasons = {}   # nodeid -> why its first phase that went wrong did
        self.notes = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.pbus_name = result_name(item, self.suite)
        report.pbus_reason = reason_of(report, call)

    def pytest_runtest_logreport(self, report):
        reason = getattr(report, "pbus_reason", None)
        if reason is not None:
            self.reasons.setdefault(report.nodeid, reason)
        if report.when == "teardown":
            name = getattr(report, "pbus_name", report.nodeid)
            reason = self.reasons.pop(report.nodeid, None)
            self.emit(f"PASS: {name}" if reason is None else f"FAIL: {name}: {reason}")

    def pytest_collectreport(self, report):
        if report.failed:
            folder = report.nodeid.split("/")[0] if "/" in report.nodeid else "tests"
            self.emit(f"FAIL: {self.suite or folder}/collect: {report.nodeid}: "
                      f"{one_line(last_line(report.longrepr))}")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_report_teststatus(self, report, config):
        # No progress letters: the result lines say it, each on its own line.
        outcome = yield
        category, _, word = outcome.get_result()
        outcome.force_result((category, "", word))

    def pytest_terminal_summary(self, terminalreporter):
        if self.notes:
            terminalreporter.section("what the specifications leave open, as seen")
            for note in self.notes:
                terminalreporter.write_line(f"    {note}")

    def emit(self, line):
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            return
        # A line of its own, whatever pytest wrote before (a file name, a
        # test's name and outcome with -v).
        terminal.ensure_newline()
        writer = getattr(terminal, "_tw", None)
        if writer is not None and getattr(writer, "width_of_current_line", 0):
            writer.line()
        terminal.write_line(line)
        terminal.flush()
