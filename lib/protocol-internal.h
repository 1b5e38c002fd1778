/* SPDX-License-Identifier: MIT */
/*
 * protocol-internal.h: the messages of pbusd's socket protocol
 * (docs/socket-protocol.md §3), each in one place: per message type a plain
 * struct, an encoder that appends the whole frame to a struct pbus_wire_buf
 * and a decoder that checks a body exactly as §2-§4 say and fills the
 * struct; and the frame reader (struct pbus_frame_in) that takes frames off
 * a stream socket. pbusd's server and the client library (client.c) both
 * use it, and nothing else encodes or decodes a body: a new message type
 * goes here first (docs/architecture.md).
 *
 * Ownership: a decoded struct points into the body it was decoded from
 * (strings, index lists, value records and SET values are not copied); it
 * is valid while that body is. Encoders copy what they are given.
 *
 * Errors: a decoder returns 0, or -EPROTO for a body that §2-§4 call
 * malformed, with one line naming the problem in @why (PBUS_PROTO_WHY_MAX
 * bytes, may be NULL): "malformed GET: count 0 (at least 1 index)". The
 * server sends that line in its ERROR; a client closes the connection.
 * An encoder returns pbus_wire_end()'s result (0, or -ENOMEM with nothing
 * of the frame left in the buffer).
 *
 * Threads: no state of its own; a buffer or frame reader is used by one
 * thread at a time.
 */
#ifndef PBUS_PROTOCOL_INTERNAL_H
#define PBUS_PROTOCOL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <parambus/table.h> /* struct pbus_write */

#include "wire-internal.h"

#define PBUS_PROTO_WHY_MAX 160

/* A str field (§2): its bytes in place, not NUL-terminated. */
struct pbus_proto_str {
	const char *s;
	uint32_t length;
};

/* --- HELLO and HELLO_REPLY (§3.1) -------------------------------------------- */

struct pbus_proto_hello {
	uint32_t min_version, max_version;
	uint64_t schema_hash;               /* 0: any */
	struct pbus_proto_str client_name;  /* decoded: at most 64 bytes of UTF-8, no NUL */
};

int pbus_proto_hello_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_hello *m);
int pbus_proto_hello_decode(const void *body, size_t n, struct pbus_proto_hello *m, char *why);

struct pbus_proto_hello_reply {
	uint32_t version;
	uint64_t schema_hash;
	uint32_t param_count, max_frame, max_subscriptions, server_pid;
	struct pbus_proto_str instance, interface;
};

int pbus_proto_hello_reply_encode(struct pbus_wire_buf *b, uint32_t id,
				  const struct pbus_proto_hello_reply *m);
/* Also malformed: a max_frame below the header's 12 bytes. */
int pbus_proto_hello_reply_decode(const void *body, size_t n, struct pbus_proto_hello_reply *m,
				  char *why);

/* --- Bodies of one str: SCHEMA (§3), STATS (§3.5) ---------------------------- */

int pbus_proto_str_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, const char *s,
			  size_t length);
int pbus_proto_str_decode(unsigned type, const void *body, size_t n, struct pbus_proto_str *m,
			  char *why);

/* --- Empty bodies: SCHEMA_GET, UNSUBSCRIBED, STATS_GET, SERVICE_*ED ----------- */

int pbus_proto_empty_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id);
int pbus_proto_empty_decode(unsigned type, size_t n, char *why);

/* --- Index lists: GET (§3.2), SUBSCRIBE (§3.4) --------------------------------- */

/* @count u32 indexes in place, little-endian: pbus_proto_index() reads one.
 * Their values are not checked here (ENOENT is the request's error, not a
 * malformed frame's). */
struct pbus_proto_indexes {
	uint32_t count;
	const unsigned char *raw;
};

static inline uint32_t pbus_proto_index(const struct pbus_proto_indexes *l, size_t k)
{
	return pbus_le_load32(l->raw + 4 * k);
}

int pbus_proto_get_encode(struct pbus_wire_buf *b, uint32_t id, const uint32_t *indexes,
			  size_t count);
/* Malformed: no count, a count of 0 or above @param_count, or a body that is
 * not exactly the count's indexes. */
