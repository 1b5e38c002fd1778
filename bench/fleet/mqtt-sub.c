/* SPDX-License-Identifier: MIT */
/*
 * mqtt-sub: the subscriber of benchmark scenario 6's fleet part
 * (bench/run-fleet.py). Subscribes to TOPIC (QoS 0) on the broker with
 * libmosquitto, prints "SUBSCRIBED" once the broker has acknowledged, then
 * counts the messages of SECONDS seconds, starting at the first one, and
 * takes each one's latency: its arrival (CLOCK_REALTIME) minus the "ts" of
 * its JSON payload (the RFC 3339 time pbus-bridge, or mqtt-pub, put there).
 * Prints one JSON object: messages, seconds, per_s, p50_ms, p99_ms,
 * max_ms, unparsed (payloads without a readable "ts"), retained (the
 * broker's retained messages handed out at the subscription, such as the
 * bridge's birth: old by nature, not counted).
 *
 *     mqtt-sub HOST PORT USER PASSWORD TOPIC SECONDS
 *
 * Single-threaded (libmosquitto's loop in main).
 */
#include <mosquitto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SAMPLES (1u << 22)

struct sub {
	const char *topic;
	int subscribed;
	uint64_t first_ns, messages, unparsed, retained;
	double *samples;
	size_t count;
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The "ts" of a payload as ns since the epoch, or 0. */
static uint64_t payload_ts(const char *p, int length)
{
	const char *key = memmem(p, (size_t)length, "\"ts\":\"", 6);
	if (!key || p + length - key < 6 + 30)
		return 0;
	struct tm tm = {0};
	char frac[10] = "";
	if (sscanf(key + 6, "%4d-%2d-%2dT%2d:%2d:%2d.%9[0-9]Z", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec, frac) != 7)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	uint64_t ns = strtoull(frac, NULL, 10);
	for (size_t i = strlen(frac); i < 9; i++)
		ns *= 10;
	return (uint64_t)timegm(&tm) * 1000000000u + ns;
}

static void on_subscribe(struct mosquitto *m, void *u, int mid, int n, const int *granted)
{
	(void)m, (void)mid, (void)n, (void)granted;
	struct sub *s = u;
	s->subscribed = 1;
	puts("SUBSCRIBED");
	fflush(stdout);
}

static void on_connect(struct mosquitto *m, void *u, int rc)
{
	struct sub *s = u;
	if (rc != 0) {
		fprintf(stderr, "mqtt-sub: the broker refused the connection: %s\n", mosquitto_connack_string(rc));
		exit(1);
	}
	mosquitto_subscribe(m, NULL, s->topic, 0);
}

static void on_message(struct mosquitto *m, void *u, const struct mosquitto_message *msg)
{
	(void)m;
	struct sub *s = u;
	uint64_t arrival = now_ns(CLOCK_REALTIME);
	if (msg->retain) {
		s->retained++;
		return;
	}
	if (!s->first_ns)
		s->first_ns = now_ns(CLOCK_MONOTONIC);
	s->messages++;
	uint64_t ts = payload_ts(msg->payload, msg->payloadlen);
	if (!ts) {
		s->unparsed++;
		return;
	}
	if (s->count < MAX_SAMPLES)
		s->samples[s->count++] = ((double)arrival - (double)ts) / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: mqtt-sub HOST PORT USER PASSWORD TOPIC SECONDS\n");
		return 2;
	}
	double seconds = strtod(argv[6], NULL);
	struct sub s = {.topic = argv[5], .samples = malloc(MAX_SAMPLES * sizeof(double))};
	if (!s.samples || !(seconds > 0))
		return 2;
	mosquitto_lib_init();
	struct mosquitto *m = mosquitto_new(NULL, true, &s);
	mosquitto_username_pw_set(m, argv[3], argv[4]);
	mosquitto_connect_callback_set(m, on_connect);
	mosquitto_subscribe_callback_set(m, on_subscribe);
	mosquitto_message_callback_set(m, on_message);
	if (mosquitto_connect(m, argv[1], atoi(argv[2]), 30) != MOSQ_ERR_SUCCESS) {
		fprintf(stderr, "mqtt-sub: cannot connect to %s:%s\n", argv[1], argv[2]);
		return 1;
	}
	uint64_t end = 0, started = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		if (mosquitto_loop(m, 10, 1) != MOSQ_ERR_SUCCESS) {
			fprintf(stderr, "mqtt-sub: connection lost\n");
			return 1;
		}
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (s.first_ns && !end)
			end = s.first_ns + (uint64_t)(seconds * 1e9);
		if (end && t >= end)
			break;
		if (!s.first_ns && t - started > 60000000000ull) {
			fprintf(stderr, "mqtt-sub: no message within 60 s\n");
			return 1;
		}
	}
	qsort(s.samples, s.count, sizeof(double), cmp);
	double p50 = s.count ? s.samples[s.count / 2] : 0;
	double p99 = s.count ? s.samples[(size_t)((double)(s.count - 1) * 0.99)] : 0;
	double max = s.count ? s.samples[s.count - 1] : 0;
	printf("{\"messages\": %llu, \"seconds\": %.3f, \"per_s\": %.0f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
	       "\"max_ms\": %.3f, \"unparsed\": %llu, \"retained\": %llu}\n",
	       (unsigned long long)s.messages, seconds, (double)s.messages / seconds, p50, p99, max,
	       (unsigned long long)s.unparsed, (unsigned long long)s.retained);
	mosquitto_destroy(m);
	mosquitto_lib_cleanup();
	return 0;
}
