/* SPDX-License-Identifier: MIT */
/*
 * futex.c: futex(2) on 32-bit words of shared mappings: the waiters' notify
 * word, the save count, the lock words' sleepers and the reader's turns
 * (docs/segment-format.md §4.7). Not FUTEX_PRIVATE: the words are shared
 * between processes.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex-internal.h"

int pbus_futex_wait(const uint32_t *word, uint32_t expected, int64_t deadline_ns)
{
	struct timespec ts, *tsp = NULL;

	if (deadline_ns >= 0) {
		ts.tv_sec = deadline_ns / 1000000000;
		ts.tv_nsec = deadline_ns % 1000000000;
		tsp = &ts;
	}
	/* Shared (not PRIVATE): the word lives in a mapping of several
	 * processes. BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	if (syscall(SYS_futex, word, FUTEX_WAIT_BITSET, expected, tsp, NULL,
		    FUTEX_BITSET_MATCH_ANY) < 0) {
		if (errno == EAGAIN)
			return 0;
		return -errno;
	}
	return 0;
}

void pbus_futex_wake_all(const uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
