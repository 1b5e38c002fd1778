/* SPDX-License-Identifier: MIT */
/*
 * hw-parse.h: the command-line syntaxes of the hardware commands that are
 * more than a number: gpioset-style toggle periods (`pbus gpio set
 * --toggle 100,900`) and i2ctransfer-style message lists (`pbus i2c
 * transfer 1 w2@0x50 0x00 0x10 r4`). Apart from gpio.c and i2c.c so that
 * tests/fuzz/fuzz-tools.c can feed them anything; they only parse (no
 * device is touched).
 *
 * Single-threaded, as the whole tool.
 */
#ifndef PBUS_TOOL_HW_PARSE_H
#define PBUS_TOOL_HW_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/hw/i2c.h>

/* At most this many toggle periods, each at most a day. */
enum { TOOL_GPIO_PERIODS_MAX = 64 };
#define TOOL_GPIO_PERIOD_MAX_US (86400ULL * 1000000)

/*
 * "100,900", "500us", "1s" (milliseconds without a unit; us, ms, s): the
 * periods in µs into @periods (room for TOOL_GPIO_PERIODS_MAX). Returns
 * their number (>= 1), or -1 if malformed: empty, a bad unit, above a day,
 * more than TOOL_GPIO_PERIODS_MAX, or a 0 that is not the last of several
 * (a last 0 ends the sequence). Prints nothing.
 */
int tool_gpio_parse_periods(const char *text, uint64_t *periods);

/* I2C_RDWR's limit on the messages of one transaction. */
enum { TOOL_I2C_MESSAGES_MAX = 42 };

/* ADDR: hex (0x..) or decimal, 0x03-0x77, into *ret. Prints the error
 * (prefixed by @what) and returns -1, else 0. */
int tool_i2c_parse_address(const char *what, const char *text, unsigned *ret);

/*
 * The messages of i2ctransfer's syntax in @args: each {r|w}LENGTH[@ADDR]
 * (LENGTH 1-8192; without @ADDR the previous message's address), a write
 * followed by its LENGTH bytes (0x00-0xff, hex or decimal; one ending in
 * '=', '+' or '-' fills the rest of the message with itself, counting up
 * or down). Fills @messages (room for TOOL_I2C_MESSAGES_MAX) with buffers
 * malloc'd, which the caller frees whatever the result (*ret_count of
 * them). Returns -1 on success, else an exit status after one line naming
 * the problem (prefixed by @what).
 */
int tool_i2c_parse_messages(const char *what, int nargs, char **args,
			    struct pbus_i2c_message *messages, size_t *ret_count);

#endif
