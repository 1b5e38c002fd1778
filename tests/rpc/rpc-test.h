/* SPDX-License-Identifier: MIT */
/*
 * rpc-test.h: what the method tests share (test-runtime.c,
 * test-generated.c): a server in a child process, started ready and
 * killed for sure; a loop run in a thread; waiting for a condition with a
 * deadline. Header only, with pbus-check.h and pbus-testd.h.
 */
#ifndef PBUS_RPC_TEST_H
#define PBUS_RPC_TEST_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <parambus/rpc.h>

#include "pbus-testd.h"

#define RPC_TEST_WAIT_MS 5000

/* Wait until @cond holds, up to 5 s, dispatching nothing (a loop thread
 * does); its value then. */
#define WAIT_FOR(cond)                                                                   \
	({                                                                               \
		int64_t until_ = pbus_testd_now_ms() + RPC_TEST_WAIT_MS;                  \
		while (!(cond) && pbus_testd_now_ms() < until_)                          \
			usleep(2000);                                                    \
		(cond);                                                                  \
	})

/*
 * A server process: @serve(loop, arg) makes its stub on @loop (true once
 * registered, false with pbus_rpc_last_error() set); the child then runs
 * the loop until killed, and dies with the test. Returns its pid once it
 * serves, or -1.
 */
static inline pid_t rpc_test_spawn(bool (*serve)(struct pbus_loop *loop, const void *arg), const void *arg)
{
	int ready[2];
	char ch;
	pid_t pid;

	if (pipe(ready) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct pbus_loop *loop;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		if (pbus_loop_new(&loop) < 0)
			_exit(2);
		if (!serve(loop, arg)) {
			fprintf(stderr, "server: %s\n", pbus_rpc_last_error());
			_exit(3);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pbus_loop_run(loop);
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &ch, 1) != 1) {
		close(ready[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	return pid;
}

static inline void rpc_test_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* A thread that runs @loop (struct pbus_loop *) until pbus_loop_quit(). */
static inline void *rpc_test_loop_thread(void *loop)
{
	pbus_loop_run(loop);
	return NULL;
}

#endif
