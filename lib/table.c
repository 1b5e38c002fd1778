/* SPDX-License-Identifier: MIT */
/*
 * table.c: opening an instance and finding one's way around it. Everything
 * a lookup needs (parameter handles, type information, the schema view with
 * its name index) is resolved once at open, from a segment validated in
 * full, so that reads afterwards touch nothing but the mapping. What the
 * schema says of a parameter is the view's to answer (view.c): the
 * pbus_param_* functions of that kind here only name the view's entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner-internal.h"
#include "process-internal.h"
#include "segment-internal.h"
#include "table-internal.h"
#include "view-internal.h"

/* Map the value segment at @path after checking who owns it: a file that
 * anybody could have made under the instance's name is not believed
 * (owner-internal.h). The owner's uid is kept: the wake segment must be its
 * too. */
static int map_value_segment(struct pbus_table *t, const char *path, bool writable)
{
	struct stat st;
	void *base;
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int r = 0;

	if (fd < 0)
		return errno == ELOOP ? -EPROTO : -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if ((r = pbus_owner_check_file(&st)) == 0 &&
		 (st.st_size < (off_t)sizeof(struct pbus_segment_header) || (uint64_t)st.st_size > SIZE_MAX))
		r = -EPROTO;
	if (r == 0) {
		base = mmap(NULL, (size_t)st.st_size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
		if (base == MAP_FAILED) {
			r = -errno;
		} else {
			t->base = base;
			t->size = (size_t)st.st_size;
			t->owner_uid = st.st_uid;
		}
	}
	close(fd);
	return r;
}

/* Parameter @index's description, from its descriptor and its resolved type
 * (types[index], filled before). */
static void fill_info(const struct pbus_table *t, uint32_t index, struct pbus_param_info *info)
{
	const struct pbus_param_descriptor *d = pbus_table_descriptor(t, index);

	memset(info, 0, sizeof(*info));
	info->name = pbus_table_string(t, d->name);
	info->unit = pbus_table_string(t, d->unit);
	info->description = pbus_table_string(t, d->description);
	info->group = pbus_table_string(t, d->group);
	info->index = index;
	info->type = d->type;
	info->flags = d->flags;
	info->update_class = d->update_class;
	info->value_size = d->value_size;
	info->element_size = d->element_size;
	info->enum_count = t->types[index].enum_count;
	memcpy(&info->min, &d->min, 8);
	memcpy(&info->max, &d->max, 8);
	memcpy(&info->step, &d->step, 8);
	if (d->flags & PBUS_PARAM_HAS_DEFAULT) {
		info->default_value = pbus_table_string(t, d->default_value);
		info->default_length = d->default_length;
	}
}

int pbus_table_resolve(struct pbus_table *t)
{
	const struct pbus_segment_header *h = (const void *)t->base;
	const struct pbus_enum_record *enums = (const void *)(t->base + h->enums_offset);
	const struct pbus_enumerator *enumerators = (const void *)(t->base + h->enumerators_offset);
	uint32_t n = h->param_count, total = 0;

	t->header = (struct pbus_segment_header *)t->base;
	t->descriptors = (const void *)(t->base + h->descriptors_offset);
	t->aux = (struct pbus_param_aux *)(void *)(t->base + h->aux_offset);
	t->wake = (struct pbus_wake_header *)(void *)t->wake_base;
	t->waiters = (uint32_t *)(void *)(t->wake_base + PBUS_WAKE_WAITERS_OFFSET);
	t->turns = (uint64_t *)(void *)(t->wake_base + pbus_wake_turns_offset(n));
	t->param_count = n;
	for (uint32_t e = 0; e < h->enum_count; e++)
		total += enums[e].count;
	t->params = calloc(n ? n : 1, sizeof(*t->params));
	t->types = calloc(n ? n : 1, sizeof(*t->types));
	t->enum_values = calloc(total ? total : 1, sizeof(*t->enum_values));
	t->enum_labels = calloc(total ? total : 1, sizeof(*t->enum_labels));
	if (!t->params || !t->types || !t->enum_values || !t->enum_labels ||
	    pbus_view_new(n, &t->view) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < total; i++) {
		t->enum_values[i] = enumerators[i].value;
		t->enum_labels[i] = pbus_table_string(t, enumerators[i].label);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct pbus_param_descriptor *d = &t->descriptors[i];
		struct pbus_typeinfo *ti = &t->types[i];
		struct pbus_param *p = &t->params[i];
		struct pbus_view_entry *e = &t->view->entries[i];

		p->slot_ = t->base + d->slot_offset;
		p->copy_stride_ = d->copy_stride;
		p->value_size_ = d->value_size;
		p->index_ = i;
		p->type_ = d->type;
		p->copy_count_ = (uint8_t)d->copy_count;
		p->flags_ = (uint16_t)d->flags;
		if (d->type >= PBUS_TYPE_INT8 && d->type <= PBUS_TYPE_DOUBLE &&
		    !(d->flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX)))
			p->flags_ |= PBUS_PARAM_ANY_BITS_;
		p->table_ = t;
		ti->type = d->type;
		ti->flags = d->flags;
		ti->value_size = d->value_size;
		ti->element_size = d->element_size;
		memcpy(&ti->min, &d->min, 8);
		memcpy(&ti->max, &d->max, 8);
		if (d->enum_index != PBUS_NO_ENUM) {
			ti->enum_count = enums[d->enum_index].count;
			ti->enum_values = t->enum_values + enums[d->enum_index].first;
			ti->enum_labels = t->enum_labels + enums[d->enum_index].first;
		}
		fill_info(t, i, &e->info);
		e->ti = ti;
	}
	pbus_view_index(t->view);
	return 0;
}

