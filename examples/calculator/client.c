/* SPDX-License-Identifier: MIT */
/*
 * client.c: the Calculator's client (calculator.fidl), the client half of
 * the Common API C example, on parambus. It shows each way of using a
 * generated proxy (calculator-rpc.h):
 *  - a synchronous call (calc_Calculator_add): waits for the reply, reads it
 *    itself, needs nobody to dispatch the loop;
 *  - a method with a Franca error enumeration (calc_Calculator_divide): the
 *    error is an out-argument of a successful call, not a failed call;
 *  - an asynchronous call (calc_Calculator_add_async): returns at once, its
 *    completion runs later in the loop thread (pbus_loop_dispatch());
 *  - a fireAndForget call (calc_Calculator_clear): sent, never answered;
 *  - a broadcast subscription (resultChanged) and the availability callback,
 *    both run in the loop thread; the proxy reconnects and subscribes again
 *    by itself when the server comes back.
 *
 * With --follow the client stays, printing broadcasts and the server's
 * comings and goings, until SIGINT or SIGTERM; the loop's descriptor is
 * polled beside a signalfd (as in server.c).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <parambus/rpc.h>

#include "calculator-rpc.h"

#define PROGRAM "calculator-client"
#define DEFAULT_ADDRESS "local:calculator:org.test.Calculator"

/* What the handlers share with main (all run in this, the loop thread). */
struct session {
	bool async_done;      /* add_async's completion ran */
	int async_result;
	bool clear_sent;      /* clear was sent: its broadcast (0) ends the calls */
	bool clear_seen;
	unsigned long broadcasts;
	unsigned long repeat_print; /* print every Nth broadcast (--repeat) */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROGRAM " [OPTIONS] [LEFT RIGHT]\n"
		"Call the Calculator server (examples/calculator/server.c): add LEFT and\n"
		"RIGHT (default 3.1415 2.7182) synchronously, divide them and divide by\n"
		"zero (the Franca error), add 40 and 2 asynchronously, clear\n"
		"(fireAndForget); print the resultChanged broadcasts and the server's\n"
		"availability as they come.\n"
		"\n"
		"Options:\n"
		"  -a, --address ADDR  the server's address (default " DEFAULT_ADDRESS ")\n"
		"  -w, --wait MS       wait up to MS for the server (default 5000)\n"
		"  -r, --repeat N      then call add N more times (a load; prints every 1000th)\n"
		"  -f, --follow        then keep printing broadcasts and availability until\n"
		"                      SIGINT or SIGTERM\n"
		"  -h, --help          show this help\n"
		"\n"
		"Exit status: 0 when every call went as expected, 1 on an error, 2 on a\n"
		"usage error.\n");
}

/* The one line of a failure: the runtime's message when it has one. */
static void print_error(const char *what, int error)
{
	const char *why = pbus_rpc_last_error();

	fprintf(stderr, PROGRAM ": %s: %s\n", what, *why ? why : pbus_strerror(error));
}

static void on_availability(struct calc_client_Calculator *client, bool available, void *userdata)
{
	(void)client;
	(void)userdata;
	printf("server %s\n", available ? "available" : "unavailable");
}

static void on_result_changed(struct calc_client_Calculator *client, double value, void *userdata)
{
	struct session *s = userdata;

	(void)client;
	s->broadcasts++;
	if (s->repeat_print == 0 || s->broadcasts % s->repeat_print == 0)
		printf("resultChanged: %g\n", value);
	if (s->clear_sent && value == 0.0)
		s->clear_seen = true;
}

static void on_add_reply(struct calc_client_Calculator *client, int result, double sum, void *userdata)
{
	struct session *s = userdata;

	(void)client;
	s->async_done = true;
	s->async_result = result;
	if (result < 0)
		print_error("add_async(40, 2)", result);
	else
		printf("add_async(40, 2) = %g  (completion)\n", sum);
}

static const char *divide_error_name(enum calc_divide_error error)
{
	switch (error) {
	case CALC_DIVIDE_ERROR_OK:
		return "OK";
	case CALC_DIVIDE_ERROR_DIVISION_BY_ZERO:
		return "DIVISION_BY_ZERO";
	}
	return "?";
}

