/* SPDX-License-Identifier: MIT */
/*
 * methods-parambus.c: parambus's contenders in benchmark scenario 3, method
 * calls (../shared/BENCHMARKS.md, docs/benchmarks.md): the proxy and stub
 * that pbus-gen generates from bench/schemas/perf.fidl (interface
 * bench.Perf: methods `empty` and `copy`, broadcast `tick`), on the runtime
 * of parambus/rpc.h, as an application uses them.
 *
 * A stub must register with the pbusd of its address's instance
 * (docs/methods.md §2), so every role that serves starts its own pbusd,
 * the registry, for the instance "bench" with the parameterless schema
 * pbus-gen makes of perf.fidl: in a directory of its own (ADDR for the
 * server and broadcast roles, a temporary one in-process) holding the
 * socket directory sock/ and the state directory state/, with
 * --no-hardware, waited for through --notify-fd, stopped (and the directory
 * removed) when the role ends. pbusd is a child of the role's process,
 * placed where it is, and dies with it (PR_SET_PDEATHSIG); it answers the
 * lookup and watch of the proxies, never a call: calls go straight between
 * proxy and stub over the stub's own socket.
 *
 *   server     serve bench.Perf at local:bench:bench.Perf with the registry
 *              in ADDR (a directory this role makes), both methods whatever
 *              --method says, in pbus_loop_run() until SIGTERM;
 *   client     a proxy of the server whose registry is in ADDR (its socket
 *              directory ADDR/sock), the generated synchronous call N times;
 *              copy's every reply is checked against its call's arguments;
 *   inprocess  stub and proxy in this process, the proxy made after the
 *              stub, so that the generated call runs the server's function
 *              directly (docs/methods.md §6); nobody dispatches the loop,
 *              so a call that went to the socket would time out, and the
 *              server function checks that it runs in the calling thread;
 *   broadcast  a server and S subscriber processes, each with its own proxy
 *              over the socket (in one process they would be in-process):
 *              the server fires B ticks BROADCAST_SPACING_NS apart, each
 *              carrying its CLOCK_MONOTONIC send time (system-wide), every
 *              subscriber records its delay to receive it (in the handler,
 *              in its loop thread); one broadcast's delivery time is the
 *              largest delay among the S subscribers, and p50_us and p99_us
 *              are those of the B delivery times.
 *
 * The command line and output are those of every contender
 * (methods-common.h). PBUSD_PATH and PERF_SCHEMA_PATH (the build's pbusd
 * and perf.pbs) are compiled in; the environment variables PBUS_BENCH_PBUSD
 * and PBUS_BENCH_SCHEMA override them.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/rpc.h>

#include "methods-common.h"
#include "perf-rpc.h"

#define CONTENDER_SOCKET "parambus-socket"
#define CONTENDER_INPROCESS "parambus-inprocess"

#define INSTANCE "bench"
#define ADDRESS "local:" INSTANCE ":bench.Perf"

#define REGISTRY_WAIT_MS 10000
#define AVAILABLE_WAIT_MS 10000
#define BROADCAST_SPACING_NS 2000000LL /* between two ticks: a fan-out to 64 is over by then */
#define SUBSCRIBERS_MAX 1024

/* --- the registry: a pbusd of our own ------------------------------------- */

struct registry {
	char dir[PATH_MAX - 32];
	char socket_dir[PATH_MAX], state_dir[PATH_MAX], log[PATH_MAX];
	pid_t pid;
};

static const char *pbusd_path(void)
{
	const char *p = getenv("PBUS_BENCH_PBUSD");

	return p && *p ? p : PBUSD_PATH;
}

