/* SPDX-License-Identifier: MIT */
/*
 * socket-server.c: benchmark scenario 2, the parameter server
 * (../shared/BENCHMARKS.md, docs/benchmarks.md). One program, several roles;
 * bench/run-socket-server.py runs them side by side against a real pbusd
 * serving bench/schemas/param-table.pbs (200 doubles p000..p199 and a
 * 64-byte string rec).
 *
 *   raw-server PATH REQ REP          a bare Unix-socket echo: for every REQ
 *                                    bytes read, REP bytes written back
 *   raw-client PATH REQ REP N        N round trips against raw-server; prints
 *                                    {"ns_per_op": ...}
 *   raw-mux-server PATH              the raw server of the 60 Hz run: one
 *                                    epoll loop over any number of clients;
 *                                    a request [u32 length][u32 reply
 *                                    length][bytes] gets a reply that long
 *   raw-hz-client PATH REQ REP SECONDS HZ
 *                                    REQ-byte requests, REP-byte replies,
 *                                    HZ a second; prints {"iterations": ...,
 *                                    "bytes_sent": ..., "bytes_received": ...}
 *   get-rtt INSTANCE N               N single-parameter GETs through the
 *                                    client library, one at a time
 *   displayer INSTANCE MODE SECONDS [HZ]
 *        MODE unbatched: one GET per parameter; batched: one GET of all
 *        201 per iteration; subscribed: one subscription to all, counting
 *        the values notified
 *   randomizer INSTANCE N MODE SECONDS [HZ]
 *        writes p000..p(N-1) and rec per iteration; unbatched: one SET per
 *        parameter; batched: one SET of N + 1
 *   load INSTANCE CLIENTS SECONDS    CLIENTS threads, each its own
 *        connection, subscribing to all parameters and writing its own
 *        p(k) 100 times a second; at the end every client's view must equal
 *        the table. Prints errors and mismatches.
 *
 * Every role prints one JSON object on stdout. Request and reply sizes of
 * the raw pair are those of the unbatched GET: 20 bytes (header, count,
 * index) and 52 bytes (header, count, one double's value record).
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/parambus.h>

#define PARAMS 200

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "socket-server: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

static int full_io(int fd, void *buf, size_t n, bool writing)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = writing ? write(fd, (char *)buf + done, n - done)
				    : read(fd, (char *)buf + done, n - done);

		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

static int raw_server(const char *path, size_t req, size_t rep)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char in[4096], out[4096] = {0};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), c;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 4) < 0)
		die("raw-server", errno);
	printf("{\"listening\": true}\n");
	fflush(stdout);
	while ((c = accept(fd, NULL, NULL)) >= 0) {
		while (full_io(c, in, req, false) == 0 && full_io(c, out, rep, true) == 0)
			;
		close(c);
	}
	return 0;
}

/* A connection to the raw server at @path, which may still be starting
 * (up to 2 s). */
static int raw_connect(const char *path, const char *who)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		die(who, errno);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	for (int tries = 0; connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0; tries++) {
		if (tries > 200)
			die(who, errno);
		usleep(10000);
	}
	return fd;
}

static int raw_client(const char *path, size_t req, size_t rep, long n)
{
	char in[4096], out[4096] = {0};
	int fd = raw_connect(path, "raw-client connect");
	int64_t t0;

	for (long i = 0; i < n / 10; i++) /* warm up */
		if (full_io(fd, out, req, true) < 0 || full_io(fd, in, rep, false) < 0)
			die("raw-client", errno);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (full_io(fd, out, req, true) < 0 || full_io(fd, in, rep, false) < 0)
			die("raw-client", errno);
	printf("{\"ns_per_op\": %.1f}\n", (double)(now_ns() - t0) / (double)n);
	close(fd);
	return 0;
}

/*
 * The raw pair of the 60 Hz run: the least a server of this shape can do.
 * raw-mux-server serves any number of clients from one epoll loop, as pbusd
 * does; a request is a frame [u32 length][u32 reply length][bytes], and the
 * reply is that many bytes. raw-hz-client sends frames of REQ bytes and
 * reads replies of REP bytes at HZ for SECONDS.
 */
#define RAW_FRAME_MAX 65536

struct raw_conn {
	int fd;
	size_t have;
	unsigned char buf[RAW_FRAME_MAX];
};

static void raw_conn_read(int ep, struct raw_conn *c)
{
	static unsigned char reply[RAW_FRAME_MAX];
	ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
	uint32_t len, rep;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		free(c);
		return;
	}
	if (n < 0)
		return;
	c->have += (size_t)n;
	while (c->have >= 8) {
		memcpy(&len, c->buf, 4);
		memcpy(&rep, c->buf + 4, 4);
		if (len < 8 || len > RAW_FRAME_MAX || rep < 4 || rep > RAW_FRAME_MAX)
			die("raw-mux-server: bad frame", EPROTO);
		if (c->have < len)
			break;
		memcpy(reply, &rep, 4);
		if (full_io(c->fd, reply, rep, true) < 0)
			die("raw-mux-server: send", errno);
		memmove(c->buf, c->buf + len, c->have - len);
		c->have -= len;
	}
}

