/* SPDX-License-Identifier: MIT */
/*
 * segment.c: the life of a segment. The owner lays it out from a schema,
 * fills it in a file that has no name yet (O_TMPFILE) and publishes it with
 * rename(2), so that nobody ever maps a half-built segment; readers check
 * who owns it, map it and validate every offset before trusting it; a clean
 * shutdown marks it CLOSED and removes its name. The wake segment, which
 * every reader may write, is System V shared memory rather than a file: its
 * size is fixed at creation and only its creator may remove it, so no other
 * user can make a mapping of it fault (docs/security.md).
 * docs/segment-format.md is the specification.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <parambus/instance.h>

#include "owner-internal.h"
#include "schema-internal.h"
#include "process-internal.h"
#include "segment-internal.h"
#include "table-internal.h"

bool pbus_instance_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n > PBUS_INSTANCE_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '-' || *c == '.'))
			return false;
	return true;
}

int pbus_shm_path(char *buf, size_t size, const char *instance, const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s%s%s", PBUS_SHM_DIR, PBUS_SHM_PREFIX, instance, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* --- Validation ----------------------------------------------------------- */

static bool range_ok(uint64_t offset, uint64_t length, uint64_t size)
{
	return offset <= size && length <= size - offset;
}

static bool pool_string_ok(const unsigned char *pool, uint64_t pool_size, uint32_t offset,
			   uint32_t length)
{
	/* The string and the NUL after it lie inside the pool. */
	return range_ok(offset, (uint64_t)length + 1, pool_size) && pool[offset + length] == 0 &&
	       memchr(pool + offset, 0, length) == NULL;
}

int pbus_segment_validate(const unsigned char *base, size_t size)
{
	const struct pbus_segment_header *h = (const void *)base;
	const struct pbus_param_descriptor *d;
	const struct pbus_enum_record *enums;
	const struct pbus_enumerator *enumerators;
	const unsigned char *pool;
	uint64_t enumerator_total = 0;

	if (size < sizeof(*h) || memcmp(h->magic, PBUS_SEGMENT_MAGIC, 8) ||
	    h->format_version != PBUS_FORMAT_VERSION || h->header_size != sizeof(*h) ||
	    h->segment_size != size || h->descriptor_size != sizeof(*d) ||
	    h->param_count > PBUS_PARAM_MAX || memchr(h->instance, 0, sizeof(h->instance)) == NULL ||
	    h->wake_size < pbus_wake_segment_bytes(h->param_count) ||
	    h->wake_size > pbus_wake_segment_bytes(h->param_count) + PBUS_WAKE_SLACK_MAX)
		return -EPROTO;
	if (!range_ok(h->descriptors_offset, (uint64_t)h->param_count * sizeof(*d), size) ||
	    !range_ok(h->enums_offset, (uint64_t)h->enum_count * sizeof(*enums), size) ||
	    !range_ok(h->strings_offset, h->strings_size, size) ||
	    !range_ok(h->slots_offset, h->slots_size, size) ||
	    !range_ok(h->aux_offset, (uint64_t)h->param_count * sizeof(struct pbus_param_aux), size) ||
	    h->descriptors_offset % 8 || h->enums_offset % 8 || h->enumerators_offset % 8 ||
	    h->slots_offset % PBUS_CACHE_LINE || h->aux_offset % PBUS_CACHE_LINE || h->strings_size == 0)
		return -EPROTO;
	pool = base + h->strings_offset;
	if (!pool_string_ok(pool, h->strings_size, h->interface_name, h->interface_name_length))
		return -EPROTO;
	enums = (const void *)(base + h->enums_offset);
	for (uint32_t i = 0; i < h->enum_count; i++) {
		if (!pool_string_ok(pool, h->strings_size, enums[i].name, enums[i].name_length) ||
		    enums[i].first != enumerator_total || enums[i].count == 0)
			return -EPROTO;
		enumerator_total += enums[i].count;
	}
	if (!range_ok(h->enumerators_offset, enumerator_total * sizeof(*enumerators), size))
		return -EPROTO;
	enumerators = (const void *)(base + h->enumerators_offset);
	for (uint64_t i = 0; i < enumerator_total; i++)
		if (!pool_string_ok(pool, h->strings_size, enumerators[i].label,
				    enumerators[i].label_length))
			return -EPROTO;
	d = (const void *)(base + h->descriptors_offset);
	for (uint32_t i = 0; i < h->param_count; i++, d++) {
		uint32_t esize = pbus_scalar_size(pbus_element_type(d->type));

		if (!pool_string_ok(pool, h->strings_size, d->name, d->name_length) ||
		    d->name_length == 0 ||
		    !pool_string_ok(pool, h->strings_size, d->unit, d->unit_length) ||
		    !pool_string_ok(pool, h->strings_size, d->description, d->description_length) ||
		    !pool_string_ok(pool, h->strings_size, d->group, d->group_length) ||
		    !range_ok(d->default_value, d->default_length, h->strings_size) ||
		    !pbus_type_valid(d->type) || d->update_class > PBUS_UPDATE_LIVE ||
		    d->value_size == 0 || d->value_size > PBUS_VALUE_SIZE_MAX ||
		    d->default_length > d->value_size ||
		    d->copy_stride != pbus_round_up(sizeof(struct pbus_copy_head) + d->value_size, 8) ||
		    d->copy_count != (d->value_size > PBUS_TWO_COPY_LIMIT ? 4u : 2u) ||
		    d->slot_size < sizeof(struct pbus_slot_head) + d->copy_count * (uint64_t)d->copy_stride ||
		    d->slot_offset % PBUS_CACHE_LINE ||
		    !range_ok(d->slot_offset, d->slot_size, size) ||
		    d->slot_offset < h->slots_offset ||
		    d->slot_offset + d->slot_size > h->slots_offset + h->slots_size)
			return -EPROTO;
		if (d->type == PBUS_TYPE_STRING || d->type == PBUS_TYPE_BYTES) {
			if (d->element_size != 1)
				return -EPROTO;
		} else if (d->element_size != esize || d->value_size % esize ||
			   (!(d->type & PBUS_TYPE_ARRAY_FLAG) && d->value_size != esize)) {
			return -EPROTO;
		}
		if (pbus_element_type(d->type) == PBUS_TYPE_ENUM ? d->enum_index >= h->enum_count
								 : d->enum_index != PBUS_NO_ENUM)
			return -EPROTO;
	}
	return 0;
}

