/* SPDX-License-Identifier: MIT */
/*
 * test-rpc-json.c: the dynamic codec (parambus/rpc-json.h) against the
 * generated one, and the schema's type, method and broadcast records.
 *
 *     test-rpc-json SCHEMA VECTORS
 *
 * SCHEMA is pbus-gen --schema of the RPC fixture (tests/gen/fixtures/rpc/
 * alltypes-rpc.fdepl); VECTORS is tests/vectors/rpc-args.txt, whose good
 * bytes the generated encoder writes (tests/gen/c/test-rpc-codec.c). Each
 * good line must decode to JSON and that JSON encode back to exactly the
 * same bytes; every truncation and every bad line must be refused. Then
 * JSON of known values, malformed JSON and wrong types, with the messages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc-json.h>
#include <parambus/schema.h>

#include "pbus-check.h"

static struct pbus_schema *schema;
static const char *vectors_path;

#define P "org.example.rpc.AllRpc."

/* The vectors' type names (pbus-gen's C stems with --prefix ar) as the
 * schema names the types. */
static const struct {
	const char *stem, *type;
} types[] = {
	{"basics", P "Basics"},       {"ranges", P "Ranges"},
	{"level", P "Level"},         {"more_level", P "MoreLevel"},
	{"shared_color", "org.example.shared.Shared.Color"},
	{"shared_point", "org.example.shared.Shared.Point"},
	{"base3_d", P "Base3D"},      {"empty", P "Empty"},
	{"shape", P "Shape"},         {"circle", P "Circle"},
	{"value", P "Value"},         {"more_value", P "MoreValue"},
	{"names", P "Names"},         {"dictionary", P "Dictionary"},
	{"nested", P "Nested"},       {"tree", P "Tree"},
	{"matrix", P "Matrix"},       {"everything", P "Everything"},
	{"array_integer_m5_5", "integer:-5:5[]"},
};

static const char *type_of(const char *stem)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].stem, stem))
			return types[i].type;
	return NULL;
}

