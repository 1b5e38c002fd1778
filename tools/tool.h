/* SPDX-License-Identifier: MIT */
/*
 * tool.h: what the subcommands of pbus share: the exit codes, the one-line
 * error messages, opening the instance named by -i / $PBUS_INSTANCE, value
 * text and JSON output, connecting to pbusd's socket. Each subcommand family
 * lives in its own file (list.c, get-set.c, watch.c, dump.c, stat.c);
 * main.c dispatches. get, set and watch take their values from a source,
 * the table or pbusd (source.h).
 *
 * The tool is single-threaded; nothing here is meant to be thread-safe.
 */
#ifndef PBUS_TOOL_H
#define PBUS_TOOL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <parambus/client.h>
#include <parambus/parambus.h>

#include "../common/describe.h"

/* Exit statuses (documented in docs/cli.md). */
enum tool_exit {
	TOOL_EXIT_OK = 0,
	TOOL_EXIT_FAILURE = 1,     /* bad value, refusal, any runtime error */
	TOOL_EXIT_USAGE = 2,       /* bad command line */
	TOOL_EXIT_NO_INSTANCE = 3, /* the instance does not exist or pbusd is gone */
	/* 4: call and listen, no such method or broadcast (call.c) */
	TOOL_EXIT_TIMEOUT = 5      /* a -w SECONDS (or a built-in wait) ran out */
};

/* What main() found before the subcommand. */
struct tool_context {
	const char *instance; /* -i NAME, else $PBUS_INSTANCE, else NULL */
};

/* One subcommand. @run gets argv with argv[0] = the command's name and
 * returns an exit status. */
struct tool_command {
	const char *name;
	const char *summary; /* one line for `pbus --help` */
	const char *help;    /* the full text of `pbus NAME --help` */
	int (*run)(struct tool_context *context, int argc, char **argv);
};

extern const struct tool_command tool_command_list;
extern const struct tool_command tool_command_get;
extern const struct tool_command tool_command_set;
extern const struct tool_command tool_command_watch;
extern const struct tool_command tool_command_dump;
extern const struct tool_command tool_command_info;
extern const struct tool_command tool_command_stat;
extern const struct tool_command tool_command_gpio;
extern const struct tool_command tool_command_i2c;
extern const struct tool_command tool_command_spi;
extern const struct tool_command tool_command_call;
extern const struct tool_command tool_command_listen;

/* The symbolic name of a negative errno ("ENXIO"), for hardware errors
 * whose code the user will look up; "error" if unknown. */
const char *tool_errno_name(int negative_errno);

/* "pbus: <message>\n" on stderr, always one line. */
void tool_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Print the command's help on stdout. */
void tool_print_help(const struct tool_command *command);

/* Print "pbus: <command>: <message>" and a hint to use --help; returns
 * TOOL_EXIT_USAGE. */
