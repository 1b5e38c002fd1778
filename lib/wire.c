/* SPDX-License-Identifier: MIT */
/*
 * wire.c: frames of the socket protocol as bytes (wire-internal.h,
 * docs/socket-protocol.md §2). Little-endian on the wire, whatever the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

const char *pbus_wire_type_name(unsigned type)
{
	static const char *const names[] = {
		NULL, "HELLO", "HELLO_REPLY", "SCHEMA_GET", "SCHEMA", "GET", "VALUES", "SET",
		"SET_REPLY", "SUBSCRIBE", "SUBSCRIBED", "UNSUBSCRIBE", "UNSUBSCRIBED", "NOTIFY",
		"STATS_GET", "STATS", "ERROR", "PING", "PONG", "SERVICE_REGISTER",
		"SERVICE_REGISTERED", "SERVICE_UNREGISTER", "SERVICE_UNREGISTERED", "SERVICE_LOOKUP",
		"SERVICE", "SERVICE_UNWATCH", "SERVICE_UNWATCHED", "CONNECT", "CONNECTED", "CALL",
		"RETURN", "BROADCAST_SUBSCRIBE", "BROADCAST_SUBSCRIBED", "BROADCAST_UNSUBSCRIBE",
		"BROADCAST_UNSUBSCRIBED", "BROADCAST",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == PBUS_WIRE_TYPE_MAX + 1, "a name per type");

	return type >= 1 && type <= PBUS_WIRE_TYPE_MAX ? names[type] : "unknown";
}

int pbus_wire_header_parse(const void *data, size_t avail, uint32_t max_frame,
			   struct pbus_wire_header *h)
{
	const unsigned char *p = data;

	if (avail < PBUS_WIRE_HEADER_SIZE)
		return 0;
	h->length = pbus_le_load32(p);
	h->type = (uint16_t)pbus_le_load(p + 4, 2);
	h->flags = (uint16_t)pbus_le_load(p + 6, 2);
	h->id = pbus_le_load32(p + 8);
	if (h->length > max_frame)
		return -EMSGSIZE;
	if (h->length < PBUS_WIRE_HEADER_SIZE || h->type < 1 || h->type > PBUS_WIRE_TYPE_MAX ||
	    (h->flags & ~pbus_wire_flags_allowed(h->type)))
		return -EPROTO;
	return 1;
}

/* --- building ------------------------------------------------------------- */

void pbus_wire_buf_free(struct pbus_wire_buf *b)
{
	free(b->data);
	*b = (struct pbus_wire_buf){0};
}

void pbus_wire_buf_consume(struct pbus_wire_buf *b, size_t n)
{
	if (n >= b->size) {
		b->size = 0;
		return;
	}
	memmove(b->data, b->data + n, b->size - n);
	b->size -= n;
}

unsigned char *pbus_wire_grow_(struct pbus_wire_buf *b, size_t n)
{
	size_t capacity = b->capacity ? b->capacity : 256;
	unsigned char *data;

	if (b->failed)
		return NULL;
	while (capacity < b->size + n)
		capacity *= 2;
	data = realloc(b->data, capacity);
	if (!data) {
		b->failed = true;
		return NULL;
	}
	b->data = data;
	b->capacity = capacity;
	b->size += n;
	return b->data + b->size - n;
}

size_t pbus_wire_begin(struct pbus_wire_buf *b, unsigned type, uint32_t id)
{
	size_t start = b->size;
	unsigned char *p = pbus_wire_room(b, PBUS_WIRE_HEADER_SIZE);

	if (p) {
		pbus_le_store(p, 0, 4); /* length, patched by pbus_wire_end() */
		pbus_le_store(p + 4, type, 2);
		pbus_le_store(p + 6, 0, 2);
		pbus_le_store(p + 8, id, 4);
	}
	return start;
}

void pbus_wire_bytes(struct pbus_wire_buf *b, const void *p, size_t n)
{
	unsigned char *dst = n ? pbus_wire_room(b, n) : NULL;

	if (dst)
		memcpy(dst, p, n);
}

void pbus_wire_str(struct pbus_wire_buf *b, const char *s, size_t n)
{
	pbus_wire_u32(b, (uint32_t)n);
	pbus_wire_bytes(b, s, n);
}

void pbus_wire_value(struct pbus_wire_buf *b, uint32_t index, uint32_t status,
		     uint64_t timestamp_ns, uint64_t seq, const void *value, uint32_t length)
{
	unsigned char *p = pbus_wire_value_reserve(b, length);

	if (!p)
		return;
	if (length)
		memcpy(p + PBUS_WIRE_VALUE_HEAD, value, length);
	pbus_wire_value_commit(b, p, index, status, timestamp_ns, seq, length);
}

int pbus_wire_end(struct pbus_wire_buf *b, size_t start)
{
	size_t length;

	if (b->failed) {
		/* Keep what was complete before this frame. */
		b->failed = false;
		if (b->size > start)
			b->size = start;
		return -ENOMEM;
	}
	length = b->size - start;
	pbus_le_store(b->data + start, length, 4);
	return 0;
}

void pbus_wire_cancel(struct pbus_wire_buf *b, size_t start)
{
	b->failed = false;
	if (b->size > start)
		b->size = start;
}

/* --- reading -------------------------------------------------------------- */

const char *pbus_wire_get_str(struct pbus_wire_reader *r, uint32_t *ret_length)
{
	uint32_t n = pbus_wire_get_u32(r);
	const char *s = (const char *)pbus_wire_get_bytes(r, n);

	*ret_length = s ? n : 0;
	return s;
}

bool pbus_wire_get_value(struct pbus_wire_reader *r, struct pbus_wire_value *v)
{
	v->index = pbus_wire_get_u32(r);
	v->status = pbus_wire_get_u32(r);
	v->timestamp_ns = pbus_wire_get_u64(r);
	v->seq = pbus_wire_get_u64(r);
	v->length = pbus_wire_get_u32(r);
	v->value = pbus_wire_get_bytes(r, v->length);
	return !r->bad;
}
