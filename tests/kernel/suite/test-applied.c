/* SPDX-License-Identifier: MIT */
/*
 * test-applied.c - a SET acknowledged once the hardware applied it, in the
 * VM: the real pbusd serves applied.pbs (tests/kernel/suite/applied.fdepl:
 * relays on gpio-sim lines, a fan on the mock PWM chip, a setting bound to
 * nothing) and runs pbus-hwd; a SET with the APPLIED flag
 * (docs/socket-protocol.md §3.3) through the C client must be answered
 * only once the device shows the value — the gpio-sim line's level and the
 * mock PWM's state are read right after each reply, never waited for. A
 * device taken away gives EIO, a killed pbus-hwd ETIMEDOUT within pbusd's
 * --apply-timeout. pbus-scpi sends its settings with the flag, so after
 * `OUTP ON;*OPC?` the line is high.
 *
 * pbus-hwd runs as SCHED_IDLE here (as on a busy instrument, it gets the
 * CPU last): otherwise, on the VM's one CPU, the woken pbus-hwd tends to
 * drive the line before the client even reads pbusd's reply, and a check
 * of the line after the reply could not tell a reply that waited for the
 * hardware from one that did not. gpio-line-set-at-reply shows it can:
 * without the flag, replies come before the line switched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <parambus/parambus.h>
#include <parambus/client.h>

#include "common/suite.h"

#define SCHEMA_PATH "/etc/parambus/applied.pbs"
#define TREE_PATH "/etc/parambus/applied.scpi"
#define INSTANCE "applied"
#define STATE_DIR "/tmp/applied-state"
#define STATE_FILE STATE_DIR "/" INSTANCE ".state"
#define LOG_PATH "/tmp/pbusd-applied.log"
#define SCPI_LOG_PATH "/tmp/pbus-scpi-applied.log"
#define PWM_DRIVER "/sys/bus/platform/drivers/pbus-mock-pwm"
#define APPLY_TIMEOUT_MS 500 /* pbusd --apply-timeout: below pbus-hwd's 1 s restart */
#define ROUNDS 200
#define WAIT_MS 5000

static pid_t daemon_pid, scpi_pid;
static struct pbus_client *client;
static int scpi_fd = -1;

/* ---- helpers ------------------------------------------------------------- */

/* The loopback interface up (the guest's init leaves it down): pbus-scpi
 * listens on 127.0.0.1. */
static int loopback_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

static uint32_t index_of(const char *name)
{
	uint32_t index = UINT32_MAX;

	pbus_client_find(client, name, &index);
	return index;
}

/* One write of @name (@value, @length bytes) with @flags; *w gets the
 * result and version, *ms the time to the reply. */
static int set1(const char *name, const void *value, size_t length, unsigned flags,
		struct pbus_write *w, uint64_t *ms)
{
	uint64_t t0 = suite_now_ms();
	int r;

	*w = (struct pbus_write){.index = index_of(name), .value = value, .length = length};
	r = pbus_client_set_flags(client, w, 1, flags);
	if (ms)
		*ms = suite_now_ms() - t0;
	return r;
}

static int set_bool(const char *name, bool v, unsigned flags, struct pbus_write *w, uint64_t *ms)
{
	return set1(name, &v, 1, flags, w, ms);
}

static int set_float(const char *name, float v, unsigned flags, struct pbus_write *w, uint64_t *ms)
{
	return set1(name, &v, sizeof(v), flags, w, ms);
}

/* The running pbus-hwd's pid, or 0. */
static pid_t hwd_pid(void)
{
	char path[64], text[512];
	pid_t found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)daemon_pid, (int)daemon_pid);
	if (kenv_read_file(path, text, sizeof(text)) > 0)
		found = (pid_t)atoi(text);
	if (found > 0) {
		/* A zombie has no cmdline: not running. */
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)found);
		if (kenv_read_file(path, text, sizeof(text)) <= 0 || !strstr(text, "pbus-hwd"))
			found = 0;
	}
	return found;
}

/* Every thread of pbus-hwd to SCHED_IDLE (@idle) or back to SCHED_OTHER. */
static int starve_hwd(bool idle)
{
	struct sched_param none = {0};
	char path[64];
	struct dirent *e;
	pid_t pid = hwd_pid();
	int n = 0;
	DIR *d;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    sched_setscheduler((pid_t)atoi(e->d_name), idle ? SCHED_IDLE : SCHED_OTHER, &none) == 0)
			n++;
	closedir(d);
	return n >= 2 ? 0 : -ESRCH; /* its input and output threads */
}

