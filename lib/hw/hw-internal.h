/* SPDX-License-Identifier: MIT */
/*
 * hw-internal.h - private to libparambus-hw (the .c files of lib/hw) and its tests.
 *
 * Holds the one ioctl wrapper every module goes through, its test hook for
 * fault injection and inspection, the constants the installed kernel headers
 * lack (in one place, with the kernel version that defines them), and the
 * pure encoding helpers that the host tests check without a device.
 * Nothing here is exported from the shared library.
 */
#ifndef PARAMBUS_HW_INTERNAL_H
#define PARAMBUS_HW_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/gpio.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "parambus/hw/gpio.h"

#define PBUS_HW_INTERNAL __attribute__((visibility("hidden")))

/* ---- the ioctl wrapper ------------------------------------------------ */

/**
 * pbus_hw_ioctl() - the only place where libparambus-hw calls ioctl(2).
 *
 * Returns the ioctl's non-negative result, or -errno.  EINTR is retried:
 * none of the ioctls used has a side effect before it can be interrupted
 * (the kernel restarts or fails them before any transfer).
 * When a test hook is installed it is asked first (see below).
 */
PBUS_HW_INTERNAL int pbus_hw_ioctl(int fd, unsigned long request, void *arg);

/**
 * pbus_hw_open_device() - open a character device read-write (O_CLOEXEC) and
 * make sure it is the kind we expect by asking it @probe_request (an ioctl
 * that only that kind answers, filling @probe_arg).
 *
 * Returns the file descriptor, or -errno of open(2), or -ENOTTY if the node
 * is not a character device or does not answer the probe (another driver
 * answers an unknown ioctl with ENOTTY or EINVAL), or the probe's own error.
 */
PBUS_HW_INTERNAL int pbus_hw_open_device(const char *path, unsigned long probe_request,
					 void *probe_arg);

/**
 * Test hook: called by pbus_hw_ioctl() before the real ioctl.  If it sets
 * *handled to true, its return value (>= 0 or -errno) is returned instead of
 * calling the kernel; otherwise the real ioctl runs.  Install with
 * pbus_hw_set_ioctl_hook(NULL, NULL) to remove.  Not thread-safe: tests set
 * it while no other thread uses the library.
 */
typedef int (*pbus_hw_ioctl_hook)(int fd, unsigned long request, void *arg, void *userdata,
				  bool *handled);
PBUS_HW_INTERNAL void pbus_hw_set_ioctl_hook(pbus_hw_ioctl_hook hook, void *userdata);

/* ---- constants missing from linux-libc-dev 6.1 ------------------------ */

/*
 * PWM character device, /dev/pwmchipN: include/uapi/linux/pwm.h, added in
 * Linux 6.13.  Debian 12's headers (6.1) do not have it.
 */
#ifndef PWM_IOCTL_REQUEST
struct pwmchip_waveform {
	__u32 hwpwm;
	__u32 __pad;
	__u64 period_length_ns;
	__u64 duty_length_ns;
	__u64 duty_offset_ns;
};
#define PWM_IOCTL_REQUEST _IO(0x75, 1)
#define PWM_IOCTL_FREE _IO(0x75, 2)
#define PWM_IOCTL_ROUNDWF _IOWR(0x75, 3, struct pwmchip_waveform)
#define PWM_IOCTL_GETWF _IOWR(0x75, 4, struct pwmchip_waveform)
#define PWM_IOCTL_SETROUNDEDWF _IOW(0x75, 5, struct pwmchip_waveform)
#define PWM_IOCTL_SETEXACTWF _IOW(0x75, 6, struct pwmchip_waveform)
#endif

/* I2C_RDWR_IOCTL_MAX_MSGS: include/uapi/linux/i2c-dev.h, always 42. */
#ifndef I2C_RDWR_IOCTL_MAX_MSGS
#define I2C_RDWR_IOCTL_MAX_MSGS 42
#endif

/* ---- small helpers (util in ioctl.c) ---------------------------------- */

/** Copy @src into @dst[size], truncating, always NUL-terminated. */
PBUS_HW_INTERNAL void pbus_hw_copy_string(char *dst, size_t size, const char *src);

/** Write @text to sysfs file @path (one write).  0 or -errno. */
PBUS_HW_INTERNAL int pbus_hw_write_file(const char *path, const char *text);

/** Read an unsigned decimal from sysfs file @path.  0 or -errno. */
PBUS_HW_INTERNAL int pbus_hw_read_file_u64(const char *path, uint64_t *ret_value);

/** Read a decimal from an open sysfs descriptor at offset 0.  0 or -errno. */
PBUS_HW_INTERNAL int pbus_hw_pread_u64(int fd, uint64_t *ret_value);

/** Write @value in decimal to an open sysfs descriptor at offset 0.  0 or -errno. */
PBUS_HW_INTERNAL int pbus_hw_pwrite_u64(int fd, uint64_t value);

/* ---- GPIO encoding (gpio.c), exposed for tests ------------------------ */

/**
 * Encode per-line settings into the kernel's line config.  settings[i] is
 * for request index i; attribute masks select request indexes.
 * Returns 0, -EINVAL (contradictory settings) or -E2BIG (> 10 attributes).
 */
PBUS_HW_INTERNAL int pbus_gpio_encode_config(const struct pbus_gpio_line_settings *settings,
					     size_t num_lines, struct gpio_v2_line_config *ret_config);

/** The v2 flags of one line's settings: 0, or -EINVAL for a contradictory or unknown setting. */
PBUS_HW_INTERNAL int pbus_gpio_settings_to_flags(const struct pbus_gpio_line_settings *settings,
						 uint64_t *ret_flags);

/** Decode the kernel's line info. */
PBUS_HW_INTERNAL void pbus_gpio_decode_line_info(const struct gpio_v2_line_info *kinfo,
						 struct pbus_gpio_line_info *ret_info);

/* ---- SPI (spi.c), exposed for tests ----------------------------------- */

/** spidev's bufsiz, read from sysfs (default 4096). */
PBUS_HW_INTERNAL uint32_t pbus_spi_read_bufsiz(void);

#endif /* PARAMBUS_HW_INTERNAL_H */
