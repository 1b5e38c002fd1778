/* SPDX-License-Identifier: MIT */
/*
 * pbus-testd.h: a real pbusd for the C tests that need one: a temporary
 * directory with its socket and state directories, pbusd started on a
 * schema and waited for (READY=1 on --notify-fd), stopped with a signal
 * and reaped, everything removed at the end.
 *
 *     struct pbus_testd d;
 *     pbus_testd_init(&d, pbusd_path, "rpc");     the directories
 *     pbus_testd_start(&d, schema, NULL);        pbusd, ready
 *     ... PBUS_SOCKET_DIR is d.socket_dir ...
 *     pbus_testd_stop(&d, SIGTERM);  pbus_testd_cleanup(&d);
 *
 * pbusd dies with the test (PR_SET_PDEATHSIG). pbus_testd_watchdog()
 * ends a test that hangs with one FAIL line. Header only, like
 * pbus-check.h; one thread.
 */
#ifndef PBUS_TESTD_H
#define PBUS_TESTD_H

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PBUS_TESTD_WAIT_MS 5000

struct pbus_testd {
	const char *pbusd;
	char dir[256], socket_dir[300], state_dir[300], log[300];
	char instance[64];
	pid_t pid;
};

static inline int64_t pbus_testd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A temporary directory for instance @instance of @pbusd (the binary). */
static inline bool pbus_testd_init(struct pbus_testd *d, const char *pbusd, const char *instance)
{
	memset(d, 0, sizeof *d);
	d->pbusd = pbusd;
	d->pid = -1;
	snprintf(d->instance, sizeof d->instance, "%s", instance);
	snprintf(d->dir, sizeof d->dir, "/tmp/pbus-test-%s-XXXXXX", instance);
	if (!mkdtemp(d->dir))
		return false;
	chmod(d->dir, 0755);
	snprintf(d->socket_dir, sizeof d->socket_dir, "%s/sock", d->dir);
	snprintf(d->state_dir, sizeof d->state_dir, "%s/state", d->dir);
	snprintf(d->log, sizeof d->log, "%s/pbusd.log", d->dir);
	return mkdir(d->socket_dir, 0755) == 0 && mkdir(d->state_dir, 0755) == 0;
}

/* Start pbusd on @schema with @extra options (NULL-terminated, or NULL)
 * and wait until it is ready. */
static inline bool pbus_testd_start(struct pbus_testd *d, const char *schema, const char *const *extra)
{
	char fd_text[16], buf[64];
	int fds[2];
	size_t got = 0;
	int64_t deadline = pbus_testd_now_ms() + PBUS_TESTD_WAIT_MS;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return false;
	snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int log = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		const char *args[40] = {d->pbusd, "--schema", schema, "--instance", d->instance,
					"--state-dir", d->state_dir, "--socket-dir", d->socket_dir,
					"--notify-fd", fd_text, "--no-hardware"};
		int n = 12;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (log >= 0) {
			dup2(log, STDOUT_FILENO);
			dup2(log, STDERR_FILENO);
		}
		fcntl(fds[1], F_SETFD, 0);
		for (int i = 0; extra && extra[i] && n < 39; i++)
			args[n++] = extra[i];
		args[n] = NULL;
		execv(d->pbusd, (char *const *)args);
		_exit(127);
	}
	close(fds[1]);
	d->pid = pid;
	while (got < sizeof buf - 1) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int64_t left = deadline - pbus_testd_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = read(fds[0], buf + got, sizeof buf - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = 0;
		if (strstr(buf, "READY=1\n")) {
			close(fds[0]);
			return true;
		}
	}
	close(fds[0]);
	printf("  pbusd did not become ready (log: %s)\n", d->log);
	return false;
}

/* Stop pbusd with @sig (SIGKILL after 5 s) and reap it. */
static inline void pbus_testd_stop(struct pbus_testd *d, int sig)
{
	int64_t deadline = pbus_testd_now_ms() + PBUS_TESTD_WAIT_MS;
	int status;

	if (d->pid <= 0)
		return;
	kill(d->pid, sig);
	while (waitpid(d->pid, &status, WNOHANG) == 0) {
		struct timespec ts = {0, 10 * 1000000};

		if (pbus_testd_now_ms() > deadline) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			break;
		}
		nanosleep(&ts, NULL);
	}
	d->pid = -1;
}

static inline int pbus_testd_remove_(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The watchdog's: what it prints and whom it kills. */
static const char *pbus_testd_watchdog_suite_;
static struct pbus_testd *pbus_testd_watchdog_daemon_;

static inline void pbus_testd_on_alarm_(int sig)
{
	static const char tail[] = "/watchdog: no end within the time limit\n";
	const char *suite = pbus_testd_watchdog_suite_;
	ssize_t r;

	(void)sig;
	r = write(STDOUT_FILENO, "FAIL: ", 6);
	r = write(STDOUT_FILENO, suite, strlen(suite));
	r = write(STDOUT_FILENO, tail, sizeof tail - 1);
	(void)r;
	if (pbus_testd_watchdog_daemon_ && pbus_testd_watchdog_daemon_->pid > 0)
		kill(pbus_testd_watchdog_daemon_->pid, SIGKILL);
	_exit(1);
}

/* A test of @suite that has not ended after @seconds prints "FAIL:
 * <suite>/watchdog: ...", kills @d's pbusd (may be NULL) and exits 1.
 * Also ignores SIGPIPE (a peer that went away is an error return). */
static inline void pbus_testd_watchdog(const char *suite, struct pbus_testd *d, unsigned seconds)
{
	struct sigaction sa;

	pbus_testd_watchdog_suite_ = suite;
	pbus_testd_watchdog_daemon_ = d;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pbus_testd_on_alarm_;
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
	signal(SIGPIPE, SIG_IGN);
}

/* Stop pbusd and remove the directory. */
static inline void pbus_testd_cleanup(struct pbus_testd *d)
{
	pbus_testd_stop(d, SIGTERM);
	if (d->dir[0])
		nftw(d->dir, pbus_testd_remove_, 16, FTW_DEPTH | FTW_PHYS);
	d->dir[0] = 0;
}

#endif