struct pbus_table *pbus_table_new(const char *instance, unsigned flags)
{
	struct pbus_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->lock_fd = -1;
	t->temp_fd = -1;
	t->flags = flags;
	snprintf(t->instance, sizeof(t->instance), "%s", instance);
	return t;
}

void pbus_table_destroy(struct pbus_table *t)
{
	if (!t)
		return;
	if (t->base)
		munmap(t->base, t->size);
	if (t->wake_base && t->wake_private)
		munmap(t->wake_base, t->wake_size);
	else if (t->wake_base)
		shmdt(t->wake_base);
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	if (t->temp_fd >= 0)
		close(t->temp_fd);
	free(t->params);
	free(t->types);
	pbus_view_free(t->view);
	free(t->enum_values);
	free(t->enum_labels);
	free(t);
}

/* Map the value segment and attach the wake segment it names. */
static int open_segments(struct pbus_table *t, const char *instance, unsigned flags)
{
	char path[256];
	int r;

	if ((r = pbus_shm_path(path, sizeof(path), instance, "")) < 0)
		return r;
	r = map_value_segment(t, path, flags & PBUS_OPEN_WRITE);
	if (r < 0)
		return r;
	r = pbus_segment_validate_instance(t->base, t->size, instance);
	if (r < 0)
		return r;
	return pbus_wake_attach(t);
}

int pbus_table_open(const char *instance, unsigned flags, struct pbus_table **ret_table)
{
	struct pbus_table *t;
	int r;

	if (!pbus_instance_name_valid(instance) || !ret_table || (flags & ~(unsigned)PBUS_OPEN_PROVIDER))
		return -EINVAL;
	t = pbus_table_new(instance, flags);
	if (!t)
		return -ENOMEM;
	/* An application's writers may own the parameters they alone write
	 * (pbusd's own table never takes a bias: its writes are rare and would
	 * only cost the application a revocation). */
	t->may_bias = (flags & PBUS_OPEN_WRITE) != 0;
	r = open_segments(t, instance, flags);
	if (r == 0)
		r = pbus_table_resolve(t);
	if (r < 0) {
		pbus_table_destroy(t);
		return r;
	}
	*ret_table = t;
	return 0;
}

void pbus_table_close(struct pbus_table *table)
{
	pbus_table_destroy(table);
}

const char *pbus_table_instance(const struct pbus_table *table)
{
	return table ? table->instance : NULL;
}

