/* SPDX-License-Identifier: MIT */
/*
 * test-demo-hw.c - the demo power supply bound to hardware, in the VM
 * (`make demo-hw` shows it with its narrative; `make test` checks it).
 *
 * pbusd serves psu-hw.pbs, compiled by pbus-gen from examples/psu/psu-hw.fdepl,
 * and starts pbus-hwd: output_enable drives the output relay (gpio-sim line
 * A0), interlock_open follows the rear-panel interlock (A1), the measured
 * voltage, current and heat-sink temperature are polled from an ADC at 0x48
 * on the mock I2C adapter, and fan_duty sets the fan's PWM (mock PWM
 * channel 0). A child process plays the analog world the instrument sits
 * in (the "plant"): a 10 ohm load behind the relay, a heat sink the fan
 * cools, written into the ADC's registers. The demo then works the
 * instrument with the real `pbus` CLI, as a user would.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "common/suite.h"

#define SCHEMA_PATH "/etc/parambus/psu-hw.pbs"
#define INSTANCE "psu-hw"
#define LOG_PATH "/tmp/pbusd-psu-hw.log"
#define ADC_REGS "/sys/kernel/debug/pbus-mock-i2c/0x48/regs"
#define PWM_STATE "/sys/kernel/debug/pbus-mock-pwm/state"
#define LOAD_OHMS 10.0
#define AMBIENT_C 25.0
#define WAIT_MS 5000

static pid_t daemon_pid, plant_pid;
static struct pbus_table *table;

static double number(const char *name)
{
	const struct pbus_param *p;
	double v = NAN;
	float f;
	bool b;

	if (pbus_table_find(table, name, &p) < 0)
		return NAN;
	if (pbus_param_get_double(p, &v) >= 0)
		return v;
	if (pbus_param_get_float(p, &f) >= 0)
		return f;
	if (pbus_param_get_bool(p, &b) >= 0)
		return b;
	return NAN;
}

/* The fan's duty cycle in 0..1, from the PWM chip's applied state. */
static double fan_fraction(void)
{
	char buf[1024];
	unsigned long long period = 0, duty = 0;
	const char *line;

	if (kenv_read_file(PWM_STATE, buf, sizeof(buf)) < 0 || !(line = strstr(buf, "pwm=0 ")))
		return 0;
	if (!strstr(line, "enabled=1"))
		return 0;
	sscanf(strstr(line, "period="), "period=%llu duty=%llu", &period, &duty);
	return period ? (double)duty / (double)period : 0;
}

/* The plant: what the ADC of a real supply would see, 50 times a second. */
static void plant(void)
{
	double temperature = AMBIENT_C;

	for (;;) {
		int relay = kenv_sim_get_value("pbus-sim0", 0);
		double vset = number("voltage_setpoint"), iset = number("current_setpoint");
		double v = 0, i = 0, fan = fan_fraction();
		unsigned mv, tenth_ma;
		int t256;
		char regs[64];

		if (relay == 1 && vset == vset && iset == iset) {
			v = fmin(vset, iset * LOAD_OHMS); /* constant current once the load asks more */
			i = v / LOAD_OHMS;
		}
		/* The pass transistor drops (30 V - v) at i; the fan cools. */
		temperature += (AMBIENT_C + (30.0 - v) * i * 4.0 * (1.0 - 0.8 * fan) - temperature) * 0.05;
		mv = (unsigned)lround(v * 1000);
		tenth_ma = (unsigned)lround(i * 10000);
		t256 = (int)lround(temperature * 256);
		snprintf(regs, sizeof(regs), "10 %02x %02x %02x %02x %02x %02x", mv >> 8, mv & 0xff,
			 tenth_ma >> 8, tenth_ma & 0xff, (t256 >> 8) & 0xff, t256 & 0xff);
		kenv_write_file(ADC_REGS, regs);
		suite_sleep_ms(20);
	}
}

