/* SPDX-License-Identifier: MIT */
/*
 * mqtt-pub: the limit of benchmark scenario 6's fleet part
 * (bench/run-fleet.py): a libmosquitto publisher loop of the payloads
 * pbus-bridge publishes, on the same broker. It publishes COUNT topics
 * PREFIX/p000 ... in turn, QoS 0, each payload the plain mode's value JSON
 * ({"value","unit","ts","status","seq"}, docs/fleet.md) stamped with the
 * time of its publication, RATE messages a second (0: as fast as the
 * socket takes them), for SECONDS seconds. Prints "published=N".
 *
 *     mqtt-pub HOST PORT USER PASSWORD PREFIX COUNT RATE SECONDS
 *
 * Single-threaded: it writes out what libmosquitto has queued before it
 * publishes more, so that its queue stays short (as the bridge does).
 */
#include <mosquitto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: mqtt-pub HOST PORT USER PASSWORD PREFIX COUNT RATE SECONDS\n");
		return 2;
	}
	int count = atoi(argv[6]);
	double rate = strtod(argv[7], NULL), seconds = strtod(argv[8], NULL);
	if (count < 1 || count > 1000 || rate < 0 || !(seconds > 0))
		return 2;
	mosquitto_lib_init();
	struct mosquitto *m = mosquitto_new(NULL, true, NULL);
	mosquitto_username_pw_set(m, argv[3], argv[4]);
	mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
	if (mosquitto_connect(m, argv[1], atoi(argv[2]), 30) != MOSQ_ERR_SUCCESS) {
		fprintf(stderr, "mqtt-pub: cannot connect to %s:%s\n", argv[1], argv[2]);
		return 1;
	}
	uint64_t start = now_ns(CLOCK_MONOTONIC), end = start + (uint64_t)(seconds * 1e9), n = 0;
	char topic[256], payload[256], ts[40];
	for (;;) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (t >= end)
			break;
		if (rate > 0 && (double)n >= (double)(t - start) / 1e9 * rate) {
			mosquitto_loop(m, 0, 1);
			struct timespec nap = {0, 50000};
			nanosleep(&nap, NULL);
			continue;
		}
		if (mosquitto_want_write(m)) {
			if (mosquitto_loop_write(m, 1) != MOSQ_ERR_SUCCESS)
				break;
			continue;
		}
		uint64_t wall = now_ns(CLOCK_REALTIME);
		time_t sec = (time_t)(wall / 1000000000u);
		struct tm tm;
		gmtime_r(&sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(topic, sizeof(topic), "%s/p%03d", argv[5], (int)(n % (uint64_t)count));
		int len = snprintf(payload, sizeof(payload),
				   "{\"value\":%.17g,\"unit\":\"\",\"ts\":\"%s.%09lluZ\",\"status\":\"ok\",\"seq\":%llu}",
				   (double)n * 0.001, ts, (unsigned long long)(wall % 1000000000u),
				   (unsigned long long)(n / (uint64_t)count + 1));
		if (mosquitto_publish(m, NULL, topic, len, payload, 0, false) != MOSQ_ERR_SUCCESS)
			break;
		n++;
		if ((n & 63) == 0)
			mosquitto_loop_read(m, 1);
	}
	while (mosquitto_want_write(m) && mosquitto_loop_write(m, 1) == MOSQ_ERR_SUCCESS)
		;
	printf("published=%llu\n", (unsigned long long)n);
	mosquitto_disconnect(m);
	mosquitto_destroy(m);
	mosquitto_lib_cleanup();
	return 0;
}
