/* SPDX-License-Identifier: MIT */
/*
 * stress-table: the real pbusd serves stress.pbs (four doubles, a 64-byte
 * string, a 4 KiB byte buffer, an int64[64] array); 2 writer processes and
 * 4 reader processes run for --seconds (default 10). Both writers write the
 * SAME parameters in one batch per round (pbus_table_write_many with the
 * stamp as timestamp and counter mod 3 as status), so they fight over every
 * writer lock. Readers alternate the inline getters with pbus_param_read.
 *
 * Asserts:
 *  - no reader ever sees a torn or inconsistent value: every word, the
 *    length, the status and the timestamp come from one write
 *    (stress-values.h), the value was really issued, the versions a reader
 *    sees never go back, one version always reads as the same value, and
 *    per writer the counters never go back;
 *  - no write is refused, and each writer's versions grow;
 *  - no update is lost: each parameter's final version is exactly 1 (the
 *    setup write) + the batches both writers completed;
 *  - every process completes at least one operation in every 100 ms window
 *    of the run (no starvation of readers by writers or of a writer by the
 *    other);
 *  - every process exits cleanly.
 * PBUS_STRESS_INJECT=N makes writer 1 corrupt every Nth batch, to see the
 * checks fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

struct shared {
	uint32_t ready, go, stop;
	int64_t start_ns, end_ns;
	uint64_t issued[SV_WRITERS];
	struct sv_stats stats[WORKERS];
};

static struct shared *sh;
static uint32_t *windows;   /* [WORKERS][nwin] */
static int64_t *window_cpu; /* [WORKERS][nwin] */
static unsigned nwin;
static char instance[64];

struct child_arg {
	int n; /* 0..WRITERS-1 writers, then readers */
};

static int child(void *arg)
{
	const struct child_arg *a = arg;
	bool writer = a->n < WRITERS;
	struct pbus_table *t;
	struct sv_worker w = {0};
	struct sv_stats *st = &sh->stats[a->n];
	int r;

	r = pbus_table_open(instance, writer ? PBUS_OPEN_WRITE : PBUS_OPEN_READ, &t);
	if (r == 0)
		r = sv_bind(&w, t, names, kinds, NPARAMS);
	if (r < 0) {
		snprintf(st->first_error, sizeof(st->first_error), "open/bind: %s", pbus_strerror(r));
		st->bad++;
		stress_add_wake(&sh->ready, 1);
		return 1;
	}
	w.writer_id = writer ? (unsigned)a->n + 1 : 0;
	w.issued = sh->issued;
	w.stop = &sh->stop;
	w.windows = windows + (size_t)a->n * nwin;
	w.window_cpu = window_cpu + (size_t)a->n * nwin;
	w.nwin = nwin;
	w.stats = st;
	w.measure_cpu = !writer; /* reported, not asserted (crash-writer asserts it) */
	if (a->n == 0 && getenv("PBUS_STRESS_INJECT")) /* self-test of the checks */
		w.inject_every = (unsigned)strtoul(getenv("PBUS_STRESS_INJECT"), NULL, 10);
	stress_add_wake(&sh->ready, 1);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		stress_futex_wait(&sh->go, 0, -1);
	w.start_ns = sh->start_ns;
	w.end_ns = sh->end_ns;
	r = writer ? sv_writer_run(&w) : sv_reader_run(&w);
	pbus_table_close(t);
	return r;
}

