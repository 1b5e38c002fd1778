/* SPDX-License-Identifier: MIT */
/*
 * process.c: is a process still there? Used for dead writer-lock holders
 * and for a dead pbusd. A pid alone is not enough: pids are recycled, and a
 * killed process stays a zombie until its parent reaps it. So a process is
 * identified by its pid and the low 30 bits of its start time (field 22 of
 * /proc/PID/stat, in clock ticks since boot), and a zombie counts as dead
 * (unless it is a main thread that exited while its other threads run).
 * Threads (the writers of the table) are identified the same way by their
 * tid: /proc/TID/stat exists for every thread, listed or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process-internal.h"

/* Read /proc/PID/@file into @buf as a string; -ESRCH if the process is gone. */
static int read_proc_file(uint32_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	return 0;
}

/* Read /proc/PID/stat: state letter and start time. -ESRCH if gone. */
static int read_stat(uint32_t pid, char *ret_state, uint64_t *ret_start)
{
	char buf[1024];
	const char *p;
	int r = read_proc_file(pid, "stat", buf, sizeof(buf));

	if (r < 0)
		return r;
	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	*ret_state = p[2];
	p += 2;
	/* Fields from 3 (state) on; starttime is field 22. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EIO;
		p++;
	}
	*ret_start = strtoull(p, NULL, 10);
	return 0;
}

/* The Threads: line of /proc/PID/status; 0 if unknown. */
static long thread_count(uint32_t pid)
{
	char buf[4096];
	const char *line;

	if (read_proc_file(pid, "status", buf, sizeof(buf)) < 0)
		return 0;
	line = strstr(buf, "\nThreads:");
	return line ? strtol(line + 9, NULL, 10) : 0;
}

uint32_t pbus_process_start_token(pid_t pid)
{
	char state;
	uint64_t start;

	if (read_stat((uint32_t)pid, &state, &start) < 0)
		return 0;
	return (uint32_t)start & PBUS_START_TOKEN_MASK;
}

/* Is the process (or, with @thread, the single thread) @id still there? */
static bool task_alive(uint32_t id, uint32_t start, bool thread)
{
	char state;
	uint64_t started;
	int r;

	if (id == 0)
		return false;
	r = read_stat(id, &state, &started);
	if (r == -ESRCH)
		return false;
	if (r < 0)
		/* No /proc: fall back to the id alone. */
		return kill((pid_t)id, 0) == 0 || errno == EPERM;
	if (state == 'X')
		return false;
	/* A thread is done once it exits. A process's main thread that called
	 * pthread_exit() shows 'Z' while the other threads still run (and may
	 * hold a lock): that process is dead only if the thread is alone. */
	if (state == 'Z' && (thread || thread_count(id) <= 1))
		return false;
	return start == 0 || ((uint32_t)started & PBUS_START_TOKEN_MASK) == start;
}

bool pbus_process_alive(uint32_t pid, uint32_t start)
{
	return task_alive(pid, start, false);
}

bool pbus_thread_alive(uint32_t tid, uint32_t start)
{
	return task_alive(tid, start, true);
}

void pbus_process_groups(pid_t pid, gid_t **groups, size_t *count)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 7, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (;;) {
			unsigned long g = strtoul(p, &end, 10);
			gid_t *more;

			if (end == p)
				break;
			more = realloc(*groups, (*count + 1) * sizeof(*more));
			if (!more)
				break;
			*groups = more;
			(*groups)[(*count)++] = (gid_t)g;
			p = end;
		}
		break;
	}
	fclose(f);
}

bool pbus_gid_in(gid_t gid, gid_t primary, const gid_t *groups, size_t count)
{
	if (gid == primary)
		return true;
	for (size_t i = 0; i < count; i++)
		if (groups[i] == gid)
			return true;
	return false;
}