/* Run `pbus -i psu-hw ARGS...` (NULL-terminated), show the command and
 * its output. */
static int pbus(const char *first, ...)
{
	const char *argv[16] = {"pbus", "-i", INSTANCE};
	char out[2048] = "";
	int fds[2], status = 0, n_args = 3;
	ssize_t n, used = 0;
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	for (const char *a = first; a && n_args < 15; a = va_arg(ap, const char *))
		argv[n_args++] = a;
	va_end(ap);
	argv[n_args] = NULL;
	printf("# $ pbus -i %s", INSTANCE);
	for (int k = 3; argv[k]; k++)
		printf(" %s", argv[k]);
	printf("\n");
	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execv("/usr/bin/pbus", (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + used, sizeof(out) - 1 - (size_t)used)) > 0)
		used += n;
	out[used] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		printf("#   %s\n", line);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int wait_near(const char *name, double want, double tolerance)
{
	uint64_t end = suite_now_ms() + WAIT_MS;
	double v;

	do {
		v = number(name);
		if (fabs(v - want) <= tolerance)
			return 0;
		suite_sleep_ms(20);
	} while (suite_now_ms() < end);
	printf("# %s is %g, waited for %g\n", name, v, want);
	return -ETIMEDOUT;
}

static int start(void)
{
	if (access(SCHEMA_PATH, R_OK) < 0) {
		printf("# %s is missing: the host's build/dev was not built (make demo-hw builds it)\n",
		       SCHEMA_PATH);
		return -ENOENT;
	}
	daemon_pid = suite_start_pbusd(SCHEMA_PATH, INSTANCE, "/tmp/psu-hw-state", LOG_PATH, NULL);
	if (daemon_pid < 0)
		return daemon_pid;
	if (pbus_table_open(INSTANCE, PBUS_OPEN_READ, &table) < 0)
		return -ENOENT;
	plant_pid = fork();
	if (plant_pid == 0) {
		plant();
		_exit(0);
	}
	return 0;
}

/* ---- the demo, step by step ------------------------------------------------ */

static const char *serves_bound_instance(void)
{
	int r = start();

	if (r < 0)
		T_FAIL("pbusd with psu-hw.pbs did not start: %s", strerror(-r));
	printf("# pbusd serves '%s' from %s; pbus-hwd runs its hardware bindings;\n"
	       "# the plant plays a 10 ohm load and a fan-cooled heat sink on the ADC.\n",
	       INSTANCE, SCHEMA_PATH);
	/* The supply starts off: the relay is open, the ADC reads 0 V. */
	T_EQ(wait_near("measured_voltage", 0, 1e-9), 0);
	T_EQ(kenv_sim_get_value("pbus-sim0", 0), 0);
	T_EQ(pbus("get", "-v", "output_enable", "measured_voltage", "temperature", "fan_duty", NULL), 0);
	return NULL;
}

static const char *switch_on(void)
{
	T_EQ(pbus("set", "voltage_setpoint=12", "current_setpoint=2", "output_enable=true", NULL), 0);
	/* Relay closed by the GPIO line; the ADC sees 12 V across 10 ohm. */
	T_EQ(wait_near("measured_voltage", 12.0, 0.0015), 0);
	T_EQ(wait_near("measured_current", 1.2, 0.00015), 0);
	T_EQ(kenv_sim_get_value("pbus-sim0", 0), 1);
	T_EQ(pbus("get", "-v", "measured_voltage", "measured_current", NULL), 0);
	return NULL;
}

static const char *current_limit(void)
{
	/* 0.5 A into 10 ohm: the supply goes constant-current at 5 V. */
	T_EQ(pbus("set", "current_setpoint=0.5", NULL), 0);
	T_EQ(wait_near("measured_voltage", 5.0, 0.0015), 0);
	T_EQ(pbus("get", "-v", "measured_voltage", "measured_current", NULL), 0);
	return NULL;
}

