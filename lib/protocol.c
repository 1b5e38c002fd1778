/* SPDX-License-Identifier: MIT */
/*
 * protocol.c: the messages of the socket protocol and the frame reader
 * (protocol-internal.h, docs/socket-protocol.md). The bytes themselves
 * (little-endian integers, frame headers, value records) are wire.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "protocol-internal.h"
#include "value-internal.h"

static int why_(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why_(char *why, const char *fmt, ...)
{
	va_list ap;

	if (why) {
		va_start(ap, fmt);
		vsnprintf(why, PBUS_PROTO_WHY_MAX, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/* "malformed TYPE" unless the body was read exactly. */
static int done_or_malformed(const struct pbus_wire_reader *r, unsigned type, char *why)
{
	if (pbus_wire_done(r))
		return 0;
	return why_(why, "malformed %s", pbus_wire_type_name(type));
}

static void put_str(struct pbus_wire_buf *b, const struct pbus_proto_str *s)
{
	pbus_wire_str(b, s->s, s->length);
}

static void get_str(struct pbus_wire_reader *r, struct pbus_proto_str *s)
{
	s->s = pbus_wire_get_str(r, &s->length);
}

/* --- HELLO and HELLO_REPLY ------------------------------------------------------ */

int pbus_proto_hello_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_hello *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_HELLO, id);

	pbus_wire_u32(b, m->min_version);
	pbus_wire_u32(b, m->max_version);
	pbus_wire_u64(b, m->schema_hash);
	put_str(b, &m->client_name);
	return pbus_wire_end(b, start);
}

int pbus_proto_hello_decode(const void *body, size_t n, struct pbus_proto_hello *m, char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	m->min_version = pbus_wire_get_u32(&r);
	m->max_version = pbus_wire_get_u32(&r);
	m->schema_hash = pbus_wire_get_u64(&r);
	get_str(&r, &m->client_name);
	e = done_or_malformed(&r, PBUS_WIRE_HELLO, why);
	if (e < 0)
		return e;
	if (m->client_name.length > PBUS_WIRE_NAME_MAX || memchr(m->client_name.s, 0, m->client_name.length) ||
	    !pbus_utf8_valid(m->client_name.s, m->client_name.length))
		return why_(why, "HELLO client_name is not UTF-8 of at most %d bytes without NUL",
			    PBUS_WIRE_NAME_MAX);
	return 0;
}

int pbus_proto_hello_reply_encode(struct pbus_wire_buf *b, uint32_t id,
				  const struct pbus_proto_hello_reply *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_HELLO_REPLY, id);

	pbus_wire_u32(b, m->version);
	pbus_wire_u64(b, m->schema_hash);
	pbus_wire_u32(b, m->param_count);
	pbus_wire_u32(b, m->max_frame);
	pbus_wire_u32(b, m->max_subscriptions);
	pbus_wire_u32(b, m->server_pid);
	put_str(b, &m->instance);
	put_str(b, &m->interface);
	return pbus_wire_end(b, start);
}

int pbus_proto_hello_reply_decode(const void *body, size_t n, struct pbus_proto_hello_reply *m,
				  char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	m->version = pbus_wire_get_u32(&r);
	m->schema_hash = pbus_wire_get_u64(&r);
	m->param_count = pbus_wire_get_u32(&r);
	m->max_frame = pbus_wire_get_u32(&r);
	m->max_subscriptions = pbus_wire_get_u32(&r);
	m->server_pid = pbus_wire_get_u32(&r);
	get_str(&r, &m->instance);
	get_str(&r, &m->interface);
	e = done_or_malformed(&r, PBUS_WIRE_HELLO_REPLY, why);
	if (e < 0)
		return e;
	if (m->max_frame < PBUS_WIRE_HEADER_SIZE)
		return why_(why, "HELLO_REPLY max_frame %u is below the header's %d bytes", m->max_frame,
			    PBUS_WIRE_HEADER_SIZE);
	return 0;
}

