/* SPDX-License-Identifier: MIT */
/*
 * hwd-supervisor.c: the supervisor of pbus-hwd. pbusd starts pbus-hwd, the
 * runner of the schema's hardware bindings, as a child process once the
 * instance is published, restarts it if it dies (1 s, doubling up to 30 s
 * between attempts), and stops it before the instance goes away. The child
 * gets SIGTERM if pbusd dies (PR_SET_PDEATHSIG), so it never outlives its
 * instance.
 *
 * The report pipe: one pipe for pbusd's life, whose write end every run of
 * pbus-hwd inherits (--report-fd) and whose read end the socket server
 * reads (what pbus-hwd applied: common/hwd-report.h). pbusd keeps the
 * write end open too, so a pbus-hwd that dies is no end of file: its
 * reports stop, and the SETs waiting for them run into their deadline
 * (docs/socket-protocol.md §3.3); the next run reports the values it
 * applies at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pbusd.h"

#define RESTART_FIRST_MS 1000
#define RESTART_MAX_MS 30000
#define STABLE_MS 60000  /* a child that ran this long restarts at once */
#define STOP_GRACE_MS 3000

struct hwd_supervisor {
	char *hwd_path;
	const char *schema_path, *instance;
	pid_t pid;               /* 0 while not running */
	int64_t started_ms, restart_at_ms; /* restart_at_ms 0: none planned */
	unsigned backoff_ms;
	bool given_up;
	int report_read, report_write; /* the report pipe's ends, or -1 */
	char report_fd_text[16];       /* report_write for pbus-hwd's argv */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool hardware_bindings_present(const struct pbus_schema *schema)
{
	for (uint32_t i = 0; i < pbus_schema_param_count(schema); i++)
		if (pbus_schema_param_extra(schema, i, "hw"))
			return true;
	return false;
}

/* pbus-hwd next to our own executable, else whatever PATH finds. */
static char *default_hwd_path(void)
{
	char self[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			if (asprintf(&path, "%s/pbus-hwd", self) < 0)
				return NULL;
			if (access(path, X_OK) == 0)
				return path;
			free(path);
		}
	}
	return strdup("pbus-hwd");
}

static void spawn(struct hwd_supervisor *sv)
{
	pid_t parent = getpid(), pid;
	char cannot_run[PATH_MAX + 64];

	snprintf(cannot_run, sizeof(cannot_run), "pbusd[%d]: error: cannot run %s (exit 127)\n",
		 (int)parent, sv->hwd_path);
	sv->restart_at_ms = 0;
	pid = fork();
	if (pid < 0) {
		log_msg(LOG_ERROR, "cannot start pbus-hwd: %s", strerror(errno));
		sv->restart_at_ms = now_ms() + sv->backoff_ms;
		return;
	}
	if (pid == 0) {
		const char *argv[] = {sv->hwd_path, "--schema", sv->schema_path, "--instance",
				      sv->instance, "--log-level", log_level_name(log_get_level()),
				      sv->report_write >= 0 ? "--report-fd" : NULL, sv->report_fd_text, NULL};
		sigset_t none;

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(0); /* pbusd died before the line above */
		/* The report pipe's write end is the one descriptor it inherits. */
		if (sv->report_write >= 0)
			fcntl(sv->report_write, F_SETFD, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(sv->hwd_path, (char **)argv);
		/* Only async-signal-safe calls here: another thread of pbusd may
		 * have held stdio's lock at the fork. */
		(void)!write(STDERR_FILENO, cannot_run, strlen(cannot_run));
		_exit(127);
	}
	sv->pid = pid;
	sv->started_ms = now_ms();
	log_msg(LOG_INFO, "started pbus-hwd (pid %d) for the hardware bindings", (int)pid);
}

int hwd_supervisor_new(const char *hwd_path, const char *schema_path, const char *instance,
		       bool report, struct hwd_supervisor **ret)
{
	struct hwd_supervisor *sv = calloc(1, sizeof(*sv));
	int fds[2];

	if (!sv)
		return -ENOMEM;
	sv->report_read = sv->report_write = -1;
	sv->hwd_path = hwd_path ? strdup(hwd_path) : default_hwd_path();
	if (!sv->hwd_path) {
		free(sv);
		return -ENOMEM;
	}
	/* Non-blocking at both ends: the server reads until it is empty,
	 * and pbus-hwd never waits for pbusd. */
	if (report) {
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
			int r = -errno;

			free(sv->hwd_path);
			free(sv);
			return r;
		}
		sv->report_read = fds[0];
		sv->report_write = fds[1];
		snprintf(sv->report_fd_text, sizeof(sv->report_fd_text), "%d", fds[1]);
	}
	sv->schema_path = schema_path;
	sv->instance = instance;
	sv->backoff_ms = RESTART_FIRST_MS;
	*ret = sv;
	return 0;
}