static const char *fan_cools(void)
{
	double warm, cooler;

	/* The heat sink warms at 30 % fan; more fan, lower temperature. */
	suite_sleep_ms(1500);
	warm = number("temperature");
	T_EQ(pbus("set", "fan_duty=100", NULL), 0);
	T_EXPECT(strstr(suite_read(PWM_STATE), "pwm=0 requested=1 enabled=1 period=40000 duty=40000"));
	suite_sleep_ms(1500);
	cooler = number("temperature");
	printf("# heat sink %.2f degC at 30 %% fan, %.2f degC at 100 %%\n", warm, cooler);
	T_EXPECT(warm > AMBIENT_C + 1 && cooler < warm - 1);
	T_EQ(pbus("get", "-v", "temperature", "fan_duty", NULL), 0);
	return NULL;
}

static const char *interlock(void)
{
	/* Someone opens the rear-panel interlock: the edge arrives as a
	 * parameter change with the kernel's timestamp. */
	T_EQ(kenv_sim_set_pull("pbus-sim0", 1, 1), 0);
	T_EQ(wait_near("interlock_open", 1, 0), 0);
	T_EQ(pbus("get", "-v", "interlock_open", NULL), 0);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 1, 0), 0);
	T_EQ(wait_near("interlock_open", 0, 0), 0);
	return NULL;
}

static const char *switch_off(void)
{
	T_EQ(pbus("set", "output_enable=false", NULL), 0);
	T_EQ(wait_near("measured_voltage", 0, 1e-9), 0);
	T_EQ(kenv_sim_get_value("pbus-sim0", 0), 0);
	T_EQ(pbus("get", "-v", "output_enable", "measured_voltage", NULL), 0);
	return NULL;
}

static const char *adc_unplugged(void)
{
	/* The ADC stops answering: the measurements turn invalid, the rest of
	 * the instrument carries on; plugged back, they recover. */
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/0x48/present", "0"), 0);
	suite_sleep_ms(300);
	T_EQ(pbus("get", "-v", "measured_voltage", NULL), 0);
	{
		const struct pbus_param *p;
		double v;

		T_EQ(pbus_table_find(table, "measured_voltage", &p), 0);
		T_EQ(pbus_param_get_double(p, &v), PBUS_STATUS_INVALID);
	}
	T_EQ(kenv_write_file("/sys/kernel/debug/pbus-mock-i2c/0x48/present", "1"), 0);
	for (int i = 0; i < 250; i++) {
		const struct pbus_param *p;
		double v;

		T_EQ(pbus_table_find(table, "measured_voltage", &p), 0);
		if (pbus_param_get_double(p, &v) == PBUS_STATUS_OK)
			break;
		suite_sleep_ms(20);
	}
	T_EQ(pbus("get", "-v", "measured_voltage", NULL), 0);
	{
		const struct pbus_param *p;
		double v;

		T_EQ(pbus_table_find(table, "measured_voltage", &p), 0);
		T_EQ(pbus_param_get_double(p, &v), PBUS_STATUS_OK);
	}
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	suite_init();
	SUITE_RUN("demo-hw/serves-bound-instance", serves_bound_instance);
	if (table) {
		SUITE_RUN("demo-hw/switch-on", switch_on);
		SUITE_RUN("demo-hw/current-limit", current_limit);
		SUITE_RUN("demo-hw/fan-cools", fan_cools);
		SUITE_RUN("demo-hw/interlock", interlock);
		SUITE_RUN("demo-hw/switch-off", switch_off);
		SUITE_RUN("demo-hw/adc-unplugged", adc_unplugged);
	}
	if (suite_failures) {
		const char *log = suite_read(LOG_PATH);

		printf("# pbusd log:\n%s\n", log ? log : "(none)");
	}
	if (plant_pid > 0)
		kill(plant_pid, SIGKILL);
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	return suite_exit();
}
