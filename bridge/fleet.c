/* SPDX-License-Identifier: MIT */
/*
 * fleet.c: loading the fleet file that `pbus-gen --fleet` writes
 * (docs/fleet.md, "The fleet file"). The file is input: every line is
 * checked, and the first bad one is refused as "FILE:LINE: problem", with
 * nothing kept. One thread loads it; it is read-only afterwards.
 */
#include "pbus-bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLEET_LINE_MAX 1024
#define FLEET_PARAMS_MAX 65535
#define FLEET_RATE_MAX 1000.0

static int fail(char *error, size_t size, const char *source, unsigned line, const char *format, ...)
{
	if (size > 0) {
		int n = snprintf(error, size, "%s:%u: ", source, line);
		if (n >= 0 && (size_t)n < size) {
			va_list ap;
			va_start(ap, format);
			vsnprintf(error + n, size - (size_t)n, format, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

/* Split @line at single spaces into at most @max words; the count, or -1
 * if there are more, or an empty word (two spaces, a leading or trailing
 * one). */
static int split(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		if (n == max)
			return -1;
		words[n++] = p;
		char *space = strchr(p, ' ');
		if (!space)
			break;
		*space = '\0';
		p = space + 1;
	}
	for (int i = 0; i < n; i++)
		if (!words[i][0])
			return -1;
	return n;
}

static bool parse_u64(const char *s, int base, uint64_t max, uint64_t *ret)
{
	if (!*s || (base == 10 && s[0] == '0' && s[1]) || !strchr("0123456789abcdef", s[0]))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*ret = v;
	return true;
}

static bool parse_number(const char *s, double *ret)
{
	/* a plain decimal: digits, an optional fraction, an optional exponent */
	const char *p = s;
	if (!(*p >= '0' && *p <= '9'))
		return false;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return false;
	for (; *p; p++)
		if (!strchr("0123456789.eE+-", *p))
			return false;
	*ret = v;
	return true;
}

static bool name_ok(const char *s)
{
	/* [A-Za-z_][A-Za-z0-9_]* segments joined by '.' (docs/schema-format.md) */
	size_t n = strlen(s);
	if (n == 0 || n > BRIDGE_NAME_MAX)
		return false;
	bool start = true;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if (c == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		if (!alpha && !(c >= '0' && c <= '9' && !start))
			return false;
		start = false;
	}
	return !start;
}

static bool topic_ok(const char *s)
{
	/* levels of [A-Za-z0-9_.-]+ joined by '/', the last one not "set" */
	size_t n = strlen(s);
	if (n == 0 || n > BRIDGE_TOPIC_MAX)
		return false;
	const char *level = s;
	for (const char *p = s;; p++) {
		if (*p == '/' || !*p) {
			if (p == level)
				return false;
			if (!*p)
				return !(p - level == 3 && memcmp(level, "set", 3) == 0);
			level = p + 1;
			continue;
		}
		char c = *p;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
	}
}

static bool flag(const char *s, bool *ret)
{
	if ((s[0] != '0' && s[0] != '1') || s[1])
		return false;
	*ret = s[0] == '1';
	return true;
}

void bridge_fleet_fini(struct bridge_fleet *fleet)
{
	if (!fleet)
		return;
	free(fleet->params);
	*fleet = (struct bridge_fleet){0};
}

int bridge_fleet_parse(const char *text, size_t length, const char *source, struct bridge_fleet *ret,
		       char *error, size_t error_size)
{
	struct bridge_fleet f = {0};
	size_t capacity = 0;
	unsigned line_no = 0;
	bool have_format = false, have_schema = false;
	size_t pos = 0;
	int r = 0;
	*ret = (struct bridge_fleet){0};
	if (error_size)
		error[0] = '\0';
	while (pos < length) {
		line_no++;
		const char *nl = memchr(text + pos, '\n', length - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : length - pos;
		if (!nl) {
			r = fail(error, error_size, source, line_no, "the last line has no newline (a file cut short?)");
			goto out;
		}
		if (n > FLEET_LINE_MAX) {
			r = fail(error, error_size, source, line_no, "line longer than %d bytes", FLEET_LINE_MAX);
			goto out;
		}
		char line[FLEET_LINE_MAX + 1];
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (memchr(line, '\0', n)) {
			r = fail(error, error_size, source, line_no, "a NUL byte");
			goto out;
		}
		if (n == 0 || line[0] == '#')
			continue;
		char *w[10];
		int count = split(line, w, 10);
		if (count < 0) {
			r = fail(error, error_size, source, line_no, "malformed line (words are separated by one space)");
			goto out;
		}
		if (!have_format) {
			uint64_t version;
			if (count != 2 || strcmp(w[0], BRIDGE_FLEET_FORMAT) != 0) {
				r = fail(error, error_size, source, line_no,
					 "not a fleet file (expected '" BRIDGE_FLEET_FORMAT " %d' first)",
					 BRIDGE_FLEET_VERSION);
				goto out;
			}
			if (!parse_u64(w[1], 10, UINT32_MAX, &version) || version != BRIDGE_FLEET_VERSION) {
				r = fail(error, error_size, source, line_no,
					 "fleet file version '%.20s', this pbus-bridge reads version %d", w[1],
					 BRIDGE_FLEET_VERSION);
				goto out;
			}
			have_format = true;
			continue;
		}
		if (strcmp(w[0], "schema") == 0) {
			if (have_schema || count != 2 || strlen(w[1]) != 16 ||
			    !parse_u64(w[1], 16, UINT64_MAX, &f.schema_hash)) {
				r = fail(error, error_size, source, line_no,
					 have_schema ? "a second 'schema' line" : "expected 'schema' and 16 hex digits");
				goto out;
			}
			have_schema = true;
			continue;
		}
		if (strcmp(w[0], "param") != 0) {
			r = fail(error, error_size, source, line_no, "unknown record '%.32s'", w[0]);
			goto out;
		}
		if (!have_schema) {
			r = fail(error, error_size, source, line_no, "a 'param' before the 'schema' line");
			goto out;
		}
		if (count != 9) {
			r = fail(error, error_size, source, line_no,
				 "'param' takes 8 fields: INDEX NAME TOPIC PUBLISH RETAIN COMMAND DEADBAND MAX_RATE_HZ");
			goto out;
		}
		struct bridge_fleet_param p = {0};
		uint64_t index;
		if (!parse_u64(w[1], 10, FLEET_PARAMS_MAX - 1, &index)) {
			r = fail(error, error_size, source, line_no, "bad parameter index '%.20s'", w[1]);
			goto out;
		}
		p.index = (uint32_t)index;
		if (f.count && f.params[f.count - 1].index >= p.index) {
			r = fail(error, error_size, source, line_no, "parameter %u out of order (indexes rise)", p.index);
			goto out;
		}
		if (!name_ok(w[2])) {
			r = fail(error, error_size, source, line_no, "bad parameter name '%.64s'", w[2]);
			goto out;
		}
		if (!topic_ok(w[3])) {
			r = fail(error, error_size, source, line_no, "bad topic '%.64s'", w[3]);
			goto out;
		}
		if (!flag(w[4], &p.publish) || !flag(w[5], &p.retain) || !flag(w[6], &p.command)) {
			r = fail(error, error_size, source, line_no, "PUBLISH, RETAIN and COMMAND are 0 or 1");
			goto out;
		}
		if (!p.publish && !p.command) {
			r = fail(error, error_size, source, line_no, "parameter %u is neither published nor commanded",
				 p.index);
			goto out;
		}
		if (!parse_number(w[7], &p.deadband)) {
			r = fail(error, error_size, source, line_no, "bad deadband '%.20s' (a number, 0 or more)", w[7]);
			goto out;
		}
		if (!parse_number(w[8], &p.max_rate_hz) || p.max_rate_hz > FLEET_RATE_MAX) {
			r = fail(error, error_size, source, line_no, "bad maximum rate '%.20s' (0 to %g Hz)", w[8],
				 FLEET_RATE_MAX);
			goto out;
		}
		strcpy(p.name, w[2]);
		strcpy(p.topic, w[3]);
		for (size_t i = 0; i < f.count; i++)
			if (strcmp(f.params[i].topic, p.topic) == 0) {
				r = fail(error, error_size, source, line_no, "topic '%s' also of parameter %u", p.topic,
					 f.params[i].index);
				goto out;
			}
		if (f.count == capacity) {
			size_t c = capacity ? capacity * 2 : 16;
			struct bridge_fleet_param *np = realloc(f.params, c * sizeof(*np));
			if (!np) {
				r = -ENOMEM;
				goto out;
			}
			f.params = np;
			capacity = c;
		}
		f.params[f.count++] = p;
	}
	if (!have_format || !have_schema) {
		r = fail(error, error_size, source, line_no, "no '%s' line", have_format ? "schema" : BRIDGE_FLEET_FORMAT);
		goto out;
	}
	*ret = f;
	return 0;
out:
	free(f.params);
	return r;
}

int bridge_fleet_load(const char *path, struct bridge_fleet *ret, char *error, size_t error_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(error, error_size, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 16 * 1024 * 1024) {
		close(fd);
		snprintf(error, error_size, "%s: not a regular file of at most 16 MiB", path);
		return -EINVAL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			free(text);
			close(fd);
			snprintf(error, error_size, "%s: %s", path, strerror(e));
			return -e;
		}
		got += (size_t)n;
	}
	close(fd);
	int r = bridge_fleet_parse(text, got, path, ret, error, error_size);
	free(text);
	return r;
}

const struct bridge_fleet_param *bridge_fleet_by_topic(const struct bridge_fleet *fleet, const char *topic,
							size_t length)
{
	for (size_t i = 0; i < fleet->count; i++)
		if (strlen(fleet->params[i].topic) == length && memcmp(fleet->params[i].topic, topic, length) == 0)
			return &fleet->params[i];
	return NULL;
}
