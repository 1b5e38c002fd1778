/* SPDX-License-Identifier: MIT */
/*
 * spi.c: `pbus spi`, SPI bring-up through libparambus-hw (spidev): info and
 * a full-duplex transfer. No instance is needed; -i is accepted and ignored.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/hw/spi.h>

#include "../lib/text-internal.h" /* pbus_hex_digit() */
#include "tool.h"

static int spi_run(struct tool_context *context, int argc, char **argv);

const struct tool_command tool_command_spi = {
	.name = "spi",
	.summary = "SPI devices: info, transfer",
	.help = "Usage: pbus [-i NAME] spi COMMAND [ARGS...]\n"
		"\n"
		"SPI bring-up through spidev (no instance needed).\n"
		"\n"
		"Commands:\n"
		"  info DEV                the device's mode, bits per word and speed\n"
		"  transfer DEV HEXBYTES   full-duplex transfer; prints the bytes received\n"
		"\n"
		"DEV: a path (/dev/spidev0.0) or BUS.CS (0.0).\n"
		"Run 'pbus spi COMMAND --help' for a command's options.\n"
		"\n"
		"Options:\n"
		TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus spi info 0.0\n"
		"  pbus spi transfer 0.0 9f000000\n"
		TOOL_HELP_SEE("pbus-spi(1)"),
	.run = spi_run,
};

static const struct tool_command spi_info_command = {
	.name = "spi info",
	.help = "Usage: pbus [-i NAME] spi info DEV\n"
		"\n"
		"Print the device's settings, one per line: mode (0-3 and the other\n"
		"mode bits in hex), bits per word, maximum speed in Hz, and spidev's\n"
		"bufsiz (the most bytes one transfer can move).\n"
		"\n"
		"Options:\n"
		TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus spi info 0.0\n"
		"  pbus spi info /dev/spidev1.0\n"
		TOOL_HELP_SEE("pbus-spi-info(1)"),
};

static const struct tool_command spi_transfer_command = {
	.name = "spi transfer",
	.help = "Usage: pbus [-i NAME] spi transfer DEV HEXBYTES [--speed HZ] [--mode N] [--bits N]\n"
		"\n"
		"Send HEXBYTES (two hex digits per byte, e.g. 0a0b0c; ':' and spaces\n"
		"between bytes are allowed) in one full-duplex transfer under one chip\n"
		"select, and print the bytes received in hex (lower case, no spaces).\n"
		"--speed and --bits apply to this transfer only; --mode changes the\n"
		"device's mode for the transfer and restores it afterwards.\n"
		"\n"
		"Options:\n"
		"      --speed HZ       clock in Hz (default: the device's maximum speed)\n"
		"      --mode N         SPI mode 0-3 (CPOL/CPHA)\n"
		"      --bits N         bits per word, 1-32\n"
		TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus spi transfer 0.0 9f000000\n"
		"  pbus spi transfer 0.1 de:ad:be:ef --speed 500000 --mode 3\n"
		TOOL_HELP_SEE("pbus-spi-transfer(1)"),
};

struct spi_options {
	const char *speed;
	const char *mode;
	const char *bits;
};

