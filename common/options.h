/* SPDX-License-Identifier: MIT */
/*
 * options.h: the command-line options every parambus daemon shares
 * (pbusd, pbus-hwd, pbus-scpi, pbus-web): -l/--log-level, -h/--help and
 * -V/--version, and the check of a numeric option. Errors are one line on
 * stderr, "PROGRAM: --OPTION 'TEXT': ...", PROGRAM being the log's program
 * name (log_set_program(), set first). Called from main() only, before any
 * thread starts.
 */
#ifndef PBUS_COMMON_OPTIONS_H
#define PBUS_COMMON_OPTIONS_H

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

#endif
