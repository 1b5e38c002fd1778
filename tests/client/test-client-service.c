/* SPDX-License-Identifier: MIT */
/*
 * test-client-service.c: services through the client library
 * (parambus/client.h: pbus_client_register_service() and the rest,
 * docs/socket-protocol.md §3.6) against the real pbusd.
 *
 *     test-client-service [PBUSD [SCHEMA]]
 *
 * A "server" client registers, a "watcher" client watches and looks up,
 * both in this process (so the registered pid is ours). pbusd runs with
 * --socket-dir in a temporary directory, ready through --notify-fd; it is
 * stopped and started again to see registrations and watches renewed, and
 * a renewal refused. Every wait is a poll() on the clients' descriptors
 * with a deadline. Each case prints "PASS: client-service/<name>" or
 * "FAIL: ..."; the exit status is non-zero if any failed. Must run as
 * root or as pbusd's user (only they may register): it starts pbusd
 * itself, as its own user.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/parambus.h>

#include "pbus-check.h"
#include "pbus-testd.h"

#ifndef PBUS_TEST_PBUSD
#define PBUS_TEST_PBUSD "daemon/pbusd"
#endif
#ifndef PBUS_TEST_SCHEMA
#define PBUS_TEST_SCHEMA "tests/cli/fixtures/test.pbs"
#endif

#define WAIT_MS 5000
#define RECONNECT_WAIT_MS 8000 /* the first reconnect comes after 1 s */
#define WATCHDOG_S 120

static const char *pbusd_path, *schema_path;
static struct pbus_testd testd; /* pbusd, its socket and state folders */

static int64_t now_ms(void)
{
	return pbus_testd_now_ms();
}

static bool pbusd_start(void)
{
	return pbus_testd_start(&testd, schema_path, NULL);
}

static void pbusd_stop(void)
{
	pbus_testd_stop(&testd, SIGTERM);
}

static void cleanup(void)
{
	pbus_testd_cleanup(&testd);
}

/* --- Recording the watch's callbacks -------------------------------------------- */

#define EVENTS_MAX 64

struct events {
	struct pbus_service_info e[EVENTS_MAX];
	bool in_request[EVENTS_MAX];
	size_t n;
};

static struct events events;
static bool request_running;

static void on_service(struct pbus_client *client, const struct pbus_service_info *info, void *userdata)
{
	struct events *ev = userdata;

	(void)client;
	if (ev->n < EVENTS_MAX) {
		ev->in_request[ev->n] = request_running;
		ev->e[ev->n++] = *info;
	}
}

static void events_dump(void)
{
	for (size_t i = 0; i < events.n; i++)
		printf("  event %zu: %s available %d %u.%u pid %d uid %u endpoint '%s'\n", i, events.e[i].address,
		       events.e[i].available, events.e[i].major, events.e[i].minor, (int)events.e[i].pid,
		       (unsigned)events.e[i].uid, events.e[i].endpoint);
}

static int last_error; /* the last negative dispatch of run_until() */

/* Dispatch @a and @b (may be NULL) until @events has @count entries or
 * @timeout_ms passes; true if it has. */
static bool run_until(struct pbus_client *a, struct pbus_client *b, size_t count, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	last_error = 0;
	while (events.n < count) {
		struct pollfd p[2] = {{.fd = pbus_client_fd(a), .events = POLLIN},
				      {.fd = b ? pbus_client_fd(b) : -1, .events = POLLIN}};
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		poll(p, 2, (int)left);
		if ((r = pbus_client_dispatch(a)) < 0)
			last_error = r;
		if (b && (r = pbus_client_dispatch(b)) < 0)
			last_error = r;
	}
	return true;
}

/* Dispatch @a and @b until both are connected (true), or @timeout_ms. */
static bool run_until_connected(struct pbus_client *a, struct pbus_client *b, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	while (!pbus_client_connected(a) || !pbus_client_connected(b)) {
		struct pollfd p[2] = {{.fd = pbus_client_fd(a), .events = POLLIN},
				      {.fd = pbus_client_fd(b), .events = POLLIN}};
		int64_t left = deadline - now_ms();

		if (left <= 0)
			return false;
		poll(p, 2, (int)left);
		pbus_client_dispatch(a);
		pbus_client_dispatch(b);
	}
	return true;
}

