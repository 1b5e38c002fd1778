/* SPDX-License-Identifier: MIT */
/*
 * test-generated.c: the proxies and stubs pbus-gen generates, on the RPC
 * fixture that uses every Franca type (tests/gen/fixtures/rpc/
 * alltypes-rpc.fidl, prefix ar), over the socket to a server process and
 * in-process, against a real pbusd as the registry.
 *
 *     test-generated PBUSD SCHEMA
 *
 * Every method is called with values of every type (alltypes-rpc-values.h)
 * and what comes back is compared with the generated ar_equal_*; async
 * calls, fireAndForget, the Franca error enumerations, broadcasts (a
 * selective one included) and the in-process path that encodes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alltypes-rpc-server.h"
#include "alltypes-rpc-values.h"
#include "alltypes-rpc.h"
#include "pbus-check.h"
#include "pbus-testd.h"
#include "rpc-test.h"

#define ADDRESS "local:rpcgen:org.example.rpc.AllRpc"
#define WATCHDOG_S 180

static struct pbus_testd registry;
static struct pbus_loop *client_loop;

/* --- the server ------------------------------------------------------------------- */

struct state {
	atomic_int resets;
	atomic_int last_reset_level;
};

static int do_nothing(struct ar_server_AllRpc *s, const struct pbus_caller *c)
{
	uint64_t me = pbus_caller_id(c);
	struct ar_path path = {0};

	/* The selective alarm to the caller only, and the empty broadcast. */
	ar_server_AllRpc_fire_alarm_selective(s, &me, 1, "for you", shape_of(1), &path);
	ar_server_AllRpc_fire_empty(s);
	return 0;
}

static int do_reset(struct ar_server_AllRpc *s, const struct pbus_caller *c, enum ar_level level, const char *why)
{
	struct state *st = ar_server_AllRpc_userdata(s);

	(void)c;
	(void)why;
	atomic_store(&st->last_reset_level, (int)level);
	atomic_fetch_add(&st->resets, 1);
	return 0;
}

static int do_describe_short(struct ar_server_AllRpc *s, const struct pbus_caller *c, int32_t id, char **t)
{
	struct state *st = ar_server_AllRpc_userdata(s);
	char buf[64];

	/* Also tells how many resets came: fireAndForget calls are served in order. */
	snprintf(buf, sizeof buf, "id %d resets %d level %d", id, atomic_load(&st->resets),
		 atomic_load(&st->last_reset_level));
	*t = pbus_rpc_arena_strdup(pbus_caller_arena(c), buf);
	return 0;
}

static const struct ar_server_AllRpc_impl impl = {
	.ping = do_ping, .echo = do_echo, .basics = do_basics, .shapes = do_shapes, .lookup = do_lookup,
	.fixedOnly = do_fixed, .nothing = do_nothing, .reset = do_reset,
	.describe_short = do_describe_short, /* describe_long left out: -ENOSYS */
};

static bool serve_all(struct pbus_loop *loop, const void *arg)
{
	static struct state st;
	struct ar_server_AllRpc *server;
	struct pbus_rpc_options o = {.loop = loop, .socket_dir = registry.socket_dir};

	(void)arg;
	return ar_server_AllRpc_new_with_options(ADDRESS, &impl, &st, &o, &server) == 0;
}

static pid_t spawn_server(void)
{
	return rpc_test_spawn(serve_all, NULL);
}

/* --- the client ---------------------------------------------------------------------- */

struct received {
	atomic_int changed, alarms, empties;
	atomic_bool changed_equal;
	char alarm_text[64];
};

static struct ar_everything sent; /* what the changed broadcast should carry */

static void on_changed(struct ar_client_AllRpc *c, const struct ar_everything *e, enum ar_level level, void *u)
{
	struct received *r = u;

	(void)c;
	atomic_store(&r->changed_equal, ar_equal_everything(e, &sent) && level == AR_LEVEL_HIGH);
	atomic_fetch_add(&r->changed, 1);
}

