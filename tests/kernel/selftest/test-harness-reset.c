/*
 * test-harness-reset: the harness resets the environment between binaries.
 *
 * test-harness-env (which runs just before, binaries run in name order)
 * ends by changing every kind of state a test can leave behind; this binary
 * checks that all of it is back to the start state of
 * tests/kernel/ENVIRONMENT.md, section 8. Run alone, it checks the fresh
 * environment, which must pass too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kenv.h"

static int failures;

static void check(const char *name, int ok, const char *what)
{
	if (ok) {
		kenv_ok(name);
	} else {
		kenv_fail(name, "%s", what);
		failures++;
	}
}

static int file_is(const char *path, const char *want)
{
	char buf[4096];

	return kenv_read_file(path, buf, sizeof(buf)) >= 0 && strstr(buf, want) != NULL;
}

int main(void)
{
	char chip[128], p[200];
	int fd, n, v = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	check("gpio/pull-down", kenv_sim_get_value("pbus-sim0", 0) == 0,
	      "A0 is not back at pull-down");
	check("gpio/live", kenv_sim_get_value("pbus-sim1", 7) == 0, "pbus-sim1 is not live");
	check("i2c/regs", file_is("/sys/kernel/debug/pbus-mock-i2c/0x48/regs", "00: 00 01 02"),
	      "0x48 registers not reset");
	check("i2c/present", file_is("/sys/kernel/debug/pbus-mock-i2c/0x49/present", "Y"),
	      "0x49 not present");
	check("i2c/fault", file_is("/sys/kernel/debug/pbus-mock-i2c/fault", "none"),
	      "i2c fault not cleared");
	check("spi/fault", file_is("/sys/kernel/debug/pbus-mock-spi/fault", "0"),
	      "spi fault not cleared");
	check("spi/spidev0.0", access("/dev/spidev0.0", F_OK) == 0, "spidev0.0 not bound");
	check("pwm/fault", file_is("/sys/kernel/debug/pbus-mock-pwm/fault", "0"),
	      "pwm fault not cleared");
	snprintf(p, sizeof(p), "/pwm2");
	if (kenv_pwmchip_path(chip, sizeof(chip)) == 0) {
		strncat(chip, p, sizeof(chip) - strlen(chip) - 1);
		check("pwm/unexported", access(chip, F_OK) != 0, "pwm2 still exported");
	} else {
		check("pwm/unexported", 0, "no pwmchip");
	}
	n = kenv_i2c_bus_by_name("SMBus stub driver");
	snprintf(p, sizeof(p), "/dev/i2c-%d", n);
	fd = open(p, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		union i2c_smbus_data d;
		struct i2c_smbus_ioctl_data a = { I2C_SMBUS_READ, 0x01, I2C_SMBUS_BYTE_DATA, &d };

		ioctl(fd, I2C_SLAVE, 0x50);
		if (ioctl(fd, I2C_SMBUS, &a) == 0)
			v = d.byte;
		close(fd);
	}
	check("i2c/stub-registers", v == 0, "i2c-stub register 1 is not 0");
	check("env/shortcuts", access("/run/pbus/sim/pbus-sim1/sim_gpio0/value", F_OK) == 0,
	      "/run/pbus not refreshed");
	return failures ? 1 : 0;
}
