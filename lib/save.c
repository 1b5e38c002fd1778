/* SPDX-License-Identifier: MIT */
/*
 * save.c: the persistence handshake (docs/segment-format.md §5.2,
 * docs/persistence.md): the owner marks a parameter's version saved once
 * its state file holds it, and a writer that must know its value is on disk
 * waits for that mark.
 *
 * Threads: any; the owner's marks and the waits meet in the segment.
 */
#include <errno.h>

#include <parambus/instance.h>

#include "clock-internal.h"
#include "futex-internal.h"
#include "process-internal.h"
#include "table-internal.h"

#define SAVE_CHECK_INTERVAL_NS INT64_C(1000000000)

uint64_t pbus_param_saved_seq(const struct pbus_param *param)
{
	if (!param)
		return 0;
	return __atomic_load_n(&param->table_->aux[param->index_].saved_seq, __ATOMIC_ACQUIRE);
}

int pbus_instance_mark_saved(struct pbus_table *owner, uint32_t index, uint64_t seq)
{
	if (!owner || !owner->owner || index >= owner->param_count)
		return -EINVAL;
	__atomic_store_n(&owner->aux[index].saved_seq, seq, __ATOMIC_RELEASE);
	__atomic_fetch_add(&owner->header->save_count, 1u, __ATOMIC_RELEASE);
	pbus_futex_wake_all(&owner->header->save_count);
	return 0;
}

int pbus_param_wait_saved(const struct pbus_param *param, uint64_t seq, int64_t timeout_ns)
{
	struct pbus_table *t;
	int64_t deadline;

	if (!param)
		return -EINVAL;
	t = param->table_;
	if (!(param->flags_ & PBUS_PARAM_PERSISTENT))
		return -EINVAL;
	deadline = timeout_ns < 0 ? -1 : pbus_monotonic_ns() + timeout_ns;
	for (;;) {
		uint32_t n = __atomic_load_n(&t->header->save_count, __ATOMIC_ACQUIRE);
		int64_t slice;
		int r;

		if (pbus_param_saved_seq(param) >= seq)
			return 0;
		if (pbus_table_gone(t))
			return -ESTALE;
		/* Only the owner saves: if it died, nothing will come. Sleep in
		 * slices of a second to notice that. */
		if (!t->owner && !pbus_process_alive(t->header->owner_pid, t->header->owner_start))
			return -ESRCH;
		slice = pbus_monotonic_ns() + SAVE_CHECK_INTERVAL_NS;
		r = pbus_futex_wait(&t->header->save_count, n,
				    deadline >= 0 && deadline < slice ? deadline : slice);
		if (r == -ETIMEDOUT && deadline >= 0 && pbus_monotonic_ns() >= deadline)
			return pbus_param_saved_seq(param) >= seq ? 0 : -ETIMEDOUT;
		if (r == -EINTR)
			return r;
	}
}
