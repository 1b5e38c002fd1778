/* SPDX-License-Identifier: MIT */
/*
 * log.c: the daemons' log (pbusd, pbus-hwd), one line per message on
 * stderr (the journal keeps stderr of a service). The library never logs;
 * the daemons say what they do.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static enum log_level current = LOG_INFO;
static const char *program = "pbusd";
static const char *const names[] = {"error", "warning", "info", "debug"};

void log_set_program(const char *name)
{
	program = name;
}

const char *log_program(void)
{
	return program;
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

/* Is stderr the journal (systemd sets JOURNAL_STREAM to its "dev:inode")? */
static bool stderr_is_journal(void)
{
	static int answer = -1;
	const char *env;
	unsigned long long dev, ino;
	struct stat st;

	if (answer >= 0)
		return answer;
	env = getenv("JOURNAL_STREAM");
	answer = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
		 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return answer;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	/* syslog priorities: err, warning, info, debug. */
	static const int priority[] = {3, 4, 6, 7};
	char line[1024];
	int n;
	va_list ap;

	if (level > current)
		return;
	/* The journal takes the level from a "<N>" prefix and adds the name
	 * and pid itself; a terminal or a file gets them written out. */
	if (stderr_is_journal() && !strcmp(program, "pbusd"))
		n = snprintf(line, sizeof(line), "<%d>%s: ", priority[level], names[level]);
	else if (stderr_is_journal()) /* a child sharing pbusd's stream: say who */
		n = snprintf(line, sizeof(line), "<%d>%s[%d]: %s: ", priority[level], program,
			     (int)getpid(), names[level]);
	else
		n = snprintf(line, sizeof(line), "%s[%d]: %s: ", program, (int)getpid(), names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line, so that threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}
