/* SPDX-License-Identifier: MIT */
/* suite.c - the small runner shared by the libparambus-hw kernel tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/suite.h"

char suite_msg[512];
int suite_failures;

void suite_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void suite_run(const char *name, const char *(*fn)(void))
{
	const char *m = fn();
	if (m) {
		kenv_fail(name, "%s", m);
		suite_failures++;
	} else {
		kenv_ok(name);
	}
	fflush(stdout);
}

int suite_exit(void)
{
	return suite_failures ? 1 : 0;
}

const char *suite_read(const char *path)
{
	static char buf[65536];
	int r = kenv_read_file(path, buf, sizeof(buf));
	return r < 0 ? NULL : buf;
}

bool suite_file_contains(const char *path, const char *needle)
{
	const char *s = suite_read(path);
	return s && strstr(s, needle);
}

uint64_t suite_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void suite_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int suite_count(const char *haystack, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);
	for (const char *p = haystack; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}
