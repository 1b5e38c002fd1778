/* SPDX-License-Identifier: MIT */
/*
 * watch-terminal.c: the live view of `pbus watch` on a terminal: a block of
 * lines redrawn in place with ANSI cursor movement (no scrolling, no
 * alternate screen, so the last picture stays when the watch ends), one
 * line per parameter with its name, value, unit, status and age, under a
 * line that names the instance. Each frame is built in memory and written
 * at once, so the terminal never shows half of one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "watch.h"

enum { NAME_WIDTH_MAX = 40, UNIT_WIDTH_MAX = 10, STATUS_WIDTH = 7, AGE_WIDTH = 7 };

/* A growing string for one frame. */
struct frame {
	char *text;
	size_t length, capacity;
};

static void frame_add(struct frame *f, const char *s, size_t n)
{
	if (f->length + n + 1 > f->capacity) {
		size_t capacity = (f->capacity ? f->capacity * 2 : 4096);
		char *text;

		while (capacity < f->length + n + 1)
			capacity *= 2;
		text = realloc(f->text, capacity);
		if (!text)
			return; /* a frame missing a piece; the next one will do */
		f->text = text;
		f->capacity = capacity;
	}
	memcpy(f->text + f->length, s, n);
	f->length += n;
	f->text[f->length] = 0;
}

static void frame_puts(struct frame *f, const char *s)
{
	frame_add(f, s, strlen(s));
}

/* Append @text escaped (control characters as \n, \xNN), cut or padded to
 * exactly @width columns; a cut ends in an ellipsis. Widths count UTF-8
 * code points, which is right for the text an instrument has. */
