/* SPDX-License-Identifier: MIT */
/*
 * view-internal.h: struct pbus_view (parambus/view.h), the one description
 * of a schema that a table and a client share, and how its owner builds
 * it. The owner (table.c from a mapped segment, the client from the schema
 * pbusd sent) makes a view of its parameter count with pbus_view_new(),
 * fills each entry's description and type, calls pbus_view_index() and
 * frees it with pbus_view_free() when it closes. Nothing changes a view in
 * between, so it needs no lock.
 */
#ifndef PBUS_VIEW_INTERNAL_H
#define PBUS_VIEW_INTERNAL_H

#include <stdint.h>

#include <parambus/view.h>

#include "value-internal.h"

/* One parameter: what pbus_view_describe() gives, and what parse, format
 * and the enum lookups need. */
struct pbus_view_entry {
	struct pbus_param_info info;    /* info.index is the entry's own */
	const struct pbus_typeinfo *ti; /* the owner's; lives as long as the view */
};

struct pbus_view {
	uint32_t count;
	struct pbus_view_entry *entries; /* by index */
	uint32_t *by_name;               /* indexes sorted by name (strcmp) */
};

/* A view of @count parameters whose entries are zeroed, for the owner to
 * fill. 0 or -ENOMEM. */
int pbus_view_new(uint32_t count, struct pbus_view **ret_view);

/* Sort the names, once every entry is filled; pbus_view_find() needs it. */
void pbus_view_index(struct pbus_view *view);

/* Accepts NULL. */
void pbus_view_free(struct pbus_view *view);

#endif
