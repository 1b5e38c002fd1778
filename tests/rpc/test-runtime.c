/* SPDX-License-Identifier: MIT */
/*
 * test-runtime.c: the method runtime (parambus/rpc.h, docs/methods.md)
 * through its own API, with an interface written the way pbus-gen writes
 * one (its description, a dispatch function, calls that try the
 * in-process server first), against a real pbusd as the registry and real
 * server processes.
 *
 *     test-runtime PBUSD SCHEMA
 *
 * PBUSD: the pbusd binary; SCHEMA: a compiled schema (any) for the
 * registry's instance "rpc". Every server runs in a child process (forked,
 * killed at the end) unless a case says in-process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/rpc.h>

#include "pbus-check.h"
#include "pbus-testd.h"
#include "rpc-test.h"

#define ADDRESS "local:rpc:org.test.Probe"
#define WATCHDOG_S 240

/* --- the interface, as generated code would have it ----------------------------------- */

enum { M_ADD, M_SLEEP, M_NOTE, M_COUNT, M_ADMIN, M_FAIL, M_FIRE, M_ECHO, METHOD_COUNT };
enum { B_TICK, B_ALERT, BROADCAST_COUNT };

static const struct pbus_rpc_method methods[] = {
	{"add", 0, NULL},          {"sleep", 0, NULL},
	{"note", PBUS_RPC_FIRE_AND_FORGET, NULL},
	{"count", 0, NULL},        {"admin", 0, "pbus-rpc-nobody-group"},
	{"fail", 0, NULL},         {"fire", 0, NULL},
	{"echo", 0, NULL},
};
static const struct pbus_rpc_broadcast broadcasts[] = {{"tick", false}, {"alert", true}};

static const struct pbus_rpc_interface probe_1_1 = {
	.name = "org.test.Probe", .major = 1, .minor = 1,
	.method_count = METHOD_COUNT, .broadcast_count = BROADCAST_COUNT,
	.methods = methods, .broadcasts = broadcasts};
/* The same interface as other clients were generated for. */
static const struct pbus_rpc_interface probe_1_0 = {
	.name = "org.test.Probe", .major = 1, .minor = 0,
	.method_count = METHOD_COUNT, .broadcast_count = BROADCAST_COUNT,
	.methods = methods, .broadcasts = broadcasts};
static const struct pbus_rpc_interface probe_1_2 = {
	.name = "org.test.Probe", .major = 1, .minor = 2,
	.method_count = METHOD_COUNT, .broadcast_count = BROADCAST_COUNT,
	.methods = methods, .broadcasts = broadcasts};
static const struct pbus_rpc_interface probe_2_0 = {
	.name = "org.test.Probe", .major = 2, .minor = 0,
	.method_count = METHOD_COUNT, .broadcast_count = BROADCAST_COUNT,
	.methods = methods, .broadcasts = broadcasts};

/* --- the server ---------------------------------------------------------------------- */

struct server {
	struct pbus_stub *stub;
	atomic_uint notes;
	atomic_uint calls;
};

static int server_dispatch(void *object, const struct pbus_caller *caller, unsigned method,
			   struct pbus_rpc_reader *in, struct pbus_rpc_buf *out)
{
	struct server *s = object;
	int32_t a, b;
	uint32_t n;
	char *text;
	int r;

