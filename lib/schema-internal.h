/* SPDX-License-Identifier: MIT */
/*
 * schema-internal.h: the parsed compiled schema, shared by schema.c (which
 * fills it) and instance.c (which lays a segment out from it).
 */
#ifndef PBUS_SCHEMA_INTERNAL_H
#define PBUS_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
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

/* --- methods, broadcasts and their types (type/method/broadcast records,
 * schema-rpc.c; the codec of rpc-json.c walks them) --------------------- */

#define PBUS_SCHEMA_NO_TYPE UINT32_MAX
#define PBUS_SCHEMA_TYPES_MAX 16384 /* named and anonymous types of one schema */

enum pbus_schema_kind {
	/* the basic types, in the order of their schema tokens */
	PBUS_SCHEMA_KIND_BOOL,
	PBUS_SCHEMA_KIND_INT8,
	PBUS_SCHEMA_KIND_UINT8,
	PBUS_SCHEMA_KIND_INT16,
	PBUS_SCHEMA_KIND_UINT16,
	PBUS_SCHEMA_KIND_INT32,
	PBUS_SCHEMA_KIND_UINT32,
	PBUS_SCHEMA_KIND_INT64,
	PBUS_SCHEMA_KIND_UINT64,
	PBUS_SCHEMA_KIND_FLOAT,
	PBUS_SCHEMA_KIND_DOUBLE,
	PBUS_SCHEMA_KIND_STRING,
	PBUS_SCHEMA_KIND_BYTES,
	PBUS_SCHEMA_KIND_INTEGER, /* Integer(lo, hi) */
	PBUS_SCHEMA_KIND_ENUM,
	PBUS_SCHEMA_KIND_STRUCT,  /* polymorphic too (see .polymorphic) */
	PBUS_SCHEMA_KIND_UNION,
	PBUS_SCHEMA_KIND_ARRAY,
	PBUS_SCHEMA_KIND_MAP,
	PBUS_SCHEMA_KIND_UNDEFINED /* referred to, no type record (yet) */
};

/* A struct field, a union member, an argument. */
struct pbus_schema_member {
	char *name;
	uint32_t type; /* into pbus_schema.types */
};

struct pbus_schema_type {
	unsigned kind;     /* enum pbus_schema_kind */
	char *name;        /* a named type's fqn, else its reference text ("int32", "string[]") */
	bool named;
	unsigned line;     /* where it was defined, or first referred to */
	char *base;        /* struct, union: the fqn it extends (informative), or NULL */
	bool polymorphic;  /* struct: tag first on the wire */
	uint32_t tag;
	struct pbus_schema_member *members; /* struct fields (inherited first), union members */
	uint32_t member_count;
	uint32_t element, key, value;       /* array; map */
	bool wide;                          /* enum: i64 on the wire, else i32 */
	int64_t *enum_values;
	char **enum_labels;
	uint32_t enum_count;
	bool is_unsigned;                   /* integer: u64 on the wire, else i64 */
	bool has_lo, has_hi;                /* integer: bounds checked */
	uint64_t lo, hi;                    /* integer: as is_unsigned says (int64 bits else) */
	uint32_t *concrete;                 /* polymorphic: itself, then every struct derived */
	uint32_t concrete_count;
	size_t min_size;                    /* the fewest bytes a value encodes to */
	int state;                          /* finishing: 0 new, 1 busy, 2 done */
};

struct pbus_schema_call {
	char *name;
	char *group;                        /* method: CallableBy, or NULL */
	bool fire_and_forget, selective;
	uint32_t error;                     /* method: its error enumeration, or PBUS_SCHEMA_NO_TYPE */
	struct pbus_schema_member *in, *out; /* broadcast: out only */
	uint32_t in_count, out_count;
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
	struct pbus_schema_type *types;
	uint32_t type_count, type_capacity;
	struct pbus_schema_call *methods, *broadcasts;
	uint32_t method_count, broadcast_count;
};

/* schema-rpc.c, for schema.c's parser: a type, method or broadcast record
 * (@tok as split, not yet percent-decoded; @line for messages; @error as
 * schema.c's fail() writes it). 0, -EINVAL with @error set, or -ENOMEM. */
int pbus_schema_rpc_record(struct pbus_schema *s, char **tok, int ntok, char *error,
			   size_t error_size, const char *source, unsigned line);
/* After the last record: every type referred to defined, polymorphic
 * hierarchies, minimal sizes, no type containing itself by value. */
int pbus_schema_rpc_finish(struct pbus_schema *s, char *error, size_t error_size,
			   const char *source);
void pbus_schema_rpc_free(struct pbus_schema *s);
/* The type named by reference text @ref ("uint16", an fqn, "integer:-5:5",
 * "T[]"), or PBUS_SCHEMA_NO_TYPE if the schema has none such. */
uint32_t pbus_schema_type_find(const struct pbus_schema *s, const char *ref);

#endif