/* Dispatch @a and @b until a dispatch returns an error, or @timeout_ms. */
static bool run_until_error(struct pbus_client *a, struct pbus_client *b, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	last_error = 0;
	while (!last_error) {
		struct pollfd p[2] = {{.fd = pbus_client_fd(a), .events = POLLIN},
				      {.fd = b ? pbus_client_fd(b) : -1, .events = POLLIN}};
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		poll(p, 2, (int)left);
		if ((r = pbus_client_dispatch(a)) < 0)
			last_error = r;
		if (b && (r = pbus_client_dispatch(b)) < 0 && !last_error)
			last_error = r;
	}
	return true;
}

static struct pbus_client *connect_or_fail(const char *name)
{
	struct pbus_client_options o = {.socket_dir = testd.socket_dir, .name = name};
	struct pbus_client *c = NULL;
	int r = pbus_client_connect(testd.instance, &o, &c);

	CHECK_MSG(r == 0, "connect %s: %s", name, pbus_strerror(r));
	return c;
}

static void address_of(char *buf, size_t size, const char *sub, const char *iface)
{
	snprintf(buf, size, "local:%s%s:%s", testd.instance, sub, iface);
}

/* --- The cases ------------------------------------------------------------------------ */

static void test_address(void)
{
	char registry[PBUS_SERVICE_INSTANCE_MAX + 1], long_address[300];
	static const char *const bad[] = {
		"", "local", "local:psu", "remote:psu:a.B", "local::a", "local:/x:a", "local:p u:a",
		"local:psu:", "local:psu:1a", "local:psu:a..b", "local:psu:a.", "local:psu:a-b",
		"local:psu:a:b",
	};

	pbus_check_begin("address");
	CHECK_EQ(pbus_service_address_registry("local:psu:com.example.psu.PowerSupply", registry,
					       sizeof(registry)), 0);
	CHECK_EQ_STR(registry, "psu");
	CHECK_EQ(pbus_service_address_registry("local:psu/ch2/x:a.b_1._c", registry, sizeof(registry)), 0);
	CHECK_EQ_STR(registry, "psu");
	CHECK_EQ(pbus_service_address_registry("local:a-b.c_d:X", registry, sizeof(registry)), 0);
	CHECK_EQ_STR(registry, "a-b.c_d");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(pbus_service_address_registry(bad[i], registry, sizeof(registry)) == -EINVAL, "'%s'",
			  bad[i]);
	/* 64 bytes of instance, 255 in all; one more of either is too many. */
	snprintf(long_address, sizeof(long_address), "local:%064d:a", 0);
	CHECK_EQ(pbus_service_address_registry(long_address, registry, sizeof(registry)), 0);
	CHECK_EQ(pbus_service_address_registry(long_address, registry, 64), -EINVAL); /* no room */
	snprintf(long_address, sizeof(long_address), "local:%065d:a", 0);
	CHECK_EQ(pbus_service_address_registry(long_address, registry, sizeof(registry)), -EINVAL);
	snprintf(long_address, sizeof(long_address), "local:psu:a%0244d", 0);
	CHECK_EQ(strlen(long_address), 255u);
	CHECK_EQ(pbus_service_address_registry(long_address, registry, sizeof(registry)), 0);
	strcat(long_address, "0");
	CHECK_EQ(pbus_service_address_registry(long_address, registry, sizeof(registry)), -EINVAL);
	CHECK_EQ(pbus_service_address_registry(NULL, registry, sizeof(registry)), -EINVAL);
	pbus_check_end();
}

