/* SPDX-License-Identifier: MIT */
/*
 * make-vector: build the segment test vector. It creates an instance from
 * segment.pbs with the real library, writes a few values with fixed
 * timestamps (some parameters once, some twice, so both copies of a slot are
 * exercised), replaces the fields that differ from run to run (instance id,
 * owner, creation time, wake segment id, default timestamps) with fixed values, and prints
 * the value segment as hex, 32 bytes a line. Running it again must give the
 * committed image byte for byte: that is the test that the layout is stable.
 *
 * Usage: make-vector SCHEMA.pbs > segment-v2.hex
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "../../lib/segment-layout.h"
#include "../../lib/table-internal.h"

#define T0 UINT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */

static int write_text(struct pbus_table *t, const char *name, const char *text, uint64_t ts,
		      uint32_t status)
{
	const struct pbus_param *p;
	struct pbus_param_info info;
	unsigned char buf[512];
	size_t len;
	struct pbus_write w = {.status = status, .timestamp_ns = ts, .value = buf};
	int r;

	if ((r = pbus_table_find(t, name, &p)) < 0 ||
	    (r = pbus_param_parse(p, text, buf, sizeof(buf), &len)) < 0) {
		fprintf(stderr, "make-vector: %s=%s: %s\n", name, text, pbus_strerror(r));
		return r;
	}
	pbus_param_describe(p, &info);
	w.index = info.index;
	w.length = len;
	return pbus_table_write_many(t, &w, 1);
}

int main(int argc, char **argv)
{
	struct pbus_schema *schema;
	struct pbus_table *t;
	struct pbus_segment_header *h;
	char err[256], instance[64];
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: make-vector SCHEMA.pbs\n");
		return 2;
	}
	if (pbus_schema_load(argv[1], err, sizeof(err), &schema) < 0) {
		fprintf(stderr, "make-vector: %s\n", err);
		return 1;
	}
	snprintf(instance, sizeof(instance), "vector-make-%d", (int)getpid());
	r = pbus_instance_create(instance, schema, NULL, &t);
	if (r < 0) {
		fprintf(stderr, "make-vector: %s\n", pbus_strerror(r));
		return 1;
	}
	/* Written once: copy 1 holds the value, seq 1. */
	r = write_text(t, "count", "4000000000", T0 + 1, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "blob", "deadbeef00", T0 + 2, PBUS_STATUS_MINOR);
	r = r ? r : write_text(t, "mode", "TRIPPED", T0 + 3, PBUS_STATUS_MAJOR);
	r = r ? r : write_text(t, "meas", "0.125", T0 + 4, PBUS_STATUS_OK);
	/* Written twice: copy 0 again, seq 2. */
	r = r ? r : write_text(t, "volts", "12", T0 + 5, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "volts", "3.3", T0 + 6, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "name", "x", T0 + 7, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "name", "\xce\xbc-meter", T0 + 8, PBUS_STATUS_OK);
	/* A value above 256 bytes has 4 copies: three writes land in copy 3. */
	r = r ? r : write_text(t, "log", "first", T0 + 9, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "log", "second", T0 + 10, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "log", "third entry", T0 + 11, PBUS_STATUS_MINOR);
	if (r < 0)
		return 1;
	/* Fixed values for what changes from run to run. */
	h = t->header;
	h->instance_id = UINT64_C(0x0123456789abcdef);
	h->owner_pid = 4242;
	h->owner_start = 777;
	h->created_ns = T0;
	h->wake_id = 0; /* a live instance's own wake segment, made by its owner */
	memset(h->instance, 0, sizeof(h->instance));
	strcpy(h->instance, "vector");
	for (uint32_t i = 0; i < t->param_count; i++) {
		const struct pbus_param_descriptor *d = &t->descriptors[i];
		struct pbus_copy_head *c0 = (void *)(t->base + d->slot_offset + sizeof(struct pbus_slot_head));

		if (((struct pbus_slot_head *)(void *)(t->base + d->slot_offset))->seq == 0 ||
		    c0->timestamp_ns > T0 + 100)
			c0->timestamp_ns = T0;
	}
	for (size_t off = 0; off < t->size; off++)
		printf("%02x%s", t->base[off], off % 32 == 31 ? "\n" : "");
	pbus_instance_remove(t);
	pbus_schema_free(schema);
	return 0;
}