static int raw_mux_server(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0), ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || ep < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 64) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("raw-mux-server", errno);
	printf("{\"listening\": true}\n");
	fflush(stdout);
	for (;;) {
		struct epoll_event events[32];
		int n = epoll_wait(ep, events, 32, -1);

		if (n < 0 && errno != EINTR)
			die("raw-mux-server: epoll_wait", errno);
		for (int i = 0; i < n; i++) {
			struct raw_conn *c = events[i].data.ptr;
			int cfd;

			if (c) {
				raw_conn_read(ep, c);
				continue;
			}
			while ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
				c = calloc(1, sizeof(*c));
				if (!c)
					die("raw-mux-server", ENOMEM);
				c->fd = cfd;
				ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = c};
				epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
			}
		}
	}
	return 0; /* not reached: the runner kills the server */
}

static void pace(int64_t *next, double hz);

static int raw_hz_client(const char *path, size_t req, size_t rep, double seconds, double hz)
{
	static unsigned char in[RAW_FRAME_MAX], out[RAW_FRAME_MAX];
	int fd;
	int64_t start, end, next;
	uint32_t len = (uint32_t)req, want = (uint32_t)rep;
	long iterations = 0;

	if (req < 8 || req > RAW_FRAME_MAX || rep < 4 || rep > RAW_FRAME_MAX)
		die("raw-hz-client: sizes", EINVAL);
	fd = raw_connect(path, "raw-hz-client connect");
	memcpy(out, &len, 4);
	memcpy(out + 4, &want, 4);
	start = next = now_ns();
	end = start + (int64_t)(seconds * 1e9);
	while (now_ns() < end) {
		if (full_io(fd, out, req, true) < 0 || full_io(fd, in, rep, false) < 0)
			die("raw-hz-client", errno);
		iterations++;
		pace(&next, hz);
	}
	printf("{\"iterations\": %ld, \"seconds\": %.3f, \"bytes_sent\": %ld, \"bytes_received\": %ld}\n",
	       iterations, (double)(now_ns() - start) / 1e9, iterations * (long)req, iterations * (long)rep);
	close(fd);
	return 0;
}

static struct pbus_client *connect_to(const char *instance)
{
	struct pbus_client *c = NULL;
	struct pbus_client_options o = {.name = "bench", .no_reconnect = true};
	int r = pbus_client_connect(instance, &o, &c);

	if (r < 0)
		die("connect", r);
	return c;
}

/* p000..p199 and rec as indexes. */
static void resolve(struct pbus_client *c, uint32_t *indexes)
{
	char name[8];

	for (int i = 0; i < PARAMS; i++) {
		snprintf(name, sizeof(name), "p%03d", i);
		if (pbus_client_find(c, name, &indexes[i]) < 0)
			die(name, ENOENT);
	}
	if (pbus_client_find(c, "rec", &indexes[PARAMS]) < 0)
		die("rec", ENOENT);
}

static int get_rtt(const char *instance, long n)
{
	struct pbus_client *c = connect_to(instance);
	struct pbus_client_value v;
	uint32_t index;
	int64_t t0;
	int r;

	if (pbus_client_find(c, "p000", &index) < 0)
		die("p000", ENOENT);
	for (long i = 0; i < n / 10; i++)
		if ((r = pbus_client_get(c, &index, 1, &v)) < 0)
			die("get", r);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if ((r = pbus_client_get(c, &index, 1, &v)) < 0)
			die("get", r);
	printf("{\"ns_per_op\": %.1f}\n", (double)(now_ns() - t0) / (double)n);
	pbus_client_close(c);
	return 0;
}

