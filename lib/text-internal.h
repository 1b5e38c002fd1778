/* SPDX-License-Identifier: MIT */
/*
 * text-internal.h: the percent-encoding shared by the compiled schema
 * (docs/schema-format.md, "Encoding") and pbusd's state file
 * (docs/persistence.md): bytes outside 0x21-0x7E and the bytes '%', '='
 * and ',' become "%XX" with upper-case hex. Exported to pbusd through the
 * static library only; the tools, which link the shared library, use only
 * its inline pbus_hex_digit().
 */
#ifndef PBUS_TEXT_INTERNAL_H
#define PBUS_TEXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The value of the hex digit @c (0-9, a-f, A-F), or -1: the one reader of
 * hex digits for the library and the programs. Inline because pbus links
 * the shared library, whose internal functions are hidden. */
static inline int pbus_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Encode @n bytes of @src; snprintf-style: returns the encoded length. */
size_t pbus_percent_encode(const void *src, size_t n, char *buf, size_t size);

/* Decode NUL-terminated @s in place; -EINVAL on a malformed escape or %00. */
int pbus_percent_decode(char *s);

/* FNV-1a-64 of @n bytes, continuing from @h (start with PBUS_FNV_OFFSET). */
#define PBUS_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
uint64_t pbus_fnv1a(uint64_t h, const void *p, size_t n);

#endif
