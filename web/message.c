/* SPDX-License-Identifier: MIT */
/*
 * message.c: the WebSocket message codec of pbus-web (docs/web.md,
 * "Messages"). Every message the browser and pbus-web exchange is encoded
 * or decoded here and only here: JSON text frames, one object each, its
 * kind in "t". Decoding uses jansson and checks every field (unknown
 * fields are refused, so that a typo is not silently ignored); encoding
 * writes the text directly, because the values message is on the hot path
 * and its parts (the values' JSON) are made once per change by the pbusd
 * thread, not once per browser.
 *
 * Every string sent is valid UTF-8 (invalid bytes become U+FFFD): a
 * browser closes a WebSocket that sends a text frame that is not.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <parambus/common.h>

#include "pbus-web.h"

/* Append a string literal. */
#define OUT(o, literal) web_out_append((o), (literal), sizeof(literal) - 1)

/* ------------------------------------------------------------- decoding */

static int fail(char *error, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *error, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(error, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A request id: an integer 0 … 2^53 or a string of at most WEB_ID_MAX
 * bytes, kept as its JSON text. */
static int decode_id(json_t *id, char *out, char *error, size_t size)
{
	if (json_is_integer(id)) {
		json_int_t v = json_integer_value(id);
		if (v < 0 || v > (json_int_t)1 << 53)
			return fail(error, size, "\"id\" out of range (0 to 2^53)");
		snprintf(out, WEB_ID_MAX + 1, "%" JSON_INTEGER_FORMAT, v);
		return 0;
	}
	if (json_is_string(id)) {
		if (json_string_length(id) > WEB_ID_MAX - 8)
			return fail(error, size, "\"id\" longer than %d bytes", WEB_ID_MAX - 8);
		char *text = json_dumps(id, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
		if (!text || strlen(text) > WEB_ID_MAX) {
			free(text);
			return fail(error, size, "\"id\" too long once escaped");
		}
		snprintf(out, WEB_ID_MAX + 1, "%s", text);
		free(text);
		return 0;
	}
	return fail(error, size, "\"id\" is not an integer or a string");
}

static int decode_write(json_t *w, size_t i, struct web_in_write *out, char *error, size_t size)
{
	if (!json_is_object(w))
		return fail(error, size, "write %zu is not an object", i);
	json_t *name = NULL, *index = NULL, *value = NULL;
	const char *key;
	json_t *v;
	json_object_foreach(w, key, v) {
		if (strcmp(key, "name") == 0)
			name = v;
		else if (strcmp(key, "index") == 0)
			index = v;
		else if (strcmp(key, "value") == 0)
			value = v;
		else
			return fail(error, size, "write %zu: unknown field \"%.32s\"", i, key);
	}
	if (!name == !index)
		return fail(error, size, "write %zu: give \"name\" or \"index\"", i);
	if (name) {
		if (!json_is_string(name) || json_string_length(name) == 0 ||
		    json_string_length(name) >= sizeof(out->name) ||
		    strlen(json_string_value(name)) != json_string_length(name))
			return fail(error, size, "write %zu: \"name\" is not a parameter name", i);
		memcpy(out->name, json_string_value(name), json_string_length(name) + 1);
		out->index = -1;
	} else {
		if (!json_is_integer(index) || json_integer_value(index) < 0 ||
		    json_integer_value(index) > UINT32_MAX)
			return fail(error, size, "write %zu: \"index\" is not a parameter index", i);
		out->name[0] = '\0';
		out->index = json_integer_value(index);
	}
	if (!value)
		return fail(error, size, "write %zu: \"value\" is missing", i);
	if (json_is_string(value)) {
		size_t n = json_string_length(value);
		if (n > WEB_SET_TEXT_MAX)
			return fail(error, size, "write %zu: \"value\" longer than %d bytes", i, WEB_SET_TEXT_MAX);
		if (strlen(json_string_value(value)) != n)
			return fail(error, size, "write %zu: \"value\" holds a NUL character", i);
		memcpy(out->text, json_string_value(value), n + 1);
	} else if (json_is_integer(value)) {
		snprintf(out->text, sizeof(out->text), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
	} else if (json_is_real(value)) {
		snprintf(out->text, sizeof(out->text), "%.17g", json_real_value(value));
	} else if (json_is_boolean(value)) {
		snprintf(out->text, sizeof(out->text), "%s", json_is_true(value) ? "true" : "false");
	} else {
		return fail(error, size, "write %zu: \"value\" is not text, a number or a boolean", i);
	}
	return 0;
}

int web_message_decode(const char *text, size_t length, struct web_in *ret, char *error, size_t error_size)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
	int r = 0;
	if (!root)
		return fail(error, error_size, "not JSON (%s at character %d)", jerr.text, jerr.position);
	memset(ret, 0, offsetof(struct web_in, writes));
	ret->count = 0;
	json_t *t = NULL, *id = NULL, *writes = NULL;
	const char *key;
	json_t *v;
	if (!json_is_object(root)) {
		r = fail(error, error_size, "not a JSON object");
		goto out;
	}
	json_object_foreach(root, key, v) {
		if (strcmp(key, "t") == 0) {
			t = v;
		} else if (strcmp(key, "id") == 0) {
			id = v;
		} else if (strcmp(key, "writes") == 0) {
			writes = v;
		} else {
			r = fail(error, error_size, "unknown field \"%.32s\"", key);
			goto out;
		}
	}
	if (!json_is_string(t)) {
		r = fail(error, error_size, "no message type (\"t\")");
		goto out;
	}
	if (strcmp(json_string_value(t), "ping") == 0) {
		ret->type = WEB_IN_PING;
		if (writes) {
			r = fail(error, error_size, "a ping has no \"writes\"");
			goto out;
		}
		if (id)
			r = decode_id(id, ret->id, error, error_size);
		goto out;
	}
	if (strcmp(json_string_value(t), "set") != 0) {
		r = fail(error, error_size, "unknown message type \"%.32s\"", json_string_value(t));
		goto out;
	}
	ret->type = WEB_IN_SET;
	if (!id) {
		r = fail(error, error_size, "a set needs an \"id\"");
		goto out;
	}
	r = decode_id(id, ret->id, error, error_size);
	if (r < 0)
		goto out;
	if (!json_is_array(writes) || json_array_size(writes) == 0) {
		r = fail(error, error_size, "a set needs \"writes\", a list of at least one write");
		goto out;
	}
	if (json_array_size(writes) > WEB_SET_MAX_WRITES) {
		r = fail(error, error_size, "more than %d writes in one set", WEB_SET_MAX_WRITES);
		goto out;
	}
	size_t i;
	json_array_foreach(writes, i, v) {
		r = decode_write(v, i, &ret->writes[i], error, error_size);
		if (r < 0)
			goto out;
	}
	ret->count = json_array_size(writes);
out:
	json_decref(root);
	return r;
}

/* ------------------------------------------------------------- encoding */

static bool grow(struct web_out *o, size_t more)
{
	if (o->failed)
		return false;
	if (o->length + more + 1 <= o->capacity)
		return true;
	size_t cap = o->capacity ? o->capacity : 256;
	while (cap < o->length + more + 1)
		cap *= 2;
	char *d = realloc(o->data, cap);
	if (!d) {
		o->failed = true;
		return false;
	}
	o->data = d;
	o->capacity = cap;
	return true;
}

void web_out_reserve_front(struct web_out *o, size_t front)
{
	if (grow(o, front)) {
		memset(o->data + o->length, 0, front);
		o->length += front;
	}
}

void web_out_append(struct web_out *o, const char *text, size_t length)
{
	if (!grow(o, length))
		return;
	memcpy(o->data + o->length, text, length);
	o->length += length;
	o->data[o->length] = '\0';
}

void web_out_printf(struct web_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !grow(o, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(o->data + o->length, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->length += (size_t)n;
}

/* The length of the valid UTF-8 sequence at @s (@n bytes left), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void web_out_json_string(struct web_out *o, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);
	OUT(o, "\"");
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			web_out_append(o, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			web_out_printf(o, "\\u%04x", c);
			i++;
		} else {
			size_t len = utf8_sequence(s + i, n - i);
			if (len == 0) {
				OUT(o, "\\ufffd");
				i++;
			} else {
				web_out_append(o, text + i, len);
				i += len;
			}
		}
	}
	OUT(o, "\"");
}

void web_out_free(struct web_out *o)
{
	free(o->data);
	memset(o, 0, sizeof(*o));
}

/* Whether @text is a JSON number (RFC 8259 §6) whose value a JavaScript
 * number holds exactly enough: integers of at most 15 digits, any
 * decimal fraction or exponent, finite and not below the normal range. */
static bool json_number(const char *text)
{
	const char *p = text;
	size_t digits = 0;
	bool fraction = false;
	if (*p == '-')
		p++;
	if (*p == '0') {
		p++;
		digits = 1;
	} else if (*p >= '1' && *p <= '9') {
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	} else {
		return false;
	}
	if (*p == '.') {
		fraction = true;
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		fraction = true;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p != '\0' || !(fraction || digits <= 15))
		return false;
	/* and one every JSON reader takes: no overflow to infinity, no
	 * underflow (jansson refuses both) */
	errno = 0;
	double v = strtod(text, NULL);
	return errno == 0 && isfinite(v);
}

void web_out_value(struct web_out *o, unsigned type, const char *text)
{
	switch (type) {
	case PBUS_TYPE_BOOL:
		if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
			web_out_append(o, text, strlen(text));
			return;
		}
		break;
	case PBUS_TYPE_INT8: case PBUS_TYPE_INT16: case PBUS_TYPE_INT32: case PBUS_TYPE_INT64:
	case PBUS_TYPE_UINT8: case PBUS_TYPE_UINT16: case PBUS_TYPE_UINT32: case PBUS_TYPE_UINT64:
	case PBUS_TYPE_FLOAT: case PBUS_TYPE_DOUBLE:
		if (json_number(text)) {
			web_out_append(o, text, strlen(text));
			return;
		}
		break;
	default:
		break;
	}
	web_out_json_string(o, text);
}

static const char *class_name(unsigned update_class)
{
	return pbus_update_class_name(update_class);
}

static bool can_write_param(const struct web_param *p, const struct web_user *user)
{
	return user && !(p->flags & PBUS_PARAM_READONLY) && web_user_in_group(user, p->group);
}

void web_message_hello(struct web_out *o, const char *instance, const struct web_model *model,
		       const struct web_value *values, const struct web_user *user, bool can_write,
		       bool connected)
{
	OUT(o, "{\"t\":\"hello\",\"protocol\":1,\"instance\":");
	web_out_json_string(o, instance);
	OUT(o, ",\"interface\":");
	if (model && model->interface)
		web_out_json_string(o, model->interface);
	else
		OUT(o, "null");
	OUT(o, ",\"identity\":{");
	bool first = true;
	for (uint32_t i = 0; model && i < model->count; i++) {
		const struct web_param *p = &model->params[i];
		if (strncmp(p->name, "identity.", 9) != 0 || !values || !values[i].json)
			continue;
		if (!first)
			OUT(o, ",");
		first = false;
		web_out_json_string(o, p->name + 9);
		OUT(o, ":");
		web_out_append(o, values[i].json, strlen(values[i].json));
	}
	OUT(o, "},\"user\":");
	if (user) {
		OUT(o, "{\"name\":");
		web_out_json_string(o, user->name);
		OUT(o, ",\"groups\":[");
		for (size_t g = 0; g < user->group_count; g++) {
			if (g)
				OUT(o, ",");
			web_out_json_string(o, user->groups[g]);
		}
		OUT(o, "]}");
	} else {
		OUT(o, "null");
	}
	web_out_printf(o, ",\"can_write\":%s,\"pbusd\":%s,\"schema_hash\":", can_write ? "true" : "false",
		       connected ? "true" : "false");
	if (model)
		web_out_printf(o, "\"%016" PRIx64 "\"}", model->hash);
	else
		OUT(o, "null}");
}

static void opt_field(struct web_out *o, const char *name, const char *json)
{
	if (!json)
		return;
	web_out_printf(o, ",\"%s\":", name);
	web_out_append(o, json, strlen(json));
}

void web_message_schema(struct web_out *o, const struct web_model *model, const struct web_user *user)
{
	web_out_printf(o, "{\"t\":\"schema\",\"schema_hash\":\"%016" PRIx64 "\",\"params\":[", model->hash);
	for (uint32_t i = 0; i < model->count; i++) {
		const struct web_param *p = &model->params[i];
		if (i)
			OUT(o, ",");
		web_out_printf(o, "{\"index\":%" PRIu32 ",\"name\":", p->index);
		web_out_json_string(o, p->name);
		web_out_printf(o, ",\"type\":\"%s\",\"unit\":", pbus_type_name(p->type));
		web_out_json_string(o, p->unit);
		if (p->count)
			web_out_printf(o, ",\"count\":%" PRIu32, p->count);
		opt_field(o, "min", p->min);
		opt_field(o, "max", p->max);
		opt_field(o, "step", p->step);
		opt_field(o, "default", p->def);
		if (p->label_count) {
			OUT(o, ",\"labels\":[");
			for (uint32_t k = 0; k < p->label_count; k++) {
				if (k)
					OUT(o, ",");
				web_out_json_string(o, p->labels[k]);
			}
			OUT(o, "]");
		}
		web_out_printf(o, ",\"class\":\"%s\",\"access\":\"%s\",\"group\":", class_name(p->update_class),
			       (p->flags & PBUS_PARAM_READONLY) ? "read-only"
			       : can_write_param(p, user) ? "writable" : "login");
		if (*p->group)
			web_out_json_string(o, p->group);
		else
			OUT(o, "null");
		web_out_printf(o, ",\"readable\":%s,\"live\":%s,\"persistent\":%s,\"description\":",
			       p->readable ? "true" : "false", p->live ? "true" : "false",
			       (p->flags & PBUS_PARAM_PERSISTENT) ? "true" : "false");
		web_out_json_string(o, p->description);
		OUT(o, "}");
	}
	OUT(o, "]}");
}

void web_message_values_begin(struct web_out *o)
{
	OUT(o, "{\"t\":\"values\",\"values\":[");
}

void web_message_values_add(struct web_out *o, bool first, uint32_t index, const struct web_value *v)
{
	web_out_printf(o, "%s[%" PRIu32 ",", first ? "" : ",", index);
	web_out_append(o, v->json, strlen(v->json));
	web_out_printf(o, ",\"%s\",\"%" PRIu64 "\",%" PRIu64 "]", pbus_status_name(v->status), v->timestamp_ns,
		       v->seq);
}

void web_message_values_end(struct web_out *o)
{
	OUT(o, "]}");
}

void web_message_set_result(struct web_out *o, const char *id, bool ok, const char *error,
			    const char *current)
{
	OUT(o, "{\"t\":\"set-result\",\"id\":");
	web_out_append(o, id, strlen(id));
	web_out_printf(o, ",\"ok\":%s", ok ? "true" : "false");
	if (!ok) {
		OUT(o, ",\"error\":");
		web_out_json_string(o, error);
	}
	if (current) {
		OUT(o, ",\"values\":");
		web_out_append(o, current, strlen(current));
	}
	OUT(o, "}");
}

void web_message_pbusd(struct web_out *o, bool connected)
{
	web_out_printf(o, "{\"t\":\"pbusd\",\"connected\":%s}", connected ? "true" : "false");
}

void web_message_error(struct web_out *o, const char *reason)
{
	OUT(o, "{\"t\":\"error\",\"error\":");
	web_out_json_string(o, reason);
	OUT(o, "}");
}

void web_message_pong(struct web_out *o, const char *id)
{
	OUT(o, "{\"t\":\"pong\"");
	if (*id) {
		OUT(o, ",\"id\":");
		web_out_append(o, id, strlen(id));
	}
	OUT(o, "}");
}
