/* SPDX-License-Identifier: MIT */
/*
 * value.c: values in their stored encoding (docs/segment-format.md,
 * "Values"): what is valid, how text becomes a value and back. One
 * implementation serves the schema loader (defaults), the library's setters,
 * the CLI and pbusd's state file, so that "3.3" means the same everywhere.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text-internal.h" /* pbus_hex_digit() */
#include "value-internal.h"

uint32_t pbus_scalar_size(unsigned type)
{
	switch (type) {
	case PBUS_TYPE_BOOL:
	case PBUS_TYPE_INT8:
	case PBUS_TYPE_UINT8:
		return 1;
	case PBUS_TYPE_INT16:
	case PBUS_TYPE_UINT16:
		return 2;
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_UINT32:
	case PBUS_TYPE_FLOAT:
	case PBUS_TYPE_ENUM:
		return 4;
	case PBUS_TYPE_INT64:
	case PBUS_TYPE_UINT64:
	case PBUS_TYPE_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

int pbus_type_valid(unsigned type)
{
	unsigned element = pbus_element_type(type);

	if (type & PBUS_TYPE_ARRAY_FLAG)
		return pbus_scalar_size(element) != 0 && element != PBUS_TYPE_ENUM;
	return (type >= PBUS_TYPE_BOOL && type <= PBUS_TYPE_ENUM);
}

static bool is_signed(unsigned type)
{
	return type == PBUS_TYPE_INT8 || type == PBUS_TYPE_INT16 || type == PBUS_TYPE_INT32 ||
	       type == PBUS_TYPE_INT64 || type == PBUS_TYPE_ENUM;
}

static bool is_floating(unsigned type)
{
	return type == PBUS_TYPE_FLOAT || type == PBUS_TYPE_DOUBLE;
}

/* Load one scalar of @type from @p (unaligned access is fine). */
static union pbus_number load_scalar(unsigned type, const unsigned char *p)
{
	union pbus_number n = {.u = 0};
	int8_t i8;
	int16_t i16;
	int32_t i32;
	uint16_t u16;
	uint32_t u32;
	float f;

	switch (type) {
	case PBUS_TYPE_BOOL:
	case PBUS_TYPE_UINT8: n.u = p[0]; break;
	case PBUS_TYPE_INT8: memcpy(&i8, p, 1); n.i = i8; break;
	case PBUS_TYPE_INT16: memcpy(&i16, p, 2); n.i = i16; break;
	case PBUS_TYPE_UINT16: memcpy(&u16, p, 2); n.u = u16; break;
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_ENUM: memcpy(&i32, p, 4); n.i = i32; break;
	case PBUS_TYPE_UINT32: memcpy(&u32, p, 4); n.u = u32; break;
	case PBUS_TYPE_INT64: memcpy(&n.i, p, 8); break;
	case PBUS_TYPE_UINT64: memcpy(&n.u, p, 8); break;
	case PBUS_TYPE_FLOAT: memcpy(&f, p, 4); n.d = f; break;
	case PBUS_TYPE_DOUBLE: memcpy(&n.d, p, 8); break;
	default: break;
	}
	return n;
}

double pbus_scalar_as_double(unsigned type, const void *value)
{
	union pbus_number n = load_scalar(type, value);

	if (is_floating(type))
		return n.d;
	return is_signed(type) ? (double)n.i : (double)n.u;
}

/* Store one scalar; the number must already fit the type. */
static void store_scalar(unsigned type, union pbus_number n, unsigned char *p)
{
	int8_t i8 = (int8_t)n.i;
	int16_t i16 = (int16_t)n.i;
	int32_t i32 = (int32_t)n.i;
	uint16_t u16 = (uint16_t)n.u;
	uint32_t u32 = (uint32_t)n.u;
	float f = (float)n.d;

	switch (type) {
	case PBUS_TYPE_BOOL:
	case PBUS_TYPE_UINT8: p[0] = (unsigned char)n.u; break;
	case PBUS_TYPE_INT8: memcpy(p, &i8, 1); break;
	case PBUS_TYPE_INT16: memcpy(p, &i16, 2); break;
	case PBUS_TYPE_UINT16: memcpy(p, &u16, 2); break;
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_ENUM: memcpy(p, &i32, 4); break;
	case PBUS_TYPE_UINT32: memcpy(p, &u32, 4); break;
	case PBUS_TYPE_INT64: memcpy(p, &n.i, 8); break;
	case PBUS_TYPE_UINT64: memcpy(p, &n.u, 8); break;
	case PBUS_TYPE_FLOAT: memcpy(p, &f, 4); break;
	case PBUS_TYPE_DOUBLE: memcpy(p, &n.d, 8); break;
	default: break;
	}
}

int pbus_number_check_limits(const struct pbus_typeinfo *ti, unsigned type,
			     union pbus_number a)
{
	bool has_min = ti->flags & PBUS_PARAM_HAS_MIN, has_max = ti->flags & PBUS_PARAM_HAS_MAX;

	if (is_floating(type)) {
		if ((has_min || has_max) && isnan(a.d))
			return -ERANGE;
		if ((has_min && a.d < ti->min.d) || (has_max && a.d > ti->max.d))
			return -ERANGE;
	} else if (is_signed(type)) {
		if ((has_min && a.i < ti->min.i) || (has_max && a.i > ti->max.i))
			return -ERANGE;
	} else {
		if ((has_min && a.u < ti->min.u) || (has_max && a.u > ti->max.u))
			return -ERANGE;
	}
	return 0;
}

static bool enum_has_value(const struct pbus_typeinfo *ti, int64_t v)
{
	for (uint32_t i = 0; i < ti->enum_count; i++)
		if (ti->enum_values[i] == v)
			return true;
	return false;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
int pbus_typeinfo_enumerator(const struct pbus_typeinfo *ti, uint32_t i, const char **ret_label,
			     int32_t *ret_value)
{
	if (pbus_element_type(ti->type) != PBUS_TYPE_ENUM)
		return -EINVAL;
	if (i >= ti->enum_count)
		return -ENOENT;
	if (ret_label)
		*ret_label = ti->enum_labels[i];
	if (ret_value)
		*ret_value = ti->enum_values[i];
	return 0;
}

bool pbus_utf8_valid(const void *text, size_t n)
{
	const unsigned char *s = text;
	size_t i = 0;

	while (i < n) {
		unsigned char c;
		size_t len;
		uint32_t cp;

		/* Eight ASCII bytes at a time: no high bit set, no zero byte. */
		while (n - i >= 8) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if ((w & UINT64_C(0x8080808080808080)) ||
			    ((w - UINT64_C(0x0101010101010101)) & ~w & UINT64_C(0x8080808080808080)))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		c = s[i];
		if (c < 0x80) {
			if (c == 0)
				return false; /* a NUL cannot be part of a C string */
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1fu; }
		else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0fu; }
		else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07u; }
		else return false;
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3fu);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += len;
	}
	return true;
}

