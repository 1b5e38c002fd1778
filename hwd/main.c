/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbus-hwd, the runner of an instance's hardware bindings. The main
 * thread is the input thread (an epoll loop over GPIO edge descriptors, one
 * timer per polled I2C register, a one-second maintenance timer and the
 * signals); output_thread() applies changes of output parameters and, with
 * --report-fd, tells pbusd which version of each it applied (or failed to:
 * common/hwd-report.h), so that pbusd can acknowledge a SET once the
 * hardware has it (docs/socket-protocol.md §3.3, "Applied").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../common/hwd-report.h"
#include "../common/log.h"
#include "../common/options.h"
#include "../lib/clock-internal.h" /* pbus_monotonic_ns() */
#include "pbus-hwd.h"

static const char usage[] =
	"Usage: pbus-hwd --schema FILE.pbs --instance NAME [OPTIONS]\n"
	"\n"
	"Run the hardware bindings of a parambus instance: poll I2C registers into\n"
	"parameters, turn GPIO edges into parameter changes, drive GPIO lines and\n"
	"PWM channels from parameters (the hw keys of the .fdepl, docs/hardware-guide.md).\n"
	"A device that is missing or fails makes its parameter's status invalid;\n"
	"pbus-hwd retries it every second and carries on with the others.\n"
	"pbusd starts pbus-hwd by itself when its schema has bindings; run it by\n"
	"hand to try bindings against an instance that pbusd --no-hardware serves.\n"
	"\n"
	"Options:\n"
	"  -s, --schema FILE      the compiled schema the instance is served from (required)\n"
	"  -i, --instance NAME    the instance (required)\n"
	"      --check            check the bindings against the instance, list them\n"
	"                         and exit without touching any device\n"
	"      --report-fd FD     after each application of an output binding (and\n"
	"                         its failures), write a 16-byte record (parameter,\n"
	"                         version, result) to FD, a pipe to pbusd, which\n"
	"                         acknowledges SETs with the APPLIED flag once the\n"
	"                         hardware has their values (docs/hardware-guide.md);\n"
	"                         pbusd passes it; never blocks on a full pipe\n"
	"  -l, --log-level LEVEL  error, warning, info (default) or debug\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n"
	"\n"
	"Exit status: 0 after SIGTERM/SIGINT or a good --check, 1 on an error (bad\n"
	"binding, no such instance, schema mismatch), 2 on a usage error, 3 when\n"
	"the instance went away (pbusd stopped).\n"
	"\n"
	"Examples:\n"
	"  pbus-hwd --check -s psu-hw.pbs -i psu1   list the bindings of psu1, touch\n"
	"                                           no device\n"
	"  pbus-hwd -s psu-hw.pbs -i psu1 -l debug  run them by hand (pbusd starts\n"
	"                                           pbus-hwd itself otherwise)\n"
	"\n"
	"Full documentation: man 8 pbus-hwd\n";

#define MAINTENANCE_NS 1000000000LL
/* A report that found the pipe full is tried again this soon. */
#define REPORT_RETRY_NS 10000000LL

static atomic_bool stopping;

struct source {
	enum { SOURCE_SIGNAL, SOURCE_MAINTENANCE, SOURCE_I2C_TIMER, SOURCE_GPIO_EVENTS } kind;
	struct binding *binding;
};

struct hwd {
	struct pbus_table *table;
	struct binding *bindings;
	uint32_t count;
	int epoll_fd, signal_fd, maintenance_fd;
	struct source *sources; /* one per binding, for epoll's data pointer */
	int exit_status;
	int report_fd; /* --report-fd, or -1; the output thread's */
};

static bool is_output(const struct binding *b)
{
	return b->kind == BINDING_GPIO_OUTPUT || b->kind == BINDING_PWM_DUTY;
}

/* --- reports to pbusd (the output thread's) --------------------------------- */

/* What pbusd is to be told of output @b after an application that
 * returned @r: the version now in effect, or the one that failed. */
static void report_outcome(struct binding *b, int r)
{
	b->report_seq = r < 0 ? b->tried_seq : b->applied_seq;
	b->report_result = r < 0 ? r : 0;
}

