/* SPDX-License-Identifier: MIT */
/*
 * hislip-wire.c: the HiSLIP message header and the stream reader
 * (hislip.h; IVI-6.1 section 2.2). Every HiSLIP message is a 16-byte
 * header, big-endian:
 *
 *   offset 0  "HS"            the prologue
 *   offset 2  type            uint8
 *   offset 3  control code    uint8
 *   offset 4  parameter       uint32 (a MessageID, a session ID, ...)
 *   offset 8  payload length  uint64
 *
 * followed by that many payload bytes. The only place that reads or writes
 * this layout; nothing here allocates or calls the system, so the fuzz
 * target tests/fuzz/fuzz-hislip.c can run it on any input.
 */
#include <errno.h>
#include <string.h>

#include "hislip.h"

_Static_assert(HISLIP_HEADER_SIZE == 2 + 1 + 1 + 4 + 8, "the HiSLIP header is 16 bytes");

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int hislip_header_decode(const uint8_t *in, struct hislip_header *ret)
{
	if (in[0] != 'H' || in[1] != 'S')
		return -EPROTO;
	ret->type = in[2];
	ret->control = in[3];
	ret->parameter = load_be32(in + 4);
	ret->length = (uint64_t)load_be32(in + 8) << 32 | load_be32(in + 12);
	return 0;
}

void hislip_header_encode(const struct hislip_header *header, uint8_t *out)
{
	out[0] = 'H';
	out[1] = 'S';
	out[2] = header->type;
	out[3] = header->control;
	store_be32(out + 4, header->parameter);
	store_be32(out + 8, (uint32_t)(header->length >> 32));
	store_be32(out + 12, (uint32_t)header->length);
}

void hislip_reader_init(struct hislip_reader *reader)
{
	memset(reader, 0, sizeof(*reader));
}

size_t hislip_reader_next(struct hislip_reader *reader, const uint8_t *data, size_t length,
			  struct hislip_read *ret)
{
	ret->data = NULL;
	ret->length = 0;
	if (reader->broken) {
		ret->event = HISLIP_READ_BAD_PROLOGUE;
		return 0;
	}
	if (reader->in_message) {
		if (reader->left == 0) {
			reader->in_message = false;
			ret->event = HISLIP_READ_END;
			return 0;
		}
		if (length == 0) {
			ret->event = HISLIP_READ_NEED_MORE;
			return 0;
		}
		size_t n = reader->left < length ? (size_t)reader->left : length;
		reader->left -= n;
		ret->event = HISLIP_READ_PAYLOAD;
		ret->data = data;
		ret->length = n;
		return n;
	}
	size_t n = HISLIP_HEADER_SIZE - reader->head_have;
	if (n > length)
		n = length;
	memcpy(reader->head + reader->head_have, data, n);
	reader->head_have += n;
	/* a wrong prologue is known from its first byte: say so at once */
	if ((reader->head_have >= 1 && reader->head[0] != 'H') ||
	    (reader->head_have >= 2 && reader->head[1] != 'S')) {
		reader->broken = true;
		ret->event = HISLIP_READ_BAD_PROLOGUE;
		return n;
	}
	if (reader->head_have < HISLIP_HEADER_SIZE) {
		ret->event = HISLIP_READ_NEED_MORE;
		return n;
	}
	hislip_header_decode(reader->head, &reader->header);
	reader->head_have = 0;
	reader->left = reader->header.length;
	reader->in_message = true;
	ret->event = HISLIP_READ_HEADER;
	return n;
}

const char *hislip_type_name(unsigned type)
{
	static const char *const names[] = {
		"Initialize", "InitializeResponse", "FatalError", "Error", "AsyncLock",
		"AsyncLockResponse", "Data", "DataEnd", "DeviceClearComplete", "DeviceClearAcknowledge",
		"AsyncRemoteLocalControl", "AsyncRemoteLocalResponse", "Trigger", "Interrupted",
		"AsyncInterrupted", "AsyncMaximumMessageSize", "AsyncMaximumMessageSizeResponse",
		"AsyncInitialize", "AsyncInitializeResponse", "AsyncDeviceClear", "AsyncServiceRequest",
		"AsyncStatusQuery", "AsyncStatusResponse", "AsyncDeviceClearAcknowledge", "AsyncLockInfo",
		"AsyncLockInfoResponse",
	};
	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	return type >= HISLIP_VENDOR_FIRST && type <= 255 ? "vendor-defined" : "unknown";
}
