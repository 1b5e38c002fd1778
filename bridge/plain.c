/* SPDX-License-Identifier: MIT */
/*
 * plain.c: the plain-topics mode (docs/fleet.md, "Plain topics"): every
 * topic and payload pbus-bridge publishes in this mode is made here, and
 * nowhere else. Payloads are JSON made with jansson.
 *
 *   PREFIX/INSTANCE/$state         birth and death (retained, QoS 1)
 *   PREFIX/INSTANCE/TOPIC          a value {value, unit, ts, status, seq}
 *   PREFIX/INSTANCE/TOPIC/set      commands (read by the bridge)
 *   PREFIX/INSTANCE/$reply         replies, unless a command names its own
 *
 * Any thread: the functions keep no state.
 */
#include "pbus-bridge.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <parambus/common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATE_LEVEL "$state"
#define REPLY_LEVEL "$reply"

void bridge_time_text(uint64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	gmtime_r(&s, &tm);
	char date[32];
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09" PRIu64 "Z", date, ns % 1000000000u);
}

const char *bridge_status_name(uint32_t status)
{
	static const char *const names[] = {"ok", "minor", "major", "invalid"};
	return status < 4 ? names[status] : "invalid";
}

void bridge_message_free(struct bridge_message *m)
{
	if (!m)
		return;
	free(m->topic);
	free(m->payload);
	*m = (struct bridge_message){0};
}

static char *topic_of(const struct bridge_identity *id, const char *suffix)
{
	char *t = NULL;
	if (asprintf(&t, "%s/%s/%s", id->prefix, id->instance, suffix) < 0)
		return NULL;
	return t;
}

/* Finish @ret from @json (consumed). */
static int finish(json_t *json, char *topic, int qos, bool retain, struct bridge_message *ret)
{
	char *payload = json ? json_dumps(json, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(json);
	if (!payload || !topic) {
		free(payload);
		free(topic);
		return -ENOMEM;
	}
	*ret = (struct bridge_message){.topic = topic, .payload = payload, .length = strlen(payload),
				       .qos = qos, .retain = retain};
	return 0;
}

/* Like finish(), with @value_json (a JSON value's text, kept verbatim so
 * that a number keeps the shortest text pbusd's formatter gave it) as the
 * first member "value" of the object @json. */
static int finish_with_value(json_t *json, const char *value_json, char *topic, int qos, bool retain,
			     struct bridge_message *ret)
{
	char *rest = json ? json_dumps(json, JSON_COMPACT) : NULL;
	json_decref(json);
	char *payload = NULL;
	if (!rest || !topic ||
	    asprintf(&payload, "{\"value\":%s%s%s", value_json, strcmp(rest, "{}") ? "," : "", rest + 1) < 0) {
		free(rest);
		free(topic);
		return -ENOMEM;
	}
	free(rest);
	*ret = (struct bridge_message){.topic = topic, .payload = payload, .length = strlen(payload),
				       .qos = qos, .retain = retain};
	return 0;
}

static char *hash_text(uint64_t hash)
{
	static __thread char buf[17];
	snprintf(buf, sizeof(buf), "%016" PRIx64, hash);
	return buf;
}

static int plain_birth(const struct bridge_identity *id, const struct bridge_param_view *params, size_t count,
		       struct bridge_message *ret)
{
	char ts[48];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	bridge_time_text((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec, ts, sizeof(ts));
	json_t *list = json_array();
	for (size_t i = 0; list && i < count; i++) {
		const struct bridge_fleet_param *f = params[i].fleet;
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b}", "name", f->name,
						      "topic", f->topic, "type", params[i].type, "unit",
						      params[i].unit, "published", f->publish, "retained",
						      f->retain, "command", f->command));
	}
	json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:I, s:b, s:s, s:o?}", "state", "online", "mode", "plain",
			      "instance", id->instance, "interface", id->interface, "schema",
			      hash_text(id->schema_hash), "session", (json_int_t)id->session, "pbusd",
			      id->pbusd_connected, "ts", ts, "parameters", list);
	return finish(j, topic_of(id, STATE_LEVEL), 1, true, ret);
}

static int plain_death(const struct bridge_identity *id, struct bridge_message *ret)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:I}", "state", "offline", "instance", id->instance, "schema",
			      hash_text(id->schema_hash), "session", (json_int_t)id->session);
	return finish(j, topic_of(id, STATE_LEVEL), 1, true, ret);
}

static int plain_value(const struct bridge_identity *id, const struct bridge_param_view *param,
		       const struct bridge_value *value, struct bridge_message *ret)
{
	char ts[48];
	bridge_time_text(value->timestamp_ns, ts, sizeof(ts));
	json_t *j = json_pack("{s:s, s:s, s:s, s:I}", "unit", param->unit, "ts", ts, "status",
			      bridge_status_name(value->status), "seq", (json_int_t)value->seq);
	return finish_with_value(j, value->json, topic_of(id, param->fleet->topic), 0, param->fleet->retain, ret);
}

static int plain_command_filter(const struct bridge_identity *id, char **ret_filter)
{
	return (*ret_filter = topic_of(id, "#")) ? 0 : -ENOMEM;
}

static bool plain_command_topic(const struct bridge_identity *id, const char *topic, char *param_topic, size_t size)
{
	size_t p = strlen(id->prefix), i = strlen(id->instance), n = strlen(topic);
	if (n < p + i + 2 + 4 || memcmp(topic, id->prefix, p) != 0 || topic[p] != '/' ||
	    memcmp(topic + p + 1, id->instance, i) != 0 || topic[p + 1 + i] != '/' ||
	    strcmp(topic + n - 4, "/set") != 0)
		return false;
	const char *start = topic + p + i + 2;
	size_t length = (size_t)(topic + n - 4 - start);
	if (length == 0 || length >= size)
		return false;
	memcpy(param_topic, start, length);
	param_topic[length] = '\0';
	return true;
}

static int plain_reply(const struct bridge_identity *id, const struct bridge_job *job, struct bridge_message *ret)
{
	(void)id;
	json_t *j = json_pack("{s:s, s:s, s:b}", "id", job->command.id, "topic", job->topic, "ok", job->ok);
	if (!j)
		return -ENOMEM;
	if (job->ok)
		json_object_set_new(j, "seq", json_integer((json_int_t)job->seq));
	else
		json_object_set_new(j, "error", json_string(job->error));
	if (job->duplicate)
		json_object_set_new(j, "duplicate", json_true());
	char *topic = strdup(job->response_topic);
	if (job->value_json)
		return finish_with_value(j, job->value_json, topic, 1, false, ret);
	return finish(j, topic, 1, false, ret);
}

static int plain_reply_topic(const struct bridge_identity *id, char **ret_topic)
{
	return (*ret_topic = topic_of(id, REPLY_LEVEL)) ? 0 : -ENOMEM;
}

const struct bridge_mode bridge_mode_plain = {
	.name = "plain",
	.birth = plain_birth,
	.death = plain_death,
	.value = plain_value,
	.command_filter = plain_command_filter,
	.command_topic = plain_command_topic,
	.reply = plain_reply,
	.reply_topic = plain_reply_topic,
};
