/* SPDX-License-Identifier: MIT */
/*
 * read-internal.h: what the read protocol (read.c, the inline getters of table.h)
 * offers the library and pbusd: the reader's turn and a scalar read with
 * its sample.
 */
#ifndef PBUS_READ_INTERNAL_H
#define PBUS_READ_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <parambus/table.h>

#include "segment-layout.h"
#include "value-internal.h"

/* The reader's turn (docs/segment-format.md §4.5): a reader that failed
 * this often posts a deadline before which writers of the parameter hold
 * off, so that it is never starved however fast they write. */
#define PBUS_READ_TRIES_BEFORE_TURN 8
#define PBUS_READER_TURN_NS 200000

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

#endif
