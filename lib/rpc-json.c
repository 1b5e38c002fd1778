/* SPDX-License-Identifier: MIT */
/*
 * rpc-json.c: the dynamic codec of method arguments (parambus/rpc-json.h):
 * JSON to the wire encoding of docs/methods.md §4 and back, walking the
 * type table that the schema's type records built (schema-rpc.c) where
 * generated code would have a function per type.
 *
 * JSON is parsed with jansson; the output is written here, so that the
 * order of keys, the numbers (the shortest text that reads back as the
 * same Float or Double; 64-bit integers exact) and the layout are ours.
 * The decoder refuses exactly what the generated decoders refuse (the
 * same checks, in the same order, through the same reader functions of
 * parambus/rpc.h); tests/rpc/test-rpc-json.c holds the two against each
 * other on tests/vectors/rpc-args.txt.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <parambus/rpc-json.h>

#include "schema-internal.h"
#include "text-internal.h"

#define MESSAGE_MAX 512

/* Messages are one line of bounded length: cutting a long one is meant. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ======================================================================
 * Messages
 * ====================================================================== */

struct msg {
	char text[MESSAGE_MAX];
};

static int msg_set(struct msg *m, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int msg_set(struct msg *m, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->text, sizeof(m->text), fmt, ap);
	va_end(ap);
	return r;
}

