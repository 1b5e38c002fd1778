/* SPDX-License-Identifier: MIT */
/*
 * web-load: the load of benchmark scenario 6's web part (bench/run-web.py):
 * writes the 200 doubles p000..p199 of bench/schemas/param-table.pbs, all of
 * them, HZ times a second, as a provider (one pbus_batch_write() a pass,
 * stamped with the pass's CLOCK_REALTIME, which the page compares with its
 * own clock when the value reaches the DOM).
 *
 *     web-load INSTANCE HZ SECONDS
 *
 * Passes run on an absolute schedule (clock_nanosleep, TIMER_ABSTIME), so a
 * late pass does not shift the next ones. Prints "passes=N late=N" at the
 * end (late: a pass that began more than a period after its time), also
 * when stopped early by SIGTERM or SIGINT. Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <parambus/parambus.h>

#define COUNT 200

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

int main(int argc, char **argv)
{
	struct pbus_batch_field fields[COUNT];
	struct pbus_batch *batch = NULL;
	struct pbus_table *table = NULL;
	double values[COUNT];
	char *end;
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: web-load INSTANCE HZ SECONDS\n");
		return 2;
	}
	double hz = strtod(argv[2], &end);
	double seconds = strtod(argv[3], &end);
	if (!(hz > 0 && hz <= 10000) || !(seconds > 0)) {
		fprintf(stderr, "web-load: HZ 0 < HZ <= 10000 and SECONDS > 0\n");
		return 2;
	}
	r = pbus_table_open(argv[1], PBUS_OPEN_PROVIDER, &table);
	if (r < 0) {
		fprintf(stderr, "web-load: instance '%s': %s\n", argv[1], pbus_strerror(r));
		return 1;
	}
	for (int i = 0; i < COUNT; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%03d", i);
		r = pbus_table_find(table, name, &fields[i].param);
		if (r < 0) {
			fprintf(stderr, "web-load: parameter '%s': %s\n", name, pbus_strerror(r));
			return 1;
		}
		fields[i].offset = (size_t)i * sizeof(double);
	}
	r = pbus_batch_new(table, fields, COUNT, &batch);
	if (r < 0) {
		fprintf(stderr, "web-load: %s\n", pbus_strerror(r));
		return 1;
	}

	const uint64_t period = (uint64_t)(1e9 / hz);
	const uint64_t passes = (uint64_t)(seconds * hz);
	struct timespec t, now;
	uint64_t late = 0, done = 0;

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t);
	uint64_t next = ns_of(&t);
	for (; done < passes && !stop; done++) {
		struct timespec due = {.tv_sec = (time_t)(next / 1000000000u),
				       .tv_nsec = (long)(next % 1000000000u)};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR && !stop)
			;
		if (stop)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ns_of(&now) > next + period)
			late++;
		for (int i = 0; i < COUNT; i++)
			values[i] = i + sin((double)done * 0.05 + i);
		r = pbus_batch_write(batch, values, NULL, 0);
		if (r < 0) {
			fprintf(stderr, "web-load: write: %s\n", pbus_strerror(r));
			break;
		}
		next += period;
	}
	printf("passes=%llu late=%llu\n", (unsigned long long)done, (unsigned long long)late);
	pbus_batch_free(batch);
	pbus_table_close(table);
	return r < 0 ? 1 : 0;
}
