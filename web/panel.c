/* SPDX-License-Identifier: MIT */
/*
 * panel.c: pbus-web's side towards pbusd (docs/web.md, "Threading"). Two
 * threads, each with its own pbus_client, so that nothing a browser does
 * waits for pbusd in the lws thread:
 *
 *  - the pbusd thread connects (again and again: 50 ms after a loss, then
 *    doubling up to 2 s while pbusd stays away), builds the model of the
 *    schema pbusd serves, subscribes ONCE to every readable parameter that
 *    may be subscribed (one subscription per set of parameters that share
 *    the deployment's deadband and rate, never faster than --interval; the
 *    others are read once per connect), and stores each value it is told
 *    as JSON text, with its status, timestamp and version, in the panel's
 *    latest values. Each store takes the next generation number; the lws
 *    thread compares them with what each WebSocket last sent, so a slow
 *    browser gets the newest values and never a backlog. After each batch
 *    it wakes the lws thread with lws_cancel_service().
 *  - the SET thread takes the sessions' writes from a queue, one job at a
 *    time, parses each value with the client's schema view (the rules of
 *    `pbus set`), sends one SET (a batch is atomic) and queues the result,
 *    with the current values of the batch when it was refused. A SET of a
 *    persistent parameter waits for pbusd's save: that delays the SETs
 *    queued behind it (of every browser), never the values, nor the
 *    sessions themselves.
 *
 * panel->lock guards the model pointer, the values, the connection state
 * and both queues (pbus-web.h).
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <parambus/client.h>

#include "../common/describe.h"
#include "../common/log.h"
#include "pbus-web.h"

#define BACKOFF_FIRST_MS 50
#define BACKOFF_MAX_MS 2000

/* ------------------------------------------------------------- the model */

static void model_free(struct web_model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->count; i++) {
		struct web_param *p = &m->params[i];
		free(p->name);
		free(p->unit);
		free(p->description);
		free(p->group);
		free(p->min);
		free(p->max);
		free(p->step);
		free(p->def);
		for (uint32_t k = 0; k < p->label_count; k++)
			free(p->labels[k]);
		free(p->labels);
	}
	free(m->params);
	free(m->interface);
	free(m);
}

/* The shortest text that reads back as @v (as a float when @single). */
static void shortest(char *buf, size_t size, double v, bool single)
{
	for (int precision = single ? 6 : 15; precision <= 17; precision++) {
		snprintf(buf, size, "%.*g", precision, v);
		double back = strtod(buf, NULL);
		if (single ? (float)back == (float)v : back == v)
			return;
	}
}

/* A limit as JSON (a number; a string for an integer beyond 2^53). */
static char *number_json(unsigned type, union pbus_number n)
{
	char buf[64];
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	switch (element) {
	case PBUS_TYPE_FLOAT:
	case PBUS_TYPE_DOUBLE:
		if (!isfinite(n.d))
			return NULL;
		shortest(buf, sizeof(buf), n.d, element == PBUS_TYPE_FLOAT);
		break;
	case PBUS_TYPE_UINT8: case PBUS_TYPE_UINT16: case PBUS_TYPE_UINT32: case PBUS_TYPE_UINT64:
	case PBUS_TYPE_BOOL:
		snprintf(buf, sizeof(buf), n.u > (1ull << 53) ? "\"%" PRIu64 "\"" : "%" PRIu64, n.u);
		break;
	default:
		snprintf(buf, sizeof(buf), (n.i > (1ll << 53) || n.i < -(1ll << 53)) ? "\"%" PRId64 "\"" : "%" PRId64,
			 n.i);
		break;
	}
	return strdup(buf);
}

/* The text of a value of @index formatted by @client (malloc'd), or NULL. */
static char *format_text(const struct pbus_client *client, uint32_t index, const void *value, size_t length)
{
	char small[256];
	int n = pbus_client_format(client, index, value, length, small, sizeof(small));
	if (n < 0)
		return NULL;
	if ((size_t)n < sizeof(small))
		return strdup(small);
	char *big = malloc((size_t)n + 1);
	if (big && pbus_client_format(client, index, value, length, big, (size_t)n + 1) < 0) {
		free(big);
		return NULL;
	}
	return big;
}