static void show_logs(void)
{
	const char *log = suite_read(LOG_PATH);

	printf("# pbusd log (tail):\n%s\n", log ? log + (strlen(log) > 3000 ? strlen(log) - 3000 : 0) : "(none)");
	log = suite_read(SCPI_LOG_PATH);
	if (log)
		printf("# pbus-scpi log (tail):\n%s\n", log + (strlen(log) > 1500 ? strlen(log) - 1500 : 0));
}

/* ---- SCPI over TCP --------------------------------------------------------- */

/* Start pbus-scpi on 127.0.0.1, an ephemeral port; its port or -errno. */
static int start_scpi(void)
{
	char ready[128] = "", *p;
	struct pollfd pfd;
	int fds[2];
	ssize_t n, got = 0;

	if (pipe(fds) < 0)
		return -errno;
	scpi_pid = fork();
	if (scpi_pid < 0)
		return -errno;
	if (scpi_pid == 0) {
		char fd_text[16];
		int log = open(SCPI_LOG_PATH, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(log, 1);
		dup2(log, 2);
		close(fds[0]);
		snprintf(fd_text, sizeof(fd_text), "%d", fds[1]);
		execl("/usr/bin/pbus-scpi", "pbus-scpi", "--instance", INSTANCE, "--tree", TREE_PATH, "--listen",
		      "127.0.0.1:0", "--hislip", "off", "--notify-fd", fd_text, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){.fd = fds[0], .events = POLLIN};
	while (!strstr(ready, "READY=1\n") && poll(&pfd, 1, 10000) == 1 &&
	       (n = read(fds[0], ready + got, sizeof(ready) - 1 - (size_t)got)) > 0) {
		got += n;
		ready[got] = 0;
	}
	close(fds[0]);
	p = strstr(ready, "PORT=");
	if (!strstr(ready, "READY=1\n") || !p)
		return -ETIMEDOUT;
	return atoi(p + 5);
}

static int scpi_connect(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int r = -errno;

		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

/* Send @message (a line) and read one response line into @buf (no
 * newline); -ETIMEDOUT after 5 s. */
static int scpi_query(const char *message, char *buf, size_t size)
{
	size_t got = 0;

	if (write(scpi_fd, message, strlen(message)) != (ssize_t)strlen(message))
		return -errno;
	for (;;) {
		struct pollfd pfd = {.fd = scpi_fd, .events = POLLIN};
		ssize_t n;
		char *nl;

		if (poll(&pfd, 1, WAIT_MS) != 1)
			return -ETIMEDOUT;
		n = read(scpi_fd, buf + got, size - 1 - got);
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		got += (size_t)n;
		buf[got] = 0;
		nl = strchr(buf, '\n');
		if (nl) {
			*nl = 0;
			return 0;
		}
		if (got == size - 1)
			return -EMSGSIZE;
	}
}

/* ---- cases --------------------------------------------------------------- */

static const char *starts(void)
{
	static const char *const extra[] = {"--log-level", "debug", "--apply-timeout", "500", NULL};
	struct pbus_client_options o = {.name = "test-applied", .timeout_ms = 10000};
	int r;

	_Static_assert(APPLY_TIMEOUT_MS == 500, "the option above");
	daemon_pid = suite_start_pbusd(SCHEMA_PATH, INSTANCE, STATE_DIR, LOG_PATH, extra);
	if (daemon_pid < 0)
		T_FAIL("pbusd did not start: %s", strerror(-daemon_pid));
	r = pbus_client_connect(INSTANCE, &o, &client);
	if (r < 0)
		T_FAIL("cannot connect to pbusd: %s", pbus_strerror(r));
	for (int i = 0; i < 500 && !hwd_pid(); i++)
		suite_sleep_ms(10);
	T_EXPECT(hwd_pid() > 0);
	/* The defaults applied at pbus-hwd's start: relay low, beacon high. */
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 0, WAIT_MS), 0);
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 1, WAIT_MS), 0);
	T_EQ(starve_hwd(true), 0);
	return NULL;
}

/* The heart of it: after every acknowledged SET the line already has the
 * level, read at once. First, the same check without the flag must catch
 * replies that came before the line switched (else it could not fail). */
