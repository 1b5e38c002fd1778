// settings.js: the controls of the writable parameters, generated from the
// schema pbus-web sends (docs/web.md, "schema"): a number field with the
// parameter's limits and step, a select of an enumeration's labels, a
// switch for a bool, a text field for the rest (strings, arrays, bytes in
// pbus set's notation).
//
// The page checks nothing itself (the forms are novalidate): every write
// goes to pbus-web as a `set`, and pbusd decides. A refused write shows
// the server's one-line message beside the field, and the field goes back
// to the parameter's true value (the set-result's values). A field being
// edited (changed, not yet sent) is not overwritten by incoming values;
// Escape drops the edit.

import { fieldText, isInteger, isNumeric } from "./format.js";

export class Settings {
  /**
   * @param {HTMLElement} section, container, hint
   * @param {function} send (writes) -> id of the set, or null when the socket is closed
   */
  constructor(section, container, hint, send) {
    this.section = section;
    this.container = container;
    this.hint = hint;
    this.send = send;
    this.controls = new Map();   // parameter index -> control
    this.pending = new Map();    // set id -> control
    this.signature = "";
  }

  /** Builds the controls for @params (the model of panel.js) unless the
   *  same parameters with the same access have them already. */
  build(params, hello) {
    const writable = params.filter((p) => p.access !== "read-only");
    const signature = writable.map((p) => `${p.index}:${p.name}:${p.type}:${p.access}`).join("|");
    this.updateHint(writable, hello);
    if (signature === this.signature) return;
    this.signature = signature;
    this.controls.clear();
    this.pending.clear();
    this.container.replaceChildren();
    for (const p of writable) {
      const c = this.control(p);
      this.controls.set(p.index, c);
      this.container.append(c.form);
      this.show(c, p);
    }
    this.section.hidden = writable.length === 0;
  }

  updateHint(writable, hello) {
    let text = "";
    if (!hello.user && writable.length) text = "Log in to change settings.";
    else if (hello.user && !hello.can_write && writable.length) text = "This user may not change settings.";
    this.hint.textContent = text;
  }

  control(p) {
    const form = document.createElement("form");
    form.className = "setting";
    form.noValidate = true;
    form.dataset.name = p.name;
    const id = `set-${p.index}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = p.name;
    if (p.description) label.title = p.description;
    const enabled = p.access === "writable";
    let input, kind;
    if (p.type === "bool") {
      kind = "bool";
      input = document.createElement("input");
      input.type = "checkbox";
      input.className = "switch";
      input.setAttribute("role", "switch");
    } else if (p.type === "enum" && Array.isArray(p.labels)) {
      kind = "enum";
      input = document.createElement("select");
      for (const l of p.labels) input.append(new Option(l, l));
    } else if (isNumeric(p.type)) {
      kind = "number";
      input = document.createElement("input");
      input.type = "number";
      if (typeof p.min === "number") input.min = String(p.min);
      if (typeof p.max === "number") input.max = String(p.max);
      input.step = typeof p.step === "number" ? String(p.step) : isInteger(p.type) ? "1" : "any";
      input.inputMode = isInteger(p.type) ? "numeric" : "decimal";
    } else {
      kind = "text";
      input = document.createElement("input");
      input.type = "text";
      input.spellcheck = false;
    }
    input.id = id;
    input.name = p.name;
    input.disabled = !enabled;
    const unit = document.createElement("span");
    unit.className = "unit";
    unit.textContent = p.unit;
    const row = document.createElement("div");
    row.className = "setting-row";
    row.append(input, unit);
    let button = null;
    if (kind === "number" || kind === "text") {
      button = document.createElement("button");
      button.type = "submit";
      button.textContent = "Set";
      button.disabled = !enabled;
      row.append(button);
    }
    const message = document.createElement("span");
    message.className = "message";
    message.setAttribute("role", "status");
    const limits = document.createElement("span");
    limits.className = "limits muted";
    if (kind === "number" && (typeof p.min === "number" || typeof p.max === "number"))
      limits.textContent = `${p.min ?? "…"} … ${p.max ?? "…"}`;
    form.append(label, row, limits, message);
    if (!enabled) form.classList.add("read-only");

    const c = { param: p, form, input, button, message, kind, dirty: false, pending: 0 };
    if (kind === "bool" || kind === "enum") {
      input.addEventListener("change", () => this.write(c));
    } else {
      input.addEventListener("input", () => {
        c.dirty = true;
        form.classList.add("dirty");
      });
      input.addEventListener("keydown", (ev) => {
        if (ev.key === "Escape") {
          c.dirty = false;
          form.classList.remove("dirty");
          this.show(c, c.param);
        }
      });
    }
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (kind === "number" || kind === "text") this.write(c);
    });
    return c;
  }

  text(c) {
    if (c.kind === "bool") return c.input.checked ? "true" : "false";
    return c.input.value;
  }

  write(c) {
    if (c.input.disabled) return;
    const value = this.text(c);
    const id = this.send([{ name: c.param.name, value }]);
    if (id === null) {
      this.fail(c, "not connected to the instrument");
      return;
    }
    c.pending = id;
    this.pending.set(id, c);
    c.form.classList.add("pending");
    c.message.textContent = "";
    c.message.classList.remove("error");
  }

  fail(c, text) {
    c.message.textContent = text;
    c.message.classList.add("error");
    c.dirty = false;
    c.form.classList.remove("dirty");
    this.show(c, c.param);
  }

  /** A set-result (after its values were applied to the model). */
  result(msg) {
    const c = this.pending.get(msg.id);
    if (!c) return false;
    this.pending.delete(msg.id);
    if (c.pending !== msg.id) return true;   // a later write of the same field is on its way
    c.pending = 0;
    c.form.classList.remove("pending");
    if (msg.ok) {
      c.message.textContent = "";
      c.message.classList.remove("error");
      c.dirty = false;
      c.form.classList.remove("dirty");
      this.show(c, c.param);
    } else {
      this.fail(c, String(msg.error || "refused"));
    }
    return true;
  }

  /** Sockets closed: no set-result will come for what was pending. */
  abandon() {
    for (const c of this.pending.values()) {
      c.pending = 0;
      c.form.classList.remove("pending");
      this.fail(c, "connection lost: the write may not have been made");
    }
    this.pending.clear();
  }

  /** Parameter @p has a new value: its field shows it unless being edited. */
  update(p) {
    const c = this.controls.get(p.index);
    if (c && !c.dirty && !c.pending) this.show(c, p);
  }

  show(c, p) {
    const v = p.value;
    if (c.kind === "bool") c.input.checked = v === true;
    else if (c.kind === "enum") {
      if (v !== undefined) c.input.value = String(v);
    } else {
      const text = fieldText(v);
      if (c.input.value !== text) c.input.value = text;
    }
  }
}