int pbus_proto_get_decode(const void *body, size_t n, uint32_t param_count,
			  struct pbus_proto_indexes *m, char *why);

struct pbus_proto_subscribe {
	uint32_t min_interval_us;
	double deadband;  /* as sent: checked by the server (EINVAL), not here */
	struct pbus_proto_indexes indexes;
};

int pbus_proto_subscribe_encode(struct pbus_wire_buf *b, uint32_t id,
				const struct pbus_proto_subscribe *m, const uint32_t *indexes);
int pbus_proto_subscribe_decode(const void *body, size_t n, uint32_t param_count,
				struct pbus_proto_subscribe *m, char *why);

/* --- One u32: SUBSCRIBED, UNSUBSCRIBE (§3.4) ----------------------------------- */

int pbus_proto_u32_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, uint32_t value);
/* SUBSCRIBED also refuses a subscription id of 0 (§3: never 0). */
int pbus_proto_u32_decode(unsigned type, const void *body, size_t n, uint32_t *value, char *why);

/* --- Value records: VALUES (§3.2), NOTIFY (§3.4) -------------------------------- */

/*
 * Encoding, in three steps, so that a server reads each value straight into
 * the buffer: pbus_proto_values_begin() starts the frame (NOTIFY: with its
 * subscription; VALUES: @subscription is ignored) with a count of 0; the
 * caller appends records (pbus_wire_value(), or pbus_wire_value_reserve() and
 * _commit()); pbus_proto_values_end() stores the count and the length.
 */
size_t pbus_proto_values_begin(struct pbus_wire_buf *b, unsigned type, uint32_t id,
			       uint32_t subscription);
int pbus_proto_values_end(struct pbus_wire_buf *b, unsigned type, size_t start, uint32_t count);

/* A decoded VALUES or NOTIFY: @count whole records in place; walk them
 * with pbus_proto_values_next(). */
struct pbus_proto_values {
	uint32_t subscription; /* NOTIFY only (never 0) */
	uint32_t count;
	const unsigned char *records, *end;
};

/* Malformed: a count of 0 or above @param_count (0: unknown), a record
 * that is not whole or whose index is not below @param_count, bytes left
 * over; for a NOTIFY also a subscription id of 0. */
int pbus_proto_values_decode(unsigned type, const void *body, size_t n, uint32_t param_count,
			     struct pbus_proto_values *m, char *why);

/* The record at *@cursor (start: m->records; the records end at @end),
 * which moves past it. Only for a decoded message: its records are known
 * to be whole. */
static inline void pbus_proto_values_next(const unsigned char **cursor, const unsigned char *end,
					  struct pbus_wire_value *v)
{
	struct pbus_wire_reader r;

	pbus_wire_reader_init(&r, *cursor, (size_t)(end - *cursor));
	pbus_wire_get_value(&r, v);
	*cursor = r.p;
}

/* --- SET and SET_REPLY (§3.3) -------------------------------------------------- */

/* Encodes .index, .length and .value of each write; @flags: 0 or
 * PBUS_WIRE_FLAG_APPLIED (the header's; §3.3 "Applied"). */
int pbus_proto_set_encode(struct pbus_wire_buf *b, uint32_t id, unsigned flags,
			  const struct pbus_write *writes, size_t count);
/* Fills writes[0 .. *ret_count) (.index, .length, .value pointing into the
 * body; .status ok, the rest 0); @writes has room for @param_count.
 * Malformed: no count, a count of 0 or above @param_count, writes that do
 * not fill the body exactly. */
int pbus_proto_set_decode(const void *body, size_t n, uint32_t param_count, struct pbus_write *writes,
			  uint32_t *ret_count, char *why);

/* @count entries (i32 result, u64 seq) in place: pbus_proto_set_entry(). */
struct pbus_proto_set_reply {
	int32_t result;
	uint32_t count;
	const unsigned char *raw;
};

/* @seqs may be NULL (all 0). */
int pbus_proto_set_reply_encode(struct pbus_wire_buf *b, uint32_t id, int32_t result, size_t count,
				const int32_t *results, const uint64_t *seqs);
/* Malformed: a positive result, or entries that do not fill the body. */
int pbus_proto_set_reply_decode(const void *body, size_t n, struct pbus_proto_set_reply *m, char *why);

