/* SPDX-License-Identifier: MIT */
/*
 * make-vector: build the segment test vectors (tests/vectors/README.md). It
 * creates an instance from a schema with the real library, writes values
 * with fixed timestamps, replaces the fields that differ from run to run
 * (instance id, owner, creation time, wake segment id, default timestamps)
 * with fixed values, and prints a segment as hex, 32 bytes a line. Running
 * it again must give the committed file byte for byte: that is the test that
 * the layout is stable.
 *
 * What a writer never stores (a bool byte 2, a status 7, an enum value
 * without a label, invalid UTF-8, a length above the capacity, a version
 * near 2^64, lock words of dead threads) is put in place through the
 * library's own structs (segment-layout.h), after the writes, so that the
 * offsets in the images are the C library's and the checker, which reads
 * them at the offsets docs/segment-format.md gives, compares the two.
 *
 * Usage:
 *   make-vector SCHEMA.pbs               segment-v2.hex (from segment.pbs)
 *   make-vector edge SCHEMA.pbs          segment-edge.hex (segment-edge.pbs)
 *   make-vector edge-wake SCHEMA.pbs     wake-edge.hex, its wake segment
 *   make-vector small SCHEMA.pbs         segment-small.hex (segment-small.pbs)
 *   make-vector bad NAME SCHEMA.pbs      segment-bad-NAME.hex (from small)
 *   make-vector bad-names                the names "bad" knows, one a line
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "../../lib/segment-layout.h"
#include "../../lib/table-internal.h"
#include "../../lib/write-lock-internal.h"

#define T0 UINT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */

/* Tokens of threads that are dead wherever the checker runs
 * (tests/vectors/README.md): GONE names a thread id above any pid_max in
 * use (/proc/TID is missing), RECYCLED names pid 1 with a start time it
 * does not have (the id was reused). LIVE is a placeholder the checker
 * replaces with the token of its own main thread before it installs the
 * image. */
#define TOKEN(tid, start) ((uint64_t)(tid) | (uint64_t)(start) << PBUS_TOKEN_TID_BITS)
#define TOKEN_GONE TOKEN(0x3FFFFF, 1)
#define TOKEN_RECYCLED TOKEN(1, 0x2AAAAAAA)
#define TOKEN_LIVE TOKEN(0x3FFFFE, 0x155)

static int write_bytes(struct pbus_table *t, const char *name, const void *value, size_t length,
		       uint64_t ts, uint32_t status)
{
	const struct pbus_param *p;
	struct pbus_param_info info;
	struct pbus_write w = {.status = status, .timestamp_ns = ts, .value = value, .length = length};
	int r;

	if ((r = pbus_table_find(t, name, &p)) < 0) {
		fprintf(stderr, "make-vector: %s: %s\n", name, pbus_strerror(r));
		return r;
	}
	pbus_param_describe(p, &info);
	w.index = info.index;
	r = pbus_table_write_many(t, &w, 1);
	if (r < 0)
		fprintf(stderr, "make-vector: write %s: %s\n", name, pbus_strerror(r));
	return r;
}

static int write_text(struct pbus_table *t, const char *name, const char *text, uint64_t ts,
		      uint32_t status)
{
	const struct pbus_param *p;
	unsigned char buf[512];
	size_t len;
	int r;

	if ((r = pbus_table_find(t, name, &p)) < 0 ||
	    (r = pbus_param_parse(p, text, buf, sizeof(buf), &len)) < 0) {
		fprintf(stderr, "make-vector: %s=%s: %s\n", name, text, pbus_strerror(r));
		return r;
	}
	return write_bytes(t, name, buf, len, ts, status);
}

/* --- Reaching into the segment through the library's structs ------------- */

static uint32_t index_of(struct pbus_table *t, const char *name)
{
	const struct pbus_param *p;
	struct pbus_param_info info;

	if (pbus_table_find(t, name, &p) < 0) {
		fprintf(stderr, "make-vector: no parameter %s\n", name);
		_exit(1);
	}
	pbus_param_describe(p, &info);
	return info.index;
}

static struct pbus_param_descriptor *descriptor(struct pbus_table *t, const char *name)
{
	return (struct pbus_param_descriptor *)(void *)(t->base + t->header->descriptors_offset) +
	       index_of(t, name);
}

