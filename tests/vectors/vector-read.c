/* SPDX-License-Identifier: MIT */
/*
 * vector-read: print an instance as the C library reads it, through the
 * public API only, for check-vectors to compare with a vector's expected
 * values (tests/vectors/README.md describes the lines). Tab-separated:
 *
 *   header  state        live|orphaned|closed|replaced
 *   header  interface    NAME  MAJOR.MINOR
 *   header  schema_hash  16 hex digits
 *   param   NAME  TYPE  FLAGS  CLASS  UNIT  MIN  MAX  STEP  DEFAULT  ENUM
 *           GROUP  DESCRIPTION
 *   value   NAME  SEQ  STATUS  TIMESTAMP  STORED  TEXT  SAVED_SEQ
 *   wait    RESULT                               (with --wait)
 *
 * (one line; "-" for an empty text or no limit, DEFAULT the default's stored
 * bytes in hex or "none"). STORED is the value's bytes as pbus_param_read() returns them (hex, "-"
 * if none), TEXT pbus_param_format()'s text of them, STATUS the status's
 * name (or its number if it has none). --wait ends with one
 * pbus_watch_wait() of every parameter with timeout 0: "ETIMEDOUT" (nothing
 * changed, the instance is live) or the error. On an error: exit status 1,
 * nothing on stdout, one line on stderr: "vector-read: INSTANCE: ENAME:
 * message".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <parambus/parambus.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EPROTO: return "EPROTO";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case ESTALE: return "ESTALE";
	case EBUSY: return "EBUSY";
	case EAGAIN: return "EAGAIN";
	case ERANGE: return "ERANGE";
	case EMSGSIZE: return "EMSGSIZE";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ESRCH: return "ESRCH";
	case ENOBUFS: return "ENOBUFS";
	case EINTR: return "EINTR";
	default: return "E?";
	}
}

static int fail(const char *instance, const char *what, int r)
{
	fprintf(stderr, "vector-read: %s%s%s: %s: %s\n", instance, what ? ": " : "", what ? what : "",
		errno_name(-r), pbus_strerror(r));
	return 1;
}

static void print_hex(const unsigned char *p, size_t n)
{
	if (n == 0)
		fputs("-", stdout);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* A limit as its type reads it: signed, unsigned or double ("-" if unset). */
static void print_limit(unsigned type, bool set, union pbus_number n)
{
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;

	if (!set)
		fputs("-", stdout);
	else if (element == PBUS_TYPE_FLOAT || element == PBUS_TYPE_DOUBLE)
		printf("%.17g", n.d);
	else if (element >= PBUS_TYPE_INT8 && element <= PBUS_TYPE_INT64)
		printf("%lld", (long long)n.i);
	else
		printf("%llu", (unsigned long long)n.u);
}

static void print_flags(unsigned flags)
{
	static const char *const names[] = {"readonly", "persistent", "noread", "nosubscriptions"};
	bool any = false;

	for (unsigned b = 0; b < 4; b++)
		if (flags & (1u << b)) {
			printf("%s%s", any ? "," : "", names[b]);
			any = true;
		}
	if (!any)
		fputs("-", stdout);
}

static char text[262144];

int main(int argc, char **argv)
{
	static unsigned char value[65536];
	const char *instance;
	struct pbus_table *t;
	bool wait = false;
	unsigned major, minor;
	const char *interface;
	int r, state;

	if (argc == 3 && !strcmp(argv[1], "--wait")) {
		wait = true;
		instance = argv[2];
	} else if (argc == 2) {
		instance = argv[1];
	} else {
		fprintf(stderr, "usage: vector-read [--wait] INSTANCE\n");
		return 2;
	}
	r = pbus_table_open(instance, PBUS_OPEN_READ, &t);
	if (r < 0)
		return fail(instance, NULL, r);
	/* Everything is read before anything is printed: an error leaves
	 * stdout empty. */
	for (uint32_t i = 0; i < pbus_table_param_count(t); i++) {
		const struct pbus_param *p;
		struct pbus_sample s;

		pbus_table_param(t, i, &p);
		r = pbus_param_read(p, value, sizeof(value), &s);
		if (r < 0)
			return fail(instance, pbus_param_name(p), r);
	}
	state = pbus_table_state(t);
	printf("header\tstate\t%s\n", state == PBUS_TABLE_LIVE       ? "live"
				      : state == PBUS_TABLE_ORPHANED ? "orphaned"
				      : state == PBUS_TABLE_CLOSED   ? "closed"
				      : state == PBUS_TABLE_REPLACED ? "replaced"
								     : "?");
	interface = pbus_table_interface(t, &major, &minor);
	printf("header\tinterface\t%s\t%u.%u\n", interface, major, minor);
	printf("header\tschema_hash\t%016llx\n", (unsigned long long)pbus_table_schema_hash(t));
	for (uint32_t i = 0; i < pbus_table_param_count(t); i++) {
		const struct pbus_param *p;
		struct pbus_param_info info;
		struct pbus_sample s;
		const char *label;
		int32_t v;

		pbus_table_param(t, i, &p);
		pbus_param_describe(p, &info);
		printf("param\t%s\t%s\t", info.name, pbus_type_name(info.type));
		print_flags(info.flags);
		printf("\t%s\t%s\t", pbus_update_class_name(info.update_class), info.unit[0] ? info.unit : "-");
		print_limit(info.type, info.flags & PBUS_PARAM_HAS_MIN, info.min);
		putchar('\t');
		print_limit(info.type, info.flags & PBUS_PARAM_HAS_MAX, info.max);
		putchar('\t');
		print_limit(info.type, info.flags & PBUS_PARAM_HAS_STEP, info.step);
		putchar('\t');
		if (info.flags & PBUS_PARAM_HAS_DEFAULT)
			print_hex(info.default_value, info.default_length);
		else
			fputs("none", stdout);
		putchar('\t');
		for (uint32_t k = 0; pbus_param_enumerator(p, k, &label, &v) == 0; k++)
			printf("%s%s=%d", k ? "," : "", label, v);
		if (info.enum_count == 0)
			fputs("-", stdout);
		printf("\t%s\t%s\n", info.group[0] ? info.group : "-", info.description[0] ? info.description : "-");

		pbus_param_read(p, value, sizeof(value), &s);
		pbus_param_format(p, value, s.length, text, sizeof(text));
		printf("value\t%s\t%llu\t", info.name, (unsigned long long)s.seq);
		if (s.status <= PBUS_STATUS_INVALID)
			printf("%s", pbus_status_name(s.status));
		else
			printf("%u", s.status);
		printf("\t%llu\t", (unsigned long long)s.timestamp_ns);
		print_hex(value, s.length);
		printf("\t%s\t%llu\n", text, (unsigned long long)pbus_param_saved_seq(p));
	}
	if (wait) {
		struct pbus_watch *w;

		r = pbus_watch_new(t, NULL, 0, &w);
		if (r == 0) {
			r = pbus_watch_wait(w, 0);
			pbus_watch_free(w);
		}
		if (r < 0)
			printf("wait\t%s\n", errno_name(-r));
		else
			printf("wait\t%d\n", r);
	}
	pbus_table_close(t);
	return 0;
}
