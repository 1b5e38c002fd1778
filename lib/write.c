/* SPDX-License-Identifier: MIT */
/*
 * write.c: the write side of the table protocol (docs/segment-format.md,
 * "Writing"). A write never touches the copy that readers are told to read:
 * it fills the other copy, then publishes it by advancing the version. That
 * is why a reader cannot see a torn value, cannot be starved by a writer
 * that holds nothing it needs, and cannot be blocked by a writer that died:
 * the published copy is always complete.
 *
 * With n copies (2, or 4 for large values), version s lives in copy s % n
 * and the write of version s + 1 fills copy (s + 1) % n, the one that held
 * version s + 1 - n: a reader of version s is disturbed only by the write of
 * s + n, which begins after s + n - 1 is published.
 *
 * Memory ordering, in C11 terms:
 *  - the release fence before the data stores orders the earlier version
 *    store (seq = s, made by us or, through the lock's acquire/release, by a
 *    previous writer) before them: a reader that sees any byte of the new
 *    data in its acquire-fenced re-read sees a version >= s and retries;
 *  - the release store of seq = s + 1 orders the data before the version:
 *    a reader that loads s + 1 with acquire sees the complete copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "barrier-internal.h"
#include "clock-internal.h"
#include "futex-internal.h"
#include "read-internal.h"
#include "table-internal.h"
#include "watch-internal.h"
#include "write-internal.h"
#include "write-lock-internal.h"

/* The typed setters' path is inlined whole into each of them, so that the
 * type and size are constants and no call sits between the setter and its
 * stores: that took about a quarter off the time of a write. */
#define WRITE_PATH static inline __attribute__((always_inline))

/* Store @n bytes into shared memory at @dst (8-aligned), 8 bytes at a time
 * with relaxed atomic stores, zero-padding the last word. */
static void store_words(unsigned char *dst, const unsigned char *src, size_t n)
{
	size_t off = 0;

	for (; off + 8 <= n; off += 8) {
		uint64_t w;

		memcpy(&w, src + off, 8);
		__atomic_store_n((uint64_t *)(void *)(dst + off), w, PBUS_DATA_STORE_ORDER_);
	}
	if (off < n) {
		uint64_t w = 0;

		memcpy(&w, src + off, n - off);
		__atomic_store_n((uint64_t *)(void *)(dst + off), w, PBUS_DATA_STORE_ORDER_);
	}
}

/*
 * A reader that failed PBUS_READ_TRIES_BEFORE_TURN times has posted a
 * deadline in the wake segment: hold off until it has read (it clears the
 * word) or the deadline passes. Anybody may write that word, so nothing in
 * it is believed beyond what a reader could rightly ask (docs/security.md):
 *  - a deadline that has passed, or lies further ahead than a reader ever
 *    posts (PBUS_READER_TURN_NS), is no turn: it is cleared, so that the
 *    writes after it take their fast path again;
 *  - a write holds off for one turn at most, and for PBUS_READER_TURN_NS at
 *    most;
 *  - a thread spends at most one part in PBUS_TURN_SHARE of its time holding
 *    off: after a wait of w it honours no turn for (PBUS_TURN_SHARE - 1) w.
 * So a reader that keeps posting (a hostile one, or many) can delay each
 * write by 200 us and slow a writer by 5 %, never stop it; and a reader
 * that posts now and then still gets its turn at once.
 */
#define PBUS_TURN_SHARE 20
#define PBUS_TURN_SLACK_NS 10000 /* clock reads of reader and writer apart */

static __thread int64_t turn_quiet_until;

static __attribute__((noinline)) void hold_off_for_reader(uint64_t *turn)
{
	uint64_t posted = __atomic_load_n(turn, __ATOMIC_ACQUIRE);
	int64_t now, t;

	if (posted == 0)
		return;
	now = pbus_monotonic_ns();
	if (posted <= (uint64_t)now || posted > (uint64_t)now + PBUS_READER_TURN_NS + PBUS_TURN_SLACK_NS) {
		__atomic_compare_exchange_n(turn, &posted, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		return;
	}
	if (now < turn_quiet_until)
		return;
	/* Sleep, rather than yield: the reader may need this CPU to finish its
	 * read, and a yield can hand it to any thread for a whole time slice.
	 * The reader wakes us when it gives its turn back; else the deadline
	 * does (plus the kernel's timer slack). The futex is the word's low
	 * half (little-endian), which every new deadline changes. */
	t = now;
	while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) == posted && t < (int64_t)posted) {
		pbus_futex_wait((const uint32_t *)(const void *)turn, (uint32_t)posted, (int64_t)posted);
		t = pbus_monotonic_ns();
	}
	turn_quiet_until = t + (t - now) * (PBUS_TURN_SHARE - 1);
}

static inline void wait_for_reader_turn(uint64_t *turn)
{
	if (__builtin_expect(__atomic_load_n(turn, __ATOMIC_RELAXED) != 0, 0))
		hold_off_for_reader(turn);
}

/* A writer registered for membarrier(2) needs no fence of the CPU between
 * its store of the version and its loads of the waiter counts, but the
 * compiler must still keep them in that order: the waiter's barrier orders
 * what the CPU does, not what the compiler emitted. */
