/* SPDX-License-Identifier: MIT */
/*
 * test-bindings.c - hardware bindings of parameters, end to end in the VM:
 * the real pbusd serves a schema with hw keys, starts pbus-hwd, and the
 * parameters follow (or drive) gpio-sim lines, the mock I2C registers,
 * i2c-stub and the mock PWM chip. Devices are removed and brought back while
 * in use: the parameter's status turns invalid and recovers; nothing dies.
 * pbus-hwd killed is restarted by pbusd; pbusd stopped takes it along.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <parambus/parambus.h>
#include <parambus/hw/i2c.h>

#include "common/suite.h"

#define SCHEMA_PATH "/tmp/bindings.pbs"
#define INSTANCE "bindings"
#define LOG_PATH "/tmp/pbusd-bindings.log"
#define MOCK_I2C "/sys/kernel/debug/pbus-mock-i2c"
#define PWM_DRIVER "/sys/bus/platform/drivers/pbus-mock-pwm"
#define WAIT_MS 5000

/* One binding of each kind and option; the keys as pbus-gen writes them
 * (docs/schema-format.md, "Hardware binding keys"). */
static const char schema_text[] =
	"pbus-schema 1\n"
	"interface test.Bindings 1.0\n"
	"param relay bool default=false hw=gpio-output hw-device=pbus-sim0 hw-line=A0 "
	"hw-active-low=false hw-bias=as-is hw-drive=push-pull\n"
	"param relay_n bool default=false hw=gpio-output hw-device=pbus-sim0 hw-line-offset=2 "
	"hw-active-low=true hw-bias=as-is hw-drive=push-pull\n"
	"param door bool flags=readonly class=live hw=gpio-input hw-device=pbus-sim0 hw-line=A1 "
	"hw-active-low=false hw-bias=as-is hw-edges=both hw-debounce-us=0\n"
	"param pulses uint32 flags=readonly class=live hw=gpio-input hw-device=pbus-sim0 hw-line=A3 "
	"hw-active-low=false hw-bias=as-is hw-edges=rising hw-debounce-us=0\n"
	"param beacon bool default=true hw=gpio-output hw-device=pbus-sim1 hw-line=B1 "
	"hw-active-low=false hw-bias=as-is hw-drive=push-pull\n"
	"param volts double unit=V flags=readonly class=live hw=i2c-register hw-device=pbus-mock-i2c "
	"hw-address=72 hw-register=16 hw-width=16 hw-byte-order=big hw-signed=false hw-rate-hz=50 "
	"hw-scale=0.001 hw-offset=0\n"
	"param temp double flags=readonly class=live hw=i2c-register hw-device=pbus-mock-i2c "
	"hw-address=72 hw-register=20 hw-width=16 hw-byte-order=little hw-signed=true hw-rate-hz=50 "
	"hw-scale=0.5 hw-offset=-10\n"
	"param level int8 min=-100 max=100 flags=readonly class=live hw=i2c-register "
	"hw-device=pbus-mock-i2c hw-address=677 hw-register=3 hw-width=8 hw-byte-order=big "
	"hw-signed=false hw-rate-hz=50 hw-scale=1 hw-offset=0\n"
	"param stub8 uint8 flags=readonly class=live hw=i2c-register hw-device=SMBus%20stub%20driver "
	"hw-address=80 hw-register=5 hw-width=8 hw-byte-order=big hw-signed=false hw-rate-hz=50 "
	"hw-scale=1 hw-offset=0\n"
	"param stub32 uint32 flags=readonly class=live hw=i2c-register hw-device=SMBus%20stub%20driver "
	"hw-address=80 hw-register=8 hw-width=32 hw-byte-order=big hw-signed=false hw-rate-hz=50 "
	"hw-scale=1 hw-offset=0\n"
	"param fan float unit=%25 min=0 max=100 default=30 hw=pwm-duty hw-device=pbus-mock-pwm.0 "
	"hw-channel=1 hw-period-ns=40000 hw-polarity=normal hw-scale=400 hw-offset=0\n"
	"param plain double default=1\n";

