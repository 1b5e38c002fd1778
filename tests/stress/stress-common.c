/* SPDX-License-Identifier: MIT */
/*
 * stress-common.c: the harness of the stress tests (see stress-common.h).
 *
 * Cleanup must happen even when a test dies (a failed assert, a sanitizer
 * abort, the watchdog, ctest killing it): so it is done twice, by the test
 * at its end and by a janitor, a forked process that blocks reading a pipe
 * whose only writer is the test. When the test is gone for any reason the
 * read returns EOF, and the janitor kills the children listed in shared
 * memory and removes the listed shared-memory objects and directories.
 * Children also die with the test through PR_SET_PDEATHSIG.
 */
#include "stress-common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 256
#define MAX_INSTANCES 16
#define MAX_DIRS 16

struct janitor_page {
	pid_t pids[MAX_PIDS];
	char instances[MAX_INSTANCES][72];
	char dirs[MAX_DIRS][256];
};

static struct janitor_page *janitor;
static pid_t janitor_pid = -1, main_pid;
static int janitor_fd = -1;
static const char *binary_name = "stress";

/* --- Results ---------------------------------------------------------------- */

void stress_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* --- Cleanup ---------------------------------------------------------------- */

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			char p[512];

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(path);
}

void stress_remove_instance_files(const char *instance)
{
	char prefix[96];
	size_t n;
	DIR *d;
	struct dirent *e;

	snprintf(prefix, sizeof(prefix), "pbus.%s", instance);
	n = strlen(prefix);
	d = opendir("/dev/shm");
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, prefix, n) && (e->d_name[n] == 0 || e->d_name[n] == '.')) {
			char p[512];

			snprintf(p, sizeof(p), "/dev/shm/%s", e->d_name);
			unlink(p);
		}
	}
	closedir(d);
}

static void cleanup_all(bool reap)
{
	for (int i = 0; i < MAX_PIDS; i++) {
		pid_t pid = janitor->pids[i];

		if (pid > 0) {
			kill(pid, SIGKILL);
			if (reap)
				waitpid(pid, NULL, 0);
			janitor->pids[i] = 0;
		}
	}
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (janitor->instances[i][0])
			stress_remove_instance_files(janitor->instances[i]);
	for (int i = 0; i < MAX_DIRS; i++)
		if (janitor->dirs[i][0])
			remove_dir(janitor->dirs[i]);
}

static void janitor_main(int fd)
{
	char c;

	prctl(PR_SET_NAME, "stress-janitor");
	while (read(fd, &c, 1) != 0) {
		if (errno == EINTR)
			continue;
		break;
	}
	/* The test is gone (EOF), or told us to go: its children were
	 * reparented, so they cannot be reaped here; killing them is enough. */
	cleanup_all(false);
	_exit(0);
}

static void watchdog(int sig)
{
	char msg[256];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "FAIL: stress/%s: watchdog: the test did not finish in time\n",
		     pbus_check_state.in_case ? pbus_check_state.name : binary_name);
	if (n > 0)
		(void)!write(STDOUT_FILENO, msg, (size_t)n);
	_exit(1);
}

void stress_track_pid(pid_t pid)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (janitor->pids[i] == 0) {
			janitor->pids[i] = pid;
			return;
		}
}

void stress_untrack_pid(pid_t pid)
{
	for (int i = 0; i < MAX_PIDS; i++)
		if (janitor->pids[i] == pid)
			janitor->pids[i] = 0;
}

void stress_track_instance(const char *instance)
{
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (janitor->instances[i][0] == 0) {
			snprintf(janitor->instances[i], sizeof(janitor->instances[i]), "%s", instance);
			return;
		}
}

static char *track_dir(const char *path)
{
	for (int i = 0; i < MAX_DIRS; i++)
		if (janitor->dirs[i][0] == 0) {
			snprintf(janitor->dirs[i], sizeof(janitor->dirs[i]), "%s", path);
			return janitor->dirs[i];
		}
	fprintf(stderr, "too many temporary directories\n");
	exit(1);
}

