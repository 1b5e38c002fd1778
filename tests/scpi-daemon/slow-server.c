/* SPDX-License-Identifier: MIT */
/*
 * slow-server.c: the server of tests/scpi-daemon/slow.fidl for pbus-scpi's
 * method tests (tests/scpi-daemon/test_daemon.py): generated stubs whose
 * methods take the time they are told to (the server sleeps in its loop
 * thread, as a busy instrument would), so that what pbus-scpi does
 * meanwhile (serve others, hold *WAI, set *OPC late) can be measured.
 *
 *     pbus-test-slow-server INSTANCE SOCKET_DIR
 *
 * Serves local:INSTANCE:org.example.slow.Slow, prints "ready" once
 * registered, then serves until killed. `pause` writes the number of
 * pauses completed into the parameter `done` (through pbusd) before it
 * replies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <parambus/client.h>

#include "slow-rpc.h"

struct state {
	struct pbus_client *client;
	uint32_t done_index;
	uint32_t done;
};

static void sleep_ms(uint32_t ms)
{
	struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static int do_wait(struct slow_server_Slow *s, const struct pbus_caller *c, uint32_t ms, uint32_t *waited)
{
	(void)s;
	(void)c;
	sleep_ms(ms);
	*waited = ms;
	return 0;
}

static int do_pause(struct slow_server_Slow *s, const struct pbus_caller *c, uint32_t ms)
{
	struct state *st = slow_server_Slow_userdata(s);
	uint32_t done = st->done + 1;
	struct pbus_write w = {.index = st->done_index, .value = &done, .length = sizeof(done)};
	int r;

	(void)c;
	sleep_ms(ms);
	r = pbus_client_set(st->client, &w, 1);
	if (r < 0)
		return r;
	st->done = done;
	return 0;
}

static int do_echo(struct slow_server_Slow *s, const struct pbus_caller *c, bool b, int16_t i, float f, double d,
		   const char *text, struct pbus_rpc_bytes data, enum slow_level l, int64_t k, bool *b2, int16_t *i2,
		   float *f2, double *d2, char **s2, struct pbus_rpc_bytes *data2, enum slow_level *l2, int64_t *k2)
{
	struct pbus_rpc_arena *arena = pbus_caller_arena(c);
	uint8_t *copy = pbus_rpc_arena_alloc(arena, data.size ? data.size : 1);

	(void)s;
	*s2 = pbus_rpc_arena_strdup(arena, text);
	if (!*s2 || !copy)
		return -ENOMEM;
	memcpy(copy, data.data, data.size);
	*b2 = b;
	*i2 = i;
	*f2 = f;
	*d2 = d;
	*data2 = (struct pbus_rpc_bytes){copy, data.size};
	*l2 = l;
	*k2 = k;
	return 0;
}

static int do_jam(struct slow_server_Slow *s, const struct pbus_caller *c, bool jammed, enum slow_jam_error *error,
		  uint32_t *x)
{
	(void)s;
	(void)c;
	*error = jammed ? SLOW_JAM_ERROR_JAMMED : SLOW_JAM_ERROR_OK;
	*x = 7;
	return 0;
}

static int do_broken(struct slow_server_Slow *s, const struct pbus_caller *c, uint32_t *x)
{
	(void)s;
	(void)c;
	(void)x;
	return -EIO;
}

static int do_ping(struct slow_server_Slow *s, const struct pbus_caller *c)
{
	(void)s;
	(void)c;
	return 0;
}

static const struct slow_server_Slow_impl impl = {
	.ping = do_ping,
	.wait = do_wait,
	.pause = do_pause,
	.echo = do_echo,
	.jam = do_jam,
	.broken = do_broken,
};

int main(int argc, char **argv)
{
	struct state st = {0};
	struct pbus_client_options co = {0};
	struct pbus_rpc_options o = {0};
	struct slow_server_Slow *server;
	struct pbus_loop *loop;
	char address[PBUS_RPC_ADDRESS_MAX + 1];
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: pbus-test-slow-server INSTANCE SOCKET_DIR\n");
		return 2;
	}
	co.socket_dir = argv[2];
	co.name = "slow-server";
	r = pbus_client_connect(argv[1], &co, &st.client);
	if (r < 0 || pbus_client_find(st.client, "done", &st.done_index) < 0) {
		fprintf(stderr, "slow-server: instance %s: %s\n", argv[1], pbus_strerror(r < 0 ? r : -ENOENT));
		return 1;
	}
	if (pbus_loop_new(&loop) < 0)
		return 1;
	o.loop = loop;
	o.socket_dir = argv[2];
	snprintf(address, sizeof(address), "local:%s:%s", argv[1], slow_Slow_interface.name);
	r = slow_server_Slow_new_with_options(address, &impl, &st, &o, &server);
	if (r < 0) {
		fprintf(stderr, "slow-server: %s: %s\n", address, pbus_rpc_last_error());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	pbus_loop_run(loop);
	slow_server_Slow_free(server);
	pbus_loop_free(loop);
	pbus_client_close(st.client);
	return 0;
}
