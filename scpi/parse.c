/* SPDX-License-Identifier: MIT */
/*
 * parse.c: the IEEE 488.2 / SCPI-99 program message parser (docs/scpi.md,
 * "The parser"). A message is scanned once, left to right, with bounds
 * checks at every read: headers are resolved node by node in the tree's
 * hash table (relative to the previous header's path after ';', from the
 * root after ':' or at the start), arguments are scanned into their lexical
 * kind (decimal number with its suffix, character data, string, block) and
 * then typed by the parameter they go to. The first error stops the parse;
 * the commands before it are returned (a device executes them, IEEE 488.2
 * 6.1.6). The parser's arrays are allocated once, at _new; one thread uses a
 * parser at a time.
 */
#include "scpi-internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MANTISSA_DIGITS_MAX 255 /* IEEE 488.2 7.7.2.4.1 */
#define EXPONENT_MAX 32000      /* IEEE 488.2 7.7.2.4.1: -32000..32000 */

struct pbus_scpi_parser {
	const struct pbus_scpi_tree *tree;
	size_t max_message, max_commands, max_args;
	struct pbus_scpi_command *commands;
	struct pbus_scpi_arg *args;
	char *scratch; /* decoded strings, max_message bytes */
};

struct scan {
	struct pbus_scpi_parser *parser;
	const char *s;
	size_t n, i;
	size_t scratch_used, command_count, arg_count;
	struct pbus_scpi_result *result;
};

/* Lexical kinds of program data. */
enum lex {
	LEX_NUMBER,
	LEX_CHARACTER,
	LEX_STRING,
	LEX_BLOCK,
};

struct token {
	enum lex lex;
	size_t start;
	double number;
	bool is_integer;
	int64_t integer;
	const char *suffix; /* LEX_NUMBER: the suffix, upper case not applied */
	size_t suffix_length;
	const char *data;   /* CHARACTER, STRING (decoded), BLOCK */
	size_t length;
};

int pbus_scpi_parser_new(const struct pbus_scpi_tree *tree, size_t max_message,
			 size_t max_commands, size_t max_args, struct pbus_scpi_parser **ret_parser)
{
	if (!tree || !ret_parser || !max_message || !max_commands || !max_args ||
	    max_message > (1u << 30) || max_commands > (1u << 20) || max_args > (1u << 20))
		return -EINVAL;
	struct pbus_scpi_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->tree = tree;
	p->max_message = max_message;
	p->max_commands = max_commands;
	p->max_args = max_args;
	p->commands = calloc(max_commands, sizeof(*p->commands));
	p->args = calloc(max_args, sizeof(*p->args));
	p->scratch = malloc(max_message);
	if (!p->commands || !p->args || !p->scratch) {
		pbus_scpi_parser_free(p);
		return -ENOMEM;
	}
	*ret_parser = p;
	return 0;
}

void pbus_scpi_parser_free(struct pbus_scpi_parser *parser)
{
	if (!parser)
		return;
	free(parser->commands);
	free(parser->args);
	free(parser->scratch);
	free(parser);
}

static int error_at(struct scan *sc, int code, size_t at, const char *format, ...)
{
	struct pbus_scpi_result *r = sc->result;
	r->error = code;
	r->error_offset = at;
	va_list ap;
	va_start(ap, format);
	vsnprintf(r->detail, sizeof(r->detail), format, ap);
	va_end(ap);
	return code;
}

/* IEEE 488.2 7.4.1.2: <white space> is 0-9 and 11-32 (not NL). */
static bool white(char c)
{
	unsigned char u = (unsigned char)c;
	return u <= 32 && u != '\n';
}

static void skip_white(struct scan *sc)
{
	while (sc->i < sc->n && white(sc->s[sc->i]))
		sc->i++;
}

static bool at_end(const struct scan *sc)
{
	return sc->i >= sc->n;
}

static char peek(const struct scan *sc)
{
	return sc->i < sc->n ? sc->s[sc->i] : '\0';
}

/* --- data elements ------------------------------------------------------- */

