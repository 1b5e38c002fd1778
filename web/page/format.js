// format.js: how the page writes values and ages. A value arrives as JSON
// (docs/web.md, "Values"): a number for numeric scalars, true/false for
// bool, the C library's text for everything else (also for numbers JSON
// cannot carry: NaN, infinities, long integers).

const NUMERIC = /^(u?int(8|16|32|64)|float|double)$/;

/** Whether a schema type is a numeric scalar (a trend candidate, a number field). */
export function isNumeric(type) {
  return NUMERIC.test(type);
}

/** Whether a schema type is an integer scalar. */
export function isInteger(type) {
  return /^u?int(8|16|32|64)$/.test(type);
}

/** Decimals a step asks for (0.001 -> 3), or null without a step. */
export function stepDecimals(step) {
  if (typeof step !== "number" || !(step > 0)) return null;
  const text = String(step);
  const e = text.indexOf("e-");
  if (e >= 0) return Number(text.slice(e + 2));
  const dot = text.indexOf(".");
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** The text of @value for the table: numbers to the step's decimals, or
 *  six significant digits; bool as on/off as pbus prints them. */
export function formatValue(value, param) {
  if (value === undefined) return "";
  if (typeof value === "number") {
    if (Number.isInteger(value)) return String(value);
    if (param.decimals !== null) return value.toFixed(param.decimals);
    return String(Number(value.toPrecision(6)));
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  return String(value);
}

/** The text a form field gets for @value (the full value: it is written back). */
export function fieldText(value) {
  if (value === undefined || value === null) return "";
  return String(value);
}

/** The age of a value written @ms ago, short: "0 s", "42 s", "3 min", "5 h", "2 d". */
export function formatAge(ms) {
  if (!(ms >= 0)) return "";
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} d`;
}
