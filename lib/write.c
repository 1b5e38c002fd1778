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
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "table-internal.h"

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

/* A reader that failed PBUS_READ_TRIES_BEFORE_TURN times has posted a
 * deadline: hold off until it has read (it clears the word) or the deadline
 * passes. The bound keeps a dead or hostile reader from wedging writers: it
 * can delay a write by PBUS_READER_TURN_NS at most per posting. */
static void wait_for_reader_turn(const uint64_t *turn)
{
	uint64_t deadline = __atomic_load_n(turn, __ATOMIC_ACQUIRE);

	if (deadline == 0)
		return;
	while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) == deadline &&
	       (uint64_t)pbus_monotonic_ns() < deadline)
		sched_yield();
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
}

/* After version @seq of parameter @index is published (and the handshake's
 * fence, where one is needed): wake its waiters, unless a @batch runs the
 * handshake for all its writes at once; report the version. */
WRITE_PATH int write_published(struct pbus_table *table, uint32_t index, uint64_t seq,
			       uint64_t *ret_seq, bool batch)
{
	if (!batch && pbus_has_waiters(table, index))
		pbus_notify_waiters(table);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

int pbus_write_checked(struct pbus_table *table, uint32_t index, const void *value,
		       size_t length, uint64_t timestamp_ns, uint32_t status, uint64_t *ret_seq,
		       bool batch)
{
	const struct pbus_param *p = &table->params[index];
	unsigned char *slot = (unsigned char *)p->slot_;
	struct pbus_slot_head *head = (struct pbus_slot_head *)(void *)slot;
	struct pbus_copy_head *copy;
	struct pbus_write_claim claim;
	uint64_t s;
	int r;

	/* Ask for the slot's cache line in exclusive state now: readers hold it
	 * shared, and fetching it is most of what a write costs under load.
	 * The timestamp, taken meanwhile (and outside the claim, to keep it
	 * short), hides much of that wait. */
	__builtin_prefetch(slot, 1, 3);
	if (timestamp_ns == 0)
		timestamp_ns = pbus_value_clock_ns();
	wait_for_reader_turn(&table->turns[index]);
	r = pbus_write_claim(&claim, &head->lock, &table->aux[index].writing, table->may_bias);
	if (r < 0)
		return r;
	s = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);
	copy = (struct pbus_copy_head *)(void *)(slot + PBUS_SLOT_COPY0_OFFSET +
						 ((s + 1) & (p->copy_count_ - 1u)) * p->copy_stride_);
	PBUS_WRITE_FENCE_();
	__atomic_store_n(&copy->timestamp_ns, timestamp_ns, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&copy->status, status, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&copy->length, (uint32_t)length, PBUS_DATA_STORE_ORDER_);
	store_words((unsigned char *)(copy + 1), value, length);
	/* Publish: the release store hands the complete copy to readers. */
	__atomic_store_n(&head->seq, s + 1, __ATOMIC_RELEASE);
	pbus_write_release(&claim);
	if (!batch)
		handshake_fence();
	return write_published(table, index, s + 1, ret_seq, batch);
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

static bool table_gone(const struct pbus_table *table)
{
	return __atomic_load_n(&table->header->state, __ATOMIC_ACQUIRE) > PBUS_SEGMENT_LIVE;
}

/* What the writes of one call need from their table and thread, loaded
 * once (a local copy stays in registers across the stores to shared
 * memory, which the compiler cannot tell apart from the table's fields). */
struct write_context {
	struct pbus_table *table;
	const uint64_t *turns;
	struct pbus_param_aux *aux;
	uint64_t me;   /* the thread's token */
	bool may_bias;
};

WRITE_PATH struct write_context write_context(struct pbus_table *table)
{
	return (struct write_context){
		.table = table,
		.turns = table->turns,
		.aux = table->aux,
		.me = pbus_thread_token(),
		.may_bias = table->may_bias,
	};
}

/* write_scalar()'s way out: the general path, with the value's bytes as
 * the low @size bytes of @bits (little-endian). Out of line, so that @bits
 * needs no address on the fast path. */
static __attribute__((noinline)) int write_scalar_general(struct pbus_table *table, uint32_t index,
							  uint64_t bits, uint32_t size, uint64_t ts,
							  uint32_t status, uint64_t *ret_seq,
							  bool batch)
{
	return pbus_write_checked(table, index, &bits, size, ts, status, ret_seq, batch);
}

/*
 * The fast path of scalar writes (the typed setters, and each scalar of a
 * batch): a value of 1 to 8 bytes (two copies of 24 bytes) of a parameter
 * biased to this thread, or whose word is free for a writer that takes no
 * bias (pbusd), with no reader's turn posted. The protocol of
 * pbus_write_checked(), in as few stores as it takes, because under load
 * every store waits in the store buffer for its cache line, which the
 * readers keep pulling away: the announcement (or the lock), the
 * timestamp, status and length as one word, the value (zero-padded) as one
 * word, the version, the end of the announcement (or the lock).
 * Anything else takes the general path.
 *
 * @w: the call's context (write_context()); @param: the table's own or a
 * copy; @bits: the value (checked) as its stored word (scalar_bits()),
 * @size bytes of it; @ts: the timestamp; @ret_seq and @batch as for
 * pbus_write_checked().
 */
WRITE_PATH int write_scalar(const struct write_context *w, const struct pbus_param *param,
			    uint64_t bits, uint32_t size, uint64_t ts, uint32_t status,
			    uint64_t *ret_seq, bool batch)
{
	uint32_t index = param->index_;
	unsigned char *slot = (unsigned char *)param->slot_;
	struct pbus_slot_head *head = (struct pbus_slot_head *)(void *)slot;
	uint64_t *writing = &w->aux[index].writing;
	uint64_t me = w->me, s, word;
	struct pbus_write_claim claim;
	unsigned char *copy;

	if (__builtin_expect(__atomic_load_n(&w->turns[index], __ATOMIC_RELAXED) != 0, 0))
		goto general;
	word = __atomic_load_n(&head->lock, __ATOMIC_RELAXED);
	/* (No lock word is BIASED with token 0, so this implies me != 0.) */
	if (__builtin_expect(word == (PBUS_LOCK_BIASED | me), 1)) {
		/* The owner's handshake; a biased owner is registered for
		 * membarrier(2), so the waiter check below needs no fence. */
		if (__builtin_expect(!pbus_write_claim_biased(&claim, &head->lock, writing, me), 0))
			goto general;
	} else if (me == 0 ||
		   !pbus_write_claim_free(&claim, &head->lock, writing, word, me, w->may_bias)) {
		goto general;
	}
	s = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);
	copy = slot + PBUS_SLOT_COPY0_OFFSET + ((s + 1) & 1u) * PBUS_SCALAR_COPY_STRIDE;
	PBUS_WRITE_FENCE_();
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_TIMESTAMP_OFFSET), ts,
			 PBUS_DATA_STORE_ORDER_);
	/* status (offset 8) and length (offset 12), little-endian */
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_STATUS_OFFSET),
			 (uint64_t)size << 32 | status, PBUS_DATA_STORE_ORDER_);
	__atomic_store_n((uint64_t *)(void *)(copy + PBUS_COPY_VALUE_OFFSET), bits,
			 PBUS_DATA_STORE_ORDER_);
	__atomic_store_n(&head->seq, s + 1, __ATOMIC_RELEASE);
	pbus_write_release(&claim);
	if (!claim.biased && !batch)
		handshake_fence();
	return write_published(w->table, index, s + 1, ret_seq, batch);
