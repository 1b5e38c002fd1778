/* SPDX-License-Identifier: MIT */
/*
 * value-internal.h: types, checks and text conversion of values in their
 * stored encoding, independent of where the type comes from (a schema being
 * loaded or a mapped segment).
 */
#ifndef PBUS_VALUE_INTERNAL_H
#define PBUS_VALUE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/table.h>

/* Everything needed to check, parse and format a value. */
struct pbus_typeinfo {
	unsigned type;          /* enum pbus_type, with PBUS_TYPE_ARRAY_FLAG */
	unsigned flags;         /* enum pbus_param_flag (HAS_MIN, HAS_MAX ...) */
	uint32_t value_size;    /* capacity in bytes */
	uint32_t element_size;  /* scalar size; 1 for string and bytes */
	union pbus_number min, max;
	uint32_t enum_count;
	const int32_t *enum_values;       /* enum_count of each, or NULL */
	const char *const *enum_labels;
};

/* Values of 1 to 8 bytes in two copies of PBUS_SCALAR_COPY_STRIDE: the
 * numbers, booleans and enums; not strings, byte buffers or arrays. */
static inline bool pbus_type_is_scalar(unsigned type)
{
	return !(type & PBUS_TYPE_ARRAY_FLAG) && type != PBUS_TYPE_STRING && type != PBUS_TYPE_BYTES;
}

/* Size of one scalar of @type (no array flag), 0 for string/bytes/unknown. */
uint32_t pbus_scalar_size(unsigned type);

/* The element type of an array type, or the type itself. */
static inline unsigned pbus_element_type(unsigned type)
{
	return type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
}

/* Is @type a valid type code? */
int pbus_type_valid(unsigned type);

/* One scalar of @type (bool, integers, enum, float, double) in its stored
 * encoding at @value, as a double (64-bit integers beyond 2^53 rounded). */
double pbus_scalar_as_double(unsigned type, const void *value);

/* Strict UTF-8 (no overlong forms, surrogates or code points above U+10FFFF). */
bool pbus_utf8_valid(const void *text, size_t n);

/* Enumerator @i of an enum (or enum array) type: -EINVAL if @ti is no enum,
 * -ENOENT past the last; either return pointer may be NULL. */
int pbus_typeinfo_enumerator(const struct pbus_typeinfo *ti, uint32_t i, const char **ret_label,
			     int32_t *ret_value);

/* Check a value in stored encoding: length, bool 0/1, enum membership,
 * limits (NaN is out of any limit). 0, -EINVAL, -ERANGE or -EMSGSIZE. */
int pbus_value_check(const struct pbus_typeinfo *ti, const void *value, size_t length);

/* Parse text into the stored encoding, then pbus_value_check(). */
int pbus_value_parse(const struct pbus_typeinfo *ti, const char *text, void *buf,
		     size_t size, size_t *ret_length);

/* Format like snprintf; numbers round-trip exactly (%.17g for double). */
int pbus_value_format(const struct pbus_typeinfo *ti, const void *value, size_t length,
		      char *buf, size_t size);

/* Parse one number of scalar @type (no limits check) into *ret. */
int pbus_number_parse(unsigned type, const char *text, union pbus_number *ret);

/* Compare number @a of @type with the limits; 0 inside, -ERANGE outside. */
int pbus_number_check_limits(const struct pbus_typeinfo *ti, unsigned type,
			     union pbus_number a);

#endif
