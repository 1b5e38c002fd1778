/* SPDX-License-Identifier: MIT */
/*
 * source.h: where `pbus get`, `set` and `watch` take values from and put
 * them: the instance's table (shared memory) or pbusd over its socket. A
 * source hides which: it has the schema view (parambus/view.h), looks
 * names up, reads values with their samples, writes a batch with a result
 * per write, and watches parameters for changes, which it hands to a
 * callback of the command's. What differs between the two is said here
 * once, in source.c; the commands word what they see.
 *
 * Single-threaded, as the whole tool.
 */
#ifndef PBUS_TOOL_SOURCE_H
#define PBUS_TOOL_SOURCE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tool.h"

struct tool_source;

/*
 * The instance of @context through its table, opened with @flags
 * (tool_open()): prints why not and returns the exit status, or
 * TOOL_EXIT_OK with *ret_source. Free with tool_source_close().
 */
int tool_source_open_table(const struct tool_context *context, unsigned flags,
			   struct tool_source **ret_source);

/* The instance of @context through pbusd's socket (tool_connect(), with
 * its @timeout_ms and @no_socket_hint): as above. */
int tool_source_connect(const struct tool_context *context, unsigned timeout_ms,
			const char *no_socket_hint, struct tool_source **ret_source);

/* Close the table or the connection; accepts NULL. */
void tool_source_close(struct tool_source *source);

/* Whether the values go through pbusd (else through the table). */
bool tool_source_is_server(const struct tool_source *source);

/* The table, or NULL through pbusd (and while a table source reopens). */
struct pbus_table *tool_source_table(const struct tool_source *source);

/* Whether there is an instance to show: false only for a table source that
 * lost its instance and has not reopened it (tool_source_reopen()). */
bool tool_source_ready(const struct tool_source *source);

/* The schema view of the table or of pbusd's schema; valid until the
 * source is closed or reopened. */
const struct pbus_view *tool_source_view(const struct tool_source *source);

/* The index of parameter @name; prints "unknown parameter 'name'" and
 * returns -ENOENT if there is none. */
int tool_source_find(const struct tool_source *source, const char *name, uint32_t *ret_index);

/*
 * The value of parameter @index with its sample (timestamp, version,
 * length) and status (ret_value->status: enum pbus_status, or -errno):
 * from a table, read now; through pbusd, the newest value the watch
 * (tool_source_watch()) received, -ENODATA before the first. Returns the
 * status; free the value with tool_value_clear() whatever it returns.
 */
int tool_source_read(const struct tool_source *source, uint32_t index,
		     struct tool_value *ret_value);

/* A write of the batch that pbusd need not see: a later write of the same
 * parameter in the batch replaces it (its .result). */
#define TOOL_WRITE_SUPERSEDED 1

/*
 * Write @count values (.index, .value, .length; status ok, now) all or
 * nothing: pbus_table_write_many() or one SET to pbusd
 * (pbus_client_set_flags() with @client_flags, which must be 0 for the
 * table), which takes a parameter once per batch, so there only the last
 * write of each parameter is sent (the others' .result is
 * TOOL_WRITE_SUPERSEDED). Returns 0 or the first refusal's -errno; each
 * write's .result is 0, its refusal or TOOL_WRITE_SUPERSEDED, and .seq
 * the version it made. Prints nothing.
 */
int tool_source_write(struct tool_source *source, struct pbus_write *writes, size_t count,
		      unsigned client_flags);

/* --- Watching ----------------------------------------------------------- */

enum tool_change_kind {
	/* Parameter .index changed (pbusd: a value arrived; it is what
	 * tool_source_read() gives now). */
	TOOL_CHANGE_VALUE,
	/* pbusd sent the current values of everything watched (the first
	 * notification of the subscription): each is in tool_source_read(). */
	TOOL_CHANGE_CURRENT,
	/* The connection to pbusd was lost; the client reconnects by itself. */
	TOOL_CHANGE_LOST,
	/* The connection is back and the subscription renewed; the values
	 * follow as TOOL_CHANGE_VALUE. */
	TOOL_CHANGE_BACK
};

struct tool_change {
	enum tool_change_kind kind;
	uint32_t index; /* TOOL_CHANGE_VALUE */
};

typedef void (*tool_change_fn)(const struct tool_change *change, void *userdata);

/*
 * Watch the @count parameters @indexes (@every: they are all the
 * instance's parameters), calling @callback with each change, in order,
 * from tool_source_wait(): a table through a pbus_watch, pbusd through a
 * subscription that sends at most one notification per @min_interval_us
 * (0: no limit). Prints why not ("watch: ...") and returns the exit
 * status. On a table source, call it again after tool_source_reopen().
 */
int tool_source_watch(struct tool_source *source, const uint32_t *indexes, size_t count,
		      bool every, uint32_t min_interval_us, tool_change_fn callback,
		      void *userdata);

/* What tool_source_wait() and tool_source_reopen() return besides 0 and
 * -errno (below every errno). */
enum {
	/* A table source's instance was closed or replaced: reopen it. */
	TOOL_SOURCE_GONE = -4096,
	/* The instance did not come back within REOPEN_TIMEOUT_MS. */
	TOOL_SOURCE_NOT_BACK = -4097
};

/*
 * Wait up to @timeout_ns (less if a signal comes) for changes and hand
 * them to the callback. Unless @changes_wake, a change need not end the
 * wait early: a table then sleeps the whole time and looks once (a look
 * that fails is left to the next wait). Through pbusd, a lost connection
 * is retried every REOPEN_RETRY_MS (the client reconnects by itself;
 * LOST and BACK tell). Returns 0; TOOL_SOURCE_GONE (table: call
 * tool_source_reopen()); TOOL_SOURCE_NOT_BACK (pbusd was away for
 * REOPEN_TIMEOUT_MS); -ESTALE (pbusd came back with another schema);
 * another -errno.
 */
int tool_source_wait(struct tool_source *source, int64_t timeout_ns, bool changes_wake);

/*
 * After TOOL_SOURCE_GONE: close the table and open the instance again
 * every REOPEN_RETRY_MS until it is live (0; then watch again with
 * tool_source_watch()), CLOCK_MONOTONIC @deadline_ns passes
 * (TOOL_SOURCE_NOT_BACK), *@stop is set (-EINTR) or opening fails
 * otherwise (its -errno).
 */
int tool_source_reopen(struct tool_source *source, int64_t deadline_ns,
		       const volatile sig_atomic_t *stop);

/* The head of the terminal view's first line: "psu1  com.example.Psu 1.0
 * live" for a table, "psu1  via pbusd  connected" (or "reconnecting")
 * through pbusd. */
void tool_source_title(const struct tool_source *source, char *buf, size_t size);

/* How long a lost instance may take to come back, and how often to try. */
enum { REOPEN_TIMEOUT_MS = 5000, REOPEN_RETRY_MS = 100 };

#endif
