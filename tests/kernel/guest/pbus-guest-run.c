/*
 * pbus-guest-run: run one test binary inside the kernel test VM.
 *
 *   pbus-guest-run TIMEOUT NAME PATH
 *
 * The guest's init calls this once per test binary. It runs PATH in its own
 * process group with stdin on /dev/null and stdout+stderr on a pipe, prefixes
 * every line it prints with a marker the host runner recognises among the
 * kernel's console messages, kills the whole group at the time limit (and
 * any leftovers once the binary has exited, so nothing leaks into the next
 * binary), and finally scans the kernel log written meanwhile for warnings
 * and oopses. Protocol lines, one per line on stdout (the console):
 *
 *   @@PBUS@@ start NAME
 *   @@PBUS@@ out NAME <line the binary printed>
 *   @@PBUS@@ dmesg NAME <suspicious kernel log line>
 *   @@PBUS@@ end NAME exit=N | signal=N | timeout=SECONDS
 *
 * Kernel log lines already present when it starts are reported under the
 * name "setup" (they come from the environment reset before the binary).
 *
 * A separate C program rather than shell because a shell cannot wait for a
 * child with a deadline, kill its process group and keep reading its output
 * at the same time without leaking the pipe to stray sleepers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARK "@@PBUS@@"

static const char *const bad_patterns[] = {
	"WARNING:", "BUG:", "Oops", "KASAN", "UBSAN", "general protection fault",
	"Call Trace", "kernel BUG", "refcount_t", "list_add corruption",
	"list_del corruption", "hung_task", "soft lockup", "INFO: task",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void scan_klog(const char *name)
{
	static char buf[1 << 20];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, (int)sizeof(buf) - 1);
	char *line, *save = NULL;

	if (n <= 0)
		return;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (size_t i = 0; i < sizeof(bad_patterns) / sizeof(bad_patterns[0]); i++) {
			if (strstr(line, bad_patterns[i])) {
				/* Drop the "<level>[ timestamp] " prefix. */
				char *text = line[0] == '<' && strstr(line, "] ") ? strstr(line, "] ") + 2 : line;

				printf(MARK " dmesg %s %s\n", name, text);
				break;
			}
		}
	}
	fflush(stdout);
	klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
}

static void emit_lines(const char *name, char *buf, size_t *len, int flush_all)
{
	size_t start = 0;

	for (size_t i = 0; i < *len; i++) {
		if (buf[i] == '\n' || buf[i] == '\r') {
			if (i > start)
				printf(MARK " out %s %.*s\n", name, (int)(i - start), buf + start);
			start = i + 1;
		}
	}
	if (flush_all && *len > start) {
		printf(MARK " out %s %.*s\n", name, (int)(*len - start), buf + start);
		start = *len;
	}
	memmove(buf, buf + start, *len - start);
	*len -= start;
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static char buf[8192];
	size_t len = 0;
	int pfd[2], status = 0, exited = 0, timed_out = 0, eof = 0;
	double timeout, deadline, grace = 0;
	const char *name;
	char tbuf[32];
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: pbus-guest-run TIMEOUT NAME PATH\n");
		return 2;
	}
	timeout = atof(argv[1]);
	name = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);

	scan_klog("setup");
	printf(MARK " start %s\n", name);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		printf(MARK " out %s pbus-guest-run: pipe: %s\n", name, strerror(errno));
		printf(MARK " end %s exit=127\n", name);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		printf(MARK " out %s pbus-guest-run: fork: %s\n", name, strerror(errno));
		printf(MARK " end %s exit=127\n", name);
		return 1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		if (chdir("/suite") < 0)
			_exit(127);
		snprintf(tbuf, sizeof(tbuf), "%g", timeout);
		setenv("PBUS_KERNEL_VM", "1", 1);
		setenv("PBUS_TEST_TIMEOUT", tbuf, 1);
		setenv("PATH", "/usr/bin:/bin:/usr/sbin:/sbin", 1);
		setenv("HOME", "/root", 1);
		execl(argv[3], argv[3], (char *)NULL);
		fprintf(stderr, "pbus-guest-run: exec %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	deadline = now() + timeout;

	for (;;) {
		if (!eof) {
			struct pollfd p = { .fd = pfd[0], .events = POLLIN };

			if (poll(&p, 1, 50) > 0) {
				ssize_t n = read(pfd[0], buf + len, sizeof(buf) - 1 - len);

				if (n > 0) {
					len += (size_t)n;
					emit_lines(name, buf, &len, len == sizeof(buf) - 1);
				} else if (n == 0 || errno != EINTR) {
					eof = 1;
				}
			}
		} else {
			usleep(10000);
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			grace = now() + 1.0;	/* leftovers may still hold the pipe */
		}
		if (!exited && now() > deadline) {
			timed_out = 1;
			kill(-pid, SIGKILL);
			for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) != pid; i++)
				usleep(100000);
			exited = 1;
			grace = now() + 0.5;
		}
		if (exited && (eof || now() > grace))
			break;
	}
	kill(-pid, SIGKILL);
	emit_lines(name, buf, &len, 1);
	if (timed_out)
		printf(MARK " end %s timeout=%g\n", name, timeout);
	else if (WIFSIGNALED(status))
		printf(MARK " end %s signal=%d\n", name, WTERMSIG(status));
	else
		printf(MARK " end %s exit=%d\n", name, WEXITSTATUS(status));
	fflush(stdout);
	usleep(20000);	/* let the kernel log catch up with a late oops */
	scan_klog(name);
	return 0;
}
