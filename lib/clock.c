/* SPDX-License-Identifier: MIT */
/*
 * clock.c: the clocks: CLOCK_MONOTONIC and CLOCK_REALTIME in ns, and the
 * timestamp of a written value, CLOCK_REALTIME in ns, at a fraction of
 * clock_gettime()'s price.
 *
 * clock_gettime() reads the TSC with a serialising instruction and costs
 * about 29 ns in the VMs we measure on: half of what a write of a double
 * costs otherwise. Where the kernel itself keeps time with the TSC (its
 * clocksource is "tsc", so the counter is invariant and synchronised across
 * CPUs), we read it directly and extrapolate from an anchor, a pair
 * (TSC, CLOCK_REALTIME) that each thread takes again every millisecond:
 *
 *   ns = anchor_ns + (tsc - anchor_tsc) * ns_per_tick
 *
 * in 32.32 fixed point (an integer multiply and shift: the conversions to
 * and from floating point cost as much as the rest of the formula).
 * ns_per_tick is measured once per process over the first 10 ms of use
 * (until then every call takes the pair). The error of an extrapolation is
 * at most the rate's error over one millisecond: the measurement's own
 * (two pairs 10 ms apart, each good to some 50 ns: 10 ppm) plus NTP's
 * slewing (at most 500 ppm), so about 0.5 us at worst;
 * docs/segment-format.md promises 1 us and tests/unit/test-table.c checks
 * it. At each new anchor an extrapolation
 * that ran ahead is not allowed to go back by a few microseconds, so a
 * thread's timestamps never decrease unless the clock itself was set back.
 *
 * Threads: every function is safe in any thread; the anchors are
 * thread-local, the rate is measured once per process.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock-internal.h"

int64_t pbus_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t pbus_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define ANCHOR_PERIOD_NS 1000000.0   /* a thread's anchor is refreshed this often */
#define CALIBRATION_NS 10000000      /* the rate is measured over this much time */
#define MAX_SMOOTHING_NS 20000       /* larger steps back are the clock's own */
#define PAIR_TRIES 8                 /* attempts at a narrow (TSC, ns) pair ... */
#define PAIR_GOOD_TICKS 1500         /* ... good if this narrow (0.5 us at 3 GHz) */

#if defined(__x86_64__)
#include <x86intrin.h>

static bool tsc_usable;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
/* The first (TSC, ns) pair of the process; the rate measured from it is
 * ns_per_tick (ns per tick, 0 until measured). */
static uint64_t calib_tsc, calib_ns;
static pthread_mutex_t calib_lock = PTHREAD_MUTEX_INITIALIZER;

__thread struct pbus_clock_anchor pbus_clock_anchor_ __attribute__((tls_model("initial-exec")));
static double ns_per_tick; /* measured once per process, 0 until then */

static void check_clocksource(void)
{
	char buf[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		if (n > 0)
			buf[n] = 0;
	}
	tsc_usable = strcmp(buf, "tsc\n") == 0;
}

static double rate(void)
{
	double r;

	__atomic_load(&ns_per_tick, &r, __ATOMIC_ACQUIRE);
	return r;
}

/* A (TSC, CLOCK_REALTIME) pair: the counter read before and after the
 * clock, the narrowest of a few tries, and the counter's midpoint. False if
 * no try was narrow (preempted every time, or a sanitizer's slow
 * clock_gettime()): such a pair is no anchor, its error could exceed the
 * promise. */
static bool read_pair(uint64_t *ret_tsc, uint64_t *ret_ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < PAIR_TRIES && best > PAIR_GOOD_TICKS; i++) {
		uint64_t t0 = __rdtsc(), ns = pbus_realtime_ns(), t1 = __rdtsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*ret_tsc = t0 + best / 2;
			*ret_ns = ns;
		}
	}
	return best <= PAIR_GOOD_TICKS;
}

/* Take a new anchor (and, while the rate is unknown, work on measuring it). */
static uint64_t reanchor(struct pbus_clock_anchor *a)
{
	uint64_t ns = 0, tsc = 0;
	double r = rate();
	/* A pair too wide is no anchor: use the clock's own reading this
	 * once, and try again next time. */
	bool good = read_pair(&tsc, &ns);

	if (good && r == 0) {
		pthread_mutex_lock(&calib_lock);
		if (calib_tsc == 0 || tsc < calib_tsc || ns < calib_ns) {
			calib_tsc = tsc;
			calib_ns = ns;
		} else if (ns - calib_ns >= CALIBRATION_NS) {
			r = (double)(ns - calib_ns) / (double)(tsc - calib_tsc);
			__atomic_store(&ns_per_tick, &r, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&calib_lock);
	}
	/* Smooth over a small step back of an extrapolation that ran ahead;
	 * a large one is the clock being set, which we follow. */
	if (ns < a->last_ns && a->last_ns - ns < MAX_SMOOTHING_NS)
		ns = a->last_ns;
	a->tsc = good && r > 0 ? tsc : 0;
	a->ns = ns;
	a->period_ticks = good && r > 0 ? (uint64_t)(ANCHOR_PERIOD_NS / r) : 0;
	a->mult = good && r > 0 ? (uint64_t)(r * 4294967296.0) : 0;
	a->last_ns = ns;
	return ns;
}

uint64_t pbus_value_clock_slow_(void)
{
	struct pbus_clock_anchor *a = &pbus_clock_anchor_;

	if (a->tsc != 0)
		return reanchor(a);
	pthread_once(&tsc_once, check_clocksource);
	if (!tsc_usable)
		return pbus_realtime_ns();
	return reanchor(a);
}

#else

uint64_t pbus_value_clock_slow_(void)
{
	return pbus_realtime_ns();
}

#endif