/* The JSON of a value (malloc'd), or NULL. */
static char *value_json(const struct pbus_client *client, uint32_t index, unsigned type, const void *value,
			size_t length)
{
	char *text = format_text(client, index, value, length);
	if (!text)
		return NULL;
	struct web_out o = {0};
	web_out_value(&o, type, text);
	free(text);
	if (o.failed) {
		web_out_free(&o);
		return NULL;
	}
	return o.data;
}

/* A subscriber's hint in the schema (docs/schema-format.md: deadband=,
 * max-rate-hz=): its value, or 0 when absent. One that is not a decimal
 * number from 0 (excluded when @positive) to @max is logged and ignored. */
static double schema_hint(const struct pbus_schema *schema, uint32_t index, const char *name, const char *key,
			  bool positive, double max)
{
	const char *text = pbus_schema_param_extra(schema, index, key);
	if (!text)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (!*text || *end || errno || strpbrk(text, "xXpP \t\n") || !isfinite(v) || v < 0 || (positive && v == 0) ||
	    v > max) {
		log_msg(LOG_WARNING, "schema: %s=%.40s of '%s' is not a number from 0%s to %g; ignored", key, text,
			name, positive ? " (excluded)" : "", max);
		return 0;
	}
	return v;
}

static struct web_model *model_build(const struct pbus_client *client)
{
	const struct pbus_schema *schema = pbus_client_schema(client);
	struct web_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->refs = 1;
	m->hash = pbus_schema_hash(schema);
	m->count = pbus_schema_param_count(schema);
	const char *itf = pbus_schema_interface(schema, NULL, NULL);
	m->interface = itf ? strdup(itf) : NULL;
	m->params = calloc(m->count ? m->count : 1, sizeof(*m->params));
	if (!m->params || (itf && !m->interface))
		goto fail;
	for (uint32_t i = 0; i < m->count; i++) {
		struct web_param *p = &m->params[i];
		struct pbus_param_info info;
		if (pbus_client_describe(client, i, &info) < 0)
			goto fail;
		p->index = i;
		p->type = info.type;
		p->flags = info.flags;
		p->update_class = info.update_class;
		p->name = strdup(info.name);
		p->unit = strdup(info.unit);
		p->description = strdup(info.description);
		p->group = strdup(info.group);
		if (!p->name || !p->unit || !p->description || !p->group)
			goto fail;
		if ((info.type & PBUS_TYPE_ARRAY_FLAG) && info.element_size)
			p->count = info.value_size / info.element_size;
		if ((info.flags & PBUS_PARAM_HAS_MIN) && !(p->min = number_json(info.type, info.min)))
			goto fail;
		if ((info.flags & PBUS_PARAM_HAS_MAX) && !(p->max = number_json(info.type, info.max)))
			goto fail;
		if ((info.flags & PBUS_PARAM_HAS_STEP) && !(p->step = number_json(info.type, info.step)))
			goto fail;
		if ((info.flags & PBUS_PARAM_HAS_DEFAULT) &&
		    !(p->def = value_json(client, i, info.type, info.default_value, info.default_length)))
			goto fail;
		if ((info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG) == PBUS_TYPE_ENUM && info.enum_count) {
			p->labels = calloc(info.enum_count, sizeof(*p->labels));
			if (!p->labels)
				goto fail;
			for (uint32_t k = 0; k < info.enum_count; k++) {
				const char *label;
				if (pbus_client_enumerator(client, i, k, &label, NULL) < 0 ||
				    !(p->labels[k] = strdup(label)))
					goto fail;
				p->label_count = k + 1;
			}
		}
		p->readable = !(info.flags & PBUS_PARAM_NOREAD);
		p->live = p->readable && !(info.flags & PBUS_PARAM_NOSUBSCRIPTIONS);
		p->deadband = schema_hint(schema, i, p->name, "deadband", false, DBL_MAX);
		p->max_rate_hz = schema_hint(schema, i, p->name, "max-rate-hz", true, 1000);
	}
	return m;
fail:
	model_free(m);
	return NULL;
}

struct web_model *web_panel_model(struct web_panel *panel)
{
	pthread_mutex_lock(&panel->lock);
	struct web_model *m = panel->model;
	if (m)
		m->refs++;
	pthread_mutex_unlock(&panel->lock);
	return m;
}

