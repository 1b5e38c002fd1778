/* SPDX-License-Identifier: MIT */
/*
 * options.h: the command-line options every parambus daemon shares
 * (pbusd, pbus-hwd, pbus-scpi, pbus-web, pbus-bridge): -l/--log-level, -h/--help and
 * -V/--version, the check of a numeric option, and a listening address. Errors are one line on
 * stderr, "PROGRAM: --OPTION 'TEXT': ...", PROGRAM being the log's program
 * name (log_set_program(), set first). Called from main() only, before any
 * thread starts.
 */
#ifndef PBUS_COMMON_OPTIONS_H
#define PBUS_COMMON_OPTIONS_H

#include <stddef.h>

/* options_common()'s answer when the option was taken and parsing goes on. */
#define OPTIONS_CONTINUE (-1)

/* The getopt_long() characters options_common() handles; the daemons'
 * option strings and long-option tables name them ("l:hV"). */
#define OPTIONS_COMMON_SHORT "l:hV"
#define OPTIONS_COMMON_LONG                                    \
	{"log-level", required_argument, NULL, 'l'},           \
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}

/*
 * Handles @opt if it is one of the shared options: 'l' sets the log level
 * from @arg, 'h' prints @usage on stdout, 'V' prints "PROGRAM X.Y.Z".
 * Any other @opt (getopt's '?', after its own message) prints "Try
 * 'PROGRAM --help'." on stderr.
 * Returns OPTIONS_CONTINUE after a valid --log-level, else the exit status
 * main() returns at once: 0 after --help and --version, 2 on a bad level or
 * an unknown option.
 */
int options_common(int opt, const char *arg, const char *usage);

/*
 * Parses @text as a decimal number from @min to @max into *ret. Returns 0,
 * or -1 after printing "PROGRAM: --NAME 'TEXT': use a number from MIN to
 * MAX" (a sign, spaces, another base or an overflow are refused).
 */
int options_count(const char *name, const char *text, unsigned long min, unsigned long max,
		  unsigned long *ret);

/*
 * Splits @text, "ADDRESS:PORT" or "[IPV6-ADDRESS]:PORT" (a --listen), into
 * @host (the address without brackets, NUL-terminated, at most @size - 1
 * bytes) and *port (0 … 65535). Returns 0, or -1 (nothing printed: the
 * caller names its option and its format) for a missing or empty address,
 * an unpaired bracket, an address too long, or a port that is not a decimal
 * number in range. The address itself is the caller's to check.
 */
int options_listen(const char *text, char *host, size_t size, unsigned *port);

#endif
