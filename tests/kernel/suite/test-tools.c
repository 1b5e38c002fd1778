/* SPDX-License-Identifier: MIT */
/*
 * test-tools.c - the hardware bring-up commands of pbus (`pbus gpio`, `pbus
 * i2c`, `pbus spi`, docs/cli.md) run as /usr/bin/pbus in the guest against
 * the real devices of ENVIRONMENT.md: stdout, stderr and exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/suite.h"
#include "parambus/hw/gpio.h"

#define PBUS "/usr/bin/pbus"
#define OUT_PATH "/tmp/pbus-tools.out"
#define ERR_PATH "/tmp/pbus-tools.err"
#define MOCK_SPI_DBG "/sys/kernel/debug/pbus-mock-spi"

static char out[65536];
static char err[4096];
static int status; /* exit status, or 128 + signal */

static void read_all(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return;
	while (used + 1 < size && (n = read(fd, buf + used, size - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = 0;
	close(fd);
}

/* Start pbus with @args (NULL-terminated, without "pbus"), stdin from the
 * file @input (/dev/null, or a pseudo-terminal's slave), stdout and stderr
 * to OUT_PATH / ERR_PATH; returns the pid. */
static pid_t spawn_input(char **args, const char *input)
{
	char *argv[32];
	int n = 0;
	pid_t pid;

	argv[n++] = (char *)"pbus";
	while (args[n - 1] && n < 31) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int o = open(OUT_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ERR_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int n = open(input, O_RDWR | O_NOCTTY);

		if (o < 0 || e < 0 || n < 0)
			_exit(126);
		dup2(n, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(PBUS, argv);
		_exit(127);
	}
	return pid;
}

/* stdin is no terminal: what a script sees (i2c detect wants -y). */
static pid_t spawn(char **args)
{
	return spawn_input(args, "/dev/null");
}

/* Wait for @pid up to @timeout_ms (then SIGKILL); fill out/err/status. */
static void finish(pid_t pid, unsigned timeout_ms)
{
	uint64_t end = suite_now_ms() + timeout_ms;
	int wstatus = 0;

	for (;;) {
		pid_t r = waitpid(pid, &wstatus, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 || suite_now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &wstatus, 0);
			break;
		}
		suite_sleep_ms(10);
	}
	status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	read_all(OUT_PATH, out, sizeof(out));
	read_all(ERR_PATH, err, sizeof(err));
}

/* Run pbus with the given arguments (NULL-terminated) to completion. */
static void run(const char *first, ...)
{
	char *args[32];
	int n = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
		args[n++] = (char *)a;
	va_end(ap);
	args[n] = NULL;
	finish(spawn(args), 20000);
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool ok;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		return false;
	ok = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

/* @text on one line (newlines as \n), cut at 300 bytes, for reasons;
 * four rotating buffers so that one message can use several. */
static const char *flat(const char *text)
{
	static char bufs[4][640];
	static int next;
	char *buf = bufs[next++ % 4];
	size_t used = 0;

	for (const char *p = text; *p && used < 300; p++) {
		if (*p == '\n') {
			buf[used++] = '\\';
			buf[used++] = 'n';
		} else {
			buf[used++] = *p;
		}
	}
	buf[used] = 0;
	return buf;
}

#define T_OUT(expected)                                                                        \
	do {                                                                                   \
		if (status != 0 || strcmp(out, (expected)) || err[0])                           \
			T_FAIL("status %d, stdout '%s' (expected '%s'), stderr '%s'", status, flat(out), \
			       flat(expected), flat(err));                                               \
	} while (0)

/* Exit @code, nothing on stdout, exactly one line on stderr matching @re. */
#define T_ERROR(code, re)                                                                          \
	do {                                                                                       \
		if (status != (code) || out[0] || suite_count(err, "\n") != 1 || !matches(err, (re))) \
			T_FAIL("status %d (expected %d), stdout '%s', stderr '%s' (expected /%s/)",  \
			       status, (code), flat(out), flat(err), (re));                                    \
	} while (0)

static int sim_value(unsigned offset)
{
	return kenv_sim_get_value("pbus-sim0", offset);
}

/* Wait until line @offset of pbus-sim0 is requested (true) or free. */
static bool wait_line_used(unsigned offset, bool used)
{
	struct pbus_gpio_chip *chip;
	bool ok = false;

	if (pbus_gpio_chip_open_by_label("pbus-sim0", &chip) < 0)
		return false;
	for (int i = 0; i < 300 && !ok; i++) {
		struct pbus_gpio_line_info info;

		if (pbus_gpio_chip_get_line_info(chip, offset, &info) == 0 && info.used == used)
			ok = true;
		else
			suite_sleep_ms(10);
	}
	pbus_gpio_chip_close(chip);
	/* The kernel marks the line used before it has finished the request
	 * (edge detection is set up after): give it a moment. */
	if (ok && used)
		suite_sleep_ms(100);
	return ok;
}

/* ---- help --------------------------------------------------------------- */

static const char *help_lists_commands(void)
{
	run("--help", NULL);
	T_EXPECT(status == 0);
	T_EXPECT(matches(out, "^  gpio +GPIO"));
	T_EXPECT(matches(out, "^  i2c +I2C"));
	T_EXPECT(matches(out, "^  spi +SPI"));
	run("help", "gpio", NULL);
	T_EXPECT(status == 0 && matches(out, "^Usage: pbus \\[-i NAME\\] gpio COMMAND"));
	run("i2c", "--help", NULL);
	T_EXPECT(status == 0 && matches(out, "^Usage: pbus \\[-i NAME\\] i2c COMMAND"));
	run("spi", "-h", NULL);
	T_EXPECT(status == 0 && matches(out, "^Usage: pbus \\[-i NAME\\] spi COMMAND"));
	static const char *const subs[][2] = {
		{"gpio", "detect"}, {"gpio", "info"}, {"gpio", "get"},   {"gpio", "set"},
		{"gpio", "monitor"}, {"i2c", "detect"}, {"i2c", "get"},  {"i2c", "set"},
		{"i2c", "funcs"},   {"i2c", "dump"},   {"i2c", "transfer"},
		{"spi", "info"},    {"spi", "transfer"},
	};
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char pattern[128];

		run(subs[i][0], subs[i][1], "--help", NULL);
		snprintf(pattern, sizeof(pattern), "^Usage: pbus \\[-i NAME\\] %s %s", subs[i][0],
			 subs[i][1]);
		if (status != 0 || !matches(out, pattern) || !strstr(out, "--help"))
			T_FAIL("%s %s --help: status %d, '%s'", subs[i][0], subs[i][1], status, flat(out));
	}
	run("gpio", NULL);
	T_ERROR(2, "^pbus: gpio: no command given");
	run("gpio", "bogus", NULL);
	T_ERROR(2, "^pbus: gpio: unknown command 'bogus'");
	run("i2c", "get", "--bogus", NULL);
	T_ERROR(2, "^pbus: i2c get: unknown option '--bogus' \\(see 'pbus i2c get --help'\\)$");
	run("spi", "nope", NULL);
	T_ERROR(2, "^pbus: spi: unknown command 'nope'");
	return NULL;
}

/* ---- gpio --------------------------------------------------------------- */

static const char *gpio_detect(void)
{
	run("gpio", "detect", NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EXPECT(matches(out, "^gpiochip[0-9]+ \\[pbus-sim0\\] \\(16 lines\\)$"));
	T_EXPECT(matches(out, "^gpiochip[0-9]+ \\[pbus-sim1\\] \\(8 lines\\)$"));
	T_EQ(suite_count(out, "\n"), 2);
	/* -i is ignored */
	run("-i", "nope", "gpio", "detect", NULL);
	T_EXPECT(status == 0 && suite_count(out, "\n") == 2);
	run("gpio", "detect", "extra", NULL);
	T_ERROR(2, "^pbus: gpio detect: unexpected argument 'extra'");
	return NULL;
}

static const char *gpio_info(void)
{
	run("gpio", "info", "pbus-sim1", NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EQ(suite_count(out, "\n"), 9);
	T_EXPECT(matches(out, "^gpiochip[0-9]+ \\[pbus-sim1\\] \\(8 lines\\)$"));
	T_EXPECT(matches(out, "^ +0 +B0 +- +input "));
	T_EXPECT(matches(out, "^ +7 +B7 +- +input "));
	run("gpio", "info", NULL);
	T_EXPECT(status == 0);
	T_EQ(suite_count(out, "\n"), 2 + 16 + 8);
	run("gpio", "info", "nope", NULL);
	T_ERROR(3, "^pbus: gpio: no chip 'nope'$");
	return NULL;
}

static const char *gpio_get(void)
{
	char path[64], number[64];

	T_EQ(kenv_sim_set_pull("pbus-sim0", 5, 1), 0);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 4, 0), 0);
	run("gpio", "get", "pbus-sim0", "A5", "4", NULL);
	T_OUT("A5=1\n4=0\n");
	/* CHIP as a path, a name and a number */
	T_EXPECT(kenv_gpiochip_by_label("pbus-sim0", path, sizeof(path)) >= 0);
	run("gpio", "get", path, "5", NULL);
	T_OUT("5=1\n");
	run("gpio", "get", path + 5, "A5", NULL);
	T_OUT("A5=1\n");
	snprintf(number, sizeof(number), "%s", path + strlen("/dev/gpiochip"));
	run("gpio", "get", number, "A5", NULL);
	T_OUT("A5=1\n");
	T_EQ(kenv_sim_set_pull("pbus-sim0", 5, 0), 0);
	run("gpio", "get", "pbus-sim0", "A5", NULL);
	T_OUT("A5=0\n");
	return NULL;
}

static const char *gpio_set(void)
{
	char *args[] = {"gpio", "set", "pbus-sim0", "A3=1", "A8=0", "--hold-ms", "4000", NULL};
	pid_t pid;

	/* Not a terminal, no --hold-ms: set and release at once. */
	run("gpio", "set", "pbus-sim0", "A3=1", NULL);
	T_OUT("");
	T_EXPECT(wait_line_used(3, false));
	/* Held: the level shows in gpio-sim while pbus holds the line ... */
	T_EQ(kenv_sim_set_pull("pbus-sim0", 8, 1), 0);
	pid = spawn(args);
	if (!wait_line_used(3, true)) {
		finish(pid, 0);
		T_FAIL("A3 never requested: status %d, '%s'", status, flat(err));
	}
	T_EQ(sim_value(3), 1);
	T_EQ(sim_value(8), 0);
	/* ... and reverts to the pull when pbus releases it. */
	kill(pid, SIGINT);
	finish(pid, 5000);
	T_OUT("");
	T_EQ(sim_value(3), 0);
	T_EQ(sim_value(8), 1);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 8, 0), 0);
	/* stdin a terminal, no --hold-ms: held until Ctrl-C */
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	T_EXPECT(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
	pid = spawn_input((char *[]){"gpio", "set", "pbus-sim0", "A10=1", NULL}, ptsname(master));
	if (!wait_line_used(10, true)) {
		close(master);
		finish(pid, 0);
		T_FAIL("A10 never requested: status %d, '%s'", status, flat(err));
	}
	suite_sleep_ms(300);
	T_EQ(sim_value(10), 1);
	T_EXPECT(waitpid(pid, NULL, WNOHANG) == 0); /* still holding */
	kill(pid, SIGINT);
	finish(pid, 5000);
	close(master);
	T_OUT("holding the lines; Ctrl-C releases them\n");
	T_EQ(sim_value(10), 0);
	/* --hold-ms runs out by itself */
	uint64_t start = suite_now_ms();
	run("gpio", "set", "pbus-sim0", "3=1", "--hold-ms", "200", NULL);
	T_OUT("");
	T_EXPECT(suite_now_ms() - start >= 200);
	return NULL;
}

static const char *gpio_monitor(void)
{
	char *args[] = {"gpio", "monitor", "pbus-sim0", "A6", "A9", "--count", "2", NULL};
	char *rising[] = {"gpio", "monitor", "pbus-sim0", "A6", "--edge", "rising", "--count", "1", NULL};
	pid_t pid;

	pid = spawn(args);
	if (!wait_line_used(6, true)) {
		finish(pid, 0);
		T_FAIL("A6 never requested: status %d, '%s'", status, flat(err));
	}
	/* real edges are not nanoseconds apart: let gpiolib see each level */
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 1), 0);
	suite_sleep_ms(200);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 9, 1), 0);
	finish(pid, 10000);
	kenv_sim_set_pull("pbus-sim0", 9, 0);
	if (status != 0 || err[0] || suite_count(out, "\n") != 2)
		T_FAIL("status %d, stdout '%s', stderr '%s'", status, flat(out), flat(err));
	if (!matches(out, "^[0-9]+\\.[0-9]{9} 6 A6 rising 1\n[0-9]+\\.[0-9]{9} 9 A9 rising 2\n$"))
		T_FAIL("monitor output: '%s'", flat(out));
	/* --edge rising ignores the falling edge */
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 1), 0);
	pid = spawn(rising);
	if (!wait_line_used(6, true)) {
		finish(pid, 0);
		T_FAIL("A6 never requested: status %d, '%s'", status, flat(err));
	}
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 0), 0);
	suite_sleep_ms(200);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 1), 0);
	finish(pid, 10000);
	if (status != 0 || !matches(out, "^[0-9]+\\.[0-9]{9} 6 A6 rising 1\n$"))
		T_FAIL("monitor --edge rising output: '%s'", flat(out));
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 0), 0);
	return NULL;
}