general:
	return write_scalar_general(w->table, index, bits, size, ts, status, ret_seq, batch);
}

/* The waiter handshake for a batch whose versions are all published: one
 * fence, then the counts, and one wake-up (a watcher finds every change).
 * @indexes: @count parameter indexes (uint32_t), @stride bytes apart;
 * @results (int, same stride), or NULL: skip the writes that failed. */
static void batch_handshake(struct pbus_table *table, const unsigned char *indexes,
			    const unsigned char *results, size_t stride, size_t count)
{
	handshake_fence();
	if (!pbus_table_has_waiters(table))
		return;
	for (size_t i = 0; i < count; i++) {
		uint32_t index;
		int result = 0;

		memcpy(&index, indexes + i * stride, sizeof(index));
		if (results)
			memcpy(&result, results + i * stride, sizeof(result));
		if (result == 0 && pbus_has_waiters(table, index)) {
			pbus_notify_waiters(table);
			return;
		}
	}
}

int pbus_table_write_many(struct pbus_table *table, struct pbus_write *writes, size_t count)
{
	struct write_context ctx;
	int first = 0;
	uint64_t now = 0;

	if (!table || (!writes && count))
		return -EINVAL;
	if (table_gone(table))
		return -ESTALE;
	for (size_t i = 0; i < count; i++) {
		writes[i].result = check_write(table, &writes[i]);
		if (writes[i].result < 0 && first == 0)
			first = writes[i].result;
	}
	if (first < 0)
		return first;
	ctx = write_context(table);
	for (size_t i = 0; i < count; i++) {
		struct pbus_write *w = &writes[i];
		const struct pbus_param *p = &table->params[w->index];

		/* The writes of one batch happen at one moment. */
		if (w->timestamp_ns == 0 && now == 0)
			now = pbus_value_clock_ns();
		/* Fetch the next slot's line while this one is written. */
		if (i + 1 < count)
			__builtin_prefetch(table->params[writes[i + 1].index].slot_, 1, 3);
		if (pbus_type_is_scalar(p->type_)) {
			/* (checked: the length is the type's size) */
			w->result = write_scalar(&ctx, p, scalar_bits(w->value, w->length),
						 (uint32_t)w->length,
						 w->timestamp_ns ? w->timestamp_ns : now, w->status,
						 &w->seq, true);
		} else {
			w->result = pbus_write_checked(table, w->index, w->value, w->length,
						       w->timestamp_ns ? w->timestamp_ns : now, w->status,
						       &w->seq, true);
		}
		if (w->result < 0 && first == 0)
			first = w->result;
	}
	/* The waiter handshake once for the whole batch, now that every
	 * version is published. */
	batch_handshake(table, (const unsigned char *)&writes[0].index,
			(const unsigned char *)&writes[0].result, sizeof(writes[0]), count);
	return first;
}