/* "LABEL: <what was there>" */
static void msg_prefix(struct msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_prefix(struct msg *m, const char *fmt, ...)
{
	char label[256], old[MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	memcpy(old, m->text, sizeof(old));
	snprintf(m->text, sizeof(m->text), "%s: %s", label, old);
}

static void copy_error(const struct msg *m, char *error, size_t error_size)
{
	if (error && error_size)
		snprintf(error, error_size, "%s", m->text);
}

/* A type as a person reads it: Franca's names for the basic types. */
static void type_text(const struct pbus_schema *s, uint32_t i, char *buf, size_t size)
{
	static const char *const franca[] = {
		"Boolean", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
		"Int64", "UInt64", "Float", "Double", "String", "ByteBuffer",
	};
	const struct pbus_schema_type *t = &s->types[i];

	if (t->kind <= PBUS_SCHEMA_KIND_BYTES) {
		snprintf(buf, size, "%s", franca[t->kind]);
	} else if (t->kind == PBUS_SCHEMA_KIND_INTEGER) {
		char lo[32] = "minInt", hi[32] = "maxInt";

		if (t->has_lo)
			snprintf(lo, sizeof(lo), t->is_unsigned ? "%" PRIu64 : "%" PRId64, t->lo);
		if (t->has_hi)
			snprintf(hi, sizeof(hi), t->is_unsigned ? "%" PRIu64 : "%" PRId64, t->hi);
		if (!t->has_lo && !t->has_hi && !t->is_unsigned)
			snprintf(buf, size, "Integer");
		else
			snprintf(buf, size, "Integer(%s, %s)", lo, hi);
	} else if (t->kind == PBUS_SCHEMA_KIND_ARRAY && !t->named) {
		char inner[200];

		type_text(s, t->element, inner, sizeof(inner));
		snprintf(buf, size, "%s[]", inner);
	} else {
		snprintf(buf, size, "%s", t->name);
	}
}

/* ======================================================================
 * Output: JSON text, compact or indented
 * ====================================================================== */

struct out {
	char *p;
	size_t n, cap;
	bool failed, pretty;
	unsigned depth;
	bool first[PBUS_RPC_MAX_DEPTH + 8];
};

static void put(struct out *o, const char *text, size_t n)
{
	if (o->failed)
		return;
	if (o->n + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		char *p;

		while (cap < o->n + n + 1)
			cap *= 2;
		p = realloc(o->p, cap);
		if (!p) {
			o->failed = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->n, text, n);
	o->n += n;
	o->p[o->n] = 0;
}

static void puts_(struct out *o, const char *text) { put(o, text, strlen(text)); }

static void newline(struct out *o)
{
	if (!o->pretty)
		return;
	put(o, "\n", 1);
	for (unsigned i = 0; i < o->depth; i++)
		put(o, "  ", 2);
}

static void open_(struct out *o, const char *c)
{
	puts_(o, c);
	o->depth++;
	if (o->depth < sizeof(o->first))
		o->first[o->depth] = true;
}

static void close_(struct out *o, const char *c)
{
	bool empty = o->depth < sizeof(o->first) && o->first[o->depth];

	o->depth--;
	if (!empty)
		newline(o);
	puts_(o, c);
}

/* Before an element of the current object or array. */
static void item(struct out *o)
{
	if (o->depth < sizeof(o->first)) {
		if (!o->first[o->depth])
			put(o, ",", 1);
		o->first[o->depth] = false;
	}
	newline(o);
}

static void string_(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(o, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;

			if (named) {
				puts_(o, named);
			} else {
				snprintf(esc, sizeof(esc), "\\u00%c%c", hex[c >> 4], hex[c & 15]);
				puts_(o, esc);
			}
		} else {
			put(o, (const char *)&s[i], 1);
		}
	}
	put(o, "\"", 1);
}

static void key(struct out *o, const char *name)
{
	item(o);
	string_(o, name, strlen(name));
	puts_(o, o->pretty ? ": " : ":");
}

static void unsigned_(struct out *o, uint64_t v)
{
	char buf[32];

	/* above INT64_MAX: a string, so that readers with 64-bit signed
	 * integers (jansson, and so this codec) keep it exact */
	snprintf(buf, sizeof(buf), v > (uint64_t)INT64_MAX ? "\"%" PRIu64 "\"" : "%" PRIu64, v);
	puts_(o, buf);
}

static void signed_(struct out *o, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	puts_(o, buf);
}

/* The shortest text of @d that reads back as the same double (@as_float:
 * the same float); "nan", "-nan", "inf", "-inf" as strings (a NaN keeps
 * its sign, not its payload); -0 as "-0.0" (JSON's
 * "-0" reads as the integer 0). */
static void real(struct out *o, double d, bool as_float)
{
	char buf[40];

	if (isnan(d)) {
		puts_(o, signbit(d) ? "\"-nan\"" : "\"nan\"");
		return;
	}
	if (isinf(d)) {
		puts_(o, d < 0 ? "\"-inf\"" : "\"inf\"");
		return;
	}
	if (d == 0) {
		puts_(o, signbit(d) ? "-0.0" : "0");
		return;
	}
	for (int precision = as_float ? 6 : 15; precision <= 17; precision++) {
		snprintf(buf, sizeof(buf), "%.*g", precision, d);
		if (as_float ? (float)strtod(buf, NULL) == (float)d : strtod(buf, NULL) == d)
			break;
	}
	puts_(o, buf);
}

/* ======================================================================
 * Decoding: wire -> JSON text
 * ====================================================================== */

struct dec {
	const struct pbus_schema *s;
	struct pbus_rpc_reader r;
	struct out o;
	struct msg m;
	const unsigned char *start;
};

static int malformed(struct dec *d, const char *why)
{
	if (d->r.error == -ENOMEM)
		return msg_set(&d->m, -ENOMEM, "out of memory");
	pbus_rpc_reader_fail(&d->r, -EPROTO);
	return msg_set(&d->m, -EPROTO, "%s (at byte %zu)", why, (size_t)(d->r.p - d->start));
}

static int dec_value(struct dec *d, uint32_t type);

static int dec_fields(struct dec *d, const struct pbus_schema_type *t)
{
	for (uint32_t k = 0; k < t->member_count; k++) {
		int r;

		key(&d->o, t->members[k].name);
		if ((r = dec_value(d, t->members[k].type)) < 0) {
			msg_prefix(&d->m, "field '%s'", t->members[k].name);
			return r;
		}
	}
	return 0;
}

static int dec_nested(struct dec *d, uint32_t type)
{
	const struct pbus_schema *s = d->s;
	const struct pbus_schema_type *t = &s->types[type];
	uint32_t n = 0;
	int r = 0;

	switch (t->kind) {
	case PBUS_SCHEMA_KIND_STRUCT:
		if (t->polymorphic) {
			uint32_t tag;
			const struct pbus_schema_type *concrete = NULL;

			if (!pbus_rpc_get_u32(&d->r, &tag))
				return malformed(d, "cut short");
			for (uint32_t k = 0; k < t->concrete_count; k++)
				if (s->types[t->concrete[k]].tag == tag)
					concrete = &s->types[t->concrete[k]];
			if (!concrete)
				return malformed(d, "a type tag that is not of the declared struct or one derived from it");
			open_(&d->o, "{");
			key(&d->o, "$type");
			string_(&d->o, concrete->name, strlen(concrete->name));
			r = dec_fields(d, concrete);
		} else {
			open_(&d->o, "{");
			r = dec_fields(d, t);
		}
		close_(&d->o, "}");
		return r;
	case PBUS_SCHEMA_KIND_UNION:
		if (!pbus_rpc_get_u32(&d->r, &n))
			return malformed(d, "cut short");
		if (n >= t->member_count)
			return malformed(d, "a union member index out of range");
		open_(&d->o, "{");
		key(&d->o, t->members[n].name);
		if ((r = dec_value(d, t->members[n].type)) < 0)
			msg_prefix(&d->m, "member '%s'", t->members[n].name);
		close_(&d->o, "}");
		return r;
	case PBUS_SCHEMA_KIND_ARRAY:
		if (!pbus_rpc_get_count(&d->r, &n, s->types[t->element].min_size))
			return malformed(d, "an array count larger than the bytes left");
		open_(&d->o, "[");
		for (uint32_t k = 0; k < n && r == 0; k++) {
			item(&d->o);
			if ((r = dec_value(d, t->element)) < 0)
				msg_prefix(&d->m, "element %u", k);
		}
		close_(&d->o, "]");
		return r;
	case PBUS_SCHEMA_KIND_MAP:
		if (!pbus_rpc_get_count(&d->r, &n, s->types[t->key].min_size + s->types[t->value].min_size))
			return malformed(d, "a map count larger than the bytes left");
		open_(&d->o, "[");
		for (uint32_t k = 0; k < n && r == 0; k++) {
			item(&d->o);
			open_(&d->o, "{");
			key(&d->o, "key");
			if ((r = dec_value(d, t->key)) == 0) {
				key(&d->o, "value");
				r = dec_value(d, t->value);
			}
			close_(&d->o, "}");
			if (r < 0)
				msg_prefix(&d->m, "entry %u", k);
		}
		close_(&d->o, "]");
		return r;
	default:
		return malformed(d, "no such type");
	}
}

static int dec_value(struct dec *d, uint32_t type)
{
	const struct pbus_schema_type *t = &d->s->types[type];
	uint64_t u;
	int r;

	switch (t->kind) {
	case PBUS_SCHEMA_KIND_BOOL: {
		bool b;

		if (!pbus_rpc_get_bool(&d->r, &b))
			return malformed(d, d->r.p < d->r.end ? "a Boolean neither 0 nor 1" : "cut short");
		puts_(&d->o, b ? "true" : "false");
		return 0;
	}
	case PBUS_SCHEMA_KIND_INT8:
	case PBUS_SCHEMA_KIND_INT16:
	case PBUS_SCHEMA_KIND_INT32:
	case PBUS_SCHEMA_KIND_INT64: {
		unsigned width = 1u << ((t->kind - PBUS_SCHEMA_KIND_INT8) / 2);
		unsigned shift = 64 - 8 * width;

		if (!pbus_rpc_get_le_(&d->r, &u, width))
			return malformed(d, "cut short");
		signed_(&d->o, (int64_t)(u << shift) >> shift);
		return 0;
	}
	case PBUS_SCHEMA_KIND_UINT8:
	case PBUS_SCHEMA_KIND_UINT16:
	case PBUS_SCHEMA_KIND_UINT32:
	case PBUS_SCHEMA_KIND_UINT64:
		if (!pbus_rpc_get_le_(&d->r, &u, 1u << ((t->kind - PBUS_SCHEMA_KIND_UINT8) / 2)))
			return malformed(d, "cut short");
		unsigned_(&d->o, u);
		return 0;
	case PBUS_SCHEMA_KIND_FLOAT: {
		float f;

		if (!pbus_rpc_get_float(&d->r, &f))
			return malformed(d, "cut short");
		real(&d->o, f, true);
		return 0;
	}
	case PBUS_SCHEMA_KIND_DOUBLE: {
		double v;

		if (!pbus_rpc_get_double(&d->r, &v))
			return malformed(d, "cut short");
		real(&d->o, v, false);
		return 0;
	}
	case PBUS_SCHEMA_KIND_STRING: {
		char *text;

		if (!pbus_rpc_get_string(&d->r, &text))
			return malformed(d, "a String cut short, not UTF-8 or holding a NUL");
		string_(&d->o, text, strlen(text));
		return 0;
	}
	case PBUS_SCHEMA_KIND_BYTES: {
		struct pbus_rpc_bytes b;
		static const char hex[] = "0123456789abcdef";

		if (!pbus_rpc_get_bytes(&d->r, &b))
			return malformed(d, "a ByteBuffer cut short");
		put(&d->o, "\"", 1);
		for (uint32_t k = 0; k < b.size; k++) {
			char two[2] = {hex[b.data[k] >> 4], hex[b.data[k] & 15]};

			put(&d->o, two, 2);
		}
		put(&d->o, "\"", 1);
		return 0;
	}
	case PBUS_SCHEMA_KIND_INTEGER:
		if (!pbus_rpc_get_le_(&d->r, &u, 8))
			return malformed(d, "cut short");
		if (t->is_unsigned ? ((t->has_lo && u < t->lo) || (t->has_hi && u > t->hi))
				   : ((t->has_lo && (int64_t)u < (int64_t)t->lo) ||
				      (t->has_hi && (int64_t)u > (int64_t)t->hi)))
			return malformed(d, "an Integer outside its range");
		if (t->is_unsigned)
			unsigned_(&d->o, u);
		else
			signed_(&d->o, (int64_t)u);
		return 0;
	case PBUS_SCHEMA_KIND_ENUM: {
		int64_t v;

		if (!pbus_rpc_get_le_(&d->r, &u, t->wide ? 8 : 4))
			return malformed(d, "cut short");
		v = t->wide ? (int64_t)u : (int64_t)(int32_t)(uint32_t)u;
		for (uint32_t k = 0; k < t->enum_count; k++)
			if (t->enum_values[k] == v) {
				string_(&d->o, t->enum_labels[k], strlen(t->enum_labels[k]));
				return 0;
			}
		return malformed(d, "a value that is not an enumerator");
	}
	default:
		if (!pbus_rpc_enter(&d->r))
			return malformed(d, "nested deeper than 64 levels");
		r = dec_nested(d, type);
		pbus_rpc_leave(&d->r);
		return r;
	}
}

/* Decode members @args (with an error enumeration first when @error is
 * a type) of one body into an object. */
static int decode_object(const struct pbus_schema *s, uint32_t error_type,
			 const struct pbus_schema_member *args, uint32_t count, bool single,
			 uint32_t single_type, const void *body, size_t size, unsigned flags,
			 char **ret_json, char *error, size_t error_size)
{
	struct dec d = {.s = s};
	struct pbus_rpc_arena *arena = pbus_rpc_arena_new();
	int r = 0;

	if (!arena)
		return -ENOMEM;
	if (!body && size)
		body = "";
	pbus_rpc_reader_init(&d.r, body ? body : "", size, arena);
	d.start = d.r.p;
	d.o.pretty = flags & PBUS_RPC_JSON_PRETTY;
	if (single) {
		r = dec_value(&d, single_type);
	} else {
		open_(&d.o, "{");
		if (error_type != PBUS_SCHEMA_NO_TYPE) {
			key(&d.o, "error");
			if ((r = dec_value(&d, error_type)) < 0)
				msg_prefix(&d.m, "error");
		}
		for (uint32_t k = 0; k < count && r == 0; k++) {
			key(&d.o, args[k].name);
			if ((r = dec_value(&d, args[k].type)) < 0)
				msg_prefix(&d.m, "argument '%s'", args[k].name);
		}
		close_(&d.o, "}");
	}
	if (r == 0 && pbus_rpc_reader_end(&d.r) < 0)
		r = malformed(&d, "bytes left over");
	pbus_rpc_arena_free(arena);
	if (r == 0 && d.o.failed)
		r = msg_set(&d.m, -ENOMEM, "out of memory");
	if (r < 0) {
		copy_error(&d.m, error, error_size);
		free(d.o.p);
		return r;
	}
	if (!d.o.p)
		puts_(&d.o, "");
	if (d.o.failed) {
		free(d.o.p);
		return -ENOMEM;
	}
	*ret_json = d.o.p;
	return 0;
}

int pbus_rpc_json_decode_reply(const struct pbus_schema *schema, uint32_t method, const void *body,
			       size_t size, unsigned flags, char **ret_json, char *error, size_t error_size)
{
	const struct pbus_schema_call *m;

	if (!schema || !ret_json)
		return -EINVAL;
	if (method >= schema->method_count)
		return -ENOENT;
	m = &schema->methods[method];
	return decode_object(schema, m->error, m->out, m->out_count, false, 0, body, size, flags, ret_json,
			     error, error_size);
}

int pbus_rpc_json_decode_broadcast(const struct pbus_schema *schema, uint32_t broadcast,
				   const void *body, size_t size, unsigned flags, char **ret_json,
				   char *error, size_t error_size)
{
	const struct pbus_schema_call *b;

	if (!schema || !ret_json)
		return -EINVAL;
	if (broadcast >= schema->broadcast_count)
		return -ENOENT;
	b = &schema->broadcasts[broadcast];
	return decode_object(schema, PBUS_SCHEMA_NO_TYPE, b->out, b->out_count, false, 0, body, size, flags,
			     ret_json, error, error_size);
}

int pbus_rpc_json_decode_value(const struct pbus_schema *schema, const char *type, const void *body,
			       size_t size, unsigned flags, char **ret_json, char *error, size_t error_size)
{
	uint32_t t;

	if (!schema || !type || !ret_json)
		return -EINVAL;
	t = pbus_schema_type_find(schema, type);
	if (t == PBUS_SCHEMA_NO_TYPE)
		return -ENOENT;
	return decode_object(schema, PBUS_SCHEMA_NO_TYPE, NULL, 0, true, t, body, size, flags, ret_json,
			     error, error_size);
}

/* ======================================================================
 * Encoding: JSON -> wire
 * ====================================================================== */

struct enc {
	const struct pbus_schema *s;
	struct pbus_rpc_buf *b;
	struct msg m;
};

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* A short text of @v for messages. */
static void json_text(const json_t *v, char *buf, size_t size)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!text) {
		snprintf(buf, size, "?");
		return;
	}
	if (strlen(text) >= size && size > 4)
		snprintf(buf, size, "%.*s...", (int)size - 4, text);
	else
		snprintf(buf, size, "%s", text);
	free(text);
}