static inline void registered_fence(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The writer's side of the waiter handshake (docs/segment-format.md §5.1):
 * the waiter registers, then checks versions; we publish the version, then
 * check the counts. One of the two must see the other, so each side needs
 * a full fence between its store and its loads. A process registered for
 * membarrier(2) needs none of its own, because every waiter runs the
 * global barrier after registering; any other process fences. */
static inline void handshake_fence(void)
{
	if (!pbus_asym_registered())
		pbus_full_fence();
	else
		registered_fence();
}

/* After version @seq of parameter @index is published (and the handshake's
 * fence, where one is needed): wake its waiters; report the version. */
WRITE_PATH int write_published(struct pbus_table *table, uint32_t index, uint64_t seq,
			       uint64_t *ret_seq)
{
	if (pbus_has_waiters(table, index))
		pbus_notify_waiters(table);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

/* The write proper, under a claim: fill the copy after the current version
 * and publish it. Returns the new version. */
static uint64_t store_value(const struct pbus_param *p, const void *value, size_t length,
			    uint64_t timestamp_ns, uint32_t status)
{
	unsigned char *slot = (unsigned char *)p->slot_;
	struct pbus_slot_head *head = (struct pbus_slot_head *)(void *)slot;
	uint64_t s = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);
	struct pbus_copy_head *copy = (struct pbus_copy_head *)(void *)(slot + PBUS_SLOT_COPY0_OFFSET +
									 ((s + 1) & (p->copy_count_ - 1u)) *
										 p->copy_stride_);

	PBUS_WRITE_FENCE_();
	__atomic_store_n(&copy->timestamp_ns, timestamp_ns, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&copy->status, status, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&copy->length, (uint32_t)length, PBUS_DATA_STORE_ORDER_);
	store_words((unsigned char *)(copy + 1), value, length);
	/* Publish: the release store hands the complete copy to readers. */
	__atomic_store_n(&head->seq, s + 1, __ATOMIC_RELEASE);
	return s + 1;
}

/* store_value() of a scalar (two copies of PBUS_SCALAR_COPY_STRIDE), in as
 * few stores as it takes, because under load every store waits in the
 * store buffer for its cache line, which the readers keep pulling away: the
 * timestamp, status and length as one word, the value (zero-padded, @bits:
 * its low @size bytes, little-endian) as one word, the version. */
WRITE_PATH uint64_t store_scalar(unsigned char *slot, uint64_t bits, uint32_t size, uint64_t ts,
				 uint32_t status)
{
	struct pbus_slot_head *head = (struct pbus_slot_head *)(void *)slot;
	uint64_t s = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);
	unsigned char *copy = slot + PBUS_SLOT_COPY0_OFFSET + ((s + 1) & 1u) * PBUS_SCALAR_COPY_STRIDE;

	PBUS_WRITE_FENCE_();
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_TIMESTAMP_OFFSET), ts, PBUS_DATA_STORE_ORDER_);
	/* status (offset 8) and length (offset 12), little-endian */
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_STATUS_OFFSET), (uint64_t)size << 32 | status,
			 PBUS_DATA_STORE_ORDER_);
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_VALUE_OFFSET), bits, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&head->seq, s + 1, __ATOMIC_RELEASE);
	return s + 1;
}

/* One write of a value that has passed every check: claim, store, let go,
 * wake. @timestamp_ns 0 means now. */
static int write_one(struct pbus_table *table, uint32_t index, const void *value, size_t length,
		     uint64_t timestamp_ns, uint32_t status, uint64_t *ret_seq)
{
	const struct pbus_param *p = &table->params[index];
	struct pbus_write_claim claim;
	uint64_t seq;
	int r;

	/* Ask for the slot's cache line in exclusive state now: readers hold it
	 * shared, and fetching it is most of what a write costs under load.
	 * The timestamp, taken meanwhile (and outside the claim, to keep it
	 * short), hides much of that wait. */
	__builtin_prefetch(p->slot_, 1, 3);
	if (timestamp_ns == 0)
		timestamp_ns = pbus_value_clock_ns();
	wait_for_reader_turn(&table->turns[index]);
	r = pbus_write_claim(&claim, pbus_param_lock(p), &table->aux[index].writing, &table->header->revocations,
			     table->may_bias);
	if (r < 0)
		return r;
	seq = store_value(p, value, length, timestamp_ns, status);
	pbus_write_release(&claim);
	handshake_fence();
	return write_published(table, index, seq, ret_seq);
}

/* May this table write parameter @param (its own, or a copy) at all? */
WRITE_PATH int check_access(const struct pbus_table *table, const struct pbus_param *param)
{
	if (!(table->flags & PBUS_OPEN_WRITE))
		return -EACCES;
	if ((param->flags_ & PBUS_PARAM_READONLY) &&
	    (table->flags & PBUS_OPEN_PROVIDER) != PBUS_OPEN_PROVIDER)
		return -EACCES;
	return 0;
}

/* Every check a write must pass, without writing. */
static int check_write(const struct pbus_table *table, const struct pbus_write *w)
{
	const struct pbus_param *p;
	int r;

	if (w->index >= table->param_count)
		return -ENOENT;
	p = &table->params[w->index];
	r = check_access(table, p);
	if (r < 0)
		return r;
	if (w->status > PBUS_STATUS_INVALID)
		return -EINVAL;
	/* A number without limits takes any bits of its size: what
	 * pbus_value_check() would find, without its typeinfo (in a batch of
	 * hundreds, each a cache line of its own). */
	if (p->flags_ & PBUS_PARAM_ANY_BITS_) {
		if (w->length > p->value_size_)
			return -EMSGSIZE;
		return w->length == p->value_size_ && w->value ? 0 : -EINVAL;
	}
	return pbus_value_check(&table->types[w->index], w->value, w->length);
}

/* The @size (1, 2, 4 or 8) bytes at @value as the stored word: little-endian,
 * zero-padded. One load each; memcpy() with a variable size would be a
 * call. */
