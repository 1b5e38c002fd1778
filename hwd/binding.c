/* SPDX-License-Identifier: MIT */
/*
 * binding.c: what a binding is. Reads the hardware binding keys of the
 * compiled schema (docs/schema-format.md, "Hardware binding keys"), checks
 * them against the instance's parameters, converts numbers between
 * parameters and devices, and writes values and statuses.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../lib/value-internal.h"
#include "pbus-hwd.h"

struct loader {
	const struct pbus_schema *schema;
	uint32_t index;
	const char *name;
	char *error;
	size_t error_size;
};

static int fail(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(l->error, l->error_size, "parameter '%s': ", l->name);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < l->error_size)
		vsnprintf(l->error + n, l->error_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *key(struct loader *l, const char *name)
{
	return pbus_schema_param_extra(l->schema, l->index, name);
}

static int need(struct loader *l, const char *name, const char **ret)
{
	*ret = key(l, name);
	if (!*ret || !**ret)
		return fail(l, "binding needs %s=", name);
	return 0;
}

static int get_u64(struct loader *l, const char *name, uint64_t lo, uint64_t hi, uint64_t *ret)
{
	const char *text;
	char *end;
	unsigned long long v;

	if (need(l, name, &text) < 0)
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (*end || errno || text[0] == '-' || v < lo || v > hi)
		return fail(l, "%s='%s' is not an integer in %llu..%llu", name, text,
			    (unsigned long long)lo, (unsigned long long)hi);
	*ret = v;
	return 0;
}

static int get_uint(struct loader *l, const char *name, unsigned lo, unsigned hi, unsigned *ret)
{
	uint64_t v;

	if (get_u64(l, name, lo, hi, &v) < 0)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int get_double(struct loader *l, const char *name, double *ret)
{
	const char *text;
	char *end;

	if (need(l, name, &text) < 0)
		return -EINVAL;
	errno = 0;
	*ret = strtod(text, &end);
	if (*end || errno || !isfinite(*ret))
		return fail(l, "%s='%s' is not a number", name, text);
	return 0;
}

static int get_bool(struct loader *l, const char *name, bool *ret)
{
	const char *text;

	if (need(l, name, &text) < 0)
		return -EINVAL;
	if (!strcmp(text, "true") || !strcmp(text, "false")) {
		*ret = text[0] == 't';
		return 0;
	}
	return fail(l, "%s='%s' is not true or false", name, text);
}

/* @choices: NULL-terminated; the result is the position of the match. */
static int get_choice(struct loader *l, const char *name, const char *const *choices, int *ret)
{
	const char *text;

	if (need(l, name, &text) < 0)
		return -EINVAL;
	for (int i = 0; choices[i]; i++)
		if (!strcmp(text, choices[i])) {
			*ret = i;
			return 0;
		}
	return fail(l, "%s='%s' is not one of the values docs/schema-format.md lists", name, text);
}

static bool is_unsigned_type(unsigned type)
{
	return type >= PBUS_TYPE_UINT8 && type <= PBUS_TYPE_UINT64;
}

static bool is_number_type(unsigned type)
{
	return type >= PBUS_TYPE_INT8 && type <= PBUS_TYPE_DOUBLE;
}

