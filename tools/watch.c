/* SPDX-License-Identifier: MIT */
/*
 * watch.c: `pbus watch`, a live view of parameters: its options, what it
 * watches, the loop, and the line output for scripts. The values and their
 * changes come from a source (source.h): the table, or with --server a
 * subscription to pbusd; the terminal view is drawn by watch-terminal.c.
 *
 * On a terminal the block of lines is redrawn at most once per --interval
 * and once a second for the ages. When stdout is not a terminal it prints
 * one line per change, "name=value status", for scripts and tests.
 *
 * The table's changes come from pbus_watch_wait(), which sleeps on a futex
 * until a watched parameter is written: nothing is polled. The waits still
 * carry a timeout of at most a second, because a signal that arrives after
 * the stop flag was checked but before the sleep begins would otherwise be
 * noticed only at the next change; waking once a second to look at a flag
 * costs nothing. Through pbusd, pbusd coalesces the notifications (on a
 * terminal it sends at most one per --interval).
 *
 * When pbusd stops or restarts, the watch says so on stderr and waits for
 * the instance to come back for up to REOPEN_TIMEOUT_MS: it reopens the
 * table (TOOL_SOURCE_GONE), or the client reconnects by itself
 * (TOOL_CHANGE_LOST, then TOOL_CHANGE_BACK) while the loop goes on.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "watch.h"

enum { DEFAULT_INTERVAL_MS = 100, AGE_REFRESH_MS = 1000, SIGNAL_CHECK_MS = 1000 };
#define NS_PER_MS INT64_C(1000000)

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t resized;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

static void on_resize(int signal_number)
{
	(void)signal_number;
	resized = 1;
}

/* --- Line output (not a terminal) ---------------------------------------- */

/* "name=value status" of parameter @index, as the source has it now;
 * nothing if it cannot be read. */
static void print_value(const struct watch *w, uint32_t index)
{
	const struct tool_format *f = w->options->format;
	const struct pbus_view *view = tool_source_view(w->source);
	struct pbus_param_info info;
	struct tool_value value;
	char time_text[160];
	bool first = true;
	char *text;

	if (tool_source_read(w->source, index, &value) < 0) {
		tool_value_clear(&value);
		return;
	}
	text = tool_format_value(f, view, index, value.data, value.sample.length);
	pbus_view_describe(view, index, &info);
	/* [TIME] NAME=VALUE STATUS, or with --terse [TIME] NAME VALUE. */
	if (f->time != TOOL_TIME_NONE) {
		tool_format_time(f, value.sample.timestamp_ns, time_text, sizeof(time_text));
		tool_format_field(f, stdout, &first, time_text, true);
	}
	if (f->terse) {
		tool_format_field(f, stdout, &first, info.name, false);
		tool_format_field(f, stdout, &first, text ? text : "", true);
	} else {
		tool_format_field(f, stdout, &first, info.name, false);
		fputc('=', stdout);
		tool_print_escaped(stdout, text ? text : "");
		tool_format_field(f, stdout, &first, pbus_status_name((unsigned)value.status), false);
	}
	fputc('\n', stdout);
	free(text);
	tool_value_clear(&value);
}

static void print_all(const struct watch *w)
{
	for (size_t i = 0; i < w->count; i++)
		print_value(w, w->indexes[i]);
}

/* --- What to watch ------------------------------------------------------- */

static void on_change(const struct tool_change *change, void *userdata);

/* Resolve the names (or every parameter that can be watched: readable, and
 * through pbusd also subscribable) and start watching them. Prints its own
 * errors; returns an exit status. */
