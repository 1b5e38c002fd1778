/* SPDX-License-Identifier: MIT */
/*
 * parambus/schema.h: the compiled schema (.pbs, docs/schema-format.md) that
 * pbus-gen writes and pbusd loads to create an instance.
 *
 * A struct pbus_schema is immutable after loading; any number of threads may
 * read it at once.
 */
#ifndef PARAMBUS_SCHEMA_H
#define PARAMBUS_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_schema;

/*
 * Parse a compiled schema from @text (@length bytes, need not end in NUL).
 * On -EINVAL, @error (if not NULL) receives one line naming the line number
 * and the problem, e.g. "line 7: param 'vset': min above max".
 * @source_name names the text in messages ("psu.pbs"). The caller owns
 * *ret_schema and frees it with pbus_schema_free().
 */
PBUS_API int pbus_schema_parse(const char *text, size_t length, const char *source_name,
			       char *error, size_t error_size,
			       struct pbus_schema **ret_schema);

/* Read and parse the file at @path; -errno of the read, or as above. */
PBUS_API int pbus_schema_load(const char *path, char *error, size_t error_size,
			      struct pbus_schema **ret_schema);

/* Accepts NULL. */
PBUS_API void pbus_schema_free(struct pbus_schema *schema);

/* FNV-1a-64 of the record lines (docs/schema-format.md, "The schema hash"). */
PBUS_API uint64_t pbus_schema_hash(const struct pbus_schema *schema);
PBUS_API uint32_t pbus_schema_param_count(const struct pbus_schema *schema);

/* The name of parameter @index (0 … count-1), or NULL if out of range. */
PBUS_API const char *pbus_schema_param_name(const struct pbus_schema *schema, uint32_t index);

/*
 * The value of key @key in parameter @index's record, percent-decoded, when
 * the key is one this library does not interpret itself: the format keeps
 * such keys for the programs that do (the hardware binding keys "hw", "hw-*"
 * that pbus-hwd runs; docs/schema-format.md). NULL if the record has no such
 * key (or @key is one of the library's own, like "min"). Valid until
 * pbus_schema_free().
 */
PBUS_API const char *pbus_schema_param_extra(const struct pbus_schema *schema, uint32_t index,
					     const char *key);

/* ---------------------------------------------------------------------------
 * Methods and broadcasts (the type, method and broadcast records): what a
 * program without generated code needs to call the interface's methods
 * and hear its broadcasts (`pbus call`, parambus/rpc-json.h). Methods and
 * broadcasts are numbered as on the wire (docs/methods.md §3): from 0, in
 * record order. Every string returned is valid until pbus_schema_free().
 * ------------------------------------------------------------------------- */

/* The interface's fully qualified name, and its version in major and minor
 * (either may be NULL); NULL if @schema is. */
PBUS_API const char *pbus_schema_interface(const struct pbus_schema *schema, uint32_t *major,
					   uint32_t *minor);

PBUS_API uint32_t pbus_schema_method_count(const struct pbus_schema *schema);
PBUS_API uint32_t pbus_schema_broadcast_count(const struct pbus_schema *schema);
/* The index of the method (or broadcast) named @name ("describe:short" for a
 * Franca overload with a selector), or -ENOENT. */
PBUS_API int pbus_schema_method_find(const struct pbus_schema *schema, const char *name);
PBUS_API int pbus_schema_broadcast_find(const struct pbus_schema *schema, const char *name);
/* Name of method (or broadcast) @index, or NULL if out of range. */
PBUS_API const char *pbus_schema_method_name(const struct pbus_schema *schema, uint32_t index);
PBUS_API const char *pbus_schema_broadcast_name(const struct pbus_schema *schema, uint32_t index);
PBUS_API bool pbus_schema_method_fire_and_forget(const struct pbus_schema *schema, uint32_t index);
/* The group that may call it (CallableBy), or NULL: everybody. */
PBUS_API const char *pbus_schema_method_group(const struct pbus_schema *schema, uint32_t index);
/* The fully qualified name of its error enumeration, or NULL if none. */
PBUS_API const char *pbus_schema_method_error(const struct pbus_schema *schema, uint32_t index);
PBUS_API bool pbus_schema_broadcast_selective(const struct pbus_schema *schema, uint32_t index);

enum pbus_schema_args {
	PBUS_SCHEMA_ARGS_IN,
	PBUS_SCHEMA_ARGS_OUT
};
/* A method's in- or out-arguments: how many, and argument @arg's name and
 * type as the schema writes it ("uint16", "integer:-5:5", "string[]", or
 * a named type's fully qualified name). 0, or -ENOENT out of range. */
PBUS_API uint32_t pbus_schema_method_arg_count(const struct pbus_schema *schema, uint32_t index,
					       enum pbus_schema_args which);
PBUS_API int pbus_schema_method_arg(const struct pbus_schema *schema, uint32_t index,
				    enum pbus_schema_args which, uint32_t arg, const char **ret_name,
				    const char **ret_type);
/* A broadcast's arguments, likewise. */
PBUS_API uint32_t pbus_schema_broadcast_arg_count(const struct pbus_schema *schema, uint32_t index);
PBUS_API int pbus_schema_broadcast_arg(const struct pbus_schema *schema, uint32_t index, uint32_t arg,
				       const char **ret_name, const char **ret_type);

/* The hash function itself, for a text of @length bytes: the same rule as
 * pbus_schema_hash() applied to raw text. */
PBUS_API uint64_t pbus_schema_hash_text(const char *text, size_t length);

#ifdef __cplusplus
}
#endif

#endif
