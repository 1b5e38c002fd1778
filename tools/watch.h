/* SPDX-License-Identifier: MIT */
/*
 * watch.h: what the two files of `pbus watch` share. watch.c has the
 * command: its options, what to watch, the loop and the line output for
 * scripts; watch-terminal.c draws the live view on a terminal. The values
 * come from a source (source.h), the table or pbusd alike.
 */
#ifndef PBUS_TOOL_WATCH_H
#define PBUS_TOOL_WATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "source.h"
#include "tool.h"

struct watch_options {
	const struct tool_format *format;
	int64_t interval_ns;
	unsigned timeout_ms;      /* -w: the whole watch; 0: no limit */
	unsigned long long count; /* 0: no limit */
	bool initial;
	bool terminal;
	char **names;
	int name_count;
};

struct watch {
	struct tool_context *context;
	const struct watch_options *options;
	struct tool_source *source;
	uint32_t *indexes;          /* what is shown, in order */
	size_t count;
	unsigned long long changes;
	bool dirty;                 /* terminal: something to draw */
	bool done;                  /* --count reached, or stdout gone */
	bool values_seen;           /* the last wait brought values */
	int drawn_lines;            /* lines of the block on screen, for redraws */
	volatile sig_atomic_t *resized; /* set by SIGWINCH; the drawing clears it */
};

/* Draw the block of lines in place (terminal only). */
void watch_draw(struct watch *w);

#endif
