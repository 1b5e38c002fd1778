/* SPDX-License-Identifier: MIT */
/*
 * scpi.h: the SCPI parser library (static library scpi-parser), the part of
 * pbus-scpi that owns no socket and no pbusd connection.
 *
 * - A command tree (struct pbus_scpi_tree) is loaded from the text that
 *   `pbus-gen --scpi` writes (docs/scpi.md, "The tree file"); headers are
 *   looked up in a hash table of its edges, one probe per node.
 * - A parser (struct pbus_scpi_parser) turns one IEEE 488.2 program message
 *   into commands, each resolved to its parameter (and array element) or
 *   recognised as a common command, with typed arguments; or into the
 *   commands before the first error and that error's SCPI code.
 * - pbus_scpi_message_length() frames messages in a byte stream (a
 *   terminator inside a string or block data does not end a message).
 * - pbus_scpi_format_*() write responses in the IEEE 488.2 formats.
 *
 * Ownership: the tree and the parser are created by _load/_new and freed by
 * _free (which accept NULL). A parser borrows its tree, which must outlive
 * it. The results of pbus_scpi_parse() are the parser's, valid until its
 * next parse or its free; they point into the parsed message for character
 * data, and into the parser's scratch buffer for decoded strings.
 * Threads: a tree is read-only once loaded and may be shared by parsers in
 * any threads; one parser is used by one thread at a time.
 * Memory: the parser allocates at _new only, in proportion to its limits.
 */
#ifndef PBUS_SCPI_H
#define PBUS_SCPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PBUS_SCPI_MNEMONIC_MAX 12 /* SCPI-99 6.2.1, also character data */
#define PBUS_SCPI_NODES_MAX 12
#define PBUS_SCPI_TREE_VERSION 2

enum pbus_scpi_access {
	PBUS_SCPI_ACCESS_QUERY = 1,
	PBUS_SCPI_ACCESS_SET = 2,
	PBUS_SCPI_ACCESS_BOTH = 3,
};

/* What a parameter's values are, for the parser. */
enum pbus_scpi_kind {
	PBUS_SCPI_KIND_BOOL,
	PBUS_SCPI_KIND_INTEGER, /* int8 ... uint64, in [int_min, int_max] */
	PBUS_SCPI_KIND_REAL,    /* float, double */
	PBUS_SCPI_KIND_STRING,
	PBUS_SCPI_KIND_BYTES,
	PBUS_SCPI_KIND_ENUM,
	PBUS_SCPI_KIND_NONE,    /* an event command (`STATus:PRESet`): set-only, no value */
	PBUS_SCPI_KIND_METHOD,  /* a Franca method's command: param->method says what it takes */
};

struct pbus_scpi_mnemonic {
	int64_t value;
	char text[PBUS_SCPI_MNEMONIC_MAX + 1]; /* as written: "TRIPped" */
	uint8_t short_length;                  /* its upper-case head */
};

struct pbus_scpi_method;

/*
 * A parameter's command, or (kind METHOD) a method's: then @index is the
 * method's number on the wire, @name its schema name, @type "method",
 * @access QUERY or SET, and @method its arguments. A method's arguments
 * are described by pbus_scpi_param records too (what the parser needs to
 * type a value): @index is the argument's position, @name its name, @type
 * the wire type ("int64"/"uint64" for Franca Integer, whose bounds are in
 * int_min/int_max), never an array, no unit.
 */
struct pbus_scpi_param {
	uint32_t index;   /* in the compiled schema (a method: its number) */
	char name[128];   /* "limits.voltage" */
	char type[16];    /* schema token: "double", "uint8[]" */
	enum pbus_scpi_kind kind;
	bool is_array;
	uint32_t count;   /* array capacity, 0 for scalars */
	int64_t int_min, int_max; /* the type's range (INTEGER) */
	unsigned access;  /* enum pbus_scpi_access */
	char unit[8];     /* SCPI suffix unit ("V", "HZ"), "" when none */
	double unit_factor; /* value in base unit = value in parameter unit * factor */
	const struct pbus_scpi_mnemonic *mnemonics; /* ENUM */
	size_t mnemonic_count;
	const struct pbus_scpi_method *method;      /* METHOD, else NULL */
};

/* An enumerator of a method's error enumeration: value and Franca label. */
struct pbus_scpi_label {
	int64_t value;
	char text[64];
};

/* The tree's `method` record and the records after it (docs/scpi.md, "The
 * tree file"): a `set` command takes the in-arguments and discards the
 * reply; a `query` takes them and answers the out-arguments. */
struct pbus_scpi_method {
	uint32_t index;                       /* on the wire (docs/methods.md §3) */
	const struct pbus_scpi_param *in;     /* [in_count], in order */
	size_t in_count;
	const struct pbus_scpi_param *out;    /* [out_count] (none for a `set`) */
	size_t out_count;
	const struct pbus_scpi_label *errors; /* [error_count]: the error enumeration; the
					       * first enumerator is success */
	size_t error_count;
};

/* The status register a parameter drives a bit of (SCPI-99 chapter 9). */
enum pbus_scpi_register {
	PBUS_SCPI_REGISTER_QUESTIONABLE,
	PBUS_SCPI_REGISTER_OPERATION,
};

/* A `status` record: condition bit @bit of @reg is set while parameter
 * @index's alarm status is at least @min_status (1 minor, 2 major, 3
 * invalid), or, when @min_status is 0, while its value is not zero. */
struct pbus_scpi_status_source {
	enum pbus_scpi_register reg;
	unsigned bit;        /* 0..12 or 14 */
	uint32_t index;      /* in the compiled schema */
	unsigned min_status; /* enum pbus_status; 0: the value's truth */
};

