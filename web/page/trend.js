// trend.js: the trend plot of the live measurements (parameters of class
// live with a numeric scalar type), drawn by uPlot (npm, bundled by the
// build: web/page/CMakeLists.txt; global `uPlot`).
//
// Samples: at most one row every SAMPLE_MS; the values of a row are the
// latest of each series when it was taken (a series that has none yet, or
// whose value is not a finite number, keeps its previous one). Rows live
// in mirrored ring buffers (Float64Array of twice the capacity, each row
// written at i and i + CAPACITY), so that the newest CAPACITY rows are
// always one contiguous subarray: uPlot gets views, never copies.
//
// The plot follows the live values (the x range is the chosen window up to
// now) and is redrawn at most every REDRAW_MS; Pause stops that, as does a
// zoom (drag across the plot, uPlot's own cursor zoom); Reset undoes the
// zoom and follows again.

const SAMPLE_MS = 100;
const CAPACITY = 6000;           // 10 min at one row every 100 ms
const REDRAW_MS = 250;
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

export class Trend {
  constructor(section, container, controls) {
    this.section = section;
    this.container = container;
    this.controls = controls;    // {pause, reset, window}
    this.series = [];            // [{index, name, unit}]
    this.plot = null;
    this.paused = false;
    this.windowS = Number(controls.window.value);
    this.xs = new Float64Array(2 * CAPACITY);
    this.ys = [];
    this.head = 0;
    this.length = 0;
    this.latest = [];            // the latest value of each series
    this.lastRowMs = -Infinity;
    this.dirty = false;
    this.redrawing = false;
    this.byIndex = new Map();    // parameter index -> series number

    controls.pause.addEventListener("click", () => this.setPaused(!this.paused));
    controls.reset.addEventListener("click", () => {
      this.setPaused(false);
      this.redraw(true);
    });
    controls.window.addEventListener("change", () => {
      this.windowS = Number(controls.window.value);
      if (!this.paused) this.redraw(true);
    });
    new ResizeObserver(() => this.resize()).observe(container);
    setInterval(() => {
      if (this.dirty && !this.paused) this.redraw(false);
    }, REDRAW_MS);
  }

  /** The series to plot (the schema's live numeric parameters); the data
   *  recorded so far is kept when the list is the same. */
  setSeries(params) {
    const same = params.length === this.series.length &&
      params.every((p, i) => p.name === this.series[i].name && p.unit === this.series[i].unit);
    this.byIndex = new Map(params.map((p, i) => [p.index, i]));
    if (same && this.plot) {
      this.series = params.map((p) => ({ index: p.index, name: p.name, unit: p.unit }));
      return;
    }
    this.series = params.map((p) => ({ index: p.index, name: p.name, unit: p.unit }));
    this.ys = params.map(() => new Float64Array(2 * CAPACITY));
    this.latest = params.map(() => NaN);
    this.head = this.length = 0;
    this.lastRowMs = -Infinity;
    if (this.plot) {
      this.plot.destroy();
      this.plot = null;
    }
    this.section.hidden = params.length === 0;
    if (params.length) this.create();
  }

  /** Whether parameter @index is plotted. */
  has(index) {
    return this.byIndex.has(index);
  }

  /** A new value of parameter @index, written at @ms (wall clock). */
  update(index, value, ms) {
    const k = this.byIndex.get(index);
    if (k === undefined || typeof value !== "number" || !Number.isFinite(value)) return;
    this.latest[k] = value;
    this.sample(ms);
  }

  sample(ms) {
    // Rows only once every series has a value (the first values message
    // brings them all), in time order.
    for (let k = 0; k < this.latest.length; k++) if (Number.isNaN(this.latest[k])) return;
    let i;
    if (this.length > 0 && ms - this.lastRowMs < SAMPLE_MS) {
      i = (this.head + CAPACITY - 1) % CAPACITY;            // refresh the newest row
    } else {
      if (this.length > 0 && ms < this.lastRowMs) ms = this.lastRowMs;
      i = this.head;
      this.head = (this.head + 1) % CAPACITY;
      if (this.length < CAPACITY) this.length++;
      this.lastRowMs = ms;
      this.xs[i] = this.xs[i + CAPACITY] = ms / 1000;
    }
    for (let k = 0; k < this.ys.length; k++) this.ys[k][i] = this.ys[k][i + CAPACITY] = this.latest[k];
    this.dirty = true;
  }

