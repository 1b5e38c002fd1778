/* SPDX-License-Identifier: MIT */
/*
 * test-table.c: the table API against a real instance in /dev/shm: create,
 * publish, open by name with each access mode, typed reads and writes,
 * batches that are all-or-nothing, lookups, schema information and the
 * table's schema view, waits,
 * the instance's states, and the validation of damaged segments.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "../../lib/segment-layout.h"
#include "../../lib/clock-internal.h"
#include "../../lib/read-internal.h"
#include "../../lib/segment-internal.h"
#include "../../lib/table-internal.h"
#include "../../lib/write-internal.h"
#include "../../lib/write-lock-internal.h"
#include "pbus-check.h"
#include "pbus-check-info.h"

static const char schema_text[] =
	"pbus-schema 1\n"
	"interface com.example.Unit 1.2\n"
	"enum com.example.Unit.Mode OFF=0 ON=1 TRIPPED=7\n"
	"param flag bool default=true\n"
	"param i8 int8 min=-10 max=10\n"
	"param i16 int16\n"
	"param i32 int32\n"
	"param i64 int64 default=-5\n"
	"param u8 uint8\n"
	"param u16 uint16\n"
	"param u32 uint32\n"
	"param u64 uint64\n"
	"param f32 float\n"
	"param vset double unit=V min=0 max=30 step=0.01 default=1.5 flags=persistent desc=Set%20point\n"
	"param name string size=16 default=hello\n"
	"param blob bytes size=40\n"
	"param mode enum enum=com.example.Unit.Mode default=ON\n"
	"param samples double[] count=5\n"
	"param meas double flags=readonly class=live unit=V\n";

static char instance[64];
static struct pbus_schema *schema;

static struct pbus_table *create_instance(void)
{
	struct pbus_table *owner = NULL;
	int r = pbus_instance_create(instance, schema, NULL, &owner);

	CHECK_EQ(r, 0);
	if (r == 0)
		CHECK_EQ(pbus_instance_publish(owner), 0);
	return owner;
}

static const struct pbus_param *find(struct pbus_table *t, const char *name)
{
	const struct pbus_param *p = NULL;
	int r = pbus_table_find(t, name, &p);

	if (r < 0) {
		CHECK_FAIL("find %s: %d", name, r);
	}
	return p;
}

static void open_and_defaults(void)
{
	struct pbus_table *owner = create_instance(), *t = NULL;
	const struct pbus_param *p;
	unsigned major = 0, minor = 0;
	double d = 0;
	bool b = false;
	int64_t i64 = 0;
	int32_t e = -1;
	char s[32];

	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), 0);
	if (!t)
		goto out;
	CHECK_EQ(pbus_table_param_count(t), 16);
	CHECK_EQ_STR(pbus_table_interface(t, &major, &minor), "com.example.Unit");
	CHECK_EQ(major, 1);
	CHECK_EQ(minor, 2);
	CHECK(pbus_table_schema_hash(t) == pbus_schema_hash(schema));
	CHECK_EQ_STR(pbus_table_instance(t), instance);
	CHECK_EQ(pbus_table_state(t), PBUS_TABLE_LIVE);
	CHECK_EQ(pbus_param_get_double(find(t, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 1.5);
	CHECK_EQ(pbus_param_get_bool(find(t, "flag"), &b), PBUS_STATUS_OK);
	CHECK(b);
	CHECK_EQ(pbus_param_get_int64(find(t, "i64"), &i64), PBUS_STATUS_OK);
	CHECK_EQ(i64, -5);
	CHECK_EQ(pbus_param_get_enum(find(t, "mode"), &e), PBUS_STATUS_OK);
	CHECK_EQ(e, 1);
	CHECK_EQ(pbus_param_get_string(find(t, "name"), s, sizeof(s)), PBUS_STATUS_OK);
	CHECK_EQ_STR(s, "hello");
	/* No default: zero with status invalid. */
	CHECK_EQ(pbus_param_get_double(find(t, "meas"), &d), PBUS_STATUS_INVALID);
	CHECK(d == 0);
	/* Wrong type through the inline getter. */
	CHECK_EQ(pbus_param_get_int32(find(t, "vset"), (int32_t *)&e), -EINVAL);
	/* Lookups. */
	CHECK_EQ(pbus_table_find(t, "nope", &p), -ENOENT);
	CHECK_EQ(pbus_table_param(t, 16, &p), -ENOENT);
	CHECK_EQ(pbus_table_param(t, 15, &p), 0);
	CHECK_EQ_STR(pbus_param_name(p), "meas");
	for (uint32_t i = 0; i < pbus_table_param_count(t); i++) {
		const struct pbus_param *q, *r;

		CHECK_EQ(pbus_table_param(t, i, &q), 0);
		CHECK_EQ(pbus_table_find(t, pbus_param_name(q), &r), 0);
		CHECK(q == r);
	}
	/* Opening a missing instance, bad names. */
	pbus_table_close(t);
	t = NULL;
	CHECK_EQ(pbus_table_open("no-such-instance-here", PBUS_OPEN_READ, &t), -ENOENT);
	CHECK_EQ(pbus_table_open("../etc", PBUS_OPEN_READ, &t), -EINVAL);
	CHECK_EQ(pbus_table_open("", PBUS_OPEN_READ, &t), -EINVAL);
	CHECK_EQ(pbus_table_open(instance, 0x100, &t), -EINVAL);
	CHECK(t == NULL);
out:
	pbus_table_close(t);
	pbus_instance_remove(owner);
}