void web_model_unref(struct web_panel *panel, struct web_model *model)
{
	if (!model)
		return;
	pthread_mutex_lock(&panel->lock);
	bool last = --model->refs == 0;
	pthread_mutex_unlock(&panel->lock);
	if (last)
		model_free(model);
}

const struct web_param *web_model_find(const struct web_model *model, const char *name)
{
	for (uint32_t i = 0; i < model->count; i++)
		if (strcmp(model->params[i].name, name) == 0)
			return &model->params[i];
	return NULL;
}

/* ------------------------------------------------------- the pbusd thread */

struct fresh {
	uint32_t index;
	char *json;
	uint32_t status;
	uint64_t timestamp_ns, seq;
};

/* Store @count values received (the JSON made outside the lock) and wake
 * the lws thread. @prime: the subscription's values (the first of them
 * after a connect make the panel primed: sessions may get their hello). */
static void store(struct web_panel *panel, const struct pbus_client *client, const struct pbus_client_value *values,
		  size_t count, bool prime)
{
	struct fresh *f = calloc(count ? count : 1, sizeof(*f));
	if (!f) {
		log_msg(LOG_WARNING, "%zu values from pbusd dropped: out of memory", count);
		return;
	}
	pthread_mutex_lock(&panel->lock);
	const struct web_model *m = panel->model;
	pthread_mutex_unlock(&panel->lock);
	/* the model is only replaced by this thread: no reference needed */
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		const struct pbus_client_value *v = &values[i];
		if (!m || v->index >= m->count)
			continue;
		f[n].json = value_json(client, v->index, m->params[v->index].type, v->value, v->length);
		if (!f[n].json)
			continue;
		f[n].index = v->index;
		f[n].status = v->status;
		f[n].timestamp_ns = v->timestamp_ns;
		f[n].seq = v->seq;
		n++;
	}
	pthread_mutex_lock(&panel->lock);
	for (size_t i = 0; i < n; i++) {
		struct web_value *slot = &panel->values[f[i].index];
		char *old = slot->json;
		slot->json = f[i].json;
		slot->status = f[i].status;
		slot->timestamp_ns = f[i].timestamp_ns;
		slot->seq = f[i].seq;
		slot->gen = ++panel->gen;
		f[i].json = old; /* freed below, outside the lock */
	}
	if (prime) {
		panel->primed = panel->connected;
		panel->first_done = true;
		pthread_cond_broadcast(&panel->ready_cond);
	}
	pthread_mutex_unlock(&panel->lock);
	for (size_t i = 0; i < n; i++)
		free(f[i].json);
	free(f);
	lws_cancel_service(panel->context);
}

/* pbusd thread: the panel is primed once every subscription has brought
 * its first values. */
static void on_notify(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
		      const struct pbus_client_value *values, size_t count, void *userdata)
{
	struct web_panel *panel = userdata;
	if (event != PBUS_CLIENT_EVENT_VALUES)
		return;
	for (size_t i = 0; i < panel->sub_count; i++) {
		struct web_subscription *s = &panel->subs[i];
		if (s->id == subscription && !s->primed) {
			s->primed = true;
			panel->unprimed--;
		}
	}
	store(panel, client, values, count, panel->unprimed == 0);
}

static void subscriptions_free(struct web_panel *panel)
{
	for (size_t i = 0; i < panel->sub_count; i++)
		free(panel->subs[i].indexes);
	free(panel->subs);
	panel->subs = NULL;
	panel->sub_count = panel->unprimed = 0;
}

/*
 * Sort the model's live parameters into subscriptions by deadband and
 * interval (the deployment's Deadband and MaxRateHz, the interval never
 * below --interval): panel->subs. 0 or -ENOMEM.
 */
