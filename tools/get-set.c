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
 * answers only once persistent values are on disk. `set --direct` writes
 * the segment itself with pbus_table_write_many(), as before the server
 * existed: the table opened with PBUS_OPEN_WRITE, never as provider, so
 * read-only parameters stay the instrument's either way. Both paths check
 * and word their refusals the same way, from the same schema.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

enum { WAIT_SAVED_TIMEOUT_MS = 5000 };
/* Through pbusd: longer than pbusd waits for a save before it answers EIO
 * (10 s), so that a slow disk is reported as such, not as a timeout. */
enum { SERVER_TIMEOUT_MS = 15000 };
enum { ECHO_LIMIT = 40 }; /* bytes of a value repeated in an error message */

/* --- get ----------------------------------------------------------------- */

static void print_json_entry(const struct pbus_view *view, const struct pbus_param *param,
			     const struct tool_value *value)
{
	struct pbus_param_info info;
	char time_text[64];

	pbus_param_describe(param, &info);
	tool_json_string(stdout, info.name, strlen(info.name));
	fputs(": {\"value\": ", stdout);
	tool_json_value(stdout, view, info.index, value->data, value->sample.length);
	fputs(", \"unit\": ", stdout);
	tool_json_string(stdout, info.unit, strlen(info.unit));
	tool_time_text(value->sample.timestamp_ns, time_text, sizeof(time_text));
	printf(", \"status\": \"%s\", \"timestamp_ns\": %llu, \"time\": \"%s\", \"seq\": %llu}",
	       pbus_status_name((unsigned)value->status),
	       (unsigned long long)value->sample.timestamp_ns, time_text,
	       (unsigned long long)value->sample.seq);
}

static void print_plain_entry(const struct pbus_view *view, const struct pbus_param *param,
			      const struct tool_value *value, bool verbose)
{
	struct pbus_param_info info;
	char *text, time_text[64];

	pbus_param_describe(param, &info);
	text = tool_value_text(view, info.index, value->data, value->sample.length);

	if (!verbose) {
		tool_print_escaped(stdout, text ? text : "");
		fputc('\n', stdout);
		free(text);
		return;
	}
	tool_time_text(value->sample.timestamp_ns, time_text, sizeof(time_text));
	printf("%s=", info.name);
	tool_print_escaped(stdout, text ? text : "");
	printf("%s%s status=%s time=%s seq=%llu\n", *info.unit ? " " : "", info.unit,
	       pbus_status_name((unsigned)value->status), time_text,
	       (unsigned long long)value->sample.seq);
	free(text);
}

static int run_get(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"verbose", no_argument, NULL, 'v'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	const struct pbus_param **params;
	struct pbus_table *table;
	bool verbose = false, json = false;
	int option, status, count;

	while ((option = tool_next_option(context, &tool_command_get, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "vj", options, &status))) {
		if (option == 'v')
			verbose = true;
		else if (option == 'j')
			json = true;
	}
	if (status >= 0)
		return status;
	count = argc - optind;
	if (count == 0)
		return tool_usage_error(&tool_command_get, "no parameter named");
	status = tool_open(context, PBUS_OPEN_READ, &table);
	if (status != TOOL_EXIT_OK)
		return status;
	params = calloc((size_t)count, sizeof(*params));
	if (!params) {
		tool_error("out of memory");
		pbus_table_close(table);
		return TOOL_EXIT_FAILURE;
	}
	/* Resolve every name before printing anything. */
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct pbus_param_info info;

		if (tool_find(table, argv[optind + i], &params[i]) < 0) {
			status = TOOL_EXIT_FAILURE;
		} else if (pbus_param_describe(params[i], &info) == 0 && (info.flags & PBUS_PARAM_NOREAD)) {
			tool_error("get %s: parameter is not readable (noRead)", info.name);
			status = TOOL_EXIT_FAILURE;
		}
	}
	if (status == TOOL_EXIT_OK && json)
		fputs("{", stdout);
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct tool_value value;

		if (tool_value_read(params[i], &value) < 0) {
			tool_error("get %s: %s", pbus_param_name(params[i]), pbus_strerror(value.status));
			status = TOOL_EXIT_FAILURE;
		} else if (json) {
			fputs(i ? ",\n " : "\n ", stdout);
			print_json_entry(pbus_table_view(table), params[i], &value);
		} else {
			print_plain_entry(pbus_table_view(table), params[i], &value, verbose);
		}
		tool_value_clear(&value);
	}
	if (status == TOOL_EXIT_OK && json)
		fputs("\n}\n", stdout);
	free(params);
	pbus_table_close(table);
	return status;
}

const struct tool_command tool_command_get = {
	.name = "get",
	.summary = "print the values of parameters",
	.help = "Usage: pbus [-i NAME] get [--verbose|--json] NAME...\n"
		"\n"
		"Print the value of each named parameter, one per line, as 'pbus set'\n"
		"accepts it (control characters in strings are escaped as \\n, \\t, \\xNN).\n"
		"Nothing is printed if any name is unknown.\n"
		"\n"
		"Options:\n"
		"  -v, --verbose        NAME=VALUE [UNIT] status=STATUS time=TIME seq=N\n"
		"  -j, --json           one JSON object: {NAME: {value, unit, status,\n"
		"                       timestamp_ns, time, seq}, ...}\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n",
	.run = run_get,
};

