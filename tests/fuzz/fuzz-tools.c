/* SPDX-License-Identifier: MIT */
/*
 * fuzz-tools.c: what `pbus` parses from its command line beyond plain
 * numbers, under libFuzzer: i2ctransfer-style message lists and toggle
 * periods (tools/hw-parse.c), the format options' arguments, the time
 * formats with any timestamp and the -w seconds (tools/format.c). The
 * input is cut at NUL bytes into arguments. Each result is checked against
 * what the parser promises: accepted messages within I2C_RDWR's limits and
 * the bytes a write asked for, periods within a day with a 0 only last, a
 * time text NUL-terminated within its buffer, a timeout of 1 ms to a day.
 * The tool's one-line errors go to /dev/null (libFuzzer keeps its own
 * stream). One thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/format.h"
#include "../../tools/hw-parse.h"

enum { ARGS_MAX = 128 };

static const struct tool_command command = {.name = "fuzz", .summary = "", .help = ""};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* libFuzzer took its own copy of stderr at start; ours is silenced. */
	stderr = fopen("/dev/null", "w");
	return stderr ? 0 : -1;
}

static void check_messages(int nargs, char **args)
{
	struct pbus_i2c_message messages[TOOL_I2C_MESSAGES_MAX];
	size_t count = 0;
	int status;

	memset(messages, 0, sizeof(messages));
	status = tool_i2c_parse_messages("fuzz", nargs, args, messages, &count);
	if (count > TOOL_I2C_MESSAGES_MAX)
		abort();
	if (status == -1) {
		if (count == 0)
			abort();
		for (size_t i = 0; i < count; i++)
			if (!messages[i].buffer || messages[i].length == 0 ||
			    messages[i].length > PBUS_I2C_MESSAGE_LENGTH_MAX || messages[i].address < 0x03 ||
			    messages[i].address > 0x77 ||
			    (messages[i].flags & ~(unsigned)PBUS_I2C_MESSAGE_READ))
				abort();
	} else if (status != 1 && status != 2) {
		abort();
	}
	for (size_t i = 0; i < count; i++)
		free(messages[i].buffer);
}

static void check_periods(const char *text)
{
	uint64_t periods[TOOL_GPIO_PERIODS_MAX];
	int n = tool_gpio_parse_periods(text, periods);

	if (n == -1)
		return;
	if (n < 1 || n > TOOL_GPIO_PERIODS_MAX || (n == 1 && periods[0] == 0))
		abort();
	for (int i = 0; i < n; i++)
		if (periods[i] > TOOL_GPIO_PERIOD_MAX_US || (periods[i] == 0 && i != n - 1))
			abort();
}

static void check_format(const char *text, uint64_t ns)
{
	static const int options[] = {'f', 'e', 'g', 0x101, 'F'};
	char buf[160];
	unsigned ms;

	for (size_t k = 0; k < sizeof(options) / sizeof(options[0]); k++) {
		struct tool_format f;
		int status;

		tool_format_init(&f);
		if (!tool_format_option(&command, &f, options[k], text, &status))
			abort();
		if (status != -1 && status != TOOL_EXIT_USAGE)
			abort();
		if (status == -1 && options[k] != 'F' && options[k] != 0x101 &&
		    (f.precision < 0 || f.precision > 40))
			abort();
		if (options[k] != 0x101 || status != -1)
			continue;
		memset(buf, 'x', sizeof(buf));
		tool_format_time(&f, ns, buf, sizeof(buf));
		if (!memchr(buf, 0, sizeof(buf)))
			abort();
	}
	if (tool_parse_seconds(text, &ms) == 0 && (ms < 1 || ms > 86400000))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *args[ARGS_MAX];
	uint64_t ns = 0;
	int nargs = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	/* The last 8 bytes (if any) are also a timestamp for the time formats. */
	if (size >= 8)
		memcpy(&ns, data + size - 8, sizeof(ns));
	for (size_t i = 0; i <= size && nargs < ARGS_MAX;) {
		args[nargs++] = text + i;
		i += strlen(text + i) + 1;
	}
	check_messages(nargs, args);
	check_periods(text);
	check_format(text, ns);
	free(text);
	return 0;
}
