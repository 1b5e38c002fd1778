/* SPDX-License-Identifier: MIT */
/*
 * watch.c: `pbus watch`, a live view of parameters.
 *
 * On a terminal it redraws a block of lines in place (ANSI cursor movement,
 * no scrolling, no alternate screen, so the last picture stays when it
 * exits), at most once per --interval and once a second for the ages. When
 * stdout is not a terminal it prints one line per change, "name=value
 * status", for scripts and tests.
 *
 * Changes come from pbus_watch_wait(), which sleeps on a futex until a
 * watched parameter is written: nothing is polled. The waits still carry a
 * timeout of at most a second, because a signal that arrives after the
 * stop flag was checked but before the futex sleep begins would otherwise
 * be noticed only at the next change; waking once a second to look at a
 * flag costs nothing.
 *
 * When the instance is closed or replaced (pbusd stopped or restarted),
 * the wait returns -ESTALE; the watch says so on stderr and reopens the
 * instance for up to REOPEN_TIMEOUT_MS.
 *
 * With --server the values come from a subscription to pbusd over its
 * socket (parambus/client.h) instead: the same output, fed by notifications
 * that pbusd coalesces (on a terminal it sends at most one per --interval).
 * The client reconnects by itself after a restart; while the connection is
 * down, the loop makes a request every REOPEN_RETRY_MS so that the client
 * tries at once instead of waiting for its backoff timer.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

enum { REOPEN_TIMEOUT_MS = 5000, REOPEN_RETRY_MS = 100 };
enum { DEFAULT_INTERVAL_MS = 100, AGE_REFRESH_MS = 1000, SIGNAL_CHECK_MS = 1000 };
enum { NAME_WIDTH_MAX = 40, UNIT_WIDTH_MAX = 10, STATUS_WIDTH = 7, AGE_WIDTH = 7 };

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

struct watch_options {
	int64_t interval_ns;
	unsigned long long count; /* 0: no limit */
	bool initial;
	bool terminal;
	char **names;
	int name_count;
};

/* --server: the last value pbusd sent of a parameter. */
struct cached {
	unsigned char *data; /* capacity bytes: the parameter's value_size */
	uint32_t capacity, length, status;
	uint64_t timestamp_ns;
	bool have;
};

struct view {
	struct tool_context *context;
	const struct watch_options *options;
	struct pbus_table *table;
	struct pbus_watch *watch;
	uint32_t *indexes; /* what is shown, in order */
	size_t count;
	int drawn_lines;   /* lines of the block on screen, for redraws */
	unsigned long long changes;
	/* --server */
	struct pbus_client *client;
	struct cached *cache; /* by parameter index */
	uint32_t cache_count;
	bool connected;       /* the subscription is live */
	bool first_values;    /* the next VALUES is the first of the subscription */
	bool dirty;           /* terminal: something to draw */
	bool done;            /* --count reached, or stdout gone */
	int64_t lost_at;      /* CLOCK_MONOTONIC of the loss; 0 while connected */
};

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL); /* a signal cuts it short, which is what we want */
}

/* --- Resolving what to watch --------------------------------------------- */

static void view_close(struct view *v)
{
	pbus_watch_free(v->watch);
	v->watch = NULL;
	free(v->indexes);
	v->indexes = NULL;
	v->count = 0;
	pbus_table_close(v->table);
	v->table = NULL;
}

/* Resolve the names (or every readable parameter) and start the watch.
 * Prints its own errors; returns an exit status. */
