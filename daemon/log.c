/* SPDX-License-Identifier: MIT */
/*
 * log.c: the daemons' log (pbusd, pbus-hwd), one line per message on
 * stderr (the journal keeps stderr of a service). The library never logs;
 * the daemons say what they do.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static enum log_level current = LOG_INFO;
static const char *program = "pbusd";
static const char *const names[] = {"error", "warning", "info", "debug"};

void log_set_program(const char *name)
{
	program = name;
}

void log_set_level(enum log_level level)
{
	current = level;
}

enum log_level log_get_level(void)
{
	return current;
}

const char *log_level_name(enum log_level level)
{
	return names[level];
}

int log_parse_level(const char *name, enum log_level *ret)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*ret = (enum log_level)i;
			return 0;
		}
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	int n;
	va_list ap;

	if (level > current)
		return;
	n = snprintf(line, sizeof(line), "%s[%d]: %s: ", program, (int)getpid(), names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line, so that threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}
