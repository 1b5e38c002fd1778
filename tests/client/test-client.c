/* SPDX-License-Identifier: MIT */
/*
 * test-client.c: the socket client (parambus/client.h) against the real
 * pbusd.
 *
 *     test-client [PBUSD [SCHEMA]]
 *
 * PBUSD defaults to the pbusd of the build tree this program was built in,
 * SCHEMA to tests/cli/fixtures/test.pbs (a schema with every type). pbusd
 * runs with --socket-dir in a temporary directory; readiness comes through
 * --notify-fd, and every wait for a notification is a poll() on
 * pbus_client_fd() with a deadline, never a sleep. Each case prints
 * "PASS: client/<name>" or "FAIL: client/<name>: <first failed check>";
 * the exit status is non-zero if any failed. Every pbusd started here is
 * killed at the end, also when a watchdog ends a hung run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/parambus.h>

#include "pbus-check.h"
#include "pbus-testd.h"
#include "pbus-check-info.h"

#ifndef PBUS_TEST_PBUSD
#define PBUS_TEST_PBUSD "daemon/pbusd"
#endif
#ifndef PBUS_TEST_SCHEMA
#define PBUS_TEST_SCHEMA "tests/cli/fixtures/test.pbs"
#endif

#define WAIT_MS 5000        /* for anything that should come at once */
#define RECONNECT_WAIT_MS 8000 /* the first reconnect comes after 1 s */
#define WATCHDOG_S 180

/* --- pbusd ---------------------------------------------------------------------- */

static const char *pbusd_path, *schema_path;
static struct pbus_testd testd; /* pbusd, its socket and state folders */
static char other_schema[300];

static int64_t now_ms(void)
{
	return pbus_testd_now_ms();
}

/* Start pbusd on @schema with @extra options (NULL-terminated, or NULL);
 * wait for READY=1 on --notify-fd. */
static bool pbusd_start_with(const char *schema, const char *const *extra)
{
	return pbus_testd_start(&testd, schema, extra);
}

static bool pbusd_start(const char *schema)
{
	return pbusd_start_with(schema, NULL);
}

/* Stop pbusd with @sig and reap it. */
static void pbusd_stop(int sig)
{
	pbus_testd_stop(&testd, sig);
}

static void cleanup(void)
{
	pbus_testd_cleanup(&testd);
}

/* --- Recording callbacks ---------------------------------------------------------- */

#define RECORD_MAX 512

/* One callback: an event, or one value of a VALUES event. */
struct record {
	uint32_t subscription;
	enum pbus_client_event event;
	uint32_t batch;  /* which call it came with */
	uint32_t index;
	uint64_t seq;
	uint32_t status;
	char text[64];
	int64_t at_ms;
	bool in_request; /* called while a request was running: must never be */
};

struct recorder {
	struct record r[RECORD_MAX];
	size_t n;
	uint32_t batches;
};

static struct recorder rec;
static bool request_running;

static void record_cb(struct pbus_client *client, uint32_t subscription,
		      enum pbus_client_event event, const struct pbus_client_value *values,
		      size_t count, void *userdata)
{
	struct recorder *r = userdata;

	r->batches++;
	if (event != PBUS_CLIENT_EVENT_VALUES) {
		if (r->n < RECORD_MAX)
			r->r[r->n++] = (struct record){.subscription = subscription, .event = event,
						       .batch = r->batches, .at_ms = now_ms(),
						       .in_request = request_running};
		return;
	}
	for (size_t i = 0; i < count && r->n < RECORD_MAX; i++) {
		struct record *x = &r->r[r->n++];

		*x = (struct record){.subscription = subscription, .event = event,
				     .batch = r->batches, .index = values[i].index,
				     .seq = values[i].seq, .status = values[i].status,
				     .at_ms = now_ms(), .in_request = request_running};
		pbus_client_format(client, values[i].index, values[i].value, values[i].length,
				   x->text, sizeof(x->text));
	}
}

static void rec_reset(void)
{
	rec.n = 0;
}

/* The last value of @index that @subscription got, or NULL. */
static const struct record *rec_last(uint32_t subscription, uint32_t index)
{
	for (size_t i = rec.n; i-- > 0;)
		if (rec.r[i].subscription == subscription && rec.r[i].event == PBUS_CLIENT_EVENT_VALUES &&
		    rec.r[i].index == index)
			return &rec.r[i];
	return NULL;
}

static bool rec_has_value(uint32_t subscription, uint32_t index, const char *text)
{
	for (size_t i = 0; i < rec.n; i++)
		if (rec.r[i].subscription == subscription && rec.r[i].event == PBUS_CLIENT_EVENT_VALUES &&
		    rec.r[i].index == index && !strcmp(rec.r[i].text, text))
			return true;
	return false;
}

static size_t rec_count_event(uint32_t subscription, enum pbus_client_event event)
{
	size_t n = 0;

	for (size_t i = 0; i < rec.n; i++)
		n += rec.r[i].subscription == subscription && rec.r[i].event == event;
	return n;
}

/* Print what was recorded, after a failed check about it. */
static void rec_dump(void)
{
	for (size_t i = 0; i < rec.n; i++)
		printf("  record %zu: subscription %u event %d batch %u index %u value '%s' seq %llu\n",
		       i, rec.r[i].subscription, (int)rec.r[i].event, rec.r[i].batch, rec.r[i].index,
		       rec.r[i].text, (unsigned long long)rec.r[i].seq);
}

static int last_dispatch_error;

/* Poll pbus_client_fd() and dispatch until @done() holds or @timeout_ms
 * passes; true if it holds. */
static bool run_until(struct pbus_client *c, bool (*done)(void *), void *arg, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	last_dispatch_error = 0;
	while (!done(arg)) {
		struct pollfd p = {.fd = pbus_client_fd(c), .events = POLLIN};
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return false;
		r = pbus_client_dispatch(c);
		if (r < 0) {
			last_dispatch_error = r;
			return done(arg);
		}
	}
	return true;
}

struct want_value {
	uint32_t subscription, index;
	const char *text;
};

static bool got_value(void *arg)
{
	const struct want_value *w = arg;

	return rec_has_value(w->subscription, w->index, w->text);
}

static bool wait_value(struct pbus_client *c, uint32_t subscription, uint32_t index,
		       const char *text, int timeout_ms)
{
	struct want_value w = {subscription, index, text};

	return run_until(c, got_value, &w, timeout_ms);
}

struct want_event {
	uint32_t subscription;
	enum pbus_client_event event;
	size_t count;
};

static bool got_event(void *arg)
{
	const struct want_event *w = arg;

	return rec_count_event(w->subscription, w->event) >= w->count;
}

static bool got_dispatch_error(void *arg)
{
	(void)arg;
	return last_dispatch_error != 0;
}

/* --- Helpers ------------------------------------------------------------------------ */

static struct pbus_client_options options(void)
{
	return (struct pbus_client_options){.socket_dir = testd.socket_dir, .name = "test-client"};
}