static int subscriptions_plan(struct web_panel *panel, const struct web_model *m)
{
	subscriptions_free(panel);
	panel->subs = calloc(WEB_SUBSCRIPTIONS_MAX, sizeof(*panel->subs));
	if (!panel->subs)
		return -ENOMEM;
	uint32_t base_us = panel->interval_ms * 1000u;
	bool crowded = false;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct web_param *p = &m->params[i];
		if (!p->live)
			continue;
		double deadband = p->deadband;
		uint32_t interval_us = base_us;
		if (p->max_rate_hz > 0 && 1e6 / p->max_rate_hz > base_us)
			interval_us = (uint32_t)(1e6 / p->max_rate_hz);
		size_t k = 0;
		while (k < panel->sub_count &&
		       (panel->subs[k].deadband != deadband || panel->subs[k].interval_us != interval_us))
			k++;
		if (k == panel->sub_count && k == WEB_SUBSCRIPTIONS_MAX) {
			/* too many distinct pairs: the plain subscription takes it */
			crowded = true;
			deadband = 0;
			interval_us = base_us;
			for (k = 0; k < panel->sub_count &&
				    (panel->subs[k].deadband != 0 || panel->subs[k].interval_us != base_us);)
				k++;
			if (k == panel->sub_count) /* full, none plain: the first one */
				k = 0;
		}
		struct web_subscription *s = &panel->subs[k];
		if (k == panel->sub_count) {
			if (!(s->indexes = calloc(m->count, sizeof(*s->indexes))))
				return -ENOMEM;
			s->deadband = deadband;
			s->interval_us = interval_us;
			panel->sub_count++;
		}
		s->indexes[s->count++] = i;
	}
	if (crowded)
		log_msg(LOG_WARNING, "the schema's parameters ask for more than %d pairs of deadband and rate; the "
			"rest join the subscription without deadband at --interval (or, if none, the first one)",
			WEB_SUBSCRIPTIONS_MAX);
	panel->unprimed = panel->sub_count;
	return 0;
}

/* Set the connection state and wake the lws thread. */
static void set_connected(struct web_panel *panel, bool connected)
{
	pthread_mutex_lock(&panel->lock);
	panel->connected = connected;
	panel->primed = false;
	panel->epoch++;
	pthread_mutex_unlock(&panel->lock);
	lws_cancel_service(panel->context);
}

/* A connection is up: take its model (a new one if the schema changed),
 * forget the old values, subscribe, read the rest. 0 or -errno. */