static struct pbus_slot_head *slot(struct pbus_table *t, const char *name)
{
	return (struct pbus_slot_head *)(void *)(t->base + descriptor(t, name)->slot_offset);
}

/* The copy that the slot's version names (the one readers read). */
static struct pbus_copy_head *current_copy(struct pbus_table *t, const char *name)
{
	const struct pbus_param_descriptor *d = descriptor(t, name);
	uint64_t seq = slot(t, name)->seq;

	return (struct pbus_copy_head *)(void *)(t->base + d->slot_offset + sizeof(struct pbus_slot_head) +
						 (seq & (d->copy_count - 1)) * d->copy_stride);
}

static unsigned char *current_value(struct pbus_table *t, const char *name)
{
	return (unsigned char *)(current_copy(t, name) + 1);
}

/* --- The common part ----------------------------------------------------- */

/* Fixed values for what changes from run to run, and the name "vector". */
static void fix_run_to_run_fields(struct pbus_table *t)
{
	struct pbus_segment_header *h = t->header;

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
}

static void print_hex(const unsigned char *base, size_t size)
{
	for (size_t off = 0; off < size; off++)
		printf("%02x%s", base[off], off % 32 == 31 ? "\n" : "");
	if (size % 32)
		printf("\n");
}

/* --- segment-v2.hex ------------------------------------------------------ */

static int fill_main(struct pbus_table *t)
{
	/* Written once: copy 1 holds the value, seq 1. */
	int r = write_text(t, "count", "4000000000", T0 + 1, PBUS_STATUS_OK);

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
	if (r == 0)
		fix_run_to_run_fields(t);
	return r;
}

/* --- segment-edge.hex and wake-edge.hex ------------------------------------ */

static int fill_edge(struct pbus_table *t)
{
	const uint32_t fnan = UINT32_C(0x7fc00001);                     /* quiet NaN, payload 1 */
	const uint64_t dnan = UINT64_C(0xfff8000000000001);             /* negative quiet NaN */
	const uint32_t floats[4] = {0x3fc00000, 0x7fc00000, 0xff800000, 0x7f7fffff};
	const uint64_t doubles[3] = {UINT64_C(0x3fb999999999999a), 1, UINT64_C(0x8000000000000000)};
	int r = 0;

	/* Values written through the library (every one passes its checks). */
	r = r ? r : write_text(t, "big", "18446744073709551615", T0 + 1, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "big", "9223372036854775808", T0 + 2, PBUS_STATUS_OK);
	r = r ? r : write_bytes(t, "fnan", &fnan, 4, T0 + 3, PBUS_STATUS_MINOR);
	r = r ? r : write_bytes(t, "dnan", &dnan, 8, T0 + 4, PBUS_STATUS_OK);
	r = r ? r : write_bytes(t, "floats", floats, sizeof(floats), T0 + 5, PBUS_STATUS_OK);
	r = r ? r : write_bytes(t, "doubles", doubles, sizeof(doubles), T0 + 6, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "bools", "true,false,true", T0 + 7, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "nolabel", "HIGH", T0 + 8, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "flag", "true", T0 + 9, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "st7", "1", T0 + 10, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "sthi", "2", T0 + 11, PBUS_STATUS_MINOR);
	r = r ? r : write_text(t, "text", "ok", T0 + 12, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "long", "0123456789abcdef", T0 + 13, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "scalarlen", "2.5", T0 + 14, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "odd", "1,2,3", T0 + 15, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "wrap2", "42", T0 + 16, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "wrap4", "w1", T0 + 17, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "wrap4", "w2", T0 + 18, PBUS_STATUS_OK);
	r = r ? r : write_text(t, "wrap4", "w3", T0 + 19, PBUS_STATUS_OK);
	if (r < 0)
		return r;
	fix_run_to_run_fields(t);

	/* What no writer stores, in the published copies. */
	current_value(t, "bools")[2] = 2;
	{
		int32_t five = 5;

		memcpy(current_value(t, "nolabel"), &five, 4);
	}
	current_value(t, "flag")[0] = 2;
	current_copy(t, "st7")->status = 7;
	current_copy(t, "sthi")->status = UINT32_C(0x00abcd01);
	memcpy(current_value(t, "text"), "a\xff" "b\xe2\x82", 5);
	current_copy(t, "text")->length = 5;
	current_copy(t, "long")->length = 1000;
	current_copy(t, "scalarlen")->length = 3; /* a reader reads all 8 bytes */
	current_copy(t, "odd")->length = 7;
	/* Versions whose top bit is set: the copy is seq & (copy_count - 1)
	 * in unsigned arithmetic (wrap2 is in copy 1, wrap4 in copy 3, where
	 * the writes above left them). */
	slot(t, "wrap2")->seq = UINT64_C(0x8000000000000001);
	slot(t, "wrap4")->seq = UINT64_MAX;

	/* Lock words and aux words of every kind (readers ignore them all). */
	slot(t, "big")->lock = PBUS_LOCK_BIASED | TOKEN_GONE;
	slot(t, "top")->lock = TOKEN_RECYCLED;
	slot(t, "low")->lock = PBUS_LOCK_WAITERS | TOKEN_GONE;
	slot(t, "fnan")->lock = PBUS_LOCK_SHARED;
	slot(t, "dnan")->lock = PBUS_LOCK_BIASED | TOKEN_RECYCLED;
	t->aux[index_of(t, "dnan")].writing = TOKEN_RECYCLED; /* died in the middle of a write */
	slot(t, "dneg")->lock = PBUS_LOCK_STATE_MASK | TOKEN_GONE; /* state 3: never made */
	slot(t, "hidden")->lock = TOKEN_LIVE;
	slot(t, "level")->lock = PBUS_LOCK_BIASED | TOKEN_LIVE;
	t->aux[index_of(t, "big")].saved_seq = 1;
	t->header->revocations = 3;
	t->header->save_count = 9;
	t->header->state = PBUS_SEGMENT_LIVE;

	/* The wake segment: two waiters, a turn whose deadline has passed and
	 * one further ahead than any reader posts. */
	t->wake->notify = 41;
	t->wake->param_waiters = 2;
	t->waiters[index_of(t, "big")] = 1;
	t->waiters[index_of(t, "floats")] = 1;
	t->turns[index_of(t, "top")] = 1;
	t->turns[index_of(t, "fnan")] = UINT64_MAX;
	return 0;
}