/* --bias and --active-low on inputs: gpio-sim's line follows the bias the
 * request asks for; active-low inverts the value read. */
static const char *gpio_bias_active_low(void)
{
	char *monitor[] = {"gpio", "monitor", "-l", "pbus-sim0", "A6", "--count", "1", NULL};
	pid_t pid;

	T_EQ(kenv_sim_set_pull("pbus-sim0", 12, 0), 0);
	run("gpio", "get", "--bias", "pull-up", "pbus-sim0", "A12", NULL);
	T_OUT("A12=1\n");
	run("gpio", "get", "-b", "pull-down", "pbus-sim0", "A12", NULL);
	T_OUT("A12=0\n");
	run("gpio", "get", "-b", "pull-up", "-l", "pbus-sim0", "A12", NULL);
	T_OUT("A12=0\n");
	run("gpio", "get", "--bias", "as-is", "pbus-sim0", "A12", NULL);
	T_EXPECT(status == 0);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 13, 1), 0);
	run("gpio", "get", "pbus-sim0", "A13", NULL);
	T_OUT("A13=1\n");
	run("gpio", "get", "--active-low", "pbus-sim0", "A13", NULL);
	T_OUT("A13=0\n");
	T_EQ(kenv_sim_set_pull("pbus-sim0", 13, 0), 0);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 12, 0), 0);
	/* monitor -l: the rising level is a falling edge of the active-low line */
	pid = spawn(monitor);
	if (!wait_line_used(6, true)) {
		finish(pid, 0);
		T_FAIL("A6 never requested: status %d, '%s'", status, flat(err));
	}
	T_EQ(kenv_sim_set_pull("pbus-sim0", 6, 1), 0);
	finish(pid, 10000);
	kenv_sim_set_pull("pbus-sim0", 6, 0);
	if (status != 0 || !matches(out, "^[0-9]+\\.[0-9]{9} 6 A6 falling 1\n$"))
		T_FAIL("monitor -l: status %d, '%s', '%s'", status, flat(out), flat(err));
	return NULL;
}