/* --- One str, nothing, one u32, any bytes ------------------------------------------ */

int pbus_proto_str_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, const char *s,
			  size_t length)
{
	size_t start = pbus_wire_begin(b, type, id);

	pbus_wire_str(b, s, length);
	return pbus_wire_end(b, start);
}

int pbus_proto_str_decode(unsigned type, const void *body, size_t n, struct pbus_proto_str *m,
			  char *why)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, body, n);
	get_str(&r, m);
	return done_or_malformed(&r, type, why);
}

int pbus_proto_empty_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id)
{
	return pbus_wire_end(b, pbus_wire_begin(b, type, id));
}

int pbus_proto_empty_decode(unsigned type, size_t n, char *why)
{
	return n == 0 ? 0 : why_(why, "malformed %s", pbus_wire_type_name(type));
}

int pbus_proto_u32_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, uint32_t value)
{
	size_t start = pbus_wire_begin(b, type, id);

	pbus_wire_u32(b, value);
	return pbus_wire_end(b, start);
}

int pbus_proto_u32_decode(unsigned type, const void *body, size_t n, uint32_t *value, char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	*value = pbus_wire_get_u32(&r);
	e = done_or_malformed(&r, type, why);
	if (e == 0 && type == PBUS_WIRE_SUBSCRIBED && *value == 0)
		return why_(why, "malformed SUBSCRIBED: subscription 0");
	return e;
}

int pbus_proto_bytes_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, const void *data,
			    size_t length)
{
	size_t start = pbus_wire_begin(b, type, id);

	pbus_wire_bytes(b, data, length);
	return pbus_wire_end(b, start);
}

/* --- Index lists ------------------------------------------------------------------ */

static void put_indexes(struct pbus_wire_buf *b, const uint32_t *indexes, size_t count)
{
	unsigned char *p;

	pbus_wire_u32(b, (uint32_t)count);
	p = pbus_wire_room(b, 4 * count);
	for (size_t k = 0; p && k < count; k++)
		pbus_le_store(p + 4 * k, indexes[k], 4);
}

/* "u32 count, count × u32 index", the rest of the body (GET, SUBSCRIBE). The
 * message names the problem: a count out of bounds is not a length problem,
 * though its indexes cannot fit either. */
static int get_indexes(struct pbus_wire_reader *r, unsigned type, uint32_t param_count,
		       struct pbus_proto_indexes *l, char *why)
{
	const char *what = pbus_wire_type_name(type);

	l->count = pbus_wire_get_u32(r);
	l->raw = NULL;
	if (r->bad)
		return why_(why, "malformed %s: no count", what);
	if (l->count == 0)
		return why_(why, "malformed %s: count 0 (at least 1 index)", what);
	if (l->count > param_count)
		return why_(why, "malformed %s: count %u exceeds the %u parameters of the schema", what,
			    l->count, param_count);
	if (pbus_wire_left(r) != (size_t)l->count * 4)
		return why_(why, "malformed %s: count %u needs %zu bytes of indexes, the frame has %zu", what,
			    l->count, (size_t)l->count * 4, pbus_wire_left(r));
	l->raw = pbus_wire_get_bytes(r, (size_t)l->count * 4);
	return 0;
}

int pbus_proto_get_encode(struct pbus_wire_buf *b, uint32_t id, const uint32_t *indexes, size_t count)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_GET, id);

	put_indexes(b, indexes, count);
	return pbus_wire_end(b, start);
}

int pbus_proto_get_decode(const void *body, size_t n, uint32_t param_count, struct pbus_proto_indexes *m,
			  char *why)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, body, n);
	return get_indexes(&r, PBUS_WIRE_GET, param_count, m, why);
}

