/* SPDX-License-Identifier: MIT */
/*
 * i2c.c: `pbus i2c`, I2C bring-up through libparambus-hw (i2c-dev): detect,
 * get, set, funcs. No instance is needed; -i is accepted and ignored.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <parambus/hw/i2c.h>

#include "hw-parse.h"
#include "tool.h"

static int i2c_run(struct tool_context *context, int argc, char **argv);

const struct tool_command tool_command_i2c = {
	.name = "i2c",
	.summary = "I2C buses: detect, get, set, dump, transfer, funcs",
	.help = "Usage: pbus [-i NAME] i2c COMMAND [ARGS...]\n"
		"\n"
		"I2C bring-up through i2c-dev (no instance needed).\n"
		"\n"
		"Commands:\n"
		"  detect [-y] BUS                scan the addresses 0x03-0x77\n"
		"  get BUS ADDR REG [--word]      read a register (SMBus byte/word data)\n"
		"  set BUS ADDR REG VALUE [--word]  write a register\n"
		"  dump BUS ADDR [-r FIRST-LAST] [--word]  a table of the registers\n"
		"  transfer BUS MSG...            plain I2C messages in one transaction\n"
		"  funcs BUS                      the adapter's functionality (I2C_FUNCS)\n"
		"\n"
		"BUS: a number (1 for /dev/i2c-1) or a path. ADDR, REG, VALUE: hex (0x50)\n"
		"or decimal. ADDR is 0x03-0x77, REG 0x00-0xff, VALUE 0x00-0xff\n"
		"(0x0000-0xffff with --word).\n"
		"Run 'pbus i2c COMMAND --help' for a command's options.\n"
		"\n"
		"Options:\n"
		TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c detect -y 1\n"
		"  pbus i2c dump 1 0x50 -r 0x00-0x3f\n"
		"  pbus i2c transfer 1 w1@0x50 0x00 r8\n"
		TOOL_HELP_SEE("pbus-i2c(1)"),
	.run = i2c_run,
};


static const struct tool_command i2c_detect_command = {
	.name = "i2c detect",
	.help = "Usage: pbus [-i NAME] i2c detect [-y] BUS\n"
		"\n"
		"Probe the addresses 0x03-0x77 like i2cdetect: SMBus read byte for\n"
		"0x30-0x37 and 0x50-0x5f (where a write could harm an EEPROM) and\n"
		"when the adapter has no quick command, SMBus quick write elsewhere.\n"
		"Prints a grid: the address where a device answered, '--' where none\n"
		"did, 'UU' where a kernel driver owns the address (not probed).\n"
		"\n"
		"Probing can disturb some devices, so it asks 'probe bus ...? [y/N]'\n"
		"first when stdin is a terminal; otherwise it needs -y.\n"
		"\n"
		"Options:\n"
		"  -y, --yes            probe without asking\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c detect 1\n"
		"  pbus i2c detect -y /dev/i2c-1\n"
		TOOL_HELP_SEE("pbus-i2c-detect(1)"),
};

static const struct tool_command i2c_get_command = {
	.name = "i2c get",
	.help = "Usage: pbus [-i NAME] i2c get BUS ADDR REG [--word]\n"
		"\n"
		"Read register REG of the device at ADDR with SMBus read byte data\n"
		"(read word data with --word, low byte first on the wire) and print\n"
		"the value in hex (0x2a, or 0x1234 with --word).\n"
		"\n"
		"Options:\n"
		"      --word           read a 16-bit word\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c get 1 0x48 0x00\n"
		"  pbus i2c get 1 0x48 0x02 --word\n"
		TOOL_HELP_SEE("pbus-i2c-get(1)"),
};

static const struct tool_command i2c_set_command = {
	.name = "i2c set",
	.help = "Usage: pbus [-i NAME] i2c set BUS ADDR REG VALUE [--word]\n"
		"\n"
		"Write VALUE to register REG of the device at ADDR with SMBus write\n"
		"byte data (write word data with --word, low byte first). Prints\n"
		"nothing on success.\n"
		"\n"
		"Options:\n"
		"      --word           write a 16-bit word\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c set 1 0x48 0x01 0x60\n"
		"  pbus i2c set 1 0x48 0x02 0x1234 --word\n"
		TOOL_HELP_SEE("pbus-i2c-set(1)"),
};

static const struct tool_command i2c_dump_command = {
	.name = "i2c dump",
	.help = "Usage: pbus [-i NAME] i2c dump BUS ADDR [-r FIRST-LAST] [--word]\n"
		"\n"
		"Read the registers of the device at ADDR one by one with SMBus read\n"
		"byte data and print them like i2cdump: 16 a row in hex, then as text\n"
		"('.' for 0x00 and 0xff, '?' for other bytes that are not printable).\n"
		"With --word, SMBus read word data at each register, 8 a row. A\n"
		"register that cannot be read shows XX (XXXX); registers outside the\n"
		"range are left blank.\n"
		"\n"
		"Options:\n"
		"  -r, --range FIRST-LAST  only the registers FIRST to LAST (hex or\n"
		"                       decimal, 0x00-0xff; default all)\n"
		"      --word           16-bit words\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c dump 1 0x50\n"
		"  pbus i2c dump 1 0x48 -r 0x10-0x1f --word\n"
		TOOL_HELP_SEE("pbus-i2c-dump(1)"),
};

static const struct tool_command i2c_transfer_command = {
	.name = "i2c transfer",
	.help = "Usage: pbus [-i NAME] i2c transfer BUS MSG...\n"
		"\n"
		"Send plain I2C messages as one transaction (I2C_RDWR: a repeated\n"
		"start between them, a stop at the end), as i2ctransfer does. A\n"
		"message is {r|w}LENGTH[@ADDR]; a write is followed by its LENGTH\n"
		"bytes. A message without @ADDR goes to the address of the one before.\n"
		"A byte may end in '=' (the rest of the message repeats it), '+' (the\n"
		"rest counts up from it) or '-' (counts down). Each read message is\n"
		"printed as one line of bytes (0x12 0x34 ...).\n"
		"\n"
		"Options:\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c transfer 1 w2@0x50 0x00 0x10 r4\n"
		"  pbus i2c transfer 1 w9@0x50 0x00 0x00+\n"
		"  pbus i2c transfer 1 w1@0x48 0x10 r2@0x48\n"
		TOOL_HELP_SEE("pbus-i2c-transfer(1)"),
};

static const struct tool_command i2c_funcs_command = {
	.name = "i2c funcs",
	.help = "Usage: pbus [-i NAME] i2c funcs BUS\n"
		"\n"
		"Print the adapter's I2C_FUNCS mask, then one line per functionality\n"
		"with yes or no, like i2cdetect -F.\n"
		"\n"
		"Options:\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus i2c funcs 1\n"
		"  pbus i2c funcs /dev/i2c-1\n"
		TOOL_HELP_SEE("pbus-i2c-funcs(1)"),
};

/* The i2c commands' own options; each command allows some (I2C_OPTION_*). */
enum {
	I2C_OPTION_WORD = 1u << 0,
	I2C_OPTION_YES = 1u << 1,
	I2C_OPTION_RANGE = 1u << 2,
};

