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
	uint32_t *by_name;                /* parameter indexes sorted by name */
	bool may_bias;                    /* writers of this table take biases */
	/* Owner only (pbus_instance_create). */
	bool owner;
	int lock_fd;                      /* flock on the instance lock file */
	int temp_fd;                      /* the unpublished value segment (an
					   * O_TMPFILE), -1 once published */
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

/* A private flag in struct pbus_param's flags_ (beside the descriptor's, which
 * use bits 0-7): a number without limits, so that every bit pattern of its
 * size is a value and a typed setter, which passes that size, needs no value
 * check (pbus_value_check() would return 0). */
#define PBUS_PARAM_ANY_BITS_ (1u << 15)

/* Is @name a valid instance name? */
bool pbus_instance_name_valid(const char *name);

/* Path of an instance's file in PBUS_SHM_DIR: "" suffix for the value
 * segment, ".wake", ".lock". -ENAMETOOLONG if it does not fit. */
int pbus_shm_path(char *buf, size_t size, const char *instance, const char *suffix);

/* Check a mapped value segment of @size bytes completely, so that nothing a
 * corrupt or hostile segment holds can send a reader outside the mapping.
 * -EPROTO with nothing touched if anything is wrong. */
int pbus_segment_validate(const unsigned char *base, size_t size);

/* pbus_segment_validate(), and the segment is the one of @instance. */
int pbus_segment_validate_instance(const unsigned char *base, size_t size, const char *instance);

/* Attach the wake segment that the (validated) value header of @table
 * names, and check that the instance's owner made it (docs/segment-format.md
 * §3). An orphaned instance whose wake segment is gone gets a private
 * stand-in. */
int pbus_wake_attach(struct pbus_table *table);

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

/* Values of 1 to 8 bytes in two copies of PBUS_SCALAR_COPY_STRIDE: the
 * numbers, booleans and enums; not strings, byte buffers or arrays. */
static inline bool pbus_type_is_scalar(unsigned type)
{
	return !(type & PBUS_TYPE_ARRAY_FLAG) && type != PBUS_TYPE_STRING && type != PBUS_TYPE_BYTES;
}

/* pbus_param_read() of a scalar (pbus_type_is_scalar()) with its sample,
 * as the inline getters read: the stored word (little-endian, zero above
 * the value's size) into *ret_word; the general reader if a write got in
 * the way. For pbusd, whose replies read hundreds of values at a time. */
static inline int pbus_read_scalar_sample(const struct pbus_param *param, uint64_t *ret_word,
					  struct pbus_sample *ret_sample)
{
	const unsigned char *slot = param->slot_;
	const uint64_t *seqp = (const uint64_t *)(const void *)(slot + PBUS_SLOT_SEQ_OFFSET);
	uint64_t s1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE), timestamp, word;
	const unsigned char *copy = slot + PBUS_SLOT_COPY0_OFFSET + (s1 & 1u) * PBUS_SCALAR_COPY_STRIDE;
	uint8_t status;

	timestamp = __atomic_load_n((const uint64_t *)(const void *)(copy + PBUS_COPY_TIMESTAMP_OFFSET),
				    PBUS_DATA_LOAD_ORDER_);
	status = __atomic_load_n(copy + PBUS_COPY_STATUS_OFFSET, PBUS_DATA_LOAD_ORDER_);
	word = __atomic_load_n((const uint64_t *)(const void *)(copy + PBUS_COPY_VALUE_OFFSET),
			       PBUS_DATA_LOAD_ORDER_);
	PBUS_READ_FENCE_();
	if (__builtin_expect(__atomic_load_n(seqp, __ATOMIC_RELAXED) != s1, 0)) {
		*ret_word = 0;
		return pbus_param_read(param, ret_word, param->value_size_, ret_sample);
	}
	*ret_word = word;
	/* A scalar's length is its size: every write is checked for that. */
	*ret_sample = (struct pbus_sample){.timestamp_ns = timestamp, .seq = s1, .length = param->value_size_,
					   .status = status};
	return status;
}

/* pbus_table_write_many() that never waits for another writer: if a live
 * writer holds one of the parameters, -EAGAIN with nothing written (that
 * write's .result -EAGAIN, the others' 0); try again later. For pbusd,
 * whose one thread serves every client and must not stop for one busy
 * parameter (docs/security.md). */
int pbus_table_write_many_try(struct pbus_table *table, struct pbus_write *writes, size_t count);

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

/* futex(2) on a shared 32-bit word: wait while *word == expected until the
 * absolute CLOCK_MONOTONIC @deadline_ns (negative: none); wake all. */
int pbus_futex_wait(const uint32_t *word, uint32_t expected, int64_t deadline_ns);
void pbus_futex_wake_all(const uint32_t *word);

int64_t pbus_monotonic_ns(void);
uint64_t pbus_realtime_ns(void);

/*
 * CLOCK_REALTIME in ns for a value's timestamp, within 1 us of
 * pbus_realtime_ns() and much cheaper where the TSC can be read (clock.c):
 * the inline part extrapolates from the thread's anchor in fixed point,
 * clock.c takes anchors and measures the rate.
 */
struct pbus_clock_anchor {
	uint64_t tsc, ns;        /* tsc 0: none yet */
	uint64_t period_ticks;   /* refresh after this many ticks (about 1 ms) */
	uint64_t mult;           /* ns per tick << 32 (so that ticks within a
				  * period times mult stay below 2^53) */
	uint64_t last_ns;        /* the thread's latest timestamp */
};

extern __thread struct pbus_clock_anchor pbus_clock_anchor_
	__attribute__((tls_model("initial-exec")));
uint64_t pbus_value_clock_slow_(void);

static inline uint64_t pbus_value_clock_ns(void)
{
#if defined(__x86_64__)
	struct pbus_clock_anchor *a = &pbus_clock_anchor_;

	if (__builtin_expect(a->tsc != 0, 1)) {
		uint64_t delta = __builtin_ia32_rdtsc() - a->tsc;

		if (__builtin_expect(delta < a->period_ticks, 1)) {
			uint64_t ns = a->ns + ((delta * a->mult) >> 32);

			if (ns > a->last_ns)
				a->last_ns = ns;
			return a->last_ns;
		}
	}
#endif
	return pbus_value_clock_slow_();
}

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

/* Whether this process is registered for membarrier(2)'s global expedited
 * barrier: then its writes skip the fence of the waiter handshake, because
 * every waiter issues that barrier after registering (wait.c). */
extern bool pbus_asym_registered_;

static inline bool pbus_asym_registered(void)
{
	return __atomic_load_n(&pbus_asym_registered_, __ATOMIC_RELAXED);
}

/* The slow side of the asymmetric handshakes: a full barrier in every
 * thread of every registered process (or, failing that, of every process). */
int pbus_asym_barrier(void);

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

/* The lock word of parameter @param. */
static inline uint64_t *pbus_param_lock(const struct pbus_param *param)
{
	return pbus_slot_lock(param->slot_);
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

/* Does the thread with @tid and start token @start still run? (Exited,
 * zombie and reused ids count as dead.) */
bool pbus_thread_alive(uint32_t tid, uint32_t start);

/* Does the process with @pid and start token @start still run? (Zombies and
 * reused PIDs count as dead.) */
bool pbus_process_alive(uint32_t pid, uint32_t start);

/* The start time token of process or thread @pid (the low 30 bits of
 * /proc/PID/stat starttime, so that a token leaves the lock word's two
 * state bits free), or 0 if unknown. */
#define PBUS_START_TOKEN_MASK 0x3FFFFFFFu
uint32_t pbus_process_start_token(pid_t pid);

#endif
