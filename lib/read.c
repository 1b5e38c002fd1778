/* SPDX-License-Identifier: MIT */
/*
 * read.c: the generic reader for values of any type and size (strings,
 * byte buffers, arrays). The inline readers in table.h handle scalars; this
 * one follows the same protocol (docs/segment-format.md, "Reading") for
 * values copied 8 bytes at a time.
 */
#include <errno.h>
#include <string.h>

#include "table-internal.h"

int pbus_param_read(const struct pbus_param *param, void *buf, size_t size,
		    struct pbus_sample *ret_sample)
{
	const unsigned char *slot;
	const uint64_t *seqp;

	if (!param || (!buf && size))
		return -EINVAL;
	slot = param->slot_;
	seqp = (const uint64_t *)(const void *)slot;
	for (;;) {
		uint64_t s1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
		const unsigned char *copy = slot + PBUS_SLOT_COPY0_OFFSET + (s1 & 1u) * param->copy_stride_;
		const struct pbus_copy_head *ch = (const void *)copy;
		const unsigned char *value = copy + PBUS_COPY_VALUE_OFFSET;
		struct pbus_sample sample;
		size_t off;

		sample.timestamp_ns = __atomic_load_n(&ch->timestamp_ns, PBUS_DATA_LOAD_ORDER_);
		sample.status = __atomic_load_n(&ch->status, PBUS_DATA_LOAD_ORDER_);
		sample.length = __atomic_load_n(&ch->length, PBUS_DATA_LOAD_ORDER_);
		sample.seq = s1;
		/* A length read from a copy being rewritten may be anything: bound
		 * it before it is used; the version check below rejects it. */
		if (sample.length > param->value_size_)
			sample.length = param->value_size_;
		if (sample.length <= size) {
			for (off = 0; off < sample.length; off += 8) {
				uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(value + off),
							     PBUS_DATA_LOAD_ORDER_);
				size_t n = sample.length - off < 8 ? sample.length - off : 8;

				memcpy((unsigned char *)buf + off, &w, n);
			}
		}
		PBUS_READ_FENCE_();
		if (__atomic_load_n(seqp, __ATOMIC_RELAXED) != s1)
			continue;
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

uint64_t pbus_param_saved_seq(const struct pbus_param *param)
{
	if (!param)
		return 0;
	return __atomic_load_n(&param->table_->aux[param->index_].saved_seq, __ATOMIC_ACQUIRE);
}
