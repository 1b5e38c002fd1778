/* SPDX-License-Identifier: MIT */
/*
 * stress-bias: the writer bias (docs/segment-format.md §4.3) under attack.
 * A parameter is biased to its first writer and revoked, for good, by its
 * second, so every revocation needs a fresh parameter: the instance here has
 * 256 byte buffers of 1 KiB (four copies each), used one per round, and a
 * new instance is made when they run out.
 *
 * stress/bias-threads (one process, so that ThreadSanitizer sees it all):
 * per 20 us round, writer thread A writes the round's double flat out (it
 * takes the bias); writer thread B starts a moment later and writes it flat
 * out too (it revokes the bias while A keeps writing, and both then take
 * the lock). A writes with pbus_param_set_double() and a prepared batch
 * (pbus_batch_write()) in turn, whose fast path has its own copy of the
 * owner's handshake, B with pbus_table_write_many().
 * Two threads on two CPUs and short writes make many of A's fast paths
 * meet a revocation. Asserts: B's own versions only grow, nothing is lost (the final version equals the number of completed
 * writes, which two writers in one copy would break), and every round's
 * bias was revoked. (Readers against writers: stress-threads.)
 *
 * stress/bias-crash (processes): per round, a victim process writes the
 * round's parameter flat out (it takes the bias) and is SIGKILLed at a
 * random moment, often in the middle of a write; then this process writes
 * the parameter, which must revoke the dead owner's bias within 1 s and
 * take it over (a dead owner can store nothing late), and a reader process
 * reads every parameter all the while. Asserts: every revocation completes
 * and passes the bias on, no reader sees an inconsistent value, and some
 * kills did land in the middle of a biased write.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <parambus/instance.h>
#include <parambus/schema.h>
#include <parambus/table.h>

#include "stress-common.h"
#include "table-internal.h" /* the lock word and aux.writing */
#include "write-lock-internal.h"

#define NPARAMS 256             /* p000..: byte buffers, for bias-crash */
#define NDOUBLES 4096           /* d0000..: doubles, for bias-threads */
#define VALUE_BYTES 1024
#define VALUE_WORDS (VALUE_BYTES / 8)
#define ROUND_NS (20 * 1000)

static char instance[64];
static struct pbus_schema *schema;

/* The schema, made here: p000..p255, bytes of 1 KiB, and d0000..d1023,
 * doubles. */
static int make_schema(void)
{
	size_t size = 64 + (NPARAMS + NDOUBLES) * 40, n;
	char *text = malloc(size), err[256];
	int r;

	n = (size_t)snprintf(text, size, "pbus-schema 1\ninterface com.example.stress.Bias 1.0\n");
	for (unsigned i = 0; i < NPARAMS; i++)
		n += (size_t)snprintf(text + n, size - n, "param p%03u bytes size=%d class=live\n", i,
				      VALUE_BYTES);
	for (unsigned i = 0; i < NDOUBLES; i++)
		n += (size_t)snprintf(text + n, size - n, "param d%04u double class=live\n", i);
	r = pbus_schema_parse(text, n, "stress-bias", err, sizeof(err), &schema);
	if (r < 0) {
		pbus_check_begin("bias-threads");
		CHECK_FAIL("schema: %s", err);
		pbus_check_end();
	}
	free(text);
	return r;
}

static struct pbus_table *new_instance(void)
{
	struct pbus_table *owner = NULL;
	int r = pbus_instance_create(instance, schema, NULL, &owner);

	if (r == 0)
		r = pbus_instance_publish(owner);
	if (r < 0) {
		CHECK_FAIL("instance: %s", pbus_strerror(r));
		if (owner)
			pbus_instance_remove(owner);
		return NULL;
	}
	return owner;
}

static void fill(uint64_t *words, unsigned writer, uint64_t counter)
{
	for (unsigned j = 0; j < VALUE_WORDS; j++)
		words[j] = (uint64_t)writer << 48 | counter;
}

/* A value is whole if every word is the same; a fresh parameter's zeroes
 * with status invalid are whole too. Returns an error text or NULL. */
static const char *check_value(const uint64_t *words, const struct pbus_sample *s)
{
	if (s->status == PBUS_STATUS_INVALID && s->seq == 0)
		return NULL;
	if (s->length != VALUE_BYTES)
		return "wrong length";
	for (unsigned j = 1; j < VALUE_WORDS; j++)
		if (words[j] != words[0])
			return "torn value";
	return NULL;
}

/* --- bias-threads ----------------------------------------------------------- */

struct round_state {
	uint32_t round;              /* bumped by thread A to start a round */
	uint32_t acked;              /* the last round thread B finished */
	uint32_t stop;
	const struct pbus_param *param;
	struct pbus_table *table;
	int64_t end_ns;
};

