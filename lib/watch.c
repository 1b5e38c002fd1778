/* SPDX-License-Identifier: MIT */
/*
 * watch.c: waiting for changes without polling (struct pbus_watch), and the
 * writer's side of it (watch-internal.h). Waiters sleep on one futex
 * word of the wake segment ("notify"); a writer bumps it and calls
 * FUTEX_WAKE only while some waiter has registered for the parameter it
 * wrote (or for every parameter), so writes cost no system call when nobody
 * waits. A waiter registers only while it sleeps.
 *
 * Lost wake-ups are impossible: the waiter registers, fences, reads notify,
 * then compares versions; the writer stores the version, fences, reads the
 * counts, then bumps notify. Either the waiter sees the new version, or the
 * writer sees the registration and bumps notify after the waiter read it, in
 * which case FUTEX_WAIT returns at once because the word changed. Writers
 * registered for membarrier(2) skip their fence, which would cost every
 * write a drained store buffer; the waiter supplies it instead with one
 * global barrier after registering (so a wait costs a system call more,
 * and a write none). Where that barrier fails, a waiter sleeps at most
 * PBUS_UNBARRIERED_POLL_NS at a time.
 *
 * All waiters share the word, so a change of one watched parameter wakes
 * every sleeping waiter, who each compare their versions and sleep again if
 * nothing of theirs changed. That is cheap for the handful of waiters an
 * instrument has (docs/segment-format.md, "Waiting").
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <parambus/instance.h>

#include "barrier-internal.h"
#include "clock-internal.h"
#include "futex-internal.h"
#include "process-internal.h"
#include "table-internal.h"
#include "watch-internal.h"

/* Longest sleep of a waiter whose membarrier(2) failed (seccomp, say):
 * a registered writer's wake-up may then be missed, never for longer. */
#define PBUS_UNBARRIERED_POLL_NS INT64_C(1000000)
/* Longest sleep of any waiter: the counts that tell writers somebody waits
 * live in the wake segment, which every reader may write, so one that
 * zeroes them can make writers skip the wake-up. A waiter then notices the
 * change at its next look, at most this much later (docs/security.md). */
#define PBUS_WAIT_SLICE_NS INT64_C(100000000)

struct pbus_watch {
	struct pbus_table *table;
	bool all;              /* watching every parameter */
	size_t count;
	uint32_t *indexes;
	uint64_t *seen;        /* the version last seen, per watched parameter */
	uint32_t *changed;     /* found by the last wait */
	size_t changed_count, cursor;
	int interrupted;       /* atomic: pbus_watch_interrupt() was called */
};

void pbus_notify_waiters(struct pbus_table *table)
{
	__atomic_fetch_add(&table->wake->notify, 1u, __ATOMIC_SEQ_CST);
	pbus_futex_wake_all(&table->wake->notify);
}

void pbus_wake_all(struct pbus_table *table)
{
	pbus_notify_waiters(table);
	if (table->flags & PBUS_OPEN_WRITE) {
		/* Waiters for saves sleep on save_count; a state change must
		 * reach them too. Only a writable mapping can bump it. */
		__atomic_fetch_add(&table->header->save_count, 1u, __ATOMIC_SEQ_CST);
		pbus_futex_wake_all(&table->header->save_count);
	}
}

int pbus_watch_new(struct pbus_table *table, const uint32_t *indexes, size_t count,
		   struct pbus_watch **ret_watch)
{
	struct pbus_watch *w;

	if (!table || !ret_watch || (count && !indexes))
		return -EINVAL;
	for (size_t i = 0; i < count; i++)
		if (indexes[i] >= table->param_count)
			return -ENOENT;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->table = table;
	w->all = count == 0;
	w->count = w->all ? table->param_count : count;
	w->indexes = malloc((w->count ? w->count : 1) * sizeof(*w->indexes));
	w->seen = malloc((w->count ? w->count : 1) * sizeof(*w->seen));
	w->changed = malloc((w->count ? w->count : 1) * sizeof(*w->changed));
	if (!w->indexes || !w->seen || !w->changed) {
		pbus_watch_free(w);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->count; i++) {
		w->indexes[i] = w->all ? (uint32_t)i : indexes[i];
		w->seen[i] = pbus_param_seq(&table->params[w->indexes[i]]);
	}
	*ret_watch = w;
	return 0;
}

