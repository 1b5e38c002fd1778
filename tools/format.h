/* SPDX-License-Identifier: MIT */
/*
 * format.h: how `pbus get`, `watch`, `list` and `dump` print values for a
 * person or a script, chosen by options that mean the same in each command
 * (the letters of EPICS's caget/camonitor where they have one):
 *
 *   -t, --time              the value's timestamp before it (local, µs)
 *       --time-format=FMT   local, iso, unix, rel, or a strftime pattern
 *   -f N, -e N, -g N        floats and doubles as printf's %.Nf, %.Ne, %.Ng
 *   -x, --hex               integers in hexadecimal (0x1f)
 *   -n, --numeric           enumerators as their numbers
 *   -T, --terse             the bare fields: NAME VALUE (watch), VALUE (get)
 *   -F, --separator SEP     the text between the fields of a line
 *
 * A command takes the groups that apply to it (TOOL_FORMAT_*_OPTIONS) and
 * hands each option it does not know itself to tool_format_option(). The
 * text of a value goes through tool_format_value(), so a value looks the
 * same in every command given the same options; without options it is
 * exactly pbus_view_format()'s text, the one `pbus set` reads back.
 *
 * Single-threaded, as the whole tool.
 */
#ifndef PBUS_TOOL_FORMAT_H
#define PBUS_TOOL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tool.h"

enum tool_time_style {
	TOOL_TIME_NONE = 0,
	TOOL_TIME_LOCAL,    /* 2026-11-25 12:00:00.123456, local time */
	TOOL_TIME_ISO,      /* 2026-11-25T11:00:00.123456Z, UTC */
	TOOL_TIME_UNIX,     /* 1795604400.123456789, seconds since the epoch */
	TOOL_TIME_RELATIVE, /* -0.250000: seconds since the command started */
	TOOL_TIME_PATTERN   /* strftime(3) of local time, %f = microseconds */
};

struct tool_format {
	enum tool_time_style time;
	const char *time_pattern; /* TOOL_TIME_PATTERN */
	char float_style;         /* 0, or 'f', 'e', 'g' */
	int precision;
	bool hex;
	bool numeric_enums;
	bool terse;
	const char *separator;    /* NULL: " " */
	uint64_t started_ns;      /* CLOCK_REALTIME at the start, for "rel" */
	/* Which options were given, for the commands that refuse some. */
	bool number_given;        /* -f/-e/-g/-x */
	bool line_given;          /* -t/--time-format/-T/-F */
};

/* The number options (-f -e -g -x -n): short letters and long entries. */
#define TOOL_FORMAT_NUMBER_SHORT "f:e:g:xn"
#define TOOL_FORMAT_NUMBER_LONG                                   \
	{"fixed", required_argument, NULL, 'f'},                  \
	{"exponent", required_argument, NULL, 'e'},               \
	{"general", required_argument, NULL, 'g'},                \
	{"hex", no_argument, NULL, 'x'},                          \
	{"numeric", no_argument, NULL, 'n'}
/* The line options (-t --time-format -T -F). */
#define TOOL_FORMAT_LINE_SHORT "tTF:"
#define TOOL_FORMAT_LINE_LONG                                     \
	{"time", no_argument, NULL, 't'},                         \
	{"time-format", required_argument, NULL, 0x101},          \
	{"terse", no_argument, NULL, 'T'},                        \
	{"separator", required_argument, NULL, 'F'}

/* The help lines of the two groups, for the commands' --help. */
#define TOOL_FORMAT_NUMBER_HELP                                                           \
	"  -f, --fixed N        floats and doubles with N digits after the point (%.Nf)\n" \
	"  -e, --exponent N     floats and doubles in exponent form, N digits (%.Ne)\n"   \
	"  -g, --general N      floats and doubles with N significant digits (%.Ng)\n"    \
	"  -x, --hex            integers in hexadecimal (0x1f; negative numbers in\n"     \
	"                       two's complement of their width)\n"                       \
	"  -n, --numeric        enumerators as their numbers, not their labels\n"
#define TOOL_FORMAT_LINE_HELP                                                                \
	"  -t, --time           the value's timestamp first (local time with us)\n"            \
	"      --time-format=FMT  implies -t: local (2026-11-25 12:00:00.123456),\n"       \
	"                       iso (UTC, 2026-11-25T11:00:00.123456Z), unix\n"              \
	"                       (seconds.nanoseconds), rel (seconds since pbus\n"            \
	"                       started), or a strftime pattern (%f: microseconds)\n"        \
	"  -T, --terse          bare fields only, for scripts\n"                               \
	"  -F, --separator SEP  put SEP between the fields of a line (default: a space)\n"

/*
 * Reset @f to the defaults (no options) and note the start time.
 */
void tool_format_init(struct tool_format *f);

/*
 * If @option (from getopt_long, its argument @arg) is one of the format
 * options, apply it to @f and return true, with *ret_status -1, or the
 * exit status of a usage error already reported against @command.
 * Otherwise return false.
 */
bool tool_format_option(const struct tool_command *command, struct tool_format *f, int option,
			const char *arg, int *ret_status);

/*
 * The text of a value of parameter @index of @view (@data, @length bytes)
 * as @f says (NULL: pbus_view_format()'s text), malloc'd; NULL only when
 * out of memory. Control characters are left as they are (the caller
 * escapes them where it prints).
 */
char *tool_format_value(const struct tool_format *f, const struct pbus_view *view, uint32_t index,
			const void *data, size_t length);

/* The timestamp @ns (CLOCK_REALTIME ns) in @f's time style; "-" for 0. */
void tool_format_time(const struct tool_format *f, uint64_t ns, char *buf, size_t size);

/*
 * Print one field of a line: the separator first unless *@first (which it
 * clears), then @text, with control characters escaped if @escape.
 */
void tool_format_field(const struct tool_format *f, FILE *out, bool *first, const char *text,
		       bool escape);

/*
 * Parse a timeout in seconds (-w): a decimal number above 0, at most a
 * day; its milliseconds (at least 1) in *ret_ms. -EINVAL if malformed.
 */
int tool_parse_seconds(const char *text, unsigned *ret_ms);

/*
 * The -w option of @command: tool_parse_seconds(@text) into *ret_ms, or a
 * usage error naming the option (printed). Returns 0, or TOOL_EXIT_USAGE.
 */
int tool_timeout_option(const struct tool_command *command, const char *text, unsigned *ret_ms);

/* "2.5 s" for messages about a timeout of @ms. */
void tool_seconds_text(unsigned ms, char *buf, size_t size);

#endif
