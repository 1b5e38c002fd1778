/* SPDX-License-Identifier: MIT */
/*
 * simulator.c: the demo instrument's "acquisition": a bench power supply
 * driving a simulated load. It is the instance's provider: it opens the
 * table with PBUS_OPEN_PROVIDER, fills in the identity, and at 1 kHz reads
 * the user's settings (inline, lock-free) and writes the measured voltage,
 * current and heat-sink temperature with one timestamp, as a prepared batch
 * (pbus_batch_new() once, pbus_batch_write() each tick).
 *
 * The model: a resistive load that drifts slowly between 6 and 10 ohm; the
 * supply regulates voltage (CV) until the current limit is reached, then
 * current (CC); the heat sink warms with the dissipated power. Over-voltage
 * (setpoint above the OVP level) and over-temperature trip the output,
 * which stays off until the user switches output_enable off and on again.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "psu-rpc.h"
#include "psu.h"

#define PASS_DISSIPATION_C_PER_W 4.0  /* heat-sink rise per watt in the pass element */
#define THERMAL_TIME_CONSTANT_S 20.0
#define AMBIENT_C 25.0
#define OVER_TEMPERATURE_C 85.0
#define WARM_C 70.0

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* A small deterministic noise source (xorshift), in [-1, 1]. */
static double noise(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15u;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (double)(x >> 11) / (double)(UINT64_C(1) << 52) - 1.0;
}

struct model {
	double temperature;
	enum psu_output_state state;
	enum psu_trip_cause cause;
	char status[128];
	/* What was last published, so that state changes are written once. */
	bool published;
	enum psu_output_state published_state;
	enum psu_trip_cause published_cause;
	char published_status[128];
	/* For the methods: the last measured output voltage, the calibration
	 * gain applied to it, and the protection switch to fire on a trip. */
	double measured_voltage;
	double gain;
	bool interlock_open;
	struct psu_server_PowerSupply *server;
	struct psu *psu; /* the open instance (it changes when pbusd restarts) */
};

/* The measurements of one tick: the record of the prepared batch. */
struct measurement {
	double voltage;
	double current;
	float temperature;
};

static int prepare_measurements(struct psu *psu, struct pbus_batch **ret_batch)
{
	const struct pbus_batch_field fields[3] = {
		{psu_param(psu, PSU_MEASURED_VOLTAGE), offsetof(struct measurement, voltage)},
		{psu_param(psu, PSU_MEASURED_CURRENT), offsetof(struct measurement, current)},
		{psu_param(psu, PSU_TEMPERATURE), offsetof(struct measurement, temperature)},
	};

	return pbus_batch_new(psu_table(psu), fields, 3, ret_batch);
}

static int write_state(struct psu *psu, const struct model *m, uint64_t now)
{
	struct pbus_write w[3] = {
		{.index = PSU_OUTPUT_STATE, .value = &m->state, .length = 4, .timestamp_ns = now},
		{.index = PSU_TRIP_CAUSE, .value = &m->cause, .length = 4, .timestamp_ns = now},
		{.index = PSU_STATUS_TEXT, .value = m->status, .length = strlen(m->status),
		 .timestamp_ns = now, .status = m->state == PSU_OUTPUT_STATE_TRIPPED ? PBUS_STATUS_MAJOR
										: PBUS_STATUS_OK},
	};

	return pbus_table_write_many(psu_table(psu), w, 3);
}

/* Trips the output: @why (at most 60 bytes) and @fix (at most 31) make the
 * status text, which fits the 128-byte parameter; the same goes to stderr,
 * so that a demo whose restored settings trip at once says why and what to
 * do. */
static void trip(struct model *m, enum psu_trip_cause cause, const char *why, const char *fix)
{
	m->state = PSU_OUTPUT_STATE_TRIPPED;
	m->cause = cause;
	snprintf(m->status, sizeof(m->status), "tripped: %.60s; %.31s, then cycle the output", why, fix);
	fprintf(stderr, "psu-sim: output %s\n", m->status);
	if (m->server)
		psu_server_PowerSupply_fire_protectionTripped(m->server, cause, m->measured_voltage);
}

/* --- the methods (psu.fidl), served between ticks in the main thread --------- */

