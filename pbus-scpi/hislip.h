/* SPDX-License-Identifier: MIT */
/*
 * hislip.h: HiSLIP (IVI-6.1, the High-Speed LAN Instrument Protocol) for
 * pbus-scpi (docs/scpi.md, "HiSLIP"). Two parts:
 *
 * - The wire codec (hislip-wire.c): the 16-byte message header and a
 *   stream reader that cuts a byte stream into headers and payload pieces
 *   without buffering a payload itself. Pure functions of their input, no
 *   system calls, no allocation: tests/fuzz/fuzz-hislip.c drives them.
 * - The server (hislip.c): its listener and connections in pbus-scpi's
 *   epoll loop, one struct scpi_session per HiSLIP session (a synchronous
 *   and an asynchronous channel), synchronized mode only.
 *
 * Threads: one (pbus-scpi's loop). Ownership: the server owns its sockets,
 * sessions and buffers, and borrows the struct scpi_server, which must
 * outlive it.
 */
#ifndef PBUS_SCPI_HISLIP_H
#define PBUS_SCPI_HISLIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* --- the wire (IVI-6.1 section 2) ------------------------------------------ */

#define HISLIP_PORT 4880
#define HISLIP_HEADER_SIZE 16 /* "HS", type, control code, parameter (4), length (8); big-endian */

enum hislip_type {
	HISLIP_INITIALIZE = 0,
	HISLIP_INITIALIZE_RESPONSE = 1,
	HISLIP_FATAL_ERROR = 2,
	HISLIP_ERROR = 3,
	HISLIP_ASYNC_LOCK = 4,
	HISLIP_ASYNC_LOCK_RESPONSE = 5,
	HISLIP_DATA = 6,
	HISLIP_DATA_END = 7,
	HISLIP_DEVICE_CLEAR_COMPLETE = 8,
	HISLIP_DEVICE_CLEAR_ACKNOWLEDGE = 9,
	HISLIP_ASYNC_REMOTE_LOCAL_CONTROL = 10,
	HISLIP_ASYNC_REMOTE_LOCAL_RESPONSE = 11,
	HISLIP_TRIGGER = 12,
	HISLIP_INTERRUPTED = 13,
	HISLIP_ASYNC_INTERRUPTED = 14,
	HISLIP_ASYNC_MAXIMUM_MESSAGE_SIZE = 15,
	HISLIP_ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE = 16,
	HISLIP_ASYNC_INITIALIZE = 17,
	HISLIP_ASYNC_INITIALIZE_RESPONSE = 18,
	HISLIP_ASYNC_DEVICE_CLEAR = 19,
	HISLIP_ASYNC_SERVICE_REQUEST = 20,
	HISLIP_ASYNC_STATUS_QUERY = 21,
	HISLIP_ASYNC_STATUS_RESPONSE = 22,
	HISLIP_ASYNC_DEVICE_CLEAR_ACKNOWLEDGE = 23,
	HISLIP_ASYNC_LOCK_INFO = 24,
	HISLIP_ASYNC_LOCK_INFO_RESPONSE = 25,
	HISLIP_VENDOR_FIRST = 128, /* 128..255: vendor-defined */
};

/* The control code of Error (non-fatal: the offending message is dropped,
 * the connection goes on) and FatalError (the session's channels close). */
enum hislip_error_code {
	HISLIP_ERROR_UNIDENTIFIED = 0,
	HISLIP_ERROR_UNRECOGNIZED_TYPE = 1,
	HISLIP_ERROR_UNRECOGNIZED_CONTROL = 2,
	HISLIP_ERROR_UNRECOGNIZED_VENDOR = 3,
	HISLIP_ERROR_TOO_LARGE = 4,
};
enum hislip_fatal_code {
	HISLIP_FATAL_UNIDENTIFIED = 0,
	HISLIP_FATAL_BAD_HEADER = 1,
	HISLIP_FATAL_NOT_INITIALIZED = 2, /* both channels are not established yet */
	HISLIP_FATAL_BAD_INITIALIZATION = 3,
	HISLIP_FATAL_TOO_MANY_CLIENTS = 4,
};

