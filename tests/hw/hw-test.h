/* SPDX-License-Identifier: MIT */
/*
 * hw-test.h - the few helpers the host-side libparambus-hw tests share.
 *
 * A test case is a function that returns NULL on success or a static
 * message; RUN() prints "PASS: hw/<name>" or "FAIL: hw/<name>: <message>".
 * EXPECT() fails the case at the first wrong value, with file, line and the
 * expression.
 */
#ifndef PBUS_HW_TEST_H
#define PBUS_HW_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hw_test_failures;
static char hw_test_msg[512];

#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			snprintf(hw_test_msg, sizeof(hw_test_msg), "%s:%d: %s", __FILE__, __LINE__, \
				 #cond);                                                           \
			return hw_test_msg;                                                        \
		}                                                                                  \
	} while (0)

/* EXPECT_EQ for integers, showing both values. */
#define EXPECT_EQ(a, b)                                                                             \
	do {                                                                                        \
		long long va_ = (long long)(a), vb_ = (long long)(b);                               \
		if (va_ != vb_) {                                                                   \
			snprintf(hw_test_msg, sizeof(hw_test_msg), "%s:%d: %s == %lld, expected %s == %lld", \
				 __FILE__, __LINE__, #a, va_, #b, vb_);                             \
			return hw_test_msg;                                                         \
		}                                                                                   \
	} while (0)

#define RUN(prefix, fn)                                                                   \
	do {                                                                              \
		const char *m_ = fn();                                                    \
		if (m_) {                                                                 \
			printf("FAIL: hw/%s/%s: %s\n", prefix, #fn, m_);                  \
			hw_test_failures++;                                               \
		} else {                                                                  \
			printf("PASS: hw/%s/%s\n", prefix, #fn);                          \
		}                                                                         \
		fflush(stdout);                                                           \
	} while (0)

#define HW_TEST_EXIT() return hw_test_failures ? 1 : 0

#endif