static int wrong(struct enc *e, uint32_t type, const json_t *v)
{
	char want[200];

	type_text(e->s, type, want, sizeof(want));
	return msg_set(&e->m, -EINVAL, "expected %s, not %s", want, json_kind(v));
}

/* An integer from a JSON integer or a decimal string: *negative and the
 * value's bits (int64 when negative, uint64 else). */
static int json_integer_of(const json_t *v, bool *negative, uint64_t *bits)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		*negative = i < 0;
		*bits = (uint64_t)(long long)i;
		return 0;
	}
	if (json_is_string(v)) {
		const char *text = json_string_value(v);
		char *end;

		errno = 0;
		if (*text == '-') {
			long long i = strtoll(text, &end, 10);

			if (text[1] < '0' || text[1] > '9' || *end || errno)
				return -EINVAL;
			*negative = i < 0;
			*bits = (uint64_t)i;
			return 0;
		}
		if (*text < '0' || *text > '9')
			return -EINVAL;
		*bits = strtoull(text, &end, 10);
		if (*end || errno)
			return -EINVAL;
		*negative = false;
		return 0;
	}
	return -EINVAL;
}

static int enc_value(struct enc *e, uint32_t type, const json_t *v, unsigned depth);

static int enc_fields(struct enc *e, const struct pbus_schema_type *t, const json_t *v, bool poly,
		      unsigned depth)
{
	const char *k;
	json_t *x;
	int r;

	json_object_foreach((json_t *)v, k, x) {
		bool known = poly && !strcmp(k, "$type");

		for (uint32_t i = 0; i < t->member_count && !known; i++)
			known = !strcmp(t->members[i].name, k);
		if (!known)
			return msg_set(&e->m, -EINVAL, "%s has no field '%s'", t->name, k);
	}
	for (uint32_t i = 0; i < t->member_count; i++) {
		x = json_object_get(v, t->members[i].name);
		if (!x)
			return msg_set(&e->m, -EINVAL, "field '%s' of %s missing", t->members[i].name, t->name);
		if ((r = enc_value(e, t->members[i].type, x, depth)) < 0) {
			msg_prefix(&e->m, "field '%s'", t->members[i].name);
			return r;
		}
	}
	return 0;
}