#define HISLIP_RMT_DELIVERED 0x01u       /* control bit 0 of Data, DataEnd, Trigger, AsyncStatusQuery */
#define HISLIP_FIRST_MESSAGE_ID 0xffffff00u /* a session's first MessageID (and after a device clear) */

struct hislip_header {
	uint8_t type, control;
	uint32_t parameter;
	uint64_t length; /* of the payload that follows */
};

/* Decode the header at @in (HISLIP_HEADER_SIZE bytes). 0, or -EPROTO when
 * the prologue is not "HS" (@ret is then untouched). */
int hislip_header_decode(const uint8_t *in, struct hislip_header *ret);

/* Encode @header into @out (HISLIP_HEADER_SIZE bytes). */
void hislip_header_encode(const struct hislip_header *header, uint8_t *out);

/*
 * The stream reader: feed it what arrived, it says what it found. A header
 * is reported whole (HISLIP_READ_HEADER) once its 16 bytes are in, its
 * payload as pieces in the order they arrive (HISLIP_READ_PAYLOAD, pointing
 * into the caller's bytes), then HISLIP_READ_END; a header whose prologue
 * is not "HS" is HISLIP_READ_BAD_PROLOGUE, after which the stream cannot be
 * resynchronised and the reader reports nothing more. The reader holds at
 * most a partial header; a payload's length is never trusted with memory,
 * so a length of 2^64-1 is just a stream that never ends.
 */
enum hislip_read_event {
	HISLIP_READ_NEED_MORE,    /* everything given was consumed */
	HISLIP_READ_HEADER,
	HISLIP_READ_PAYLOAD,
	HISLIP_READ_END,          /* of the current message (after its last payload piece) */
	HISLIP_READ_BAD_PROLOGUE,
};

struct hislip_reader {
	uint8_t head[HISLIP_HEADER_SIZE];
	size_t head_have;
	struct hislip_header header; /* the current message's, after HISLIP_READ_HEADER */
	uint64_t left;               /* of its payload, still to come */
	bool in_message, broken;
};

struct hislip_read {
	enum hislip_read_event event;
	const uint8_t *data; /* HISLIP_READ_PAYLOAD: the piece, inside the caller's bytes */
	size_t length;
};

/* Start a reader (all zero is a fresh reader, too). */
void hislip_reader_init(struct hislip_reader *reader);

/* Consume bytes from @data (@length of them) up to the next event, which is
 * put in @ret; returns how many were consumed. Call again with the rest
 * until the event is HISLIP_READ_NEED_MORE (all consumed) or
 * HISLIP_READ_BAD_PROLOGUE. Each call either consumes bytes or reports an
 * event other than HISLIP_READ_NEED_MORE, so a loop always ends. */
size_t hislip_reader_next(struct hislip_reader *reader, const uint8_t *data, size_t length,
			  struct hislip_read *ret);

/* The name of a message type ("DataEnd"), or "unknown". */
const char *hislip_type_name(unsigned type);

/* --- the server (hislip.c) -------------------------------------------------- */

struct scpi_server;
struct hislip_server;

struct hislip_options {
	size_t max_sessions;  /* HiSLIP sessions at once (--max-clients) */
	size_t max_message;   /* longest program message, Data..DataEnd (--max-line) */
	unsigned idle_timeout; /* seconds; 0: never */
};

/*
 * Listen on @addr and register the listener and every connection with
 * @epoll; the epoll data of each is @tag_base + a small number, so the
 * caller passes every event whose data is at or above @tag_base to
 * hislip_server_dispatch(). Returns 0 or -errno (the listener's bind()).
 */
int hislip_server_new(struct scpi_server *scpi, int epoll, uint64_t tag_base,
		      const struct sockaddr *addr, socklen_t addr_len,
		      const struct hislip_options *options, struct hislip_server **ret_server);

/* The port it listens on (the kernel's choice for port 0). */
unsigned hislip_server_port(const struct hislip_server *server);

/* One epoll event whose data was @tag (>= the tag base). */
void hislip_server_dispatch(struct hislip_server *server, uint64_t tag, uint32_t events);

/* Close the connections silent for the idle timeout (call about once a
 * second when it is set). */
void hislip_server_close_idle(struct hislip_server *server);

/* Close every session and the listener. Accepts NULL. */
void hislip_server_free(struct hislip_server *server);

#endif
