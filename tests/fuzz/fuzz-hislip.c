/* SPDX-License-Identifier: MIT */
/*
 * fuzz-hislip.c: pbus-scpi's HiSLIP wire codec (pbus-scpi/hislip-wire.c)
 * under libFuzzer. The input's first byte chooses how the rest is cut into
 * pieces (1 to 64 bytes, as recv() might return it); the stream reader is
 * fed the pieces and what it reports is compared with a second framer
 * written here from IVI-6.1 section 2.2 (16-byte big-endian header, then
 * the payload): the same headers at the same places, each payload
 * delivered whole, in order and inside the caller's bytes, END after it, a
 * bad prologue exactly where a header does not start with "HS" and nothing
 * after it. Every call must consume bytes or report an event, so the loop
 * ends; each decoded header encodes back to its bytes. One thread.
 */
#include "../../pbus-scpi/hislip.h"

#include <stdlib.h>
#include <string.h>

static uint64_t be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut = (size_t)(data[0] % 64) + 1;
	data++;
	size--;

	/* the reference framer's position: the next header starts at @next */
	size_t next = 0;
	uint64_t payload_left = 0, payload_seen = 0;
	bool in_message = false, broken = false;
	struct hislip_header expect = {0};

	struct hislip_reader reader;
	hislip_reader_init(&reader);
	size_t pos = 0; /* consumed so far, over all pieces */
	for (size_t start = 0; start < size; start += cut) {
		size_t end = start + cut < size ? start + cut : size;
		const uint8_t *piece = data + start;
		size_t length = end - start;
		size_t off = 0;
		for (unsigned guard = 0;; guard++) {
			if (guard > 4 * length + 8)
				abort(); /* no progress */
			struct hislip_read r;
			size_t n = hislip_reader_next(&reader, piece + off, length - off, &r);
			if (n > length - off)
				abort();
			if (n == 0 && r.event == HISLIP_READ_NEED_MORE && off != length)
				abort();
			off += n;
			pos += n;
			if (r.event == HISLIP_READ_NEED_MORE)
				break;
			switch (r.event) {
			case HISLIP_READ_BAD_PROLOGUE: {
				/* only where a header starts without "HS" */
				if (in_message || broken)
					abort();
				if (!(next < size && (data[next] != 'H' || (next + 1 < size && data[next + 1] != 'S'))))
					abort();
				/* known at the first wrong byte, read with at most the rest of the header */
				if (pos < next + (data[next] != 'H' ? 1 : 2) || pos > next + HISLIP_HEADER_SIZE)
					abort();
				broken = true;
				/* it says so again, consuming nothing */
				size_t again = hislip_reader_next(&reader, piece + off, length - off, &r);
				if (again || r.event != HISLIP_READ_BAD_PROLOGUE)
					abort();
				return 0;
			}
			case HISLIP_READ_HEADER: {
				if (in_message || broken || pos != next + HISLIP_HEADER_SIZE || pos > size)
					abort();
				const uint8_t *h = data + next;
				if (h[0] != 'H' || h[1] != 'S')
					abort();
				expect.type = h[2];
				expect.control = h[3];
				expect.parameter = (uint32_t)be(h + 4, 4);
				expect.length = be(h + 8, 8);
				if (reader.header.type != expect.type || reader.header.control != expect.control ||
				    reader.header.parameter != expect.parameter || reader.header.length != expect.length)
					abort();
				uint8_t again[HISLIP_HEADER_SIZE];
				hislip_header_encode(&reader.header, again);
				if (memcmp(again, h, HISLIP_HEADER_SIZE) != 0)
					abort();
				struct hislip_header decoded;
				if (hislip_header_decode(h, &decoded) != 0 || decoded.length != expect.length)
					abort();
				if (!hislip_type_name(expect.type)[0])
					abort();
				in_message = true;
				payload_left = expect.length;
				payload_seen = 0;
				break;
			}
			case HISLIP_READ_PAYLOAD:
				if (!in_message || r.length == 0 || r.length > payload_left)
					abort();
				/* the piece is the stream's next bytes, inside the caller's */
				if (r.data != piece + off - r.length || r.data + r.length != data + pos)
					abort();
				payload_left -= r.length;
				payload_seen += r.length;
				break;
			case HISLIP_READ_END:
				if (!in_message || payload_left != 0 || payload_seen != expect.length || n != 0)
					abort();
				in_message = false;
				next = pos;
				break;
			default:
				abort();
			}
		}
	}
	if (pos != size)
		abort(); /* everything is consumed unless the prologue was bad */
	if (in_message) {
		/* the stream ends inside a payload: exactly what is missing is awaited */
		if (payload_left == 0 || next + HISLIP_HEADER_SIZE + expect.length != size + payload_left)
			abort();
	} else {
		/* what is left is the start of a header, with a good prologue so far */
		if (size - next >= HISLIP_HEADER_SIZE || (next < size && data[next] != 'H') ||
		    (next + 1 < size && data[next + 1] != 'S'))
			abort();
	}
	return 0;
}