static int load_gpio(struct loader *l, struct binding *b)
{
	static const char *const biases[] = {"as-is", "disabled", "pull-up", "pull-down", NULL};
	static const char *const drives[] = {"push-pull", "open-drain", "open-source", NULL};
	static const char *const edges[] = {"none", "rising", "falling", "both", NULL};
	int choice;

	b->line_name = key(l, "hw-line");
	if (!b->line_name && get_uint(l, "hw-line-offset", 0, 4095, &b->line_offset) < 0)
		return -EINVAL;
	if (get_bool(l, "hw-active-low", &b->settings.active_low) < 0 ||
	    get_choice(l, "hw-bias", biases, &choice) < 0)
		return -EINVAL;
	b->settings.bias = (enum pbus_gpio_bias)choice;
	if (b->kind == BINDING_GPIO_OUTPUT) {
		if (b->info.type != PBUS_TYPE_BOOL || (b->info.flags & PBUS_PARAM_READONLY))
			return fail(l, "a gpio-output binding needs a writable bool parameter");
		if (get_choice(l, "hw-drive", drives, &choice) < 0)
			return -EINVAL;
		b->settings.direction = PBUS_GPIO_DIRECTION_OUTPUT;
		b->settings.drive = (enum pbus_gpio_drive)choice;
		return 0;
	}
	if ((b->info.type != PBUS_TYPE_BOOL && !is_unsigned_type(b->info.type)) ||
	    !(b->info.flags & PBUS_PARAM_READONLY))
		return fail(l, "a gpio-input binding needs a read-only bool or unsigned parameter");
	if (get_choice(l, "hw-edges", edges, &choice) < 0 || choice == 0 ||
	    get_uint(l, "hw-debounce-us", 0, 1000000, &b->settings.debounce_period_us) < 0)
		return choice == 0 ? fail(l, "hw-edges='none' is not allowed") : -EINVAL;
	b->settings.direction = PBUS_GPIO_DIRECTION_INPUT;
	b->settings.edge = (enum pbus_gpio_edge)choice;
	/* Event timestamps in the table's clock. */
	b->settings.clock = PBUS_GPIO_CLOCK_REALTIME;
	return 0;
}

static int load_scale(struct loader *l, struct binding *b)
{
	if (get_double(l, "hw-scale", &b->scale) < 0 || get_double(l, "hw-offset", &b->offset) < 0)
		return -EINVAL;
	if (b->scale == 0)
		return fail(l, "hw-scale must not be 0");
	return 0;
}

static int load_i2c(struct loader *l, struct binding *b)
{
	static const char *const orders[] = {"big", "little", NULL};
	int choice;

	if (!is_number_type(b->info.type) || !(b->info.flags & PBUS_PARAM_READONLY))
		return fail(l, "an i2c-register binding needs a read-only numeric parameter");
	if (get_uint(l, "hw-address", 0, 0x3ff, &b->address) < 0 ||
	    get_uint(l, "hw-register", 0, 255, &b->reg) < 0 ||
	    get_uint(l, "hw-width", 8, 32, &b->width) < 0 ||
	    get_choice(l, "hw-byte-order", orders, &choice) < 0 ||
	    get_bool(l, "hw-signed", &b->is_signed) < 0 ||
	    get_double(l, "hw-rate-hz", &b->rate_hz) < 0 || load_scale(l, b) < 0)
		return -EINVAL;
	if (b->width != 8 && b->width != 16 && b->width != 32)
		return fail(l, "hw-width=%u is not 8, 16 or 32", b->width);
	if (!(b->rate_hz > 0 && b->rate_hz <= 1000))
		return fail(l, "hw-rate-hz=%g is not in (0, 1000]", b->rate_hz);
	b->big_endian = choice == 0;
	return 0;
}

static int load_pwm(struct loader *l, struct binding *b)
{
	static const char *const polarities[] = {"normal", "inversed", NULL};
	int choice;

	if (!is_number_type(b->info.type) || (b->info.flags & PBUS_PARAM_READONLY))
		return fail(l, "a pwm-duty binding needs a writable numeric parameter");
	if (get_uint(l, "hw-channel", 0, 1023, &b->channel) < 0 ||
	    get_u64(l, "hw-period-ns", 1, 1000000000000ull, &b->period_ns) < 0 ||
	    get_choice(l, "hw-polarity", polarities, &choice) < 0 || load_scale(l, b) < 0)
		return -EINVAL;
	b->polarity = (enum pbus_pwm_polarity)choice;
	return 0;
}

const char *binding_kind_name(enum binding_kind kind)
{
	static const char *const names[] = {"gpio-output", "gpio-input", "i2c-register", "pwm-duty"};

	return names[kind];
}

int bindings_load(const struct pbus_schema *schema, struct pbus_table *table,
		  struct binding **ret_bindings, uint32_t *ret_count, char *error, size_t error_size)
{
	struct loader l = {.schema = schema, .error = error, .error_size = error_size};
	uint32_t n = pbus_schema_param_count(schema), count = 0;
	struct binding *bindings = calloc(n ? n : 1, sizeof(*bindings));
	int r = 0;