static int view_resolve(struct view *v)
{
	const struct watch_options *o = v->options;
	uint32_t total = pbus_table_param_count(v->table);
	size_t n = 0;
	int r;

	v->indexes = calloc(o->name_count ? (size_t)o->name_count : (total ? total : 1),
			    sizeof(*v->indexes));
	if (!v->indexes) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	if (o->name_count) {
		for (int i = 0; i < o->name_count; i++) {
			const struct pbus_param *param;
			struct pbus_param_info info;

			if (tool_find(v->table, o->names[i], &param) < 0)
				return TOOL_EXIT_FAILURE;
			pbus_param_describe(param, &info);
			if (info.flags & PBUS_PARAM_NOREAD) {
				tool_error("watch %s: parameter is not readable (noRead)", info.name);
				return TOOL_EXIT_FAILURE;
			}
			v->indexes[n++] = info.index;
		}
	} else {
		for (uint32_t i = 0; i < total; i++) {
			const struct pbus_param *param;
			struct pbus_param_info info;

			if (pbus_table_param(v->table, i, &param) == 0 &&
			    pbus_param_describe(param, &info) == 0 && !(info.flags & PBUS_PARAM_NOREAD))
				v->indexes[n++] = i;
		}
		if (n == 0) {
			tool_error("watch: the instance has no readable parameter");
			return TOOL_EXIT_FAILURE;
		}
	}
	v->count = n;
	/* Watching everything takes the one "any" registration rather than one
	 * per parameter. */
	r = pbus_watch_new(v->table, v->indexes, n == total && !o->name_count ? 0 : n, &v->watch);
	if (r < 0) {
		tool_error("watch: %s", pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

/* --- Line output (not a terminal) ---------------------------------------- */

static bool print_change(const struct pbus_table *table, const struct pbus_param *param)
{
	struct tool_value value;
	struct pbus_param_info info;
	char *text;

	if (tool_value_read(param, &value) < 0) {
		tool_value_clear(&value);
		return false;
	}
	pbus_param_describe(param, &info);
	text = tool_value_text(pbus_table_view(table), info.index, value.data, value.sample.length);
	printf("%s=", pbus_param_name(param));
	tool_print_escaped(stdout, text ? text : "");
	printf(" %s\n", pbus_status_name((unsigned)value.status));
	free(text);
	tool_value_clear(&value);
	return true;
}

/* --- The terminal view --------------------------------------------------- */

/* A growing string for one frame. */
struct frame {
	char *text;
	size_t length, capacity;
};

static void frame_add(struct frame *f, const char *s, size_t n)
{
	if (f->length + n + 1 > f->capacity) {
		size_t capacity = (f->capacity ? f->capacity * 2 : 4096);
		char *text;

		while (capacity < f->length + n + 1)
			capacity *= 2;
		text = realloc(f->text, capacity);
		if (!text)
			return; /* a frame missing a piece; the next one will do */
		f->text = text;
		f->capacity = capacity;
	}
	memcpy(f->text + f->length, s, n);
	f->length += n;
	f->text[f->length] = 0;
}

static void frame_puts(struct frame *f, const char *s)
{
	frame_add(f, s, strlen(s));
}

/* Append @text escaped (control characters as \n, \xNN), cut or padded to
 * exactly @width columns; a cut ends in an ellipsis. Widths count UTF-8
 * code points, which is right for the text an instrument has. */
static void frame_cell(struct frame *f, const char *text, size_t width, bool pad)
{
	size_t used = 0;
	const unsigned char *c = (const unsigned char *)text;

	while (*c) {
		char escaped[8];
		const char *piece = (const char *)c;
		size_t length = 1, columns = 1;

		if (*c == '\n' || *c == '\t' || *c == '\r') {
			snprintf(escaped, sizeof(escaped), "\\%c",
				 *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
			piece = escaped;
			columns = 2;
		} else if (*c < 0x20 || *c == 0x7f) {
			snprintf(escaped, sizeof(escaped), "\\x%02x", *c);
			piece = escaped;
			columns = 4;
		} else {
			while ((c[length] & 0xc0) == 0x80)
				length++;
		}
		/* Keep one column for the ellipsis unless this is the end. */
		if (used + columns > width || (used + columns == width && c[length])) {
			if (used < width) {
				frame_puts(f, "\u2026");
				used++;
			}
			break;
		}
		frame_add(f, piece, piece == escaped ? columns : length);
		used += columns;
		c += length;
	}
	for (; pad && used < width; used++)
		frame_add(f, " ", 1);
}

static void age_text(uint64_t timestamp_ns, uint64_t now_ns, char *buf, size_t size)
{
	uint64_t age = now_ns > timestamp_ns ? now_ns - timestamp_ns : 0;
	uint64_t s = age / 1000000000u;

	if (timestamp_ns == 0)
		snprintf(buf, size, "-");
	else if (s < 10)
		snprintf(buf, size, "%.1fs", (double)age / 1e9);
	else if (s < 60)
		snprintf(buf, size, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, size, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, size, "%llud", (unsigned long long)(s / 86400));
}

static size_t utf8_width(const char *text)
{
	size_t w = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		w += (*c & 0xc0) != 0x80;
	return w;
}

/* The schema view of what is watched: the client's or the table's. */
static const struct pbus_view *schema_view(const struct view *v)
{
	return v->client ? pbus_client_view(v->client) : pbus_table_view(v->table);
}

/* The description of the @i-th parameter shown. */
static void view_describe(const struct view *v, size_t i, struct pbus_param_info *ret_info)
{
	pbus_view_describe(schema_view(v), v->indexes[i], ret_info);
}

/* What a row shows of the @i-th parameter: the value (text, malloc'd; or
 * NULL and a problem), status and time. */
struct row {
	char *text;
	const char *problem;
	const char *status;
	uint64_t timestamp_ns;
};

static void view_row(const struct view *v, size_t i, struct row *ret)
{
	const struct pbus_param *param;
	struct tool_value value;

	memset(ret, 0, sizeof(*ret));
	if (v->client) {
		const struct cached *c = &v->cache[v->indexes[i]];

		if (!c->have) {
			ret->problem = "\u2026"; /* the first notification is on its way */
			ret->status = "";
			return;
		}
		ret->text = tool_value_text(schema_view(v), v->indexes[i], c->data, c->length);
		ret->problem = "";
		ret->status = pbus_status_name(c->status);
		ret->timestamp_ns = c->timestamp_ns;
		return;
	}
	pbus_table_param(v->table, v->indexes[i], &param);
	tool_value_read(param, &value);
	ret->text = value.status >= 0 ? tool_value_text(schema_view(v), v->indexes[i], value.data,
							value.sample.length)
				      : NULL;
	ret->problem = value.status >= 0 ? "" : pbus_strerror(value.status);
	ret->status = value.status >= 0 ? pbus_status_name((unsigned)value.status) : "error";
	ret->timestamp_ns = value.sample.timestamp_ns;
	tool_value_clear(&value);
}

static void view_draw(struct view *v)
{
	struct winsize ws;
	size_t columns = 80, rows = 24, name_width = 4, unit_width = 4, value_width, shown;
	struct frame f = {NULL, 0, 0};
	uint64_t now = realtime_ns();
	char line[256], age[32];
	unsigned major = 0, minor = 0;
	const char *interface;
	int state;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		columns = ws.ws_col;
		rows = ws.ws_row;
	}
	if (resized) {
		/* Lines drawn for the old width may have wrapped: start over. */
		resized = 0;
		frame_puts(&f, "\033[H\033[2J");
		v->drawn_lines = 0;
	}
	if (v->drawn_lines > 0) {
		snprintf(line, sizeof(line), "\r\033[%dA", v->drawn_lines);
		frame_puts(&f, line);
	}
	/* One line stays free so that the block never scrolls the screen. */
	shown = v->count;
	if (shown + 2 > rows)
		shown = rows > 3 ? rows - 3 : 0; /* header, the "more" line, the free line */
	for (size_t i = 0; i < shown; i++) {
		struct pbus_param_info info;

		view_describe(v, i, &info);
		if (utf8_width(info.name) > name_width)
			name_width = utf8_width(info.name);
		if (utf8_width(info.unit) > unit_width)
			unit_width = utf8_width(info.unit);
	}
	if (name_width > NAME_WIDTH_MAX)
		name_width = NAME_WIDTH_MAX;
	if (unit_width > UNIT_WIDTH_MAX)
		unit_width = UNIT_WIDTH_MAX;
	value_width = columns > name_width + unit_width + STATUS_WIDTH + AGE_WIDTH + 8 + 10
			      ? columns - (name_width + unit_width + STATUS_WIDTH + AGE_WIDTH + 8)
			      : 10;

	if (v->client) {
		snprintf(line, sizeof(line), "%s  via pbusd  %s  %zu parameter%s  (Ctrl-C quits)",
			 v->context->instance, v->connected ? "connected" : "reconnecting", v->count,
			 v->count == 1 ? "" : "s");
	} else {
		interface = pbus_table_interface(v->table, &major, &minor);
		state = pbus_table_state(v->table);
		snprintf(line, sizeof(line), "%s  %s %u.%u  %s  %zu parameter%s  (Ctrl-C quits)",
			 pbus_table_instance(v->table), interface ? interface : "?", major, minor,
			 tool_state_name(state), v->count, v->count == 1 ? "" : "s");
	}
	frame_puts(&f, "\r\033[2K");
	frame_cell(&f, line, columns - 1, false);
	frame_puts(&f, "\n");
	for (size_t i = 0; i < shown; i++) {
		struct pbus_param_info info;
		struct row row;

		view_describe(v, i, &info);
		view_row(v, i, &row);
		age_text(row.timestamp_ns, now, age, sizeof(age));
		frame_puts(&f, "\r\033[2K");
		frame_cell(&f, info.name, name_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, row.text ? row.text : row.problem, value_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, info.unit, unit_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, row.status, STATUS_WIDTH, true);
		snprintf(line, sizeof(line), "  %*s", AGE_WIDTH, age);
		frame_puts(&f, line);
		frame_puts(&f, "\n");
		free(row.text);
	}
	if (shown < v->count) {
		snprintf(line, sizeof(line), "\u2026 %zu more (a taller terminal, or name the "
			 "parameters to watch)", v->count - shown);
		frame_puts(&f, "\r\033[2K");
		frame_cell(&f, line, columns - 1, false);
		frame_puts(&f, "\n");
	}
	/* If the block shrank (a reopened instance), clear what was below. */
	frame_puts(&f, "\033[J");
	if (f.text)
		fwrite(f.text, 1, f.length, stdout);
	fflush(stdout);
	free(f.text);
	v->drawn_lines = 1 + (int)shown + (shown < v->count);
}

/* --- The loop ------------------------------------------------------------ */

/* Report every change the last wait found. Returns false when --count is
 * reached or stdout is gone. */
static bool view_take_changes(struct view *v)
{
	uint32_t index;
	bool more = true;

	while (pbus_watch_next(v->watch, &index) > 0) {
		const struct pbus_param *param;

		if (!more)
			continue; /* drain */
		if (!v->options->terminal) {
			if (pbus_table_param(v->table, index, &param) == 0)
				print_change(v->table, param);
		}
		v->changes++;
		if (v->options->count && v->changes >= v->options->count)
			more = false;
	}
	if (!v->options->terminal && (fflush(stdout) != 0 || ferror(stdout)))
		return false;
	return more;
}

/* The instance was closed or replaced: reopen it. Returns an exit status;
 * TOOL_EXIT_OK means v is usable again. */
static int view_reopen(struct view *v)
{
	const char *name = v->context->instance;
	int64_t deadline = monotonic_ns() + (int64_t)REOPEN_TIMEOUT_MS * 1000000;
	int state = pbus_table_state(v->table);

	if (v->options->terminal)
		fputs("\033[?25h", stdout);
	fflush(stdout);
	tool_error("watch: instance '%s' was %s (pbusd stopped or restarted); reopening",
		   name, state == PBUS_TABLE_REPLACED ? "replaced" : "closed");
	view_close(v);
	v->drawn_lines = 0;
	while (!stop_requested) {
		int r = pbus_table_open(name, PBUS_OPEN_READ, &v->table);

		if (r == 0 && pbus_table_state(v->table) == PBUS_TABLE_LIVE) {
			int status = view_resolve(v);

			if (status != TOOL_EXIT_OK)
				return status;
			tool_error("watch: instance '%s' is back", name);
			if (v->options->terminal) {
				fputs("\033[?25l", stdout);
			} else {
				/* The values may have changed meanwhile: print them all. */
				for (size_t i = 0; i < v->count; i++) {
					const struct pbus_param *param;

					pbus_table_param(v->table, v->indexes[i], &param);
					print_change(v->table, param);
					v->changes++;
				}
				fflush(stdout);
			}
			return TOOL_EXIT_OK;
		}
		if (r == 0) {
			pbus_table_close(v->table);
			v->table = NULL;
		} else if (r != -ENOENT && r != -EAGAIN) {
			tool_error("watch: instance '%s': %s", name, pbus_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
		if (monotonic_ns() >= deadline) {
			tool_error("watch: instance '%s' did not come back within %d s", name,
				   REOPEN_TIMEOUT_MS / 1000);
			return TOOL_EXIT_NO_INSTANCE;
		}
		sleep_ms(REOPEN_RETRY_MS);
	}
	return TOOL_EXIT_OK;
}

static int view_run(struct view *v)
{
	const struct watch_options *o = v->options;
	int64_t last_draw = 0;
	bool dirty = false;
	int status = TOOL_EXIT_OK;

	if (o->terminal) {
		fputs("\033[?25l", stdout); /* hide the cursor while drawing */
		view_draw(v);
		last_draw = monotonic_ns();
	} else if (o->initial) {
		for (size_t i = 0; i < v->count; i++) {
			const struct pbus_param *param;

			pbus_table_param(v->table, v->indexes[i], &param);
			print_change(v->table, param);
		}
		if (fflush(stdout) != 0)
			return TOOL_EXIT_FAILURE;
	}
	while (!stop_requested) {
		int64_t timeout = (int64_t)SIGNAL_CHECK_MS * 1000000, now;
		bool done = false;
		int r;

		if (o->terminal) {
			int64_t next = last_draw + (dirty ? o->interval_ns
							  : (int64_t)AGE_REFRESH_MS * 1000000);

			now = monotonic_ns();
			timeout = next > now ? next - now : 0;
			if (timeout == 0 || resized) {
				view_draw(v);
				last_draw = monotonic_ns();
				dirty = false;
				continue;
			}
			/* While a redraw is pending, changes need not wake us: they
			 * will be drawn then anyway. */
			if (dirty) {
				sleep_ms((unsigned)(timeout / 1000000));
				r = pbus_watch_wait(v->watch, 0);
				if (r > 0)
					done = !view_take_changes(v);
				else if (r == -ESTALE)
					goto stale;
				if (done)
					break;
				continue;
			}
		}
		r = pbus_watch_wait(v->watch, timeout);
		if (r > 0) {
			done = !view_take_changes(v);
			dirty = true;
			if (done)
				break;
		} else if (r == -ESTALE) {
stale:
			status = view_reopen(v);
			if (status != TOOL_EXIT_OK || stop_requested)
				break;
			if (o->count && v->changes >= o->count)
				break;
			if (o->terminal) {
				view_draw(v);
				last_draw = monotonic_ns();
				dirty = false;
			}
		} else if (r != -ETIMEDOUT && r != -EINTR) {
			tool_error("watch: %s", pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
			break;
		}
	}
	if (o->terminal) {
		if (v->table)
			view_draw(v); /* the final picture */
		fputs("\033[?25h", stdout);
		fflush(stdout);
	}
	return status;
}

/* --- Through pbusd (--server) --------------------------------------------- */

static void server_print(struct view *v, uint32_t index)
{
	const struct cached *c = &v->cache[index];
	char *text = tool_value_text(schema_view(v), index, c->data, c->length);
	struct pbus_param_info info;

	pbus_view_describe(schema_view(v), index, &info);
	printf("%s=", info.name);
	tool_print_escaped(stdout, text ? text : "");
	printf(" %s\n", pbus_status_name(c->status));
	free(text);
}

/* The subscription's callback: keep the values, print or mark for drawing. */
static void server_event(struct pbus_client *client, uint32_t subscription,
			 enum pbus_client_event event, const struct pbus_client_value *values,
			 size_t count, void *userdata)
{
	struct view *v = userdata;
	const struct watch_options *o = v->options;
	/* The first values of the subscription are the current ones: shown
	 * with --initial only, not counted. The first after a reconnect may
	 * have changed meanwhile: they count (as when the table is reopened). */
	bool initial = v->first_values;

	(void)client;
	(void)subscription;
	if (event == PBUS_CLIENT_EVENT_DISCONNECTED) {
		v->connected = false;
		v->lost_at = monotonic_ns();
		if (o->terminal)
			fputs("\033[?25h", stdout);
		fflush(stdout);
		tool_error("watch: lost the connection to pbusd of instance '%s' (pbusd stopped or "
			   "restarted); reconnecting", v->context->instance);
		v->drawn_lines = 0;
		v->dirty = true;
		return;
	}
	if (event == PBUS_CLIENT_EVENT_CONNECTED) {
		v->connected = true;
		v->lost_at = 0;
		tool_error("watch: instance '%s' is back", v->context->instance);
		if (o->terminal)
			fputs("\033[?25l", stdout);
		v->dirty = true;
		return;
	}
	v->first_values = false;
	for (size_t i = 0; i < count; i++) {
		struct cached *c;

		if (values[i].index >= v->cache_count ||
		    values[i].length > v->cache[values[i].index].capacity)
			continue; /* not a value of this schema: nothing to show */
		c = &v->cache[values[i].index];
		memcpy(c->data, values[i].value, values[i].length);
		c->length = values[i].length;
		c->status = values[i].status;
		c->timestamp_ns = values[i].timestamp_ns;
		c->have = true;
		if (v->done)
			continue;
		if (initial)
			continue; /* printed below, in the order of the names */
		if (!o->terminal)
			server_print(v, values[i].index);
		v->changes++;
		if (o->count && v->changes >= o->count)
			v->done = true;
	}
	if (initial && !o->terminal && o->initial)
		for (size_t i = 0; i < v->count; i++)
			server_print(v, v->indexes[i]);
	v->dirty = true;
	if (!o->terminal && (fflush(stdout) != 0 || ferror(stdout)))
		v->done = true;
}

/* Resolve the names (or everything that may be subscribed) against the
 * client's schema, make the cache, subscribe. Prints its own errors. */
static int server_resolve(struct view *v)
{
	const struct watch_options *o = v->options;
	const struct pbus_schema *schema = pbus_client_schema(v->client);
	uint32_t total = pbus_schema_param_count(schema), subscription;
	struct pbus_subscribe_options so = {0};
	uint32_t *unique;
	size_t n = 0, u = 0;
	int r;

	v->indexes = calloc(o->name_count ? (size_t)o->name_count : (total ? total : 1),
			    sizeof(*v->indexes));
	unique = calloc(total ? total : 1, sizeof(*unique));
	v->cache = calloc(total ? total : 1, sizeof(*v->cache));
	v->cache_count = total;
	if (!v->indexes || !unique || !v->cache) {
		free(unique);
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	for (uint32_t i = 0; i < total; i++) {
		struct pbus_param_info info;
		bool named = false;

		pbus_client_describe(v->client, i, &info);
		v->cache[i].capacity = info.value_size;
		v->cache[i].data = malloc(info.value_size ? info.value_size : 1);
		if (!v->cache[i].data) {
			free(unique);
			tool_error("out of memory");
			return TOOL_EXIT_FAILURE;
		}
		for (int k = 0; k < o->name_count && !named; k++)
			named = !strcmp(o->names[k], info.name);
		if (!o->name_count && !(info.flags & (PBUS_PARAM_NOREAD | PBUS_PARAM_NOSUBSCRIPTIONS)))
			v->indexes[n++] = i;
		if (named || (!o->name_count &&
			      !(info.flags & (PBUS_PARAM_NOREAD | PBUS_PARAM_NOSUBSCRIPTIONS))))
			unique[u++] = i;
	}
	for (int k = 0; k < o->name_count; k++) {
		struct pbus_param_info info;
		uint32_t index;

		if (pbus_client_find(v->client, o->names[k], &index) < 0) {
			tool_error("unknown parameter '%s'", o->names[k]);
			free(unique);
			return TOOL_EXIT_FAILURE;
		}
		pbus_client_describe(v->client, index, &info);
		if (info.flags & PBUS_PARAM_NOREAD) {
			tool_error("watch %s: parameter is not readable (noRead)", info.name);
			free(unique);
			return TOOL_EXIT_FAILURE;
		}
		if (info.flags & PBUS_PARAM_NOSUBSCRIPTIONS) {
			tool_error("watch %s: parameter cannot be subscribed (noSubscriptions)",
				   info.name);
			free(unique);
			return TOOL_EXIT_FAILURE;
		}
		v->indexes[n++] = index;
	}
	v->count = n;
	if (n == 0) {
		free(unique);
		tool_error("watch: the instance has no parameter that may be subscribed");
		return TOOL_EXIT_FAILURE;
	}
	/* On a terminal pbusd need not send more often than we draw. */
	if (o->terminal)
		so.min_interval_us = (uint32_t)(o->interval_ns / 1000);
	v->first_values = true;
	r = pbus_client_subscribe(v->client, unique, u, &so, server_event, v, &subscription);
	free(unique);
	if (r < 0) {
		tool_error("watch: pbusd refused the subscription: %s", pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	v->connected = true;
	return TOOL_EXIT_OK;
}

static int server_run(struct view *v)
{
	const struct watch_options *o = v->options;
	int64_t last_draw = 0, last_try = 0;
	int status = TOOL_EXIT_OK;

	if (o->terminal) {
		fputs("\033[?25l", stdout);
		view_draw(v);
		last_draw = monotonic_ns();
		v->dirty = false;
	}
	while (!stop_requested && !v->done) {
		struct pollfd p = {.fd = pbus_client_fd(v->client), .events = POLLIN};
		int64_t now = monotonic_ns(), timeout = (int64_t)SIGNAL_CHECK_MS * 1000000;
		int r;

		if (o->terminal) {
			int64_t next = last_draw + (v->dirty ? o->interval_ns
							     : (int64_t)AGE_REFRESH_MS * 1000000);

			if (next <= now || resized) {
				view_draw(v);
				last_draw = monotonic_ns();
				v->dirty = false;
				continue;
			}
			timeout = next - now;
		}
		if (v->lost_at) {
			if (now - v->lost_at >= (int64_t)REOPEN_TIMEOUT_MS * 1000000) {
				tool_error("watch: instance '%s' did not come back within %d s",
					   v->context->instance, REOPEN_TIMEOUT_MS / 1000);
				status = TOOL_EXIT_NO_INSTANCE;
				break;
			}
			/* A request tries to reconnect at once. */
			if (now - last_try >= (int64_t)REOPEN_RETRY_MS * 1000000) {
				pbus_client_ping(v->client, NULL, 0);
				last_try = now;
			}
			if (timeout > (int64_t)REOPEN_RETRY_MS * 1000000)
				timeout = (int64_t)REOPEN_RETRY_MS * 1000000;
		}
		poll(&p, 1, (int)((timeout + 999999) / 1000000)); /* a signal ends it early */
		r = pbus_client_dispatch(v->client);
		if (r == -ESTALE) {
			tool_error("watch: instance '%s' came back with another schema",
				   v->context->instance);
			status = TOOL_EXIT_NO_INSTANCE;
			break;
		}
		if (r < 0 && r != -EBUSY) {
			tool_error("watch: %s", pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
			break;
		}
	}
	if (o->terminal) {
		view_draw(v); /* the final picture */
		fputs("\033[?25h", stdout);
		fflush(stdout);
	}
	if (!o->terminal && ferror(stdout))
		status = TOOL_EXIT_FAILURE;
	return status;
}

static void server_close(struct view *v)
{
	for (uint32_t i = 0; v->cache && i < v->cache_count; i++)
		free(v->cache[i].data);
	free(v->cache);
	free(v->indexes);
	pbus_client_close(v->client);
}

static int run(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"interval", required_argument, NULL, 'n'},
		{"count", required_argument, NULL, 'c'},
		{"initial", no_argument, NULL, 'I'},
		{"server", no_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	struct watch_options o = {.interval_ns = (int64_t)DEFAULT_INTERVAL_MS * 1000000};
	struct view v = {.context = context, .options = &o};
	struct sigaction sa;
	unsigned long long number;
	bool server = false;
	int option, status;

	while ((option = tool_next_option(context, &tool_command_watch, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "n:c:", options,
					  &status))) {
		switch (option) {
		case 'n':
			if (tool_parse_unsigned(optarg, 3600000, &number) < 0 || number == 0)
				return tool_usage_error(&tool_command_watch,
							"--interval '%s' is not a number of "
							"milliseconds (1 ... 3600000)", optarg);
			o.interval_ns = (int64_t)number * 1000000;
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
		}
	}
	if (status >= 0)
		return status;
	o.names = argv + optind;
	o.name_count = argc - optind;
	o.terminal = isatty(STDOUT_FILENO);

	if (server) {
		status = tool_connect(context, 0, "'pbus watch' without --server reads the segment",
				      &v.client);
		if (status != TOOL_EXIT_OK)
			return status;
		status = server_resolve(&v);
	} else {
		status = tool_open(context, PBUS_OPEN_READ, &v.table);
		if (status != TOOL_EXIT_OK)
			return status;
		status = view_resolve(&v);
	}
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
		status = server ? server_run(&v) : view_run(&v);
	}
	if (server)
		server_close(&v);
	else
		view_close(&v);
	return status;
}

const struct tool_command tool_command_watch = {
	.name = "watch",
	.summary = "watch parameters change, live",
	.help = "Usage: pbus [-i NAME] watch [--server] [--interval MS] [--count N] [--initial]\n"
		"                            [NAME...]\n"
		"\n"
		"Watch the named parameters (default: every readable one) change.\n"
		"\n"
		"On a terminal, a block of lines is redrawn in place: name, value, unit,\n"
		"status and age of the value. Ctrl-C quits and leaves the last picture.\n"
		"When stdout is not a terminal, one line is printed per change:\n"
		"  NAME=VALUE STATUS\n"
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
		"  -n, --interval MS    redraw the terminal view at most every MS ms\n"
		"                       (default 100)\n"
		"  -c, --count N        exit after N changes\n"
		"      --initial        not a terminal: first print the current value of\n"
		"                       each parameter (not counted as changes)\n"
		"  -i, --instance NAME  the instance (default: $PBUS_INSTANCE)\n"
		"  -h, --help           show this help\n",
	.run = run,
};
