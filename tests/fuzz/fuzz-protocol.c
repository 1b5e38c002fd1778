/* SPDX-License-Identifier: MIT */
/*
 * fuzz-protocol.c: libFuzzer target for the socket protocol module
 * (lib/protocol.c): the frame reader and every message decoder, the
 * server's and the client's alike.
 *
 * An input is a byte stream as a peer would send it, after one control
 * byte: its low 7 bits + 1 are the size of the pieces in which the stream
 * goes through a real socketpair, and its high bit picks the reader's
 * buffering (clear: the server's, a buffer bounded by max_frame + 4096;
 * set: the client's, grown to a whole frame). Every frame taken is decoded
 * by the decoder of its type, whichever side would receive it. A body that
 * decodes must come out of the matching encoder again byte for byte
 * (encode(decode(frame)) == frame): what a decoder accepts is exactly what
 * the encoders make, no field dropped or misread. A header the reader
 * refuses ends the stream, as it ends a connection. ASan, UBSan and
 * LeakSanitizer watch for the rest.
 *
 * tests/fuzz/run builds it with clang and runs it from a seed corpus made
 * of the frames of tests/vectors/socket-frames.txt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/protocol-internal.h"

#define PARAM_COUNT 24
#define MAX_FRAME 65536

static struct pbus_wire_buf out;
static struct pbus_write writes[PARAM_COUNT];
static uint32_t indexes[PARAM_COUNT];

/* The frame re-encoded into @out must be the frame received. */
static void same(const struct pbus_wire_header *h, const unsigned char *body)
{
	size_t n = h->length - PBUS_WIRE_HEADER_SIZE;

	if (out.failed || out.size != h->length || memcmp(out.data + PBUS_WIRE_HEADER_SIZE, body, n) != 0 ||
	    pbus_le_load32(out.data + 8) != h->id) {
		fprintf(stderr, "fuzz-protocol: %s decoded, but encodes to other bytes (%zu, not %u)\n",
			pbus_wire_type_name(h->type), out.size, h->length);
		abort();
	}
}

static void decode_values(const struct pbus_wire_header *h, const unsigned char *body, size_t n)
{
	struct pbus_proto_values m;
	const unsigned char *record;
	size_t start;

	if (pbus_proto_values_decode(h->type, body, n, PARAM_COUNT, &m, NULL) < 0)
		return;
	start = pbus_proto_values_begin(&out, h->type, h->id, m.subscription);
	record = m.records;
	for (uint32_t k = 0; k < m.count; k++) {
		struct pbus_wire_value v;

		pbus_proto_values_next(&record, m.end, &v);
		if (record > m.end)
			abort();
		pbus_wire_value(&out, v.index, v.status, v.timestamp_ns, v.seq, v.value, v.length);
	}
	if (record != m.end)
		abort();
	pbus_proto_values_end(&out, h->type, start, m.count);
	same(h, body);
}