static int scan_number(struct scan *sc, struct token *t)
{
	char digits[MANTISSA_DIGITS_MAX + 32];
	size_t d = 0, mantissa = 0, start = sc->i;
	bool point = false, exponent = false;
	if (peek(sc) == '+' || peek(sc) == '-')
		digits[d++] = sc->s[sc->i++];
	while (!at_end(sc) && (isdigit((unsigned char)peek(sc)) || (peek(sc) == '.' && !point))) {
		if (peek(sc) == '.')
			point = true;
		else if (++mantissa > MANTISSA_DIGITS_MAX)
			return error_at(sc, -124, start, "more than %d digits", MANTISSA_DIGITS_MAX);
		digits[d++] = sc->s[sc->i++];
	}
	if (mantissa == 0)
		return error_at(sc, -121, start, "no digit in the number");
	/* An exponent: white space allowed before E and after it (7.7.2.2). */
	size_t save = sc->i;
	skip_white(sc);
	if (peek(sc) == 'E' || peek(sc) == 'e') {
		size_t e = sc->i++;
		skip_white(sc);
		char sign = '+';
		if (peek(sc) == '+' || peek(sc) == '-')
			sign = sc->s[sc->i++];
		if (isdigit((unsigned char)peek(sc))) {
			long value = 0;
			while (!at_end(sc) && isdigit((unsigned char)peek(sc))) {
				if (value <= EXPONENT_MAX)
					value = value * 10 + (peek(sc) - '0');
				sc->i++;
			}
			if (value > EXPONENT_MAX)
				return error_at(sc, -123, e, "exponent beyond %d", EXPONENT_MAX);
			d += (size_t)snprintf(digits + d, sizeof(digits) - d, "e%c%ld", sign, value);
			exponent = true;
		} else {
			sc->i = save; /* an E that starts a suffix (EX...) */
		}
	} else {
		sc->i = save;
	}
	digits[d] = 0;
	if (!at_end(sc) && (isdigit((unsigned char)peek(sc)) || peek(sc) == '.' ||
			    peek(sc) == '+' || peek(sc) == '-'))
		return error_at(sc, -121, sc->i, "'%c' in a number", peek(sc));
	errno = 0;
	t->lex = LEX_NUMBER;
	t->number = strtod(digits, NULL);
	if (!isfinite(t->number))
		return error_at(sc, -222, start, "number beyond the range of a double");
	t->is_integer = !point && !exponent && fabs(t->number) < 9.2e18;
	if (t->is_integer)
		t->integer = strtoll(digits, NULL, 10);
	/* A suffix: optional white space, then letters (7.7.3). */
	save = sc->i;
	skip_white(sc);
	if (isalpha((unsigned char)peek(sc))) {
		t->suffix = sc->s + sc->i;
		while (!at_end(sc) && isalpha((unsigned char)peek(sc)))
			sc->i++;
		t->suffix_length = (size_t)(sc->s + sc->i - t->suffix);
		if (!at_end(sc) && !white(peek(sc)) && peek(sc) != ',' && peek(sc) != ';' &&
		    peek(sc) != '\n')
			return error_at(sc, -131, sc->i, "'%c' in a suffix", peek(sc));
	} else {
		sc->i = save;
	}
	return 0;
}

static int scan_string(struct scan *sc, struct token *t)
{
	char quote = sc->s[sc->i];
	size_t start = sc->i++;
	char *out = sc->parser->scratch + sc->scratch_used;
	size_t len = 0;
	for (;;) {
		if (at_end(sc))
			return error_at(sc, -151, start, "string without its closing %c", quote);
		char c = sc->s[sc->i++];
		if (c == quote) {
			if (peek(sc) != quote)
				break;
			sc->i++;
		}
		out[len++] = c; /* never longer than the message: scratch suffices */
	}
	t->lex = LEX_STRING;
	t->data = out;
	t->length = len;
	sc->scratch_used += len;
	return 0;
}

/* IEEE 488.2 7.7.4 <NON-DECIMAL NUMERIC PROGRAM DATA>: #H (hex), #Q (octal)
 * or #B (binary), either case, then at least one digit of that base; an
 * unsigned integer of at most 64 bits, with no suffix. @start: the '#'. */
