/* SPDX-License-Identifier: MIT */
/*
 * devices.c: the device side of the bindings, through libparambus-hw: find
 * and open the device a binding names, move values between it and the
 * parameter, and notice when it is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/log.h"
#include "pbus-hwd.h"

/* "N" or PREFIX"N" (e.g. "pwmchip3", "i2c-1") as a number; -1 if neither. */
static long number_after(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long v;

	if (!strncmp(text, prefix, n))
		text += n;
	if (*text < '0' || *text > '9')
		return -1;
	v = strtol(text, &end, 10);
	return *end || v > INT_MAX ? -1 : v;
}

/* An I2C bus named as in hw-device: a path, "i2c-N", or the adapter name
 * (/sys/class/i2c-dev/i2c-N/name). */
static int resolve_i2c(const char *device, char *path, size_t size)
{
	char file[300], name[128];
	struct dirent *e;
	DIR *dir;
	long n;

	if (device[0] == '/') {
		snprintf(path, size, "%s", device);
		return 0;
	}
	n = number_after(device, "i2c-");
	if (n >= 0) {
		snprintf(path, size, "/dev/i2c-%ld", n);
		return 0;
	}
	dir = opendir("/sys/class/i2c-dev");
	if (!dir)
		return -ENOENT;
	while ((e = readdir(dir))) {
		FILE *f;

		if (strncmp(e->d_name, "i2c-", 4))
			continue;
		snprintf(file, sizeof(file), "/sys/class/i2c-dev/%s/name", e->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, device)) {
				snprintf(path, size, "/dev/%s", e->d_name);
				fclose(f);
				closedir(dir);
				return 0;
			}
		}
		fclose(f);
	}
	closedir(dir);
	return -ENOENT;
}

/* A PWM chip named as in hw-device: "N", "pwmchipN", its sysfs path, or
 * the name of its parent device (e.g. "pbus-mock-pwm.0"). */
