/* SPDX-License-Identifier: MIT */
/*
 * pwm.c - PWM through /dev/pwmchipN where the kernel has it (Linux >= 6.13),
 * through sysfs otherwise.
 *
 * The character device describes a channel by a waveform (period, duty
 * length, duty offset; period 0 = off) and applies it in one ioctl, so the
 * logical state (period, duty, polarity, enabled) is kept here and turned
 * into a waveform on every change: inversed polarity with duty d is the
 * waveform whose active part starts at offset d and lasts period - d.
 *
 * Through sysfs the order of writes matters (the kernel refuses duty >
 * period, and many drivers refuse a polarity change while enabled), and the
 * files of a freshly exported channel appear -- and become writable, once
 * udev has run -- some time after the export returns.  Both are handled
 * here; see <parambus/hw/pwm.h>.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hw-internal.h"
#include "parambus/hw/pwm.h"

#define SYSFS_PWM "/sys/class/pwm"

struct pbus_pwm {
	enum pbus_pwm_backend backend;
	unsigned int chip;
	unsigned int channel;
	/* chardev */
	int fd;
	struct pbus_pwm_state cached; /* logical state behind the waveform */
	/* sysfs */
	bool exported_by_us;
	int period_fd, duty_fd, polarity_fd, enable_fd;
};

