// stats.js: what the page measures about itself, for the benchmark
// (docs/benchmarks.md, scenario 6) and the tests, as window.pbusStats:
//
//   latencies     Float64Array ring of update latencies in ms: for each
//                 values entry, the wall clock after the page applied it
//                 to the DOM minus the entry's timestamp (the table write);
//                 not for the first values after a hello or after pbusd
//                 came back (the state as it is, not updates)
//   count         entries recorded so far (the ring holds the last
//                 latencies.length; the next one goes to count % length)
//   messages      values messages applied
//   firstRenderMs ms from the navigation's start until every readable
//                 parameter's value was in the table and painted (null
//                 until then)
//   reset()       forget what was recorded (count and messages to 0)
//
// Recording costs a subtraction and a store per entry: no allocation.

const RING = 1 << 16;

export const stats = {
  latencies: new Float64Array(RING),
  count: 0,
  messages: 0,
  firstRenderMs: null,
  reset() {
    this.count = 0;
    this.messages = 0;
  },
};

/** The wall clock in ms, as precise as the page's clock allows. */
export function nowRealtimeMs() {
  return performance.timeOrigin + performance.now();
}

/** Records the latency of one entry written at @timestampNs (a decimal
 *  string of ns, CLOCK_REALTIME) as seen at @nowMs. */
export function recordLatency(nowMs, timestampNs) {
  // ns since 1970 are beyond 2^53: Number() rounds them to 256 ns,
  // far below the ms that matter here.
  const ms = Number(timestampNs) / 1e6;
  stats.latencies[stats.count & (RING - 1)] = nowMs - ms;
  stats.count++;
}

window.pbusStats = stats;
