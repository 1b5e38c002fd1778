/* SPDX-License-Identifier: MIT */
/* describe.c: see describe.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/common.h>
#include <parambus/view.h>

#include "describe.h"

static bool type_is_signed(unsigned element)
{
	return element == PBUS_TYPE_INT8 || element == PBUS_TYPE_INT16 ||
	       element == PBUS_TYPE_INT32 || element == PBUS_TYPE_INT64 || element == PBUS_TYPE_ENUM;
}

static bool type_is_floating(unsigned element)
{
	return element == PBUS_TYPE_FLOAT || element == PBUS_TYPE_DOUBLE;
}

/* The shortest %g text from 6 digits up that reads back as @d (from 6, so
 * that 30 is "30", not "3e+01"). */
static void double_text(double d, char *buf, size_t size)
{
	for (int precision = 6; precision <= 17; precision++) {
		snprintf(buf, size, "%.*g", precision, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

void describe_number(unsigned type, union pbus_number number, char *buf, size_t size)
{
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;

	if (type_is_floating(element))
		double_text(number.d, buf, size);
	else if (type_is_signed(element))
		snprintf(buf, size, "%lld", (long long)number.i);
	else
		snprintf(buf, size, "%llu", (unsigned long long)number.u);
}

/* The natural range of an integer type, for limits the schema leaves open. */
static bool type_range(unsigned element, union pbus_number *lo, union pbus_number *hi)
{
	switch (element) {
	case PBUS_TYPE_INT8: lo->i = INT8_MIN; hi->i = INT8_MAX; return true;
	case PBUS_TYPE_INT16: lo->i = INT16_MIN; hi->i = INT16_MAX; return true;
	case PBUS_TYPE_INT32: lo->i = INT32_MIN; hi->i = INT32_MAX; return true;
	case PBUS_TYPE_INT64: lo->i = INT64_MIN; hi->i = INT64_MAX; return true;
	case PBUS_TYPE_UINT8: lo->u = 0; hi->u = UINT8_MAX; return true;
	case PBUS_TYPE_UINT16: lo->u = 0; hi->u = UINT16_MAX; return true;
	case PBUS_TYPE_UINT32: lo->u = 0; hi->u = UINT32_MAX; return true;
	case PBUS_TYPE_UINT64: lo->u = 0; hi->u = UINT64_MAX; return true;
	default: return false;
	}
}

void describe_limits(const struct pbus_param_info *info, char *buf, size_t size)
{
	union pbus_number lo, hi;
	char lo_text[48], hi_text[48];
	bool has_lo, has_hi, natural;
	unsigned element;

	if (size)
		buf[0] = 0;
	element = info->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	natural = type_range(element, &lo, &hi);
	has_lo = natural || (info->flags & PBUS_PARAM_HAS_MIN);
	has_hi = natural || (info->flags & PBUS_PARAM_HAS_MAX);
	if (info->flags & PBUS_PARAM_HAS_MIN)
		lo = info->min;
	if (info->flags & PBUS_PARAM_HAS_MAX)
		hi = info->max;
	if (!has_lo && !has_hi)
		return;
	describe_number(info->type, lo, lo_text, sizeof(lo_text));
	describe_number(info->type, hi, hi_text, sizeof(hi_text));
	if (has_lo && has_hi)
		snprintf(buf, size, "%s \u2026 %s%s%s", lo_text, hi_text, *info->unit ? " " : "",
			 info->unit);
	else
		snprintf(buf, size, "%s %s%s%s", has_lo ? "at least" : "at most",
			 has_lo ? lo_text : hi_text, *info->unit ? " " : "", info->unit);
}

static const char *article(const char *word)
{
	return strchr("aeioAEIO", word[0]) ? "an" : "a";
}

/* "OFF, ON, TRIPPED": the labels of enum parameter @index. */
static void enum_labels_text(const struct pbus_view *view, uint32_t index, char *buf, size_t size)
{
	const char *label;
	size_t used = 0;

	buf[0] = 0;
	for (uint32_t i = 0; pbus_view_enumerator(view, index, i, &label, NULL) == 0; i++) {
		int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", label);

		if (n < 0 || (size_t)n >= size - used) {
			/* Too many to list: end with an ellipsis if there is room. */
			if (size - used > 4)
				snprintf(buf + used, size - used, ", \u2026");
			return;
		}
		used += (size_t)n;
	}
}

void describe_parse_error(const struct pbus_view *view, uint32_t index, int negative_errno,
			   char *buf, size_t size)
{
	struct pbus_param_info info;
	char detail[384];
	unsigned element;
	bool array;
	const char *element_name;

	if (pbus_view_describe(view, index, &info) < 0) {
		snprintf(buf, size, "%s", pbus_strerror(negative_errno));
		return;
	}
	array = info.type & PBUS_TYPE_ARRAY_FLAG;
	element = info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	element_name = pbus_type_name(element);
	switch (negative_errno) {
	case -ERANGE:
		if (element == PBUS_TYPE_ENUM) {
			enum_labels_text(view, index, detail, sizeof(detail));
			snprintf(buf, size, "not an enumerator (one of %s)", detail);
		} else {
			describe_limits(&info, detail, sizeof(detail));
			/* A float or double without limits: beyond what the type holds. */
			if (!detail[0] && element == PBUS_TYPE_FLOAT)
				snprintf(detail, sizeof(detail), "a float is at most \u00b13.4028235e38");
			else if (!detail[0])
				snprintf(detail, sizeof(detail), "a double is at most \u00b11.7976931348623157e308");
			snprintf(buf, size, "%s out of range (%s)", array ? "element" : "value",
				 detail);
		}
		return;
	case -EMSGSIZE:
		if (array)
			snprintf(buf, size, "too many elements (at most %u)",
				 info.element_size ? info.value_size / info.element_size : 0);
		else
			snprintf(buf, size, "too long (at most %u bytes)", info.value_size);
		return;
	case -EINVAL:
		if (array) {
			snprintf(buf, size, "not a list of %s (comma-separated, e.g. 1,2,3)",
				 element_name);
			return;
		}
		switch (element) {
		case PBUS_TYPE_BOOL:
			snprintf(buf, size, "not a bool (true/false)");
			return;
		case PBUS_TYPE_FLOAT:
		case PBUS_TYPE_DOUBLE:
			snprintf(buf, size, "not %s %s (a finite decimal number)", article(element_name),
				 element_name);
			return;
		case PBUS_TYPE_STRING:
			snprintf(buf, size, "not valid UTF-8 text");
			return;
		case PBUS_TYPE_BYTES:
			snprintf(buf, size, "not hex bytes (two hex digits per byte, e.g. 00ff)");
			return;
		case PBUS_TYPE_ENUM:
			enum_labels_text(view, index, detail, sizeof(detail));
			snprintf(buf, size, "not an enumerator (one of %s)", detail);
			return;
		default:
			snprintf(buf, size, "not %s %s (a decimal integer)", article(element_name),
				 element_name);
			return;
		}
	default:
		snprintf(buf, size, "%s", pbus_strerror(negative_errno));
	}
}

void describe_refusal(const struct pbus_view *view, uint32_t index, const char *text, int negative_errno,
		      const char *writer, char *buf, size_t size)
{
	struct pbus_param_info info;
	char echo[80], reason[512];

	if (pbus_view_describe(view, index, &info) < 0) {
		snprintf(buf, size, "set: %s", pbus_strerror(negative_errno));
		return;
	}
	/* the text as given, cut at 60 bytes on a character boundary */
	if (strlen(text) > 60) {
		size_t n = 60;

		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
		snprintf(echo, sizeof(echo), "%.*s\u2026", (int)n, text);
	} else {
		snprintf(echo, sizeof(echo), "%s", text);
	}
	switch (negative_errno) {
	case -EACCES:
		snprintf(buf, size, "set %s: parameter is read-only", info.name);
		return;
	case -EPERM:
		if (*info.group)
			snprintf(buf, size, "set %s: permission denied by pbusd (only pbusd's user and group '%s' may "
				 "write it; is %s's user in it?)", info.name, info.group, writer);
		else
			snprintf(buf, size, "set %s: permission denied by pbusd (only pbusd's user may write it)",
				 info.name);
		return;
	case -EBUSY:
		snprintf(buf, size, "set: parameter '%s' is busy (another writer has held it for 1 s); nothing "
			 "was changed", info.name);
		return;
	case -ERANGE:
	case -EMSGSIZE:
	case -EINVAL:
		describe_parse_error(view, index, negative_errno, reason, sizeof(reason));
		snprintf(buf, size, "set %s=%s: %s", info.name, echo, reason);
		return;
	default:
		snprintf(buf, size, "set %s: %s", info.name, pbus_strerror(negative_errno));
		return;
	}
}
