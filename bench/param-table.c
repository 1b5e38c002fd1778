/* SPDX-License-Identifier: MIT */
/*
 * param-table.c: benchmark scenario 1, the parameter table
 * (../shared/BENCHMARKS.md, docs/benchmarks.md). One source, built once per
 * synchronisation variant with -DPT_VARIANT=PT_<VARIANT>:
 *
 *   none            no synchronisation: the floor
 *   mutex-table     one PTHREAD_PROCESS_SHARED mutex for the whole table
 *   mutex-param     one such mutex per parameter
 *   rwlock-table    one PTHREAD_PROCESS_SHARED rwlock (glibc's default,
 *                   reader-preferring) for the whole table
 *   rwlock-param    one such rwlock per parameter
 *   seqlock-table   the classic seqlock: one sequence for the table, writers
 *                   serialised by one mutex
 *   seqlock-param   the same per parameter (sequence and writer mutex)
 *   seqlock-param-cas the leanest classic: per parameter one sequence word
 *                   that a writer claims itself with one compare-and-swap
 *                   from an even value to the next odd one (no mutex; it
 *                   spins, with a pause, while another writer holds it),
 *                   then writes and stores the next even value with release;
 *                   readers retry on odd or changed, as for seqlock-param
 *   parambus        the real library: an instance published by pbusd, opened
 *                   by name, parameters resolved once and held by value as
 *                   the generated bindings hold them, read with the inline
 *                   pbus_param_get_double(); a Randomizer writes each pass's
 *                   doubles with a prepared batch, each value on its own
 *                   (pbus_batch_write_each(): each parameter claimed and
 *                   published on its own, as the lock variants write, one
 *                   clock reading per pass), the record with pbus_param_set()
 *   parambus-setter the same, but a Randomizer writes each double with its
 *                   own pbus_param_set_double() call
 *   parambus-atomic the same, but a Randomizer writes each pass as one
 *                   all-or-nothing batch (pbus_batch_write(): every
 *                   parameter claimed before the first is written)
 *
 * The table: 200 doubles p000..p199 and a 64-byte record. The lock-based
 * variants lay it out as the study did: a segment made with shm_open + mmap
 * holding an array of { value, lock } slots, naturally packed (no padding to
 * cache lines), the record after them (seqlock-param-cas: { value, sequence }
 * slots of 16 bytes).
 *
 * Commands:
 *   param-table-V info                      JSON: variant, compiler, sizes, features
 *   param-table-V create NAME               make and initialise /NAME (lock variants)
 *   param-table-V destroy NAME              shm_unlink /NAME
 *   param-table-V run --role displayer|randomizer --n N --id K --target NAME
 *                     --start-ns T --windows W [--hz H] [--record 0|1]
 *                     [--progress FILE] --out FILE
 *   param-table-V hold --target NAME        (lock variants) claim p000 as a
 *                     writer does (the lock, the table's lock, or the sequence
 *                     made odd; the floor has nothing to claim), print "held",
 *                     then raise(SIGSTOP): the runner SIGKILLs it there, a
 *                     writer dead mid-write
 *   param-table-V hammer --target NAME [--id K]
 *                     print "ready", then write p000 flat out with the
 *                     variant's own write call (parambus: a one-field
 *                     prepared batch, parambus-setter: the typed setter,
 *                     parambus-atomic: an all-or-nothing batch) until killed
 *                     (or 60 s): the runner SIGKILLs it at random instants
 *                     until one kill lands while it holds p000's claim,
 *                     since the public API has no way to stop a writer
 *                     inside its write
 *   param-table-V probe --target NAME --pid PID
 *                     JSON: the claim state of p000 (parambus: its lock word
 *                     and its aux record's writing token, read from the
 *                     segment as docs/segment-format.md §2 lays it out:
 *                     whether PID holds it; seqlocks: the sequence is odd;
 *                     mutexes and rwlocks: a try-lock fails with EBUSY)
 *
 * A run sleeps until CLOCK_MONOTONIC T, then works for W windows of 100 ms
 * (a POSIX timer whose signal counts the windows), and writes its figures to
 * FILE as one JSON object. With --progress, the timer's signal handler also
 * appends "WINDOW OPS ITERATIONS" (cumulative) to that file at every window's
 * end, so that a process that hangs in a lock still tells how far it got.
 *
 * One iteration of a Displayer reads p000..p(N-1) in turn (N = 200 unless
 * --n says otherwise), then the record: N + 1 operations. One iteration of
 * Randomizer N writes its N parameters (p000..p(N-1)), then the record:
 * N + 1 operations. With --record 0 neither touches the record (N
 * operations: the hot-parameter run's Displayer and Randomizer of p000
 * alone). With --hz the process runs one iteration per 1/H s and sleeps in
 * between.
 *
 * Self-checking values: iteration k of writer K (K = 1, 2) writes the 30-bit
 * counter c = (4k + K) mod 2^30 into every value of that iteration: a double
 * whose bit pattern is c in both 32-bit halves (bits 62 and 63 are zero, so
 * it is finite and positive), and a record whose eight 8-byte words each
 * hold c as 8 ASCII hex digits (valid UTF-8, as parambus's string type
 * needs). A reader counts a double whose halves differ, or a record whose
 * words differ (or whose length is not 64), as a torn read. Every variant
 * performs exactly the same loads and checks; the check also keeps the
 * compiler from dropping the unsynchronised loads, which are relaxed atomic
 * loads (plain moves on x86-64 and arm64).
 *
 * Windows: the op counter is advanced once per iteration, so the ops of an
 * iteration count in the window in which it ended. A process that makes no
 * whole iteration in a window records 0 for it.
 *
 * The locks are taken with the plain pthread_mutex_lock(),
 * pthread_rwlock_rdlock() and pthread_rwlock_wrlock(), as in the study. A
 * process blocked (a writer starved by the reader-preferring rwlock) gets its
 * lock when the others stop at the end; an iteration that ends after the end
 * of the run is not counted, and a seqlock reader (and a seqlock-param-cas
 * writer) stops retrying when the run ends. parambus gets no escape: if its
 * reader could be starved the process would hang and the runner would report
 * it. A lock held by a writer that died is another matter: a plain
 * PTHREAD_PROCESS_SHARED mutex or rwlock is never given back, and whoever
 * waits for it waits for ever (the runner kills such processes and reports
 * them as hung).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PT_NONE 0
#define PT_MUTEX_TABLE 1
#define PT_MUTEX_PARAM 2
#define PT_RWLOCK_TABLE 3
#define PT_RWLOCK_PARAM 4
#define PT_SEQLOCK_TABLE 5
#define PT_SEQLOCK_PARAM 6
#define PT_PARAMBUS 7        /* parambus: each Randomizer pass as a prepared batch, each value on its own */
#define PT_PARAMBUS_SETTER 8 /* parambus: one typed setter call per value */
#define PT_PARAMBUS_ATOMIC 9 /* parambus: each Randomizer pass as an all-or-nothing batch */
#define PT_SEQLOCK_PARAM_CAS 10 /* seqlock per parameter, claimed by a CAS to odd */
#define PT_IS_PARAMBUS \
	(PT_VARIANT == PT_PARAMBUS || PT_VARIANT == PT_PARAMBUS_SETTER || PT_VARIANT == PT_PARAMBUS_ATOMIC)

