/* SPDX-License-Identifier: MIT */
/*
 * dump.c: `pbus dump` (the whole instance, schema and values, as text or
 * JSON) and `pbus info` (what the instance is and whether pbusd owns it).
 *
 * The JSON is written by hand rather than through a library: every string
 * goes through tool_json_string(), which escapes quotes, backslashes and
 * control characters and replaces invalid UTF-8, and numbers are printed
 * from their typed values (NaN and infinity, which JSON lacks, as null).
 * The 64-bit schema hash is a hex string: JSON readers lose integers above
 * 2^53.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "tool.h"

/* -n: enumerators as numbers, in the text and in the JSON. */
static bool numeric_enums;
static struct tool_format value_format;

/* pbusd's pid as the segment records it; 0 if unknown. */
static long owner_pid(const struct pbus_table *table)
{
	int pid = pbus_table_owner_pid(table);

	return pid > 0 ? pid : 0;
}

static const char *flag_names[] = {"readonly", "persistent", "noread", "nosubscriptions"};

/* --- JSON ---------------------------------------------------------------- */

static void json_key(const char *key)
{
	printf("\"%s\": ", key); /* keys are ours: nothing to escape */
}

static void json_text(const char *text)
{
	tool_json_string(stdout, text, strlen(text));
}

static void json_number(unsigned type, union pbus_number number)
{
	char text[64];
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;

	if ((element == PBUS_TYPE_FLOAT || element == PBUS_TYPE_DOUBLE) && !isfinite(number.d)) {
		fputs("null", stdout);
		return;
	}
	describe_number(type, number, text, sizeof(text));
	fputs(text, stdout);
}

static void json_header(const struct pbus_table *table)
{
	unsigned major = 0, minor = 0;
	const char *interface = pbus_table_interface(table, &major, &minor);
	int state = pbus_table_state(table);
	char version[32];

	fputs("  ", stdout);
	json_key("instance");
	json_text(pbus_table_instance(table));
	fputs(",\n  ", stdout);
	json_key("interface");
	json_text(interface ? interface : "");
	fputs(",\n  ", stdout);
	snprintf(version, sizeof(version), "%u.%u", major, minor);
	json_key("version");
	json_text(version);
	printf(",\n  \"version_major\": %u,\n  \"version_minor\": %u", major, minor);
	printf(",\n  \"schema_hash\": \"%016llx\"",
	       (unsigned long long)pbus_table_schema_hash(table));
	printf(",\n  \"state\": \"%s\"", tool_state_name(state));
	printf(",\n  \"owner_pid\": %ld", owner_pid(table));
	printf(",\n  \"param_count\": %u", pbus_table_param_count(table));
}

static void json_param(const struct pbus_view *view, const struct pbus_param *param)
{
	struct pbus_param_info info;
	struct tool_value value;
	bool first = true;

	pbus_param_describe(param, &info);
	printf("    {\"index\": %u, ", info.index);
	json_key("name");
	json_text(info.name);
	printf(", \"type\": \"%s\", ", pbus_type_name(info.type));
	json_key("unit");
	json_text(info.unit);
	fputs(", \"flags\": [", stdout);
	for (unsigned i = 0; i < 4; i++)
		if (info.flags & (1u << i)) {
			printf("%s\"%s\"", first ? "" : ", ", flag_names[i]);
			first = false;
		}
	printf("], \"class\": \"%s\", ", pbus_update_class_name(info.update_class));
	json_key("group");
	json_text(info.group);
	fputs(", ", stdout);
	json_key("description");
	json_text(info.description);
	printf(", \"size\": %u", info.value_size);
	if (info.type & PBUS_TYPE_ARRAY_FLAG)
		printf(", \"count\": %u", info.element_size ? info.value_size / info.element_size : 0);
	fputs(", \"min\": ", stdout);
	if (info.flags & PBUS_PARAM_HAS_MIN)
		json_number(info.type, info.min);
	else
		fputs("null", stdout);
	fputs(", \"max\": ", stdout);
	if (info.flags & PBUS_PARAM_HAS_MAX)
		json_number(info.type, info.max);
	else
		fputs("null", stdout);
	fputs(", \"step\": ", stdout);
	if (info.flags & PBUS_PARAM_HAS_STEP)
		json_number(info.type, info.step);
	else
		fputs("null", stdout);
	fputs(", \"default\": ", stdout);
	if (info.flags & PBUS_PARAM_HAS_DEFAULT)
		tool_json_value_numeric(stdout, view, info.index, info.default_value,
					info.default_length, numeric_enums);
	else
		fputs("null", stdout);
	if ((info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG) == PBUS_TYPE_ENUM) {
		const char *label;
		int32_t number;

		fputs(", \"enumerators\": [", stdout);
		for (uint32_t i = 0; pbus_param_enumerator(param, i, &label, &number) == 0; i++) {
			printf("%s{\"label\": ", i ? ", " : "");
			json_text(label);
			printf(", \"value\": %d}", (int)number);
		}
		fputc(']', stdout);
	}
	if (info.flags & PBUS_PARAM_NOREAD) {
		fputs(", \"value\": null, \"status\": null, \"timestamp_ns\": null, \"seq\": null}",
		      stdout);
		return;
	}
	fputs(", \"value\": ", stdout);
	if (tool_value_read(param, &value) < 0) {
		fputs("null, \"status\": \"error\", \"timestamp_ns\": null, \"seq\": null}", stdout);
	} else {
		tool_json_value_numeric(stdout, view, info.index, value.data, value.sample.length,
					numeric_enums);
		printf(", \"status\": \"%s\", \"timestamp_ns\": %llu, \"seq\": %llu}",
		       pbus_status_name((unsigned)value.status),
		       (unsigned long long)value.sample.timestamp_ns,
		       (unsigned long long)value.sample.seq);
	}
	tool_value_clear(&value);
}

