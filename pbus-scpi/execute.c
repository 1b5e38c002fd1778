/* SPDX-License-Identifier: MIT */
/*
 * execute.c: what a parsed program message does (docs/scpi.md, "The
 * daemon"). Commands run in order. Settings are gathered into one batch
 * that goes to pbusd as one atomic SET when the message ends or before the
 * next query or common command runs, so a query always sees the settings
 * written before it. A setting refused by the checks here (limits) or by
 * pbusd (rights, read-only, range) drops the whole batch, is queued as an
 * error, and ends the message: nothing of the batch is written. Queries are
 * answered on one line, joined by ';', built in the session's line buffer
 * and handed to the transport when the message is done.
 *
 * Method commands (method.c) flush the batch and start their call: a
 * `set` runs overlapped (it is a pending operation until its reply), a
 * `query` suspends the message until its answer is in the line. *OPC?
 * and *WAI suspend it while operations are pending, *OPC arms ESR bit 0
 * for when they are done. A suspended message is kept as a copy; on
 * resume it is parsed again (the same text gives the same commands) and
 * run on from the command where it stopped.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbus-scpi.h"

static const char *const IDENTITY[4] = {
	"identity.manufacturer", "identity.model", "identity.serial", "identity.firmware",
};

/* The daemon's own commands, added to the generated tree. pbus-gen keeps
 * their headers too (BUILTIN_COMMANDS in gen/pbusgen/scpi.py, so that no
 * schema keyword takes one); the test scpi-daemon/generator-knows-the-
 * daemons-commands keeps the two lists in step. */
char *scpi_tree_text_with_builtins(const char *text, size_t length, size_t *ret_length)
{
	static const char *const PARTS[5][3] = {
		/* name, type and access, header nodes after the register's */
		{"event", "int32 query", "EVENt"},
		{"condition", "int32 query", "CONDition"},
		{"enable", "uint16 both", "ENABle"},
		{"ptransition", "uint16 both", "PTRansition"},
		{"ntransition", "uint16 both", "NTRansition"},
	};
	static const char *const REGS[2][2] = {{"questionable", "QUEStionable"},
					       {"operation", "OPERation"}};
	char extra[4096];
	size_t n = (size_t)snprintf(extra, sizeof(extra),
				    "param %u scpi.error.next int32 query 0\n"
				    "header %u SYSTem:ERRor:NEXT\n"
				    "header %u SYSTem:ERRor\n"
				    "param %u scpi.error.count int32 query 0\n"
				    "header %u SYSTem:ERRor:COUNt\n"
				    "param %u scpi.version string query 0\n"
				    "header %u SYSTem:VERSion\n"
				    "param %u scpi.status.preset none set 0\n"
				    "header %u STATus:PRESet\n",
				    SCPI_BUILTIN_ERROR_NEXT, SCPI_BUILTIN_ERROR_NEXT, SCPI_BUILTIN_ERROR_NEXT,
				    SCPI_BUILTIN_ERROR_COUNT, SCPI_BUILTIN_ERROR_COUNT, SCPI_BUILTIN_VERSION,
				    SCPI_BUILTIN_VERSION, SCPI_BUILTIN_PRESET, SCPI_BUILTIN_PRESET);
	for (unsigned r = 0; r < 2; r++)
		for (unsigned k = 0; k < 5; k++) {
			unsigned index = (r ? SCPI_BUILTIN_OPER : SCPI_BUILTIN_QUES) + k;
			n += (size_t)snprintf(extra + n, sizeof(extra) - n,
					      "param %u scpi.status.%s.%s %s 0\n"
					      "header %u STATus:%s:%s\n",
					      index, REGS[r][0], PARTS[k][0], PARTS[k][1], index,
					      REGS[r][1], PARTS[k][2]);
			if (k == SCPI_PART_EVENT) /* [:EVENt] is optional */
				n += (size_t)snprintf(extra + n, sizeof(extra) - n,
						      "header %u STATus:%s\n", index, REGS[r][1]);
		}
	char *all = malloc(length + n + 1);
	if (!all)
		return NULL;
	memcpy(all, text, length);
	if (length && text[length - 1] != '\n')
		all[length++] = '\n';
	memcpy(all + length, extra, n);
	*ret_length = length + n;
	return all;
}

int scpi_server_init(struct scpi_server *server, struct pbus_client *client,
		     struct pbus_scpi_tree *tree, size_t max_line)
{
	memset(server, 0, sizeof(*server));
	server->client = client;
	server->tree = tree;
	server->max_line = max_line;
	const struct pbus_view *view = pbus_client_view(client);
	server->param_count = pbus_view_count(view);
	server->info = calloc(server->param_count ? server->param_count : 1, sizeof(*server->info));
	server->writes = calloc(server->param_count + SCPI_MAX_COMMANDS, sizeof(*server->writes));
	size_t value_max = 0;
	for (uint32_t i = 0; i < server->param_count; i++) {
		if (server->info && pbus_view_describe(view, i, &server->info[i]) < 0)
			return -EPROTO;
		if (server->info && server->info[i].value_size > value_max)
			value_max = server->info[i].value_size;
	}
	/* A batch holds at most one write per command, or (*RST) one per
	 * parameter; each value at most its capacity. */
	server->data_size = (SCPI_MAX_COMMANDS + server->param_count) * (value_max + 8) + max_line;
	server->data = malloc(server->data_size);
	if (!server->info || !server->writes || !server->data)
		return -ENOMEM;
	for (size_t k = 0; k < 4; k++)
		if (pbus_view_find(view, IDENTITY[k], &server->identity[k]) < 0)
			server->identity[k] = UINT32_MAX;
	return 0;
}

