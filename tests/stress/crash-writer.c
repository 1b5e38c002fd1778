/* SPDX-License-Identifier: MIT */
/*
 * crash-writer: writers and pbusd die at random moments; nobody else may
 * notice more than a short delay.
 *
 * stress/crash-writer. pbusd serves crash.pbs (an 8 KiB byte buffer "big"
 * and a double "level"). Two reader processes read both all the time; a
 * surviving writer (id 1) and a victim writer (id 2) write both all the time
 * with self-checking values (stress-values.h). Each round (default 300) the
 * victim is SIGKILLed at a random moment and respawned. In every other
 * round the survivor is first paused between two writes, so the victim
 * runs alone when it dies and the lock word seen after the kill is exactly
 * what the victim left; in the other rounds the survivor keeps competing
 * for the lock while the victim dies (and may take it over before we look).
 * (The first writer of a parameter owns its bias until a second one
 * revokes it for good, so the two writers here soon share every parameter
 * through its lock; stress-bias kills biased owners.)
 * Asserts:
 *  - right after reaping the victim, the slot's writer-lock word is
 *    inspected; the number of kills that left it held by the dead victim is
 *    counted and must be > 0, so the dead-holder case really ran;
 *  - after every kill the surviving writer completes a write of both
 *    parameters within 1 s (the dead holder's lock is taken over), and the
 *    lock word no longer names the victim afterwards;
 *  - the readers never read an inconsistent or invalid value (every word,
 *    length, status and timestamp of one write; versions never go back);
 *  - no single read takes more than 10 ms of the reader's own CPU time
 *    (100 ms under TSan, see stress-values.h).
 *    This is measured with CLOCK_THREAD_CPUTIME_ID around each read: it
 *    counts only the time the reader spent executing (retries included),
 *    not the time it waited for a CPU. The maximal wall time of a read is
 *    reported too, but not asserted: on this 2-core machine with five busy
 *    processes it includes being preempted for a scheduler slice or more,
 *    which no read protocol can prevent.
 *
 * stress/crash-pbusd. pbusd itself is SIGKILLed while readers read and
 * waiters sleep. Asserts: readers keep reading the last values;
 * pbus_table_state() says ORPHANED; after pbusd restarts, the old segment
 * says REPLACED, a reader notices and reopens the new one; waiters blocked
 * in pbus_watch_wait() (one parameter, and all) and pbus_param_wait_saved()
 * return -ESTALE instead of hanging; new waits and writes on the old
 * segment fail with -ESTALE.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <parambus/instance.h>
#include <parambus/table.h>

#include "table-internal.h" /* the slot's lock word, aux.writing */
#include "write-lock-internal.h"
#include "stress-common.h"
#include "stress-values.h"

#define READERS 2
#define SURVIVOR 1
#define VICTIM 2

static const char *const names[] = {"big", "level"};
static const struct sv_kind kinds[] = {{SV_BYTES, 8192}, {SV_DOUBLE, 8}};
#define NPARAMS 2

struct shared {
	uint32_t stop, pause, paused, victim_writes;
	uint64_t issued[SV_WRITERS];
	struct sv_stats readers[READERS], survivor, victim;
	/* crash-pbusd */
	uint32_t waiters_ready, reader_ready, reader_saw_orphaned, reader_reopened;
	int waiter_result[3];
	uint64_t reader_reads, reader_bad;
	char reader_error[256];
};

static struct shared *sh;
static char instance[64];

/* --- crash-writer ----------------------------------------------------------- */

struct role {
	int kind; /* 0 reader, 1 survivor, 2 victim */
	int n;
};

static int worker(void *arg)
{
	const struct role *role = arg;
	struct pbus_table *t;
	struct sv_worker w = {0};
	struct sv_stats *st = role->kind == 0 ? &sh->readers[role->n]
			      : role->kind == 1 ? &sh->survivor : &sh->victim;
	int r;

	r = pbus_table_open(instance, role->kind ? PBUS_OPEN_WRITE : PBUS_OPEN_READ, &t);
	if (r == 0)
		r = sv_bind(&w, t, names, kinds, NPARAMS);
	if (r < 0) {
		snprintf(st->first_error, sizeof(st->first_error), "open: %s", pbus_strerror(r));
		st->bad++;
		return 1;
	}
	w.issued = sh->issued;
	w.stop = &sh->stop;
	w.stats = st;
	if (role->kind == 0) {
		w.measure_cpu = true;
		w.assert_read_cpu = true;
		return sv_reader_run(&w);
	}
	w.writer_id = role->kind == 1 ? SURVIVOR : VICTIM;
	if (role->kind == 1) {
		w.pause = &sh->pause;
		w.paused = &sh->paused;
	} else {
		w.first_write = &sh->victim_writes;
	}
	return sv_writer_run(&w);
}