struct pbus_scpi_tree;

/* Load a tree file's text (length bytes, not NUL-terminated). On failure
 * returns -EINVAL (or -ENOMEM) and writes a one-line reason naming the line
 * into error (error_size bytes, may be 0). */
int pbus_scpi_tree_load(const char *text, size_t length, struct pbus_scpi_tree **ret_tree,
			char *error, size_t error_size);
void pbus_scpi_tree_free(struct pbus_scpi_tree *tree);
/* The `schema` line: the compiled schema's hash, to compare with pbusd's. */
uint64_t pbus_scpi_tree_schema_hash(const struct pbus_scpi_tree *tree);
size_t pbus_scpi_tree_param_count(const struct pbus_scpi_tree *tree);
/* Borrowed, valid as long as the tree; NULL when i is out of range. */
const struct pbus_scpi_param *pbus_scpi_tree_param(const struct pbus_scpi_tree *tree, size_t i);
/* The method commands (each also a METHOD parameter). */
size_t pbus_scpi_tree_method_count(const struct pbus_scpi_tree *tree);
const struct pbus_scpi_method *pbus_scpi_tree_method(const struct pbus_scpi_tree *tree, size_t i);
size_t pbus_scpi_tree_status_count(const struct pbus_scpi_tree *tree);
/* Borrowed, valid as long as the tree; NULL when i is out of range. */
const struct pbus_scpi_status_source *pbus_scpi_tree_status(const struct pbus_scpi_tree *tree,
							    size_t i);

enum pbus_scpi_arg_kind {
	PBUS_SCPI_ARG_NUMBER,    /* number (in the parameter's unit), integer if is_integer */
	PBUS_SCPI_ARG_MIN,       /* MINimum: the parameter's limit */
	PBUS_SCPI_ARG_MAX,       /* MAXimum */
	PBUS_SCPI_ARG_DEF,       /* DEFault: the parameter's default */
	PBUS_SCPI_ARG_BOOL,      /* boolean */
	PBUS_SCPI_ARG_ENUM,      /* enum_value */
	PBUS_SCPI_ARG_STRING,    /* data/length: decoded (quotes undoubled) */
	PBUS_SCPI_ARG_BLOCK,     /* data/length: the bytes */
	PBUS_SCPI_ARG_CHARACTER, /* data/length: a mnemonic (common commands only) */
};

struct pbus_scpi_arg {
	enum pbus_scpi_arg_kind kind;
	double number;      /* NUMBER (INF, NINF, NAN included), BOOL as 0/1 */
	int64_t integer;    /* NUMBER when is_integer, ENUM value, BOOL as 0/1 */
	bool is_integer;
	bool boolean;
	const char *data;
	size_t length;
};

struct pbus_scpi_command {
	bool query;
	bool common;                        /* an IEEE 488.2 common command */
	char common_name[8];                /* "*IDN", upper case */
	const struct pbus_scpi_param *param; /* NULL for a common command */
	int64_t element;                    /* the array element (`#`), else -1 */
	size_t first_arg, arg_count;        /* in pbus_scpi_result.args */
};

struct pbus_scpi_result {
	const struct pbus_scpi_command *commands; /* those before the error */
	size_t command_count;
	const struct pbus_scpi_arg *args;
	int error;        /* 0, or the SCPI error code (negative: -113 ...) */
	char detail[96];  /* the error's detail, "" when none */
	size_t error_offset; /* where in the message the error was found */
};

struct pbus_scpi_parser;

/* A parser on a tree, for messages of at most max_message bytes (with their
 * terminator), with at most max_commands commands and max_args arguments in
 * all per message. -EINVAL on a zero limit, -ENOMEM. */
int pbus_scpi_parser_new(const struct pbus_scpi_tree *tree, size_t max_message,
			 size_t max_commands, size_t max_args, struct pbus_scpi_parser **ret_parser);
void pbus_scpi_parser_free(struct pbus_scpi_parser *parser);

/* Parse one program message (with or without its terminator "\n" or
 * "\r\n"). Returns 0 when it parsed whole, or the SCPI error code (also in
 * ret->error) with the commands before the error; -EINVAL for bad
 * arguments (nothing written). Never reads beyond length. */
int pbus_scpi_parse(struct pbus_scpi_parser *parser, const char *message, size_t length,
		    struct pbus_scpi_result *ret);

/* The length of the first complete message in buf (up to and including its
 * "\n" terminator outside strings and block data), 0 when there is none
 * yet, -EMSGSIZE when none ends within max bytes. */
ssize_t pbus_scpi_message_length(const char *buf, size_t length, size_t max);

/* The standard text of a SCPI error code ("Undefined header"), or
 * "Unknown error". */
const char *pbus_scpi_error_text(int code);

/* Response formats (IEEE 488.2 8.7): each writes at most size bytes with a
 * NUL when size > 0 and returns the length the whole response needs, as
 * snprintf does. NR2 and NR3 write NAN as 9.91E+37 and INF/NINF as
 * +/-9.9E+37 (SCPI-99 7.2.1.5). */
int pbus_scpi_format_nr1(char *buf, size_t size, int64_t value);
int pbus_scpi_format_nr2(char *buf, size_t size, double value, int decimals);
int pbus_scpi_format_nr3(char *buf, size_t size, double value, int digits);
int pbus_scpi_format_bool(char *buf, size_t size, bool value);
int pbus_scpi_format_string(char *buf, size_t size, const char *text, size_t length);
/* "#<n><len>" then the bytes (definite length arbitrary block). */
int pbus_scpi_format_block(char *buf, size_t size, const void *data, size_t length);

#endif
