/* SPDX-License-Identifier: MIT */
/*
 * segment.c: the life of a segment. The owner lays it out from a schema,
 * fills it under a temporary name and publishes it with rename(2), so that
 * nobody ever maps a half-built segment; readers map it and validate every
 * offset before trusting it; a clean shutdown marks it CLOSED and removes
 * its names. docs/segment-format.md is the specification.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <parambus/instance.h>

#include "schema-internal.h"
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
	    h->param_count > PBUS_PARAM_MAX || memchr(h->instance, 0, sizeof(h->instance)) == NULL)
		return -EPROTO;
	if (!range_ok(h->descriptors_offset, (uint64_t)h->param_count * sizeof(*d), size) ||
	    !range_ok(h->enums_offset, (uint64_t)h->enum_count * sizeof(*enums), size) ||
	    !range_ok(h->strings_offset, h->strings_size, size) ||
	    !range_ok(h->slots_offset, h->slots_size, size) ||
	    !range_ok(h->aux_offset, (uint64_t)h->param_count * sizeof(struct pbus_param_aux), size) ||
	    h->descriptors_offset % 8 || h->enums_offset % 8 || h->enumerators_offset % 8 ||
	    h->slots_offset % PBUS_CACHE_LINE || h->aux_offset % 8 || h->strings_size == 0)
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

/* --- Creation ------------------------------------------------------------- */

/* The string pool being built: every string followed by a NUL. */
struct pool {
	unsigned char *data;
	size_t length, capacity;
};

static int pool_add(struct pool *p, const void *bytes, size_t n, uint32_t *ret_offset)
{
	if (p->length + n + 1 > p->capacity) {
		size_t cap = (p->length + n + 1) * 2;
		unsigned char *d = realloc(p->data, cap);

		if (!d)
			return -ENOMEM;
		p->data = d;
		p->capacity = cap;
	}
	if (p->length + n + 1 > UINT32_MAX)
		return -E2BIG;
	*ret_offset = (uint32_t)p->length;
	if (n)
		memcpy(p->data + p->length, bytes, n);
	p->data[p->length + n] = 0;
	p->length += n + 1;
	return 0;
}

static int pool_add_string(struct pool *p, const char *s, uint32_t *ret_offset,
			   uint32_t *ret_length)
{
	size_t n = s ? strlen(s) : 0;

	*ret_length = (uint32_t)n;
	return pool_add(p, s ? s : "", n, ret_offset);
}

static int create_file(const char *path, size_t size, mode_t mode, gid_t group,
		       unsigned char **ret_base)
{
	void *base;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 || fchmod(fd, mode) < 0 ||
	    (group != (gid_t)-1 && fchown(fd, (uid_t)-1, group) < 0))
		r = -errno;
	if (r == 0) {
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED)
			r = -errno;
		else
			*ret_base = base;
	}
	close(fd);
	if (r < 0)
		unlink(path);
	return r;
}

/* Lay the value segment out from @schema into @t (mapped under a temporary
 * name) and fill header, descriptors, enums, pool and initial values. */