static int enc_nested(struct enc *e, uint32_t type, const json_t *v, unsigned depth)
{
	const struct pbus_schema *s = e->s;
	const struct pbus_schema_type *t = &s->types[type];
	size_t n;
	int r;

	if (depth > PBUS_RPC_MAX_DEPTH)
		return msg_set(&e->m, -EINVAL, "nested deeper than %d levels", PBUS_RPC_MAX_DEPTH);
	switch (t->kind) {
	case PBUS_SCHEMA_KIND_STRUCT: {
		const struct pbus_schema_type *concrete = t;

		if (!json_is_object(v))
			return wrong(e, type, v);
		if (t->polymorphic) {
			const json_t *name = json_object_get(v, "$type");

			if (name) {
				if (!json_is_string(name))
					return msg_set(&e->m, -EINVAL, "'$type' must be a string");
				concrete = NULL;
				for (uint32_t k = 0; k < t->concrete_count; k++)
					if (!strcmp(s->types[t->concrete[k]].name, json_string_value(name)))
						concrete = &s->types[t->concrete[k]];
				if (!concrete)
					return msg_set(&e->m, -EINVAL, "'$type' %s is not %s or a struct derived from it",
						       json_string_value(name), t->name);
			}
			pbus_rpc_put_u32(e->b, concrete->tag);
		}
		return enc_fields(e, concrete, v, t->polymorphic, depth);
	}
	case PBUS_SCHEMA_KIND_UNION: {
		const char *k;
		json_t *x;

		if (!json_is_object(v) || json_object_size(v) != 1)
			return msg_set(&e->m, -EINVAL, "expected %s as an object of one member, {\"MEMBER\": VALUE}",
				       t->name);
		json_object_foreach((json_t *)v, k, x) {
			for (uint32_t i = 0; i < t->member_count; i++)
				if (!strcmp(t->members[i].name, k)) {
					pbus_rpc_put_u32(e->b, i);
					if ((r = enc_value(e, t->members[i].type, x, depth)) < 0)
						msg_prefix(&e->m, "member '%s'", k);
					return r;
				}
			return msg_set(&e->m, -EINVAL, "%s has no member '%s'", t->name, k);
		}
		return 0;
	}
	case PBUS_SCHEMA_KIND_ARRAY:
		if (!json_is_array(v))
			return wrong(e, type, v);
		n = json_array_size(v);
		if (n > UINT32_MAX)
			return msg_set(&e->m, -EINVAL, "too many elements");
		pbus_rpc_put_count(e->b, (uint32_t)n);
		for (size_t i = 0; i < n; i++)
			if ((r = enc_value(e, t->element, json_array_get(v, i), depth)) < 0) {
				msg_prefix(&e->m, "element %zu", i);
				return r;
			}
		return 0;
	case PBUS_SCHEMA_KIND_MAP:
		if (!json_is_array(v))
			return msg_set(&e->m, -EINVAL, "expected %s as a list of {\"key\": K, \"value\": V}",
				       t->name);
		n = json_array_size(v);
		if (n > UINT32_MAX)
			return msg_set(&e->m, -EINVAL, "too many entries");
		pbus_rpc_put_count(e->b, (uint32_t)n);
		for (size_t i = 0; i < n; i++) {
			const json_t *entry = json_array_get(v, i), *k = json_object_get(entry, "key"),
				     *x = json_object_get(entry, "value");

			if (!json_is_object(entry) || !k || !x || json_object_size(entry) != 2)
				r = msg_set(&e->m, -EINVAL, "expected {\"key\": K, \"value\": V}");
			else if ((r = enc_value(e, t->key, k, depth)) < 0)
				msg_prefix(&e->m, "key");
			else if ((r = enc_value(e, t->value, x, depth)) < 0)
				msg_prefix(&e->m, "value");
			if (r < 0) {
				msg_prefix(&e->m, "entry %zu", i);
				return r;
			}
		}
		return 0;
	default:
		return msg_set(&e->m, -EINVAL, "no such type");
	}
}