static const char *schema_path(void)
{
	const char *p = getenv("PBUS_BENCH_SCHEMA");

	return p && *p ? p : PERF_SCHEMA_PATH;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The paths of a registry in @dir (ADDR of the server and broadcast roles,
 * the client's way to find its socket directory). */
static void registry_paths(struct registry *r, const char *dir)
{
	if (strlen(dir) >= sizeof r->dir)
		methods_fail(dir, ENAMETOOLONG);
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	snprintf(r->socket_dir, sizeof r->socket_dir, "%s/sock", dir);
	snprintf(r->state_dir, sizeof r->state_dir, "%s/state", dir);
	snprintf(r->log, sizeof r->log, "%s/pbusd.log", dir);
	r->pid = -1;
}

/* Start pbusd for INSTANCE in @dir (made afresh) and wait until it is
 * ready: its READY=1 on --notify-fd. */
static void registry_start(struct registry *r, const char *dir)
{
	char fd_text[16], buf[64];
	size_t got = 0;
	int64_t deadline;
	int fds[2];

	registry_paths(r, dir);
	remove_tree(r->dir); /* a previous run's, if it was killed */
	if (mkdir(r->dir, 0755) < 0 || mkdir(r->socket_dir, 0755) < 0 || mkdir(r->state_dir, 0755) < 0)
		methods_fail(r->dir, errno);
	if (pipe2(fds, O_CLOEXEC) < 0)
		methods_fail("pipe", errno);
	snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
	fflush(NULL);
	r->pid = fork();
	if (r->pid < 0)
		methods_fail("fork", errno);
	if (r->pid == 0) {
		int log = open(r->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (log >= 0) {
			dup2(log, STDOUT_FILENO);
			dup2(log, STDERR_FILENO);
		}
		fcntl(fds[1], F_SETFD, 0);
		execl(pbusd_path(), pbusd_path(), "--schema", schema_path(), "--instance", INSTANCE,
		      "--state-dir", r->state_dir, "--socket-dir", r->socket_dir, "--notify-fd",
		      fd_text, "--no-hardware", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	deadline = methods_now_ns() + REGISTRY_WAIT_MS * 1000000LL;
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int64_t left_ms = (deadline - methods_now_ns()) / 1000000;
		ssize_t n;

		if (left_ms <= 0 || poll(&p, 1, (int)left_ms) <= 0 || got >= sizeof buf - 1)
			break;
		n = read(fds[0], buf + got, sizeof buf - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = 0;
		if (strstr(buf, "READY=1\n")) {
			close(fds[0]);
			return;
		}
	}
	close(fds[0]);
	methods_fail_message("pbusd", "did not become ready (is it built? see its log in ADDR)");
}

/* Stop pbusd, reap it (so that its CPU time counts as this run's) and
 * remove its directory. */
static void registry_stop(struct registry *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
		r->pid = -1;
	}
	remove_tree(r->dir);
}

static struct pbus_rpc_options options_for(const struct registry *r)
{
	return (struct pbus_rpc_options){.socket_dir = r->socket_dir, .name = methods_program};
}

/* --- the server's functions ------------------------------------------------ */

/* In-process, the thread the calls must run in (0: any, a socket server's
 * loop thread). */
static pthread_t calling_thread;
static bool check_thread;

static int serve_empty(struct perf_server_Perf *server, const struct pbus_caller *caller)
{
	(void)server;
	(void)caller;
	if (check_thread && !pthread_equal(pthread_self(), calling_thread))
		return -EXDEV;
	return 0;
}

static int serve_copy(struct perf_server_Perf *server, const struct pbus_caller *caller, int32_t a,
		      double b, double c, double d, double e, uint32_t f, int32_t *a2, double *b2,
		      double *c2, double *d2, double *e2, uint32_t *f2)
{
	(void)server;
	(void)caller;
	if (check_thread && !pthread_equal(pthread_self(), calling_thread))
		return -EXDEV;
	*a2 = a;
	*b2 = b;
	*c2 = c;
	*d2 = d;
	*e2 = e;
	*f2 = f;
	return 0;
}

static const struct perf_server_Perf_impl impl = {.empty = serve_empty, .copy = serve_copy};

/* --- calls ------------------------------------------------------------------- */

/* One call of @opts->method through @client, number @call (copy: its
 * arguments, and the reply checked). */
static inline void call_once(struct perf_client_Perf *client, const struct methods_options *opts,
			     long call)
{
	struct methods_copy_args in, out;
	int r;

	if (opts->method == METHODS_METHOD_EMPTY) {
		r = perf_Perf_empty(client);
		if (r < 0)
			methods_fail_message("empty", pbus_rpc_last_error());
		return;
	}
	methods_copy_args_for_call(call, &in);
	r = perf_Perf_copy(client, in.i, in.d[0], in.d[1], in.d[2], in.d[3], in.u, &out.i, &out.d[0],
			   &out.d[1], &out.d[2], &out.d[3], &out.u);
	if (r < 0)
		methods_fail_message("copy", pbus_rpc_last_error());
	if (!methods_copy_args_equal(&in, &out))
		methods_fail_message("copy", "a reply whose arguments differ from the call's");
}

static void run_calls(const char *contender, struct perf_client_Perf *client,
		      const struct methods_options *opts)
{
	int64_t start;

	for (long i = 0; i < opts->warmup; i++)
		call_once(client, opts, i);
	start = methods_now_ns();
	for (long i = 0; i < opts->calls; i++)
		call_once(client, opts, opts->warmup + i);
	methods_print_calls(contender, opts, methods_now_ns() - start);
}

/* --- roles ----------------------------------------------------------------- */

/* SIGTERM ends pbus_loop_run(): a thread of its own waits for it (the
 * signal is blocked in every other thread) and quits the loop. */
static void *wait_for_sigterm(void *loop)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigwait(&set, &sig);
	pbus_loop_quit(loop);
	return NULL;
}

static int role_server(const struct methods_options *opts)
{
	struct pbus_loop *loop = pbus_loop_default();
	struct perf_server_Perf *server;
	struct pbus_rpc_options options;
	struct registry registry;
	pthread_t waiter;
	sigset_t set;
	int r;

	if (!loop)
		methods_fail("pbus_loop_default", ENOMEM);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	registry_start(&registry, opts->address);
	options = options_for(&registry);
	r = perf_server_Perf_new_with_options(ADDRESS, &impl, NULL, &options, &server);
	if (r < 0) {
		registry_stop(&registry);
		methods_fail_message(ADDRESS, pbus_rpc_last_error()[0] ? pbus_rpc_last_error()
									: strerror(-r));
	}
	if ((r = pthread_create(&waiter, NULL, wait_for_sigterm, loop)) != 0)
		methods_fail("pthread_create", r);
	methods_print_ready();
	r = pbus_loop_run(loop);
	perf_server_Perf_free(server);
	registry_stop(&registry);
	pthread_join(waiter, NULL);
	if (r < 0)
		methods_fail("pbus_loop_run", r);
	return 0;
}

static struct perf_client_Perf *connect_client(const struct registry *registry)
{
	struct pbus_rpc_options options = options_for(registry);
	struct perf_client_Perf *client;
	int r;

	r = perf_client_Perf_new(ADDRESS, &options, &client);
	if (r < 0)
		methods_fail(ADDRESS, r);
	if (perf_client_Perf_wait_available(client, AVAILABLE_WAIT_MS) < 0)
		methods_fail_message(ADDRESS, pbus_rpc_last_error());
	return client;
}

static int role_client(const struct methods_options *opts)
{
	struct perf_client_Perf *client;
	struct registry registry;

	signal(SIGPIPE, SIG_IGN);
	registry_paths(&registry, opts->address);
	client = connect_client(&registry);
	run_calls(CONTENDER_SOCKET, client, opts);
	perf_client_Perf_free(client);
	return 0;
}

static int role_inprocess(const struct methods_options *opts)
{
	char dir[] = "/tmp/pbus-bench-inprocess-XXXXXX";
	struct perf_server_Perf *server;
	struct perf_client_Perf *client;
	struct pbus_rpc_options options;
	struct registry registry;
	int r;

	if (!mkdtemp(dir))
		methods_fail("mkdtemp", errno);
	registry_start(&registry, dir);
	options = options_for(&registry);
	r = perf_server_Perf_new_with_options(ADDRESS, &impl, NULL, &options, &server);
	if (r < 0) {
		registry_stop(&registry);
		methods_fail(ADDRESS, r);
	}
	/* After the stub: the proxy finds it in this process. */
	r = perf_client_Perf_new(ADDRESS, &options, &client);
	if (r < 0) {
		registry_stop(&registry);
		methods_fail(ADDRESS, r);
	}
	/* Nobody dispatches the loop: a call that took the socket would time
	 * out rather than be answered, and the check below says so sooner. */
	perf_client_Perf_set_timeout(client, 1000);
	calling_thread = pthread_self();
	check_thread = true;
	run_calls(CONTENDER_INPROCESS, client, opts);
	perf_client_Perf_free(client);
	perf_server_Perf_free(server);
	registry_stop(&registry);
	return 0;
}

/* --- the broadcast role -------------------------------------------------- */

/* Shared between the server and its subscriber processes (an anonymous
 * shared mapping made before the fork). */
struct broadcast_shared {
	atomic_long subscribed;   /* subscribers ready to receive */
	atomic_long failed;       /* subscribers that saw something wrong */
	long broadcasts, subscribers;
	/* sent[k]: tick k's send time; then delay[s * broadcasts + k]:
	 * subscriber s's delay to receive tick k (-1: not received). */
	int64_t data[];
};

static struct broadcast_shared *shared;

struct subscriber {
	long index, received;
	bool done;
};

static int64_t *sent_at(long k)
{
	return &shared->data[k];
}

static int64_t *delay_of(long subscriber, long k)
{
	return &shared->data[shared->broadcasts + subscriber * shared->broadcasts + k];
}

static void on_tick(struct perf_client_Perf *client, uint64_t sent_ns, void *userdata)
{
	struct subscriber *s = userdata;
	int64_t now = methods_now_ns();

	(void)client;
	if (sent_ns == 0) { /* the end */
		s->done = true;
		return;
	}
	/* One connection delivers in order and loses nothing here (far below
	 * the 4 MiB a slow subscriber may fall behind): tick number
	 * s->received. */
	if (s->received >= shared->broadcasts || (uint64_t)*sent_at(s->received) != sent_ns) {
		atomic_fetch_add(&shared->failed, 1);
		s->done = true;
		return;
	}
	*delay_of(s->index, s->received++) = now - (int64_t)sent_ns;
}

static _Noreturn void subscriber_main(long index, int go, const struct registry *registry,
				      int64_t give_up_ns)
{
	struct subscriber s = {.index = index};
	struct perf_client_Perf *client;
	struct pbus_loop *loop;
	char c;

	/* The server starts after the fork (this process inherits none of its
	 * parambus state); it says "go" by closing the pipe. */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	close(go);
	loop = pbus_loop_default();
	if (!loop)
		methods_fail("pbus_loop_default", ENOMEM);
	client = connect_client(registry);
	if (perf_client_Perf_subscribe_tick(client, on_tick, &s) < 0)
		methods_fail_message("subscribe tick", pbus_rpc_last_error());
	atomic_fetch_add(&shared->subscribed, 1);
	while (!s.done) {
		int r = pbus_loop_dispatch(loop, 100);

		if (r < 0)
			methods_fail("pbus_loop_dispatch", r);
		if (methods_now_ns() > give_up_ns) {
			atomic_fetch_add(&shared->failed, 1);
			break;
		}
	}
	perf_client_Perf_free(client);
	_exit(0);
}

static void *run_loop(void *loop)
{
	pbus_loop_run(loop);
	return NULL;
}

static int compare_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile @p of @sorted (@n > 0). */
static int64_t percentile(const int64_t *sorted, long n, double p)
{
	long rank = (long)((double)n * p + 0.999999);

	if (rank < 1)
		rank = 1;
	return sorted[rank > n ? n - 1 : rank - 1];
}

static int role_broadcast(const struct methods_options *opts)
{
	const long subscribers = opts->subscribers, broadcasts = opts->broadcasts;
	size_t size = sizeof *shared + sizeof(int64_t) * (size_t)(broadcasts * (subscribers + 1));
	int64_t give_up_ns, next, *delivery;
	struct perf_server_Perf *server;
	struct pbus_rpc_options options;
	struct pbus_loop *loop;
	struct registry registry;
	pid_t *pids;
	pthread_t looper;
	int go[2], r, lost = 0;

	if (subscribers > SUBSCRIBERS_MAX)
		methods_fail_message("--subscribers", "too many (at most 1024)");
	shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t)subscribers, sizeof *pids);
	delivery = calloc((size_t)broadcasts, sizeof *delivery);
	if (shared == MAP_FAILED || !pids || !delivery)
		methods_fail("memory", ENOMEM);
	shared->broadcasts = broadcasts;
	shared->subscribers = subscribers;
	for (long i = 0; i < broadcasts * (subscribers + 1); i++)
		shared->data[i] = -1;
	signal(SIGPIPE, SIG_IGN);
	registry_paths(&registry, opts->address);
	/* Generous: the setup, the ticks, a second per subscriber. */
	give_up_ns = methods_now_ns() + 60000000000LL + broadcasts * BROADCAST_SPACING_NS +
		     subscribers * 1000000000LL;

	/* The subscribers first, while this process has no thread and no
	 * parambus state to inherit. */
	if (pipe2(go, O_CLOEXEC) < 0)
		methods_fail("pipe", errno);
	fflush(NULL);
	for (long i = 0; i < subscribers; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			methods_fail("fork", errno);
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			subscriber_main(i, go[0], &registry, give_up_ns);
		}
	}
	close(go[0]);

	registry_start(&registry, opts->address);
	options = options_for(&registry);
	r = perf_server_Perf_new_with_options(ADDRESS, &impl, NULL, &options, &server);
	if (r < 0) {
		registry_stop(&registry);
		methods_fail(ADDRESS, r);
	}
	loop = pbus_loop_default();
	if ((r = pthread_create(&looper, NULL, run_loop, loop)) != 0)
		methods_fail("pthread_create", r);
	close(go[1]);
	while (atomic_load(&shared->subscribed) < subscribers) {
		struct timespec ms = {0, 1000000};

		if (atomic_load(&shared->failed) || methods_now_ns() > give_up_ns ||
		    waitpid(-1, NULL, WNOHANG) > 0)
			methods_fail_message("subscribers", "not all of them subscribed");
		nanosleep(&ms, NULL);
	}

	next = methods_now_ns();
	for (long k = 0; k < broadcasts; k++) {
		struct timespec at = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
		int64_t now;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		now = methods_now_ns();
		*sent_at(k) = now;
		r = perf_server_Perf_fire_tick(server, (uint64_t)now);
		if (r < 0)
			methods_fail("fire tick", r);
		if (r != subscribers)
			methods_fail_message("fire tick", "a subscriber is missing");
		next = now + BROADCAST_SPACING_NS;
	}
	perf_server_Perf_fire_tick(server, 0);
	for (long i = 0; i < subscribers; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			atomic_fetch_add(&shared->failed, 1);
	}
	pbus_loop_quit(loop);
	pthread_join(looper, NULL);
	perf_server_Perf_free(server);
	registry_stop(&registry);
	if (atomic_load(&shared->failed))
		methods_fail_message("subscribers", "a subscriber missed a tick or gave up");

	/* A tick's delivery: when its last subscriber had it. */
	for (long k = 0; k < broadcasts; k++) {
		delivery[k] = 0;
		for (long s = 0; s < subscribers; s++) {
			int64_t d = *delay_of(s, k);

			if (d < 0)
				lost++;
			else if (d > delivery[k])
				delivery[k] = d;
		}
	}
	if (lost)
		methods_fail_message("subscribers", "a tick was not delivered to everybody");
	qsort(delivery, (size_t)broadcasts, sizeof *delivery, compare_i64);
	methods_print_broadcast(CONTENDER_SOCKET, opts, (double)percentile(delivery, broadcasts, 0.50) / 1e3,
				(double)percentile(delivery, broadcasts, 0.99) / 1e3);
	free(delivery);
	free(pids);
	return 0;
}

int main(int argc, char **argv)
{
	struct methods_options opts;

	methods_parse_options(
		argc, argv, "methods-parambus",
		METHODS_ROLE_SERVER | METHODS_ROLE_CLIENT | METHODS_ROLE_INPROCESS |
			METHODS_ROLE_BROADCAST,
		"parambus's contenders in scenario 3: the proxy and stub pbus-gen generates\n"
		"from bench/schemas/perf.fidl (bench.Perf at local:bench:bench.Perf), over\n"
		"the socket (server, client, broadcast) and in-process. ADDR is a directory\n"
		"the server or broadcast role makes for the pbusd it starts as the registry\n"
		"(the client looks the server up in ADDR/sock); in-process uses a temporary\n"
		"one. The broadcast role forks S subscriber processes, fires B ticks 2 ms\n"
		"apart and reports when the last subscriber had each (p50, p99).",
		&opts);
	switch (opts.role) {
	case METHODS_ROLE_SERVER:
		return role_server(&opts);
	case METHODS_ROLE_CLIENT:
		return role_client(&opts);
	case METHODS_ROLE_INPROCESS:
		return role_inprocess(&opts);
	default:
		return role_broadcast(&opts);
	}
}