int pbus_proto_subscribe_encode(struct pbus_wire_buf *b, uint32_t id,
				const struct pbus_proto_subscribe *m, const uint32_t *indexes)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SUBSCRIBE, id);

	pbus_wire_u32(b, m->min_interval_us);
	pbus_wire_f64(b, m->deadband);
	put_indexes(b, indexes, m->indexes.count);
	return pbus_wire_end(b, start);
}

int pbus_proto_subscribe_decode(const void *body, size_t n, uint32_t param_count,
				struct pbus_proto_subscribe *m, char *why)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, body, n);
	m->min_interval_us = pbus_wire_get_u32(&r);
	m->deadband = pbus_wire_get_f64(&r);
	if (r.bad)
		return why_(why, "malformed SUBSCRIBE");
	return get_indexes(&r, PBUS_WIRE_SUBSCRIBE, param_count, &m->indexes, why);
}

/* --- Value records ------------------------------------------------------------------ */

/* Where the count sits in the body. */
static size_t values_count_offset(unsigned type)
{
	return type == PBUS_WIRE_NOTIFY ? 4 : 0;
}

size_t pbus_proto_values_begin(struct pbus_wire_buf *b, unsigned type, uint32_t id, uint32_t subscription)
{
	size_t start = pbus_wire_begin(b, type, id);

	if (type == PBUS_WIRE_NOTIFY)
		pbus_wire_u32(b, subscription);
	pbus_wire_u32(b, 0); /* the count, stored by pbus_proto_values_end() */
	return start;
}

int pbus_proto_values_end(struct pbus_wire_buf *b, unsigned type, size_t start, uint32_t count)
{
	if (!b->failed)
		pbus_le_store(b->data + start + PBUS_WIRE_HEADER_SIZE + values_count_offset(type), count, 4);
	return pbus_wire_end(b, start);
}

int pbus_proto_values_decode(unsigned type, const void *body, size_t n, uint32_t param_count,
			     struct pbus_proto_values *m, char *why)
{
	const char *what = pbus_wire_type_name(type);
	struct pbus_wire_reader r;
	struct pbus_wire_value v;

	pbus_wire_reader_init(&r, body, n);
	m->subscription = type == PBUS_WIRE_NOTIFY ? pbus_wire_get_u32(&r) : 0;
	m->count = pbus_wire_get_u32(&r);
	m->records = r.p;
	m->end = r.end;
	if (r.bad)
		return why_(why, "malformed %s: no count", what);
	if (type == PBUS_WIRE_NOTIFY && m->subscription == 0)
		return why_(why, "malformed NOTIFY: subscription 0");
	if (m->count == 0 || (param_count && m->count > param_count))
		return why_(why, "malformed %s: count %u (1 … %u)", what, m->count, param_count);
	for (uint32_t k = 0; k < m->count; k++) {
		if (!pbus_wire_get_value(&r, &v))
			return why_(why, "malformed %s: record %u of %u is not whole", what, k, m->count);
		if (param_count && v.index >= param_count)
			return why_(why, "malformed %s: record %u names parameter %u of %u", what, k, v.index,
				    param_count);
	}
	if (!pbus_wire_done(&r))
		return why_(why, "malformed %s: %zu bytes after its %u records", what, pbus_wire_left(&r),
			    m->count);
	return 0;
}

/* --- SET and SET_REPLY --------------------------------------------------------------- */

int pbus_proto_set_encode(struct pbus_wire_buf *b, uint32_t id, unsigned flags,
			  const struct pbus_write *writes, size_t count)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SET, id);

	if (!b->failed)
		pbus_le_store(b->data + start + 6, flags & PBUS_WIRE_FLAG_APPLIED, 2);

	pbus_wire_u32(b, (uint32_t)count);
	for (size_t k = 0; k < count; k++) {
		pbus_wire_u32(b, writes[k].index);
		pbus_wire_u32(b, (uint32_t)writes[k].length);
		pbus_wire_bytes(b, writes[k].value, writes[k].length);
	}
	return pbus_wire_end(b, start);
}