/* One field of a prepared batch: a copy of the parameter (so that a write
 * loads nothing through a pointer) and where its value sits in the
 * caller's record. */
struct batch_field {
	struct pbus_param param;
	uint32_t offset;
};

struct pbus_batch {
	struct pbus_table *table;
	size_t count;
	size_t checked_count;
	uint32_t *checked;           /* the fields whose values need checks */
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
	if (checked) {
		b->checked = calloc(checked, sizeof(*b->checked));
		if (!b->checked) {
			free(b);
			return -ENOMEM;
		}
	}
	b->table = table;
	b->count = count;
	for (size_t i = 0; i < count; i++) {
		b->fields[i].param = *fields[i].param;
		b->fields[i].offset = (uint32_t)fields[i].offset;
		if (!(fields[i].param->flags_ & PBUS_PARAM_ANY_BITS_))
			b->checked[b->checked_count++] = (uint32_t)i;
	}
	*ret_batch = b;
	return 0;
}

void pbus_batch_free(struct pbus_batch *batch)
{
	if (!batch)
		return;
	free(batch->checked);
	free(batch);
}

int pbus_batch_write(struct pbus_batch *batch, const void *record, const uint32_t *status,
		     uint64_t timestamp_ns)
{
	const unsigned char *rec = record;
	struct write_context ctx;
	struct pbus_table *table;
	size_t count;
	int first = 0;

	if (!batch || !record)
		return -EINVAL;
	table = batch->table;
	count = batch->count;
	if (table_gone(table))
		return -ESTALE;
	for (size_t i = 0; status && i < count; i++) {
		if (status[i] > PBUS_STATUS_INVALID)
			return -EINVAL;
	}
	for (size_t k = 0; k < batch->checked_count; k++) {
		const struct batch_field *f = &batch->fields[batch->checked[k]];
		int r = pbus_value_check(&table->types[f->param.index_], rec + f->offset,
					 f->param.value_size_);

		if (r < 0)
			return r;
	}
	/* The writes of one batch happen at one moment. */
	if (timestamp_ns == 0)
		timestamp_ns = pbus_value_clock_ns();
	ctx = write_context(table);
	for (size_t i = 0; i < count; i++) {
		const struct batch_field *f = &batch->fields[i];
		int r = write_scalar(&ctx, &f->param,
				     scalar_bits(rec + f->offset, f->param.value_size_),
				     f->param.value_size_, timestamp_ns,
				     status ? status[i] : PBUS_STATUS_OK, NULL, true);

		if (r < 0 && first == 0)
			first = r;
	}
	batch_handshake(table, (const unsigned char *)&batch->fields[0].param.index_, NULL,
			sizeof(batch->fields[0]), count);
	return first;
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
	if (table_gone(table))
		return -ESTALE;
	if (pbus_type_is_scalar(type)) {
		struct write_context ctx = write_context(table);

		/* Ask for the slot's cache line in exclusive state now: readers
		 * hold it shared, and fetching it is most of what a write costs
		 * under load. The clock reading hides much of that wait. */
		__builtin_prefetch(param->slot_, 1, 3);
		return write_scalar(&ctx, param, scalar_bits(value, length), (uint32_t)length,
				    pbus_value_clock_ns(), PBUS_STATUS_OK, NULL, false);
	}
	return pbus_write_checked(table, param->index_, value, length, 0, PBUS_STATUS_OK, NULL, false);
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