#ifndef PT_VARIANT
#error "build with -DPT_VARIANT=PT_<VARIANT> and -DPT_VARIANT_NAME=\"...\""
#endif

#define NPARAMS 200u
#define REC_WORDS 8u
#define REC_BYTES (REC_WORDS * 8u)
#define WINDOW_NS 100000000LL
#define MAX_WINDOWS 100000u

#if PT_IS_PARAMBUS
#include <parambus/table.h>
#endif

#if PT_VARIANT == PT_MUTEX_TABLE || PT_VARIANT == PT_MUTEX_PARAM
#define SYNC_MUTEX 1
#elif PT_VARIANT == PT_RWLOCK_TABLE || PT_VARIANT == PT_RWLOCK_PARAM
#define SYNC_RWLOCK 1
#elif PT_VARIANT == PT_SEQLOCK_TABLE || PT_VARIANT == PT_SEQLOCK_PARAM
#define SYNC_SEQLOCK 1
#elif PT_VARIANT == PT_SEQLOCK_PARAM_CAS
#define SYNC_SEQLOCK 1 /* the same reader */
#define SYNC_SEQLOCK_CAS 1 /* a writer claims the sequence itself */
#endif
#if PT_VARIANT == PT_MUTEX_TABLE || PT_VARIANT == PT_RWLOCK_TABLE || \
	PT_VARIANT == PT_SEQLOCK_TABLE
#define SYNC_TABLE 1
#elif PT_VARIANT == PT_MUTEX_PARAM || PT_VARIANT == PT_RWLOCK_PARAM || \
	PT_VARIANT == PT_SEQLOCK_PARAM || PT_VARIANT == PT_SEQLOCK_PARAM_CAS
#define SYNC_PARAM 1
#endif

#ifdef SYNC_SEQLOCK_CAS
/* What a spinning writer does between two looks at a held word. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}
#endif

/* --- The run's clock and windows ------------------------------------------ */

static volatile sig_atomic_t stop_flag;
static uint32_t ticks; /* windows ended, written by the signal handler */
static uint32_t nwindows;
static timer_t window_timer;
/* --progress: the handler appends the counts below at every window's end. */
static int progress_fd = -1;
static uint64_t progress_ops, progress_iterations; /* cumulative, relaxed */

/* Append @v in decimal and @end to @p; async-signal-safe (no stdio). */
static char *put_u64(char *p, uint64_t v, char end)
{
	char tmp[24];
	unsigned n = 0;

	do
		tmp[n++] = (char)('0' + v % 10u);
	while ((v /= 10u) != 0);
	while (n)
		*p++ = tmp[--n];
	*p++ = end;
	return p;
}

static void on_tick(int sig)
{
	int saved_errno = errno;
	int overrun = timer_getoverrun(window_timer);
	uint32_t t = __atomic_load_n(&ticks, __ATOMIC_RELAXED) + 1u +
		     (overrun > 0 ? (uint32_t)overrun : 0u);

	(void)sig;
	__atomic_store_n(&ticks, t, __ATOMIC_RELAXED);
	if (t >= nwindows)
		stop_flag = 1;
	if (progress_fd >= 0) {
		char line[80], *p = line;

		p = put_u64(p, t, ' ');
		p = put_u64(p, __atomic_load_n(&progress_ops, __ATOMIC_RELAXED), ' ');
		p = put_u64(p, __atomic_load_n(&progress_iterations, __ATOMIC_RELAXED), '\n');
		if (write(progress_fd, line, (size_t)(p - line)) < 0) {
			/* nothing to do: the figures are informative */
		}
	}
	errno = saved_errno;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000LL),
			      .tv_nsec = (long)(ns % 1000000000LL)};
	return ts;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "param-table-%s: %s: %s\n", PT_VARIANT_NAME, what, strerror(err));
	exit(2);
}