	if (!bindings)
		return -ENOMEM;
	for (l.index = 0; l.index < n && r == 0; l.index++) {
		const char *kind = key(&l, "hw");
		struct binding *b = &bindings[count];
		int k;

		if (!kind)
			continue;
		l.name = pbus_schema_param_name(schema, l.index);
		for (k = 0; k <= BINDING_PWM_DUTY; k++)
			if (!strcmp(kind, binding_kind_name((enum binding_kind)k)))
				break;
		if (k > BINDING_PWM_DUTY) {
			r = fail(&l, "unknown binding hw='%s'", kind);
			break;
		}
		b->kind = (enum binding_kind)k;
		b->timer_fd = -1;
		b->table = table;
		if (pbus_table_find(table, l.name, &b->param) < 0 ||
		    pbus_param_describe(b->param, &b->info) < 0) {
			r = fail(&l, "not in the instance (is it served from this schema?)");
			break;
		}
		if (need(&l, "hw-device", &b->device) < 0) {
			r = -EINVAL;
			break;
		}
		switch (b->kind) {
		case BINDING_GPIO_OUTPUT:
		case BINDING_GPIO_INPUT: r = load_gpio(&l, b); break;
		case BINDING_I2C_REGISTER: r = load_i2c(&l, b); break;
		case BINDING_PWM_DUTY: r = load_pwm(&l, b); break;
		}
		count++;
	}
	if (r < 0) {
		free(bindings);
		return r;
	}
	*ret_bindings = bindings;
	*ret_count = count;
	return 0;
}

void bindings_free(struct binding *bindings, uint32_t count)
{
	for (uint32_t i = 0; bindings && i < count; i++)
		binding_close(&bindings[i]);
	free(bindings);
}

/* --- values ---------------------------------------------------------------- */

int param_get_number(const struct binding *b, double *ret, struct pbus_sample *ret_sample)
{
	unsigned char v[8];
	int r = pbus_param_read(b->param, v, sizeof(v), ret_sample);

	if (r >= 0)
		*ret = pbus_scalar_as_double(b->info.type, v);
	return r;
}

static double clamp(double value, double lo, double hi, bool *clamped)
{
	if (value < lo) {
		*clamped = true;
		return lo;
	}
	if (value > hi) {
		*clamped = true;
		return hi;
	}
	return value;
}

