/* SPDX-License-Identifier: MIT */
/*
 * methods-common.c: the command line, arguments and output that the
 * contenders of scenario 3 share (methods-common.h has the contract).
 * Nothing here runs inside a timed loop except methods_copy_args_*(), which
 * every contender's client calls once per call, so that all pay the same.
 */
#include "methods-common.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *methods_program = "methods";

_Noreturn void methods_fail_message(const char *what, const char *message)
{
	fprintf(stderr, "%s: %s: %s\n", methods_program, what, message);
	exit(1);
}

_Noreturn void methods_fail(const char *what, int error)
{
	methods_fail_message(what, strerror(error < 0 ? -error : error));
}

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", methods_program);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	exit(2);
}

static const struct {
	const char *name;
	enum methods_role role;
} roles_by_name[] = {
	{"server", METHODS_ROLE_SERVER},
	{"client", METHODS_ROLE_CLIENT},
	{"inprocess", METHODS_ROLE_INPROCESS},
	{"broadcast", METHODS_ROLE_BROADCAST},
};
#define ROLES (sizeof(roles_by_name) / sizeof(roles_by_name[0]))

static long positive(const char *option, const char *text, bool zero_ok)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || (v == 0 && !zero_ok))
		usage_error(zero_ok ? "%s: not a number >= 0" : "%s: not a number > 0", option);
	return v;
}

static void help(const char *about, unsigned roles)
{
	printf("usage: %s --role ROLE [options]\n\n%s\n\nroles:\n", methods_program, about);
	if (roles & METHODS_ROLE_SERVER)
		printf("  --role server --method M --address ADDR\n"
		       "      serve method M at ADDR; prints {\"ready\": true} once a client can\n"
		       "      call, then serves until SIGTERM\n");
	if (roles & METHODS_ROLE_CLIENT)
		printf("  --role client --method M --address ADDR --calls N [--warmup W]\n"
		       "      W calls (default N / 10), then N timed calls, one at a time;\n"
		       "      prints {\"contender\", \"role\", \"method\", \"calls\",\n"
		       "      \"ns_per_call\"}\n");
	if (roles & METHODS_ROLE_INPROCESS)
		printf("  --role inprocess --method M --calls N [--warmup W]\n"
		       "      the same with the server in this process\n");
	if (roles & METHODS_ROLE_BROADCAST)
		printf("  --role broadcast --address ADDR --subscribers S --broadcasts B\n"
		       "      B broadcasts to S subscribers; prints p50_us and p99_us of\n"
		       "      their delivery\n");
	printf("\nmethods (M):\n"
	       "  empty   no arguments, no result\n"
	       "  copy    Int32, four Double, UInt32 in (40 bytes); the server returns them\n\n"
	       "Part of benchmark scenario 3 (docs/benchmarks.md), run by bench/run-methods.py.\n");
}

