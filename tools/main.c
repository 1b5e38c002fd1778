/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbus, the command line of parambus. Parses the global options
 * (-i/--instance, --help, --version), then hands the rest of the command
 * line to one subcommand. The subcommands live one family per file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* The hardware bring-up commands (gpio.c, i2c.c, spi.c): no instance needed. */

static const struct tool_command *const commands[] = {
	&tool_command_list, &tool_command_get,  &tool_command_set,
	&tool_command_watch, &tool_command_dump, &tool_command_info,
	&tool_command_stat,  &tool_command_gpio, &tool_command_i2c,
	&tool_command_spi,   &tool_command_call, &tool_command_listen,
};
#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static void print_main_help(void)
{
	printf("Usage: pbus [-i|--instance NAME] COMMAND [ARGS...]\n"
	       "\n"
	       "Read, write and watch the parameters of a parambus instance.\n"
	       "\n"
	       "Options:\n"
	       "  -i, --instance NAME  the instance to use (default: $PBUS_INSTANCE)\n"
	       "  -h, --help           show this help\n"
	       "      --version        show the version\n"
	       "\n"
	       "Commands:\n");
	for (size_t i = 0; i < COMMAND_COUNT; i++)
		printf("  %-7s %s\n", commands[i]->name, commands[i]->summary);
	printf("  %-7s %s\n", "help", "show the help of a command");
	printf("\n"
	       "Run 'pbus COMMAND --help' or 'pbus help COMMAND' for a command's options.\n"
	       "Exit status: 0 success, 1 bad value or refused, 2 usage error,\n"
	       "3 instance or device not found, or pbusd gone, 4 no such method or\n"
	       "broadcast (call, listen), 5 timed out (-w SECONDS).\n"
	       "\n"
	       "Examples:\n"
	       "  pbus -i psu1 list\n"
	       "  pbus -i psu1 set voltage_setpoint=3.3\n"
	       "  pbus -i psu1 watch -t measured_voltage\n"
	       "\n"
	       "See pbus(1), and pbus-COMMAND(1) for each command (pbus-get(1) ...).\n");
}

static const struct tool_command *find_command(const char *name)
{
	for (size_t i = 0; i < COMMAND_COUNT; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static int run_help(int argc, char **argv)
{
	const struct tool_command *command;

	if (argc < 2) {
		print_main_help();
		return TOOL_EXIT_OK;
	}
	if (argc > 2) {
		tool_error("help: expected one command name");
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		printf("Usage: pbus help [COMMAND]\n\nShow the help of COMMAND, or of pbus.\n"
		       "\nExamples:\n  pbus help\n  pbus help get\n\nSee pbus(1).\n");
		return TOOL_EXIT_OK;
	}
	command = find_command(argv[1]);
	if (!command) {
		tool_error("unknown command '%s' (see 'pbus --help')", argv[1]);
		return TOOL_EXIT_USAGE;
	}
	tool_print_help(command);
	return TOOL_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"instance", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct tool_context context = {.instance = NULL};
	const struct tool_command *command;
	const char *env;
	int option;

	/* "+": stop at the command, whose options are its own. */
	opterr = 0;
	while ((option = getopt_long(argc, argv, "+:i:h", options, NULL)) != -1) {
		switch (option) {
		case 'i':
			context.instance = optarg;
			break;
		case 'h':
			print_main_help();
			return TOOL_EXIT_OK;
		case 'V':
			printf("pbus %d.%d.%d\n", PBUS_VERSION_MAJOR, PBUS_VERSION_MINOR,
			       PBUS_VERSION_PATCH);
			return TOOL_EXIT_OK;
		default:
			return tool_option_error(NULL, option, argv);
		}
	}
	if (!context.instance) {
		env = getenv("PBUS_INSTANCE");
		if (env && *env)
			context.instance = env;
	}
	if (optind >= argc) {
		tool_error("no command given (see 'pbus --help')");
		return TOOL_EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(argv[0], "help"))
		return run_help(argc, argv);
	command = find_command(argv[0]);
	if (!command) {
		tool_error("unknown command '%s' (see 'pbus --help')", argv[0]);
		return TOOL_EXIT_USAGE;
	}
	/* The command parses its own options from the start. */
	optind = 0;
	return command->run(&context, argc, argv);
}
