/* SPDX-License-Identifier: MIT */
/*
 * method.c: pbus-scpi's calls of the instrument's Franca methods
 * (docs/scpi.md, "Methods"). The interface comes from the schema pbusd
 * serves (pbus_rpc_json_interface_new(), as `pbus call` does), the proxy
 * is the runtime's own, on a pbus_loop of ours whose descriptor sits in
 * the daemon's epoll loop; every call is pbus_proxy_call_async(), so no
 * method makes the daemon wait. A call made while no server is connected
 * fails at once with -241 "Hardware missing" (the proxy connects by
 * itself when a server registers, from the loop).
 *
 * In-arguments are encoded from the parser's typed arguments, out-
 * arguments decoded into the IEEE 488.2 formats the daemon uses for
 * parameters, straight on the wire format of docs/methods.md §4 with the
 * types the tree gives. A reply whose error enumeration is not its first
 * enumerator is an execution error naming the enumerator.
 *
 * Each call is a struct scpi_call in the server's list until its reply (or
 * timeout, or the server's loss) comes; a session that closes meanwhile
 * only loses its name in its calls, so a late reply finds nobody and is
 * dropped. One thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc-json.h>

#include "../common/log.h"
#include "pbus-scpi.h"

struct scpi_call {
	struct scpi_server *server;
	struct scpi_session *session;       /* NULL once the session closed */
	const struct pbus_scpi_param *param; /* the method's command */
	struct scpi_call *next;
};

static void deliver_nothing(void *client, unsigned broadcast, struct pbus_rpc_reader *args,
			    const void *local_args)
{
	(void)client;
	(void)broadcast;
	(void)args;
	(void)local_args;
}

int scpi_methods_init(struct scpi_server *server, const char *instance, const char *socket_dir,
		      unsigned call_timeout_ms)
{
	server->call_timeout_ms = call_timeout_ms;
	if (pbus_scpi_tree_method_count(server->tree) == 0)
		return 0;
	const struct pbus_schema *schema = pbus_client_schema(server->client);
	int r = pbus_rpc_json_interface_new(schema, &server->itf);
	if (r < 0)
		return r;
	r = pbus_loop_new(&server->loop);
	if (r < 0)
		return r;
	snprintf(server->address, sizeof(server->address), "local:%s:%s", instance, server->itf->name);
	struct pbus_rpc_options options = {
		.loop = server->loop,
		.socket_dir = socket_dir,
		.name = "pbus-scpi",
		.timeout_ms = call_timeout_ms,
		.no_inprocess = true,
	};
	r = pbus_proxy_new(server->address, server->itf, deliver_nothing, server, &options, &server->proxy);
	if (r < 0)
		log_msg(LOG_WARNING, "methods of %s: %s%s%s", server->address, pbus_strerror(r),
			*pbus_rpc_last_error() ? ": " : "", pbus_rpc_last_error());
	else
		log_msg(LOG_INFO, "methods: %s (%s)", server->address,
			pbus_proxy_available(server->proxy) ? "connected" : "no server yet");
	return r;
}

void scpi_methods_fini(struct scpi_server *server)
{
	pbus_proxy_free(server->proxy); /* drops its calls in flight without completing them */
	server->proxy = NULL;
	while (server->calls) {
		struct scpi_call *k = server->calls;
		server->calls = k->next;
		free(k);
	}
	pbus_loop_free(server->loop);
	server->loop = NULL;
	pbus_rpc_json_interface_free(server->itf);
	server->itf = NULL;
}

int scpi_methods_fd(const struct scpi_server *server)
{
	return server->loop ? pbus_loop_fd(server->loop) : -1;
}

void scpi_methods_dispatch(struct scpi_server *server)
{
	if (server->loop)
		pbus_loop_dispatch(server->loop, 0);
}

void scpi_methods_session_gone(struct scpi_server *server, struct scpi_session *session)
{
	for (struct scpi_call *k = server->calls; k; k = k->next)
		if (k->session == session)
			k->session = NULL;
}

/* --- errors ---------------------------------------------------------------- */

