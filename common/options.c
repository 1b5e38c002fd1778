/* SPDX-License-Identifier: MIT */
/*
 * options.c: the options the daemons share (options.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/common.h>

#include "log.h"
#include "options.h"

int options_common(int opt, const char *arg, const char *usage)
{
	enum log_level level;

	switch (opt) {
	case 'l':
		if (log_parse_level(arg, &level) < 0) {
			fprintf(stderr, "%s: --log-level '%s': use error, warning, info or debug\n",
				log_program(), arg);
			return 2;
		}
		log_set_level(level);
		return OPTIONS_CONTINUE;
	case 'h':
		fputs(usage, stdout);
		return 0;
	case 'V':
		printf("%s %d.%d.%d\n", log_program(), PBUS_VERSION_MAJOR, PBUS_VERSION_MINOR,
		       PBUS_VERSION_PATCH);
		return 0;
	default: /* getopt_long() said what was wrong */
		fprintf(stderr, "Try '%s --help'.\n", log_program());
		return 2;
	}
}

int options_count(const char *name, const char *text, unsigned long min, unsigned long max,
		  unsigned long *ret)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (*end || end == text || errno || v < min || v > max || text[0] < '0' || text[0] > '9') {
		fprintf(stderr, "%s: --%s '%s': use a number from %lu to %lu\n", log_program(), name, text,
			min, max);
		return -1;
	}
	*ret = v;
	return 0;
}

int options_listen(const char *text, char *host, size_t size, unsigned *port)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text)
		return -1;
	size_t n = (size_t)(colon - text);
	const char *a = text;
	if (text[0] == '[') {
		if (n < 3 || text[n - 1] != ']')
			return -1;
		a++;
		n -= 2;
	}
	if (n >= size)
		return -1;
	char *end;
	errno = 0;
	unsigned long p = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || errno || p > 65535)
		return -1;
	memcpy(host, a, n);
	host[n] = '\0';
	*port = (unsigned)p;
	return 0;
}
