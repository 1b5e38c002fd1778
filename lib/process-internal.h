/* SPDX-License-Identifier: MIT */
/*
 * process-internal.h: is a process or thread still there, and what are a
 * process's groups (process.c)?
 */
#ifndef PBUS_PROCESS_INTERNAL_H
#define PBUS_PROCESS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Does the thread with @tid and start token @start still run? (Exited,
 * zombie and reused ids count as dead.) */
bool pbus_thread_alive(uint32_t tid, uint32_t start);

/* Does the process with @pid and start token @start still run? (Zombies and
 * reused PIDs count as dead.) */
bool pbus_process_alive(uint32_t pid, uint32_t start);

/* The start time token of process or thread @pid (the low 30 bits of
 * /proc/PID/stat starttime, so that a token leaves the lock word's two
 * state bits free), or 0 if unknown. */
#define PBUS_START_TOKEN_MASK 0x3FFFFFFFu
uint32_t pbus_process_start_token(pid_t pid);

/* The supplementary groups of process @pid (/proc/PID/status, "Groups:"),
 * appended to *@groups (realloc'ed; the caller frees it) and counted in
 * *@count. What cannot be read (the process gone, no memory) is left out:
 * a peer's groups can only grant, never refuse. */
void pbus_process_groups(pid_t pid, gid_t **groups, size_t *count);

/* Whether @gid is @primary or one of @groups[0 .. @count). */
bool pbus_gid_in(gid_t gid, gid_t primary, const gid_t *groups, size_t count);

#endif