static int resolve(struct watch *w)
{
	const struct watch_options *o = w->options;
	const struct pbus_view *view = tool_source_view(w->source);
	bool server = tool_source_is_server(w->source);
	unsigned hidden = PBUS_PARAM_NOREAD | (server ? PBUS_PARAM_NOSUBSCRIPTIONS : 0u);
	uint32_t total = pbus_view_count(view);
	size_t n = 0;

	w->indexes = calloc(o->name_count ? (size_t)o->name_count : (total ? total : 1),
			    sizeof(*w->indexes));
	if (!w->indexes) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	for (int k = 0; k < o->name_count; k++) {
		struct pbus_param_info info;
		uint32_t index;

		if (tool_source_find(w->source, o->names[k], &index) < 0)
			return TOOL_EXIT_FAILURE;
		pbus_view_describe(view, index, &info);
		if (info.flags & PBUS_PARAM_NOREAD) {
			tool_error("watch %s: parameter is not readable (noRead)", info.name);
			return TOOL_EXIT_FAILURE;
		}
		if (info.flags & hidden & PBUS_PARAM_NOSUBSCRIPTIONS) {
			tool_error("watch %s: parameter cannot be subscribed (noSubscriptions)",
				   info.name);
			return TOOL_EXIT_FAILURE;
		}
		w->indexes[n++] = index;
	}
	for (uint32_t i = 0; !o->name_count && i < total; i++) {
		struct pbus_param_info info;

		if (pbus_view_describe(view, i, &info) == 0 && !(info.flags & hidden))
			w->indexes[n++] = i;
	}
	if (n == 0) {
		tool_error(server ? "watch: the instance has no parameter that may be subscribed"
				  : "watch: the instance has no readable parameter");
		return TOOL_EXIT_FAILURE;
	}
	w->count = n;
	/* On a terminal pbusd need not send more often than we draw. */
	return tool_source_watch(w->source, w->indexes, n, !o->name_count && n == total,
				 o->terminal ? (uint32_t)(o->interval_ns / 1000) : 0, on_change, w);
}

/* --- Changes ------------------------------------------------------------- */

/* The instance went away: give the cursor back and say so (@what names the
 * instance and what happened, @then what the watch does about it). The
 * block is drawn anew when it is back. */
static void announce_lost(struct watch *w, const char *what, const char *then)
{
	if (w->options->terminal)
		fputs("\033[?25h", stdout);
	fflush(stdout);
	tool_error("watch: %s (pbusd stopped or restarted); %s", what, then);
	w->drawn_lines = 0;
}

static void announce_back(struct watch *w)
{
	tool_error("watch: instance '%s' is back", w->context->instance);
	if (w->options->terminal)
		fputs("\033[?25l", stdout); /* hide the cursor while drawing */
}

static void on_change(const struct tool_change *change, void *userdata)
{
	struct watch *w = userdata;
	const struct watch_options *o = w->options;
	char what[128];

	w->dirty = true;
	switch (change->kind) {
	case TOOL_CHANGE_VALUE:
		w->values_seen = true;
		if (w->done)
			return; /* drain */
		if (!o->terminal)
			print_value(w, change->index);
		w->changes++;
		if (o->count && w->changes >= o->count)
			w->done = true;
		return;
	case TOOL_CHANGE_CURRENT:
		/* Shown with --initial only, and not counted. */
		w->values_seen = true;
		if (!o->terminal && o->initial)
			print_all(w);
		return;
	case TOOL_CHANGE_LOST:
		snprintf(what, sizeof(what), "lost the connection to pbusd of instance '%s'",
			 w->context->instance);
		announce_lost(w, what, "reconnecting");
		return;
	case TOOL_CHANGE_BACK:
		announce_back(w);
		return;
	}
}

/* A table source's instance was closed or replaced: reopen it, watch the
 * same names again and, not on a terminal, print every value (it may have
 * changed meanwhile; counted as changes). Returns an exit status;
 * TOOL_EXIT_OK with nothing to watch after a stop signal. */
