/* SPDX-License-Identifier: MIT */
/*
 * tool.c: the helpers every pbus subcommand uses (tool.h): one-line errors,
 * opening the instance, values as text and as JSON. Messages name the
 * instance or parameter and the problem in words, because a person reads
 * them at a terminal and a script greps them.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "tool.h"

/* --- Errors and options -------------------------------------------------- */

static void print_line_escaped(FILE *out, const char *text)
{
	tool_print_escaped(out, text);
	fputc('\n', out);
}

void tool_error(const char *format, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, format);
	vsnprintf(message, sizeof(message), format, ap);
	va_end(ap);
	/* Values typed by the user may hold newlines; the error stays one line. */
	fflush(stdout);
	fputs("pbus: ", stderr);
	print_line_escaped(stderr, message);
}

void tool_print_help(const struct tool_command *command)
{
	fputs(command->help, stdout);
}

int tool_usage_error(const struct tool_command *command, const char *format, ...)
{
	char message[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(message, sizeof(message), format, ap);
	va_end(ap);
	if (command)
		tool_error("%s: %s (see 'pbus %s --help')", command->name, message, command->name);
	else
		tool_error("%s (see 'pbus --help')", message);
	return TOOL_EXIT_USAGE;
}

int tool_option_error(const struct tool_command *command, int option, char **argv)
{
	const char *text = argv[optind - 1];
	char short_option[3] = {'-', (char)optopt, 0};

	/* For a short option inside a cluster ("-xv") name the letter. */
	if (optopt && strncmp(text, "--", 2))
		text = short_option;
	if (option == ':')
		return tool_usage_error(command, "option '%s' needs an argument", text);
	return tool_usage_error(command, "unknown option '%s'", text);
}

int tool_next_option(struct tool_context *context, const struct tool_command *command, int argc,
		     char **argv, const char *short_options, const struct option *long_options,
		     int *ret_status)
{
	int option;

	*ret_status = -1;
	while ((option = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		switch (option) {
		case 'i':
			context->instance = optarg;
			break;
		case 'h':
			tool_print_help(command);
			*ret_status = TOOL_EXIT_OK;
			return 0;
		case ':':
		case '?':
			*ret_status = tool_option_error(command, option, argv);
			return 0;
		default:
			return option;
		}
	}
	return 0;
}

int tool_run_subcommand(struct tool_context *context, const struct tool_command *family,
			const struct tool_subcommand *subcommands, size_t count, int argc,
			char **argv)
{
	if (argc < 2) {
		tool_error("%s: no command given (see 'pbus %s --help')", family->name,
			   family->name);
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		tool_print_help(family);
		return TOOL_EXIT_OK;
	}
	for (size_t i = 0; i < count; i++)
		if (!strcmp(argv[1], subcommands[i].name)) {
			/* The command parses its own options from the start. */
			optind = 0;
			return subcommands[i].run(context, argc - 1, argv + 1);
		}
	tool_error("%s: unknown command '%s' (see 'pbus %s --help')", family->name, argv[1],
		   family->name);
	return TOOL_EXIT_USAGE;
}

int tool_exit_status(int negative_errno)
{
	switch (negative_errno) {
	case 0:
		return TOOL_EXIT_OK;
	case -ENOENT:
	case -ESTALE:
		return TOOL_EXIT_NO_INSTANCE;
	default:
		return TOOL_EXIT_FAILURE;
	}
}

/* " (name)" of user @uid for a message, or "" if it has none. */
static const char *user_name_note(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	buf[0] = 0;
	if (pw)
		snprintf(buf, size, " (%s)", pw->pw_name);
	return buf;
}

/* pbus_table_open() refused the segment's owner or mode: say whose it is. */
static int untrusted_segment(const char *name)
{
	char path[PATH_MAX], who[300] = "";
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm/pbus.%s", name);
	if (lstat(path, &st) < 0) {
		tool_error("instance '%s': its segment belongs to a user who is not a trusted owner "
			   "(root, you, or $PBUS_OWNER)", name);
		return TOOL_EXIT_FAILURE;
	}
	user_name_note(st.st_uid, who, sizeof(who));
	if (st.st_uid == 0 || st.st_uid == geteuid())
		tool_error("instance '%s': %s (uid %u%s) is writable by everybody (mode %04o): not "
			   "believed", name, path, (unsigned)st.st_uid, who, (unsigned)(st.st_mode & 07777));
	else
		tool_error("instance '%s': %s belongs to uid %u%s, not a trusted owner (root, you, or "
			   "$PBUS_OWNER)", name, path, (unsigned)st.st_uid, who);
	return TOOL_EXIT_FAILURE;
}

int tool_open(const struct tool_context *context, unsigned flags, struct pbus_table **ret_table)
{
	const char *name = context->instance;
	int r;

	if (!name) {
		tool_error("no instance given (use -i NAME or set PBUS_INSTANCE)");
		return TOOL_EXIT_USAGE;
	}
	r = pbus_table_open(name, flags, ret_table);
	switch (r) {
	case 0:
		return TOOL_EXIT_OK;
	case -ENOENT:
		tool_error("instance '%s' not found (is pbusd running?)", name);
		return TOOL_EXIT_NO_INSTANCE;
	case -EINVAL:
		tool_error("invalid instance name '%s' (letters, digits, '_', '-', '.'; "
			   "at most 48 bytes)", name);
		return TOOL_EXIT_USAGE;
	case -EACCES:
		tool_error("instance '%s': no %s access (the segment's permissions refuse it)", name,
			   (flags & PBUS_OPEN_WRITE) ? "write" : "read");
		return TOOL_EXIT_FAILURE;
	case -EPROTO:
		tool_error("instance '%s': not a parambus segment of a supported format", name);
		return TOOL_EXIT_FAILURE;
	case -EPERM:
		return untrusted_segment(name);
	default:
		tool_error("instance '%s': %s", name, pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
}

/* The client found no socket (or a dead one): say why, from the segment. */
static int no_server(const char *name, int negative_errno, const char *hint)
{
	struct pbus_table *table;
	int r = pbus_table_open(name, PBUS_OPEN_READ, &table), state;

	if (r == -ENOENT) {
		tool_error("instance '%s' not found (is pbusd running?)", name);
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r < 0) {
		tool_error("instance '%s': no pbusd socket (%s)", name, pbus_strerror(negative_errno));
		return TOOL_EXIT_NO_INSTANCE;
	}
	state = pbus_table_state(table);
	pbus_table_close(table);
	if (state != PBUS_TABLE_LIVE) {
		tool_error("instance '%s' is %s (pbusd is not running)", name, tool_state_name(state));
		return TOOL_EXIT_NO_INSTANCE;
	}
	tool_error("instance '%s': pbusd serves no socket (--no-socket, or another "
		   "PBUS_SOCKET_DIR)%s%s", name, hint ? "; " : "", hint ? hint : "");
	return TOOL_EXIT_NO_INSTANCE;
}

/* pbus_client_connect() refused the server: say whose socket it is. */
static int untrusted_server(const char *name)
{
	char path[PATH_MAX], who[300] = "";
	uid_t uid;
	int r = pbus_client_server_uid(name, NULL, path, sizeof(path), &uid);

	if (r < 0) {
		tool_error("instance '%s': pbusd's socket is served by a user who is not a trusted owner "
			   "(root, you, or $PBUS_OWNER)", name);
		return TOOL_EXIT_FAILURE;
	}
	user_name_note(uid, who, sizeof(who));
	tool_error("instance '%s': socket %s is served by uid %u%s, not a trusted owner (root, you, or "
		   "$PBUS_OWNER)", name, path, (unsigned)uid, who);
	return TOOL_EXIT_FAILURE;
}

int tool_connect(const struct tool_context *context, unsigned timeout_ms,
		 const char *no_socket_hint, struct pbus_client **ret_client)
{
	struct pbus_client_options options = {.name = "pbus", .timeout_ms = timeout_ms};
	const char *name = context->instance;
	char seconds[32];
	int r;

	if (!name) {
		tool_error("no instance given (use -i NAME or set PBUS_INSTANCE)");
		return TOOL_EXIT_USAGE;
	}
	r = pbus_client_connect(name, &options, ret_client);
	switch (r) {
	case 0:
		return TOOL_EXIT_OK;
	case -EINVAL:
		tool_error("invalid instance name '%s' (letters, digits, '_', '-', '.'; "
			   "at most 48 bytes)", name);
		return TOOL_EXIT_USAGE;
	case -ENOENT:
	case -ECONNREFUSED:
		return no_server(name, r, no_socket_hint);
	case -EACCES:
		tool_error("instance '%s': no access to pbusd's socket (its permissions refuse it)",
			   name);
		return TOOL_EXIT_FAILURE;
	case -EPERM:
		return untrusted_server(name);
	case -EUSERS:
		tool_error("instance '%s': pbusd serves as many clients as it may", name);
		return TOOL_EXIT_FAILURE;
	case -ETIMEDOUT:
		tool_seconds_text(timeout_ms ? timeout_ms : 5000, seconds, sizeof(seconds));
		tool_error("instance '%s': pbusd did not answer within %s", name, seconds);
		return TOOL_EXIT_TIMEOUT;
	default:
		tool_error("instance '%s': pbusd: %s", name, pbus_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
}

const char *tool_state_name(int state)
{
	switch (state) {
	case PBUS_TABLE_LIVE: return "live";
	case PBUS_TABLE_CLOSED: return "closed";
	case PBUS_TABLE_REPLACED: return "replaced";
	case PBUS_TABLE_ORPHANED: return "orphaned";
	default: return "?";
	}
}

int64_t tool_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t tool_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tool_sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL); /* a signal cuts it short, which is what we want */
}

/* Digits only (no sign, no space), in @base, up to @max. */
static int parse_unsigned_in_base(const char *text, int base, unsigned long long max,
				  unsigned long long *ret)
{
	unsigned long long v;
	char *end;

	if (!text || !isxdigit((unsigned char)*text) || (base == 10 && !isdigit((unsigned char)*text)))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, base);
	if (*end || errno || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int tool_parse_unsigned(const char *text, unsigned long long max, unsigned long long *ret)
{
	return parse_unsigned_in_base(text, 10, max, ret);
}

int tool_parse_hex_or_decimal(const char *text, unsigned long long max, unsigned long long *ret)
{
	if (text && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		return parse_unsigned_in_base(text + 2, 16, max, ret);
	return parse_unsigned_in_base(text, 10, max, ret);
}

/* --- Values -------------------------------------------------------------- */

int tool_value_read(const struct pbus_param *param, struct tool_value *ret_value)
{
	struct pbus_param_info info;
	int r = pbus_param_describe(param, &info);

	memset(ret_value, 0, sizeof(*ret_value));
	if (r < 0)
		return ret_value->status = r;
	ret_value->data = malloc(info.value_size ? info.value_size : 1);
	if (!ret_value->data)
		return ret_value->status = -ENOMEM;
	r = pbus_param_read(param, ret_value->data, info.value_size, &ret_value->sample);
	ret_value->status = r;
	return r;
}

void tool_value_clear(struct tool_value *value)
{
	free(value->data);
	value->data = NULL;
}

char *tool_value_text(const struct pbus_view *view, uint32_t index, const void *data,
		      size_t length)
{
	int n = pbus_view_format(view, index, data, length, NULL, 0);
	char *text;

	if (n < 0)
		n = 0;
	text = malloc((size_t)n + 1);
	if (!text)
		return NULL;
	text[0] = 0;
	if (n > 0)
		pbus_view_format(view, index, data, length, text, (size_t)n + 1);
	return text;
}

void tool_flags_text(unsigned flags, char *buf, size_t size)
{
	static const struct {
		unsigned flag;
		const char *name;
	} names[] = {
		{PBUS_PARAM_READONLY, "ro"},
		{PBUS_PARAM_PERSISTENT, "persistent"},
		{PBUS_PARAM_NOREAD, "noread"},
		{PBUS_PARAM_NOSUBSCRIPTIONS, "nosubscriptions"},
	};
	size_t used = 0;

	if (size)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n;

		if (!(flags & names[i].flag))
			continue;
		n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= size - used)
			return;
		used += (size_t)n;
	}
	if (used == 0)
		snprintf(buf, size, "-");
}

void tool_time_text(uint64_t ns, char *buf, size_t size)
{
	time_t seconds = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[32];

	if (ns == 0 || !gmtime_r(&seconds, &tm)) {
		snprintf(buf, size, "-");
		return;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03uZ", date, (unsigned)(ns % 1000000000u / 1000000u));
}

/* --- JSON ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if invalid. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) { len = 2; cp = s[0] & 0x1fu; }
	else if (s[0] >= 0xe0 && s[0] <= 0xef) { len = 3; cp = s[0] & 0x0fu; }
	else if (s[0] >= 0xf0 && s[0] <= 0xf4) { len = 4; cp = s[0] & 0x07u; }
	else return 0;
	if (len > n)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3fu);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void tool_print_escaped(FILE *out, const char *text)
{
	const unsigned char *c = (const unsigned char *)text;
	size_t left = strlen(text);

	while (left > 0) {
		size_t len = 1;

		switch (*c) {
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*c < 0x20 || *c == 0x7f) {
				fprintf(out, "\\x%02x", *c);
			} else {
				/* Invalid UTF-8 is shown as bytes, not as mojibake. */
				len = utf8_sequence(c, left);
				if (len == 0) {
					fprintf(out, "\\x%02x", *c);
					len = 1;
				} else {
					fwrite(c, 1, len, out);
				}
			}
		}
		c += len;
		left -= len;
	}
}

void tool_json_string(FILE *out, const char *text, size_t length)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	fputc('"', out);
	while (i < length) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", out); i++; continue;
		case '\\': fputs("\\\\", out); i++; continue;
		case '\n': fputs("\\n", out); i++; continue;
		case '\r': fputs("\\r", out); i++; continue;
		case '\t': fputs("\\t", out); i++; continue;
		case '\b': fputs("\\b", out); i++; continue;
		case '\f': fputs("\\f", out); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		len = utf8_sequence(s + i, length - i);
		if (len == 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		fwrite(s + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

/* One scalar element at @data as a JSON value. */
static void json_element(FILE *out, const struct pbus_view *view, uint32_t index, unsigned element,
			 const unsigned char *data, size_t size, bool numeric_enums)
{
	char *text;
	int32_t number;

	if (element == PBUS_TYPE_ENUM && numeric_enums && size == sizeof(number)) {
		memcpy(&number, data, sizeof(number));
		fprintf(out, "%" PRId32, number);
		return;
	}
	text = tool_value_text(view, index, data, size);

	if (!text) {
		fputs("null", out);
		return;
	}
	if (element == PBUS_TYPE_ENUM) {
		/* The label; a number that is no enumerator stays a number. */
		if ((text[0] >= '0' && text[0] <= '9') || text[0] == '-')
			fputs(text, out);
		else
			tool_json_string(out, text, strlen(text));
	} else if (element == PBUS_TYPE_FLOAT || element == PBUS_TYPE_DOUBLE) {
		double d = strtod(text, NULL);

		/* JSON has no NaN or infinity. */
		fputs(isfinite(d) ? text : "null", out);
	} else {
		fputs(text, out); /* integers, true/false */
	}
	free(text);
}

void tool_json_value(FILE *out, const struct pbus_view *view, uint32_t index, const void *data,
		     size_t length)
{
	tool_json_value_numeric(out, view, index, data, length, false);
}

void tool_json_value_numeric(FILE *out, const struct pbus_view *view, uint32_t index,
			     const void *data, size_t length, bool numeric_enums)
{
	struct pbus_param_info info;
	const unsigned char *p = data;
	unsigned element;

	if (pbus_view_describe(view, index, &info) < 0) {
		fputs("null", out);
		return;
	}
	element = info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	if (info.type == PBUS_TYPE_STRING) {
		tool_json_string(out, data, length);
	} else if (info.type == PBUS_TYPE_BYTES) {
		char *text = tool_value_text(view, index, data, length);

		tool_json_string(out, text ? text : "", text ? strlen(text) : 0);
		free(text);
	} else if (info.type & PBUS_TYPE_ARRAY_FLAG) {
		fputc('[', out);
		for (size_t off = 0; info.element_size && off + info.element_size <= length;
		     off += info.element_size) {
			if (off)
				fputs(", ", out);
			json_element(out, view, index, element, p + off, info.element_size,
				     numeric_enums);
		}
		fputc(']', out);
	} else {
		json_element(out, view, index, element, p, length, numeric_enums);
	}
}

const char *tool_errno_name(int negative_errno)
{
	const char *name = strerrorname_np(-negative_errno);

	return name ? name : "error";
}
