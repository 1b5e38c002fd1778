/* SPDX-License-Identifier: MIT */
/*
 * pbus-hwd.h: the parts of pbus-hwd, the runner of hardware bindings
 * (docs/hardware-guide.md, "Hardware bindings"; the keys are in
 * docs/deployment-spec.md and docs/schema-format.md).
 *
 * pbus-hwd opens an instance as its provider and connects parameters to
 * devices through libparambus-hw: it polls I2C registers into parameters,
 * turns GPIO edges into parameter changes, and drives GPIO lines and PWM
 * channels from parameters. A device that is missing or fails turns its
 * parameter's status to invalid; pbus-hwd retries it once a second and
 * carries on with the others. It runs as a process of its own (pbusd starts
 * and supervises it) so that a hung or crashing device never touches pbusd.
 *
 * Threads: the input thread (main.c, the main thread) owns every input
 * binding (gpio-input, i2c-register) and runs one epoll loop over their
 * descriptors and timers; the output thread owns every output binding
 * (gpio-output, pwm-duty), sleeps in a pbus_watch on their parameters and
 * reports each application to pbusd (--report-fd, common/hwd-report.h).
 * A binding is touched by its owning thread only; the table is thread-safe.
 */
#ifndef PBUS_HWD_H
#define PBUS_HWD_H

#include <stdbool.h>
#include <stdint.h>

#include <parambus/parambus.h>
#include <parambus/hw/hw.h>

enum binding_kind {
	BINDING_GPIO_OUTPUT,
	BINDING_GPIO_INPUT,
	BINDING_I2C_REGISTER,
	BINDING_PWM_DUTY,
};

struct binding {
	enum binding_kind kind;
	const char *device;             /* hw-device, as the schema writes it */
	struct pbus_table *table;       /* opened as provider */
	const struct pbus_param *param;
	struct pbus_param_info info;
	bool lost;          /* the device is missing or failing: status invalid */
	int last_error;     /* -errno of the last failure, for the log */
	uint64_t own_seq;   /* version of this program's last write of the parameter */

	/* Outputs: the version whose value the device has (0: none yet; a
	 * status-only rewrite of that value by this program moves it along),
	 * and the version the last application read (applied or not). */
	uint64_t applied_seq, tried_seq;
	/* Outputs: what pbusd was last told (main.c, --report-fd) and what it
	 * should be told; they differ while a report waits for room in the
	 * pipe (only the latest outcome is kept). */
	uint64_t sent_seq, report_seq;
	int32_t sent_result, report_result;

	/* gpio-output, gpio-input */
	const char *line_name;          /* or NULL: line_offset from the schema */
	unsigned int line_offset;
	struct pbus_gpio_line_settings settings;
	struct pbus_gpio_request *request;
	unsigned int gpio_offset;       /* of the line on the chip, once found */
	uint64_t edge_count;            /* gpio-input counting into an unsigned parameter */

	/* i2c-register */
	unsigned int address, reg, width;
	bool big_endian, is_signed;
	double rate_hz;
	struct pbus_i2c *i2c;
	bool smbus_only;                /* adapter without plain I2C: SMBus reads */
	int timer_fd;

	/* pwm-duty */
	unsigned int channel;
	uint64_t period_ns;
	enum pbus_pwm_polarity polarity;
	struct pbus_pwm *pwm;

	/* i2c-register, pwm-duty: value = raw * scale + offset */
	double scale, offset;
};

/* binding.c: read every parameter's binding from the schema's hw keys and
 * check it against the instance's parameter. On error, @error names the
 * parameter and the key; *ret_bindings is the caller's (bindings_free()). */
int bindings_load(const struct pbus_schema *schema, struct pbus_table *table,
		  struct binding **ret_bindings, uint32_t *ret_count, char *error, size_t error_size);
void bindings_free(struct binding *bindings, uint32_t count);
const char *binding_kind_name(enum binding_kind kind);

/* Open the binding's device (a no-op if open); close it again. Open applies
 * an output's current parameter value. 0 or -errno. An output's
 * application (here or by binding_apply_output()) sets tried_seq to the
 * version it read and, if it worked, applied_seq to it too. */
int binding_open(struct binding *b);
void binding_close(struct binding *b);

/* Inputs: one poll of an I2C register, or the pending edge events of a GPIO
 * input, into the parameter. Outputs: drive the device from the parameter's
 * current value. Health check: one cheap ioctl that fails if the device is
 * gone (gpio: read the line; pwm: read the state). 0 or -errno. */
int binding_poll_i2c(struct binding *b);
int binding_read_edges(struct binding *b);
int binding_apply_output(struct binding *b);
int binding_check(struct binding *b);

/* The parameter's value: write @value (stored encoding) with @status at
 * @timestamp_ns (0: now). Records own_seq. */
int binding_publish(struct binding *b, const void *value, size_t length, unsigned status,
		    uint64_t timestamp_ns);

/* A device failed with @error (-errno): close it, mark the binding lost and
 * its parameter invalid (once, logged once). binding_recovered(): the
 * device works again (logged; the caller publishes a fresh value). */
void binding_failed(struct binding *b, int error, const char *what);
void binding_recovered(struct binding *b);

/* Number conversions between a numeric parameter and a double. */
int param_get_number(const struct binding *b, double *ret, struct pbus_sample *ret_sample);
/* Encode @value in the parameter's type, rounded and clamped to its limits;
 * *ret_clamped tells whether it had to be. Returns the length. */
size_t param_encode_number(const struct binding *b, double value, void *buf, bool *ret_clamped);

#endif
