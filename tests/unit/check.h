/* SPDX-License-Identifier: MIT */
/*
 * check.h: the unit tests' few helpers. Each CHECK prints nothing when it
 * holds and a FAIL line naming the file, line and expression when not; each
 * test case ends with one PASS or FAIL line, which `make test` counts.
 */
#ifndef PBUS_TEST_CHECK_H
#define PBUS_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures_in_case;
static int check_failed_cases;
static const char *check_suite = "unit";

#define CHECK(expr)                                                                    \
	do {                                                                           \
		if (!(expr)) {                                                         \
			printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
			check_failures_in_case++;                                      \
		}                                                                      \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                             \
	do {                                                                           \
		long long a_ = (long long)(a), b_ = (long long)(b);                    \
		if (a_ != b_) {                                                        \
			printf("  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
			       __LINE__, #a, a_, #b, b_);                              \
			check_failures_in_case++;                                      \
		}                                                                      \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                              \
	do {                                                                            \
		const char *a_ = (a), *b_ = (b);                                        \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                     \
			printf("  %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__,    \
			       __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");   \
			check_failures_in_case++;                                       \
		}                                                                       \
	} while (0)

#define RUN_CASE(fn)                                                             \
	do {                                                                     \
		check_failures_in_case = 0;                                      \
		fn();                                                            \
		if (check_failures_in_case) {                                    \
			printf("FAIL: %s/%s: %d checks failed\n", check_suite, #fn, \
			       check_failures_in_case);                          \
			check_failed_cases++;                                    \
		} else {                                                         \
			printf("PASS: %s/%s\n", check_suite, #fn);               \
		}                                                                \
		fflush(stdout);                                                  \
	} while (0)

#define CHECK_EXIT() return check_failed_cases ? 1 : 0

#endif
