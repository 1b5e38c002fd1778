/* SPDX-License-Identifier: MIT */
/*
 * source.c: the instance's table or pbusd's socket as one source of values
 * for `pbus get`, `set` and `watch` (source.h).
 *
 * The two differ in how a change reaches us. A table is watched with a
 * pbus_watch: a wait sleeps on a futex until a watched parameter is
 * written, and a value is read when it is wanted, so a parameter written
 * several times between two looks is seen once, with its newest value. If
 * pbusd stops or restarts, the wait says -ESTALE and the table has to be
 * opened again (tool_source_reopen()). Through pbusd, a subscription
 * brings the values themselves, coalesced by pbusd; the source keeps the
 * newest of each (the cache) so that a read gives it. The client
 * reconnects by itself and renews the subscription; the source only makes
 * a request now and then while the connection is down, so that the client
 * tries at once instead of after its backoff.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

#define NS_PER_MS INT64_C(1000000)

/* Through pbusd: the newest value received of a parameter. */
struct cached {
	unsigned char *data; /* capacity bytes: the parameter's value_size */
	uint32_t capacity, length, status;
	uint64_t timestamp_ns, seq;
	bool have;
};

struct tool_source {
	const struct tool_context *context;
	unsigned flags;             /* a table's enum pbus_open_flag */
	struct pbus_table *table;   /* one of the two */
	struct pbus_client *client;
	/* Watching. */
	tool_change_fn callback;
	void *userdata;
	struct pbus_watch *watch;   /* a table's */
	struct cached *cache;       /* pbusd's values, by parameter index */
	uint32_t cache_count;
	bool connected;             /* the subscription is live */
	bool first_values;          /* the next values are the subscription's first */
	int64_t lost_at;            /* CLOCK_MONOTONIC of the loss; 0 while connected */
	int64_t last_try;           /* of a reconnect, by a request */
};

/* A source around @table or @client; prints and returns NULL if out of
 * memory (then closing what it was given). */
static struct tool_source *source_new(const struct tool_context *context, unsigned flags,
				      struct pbus_table *table, struct pbus_client *client)
{
	struct tool_source *s = calloc(1, sizeof(*s));

	if (!s) {
		tool_error("out of memory");
		pbus_table_close(table);
		pbus_client_close(client);
		return NULL;
	}
	s->context = context;
	s->flags = flags;
	s->table = table;
	s->client = client;
	return s;
}

int tool_source_open_table(const struct tool_context *context, unsigned flags,
			   struct tool_source **ret_source)
{
	struct pbus_table *table;
	int status = tool_open(context, flags, &table);

	if (status != TOOL_EXIT_OK)
		return status;
	*ret_source = source_new(context, flags, table, NULL);
	return *ret_source ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}

int tool_source_connect(const struct tool_context *context, unsigned timeout_ms,
			const char *no_socket_hint, struct tool_source **ret_source)
{
	struct pbus_client *client;
	int status = tool_connect(context, timeout_ms, no_socket_hint, &client);

	if (status != TOOL_EXIT_OK)
		return status;
	*ret_source = source_new(context, 0, NULL, client);
	return *ret_source ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}

void tool_source_close(struct tool_source *source)
{
	if (!source)
		return;
	pbus_watch_free(source->watch);
	for (uint32_t i = 0; source->cache && i < source->cache_count; i++)
		free(source->cache[i].data);
	free(source->cache);
	pbus_table_close(source->table);
	pbus_client_close(source->client);
	free(source);
}

bool tool_source_is_server(const struct tool_source *source)
{
	return source->client != NULL;
}

struct pbus_table *tool_source_table(const struct tool_source *source)
{
	return source->table;
}

bool tool_source_ready(const struct tool_source *source)
{
	return source->table || source->client;
}

const struct pbus_view *tool_source_view(const struct tool_source *source)
{
	return source->client ? pbus_client_view(source->client) : pbus_table_view(source->table);
}

int tool_source_find(const struct tool_source *source, const char *name, uint32_t *ret_index)
{
	int r = pbus_view_find(tool_source_view(source), name, ret_index);

	if (r == -ENOENT)
		tool_error("unknown parameter '%s'", name);
	else if (r < 0)
		tool_error("%s: %s", name, pbus_strerror(r));
	return r;
}

int tool_source_read(const struct tool_source *source, uint32_t index,
		     struct tool_value *ret_value)
{
	const struct pbus_param *param;
	const struct cached *c;

