/* SPDX-License-Identifier: MIT */
/*
 * write-lock.c: who may write a parameter right now (docs/segment-format.md
 * §4.3). The slot's 64-bit lock word serialises writers of one parameter;
 * readers never look at it. It is in one of four states:
 *
 *   0                   free; the next writer may take a bias
 *   token               held by the writer thread @token (a normal lock)
 *   BIASED | token      biased to thread @token: it writes without any
 *                       read-modify-write or fence, announcing each write in
 *                       aux.writing; anyone else must revoke the bias first
 *   SHARED              free; a second writer came while the owner lived,
 *                       so the parameter is never biased again
 *
 * and a held word (a token) may carry WAITERS: a writer sleeps on the
 * word's futex until the holder lets go (pbus_write_release()).
 *
 * Why never again: a revoked owner may be late, between its first look at
 * the word and its announcement in aux.writing; if the parameter had a new
 * owner by then, that late store would overwrite the new owner's
 * announcement, and a revoker could miss a write under way. So a bias
 * passes on only from a dead owner (which stores nothing any more): every
 * owner a parameter ever had but the current one is dead, or it is SHARED.
 *
 * A token is a thread's tid | (start time token << 22), 52 bits.
 *
 * Revoking is the rare, expensive side of an asymmetric handshake: the
 * revoker swaps the word to its own token, runs membarrier(2) (which makes
 * every thread of every registered process pass a full barrier), and then
 * waits until aux.writing no longer names a live thread. The owner's side,
 * on every write, is a plain store to aux.writing and a plain load of the
 * lock word: either the owner's load sees the revoker's swap (and it backs
 * off), or the revoker's load after the barrier sees the owner's store (and
 * it waits). A holder or owner that dies must not wedge the others: a
 * writer that has waited for a while checks whether the thread still runs
 * and, if not, takes over; taking over is safe because a dead writer wrote
 * only into the copy readers were not told to read.
 *
 * Threads: every function may be called from any thread; the token and the
 * membarrier registration are per thread and per process, and are redone in
 * a forked child.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier-internal.h"
#include "clock-internal.h"
#include "futex-internal.h"
#include "process-internal.h"
#include "write-lock-internal.h"

#define SPINS_BEFORE_WAITING 200
#define FIRST_CHECK_NS 50000        /* check a holder's life after 50 us ... */
#define CHECK_INTERVAL_NS 1000000   /* ... then every millisecond */
#define LIVE_HOLDER_TIMEOUT_NS 1000000000 /* one live holder (SIGSTOPped) */

__thread uint64_t pbus_thread_token_ __attribute__((tls_model("initial-exec")));
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void reset_after_fork(void)
{
	/* The child is another process with another thread: a new token. */
	pbus_thread_token_ = 0;
}

static void install_fork_handler(void)
{
	pthread_atfork(NULL, NULL, reset_after_fork);
}

uint64_t pbus_thread_token_slow_(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	pthread_once(&fork_once, install_fork_handler);
	pbus_thread_token_ = ((uint64_t)(uint32_t)tid |
			      (uint64_t)pbus_process_start_token(tid) << PBUS_TOKEN_TID_BITS) &
			     PBUS_TOKEN_MASK;
	return pbus_thread_token_;
}

void pbus_write_wake_waiters(uint64_t *lock)
{
	pbus_futex_wake_all((const uint32_t *)(const void *)lock);
}


static bool thread_alive(uint64_t token)
{
	return pbus_thread_alive(pbus_token_tid(token), pbus_token_start(token));
}

/*
 * We hold the lock word, taken from a biased owner or from a dead holder
 * (who may have been revoking one): make sure no biased write is still
 * under way. After the barrier, aux.writing shows every write whose owner
 * did not see the lock change; wait until it is 0 or names a dead thread.
 * On -EBUSY (a live owner stuck in a write, i.e. stopped) the word is
 * handed back to that owner, so that the next writer waits for it too;
 * without @wait, likewise with -EAGAIN as soon as a live owner's write has
 * outlasted a brief spin.
 */
