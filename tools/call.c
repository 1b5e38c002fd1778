/* SPDX-License-Identifier: MIT */
/*
 * call.c: `pbus call` and `pbus listen`: the methods and broadcasts of an
 * instance's interface from the command line, arguments and results as
 * JSON (docs/cli.md, docs/methods.md "JSON").
 *
 * There is no generated code here: the interface comes from the compiled
 * schema that the instance's pbusd serves (its type, method and broadcast
 * records), the proxy is the runtime's own (pbus_proxy_new() with an
 * interface built from the schema), and the dynamic codec of
 * parambus/rpc-json.h turns JSON into arguments and replies and
 * broadcasts into JSON.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc-json.h>
#include <parambus/rpc.h>

#include "format.h"
#include "tool.h"

/* Exit statuses of call and listen beyond tool.h's (docs/cli.md). */
#define CALL_EXIT_NO_METHOD 4 /* no such method or broadcast, or JSON that does not fit it */
/* No server registered for the address: TOOL_EXIT_NO_INSTANCE (the
 * instance's server is missing); no reply within -w: TOOL_EXIT_TIMEOUT. */

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* What both commands share: pbusd's schema and a proxy made from it. */
struct session {
	struct pbus_client *client;
	const struct pbus_schema *schema;
	struct pbus_rpc_interface *itf;
	struct pbus_loop *loop;
	struct pbus_proxy *proxy;
	char address[PBUS_RPC_ADDRESS_MAX + 1];
	unsigned flags;           /* PBUS_RPC_JSON_PRETTY */
	/* listen */
	long count, received;
	bool was_available, announced;
};

static void session_close(struct session *s)
{
	pbus_proxy_free(s->proxy);
	pbus_loop_free(s->loop);
	pbus_rpc_json_interface_free(s->itf);
	pbus_client_close(s->client);
}

static void deliver(void *client, unsigned broadcast, struct pbus_rpc_reader *args, const void *local_args)
{
	struct session *s = client;
	char *json = NULL, error[512], when[64];
	int r;

	(void)local_args;
	if (!args || (s->count && s->received >= s->count))
		return; /* -c reached within one dispatch round */
	r = pbus_rpc_json_decode_broadcast(s->schema, broadcast, args->p, (size_t)(args->end - args->p),
					   s->flags, &json, error, sizeof(error));
	args->p = args->end;
	if (r < 0) {
		tool_error("broadcast '%s': %s", pbus_schema_broadcast_name(s->schema, broadcast),
			   r == -ENOMEM ? "out of memory" : error);
		return;
	}
	tool_time_text(tool_realtime_ns(), when, sizeof(when));
	printf("{\"broadcast\":");
	tool_json_string(stdout, pbus_schema_broadcast_name(s->schema, broadcast),
			 strlen(pbus_schema_broadcast_name(s->schema, broadcast)));
	printf(",\"args\":%s,\"time\":\"%s\"}\n", json, when);
	fflush(stdout);
	free(json);
	s->received++;
}

static void availability(void *client, bool available, void *userdata)
{
	struct session *s = client;

	(void)userdata;
	if (available && !s->was_available && s->announced)
		tool_error("%s: the server is back; listening again", s->address);
	else if (!available && s->was_available)
		tool_error("%s: the server went away; waiting for it to come back", s->address);
	else if (!available && !s->announced)
		tool_error("%s: no server yet; waiting for one", s->address);
	s->was_available = available;
	s->announced = true;
}

/* Connect to pbusd of @instance (its part before '/'), fetch the schema,
 * make the proxy. Returns an exit status. */
