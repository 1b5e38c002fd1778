/* SPDX-License-Identifier: MIT */
/*
 * test-schema.c: the compiled-schema loader. A good schema is read whole and
 * hashed as docs/schema-format.md specifies; every class of bad input is
 * refused with a message naming the line.
 */
#include <errno.h>

#include <parambus/schema.h>

#include "../../lib/schema-internal.h"
#include "pbus-check.h"

static const char good[] =
	"# AUTO-GENERATED banner\n"
	"pbus-schema 1\n"
	"interface com.example.T 2.3\n"
	"enum com.example.T.Mode OFF=0 ON=1 TRIPPED=7\n"
	"param vset double unit=V min=0 max=30 step=0.001 default=1.5 flags=persistent class=setting group=instrument desc=Voltage%20setpoint\n"
	"\n"
	"param name string size=16 default=hello%20world flags=readonly class=constant\n"
	"param mode enum enum=com.example.T.Mode default=ON\n"
	"param limits.max int64 min=-5 max=5 future_key=kept hw-device=a%20b%3Dc\n"
	"param raw bytes size=4 default=00ff10ab\n"
	"param arr int16[] count=4 default=1,-2,3\n";

static void parse_good(void)
{
	struct pbus_schema *s = NULL;
	char err[256];
	int r = pbus_schema_parse(good, sizeof(good) - 1, "good.pbs", err, sizeof(err), &s);

	CHECK_EQ(r, 0);
	if (r < 0) {
		printf("  %s\n", err);
		return;
	}
	CHECK_EQ(pbus_schema_param_count(s), 6);
	CHECK_EQ_STR(s->interface, "com.example.T");
	CHECK_EQ(s->major, 2);
	CHECK_EQ(s->minor, 3);
	CHECK_EQ_STR(s->params[0].description, "Voltage setpoint");
	CHECK_EQ_STR(s->params[0].group, "instrument");
	CHECK_EQ(s->params[0].ti.flags & PBUS_PARAM_PERSISTENT, PBUS_PARAM_PERSISTENT);
	CHECK(s->params[0].ti.max.d == 30.0);
	CHECK_EQ(s->params[1].default_length, 11);
	CHECK(memcmp(s->params[1].default_value, "hello world", 11) == 0);
	CHECK_EQ(s->params[1].update_class, PBUS_UPDATE_CONSTANT);
	CHECK_EQ(s->params[2].ti.enum_count, 3);
	CHECK_EQ(*(int32_t *)(void *)s->params[2].default_value, 1);
	CHECK_EQ(s->params[3].ti.min.i, -5);
	CHECK_EQ(s->params[4].default_length, 4);
	CHECK_EQ(s->params[4].default_value[1], 0xff);
	CHECK_EQ(s->params[5].ti.value_size, 8);
	CHECK_EQ(s->params[5].default_length, 6);
	/* Keys the library does not interpret are kept, decoded, for tools. */
	CHECK_EQ_STR(pbus_schema_param_name(s, 3), "limits.max");
	CHECK(pbus_schema_param_name(s, 6) == NULL);
	CHECK_EQ_STR(pbus_schema_param_extra(s, 3, "future_key"), "kept");
	CHECK_EQ_STR(pbus_schema_param_extra(s, 3, "hw-device"), "a b=c");
	CHECK(pbus_schema_param_extra(s, 3, "min") == NULL);
	CHECK(pbus_schema_param_extra(s, 3, "absent") == NULL);
	CHECK(pbus_schema_param_extra(s, 0, "unit") == NULL);
	CHECK(pbus_schema_param_extra(s, 9, "future_key") == NULL);
	pbus_schema_free(s);
}

/* The hash covers record lines only: comments and blank lines do not count. */
static void hash_ignores_comments(void)
{
	static const char a[] = "pbus-schema 1\ninterface x.Y 1.0\nparam a bool\n";
	static const char b[] = "# banner\n\npbus-schema 1\n# note\ninterface x.Y 1.0\nparam a bool\n";
	static const char c[] = "pbus-schema 1\ninterface x.Y 1.0\nparam a int8\n";

	CHECK(pbus_schema_hash_text(a, sizeof(a) - 1) == pbus_schema_hash_text(b, sizeof(b) - 1));
	CHECK(pbus_schema_hash_text(a, sizeof(a) - 1) != pbus_schema_hash_text(c, sizeof(c) - 1));
	/* FNV-1a-64 of the empty input is the offset basis. */
	CHECK(pbus_schema_hash_text("", 0) == UINT64_C(0xcbf29ce484222325));
	/* FNV-1a-64("a\n") computed by hand from the specification. */
	CHECK(pbus_schema_hash_text("a\n", 2) == UINT64_C(0x089bdc07b544e7b2));
}