int pbus_proto_set_decode(const void *body, size_t n, uint32_t param_count, struct pbus_write *writes,
			  uint32_t *ret_count, char *why)
{
	struct pbus_wire_reader r;
	uint32_t count;

	pbus_wire_reader_init(&r, body, n);
	count = pbus_wire_get_u32(&r);
	*ret_count = 0;
	if (r.bad)
		return why_(why, "malformed SET: no count");
	if (count == 0)
		return why_(why, "malformed SET: count 0 (at least 1 write)");
	if (count > param_count)
		return why_(why, "malformed SET: count %u exceeds the %u parameters of the schema", count,
			    param_count);
	for (uint32_t k = 0; k < count; k++) {
		writes[k] = (struct pbus_write){.status = PBUS_STATUS_OK};
		writes[k].index = pbus_wire_get_u32(&r);
		writes[k].length = pbus_wire_get_u32(&r);
		writes[k].value = pbus_wire_get_bytes(&r, writes[k].length);
	}
	if (!pbus_wire_done(&r))
		return why_(why, "malformed SET: %u writes do not fill the body", count);
	*ret_count = count;
	return 0;
}

int pbus_proto_set_reply_encode(struct pbus_wire_buf *b, uint32_t id, int32_t result, size_t count,
				const int32_t *results, const uint64_t *seqs)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SET_REPLY, id);
	unsigned char *p;

	pbus_wire_i32(b, result);
	pbus_wire_u32(b, (uint32_t)count);
	/* count × (i32 result, u64 version), in one piece of the buffer */
	p = pbus_wire_room(b, 12 * count);
	for (size_t k = 0; p && k < count; k++) {
		pbus_le_store(p + 12 * k, (uint32_t)results[k], 4);
		pbus_le_store(p + 12 * k + 4, seqs ? seqs[k] : 0, 8);
	}
	return pbus_wire_end(b, start);
}

int pbus_proto_set_reply_decode(const void *body, size_t n, struct pbus_proto_set_reply *m, char *why)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, body, n);
	m->result = pbus_wire_get_i32(&r);
	m->count = pbus_wire_get_u32(&r);
	if (r.bad || m->result > 0 || pbus_wire_left(&r) != (size_t)m->count * 12)
		return why_(why, "malformed SET_REPLY");
	m->raw = pbus_wire_get_bytes(&r, (size_t)m->count * 12);
	return 0;
}

/* --- ERROR ------------------------------------------------------------------------------ */

int pbus_proto_error_encode(struct pbus_wire_buf *b, uint32_t id, int32_t code, const char *message)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_ERROR, id);

	pbus_wire_i32(b, code);
	pbus_wire_str(b, message, strlen(message));
	return pbus_wire_end(b, start);
}

int pbus_proto_error_decode(const void *body, size_t n, struct pbus_proto_error *m, char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	m->code = pbus_wire_get_i32(&r);
	get_str(&r, &m->message);
	e = done_or_malformed(&r, PBUS_WIRE_ERROR, why);
	if (e == 0 && (m->code >= 0 || m->code < -4095))
		return why_(why, "malformed ERROR: code %d is not a negative errno", m->code);
	return e;
}

/* --- Services ---------------------------------------------------------------------------- */

/* A str of these messages: UTF-8 without NUL (§2). */
static int text_or_malformed(const struct pbus_proto_str *s, unsigned type, const char *field, char *why)
{
	if (memchr(s->s, 0, s->length) || !pbus_utf8_valid(s->s, s->length))
		return why_(why, "malformed %s: %s is not UTF-8 without NUL", pbus_wire_type_name(type), field);
	return 0;
}

int pbus_proto_service_register_encode(struct pbus_wire_buf *b, uint32_t id,
				       const struct pbus_proto_service_register *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SERVICE_REGISTER, id);

	put_str(b, &m->address);
	pbus_wire_u32(b, m->major);
	pbus_wire_u32(b, m->minor);
	put_str(b, &m->endpoint);
	return pbus_wire_end(b, start);
}