void scpi_server_fini(struct scpi_server *server)
{
	free(server->info);
	free(server->writes);
	free(server->data);
}

int scpi_session_init(struct scpi_session *session, struct scpi_server *server)
{
	memset(session, 0, sizeof(*session));
	int r = pbus_scpi_parser_new(server->tree, server->max_line, SCPI_MAX_COMMANDS, SCPI_MAX_ARGS,
				     &session->parser);
	if (r == 0)
		scpi_status_session_add(server, session);
	return r;
}

void scpi_session_fini(struct scpi_session *session, struct scpi_server *server)
{
	if (session->parser)
		scpi_status_session_remove(server, session);
	scpi_methods_session_gone(server, session);
	pbus_scpi_parser_free(session->parser);
	session->parser = NULL;
	free(session->held);
	free(session->line.data);
	session->held = NULL;
	session->line.data = NULL;
	session->wait = SCPI_WAIT_NONE;
}

void scpi_session_notify(struct scpi_session *session)
{
	if (session->status_changed)
		session->status_changed(session, session->status_userdata);
}

bool scpi_session_ready(const struct scpi_session *session)
{
	switch (session->wait) {
	case SCPI_WAIT_CALL:
		return session->awaited == NULL;
	case SCPI_WAIT_IDLE:
		return session->pending == 0;
	default:
		return true;
	}
}

void scpi_session_clear(struct scpi_session *session)
{
	session->wait = SCPI_WAIT_NONE;
	session->awaited = NULL; /* its reply is still pending, its answer is dropped */
	session->call_failed = false;
	session->opc_armed = false;
	session->held_length = 0;
	session->line.length = 0;
	session->line.parts = 0;
	session->line.overflow = false;
}

/* IEEE 488.2 11.5.1: the ESR bit of an error class. */
static uint8_t esr_bit(int code)
{
	if (code <= -100 && code > -200)
		return 1u << 5; /* CME */
	if (code <= -200 && code > -300)
		return 1u << 4; /* EXE */
	if (code <= -300 && code > -400)
		return 1u << 3; /* DDE */
	if (code <= -400 && code > -500)
		return 1u << 2; /* QYE */
	return 1u << 3;
}

void scpi_session_error(struct scpi_session *session, int code, const char *fmt, ...)
{
	session->esr |= esr_bit(code);
	struct scpi_error *e;
	if (session->error_count == SCPI_ERROR_QUEUE) {
		/* full: the newest entry says the queue overflowed */
		e = &session->errors[(session->error_first + SCPI_ERROR_QUEUE - 1) % SCPI_ERROR_QUEUE];
		e->code = -350;
		e->detail[0] = 0;
		session->esr |= esr_bit(-350);
		return;
	}
	e = &session->errors[(session->error_first + session->error_count) % SCPI_ERROR_QUEUE];
	session->error_count++;
	e->code = code;
	e->detail[0] = 0;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
		va_end(ap);
	}
}

/* --- responses --------------------------------------------------------------- */

static void out_append(struct scpi_response *out, const char *text, size_t length)
{
	if (out->overflow)
		return;
	if (out->length + length + 2 > out->capacity) {
		size_t want = out->capacity ? out->capacity : 256;
		while (want < out->length + length + 2)
			want *= 2;
		if (want > SCPI_RESPONSE_MAX) {
			out->overflow = true;
			return;
		}
		char *data = realloc(out->data, want);
		if (!data) {
			out->overflow = true;
			return;
		}
		out->data = data;
		out->capacity = want;
	}
	memcpy(out->data + out->length, text, length);
	out->length += length;
}

void scpi_out_append(struct scpi_response *out, const char *text, size_t length)
{
	out_append(out, text, length);
}

static void out_text(struct scpi_response *out, const char *text)
{
	out_append(out, text, strlen(text));
}

/* Start one query's response: ';' between the responses of a line. */
static void out_begin(struct scpi_response *out)
{
	if (out->parts++)
		out_append(out, ";", 1);
}

void scpi_out_begin(struct scpi_response *out)
{
	out_begin(out);
}

/*
 * A real as the shortest decimal that reads back as the same value (as a
 * float for float parameters): NR2 ("1.5", "2.0") when the exponent is
 * within -4 .. 14, else NR3 ("1.5E-07"); non-finite values as SCPI-99's
 * 9.91E+37 and +/-9.9E+37.
 */