static int build_value_segment(struct pbus_table *t, const struct pbus_schema *schema,
			       mode_t mode, gid_t group, uint64_t instance_id)
{
	struct pool pool = {0};
	struct pbus_param_descriptor *descs = NULL;
	struct pbus_enum_record *enums = NULL;
	struct pbus_enumerator *enumerators = NULL;
	struct pbus_segment_header h;
	uint32_t n = schema->param_count;
	uint64_t offset, slots_size = 0;
	uint64_t now = pbus_realtime_ns();
	int r = -ENOMEM;

	memset(&h, 0, sizeof(h));
	descs = calloc(n ? n : 1, sizeof(*descs));
	enums = calloc(schema->enum_count ? schema->enum_count : 1, sizeof(*enums));
	enumerators = calloc(schema->enumerator_count ? schema->enumerator_count : 1,
			     sizeof(*enumerators));
	if (!descs || !enums || !enumerators)
		goto out;
	if ((r = pool_add_string(&pool, schema->interface, &h.interface_name,
				 &h.interface_name_length)) < 0)
		goto out;
	for (uint32_t i = 0; i < schema->enum_count; i++) {
		enums[i].first = schema->enums[i].first;
		enums[i].count = schema->enums[i].count;
		if ((r = pool_add_string(&pool, schema->enums[i].name, &enums[i].name,
					 &enums[i].name_length)) < 0)
			goto out;
	}
	for (uint32_t i = 0; i < schema->enumerator_count; i++) {
		enumerators[i].value = schema->enumerator_values[i];
		if ((r = pool_add_string(&pool, schema->enumerator_labels[i], &enumerators[i].label,
					 &enumerators[i].label_length)) < 0)
			goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct pbus_schema_param *sp = &schema->params[i];
		struct pbus_param_descriptor *d = &descs[i];

		d->type = (uint8_t)sp->ti.type;
		d->update_class = (uint8_t)sp->update_class;
		d->flags = (uint16_t)sp->ti.flags;
		d->value_size = sp->ti.value_size;
		d->element_size = sp->ti.element_size;
		d->enum_index = sp->enum_index;
		d->copy_stride = (uint32_t)pbus_round_up(sizeof(struct pbus_copy_head) + d->value_size, 8);
		d->copy_count = d->value_size > PBUS_TWO_COPY_LIMIT ? 4 : 2;
		d->slot_size = (uint32_t)pbus_round_up(sizeof(struct pbus_slot_head) +
						       d->copy_count * (uint64_t)d->copy_stride,
						       PBUS_CACHE_LINE);
		d->slot_offset = slots_size; /* relative until the layout is known */
		slots_size += d->slot_size;
		memcpy(&d->min, &sp->ti.min, 8);
		memcpy(&d->max, &sp->ti.max, 8);
		memcpy(&d->step, &sp->step, 8);
		d->gid = PBUS_NO_GID;
		if ((r = pool_add_string(&pool, sp->name, &d->name, &d->name_length)) < 0 ||
		    (r = pool_add_string(&pool, sp->unit, &d->unit, &d->unit_length)) < 0 ||
		    (r = pool_add_string(&pool, sp->description, &d->description,
					 &d->description_length)) < 0 ||
		    (r = pool_add_string(&pool, sp->group, &d->group, &d->group_length)) < 0 ||
		    (r = pool_add(&pool, sp->default_value, sp->default_length, &d->default_value)) < 0)
			goto out;
		d->default_length = sp->default_length;
	}

	/* Layout: header, descriptors, enums, enumerators, pool, aux, slots. */
	offset = sizeof(h);
	h.descriptors_offset = offset;
	offset += (uint64_t)n * sizeof(*descs);
	h.enums_offset = offset;
	offset += (uint64_t)schema->enum_count * sizeof(*enums);
	h.enumerators_offset = offset;
	offset += (uint64_t)schema->enumerator_count * sizeof(*enumerators);
	h.strings_offset = offset;
	h.strings_size = pool.length;
	offset = pbus_round_up(offset + pool.length, 8);
	h.aux_offset = offset;
	offset += (uint64_t)n * sizeof(struct pbus_param_aux);
	h.slots_offset = pbus_round_up(offset, PBUS_CACHE_LINE);
	h.slots_size = slots_size;
	h.segment_size = pbus_round_up(h.slots_offset + slots_size, (uint64_t)sysconf(_SC_PAGESIZE));
	for (uint32_t i = 0; i < n; i++)
		descs[i].slot_offset += h.slots_offset;

	memcpy(h.magic, PBUS_SEGMENT_MAGIC, 8);
	h.format_version = PBUS_FORMAT_VERSION;
	h.header_size = sizeof(h);
	h.schema_hash = schema->hash;
	h.instance_id = instance_id;
	h.param_count = n;
	h.enum_count = schema->enum_count;
	h.descriptor_size = sizeof(*descs);
	h.state = PBUS_SEGMENT_CREATING;
	h.owner_pid = (uint32_t)getpid();
	h.owner_start = pbus_process_start_token(getpid());
	h.created_ns = now;
	h.interface_major = schema->major;
	h.interface_minor = schema->minor;
	snprintf(h.instance, sizeof(h.instance), "%s", t->instance);

	r = create_file(t->temp_name, h.segment_size, mode, group, &t->base);
	if (r < 0)
		goto out;
	t->size = h.segment_size;
	memcpy(t->base, &h, sizeof(h));
	memcpy(t->base + h.descriptors_offset, descs, (size_t)n * sizeof(*descs));
	memcpy(t->base + h.enums_offset, enums, schema->enum_count * sizeof(*enums));
	memcpy(t->base + h.enumerators_offset, enumerators,
	       schema->enumerator_count * sizeof(*enumerators));
	memcpy(t->base + h.strings_offset, pool.data, pool.length);
	/* Initial values in copy 0 with seq 0: the default with status ok, or
	 * zero with status invalid ("never written"). The file is zero-filled. */
	for (uint32_t i = 0; i < n; i++) {
		unsigned char *copy = t->base + descs[i].slot_offset + sizeof(struct pbus_slot_head);
		struct pbus_copy_head ch = {.timestamp_ns = now, .status = PBUS_STATUS_INVALID};
		const struct pbus_schema_param *sp = &schema->params[i];

		if (sp->default_value) {
			ch.status = PBUS_STATUS_OK;
			ch.length = sp->default_length;
			memcpy(copy + sizeof(ch), sp->default_value, sp->default_length);
		} else if (!(sp->ti.type & PBUS_TYPE_ARRAY_FLAG) && sp->ti.type != PBUS_TYPE_STRING &&
			   sp->ti.type != PBUS_TYPE_BYTES) {
			ch.length = sp->ti.value_size;
			if (sp->ti.type == PBUS_TYPE_ENUM && sp->ti.enum_count)
				memcpy(copy + sizeof(ch), &sp->ti.enum_values[0], 4);
		}
		memcpy(copy, &ch, sizeof(ch));
	}
	r = 0;
out:
	free(pool.data);
	free(descs);
	free(enums);
	free(enumerators);
	return r;
}