static uint64_t lock_word(const struct pbus_param *p)
{
	return __atomic_load_n(pbus_param_lock(p), __ATOMIC_ACQUIRE);
}

/* Did the dead victim @v leave @p's lock held? */
static bool left_held(const struct pbus_param *p, pid_t v)
{
	uint64_t lock = lock_word(p);

	return (lock & PBUS_LOCK_STATE_MASK) == 0 && pbus_token_tid(lock) == (uint32_t)v;
}

static void test_crash_writer(const struct stress_options *o, const char *state_dir)
{
	struct role readers[READERS], survivor = {1, 0}, victim = {2, 0};
	pid_t reader_pids[READERS], survivor_pid, pbusd;
	struct pbus_table *t = NULL;
	struct sv_worker setup = {0};
	struct stress_rng rng;
	char schema[4096];
	unsigned rounds = stress_scaled(o, 300, 200);
	unsigned dead[NPARAMS] = {0}, dead_paused = 0, paused_rounds = 0, done = 0;
	unsigned slow_takeovers = 0;
	int64_t max_takeover = 0, t_begin = stress_now_ns();
	int status, r;

	pbus_check_begin("crash-writer");
	stress_rng_seed(&rng, o->seed);
	snprintf(schema, sizeof(schema), "%s/crash.pbs", o->fixtures);
	pbusd = stress_pbusd_start(o, schema, instance, state_dir, NULL, NULL, 20, &status);
	if (pbusd < 0) {
		CHECK_FAIL("pbusd did not start (%s)", stress_status_text(status));
		pbus_check_end();
		return;
	}
	r = pbus_table_open(instance, PBUS_OPEN_WRITE, &t);
	if (r == 0)
		r = sv_bind(&setup, t, names, kinds, NPARAMS);
	if (r == 0)
		r = sv_write_initial(&setup); /* no reader may see the initial "invalid" */
	if (r < 0) {
		CHECK_FAIL("setup: %s", pbus_strerror(r));
		pbus_check_end();
		return;
	}
	for (int i = 0; i < READERS; i++) {
		readers[i] = (struct role){0, i};
		reader_pids[i] = stress_fork(worker, &readers[i]);
	}
	survivor_pid = stress_fork(worker, &survivor);

	for (unsigned round = 0; round < rounds; round++) {
		bool pausing = round % 2 == 1;
		struct pbus_watch *watch = NULL;
		uint32_t idx[NPARAMS] = {setup.index[0], setup.index[1]};
		unsigned changed = 0;
		pid_t v;
		int64_t t0;

		v = stress_fork(worker, &victim);
		if (stress_wait_at_least(&sh->victim_writes, round + 1, 10 * STRESS_NS_PER_S) < 0) {
			CHECK_FAIL("round %u: the victim made no write in 10 s", round);
			stress_kill_wait(v);
			break;
		}
		/* A random moment while both write (randomised timing, not
		 * synchronisation). */
		stress_sleep_ns((int64_t)stress_rng_range(&rng, 0, 2000) * 1000);
		if (pausing) {
			__atomic_store_n(&sh->pause, 1, __ATOMIC_RELEASE);
			if (stress_wait_at_least(&sh->paused, 1, 10 * STRESS_NS_PER_S) < 0) {
				CHECK_FAIL("round %u: the survivor did not pause in 10 s", round);
				stress_kill_wait(v);
				break;
			}
			stress_sleep_ns((int64_t)stress_rng_range(&rng, 0, 300) * 1000);
		}
		kill(v, SIGKILL);
		r = stress_wait_pid(v, 10, &status);
		if (r < 0) {
			CHECK_FAIL("round %u: the victim was not reaped within 10 s of SIGKILL (%s; %s)", round,
				    strerror(-r), stress_proc_where(v));
			break;
		}
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			CHECK_FAIL("round %u: the victim ended with %s before the kill", round,
				    stress_status_text(status));
		for (int i = 0; i < NPARAMS; i++) {
			if (left_held(setup.params[i], v)) {
				dead[i]++;
				if (i == 0 && pausing)
					dead_paused++;
			}
		}
		paused_rounds += pausing;

		/* The survivor must now complete a write of both within 1 s. */
		r = pbus_watch_new(t, idx, NPARAMS, &watch);
		if (r < 0) {
			CHECK_FAIL("pbus_watch_new: %s", pbus_strerror(r));
			break;
		}
		t0 = stress_now_ns();
		if (pausing) {
			__atomic_store_n(&sh->pause, 0, __ATOMIC_RELEASE);
			stress_futex_wake(&sh->pause);
		}
		while (changed != 3) {
			int64_t left = t0 + STRESS_NS_PER_S - stress_now_ns();
			uint32_t index;

			r = pbus_watch_wait(watch, left > 0 ? left : 0);
			if (r == -ETIMEDOUT)
				break;
			if (r < 0) {
				CHECK_FAIL("round %u: pbus_watch_wait: %s", round, pbus_strerror(r));
				break;
			}
			while (pbus_watch_next(watch, &index) > 0)
				changed |= index == idx[0] ? 1u : 2u;
		}
		if (stress_now_ns() - t0 > max_takeover)
			max_takeover = stress_now_ns() - t0;
		if (stress_now_ns() - t0 > 100 * STRESS_NS_PER_MS)
			slow_takeovers++;
		pbus_watch_free(watch);
		if (changed != 3) {
			CHECK_FAIL("round %u: no surviving writer completed a write of %s within 1 s of "
				    "the kill (lock words 0x%" PRIx64 ", 0x%" PRIx64 ", victim pid %d)",
				    round, changed & 1 ? names[1] : names[0], lock_word(setup.params[0]),
				    lock_word(setup.params[1]), (int)v);
			break;
		}
		for (int i = 0; i < NPARAMS; i++)
			if (pbus_token_tid(lock_word(setup.params[i])) == (uint32_t)v)
				CHECK_FAIL("round %u: %s: the lock still names the dead victim after a "
					    "later write", round, names[i]);
		done++;
	}

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->pause, 0, __ATOMIC_RELEASE);
	stress_futex_wake(&sh->pause);
	for (int i = 0; i <= READERS; i++) {
		pid_t pid = i < READERS ? reader_pids[i] : survivor_pid;

		if (stress_wait_pid(pid, 30, &status) < 0) {
			CHECK_FAIL("%s did not stop in 30 s", i < READERS ? "a reader" : "the survivor");
			status = stress_kill_wait(pid);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
			CHECK_FAIL("%s: %s", i < READERS ? "reader" : "survivor", stress_status_text(status));
	}

	uint64_t reads = 0, slow_wall = 0, overlapped = 0, over_1ms = 0;
	int64_t max_cpu = 0, max_wall = 0;

	for (int i = 0; i < READERS; i++) {
		struct sv_stats *st = &sh->readers[i];

		if (st->bad)
			CHECK_FAIL("reader %d: %" PRIu64 " errors, first: %s", i + 1, st->bad,
				    st->first_error);
		if (st->ops == 0)
			CHECK_FAIL("reader %d made no read", i + 1);
		reads += st->ops;
		slow_wall += st->slow_wall;
		over_1ms += st->over_1ms_cpu;
		overlapped += st->overlapped;
		if (st->max_cpu_ns > max_cpu)
			max_cpu = st->max_cpu_ns;
		if (st->max_ns > max_wall)
			max_wall = st->max_ns;
	}
	for (int i = 0; i < READERS; i++)
		stress_note("reader %d: slowest read by CPU: big %.3f ms, level %.3f ms; %" PRIu64
			    " versions went by during the slowest", i + 1,
			    (double)sh->readers[i].max_cpu_by_param[0] / 1e6,
			    (double)sh->readers[i].max_cpu_by_param[1] / 1e6,
			    sh->readers[i].max_cpu_versions);
	if (sh->survivor.bad)
		CHECK_FAIL("survivor: %" PRIu64 " errors, first: %s", sh->survivor.bad,
			    sh->survivor.first_error);
	if (sh->victim.bad)
		CHECK_FAIL("victims: %" PRIu64 " errors, first: %s", sh->victim.bad,
			    sh->victim.first_error);
	if (done == rounds && dead[0] == 0)
		CHECK_FAIL("none of %u kills left the lock of 'big' held: the dead-holder case was "
			    "not exercised", rounds);
	{
		double secs = (double)(stress_now_ns() - t_begin) / 1e9;

		stress_note("crash-writer: %u kills in %.1f s (seed %" PRIu64 "); kills leaving the lock "
			    "held by the dead victim: big %u (%u of %u with the survivor paused), level "
			    "%u; slowest takeover (kill to both written) %.2f ms, %u over 100 ms; reads %"
			    PRIu64 " (%.0f/s), overlapping a write %" PRIu64 "; max read: %.3f ms thread "
			    "CPU (%" PRIu64 " reads over 1 ms CPU), %.2f ms wall (%" PRIu64 " reads over 10 "
			    "ms wall, preempted); survivor writes %" PRIu64 ", victim writes %" PRIu64,
			    done, secs, o->seed, dead[0], dead_paused, paused_rounds, dead[1],
			    (double)max_takeover / 1e6, slow_takeovers, reads, (double)reads / secs,
			    overlapped, (double)max_cpu / 1e6, over_1ms, (double)max_wall / 1e6, slow_wall,
			    sh->survivor.ops, sh->victim.ops);
	}
	pbus_table_close(t);
	if (stress_terminate(pbusd, 10) != 0)
		CHECK_FAIL("pbusd did not exit cleanly on SIGTERM");
	pbus_check_end();
}