const char *pbus_table_interface(const struct pbus_table *table, unsigned *ret_major,
				 unsigned *ret_minor)
{
	if (!table)
		return NULL;
	if (ret_major)
		*ret_major = table->header->interface_major;
	if (ret_minor)
		*ret_minor = table->header->interface_minor;
	return pbus_table_string(table, table->header->interface_name);
}

uint64_t pbus_table_schema_hash(const struct pbus_table *table)
{
	return table ? table->header->schema_hash : 0;
}

uint32_t pbus_table_param_count(const struct pbus_table *table)
{
	return table ? table->param_count : 0;
}

int pbus_table_owner_pid(const struct pbus_table *table)
{
	return table ? (int)table->header->owner_pid : -EINVAL;
}

unsigned pbus_table_flags(const struct pbus_table *table)
{
	return table ? table->flags : 0;
}

int pbus_table_state(const struct pbus_table *table)
{
	uint32_t state;

	if (!table)
		return -EINVAL;
	state = __atomic_load_n(&table->header->state, __ATOMIC_ACQUIRE);
	switch (state) {
	case PBUS_SEGMENT_CREATING:
		/* Only its owner sees an unpublished segment. */
	case PBUS_SEGMENT_LIVE:
		if (!table->owner &&
		    !pbus_process_alive(table->header->owner_pid, table->header->owner_start))
			return PBUS_TABLE_ORPHANED;
		return PBUS_TABLE_LIVE;
	case PBUS_SEGMENT_CLOSED:
		return PBUS_TABLE_CLOSED;
	default:
		return PBUS_TABLE_REPLACED;
	}
}

bool pbus_table_current(const struct pbus_table *table)
{
	return table && !pbus_table_gone(table);
}

int pbus_table_param(const struct pbus_table *table, uint32_t index,
		     const struct pbus_param **ret_param)
{
	if (!table || !ret_param)
		return -EINVAL;
	if (index >= table->param_count)
		return -ENOENT;
	*ret_param = &table->params[index];
	return 0;
}

int pbus_table_find(const struct pbus_table *table, const char *name,
		    const struct pbus_param **ret_param)
{
	uint32_t index;
	int r;

	if (!table || !name || !ret_param)
		return -EINVAL;
	r = pbus_view_find(table->view, name, &index);
	if (r == 0)
		*ret_param = &table->params[index];
	return r;
}

const struct pbus_view *pbus_table_view(const struct pbus_table *table)
{
	return table ? table->view : NULL;
}

/* The schema's side of a parameter is its table's view's entry. */

int pbus_param_describe(const struct pbus_param *param, struct pbus_param_info *ret_info)
{
	return param ? pbus_view_describe(param->table_->view, param->index_, ret_info) : -EINVAL;
}

const char *pbus_param_name(const struct pbus_param *param)
{
	return param ? param->table_->view->entries[param->index_].info.name : NULL;
}

int pbus_param_enumerator(const struct pbus_param *param, uint32_t i, const char **ret_label,
			  int32_t *ret_value)
{
	return param ? pbus_view_enumerator(param->table_->view, param->index_, i, ret_label, ret_value)
		     : -EINVAL;
}

int pbus_param_enum_value(const struct pbus_param *param, const char *label, int32_t *ret_value)
{
	return param ? pbus_view_enum_value(param->table_->view, param->index_, label, ret_value)
		     : -EINVAL;
}

int pbus_param_enum_label(const struct pbus_param *param, int32_t value, const char **ret_label)
{
	return param ? pbus_view_enum_label(param->table_->view, param->index_, value, ret_label)
		     : -EINVAL;
}

int pbus_param_parse(const struct pbus_param *param, const char *text, void *buf, size_t size,
		     size_t *ret_length)
{
	return param ? pbus_view_parse(param->table_->view, param->index_, text, buf, size, ret_length)
		     : -EINVAL;
}

int pbus_param_format(const struct pbus_param *param, const void *value, size_t length,
		      char *buf, size_t size)
{
	return param ? pbus_view_format(param->table_->view, param->index_, value, length, buf, size)
		     : -EINVAL;
}