static inline void pbus_proto_set_entry(const struct pbus_proto_set_reply *m, size_t k, int32_t *result,
					uint64_t *seq)
{
	*result = (int32_t)pbus_le_load32(m->raw + 12 * k);
	*seq = pbus_le_load(m->raw + 12 * k + 4, 8);
}

/* --- ERROR (§5) ----------------------------------------------------------------- */

struct pbus_proto_error {
	int32_t code;  /* decoded: -4095 … -1 */
	struct pbus_proto_str message;
};

int pbus_proto_error_encode(struct pbus_wire_buf *b, uint32_t id, int32_t code, const char *message);
int pbus_proto_error_decode(const void *body, size_t n, struct pbus_proto_error *m, char *why);

/* --- PING and PONG: any bytes ---------------------------------------------------- */

int pbus_proto_bytes_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, const void *data,
			    size_t length);

/* --- Services (§3.6) ------------------------------------------------------------- */

/*
 * The strings of these messages (addresses, endpoints) must be UTF-8
 * without NUL, as §2 says of every str: a decoder refuses others. Their
 * grammar (docs/socket-protocol.md §3.6: "local:INSTANCE:INTERFACE", an
 * endpoint of 1..107 bytes) is the server's and the client's to judge
 * (service-address-internal.h): pbusd answers a malformed address with
 * ERROR EINVAL and keeps the connection.
 */
struct pbus_proto_service_register {
	struct pbus_proto_str address;
	uint32_t major, minor;
	struct pbus_proto_str endpoint;
};

int pbus_proto_service_register_encode(struct pbus_wire_buf *b, uint32_t id,
				       const struct pbus_proto_service_register *m);
int pbus_proto_service_register_decode(const void *body, size_t n, struct pbus_proto_service_register *m,
				       char *why);

struct pbus_proto_service_lookup {
	struct pbus_proto_str address;
	uint32_t watch; /* decoded: 0 or 1 */
};

int pbus_proto_service_lookup_encode(struct pbus_wire_buf *b, uint32_t id,
				     const struct pbus_proto_service_lookup *m);
int pbus_proto_service_lookup_decode(const void *body, size_t n, struct pbus_proto_service_lookup *m,
				     char *why);

/* SERVICE, a reply (to SERVICE_LOOKUP) or a notification (id 0). */
struct pbus_proto_service {
	struct pbus_proto_str address;
	uint32_t available; /* decoded: 0 or 1 */
	uint32_t major, minor, pid, uid;
	struct pbus_proto_str endpoint;
};

int pbus_proto_service_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_service *m);
/* Also malformed: available other than 0 or 1, and a service not
 * available with any other field not 0 or empty. */
int pbus_proto_service_decode(const void *body, size_t n, struct pbus_proto_service *m, char *why);

/* SERVICE_UNREGISTER and SERVICE_UNWATCH: one str, the address (encoded
 * with pbus_proto_str_encode()). */
int pbus_proto_service_address_decode(unsigned type, const void *body, size_t n,
				      struct pbus_proto_str *address, char *why);

/* (SERVICE_REGISTERED, SERVICE_UNREGISTERED and SERVICE_UNWATCHED are
 * empty: pbus_proto_empty_encode() and _decode().) */

/* --- Method calls: CONNECT, CONNECTED (docs/methods.md §3.1) -------------------- */

#define PBUS_PROTO_INTERFACE_MAX 255 /* bytes of an interface's name */

struct pbus_proto_connect {
	uint32_t min_version, max_version;
	struct pbus_proto_str interface;   /* decoded: 1..255 bytes of UTF-8, no NUL */
	uint32_t major, minor;
	struct pbus_proto_str client_name; /* decoded: at most 64 bytes of UTF-8, no NUL */
};

int pbus_proto_connect_encode(struct pbus_wire_buf *b, uint32_t id, const struct pbus_proto_connect *m);
int pbus_proto_connect_decode(const void *body, size_t n, struct pbus_proto_connect *m, char *why);

struct pbus_proto_connected {
	uint32_t version, major, minor, max_frame, server_pid;
};

int pbus_proto_connected_encode(struct pbus_wire_buf *b, uint32_t id,
				const struct pbus_proto_connected *m);
