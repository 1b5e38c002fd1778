/* SPDX-License-Identifier: MIT */
/*
 * format.c: values, timestamps and fields of a line as the format options
 * ask (format.h). Numbers are formatted from the value's own bytes (the
 * table's native layout: a double is a double, an enum an int32), not
 * from its text, so -f 3 rounds the value itself; everything the options
 * do not touch (strings, bytes, bools, labels) keeps pbus_view_format()'s
 * text.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"

enum { TIME_FORMAT_OPTION = 0x101, PRECISION_MAX = 40 };

void tool_format_init(struct tool_format *f)
{
	memset(f, 0, sizeof(*f));
	f->started_ns = tool_realtime_ns();
}

static int parse_precision(const struct tool_command *command, int option, const char *arg,
			   int *ret)
{
	unsigned long long n;

	if (tool_parse_unsigned(arg, PRECISION_MAX, &n) < 0)
		return tool_usage_error(command, "-%c wants a number of digits 0-%d, not '%s'", option,
					PRECISION_MAX, arg);
	*ret = (int)n;
	return -1;
}

static int parse_time_format(const struct tool_command *command, struct tool_format *f,
			     const char *arg)
{
	static const struct {
		const char *name;
		enum tool_time_style style;
	} names[] = {
		{"local", TOOL_TIME_LOCAL},
		{"iso", TOOL_TIME_ISO},
		{"unix", TOOL_TIME_UNIX},
		{"rel", TOOL_TIME_RELATIVE},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(arg, names[i].name)) {
			f->time = names[i].style;
			return -1;
		}
	if (!strchr(arg, '%'))
		return tool_usage_error(command, "--time-format '%s' is none of local, iso, unix, rel "
					"and no strftime pattern (no '%%')", arg);
	f->time = TOOL_TIME_PATTERN;
	f->time_pattern = arg;
	return -1;
}

bool tool_format_option(const struct tool_command *command, struct tool_format *f, int option,
			const char *arg, int *ret_status)
{
	*ret_status = -1;
	switch (option) {
	case 'f':
	case 'e':
	case 'g':
		if (f->float_style && f->float_style != option) {
			*ret_status = tool_usage_error(command, "-%c and -%c exclude each other",
						       f->float_style, option);
			return true;
		}
		f->float_style = (char)option;
		f->number_given = true;
		*ret_status = parse_precision(command, option, arg, &f->precision);
		return true;
	case 'x':
		f->hex = true;
		f->number_given = true;
		return true;
	case 'n':
		f->numeric_enums = true;
		return true;
	case 't':
		if (f->time == TOOL_TIME_NONE)
			f->time = TOOL_TIME_LOCAL;
		f->line_given = true;
		return true;
	case TIME_FORMAT_OPTION:
		f->line_given = true;
		*ret_status = parse_time_format(command, f, arg);
		return true;
	case 'T':
		f->terse = true;
		f->line_given = true;
		return true;
	case 'F':
		f->separator = arg;
		f->line_given = true;
		return true;
	default:
		return false;
	}
}

/* --- Values -------------------------------------------------------------- */

struct buffer {
	char *text;
	size_t length, capacity;
	bool failed;
};

static void buffer_add(struct buffer *b, const char *s)
{
	size_t n = strlen(s);

	if (b->failed)
		return;
	if (b->length + n + 1 > b->capacity) {
		size_t capacity = b->capacity ? b->capacity * 2 : 64;
		char *text;

		while (capacity < b->length + n + 1)
			capacity *= 2;
		text = realloc(b->text, capacity);
		if (!text) {
			b->failed = true;
			return;
		}
		b->text = text;
		b->capacity = capacity;
	}
	memcpy(b->text + b->length, s, n + 1);
	b->length += n;
}

/* A signed integer of @size bytes at @p, widened. */
static int64_t signed_at(const unsigned char *p, size_t size)
{
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;

	switch (size) {
	case 1: memcpy(&i8, p, 1); return i8;
	case 2: memcpy(&i16, p, 2); return i16;
	case 4: memcpy(&i32, p, 4); return i32;
	default: memcpy(&i64, p, 8); return i64;
	}
}