static int build_wake_segment(struct pbus_table *t, uint32_t param_count, uint64_t instance_id)
{
	struct pbus_wake_header w;
	size_t size = (size_t)pbus_round_up(pbus_wake_segment_bytes(param_count),
					    (uint64_t)sysconf(_SC_PAGESIZE));
	int r;

	/* Every reader may register as a waiter, so the wake segment is 0666. */
	r = create_file(t->temp_wake_name, size, 0666, (gid_t)-1, &t->wake_base);
	if (r < 0)
		return r;
	t->wake_size = size;
	memset(&w, 0, sizeof(w));
	memcpy(w.magic, PBUS_WAKE_MAGIC, 8);
	w.format_version = PBUS_FORMAT_VERSION;
	w.param_count = param_count;
	w.instance_id = instance_id;
	memcpy(t->wake_base, &w, sizeof(w));
	return 0;
}

/*
 * Take the instance's owner lock: flock(LOCK_EX|LOCK_NB) on
 * PBUS_SHM_DIR/pbus.NAME.lock. A clean owner unlinks the file while it still
 * holds the lock, so a contender may have locked a file that no longer has
 * the name; it then checks that the name still leads to the inode it locked
 * and starts again if not. That keeps two owners from ever coexisting, and
 * leaves no lock file behind after a clean shutdown.
 */
static int take_instance_lock(const char *instance, int *ret_fd)
{
	char path[256];
	int r = pbus_shm_path(path, sizeof(path), instance, ".lock");

	if (r < 0)
		return r;
	for (int attempt = 0; attempt < 100; attempt++) {
		struct stat locked, named;
		int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return r;
		}
		if (fstat(fd, &locked) == 0 && stat(path, &named) == 0 && locked.st_dev == named.st_dev &&
		    locked.st_ino == named.st_ino) {
			*ret_fd = fd;
			return 0;
		}
		close(fd); /* unlinked by an owner that just shut down: try the new file */
	}
	return -EBUSY;
}

int pbus_instance_create(const char *instance, const struct pbus_schema *schema,
			 const struct pbus_instance_options *options,
			 struct pbus_table **ret_table)
{
	struct pbus_table *t;
	mode_t mode = options && options->mode ? (mode_t)options->mode : 0644;
	gid_t group = options ? options->group : (gid_t)-1;
	uint64_t instance_id;
	int r;

	if (!pbus_instance_name_valid(instance) || !schema || !ret_table || (mode & ~0777u))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->lock_fd = -1;
	t->owner = true;
	t->flags = PBUS_OPEN_PROVIDER;
	snprintf(t->instance, sizeof(t->instance), "%s", instance);