static bool parse_double(const char *text, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(text, &end);
	return errno == 0 && end != text && *end == 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Dispatch until *@done or @timeout_ms passed: 0, -ETIMEDOUT, or the
 * loop's error. */
static int dispatch_until(struct pbus_loop *loop, const bool *done, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	while (!*done) {
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = pbus_loop_dispatch(loop, (int)left);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --follow: the loop's descriptor and a signalfd, until a signal. */
static int follow(struct pbus_loop *loop)
{
	struct signalfd_siginfo info;
	struct pollfd fds[2];
	sigset_t signals;
	int signal_fd, r = 0;

	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
	if (signal_fd < 0) {
		fprintf(stderr, PROGRAM ": signalfd: %s\n", strerror(errno));
		return -errno;
	}
	printf("following (Ctrl-C stops)\n");
	fds[0] = (struct pollfd){.fd = pbus_loop_fd(loop), .events = POLLIN};
	fds[1] = (struct pollfd){.fd = signal_fd, .events = POLLIN};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			fprintf(stderr, PROGRAM ": poll: %s\n", strerror(errno));
			break;
		}
		if ((fds[1].revents & POLLIN) && read(signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info))
			break;
		if (fds[0].revents & POLLIN) {
			r = pbus_loop_dispatch(loop, 0);
			if (r < 0) {
				print_error("dispatch", r);
				break;
			}
			r = 0;
		}
	}
	close(signal_fd);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"address", required_argument, NULL, 'a'},
		{"wait", required_argument, NULL, 'w'},
		{"repeat", required_argument, NULL, 'r'},
		{"follow", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *address = DEFAULT_ADDRESS;
	double left = 3.1415, right = 2.7182, sum, quotient;
	unsigned long repeat = 0;
	int wait_ms = 5000, c, r, status = EXIT_FAILURE;
	bool follow_after = false;
	struct calc_client_Calculator *calculator = NULL;
	enum calc_divide_error error;
	struct session session = {0};
	struct pbus_loop *loop;
	sigset_t signals;
	char *end;

	while ((c = getopt_long(argc, argv, "a:w:r:fh", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			address = optarg;
			break;
		case 'w':
			errno = 0;
			wait_ms = (int)strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || wait_ms < 0) {
				fprintf(stderr, PROGRAM ": --wait: '%s' is not a number of milliseconds\n", optarg);
				return 2;
			}
			break;
		case 'r':
			errno = 0;
			repeat = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr, PROGRAM ": --repeat: '%s' is not a count\n", optarg);
				return 2;
			}
			break;
		case 'f':
			follow_after = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind == 2) {
		if (!parse_double(argv[optind], &left) || !parse_double(argv[optind + 1], &right)) {
			fprintf(stderr, PROGRAM ": LEFT and RIGHT must be numbers\n");
			return 2;
		}
	} else if (argc != optind) {
		fprintf(stderr, PROGRAM ": give LEFT and RIGHT, or neither (--help)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, into a pipe too */
	/* Blocked from the start, for --follow's signalfd. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	if (follow_after)
		sigprocmask(SIG_BLOCK, &signals, NULL);

	loop = pbus_loop_default();
	if (!loop) {
		fprintf(stderr, PROGRAM ": cannot make the event loop\n");
		return EXIT_FAILURE;
	}
	r = calc_client_Calculator_new(address, NULL, &calculator);
	if (r < 0) {
		print_error(address, r);
		return EXIT_FAILURE;
	}
	/* Runs first with the state now, then at each change (in dispatch). */
	calc_client_Calculator_on_availability(calculator, on_availability, NULL);
	r = calc_client_Calculator_wait_available(calculator, wait_ms);
	if (r < 0) {
		print_error("waiting for the server", r);
		goto out;
	}
	/* Subscribed once the server has acknowledged it: every resultChanged
	 * from now on reaches us, and again after a reconnect. */
	r = calc_client_Calculator_subscribe_resultChanged(calculator, on_result_changed, &session);
	if (r < 0) {
		print_error("subscribe resultChanged", r);
		goto out;
	}
	pbus_loop_dispatch(loop, 0); /* the availability callback's first run */

	r = calc_Calculator_add(calculator, left, right, &sum);
	if (r < 0) {
		print_error("add", r);
		goto out;
	}
	printf("add(%g, %g) = %g\n", left, right, sum);

	r = calc_Calculator_divide(calculator, left, right, &error, &quotient);
	if (r < 0) {
		print_error("divide", r);
		goto out;
	}
	if (error == CALC_DIVIDE_ERROR_OK)
		printf("divide(%g, %g) = %g\n", left, right, quotient);
	else
		printf("divide(%g, %g): error %s\n", left, right, divide_error_name(error));
	r = calc_Calculator_divide(calculator, left, 0.0, &error, &quotient);
	if (r < 0) {
		print_error("divide", r);
		goto out;
	}
	printf("divide(%g, 0): error %s\n", left, divide_error_name(error));
	if (error != CALC_DIVIDE_ERROR_DIVISION_BY_ZERO) {
		fprintf(stderr, PROGRAM ": divide by zero: error %s, not DIVISION_BY_ZERO\n",
			divide_error_name(error));
		goto out;
	}

	r = calc_Calculator_add_async(calculator, 40, 2, on_add_reply, &session);
	if (r < 0) {
		print_error("add_async", r);
		goto out;
	}
	printf("add_async(40, 2): sent\n");
	r = dispatch_until(loop, &session.async_done, wait_ms);
	if (r < 0 || session.async_result < 0) {
		if (r < 0)
			print_error("add_async: no completion", r);
		goto out;
	}

	r = calc_Calculator_clear(calculator);
	if (r < 0) {
		print_error("clear", r);
		goto out;
	}
	printf("clear: sent\n");
	/* The server handles one connection's calls in order: the broadcast of
	 * clear (0) comes after those of both adds. */
	session.clear_sent = true;
	r = dispatch_until(loop, &session.clear_seen, wait_ms);
	if (r < 0) {
		print_error("waiting for resultChanged after clear", r);
		goto out;
	}

	if (repeat > 0) {
		session.repeat_print = 1000;
		session.broadcasts = 0;
		for (unsigned long i = 1; i <= repeat; i++) {
			r = calc_Calculator_add(calculator, (double)i, 0.5, &sum);
			if (r < 0) {
				print_error("add", r);
				goto out;
			}
			if (i % 1000 == 0)
				printf("add(%lu, 0.5) = %g\n", i, sum);
			pbus_loop_dispatch(loop, 0); /* the broadcasts, as they come */
		}
	}
	status = EXIT_SUCCESS;
	if (follow_after && follow(loop) < 0)
		status = EXIT_FAILURE;
out:
	calculator = calc_client_Calculator_free(calculator);
	return status;
}