static uint32_t index_of(struct pbus_client *c, const char *name)
{
	uint32_t index = UINT32_MAX;

	CHECK_MSG(pbus_client_find(c, name, &index) == 0, "find %s", name);
	return index;
}

/* Set one parameter from text through the client. */
static int set_text(struct pbus_client *c, const char *name, const char *text)
{
	unsigned char buf[256];
	struct pbus_write w = {0};
	size_t length;
	int r;

	if ((r = pbus_client_find(c, name, &w.index)) < 0 ||
	    (r = pbus_client_parse(c, w.index, text, buf, sizeof(buf), &length)) < 0)
		return r;
	w.value = buf;
	w.length = length;
	request_running = true;
	r = pbus_client_set(c, &w, 1);
	request_running = false;
	return r;
}

/* Get one parameter as text through the client. */
static int get_text(struct pbus_client *c, const char *name, char *buf, size_t size)
{
	struct pbus_client_value v;
	uint32_t index;
	int r;

	if ((r = pbus_client_find(c, name, &index)) < 0)
		return r;
	request_running = true;
	r = pbus_client_get(c, &index, 1, &v);
	request_running = false;
	if (r < 0)
		return r;
	r = pbus_client_format(c, index, v.value, v.length, buf, size);
	return r < 0 ? r : 0;
}

/* Set one parameter through the segment, as a direct writer would. */
static int set_segment(const char *name, const char *text)
{
	struct pbus_table *t;
	const struct pbus_param *p;
	unsigned char buf[256];
	size_t length;
	int r = pbus_table_open(testd.instance, PBUS_OPEN_WRITE, &t);

	if (r < 0)
		return r;
	if ((r = pbus_table_find(t, name, &p)) == 0 &&
	    (r = pbus_param_parse(p, text, buf, sizeof(buf), &length)) == 0)
		r = pbus_param_set(p, buf, length);
	pbus_table_close(t);
	return r;
}

static struct pbus_client *connect_or_fail(void)
{
	struct pbus_client_options o = options();
	struct pbus_client *c = NULL;
	int r = pbus_client_connect(testd.instance, &o, &c);

	CHECK_MSG(r == 0, "connect: %s", pbus_strerror(r));
	return r == 0 ? c : NULL;
}

/* --- The cases ------------------------------------------------------------------------ */

static void test_connect(void)
{
	struct pbus_client_options o = options();
	struct pbus_schema *schema = NULL;
	struct pbus_client *c = NULL;
	const struct pbus_schema *got;
	int r, fd;

	pbus_check_begin("connect");
	CHECK(pbus_schema_load(schema_path, NULL, 0, &schema) == 0);
	r = pbus_client_connect(testd.instance, &o, &c);
	CHECK_MSG(r == 0, "connect: %s", pbus_strerror(r));
	if (c && schema) {
		CHECK(pbus_client_connected(c));
		fd = pbus_client_fd(c);
		CHECK(fd >= 0 && fcntl(fd, F_GETFD) & FD_CLOEXEC);
		got = pbus_client_schema(c);
		CHECK(got != NULL);
		CHECK_EQ(pbus_schema_param_count(got), pbus_schema_param_count(schema));
		CHECK(pbus_schema_hash(got) == pbus_schema_hash(schema));
		CHECK(!strcmp(pbus_schema_param_name(got, 3), "trim"));
		/* The schema's own hash is accepted, as 0 is. */
		o.schema_hash = pbus_schema_hash(schema);
		pbus_client_close(c);
		c = NULL;
		CHECK(pbus_client_connect(testd.instance, &o, &c) == 0);
		/* Nothing happened: dispatch delivers nothing and does not block. */
		CHECK_EQ(pbus_client_dispatch(c), 0);
	}
	CHECK_EQ(pbus_client_connect(NULL, &o, &c), -EINVAL);
	CHECK_EQ(pbus_client_fd(NULL), -EBADF);
	CHECK(!pbus_client_connected(NULL));
	CHECK_EQ(pbus_client_dispatch(NULL), -EINVAL);
	pbus_client_close(NULL);
	pbus_client_close(c);
	pbus_schema_free(schema);
	pbus_check_end();
}

static void test_connect_errors(void)
{
	struct pbus_client_options o = options();
	struct pbus_client *c = NULL;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char name[64];
	int fd, r;

	pbus_check_begin("connect-errors");
	/* No socket for the instance. */
	snprintf(name, sizeof(name), "clienttest-%d-absent", (int)getpid());
	CHECK_EQ(pbus_client_connect(name, &o, &c), -ENOENT);
	/* A socket nobody listens on (a pbusd that was killed). */
	snprintf(name, sizeof(name), "clienttest-%d-dead", (int)getpid());
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/%s.sock", testd.socket_dir, name) >=
	    sizeof(sa.sun_path))
		CHECK(!"socket path too long");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK_EQ(pbus_client_connect(name, &o, &c), -ECONNREFUSED);
	close(fd);
	unlink(sa.sun_path);
	/* Another schema: the server refuses, the client says -ESTALE. */
	o.schema_hash = UINT64_C(0x1234567890abcdef);
	r = pbus_client_connect(testd.instance, &o, &c);
	CHECK_MSG(r == -ESTALE, "connect with a wrong hash: %d (%s)", r, pbus_strerror(r));
	o.schema_hash = 0;
	/* Arguments. */
	CHECK_EQ(pbus_client_connect("bad/name", &o, &c), -EINVAL);
	CHECK_EQ(pbus_client_connect(testd.instance, &o, NULL), -EINVAL);
	o.name = "a name that is far too long for the HELLO message of the protocol, over 64 bytes";
	CHECK_EQ(pbus_client_connect(testd.instance, &o, &c), -EINVAL);
	/* The search of docs/socket-protocol.md §1: PBUS_SOCKET_DIR first. */
	o.socket_dir = NULL;
	o.name = NULL;
	setenv("PBUS_SOCKET_DIR", testd.socket_dir, 1);
	r = pbus_client_connect(testd.instance, &o, &c);
	CHECK_MSG(r == 0, "connect through PBUS_SOCKET_DIR: %s", pbus_strerror(r));
	unsetenv("PBUS_SOCKET_DIR");
	pbus_client_close(c);
	pbus_check_end();
}

