/* SPDX-License-Identifier: MIT */
/*
 * read.c: the generic reader for values of any type and size (strings,
 * byte buffers, arrays). The inline readers in table.h handle scalars; this
 * one follows the same protocol (docs/segment-format.md, "Reading") for
 * values copied 8 bytes at a time, and for the 4-copy slots of values above
 * 256 bytes.
 */
#include <errno.h>
#include <string.h>

#include "clock-internal.h"
#include "futex-internal.h"
#include "read-internal.h"
#include "table-internal.h"

/* Post (or renew) a reader's turn unless another reader's is running: the
 * writers of the parameter hold off until we clear it or it expires. A word
 * further ahead than any reader posts is not a turn (writers ignore it):
 * replace it. */
static void take_turn(const struct pbus_param *param, uint64_t *turn)
{
	uint64_t *word = &param->table_->turns[param->index_];
	uint64_t now = (uint64_t)pbus_monotonic_ns(), current = __atomic_load_n(word, __ATOMIC_RELAXED);

	if (current > now && current <= now + PBUS_READER_TURN_NS && current != *turn)
		return; /* someone else's turn: writers hold off for us too */
	if (__atomic_compare_exchange_n(word, &current, now + PBUS_READER_TURN_NS, false,
					__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		*turn = now + PBUS_READER_TURN_NS;
}

/* Clear our turn, and wake the writers that hold off for it (a system call,
 * but only after a read that needed its turn). */
static void give_turn_back(const struct pbus_param *param, uint64_t turn)
{
	uint64_t *word = &param->table_->turns[param->index_];

	if (turn && __atomic_compare_exchange_n(word, &turn, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		pbus_futex_wake_all((const uint32_t *)(const void *)word);
}

int pbus_param_read(const struct pbus_param *param, void *buf, size_t size,
		    struct pbus_sample *ret_sample)
{
	const unsigned char *slot;
	const uint64_t *seqp;
	uint64_t turn = 0;

	if (!param || (!buf && size))
		return -EINVAL;
	slot = param->slot_;
	seqp = (const uint64_t *)(const void *)slot;
	for (unsigned tries = 1;; tries++) {
		uint64_t s1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
		const unsigned char *copy =
			slot + PBUS_SLOT_COPY0_OFFSET + (s1 & (param->copy_count_ - 1u)) * param->copy_stride_;
		const struct pbus_copy_head *ch = (const void *)copy;
		const unsigned char *value = copy + PBUS_COPY_VALUE_OFFSET;
		struct pbus_sample sample;
		size_t off;

		sample.timestamp_ns = __atomic_load_n(&ch->timestamp_ns, PBUS_DATA_LOAD_ORDER_);
		/* The status's low byte, as the inline reader takes it. */
		sample.status = __atomic_load_n((const uint8_t *)&ch->status, PBUS_DATA_LOAD_ORDER_);
		sample.length = __atomic_load_n(&ch->length, PBUS_DATA_LOAD_ORDER_);
		sample.seq = s1;
		/* A length read from a copy being rewritten may be anything: bound
		 * it before it is used; the version check below rejects it. A
		 * scalar's length is its size whatever the copy holds, as the
		 * inline getters read it (docs/segment-format.md §2.8). */
		if (sample.length > param->value_size_ || pbus_type_is_scalar(param->type_))
			sample.length = param->value_size_;
		if (sample.length <= size) {
			/* Whole words with a fixed-size copy (a memcpy() of a
			 * variable size would be a call per word), then the
			 * last, partial one. */
			for (off = 0; off + 8 <= sample.length; off += 8) {
				uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(value + off),
							     PBUS_DATA_LOAD_ORDER_);

				memcpy((unsigned char *)buf + off, &w, 8);
			}
			if (off < sample.length) {
				uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(value + off),
							     PBUS_DATA_LOAD_ORDER_);

				memcpy((unsigned char *)buf + off, &w, sample.length - off);
			}
		}
		PBUS_READ_FENCE_();
		/* Copy s1 % n is rewritten by the write of version s1 + n, which
		 * starts after s1 + n - 1 is published: up to n - 2 writes may
		 * complete during the read without touching it. */
		if (__atomic_load_n(seqp, __ATOMIC_RELAXED) - s1 > (uint64_t)param->copy_count_ - 2) {
			if (tries % PBUS_READ_TRIES_BEFORE_TURN == 0)
				take_turn(param, &turn);
			continue;
		}
		give_turn_back(param, turn);
		if (sample.length > size)
			return -EMSGSIZE;
		if (ret_sample)
			*ret_sample = sample;
		return (int)sample.status;
	}
}

int pbus_param_get_string(const struct pbus_param *param, char *buf, size_t size)
{
	struct pbus_sample sample;
	int r;

	if (!param || !buf || size == 0)
		return -EINVAL;
	if (param->type_ != PBUS_TYPE_STRING)
		return -EINVAL;
	r = pbus_param_read(param, buf, size - 1, &sample);
	if (r >= 0)
		buf[sample.length] = 0;
	return r;
}

uint64_t pbus_param_seq(const struct pbus_param *param)
{
	if (!param)
		return 0;
	return __atomic_load_n((const uint64_t *)(const void *)param->slot_, __ATOMIC_ACQUIRE);
}
