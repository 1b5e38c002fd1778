/* SPDX-License-Identifier: MIT */
/*
 * list.c: `pbus list`, the parameters of an instance as an aligned table,
 * one line each: name, type, value, unit; with --long also the schema
 * (flags, update class, limits, default, group, description). Then, when
 * pbusd answers and its interface has any, the methods and broadcasts with
 * their arguments, from the schema pbusd serves (the table holds only the
 * parameters).
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
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
static void fill_row(const struct tool_format *f, const struct pbus_view *view,
		     const struct pbus_param *param, bool long_format,
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
		char *text = tool_format_value(f, view, info.index, value.data, value.sample.length);

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
		describe_limits(&info, buf, sizeof(buf));
		cells[6] = dup_or_empty(buf);
	} else {
		cells[6] = dup_or_empty("-");
	}
	if (info.flags & PBUS_PARAM_HAS_DEFAULT) {
		char *text = tool_format_value(f, view, info.index, info.default_value,
					       info.default_length);

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

static void print_row(char *const *cells, int columns, const size_t *widths)
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

/* An aligned table: @headers, then @rows rows of @columns cells each
 * (cells wider than PAD_LIMIT do not widen their column). */
static void print_table(const char *const *heads, int columns, char ***cells, uint32_t rows)
{
	size_t widths[MAX_COLUMNS];

	for (int c = 0; c < columns; c++)
		widths[c] = strlen(heads[c]);
	for (uint32_t r = 0; r < rows; r++) {
		for (int c = 0; c < columns; c++) {
			size_t w = text_width(cells[r][c]);

			if (w <= PAD_LIMIT && w > widths[c])
				widths[c] = w;
		}
	}
	print_row((char *const *)heads, columns, widths);
	for (uint32_t r = 0; r < rows; r++)
		print_row(cells[r], columns, widths);
}

static void free_rows(char ***cells, uint32_t rows)
{
	for (uint32_t r = 0; r < rows; r++) {
		for (int c = 0; c < MAX_COLUMNS; c++)
			free(cells[r][c]);
		free(cells[r]);
	}
	free(cells);
}

static char **new_row(void)
{
	char **row = calloc(MAX_COLUMNS, sizeof(char *));

	if (!row) {
		tool_error("out of memory");
		exit(TOOL_EXIT_FAILURE);
	}
	return row;
}

/* "(name: type, ...)" of a method's or broadcast's arguments (@which < 0:
 * a broadcast's). */
static char *arguments_text(const struct pbus_schema *schema, uint32_t index, int which)
{
	uint32_t count = which < 0 ? pbus_schema_broadcast_arg_count(schema, index)
				   : pbus_schema_method_arg_count(schema, index, (enum pbus_schema_args)which);
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		tool_error("out of memory");
		exit(TOOL_EXIT_FAILURE);
	}
	fputc('(', f);
	for (uint32_t a = 0; a < count; a++) {
		const char *name = "?", *type = "?";

		if (which < 0)
			pbus_schema_broadcast_arg(schema, index, a, &name, &type);
		else
			pbus_schema_method_arg(schema, index, (enum pbus_schema_args)which, a, &name, &type);
		fprintf(f, "%s%s: %s", a ? ", " : "", name, type);
	}
	fputc(')', f);
	fclose(f);
	return text;
}

/*
 * The methods and broadcasts matching @patterns, as two more tables, from
 * the schema pbusd serves, each after a blank line if *@printed (a table
 * came before; set once one is printed). Returns how many matched. Quiet if
 * pbusd does not answer within @timeout_ms (the parameters came from the
 * table, which needs no pbusd), unless @long_format asks for everything: then one line on
 * stderr says why they are missing.
 */