/* --- crash-pbusd ------------------------------------------------------------ */

#define LEVEL_VALUE 12.5

static int waiter(void *arg)
{
	int n = *(const int *)arg;
	struct pbus_table *t;
	const struct pbus_param *level, *kept;
	struct pbus_watch *w = NULL;
	uint32_t index;
	int r;

	r = pbus_table_open(instance, PBUS_OPEN_READ, &t);
	if (r == 0)
		r = pbus_table_find(t, "level", &level);
	if (r == 0)
		r = pbus_table_find(t, "kept", &kept);
	if (r == 0 && n < 2) {
		index = level->index_;
		r = pbus_watch_new(t, &index, n == 0 ? 1 : 0, &w);
	}
	if (r < 0) {
		sh->waiter_result[n] = r;
		stress_add_wake(&sh->waiters_ready, 1);
		return 1;
	}
	stress_add_wake(&sh->waiters_ready, 1);
	if (n < 2) {
		/* Nothing writes any more: only the end of the segment may end
		 * this wait. */
		do
			r = pbus_watch_wait(w, -1);
		while (r > 0 || r == -EINTR);
	} else {
		/* A version of "kept" that will never be saved. */
		do
			r = pbus_param_wait_saved(kept, pbus_param_seq(kept) + 1000, -1);
		while (r == -EINTR);
	}
	sh->waiter_result[n] = r;
	return 0;
}

