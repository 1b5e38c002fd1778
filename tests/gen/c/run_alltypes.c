/*
 * End-to-end check of the generated C bindings against the real libparambus:
 * create an instance from the embedded schema, open it through the typed
 * open function, and read and write every kind of parameter through the
 * generated accessors. Built and run by tests/gen/test_golden.py; prints
 * "ok" and exits 0 when every check holds (its checks are pbus-check.h's,
 * outside a case: each failure is a FAIL line of its own).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <parambus/instance.h>
#include <parambus/schema.h>

#include "alltypes.h"
#include "../../include/pbus-check.h"

int main(void)
{
	char name[64], err[256] = "", text[32];
	unsigned char blob[8];
	struct pbus_schema *schema;
	struct pbus_table *owner;
	struct all_types *t = NULL;
	int32_t values[8];
	uint16_t taps[8];
	size_t n;
	double d;
	float f;
	int8_t i8;
	int64_t i64;
	bool b;
	enum all_types_mode mode;

	pbus_check_suite("gen/alltypes");
	snprintf(name, sizeof(name), "pbusgen-test-%ld", (long)getpid());
	if (pbus_schema_parse(all_types_schema_text, all_types_schema_length, "alltypes.pbs",
			      err, sizeof(err), &schema) < 0) {
		fprintf(stderr, "schema: %s\n", err);
		return 1;
	}
	CHECK(pbus_schema_hash(schema) == ALL_TYPES_SCHEMA_HASH);
	CHECK(pbus_instance_create(name, schema, NULL, &owner) == 0);
	CHECK(pbus_instance_publish(owner) == 0);

	CHECK(all_types_open(name, PBUS_OPEN_PROVIDER, &t) == 0);
	if (t == NULL)
		return 1;

	/* defaults from the deployment */
	CHECK(all_types_get_b(t, &b) == PBUS_STATUS_OK && b);
	CHECK(all_types_get_i8(t, &i8) == PBUS_STATUS_OK && i8 == -4);
	CHECK(all_types_get_i64(t, &i64) == PBUS_STATUS_OK && i64 == INT64_MIN);
	CHECK(all_types_get_f32(t, &f) == PBUS_STATUS_OK && f == 0.25f);
	CHECK(all_types_get_mode(t, &mode) == PBUS_STATUS_OK && mode == ALL_TYPES_MODE_TEST);
	CHECK(all_types_get_text(t, text, sizeof(text)) == PBUS_STATUS_OK &&
	      strcmp(text, "50% = half, done") == 0);
	CHECK(all_types_get_blob(t, blob, sizeof(blob), &n) == PBUS_STATUS_OK && n == 3 &&
	      blob[0] == 0x00 && blob[1] == 0xff && blob[2] == 0x7f);
	CHECK(all_types_get_values(t, values, 8, &n) == PBUS_STATUS_OK && n == 3 &&
	      values[0] == 1 && values[2] == 3);
	CHECK(all_types_get_derived_taps(t, taps, 8, &n) == PBUS_STATUS_OK && n == 2);
	CHECK(all_types_get_range_high(t, &d) == PBUS_STATUS_OK && fabs(d - 6.28) < 1e-12);
	/* no default: status invalid */
	CHECK(all_types_get_percent(t, &i64) == PBUS_STATUS_INVALID);

	/* writes through the typed setters, limits enforced by the library */
	CHECK(all_types_set_i8(t, 100) == 0);
	CHECK(all_types_get_i8(t, &i8) >= 0 && i8 == 100);
	CHECK(all_types_set_i8(t, 101) == -ERANGE);
	CHECK(all_types_set_small_range(t, 6) == -ERANGE);
	CHECK(all_types_set_mode(t, ALL_TYPES_MODE_CALIBRATE) == 0);
	CHECK(all_types_get_mode(t, &mode) >= 0 && mode == ALL_TYPES_MODE_CALIBRATE);
	CHECK(all_types_set_text(t, "hello") == 0);
	CHECK(all_types_get_text(t, text, sizeof(text)) >= 0 && strcmp(text, "hello") == 0);
	CHECK(all_types_set_text(t, "this text is longer than twenty bytes") == -EMSGSIZE);
	values[0] = 7;
	values[1] = 8;
	CHECK(all_types_set_values(t, values, 2) == 0);
	CHECK(all_types_get_values(t, values, 8, &n) >= 0 && n == 2 && values[1] == 8);
	CHECK(all_types_set_blob(t, "\x01\x02", 2) == 0);
	CHECK(all_types_get_blob(t, blob, sizeof(blob), &n) >= 0 && n == 2 && blob[1] == 2);
	/* a read-only parameter: published by the provider, typed and checked */
	CHECK(all_types_publish_uptime(t, 42) == 0);
	{
		uint32_t up = 0;

		CHECK(all_types_get_uptime(t, &up) == PBUS_STATUS_OK && up == 42);
	}
	{
		struct all_types *writer = NULL;

		CHECK(all_types_open(name, PBUS_OPEN_WRITE, &writer) == 0);
		CHECK(writer != NULL && all_types_publish_uptime(writer, 7) == -EACCES);
		all_types_close(writer);
	}
	CHECK(all_types_param(t, ALL_TYPES_UPTIME) != NULL);
	CHECK(all_types_param(t, ALL_TYPES_PARAM_COUNT) == NULL);

	all_types_close(t);
	pbus_instance_remove(owner);
	pbus_schema_free(schema);

	/* An instance of another schema: refused with its own error, whose
	 * text says so (it said "not a parambus segment of a supported format"). */
	{
		static const char other[] = "pbus-schema 1\ninterface org.example.Other 1.0\nparam x int32\n";
		struct all_types *wrong = NULL;

		CHECK(pbus_schema_parse(other, sizeof(other) - 1, "other.pbs", err, sizeof(err), &schema) == 0);
		CHECK(pbus_instance_create(name, schema, NULL, &owner) == 0);
		CHECK(pbus_instance_publish(owner) == 0);
		CHECK(all_types_open(name, PBUS_OPEN_READ, &wrong) == -EMEDIUMTYPE && wrong == NULL);
		CHECK(strstr(pbus_strerror(-EMEDIUMTYPE), "made from another schema (regenerate the bindings") != NULL);
		/* and the generated description names both schemas */
		{
			char why[512], head[160], tail[96];

			all_types_describe_open_error(name, -EMEDIUMTYPE, why, sizeof(why));
			snprintf(head, sizeof(head), "made from another schema: org.example.Other 1.0 (schema hash %016" PRIx64 ", 1 parameters), these bindings from org.example.alltypes.AllTypes ", pbus_schema_hash(schema));
			snprintf(tail, sizeof(tail), "(schema hash %016" PRIx64 ", %u parameters): regenerate", ALL_TYPES_SCHEMA_HASH, (unsigned)ALL_TYPES_PARAM_COUNT);
			CHECK(strncmp(why, head, strlen(head)) == 0);
			CHECK(strstr(why, tail) != NULL);
			if (strncmp(why, head, strlen(head)) != 0 || strstr(why, tail) == NULL)
				fprintf(stderr, "got: %s\n", why);
			CHECK(strcmp(all_types_describe_open_error(name, -ENOENT, why, sizeof(why)),
				     pbus_strerror(-ENOENT)) == 0);
		}
		pbus_instance_remove(owner);
		pbus_schema_free(schema);
	}
	if (pbus_check_exit())
		return 1;
	printf("ok\n");
	return 0;
}