int hwd_supervisor_take_report_fd(struct hwd_supervisor *sv)
{
	int fd = sv ? sv->report_read : -1;

	if (sv)
		sv->report_read = -1;
	return fd;
}

void hwd_supervisor_start(struct hwd_supervisor *sv)
{
	spawn(sv);
}

bool hwd_supervisor_given_up(const struct hwd_supervisor *sv)
{
	return sv && sv->given_up;
}

void hwd_supervisor_child_exited(struct hwd_supervisor *sv)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int64_t ran;

		if (!sv || pid != sv->pid)
			continue;
		sv->pid = 0;
		ran = now_ms() - sv->started_ms;
		if (WIFEXITED(status) && (WEXITSTATUS(status) == 1 || WEXITSTATUS(status) == 2)) {
			/* It refused the bindings: restarting cannot help. */
			log_msg(LOG_ERROR, "pbus-hwd refused the hardware bindings (exit %d, see its "
				"message above); the bound parameters stay as they are",
				WEXITSTATUS(status));
			sv->given_up = true;
			continue;
		}
		if (ran >= STABLE_MS)
			sv->backoff_ms = RESTART_FIRST_MS;
		if (WIFSIGNALED(status))
			log_msg(LOG_WARNING, "pbus-hwd (pid %d) died of %s; restarting in %u ms",
				(int)pid, strsignal(WTERMSIG(status)), sv->backoff_ms);
		else
			log_msg(LOG_WARNING, "pbus-hwd (pid %d) exited with status %d; restarting in %u ms",
				(int)pid, WEXITSTATUS(status), sv->backoff_ms);
		sv->restart_at_ms = now_ms() + sv->backoff_ms;
		sv->backoff_ms = sv->backoff_ms * 2 > RESTART_MAX_MS ? RESTART_MAX_MS : sv->backoff_ms * 2;
	}
}

int hwd_supervisor_timeout_ms(const struct hwd_supervisor *sv)
{
	int64_t left;

	if (!sv || !sv->restart_at_ms)
		return -1;
	left = sv->restart_at_ms - now_ms();
	return left < 0 ? 0 : (int)left;
}

void hwd_supervisor_tick(struct hwd_supervisor *sv)
{
	if (sv && sv->restart_at_ms && now_ms() >= sv->restart_at_ms && !sv->pid && !sv->given_up)
		spawn(sv);
}

void hwd_supervisor_stop(struct hwd_supervisor *sv)
{
	int64_t deadline;
	int status;

	if (!sv)
		return;
	if (sv->pid > 0) {
		kill(sv->pid, SIGTERM);
		deadline = now_ms() + STOP_GRACE_MS;
		while (waitpid(sv->pid, &status, WNOHANG) == 0) {
			if (now_ms() >= deadline) {
				log_msg(LOG_WARNING, "pbus-hwd (pid %d) ignores SIGTERM; killing it",
					(int)sv->pid);
				kill(sv->pid, SIGKILL);
				waitpid(sv->pid, &status, 0);
				break;
			}
			usleep(10000);
		}
	}
	if (sv->report_read >= 0)
		close(sv->report_read);
	if (sv->report_write >= 0)
		close(sv->report_write);
	free(sv->hwd_path);
	free(sv);
}