static int enc_value(struct enc *e, uint32_t type, const json_t *v, unsigned depth)
{
	const struct pbus_schema_type *t = &e->s->types[type];
	char text[64], want[200];
	bool negative;
	uint64_t bits;

	switch (t->kind) {
	case PBUS_SCHEMA_KIND_BOOL:
		if (!json_is_boolean(v))
			return wrong(e, type, v);
		pbus_rpc_put_bool(e->b, json_is_true(v));
		return 0;
	case PBUS_SCHEMA_KIND_INT8:
	case PBUS_SCHEMA_KIND_INT16:
	case PBUS_SCHEMA_KIND_INT32:
	case PBUS_SCHEMA_KIND_INT64:
	case PBUS_SCHEMA_KIND_UINT8:
	case PBUS_SCHEMA_KIND_UINT16:
	case PBUS_SCHEMA_KIND_UINT32:
	case PBUS_SCHEMA_KIND_UINT64:
	case PBUS_SCHEMA_KIND_INTEGER: {
		bool is_signed = t->kind == PBUS_SCHEMA_KIND_INTEGER ? !t->is_unsigned
								      : ((t->kind - PBUS_SCHEMA_KIND_BOOL) & 1) == 1;
		unsigned width = t->kind == PBUS_SCHEMA_KIND_INTEGER
					 ? 8
					 : 1u << ((t->kind - (is_signed ? PBUS_SCHEMA_KIND_INT8 : PBUS_SCHEMA_KIND_UINT8)) / 2);
		bool out;

		if (json_integer_of(v, &negative, &bits) < 0) {
			if (json_is_string(v))
				return msg_set(&e->m, -EINVAL, "'%s' is not a decimal integer", json_string_value(v));
			return wrong(e, type, v);
		}
		if (is_signed) {
			int64_t lo = width == 8 ? INT64_MIN : -(INT64_C(1) << (8 * width - 1));
			int64_t hi = width == 8 ? INT64_MAX : (INT64_C(1) << (8 * width - 1)) - 1;
			int64_t x = (int64_t)bits;

			out = (!negative && bits > (uint64_t)INT64_MAX) || x < lo || x > hi;
			if (!out && t->kind == PBUS_SCHEMA_KIND_INTEGER)
				out = (t->has_lo && x < (int64_t)t->lo) || (t->has_hi && x > (int64_t)t->hi);
		} else {
			uint64_t hi = width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;

			out = negative || bits > hi;
			if (!out && t->kind == PBUS_SCHEMA_KIND_INTEGER)
				out = (t->has_lo && bits < t->lo) || (t->has_hi && bits > t->hi);
		}
		if (out) {
			if (negative)
				snprintf(text, sizeof(text), "%" PRId64, (int64_t)bits);
			else
				snprintf(text, sizeof(text), "%" PRIu64, bits);
			type_text(e->s, type, want, sizeof(want));
			return msg_set(&e->m, -EINVAL, "%s is outside %s", text, want);
		}
		pbus_rpc_put_le_(e->b, bits, width);
		return 0;
	}
	case PBUS_SCHEMA_KIND_FLOAT:
	case PBUS_SCHEMA_KIND_DOUBLE: {
		double d;

		if (json_is_number(v)) {
			d = json_number_value(v);
		} else if (json_is_string(v) && !strcmp(json_string_value(v), "nan")) {
			d = NAN;
		} else if (json_is_string(v) && !strcmp(json_string_value(v), "-nan")) {
			d = copysign(NAN, -1.0);
		} else if (json_is_string(v) && !strcmp(json_string_value(v), "inf")) {
			d = INFINITY;
		} else if (json_is_string(v) && !strcmp(json_string_value(v), "-inf")) {
			d = -INFINITY;
		} else {
			if (json_is_string(v))
				return msg_set(&e->m, -EINVAL, "'%s' is not a number (nor \"nan\", \"-nan\", \"inf\", \"-inf\")",
					       json_string_value(v));
			return wrong(e, type, v);
		}
		if (t->kind == PBUS_SCHEMA_KIND_FLOAT) {
			float f = (float)d;

			if (isfinite(d) && !isfinite(f)) {
				json_text(v, text, sizeof(text));
				return msg_set(&e->m, -EINVAL, "%s is outside Float", text);
			}
			pbus_rpc_put_float(e->b, f);
		} else {
			pbus_rpc_put_double(e->b, d);
		}
		return 0;
	}
	case PBUS_SCHEMA_KIND_STRING:
		if (!json_is_string(v))
			return wrong(e, type, v);
		if (strlen(json_string_value(v)) != json_string_length(v))
			return msg_set(&e->m, -EINVAL, "a String may not hold a NUL (\\u0000)");
		if (json_string_length(v) > UINT32_MAX)
			return msg_set(&e->m, -EINVAL, "String too long");
		pbus_rpc_put_string(e->b, json_string_value(v));
		return 0;
	case PBUS_SCHEMA_KIND_BYTES: {
		const char *hex;
		size_t n;
		unsigned char *p;

		if (!json_is_string(v))
			return wrong(e, type, v);
		hex = json_string_value(v);
		n = json_string_length(v);
		if (n % 2 || n / 2 > UINT32_MAX)
			return msg_set(&e->m, -EINVAL, "a ByteBuffer is hex, two digits a byte");
		pbus_rpc_put_count(e->b, (uint32_t)(n / 2));
		p = pbus_rpc_room(e->b, n / 2);
		for (size_t i = 0; i < n; i += 2) {
			int hi = pbus_hex_digit(hex[i]), lo = pbus_hex_digit(hex[i + 1]);

			if (hi < 0 || lo < 0)
				return msg_set(&e->m, -EINVAL, "a ByteBuffer is hex, two digits a byte");
			if (p)
				p[i / 2] = (unsigned char)(hi << 4 | lo);
		}
		return 0;
	}
	case PBUS_SCHEMA_KIND_ENUM: {
		int64_t value = 0;
		bool found = false;

		if (json_is_string(v)) {
			for (uint32_t k = 0; k < t->enum_count && !found; k++)
				if (!strcmp(t->enum_labels[k], json_string_value(v))) {
					value = t->enum_values[k];
					found = true;
				}
			if (!found)
				return msg_set(&e->m, -EINVAL, "'%s' is not an enumerator of %s", json_string_value(v),
					       t->name);
		} else if (json_is_integer(v)) {
			value = json_integer_value(v);
			for (uint32_t k = 0; k < t->enum_count && !found; k++)
				found = t->enum_values[k] == value;
			if (!found)
				return msg_set(&e->m, -EINVAL, "%" PRId64 " is not a value of %s", value, t->name);
		} else {
			return wrong(e, type, v);
		}
		pbus_rpc_put_le_(e->b, (uint64_t)value, t->wide ? 8 : 4);
		return 0;
	}
	default:
		return enc_nested(e, type, v, depth + 1);
	}
}

