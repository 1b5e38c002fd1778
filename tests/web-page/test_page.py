"""test_page.py: the front panel page (web/page/) in a real browser.

    build/venv/bin/python -m pytest -q -p no:cacheprovider tests/web-page \\
        --pbus-build build/dev

Debian's chromium, headless, driven through Debian's chromedriver by
Selenium (PyPI, pinned in gen/pyproject.toml): nothing is downloaded
(SE_OFFLINE, the driver and the browser named by path). One browser for
the module, a fresh profile in the module's folder. Each test starts the
real pbusd on the demo PSU's schema, the demo's simulator where live values
are needed, and pbus-web serving the built page (<build>/web/assets), on a
port the kernel picks; pbus-web and its users file come from pbustest.web,
as in the protocol suite (tests/web). Every wait polls the page or the
table until a deadline: no sleep stands for an event.
"""
import contextlib
import http.server
import os
import re
import select
import signal
import struct
import subprocess
import threading
import time

import pytest

os.environ["SE_OFFLINE"] = "true"   # selenium-manager must not fetch a driver or a browser
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402

from pbustest.check import TIMEOUT, Failure, check  # noqa: E402
from pbustest.daemon import stop_process  # noqa: E402
from pbustest.web import PASSWORDS, WebDaemon, connect, greeting, make_users_file  # noqa: E402

SUITE = "web-page"
HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,900"]
# How long a value may take from the table to the page (pbus-web sends at
# most every 20 ms; the rest is the browser).
UPDATE_BOUND_S = 2.0


@pytest.fixture(scope="module")
def users_file(pbus_build, pbus_tmp):
    """alice (instrument), bob, carol: pbustest.web's users."""
    return make_users_file(pbus_build, pbus_tmp)


# --- the browser ----------------------------------------------------------------