static inline uint64_t scalar_bits(const void *value, size_t size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (__builtin_expect(size == 8, 1)) {
		memcpy(&v64, value, 8);
		return v64;
	}
	switch (size) {
	case 1: memcpy(&v8, value, 1); return v8;
	case 2: memcpy(&v16, value, 2); return v16;
	default: memcpy(&v32, value, 4); return v32;
	}
}

/* What the writes of one call need from their table and thread, loaded
 * once (a local copy stays in registers across the stores to shared
 * memory, which the compiler cannot tell apart from the table's fields). */
struct write_context {
	struct pbus_table *table;
	uint64_t *turns;
	struct pbus_param_aux *aux;
	uint64_t *revocations;
	uint64_t me;   /* the thread's token */
	bool may_bias;
};

WRITE_PATH struct write_context write_context(struct pbus_table *table)
{
	return (struct write_context){
		.table = table,
		.turns = table->turns,
		.aux = table->aux,
		.revocations = &table->header->revocations,
		.me = pbus_thread_token(),
		.may_bias = table->may_bias,
	};
}

/* write_scalar()'s way out: the general path, with the value's bytes as
 * the low @size bytes of @bits (little-endian). Out of line, so that @bits
 * needs no address on the fast path. */
static __attribute__((noinline)) int write_scalar_general(struct pbus_table *table, uint32_t index,
							  uint64_t bits, uint32_t size, uint64_t ts,
							  uint32_t status)
{
	return write_one(table, index, &bits, size, ts, status, NULL);
}

/*
 * The fast path of a typed setter: a value of 1 to 8 bytes of a parameter
 * biased to this thread, or whose word is free for a writer that takes no
 * bias (pbusd), with no reader's turn posted. write_one() in as few stores
 * as it takes: the announcement (or the lock), store_scalar(), the end of
 * the announcement (or the lock). Anything else takes the general path.
 *
 * @w: the call's context (write_context()); @param: the table's own or a
 * copy; @bits: the value (checked) as its stored word (scalar_bits()),
 * @size bytes of it; @ts: the timestamp; @batched: leave the waiter
 * handshake to the caller's batch_handshake() after its last write (the
 * general path makes its own all the same).
 */
WRITE_PATH int write_scalar(const struct write_context *w, const struct pbus_param *param,
			    uint64_t bits, uint32_t size, uint64_t ts, uint32_t status, bool batched)
{
	uint32_t index = param->index_;
	unsigned char *slot = (unsigned char *)param->slot_;
	uint64_t *writing = &w->aux[index].writing, *lock = pbus_param_lock(param);
	uint64_t me = w->me, seq, word;
	struct pbus_write_claim claim;

	if (__builtin_expect(__atomic_load_n(&w->turns[index], __ATOMIC_RELAXED) != 0, 0))
		goto general;
	word = __atomic_load_n(lock, __ATOMIC_RELAXED);
	/* (No lock word is BIASED with token 0, so this implies me != 0.) */
	if (__builtin_expect(word == (PBUS_LOCK_BIASED | me), 1)) {
		/* The owner's handshake; a biased owner is registered for
		 * membarrier(2), so the waiter check below needs no fence. */
		if (__builtin_expect(!pbus_write_claim_biased(&claim, lock, writing, me), 0))
			goto general;
	} else if (me == 0 || !pbus_write_claim_free(&claim, lock, writing, word, me, w->may_bias)) {
		goto general;
	}
	seq = store_scalar(slot, bits, size, ts, status);
	pbus_write_release(&claim);
	if (batched)
		return 0; /* the batch's handshake follows its last write */
	if (claim.biased)
		registered_fence(); /* a biased owner is registered */
	else
		handshake_fence();
	return write_published(w->table, index, seq, NULL);
general:
	return write_scalar_general(w->table, index, bits, size, ts, status);
}

/* --- Batches: all or nothing -------------------------------------------------
 *
 * A batch changes nothing unless it changes everything: every value is
 * checked first, and then every parameter is claimed before the first is
 * written. Only a claim can fail once the values are checked (a parameter
 * held by a writer that stopped, or -EAGAIN when told not to wait), and it
 * fails before anything is written; the claims taken so far are let go
 * unchanged.
 *
 * A batch waits for a held parameter while it holds others, so every batch
 * claims in one global order, by parameter index: a batch waits only for a
 * parameter above all it holds, so no two batches can wait for each other
 * (no cycle, no deadlock), and a single write holds one parameter and waits
 * for nothing else. How each claim is held fits in a byte (enum hold).
 */
enum hold {
	HOLD_BIAS = 1,        /* announced in aux.writing under our bias */
	HOLD_LOCK_TO_FREE,    /* the lock, released to 0 */
	HOLD_LOCK_TO_SHARED,  /* the lock, released to SHARED */
	HOLD_AGAIN,           /* held by an earlier write of the same batch */
	HOLD_LOCK_PENDING,    /* fast_claims(): to be locked, not yet */
};

static inline uint8_t hold_of(const struct pbus_write_claim *c)
{
	if (c->biased)
		return HOLD_BIAS;
	return c->unlock_to == 0 ? HOLD_LOCK_TO_FREE : HOLD_LOCK_TO_SHARED;
}

/* A batch's writes as hold_all() sees them: write k's parameter index is a
 * uint32_t at @first + k * @stride; @order lists the writes by ascending
 * index (ties in batch order). */
struct batch_indexes {
	const unsigned char *first;
	size_t stride, count;
	const uint32_t *order;
};