void methods_parse_options(int argc, char **argv, const char *program, unsigned roles,
			   const char *about, struct methods_options *ret)
{
	static const struct option long_options[] = {
		{"role", required_argument, NULL, 'r'},
		{"method", required_argument, NULL, 'm'},
		{"address", required_argument, NULL, 'a'},
		{"calls", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"subscribers", required_argument, NULL, 's'},
		{"broadcasts", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct methods_options o = {.warmup = -1};
	bool have_method = false;
	int c;

	methods_program = program;
	while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (c) {
		case 'r':
			o.role = 0;
			for (size_t i = 0; i < ROLES; i++)
				if (!strcmp(optarg, roles_by_name[i].name))
					o.role = roles_by_name[i].role;
			if (!(o.role & roles))
				usage_error("--role %s: not a role of this program", optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "empty"))
				o.method = METHODS_METHOD_EMPTY;
			else if (!strcmp(optarg, "copy"))
				o.method = METHODS_METHOD_COPY;
			else
				usage_error("--method %s: neither empty nor copy", optarg);
			have_method = true;
			break;
		case 'a':
			o.address = optarg;
			break;
		case 'n':
			o.calls = positive("--calls", optarg, false);
			break;
		case 'w':
			o.warmup = positive("--warmup", optarg, true);
			break;
		case 's':
			o.subscribers = positive("--subscribers", optarg, false);
			break;
		case 'b':
			o.broadcasts = positive("--broadcasts", optarg, false);
			break;
		case 'h':
			help(about, roles);
			exit(0);
		default:
			usage_error("%s", "unknown option");
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.role)
		usage_error("%s", "no --role");
	if (o.role != METHODS_ROLE_BROADCAST && !have_method)
		usage_error("%s", "no --method");
	if (o.role != METHODS_ROLE_INPROCESS && !o.address)
		usage_error("%s", "no --address");
	if ((o.role & (METHODS_ROLE_CLIENT | METHODS_ROLE_INPROCESS)) && !o.calls)
		usage_error("%s", "no --calls");
	if (o.role == METHODS_ROLE_BROADCAST && (!o.subscribers || !o.broadcasts))
		usage_error("%s", "--role broadcast needs --subscribers and --broadcasts");
	if (o.warmup < 0)
		o.warmup = o.calls / 10;
	*ret = o;
}

int64_t methods_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void methods_copy_args_for_call(long call, struct methods_copy_args *ret)
{
	ret->i = (int32_t)call;
	ret->d[0] = (double)call;
	ret->d[1] = (double)call + 0.25;
	ret->d[2] = (double)call * 0.5;
	ret->d[3] = -(double)call;
	ret->u = ~(uint32_t)call;
}

bool methods_copy_args_equal(const struct methods_copy_args *a, const struct methods_copy_args *b)
{
	return a->i == b->i && a->d[0] == b->d[0] && a->d[1] == b->d[1] && a->d[2] == b->d[2] &&
	       a->d[3] == b->d[3] && a->u == b->u;
}

/* The wire is little-endian, as parambus's frames are; the copies below
 * assume the machine is too (a big-endian port would swap here). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "methods-common.c encodes the copy arguments for a little-endian machine only"
#endif
_Static_assert(sizeof(int32_t) + 4 * sizeof(double) + sizeof(uint32_t) == METHODS_COPY_SIZE,
	       "the copy method's arguments are 40 bytes");

void methods_copy_args_encode(const struct methods_copy_args *args, unsigned char *ret_bytes)
{
	memcpy(ret_bytes, &args->i, 4);
	memcpy(ret_bytes + 4, args->d, 32);
	memcpy(ret_bytes + 36, &args->u, 4);
}

void methods_copy_args_decode(const unsigned char *bytes, struct methods_copy_args *ret)
{
	memcpy(&ret->i, bytes, 4);
	memcpy(ret->d, bytes + 4, 32);
	memcpy(&ret->u, bytes + 36, 4);
}

const char *methods_method_name(enum methods_method method)
{
	return method == METHODS_METHOD_COPY ? "copy" : "empty";
}

void methods_print_ready(void)
{
	printf("{\"ready\": true}\n");
	fflush(stdout);
}

void methods_print_calls(const char *contender, const struct methods_options *opts,
			 int64_t elapsed_ns)
{
	printf("{\"contender\": \"%s\", \"role\": \"%s\", \"method\": \"%s\", \"calls\": %ld, "
	       "\"ns_per_call\": %.1f}\n",
	       contender, opts->role == METHODS_ROLE_INPROCESS ? "inprocess" : "client",
	       methods_method_name(opts->method), opts->calls,
	       (double)elapsed_ns / (double)opts->calls);
	fflush(stdout);
}

void methods_print_broadcast(const char *contender, const struct methods_options *opts,
			     double p50_us, double p99_us)
{
	printf("{\"contender\": \"%s\", \"role\": \"broadcast\", \"subscribers\": %ld, "
	       "\"broadcasts\": %ld, \"p50_us\": %.2f, \"p99_us\": %.2f}\n",
	       contender, opts->subscribers, opts->broadcasts, p50_us, p99_us);
	fflush(stdout);
}