	atomic_fetch_add(&s->calls, 1);
	switch (method) {
	case M_ADD:
		pbus_rpc_get_i32(in, &a);
		pbus_rpc_get_i32(in, &b);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		pbus_rpc_put_i32(out, a + b);
		return 0;
	case M_SLEEP:
		pbus_rpc_get_u32(in, &n);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		usleep(n * 1000);
		return 0;
	case M_NOTE:
		pbus_rpc_get_string(in, &text);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		atomic_fetch_add(&s->notes, 1);
		return 0;
	case M_COUNT:
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		pbus_rpc_put_u32(out, atomic_load(&s->notes));
		return 0;
	case M_ADMIN:
		return pbus_rpc_reader_end(in);
	case M_FAIL:
		pbus_rpc_get_i32(in, &a);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		return a;
	case M_FIRE: {
		struct pbus_rpc_buf tick, alert;
		uint64_t me = pbus_caller_id(caller);

		pbus_rpc_get_u32(in, &n);
		pbus_rpc_get_string(in, &text);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		pbus_rpc_buf_init(&tick);
		pbus_rpc_put_u32(&tick, n);
		pbus_stub_broadcast(s->stub, B_TICK, &tick, &n, NULL, 0);
		pbus_rpc_buf_init(&alert);
		pbus_rpc_put_string(&alert, text);
		/* Selective: only to the caller. */
		pbus_stub_broadcast(s->stub, B_ALERT, &alert, text, &me, 1);
		pbus_rpc_buf_release(&alert);
		return 0;
	}
	case M_ECHO:
		pbus_rpc_get_string(in, &text);
		if ((r = pbus_rpc_reader_end(in)) < 0)
			return r;
		pbus_rpc_put_string(out, text);
		return 0;
	}
	return -ENOSYS;
}

/* Selective: a client named "refused" may not subscribe to alert. */
static int server_subscription(void *object, const struct pbus_caller *caller, unsigned broadcast,
			       bool subscribe)
{
	(void)object;
	if (subscribe && broadcast == B_ALERT && !strcmp(pbus_caller_name(caller), "refused"))
		return -EPERM;
	return 0;
}

static struct pbus_testd registry;

/* A server process of @itf: serves until killed. */
static bool serve_probe(struct pbus_loop *loop, const void *itf)
{
	static struct server s;
	struct pbus_rpc_options o = {.loop = loop, .socket_dir = registry.socket_dir};

	return pbus_stub_new(ADDRESS, itf, server_dispatch, server_subscription, &s, &o, &s.stub) == 0;
}

static pid_t spawn_server(const struct pbus_rpc_interface *itf)
{
	return rpc_test_spawn(serve_probe, itf);
}

/* --- the client side, as generated code would have it ----------------------------------- */

struct client {
	struct pbus_proxy *proxy;
	atomic_uint ticks, alerts;
	atomic_uint last_tick;
	atomic_int available_events, unavailable_events;
};

static void client_deliver(void *object, unsigned broadcast, struct pbus_rpc_reader *args,
			   const void *local_args)
{
	struct client *c = object;
	uint32_t n = 0;
	char *text;

	if (broadcast == B_TICK) {
		if (args)
			pbus_rpc_get_u32(args, &n);
		else
			n = *(const uint32_t *)local_args;
		if (!args || pbus_rpc_reader_end(args) == 0) {
			atomic_store(&c->last_tick, n);
			atomic_fetch_add(&c->ticks, 1);
		}
	} else if (broadcast == B_ALERT) {
		if (args)
			pbus_rpc_get_string(args, &text);
		atomic_fetch_add(&c->alerts, 1);
	}
}

static void client_availability(void *object, bool available, void *userdata)
{
	struct client *c = object;

	(void)userdata;
	atomic_fetch_add(available ? &c->available_events : &c->unavailable_events, 1);
}

static struct pbus_loop *client_loop;

static int client_new_with(struct client *c, const struct pbus_rpc_interface *itf, const char *name,
			   bool inprocess)
{
	struct pbus_rpc_options o = {.loop = client_loop, .socket_dir = registry.socket_dir,
				     .name = name, .timeout_ms = 2000, .no_inprocess = !inprocess};

	memset(c, 0, sizeof *c);
	return pbus_proxy_new(ADDRESS, itf, client_deliver, c, &o, &c->proxy);
}

static int client_new(struct client *c)
{
	return client_new_with(c, &probe_1_1, "test", false);
}

