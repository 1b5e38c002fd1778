/* SPDX-License-Identifier: MIT */
/*
 * read-double.c: the C side of scenario 5's read comparison
 * (docs/benchmarks.md, "Scenario 5"): how long one pbus_param_get_double()
 * takes on a live instance, timed the way JMH times the Java read beside
 * it (bench/java/src/main/java/io/parambus/bench/ReadBench.java): warm-up
 * iterations, then measured iterations of a fixed duration, each one's
 * nanoseconds per read reported, every value consumed so that no read can
 * be dropped.
 *
 *   read-double INSTANCE PARAM [--warmup N] [--iterations N] [--time-ms T]
 *   read-double --array [--warmup N] [--iterations N] [--time-ms T]
 *
 * Opens INSTANCE read-only with pbus_table_open(), resolves PARAM once with
 * pbus_table_find() and keeps its struct pbus_param by value, as the
 * generated bindings and scenario 1's program do, then reads it with the
 * inline pbus_param_get_double() flat out. With --array it reads one
 * element of a plain double array instead: the C floor, beside the Java
 * floor (a double[] read), which shows what the two harnesses themselves
 * cost. Prints one JSON object: {"what", "warmup_ns_per_op": [...],
 * "ns_per_op": [...], "reads": N}.
 * Exit status 1 if a read failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <parambus/table.h>

#define MAX_ITERATIONS 1000

/* Set by the iteration's timer: the loop looks at it with an acquire load
 * before every read, as JMH's generated loop reads its volatile isDone
 * flag before every call of the benchmark method (an acquire load in the
 * Java memory model). So both harnesses pay the same per-read overhead,
 * and neither compiler can hoist a read out of the loop. */
static int done;

static void on_timer(int sig)
{
	(void)sig;
	__atomic_store_n(&done, 1, __ATOMIC_RELAXED);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The compiler must assume @v is used (what JMH's Blackhole does for the
 * Java read): costs nothing but keeps the value in a register. */
static inline void consume(double v)
{
	__asm__ __volatile__("" : : "x"(v));
}

/* The parameter, resolved once and kept by value where the program keeps
 * its state (scenario 1's program and the generated bindings keep such
 * copies in static storage too): like the fields of the Java benchmark's
 * state object, it is reloaded after every acquire load, where a local copy
 * could stay in registers for the whole loop. */
static struct pbus_param param;

/* The floor's array (--array): a plain load of one element, as the Java
 * benchmark's arrayRead reads a double[]. */
static double array[200];
static unsigned array_index = 17;

static void arm(timer_t timer, int64_t ns)
{
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(ns / 1000000000LL),
					      .tv_nsec = (long)(ns % 1000000000LL)}};

	__atomic_store_n(&done, 0, __ATOMIC_RELAXED);
	if (timer_settime(timer, 0, &its, NULL) < 0) {
		perror("read-double: timer_settime");
		exit(1);
	}
}

/* One iteration: read the parameter (or with @use_array the array) flat
 * out until the timer fires after @time_ns; ns per read, or a negative
 * errno. */
static double iteration(bool use_array, timer_t timer, int64_t time_ns, uint64_t *reads)
{
	uint64_t n = 0;
	int64_t t0;

	arm(timer, time_ns);
	t0 = now_ns();
	if (!use_array) {
		while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
			double d;
			int r = pbus_param_get_double(&param, &d);

			if (__builtin_expect(r < 0, 0))
				return r;
			consume(d);
			n++;
		}
	} else {
		while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
			consume(array[array_index]);
			n++;
		}
	}
	*reads += n;
	return (double)(now_ns() - t0) / (double)n;
}

static void usage(void)
{
	fprintf(stderr, "usage: read-double INSTANCE PARAM [--warmup N] [--iterations N] "
			"[--time-ms T]\n"
			"       read-double --array [--warmup N] [--iterations N] [--time-ms T]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct pbus_table *table = NULL;
	const char *instance = NULL, *name = NULL;
	bool use_array = false;
	long warmup = 3, iterations = 8, time_ms = 500;
	double warm[MAX_ITERATIONS], meas[MAX_ITERATIONS];
	uint64_t reads = 0;
	struct sigaction sa;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
	timer_t timer;
	int r, i = 1;

	if (argc > 1 && !strcmp(argv[1], "--array")) {
		use_array = true;
		i = 2;
	} else if (argc > 2) {
		instance = argv[1];
		name = argv[2];
		i = 3;
	} else {
		usage();
	}
	for (; i < argc; i += 2) {
		long v;

		if (i + 1 >= argc)
			usage();
		v = strtol(argv[i + 1], NULL, 10);
		if (!strcmp(argv[i], "--warmup"))
			warmup = v;
		else if (!strcmp(argv[i], "--iterations"))
			iterations = v;
		else if (!strcmp(argv[i], "--time-ms"))
			time_ms = v;
		else
			usage();
	}
	if (warmup < 0 || warmup > MAX_ITERATIONS || iterations < 1 ||
	    iterations > MAX_ITERATIONS || time_ms < 1)
		usage();
	if (!use_array) {
		const struct pbus_param *found;

		r = pbus_table_open(instance, PBUS_OPEN_READ, &table);
		if (r < 0) {
			fprintf(stderr, "read-double: opening %s: %s\n", instance, strerror(-r));
			return 1;
		}
		r = pbus_table_find(table, name, &found);
		if (r < 0) {
			fprintf(stderr, "read-double: %s: %s\n", name, strerror(-r));
			return 1;
		}
		param = *found;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0) {
		perror("read-double: timer");
		return 1;
	}
	for (long k = 0; k < warmup + iterations; k++) {
		double ns = iteration(use_array, timer, time_ms * 1000000LL, &reads);

		if (ns < 0) {
			fprintf(stderr, "read-double: reading %s: %s\n", name, strerror((int)-ns));
			return 1;
		}
		if (k < warmup)
			warm[k] = ns;
		else
			meas[k - warmup] = ns;
	}
	printf("{\"what\": \"%s\", \"warmup_ns_per_op\": [", use_array ? "array" : name);
	for (long k = 0; k < warmup; k++)
		printf("%s%.4f", k ? ", " : "", warm[k]);
	printf("], \"ns_per_op\": [");
	for (long k = 0; k < iterations; k++)
		printf("%s%.4f", k ? ", " : "", meas[k]);
	printf("], \"reads\": %" PRIu64 "}\n", reads);
	timer_delete(timer);
	pbus_table_close(table);
	return 0;
}
