/* SPDX-License-Identifier: MIT */
/*
 * clock-internal.h: the clocks (clock.c): CLOCK_MONOTONIC and CLOCK_REALTIME in ns,
 * and the cheap CLOCK_REALTIME of a value's timestamp.
 *
 * Threads: any; the timestamp clock's anchors are thread-local.
 */
#ifndef PBUS_CLOCK_INTERNAL_H
#define PBUS_CLOCK_INTERNAL_H

#include <stdint.h>

int64_t pbus_monotonic_ns(void);
uint64_t pbus_realtime_ns(void);

/*
 * CLOCK_REALTIME in ns for a value's timestamp, within 1 us of
 * pbus_realtime_ns() and much cheaper where the TSC can be read (clock.c):
 * the inline part extrapolates from the thread's anchor in fixed point,
 * clock.c takes anchors and measures the rate.
 */
struct pbus_clock_anchor {
	uint64_t tsc, ns;        /* tsc 0: none yet */
	uint64_t period_ticks;   /* refresh after this many ticks (about 1 ms) */
	uint64_t mult;           /* ns per tick << 32 (so that ticks within a
				  * period times mult stay below 2^53) */
	uint64_t last_ns;        /* the thread's latest timestamp */
};

extern __thread struct pbus_clock_anchor pbus_clock_anchor_
	__attribute__((tls_model("initial-exec")));
uint64_t pbus_value_clock_slow_(void);

static inline uint64_t pbus_value_clock_ns(void)
{
#if defined(__x86_64__)
	struct pbus_clock_anchor *a = &pbus_clock_anchor_;

	if (__builtin_expect(a->tsc != 0, 1)) {
		uint64_t delta = __builtin_ia32_rdtsc() - a->tsc;

		if (__builtin_expect(delta < a->period_ticks, 1)) {
			uint64_t ns = a->ns + ((delta * a->mult) >> 32);

			if (ns > a->last_ns)
				a->last_ns = ns;
			return a->last_ns;
		}
	}
#endif
	return pbus_value_clock_slow_();
}

#endif