/* Register through one client, watch through another: the callbacks. */
static void test_register_watch(void)
{
	struct pbus_client *server = connect_or_fail("server"), *watcher = connect_or_fail("watcher"),
			   *other = connect_or_fail("other");
	char address[256], elsewhere[256];
	struct pbus_service_info info;

	pbus_check_begin("register-watch");
	address_of(address, sizeof(address), "/ch1", "com.example.T");
	snprintf(elsewhere, sizeof(elsewhere), "local:not-%s:com.example.T", testd.instance);
	events.n = 0;
	if (server && watcher && other) {
		/* The arguments. */
		CHECK_EQ(pbus_client_register_service(server, "local:x", 1, 0, "ep"), -EINVAL);
		CHECK_EQ(pbus_client_register_service(server, elsewhere, 1, 0, "ep"), -EINVAL);
		CHECK_EQ(pbus_client_register_service(server, address, 1, 0, ""), -EINVAL);
		CHECK_EQ(pbus_client_register_service(server, address, 1, 0, NULL), -EINVAL);
		CHECK_EQ(pbus_client_watch_service(watcher, address, NULL, NULL), -EINVAL);
		CHECK_EQ(pbus_client_lookup_service(watcher, elsewhere, &info), -EINVAL);
		CHECK_EQ(pbus_client_unwatch_service(watcher, address), -ENOENT);
		CHECK_EQ(pbus_client_unregister_service(server, address), -ENOENT);

		/* The watch's first callback: nobody serves it yet. */
		CHECK_EQ(pbus_client_watch_service(watcher, address, on_service, &events), 0);
		CHECK(run_until(watcher, NULL, 1, WAIT_MS));
		CHECK(events.n == 1 && !events.e[0].available && !strcmp(events.e[0].address, address));

		/* Registered, replaced, refused to another, unregistered. */
		CHECK_EQ(pbus_client_register_service(server, address, 1, 2, "pbus-test-ep1"), 0);
		CHECK(run_until(watcher, NULL, 2, WAIT_MS));
		CHECK(events.e[1].available && events.e[1].major == 1 && events.e[1].minor == 2 &&
		      events.e[1].pid == getpid() && events.e[1].uid == geteuid() &&
		      !strcmp(events.e[1].endpoint, "pbus-test-ep1"));
		CHECK_EQ(pbus_client_lookup_service(other, address, &info), 0);
		CHECK(info.available && info.pid == getpid() && !strcmp(info.endpoint, "pbus-test-ep1"));
		CHECK_EQ(pbus_client_register_service(other, address, 1, 0, "theirs"), -EADDRINUSE);
		CHECK_EQ(pbus_client_register_service(server, address, 1, 3, "pbus-test-ep2"), 0);
		CHECK(run_until(watcher, NULL, 3, WAIT_MS));
		CHECK(events.e[2].minor == 3 && !strcmp(events.e[2].endpoint, "pbus-test-ep2"));

		/* A change that arrives during a request waits for dispatch. */
		CHECK_EQ(pbus_client_unregister_service(server, address), 0);
		request_running = true;
		CHECK_EQ(pbus_client_ping(watcher, "x", 1), 0);
		request_running = false;
		CHECK(run_until(watcher, NULL, 4, WAIT_MS));
		CHECK(!events.e[3].available && !events.in_request[3]);
		CHECK_EQ(pbus_client_unregister_service(server, address), -ENOENT);

		/* Unwatched: no more callbacks. */
		CHECK_EQ(pbus_client_unwatch_service(watcher, address), 0);
		CHECK_EQ(pbus_client_register_service(server, address, 1, 0, "pbus-test-ep3"), 0);
		CHECK_EQ(pbus_client_ping(watcher, NULL, 0), 0);
		CHECK(!run_until(watcher, NULL, 5, 200));
		/* The server closes: its registration goes. */
		pbus_client_close(server);
		server = NULL;
		for (int64_t until = now_ms() + WAIT_MS; now_ms() < until;) {
			struct timespec ts = {0, 10 * 1000000};

			if (pbus_client_lookup_service(other, address, &info) == 0 && !info.available)
				break;
			nanosleep(&ts, NULL);
		}
		CHECK(!info.available);
		if (!CHECK_EQ(events.n, 4u))
			events_dump();
	}
	pbus_client_close(other);
	pbus_client_close(watcher);
	pbus_client_close(server);
	pbus_check_end();
}

/* pbusd restarts: the registration and the watch are renewed, the watcher
 * told again; then one whose address another took meanwhile is refused,
 * and dispatch says so once. */