void pbus_watch_free(struct pbus_watch *watch)
{
	if (!watch)
		return;
	free(watch->indexes);
	free(watch->seen);
	free(watch->changed);
	free(watch);
}

/* Record every watched parameter whose version moved; returns how many. */
static size_t collect_changes(struct pbus_watch *w)
{
	w->changed_count = 0;
	w->cursor = 0;
	for (size_t i = 0; i < w->count; i++) {
		uint64_t s = pbus_param_seq(&w->table->params[w->indexes[i]]);

		if (s != w->seen[i]) {
			w->seen[i] = s;
			w->changed[w->changed_count++] = w->indexes[i];
		}
	}
	return w->changed_count;
}

static void set_registration(struct pbus_watch *w, bool on)
{
	struct pbus_table *t = w->table;

	if (w->all) {
		if (on)
			__atomic_fetch_add(&t->wake->any_waiters, 1u, __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_sub(&t->wake->any_waiters, 1u, __ATOMIC_SEQ_CST);
		return;
	}
	for (size_t i = 0; i < w->count; i++) {
		if (on)
			__atomic_fetch_add(&t->waiters[w->indexes[i]], 1u, __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_sub(&t->waiters[w->indexes[i]], 1u, __ATOMIC_SEQ_CST);
	}
	/* The total, which lets a batch of writes skip the counts of its
	 * parameters when nobody waits for one (docs/segment-format.md §5.1). */
	if (on)
		__atomic_fetch_add(&t->wake->param_waiters, (uint32_t)w->count, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_sub(&t->wake->param_waiters, (uint32_t)w->count, __ATOMIC_SEQ_CST);
}

void pbus_watch_interrupt(struct pbus_watch *watch)
{
	if (!watch)
		return;
	__atomic_store_n(&watch->interrupted, 1, __ATOMIC_SEQ_CST);
	/* Every sleeper of the instance wakes; the others find no change
	 * and sleep again. */
	pbus_notify_waiters(watch->table);
}

int pbus_watch_wait(struct pbus_watch *watch, int64_t timeout_ns)
{
	int64_t deadline;
	bool barriered;
	int r = 0;

	if (!watch)
		return -EINVAL;
	if (collect_changes(watch))
		return (int)watch->changed_count;
	if (pbus_table_gone(watch->table))
		return -ESTALE;
	if (timeout_ns == 0)
		return -ETIMEDOUT;
	deadline = timeout_ns < 0 ? -1 : pbus_monotonic_ns() + timeout_ns;
	set_registration(watch, true);
	pbus_full_fence();
	barriered = pbus_asym_barrier() == 0;
	for (;;) {
		uint32_t n = __atomic_load_n(&watch->table->wake->notify, __ATOMIC_SEQ_CST);

		if (collect_changes(watch)) {
			r = (int)watch->changed_count;
			break;
		}
		if (pbus_table_gone(watch->table)) {
			r = -ESTALE;
			break;
		}
		/* Checked after reading n: an interrupt bumps notify after
		 * setting the flag, so the futex wait below cannot miss it. */
		if (__atomic_exchange_n(&watch->interrupted, 0, __ATOMIC_SEQ_CST)) {
			r = -EINTR;
			break;
		}
		{
			int64_t slice = pbus_monotonic_ns() +
					(barriered ? PBUS_WAIT_SLICE_NS : PBUS_UNBARRIERED_POLL_NS);

			r = pbus_futex_wait(&watch->table->wake->notify, n,
					    deadline >= 0 && deadline < slice ? deadline : slice);
			if (r == -ETIMEDOUT && (deadline < 0 || pbus_monotonic_ns() < deadline))
				continue;
		}
		if (r == -ETIMEDOUT) {
			r = collect_changes(watch) ? (int)watch->changed_count : -ETIMEDOUT;
			break;
		}
		if (r == -EINTR)
			break;
	}
	set_registration(watch, false);
	return r;
}

int pbus_watch_next(struct pbus_watch *watch, uint32_t *ret_index)
{
	if (!watch || !ret_index)
		return -EINVAL;
	if (watch->cursor >= watch->changed_count)
		return 0;
	*ret_index = watch->changed[watch->cursor++];
	return 1;
}
