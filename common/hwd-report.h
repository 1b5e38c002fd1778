/* SPDX-License-Identifier: MIT */
/*
 * hwd-report.h: the applied-version report, the record pbus-hwd writes to
 * pbusd over the pipe pbusd's supervisor gives it (pbus-hwd --report-fd;
 * docs/hardware-guide.md, "Telling pbusd what the hardware applied"). It
 * is the only place that encodes or decodes the record: pbus-hwd's output
 * thread encodes, pbusd's server thread decodes.
 *
 * A record says "parameter INDEX's value of version SEQ is in effect on
 * its device" (result 0) or "applying version SEQ failed" (result -errno).
 * Records are 16 bytes, a fraction of PIPE_BUF, so each write() of one is
 * atomic: a reader never sees half a record, whoever dies meanwhile.
 *
 *   offset 0  u32 index    the parameter (its index in the compiled schema)
 *   offset 4  i32 result   0: applied; -errno (-4095 .. -1): failed
 *   offset 8  u64 seq      the version whose value was applied or tried
 *
 * Little-endian, no padding. A record with a result outside -4095 .. 0 is
 * malformed (the reader drops it).
 *
 * Also here: which hw= kinds are output bindings, whose application is
 * reported (and which pbusd therefore waits for; docs/socket-protocol.md
 * §3.3, "Applied").
 *
 * Threads: no state; pure functions.
 */
#ifndef PBUS_COMMON_HWD_REPORT_H
#define PBUS_COMMON_HWD_REPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PBUS_HWD_REPORT_SIZE 16

_Static_assert(PBUS_HWD_REPORT_SIZE <= PIPE_BUF, "a record is written atomically");

struct pbus_hwd_report {
	uint32_t index;
	int32_t result;  /* 0: applied; -errno: failed */
	uint64_t seq;
};

static inline void pbus_hwd_report_store_(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t pbus_hwd_report_load_(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void pbus_hwd_report_encode(const struct pbus_hwd_report *r,
					  unsigned char out[PBUS_HWD_REPORT_SIZE])
{
	pbus_hwd_report_store_(out, r->index, 4);
	pbus_hwd_report_store_(out + 4, (uint32_t)r->result, 4);
	pbus_hwd_report_store_(out + 8, r->seq, 8);
}

/* 0, or -1 for a malformed record (a result outside -4095 .. 0). */
static inline int pbus_hwd_report_decode(const unsigned char in[PBUS_HWD_REPORT_SIZE],
					 struct pbus_hwd_report *r)
{
	r->index = (uint32_t)pbus_hwd_report_load_(in, 4);
	r->result = (int32_t)(uint32_t)pbus_hwd_report_load_(in + 4, 4);
	r->seq = pbus_hwd_report_load_(in + 8, 8);
	return r->result > 0 || r->result < -4095 ? -1 : 0;
}

/* Whether a parameter bound with hw=@kind is an output binding, applied by
 * pbus-hwd from the parameter's value (docs/schema-format.md, "Hardware
 * binding keys"). */
static inline bool pbus_hwd_kind_is_output(const char *kind)
{
	return kind && (!strcmp(kind, "gpio-output") || !strcmp(kind, "pwm-duty"));
}

#endif