int pbus_value_check(const struct pbus_typeinfo *ti, const void *value, size_t length)
{
	const unsigned char *p = value;
	unsigned element = pbus_element_type(ti->type);
	uint32_t esize = pbus_scalar_size(element);

	if (length > ti->value_size)
		return -EMSGSIZE;
	if (length > 0 && !value)
		return -EINVAL;
	if (ti->type == PBUS_TYPE_STRING)
		return pbus_utf8_valid(p, length) ? 0 : -EINVAL;
	if (ti->type == PBUS_TYPE_BYTES)
		return 0;
	if (!(ti->type & PBUS_TYPE_ARRAY_FLAG)) {
		if (length != esize)
			return -EINVAL;
		/* A number without limits: every bit pattern is a value. */
		if (!(ti->flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX)) &&
		    element != PBUS_TYPE_BOOL && element != PBUS_TYPE_ENUM)
			return 0;
	}
	if (esize == 0 || length % esize)
		return -EINVAL;
	for (size_t off = 0; off < length; off += esize) {
		union pbus_number n = load_scalar(element, p + off);
		int r;

		if (element == PBUS_TYPE_BOOL && n.u > 1)
			return -EINVAL;
		if (element == PBUS_TYPE_ENUM && !enum_has_value(ti, n.i))
			return -ERANGE;
		r = pbus_number_check_limits(ti, element, n);
		if (r < 0)
			return r;
	}
	return 0;
}

