/* SPDX-License-Identifier: MIT */
/*
 * java-xlang-writer: a C writer for the Java binding's cross-language tests
 * (java/src/test/java/io/parambus/CrossLanguageTest.java). It writes
 * PREFIX_double, PREFIX_array and PREFIX_big of an instance of
 * tests/java/fixtures/xlang.pbs in turn, each value made of the version its
 * write produces (xlang-common.h), so that readers can check every value
 * they read.
 *
 * Usage: java-xlang-writer INSTANCE PREFIX SECONDS
 *        java-xlang-writer INSTANCE PREFIX once
 *
 * With SECONDS it writes for that long and prints "writes N". With "once" it
 * makes one write of each parameter and prints "elapsed_ns N", the time the
 * three writes took (a dead holder's takeover included). Exit status 0, or 1
 * with one line on stderr if a write fails.
 */
#include <stdlib.h>

#include "xlang-common.h"

static int write_version(struct pbus_table *t, const struct pbus_param *p)
{
	int64_t elements[XLANG_ARRAY_MAX];
	uint64_t next = pbus_param_seq(p) + 1;
	struct pbus_param_info info;
	struct pbus_write w = {.status = PBUS_STATUS_OK};
	double d = (double)next;
	int r;

	pbus_param_describe(p, &info);
	w.index = info.index;
	if (info.type == PBUS_TYPE_DOUBLE) {
		w.value = &d;
		w.length = sizeof(d);
	} else {
		size_t n = info.value_size / sizeof(int64_t);

		for (size_t k = 0; k < n; k++)
			elements[k] = (int64_t)next;
		w.value = elements;
		w.length = n * sizeof(int64_t);
	}
	r = pbus_table_write_many(t, &w, 1);
	if (r < 0)
		fprintf(stderr, "java-xlang-writer: write %s: %s\n", info.name, pbus_strerror(r));
	return r;
}

int main(int argc, char **argv)
{
	const struct pbus_param *params[XLANG_PARAMS];
	struct pbus_table *t;
	unsigned long long writes = 0;
	int64_t start, end;
	bool once;
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: java-xlang-writer INSTANCE PREFIX SECONDS|once\n");
		return 2;
	}
	once = !strcmp(argv[3], "once");
	r = pbus_table_open(argv[1], PBUS_OPEN_WRITE, &t);
	if (r < 0) {
		fprintf(stderr, "java-xlang-writer: %s: %s\n", argv[1], pbus_strerror(r));
		return 1;
	}
	if (xlang_find(t, argv[2], params) < 0) {
		pbus_table_close(t);
		return 1;
	}
	start = xlang_now_ns();
	end = start + (once ? 0 : (int64_t)(atof(argv[3]) * 1e9));
	do {
		for (int k = 0; k < XLANG_PARAMS; k++) {
			if (write_version(t, params[k]) < 0) {
				pbus_table_close(t);
				return 1;
			}
			writes++;
		}
	} while (!once && xlang_now_ns() < end);
	if (once)
		printf("elapsed_ns %lld\n", (long long)(xlang_now_ns() - start));
	else
		printf("writes %llu\n", writes);
	pbus_table_close(t);
	return 0;
}
