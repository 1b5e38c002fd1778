/* SPDX-License-Identifier: MIT */
/*
 * get-set.c: `pbus get` and `pbus set`.
 *
 * `set` is all-or-nothing: every NAME=VALUE is looked up, checked against
 * the schema and parsed before anything is written, then the whole batch
 * goes out at once, and whoever writes checks again (what was true at parse
 * time need not be true now) and writes nothing if any write is refused.
 *
 * By default the batch goes to pbusd over its socket (pbus_client_set()):
 * pbusd decides who may write what from the caller's credentials, and
 * answers only once persistent values are on disk (and, with --applied,
 * once the hardware bindings applied the values). `set --direct` writes
 * the segment itself with pbus_table_write_many(), as before the server
 * existed: the table opened with PBUS_OPEN_WRITE, never as provider, so
 * read-only parameters stay the instrument's either way. Both go through
 * one source (source.h): the same lookup, checks, parsing and words, from
 * the same schema view; only what can go wrong on the socket alone (a lost
 * connection, a failed save) has words of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "source.h"
#include "tool.h"

enum { WAIT_SAVED_TIMEOUT_MS = 5000 };
/* Through pbusd: longer than pbusd waits for a save before it answers EIO
 * (10 s), so that a slow disk is reported as such, not as a timeout. */
enum { SERVER_TIMEOUT_MS = 15000 };
enum { ECHO_LIMIT = 40 }; /* bytes of a value repeated in an error message */

/* --- get ----------------------------------------------------------------- */

static void print_json_entry(const struct tool_format *f, const struct pbus_view *view,
			     uint32_t index, const struct tool_value *value)
{
	struct pbus_param_info info;
	char time_text[64];

	pbus_view_describe(view, index, &info);
	tool_json_string(stdout, info.name, strlen(info.name));
	fputs(": {\"value\": ", stdout);
	tool_json_value_numeric(stdout, view, index, value->data, value->sample.length,
				f->numeric_enums);
	fputs(", \"unit\": ", stdout);
	tool_json_string(stdout, info.unit, strlen(info.unit));
	tool_time_text(value->sample.timestamp_ns, time_text, sizeof(time_text));
	printf(", \"status\": \"%s\", \"timestamp_ns\": %llu, \"time\": \"%s\", \"seq\": %llu}",
	       pbus_status_name((unsigned)value->status),
	       (unsigned long long)value->sample.timestamp_ns, time_text,
	       (unsigned long long)value->sample.seq);
}

static void print_plain_entry(const struct tool_format *f, const struct pbus_view *view,
			      uint32_t index, const struct tool_value *value, bool verbose)
{
	char *text = tool_format_value(f, view, index, value->data, value->sample.length);
	struct pbus_param_info info;
	char time_text[160], field[256];
	bool first = true;

	if (f->time != TOOL_TIME_NONE)
		tool_format_time(f, value->sample.timestamp_ns, time_text, sizeof(time_text));
	else
		tool_time_text(value->sample.timestamp_ns, time_text, sizeof(time_text));
	if (!verbose) {
		/* [TIME] VALUE: -T changes nothing, the value is all there is. */
		if (f->time != TOOL_TIME_NONE)
			tool_format_field(f, stdout, &first, time_text, false);
		tool_format_field(f, stdout, &first, text ? text : "", true);
		fputc('\n', stdout);
		free(text);
		return;
	}
	pbus_view_describe(view, index, &info);
	printf("%s=", info.name);
	tool_print_escaped(stdout, text ? text : "");
	first = false;
	if (*info.unit)
		tool_format_field(f, stdout, &first, info.unit, true);
	snprintf(field, sizeof(field), "status=%s", pbus_status_name((unsigned)value->status));
	tool_format_field(f, stdout, &first, field, false);
	snprintf(field, sizeof(field), "time=%s", time_text);
	tool_format_field(f, stdout, &first, field, true);
	snprintf(field, sizeof(field), "seq=%llu", (unsigned long long)value->sample.seq);
	tool_format_field(f, stdout, &first, field, false);
	fputc('\n', stdout);
	free(text);
}