static uint64_t unsigned_at(const unsigned char *p, size_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

/* One element (@element type, @size bytes at @p) into @b: by the options
 * where they apply, else as pbus_view_format() has it. */
static void element_text(const struct tool_format *f, const struct pbus_view *view, uint32_t index,
			 unsigned element, const unsigned char *p, size_t size, struct buffer *b)
{
	char text[128];
	char *plain;

	switch (element) {
	case PBUS_TYPE_FLOAT:
	case PBUS_TYPE_DOUBLE:
		if (f->float_style) {
			double d;
			float x;
			char pattern[8] = {'%', '.', '*', f->float_style, 0};

			if (element == PBUS_TYPE_FLOAT) {
				memcpy(&x, p, sizeof(x));
				d = x;
			} else {
				memcpy(&d, p, sizeof(d));
			}
			snprintf(text, sizeof(text), pattern, f->precision, d);
			buffer_add(b, text);
			return;
		}
		break;
	case PBUS_TYPE_INT8:
	case PBUS_TYPE_INT16:
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_INT64:
	case PBUS_TYPE_UINT8:
	case PBUS_TYPE_UINT16:
	case PBUS_TYPE_UINT32:
	case PBUS_TYPE_UINT64:
		if (f->hex) {
			/* Two's complement of the type's width for a negative one. */
			snprintf(text, sizeof(text), "0x%" PRIx64, unsigned_at(p, size));
			buffer_add(b, text);
			return;
		}
		break;
	case PBUS_TYPE_ENUM:
		if (f->numeric_enums) {
			int64_t v = signed_at(p, size);

			if (f->hex)
				snprintf(text, sizeof(text), "0x%" PRIx64, unsigned_at(p, size));
			else
				snprintf(text, sizeof(text), "%" PRId64, v);
			buffer_add(b, text);
			return;
		}
		break;
	default:
		break;
	}
	plain = tool_value_text(view, index, p, size);
	if (!plain) {
		b->failed = true;
		return;
	}
	buffer_add(b, plain);
	free(plain);
}

char *tool_format_value(const struct tool_format *f, const struct pbus_view *view, uint32_t index,
			const void *data, size_t length)
{
	const unsigned char *p = data;
	struct pbus_param_info info;
	struct buffer b = {0};
	unsigned element;

	if (!f || (!f->float_style && !f->hex && !f->numeric_enums) ||
	    pbus_view_describe(view, index, &info) < 0)
		return tool_value_text(view, index, data, length);
	element = info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	if (element == PBUS_TYPE_STRING || element == PBUS_TYPE_BYTES ||
	    element == PBUS_TYPE_BOOL || info.element_size == 0)
		return tool_value_text(view, index, data, length);
	if (info.type & PBUS_TYPE_ARRAY_FLAG) {
		buffer_add(&b, "");
		for (size_t off = 0; off + info.element_size <= length; off += info.element_size) {
			if (off)
				buffer_add(&b, ",");
			element_text(f, view, index, element, p + off, info.element_size, &b);
		}
	} else if (length >= info.element_size) {
		element_text(f, view, index, element, p, info.element_size, &b);
	} else {
		return tool_value_text(view, index, data, length);
	}
	if (b.failed) {
		free(b.text);
		return NULL;
	}
	return b.text;
}

/* --- Times --------------------------------------------------------------- */

/* strftime of @tm with "%f" as the microseconds @us ("%%" kept). */
static void pattern_time(const char *pattern, const struct tm *tm, unsigned us, char *buf,
			 size_t size)
{
	char expanded[256], micro[8];
	size_t used = 0;

	snprintf(micro, sizeof(micro), "%06u", us);
	for (const char *c = pattern; *c && used + 8 < sizeof(expanded); c++) {
		if (c[0] == '%' && c[1] == 'f') {
			memcpy(expanded + used, micro, 6);
			used += 6;
			c++;
		} else if (c[0] == '%' && c[1] == '%') {
			expanded[used++] = '%';
			expanded[used++] = '%';
			c++;
		} else {
			expanded[used++] = *c;
		}
	}
	expanded[used] = 0;
	if (strftime(buf, size, expanded, tm) == 0 && size)
		buf[0] = 0;
}

void tool_format_time(const struct tool_format *f, uint64_t ns, char *buf, size_t size)
{
	time_t seconds = (time_t)(ns / 1000000000u);
	unsigned us = (unsigned)(ns % 1000000000u / 1000u);
	struct tm tm;
	char date[64];

	if (ns == 0) {
		snprintf(buf, size, "-");
		return;
	}
	switch (f->time) {
	case TOOL_TIME_ISO:
		gmtime_r(&seconds, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(buf, size, "%s.%06uZ", date, us);
		return;
	case TOOL_TIME_UNIX:
		snprintf(buf, size, "%" PRIu64 ".%09u", ns / 1000000000u, (unsigned)(ns % 1000000000u));
		return;
	case TOOL_TIME_RELATIVE: {
		int64_t d = (int64_t)(ns - f->started_ns);
		uint64_t a = d < 0 ? (uint64_t)-d : (uint64_t)d;

		snprintf(buf, size, "%s%" PRIu64 ".%06u", d < 0 ? "-" : "", a / 1000000000u,
			 (unsigned)(a % 1000000000u / 1000u));
		return;
	}
	case TOOL_TIME_PATTERN:
		localtime_r(&seconds, &tm);
		pattern_time(f->time_pattern, &tm, us, buf, size);
		return;
	default:
		localtime_r(&seconds, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(buf, size, "%s.%06u", date, us);
		return;
	}
}

void tool_format_field(const struct tool_format *f, FILE *out, bool *first, const char *text,
		       bool escape)
{
	if (!*first)
		fputs(f->separator ? f->separator : " ", out);
	*first = false;
	if (escape)
		tool_print_escaped(out, text);
	else
		fputs(text, out);
}

/* --- Timeouts ------------------------------------------------------------ */

int tool_parse_seconds(const char *text, unsigned *ret_ms)
{
	char *end;
	double v;

	/* Decimal only, as values are (no hex, no inf, no nan). */
	if (!text || !*text || text[strspn(text, "0123456789.eE+")])
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || errno || !(v > 0) || v > 86400)
		return -EINVAL;
	*ret_ms = (unsigned)(v * 1000 + 0.5);
	if (*ret_ms == 0)
		*ret_ms = 1;
	return 0;
}

int tool_timeout_option(const struct tool_command *command, const char *text, unsigned *ret_ms)
{
	if (tool_parse_seconds(text, ret_ms) < 0)
		return tool_usage_error(command, "-w wants seconds above 0, not '%s'", text);
	return 0;
}

void tool_seconds_text(unsigned ms, char *buf, size_t size)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%u s", ms / 1000);
	else
		snprintf(buf, size, "%g s", ms / 1000.0);
}
