/* SPDX-License-Identifier: MIT */
/*
 * instance.c: an instance's life on the owner's side (instance.h,
 * docs/segment-format.md §6): building the value and wake segments from a
 * compiled schema, the instance lock, publishing, and removing.
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

#include "clock-internal.h"
#include "futex-internal.h"
#include "owner-internal.h"
#include "process-internal.h"
#include "schema-internal.h"
#include "segment-internal.h"
#include "table-internal.h"
#include "watch-internal.h"

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

/* The value segment's file, without a name until it is published
 * (pbus_instance_publish()): a crash before that leaves nothing behind, and
 * nobody can open, or put anything in the way of, a half-built segment. */
static int create_file(struct pbus_table *t, size_t size, mode_t mode, gid_t group)
{
	void *base;
	int fd = open(PBUS_SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
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
			t->base = base;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	t->temp_fd = fd;
	t->owner_uid = geteuid();
	return 0;
}

/* Lay the value segment out from @schema into @t (mapped under a temporary
 * name) and fill header, descriptors, enums, pool and initial values. */
static int build_value_segment(struct pbus_table *t, const struct pbus_schema *schema,
			       mode_t mode, gid_t group, uint64_t instance_id, uint32_t wake_id)
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
	offset = pbus_round_up(offset + pool.length, PBUS_CACHE_LINE);
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
	h.wake_id = wake_id;
	h.wake_size = t->wake_size;

	r = create_file(t, h.segment_size, mode, group);
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

/* The wake segment: System V shared memory of a size fixed for good, which
 * every reader may attach read-write (mode 0666) and only we may remove. It
 * is marked for removal at once, so that it goes with its last attachment:
 * the kernel frees it after the owner and every reader are gone, and
 * Linux still lets readers attach it by id until then. */
static int build_wake_segment(struct pbus_table *t, uint32_t param_count, uint64_t instance_id,
			      uint32_t *ret_id)
{
	struct pbus_wake_header w;
	size_t size = (size_t)pbus_round_up(pbus_wake_segment_bytes(param_count),
					    (uint64_t)sysconf(_SC_PAGESIZE));
	void *base;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0666);

	if (id < 0)
		return -errno;
	base = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (base == (void *)-1)
		return -errno;
	t->wake_base = base;
	t->wake_size = size;
	memset(&w, 0, sizeof(w));
	memcpy(w.magic, PBUS_WAKE_MAGIC, 8);
	w.format_version = PBUS_FORMAT_VERSION;
	w.param_count = param_count;
	w.instance_id = instance_id;
	memcpy(t->wake_base, &w, sizeof(w));
	*ret_id = (uint32_t)id;
	return 0;
}

/*
 * Take the instance's owner lock: flock(LOCK_EX|LOCK_NB) on
 * PBUS_SHM_DIR/pbus.NAME.lock, a file of ours with mode 0600, so that
 * nobody but our own user (and root) can open it, let alone hold its lock.
 * A lock file of anybody else (made before we came, to lock us out) or with
 * another mode (an older version's 0644, which others could open) is
 * removed if we can and made anew; if we cannot (the sticky /dev/shm keeps
 * a non-root owner from removing others' files), -EEXIST: the caller says
 * whose file is in the way.
 *
 * A clean owner unlinks the file while it still holds the lock, so a
 * contender may have locked a file that no longer has the name; it then
 * checks that the name still leads to the inode it locked and starts again
 * if not. That keeps two owners from ever coexisting, and leaves no lock
 * file behind after a clean shutdown.
 */