size_t param_encode_number(const struct binding *b, double value, void *buf, bool *ret_clamped)
{
	static const double type_lo[] = {
		[PBUS_TYPE_BOOL] = 0, [PBUS_TYPE_INT8] = -128.0, [PBUS_TYPE_INT16] = -32768.0,
		[PBUS_TYPE_INT32] = -2147483648.0, [PBUS_TYPE_INT64] = -9223372036854775808.0,
		[PBUS_TYPE_FLOAT] = -3.4028234663852886e38, [PBUS_TYPE_DOUBLE] = -1.79769313486231570e308,
	};
	static const double type_hi[] = {
		[PBUS_TYPE_BOOL] = 1, [PBUS_TYPE_INT8] = 127.0, [PBUS_TYPE_INT16] = 32767.0,
		[PBUS_TYPE_INT32] = 2147483647.0,
		/* The largest doubles below 2^63 and 2^64. */
		[PBUS_TYPE_INT64] = 9223372036854774784.0,
		[PBUS_TYPE_UINT8] = 255.0, [PBUS_TYPE_UINT16] = 65535.0, [PBUS_TYPE_UINT32] = 4294967295.0,
		[PBUS_TYPE_UINT64] = 18446744073709549568.0,
		[PBUS_TYPE_FLOAT] = 3.4028234663852886e38, [PBUS_TYPE_DOUBLE] = 1.79769313486231570e308,
	};
	unsigned t = b->info.type;
	bool clamped = false;

	if (t != PBUS_TYPE_FLOAT && t != PBUS_TYPE_DOUBLE)
		value = nearbyint(value);
	value = clamp(value, type_lo[t], type_hi[t], &clamped);
	if (b->info.flags & PBUS_PARAM_HAS_MIN) {
		double min = t == PBUS_TYPE_FLOAT || t == PBUS_TYPE_DOUBLE ? b->info.min.d
			     : is_unsigned_type(t) ? (double)b->info.min.u : (double)b->info.min.i;
		value = clamp(value, min, INFINITY, &clamped);
	}
	if (b->info.flags & PBUS_PARAM_HAS_MAX) {
		double max = t == PBUS_TYPE_FLOAT || t == PBUS_TYPE_DOUBLE ? b->info.max.d
			     : is_unsigned_type(t) ? (double)b->info.max.u : (double)b->info.max.i;
		value = clamp(value, -INFINITY, max, &clamped);
	}
	*ret_clamped = clamped;
	switch (t) {
	case PBUS_TYPE_BOOL: *(bool *)buf = value != 0; return 1;
	case PBUS_TYPE_INT8: *(int8_t *)buf = (int8_t)value; return 1;
	case PBUS_TYPE_INT16: *(int16_t *)buf = (int16_t)value; return 2;
	case PBUS_TYPE_INT32: *(int32_t *)buf = (int32_t)value; return 4;
	case PBUS_TYPE_INT64: *(int64_t *)buf = (int64_t)value; return 8;
	case PBUS_TYPE_UINT8: *(uint8_t *)buf = (uint8_t)value; return 1;
	case PBUS_TYPE_UINT16: *(uint16_t *)buf = (uint16_t)value; return 2;
	case PBUS_TYPE_UINT32: *(uint32_t *)buf = (uint32_t)value; return 4;
	case PBUS_TYPE_UINT64: *(uint64_t *)buf = (uint64_t)value; return 8;
	case PBUS_TYPE_FLOAT: *(float *)buf = (float)value; return 4;
	default: *(double *)buf = value; return 8;
	}
}

int binding_publish(struct binding *b, const void *value, size_t length, unsigned status,
		    uint64_t timestamp_ns)
{
	struct pbus_write w = {
		.index = b->info.index, .status = status, .timestamp_ns = timestamp_ns,
		.value = value, .length = length,
	};
	int r = pbus_table_write_many(b->table, &w, 1);

	if (r < 0) {
		log_msg(LOG_ERROR, "%s: cannot write the parameter: %s", b->info.name,
			pbus_strerror(w.result ? w.result : r));
		return r;
	}
	b->own_seq = w.seq;
	return 0;
}

void binding_failed(struct binding *b, int error, const char *what)
{
	unsigned char value[8];
	struct pbus_sample sample;
	int r;

	binding_close(b);
	/* Logged once per loss, not once per retry. */
	if (!b->lost)
		log_msg(LOG_WARNING, "%s: %s %s '%s': %s; status invalid, retrying every second",
			b->info.name, binding_kind_name(b->kind), what, b->device, strerror(-error));
	else if (b->last_error != error)
		log_msg(LOG_DEBUG, "%s: still failing: %s", b->info.name, strerror(-error));
	b->lost = true;
	b->last_error = error;
	/* Keep the value, mark it invalid (again, if a client wrote it since). */
	r = pbus_param_read(b->param, value, sizeof(value), &sample);
	if (r >= 0 && r != PBUS_STATUS_INVALID &&
	    binding_publish(b, value, sample.length, PBUS_STATUS_INVALID, 0) == 0) {
		/* The same value, a new status: an output's rewrite is as
		 * applied, or as failed, as the version it copies. */
		if (b->applied_seq && sample.seq == b->applied_seq)
			b->applied_seq = b->own_seq;
		if (sample.seq == b->tried_seq)
			b->tried_seq = b->own_seq;
	}
}

void binding_recovered(struct binding *b)
{
	if (!b->lost)
		return;
	log_msg(LOG_INFO, "%s: %s '%s' works again", b->info.name, binding_kind_name(b->kind),
		b->device);
	b->lost = false;
	b->last_error = 0;
}