static void info_and_enums(void)
{
	struct pbus_table *owner = create_instance();
	struct pbus_param_info info;
	const struct pbus_param *p;
	const char *label = NULL;
	int32_t v = 0;

	if (!owner)
		return;
	p = find(owner, "vset");
	CHECK_EQ(pbus_param_describe(p, &info), 0);
	CHECK_EQ_STR(info.name, "vset");
	CHECK_EQ_STR(info.unit, "V");
	CHECK_EQ_STR(info.description, "Set point");
	CHECK_EQ_STR(info.group, "");
	CHECK_EQ(info.type, PBUS_TYPE_DOUBLE);
	CHECK(info.flags & PBUS_PARAM_PERSISTENT);
	CHECK(info.flags & PBUS_PARAM_HAS_STEP);
	CHECK(info.max.d == 30 && info.min.d == 0 && info.step.d == 0.01);
	CHECK_EQ(info.default_length, 8);
	CHECK_EQ(info.update_class, PBUS_UPDATE_SETTING);
	p = find(owner, "samples");
	CHECK_EQ(pbus_param_describe(p, &info), 0);
	CHECK_EQ(info.type, PBUS_TYPE_DOUBLE | PBUS_TYPE_ARRAY_FLAG);
	CHECK_EQ(info.value_size, 40);
	CHECK_EQ_STR(pbus_type_name(info.type), "double[]");
	p = find(owner, "mode");
	CHECK_EQ(pbus_param_enumerator(p, 2, &label, &v), 0);
	CHECK_EQ_STR(label, "TRIPPED");
	CHECK_EQ(v, 7);
	CHECK_EQ(pbus_param_enumerator(p, 3, &label, &v), -ENOENT);
	CHECK_EQ(pbus_param_enum_value(p, "ON", &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(pbus_param_enum_label(p, 0, &label), 0);
	CHECK_EQ_STR(label, "OFF");
	CHECK_EQ(pbus_param_enum_label(p, 5, &label), -ENOENT);
	CHECK_EQ(pbus_param_enum_value(find(owner, "vset"), "ON", &v), -EINVAL);
	pbus_instance_remove(owner);
}

/* Texts to parse as a value of every parameter: good and bad ones of each
 * type, so that every parameter meets some of each. */
static const char *const view_texts[] = {
	"0", "1", "-1", "7", "-11", "300", "3.3", "31", "1e400", "nan", "true", "false",
	"ON", "TRIPPED", "BOGUS", "hello", "a string longer than sixteen bytes", "00ff",
	"0g", "1,2,3", "1,2,3,4,5,6", "", "x",
};

/* The table's schema view (parambus/view.h) answers as the pbus_param_*
 * functions do, for every parameter, and as the schema it was made from;
 * its error paths. */
static void schema_view(void)
{
	struct pbus_table *owner = create_instance(), *t = NULL;
	const struct pbus_view *view, *other;
	struct pbus_param_info a, b;
	const char *label, *label2;
	int32_t v, v2;
	uint32_t index;
	unsigned char buf[64], buf2[64];
	char out[128], out2[128];
	size_t len, len2;

	if (!owner)
		return;
	view = pbus_table_view(owner);
	CHECK(view != NULL);
	CHECK_EQ(pbus_view_count(view), pbus_table_param_count(owner));
	CHECK_EQ(pbus_view_count(view), pbus_schema_param_count(schema));
	for (uint32_t i = 0; i < pbus_view_count(view); i++) {
		const struct pbus_param *p = NULL;

		CHECK_EQ(pbus_table_param(owner, i, &p), 0);
		CHECK_EQ(pbus_view_describe(view, i, &a), 0);
		CHECK_EQ(pbus_param_describe(p, &b), 0);
		pbus_check_same_info(&a, &b);
		CHECK_EQ(a.index, i);
		CHECK_EQ_STR(a.name, pbus_schema_param_name(schema, i));
		CHECK_EQ_STR(a.name, pbus_param_name(p));
		CHECK_EQ(a.type, pbus_param_type(p));
		CHECK_EQ(a.flags & 0xffu, pbus_param_flags(p));
		index = 999;
		CHECK_EQ(pbus_view_find(view, a.name, &index), 0);
		CHECK_EQ(index, i);
		/* Enumerators, one past the last too, and both lookups. */
		for (uint32_t k = 0; k <= a.enum_count; k++) {
			int r = pbus_view_enumerator(view, i, k, &label, &v);

			CHECK_EQ(r, pbus_param_enumerator(p, k, &label2, &v2));
			if (r == 0) {
				CHECK_EQ_STR(label, label2);
				CHECK_EQ(v, v2);
				CHECK_EQ(pbus_view_enum_value(view, i, label, &v2), 0);
				CHECK_EQ(v2, v);
				CHECK_EQ(pbus_view_enum_label(view, i, v, &label2), 0);
				CHECK_EQ_STR(label2, label);
			}
		}
		CHECK_EQ(pbus_view_enum_value(view, i, "NO_SUCH", &v),
			     pbus_param_enum_value(p, "NO_SUCH", &v2));
		CHECK_EQ(pbus_view_enum_label(view, i, 12345, &label),
			     pbus_param_enum_label(p, 12345, &label2));
		/* Text both ways. */
		for (size_t k = 0; k < sizeof(view_texts) / sizeof(view_texts[0]); k++) {
			int r = pbus_view_parse(view, i, view_texts[k], buf, sizeof(buf), &len);

			CHECK_EQ(r, pbus_param_parse(p, view_texts[k], buf2, sizeof(buf2), &len2));
			if (r != 0)
				continue;
			CHECK_EQ(len, len2);
			CHECK(!memcmp(buf, buf2, len));
			r = pbus_view_format(view, i, buf, len, out, sizeof(out));
			CHECK_EQ(r, pbus_param_format(p, buf, len, out2, sizeof(out2)));
			CHECK(r >= 0);
			if (r >= 0)
				CHECK_EQ_STR(out, out2);
		}
	}
	CHECK_EQ(pbus_view_enum_value(view, 0, "ON", &v), -EINVAL); /* flag: a bool */
	CHECK_EQ(pbus_view_find(view, "mode", &index), 0);
	CHECK_EQ(pbus_view_enum_value(view, index, "TRIPPED", &v), 0);
	CHECK_EQ(v, 7);
	CHECK_EQ(pbus_view_enum_label(view, index, 1, &label), 0);
	CHECK_EQ_STR(label, "ON");
	/* A reader's table of the same instance has a view that agrees. */
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), 0);
	other = pbus_table_view(t);
	CHECK(other != NULL && other != view);
	CHECK_EQ(pbus_view_count(other), pbus_view_count(view));
	for (uint32_t i = 0; other && i < pbus_view_count(view); i++) {
		CHECK_EQ(pbus_view_describe(view, i, &a), 0);
		CHECK_EQ(pbus_view_describe(other, i, &b), 0);
		pbus_check_same_info(&a, &b);
	}
	/* Errors: no view, no such parameter, missing arguments. */
	CHECK(pbus_table_view(NULL) == NULL);
	CHECK(pbus_client_view(NULL) == NULL);
	CHECK_EQ(pbus_view_count(NULL), 0);
	index = 77;
	CHECK_EQ(pbus_view_find(view, "nope", &index), -ENOENT);
	CHECK_EQ(pbus_view_find(view, "Mode", &index), -ENOENT);
	CHECK_EQ(index, 77); /* untouched on failure */
	CHECK_EQ(pbus_view_find(view, NULL, &index), -EINVAL);
	CHECK_EQ(pbus_view_find(view, "mode", NULL), -EINVAL);
	CHECK_EQ(pbus_view_find(NULL, "mode", &index), -EINVAL);
	CHECK_EQ(pbus_view_describe(view, 16, &a), -ENOENT);
	CHECK_EQ(pbus_view_describe(view, UINT32_MAX, &a), -ENOENT);
	CHECK_EQ(pbus_view_describe(view, 0, NULL), -EINVAL);
	CHECK_EQ(pbus_view_describe(NULL, 0, &a), -EINVAL);
	CHECK_EQ(pbus_view_enumerator(view, 16, 0, &label, &v), -ENOENT);
	CHECK_EQ(pbus_view_enumerator(view, 0, 0, &label, &v), -EINVAL);
	CHECK_EQ(pbus_view_enumerator(NULL, index, 0, &label, &v), -EINVAL);
	CHECK_EQ(pbus_view_enumerator(view, 13, 0, NULL, NULL), 0); /* mode */
	CHECK_EQ(pbus_view_enum_value(view, 13, NULL, &v), -EINVAL);
	CHECK_EQ(pbus_view_enum_value(view, 16, "ON", &v), -ENOENT);
	CHECK_EQ(pbus_view_enum_label(view, 16, 1, &label), -ENOENT);
	CHECK_EQ(pbus_view_enum_label(NULL, 13, 1, &label), -EINVAL);
	CHECK_EQ(pbus_view_parse(view, 16, "1", buf, sizeof(buf), &len), -ENOENT);
	CHECK_EQ(pbus_view_parse(view, 10, NULL, buf, sizeof(buf), &len), -EINVAL);
	CHECK_EQ(pbus_view_parse(view, 10, "1", NULL, sizeof(buf), &len), -EINVAL);
	CHECK_EQ(pbus_view_parse(view, 10, "1", buf, sizeof(buf), NULL), -EINVAL);
	CHECK_EQ(pbus_view_parse(NULL, 10, "1", buf, sizeof(buf), &len), -EINVAL);
	CHECK_EQ(pbus_view_format(view, 16, buf, 8, out, sizeof(out)), -ENOENT);
	CHECK_EQ(pbus_view_format(view, 10, NULL, 8, out, sizeof(out)), -EINVAL);
	CHECK_EQ(pbus_view_format(view, 10, buf, 8, NULL, sizeof(out)), -EINVAL);
	CHECK_EQ(pbus_view_format(NULL, 10, buf, 8, out, sizeof(out)), -EINVAL);
	/* The pbus_param_* shorthands keep their own argument checks. */
	CHECK_EQ(pbus_param_describe(NULL, &a), -EINVAL);
	CHECK_EQ(pbus_param_enumerator(NULL, 0, &label, &v), -EINVAL);
	CHECK_EQ(pbus_param_parse(NULL, "1", buf, sizeof(buf), &len), -EINVAL);
	CHECK_EQ(pbus_param_format(NULL, buf, 8, out, sizeof(out)), -EINVAL);
	CHECK(pbus_param_name(NULL) == NULL);
	pbus_table_close(t);
	pbus_instance_remove(owner);
}

/* Copies of resolved parameters (struct pbus_param by value) are as good as
 * the originals: same values, same checks, same versions. */
