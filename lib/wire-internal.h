/* SPDX-License-Identifier: MIT */
/*
 * wire-internal.h: the frames of the socket protocol (docs/socket-protocol.md)
 * as bytes: building frames into a growable buffer and reading bodies with
 * bounds checks. Shared by pbusd's server (through the static library) and
 * the client library (client.c). No I/O here.
 *
 * A struct pbus_wire_buf or pbus_wire_reader is used by one thread at a time.
 */
#ifndef PBUS_WIRE_INTERNAL_H
#define PBUS_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PBUS_WIRE_VERSION 1
#define PBUS_WIRE_HEADER_SIZE 12
#define PBUS_WIRE_MAX_FRAME_DEFAULT (1u << 20)
#define PBUS_WIRE_MAX_FRAME_LIMIT (64u << 20)
#define PBUS_WIRE_NAME_MAX 64 /* HELLO client_name */

/* Little-endian stores and loads of @n = 1..8 bytes at @p, whatever the
 * host: the byte order of every integer on the wire. */
static inline void pbus_le_store(unsigned char *p, uint64_t v, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, n);
#else
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
#endif
}

static inline uint64_t pbus_le_load(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, n);
#else
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
#endif
	return v;
}

static inline uint32_t pbus_le_load32(const unsigned char *p)
{
	return (uint32_t)pbus_le_load(p, 4);
}

enum pbus_wire_type {
	PBUS_WIRE_HELLO = 1,
	PBUS_WIRE_HELLO_REPLY = 2,
	PBUS_WIRE_SCHEMA_GET = 3,
	PBUS_WIRE_SCHEMA = 4,
	PBUS_WIRE_GET = 5,
	PBUS_WIRE_VALUES = 6,
	PBUS_WIRE_SET = 7,
	PBUS_WIRE_SET_REPLY = 8,
	PBUS_WIRE_SUBSCRIBE = 9,
	PBUS_WIRE_SUBSCRIBED = 10,
	PBUS_WIRE_UNSUBSCRIBE = 11,
	PBUS_WIRE_UNSUBSCRIBED = 12,
	PBUS_WIRE_NOTIFY = 13,
	PBUS_WIRE_STATS_GET = 14,
	PBUS_WIRE_STATS = 15,
	PBUS_WIRE_ERROR = 16,
	PBUS_WIRE_PING = 17,
	PBUS_WIRE_PONG = 18,
	PBUS_WIRE_SERVICE_REGISTER = 19,
	PBUS_WIRE_SERVICE_REGISTERED = 20,
	PBUS_WIRE_SERVICE_UNREGISTER = 21,
	PBUS_WIRE_SERVICE_UNREGISTERED = 22,
	PBUS_WIRE_SERVICE_LOOKUP = 23,
	PBUS_WIRE_SERVICE = 24,
	PBUS_WIRE_SERVICE_UNWATCH = 25,
	PBUS_WIRE_SERVICE_UNWATCHED = 26,
	/* Method calls, between a proxy and a stub (docs/methods.md §3). */
	PBUS_WIRE_CONNECT = 27,
	PBUS_WIRE_CONNECTED = 28,
	PBUS_WIRE_CALL = 29,
	PBUS_WIRE_RETURN = 30,
	PBUS_WIRE_BROADCAST_SUBSCRIBE = 31,
	PBUS_WIRE_BROADCAST_SUBSCRIBED = 32,
	PBUS_WIRE_BROADCAST_UNSUBSCRIBE = 33,
	PBUS_WIRE_BROADCAST_UNSUBSCRIBED = 34,
	PBUS_WIRE_BROADCAST = 35,
	PBUS_WIRE_TYPE_MAX = 35
};

/* The name of a message type ("GET"), or "unknown". */
const char *pbus_wire_type_name(unsigned type);

struct pbus_wire_header {
	uint32_t length; /* of the whole frame */
	uint16_t type, flags;
	uint32_t id;
};