static int call_add(struct client *c, int32_t a, int32_t b, int32_t *sum)
{
	struct pbus_rpc_call call;
	struct pbus_rpc_reader rd;
	void *local = pbus_proxy_local_enter(c->proxy);
	int r;

	if (local) {
		/* In-process: the server's function, directly. */
		struct pbus_rpc_buf in, out;

		pbus_rpc_buf_init(&in);
		pbus_rpc_buf_init(&out);
		pbus_rpc_put_i32(&in, a);
		pbus_rpc_put_i32(&in, b);
		pbus_rpc_reader_init(&rd, in.data, in.size, NULL);
		r = server_dispatch(local, pbus_proxy_local_caller(c->proxy), M_ADD, &rd, &out);
		pbus_proxy_local_leave(c->proxy);
		pbus_rpc_reader_init(&rd, out.data, out.size, NULL);
		pbus_rpc_get_i32(&rd, sum);
		return r;
	}
	pbus_rpc_call_init(&call);
	pbus_rpc_put_i32(&call.args, a);
	pbus_rpc_put_i32(&call.args, b);
	r = pbus_proxy_call(c->proxy, M_ADD, &call, -1);
	if (r == 0) {
		pbus_rpc_reader_init(&rd, call.reply.data, call.reply.size, NULL);
		pbus_rpc_get_i32(&rd, sum);
		r = pbus_rpc_reader_end(&rd);
	}
	pbus_rpc_call_release(&call);
	return r;
}

static int call_u32(struct client *c, unsigned method, uint32_t v, int timeout_ms)
{
	struct pbus_rpc_call call;
	int r;

	pbus_rpc_call_init(&call);
	pbus_rpc_put_u32(&call.args, v);
	r = pbus_proxy_call(c->proxy, method, &call, timeout_ms);
	pbus_rpc_call_release(&call);
	return r;
}

static int call_fire(struct client *c, uint32_t n, const char *text)
{
	struct pbus_rpc_call call;
	int r;

	pbus_rpc_call_init(&call);
	pbus_rpc_put_u32(&call.args, n);
	pbus_rpc_put_string(&call.args, text);
	r = pbus_proxy_call(c->proxy, M_FIRE, &call, -1);
	pbus_rpc_call_release(&call);
	return r;
}

static int call_empty(struct client *c, unsigned method, uint32_t *ret)
{
	struct pbus_rpc_call call;
	struct pbus_rpc_reader rd;
	int r;

	pbus_rpc_call_init(&call);
	r = pbus_proxy_call(c->proxy, method, &call, -1);
	if (r == 0 && ret) {
		pbus_rpc_reader_init(&rd, call.reply.data, call.reply.size, NULL);
		pbus_rpc_get_u32(&rd, ret);
		r = pbus_rpc_reader_end(&rd);
	}
	pbus_rpc_call_release(&call);
	return r;
}

/* --- the cases ------------------------------------------------------------------------- */

static void calls_over_the_socket(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;
	char *echoed = NULL;
	struct pbus_rpc_call call;
	struct pbus_rpc_reader rd;
	struct pbus_rpc_arena *arena = pbus_rpc_arena_new();

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	CHECK(pbus_proxy_available(c.proxy));
	CHECK_EQ(call_add(&c, 40, 2, &sum), 0);
	CHECK_EQ(sum, 42);
	for (int i = 0; i < 1000; i++) {
		if (call_add(&c, i, -2 * i, &sum) != 0 || sum != -i) {
			CHECK_FAIL("call %d: sum %d", i, sum);
			break;
		}
	}
	/* A variable-size result, into the caller's arena. */
	pbus_rpc_call_init(&call);
	pbus_rpc_put_string(&call.args, "grüße");
	CHECK_EQ(pbus_proxy_call(c.proxy, M_ECHO, &call, -1), 0);
	pbus_rpc_reader_init(&rd, call.reply.data, call.reply.size, arena);
	CHECK(pbus_rpc_get_string(&rd, &echoed));
	CHECK_EQ_STR(echoed, "grüße");
	pbus_rpc_call_release(&call);
	/* The server function's own error, with its message. */
	CHECK_EQ(call_u32(&c, M_FAIL, (uint32_t)-EDOM, -1), -EDOM);
	CHECK(strstr(pbus_rpc_last_error(), "org.test.Probe.fail failed") != NULL);
	/* A method the server does not have. */
	pbus_rpc_call_init(&call);
	CHECK_EQ(pbus_proxy_call(c.proxy, METHOD_COUNT, &call, -1), -EINVAL);
	pbus_rpc_call_release(&call);
	/* A string that is not UTF-8 is refused before anything is sent. */
	pbus_rpc_call_init(&call);
	pbus_rpc_put_string(&call.args, "\xff\xfe");
	CHECK_EQ(pbus_proxy_call(c.proxy, M_ECHO, &call, -1), -EINVAL);
	pbus_rpc_call_release(&call);
	CHECK_EQ(call_add(&c, 1, 1, &sum), 0);
	pbus_proxy_free(c.proxy);
	pbus_rpc_arena_free(arena);
	rpc_test_kill(server);
}