	if (!source->client) {
		if (pbus_table_param(source->table, index, &param) < 0) {
			memset(ret_value, 0, sizeof(*ret_value));
			return ret_value->status = -ENOENT;
		}
		return tool_value_read(param, ret_value);
	}
	memset(ret_value, 0, sizeof(*ret_value));
	if (index >= source->cache_count || !source->cache[index].have)
		return ret_value->status = -ENODATA;
	c = &source->cache[index];
	ret_value->data = malloc(c->length ? c->length : 1);
	if (!ret_value->data)
		return ret_value->status = -ENOMEM;
	memcpy(ret_value->data, c->data, c->length);
	ret_value->sample.timestamp_ns = c->timestamp_ns;
	ret_value->sample.seq = c->seq;
	ret_value->sample.status = c->status;
	ret_value->sample.length = c->length;
	return ret_value->status = (int)c->status;
}

int tool_source_write(struct tool_source *source, struct pbus_write *writes, size_t count,
		      unsigned client_flags)
{
	struct pbus_write *sent;
	size_t *from, n = 0;
	int r;

	if (!source->client)
		return client_flags ? -EINVAL : pbus_table_write_many(source->table, writes, count);
	/* The protocol refuses a parameter twice in one batch: the last value
	 * of a parameter is the one that stays, so only it is sent. */
	sent = calloc(count ? count : 1, sizeof(*sent));
	from = calloc(count ? count : 1, sizeof(*from));
	if (!sent || !from) {
		free(sent);
		free(from);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		bool later = false;

		for (size_t k = i + 1; k < count && !later; k++)
			later = writes[k].index == writes[i].index;
		writes[i].result = later ? TOOL_WRITE_SUPERSEDED : 0;
		writes[i].seq = 0;
		if (later)
			continue;
		from[n] = i;
		sent[n].index = writes[i].index;
		sent[n].value = writes[i].value;
		sent[n].length = writes[i].length;
		n++;
	}
	r = pbus_client_set_flags(source->client, sent, n, client_flags);
	for (size_t k = 0; k < n; k++) {
		writes[from[k]].result = sent[k].result;
		writes[from[k]].seq = sent[k].seq;
	}
	free(sent);
	free(from);
	return r;
}

/* --- Watching ----------------------------------------------------------- */

static void deliver(struct tool_source *s, enum tool_change_kind kind, uint32_t index)
{
	struct tool_change change = {.kind = kind, .index = index};

	s->callback(&change, s->userdata);
}

/* The subscription's callback: keep the values, pass the changes on. */
static void on_notify(struct pbus_client *client, uint32_t subscription,
		      enum pbus_client_event event, const struct pbus_client_value *values,
		      size_t count, void *userdata)
{
	struct tool_source *s = userdata;
	/* The first values of the subscription are the current ones, not
	 * changes. The first after a reconnect may have changed meanwhile:
	 * they are changes (as when a table is reopened). */
	bool initial = s->first_values;

	(void)client;
	(void)subscription;
	if (event == PBUS_CLIENT_EVENT_DISCONNECTED) {
		s->connected = false;
		s->lost_at = tool_monotonic_ns();
		deliver(s, TOOL_CHANGE_LOST, 0);
		return;
	}
	if (event == PBUS_CLIENT_EVENT_CONNECTED) {
		s->connected = true;
		s->lost_at = 0;
		deliver(s, TOOL_CHANGE_BACK, 0);
		return;
	}
	s->first_values = false;
	for (size_t i = 0; i < count; i++) {
		struct cached *c;

		if (values[i].index >= s->cache_count ||
		    values[i].length > s->cache[values[i].index].capacity)
			continue; /* not a value of this schema: nothing to show */
		c = &s->cache[values[i].index];
		memcpy(c->data, values[i].value, values[i].length);
		c->length = values[i].length;
		c->status = values[i].status;
		c->timestamp_ns = values[i].timestamp_ns;
		c->seq = values[i].seq;
		c->have = true;
		if (!initial)
			deliver(s, TOOL_CHANGE_VALUE, values[i].index);
	}
	if (initial)
		deliver(s, TOOL_CHANGE_CURRENT, 0);
}

/* Through pbusd: a cache for every parameter, one subscription to the
 * watched ones (each once, in index order). */