/* --- segment-small.hex and the invalid images made from it ----------------- */

static int fill_small(struct pbus_table *t)
{
	int r = write_text(t, "volts", "12.5", T0 + 1, PBUS_STATUS_OK);

	if (r == 0)
		fix_run_to_run_fields(t);
	return r;
}

struct bad {
	const char *name;
	void (*mutate)(struct pbus_table *t);
};

#define H (t->header)
#define D(name) descriptor(t, name)
#define ENUMS ((struct pbus_enum_record *)(void *)(t->base + H->enums_offset))
#define ENUMERATORS ((struct pbus_enumerator *)(void *)(t->base + H->enumerators_offset))
#define POOL ((char *)t->base + H->strings_offset)

static uint64_t wake_need(struct pbus_table *t)
{
	return pbus_wake_segment_bytes(H->param_count);
}

static void bad_magic(struct pbus_table *t) { H->magic[7] = 'X'; }
static void bad_version(struct pbus_table *t) { H->format_version = 3; }
static void bad_header_size(struct pbus_table *t) { H->header_size = 264; }
static void bad_segment_size(struct pbus_table *t) { H->segment_size += 4096; }
static void bad_descriptor_size(struct pbus_table *t) { H->descriptor_size = 136; }
static void bad_param_count(struct pbus_table *t) { H->param_count = 65536; }
static void bad_instance_unterminated(struct pbus_table *t) { memset(H->instance, 'v', sizeof(H->instance)); }
static void bad_wake_size_small(struct pbus_table *t) { H->wake_size = wake_need(t) - 8; }
static void bad_wake_size_large(struct pbus_table *t) { H->wake_size = wake_need(t) + PBUS_WAKE_SLACK_MAX + 8; }
static void bad_descriptors_outside(struct pbus_table *t) { H->descriptors_offset = H->segment_size - 256; }
static void bad_strings_outside(struct pbus_table *t) { H->strings_size = H->segment_size; }
static void bad_descriptors_misaligned(struct pbus_table *t) { H->descriptors_offset += 4; }
static void bad_enumerators_misaligned(struct pbus_table *t) { H->enumerators_offset += 4; }
static void bad_slots_misaligned(struct pbus_table *t) { H->slots_offset += 8; }
static void bad_aux_misaligned(struct pbus_table *t) { H->aux_offset += 16; }
static void bad_strings_empty(struct pbus_table *t) { H->strings_size = 0; }
static void bad_interface_unterminated(struct pbus_table *t) { H->interface_name_length += 1; }
static void bad_name_nul(struct pbus_table *t) { POOL[D("volts")->name + 2] = 0; }
static void bad_name_empty(struct pbus_table *t)
{
	struct pbus_param_descriptor *d = D("volts");

	/* An empty string that is in the pool: the unit of "name". */
	d->name = D("name")->unit;
	d->name_length = 0;
}
static void bad_enum_first(struct pbus_table *t) { ENUMS[0].first = 1; }
static void bad_enum_count_zero(struct pbus_table *t) { ENUMS[0].count = 0; }
static void bad_enumerators_outside(struct pbus_table *t) { H->enumerators_offset = H->segment_size - 16; }
static void bad_label_outside(struct pbus_table *t) { ENUMERATORS[1].label = (uint32_t)H->strings_size; }
static void bad_type_unknown(struct pbus_table *t) { D("volts")->type = 15; }
static void bad_type_enum_array(struct pbus_table *t) { D("mode")->type = PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_ENUM; }
static void bad_type_string_array(struct pbus_table *t) { D("name")->type = PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_STRING; }
static void bad_update_class(struct pbus_table *t) { D("volts")->update_class = 4; }
static void bad_value_size_zero(struct pbus_table *t) { D("name")->value_size = 0; }
static void bad_value_size_max(struct pbus_table *t) { D("samples")->value_size = PBUS_VALUE_SIZE_MAX + 2; }
static void bad_default_length(struct pbus_table *t) { D("name")->default_length = D("name")->value_size + 1; }
static void bad_default_outside(struct pbus_table *t) { D("name")->default_value = (uint32_t)H->strings_size; }
static void bad_copy_stride(struct pbus_table *t) { D("volts")->copy_stride = 32; }
static void bad_copy_count(struct pbus_table *t) { D("volts")->copy_count = 4; }
static void bad_slot_size(struct pbus_table *t) { D("volts")->slot_size = 48; }
static void bad_slot_misaligned(struct pbus_table *t) { D("volts")->slot_offset += 8; }
static void bad_slot_outside_region(struct pbus_table *t) { D("samples")->slot_offset = H->slots_offset + H->slots_size; }
static void bad_element_size(struct pbus_table *t) { D("volts")->element_size = 4; }
static void bad_string_element_size(struct pbus_table *t) { D("name")->element_size = 2; }
static void bad_scalar_value_size(struct pbus_table *t)
{
	struct pbus_param_descriptor *d = D("volts");

	/* Room for 16 bytes, consistently: only "a scalar is one element" fails. */
	d->value_size = 16;
	d->copy_stride = 32;
	d->slot_size = 128;
}
static void bad_array_value_size(struct pbus_table *t) { D("samples")->value_size = 5; }
static void bad_enum_index(struct pbus_table *t) { D("mode")->enum_index = H->enum_count; }
static void bad_enum_index_not_enum(struct pbus_table *t) { D("volts")->enum_index = 0; }
static void bad_instance_other(struct pbus_table *t)
{
	memset(H->instance, 0, sizeof(H->instance));
	strcpy(H->instance, "other");
}