static inline uint32_t batch_index(const struct batch_indexes *b, size_t k)
{
	uint32_t index;

	memcpy(&index, b->first + k * b->stride, sizeof(index));
	return index;
}

/* Fill @order (b->count entries) for @b: the writes by ascending index. A
 * batch that is in order already (the usual case) costs one pass. */
static void order_batch(const struct batch_indexes *b, uint32_t *order)
{
	bool sorted = true;

	for (size_t k = 0; k < b->count; k++) {
		order[k] = (uint32_t)k;
		if (k && batch_index(b, k) < batch_index(b, k - 1))
			sorted = false;
	}
	if (sorted)
		return;
	/* Insertion sort: stable, no allocation; batches out of order are
	 * rare and a batch is at most the table's size. */
	for (size_t k = 1; k < b->count; k++) {
		uint32_t pos = order[k], index = batch_index(b, pos);
		size_t j = k;

		for (; j > 0 && batch_index(b, order[j - 1]) > index; j--)
			order[j] = order[j - 1];
		order[j] = pos;
	}
}

/* Let go of one claim of a batch. */
WRITE_PATH void release_hold(const struct write_context *ctx, uint32_t index, uint8_t hold)
{
	switch (hold) {
	case HOLD_BIAS:
		__atomic_store_n(&ctx->aux[index].writing, 0, __ATOMIC_RELEASE);
		break;
	case HOLD_LOCK_TO_FREE:
		pbus_write_hand_over(pbus_param_lock(&ctx->table->params[index]), 0);
		break;
	case HOLD_LOCK_TO_SHARED:
		pbus_write_hand_over(pbus_param_lock(&ctx->table->params[index]), PBUS_LOCK_SHARED);
		break;
	default:
		break;
	}
}

/* Let go of the claims of the first @count writes in claim order. */
static void release_holds(const struct write_context *ctx, const struct batch_indexes *b,
			  const uint8_t *holds, size_t count)
{
	for (size_t n = 0; n < count; n++) {
		size_t k = b->order[n];

		release_hold(ctx, batch_index(b, k), holds[k]);
	}
}

/* Claim parameter @index for a batch: 0 with *ret_hold, or the claim's
 * error (-EBUSY after a second of a stopped holder; without @wait, -EAGAIN
 * at once if a live writer holds it). */
WRITE_PATH int claim_for_batch(const struct write_context *ctx, uint32_t index, bool wait,
			       uint8_t *ret_hold)
{
	uint64_t *lock = pbus_param_lock(&ctx->table->params[index]), *writing = &ctx->aux[index].writing;
	uint64_t me = ctx->me, cur;
	struct pbus_write_claim c;
	int r;

	wait_for_reader_turn(&ctx->turns[index]);
	cur = __atomic_load_n(lock, __ATOMIC_RELAXED);
	if (__builtin_expect(cur == (PBUS_LOCK_BIASED | me) && me != 0, 1)) {
		/* Our own announcement is there only if an earlier write of
		 * this batch made it: nobody else stores our token. */
		if (__atomic_load_n(writing, __ATOMIC_RELAXED) == me) {
			*ret_hold = HOLD_AGAIN;
			return 0;
		}
		if (pbus_write_claim_biased(&c, lock, writing, me)) {
			*ret_hold = HOLD_BIAS;
			return 0;
		}
	} else if (me != 0 && (cur & ~PBUS_LOCK_WAITERS) == me) {
		*ret_hold = HOLD_AGAIN;
		return 0;
	}
	if (me != 0 && pbus_write_claim_free(&c, lock, writing, cur, me, ctx->may_bias)) {
		*ret_hold = hold_of(&c);
		return 0;
	}
	r = pbus_write_claim_slow(&c, lock, writing, ctx->revocations, ctx->may_bias, wait);
	if (r == 0)
		*ret_hold = hold_of(&c);
	return r;
}

/* Claim every parameter of a batch, in index order (see above). Returns 0,
 * or 1 if a parameter came twice (its claims must then all be let go after
 * every write: see write_many()). On failure nothing is held and
 * *ret_busy is the write whose parameter was in the way. */
static int hold_all(const struct write_context *ctx, const struct batch_indexes *b, uint8_t *holds,
		    bool wait, size_t *ret_busy)
{
	int again = 0;

	for (size_t n = 0; n < b->count; n++) {
		size_t k = b->order[n];
		uint32_t index = batch_index(b, k);
		int r;

		/* Fetch the next claim's line while this one is taken. */
		if (n + 1 < b->count)
			__builtin_prefetch(ctx->table->params[batch_index(b, b->order[n + 1])].slot_, 1, 3);
		r = claim_for_batch(ctx, index, wait, &holds[k]);
		if (__builtin_expect(r < 0, 0)) {
			release_holds(ctx, b, holds, n);
			*ret_busy = k;
			return r;
		}
		again |= holds[k] == HOLD_AGAIN;
	}
	return again;
}

/* The waiter handshake for a batch whose versions are all published: one
 * fence, then the counts, and one wake-up (a watcher finds every change). */
static void batch_handshake(struct pbus_table *table, const struct batch_indexes *b)
{
	handshake_fence();
	if (!pbus_table_has_waiters(table))
		return;
	for (size_t k = 0; k < b->count; k++) {
		if (pbus_has_waiters(table, batch_index(b, k))) {
			pbus_notify_waiters(table);
			return;
		}
	}
}

/* Claims of up to this many writes live on the stack; more are allocated. */
#define HOLDS_ON_STACK 256