static int resolve_pwm(const char *device, unsigned int *ret_chip)
{
	const char *base = strrchr(device, '/');
	char link[300], target[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	long n;

	n = number_after(base ? base + 1 : device, "pwmchip");
	if (n >= 0) {
		*ret_chip = (unsigned)n;
		return 0;
	}
	dir = opendir("/sys/class/pwm");
	if (!dir)
		return -ENOENT;
	while ((e = readdir(dir))) {
		ssize_t len;
		const char *parent;

		if (strncmp(e->d_name, "pwmchip", 7))
			continue;
		snprintf(link, sizeof(link), "/sys/class/pwm/%s/device", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		parent = strrchr(target, '/');
		if (!strcmp(parent ? parent + 1 : target, device)) {
			*ret_chip = (unsigned)number_after(e->d_name, "pwmchip");
			closedir(dir);
			return 0;
		}
	}
	closedir(dir);
	return -ENOENT;
}

static int param_bool(const struct binding *b, bool *ret, struct pbus_sample *sample)
{
	double v;
	int r = param_get_number(b, &v, sample);

	*ret = v != 0;
	return r;
}

/* The duty cycle for the parameter's value, within 0..period. */
static uint64_t pwm_duty(const struct binding *b, double value)
{
	double ns = nearbyint(value * b->scale + b->offset);

	if (!(ns > 0))
		return 0;
	if (ns >= (double)b->period_ns)
		return b->period_ns;
	return (uint64_t)ns;
}

/* An output's parameter is in effect again: clear the invalid status our
 * failure wrote (or that a never-written parameter had). */
static void output_in_effect(struct binding *b, const struct pbus_sample *sample, int status)
{
	unsigned char value[8];
	struct pbus_sample now;

	b->applied_seq = sample->seq;
	binding_recovered(b);
	if (status != PBUS_STATUS_INVALID)
		return;
	/* The value as it is now: a client may have written since @sample,
	 * and its value must not be overwritten. Only if it is still the
	 * value applied does the status-only rewrite stay applied. */
	if (pbus_param_read(b->param, value, sizeof(value), &now) >= 0 &&
	    binding_publish(b, value, now.length, PBUS_STATUS_OK, 0) == 0 && now.seq == b->applied_seq)
		b->applied_seq = b->own_seq;
}

static int publish_level(struct binding *b, int level, uint64_t timestamp_ns)
{
	bool v = level != 0;

	if (b->info.type == PBUS_TYPE_BOOL)
		return binding_publish(b, &v, 1, PBUS_STATUS_OK, timestamp_ns);
	return 0;
}

static int publish_count(struct binding *b, uint64_t timestamp_ns)
{
	unsigned char buf[8];
	bool clamped;
	size_t n = param_encode_number(b, (double)b->edge_count, buf, &clamped);

	return binding_publish(b, buf, n, clamped ? PBUS_STATUS_MAJOR : PBUS_STATUS_OK, timestamp_ns);
}

static int open_gpio(struct binding *b)
{
	struct pbus_gpio_request_config config = {
		.consumer = "pbus-hwd", .nonblocking = b->kind == BINDING_GPIO_INPUT,
	};
	struct pbus_gpio_chip *chip = NULL;
	struct pbus_sample sample;
	bool value = false;
	int r, status = 0;

	r = pbus_gpio_chip_open_lookup(b->device, &chip);
	if (r < 0)
		return r;
	b->gpio_offset = b->line_offset;
	if (b->line_name)
		r = pbus_gpio_chip_find_line(chip, b->line_name, &b->gpio_offset);
	if (r == 0 && b->kind == BINDING_GPIO_OUTPUT) {
		status = param_bool(b, &value, &sample);
		b->settings.output_value = value;
		if (status >= 0)
			b->tried_seq = sample.seq;
	}
	if (r == 0 && status >= 0)
		r = pbus_gpio_request_lines(chip, &config, &b->gpio_offset, &b->settings, 1, &b->request);
	pbus_gpio_chip_close(chip);
	if (r < 0)
		return r;
	if (status < 0)
		return status;
	if (b->kind == BINDING_GPIO_OUTPUT) {
		output_in_effect(b, &sample, status);
		return 0;
	}
	/* An input starts from the line's level (or the count so far). */
	r = pbus_gpio_request_get_value(b->request, b->gpio_offset);
	if (r < 0)
		return r;
	binding_recovered(b);
	return b->info.type == PBUS_TYPE_BOOL ? publish_level(b, r, 0) : publish_count(b, 0);
}

static int open_i2c(struct binding *b)
{
	char path[300];
	unsigned long funcs = 0;
	int r;

	r = resolve_i2c(b->device, path, sizeof(path));
	if (r < 0)
		return r;
	r = pbus_i2c_open(path, &b->i2c);
	if (r < 0)
		return r;
	r = pbus_i2c_get_functionality(b->i2c, &funcs);
	if (r == 0) {
		b->smbus_only = !(funcs & PBUS_I2C_FUNC_I2C);
		if (b->smbus_only && b->width > 8 && !(funcs & PBUS_I2C_FUNC_SMBUS_READ_I2C_BLOCK))
			r = -EOPNOTSUPP;
	}
	if (r == 0)
		r = pbus_i2c_set_address(b->i2c, (uint16_t)b->address,
					 b->address > 0x7f ? PBUS_I2C_ADDRESS_TEN_BIT : 0);
	if (r < 0) {
		pbus_i2c_close(b->i2c);
		b->i2c = NULL;
	}
	return r;
}

static int open_pwm(struct binding *b)
{
	struct pbus_pwm_state state = {.period_ns = b->period_ns, .polarity = b->polarity, .enabled = true};
	struct pbus_sample sample;
	unsigned int chip;
	double value;
	int r, status;

	r = resolve_pwm(b->device, &chip);
	if (r < 0)
		return r;
	status = param_get_number(b, &value, &sample);
	if (status < 0)
		return status;
	b->tried_seq = sample.seq;
	state.duty_cycle_ns = pwm_duty(b, value);
	r = pbus_pwm_open(chip, b->channel, 0, 0, &b->pwm);
	if (r < 0)
		return r;
	r = pbus_pwm_configure(b->pwm, &state);
	if (r < 0) {
		pbus_pwm_close(b->pwm);
		b->pwm = NULL;
		return r;
	}
	output_in_effect(b, &sample, status);
	return 0;
}

int binding_open(struct binding *b)
{
	switch (b->kind) {
	case BINDING_GPIO_OUTPUT:
	case BINDING_GPIO_INPUT: return b->request ? 0 : open_gpio(b);
	case BINDING_I2C_REGISTER: return b->i2c ? 0 : open_i2c(b);
	case BINDING_PWM_DUTY: return b->pwm ? 0 : open_pwm(b);
	}
	return -EINVAL;
}

void binding_close(struct binding *b)
{
	pbus_gpio_request_release(b->request);
	b->request = NULL;
	pbus_i2c_close(b->i2c);
	b->i2c = NULL;
	/* The channel keeps running as it was: losing pbus-hwd must not make
	 * a fan stop. */
	pbus_pwm_close(b->pwm);
	b->pwm = NULL;
}

static int read_raw(struct binding *b, uint32_t *ret)
{
	uint8_t bytes[4];
	size_t n = b->width / 8;
	int r;

	if (b->smbus_only && n == 1) {
		r = pbus_i2c_smbus_read_byte_data(b->i2c, (uint8_t)b->reg);
		if (r < 0)
			return r;
		bytes[0] = (uint8_t)r;
	} else if (b->smbus_only) {
		r = pbus_i2c_smbus_read_i2c_block_data(b->i2c, (uint8_t)b->reg, bytes, n);
		if (r >= 0 && (size_t)r != n)
			r = -EIO;
	} else {
		r = pbus_i2c_read_register(b->i2c, (uint8_t)b->reg, bytes, n);
	}
	if (r < 0)
		return r;
	*ret = 0;
	for (size_t i = 0; i < n; i++)
		*ret |= (uint32_t)bytes[b->big_endian ? i : n - 1 - i] << (8 * (n - 1 - i));
	return 0;
}

int binding_poll_i2c(struct binding *b)
{
	unsigned char buf[8];
	uint32_t raw;
	double value;
	bool clamped;
	size_t n;
	int r;

	r = binding_open(b);
	if (r < 0)
		return r;
	r = read_raw(b, &raw);
	if (r < 0)
		return r;
	if (b->is_signed && b->width < 32 && (raw & (1u << (b->width - 1))))
		value = (double)raw - (double)(1u << b->width);
	else if (b->is_signed)
		value = (double)(int32_t)raw;
	else
		value = raw;
	n = param_encode_number(b, value * b->scale + b->offset, buf, &clamped);
	binding_recovered(b);
	return binding_publish(b, buf, n, clamped ? PBUS_STATUS_MAJOR : PBUS_STATUS_OK, 0);
}

int binding_read_edges(struct binding *b)
{
	struct pbus_gpio_edge_event events[16];
	int n;

	for (;;) {
		n = pbus_gpio_request_read_events(b->request, events, 16);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			if (b->info.type == PBUS_TYPE_BOOL) {
				publish_level(b, events[i].type == PBUS_GPIO_EDGE_EVENT_RISING,
					      events[i].timestamp_ns);
			} else {
				b->edge_count++;
				publish_count(b, events[i].timestamp_ns);
			}
		}
	}
}

int binding_apply_output(struct binding *b)
{
	struct pbus_sample sample;
	double value;
	int status, r;

	/* What failed, if the device cannot even be opened: the version now. */
	b->tried_seq = pbus_param_seq(b->param);
	if (!b->request && !b->pwm)
		return binding_open(b);
	status = param_get_number(b, &value, &sample);
	if (status < 0)
		return status;
	b->tried_seq = sample.seq;
	if (b->kind == BINDING_GPIO_OUTPUT)
		r = pbus_gpio_request_set_value(b->request, b->gpio_offset, value != 0);
	else
		r = pbus_pwm_set_duty_cycle(b->pwm, pwm_duty(b, value));
	if (r < 0)
		return r;
	output_in_effect(b, &sample, status);
	return 0;
}

int binding_check(struct binding *b)
{
	struct pbus_pwm_state state;
	struct pbus_sample sample;
	bool level;
	int r;

	switch (b->kind) {
	case BINDING_GPIO_OUTPUT:
		return b->request ? pbus_gpio_request_get_value(b->request, b->gpio_offset) : -ENODEV;
	case BINDING_GPIO_INPUT:
		if (!b->request)
			return -ENODEV;
		r = pbus_gpio_request_get_value(b->request, b->gpio_offset);
		if (r < 0 || b->info.type != PBUS_TYPE_BOOL)
			return r;
		/* Follow the level even where no edge is reported (HwEdges one way). */
		if (param_bool(b, &level, &sample) >= 0 && level != (r != 0))
			return publish_level(b, r, 0);
		return 0;
	case BINDING_PWM_DUTY:
		return b->pwm ? pbus_pwm_get_state(b->pwm, &state) : -ENODEV;
	case BINDING_I2C_REGISTER:
		return 0;
	}
	return -EINVAL;
}
