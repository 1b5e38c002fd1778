/* SPDX-License-Identifier: MIT */
/*
 * write-lock-internal.h: the per-parameter lock word (write-lock.c,
 * docs/segment-format.md §4.3): tokens, claims, biases and their release.
 *
 * Threads: a claim is taken and released by one thread; the token is the
 * calling thread's.
 */
#ifndef PBUS_WRITE_LOCK_INTERNAL_H
#define PBUS_WRITE_LOCK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <parambus/table.h>

#include "barrier-internal.h"

/*
 * Claiming the right to write one parameter (write-lock.c; the lock word's
 * states are described there and in docs/segment-format.md §4.3).
 */
#define PBUS_LOCK_STATE_MASK (UINT64_C(3) << 62)
#define PBUS_LOCK_BIASED (UINT64_C(1) << 62)
#define PBUS_LOCK_SHARED (UINT64_C(2) << 62)
/* On a held word (a token): some writer sleeps on the word's futex (its low
 * 32 bits) until the holder lets go. */
#define PBUS_LOCK_WAITERS (UINT64_C(1) << 61)
/* A token: tid (22 bits, Linux's PID_MAX_LIMIT) | start time token << 22. */
#define PBUS_TOKEN_TID_BITS 22
#define PBUS_TOKEN_MASK ((UINT64_C(1) << 52) - 1)
static inline uint32_t pbus_token_tid(uint64_t token)
{
	return (uint32_t)(token & ((UINT64_C(1) << PBUS_TOKEN_TID_BITS) - 1));
}

static inline uint32_t pbus_token_start(uint64_t token)
{
	return (uint32_t)((token & PBUS_TOKEN_MASK) >> PBUS_TOKEN_TID_BITS);
}

struct pbus_write_claim {
	uint64_t *lock;          /* the parameter's lock word (slot head) */
	uint64_t *writing;       /* aux.writing of the parameter */
	uint64_t unlock_to;      /* the word's value after a normal hold */
	bool biased;             /* written under our bias, no lock held */
};

/* This thread's token (0 until computed). */
extern __thread uint64_t pbus_thread_token_ __attribute__((tls_model("initial-exec")));
uint64_t pbus_thread_token_slow_(void);

static inline uint64_t pbus_thread_token(void)
{
	uint64_t t = pbus_thread_token_;

	return t ? t : pbus_thread_token_slow_();
}

/* The owner's side of the bias handshake: announce the write, then check
 * the bias still holds. Program order is enough here: a revoker swaps the
 * lock word and then runs pbus_asym_barrier() before it reads @writing. */
static inline bool pbus_write_claim_biased(struct pbus_write_claim *c, uint64_t *lock,
					   uint64_t *writing, uint64_t me)
{
	__atomic_store_n(writing, me, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(lock, __ATOMIC_RELAXED) == (PBUS_LOCK_BIASED | me)) {
		c->lock = lock;
		c->writing = writing;
		c->biased = true;
		return true;
	}
	__atomic_store_n(writing, 0, __ATOMIC_RELEASE);
	return false;
}

/* Everything but the owner's fast path: take the lock, a bias (if
 * @may_bias), revoke another's bias, or take over from a dead writer.
 * 0, or -EBUSY if a live writer keeps it for longer than a second (a
 * stopped process), never forever. Without @wait, -EAGAIN instead of
 * waiting for a live writer beyond a brief spin (nothing is held then).
 * @revocations: the table's count of revocations (header), which a
 * revoker bumps before its barrier (§4.3). */
int pbus_write_claim_slow(struct pbus_write_claim *c, uint64_t *lock, uint64_t *writing,
			  uint64_t *revocations, bool may_bias, bool wait);

/* A free word @cur taken for one write, as pbus_write_claim_slow() would
 * take it, without its loop: SHARED (a parameter with two writers), or 0
 * when this table's writers take no bias (pbusd). False: take the slow
 * path. */
static inline bool pbus_write_claim_free(struct pbus_write_claim *c, uint64_t *lock,
					 uint64_t *writing, uint64_t cur, uint64_t me, bool may_bias)
{
	if (cur != PBUS_LOCK_SHARED && (cur != 0 || may_bias))
		return false;
	if (!__atomic_compare_exchange_n(lock, &cur, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	c->lock = lock;
	c->writing = writing;
	c->biased = false;
	/* A fresh word stays fresh under a writer that takes no bias, so
	 * that the application's writer can take one. */
	c->unlock_to = cur;
	return true;
}

static inline int pbus_write_claim(struct pbus_write_claim *c, uint64_t *lock, uint64_t *writing,
				   uint64_t *revocations, bool may_bias)
{
	uint64_t me = pbus_thread_token(), cur = __atomic_load_n(lock, __ATOMIC_RELAXED);

	if (cur == (PBUS_LOCK_BIASED | me) && pbus_write_claim_biased(c, lock, writing, me))
		return 0;
	if (pbus_write_claim_free(c, lock, writing, cur, me, may_bias))
		return 0;
	return pbus_write_claim_slow(c, lock, writing, revocations, may_bias, true);
}

/* The lock word of the slot at @slot (its second word). */
static inline uint64_t *pbus_slot_lock(const void *slot)
{
	return (uint64_t *)(void *)((unsigned char *)slot + 8);
}

/* A spinning thread's pause: the sibling hyperthread gets the core, and
 * the loop leaves the pipeline without a memory-order flush. */
static inline void pbus_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The lock word of parameter @param. */
static inline uint64_t *pbus_param_lock(const struct pbus_param *param)
{
	return pbus_slot_lock(param->slot_);
}

/* Wake the writers asleep on @lock (pbus_write_hand_over()). */
void pbus_write_wake_waiters(uint64_t *lock);

/* Leave the lock word we hold as @value, waking whoever sleeps on it. */
static inline void pbus_write_hand_over(uint64_t *lock, uint64_t value)
{
	if (__atomic_exchange_n(lock, value, __ATOMIC_RELEASE) & PBUS_LOCK_WAITERS)
		pbus_write_wake_waiters(lock);
}

static inline void pbus_write_release(const struct pbus_write_claim *c)
{
	if (c->biased)
		__atomic_store_n(c->writing, 0, __ATOMIC_RELEASE);
	else
		pbus_write_hand_over(c->lock, c->unlock_to);
}

#endif