/* Also malformed: a max_frame below the header's 12 bytes. */
int pbus_proto_connected_decode(const void *body, size_t n, struct pbus_proto_connected *m, char *why);

/* --- CALL, RETURN, BROADCAST (docs/methods.md §3.2, §3.3) ------------------------
 *
 * The arguments are encoded by generated code into an rpc.h buffer that
 * begins with PBUS_PROTO_CALL_HEAD bytes of room: the frame header and, for
 * CALL and BROADCAST, the u16 index and u16 flags, written in place here so
 * that a call is built in one buffer and sent with one write. RETURN's
 * body is the out-arguments alone (its head is the frame header). */

#define PBUS_PROTO_CALL_HEAD 16   /* = PBUS_RPC_CALL_HEAD */
#define PBUS_PROTO_RETURN_HEAD 12
#define PBUS_PROTO_CALL_NO_REPLY 1u /* CALL flags: fireAndForget */

/* Write the head of a CALL or BROADCAST frame of @length bytes in all at
 * @frame (16 bytes). */
void pbus_proto_call_head(unsigned char *frame, unsigned type, uint32_t id, uint32_t length,
			  uint16_t index, uint16_t flags);
/* Write the header of a RETURN frame of @length bytes at @frame (12 bytes). */
void pbus_proto_return_head(unsigned char *frame, uint32_t id, uint32_t length);

struct pbus_proto_call {
	uint16_t index, flags;
	const unsigned char *args; /* in place */
	size_t args_length;
};

/* CALL or BROADCAST. Malformed: fewer than 4 bytes; flags other than
 * PBUS_PROTO_CALL_NO_REPLY (CALL) or 0 (BROADCAST). The arguments are the
 * generated decoder's to check. */
int pbus_proto_call_decode(unsigned type, const void *body, size_t n, struct pbus_proto_call *m,
			   char *why);

/* --- One u16: BROADCAST_SUBSCRIBE, BROADCAST_UNSUBSCRIBE (§3.3) -------------------- */

int pbus_proto_u16_encode(struct pbus_wire_buf *b, unsigned type, uint32_t id, uint16_t value);
int pbus_proto_u16_decode(unsigned type, const void *body, size_t n, uint16_t *value, char *why);

/* --- Frames off a stream socket ---------------------------------------------------- */

/*
 * Bytes received and not yet taken: data[start .. end). Both ends read
 * with it: pbus_frame_in_recv() appends what the socket has,
 * pbus_frame_in_next() takes one whole frame at a time, in place.
 */
struct pbus_frame_in {
	unsigned char *data;
	size_t start, end, capacity;
};

void pbus_frame_in_free(struct pbus_frame_in *in);

/* Bytes received and not taken yet. */
static inline size_t pbus_frame_in_pending(const struct pbus_frame_in *in)
{
	return in->end - in->start;
}

/*
 * Make room for @need more bytes after the end (moving the pending bytes
 * to the front first), the buffer growing by doubling from @chunk up to
 * @limit bytes in all (0: no limit). 0, -ENOMEM, or -ENOBUFS when @limit
 * does not allow it.
 */
int pbus_frame_in_room(struct pbus_frame_in *in, size_t need, size_t chunk, size_t limit);

/*
 * One recv() into the free room (MSG_DONTWAIT; EINTR is retried): the
 * bytes read (> 0), 0 at the end of the stream, or -errno (-EAGAIN: nothing
 * there now).
 */
ssize_t pbus_frame_in_recv(struct pbus_frame_in *in, int fd);

/*
 * The next whole frame: 1 with *h and *ret_body (h->length - 12 bytes, in
 * place until the next room or recv), the frame taken; 0 if it has not all
 * come yet (*h filled if its header has: the caller makes room for
 * h->length); or pbus_wire_header_parse()'s -EMSGSIZE / -EPROTO with *h as
 * far as it could be read, @why naming the problem ("frame of 2000000
 * bytes above the limit of 1048576", "unknown message type 99").
 */
int pbus_frame_in_next(struct pbus_frame_in *in, uint32_t max_frame, struct pbus_wire_header *h,
		       const unsigned char **ret_body, char *why);

#endif