struct writer_stats {
	uint64_t writes_in_round, writes, bad;
	/* For a failure's message: this round's writes through a prepared
	 * batch (A) and the version of the first write (B; 1: it wrote first). */
	uint64_t batch_writes_in_round, first_seq;
	char first_error[200];
};

static void note_error(struct writer_stats *w, const char *fmt, unsigned long long a,
		       unsigned long long b)
{
	if (w->bad++ == 0)
		snprintf(w->first_error, sizeof(w->first_error), fmt, a, b);
}

/* Write @p flat out until @end_ns; check that our versions only grow. */
static void write_until(struct pbus_table *t, const struct pbus_param *p, int64_t end_ns,
			unsigned id, struct writer_stats *st)
{
	uint64_t last = 0, counter = 0;
	struct pbus_batch_field field = {p, 0};
	struct pbus_batch *batch = NULL;
	int r = id == 1 ? pbus_batch_new(t, &field, 1, &batch) : 0;

	if (r < 0)
		note_error(st, "pbus_batch_new: %lld %llu", (unsigned long long)r, 0);
	st->writes_in_round = st->batch_writes_in_round = st->first_seq = 0;
	do {
		double d = (double)(id << 24 | (++counter & 0xFFFFFF));
		struct pbus_write wr = {.index = p->index_, .value = &d, .length = 8};
		int rc;

		/* A, the owner, through the typed setter's and the batch's
		 * fast path; B through the general path, which reports the
		 * version it wrote. */
		if (id == 1) {
			bool batched = !(counter % 2) && batch;

			rc = batched ? pbus_batch_write(batch, &d, NULL, 0) : pbus_param_set_double(p, d);
			st->batch_writes_in_round += batched && rc >= 0;
			wr.seq = last + 1;
		} else {
			rc = pbus_table_write_many(t, &wr, 1);
		}
		if (rc < 0) {
			note_error(st, "write failed: %lld %llu", (unsigned long long)rc, 0);
			continue;
		}
		if (st->first_seq == 0)
			st->first_seq = wr.seq;
		if (wr.seq <= last)
			note_error(st, "own version went from %llu to %llu", last, wr.seq);
		last = wr.seq;
		st->writes_in_round++;
		st->writes++;
	} while (stress_now_ns() < end_ns);
	pbus_batch_free(batch);
}

struct thread_b {
	struct round_state *rs;
	struct writer_stats st;
	uint64_t seed;
};

static void *thread_b_main(void *arg)
{
	struct thread_b *b = arg;
	struct stress_rng rng;
	uint32_t seen = 0;

	stress_rng_seed(&rng, b->seed);
	for (;;) {
		uint32_t r;

		while ((r = __atomic_load_n(&b->rs->round, __ATOMIC_ACQUIRE)) == seen &&
		       !__atomic_load_n(&b->rs->stop, __ATOMIC_ACQUIRE))
			;
		if (r == seen)
			return NULL;
		seen = r;
		/* Start a little after A, so that A owns the bias and B revokes
		 * it while A writes on. */
		for (uint64_t spin = stress_rng_range(&rng, 0, 2000); spin; spin--)
			__asm__ __volatile__("" ::: "memory");
		write_until(b->rs->table, b->rs->param, b->rs->end_ns, 2, &b->st);
		__atomic_store_n(&b->rs->acked, r, __ATOMIC_RELEASE);
	}
}

