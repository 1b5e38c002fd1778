/* SPDX-License-Identifier: MIT */
/*
 * stress-common.h: what the stress tests share: options (duration, scale,
 * the pbusd binary, fixtures), the suite's name for pbus-check.h's result
 * lines ("PASS: stress/<name>" / "FAIL: stress/<name>: <reason>"), a janitor
 * process that kills what a test started and removes its shared-memory
 * objects and temporary directories even if the test itself dies, starting
 * pbusd and waiting for its READY notification, shared memory between the
 * processes of a test, futex waits on it, and a small PRNG.
 */
#ifndef PBUS_STRESS_COMMON_H
#define PBUS_STRESS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pbus-check.h"

#define STRESS_NS_PER_MS INT64_C(1000000)
#define STRESS_NS_PER_S INT64_C(1000000000)

struct stress_options {
	double seconds;       /* duration of the timed phase (--seconds or default * scale) */
	double scale;         /* PBUS_STRESS_SCALE or --scale, default 1 */
	const char *pbusd;    /* path of pbusd */
	const char *fixtures; /* directory of the .pbs fixtures */
	uint64_t seed;        /* PRNG seed (--seed), printed in the summary */
};

/*
 * Parse the common options (--seconds S, --scale F, --pbusd PATH,
 * --fixtures DIR, --seed N, --help), start the janitor and a watchdog that
 * fails the test after @watchdog_s seconds (scaled with the duration).
 * @binary names the program in messages. Exits 2 on a usage error.
 */
void stress_init(const char *binary, int argc, char **argv, double default_seconds,
		 double watchdog_s, struct stress_options *ret);

/* A count scaled by the options' scale, at least @minimum. */
unsigned stress_scaled(const struct stress_options *o, unsigned count, unsigned minimum);

/* --- Results -------------------------------------------------------------- */

/* The cases are pbus-check.h's (suite "stress"): pbus_check_begin(),
 * CHECK_MSG(), CHECK_FAIL(), pbus_check_end(). */

/* Print "# " + text: a measurement or note that is not a result line. */
void stress_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clean up and return the exit status: 0 if every case passed. */
int stress_exit(void);

/* --- Cleanup ---------------------------------------------------------------- */

/* Make @pid (a child) part of what the janitor kills; forget it once reaped. */
void stress_track_pid(pid_t pid);
void stress_untrack_pid(pid_t pid);
/* Remove /dev/shm/pbus.@instance and /dev/shm/pbus.@instance.* at the end. */
void stress_track_instance(const char *instance);
/* Remove directory @path and everything in it (one level) at the end. */
void stress_track_dir(const char *path);
/* Remove an instance's shared-memory objects now. */
void stress_remove_instance_files(const char *instance);
/* Make a temporary directory (tracked); returns a static-lifetime string. */
char *stress_make_temp_dir(const char *tag);

/* In a forked child: die with the parent, and drop the parent's cleanup. */
void stress_child_init(void);

/* --- Processes -------------------------------------------------------------- */

/* Fork a tracked child that runs @fn(@arg) and exits with its result. */
pid_t stress_fork(int (*fn)(void *arg), void *arg);

/*
 * Start pbusd on @schema for @instance with state in @state_dir, stderr
 * appended to @log_path (NULL: inherit), plus @extra arguments (NULL
 * terminated, may be NULL). Waits up to @timeout_s for "READY=1" on the
 * notify fd. Returns the pid (tracked), or -1 with *ret_status set to the
 * wait status if pbusd exited first (or -2 on timeout, pbusd killed).
 */
pid_t stress_pbusd_start(const struct stress_options *o, const char *schema,
			 const char *instance, const char *state_dir, const char *log_path,
			 const char *const *extra, double timeout_s, int *ret_status);

/* waitpid with a deadline: 0 and *ret_status when @pid exited, -ETIMEDOUT
 * (child left running) otherwise. Untracks the pid once reaped. */
int stress_wait_pid(pid_t pid, double timeout_s, int *ret_status);

/* SIGKILL and reap @pid (no-op if <= 0). Returns the wait status. */
int stress_kill_wait(pid_t pid);

/* SIGTERM, wait up to @timeout_s, then SIGKILL. Returns the wait status. */
int stress_terminate(pid_t pid, double timeout_s);

/* Describe a wait status ("exit 1", "killed by SIGSEGV"). Static buffer. */
const char *stress_status_text(int status);

/* Where process @pid is, for a failure message: its state, wait channel
 * and (as root) the innermost kernel functions it is in ("state D, wchan
 * futex_wait_queue, kernel: a < b < c"). Static buffer. */
const char *stress_proc_where(pid_t pid);

/* --- Shared memory, futexes, time ------------------------------------------- */

/* Anonymous MAP_SHARED zeroed memory, visible to children forked later. */
void *stress_shared_alloc(size_t size);

/* futex on a 32-bit word of shared memory: wait while *word == expected, up
 * to @timeout_ns (< 0: forever); 0 woken or changed, -ETIMEDOUT. */
int stress_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns);
void stress_futex_wake(uint32_t *word);
/* Wait until *word >= @target (woken through stress_futex_wake). */
int stress_wait_at_least(uint32_t *word, uint32_t target, int64_t timeout_ns);
/* Add to *word and wake its waiters. */
void stress_add_wake(uint32_t *word, uint32_t n);

int64_t stress_now_ns(void);        /* CLOCK_MONOTONIC */
int64_t stress_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */
void stress_sleep_ns(int64_t ns);   /* for randomised timing, never to synchronise */

/* xorshift64* */
struct stress_rng {
	uint64_t s;
};
void stress_rng_seed(struct stress_rng *r, uint64_t seed);
uint64_t stress_rng_next(struct stress_rng *r);
/* Uniform in [lo, hi]. */
uint64_t stress_rng_range(struct stress_rng *r, uint64_t lo, uint64_t hi);

/* The file's contents, NUL-terminated (caller frees), or NULL. */
char *stress_read_file(const char *path, size_t *ret_length);
bool stress_file_contains(const char *path, const char *needle);

#endif