/*
 * Write every output's report that differs from what pbusd was last told,
 * one record per write() (atomic: a record is far below PIPE_BUF). The
 * pipe is non-blocking: when it is full (pbusd is busy), the rest wait in
 * the bindings — only the latest outcome per parameter, so nothing grows —
 * and the caller tries again soon. Returns false if some still wait.
 */
static bool send_reports(struct hwd *h)
{
	unsigned char record[PBUS_HWD_REPORT_SIZE];

	for (uint32_t i = 0; i < h->count && h->report_fd >= 0; i++) {
		struct binding *b = &h->bindings[i];
		ssize_t n;

		if (!is_output(b) || !b->report_seq ||
		    (b->report_seq == b->sent_seq && b->report_result == b->sent_result))
			continue;
		pbus_hwd_report_encode(&(struct pbus_hwd_report){.index = b->info.index,
								  .result = b->report_result,
								  .seq = b->report_seq},
				       record);
		do
			n = write(h->report_fd, record, sizeof(record));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(record)) {
			b->sent_seq = b->report_seq;
			b->sent_result = b->report_result;
			log_msg(LOG_DEBUG, "%s: reported version %llu %s", b->info.name,
				(unsigned long long)b->sent_seq, b->sent_result ? "failed" : "applied");
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			return false;
		/* pbusd closed its end (or the descriptor is not a pipe): the
		 * bindings go on, unreported. */
		log_msg(LOG_WARNING, "--report-fd %d: %s; no longer reporting applied values",
			h->report_fd, n < 0 ? strerror(errno) : "short write");
		close(h->report_fd);
		h->report_fd = -1;
	}
	return true;
}

/* --- the output thread ------------------------------------------------------ */

static void on_wakeup(int sig)
{
	(void)sig;
}

static void output_check_all(struct hwd *h)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct binding *b = &h->bindings[i];
		int r;

		if (!is_output(b))
			continue;
		/* A lost device is reopened (which applies the value, also at
		 * start: reported); a working one answers one cheap ioctl. */
		if (b->lost || (!b->request && !b->pwm)) {
			r = binding_apply_output(b);
			if (r < 0)
				binding_failed(b, r, "device");
			report_outcome(b, r);
		} else if ((r = binding_check(b)) < 0) {
			binding_failed(b, r, "device");
		}
	}
}

static void *output_thread(void *arg)
{
	struct hwd *h = arg;
	struct sigaction sa = {.sa_handler = on_wakeup};
	struct pbus_watch *watch = NULL;
	uint32_t *indexes, n = 0, index;
	sigset_t wake;
	int64_t next_check;
	bool reports_wait;
	int r;

	/* SIGUSR1 (from main at shutdown) interrupts the wait below. */
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);

	indexes = calloc(h->count, sizeof(*indexes));
	if (!indexes)
		return NULL;
	for (uint32_t i = 0; i < h->count; i++)
		if (is_output(&h->bindings[i]))
			indexes[n++] = h->bindings[i].info.index;
	r = pbus_watch_new(h->table, indexes, n, &watch);
	free(indexes);
	if (r < 0) {
		log_msg(LOG_ERROR, "cannot watch the output parameters: %s", pbus_strerror(r));
		kill(getpid(), SIGTERM);
		return NULL;
	}
	output_check_all(h);
	reports_wait = !send_reports(h);
	next_check = pbus_monotonic_ns() + MAINTENANCE_NS;
	while (!atomic_load(&stopping)) {
		int64_t now = pbus_monotonic_ns(), timeout = next_check - now;

		if (reports_wait && timeout > REPORT_RETRY_NS)
			timeout = REPORT_RETRY_NS;
		r = pbus_watch_wait(watch, timeout);
		if (r == -ESTALE)
			break; /* the main thread's maintenance notices and exits */
		while (r > 0 && pbus_watch_next(watch, &index) == 1) {
			for (uint32_t i = 0; i < h->count; i++) {
				struct binding *b = &h->bindings[i];
				uint64_t seq;

				if (!is_output(b) || b->info.index != index)
					continue;
				/* Our own status writes come back here too:
				 * a version whose value the device has
				 * already is not applied again, nor one
				 * that just failed on a lost device (it is
				 * retried every second). Not own_seq: a
				 * status rewrite may carry a client's value
				 * written meanwhile. */
				seq = pbus_param_seq(b->param);
				if (seq == b->applied_seq || (b->lost && seq == b->tried_seq))
					continue;
				/* A lost device is tried again at once: it
				 * may be back, else the status turns invalid. */
				r = binding_apply_output(b);
				if (r < 0)
					binding_failed(b, r, "device");
				report_outcome(b, r);
				r = 1;
			}
		}
		now = pbus_monotonic_ns();
		if (now >= next_check) {
			output_check_all(h);
			next_check = now + MAINTENANCE_NS;
		}
		reports_wait = !send_reports(h);
	}
	pbus_watch_free(watch);
	return NULL;
}