/* With -w: wait until the instance exists (pbusd starting), as caget
 * waits for a channel to connect. Other problems are left to the open
 * that follows, which names them. */
static int wait_for_instance(const struct tool_context *context, unsigned timeout_ms)
{
	int64_t deadline = tool_monotonic_ns() + (int64_t)timeout_ms * 1000000;
	struct pbus_table *table;
	char seconds[32];
	int r;

	if (!context->instance)
		return TOOL_EXIT_OK;
	while ((r = pbus_table_open(context->instance, PBUS_OPEN_READ, &table)) == -ENOENT) {
		if (tool_monotonic_ns() >= deadline) {
			tool_seconds_text(timeout_ms, seconds, sizeof(seconds));
			tool_error("get: instance '%s' not found within %s (is pbusd running?)",
				   context->instance, seconds);
			return TOOL_EXIT_TIMEOUT;
		}
		tool_sleep_ms(REOPEN_RETRY_MS);
	}
	if (r == 0)
		pbus_table_close(table);
	return TOOL_EXIT_OK;
}

static int run_get(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"verbose", no_argument, NULL, 'v'},
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 'w'},
		TOOL_FORMAT_NUMBER_LONG,
		TOOL_FORMAT_LINE_LONG,
		{NULL, 0, NULL, 0},
	};
	const struct pbus_view *view;
	struct tool_source *source;
	struct tool_format format;
	uint32_t *indexes;
	bool verbose = false, json = false;
	unsigned timeout_ms = 0;
	int option, status, count;

	tool_format_init(&format);
	while ((option = tool_next_option(context, &tool_command_get, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "vjw:" TOOL_FORMAT_NUMBER_SHORT
					  TOOL_FORMAT_LINE_SHORT, options, &status))) {
		if (option == 'v') {
			verbose = true;
		} else if (option == 'j') {
			json = true;
		} else if (option == 'w') {
			if (tool_timeout_option(&tool_command_get, optarg, &timeout_ms))
				return TOOL_EXIT_USAGE;
		} else if (tool_format_option(&tool_command_get, &format, option, optarg, &status) &&
			   status >= 0) {
			return status;
		}
	}
	if (status >= 0)
		return status;
	if (json && (format.number_given || format.line_given))
		return tool_usage_error(&tool_command_get, "--json has its own fields and numbers (of "
					"the formats only -n applies to it)");
	if (verbose && format.terse)
		return tool_usage_error(&tool_command_get, "--terse and --verbose exclude each other");
	count = argc - optind;
	if (count == 0)
		return tool_usage_error(&tool_command_get, "no parameter named");
	if (timeout_ms && (status = wait_for_instance(context, timeout_ms)) != TOOL_EXIT_OK)
		return status;
	status = tool_source_open_table(context, PBUS_OPEN_READ, &source);
	if (status != TOOL_EXIT_OK)
		return status;
	view = tool_source_view(source);
	indexes = calloc((size_t)count, sizeof(*indexes));
	if (!indexes) {
		tool_error("out of memory");
		tool_source_close(source);
		return TOOL_EXIT_FAILURE;
	}
	/* Resolve every name before printing anything. */
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct pbus_param_info info;

		if (tool_source_find(source, argv[optind + i], &indexes[i]) < 0) {
			status = TOOL_EXIT_FAILURE;
		} else if (pbus_view_describe(view, indexes[i], &info) == 0 &&
			   (info.flags & PBUS_PARAM_NOREAD)) {
			tool_error("get %s: parameter is not readable (noRead)", info.name);
			status = TOOL_EXIT_FAILURE;
		}
	}
	if (status == TOOL_EXIT_OK && json)
		fputs("{", stdout);
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct tool_value value;

		if (tool_source_read(source, indexes[i], &value) < 0) {
			struct pbus_param_info info;

			pbus_view_describe(view, indexes[i], &info);
			tool_error("get %s: %s", info.name, pbus_strerror(value.status));
			status = TOOL_EXIT_FAILURE;
		} else if (json) {
			fputs(i ? ",\n " : "\n ", stdout);
			print_json_entry(&format, view, indexes[i], &value);
		} else {
			print_plain_entry(&format, view, indexes[i], &value, verbose);
		}
		tool_value_clear(&value);
	}
	if (status == TOOL_EXIT_OK && json)
		fputs("\n}\n", stdout);
	free(indexes);
	tool_source_close(source);
	return status;
}