static void dump_json(const struct pbus_table *table)
{
	uint32_t count = pbus_table_param_count(table);

	fputs("{\n", stdout);
	json_header(table);
	fputs(",\n  \"parameters\": [", stdout);
	for (uint32_t i = 0; i < count; i++) {
		const struct pbus_param *param;

		if (pbus_table_param(table, i, &param) < 0)
			continue;
		fputs(i ? ",\n" : "\n", stdout);
		json_param(pbus_table_view(table), param);
	}
	fputs(count ? "\n  ]\n}\n" : "]\n}\n", stdout);
}

/* --- Text ---------------------------------------------------------------- */

static void text_header(const struct pbus_table *table)
{
	unsigned major = 0, minor = 0;
	const char *interface = pbus_table_interface(table, &major, &minor);
	long pid = owner_pid(table);

	printf("instance:    %s\n", pbus_table_instance(table));
	printf("interface:   %s %u.%u\n", interface ? interface : "?", major, minor);
	printf("schema hash: %016llx\n", (unsigned long long)pbus_table_schema_hash(table));
	printf("state:       %s\n", tool_state_name(pbus_table_state(table)));
	if (pid > 0)
		printf("owner pid:   %ld\n", pid);
	else
		printf("owner pid:   unknown\n");
	printf("parameters:  %u\n", pbus_table_param_count(table));
}

static void text_param(const struct pbus_view *view, const struct pbus_param *param)
{
	struct pbus_param_info info;
	struct tool_value value;
	char buf[512], time_text[64];

	pbus_param_describe(param, &info);
	printf("\n[%u] %s: %s", info.index, info.name, pbus_type_name(info.type));
	if (info.type == PBUS_TYPE_STRING || info.type == PBUS_TYPE_BYTES)
		printf(" (at most %u bytes)", info.value_size);
	else if (info.type & PBUS_TYPE_ARRAY_FLAG)
		printf(" (at most %u elements)",
		       info.element_size ? info.value_size / info.element_size : 0);
	if (*info.unit)
		printf(", %s", info.unit);
	fputc('\n', stdout);
	if (info.flags & PBUS_PARAM_NOREAD) {
		printf("    value    (not readable)\n");
	} else if (tool_value_read(param, &value) >= 0) {
		char *text = tool_format_value(&value_format, view, info.index, value.data,
					       value.sample.length);

		tool_time_text(value.sample.timestamp_ns, time_text, sizeof(time_text));
		printf("    value    ");
		tool_print_escaped(stdout, text ? text : "");
		printf("  (%s, %s, seq %llu)\n", pbus_status_name((unsigned)value.status),
		       time_text, (unsigned long long)value.sample.seq);
		free(text);
		tool_value_clear(&value);
	} else {
		printf("    value    (%s)\n", pbus_strerror(value.status));
		tool_value_clear(&value);
	}
	tool_flags_text(info.flags & (PBUS_PARAM_READONLY | PBUS_PARAM_PERSISTENT |
				      PBUS_PARAM_NOREAD | PBUS_PARAM_NOSUBSCRIPTIONS),
			buf, sizeof(buf));
	printf("    flags    %s; class %s; write group %s\n", buf,
	       pbus_update_class_name(info.update_class), *info.group ? info.group : "-");
	if (info.flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX | PBUS_PARAM_HAS_STEP)) {
		printf("    limits   ");
		if (info.flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX)) {
			describe_limits(&info, buf, sizeof(buf));
			fputs(buf, stdout);
		}
		if (info.flags & PBUS_PARAM_HAS_STEP) {
			describe_number(info.type, info.step, buf, sizeof(buf));
			printf("%sstep %s", (info.flags & (PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX))
						    ? ", " : "", buf);
		}
		fputc('\n', stdout);
	}
	if (info.flags & PBUS_PARAM_HAS_DEFAULT) {
		char *text = tool_format_value(&value_format, view, info.index, info.default_value,
					       info.default_length);

		printf("    default  ");
		tool_print_escaped(stdout, text && *text ? text : "\"\"");
		fputc('\n', stdout);
		free(text);
	}
	if ((info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG) == PBUS_TYPE_ENUM) {
		const char *label;
		int32_t number;

		printf("    enum    ");
		for (uint32_t i = 0; pbus_param_enumerator(param, i, &label, &number) == 0; i++)
			printf(" %s=%d", label, (int)number);
		fputc('\n', stdout);
	}
	if (*info.description) {
		printf("    desc     ");
		tool_print_escaped(stdout, info.description);
		fputc('\n', stdout);
	}
}

