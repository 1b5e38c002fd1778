/* SPDX-License-Identifier: MIT */
/*
 * log.h: the log of parambus's daemons, shared by pbusd and pbus-hwd: one
 * line per message on stderr, "PROGRAM[PID]: LEVEL: text". Thread-safe
 * (each message is one write). It sits in common/, the programs' shared
 * code, and not in lib/, because the libraries never log.
 */
#ifndef PBUS_COMMON_LOG_H
#define PBUS_COMMON_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARNING = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* The name in front of every line (default "pbusd"); set once at start. */
void log_set_program(const char *name);
/* That name (for messages outside the log, e.g. usage errors). */
const char *log_program(void);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
const char *log_level_name(enum log_level level);
int log_parse_level(const char *name, enum log_level *ret);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