static void frame_cell(struct frame *f, const char *text, size_t width, bool pad)
{
	size_t used = 0;
	const unsigned char *c = (const unsigned char *)text;

	while (*c) {
		char escaped[8];
		const char *piece = (const char *)c;
		size_t length = 1, columns = 1;

		if (*c == '\n' || *c == '\t' || *c == '\r') {
			snprintf(escaped, sizeof(escaped), "\\%c",
				 *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
			piece = escaped;
			columns = 2;
		} else if (*c < 0x20 || *c == 0x7f) {
			snprintf(escaped, sizeof(escaped), "\\x%02x", *c);
			piece = escaped;
			columns = 4;
		} else {
			while ((c[length] & 0xc0) == 0x80)
				length++;
		}
		/* Keep one column for the ellipsis unless this is the end. */
		if (used + columns > width || (used + columns == width && c[length])) {
			if (used < width) {
				frame_puts(f, "\u2026");
				used++;
			}
			break;
		}
		frame_add(f, piece, piece == escaped ? columns : length);
		used += columns;
		c += length;
	}
	for (; pad && used < width; used++)
		frame_add(f, " ", 1);
}

static void age_text(uint64_t timestamp_ns, uint64_t now_ns, char *buf, size_t size)
{
	uint64_t age = now_ns > timestamp_ns ? now_ns - timestamp_ns : 0;
	uint64_t s = age / 1000000000u;

	if (timestamp_ns == 0)
		snprintf(buf, size, "-");
	else if (s < 10)
		snprintf(buf, size, "%.1fs", (double)age / 1e9);
	else if (s < 60)
		snprintf(buf, size, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, size, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, size, "%llud", (unsigned long long)(s / 86400));
}

static size_t utf8_width(const char *text)
{
	size_t w = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		w += (*c & 0xc0) != 0x80;
	return w;
}

/* What a row shows of the @i-th parameter: the value (text, malloc'd; or
 * NULL and a problem), status and time. */
struct row {
	char *text;
	const char *problem;
	const char *status;
	uint64_t timestamp_ns;
};

static void row_of(const struct watch *w, size_t i, struct row *ret)
{
	struct tool_value value;
	int r = tool_source_read(w->source, w->indexes[i], &value);

	memset(ret, 0, sizeof(*ret));
	if (r == -ENODATA) {
		ret->problem = "\u2026"; /* pbusd's first notification is on its way */
		ret->status = "";
	} else {
		ret->text = r >= 0 ? tool_format_value(w->options->format, tool_source_view(w->source),
						       w->indexes[i], value.data, value.sample.length)
				   : NULL;
		ret->problem = r >= 0 ? "" : pbus_strerror(r);
		ret->status = r >= 0 ? pbus_status_name((unsigned)r) : "error";
		ret->timestamp_ns = value.sample.timestamp_ns;
	}
	tool_value_clear(&value);
}

void watch_draw(struct watch *w)
{
	const struct pbus_view *view = tool_source_view(w->source);
	struct winsize ws;
	size_t columns = 80, rows = 24, name_width = 4, unit_width = 4, value_width, shown;
	struct frame f = {NULL, 0, 0};
	uint64_t now = tool_realtime_ns();
	char line[256], title[256], age[32];

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		columns = ws.ws_col;
		rows = ws.ws_row;
	}
	if (*w->resized) {
		/* Lines drawn for the old width may have wrapped: start over. */
		*w->resized = 0;
		frame_puts(&f, "\033[H\033[2J");
		w->drawn_lines = 0;
	}
	if (w->drawn_lines > 0) {
		snprintf(line, sizeof(line), "\r\033[%dA", w->drawn_lines);
		frame_puts(&f, line);
	}
	/* One line stays free so that the block never scrolls the screen. */
	shown = w->count;
	if (shown + 2 > rows)
		shown = rows > 3 ? rows - 3 : 0; /* header, the "more" line, the free line */
	for (size_t i = 0; i < shown; i++) {
		struct pbus_param_info info;

		pbus_view_describe(view, w->indexes[i], &info);
		if (utf8_width(info.name) > name_width)
			name_width = utf8_width(info.name);
		if (utf8_width(info.unit) > unit_width)
			unit_width = utf8_width(info.unit);
	}
	if (name_width > NAME_WIDTH_MAX)
		name_width = NAME_WIDTH_MAX;
	if (unit_width > UNIT_WIDTH_MAX)
		unit_width = UNIT_WIDTH_MAX;
	value_width = columns > name_width + unit_width + STATUS_WIDTH + AGE_WIDTH + 8 + 10
			      ? columns - (name_width + unit_width + STATUS_WIDTH + AGE_WIDTH + 8)
			      : 10;

	/* The line is cut to fit (frame_cell() cuts it to the width anyway). */
	tool_source_title(w->source, title, sizeof(title));
	if (snprintf(line, sizeof(line), "%s  %zu parameter%s  (Ctrl-C quits)", title, w->count,
		     w->count == 1 ? "" : "s") < 0)
		line[0] = 0;
	frame_puts(&f, "\r\033[2K");
	frame_cell(&f, line, columns - 1, false);
	frame_puts(&f, "\n");
	for (size_t i = 0; i < shown; i++) {
		struct pbus_param_info info;
		struct row row;

		pbus_view_describe(view, w->indexes[i], &info);
		row_of(w, i, &row);
		age_text(row.timestamp_ns, now, age, sizeof(age));
		frame_puts(&f, "\r\033[2K");
		frame_cell(&f, info.name, name_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, row.text ? row.text : row.problem, value_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, info.unit, unit_width, true);
		frame_puts(&f, "  ");
		frame_cell(&f, row.status, STATUS_WIDTH, true);
		snprintf(line, sizeof(line), "  %*s", AGE_WIDTH, age);
		frame_puts(&f, line);
		frame_puts(&f, "\n");
		free(row.text);
	}
	if (shown < w->count) {
		snprintf(line, sizeof(line), "\u2026 %zu more (a taller terminal, or name the "
			 "parameters to watch)", w->count - shown);
		frame_puts(&f, "\r\033[2K");
		frame_cell(&f, line, columns - 1, false);
		frame_puts(&f, "\n");
	}
	/* If the block shrank (a reopened instance), clear what was below. */
	frame_puts(&f, "\033[J");
	if (f.text)
		fwrite(f.text, 1, f.length, stdout);
	fflush(stdout);
	free(f.text);
	w->drawn_lines = 1 + (int)shown + (shown < w->count);
}
