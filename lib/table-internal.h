/* SPDX-License-Identifier: MIT */
/*
 * table-internal.h: struct pbus_table and the helpers shared by the modules
 * of libparambus: segment.c (create, map, validate, publish), table.c
 * (lookups), write.c (the write protocol), wait.c (futex waits),
 * write-lock.c (the per-parameter writer lock) and process.c (liveness).
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

#define PBUS_SHM_DIR "/dev/shm"
#define PBUS_SHM_PREFIX "pbus."

struct pbus_table {
	char instance[PBUS_INSTANCE_NAME_MAX + 1];
	unsigned flags;                   /* enum pbus_open_flag */
	/* The value segment. */
	unsigned char *base;
	size_t size;
	struct pbus_segment_header *header;
	const struct pbus_param_descriptor *descriptors;
	struct pbus_param_aux *aux;
	/* The wake segment. */
	unsigned char *wake_base;
	size_t wake_size;
	struct pbus_wake_header *wake;
	uint32_t *waiters;                /* param_count waiter counts */
	uint64_t *turns;                  /* param_count reader's-turn deadlines */
	/* Resolved once at open. */
	uint32_t param_count;
	struct pbus_param *params;
	struct pbus_typeinfo *types;
	int32_t *enum_values;             /* every enumerator of every enum */
	const char **enum_labels;
	uint32_t *by_name;                /* parameter indexes sorted by name */
	/* Owner only (pbus_instance_create). */
	bool owner;
	int lock_fd;                      /* flock on the instance lock file */
	char *temp_name, *temp_wake_name; /* unpublished names in PBUS_SHM_DIR */
};

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

/* Is @name a valid instance name? */
bool pbus_instance_name_valid(const char *name);

/* Path of an instance's file in PBUS_SHM_DIR: "" suffix for the value
 * segment, ".wake", ".lock". -ENAMETOOLONG if it does not fit. */
int pbus_shm_path(char *buf, size_t size, const char *instance, const char *suffix);

/* Check a mapped value segment of @size bytes completely, so that nothing a
 * corrupt or hostile segment holds can send a reader outside the mapping.
 * -EPROTO with nothing touched if anything is wrong. */
int pbus_segment_validate(const unsigned char *base, size_t size);

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

/* A string from the segment's pool (validated to be NUL-terminated). */
static inline const char *pbus_table_string(const struct pbus_table *table, uint32_t offset)
{
	return (const char *)table->base + table->header->strings_offset + offset;
}

/* The reader's turn (docs/segment-format.md §4.5): a reader that failed
 * this often posts a deadline before which writers of the parameter hold
 * off, so that it is never starved however fast they write. */
#define PBUS_READ_TRIES_BEFORE_TURN 8
#define PBUS_READER_TURN_NS 200000

/* Write one parameter's value that has passed every check (write.c);
 * @timestamp_ns 0 means now. Waiters are woken at once, or, with
 * @wake_later, *wake_later is set and the caller wakes them (once per
 * batch). */
int pbus_write_checked(struct pbus_table *table, uint32_t index, const void *value,
		       size_t length, uint64_t timestamp_ns, uint32_t status, uint64_t *ret_seq,
		       bool *wake_later);

/* Wake every waiter of the table (state changes, saves). */
void pbus_wake_all(struct pbus_table *table);

/* futex(2) on a shared 32-bit word: wait while *word == expected until the
 * absolute CLOCK_MONOTONIC @deadline_ns (negative: none); wake all. */
int pbus_futex_wait(const uint32_t *word, uint32_t expected, int64_t deadline_ns);
void pbus_futex_wake_all(const uint32_t *word);

int64_t pbus_monotonic_ns(void);
uint64_t pbus_realtime_ns(void);

/* The writer lock (write-lock.c): 0, or -EBUSY if a live holder keeps it
 * for longer than a second (a stopped process), never forever. */
int pbus_write_lock(uint64_t *lock);
void pbus_write_unlock(uint64_t *lock);

/* This process's lock token: pid | (start time token << 32). */
uint64_t pbus_self_token(void);

/* Does the process with @pid and start token @start still run? (Zombies and
 * reused PIDs count as dead.) */
bool pbus_process_alive(uint32_t pid, uint32_t start);

/* The start time token of @pid (low 32 bits of /proc/PID/stat starttime),
 * or 0 if unknown. */
uint32_t pbus_process_start_token(pid_t pid);

#endif