/* utime + stime of this process in clock ticks, from /proc/self/stat. */
static long long proc_cpu_ticks(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	const char *p;
	unsigned long long ut = 0, st = 0;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after ") ": state(3) ... utime(14) stime(15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

static int64_t proc_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* --- Self-checking values ------------------------------------------------- */

static inline uint32_t counter_of(uint64_t k, unsigned id)
{
	return (uint32_t)((k * 4u + id) & 0x3fffffffu);
}

static inline uint64_t double_bits_of(uint32_t c)
{
	return (uint64_t)c << 32 | c;
}

static inline bool double_bits_ok(uint64_t v)
{
	return (uint32_t)(v >> 32) == (uint32_t)v;
}

static uint64_t record_word_of(uint32_t c)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[8];
	uint64_t w;

	for (unsigned i = 0; i < 8; i++)
		b[i] = (unsigned char)hex[(c >> (28 - 4 * i)) & 15u];
	memcpy(&w, b, 8);
	return w;
}

static inline bool record_ok(const uint64_t *w)
{
	uint64_t diff = 0;

	for (unsigned i = 1; i < REC_WORDS; i++)
		diff |= w[i] ^ w[0];
	return diff == 0;
}

/* --- The lock-based (and unsynchronised) table ---------------------------- */

#if !PT_IS_PARAMBUS

struct sync {
#if defined(SYNC_MUTEX)
	pthread_mutex_t lock;
#elif defined(SYNC_RWLOCK)
	pthread_rwlock_t lock;
#elif defined(SYNC_SEQLOCK_CAS)
	uint32_t seq; /* odd while a writer, which made it odd, writes */
#elif defined(SYNC_SEQLOCK)
	uint32_t seq;
	pthread_mutex_t wlock; /* serialises writers */
#else
	char none; /* C has no empty structs; unused */
#endif
};

struct slot {
	uint64_t val; /* the double's bits */
#ifdef SYNC_PARAM
	struct sync sync;
#endif
};

struct rec_slot {
	uint64_t w[REC_WORDS];
#ifdef SYNC_PARAM
	struct sync sync;
#endif
};

struct shared {
	uint64_t magic;
#ifdef SYNC_TABLE
	struct sync sync;
#endif
	struct slot slots[NPARAMS];
	struct rec_slot rec;
};

#define SHARED_MAGIC (0x5054424e43480000ull | ((uint64_t)PT_VARIANT << 8) | 1u)

#ifdef SYNC_TABLE
#define SYNC_OF(s, slotp) (&(s)->sync)
#elif defined(SYNC_PARAM)
#define SYNC_OF(s, slotp) (&(slotp)->sync)
#else
#define SYNC_OF(s, slotp) ((struct sync *)NULL)
#endif

static struct shared *shm;
static uint64_t lock_errors; /* lock calls that failed */

#if defined(SYNC_MUTEX) || defined(SYNC_RWLOCK) || \
	(defined(SYNC_SEQLOCK) && !defined(SYNC_SEQLOCK_CAS))
static inline int lock_result(int r)
{
	if (r != 0)
		lock_errors++;
	return r;
}
#endif

/* Begin a read; *tok is the sequence seen (seqlock). Non-zero: give up. */
static inline int read_begin(struct sync *y, uint32_t *tok)
{
#if defined(SYNC_MUTEX)
	(void)tok;
	return lock_result(pthread_mutex_lock(&y->lock));
#elif defined(SYNC_RWLOCK)
	(void)tok;
	return lock_result(pthread_rwlock_rdlock(&y->lock));
#elif defined(SYNC_SEQLOCK)
	uint32_t s;

	while ((s = __atomic_load_n(&y->seq, __ATOMIC_ACQUIRE)) & 1u) {
		if (stop_flag)
			return 1;
	}
	*tok = s;
	return 0;
#else
	(void)y;
	(void)tok;
	return 0;
#endif
}

/* End a read: 0 if what was read is good, non-zero to retry. */
static inline int read_end(struct sync *y, uint32_t tok)
{
#if defined(SYNC_MUTEX)
	(void)tok;
	pthread_mutex_unlock(&y->lock);
	return 0;
#elif defined(SYNC_RWLOCK)
	(void)tok;
	pthread_rwlock_unlock(&y->lock);
	return 0;
#elif defined(SYNC_SEQLOCK)
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&y->seq, __ATOMIC_RELAXED) != tok;
#else
	(void)y;
	(void)tok;
	return 0;
#endif
}