static int do_clear_trip(struct psu_server_PowerSupply *server, const struct pbus_caller *caller,
			 bool *was_tripped)
{
	struct model *m = psu_server_PowerSupply_userdata(server);

	(void)caller;
	*was_tripped = m->state == PSU_OUTPUT_STATE_TRIPPED;
	if (*was_tripped) {
		/* The output stays off until it is switched on again. */
		int r = psu_set_output_enable(m->psu, false);

		if (r < 0)
			return r;
		m->state = PSU_OUTPUT_STATE_OFF;
		m->cause = PSU_TRIP_CAUSE_NONE;
		m->status[0] = 0;
	}
	return 0;
}

static int do_calibrate(struct psu_server_PowerSupply *server, const struct pbus_caller *caller,
			double reference, enum psu_calibrate_error *error, double *gain)
{
	struct model *m = psu_server_PowerSupply_userdata(server);
	double raw = m->measured_voltage / m->gain;

	(void)caller;
	*gain = m->gain;
	if (m->state != PSU_OUTPUT_STATE_ON || raw <= 0) {
		*error = PSU_CALIBRATE_ERROR_OUTPUT_OFF;
		return 0;
	}
	if (!isfinite(reference) || fabs(reference - raw) > 0.1 * raw) {
		*error = PSU_CALIBRATE_ERROR_OUT_OF_RANGE;
		return 0;
	}
	m->gain = reference / raw;
	*gain = m->gain;
	*error = PSU_CALIBRATE_ERROR_OK;
	return 0;
}

static int do_self_test(struct psu_server_PowerSupply *server, const struct pbus_caller *caller,
			enum psu_self_test_error *error, struct psu_self_test_report *report)
{
	struct model *m = psu_server_PowerSupply_userdata(server);
	struct pbus_rpc_arena *arena = pbus_caller_arena(caller);
	char **checks = pbus_rpc_arena_alloc(arena, 3 * sizeof(char *));
	char line[96];

	if (!checks)
		return -ENOMEM;
	report->reference_voltage = 2.5 + 0.0002 * noise();
	report->temperature = (float)m->temperature;
	snprintf(line, sizeof(line), "reference %.4f V: ok", report->reference_voltage);
	checks[0] = pbus_rpc_arena_strdup(arena, line);
	snprintf(line, sizeof(line), "heat sink %.1f degC: %s", m->temperature,
		 m->temperature > OVER_TEMPERATURE_C ? "too hot" : "ok");
	checks[1] = pbus_rpc_arena_strdup(arena, line);
	checks[2] = pbus_rpc_arena_strdup(arena, m->interlock_open ? "interlock: open" : "interlock: closed");
	if (!checks[0] || !checks[1] || !checks[2])
		return -ENOMEM;
	report->checks.items = checks;
	report->checks.count = 3;
	*error = m->interlock_open ? PSU_SELF_TEST_ERROR_INTERLOCK_OPEN
		 : m->temperature > OVER_TEMPERATURE_C ? PSU_SELF_TEST_ERROR_OVER_TEMPERATURE
						       : PSU_SELF_TEST_ERROR_PASSED;
	report->passed = *error == PSU_SELF_TEST_ERROR_PASSED;
	return 0;
}

static const struct psu_server_PowerSupply_impl methods = {
	.clear_trip = do_clear_trip,
	.calibrate = do_calibrate,
	.selfTest = do_self_test,
};

/* Serve the methods at local:INSTANCE:<interface> on @loop; a failure is
 * reported and the simulation goes on without them. */
static struct psu_server_PowerSupply *serve_methods(const char *instance, struct model *m,
						    struct pbus_loop *loop)
{
	struct pbus_rpc_options o = {.loop = loop};
	struct psu_server_PowerSupply *server = NULL;
	char address[PBUS_RPC_ADDRESS_MAX + 1];

	snprintf(address, sizeof(address), "local:%s:%s", instance, psu_PowerSupply_interface.name);
	if (psu_server_PowerSupply_new_with_options(address, &methods, m, &o, &server) < 0) {
		fprintf(stderr, "psu-sim: methods not served: %s\n", pbus_rpc_last_error());
		return NULL;
	}
	return server;
}

/* One tick of the model: read the settings, compute, publish (@measurements:
 * prepare_measurements()). */
