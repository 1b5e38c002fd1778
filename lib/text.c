/* SPDX-License-Identifier: MIT */
/*
 * text.c: percent-encoding and the FNV-1a hash, for the text formats of
 * parambus (compiled schema, state file).
 */
#include <errno.h>
#include <stdbool.h>

#include "text-internal.h"

#define FNV_PRIME UINT64_C(0x100000001b3)

uint64_t pbus_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

static bool needs_escape(unsigned char c)
{
	return c < 0x21 || c > 0x7e || c == '%' || c == '=' || c == ',';
}

size_t pbus_percent_encode(const void *src, size_t n, char *buf, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = src;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		char tmp[3];
		size_t k = 0;

		if (needs_escape(s[i])) {
			tmp[k++] = '%';
			tmp[k++] = hex[s[i] >> 4];
			tmp[k++] = hex[s[i] & 15];
		} else {
			tmp[k++] = (char)s[i];
		}
		for (size_t j = 0; j < k; j++, len++)
			if (len + 1 < size)
				buf[len] = tmp[j];
	}
	if (size)
		buf[len < size ? len : size - 1] = 0;
	return len;
}

/* A digit of an escape: upper-case hex only, as the encoder writes them
 * (docs/schema-format.md, "Encoding"), so that a byte string has one
 * spelling; "%2a" is malformed. */
static int escape_digit(char c)
{
	return c >= 'a' && c <= 'f' ? -1 : pbus_hex_digit(c);
}

int pbus_percent_decode(char *s)
{
	char *out = s;

	for (char *in = s; *in; in++) {
		if (*in == '%') {
			int hi = escape_digit(in[1]), lo = hi < 0 ? -1 : escape_digit(in[2]);

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			*out++ = (char)(hi << 4 | lo);
			in += 2;
		} else {
			*out++ = *in;
		}
	}
	*out = 0;
	return 0;
}