#define ARG(v) ((void *)(unsigned long)(v))

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void close_sysfs_fds(struct pbus_pwm *pwm)
{
	int *fds[] = { &pwm->period_fd, &pwm->duty_fd, &pwm->polarity_fd, &pwm->enable_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* ---- chardev ------------------------------------------------------------ */

static void state_to_waveform(const struct pbus_pwm *pwm, const struct pbus_pwm_state *s,
			      struct pwmchip_waveform *wf)
{
	memset(wf, 0, sizeof(*wf));
	wf->hwpwm = pwm->channel;
	if (!s->enabled)
		return; /* period 0: off */
	wf->period_length_ns = s->period_ns;
	if (s->polarity == PBUS_PWM_POLARITY_INVERSED) {
		wf->duty_length_ns = s->period_ns - s->duty_cycle_ns;
		wf->duty_offset_ns = s->duty_cycle_ns;
	} else {
		wf->duty_length_ns = s->duty_cycle_ns;
	}
}

static void waveform_to_state(const struct pwmchip_waveform *wf, const struct pbus_pwm_state *cached,
			      struct pbus_pwm_state *s)
{
	if (wf->period_length_ns == 0) {
		*s = *cached;
		s->enabled = false;
		return;
	}
	s->enabled = true;
	s->period_ns = wf->period_length_ns;
	if (wf->duty_offset_ns != 0 && wf->duty_offset_ns + wf->duty_length_ns >= wf->period_length_ns) {
		s->polarity = PBUS_PWM_POLARITY_INVERSED;
		s->duty_cycle_ns = wf->duty_offset_ns;
	} else {
		s->polarity = PBUS_PWM_POLARITY_NORMAL;
		s->duty_cycle_ns = wf->duty_length_ns;
	}
}

static int chardev_apply(struct pbus_pwm *pwm, const struct pbus_pwm_state *s)
{
	struct pwmchip_waveform wf;
	if (s->enabled && (s->period_ns == 0 || s->duty_cycle_ns > s->period_ns))
		return -EINVAL;
	state_to_waveform(pwm, s, &wf);
	int r = pbus_hw_ioctl(pwm->fd, PWM_IOCTL_SETROUNDEDWF, &wf);
	if (r < 0)
		return r;
	pwm->cached = *s;
	return 0;
}

static int chardev_open(struct pbus_pwm *pwm, const char *path)
{
	struct pwmchip_waveform wf;

	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = pbus_hw_ioctl(fd, PWM_IOCTL_REQUEST, ARG(pwm->channel));
	if (r < 0) {
		close(fd);
		return r;
	}
	memset(&wf, 0, sizeof(wf));
	wf.hwpwm = pwm->channel;
	r = pbus_hw_ioctl(fd, PWM_IOCTL_GETWF, &wf);
	if (r < 0) {
		close(fd);
		return r;
	}
	memset(&pwm->cached, 0, sizeof(pwm->cached));
	waveform_to_state(&wf, &pwm->cached, &pwm->cached);
	pwm->fd = fd;
	pwm->backend = PBUS_PWM_BACKEND_CHARDEV;
	return 0;
}

/* ---- sysfs -------------------------------------------------------------- */

static int channel_path(const struct pbus_pwm *pwm, const char *attr, char *buf, size_t size)
{
	int n = attr ? snprintf(buf, size, SYSFS_PWM "/pwmchip%u/pwm%u/%s", pwm->chip, pwm->channel, attr)
		     : snprintf(buf, size, SYSFS_PWM "/pwmchip%u/pwm%u", pwm->chip, pwm->channel);
	return (n < 0 || (size_t)n >= size) ? -ENAMETOOLONG : 0;
}

static int chip_write(const struct pbus_pwm *pwm, const char *attr, unsigned int value)
{
	char path[PATH_MAX], text[16];
	snprintf(path, sizeof(path), SYSFS_PWM "/pwmchip%u/%s", pwm->chip, attr);
	snprintf(text, sizeof(text), "%u", value);
	return pbus_hw_write_file(path, text);
}

/* Open all four attribute files read-write, or fail without side effects. */
static int sysfs_open_attributes(struct pbus_pwm *pwm)
{
	static const char *const names[] = { "period", "duty_cycle", "polarity", "enable" };
	int *fds[] = { &pwm->period_fd, &pwm->duty_fd, &pwm->polarity_fd, &pwm->enable_fd };
	char path[PATH_MAX];

	for (size_t i = 0; i < 4; i++) {
		int r = channel_path(pwm, names[i], path, sizeof(path));
		if (r < 0)
			return r;
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			close_sysfs_fds(pwm);
			return r;
		}
		*fds[i] = fd;
	}
	return 0;
}

static int sysfs_open(struct pbus_pwm *pwm, int timeout_ms)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t npwm;

	snprintf(path, sizeof(path), SYSFS_PWM "/pwmchip%u", pwm->chip);
	if (stat(path, &st) < 0)
		return -errno;
	snprintf(path, sizeof(path), SYSFS_PWM "/pwmchip%u/npwm", pwm->chip);
	int r = pbus_hw_read_file_u64(path, &npwm);
	if (r < 0)
		return r;
	if (pwm->channel >= npwm)
		return -EINVAL;

	r = channel_path(pwm, NULL, path, sizeof(path));
	if (r < 0)
		return r;
	if (stat(path, &st) < 0) {
		r = chip_write(pwm, "export", pwm->channel);
		if (r == 0)
			pwm->exported_by_us = true;
		else if (r != -EBUSY || stat(path, &st) < 0)
			return r; /* -EBUSY without pwmK/: a kernel consumer holds it */
		/* -EBUSY with pwmK/: someone exported it just now; not ours. */
	}

	/* Wait for the directory and its files to exist and be writable by
	 * us (udev may still be changing their owner and mode). */
	const uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	unsigned int pause = 1;
	for (;;) {
		r = sysfs_open_attributes(pwm);
		if (r == 0)
			return 0;
		if ((r != -ENOENT && r != -EACCES && r != -EPERM) || now_ms() >= deadline)
			break;
		sleep_ms(pause);
		if (pause < 32)
			pause *= 2;
	}
	if (r == -ENOENT || r == -EACCES || r == -EPERM)
		r = -ETIMEDOUT;
	if (pwm->exported_by_us) {
		(void)chip_write(pwm, "unexport", pwm->channel);
		pwm->exported_by_us = false;
	}
	return r;
}