static const char *gpio_line_set_at_reply(void)
{
	struct pbus_write w;
	uint64_t ms, worst = 0;
	int early = 0;

	for (int k = 1; k <= ROUNDS; k++) {
		bool v = k & 1;

		if (set_bool("relay", v, 0, &w, NULL) != 0)
			T_FAIL("round %d: SET relay without APPLIED failed", k);
		if (kenv_sim_get_value("pbus-sim0", 0) != (int)v)
			early++;
		T_EQ(suite_wait_sim_line("pbus-sim0", 0, v, WAIT_MS), 0);
	}
	printf("# without APPLIED: %d of %d replies came before line A0 switched\n", early, ROUNDS);
	if (early == 0)
		T_FAIL("without APPLIED every reply came after the line switched: the check below "
		       "could not tell the flag's effect");
	for (int k = 1; k <= ROUNDS; k++) {
		bool v = k & 1;
		int r = set_bool("relay", v, PBUS_CLIENT_SET_APPLIED, &w, &ms);
		int level = kenv_sim_get_value("pbus-sim0", 0);

		if (r != 0)
			T_FAIL("round %d: SET relay=%d with APPLIED: %s", k, v, pbus_strerror(r));
		if (level != (int)v)
			T_FAIL("round %d: SET relay=%d acknowledged (version %llu) while line A0 is %d", k, v,
			       (unsigned long long)w.seq, level);
		if (ms > worst)
			worst = ms;
	}
	printf("# with APPLIED: all %d replies came with the line switched; slowest %llu ms\n", ROUNDS,
	       (unsigned long long)worst);
	return NULL;
}

/* A persistent output: the reply waits for the save and for the line. */
static const char *persistent_output(void)
{
	struct pbus_write w;

	for (int k = 1; k <= 20; k++) {
		bool v = k & 1;
		const char *state;

		T_EQ(set_bool("saved", v, PBUS_CLIENT_SET_APPLIED, &w, NULL), 0);
		T_EQ(kenv_sim_get_value("pbus-sim0", 2), v);
		state = suite_read(STATE_FILE);
		if (!state || !strstr(state, v ? "\nsaved=true\n" : "\nsaved=false\n"))
			T_FAIL("round %d: saved=%d acknowledged but the state file has: %s", k, v,
			       state ? state : "(none)");
	}
	return NULL;
}

static const char *pwm_duty_at_reply(void)
{
	struct pbus_write w;
	char state[256], want[64];

	for (int k = 0; k <= 20; k++) {
		float duty = (float)(k * 5);

		T_EQ(set_float("fan", duty, PBUS_CLIENT_SET_APPLIED, &w, NULL), 0);
		snprintf(want, sizeof(want), " duty=%d ", k * 2000);
		T_EQ(suite_pwm_state(1, state, sizeof(state)), 0);
		if (!strstr(state, want))
			T_FAIL("fan=%g acknowledged while the mock PWM shows: %s", duty, state);
	}
	return NULL;
}

/* A batch with a bound and an unbound parameter: both written, the reply
 * after the line. */
static const char *batch_with_unbound(void)
{
	double volts = 2.5;
	bool on = true;
	struct pbus_write w[2] = {
		{.index = index_of("plain"), .value = &volts, .length = sizeof(volts)},
		{.index = index_of("relay"), .value = &on, .length = 1},
	};

	T_EQ(pbus_client_set_flags(client, w, 2, PBUS_CLIENT_SET_APPLIED), 0);
	T_EQ(kenv_sim_get_value("pbus-sim0", 0), 1);
	T_EXPECT(w[0].result == 0 && w[1].result == 0 && w[0].seq > 0 && w[1].seq > 0);
	on = false;
	T_EQ(pbus_client_set_flags(client, w, 2, PBUS_CLIENT_SET_APPLIED), 0);
	T_EQ(kenv_sim_get_value("pbus-sim0", 0), 0);
	return NULL;
}

/* The chip of an output removed: EIO (pbus-hwd's report, before the
 * timeout), the value written all the same; back: applied at the reply. */