static int tick(struct psu *psu, struct pbus_batch *measurements, struct model *m, double t,
		double dt)
{
	double vset = 0, iset = 0, ovp = 0, vmax = 0, imax = 0, v = 0, i = 0;
	double load = 8.0 + 2.0 * sin(2 * M_PI * t / 10.0);
	bool enabled = false;
	uint32_t current_status = PBUS_STATUS_OK, temperature_status = PBUS_STATUS_OK;
	struct timespec now_ts;
	uint64_t now;
	float temperature;
	int r;

	psu_get_voltage_setpoint(psu, &vset);
	psu_get_current_setpoint(psu, &iset);
	psu_get_ovp_level(psu, &ovp);
	psu_get_limits_voltage(psu, &vmax);
	psu_get_limits_current(psu, &imax);
	psu_get_output_enable(psu, &enabled);
	psu_get_interlock_open(psu, &m->interlock_open);
	vset = fmin(vset, vmax);
	iset = fmin(iset, imax);

	if (!enabled) {
		m->state = PSU_OUTPUT_STATE_OFF;
		m->cause = PSU_TRIP_CAUSE_NONE;
		m->status[0] = 0;
	} else if (m->state != PSU_OUTPUT_STATE_TRIPPED) {
		m->state = PSU_OUTPUT_STATE_ON;
		if (vset > ovp) {
			char why[81];

			snprintf(why, sizeof(why), "over-voltage, setpoint %.3f V above OVP %.2f V", vset, ovp);
			trip(m, PSU_TRIP_CAUSE_OVER_VOLTAGE, why, "lower the setpoint or raise OVP");
		} else if (m->temperature > OVER_TEMPERATURE_C) {
			trip(m, PSU_TRIP_CAUSE_OVER_TEMPERATURE, "heat sink above 85 degC", "let it cool");
		}
	}
	if (m->state == PSU_OUTPUT_STATE_ON) {
		v = vset;
		i = v / load;
		if (i > iset) { /* constant-current mode */
			i = iset;
			v = i * load;
			current_status = PBUS_STATUS_MINOR;
			snprintf(m->status, sizeof(m->status), "constant current: limited to %.3f A", iset);
		} else {
			m->status[0] = 0;
		}
		v += 0.0005 * noise();
		i += 0.0002 * noise();
		v *= m->gain;
	}
	m->measured_voltage = v;
	/* The linear regulator drops (30 V - v) at current i. */
	m->temperature += (AMBIENT_C + PASS_DISSIPATION_C_PER_W * (30.0 - v) * i * 0.1 - m->temperature) *
			  dt / THERMAL_TIME_CONSTANT_S;
	temperature = (float)(m->temperature + 0.05 * noise());
	if (m->temperature > WARM_C)
		temperature_status = PBUS_STATUS_MINOR;
	if (m->temperature > OVER_TEMPERATURE_C)
		temperature_status = PBUS_STATUS_MAJOR;

	clock_gettime(CLOCK_REALTIME, &now_ts);
	now = (uint64_t)now_ts.tv_sec * 1000000000u + (uint64_t)now_ts.tv_nsec;
	{
		const struct measurement meas = {v, i, temperature};
		/* An over-voltage trip makes the voltage reading questionable
		 * (major): SCPI's STATus:QUEStionable VOLTage bit. */
		const uint32_t voltage_status =
			m->state == PSU_OUTPUT_STATE_TRIPPED && m->cause == PSU_TRIP_CAUSE_OVER_VOLTAGE
				? PBUS_STATUS_MAJOR
				: PBUS_STATUS_OK;
		const uint32_t status[3] = {voltage_status, current_status, temperature_status};

		r = pbus_batch_write(measurements, &meas, status, now);
		if (r < 0)
			return r;
	}
	if (!m->published || m->state != m->published_state || m->cause != m->published_cause ||
	    strcmp(m->status, m->published_status)) {
		r = write_state(psu, m, now);
		m->published = r == 0;
		m->published_state = m->state;
		m->published_cause = m->cause;
		memcpy(m->published_status, m->status, sizeof(m->status));
	}
	return r;
}