static pid_t daemon_pid;
static struct pbus_table *table;

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const struct pbus_param *param(const char *name)
{
	const struct pbus_param *p = NULL;

	if (pbus_table_find(table, name, &p) < 0)
		return NULL;
	return p;
}

/* The parameter's value as a double and its status (-errno on error). */
static int get(const char *name, double *value, struct pbus_sample *sample)
{
	const struct pbus_param *p = param(name);
	struct pbus_param_info info;
	union { bool b; int8_t i8; uint8_t u8; uint32_t u32; float f; double d; } v;
	int r;

	if (!p || pbus_param_describe(p, &info) < 0)
		return -ENOENT;
	r = pbus_param_read(p, &v, sizeof(v), sample);
	if (r < 0)
		return r;
	switch (info.type) {
	case PBUS_TYPE_BOOL: *value = v.b; break;
	case PBUS_TYPE_INT8: *value = v.i8; break;
	case PBUS_TYPE_UINT8: *value = v.u8; break;
	case PBUS_TYPE_UINT32: *value = v.u32; break;
	case PBUS_TYPE_FLOAT: *value = v.f; break;
	default: *value = v.d; break;
	}
	return r;
}

/* Wait until @name has @value (within 1e-9) and @status; 0 or -ETIMEDOUT. */
static int wait_for(const char *name, double value, int status)
{
	uint64_t end = suite_now_ms() + WAIT_MS;
	struct pbus_sample sample;
	double v = NAN;
	int s;

	do {
		s = get(name, &v, &sample);
		if (s == status && fabs(v - value) < 1e-9)
			return 0;
		suite_sleep_ms(10);
	} while (suite_now_ms() < end);
	printf("# %s: %g status %d, waited for %g status %d\n", name, v, s, value, status);
	return -ETIMEDOUT;
}

static int wait_status(const char *name, int status)
{
	uint64_t end = suite_now_ms() + WAIT_MS;
	struct pbus_sample sample;
	double v;
	int s;

	do {
		s = get(name, &v, &sample);
		if (s == status)
			return 0;
		suite_sleep_ms(10);
	} while (suite_now_ms() < end);
	printf("# %s: status %d, waited for %d\n", name, s, status);
	return -ETIMEDOUT;
}

/* The mock PWM's state line of @channel contains @text, waited for. */
static int wait_pwm(unsigned channel, const char *text)
{
	uint64_t end = suite_now_ms() + WAIT_MS;
	char line[1024] = "";

	do {
		if (suite_pwm_state(channel, line, sizeof(line)) == 0 && strstr(line, text))
			return 0;
		suite_sleep_ms(10);
	} while (suite_now_ms() < end);
	printf("# pwm state: %s\n", line);
	return -ETIMEDOUT;
}