static int attach(struct web_panel *panel, struct pbus_client *client)
{
	struct web_model *fresh = model_build(client);
	if (!fresh)
		return -ENOMEM;
	struct web_value *values = NULL;
	struct web_model *old = NULL;
	pthread_mutex_lock(&panel->lock);
	bool changed = !panel->model || panel->model->hash != fresh->hash;
	pthread_mutex_unlock(&panel->lock);
	if (changed && !(values = calloc(fresh->count ? fresh->count : 1, sizeof(*values)))) {
		model_free(fresh);
		return -ENOMEM;
	}
	pthread_mutex_lock(&panel->lock);
	if (changed) {
		old = panel->model;
		struct web_value *old_values = panel->values;
		uint32_t old_count = old ? old->count : 0;
		panel->model = fresh;
		panel->values = values;
		values = old_values;
		fresh = NULL;
		if (old && --old->refs != 0)
			old = NULL; /* a session still holds it: its unref frees it */
		for (uint32_t i = 0; i < old_count; i++)
			free(values[i].json);
	} else {
		/* the same schema: the old values are not the new pbusd's */
		for (uint32_t i = 0; i < panel->model->count; i++) {
			free(panel->values[i].json);
			panel->values[i].json = NULL;
		}
	}
	pthread_mutex_unlock(&panel->lock);
	free(values);
	model_free(old);
	model_free(fresh);
	set_connected(panel, true);

	struct web_model *m = panel->model; /* only this thread replaces it */
	uint32_t *once = calloc(m->count ? m->count : 1, sizeof(*once));
	size_t once_n = 0;
	int r = subscriptions_plan(panel, m);
	if (!once || r < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < m->count; i++)
		if (!m->params[i].live && m->params[i].readable)
			once[once_n++] = i;
	for (size_t k = 0; k < panel->sub_count; k++) {
		struct web_subscription *s = &panel->subs[k];
		struct pbus_subscribe_options o = {.min_interval_us = s->interval_us, .deadband = s->deadband};
		r = pbus_client_subscribe(client, s->indexes, s->count, &o, on_notify, panel, &s->id);
		if (r < 0) {
			log_msg(LOG_WARNING, "pbusd: subscribe to %zu parameters: %s", s->count, pbus_strerror(r));
			goto out;
		}
	}
	if (once_n) {
		struct pbus_client_value *v = calloc(once_n, sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		r = pbus_client_get(client, once, once_n, v);
		if (r == 0)
			store(panel, client, v, once_n, false);
		else
			log_msg(LOG_WARNING, "pbusd: read %zu parameters that cannot be subscribed: %s", once_n,
				pbus_strerror(r));
		free(v);
		r = r == -EACCES ? 0 : r;
	}
out:
	if (r == 0 && !panel->sub_count) {
		pthread_mutex_lock(&panel->lock);
		panel->primed = true;
		panel->first_done = true;
		pthread_cond_broadcast(&panel->ready_cond);
		pthread_mutex_unlock(&panel->lock);
		lws_cancel_service(panel->context);
	}
	free(once);
	return r;
}

/* Wait @ms or until the stop event; true when stopping. */
static bool wait_or_stop(struct web_panel *panel, int ms)
{
	struct pollfd p = {.fd = panel->stop_fd, .events = POLLIN};
	return poll(&p, 1, ms) > 0;
}

static void *pbusd_main(void *arg)
{
	struct web_panel *panel = arg;
	int backoff = BACKOFF_FIRST_MS;
	int last_error = 0;
	for (;;) {
		struct pbus_client_options options = {
			.socket_dir = panel->socket_dir,
			.name = "pbus-web",
			.no_reconnect = true,
		};
		struct pbus_client *client = NULL;
		int r = pbus_client_connect(panel->instance, &options, &client);
		if (r == 0) {
			r = attach(panel, client);
			if (r < 0) {
				set_connected(panel, false);
				pbus_client_close(client);
				client = NULL;
			}
		}
		if (r < 0) {
			if (r != last_error)
				log_msg(LOG_WARNING, "pbusd of instance %s: %s (trying again)", panel->instance,
					pbus_strerror(r));
			last_error = r;
			pthread_mutex_lock(&panel->lock);
			panel->first_done = true;
			pthread_cond_broadcast(&panel->ready_cond);
			pthread_mutex_unlock(&panel->lock);
			if (wait_or_stop(panel, backoff))
				return NULL;
			backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
			continue;
		}
		log_msg(LOG_INFO, "pbusd of instance %s: connected, schema %016" PRIx64, panel->instance,
			pbus_schema_hash(pbus_client_schema(client)));
		last_error = 0;
		backoff = BACKOFF_FIRST_MS;
		bool stop = false;
		while (pbus_client_connected(client)) {
			struct pollfd p[2] = {{.fd = pbus_client_fd(client), .events = POLLIN},
					      {.fd = panel->stop_fd, .events = POLLIN}};
			if (poll(p, 2, -1) < 0 && errno != EINTR)
				break;
			if (p[1].revents) {
				stop = true;
				break;
			}
			r = pbus_client_dispatch(client);
			if (r < 0)
				break;
		}
		pbus_client_close(client);
		set_connected(panel, false);
		if (stop)
			return NULL;
		log_msg(LOG_WARNING, "pbusd of instance %s: connection lost (reconnecting)", panel->instance);
		if (wait_or_stop(panel, backoff))
			return NULL;
	}
}

/* --------------------------------------------------------- the SET thread */

/* Why @client would refuse (or refused) @text for @index: one line in
 * @buf, as `pbus set` says it (common/describe.c). */
static void refusal(const struct pbus_client *client, uint32_t index, const char *text, int err, char *buf,
		    size_t size)
{
	describe_refusal(pbus_client_view(client), index, text, err, "pbus-web", buf, size);
}

/* The current values of the job's parameters as a JSON list of values
 * entries (malloc'd), or NULL. */
static char *current_values(struct pbus_client *client, const struct web_set_job *job)
{
	uint32_t indexes[WEB_SET_MAX_WRITES];
	struct pbus_client_value v[WEB_SET_MAX_WRITES];
	size_t n = 0;
	for (size_t i = 0; i < job->count; i++) {
		struct pbus_param_info info;
		bool seen = false;
		for (size_t k = 0; k < n; k++)
			seen |= indexes[k] == job->writes[i].index;
		if (!seen && pbus_client_describe(client, job->writes[i].index, &info) == 0 &&
		    !(info.flags & PBUS_PARAM_NOREAD))
			indexes[n++] = job->writes[i].index;
	}
	if (n == 0 || pbus_client_get(client, indexes, n, v) < 0)
		return NULL;
	struct web_out o = {0};
	web_out_append(&o, "[", 1);
	for (size_t i = 0; i < n; i++) {
		struct pbus_param_info info;
		pbus_client_describe(client, v[i].index, &info);
		struct web_value wv = {
			.json = value_json(client, v[i].index, info.type, v[i].value, v[i].length),
			.status = v[i].status,
			.timestamp_ns = v[i].timestamp_ns,
			.seq = v[i].seq,
		};
		if (!wv.json) {
			o.failed = true;
			break;
		}
		web_message_values_add(&o, i == 0, v[i].index, &wv);
		free(wv.json);
	}
	web_out_append(&o, "]", 1);
	if (o.failed) {
		web_out_free(&o);
		return NULL;
	}
	return o.data;
}

static void run_job(struct web_panel *panel, struct pbus_client **clientp, struct web_set_job *job)
{
	struct pbus_client *client = *clientp;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (!client) {
			struct pbus_client_options options = {.socket_dir = panel->socket_dir, .name = "pbus-web set"};
			int r = pbus_client_connect(panel->instance, &options, &client);
			if (r < 0) {
				snprintf(job->error, sizeof(job->error), "set: pbusd of instance %s: %s", panel->instance,
					 pbus_strerror(r));
				client = NULL;
				goto out;
			}
		}
		if (pbus_schema_hash(pbus_client_schema(client)) == job->model_hash)
			break;
		pbus_client_close(client);
		client = NULL;
		if (attempt == 1) {
			snprintf(job->error, sizeof(job->error),
				 "set: the instance's schema changed (reload the page)");
			goto out;
		}
	}

	struct pbus_write writes[WEB_SET_MAX_WRITES];
	unsigned char *bufs[WEB_SET_MAX_WRITES] = {0};
	size_t parsed = 0;
	int r = 0;
	for (; parsed < job->count; parsed++) {
		struct web_set_write *w = &job->writes[parsed];
		struct pbus_param_info info;
		r = pbus_client_describe(client, w->index, &info);
		if (r < 0) {
			snprintf(job->error, sizeof(job->error), "set: no parameter %" PRIu32, w->index);
			break;
		}
		if (info.flags & PBUS_PARAM_READONLY) {
			refusal(client, w->index, w->text, -EACCES, job->error, sizeof(job->error));
			r = -EACCES;
			break;
		}
		size_t length = 0;
		bufs[parsed] = malloc(info.value_size ? info.value_size : 1);
		if (!bufs[parsed]) {
			r = -ENOMEM;
			snprintf(job->error, sizeof(job->error), "set: out of memory");
			break;
		}
		r = pbus_client_parse(client, w->index, w->text, bufs[parsed], info.value_size, &length);
		if (r < 0) {
			refusal(client, w->index, w->text, r, job->error, sizeof(job->error));
			parsed++;
			break;
		}
		writes[parsed] = (struct pbus_write){.index = w->index, .value = bufs[parsed], .length = length};
	}
	if (r == 0) {
		r = pbus_client_set(client, writes, job->count);
		if (r == 0) {
			job->ok = true;
		} else {
			size_t which = 0;
			while (which + 1 < job->count && writes[which].result == 0)
				which++;
			int why = writes[which].result ? writes[which].result : r;
			if (r == -ENOTCONN || r == -ETIMEDOUT || r == -EPROTO || r == -ESTALE)
				snprintf(job->error, sizeof(job->error), "set: pbusd: %s%s", pbus_strerror(r),
					 r == -ETIMEDOUT ? " (the values may or may not be written)" : "");
			else
				refusal(client, job->writes[which].index, job->writes[which].text, why, job->error,
					sizeof(job->error));
		}
	}
	for (size_t i = 0; i < parsed; i++)
		free(bufs[i]);
	if (!job->ok && pbus_client_connected(client))
		job->current = current_values(client, job);
	if (r == -ENOTCONN || r == -EPROTO || r == -ESTALE) {
		pbus_client_close(client);
		client = NULL;
	}
out:
	*clientp = client;
}