void stress_track_dir(const char *path)
{
	track_dir(path);
}

char *stress_make_temp_dir(const char *tag)
{
	char path[256];
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/pbus-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	if (!mkdtemp(path)) {
		perror("mkdtemp");
		exit(1);
	}
	/* The janitor's copy lives as long as the test. */
	return track_dir(path);
}

void stress_child_init(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != main_pid)
		_exit(1); /* the test died before we set the death signal */
	signal(SIGALRM, SIG_DFL);
	/* Only the test itself holds the janitor's pipe: its EOF means the
	 * test is gone. */
	if (janitor_fd >= 0) {
		close(janitor_fd);
		janitor_fd = -1;
	}
}

int stress_exit(void)
{
	fflush(stdout);
	cleanup_all(true);
	if (janitor_fd >= 0) {
		close(janitor_fd);
		waitpid(janitor_pid, NULL, 0);
	}
	return pbus_check_exit();
}

/* --- Options ---------------------------------------------------------------- */

static const char *self_relative(const char *rel)
{
	static char buf[PATH_MAX + 64];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(buf, sizeof(buf), "%s/%s", exe, rel);
	return access(buf, F_OK) == 0 ? buf : NULL;
}

void stress_init(const char *binary, int argc, char **argv, double default_seconds,
		 double watchdog_s, struct stress_options *ret)
{
	static const struct option longopts[] = {
		{"seconds", required_argument, NULL, 's'},
		{"scale", required_argument, NULL, 'x'},
		{"pbusd", required_argument, NULL, 'p'},
		{"fixtures", required_argument, NULL, 'f'},
		{"seed", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *env = getenv("PBUS_STRESS_SCALE");
	double seconds = -1;
	int c, fds[2];

	binary_name = binary;
	pbus_check_suite("stress");
	memset(ret, 0, sizeof(*ret));
	ret->scale = env && *env ? strtod(env, NULL) : 1.0;
	ret->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': seconds = strtod(optarg, NULL); break;
		case 'x': ret->scale = strtod(optarg, NULL); break;
		case 'p': ret->pbusd = optarg; break;
		case 'f': ret->fixtures = optarg; break;
		case 'r': ret->seed = strtoull(optarg, NULL, 0); break;
		case 'h':
			printf("Usage: %s [--seconds S] [--scale F] [--pbusd PATH] [--fixtures DIR] [--seed N]\n"
			       "PBUS_STRESS_SCALE=F scales durations and round counts (default 1).\n",
			       binary);
			exit(0);
		default:
			exit(2);
		}
	}
	if (!(ret->scale > 0))
		ret->scale = 1.0;
	ret->seconds = seconds > 0 ? seconds : default_seconds * ret->scale;
	if (!ret->pbusd)
		ret->pbusd = getenv("PBUS_PBUSD");
#ifdef PBUS_STRESS_PBUSD
	if (!ret->pbusd && access(PBUS_STRESS_PBUSD, X_OK) == 0)
		ret->pbusd = PBUS_STRESS_PBUSD;
#endif
	if (!ret->pbusd)
		ret->pbusd = self_relative("../../daemon/pbusd");
	if (!ret->fixtures)
		ret->fixtures = getenv("PBUS_STRESS_FIXTURES");
#ifdef PBUS_STRESS_FIXTURES
	if (!ret->fixtures)
		ret->fixtures = PBUS_STRESS_FIXTURES;
#endif
	if (!ret->fixtures)
		ret->fixtures = ".";

	main_pid = getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);
	janitor = stress_shared_alloc(sizeof(*janitor));
	if (pipe2(fds, O_CLOEXEC) < 0) {
		perror("pipe2");
		exit(1);
	}
	fflush(stdout);
	janitor_pid = fork();
	if (janitor_pid < 0) {
		perror("fork");
		exit(1);
	}
	if (janitor_pid == 0) {
		close(fds[1]);
		janitor_main(fds[0]);
	}
	close(fds[0]);
	janitor_fd = fds[1];
	signal(SIGALRM, watchdog);
	alarm((unsigned)(watchdog_s + ret->seconds * 3 + 0.5));
}

