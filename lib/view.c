/* SPDX-License-Identifier: MIT */
/*
 * view.c: the schema view (parambus/view.h), the one place that answers
 * what a parameter is (describe, find by name, enumerators) and turns its
 * values into text and back, for a table and for a client alike. Its owner
 * fills it once from wherever the schema comes from (view-internal.h);
 * every question after that is answered from the entries alone, by the
 * same code whoever owns them. The value rules themselves are value.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view-internal.h"

int pbus_view_new(uint32_t count, struct pbus_view **ret_view)
{
	struct pbus_view *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->count = count;
	v->entries = calloc(count ? count : 1, sizeof(*v->entries));
	v->by_name = calloc(count ? count : 1, sizeof(*v->by_name));
	if (!v->entries || !v->by_name) {
		pbus_view_free(v);
		return -ENOMEM;
	}
	*ret_view = v;
	return 0;
}

static int compare_names(const void *a, const void *b, void *arg)
{
	const struct pbus_view *v = arg;

	return strcmp(v->entries[*(const uint32_t *)a].info.name,
		      v->entries[*(const uint32_t *)b].info.name);
}

void pbus_view_index(struct pbus_view *view)
{
	for (uint32_t i = 0; i < view->count; i++)
		view->by_name[i] = i;
	qsort_r(view->by_name, view->count, sizeof(*view->by_name), compare_names, view);
}

void pbus_view_free(struct pbus_view *view)
{
	if (!view)
		return;
	free(view->entries);
	free(view->by_name);
	free(view);
}

uint32_t pbus_view_count(const struct pbus_view *view)
{
	return view ? view->count : 0;
}

int pbus_view_find(const struct pbus_view *view, const char *name, uint32_t *ret_index)
{
	uint32_t lo = 0, hi;

	if (!view || !name || !ret_index)
		return -EINVAL;
	hi = view->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, index = view->by_name[mid];
		int c = strcmp(name, view->entries[index].info.name);

		if (c == 0) {
			*ret_index = index;
			return 0;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -ENOENT;
}

/* The entry of parameter @index: 0, -EINVAL without a view, -ENOENT out of
 * range. */
static int entry_of(const struct pbus_view *view, uint32_t index,
		    const struct pbus_view_entry **ret_entry)
{
	if (!view)
		return -EINVAL;
	if (index >= view->count)
		return -ENOENT;
	*ret_entry = &view->entries[index];
	return 0;
}

int pbus_view_describe(const struct pbus_view *view, uint32_t index,
		       struct pbus_param_info *ret_info)
{
	const struct pbus_view_entry *e;
	int r;

	if (!ret_info)
		return -EINVAL;
	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	*ret_info = e->info;
	return 0;
}

int pbus_view_enumerator(const struct pbus_view *view, uint32_t index, uint32_t i,
			 const char **ret_label, int32_t *ret_value)
{
	const struct pbus_view_entry *e;
	int r;

	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	return pbus_typeinfo_enumerator(e->ti, i, ret_label, ret_value);
}

int pbus_view_enum_value(const struct pbus_view *view, uint32_t index, const char *label,
			 int32_t *ret_value)
{
	const struct pbus_view_entry *e;
	int r;

	if (!label)
		return -EINVAL;
	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	if (pbus_element_type(e->ti->type) != PBUS_TYPE_ENUM)
		return -EINVAL;
	for (uint32_t i = 0; i < e->ti->enum_count; i++)
		if (!strcmp(e->ti->enum_labels[i], label)) {
			if (ret_value)
				*ret_value = e->ti->enum_values[i];
			return 0;
		}
	return -ENOENT;
}

int pbus_view_enum_label(const struct pbus_view *view, uint32_t index, int32_t value,
			 const char **ret_label)
{
	const struct pbus_view_entry *e;
	int r;

	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	if (pbus_element_type(e->ti->type) != PBUS_TYPE_ENUM)
		return -EINVAL;
	for (uint32_t i = 0; i < e->ti->enum_count; i++)
		if (e->ti->enum_values[i] == value) {
			if (ret_label)
				*ret_label = e->ti->enum_labels[i];
			return 0;
		}
	return -ENOENT;
}

int pbus_view_parse(const struct pbus_view *view, uint32_t index, const char *text, void *buf,
		    size_t size, size_t *ret_length)
{
	const struct pbus_view_entry *e;
	size_t length;
	int r;

	if (!text || !ret_length || (!buf && size))
		return -EINVAL;
	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	r = pbus_value_parse(e->ti, text, buf, size, &length);
	if (r == 0)
		*ret_length = length;
	return r;
}

int pbus_view_format(const struct pbus_view *view, uint32_t index, const void *value,
		     size_t length, char *buf, size_t size)
{
	const struct pbus_view_entry *e;
	int r;

	if ((!value && length) || (!buf && size))
		return -EINVAL;
	if ((r = entry_of(view, index, &e)) < 0)
		return r;
	return pbus_value_format(e->ti, value, length, buf, size);
}
