/* SPDX-License-Identifier: MIT */
/*
 * pbusd.h: the parts of pbusd and what they share.
 *
 * Threads: the main thread handles signals and the instance's life; the
 * persistence thread (persist.c) sleeps until a persistent parameter
 * changes and saves the state file. The socket server of docs/ (issue 3)
 * will be a third part with its own thread and event loop.
 */
#ifndef PBUSD_H
#define PBUSD_H

#include <stdarg.h>
#include <stdbool.h>

#include <parambus/parambus.h>

enum log_level { LOG_ERROR = 0, LOG_WARNING = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* log.c: messages to stderr as "pbusd[PID]: LEVEL: text". Thread-safe. */
void log_set_level(enum log_level level);
int log_parse_level(const char *name, enum log_level *ret);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* persist.c: the state file of persistent parameters (docs/persistence.md). */
struct persist;

/* Prepare persistence of @owner's persistent parameters into
 * @state_dir/@instance.state; creates @state_dir if missing. */
int persist_new(struct pbus_table *owner, const char *state_dir, const char *instance,
		unsigned save_delay_ms, struct persist **ret);
/* Restore saved values into the (unpublished) instance. Problems with single
 * values are logged and skipped; a damaged file is kept aside as .corrupt
 * and the defaults stay. */
int persist_restore(struct persist *p);
/* Start / stop the thread that saves on every change; stopping saves once
 * more if anything changed since the last save. */
int persist_start(struct persist *p);
void persist_stop(struct persist *p);
void persist_free(struct persist *p);
/* Save now (the thread's job; exposed for the final save). */
int persist_save(struct persist *p);

#endif