/* pbus_table_write_many(), and pbus_table_write_many_try() without @wait. */
static int write_many(struct pbus_table *table, struct pbus_write *writes, size_t count, bool wait)
{
	uint8_t holds_on_stack[HOLDS_ON_STACK], *holds = holds_on_stack;
	uint32_t order_on_stack[HOLDS_ON_STACK], *order = order_on_stack;
	struct batch_indexes b = {(const unsigned char *)&writes[0].index, sizeof(writes[0]), count, NULL};
	struct write_context ctx;
	size_t busy = 0;
	int first = 0, r;
	uint64_t now = 0;

	if (!table || (!writes && count))
		return -EINVAL;
	if (pbus_table_gone(table))
		return -ESTALE;
	for (size_t i = 0; i < count; i++) {
		writes[i].result = check_write(table, &writes[i]);
		writes[i].seq = 0;
		if (writes[i].result < 0 && first == 0)
			first = writes[i].result;
	}
	if (first < 0 || count == 0)
		return first;
	/* One write cannot be half done: no claims to keep. */
	if (count == 1 && wait)
		return writes[0].result = write_one(table, writes[0].index, writes[0].value, writes[0].length,
						    writes[0].timestamp_ns, writes[0].status, &writes[0].seq);
	if (count > HOLDS_ON_STACK) {
		holds = malloc(count);
		order = malloc(count * sizeof(*order));
		if (!holds || !order) {
			first = -ENOMEM;
			goto out;
		}
	}
	order_batch(&b, order);
	b.order = order;
	ctx = write_context(table);
	r = hold_all(&ctx, &b, holds, wait, &busy);
	if (r < 0) {
		writes[busy].result = first = r;
		goto out;
	}
	/* Every claim is ours: nothing can fail any more. Each parameter is
	 * let go as soon as it is published, unless one comes twice (then its
	 * one claim serves every write of it, and all are let go at the end). */
	for (size_t n = 0; n < count; n++) {
		size_t k = order[n];
		struct pbus_write *w = &writes[k];
		const struct pbus_param *p = &table->params[w->index];

		/* The writes of one batch happen at one moment. */
		if (w->timestamp_ns == 0 && now == 0)
			now = pbus_value_clock_ns();
		if (pbus_type_is_scalar(p->type_))
			/* (checked: the length is the type's size) */
			w->seq = store_scalar((unsigned char *)p->slot_, scalar_bits(w->value, w->length),
					      (uint32_t)w->length, w->timestamp_ns ? w->timestamp_ns : now,
					      w->status);
		else
			w->seq = store_value(p, w->value, w->length, w->timestamp_ns ? w->timestamp_ns : now,
					     w->status);
		if (r == 0)
			release_hold(&ctx, w->index, holds[k]);
	}
	if (r > 0)
		release_holds(&ctx, &b, holds, count);
	/* The waiter handshake once for the whole batch, now that every
	 * version is published. */
	batch_handshake(table, &b);
out:
	if (holds != holds_on_stack) {
		free(holds);
		free(order);
	}
	return first;
}

int pbus_table_write_many(struct pbus_table *table, struct pbus_write *writes, size_t count)
{
	return write_many(table, writes, count, true);
}

int pbus_table_write_many_try(struct pbus_table *table, struct pbus_write *writes, size_t count)
{
	return write_many(table, writes, count, false);
}

/* One field of a prepared batch: a copy of the parameter (so that a write
 * loads nothing through a pointer) and where its value sits in the
 * caller's record. */
struct batch_field {
	struct pbus_param param;
	uint32_t offset;
};

/* A field as the owner's fast path of pbus_batch_write() walks them: in
 * claim order (by parameter index), everything at hand in 32 bytes. */
struct batch_step {
	uint64_t *writing;           /* aux.writing */
	unsigned char *slot;         /* the lock word is its second word */
	uint32_t index;
	uint32_t offset;             /* of the value in the record */
	uint32_t size;               /* of the value */
	uint32_t field;              /* its position in the batch (status[]) */
};

struct pbus_batch {
	struct pbus_table *table;
	size_t count;
	size_t checked_count;
	uint32_t *checked;           /* the fields whose values need checks */
	uint8_t *holds;              /* count: how each field's claim is held */
	uint32_t *order;             /* count: the fields by parameter index */
	struct batch_step *steps;    /* count, in claim order */
	bool twice;                  /* a parameter comes more than once */
	/* What the last claims that looked at every lock word found (per step
	 * HOLD_BIAS or HOLD_LOCK_TO_SHARED, in kinds), for the thread
	 * verified_by, when the table's revocations count was
	 * verified_revocations: while that count stays, the biased ones are
	 * still that thread's (fast_claims()). */
	uint8_t *kinds;
	uint64_t verified_by;
	uint64_t verified_revocations;
	struct batch_field fields[]; /* count */
};

int pbus_batch_new(struct pbus_table *table, const struct pbus_batch_field *fields, size_t count,
		   struct pbus_batch **ret_batch)
{
	struct pbus_batch *b;
	size_t checked = 0;

