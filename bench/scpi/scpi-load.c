/* SPDX-License-Identifier: MIT */
/*
 * scpi-load.c: the C client of benchmark scenario 6's SCPI part
 * (../shared/BENCHMARKS.md, docs/benchmarks.md): blocking round trips of one
 * program message over a raw TCP socket on loopback, as a test script does
 * them, against pbus-scpi or against bench/scpi/raw-echo (the limit).
 *
 *   scpi-load rtt PORT SECONDS MESSAGE
 *       sends MESSAGE and a LF, reads the response line, again, for SECONDS
 *   scpi-load poll PORT HZ SECONDS MESSAGE...
 *       HZ times a second (absolute ticks of CLOCK_MONOTONIC), for
 *       SECONDS: a round trip of each MESSAGE in turn
 *
 *   scpi-load get-rtt INSTANCE PARAM SECONDS
 *       what pbus-scpi adds to a query: single-parameter GETs of PARAM
 *       through pbusd with the client library (pbus_client_get()), one at
 *       a time, for SECONDS
 *
 * All print {"messages": N, "seconds": S, "messages_per_s": R, "late": L,
 * "reply_bytes": B}: N round trips, L the ticks whose round trips ended
 * after the next tick was due (0 for rtt), B the last response line's
 * length with its LF. One round trip of each message before the clock
 * starts warms up the connection.
 *
 * One connection, TCP_NODELAY, 127.0.0.1. A response that is no line, or
 * a closed connection, is an error (exit status 1, a message on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/parambus.h>

#define REPLY_MAX 65536

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int connect_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("scpi-load: socket");
		exit(1);
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "scpi-load: connect 127.0.0.1:%d: %s\n", port, strerror(errno));
		exit(1);
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One round trip: send @msg (with its LF), read up to the LF. The
 * response line's length with its LF. */
static size_t round_trip(int fd, const char *msg, size_t len, char *buf)
{
	size_t sent = 0;
	while (sent < len) {
		ssize_t n = send(fd, msg + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "scpi-load: send: %s\n", strerror(errno));
			exit(1);
		}
		sent += (size_t)n;
	}
	size_t got = 0;
	for (;;) {
		ssize_t n = recv(fd, buf + got, REPLY_MAX - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "scpi-load: %s\n", n == 0 ? "the server closed the connection"
								   : strerror(errno));
			exit(1);
		}
		got += (size_t)n;
		if (buf[got - 1] == '\n')
			return got;
		if (memchr(buf, '\n', got)) {
			fprintf(stderr, "scpi-load: more than one response line to one message\n");
			exit(1);
		}
		if (got == REPLY_MAX) {
			fprintf(stderr, "scpi-load: a response line longer than %d bytes\n", REPLY_MAX);
			exit(1);
		}
	}
}

static char *with_lf(const char *message, size_t *ret_len)
{
	size_t len = strlen(message);
	char *msg = malloc(len + 2);
	if (!msg) {
		perror("scpi-load: malloc");
		exit(1);
	}
	memcpy(msg, message, len);
	msg[len] = '\n';
	msg[len + 1] = '\0';
	*ret_len = len + 1;
	return msg;
}

static void print(long messages, double seconds, long late, size_t reply)
{
	printf("{\"messages\": %ld, \"seconds\": %.6f, \"messages_per_s\": %.1f, \"late\": %ld, "
	       "\"reply_bytes\": %zu}\n", messages, seconds, (double)messages / seconds, late, reply);
}

static int get_rtt(const char *instance, const char *name, double seconds)
{
	struct pbus_client *c = NULL;
	struct pbus_client_options o = {.name = "scpi-load", .no_reconnect = true};
	struct pbus_client_value v;
	uint32_t index;
	int r = pbus_client_connect(instance, &o, &c);
	if (r < 0 || (r = pbus_client_find(c, name, &index)) < 0 || (r = pbus_client_get(c, &index, 1, &v)) < 0) {
		fprintf(stderr, "scpi-load: %s %s: %s\n", instance, name, pbus_strerror(r));
		return 1;
	}
	long n = 0;
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9), t;
	do {
		if ((r = pbus_client_get(c, &index, 1, &v)) < 0) {
			fprintf(stderr, "scpi-load: get %s: %s\n", name, pbus_strerror(r));
			return 1;
		}
		n++;
	} while ((t = now_ns()) < end);
	pbus_client_close(c);
	print(n, (double)(t - start) / 1e9, 0, 0);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[REPLY_MAX];
	if (argc == 5 && !strcmp(argv[1], "get-rtt"))
		return get_rtt(argv[2], argv[3], atof(argv[4]));
	int rtt = argc == 5 && !strcmp(argv[1], "rtt");
	int poll = argc >= 6 && !strcmp(argv[1], "poll");
	if (!rtt && !poll) {
		fprintf(stderr, "usage: scpi-load rtt PORT SECONDS MESSAGE\n"
				"       scpi-load poll PORT HZ SECONDS MESSAGE...\n"
				"       scpi-load get-rtt INSTANCE PARAM SECONDS\n");
		return 2;
	}
	int port = atoi(argv[2]);
	double hz = poll ? atof(argv[3]) : 0;
	double seconds = atof(argv[rtt ? 3 : 4]);
	if (port <= 0 || port > 65535 || seconds <= 0 || (poll && hz <= 0)) {
		fprintf(stderr, "scpi-load: bad PORT, HZ or SECONDS\n");
		return 2;
	}
	int first = rtt ? 4 : 5, count = argc - first;
	size_t lens[64];
	char *msgs[64];
	if (count > 64) {
		fprintf(stderr, "scpi-load: at most 64 messages\n");
		return 2;
	}
	int fd = connect_loopback(port);
	size_t reply = 0;
	for (int i = 0; i < count; i++) {
		msgs[i] = with_lf(argv[first + i], &lens[i]);
		reply = round_trip(fd, msgs[i], lens[i], buf);  /* warm up */
	}
	char *msg = msgs[0];
	size_t len = lens[0];
	long messages = 0, late = 0;
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9), t;
	if (rtt) {
		do {
			reply = round_trip(fd, msg, len, buf);
			messages++;
		} while ((t = now_ns()) < end);
	} else {
		int64_t period = (int64_t)(1e9 / hz), next = start;
		for (;;) {
			struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			if (next >= end)
				break;
			for (int i = 0; i < count; i++)
				reply = round_trip(fd, msgs[i], lens[i], buf);
			messages += count;
			next += period;
			if (now_ns() > next)
				late++;
		}
		t = now_ns();
	}
	close(fd);
	for (int i = 0; i < count; i++)
		free(msgs[i]);
	print(messages, (double)(t - start) / 1e9, late, reply);
	return 0;
}
