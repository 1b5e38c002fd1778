/* SPDX-License-Identifier: MIT */
/*
 * pbus-check.h: the one assertion header of parambus's C tests.
 *
 * A test program is a suite of cases. Each case ends with one result line,
 * "PASS: <suite>/<case>" or "FAIL: <suite>/<case>: <first failure>", which
 * tests/run-all counts, and the program's exit status is non-zero if a case
 * failed:
 *
 *     pbus_check_suite("unit/table");       once, first thing in main()
 *     RUN_CASE(fn);                         a case that is a void fn(void)
 *     pbus_check_begin("name"); ...; pbus_check_end();      a case in line
 *     CHECK_EXIT();                         return the exit status
 *
 * Inside a case:
 *
 *     CHECK(cond)                   CHECK_MSG(cond, fmt, ...)
 *     CHECK_EQ(a, b)                integers, both values shown
 *     CHECK_EQ_STR(a, b)            strings (NULL-safe)
 *     CHECK_FAIL(fmt, ...)          a failure found otherwise
 *     REQUIRE(cond), REQUIRE_EQ(a, b)   as CHECK and CHECK_EQ, but the case
 *                                   function returns when they fail (when
 *                                   what follows would crash or say nothing)
 *
 * The CHECKs are expressions, true when the check held. A failed check
 * prints "  file:line: what" on stderr at once (stdout flushed first, so the
 * lines stay in order) and the case goes on; the case's FAIL line names the
 * first failure. A failure outside a case is a FAIL line of its own, named
 * <suite>/setup.
 *
 * Header only, so that a test built by a plain compiler command (tests/gen/c)
 * can use it. Its state is one weak object that all files of a program
 * share (the stress programs check in several). Not thread-safe: check in
 * the thread that runs the case.
 */
#ifndef PBUS_CHECK_H
#define PBUS_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pbus_check_state {
	const char *suite;    /* prefix of the result names */
	char name[128];       /* the current case */
	bool in_case;
	unsigned case_failures;
	char reason[512];     /* the current case's first failure */
	unsigned passed, failed;
};

__attribute__((weak)) struct pbus_check_state pbus_check_state = {.suite = "test"};

/* Name the suite: results are called <suite>/<case>. */
static inline void pbus_check_suite(const char *suite)
{
	pbus_check_state.suite = suite;
}

/* Start case @name. */
static inline void pbus_check_begin(const char *name)
{
	struct pbus_check_state *s = &pbus_check_state;

	snprintf(s->name, sizeof(s->name), "%s", name);
	s->in_case = true;
	s->case_failures = 0;
	s->reason[0] = 0;
}

/* Print the result line of @ok: PASS, or FAIL with @reason. */
static inline void pbus_check_result_(bool ok, const char *name, const char *reason, unsigned more)
{
	struct pbus_check_state *s = &pbus_check_state;

	if (ok) {
		printf("PASS: %s/%s\n", s->suite, name);
		s->passed++;
	} else if (more) {
		printf("FAIL: %s/%s: %s (and %u more)\n", s->suite, name, reason, more);
		s->failed++;
	} else {
		printf("FAIL: %s/%s: %s\n", s->suite, name, reason);
		s->failed++;
	}
	fflush(stdout);
}

/* End the current case with its result line; true if it passed. */
static inline bool pbus_check_end(void)
{
	struct pbus_check_state *s = &pbus_check_state;
	bool ok = s->case_failures == 0;

	pbus_check_result_(ok, s->name, s->reason, ok ? 0 : s->case_failures - 1);
	s->in_case = false;
	return ok;
}

/* Has the current case failed so far? */
static inline bool pbus_check_case_failed(void)
{
	return pbus_check_state.case_failures > 0;
}

/* The program's exit status: 0 if no case failed. */
static inline int pbus_check_exit(void)
{
	return pbus_check_state.failed ? 1 : 0;
}

/* Record a failure at @file:@line (of a case, or of the setup). */
static inline void pbus_check_vfail_(const char *file, int line, const char *fmt, va_list ap)
{
	struct pbus_check_state *s = &pbus_check_state;
	const char *base = strrchr(file, '/');
	char text[400], where[480];

	vsnprintf(text, sizeof(text), fmt, ap);
	snprintf(where, sizeof(where), "%s:%d: %s", base ? base + 1 : file, line, text);
	for (char *c = where; *c; c++) /* a result is one line */
		if (*c == '\n' || *c == '\r')
			*c = '|';
	fflush(stdout);
	fprintf(stderr, "  %s\n", where);
	fflush(stderr);
	if (!s->in_case) {
		pbus_check_result_(false, "setup", where, 0);
		return;
	}
	if (s->case_failures++ == 0)
		snprintf(s->reason, sizeof(s->reason), "%s", where);
}

static inline bool pbus_check_at_(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline bool pbus_check_at_(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	va_start(ap, fmt);
	pbus_check_vfail_(file, line, fmt, ap);
	va_end(ap);
	return false;
}

static inline bool pbus_check_eq_(long long a, long long b, const char *a_text, const char *b_text,
				  const char *file, int line)
{
	return pbus_check_at_(a == b, file, line, "%s == %lld, expected %s == %lld", a_text, a, b_text, b);
}

static inline bool pbus_check_eq_str_(const char *a, const char *b, const char *a_text, const char *file,
				      int line)
{
	return pbus_check_at_(a && b && strcmp(a, b) == 0, file, line, "%s is \"%s\", expected \"%s\"", a_text,
			      a ? a : "(null)", b ? b : "(null)");
}

#define CHECK(cond) pbus_check_at_(!!(cond), __FILE__, __LINE__, "check failed: %s", #cond)
#define CHECK_MSG(cond, ...) pbus_check_at_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_FAIL(...) pbus_check_at_(false, __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_EQ(a, b) pbus_check_eq_((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_EQ_STR(a, b) pbus_check_eq_str_((a), (b), #a, __FILE__, __LINE__)

#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!CHECK(cond))                                                                  \
			return;                                                                    \
	} while (0)
#define REQUIRE_EQ(a, b)                                                                           \
	do {                                                                                       \
		if (!CHECK_EQ(a, b))                                                               \
			return;                                                                    \
	} while (0)

/* Run void @fn(void) as the case named after it. */
#define RUN_CASE(fn)                                                                               \
	do {                                                                                       \
		pbus_check_begin(#fn);                                                             \
		fn();                                                                              \
		pbus_check_end();                                                                  \
	} while (0)

#define CHECK_EXIT() return pbus_check_exit()

#endif
