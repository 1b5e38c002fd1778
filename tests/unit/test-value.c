/* SPDX-License-Identifier: MIT */
/*
 * test-value.c: values in their stored encoding: parsing, checking and
 * formatting of every type, and the refusals with the right errno.
 */
#include <errno.h>
#include <math.h>

#include "../../lib/value-internal.h"
#include "pbus-check.h"

static const int32_t mode_values[] = {0, 1, 7};
static const char *const mode_labels[] = {"OFF", "ON", "TRIPPED"};

static struct pbus_typeinfo scalar(unsigned type)
{
	struct pbus_typeinfo ti = {.type = type};

	ti.value_size = ti.element_size = pbus_scalar_size(type);
	return ti;
}

/* Parse @text, format the result, expect @want back (NULL: same as text). */
static void round_trip(const struct pbus_typeinfo *ti, const char *text, const char *want)
{
	unsigned char buf[256];
	char out[512];
	size_t len = 0;
	int r = pbus_value_parse(ti, text, buf, sizeof(buf), &len);

	if (r < 0) {
		CHECK_FAIL("parse '%s' as %u: %d", text, ti->type, r);
		return;
	}
	r = pbus_value_format(ti, buf, len, out, sizeof(out));
	CHECK_EQ(r, (int)strlen(out));
	CHECK_EQ_STR(out, want ? want : text);
}

static int parse_error(const struct pbus_typeinfo *ti, const char *text)
{
	unsigned char buf[256];
	size_t len = 12345;
	int r = pbus_value_parse(ti, text, buf, sizeof(buf), &len);

	CHECK(r < 0 ? len == 12345 : 1); /* nothing reported on failure */
	return r;
}

static void scalars(void)
{
	struct pbus_typeinfo t;

	t = scalar(PBUS_TYPE_BOOL);
	round_trip(&t, "true", NULL);
	round_trip(&t, "0", "false");
	round_trip(&t, "ON", "true");
	CHECK_EQ(parse_error(&t, "maybe"), -EINVAL);
	t = scalar(PBUS_TYPE_INT8);
	round_trip(&t, "-128", NULL);
	round_trip(&t, "127", NULL);
	CHECK_EQ(parse_error(&t, "128"), -ERANGE);
	CHECK_EQ(parse_error(&t, "0x10"), -EINVAL);
	CHECK_EQ(parse_error(&t, "1.5"), -EINVAL);
	CHECK_EQ(parse_error(&t, ""), -EINVAL);
	CHECK_EQ(parse_error(&t, " 1"), -EINVAL);
	t = scalar(PBUS_TYPE_UINT16);
	round_trip(&t, "65535", NULL);
	CHECK_EQ(parse_error(&t, "-1"), -ERANGE);
	CHECK_EQ(parse_error(&t, "65536"), -ERANGE);
	t = scalar(PBUS_TYPE_INT64);
	round_trip(&t, "-9223372036854775808", NULL);
	CHECK_EQ(parse_error(&t, "9223372036854775808"), -ERANGE);
	t = scalar(PBUS_TYPE_UINT64);
	round_trip(&t, "18446744073709551615", NULL);
	t = scalar(PBUS_TYPE_DOUBLE);
	round_trip(&t, "3.3", NULL);
	round_trip(&t, "0.1", NULL);
	round_trip(&t, "1e-300", NULL);
	round_trip(&t, "-2.5", NULL);
	round_trip(&t, "0.30000000000000004", NULL);
	CHECK_EQ(parse_error(&t, "nan"), -EINVAL);
	CHECK_EQ(parse_error(&t, "inf"), -EINVAL);
	CHECK_EQ(parse_error(&t, "1e999"), -ERANGE);
	CHECK_EQ(parse_error(&t, "3V"), -EINVAL);
	t = scalar(PBUS_TYPE_FLOAT);
	round_trip(&t, "3.3", NULL);
	CHECK_EQ(parse_error(&t, "1e39"), -ERANGE);
}

