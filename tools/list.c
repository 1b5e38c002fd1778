/* SPDX-License-Identifier: MIT */
/*
 * list.c: `pbus list`, the parameters of an instance as an aligned table,
 * one line each: name, type, value, unit; with --long also the schema
 * (flags, update class, limits, default, group, description).
 */
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

enum { COLUMNS_SHORT = 4, COLUMNS_LONG = 10, MAX_COLUMNS = 10 };
enum { PAD_LIMIT = 40 }; /* wider cells are not padded to: they run over */

static const char *const headers[MAX_COLUMNS] = {
	"NAME", "TYPE", "VALUE", "UNIT", "FLAGS", "CLASS", "LIMITS", "DEFAULT", "GROUP", "DESCRIPTION",
};

/* Display width: UTF-8 code points (the units and the ellipsis are not
 * ASCII), with control characters counted as printed by tool_print_escaped. */
static size_t text_width(const char *text)
{
	size_t width = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if ((*c & 0xc0) == 0x80)
			continue;
		if (*c == '\n' || *c == '\t' || *c == '\r')
			width += 2;
		else if (*c < 0x20 || *c == 0x7f)
			width += 4;
		else
			width++;
	}
	return width;
}

static char *dup_or_empty(const char *text)
{
	char *copy = strdup(text ? text : "");

	if (!copy) {
		tool_error("out of memory");
		exit(TOOL_EXIT_FAILURE);
	}
	return copy;
}

/* The cells of one parameter's row. */
static void fill_row(const struct pbus_view *view, const struct pbus_param *param, bool long_format,
		     char **cells)
{
	struct pbus_param_info info;
	struct tool_value value;
	char buf[512];

	pbus_param_describe(param, &info);
	cells[0] = dup_or_empty(info.name);
	cells[1] = dup_or_empty(pbus_type_name(info.type));
	if (info.flags & PBUS_PARAM_NOREAD) {
		cells[2] = dup_or_empty("(not readable)");
	} else if (tool_value_read(param, &value) < 0) {
		snprintf(buf, sizeof(buf), "(%s)", pbus_strerror(value.status));
		cells[2] = dup_or_empty(buf);
		tool_value_clear(&value);
	} else {
		char *text = tool_value_text(view, info.index, value.data, value.sample.length);

		cells[2] = dup_or_empty(text);
		free(text);
		tool_value_clear(&value);
	}
	cells[3] = dup_or_empty(info.unit);
	if (!long_format)
		return;
	tool_flags_text(info.flags, buf, sizeof(buf));
	cells[4] = dup_or_empty(buf);
	cells[5] = dup_or_empty(pbus_update_class_name(info.update_class));
	if (info.flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX)) {
		tool_limits_text(&info, buf, sizeof(buf));
		cells[6] = dup_or_empty(buf);
	} else {
		cells[6] = dup_or_empty("-");
	}
	if (info.flags & PBUS_PARAM_HAS_DEFAULT) {
		char *text = tool_value_text(view, info.index, info.default_value, info.default_length);

		cells[7] = dup_or_empty(text && *text ? text : "\"\"");
		free(text);
	} else {
		cells[7] = dup_or_empty("-");
	}
	cells[8] = dup_or_empty(*info.group ? info.group : "-");
	cells[9] = dup_or_empty(info.description);
}

static bool selected(const char *name, int count, char **patterns)
{
	if (count == 0)
		return true;
	for (int i = 0; i < count; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

static void print_row(char **cells, int columns, const size_t *widths)
{
	/* No padding after the last non-empty cell: no trailing blanks. */
	while (columns > 1 && !*cells[columns - 1])
		columns--;
	for (int c = 0; c < columns; c++) {
		bool last = c == columns - 1;

		tool_print_escaped(stdout, cells[c]);
		if (!last) {
			size_t w = text_width(cells[c]);

			printf("%*s", (int)(widths[c] > w ? widths[c] - w : 0) + 2, "");
		}
	}
	fputc('\n', stdout);
}

static int run(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"long", no_argument, NULL, 'l'},
		{NULL, 0, NULL, 0},
	};
	struct pbus_table *table;
	bool long_format = false;
	int option, status, columns;
	uint32_t count, rows = 0;
	char ***cells;
	size_t widths[MAX_COLUMNS];

	while ((option = tool_next_option(context, &tool_command_list, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "l", options, &status))) {
		if (option == 'l')
			long_format = true;
	}
	if (status >= 0)
		return status;
	status = tool_open(context, PBUS_OPEN_READ, &table);
	if (status != TOOL_EXIT_OK)
		return status;
	columns = long_format ? COLUMNS_LONG : COLUMNS_SHORT;
	count = pbus_table_param_count(table);
	cells = calloc(count ? count : 1, sizeof(*cells));
	if (!cells) {
		tool_error("out of memory");
		pbus_table_close(table);
		return TOOL_EXIT_FAILURE;
	}
	for (int c = 0; c < columns; c++)
		widths[c] = strlen(headers[c]);
	for (uint32_t i = 0; i < count; i++) {
		const struct pbus_param *param;

		if (pbus_table_param(table, i, &param) < 0 ||
		    !selected(pbus_param_name(param), argc - optind, argv + optind))
			continue;
		cells[rows] = calloc(MAX_COLUMNS, sizeof(char *));
		if (!cells[rows]) {
			tool_error("out of memory");
			exit(TOOL_EXIT_FAILURE);
		}
		fill_row(pbus_table_view(table), param, long_format, cells[rows]);
		for (int c = 0; c < columns; c++) {
			size_t w = text_width(cells[rows][c]);

			if (w <= PAD_LIMIT && w > widths[c])
				widths[c] = w;
		}
		rows++;
	}
	if (rows == 0 && argc > optind) {
		tool_error("list: no parameter matches '%s'", argv[optind]);
		status = TOOL_EXIT_FAILURE;
	} else {
		print_row((char **)headers, columns, widths);
		for (uint32_t r = 0; r < rows; r++)
			print_row(cells[r], columns, widths);
	}
	for (uint32_t r = 0; r < rows; r++) {
		for (int c = 0; c < MAX_COLUMNS; c++)
			free(cells[r][c]);
		free(cells[r]);
	}
	free(cells);
	pbus_table_close(table);
	return status;
}

const struct tool_command tool_command_list = {
	.name = "list",
	.summary = "list the parameters with their values",
	.help = "Usage: pbus [-i NAME] list [--long] [PATTERN...]\n"
		"\n"
		"List the parameters of the instance, one per line: name, type, value\n"
		"and unit, in schema order. PATTERNs (shell globs, e.g. 'identity.*')\n"
		"select parameters by name.\n"
		"\n"
		"Options:\n"
		"  -l, --long           also show flags (ro, persistent, noread), update\n"
		"                       class, limits, default, write group, description\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n",
	.run = run,
};
