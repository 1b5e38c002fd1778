/* SPDX-License-Identifier: MIT */
/*
 * table-internal.h: struct pbus_table, an opened instance, and what table.c
 * offers the other modules: making, resolving and freeing a table, its
 * descriptors and strings. Each other concept has its own private header:
 * segment-internal.h (paths, validation, the wake segment), instance.c's
 * API is public (instance.h), read-internal.h, write-internal.h,
 * write-lock-internal.h (the lock word), watch-internal.h (waking
 * waiters), futex-internal.h, clock-internal.h, barrier-internal.h,
 * process-internal.h, view-internal.h (the schema view a table owns);
 * docs/architecture.md shows which calls which.
 */
#ifndef PBUS_TABLE_INTERNAL_H
#define PBUS_TABLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <parambus/table.h>

#include "segment-layout.h"
#include "value-internal.h"

struct pbus_view;

struct pbus_table {
	char instance[PBUS_INSTANCE_NAME_MAX + 1];
	unsigned flags;                   /* enum pbus_open_flag */
	/* The value segment. */
	unsigned char *base;
	size_t size;
	struct pbus_segment_header *header;
	const struct pbus_param_descriptor *descriptors;
	struct pbus_param_aux *aux;
	uid_t owner_uid;                  /* the value segment file's owner */
	/* The wake segment: attached System V shared memory, or, for an
	 * orphaned instance whose wake segment is gone, a private stand-in. */
	unsigned char *wake_base;
	size_t wake_size;
	bool wake_private;
	struct pbus_wake_header *wake;
	uint32_t *waiters;                /* param_count waiter counts */
	uint64_t *turns;                  /* param_count reader's-turn deadlines */
	/* Resolved once at open. */
	uint32_t param_count;
	struct pbus_param *params;
	struct pbus_typeinfo *types;
	int32_t *enum_values;             /* every enumerator of every enum */
	const char **enum_labels;
	struct pbus_view *view;           /* the schema view (view-internal.h) */
	bool may_bias;                    /* writers of this table take biases */
	/* Owner only (pbus_instance_create). */
	bool owner;
	int lock_fd;                      /* flock on the instance lock file */
	int temp_fd;                      /* the unpublished value segment (an
					   * O_TMPFILE), -1 once published */
};

/* A private flag in struct pbus_param's flags_ (beside the descriptor's, which
 * use bits 0-7): a number without limits, so that every bit pattern of its
 * size is a value and a typed setter, which passes that size, needs no value
 * check (pbus_value_check() would return 0). */
#define PBUS_PARAM_ANY_BITS_ (1u << 15)

/* A table object of @instance (a valid name) with @flags, mapping nothing
 * yet: what pbus_table_open() and pbus_instance_create() fill in. NULL if
 * out of memory; freed with pbus_table_destroy(). */
struct pbus_table *pbus_table_new(const char *instance, unsigned flags);

/* Fill the table's resolved arrays from its validated mapping. */
int pbus_table_resolve(struct pbus_table *table);

/* Free what pbus_table_resolve() and the mappings hold, and the table. */
void pbus_table_destroy(struct pbus_table *table);

/* The descriptor of parameter @index. */
static inline const struct pbus_param_descriptor *
pbus_table_descriptor(const struct pbus_table *table, uint32_t index)
{
	return &table->descriptors[index];
}

/* Has the instance closed or been replaced (docs/segment-format.md §6)? */
static inline bool pbus_table_gone(const struct pbus_table *table)
{
	return __atomic_load_n(&table->header->state, __ATOMIC_ACQUIRE) > PBUS_SEGMENT_LIVE;
}

/* A string from the segment's pool (validated to be NUL-terminated). */
static inline const char *pbus_table_string(const struct pbus_table *table, uint32_t offset)
{
	return (const char *)table->base + table->header->strings_offset + offset;
}

#endif