static void limits(void)
{
	struct pbus_typeinfo t = scalar(PBUS_TYPE_DOUBLE);
	double nan_value = NAN;

	t.flags = PBUS_PARAM_HAS_MIN | PBUS_PARAM_HAS_MAX;
	t.min.d = 0;
	t.max.d = 30;
	round_trip(&t, "30", NULL);
	round_trip(&t, "0", NULL);
	CHECK_EQ(parse_error(&t, "30.0000001"), -ERANGE);
	CHECK_EQ(parse_error(&t, "-0.1"), -ERANGE);
	CHECK_EQ(pbus_value_check(&t, &nan_value, 8), -ERANGE);
	CHECK_EQ(pbus_value_check(&t, &nan_value, 4), -EINVAL);

	t = scalar(PBUS_TYPE_INT32);
	t.flags = PBUS_PARAM_HAS_MIN;
	t.min.i = -3;
	round_trip(&t, "-3", NULL);
	CHECK_EQ(parse_error(&t, "-4"), -ERANGE);
	t = scalar(PBUS_TYPE_UINT32);
	t.flags = PBUS_PARAM_HAS_MAX;
	t.max.u = 10;
	CHECK_EQ(parse_error(&t, "11"), -ERANGE);
}

static void enums(void)
{
	struct pbus_typeinfo t = scalar(PBUS_TYPE_ENUM);
	int32_t bad = 5, good = 7;

	t.enum_count = 3;
	t.enum_values = mode_values;
	t.enum_labels = mode_labels;
	round_trip(&t, "TRIPPED", NULL);
	round_trip(&t, "on", "ON");
	round_trip(&t, "7", "TRIPPED");
	CHECK_EQ(parse_error(&t, "5"), -ERANGE);
	CHECK_EQ(parse_error(&t, "BROKEN"), -EINVAL);
	CHECK_EQ(pbus_value_check(&t, &bad, 4), -ERANGE);
	CHECK_EQ(pbus_value_check(&t, &good, 4), 0);
}

static void strings_and_bytes(void)
{
	struct pbus_typeinfo s = {.type = PBUS_TYPE_STRING, .value_size = 8, .element_size = 1};
	struct pbus_typeinfo b = {.type = PBUS_TYPE_BYTES, .value_size = 3, .element_size = 1};

	round_trip(&s, "", NULL);
	round_trip(&s, "12345678", NULL);
	round_trip(&s, "\xc3\xa9t\xc3\xa9", NULL); /* "été" */
	CHECK_EQ(parse_error(&s, "123456789"), -EMSGSIZE);
	CHECK_EQ(parse_error(&s, "\xc3"), -EINVAL);             /* truncated sequence */
	CHECK_EQ(parse_error(&s, "\xc0\xaf"), -EINVAL);         /* overlong */
	CHECK_EQ(parse_error(&s, "\xed\xa0\x80"), -EINVAL);     /* surrogate */
	CHECK_EQ(pbus_value_check(&s, "a\0b", 3), -EINVAL);     /* NUL inside */
	round_trip(&b, "00ff7a", NULL);
	round_trip(&b, "ABCD", "abcd");
	round_trip(&b, "", NULL);
	CHECK_EQ(parse_error(&b, "0"), -EINVAL);
	CHECK_EQ(parse_error(&b, "zz"), -EINVAL);
	CHECK_EQ(parse_error(&b, "00112233"), -EMSGSIZE);
}