/* set -l drives the low level for 1; --drive shows in the line's info. */
static const char *gpio_active_low_drive(void)
{
	char *low[] = {"gpio", "set", "-l", "pbus-sim0", "A3=1", "--hold-ms", "5000", NULL};
	char *drain[] = {"gpio", "set", "--drive", "open-source", "pbus-sim0", "A11=1", "--hold-ms",
			 "5000", NULL};
	pid_t pid;

	pid = spawn(low);
	if (!wait_line_used(3, true)) {
		finish(pid, 0);
		T_FAIL("A3 never requested: status %d, '%s'", status, flat(err));
	}
	T_EQ(sim_value(3), 0);
	kill(pid, SIGINT);
	finish(pid, 5000);
	T_EXPECT(status == 0);
	pid = spawn(drain);
	if (!wait_line_used(11, true)) {
		finish(pid, 0);
		T_FAIL("A11 never requested: status %d, '%s'", status, flat(err));
	}
	/* (this run's output replaces the holder's, which prints nothing) */
	run("gpio", "info", "pbus-sim0", NULL);
	T_EXPECT(status == 0);
	if (!matches(out, "^ +11 +A11 +pbus +output drive=open-source$"))
		T_FAIL("gpio info while held open-source: '%s'", flat(out));
	kill(pid, SIGINT);
	finish(pid, 5000);
	T_EXPECT(status == 0);
	return NULL;
}