static void test_bias_threads(const struct stress_options *o)
{
	struct round_state rs = {0};
	struct thread_b b = {.rs = &rs, .seed = o->seed};
	struct writer_stats a = {0};
	pthread_t thread;
	struct pbus_table *owner = NULL, *t = NULL;
	int64_t stop_at = stress_now_ns() + (int64_t)(o->seconds * 1e9);
	unsigned rounds = 0, both = 0, instances = 0;

	pbus_check_begin("bias-threads");
	pthread_create(&thread, NULL, thread_b_main, &b);
	while (!pbus_check_case_failed() && (rounds == 0 || stress_now_ns() < stop_at)) {
		const struct pbus_param *p;
		unsigned k = rounds % NDOUBLES;
		uint64_t revocations;
		uint32_t r;

		if (k == 0) {
			if (t)
				pbus_table_close(t);
			if (owner)
				pbus_instance_remove(owner);
			t = NULL;
			owner = new_instance();
			if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &t) < 0) {
				CHECK_FAIL("cannot open the instance");
				break;
			}
			instances++;
		}
		pbus_table_param(t, NPARAMS + k, &p);
		rs.param = p;
		rs.table = t;
		rs.end_ns = stress_now_ns() + ROUND_NS;
		revocations = __atomic_load_n(&t->header->revocations, __ATOMIC_ACQUIRE);
		r = __atomic_add_fetch(&rs.round, 1, __ATOMIC_ACQ_REL);
		write_until(t, p, rs.end_ns, 1, &a);
		while (__atomic_load_n(&rs.acked, __ATOMIC_ACQUIRE) != r)
			sched_yield();
		if (pbus_param_seq(p) != a.writes_in_round + b.st.writes_in_round)
			CHECK_FAIL("round %u: final version %" PRIu64 ", but %" PRIu64
				    " writes completed (an update was lost; A %" PRIu64 " writes, %" PRIu64
				    " of them batched, B %" PRIu64 " from version %" PRIu64 ", %" PRIu64
				    " revocations)",
				    rounds, pbus_param_seq(p), a.writes_in_round + b.st.writes_in_round,
				    a.writes_in_round, a.batch_writes_in_round, b.st.writes_in_round,
				    b.st.first_seq, t->header->revocations - revocations);
		if (*pbus_param_lock(p) != PBUS_LOCK_SHARED)
			CHECK_FAIL("round %u: both threads wrote, but the lock word is 0x%" PRIx64,
				    rounds, *pbus_param_lock(p));
		both++;
		rounds++;
	}
	__atomic_store_n(&rs.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	if (a.bad)
		CHECK_FAIL("writer A: %" PRIu64 " errors, first: %s", a.bad, a.first_error);
	if (b.st.bad)
		CHECK_FAIL("writer B: %" PRIu64 " errors, first: %s", b.st.bad, b.st.first_error);
	stress_note("bias-threads: %u rounds on %u instances, each a bias revoked while its owner "
		    "wrote on; %" PRIu64 " writes",
		    rounds, instances, a.writes + b.st.writes);
	(void)both;
	pbus_table_close(t);
	if (owner)
		pbus_instance_remove(owner);
	pbus_check_end();
}

/* --- bias-crash ------------------------------------------------------------- */

struct crash_shared {
	uint32_t victim_writes;      /* completed writes of the current victim */
	uint32_t stop;
	uint32_t reader_ready;
	uint64_t reads, bad;
	char first_error[200];
};

static struct crash_shared *cs;
static unsigned victim_param;

static int victim_main(void *arg)
{
	struct pbus_table *t = NULL;
	const struct pbus_param *p;
	uint64_t words[VALUE_WORDS];

	(void)arg;
	if (pbus_table_open(instance, PBUS_OPEN_WRITE, &t) < 0 || pbus_table_param(t, victim_param, &p) < 0)
		return 1;
	for (uint64_t c = 1;; c++) {
		fill(words, 3, c);
		if (pbus_param_set_bytes(p, words, VALUE_BYTES) < 0)
			return 2;
		stress_add_wake(&cs->victim_writes, 1);
	}
}

static int reader_main(void *arg)
{
	struct pbus_table *t = NULL;
	uint64_t words[VALUE_WORDS], last[NPARAMS] = {0};

	(void)arg;
	if (pbus_table_open(instance, PBUS_OPEN_READ, &t) < 0)
		return 1;
	stress_add_wake(&cs->reader_ready, 1);
	while (!__atomic_load_n(&cs->stop, __ATOMIC_ACQUIRE)) {
		for (unsigned i = 0; i < NPARAMS; i++) {
			const struct pbus_param *p;
			struct pbus_sample s;
			const char *e;

			pbus_table_param(t, i, &p);
			if (pbus_param_read(p, words, sizeof(words), &s) < 0)
				continue;
			e = check_value(words, &s);
			if ((e || s.seq < last[i]) && cs->bad++ == 0)
				snprintf(cs->first_error, sizeof(cs->first_error),
					 "p%03u: %s (word 0 0x%" PRIx64 ", version %" PRIu64 " after %" PRIu64 ")",
					 i, e ? e : "version went back", words[0], s.seq, last[i]);
			last[i] = s.seq;
			cs->reads++;
		}
	}
	return 0;
}