unsigned stress_scaled(const struct stress_options *o, unsigned count, unsigned minimum)
{
	double v = count * o->scale;

	return v < minimum ? minimum : (unsigned)(v + 0.5);
}

/* --- Processes -------------------------------------------------------------- */

pid_t stress_fork(int (*fn)(void *arg), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		stress_child_init();
		_exit(fn(arg));
	}
	stress_track_pid(pid);
	return pid;
}

const char *stress_status_text(int status)
{
	static char buf[64];

	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by %s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "signal");
	else
		snprintf(buf, sizeof(buf), "status 0x%x", status);
	return buf;
}

int stress_wait_pid(pid_t pid, double timeout_s, int *ret_status)
{
	int64_t deadline = stress_now_ns() + (int64_t)(timeout_s * 1e9);
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			if (pidfd >= 0)
				close(pidfd);
			stress_untrack_pid(pid);
			if (ret_status)
				*ret_status = status;
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			if (pidfd >= 0)
				close(pidfd);
			return -errno;
		}
		int64_t left = deadline - stress_now_ns();

		if (left <= 0) {
			if (pidfd >= 0)
				close(pidfd);
			return -ETIMEDOUT;
		}
		if (pidfd >= 0) {
			/* The pidfd becomes readable when the process exits. */
			struct pollfd p = {.fd = pidfd, .events = POLLIN};

			poll(&p, 1, (int)(left / STRESS_NS_PER_MS) + 1);
		} else {
			stress_sleep_ns(STRESS_NS_PER_MS); /* no pidfd: poll the child */
		}
	}
}

const char *stress_proc_where(pid_t pid)
{
	static char text[512];
	char path[64], buf[4096], state = '?', wchan[128] = "?";
	size_t used;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f)) {
			const char *close_paren = strrchr(buf, ')');

			if (close_paren && close_paren[1] == ' ')
				state = close_paren[2];
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (!fgets(wchan, sizeof(wchan), f))
			snprintf(wchan, sizeof(wchan), "?");
		fclose(f);
	}
	used = (size_t)snprintf(text, sizeof(text), "state %c, wchan %s", state, wchan);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	if ((f = fopen(path, "r"))) {
		/* Lines "[<0>] function+0x1f/0x40". */
		for (int k = 0; k < 6 && used < sizeof(text) - 1 && fgets(buf, sizeof(buf), f); k++) {
			char *fn = strchr(buf, ' '), *end;

			if (!fn)
				break;
			fn++;
			end = strpbrk(fn, "+\n");
			if (end)
				*end = 0;
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s",
						 k == 0 ? ", kernel: " : " < ", fn);
		}
		fclose(f);
	}
	return text;
}

int stress_kill_wait(pid_t pid)
{
	int status = 0;

	if (pid <= 0)
		return 0;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	stress_untrack_pid(pid);
	return status;
}

int stress_terminate(pid_t pid, double timeout_s)
{
	int status = 0;

	if (pid <= 0)
		return 0;
	kill(pid, SIGTERM);
	if (stress_wait_pid(pid, timeout_s, &status) == 0)
		return status;
	return stress_kill_wait(pid);
}