static int fill_identity(struct psu *psu, const char *instance)
{
	char serial[32];
	const char *firmware = "1.0.0";

	snprintf(serial, sizeof(serial), "SIM-%.27s", instance);
	return psu_publish_identity_serial(psu, serial) < 0 ||
			       psu_publish_identity_firmware(psu, firmware) < 0
		       ? -EIO
		       : 0;
}

/* What a (re)opened instance needs before the first tick: the prepared
 * measurements (*ret_measurements) and the identity. */
static int start(struct psu *psu, const char *instance, struct pbus_batch **ret_measurements)
{
	int r = prepare_measurements(psu, ret_measurements);

	if (r < 0) {
		fprintf(stderr, "psu-sim: cannot prepare the measurements of '%s': %s\n", instance,
			pbus_strerror(r));
		return r;
	}
	if (fill_identity(psu, instance) < 0) {
		fprintf(stderr, "psu-sim: cannot write the identity of '%s'\n", instance);
		return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct psu *psu = NULL;
	struct pbus_batch *measurements = NULL;
	struct model m = {.temperature = AMBIENT_C, .state = PSU_OUTPUT_STATE_OFF, .gain = 1.0};
	struct pbus_loop *loop = NULL;
	struct timespec next;
	double rate = 1000.0, t = 0;
	int64_t period_ns;
	int r;

	if (argc < 2 || !strcmp(argv[1], "--help") || argc > 3) {
		printf("Usage: psu-sim INSTANCE [RATE_HZ]\n\n"
		       "Simulate the demo bench power supply on instance INSTANCE (served by pbusd\n"
		       "from psu.pbs): write its measurements RATE_HZ times a second (default 1000),\n"
		       "and serve its methods (clear_trip, calibrate, selfTest) and the broadcast\n"
		       "protectionTripped at local:INSTANCE:com.example.psu.PowerSupply.\n");
		return argc < 2 ? 2 : 0;
	}
	if (argc == 3 && ((rate = atof(argv[2])) < 1 || rate > 100000)) {
		fprintf(stderr, "psu-sim: rate '%s' is not 1 … 100000 Hz\n", argv[2]);
		return 2;
	}
	period_ns = (int64_t)(1e9 / rate);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	r = psu_open(argv[1], PBUS_OPEN_PROVIDER, &psu);
	if (r < 0) {
		char why[512];

		fprintf(stderr, "psu-sim: instance '%s': %s\n", argv[1],
			psu_describe_open_error(argv[1], r, why, sizeof(why)));
		return 1;
	}
	if (start(psu, argv[1], &measurements) < 0)
		return 1;
	m.psu = psu;
	if (pbus_loop_new(&loop) == 0)
		m.server = serve_methods(argv[1], &m, loop);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		/* Calls (and reconnects to pbusd, as a registered server) between
		 * ticks, in this thread: the methods see the model as the ticks do. */
		if (loop)
			pbus_loop_dispatch(loop, 0);
		r = tick(psu, measurements, &m, t, (double)period_ns / 1e9);
		if (r == -ESTALE) {
			/* pbusd stopped or restarted: wait for it (as long as it
			 * takes) and follow the new segment, which starts from the
			 * defaults: identity and state are published again. */
			pbus_batch_free(measurements);
			measurements = NULL;
			psu_close(psu);
			psu = NULL;
			fprintf(stderr, "psu-sim: instance '%s' closed; waiting for pbusd\n", argv[1]);
			while (!stop && psu == NULL) {
				struct timespec pause = {0, 50000000};

				if (psu_open(argv[1], PBUS_OPEN_PROVIDER, &psu) < 0)
					nanosleep(&pause, NULL);
			}
			if (stop)
				break;
			if (start(psu, argv[1], &measurements) < 0) {
				pbus_batch_free(measurements);
				psu_close(psu);
				return 1;
			}
			m.published = false;
			m.psu = psu;
			clock_gettime(CLOCK_MONOTONIC, &next);
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "psu-sim: write failed: %s\n", pbus_strerror(r));
			pbus_batch_free(measurements);
			psu_close(psu);
			return 1;
		}
		t += (double)period_ns / 1e9;
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	psu_server_PowerSupply_free(m.server);
	pbus_loop_free(loop);
	pbus_batch_free(measurements);
	psu_close(psu);
	return 0;
}