/* --- set ----------------------------------------------------------------- */

struct assignment {
	char *name;        /* points into the argument, '=' replaced by NUL */
	const char *text;  /* the value's text */
	/* The schema view (the table's or the client's); direct: the parameter. */
	const struct pbus_view *view;
	const struct pbus_param *param;
	struct pbus_param_info info;
	unsigned char *buf;
	size_t length;
	bool superseded;   /* the same name comes again later: only that one goes */
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

static int refuse(const struct assignment *a, int negative_errno)
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
	tool_parse_error_text(a->view, a->info.index, negative_errno, problem, sizeof(problem));
	echo_text(a->text, echo, sizeof(echo));
	tool_error("set %s=%s: %s", a->name, echo, problem);
	return TOOL_EXIT_FAILURE;
}

/* Check and parse one assignment whose info is filled: read-only refused,
 * the text parsed against the parameter. Prints the refusal. */
static int prepare(struct assignment *a)
{
	int r;

	if (a->info.flags & PBUS_PARAM_READONLY)
		return refuse(a, -EACCES);
	a->buf = malloc(a->info.value_size ? a->info.value_size : 1);
	if (!a->buf) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	r = pbus_view_parse(a->view, a->info.index, a->text, a->buf, a->info.value_size, &a->length);
	return r < 0 ? refuse(a, r) : TOOL_EXIT_OK;
}

static struct pbus_write *make_writes(const struct assignment *as, int count)
{
	struct pbus_write *writes = calloc((size_t)count, sizeof(*writes));

	if (!writes) {
		tool_error("out of memory");
		return NULL;
	}
	for (int i = 0; i < count; i++) {
		writes[i].index = as[i].info.index;
		writes[i].status = PBUS_STATUS_OK;
		writes[i].value = as[i].buf;
		writes[i].length = as[i].length;
	}
	return writes;
}

static int write_direct(struct pbus_table *table, struct assignment *as, int count, bool wait_saved)
{
	struct pbus_write *writes = make_writes(as, count);
	int r, status = TOOL_EXIT_OK;

	if (!writes)
		return TOOL_EXIT_FAILURE;
	r = pbus_table_write_many(table, writes, (size_t)count);
	if (r < 0) {
		/* Name the write that was refused; nothing was written. */
		int which = 0;

		for (int i = 0; i < count; i++)
			if (writes[i].result < 0) {
				which = i;
				r = writes[i].result;
				break;
			}
		status = refuse(&as[which], r);
	}
	for (int i = 0; i < count && status == TOOL_EXIT_OK && wait_saved; i++) {
		if (!(as[i].info.flags & PBUS_PARAM_PERSISTENT))
			continue;
		r = pbus_param_wait_saved(as[i].param, writes[i].seq,
					  (int64_t)WAIT_SAVED_TIMEOUT_MS * 1000000);
		if (r == -ETIMEDOUT) {
			tool_error("set %s: written but not saved within %d s (is pbusd saving?)",
				   as[i].name, WAIT_SAVED_TIMEOUT_MS / 1000);
			status = TOOL_EXIT_FAILURE;
		} else if (r == -ESTALE) {
			tool_error("set %s: written but the instance was closed or replaced before "
				   "it was saved", as[i].name);
			status = TOOL_EXIT_NO_INSTANCE;
		} else if (r < 0) {
			tool_error("set %s: waiting for the save: %s", as[i].name, pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
		}
	}
	free(writes);
	return status;
}

/* `set --direct`: write the segment ourselves. */
static int set_direct(struct tool_context *context, struct assignment *as, int count,
		      bool wait_saved)
{
	struct pbus_table *table = NULL;
	int status, state;

	status = tool_open(context, PBUS_OPEN_WRITE, &table);
	if (status == TOOL_EXIT_OK) {
		/* Nobody would save what is written into a dead pbusd's segment, and
		 * a restarted pbusd replaces it: refuse rather than lose it. */
		state = pbus_table_state(table);
		if (state != PBUS_TABLE_LIVE) {
			tool_error("instance '%s' is %s (pbusd is not running)", context->instance,
				   tool_state_name(state));
			status = TOOL_EXIT_NO_INSTANCE;
		}
	}
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct assignment *a = &as[i];

		if (tool_find(table, a->name, &a->param) < 0) {
			status = TOOL_EXIT_FAILURE;
			break;
		}
		a->view = pbus_table_view(table);
		pbus_param_describe(a->param, &a->info);
		status = prepare(a);
	}
	if (status == TOOL_EXIT_OK)
		status = write_direct(table, as, count, wait_saved);
	pbus_table_close(table);
	return status;
}