/* The pid of the running pbus-hwd, or 0. */
static pid_t hwd_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && (e = readdir(d))) {
		char path[64], comm[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (kenv_read_file(path, comm, sizeof(comm)) > 0 && !strcmp(comm, "pbus-hwd\n")) {
			/* A zombie has no cmdline: not running. */
			snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
			if (kenv_read_file(path, comm, sizeof(comm)) > 0)
				found = (pid_t)atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	return found;
}

static int start_daemon(void)
{
	static const char *const extra[] = {"--log-level", "debug", NULL};

	daemon_pid = suite_start_pbusd(SCHEMA_PATH, INSTANCE, "/tmp/bindings-state", LOG_PATH, extra);
	if (daemon_pid < 0)
		return daemon_pid;
	return pbus_table_open(INSTANCE, PBUS_OPEN_WRITE, &table);
}

static bool daemon_alive(void)
{
	return waitpid(daemon_pid, NULL, WNOHANG) == 0;
}

static void show_log(void)
{
	const char *log = suite_read(LOG_PATH);

	printf("# pbusd log:\n%s\n", log ? log : "(none)");
}

/* ---- cases ------------------------------------------------------------- */

static const char *starts(void)
{
	int r = start_daemon();

	if (r < 0)
		T_FAIL("pbusd with the bindings schema did not start: %s", strerror(-r));
	for (int i = 0; i < 200 && !hwd_pid(); i++)
		suite_sleep_ms(10);
	T_EXPECT(hwd_pid() > 0);
	T_EXPECT(daemon_alive());
	return NULL;
}

static const char *gpio_output_initial(void)
{
	/* relay=false drives A0 low; relay_n=false is active-low: line 2 high. */
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 0, WAIT_MS), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 2, 1, WAIT_MS), 0);
	T_EQ(wait_status("relay", PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *gpio_output_follows(void)
{
	T_EQ(pbus_param_set_bool(param("relay"), true), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 1, WAIT_MS), 0);
	T_EQ(pbus_param_set_bool(param("relay_n"), true), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 2, 0, WAIT_MS), 0);
	T_EQ(pbus_param_set_bool(param("relay"), false), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 0, WAIT_MS), 0);
	T_EQ(wait_status("relay", PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *gpio_input_level_with_kernel_timestamp(void)
{
	struct pbus_sample sample;
	uint64_t before, after;
	double v;

	T_EQ(wait_for("door", 0, PBUS_STATUS_OK), 0);
	before = realtime_ns();
	T_EQ(kenv_sim_set_pull("pbus-sim0", 1, 1), 0);
	after = realtime_ns();
	T_EQ(wait_for("door", 1, PBUS_STATUS_OK), 0);
	T_EQ(get("door", &v, &sample), PBUS_STATUS_OK);
	/* The edge's kernel timestamp (CLOCK_REALTIME), taken during the pull
	 * write, not when pbus-hwd got round to it. */
	if (sample.timestamp_ns < before || sample.timestamp_ns > after)
		T_FAIL("timestamp %llu not within the pull write [%llu, %llu]",
		       (unsigned long long)sample.timestamp_ns, (unsigned long long)before,
		       (unsigned long long)after);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 1, 0), 0);
	T_EQ(wait_for("door", 0, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *gpio_input_counts_edges(void)
{
	T_EQ(wait_for("pulses", 0, PBUS_STATUS_OK), 0);
	for (int i = 0; i < 5; i++) {
		T_EQ(kenv_sim_set_pull("pbus-sim0", 3, 1), 0);
		T_EQ(kenv_sim_set_pull("pbus-sim0", 3, 0), 0);
	}
	/* Rising edges only. */
	T_EQ(wait_for("pulses", 5, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *i2c_register_scaled(void)
{
	/* Register 0x10..0x11 of 0x48, big-endian: 0x1234 = 4660 mV. */
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/regs", "10 12 34"), 0);
	T_EQ(wait_for("volts", 4.660, PBUS_STATUS_OK), 0);
	/* 0x14..0x15 little-endian signed: 0xff00 = -256, * 0.5 - 10. */
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/regs", "14 00 ff"), 0);
	T_EQ(wait_for("temp", -138, PBUS_STATUS_OK), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/regs", "14 10 00"), 0);
	T_EQ(wait_for("temp", -2, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *i2c_ten_bit_and_clamping(void)
{
	/* 10-bit device 0x2a5, register 3 holds 3 at reset. */
	T_EQ(wait_for("level", 3, PBUS_STATUS_OK), 0);
	/* 200 is beyond max=100: clamped, status major. */
	T_EQ(kenv_write_file(MOCK_I2C "/0x2a5/regs", "3 c8"), 0);
	T_EQ(wait_for("level", 100, PBUS_STATUS_MAJOR), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/0x2a5/regs", "3 07"), 0);
	T_EQ(wait_for("level", 7, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *i2c_smbus_only_adapter(void)
{
	struct pbus_i2c *bus = NULL;
	char path[64];
	int n = kenv_i2c_bus_by_name("SMBus stub driver");
	const uint8_t word[4] = {0xde, 0xad, 0xbe, 0xef};

	/* i2c-stub has no plain I2C: bytes by SMBus byte-data, wider
	 * registers by SMBus I2C-block reads. */
	T_EXPECT(n >= 0);
	snprintf(path, sizeof(path), "/dev/i2c-%d", n);
	T_EQ(pbus_i2c_open(path, &bus), 0);
	T_EQ(pbus_i2c_set_address(bus, 0x50, 0), 0);
	T_EQ(pbus_i2c_smbus_write_byte_data(bus, 5, 0x42), 0);
	T_EQ(pbus_i2c_smbus_write_i2c_block_data(bus, 8, word, 4), 0);
	pbus_i2c_close(bus);
	T_EQ(wait_for("stub8", 0x42, PBUS_STATUS_OK), 0);
	T_EQ(wait_for("stub32", 0xdeadbeef, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *i2c_device_unplugged(void)
{
	double v;
	struct pbus_sample sample;

	T_EQ(wait_for("volts", 4.660, PBUS_STATUS_OK), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/present", "0"), 0);
	T_EQ(wait_status("volts", PBUS_STATUS_INVALID), 0);
	/* The last value stays; the other devices carry on. */
	T_EQ(get("volts", &v, &sample), PBUS_STATUS_INVALID);
	T_EXPECT(fabs(v - 4.660) < 1e-9);
	T_EQ(kenv_write_file(MOCK_I2C "/0x2a5/regs", "3 09"), 0);
	T_EQ(wait_for("level", 9, PBUS_STATUS_OK), 0);
	T_EXPECT(daemon_alive() && hwd_pid() > 0);
	/* Plugged back (the register changed meanwhile). */
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/regs", "10 00 64"), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/present", "1"), 0);
	T_EQ(wait_for("volts", 0.1, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *i2c_bus_faults(void)
{
	T_EQ(kenv_write_file(MOCK_I2C "/fault", "timeout"), 0);
	T_EQ(wait_status("volts", PBUS_STATUS_INVALID), 0);
	T_EQ(wait_status("level", PBUS_STATUS_INVALID), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/fault", "none"), 0);
	T_EQ(wait_status("volts", PBUS_STATUS_OK), 0);
	T_EQ(wait_status("level", PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *pwm_duty_follows(void)
{
	/* fan=30 % of 40 us at start. */
	T_EQ(wait_pwm(1, "requested=1 enabled=1 period=40000 duty=12000 polarity=normal"), 0);
	T_EQ(pbus_param_set_float(param("fan"), 50.0f), 0);
	T_EQ(wait_pwm(1, "duty=20000 "), 0);
	T_EQ(pbus_param_set_float(param("fan"), 100.0f), 0);
	T_EQ(wait_pwm(1, "duty=40000 "), 0);
	T_EQ(wait_status("fan", PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *pwm_chip_removed(void)
{
	T_EQ(kenv_unbind(PWM_DRIVER, "pbus-mock-pwm.0"), 0);
	T_EQ(wait_status("fan", PBUS_STATUS_INVALID), 0);
	T_EXPECT(daemon_alive() && hwd_pid() > 0);
	/* Changed while the chip is away: applied when it is back. */
	T_EQ(pbus_param_set_float(param("fan"), 25.0f), 0);
	T_EQ(kenv_bind(PWM_DRIVER, "pbus-mock-pwm.0"), 0);
	T_EQ(wait_status("fan", PBUS_STATUS_OK), 0);
	T_EQ(wait_pwm(1, "requested=1 enabled=1 period=40000 duty=10000 "), 0);
	return NULL;
}

static const char *gpio_chip_removed(void)
{
	/* An output the chip of which goes away. (Only outputs: removing a
	 * gpio-sim chip while one of its IRQs is requested, as an input with
	 * edge detection does, makes 6.1 warn in remove_proc_entry, a kernel
	 * teardown bug; see test-gpio's chip-removed-while-in-use.) */
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 1, WAIT_MS), 0);
	T_EQ(pbus_param_set_bool(param("beacon"), false), 0);
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 0, WAIT_MS), 0);
	T_EQ(pbus_param_set_bool(param("beacon"), true), 0);
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 1, WAIT_MS), 0);
	T_EQ(kenv_sim_set_live("pbus-sim1", 0), 0);
	T_EQ(wait_status("beacon", PBUS_STATUS_INVALID), 0);
	T_EXPECT(daemon_alive() && hwd_pid() > 0);
	/* Changed while away; the other chip's bindings carry on. */
	T_EQ(pbus_param_set_bool(param("beacon"), false), 0);
	T_EQ(pbus_param_set_bool(param("relay"), true), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 1, WAIT_MS), 0);
	T_EQ(kenv_sim_set_pull("pbus-sim0", 3, 1), 0);
	T_EQ(wait_for("pulses", 6, PBUS_STATUS_OK), 0);
	/* Back as a new chip (new gpiochipN): found by label again and driven
	 * to the parameter's value (low, against a pull-up). */
	T_EQ(kenv_sim_set_live("pbus-sim1", 1), 0);
	T_EQ(wait_status("beacon", PBUS_STATUS_OK), 0);
	T_EQ(kenv_sim_set_pull("pbus-sim1", 1, 1), 0);
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 0, WAIT_MS), 0);
	T_EQ(pbus_param_set_bool(param("beacon"), true), 0);
	T_EQ(suite_wait_sim_line("pbus-sim1", 1, 1, WAIT_MS), 0);
	return NULL;
}

static const char *hwd_killed_is_restarted(void)
{
	pid_t old = hwd_pid(), now = 0;

	T_EXPECT(old > 0);
	T_EQ(kill(old, SIGKILL), 0);
	for (int i = 0; i < 500; i++) {
		now = hwd_pid();
		if (now > 0 && now != old)
			break;
		suite_sleep_ms(10);
	}
	T_EXPECT(now > 0 && now != old);
	T_EXPECT(daemon_alive());
	/* It runs the bindings again. */
	T_EQ(pbus_param_set_bool(param("relay"), false), 0);
	T_EQ(suite_wait_sim_line("pbus-sim0", 0, 0, WAIT_MS), 0);
	T_EQ(kenv_write_file(MOCK_I2C "/0x48/regs", "10 00 c8"), 0);
	T_EQ(wait_for("volts", 0.2, PBUS_STATUS_OK), 0);
	return NULL;
}

static const char *stop_takes_hwd_along(void)
{
	int status = -1;

	pbus_table_close(table);
	table = NULL;
	status = suite_stop_pbusd(daemon_pid);
	T_EXPECT(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_EQ(hwd_pid(), 0);
	daemon_pid = 0;
	return NULL;
}

int main(void)
{
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	suite_init();
	unlink(LOG_PATH);
	fd = open(SCHEMA_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, schema_text, sizeof(schema_text) - 1) != (ssize_t)sizeof(schema_text) - 1) {
		printf("not ok bindings/setup: cannot write %s\n", SCHEMA_PATH);
		return 1;
	}
	close(fd);
	SUITE_RUN("bindings/start", starts);
	if (!table) {
		show_log();
		return suite_exit();
	}
	SUITE_RUN("bindings/gpio-output-initial", gpio_output_initial);
	SUITE_RUN("bindings/gpio-output-follows", gpio_output_follows);
	SUITE_RUN("bindings/gpio-input-level-kernel-timestamp", gpio_input_level_with_kernel_timestamp);
	SUITE_RUN("bindings/gpio-input-counts-edges", gpio_input_counts_edges);
	SUITE_RUN("bindings/i2c-register-scaled", i2c_register_scaled);
	SUITE_RUN("bindings/i2c-ten-bit-and-clamping", i2c_ten_bit_and_clamping);
	SUITE_RUN("bindings/i2c-smbus-only-adapter", i2c_smbus_only_adapter);
	SUITE_RUN("bindings/i2c-device-unplugged", i2c_device_unplugged);
	SUITE_RUN("bindings/i2c-bus-faults", i2c_bus_faults);
	SUITE_RUN("bindings/pwm-duty-follows", pwm_duty_follows);
	SUITE_RUN("bindings/pwm-chip-removed", pwm_chip_removed);
	SUITE_RUN("bindings/gpio-chip-removed", gpio_chip_removed);
	SUITE_RUN("bindings/hwd-killed-is-restarted", hwd_killed_is_restarted);
	SUITE_RUN("bindings/stop-takes-hwd-along", stop_takes_hwd_along);
	if (suite_failures)
		show_log();
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	return suite_exit();
}