static const struct bad bads[] = {
	{"magic", bad_magic},
	{"version", bad_version},
	{"header-size", bad_header_size},
	{"segment-size", bad_segment_size},
	{"descriptor-size", bad_descriptor_size},
	{"param-count", bad_param_count},
	{"instance-unterminated", bad_instance_unterminated},
	{"wake-size-small", bad_wake_size_small},
	{"wake-size-large", bad_wake_size_large},
	{"descriptors-outside", bad_descriptors_outside},
	{"strings-outside", bad_strings_outside},
	{"descriptors-misaligned", bad_descriptors_misaligned},
	{"enumerators-misaligned", bad_enumerators_misaligned},
	{"slots-misaligned", bad_slots_misaligned},
	{"aux-misaligned", bad_aux_misaligned},
	{"strings-empty", bad_strings_empty},
	{"interface-unterminated", bad_interface_unterminated},
	{"name-nul", bad_name_nul},
	{"name-empty", bad_name_empty},
	{"enum-first", bad_enum_first},
	{"enum-count-zero", bad_enum_count_zero},
	{"enumerators-outside", bad_enumerators_outside},
	{"label-outside", bad_label_outside},
	{"type-unknown", bad_type_unknown},
	{"type-enum-array", bad_type_enum_array},
	{"type-string-array", bad_type_string_array},
	{"update-class", bad_update_class},
	{"value-size-zero", bad_value_size_zero},
	{"value-size-max", bad_value_size_max},
	{"default-outside", bad_default_outside},
	{"default-length", bad_default_length},
	{"copy-stride", bad_copy_stride},
	{"copy-count", bad_copy_count},
	{"slot-size", bad_slot_size},
	{"slot-misaligned", bad_slot_misaligned},
	{"slot-outside-region", bad_slot_outside_region},
	{"element-size", bad_element_size},
	{"string-element-size", bad_string_element_size},
	{"scalar-value-size", bad_scalar_value_size},
	{"array-value-size", bad_array_value_size},
	{"enum-index", bad_enum_index},
	{"enum-index-not-enum", bad_enum_index_not_enum},
	{"instance-other", bad_instance_other},
	{"short", NULL}, /* the first 128 bytes only: shorter than a header */
};

