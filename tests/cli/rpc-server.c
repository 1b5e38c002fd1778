/* SPDX-License-Identifier: MIT */
/*
 * rpc-server.c: a server of the RPC fixture (tests/gen/fixtures/rpc/
 * alltypes-rpc.fidl) for the command line's tests (tests/cli/
 * test_call.py): generated stubs that `pbus call` and `pbus listen` talk
 * to without any generated code of their own.
 *
 *     pbus-test-rpc-server ADDRESS
 *
 * Prints "ready" once registered, then serves until killed. Methods echo
 * or derive from their input; echo fires `changed`, nothing fires `tick`
 * and `empty`; describe:long is refused with -ERANGE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alltypes-rpc-server.h"
#include "alltypes-rpc.h"

static int do_nothing(struct ar_server_AllRpc *s, const struct pbus_caller *c)
{
	(void)c;
	ar_server_AllRpc_fire_tick(s, 42);
	ar_server_AllRpc_fire_empty(s);
	return 0;
}

static int do_reset(struct ar_server_AllRpc *s, const struct pbus_caller *c, enum ar_level level, const char *why)
{
	(void)s;
	(void)c;
	(void)level;
	(void)why;
	return 0;
}

static int do_describe_short(struct ar_server_AllRpc *s, const struct pbus_caller *c, int32_t id, char **t)
{
	char buf[64];

	(void)s;
	snprintf(buf, sizeof buf, "id %d", id);
	*t = pbus_rpc_arena_strdup(pbus_caller_arena(c), buf);
	return 0;
}

static int do_describe_long(struct ar_server_AllRpc *s, const struct pbus_caller *c, int32_t id, bool verbose,
			    char **t)
{
	(void)s;
	(void)c;
	(void)id;
	(void)verbose;
	(void)t;
	return -ERANGE;
}

static const struct ar_server_AllRpc_impl impl = {
	.ping = do_ping, .echo = do_echo, .basics = do_basics, .shapes = do_shapes, .lookup = do_lookup,
	.fixedOnly = do_fixed, .nothing = do_nothing, .reset = do_reset,
	.describe_short = do_describe_short, .describe_long = do_describe_long,
};

int main(int argc, char **argv)
{
	struct ar_server_AllRpc *server;
	struct pbus_loop *loop;
	struct pbus_rpc_options o = {0};

	if (argc != 2) {
		fprintf(stderr, "usage: pbus-test-rpc-server ADDRESS\n");
		return 2;
	}
	if (pbus_loop_new(&loop) < 0)
		return 1;
	o.loop = loop;
	if (ar_server_AllRpc_new_with_options(argv[1], &impl, NULL, &o, &server) < 0) {
		fprintf(stderr, "pbus-test-rpc-server: %s\n", pbus_rpc_last_error());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	pbus_loop_run(loop);
	ar_server_AllRpc_free(server);
	pbus_loop_free(loop);
	return 0;
}