/* --toggle: the level flips after each period; a last 0 ends the sequence. */
static const char *gpio_toggle(void)
{
	char *once[] = {"gpio", "set", "--toggle", "400,0", "pbus-sim0", "A14=1", "--hold-ms", "3000",
			NULL};
	char *blink[] = {"gpio", "set", "--toggle", "100ms", "pbus-sim0", "A15=0", "--hold-ms", "1500",
			 NULL};
	int flips = 0, last;
	uint64_t start;
	pid_t pid;

	pid = spawn(once);
	if (!wait_line_used(14, true)) {
		finish(pid, 0);
		T_FAIL("A14 never requested: status %d, '%s'", status, flat(err));
	}
	T_EQ(sim_value(14), 1);
	suite_sleep_ms(800);
	T_EQ(sim_value(14), 0);
	suite_sleep_ms(600);
	T_EQ(sim_value(14), 0); /* not repeated */
	kill(pid, SIGINT);
	finish(pid, 5000);
	T_EXPECT(status == 0 && !out[0] && !err[0]);
	/* repeating: about ten flips in a second */
	pid = spawn(blink);
	if (!wait_line_used(15, true)) {
		finish(pid, 0);
		T_FAIL("A15 never requested: status %d, '%s'", status, flat(err));
	}
	last = sim_value(15);
	start = suite_now_ms();
	while (suite_now_ms() - start < 1000) {
		int v = sim_value(15);

		flips += v != last;
		last = v;
		suite_sleep_ms(10);
	}
	finish(pid, 5000); /* ends by itself at --hold-ms */
	T_EXPECT(status == 0 && !err[0]);
	if (flips < 6 || flips > 12)
		T_FAIL("--toggle 100ms: %d flips in 1 s", flips);
	/* no terminal, no --hold-ms: the sequence, then exit */
	start = suite_now_ms();
	run("gpio", "set", "--toggle", "200,0", "pbus-sim0", "A14=1", NULL);
	T_OUT("");
	T_EXPECT(suite_now_ms() - start >= 200);
	return NULL;
}

/* monitor -w: a timeout with --count is status 5, without it the end. */
static const char *gpio_monitor_timeout(void)
{
	uint64_t start = suite_now_ms();

	run("gpio", "monitor", "pbus-sim0", "A1", "--count", "1", "-w", "0.5", NULL);
	T_ERROR(5, "^pbus: gpio monitor pbus-sim0 A1: timed out after 0.5 s with 0 of 1 events$");
	T_EXPECT(suite_now_ms() - start >= 500);
	run("gpio", "monitor", "pbus-sim0", "A1", "--timeout", "0.3", NULL);
	T_OUT("");
	run("gpio", "get", "--drive", "open-drain", "pbus-sim0", "A1", NULL);
	T_ERROR(2, "^pbus: gpio get: --drive applies only to gpio set ");
	return NULL;
}