static const struct bad *find_bad(const char *name)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		if (!strcmp(bads[i].name, name))
			return &bads[i];
	return NULL;
}

/* --- main ------------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr, "usage: make-vector [main|edge|edge-wake|small] SCHEMA.pbs\n"
			"       make-vector bad NAME SCHEMA.pbs\n"
			"       make-vector bad-names\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *kind, *path;
	const struct bad *bad = NULL;
	struct pbus_schema *schema;
	struct pbus_table *t;
	char err[256], instance[64];
	size_t size;
	int r;

	if (argc == 2 && !strcmp(argv[1], "bad-names")) {
		for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
			printf("%s\n", bads[i].name);
		return 0;
	}
	if (argc == 2) {
		kind = "main";
		path = argv[1];
	} else if (argc == 3 && strcmp(argv[1], "bad")) {
		kind = argv[1];
		path = argv[2];
	} else if (argc == 4 && !strcmp(argv[1], "bad")) {
		kind = "bad";
		path = argv[3];
		if (!(bad = find_bad(argv[2]))) {
			fprintf(stderr, "make-vector: no invalid image named %s\n", argv[2]);
			return 2;
		}
	} else {
		return usage();
	}
	if (strcmp(kind, "main") && strcmp(kind, "edge") && strcmp(kind, "edge-wake") && strcmp(kind, "small") &&
	    strcmp(kind, "bad"))
		return usage();
	if (pbus_schema_load(path, err, sizeof(err), &schema) < 0) {
		fprintf(stderr, "make-vector: %s\n", err);
		return 1;
	}
	snprintf(instance, sizeof(instance), "vector-make-%d", (int)getpid());
	r = pbus_instance_create(instance, schema, NULL, &t);
	if (r < 0) {
		fprintf(stderr, "make-vector: %s\n", pbus_strerror(r));
		return 1;
	}
	if (!strcmp(kind, "main"))
		r = fill_main(t);
	else if (!strcmp(kind, "edge") || !strcmp(kind, "edge-wake"))
		r = fill_edge(t);
	else
		r = fill_small(t);
	if (r == 0) {
		size = t->size;
		if (bad && bad->mutate)
			bad->mutate(t);
		else if (bad)
			size = 128;
		if (!strcmp(kind, "edge-wake")) {
			struct pbus_wake_header *w = t->wake;

			w->instance_id = t->header->instance_id;
			print_hex(t->wake_base, t->wake_size);
		} else {
			print_hex(t->base, size);
		}
	}
	pbus_instance_remove(t);
	pbus_schema_free(schema);
	return r < 0 ? 1 : 0;
}