/* The default: one SET request to pbusd. Its reply comes after persistent
 * values are saved, so --wait-saved is what always happens. */
static int set_through_server(struct tool_context *context, struct assignment *as, int count)
{
	struct pbus_client *client = NULL;
	struct pbus_write *writes = NULL;
	struct assignment **sent = NULL;
	int status, n = 0, r;

	status = tool_connect(context, SERVER_TIMEOUT_MS,
			      "'pbus set --direct' writes the segment itself", &client);
	for (int i = 0; i < count && status == TOOL_EXIT_OK; i++) {
		struct assignment *a = &as[i];
		uint32_t index;

		a->view = pbus_client_view(client);
		if (pbus_view_find(a->view, a->name, &index) < 0) {
			tool_error("unknown parameter '%s'", a->name);
			status = TOOL_EXIT_FAILURE;
			break;
		}
		pbus_view_describe(a->view, index, &a->info);
		status = prepare(a);
		/* The protocol refuses an index twice in one batch: the last
		 * value of a name is the one that stays, so only it is sent. */
		for (int k = 0; k < i && status == TOOL_EXIT_OK; k++)
			if (as[k].info.index == index)
				as[k].superseded = true;
	}
	if (status == TOOL_EXIT_OK) {
		sent = calloc((size_t)count, sizeof(*sent));
		writes = calloc((size_t)count, sizeof(*writes));
		if (!sent || !writes) {
			tool_error("out of memory");
			status = TOOL_EXIT_FAILURE;
		}
	}
	if (status == TOOL_EXIT_OK) {
		for (int i = 0; i < count; i++)
			if (!as[i].superseded) {
				sent[n] = &as[i];
				writes[n].index = as[i].info.index;
				writes[n].value = as[i].buf;
				writes[n].length = as[i].length;
				n++;
			}
		r = pbus_client_set(client, writes, (size_t)n);
		if (r < 0) {
			int which = -1;

			for (int i = 0; i < n && which < 0; i++)
				if (writes[i].result < 0 && writes[i].result == r)
					which = i;
			switch (r) {
			case -EPERM:
			case -EACCES:
			case -EINVAL:
			case -ERANGE:
			case -EMSGSIZE:
			case -ENOENT:
			case -EBUSY:
				status = refuse(sent[which < 0 ? 0 : which], r);
				break;
			case -EIO:
				tool_error("set: pbusd wrote the values but could not save them "
					   "(see its log)");
				status = TOOL_EXIT_FAILURE;
				break;
			case -ENOTCONN:
				tool_error("set: the connection to pbusd was lost (pbusd stopped?); the "
					   "values may or may not have been written");
				status = TOOL_EXIT_NO_INSTANCE;
				break;
			case -ESTALE:
				tool_error("set: instance '%s' was replaced by one with another schema",
					   context->instance);
				status = TOOL_EXIT_NO_INSTANCE;
				break;
			case -ETIMEDOUT:
				tool_error("set: pbusd did not answer within %d s; the values may or "
					   "may not have been written", SERVER_TIMEOUT_MS / 1000);
				status = TOOL_EXIT_FAILURE;
				break;
			default:
				tool_error("set: pbusd: %s", pbus_strerror(r));
				status = TOOL_EXIT_FAILURE;
			}
		}
	}
	free(sent);
	free(writes);
	pbus_client_close(client);
	return status;
}

static int run_set(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"wait-saved", no_argument, NULL, 'w'},
		{"direct", no_argument, NULL, 'D'},
		{NULL, 0, NULL, 0},
	};
	struct assignment *as;
	bool wait_saved = false, direct = false;
	int option, status, count;

	while ((option = tool_next_option(context, &tool_command_set, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "w", options, &status))) {
		if (option == 'w')
			wait_saved = true;
		else if (option == 'D')
			direct = true;
	}
	if (status >= 0)
		return status;
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
		status = direct ? set_direct(context, as, count, wait_saved)
				: set_through_server(context, as, count);
	for (int i = 0; i < count; i++)
		free(as[i].buf);
	free(as);
	return status;
}

const struct tool_command tool_command_set = {
	.name = "set",
	.summary = "write parameters (all or nothing)",
	.help = "Usage: pbus [-i NAME] set [--direct [--wait-saved]] NAME=VALUE...\n"
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
		"float/double as decimal numbers; enum by label (or its number);\n"
		"string as text (quote it for the shell); bytes as hex (00ff);\n"
		"arrays as comma-separated elements (1.5,-2,3; an empty value is an\n"
		"empty array).\n"
		"\n"
		"Options:\n"
		"      --direct         write the shared-memory segment directly instead\n"
		"                       of asking pbusd (needs write access to it; for a\n"
		"                       pbusd without socket)\n"
		"  -w, --wait-saved     with --direct: after writing, wait (at most 5 s)\n"
		"                       until pbusd has saved the persistent parameters\n"
		"                       among them (through pbusd this always happens)\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 written, 1 refused (nothing written), 2 usage error,\n"
		"3 instance not found or pbusd not running.\n",
	.run = run_set,
};