static int orphan_reader(void *arg)
{
	struct pbus_table *t;
	const struct pbus_param *level;
	bool told_orphaned = false;
	int r;

	(void)arg;
	r = pbus_table_open(instance, PBUS_OPEN_READ, &t);
	if (r == 0)
		r = pbus_table_find(t, "level", &level);
	if (r < 0) {
		snprintf(sh->reader_error, sizeof(sh->reader_error), "open: %s", pbus_strerror(r));
		return 1;
	}
	stress_add_wake(&sh->reader_ready, 1);
	for (uint64_t n = 1;; n++) {
		double d = 0;

		r = pbus_param_get_double(level, &d);
		if (r != PBUS_STATUS_OK || d != LEVEL_VALUE) {
			if (sh->reader_bad++ == 0)
				snprintf(sh->reader_error, sizeof(sh->reader_error),
					 "read %g status %d, wrote %g", d, r, LEVEL_VALUE);
		}
		__atomic_store_n(&sh->reader_reads, n, __ATOMIC_RELAXED);
		if (n % 4096)
			continue;
		/* pbus_table_state makes system calls: not on every read. */
		r = pbus_table_state(t);
		if (r == PBUS_TABLE_ORPHANED && !told_orphaned) {
			told_orphaned = true;
			stress_add_wake(&sh->reader_saw_orphaned, 1);
		} else if (r == PBUS_TABLE_REPLACED) {
			break;
		} else if (r != PBUS_TABLE_LIVE && r != PBUS_TABLE_ORPHANED) {
			snprintf(sh->reader_error, sizeof(sh->reader_error), "state %d", r);
			sh->reader_bad++;
			return 1;
		}
	}
	pbus_table_close(t);
	/* Reopen: the new segment is there (published before the old one was
	 * marked replaced... or just after: retry briefly). */
	for (int attempt = 0; attempt < 1000; attempt++) {
		r = pbus_table_open(instance, PBUS_OPEN_READ, &t);
		if (r == 0 && pbus_table_state(t) == PBUS_TABLE_LIVE)
			break;
		if (r == 0)
			pbus_table_close(t);
		t = NULL;
		stress_sleep_ns(10 * STRESS_NS_PER_MS);
	}
	if (!t) {
		snprintf(sh->reader_error, sizeof(sh->reader_error), "reopen failed: %s",
			 pbus_strerror(r));
		return 1;
	}
	r = pbus_table_find(t, "level", &level);
	if (r == 0) {
		double d = 1;

		/* The new pbusd starts "level" from zero, never written. */
		r = pbus_param_get_double(level, &d);
		if (r != PBUS_STATUS_INVALID || d != 0) {
			snprintf(sh->reader_error, sizeof(sh->reader_error),
				 "new segment: level %g status %d, expected 0 invalid", d, r);
			sh->reader_bad++;
		}
	}
	pbus_table_close(t);
	stress_add_wake(&sh->reader_reopened, 1);
	return 0;
}

