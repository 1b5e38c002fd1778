/* SPDX-License-Identifier: MIT */
/*
 * describe.h: the one-line texts parambus's programs show about a
 * parameter, worded once so that `pbus`, pbus-web and pbus-bridge say the
 * same: a number and the limits of a parameter, why a text is not a value
 * of it, and why a write of it was refused. On a view (parambus/view.h), a
 * table's or a client's: public API only. No state; any thread.
 */
#ifndef PBUS_COMMON_DESCRIBE_H
#define PBUS_COMMON_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/table.h>

struct pbus_view;

/* A limit (min, max or step) of a parameter of @type as text: the
 * shortest %g that reads back for floating point, decimal otherwise. */
void describe_number(unsigned type, union pbus_number number, char *buf, size_t size);

/* "0 … 30 V", "at least 1 A" (an integer type's own range where the schema
 * leaves one open) for the parameter @info describes, "" if it has none. */
void describe_limits(const struct pbus_param_info *info, char *buf, size_t size);

/*
 * Why a text is not a valid value of parameter @index of @view, given the
 * -errno that pbus_view_parse() (or pbusd's SET) gave: "value out of range
 * (0 … 30 V)", "not a bool (true/false)", "too long (at most 8 bytes)" ...
 */
void describe_parse_error(const struct pbus_view *view, uint32_t index, int negative_errno, char *buf,
			  size_t size);

/*
 * The whole line for a write of @text to parameter @index refused with
 * @negative_errno: "set NAME=TEXT: <describe_parse_error()>" for a bad
 * value (TEXT cut at 60 bytes), "set NAME: parameter is read-only", a
 * permission refused by pbusd (naming the group, and asking whether
 * @writer's user, "pbus-web", is in it), a busy parameter, or
 * pbus_strerror()'s text.
 */
void describe_refusal(const struct pbus_view *view, uint32_t index, const char *text, int negative_errno,
		      const char *writer, char *buf, size_t size);

#endif