@pytest.fixture(scope="module")
def browser(pbus_tmp):
    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            raise Failure(f"{program} is missing: scripts/install-deps installs chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={os.path.join(pbus_tmp, 'chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(pbus_tmp, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(TIMEOUT)
    yield driver
    driver.quit()


class Panel:
    """pbusd (+ the simulator) and pbus-web with the page, for one test."""

    def __init__(self, build, daemons, instance, tmp, users, driver):
        self.build, self.daemons, self.instance, self.tmp = build, daemons, instance, tmp
        self.users, self.driver = users, driver
        self.assets = build.path("web", "assets")
        if not os.path.isfile(os.path.join(self.assets, "index.html")):
            raise Failure(f"{self.assets}/index.html not built (target web-page)")
        self.pbusd_args = ["--socket-dir", instance.sock_dir, "--save-delay", "0"]
        self.pbusd = self.web = self.sim = None
        self.webs = []

    def start_pbusd(self):
        self.pbusd = self.daemons.start(self.instance.name, self.instance.state_dir, schema=self.build.psu_schema,
                                        extra=self.pbusd_args)

    def start_web(self, port=0, extra=()):
        args = ["--assets", self.assets, "--users", self.users, "--listen", f"127.0.0.1:{port}"] + list(extra)
        self.web = WebDaemon(self.build, self.instance, self.tmp, args).start()
        self.webs.append(self.web)
        return self.web

    def start_sim(self):
        self.build.require(self.build.psu_sim)
        log = open(os.path.join(self.tmp, f"psu-sim-{self.instance.name}.log"), "ab")
        self.sim = subprocess.Popen([self.build.psu_sim, self.instance.name, "200"], stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=log,
                                    env=dict(os.environ, PBUS_SOCKET_DIR=self.instance.sock_dir))
        log.close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.web.port}/"

    def pbus(self, *args, ok=True):
        r = subprocess.run([self.build.pbus, "-i", self.instance.name] + list(args), capture_output=True,
                           text=True, timeout=TIMEOUT, env=dict(os.environ, PBUS_SOCKET_DIR=self.instance.sock_dir))
        if ok and r.returncode != 0:
            raise Failure(f"pbus {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
        return r.stdout.strip()

    def stop(self):
        if self.sim is not None:
            stop_process(self.sim)
        results = [(w, w.proc.poll() is None, w.stop()) for w in self.webs]
        if self.pbusd is not None:
            self.pbusd.stop()
        return results


@pytest.fixture
def panel(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, users_file, browser):
    """pbusd on the demo's schema and pbus-web with the page (started),
    the browser on nothing yet and without cookies. After the test every
    pbus-web that still ran must exit 0 on SIGTERM, and the page must not
    have broken its Content-Security-Policy."""
    p = Panel(pbus_build, pbus_daemons, pbus_instance, pbus_tmp, users_file, browser)
    p.start_pbusd()
    p.start_web()
    browser.get("about:blank")
    browser.delete_all_cookies()
    browser.get_log("browser")  # drop what earlier tests left
    yield p
    try:
        csp = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
        browser.get("about:blank")
    finally:
        results = p.stop()
    for web, alive, rc in results:
        if alive:
            check(rc == 0, f"pbus-web exit status {rc} after SIGTERM: {web.log()}")
    check(not csp, f"the page broke its Content-Security-Policy: {csp[:3]}")


# --- helpers --------------------------------------------------------------------

def until(fn, what, timeout=TIMEOUT, interval=0.05):
    """fn()'s first true result, polled until @timeout s: Failure naming
    @what (and fn's last result) after that."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = fn()
        except WebDriverException as e:
            last = f"{type(e).__name__}: {e.msg}"
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise Failure(f"{what}: not within {timeout} s (last: {str(last)[:300]})")
        time.sleep(interval)


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def row(driver, name):
    """{value, unit, status, age} of parameter @name's row (None without one)."""
    return js(driver, """
        const tr = document.querySelector(`tr[data-name="${arguments[0]}"]`);
        if (!tr) return null;
        const c = tr.cells;
        return {value: c[1].textContent, unit: c[2].textContent, status: c[3].textContent, age: c[4].textContent};
    """, name)


def open_page(p):
    """The page loaded and showing values (the first full render)."""
    p.driver.get(p.url)
    until(lambda: js(p.driver, "return window.pbusStats && window.pbusStats.firstRenderMs !== null"),
          "the page's first full render")
    js(p.driver, "window.pbusNotReloaded = true")


def not_reloaded(driver):
    return js(driver, "return window.pbusNotReloaded === true")


def setting(driver, name):
    """{value, disabled, message, pending} of the setting @name's control."""
    return js(driver, """
        const f = document.querySelector(`form.setting[data-name="${arguments[0]}"]`);
        if (!f) return null;
        const i = f.querySelector("input, select");
        return {value: i.type === "checkbox" ? String(i.checked) : i.value, disabled: i.disabled,
                message: f.querySelector(".message").textContent, pending: f.classList.contains("pending")};
    """, name)


def form_login(p, user, password=None):
    d = p.driver
    d.find_element(By.ID, "login-user").clear()
    d.find_element(By.ID, "login-user").send_keys(user)
    d.find_element(By.ID, "login-password").send_keys(PASSWORDS[user] if password is None else password)
    d.find_element(By.ID, "login-submit").click()


def logged_in_as(d, user):
    return d.find_element(By.ID, "who").text.startswith(user) and d.find_element(By.ID, "logout").is_displayed()


def type_setting(p, name, text):
    """Types @text into the setting @name's field and sends it (Enter)."""
    field = p.driver.find_element(By.CSS_SELECTOR, f'form.setting[data-name="{name}"] input')
    field.clear()
    field.send_keys(text + Keys.ENTER)


def schema_of(p):
    """The parameters pbus-web sends (through pbustest.web's client)."""
    with contextlib.closing(connect(p.web)) as ws:
        _, schema = greeting(ws)
    return schema["params"]


TREND_PIXELS = """
    // pixels of the series' colours (their legend markers') on the trend's canvas
    const canvas = document.querySelector("#trend canvas");
    const markers = [...document.querySelectorAll("#trend .u-series .u-marker")].slice(1);
    if (!canvas || !markers.length) return -1;
    const colours = markers.map(m => getComputedStyle(m).borderColor.match(/\\d+/g).map(Number));
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4)
        if (data[i + 3] > 128 && colours.some(m => Math.abs(data[i] - m[0]) < 40 &&
                Math.abs(data[i + 1] - m[1]) < 40 && Math.abs(data[i + 2] - m[2]) < 40)) n++;
    return n;
"""


def trend_pixels(driver):
    return js(driver, TREND_PIXELS)


# --- tests ------------------------------------------------------------------------

def test_shows_parameters_and_units(panel):
    open_page(panel)
    d = panel.driver
    params = schema_of(panel)
    check(len(params) >= 15, f"the demo's schema has {len(params)} parameters")
    for param in params:
        r = row(d, param["name"])
        check(r is not None, f"no row for {param['name']}")
        check(r["unit"] == param["unit"], f"{param['name']}: unit {r['unit']!r}, the schema says {param['unit']!r}")
        check(r["status"] in ("ok", "minor", "major", "invalid"), f"{param['name']}: status {r['status']!r}")
    check(row(d, "voltage_setpoint")["unit"] == "V" and row(d, "temperature")["unit"] == "degC", "units")
    for name in ("identity.manufacturer", "identity.model", "ovp_level", "output_state", "fan_duty"):
        shown, table = row(d, name)["value"], panel.pbus("get", name)
        check(shown == table or (re.fullmatch(r"-?\d+(\.\d+)?", shown) and float(shown) == float(table)),
              f"{name}: the page shows {shown!r}, the table holds {table!r}")
    title = d.find_element(By.ID, "title").text
    check(title == "ACME Instruments PSU-3005", f"identity in the header: {title!r}")
    check(d.find_element(By.ID, "link-web").text == "page: connected", "the page's link state")
    check(d.find_element(By.ID, "link-pbusd").text == "pbusd: connected", "pbusd's link state")
    check(until(lambda: row(d, "voltage_setpoint")["age"].endswith(" s"), "an age"), "age")


def test_alarm_status_shown(panel):
    """An alarm status the table holds shows as its text and colour class."""
    panel.start_sim()  # makes temperature live; its status follows
    open_page(panel)
    d = panel.driver
    panel.pbus("set", "voltage_setpoint=5", "current_setpoint=0.05", "output_enable=true")
    # constant-current mode: the simulator marks measured_current minor
    until(lambda: row(d, "measured_current")["status"] == "minor", "measured_current minor (constant current)")
    cls = js(d, """return document.querySelector('tr[data-name="measured_current"] .badge').className""")
    check("st-minor" in cls, f"the minor badge's class: {cls}")
    colour = js(d, """return getComputedStyle(document.querySelector(
        'tr[data-name="measured_current"] .badge')).backgroundColor""")
    ok_colour = js(d, """return getComputedStyle(document.querySelector(
        'tr[data-name="voltage_setpoint"] .badge')).backgroundColor""")
    check(colour != ok_colour, f"minor and ok badges have one colour: {colour}")


def test_pbus_set_appears(panel):
    open_page(panel)
    d = panel.driver
    for value, shown in (("7.25", "7.250"), ("12.125", "12.125")):
        t0 = time.monotonic()
        panel.pbus("set", f"voltage_setpoint={value}")
        until(lambda: row(d, "voltage_setpoint")["value"] == shown, f"voltage_setpoint {shown} in the page",
              timeout=UPDATE_BOUND_S)
        elapsed = time.monotonic() - t0
        check(elapsed < UPDATE_BOUND_S, f"{elapsed:.2f} s")
    panel.pbus("set", "output_enable=true")
    until(lambda: row(d, "output_enable")["value"] == "true", "output_enable true", timeout=UPDATE_BOUND_S)
    stats = js(d, "return {count: pbusStats.count, latest: pbusStats.latencies[(pbusStats.count - 1) & 65535]}")
    check(stats["count"] > 0 and -1000 < stats["latest"] < 5000, f"window.pbusStats: {stats}")


def test_setting_from_page_reaches_table(panel):
    open_page(panel)
    d = panel.driver
    form_login(panel, "alice")
    until(lambda: setting(d, "voltage_setpoint")["disabled"] is False, "voltage_setpoint enabled after the login")
    type_setting(panel, "voltage_setpoint", "12.5")
    until(lambda: panel.pbus("get", "voltage_setpoint") == "12.5", "voltage_setpoint=12.5 in the table")
    until(lambda: row(d, "voltage_setpoint")["value"] == "12.500", "the table row shows 12.500")
    until(lambda: not setting(d, "voltage_setpoint")["pending"], "the write answered")
    check(setting(d, "voltage_setpoint")["message"] == "", f"a message: {setting(d, 'voltage_setpoint')}")
    # a switch and a select send as they change
    d.find_element(By.CSS_SELECTOR, 'form.setting[data-name="output_enable"] input').click()
    until(lambda: panel.pbus("get", "output_enable") == "true", "output_enable=true in the table")
    type_setting(panel, "fan_duty", "55")
    until(lambda: panel.pbus("get", "fan_duty") == "55", "fan_duty=55 in the table")


def test_out_of_range_refused(panel):
    panel.pbus("set", "voltage_setpoint=4.5")
    open_page(panel)
    d = panel.driver
    form_login(panel, "alice")
    until(lambda: setting(d, "voltage_setpoint")["disabled"] is False, "voltage_setpoint enabled after the login")
    type_setting(panel, "voltage_setpoint", "99")
    message = "set voltage_setpoint=99: value out of range (0 \u2026 30 V)"
    until(lambda: setting(d, "voltage_setpoint")["message"] == message, "the server's message beside the field")
    check(setting(d, "voltage_setpoint")["value"] == "4.5", f"the field did not revert: {setting(d, 'voltage_setpoint')}")
    cls = js(d, """return document.querySelector('form.setting[data-name="voltage_setpoint"] .message').className""")
    check("error" in cls, f"the message is not marked an error: {cls}")
    check(panel.pbus("get", "voltage_setpoint") == "4.5", "the table changed")
    type_setting(panel, "ovp_level", "0.5")
    until(lambda: "ovp_level=0.5: value out of range (1 \u2026 33 V)" in setting(d, "ovp_level")["message"],
          "ovp_level's message")
    check(setting(d, "ovp_level")["value"] == "33", f"ovp_level did not revert: {setting(d, 'ovp_level')}")


def test_anonymous_cannot_write(panel):
    open_page(panel)
    d = panel.driver
    names = js(d, "return [...document.querySelectorAll('form.setting')].map(f => f.dataset.name)")
    check({"voltage_setpoint", "current_setpoint", "output_enable", "fan_duty"} <= set(names), f"settings {names}")
    for name in names:
        check(setting(d, name)["disabled"] is True, f"{name}'s control is enabled without a login")
    check(d.find_element(By.ID, "settings-hint").text == "Log in to change settings.", "the hint")
    # a set forged over the page's own socket is refused by pbus-web
    result = d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const ws = window.pbusApp.connection.ws;
        ws.addEventListener("message", (ev) => {
            const m = JSON.parse(ev.data);
            if (m.t === "set-result" && m.id === "forged") done(m);
        });
        ws.send(JSON.stringify({t: "set", id: "forged", writes: [{name: "voltage_setpoint", value: "21"}]}));
    """)
    check(result["ok"] is False and result["error"] == "set: writing needs a login", f"the forged set: {result}")
    check(panel.pbus("get", "voltage_setpoint") == "0", "the table changed")


class EvilSite:
    """Another origin: an HTTP server on another port whose page opens a
    WebSocket to pbus-web (?port=N) and writes what happened in its title."""

    PAGE = b"""<!doctype html><title>waiting</title><script>
const port = new URLSearchParams(location.search).get("port");
const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, "parambus.v1");
let opened = false;
ws.onopen = () => { opened = true; document.title = "opened"; };
ws.onclose = (e) => { if (!opened) document.title = "refused " + e.code; };
</script>"""

    def __init__(self):
        page = self.PAGE

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_wrong_origin_refused(panel):
    d = panel.driver
    evil = EvilSite()
    try:
        d.get(f"http://127.0.0.1:{evil.port}/?port={panel.web.port}")
        title = until(lambda: d.title if d.title != "waiting" else None, "the other origin's WebSocket settled")
        check(title.startswith("refused"), f"a WebSocket from http://127.0.0.1:{evil.port}: {title}")
        # the same page from an origin pbus-web is told to allow opens it:
        # the refusal above was the Origin's
        allowing = panel.start_web(extra=["--allow-origin", f"http://127.0.0.1:{evil.port}"])
        d.get(f"http://127.0.0.1:{evil.port}/?port={allowing.port}")
        title = until(lambda: d.title if d.title != "waiting" else None, "the allowed origin's WebSocket settled")
        check(title == "opened", f"with --allow-origin: {title}")
    finally:
        d.get("about:blank")
        evil.close()


def test_recovers_after_pbusd_restart(panel):
    open_page(panel)
    d = panel.driver
    panel.pbusd.stop()
    until(lambda: d.find_element(By.ID, "link-pbusd").text == "pbusd: not connected", "pbusd shown lost")
    check(d.find_element(By.ID, "banner").is_displayed(), "no banner while pbusd is away")
    check(js(d, "return document.getElementById('param-rows').classList.contains('stale')"), "values not stale")
    panel.start_pbusd()
    until(lambda: d.find_element(By.ID, "link-pbusd").text == "pbusd: connected", "pbusd shown back")
    panel.pbus("set", "voltage_setpoint=3.5")
    until(lambda: row(d, "voltage_setpoint")["value"] == "3.500", "a value written after the restart")
    check(not d.find_element(By.ID, "banner").is_displayed(), "the banner stays")
    check(not_reloaded(d), "the page was reloaded")


def test_recovers_after_web_restart(panel):
    open_page(panel)
    d = panel.driver
    port = panel.web.port
    check(panel.web.stop() == 0, "pbus-web's exit status")
    until(lambda: d.find_element(By.ID, "link-web").text.startswith("page: ")
          and d.find_element(By.ID, "link-web").text != "page: connected", "the page shown disconnected")
    panel.start_web(port=port)
    until(lambda: d.find_element(By.ID, "link-web").text == "page: connected", "the page shown connected again",
          timeout=TIMEOUT + 6)
    panel.pbus("set", "current_setpoint=2.25")
    until(lambda: row(d, "current_setpoint")["value"] == "2.250", "a value written after the restart")
    check(not_reloaded(d), "the page was reloaded")


def test_trend_draws_points(panel):
    panel.start_sim()
    panel.pbus("set", "voltage_setpoint=5", "current_setpoint=1", "output_enable=true")
    open_page(panel)
    d = panel.driver
    Select(d.find_element(By.ID, "trend-window")).select_by_value("60")   # 1 min: the line grows ~20 px/s
    first = until(lambda: (lambda n: n if n > 0 else None)(trend_pixels(d)), "the first points on the canvas")
    until(lambda: trend_pixels(d) > first + 20, f"more points than {first}")
    # Pause: values keep coming, the canvas stays as it is
    d.find_element(By.ID, "trend-pause").click()
    check(d.find_element(By.ID, "trend-pause").text == "Resume", "the pause button")
    held, messages = trend_pixels(d), js(d, "return pbusStats.messages")
    until(lambda: js(d, "return pbusStats.messages") > messages + 25, "values while paused")
    check(trend_pixels(d) == held, "the paused plot changed")
    d.find_element(By.ID, "trend-pause").click()
    until(lambda: trend_pixels(d) != held, "the plot moving again after Resume")
    # Zoom: a drag across the plot narrows x and holds the plot
    over = d.find_element(By.CSS_SELECTOR, "#trend .u-over")
    width = over.size["width"]
    drag = ActionChains(d).move_to_element_with_offset(over, -width // 4, 0).click_and_hold()  # from the centre
    for _ in range(5):
        drag.move_by_offset(width // 20, 0)
    drag.release().perform()
    span = js(d, "const x = pbusApp.trend.plot.scales.x; return x.max - x.min")
    check(span < 40, f"x spans {span:.1f} s after the zoom (the window is 60 s)")
    check(d.find_element(By.ID, "trend-pause").text == "Resume", "a zoom does not hold the plot")
    d.find_element(By.ID, "trend-reset").click()
    until(lambda: js(d, "const x = pbusApp.trend.plot.scales.x; return x.max - x.min") > 59, "Reset undoes the zoom")
    check(d.find_element(By.ID, "trend-pause").text == "Pause", "Reset does not follow again")


def test_login_logout_form(panel):
    open_page(panel)
    d = panel.driver
    form_login(panel, "alice", "wrong password")
    until(lambda: d.find_element(By.ID, "login-error").text == "wrong user name or password", "the refusal shown")
    check(setting(d, "voltage_setpoint")["disabled"] is True, "enabled after a failed login")
    d.find_element(By.ID, "login-password").clear()
    form_login(panel, "alice")
    until(lambda: logged_in_as(d, "alice"), "alice shown logged in")
    until(lambda: setting(d, "voltage_setpoint")["disabled"] is False, "controls enabled after the login")
    check(d.find_element(By.ID, "login-error").text == "", "the old error stays")
    check(d.find_element(By.ID, "settings-hint").text == "", "the hint stays")
    check(d.find_element(By.ID, "login-password").get_attribute("value") == "", "the password stays in the form")
    cookie = d.get_cookie("pbus_session")
    check(cookie is not None and cookie["httpOnly"], f"the session cookie: {cookie}")
    d.find_element(By.ID, "logout").click()
    until(lambda: d.find_element(By.ID, "who").text == "not logged in", "logged out")
    until(lambda: setting(d, "voltage_setpoint")["disabled"] is True, "controls disabled after the logout")
    check(d.find_element(By.ID, "login-user").is_displayed(), "no login form after the logout")
    # bob may log in but not write the instrument's settings
    form_login(panel, "bob")
    until(lambda: logged_in_as(d, "bob"), "bob shown logged in")
    until(lambda: d.find_element(By.ID, "settings-hint").text == "This user may not change settings.", "bob's hint")
    check(setting(d, "voltage_setpoint")["disabled"] is True, "bob's controls enabled")
    check(not_reloaded(d), "a login or logout reloaded the page")


def test_phone_without_horizontal_overflow(panel):
    d = panel.driver
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    try:
        panel.start_sim()
        open_page(panel)
        until(lambda: trend_pixels(d) > 0, "the trend drawn")
        sizes = js(d, """return {inner: window.innerWidth, doc: document.documentElement.scrollWidth,
                                 body: document.body.scrollWidth,
                                 widest: Math.max(...[...document.querySelectorAll("body *")].map(
                                     e => e.getBoundingClientRect().right))}""")
        check(sizes["inner"] == 390, f"the emulated width: {sizes}")
        check(sizes["doc"] <= sizes["inner"] and sizes["body"] <= sizes["inner"], f"horizontal overflow: {sizes}")
        check(sizes["widest"] <= sizes["inner"] + 0.5, f"an element sticks out: {sizes}")
        check(row(d, "measured_voltage") is not None, "no parameter rows")
        os.makedirs(panel.build.path("web-page"), exist_ok=True)
        d.save_screenshot(panel.build.path("web-page", "screenshot-phone.png"))
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def test_screenshot(panel):
    """build/<tree>/web-page/screenshot.png: the page with the simulator
    running, the trend drawn, a user logged in."""
    panel.start_sim()
    panel.pbus("set", "voltage_setpoint=12", "current_setpoint=1.5", "output_enable=true")
    open_page(panel)
    d = panel.driver
    form_login(panel, "alice")
    until(lambda: setting(d, "voltage_setpoint")["disabled"] is False, "logged in")
    first = until(lambda: (lambda n: n if n > 0 else None)(trend_pixels(d)), "the trend drawn")
    until(lambda: trend_pixels(d) > first + 10, "the trend growing")
    d.set_window_size(1280, 1400)
    until(lambda: js(d, "return window.innerWidth") == 1280, "the window resized")
    out = panel.build.path("web-page", "screenshot.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    check(d.save_screenshot(out), "save_screenshot failed")
    width, height = png_size(out)
    check(width == 1280 and height > 800 and os.path.getsize(out) > 20000, f"{out}: {width}x{height}")
    d.set_window_size(1280, 900)


def test_stats_and_page_weight(panel):
    """window.pbusStats as the benchmark reads it, and everything the page
    loads (as pbus-web serves it) under the 300 KiB target."""
    open_page(panel)
    d = panel.driver
    # the first values are the state as it is, not updates: no latencies
    check(js(d, "return pbusStats.count") == 0 and js(d, "return pbusStats.messages") >= 1,
          f"after the first values: {js(d, 'return [pbusStats.count, pbusStats.messages]')}")
    panel.pbus("set", "voltage_setpoint=3")
    until(lambda: js(d, "return pbusStats.count") >= 1, "the latency of one update")
    one = js(d, "return [pbusStats.count, pbusStats.latencies[0]]")
    check(one[0] == 1 and -50 < one[1] < UPDATE_BOUND_S * 1000, f"one write, one latency: {one}")
    panel.start_sim()
    until(lambda: js(d, "return pbusStats.count") > 200, "latencies recorded")
    s = js(d, """const s = pbusStats, n = Math.min(s.count, s.latencies.length);
                 const l = Array.from(s.latencies.subarray(0, n));
                 return {n, first: s.firstRenderMs, min: Math.min(...l), max: Math.max(...l),
                         ring: s.latencies.length, typed: s.latencies instanceof Float64Array}""")
    check(s["typed"] and s["ring"] >= 4096, f"the ring: {s}")
    check(0 < s["first"] < 10000, f"firstRenderMs {s['first']}")
    check(-50 < s["min"] and s["max"] < 5000, f"latencies out of bounds: {s}")
    js(d, "pbusStats.reset()")
    check(js(d, "return pbusStats.count") < 50, "reset() kept the count")
    sizes = js(d, """return performance.getEntriesByType("resource").map(e => [e.name, e.transferSize])
                          .concat([[location.href, performance.getEntriesByType("navigation")[0].transferSize]])""")
    names = {os.path.basename(n.split("?")[0]) for n, _ in sizes}
    check({"panel.js", "uPlot.iife.min.js", "panel.css", "trend.js"} <= names, f"loaded: {names}")
    total = sum(size for _, size in sizes)
    check(0 < total < 300 * 1024, f"the page weighs {total} bytes as served")


def test_demo_serves_the_page(pbus_build, pbus_tmp, pbus_instances, browser):
    """`make demo` (examples/psu/run-demo) starts pbus-web with the built
    page and prints its URL and the demo user's login, which writes."""
    d = browser
    instance = pbus_instances.name("psu-demo")
    state = os.path.join(pbus_tmp, f"{instance}-state")
    env = dict(os.environ, PBUS_DEMO_INSTANCE=instance, PBUS_DEMO_STATE=state, PBUS_DEMO_SCPI="off",
               PBUS_DEMO_WEB="127.0.0.1:0", PBUS_DEMO_CHANGES="100000")
    demo = subprocess.Popen([os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "psu", "run-demo"),
                             pbus_build.dir], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, deadline = b"", time.monotonic() + TIMEOUT
        while b"Ctrl-C stops the demo" not in out:
            check(time.monotonic() < deadline, f"run-demo did not start: {out.decode(errors='replace')}")
            chunk = select.select([demo.stdout], [], [], 0.5)[0] and os.read(demo.stdout.fileno(), 65536)
            check(chunk != b"", f"run-demo ended: {out.decode(errors='replace')}")
            out += chunk or b""
        text = out.decode(errors="replace")
        url = re.search(r"Web front panel on (http://127\.0\.0\.1:\d+/)", text)
        password = re.search(r"user demo, password (\S+)", text)
        check(url and password, f"no URL or login in run-demo's output: {text[-800:]}")
        with open(os.path.join(state, "web-password")) as f:
            check(f.read().strip() == password.group(1), "the printed password is not the kept one")
        check(os.stat(os.path.join(state, "web-users")).st_mode & 0o077 == 0, "web-users readable by others")
        d.delete_all_cookies()
        d.get(url.group(1))
        until(lambda: js(d, "return window.pbusStats && pbusStats.firstRenderMs !== null"), "the demo's page")
        until(lambda: d.find_element(By.ID, "title").text == "ACME Instruments PSU-3005", "the demo's identity")
        until(lambda: re.fullmatch(r"\d+\.\d+", row(d, "measured_voltage")["value"] or ""), "a measured voltage")
        d.find_element(By.ID, "login-user").send_keys("demo")
        d.find_element(By.ID, "login-password").send_keys(password.group(1))
        d.find_element(By.ID, "login-submit").click()
        until(lambda: setting(d, "voltage_setpoint")["disabled"] is False, "the demo user may write")
        field = d.find_element(By.CSS_SELECTOR, 'form.setting[data-name="voltage_setpoint"] input')
        field.clear()
        field.send_keys("6.5" + Keys.ENTER)
        pbus = [pbus_build.pbus, "-i", instance, "get", "voltage_setpoint"]
        until(lambda: subprocess.run(pbus, capture_output=True, text=True, timeout=TIMEOUT).stdout.strip() == "6.5",
              "the demo's voltage_setpoint set from the page")
    finally:
        d.get("about:blank")
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it
            try:
                demo.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(demo.pid, signal.SIGKILL)
                demo.communicate()
    check(demo.returncode in (0, 130), f"run-demo's exit status after Ctrl-C: {demo.returncode}")