static int scan_nondecimal(struct scan *sc, struct token *t, size_t start)
{
	char base_letter = (char)toupper((unsigned char)sc->s[sc->i++]);
	unsigned base = base_letter == 'H' ? 16 : base_letter == 'Q' ? 8 : 2, digits = 0;
	uint64_t value = 0;
	while (!at_end(sc) && isalnum((unsigned char)peek(sc))) {
		char c = (char)toupper((unsigned char)peek(sc));
		unsigned digit = isdigit((unsigned char)c) ? (unsigned)(c - '0') : (unsigned)(c - 'A' + 10);
		if (digit >= base)
			return error_at(sc, -121, sc->i, "'%c' in a #%c number", sc->s[sc->i], base_letter);
		if (value > (UINT64_MAX - digit) / base)
			return error_at(sc, -222, start, "#%c number beyond 64 bits", base_letter);
		value = value * base + digit;
		digits++;
		sc->i++;
	}
	if (digits == 0)
		return error_at(sc, -121, start, "no digit after #%c", base_letter);
	if (!at_end(sc) && !white(peek(sc)) && peek(sc) != ',' && peek(sc) != ';' && peek(sc) != '\n')
		return error_at(sc, -121, sc->i, "'%c' in a #%c number", peek(sc), base_letter);
	t->lex = LEX_NUMBER;
	t->number = (double)value;
	t->is_integer = value <= INT64_MAX;
	t->integer = t->is_integer ? (int64_t)value : 0;
	return 0;
}

static int scan_block(struct scan *sc, struct token *t)
{
	size_t start = sc->i++; /* '#' */
	char kind = (char)toupper((unsigned char)peek(sc));
	if (kind == 'H' || kind == 'Q' || kind == 'B')
		return scan_nondecimal(sc, t, start);
	if (at_end(sc) || !isdigit((unsigned char)peek(sc)))
		return error_at(sc, -161, start, "'#' not followed by a digit or H, Q, B");
	unsigned digits = (unsigned)(sc->s[sc->i++] - '0');
	t->lex = LEX_BLOCK;
	if (digits == 0) {
		/* Indefinite: everything up to the terminator, which ends the message. */
		t->data = sc->s + sc->i;
		size_t end = sc->n;
		if (end > sc->i && sc->s[end - 1] == '\n')
			end--;
		t->length = end - sc->i;
		sc->i = end;
		return 0;
	}
	if (sc->n - sc->i < digits)
		return error_at(sc, -161, start, "block length cut short");
	size_t length = 0;
	for (unsigned k = 0; k < digits; k++) {
		char c = sc->s[sc->i++];
		if (!isdigit((unsigned char)c))
			return error_at(sc, -161, start, "'%c' in the block length", c);
		length = length * 10 + (size_t)(c - '0');
	}
	if (length > sc->n - sc->i)
		return error_at(sc, -161, start, "block of %zu bytes, %zu left in the message",
				length, sc->n - sc->i);
	t->data = sc->s + sc->i;
	t->length = length;
	sc->i += length;
	return 0;
}