/* --- the input thread --------------------------------------------------------- */

static int watch_fd(struct hwd *h, int fd, struct source *source)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = source};

	return epoll_ctl(h->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void input_failed(struct hwd *h, struct binding *b, int error, const char *what)
{
	if (b->request)
		epoll_ctl(h->epoll_fd, EPOLL_CTL_DEL, pbus_gpio_request_get_fd(b->request), NULL);
	binding_failed(b, error, what);
}

static void open_gpio_input(struct hwd *h, struct binding *b, struct source *source)
{
	int r = binding_open(b);

	if (r == 0)
		r = watch_fd(h, pbus_gpio_request_get_fd(b->request), source);
	if (r < 0)
		input_failed(h, b, r, "device");
}

static int start_i2c_timer(struct hwd *h, struct binding *b, struct source *source)
{
	int64_t period = (int64_t)(1e9 / b->rate_hz);
	struct itimerspec its = {
		.it_interval = {.tv_sec = period / 1000000000, .tv_nsec = period % 1000000000},
		.it_value = {.tv_nsec = 1}, /* the first poll at once */
	};

	b->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (b->timer_fd < 0 || timerfd_settime(b->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	return watch_fd(h, b->timer_fd, source);
}

static void maintenance(struct hwd *h)
{
	int state = pbus_table_state(h->table);

	if (state != PBUS_TABLE_LIVE) {
		log_msg(LOG_WARNING, "instance '%s' is no longer served (%s); exiting",
			pbus_table_instance(h->table),
			state == PBUS_TABLE_CLOSED ? "pbusd shut down" :
			state == PBUS_TABLE_REPLACED ? "a new pbusd replaced it" : "pbusd died");
		h->exit_status = 3;
		atomic_store(&stopping, true);
		return;
	}
	for (uint32_t i = 0; i < h->count; i++) {
		struct binding *b = &h->bindings[i];
		int r;

		if (b->kind != BINDING_GPIO_INPUT)
			continue;
		if (!b->request) {
			open_gpio_input(h, b, &h->sources[i]);
			continue;
		}
		r = binding_check(b);
		if (r < 0)
			input_failed(h, b, r, "device");
	}
}

static void handle(struct hwd *h, struct source *s, uint32_t events)
{
	struct signalfd_siginfo si;
	uint64_t ticks;
	int r;

	switch (s->kind) {
	case SOURCE_SIGNAL:
		if (read(h->signal_fd, &si, sizeof(si)) == sizeof(si)) {
			log_msg(LOG_INFO, "shutting down on %s", strsignal((int)si.ssi_signo));
			atomic_store(&stopping, true);
		}
		break;
	case SOURCE_MAINTENANCE:
		if (read(h->maintenance_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
			maintenance(h);
		break;
	case SOURCE_I2C_TIMER:
		if (read(s->binding->timer_fd, &ticks, sizeof(ticks)) != sizeof(ticks))
			break;
		r = binding_poll_i2c(s->binding);
		if (r < 0)
			binding_failed(s->binding, r, "register read from");
		break;
	case SOURCE_GPIO_EVENTS:
		r = s->binding->request ? binding_read_edges(s->binding) : 0;
		if (r == 0 && (events & (EPOLLERR | EPOLLHUP)))
			r = -ENODEV;
		if (r < 0)
			input_failed(h, s->binding, r, "device");
		break;
	}
}

static int run(struct hwd *h)
{
	struct source signal_source = {.kind = SOURCE_SIGNAL};
	struct source maintenance_source = {.kind = SOURCE_MAINTENANCE};
	struct itimerspec second = {.it_interval = {.tv_sec = 1}, .it_value = {.tv_sec = 1}};
	pthread_t output;
	bool have_output = false;
	sigset_t signals;
	int r;

	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	h->signal_fd = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
	h->maintenance_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	h->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (h->signal_fd < 0 || h->maintenance_fd < 0 || h->epoll_fd < 0 ||
	    timerfd_settime(h->maintenance_fd, 0, &second, NULL) < 0 ||
	    watch_fd(h, h->signal_fd, &signal_source) < 0 ||
	    watch_fd(h, h->maintenance_fd, &maintenance_source) < 0) {
		log_msg(LOG_ERROR, "cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	for (uint32_t i = 0; i < h->count; i++) {
		struct binding *b = &h->bindings[i];

		h->sources[i].binding = b;
		if (b->kind == BINDING_I2C_REGISTER) {
			h->sources[i].kind = SOURCE_I2C_TIMER;
			r = start_i2c_timer(h, b, &h->sources[i]);
			if (r < 0) {
				log_msg(LOG_ERROR, "%s: cannot start its timer: %s", b->info.name, strerror(-r));
				return 1;
			}
		} else if (b->kind == BINDING_GPIO_INPUT) {
			h->sources[i].kind = SOURCE_GPIO_EVENTS;
			open_gpio_input(h, b, &h->sources[i]);
		} else {
			have_output = true;
		}
	}
	if (have_output) {
		r = pthread_create(&output, NULL, output_thread, h);
		if (r) {
			log_msg(LOG_ERROR, "cannot start the output thread: %s", strerror(r));
			return 1;
		}
	}
	log_msg(LOG_INFO, "running %u hardware bindings of instance '%s'", h->count,
		pbus_table_instance(h->table));

	while (!atomic_load(&stopping)) {
		struct epoll_event events[16];
		int n = epoll_wait(h->epoll_fd, events, 16, -1);

		if (n < 0 && errno != EINTR) {
			log_msg(LOG_ERROR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++)
			handle(h, events[i].data.ptr, events[i].events);
	}
	atomic_store(&stopping, true);
	if (have_output) {
		pthread_kill(output, SIGUSR1);
		pthread_join(output, NULL);
	}
	for (uint32_t i = 0; i < h->count; i++)
		if (h->bindings[i].timer_fd >= 0)
			close(h->bindings[i].timer_fd);
	close(h->epoll_fd);
	close(h->maintenance_fd);
	close(h->signal_fd);
	return h->exit_status;
}

static void print_binding(const struct binding *b)
{
	printf("%-24s %-13s %s", b->info.name, binding_kind_name(b->kind), b->device);
	switch (b->kind) {
	case BINDING_GPIO_OUTPUT:
	case BINDING_GPIO_INPUT:
		if (b->line_name)
			printf(" line %s", b->line_name);
		else
			printf(" line %u", b->line_offset);
		break;
	case BINDING_I2C_REGISTER:
		printf(" address 0x%02x register 0x%02x, %u bits at %g Hz", b->address, b->reg,
		       b->width, b->rate_hz);
		break;
	case BINDING_PWM_DUTY:
		printf(" channel %u, period %llu ns", b->channel, (unsigned long long)b->period_ns);
		break;
	}
	putchar('\n');
}

/* --report-fd FD: an open descriptor we may write, made non-blocking (a
 * full pipe must never stop the output thread) and close-on-exec. -1 with
 * the usage error printed otherwise. */
static int report_fd_option(const char *text)
{
	char *end;
	long fd;
	int flags;

	errno = 0;
	fd = strtol(text, &end, 10);
	if (!*text || *end || errno || fd < 0 || fd > INT_MAX) {
		fprintf(stderr, "pbus-hwd: --report-fd '%s' is not a file descriptor\n"
			"Try 'pbus-hwd --help'.\n", text);
		return -1;
	}
	flags = fcntl((int)fd, F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY ||
	    fcntl((int)fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		fprintf(stderr, "pbus-hwd: --report-fd %ld: %s\n", fd,
			flags < 0 ? strerror(errno) : "not open for writing");
		return -1;
	}
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"schema", required_argument, NULL, 's'},
		{"instance", required_argument, NULL, 'i'},
		{"check", no_argument, NULL, 'c'},
		{"report-fd", required_argument, NULL, 'r'},
		OPTIONS_COMMON_LONG,
		{NULL, 0, NULL, 0},
	};
	const char *schema_path = NULL, *instance = NULL;
	struct hwd h = {.epoll_fd = -1, .signal_fd = -1, .maintenance_fd = -1, .report_fd = -1};
	struct pbus_schema *schema = NULL;
	bool check = false;
	char error[512] = "";
	sigset_t signals;
	int c, r, status = 1;

	log_set_program("pbus-hwd");
	while ((c = getopt_long(argc, argv, "s:i:" OPTIONS_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (c) {
		case 's': schema_path = optarg; break;
		case 'i': instance = optarg; break;
		case 'c': check = true; break;
		case 'r':
			h.report_fd = report_fd_option(optarg);
			if (h.report_fd < 0)
				return 2;
			break;
		default:
			r = options_common(c, optarg, usage);
			if (r != OPTIONS_CONTINUE)
				return r;
			break;
		}
	}
	if (optind < argc || !schema_path || !instance) {
		fprintf(stderr, "pbus-hwd: %s\nTry 'pbus-hwd --help'.\n",
			optind < argc ? "unexpected argument" : "--schema FILE and --instance NAME are required");
		return 2;
	}
	/* Signals are read from a signalfd by the main thread; SIGUSR1 wakes
	 * the output thread. Block them before any thread exists. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = pbus_schema_load(schema_path, error, sizeof(error), &schema);
	if (r < 0) {
		log_msg(LOG_ERROR, "%s", error[0] ? error : pbus_strerror(r));
		goto out;
	}
	r = pbus_table_open(instance, check ? PBUS_OPEN_READ : PBUS_OPEN_PROVIDER, &h.table);
	if (r < 0) {
		log_msg(LOG_ERROR, "cannot open instance '%s': %s", instance, pbus_strerror(r));
		goto out;
	}
	if (pbus_table_schema_hash(h.table) != pbus_schema_hash(schema)) {
		log_msg(LOG_ERROR, "instance '%s' is served from another schema than %s "
			"(hash %016llx, file %016llx)", instance, schema_path,
			(unsigned long long)pbus_table_schema_hash(h.table),
			(unsigned long long)pbus_schema_hash(schema));
		goto out;
	}
	r = bindings_load(schema, h.table, &h.bindings, &h.count, error, sizeof(error));
	if (r < 0) {
		log_msg(LOG_ERROR, "%s: %s", schema_path, r == -EINVAL ? error : strerror(-r));
		goto out;
	}
	if (check) {
		for (uint32_t i = 0; i < h.count; i++)
			print_binding(&h.bindings[i]);
		printf("%u hardware bindings, all valid\n", h.count);
		status = 0;
		goto out;
	}
	if (h.count == 0) {
		log_msg(LOG_INFO, "%s has no hardware bindings; nothing to do", schema_path);
		status = 0;
		goto out;
	}
	h.sources = calloc(h.count, sizeof(*h.sources));
	if (!h.sources) {
		log_msg(LOG_ERROR, "out of memory");
		goto out;
	}
	status = run(&h);
out:
	if (h.report_fd >= 0)
		close(h.report_fd);
	bindings_free(h.bindings, h.count);
	free(h.sources);
	pbus_table_close(h.table);
	pbus_schema_free(schema);
	return status;
}