int pbus_proto_service_register_decode(const void *body, size_t n, struct pbus_proto_service_register *m,
				       char *why)
{
	const unsigned type = PBUS_WIRE_SERVICE_REGISTER;
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	get_str(&r, &m->address);
	m->major = pbus_wire_get_u32(&r);
	m->minor = pbus_wire_get_u32(&r);
	get_str(&r, &m->endpoint);
	if ((e = done_or_malformed(&r, type, why)) < 0 ||
	    (e = text_or_malformed(&m->address, type, "address", why)) < 0)
		return e;
	return text_or_malformed(&m->endpoint, type, "endpoint", why);
}

int pbus_proto_service_lookup_encode(struct pbus_wire_buf *b, uint32_t id,
				     const struct pbus_proto_service_lookup *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SERVICE_LOOKUP, id);

	put_str(b, &m->address);
	pbus_wire_u32(b, m->watch);
	return pbus_wire_end(b, start);
}

int pbus_proto_service_lookup_decode(const void *body, size_t n, struct pbus_proto_service_lookup *m,
				     char *why)
{
	const unsigned type = PBUS_WIRE_SERVICE_LOOKUP;
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	get_str(&r, &m->address);
	m->watch = pbus_wire_get_u32(&r);
	if ((e = done_or_malformed(&r, type, why)) < 0 ||
	    (e = text_or_malformed(&m->address, type, "address", why)) < 0)
		return e;
	if (m->watch > 1)
		return why_(why, "malformed SERVICE_LOOKUP: watch %u (0 or 1)", m->watch);
	return 0;
}

int pbus_proto_service_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_service *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_SERVICE, id);

	put_str(b, &m->address);
	pbus_wire_u32(b, m->available);
	pbus_wire_u32(b, m->major);
	pbus_wire_u32(b, m->minor);
	pbus_wire_u32(b, m->pid);
	pbus_wire_u32(b, m->uid);
	put_str(b, &m->endpoint);
	return pbus_wire_end(b, start);
}

int pbus_proto_service_decode(const void *body, size_t n, struct pbus_proto_service *m, char *why)
{
	const unsigned type = PBUS_WIRE_SERVICE;
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	get_str(&r, &m->address);
	m->available = pbus_wire_get_u32(&r);
	m->major = pbus_wire_get_u32(&r);
	m->minor = pbus_wire_get_u32(&r);
	m->pid = pbus_wire_get_u32(&r);
	m->uid = pbus_wire_get_u32(&r);
	get_str(&r, &m->endpoint);
	if ((e = done_or_malformed(&r, type, why)) < 0 ||
	    (e = text_or_malformed(&m->address, type, "address", why)) < 0 ||
	    (e = text_or_malformed(&m->endpoint, type, "endpoint", why)) < 0)
		return e;
	if (m->available > 1)
		return why_(why, "malformed SERVICE: available %u (0 or 1)", m->available);
	if (!m->available && (m->major || m->minor || m->pid || m->uid || m->endpoint.length))
		return why_(why, "malformed SERVICE: a service not available with a version, pid, uid or "
			    "endpoint");
	return 0;
}

int pbus_proto_service_address_decode(unsigned type, const void *body, size_t n,
				      struct pbus_proto_str *address, char *why)
{
	int e = pbus_proto_str_decode(type, body, n, address, why);

	return e < 0 ? e : text_or_malformed(address, type, "address", why);
}

/* --- CONNECT and CONNECTED ---------------------------------------------------------- */

int pbus_proto_connect_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_connect *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_CONNECT, id);

	pbus_wire_u32(b, m->min_version);
	pbus_wire_u32(b, m->max_version);
	put_str(b, &m->interface);
	pbus_wire_u32(b, m->major);
	pbus_wire_u32(b, m->minor);
	put_str(b, &m->client_name);
	return pbus_wire_end(b, start);
}

