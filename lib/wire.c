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
		"STATS_GET", "STATS", "ERROR", "PING", "PONG",
	};

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
	if (h->length < PBUS_WIRE_HEADER_SIZE || h->flags != 0 || h->type < 1 ||
	    h->type > PBUS_WIRE_TYPE_MAX)
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

static unsigned char *grow(struct pbus_wire_buf *b, size_t n)
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

/* @n more bytes at the end of @b, or NULL once an allocation failed. */
static inline unsigned char *room(struct pbus_wire_buf *b, size_t n)
{
	if (__builtin_expect(b->failed || b->size + n > b->capacity, 0))
		return grow(b, n);
	b->size += n;
	return b->data + b->size - n;
}

static inline void put_le(struct pbus_wire_buf *b, uint64_t v, unsigned n)
{
	unsigned char *p = room(b, n);

	if (p)
		pbus_le_store(p, v, n);
}

size_t pbus_wire_begin(struct pbus_wire_buf *b, unsigned type, uint32_t id)
{
	size_t start = b->size;

	put_le(b, 0, 4); /* length, patched by pbus_wire_end() */
	put_le(b, type, 2);
	put_le(b, 0, 2);
	put_le(b, id, 4);
	return start;
}

void pbus_wire_u16(struct pbus_wire_buf *b, uint16_t v) { put_le(b, v, 2); }
void pbus_wire_u32(struct pbus_wire_buf *b, uint32_t v) { put_le(b, v, 4); }
void pbus_wire_i32(struct pbus_wire_buf *b, int32_t v) { put_le(b, (uint32_t)v, 4); }
void pbus_wire_u64(struct pbus_wire_buf *b, uint64_t v) { put_le(b, v, 8); }

void pbus_wire_f64(struct pbus_wire_buf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, 8);
	put_le(b, bits, 8);
}

void pbus_wire_bytes(struct pbus_wire_buf *b, const void *p, size_t n)
{
	unsigned char *dst = n ? room(b, n) : NULL;

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
	unsigned char *p = room(b, 28 + (size_t)length);

	if (!p)
		return;
	pbus_le_store(p, index, 4);
	pbus_le_store(p + 4, status, 4);
	pbus_le_store(p + 8, timestamp_ns, 8);
	pbus_le_store(p + 16, seq, 8);
	pbus_le_store(p + 24, length, 4);
	if (length)
		memcpy(p + 28, value, length);
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

static inline const unsigned char *take(struct pbus_wire_reader *r, size_t n)
{
	const unsigned char *p = r->p;

	if (__builtin_expect(r->bad || (size_t)(r->end - r->p) < n, 0)) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static inline uint64_t get_le(struct pbus_wire_reader *r, unsigned n)
{
	const unsigned char *p = take(r, n);

	return p ? pbus_le_load(p, n) : 0;
}

uint16_t pbus_wire_get_u16(struct pbus_wire_reader *r) { return (uint16_t)get_le(r, 2); }
uint32_t pbus_wire_get_u32(struct pbus_wire_reader *r) { return (uint32_t)get_le(r, 4); }
int32_t pbus_wire_get_i32(struct pbus_wire_reader *r) { return (int32_t)(uint32_t)get_le(r, 4); }
uint64_t pbus_wire_get_u64(struct pbus_wire_reader *r) { return get_le(r, 8); }

double pbus_wire_get_f64(struct pbus_wire_reader *r)
{
	uint64_t bits = get_le(r, 8);
	double v;

	memcpy(&v, &bits, 8);
	return v;
}

const void *pbus_wire_get_bytes(struct pbus_wire_reader *r, size_t n)
{
	return take(r, n);
}

const char *pbus_wire_get_str(struct pbus_wire_reader *r, uint32_t *ret_length)
{
	uint32_t n = pbus_wire_get_u32(r);
	const char *s = (const char *)take(r, n);

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
	v->value = take(r, v->length);
	return !r->bad;
}