	if (!table || !fields || count == 0 || !ret_batch ||
	    count > (SIZE_MAX - sizeof(*b)) / sizeof(b->fields[0]))
		return -EINVAL;
	for (size_t i = 0; i < count; i++) {
		const struct pbus_param *p = fields[i].param;
		int r;

		if (!p || p->table_ != table || !pbus_type_is_scalar(p->type_) ||
		    fields[i].offset % p->value_size_ || fields[i].offset > UINT32_MAX)
			return -EINVAL;
		r = check_access(table, p);
		if (r < 0)
			return r;
		checked += !(p->flags_ & PBUS_PARAM_ANY_BITS_);
	}
	b = calloc(1, sizeof(*b) + count * sizeof(b->fields[0]));
	if (!b)
		return -ENOMEM;
	b->holds = calloc(count, 1);
	b->order = calloc(count, sizeof(*b->order));
	b->steps = calloc(count, sizeof(*b->steps));
	b->kinds = calloc(count, 1);
	if (checked)
		b->checked = calloc(checked, sizeof(*b->checked));
	if (!b->holds || !b->order || !b->steps || !b->kinds || (checked && !b->checked)) {
		pbus_batch_free(b);
		return -ENOMEM;
	}
	b->table = table;
	b->count = count;
	for (size_t i = 0; i < count; i++) {
		b->fields[i].param = *fields[i].param;
		b->fields[i].offset = (uint32_t)fields[i].offset;
		if (!(fields[i].param->flags_ & PBUS_PARAM_ANY_BITS_))
			b->checked[b->checked_count++] = (uint32_t)i;
	}
	order_batch(&(struct batch_indexes){(const unsigned char *)&b->fields[0].param.index_,
					   sizeof(b->fields[0]), count, NULL},
		    b->order);
	for (size_t n = 0; n < count; n++) {
		const struct batch_field *f = &b->fields[b->order[n]];

		b->steps[n] = (struct batch_step){
			.writing = &table->aux[f->param.index_].writing,
			.slot = (unsigned char *)f->param.slot_,
			.index = f->param.index_,
			.offset = f->offset,
			.size = f->param.value_size_,
			.field = b->order[n],
		};
		if (n && b->steps[n].index == b->steps[n - 1].index)
			b->twice = true;
	}
	*ret_batch = b;
	return 0;
}

void pbus_batch_free(struct pbus_batch *batch)
{
	if (!batch)
		return;
	free(batch->checked);
	free(batch->holds);
	free(batch->order);
	free(batch->steps);
	free(batch->kinds);
	free(batch);
}

/*
 * The fast path of a prepared batch: claims that need no waiting, taken
 * without hold_all()'s generality. A parameter biased to this thread (the
 * acquisition loop's own measurements) is announced with the owner's
 * handshake of §4.3; one whose word is free and shared (a parameter another
 * thread writes too) is locked with a compare-and-swap, after all the
 * announcements, and is published first, so that the other writer finds it
 * held for as short a time as possible. Nothing here waits: a parameter
 * held or biased by another thread, a fresh word (whose bias the general
 * path takes), a reader's turn or a parameter twice sends the batch to
 * hold_all(), having let go of everything.
 *
 * The owner's handshake compares the lock word after the announcement. A
 * batch compares the table's revocations count instead, once for all its
 * announcements, when it knows from its last claims what every word held
 * (kinds, verified_by, verified_revocations): every revoker bumps the count
 * after it takes the word and before its barrier (write-lock.c), so either
 * this load sees the bump or the revoker sees the announcement, as with the
 * word itself; and a count that has not moved since every word was seen
 * biased to us means no word has been taken from us since. So the batch
 * does not touch its parameters' slots (the readers' lines) until it
 * writes them.
 *
 * Returns how many were locked (0 or more) with every claim taken,
 * batch->holds[n] saying how for step n (HOLD_BIAS or HOLD_LOCK_TO_SHARED);
 * -1 with none.
 */
#define FAST_LOCK_SPINS 64

/* Lock step @n's shared word for the batch (a few spins if its other
 * writer holds it). */