  data() {
    const end = this.head + CAPACITY, start = end - this.length;
    return [this.xs.subarray(start, end), ...this.ys.map((y) => y.subarray(start, end))];
  }

  setPaused(paused) {
    this.paused = paused;
    this.controls.pause.textContent = paused ? "Resume" : "Pause";
    this.controls.pause.classList.toggle("active", paused);
    if (!paused) this.redraw(true);
  }

  redraw() {
    if (!this.plot) return;
    this.dirty = false;
    const now = Date.now() / 1000;
    this.redrawing = true;
    try {
      this.plot.batch(() => {
        this.plot.setData(this.data(), false);
        this.plot.setScale("x", { min: now - this.windowS, max: now });
      });
    } finally {
      this.redrawing = false;
    }
  }

  size() {
    const width = Math.max(240, this.container.clientWidth);
    return { width, height: Math.round(Math.min(320, Math.max(180, width * 0.45))) };
  }

  resize() {
    if (this.plot) this.plot.setSize(this.size());
  }

  create() {
    const units = [];
    for (const s of this.series) if (!units.includes(s.unit)) units.push(s.unit);
    const scaleOf = (unit) => `y:${unit}`;
    const axes = [{ stroke: "#555", grid: { stroke: "#eee" }, ticks: { stroke: "#ccc" } }];
    units.forEach((unit, n) => axes.push({
      scale: scaleOf(unit),
      side: n % 2 ? 1 : 3,
      label: unit || "value",
      labelSize: 20,
      stroke: "#555",
      grid: { show: n === 0, stroke: "#eee" },
      ticks: { stroke: "#ccc" },
      size: 56,
      // as many decimals as the ticks' spacing needs (uPlot's default
      // stops at three: 0.1105 and 0.1110 would both read 0.111)
      values: (u, splits, axis, space, incr) => {
        const decimals = Math.min(12, Math.max(0, -Math.floor(Math.log10(incr) + 1e-9)));
        return splits.map((v) => v.toFixed(decimals));
      },
    }));
    const scales = { x: { time: true } };
    // y: the data's range with some room, and never narrower than 1 % of
    // its value (a steady 5 V with µV of noise is a flat line, not noise
    // magnified to the full height)
    const range = (u, min, max) => {
      if (min === null || max === null) return [0, 1];
      const mid = (min + max) / 2;
      const half = Math.max((max - min) / 2 * 1.1, Math.abs(mid) * 0.01, 1e-6);
      return [mid - half, mid + half];
    };
    for (const unit of units) scales[scaleOf(unit)] = { auto: true, range };
    const opts = {
      ...this.size(),
      class: "trend-plot",
      scales,
      axes,
      cursor: { drag: { x: true, y: false, setScale: true } },
      legend: { live: true },
      series: [
        {},
        ...this.series.map((s, k) => ({
          label: s.unit ? `${s.name} (${s.unit})` : s.name,
          scale: scaleOf(s.unit),
          stroke: COLOURS[k % COLOURS.length],
          width: 1.5,
          points: { show: false },
        })),
      ],
      hooks: {
        // a zoom by the cursor (any change of x not made by redraw()):
        // hold the plot where the user put it
        setScale: [(u, key) => {
          if (key === "x" && !this.redrawing && !this.paused) this.setPaused(true);
        }],
      },
    };
    this.redrawing = true;
    try {
      this.plot = new uPlot(opts, this.data(), this.container);
    } finally {
      this.redrawing = false;
    }
    this.dirty = true;
  }
}