const struct tool_command tool_command_get = {
	.name = "get",
	.summary = "print the values of parameters",
	.help = "Usage: pbus [-i NAME] get [OPTIONS] NAME...\n"
		"\n"
		"Print the value of each named parameter, one per line, as 'pbus set'\n"
		"accepts it (control characters in strings are escaped as \\n, \\t, \\xNN).\n"
		"Nothing is printed if any name is unknown.\n"
		"\n"
		"Options:\n"
		"  -v, --verbose        NAME=VALUE [UNIT] status=STATUS time=TIME seq=N\n"
		"  -j, --json           one JSON object: {NAME: {value, unit, status,\n"
		"                       timestamp_ns, time, seq}, ...}\n"
		"  -w, --timeout SECONDS  wait up to SECONDS for the instance to appear\n"
		"                       (pbusd starting); then exit status 5\n"
		TOOL_FORMAT_NUMBER_HELP
		TOOL_FORMAT_LINE_HELP
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 printed, 1 unknown or unreadable parameter, 2 usage error,\n"
		"3 instance not found, 5 not found within -w SECONDS.\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 get voltage_setpoint mode\n"
		"  pbus -i psu1 get -t -f 3 measured_voltage\n"
		"  pbus -i psu1 get -w 10 -n --json mode\n"
		TOOL_HELP_SEE("pbus-get(1)"),
	.run = run_get,
};

/* --- set ----------------------------------------------------------------- */

struct assignment {
	char *name;        /* points into the argument, '=' replaced by NUL */
	const char *text;  /* the value's text */
	struct pbus_param_info info; /* of the parameter (info.index) */
	unsigned char *buf;
	size_t length;
};

/* At most ECHO_LIMIT bytes of @text, cut at a character boundary, with an
 * ellipsis if cut: errors repeat what was typed without flooding. */
static void echo_text(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);

	if (n <= ECHO_LIMIT) {
		snprintf(buf, size, "%s", text);
		return;
	}
	n = ECHO_LIMIT;
	while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
		n--;
	snprintf(buf, size, "%.*s\u2026", (int)n, text);
}

static int refuse(const struct tool_source *source, const struct assignment *a, int negative_errno)
{
	char problem[512], echo[64];

	switch (negative_errno) {
	case -EACCES:
		tool_error("set %s: parameter is read-only", a->name);
		return TOOL_EXIT_FAILURE;
	case -EPERM:
		/* pbusd's verdict from our credentials (docs/socket-protocol.md §6). */
		if (*a->info.group)
			tool_error("set %s: permission denied (only pbusd's user and group '%s' may write it)",
				   a->name, a->info.group);
		else
			tool_error("set %s: permission denied (only pbusd's user may write it)", a->name);
		return TOOL_EXIT_FAILURE;
	case -ESTALE:
		tool_error("set %s: instance closed or replaced (pbusd stopped or restarted)",
			   a->name);
		return TOOL_EXIT_NO_INSTANCE;
	case -EBUSY:
		/* A writer that holds the parameter and does not let go (a
		 * stopped process): the batch waited a second, then gave up whole. */
		tool_error("set: parameter '%s' is busy (another writer has held it for 1 s); "
			   "nothing was changed", a->name);
		return TOOL_EXIT_FAILURE;
	default:
		break;
	}
	describe_parse_error(tool_source_view(source), a->info.index, negative_errno, problem,
			      sizeof(problem));
	echo_text(a->text, echo, sizeof(echo));
	tool_error("set %s=%s: %s", a->name, echo, problem);
	return TOOL_EXIT_FAILURE;
}