static inline int write_begin(struct sync *y)
{
#if defined(SYNC_MUTEX)
	return lock_result(pthread_mutex_lock(&y->lock));
#elif defined(SYNC_RWLOCK)
	return lock_result(pthread_rwlock_wrlock(&y->lock));
#elif defined(SYNC_SEQLOCK_CAS)
	/* One compare-and-swap from even to odd claims the parameter (acquire:
	 * the last writer's stores are ours to overwrite); while another writer
	 * holds it (odd), spin. The release fence orders the odd value before
	 * the data stores, as seqlock-param's increment is ordered: a reader
	 * that sees any of them sees the sequence changed. Non-zero: the run
	 * ended while the word was held (by a writer that may be dead). */
	uint32_t s = __atomic_load_n(&y->seq, __ATOMIC_RELAXED);

	for (;;) {
		if (!(s & 1u) && __atomic_compare_exchange_n(&y->seq, &s, s + 1u, false,
							     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		if (s & 1u) {
			if (stop_flag)
				return 1;
			cpu_relax();
			s = __atomic_load_n(&y->seq, __ATOMIC_RELAXED);
		}
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 0;
#elif defined(SYNC_SEQLOCK)
	int r = lock_result(pthread_mutex_lock(&y->wlock));

	if (r)
		return r;
	__atomic_store_n(&y->seq, __atomic_load_n(&y->seq, __ATOMIC_RELAXED) + 1u,
			 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 0;
#else
	(void)y;
	return 0;
#endif
}

static inline void write_end(struct sync *y)
{
#if defined(SYNC_MUTEX)
	pthread_mutex_unlock(&y->lock);
#elif defined(SYNC_RWLOCK)
	pthread_rwlock_unlock(&y->lock);
#elif defined(SYNC_SEQLOCK_CAS)
	__atomic_store_n(&y->seq, __atomic_load_n(&y->seq, __ATOMIC_RELAXED) + 1u,
			 __ATOMIC_RELEASE);
#elif defined(SYNC_SEQLOCK)
	__atomic_store_n(&y->seq, __atomic_load_n(&y->seq, __ATOMIC_RELAXED) + 1u,
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&y->wlock);
#else
	(void)y;
#endif
}

static inline int read_param(unsigned i, uint64_t *ret)
{
	struct slot *sl = &shm->slots[i];
	struct sync *y = SYNC_OF(shm, sl);
	uint32_t tok = 0;

	for (;;) {
		uint64_t v;

		if (read_begin(y, &tok))
			return -1;
		v = __atomic_load_n(&sl->val, __ATOMIC_RELAXED);
		if (read_end(y, tok) == 0) {
			*ret = v;
			return 0;
		}
		if (stop_flag)
			return -1;
	}
}

static inline int read_record(uint64_t *ret)
{
	struct rec_slot *sl = &shm->rec;
	struct sync *y = SYNC_OF(shm, sl);
	uint32_t tok = 0;

	for (;;) {
		uint64_t w[REC_WORDS];

		if (read_begin(y, &tok))
			return -1;
		for (unsigned j = 0; j < REC_WORDS; j++)
			w[j] = __atomic_load_n(&sl->w[j], __ATOMIC_RELAXED);
		if (read_end(y, tok) == 0) {
			memcpy(ret, w, sizeof(w));
			return 0;
		}
		if (stop_flag)
			return -1;
	}
}

static inline int write_param(unsigned i, uint64_t v)
{
	struct slot *sl = &shm->slots[i];
	struct sync *y = SYNC_OF(shm, sl);

	if (write_begin(y))
		return -1;
	__atomic_store_n(&sl->val, v, __ATOMIC_RELAXED);
	write_end(y);
	return 0;
}

static inline int write_record(uint64_t word)
{
	struct rec_slot *sl = &shm->rec;
	struct sync *y = SYNC_OF(shm, sl);

	if (write_begin(y))
		return -1;
	for (unsigned j = 0; j < REC_WORDS; j++)
		__atomic_store_n(&sl->w[j], word, __ATOMIC_RELAXED);
	write_end(y);
	return 0;
}

static inline void sync_init(struct sync *y)
{
#if defined(SYNC_SEQLOCK_CAS)
	y->seq = 0;
#elif defined(SYNC_MUTEX) || defined(SYNC_SEQLOCK)
	pthread_mutexattr_t a;
	int r;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
#if defined(SYNC_MUTEX)
	r = pthread_mutex_init(&y->lock, &a);
#else
	y->seq = 0;
	r = pthread_mutex_init(&y->wlock, &a);
#endif
	pthread_mutexattr_destroy(&a);
	if (r)
		die("pthread_mutex_init", r);
#elif defined(SYNC_RWLOCK)
	pthread_rwlockattr_t a;
	int r;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	r = pthread_rwlock_init(&y->lock, &a);
	pthread_rwlockattr_destroy(&a);
	if (r)
		die("pthread_rwlock_init", r);
#else
	(void)y;
#endif
}

static char *shm_path(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "/%s", name);
	return path;
}

static int cmd_create(const char *name)
{
	int fd = shm_open(shm_path(name), O_CREAT | O_EXCL | O_RDWR, 0600);
	struct shared *s;
	uint64_t w0 = record_word_of(0);

	if (fd < 0)
		die("shm_open", errno);
	if (ftruncate(fd, (off_t)sizeof(struct shared)) < 0)
		die("ftruncate", errno);
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		die("mmap", errno);
	close(fd);
#ifdef SYNC_TABLE
	sync_init(&s->sync);
#endif
	for (unsigned i = 0; i < NPARAMS; i++) {
		s->slots[i].val = double_bits_of(0);
#ifdef SYNC_PARAM
		sync_init(&s->slots[i].sync);
#endif
	}
	for (unsigned j = 0; j < REC_WORDS; j++)
		s->rec.w[j] = w0;
#ifdef SYNC_PARAM
	sync_init(&s->rec.sync);
#endif
	__atomic_store_n(&s->magic, SHARED_MAGIC, __ATOMIC_RELEASE);
	munmap(s, sizeof(*s));
	return 0;
}

static int cmd_destroy(const char *name)
{
	if (shm_unlink(shm_path(name)) < 0)
		die("shm_unlink", errno);
	return 0;
}

static void target_open(const char *name, bool writer)
{
	int fd = shm_open(shm_path(name), O_RDWR, 0);
	struct stat st;

	(void)writer; /* locks need write access for readers too */
	if (fd < 0)
		die("shm_open", errno);
	if (fstat(fd, &st) < 0)
		die("fstat", errno);
	if ((size_t)st.st_size != sizeof(struct shared))
		die("segment size (made by another variant?)", EPROTO);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shm == MAP_FAILED)
		die("mmap", errno);
	close(fd);
	if (__atomic_load_n(&shm->magic, __ATOMIC_ACQUIRE) != SHARED_MAGIC)
		die("segment magic (made by another variant?)", EPROTO);
}

static uint64_t target_errors(void)
{
	return lock_errors;
}

static size_t slot_bytes(void)
{
	return sizeof(struct slot);
}

/* hold: claim p000 exactly as write_param() does (its lock, the table's
 * lock, or its sequence made odd), then stop; the runner SIGKILLs the
 * process there: a writer that died in the middle of a write. */
static int cmd_hold(const char *name)
{
	struct sync *y;

	target_open(name, true);
	y = SYNC_OF(shm, &shm->slots[0]);
	if (write_begin(y))
		die("claiming p000", EAGAIN);
	printf("held\n");
	fflush(stdout);
	raise(SIGSTOP);
	write_end(y); /* continued rather than killed: let go */
	return 0;
}

/* probe: is p000 claimed now? Seqlocks: the sequence is odd; mutexes and
 * rwlocks: a try-lock (for reading, where readers lock) fails with EBUSY.
 * These locks do not say by whom, so @pid is not checked here: the runner
 * knows whom it stopped. */
static int cmd_probe(const char *name, long pid)
{
	struct sync *y;
	const char *how = "no claim (the floor has no lock)";
	int held = 0;

	(void)pid;
	target_open(name, false);
	y = SYNC_OF(shm, &shm->slots[0]);
	(void)y;
#if defined(SYNC_SEQLOCK)
	{
		uint32_t seq = __atomic_load_n(&y->seq, __ATOMIC_ACQUIRE);

		held = seq & 1u;
		how = held ? "sequence odd" : "sequence even";
		printf("{\"param\": \"p000\", \"seq\": %u, \"held\": %s, \"how\": \"%s\"}\n", seq,
		       held ? "true" : "false", how);
		return 0;
	}
#elif defined(SYNC_MUTEX)
	{
		int r = pthread_mutex_trylock(&y->lock);

		if (r == 0)
			pthread_mutex_unlock(&y->lock);
		held = r == EBUSY;
		how = held ? "mutex: trylock EBUSY" : r == 0 ? "mutex free" : strerror(r);
	}
#elif defined(SYNC_RWLOCK)
	{
		int r = pthread_rwlock_tryrdlock(&y->lock);

		if (r == 0)
			pthread_rwlock_unlock(&y->lock);
		held = r == EBUSY;
		how = held ? "rwlock: tryrdlock EBUSY" : r == 0 ? "rwlock free" : strerror(r);
	}
#endif
	printf("{\"param\": \"p000\", \"held\": %s, \"how\": \"%s\"}\n",
	       held ? "true" : "false", how);
	return 0;
}

#else /* PT_IS_PARAMBUS */

static struct pbus_table *table;
/* Copies of the resolved parameters, as the generated bindings hold them
 * (struct pbus_param in include/parambus/table.h). */
static struct pbus_param params[NPARAMS];
static const struct pbus_param *rec;
static uint64_t pbus_errors;
static int first_error;

static void note_error(int r)
{
	if (!first_error)
		first_error = r;
	pbus_errors++;
}

static inline int read_param(unsigned i, uint64_t *ret)
{
	double d;
	int r = pbus_param_get_double(&params[i], &d);

	if (r < 0) {
		note_error(r);
		return -1;
	}
	memcpy(ret, &d, sizeof(d));
	return 0;
}

static inline int read_record(uint64_t *ret)
{
	struct pbus_sample sample;
	int r = pbus_param_read(rec, ret, REC_BYTES, &sample);

	if (r < 0) {
		note_error(r);
		return -1;
	}
	if (sample.length != REC_BYTES)
		ret[1] = ~ret[0]; /* a record that is not 64 bytes is torn */
	return 0;
}

static inline int write_param(unsigned i, uint64_t v)
{
	double d;
	int r;

	memcpy(&d, &v, sizeof(d));
	r = pbus_param_set_double(&params[i], d);
	if (r < 0) {
		note_error(r);
		return -1;
	}
	return 0;
}

static inline int write_record(uint64_t word)
{
	uint64_t w[REC_WORDS];
	int r;

	for (unsigned j = 0; j < REC_WORDS; j++)
		w[j] = word;
	r = pbus_param_set(rec, w, REC_BYTES);
	if (r < 0) {
		note_error(r);
		return -1;
	}
	return 0;
}

static void target_open(const char *name, bool writer)
{
	char pname[8];
	int r = pbus_table_open(name, writer ? PBUS_OPEN_WRITE : PBUS_OPEN_READ, &table);

	if (r < 0)
		die("pbus_table_open", -r);
	for (unsigned i = 0; i < NPARAMS; i++) {
		const struct pbus_param *param;

		snprintf(pname, sizeof(pname), "p%03u", i);
		r = pbus_table_find(table, pname, &param);
		if (r < 0)
			die(pname, -r);
		params[i] = *param;
	}
	r = pbus_table_find(table, "rec", &rec);
	if (r < 0)
		die("rec", -r);
}

static uint64_t target_errors(void)
{
	if (first_error)
		fprintf(stderr, "param-table-parambus: %" PRIu64 " failed calls, first: %s\n",
			pbus_errors, strerror(-first_error));
	return pbus_errors;
}

static size_t slot_bytes(void)
{
	return 0; /* the library's layout: docs/segment-format.md */
}

static int cmd_create(const char *name)
{
	(void)name;
	fprintf(stderr, "param-table-parambus: the instance is created by pbusd\n");
	return 2;
}

static int cmd_destroy(const char *name)
{
	return cmd_create(name);
}

static int cmd_hold(const char *name)
{
	(void)name;
	fprintf(stderr, "param-table-%s: the public API cannot stop a writer inside its "
			"write; use hammer (and SIGKILL) instead\n",
		PT_VARIANT_NAME);
	return 2;
}

static uint64_t load64(const unsigned char *p)
{
	return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* probe: who holds p000 now? Read, as an outside implementation would, from
 * the value segment as docs/segment-format.md lays it out (the library has
 * no call for it, and needs none): §2.1 the header's offsets, §2.2 the
 * descriptor's slot_offset, §2.5 the slot's seq and lock words, §2.7 the aux
 * record's writing token. A token's bits 0-21 are the thread id (§4.3); the
 * runner's writers are single-threaded, so that is @pid. Held: a write
 * under the bias announced by @pid (writing), or the lock word held by @pid
 * (any state but "biased" with @pid's token). Read-only: changes nothing. */
static int cmd_probe(const char *name, long pid)
{
	char path[128];
	struct stat st;
	const unsigned char *seg, *d = NULL;
	uint64_t size, desc, strings, strings_size, aux, slot, seq, lock, writing;
	uint32_t count, i;
	unsigned state;
	const uint64_t tid_mask = (1ull << 22) - 1u, token_mask = (1ull << 52) - 1u;
	bool by_bias, by_lock;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/pbus.%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		die(path, errno);
	if (fstat(fd, &st) < 0)
		die("fstat", errno);
	size = (uint64_t)st.st_size;
	if (size < 256)
		die("segment size", EPROTO);
	seg = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (seg == MAP_FAILED)
		die("mmap", errno);
	close(fd);
	if (memcmp(seg, "PARAMBUS", 8) != 0)
		die("segment magic", EPROTO);
	count = get32(seg + 40);
	desc = get64(seg + 56);
	strings = get64(seg + 80);
	strings_size = get64(seg + 88);
	aux = get64(seg + 112);
	if (desc > size || (uint64_t)count * 128u > size - desc || strings > size ||
	    strings_size > size - strings || aux > size || (uint64_t)count * 16u > size - aux)
		die("segment offsets", EPROTO);
	for (i = 0; i < count; i++) {
		const unsigned char *di = seg + desc + (uint64_t)i * 128u;
		uint32_t off = get32(di), len = get32(di + 4);

		if (len == 4 && (uint64_t)off + 4u <= strings_size &&
		    memcmp(seg + strings + off, "p000", 4) == 0) {
			d = di;
			break;
		}
	}
	if (!d)
		die("p000", ENOENT);
	slot = get64(d + 48);
	if (slot % 64u || slot > size - 64u)
		die("slot offset", EPROTO);
	seq = load64(seg + slot);
	lock = load64(seg + slot + 8);
	writing = load64(seg + aux + (uint64_t)i * 16u + 8u);
	state = (unsigned)(lock >> 62);
	by_bias = writing != 0 && (long)(writing & tid_mask) == pid;
	by_lock = state != 1 && (lock & token_mask) != 0 && (long)(lock & tid_mask) == pid;
	printf("{\"param\": \"p000\", \"seq\": %" PRIu64 ", \"lock\": \"0x%016" PRIx64
	       "\", \"lock_state\": %u, \"lock_tid\": %" PRIu64 ", \"writing\": \"0x%016" PRIx64
	       "\", \"writing_tid\": %" PRIu64 ", \"pid\": %ld, \"held\": %s, \"how\": \"%s\"}\n",
	       seq, lock, state, lock & tid_mask, writing, writing & tid_mask, pid,
	       by_bias || by_lock ? "true" : "false",
	       by_bias ? "a write under its bias announced (aux.writing)"
	       : by_lock ? "its lock word held"
			 : "not held by that writer");
	munmap((void *)seg, (size_t)size);
	return 0;
}

#endif /* PT_VARIANT */

/* --- The processes -------------------------------------------------------- */

struct counts {
	uint64_t torn_double;
	uint64_t torn_record;
};

/* One Displayer iteration: @n reads of doubles, then (if @record) one of
 * the record. Non-zero: cut short by the end. */
static int displayer_iteration(unsigned n, bool record, struct counts *c)
{
	uint64_t torn = 0;
	uint64_t w[REC_WORDS];

	for (unsigned i = 0; i < n; i++) {
		uint64_t v;

		if (read_param(i, &v))
			return -1;
		torn += !double_bits_ok(v);
	}
	c->torn_double += torn;
	if (!record)
		return 0;
	if (read_record(w))
		return -1;
	c->torn_record += !record_ok(w);
	return 0;
}

#if PT_VARIANT == PT_PARAMBUS || PT_VARIANT == PT_PARAMBUS_ATOMIC
/* One Randomizer iteration with a prepared batch: the pass's @n doubles in a
 * record, as a measurement loop fills its own, then one call that checks
 * and writes them with one clock reading for the pass (parambus: each
 * parameter claimed and published on its own; parambus-atomic: all claimed
 * before the first is written); then the record parameter (a string:
 * batches take scalars), as the other variant. */
static int randomizer_iteration(unsigned n, uint64_t k, unsigned id, bool record)
{
	static struct pbus_batch *batch;
	static unsigned batch_n;
	static uint64_t values[NPARAMS];
	uint32_t c = counter_of(k, id);
	uint64_t bits = double_bits_of(c);
	int r;

	if (batch_n != n) {
		struct pbus_batch_field fields[NPARAMS];

		for (unsigned i = 0; i < n; i++)
			fields[i] = (struct pbus_batch_field){&params[i], i * sizeof(values[0])};
		pbus_batch_free(batch);
		batch = NULL;
		r = pbus_batch_new(table, fields, n, &batch);
		if (r < 0)
			die("pbus_batch_new", -r);
		batch_n = n;
	}
	for (unsigned i = 0; i < n; i++)
		values[i] = bits;
#if PT_VARIANT == PT_PARAMBUS
	r = pbus_batch_write_each(batch, values, NULL, 0, NULL);
#else
	r = pbus_batch_write(batch, values, NULL, 0);
#endif
	if (r < 0) {
		note_error(r);
		return -1;
	}
	return record ? write_record(record_word_of(c)) : 0;
}
#else
/* One Randomizer iteration: @n writes of doubles, then (if @record) one of
 * the record. */
static int randomizer_iteration(unsigned n, uint64_t k, unsigned id, bool record)
{
	uint32_t c = counter_of(k, id);
	uint64_t bits = double_bits_of(c);

	for (unsigned i = 0; i < n; i++) {
		if (write_param(i, bits))
			return -1;
	}
	return record ? write_record(record_word_of(c)) : 0;
}
#endif

/* hammer: write p000 flat out, as the Randomizer writes it, until killed;
 * alarm() ends a hammer that nobody kills (a runner that died). */
static int cmd_hammer(const char *name, unsigned id)
{
	alarm(60);
	target_open(name, true);
	printf("ready\n");
	fflush(stdout);
	for (uint64_t k = 0;; k++) {
		if (randomizer_iteration(1, k, id, false))
			break;
	}
	die("writing p000", EIO);
	return 2;
}

struct options {
	bool displayer;
	unsigned n;
	unsigned id;
	const char *target;
	int64_t start_ns;
	unsigned windows;
	unsigned hz;
	bool record;
	const char *progress;
	const char *out;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: param-table-%s info\n"
		"       param-table-%s create|destroy NAME\n"
		"       param-table-%s run --role displayer|randomizer --n N --id K --target NAME\n"
		"                 --start-ns T --windows W [--hz H] [--record 0|1]\n"
		"                 [--progress FILE] --out FILE\n"
		"       param-table-%s hold --target NAME\n"
		"       param-table-%s hammer --target NAME [--id K]\n"
		"       param-table-%s probe --target NAME --pid PID\n",
		PT_VARIANT_NAME, PT_VARIANT_NAME, PT_VARIANT_NAME, PT_VARIANT_NAME,
		PT_VARIANT_NAME, PT_VARIANT_NAME);
	exit(2);
}

static void parse_run(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->n = NPARAMS;
	o->record = true;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--role")) {
			if (!strcmp(v, "displayer"))
				o->displayer = true;
			else if (strcmp(v, "randomizer"))
				usage();
		} else if (!strcmp(a, "--n"))
			o->n = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--id"))
			o->id = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--target"))
			o->target = v;
		else if (!strcmp(a, "--start-ns"))
			o->start_ns = strtoll(v, NULL, 10);
		else if (!strcmp(a, "--windows"))
			o->windows = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--hz"))
			o->hz = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--record"))
			o->record = strcmp(v, "0") != 0;
		else if (!strcmp(a, "--progress"))
			o->progress = v;
		else if (!strcmp(a, "--out"))
			o->out = v;
		else
			usage();
	}
	if (!o->target || !o->out || o->windows == 0 || o->windows > MAX_WINDOWS ||
	    o->n == 0 || o->n > NPARAMS || o->id > 3 || o->start_ns <= 0)
		usage();
}

static void start_timer(int64_t start_ns)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		die("sigaction", errno);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGALRM;
	if (timer_create(CLOCK_MONOTONIC, &sev, &window_timer) < 0)
		die("timer_create", errno);
	its.it_value = ns_to_ts(start_ns + WINDOW_NS);
	its.it_interval = ns_to_ts(WINDOW_NS);
	if (timer_settime(window_timer, TIMER_ABSTIME, &its, NULL) < 0)
		die("timer_settime", errno);
}