static const char *gpio_errors(void)
{
	char *hold[] = {"gpio", "set", "pbus-sim0", "A7=1", "--hold-ms", "5000", NULL};
	pid_t pid;

	run("gpio", "get", "nope", "A1", NULL);
	T_ERROR(3, "^pbus: gpio: no chip 'nope'$");
	run("gpio", "get", "pbus-sim0", "Z9", NULL);
	T_ERROR(1, "^pbus: gpio get pbus-sim0 Z9: no line named 'Z9'$");
	run("gpio", "get", "pbus-sim1", "A1", NULL);
	T_ERROR(1, "^pbus: gpio get pbus-sim1 A1: no line named 'A1'$");
	run("gpio", "get", "pbus-sim0", "16", NULL);
	T_ERROR(1, "^pbus: gpio get pbus-sim0 16: no line 16 \\(the chip has 16 lines\\)$");
	run("gpio", "get", "pbus-sim0", "A1", "1", NULL);
	T_ERROR(1, "^pbus: gpio get pbus-sim0 1: line 1 given twice$");
	run("gpio", "get", "pbus-sim0", NULL);
	T_ERROR(2, "^pbus: gpio get: no LINE given");
	run("gpio", "set", "pbus-sim0", "A3", NULL);
	T_ERROR(2, "^pbus: gpio set: expected LINE=VALUE, not 'A3'");
	run("gpio", "set", "pbus-sim0", "A3=2", NULL);
	T_ERROR(1, "^pbus: gpio set pbus-sim0 A3=2: value must be 0 or 1$");
	run("gpio", "set", "pbus-sim0", "A3=1", "--hold-ms", "x", NULL);
	T_ERROR(2, "^pbus: gpio set: --hold-ms: not a number");
	run("gpio", "set", "nope", "A3=1", NULL);
	T_ERROR(3, "^pbus: gpio: no chip 'nope'$");
	run("gpio", "monitor", "pbus-sim0", "A1", "--edge", "up", NULL);
	T_ERROR(2, "^pbus: gpio monitor: --edge: expected rising, falling or both, not 'up'");
	run("gpio", "monitor", "pbus-sim0", "A1", "--count", "0", NULL);
	T_ERROR(2, "^pbus: gpio monitor: --count: not a positive number");
	run("gpio", "monitor", "pbus-sim0", "A1", "--count", NULL);
	T_ERROR(2, "^pbus: gpio monitor: option '--count' needs an argument");
	/* a line held by someone else */
	pid = spawn(hold);
	if (!wait_line_used(7, true)) {
		finish(pid, 0);
		T_FAIL("A7 never requested: %s", flat(err));
	}
	char *busy[] = {"gpio", "get", "pbus-sim0", "A7", NULL};
	char saved_err[sizeof(err)];
	pid_t other = fork();
	if (other == 0) {
		/* separate files so as not to clobber the holder's output */
		int o = open("/tmp/pbus-busy.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open("/tmp/pbus-busy.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		execv(PBUS, (char *[]){"pbus", busy[0], busy[1], busy[2], busy[3], NULL});
		_exit(127);
	}
	int wstatus;
	waitpid(other, &wstatus, 0);
	read_all("/tmp/pbus-busy.err", saved_err, sizeof(saved_err));
	kill(pid, SIGTERM);
	finish(pid, 5000);
	T_EXPECT(status == 0);
	T_EXPECT(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 1);
	if (!matches(saved_err, "^pbus: gpio get pbus-sim0 A7: a line is already in use \\(EBUSY\\)\n$"))
		T_FAIL("busy: '%s'", flat(saved_err));
	return NULL;
}

/* ---- i2c ---------------------------------------------------------------- */

static int stub_bus = -1, mock_bus = -1;
static char stub[16], mock[16];

static const char *i2c_find_buses(void)
{
	stub_bus = kenv_i2c_bus_by_name("SMBus stub driver");
	mock_bus = kenv_i2c_bus_by_name("pbus-mock-i2c");
	T_EXPECT(stub_bus >= 0 && mock_bus >= 0);
	snprintf(stub, sizeof(stub), "%d", stub_bus);
	snprintf(mock, sizeof(mock), "%d", mock_bus);
	return NULL;
}

static const char *i2c_detect(void)
{
	char path[32];

	T_EXPECT(stub_bus >= 0);
	run("i2c", "detect", "-y", stub, NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EXPECT(matches(out, "^     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f$"));
	T_EXPECT(matches(out, "^00:          -- -- --"));
	T_EXPECT(matches(out, "^50: 50 -- -- -- -- -- -- -- -- -- -- -- -- -- -- --$"));
	T_EQ(suite_count(out, " 50"), 1); /* the row label "50:" starts its line */
	T_EQ(suite_count(out, "--"), 0x75 - 1);
	T_EQ(suite_count(out, "\n"), 9);
	/* the mock adapter, by path */
	snprintf(path, sizeof(path), "/dev/i2c-%d", mock_bus);
	run("i2c", "detect", path, "--yes", NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EXPECT(matches(out, "^40: -- -- -- -- -- -- -- -- 48 49 -- -- -- -- -- --$"));
	T_EXPECT(matches(out, "^50: -- 51 --"));
	T_EQ(suite_count(out, "--"), 0x75 - 3);
	run("i2c", "detect", "99", NULL);
	T_ERROR(3, "^pbus: i2c detect 99: no bus /dev/i2c-99 \\(is i2c-dev loaded\\?\\)$");
	run("i2c", "detect", NULL);
	T_ERROR(2, "^pbus: i2c detect: no BUS given");
	run("i2c", "detect", "/dev/null", NULL);
	T_ERROR(1, "^pbus: i2c detect /dev/null: /dev/null is not an i2c-dev node$");
	return NULL;
}

/* detect without -y: refused without a terminal, asked on one. */
static const char *i2c_detect_asks(void)
{
	const char *answers[] = {"n\n", "y\n"};

	T_EXPECT(stub_bus >= 0);
	run("i2c", "detect", stub, NULL);
	T_ERROR(2, "^pbus: i2c detect [0-9]+: probing may disturb the devices on the bus; use -y to "
		   "probe without asking \\(stdin is not a terminal\\)$");
	for (int k = 0; k < 2; k++) {
		int master = posix_openpt(O_RDWR | O_NOCTTY);
		pid_t pid;

		T_EXPECT(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
		pid = spawn_input((char *[]){"i2c", "detect", stub, NULL}, ptsname(master));
		T_EXPECT(write(master, answers[k], 2) == 2);
		finish(pid, 10000);
		close(master);
		if (!matches(err, "^probe bus [0-9]+\\? \\[y/N\\] "))
			T_FAIL("no question: '%s'", flat(err));
		if (k == 0 && (status != 1 || out[0] || !matches(err, "pbus: i2c detect [0-9]+: not probed$")))
			T_FAIL("answered n: status %d, '%s', '%s'", status, flat(out), flat(err));
		if (k == 1 && (status != 0 || !matches(out, "^50: 50 --")))
			T_FAIL("answered y: status %d, '%s', '%s'", status, flat(out), flat(err));
	}
	return NULL;
}

static const char *i2c_dump(void)
{
	T_EXPECT(mock_bus >= 0);
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/0x48/regs", "reset"), 0);
	run("i2c", "dump", mock, "0x48", NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EQ(suite_count(out, "\n"), 17);
	T_EXPECT(matches(out, "^     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f    0123456789abcdef$"));
	T_EXPECT(matches(out, "^00: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f    \\.\\?{15}$"));
	T_EXPECT(matches(out, "^40: 40 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f    @ABCDEFGHIJKLMNO$"));
	T_EXPECT(matches(out, "^f0: f0 f1 f2 f3 f4 f5 f6 f7 f8 f9 fa fb fc fd fe ff    \\?{15}\\.$"));
	/* a range across two rows: the rest blank */
	run("i2c", "dump", mock, "72", "-r", "0x0e-17", NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EQ(suite_count(out, "\n"), 3);
	T_EXPECT(matches(out, "^00: {43}0e 0f {18}\\?\\?$"));
	T_EXPECT(matches(out, "^10: 10 11 {46}\\?\\? {14}$"));
	/* words: SMBus read word data at each register, low byte first */
	run("i2c", "dump", mock, "0x48", "--word", "--range", "0x00-0x07", NULL);
	T_OUT("     0,8  1,9  2,a  3,b  4,c  5,d  6,e  7,f\n"
	      "00: 0100 0201 0302 0403 0504 0605 0706 0807 \n");
	run("i2c", "dump", mock, "0x52", NULL);
	T_ERROR(3, "^pbus: i2c dump [0-9]+ 0x52: no device at address 0x52 \\(ENXIO\\)$");
	run("i2c", "dump", stub, "0x50", "-r", "0x10-0x10", NULL);
	T_EXPECT(status == 0 && matches(out, "^10: ab {49}\\? {15}$"));
	return NULL;
}

static const char *i2c_transfer(void)
{
	T_EXPECT(mock_bus >= 0);
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/0x48/regs", "reset"), 0);
	/* write the pointer, repeated start, read four: one transaction */
	run("i2c", "transfer", mock, "w1@0x48", "0x10", "r4", NULL);
	T_OUT("0x10 0x11 0x12 0x13\n");
	T_EXPECT(suite_file_contains("/sys/kernel/debug/pbus-mock-i2c/last_xfer", "kind=i2c ret=2 nmsgs=2"));
	/* '+' counts up, '=' repeats */
	run("i2c", "transfer", mock, "w5@0x48", "0x20", "0xaa", "0xbb+", NULL);
	T_OUT("");
	run("i2c", "transfer", mock, "w4@72", "0x30", "0x77=", NULL);
	T_OUT("");
	T_EXPECT(suite_file_contains("/sys/kernel/debug/pbus-mock-i2c/0x48/regs",
				     "20: aa bb bc bd 24"));
	T_EXPECT(suite_file_contains("/sys/kernel/debug/pbus-mock-i2c/0x48/regs",
				     "30: 77 77 77 33"));
	run("i2c", "transfer", mock, "w1@0x48", "0x20", "r4@0x48", NULL);
	T_OUT("0xaa 0xbb 0xbc 0xbd\n");
	/* two devices, two reads */
	run("i2c", "transfer", mock, "w1@0x48", "0x00", "r1", "w1@0x49", "0x00", "r2", NULL);
	T_OUT("0x00\n0xff 0xfe\n");
	run("i2c", "transfer", mock, "r1@0x52", NULL);
	T_ERROR(3, "^pbus: i2c transfer [0-9]+: no device at address 0x52 \\(ENXIO\\)$");
	run("i2c", "transfer", stub, "r1@0x50", NULL);
	T_ERROR(1, "^pbus: i2c transfer [0-9]+: the adapter has no plain I2C transfers \\(I2C_RDWR; SMBus only\\)$");
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/0x48/regs", "reset"), 0);
	return NULL;
}

static const char *i2c_get_set(void)
{
	T_EXPECT(stub_bus >= 0);
	run("i2c", "set", stub, "0x50", "0x10", "0xab", NULL);
	T_OUT("");
	run("i2c", "get", stub, "0x50", "0x10", NULL);
	T_OUT("0xab\n");
	run("i2c", "get", stub, "80", "16", NULL); /* decimal */
	T_OUT("0xab\n");
	run("i2c", "set", stub, "0x50", "0x20", "0x1234", "--word", NULL);
	T_OUT("");
	run("i2c", "get", stub, "0x50", "0x20", "--word", NULL);
	T_OUT("0x1234\n");
	run("i2c", "get", stub, "0x50", "0x20", NULL);
	T_OUT("0x34\n");
	run("i2c", "set", stub, "0x50", "0xff", "255", NULL);
	T_OUT("");
	run("i2c", "get", stub, "0x50", "255", NULL);
	T_OUT("0xff\n");
	/* the mock adapter's register files */
	run("i2c", "get", mock, "0x48", "0x10", NULL);
	T_OUT("0x10\n");
	run("i2c", "get", mock, "0x49", "0x10", NULL);
	T_OUT("0xef\n");
	run("i2c", "get", mock, "0x48", "0x10", "--word", NULL);
	T_OUT("0x1110\n");
	run("i2c", "set", mock, "0x48", "0x30", "0xbeef", "--word", NULL);
	T_OUT("");
	run("i2c", "get", mock, "0x48", "0x30", NULL); /* low byte first on the wire */
	T_OUT("0xef\n");
	run("i2c", "get", mock, "0x48", "0x31", NULL);
	T_OUT("0xbe\n");
	run("i2c", "set", mock, "0x48", "0x05", "0x5a", NULL);
	T_OUT("");
	T_EXPECT(suite_file_contains("/sys/kernel/debug/pbus-mock-i2c/0x48/regs", "00: 00 01 02 03 04 5a"));
	return NULL;
}

static const char *i2c_funcs(void)
{
	T_EXPECT(stub_bus >= 0);
	run("i2c", "funcs", stub, NULL);
	T_EXPECT(status == 0 && !err[0]);
	T_EXPECT(matches(out, "^functionality 0x0c7f0000$"));
	T_EXPECT(matches(out, "^  I2C +no$"));
	T_EXPECT(matches(out, "^  SMBus quick command +yes$"));
	T_EXPECT(matches(out, "^  SMBus block read +no$"));
	run("i2c", "funcs", mock, NULL);
	T_EXPECT(status == 0 && matches(out, "^functionality 0x0fff800b$") &&
		 matches(out, "^  I2C +yes$"));
	run("i2c", "funcs", "99", NULL);
	T_ERROR(3, "^pbus: i2c funcs 99: no bus /dev/i2c-99");
	return NULL;
}

static const char *i2c_errors(void)
{
	T_EXPECT(stub_bus >= 0);
	run("i2c", "get", mock, "0x52", "0x00", NULL);
	T_ERROR(3, "^pbus: i2c get [0-9]+ 0x52 0x00: no device at address 0x52 \\(ENXIO\\)$");
	run("i2c", "get", stub, "0x51", "0x00", NULL);
	T_ERROR(3, "^pbus: i2c get [0-9]+ 0x51 0x00: no device at address 0x51 \\(ENODEV\\)$");
	run("i2c", "set", mock, "0x52", "0", "1", NULL);
	T_ERROR(3, "^pbus: i2c set [0-9]+ 0x52 0 1: no device at address 0x52 \\(ENXIO\\)$");
	run("i2c", "get", "99", "0x50", "0", NULL);
	T_ERROR(3, "^pbus: i2c get 99 0x50 0: no bus /dev/i2c-99");
	run("i2c", "get", stub, "0x78", "0", NULL);
	T_ERROR(1, "^pbus: i2c get [0-9]+ 0x78 0: address 0x78 out of range \\(0x03-0x77\\)$");
	run("i2c", "get", stub, "2", "0", NULL);
	T_ERROR(1, "address 2 out of range \\(0x03-0x77\\)$");
	run("i2c", "get", stub, "0xzz", "0", NULL);
	T_ERROR(1, "^pbus: i2c get [0-9]+ 0xzz 0: not an address: '0xzz'");
	run("i2c", "get", stub, "0x50", "0x100", NULL);
	T_ERROR(1, "^pbus: i2c get [0-9]+ 0x50 0x100: not a register 0x00-0xff: '0x100'$");
	run("i2c", "set", stub, "0x50", "0", "0x100", NULL);
	T_ERROR(1, "^pbus: i2c set [0-9]+ 0x50 0 0x100: not a value 0x00-0xff: '0x100'$");
	run("i2c", "set", stub, "0x50", "0", "0x10000", "--word", NULL);
	T_ERROR(1, "not a value 0x0000-0xffff: '0x10000'$");
	run("i2c", "set", stub, "0x50", "0", "1x", NULL);
	T_ERROR(1, "not a value 0x00-0xff: '1x'$");
	run("i2c", "set", stub, "0x50", "0", "--", "-1", NULL); /* "-1" after "--" is no option */
	T_ERROR(1, "not a value 0x00-0xff: '-1'$");
	run("i2c", "get", stub, "0x50", NULL);
	T_ERROR(2, "^pbus: i2c get: expected BUS ADDR REG");
	run("i2c", "get", "x", "0x50", "0", NULL);
	T_ERROR(3, "^pbus: i2c get x 0x50 0: no bus x");
	/* a transfer the adapter cannot do: no word data on... every adapter
	 * here has it; a NAKing bus instead (the mock's fault) */
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/fault", "timeout"), 0);
	run("i2c", "get", mock, "0x48", "0", NULL);
	kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/fault", "none");
	T_ERROR(1, "^pbus: i2c get [0-9]+ 0x48 0: .* \\(ETIMEDOUT\\)$");
	return NULL;
}

/* ---- spi ---------------------------------------------------------------- */

static const char *spi_info(void)
{
	run("spi", "info", "/dev/spidev0.0", NULL);
	T_OUT("mode 0 (0x00000000)\nbits 8\nspeed 10000000\nbufsiz 4096\n");
	run("spi", "info", "0.1", NULL);
	T_OUT("mode 0 (0x00000000)\nbits 8\nspeed 10000000\nbufsiz 4096\n");
	run("spi", "info", "9.9", NULL);
	T_ERROR(3, "^pbus: spi info 9.9: no device /dev/spidev9.9$");
	run("spi", "info", "/dev/null", NULL);
	T_ERROR(1, "^pbus: spi info /dev/null: /dev/null is not a spidev node$");
	run("spi", "info", NULL);
	T_ERROR(2, "^pbus: spi info: no DEV given");
	return NULL;
}

static const char *spi_transfer(void)
{
	static char big[2 * 5000 + 1];

	kenv_write_file(MOCK_SPI_DBG "/log", "clear");
	run("spi", "transfer", "/dev/spidev0.0", "0a0b0c", NULL);
	T_OUT("0a0b0c\n");
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "len=3"));
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "tx=0a0b0c"));
	run("spi", "transfer", "0.1", "DE:AD:be:ef", "--speed", "500000", "--mode", "3", NULL);
	T_OUT("deadbeef\n");
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "speed=500000"));
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "mode=0x00000003"));
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "cs=1"));
	/* the mode is restored afterwards */
	run("spi", "info", "0.1", NULL);
	T_EXPECT(status == 0 && strstr(out, "mode 0 (0x00000000)\n"));
	run("spi", "transfer", "0.0", "01020304", "--bits", "16", NULL);
	T_OUT("01020304\n");
	T_EXPECT(suite_file_contains(MOCK_SPI_DBG "/last_message", "bpw=16"));
	/* errors */
	run("spi", "transfer", "0.0", "0g", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: not hex bytes: '0g'");
	run("spi", "transfer", "0.0", "abc", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: not hex bytes: 'abc'");
	run("spi", "transfer", "0.0", "", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: not hex bytes: ''");
	run("spi", "transfer", "0.0", "00", "--mode", "4", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: --mode: not a mode 0-3: '4'$");
	run("spi", "transfer", "0.0", "00", "--bits", "0", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: --bits: not a number of bits 1-32: '0'$");
	run("spi", "transfer", "0.0", "00", "--speed", "10", NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: .* \\(EINVAL\\)$");
	run("spi", "transfer", "9.9", "00", NULL);
	T_ERROR(3, "^pbus: spi transfer 9.9: no device /dev/spidev9.9$");
	run("spi", "transfer", "0.0", NULL);
	T_ERROR(2, "^pbus: spi transfer: expected DEV HEXBYTES");
	memset(big, 'a', sizeof(big) - 1);
	run("spi", "transfer", "0.0", big, NULL);
	T_ERROR(1, "^pbus: spi transfer 0.0: .* \\(EMSGSIZE\\)$");
	T_EQ(kenv_write_file(MOCK_SPI_DBG "/fault", "5"), 0);
	run("spi", "transfer", "0.0", "00", NULL);
	kenv_write_file(MOCK_SPI_DBG "/fault", "0");
	T_ERROR(1, "^pbus: spi transfer 0.0: .* \\(EIO\\)$");
	return NULL;
}

int main(void)
{
	suite_init();
	if (access(PBUS, X_OK) < 0) {
		printf("not ok tools/pbus-installed: %s missing (BUILD: bin pbus ...)\n", PBUS);
		return 1;
	}
	SUITE_RUN("tools/help", help_lists_commands);
	SUITE_RUN("tools/gpio-detect", gpio_detect);
	SUITE_RUN("tools/gpio-info", gpio_info);
	SUITE_RUN("tools/gpio-get", gpio_get);
	SUITE_RUN("tools/gpio-set", gpio_set);
	SUITE_RUN("tools/gpio-monitor", gpio_monitor);
	SUITE_RUN("tools/gpio-bias-active-low", gpio_bias_active_low);
	SUITE_RUN("tools/gpio-active-low-drive", gpio_active_low_drive);
	SUITE_RUN("tools/gpio-toggle", gpio_toggle);
	SUITE_RUN("tools/gpio-monitor-timeout", gpio_monitor_timeout);
	SUITE_RUN("tools/gpio-errors", gpio_errors);
	SUITE_RUN("tools/i2c-find-buses", i2c_find_buses);
	SUITE_RUN("tools/i2c-detect", i2c_detect);
	SUITE_RUN("tools/i2c-detect-asks", i2c_detect_asks);
	SUITE_RUN("tools/i2c-get-set", i2c_get_set);
	SUITE_RUN("tools/i2c-funcs", i2c_funcs);
	SUITE_RUN("tools/i2c-dump", i2c_dump);
	SUITE_RUN("tools/i2c-transfer", i2c_transfer);
	SUITE_RUN("tools/i2c-errors", i2c_errors);
	SUITE_RUN("tools/spi-info", spi_info);
	SUITE_RUN("tools/spi-transfer", spi_transfer);
	return suite_exit();
}
