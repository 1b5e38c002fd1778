/* SPDX-License-Identifier: MIT */
/* suite.c - the small runner shared by the libparambus-hw kernel tests. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/suite.h"

char suite_msg[512];
int suite_failures;

void suite_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void suite_run(const char *name, const char *(*fn)(void))
{
	const char *m = fn();
	if (m) {
		kenv_fail(name, "%s", m);
		suite_failures++;
	} else {
		kenv_ok(name);
	}
	fflush(stdout);
}

int suite_exit(void)
{
	return suite_failures ? 1 : 0;
}

const char *suite_read(const char *path)
{
	static char buf[65536];
	int r = kenv_read_file(path, buf, sizeof(buf));
	return r < 0 ? NULL : buf;
}

bool suite_file_contains(const char *path, const char *needle)
{
	const char *s = suite_read(path);
	return s && strstr(s, needle);
}

uint64_t suite_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void suite_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int suite_count(const char *haystack, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);
	for (const char *p = haystack; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}

int suite_start_pbusd(const char *schema, const char *instance, const char *state_dir,
		      const char *log_path, const char *const *extra)
{
	char ready[16] = "";
	struct pollfd pfd;
	int fds[2];
	pid_t pid;

	mkdir(state_dir, 0755);
	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		const char *argv[24] = {"pbusd", "--schema", schema, "--instance", instance,
					"--state-dir", state_dir, "--notify-fd"};
		char fd_text[16];
		int n = 9, log = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(log, 1);
		dup2(log, 2);
		close(fds[0]);
		snprintf(fd_text, sizeof(fd_text), "%d", fds[1]);
		argv[8] = fd_text;
		for (int i = 0; extra && extra[i] && n < 23; i++)
			argv[n++] = extra[i];
		argv[n] = NULL;
		execv("/usr/bin/pbusd", (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){.fd = fds[0], .events = POLLIN};
	if (poll(&pfd, 1, 10000) != 1 || read(fds[0], ready, sizeof(ready) - 1) <= 0 ||
	    strcmp(ready, "READY=1\n")) {
		close(fds[0]);
		return -ETIMEDOUT;
	}
	close(fds[0]);
	return pid;
}

int suite_wait_sim_line(const char *chip, unsigned offset, int level, unsigned timeout_ms)
{
	uint64_t end = suite_now_ms() + timeout_ms;

	do {
		if (kenv_sim_get_value(chip, offset) == level)
			return 0;
		suite_sleep_ms(10);
	} while (suite_now_ms() < end);
	return -ETIMEDOUT;
}

int suite_pwm_state(unsigned channel, char *buf, size_t size)
{
	char all[1024], needle[32], *line, *end;

	snprintf(needle, sizeof(needle), "pwm=%u ", channel);
	if (kenv_read_file(SUITE_MOCK_PWM_STATE, all, sizeof(all)) < 0 || !(line = strstr(all, needle)))
		return -ENOENT;
	end = strchr(line, '\n');
	if (end)
		*end = 0;
	snprintf(buf, size, "%s", line);
	return 0;
}

int suite_stop_pbusd(pid_t pid)
{
	int status = -1;

	if (kill(pid, SIGTERM) < 0)
		return -1;
	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		suite_sleep_ms(10);
	}
	return -1;
}