/* Look one assignment's parameter up, refuse a read-only one, parse the
 * text against it. Prints the refusal. */
static int prepare(const struct tool_source *source, struct assignment *a)
{
	const struct pbus_view *view = tool_source_view(source);
	uint32_t index;
	int r;

	if (tool_source_find(source, a->name, &index) < 0)
		return TOOL_EXIT_FAILURE;
	pbus_view_describe(view, index, &a->info);
	if (a->info.flags & PBUS_PARAM_READONLY)
		return refuse(source, a, -EACCES);
	a->buf = malloc(a->info.value_size ? a->info.value_size : 1);
	if (!a->buf) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	r = pbus_view_parse(view, index, a->text, a->buf, a->info.value_size, &a->length);
	return r < 0 ? refuse(source, a, r) : TOOL_EXIT_OK;
}

/* --applied: a write that pbusd took but the hardware did not apply
 * (@r -EIO: it failed; -ETIMEDOUT: no word in time), its .seq non-zero.
 * Says so for each; false if there is none (@r means something else). */
static bool report_not_applied(const struct assignment *as, const struct pbus_write *writes, int count,
			       int r)
{
	bool any = false;

	for (int i = 0; i < count; i++) {
		if (writes[i].result != r || !writes[i].seq)
			continue;
		any = true;
		if (r == -EIO)
			tool_error("set %s: written, but the hardware failed to apply it (pbus-hwd: the "
				   "device is missing or failing; see pbusd's log)", as[i].name);
		else
			tool_error("set %s: written, but the hardware did not apply it in time (is "
				   "pbus-hwd running? pbusd --apply-timeout)", as[i].name);
	}
	return any;
}

/* The batch was refused (@r) and nothing was written: say which write and
 * why. */