static const char *gpio_chip_removed_eio(void)
{
	struct pbus_write w;
	uint64_t ms;
	int r;

	T_EQ(set_bool("beacon", false, PBUS_CLIENT_SET_APPLIED, &w, NULL), 0);
	T_EQ(kenv_sim_get_value("pbus-sim1", 1), 0);
	T_EQ(kenv_sim_set_live("pbus-sim1", 0), 0);
	for (int k = 0; k < 5; k++) {
		r = set_bool("beacon", k % 2 == 0, PBUS_CLIENT_SET_APPLIED, &w, &ms);
		if (r != -EIO || w.result != -EIO || w.seq == 0)
			T_FAIL("round %d, chip gone: %s, result %d, seq %llu after %llu ms; expected EIO", k,
			       pbus_strerror(r), w.result, (unsigned long long)w.seq, (unsigned long long)ms);
		T_EXPECT(ms < APPLY_TIMEOUT_MS);
	}
	/* Written: the table has it (status invalid: the device failed). */
	{
		uint32_t index = index_of("beacon");
		struct pbus_client_value v;

		T_EQ(pbus_client_get(client, &index, 1, &v), 0);
		T_EXPECT(v.length == 1 && *(const bool *)v.value == true && v.status == PBUS_STATUS_INVALID);
	}
	T_EQ(kenv_sim_set_live("pbus-sim1", 1), 0);
	for (int k = 0; k < 6; k++) {
		r = set_bool("beacon", k % 2 == 0, PBUS_CLIENT_SET_APPLIED, &w, &ms);
		if (r != 0)
			T_FAIL("round %d, chip back: %s after %llu ms", k, pbus_strerror(r), (unsigned long long)ms);
		T_EQ(kenv_sim_get_value("pbus-sim1", 1), k % 2 == 0);
	}
	return NULL;
}

static const char *pwm_unbound_eio(void)
{
	struct pbus_write w;
	char state[256];
	uint64_t ms;
	int r;

	T_EQ(kenv_unbind(PWM_DRIVER, "pbus-mock-pwm.0"), 0);
	r = set_float("fan", 60.0f, PBUS_CLIENT_SET_APPLIED, &w, &ms);
	if (r != -EIO || w.result != -EIO || w.seq == 0)
		T_FAIL("chip unbound: %s, result %d, seq %llu after %llu ms; expected EIO", pbus_strerror(r),
		       w.result, (unsigned long long)w.seq, (unsigned long long)ms);
	T_EQ(kenv_bind(PWM_DRIVER, "pbus-mock-pwm.0"), 0);
	T_EQ(set_float("fan", 25.0f, PBUS_CLIENT_SET_APPLIED, &w, NULL), 0);
	T_EQ(suite_pwm_state(1, state, sizeof(state)), 0);
	if (!strstr(state, "enabled=1 period=40000 duty=10000 "))
		T_FAIL("fan=25 acknowledged after the chip came back while the mock PWM shows: %s", state);
	return NULL;
}

/* pbus-scpi sends its settings with APPLIED: after OUTP ON;*OPC? the line
 * is high, read at once. */
static const char *scpi_opc_waits_for_the_line(void)
{
	char response[256], state[256], want[64];
	int port = start_scpi();

	if (port < 0)
		T_FAIL("pbus-scpi did not start: %s", strerror(-port));
	scpi_fd = scpi_connect(port);
	if (scpi_fd < 0)
		T_FAIL("cannot connect to pbus-scpi on port %d: %s", port, strerror(-scpi_fd));
	for (int k = 1; k <= 100; k++) {
		bool v = k & 1;

		T_EQ(scpi_query(v ? "OUTP ON;*OPC?\n" : "OUTP OFF;*OPC?\n", response, sizeof(response)), 0);
		if (strcmp(response, "1"))
			T_FAIL("round %d: *OPC? answered '%s'", k, response);
		if (kenv_sim_get_value("pbus-sim0", 0) != (int)v)
			T_FAIL("round %d: OUTP %s;*OPC? answered 1 while line A0 is %d", k, v ? "ON" : "OFF", !v);
	}
	/* *WAI, then a query in the same message: the line first. */
	T_EQ(scpi_query("OUTP ON;*WAI;:OUTP?\n", response, sizeof(response)), 0);
	T_EXPECT(!strcmp(response, "1") && kenv_sim_get_value("pbus-sim0", 0) == 1);
	for (int k = 0; k <= 10; k++) {
		snprintf(want, sizeof(want), "SYST:FAN %d;*OPC?\n", 10 * k);
		T_EQ(scpi_query(want, response, sizeof(response)), 0);
		T_EXPECT(!strcmp(response, "1"));
		snprintf(want, sizeof(want), " duty=%d ", 4000 * k);
		T_EQ(suite_pwm_state(1, state, sizeof(state)), 0);
		if (!strstr(state, want))
			T_FAIL("SYST:FAN %d;*OPC? answered 1 while the mock PWM shows: %s", 10 * k, state);
	}
	T_EQ(scpi_query("SYST:ERR?\n", response, sizeof(response)), 0);
	if (strncmp(response, "0,", 2))
		T_FAIL("SYST:ERR? after the settings: %s", response);
	return NULL;
}