/* Frame flags (docs/socket-protocol.md §2). Only SET has one:
 * APPLIED, "reply once the hardware applied the values" (§3.3). */
#define PBUS_WIRE_FLAG_APPLIED 0x0001u

/* The flags a frame of @type may carry. */
static inline unsigned pbus_wire_flags_allowed(unsigned type)
{
	return type == PBUS_WIRE_SET ? PBUS_WIRE_FLAG_APPLIED : 0;
}

/*
 * Look at the first @avail bytes of a stream: 0 if a whole header is not
 * there yet, 1 with *h filled if it is and it is acceptable (length within
 * 12 … @max_frame, a known type, no flags but pbus_wire_flags_allowed()'s),
 * or -EMSGSIZE / -EPROTO with *h filled as far as it could be read.
 */
int pbus_wire_header_parse(const void *data, size_t avail, uint32_t max_frame,
			   struct pbus_wire_header *h);

/* --- building ------------------------------------------------------------- */

struct pbus_wire_buf {
	unsigned char *data;
	size_t size, capacity;
	bool failed; /* an allocation failed: the content is incomplete */
};

void pbus_wire_buf_free(struct pbus_wire_buf *b);
/* Drop the first @n bytes (sent ones). */
void pbus_wire_buf_consume(struct pbus_wire_buf *b, size_t n);

/* The growth path of pbus_wire_room(): reallocates, or marks @b failed. */
unsigned char *pbus_wire_grow_(struct pbus_wire_buf *b, size_t n);

/* @n more bytes at the end of @b, or NULL once an allocation failed. The
 * small puts below are inline: a reply of a few hundred values is built
 * from thousands of them. */
static inline unsigned char *pbus_wire_room(struct pbus_wire_buf *b, size_t n)
{
	if (__builtin_expect(b->failed || b->size + n > b->capacity, 0))
		return pbus_wire_grow_(b, n);
	b->size += n;
	return b->data + b->size - n;
}

static inline void pbus_wire_put_le_(struct pbus_wire_buf *b, uint64_t v, unsigned n)
{
	unsigned char *p = pbus_wire_room(b, n);

	if (p)
		pbus_le_store(p, v, n);
}

/* Start a frame at the end of @b; returns its offset for pbus_wire_end(). */
size_t pbus_wire_begin(struct pbus_wire_buf *b, unsigned type, uint32_t id);
static inline void pbus_wire_u16(struct pbus_wire_buf *b, uint16_t v) { pbus_wire_put_le_(b, v, 2); }
static inline void pbus_wire_u32(struct pbus_wire_buf *b, uint32_t v) { pbus_wire_put_le_(b, v, 4); }
static inline void pbus_wire_i32(struct pbus_wire_buf *b, int32_t v)
{
	pbus_wire_put_le_(b, (uint32_t)v, 4);
}
static inline void pbus_wire_u64(struct pbus_wire_buf *b, uint64_t v) { pbus_wire_put_le_(b, v, 8); }
static inline void pbus_wire_f64(struct pbus_wire_buf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, 8);
	pbus_wire_put_le_(b, bits, 8);
}
void pbus_wire_bytes(struct pbus_wire_buf *b, const void *p, size_t n);
void pbus_wire_str(struct pbus_wire_buf *b, const char *s, size_t n);

/* A value record (docs/socket-protocol.md §2): index, status, timestamp,
 * version, length, then the value's bytes. */
#define PBUS_WIRE_VALUE_HEAD 28
void pbus_wire_value(struct pbus_wire_buf *b, uint32_t index, uint32_t status,
		     uint64_t timestamp_ns, uint64_t seq, const void *value, uint32_t length);
/* The same record built in place, for a value read straight into the
 * buffer: reserve room for a value of up to @max_length bytes; the value
 * goes at the returned record + PBUS_WIRE_VALUE_HEAD. Then either commit
 * it with its fields and actual length, or drop it (b->size = its
 * offset). NULL once an allocation failed. */
