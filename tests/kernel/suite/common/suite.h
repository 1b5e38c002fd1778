/* SPDX-License-Identifier: MIT */
/*
 * suite.h - shared by the libparambus-hw kernel tests (tests/kernel/suite).
 *
 * A case is `static const char *name(void)` returning NULL on success or a
 * message; SUITE_RUN() prints "ok <name>" / "not ok <name>: <message>"
 * (the contract of tests/kernel/ENVIRONMENT.md) and counts failures;
 * suite_exit() returns the status the harness expects.
 */
#ifndef PBUS_SUITE_H
#define PBUS_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include "kenv.h"

extern char suite_msg[512];
extern int suite_failures;

#define T_EXPECT(cond)                                                                              \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			snprintf(suite_msg, sizeof(suite_msg), "line %d: %s", __LINE__, #cond);     \
			return suite_msg;                                                           \
		}                                                                                   \
	} while (0)

#define T_EQ(a, b)                                                                                   \
	do {                                                                                         \
		long long va_ = (long long)(a), vb_ = (long long)(b);                                \
		if (va_ != vb_) {                                                                    \
			snprintf(suite_msg, sizeof(suite_msg), "line %d: %s = %lld, expected %s = %lld", \
				 __LINE__, #a, va_, #b, vb_);                                        \
			return suite_msg;                                                            \
		}                                                                                    \
	} while (0)

/* Fail with a formatted message. */
#define T_FAIL(...)                                                               \
	do {                                                                      \
		int n_ = snprintf(suite_msg, sizeof(suite_msg), "line %d: ", __LINE__); \
		snprintf(suite_msg + n_, sizeof(suite_msg) - (size_t)n_, __VA_ARGS__); \
		return suite_msg;                                                 \
	} while (0)

#define SUITE_RUN(name, fn) suite_run(name, fn)

void suite_init(void);
void suite_run(const char *name, const char *(*fn)(void));
int suite_exit(void);

/* Read a small file into a static buffer (NULL on error). */
const char *suite_read(const char *path);
/* Does file @path contain @needle? */
bool suite_file_contains(const char *path, const char *needle);
/* Monotonic milliseconds. */
uint64_t suite_now_ms(void);
/* Sleep @ms milliseconds. */
void suite_sleep_ms(unsigned int ms);
/* Count occurrences of @needle in @haystack. */
int suite_count(const char *haystack, const char *needle);

/*
 * Start /usr/bin/pbusd serving @schema as @instance (state in @state_dir,
 * stdout and stderr appended to @log_path, more arguments in @extra, a
 * NULL-terminated list, or NULL) and wait up to 10 s for its READY=1 on
 * --notify-fd. Returns its pid, or -errno (-ETIMEDOUT: not ready).
 */
int suite_start_pbusd(const char *schema, const char *instance, const char *state_dir,
		      const char *log_path, const char *const *extra);

/* The mock PWM driver's state file (tests/kernel/drivers/pbus-mock-pwm.c). */
#define SUITE_MOCK_PWM_STATE "/sys/kernel/debug/pbus-mock-pwm/state"

/* Wait up to @timeout_ms for gpio-sim's line @offset of @chip to read
 * @level: 0, or -ETIMEDOUT. */
int suite_wait_sim_line(const char *chip, unsigned offset, int level, unsigned timeout_ms);

/* The mock PWM's state line of @channel ("pwm=N ...", without its
 * newline) into @buf: 0, or -ENOENT (no such line, no state file). */
int suite_pwm_state(unsigned channel, char *buf, size_t size);

/* SIGTERM to pbusd @pid, then wait up to 5 s for it: its wait status, or
 * -1 if it did not exit. */
int suite_stop_pbusd(pid_t pid);

#endif
