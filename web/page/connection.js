// connection.js: the one WebSocket to pbus-web (protocol parambus.v1,
// docs/web.md), opened again with a growing delay whenever it closes, so
// that the page survives restarts of pbus-web (and, through pbus-web's own
// "pbusd" messages, of pbusd) without a reload.
//
// The delay starts at 250 ms and doubles up to 5 s; it starts over once a
// socket brought its hello. A login or logout reopens the socket at once
// (reopen()): the session cookie is read by pbus-web at the handshake only.

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

export class Connection {
  /**
   * @param {object} handlers onmessage(msg), onstate(state, detail): state is
   *   "connecting", "open" or "closed" (detail: the close reason, the
   *   delay before the next attempt).
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.ws = null;
    this.delay = FIRST_DELAY_MS;
    this.timer = 0;
    this.nextId = 1;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  open() {
    clearTimeout(this.timer);
    this.timer = 0;
    this.handlers.onstate("connecting", "");
    let ws;
    try {
      ws = new WebSocket(this.url(), "parambus.v1");
    } catch (e) {
      this.retry(String(e));
      return;
    }
    this.ws = ws;
    ws.onmessage = (ev) => {
      if (ws !== this.ws) return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        console.warn("pbus-web sent a message that is not JSON", e);
        return;
      }
      if (msg.t === "hello") {
        this.delay = FIRST_DELAY_MS;
        this.handlers.onstate("open", "");
      }
      this.handlers.onmessage(msg);
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.retry(ev.reason || (ev.code === 1006 ? "connection lost" : `closed (${ev.code})`));
    };
  }

  retry(reason) {
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
    this.handlers.onstate("closed", { reason, delay });
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Closes the socket and opens a new one now (after a login or logout). */
  reopen() {
    const old = this.ws;
    this.ws = null;
    if (old) old.close(1000, "reopened");
    this.delay = FIRST_DELAY_MS;
    this.open();
  }

  /** Sends @msg (an object) if the socket is open; false if it is not. */
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** A new id for a set. */
  id() {
    return this.nextId++;
  }
}