static void test_find(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_param_info info;
	const char *label;
	int32_t value;
	uint32_t index = 77;

	pbus_check_begin("find");
	if (c) {
		CHECK(pbus_client_find(c, "trim", &index) == 0 && index == 3);
		CHECK(pbus_client_find(c, "identity.manufacturer", &index) == 0 && index == 0);
		CHECK(pbus_client_find(c, "secret", &index) == 0 && index == 20);
		index = 77;
		CHECK_EQ(pbus_client_find(c, "nosuch", &index), -ENOENT);
		CHECK_EQ(pbus_client_find(c, "Trim", &index), -ENOENT);
		CHECK_EQ(index, 77); /* untouched on failure */
		CHECK_EQ(pbus_client_find(c, NULL, &index), -EINVAL);
		CHECK(pbus_client_describe(c, 12, &info) == 0);
		CHECK(!strcmp(info.name, "voltage_setpoint") && !strcmp(info.unit, "V") &&
		      !strcmp(info.group, "operators") && info.type == PBUS_TYPE_DOUBLE &&
		      (info.flags & PBUS_PARAM_PERSISTENT) && (info.flags & PBUS_PARAM_HAS_MAX) &&
		      info.max.d == 30 && info.step.d == 0.001 && info.value_size == 8);
		CHECK_EQ(pbus_client_describe(c, 999, &info), -ENOENT);
		CHECK(pbus_client_enumerator(c, 17, 3, &label, &value) == 0 &&
		      !strcmp(label, "STANDBY") && value == -1);
		CHECK_EQ(pbus_client_enumerator(c, 17, 4, &label, &value), -ENOENT);
		CHECK_EQ(pbus_client_enumerator(c, 3, 0, &label, &value), -EINVAL);
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* Texts to parse as a value of every parameter of the test schema: good
 * and bad ones of each type. */
static const char *const view_texts[] = {
	"0", "1", "-1", "5", "-11", "2.5", "9", "31", "1e400", "nan", "true", "false", "ON",
	"STANDBY", "BOGUS", "bench 1", "123456789", "00ff", "0g", "0011223344", "1.5,-2,3",
	"1,2,3,4,5", "", "x", "18446744073709551616",
};

/* The client's schema view (parambus/view.h) gives the same answers as the
 * table's view of the same instance and as the pbus_client_* functions,
 * for every parameter; its error paths. */
static void test_view(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_table *t = NULL;
	const struct pbus_view *cv, *tv;
	struct pbus_param_info a, b;
	unsigned char buf[64], buf2[64];
	char out[128], out2[128];
	const char *label, *label2;
	int32_t v, v2;
	uint32_t index;
	size_t len, len2;
	int r;

	pbus_check_begin("view");
	r = pbus_table_open(testd.instance, PBUS_OPEN_READ, &t);
	CHECK_MSG(r == 0, "open the table: %s", pbus_strerror(r));
	if (c && t) {
		cv = pbus_client_view(c);
		tv = pbus_table_view(t);
		CHECK(cv != NULL && tv != NULL);
		CHECK_EQ(pbus_view_count(cv), pbus_view_count(tv));
		CHECK_EQ(pbus_view_count(cv), pbus_schema_param_count(pbus_client_schema(c)));
		for (uint32_t i = 0; i < pbus_view_count(cv) && i < pbus_view_count(tv); i++) {
			CHECK_EQ(pbus_view_describe(cv, i, &a), 0);
			CHECK_EQ(pbus_view_describe(tv, i, &b), 0);
			pbus_check_same_info(&a, &b);
			CHECK_EQ(pbus_client_describe(c, i, &b), 0);
			pbus_check_same_info(&a, &b);
			CHECK(!strcmp(a.name, pbus_schema_param_name(pbus_client_schema(c), i)));
			index = 999;
			CHECK(pbus_view_find(cv, a.name, &index) == 0 && index == i);
			index = 999;
			CHECK(pbus_client_find(c, a.name, &index) == 0 && index == i);
			for (uint32_t k = 0; k <= a.enum_count; k++) {
				r = pbus_view_enumerator(cv, i, k, &label, &v);
				CHECK_EQ(r, pbus_view_enumerator(tv, i, k, &label2, &v2));
				CHECK_EQ(r, pbus_client_enumerator(c, i, k, NULL, NULL));
				if (r == 0) {
					CHECK(!strcmp(label, label2) && v == v2);
					CHECK(pbus_view_enum_value(cv, i, label, &v2) == 0 && v2 == v);
					CHECK(pbus_view_enum_label(cv, i, v, &label2) == 0 &&
					      !strcmp(label2, label));
				}
			}
			CHECK_EQ(pbus_view_enum_value(cv, i, "NO_SUCH", &v),
				 pbus_view_enum_value(tv, i, "NO_SUCH", &v2));
			CHECK_EQ(pbus_view_enum_label(cv, i, 12345, &label),
				 pbus_view_enum_label(tv, i, 12345, &label2));
			for (size_t k = 0; k < sizeof(view_texts) / sizeof(view_texts[0]); k++) {
				r = pbus_view_parse(cv, i, view_texts[k], buf, sizeof(buf), &len);
				CHECK_MSG(r == pbus_view_parse(tv, i, view_texts[k], buf2, sizeof(buf2),
							       &len2),
					  "%s: parse '%s' differs", a.name, view_texts[k]);
				CHECK_EQ(r, pbus_client_parse(c, i, view_texts[k], buf2, sizeof(buf2),
							      &len2));
				if (r != 0)
					continue;
				CHECK(len == len2 && !memcmp(buf, buf2, len));
				r = pbus_view_format(cv, i, buf, len, out, sizeof(out));
				CHECK_EQ(r, pbus_view_format(tv, i, buf, len, out2, sizeof(out2)));
				CHECK(r >= 0 && !strcmp(out, out2));
				CHECK_EQ(r, pbus_client_format(c, i, buf, len, out2, sizeof(out2)));
				CHECK(r >= 0 && !strcmp(out, out2));
			}
		}
		/* Errors. */
		index = 77;
		CHECK_EQ(pbus_view_find(cv, "nosuch", &index), -ENOENT);
		CHECK_EQ(index, 77);
		CHECK_EQ(pbus_view_find(cv, NULL, &index), -EINVAL);
		CHECK_EQ(pbus_view_describe(cv, 999, &a), -ENOENT);
		CHECK_EQ(pbus_view_describe(cv, 0, NULL), -EINVAL);
		CHECK_EQ(pbus_view_enumerator(cv, 999, 0, &label, &v), -ENOENT);
		CHECK_EQ(pbus_view_enumerator(cv, index_of(c, "trim"), 0, &label, &v), -EINVAL);
		CHECK_EQ(pbus_view_enum_value(cv, index_of(c, "mode"), NULL, &v), -EINVAL);
		CHECK_EQ(pbus_view_enum_value(cv, index_of(c, "mode"), "STANDBY", &v), 0);
		CHECK_EQ(v, -1);
		CHECK_EQ(pbus_view_enum_label(cv, 999, 0, &label), -ENOENT);
		CHECK_EQ(pbus_view_parse(cv, 999, "1", buf, sizeof(buf), &len), -ENOENT);
		CHECK_EQ(pbus_view_parse(cv, 0, NULL, buf, sizeof(buf), &len), -EINVAL);
		CHECK_EQ(pbus_view_format(cv, 999, buf, 1, out, sizeof(out)), -ENOENT);
		CHECK_EQ(pbus_view_format(cv, 0, NULL, 1, out, sizeof(out)), -EINVAL);
		CHECK(pbus_client_view(NULL) == NULL);
		CHECK_EQ(pbus_client_describe(NULL, 0, &a), -EINVAL);
		CHECK_EQ(pbus_client_find(NULL, "trim", &index), -EINVAL);
		CHECK_EQ(pbus_client_parse(NULL, 0, "1", buf, sizeof(buf), &len), -EINVAL);
		CHECK_EQ(pbus_client_format(NULL, 0, buf, 1, out, sizeof(out)), -EINVAL);
		CHECK_EQ(pbus_client_enumerator(NULL, 0, 0, &label, &v), -EINVAL);
	}
	pbus_table_close(t);
	pbus_client_close(c);
	pbus_check_end();
}

static void test_get(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_client_value v[4];
	uint32_t idx[4];
	char text[64];
	size_t length;
	unsigned char buf[64];

	pbus_check_begin("get");
	if (c) {
		idx[0] = index_of(c, "trim");
		idx[1] = index_of(c, "mode");
		idx[2] = index_of(c, "limits");
		idx[3] = index_of(c, "measured_voltage");
		CHECK(pbus_client_get(c, idx, 4, v) == 0);
		CHECK(v[0].index == idx[0] && v[0].length == 1 && v[0].status == PBUS_STATUS_OK);
		CHECK(pbus_client_format(c, idx[1], v[1].value, v[1].length, text, sizeof(text)) == 3 &&
		      !strcmp(text, "OFF"));
		CHECK(pbus_client_format(c, idx[2], v[2].value, v[2].length, text, sizeof(text)) > 0 &&
		      !strcmp(text, "1.5,-2,3"));
		CHECK_EQ(v[3].status, PBUS_STATUS_INVALID); /* no default, never written */
		CHECK(v[0].timestamp_ns > 0);
		/* The same value read from the segment. */
		CHECK(get_text(c, "label", text, sizeof(text)) == 0 && !strcmp(text, "bench 1"));
		/* Refusals: all or nothing. */
		idx[1] = index_of(c, "secret");
		CHECK_EQ(pbus_client_get(c, idx, 2, v), -EACCES);
		idx[1] = 999;
		CHECK_EQ(pbus_client_get(c, idx, 2, v), -ENOENT);
		CHECK_EQ(pbus_client_get(c, idx, 0, v), -EINVAL);
		CHECK_EQ(pbus_client_get(c, NULL, 1, v), -EINVAL);
		/* The connection is still good after refusals. */
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "0"));
		/* parse and format. */
		CHECK(pbus_client_parse(c, index_of(c, "gain"), "2.5", buf, sizeof(buf), &length) == 0 &&
		      length == 4);
		CHECK_EQ(pbus_client_parse(c, index_of(c, "gain"), "9", buf, sizeof(buf), &length),
			 -ERANGE);
		CHECK_EQ(pbus_client_parse(c, index_of(c, "mode"), "BOGUS", buf, sizeof(buf), &length),
			 -EINVAL);
		CHECK_EQ(pbus_client_parse(c, index_of(c, "label"), "123456789", buf, sizeof(buf),
					   &length), -EMSGSIZE);
		CHECK_EQ(pbus_client_parse(c, 999, "1", buf, sizeof(buf), &length), -ENOENT);
		CHECK_EQ(pbus_client_format(c, 999, buf, 1, text, sizeof(text)), -ENOENT);
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_set(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_write w[3];
	unsigned char b0[8], b1[8], b2[16];
	size_t l0, l1, l2;
	char text[64];
	uint64_t seq_before;
	struct pbus_client_value v;
	uint32_t trim;
	int r;

	pbus_check_begin("set");
	if (c) {
		trim = index_of(c, "trim");
		CHECK(pbus_client_get(c, &trim, 1, &v) == 0);
		seq_before = v.seq;
		/* A batch: all applied, each with its version. */
		memset(w, 0, sizeof(w));
		w[0].index = trim;
		w[1].index = index_of(c, "mode");
		w[2].index = index_of(c, "label");
		CHECK(pbus_client_parse(c, w[0].index, "3", b0, sizeof(b0), &l0) == 0);
		CHECK(pbus_client_parse(c, w[1].index, "ON", b1, sizeof(b1), &l1) == 0);
		CHECK(pbus_client_parse(c, w[2].index, "hello", b2, sizeof(b2), &l2) == 0);
		w[0].value = b0, w[0].length = l0;
		w[1].value = b1, w[1].length = l1;
		w[2].value = b2, w[2].length = l2;
		w[0].result = w[1].result = w[2].result = 99;
		r = pbus_client_set(c, w, 3);
		CHECK_MSG(r == 0, "set batch: %s", pbus_strerror(r));
		CHECK(w[0].result == 0 && w[1].result == 0 && w[2].result == 0);
		CHECK_EQ(w[0].seq, seq_before + 1);
		CHECK(w[1].seq > 0 && w[2].seq > 0);
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "3"));
		CHECK(get_text(c, "mode", text, sizeof(text)) == 0 && !strcmp(text, "ON"));
		CHECK(get_text(c, "label", text, sizeof(text)) == 0 && !strcmp(text, "hello"));

		/* Atomic: one out of range refuses all, each write says why. The
		 * server checks again what the client did not (a raw value). */
		CHECK(pbus_client_parse(c, trim, "4", b0, sizeof(b0), &l0) == 0);
		w[1].index = index_of(c, "voltage_setpoint");
		{
			double d = 40;

			memcpy(b1, &d, 8);
			w[1].length = 8;
		}
		r = pbus_client_set(c, w, 2);
		CHECK_EQ(r, -ERANGE);
		CHECK_EQ(w[0].result, 0);
		CHECK_EQ(w[1].result, -ERANGE);
		CHECK(w[0].seq == 0 && w[1].seq == 0);
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "3"));

		/* Read-only, for everybody over the socket. */
		w[1].index = index_of(c, "measured_voltage");
		r = pbus_client_set(c, w, 2);
		CHECK_EQ(r, -EACCES);
		CHECK(w[0].result == 0 && w[1].result == -EACCES);
		/* A bool that is not 0/1, an unknown index, a length that does not fit. */
		w[1].index = index_of(c, "output_enable");
		b1[0] = 2;
		w[1].length = 1;
		CHECK_EQ(pbus_client_set(c, &w[1], 1), -EINVAL);
		w[1].index = 999;
		CHECK_EQ(pbus_client_set(c, &w[1], 1), -ENOENT);
		w[1].index = index_of(c, "label");
		w[1].value = "123456789";
		w[1].length = 9;
		CHECK_EQ(pbus_client_set(c, &w[1], 1), -EMSGSIZE);
		CHECK_EQ(pbus_client_set(c, w, 0), -EINVAL);
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "3"));

		/* With the APPLIED flag: this schema binds no hardware, so it
		 * is a plain SET (the flag goes over the wire: a pbusd that did
		 * not know it would close the connection). An unknown flag
		 * is refused here, nothing sent. */
		CHECK(pbus_client_parse(c, trim, "5", b0, sizeof(b0), &l0) == 0);
		w[0].result = 99;
		r = pbus_client_set_flags(c, w, 1, PBUS_CLIENT_SET_APPLIED);
		CHECK_MSG(r == 0, "set with APPLIED: %s", pbus_strerror(r));
		CHECK(w[0].result == 0 && w[0].seq > 0);
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "5"));
		CHECK_EQ(pbus_client_set_flags(c, w, 1, 2u), -EINVAL);
		CHECK_EQ(pbus_client_set_flags(c, w, 1, ~0u), -EINVAL);
		CHECK_EQ(pbus_client_set_flags(NULL, w, 1, PBUS_CLIENT_SET_APPLIED), -EINVAL);
		CHECK(pbus_client_connected(c));
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "5"));
		CHECK_EQ(set_text(c, "trim", "0"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* Write access is per client (SO_PEERCRED): somebody else gets EPERM. */
static void test_set_permission(void)
{
	pid_t pid;
	int status = -1;

	pbus_check_begin("set-eperm");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct pbus_client_options o = options();
		struct pbus_client *c;
		unsigned char b[1] = {1};
		struct pbus_write w = {.value = b, .length = 1};

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		if (pbus_client_connect(testd.instance, &o, &c) < 0)
			_exit(11);
		if (pbus_client_find(c, "trim", &w.index) < 0)
			_exit(12);
		if (pbus_client_set(c, &w, 1) != -EPERM || w.result != -EPERM)
			_exit(13);
		/* Reading is open to everybody who can connect. */
		if (pbus_client_get(c, &w.index, 1, &(struct pbus_client_value){0}) != 0)
			_exit(14);
		pbus_client_close(c);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the unprivileged child failed (status %d: 10 setuid, 11 connect, 12 find, "
		  "13 set not EPERM, 14 get)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	pbus_check_end();
}

/* A socket of another user's where the client looks (socket-protocol.md
 * §1): pbus_client_connect() is -EPERM and sends it nothing;
 * pbus_client_server_uid() names the socket and the uid. The server is a
 * child running as nobody that counts the bytes it receives. */
static void test_untrusted_server(void)
{
	struct pbus_client_options o = options();
	struct pbus_client *c = NULL;
	char dir[400], name[64], path[512], want[512];
	int ready[2], report[2];
	unsigned long long received = ~0ull;
	uid_t uid = 0;
	pid_t pid;
	int status = -1;

	pbus_check_begin("untrusted-server");
	unsetenv("PBUS_OWNER");
	snprintf(dir, sizeof(dir), "%s/untrusted", testd.dir);
	snprintf(name, sizeof(name), "clienttest-%d-untrusted", (int)getpid());
	snprintf(want, sizeof(want), "%s/%s.sock", dir, name);
	CHECK(mkdir(dir, 0755) == 0 && chown(dir, 65534, 65534) == 0);
	CHECK(pipe(ready) == 0 && pipe(report) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		unsigned long long total = 0;
		int fd;

		if (setgid(65534) < 0 || setuid(65534) < 0 || strlen(want) >= sizeof(sa.sun_path))
			_exit(10);
		memcpy(sa.sun_path, want, strlen(want) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
			_exit(11);
		if (write(ready[1], "l", 1) != 1)
			_exit(12);
		/* The client's connection, then pbus_client_server_uid()'s. */
		for (int k = 0; k < 2; k++) {
			int conn = accept(fd, NULL, NULL);
			char buf[256];
			ssize_t n;

			while (conn >= 0 && (n = read(conn, buf, sizeof(buf))) > 0)
				total += (unsigned long long)n;
			if (conn >= 0)
				close(conn);
		}
		_exit(write(report[1], &total, sizeof(total)) == sizeof(total) ? 0 : 13);
	}
	close(ready[1]);
	close(report[1]);
	CHECK(pid > 0 && read(ready[0], &(char){0}, 1) == 1);
	o.socket_dir = dir;
	CHECK_EQ(pbus_client_connect(name, &o, &c), -EPERM);
	CHECK_EQ(pbus_client_server_uid(name, dir, path, sizeof(path), &uid), 0);
	CHECK_MSG(uid == 65534 && !strcmp(path, want), "server_uid: %u %s", (unsigned)uid, path);
	CHECK(read(report[0], &received, sizeof(received)) == sizeof(received));
	CHECK_MSG(received == 0, "the untrusted server received %llu bytes", received);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(pbus_client_server_uid("bad/name", dir, path, sizeof(path), &uid), -EINVAL);
	close(ready[0]);
	close(report[0]);
	unlink(want);
	rmdir(dir);
	pbus_check_end();
}

static void test_subscribe(void)
{
	struct pbus_client *c = connect_or_fail();
	uint32_t idx[3], sub = 0;
	struct want_event initial;
	const struct record *last;
	size_t n;

	pbus_check_begin("subscribe");
	if (c) {
		rec_reset();
		idx[0] = index_of(c, "trim");
		idx[1] = index_of(c, "mode");
		idx[2] = index_of(c, "label");
		CHECK(pbus_client_subscribe(c, idx, 3, NULL, record_cb, &rec, &sub) == 0);
		CHECK(sub != 0);
		/* The first notification: every parameter's current value. */
		initial = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 3};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		CHECK(rec_has_value(sub, idx[0], "0") && rec_has_value(sub, idx[1], "ON") &&
		      rec_has_value(sub, idx[2], "hello"));
		CHECK(rec.n == 3 && rec.r[0].batch == rec.r[2].batch); /* one call */
		/* A change through the socket: only what changed comes. */
		n = rec.n;
		CHECK_EQ(set_text(c, "trim", "5"), 0);
		CHECK(wait_value(c, sub, idx[0], "5", WAIT_MS));
		CHECK_EQ(rec.n, n + 1);
		/* A change through the segment, by a direct writer. */
		CHECK_EQ(set_segment("label", "direct"), 0);
		CHECK(wait_value(c, sub, idx[2], "direct", WAIT_MS));
		last = rec_last(sub, idx[2]);
		CHECK(last && last->status == PBUS_STATUS_OK && last->seq > 0);
		/* Never called from inside a request. */
		for (size_t i = 0; i < rec.n; i++)
			CHECK(!rec.r[i].in_request);
		/* Refusals. */
		idx[0] = index_of(c, "secret");
		CHECK_EQ(pbus_client_subscribe(c, idx, 1, NULL, record_cb, &rec, &sub), -EACCES);
		idx[0] = 999;
		CHECK_EQ(pbus_client_subscribe(c, idx, 1, NULL, record_cb, &rec, &sub), -ENOENT);
		CHECK_EQ(pbus_client_subscribe(c, idx, 0, NULL, record_cb, &rec, &sub), -EINVAL);
		CHECK_EQ(pbus_client_subscribe(c, idx, 1, NULL, NULL, &rec, &sub), -EINVAL);
		/* A prefix: the two identity strings. */
		rec_reset();
		CHECK(pbus_client_subscribe_prefix(c, "identity.", NULL, record_cb, &rec, &sub) == 0);
		initial = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 2};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		CHECK(rec_has_value(sub, 0, "ACME Instruments") && rec_has_value(sub, 1, "SN-0001"));
		CHECK_EQ(pbus_client_subscribe_prefix(c, "nosuch", NULL, record_cb, &rec, &sub),
			 -ENOENT);
		CHECK_EQ(pbus_client_subscribe_prefix(c, "secret", NULL, record_cb, &rec, &sub),
			 -ENOENT); /* noread is never subscribed */
		CHECK_EQ(set_text(c, "label", "hello"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_deadband(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_subscribe_options o = {.deadband = 1.0};
	uint32_t vset = 0, banded = 0, every = 0;
	struct want_event initial;

	pbus_check_begin("deadband");
	if (c) {
		rec_reset();
		vset = index_of(c, "voltage_setpoint");
		CHECK_EQ(set_text(c, "voltage_setpoint", "0"), 0);
		CHECK(pbus_client_subscribe(c, &vset, 1, &o, record_cb, &rec, &banded) == 0);
		/* A second subscription without deadband shows when the server has
		 * seen each change. */
		CHECK(pbus_client_subscribe(c, &vset, 1, NULL, record_cb, &rec, &every) == 0);
		initial = (struct want_event){banded, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		initial.subscription = every;
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		/* 0.5 and then 0.9 are within 1 of the last value sent (0): dropped;
		 * 1.2 is not, although it is within 1 of 0.9. */
		CHECK_EQ(set_text(c, "voltage_setpoint", "0.5"), 0);
		CHECK(wait_value(c, every, vset, "0.5", WAIT_MS));
		CHECK_EQ(set_text(c, "voltage_setpoint", "0.9"), 0);
		CHECK(wait_value(c, every, vset, "0.9", WAIT_MS));
		CHECK_EQ(set_text(c, "voltage_setpoint", "1.2"), 0);
		CHECK(wait_value(c, banded, vset, "1.2", WAIT_MS));
		CHECK(wait_value(c, every, vset, "1.2", WAIT_MS));
		CHECK(!rec_has_value(banded, vset, "0.5") && !rec_has_value(banded, vset, "0.9"));
		CHECK_EQ(rec_count_event(banded, PBUS_CLIENT_EVENT_VALUES), 2);
		CHECK_EQ(set_text(c, "voltage_setpoint", "0"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_min_interval(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_subscribe_options o = {.min_interval_us = 300000};
	uint32_t trim = 0, sub = 0;
	struct want_event initial;
	int64_t previous = 0;
	size_t notifications = 0;
	char text[8];

	pbus_check_begin("min-interval");
	if (c) {
		rec_reset();
		trim = index_of(c, "trim");
		CHECK(pbus_client_subscribe(c, &trim, 1, &o, record_cb, &rec, &sub) == 0);
		initial = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		/* Ten writes in quick succession, well within one interval. */
		for (int i = 1; i <= 10; i++) {
			snprintf(text, sizeof(text), "%d", i - 5);
			CHECK_EQ(set_text(c, "trim", text), 0);
		}
		CHECK(wait_value(c, sub, trim, "5", WAIT_MS));
		/* Coalesced: the latest value, in at most a few notifications, at
		 * least an interval apart (less 50 ms for the clocks of two
		 * processes and scheduling). */
		for (size_t i = 0; i < rec.n; i++) {
			if (rec.r[i].subscription != sub)
				continue;
			if (notifications++ > 0)
				CHECK_MSG(rec.r[i].at_ms - previous >= 250,
					  "two notifications %lld ms apart",
					  (long long)(rec.r[i].at_ms - previous));
			previous = rec.r[i].at_ms;
		}
		CHECK_MSG(notifications <= 3, "%zu notifications for 10 writes", notifications);
		CHECK(!strcmp(rec_last(sub, trim)->text, "5"));
		CHECK_EQ(set_text(c, "trim", "0"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* docs/socket-protocol.md §3.4: after SUBSCRIBED and the first NOTIFY,
 * one whenever a value changed. Also a write that comes right after the
 * SUBSCRIBED reply, before anything else happened: a renewed subscription
 * is followed at once by the requests of a program that reconnected. (A
 * pbusd that started watching a newly subscribed parameter only some time
 * after SUBSCRIBED lost such writes; 20 rounds caught it nearly always.) */
static void test_write_after_subscribe(void)
{
	struct pbus_client *c = connect_or_fail();
	uint32_t fan = 0, sub = 0;
	int missed = 0;
	char text[8];

	pbus_check_begin("write-after-subscribe");
	if (c) {
		fan = index_of(c, "fan_level"); /* nobody else subscribes to it */
		for (int k = 0; k < 20; k++) {
			rec_reset();
			CHECK_EQ(set_text(c, "fan_level", "0"), 0);
			CHECK(pbus_client_subscribe(c, &fan, 1, NULL, record_cb, &rec, &sub) == 0);
			snprintf(text, sizeof(text), "%d", 1 + k % 5);
			CHECK_EQ(set_text(c, "fan_level", text), 0);
			if (!wait_value(c, sub, fan, text, 1000))
				missed++;
			CHECK_EQ(pbus_client_unsubscribe(c, sub), 0);
		}
		CHECK_EQ(set_text(c, "fan_level", "1"), 0);
		CHECK_MSG(missed == 0, "%d of 20 writes made right after SUBSCRIBED were never "
			  "notified", missed);
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_unsubscribe(void)
{
	struct pbus_client *c = connect_or_fail();
	uint32_t trim = 0, gone = 0, marker = 0;
	struct want_event initial;

	pbus_check_begin("unsubscribe");
	if (c) {
		rec_reset();
		trim = index_of(c, "trim");
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &gone) == 0);
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &marker) == 0);
		CHECK(gone != marker);
		initial = (struct want_event){gone, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		initial.subscription = marker;
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		CHECK_EQ(pbus_client_unsubscribe(c, gone), 0);
		CHECK_EQ(pbus_client_unsubscribe(c, gone), -ENOENT);
		CHECK_EQ(pbus_client_unsubscribe(c, 0), -ENOENT);
		CHECK_EQ(set_text(c, "trim", "8"), 0);
		CHECK(wait_value(c, marker, trim, "8", WAIT_MS));
		CHECK(!rec_has_value(gone, trim, "8"));
		CHECK_EQ(rec_count_event(gone, PBUS_CLIENT_EVENT_VALUES), 1);
		/* Unsubscribing from a callback's point of view: already queued
		 * notifications of it are not delivered either. */
		CHECK_EQ(set_text(c, "trim", "9"), 0);
		CHECK(wait_value(c, marker, trim, "9", WAIT_MS));
		CHECK_EQ(pbus_client_unsubscribe(c, marker), 0);
		CHECK_EQ(set_text(c, "trim", "0"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* Notifications that arrive while a request waits are kept, the fd says
 * so, and the next dispatch delivers them — never the request. */
static void test_event_loop(void)
{
	struct pbus_client *c = connect_or_fail();
	uint32_t trim = 0, sub = 0;
	struct want_event initial;
	struct pollfd p;
	int fd, delivered;
	int64_t until;

	pbus_check_begin("event-loop");
	if (c) {
		rec_reset();
		fd = pbus_client_fd(c);
		trim = index_of(c, "trim");
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub) == 0);
		initial = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &initial, WAIT_MS));
		/* Nothing pending: the fd is not readable. */
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		CHECK_EQ(poll(&p, 1, 0), 0);
		/* A change, then only requests for a while: whatever reads the
		 * NOTIFY, it is a request, which must keep it. */
		CHECK_EQ(set_segment("trim", "6"), 0);
		until = now_ms() + 300;
		while (now_ms() < until) {
			request_running = true;
			CHECK_EQ(pbus_client_ping(c, "x", 1), 0);
			request_running = false;
		}
		CHECK_EQ(rec.n, 1); /* nothing delivered by the requests */
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		CHECK_EQ(poll(&p, 1, WAIT_MS), 1);
		delivered = pbus_client_dispatch(c);
		CHECK_EQ(delivered, 1);
		CHECK(rec_has_value(sub, trim, "6"));
		/* Delivered: the fd is quiet again, and stays the same fd. */
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		CHECK_EQ(poll(&p, 1, 0), 0);
		CHECK_EQ(pbus_client_dispatch(c), 0);
		CHECK_EQ(pbus_client_fd(c), fd);
		for (size_t i = 0; i < rec.n; i++)
			CHECK(!rec.r[i].in_request);
		CHECK_EQ(set_text(c, "trim", "0"), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_stats(void)
{
	struct pbus_client *c = connect_or_fail();
	char buf[8192], small[8];
	int n;

	pbus_check_begin("stats");
	if (c) {
		n = pbus_client_stats(c, buf, sizeof(buf));
		CHECK_MSG(n > 0 && (size_t)n < sizeof(buf), "stats: %d", n);
		if (n > 0) {
			CHECK(buf[0] == '{' && strstr(buf, "\"clients_detail\""));
			CHECK(strstr(buf, "\"name\": \"test-client\"") || strstr(buf, "\"name\":\"test-client\""));
			CHECK(strstr(buf, testd.instance));
			/* snprintf-style: the full length (the counters move on, so
			 * not quite the same), the text cut. */
			n = pbus_client_stats(c, small, sizeof(small));
			CHECK_MSG(n >= (int)strlen(buf) - 2 && n <= (int)strlen(buf) + 2, "stats: %d", n);
			CHECK(strlen(small) == sizeof(small) - 1 && !strncmp(small, buf, sizeof(small) - 1));
			CHECK(pbus_client_stats(c, NULL, 0) > 0);
		}
		/* The whole text with one request: a JSON object, and ours
		 * counts each request once. */
		{
			char *json = NULL, *again = NULL;

			CHECK_EQ(pbus_client_stats_text(c, &json), 0);
			CHECK(json && json[0] == '{' && json[strlen(json) - 1] == '}');
			CHECK_EQ(pbus_client_stats_text(c, &again), 0);
			CHECK(again && strlen(again) >= strlen(json) - 2);
			free(json);
			free(again);
			CHECK_EQ(pbus_client_stats_text(c, NULL), -EINVAL);
		}
	}
	pbus_client_close(c);
	pbus_check_end();
}

static void test_ping(void)
{
	struct pbus_client *c = connect_or_fail();
	static unsigned char big[2 << 20];

	pbus_check_begin("ping");
	if (c) {
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (unsigned char)(i * 7);
		CHECK_EQ(pbus_client_ping(c, NULL, 0), 0);
		CHECK_EQ(pbus_client_ping(c, big, 100), 0);
		CHECK_EQ(pbus_client_ping(c, big, 500000), 0);
		/* Above max_frame (1 MiB by default): refused before it is sent. */
		CHECK_EQ(pbus_client_ping(c, big, sizeof(big)), -EMSGSIZE);
		CHECK_EQ(pbus_client_ping(c, "abc", 3), 0);
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* pbusd stops and comes back: the subscriptions come back with their ids,
 * DISCONNECTED then CONNECTED then fresh values. First the timer's
 * reconnect, then a request's. */
static void test_reconnect(void)
{
	struct pbus_client *c = connect_or_fail();
	struct pbus_client_options o = options();
	struct pbus_client *once = NULL;
	uint32_t trim = 0, sub = 0, index;
	struct want_event want;
	struct pbus_client_value v;
	char text[16];
	int fd, r;

	pbus_check_begin("reconnect");
	if (c) {
		rec_reset();
		fd = pbus_client_fd(c);
		trim = index_of(c, "trim");
		o.no_reconnect = true;
		CHECK(pbus_client_connect(testd.instance, &o, &once) == 0);
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub) == 0);
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		CHECK_EQ(set_text(c, "trim", "7"), 0);
		CHECK(wait_value(c, sub, trim, "7", WAIT_MS));

		/* 1. The timer: stop pbusd, start it again, only dispatch. trim is
		 * not persistent: the new pbusd starts from its default, 0. */
		pbusd_stop(SIGTERM);
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_DISCONNECTED, 1};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		CHECK(!pbus_client_connected(c));
		CHECK(pbusd_start(schema_path));
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_CONNECTED, 1};
		CHECK_MSG(run_until(c, got_event, &want, RECONNECT_WAIT_MS),
			  "no CONNECTED event (dispatch: %d)", last_dispatch_error);
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 3}; /* 0, 7, fresh */
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		CHECK(rec_last(sub, trim) && !strcmp(rec_last(sub, trim)->text, "0"));
		CHECK(pbus_client_connected(c));
		CHECK_EQ(pbus_client_fd(c), fd);
		/* In order: values, DISCONNECTED, CONNECTED, the fresh value. */
		if (!CHECK(rec.n >= 4 && rec.r[rec.n - 3].event == PBUS_CLIENT_EVENT_DISCONNECTED &&
			   rec.r[rec.n - 2].event == PBUS_CLIENT_EVENT_CONNECTED &&
			   rec.r[rec.n - 1].event == PBUS_CLIENT_EVENT_VALUES))
			rec_dump();
		/* The renewed subscription works under its old id. */
		CHECK_EQ(set_text(c, "trim", "4"), 0);
		CHECK(wait_value(c, sub, trim, "4", WAIT_MS));
		/* A client without reconnect stays disconnected. */
		if (once) {
			index = trim;
			r = pbus_client_get(once, &index, 1, &v);
			CHECK_MSG(r == -ENOTCONN, "get without reconnect: %d", r);
			CHECK(!pbus_client_connected(once));
			CHECK(pbus_client_dispatch(once) >= 0);
		}

		/* 2. A request while disconnected reconnects at once, long before
		 * the timer (1 s) would. */
		pbusd_stop(SIGKILL); /* the socket file stays: ECONNREFUSED */
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_DISCONNECTED, 2};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		index = trim;
		CHECK_EQ(pbus_client_get(c, &index, 1, &v), -ENOTCONN); /* nobody there */
		CHECK(pbusd_start(schema_path));
		r = get_text(c, "trim", text, sizeof(text));
		CHECK_MSG(r == 0 && !strcmp(text, "0"), "get after restart: %s", pbus_strerror(r));
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_CONNECTED, 2};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		CHECK_EQ(set_text(c, "trim", "2"), 0);
		CHECK(wait_value(c, sub, trim, "2", WAIT_MS));

		/* 3. pbusd stops while the client is idle: the next request finds
		 * the connection dead when it sends, and goes out again on a new
		 * one without a dispatch in between. */
		pbusd_stop(SIGTERM);
		CHECK(pbusd_start(schema_path));
		r = set_text(c, "trim", "1");
		CHECK_MSG(r == 0, "set after an unnoticed restart: %s", pbus_strerror(r));
		CHECK(get_text(c, "trim", text, sizeof(text)) == 0 && !strcmp(text, "1"));
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_CONNECTED, 3};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		CHECK_EQ(rec_count_event(sub, PBUS_CLIENT_EVENT_DISCONNECTED), 3);
		CHECK_EQ(rec_count_event(sub, PBUS_CLIENT_EVENT_CONNECTED), 3);
		for (size_t i = 0; i < rec.n; i++)
			CHECK(!rec.r[i].in_request);
		CHECK_EQ(set_text(c, "trim", "0"), 0);
	}
	pbus_client_close(once);
	pbus_client_close(c);
	pbus_check_end();
}

/* pbusd's limits: clients (the connection is refused with EUSERS) and
 * subscriptions per client (EMFILE, the connection stays). */
static void test_limits(void)
{
	static const char *const extra[] = {"--max-clients", "1", "--max-subscriptions", "2", NULL};
	struct pbus_client_options o = options();
	struct pbus_client *c = NULL, *second = NULL;
	uint32_t trim = 3, sub;
	int r;

	pbus_check_begin("limits");
	pbusd_stop(SIGTERM);
	CHECK(pbusd_start_with(schema_path, extra));
	r = pbus_client_connect(testd.instance, &o, &c);
	CHECK_MSG(r == 0, "connect: %s", pbus_strerror(r));
	if (c) {
		r = pbus_client_connect(testd.instance, &o, &second);
		CHECK_MSG(r == -EUSERS, "a second client: %d (%s)", r, pbus_strerror(r));
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub) == 0);
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub) == 0);
		CHECK_EQ(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub), -EMFILE);
		CHECK_EQ(pbus_client_ping(c, NULL, 0), 0);
		CHECK(pbus_client_connected(c));
	}
	pbus_client_close(second);
	pbus_client_close(c);
	pbusd_stop(SIGTERM);
	CHECK(pbusd_start(schema_path));
	pbus_check_end();
}

/* pbusd comes back with another schema: no reconnect, -ESTALE. */
static void test_stale(void)
{
	struct pbus_client *c = connect_or_fail();
	uint32_t trim = 0, sub = 0;
	struct want_event want;
	struct pbus_client_value v;
	int r;

	pbus_check_begin("stale");
	if (c) {
		rec_reset();
		trim = index_of(c, "trim");
		CHECK(pbus_client_subscribe(c, &trim, 1, NULL, record_cb, &rec, &sub) == 0);
		want = (struct want_event){sub, PBUS_CLIENT_EVENT_VALUES, 1};
		CHECK(run_until(c, got_event, &want, WAIT_MS));
		pbusd_stop(SIGTERM);
		CHECK(pbusd_start(other_schema));
		CHECK(run_until(c, got_dispatch_error, NULL, RECONNECT_WAIT_MS));
		CHECK_MSG(last_dispatch_error == -ESTALE, "dispatch: %d", last_dispatch_error);
		CHECK_EQ(rec_count_event(sub, PBUS_CLIENT_EVENT_DISCONNECTED), 1);
		CHECK_EQ(rec_count_event(sub, PBUS_CLIENT_EVENT_CONNECTED), 0);
		CHECK_EQ(pbus_client_dispatch(c), -ESTALE); /* for good */
		r = pbus_client_get(c, &trim, 1, &v);
		CHECK_MSG(r == -ESTALE, "get: %d", r);
		CHECK(!pbus_client_connected(c));
		/* The new instance is another program's business. */
		pbusd_stop(SIGTERM);
		CHECK(pbusd_start(schema_path));
	}
	pbus_client_close(c);
	pbus_check_end();
}

/* Copy the schema with one more parameter: another hash. */
static bool write_other_schema(void)
{
	FILE *in = fopen(schema_path, "r"), *out = fopen(other_schema, "w");
	char line[1024];
	bool ok = in && out;

	while (ok && fgets(line, sizeof(line), in))
		fputs(line, out);
	if (out) {
		fputs("param extra uint8 default=1\n", out);
		ok = fclose(out) == 0 && ok;
	}
	if (in)
		fclose(in);
	return ok;
}

int main(int argc, char **argv)
{
	pbus_check_suite("client");
	pbusd_path = argc > 1 ? argv[1] : PBUS_TEST_PBUSD;
	schema_path = argc > 2 ? argv[2] : PBUS_TEST_SCHEMA;
	if (access(pbusd_path, X_OK) < 0 || access(schema_path, R_OK) < 0) {
		printf("FAIL: client/setup: %s or %s missing\n", pbusd_path, schema_path);
		return 1;
	}
	pbus_testd_watchdog("client", &testd, WATCHDOG_S);
	{
		char name[64];

		snprintf(name, sizeof(name), "clienttest-%d", (int)getpid());
		/* Others may reach the socket (the EPERM case runs as nobody):
		 * the folder is 0755. */
		if (!pbus_testd_init(&testd, pbusd_path, name)) {
			printf("FAIL: client/setup: cannot make a temporary folder: %s\n", strerror(errno));
			return 1;
		}
	}
	atexit(cleanup);
	snprintf(other_schema, sizeof(other_schema), "%s/other.pbs", testd.dir);
	if (!write_other_schema() || !pbusd_start(schema_path)) {
		printf("FAIL: client/setup: cannot start %s\n", pbusd_path);
		return 1;
	}
	test_connect();
	test_connect_errors();
	test_find();
	test_view();
	test_get();
	test_set();
	/* make test runs as root; elsewhere this is a failure, not a skip. */
	if (geteuid() == 0) {
		test_set_permission();
		test_untrusted_server();
	} else {
		printf("FAIL: client/set-eperm: needs root (to run a client as another user)\n");
		printf("FAIL: client/untrusted-server: needs root (to run a server as another user)\n");
	}
	test_subscribe();
	test_deadband();
	test_min_interval();
	test_write_after_subscribe();
	test_unsubscribe();
	test_event_loop();
	test_stats();
	test_ping();
	test_reconnect();
	test_limits();
	test_stale();
	CHECK_EXIT();
}
