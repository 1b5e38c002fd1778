// panel.js: the front panel page of pbus-web (docs/web.md, "The page").
// It speaks parambus.v1 over one WebSocket (connection.js) and keeps one
// model of the instance's parameters, built from the `schema` message:
// for each parameter its schema entry, its latest value, status and
// timestamp, and the table cells that show them. A `values` message
// touches only the cells whose text changes, directly as it arrives
// (pbus-web sends at most one every --interval ms), then records each
// entry's latency (stats.js). Settings (settings.js) and the trend plot
// (trend.js) are fed from the same model.
//
// window.pbusApp is the page's state for tests and the curious: nothing
// there gives more than the page itself has (every write is checked by
// pbus-web and pbusd).

import { Connection } from "./connection.js";
import { formatAge, formatValue, isNumeric, stepDecimals } from "./format.js";
import { Settings } from "./settings.js";
import { nowRealtimeMs, recordLatency, stats } from "./stats.js";
import { Trend } from "./trend.js";

const $ = (id) => document.getElementById(id);
const STATUSES = new Set(["ok", "minor", "major", "invalid"]);

const app = {
  hello: null,
  schemaHash: null,
  params: [],            // index -> model entry
  byName: new Map(),
  pbusd: false,
  rendered: false,       // firstRenderMs recorded
  snapshot: false,       // the next values are the first of a connection
  connection: null,
  settings: null,
  trend: null,
};
window.pbusApp = app;

// --- the table -------------------------------------------------------------------

function buildTable(params) {
  const rows = [];
  for (const p of params) {
    const tr = document.createElement("tr");
    tr.dataset.name = p.name;
    const name = document.createElement("td");
    name.className = "name";
    name.textContent = p.name;
    if (p.description) name.title = p.description;
    const value = document.createElement("td");
    value.className = "value num";
    const unit = document.createElement("td");
    unit.className = "unit";
    unit.textContent = p.unit;
    const status = document.createElement("td");
    const badge = document.createElement("span");
    badge.className = "badge";
    status.append(badge);
    const age = document.createElement("td");
    age.className = "age num";
    if (!p.readable) {
      value.textContent = "not readable";
      value.classList.add("muted");
    }
    tr.append(name, value, unit, status, age);
    rows.push(tr);
    p.cells = { tr, value, badge, age };
  }
  $("param-rows").replaceChildren(...rows);
}

function model(P) {
  return {
    index: P.index,
    name: P.name,
    type: P.type,
    unit: P.unit || "",
    min: P.min,
    max: P.max,
    step: P.step,
    labels: P.labels,
    class: P.class,
    access: P.access,
    group: P.group,
    readable: P.readable !== false,
    description: P.description || "",
    decimals: stepDecimals(P.step),
    value: undefined,
    text: "",
    status: "",
    ms: NaN,
    ageText: "",
    cells: null,
  };
}

function onSchema(msg) {
  const sameParams = msg.schema_hash === app.schemaHash && app.params.length === msg.params.length;
  if (sameParams) {
    // The same schema again (a reconnect): keep the model and its values;
    // the access may differ (a login or logout in between).
    for (const P of msg.params) app.params[P.index].access = P.access;
  } else {
    app.params = [];
    app.byName = new Map();
    for (const P of msg.params) {
      const p = model(P);
      app.params[p.index] = p;
      app.byName.set(p.name, p);
    }
    app.schemaHash = msg.schema_hash;
    app.rendered = false;
    buildTable(app.params);
    app.trend.setSeries(app.params.filter((p) => p.class === "live" && p.readable && isNumeric(p.type)));
  }
  app.settings.build(app.params, app.hello || { user: null, can_write: false });
}

/** Applies one values entry [index, value, status, timestamp_ns, seq]. */
function applyEntry(e) {
  const p = app.params[e[0]];
  if (!p) return null;
  const value = e[1], status = e[2];
  const ms = Number(e[3]) / 1e6;
  const cells = p.cells;
  if (value !== p.value) {
    p.value = value;
    const text = formatValue(value, p);
    if (text !== p.text) {
      p.text = text;
      cells.value.textContent = text;
    }
    app.settings.update(p);
    if (p.name.startsWith("identity.")) showIdentity();
  }
  if (status !== p.status) {
    p.status = status;
    const s = STATUSES.has(status) ? status : "invalid";
    cells.badge.className = `badge st-${s}`;
    cells.badge.textContent = status;
    cells.tr.className = `st-${s}`;
  }
  if (ms !== p.ms) {
    p.ms = ms;
    if (app.trend.has(p.index)) app.trend.update(p.index, value, ms);
    const age = formatAge(Date.now() - ms);
    if (age !== p.ageText) {
      p.ageText = age;
      cells.age.textContent = age;
    }
  }
  return p;
}

function onValues(list) {
  for (let i = 0; i < list.length; i++) applyEntry(list[i]);
  const now = nowRealtimeMs();
  // The first values after a hello or after pbusd came back are the state
  // as it is, written whenever: not updates, so not latencies.
  if (app.snapshot) app.snapshot = false;
  else for (let i = 0; i < list.length; i++) recordLatency(now, list[i][3]);
  stats.messages++;
  if (!app.rendered && app.params.every((p) => !p.readable || p.value !== undefined)) {
    app.rendered = true;
    // painted: the frame after this one has started
    requestAnimationFrame(() => setTimeout(() => {
      if (stats.firstRenderMs === null) stats.firstRenderMs = performance.now();
    }, 0));
  }
}