static int scan_token(struct scan *sc, struct token *t)
{
	memset(t, 0, sizeof(*t));
	t->start = sc->i;
	char c = peek(sc);
	if (c == '"' || c == '\'')
		return scan_string(sc, t);
	if (c == '#')
		return scan_block(sc, t);
	if (isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.')
		return scan_number(sc, t);
	if (isalpha((unsigned char)c)) {
		size_t start = sc->i;
		while (!at_end(sc) && (isalnum((unsigned char)peek(sc)) || peek(sc) == '_'))
			sc->i++;
		t->lex = LEX_CHARACTER;
		t->data = sc->s + start;
		t->length = sc->i - start;
		if (t->length > PBUS_SCPI_MNEMONIC_MAX)
			return error_at(sc, -144, start, "more than %d characters",
					PBUS_SCPI_MNEMONIC_MAX);
		return 0;
	}
	if (at_end(sc) || c == ',' || c == ';' || c == '\n')
		return error_at(sc, -109, sc->i, "empty parameter");
	return error_at(sc, -101, sc->i, "'%c' starts no program data",
			isprint((unsigned char)c) ? c : '?');
}

/* --- typing ---------------------------------------------------------------- */

/* `text` (length bytes) is `word` or its short form (the upper-case head). */
static bool is_word(const char *text, size_t length, const char *word)
{
	size_t head = 0;
	while (word[head] && isupper((unsigned char)word[head]))
		head++;
	size_t full = strlen(word);
	return (length == head || length == full) && strncasecmp(text, word, length) == 0;
}

struct multiplier {
	const char *text;
	double factor;
};

/* IEEE 488.2 7.7.3.4, table 7-2, read case-insensitively: M is milli, MA
 * mega (except MHZ and MOHM below). */
static const struct multiplier MULTIPLIERS[] = {
	{"EX", 1e18}, {"PE", 1e15}, {"T", 1e12}, {"G", 1e9}, {"MA", 1e6}, {"K", 1e3},
	{"M", 1e-3}, {"U", 1e-6}, {"N", 1e-9}, {"P", 1e-12}, {"F", 1e-15}, {"A", 1e-18},
};

static int apply_suffix(struct scan *sc, const struct token *t,
			const struct pbus_scpi_param *p, double *value)
{
	if (!t->suffix_length) {
		/* SCPI-99 7.2.1.2: a number without a suffix is in the default
		 * unit, the base unit (V for a mV parameter) */
		if (p && p->unit[0])
			*value /= p->unit_factor;
		return 0;
	}
	if (!p || !p->unit[0])
		return error_at(sc, -138, t->start, "'%.*s' on a parameter without a unit",
				(int)t->suffix_length, t->suffix);
	char s[16];
	if (t->suffix_length >= sizeof(s))
		return error_at(sc, -131, t->start, "suffix too long");
	for (size_t k = 0; k < t->suffix_length; k++)
		s[k] = (char)toupper((unsigned char)t->suffix[k]);
	s[t->suffix_length] = 0;
	size_t unit = strlen(p->unit);
	double factor = 0;
	if ((strcmp(p->unit, "HZ") == 0 && strcmp(s, "MHZ") == 0) ||
	    (strcmp(p->unit, "OHM") == 0 && strcmp(s, "MOHM") == 0)) {
		factor = 1e6;
	} else if (t->suffix_length >= unit && strcmp(s + t->suffix_length - unit, p->unit) == 0) {
		size_t head = t->suffix_length - unit;
		if (head == 0)
			factor = 1;
		for (size_t k = 0; head && k < sizeof(MULTIPLIERS) / sizeof(MULTIPLIERS[0]); k++)
			if (strlen(MULTIPLIERS[k].text) == head &&
			    strncmp(s, MULTIPLIERS[k].text, head) == 0)
				factor = MULTIPLIERS[k].factor;
	}
	if (factor == 0)
		return error_at(sc, -131, t->start, "'%s' is not %s with a multiplier", s, p->unit);
	*value = *value * factor / p->unit_factor;
	return 0;
}

/* MIN, MAX, DEF (and their long forms). */
static int special(const struct token *t)
{
	if (t->lex != LEX_CHARACTER)
		return -1;
	if (is_word(t->data, t->length, "MINimum"))
		return PBUS_SCPI_ARG_MIN;
	if (is_word(t->data, t->length, "MAXimum"))
		return PBUS_SCPI_ARG_MAX;
	if (is_word(t->data, t->length, "DEFault"))
		return PBUS_SCPI_ARG_DEF;
	return -1;
}

/* @t as a value of @p; MIN, MAX and DEF as such when @specials. */
static int type_arg(struct scan *sc, const struct pbus_scpi_param *p, const struct token *t,
		    struct pbus_scpi_arg *a, bool specials)
{
	memset(a, 0, sizeof(*a));
	int sp = specials ? special(t) : -1;
	if (sp == PBUS_SCPI_ARG_DEF ||
	    (sp >= 0 && (p->kind == PBUS_SCPI_KIND_INTEGER || p->kind == PBUS_SCPI_KIND_REAL))) {
		a->kind = (enum pbus_scpi_arg_kind)sp;
		return 0;
	}
	switch (p->kind) {
	case PBUS_SCPI_KIND_INTEGER:
	case PBUS_SCPI_KIND_REAL:
		if (t->lex == LEX_CHARACTER && p->kind == PBUS_SCPI_KIND_REAL) {
			double v = 0;
			if (is_word(t->data, t->length, "INFinity"))
				v = INFINITY;
			else if (is_word(t->data, t->length, "NINFinity"))
				v = -INFINITY;
			else if (is_word(t->data, t->length, "NAN"))
				v = NAN;
			else
				return error_at(sc, -141, t->start, "'%.*s' is no number, MIN, MAX or DEF",
						(int)t->length, t->data);
			a->kind = PBUS_SCPI_ARG_NUMBER;
			a->number = v;
			return 0;
		}
		if (t->lex == LEX_CHARACTER)
			return error_at(sc, -141, t->start, "'%.*s' is no integer, MIN, MAX or DEF",
					(int)t->length, t->data);
		if (t->lex != LEX_NUMBER)
			return error_at(sc, -104, t->start, "a number is expected");
		a->kind = PBUS_SCPI_ARG_NUMBER;
		a->number = t->number;
		if (apply_suffix(sc, t, p, &a->number))
			return sc->result->error;
		if (p->kind == PBUS_SCPI_KIND_INTEGER) {
			double r = round(a->number);
			if (!(r >= (double)p->int_min && r <= (double)p->int_max) ||
			    r >= 9223372036854775807.0)
				return error_at(sc, -222, t->start, "outside the range of %s", p->type);
			a->is_integer = true;
			a->integer = t->is_integer && !t->suffix_length && p->unit_factor == 1.0
					     ? t->integer
					     : (int64_t)r;
			if (a->integer < p->int_min || a->integer > p->int_max)
				return error_at(sc, -222, t->start, "outside the range of %s", p->type);
		} else if (p->kind == PBUS_SCPI_KIND_REAL && strcmp(p->type, "float") == 0 &&
			   isfinite(a->number) && fabs(a->number) > 3.4028234663852886e38) {
			return error_at(sc, -222, t->start, "outside the range of float");
		}
		return 0;
	case PBUS_SCPI_KIND_BOOL:
		a->kind = PBUS_SCPI_ARG_BOOL;
		if (t->lex == LEX_NUMBER) {
			if (t->suffix_length)
				return error_at(sc, -138, t->start, "a suffix on a boolean");
			a->boolean = round(t->number) != 0;
		} else if (t->lex == LEX_CHARACTER && is_word(t->data, t->length, "ON")) {
			a->boolean = true;
		} else if (t->lex == LEX_CHARACTER && is_word(t->data, t->length, "OFF")) {
			a->boolean = false;
		} else if (t->lex == LEX_CHARACTER) {
			return error_at(sc, -141, t->start, "'%.*s' is not ON or OFF", (int)t->length,
					t->data);
		} else {
			return error_at(sc, -104, t->start, "a boolean is expected");
		}
		a->integer = a->boolean;
		a->number = a->boolean;
		return 0;
	case PBUS_SCPI_KIND_ENUM:
		if (t->lex != LEX_CHARACTER)
			return error_at(sc, -104, t->start, "a mnemonic is expected");
		for (size_t k = 0; k < p->mnemonic_count; k++) {
			const struct pbus_scpi_mnemonic *m = &p->mnemonics[k];
			if ((t->length == m->short_length || t->length == strlen(m->text)) &&
			    strncasecmp(t->data, m->text, t->length) == 0) {
				a->kind = PBUS_SCPI_ARG_ENUM;
				a->integer = m->value;
				a->is_integer = true;
				return 0;
			}
		}
		return error_at(sc, -141, t->start, "'%.*s' is not a value of %s", (int)t->length,
				t->data, p->name);
	case PBUS_SCPI_KIND_STRING:
		if (t->lex != LEX_STRING)
			return error_at(sc, -104, t->start, "a quoted string is expected");
		a->kind = PBUS_SCPI_ARG_STRING;
		a->data = t->data;
		a->length = t->length;
		return 0;
	case PBUS_SCPI_KIND_BYTES:
		if (t->lex != LEX_BLOCK)
			return error_at(sc, -104, t->start, "block data is expected");
		a->kind = PBUS_SCPI_ARG_BLOCK;
		a->data = t->data;
		a->length = t->length;
		return 0;
	case PBUS_SCPI_KIND_NONE:
	case PBUS_SCPI_KIND_METHOD:
		break; /* refused before any argument is read; typed by the arguments */
	}
	return error_at(sc, -100, t->start, "unknown parameter kind");
}

/* --- commands ------------------------------------------------------------- */

struct common {
	const char *name;
	bool query, set;
	unsigned args; /* of the set form */
};

/* IEEE 488.2 chapter 10: the common commands pbus-scpi knows. */
static const struct common COMMONS[] = {
	{"*CLS", false, true, 0}, {"*ESE", true, true, 1}, {"*ESR", true, false, 0},
	{"*IDN", true, false, 0}, {"*OPC", true, true, 0}, {"*OPT", true, false, 0},
	{"*PSC", true, true, 1},  {"*RST", false, true, 0}, {"*SRE", true, true, 1},
	{"*STB", true, false, 0}, {"*TRG", false, true, 0}, {"*TST", true, false, 0},
	{"*WAI", false, true, 0},
};

static int add_arg(struct scan *sc, struct pbus_scpi_arg **ret)
{
	if (sc->arg_count == sc->parser->max_args)
		return error_at(sc, -223, sc->i, "more than %zu parameters in one message",
				sc->parser->max_args);
	*ret = &sc->parser->args[sc->arg_count++];
	return 0;
}

/* The arguments after a header, up to ';' or the end. */
static int scan_args(struct scan *sc, struct pbus_scpi_command *c, const struct common *common)
{
	const struct pbus_scpi_method *method = common ? NULL : c->param->method;
	bool separated = false;
	if (!at_end(sc) && white(peek(sc))) {
		skip_white(sc);
		separated = true;
	}
	if (at_end(sc) || peek(sc) == ';' || peek(sc) == '\n')
		goto counted;
	if (!separated)
		return error_at(sc, -102, sc->i, "'%c' after the header", peek(sc));
	if (!common && c->param->kind == PBUS_SCPI_KIND_NONE)
		return error_at(sc, -108, sc->i, "%s takes no parameter", c->param->name);
	if (method && method->in_count == 0)
		return error_at(sc, -108, sc->i, "%s takes no parameter", c->param->name);
	for (;;) {
		struct token t;
		if (scan_token(sc, &t))
			return sc->result->error;
		struct pbus_scpi_arg *a = NULL;
		if (add_arg(sc, &a))
			return sc->result->error;
		c->arg_count++;
		if (common) {
			memset(a, 0, sizeof(*a));
			a->kind = t.lex == LEX_NUMBER ? PBUS_SCPI_ARG_NUMBER :
				  t.lex == LEX_STRING ? PBUS_SCPI_ARG_STRING :
				  t.lex == LEX_BLOCK ? PBUS_SCPI_ARG_BLOCK : PBUS_SCPI_ARG_CHARACTER;
			a->number = t.number;
			a->is_integer = t.is_integer;
			a->integer = t.integer;
			a->data = t.data;
			a->length = t.length;
			if (t.suffix_length)
				return error_at(sc, -138, t.start, "a suffix on %s", common->name);
		} else if (method) {
			/* a method's in-arguments, in order, each typed by its own */
			if (c->arg_count > method->in_count)
				return error_at(sc, -108, t.start, "%s takes %zu parameter%s", c->param->name,
						method->in_count, method->in_count == 1 ? "" : "s");
			const struct pbus_scpi_param *in = &method->in[c->arg_count - 1];
			if (special(&t) >= 0 && in->kind != PBUS_SCPI_KIND_ENUM)
				return error_at(sc, -224, t.start, "%s: MIN, MAX and DEF do not apply to "
						"a method's argument '%s'", c->param->name, in->name);
			if (type_arg(sc, in, &t, a, false))
				return sc->result->error;
		} else if (c->query) {
			int sp = special(&t);
			if (sp < 0 || c->arg_count > 1 ||
			    (sp != PBUS_SCPI_ARG_DEF && c->param->kind != PBUS_SCPI_KIND_INTEGER &&
			     c->param->kind != PBUS_SCPI_KIND_REAL))
				return error_at(sc, -108, t.start, "a query takes MIN, MAX or DEF only");
			memset(a, 0, sizeof(*a));
			a->kind = (enum pbus_scpi_arg_kind)sp;
		} else {
			if (type_arg(sc, c->param, &t, a, true))
				return sc->result->error;
		}
		skip_white(sc);
		if (at_end(sc) || peek(sc) == ';' || peek(sc) == '\n')
			break;
		if (peek(sc) != ',')
			return error_at(sc, -103, sc->i, "'%c' between parameters",
					isprint((unsigned char)peek(sc)) ? peek(sc) : '?');
		sc->i++;
		skip_white(sc);
	}
counted:
	if (common) {
		unsigned want = c->query ? 0 : common->args;
		if (c->arg_count > want)
			return error_at(sc, -108, sc->i, "%s%s takes %u parameter%s", common->name,
					c->query ? "?" : "", want, want == 1 ? "" : "s");
		if (c->arg_count < want)
			return error_at(sc, -109, sc->i, "%s takes %u parameter", common->name, want);
		return 0;
	}
	if (method) {
		if (c->arg_count < method->in_count)
			return error_at(sc, -109, sc->i, "%s needs %zu parameter%s", c->param->name,
					method->in_count, method->in_count == 1 ? "" : "s");
		return 0;
	}
	if (c->query)
		return 0;
	const struct pbus_scpi_param *p = c->param;
	if (p->kind == PBUS_SCPI_KIND_NONE)
		return 0; /* an event command: no value */
	size_t want = p->is_array && c->element < 0 ? p->count : 1;
	if (c->arg_count == 0)
		return error_at(sc, -109, sc->i, "%s needs a value", p->name);
	if (c->arg_count > want)
		return error_at(sc, -108, sc->i, "%s takes %zu value%s", p->name, want,
				want == 1 ? "" : "s");
	if (want > 1 && c->arg_count > 1) {
		for (size_t k = c->first_arg; k < c->first_arg + c->arg_count; k++)
			if (sc->parser->args[k].kind != PBUS_SCPI_ARG_NUMBER &&
			    sc->parser->args[k].kind != PBUS_SCPI_ARG_BOOL)
				return error_at(sc, -224, sc->i, "MIN, MAX or DEF among array values");
	}
	return 0;
}

/* One header node: mnemonic and its numeric suffix. */
static int scan_node(struct scan *sc, char *upper, size_t *length, uint32_t *suffix,
		     bool *suffixed)
{
	size_t start = sc->i;
	if (!isalpha((unsigned char)peek(sc)))
		return error_at(sc, at_end(sc) || peek(sc) == ';' ? -102 : -101, sc->i,
				"a header node must start with a letter");
	size_t len = 0;
	while (!at_end(sc) && (isalpha((unsigned char)peek(sc)) || peek(sc) == '_')) {
		if (len == PBUS_SCPI_MNEMONIC_MAX)
			return error_at(sc, -112, start, "a node longer than %d characters",
					PBUS_SCPI_MNEMONIC_MAX);
		upper[len++] = (char)toupper((unsigned char)sc->s[sc->i++]);
	}
	*length = len;
	*suffix = 1;
	*suffixed = false;
	if (isdigit((unsigned char)peek(sc))) {
		size_t s0 = sc->i;
		uint64_t v = 0;
		while (!at_end(sc) && isdigit((unsigned char)peek(sc))) {
			if (v <= 999999)
				v = v * 10 + (uint64_t)(peek(sc) - '0');
			sc->i++;
		}
		if (v == 0 || v > 999999)
			return error_at(sc, -114, s0, "suffix %.*s", (int)(sc->i - s0), sc->s + s0);
		*suffix = (uint32_t)v;
		*suffixed = true;
	}
	if (!at_end(sc) && (isalnum((unsigned char)peek(sc)) || peek(sc) == '_'))
		return error_at(sc, -102, sc->i, "a letter after the numeric suffix");
	return 0;
}

static int scan_command(struct scan *sc, uint32_t *path)
{
	struct pbus_scpi_parser *pr = sc->parser;
	if (sc->command_count == pr->max_commands)
		return error_at(sc, -100, sc->i, "more than %zu commands in one message",
				pr->max_commands);
	struct pbus_scpi_command *c = &pr->commands[sc->command_count];
	memset(c, 0, sizeof(*c));
	c->element = -1;
	c->first_arg = sc->arg_count;
	size_t start = sc->i;
	if (peek(sc) == '*') {
		sc->i++;
		char name[8] = "*";
		size_t len = 1;
		while (!at_end(sc) && isalpha((unsigned char)peek(sc))) {
			if (len == 4)
				return error_at(sc, -113, start, "unknown common command");
			name[len++] = (char)toupper((unsigned char)sc->s[sc->i++]);
		}
		name[len] = 0;
		if (peek(sc) == '?') {
			c->query = true;
			sc->i++;
		}
		const struct common *common = NULL;
		for (size_t k = 0; k < sizeof(COMMONS) / sizeof(COMMONS[0]); k++)
			if (strcmp(COMMONS[k].name, name) == 0)
				common = &COMMONS[k];
		if (!common || (c->query ? !common->query : !common->set))
			return error_at(sc, -113, start, "%s%s", name, c->query ? "?" : "");
		c->common = true;
		memcpy(c->common_name, name, len + 1);
		if (scan_args(sc, c, common))
			return sc->result->error;
		sc->command_count++;
		return 0; /* common commands leave the path alone (IEEE 488.2 A.1.1) */
	}
	uint32_t node = *path, parent = *path;
	if (peek(sc) == ':') {
		sc->i++;
		node = parent = 0;
	}
	int64_t captured = -1;
	for (;;) {
		char upper[PBUS_SCPI_MNEMONIC_MAX];
		size_t len = 0;
		uint32_t suffix = 1;
		bool suffixed = false;
		size_t at = sc->i;
		if (scan_node(sc, upper, &len, &suffix, &suffixed))
			return sc->result->error;
		const struct scpi_edge *e = scpi_edge_find(pr->tree, node, suffix, upper, len);
		if (!e) {
			e = scpi_edge_find(pr->tree, node, SCPI_SUFFIX_ANY, upper, len);
			if (e)
				captured = suffix;
		}
		if (!e) {
			if (suffixed && scpi_edge_find(pr->tree, node, SCPI_SUFFIX_MARK, upper, len))
				return error_at(sc, -114, at, "%.*s%u", (int)len, upper, suffix);
			return error_at(sc, -113, start, "%.*s", (int)(sc->i - start), sc->s + start);
		}
		parent = node;
		node = e->child;
		if (peek(sc) != ':')
			break;
		sc->i++;
	}
	if (peek(sc) == '?') {
		c->query = true;
		sc->i++;
	}
	const struct scpi_node *leaf = &pr->tree->nodes[node];
	uint32_t slot = c->query ? leaf->query_param : leaf->set_param;
	if (slot == SCPI_NONE) {
		bool other = (c->query ? leaf->set_param : leaf->query_param) != SCPI_NONE;
		return error_at(sc, -113, start, "%.*s%s", (int)(sc->i - start), sc->s + start,
				other ? (c->query ? ": no query form" : ": query only") : "");
	}
	c->param = &pr->tree->params[slot];
	if (captured >= 0) {
		if (!c->param->is_array || captured > c->param->count)
			return error_at(sc, -114, start, "element %lld of %u", (long long)captured,
					c->param->count);
		c->element = captured - 1;
	}
	*path = parent;
	if (scan_args(sc, c, NULL))
		return sc->result->error;
	sc->command_count++;
	return 0;
}

int pbus_scpi_parse(struct pbus_scpi_parser *parser, const char *message, size_t length,
		    struct pbus_scpi_result *ret)
{
	if (!parser || !ret || (!message && length))
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->commands = parser->commands;
	ret->args = parser->args;
	struct scan sc = {parser, message, length, 0, 0, 0, 0, ret};
	if (length > parser->max_message)
		return error_at(&sc, -223, parser->max_message, "message longer than %zu bytes",
				parser->max_message);
	/* The terminator: NL, with a CR before it taken as white space. */
	if (sc.n && message[sc.n - 1] == '\n')
		sc.n--;
	if (sc.n && message[sc.n - 1] == '\r')
		sc.n--;
	uint32_t path = 0; /* each message starts at the root (SCPI-99 6.2.4) */
	skip_white(&sc);
	if (at_end(&sc))
		return 0; /* an empty message is no error */
	for (;;) {
		skip_white(&sc);
		int r = scan_command(&sc, &path);
		ret->command_count = sc.command_count;
		if (r)
			return r;
		skip_white(&sc);
		if (at_end(&sc))
			break;
		if (peek(&sc) == '\n')
			return error_at(&sc, -102, sc.i, "a terminator inside the message");
		if (peek(&sc) != ';')
			return error_at(&sc, -103, sc.i, "'%c' after a command",
					isprint((unsigned char)peek(&sc)) ? peek(&sc) : '?');
		sc.i++;
		skip_white(&sc);
		if (at_end(&sc))
			return error_at(&sc, -102, sc.i, "nothing after ';'");
	}
	return 0;
}

ssize_t pbus_scpi_message_length(const char *buf, size_t length, size_t max)
{
	if (!buf && length)
		return -EINVAL;
	size_t n = length < max ? length : max;
	size_t i = 0;
	while (i < n) {
		char c = buf[i];
		if (c == '\n')
			return (ssize_t)(i + 1);
		if (c == '"' || c == '\'') {
			size_t j = i + 1;
			while (j < n && buf[j] != c)
				j++;
			if (j >= n)
				break;
			i = j + 1;
			continue;
		}
		if (c == '#' && i + 1 < n && buf[i + 1] >= '1' && buf[i + 1] <= '9') {
			size_t digits = (size_t)(buf[i + 1] - '0');
			if (i + 2 + digits > n)
				break;
			size_t len = 0;
			bool ok = true;
			for (size_t k = 0; k < digits; k++) {
				char d = buf[i + 2 + k];
				if (d < '0' || d > '9')
					ok = false;
				else if (len < (size_t)1 << 40)
					len = len * 10 + (size_t)(d - '0');
			}
			if (!ok) { /* not a block: the parser reports it */
				i += 2;
				continue;
			}
			if (len > n - (i + 2 + digits))
				break;
			i += 2 + digits + len;
			continue;
		}
		i++;
	}
	return length >= max ? -EMSGSIZE : 0;
}