void scpi_format_real(char *buf, size_t size, double value, bool is_float)
{
	if (!isfinite(value)) {
		pbus_scpi_format_nr3(buf, size, value, 2);
		return;
	}
	char tmp[64];
	int digits;
	for (digits = 1; digits < 17; digits++) {
		snprintf(tmp, sizeof(tmp), "%.*E", digits - 1, value);
		double back = strtod(tmp, NULL);
		if (is_float ? (float)back == (float)value : back == value)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*E", digits - 1, value);
	int exponent = atoi(strchr(tmp, 'E') + 1);
	if (exponent >= -4 && exponent < 15) {
		int decimals = digits - 1 - exponent;
		snprintf(buf, size, "%.*f", decimals < 1 ? 1 : decimals, value);
		return;
	}
	/* NR3 with at least one digit after the point: "1.0E-07" */
	if (digits == 1)
		snprintf(buf, size, "%.1E", value);
	else
		snprintf(buf, size, "%s", tmp);
}

static int64_t load_int(const unsigned char *p, unsigned type)
{
	switch (type) {
	case PBUS_TYPE_BOOL:
	case PBUS_TYPE_UINT8: return p[0];
	case PBUS_TYPE_INT8: return (int8_t)p[0];
	case PBUS_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
	case PBUS_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_ENUM: { int32_t v; memcpy(&v, p, 4); return v; }
	case PBUS_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { int64_t v; memcpy(&v, p, 8); return v; }
	}
}

static double load_real(const unsigned char *p, unsigned type)
{
	if (type == PBUS_TYPE_FLOAT) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	double d;
	memcpy(&d, p, 8);
	return d;
}

/* One element (or scalar) of @param's value at @p into @out. */
static void format_element(struct scpi_response *out, const struct pbus_scpi_param *param,
			   unsigned type, const unsigned char *p)
{
	char buf[64];
	if (param->unit[0] && param->unit_factor != 1.0 &&
	    (param->kind == PBUS_SCPI_KIND_INTEGER || param->kind == PBUS_SCPI_KIND_REAL)) {
		/* in the base unit, as a number without a suffix is read (a mV
		 * parameter answers in V) */
		double v;
		if (param->kind == PBUS_SCPI_KIND_REAL) {
			v = load_real(p, type);
		} else if (type == PBUS_TYPE_UINT64) {
			uint64_t u;
			memcpy(&u, p, 8);
			v = (double)u;
		} else {
			v = (double)load_int(p, type);
		}
		scpi_format_real(buf, sizeof(buf), v * param->unit_factor, false);
		out_text(out, buf);
		return;
	}
	switch (param->kind) {
	case PBUS_SCPI_KIND_BOOL:
		pbus_scpi_format_bool(buf, sizeof(buf), p[0] != 0);
		break;
	case PBUS_SCPI_KIND_INTEGER:
		if (type == PBUS_TYPE_UINT64) {
			uint64_t v;
			memcpy(&v, p, 8);
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
		} else {
			pbus_scpi_format_nr1(buf, sizeof(buf), load_int(p, type));
		}
		break;
	case PBUS_SCPI_KIND_REAL:
		scpi_format_real(buf, sizeof(buf), load_real(p, type), type == PBUS_TYPE_FLOAT);
		break;
	case PBUS_SCPI_KIND_ENUM: {
		int64_t v = load_int(p, PBUS_TYPE_ENUM);
		for (size_t i = 0; i < param->mnemonic_count; i++)
			if (param->mnemonics[i].value == v) {
				out_append(out, param->mnemonics[i].text, param->mnemonics[i].short_length);
				return;
			}
		pbus_scpi_format_nr1(buf, sizeof(buf), v);
		break;
	}
	default:
		buf[0] = 0;
	}
	out_text(out, buf);
}

static void format_value(struct scpi_response *out, const struct pbus_scpi_param *param,
			 unsigned type, const unsigned char *value, size_t length, int64_t element)
{
	unsigned base = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	if (param->kind == PBUS_SCPI_KIND_STRING || param->kind == PBUS_SCPI_KIND_BYTES) {
		bool string = param->kind == PBUS_SCPI_KIND_STRING;
		int need = string ? pbus_scpi_format_string(NULL, 0, (const char *)value, length)
				  : pbus_scpi_format_block(NULL, 0, value, length);
		char *buf = malloc((size_t)need + 1);
		if (!buf) {
			out->overflow = true;
			return;
		}
		if (string)
			pbus_scpi_format_string(buf, (size_t)need + 1, (const char *)value, length);
		else
			pbus_scpi_format_block(buf, (size_t)need + 1, value, length);
		out_append(out, buf, (size_t)need);
		free(buf);
		return;
	}
	size_t size = base == PBUS_TYPE_BOOL || base == PBUS_TYPE_INT8 || base == PBUS_TYPE_UINT8 ? 1
		      : base == PBUS_TYPE_INT16 || base == PBUS_TYPE_UINT16		  ? 2
		      : base == PBUS_TYPE_INT32 || base == PBUS_TYPE_UINT32 ||
				base == PBUS_TYPE_FLOAT || base == PBUS_TYPE_ENUM
			      ? 4
			      : 8;
	if (element >= 0) {
		if ((size_t)(element + 1) * size > length) {
			out_text(out, "9.91E+37"); /* not in the value: NaN, SCPI's "no value" */
			return;
		}
		format_element(out, param, base, value + (size_t)element * size);
		return;
	}
	for (size_t off = 0; off + size <= length; off += size) {
		if (off)
			out_append(out, ",", 1);
		format_element(out, param, base, value + off);
	}
}

/* --- settings ------------------------------------------------------------------ */

static int store_number(unsigned char *p, unsigned type, int64_t i, double d)
{
	switch (type) {
	case PBUS_TYPE_BOOL:
	case PBUS_TYPE_INT8:
	case PBUS_TYPE_UINT8: p[0] = (unsigned char)i; return 1;
	case PBUS_TYPE_INT16:
	case PBUS_TYPE_UINT16: { uint16_t v = (uint16_t)i; memcpy(p, &v, 2); return 2; }
	case PBUS_TYPE_INT32:
	case PBUS_TYPE_UINT32:
	case PBUS_TYPE_ENUM: { uint32_t v = (uint32_t)i; memcpy(p, &v, 4); return 4; }
	case PBUS_TYPE_INT64:
	case PBUS_TYPE_UINT64: memcpy(p, &i, 8); return 8;
	case PBUS_TYPE_FLOAT: { float f = (float)d; memcpy(p, &f, 4); return 4; }
	case PBUS_TYPE_DOUBLE: memcpy(p, &d, 8); return 8;
	default: return -EINVAL;
	}
}

static bool is_signed(unsigned type)
{
	return type == PBUS_TYPE_INT8 || type == PBUS_TYPE_INT16 || type == PBUS_TYPE_INT32 ||
	       type == PBUS_TYPE_INT64 || type == PBUS_TYPE_ENUM;
}

/*
 * One numeric argument of a setting (or a query's MIN/MAX/DEF) into the
 * element encoding at @p. Returns its size, or a SCPI error code (with
 * @why) when the value is out of the parameter's limits.
 */
static int encode_number(const struct scpi_server *server, const struct pbus_scpi_param *param,
			 const struct pbus_scpi_arg *arg, unsigned char *p, char *why, size_t why_size)
{
	const struct pbus_param_info *info = &server->info[param->index];
	unsigned type = info->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	bool real = type == PBUS_TYPE_FLOAT || type == PBUS_TYPE_DOUBLE;
	int64_t i = 0;
	double d = 0;
	switch (arg->kind) {
	case PBUS_SCPI_ARG_MIN:
	case PBUS_SCPI_ARG_MAX: {
		bool min = arg->kind == PBUS_SCPI_ARG_MIN;
		unsigned flag = min ? PBUS_PARAM_HAS_MIN : PBUS_PARAM_HAS_MAX;
		const union pbus_number *n = min ? &info->min : &info->max;
		if (info->flags & flag) {
			i = real ? 0 : n->i;
			d = real ? n->d : 0;
		} else if (real) {
			d = min ? (type == PBUS_TYPE_FLOAT ? -FLT_MAX : -DBL_MAX)
				: (type == PBUS_TYPE_FLOAT ? FLT_MAX : DBL_MAX);
		} else {
			i = min ? param->int_min : param->int_max;
			if (!min && type == PBUS_TYPE_UINT64)
				i = -1; /* UINT64_MAX */
		}
		return store_number(p, type, i, d);
	}
	case PBUS_SCPI_ARG_BOOL:
		return store_number(p, type, arg->boolean ? 1 : 0, 0);
	case PBUS_SCPI_ARG_ENUM:
		i = arg->integer;
		break;
	case PBUS_SCPI_ARG_NUMBER:
		if (real)
			d = arg->number;
		else
			i = arg->is_integer ? arg->integer : (int64_t)llround(arg->number);
		break;
	default:
		snprintf(why, why_size, "%s: not a number", param->name);
		return -104;
	}
	if (real) {
		bool low = (info->flags & PBUS_PARAM_HAS_MIN) && !(d >= info->min.d);
		bool high = (info->flags & PBUS_PARAM_HAS_MAX) && !(d <= info->max.d);
		if (type == PBUS_TYPE_FLOAT && isfinite(d) && fabs(d) > FLT_MAX)
			high = true;
		if (low || high) {
			int n = snprintf(why, why_size, "%.100s: %.17g outside [%.17g, %.17g]", param->name, d,
					 (info->flags & PBUS_PARAM_HAS_MIN) ? info->min.d : -INFINITY,
					 (info->flags & PBUS_PARAM_HAS_MAX) ? info->max.d : INFINITY);
			(void)n;
			return -222;
		}
	} else if (type != PBUS_TYPE_BOOL && type != PBUS_TYPE_ENUM) {
		bool low, high;
		if (is_signed(type)) {
			low = (info->flags & PBUS_PARAM_HAS_MIN) && i < info->min.i;
			high = (info->flags & PBUS_PARAM_HAS_MAX) && i > info->max.i;
		} else {
			low = (info->flags & PBUS_PARAM_HAS_MIN) && (uint64_t)i < info->min.u;
			high = (info->flags & PBUS_PARAM_HAS_MAX) && (uint64_t)i > info->max.u;
		}
		if (low || high) {
			snprintf(why, why_size, "%s: %" PRId64 " outside its limits", param->name, i);
			return -222;
		}
	}
	return store_number(p, type, i, d);
}

/* Room for @size bytes of the batch's values, or NULL. */
static unsigned char *batch_room(struct scpi_server *server, size_t size)
{
	if (server->data_used + size > server->data_size)
		return NULL;
	unsigned char *p = server->data + server->data_used;
	server->data_used += (size + 7) & ~(size_t)7;
	return p;
}

static void batch_reset(struct scpi_server *server)
{
	server->write_count = 0;
	server->data_used = 0;
}

/* The SCPI error of a refusal by pbusd, and a one-line detail. */
static int refusal(const struct scpi_server *server, int rc, uint32_t index, char *why, size_t why_size)
{
	const char *name = index < server->param_count ? server->info[index].name : "?";
	const char *group = index < server->param_count ? server->info[index].group : "";
	switch (rc) {
	case -ERANGE:
		snprintf(why, why_size, "%s: %s", name, pbus_strerror(rc));
		return -222;
	case -EPERM:
	case -EACCES:
		if (group[0])
			snprintf(why, why_size, "%s: %s (writable by group %s)", name, pbus_strerror(rc), group);
		else
			snprintf(why, why_size, "%s: %s", name, pbus_strerror(rc));
		return -203;
	case -EINVAL:
	case -EMSGSIZE:
		snprintf(why, why_size, "%s: %s", name, pbus_strerror(rc));
		return -224;
	case -EBUSY:
		snprintf(why, why_size, "%s: %s", name, pbus_strerror(rc));
		return -221;
	default:
		snprintf(why, why_size, "pbusd: %s", pbus_strerror(rc));
		return -240;
	}
}

/* Send the batch as one atomic SET. 0, or a SCPI error code (queued). */
static int batch_flush(struct scpi_server *server, struct scpi_session *session)
{
	if (!server->write_count)
		return 0;
	/* Acknowledged once the hardware bindings applied it: a setting's
	 * completion (*OPC, *WAI) is the hardware's. */
	int rc = pbus_client_set_flags(server->client, server->writes, server->write_count,
				       PBUS_CLIENT_SET_APPLIED);
	int code = 0;
	if (rc < 0) {
		uint32_t index = UINT32_MAX;
		for (size_t k = 0; k < server->write_count; k++)
			if (server->writes[k].result < 0) {
				index = server->writes[k].index;
				rc = server->writes[k].result;
				break;
			}
		char why[SCPI_ERROR_DETAIL];
		code = refusal(server, rc, index, why, sizeof(why));
		scpi_session_error(session, code, "%s", why);
	}
	batch_reset(server);
	return code;
}

/* The write of parameter @index gathered in the batch so far, or NULL. */
static struct pbus_write *pending_write(struct scpi_server *server, uint32_t index)
{
	for (size_t k = 0; k < server->write_count; k++)
		if (server->writes[k].index == index)
			return &server->writes[k];
	return NULL;
}

/* A setting command into the batch. 0, or a SCPI error code (queued). */
static int add_setting(struct scpi_server *server, struct scpi_session *session,
		       const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args)
{
	const struct pbus_scpi_param *param = c->param;
	if (param->index >= server->param_count) {
		scpi_session_error(session, -113, "%s is query-only", param->name);
		return -113;
	}
	const struct pbus_param_info *info = &server->info[param->index];
	struct pbus_write *w = &server->writes[server->write_count];
	memset(w, 0, sizeof(*w));
	w->index = param->index;
	char why[SCPI_ERROR_DETAIL] = "";
	int code = 0;
	const struct pbus_scpi_arg *a = &args[c->first_arg];
	if (c->arg_count == 1 && a->kind == PBUS_SCPI_ARG_DEF) {
		if (!(info->flags & PBUS_PARAM_HAS_DEFAULT) || c->element >= 0) {
			scpi_session_error(session, -224, "%s: no default", param->name);
			return -224;
		}
		unsigned char *p = batch_room(server, info->default_length);
		if (!p)
			goto too_much;
		memcpy(p, info->default_value, info->default_length);
		w->value = p;
		w->length = info->default_length;
	} else if (param->kind == PBUS_SCPI_KIND_STRING || param->kind == PBUS_SCPI_KIND_BYTES) {
		if (a->length > info->value_size) {
			scpi_session_error(session, -223, "%s: %zu bytes, at most %u", param->name,
					   a->length, info->value_size);
			return -223;
		}
		unsigned char *p = batch_room(server, a->length);
		if (!p)
			goto too_much;
		memcpy(p, a->data, a->length);
		w->value = p;
		w->length = a->length;
	} else if (c->element >= 0) {
		/* one element of an array: read the array (or take the value this
		 * message already set), change the element */
		struct pbus_client_value v;
		const struct pbus_write *earlier = pending_write(server, param->index);
		if (earlier) {
			v.value = earlier->value;
			v.length = (uint32_t)earlier->length;
		} else {
			int rc = pbus_client_get(server->client, &param->index, 1, &v);
			if (rc < 0) {
				code = refusal(server, rc, param->index, why, sizeof(why));
				scpi_session_error(session, code, "%s", why);
				return code;
			}
		}
		unsigned char *p = batch_room(server, info->value_size);
		if (!p)
			goto too_much;
		memcpy(p, v.value, v.length);
		size_t size = info->element_size;
		size_t length = v.length;
		if ((size_t)(c->element + 1) * size > length) {
			memset(p + length, 0, (size_t)(c->element + 1) * size - length);
			length = (size_t)(c->element + 1) * size;
		}
		code = encode_number(server, param, a, p + (size_t)c->element * size, why, sizeof(why));
		w->value = p;
		w->length = length;
	} else {
		size_t size = info->element_size;
		unsigned char *p = batch_room(server, size * c->arg_count);
		if (!p)
			goto too_much;
		for (size_t k = 0; k < c->arg_count && code >= 0; k++)
			code = encode_number(server, param, &a[k], p + k * size, why, sizeof(why));
		w->value = p;
		w->length = size * c->arg_count;
	}
	if (code < 0) {
		scpi_session_error(session, code, "%s", why);
		return code;
	}
	/* The same parameter set again in this message: the later setting
	 * wins (pbusd takes each parameter once per batch). */
	struct pbus_write *earlier = pending_write(server, param->index);
	if (earlier)
		*earlier = *w;
	else
		server->write_count++;
	return 0;
too_much:
	scpi_session_error(session, -223, "%s: the message's settings exceed the batch", param->name);
	return -223;
}

/* --- queries ------------------------------------------------------------------- */

static int run_query(struct scpi_server *server, struct scpi_session *session,
		     const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args,
		     struct scpi_response *out)
{
	const struct pbus_scpi_param *param = c->param;
	char buf[64];
	switch (param->index) {
	case SCPI_BUILTIN_ERROR_NEXT: {
		out_begin(out);
		if (!session->error_count) {
			out_text(out, "0,\"No error\"");
			return 0;
		}
		const struct scpi_error *e = &session->errors[session->error_first];
		char text[SCPI_ERROR_DETAIL + 64];
		if (e->detail[0])
			snprintf(text, sizeof(text), "%s;%s", pbus_scpi_error_text(e->code), e->detail);
		else
			snprintf(text, sizeof(text), "%s", pbus_scpi_error_text(e->code));
		pbus_scpi_format_nr1(buf, sizeof(buf), e->code);
		out_text(out, buf);
		out_append(out, ",", 1);
		char quoted[2 * sizeof(text) + 3];
		pbus_scpi_format_string(quoted, sizeof(quoted), text, strlen(text));
		out_text(out, quoted);
		session->error_first = (session->error_first + 1) % SCPI_ERROR_QUEUE;
		session->error_count--;
		return 0;
	}
	case SCPI_BUILTIN_ERROR_COUNT:
		out_begin(out);
		pbus_scpi_format_nr1(buf, sizeof(buf), (int64_t)session->error_count);
		out_text(out, buf);
		return 0;
	case SCPI_BUILTIN_VERSION:
		out_begin(out);
		out_text(out, "1999.0");
		return 0;
	}
	if (param->index >= server->param_count) {
		scpi_session_error(session, -113, "%s", param->name);
		return -113;
	}
	const struct pbus_param_info *info = &server->info[param->index];
	if (c->arg_count == 1) {
		/* VOLT? MIN: the limit (or default) itself */
		const struct pbus_scpi_arg *a = &args[c->first_arg];
		if (a->kind == PBUS_SCPI_ARG_DEF) {
			if (!(info->flags & PBUS_PARAM_HAS_DEFAULT)) {
				scpi_session_error(session, -224, "%s: no default", param->name);
				return -224;
			}
			out_begin(out);
			format_value(out, param, info->type, info->default_value, info->default_length,
				     c->element >= 0 ? c->element : -1);
			return 0;
		}
		unsigned char p[8];
		char why[SCPI_ERROR_DETAIL];
		int size = encode_number(server, param, a, p, why, sizeof(why));
		if (size < 0) {
			scpi_session_error(session, size, "%s", why);
			return size;
		}
		out_begin(out);
		format_value(out, param, info->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG, p, (size_t)size, -1);
		return 0;
	}
	struct pbus_client_value v;
	int rc = scpi_read(server, param->index, &v);
	if (rc < 0) {
		char why[SCPI_ERROR_DETAIL];
		int code = refusal(server, rc, param->index, why, sizeof(why));
		scpi_session_error(session, code, "%s", why);
		return code;
	}
	out_begin(out);
	format_value(out, param, info->type, v.value, v.length, c->element);
	return 0;
}

/* --- common commands (IEEE 488.2 chapter 10) -------------------------------- */

uint8_t scpi_session_stb(const struct scpi_session *session)
{
	uint8_t stb = 0;
	if (session->error_count)
		stb |= 1u << 2; /* EAV, SCPI-99 */
	if (session->reg[SCPI_REG_QUES].event & session->reg[SCPI_REG_QUES].enable)
		stb |= 1u << 3; /* QUEStionable summary, SCPI-99 9.1 */
	if (session->esr & session->ese)
		stb |= 1u << 5; /* ESB */
	if (session->reg[SCPI_REG_OPER].event & session->reg[SCPI_REG_OPER].enable)
		stb |= 1u << 7; /* OPERation summary */
	if (stb & session->sre & ~0x40u)
		stb |= 1u << 6; /* MSS */
	return stb;
}

static void identity(struct scpi_server *server, struct scpi_response *out)
{
	static const char *const fallback[4] = {"parambus", "pbus-scpi", "0", "0"};
	out_begin(out);
	for (size_t k = 0; k < 4; k++) {
		if (k)
			out_append(out, ",", 1);
		struct pbus_client_value v;
		uint32_t index = server->identity[k];
		if (index == UINT32_MAX || server->info[index].type != PBUS_TYPE_STRING ||
		    scpi_read(server, index, &v) < 0 || v.length == 0) {
			out_text(out, fallback[k]);
			continue;
		}
		/* arbitrary ASCII response: no ',', ';' or control characters */
		const unsigned char *s = v.value;
		for (size_t i = 0; i < v.length; i++) {
			char ch = (char)s[i];
			if (ch == ',' || ch == ';' || s[i] < 0x20 || s[i] > 0x7e)
				ch = ' ';
			out_append(out, &ch, 1);
		}
	}
}

/* *RST: every writable setting that has a default, in one batch. */
static void reset(struct scpi_server *server, struct scpi_session *session)
{
	batch_reset(server);
	for (uint32_t i = 0; i < server->param_count; i++) {
		const struct pbus_param_info *info = &server->info[i];
		if ((info->flags & PBUS_PARAM_READONLY) || !(info->flags & PBUS_PARAM_HAS_DEFAULT))
			continue;
		unsigned char *p = batch_room(server, info->default_length);
		if (!p) {
			batch_reset(server);
			scpi_session_error(session, -223, "*RST: the defaults exceed the batch");
			return;
		}
		memcpy(p, info->default_value, info->default_length);
		struct pbus_write *w = &server->writes[server->write_count++];
		memset(w, 0, sizeof(*w));
		w->index = i;
		w->value = p;
		w->length = info->default_length;
	}
	batch_flush(server, session);
}

static int byte_arg(struct scpi_session *session, const struct pbus_scpi_command *c,
		    const struct pbus_scpi_arg *args, uint8_t *ret)
{
	const struct pbus_scpi_arg *a = &args[c->first_arg];
	if (c->arg_count != 1 || a->kind != PBUS_SCPI_ARG_NUMBER) {
		scpi_session_error(session, -104, "%s needs a number", c->common_name);
		return -104;
	}
	double v = a->is_integer ? (double)a->integer : nearbyint(a->number);
	if (!(v >= 0 && v <= 255)) {
		scpi_session_error(session, -222, "%s: %g outside 0..255", c->common_name, v);
		return -222;
	}
	*ret = (uint8_t)v;
	return 0;
}

/* STATus:... (SCPI-99 20): @c's parameter is one of the SCPI_BUILTIN_QUES,
 * _OPER and _PRESET commands. */
static int run_status(struct scpi_server *server, struct scpi_session *session,
		      const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args,
		      struct scpi_response *out)
{
	uint32_t index = c->param->index;
	if (index == SCPI_BUILTIN_PRESET) {
		scpi_status_preset(session);
		return 0;
	}
	int reg = index >= SCPI_BUILTIN_OPER ? SCPI_REG_OPER : SCPI_REG_QUES;
	unsigned part = index - (reg == SCPI_REG_OPER ? SCPI_BUILTIN_OPER : SCPI_BUILTIN_QUES);
	struct scpi_register *r = &session->reg[reg];
	uint16_t *field = part == SCPI_PART_ENABLE ? &r->enable
			  : part == SCPI_PART_PTR  ? &r->ptr
			  : part == SCPI_PART_NTR  ? &r->ntr
						   : NULL;
	char buf[32];
	if (c->query) {
		if (c->arg_count) {
			scpi_session_error(session, -108, "%s takes no parameter", c->param->name);
			return -108;
		}
		scpi_status_refresh(server);
		int64_t v;
		if (part == SCPI_PART_EVENT) {
			v = r->event; /* read and cleared (SCPI-99 9.3.1) */
			r->event = 0;
		} else if (part == SCPI_PART_CONDITION) {
			v = server->condition[reg];
		} else {
			v = *field;
		}
		out_begin(out);
		pbus_scpi_format_nr1(buf, sizeof(buf), v);
		out_text(out, buf);
		return 0;
	}
	const struct pbus_scpi_arg *a = &args[c->first_arg];
	int64_t v;
	switch (a->kind) {
	case PBUS_SCPI_ARG_MIN:
	case PBUS_SCPI_ARG_DEF:
		v = 0;
		break;
	case PBUS_SCPI_ARG_MAX:
		v = 0x7fff;
		break;
	case PBUS_SCPI_ARG_NUMBER:
		v = a->is_integer ? a->integer : (int64_t)llround(a->number);
		break;
	default:
		scpi_session_error(session, -104, "%s needs a number", c->param->name);
		return -104;
	}
	if (v < 0 || v > 0x7fff) {
		/* SCPI-99 9.2: bit 15 is never used, so 0 .. 32767 */
		scpi_session_error(session, -222, "%s: %" PRId64 " outside 0..32767", c->param->name, v);
		return -222;
	}
	*field = (uint16_t)v;
	return 0;
}

static int run_common(struct scpi_server *server, struct scpi_session *session,
		      const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args,
		      struct scpi_response *out)
{
	const char *n = c->common_name;
	char buf[32];
	uint8_t byte;
	if (strcmp(n, "*IDN") == 0) {
		identity(server, out);
	} else if (strcmp(n, "*RST") == 0) {
		reset(server, session);
	} else if (strcmp(n, "*CLS") == 0) {
		session->error_count = 0;
		session->error_first = 0;
		session->esr = 0;
		session->reg[SCPI_REG_QUES].event = 0; /* SCPI-99 10.3: every event register */
		session->reg[SCPI_REG_OPER].event = 0;
	} else if (strcmp(n, "*ESE") == 0 || strcmp(n, "*SRE") == 0) {
		if (c->query) {
			out_begin(out);
			pbus_scpi_format_nr1(buf, sizeof(buf), n[1] == 'E' ? session->ese : session->sre);
			out_text(out, buf);
		} else {
			if (byte_arg(session, c, args, &byte) < 0)
				return -1;
			if (n[1] == 'E')
				session->ese = byte;
			else
				session->sre = byte & 0xbf; /* bit 6 is ignored (488.2 11.3.2.3) */
		}
	} else if (strcmp(n, "*ESR") == 0) {
		out_begin(out);
		pbus_scpi_format_nr1(buf, sizeof(buf), session->esr);
		out_text(out, buf);
		session->esr = 0;
	} else if (strcmp(n, "*STB") == 0) {
		out_begin(out);
		scpi_status_refresh(server);
		pbus_scpi_format_nr1(buf, sizeof(buf), scpi_session_stb(session));
		out_text(out, buf);
	} else if (strcmp(n, "*OPC") == 0) {
		/* Every earlier setting was acknowledged by pbusd; the pending
		 * operations are method calls. *OPC? runs only once there are
		 * none (scpi_execute() waits for that). */
		if (c->query) {
			out_begin(out);
			out_text(out, "1");
		} else if (session->pending) {
			session->opc_armed = true; /* set when the last call completes (method.c) */
		} else {
			session->esr |= 1u; /* OPC */
		}
	} else if (strcmp(n, "*WAI") == 0) {
		/* runs only once nothing is pending (scpi_execute() waits for that) */
	} else if (strcmp(n, "*TST") == 0) {
		out_begin(out);
		out_text(out, pbus_client_ping(server->client, "tst", 3) == 0 ? "0" : "1");
	} else if (strcmp(n, "*OPT") == 0) {
		out_begin(out);
		out_text(out, "0");
	} else if (strcmp(n, "*PSC") == 0) {
		if (c->query) {
			out_begin(out);
			out_text(out, session->psc ? "1" : "0");
		} else {
			if (byte_arg(session, c, args, &byte) < 0)
				return -1;
			session->psc = byte != 0;
		}
	} else {
		scpi_session_error(session, -113, "%s%s is not supported", n, c->query ? "?" : "");
		return -113;
	}
	return 0;
}

/* Keep a copy of the message being suspended (it is re-parsed on resume). */
static int hold(struct scpi_session *session, const char *message, size_t length)
{
	if (message == session->held)
		return 0; /* resumed, and waiting again */
	if (length > session->held_capacity) {
		char *h = realloc(session->held, length);
		if (!h)
			return -ENOMEM;
		session->held = h;
		session->held_capacity = length;
	}
	memcpy(session->held, message, length);
	session->held_length = length;
	return 0;
}

/* The message is done: its line goes to the transport. */
static enum scpi_exec_result finish(struct scpi_session *session, struct scpi_response *out)
{
	struct scpi_response *line = &session->line;
	session->wait = SCPI_WAIT_NONE;
	session->held_length = 0;
	if (line->overflow) {
		scpi_session_error(session, -223, "response longer than %u bytes", SCPI_RESPONSE_MAX);
	} else if (line->parts) {
		out_append(out, line->data, line->length);
		out_append(out, "\n", 1);
	}
	line->length = 0;
	line->parts = 0;
	line->overflow = false;
	return SCPI_EXEC_DONE;
}

static bool is_common(const struct pbus_scpi_command *c, const char *name)
{
	return c->common && strcmp(c->common_name, name) == 0;
}

/* Run @res's commands from session->resume_at on. */
static enum scpi_exec_result run(struct scpi_server *server, struct scpi_session *session,
				 const char *message, size_t length, const struct pbus_scpi_result *res,
				 struct scpi_response *out)
{
	struct scpi_response *line = &session->line;
	batch_reset(server);
	bool failed = false;
	for (size_t i = session->resume_at; i < res->command_count && !failed; i++) {
		const struct pbus_scpi_command *c = &res->commands[i];
		bool method = !c->common && c->param->kind == PBUS_SCPI_KIND_METHOD;
		bool status = !c->common && !method && c->param->index >= SCPI_BUILTIN_QUES &&
			      c->param->index <= SCPI_BUILTIN_PRESET;
		if (!c->common && !c->query && !status && !method) {
			failed = add_setting(server, session, c, res->args) < 0;
			continue;
		}
		if (batch_flush(server, session) < 0) {
			failed = true;
			break;
		}
		enum scpi_wait wait = SCPI_WAIT_NONE;
		if (method) {
			failed = scpi_method_start(server, session, c, res->args) < 0;
			if (!failed && c->query)
				wait = SCPI_WAIT_CALL; /* the answer comes before the next command */
			session->resume_at = i + 1;
		} else if ((is_common(c, "*OPC") && c->query) || is_common(c, "*WAI")) {
			if (session->pending) {
				wait = SCPI_WAIT_IDLE; /* run again once nothing is pending */
				session->resume_at = i;
			} else {
				failed = run_common(server, session, c, res->args, line) < 0;
			}
		} else if (c->common) {
			failed = run_common(server, session, c, res->args, line) < 0;
		} else if (status) {
			failed = run_status(server, session, c, res->args, line) < 0;
		} else {
			failed = run_query(server, session, c, res->args, line) < 0;
		}
		if (wait != SCPI_WAIT_NONE) {
			if (hold(session, message, length) < 0) {
				/* cannot wait without the copy: the message ends here */
				scpi_session_clear(session);
				scpi_session_error(session, -200, "out of memory to wait for %s",
						   c->common ? c->common_name : c->param->name);
				return finish(session, out);
			}
			session->wait = wait;
			if (scpi_session_ready(session))
				continue; /* cannot happen: replies come from the loop */
			return SCPI_EXEC_WAITING;
		}
	}
	if (failed)
		batch_reset(server);
	else if (batch_flush(server, session) < 0)
		failed = true;
	if (!failed && res->error)
		scpi_session_error(session, res->error, "%s", res->detail);
	return finish(session, out);
}

enum scpi_exec_result scpi_execute(struct scpi_server *server, struct scpi_session *session,
				   const char *message, size_t length, struct scpi_response *out)
{
	struct pbus_scpi_result res;
	session->wait = SCPI_WAIT_NONE;
	session->resume_at = 0;
	session->call_failed = false;
	session->line.length = 0;
	session->line.parts = 0;
	session->line.overflow = false;
	int rc = pbus_scpi_parse(session->parser, message, length, &res);
	if (rc == -EINVAL) {
		scpi_session_error(session, -100, "message not parsed");
		return SCPI_EXEC_DONE;
	}
	return run(server, session, message, length, &res, out);
}

enum scpi_exec_result scpi_resume(struct scpi_server *server, struct scpi_session *session,
				  struct scpi_response *out)
{
	if (session->wait == SCPI_WAIT_NONE)
		return SCPI_EXEC_DONE;
	if (!scpi_session_ready(session))
		return SCPI_EXEC_WAITING;
	if (session->call_failed) {
		/* the query method failed (its error is queued): the message ends */
		session->call_failed = false;
		return finish(session, out);
	}
	struct pbus_scpi_result res;
	pbus_scpi_parse(session->parser, session->held, session->held_length, &res);
	session->wait = SCPI_WAIT_NONE;
	return run(server, session, session->held, session->held_length, &res, out);
}
