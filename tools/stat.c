/* SPDX-License-Identifier: MIT */
/*
 * stat.c: `pbus stat`, pbusd's server statistics (the STATS message,
 * docs/socket-protocol.md §7) for a person or a script.
 *
 * --json prints the server's object as it comes. The table needs the
 * numbers, so the JSON is read with jansson (the library's JSON parser too), strictly. Rates are what the counters grew by between two samples
 * divided by the time between them: by default two samples a second
 * apart, with --watch every sample against the one before, with --once
 * none. Our own connection is one of the clients shown.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "format.h"
#include "tool.h"

enum { SAMPLE_INTERVAL_MS = 1000 };

static volatile sig_atomic_t stop_requested;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

/* --- The sample's JSON, read with jansson ------------------------------------ */

/* Parse @text strictly (RFC 8259, nothing after the value; jansson refuses
 * trailing text by default): the value, or NULL. The caller drops it with
 * json_decref(). */
static json_t *json_parse(const char *text)
{
	json_error_t error;

	return json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
}

/* A number member, or NAN if absent. */
static double json_number(json_t *object, const char *key)
{
	json_t *v = json_object_get(object, key);

	return v && json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *json_text(json_t *object, const char *key)
{
	json_t *v = json_object_get(object, key);

	return v && json_is_string(v) ? json_string_value(v) : "-";
}

/* --- Samples and output ------------------------------------------------------- */

struct sample {
	char *text;   /* the server's JSON */
	json_t *json;
	int64_t at_ns;
};

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sample_clear(struct sample *s)
{
	free(s->text);
	json_decref(s->json);
	memset(s, 0, sizeof(*s));
}

/* One STATS from pbusd. Prints its own errors; returns an exit status. */
static unsigned answer_timeout_ms = 5000; /* -w */

static int take_sample(struct pbus_client *client, struct sample *ret)
{
	char seconds[32];
	int n;

	sample_clear(ret);
	/* One request per sample: asking for the length first would be a
	 * second sample, whose text may be longer (a counter gained a digit). */
	n = pbus_client_stats_text(client, &ret->text);
	if (n < 0) {
		sample_clear(ret);
		if (n == -ENOTCONN || n == -ESTALE) {
			tool_error("stat: the connection to pbusd was lost (pbusd stopped?)");
			return TOOL_EXIT_NO_INSTANCE;
		}
		if (n == -ETIMEDOUT) {
			tool_seconds_text(answer_timeout_ms, seconds, sizeof(seconds));
			tool_error("stat: pbusd did not answer within %s", seconds);
			return TOOL_EXIT_TIMEOUT;
		}
		tool_error("stat: %s", pbus_strerror(n));
		return TOOL_EXIT_FAILURE;
	}
	ret->at_ns = monotonic_ns();
	ret->json = ret->text ? json_parse(ret->text) : NULL;
	if (!ret->json || !json_is_object(ret->json)) {
		tool_error("stat: pbusd sent statistics that are not a JSON object");
		sample_clear(ret);
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

static void number_text(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

/* "  (12.5/s)" from the growth of @key since @before, or "" without one. */
static void rate_text(const struct sample *now, const struct sample *before, const char *key,
		      char *buf, size_t size)
{
	double a, b, seconds;

	buf[0] = 0;
	if (!before || !before->text)
		return;
	a = json_number(before->json, key);
	b = json_number(now->json, key);
	seconds = (double)(now->at_ns - before->at_ns) / 1e9;
	if (isnan(a) || isnan(b) || seconds <= 0 || b < a)
		return;
	snprintf(buf, size, "  (%.1f/s)", (b - a) / seconds);
}

static void print_counter(const char *label, const struct sample *now, const struct sample *before,
			  const char *key)
{
	char value[32], rate[48];

	number_text(json_number(now->json, key), value, sizeof(value));
	rate_text(now, before, key, rate, sizeof(rate));
	printf("%-15s %s%s\n", label, value, rate);
}

static void print_table(const struct sample *now, const struct sample *before)
{
	json_t *o = now->json, *clients = NULL;
	char a[32], b[32], c[32];
	double uptime = json_number(o, "uptime_s");

	printf("%-15s ", "instance");
	tool_print_escaped(stdout, json_text(o, "instance"));
	fputc('\n', stdout);
	if (isnan(uptime))
		printf("%-15s -\n", "uptime");
	else
		printf("%-15s %.1f s\n", "uptime", uptime);
	number_text(json_number(o, "clients"), a, sizeof(a));
	number_text(json_number(o, "max_clients"), b, sizeof(b));
	printf("%-15s %s (at most %s)\n", "clients", a, b);
	number_text(json_number(o, "connections_total"), a, sizeof(a));
	number_text(json_number(o, "rejected_connections"), b, sizeof(b));
	printf("%-15s %s (%s rejected)\n", "connections", a, b);
	print_counter("subscriptions", now, NULL, "subscriptions");
	print_counter("requests", now, before, "requests");
	print_counter("notifications", now, before, "notifications");
	print_counter("values sent", now, before, "values_notified");
	print_counter("bytes in", now, before, "bytes_in");
	print_counter("bytes out", now, before, "bytes_out");
	print_counter("errors", now, before, "errors");
	clients = json_object_get(o, "clients_detail");
	if (!clients || !json_is_array(clients) || json_array_size(clients) == 0)
		return;
	printf("\n%-8s %-6s %-20s %5s %9s %13s %10s\n", "PID", "UID", "NAME", "SUBS", "REQUESTS",
	       "NOTIFICATIONS", "TX PENDING");
	for (size_t i = 0; i < json_array_size(clients); i++) {
		json_t *x = json_array_get(clients, i);
		char name[64], subs[32], requests[32], notifications[32], pending[32];

		number_text(json_number(x, "pid"), a, sizeof(a));
		number_text(json_number(x, "uid"), c, sizeof(c));
		snprintf(name, sizeof(name), "%s", json_text(x, "name"));
		/* Names come from the clients: no control characters on the terminal. */
		for (char *p = name; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		number_text(json_number(x, "subscriptions"), subs, sizeof(subs));
		number_text(json_number(x, "requests"), requests, sizeof(requests));
		number_text(json_number(x, "notifications"), notifications, sizeof(notifications));
		number_text(json_number(x, "tx_pending"), pending, sizeof(pending));
		printf("%-8s %-6s %-20s %5s %9s %13s %10s\n", a, c, name, subs, requests,
		       notifications, pending);
	}
}

/* Sleep until @until (CLOCK_MONOTONIC ns) or a signal. */
static void sleep_until(int64_t until)
{
	int64_t left = until - monotonic_ns();

	if (left > 0)
		poll(NULL, 0, (int)((left + 999999) / 1000000));
}

static int run(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"json", no_argument, NULL, 'j'},
		{"once", no_argument, NULL, '1'},
		{"watch", no_argument, NULL, 'W'},
		{"timeout", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct pbus_client *client = NULL;
	struct sample before = {0}, now = {0};
	bool json = false, once = false, watch = false, terminal;
	struct sigaction sa;
	int option, status;

	while ((option = tool_next_option(context, &tool_command_stat, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "j1Ww:", options, &status))) {
		switch (option) {
		case 'j': json = true; break;
		case '1': once = true; break;
		/* -W: -w is the timeout everywhere, as in EPICS (it was --watch). */
		case 'W': watch = true; break;
		case 'w':
			if (tool_timeout_option(&tool_command_stat, optarg, &answer_timeout_ms))
				return TOOL_EXIT_USAGE;
			break;
		}
	}
	if (status >= 0)
		return status;
	if (optind < argc)
		return tool_usage_error(&tool_command_stat, "unexpected argument '%s'", argv[optind]);
	if (once && watch)
		return tool_usage_error(&tool_command_stat, "--once and --watch exclude each other");
	status = tool_connect(context, answer_timeout_ms,
			      "'pbus info' and 'pbus dump' read the segment", &client);
	if (status != TOOL_EXIT_OK)
		return status;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop; /* no SA_RESTART: the sleep ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	terminal = isatty(STDOUT_FILENO);
	status = take_sample(client, &now);
	/* The default: a second look after a second, for the rates. */
	if (status == TOOL_EXIT_OK && !json && !once && !watch) {
		before = now;
		memset(&now, 0, sizeof(now));
		sleep_until(before.at_ns + (int64_t)SAMPLE_INTERVAL_MS * 1000000);
		if (!stop_requested) {
			status = take_sample(client, &now);
		} else {
			/* Interrupted: what we have, without rates. */
			now = before;
			memset(&before, 0, sizeof(before));
		}
	}
	while (status == TOOL_EXIT_OK) {
		if (json) {
			fputs(now.text, stdout);
			fputc('\n', stdout);
		} else {
			if (watch && terminal)
				fputs("\033[H\033[2J", stdout); /* redraw from the top */
			else if (watch && before.text)
				fputc('\n', stdout);
			print_table(&now, before.text ? &before : NULL);
		}
		if (fflush(stdout) != 0 || ferror(stdout)) {
			status = TOOL_EXIT_FAILURE;
			break;
		}
		if (!watch)
			break;
		sleep_until(now.at_ns + (int64_t)SAMPLE_INTERVAL_MS * 1000000);
		if (stop_requested)
			break;
		sample_clear(&before);
		before = now;
		memset(&now, 0, sizeof(now));
		status = take_sample(client, &now);
	}
	sample_clear(&before);
	sample_clear(&now);
	pbus_client_close(client);
	return status;
}

const struct tool_command tool_command_stat = {
	.name = "stat",
	.summary = "pbusd's server statistics: clients, requests, rates",
	.help = "Usage: pbus [-i NAME] stat [-w SECONDS] [--json] [--once|--watch]\n"
		"\n"
		"Ask pbusd for its server statistics over its socket and print them:\n"
		"uptime, clients, connections, subscriptions, and the counters of\n"
		"requests, notifications, values sent, bytes and errors since pbusd\n"
		"started, each with its rate per second; then one line per connected\n"
		"client (pid, uid, name, subscriptions, requests, notifications, bytes\n"
		"waiting to be sent). This command is one of the clients.\n"
		"\n"
		"The rates come from two samples taken a second apart, so 'pbus stat'\n"
		"takes a second.\n"
		"\n"
		"Options:\n"
		"  -j, --json           print pbusd's JSON object as it comes, one line\n"
		"                       (no rates, no wait)\n"
		"  -1, --once           one sample, no rates, no wait\n"
		"  -W, --watch          a new sample every second until Ctrl-C (redrawn\n"
		"                       on a terminal, else one block per sample; with\n"
		"                       --json one line per sample)\n"
		"  -w, --timeout SECONDS  wait at most SECONDS for each answer of pbusd\n"
		"                       (default 5); then exit status 5\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 printed, 1 error, 2 usage error, 3 instance not found or\n"
		"pbusd gone, 5 pbusd did not answer within -w.\n"
		"\n"
		"Examples:\n"
		"  pbus -i psu1 stat\n"
		"  pbus -i psu1 stat -W\n"
		"  pbus -i psu1 stat -w 2 --json\n"
		TOOL_HELP_SEE("pbus-stat(1)"),
	.run = run,
};