static void on_alarm(struct ar_client_AllRpc *c, const char *text_in, const struct ar_shape *where,
		     const struct ar_path *path, void *u)
{
	struct received *r = u;

	(void)c;
	(void)where;
	(void)path;
	snprintf(r->alarm_text, sizeof r->alarm_text, "%s", text_in);
	atomic_fetch_add(&r->alarms, 1);
}

static void on_empty(struct ar_client_AllRpc *c, void *u)
{
	struct received *r = u;

	(void)c;
	atomic_fetch_add(&r->empties, 1);
}

static int new_client(struct ar_client_AllRpc **c, bool inprocess)
{
	struct pbus_rpc_options o = {.loop = client_loop, .socket_dir = registry.socket_dir,
				     .no_inprocess = !inprocess};

	return ar_client_AllRpc_new(ADDRESS, &o, c);
}

/* Every method, with values of every type: the same for both transports
 * (but in-process nothing is encoded, so what only the encoding checks is
 * checked over the socket only). */
static void every_method(struct ar_client_AllRpc *c, bool socket)
{
	struct pbus_rpc_arena *a = pbus_rpc_arena_new();
	struct ar_everything e2;
	enum ar_failure failure = AR_FAILURE_OUT_OF_RANGE;
	enum ar_lookup_error lerr = AR_LOOKUP_ERROR_BUSY;
	struct ar_more_value found;
	struct ar_dictionary dict;
	uint32_t seq2 = 0;

	REQUIRE(a != NULL);
	CHECK_EQ(ar_AllRpc_ping(c, 41, &seq2), 0);
	CHECK_EQ(seq2, 42);

	/* Every type in, every type out. */
	memset(&e2, 0, sizeof e2);
	CHECK_EQ(ar_AllRpc_echo(c, &sent, &failure, &e2, a), 0);
	CHECK_EQ(failure, AR_FAILURE_NONE);
	CHECK_MSG(ar_equal_everything(&sent, &e2), "echo: what came back differs from what was sent");
	/* A Franca error enumeration is a typed result, not a transport error. */
	{
		struct ar_everything busy = sent;

		busy.basics.i32 = 13;
		CHECK_EQ(ar_AllRpc_echo(c, &busy, &failure, &e2, a), 0);
		CHECK_EQ(failure, AR_FAILURE_BUSY);
	}

	/* Basic types one by one. */
	{
		static const uint8_t bytes[] = {1, 2, 0, 255};
		bool ob = true;
		int64_t oi64 = 0, osmall = 0;
		double of64 = 0;
		char *otext = NULL;
		struct pbus_rpc_bytes oblob = {0};
		enum ar_level olevel = AR_LEVEL_MID;

		CHECK_EQ(ar_AllRpc_basics(c, false, -1, 2, -3, 4, -5, 6, -7, 0x108, 0.5f, 1.25, "grüße",
					  (struct pbus_rpc_bytes){bytes, sizeof bytes}, -5, AR_LEVEL_HIGH, &ob,
					  &oi64, &of64, &otext, &oblob, &osmall, &olevel, a),
			 0);
		CHECK(ob == true);
		CHECK_EQ(oi64, -7 - 1 + 2 - 3 + 4 - 5 + 6 + 8);
		CHECK(of64 == 1.75);
		CHECK_EQ_STR(otext, "grüße!");
		CHECK(oblob.size == sizeof bytes && !memcmp(oblob.data, bytes, sizeof bytes));
		CHECK_EQ(osmall, 5);
		CHECK_EQ(olevel, AR_LEVEL_HIGH);
		/* Values without an encoding are refused before anything is sent. */
		if (socket)
			CHECK_EQ(ar_AllRpc_basics(c, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", (struct pbus_rpc_bytes){0},
					  6 /* outside Integer(-5, 5) */, AR_LEVEL_MID, &ob, &oi64, &of64, &otext,
					  &oblob, &osmall, &olevel, a),
			 -EINVAL);
		if (socket)
			CHECK_EQ(ar_AllRpc_basics(c, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "\xc3", (struct pbus_rpc_bytes){0},
					  0, AR_LEVEL_MID, &ob, &oi64, &of64, &otext, &oblob, &osmall, &olevel, a),
			 -EINVAL);
	}

	/* Polymorphic structs: the concrete type travels. */
	{
		struct ar_array_shape many = {0};
		struct ar_shape *biggest = NULL;

		many.count = 2;
		many.items = pbus_rpc_arena_alloc(values_arena, 2 * sizeof *many.items);
		many.items[0] = shape_of(1);
		many.items[1] = shape_of(3);
		CHECK_EQ(ar_AllRpc_shapes(c, shape_of(2), &many, &biggest, a), 0);
		CHECK(biggest != NULL && biggest->type_tag == AR_SQUARE_TYPE_TAG);
		CHECK(biggest && ar_equal_shape(biggest, many.items[1]));
	}

	/* An error enumeration that extends another. */
	CHECK_EQ(ar_AllRpc_lookup(c, "missing", &lerr, &found, &dict, a), 0);
	CHECK_EQ(lerr, AR_LOOKUP_ERROR_NOT_FOUND);
	CHECK_EQ(ar_AllRpc_lookup(c, "key", &lerr, &found, &dict, a), 0);
	CHECK_EQ(lerr, AR_LOOKUP_ERROR_NONE);
	CHECK(found.which == AR_MORE_VALUE_WORD && !strcmp(found.u.word, "key"));
	CHECK(dict.count == 1 && dict.entries[0].value == 3);

	/* Fixed-size arguments: no arena. */
	{
		struct ar_shared_point p = {7, 8}, r2 = {0};
		struct ar_base3_d q = {0, 0, 3};
		enum ar_level l = AR_LEVEL_MID;

		CHECK_EQ(ar_AllRpc_fixedOnly(c, &p, &q, &r2, &l), 0);
		CHECK(r2.x == 10 && r2.y == 8 && l == AR_LEVEL_LOW);
	}

	/* fireAndForget, then a call that tells what the server saw. */
	{
		char *t = NULL;

		for (int i = 0; i < 10; i++)
			CHECK_EQ(ar_AllRpc_reset(c, AR_LEVEL_LOW, "why"), 0);
		CHECK_EQ(ar_AllRpc_describe_short(c, 5, &t, a), 0);
		CHECK_MSG(t && strstr(t, "id 5 resets ") && strstr(t, "level -3"), "describe: %s", t ? t : "");
	}
	/* A method the server did not implement. */
	{
		char *t = NULL;

		CHECK_EQ(ar_AllRpc_describe_long(c, 1, true, &t, a), -ENOSYS);
	}
	pbus_rpc_arena_free(a);
}