/* The SCPI error of a failed call, and a one-line detail. */
static int call_error(const struct scpi_server *server, const struct pbus_scpi_param *method, int rc,
		      const char *why, char *detail, size_t size)
{
	const char *group = pbus_schema_method_group(pbus_client_schema(server->client), method->index);
	switch (rc) {
	case -EPERM:
	case -EACCES:
		/* strerror(), not pbus_strerror(): the latter's text is about
		 * write rights, and CallableBy is the reason here */
		snprintf(detail, size, "%s: %s (callable by group %s)", method->name, strerror(-rc),
			 group ? group : "?");
		return -203;
	case -ENOTCONN:
		snprintf(detail, size, "%s: no server of %s is connected", method->name, server->address);
		return -241;
	case -ECONNRESET:
		snprintf(detail, size, "%s: the server went away during the call", method->name);
		return -240;
	case -ETIMEDOUT:
		snprintf(detail, size, "%s: timed out after %u ms", method->name, server->call_timeout_ms);
		return -200;
	default:
		snprintf(detail, size, "%s: %s", method->name, why && *why ? why : pbus_strerror(rc));
		return -200;
	}
}

/* --- the wire ---------------------------------------------------------------- */

static bool wide_mnemonics(const struct pbus_scpi_mnemonic *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].value < INT32_MIN || m[i].value > INT32_MAX)
			return true;
	return false;
}

static bool wide_labels(const struct pbus_scpi_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].value < INT32_MIN || l[i].value > INT32_MAX)
			return true;
	return false;
}

/* One in-argument. 0, or -224 with @why. */
static int encode_arg(struct pbus_rpc_buf *b, const struct pbus_scpi_param *in, const struct pbus_scpi_arg *a,
		      char *why, size_t size)
{
	switch (in->kind) {
	case PBUS_SCPI_KIND_BOOL:
		pbus_rpc_put_bool(b, a->boolean);
		return 0;
	case PBUS_SCPI_KIND_ENUM:
		if (wide_mnemonics(in->mnemonics, in->mnemonic_count))
			pbus_rpc_put_i64(b, a->integer);
		else
			pbus_rpc_put_i32(b, (int32_t)a->integer);
		return 0;
	case PBUS_SCPI_KIND_INTEGER: {
		int64_t v = a->integer; /* within the type's range: the parser checked */
		if (!strcmp(in->type, "int8") || !strcmp(in->type, "uint8"))
			pbus_rpc_put_u8(b, (uint8_t)v);
		else if (!strcmp(in->type, "int16") || !strcmp(in->type, "uint16"))
			pbus_rpc_put_u16(b, (uint16_t)v);
		else if (!strcmp(in->type, "int32") || !strcmp(in->type, "uint32"))
			pbus_rpc_put_u32(b, (uint32_t)v);
		else
			pbus_rpc_put_u64(b, (uint64_t)v);
		return 0;
	}
	case PBUS_SCPI_KIND_REAL:
		if (!strcmp(in->type, "float"))
			pbus_rpc_put_float(b, (float)a->number);
		else
			pbus_rpc_put_double(b, a->number);
		return 0;
	case PBUS_SCPI_KIND_STRING: {
		if (memchr(a->data, 0, a->length)) {
			snprintf(why, size, "argument '%s': a string with a NUL byte", in->name);
			return -224;
		}
		char *text = strndup(a->data, a->length);
		if (!text) {
			pbus_rpc_buf_fail(b, -ENOMEM);
			return 0;
		}
		pbus_rpc_put_string(b, text);
		free(text);
		if (b->error == -EINVAL) {
			snprintf(why, size, "argument '%s': a string that is not UTF-8", in->name);
			return -224;
		}
		return 0;
	}
	case PBUS_SCPI_KIND_BYTES:
		pbus_rpc_put_bytes(b, (struct pbus_rpc_bytes){(const uint8_t *)a->data, (uint32_t)a->length});
		return 0;
	default:
		snprintf(why, size, "argument '%s': no SCPI value", in->name);
		return -224;
	}
}

static bool get_enum(struct pbus_rpc_reader *rd, bool wide, int64_t *v)
{
	if (wide)
		return pbus_rpc_get_i64(rd, v);
	int32_t w;
	bool ok = pbus_rpc_get_i32(rd, &w);
	*v = w;
	return ok;
}