static int sysfs_read_polarity(struct pbus_pwm *pwm, enum pbus_pwm_polarity *ret)
{
	char buf[16];
	ssize_t n = pread(pwm->polarity_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (strncmp(buf, "normal", 6) == 0)
		*ret = PBUS_PWM_POLARITY_NORMAL;
	else if (strncmp(buf, "inversed", 8) == 0)
		*ret = PBUS_PWM_POLARITY_INVERSED;
	else
		return -EIO;
	return 0;
}

static int sysfs_write_polarity(struct pbus_pwm *pwm, enum pbus_pwm_polarity polarity)
{
	const char *text = polarity == PBUS_PWM_POLARITY_INVERSED ? "inversed" : "normal";
	size_t len = strlen(text);
	ssize_t n = pwrite(pwm->polarity_fd, text, len, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int sysfs_get_state(struct pbus_pwm *pwm, struct pbus_pwm_state *ret)
{
	struct pbus_pwm_state s;
	uint64_t enabled;
	int r;
	if ((r = pbus_hw_pread_u64(pwm->period_fd, &s.period_ns)) < 0 ||
	    (r = pbus_hw_pread_u64(pwm->duty_fd, &s.duty_cycle_ns)) < 0 ||
	    (r = sysfs_read_polarity(pwm, &s.polarity)) < 0 ||
	    (r = pbus_hw_pread_u64(pwm->enable_fd, &enabled)) < 0)
		return r;
	s.enabled = enabled != 0;
	*ret = s;
	return 0;
}

static int sysfs_configure(struct pbus_pwm *pwm, const struct pbus_pwm_state *target)
{
	struct pbus_pwm_state cur;
	int r = sysfs_get_state(pwm, &cur);
	if (r < 0)
		return r;

	if (target->polarity != cur.polarity) {
		if (cur.enabled) {
			if ((r = pbus_hw_pwrite_u64(pwm->enable_fd, 0)) < 0)
				return r;
			cur.enabled = false;
		}
		if ((r = sysfs_write_polarity(pwm, target->polarity)) < 0)
			return r;
	}
	/* Every intermediate state keeps duty <= period: if the new duty fits
	 * the current period, write it first; otherwise the new period is
	 * longer than the old one and goes first. */
	const bool duty_first = target->duty_cycle_ns <= cur.period_ns;
	for (int step = 0; step < 2; step++) {
		const bool duty = (step == 0) == duty_first;
		if (duty && target->duty_cycle_ns != cur.duty_cycle_ns)
			r = pbus_hw_pwrite_u64(pwm->duty_fd, target->duty_cycle_ns);
		else if (!duty && target->period_ns != cur.period_ns)
			r = pbus_hw_pwrite_u64(pwm->period_fd, target->period_ns);
		if (r < 0)
			return r;
	}
	if (target->enabled != cur.enabled)
		r = pbus_hw_pwrite_u64(pwm->enable_fd, target->enabled ? 1 : 0);
	return r;
}

/* ---- public ------------------------------------------------------------- */

int pbus_pwm_open(unsigned int chip, unsigned int channel, unsigned int flags, int timeout_ms,
		  struct pbus_pwm **ret_pwm)
{
	char path[64];

	if (!ret_pwm || timeout_ms < 0 ||
	    (flags & ~(unsigned)(PBUS_PWM_OPEN_SYSFS_ONLY | PBUS_PWM_OPEN_CHARDEV_ONLY)) ||
	    ((flags & PBUS_PWM_OPEN_SYSFS_ONLY) && (flags & PBUS_PWM_OPEN_CHARDEV_ONLY)))
		return -EINVAL;
	if (timeout_ms == 0)
		timeout_ms = PBUS_PWM_EXPORT_TIMEOUT_MS_DEFAULT;

	struct pbus_pwm *pwm = calloc(1, sizeof(*pwm));
	if (!pwm)
		return -ENOMEM;
	pwm->chip = chip;
	pwm->channel = channel;
	pwm->fd = pwm->period_fd = pwm->duty_fd = pwm->polarity_fd = pwm->enable_fd = -1;

	int r = -ENOENT;
	if (!(flags & PBUS_PWM_OPEN_SYSFS_ONLY)) {
		/* Runtime check: the node exists only on kernels with the PWM
		 * character device (6.13+). */
		snprintf(path, sizeof(path), "/dev/pwmchip%u", chip);
		r = chardev_open(pwm, path);
		if (r == -ENOENT && (flags & PBUS_PWM_OPEN_CHARDEV_ONLY))
			r = -EOPNOTSUPP;
	}
	if (r == -ENOENT && !(flags & PBUS_PWM_OPEN_CHARDEV_ONLY)) {
		r = sysfs_open(pwm, timeout_ms);
		if (r == 0)
			pwm->backend = PBUS_PWM_BACKEND_SYSFS;
	}
	if (r < 0) {
		free(pwm);
		return r;
	}
	*ret_pwm = pwm;
	return 0;
}

void pbus_pwm_close(struct pbus_pwm *pwm)
{
	if (!pwm)
		return;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV) {
		(void)pbus_hw_ioctl(pwm->fd, PWM_IOCTL_FREE, ARG(pwm->channel));
		close(pwm->fd);
	} else {
		close_sysfs_fds(pwm);
		if (pwm->exported_by_us)
			(void)chip_write(pwm, "unexport", pwm->channel);
	}
	free(pwm);
}

int pbus_pwm_get_backend(const struct pbus_pwm *pwm)
{
	return pwm ? (int)pwm->backend : -EINVAL;
}

int pbus_pwm_get_state(struct pbus_pwm *pwm, struct pbus_pwm_state *ret_state)
{
	if (!pwm || !ret_state)
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_SYSFS)
		return sysfs_get_state(pwm, ret_state);

	struct pwmchip_waveform wf;
	memset(&wf, 0, sizeof(wf));
	wf.hwpwm = pwm->channel;
	int r = pbus_hw_ioctl(pwm->fd, PWM_IOCTL_GETWF, &wf);
	if (r < 0)
		return r;
	waveform_to_state(&wf, &pwm->cached, ret_state);
	return 0;
}

int pbus_pwm_configure(struct pbus_pwm *pwm, const struct pbus_pwm_state *state)
{
	if (!pwm || !state || state->duty_cycle_ns > state->period_ns ||
	    (state->polarity != PBUS_PWM_POLARITY_NORMAL && state->polarity != PBUS_PWM_POLARITY_INVERSED))
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV)
		return chardev_apply(pwm, state);
	return sysfs_configure(pwm, state);
}

