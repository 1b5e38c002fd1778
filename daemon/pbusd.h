/* SPDX-License-Identifier: MIT */
/*
 * pbusd.h: the parts of pbusd and what they share.
 *
 * Threads: the main thread handles signals and the instance's life; the
 * persistence thread (persist.c) sleeps until a persistent parameter
 * changes and saves the state file; hardware.c supervises pbus-hwd, a child
 * process that runs the hardware bindings. The socket server of docs/ (issue 3)
 * will be a third part with its own thread and event loop.
 */
#ifndef PBUSD_H
#define PBUSD_H

#include <stdarg.h>
#include <stdbool.h>

#include <parambus/parambus.h>

#include "log.h"

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

/* hardware.c: pbus-hwd as pbusd's supervised child, running the schema's
 * hardware bindings. Used by the main thread only. */
struct hardware;

bool hardware_bindings_present(const struct pbus_schema *schema);
/* Start pbus-hwd (@hwd_path, or the one next to pbusd, or from PATH). */
int hardware_start(const char *hwd_path, const char *schema_path, const char *instance,
		   struct hardware **ret);
/* On SIGCHLD: reap, log, plan a restart. Accepts NULL (reaps only). */
void hardware_child_exited(struct hardware *hw);
/* Milliseconds until hardware_tick() has work (a planned restart), or -1. */
int hardware_timeout_ms(const struct hardware *hw);
void hardware_tick(struct hardware *hw);
/* SIGTERM to pbus-hwd, SIGKILL after 3 s; frees. Accepts NULL. */
void hardware_stop(struct hardware *hw);

#endif