/* pbus-hwd killed: nobody applies until pbusd restarts it (1 s later):
 * ETIMEDOUT after --apply-timeout (500 ms), the value written; once the
 * new pbus-hwd runs, SETs are applied at the reply again. */
static const char *hwd_killed_etimedout(void)
{
	pid_t old = hwd_pid(), now = 0;
	struct pbus_write w;
	uint64_t ms;
	int r;

	T_EXPECT(old > 0);
	T_EQ(kill(old, SIGKILL), 0);
	r = set_bool("relay", true, PBUS_CLIENT_SET_APPLIED, &w, &ms);
	if (r != -ETIMEDOUT || w.result != -ETIMEDOUT || w.seq == 0)
		T_FAIL("pbus-hwd killed: %s, result %d, seq %llu after %llu ms; expected ETIMEDOUT",
		       pbus_strerror(r), w.result, (unsigned long long)w.seq, (unsigned long long)ms);
	if (ms < APPLY_TIMEOUT_MS || ms > APPLY_TIMEOUT_MS + 400)
		T_FAIL("ETIMEDOUT after %llu ms, expected about %d", (unsigned long long)ms, APPLY_TIMEOUT_MS);
	/* Unbound parameters do not wait meanwhile. */
	{
		double volts = 3;

		T_EQ(set1("plain", &volts, sizeof(volts), PBUS_CLIENT_SET_APPLIED, &w, &ms), 0);
		T_EXPECT(ms < APPLY_TIMEOUT_MS);
	}
	for (int i = 0; i < 500; i++) {
		now = hwd_pid();
		if (now > 0 && now != old)
			break;
		suite_sleep_ms(10);
	}
	T_EXPECT(now > 0 && now != old);
	/* The new pbus-hwd applies the value written meanwhile at its start. */
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 1, WAIT_MS), 0);
	for (int k = 0; k < 10; k++) {
		r = set_bool("relay", k % 2 == 1, PBUS_CLIENT_SET_APPLIED, &w, &ms);
		if (r != 0)
			T_FAIL("round %d after the restart: %s after %llu ms", k, pbus_strerror(r),
			       (unsigned long long)ms);
		T_EQ(kenv_sim_get_value("pbus-sim0", 0), k % 2 == 1);
	}
	return NULL;
}

static const char *stops(void)
{
	int status = -1;

	if (scpi_fd >= 0)
		close(scpi_fd);
	if (scpi_pid > 0) {
		kill(scpi_pid, SIGTERM);
		waitpid(scpi_pid, NULL, 0);
		scpi_pid = 0;
	}
	pbus_client_close(client);
	client = NULL;
	status = suite_stop_pbusd(daemon_pid);
	T_EXPECT(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	daemon_pid = 0;
	return NULL;
}

int main(void)
{
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	suite_init();
	unlink(LOG_PATH);
	unlink(SCPI_LOG_PATH);
	r = loopback_up();
	if (r < 0)
		printf("# cannot bring lo up: %s (pbus-scpi will not be reachable)\n", strerror(-r));
	SUITE_RUN("applied/start", starts);
	if (!client) {
		show_logs();
		return suite_exit();
	}
	SUITE_RUN("applied/gpio-line-set-at-reply", gpio_line_set_at_reply);
	SUITE_RUN("applied/persistent-output", persistent_output);
	SUITE_RUN("applied/pwm-duty-at-reply", pwm_duty_at_reply);
	SUITE_RUN("applied/batch-with-unbound", batch_with_unbound);
	SUITE_RUN("applied/gpio-chip-removed-eio", gpio_chip_removed_eio);
	SUITE_RUN("applied/pwm-unbound-eio", pwm_unbound_eio);
	SUITE_RUN("applied/scpi-opc-waits-for-the-line", scpi_opc_waits_for_the_line);
	SUITE_RUN("applied/hwd-killed-etimedout", hwd_killed_etimedout);
	SUITE_RUN("applied/stop", stops);
	if (suite_failures)
		show_logs();
	if (scpi_pid > 0) {
		kill(scpi_pid, SIGKILL);
		waitpid(scpi_pid, NULL, 0);
	}
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	return suite_exit();
}