struct bad_case {
	const char *text;
	const char *message; /* a substring the error must contain */
};

static void bad_inputs(void)
{
	static const struct bad_case cases[] = {
		{"", "empty schema"},
		{"pbus-schema 2\n", "bad.pbs:1: unsupported schema format version '2'"},
		{"hello\n", "expected 'pbus-schema 1'"},
		/* the Franca sources given instead of pbus-gen's output */
		{"// the demo\nimport \"psu.fidl\"\n", "bad.pbs:1: this is Franca IDL or a deployment (.fidl, .fdepl)"},
		{"package com.example.psu\n", "compile it with 'pbus-gen --schema OUT.pbs FILE'"},
		{"specification a.b.C {\n", "this is Franca IDL"},
		{"pbus-schema 1\nparam a bool\n", "bad.pbs:2: expected the interface record"},
		{"pbus-schema 1\ninterface x 1\n", "expected 'interface NAME MAJOR.MINOR'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool", "does not end with a newline"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a quaternion\n", "bad.pbs:3: param 'a': unknown type 'quaternion'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam 1a bool\n", "invalid parameter name '1a'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a..b bool\n", "invalid parameter name"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool\nparam a int8\n", "duplicate parameter 'a'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a string\n", "string needs size="},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a string size=0\n", "size '0' not in 1..65536"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a string size=70000\n", "not in 1..65536"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double[]\n", "an array needs count="},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double min=5 max=1\n", "min 5 above max 1"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double max=1 default=2\n", "default '2' outside its limits"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a int8 default=300\n", "default '300' outside its limits or its type's range"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a uint8 min=-1\n", "min '-1' is not a uint8"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double step=0\n", "step '0' is not a positive"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a string size=2 default=abc\n", "default longer than its size"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a enum\n", "enum type needs enum="},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a enum enum=Nope\n", "unknown enum 'Nope'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nenum E A=1 A=2\n", "duplicate label 'A'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nenum E A=x\n", "is not a 32-bit integer"},
		{"pbus-schema 1\ninterface x.Y 1.0\nenum E A=1\nenum E B=2\n", "duplicate enum 'E'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool flags=sticky\n", "unknown flag 'sticky'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool class=often\n", "unknown class 'often'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool unit=V unit=A\n", "key 'unit' given twice"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool unit=%4\n", "malformed percent-encoding"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool unit=%00\n", "malformed percent-encoding"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam  a bool\n", "two spaces in a row"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool \n", "leading or trailing space"},
		{"pbus-schema 1\r\ninterface x.Y 1.0\n", "carriage return"},
		{"pbus-schema 1\ninterface x.Y 1.0\nwidget a\n", "bad.pbs:3: unknown record 'widget'"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool\nenum E A=1\n", "enum 'E' after the first param record"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a string size=4 min=1\n", "min/max/step do not apply"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double count=3\n", "size=/count= do not apply"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a bool default=maybe\n", "default 'maybe' is not a bool"},
		{"pbus-schema 1\ninterface x.Y 1.0\nparam a double default=nan\n", "is not a double"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pbus_schema *s = NULL;
		char err[256] = "";
		int r = pbus_schema_parse(cases[i].text, strlen(cases[i].text), "bad.pbs", err,
					  sizeof(err), &s);

		if (r != -EINVAL || s != NULL || !strstr(err, cases[i].message) ||
		    strncmp(err, "bad.pbs:", 8) || strchr(err, '\n')) {
			CHECK_FAIL("case %zu: r=%d error '%s', expected one line containing '%s'", i, r,
			       err, cases[i].message);
		}
		pbus_schema_free(s);
	}
}

static void load_missing_file(void)
{
	struct pbus_schema *s = NULL;
	char err[256];

	CHECK_EQ(pbus_schema_load("/nonexistent/x.pbs", err, sizeof(err), &s), -ENOENT);
	CHECK(strstr(err, "/nonexistent/x.pbs") != NULL);
	CHECK(s == NULL);
	CHECK_EQ(pbus_schema_parse(NULL, 0, NULL, NULL, 0, NULL), -EINVAL);
}

int main(void)
{
	pbus_check_suite("unit/schema");
	RUN_CASE(parse_good);
	RUN_CASE(hash_ignores_comments);
	RUN_CASE(bad_inputs);
	RUN_CASE(load_missing_file);
	CHECK_EXIT();
}
