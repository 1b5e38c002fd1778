/* SPDX-License-Identifier: MIT */
/*
 * stress-values.h: self-checking values and the writer and reader loops of
 * the stress tests.
 *
 * Every write carries a 64-bit stamp: writer id (0 = setup, 1..3) in bits
 * 48..63 and the writer's counter in bits 0..47. One write puts its stamp
 *  - in every 8-byte word of a bytes or int64[] value,
 *  - in both 32-bit halves of a double, as the "half" 0x20000000 | wid << 26
 *    | (counter mod 2^26): bit 30 clear and bit 29 set keep the exponent
 *    between 0x200 and 0x3ff, so the double is always finite and normal,
 *  - in every 8-byte word of a string, as the half in 8 hex digits,
 *  - in the value's length (it shrinks by a few words with the counter),
 *  - in the sample's timestamp (= the stamp) and status (= counter mod 2^26
 *    mod 3, never "invalid"),
 * so a reader checks that value, length, status and timestamp all come from
 * one write. Writers also publish the counter they are about to write
 * (issued[wid]) before writing, so a reader can tell a value from the
 * future (garbage that happens to look consistent) from a real one.
 */
#ifndef PBUS_STRESS_VALUES_H
#define PBUS_STRESS_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/table.h>

#define SV_MAX_PARAMS 8
#define SV_WRITERS 4 /* writer ids 0 (setup) .. 3 */
/* Timing bounds: progress is counted per 100 ms window, and a read may
 * take at most 10 ms of the reader's CPU time. ThreadSanitizer makes every
 * atomic load and store a call into its runtime, which slows an 8 KiB read
 * or a lock handoff by one to two orders of magnitude, so under it both
 * bounds are ten times wider. The correctness checks stay the same. */
#if defined(__SANITIZE_THREAD__)
#define SV_TIMING_FACTOR 10
#else
#define SV_TIMING_FACTOR 1
#endif
#define SV_WINDOW_NS (SV_TIMING_FACTOR * 100 * INT64_C(1000000))
#define SV_READ_CPU_LIMIT_NS (SV_TIMING_FACTOR * 10 * INT64_C(1000000))

/* The number of whole windows in @seconds, at least 1. */
static inline unsigned sv_window_count(double seconds)
{
	unsigned n = (unsigned)(seconds * 1e9 / (double)SV_WINDOW_NS);

	return n ? n : 1;
}
#define SV_HALF_MASK ((UINT32_C(1) << 26) - 1)

enum sv_kind_type { SV_DOUBLE, SV_STRING, SV_BYTES, SV_INT64_ARRAY };

struct sv_kind {
	enum sv_kind_type type;
	size_t capacity; /* bytes; a multiple of 8 */
};

static inline uint64_t sv_stamp(unsigned wid, uint64_t counter)
{
	return (uint64_t)wid << 48 | counter;
}
static inline unsigned sv_stamp_writer(uint64_t stamp) { return (unsigned)(stamp >> 48); }
static inline uint64_t sv_stamp_counter(uint64_t stamp) { return stamp & ((UINT64_C(1) << 48) - 1); }
static inline uint32_t sv_half(uint64_t stamp)
{
	return UINT32_C(0x20000000) | (uint32_t)(sv_stamp_writer(stamp) & 3) << 26 |
	       (uint32_t)(sv_stamp_counter(stamp) & SV_HALF_MASK);
}
static inline uint32_t sv_status(uint64_t stamp)
{
	return (uint32_t)((sv_stamp_counter(stamp) & SV_HALF_MASK) % 3);
}

/* The value of @stamp for @kind into @buf (capacity bytes); returns its length. */
size_t sv_encode(const struct sv_kind *kind, uint64_t stamp, unsigned char *buf);

/* Counters of one worker, in memory the test's parent can read. */
struct sv_stats {
	uint64_t ops;          /* reads or write batches */
	uint64_t overlapped;   /* reads during which the version moved (retry likely) */
	uint64_t bad;          /* inconsistent values, refused writes ... */
	uint64_t ebusy;        /* writes refused with -EBUSY */
	uint64_t slow_cpu;     /* reads over SV_READ_CPU_LIMIT_NS of thread CPU time */
	uint64_t over_1ms_cpu; /* reads over 1 ms of thread CPU time */
	uint64_t slow_wall;    /* reads over 10 ms of wall time */
	int64_t max_ns;        /* longest single operation, wall */
	int64_t max_cpu_ns;    /* longest single read, thread CPU (when measured) */
	int64_t max_cpu_by_param[SV_MAX_PARAMS];
	uint64_t max_cpu_versions; /* versions the slowest read saw go by */
	int64_t cpu_ns;        /* CPU time of the whole loop */
	uint64_t last_counter; /* writers: the last counter written */
	char first_error[320];
};

struct sv_worker {
	struct pbus_table *table;
	const struct pbus_param *params[SV_MAX_PARAMS];
	uint32_t index[SV_MAX_PARAMS];
	struct sv_kind kinds[SV_MAX_PARAMS];
	size_t count;
	unsigned writer_id;     /* writers: 1..3 */
	uint64_t *issued;       /* [SV_WRITERS], shared */
	int64_t start_ns;       /* windows count from here */
	int64_t end_ns;         /* stop at this time (0: only on *stop) */
	uint32_t *stop;         /* stop when non-zero (may be NULL) */
	uint32_t *pause;        /* writers: pause while non-zero (may be NULL) */
	uint32_t *paused;       /* writers: set to 1 while paused */
	uint32_t *windows;      /* [nwin] ops per 100 ms window, or NULL */
	int64_t *window_cpu;    /* [nwin] thread CPU at the window's first op */
	unsigned nwin;
	bool measure_cpu;       /* readers: thread CPU time around every read */
	bool assert_read_cpu;   /* readers: a read over SV_READ_CPU_LIMIT_NS of CPU is
				 * an error */
	uint32_t *first_write;  /* writers: bumped (and woken) after the first write */
	unsigned inject_every;  /* writers: corrupt one word of every Nth batch (checks
				 * that the readers' checks can fail) */
	struct sv_stats *stats;
};

/* Resolve @names into @w's params and check their types against @kinds. */
int sv_bind(struct sv_worker *w, struct pbus_table *table, const char *const *names,
	    const struct sv_kind *kinds, size_t count);

/* Write every parameter once with writer id 0 (the setup writer). */
int sv_write_initial(const struct sv_worker *w);

/* The loops; they return 0, or 1 if anything was wrong (stats say what). */
int sv_writer_run(struct sv_worker *w);
int sv_reader_run(struct sv_worker *w);

/* Check the per-window counts of a finished worker: records a CHECK_FAIL
 * for each window without an operation in which the worker was running
 * (@workers processes or threads share the CPUs; a worker that got under a
 * quarter of its fair share across the gap was descheduled, which is
 * reported but not counted). Returns the fewest ops in a window. */
uint64_t sv_check_windows(const char *who, const uint32_t *windows, const int64_t *window_cpu,
			  unsigned nwin, unsigned workers);

#endif
