/* SPDX-License-Identifier: MIT */
/*
 * xlang-common.h: what the Java binding's C helpers share: the parameters of
 * tests/java/fixtures/xlang.pbs that one writer writes (PREFIX_double,
 * PREFIX_array, PREFIX_big) and the consistency rule every reader checks: a
 * value whose every element (the double: its value) equals the version the
 * write produced (the version before the write plus one; each parameter has
 * one writer), or the initial value (version 0: zero, or an empty array).
 */
#ifndef XLANG_COMMON_H
#define XLANG_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <parambus/table.h>

#define XLANG_PARAMS 3
#define XLANG_ARRAY_MAX 64

static inline int64_t xlang_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Find PREFIX_double, PREFIX_array and PREFIX_big in @t. */
static inline int xlang_find(struct pbus_table *t, const char *prefix, const struct pbus_param **ret)
{
	static const char *const names[XLANG_PARAMS] = {"double", "array", "big"};
	char name[64];

	for (int k = 0; k < XLANG_PARAMS; k++) {
		int r;

		snprintf(name, sizeof(name), "%s_%s", prefix, names[k]);
		r = pbus_table_find(t, name, &ret[k]);
		if (r < 0) {
			fprintf(stderr, "xlang: %s: %s\n", name, pbus_strerror(r));
			return r;
		}
	}
	return 0;
}

#endif
