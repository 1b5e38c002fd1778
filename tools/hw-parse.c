/* SPDX-License-Identifier: MIT */
/*
 * hw-parse.c: toggle periods and I2C message lists from the command line
 * (hw-parse.h). Everything is checked before anything is used: a period
 * list or a message list is accepted whole or refused with one line.
 */
#include <stdlib.h>
#include <string.h>

#include "hw-parse.h"
#include "tool.h"


/* "100,900", "500us", "1s": periods in µs into @periods; their number, or
 * -1 if malformed (a 0 only last: it ends the sequence). */
int tool_gpio_parse_periods(const char *text, uint64_t *periods)
{
	int n = 0;

	for (const char *p = text;; p++) {
		unsigned long long v = 0, scale = 1000;
		const char *start = p;

		if (n == TOOL_GPIO_PERIODS_MAX)
			return -1;
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned)(*p - '0');
			if (v > TOOL_GPIO_PERIOD_MAX_US)
				return -1;
			p++;
		}
		if (p == start)
			return -1;
		if (!strncmp(p, "us", 2)) {
			scale = 1;
			p += 2;
		} else if (!strncmp(p, "ms", 2)) {
			p += 2;
		} else if (*p == 's') {
			scale = 1000000;
			p++;
		}
		if (v * scale > TOOL_GPIO_PERIOD_MAX_US)
			return -1;
		periods[n++] = v * scale;
		if (*p == 0)
			break;
		if (*p != ',')
			return -1;
	}
	for (int i = 0; i + 1 < n; i++)
		if (periods[i] == 0)
			return -1;
	if (n == 1 && periods[0] == 0)
		return -1;
	return n;
}

/* ADDR: hex or decimal, 0x03-0x77; prints the error (prefixed by @what). */
int tool_i2c_parse_address(const char *what, const char *text, unsigned *ret)
{
	unsigned long long address;

	if (tool_parse_hex_or_decimal(text, ~0UL, &address) < 0) {
		tool_error("%s: not an address: '%s' (hex 0x.. or decimal)", what, text);
		return -1;
	}
	if (address < 0x03 || address > 0x77) {
		tool_error("%s: address %s out of range (0x03-0x77)", what, text);
		return -1;
	}
	*ret = (unsigned)address;
	return 0;
}


/*
 * The messages of i2ctransfer's syntax in @args (after BUS): each
 * {r|w}LENGTH[@ADDR], a write followed by LENGTH bytes (a byte may end in
 * '=', '+' or '-' to fill the rest of the message). Fills @messages with
 * buffers malloc'd (freed by the caller, also on failure) and *ret_count;
 * prints the error and returns an exit status, or -1 on success.
 */
int tool_i2c_parse_messages(const char *what, int nargs, char **args,
			      struct pbus_i2c_message *messages, size_t *ret_count)
{
	int address = -1;
	size_t n = 0;

	*ret_count = 0;
	for (int i = 0; i < nargs;) {
		const char *m = args[i], *at;
		unsigned long long length;
		struct pbus_i2c_message *msg;
		char number[16];
		size_t digits;

		if (n == TOOL_I2C_MESSAGES_MAX) {
			tool_error("%s: more than %d messages", what, TOOL_I2C_MESSAGES_MAX);
			return TOOL_EXIT_FAILURE;
		}
		/* The letter first: "" and "@..." have no digits to measure. */
		at = strchr(m, '@');
		digits = m[0] != 'r' && m[0] != 'w' ? 0 : at ? (size_t)(at - m - 1) : strlen(m + 1);
		if (digits == 0 || digits >= sizeof(number)) {
			tool_error("%s: not a message {r|w}LENGTH[@ADDR]: '%s'", what, m);
			return TOOL_EXIT_FAILURE;
		}
		memcpy(number, m + 1, digits);
		number[digits] = 0;
		if (tool_parse_unsigned(number, PBUS_I2C_MESSAGE_LENGTH_MAX, &length) < 0 || length == 0) {
			tool_error("%s: '%s': not a length 1-%d", what, m, PBUS_I2C_MESSAGE_LENGTH_MAX);
			return TOOL_EXIT_FAILURE;
		}
		if (at) {
			unsigned a;

			if (tool_i2c_parse_address(what, at + 1, &a) < 0)
				return TOOL_EXIT_FAILURE;
			address = (int)a;
		} else if (address < 0) {
			tool_error("%s: '%s': the first message needs an address (%s@0x50)", what, m, m);
			return TOOL_EXIT_FAILURE;
		}
		msg = &messages[n++];
		*ret_count = n;
		msg->address = (uint16_t)address;
		msg->flags = m[0] == 'r' ? PBUS_I2C_MESSAGE_READ : 0;
		msg->length = (uint16_t)length;
		msg->buffer = calloc(length, 1);
		if (!msg->buffer) {
			tool_error("out of memory");
			return TOOL_EXIT_FAILURE;
		}
		i++;
		if (m[0] == 'r')
			continue;
		for (size_t k = 0; k < length;) {
			unsigned long long byte;
			char text[16], mode = 0;
			size_t len;

			if (i >= nargs) {
				tool_error("%s: '%s' has %zu of its %llu bytes", what, m, k, length);
				return TOOL_EXIT_FAILURE;
			}
			len = strlen(args[i]);
			if (len && strchr("=+-", args[i][len - 1]))
				mode = args[i][--len];
			if (len >= sizeof(text) ||
			    (memcpy(text, args[i], len), text[len] = 0,
			     tool_parse_hex_or_decimal(text, 0xff, &byte) < 0)) {
				tool_error("%s: '%s': not a byte 0x00-0xff (with '=', '+' or '-' to fill)",
					   what, args[i]);
				return TOOL_EXIT_FAILURE;
			}
			i++;
			if (!mode) {
				msg->buffer[k++] = (uint8_t)byte;
				continue;
			}
			for (; k < length; k++) {
				msg->buffer[k] = (uint8_t)byte;
				byte += mode == '+' ? 1 : mode == '-' ? 0xff : 0;
			}
		}
	}
	if (n == 0) {
		tool_error("%s: no message given", what);
		return TOOL_EXIT_USAGE;
	}
	return -1;
}

