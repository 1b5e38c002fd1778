/* SPDX-License-Identifier: MIT */
/*
 * pbusd.h: the parts of pbusd and what they share.
 *
 * Threads: the main thread handles signals and the instance's life; the
 * persistence thread (persist.c) sleeps until a persistent parameter
 * changes and saves the state file; hwd-supervisor.c supervises pbus-hwd, a
 * child process that runs the hardware bindings; server.c serves the table over a
 * Unix-domain socket with a server thread and a watcher thread. The
 * registry of services (registry.c: registrations, watches) belongs to
 * the server thread alone, like the clients it lives in; no other thread
 * touches it, so it has no lock.
 */
#ifndef PBUSD_H
#define PBUSD_H

#include <stdarg.h>
#include <stdbool.h>

#include <parambus/parambus.h>

#include "../common/log.h"

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
/* The whole file at @path, NUL-terminated (the caller frees it), or NULL
 * with *ret_error = -errno (-EFBIG above @max bytes). */
char *read_file(const char *path, size_t max, size_t *ret_length, int *ret_error);
/* After every save, write 1 to eventfd @fd (the server's acknowledgements
 * of persistent writes wait for it). -1: nobody. Set before persist_start(). */
void persist_set_saved_fd(struct persist *p, int fd);

/* server.c: the parameter server on a Unix-domain socket
 * (docs/socket-protocol.md), with its own two threads. */
struct server;

struct server_options {
	const char *socket_dir;  /* NULL: the default of docs/socket-protocol.md §1 */
	uint32_t max_frame, max_clients, max_subscriptions; /* 0: defaults */
	uint32_t max_clients_per_user; /* 0: a quarter of max_clients, at least 1 */
	uint32_t reserved_clients;     /* if reserved_clients_given; else 8 */
	bool reserved_clients_given;
	uint32_t frame_timeout_ms; /* for a HELLO, or the rest of a frame begun; 0: default */
	uint32_t max_services;     /* registered services in all (§3.6); 0: 1024 */
	/* pbus-hwd runs the schema's bindings and reports what it applied on
	 * the pipe whose read end is @hwd_report_fd (common/hwd-report.h):
	 * SETs with the APPLIED flag wait for it (§3.3). The server owns the
	 * descriptor from server_start() on, even if that fails. */
	bool hardware;
	int hwd_report_fd;
	uint32_t apply_timeout_ms; /* a SET's wait for the hardware; 0: 1000 */
};

/* Listen and serve @owner (published) whose compiled schema is @schema_text.
 * @schema, @schema_text and @instance must outlive the server. Logs why it
 * fails (one line), e.g. a socket directory that others could write. */
int server_start(struct pbus_table *owner, const struct pbus_schema *schema, const char *schema_text,
		 size_t schema_length, const char *instance, const struct server_options *options,
		 struct server **ret);
/* The descriptor the saver signals after each save (persist_set_saved_fd()). */
int server_saved_fd(const struct server *s);
/* pbus-hwd will not run again (the supervisor gave up): SETs with the
 * APPLIED flag no longer wait (those waiting run into their deadline).
 * Called by the main thread; accepts NULL. */
void server_hardware_gone(struct server *s);
/* Close every connection, remove the socket, free. Accepts NULL. */
void server_stop(struct server *s);

/* hwd-supervisor.c: pbus-hwd as pbusd's supervised child, running the
 * schema's hardware bindings. Used by the main thread only. */
struct hwd_supervisor;

/* Whether any parameter of @schema has a hardware binding (pbus-hwd's work). */
bool hardware_bindings_present(const struct pbus_schema *schema);
/* Prepare to run pbus-hwd (@hwd_path, or the one next to pbusd, or from
 * PATH); with @report, make the pipe on which it reports what it applied
 * (pbus-hwd --report-fd; common/hwd-report.h), the same for every run of
 * it. Starts nothing yet. */
int hwd_supervisor_new(const char *hwd_path, const char *schema_path, const char *instance,
		       bool report, struct hwd_supervisor **ret);
/* The report pipe's read end (non-blocking, close-on-exec), handed over
 * once: the caller owns it then. -1 without a pipe, or the second time. */
int hwd_supervisor_take_report_fd(struct hwd_supervisor *sv);
/* Start pbus-hwd. */
void hwd_supervisor_start(struct hwd_supervisor *sv);
/* Whether it gave pbus-hwd up (it refused the bindings: not restarted). */
bool hwd_supervisor_given_up(const struct hwd_supervisor *sv);
/* On SIGCHLD: reap, log, plan a restart. Accepts NULL (reaps only). */
void hwd_supervisor_child_exited(struct hwd_supervisor *sv);
/* Milliseconds until hwd_supervisor_tick() has work (a planned restart), or -1. */
int hwd_supervisor_timeout_ms(const struct hwd_supervisor *sv);
void hwd_supervisor_tick(struct hwd_supervisor *sv);
/* SIGTERM to pbus-hwd, SIGKILL after 3 s; frees. Accepts NULL. */
void hwd_supervisor_stop(struct hwd_supervisor *sv);

#endif