int tool_usage_error(const struct tool_command *command, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Report the getopt_long error @option (':' missing argument, '?' unknown
 * option) of @command (NULL: the global options) and return
 * TOOL_EXIT_USAGE. Option strings must start with ':'. */
int tool_option_error(const struct tool_command *command, int option, char **argv);

/* getopt_long entries for the common options; put them in every table. */
#define TOOL_COMMON_LONG_OPTIONS                                 \
	{"instance", required_argument, NULL, 'i'},              \
	{"help", no_argument, NULL, 'h'}
#define TOOL_COMMON_SHORT_OPTIONS "i:h"

/*
 * getopt_long() for a subcommand, so that each one handles only its own
 * options: returns the next of them (its argument in optarg), or 0 when
 * there is none left. The options every subcommand accepts are handled
 * here: -i/--instance sets @context->instance, -h/--help prints
 * @command's help. At 0, *ret_status is -1 if the command goes on (optind
 * indexes its first argument), else the status to exit with now:
 * TOOL_EXIT_OK after the help, TOOL_EXIT_USAGE after an unknown option or
 * a missing argument (reported by tool_option_error()). @short_options is
 * ":" TOOL_COMMON_SHORT_OPTIONS followed by the command's own;
 * @long_options holds TOOL_COMMON_LONG_OPTIONS.
 */
int tool_next_option(struct tool_context *context, const struct tool_command *command, int argc,
		     char **argv, const char *short_options, const struct option *long_options,
		     int *ret_status);

/* A command of a family (`pbus gpio detect`): its name after the family's. */
struct tool_subcommand {
	const char *name;
	int (*run)(struct tool_context *context, int argc, char **argv);
};

/*
 * The run of a family of commands (`pbus gpio COMMAND`): runs the one of
 * @subcommands named by argv[1], with argv from there, or prints @family's
 * help for -h/--help; a missing or unknown name is a usage error. Returns
 * the exit status.
 */
int tool_run_subcommand(struct tool_context *context, const struct tool_command *family,
			const struct tool_subcommand *subcommands, size_t count, int argc,
			char **argv);

/*
 * Open the instance of @context with @flags. On failure, print one line
 * ("instance 'nope' not found (is pbusd running?)") and return the exit
 * status to use; on success return TOOL_EXIT_OK and fill *ret_table.
 */
int tool_open(const struct tool_context *context, unsigned flags, struct pbus_table **ret_table);

/*
 * Connect to the instance's pbusd over its socket (docs/socket-protocol.md)
 * with a per-request timeout of @timeout_ms (0: the library's). On failure,
 * print one line and return the exit status: when there is no socket to
 * talk to, the line says why — the instance does not exist, pbusd is not
 * running (orphaned, closed), or pbusd runs without a socket, followed by
 * @no_socket_hint if not NULL ("'pbus set --direct' writes the segment
 * itself"); a socket served by an untrusted user is named with that uid.
 */
int tool_connect(const struct tool_context *context, unsigned timeout_ms,
		 const char *no_socket_hint, struct pbus_client **ret_client);

/* Exit status for a negative errno from opening or using an instance. */
int tool_exit_status(int negative_errno);

/* --- Values -------------------------------------------------------------- */

/* A value read from the table (or received from pbusd, source.h), with its
 * sample; @data is malloc'd (free it with tool_value_clear()) and holds
 * value_size bytes at most. */
struct tool_value {
	unsigned char *data;
	struct pbus_sample sample;
	int status; /* enum pbus_status, or -errno of the read */
};

int tool_value_read(const struct pbus_param *param, struct tool_value *ret_value);
void tool_value_clear(struct tool_value *value);

/* A value of parameter @index of @view (a table's or a client's) as text
 * (pbus_view_format), malloc'd; NULL only when out of memory. */
char *tool_value_text(const struct pbus_view *view, uint32_t index, const void *data,
		      size_t length);

/* "ro,persistent" or "-". */
void tool_flags_text(unsigned flags, char *buf, size_t size);

/* Write @text with control characters escaped (\n, \t, \xNN), so that it
 * stays on one line. */
void tool_print_escaped(FILE *out, const char *text);

/* ISO 8601 UTC time of @ns since the epoch, with milliseconds. */
void tool_time_text(uint64_t ns, char *buf, size_t size);

/* --- JSON ---------------------------------------------------------------- */

/* A JSON string literal of @text (UTF-8; invalid bytes become U+FFFD). */
void tool_json_string(FILE *out, const char *text, size_t length);

/* A value of parameter @index of @view as a JSON value: a number,
 * true/false, a string (string, bytes in hex, enum label), an array of
 * those, or null for NaN/infinity. */
void tool_json_value(FILE *out, const struct pbus_view *view, uint32_t index, const void *data,
		     size_t length);

/* The same, enumerators as numbers if @numeric_enums (pbus ... -n). */
void tool_json_value_numeric(FILE *out, const struct pbus_view *view, uint32_t index,
			     const void *data, size_t length, bool numeric_enums);

/* --- Misc ---------------------------------------------------------------- */

/* The instance state as a word: "live", "closed", "replaced", "orphaned". */
const char *tool_state_name(int state);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in ns; a sleep that a signal cuts
 * short. */
int64_t tool_monotonic_ns(void);
uint64_t tool_realtime_ns(void);
void tool_sleep_ms(unsigned ms);

/* The end of every --help: "See pbus(1)" and the command's own man page
 * (help2man makes one page per command from these texts). */
#define TOOL_HELP_SEE(page) "\nSee pbus(1) and " page ".\n"

/* The options of the hardware commands (gpio, i2c, spi) that every one of
 * them has, in their --help. */
#define TOOL_HELP_HW_COMMON_OPTIONS                               \
	"  -i, --instance NAME  ignored (no instance needed)\n" \
	"  -h, --help           show this help\n"

/* Parse a non-negative decimal integer argument; -EINVAL if malformed. */
int tool_parse_unsigned(const char *text, unsigned long long max, unsigned long long *ret);

/* The same, also accepting hex with a 0x prefix (addresses, registers). */
int tool_parse_hex_or_decimal(const char *text, unsigned long long max, unsigned long long *ret);

#endif