static inline unsigned char *pbus_wire_value_reserve(struct pbus_wire_buf *b, size_t max_length)
{
	return pbus_wire_room(b, PBUS_WIRE_VALUE_HEAD + max_length);
}
static inline void pbus_wire_value_commit(struct pbus_wire_buf *b, unsigned char *record,
					  uint32_t index, uint32_t status, uint64_t timestamp_ns,
					  uint64_t seq, uint32_t length)
{
	pbus_le_store(record, index, 4);
	pbus_le_store(record + 4, status, 4);
	pbus_le_store(record + 8, timestamp_ns, 8);
	pbus_le_store(record + 16, seq, 8);
	pbus_le_store(record + 24, length, 4);
	b->size = (size_t)(record - b->data) + PBUS_WIRE_VALUE_HEAD + length;
}
/* Patch the frame's length; -ENOMEM if anything failed since begin, in
 * which case the frame is removed again. */
int pbus_wire_end(struct pbus_wire_buf *b, size_t start);
/* Remove the frame begun at @start (e.g. to replace it by an ERROR). */
void pbus_wire_cancel(struct pbus_wire_buf *b, size_t start);

/* --- reading -------------------------------------------------------------- */

struct pbus_wire_reader {
	const unsigned char *p, *end;
	bool bad; /* read past the end */
};

static inline void pbus_wire_reader_init(struct pbus_wire_reader *r, const void *body, size_t n)
{
	r->p = (const unsigned char *)body;
	r->end = r->p + n;
	r->bad = false;
}

/* @n bytes in place, or NULL (and bad) if fewer remain. */
static inline const void *pbus_wire_get_bytes(struct pbus_wire_reader *r, size_t n)
{
	const unsigned char *p = r->p;

	if (__builtin_expect(r->bad || (size_t)(r->end - r->p) < n, 0)) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static inline uint64_t pbus_wire_get_le_(struct pbus_wire_reader *r, unsigned n)
{
	const unsigned char *p = (const unsigned char *)pbus_wire_get_bytes(r, n);

	return p ? pbus_le_load(p, n) : 0;
}

/* The integers: 0 (and bad) if fewer bytes remain. */
static inline uint16_t pbus_wire_get_u16(struct pbus_wire_reader *r)
{
	return (uint16_t)pbus_wire_get_le_(r, 2);
}
static inline uint32_t pbus_wire_get_u32(struct pbus_wire_reader *r)
{
	return (uint32_t)pbus_wire_get_le_(r, 4);
}
static inline int32_t pbus_wire_get_i32(struct pbus_wire_reader *r)
{
	return (int32_t)(uint32_t)pbus_wire_get_le_(r, 4);
}
static inline uint64_t pbus_wire_get_u64(struct pbus_wire_reader *r)
{
	return pbus_wire_get_le_(r, 8);
}
static inline double pbus_wire_get_f64(struct pbus_wire_reader *r)
{
	uint64_t bits = pbus_wire_get_le_(r, 8);
	double v;

	memcpy(&v, &bits, 8);
	return v;
}
/* A str: its bytes in place (not NUL-terminated) and length; NULL if bad. */
const char *pbus_wire_get_str(struct pbus_wire_reader *r, uint32_t *ret_length);
/* Bytes left unread. */
static inline size_t pbus_wire_left(const struct pbus_wire_reader *r)
{
	return r->bad ? 0 : (size_t)(r->end - r->p);
}
/* The body was read exactly: nothing missing, nothing left over. */
static inline bool pbus_wire_done(const struct pbus_wire_reader *r)
{
	return !r->bad && r->p == r->end;
}

/* One value record; false (and bad) if malformed. @value points into the
 * body. */
struct pbus_wire_value {
	uint32_t index, status, length;
	uint64_t timestamp_ns, seq;
	const void *value;
};
bool pbus_wire_get_value(struct pbus_wire_reader *r, struct pbus_wire_value *v);

#endif