int pbus_pwm_set_period(struct pbus_pwm *pwm, uint64_t period_ns)
{
	if (!pwm)
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV) {
		struct pbus_pwm_state s = pwm->cached;
		if (s.duty_cycle_ns > period_ns)
			return -EINVAL;
		s.period_ns = period_ns;
		return chardev_apply(pwm, &s);
	}
	uint64_t duty;
	int r = pbus_hw_pread_u64(pwm->duty_fd, &duty);
	if (r < 0)
		return r;
	if (duty > period_ns)
		return -EINVAL; /* would be refused anyway; say so before writing */
	return pbus_hw_pwrite_u64(pwm->period_fd, period_ns);
}

int pbus_pwm_set_duty_cycle(struct pbus_pwm *pwm, uint64_t duty_cycle_ns)
{
	if (!pwm)
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV) {
		struct pbus_pwm_state s = pwm->cached;
		s.duty_cycle_ns = duty_cycle_ns;
		if (duty_cycle_ns > s.period_ns)
			return -EINVAL;
		return chardev_apply(pwm, &s);
	}
	return pbus_hw_pwrite_u64(pwm->duty_fd, duty_cycle_ns);
}

int pbus_pwm_set_polarity(struct pbus_pwm *pwm, enum pbus_pwm_polarity polarity)
{
	if (!pwm || (polarity != PBUS_PWM_POLARITY_NORMAL && polarity != PBUS_PWM_POLARITY_INVERSED))
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV) {
		struct pbus_pwm_state s = pwm->cached;
		s.polarity = polarity;
		return chardev_apply(pwm, &s);
	}
	return sysfs_write_polarity(pwm, polarity);
}

int pbus_pwm_enable(struct pbus_pwm *pwm, bool enable)
{
	if (!pwm)
		return -EINVAL;
	if (pwm->backend == PBUS_PWM_BACKEND_CHARDEV) {
		struct pbus_pwm_state s = pwm->cached;
		s.enabled = enable;
		return chardev_apply(pwm, &s);
	}
	return pbus_hw_pwrite_u64(pwm->enable_fd, enable ? 1 : 0);
}