static int cmd_run(int argc, char **argv)
{
	struct options o;
	struct counts c = {0, 0};
	uint64_t *win, ops = 0, base = 0, iterations = 0, per_iter;
	uint32_t seen = 0;
	int64_t next_ns, t0_ns, t1_ns, cpu0_ns, cpu1_ns, late_ns;
	long long ticks0, ticks1;
	struct timespec ts;
	FILE *f;
	int r;

	parse_run(argc, argv, &o);
	per_iter = o.n + (o.record ? 1u : 0u);
	win = calloc(o.windows, sizeof(*win));
	if (!win)
		die("calloc", ENOMEM);
	if (o.progress) {
		progress_fd = open(o.progress, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
				   0600);
		if (progress_fd < 0)
			die(o.progress, errno);
	}
	target_open(o.target, !o.displayer);
	nwindows = o.windows;
	start_timer(o.start_ns);

	ts = ns_to_ts(o.start_ns);
	while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
		;
	t0_ns = mono_ns();
	late_ns = t0_ns - o.start_ns;
	ticks0 = proc_cpu_ticks();
	cpu0_ns = proc_cpu_ns();
	next_ns = o.start_ns;

	while (!stop_flag) {
		uint32_t t;

		if (o.displayer ? displayer_iteration(o.n, o.record, &c)
				: randomizer_iteration(o.n, iterations, o.id, o.record))
			break; /* cut short by the end of the run (or an error) */
		if (stop_flag)
			break; /* ended after the run: not counted */
		ops += per_iter;
		iterations++;
		if (progress_fd >= 0) {
			__atomic_store_n(&progress_ops, ops, __ATOMIC_RELAXED);
			__atomic_store_n(&progress_iterations, iterations, __ATOMIC_RELAXED);
		}
		t = __atomic_load_n(&ticks, __ATOMIC_RELAXED);
		if (t != seen && seen < o.windows) {
			if (t > o.windows)
				t = o.windows;
			win[seen] = ops - base; /* later windows up to t stay 0 */
			base = ops;
			seen = t;
		}
		if (o.hz) {
			next_ns += 1000000000LL / o.hz;
			if (next_ns < mono_ns())
				next_ns = mono_ns(); /* behind: do not catch up in a burst */
			ts = ns_to_ts(next_ns);
			while (!stop_flag &&
			       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
	}
	if (seen < o.windows)
		win[seen] = ops - base;
	t1_ns = mono_ns();
	ticks1 = proc_cpu_ticks();
	cpu1_ns = proc_cpu_ns();
	timer_delete(window_timer);
	if (progress_fd >= 0) {
		close(progress_fd);
		progress_fd = -1;
	}

	f = fopen(o.out, "w");
	if (!f)
		die(o.out, errno);
	fprintf(f,
		"{\"variant\": \"%s\", \"role\": \"%s\", \"n\": %u, \"record\": %d, \"id\": %u, \"hz\": %u,\n"
		" \"ops\": %" PRIu64 ", \"iterations\": %" PRIu64 ", \"ops_per_iteration\": %" PRIu64
		",\n \"torn_double\": %" PRIu64 ", \"torn_record\": %" PRIu64 ", \"errors\": %" PRIu64
		",\n \"late_start_ns\": %" PRId64 ", \"elapsed_ns\": %" PRId64
		", \"cpu_ticks\": %lld, \"clk_tck\": %ld, \"cpu_ns\": %" PRId64 ",\n \"windows\": [",
		PT_VARIANT_NAME, o.displayer ? "displayer" : "randomizer", o.n, o.record ? 1 : 0,
		o.id, o.hz, ops, iterations, per_iter, c.torn_double, c.torn_record,
		target_errors(), late_ns, t1_ns - t0_ns,
		ticks0 >= 0 && ticks1 >= 0 ? ticks1 - ticks0 : -1LL, sysconf(_SC_CLK_TCK),
		cpu1_ns - cpu0_ns);
	for (unsigned i = 0; i < o.windows; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", win[i]);
	fprintf(f, "]}\n");
	if (fclose(f) != 0)
		die(o.out, errno);
	free(win);
	return 0;
}

static int cmd_info(void)
{
	/* features: what the runner may ask of this binary beyond the 2 + 2 runs
	 * (a binary of an older source lacks them and is not asked). */
	printf("{\"variant\": \"%s\", \"compiler\": \"%s %s\", \"slot_bytes\": %zu, "
	       "\"params\": %u, \"record_bytes\": %u, "
	       "\"features\": [\"record-option\", \"progress\", \"hold\", \"hammer\", \"probe\"]}\n",
	       PT_VARIANT_NAME,
#if defined(__clang__)
	       "clang",
#else
	       "gcc",
#endif
	       __VERSION__, slot_bytes(), NPARAMS, REC_BYTES);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (!strcmp(argv[1], "create") && argc == 3)
		return cmd_create(argv[2]);
	if (!strcmp(argv[1], "destroy") && argc == 3)
		return cmd_destroy(argv[2]);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (!strcmp(argv[1], "hold") || !strcmp(argv[1], "hammer") || !strcmp(argv[1], "probe")) {
		const char *target = NULL;
		long pid = 0;
		unsigned id = 1;

		for (int i = 2; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--target"))
				target = argv[i + 1];
			else if (!strcmp(argv[i], "--pid"))
				pid = strtol(argv[i + 1], NULL, 10);
			else if (!strcmp(argv[i], "--id"))
				id = (unsigned)strtoul(argv[i + 1], NULL, 10);
			else
				usage();
		}
		if (!target || argc % 2 || id > 3)
			usage();
		if (!strcmp(argv[1], "hold"))
			return cmd_hold(target);
		if (!strcmp(argv[1], "hammer"))
			return cmd_hammer(target, id);
		if (pid <= 0)
			usage();
		return cmd_probe(target, pid);
	}
	usage();
	return 2;
}