int pbus_segment_validate_instance(const unsigned char *base, size_t size, const char *instance)
{
	int r = pbus_segment_validate(base, size);

	if (r < 0)
		return r;
	/* The owner's segment of another instance, renamed or linked here,
	 * is not this instance. */
	return strcmp(((const struct pbus_segment_header *)(const void *)base)->instance, instance) ? -EPROTO
												     : 0;
}

int pbus_wake_attach(struct pbus_table *t)
{
	const struct pbus_segment_header *h = (const void *)t->base;
	uint64_t need = pbus_wake_segment_bytes(h->param_count);
	struct shmid_ds ds;
	void *base;
	int attach_error = 0;

	if (h->wake_size < need || h->wake_id > INT32_MAX)
		return -EPROTO;
	base = shmat((int)h->wake_id, NULL, 0);
	if (base == (void *)-1) {
		attach_error = errno; /* before /proc is read below */
	} else {
		/* Attached, the id names this segment until we detach: its
		 * status is the truth about what we mapped. Only the process
		 * that created the value segment, as its owner, made the one
		 * the header names; an id reused for anybody else's segment
		 * fails here. */
		if (shmctl((int)h->wake_id, IPC_STAT, &ds) == 0 && ds.shm_perm.cuid == t->owner_uid &&
		    (uint32_t)ds.shm_cpid == h->owner_pid && ds.shm_segsz >= h->wake_size) {
			t->wake_base = base;
			t->wake_size = (size_t)h->wake_size;
			return 0;
		}
		shmdt(base);
	}
	/* Gone (its last user detached after the owner died) or somebody
	 * else's now. That is only possible once the owner is dead: a live
	 * owner keeps its wake segment attached. */
	if (pbus_process_alive(h->owner_pid, h->owner_start) &&
	    __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) <= PBUS_SEGMENT_LIVE)
		return attach_error == EACCES || attach_error == ENOMEM ? -attach_error : -EPROTO;
	/* An orphan: nobody who shared the wake segment is left to wake or to
	 * be woken, and the next owner replaces the instance. A private zero
	 * page stands in, so that reads, writes and waits (which see the
	 * versions themselves) still work. */
	base = mmap(NULL, (size_t)h->wake_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	t->wake_base = base;
	t->wake_size = (size_t)h->wake_size;
	t->wake_private = true;
	return 0;
}