static int subscribe(struct tool_source *s, const uint32_t *indexes, size_t count,
		     uint32_t min_interval_us)
{
	const struct pbus_view *view = pbus_client_view(s->client);
	struct pbus_subscribe_options options = {.min_interval_us = min_interval_us};
	uint32_t total = pbus_view_count(view), subscription, *unique;
	bool *wanted;
	size_t n = 0;
	int r;

	unique = calloc(total ? total : 1, sizeof(*unique));
	wanted = calloc(total ? total : 1, sizeof(*wanted));
	s->cache = calloc(total ? total : 1, sizeof(*s->cache));
	s->cache_count = s->cache ? total : 0;
	r = unique && wanted && s->cache ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < total && r == 0; i++) {
		struct pbus_param_info info;

		pbus_view_describe(view, i, &info);
		s->cache[i].capacity = info.value_size;
		s->cache[i].data = malloc(info.value_size ? info.value_size : 1);
		if (!s->cache[i].data)
			r = -ENOMEM;
	}
	if (r < 0) {
		free(unique);
		free(wanted);
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	for (size_t k = 0; k < count; k++)
		if (indexes[k] < total)
			wanted[indexes[k]] = true;
	for (uint32_t i = 0; i < total; i++)
		if (wanted[i])
			unique[n++] = i;
	s->first_values = true;
	r = pbus_client_subscribe(s->client, unique, n, &options, on_notify, s, &subscription);
	free(unique);
	free(wanted);
	if (r < 0) {
		tool_error("watch: pbusd refused the subscription: %s", pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	s->connected = true;
	return TOOL_EXIT_OK;
}

int tool_source_watch(struct tool_source *source, const uint32_t *indexes, size_t count,
		      bool every, uint32_t min_interval_us, tool_change_fn callback,
		      void *userdata)
{
	int r;

	source->callback = callback;
	source->userdata = userdata;
	if (source->client)
		return subscribe(source, indexes, count, min_interval_us);
	/* Watching everything takes the one "any" registration rather than one
	 * per parameter. */
	r = pbus_watch_new(source->table, indexes, every ? 0 : count, &source->watch);
	if (r < 0) {
		tool_error("watch: %s", pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

static int wait_table(struct tool_source *s, int64_t timeout_ns, bool changes_wake)
{
	uint32_t index;
	int r;

	if (changes_wake) {
		r = pbus_watch_wait(s->watch, timeout_ns);
	} else {
		tool_sleep_ms((unsigned)(timeout_ns / NS_PER_MS));
		r = pbus_watch_wait(s->watch, 0);
	}
	if (r == -ESTALE)
		return TOOL_SOURCE_GONE;
	if (r == -ETIMEDOUT || r == -EINTR || (r < 0 && !changes_wake))
		return 0;
	if (r < 0)
		return r;
	while (pbus_watch_next(s->watch, &index) > 0)
		deliver(s, TOOL_CHANGE_VALUE, index);
	return 0;
}

static int wait_server(struct tool_source *s, int64_t timeout_ns)
{
	struct pollfd p = {.fd = pbus_client_fd(s->client), .events = POLLIN};
	int64_t now = tool_monotonic_ns();
	int r;

	if (s->lost_at) {
		if (now - s->lost_at >= (int64_t)REOPEN_TIMEOUT_MS * NS_PER_MS)
			return TOOL_SOURCE_NOT_BACK;
		/* A request tries to reconnect at once. */
		if (now - s->last_try >= (int64_t)REOPEN_RETRY_MS * NS_PER_MS) {
			pbus_client_ping(s->client, NULL, 0);
			s->last_try = now;
		}
		if (timeout_ns > (int64_t)REOPEN_RETRY_MS * NS_PER_MS)
			timeout_ns = (int64_t)REOPEN_RETRY_MS * NS_PER_MS;
	}
	poll(&p, 1, (int)((timeout_ns + NS_PER_MS - 1) / NS_PER_MS)); /* a signal ends it early */
	r = pbus_client_dispatch(s->client);
	return r < 0 && r != -EBUSY ? r : 0;
}

int tool_source_wait(struct tool_source *source, int64_t timeout_ns, bool changes_wake)
{
	return source->client ? wait_server(source, timeout_ns)
			      : wait_table(source, timeout_ns, changes_wake);
}

int tool_source_reopen(struct tool_source *source, int64_t deadline_ns,
		       const volatile sig_atomic_t *stop)
{
	const char *name = source->context->instance;

	pbus_watch_free(source->watch);
	source->watch = NULL;
	pbus_table_close(source->table);
	source->table = NULL;
	while (!*stop) {
		int r = pbus_table_open(name, source->flags, &source->table);

		if (r == 0 && pbus_table_state(source->table) == PBUS_TABLE_LIVE)
			return 0;
		if (r == 0) {
			pbus_table_close(source->table);
			source->table = NULL;
		} else if (r != -ENOENT && r != -EAGAIN) {
			return r;
		}
		if (tool_monotonic_ns() >= deadline_ns)
			return TOOL_SOURCE_NOT_BACK;
		tool_sleep_ms(REOPEN_RETRY_MS);
	}
	return -EINTR;
}

void tool_source_title(const struct tool_source *source, char *buf, size_t size)
{
	unsigned major = 0, minor = 0;
	const char *interface;

	if (source->client) {
		snprintf(buf, size, "%s  via pbusd  %s", source->context->instance,
			 source->connected ? "connected" : "reconnecting");
		return;
	}
	interface = pbus_table_interface(source->table, &major, &minor);
	snprintf(buf, size, "%s  %s %u.%u  %s", pbus_table_instance(source->table),
		 interface ? interface : "?", major, minor,
		 tool_state_name(pbus_table_state(source->table)));
}