WRITE_PATH bool fast_lock(const struct batch_step *st, uint64_t me)
{
	uint64_t *lock = pbus_slot_lock(st->slot);

	uint64_t word = PBUS_LOCK_SHARED;

	for (unsigned spins = 0;; spins++) {
		if (word == PBUS_LOCK_SHARED &&
		    __atomic_compare_exchange_n(lock, &word, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
		if ((word & PBUS_LOCK_STATE_MASK) != 0 || word == 0 || spins >= FAST_LOCK_SPINS)
			return false;
		/* Held by the other writer for a moment: wait with loads, not
		 * compare-and-swaps, which would take its line away from it in
		 * the middle of its write. */
		pbus_cpu_relax();
		word = __atomic_load_n(lock, __ATOMIC_RELAXED);
	}
}

/* Let go of the fast claims of @batch, unchanged (a lock back to SHARED,
 * which it was; an announcement cleared). */
static void fast_undo(struct pbus_batch *batch, const struct write_context *ctx)
{
	for (size_t n = 0; n < batch->count; n++) {
		release_hold(ctx, batch->steps[n].index, batch->holds[n]);
		batch->holds[n] = 0;
	}
}

/* The claims when the batch knows what every word holds (see above). */
WRITE_PATH int fast_claims_known(struct pbus_batch *batch, const struct write_context *ctx)
{
	uint64_t me = ctx->me;
	size_t count = batch->count, locked = 0;

	for (size_t n = 0; n < count; n++) {
		const struct batch_step *st = &batch->steps[n];

		batch->holds[n] = 0;
		if (__builtin_expect(__atomic_load_n(&ctx->turns[st->index], __ATOMIC_RELAXED) != 0, 0))
			goto undo;
		if (__builtin_expect(batch->kinds[n] == HOLD_BIAS, 1)) {
			__atomic_store_n(st->writing, me, __ATOMIC_RELAXED);
			batch->holds[n] = HOLD_BIAS;
		} else {
			locked++;
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(ctx->revocations, __ATOMIC_RELAXED) != batch->verified_revocations, 0))
		goto undo;
	for (size_t n = 0; locked && n < count; n++) {
		if (batch->kinds[n] != HOLD_LOCK_TO_SHARED)
			continue;
		if (!fast_lock(&batch->steps[n], me))
			goto undo;
		batch->holds[n] = HOLD_LOCK_TO_SHARED;
	}
	return (int)locked;
undo:
	fast_undo(batch, ctx);
	return -1;
}

/* The claims, looking at every word; on success the batch knows them. */
static int fast_claims_looking(struct pbus_batch *batch, const struct write_context *ctx)
{
	uint64_t me = ctx->me, biased = PBUS_LOCK_BIASED | me;
	/* Before any word is looked at: see fast_claims_known(). */
	uint64_t revocations = __atomic_load_n(ctx->revocations, __ATOMIC_ACQUIRE);
	size_t count = batch->count, locked = 0;

	batch->verified_by = 0;
	for (size_t n = 0; n < count; n++) {
		const struct batch_step *st = &batch->steps[n];
		uint64_t *lock = pbus_slot_lock(st->slot);
		struct pbus_write_claim c;
		uint64_t word;

		batch->holds[n] = 0;
		if (__atomic_load_n(&ctx->turns[st->index], __ATOMIC_RELAXED) != 0)
			goto undo;
		word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
		if (word == biased) {
			if (!pbus_write_claim_biased(&c, lock, st->writing, me))
				goto undo;
			batch->holds[n] = HOLD_BIAS;
		} else if ((word & PBUS_LOCK_WAITERS) == 0 && (word & ~PBUS_LOCK_WAITERS) != me) {
			/* Shared, or held for a moment by its other writer: locked
			 * below, after every announcement; anything else (biased
			 * to another thread, fresh) fails over to hold_all() there. */
			batch->holds[n] = HOLD_LOCK_PENDING;
			locked++;
		} else {
			goto undo;
		}
	}
	for (size_t n = 0; locked && n < count; n++) {
		if (batch->holds[n] != HOLD_LOCK_PENDING)
			continue;
		if (!fast_lock(&batch->steps[n], me)) {
			batch->holds[n] = 0;
			goto undo;
		}
		batch->holds[n] = HOLD_LOCK_TO_SHARED;
	}
	memcpy(batch->kinds, batch->holds, count);
	batch->verified_by = me;
	batch->verified_revocations = revocations;
	return (int)locked;
undo:
	for (size_t n = 0; n < count; n++)
		if (batch->holds[n] == HOLD_LOCK_PENDING)
			batch->holds[n] = 0;
	fast_undo(batch, ctx);
	return -1;
}

WRITE_PATH int fast_claims(struct pbus_batch *batch, const struct write_context *ctx)
{
	if (__builtin_expect(ctx->me == 0 || batch->twice, 0))
		return -1;
	if (__builtin_expect(batch->verified_by == ctx->me, 1)) {
		int r = fast_claims_known(batch, ctx);

		if (__builtin_expect(r >= 0, 1))
			return r;
	}
	return fast_claims_looking(batch, ctx);
}

/* Every check of a prepared batch's pass, before anything is written: the
 * instance, the statuses, the values that need checks. */
static int batch_check(const struct pbus_batch *batch, const unsigned char *rec, const uint32_t *status)
{
	const struct pbus_table *table = batch->table;

	if (pbus_table_gone(table))
		return -ESTALE;
	for (size_t i = 0; status && i < batch->count; i++) {
		if (status[i] > PBUS_STATUS_INVALID)
			return -EINVAL;
	}
	for (size_t k = 0; k < batch->checked_count; k++) {
		const struct batch_field *f = &batch->fields[batch->checked[k]];
		int r = pbus_value_check(&table->types[f->param.index_], rec + f->offset, f->param.value_size_);

		if (r < 0)
			return r;
	}
	return 0;
}

int pbus_batch_write(struct pbus_batch *batch, const void *record, const uint32_t *status,
		     uint64_t timestamp_ns)
{
	const unsigned char *rec = record;
	struct batch_indexes b;
	struct write_context ctx;
	struct pbus_table *table;
	size_t count, busy;
	int r;

	if (!batch || !record)
		return -EINVAL;
	table = batch->table;
	count = batch->count;
	r = batch_check(batch, rec, status);
	if (r < 0)
		return r;
	/* The writes of one batch happen at one moment. */
	if (timestamp_ns == 0)
		timestamp_ns = pbus_value_clock_ns();
	ctx = write_context(table);
	b = (struct batch_indexes){(const unsigned char *)&batch->fields[0].param.index_, sizeof(batch->fields[0]),
				   count, batch->order};
	r = fast_claims(batch, &ctx);
	if (__builtin_expect(r == 0, 1)) {
		/* Every parameter biased to us: publish each and end its
		 * announcement. */
		for (size_t n = 0; n < count; n++) {
			const struct batch_step *st = &batch->steps[n];

			store_scalar(st->slot, scalar_bits(rec + st->offset, st->size), st->size, timestamp_ns,
				     status ? status[st->field] : PBUS_STATUS_OK);
			__atomic_store_n(st->writing, 0, __ATOMIC_RELEASE);
		}
	} else if (r > 0) {
		/* Publish the locked ones first (held by us for the shortest
		 * time), then the biased ones, each let go once published. */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t n = 0; n < count; n++) {
				const struct batch_step *st = &batch->steps[n];
				uint8_t hold = batch->holds[n];

				if ((hold == HOLD_BIAS) != (pass == 1))
					continue;
				store_scalar(st->slot, scalar_bits(rec + st->offset, st->size), st->size,
					     timestamp_ns, status ? status[st->field] : PBUS_STATUS_OK);
				release_hold(&ctx, st->index, hold);
			}
		}
	} else {
		r = hold_all(&ctx, &b, batch->holds, true, &busy);
		if (r < 0)
			return r;
		/* As write_many(): in claim order, each let go once published. */
		for (size_t n = 0; n < count; n++) {
			const struct batch_step *st = &batch->steps[n];

			store_scalar(st->slot, scalar_bits(rec + st->offset, st->size), st->size, timestamp_ns,
				     status ? status[st->field] : PBUS_STATUS_OK);
			if (r == 0)
				release_hold(&ctx, st->index, batch->holds[st->field]);
		}
		if (r > 0)
			release_holds(&ctx, &b, batch->holds, count);
	}
	batch_handshake(table, &b);
	return 0;
}