/* One out-argument into @out (comma-separated). false: malformed. */
static bool decode_arg(struct pbus_rpc_reader *rd, const struct pbus_scpi_param *o, struct scpi_response *out)
{
	char buf[64];
	switch (o->kind) {
	case PBUS_SCPI_KIND_BOOL: {
		bool v;
		if (!pbus_rpc_get_bool(rd, &v))
			return false;
		pbus_scpi_format_bool(buf, sizeof(buf), v);
		break;
	}
	case PBUS_SCPI_KIND_ENUM: {
		int64_t v;
		if (!get_enum(rd, wide_mnemonics(o->mnemonics, o->mnemonic_count), &v))
			return false;
		pbus_scpi_format_nr1(buf, sizeof(buf), v); /* not an enumerator: its number */
		for (size_t i = 0; i < o->mnemonic_count; i++)
			if (o->mnemonics[i].value == v)
				snprintf(buf, sizeof(buf), "%.*s", (int)o->mnemonics[i].short_length,
					 o->mnemonics[i].text);
		break;
	}
	case PBUS_SCPI_KIND_INTEGER: {
		const char *t = o->type;
		bool ok;
		if (!strcmp(t, "uint64")) {
			uint64_t v;
			ok = pbus_rpc_get_u64(rd, &v);
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
		} else {
			int64_t v = 0;
			if (!strcmp(t, "int8")) { int8_t x; ok = pbus_rpc_get_i8(rd, &x); v = x; }
			else if (!strcmp(t, "uint8")) { uint8_t x; ok = pbus_rpc_get_u8(rd, &x); v = x; }
			else if (!strcmp(t, "int16")) { int16_t x; ok = pbus_rpc_get_i16(rd, &x); v = x; }
			else if (!strcmp(t, "uint16")) { uint16_t x; ok = pbus_rpc_get_u16(rd, &x); v = x; }
			else if (!strcmp(t, "int32")) { int32_t x; ok = pbus_rpc_get_i32(rd, &x); v = x; }
			else if (!strcmp(t, "uint32")) { uint32_t x; ok = pbus_rpc_get_u32(rd, &x); v = x; }
			else ok = pbus_rpc_get_i64(rd, &v);
			pbus_scpi_format_nr1(buf, sizeof(buf), v);
		}
		if (!ok)
			return false;
		break;
	}
	case PBUS_SCPI_KIND_REAL: {
		double v;
		bool is_float = !strcmp(o->type, "float");
		if (is_float) {
			float f;
			if (!pbus_rpc_get_float(rd, &f))
				return false;
			v = f;
		} else if (!pbus_rpc_get_double(rd, &v)) {
			return false;
		}
		scpi_format_real(buf, sizeof(buf), v, is_float);
		break;
	}
	case PBUS_SCPI_KIND_STRING:
	case PBUS_SCPI_KIND_BYTES: {
		const char *data;
		size_t length;
		char *text = NULL;
		struct pbus_rpc_bytes bytes = {0};
		if (o->kind == PBUS_SCPI_KIND_STRING) {
			if (!pbus_rpc_get_string(rd, &text))
				return false;
			data = text;
			length = strlen(text);
		} else {
			if (!pbus_rpc_get_bytes(rd, &bytes))
				return false;
			data = (const char *)bytes.data;
			length = bytes.size;
		}
		int need = o->kind == PBUS_SCPI_KIND_STRING ? pbus_scpi_format_string(NULL, 0, data, length)
							     : pbus_scpi_format_block(NULL, 0, data, length);
		char *f = malloc((size_t)need + 1);
		if (!f) {
			out->overflow = true;
			return true;
		}
		if (o->kind == PBUS_SCPI_KIND_STRING)
			pbus_scpi_format_string(f, (size_t)need + 1, data, length);
		else
			pbus_scpi_format_block(f, (size_t)need + 1, data, length);
		scpi_out_append(out, f, (size_t)need);
		free(f);
		return true;
	}
	default:
		return false;
	}
	scpi_out_append(out, buf, strlen(buf));
	return true;
}

/* --- calls ----------------------------------------------------------------------- */

static void unlink_call(struct scpi_server *server, struct scpi_call *call)
{
	for (struct scpi_call **k = &server->calls; *k; k = &(*k)->next)
		if (*k == call) {
			*k = call->next;
			return;
		}
}

/*
 * The reply's meaning for @session: 0 (and, for the awaited query, the
 * answer appended to its line), or a SCPI error code with @detail.
 */