int pbus_number_parse(unsigned type, const char *text, union pbus_number *ret)
{
	char *end;
	union pbus_number n;

	if (!text || !*text || text[0] == ' ' || text[0] == '\t')
		return -EINVAL;
	errno = 0;
	if (type == PBUS_TYPE_BOOL) {
		if (!strcasecmp(text, "true") || !strcmp(text, "1") || !strcasecmp(text, "on"))
			n.u = 1;
		else if (!strcasecmp(text, "false") || !strcmp(text, "0") || !strcasecmp(text, "off"))
			n.u = 0;
		else
			return -EINVAL;
		*ret = n;
		return 0;
	}
	if (is_floating(type)) {
		/* Decimal only (docs/cli.md): strtod() would also take hex
		 * ("0x1p1"), "inf", "nan" and "infinity", none of which a value's
		 * text is. */
		if (text[strspn(text, "0123456789+-.eE")])
			return -EINVAL;
		n.d = strtod(text, &end);
		if (*end || end == text || isnan(n.d) || isinf(n.d))
			return errno == ERANGE ? -ERANGE : -EINVAL;
		if (errno == ERANGE && fabs(n.d) > 1.0)
			return -ERANGE;
		/* A float takes what rounds to a finite float: FLT_MAX's own
		 * shortest text, 3.4028235e38, is a little above FLT_MAX. */
		if (type == PBUS_TYPE_FLOAT && isinf((float)n.d))
			return -ERANGE;
		*ret = n;
		return 0;
	}
	/* Integers: decimal only, so "010" is ten and "0x10" is refused. */
	for (const char *c = text + (text[0] == '-' || text[0] == '+'); *c; c++)
		if (*c < '0' || *c > '9')
			return -EINVAL;
	if (is_signed(type)) {
		int64_t lo, hi;

		n.i = strtoll(text, &end, 10);
		if (errno == ERANGE)
			return -ERANGE;
		switch (type) {
		case PBUS_TYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
		case PBUS_TYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
		case PBUS_TYPE_INT32:
		case PBUS_TYPE_ENUM: lo = INT32_MIN; hi = INT32_MAX; break;
		default: lo = INT64_MIN; hi = INT64_MAX; break;
		}
		if (n.i < lo || n.i > hi)
			return -ERANGE;
	} else {
		uint64_t hi;

		if (text[0] == '-')
			return -ERANGE;
		n.u = strtoull(text, &end, 10);
		if (errno == ERANGE)
			return -ERANGE;
		switch (type) {
		case PBUS_TYPE_UINT8: hi = UINT8_MAX; break;
		case PBUS_TYPE_UINT16: hi = UINT16_MAX; break;
		case PBUS_TYPE_UINT32: hi = UINT32_MAX; break;
		default: hi = UINT64_MAX; break;
		}
		if (n.u > hi)
			return -ERANGE;
	}
	*ret = n;
	return 0;
}

/* One scalar element of @ti from text, into @out. */
static int parse_element(const struct pbus_typeinfo *ti, unsigned element, const char *text,
			 unsigned char *out)
{
	union pbus_number n;
	int r;

	if (element == PBUS_TYPE_ENUM) {
		char *end;
		long long v;

		/* A label (exact, then case-insensitive), or an enumerator's number. */
		for (uint32_t i = 0; i < ti->enum_count; i++)
			if (!strcmp(text, ti->enum_labels[i])) {
				n.i = ti->enum_values[i];
				goto found;
			}
		for (uint32_t i = 0; i < ti->enum_count; i++)
			if (!strcasecmp(text, ti->enum_labels[i])) {
				n.i = ti->enum_values[i];
				goto found;
			}
		errno = 0;
		v = strtoll(text, &end, 10);
		if (!*text || *end || errno)
			return -EINVAL;
		if (!enum_has_value(ti, v))
			return -ERANGE;
		n.i = v;
found:
		store_scalar(element, n, out);
		return 0;
	}
	r = pbus_number_parse(element, text, &n);
	if (r < 0)
		return r;
	store_scalar(element, n, out);
	return 0;
}