struct i2c_options {
	bool word;
	bool yes;
	const char *range;
};

/* Parse the options; one that another i2c command has is refused as not
 * applying here. Returns -1 to go on, else an exit status. */
static int i2c_parse_options(struct tool_context *context, const struct tool_command *command,
			     unsigned allowed, struct i2c_options *o, int argc, char **argv)
{
	static const struct option options[] = {
		{"word", no_argument, NULL, 'W'},
		{"yes", no_argument, NULL, 'y'},
		{"range", required_argument, NULL, 'r'},
		TOOL_COMMON_LONG_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	static const struct {
		int letter;
		unsigned bit;
		const char *name, *applies;
	} names[] = {
		{'W', I2C_OPTION_WORD, "--word", "i2c get, set and dump"},
		{'y', I2C_OPTION_YES, "--yes", "i2c detect"},
		{'r', I2C_OPTION_RANGE, "--range", "i2c dump"},
	};
	int option, status;

	memset(o, 0, sizeof(*o));
	while ((option = tool_next_option(context, command, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "yr:", options, &status))) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (names[i].letter == option && !(allowed & names[i].bit))
				return tool_usage_error(command, "%s applies only to %s",
							names[i].name, names[i].applies);
		if (option == 'W')
			o->word = true;
		else if (option == 'y')
			o->yes = true;
		else if (option == 'r')
			o->range = optarg;
	}
	return status;
}