static uint32_t list_methods(const struct tool_context *context, bool long_format, unsigned timeout_ms,
			     int npatterns, char **patterns, bool *printed)
{
	static const char *const method_headers[] = {"METHOD", "IN", "OUT"};
	static const char *const broadcast_headers[] = {"BROADCAST", "ARGUMENTS"};
	struct pbus_client_options options = {.name = "pbus", .timeout_ms = timeout_ms};
	const struct pbus_schema *schema;
	struct pbus_client *client = NULL;
	uint32_t methods, broadcasts, rows, matched;
	char ***cells;
	int r = pbus_client_connect(context->instance, &options, &client);

	if (r < 0) {
		if (long_format)
			tool_error("list: methods and broadcasts not shown: pbusd of '%s': %s",
				   context->instance, pbus_strerror(r));
		return 0;
	}
	schema = pbus_client_schema(client);
	methods = pbus_schema_method_count(schema);
	broadcasts = pbus_schema_broadcast_count(schema);
	cells = calloc((methods > broadcasts ? methods : broadcasts) + 1, sizeof(*cells));
	if (!cells) {
		tool_error("out of memory");
		exit(TOOL_EXIT_FAILURE);
	}
	rows = 0;
	for (uint32_t m = 0; m < methods; m++) {
		const char *name = pbus_schema_method_name(schema, m);

		if (!selected(name, npatterns, patterns))
			continue;
		cells[rows] = new_row();
		cells[rows][0] = dup_or_empty(name);
		cells[rows][1] = arguments_text(schema, m, PBUS_SCHEMA_ARGS_IN);
		cells[rows][2] = pbus_schema_method_fire_and_forget(schema, m)
					 ? dup_or_empty("(fire and forget)")
					 : arguments_text(schema, m, PBUS_SCHEMA_ARGS_OUT);
		rows++;
	}
	if (rows) {
		if (*printed)
			fputc('\n', stdout);
		print_table(method_headers, 3, cells, rows);
		*printed = true;
	}
	matched = rows;
	for (uint32_t row = 0; row < rows; row++) {
		for (int c = 0; c < MAX_COLUMNS; c++)
			free(cells[row][c]);
		free(cells[row]);
		cells[row] = NULL;
	}
	rows = 0;
	for (uint32_t b = 0; b < broadcasts; b++) {
		const char *name = pbus_schema_broadcast_name(schema, b);

		if (!selected(name, npatterns, patterns))
			continue;
		cells[rows] = new_row();
		cells[rows][0] = dup_or_empty(name);
		cells[rows][1] = arguments_text(schema, b, -1);
		rows++;
	}
	if (rows) {
		if (*printed)
			fputc('\n', stdout);
		print_table(broadcast_headers, 2, cells, rows);
		*printed = true;
	}
	free_rows(cells, rows);
	pbus_client_close(client);
	return matched + rows;
}

static int run(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"long", no_argument, NULL, 'l'},
		{"timeout", required_argument, NULL, 'w'},
		TOOL_FORMAT_NUMBER_LONG,
		{NULL, 0, NULL, 0},
	};
	struct tool_format format;
	struct pbus_table *table;
	bool long_format = false, printed = false;
	unsigned timeout_ms = 1000; /* -w: how long pbusd may take to name the methods */
	int option, status, columns;
	uint32_t count, rows = 0;
	char ***cells;

	tool_format_init(&format);
	while ((option = tool_next_option(context, &tool_command_list, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "lw:" TOOL_FORMAT_NUMBER_SHORT,
					  options, &status))) {
		if (option == 'l') {
			long_format = true;
		} else if (option == 'w') {
			if (tool_timeout_option(&tool_command_list, optarg, &timeout_ms))
				return TOOL_EXIT_USAGE;
		} else if (tool_format_option(&tool_command_list, &format, option, optarg, &status) &&
			 status >= 0)
			return status;
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
	for (uint32_t i = 0; i < count; i++) {
		const struct pbus_param *param;

		if (pbus_table_param(table, i, &param) < 0 ||
		    !selected(pbus_param_name(param), argc - optind, argv + optind))
			continue;
		cells[rows] = new_row();
		fill_row(&format, pbus_table_view(table), param, long_format, cells[rows]);
		rows++;
	}
	pbus_table_close(table);
	/* Patterns that select only methods or broadcasts show only those. */
	if (rows || argc == optind) {
		print_table(headers, columns, cells, rows);
		printed = true;
	}
	free_rows(cells, rows);
	if (list_methods(context, long_format, timeout_ms, argc - optind, argv + optind, &printed) == 0 && rows == 0 &&
	    argc > optind) {
		tool_error("list: no parameter, method or broadcast matches '%s'", argv[optind]);
		status = TOOL_EXIT_FAILURE;
	}
	return status;
}

const struct tool_command tool_command_list = {
	.name = "list",
	.summary = "list the parameters with their values",
	.help = "Usage: pbus [-i NAME] list [--long] [OPTIONS] [PATTERN...]\n"
		"\n"
		"List the parameters of the instance, one per line: name, type, value\n"
		"and unit, in schema order; then, if pbusd answers, the methods (with\n"
		"their in- and out-arguments) and broadcasts of its interface. PATTERNs\n"
		"(shell globs, e.g. 'identity.*') select them by name.\n"
		"\n"
		"Options:\n"
		"  -l, --long           also show flags (ro, persistent, noread), update\n"
		"                       class, limits, default, write group, description\n"
		"  -w, --timeout SECONDS  wait at most SECONDS for pbusd to name the\n"
		"                       methods and broadcasts (default 1; the\n"
		"                       parameters come from the table, without pbusd)\n"
		TOOL_FORMAT_NUMBER_HELP
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 list\n"
		"  pbus -i psu1 list --long 'identity.*'\n"
		"  pbus -i psu1 list -n -g 4\n"
		TOOL_HELP_SEE("pbus-list(1)"),
	.run = run,
};