static void fire_and_forget(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	uint32_t count = 0;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	for (int i = 0; i < 100; i++) {
		struct pbus_rpc_call call;

		pbus_rpc_call_init(&call);
		pbus_rpc_put_string(&call.args, "note");
		CHECK_EQ(pbus_proxy_send(c.proxy, M_NOTE, &call), 0);
		pbus_rpc_call_release(&call);
	}
	/* Calls are served in order: the count comes after the notes. */
	CHECK_EQ(call_empty(&c, M_COUNT, &count), 0);
	CHECK_EQ(count, 100);
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static void timeouts(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;
	int64_t t0;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	t0 = pbus_testd_now_ms();
	CHECK_EQ(call_u32(&c, M_SLEEP, 400, 100), -ETIMEDOUT);
	CHECK_MSG(pbus_testd_now_ms() - t0 < 350, "the timeout took %lld ms",
		  (long long)(pbus_testd_now_ms() - t0));
	/* The late reply is recognised and dropped: the next call gets its own. */
	CHECK_EQ(call_add(&c, 2, 3, &sum), 0);
	CHECK_EQ(sum, 5);
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static void server_death_mid_call(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int64_t t0;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	if (fork() == 0) {
		usleep(100 * 1000);
		kill(server, SIGKILL);
		_exit(0);
	}
	t0 = pbus_testd_now_ms();
	CHECK_EQ(call_u32(&c, M_SLEEP, 1500, 3000), -ECONNRESET);
	CHECK_MSG(pbus_testd_now_ms() - t0 < 1000, "the caller waited %lld ms",
		  (long long)(pbus_testd_now_ms() - t0));
	CHECK(WAIT_FOR(!pbus_proxy_available(c.proxy)));
	waitpid(server, NULL, 0);
	wait(NULL);
	/* No server: a call fails at once. */
	CHECK_EQ(call_u32(&c, M_SLEEP, 0, 1000), -ENOTCONN);
	pbus_proxy_free(c.proxy);
}

static void client_death_mid_call(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;
	pid_t child;

	REQUIRE(server > 0);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct client d;

		client_loop = NULL;
		if (client_new(&d) == 0)
			call_u32(&d, M_SLEEP, 1000, 10000);
		_exit(0);
	}
	usleep(300 * 1000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The server finishes that call (it serves one call at a time), drops
	 * the connection and serves on. */
	REQUIRE_EQ(client_new(&c), 0);
	CHECK_EQ(call_add(&c, 20, 22, &sum), 0);
	CHECK_EQ(sum, 42);
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

struct thread_arg {
	struct client *c;
	int base, errors;
};

static void *caller_thread(void *p)
{
	struct thread_arg *a = p;

	for (int i = 0; i < 2000; i++) {
		int32_t sum = 0;

		if (call_add(a->c, a->base, i, &sum) != 0 || sum != a->base + i)
			a->errors++;
	}
	return NULL;
}

static void concurrent_calls(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	pthread_t t[4];
	struct thread_arg args[4];

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){.c = &c, .base = 1000000 * (i + 1)};
		pthread_create(&t[i], NULL, caller_thread, &args[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_MSG(args[i].errors == 0, "thread %d: %d wrong results", i, args[i].errors);
	}
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static void broadcasts_to_64(void)
{
	pid_t server = spawn_server(&probe_1_1);
	static struct client c[64];
	struct client refused;
	unsigned got = 0;

	REQUIRE(server > 0);
	for (int i = 0; i < 64; i++) {
		REQUIRE_EQ(client_new(&c[i]), 0);
		CHECK_EQ(pbus_proxy_subscribe(c[i].proxy, B_TICK), 0);
	}
	CHECK_EQ(pbus_proxy_subscribe(c[0].proxy, B_ALERT), 0);
	CHECK_EQ(pbus_proxy_subscribe(c[1].proxy, B_ALERT), 0);
	/* A selective broadcast's server may refuse a subscriber. */
	REQUIRE_EQ(client_new_with(&refused, &probe_1_1, "refused", false), 0);
	CHECK_EQ(pbus_proxy_subscribe(refused.proxy, B_ALERT), -EPERM);
	CHECK_EQ(call_fire(&c[0], 7, "only c0"), 0);
	for (int i = 0; i < 64; i++)
		if (WAIT_FOR(atomic_load(&c[i].last_tick) == 7))
			got++;
	CHECK_EQ(got, 64);
	/* The selective one reached its one receiver. */
	CHECK(WAIT_FOR(atomic_load(&c[0].alerts) == 1));
	usleep(50 * 1000);
	CHECK_EQ(atomic_load(&c[1].alerts), 0);
	/* Unsubscribed: no more. */
	CHECK_EQ(pbus_proxy_unsubscribe(c[5].proxy, B_TICK), 0);
	CHECK_EQ(call_fire(&c[0], 8, "x"), 0);
	CHECK(WAIT_FOR(atomic_load(&c[6].last_tick) == 8));
	usleep(50 * 1000);
	CHECK_EQ(atomic_load(&c[5].last_tick), 7);
	for (int i = 0; i < 64; i++)
		pbus_proxy_free(c[i].proxy);
	pbus_proxy_free(refused.proxy);
	rpc_test_kill(server);
}

static void versions(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;

	REQUIRE(server > 0);
	/* An older minor works. */
	REQUIRE_EQ(client_new_with(&c, &probe_1_0, "old", false), 0);
	CHECK(pbus_proxy_available(c.proxy));
	CHECK_EQ(call_add(&c, 1, 2, &sum), 0);
	pbus_proxy_free(c.proxy);
	/* A newer minor and another major do not. */
	REQUIRE_EQ(client_new_with(&c, &probe_1_2, "new", false), 0);
	CHECK(!pbus_proxy_available(c.proxy));
	CHECK_EQ(call_add(&c, 1, 2, &sum), -EPROTO);
	CHECK_MSG(strstr(pbus_rpc_last_error(), "server org.test.Probe 1.1, client 1.2") != NULL,
		  "message: %s", pbus_rpc_last_error());
	pbus_proxy_free(c.proxy);
	REQUIRE_EQ(client_new_with(&c, &probe_2_0, "other", false), 0);
	CHECK_EQ(call_add(&c, 1, 2, &sum), -EPROTO);
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static void who_may_call(void)
{
	pid_t server = spawn_server(&probe_1_1);
	int status = -1;
	pid_t child;

	REQUIRE(server > 0);
	/* As root (the server's user too): allowed. */
	{
		struct client c;

		REQUIRE_EQ(client_new(&c), 0);
		CHECK_EQ(call_empty(&c, M_ADMIN, NULL), 0);
		pbus_proxy_free(c.proxy);
	}
	if (geteuid() != 0) {
		rpc_test_kill(server);
		return;
	}
	/* As nobody, not in the method's group: EPERM, and other methods work. */
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct client c;
		int32_t sum = 0;

		client_loop = NULL;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		setenv("PBUS_OWNER", "root", 1);
		if (client_new(&c) < 0)
			_exit(11);
		if (call_empty(&c, M_ADMIN, NULL) != -EPERM)
			_exit(12);
		if (!strstr(pbus_rpc_last_error(), "may be called by group pbus-rpc-nobody-group only"))
			_exit(13);
		if (call_add(&c, 1, 2, &sum) != 0 || sum != 3)
			_exit(14);
		_exit(0);
	}
	waitpid(child, &status, 0);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unprivileged caller: status %d",
		  status);
	rpc_test_kill(server);
}

/* A raw connection to the abstract socket @endpoint; -1 on failure. */
static int raw_connect(const char *endpoint)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(endpoint);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || n + 1 > sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path + 1, endpoint, n);
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The ERROR frame (socket-protocol.md §2: 12-byte header, i32 code, str
 * message) that @fd receives within @timeout_ms, followed by the end of
 * the stream: its code (negative) with the message in @msg, or 1 if
 * nothing came in time, 2 for anything else. */
static int raw_error(int fd, int timeout_ms, char *msg, size_t size)
{
	unsigned char buf[600];
	size_t have = 0;
	int64_t until = pbus_testd_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = until - pbus_testd_now_ms();
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return 1;
		got = recv(fd, buf + have, sizeof buf - have, 0);
		if (got < 0)
			return 2;
		if (got == 0)
			break;
		have += (size_t)got;
		if (have == sizeof buf)
			return 2;
	}
	uint32_t length, id, mlen;
	uint16_t type;
	int32_t code;

	if (have < 24)
		return 2;
	memcpy(&length, buf, 4);
	memcpy(&type, buf + 4, 2);
	memcpy(&id, buf + 8, 4);
	memcpy(&code, buf + 12, 4);
	memcpy(&mlen, buf + 16, 4);
	if (length != have || type != 16 || id != 0 || 20 + (size_t)mlen != have || code >= 0)
		return 2;
	snprintf(msg, size, "%.*s", (int)mlen, (const char *)buf + 20);
	return code;
}

/* What a local user can do to a server it may connect to: hold at most its
 * uid's share of the connections (the server's user and root still get
 * in), and no connection without CONNECT lives past the frame timeout. */
static void hostile_connections(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct pbus_client *reg = NULL;
	struct pbus_service_info info;
	int status = -1;
	pid_t child;

	struct pbus_client_options o = {.socket_dir = registry.socket_dir};
	int r;

	REQUIRE(server > 0);
	r = pbus_client_connect("rpc", &o, &reg);
	CHECK_EQ(r, 0);
	if (r == 0) {
		r = pbus_client_lookup_service(reg, ADDRESS, &info);
		CHECK_EQ(r, 0);
		CHECK(r < 0 || info.available);
		pbus_client_close(reg);
	}
	if (r < 0 || !info.available || geteuid() != 0) {
		rpc_test_kill(server);
		return;
	}
	fflush(stdout);
	child = fork();
	if (child == 0) {
		int fds[64], extra, idle;
		char msg[400] = "";

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		/* One connection that never speaks, then the rest of the share. */
		idle = raw_connect(info.endpoint);
		if (idle < 0)
			_exit(11);
		for (int i = 0; i < 63; i++)
			if ((fds[i] = raw_connect(info.endpoint)) < 0)
				_exit(12);
		extra = raw_connect(info.endpoint);
		if (extra < 0 || raw_error(extra, 5000, msg, sizeof msg) != -EUSERS)
			_exit(13);
		if (!strstr(msg, "too many connections to " ADDRESS " for uid 65534 (at most 64)")) {
			fprintf(stderr, "message: %s\n", msg);
			_exit(14);
		}
		close(extra);
		/* A proxy of this user is refused with the server's reason. */
		{
			struct client c;
			int32_t sum = 0;

			client_loop = NULL;
			setenv("PBUS_OWNER", "root", 1);
			if (client_new(&c) < 0)
				_exit(17);
			if (call_add(&c, 1, 2, &sum) != -EUSERS ||
			    !strstr(pbus_rpc_last_error(), "for uid 65534 (at most 64)")) {
				fprintf(stderr, "proxy: %s\n", pbus_rpc_last_error());
				_exit(18);
			}
			pbus_proxy_free(c.proxy);
		}
		/* The silent one is told and closed after 10 s. */
		if (raw_error(idle, 15000, msg, sizeof msg) != -EPROTO || !strstr(msg, "no CONNECT within 10 s")) {
			fprintf(stderr, "message: %s\n", msg);
			_exit(15);
		}
		/* Its place is free again: a new connection gets in (and is
		 * closed in its turn). */
		extra = raw_connect(info.endpoint);
		if (extra < 0 || raw_error(extra, 500, msg, sizeof msg) != 1)
			_exit(16);
		for (int i = 0; i < 63; i++)
			close(fds[i]);
		close(extra);
		_exit(0);
	}
	/* While the child holds its share, root calls as usual. */
	{
		struct client c;
		int32_t sum = 0;

		usleep(200 * 1000);
		CHECK_EQ(client_new(&c), 0);
		CHECK_EQ(call_add(&c, 20, 22, &sum), 0);
		CHECK_EQ(sum, 42);
		pbus_proxy_free(c.proxy);
	}
	waitpid(child, &status, 0);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unprivileged user: status %d",
		  status);
	rpc_test_kill(server);
}