static void arrays(void)
{
	struct pbus_typeinfo a = {.type = PBUS_TYPE_INT16 | PBUS_TYPE_ARRAY_FLAG,
				  .value_size = 6, .element_size = 2};
	struct pbus_typeinfo d = {.type = PBUS_TYPE_DOUBLE | PBUS_TYPE_ARRAY_FLAG,
				  .value_size = 16, .element_size = 8};
	uint8_t odd[3] = {0};

	round_trip(&a, "1,-2,3", NULL);
	round_trip(&a, "", NULL);
	round_trip(&a, "7", NULL);
	CHECK_EQ(parse_error(&a, "1,2,3,4"), -EMSGSIZE);
	CHECK_EQ(parse_error(&a, "1,,2"), -EINVAL);
	CHECK_EQ(parse_error(&a, "1,2,"), -EINVAL);
	CHECK_EQ(parse_error(&a, "1,40000"), -ERANGE);
	CHECK_EQ(pbus_value_check(&a, odd, 3), -EINVAL);
	round_trip(&d, "0.5,1e10", "0.5,10000000000");
	round_trip(&d, "1e300,-0.25", "1e+300,-0.25");
	a.flags = PBUS_PARAM_HAS_MAX;
	a.max.i = 2;
	CHECK_EQ(parse_error(&a, "1,3"), -ERANGE);
}

static void format_truncates_like_snprintf(void)
{
	struct pbus_typeinfo s = {.type = PBUS_TYPE_STRING, .value_size = 16, .element_size = 1};
	char out[4];

	CHECK_EQ(pbus_value_format(&s, "abcdef", 6, out, sizeof(out)), 6);
	CHECK_EQ_STR(out, "abc");
	CHECK_EQ(pbus_value_format(&s, "abcdef", 6, NULL, 0), 6);
}

/* UTF-8 validation, with every refusal both within the first 8 bytes and
 * after a run of ASCII long enough for the 8-bytes-at-a-time path. */
static void utf8_validation(void)
{
	static const struct {
		const char *bytes;
		bool valid;
	} cases[] = {
		{"", true},
		{"a", true},
		{"abcdefgh", true},
		{"abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"\xc3\xa9t\xc3\xa9", true},                 /* U+00E9 */
		{"\xe2\x82\xac", true},                     /* U+20AC */
		{"\xf0\x9f\x98\x80", true},                 /* U+1F600 */
		{"\xf4\x8f\xbf\xbf", true},                 /* U+10FFFF, the last */
		{"\x80", false},                             /* a lone continuation */
		{"\xc0\xaf", false},                         /* overlong '/' */
		{"\xe0\x80\xaf", false},                     /* overlong, 3 bytes */
		{"\xed\xa0\x80", false},                     /* a surrogate */
		{"\xf4\x90\x80\x80", false},                 /* above U+10FFFF */
		{"\xc3", false},                             /* truncated */
		{"\xc3(", false},                            /* bad continuation */
		{"\xff", false},
	};
	char buf[64];

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t n = strlen(cases[k].bytes);

		CHECK(pbus_utf8_valid(cases[k].bytes, n) == cases[k].valid);
		/* The same after 1, 8 and 13 ASCII bytes, and followed by some. */
		for (size_t pre = 1; pre <= 13; pre += pre == 1 ? 7 : 5) {
			memset(buf, 'x', pre);
			memcpy(buf + pre, cases[k].bytes, n);
			memset(buf + pre + n, 'y', 9);
			CHECK(pbus_utf8_valid(buf, pre + n + 9) == cases[k].valid);
			CHECK(pbus_utf8_valid(buf, pre + n) == cases[k].valid);
		}
	}
	/* A NUL byte is refused wherever it is, the length says where the
	 * text ends. */
	memset(buf, 'x', sizeof(buf));
	for (size_t at = 0; at < 40; at++) {
		buf[at] = 0;
		CHECK(!pbus_utf8_valid(buf, 40));
		CHECK(pbus_utf8_valid(buf, at));
		buf[at] = 'x';
	}
	CHECK(pbus_utf8_valid(buf, sizeof(buf)));
}

int main(void)
{
	pbus_check_suite("unit/value");
	RUN_CASE(scalars);
	RUN_CASE(limits);
	RUN_CASE(enums);
	RUN_CASE(strings_and_bytes);
	RUN_CASE(utf8_validation);
	RUN_CASE(arrays);
	RUN_CASE(format_truncates_like_snprintf);
	CHECK_EXIT();
}