static int reopen(struct watch *w)
{
	const char *name = w->context->instance;
	int64_t deadline = tool_monotonic_ns() + (int64_t)REOPEN_TIMEOUT_MS * NS_PER_MS;
	int state = pbus_table_state(tool_source_table(w->source)), r, status;
	char what[128];

	snprintf(what, sizeof(what), "instance '%s' was %s", name,
		 state == PBUS_TABLE_REPLACED ? "replaced" : "closed");
	announce_lost(w, what, "reopening");
	free(w->indexes);
	w->indexes = NULL;
	w->count = 0;
	r = tool_source_reopen(w->source, deadline, &stop_requested);
	if (r == -EINTR)
		return TOOL_EXIT_OK;
	if (r == TOOL_SOURCE_NOT_BACK) {
		tool_error("watch: instance '%s' did not come back within %d s", name,
			   REOPEN_TIMEOUT_MS / 1000);
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r < 0) {
		tool_error("watch: instance '%s': %s", name, pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	status = resolve(w);
	if (status != TOOL_EXIT_OK)
		return status;
	announce_back(w);
	if (!w->options->terminal) {
		print_all(w);
		w->changes += w->count;
		fflush(stdout);
	}
	return TOOL_EXIT_OK;
}

/* --- The loop ------------------------------------------------------------ */

/* -w SECONDS ran out: the end of a watch that counts nothing; a timeout
 * (status 5) for one that waited for --count changes. */
static int timed_out(const struct watch *w)
{
	char seconds[32];

	if (!w->options->count)
		return TOOL_EXIT_OK;
	if (w->options->terminal)
		fputs("\033[?25h", stdout);
	fflush(stdout);
	tool_seconds_text(w->options->timeout_ms, seconds, sizeof(seconds));
	tool_error("watch: timed out after %s with %llu of %llu changes", seconds, w->changes,
		   w->options->count);
	return TOOL_EXIT_TIMEOUT;
}

static int run_loop(struct watch *w)
{
	const struct watch_options *o = w->options;
	bool server = tool_source_is_server(w->source);
	int64_t last_draw = 0;
	int64_t deadline = o->timeout_ms ? tool_monotonic_ns() + (int64_t)o->timeout_ms * NS_PER_MS : 0;
	int status = TOOL_EXIT_OK;

	if (o->terminal) {
		fputs("\033[?25l", stdout); /* hide the cursor while drawing */
		watch_draw(w);
		last_draw = tool_monotonic_ns();
	} else if (o->initial && !server) {
		/* A table has its current values now; pbusd sends them as the
		 * subscription's first notification (TOOL_CHANGE_CURRENT). */
		print_all(w);
		if (fflush(stdout) != 0)
			return TOOL_EXIT_FAILURE;
	}
	w->dirty = false;
	while (!stop_requested && !w->done) {
		int64_t timeout = (int64_t)SIGNAL_CHECK_MS * NS_PER_MS;
		int r;

		if (deadline) {
			int64_t left = deadline - tool_monotonic_ns();

			if (left <= 0) {
				status = timed_out(w);
				break;
			}
			if (left < timeout)
				timeout = left;
		}

		if (o->terminal) {
			int64_t now = tool_monotonic_ns();
			int64_t next = last_draw + (w->dirty ? o->interval_ns
							     : (int64_t)AGE_REFRESH_MS * NS_PER_MS);

			if (next <= now || resized) {
				watch_draw(w);
				last_draw = tool_monotonic_ns();
				w->dirty = false;
				continue;
			}
			if (next - now < timeout)
				timeout = next - now;
		}
		/* While a redraw is pending, changes need not wake us: they will be
		 * drawn then anyway. */
		w->values_seen = false;
		r = tool_source_wait(w->source, timeout, !(o->terminal && w->dirty));
		if (r == 0) {
			if (w->values_seen && !o->terminal && (fflush(stdout) != 0 || ferror(stdout)))
				w->done = true; /* stdout is gone */
		} else if (r == TOOL_SOURCE_GONE) {
			status = reopen(w);
			if (status != TOOL_EXIT_OK || stop_requested)
				break;
			if (o->count && w->changes >= o->count)
				break;
			if (o->terminal) {
				watch_draw(w);
				last_draw = tool_monotonic_ns();
				w->dirty = false;
			}
		} else if (r == TOOL_SOURCE_NOT_BACK) {
			tool_error("watch: instance '%s' did not come back within %d s",
				   w->context->instance, REOPEN_TIMEOUT_MS / 1000);
			status = TOOL_EXIT_NO_INSTANCE;
			break;
		} else if (r == -ESTALE) {
			tool_error("watch: instance '%s' came back with another schema",
				   w->context->instance);
			status = TOOL_EXIT_NO_INSTANCE;
			break;
		} else {
			tool_error("watch: %s", pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
			break;
		}
	}
	if (o->terminal) {
		if (tool_source_ready(w->source))
			watch_draw(w); /* the final picture */
		fputs("\033[?25h", stdout);
		fflush(stdout);
	}
	/* Through pbusd, stdout that failed fails the watch. (Reading the table
	 * it has only ended it, as it always has; only its initial values
	 * above fail it.) */
	if (server && !o->terminal && ferror(stdout))
		status = TOOL_EXIT_FAILURE;
	return status;
}

static int run(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"interval", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'c'},
		{"initial", no_argument, NULL, 'I'},
		{"server", no_argument, NULL, 'S'},
		{"timeout", required_argument, NULL, 'w'},
		TOOL_FORMAT_NUMBER_LONG,
		TOOL_FORMAT_LINE_LONG,
		{NULL, 0, NULL, 0},
	};
	struct tool_format format;
	struct watch_options o = {.format = &format,
				  .interval_ns = (int64_t)DEFAULT_INTERVAL_MS * NS_PER_MS};
	struct watch w = {.context = context, .options = &o, .resized = &resized};
	struct sigaction sa;
	unsigned long long number;
	bool server = false;
	int option, status;

	tool_format_init(&format);
	/* -d is the interval (it was -n, which is now EPICS's numeric enums). */
	while ((option = tool_next_option(context, &tool_command_watch, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "d:c:w:" TOOL_FORMAT_NUMBER_SHORT
					  TOOL_FORMAT_LINE_SHORT, options, &status))) {
		switch (option) {
		case 'w':
			if (tool_timeout_option(&tool_command_watch, optarg, &o.timeout_ms))
				return TOOL_EXIT_USAGE;
			break;
		case 'd':
			if (tool_parse_unsigned(optarg, 3600000, &number) < 0 || number == 0)
				return tool_usage_error(&tool_command_watch,
							"--interval '%s' is not a number of "
							"milliseconds (1 ... 3600000)", optarg);
			o.interval_ns = (int64_t)number * NS_PER_MS;
			break;
		case 'c':
			if (tool_parse_unsigned(optarg, UINT64_MAX, &number) < 0 || number == 0)
				return tool_usage_error(&tool_command_watch,
							"--count '%s' is not a positive number",
							optarg);
			o.count = number;
			break;
		case 'I':
			o.initial = true;
			break;
		case 'S':
			server = true;
			break;
		default:
			if (tool_format_option(&tool_command_watch, &format, option, optarg, &status) &&
			    status >= 0)
				return status;
			break;
		}
	}
	if (status >= 0)
		return status;
	o.names = argv + optind;
	o.name_count = argc - optind;
	o.terminal = isatty(STDOUT_FILENO);

	if (server)
		/* -w bounds the connection too (the whole watch lasts that long). */
		status = tool_source_connect(context, o.timeout_ms,
					     "'pbus watch' without --server reads the segment",
					     &w.source);
	else
		status = tool_source_open_table(context, PBUS_OPEN_READ, &w.source);
	if (status != TOOL_EXIT_OK)
		return status;
	status = resolve(&w);
	if (status == TOOL_EXIT_OK) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = on_stop; /* no SA_RESTART: the futex wait returns -EINTR */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = on_resize;
		sigaction(SIGWINCH, &sa, NULL);
		signal(SIGPIPE, SIG_IGN); /* a closed pipe ends the watch through EPIPE */
		status = run_loop(&w);
	}
	free(w.indexes);
	tool_source_close(w.source);
	return status;
}