pid_t stress_pbusd_start(const struct stress_options *o, const char *schema,
			 const char *instance, const char *state_dir, const char *log_path,
			 const char *const *extra, double timeout_s, int *ret_status)
{
	char fdtext[16], buf[64];
	const char *argv[32];
	int fds[2], argc = 0;
	size_t got = 0;
	int64_t deadline = stress_now_ns() + (int64_t)(timeout_s * 1e9);
	pid_t pid;

	if (!o->pbusd) {
		fprintf(stderr, "pbusd not found: pass --pbusd PATH or set PBUS_PBUSD\n");
		exit(1);
	}
	stress_track_instance(instance);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != main_pid)
			_exit(127);
		fcntl(fds[1], F_SETFD, 0);
		if (log_path) {
			int lfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

			if (lfd >= 0)
				dup2(lfd, STDERR_FILENO);
		}
		snprintf(fdtext, sizeof(fdtext), "%d", fds[1]);
		argv[argc++] = o->pbusd;
		argv[argc++] = "--schema";
		argv[argc++] = schema;
		argv[argc++] = "--instance";
		argv[argc++] = instance;
		argv[argc++] = "--state-dir";
		argv[argc++] = state_dir;
		argv[argc++] = "--notify-fd";
		argv[argc++] = fdtext;
		for (int i = 0; extra && extra[i] && argc < 30; i++)
			argv[argc++] = extra[i];
		argv[argc] = NULL;
		execv(o->pbusd, (char *const *)argv);
		_exit(127);
	}
	stress_track_pid(pid);
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int64_t left = deadline - stress_now_ns();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)(left / STRESS_NS_PER_MS) + 1) == 0) {
			close(fds[0]);
			if (ret_status)
				*ret_status = stress_kill_wait(pid);
			return -2;
		}
		n = read(fds[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF: pbusd exited (or closed the fd without READY) */
		got += (size_t)n;
		buf[got] = 0;
		if (strstr(buf, "READY=1\n")) {
			close(fds[0]);
			return pid;
		}
		if (got >= sizeof(buf) - 1)
			break;
	}
	close(fds[0]);
	{
		int status = 0;

		if (stress_wait_pid(pid, timeout_s, &status) < 0)
			status = stress_kill_wait(pid);
		if (ret_status)
			*ret_status = status;
	}
	return -1;
}

/* --- Shared memory, futexes, time ------------------------------------------- */

void *stress_shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int stress_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / STRESS_NS_PER_S;
		ts.tv_nsec = timeout_ns % STRESS_NS_PER_S;
		tsp = &ts;
	}
	/* Shared futex: the word is in MAP_SHARED memory of several processes. */
	if (syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, NULL, 0) < 0 &&
	    errno == ETIMEDOUT)
		return -ETIMEDOUT;
	return 0;
}

void stress_futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int stress_wait_at_least(uint32_t *word, uint32_t target, int64_t timeout_ns)
{
	int64_t deadline = stress_now_ns() + timeout_ns;

	for (;;) {
		uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		int64_t left;

		if (v >= target)
			return 0;
		left = deadline - stress_now_ns();
		if (left <= 0)
			return -ETIMEDOUT;
		stress_futex_wait(word, v, left);
	}
}

void stress_add_wake(uint32_t *word, uint32_t n)
{
	__atomic_fetch_add(word, n, __ATOMIC_RELEASE);
	stress_futex_wake(word);
}

int64_t stress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * STRESS_NS_PER_S + ts.tv_nsec;
}

int64_t stress_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * STRESS_NS_PER_S + ts.tv_nsec;
}

void stress_sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / STRESS_NS_PER_S), (long)(ns % STRESS_NS_PER_S)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void stress_rng_seed(struct stress_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t stress_rng_next(struct stress_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

uint64_t stress_rng_range(struct stress_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + stress_rng_next(r) % (hi - lo + 1);
}

char *stress_read_file(const char *path, size_t *ret_length)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *d;

			cap = (n + 4096 + 1) * 2;
			d = realloc(data, cap);
			if (!d) {
				free(data);
				fclose(f);
				return NULL;
			}
			data = d;
		}
		size_t got = fread(data + n, 1, 4096, f);

		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	data[n] = 0;
	if (ret_length)
		*ret_length = n;
	return data;
}

bool stress_file_contains(const char *path, const char *needle)
{
	char *data = stress_read_file(path, NULL);
	bool found = data && strstr(data, needle);

	free(data);
	return found;
}