static int session_open(struct session *s, struct tool_context *context, const char *instance,
			unsigned timeout_ms)
{
	struct pbus_rpc_options options = {.name = "pbus", .timeout_ms = timeout_ms};
	char registry[PBUS_RPC_ADDRESS_MAX + 1];
	struct tool_context registry_context = *context;
	const char *slash = strchr(instance, '/');
	int status, r;

	snprintf(registry, sizeof(registry), "%.*s", slash ? (int)(slash - instance) : (int)strlen(instance),
		 instance);
	registry_context.instance = registry;
	status = tool_connect(&registry_context, timeout_ms, NULL, &s->client);
	if (status != TOOL_EXIT_OK)
		return status;
	s->schema = pbus_client_schema(s->client);
	if (pbus_schema_method_count(s->schema) == 0 && pbus_schema_broadcast_count(s->schema) == 0) {
		tool_error("instance '%s': its interface %s has no methods or broadcasts", registry,
			   pbus_schema_interface(s->schema, NULL, NULL));
		return CALL_EXIT_NO_METHOD;
	}
	if (pbus_rpc_json_interface_new(s->schema, &s->itf) < 0 || pbus_loop_new(&s->loop) < 0) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	snprintf(s->address, sizeof(s->address), "local:%s:%s", instance, s->itf->name);
	options.loop = s->loop;
	r = pbus_proxy_new(s->address, s->itf, deliver, s, &options, &s->proxy);
	if (r < 0) {
		tool_error("%s: %s%s%s", s->address, pbus_strerror(r), *pbus_rpc_last_error() ? ": " : "",
			   pbus_rpc_last_error());
		return r == -EINVAL ? TOOL_EXIT_USAGE : TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

/* --- pbus call ------------------------------------------------------------ */

static int run_call(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"wait", required_argument, NULL, 'w'},
		{"pretty", no_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	struct session s = {0};
	struct pbus_rpc_call call;
	unsigned timeout_ms = 5000;
	char error[512], *json = NULL;
	int option, status, method, r;

	while ((option = tool_next_option(context, &tool_command_call, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "w:p", options, &status))) {
		switch (option) {
		case 'w':
			if (tool_timeout_option(&tool_command_call, optarg, &timeout_ms))
				return TOOL_EXIT_USAGE;
			break;
		case 'p':
			s.flags |= PBUS_RPC_JSON_PRETTY;
			break;
		}
	}
	if (status >= 0)
		return status;
	if (argc - optind < 2 || argc - optind > 3)
		return tool_usage_error(&tool_command_call, "expected INSTANCE METHOD [JSON]");
	status = session_open(&s, context, argv[optind], timeout_ms);
	if (status != TOOL_EXIT_OK)
		goto out;
	method = pbus_schema_method_find(s.schema, argv[optind + 1]);
	if (method < 0) {
		tool_error("%s has no method '%s'", s.itf->name, argv[optind + 1]);
		status = CALL_EXIT_NO_METHOD;
		goto out;
	}
	pbus_rpc_call_init(&call);
	r = pbus_rpc_json_encode_call(s.schema, (uint32_t)method, argc - optind == 3 ? argv[optind + 2] : NULL,
				      &call.args, error, sizeof(error));
	if (r < 0) {
		tool_error("%s: %s", argv[optind + 1], r == -ENOMEM ? "out of memory" : error);
		pbus_rpc_call_release(&call);
		status = r == -ENOMEM ? TOOL_EXIT_FAILURE : CALL_EXIT_NO_METHOD;
		goto out;
	}
	if (pbus_schema_method_fire_and_forget(s.schema, (uint32_t)method))
		r = pbus_proxy_send(s.proxy, (unsigned)method, &call);
	else
		r = pbus_proxy_call(s.proxy, (unsigned)method, &call, (int)timeout_ms);
	if (r < 0) {
		const char *why = pbus_rpc_last_error();
		char seconds[32];

		tool_seconds_text(timeout_ms, seconds, sizeof(seconds));
		if (r == -ETIMEDOUT)
			tool_error("%s: no reply within %s", argv[optind + 1], seconds);
		else
			tool_error("%s: %s", argv[optind + 1], *why ? why : pbus_strerror(r));
		status = r == -ETIMEDOUT   ? TOOL_EXIT_TIMEOUT
			 : r == -ENOTCONN  ? TOOL_EXIT_NO_INSTANCE
			 : r == -ENOSYS	   ? CALL_EXIT_NO_METHOD
					   : TOOL_EXIT_FAILURE;
	} else if (pbus_schema_method_fire_and_forget(s.schema, (uint32_t)method)) {
		printf("{}\n");
		status = TOOL_EXIT_OK;
	} else {
		r = pbus_rpc_json_decode_reply(s.schema, (uint32_t)method, call.reply.data, call.reply.size, s.flags,
					       &json, error, sizeof(error));
		if (r < 0) {
			tool_error("%s: the reply is malformed: %s", argv[optind + 1],
				   r == -ENOMEM ? "out of memory" : error);
			status = TOOL_EXIT_FAILURE;
		} else {
			printf("%s\n", json);
			status = TOOL_EXIT_OK;
		}
		free(json);
	}
	pbus_rpc_call_release(&call);
out:
	session_close(&s);
	return status;
}

const struct tool_command tool_command_call = {
	.name = "call",
	.summary = "call a method of the instance's interface (arguments and reply as JSON)",
	.help = "Usage: pbus call [-w SECONDS] [-p] INSTANCE METHOD [JSON]\n"
		"\n"
		"Call METHOD of the interface that INSTANCE's pbusd serves the schema of,\n"
		"on the server registered as local:INSTANCE:INTERFACE, and print its reply\n"
		"as one line of JSON: an object of the out-arguments by name, with \"error\"\n"
		"first for a method with an error enumeration. JSON is an object of the\n"
		"in-arguments by name (every one; omit it for a method without any).\n"
		"INSTANCE may name a server below the instance (psu/ch2). A fireAndForget\n"
		"method prints {} once sent. Values: docs/methods.md, \"JSON\".\n"
		"\n"
		"Options:\n"
		"  -w, --wait SECONDS  wait that long for the reply (default 5)\n"
		"  -p, --pretty        print the reply indented over several lines\n"
		"\n"
		"Exit status: 0 the reply was printed, 1 the call failed or was refused\n"
		"(the server's message is printed), 2 usage error, 3 no such instance,\n"
		"pbusd gone or no server registered, 4 no such method or JSON that does\n"
		"not fit its arguments, 5 no reply within -w.\n"
		"\n"
		"Examples:\n"
		"  pbus call psu clear_trip\n"
		"  pbus call -w 1 rig ping '{\"seq\": 41}'\n"
		"  pbus call -p rig lookup '{\"key\": \"missing\"}'\n"
		TOOL_HELP_SEE("pbus-call(1)"),
	.run = run_call,
};

/* --- pbus listen ---------------------------------------------------------- */

static int run_listen(struct tool_context *context, int argc, char **argv)
{
	static const struct option options[] = {
		TOOL_COMMON_LONG_OPTIONS,
		{"wait", required_argument, NULL, 'w'},
		{"count", required_argument, NULL, 'c'},
		{"pretty", no_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	struct session s = {0};
	struct sigaction sa;
	unsigned wait_ms = 0;
	unsigned long long count = 0;
	int64_t deadline = 0;
	int option, status, r;

	while ((option = tool_next_option(context, &tool_command_listen, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "w:c:p", options, &status))) {
		switch (option) {
		case 'w':
			if (tool_timeout_option(&tool_command_listen, optarg, &wait_ms))
				return TOOL_EXIT_USAGE;
			break;
		case 'c':
			if (tool_parse_unsigned(optarg, 1000000000, &count) < 0 || count == 0)
				return tool_usage_error(&tool_command_listen, "-c wants a count above 0, not '%s'",
							optarg);
			break;
		case 'p':
			s.flags |= PBUS_RPC_JSON_PRETTY;
			break;
		}
	}
	if (status >= 0)
		return status;
	if (argc - optind < 1)
		return tool_usage_error(&tool_command_listen, "expected INSTANCE [BROADCAST...]");
	status = session_open(&s, context, argv[optind], 5000);
	if (status != TOOL_EXIT_OK)
		goto out;
	for (int i = optind + 1; i < argc; i++)
		if (pbus_schema_broadcast_find(s.schema, argv[i]) < 0) {
			tool_error("%s has no broadcast '%s'", s.itf->name, argv[i]);
			status = CALL_EXIT_NO_METHOD;
			goto out;
		}
	for (uint32_t b = 0; b < pbus_schema_broadcast_count(s.schema); b++) {
		bool wanted = argc - optind == 1;

		for (int i = optind + 1; i < argc && !wanted; i++)
			wanted = !strcmp(argv[i], pbus_schema_broadcast_name(s.schema, b));
		if (!wanted)
			continue;
		r = pbus_proxy_subscribe(s.proxy, b);
		if (r < 0 && r != -ENOTCONN) {
			const char *why = pbus_rpc_last_error();

			tool_error("broadcast '%s': %s", pbus_schema_broadcast_name(s.schema, b),
				   *why ? why : pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
			goto out;
		}
	}
	/* The subscriptions are in place (or wait for the server): say so,
	 * once, for whoever waits for it (a script, a test). */
	if (pbus_proxy_available(s.proxy)) {
		tool_error("%s: listening", s.address);
		s.announced = true;
		s.was_available = true;
	}
	pbus_proxy_on_availability(s.proxy, availability, NULL);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	s.count = (long)count;
	if (wait_ms)
		deadline = tool_monotonic_ns() + (int64_t)wait_ms * 1000000;
	status = TOOL_EXIT_OK;
	while (!stop && (count == 0 || (unsigned long long)s.received < count)) {
		int slice = 200;

		if (deadline) {
			int64_t left = (deadline - tool_monotonic_ns()) / 1000000;

			if (left <= 0)
				break;
			if (left < slice)
				slice = (int)left;
		}
		r = pbus_loop_dispatch(s.loop, slice);
		if (r < 0 && r != -EINTR) {
			tool_error("%s: %s", s.address, pbus_strerror(r));
			status = TOOL_EXIT_FAILURE;
			break;
		}
	}
	if (status == TOOL_EXIT_OK && count && (unsigned long long)s.received < count && !stop) {
		char seconds[32];

		/* -w ran out before -c was reached. */
		tool_seconds_text(wait_ms, seconds, sizeof(seconds));
		tool_error("%s: timed out after %s with %ld of %llu broadcasts", s.address, seconds,
			   (long)s.received, count);
		status = TOOL_EXIT_TIMEOUT;
	}
out:
	session_close(&s);
	return status;
}

const struct tool_command tool_command_listen = {
	.name = "listen",
	.summary = "print the broadcasts of the instance's interface as JSON lines",
	.help = "Usage: pbus listen [-w SECONDS] [-c COUNT] [-p] INSTANCE [BROADCAST...]\n"
		"\n"
		"Subscribe to the named broadcasts (default: all) of the server registered\n"
		"as local:INSTANCE:INTERFACE (the interface of INSTANCE's pbusd's schema)\n"
		"and print one JSON line per broadcast received:\n"
		"  {\"broadcast\": NAME, \"args\": {...}, \"time\": \"2026-01-02T03:04:05.678Z\"}\n"
		"until interrupted, COUNT were received or SECONDS passed. When the\n"
		"server goes away or is not there yet, it says so on stderr and goes on\n"
		"listening: the subscriptions are renewed when it comes back.\n"
		"\n"
		"Options:\n"
		"  -w, --wait SECONDS  stop after that long\n"
		"  -c, --count COUNT   stop after COUNT broadcasts\n"
		"  -p, --pretty        print each broadcast indented over several lines\n"
		"\n"
		"Exit status: 0 interrupted, -c reached or -w over, 1 a subscription was\n"
		"refused, 2 usage error, 3 no such instance or pbusd gone, 4 no such\n"
		"broadcast, 5 -w ran out before -c broadcasts came.\n"
		"\n"
		"Examples:\n"
		"  pbus listen psu tripped\n"
		"  pbus listen -c 1 -w 10 rig changed\n"
		"  pbus listen -w 60 rig > broadcasts.jsonl\n"
		TOOL_HELP_SEE("pbus-listen(1)"),
	.run = run_listen,
};
