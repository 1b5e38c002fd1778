/* SPDX-License-Identifier: MIT */
/*
 * vector-read: print every parameter of an instance as the C library reads
 * it, one line each: name, version, status, timestamp and value as text,
 * separated by tabs. check-vectors compares this with the expected values.
 */
#include <stdio.h>

#include <parambus/parambus.h>

int main(int argc, char **argv)
{
	struct pbus_table *t;
	unsigned char value[65536];
	char text[4096];
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: vector-read INSTANCE\n");
		return 2;
	}
	r = pbus_table_open(argv[1], PBUS_OPEN_READ, &t);
	if (r < 0) {
		fprintf(stderr, "vector-read: %s: %s\n", argv[1], pbus_strerror(r));
		return 1;
	}
	for (uint32_t i = 0; i < pbus_table_param_count(t); i++) {
		const struct pbus_param *p;
		struct pbus_sample s;

		pbus_table_param(t, i, &p);
		r = pbus_param_read(p, value, sizeof(value), &s);
		if (r < 0 || pbus_param_format(p, value, s.length, text, sizeof(text)) < 0) {
			fprintf(stderr, "vector-read: %s: %s\n", pbus_param_name(p), pbus_strerror(r));
			return 1;
		}
		printf("%s\t%llu\t%s\t%llu\t%s\n", pbus_param_name(p), (unsigned long long)s.seq,
		       pbus_status_name(s.status), (unsigned long long)s.timestamp_ns, text);
	}
	pbus_table_close(t);
	return 0;
}