// Ages: once a second, only the cells whose text changes.
function tickAges() {
  const now = Date.now();
  for (const p of app.params) {
    if (!p || !p.cells || Number.isNaN(p.ms)) continue;
    const age = formatAge(now - p.ms);
    if (age !== p.ageText) {
      p.ageText = age;
      p.cells.age.textContent = age;
    }
  }
}

// --- the header: identity, links, user -------------------------------------------

function identityValue(key) {
  const p = app.byName.get(`identity.${key}`);
  if (p && typeof p.value === "string" && p.value) return p.value;
  const id = app.hello && app.hello.identity;
  return id && id[key] ? String(id[key]) : "";
}

function showIdentity() {
  const make = [identityValue("manufacturer"), identityValue("model")].filter(Boolean).join(" ");
  const instance = app.hello ? app.hello.instance : "";
  $("title").textContent = make || instance || "parambus";
  document.title = `${make || instance} — parambus`;
  const details = [];
  if (instance) details.push(`instance ${instance}`);
  const serial = identityValue("serial"), firmware = identityValue("firmware");
  if (serial) details.push(`serial ${serial}`);
  if (firmware) details.push(`firmware ${firmware}`);
  const hello = app.hello || {};
  for (const [k, v] of Object.entries(hello.identity || {}))
    if (!["manufacturer", "model", "serial", "firmware"].includes(k) && v !== "" && v !== null) details.push(`${k} ${v}`);
  $("identity").textContent = details.join(" · ");
}

function setBadge(el, state, text) {
  el.className = `badge st-${state}`;
  el.textContent = text;
}

function showPbusd(connected) {
  app.pbusd = connected;
  setBadge($("link-pbusd"), connected ? "ok" : "major", connected ? "pbusd: connected" : "pbusd: not connected");
  $("param-rows").classList.toggle("stale", !connected);
  banner(connected ? "" : "pbus-web lost pbusd: the values shown are stale until it is back.");
}

function banner(text) {
  $("banner").textContent = text;
  $("banner").hidden = !text;
}

function showUser(hello) {
  const user = hello && hello.user;
  $("who").textContent = user ? `${user.name}${user.groups.length ? ` (${user.groups.join(", ")})` : ""}` : "not logged in";
  $("login-fields").hidden = !!user;
  $("logout").hidden = !user;
}

// --- login and logout (docs/web.md, "Security model") ----------------------------

async function postJson(path, body) {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? "{}" : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  let data = {};
  try {
    data = await r.json();
  } catch (e) {
    data = {};
  }
  return { status: r.status, data, retryAfter: r.headers.get("Retry-After") };
}

async function login(ev) {
  ev.preventDefault();
  const error = $("login-error");
  error.textContent = "";
  const user = $("login-user").value, password = $("login-password");
  try {
    const r = await postJson("/login", { user, password: password.value });
    if (r.status === 200) {
      password.value = "";
      app.connection.reopen();
    } else if (r.status === 429) {
      error.textContent = `too many attempts: try again in ${r.retryAfter || "a few"} s`;
    } else {
      error.textContent = r.data.error || `login refused (${r.status})`;
    }
  } catch (e) {
    error.textContent = `login failed: ${e.message}`;
  }
}

async function logout() {
  $("login-error").textContent = "";
  try {
    await postJson("/logout");
  } catch (e) {
    $("login-error").textContent = `logout failed: ${e.message}`;
  }
  app.connection.reopen();
}

// --- messages -------------------------------------------------------------------

function onMessage(msg) {
  switch (msg.t) {
  case "values":
    onValues(msg.values);
    break;
  case "hello":
    app.hello = msg;
    app.snapshot = true;
    showIdentity();
    showUser(msg);
    showPbusd(msg.pbusd);
    break;
  case "schema":
    onSchema(msg);
    break;
  case "pbusd":
    if (msg.connected) app.snapshot = true;
    showPbusd(msg.connected);
    break;
  case "set-result":
    if (Array.isArray(msg.values)) for (const e of msg.values) applyEntry(e);
    app.settings.result(msg);
    break;
  case "error":
    console.warn("pbus-web refused a message:", msg.error);
    banner(`pbus-web: ${msg.error}`);
    break;
  case "pong":
    break;
  default:
    console.warn("unknown message from pbus-web", msg.t);
  }
}

function onState(state, detail) {
  const el = $("link-web");
  if (state === "open") setBadge(el, "ok", "page: connected");
  else if (state === "connecting") setBadge(el, "minor", "page: connecting");
  else {
    setBadge(el, "major", `page: ${detail.reason}; again in ${(detail.delay / 1000).toFixed(1)} s`);
    setBadge($("link-pbusd"), "invalid", "pbusd: ?");
    $("param-rows").classList.add("stale");
    app.settings.abandon();
  }
}

function start() {
  app.settings = new Settings($("settings-section"), $("settings"), $("settings-hint"), (writes) => {
    const id = app.connection.id();
    return app.connection.send({ t: "set", id, writes }) ? id : null;
  });
  app.trend = new Trend($("trend-section"), $("trend"), {
    pause: $("trend-pause"), reset: $("trend-reset"), window: $("trend-window"),
  });
  app.connection = new Connection({ onmessage: onMessage, onstate: onState });
  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  setInterval(tickAges, 1000);
  app.connection.open();
}

start();