static int quiesce(uint64_t *lock, uint64_t *writing, uint64_t *revocations, uint64_t me, bool wait)
{
	int64_t start = 0, next_check = 0;
	uint64_t w;
	int r;

	/* Before the barrier: an owner that checks this count, not its lock
	 * word, after its announcements (a prepared batch, write.c) sees it
	 * bumped, or we see its announcement (§4.3). */
	__atomic_fetch_add(revocations, 1, __ATOMIC_SEQ_CST);
	r = pbus_asym_barrier();

	if (r < 0) {
		/* Without the barrier we cannot know; leave the word as a
		 * revocation the next writer must complete. */
		w = __atomic_load_n(writing, __ATOMIC_ACQUIRE);
		pbus_write_hand_over(lock, w ? PBUS_LOCK_BIASED | w : PBUS_LOCK_SHARED);
		return r;
	}
	for (unsigned spins = 0; (w = __atomic_load_n(writing, __ATOMIC_ACQUIRE)) != 0; spins++) {
		int64_t now;

		if (w == me) {
			/* Our own thread, once the owner and now revoking after
			 * a failed fast path: nothing of ours is under way. */
			__atomic_compare_exchange_n(writing, &w, 0, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
			continue;
		}
		if (spins < SPINS_BEFORE_WAITING) {
			pbus_cpu_relax();
			continue;
		}
		if (!wait) {
			if (!thread_alive(w)) {
				__atomic_compare_exchange_n(writing, &w, 0, false, __ATOMIC_ACQ_REL,
							    __ATOMIC_RELAXED);
				continue;
			}
			pbus_write_hand_over(lock, PBUS_LOCK_BIASED | w);
			return -EAGAIN;
		}
		sched_yield();
		now = pbus_monotonic_ns();
		if (start == 0) {
			start = now;
			next_check = now + FIRST_CHECK_NS;
			continue;
		}
		if (now >= next_check) {
			next_check = now + CHECK_INTERVAL_NS;
			if (!thread_alive(w)) {
				/* Died mid-write: its work is in the unpublished
				 * copy, which we overwrite whole. */
				__atomic_compare_exchange_n(writing, &w, 0, false, __ATOMIC_ACQ_REL,
							    __ATOMIC_RELAXED);
				continue;
			}
		}
		if (now - start > LIVE_HOLDER_TIMEOUT_NS) {
			pbus_write_hand_over(lock, PBUS_LOCK_BIASED | w);
			return -EBUSY;
		}
	}
	return 0;
}

int pbus_write_claim_slow(struct pbus_write_claim *c, uint64_t *lock, uint64_t *writing,
			  uint64_t *revocations, bool may_bias, bool wait)
{
	uint64_t me = pbus_thread_token(), watched = 0;
	int64_t since = 0, next_check = 0;

	c->lock = lock;
	c->writing = writing;
	if (may_bias)
		may_bias = pbus_asym_register();
	for (unsigned spins = 0;; spins++) {
		uint64_t cur = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
		int64_t now;

		if (cur == (PBUS_LOCK_BIASED | me)) {
			if (pbus_write_claim_biased(c, lock, writing, me))
				return 0;
			continue;
		}
		if (cur == 0 || cur == PBUS_LOCK_SHARED) {
			/* A fresh word becomes ours for good (then the fast path
			 * above); else it is taken for this write. Either may
			 * lose a race: look again. */
			if (cur == 0 && may_bias)
				__atomic_compare_exchange_n(lock, &cur, PBUS_LOCK_BIASED | me, false,
							    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
			else if (pbus_write_claim_free(c, lock, writing, cur, me, may_bias))
				return 0;
			continue;
		}
		if ((cur & PBUS_LOCK_STATE_MASK) == PBUS_LOCK_BIASED) {
			uint64_t owner = cur & PBUS_TOKEN_MASK;
			int r;

			/* Revoke another thread's bias. If it still lives, the
			 * parameter has two writers now and stays SHARED for good;
			 * if it died (a restarted acquisition process), nobody is
			 * left who could store a late announcement, and the bias
			 * passes to us. */
			if (!__atomic_compare_exchange_n(lock, &cur, me, false, __ATOMIC_ACQUIRE,
							 __ATOMIC_RELAXED))
				continue;
			c->biased = false;
			c->unlock_to = PBUS_LOCK_SHARED;
			r = quiesce(lock, writing, revocations, me, wait);
			if (r < 0 || !may_bias || thread_alive(owner))
				return r;
			pbus_write_hand_over(lock, PBUS_LOCK_BIASED | me);
			continue; /* biased to us now: the fast path above */
		}
		/* Held by a writer: spin a little (a holder running on another
		 * CPU lets go within nanoseconds), then sleep until it lets go,
		 * and check now and then that it still runs. Sleeping, not
		 * yielding, is what lets a holder preempted on our own CPU run
		 * and hand the word over at once: a yield gives it the rest of
		 * its time slice, and it may be preempted holding again. */
		if (spins < SPINS_BEFORE_WAITING) {
			pbus_cpu_relax();
			continue;
		}
		/* The clocks below are measured per holder: a stream of different
		 * live holders is contention, not a stuck holder. Without @wait,
		 * no sleeping: one look at the holder's life, now. */
		now = pbus_monotonic_ns();
		if ((cur & ~PBUS_LOCK_WAITERS) != watched) {
			watched = cur & ~PBUS_LOCK_WAITERS;
			since = now;
			next_check = now + FIRST_CHECK_NS;
		}
		if (now < next_check && wait) {
			if (!(cur & PBUS_LOCK_WAITERS) &&
			    !__atomic_compare_exchange_n(lock, &cur, cur | PBUS_LOCK_WAITERS, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				continue;
			/* Until the holder's release (which clears the low 32
			 * bits' token) wakes us, or the next check is due. */
			pbus_futex_wait((const uint32_t *)(const void *)lock, (uint32_t)cur, next_check);
			continue;
		}
		next_check = now + CHECK_INTERVAL_NS;
		if ((cur & ~PBUS_LOCK_WAITERS) != me && !thread_alive(cur)) {
			/* Take over from the dead holder (of several waiters
			 * exactly one wins). It may have been revoking a bias,
			 * so quiesce as a revoker does. Others asleep on the
			 * word wake at their next check. */
			if (!__atomic_compare_exchange_n(lock, &cur, me, false, __ATOMIC_ACQUIRE,
							 __ATOMIC_RELAXED))
				continue;
			c->biased = false;
			c->unlock_to = PBUS_LOCK_SHARED;
			return quiesce(lock, writing, revocations, me, wait);
		}
		if (!wait)
			return -EAGAIN;
		if (now - since > LIVE_HOLDER_TIMEOUT_NS)
			return -EBUSY;
	}
}