/* Sleep until the next iteration at @hz (0: do not). */
static void pace(int64_t *next, double hz)
{
	struct timespec ts;

	if (hz <= 0)
		return;
	*next += (int64_t)(1e9 / hz);
	ts.tv_sec = *next / 1000000000;
	ts.tv_nsec = *next % 1000000000;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static _Atomic long notified;

static void count_values(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
			 const struct pbus_client_value *values, size_t count, void *userdata)
{
	(void)client, (void)subscription, (void)values, (void)userdata;
	if (event == PBUS_CLIENT_EVENT_VALUES)
		atomic_fetch_add(&notified, (long)count);
}

static int displayer(const char *instance, const char *mode, double seconds, double hz)
{
	struct pbus_client *c = connect_to(instance);
	struct pbus_client_value values[PARAMS + 1];
	uint32_t indexes[PARAMS + 1], sub;
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9), next = start;
	long ops = 0;
	int r;

	resolve(c, indexes);
	if (!strcmp(mode, "subscribed")) {
		struct pollfd p = {.fd = pbus_client_fd(c), .events = POLLIN};

		/* A display refreshes at @hz: no need for more notifications. */
		struct pbus_subscribe_options so = {.min_interval_us = hz > 0 ? (uint32_t)(1e6 / hz) : 0};

		if ((r = pbus_client_subscribe(c, indexes, PARAMS + 1, &so, count_values, NULL, &sub)) < 0)
			die("subscribe", r);
		while (now_ns() < end) {
			poll(&p, 1, 100);
			if ((r = pbus_client_dispatch(c)) < 0)
				die("dispatch", r);
		}
		ops = atomic_load(&notified);
	} else {
		bool batched = !strcmp(mode, "batched");

		while (now_ns() < end) {
			if (batched) {
				if ((r = pbus_client_get(c, indexes, PARAMS + 1, values)) < 0)
					die("get", r);
			} else {
				for (int i = 0; i <= PARAMS; i++)
					if ((r = pbus_client_get(c, &indexes[i], 1, &values[i])) < 0)
						die("get", r);
			}
			ops += PARAMS + 1;
			pace(&next, hz);
		}
	}
	printf("{\"ops\": %ld, \"seconds\": %.3f, \"ops_per_s\": %.1f}\n", ops,
	       (double)(now_ns() - start) / 1e9, (double)ops / ((double)(now_ns() - start) / 1e9));
	pbus_client_close(c);
	return 0;
}

static int randomizer(const char *instance, int n, const char *mode, double seconds, double hz)
{
	struct pbus_client *c = connect_to(instance);
	struct pbus_write writes[PARAMS + 1];
	uint32_t indexes[PARAMS + 1];
	double values[PARAMS];
	char rec[64];
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9), next = start;
	bool batched = !strcmp(mode, "batched");
	long ops = 0;
	int r;

	resolve(c, indexes);
	for (uint64_t k = 1; now_ns() < end; k++) {
		memset(rec, 'a' + (int)(k % 26), sizeof(rec));
		for (int i = 0; i < n; i++) {
			values[i] = (double)k;
			writes[i] = (struct pbus_write){.index = indexes[i], .value = &values[i], .length = 8};
		}
		writes[n] = (struct pbus_write){.index = indexes[PARAMS], .value = rec, .length = 64};
		if (batched) {
			if ((r = pbus_client_set(c, writes, (size_t)n + 1)) < 0)
				die("set", r);
		} else {
			for (int i = 0; i <= n; i++)
				if ((r = pbus_client_set(c, &writes[i], 1)) < 0)
					die("set", r);
		}
		ops += n + 1;
		pace(&next, hz);
	}
	printf("{\"ops\": %ld, \"seconds\": %.3f, \"ops_per_s\": %.1f}\n", ops,
	       (double)(now_ns() - start) / 1e9, (double)ops / ((double)(now_ns() - start) / 1e9));
	pbus_client_close(c);
	return 0;
}

/* --- the load run -------------------------------------------------------------- */

struct load_client {
	pthread_t thread;
	const char *instance;
	int id;
	double seconds;
	double view[PARAMS + 1];   /* the latest notified value per position */
	uint64_t view_seq[PARAMS + 1];
	uint32_t indexes[PARAMS + 1];
	long errors, writes, values;
	char first_error[160];
};

static void load_notify(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
			const struct pbus_client_value *values, size_t count, void *userdata)
{
	struct load_client *lc = userdata;

	(void)client, (void)subscription;
	if (event != PBUS_CLIENT_EVENT_VALUES)
		return;
	for (size_t i = 0; i < count; i++)
		for (int k = 0; k < PARAMS; k++)
			if (lc->indexes[k] == values[i].index && values[i].length == 8) {
				memcpy(&lc->view[k], values[i].value, 8);
				lc->view_seq[k] = values[i].seq;
				lc->values++;
				break;
			}
}

static void load_error(struct load_client *lc, const char *what, int r)
{
	if (!lc->errors++)
		snprintf(lc->first_error, sizeof(lc->first_error), "client %d: %s: %s", lc->id, what,
			 strerror(-r));
}

