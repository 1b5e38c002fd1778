/* SPDX-License-Identifier: MIT */
/*
 * server.c: the Calculator's server (calculator.fidl), the server half of
 * the Common API C example, on parambus. The application writes one
 * function per method and hands them over in a struct
 * calc_server_Calculator_impl; the generated stub (calculator-rpc.c)
 * decodes the calls, runs the functions in the loop thread and encodes the
 * replies. The server registers its address with the pbusd of the address's
 * instance ("calculator"), which tells the clients where it is; the calls
 * themselves come straight to this process.
 *
 * The loop is embedded, not run: its one descriptor, pbus_loop_fd(), is
 * polled beside a signalfd of SIGINT and SIGTERM, so a signal ends the
 * program between two dispatch rounds and nothing runs in a signal handler
 * (pbus_loop_quit() is an atomic store and a write() to an eventfd, which
 * a handler could do, but rpc.h promises it to threads and callbacks, not
 * to signal handlers).
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
#include <unistd.h>

#include <parambus/rpc.h>

#include "calculator-rpc.h"

#define PROGRAM "calculator-server"
#define DEFAULT_ADDRESS "local:calculator:org.test.Calculator"

/* What the server remembers between calls (its userdata). */
struct calculator {
	double result;  /* the last result, broadcast as resultChanged */
	bool verbose;   /* print each call */
	unsigned long calls;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROGRAM " [OPTIONS]\n"
		"Serve org.test.Calculator (examples/calculator/calculator.fidl): add,\n"
		"divide (error DIVISION_BY_ZERO), clear (fireAndForget), and the broadcast\n"
		"resultChanged after each add and clear. The address's pbusd must be\n"
		"running (its socket is looked for as pbusd's clients do: $PBUS_SOCKET_DIR,\n"
		"...). SIGINT or SIGTERM stops the server.\n"
		"\n"
		"Options:\n"
		"  -a, --address ADDR  the address served (default " DEFAULT_ADDRESS ")\n"
		"  -v, --verbose       print each call\n"
		"  -h, --help          show this help\n");
}

/* The one line of a failure: the runtime's message when it has one. */
static void print_error(const char *what, int error)
{
	const char *why = pbus_rpc_last_error();

	fprintf(stderr, PROGRAM ": %s: %s\n", what, *why ? why : pbus_strerror(error));
}

static void broadcast_result(struct calc_server_Calculator *server, struct calculator *calc)
{
	int r = calc_server_Calculator_fire_resultChanged(server, calc->result);

	/* A broadcast that fails is the server's problem, not the caller's:
	 * the call still succeeds. */
	if (r < 0)
		print_error("resultChanged", r);
}

static int Calculator_impl_add(struct calc_server_Calculator *server, const struct pbus_caller *caller,
			       double left, double right, double *sum)
{
	struct calculator *calc = calc_server_Calculator_userdata(server);

	*sum = left + right;
	calc->result = *sum;
	calc->calls++;
	if (calc->verbose)
		printf("add(%g, %g) = %g  (from %s, pid %d)\n", left, right, *sum, pbus_caller_name(caller),
		       (int)pbus_caller_pid(caller));
	broadcast_result(server, calc);
	return 0;
}

static int Calculator_impl_divide(struct calc_server_Calculator *server, const struct pbus_caller *caller,
				  double left, double right, enum calc_divide_error *error, double *quotient)
{
	struct calculator *calc = calc_server_Calculator_userdata(server);

	calc->calls++;
	/* The Franca error is part of the reply, not a failed call: return 0. */
	if (right == 0.0) {
		*error = CALC_DIVIDE_ERROR_DIVISION_BY_ZERO;
		*quotient = 0.0;
	} else {
		*error = CALC_DIVIDE_ERROR_OK;
		*quotient = left / right;
	}
	if (calc->verbose) {
		if (*error == CALC_DIVIDE_ERROR_OK)
			printf("divide(%g, %g) = %g", left, right, *quotient);
		else
			printf("divide(%g, %g): DIVISION_BY_ZERO", left, right);
		printf("  (from %s, pid %d)\n", pbus_caller_name(caller), (int)pbus_caller_pid(caller));
	}
	return 0;
}

static int Calculator_impl_clear(struct calc_server_Calculator *server, const struct pbus_caller *caller)
{
	struct calculator *calc = calc_server_Calculator_userdata(server);

	calc->result = 0.0;
	calc->calls++;
	if (calc->verbose)
		printf("clear  (from %s, pid %d)\n", pbus_caller_name(caller), (int)pbus_caller_pid(caller));
	broadcast_result(server, calc);
	return 0; /* fireAndForget: nobody hears it */
}

static const struct calc_server_Calculator_impl impl = {
	.add = &Calculator_impl_add,
	.divide = &Calculator_impl_divide,
	.clear = &Calculator_impl_clear,
};

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"address", required_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *address = DEFAULT_ADDRESS;
	struct calculator calc = {0};
	struct calc_server_Calculator *calculator = NULL;
	struct signalfd_siginfo signal_info;
	struct pollfd fds[2];
	struct pbus_loop *loop;
	sigset_t signals;
	int c, r, signal_fd, status = EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "a:vh", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			address = optarg;
			break;
		case 'v':
			calc.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROGRAM ": unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, into a pipe too */

	/* Blocked before anything else, so that they wait in the signalfd. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &signals, NULL) < 0) {
		fprintf(stderr, PROGRAM ": sigprocmask: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	signal_fd = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
	if (signal_fd < 0) {
		fprintf(stderr, PROGRAM ": signalfd: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	loop = pbus_loop_default();
	if (!loop) {
		fprintf(stderr, PROGRAM ": cannot make the event loop\n");
		goto out;
	}

	r = calc_server_Calculator_new(address, &impl, &calc, &calculator);
	if (r < 0) {
		print_error(address, r);
		goto out;
	}
	printf("serving %s (pid %d)\n", address, (int)getpid());

	fds[0] = (struct pollfd){.fd = pbus_loop_fd(loop), .events = POLLIN};
	fds[1] = (struct pollfd){.fd = signal_fd, .events = POLLIN};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROGRAM ": poll: %s\n", strerror(errno));
			goto out;
		}
		if (fds[1].revents & POLLIN) {
			if (read(signal_fd, &signal_info, sizeof(signal_info)) == (ssize_t)sizeof(signal_info)) {
				printf("%s: stopping after %lu calls\n", strsignal((int)signal_info.ssi_signo),
				       calc.calls);
				break;
			}
		}
		if (fds[0].revents & POLLIN) {
			r = pbus_loop_dispatch(loop, 0);
			if (r < 0) {
				print_error("dispatch", r);
				goto out;
			}
		}
	}
	status = EXIT_SUCCESS;
out:
	/* Unregisters: the clients see the server go at once. */
	calculator = calc_server_Calculator_free(calculator);
	close(signal_fd);
	return status;
}
