/* SPDX-License-Identifier: MIT */
/*
 * java-xlang-reader: a C reader for the Java binding's cross-language tests
 * (java/src/test/java/io/parambus/CrossLanguageTest.java). It reads
 * PREFIX_double, PREFIX_array and PREFIX_big of an instance of
 * tests/java/fixtures/xlang.pbs in turn for SECONDS and checks each value
 * against the version it came with (xlang-common.h): a torn read is a value
 * with an element that is not its version, or an empty array at a version
 * above 0.
 *
 * Usage: java-xlang-reader INSTANCE PREFIX SECONDS [equal]
 *
 * With "equal", the arrays are only required to have equal elements (for a
 * parameter that several writers write at once, whose values are not their
 * versions).
 *
 * Prints "reads N torn T advanced A last L": reads made, torn ones, how
 * often a parameter's version had moved since its previous read, and the
 * highest version seen. Exit status 0 (the caller judges the numbers), or 1
 * if the instance cannot be opened.
 */
#include <stdlib.h>

#include "xlang-common.h"

int main(int argc, char **argv)
{
	const struct pbus_param *params[XLANG_PARAMS];
	uint64_t previous[XLANG_PARAMS] = {0}, last = 0;
	unsigned long long reads = 0, torn = 0, advanced = 0;
	struct pbus_table *t;
	bool equal;
	int64_t end;
	int r;

	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "equal"))) {
		fprintf(stderr, "usage: java-xlang-reader INSTANCE PREFIX SECONDS [equal]\n");
		return 2;
	}
	equal = argc == 5;
	r = pbus_table_open(argv[1], PBUS_OPEN_READ, &t);
	if (r < 0) {
		fprintf(stderr, "java-xlang-reader: %s: %s\n", argv[1], pbus_strerror(r));
		return 1;
	}
	if (xlang_find(t, argv[2], params) < 0) {
		pbus_table_close(t);
		return 1;
	}
	end = xlang_now_ns() + (int64_t)(atof(argv[3]) * 1e9);
	while (xlang_now_ns() < end) {
		for (int k = 0; k < XLANG_PARAMS; k++) {
			union {
				double d;
				int64_t e[XLANG_ARRAY_MAX];
			} v;
			struct pbus_sample s;
			bool ok = true;

			r = pbus_param_read(params[k], &v, sizeof(v), &s);
			if (r < 0) {
				fprintf(stderr, "java-xlang-reader: read: %s\n", pbus_strerror(r));
				pbus_table_close(t);
				return 1;
			}
			reads++;
			if (k == 0) {
				ok = v.d == (double)s.seq;
			} else {
				size_t n = s.length / sizeof(int64_t);

				ok = s.seq == 0 || n == (size_t)pbus_param_value_size(params[k]) / sizeof(int64_t);
				for (size_t i = 0; ok && i < n; i++)
					ok = v.e[i] == (equal ? v.e[0] : (int64_t)s.seq);
			}
			torn += !ok;
			advanced += s.seq != previous[k];
			previous[k] = s.seq;
			if (s.seq > last)
				last = s.seq;
		}
	}
	printf("reads %llu torn %llu advanced %llu last %llu\n", reads, torn, advanced, (unsigned long long)last);
	pbus_table_close(t);
	return 0;
}