static int take_reply(struct scpi_call *call, int result, struct pbus_rpc_reader *reply, bool answer,
		      char *detail, size_t size)
{
	const struct pbus_scpi_param *param = call->param;
	const struct pbus_scpi_method *m = param->method;
	if (result < 0)
		return call_error(call->server, param, result, NULL, detail, size);
	if (!reply)
		return 0; /* a fireAndForget send */
	if (m->error_count) {
		int64_t v;
		if (!get_enum(reply, wide_labels(m->errors, m->error_count), &v))
			goto malformed;
		if (v != m->errors[0].value) {
			const char *label = NULL;
			for (size_t i = 0; i < m->error_count; i++)
				if (m->errors[i].value == v)
					label = m->errors[i].text;
			if (label)
				snprintf(detail, size, "%s: %s", param->name, label);
			else
				snprintf(detail, size, "%s: error %" PRId64, param->name, v);
			return -200;
		}
	}
	if (!answer)
		return 0; /* a setting: the out-arguments are discarded */
	struct scpi_response tmp = {0};
	for (size_t i = 0; i < m->out_count; i++) {
		if (i)
			scpi_out_append(&tmp, ",", 1);
		if (!decode_arg(reply, &m->out[i], &tmp)) {
			free(tmp.data);
			goto malformed;
		}
	}
	if (pbus_rpc_reader_end(reply) < 0) {
		free(tmp.data);
		goto malformed;
	}
	struct scpi_response *line = &call->session->line;
	if (tmp.overflow) {
		line->overflow = true;
	} else {
		scpi_out_begin(line);
		scpi_out_append(line, tmp.data ? tmp.data : "", tmp.length);
	}
	free(tmp.data);
	return 0;
malformed:
	snprintf(detail, size, "%s: a malformed reply", param->name);
	return -200;
}

static void call_done(struct scpi_session *s, struct scpi_call *call, int result,
		      struct pbus_rpc_reader *reply)
{
	char detail[SCPI_ERROR_DETAIL];
	bool awaited = s->awaited == call;
	int code = take_reply(call, result, reply, awaited, detail, sizeof(detail));
	if (code)
		scpi_session_error(s, code, "%s", detail);
	if (awaited) {
		s->awaited = NULL;
		s->call_failed = code != 0;
	}
	if (s->pending)
		s->pending--;
	if (s->pending == 0 && s->opc_armed) {
		s->esr |= 1u; /* OPC (IEEE 488.2 12.5.2.1): every pending operation is complete */
		s->opc_armed = false;
	}
	scpi_session_notify(s);
	if (s->wait != SCPI_WAIT_NONE && scpi_session_ready(s) && s->resume)
		s->resume(s, s->resume_userdata); /* last: the transport may close the session */
}

static void reply_fn(void *client, int result, struct pbus_rpc_reader *reply, void (*user_fn)(void),
		     void *userdata)
{
	struct scpi_call *call = userdata;
	(void)client;
	(void)user_fn;
	unlink_call(call->server, call);
	struct scpi_session *s = call->session;
	if (s)
		call_done(s, call, result, reply);
	else
		log_msg(LOG_DEBUG, "%s: reply for a closed session dropped", call->param->name);
	free(call);
}

int scpi_method_start(struct scpi_server *server, struct scpi_session *session,
		      const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args)
{
	const struct pbus_scpi_param *param = c->param;
	const struct pbus_scpi_method *m = param->method;
	char why[SCPI_ERROR_DETAIL] = "";
	int code;
	if (!server->proxy || !pbus_proxy_available(server->proxy)) {
		code = call_error(server, param, -ENOTCONN, NULL, why, sizeof(why));
		scpi_session_error(session, code, "%s", why);
		return code;
	}
	struct pbus_rpc_call call;
	pbus_rpc_call_init(&call);
	code = 0;
	for (size_t k = 0; k < m->in_count && code == 0; k++)
		code = encode_arg(&call.args, &m->in[k], &args[c->first_arg + k], why, sizeof(why));
	if (code == 0 && call.args.error) {
		snprintf(why, sizeof(why), "%s: %s", param->name, pbus_strerror(call.args.error));
		code = -200;
	}
	if (code) {
		pbus_rpc_call_release(&call);
		scpi_session_error(session, code, "%s%s%s", code == -224 ? param->name : "",
				   code == -224 ? ": " : "", why);
		return code;
	}
	struct scpi_call *k = calloc(1, sizeof(*k));
	int r = k ? 0 : -ENOMEM;
	bool fire = pbus_schema_method_fire_and_forget(pbus_client_schema(server->client), m->index);
	if (r == 0 && fire)
		r = pbus_proxy_send(server->proxy, m->index, &call);
	else if (r == 0)
		r = pbus_proxy_call_async(server->proxy, m->index, &call, (int)server->call_timeout_ms, reply_fn,
					  NULL, k);
	pbus_rpc_call_release(&call);
	if (r < 0 || fire) {
		free(k);
		if (r == 0)
			return 0; /* sent: a fireAndForget method is complete */
		code = call_error(server, param, r, pbus_rpc_last_error(), why, sizeof(why));
		scpi_session_error(session, code, "%s", why);
		return code;
	}
	k->server = server;
	k->session = session;
	k->param = param;
	k->next = server->calls;
	server->calls = k;
	session->pending++;
	if (c->query)
		session->awaited = k;
	return 0;
}