static void *set_main(void *arg)
{
	struct web_panel *panel = arg;
	struct pbus_client *client = NULL;
	pthread_mutex_lock(&panel->lock);
	for (;;) {
		while (!panel->jobs && !panel->stopping)
			pthread_cond_wait(&panel->set_cond, &panel->lock);
		if (panel->stopping)
			break;
		struct web_set_job *job = panel->jobs;
		panel->jobs = job->next;
		if (!panel->jobs)
			panel->jobs_tail = &panel->jobs;
		job->next = NULL;
		pthread_mutex_unlock(&panel->lock);
		run_job(panel, &client, job);
		pthread_mutex_lock(&panel->lock);
		*panel->results_tail = job;
		panel->results_tail = &job->next;
		pthread_mutex_unlock(&panel->lock);
		lws_cancel_service(panel->context);
		pthread_mutex_lock(&panel->lock);
	}
	pthread_mutex_unlock(&panel->lock);
	pbus_client_close(client);
	return NULL;
}

void web_panel_submit(struct web_panel *panel, struct web_set_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&panel->lock);
	*panel->jobs_tail = job;
	panel->jobs_tail = &job->next;
	pthread_cond_signal(&panel->set_cond);
	pthread_mutex_unlock(&panel->lock);
}

struct web_set_job *web_panel_take_results(struct web_panel *panel)
{
	pthread_mutex_lock(&panel->lock);
	struct web_set_job *list = panel->results;
	panel->results = NULL;
	panel->results_tail = &panel->results;
	pthread_mutex_unlock(&panel->lock);
	return list;
}