static void dump_text(const struct pbus_table *table)
{
	uint32_t count = pbus_table_param_count(table);

	text_header(table);
	for (uint32_t i = 0; i < count; i++) {
		const struct pbus_param *param;

		if (pbus_table_param(table, i, &param) == 0)
			text_param(pbus_table_view(table), param);
	}
}

/* --- Commands ------------------------------------------------------------ */

/* dump and info share their options: --json and the common ones. Returns
 * -1 to go on, else the exit status. */
static int parse(struct tool_context *context, const struct tool_command *command, int argc,
		 char **argv, bool *ret_json)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"json", no_argument, NULL, 'j'},
		{"numeric", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	bool dump = command == &tool_command_dump;
	int status, option;

	*ret_json = false;
	/* -n (numeric enumerators) is dump's; info shows no values. */
	while ((option = tool_next_option(context, command, argc, argv,
					  dump ? ":" TOOL_COMMON_SHORT_OPTIONS "jn"
					       : ":" TOOL_COMMON_SHORT_OPTIONS "j",
					  options, &status))) {
		if (option == 'j')
			*ret_json = true;
		else if (option == 'n' && dump)
			numeric_enums = value_format.numeric_enums = true;
		else if (option == 'n')
			return tool_usage_error(command, "unknown option '--numeric'");
	}
	if (status >= 0)
		return status;
	if (optind < argc)
		return tool_usage_error(command, "unexpected argument '%s'", argv[optind]);
	return -1;
}

static int run_dump(struct tool_context *context, int argc, char **argv)
{
	struct pbus_table *table;
	bool json;
	int status = parse(context, &tool_command_dump, argc, argv, &json);

	if (status >= 0)
		return status;
	status = tool_open(context, PBUS_OPEN_READ, &table);
	if (status != TOOL_EXIT_OK)
		return status;
	if (json)
		dump_json(table);
	else
		dump_text(table);
	pbus_table_close(table);
	return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}

static int run_info(struct tool_context *context, int argc, char **argv)
{
	struct pbus_table *table;
	bool json;
	int status = parse(context, &tool_command_info, argc, argv, &json);

	if (status >= 0)
		return status;
	status = tool_open(context, PBUS_OPEN_READ, &table);
	if (status != TOOL_EXIT_OK)
		return status;
	if (json) {
		fputs("{\n", stdout);
		json_header(table);
		fputs("\n}\n", stdout);
	} else {
		text_header(table);
	}
	pbus_table_close(table);
	return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}

const struct tool_command tool_command_dump = {
	.name = "dump",
	.summary = "print the whole instance: schema and values",
	.help = "Usage: pbus [-i NAME] dump [--json] [--numeric]\n"
		"\n"
		"Print the instance (name, interface and version, schema hash, state,\n"
		"owner pid) and every parameter with its schema (type, unit, flags,\n"
		"update class, limits, step, default, enumerators, description) and its\n"
		"current value, status, timestamp and version (seq).\n"
		"\n"
		"Options:\n"
		"  -j, --json           one JSON document (see docs/cli.md for its keys)\n"
		"  -n, --numeric        enumerators (values and defaults) as numbers\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 dump\n"
		"  pbus -i psu1 dump --json > psu1.json\n"
		"  pbus -i psu1 dump -n --json\n"
		TOOL_HELP_SEE("pbus-dump(1)"),
	.run = run_dump,
};

const struct tool_command tool_command_info = {
	.name = "info",
	.summary = "show the instance: interface, schema hash, state, owner",
	.help = "Usage: pbus [-i NAME] info [--json]\n"
		"\n"
		"Show the instance, its interface and version, schema hash, state\n"
		"(live: pbusd owns it; orphaned: pbusd died and the values are stale;\n"
		"closed/replaced: pbusd stopped or restarted) and pbusd's pid.\n"
		"\n"
		"Options:\n"
		"  -j, --json           the same as a JSON object\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 info\n"
		"  PBUS_INSTANCE=psu1 pbus info --json\n"
		TOOL_HELP_SEE("pbus-info(1)"),
	.run = run_info,
};
