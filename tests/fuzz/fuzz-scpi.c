/* SPDX-License-Identifier: MIT */
/*
 * fuzz-scpi.c: the SCPI parser library (scpi/) under libFuzzer. The tree
 * is the one pbus-gen writes for tests/scpi/fixture.fdepl (run copies it to
 * BUILD/fuzz/scpi-fixture.scpi, the file named by $PBUS_FUZZ_SCPI_TREE or
 * that default beside the working directory). Each input is framed with
 * pbus_scpi_message_length() and every message parsed (with and without
 * its terminator), each result checked: the commands before an error are
 * resolved, arguments lie inside the message or the scratch buffer, an
 * error has its standard text. The input is also fed whole to the tree
 * loader. One thread.
 */
#include "scpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pbus_scpi_tree *tree;
static struct pbus_scpi_parser *parser;

static void setup(void)
{
	const char *path = getenv("PBUS_FUZZ_SCPI_TREE");
	FILE *f = fopen(path ? path : "scpi-fixture.scpi", "rb");
	if (!f)
		abort();
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	char error[256];
	if (pbus_scpi_tree_load(text, n, &tree, error, sizeof(error)) < 0) {
		fprintf(stderr, "fuzz-scpi: %s\n", error);
		abort();
	}
	if (pbus_scpi_parser_new(tree, 4096, 32, 64, &parser) < 0)
		abort();
}

static void parse(const uint8_t *data, size_t size)
{
	struct pbus_scpi_result r;
	int rc = pbus_scpi_parse(parser, (const char *)data, size, &r);
	if (rc != r.error)
		abort();
	if (r.error && (r.error > -100 || r.error < -400 || !r.detail[0] ||
			strcmp(pbus_scpi_error_text(r.error), "Unknown error") == 0))
		abort();
	for (size_t i = 0; i < r.command_count; i++) {
		const struct pbus_scpi_command *c = &r.commands[i];
		if (!c->common && !c->param)
			abort();
		if (c->param && c->element >= (int64_t)c->param->count && c->element != -1)
			abort();
		for (size_t k = 0; k < c->arg_count; k++) {
			const struct pbus_scpi_arg *a = &r.args[c->first_arg + k];
			if (a->kind == PBUS_SCPI_ARG_BLOCK || a->kind == PBUS_SCPI_ARG_CHARACTER) {
				const char *m = (const char *)data;
				if (a->length && (a->data < m || a->data + a->length > m + size))
					abort();
			}
			if (a->kind == PBUS_SCPI_ARG_STRING && a->length > size)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!tree)
		setup();
	/* Each message of the stream, as pbus-scpi will frame it. */
	size_t at = 0;
	while (at < size) {
		ssize_t n = pbus_scpi_message_length((const char *)data + at, size - at, 4096);
		if (n <= 0) {
			/* the rest, unterminated, in a copy of its exact size */
			size_t rest = size - at > 4096 ? 4096 : size - at;
			uint8_t *copy = malloc(rest ? rest : 1);
			memcpy(copy, data + at, rest);
			parse(copy, rest);
			free(copy);
			break;
		}
		uint8_t *copy = malloc((size_t)n);
		memcpy(copy, data + at, (size_t)n);
		parse(copy, (size_t)n);
		free(copy);
		at += (size_t)n;
	}
	struct pbus_scpi_tree *t = NULL;
	char error[128];
	if (pbus_scpi_tree_load((const char *)data, size, &t, error, sizeof(error)) == 0)
		pbus_scpi_tree_free(t);
	return 0;
}
