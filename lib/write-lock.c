/* SPDX-License-Identifier: MIT */
/*
 * write-lock.c: the per-parameter writer lock, a 64-bit word in the slot
 * holding 0 (free) or the holder's pid and start-time token. It serialises
 * writers of one parameter only; readers never look at it.
 *
 * A holder that dies (SIGKILL between lock and unlock) must not wedge the
 * others: a waiter that has spun for a while checks whether the holder still
 * runs and, if not, takes the lock over with a compare-and-swap (of all the
 * waiters only one wins). Taking over is safe because a dead holder wrote
 * only into the copy readers were not told to read, and the new holder
 * rewrites that copy whole before publishing it. The start-time token makes
 * a recycled pid count as dead, and a zombie counts as dead too.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "table-internal.h"

#define SPINS_BEFORE_YIELD 200
#define FIRST_CHECK_NS 50000        /* check a holder's life after 50 us ... */
#define CHECK_INTERVAL_NS 1000000   /* ... then every millisecond */
#define LIVE_HOLDER_TIMEOUT_NS 1000000000 /* one live holder (SIGSTOPped) */

static uint64_t self_token;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void compute_self_token(void)
{
	pid_t pid = getpid();

	__atomic_store_n(&self_token,
			 (uint64_t)(uint32_t)pid | (uint64_t)pbus_process_start_token(pid) << 32,
			 __ATOMIC_RELEASE);
}

static void reset_after_fork(void)
{
	/* The child is another process: it needs its own token. */
	compute_self_token();
}

static void init_self_token(void)
{
	compute_self_token();
	pthread_atfork(NULL, NULL, reset_after_fork);
}

uint64_t pbus_self_token(void)
{
	pthread_once(&self_once, init_self_token);
	return __atomic_load_n(&self_token, __ATOMIC_ACQUIRE);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

int pbus_write_lock(uint64_t *lock)
{
	uint64_t me = pbus_self_token(), holder = 0, watched = 0;
	int64_t since = 0, next_check = 0;

	for (unsigned spins = 0;; spins++) {
		int64_t now;

		holder = 0;
		if (__atomic_compare_exchange_n(lock, &holder, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		if (spins < SPINS_BEFORE_YIELD) {
			cpu_relax();
			continue;
		}
		sched_yield();
		/* The clocks below are measured per holder: a stream of different
		 * live holders is contention, not a stuck holder. */
		now = pbus_monotonic_ns();
		if (holder != watched) {
			watched = holder;
			since = now;
			next_check = now + FIRST_CHECK_NS;
			continue;
		}
		if (now >= next_check) {
			next_check = now + CHECK_INTERVAL_NS;
			if ((uint32_t)holder != (uint32_t)me &&
			    !pbus_process_alive((uint32_t)holder, (uint32_t)(holder >> 32))) {
				/* Take over from the dead holder; if another waiter was
				 * faster, the word changed and we go on waiting. */
				if (__atomic_compare_exchange_n(lock, &holder, me, false,
								__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
					return 0;
				continue;
			}
		}
		if (now - since > LIVE_HOLDER_TIMEOUT_NS)
			return -EBUSY;
	}
}

void pbus_write_unlock(uint64_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}
