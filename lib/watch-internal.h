/* SPDX-License-Identifier: MIT */
/*
 * watch-internal.h: the writer's side of waiting (watch.c, docs/segment-format.md
 * §5.1): is anybody waiting, and waking them.
 */
#ifndef PBUS_WATCH_INTERNAL_H
#define PBUS_WATCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "table-internal.h"

/* Wake every waiter of the table (state changes, saves). */
void pbus_wake_all(struct pbus_table *table);

/* Bump the notify word and wake everyone sleeping on it: the wake-up of a
 * write that has waiters (§5.1), and of an interrupted watch. */
void pbus_notify_waiters(struct pbus_table *table);

/* Does anyone wait for any parameter of @table? (When false, so is
 * pbus_has_waiters() for each: a batch's one test. Same conditions.) */
static inline bool pbus_table_has_waiters(const struct pbus_table *table)
{
	return __atomic_load_n(&table->wake->param_waiters, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&table->wake->any_waiters, __ATOMIC_RELAXED);
}

/* Does anyone wait for parameter @index, or for every parameter? (After the
 * write's fence, or under a registered writer's asymmetric handshake.) */
static inline bool pbus_has_waiters(const struct pbus_table *table, uint32_t index)
{
	return __atomic_load_n(&table->waiters[index], __ATOMIC_RELAXED) ||
	       __atomic_load_n(&table->wake->any_waiters, __ATOMIC_RELAXED);
}

#endif