static void test_reconnect(void)
{
	struct pbus_client *server = connect_or_fail("server"), *watcher = connect_or_fail("watcher"),
			   *thief = NULL;
	struct pbus_client_options o = {.socket_dir = testd.socket_dir, .name = "thief"};
	char address[256];
	struct pbus_service_info info;
	bool renewed = false;

	pbus_check_begin("reconnect");
	address_of(address, sizeof(address), "", "com.example.R");
	events.n = 0;
	if (server && watcher) {
		CHECK_EQ(pbus_client_register_service(server, address, 2, 0, "pbus-test-r"), 0);
		CHECK_EQ(pbus_client_watch_service(watcher, address, on_service, &events), 0);
		CHECK(run_until(watcher, NULL, 1, WAIT_MS));
		CHECK(events.n == 1 && events.e[0].available);

		/* 1. Both renewed: after the restart the watcher sees the
		 * service again (at once, or after a "not available" if it came
		 * back before the server). */
		pbusd_stop();
		CHECK(pbusd_start());
		for (int64_t until = now_ms() + RECONNECT_WAIT_MS; !renewed && now_ms() < until;) {
			if (!run_until(server, watcher, events.n + 1, (int)(until - now_ms())))
				break;
			renewed = events.e[events.n - 1].available;
		}
		if (!CHECK(renewed))
			events_dump();
		/* The watcher may hear of the renewed registration before the
		 * server's client has taken its own handshake's reply. */
		CHECK(run_until_connected(server, watcher, WAIT_MS));
		CHECK_EQ(pbus_client_lookup_service(watcher, address, &info), 0);
		CHECK(info.available && info.major == 2 && info.pid == getpid() &&
		      !strcmp(info.endpoint, "pbus-test-r"));

		/* 2. pbusd restarts and another server takes the address before
		 * ours comes back: ours is refused, once, and the other keeps it. */
		pbusd_stop();
		CHECK(pbusd_start());
		CHECK_EQ(pbus_client_connect(testd.instance, &o, &thief), 0);
		if (thief)
			CHECK_EQ(pbus_client_register_service(thief, address, 9, 0, "pbus-test-thief"), 0);
		CHECK(run_until_error(server, NULL, RECONNECT_WAIT_MS));
		CHECK_MSG(last_error == -EADDRINUSE, "dispatch: %d", last_error);
		CHECK_EQ(pbus_client_dispatch(server), 0); /* reported once */
		CHECK(pbus_client_connected(server));
		CHECK_EQ(pbus_client_lookup_service(server, address, &info), 0);
		CHECK(info.available && info.major == 9 && !strcmp(info.endpoint, "pbus-test-thief"));
		/* Still remembered: unregistering it is no error, and does not
		 * touch the thief's. */
		CHECK_EQ(pbus_client_unregister_service(server, address), 0);
		CHECK_EQ(pbus_client_lookup_service(server, address, &info), 0);
		CHECK(info.available && info.major == 9);
	}
	pbus_client_close(thief);
	pbus_client_close(watcher);
	pbus_client_close(server);
	pbus_check_end();
}

int main(int argc, char **argv)
{
	pbus_check_suite("client-service");
	pbusd_path = argc > 1 ? argv[1] : PBUS_TEST_PBUSD;
	schema_path = argc > 2 ? argv[2] : PBUS_TEST_SCHEMA;
	if (access(pbusd_path, X_OK) < 0 || access(schema_path, R_OK) < 0) {
		printf("FAIL: client-service/setup: %s or %s missing\n", pbusd_path, schema_path);
		return 1;
	}
	pbus_testd_watchdog("client-service", &testd, WATCHDOG_S);
	{
		char name[64];

		snprintf(name, sizeof(name), "svctest-%d", (int)getpid());
		if (!pbus_testd_init(&testd, pbusd_path, name)) {
			printf("FAIL: client-service/setup: cannot make a temporary folder: %s\n", strerror(errno));
			return 1;
		}
	}
	atexit(cleanup);
	if (!pbusd_start()) {
		printf("FAIL: client-service/setup: cannot start %s\n", pbusd_path);
		return 1;
	}
	test_address();
	test_register_watch();
	test_reconnect();
	CHECK_EXIT();
}