static int take_instance_lock(const char *instance, int *ret_fd)
{
	char path[256];
	int r = pbus_shm_path(path, sizeof(path), instance, ".lock");

	if (r < 0)
		return r;
	for (int attempt = 0; attempt < 100; attempt++) {
		struct stat locked, named;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

		if (fd < 0 && errno == ENOENT)
			fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			if (errno == EEXIST || errno == ENOENT)
				continue; /* raced with another contender */
			if (errno != ELOOP && errno != EACCES)
				return -errno;
			/* A symlink, or a file we may not even open: not ours. */
			if (unlink(path) < 0)
				return -EEXIST;
			continue;
		}
		if (fstat(fd, &locked) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		if (!S_ISREG(locked.st_mode) || locked.st_uid != geteuid() ||
		    (locked.st_mode & 07777) != 0600) {
			close(fd);
			if (unlink(path) < 0)
				return -EEXIST;
			continue;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return r;
		}
		if (stat(path, &named) == 0 && locked.st_dev == named.st_dev &&
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
	uint32_t wake_id = 0;
	int r;

	/* A table others may write is one nobody can trust (docs/security.md):
	 * readers refuse it, so it is not made. */
	if (!pbus_instance_name_valid(instance) || !schema || !ret_table || (mode & ~0777u) ||
	    (mode & S_IWOTH))
		return -EINVAL;
	t = pbus_table_new(instance, PBUS_OPEN_PROVIDER);
	if (!t)
		return -ENOMEM;
	t->owner = true;

	/* One owner per instance: a lock the kernel drops when the owner dies. */
	if ((r = take_instance_lock(instance, &t->lock_fd)) < 0)
		goto fail;
	if (getrandom(&instance_id, sizeof(instance_id), 0) != sizeof(instance_id)) {
		r = -EIO;
		goto fail;
	}
	if ((r = build_wake_segment(t, schema->param_count, instance_id, &wake_id)) < 0 ||
	    (r = build_value_segment(t, schema, mode, group, instance_id, wake_id)) < 0 ||
	    (r = pbus_table_resolve(t)) < 0)
		goto fail;
	*ret_table = t;
	return 0;
fail:
	pbus_table_destroy(t);
	return r;
}

/* Mark an earlier owner's segment REPLACED and wake its waiters, so that its
 * readers reopen. Best effort: a segment we cannot open has no readers we
 * could tell, and one of an owner we do not trust (a stand-in some other
 * user made while the instance was down) is not ours to write: its readers,
 * who checked its owner, never believed it. */
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
	char path[256], temp[256], proc[64];
	uint64_t nonce;
	int r;

	if (!owner || !owner->owner || owner->temp_fd < 0)
		return -EINVAL;
	if ((r = pbus_shm_path(path, sizeof(path), owner->instance, "")) < 0)
		return r;
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	/* A name nobody can guess (so nobody can take it first), which rename(2)
	 * then moves over the instance's name in one step. */
	if (snprintf(temp, sizeof(temp), "%s.new.%016llx", path, (unsigned long long)nonce) >= (int)sizeof(temp))
		return -ENAMETOOLONG;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", owner->temp_fd);
	retire_old_segment(owner->instance);
	__atomic_store_n(&owner->header->state, PBUS_SEGMENT_LIVE, __ATOMIC_RELEASE);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, temp, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	if (rename(temp, path) < 0) {
		r = -errno;
		unlink(temp);
		__atomic_store_n(&owner->header->state, PBUS_SEGMENT_CREATING, __ATOMIC_RELEASE);
		return r;
	}
	close(owner->temp_fd);
	owner->temp_fd = -1;
	return 0;
}

void pbus_instance_remove(struct pbus_table *owner)
{
	char path[256];

	if (!owner)
		return;
	if (owner->owner) {
		__atomic_store_n(&owner->header->state, PBUS_SEGMENT_CLOSED, __ATOMIC_RELEASE);
		pbus_wake_all(owner);
		if (owner->temp_fd < 0 && pbus_shm_path(path, sizeof(path), owner->instance, "") == 0) {
			/* Unlink the name only if it is still ours: compare the
			 * file it leads to with the one we mapped. */
			struct pbus_segment_header h;
			struct stat named;
			int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

			if (fd >= 0) {
				if (fstat(fd, &named) == 0 && S_ISREG(named.st_mode) &&
				    named.st_uid == geteuid() &&
				    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
				    h.instance_id == owner->header->instance_id)
					unlink(path);
				close(fd);
			}
		}
		/* Unlinked while still held: see take_instance_lock(). */
		if (owner->lock_fd >= 0 && pbus_shm_path(path, sizeof(path), owner->instance, ".lock") == 0)
			unlink(path);
	}
	pbus_table_destroy(owner);
}