static int report_refusal(const struct tool_source *source, const struct assignment *as,
			  const struct pbus_write *writes, int count, int r,
			  const struct tool_context *context, unsigned timeout_ms)
{
	char seconds[32];
	int which = -1;

	if ((r == -EIO || r == -ETIMEDOUT) && report_not_applied(as, writes, count, r))
		return TOOL_EXIT_FAILURE;

	/* The write the refusal names, else the first that went out. */
	for (int i = 0; i < count && which < 0; i++)
		if (writes[i].result == r)
			which = i;
	for (int i = 0; i < count && which < 0; i++)
		if (writes[i].result != TOOL_WRITE_SUPERSEDED)
			which = i;
	if (tool_source_is_server(source)) {
		switch (r) {
		case -EPERM:
		case -EACCES:
		case -EINVAL:
		case -ERANGE:
		case -EMSGSIZE:
		case -ENOENT:
		case -EBUSY:
			break;
		case -EIO:
			tool_error("set: pbusd wrote the values but could not save them (see its log)");
			return TOOL_EXIT_FAILURE;
		case -ENOTCONN:
			tool_error("set: the connection to pbusd was lost (pbusd stopped?); the values "
				   "may or may not have been written");
			return TOOL_EXIT_NO_INSTANCE;
		case -ESTALE:
			tool_error("set: instance '%s' was replaced by one with another schema",
				   context->instance);
			return TOOL_EXIT_NO_INSTANCE;
		case -ETIMEDOUT:
			tool_seconds_text(timeout_ms, seconds, sizeof(seconds));
			tool_error("set: pbusd did not answer within %s; the values may or may not "
				   "have been written", seconds);
			return TOOL_EXIT_TIMEOUT;
		default:
			tool_error("set: pbusd: %s", pbus_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
	}
	return refuse(source, &as[which < 0 ? 0 : which], r);
}

/* With --direct --wait-saved: wait until pbusd has saved the persistent
 * parameters written. (Through pbusd its answer comes after the save.) */
static int wait_until_saved(const struct tool_source *source, const struct assignment *as,
			    const struct pbus_write *writes, int count, unsigned timeout_ms)
{
	char seconds[32];

	for (int i = 0; i < count; i++) {
		const struct pbus_param *param;
		int r;

		if (!(as[i].info.flags & PBUS_PARAM_PERSISTENT))
			continue;
		pbus_table_param(tool_source_table(source), as[i].info.index, &param);
		r = pbus_param_wait_saved(param, writes[i].seq, (int64_t)timeout_ms * 1000000);
		if (r == -ETIMEDOUT) {
			tool_seconds_text(timeout_ms, seconds, sizeof(seconds));
			tool_error("set %s: written but not saved within %s (is pbusd saving?)",
				   as[i].name, seconds);
			return TOOL_EXIT_TIMEOUT;
		} else if (r == -ESTALE) {
			tool_error("set %s: written but the instance was closed or replaced before "
				   "it was saved", as[i].name);
			return TOOL_EXIT_NO_INSTANCE;
		} else if (r < 0) {
			tool_error("set %s: waiting for the save: %s", as[i].name, pbus_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
	}
	return TOOL_EXIT_OK;
}

/*
 * Write the assignments as one batch: to pbusd over its socket (the
 * default: pbusd judges the writer by its credentials, and its reply comes
 * after persistent values are saved, so --wait-saved is what always
 * happens), or with --direct into the segment ourselves, the table opened
 * for writing, never as provider.
 */
static int set_all(struct tool_context *context, struct assignment *as, int count, bool direct,
		   bool wait, bool applied, unsigned timeout_ms)
{
	struct tool_source *source = NULL;
	struct pbus_write *writes = NULL;
	int status, state, r;

	if (direct) {
		status = tool_source_open_table(context, PBUS_OPEN_WRITE, &source);
		/* Nobody would save what is written into a dead pbusd's segment, and
		 * a restarted pbusd replaces it: refuse rather than lose it. */
		if (status == TOOL_EXIT_OK &&
		    (state = pbus_table_state(tool_source_table(source))) != PBUS_TABLE_LIVE) {
			tool_error("instance '%s' is %s (pbusd is not running)", context->instance,
				   tool_state_name(state));
			status = TOOL_EXIT_NO_INSTANCE;
		}
	} else {
		if (!timeout_ms)
			timeout_ms = SERVER_TIMEOUT_MS;
		status = tool_source_connect(context, timeout_ms,
					     "'pbus set --direct' writes the segment itself", &source);
	}
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++)
		status = prepare(source, &as[i]);
	if (status == TOOL_EXIT_OK) {
		writes = calloc((size_t)count, sizeof(*writes));
		if (!writes) {
			tool_error("out of memory");
			status = TOOL_EXIT_FAILURE;
		}
	}
	if (status == TOOL_EXIT_OK) {
		for (int i = 0; i < count; i++) {
			writes[i].index = as[i].info.index;
			writes[i].status = PBUS_STATUS_OK;
			writes[i].value = as[i].buf;
			writes[i].length = as[i].length;
		}
		r = tool_source_write(source, writes, (size_t)count, applied ? PBUS_CLIENT_SET_APPLIED : 0);
		if (r < 0)
			status = report_refusal(source, as, writes, count, r, context, timeout_ms);
		else if (direct && wait)
			status = wait_until_saved(source, as, writes, count,
						  timeout_ms ? timeout_ms : WAIT_SAVED_TIMEOUT_MS);
	}
	free(writes);
	tool_source_close(source);
	return status;
}

static int run_set(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"wait-saved", no_argument, NULL, 'W'},
		{"direct", no_argument, NULL, 'D'},
		{"applied", no_argument, NULL, 'a'},
		{"timeout", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct assignment *as;
	bool wait_saved = false, direct = false, applied = false;
	unsigned timeout_ms = 0;
	int option, status, count;

	/* -w is the timeout, as in EPICS; --wait-saved has no letter (it had -w). */
	while ((option = tool_next_option(context, &tool_command_set, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "aw:", options, &status))) {
		if (option == 'w') {
			if (tool_timeout_option(&tool_command_set, optarg, &timeout_ms))
				return TOOL_EXIT_USAGE;
		} else if (option == 'W')
			wait_saved = true;
		else if (option == 'D')
			direct = true;
		else if (option == 'a')
			applied = true;
	}
	if (status >= 0)
		return status;
	if (direct && applied)
		return tool_usage_error(&tool_command_set, "--applied asks pbusd to wait for the hardware; "
					"--direct does not go through pbusd");
	count = argc - optind;
	if (count == 0)
		return tool_usage_error(&tool_command_set, "no NAME=VALUE given");
	as = calloc((size_t)count, sizeof(*as));
	if (!as) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	/* The syntax first: a malformed command line needs no instance. */
	status = TOOL_EXIT_OK;
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		char *arg = argv[optind + i], *eq = strchr(arg, '=');

		if (!eq || eq == arg) {
			status = tool_usage_error(&tool_command_set, "'%s' is not NAME=VALUE", arg);
			break;
		}
		*eq = 0;
		as[i].name = arg;
		as[i].text = eq + 1;
	}
	if (status == TOOL_EXIT_OK)
		status = set_all(context, as, count, direct, wait_saved, applied, timeout_ms);
	for (int i = 0; i < count; i++)
		free(as[i].buf);
	free(as);
	return status;
}

const struct tool_command tool_command_set = {
	.name = "set",
	.summary = "write parameters (all or nothing)",
	.help = "Usage: pbus [-i NAME] set [-w SECONDS] [--applied | --direct [--wait-saved]]\n"
		"                          NAME=VALUE...\n"
		"\n"
		"Write parameters. Every value is checked (name, access, type, limits,\n"
		"length, enumerator) before anything is written; if one is refused,\n"
		"none is written and one line on stderr names it and the problem.\n"
		"Read-only parameters belong to the instrument and cannot be set.\n"
		"\n"
		"The values go to pbusd over its socket as one batch; pbusd checks\n"
		"them again, decides from your user and groups whether you may write\n"
		"them, and answers once the persistent ones are saved on disk.\n"
		"\n"
		"Values: bool true/false (also 1/0, on/off); integers in decimal;\n"
		"float/double as decimal numbers (no hex: 0x10 is refused for every\n"
		"number); enum by label (or its number); string as text (quote it for\n"
		"the shell); bytes as hex (00ff); arrays as comma-separated elements\n"
		"(1.5,-2,3; an empty value is an empty array).\n"
		"\n"
		"Options:\n"
		"  -w, --timeout SECONDS  wait at most SECONDS for pbusd's answer (default\n"
		"                       15) or, with --direct --wait-saved, for the save\n"
		"                       (default 5); then exit status 5\n"
		"  -a, --applied        answer only once the hardware has the values: pbusd\n"
		"                       waits until pbus-hwd applied each parameter with an\n"
		"                       output binding (gpio-output, pwm-duty) to its device,\n"
		"                       and fails if it could not (or not within pbusd's\n"
		"                       --apply-timeout, 1 s by default); the values are\n"
		"                       written either way\n"
		"      --direct         write the shared-memory segment directly instead\n"
		"                       of asking pbusd (needs write access to it; for a\n"
		"                       pbusd without socket)\n"
		"      --wait-saved     with --direct: after writing, wait until pbusd has\n"
		"                       saved the persistent parameters among them\n"
		"                       (through pbusd this always happens)\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 written, 1 refused (nothing written) or, with --applied,\n"
		"written but not applied by the hardware, 2 usage error, 3 instance not\n"
		"found or pbusd not running, 5 no answer (or no save) within -w.\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 set voltage_setpoint=3.3 output_enable=true\n"
		"  pbus -i psu1 set -w 2 --applied output_enable=false\n"
		"  pbus -i psu1 set --direct --wait-saved ramp_ms=50\n"
		TOOL_HELP_SEE("pbus-set(1)"),
	.run = run_set,
};
