/*
 * kenv: small helpers for test programs in the parambus kernel test VM.
 *
 * Optional: every test binary is linked with kenv.c (see ENVIRONMENT.md,
 * section 1), and nothing forces a test to use it. It finds the devices the
 * environment provides by their stable names (labels, adapter names) rather
 * than by numbers, drives gpio-sim's simulated outside world, and prints the
 * result lines the harness counts. All names start with kenv_ so that it
 * cannot clash with a suite's own helpers.
 *
 * Functions returning int give 0 or a non-negative result on success and
 * -errno on failure. Not thread-safe where they use static buffers (none
 * do today); call them from one thread at a time anyway.
 */
#ifndef PBUS_KENV_H
#define PBUS_KENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Read a whole (small) file into buf, NUL-terminated; returns bytes read. */
int kenv_read_file(const char *path, char *buf, size_t size);
/* Write text to a file (sysfs, debugfs, configfs) in one write(2). */
int kenv_write_file(const char *path, const char *text);

/* "/dev/gpiochipN" of the chip with this label (GPIO_GET_CHIPINFO_IOCTL). */
int kenv_gpiochip_by_label(const char *label, char *path, size_t size);
/* The gpio-sim sysfs directory of chip `label` (holds sim_gpioK/pull, value). */
int kenv_sim_dir(const char *label, char *path, size_t size);
/* Drive line `offset` of gpio-sim chip `label` from outside: pull up (1) or down (0). */
int kenv_sim_set_pull(const char *label, unsigned int offset, int up);
/* The level line `offset` has right now: 0 or 1. */
int kenv_sim_get_value(const char *label, unsigned int offset);
/* Take a gpio-sim chip offline (0: the device disappears) or back online (1). */
int kenv_sim_set_live(const char *label, int live);

/* N of /dev/i2c-N for the adapter with this name, e.g. "pbus-mock-i2c". */
int kenv_i2c_bus_by_name(const char *adapter_name);
/* "/sys/class/pwm/pwmchipN" of pbus-mock-pwm. */
int kenv_pwmchip_path(char *path, size_t size);

/* Unbind/bind a device from/to a driver; driver_dir e.g.
 * "/sys/bus/platform/drivers/pbus-mock-spi", device e.g. "pbus-mock-spi.0". */
int kenv_unbind(const char *driver_dir, const char *device);
int kenv_bind(const char *driver_dir, const char *device);

/* Result lines: "ok NAME" and "not ok NAME: REASON". */
void kenv_ok(const char *name);
void kenv_fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
