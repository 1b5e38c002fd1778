/* SPDX-License-Identifier: MIT */
/*
 * methods-sdbus.c: the sd-bus contender of benchmark scenario 3, method
 * calls (../shared/BENCHMARKS.md, docs/benchmarks.md): systemd's sd-bus
 * (libsystemd) on a private dbus-daemon that bench/run-methods.py starts,
 * the study's fastest D-Bus configuration without kdbus.
 *
 * The server connects to the bus at ADDR (a D-Bus address,
 * unix:path=...), exports the object /org/parambus/Bench with the interface
 * org.parambus.Bench through sd_bus_add_object_vtable():
 *
 *   Empty()                  no arguments, an empty reply;
 *   Copy(iddddu) -> iddddu   reads its arguments and returns them;
 *
 * takes the well-known name org.parambus.Bench (replacing the server of a
 * previous run, whose disconnect the daemon may not have processed yet) and
 * dispatches with sd_bus_process() and sd_bus_wait() until SIGTERM. It
 * serves both methods whatever --method says.
 *
 * The client calls one of them through the daemon with sd_bus_call_method():
 * a message built, sent and its reply awaited per call, as an sd-bus
 * application calls; for Copy it reads the reply's arguments and checks
 * them. The command line and output are those of every contender
 * (methods-common.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "methods-common.h"

#define BUS_NAME "org.parambus.Bench"
#define OBJECT_PATH "/org/parambus/Bench"
#define INTERFACE "org.parambus.Bench"

static int method_empty(sd_bus_message *call, void *userdata, sd_bus_error *error)
{
	(void)userdata;
	(void)error;
	return sd_bus_reply_method_return(call, NULL);
}

static int method_copy(sd_bus_message *call, void *userdata, sd_bus_error *error)
{
	struct methods_copy_args a;
	int r;

	(void)userdata;
	(void)error;
	r = sd_bus_message_read(call, "iddddu", &a.i, &a.d[0], &a.d[1], &a.d[2], &a.d[3], &a.u);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(call, "iddddu", a.i, a.d[0], a.d[1], a.d[2], a.d[3], a.u);
}

static const sd_bus_vtable bench_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("Empty", "", "", method_empty, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Copy", "iddddu", "iddddu", method_copy, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END,
};

/* A connection to the bus at @address, as a bus client (Hello sent). */
static sd_bus *bus_connect(const char *address)
{
	sd_bus *bus = NULL;
	int r;

	if ((r = sd_bus_new(&bus)) < 0)
		methods_fail("sd_bus_new", r);
	if ((r = sd_bus_set_address(bus, address)) < 0)
		methods_fail(address, r);
	if ((r = sd_bus_set_bus_client(bus, 1)) < 0)
		methods_fail("sd_bus_set_bus_client", r);
	if ((r = sd_bus_start(bus)) < 0)
		methods_fail(address, r);
	return bus;
}

static int server(const struct methods_options *opts)
{
	sd_bus *bus = bus_connect(opts->address);
	int r;

	r = sd_bus_add_object_vtable(bus, NULL, OBJECT_PATH, INTERFACE, bench_vtable, NULL);
	if (r < 0)
		methods_fail("sd_bus_add_object_vtable", r);
	r = sd_bus_request_name(bus, BUS_NAME,
				SD_BUS_NAME_ALLOW_REPLACEMENT | SD_BUS_NAME_REPLACE_EXISTING);
	if (r < 0)
		methods_fail("request name " BUS_NAME, r);
	methods_print_ready();
	for (;;) {
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			methods_fail("sd_bus_process", r);
		if (r > 0)
			continue;
		r = sd_bus_wait(bus, UINT64_MAX);
		if (r < 0 && r != -EINTR)
			methods_fail("sd_bus_wait", r);
	}
}

static _Noreturn void call_failed(const char *member, const sd_bus_error *error, int r)
{
	if (error->message)
		methods_fail_message(member, error->message);
	methods_fail(member, r);
}

static void call(sd_bus *bus, enum methods_method method, long call_number)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct methods_copy_args in, out;
	int r;

	if (method == METHODS_METHOD_EMPTY) {
		r = sd_bus_call_method(bus, BUS_NAME, OBJECT_PATH, INTERFACE, "Empty", &error, NULL,
				       NULL);
		if (r < 0)
			call_failed("Empty", &error, r);
		return;
	}
	methods_copy_args_for_call(call_number, &in);
	r = sd_bus_call_method(bus, BUS_NAME, OBJECT_PATH, INTERFACE, "Copy", &error, &reply,
			       "iddddu", in.i, in.d[0], in.d[1], in.d[2], in.d[3], in.u);
	if (r < 0)
		call_failed("Copy", &error, r);
	r = sd_bus_message_read(reply, "iddddu", &out.i, &out.d[0], &out.d[1], &out.d[2],
				&out.d[3], &out.u);
	if (r < 0)
		methods_fail("Copy: reply", r);
	if (!methods_copy_args_equal(&in, &out))
		methods_fail_message("Copy", "a reply whose arguments differ from the call's");
	sd_bus_message_unref(reply);
}

static int client(const struct methods_options *opts)
{
	sd_bus *bus = bus_connect(opts->address);
	int64_t start;

	for (long i = 0; i < opts->warmup; i++)
		call(bus, opts->method, i);
	start = methods_now_ns();
	for (long i = 0; i < opts->calls; i++)
		call(bus, opts->method, opts->warmup + i);
	methods_print_calls("sd-bus", opts, methods_now_ns() - start);
	sd_bus_flush_close_unref(bus);
	return 0;
}

int main(int argc, char **argv)
{
	struct methods_options opts;

	methods_parse_options(
		argc, argv, "methods-sdbus", METHODS_ROLE_SERVER | METHODS_ROLE_CLIENT,
		"The sd-bus contender of scenario 3: libsystemd's sd-bus client and server on a\n"
		"dbus-daemon. ADDR is the bus's D-Bus address (unix:path=...). The server\n"
		"owns " BUS_NAME " and exports Empty() and Copy(iddddu) -> iddddu on\n" OBJECT_PATH
		" (interface " INTERFACE "), whatever --method says.",
		&opts);
	return opts.role == METHODS_ROLE_SERVER ? server(&opts) : client(&opts);
}