int pbus_value_parse(const struct pbus_typeinfo *ti, const char *text, void *buf, size_t size,
		     size_t *ret_length)
{
	unsigned char *out = buf;
	unsigned element = pbus_element_type(ti->type);
	size_t len = 0;
	int r;

	if (!text || (!buf && size))
		return -EINVAL;
	if (ti->type == PBUS_TYPE_STRING) {
		len = strlen(text);
		if (len > ti->value_size)
			return -EMSGSIZE;
		if (len > size)
			return -ENOBUFS;
		memcpy(out, text, len);
	} else if (ti->type == PBUS_TYPE_BYTES) {
		size_t digits = strlen(text);

		if (digits % 2)
			return -EINVAL;
		if (digits / 2 > ti->value_size)
			return -EMSGSIZE;
		if (digits / 2 > size)
			return -ENOBUFS;
		for (size_t i = 0; i < digits; i += 2) {
			int hi = pbus_hex_digit(text[i]), lo = pbus_hex_digit(text[i + 1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			out[len++] = (unsigned char)(hi << 4 | lo);
		}
	} else if (ti->type & PBUS_TYPE_ARRAY_FLAG) {
		uint32_t esize = pbus_scalar_size(element);
		const char *p = text;

		while (*text) {
			char item[128];
			const char *comma = strchr(p, ',');
			size_t n = comma ? (size_t)(comma - p) : strlen(p);

			if (n == 0 || n >= sizeof(item))
				return -EINVAL;
			if (len + esize > ti->value_size)
				return -EMSGSIZE;
			if (len + esize > size)
				return -ENOBUFS;
			memcpy(item, p, n);
			item[n] = 0;
			r = parse_element(ti, element, item, out + len);
			if (r < 0)
				return r;
			len += esize;
			if (!comma)
				break;
			p = comma + 1;
		}
	} else {
		len = pbus_scalar_size(element);
		if (len > size)
			return -ENOBUFS;
		r = parse_element(ti, element, text, out);
		if (r < 0)
			return r;
	}
	r = pbus_value_check(ti, out, len);
	if (r < 0)
		return r;
	*ret_length = len;
	return 0;
}

/* An snprintf-style accumulator: counts everything, writes what fits. */
struct text_out {
	char *buf;
	size_t size;
	size_t length;
};

static void out_add(struct text_out *o, const char *s, size_t n)
{
	if (o->length < o->size) {
		size_t room = o->size - o->length - 1;

		memcpy(o->buf + o->length, s, n < room ? n : room);
	}
	o->length += n;
	if (o->size)
		o->buf[o->length < o->size ? o->length : o->size - 1] = 0;
}

static void out_printf(struct text_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out_printf(struct text_out *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* The shortest of %.{lo..17}g that reads back as the same value. */
static void format_floating(struct text_out *o, double d, bool single)
{
	char tmp[64];

	for (int precision = single ? 6 : 15; precision <= 17; precision++) {
		snprintf(tmp, sizeof(tmp), "%.*g", precision, d);
		if (single ? (float)strtod(tmp, NULL) == (float)d : strtod(tmp, NULL) == d)
			break;
	}
	out_add(o, tmp, strlen(tmp));
}

static void format_element(struct text_out *o, const struct pbus_typeinfo *ti, unsigned element,
			   const unsigned char *p)
{
	union pbus_number n = load_scalar(element, p);

	switch (element) {
	case PBUS_TYPE_BOOL:
		out_printf(o, "%s", n.u ? "true" : "false");
		break;
	case PBUS_TYPE_FLOAT:
	case PBUS_TYPE_DOUBLE:
		format_floating(o, n.d, element == PBUS_TYPE_FLOAT);
		break;
	case PBUS_TYPE_ENUM:
		for (uint32_t i = 0; i < ti->enum_count; i++)
			if (ti->enum_values[i] == n.i) {
				out_printf(o, "%s", ti->enum_labels[i]);
				return;
			}
		out_printf(o, "%lld", (long long)n.i);
		break;
	default:
		if (is_signed(element))
			out_printf(o, "%lld", (long long)n.i);
		else
			out_printf(o, "%llu", (unsigned long long)n.u);
	}
}

int pbus_value_format(const struct pbus_typeinfo *ti, const void *value, size_t length,
		      char *buf, size_t size)
{
	struct text_out o = {buf, size, 0};
	const unsigned char *p = value;
	unsigned element = pbus_element_type(ti->type);

	if (size)
		buf[0] = 0;
	if (ti->type == PBUS_TYPE_STRING) {
		out_add(&o, (const char *)p, length);
	} else if (ti->type == PBUS_TYPE_BYTES) {
		for (size_t i = 0; i < length; i++)
			out_printf(&o, "%02x", p[i]);
	} else {
		uint32_t esize = pbus_scalar_size(element);

		if (!esize)
			return -EINVAL;
		for (size_t off = 0; off + esize <= length; off += esize) {
			if (off)
				out_add(&o, ",", 1);
			format_element(&o, ti, element, p + off);
		}
	}
	return o.length > INT32_MAX ? -EOVERFLOW : (int)o.length;
}