struct async_result {
	atomic_int done;
	int result;
	enum ar_failure error;
	bool equal;
};

static void echo_done(struct ar_client_AllRpc *c, int result, enum ar_failure error, const struct ar_everything *e2,
		      void *userdata)
{
	struct async_result *r = userdata;

	(void)c;
	r->result = result;
	r->error = error;
	r->equal = result == 0 && ar_equal_everything(e2, &sent);
	atomic_store(&r->done, 1);
}

static void over_the_socket(void)
{
	pid_t server = spawn_server();
	struct ar_client_AllRpc *c = NULL;
	struct received rec = {0};
	struct async_result ar = {0};

	REQUIRE(server > 0);
	REQUIRE_EQ(new_client(&c, false), 0);
	CHECK(ar_client_AllRpc_available(c));
	every_method(c, true);

	/* Async: the completion in the loop thread. */
	CHECK_EQ(ar_AllRpc_echo_async(c, &sent, echo_done, &ar), 0);
	CHECK(WAIT_FOR(atomic_load(&ar.done)));
	CHECK_EQ(ar.result, 0);
	CHECK(ar.equal);

	/* Broadcasts: every type, a selective one, an empty one. */
	CHECK_EQ(ar_client_AllRpc_subscribe_changed(c, on_changed, &rec), 0);
	CHECK_EQ(ar_client_AllRpc_subscribe_alarm(c, on_alarm, &rec), 0);
	CHECK_EQ(ar_client_AllRpc_subscribe_empty(c, on_empty, &rec), 0);
	{
		struct pbus_rpc_arena *a = pbus_rpc_arena_new();
		struct ar_everything e2;
		enum ar_failure failure;

		CHECK_EQ(ar_AllRpc_echo(c, &sent, &failure, &e2, a), 0);
		pbus_rpc_arena_free(a);
	}
	CHECK(WAIT_FOR(atomic_load(&rec.changed) == 1));
	CHECK(atomic_load(&rec.changed_equal));
	CHECK_EQ(ar_AllRpc_nothing(c), 0);
	CHECK(WAIT_FOR(atomic_load(&rec.alarms) == 1 && atomic_load(&rec.empties) == 1));
	CHECK_EQ_STR(rec.alarm_text, "for you");
	ar_client_AllRpc_free(c);
	rpc_test_kill(server);
}