static void test_bias_crash(const struct stress_options *o)
{
	struct pbus_table *owner, *t = NULL;
	struct stress_rng rng;
	unsigned rounds = stress_scaled(o, 200, 100), mid_write = 0, done = 0;
	int64_t slowest = 0;
	pid_t reader;
	int status;

	pbus_check_begin("bias-crash");
	stress_rng_seed(&rng, o->seed);
	cs = stress_shared_alloc(sizeof(*cs));
	/* One instance, one fresh parameter per round. */
	if (rounds > NPARAMS)
		rounds = NPARAMS;
	owner = new_instance();
	if (!owner || pbus_table_open(instance, PBUS_OPEN_WRITE, &t) < 0) {
		CHECK_FAIL("cannot open the instance");
		pbus_check_end();
		return;
	}
	reader = stress_fork(reader_main, NULL);
	if (stress_wait_at_least(&cs->reader_ready, 1, 10 * STRESS_NS_PER_S) < 0)
		CHECK_FAIL("the reader did not start");
	/* A kill lands mid-write a few times in a hundred: go on (one fresh
	 * parameter per round) until one has, so that the case is tested. */
	for (unsigned round = 0; (round < rounds || (mid_write == 0 && round < NPARAMS)) &&
				 !pbus_check_case_failed();
	     round++) {
		const struct pbus_param *p;
		uint64_t words[VALUE_WORDS], lock, writing;
		struct pbus_sample s;
		int64_t t0;
		pid_t v;
		int r;

		victim_param = round;
		pbus_table_param(t, round, &p);
		__atomic_store_n(&cs->victim_writes, 0, __ATOMIC_RELEASE);
		v = stress_fork(victim_main, NULL);
		if (stress_wait_at_least(&cs->victim_writes, 1, 10 * STRESS_NS_PER_S) < 0) {
			CHECK_FAIL("round %u: the victim made no write in 10 s", round);
			stress_kill_wait(v);
			break;
		}
		stress_sleep_ns((int64_t)stress_rng_range(&rng, 0, 500) * 1000);
		kill(v, SIGKILL);
		if (stress_wait_pid(v, 10, &status) < 0 || !WIFSIGNALED(status)) {
			CHECK_FAIL("round %u: the victim ended with %s", round, stress_status_text(status));
			break;
		}
		lock = __atomic_load_n(pbus_param_lock(p), __ATOMIC_ACQUIRE);
		writing = __atomic_load_n(&t->aux[round].writing, __ATOMIC_ACQUIRE);
		if ((lock & PBUS_LOCK_STATE_MASK) != PBUS_LOCK_BIASED || pbus_token_tid(lock) != (uint32_t)v)
			CHECK_FAIL("round %u: the victim did not hold the bias (lock word 0x%" PRIx64 ")",
				    round, lock);
		mid_write += writing != 0 && pbus_token_tid(writing) == (uint32_t)v;
		/* Revoke the dead owner's bias with a write of our own. */
		fill(words, 4, round);
		t0 = stress_now_ns();
		r = pbus_param_set_bytes(p, words, VALUE_BYTES);
		if (stress_now_ns() - t0 > slowest)
			slowest = stress_now_ns() - t0;
		if (r < 0 || stress_now_ns() - t0 > STRESS_NS_PER_S)
			CHECK_FAIL("round %u: the write after the kill: %s in %.1f ms", round,
				    pbus_strerror(r), (double)(stress_now_ns() - t0) / 1e6);
		memset(words, 0, sizeof(words));
		if (pbus_param_read(p, words, sizeof(words), &s) < 0 || words[0] != ((uint64_t)4 << 48 | round) ||
		    check_value(words, &s))
			CHECK_FAIL("round %u: our write does not read back", round);
		lock = __atomic_load_n(pbus_param_lock(p), __ATOMIC_ACQUIRE);
		if (lock != (PBUS_LOCK_BIASED | pbus_thread_token()))
			CHECK_FAIL("round %u: the dead owner's bias did not pass to us (lock word 0x%" PRIx64
				    ")", round, lock);
		done++;
	}
	__atomic_store_n(&cs->stop, 1, __ATOMIC_RELEASE);
	if (stress_wait_pid(reader, 30, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		CHECK_FAIL("the reader: %s", stress_status_text(status));
	if (cs->bad)
		CHECK_FAIL("the reader: %" PRIu64 " errors, first: %s", cs->bad, cs->first_error);
	if (done >= rounds && mid_write == 0)
		CHECK_FAIL("none of %u kills hit the owner in the middle of a write", done);
	stress_note("bias-crash: %u owners killed, %u of them in the middle of a biased write; slowest "
		    "revocation of a dead owner %.2f ms; %" PRIu64 " reads",
		    done, mid_write, (double)slowest / 1e6, cs->reads);
	pbus_table_close(t);
	pbus_instance_remove(owner);
	pbus_check_end();
}

int main(int argc, char **argv)
{
	struct stress_options o;

	stress_init("stress-bias", argc, argv, 2.0, 120.0, &o);
	snprintf(instance, sizeof(instance), "stress-bias-%d", (int)getpid());
	stress_track_instance(instance);
	if (make_schema() == 0) {
		test_bias_threads(&o);
		test_bias_crash(&o);
	}
	pbus_schema_free(schema);
	return stress_exit();
}
