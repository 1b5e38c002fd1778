/* SPDX-License-Identifier: MIT */
/*
 * hold-param.c: a writer that stops while it holds a parameter, for the
 * attack tests of tests/security/ (test_socket.py, "stuck writer").
 *
 *     hold-param INSTANCE PARAMETER
 *
 * Opens the instance as its provider, claims PARAMETER as a writer does
 * just before it stores a value (pbus_write_claim(), lib/write-lock-internal.h),
 * prints "held" and stops itself (SIGSTOP): to every other writer the
 * parameter is now held by a live process that does not let go, which is
 * what a debugger, a SIGSTOP or a swapped-out writer does to it. After
 * SIGCONT it lets go (pbus_write_release()) without writing and exits 0.
 * Exit status 1 and one line on stderr if anything fails.
 */
#include <signal.h>
#include <stdio.h>

#include <parambus/parambus.h>

#include "../../lib/table-internal.h"
#include "../../lib/write-lock-internal.h"

int main(int argc, char **argv)
{
	struct pbus_table *table = NULL;
	const struct pbus_param *param;
	struct pbus_write_claim claim;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: hold-param INSTANCE PARAMETER\n");
		return 2;
	}
	r = pbus_table_open(argv[1], PBUS_OPEN_PROVIDER, &table);
	if (r < 0) {
		fprintf(stderr, "hold-param: cannot open instance '%s': %s\n", argv[1], pbus_strerror(r));
		return 1;
	}
	r = pbus_table_find(table, argv[2], &param);
	if (r < 0) {
		fprintf(stderr, "hold-param: no parameter '%s': %s\n", argv[2], pbus_strerror(r));
		pbus_table_close(table);
		return 1;
	}
	r = pbus_write_claim(&claim, pbus_param_lock(param), &table->aux[param->index_].writing,
			     &table->header->revocations, table->may_bias);
	if (r < 0) {
		fprintf(stderr, "hold-param: cannot claim '%s': %s\n", argv[2], pbus_strerror(r));
		pbus_table_close(table);
		return 1;
	}
	printf("held\n");
	fflush(stdout);
	raise(SIGSTOP);
	/* SIGCONT: let go, having written nothing. */
	pbus_write_release(&claim);
	pbus_table_close(table);
	return 0;
}