static void in_process(void)
{
	static struct state st;
	struct pbus_rpc_options o = {.loop = client_loop, .socket_dir = registry.socket_dir};
	struct ar_server_AllRpc *server = NULL;
	struct ar_client_AllRpc *c = NULL;
	struct received rec = {0};
	struct async_result ar = {0};

	REQUIRE_EQ(ar_server_AllRpc_new_with_options(ADDRESS, &impl, &st, &o, &server), 0);
	REQUIRE_EQ(new_client(&c, true), 0);
	CHECK(ar_client_AllRpc_available(c));
	every_method(c, false);
	/* Async in-process: completed before the call returns. */
	CHECK_EQ(ar_AllRpc_echo_async(c, &sent, echo_done, &ar), 0);
	CHECK_EQ(atomic_load(&ar.done), 1);
	CHECK(ar.equal);
	/* Broadcasts reach in-process subscribers in the firing thread. */
	CHECK_EQ(ar_client_AllRpc_subscribe_changed(c, on_changed, &rec), 0);
	CHECK_EQ(ar_server_AllRpc_fire_changed(server, &sent, AR_LEVEL_HIGH), 1);
	CHECK_EQ(atomic_load(&rec.changed), 1);
	CHECK(atomic_load(&rec.changed_equal));
	ar_client_AllRpc_free(c);
	ar_server_AllRpc_free(server);
}

int main(int argc, char **argv)
{
	pthread_t loop_tid;

	pbus_check_suite("rpc/generated");
	if (argc != 3) {
		fprintf(stderr, "usage: test-generated PBUSD SCHEMA\n");
		return 2;
	}
	pbus_testd_watchdog("rpc/generated", &registry, WATCHDOG_S);
	values_arena = pbus_rpc_arena_new();
	everything(&sent);
	if (!pbus_testd_init(&registry, argv[1], "rpcgen") || !pbus_testd_start(&registry, argv[2], NULL)) {
		CHECK_FAIL("cannot start pbusd");
		pbus_testd_cleanup(&registry);
		CHECK_EXIT();
	}
	if (pbus_loop_new(&client_loop) < 0)
		return 1;
	pthread_create(&loop_tid, NULL, rpc_test_loop_thread, client_loop);

	RUN_CASE(over_the_socket);
	RUN_CASE(in_process);

	pbus_loop_quit(client_loop);
	pthread_join(loop_tid, NULL);
	pbus_loop_free(client_loop);
	pbus_testd_cleanup(&registry);
	pbus_rpc_arena_free(values_arena);
	CHECK_EXIT();
}