/* A name field: 1 (or 0 when @may_be_empty) .. @max bytes of UTF-8, no NUL. */
static bool name_ok(const struct pbus_proto_str *s, size_t max, bool may_be_empty)
{
	return (s->length > 0 || may_be_empty) && s->length <= max && !memchr(s->s, 0, s->length) &&
	       pbus_utf8_valid(s->s, s->length);
}

int pbus_proto_connect_decode(const void *body, size_t n, struct pbus_proto_connect *m, char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	m->min_version = pbus_wire_get_u32(&r);
	m->max_version = pbus_wire_get_u32(&r);
	get_str(&r, &m->interface);
	m->major = pbus_wire_get_u32(&r);
	m->minor = pbus_wire_get_u32(&r);
	get_str(&r, &m->client_name);
	e = done_or_malformed(&r, PBUS_WIRE_CONNECT, why);
	if (e < 0)
		return e;
	if (!name_ok(&m->interface, PBUS_PROTO_INTERFACE_MAX, false))
		return why_(why, "CONNECT interface is not 1 to %d bytes of UTF-8 without NUL",
			    PBUS_PROTO_INTERFACE_MAX);
	if (!name_ok(&m->client_name, PBUS_WIRE_NAME_MAX, true))
		return why_(why, "CONNECT client_name is not UTF-8 of at most %d bytes without NUL",
			    PBUS_WIRE_NAME_MAX);
	return 0;
}

int pbus_proto_connected_encode(struct pbus_wire_buf *b, uint32_t id,
				const struct pbus_proto_connected *m)
{
	size_t start = pbus_wire_begin(b, PBUS_WIRE_CONNECTED, id);

	pbus_wire_u32(b, m->version);
	pbus_wire_u32(b, m->major);
	pbus_wire_u32(b, m->minor);
	pbus_wire_u32(b, m->max_frame);
	pbus_wire_u32(b, m->server_pid);
	return pbus_wire_end(b, start);
}

int pbus_proto_connected_decode(const void *body, size_t n, struct pbus_proto_connected *m, char *why)
{
	struct pbus_wire_reader r;
	int e;

	pbus_wire_reader_init(&r, body, n);
	m->version = pbus_wire_get_u32(&r);
	m->major = pbus_wire_get_u32(&r);
	m->minor = pbus_wire_get_u32(&r);
	m->max_frame = pbus_wire_get_u32(&r);
	m->server_pid = pbus_wire_get_u32(&r);
	e = done_or_malformed(&r, PBUS_WIRE_CONNECTED, why);
	if (e < 0)
		return e;
	if (m->max_frame < PBUS_WIRE_HEADER_SIZE)
		return why_(why, "CONNECTED max_frame %u is below the 12-byte header", m->max_frame);
	return 0;
}

/* --- CALL, RETURN, BROADCAST ---------------------------------------------------------- */

void pbus_proto_call_head(unsigned char *frame, unsigned type, uint32_t id, uint32_t length,
			  uint16_t index, uint16_t flags)
{
	pbus_le_store(frame, length, 4);
	pbus_le_store(frame + 4, type, 2);
	pbus_le_store(frame + 6, 0, 2);
	pbus_le_store(frame + 8, id, 4);
	pbus_le_store(frame + 12, index, 2);
	pbus_le_store(frame + 14, flags, 2);
}

void pbus_proto_return_head(unsigned char *frame, uint32_t id, uint32_t length)
{
	pbus_le_store(frame, length, 4);
	pbus_le_store(frame + 4, PBUS_WIRE_RETURN, 2);
	pbus_le_store(frame + 6, 0, 2);
	pbus_le_store(frame + 8, id, 4);
}