int main(int argc, char **argv)
{
	struct stress_options o;
	struct child_arg args[WORKERS];
	pid_t pids[WORKERS], pbusd;
	char schema[4096], *state_dir;
	struct pbus_table *t = NULL;
	struct sv_worker setup = {0};
	int status, r;

	stress_init("stress-table", argc, argv, 10.0, 60.0, &o);
	pbus_check_begin("stress-table");
	snprintf(instance, sizeof(instance), "stress-table-%d", (int)getpid());
	snprintf(schema, sizeof(schema), "%s/stress.pbs", o.fixtures);
	state_dir = stress_make_temp_dir("stress-table");
	nwin = sv_window_count(o.seconds);
	sh = stress_shared_alloc(sizeof(*sh));
	windows = stress_shared_alloc(sizeof(*windows) * WORKERS * nwin);
	window_cpu = stress_shared_alloc(sizeof(*window_cpu) * WORKERS * nwin);

	pbusd = stress_pbusd_start(&o, schema, instance, state_dir, NULL, NULL, 20, &status);
	if (pbusd < 0) {
		CHECK_FAIL("pbusd did not start (%s)", stress_status_text(status));
		pbus_check_end();
		return stress_exit();
	}
	r = pbus_table_open(instance, PBUS_OPEN_WRITE, &t);
	if (r == 0)
		r = sv_bind(&setup, t, names, kinds, NPARAMS);
	if (r == 0)
		r = sv_write_initial(&setup);
	if (r < 0) {
		CHECK_FAIL("setup: %s", pbus_strerror(r));
		pbus_check_end();
		return stress_exit();
	}

	for (int i = 0; i < WORKERS; i++) {
		args[i].n = i;
		pids[i] = stress_fork(child, &args[i]);
	}
	if (stress_wait_at_least(&sh->ready, WORKERS, 30 * STRESS_NS_PER_S) < 0)
		CHECK_FAIL("only %u of %d workers got ready in 30 s", sh->ready, WORKERS);
	sh->start_ns = stress_now_ns() + 20 * STRESS_NS_PER_MS;
	sh->end_ns = sh->start_ns + (int64_t)(o.seconds * 1e9);
	stress_add_wake(&sh->go, 1);

	for (int i = 0; i < WORKERS; i++) {
		/* Liveness is generous; correctness is not. */
		if (stress_wait_pid(pids[i], o.seconds + 60, &status) < 0) {
			CHECK_FAIL("worker %d did not finish %.0f s after the end", i, 60.0);
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
			status = stress_kill_wait(pids[i]);
		}
		if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1))
			CHECK_FAIL("%s %d: %s", i < WRITERS ? "writer" : "reader", i,
				    stress_status_text(status));
	}

	/* Results. */
	uint64_t writes = 0, reads = 0, overlapped = 0;
	int64_t max_read = 0, max_write = 0, max_read_cpu = 0;
	uint64_t over_1ms_cpu = 0;
	uint64_t min_reader_window = UINT64_MAX, min_writer_window = UINT64_MAX;

	for (int i = 0; i < WORKERS; i++) {
		struct sv_stats *st = &sh->stats[i];
		char who[32];
		uint64_t m;

		snprintf(who, sizeof(who), "%s %d", i < WRITERS ? "writer" : "reader",
			 i < WRITERS ? i + 1 : i - WRITERS + 1);
		if (st->bad)
			CHECK_FAIL("%s: %" PRIu64 " errors, first: %s", who, st->bad, st->first_error);
		if (st->ops == 0)
			CHECK_FAIL("%s made no operation", who);
		m = sv_check_windows(who, windows + (size_t)i * nwin, window_cpu + (size_t)i * nwin, nwin,
				     WORKERS);
		if (i < WRITERS) {
			writes += st->ops;
			if (st->max_ns > max_write)
				max_write = st->max_ns;
			if (m < min_writer_window)
				min_writer_window = m;
		} else {
			reads += st->ops;
			overlapped += st->overlapped;
			if (st->max_ns > max_read)
				max_read = st->max_ns;
			if (st->max_cpu_ns > max_read_cpu)
				max_read_cpu = st->max_cpu_ns;
			over_1ms_cpu += st->over_1ms_cpu;
			if (m < min_reader_window)
				min_reader_window = m;
		}
	}
	/* Lost updates: two writers inside one slot at once would publish the
	 * same version twice. */
	for (size_t i = 0; i < NPARAMS; i++) {
		uint64_t seq = pbus_param_seq(setup.params[i]);

		if (seq != 1 + writes)
			CHECK_FAIL("%s: final version %" PRIu64 ", but 1 + %" PRIu64 " writes completed",
				    names[i], seq, writes);
	}
	stress_note("stress-table: %.1f s, 2 writers + 4 readers; writes %" PRIu64 " (%.0f/s: %"
		    PRIu64 " + %" PRIu64 "), reads %" PRIu64 " (%.0f/s), reads overlapping a write %"
		    PRIu64 " (%.2f%%), max read %.1f us wall, %.1f us thread CPU (%" PRIu64
		    " reads over 1 ms CPU), max write batch %.1f us, fewest ops in a "
		    "%.0f ms window: reader %" PRIu64 ", writer %" PRIu64,
		    o.seconds, writes, (double)writes / o.seconds, sh->stats[0].ops, sh->stats[1].ops, reads,
		    (double)reads / o.seconds, overlapped, reads ? 100.0 * (double)overlapped / (double)reads : 0.0,
		    (double)max_read / 1e3, (double)max_read_cpu / 1e3, over_1ms_cpu,
		    (double)max_write / 1e3, (double)SV_WINDOW_NS / 1e6, min_reader_window,
		    min_writer_window);
	pbus_table_close(t);
	if (stress_terminate(pbusd, 10) != 0)
		CHECK_FAIL("pbusd did not exit cleanly on SIGTERM");
	pbus_check_end();
	return stress_exit();
}