/* Is @pid asleep in futex(2)? /proc/PID/syscall starts with the number of
 * the system call it is blocked in (202 on x86-64, 98 on aarch64). */
static bool asleep_in_futex(pid_t pid)
{
	char path[64], *text;
	long nr;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	text = stress_read_file(path, NULL);
	if (!text)
		return false;
	nr = strtol(text, NULL, 10);
	free(text);
#if defined(__x86_64__)
	yes = nr == 202;
#elif defined(__aarch64__)
	yes = nr == 98;
#else
	yes = nr >= 0;
#endif
	return yes;
}

static void test_crash_pbusd(const struct stress_options *o, const char *state_dir)
{
	static int waiter_n[3] = {0, 1, 2};
	pid_t pbusd, waiters[3], reader;
	struct pbus_table *t = NULL;
	const struct pbus_param *level = NULL;
	struct pbus_watch *w = NULL;
	char schema[4096];
	double d = 0;
	int status, r;

	pbus_check_begin("crash-pbusd");
	snprintf(schema, sizeof(schema), "%s/crash.pbs", o->fixtures);
	snprintf(instance, sizeof(instance), "crash-pbusd-%d", (int)getpid());
	pbusd = stress_pbusd_start(o, schema, instance, state_dir, NULL, NULL, 20, &status);
	if (pbusd < 0) {
		CHECK_FAIL("pbusd did not start (%s)", stress_status_text(status));
		pbus_check_end();
		return;
	}
	r = pbus_table_open(instance, PBUS_OPEN_WRITE, &t);
	if (r == 0)
		r = pbus_table_find(t, "level", &level);
	if (r == 0)
		r = pbus_param_set_double(level, LEVEL_VALUE);
	if (r < 0) {
		CHECK_FAIL("setup: %s", pbus_strerror(r));
		pbus_check_end();
		return;
	}
	for (int i = 0; i < 3; i++)
		waiters[i] = stress_fork(waiter, &waiter_n[i]);
	reader = stress_fork(orphan_reader, NULL);
	if (stress_wait_at_least(&sh->waiters_ready, 3, 10 * STRESS_NS_PER_S) < 0 ||
	    stress_wait_at_least(&sh->reader_ready, 1, 10 * STRESS_NS_PER_S) < 0)
		CHECK_FAIL("waiters or reader not ready in 10 s");
	/* Make sure the waiters really sleep in the futex before pbusd dies.
	 * There is no event for "went to sleep", so this looks, with a bound. */
	for (int i = 0; i < 3; i++) {
		int64_t deadline = stress_now_ns() + 10 * STRESS_NS_PER_S;

		while (!asleep_in_futex(waiters[i]) && stress_now_ns() < deadline)
			stress_sleep_ns(STRESS_NS_PER_MS);
		if (!asleep_in_futex(waiters[i]))
			CHECK_FAIL("waiter %d is not asleep in futex(2) after 10 s", i);
	}

	kill(pbusd, SIGKILL);
	stress_wait_pid(pbusd, 10, &status);
	r = pbus_table_state(t);
	CHECK_MSG(r == PBUS_TABLE_ORPHANED, "state after SIGKILL of pbusd is %d, not ORPHANED", r);
	r = pbus_param_get_double(level, &d);
	CHECK_MSG(r == PBUS_STATUS_OK && d == LEVEL_VALUE,
		     "orphaned: read %g status %d, the last value was %g", d, r, LEVEL_VALUE);
	if (stress_wait_at_least(&sh->reader_saw_orphaned, 1, 10 * STRESS_NS_PER_S) < 0)
		CHECK_FAIL("the reader process did not see ORPHANED within 10 s");
	for (int i = 0; i < 3; i++)
		CHECK_MSG(sh->waiter_result[i] == 0 && asleep_in_futex(waiters[i]),
			     "waiter %d returned (%d) while pbusd was merely dead", i,
			     sh->waiter_result[i]);

	pbusd = stress_pbusd_start(o, schema, instance, state_dir, NULL, NULL, 20, &status);
	if (pbusd < 0) {
		CHECK_FAIL("the restarted pbusd did not start (%s)", stress_status_text(status));
	} else {
		r = pbus_table_state(t);
		CHECK_MSG(r == PBUS_TABLE_REPLACED, "old segment after restart: state %d, not "
			     "REPLACED", r);
		r = pbus_watch_new(t, NULL, 0, &w);
		if (r == 0)
			r = pbus_watch_wait(w, STRESS_NS_PER_S);
		CHECK_MSG(r == -ESTALE, "a new wait on the replaced segment returned %d, not "
			     "-ESTALE", r);
		pbus_watch_free(w);
		r = pbus_param_set_double(level, 1.0);
		CHECK_MSG(r == -ESTALE, "a write to the replaced segment returned %d, not -ESTALE",
			     r);
		for (int i = 0; i < 3; i++) {
			if (stress_wait_pid(waiters[i], 10, &status) < 0) {
				CHECK_FAIL("waiter %d still blocked 10 s after the restart (hangs)", i);
				stress_kill_wait(waiters[i]);
				continue;
			}
			CHECK_MSG(sh->waiter_result[i] == -ESTALE,
				     "waiter %d (%s) returned %d (%s), not -ESTALE", i,
				     i == 0 ? "watch of one" : i == 1 ? "watch of all" : "wait_saved",
				     sh->waiter_result[i], pbus_strerror(sh->waiter_result[i]));
		}
		if (stress_wait_pid(reader, 20, &status) < 0) {
			CHECK_FAIL("the reader did not notice REPLACED and reopen within 20 s");
			stress_kill_wait(reader);
		} else {
			CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->reader_reopened,
				     "reader: %s: %s", stress_status_text(status), sh->reader_error);
		}
	}
	CHECK_MSG(sh->reader_bad == 0, "reader: %" PRIu64 " bad reads, first: %s",
		     sh->reader_bad, sh->reader_error);
	stress_note("crash-pbusd: reader made %" PRIu64 " reads across the kill and restart; "
		    "3 waiters returned -ESTALE", sh->reader_reads);
	pbus_table_close(t);
	if (pbusd > 0 && stress_terminate(pbusd, 10) != 0)
		CHECK_FAIL("the restarted pbusd did not exit cleanly on SIGTERM");
	pbus_check_end();
}

int main(int argc, char **argv)
{
	struct stress_options o;
	char *state_dir;

	stress_init("crash-writer", argc, argv, 10.0, 120.0, &o);
	sh = stress_shared_alloc(sizeof(*sh));
	state_dir = stress_make_temp_dir("crash-writer");
	snprintf(instance, sizeof(instance), "crash-writer-%d", (int)getpid());
	test_crash_writer(&o, state_dir);
	test_crash_pbusd(&o, state_dir);
	return stress_exit();
}