static void copied_params(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	struct pbus_param copies[16];
	struct pbus_param_info a, b;
	struct pbus_sample sample;
	uint32_t n, i;
	double d = 0;
	char s[32];

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	n = pbus_table_param_count(w);
	CHECK_EQ(n, 16);
	for (i = 0; i < n && i < 16; i++) {
		const struct pbus_param *p;

		CHECK_EQ(pbus_table_param(w, i, &p), 0);
		copies[i] = *p;
		CHECK_EQ(pbus_param_describe(&copies[i], &a), 0);
		CHECK_EQ(pbus_param_describe(p, &b), 0);
		CHECK_EQ(a.index, i);
		CHECK_EQ_STR(a.name, b.name);
		CHECK(pbus_param_seq(&copies[i]) == pbus_param_seq(p));
	}
	/* vset is index 10, name 11, meas 15 (the schema's order). */
	CHECK_EQ_STR(pbus_param_name(&copies[10]), "vset");
	CHECK_EQ(pbus_param_get_double(&copies[10], &d), PBUS_STATUS_OK);
	CHECK(d == 1.5);
	CHECK_EQ(pbus_param_set_double(&copies[10], 7.5), 0);
	CHECK_EQ(pbus_param_get_double(find(owner, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 7.5);
	CHECK(pbus_param_seq(&copies[10]) == pbus_param_seq(find(owner, "vset")));
	CHECK_EQ(pbus_param_set_double(&copies[10], 30.5), -ERANGE);
	CHECK_EQ(pbus_param_set_int32(&copies[10], 1), -EINVAL);
	CHECK_EQ(pbus_param_set_double(&copies[15], 1.0), -EACCES);
	CHECK_EQ(pbus_param_set_string(&copies[11], "copied"), 0);
	CHECK_EQ(pbus_param_read(find(owner, "name"), s, sizeof(s), &sample), PBUS_STATUS_OK);
	CHECK_EQ(sample.length, 6);
	CHECK(memcmp(s, "copied", 6) == 0);
	CHECK_EQ(pbus_param_get_double(find(owner, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 7.5);
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

static void typed_writes(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	struct pbus_sample sample;
	unsigned char blob[40];
	double samples[5] = {0}, d;
	int8_t i8 = 0;
	uint64_t u64 = 0;
	float f = 0;
	char s[32];

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	CHECK_EQ(pbus_param_set_double(find(w, "vset"), 12.25), 0);
	CHECK_EQ(pbus_param_get_double(find(owner, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 12.25);
	CHECK_EQ(pbus_param_set_double(find(w, "vset"), 30.5), -ERANGE);
	CHECK_EQ(pbus_param_set_int32(find(w, "vset"), 3), -EINVAL);
	CHECK_EQ(pbus_param_set_int8(find(w, "i8"), -10), 0);
	CHECK_EQ(pbus_param_set_int8(find(w, "i8"), 11), -ERANGE);
	CHECK_EQ(pbus_param_get_int8(find(w, "i8"), &i8), 0);
	CHECK_EQ(i8, -10);
	CHECK_EQ(pbus_param_set_uint64(find(w, "u64"), UINT64_MAX), 0);
	CHECK_EQ(pbus_param_get_uint64(find(w, "u64"), &u64), 0);
	CHECK(u64 == UINT64_MAX);
	CHECK_EQ(pbus_param_set_float(find(w, "f32"), 2.5f), 0);
	CHECK_EQ(pbus_param_get_float(find(w, "f32"), &f), 0);
	CHECK(f == 2.5f);
	CHECK_EQ(pbus_param_set_enum(find(w, "mode"), 7), 0);
	CHECK_EQ(pbus_param_set_enum(find(w, "mode"), 6), -ERANGE);
	CHECK_EQ(pbus_param_set_string(find(w, "name"), "0123456789abcdef"), 0);
	CHECK_EQ(pbus_param_get_string(find(w, "name"), s, sizeof(s)), 0);
	CHECK_EQ_STR(s, "0123456789abcdef");
	CHECK_EQ(pbus_param_get_string(find(w, "name"), s, 16), -EMSGSIZE);
	CHECK_EQ(pbus_param_set_string(find(w, "name"), "0123456789abcdefX"), -EMSGSIZE);
	CHECK_EQ(pbus_param_set_string(find(w, "name"), "\xff"), -EINVAL);
	for (int i = 0; i < 40; i++)
		blob[i] = (unsigned char)(i * 7);
	CHECK_EQ(pbus_param_set_bytes(find(w, "blob"), blob, 40), 0);
	memset(blob, 0, sizeof(blob));
	CHECK_EQ(pbus_param_read(find(w, "blob"), blob, sizeof(blob), &sample), 0);
	CHECK_EQ(sample.length, 40);
	CHECK_EQ(blob[39], (39 * 7) & 0xff);
	CHECK_EQ(pbus_param_read(find(w, "blob"), blob, 39, &sample), -EMSGSIZE);
	samples[0] = 1;
	samples[1] = 2;
	CHECK_EQ(pbus_param_set(find(w, "samples"), samples, 16), 0);
	CHECK_EQ(pbus_param_read(find(w, "samples"), samples, sizeof(samples), &sample), 0);
	CHECK_EQ(sample.length, 16);
	CHECK_EQ(pbus_param_set(find(w, "samples"), samples, 12), -EINVAL);
	CHECK_EQ(pbus_param_set(find(w, "samples"), samples, 48), -EMSGSIZE);
	/* Read-only: refused to a client, allowed to the provider. */
	CHECK_EQ(pbus_param_set_double(find(w, "meas"), 1.0), -EACCES);
	CHECK_EQ(pbus_param_set_double(find(owner, "meas"), 4.5), 0);
	CHECK_EQ(pbus_param_get_double(find(w, "meas"), &d), PBUS_STATUS_OK);
	CHECK(d == 4.5);
	pbus_table_close(w);
	/* A reader cannot write at all. */
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &w), 0);
	CHECK_EQ(pbus_param_set_double(find(w, "vset"), 1.0), -EACCES);
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

static void samples_and_versions(void)
{
	struct pbus_table *owner = create_instance();
	struct pbus_write wr[1];
	struct pbus_sample sample;
	const struct pbus_param *p;
	double v = 2.0;
	uint64_t before;

	if (!owner)
		return;
	p = find(owner, "vset");
	before = pbus_param_seq(p);
	CHECK_EQ(before, 0);
	memset(wr, 0, sizeof(wr));
	wr[0].index = 10;
	wr[0].status = PBUS_STATUS_MAJOR;
	wr[0].timestamp_ns = 123456789;
	wr[0].value = &v;
	wr[0].length = 8;
	CHECK_EQ(pbus_table_write_many(owner, wr, 1), 0);
	CHECK_EQ(wr[0].seq, 1);
	CHECK_EQ(pbus_param_read(p, &v, sizeof(v), &sample), PBUS_STATUS_MAJOR);
	CHECK_EQ(sample.timestamp_ns, 123456789);
	CHECK_EQ(sample.seq, 1);
	CHECK_EQ(sample.status, PBUS_STATUS_MAJOR);
	CHECK_EQ(pbus_param_get_double(p, &v), PBUS_STATUS_MAJOR);
	wr[0].status = 4;
	CHECK_EQ(pbus_table_write_many(owner, wr, 1), -EINVAL);
	/* A write without a timestamp gets the current time. */
	CHECK_EQ(pbus_param_set_double(p, 3.0), 0);
	CHECK_EQ(pbus_param_read(p, &v, sizeof(v), &sample), PBUS_STATUS_OK);
	CHECK(sample.timestamp_ns > UINT64_C(1600000000000000000));
	CHECK_EQ(sample.seq, 2);
	pbus_instance_remove(owner);
}

static void batches_are_all_or_nothing(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	double good = 5, bad = 99, now;
	int32_t mode = 0;
	struct pbus_write wr[3];

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct pbus_write){.index = 10, .value = &good, .length = 8};
	wr[1] = (struct pbus_write){.index = 13, .value = &mode, .length = 4};
	wr[2] = (struct pbus_write){.index = 15, .value = &bad, .length = 8}; /* read-only */
	CHECK_EQ(pbus_table_write_many(w, wr, 3), -EACCES);
	CHECK_EQ(wr[0].result, 0);
	CHECK_EQ(wr[1].result, 0);
	CHECK_EQ(wr[2].result, -EACCES);
	CHECK_EQ(pbus_param_get_double(find(w, "vset"), &now), 0);
	CHECK(now == 1.5); /* unchanged */
	CHECK_EQ(pbus_param_seq(find(w, "mode")), 0);
	wr[2] = (struct pbus_write){.index = 10, .value = &bad, .length = 8}; /* out of range */
	CHECK_EQ(pbus_table_write_many(w, wr, 3), -ERANGE);
	CHECK_EQ(pbus_param_seq(find(w, "vset")), 0);
	wr[2] = (struct pbus_write){.index = 99, .value = &bad, .length = 8};
	CHECK_EQ(pbus_table_write_many(w, wr, 3), -ENOENT);
	wr[2] = (struct pbus_write){.index = 1, .value = &bad, .length = 1};
	((int8_t *)&bad)[0] = 3;
	CHECK_EQ(pbus_table_write_many(w, wr, 3), 0);
	CHECK_EQ(pbus_param_get_double(find(w, "vset"), &now), 0);
	CHECK(now == 5);
	/* A number without limits (i32, index 3) takes any bits, but only of
	 * its own size and from somewhere. */
	{
		int32_t i32 = -7, got = 0;
		int64_t wide = 1;

		CHECK_EQ(pbus_param_set(find(w, "i32"), &i32, 2), -EINVAL);
		CHECK_EQ(pbus_param_set(find(w, "i32"), &wide, 8), -EMSGSIZE);
		CHECK_EQ(pbus_param_set(find(w, "i32"), NULL, 4), -EINVAL);
		CHECK_EQ(pbus_param_seq(find(w, "i32")), 0);
		CHECK_EQ(pbus_param_set(find(w, "i32"), &i32, 4), 0);
		CHECK_EQ(pbus_param_get_int32(find(w, "i32"), &got), 0);
		CHECK_EQ(got, -7);
	}
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* The record of prepared_batches(): a caller's own struct. */
struct unit_record {
	double vset;
	double vset_again;
	int32_t mode;
	float f32;
	uint64_t u64;
	int8_t i8;
	uint8_t flag;
};

#define FIELD(t, name, member) {find(t, name), offsetof(struct unit_record, member)}

static void prepared_batches(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL, *ro = NULL;
	struct pbus_batch *b = NULL, *bad = NULL;
	struct unit_record rec = {.vset = 12.5, .mode = 7, .f32 = -1.5f, .u64 = UINT64_MAX,
				  .i8 = -10, .flag = 0};
	const char *const names[6] = {"vset", "mode", "f32", "u64", "i8", "flag"};
	uint32_t status[6] = {PBUS_STATUS_OK, PBUS_STATUS_MINOR, PBUS_STATUS_MAJOR,
			      PBUS_STATUS_INVALID, PBUS_STATUS_OK, PBUS_STATUS_OK};
	struct pbus_sample sample;
	double d = 0;
	int32_t e = 0;
	float f = 0;
	uint64_t u = 0, seqs[6];
	int8_t i8 = 0;
	bool flag = true;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0 ||
	    pbus_table_open(instance, PBUS_OPEN_READ, &ro) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_table_close(w);
		pbus_instance_remove(owner);
		return;
	}
	/* What pbus_batch_new() refuses. */
	{
		struct pbus_batch_field f1[1] = {FIELD(w, "name", vset)};
		struct pbus_batch_field f2[1] = {FIELD(w, "samples", vset)};
		struct pbus_batch_field f3[1] = {{find(w, "vset"), 4}};
		struct pbus_batch_field f4[1] = {FIELD(owner, "vset", vset)};
		struct pbus_batch_field f5[1] = {FIELD(w, "meas", vset)};
		struct pbus_batch_field f6[1] = {FIELD(ro, "vset", vset)};
		struct pbus_batch_field f7[1] = {{NULL, 0}};

		CHECK_EQ(pbus_batch_new(w, f1, 1, &bad), -EINVAL); /* a string */
		CHECK_EQ(pbus_batch_new(w, f2, 1, &bad), -EINVAL); /* an array */
		CHECK_EQ(pbus_batch_new(w, f3, 1, &bad), -EINVAL); /* misaligned */
		CHECK_EQ(pbus_batch_new(w, f4, 1, &bad), -EINVAL); /* another table's */
		CHECK_EQ(pbus_batch_new(w, f5, 1, &bad), -EACCES); /* read-only */
		CHECK_EQ(pbus_batch_new(ro, f6, 1, &bad), -EACCES); /* opened to read */
		CHECK_EQ(pbus_batch_new(w, f7, 1, &bad), -EINVAL);
		CHECK_EQ(pbus_batch_new(w, f7, 0, &bad), -EINVAL);
		CHECK(bad == NULL);
	}
	{
		struct pbus_batch_field fields[7] = {
			FIELD(w, "vset", vset), FIELD(w, "mode", mode), FIELD(w, "f32", f32),
			FIELD(w, "u64", u64), FIELD(w, "i8", i8), FIELD(w, "flag", flag),
			FIELD(w, "vset", vset_again),
		};

		CHECK_EQ(pbus_batch_new(w, fields, 6, &b), 0);
		CHECK_EQ(pbus_batch_new(w, fields, 7, &bad), 0);
	}
	if (!b || !bad)
		goto out;
	/* Every value, each status, one timestamp. */
	CHECK_EQ(pbus_batch_write(b, &rec, status, 0), 0);
	CHECK_EQ(pbus_param_get_double(find(ro, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 12.5);
	CHECK_EQ(pbus_param_get_enum(find(ro, "mode"), &e), PBUS_STATUS_MINOR);
	CHECK_EQ(e, 7);
	CHECK_EQ(pbus_param_get_float(find(ro, "f32"), &f), PBUS_STATUS_MAJOR);
	CHECK(f == -1.5f);
	CHECK_EQ(pbus_param_get_uint64(find(ro, "u64"), &u), PBUS_STATUS_INVALID);
	CHECK(u == UINT64_MAX);
	CHECK_EQ(pbus_param_get_int8(find(ro, "i8"), &i8), PBUS_STATUS_OK);
	CHECK_EQ(i8, -10);
	CHECK_EQ(pbus_param_get_bool(find(ro, "flag"), &flag), PBUS_STATUS_OK);
	CHECK(!flag);
	{
		uint64_t ts0 = 0;

		for (unsigned i = 0; i < 6; i++) {
			unsigned char buf[8];

			CHECK(pbus_param_read(find(ro, names[i]), buf, sizeof(buf), &sample) >= 0);
			CHECK_EQ(sample.seq, 1);
			if (i == 0)
				ts0 = sample.timestamp_ns;
			CHECK(sample.timestamp_ns == ts0);
		}
		CHECK(ts0 > UINT64_C(1600000000) * 1000000000u);
	}
	/* A timestamp of the caller's, statuses all ok. */
	rec.vset = 13;
	CHECK_EQ(pbus_batch_write(b, &rec, NULL, 12345), 0);
	CHECK(pbus_param_read(find(ro, "mode"), &e, sizeof(e), &sample) >= 0);
	CHECK_EQ(sample.timestamp_ns, 12345);
	CHECK_EQ(sample.status, PBUS_STATUS_OK);
	CHECK_EQ(sample.seq, 2);
	/* One bad value or status: an error naming it, and nothing written. */
	for (unsigned i = 0; i < 6; i++)
		seqs[i] = pbus_param_seq(find(ro, names[i]));
	{
		struct unit_record refused[4] = {rec, rec, rec, rec};
		const int why[4] = {-ERANGE, -ERANGE, -ERANGE, -EINVAL};

		refused[0].vset = 30.5; /* above max */
		refused[1].mode = 5;    /* no such enumerator */
		refused[2].i8 = 11;     /* above max */
		refused[3].flag = 2;    /* not a bool */
		for (unsigned i = 0; i < 4; i++)
			CHECK_EQ(pbus_batch_write(b, &refused[i], NULL, 0), why[i]);
	}
	status[3] = 9;
	CHECK_EQ(pbus_batch_write(b, &rec, status, 0), -EINVAL);
	CHECK_EQ(pbus_batch_write(b, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(pbus_batch_write(NULL, &rec, NULL, 0), -EINVAL);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(pbus_param_seq(find(ro, names[i])), seqs[i]);
	CHECK_EQ(pbus_param_get_double(find(ro, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 13);
	/* A parameter twice: written twice, in order. */
	rec.vset = 1;
	rec.vset_again = 2;
	CHECK_EQ(pbus_batch_write(bad, &rec, NULL, 0), 0);
	CHECK_EQ(pbus_param_seq(find(ro, "vset")), seqs[0] + 2);
	CHECK_EQ(pbus_param_get_double(find(ro, "vset"), &d), PBUS_STATUS_OK);
	CHECK(d == 2);
	/* Each value on its own: the same checks first, then every field,
	 * with one timestamp, each status. */
	{
		struct unit_record refused = rec;
		size_t written = 99;

		status[3] = PBUS_STATUS_INVALID;
		for (unsigned i = 0; i < 6; i++)
			seqs[i] = pbus_param_seq(find(ro, names[i]));
		refused.mode = 5;
		CHECK_EQ(pbus_batch_write_each(b, &refused, NULL, 0, &written), -ERANGE);
		CHECK_EQ(written, 0);
		CHECK_EQ(pbus_batch_write_each(b, NULL, NULL, 0, &written), -EINVAL);
		CHECK_EQ(pbus_batch_write_each(NULL, &rec, NULL, 0, NULL), -EINVAL);
		for (unsigned i = 0; i < 6; i++)
			CHECK_EQ(pbus_param_seq(find(ro, names[i])), seqs[i]);
		rec.vset = 21.5;
		rec.f32 = 3.25f;
		CHECK_EQ(pbus_batch_write_each(b, &rec, status, 777, &written), 0);
		CHECK_EQ(written, 6);
		for (unsigned i = 0; i < 6; i++) {
			unsigned char buf[8];

			CHECK(pbus_param_read(find(ro, names[i]), buf, sizeof(buf), &sample) >= 0);
			CHECK_EQ(sample.seq, seqs[i] + 1);
			CHECK_EQ(sample.timestamp_ns, 777);
			CHECK_EQ(sample.status, status[i]);
		}
		CHECK_EQ(pbus_param_get_double(find(ro, "vset"), &d), PBUS_STATUS_OK);
		CHECK(d == 21.5);
		CHECK_EQ(pbus_param_get_float(find(ro, "f32"), &f), PBUS_STATUS_MAJOR);
		CHECK(f == 3.25f);
		/* A parameter twice: both writes, in order. */
		rec.vset = 3;
		rec.vset_again = 4;
		CHECK_EQ(pbus_batch_write_each(bad, &rec, NULL, 0, &written), 0);
		CHECK_EQ(written, 7);
		CHECK_EQ(pbus_param_seq(find(ro, "vset")), seqs[0] + 3);
		CHECK_EQ(pbus_param_get_double(find(ro, "vset"), &d), PBUS_STATUS_OK);
		CHECK(d == 4);
		rec.vset = 1;
	}
	/* The instrument's own code may batch its read-only measurements. */
	{
		struct pbus_batch_field fields[1] = {FIELD(owner, "meas", vset)};
		struct pbus_batch *own = NULL;

		CHECK_EQ(pbus_batch_new(owner, fields, 1, &own), 0);
		CHECK_EQ(pbus_batch_write(own, &rec, NULL, 0), 0);
		CHECK_EQ(pbus_param_get_double(find(ro, "meas"), &d), PBUS_STATUS_OK);
		CHECK(d == 1);
		pbus_batch_free(own);
	}
	/* A closed instance. */
	pbus_instance_remove(owner);
	owner = NULL;
	CHECK_EQ(pbus_batch_write(b, &rec, NULL, 0), -ESTALE);
	{
		size_t written = 99;

		CHECK_EQ(pbus_batch_write_each(b, &rec, NULL, 0, &written), -ESTALE);
		CHECK_EQ(written, 0);
	}
out:
	pbus_batch_free(b);
	pbus_batch_free(bad);
	pbus_batch_free(NULL);
	pbus_table_close(ro);
	pbus_table_close(w);
	if (owner)
		pbus_instance_remove(owner);
}

static void text_conversion(void)
{
	struct pbus_table *owner = create_instance();
	unsigned char buf[64];
	char out[64];
	size_t len = 0;

	if (!owner)
		return;
	CHECK_EQ(pbus_param_parse(find(owner, "vset"), "3.3", buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, 8);
	CHECK_EQ(pbus_param_format(find(owner, "vset"), buf, len, out, sizeof(out)), 3);
	CHECK_EQ_STR(out, "3.3");
	CHECK_EQ(pbus_param_parse(find(owner, "vset"), "31", buf, sizeof(buf), &len), -ERANGE);
	CHECK_EQ(pbus_param_parse(find(owner, "mode"), "tripped", buf, sizeof(buf), &len), 0);
	CHECK_EQ(pbus_param_format(find(owner, "mode"), buf, len, out, sizeof(out)), 7);
	CHECK_EQ_STR(out, "TRIPPED");
	CHECK_EQ(pbus_param_parse(find(owner, "samples"), "1,2,3,4,5,6", buf, sizeof(buf), &len),
		     -EMSGSIZE);
	pbus_instance_remove(owner);
}

struct writer_arg {
	const struct pbus_param *param;
	double value;
	int delay_ms;
	const struct pbus_param *before; /* batch: a float written first, else NULL */
	struct pbus_batch *batch;        /* or a prepared batch of @record */
	const void *record;
	struct pbus_table *zero_counts;  /* zero its waiter counts before writing */
};

static void *delayed_writer(void *arg)
{
	struct writer_arg *a = arg;
	struct timespec ts = {0, (long)a->delay_ms * 1000000};

	nanosleep(&ts, NULL);
	if (a->zero_counts) {
		/* What any reader may do to the wake segment. */
		struct pbus_table *t = a->zero_counts;

		__atomic_store_n(&t->wake->any_waiters, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&t->wake->param_waiters, 0, __ATOMIC_SEQ_CST);
		for (uint32_t i = 0; i < t->param_count; i++)
			__atomic_store_n(&t->waiters[i], 0, __ATOMIC_SEQ_CST);
	}
	if (a->before) {
		/* One batch: the waiter handshake runs once, after both. */
		float f = 2.0f;
		struct pbus_write wr[2] = {
			{.index = a->before->index_, .value = &f, .length = 4},
			{.index = a->param->index_, .value = &a->value, .length = 8},
		};

		CHECK_EQ(pbus_table_write_many(a->param->table_, wr, 2), 0);
	} else if (a->batch) {
		CHECK_EQ(pbus_batch_write(a->batch, a->record, NULL, 0), 0);
	} else {
		pbus_param_set_double(a->param, a->value);
	}
	return NULL;
}

/* Sleep in @w until @arg's writer, started now, wakes it (well within the
 * 5 s timeout) for parameter @index alone. */
static void woken_by(struct pbus_watch *w, struct writer_arg *arg, uint32_t index)
{
	pthread_t th;
	uint32_t got;
	int64_t t0 = pbus_monotonic_ns();

	pthread_create(&th, NULL, delayed_writer, arg);
	CHECK_EQ(pbus_watch_wait(w, 5 * INT64_C(1000000000)), 1);
	CHECK(pbus_monotonic_ns() - t0 < INT64_C(4000000000));
	CHECK_EQ(pbus_watch_next(w, &got), 1);
	CHECK_EQ(got, index);
	CHECK_EQ(pbus_watch_next(w, &got), 0);
	pthread_join(th, NULL);
}

static void waits(void)
{
	struct pbus_table *owner = create_instance(), *r = NULL;
	struct pbus_watch *w = NULL, *all = NULL;
	struct writer_arg arg;
	uint32_t idx[2] = {10, 15}, got;
	int64_t t0;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_READ, &r) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	CHECK_EQ(pbus_watch_new(r, idx, 2, &w), 0);
	CHECK_EQ(pbus_watch_new(r, NULL, 0, &all), 0);
	CHECK_EQ(pbus_watch_new(r, (uint32_t[]){99}, 1, &all), -ENOENT);
	/* Nothing changed: a zero timeout returns at once, a short one times out. */
	CHECK_EQ(pbus_watch_wait(w, 0), -ETIMEDOUT);
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_watch_wait(w, 50 * 1000000), -ETIMEDOUT);
	CHECK(pbus_monotonic_ns() - t0 >= 49 * 1000000);
	/* A change of an unwatched parameter does not end the wait. */
	CHECK_EQ(pbus_param_set_float(find(owner, "f32"), 1.0f), 0);
	CHECK_EQ(pbus_watch_wait(w, 0), -ETIMEDOUT);
	CHECK_EQ(pbus_watch_wait(all, 0), 1);
	CHECK_EQ(pbus_watch_next(all, &got), 1);
	CHECK_EQ(got, 9);
	CHECK_EQ(pbus_watch_next(all, &got), 0);
	/* A writer in another thread wakes the sleeping waiter, and so does a
	 * batch that writes it after an unwatched parameter. */
	arg = (struct writer_arg){find(owner, "meas"), 7.0, 30, NULL, NULL, NULL, NULL};
	woken_by(w, &arg, 15);
	arg = (struct writer_arg){find(owner, "meas"), 8.0, 30, find(owner, "f32"), NULL, NULL, NULL};
	woken_by(w, &arg, 15);
	/* So does a prepared batch, whose one test of the total of the
	 * parameters' counts must see the registration. */
	{
		struct {
			float f32;
			double meas;
		} rec = {3.0f, 9.0};
		struct pbus_batch_field fields[2] = {{find(owner, "f32"), 0}, {find(owner, "meas"), 8}};
		struct pbus_batch *b = NULL;

		CHECK_EQ(pbus_batch_new(owner, fields, 2, &b), 0);
		arg = (struct writer_arg){find(owner, "meas"), 0, 30, NULL, b, &rec, NULL};
		if (b)
			woken_by(w, &arg, 15);
		pbus_batch_free(b);
	}
	/* The waiter registration is gone after the wait. */
	CHECK_EQ(r->waiters[15], 0);
	CHECK_EQ(r->wake->param_waiters, 0);
	CHECK_EQ(r->wake->any_waiters, 0);
	/* Closing the instance ends waits with -ESTALE. */
	pbus_instance_remove(owner);
	CHECK_EQ(pbus_watch_wait(w, 1000000000), -ESTALE);
	CHECK_EQ(pbus_table_state(r), PBUS_TABLE_CLOSED);
	CHECK(!pbus_table_current(r));
	pbus_watch_free(w);
	pbus_watch_free(all);
	pbus_table_close(r);
}

static void states_and_replacement(void)
{
	struct pbus_table *owner = create_instance(), *r = NULL, *second = NULL, *again = NULL;
	char path[256];

	if (!owner || pbus_table_open(instance, PBUS_OPEN_READ, &r) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	/* A second owner is refused while the first lives. */
	CHECK_EQ(pbus_instance_create(instance, schema, NULL, &second), -EBUSY);
	CHECK(second == NULL);
	/* An owner that goes away without cleaning up (its lock is released,
	 * as the kernel does when a process dies) leaves an orphan... */
	close(owner->lock_fd);
	owner->lock_fd = -1;
	CHECK(pbus_table_current(r));
	owner->header->owner_pid = 1u << 30; /* a pid that does not run */
	CHECK_EQ(pbus_table_state(r), PBUS_TABLE_ORPHANED);
	CHECK(pbus_table_current(r)); /* the cheap check does not see a death */
	/* ...which the next owner replaces; old readers learn it. */
	CHECK_EQ(pbus_instance_create(instance, schema, NULL, &second), 0);
	CHECK_EQ(pbus_instance_publish(second), 0);
	CHECK_EQ(pbus_table_state(r), PBUS_TABLE_REPLACED);
	CHECK(!pbus_table_current(r));
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &again), 0);
	CHECK_EQ(pbus_table_state(again), PBUS_TABLE_LIVE);
	CHECK(pbus_table_current(again));
	CHECK(!pbus_table_current(NULL));
	pbus_table_close(again);
	pbus_table_close(r);
	pbus_table_destroy(owner); /* the stale owner's memory only */
	pbus_instance_remove(second);
	pbus_shm_path(path, sizeof(path), instance, "");
	CHECK(access(path, F_OK) != 0);
	pbus_shm_path(path, sizeof(path), instance, ".lock");
	CHECK(access(path, F_OK) != 0);
}

/* Every single-byte change of a valid segment's metadata is either still a
 * valid segment or refused with -EPROTO; never a crash. */
static void validation_refuses_damage(void)
{
	struct pbus_table *owner = create_instance();
	unsigned char *copy;
	size_t meta, refused = 0;

	if (!owner)
		return;
	CHECK_EQ(pbus_segment_validate(owner->base, owner->size), 0);
	copy = malloc(owner->size);
	meta = owner->header->slots_offset;
	for (size_t off = 0; off < meta; off++) {
		static const unsigned char flips[] = {0x01, 0x80, 0xff};

		for (size_t k = 0; k < sizeof(flips); k++) {
			int r;

			memcpy(copy, owner->base, owner->size);
			copy[off] ^= flips[k];
			r = pbus_segment_validate(copy, owner->size);
			CHECK(r == 0 || r == -EPROTO);
			refused += r != 0;
		}
	}
	CHECK(refused > meta); /* most header/descriptor damage is caught */
	CHECK_EQ(pbus_segment_validate(owner->base, owner->size - 4096), -EPROTO);
	CHECK_EQ(pbus_segment_validate(owner->base, 100), -EPROTO);
	free(copy);
	pbus_instance_remove(owner);
}

/* --- What others may do (docs/security.md) --------------------------------- */

/* A child that holds parameter @name (as a writer does while it writes) and
 * stops: with @as_lock the word is locked, else the parameter is biased to
 * the child and its write announced. */
static int stopped_holder(const char *name, bool as_lock)
{
	struct pbus_table *t = NULL;
	const struct pbus_param *p;
	struct pbus_write_claim c;

	if (pbus_table_open(instance, PBUS_OPEN_WRITE, &t) < 0 || pbus_table_find(t, name, &p) < 0)
		return 1;
	if (pbus_write_claim(&c, pbus_param_lock(p), &t->aux[p->index_].writing, &t->header->revocations,
			     !as_lock) < 0)
		return 2;
	raise(SIGSTOP);
	pbus_write_release(&c);
	return 0;
}

static pid_t start_stopped_holder(const char *name, bool as_lock)
{
	int status;
	pid_t child = fork();

	if (child == 0)
		_exit(stopped_holder(name, as_lock));
	CHECK_EQ(waitpid(child, &status, WUNTRACED), child);
	CHECK(WIFSTOPPED(status));
	return child;
}

static void end_holder(pid_t child)
{
	int status;

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

/* A batch changes nothing when one of its parameters is held by a writer
 * that stopped mid-write, whichever way it holds it; it says which one; the
 * nowait variant says so at once; once the holder is dead the batch goes
 * through. */
static void batches_with_a_busy_parameter(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	double v5 = 5, v7 = 7, got = 0;
	int16_t i16 = 3;
	struct pbus_write wr[3];
	size_t written = 0;
	int64_t t0;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	for (int as_lock = 0; as_lock < 2; as_lock++) {
		pid_t child = start_stopped_holder("i16", as_lock);
		struct {
			double vset;
			int16_t i16;
		} rec = {9, 4};
		struct pbus_batch_field fields[2] = {{find(w, "vset"), 0}, {find(w, "i16"), 8}};
		struct pbus_batch *b = NULL;
		uint64_t seq = pbus_param_seq(find(w, "vset"));

		wr[0] = (struct pbus_write){.index = 10, .value = &v5, .length = 8};
		wr[1] = (struct pbus_write){.index = 2, .value = &i16, .length = 2};
		t0 = pbus_monotonic_ns();
		CHECK_EQ(pbus_table_write_many(w, wr, 2), -EBUSY);
		CHECK(pbus_monotonic_ns() - t0 >= INT64_C(900000000));
		CHECK_EQ(wr[0].result, 0);
		CHECK_EQ(wr[1].result, -EBUSY);
		CHECK(wr[0].seq == 0 && wr[1].seq == 0);
		CHECK(pbus_param_seq(find(w, "vset")) == seq); /* unchanged */
		/* pbusd's way: no waiting at all. */
		t0 = pbus_monotonic_ns();
		CHECK_EQ(pbus_table_write_many_try(w, wr, 2), -EAGAIN);
		CHECK(pbus_monotonic_ns() - t0 < INT64_C(100000000));
		CHECK_EQ(wr[0].result, 0);
		CHECK_EQ(wr[1].result, -EAGAIN);
		CHECK(pbus_param_seq(find(w, "vset")) == seq);
		/* In the other order too (the held one first). */
		wr[2] = wr[0];
		CHECK_EQ(pbus_table_write_many_try(w, &wr[1], 2), -EAGAIN);
		CHECK(pbus_param_seq(find(w, "vset")) == seq);
		/* A prepared batch likewise. */
		CHECK_EQ(pbus_batch_new(w, fields, 2, &b), 0);
		CHECK_EQ(pbus_batch_write(b, &rec, NULL, 0), -EBUSY);
		CHECK(pbus_param_seq(find(w, "vset")) == seq);
		/* Each on its own: the fields before the held one are written,
		 * and the call says so. */
		t0 = pbus_monotonic_ns();
		CHECK_EQ(pbus_batch_write_each(b, &rec, NULL, 0, &written), -EBUSY);
		CHECK(pbus_monotonic_ns() - t0 >= INT64_C(900000000));
		CHECK_EQ(written, 1);
		CHECK(pbus_param_seq(find(w, "vset")) == seq + 1);
		CHECK_EQ(pbus_param_get_double(find(w, "vset"), &got), 0);
		CHECK(got == 9);
		/* The holder dies: everything goes through, at once. */
		end_holder(child);
		t0 = pbus_monotonic_ns();
		CHECK_EQ(pbus_table_write_many_try(w, wr, 2), 0);
		CHECK_EQ(pbus_batch_write(b, &rec, NULL, 0), 0);
		CHECK_EQ(pbus_batch_write_each(b, &rec, NULL, 0, &written), 0);
		CHECK_EQ(written, 2);
		CHECK(pbus_monotonic_ns() - t0 < INT64_C(500000000));
		CHECK_EQ(pbus_param_get_double(find(w, "vset"), &got), 0);
		CHECK(got == 9);
		pbus_batch_free(b);
	}
	/* The same parameter twice in one batch: written twice, in order, and
	 * not waited for by itself. */
	wr[0] = (struct pbus_write){.index = 10, .value = &v5, .length = 8};
	wr[1] = (struct pbus_write){.index = 10, .value = &v7, .length = 8};
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_table_write_many(w, wr, 2), 0);
	CHECK(pbus_monotonic_ns() - t0 < INT64_C(100000000));
	CHECK(wr[1].seq == wr[0].seq + 1);
	CHECK_EQ(pbus_param_get_double(find(w, "vset"), &got), 0);
	CHECK(got == 7);
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* The reader's turns are in the wake segment, which every reader may write:
 * a deadline far ahead delays nobody (it is cleared), and a reader that
 * keeps posting real-looking turns delays a write by PBUS_READER_TURN_NS at
 * most and costs a writer a small share of its time. */
struct poster {
	uint64_t *turn;
	int stop;
};

static void *keep_posting(void *arg)
{
	struct poster *ps = arg;

	while (!__atomic_load_n(&ps->stop, __ATOMIC_ACQUIRE)) {
		uint64_t zero = 0;

		__atomic_compare_exchange_n(ps->turn, &zero, (uint64_t)pbus_monotonic_ns() + PBUS_READER_TURN_NS,
					    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int compare_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* @count writes of @p: the time they took, and in *ret_slow how many took
 * longer than a reader's turn and 300 us to spare (a preemption). */
/* The time this thread has waited for a CPU so far (the kernel's
 * run_delay, /proc/thread-self/schedstat's second field, in ns; @fd open on
 * it), or 0 if the kernel does not say. */
static int64_t run_delay_ns(int fd)
{
	char buf[128];
	unsigned long long on_cpu, waited;
	ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%llu %llu", &on_cpu, &waited) == 2 ? (int64_t)waited : 0;
}

/* Time @count writes of @p; *ret_slow gets how many took longer than a
 * reader's turn and a margin (500 us), not counting the time the writer
 * waited for a CPU meanwhile (preempted, or woken from its futex while
 * another process had the CPU): that says nothing about turns, and on a
 * busy machine (parallel builds) a longer run meets more of it. */
static int64_t time_writes(const struct pbus_param *p, int count, int *ret_slow)
{
	int64_t t0 = pbus_monotonic_ns(), *each = calloc((size_t)count, sizeof(*each)), total;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC), excused = 0;

	*ret_slow = 0;
	for (int i = 0; i < count; i++) {
		int64_t waited = run_delay_ns(fd), a = pbus_monotonic_ns(), took;

		CHECK_EQ(pbus_param_set_double(p, (double)(i % 30)), 0);
		took = pbus_monotonic_ns() - a;
		if (each)
			each[i] = took;
		if (took > PBUS_READER_TURN_NS + INT64_C(300000)) {
			if (took - (run_delay_ns(fd) - waited) > PBUS_READER_TURN_NS + INT64_C(300000))
				++*ret_slow;
			else
				excused++;
		}
	}
	total = pbus_monotonic_ns() - t0;
	if (fd >= 0)
		close(fd);
	if (each) {
		qsort(each, (size_t)count, sizeof(*each), compare_i64);
		printf("  slow writes: %d, %d more that waited for a CPU; longest writes (us):", *ret_slow,
		       excused);
		for (int i = count - 1; i >= count - 5; i--)
			printf(" %.0f", (double)each[i] / 1e3);
		printf("\n");
	}
	free(each);
	return total;
}

static void reader_turns_are_bounded(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	const struct pbus_param *p;
	struct poster ps;
	pthread_t thread;
	int64_t t0, clean, attacked;
	int slow_clean, slow;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		pbus_instance_remove(owner);
		return;
	}
	p = find(w, "vset");
	/* 1000 s ahead: no reader posts that; cleared by the first write. */
	__atomic_store_n(&w->turns[p->index_], (uint64_t)pbus_monotonic_ns() + INT64_C(1000000000000),
			 __ATOMIC_RELEASE);
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_param_set_double(p, 2), 0);
	CHECK(pbus_monotonic_ns() - t0 < INT64_C(20000000));
	CHECK(__atomic_load_n(&w->turns[p->index_], __ATOMIC_ACQUIRE) == 0);
	/* Posted turns, over and over, from another thread. */
	clean = time_writes(p, 200000, &slow_clean);
	ps = (struct poster){&w->turns[p->index_], 0};
	pthread_create(&thread, NULL, keep_posting, &ps);
	attacked = time_writes(p, 200000, &slow);
	__atomic_store_n(&ps.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	printf("  200000 writes: %.1f ms alone, %.1f ms while turns are posted; above 500 us: %d "
	       "alone, %d under turns\n",
	       (double)clean / 1e6, (double)attacked / 1e6, slow_clean, slow);
	/* Each write holds off for one turn at most (a write that took longer,
	 * the time it waited for a CPU not counted, is as rare as when nobody
	 * posts: a few to spare), and the writer spends at most a 20th of its
	 * time holding off. */
	CHECK(slow <= slow_clean + 3);
	CHECK(attacked < clean * 3 + INT64_C(200000000));
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* Only a trusted owner's segment is believed; the wake segment is shared
 * memory of fixed size that only the owner can remove, and nothing in it
 * can hide the instance. */
static void untrusted_files_are_refused(void)
{
	struct pbus_table *owner = NULL, *t = NULL;
	struct pbus_instance_options opts = {.mode = 0666, .group = (gid_t)-1};
	struct shmid_ds ds;
	char path[256], lock[256];
	double v = 0;
	int fd;

	pbus_shm_path(path, sizeof(path), instance, "");
	pbus_shm_path(lock, sizeof(lock), instance, ".lock");
	/* A table others may write is not made. */
	CHECK_EQ(pbus_instance_create(instance, schema, &opts, &owner), -EINVAL);
	/* A lock file somebody else made first (to lock the owner out) is
	 * replaced by one only the owner's user can open. */
	fd = open(lock, O_RDWR | O_CREAT | O_EXCL, 0666);
	CHECK(fd >= 0);
	CHECK_EQ(fchown(fd, 12345, 12345), 0);
	CHECK_EQ(fchmod(fd, 0666), 0);
	CHECK_EQ(flock(fd, LOCK_EX), 0);
	owner = create_instance();
	close(fd);
	if (!owner)
		return;
	{
		struct stat st;

		CHECK_EQ(stat(lock, &st), 0);
		CHECK(st.st_uid == geteuid() && (st.st_mode & 07777) == 0600);
	}
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), 0);
	pbus_table_close(t);
	/* The segment of another user, or one others may write, is refused. */
	CHECK_EQ(chown(path, 12345, (gid_t)-1), 0);
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), -EPERM);
	setenv("PBUS_OWNER", "nobody,12345", 1);
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), -EPROTO); /* a wake segment not its */
	unsetenv("PBUS_OWNER");
	CHECK_EQ(chown(path, geteuid(), (gid_t)-1), 0);
	CHECK_EQ(chmod(path, 0646), 0);
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_READ, &t), -EPERM);
	CHECK_EQ(chmod(path, 0644), 0);
	/* The wake segment: System V shared memory, the owner's, of fixed size. */
	CHECK_EQ(shmctl((int)owner->header->wake_id, IPC_STAT, &ds), 0);
	CHECK(ds.shm_perm.cuid == geteuid() && ds.shm_segsz >= owner->header->wake_size);
	CHECK((ds.shm_perm.mode & 0777) == 0666);
	/* Scribbled all over (header, counts, turns), it hides nothing. */
	memset(owner->wake_base, 0xa5, owner->wake_size);
	CHECK_EQ(pbus_table_open(instance, PBUS_OPEN_WRITE, &t), 0);
	if (t) {
		int64_t t0 = pbus_monotonic_ns();

		CHECK_EQ(pbus_param_set_double(find(t, "vset"), 3), 0);
		CHECK_EQ(pbus_param_get_double(find(t, "vset"), &v), 0);
		CHECK(v == 3);
		CHECK(pbus_monotonic_ns() - t0 < INT64_C(20000000));
		pbus_table_close(t);
	}
	/* A symlink at the name is not followed. */
	{
		char aside[300];

		snprintf(aside, sizeof(aside), "%s.aside", path);
		CHECK_EQ(rename(path, aside), 0);
		CHECK_EQ(symlink(aside, path), 0);
		CHECK(pbus_table_open(instance, PBUS_OPEN_READ, &t) < 0);
		unlink(path);
		CHECK_EQ(rename(aside, path), 0);
	}
	pbus_instance_remove(owner);
}

/* A waiter whose registration somebody zeroed (the counts are in the wake
 * segment) still hears of the change, within the wait slice. */
static void waits_survive_zeroed_counts(void)
{
	struct pbus_table *owner = create_instance(), *r = NULL, *w = NULL;
	struct writer_arg arg;
	struct pbus_watch *watch = NULL;
	pthread_t thread;
	uint32_t index = 0;
	int64_t t0;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_READ, &r) < 0 ||
	    pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		goto out;
	}
	CHECK_EQ(pbus_watch_new(r, (uint32_t[]){10}, 1, &watch), 0);
	/* A thread that zeroes every count while we sleep, then writes. */
	arg = (struct writer_arg){find(w, "vset"), 4.0, 30, NULL, NULL, NULL, r};
	pthread_create(&thread, NULL, delayed_writer, &arg);
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_watch_wait(watch, INT64_C(5000000000)), 1);
	CHECK(pbus_monotonic_ns() - t0 < INT64_C(1000000000));
	CHECK_EQ(pbus_watch_next(watch, &index), 1);
	CHECK_EQ(index, 10);
	pthread_join(thread, NULL);
out:
	pbus_watch_free(watch);
	pbus_table_close(r);
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* --- Writer bias (docs/segment-format.md §4.3) ------------------------------ */

static uint64_t lock_word(const struct pbus_param *p)
{
	return __atomic_load_n(pbus_param_lock(p), __ATOMIC_ACQUIRE);
}

static uint64_t writing_word(const struct pbus_table *t, const struct pbus_param *p)
{
	return __atomic_load_n(&t->aux[p->index_].writing, __ATOMIC_ACQUIRE);
}

/* Another thread that writes @param once: @value, @length bytes. */
struct revoker_arg {
	const struct pbus_param *param;
	const void *value;
	size_t length;
	uint64_t token;
	int result;
};

static void *revoker(void *arg)
{
	struct revoker_arg *a = arg;

	a->token = pbus_thread_token();
	a->result = pbus_param_set(a->param, a->value, a->length);
	return NULL;
}

static void writer_bias_and_revocation(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	const struct pbus_param *p, *q;
	struct revoker_arg arg = {0};
	uint64_t me = pbus_thread_token();
	const float f25 = 2.5f;
	const uint8_t u8 = 2;
	pthread_t th;
	float f = 0;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		goto out;
	}
	p = find(w, "f32");
	q = find(owner, "f32");
	CHECK(me != 0 && (me & ~PBUS_TOKEN_MASK) == 0);
	CHECK_EQ(pbus_token_tid(me), (uint32_t)syscall(SYS_gettid));
	/* pbusd's own table takes no bias: the word stays free and fresh. */
	CHECK_EQ(pbus_param_set_float(q, 0.5f), 0);
	CHECK(lock_word(p) == 0);
	/* The application's first write takes the bias; later ones keep it
	 * without touching the word, and the announcement is cleared. */
	CHECK_EQ(pbus_param_set_float(p, 1.0f), 0);
	CHECK(lock_word(p) == (PBUS_LOCK_BIASED | me));
	CHECK_EQ(pbus_param_set_float(p, 1.5f), 0);
	CHECK(lock_word(p) == (PBUS_LOCK_BIASED | me));
	CHECK(writing_word(w, p) == 0);
	CHECK_EQ(pbus_param_get_float(p, &f), PBUS_STATUS_OK);
	CHECK(f == 1.5f);
	CHECK_EQ(pbus_param_seq(p), 3);
	/* A second thread revokes it: the word becomes SHARED. */
	arg = (struct revoker_arg){.param = p, .value = &f25, .length = sizeof(f25)};
	pthread_create(&th, NULL, revoker, &arg);
	pthread_join(th, NULL);
	CHECK_EQ(arg.result, 0);
	CHECK(arg.token != me);
	CHECK(lock_word(p) == PBUS_LOCK_SHARED);
	CHECK_EQ(pbus_param_get_float(p, &f), PBUS_STATUS_OK);
	CHECK(f == 2.5f);
	/* For good: however often one thread writes it now, each write takes
	 * the lock and leaves the word SHARED (a revoked owner may still store
	 * a late announcement, which must never meet a new owner's). */
	for (unsigned i = 1; i <= 2000; i++) {
		CHECK_EQ(pbus_param_set_float(p, (float)i), 0);
		if (lock_word(p) != PBUS_LOCK_SHARED) {
			CHECK_FAIL("write %u: lock word 0x%llx", i, (unsigned long long)lock_word(p));
			break;
		}
	}
	CHECK_EQ(pbus_param_get_float(p, &f), PBUS_STATUS_OK);
	CHECK(f == 2000.0f);
	/* pbusd's writes revoke like anyone's: "u8" biased to us, then
	 * written through pbusd's table from another thread. */
	CHECK_EQ(pbus_param_set_uint8(find(w, "u8"), 1), 0);
	CHECK(lock_word(find(w, "u8")) == (PBUS_LOCK_BIASED | me));
	arg = (struct revoker_arg){.param = find(owner, "u8"), .value = &u8, .length = 1};
	pthread_create(&th, NULL, revoker, &arg);
	pthread_join(th, NULL);
	CHECK_EQ(arg.result, 0);
	CHECK(lock_word(find(w, "u8")) == PBUS_LOCK_SHARED);
	CHECK_EQ(pbus_param_seq(p), 3 + 1 + 2000);
out:
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* A child that owns the bias of "u32" and stops in the middle of a write
 * (it announces the write, as the fast path does, then stops itself). */
static int stopped_owner(void)
{
	struct pbus_table *t = NULL;
	const struct pbus_param *p;

	if (pbus_table_open(instance, PBUS_OPEN_WRITE, &t) < 0 || pbus_table_find(t, "u32", &p) < 0 ||
	    pbus_param_set_uint32(p, 1) < 0)
		return 1;
	if (lock_word(p) != (PBUS_LOCK_BIASED | pbus_thread_token()))
		return 2;
	__atomic_store_n(&t->aux[p->index_].writing, pbus_thread_token(), __ATOMIC_RELEASE);
	raise(SIGSTOP);
	return 0;
}

static void writer_dead_or_stopped_owner(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	const struct pbus_param *p;
	uint32_t v = 0;
	int64_t t0;
	pid_t child;
	int status;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		goto out;
	}
	p = find(w, "u32");
	child = fork();
	if (child == 0)
		_exit(stopped_owner());
	CHECK_EQ(waitpid(child, &status, WUNTRACED), child);
	CHECK(WIFSTOPPED(status));
	CHECK((lock_word(p) & PBUS_LOCK_STATE_MASK) == PBUS_LOCK_BIASED);
	CHECK_EQ(pbus_token_tid(lock_word(p)), child);
	/* A live owner stuck in a write: we give up after a second with EBUSY,
	 * and hand the bias back so that the next writer waits for it too. */
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_param_set_uint32(p, 2), -EBUSY);
	CHECK(pbus_monotonic_ns() - t0 >= INT64_C(900000000));
	CHECK_EQ(pbus_token_tid(lock_word(p)), child);
	CHECK((lock_word(p) & PBUS_LOCK_STATE_MASK) == PBUS_LOCK_BIASED);
	CHECK_EQ(pbus_param_get_uint32(p, &v), PBUS_STATUS_OK);
	CHECK_EQ(v, 1);
	/* Once it is dead (a zombie, not reaped yet, counts), the write goes
	 * through at once, the announcement is cleared, and the bias passes to
	 * us (a dead owner can store nothing late). */
	kill(child, SIGKILL);
	for (int i = 0; i < 1000; i++) {
		siginfo_t si = {0};

		if (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == child)
			break;
		usleep(1000);
	}
	t0 = pbus_monotonic_ns();
	CHECK_EQ(pbus_param_set_uint32(p, 3), 0);
	CHECK(pbus_monotonic_ns() - t0 < INT64_C(500000000));
	CHECK_EQ(pbus_param_get_uint32(p, &v), PBUS_STATUS_OK);
	CHECK_EQ(v, 3);
	CHECK(writing_word(w, p) == 0);
	CHECK(lock_word(p) == (PBUS_LOCK_BIASED | pbus_thread_token()));
	CHECK_EQ(waitpid(child, &status, 0), child);
out:
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* A forked child is another writer: a new token, its own membarrier
 * registration; it revokes the parent's bias and takes fresh ones. */
static int forked_writer(struct pbus_table *w)
{
	const struct pbus_param *p, *q;
	uint64_t me;

	if (pbus_table_find(w, "i16", &p) < 0 || pbus_table_find(w, "i32", &q) < 0)
		return 10;
	me = pbus_thread_token();
	if (pbus_token_tid(me) != (uint32_t)getpid())
		return 11;
	if (pbus_param_set_int16(p, 7) < 0 || lock_word(p) != PBUS_LOCK_SHARED)
		return 12;
	if (pbus_param_set_int32(q, 8) < 0 || lock_word(q) != (PBUS_LOCK_BIASED | me))
		return 13;
	return 0;
}

static void writer_bias_across_fork(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	const struct pbus_param *p;
	int16_t v = 0;
	int status = -1;
	pid_t child;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		goto out;
	}
	p = find(w, "i16");
	CHECK_EQ(pbus_param_set_int16(p, 1), 0);
	CHECK(lock_word(p) == (PBUS_LOCK_BIASED | pbus_thread_token()));
	child = fork();
	if (child == 0)
		_exit(forked_writer(w));
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(pbus_param_get_int16(p, &v), PBUS_STATUS_OK);
	CHECK_EQ(v, 7);
	/* The parent writes on, under the lock now. */
	CHECK_EQ(pbus_param_set_int16(p, 2), 0);
	CHECK(lock_word(p) == PBUS_LOCK_SHARED);
out:
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

/* Timestamps come from the TSC where the kernel's clocksource is the TSC:
 * within 1 us of CLOCK_REALTIME, never going back in one thread. */
static void timestamps_follow_the_clock(void)
{
	struct pbus_table *owner = create_instance(), *w = NULL;
	const struct pbus_param *p;
	struct pbus_sample sample;
	uint64_t last = 0, worst_early = 0, worst_late = 0;
	unsigned bad = 0;
	double v;

	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &w) < 0) {
		CHECK_FAIL("cannot make or open the test instance");
		goto out;
	}
	p = find(w, "u64");
	/* 4000 writes over about 100 ms: through the first 10 ms (the rate's
	 * measurement), then across many anchors, with pauses of up to 2 ms. */
	for (unsigned i = 0; i < 4000; i++) {
		uint64_t before = pbus_realtime_ns(), after;

		CHECK_EQ(pbus_param_set_uint64(p, i), 0);
		after = pbus_realtime_ns();
		CHECK_EQ(pbus_param_read(p, &v, sizeof(v), &sample), PBUS_STATUS_OK);
		if (sample.timestamp_ns + 1000 < before || sample.timestamp_ns > after + 1000 ||
		    sample.timestamp_ns < last)
			bad++;
		if (before > sample.timestamp_ns && before - sample.timestamp_ns > worst_early)
			worst_early = before - sample.timestamp_ns;
		if (sample.timestamp_ns > after && sample.timestamp_ns - after > worst_late)
			worst_late = sample.timestamp_ns - after;
		last = sample.timestamp_ns;
		if (i % 100 == 99)
			usleep((useconds_t)(i % 2000));
	}
	if (bad)
		printf("  %u of 4000 timestamps off (earliest %llu ns before, latest %llu ns after "
		       "the write's clock_gettime() window)\n",
		       bad, (unsigned long long)worst_early, (unsigned long long)worst_late);
	CHECK_EQ(bad, 0);