void web_set_job_free(struct web_set_job *job)
{
	if (!job)
		return;
	for (size_t i = 0; i < job->count; i++)
		free(job->writes[i].text);
	free(job->current);
	free(job);
}

/* ------------------------------------------------------------ start, stop */

int web_panel_start(struct web_panel *panel)
{
	pthread_mutex_init(&panel->lock, NULL);
	pthread_cond_init(&panel->set_cond, NULL);
	pthread_cond_init(&panel->ready_cond, NULL);
	panel->jobs_tail = &panel->jobs;
	panel->results_tail = &panel->results;
	panel->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (panel->stop_fd < 0)
		return -errno;
	int r = pthread_create(&panel->pbusd_thread, NULL, pbusd_main, panel);
	if (r)
		return -r;
	r = pthread_create(&panel->set_thread, NULL, set_main, panel);
	if (r) {
		uint64_t one = 1;
		if (write(panel->stop_fd, &one, sizeof(one)) < 0)
			abort();
		pthread_join(panel->pbusd_thread, NULL);
		return -r;
	}
	panel->started = true;
	return 0;
}

void web_panel_wait_first(struct web_panel *panel, unsigned ms)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&panel->lock);
	while (!panel->first_done)
		if (pthread_cond_timedwait(&panel->ready_cond, &panel->lock, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&panel->lock);
}

void web_panel_stop(struct web_panel *panel)
{
	if (panel->started) {
		uint64_t one = 1;
		if (write(panel->stop_fd, &one, sizeof(one)) < 0)
			log_msg(LOG_ERROR, "stop the pbusd thread: %s", strerror(errno));
		pthread_mutex_lock(&panel->lock);
		panel->stopping = true;
		pthread_cond_signal(&panel->set_cond);
		pthread_mutex_unlock(&panel->lock);
		pthread_join(panel->pbusd_thread, NULL);
		pthread_join(panel->set_thread, NULL);
		panel->started = false;
	}
	if (panel->stop_fd > 0)
		close(panel->stop_fd);
	subscriptions_free(panel);
	while (panel->jobs) {
		struct web_set_job *j = panel->jobs;
		panel->jobs = j->next;
		web_set_job_free(j);
	}
	while (panel->results) {
		struct web_set_job *j = panel->results;
		panel->results = j->next;
		web_set_job_free(j);
	}
	if (panel->model) {
		for (uint32_t i = 0; i < panel->model->count; i++)
			free(panel->values[i].json);
		free(panel->values);
		model_free(panel->model);
		panel->model = NULL;
	}
}