	/* One owner per instance: a lock the kernel drops when the owner dies. */
	if ((r = take_instance_lock(instance, &t->lock_fd)) < 0)
		goto fail;
	if (getrandom(&instance_id, sizeof(instance_id), 0) != sizeof(instance_id)) {
		r = -EIO;
		goto fail;
	}
	r = -ENOMEM;
	if (asprintf(&t->temp_name, "%s/%s%s.new.%d", PBUS_SHM_DIR, PBUS_SHM_PREFIX, instance,
		     (int)getpid()) < 0) {
		t->temp_name = NULL;
		goto fail;
	}
	if (asprintf(&t->temp_wake_name, "%s/%s%s.wake.new.%d", PBUS_SHM_DIR, PBUS_SHM_PREFIX,
		     instance, (int)getpid()) < 0) {
		t->temp_wake_name = NULL;
		goto fail;
	}
	/* Leftovers of an owner with our PID that died before publishing. */
	unlink(t->temp_name);
	unlink(t->temp_wake_name);
	if ((r = build_value_segment(t, schema, mode, group, instance_id)) < 0 ||
	    (r = build_wake_segment(t, schema->param_count, instance_id)) < 0 ||
	    (r = pbus_table_resolve(t)) < 0)
		goto fail;
	*ret_table = t;
	return 0;
fail:
	if (t->temp_name)
		unlink(t->temp_name);
	if (t->temp_wake_name)
		unlink(t->temp_wake_name);
	pbus_table_destroy(t);
	return r;
}

/* Mark an earlier owner's segment REPLACED and wake its waiters, so that its
 * readers reopen. Best effort: a segment we cannot open has no readers we
 * could tell. */
static void retire_old_segment(const char *instance)
{
	struct pbus_table *old;

	if (pbus_table_open(instance, PBUS_OPEN_WRITE, &old) < 0)
		return;
	__atomic_store_n(&old->header->state, PBUS_SEGMENT_REPLACED, __ATOMIC_RELEASE);
	pbus_wake_all(old);
	pbus_table_close(old);
}

int pbus_instance_publish(struct pbus_table *owner)
{
	char path[256], wake_path[256];
	int r;

	if (!owner || !owner->owner || !owner->temp_name)
		return -EINVAL;
	if ((r = pbus_shm_path(path, sizeof(path), owner->instance, "")) < 0 ||
	    (r = pbus_shm_path(wake_path, sizeof(wake_path), owner->instance, ".wake")) < 0)
		return r;
	retire_old_segment(owner->instance);
	__atomic_store_n(&owner->header->state, PBUS_SEGMENT_LIVE, __ATOMIC_RELEASE);
	/* Wake segment first: a reader that opens between the two renames finds
	 * an old value segment with a new wake segment, sees the instance ids
	 * differ and retries. */
	if (rename(owner->temp_wake_name, wake_path) < 0 || rename(owner->temp_name, path) < 0)
		return -errno;
	free(owner->temp_name);
	free(owner->temp_wake_name);
	owner->temp_name = owner->temp_wake_name = NULL;
	return 0;
}

void pbus_instance_remove(struct pbus_table *owner)
{
	char path[256], wake_path[256];

	if (!owner)
		return;
	if (owner->owner) {
		__atomic_store_n(&owner->header->state, PBUS_SEGMENT_CLOSED, __ATOMIC_RELEASE);
		pbus_wake_all(owner);
		if (owner->temp_name) {
			unlink(owner->temp_name);
			unlink(owner->temp_wake_name);
		} else if (pbus_shm_path(path, sizeof(path), owner->instance, "") == 0 &&
			   pbus_shm_path(wake_path, sizeof(wake_path), owner->instance, ".wake") == 0) {
			/* Check ownership before unlinking either name. */
			struct pbus_table *current;

			if (pbus_table_open(owner->instance, PBUS_OPEN_READ, &current) == 0) {
				bool ours = current->header->instance_id == owner->header->instance_id;

				pbus_table_close(current);
				if (ours) {
					unlink(path);
					unlink(wake_path);
				}
			}
		}
		/* Unlinked while still held: see take_instance_lock(). */
		if (owner->lock_fd >= 0 && pbus_shm_path(path, sizeof(path), owner->instance, ".lock") == 0)
			unlink(path);
	}
	pbus_table_destroy(owner);
}

int pbus_instance_mark_saved(struct pbus_table *owner, uint32_t index, uint64_t seq)
{
	if (!owner || !owner->owner || index >= owner->param_count)
		return -EINVAL;
	__atomic_store_n(&owner->aux[index].saved_seq, seq, __ATOMIC_RELEASE);
	__atomic_fetch_add(&owner->header->save_count, 1u, __ATOMIC_RELEASE);
	pbus_futex_wake_all(&owner->header->save_count);
	return 0;
}
