/* SPDX-License-Identifier: MIT */
/*
 * fuzz-rpc-json.c: libFuzzer target for the schema-driven (dynamic) codec
 * of method and broadcast arguments (parambus/rpc-json.h, docs/methods.md
 * §8), which turns bytes from a server (replies, broadcasts) into JSON for
 * `pbus call` and `pbus listen`. The schema is the RPC fixture's
 * (tests/gen/fixtures/rpc/alltypes-rpc.fdepl), compiled by tests/fuzz/run
 * into BUILD/fuzz/gen-rpc/alltypes-rpc.pbs and named by the environment
 * variable PBUS_FUZZ_RPC_SCHEMA.
 *
 * An input is one byte that picks what to decode, then the bytes:
 *  - one value of a type the fixture's arguments use: whatever decodes to
 *    JSON must encode back (pbus_rpc_json_encode_value()) and decode again
 *    to the same JSON (the bytes may differ only where JSON cannot carry
 *    them: a NaN's payload);
 *  - a method's reply or a broadcast's arguments: decoded, or refused with
 *    -EPROTO (or -ENOMEM) and a one-line reason.
 * Nothing may crash, leak or read out of bounds (ASan, UBSan, LSan).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc-json.h>
#include <parambus/rpc.h>
#include <parambus/schema.h>

#define TYPES_MAX 200

static struct pbus_schema *schema;
static const char *types[TYPES_MAX];
static size_t type_count;

static void add_type(const char *type)
{
	for (size_t i = 0; i < type_count; i++)
		if (!strcmp(types[i], type))
			return;
	if (type_count < TYPES_MAX)
		types[type_count++] = type;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("PBUS_FUZZ_RPC_SCHEMA");
	char error[256];

	(void)argc;
	(void)argv;
	if (!path || pbus_schema_load(path, error, sizeof error, &schema) < 0) {
		fprintf(stderr, "fuzz-rpc-json: cannot load the schema $PBUS_FUZZ_RPC_SCHEMA (%s): %s\n",
			path ? path : "unset", path ? error : "");
		exit(1);
	}
	/* Every argument type of every method and broadcast. */
	for (uint32_t m = 0; m < pbus_schema_method_count(schema); m++)
		for (int w = PBUS_SCHEMA_ARGS_IN; w <= PBUS_SCHEMA_ARGS_OUT; w++)
			for (uint32_t a = 0; a < pbus_schema_method_arg_count(schema, m, (enum pbus_schema_args)w);
			     a++) {
				const char *name, *type;

				if (pbus_schema_method_arg(schema, m, (enum pbus_schema_args)w, a, &name, &type) == 0)
					add_type(type);
			}
	for (uint32_t b = 0; b < pbus_schema_broadcast_count(schema); b++)
		for (uint32_t a = 0; a < pbus_schema_broadcast_arg_count(schema, b); a++) {
			const char *name, *type;

			if (pbus_schema_broadcast_arg(schema, b, a, &name, &type) == 0)
				add_type(type);
		}
	if (getenv("PBUS_FUZZ_LIST")) {
		/* The selectors, for the run script's seeds. */
		for (size_t i = 0; i < type_count; i++)
			printf("%zu type %s\n", i, types[i]);
		for (uint32_t m = 0; m < pbus_schema_method_count(schema); m++)
			printf("%zu reply %s\n", type_count + m, pbus_schema_method_name(schema, m));
		for (uint32_t b = 0; b < pbus_schema_broadcast_count(schema); b++)
			printf("%zu broadcast %s\n", type_count + pbus_schema_method_count(schema) + b,
			       pbus_schema_broadcast_name(schema, b));
		exit(0);
	}
	return 0;
}

/* A refusal must be -EPROTO or -ENOMEM, with a reason. */
static void refused(int r, const char *error, const char *what)
{
	if ((r != -EPROTO && r != -ENOMEM) || !error[0]) {
		fprintf(stderr, "fuzz-rpc-json: %s refused with %d and reason '%s'\n", what, r, error);
		abort();
	}
}

static void value(const char *type, const unsigned char *body, size_t n)
{
	char error[256] = "", *json = NULL, *again = NULL;
	struct pbus_rpc_buf buf;
	int r = pbus_rpc_json_decode_value(schema, type, body, n, 0, &json, error, sizeof error);

	if (r < 0) {
		refused(r, error, type);
		return;
	}
	pbus_rpc_buf_init(&buf);
	r = pbus_rpc_json_encode_value(schema, type, json, &buf, error, sizeof error);
	if (r < 0 || buf.error) {
		fprintf(stderr, "fuzz-rpc-json: %s decoded to %s, which does not encode: %d %s\n", type, json, r,
			error);
		abort();
	}
	if (buf.size != n || memcmp(buf.data, body, n)) {
		/* Only what JSON cannot carry may differ: the JSON must not. */
		r = pbus_rpc_json_decode_value(schema, type, buf.data, buf.size, 0, &again, error, sizeof error);
		if (r < 0 || strcmp(json, again)) {
			fprintf(stderr, "fuzz-rpc-json: %s: %s encodes to other bytes, which decode to %s\n", type,
				json, again ? again : error);
			abort();
		}
	}
	free(again);
	free(json);
	pbus_rpc_buf_release(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t methods = pbus_schema_method_count(schema), broadcasts = pbus_schema_broadcast_count(schema);
	char error[256] = "", *json = NULL;
	size_t sel;
	int r;

	if (size < 1)
		return 0;
	sel = data[0] % (type_count + methods + broadcasts);
	if (sel < type_count) {
		value(types[sel], data + 1, size - 1);
		return 0;
	}
	sel -= type_count;
	r = sel < methods
		    ? pbus_rpc_json_decode_reply(schema, (uint32_t)sel, data + 1, size - 1, PBUS_RPC_JSON_PRETTY,
						 &json, error, sizeof error)
		    : pbus_rpc_json_decode_broadcast(schema, (uint32_t)(sel - methods), data + 1, size - 1, 0,
						     &json, error, sizeof error);
	if (r < 0)
		refused(r, error, sel < methods ? "a reply" : "a broadcast");
	free(json);
	return 0;
}