static void reconnects_by_itself(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	/* The callback hears the state now, then every change. */
	pbus_proxy_on_availability(c.proxy, client_availability, NULL);
	CHECK(WAIT_FOR(atomic_load(&c.available_events) == 1));
	CHECK_EQ(pbus_proxy_subscribe(c.proxy, B_TICK), 0);
	rpc_test_kill(server);
	CHECK(WAIT_FOR(!pbus_proxy_available(c.proxy)));
	CHECK(WAIT_FOR(atomic_load(&c.unavailable_events) == 1));
	server = spawn_server(&probe_1_1);
	REQUIRE(server > 0);
	/* The proxy connects by itself, and its broadcast is subscribed again. */
	CHECK(WAIT_FOR(pbus_proxy_available(c.proxy)));
	CHECK(WAIT_FOR(atomic_load(&c.available_events) == 2));
	CHECK_EQ(atomic_load(&c.unavailable_events), 1);
	CHECK_EQ(call_add(&c, 4, 5, &sum), 0);
	CHECK_EQ(call_fire(&c, 9, "again"), 0);
	CHECK(WAIT_FOR(atomic_load(&c.last_tick) == 9));
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static void registry_restart(void)
{
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	/* pbusd restarts: calls go on (they never went through it), and the
	 * server registers again, so a new proxy finds it. */
	pbus_testd_stop(&registry, SIGTERM);
	CHECK_EQ(call_add(&c, 1, 1, &sum), 0);
	REQUIRE(pbus_testd_start(&registry, getenv("PBUS_TEST_SCHEMA"), NULL));
	{
		struct client d;
		int64_t until = pbus_testd_now_ms() + 8000;
		int r;

		do {
			usleep(50 * 1000);
			r = client_new(&d);
			if (r == 0 && !pbus_proxy_available(d.proxy)) {
				pbus_proxy_free(d.proxy);
				r = -1;
			}
		} while (r != 0 && pbus_testd_now_ms() < until);
		CHECK_EQ(r, 0);
		if (r == 0) {
			CHECK_EQ(call_add(&d, 2, 2, &sum), 0);
			pbus_proxy_free(d.proxy);
		}
	}
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
}

static struct server inproc_server;

static void in_process(void)
{
	struct pbus_rpc_options o = {.loop = client_loop, .socket_dir = registry.socket_dir};
	struct client c, remote;
	int32_t sum = 0;

	/* A proxy made before its in-process server uses it once it appears. */
	REQUIRE_EQ(client_new_with(&c, &probe_1_1, "early", true), 0);
	CHECK(!pbus_proxy_available(c.proxy));
	REQUIRE_EQ(pbus_stub_new(ADDRESS, &probe_1_1, server_dispatch, server_subscription, &inproc_server,
				 &o, &inproc_server.stub), 0);
	CHECK(pbus_proxy_available(c.proxy));
	CHECK(pbus_proxy_local_enter(c.proxy) == &inproc_server);
	pbus_proxy_local_leave(c.proxy);
	CHECK_EQ(call_add(&c, 5, 6, &sum), 0);
	CHECK_EQ(sum, 11);
	/* The socket path to the same server works too (served by the loop thread). */
	REQUIRE_EQ(client_new(&remote), 0);
	CHECK(pbus_proxy_local_enter(remote.proxy) == NULL);
	CHECK_EQ(call_add(&remote, 7, 8, &sum), 0);
	CHECK_EQ(sum, 15);
	/* In-process broadcasts reach in-process subscribers without encoding. */
	CHECK_EQ(pbus_proxy_subscribe(c.proxy, B_TICK), 0);
	{
		uint32_t n = 33;

		CHECK_EQ(pbus_stub_broadcast(inproc_server.stub, B_TICK, NULL, &n, NULL, 0), 1);
		CHECK_EQ(atomic_load(&c.last_tick), 33);
	}
	pbus_proxy_free(remote.proxy);
	pbus_stub_free(inproc_server.stub);
	CHECK(!pbus_proxy_available(c.proxy));
	CHECK(pbus_proxy_local_enter(c.proxy) == NULL);
	pbus_proxy_free(c.proxy);
}

/* --- allocation counting ------------------------------------------------------------------ */

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCATIONS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static _Thread_local unsigned long allocations;

void *malloc(size_t n)
{
	allocations++;
	return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	allocations++;
	return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	allocations++;
	return __libc_realloc(p, n);
}
#endif

static void no_allocation_per_call(void)
{
#ifdef COUNT_ALLOCATIONS
	pid_t server = spawn_server(&probe_1_1);
	struct client c;
	int32_t sum = 0;
	unsigned long before;

	REQUIRE(server > 0);
	REQUIRE_EQ(client_new(&c), 0);
	CHECK_EQ(call_add(&c, 1, 1, &sum), 0); /* the first call grows the buffers */
	before = allocations;
	for (int i = 0; i < 1000; i++)
		call_add(&c, i, i, &sum);
	CHECK_MSG(allocations == before, "%lu allocations in 1000 calls", allocations - before);
	pbus_proxy_free(c.proxy);
	rpc_test_kill(server);
#else
	/* The sanitizers' allocators cannot be counted this way; the plain
	 * build runs this case. */
	CHECK(true);
#endif
}

/* --- the loop ------------------------------------------------------------------------- */

static void *quit_after_50ms(void *loop)
{
	usleep(50000);
	pbus_loop_quit(loop);
	return NULL;
}

static int64_t elapsed_ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* A quit that comes before the loop runs (another thread's, a moment too
 * early) is not lost: the run returns at once (the watchdog catches a
 * hang). It is consumed: the next run waits for the next quit. */
static void loop_quit_before_run(void)
{
	struct pbus_loop *loop;
	struct timespec start;
	pthread_t tid;

	REQUIRE_EQ(pbus_loop_new(&loop), 0);
	pbus_loop_quit(loop);
	CHECK_EQ(pbus_loop_run(loop), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	REQUIRE_EQ(pthread_create(&tid, NULL, quit_after_50ms, loop), 0);
	CHECK_EQ(pbus_loop_run(loop), 0);
	CHECK_MSG(elapsed_ms_since(&start) >= 45, "the second run returned after %lld ms, before its quit",
		  (long long)elapsed_ms_since(&start));
	pthread_join(tid, NULL);
	pbus_loop_free(loop);
}

/* --- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	pthread_t loop_tid;

	pbus_check_suite("rpc/runtime");
	if (argc != 3) {
		fprintf(stderr, "usage: test-runtime PBUSD SCHEMA\n");
		return 2;
	}
	pbus_testd_watchdog("rpc/runtime", &registry, WATCHDOG_S);
	setenv("PBUS_TEST_SCHEMA", argv[2], 1);
	if (!pbus_testd_init(&registry, argv[1], "rpc") || !pbus_testd_start(&registry, argv[2], NULL)) {
		CHECK_FAIL("cannot start pbusd");
		pbus_testd_cleanup(&registry);
		CHECK_EXIT();
	}
	if (pbus_loop_new(&client_loop) < 0)
		return 1;
	pthread_create(&loop_tid, NULL, rpc_test_loop_thread, client_loop);

	RUN_CASE(loop_quit_before_run);
	RUN_CASE(calls_over_the_socket);
	RUN_CASE(fire_and_forget);
	RUN_CASE(timeouts);
	RUN_CASE(server_death_mid_call);
	RUN_CASE(client_death_mid_call);
	RUN_CASE(concurrent_calls);
	RUN_CASE(broadcasts_to_64);
	RUN_CASE(versions);
	RUN_CASE(who_may_call);
	RUN_CASE(hostile_connections);
	RUN_CASE(reconnects_by_itself);
	RUN_CASE(in_process);
	RUN_CASE(no_allocation_per_call);
	RUN_CASE(registry_restart);

	pbus_loop_quit(client_loop);
	pthread_join(loop_tid, NULL);
	pbus_loop_free(client_loop);
	pbus_testd_cleanup(&registry);
	CHECK_EXIT();
}