static void *load_main(void *arg)
{
	struct load_client *lc = arg;
	struct pbus_client *c = NULL;
	struct pbus_client_options o = {.name = "load"};
	int64_t start = now_ns(), end = start + (int64_t)(lc->seconds * 1e9), next = start;
	struct pollfd p;
	uint32_t sub;
	int r;

	if ((r = pbus_client_connect(lc->instance, &o, &c)) < 0) {
		load_error(lc, "connect", r);
		return NULL;
	}
	resolve(c, lc->indexes);
	if ((r = pbus_client_subscribe(c, lc->indexes, PARAMS, NULL, load_notify, lc, &sub)) < 0)
		load_error(lc, "subscribe", r);
	p = (struct pollfd){.fd = pbus_client_fd(c), .events = POLLIN};
	for (uint64_t k = 1; now_ns() < end; k++) {
		double v = (double)(lc->id * 1000000) + (double)k;
		struct pbus_write w = {.index = lc->indexes[lc->id % PARAMS], .value = &v, .length = 8};

		if ((r = pbus_client_set(c, &w, 1)) < 0)
			load_error(lc, "set", r);
		lc->writes++;
		if ((r = pbus_client_dispatch(c)) < 0)
			load_error(lc, "dispatch", r);
		next += 10000000; /* 100 Hz */
		while (now_ns() < next) {
			poll(&p, 1, (int)((next - now_ns()) / 1000000) + 1);
			if ((r = pbus_client_dispatch(c)) < 0)
				load_error(lc, "dispatch", r);
		}
	}
	/* Quiet: let the last notifications arrive. */
	end = now_ns() + 1500000000LL;
	while (now_ns() < end) {
		poll(&p, 1, 100);
		if ((r = pbus_client_dispatch(c)) < 0)
			load_error(lc, "dispatch", r);
	}
	pbus_client_close(c);
	return NULL;
}

static int load(const char *instance, int clients, double seconds)
{
	struct load_client *lcs = calloc((size_t)clients, sizeof(*lcs));
	struct pbus_table *table = NULL;
	long errors = 0, mismatches = 0, writes = 0, values = 0;
	char first[200] = "";
	int r;

	if (!lcs)
		die("load", ENOMEM);
	for (int i = 0; i < clients; i++) {
		lcs[i] = (struct load_client){.instance = instance, .id = i, .seconds = seconds};
		if ((r = pthread_create(&lcs[i].thread, NULL, load_main, &lcs[i])))
			die("pthread_create", r);
	}
	for (int i = 0; i < clients; i++)
		pthread_join(lcs[i].thread, NULL);
	/* Every client's latest view against the table itself. */
	if ((r = pbus_table_open(instance, PBUS_OPEN_READ, &table)) < 0)
		die("table", r);
	for (int i = 0; i < clients; i++) {
		errors += lcs[i].errors;
		writes += lcs[i].writes;
		values += lcs[i].values;
		if (lcs[i].errors && !first[0])
			snprintf(first, sizeof(first), "%s", lcs[i].first_error);
		for (int k = 0; k < PARAMS; k++) {
			const struct pbus_param *p;
			struct pbus_sample s;
			double v;

			pbus_table_param(table, lcs[i].indexes[k], &p);
			pbus_param_read(p, &v, sizeof(v), &s);
			if (s.seq != lcs[i].view_seq[k] || v != lcs[i].view[k]) {
				if (!mismatches++ && !first[0])
					snprintf(first, sizeof(first), "client %d: p%03d is %g (seq %llu) in its view, "
						 "%g (seq %llu) in the table", i, k, lcs[i].view[k],
						 (unsigned long long)lcs[i].view_seq[k], v, (unsigned long long)s.seq);
			}
		}
	}
	pbus_table_close(table);
	printf("{\"clients\": %d, \"seconds\": %.1f, \"errors\": %ld, \"mismatches\": %ld, \"writes\": %ld, "
	       "\"values_notified\": %ld, \"first_problem\": \"%s\"}\n",
	       clients, seconds, errors, mismatches, writes, values, first);
	free(lcs);
	return errors || mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "raw-server"))
		return raw_server(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]));
	if (argc >= 6 && !strcmp(argv[1], "raw-client"))
		return raw_client(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]), atol(argv[5]));
	if (argc >= 3 && !strcmp(argv[1], "raw-mux-server"))
		return raw_mux_server(argv[2]);
	if (argc >= 7 && !strcmp(argv[1], "raw-hz-client"))
		return raw_hz_client(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]), atof(argv[5]),
				     atof(argv[6]));
	if (argc >= 4 && !strcmp(argv[1], "get-rtt"))
		return get_rtt(argv[2], atol(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "displayer"))
		return displayer(argv[2], argv[3], atof(argv[4]), argc > 5 ? atof(argv[5]) : 0);
	if (argc >= 6 && !strcmp(argv[1], "randomizer"))
		return randomizer(argv[2], atoi(argv[3]), argv[4], atof(argv[5]), argc > 6 ? atof(argv[6]) : 0);
	if (argc >= 5 && !strcmp(argv[1], "load"))
		return load(argv[2], atoi(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: see the comment at the top of bench/socket-server.c\n");
	return 2;
}
