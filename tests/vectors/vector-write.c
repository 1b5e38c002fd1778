/* SPDX-License-Identifier: MIT */
/*
 * vector-write: write parameters of an instance as the C library writes
 * them, one write each, in the order given, for check-vectors to compare
 * what the writes left in the segments (lock words, aux words, versions,
 * the wake segment's turns and notify word) with segment-edge.writes
 * (tests/vectors/README.md).
 *
 * Usage: vector-write [--no-bias] INSTANCE NAME=TEXT...
 *
 * The table is opened as PBUS_OPEN_PROVIDER, so its writers take biases (if
 * membarrier(2) registration succeeds), as an application's do; --no-bias
 * makes them take none, as pbusd's own table does. Write k has the timestamp
 * 2026-01-01T00:00:01Z + k ns and status ok. Prints, tab-separated:
 *
 *   write       NAME  RESULT  SEQ      RESULT: 0 or the errno's name
 *   token       the writing thread's token (hex)
 *   registered  1 if the process registered for the global expedited
 *               membarrier (and so may take biases), else 0
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <parambus/parambus.h>

#include "../../lib/barrier-internal.h"
#include "../../lib/table-internal.h"
#include "../../lib/write-lock-internal.h"

#define T1 UINT64_C(1767225601000000000)

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EAGAIN: return "EAGAIN";
	case ESTALE: return "ESTALE";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case ERANGE: return "ERANGE";
	case ENOENT: return "ENOENT";
	case EPROTO: return "EPROTO";
	case EPERM: return "EPERM";
	default: return "E?";
	}
}

int main(int argc, char **argv)
{
	struct pbus_table *t;
	bool bias = true;
	int first = 1, r;

	if (argc > 1 && !strcmp(argv[1], "--no-bias")) {
		bias = false;
		first = 2;
	}
	if (argc < first + 1) {
		fprintf(stderr, "usage: vector-write [--no-bias] INSTANCE NAME=TEXT...\n");
		return 2;
	}
	r = pbus_table_open(argv[first], PBUS_OPEN_PROVIDER, &t);
	if (r < 0) {
		fprintf(stderr, "vector-write: %s: %s\n", argv[first], pbus_strerror(r));
		return 1;
	}
	t->may_bias = bias;
	for (int a = first + 1; a < argc; a++) {
		const struct pbus_param *p;
		struct pbus_param_info info;
		unsigned char buf[512];
		char name[128];
		const char *eq = strchr(argv[a], '=');
		size_t len;
		struct pbus_write w = {.status = PBUS_STATUS_OK, .timestamp_ns = T1 + (uint64_t)(a - first), .value = buf};

		if (!eq || (size_t)(eq - argv[a]) >= sizeof(name)) {
			fprintf(stderr, "vector-write: %s is not NAME=TEXT\n", argv[a]);
			return 2;
		}
		memcpy(name, argv[a], (size_t)(eq - argv[a]));
		name[eq - argv[a]] = 0;
		if ((r = pbus_table_find(t, name, &p)) < 0 ||
		    (r = pbus_param_parse(p, eq + 1, buf, sizeof(buf), &len)) < 0) {
			fprintf(stderr, "vector-write: %s: %s\n", argv[a], pbus_strerror(r));
			return 1;
		}
		pbus_param_describe(p, &info);
		w.index = info.index;
		w.length = len;
		r = pbus_table_write_many(t, &w, 1);
		printf("write\t%s\t%s\t%llu\n", name, errno_name(-r), (unsigned long long)w.seq);
	}
	printf("token\t%llx\n", (unsigned long long)pbus_thread_token());
	printf("registered\t%d\n", pbus_asym_registered() ? 1 : 0);
	pbus_table_close(t);
	return 0;
}