static int parse_json(const char *json, json_t **ret, struct msg *m)
{
	json_error_t err;

	*ret = json_loads(json, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (!*ret)
		return msg_set(m, -EINVAL, "not JSON: %s (line %d, column %d)", err.text, err.line, err.column);
	return 0;
}

static void finish_error(struct enc *e, int r, struct pbus_rpc_buf *b, size_t size_before, char *error,
			 size_t error_size)
{
	if (r < 0) {
		copy_error(&e->m, error, error_size);
		if (b->error == 0)
			b->size = size_before;
	}
}

int pbus_rpc_json_encode_call(const struct pbus_schema *schema, uint32_t method, const char *json,
			      struct pbus_rpc_buf *buf, char *error, size_t error_size)
{
	struct enc e = {.s = schema, .b = buf};
	const struct pbus_schema_call *m;
	json_t *root = NULL;
	const char *k;
	json_t *x;
	size_t before;
	int r = 0;

	if (!schema || !buf)
		return -EINVAL;
	if (method >= schema->method_count)
		return -ENOENT;
	m = &schema->methods[method];
	before = buf->size;
	if (json && (r = parse_json(json, &root, &e.m)) < 0)
		goto out;
	if (root && !json_is_object(root)) {
		r = msg_set(&e.m, -EINVAL, "the arguments must be a JSON object {\"NAME\": VALUE, ...}, not %s",
			    json_kind(root));
		goto out;
	}
	if (root)
		json_object_foreach(root, k, x) {
			bool known = false;

			for (uint32_t i = 0; i < m->in_count && !known; i++)
				known = !strcmp(m->in[i].name, k);
			if (!known) {
				r = msg_set(&e.m, -EINVAL, "method '%s' has no argument '%s'", m->name, k);
				goto out;
			}
		}
	for (uint32_t i = 0; i < m->in_count; i++) {
		x = root ? json_object_get(root, m->in[i].name) : NULL;
		if (!x) {
			char want[200];

			type_text(schema, m->in[i].type, want, sizeof(want));
			r = msg_set(&e.m, -EINVAL, "argument '%s' (%s) missing", m->in[i].name, want);
			goto out;
		}
		if ((r = enc_value(&e, m->in[i].type, x, 0)) < 0) {
			msg_prefix(&e.m, "argument '%s'", m->in[i].name);
			goto out;
		}
	}
	if (buf->error)
		r = msg_set(&e.m, buf->error, "%s", buf->error == -ENOMEM ? "out of memory" : "not encodable");
out:
	json_decref(root);
	finish_error(&e, r, buf, before, error, error_size);
	return r;
}

int pbus_rpc_json_encode_value(const struct pbus_schema *schema, const char *type, const char *json,
			       struct pbus_rpc_buf *buf, char *error, size_t error_size)
{
	struct enc e = {.s = schema, .b = buf};
	json_t *root = NULL;
	uint32_t t;
	size_t before;
	int r;

	if (!schema || !type || !json || !buf)
		return -EINVAL;
	t = pbus_schema_type_find(schema, type);
	if (t == PBUS_SCHEMA_NO_TYPE)
		return -ENOENT;
	before = buf->size;
	if ((r = parse_json(json, &root, &e.m)) == 0)
		r = enc_value(&e, t, root, 0);
	if (r == 0 && buf->error)
		r = msg_set(&e.m, buf->error, "%s", buf->error == -ENOMEM ? "out of memory" : "not encodable");
	json_decref(root);
	finish_error(&e, r, buf, before, error, error_size);
	return r;
}

/* ======================================================================
 * The interface for the proxy runtime
 * ====================================================================== */

int pbus_rpc_json_interface_new(const struct pbus_schema *schema, struct pbus_rpc_interface **ret_interface)
{
	struct pbus_rpc_interface *itf;
	struct pbus_rpc_method *methods;
	struct pbus_rpc_broadcast *broadcasts;

	if (!schema || !ret_interface)
		return -EINVAL;
	itf = calloc(1, sizeof(*itf));
	methods = calloc(schema->method_count + 1, sizeof(*methods));
	broadcasts = calloc(schema->broadcast_count + 1, sizeof(*broadcasts));
	if (!itf || !methods || !broadcasts) {
		free(itf);
		free(methods);
		free(broadcasts);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < schema->method_count; i++) {
		methods[i].name = schema->methods[i].name;
		methods[i].flags = schema->methods[i].fire_and_forget ? PBUS_RPC_FIRE_AND_FORGET : 0;
		methods[i].callable_by = schema->methods[i].group;
	}
	for (uint32_t i = 0; i < schema->broadcast_count; i++) {
		broadcasts[i].name = schema->broadcasts[i].name;
		broadcasts[i].selective = schema->broadcasts[i].selective;
	}
	itf->name = schema->interface;
	itf->major = schema->major;
	itf->minor = schema->minor;
	itf->method_count = (uint16_t)schema->method_count;
	itf->broadcast_count = (uint16_t)schema->broadcast_count;
	itf->methods = methods;
	itf->broadcasts = broadcasts;
	*ret_interface = itf;
	return 0;
}

void pbus_rpc_json_interface_free(struct pbus_rpc_interface *itf)
{
	if (!itf)
		return;
	free((void *)itf->methods);
	free((void *)itf->broadcasts);
	free(itf);
}