/* Open BUS (a number or a path); print the error and return the status. */
static int i2c_open(const char *what, const char *bus, struct pbus_i2c **ret_i2c)
{
	char path[64];
	unsigned long long number;
	int r;

	if (bus[0] >= '0' && bus[0] <= '9') {
		if (tool_parse_hex_or_decimal(bus, 0xfffff, &number) < 0) {
			tool_error("%s: not a bus number or path: '%s'", what, bus);
			return TOOL_EXIT_FAILURE;
		}
		snprintf(path, sizeof(path), "/dev/i2c-%llu", number);
		bus = path;
	}
	r = pbus_i2c_open(bus, ret_i2c);
	if (r == -ENOENT) {
		tool_error("%s: no bus %s (is i2c-dev loaded?)", what, bus);
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r == -ENOTTY) {
		tool_error("%s: %s is not an i2c-dev node", what, bus);
		return TOOL_EXIT_FAILURE;
	}
	if (r < 0) {
		tool_error("%s: %s: %s (%s)", what, bus, pbus_hw_strerror(r), tool_errno_name(r));
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

static bool i2c_absent(int r)
{
	return r == -ENXIO || r == -ENODEV || r == -EREMOTEIO;
}

/* ---- detect ------------------------------------------------------------- */

/* Ask "probe bus BUS? [y/N]" on a terminal; refuse without one. */
static int i2c_confirm(const char *what, const char *bus)
{
	char answer[64];

	if (!isatty(STDIN_FILENO)) {
		tool_error("%s: probing may disturb the devices on the bus; use -y to probe without "
			   "asking (stdin is not a terminal)", what);
		return TOOL_EXIT_USAGE;
	}
	fprintf(stderr, "probe bus %s? [y/N] ", bus);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin) ||
	    (strcasecmp(answer, "y\n") && strcasecmp(answer, "yes\n"))) {
		tool_error("%s: not probed", what);
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}

static int i2c_detect(struct tool_context *context, int argc, char **argv)
{
	struct i2c_options o;
	struct pbus_i2c *i2c;
	unsigned long funcs;
	char what[128];
	int status = i2c_parse_options(context, &i2c_detect_command, I2C_OPTION_YES, &o, argc, argv);
	int r;

	if (status >= 0)
		return status;
	if (argc - optind != 1)
		return tool_usage_error(&i2c_detect_command, argc == optind ? "no BUS given"
									  : "expected one BUS");
	snprintf(what, sizeof(what), "i2c detect %s", argv[optind]);
	status = i2c_open(what, argv[optind], &i2c);
	if (status)
		return status;
	r = pbus_i2c_get_functionality(i2c, &funcs);
	if (r < 0) {
		tool_error("%s: %s (%s)", what, pbus_hw_strerror(r), tool_errno_name(r));
		pbus_i2c_close(i2c);
		return TOOL_EXIT_FAILURE;
	}
	if (!(funcs & (PBUS_I2C_FUNC_SMBUS_QUICK | PBUS_I2C_FUNC_SMBUS_READ_BYTE))) {
		tool_error("%s: the adapter can do neither SMBus quick nor read byte", what);
		pbus_i2c_close(i2c);
		return TOOL_EXIT_FAILURE;
	}
	/* As i2cdetect: never probe a bus unasked. */
	if (!o.yes && (status = i2c_confirm(what, argv[optind])) != TOOL_EXIT_OK) {
		pbus_i2c_close(i2c);
		return status;
	}
	printf("     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n");
	for (unsigned row = 0; row < 0x80; row += 16) {
		printf("%02x:", row);
		for (unsigned address = row; address < row + 16; address++) {
			bool read_byte;

			if (address < 0x03 || address > 0x77) {
				printf("   ");
				continue;
			}
			r = pbus_i2c_set_address(i2c, (uint16_t)address, 0);
			if (r == -EBUSY) {
				printf(" UU");
				continue;
			}
			if (r < 0) {
				printf(" --");
				continue;
			}
			read_byte = ((address >= 0x30 && address <= 0x37) ||
				     (address >= 0x50 && address <= 0x5f) ||
				     !(funcs & PBUS_I2C_FUNC_SMBUS_QUICK)) &&
				    (funcs & PBUS_I2C_FUNC_SMBUS_READ_BYTE);
			r = read_byte ? pbus_i2c_smbus_read_byte(i2c) : pbus_i2c_smbus_quick(i2c, 0);
			if (r >= 0)
				printf(" %02x", address);
			else
				printf(" --");
		}
		printf("\n");
	}
	pbus_i2c_close(i2c);
	return TOOL_EXIT_OK;
}

/* ---- get / set ---------------------------------------------------------- */

static int i2c_get_set(struct tool_context *context, int argc, char **argv, bool set)
{
	const struct tool_command *command = set ? &i2c_set_command : &i2c_get_command;
	unsigned long long address, reg, value = 0;
	struct i2c_options o;
	struct pbus_i2c *i2c;
	char what[256];
	int status = i2c_parse_options(context, command, I2C_OPTION_WORD, &o, argc, argv);
	bool word = o.word;
	int nargs, r;
	char **args;

	if (status >= 0)
		return status;
	nargs = argc - optind;
	args = argv + optind;
	if (nargs != (set ? 4 : 3))
		return tool_usage_error(command, set ? "expected BUS ADDR REG VALUE" : "expected BUS ADDR REG");
	snprintf(what, sizeof(what), "%s %s %s %s%s%s", command->name, args[0], args[1], args[2],
		 set ? " " : "", set ? args[3] : "");
	if (tool_parse_hex_or_decimal(args[1], ~0UL, &address) < 0) {
		tool_error("%s: not an address: '%s' (hex 0x.. or decimal)", what, args[1]);
		return TOOL_EXIT_FAILURE;
	}
	if (address < 0x03 || address > 0x77) {
		tool_error("%s: address %s out of range (0x03-0x77)", what, args[1]);
		return TOOL_EXIT_FAILURE;
	}
	if (tool_parse_hex_or_decimal(args[2], 0xff, &reg) < 0) {
		tool_error("%s: not a register 0x00-0xff: '%s'", what, args[2]);
		return TOOL_EXIT_FAILURE;
	}
	if (set && tool_parse_hex_or_decimal(args[3], word ? 0xffff : 0xff, &value) < 0) {
		tool_error("%s: not a value %s: '%s'", what, word ? "0x0000-0xffff" : "0x00-0xff",
			   args[3]);
		return TOOL_EXIT_FAILURE;
	}
	status = i2c_open(what, args[0], &i2c);
	if (status)
		return status;
	r = pbus_i2c_set_address(i2c, (uint16_t)address, 0);
	if (r == 0) {
		if (set && word)
			r = pbus_i2c_smbus_write_word_data(i2c, (uint8_t)reg, (uint16_t)value);
		else if (set)
			r = pbus_i2c_smbus_write_byte_data(i2c, (uint8_t)reg, (uint8_t)value);
		else if (word)
			r = pbus_i2c_smbus_read_word_data(i2c, (uint8_t)reg);
		else
			r = pbus_i2c_smbus_read_byte_data(i2c, (uint8_t)reg);
	} else if (r == -EBUSY) {
		tool_error("%s: address 0x%02llx is in use by a kernel driver (EBUSY)", what, address);
		pbus_i2c_close(i2c);
		return TOOL_EXIT_FAILURE;
	}
	pbus_i2c_close(i2c);
	if (i2c_absent(r)) {
		tool_error("%s: no device at address 0x%02llx (%s)", what, address, tool_errno_name(r));
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r < 0) {
		tool_error("%s: %s (%s)", what, pbus_hw_strerror(r), tool_errno_name(r));
		return TOOL_EXIT_FAILURE;
	}
	if (!set)
		printf(word ? "0x%04x\n" : "0x%02x\n", r);
	return TOOL_EXIT_OK;
}

static int i2c_get(struct tool_context *context, int argc, char **argv)
{
	return i2c_get_set(context, argc, argv, false);
}

static int i2c_set(struct tool_context *context, int argc, char **argv)
{
	return i2c_get_set(context, argc, argv, true);
}

/* An error of a transfer to @address as one line; the exit status. */
static int i2c_transfer_error(const char *what, unsigned address, int r)
{
	if (i2c_absent(r)) {
		tool_error("%s: no device at address 0x%02x (%s)", what, address, tool_errno_name(r));
		return TOOL_EXIT_NO_INSTANCE;
	}
	if (r == -EBUSY) {
		tool_error("%s: address 0x%02x is in use by a kernel driver (EBUSY)", what, address);
		return TOOL_EXIT_FAILURE;
	}
	tool_error("%s: %s (%s)", what, pbus_hw_strerror(r), tool_errno_name(r));
	return TOOL_EXIT_FAILURE;
}

/* ---- dump --------------------------------------------------------------- */

static char i2c_dump_char(int value)
{
	if (value < 0)
		return 'X';
	if (value == 0x00 || value == 0xff)
		return '.';
	if (value < 0x20 || value >= 0x7f)
		return '?';
	return (char)value;
}

static int i2c_dump(struct tool_context *context, int argc, char **argv)
{
	unsigned long long first = 0x00, last = 0xff;
	unsigned address;
	struct i2c_options o;
	struct pbus_i2c *i2c;
	char what[256];
	int status = i2c_parse_options(context, &i2c_dump_command, I2C_OPTION_WORD | I2C_OPTION_RANGE,
				       &o, argc, argv);
	int values[256], r;

	if (status >= 0)
		return status;
	if (argc - optind != 2)
		return tool_usage_error(&i2c_dump_command, "expected BUS ADDR");
	snprintf(what, sizeof(what), "i2c dump %s %s", argv[optind], argv[optind + 1]);
	if (o.range) {
		char text[64], *dash;

		snprintf(text, sizeof(text), "%s", o.range);
		dash = strchr(text, '-');
		if (dash)
			*dash = 0;
		if (!dash || tool_parse_hex_or_decimal(text, 0xff, &first) < 0 ||
		    tool_parse_hex_or_decimal(dash + 1, 0xff, &last) < 0 || first > last) {
			tool_error("%s: -r: not a range FIRST-LAST of registers 0x00-0xff: '%s'", what,
				   o.range);
			return TOOL_EXIT_FAILURE;
		}
	}
	if (tool_i2c_parse_address(what, argv[optind + 1], &address) < 0)
		return TOOL_EXIT_FAILURE;
	status = i2c_open(what, argv[optind], &i2c);
	if (status)
		return status;
	r = pbus_i2c_set_address(i2c, (uint16_t)address, 0);
	/* Read everything first: a device that is not there is one error,
	 * not a table of XX. */
	for (unsigned reg = 0; reg < 256 && r >= 0; reg++) {
		values[reg] = -1;
		if (reg < first || reg > last)
			continue;
		values[reg] = o.word ? pbus_i2c_smbus_read_word_data(i2c, (uint8_t)reg)
				     : pbus_i2c_smbus_read_byte_data(i2c, (uint8_t)reg);
		if (reg == first && values[reg] < 0)
			r = values[reg];
	}
	pbus_i2c_close(i2c);
	if (r < 0)
		return i2c_transfer_error(what, address, r);
	if (o.word) {
		printf("     0,8  1,9  2,a  3,b  4,c  5,d  6,e  7,f\n");
		for (unsigned row = first & ~7u; row <= last; row += 8) {
			printf("%02x: ", row);
			for (unsigned reg = row; reg < row + 8; reg++) {
				if (reg < first || reg > last)
					printf("     ");
				else if (values[reg] < 0)
					printf("XXXX ");
				else
					printf("%04x ", values[reg]);
			}
			printf("\n");
		}
		return TOOL_EXIT_OK;
	}
	printf("     0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f    0123456789abcdef\n");
	for (unsigned row = first & ~15u; row <= last; row += 16) {
		printf("%02x: ", row);
		for (unsigned reg = row; reg < row + 16; reg++) {
			if (reg < first || reg > last)
				printf("   ");
			else if (values[reg] < 0)
				printf("XX ");
			else
				printf("%02x ", values[reg]);
		}
		printf("   ");
		for (unsigned reg = row; reg < row + 16; reg++)
			putchar(reg < first || reg > last ? ' ' : i2c_dump_char(values[reg]));
		printf("\n");
	}
	return TOOL_EXIT_OK;
}

/* ---- transfer ----------------------------------------------------------- */

static int i2c_transfer(struct tool_context *context, int argc, char **argv)
{
	struct pbus_i2c_message messages[TOOL_I2C_MESSAGES_MAX];
	struct i2c_options o;
	struct pbus_i2c *i2c = NULL;
	size_t count = 0;
	char what[256];
	int status = i2c_parse_options(context, &i2c_transfer_command, 0, &o, argc, argv);
	int r;

	if (status >= 0)
		return status;
	if (argc - optind < 2)
		return tool_usage_error(&i2c_transfer_command, "expected BUS MSG...");
	snprintf(what, sizeof(what), "i2c transfer %s", argv[optind]);
	memset(messages, 0, sizeof(messages));
	status = tool_i2c_parse_messages(what, argc - optind - 1, argv + optind + 1, messages, &count);
	if (status < 0)
		status = i2c_open(what, argv[optind], &i2c);
	if (status == TOOL_EXIT_OK) {
		r = pbus_i2c_transfer(i2c, messages, count);
		if (r == -EOPNOTSUPP) {
			tool_error("%s: the adapter has no plain I2C transfers (I2C_RDWR; SMBus only)",
				   what);
			status = TOOL_EXIT_FAILURE;
		} else if (r < 0) {
			status = i2c_transfer_error(what, messages[0].address, r);
		}
		for (size_t i = 0; i < count && status == TOOL_EXIT_OK; i++) {
			if (!(messages[i].flags & PBUS_I2C_MESSAGE_READ))
				continue;
			for (size_t k = 0; k < messages[i].length; k++)
				printf("%s0x%02x", k ? " " : "", messages[i].buffer[k]);
			printf("\n");
		}
	}
	pbus_i2c_close(i2c);
	for (size_t i = 0; i < count; i++)
		free(messages[i].buffer);
	return status;
}

/* ---- funcs -------------------------------------------------------------- */

static int i2c_funcs(struct tool_context *context, int argc, char **argv)
{
	static const struct {
		unsigned long bit;
		const char *name;
	} names[] = {
		{PBUS_I2C_FUNC_I2C, "I2C"},
		{PBUS_I2C_FUNC_10BIT_ADDR, "10-bit addresses"},
		{PBUS_I2C_FUNC_PROTOCOL_MANGLING, "protocol mangling"},
		{PBUS_I2C_FUNC_NOSTART, "no-start"},
		{PBUS_I2C_FUNC_SMBUS_PEC, "SMBus PEC"},
		{PBUS_I2C_FUNC_SMBUS_QUICK, "SMBus quick command"},
		{PBUS_I2C_FUNC_SMBUS_READ_BYTE, "SMBus receive byte"},
		{PBUS_I2C_FUNC_SMBUS_WRITE_BYTE, "SMBus send byte"},
		{PBUS_I2C_FUNC_SMBUS_READ_BYTE_DATA, "SMBus read byte"},
		{PBUS_I2C_FUNC_SMBUS_WRITE_BYTE_DATA, "SMBus write byte"},
		{PBUS_I2C_FUNC_SMBUS_READ_WORD_DATA, "SMBus read word"},
		{PBUS_I2C_FUNC_SMBUS_WRITE_WORD_DATA, "SMBus write word"},
		{PBUS_I2C_FUNC_SMBUS_PROC_CALL, "SMBus process call"},
		{PBUS_I2C_FUNC_SMBUS_BLOCK_PROC_CALL, "SMBus block process call"},
		{PBUS_I2C_FUNC_SMBUS_READ_BLOCK_DATA, "SMBus block read"},
		{PBUS_I2C_FUNC_SMBUS_WRITE_BLOCK_DATA, "SMBus block write"},
		{PBUS_I2C_FUNC_SMBUS_READ_I2C_BLOCK, "I2C block read"},
		{PBUS_I2C_FUNC_SMBUS_WRITE_I2C_BLOCK, "I2C block write"},
		{PBUS_I2C_FUNC_SMBUS_HOST_NOTIFY, "SMBus host notify"},
	};
	struct i2c_options o;
	struct pbus_i2c *i2c;
	unsigned long funcs;
	char what[128];
	int status = i2c_parse_options(context, &i2c_funcs_command, 0, &o, argc, argv);
	int r;

	if (status >= 0)
		return status;
	if (argc - optind != 1)
		return tool_usage_error(&i2c_funcs_command, argc == optind ? "no BUS given"
									 : "expected one BUS");
	snprintf(what, sizeof(what), "i2c funcs %s", argv[optind]);
	status = i2c_open(what, argv[optind], &i2c);
	if (status)
		return status;
	r = pbus_i2c_get_functionality(i2c, &funcs);
	pbus_i2c_close(i2c);
	if (r < 0) {
		tool_error("%s: %s (%s)", what, pbus_hw_strerror(r), tool_errno_name(r));
		return TOOL_EXIT_FAILURE;
	}
	printf("functionality 0x%08lx\n", funcs);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("  %-26s %s\n", names[i].name, (funcs & names[i].bit) ? "yes" : "no");
	return TOOL_EXIT_OK;
}

/* ---- dispatch ----------------------------------------------------------- */

static int i2c_run(struct tool_context *context, int argc, char **argv)
{
	static const struct tool_subcommand subs[] = {
		{"detect", i2c_detect}, {"get", i2c_get},	    {"set", i2c_set},
		{"dump", i2c_dump},	{"transfer", i2c_transfer}, {"funcs", i2c_funcs},
	};

	return tool_run_subcommand(context, &tool_command_i2c, subs, sizeof(subs) / sizeof(subs[0]),
				   argc, argv);
}