out:
	pbus_table_close(w);
	pbus_instance_remove(owner);
}

int main(void)
{
	char err[256];

	pbus_check_suite("unit/table");
	snprintf(instance, sizeof(instance), "unit-table-%d", (int)getpid());
	if (pbus_schema_parse(schema_text, sizeof(schema_text) - 1, "unit.pbs", err, sizeof(err),
			      &schema) < 0) {
		printf("FAIL: unit/table/schema: %s\n", err);
		return 1;
	}
	RUN_CASE(open_and_defaults);
	RUN_CASE(info_and_enums);
	RUN_CASE(schema_view);
	RUN_CASE(copied_params);
	RUN_CASE(typed_writes);
	RUN_CASE(samples_and_versions);
	RUN_CASE(batches_are_all_or_nothing);
	RUN_CASE(prepared_batches);
	RUN_CASE(text_conversion);
	RUN_CASE(waits);
	RUN_CASE(states_and_replacement);
	RUN_CASE(validation_refuses_damage);
	RUN_CASE(writer_bias_and_revocation);
	RUN_CASE(writer_dead_or_stopped_owner);
	RUN_CASE(writer_bias_across_fork);
	RUN_CASE(timestamps_follow_the_clock);
	RUN_CASE(batches_with_a_busy_parameter);
	RUN_CASE(reader_turns_are_bounded);
	RUN_CASE(untrusted_files_are_refused);
	RUN_CASE(waits_survive_zeroed_counts);
	pbus_schema_free(schema);
	CHECK_EXIT();
}