/* Decode one frame by its type and check the round trip. */
static void decode(const struct pbus_wire_header *h, const unsigned char *body)
{
	size_t n = h->length - PBUS_WIRE_HEADER_SIZE;
	char why[PBUS_PROTO_WHY_MAX];
	uint32_t u32, count;
	int r = -1;

	out.size = 0;
	out.failed = false;
	why[0] = 0;
	switch (h->type) {
	case PBUS_WIRE_HELLO: {
		struct pbus_proto_hello m;

		if ((r = pbus_proto_hello_decode(body, n, &m, why)) == 0)
			pbus_proto_hello_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_HELLO_REPLY: {
		struct pbus_proto_hello_reply m;

		if ((r = pbus_proto_hello_reply_decode(body, n, &m, why)) == 0)
			pbus_proto_hello_reply_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_SCHEMA:
	case PBUS_WIRE_STATS: {
		struct pbus_proto_str m;

		if ((r = pbus_proto_str_decode(h->type, body, n, &m, why)) == 0)
			pbus_proto_str_encode(&out, h->type, h->id, m.s, m.length);
		break;
	}
	case PBUS_WIRE_SCHEMA_GET:
	case PBUS_WIRE_UNSUBSCRIBED:
	case PBUS_WIRE_STATS_GET:
	case PBUS_WIRE_SERVICE_REGISTERED:
	case PBUS_WIRE_SERVICE_UNREGISTERED:
	case PBUS_WIRE_SERVICE_UNWATCHED:
		if ((r = pbus_proto_empty_decode(h->type, n, why)) == 0)
			pbus_proto_empty_encode(&out, h->type, h->id);
		break;
	case PBUS_WIRE_GET: {
		struct pbus_proto_indexes m;

		if ((r = pbus_proto_get_decode(body, n, PARAM_COUNT, &m, why)) == 0) {
			for (uint32_t k = 0; k < m.count; k++)
				indexes[k] = pbus_proto_index(&m, k);
			pbus_proto_get_encode(&out, h->id, indexes, m.count);
		}
		break;
	}
	case PBUS_WIRE_SUBSCRIBE: {
		struct pbus_proto_subscribe m;

		if ((r = pbus_proto_subscribe_decode(body, n, PARAM_COUNT, &m, why)) == 0) {
			for (uint32_t k = 0; k < m.indexes.count; k++)
				indexes[k] = pbus_proto_index(&m.indexes, k);
			pbus_proto_subscribe_encode(&out, h->id, &m, indexes);
		}
		break;
	}
	case PBUS_WIRE_SUBSCRIBED:
	case PBUS_WIRE_UNSUBSCRIBE:
		if ((r = pbus_proto_u32_decode(h->type, body, n, &u32, why)) == 0)
			pbus_proto_u32_encode(&out, h->type, h->id, u32);
		break;
	case PBUS_WIRE_VALUES:
	case PBUS_WIRE_NOTIFY:
		return decode_values(h, body, n);
	case PBUS_WIRE_SET:
		if ((r = pbus_proto_set_decode(body, n, PARAM_COUNT, writes, &count, why)) == 0)
			pbus_proto_set_encode(&out, h->id, h->flags, writes, count);
		break;
	case PBUS_WIRE_SET_REPLY: {
		struct pbus_proto_set_reply m;

		if ((r = pbus_proto_set_reply_decode(body, n, &m, why)) == 0) {
			int32_t *res = m.count ? malloc(m.count * sizeof(*res)) : NULL;
			uint64_t *sq = m.count ? malloc(m.count * sizeof(*sq)) : NULL;

			for (uint32_t k = 0; res && sq && k < m.count; k++)
				pbus_proto_set_entry(&m, k, &res[k], &sq[k]);
			if (m.count && (!res || !sq)) {
				free(res);
				free(sq);
				return;
			}
			pbus_proto_set_reply_encode(&out, h->id, m.result, m.count, res, sq);
			free(res);
			free(sq);
		}
		break;
	}
	case PBUS_WIRE_ERROR: {
		struct pbus_proto_error m;

		if ((r = pbus_proto_error_decode(body, n, &m, why)) == 0) {
			char *text;

			/* The encoder takes a C string: a message with a NUL
			 * (which no server sends) cannot come out the same. */
			if (memchr(m.message.s, 0, m.message.length))
				return;
			text = strndup(m.message.s, m.message.length);
			if (!text)
				return;
			pbus_proto_error_encode(&out, h->id, m.code, text);
			free(text);
		}
		break;
	}
	case PBUS_WIRE_PING:
	case PBUS_WIRE_PONG:
	case PBUS_WIRE_RETURN: /* its body is the generated decoders' (tests/fuzz/fuzz-rpc-args) */
		r = pbus_proto_bytes_encode(&out, h->type, h->id, body, n);
		break;
	case PBUS_WIRE_SERVICE_REGISTER: {
		struct pbus_proto_service_register m;

		if ((r = pbus_proto_service_register_decode(body, n, &m, why)) == 0)
			pbus_proto_service_register_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_SERVICE_UNREGISTER:
	case PBUS_WIRE_SERVICE_UNWATCH: {
		struct pbus_proto_str m;

		if ((r = pbus_proto_service_address_decode(h->type, body, n, &m, why)) == 0)
			pbus_proto_str_encode(&out, h->type, h->id, m.s, m.length);
		break;
	}
	case PBUS_WIRE_SERVICE_LOOKUP: {
		struct pbus_proto_service_lookup m;

		if ((r = pbus_proto_service_lookup_decode(body, n, &m, why)) == 0)
			pbus_proto_service_lookup_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_SERVICE: {
		struct pbus_proto_service m;

		if ((r = pbus_proto_service_decode(body, n, &m, why)) == 0)
			pbus_proto_service_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_CONNECT: {
		struct pbus_proto_connect m;

		if ((r = pbus_proto_connect_decode(body, n, &m, why)) == 0)
			pbus_proto_connect_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_CONNECTED: {
		struct pbus_proto_connected m;

		if ((r = pbus_proto_connected_decode(body, n, &m, why)) == 0)
			pbus_proto_connected_encode(&out, h->id, &m);
		break;
	}
	case PBUS_WIRE_CALL:
	case PBUS_WIRE_BROADCAST: {
		struct pbus_proto_call m;

		if ((r = pbus_proto_call_decode(h->type, body, n, &m, why)) == 0) {
			unsigned char *frame = malloc(PBUS_PROTO_CALL_HEAD + m.args_length);

			if (!frame)
				return;
			pbus_proto_call_head(frame, h->type, h->id,
					     (uint32_t)(PBUS_PROTO_CALL_HEAD + m.args_length), m.index, m.flags);
			memcpy(frame + PBUS_PROTO_CALL_HEAD, m.args, m.args_length);
			pbus_wire_bytes(&out, frame, PBUS_PROTO_CALL_HEAD + m.args_length);
			free(frame);
		}
		break;
	}
	case PBUS_WIRE_BROADCAST_SUBSCRIBE:
	case PBUS_WIRE_BROADCAST_UNSUBSCRIBE: {
		uint16_t u16;

		if ((r = pbus_proto_u16_decode(h->type, body, n, &u16, why)) == 0)
			pbus_proto_u16_encode(&out, h->type, h->id, u16);
		break;
	}
	case PBUS_WIRE_BROADCAST_SUBSCRIBED:
	case PBUS_WIRE_BROADCAST_UNSUBSCRIBED:
		if ((r = pbus_proto_empty_decode(h->type, n, why)) == 0)
			pbus_proto_empty_encode(&out, h->type, h->id);
		break;
	default:
		abort(); /* the frame reader lets no other type through */
	}
	if (r == 0) {
		same(h, body);
	} else if (r != -EPROTO || !why[0] || strlen(why) >= PBUS_PROTO_WHY_MAX) {
		fprintf(stderr, "fuzz-protocol: %s refused with %d and no reason\n",
			pbus_wire_type_name(h->type), r);
		abort();
	}
}

/* Take every whole frame; false once the stream is refused. */
static bool take_frames(struct pbus_frame_in *in, bool client)
{
	for (;;) {
		struct pbus_wire_header h;
		const unsigned char *body;
		char why[PBUS_PROTO_WHY_MAX] = "";
		int r = pbus_frame_in_next(in, MAX_FRAME, &h, &body, why);

		if (r < 0) {
			if (!why[0])
				abort();
			return false;
		}
		if (r == 0) {
			size_t avail = pbus_frame_in_pending(in);

			if (client && avail >= PBUS_WIRE_HEADER_SIZE &&
			    pbus_frame_in_room(in, h.length - avail, 4096, 0) < 0)
				return false;
			return true;
		}
		if (h.length > MAX_FRAME || h.length < PBUS_WIRE_HEADER_SIZE)
			abort();
		decode(&h, body);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pbus_frame_in in = {0};
	size_t piece, sent = 0;
	bool client, open = true;
	int sv[2];

	if (size < 1)
		return 0;
	piece = (size_t)(data[0] & 0x7f) + 1;
	client = data[0] & 0x80;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		abort();
	while (open && sent < size) {
		size_t k = size - sent < piece ? size - sent : piece;

		if (send(sv[0], data + sent, k, MSG_NOSIGNAL) != (ssize_t)k)
			abort();
		sent += k;
		if (sent == size)
			shutdown(sv[0], SHUT_WR);
		for (;;) {
			ssize_t n;
			int r = client ? pbus_frame_in_room(&in, 1024, 4096, 0)
				       : pbus_frame_in_room(&in, 4096, 8192, MAX_FRAME + 4096);

			if (r < 0)
				abort(); /* the reader never holds a whole frame it has not taken */
			n = pbus_frame_in_recv(&in, sv[1]);
			if (n == -EAGAIN || n == 0)
				break;
			if (n < 0)
				abort();
			if (!take_frames(&in, client)) {
				open = false;
				break;
			}
		}
	}
	close(sv[0]);
	close(sv[1]);
	pbus_frame_in_free(&in);
	return 0;
}
