/* SPDX-License-Identifier: MIT */
/*
 * persist-crash: pbusd's state file survives SIGKILL at any moment, and
 * pbusd copes with bad state files.
 *
 * stress/persist-crash. Rounds (default 40, at least 30): pbusd starts
 * with --save-delay 0 (a save starts on every change, so saves are almost
 * always in flight), a client writes the persistent "counter" (values 7k+3,
 * so that a damaged number is unlikely to pass as a written one) and
 * "label" ("v<counter>") as fast as it can, and after each write learns
 * what pbusd acknowledges as saved: every 4th write waits with
 * pbus_param_wait_saved(), the others read pbus_param_saved_seq(). After a
 * random 2-40 ms and 0.5-5 ms of writes without waiting (pbusd saves back
 * to back), pbusd is SIGKILLed; rounds go on until 3 kills have hit a save
 * in progress (at most 4 times the count). Asserts, per round:
 *  - the state file is complete: its checksum line matches (checked here,
 *    independently of pbusd), and the restarted pbusd restores it without
 *    reporting damage (no "damaged" in its log, no .corrupt file);
 *  - the restored counter equals the file's and is >= the last value
 *    acknowledged as saved (nothing saved is lost), and is a value that was
 *    really written (or the default if nothing was ever acknowledged);
 *    the restored label is a written one too;
 *  - some kills landed in the middle of a save (a temporary file of the
 *    killed pbusd was left behind), so the test exercised that case.
 * stress/persist-corrupt-file: a flipped byte in the state file is
 *   detected, the file is kept aside as .corrupt (unchanged), pbusd starts
 *   with the defaults and saves again afterwards.
 * stress/persist-unknown-param: a parameter of the state file that the
 *   schema no longer has is skipped with a warning naming it; the others
 *   are restored.
 * stress/persist-out-of-range: a saved value outside the new schema's range
 *   is refused with a warning and the default kept; other values restored.
 * stress/persist-second-pbusd: a second pbusd for the same instance exits
 *   with status 1 saying the instance is already served; the first keeps
 *   its segment (same instance id), stays LIVE and keeps saving.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <parambus/instance.h>
#include <parambus/table.h>

#include "stress-common.h"
#include "table-internal.h" /* the segment header's instance id */

static const struct stress_options *opts;
static const char *const save_delay_0[] = {"--save-delay", "0", NULL};

/* FNV-1a-64, as the state file's "end" line uses it (docs/schema-format.md
 * defines the same function for the schema hash). */
static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* Check a state file's checksum line; fill the value of "counter" and
 * "label" (raw, percent-encoded). 0, -ENOENT, or -EBADMSG. */
static int parse_state(const char *path, long long *ret_counter, char *label, size_t label_size)
{
	size_t n;
	char *data = stress_read_file(path, &n), *last, *line, *save = NULL;
	unsigned long long want;
	int r = -EBADMSG;

	if (!data)
		return -ENOENT;
	if (n < 2 || data[n - 1] != '\n' || strlen(data) != n)
		goto out;
	last = data + n - 1;
	while (last > data && last[-1] != '\n')
		last--;
	if (sscanf(last, "end %16llx\n", &want) != 1 || strlen(last) != 21 ||
	    fnv1a(data, (size_t)(last - data)) != want)
		goto out;
	*last = 0;
	*ret_counter = -1;
	label[0] = 0;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "counter=", 8))
			*ret_counter = strtoll(line + 8, NULL, 10);
		else if (!strncmp(line, "label=", 6))
			snprintf(label, label_size, "%s", line + 6);
	}
	r = 0;
out:
	free(data);
	return r;
}

/* Write a state file by hand, as pbusd would (header, body, checksum). */
static void write_state(const char *path, const char *instance, const char *body)
{
	char *text = NULL, *full = NULL;
	FILE *f;

	if (asprintf(&text, "# parambus state file, written by pbusd: do not edit\npbus-state 1\n"
		     "instance %s\nschema 0x0000000000000000\n%s", instance, body) < 0 ||
	    asprintf(&full, "%send %016llx\n", text,
		     (unsigned long long)fnv1a(text, strlen(text))) < 0)
		abort();
	f = fopen(path, "w");
	if (!f || fputs(full, f) < 0 || fclose(f) != 0)
		CHECK_FAIL("cannot write %s", path);
	free(text);
	free(full);
}