const struct tool_command tool_command_watch = {
	.name = "watch",
	.summary = "watch parameters change, live",
	.help = "Usage: pbus [-i NAME] watch [--server] [-d MS] [-c N] [-w SECONDS] [--initial]\n"
		"                            [OPTIONS] [NAME...]\n"
		"\n"
		"Watch the named parameters (default: every readable one) change.\n"
		"\n"
		"On a terminal, a block of lines is redrawn in place: name, value, unit,\n"
		"status and age of the value. Ctrl-C quits and leaves the last picture.\n"
		"When stdout is not a terminal, one line is printed per change:\n"
		"  [TIME] NAME=VALUE STATUS     (with --terse: [TIME] NAME VALUE)\n"
		"(control characters in strings escaped as \\n, \\t, \\xNN). A parameter\n"
		"written several times between two looks is reported once, with its\n"
		"newest value.\n"
		"\n"
		"If pbusd stops or restarts, the watch says so on stderr and reopens\n"
		"the instance (for up to 5 s; exit status 3 if it does not come back).\n"
		"\n"
		"Options:\n"
		"      --server         watch through a subscription to pbusd over its\n"
		"                       socket instead of the shared memory (the same\n"
		"                       output; when pbusd restarts, the watch\n"
		"                       reconnects, for up to 5 s as above)\n"
		"  -d, --interval MS    redraw the terminal view at most every MS ms\n"
		"                       (default 100)\n"
		"  -c, --count N        exit after N changes\n"
		"  -w, --timeout SECONDS  end the watch after SECONDS in all: status 0,\n"
		"                       or 5 if --count changes had not come by then\n"
		"      --initial        not a terminal: first print the current value of\n"
		"                       each parameter (not counted as changes)\n"
		TOOL_FORMAT_NUMBER_HELP
		TOOL_FORMAT_LINE_HELP
		"                       (the terminal view shows ages; -t, -T and -F shape\n"
		"                       the lines printed when stdout is not a terminal)\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 interrupted, --count reached or -w over, 1 error, 2 usage\n"
		"error, 3 instance not found or gone, 5 -w over before --count changes.\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 watch measured_voltage measured_current\n"
		"  pbus -i psu1 watch -t -f 4 measured_voltage | tee log.txt\n"
		"  pbus -i psu1 watch --server -c 1 -w 5 -T -F , mode\n"
		TOOL_HELP_SEE("pbus-watch(1)"),
	.run = run,
};
