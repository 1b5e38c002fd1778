/* SPDX-License-Identifier: MIT */
/*
 * stress-threads: stress-table's workload in ONE process, 2 writer threads
 * and 4 reader threads sharing one table (default 4 s), so that
 * ThreadSanitizer, which sees only one process, can check the library's
 * atomics. The instance is created in this process too
 * (pbus_instance_create + publish), so every access to the segment, from
 * its creation on, happens in the process TSan watches; all threads use the
 * same mapping (TSan tracks virtual addresses, two mappings of one page
 * would hide each other's accesses).
 *
 * Asserts the same as stress-table: no torn or inconsistent value, nothing
 * refused, no lost update (final version = 1 + completed batches), progress
 * of every thread in every 100 ms window (1 s under TSan, see stress-values.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <parambus/instance.h>
#include <parambus/schema.h>
#include <parambus/table.h>

#include "stress-common.h"
#include "stress-values.h"

#define WRITERS 2
#define READERS 4
#define WORKERS (WRITERS + READERS)

static const char *const names[] = {"d0", "d1", "d2", "d3", "text", "blob", "samples"};
static const struct sv_kind kinds[] = {
	{SV_DOUBLE, 8}, {SV_DOUBLE, 8}, {SV_DOUBLE, 8}, {SV_DOUBLE, 8},
	{SV_STRING, 64}, {SV_BYTES, 4096}, {SV_INT64_ARRAY, 512},
};
#define NPARAMS (sizeof(names) / sizeof(names[0]))

struct worker {
	struct sv_worker w;
	bool writer;
	int result;
};

static pthread_barrier_t start_barrier;

static void *run(void *arg)
{
	struct worker *k = arg;

	/* Every thread starts together: the barrier orders the setup. */
	pthread_barrier_wait(&start_barrier);
	k->result = k->writer ? sv_writer_run(&k->w) : sv_reader_run(&k->w);
	return NULL;
}

int main(int argc, char **argv)
{
	struct stress_options o;
	struct worker workers[WORKERS];
	struct sv_stats stats[WORKERS];
	pthread_t threads[WORKERS];
	uint64_t issued[SV_WRITERS] = {0};
	char instance[64], schema_path[4096], error[256] = "";
	struct pbus_schema *schema = NULL;
	struct pbus_table *owner = NULL, *t = NULL;
	struct sv_worker setup = {0};
	uint32_t *windows;
	int64_t *window_cpu, start, end;
	unsigned nwin;
	int r;

	stress_init("stress-threads", argc, argv, 4.0, 60.0, &o);
	pbus_check_begin("stress-threads");
	snprintf(instance, sizeof(instance), "stress-threads-%d", (int)getpid());
	snprintf(schema_path, sizeof(schema_path), "%s/stress.pbs", o.fixtures);
	stress_track_instance(instance);
	nwin = sv_window_count(o.seconds);
	windows = calloc((size_t)WORKERS * nwin, sizeof(*windows));
	window_cpu = calloc((size_t)WORKERS * nwin, sizeof(*window_cpu));
	memset(stats, 0, sizeof(stats));

	r = pbus_schema_load(schema_path, error, sizeof(error), &schema);
	if (r == 0)
		r = pbus_instance_create(instance, schema, NULL, &owner);
	if (r == 0)
		r = pbus_instance_publish(owner);
	if (r == 0)
		r = pbus_table_open(instance, PBUS_OPEN_WRITE, &t);
	if (r == 0)
		r = sv_bind(&setup, t, names, kinds, NPARAMS);
	if (r == 0)
		r = sv_write_initial(&setup);
	if (r < 0) {
		CHECK_FAIL("setup: %s %s", pbus_strerror(r), error);
		pbus_check_end();
		return stress_exit();
	}

	pthread_barrier_init(&start_barrier, NULL, WORKERS + 1);
	start = stress_now_ns() + 20 * STRESS_NS_PER_MS;
	end = start + (int64_t)(o.seconds * 1e9);
	for (int i = 0; i < WORKERS; i++) {
		struct worker *k = &workers[i];

		memset(k, 0, sizeof(*k));
		k->writer = i < WRITERS;
		k->w = setup; /* the same table and mapping for every thread */
		k->w.writer_id = k->writer ? (unsigned)i + 1 : 0;
		k->w.issued = issued;
		k->w.start_ns = start;
		k->w.end_ns = end;
		k->w.windows = windows + (size_t)i * nwin;
		k->w.window_cpu = window_cpu + (size_t)i * nwin;
		k->w.nwin = nwin;
		k->w.stats = &stats[i];
		if (pthread_create(&threads[i], NULL, run, k) != 0) {
			CHECK_FAIL("pthread_create failed");
			return stress_exit();
		}
	}
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);

	uint64_t writes = 0, reads = 0, overlapped = 0, min_window = UINT64_MAX;
	int64_t max_read = 0, max_write = 0;

	for (int i = 0; i < WORKERS; i++) {
		struct sv_stats *st = &stats[i];
		char who[40];
		uint64_t m;

		snprintf(who, sizeof(who), "%s thread %d", i < WRITERS ? "writer" : "reader",
			 i < WRITERS ? i + 1 : i - WRITERS + 1);
		if (st->bad)
			CHECK_FAIL("%s: %" PRIu64 " errors, first: %s", who, st->bad, st->first_error);
		if (st->ops == 0)
			CHECK_FAIL("%s made no operation", who);
		m = sv_check_windows(who, windows + (size_t)i * nwin, window_cpu + (size_t)i * nwin, nwin,
				     WORKERS);
		if (m < min_window)
			min_window = m;
		if (i < WRITERS) {
			writes += st->ops;
			if (st->max_ns > max_write)
				max_write = st->max_ns;
		} else {
			reads += st->ops;
			overlapped += st->overlapped;
			if (st->max_ns > max_read)
				max_read = st->max_ns;
		}
	}
	for (size_t i = 0; i < NPARAMS; i++) {
		uint64_t seq = pbus_param_seq(setup.params[i]);

		if (seq != 1 + writes)
			CHECK_FAIL("%s: final version %" PRIu64 ", but 1 + %" PRIu64 " writes completed",
				    names[i], seq, writes);
	}
	stress_note("stress-threads: %.1f s, 2 writer + 4 reader threads; writes %" PRIu64
		    " (%.0f/s), reads %" PRIu64 " (%.0f/s), reads overlapping a write %" PRIu64
		    ", max read %.1f us, max write batch %.1f us, fewest ops of a thread in a %.0f ms "
		    "window %" PRIu64,
		    o.seconds, writes, (double)writes / o.seconds, reads, (double)reads / o.seconds, overlapped,
		    (double)max_read / 1e3, (double)max_write / 1e3, (double)SV_WINDOW_NS / 1e6,
		    min_window);
	pbus_table_close(t);
	pbus_instance_remove(owner);
	pbus_schema_free(schema);
	free(windows);
	free(window_cpu);
	pbus_check_end();
	return stress_exit();
}