struct client {
	struct pbus_table *t;
	const struct pbus_param *counter, *label;
	uint32_t ci, li;
};

static int client_open(const char *instance, struct client *c)
{
	int r = pbus_table_open(instance, PBUS_OPEN_WRITE, &c->t);

	if (r == 0)
		r = pbus_table_find(c->t, "counter", &c->counter);
	if (r == 0)
		r = pbus_table_find(c->t, "label", &c->label);
	if (r == 0) {
		struct pbus_param_info info;

		pbus_param_describe(c->counter, &info);
		c->ci = info.index;
		pbus_param_describe(c->label, &info);
		c->li = info.index;
	}
	return r;
}

static int get_counter(const struct pbus_param *p, long long *ret)
{
	int64_t v = 0;
	int r = pbus_param_get_int64(p, &v);

	*ret = v;
	return r;
}

static pid_t start(const char *schema_name, const char *instance, const char *dir,
		   const char *log, const char *const *extra)
{
	char schema[4096];
	int status;
	pid_t pid;

	snprintf(schema, sizeof(schema), "%s/%s", opts->fixtures, schema_name);
	pid = stress_pbusd_start(opts, schema, instance, dir, log, extra, 30, &status);
	if (pid < 0)
		CHECK_FAIL("pbusd did not start (%s), log %s", stress_status_text(status), log);
	return pid;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* --- persist-crash ------------------------------------------------------- */

static long long value_of(uint64_t k)
{
	return (long long)(7 * k + 3);
}

static bool was_written(long long v, long long written_max)
{
	return v >= 3 && (v - 3) % 7 == 0 && v <= written_max;
}

static void test_persist_crash(const char *logs)
{
	char instance[64], state[512], log[512], label[128], file_label[128];
	char *dir = stress_make_temp_dir("persist-crash");
	unsigned rounds = stress_scaled(opts, 40, 30), mid_save = 0, waits = 0, done = 0;
	struct stress_rng rng;
	uint64_t k = 0;
	long long acked = 0, written_max = 0, file_counter = -1;
	bool have_file = false;
	int64_t max_wait = 0, t_begin = stress_now_ns();

	pbus_check_begin("persist-crash");
	stress_rng_seed(&rng, opts->seed);
	snprintf(instance, sizeof(instance), "persist-crash-%d", (int)getpid());
	snprintf(state, sizeof(state), "%s/%s.state", dir, instance);
	/* At least @rounds kills, and more (up to 4 times as many) until 3 of
	 * them have hit a save in progress. */
	for (unsigned round = 0;; round++) {
		bool last = (round >= rounds && mid_save >= 3) || round >= 4 * rounds;
		struct client c = {0};
		char corrupt[600];
		long long restored = -1;
		uint64_t s0 = 0, k0 = 0;
		int64_t until, kill_at;
		pid_t pbusd;
		int r, status;

		snprintf(log, sizeof(log), "%s/round-%u.log", logs, round);
		pbusd = start("persist.pbs", instance, dir, log, save_delay_0);
		if (pbusd < 0)
			break;
		if ((r = client_open(instance, &c)) < 0) {
			CHECK_FAIL("round %u: open: %s", round, pbus_strerror(r));
			stress_kill_wait(pbusd);
			break;
		}
		/* What the restarted pbusd restored. */
		snprintf(corrupt, sizeof(corrupt), "%s.corrupt", state);
		CHECK_MSG(!stress_file_contains(log, "damaged") && !file_exists(corrupt),
			     "round %u: pbusd found the state file damaged (see %s)", round, log);
		r = get_counter(c.counter, &restored);
		CHECK_MSG(r == PBUS_STATUS_OK, "round %u: restored counter has status %d", round, r);
		if (have_file)
			CHECK_MSG(restored == file_counter, "round %u: restored %lld, the file says %lld",
				     round, restored, file_counter);
		CHECK_MSG(restored >= acked, "round %u: restored %lld, but %lld was acknowledged as "
			     "saved: a save was lost", round, restored, acked);
		CHECK_MSG(restored == 0 ? acked == 0 : was_written(restored, written_max),
			     "round %u: restored %lld was never written (last written %lld)", round,
			     restored, written_max);
		r = pbus_param_get_string(c.label, label, sizeof(label));
		CHECK_MSG(r == PBUS_STATUS_OK &&
			     (!strcmp(label, "init") ||
			      (label[0] == 'v' && was_written(strtoll(label + 1, NULL, 10), written_max))),
			     "round %u: restored label '%s' was never written", round, label);
		if (last) {
			/* The last round only checks what the previous kill left. */
			pbus_table_close(c.t);
			if (stress_terminate(pbusd, 10) != 0)
				CHECK_FAIL("pbusd did not exit cleanly on SIGTERM");
			done = round;
			break;
		}

		/* Write as fast as possible for a random while (waiting for every
		 * 4th write to be saved), then for a random 0.5-5 ms more without
		 * waiting, so that pbusd saves back to back, then kill it. */
		until = stress_now_ns() + (int64_t)stress_rng_range(&rng, 2, 40) * STRESS_NS_PER_MS;
		kill_at = until + (int64_t)stress_rng_range(&rng, 500, 5000) * 1000;
		for (unsigned n = 0; stress_now_ns() < kill_at; n++) {
			char text[32];
			long long v = value_of(++k);
			struct pbus_write w[2] = {
				{.index = c.ci, .value = &v, .length = sizeof(v)},
				{.index = c.li, .value = text},
			};

			w[1].length = (size_t)snprintf(text, sizeof(text), "v%lld", v);
			r = pbus_table_write_many(c.t, w, 2);
			if (r < 0) {
				CHECK_FAIL("round %u: write: %s", round, pbus_strerror(r));
				break;
			}
			written_max = v;
			if (s0 == 0) {
				s0 = w[0].seq;
				k0 = k;
			}
			if (n % 4 == 3 && stress_now_ns() < until) {
				int64_t t0 = stress_now_ns();

				r = pbus_param_wait_saved(c.counter, w[0].seq, 10 * STRESS_NS_PER_S);
				if (stress_now_ns() - t0 > max_wait)
					max_wait = stress_now_ns() - t0;
				if (r < 0) {
					CHECK_FAIL("round %u: waiting 10 s for version %" PRIu64 " to be saved: "
						    "%s", round, w[0].seq, pbus_strerror(r));
					break;
				}
				waits++;
				if (v > acked)
					acked = v;
			} else {
				uint64_t s = pbus_param_saved_seq(c.counter);

				/* One writer: version s0 + i holds the value of write k0 + i. */
				if (s >= s0 && value_of(k0 + (s - s0)) > acked)
					acked = value_of(k0 + (s - s0));
			}
		}
		kill(pbusd, SIGKILL);
		status = stress_kill_wait(pbusd);
		(void)status;
		pbus_table_close(c.t);
		/* A temporary file of the killed pbusd: the kill hit a save. */
		{
			char tmp[600];

			snprintf(tmp, sizeof(tmp), "%s.tmp.%d", state, (int)pbusd);
			if (file_exists(tmp))
				mid_save++;
		}
		r = parse_state(state, &file_counter, file_label, sizeof(file_label));
		have_file = r == 0;
		if (r == -EBADMSG)
			CHECK_FAIL("round %u: the state file is damaged after the kill", round);
		else if (r == -ENOENT)
			CHECK_MSG(acked == 0, "round %u: no state file, but %lld was acknowledged",
				     round, acked);
		if (pbus_check_case_failed())
			break;
	}
	CHECK_MSG(done >= rounds, "only %u of %u rounds ran", done, rounds);
	CHECK_MSG(done < rounds || mid_save > 0,
		     "no kill of %u hit a save in progress: the crash case was not exercised", done);
	stress_note("persist-crash: %u kills in %.1f s (seed %" PRIu64 "), %u of them during a save "
		    "(a temporary file left behind); %" PRIu64 " writes, %u waits for the save, the "
		    "longest %.1f ms; last acknowledged %lld, last written %lld",
		    done, (double)(stress_now_ns() - t_begin) / 1e9, opts->seed, mid_save, k, waits,
		    (double)max_wait / 1e6, acked, written_max);
	pbus_check_end();
}

/* --- the bad state files ---------------------------------------------------- */

static void test_corrupt_file(const char *logs)
{
	char instance[64], state[512], corrupt[600], log[512];
	char *dir = stress_make_temp_dir("persist-corrupt");
	struct client c = {0};
	long long v = 1234567, got = -1;
	char *before = NULL, *aside = NULL, *hit;
	pid_t pbusd;
	int r;

	pbus_check_begin("persist-corrupt-file");
	snprintf(instance, sizeof(instance), "persist-corrupt-%d", (int)getpid());
	snprintf(state, sizeof(state), "%s/%s.state", dir, instance);
	snprintf(corrupt, sizeof(corrupt), "%s.corrupt", state);
	snprintf(log, sizeof(log), "%s/corrupt-1.log", logs);
	if ((pbusd = start("persist.pbs", instance, dir, log, NULL)) < 0)
		goto out;
	r = client_open(instance, &c);
	if (r == 0)
		r = pbus_param_set_int64(c.counter, (int64_t)v);
	if (r == 0)
		r = pbus_param_wait_saved(c.counter, pbus_param_seq(c.counter), 10 * STRESS_NS_PER_S);
	pbus_table_close(c.t);
	c.t = NULL;
	CHECK_MSG(r == 0, "setup: %s", pbus_strerror(r));
	CHECK_MSG(stress_terminate(pbusd, 10) == 0, "pbusd did not exit cleanly");

	/* Flip one byte of the saved number: 1234567 -> 1234467. */
	before = stress_read_file(state, NULL);
	hit = before ? strstr(before, "counter=1234567") : NULL;
	if (!hit) {
		CHECK_FAIL("the state file does not hold counter=1234567");
		goto out;
	}
	hit[8 + 4] ^= 0x01;
	{
		FILE *f = fopen(state, "w");

		if (!f || fputs(before, f) < 0 || fclose(f) != 0)
			CHECK_FAIL("cannot rewrite %s", state);
	}
	snprintf(log, sizeof(log), "%s/corrupt-2.log", logs);
	if ((pbusd = start("persist.pbs", instance, dir, log, NULL)) < 0)
		goto out;
	CHECK_MSG(stress_file_contains(log, "damaged"), "pbusd did not report the damaged file");
	aside = stress_read_file(corrupt, NULL);
	CHECK_MSG(aside && !strcmp(aside, before), "the damaged file was not kept aside "
		     "unchanged as %s", corrupt);
	r = client_open(instance, &c);
	if (r == 0)
		r = get_counter(c.counter, &got);
	CHECK_MSG(r == PBUS_STATUS_OK && got == 0, "counter after the damaged file: %lld "
		     "(status %d), expected the default 0", got, r);
	CHECK_MSG(pbus_table_state(c.t) == PBUS_TABLE_LIVE, "pbusd is not serving");
	/* And it saves again. */
	r = pbus_param_set_int64(c.counter, 77);
	if (r == 0)
		r = pbus_param_wait_saved(c.counter, pbus_param_seq(c.counter), 10 * STRESS_NS_PER_S);
	{
		long long fc = -1;
		char fl[128];

		CHECK_MSG(r == 0 && parse_state(state, &fc, fl, sizeof(fl)) == 0 && fc == 77,
			     "no good save after the restart (%s, file counter %lld)", pbus_strerror(r),
			     fc);
	}
	pbus_table_close(c.t);
	CHECK_MSG(stress_terminate(pbusd, 10) == 0, "pbusd did not exit cleanly");
out:
	free(before);
	free(aside);
	pbus_check_end();
}

static void test_unknown_and_range(const char *logs)
{
	char instance[64], state[512], log[512], label[128];
	char *dir = stress_make_temp_dir("persist-schema");
	struct client c = {0};
	long long got = -1;
	pid_t pbusd;
	int r;

	snprintf(instance, sizeof(instance), "persist-schema-%d", (int)getpid());
	snprintf(state, sizeof(state), "%s/%s.state", dir, instance);

	pbus_check_begin("persist-unknown-param");
	write_state(state, instance, "ghost=5\ncounter=10\nlabel=kept\n");
	snprintf(log, sizeof(log), "%s/unknown.log", logs);
	if ((pbusd = start("persist.pbs", instance, dir, log, NULL)) >= 0) {
		CHECK_MSG(stress_file_contains(log, "'ghost'") &&
			     stress_file_contains(log, "warning"),
			     "no warning naming 'ghost' in the log %s", log);
		CHECK_MSG(!stress_file_contains(log, "damaged"), "pbusd called the file damaged");
		r = client_open(instance, &c);
		if (r == 0)
			r = get_counter(c.counter, &got);
		CHECK_MSG(r == PBUS_STATUS_OK && got == 10, "counter %lld (status %d), saved 10",
			     got, r);
		r = pbus_param_get_string(c.label, label, sizeof(label));
		CHECK_MSG(r == PBUS_STATUS_OK && !strcmp(label, "kept"), "label '%s', saved 'kept'",
			     label);
		pbus_table_close(c.t);
		CHECK_MSG(stress_terminate(pbusd, 10) == 0, "pbusd did not exit cleanly");
	}
	pbus_check_end();

	pbus_check_begin("persist-out-of-range");
	write_state(state, instance, "counter=500\nlabel=also%20kept\n");
	snprintf(log, sizeof(log), "%s/range.log", logs);
	if ((pbusd = start("persist-narrow.pbs", instance, dir, log, NULL)) >= 0) {
		CHECK_MSG(stress_file_contains(log, "'counter' = '500'") &&
			     stress_file_contains(log, "keeping the default"),
			     "no warning about counter=500 keeping the default in %s", log);
		r = client_open(instance, &c);
		got = -1;
		if (r == 0)
			r = get_counter(c.counter, &got);
		CHECK_MSG(r == PBUS_STATUS_OK && got == 42, "counter %lld (status %d): the new "
			     "schema's range is 0..100, its default 42", got, r);
		r = pbus_param_get_string(c.label, label, sizeof(label));
		CHECK_MSG(r == PBUS_STATUS_OK && !strcmp(label, "also kept"),
			     "label '%s', saved 'also kept'", label);
		pbus_table_close(c.t);
		CHECK_MSG(stress_terminate(pbusd, 10) == 0, "pbusd did not exit cleanly");
	}
	pbus_check_end();
}

static void test_second_pbusd(const char *logs)
{
	char instance[64], log1[512], log2[512], schema[4096];
	char *dir = stress_make_temp_dir("persist-second");
	struct client c = {0};
	uint64_t id_before = 0;
	pid_t first, second;
	int status = 0, r;

	pbus_check_begin("persist-second-pbusd");
	snprintf(instance, sizeof(instance), "persist-second-%d", (int)getpid());
	snprintf(log1, sizeof(log1), "%s/first.log", logs);
	snprintf(log2, sizeof(log2), "%s/second.log", logs);
	snprintf(schema, sizeof(schema), "%s/persist.pbs", opts->fixtures);
	if ((first = start("persist.pbs", instance, dir, log1, NULL)) < 0)
		goto out;
	if ((r = client_open(instance, &c)) < 0) {
		CHECK_FAIL("open: %s", pbus_strerror(r));
		goto out;
	}
	id_before = c.t->header->instance_id;
	second = stress_pbusd_start(opts, schema, instance, dir, log2, NULL, 30, &status);
	if (second >= 0) {
		CHECK_FAIL("a second pbusd for the same instance started");
		stress_kill_wait(second);
	} else {
		CHECK_MSG(second == -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1,
			     "the second pbusd ended with %s, not exit 1", stress_status_text(status));
		CHECK_MSG(stress_file_contains(log2, "already served"),
			     "the second pbusd did not say the instance is already served (log %s)",
			     log2);
	}
	/* The first is unaffected: alive, same segment, still saving. */
	CHECK_MSG(kill(first, 0) == 0 && stress_wait_pid(first, 0, &status) == -ETIMEDOUT,
		     "the first pbusd is gone");
	CHECK_MSG(pbus_table_state(c.t) == PBUS_TABLE_LIVE, "the first segment is no longer live");
	{
		struct pbus_table *t2 = NULL;

		r = pbus_table_open(instance, PBUS_OPEN_READ, &t2);
		CHECK_MSG(r == 0 && t2->header->instance_id == id_before,
			     "the published segment changed (%s)", pbus_strerror(r));
		pbus_table_close(t2);
	}
	r = pbus_param_set_int64(c.counter, 99);
	if (r == 0)
		r = pbus_param_wait_saved(c.counter, pbus_param_seq(c.counter), 10 * STRESS_NS_PER_S);
	CHECK_MSG(r == 0, "the first pbusd no longer saves: %s", pbus_strerror(r));
	pbus_table_close(c.t);
	CHECK_MSG(stress_terminate(first, 10) == 0, "the first pbusd did not exit cleanly");
out:
	pbus_check_end();
}

int main(int argc, char **argv)
{
	struct stress_options o;
	char *logs;

	stress_init("persist-crash", argc, argv, 1.0, 300.0, &o);
	opts = &o;
	logs = stress_make_temp_dir("persist-logs");
	test_persist_crash(logs);
	test_corrupt_file(logs);
	test_unknown_and_range(logs);
	test_second_pbusd(logs);
	return stress_exit();
}
