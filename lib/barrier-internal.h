/* SPDX-License-Identifier: MIT */
/*
 * barrier-internal.h: the fences of the handshakes (docs/segment-format.md §4.7): a
 * full fence, and the asymmetric pair of membarrier(2) (barrier.c): a
 * registered process's writers skip their fences because every revoker
 * and waiter runs a global barrier.
 */
#ifndef PBUS_BARRIER_INTERNAL_H
#define PBUS_BARRIER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <parambus/table.h> /* PBUS_TSAN_: built with ThreadSanitizer */

/*
 * A full (sequentially consistent) fence: the Dekker handshake between a
 * writer (store version, fence, read waiter counts) and a waiter (store
 * registration, fence, read versions) needs one on each side. Under
 * ThreadSanitizer, which does not support fences, a seq_cst read-modify-
 * write stands in (a full barrier on the targets we build for).
 */
#ifdef PBUS_TSAN_
static inline void pbus_full_fence(void)
{
	static uint32_t word;

	__atomic_fetch_add(&word, 0u, __ATOMIC_SEQ_CST);
}
#else
static inline void pbus_full_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

/* Whether this process is registered for membarrier(2)'s global expedited
 * barrier: then its writes skip the fence of the waiter handshake, because
 * every waiter issues that barrier after registering (watch.c). */
extern bool pbus_asym_registered_;

static inline bool pbus_asym_registered(void)
{
	return __atomic_load_n(&pbus_asym_registered_, __ATOMIC_RELAXED);
}

/* The slow side of the asymmetric handshakes: a full barrier in every
 * thread of every registered process (or, failing that, of every process). */
int pbus_asym_barrier(void);

/* Register this process for the global expedited barrier, once; false if
 * the kernel refuses (then it must take no bias and keep its fences). */
bool pbus_asym_register(void);

#endif
