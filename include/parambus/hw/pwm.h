/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/pwm.h - PWM channels.
 *
 * Two kernel interfaces, one API:
 *  - the PWM character device /dev/pwmchipN (Linux >= 6.13): the channel is
 *    requested with PWM_IOCTL_REQUEST and every change is one
 *    PWM_IOCTL_SETROUNDEDWF ioctl carrying the whole waveform, so period,
 *    duty cycle, polarity and enable change atomically.  Used whenever the
 *    node exists.  (Not exercised by the project's VM tests, whose 6.1
 *    kernel predates it; only its absence is.)
 *  - sysfs, /sys/class/pwm/pwmchipN, otherwise: the channel is exported
 *    (unless someone already did), then its attribute files are kept open
 *    so that a duty-cycle change is one pwrite().
 *
 * The udev-export race (sysfs): after "export", the kernel creates pwmK/
 * and its files, then udev may change their owner and mode.  Opening waits
 * until the directory and all four attribute files exist and are writable,
 * polling up to the timeout, instead of failing on the first try -- the
 * failure users of other libraries see "after a reboot" on channels > 0.
 *
 * Duty never exceeds period: pbus_pwm_configure() orders its writes so that
 * every intermediate state is valid (the kernel rejects duty > period).
 *
 * Errors for every setter: -EINVAL (argument, or a state the driver refuses
 * such as duty > period), -ENODEV (the chip was removed), -EBUSY (the driver
 * cannot change this now, e.g. polarity while enabled on some chips),
 * -EOPNOTSUPP (e.g. inversed polarity on a chip without it), or another
 * errno from the driver's apply().
 *
 * Threads: one thread per object.
 */
#ifndef PARAMBUS_HW_PWM_H
#define PARAMBUS_HW_PWM_H

#include <stdbool.h>
#include <stdint.h>

#include <parambus/hw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_pwm;

enum pbus_pwm_polarity {
	PBUS_PWM_POLARITY_NORMAL = 0,   /**< high for the duty cycle, then low */
	PBUS_PWM_POLARITY_INVERSED = 1, /**< low for the duty cycle, then high */
};

enum pbus_pwm_backend {
	PBUS_PWM_BACKEND_CHARDEV = 1, /**< /dev/pwmchipN */
	PBUS_PWM_BACKEND_SYSFS = 2,   /**< /sys/class/pwm */
};

/** Flags of pbus_pwm_open(). */
enum {
	PBUS_PWM_OPEN_SYSFS_ONLY = 1u << 0,   /**< never use the character device */
	PBUS_PWM_OPEN_CHARDEV_ONLY = 1u << 1, /**< fail with -EOPNOTSUPP if there is none */
};

/** Default time pbus_pwm_open() waits for an exported channel to be usable. */
#define PBUS_PWM_EXPORT_TIMEOUT_MS_DEFAULT 2000

/** The whole state of a channel. */
struct pbus_pwm_state {
	uint64_t period_ns;
	uint64_t duty_cycle_ns; /**< <= period_ns */
	enum pbus_pwm_polarity polarity;
	bool enabled;
};

/**
 * pbus_pwm_open() - take channel @channel of PWM chip @chip
 * (/dev/pwmchip<chip> or /sys/class/pwm/pwmchip<chip>).
 * @flags: PBUS_PWM_OPEN_*; 0 picks the character device when it exists.
 * @timeout_ms: how long to wait for the exported channel's files (sysfs);
 *              0 for PBUS_PWM_EXPORT_TIMEOUT_MS_DEFAULT.
 *
 * Return: 0, or
 *  -EINVAL   NULL @ret_pwm, contradictory flags, or @channel beyond the
 *            chip's channels;
 *  -ENOENT   no such chip;
 *  -EBUSY    the channel is in use by a kernel driver, or requested through
 *            the character device by someone else;
 *  -ETIMEDOUT the exported channel's files did not become writable in time;
 *  -EOPNOTSUPP PBUS_PWM_OPEN_CHARDEV_ONLY and the kernel has no PWM
 *            character device;
 *  -EACCES, -ENOMEM, or another errno from the kernel.
 */
PBUS_API int pbus_pwm_open(unsigned int chip, unsigned int channel, unsigned int flags, int timeout_ms,
			   struct pbus_pwm **ret_pwm);

/**
 * pbus_pwm_close() - release the channel; NULL is ignored.  Through sysfs
 * the channel is unexported only if pbus_pwm_open() exported it (a channel
 * someone else exported stays as it was).  The output is left as it is:
 * disable it first if it must stop.
 */
PBUS_API void pbus_pwm_close(struct pbus_pwm *pwm);

/** pbus_pwm_get_backend() - PBUS_PWM_BACKEND_*, or -EINVAL. */
PBUS_API int pbus_pwm_get_backend(const struct pbus_pwm *pwm);

/** pbus_pwm_get_state() - the channel's state as the kernel holds it.  0, -EINVAL, -ENODEV. */
PBUS_API int pbus_pwm_get_state(struct pbus_pwm *pwm, struct pbus_pwm_state *ret_state);

/**
 * pbus_pwm_configure() - apply a whole state, in an order that never lets
 * duty exceed period and changes polarity only while disabled.
 * Return: 0, -EINVAL (duty > period, or refused by the driver), or as above.
 * On failure the channel may hold some of the new values (sysfs writes are
 * separate); pbus_pwm_get_state() tells which.
 */
PBUS_API int pbus_pwm_configure(struct pbus_pwm *pwm, const struct pbus_pwm_state *state);

/**
 * pbus_pwm_set_period() - set the period in ns.
 * Return: 0, -EINVAL (the new period is shorter than the current duty
 * cycle: use pbus_pwm_configure() to change both), or as above.
 */
PBUS_API int pbus_pwm_set_period(struct pbus_pwm *pwm, uint64_t period_ns);

/**
 * pbus_pwm_set_duty_cycle() - set the duty cycle in ns.  Hot path: one
 * pwrite() (sysfs) or one ioctl (chardev), no allocation.
 * Return: 0, -EINVAL (longer than the period), or as above.
 */
PBUS_API int pbus_pwm_set_duty_cycle(struct pbus_pwm *pwm, uint64_t duty_cycle_ns);

/** pbus_pwm_set_polarity() - set the polarity.  Return: 0, -EINVAL, -EBUSY, -EOPNOTSUPP, or as above. */
PBUS_API int pbus_pwm_set_polarity(struct pbus_pwm *pwm, enum pbus_pwm_polarity polarity);

/**
 * pbus_pwm_enable() - start (@enable true) or stop the output.
 * Return: 0, -EINVAL (e.g. enabling with period 0), or as above.
 */
PBUS_API int pbus_pwm_enable(struct pbus_pwm *pwm, bool enable);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_PWM_H */
