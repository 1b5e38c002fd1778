/* SPDX-License-Identifier: MIT */
/*
 * methods-common.h: what every contender program of benchmark scenario 3,
 * method calls (../shared/BENCHMARKS.md, docs/benchmarks.md), shares with the
 * others and with bench/run-methods.py: the command line, the two methods'
 * arguments, the clock and the one line of output.
 *
 * The contract with the runner (one contender = one program):
 *
 *   PROGRAM --role server --method empty|copy --address ADDR
 *       serve the method at ADDR (what ADDR means is the contender's own: a
 *       socket path, a D-Bus address ...); print {"ready": true} on stdout
 *       once a client can call, then serve until SIGTERM.
 *   PROGRAM --role client --method empty|copy --address ADDR --calls N [--warmup W]
 *       call the method W times (default N / 10), then N times under the
 *       clock, each call waiting for its reply before the next; print one
 *       line {"contender": ..., "role": "client", "method": ...,
 *       "calls": N, "ns_per_call": ...} and exit 0.
 *   PROGRAM --role inprocess --method empty|copy --calls N [--warmup W]
 *       the same with the server in the calling process.
 *   PROGRAM --role broadcast --address ADDR --subscribers S --broadcasts B
 *       B broadcasts, each delivered to all of S subscribers; print one line
 *       {"contender": ..., "role": "broadcast", "subscribers": S,
 *       "broadcasts": B, "p50_us": ..., "p99_us": ...}.
 *
 * A program supports the roles it names to methods_parse_options(). Errors
 * are one line on stderr, "PROGRAM: what: why", and exit status 1; a usage
 * error exits with 2.
 */
#ifndef PBUS_BENCH_METHODS_COMMON_H
#define PBUS_BENCH_METHODS_COMMON_H

#include <stdbool.h>
#include <stdint.h>

enum methods_role {
	METHODS_ROLE_SERVER = 1 << 0,
	METHODS_ROLE_CLIENT = 1 << 1,
	METHODS_ROLE_INPROCESS = 1 << 2,
	METHODS_ROLE_BROADCAST = 1 << 3,
};

enum methods_method {
	METHODS_METHOD_EMPTY,
	METHODS_METHOD_COPY,
};

struct methods_options {
	enum methods_role role;
	enum methods_method method;
	const char *address;
	long calls;
	long warmup;
	long subscribers;
	long broadcasts;
};

/* The copy method's arguments, in and out alike: Int32, four Double,
 * UInt32. On a wire they are 40 bytes, little-endian, unpadded, in this
 * order (METHODS_COPY_SIZE). */
struct methods_copy_args {
	int32_t i;
	double d[4];
	uint32_t u;
};

#define METHODS_COPY_SIZE 40

/* The program's name in messages; set by methods_parse_options(). */
extern const char *methods_program;

/*
 * Parse the command line into *@ret. @roles is the set of roles this
 * program supports (enum methods_role bits), @about its own paragraph for
 * --help (what ADDR is, what its roles do). Prints the help and exits 0 on
 * --help; prints one line and exits 2 on a usage error.
 */
void methods_parse_options(int argc, char **argv, const char *program, unsigned roles,
			   const char *about, struct methods_options *ret);

/* One line "PROGRAM: @what: strerror(@error)" on stderr (@error a positive or
 * negative errno), exit status 1. */
_Noreturn void methods_fail(const char *what, int error);

/* The same with a message of one's own instead of strerror(). */
_Noreturn void methods_fail_message(const char *what, const char *message);

/* CLOCK_MONOTONIC in ns. */
int64_t methods_now_ns(void);

/* The arguments a client passes in call number @call (each call's differ,
 * so a server that did not copy shows). */
void methods_copy_args_for_call(long call, struct methods_copy_args *ret);

bool methods_copy_args_equal(const struct methods_copy_args *a, const struct methods_copy_args *b);

/* @args as their 40 wire bytes, and back. */
void methods_copy_args_encode(const struct methods_copy_args *args, unsigned char *ret_bytes);
void methods_copy_args_decode(const unsigned char *bytes, struct methods_copy_args *ret);

/* The server's {"ready": true} line, flushed. */
void methods_print_ready(void);

/* The client's or in-process role's line: @elapsed_ns for @opts->calls
 * calls. */
void methods_print_calls(const char *contender, const struct methods_options *opts,
			 int64_t elapsed_ns);

/* The broadcast role's line: the delivery time of a broadcast to all of
 * @opts->subscribers, median and 99th percentile, in µs. */
void methods_print_broadcast(const char *contender, const struct methods_options *opts,
			     double p50_us, double p99_us);

const char *methods_method_name(enum methods_method method);

#endif