int pbus_proto_call_decode(unsigned type, const void *body, size_t n, struct pbus_proto_call *m,
			   char *why)
{
	const unsigned char *p = body;
	unsigned allowed = type == PBUS_WIRE_CALL ? PBUS_PROTO_CALL_NO_REPLY : 0;

	if (n < 4)
		return why_(why, "malformed %s: %zu bytes (at least 4)", pbus_wire_type_name(type), n);
	m->index = (uint16_t)pbus_le_load(p, 2);
	m->flags = (uint16_t)pbus_le_load(p + 2, 2);
	m->args = p + 4;
	m->args_length = n - 4;
	if (m->flags & ~allowed)
		return why_(why, "malformed %s: flags 0x%x", pbus_wire_type_name(type), m->flags);
	return 0;
}

int pbus_proto_u16_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, uint16_t value)
{
	size_t start = pbus_wire_begin(b, type, id);

	pbus_wire_u16(b, value);
	return pbus_wire_end(b, start);
}

int pbus_proto_u16_decode(unsigned type, const void *body, size_t n, uint16_t *value, char *why)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, body, n);
	*value = pbus_wire_get_u16(&r);
	return done_or_malformed(&r, type, why);
}


/* --- The frame reader --------------------------------------------------------------------- */

void pbus_frame_in_free(struct pbus_frame_in *in)
{
	free(in->data);
	*in = (struct pbus_frame_in){0};
}

int pbus_frame_in_room(struct pbus_frame_in *in, size_t need, size_t chunk, size_t limit)
{
	unsigned char *data;
	size_t capacity;

	if (in->capacity - in->end >= need)
		return 0;
	if (in->start > 0) {
		memmove(in->data, in->data + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
		if (in->capacity - in->end >= need)
			return 0;
	}
	if (limit && in->end + need > limit)
		return -ENOBUFS;
	capacity = in->capacity ? in->capacity : chunk;
	while (capacity - in->end < need)
		capacity *= 2;
	if (limit && capacity > limit)
		capacity = limit;
	data = realloc(in->data, capacity);
	if (!data)
		return -ENOMEM;
	in->data = data;
	in->capacity = capacity;
	return 0;
}

ssize_t pbus_frame_in_recv(struct pbus_frame_in *in, int fd)
{
	for (;;) {
		ssize_t n = recv(fd, in->data + in->end, in->capacity - in->end, MSG_DONTWAIT);

		if (n > 0)
			in->end += (size_t)n;
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

int pbus_frame_in_next(struct pbus_frame_in *in, uint32_t max_frame, struct pbus_wire_header *h,
		       const unsigned char **ret_body, char *why)
{
	size_t avail = in->end - in->start;
	int r = pbus_wire_header_parse(in->data + in->start, avail, max_frame, h);

	if (r == -EMSGSIZE) {
		if (why)
			snprintf(why, PBUS_PROTO_WHY_MAX, "frame of %u bytes above the limit of %u", h->length,
				 max_frame);
		return r;
	}
	if (r < 0) {
		if (h->length < PBUS_WIRE_HEADER_SIZE)
			why_(why, "frame length %u below 12", h->length);
		else if (h->type < 1 || h->type > PBUS_WIRE_TYPE_MAX)
			why_(why, "unknown message type %u", (unsigned)h->type);
		else if (pbus_wire_flags_allowed(h->type))
			why_(why, "frame flags 0x%04x of %s: only 0x%04x is defined", (unsigned)h->flags,
			     pbus_wire_type_name(h->type), pbus_wire_flags_allowed(h->type));
		else
			why_(why, "frame flags 0x%04x are not 0", (unsigned)h->flags);
		return r;
	}
	if (r == 0 || avail < h->length)
		return 0;
	*ret_body = in->data + in->start + PBUS_WIRE_HEADER_SIZE;
	in->start += h->length;
	/* All taken: the next recv() starts at the front (the body stays
	 * where it is until then). */
	if (in->start == in->end)
		in->start = in->end = 0;
	return 1;
}