static int spi_parse_options(struct tool_context *context, const struct tool_command *command,
			     bool transfer, struct spi_options *values, int argc, char **argv)
{
	static const struct option options[] = {
		{"speed", required_argument, NULL, 'S'},
		{"mode", required_argument, NULL, 'M'},
		{"bits", required_argument, NULL, 'B'},
		TOOL_COMMON_LONG_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	int option, status;

	while ((option = tool_next_option(context, command, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS,
					  transfer ? options : options + 3, &status))) {
		switch (option) {
		case 'S':
			values->speed = optarg;
			break;
		case 'M':
			values->mode = optarg;
			break;
		case 'B':
			values->bits = optarg;
			break;
		}
	}
	return status;
}

/* Open DEV (a path or BUS.CS); print the error and return the status. */
static int spi_open(const char *what, const char *dev, struct pbus_spi **ret_spi)
{
	char path[64];
	int r;

	if (dev[0] >= '0' && dev[0] <= '9' && !strchr(dev, '/')) {
		snprintf(path, sizeof(path), "/dev/spidev%s", dev);
		dev = path;
	}
	r = pbus_spi_open(dev, ret_spi);
	if (r == -ENOENT) {
		tool_error("%s: no device %s", what, dev);
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r == -ENOTTY) {
		tool_error("%s: %s is not a spidev node", what, dev);
		return TOOL_EXIT_FAILURE;
	}
	if (r < 0) {
		tool_error("%s: %s: %s (%s)", what, dev, pbus_hw_strerror(r), tool_errno_name(r));
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

static int spi_fail(const char *what, int r)
{
	tool_error("%s: %s (%s)", what, pbus_hw_strerror(r), tool_errno_name(r));
	return r == -ENODEV || r == -ESHUTDOWN ? TOOL_EXIT_NO_INSTANCE : TOOL_EXIT_FAILURE;
}

static int spi_info(struct tool_context *context, int argc, char **argv)
{
	struct spi_options values = {0};
	struct pbus_spi *spi;
	uint32_t mode = 0, speed = 0;
	uint8_t bits = 0;
	char what[128];
	int status = spi_parse_options(context, &spi_info_command, false, &values, argc, argv);
	int r;

	if (status >= 0)
		return status;
	if (argc - optind != 1)
		return tool_usage_error(&spi_info_command, argc == optind ? "no DEV given" : "expected one DEV");
	snprintf(what, sizeof(what), "spi info %s", argv[optind]);
	status = spi_open(what, argv[optind], &spi);
	if (status)
		return status;
	r = pbus_spi_get_mode(spi, &mode);
	if (r == 0)
		r = pbus_spi_get_bits_per_word(spi, &bits);
	if (r == 0)
		r = pbus_spi_get_max_speed(spi, &speed);
	if (r < 0) {
		pbus_spi_close(spi);
		return spi_fail(what, r);
	}
	printf("mode %u (0x%08x)\n", mode & 3u, mode);
	printf("bits %u\n", bits ? bits : 8u);
	printf("speed %u\n", speed);
	printf("bufsiz %d\n", pbus_spi_get_bufsiz(spi));
	pbus_spi_close(spi);
	return TOOL_EXIT_OK;
}

/* Parse HEXBYTES into a malloc'd buffer; -1 if malformed. */
static int spi_parse_hex(const char *text, uint8_t **ret_data, size_t *ret_length)
{
	size_t length = 0;
	uint8_t *data = malloc(strlen(text) / 2 + 1);

	if (!data)
		return -1;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		text += 2;
	while (*text) {
		int high, low;

		if (*text == ':' || *text == ' ') {
			text++;
			continue;
		}
		high = pbus_hex_digit(text[0]);
		low = high < 0 ? -1 : pbus_hex_digit(text[1]);
		if (low < 0) {
			free(data);
			return -1;
		}
		data[length++] = (uint8_t)(high << 4 | low);
		text += 2;
	}
	if (!length) {
		free(data);
		return -1;
	}
	*ret_data = data;
	*ret_length = length;
	return 0;
}

static int spi_transfer(struct tool_context *context, int argc, char **argv)
{
	struct spi_options values = {0};
	struct pbus_spi_transfer transfer;
	unsigned long long speed = 0, mode = 0, bits = 0;
	struct pbus_spi *spi;
	uint32_t old_mode = 0;
	uint8_t *data;
	size_t length;
	char what[256];
	int status = spi_parse_options(context, &spi_transfer_command, true, &values, argc, argv);
	int r;

	if (status >= 0)
		return status;
	if (argc - optind != 2)
		return tool_usage_error(&spi_transfer_command, "expected DEV HEXBYTES");
	snprintf(what, sizeof(what), "spi transfer %s", argv[optind]);
	if (values.speed && (tool_parse_unsigned(values.speed, UINT32_MAX, &speed) < 0 || !speed)) {
		tool_error("%s: --speed: not a speed in Hz: '%s'", what, values.speed);
		return TOOL_EXIT_FAILURE;
	}
	if (values.mode && tool_parse_unsigned(values.mode, 3, &mode) < 0) {
		tool_error("%s: --mode: not a mode 0-3: '%s'", what, values.mode);
		return TOOL_EXIT_FAILURE;
	}
	if (values.bits && (tool_parse_unsigned(values.bits, 32, &bits) < 0 || !bits)) {
		tool_error("%s: --bits: not a number of bits 1-32: '%s'", what, values.bits);
		return TOOL_EXIT_FAILURE;
	}
	if (spi_parse_hex(argv[optind + 1], &data, &length) < 0) {
		tool_error("%s: not hex bytes: '%s' (two hex digits per byte, e.g. 0a0b0c)", what,
			   argv[optind + 1]);
		return TOOL_EXIT_FAILURE;
	}
	status = spi_open(what, argv[optind], &spi);
	if (status) {
		free(data);
		return status;
	}
	r = 0;
	if (values.mode) {
		r = pbus_spi_get_mode(spi, &old_mode);
		if (r == 0)
			r = pbus_spi_set_mode(spi, (old_mode & ~3u) | (uint32_t)mode);
	}
	if (r == 0) {
		memset(&transfer, 0, sizeof(transfer));
		transfer.tx = data;
		transfer.rx = data;
		transfer.length = (uint32_t)length;
		transfer.speed_hz = (uint32_t)speed;
		transfer.bits_per_word = (uint8_t)bits;
		r = pbus_spi_transfer_message(spi, &transfer, 1);
		if (values.mode)
			pbus_spi_set_mode(spi, old_mode);
	}
	pbus_spi_close(spi);
	if (r < 0) {
		free(data);
		return spi_fail(what, r);
	}
	for (size_t i = 0; i < length; i++)
		printf("%02x", data[i]);
	printf("\n");
	free(data);
	return TOOL_EXIT_OK;
}

static int spi_run(struct tool_context *context, int argc, char **argv)
{
	static const struct tool_subcommand subs[] = {
		{"info", spi_info},
		{"transfer", spi_transfer},
	};

	return tool_run_subcommand(context, &tool_command_spi, subs, sizeof(subs) / sizeof(subs[0]),
				   argc, argv);
}