static size_t unhex(const char *hex, unsigned char *out)
{
	size_t n = 0;

	if (!strcmp(hex, "-"))
		return 0;
	for (; hex[0] && hex[1]; hex += 2) {
		unsigned v;

		sscanf(hex, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

static void vectors(void)
{
	FILE *f = fopen(vectors_path, "r");
	char line[16384];
	unsigned good = 0, bad = 0;

	REQUIRE(f);
	while (fgets(line, sizeof(line), f)) {
		char kind[8], stem[64], name[64], *hex = malloc(sizeof(line)), *json = NULL, err[512] = "";
		unsigned char *bytes = malloc(sizeof(line));
		const char *type;
		size_t n;
		int r;

		if (sscanf(line, "%7s %63s %63s %16383s", kind, stem, name, hex) != 4 ||
		    (strcmp(kind, "good") && strcmp(kind, "bad"))) {
			free(hex);
			free(bytes);
			continue;
		}
		type = type_of(stem);
		CHECK_MSG(type, "vector type '%s' not mapped", stem);
		n = unhex(hex, bytes);
		if (type && !strcmp(kind, "good")) {
			struct pbus_rpc_buf buf;

			good++;
			r = pbus_rpc_json_decode_value(schema, type, bytes, n, 0, &json, err, sizeof(err));
			CHECK_MSG(r == 0, "good %s %s: decode: %d %s", stem, name, r, err);
			if (r == 0) {
				pbus_rpc_buf_init(&buf);
				r = pbus_rpc_json_encode_value(schema, type, json, &buf, err, sizeof(err));
				CHECK_MSG(r == 0, "good %s %s: encode %s: %s", stem, name, json, err);
				if (r == 0 && (buf.size != n || memcmp(buf.data, bytes, n))) {
					size_t at = 0;

					while (at < n && at < buf.size && buf.data[at] == bytes[at])
						at++;
					CHECK_FAIL("good %s %s: encodes to other bytes (%zu, expected %zu; "
						   "first difference at %zu): %s", stem, name, buf.size, n, at, json);
				}
				pbus_rpc_buf_release(&buf);
				free(json);
				/* pretty output is the same JSON */
				json = NULL;
				CHECK(pbus_rpc_json_decode_value(schema, type, bytes, n, PBUS_RPC_JSON_PRETTY, &json,
								 NULL, 0) == 0);
				pbus_rpc_buf_init(&buf);
				CHECK(json && pbus_rpc_json_encode_value(schema, type, json, &buf, NULL, 0) == 0 &&
				      buf.size == n && !memcmp(buf.data, bytes, n));
				pbus_rpc_buf_release(&buf);
				free(json);
				json = NULL;
			}
			for (size_t cut = 0; cut < n; cut++) {
				r = pbus_rpc_json_decode_value(schema, type, bytes, cut, 0, &json, err, sizeof(err));
				CHECK_MSG(r == -EPROTO, "good %s %s cut to %zu: %d", stem, name, cut, r);
				if (r == 0) {
					free(json);
					json = NULL;
				}
			}
		} else if (type) {
			bad++;
			r = pbus_rpc_json_decode_value(schema, type, bytes, n, 0, &json, err, sizeof(err));
			CHECK_MSG(r == -EPROTO, "bad %s %s: %d (%s)", stem, name, r, r == 0 ? json : err);
			if (r == 0)
				free(json);
		}
		free(hex);
		free(bytes);
	}
	fclose(f);
	CHECK_MSG(good >= 25 && bad >= 15, "only %u good and %u bad vectors", good, bad);
}

/* JSON of a value and its bytes in hex, both ways. */
static void check_both(const char *type, const char *json, const char *hex)
{
	unsigned char bytes[512];
	size_t n = unhex(hex, bytes);
	struct pbus_rpc_buf buf;
	char err[512] = "", *out = NULL;
	int r;

	pbus_rpc_buf_init(&buf);
	r = pbus_rpc_json_encode_value(schema, type, json, &buf, err, sizeof(err));
	CHECK_MSG(r == 0 && buf.size == n && !memcmp(buf.data, bytes, n), "%s %s: %d %s", type, json, r, err);
	pbus_rpc_buf_release(&buf);
	r = pbus_rpc_json_decode_value(schema, type, bytes, n, 0, &out, err, sizeof(err));
	CHECK_MSG(r == 0 && out && !strcmp(out, json), "%s: decoded %s, expected %s (%s)", type, out ? out : "",
		  json, err);
	free(out);
}

static void known_values(void)
{
	check_both(P "Level", "\"LOW\"", "fdffffff");
	check_both("org.example.shared.Shared.Point", "{\"x\":1,\"y\":-2}", "01000000feffffff");
	check_both("uint64", "\"18446744073709551615\"", "ffffffffffffffff");
	check_both("uint64", "9223372036854775807", "ffffffffffffff7f");
	check_both("int64", "-9223372036854775808", "0000000000000080");
	check_both("double", "0.1", "9a9999999999b93f");
	check_both("float", "0.1", "cdcccc3d");
	check_both("double", "\"nan\"", "000000000000f87f");
	check_both("double", "\"-inf\"", "000000000000f0ff");
	check_both("double", "-0.0", "0000000000000080");
	check_both("bytes", "\"00ff7f\"", "0300000000ff7f");
	check_both("string", "\"h\xc3\xa9\\n\\\"\\u0001\"", "0600000068c3a90a2201");
	check_both(P "Shape", "{\"$type\":\"" P "Circle\",\"name\":\"c\",\"radius\":2.5}",
		   "76639c0801000000630000000000000440");
	check_both(P "MoreValue", "{\"flag\":true}", "0300000001");
	check_both(P "Dictionary", "[{\"key\":\"a\",\"value\":-1}]", "010000000100000061ffffffff");
	check_both("integer:-5:5[]", "[-5,5]", "02000000fbffffffffffffff0500000000000000");

	/* accepted on input, written otherwise */
	struct pbus_rpc_buf buf;

	pbus_rpc_buf_init(&buf);
	CHECK(pbus_rpc_json_encode_value(schema, P "Level", "-3", &buf, NULL, 0) == 0 && buf.size == 4);
	CHECK(pbus_rpc_json_encode_value(schema, "int32", "\"-7\"", &buf, NULL, 0) == 0 && buf.size == 8);
	CHECK(pbus_rpc_json_encode_value(schema, P "Shape", "{\"name\":\"p\"}", &buf, NULL, 0) == 0);
	pbus_rpc_buf_release(&buf);
}

static void check_refused(const char *what, uint32_t method, const char *json, const char *message)
{
	struct pbus_rpc_buf buf;
	char err[512] = "";
	int r;

	pbus_rpc_buf_init(&buf);
	r = pbus_rpc_json_encode_call(schema, method, json, &buf, err, sizeof(err));
	CHECK_MSG(r == -EINVAL, "%s: %s: %d, expected -EINVAL", what, json, r);
	CHECK_MSG(strstr(err, message) != NULL, "%s: message '%s', expected it to hold '%s'", what, err, message);
	CHECK_MSG(!strchr(err, '\n'), "%s: message on more than one line", what);
	CHECK_EQ(buf.size, 0);
	pbus_rpc_buf_release(&buf);
}

static void refusals(void)
{
	int basics = pbus_schema_method_find(schema, "basics"), shapes = pbus_schema_method_find(schema, "shapes");
	int lookup = pbus_schema_method_find(schema, "lookup");
	const char *good = "{\"b\":true,\"i8\":-1,\"u8\":255,\"i16\":1,\"u16\":65535,\"i32\":1,\"u32\":1,"
			   "\"i64\":1,\"u64\":1,\"f32\":1.5,\"f64\":2,\"text\":\"x\",\"blob\":\"\",\"small\":5,"
			   "\"level\":\"HIGH\"}";
	char json[1024];
	struct pbus_rpc_buf buf;

	REQUIRE(basics >= 0 && shapes >= 0 && lookup >= 0);
	pbus_rpc_buf_init(&buf);
	CHECK(pbus_rpc_json_encode_call(schema, (uint32_t)basics, good, &buf, NULL, 0) == 0);
	pbus_rpc_buf_release(&buf);

	check_refused("not JSON", (uint32_t)basics, "{\"b\":", "not JSON");
	check_refused("not an object", (uint32_t)basics, "[1]", "must be a JSON object");
	check_refused("missing", (uint32_t)basics, "{}", "argument 'b' (Boolean) missing");
	snprintf(json, sizeof(json), "%.*s,\"zz\":1}", (int)strlen(good) - 1, good);
	check_refused("unknown argument", (uint32_t)basics, json, "method 'basics' has no argument 'zz'");
	strcpy(json, good);
	memcpy(strstr(json, "65535"), "65536", 5);
	check_refused("out of range", (uint32_t)basics, json, "argument 'u16': 65536 is outside UInt16");
	strcpy(json, good);
	memcpy(strstr(json, "\"small\":5"), "\"small\":6", 9);
	check_refused("Integer range", (uint32_t)basics, json, "argument 'small': 6 is outside Integer(-5, 5)");
	strcpy(json, good);
	memcpy(strstr(json, "true"), "1   ", 4);
	check_refused("wrong type", (uint32_t)basics, json, "argument 'b': expected Boolean, not an integer");
	strcpy(json, good);
	memcpy(strstr(json, "HIGH"), "HUGE", 4);
	check_refused("enum label", (uint32_t)basics, json, "'HUGE' is not an enumerator of " P "Level");
	check_refused("poly $type", (uint32_t)shapes, "{\"s\":{\"$type\":\"x.Y\",\"name\":\"a\"},\"many\":[]}",
		      "argument 's': '$type' x.Y is not " P "Shape or a struct derived from it");
	check_refused("field missing", (uint32_t)shapes,
		      "{\"s\":{\"$type\":\"" P "Circle\",\"name\":\"a\"},\"many\":[]}",
		      "argument 's': field 'radius' of " P "Circle missing");
	check_refused("array element", (uint32_t)shapes, "{\"s\":{\"name\":\"a\"},\"many\":[{\"name\":1}]}",
		      "argument 'many': element 0: field 'name': expected String, not an integer");
	check_refused("not an enum string", (uint32_t)lookup, "{\"key\":null}", "argument 'key': expected String, not null");

	/* a reply: its error enumeration first, then the out-arguments */
	{
		unsigned char body[] = {3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
		char *out = NULL, err[256] = "";
		int r = pbus_rpc_json_decode_reply(schema, (uint32_t)lookup, body, sizeof(body), 0, &out, err,
						   sizeof(err));

		CHECK_MSG(r == 0 && out && !strcmp(out, "{\"error\":\"NOT_FOUND\",\"found\":{\"number\":1},\"dict\":[]}"),
			  "reply: %d %s %s", r, out ? out : "", err);
		free(out);
		out = NULL;
		r = pbus_rpc_json_decode_reply(schema, (uint32_t)lookup, body, sizeof(body) - 1, 0, &out, err,
					       sizeof(err));
		CHECK_MSG(r == -EPROTO && strstr(err, "argument 'dict'"), "cut reply: %d %s", r, err);
		free(out);
	}
}

static void records(void)
{
	const char *name, *type;
	uint32_t major = 0, minor = 0;
	int m = pbus_schema_method_find(schema, "describe:long"), b = pbus_schema_broadcast_find(schema, "alarm");

	CHECK_EQ_STR(pbus_schema_interface(schema, &major, &minor), "org.example.rpc.AllRpc");
	CHECK(major == 2 && minor == 5);
	CHECK_EQ(pbus_schema_method_count(schema), 10);
	CHECK_EQ(pbus_schema_broadcast_count(schema), 4);
	CHECK_EQ_STR(pbus_schema_method_name(schema, 0), "ping");
	CHECK_EQ_STR(pbus_schema_method_group(schema, 0), "wheel");
	CHECK_EQ(m, 9);
	CHECK_EQ(pbus_schema_method_arg_count(schema, 9, PBUS_SCHEMA_ARGS_IN), 2);
	CHECK(pbus_schema_method_arg(schema, 9, PBUS_SCHEMA_ARGS_IN, 1, &name, &type) == 0 &&
	      !strcmp(name, "verbose") && !strcmp(type, "bool"));
	CHECK(pbus_schema_method_arg(schema, 9, PBUS_SCHEMA_ARGS_IN, 2, &name, &type) == -ENOENT);
	CHECK_EQ_STR(pbus_schema_method_error(schema, 4), P "lookupError");
	CHECK(pbus_schema_method_fire_and_forget(schema, (uint32_t)pbus_schema_method_find(schema, "reset")));
	CHECK_EQ(b, 2);
	CHECK(pbus_schema_broadcast_selective(schema, 2));
	CHECK(pbus_schema_broadcast_arg(schema, 2, 2, &name, &type) == 0 && !strcmp(name, "path") &&
	      !strcmp(type, P "Path"));
	CHECK_EQ(pbus_schema_method_find(schema, "nope"), -ENOENT);
}

/* Malformed records: refused with one line naming the line. */
static void bad_records(void)
{
	static const struct {
		const char *record, *message;
	} cases[] = {
		{"type a.B struct x:int32 y:c.D\n", "type 'c.D' has no type record"},
		{"type a.B enum i32 A=1 A=2\n", "duplicate label 'A'"},
		{"type a.B enum i32 A=5000000000\n", "need i64"},
		{"type a.B struct tag=1 x:int32\n", "is not its name's FNV-1a"},
		{"type a.B union\n", "a union needs a member"},
		{"type a.B struct x:a.B\n", "contains itself by value"},
		{"type a.B struct x:integer:5:1\n", "lower bound above upper bound"},
		{"type a.B struct x:float32\n", "'float32' is not a type"},
		{"method m in=a:int32,a:int32\n", "given twice"},
		{"method m out=a:bool flags=fireAndForget\n", "fireAndForget with out-arguments"},
		{"broadcast b\nmethod m\n", "method record after a broadcast record"},
		{"method m error=int32\n", "is not an enumeration"},
		{"method m\ntype a.B struct\n", "type record after a method"},
		{"method m:\n", "is not NAME or NAME:SELECTOR"},
		{"type a.B array\n", "expected 'array ELEMENT'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512], err[256] = "";
		struct pbus_schema *s = NULL;
		int r;

		snprintf(text, sizeof(text), "pbus-schema 1\ninterface a.I 1.0\n%s", cases[i].record);
		r = pbus_schema_parse(text, strlen(text), "t.pbs", err, sizeof(err), &s);
		CHECK_MSG(r == -EINVAL && strstr(err, cases[i].message) && !strchr(err, '\n'),
			  "%s: %d '%s', expected '%s'", cases[i].record, r, err, cases[i].message);
		pbus_schema_free(s);
	}
}

int main(int argc, char **argv)
{
	char err[512] = "";

	if (argc != 3) {
		fprintf(stderr, "usage: test-rpc-json SCHEMA VECTORS\n");
		return 2;
	}
	if (pbus_schema_load(argv[1], err, sizeof(err), &schema) < 0) {
		fprintf(stderr, "test-rpc-json: %s\n", err);
		return 1;
	}
	vectors_path = argv[2];
	RUN_CASE(records);
	RUN_CASE(vectors);
	RUN_CASE(known_values);
	RUN_CASE(refusals);
	RUN_CASE(bad_records);
	pbus_schema_free(schema);
	CHECK_EXIT();
}
