/* SPDX-License-Identifier: MIT */
/*
 * schema-internal.h: the parsed compiled schema, shared by schema.c (which
 * fills it) and instance.c (which lays a segment out from it).
 */
#ifndef PBUS_SCHEMA_INTERNAL_H
#define PBUS_SCHEMA_INTERNAL_H

#include <stdint.h>

#include <parambus/schema.h>
#include <parambus/table.h>

#include "value-internal.h"

struct pbus_schema_enum {
	char *name;
	uint32_t first; /* index into pbus_schema.enumerators */
	uint32_t count;
};

/* A key=value of a param record that this library does not interpret
 * (hardware bindings and later keys), kept for the tools that do. */
struct pbus_schema_extra {
	char *key, *value;
};

struct pbus_schema_param {
	char *name, *unit, *description, *group;
	struct pbus_schema_extra *extras; /* in record order */
	uint32_t extra_count;
	unsigned update_class;
	struct pbus_typeinfo ti;       /* type, flags, sizes, limits, enumerators */
	union pbus_number step;
	uint32_t enum_index;           /* into pbus_schema.enums, or PBUS_NO_ENUM */
	unsigned char *default_value;  /* stored encoding; NULL without default */
	uint32_t default_length;
};

struct pbus_schema {
	char *interface;
	unsigned major, minor;
	uint64_t hash;
	uint32_t param_count, enum_count, enumerator_count;
	struct pbus_schema_param *params;
	struct pbus_schema_enum *enums;
	int32_t *enumerator_values;     /* enumerator_count of each */
	char **enumerator_labels;
};

#endif