int pbus_batch_write_each(struct pbus_batch *batch, const void *record, const uint32_t *status,
			  uint64_t timestamp_ns, size_t *ret_written)
{
	const unsigned char *rec = record;
	struct write_context ctx;
	size_t written = 0;
	int r;

	if (ret_written)
		*ret_written = 0;
	if (!batch || !record)
		return -EINVAL;
	r = batch_check(batch, rec, status);
	if (r < 0)
		return r;
	if (timestamp_ns == 0)
		timestamp_ns = pbus_value_clock_ns();
	ctx = write_context(batch->table);
	/* As many typed setters, in field order, each parameter claimed,
	 * published and let go on its own. */
	for (; written < batch->count; written++) {
		const struct batch_field *f = &batch->fields[written];

		r = write_scalar(&ctx, &f->param, scalar_bits(rec + f->offset, f->param.value_size_),
				 f->param.value_size_, timestamp_ns,
				 status ? status[written] : PBUS_STATUS_OK, true);
		if (__builtin_expect(r < 0, 0))
			break;
	}
	/* One waiter handshake for what was published. */
	batch_handshake(batch->table,
			&(struct batch_indexes){(const unsigned char *)&batch->fields[0].param.index_,
						sizeof(batch->fields[0]), written, NULL});
	if (ret_written)
		*ret_written = written;
	return r < 0 ? r : 0;
}

int pbus_param_set(const struct pbus_param *param, const void *value, size_t length)
{
	struct pbus_write w = {.status = PBUS_STATUS_OK, .value = value, .length = length};

	if (!param)
		return -EINVAL;
	w.index = param->index_;
	return pbus_table_write_many(param->table_, &w, 1);
}

/* One parameter of a known type: the checks of a batch of one, without
 * the batch (this is the path of every typed setter). */
WRITE_PATH int set_typed(const struct pbus_param *param, unsigned type, const void *value,
			 size_t length)
{
	struct pbus_table *table;
	int r;

	if (!param || param->type_ != type)
		return -EINVAL;
	table = param->table_;
	r = check_access(table, param);
	if (r < 0)
		return r;
	if (!(param->flags_ & PBUS_PARAM_ANY_BITS_)) {
		r = pbus_value_check(&table->types[param->index_], value, length);
		if (r < 0)
			return r;
	}
	if (pbus_table_gone(table))
		return -ESTALE;
	if (pbus_type_is_scalar(type)) {
		struct write_context ctx = write_context(table);

		/* Ask for the slot's cache line in exclusive state now: readers
		 * hold it shared, and fetching it is most of what a write costs
		 * under load. The clock reading hides much of that wait. */
		__builtin_prefetch(param->slot_, 1, 3);
		return write_scalar(&ctx, param, scalar_bits(value, length), (uint32_t)length,
				    pbus_value_clock_ns(), PBUS_STATUS_OK, false);
	}
	return write_one(table, param->index_, value, length, 0, PBUS_STATUS_OK, NULL);
}

int pbus_param_set_bool(const struct pbus_param *param, bool value)
{
	uint8_t v = value ? 1 : 0;

	return set_typed(param, PBUS_TYPE_BOOL, &v, 1);
}

#define DEFINE_SETTER(suffix, ctype, type_code)                                   \
	int pbus_param_set_##suffix(const struct pbus_param *param, ctype value)  \
	{                                                                         \
		return set_typed(param, type_code, &value, sizeof(value));        \
	}

DEFINE_SETTER(int8, int8_t, PBUS_TYPE_INT8)
DEFINE_SETTER(int16, int16_t, PBUS_TYPE_INT16)
DEFINE_SETTER(int32, int32_t, PBUS_TYPE_INT32)
DEFINE_SETTER(int64, int64_t, PBUS_TYPE_INT64)
DEFINE_SETTER(uint8, uint8_t, PBUS_TYPE_UINT8)
DEFINE_SETTER(uint16, uint16_t, PBUS_TYPE_UINT16)
DEFINE_SETTER(uint32, uint32_t, PBUS_TYPE_UINT32)
DEFINE_SETTER(uint64, uint64_t, PBUS_TYPE_UINT64)
DEFINE_SETTER(float, float, PBUS_TYPE_FLOAT)
DEFINE_SETTER(double, double, PBUS_TYPE_DOUBLE)
DEFINE_SETTER(enum, int32_t, PBUS_TYPE_ENUM)

int pbus_param_set_string(const struct pbus_param *param, const char *value)
{
	if (!value)
		return -EINVAL;
	return set_typed(param, PBUS_TYPE_STRING, value, strlen(value));
}

int pbus_param_set_bytes(const struct pbus_param *param, const void *value, size_t length)
{
	return set_typed(param, PBUS_TYPE_BYTES, value, length);
}
