/* SPDX-License-Identifier: MIT */
/*
 * test-scpi.c: the SCPI parser library (scpi/scpi.h) against the table of
 * tests/scpi/cases.txt (one case a line: a message and the parse it must
 * give, rendered as below), on the tree pbus-gen writes for
 * tests/scpi/fixture.fdepl; plus message framing, the response formats and
 * the tree loader's refusals. One thread.
 *
 * Rendering of a parse: commands joined by " ; ", each `name`, `name[k]`
 * (array element k) or `*IDN`, then `?` for a query, then `(arg,...)`:
 * numbers %.15g, integers i:N, MIN MAX DEF, ON OFF, enumerators e:N,
 * strings s"text", blocks b<length>"bytes", character data c:TEXT; an error
 * adds " ! CODE".
 */
#include "pbus-check.h"
#include "scpi.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

static char *read_file(const char *path, size_t *length)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*length = (size_t)n;
	return buf;
}

/* C-like escapes: \n \r \t \\ \xHH. */
static size_t unescape(const char *in, char *out)
{
	size_t n = 0;
	for (const char *p = in; *p; p++) {
		if (*p != '\\' || !p[1]) {
			out[n++] = *p;
			continue;
		}
		p++;
		if (*p == 'n')
			out[n++] = '\n';
		else if (*p == 'r')
			out[n++] = '\r';
		else if (*p == 't')
			out[n++] = '\t';
		else if (*p == 'x' && p[1] && p[2]) {
			char hex[3] = {p[1], p[2], 0};
			out[n++] = (char)strtol(hex, NULL, 16);
			p += 2;
		} else
			out[n++] = *p;
	}
	return n;
}

static void append(char *buf, size_t size, const char *format, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	va_start(ap, format);
	vsnprintf(buf + used, size - used, format, ap);
	va_end(ap);
}

/* Data with NL, CR and backslash escaped, so that a rendering is one line. */
static void append_data(char *buf, size_t size, const char *data, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		if (data[i] == '\n')
			append(buf, size, "\\n");
		else if (data[i] == '\r')
			append(buf, size, "\\r");
		else if (data[i] == '\\')
			append(buf, size, "\\\\");
		else
			append(buf, size, "%c", data[i]);
	}
}

static void render(const struct pbus_scpi_result *r, char *out, size_t size)
{
	out[0] = 0;
	for (size_t i = 0; i < r->command_count; i++) {
		const struct pbus_scpi_command *c = &r->commands[i];
		if (i)
			append(out, size, " ; ");
		if (c->common)
			append(out, size, "%s", c->common_name);
		else
			append(out, size, "%s", c->param->name);
		if (c->element >= 0)
			append(out, size, "[%" PRId64 "]", c->element);
		if (c->query)
			append(out, size, "?");
		if (!c->arg_count)
			continue;
		append(out, size, "(");
		for (size_t k = 0; k < c->arg_count; k++) {
			const struct pbus_scpi_arg *a = &r->args[c->first_arg + k];
			if (k)
				append(out, size, ",");
			switch (a->kind) {
			case PBUS_SCPI_ARG_NUMBER:
				if (a->is_integer)
					append(out, size, "i:%" PRId64, a->integer);
				else
					append(out, size, "%.15g", a->number);
				break;
			case PBUS_SCPI_ARG_MIN: append(out, size, "MIN"); break;
			case PBUS_SCPI_ARG_MAX: append(out, size, "MAX"); break;
			case PBUS_SCPI_ARG_DEF: append(out, size, "DEF"); break;
			case PBUS_SCPI_ARG_BOOL: append(out, size, a->boolean ? "ON" : "OFF"); break;
			case PBUS_SCPI_ARG_ENUM: append(out, size, "e:%" PRId64, a->integer); break;
			case PBUS_SCPI_ARG_STRING:
				append(out, size, "s\"");
				append_data(out, size, a->data, a->length);
				append(out, size, "\"");
				break;
			case PBUS_SCPI_ARG_BLOCK:
				append(out, size, "b%zu\"", a->length);
				append_data(out, size, a->data, a->length);
				append(out, size, "\"");
				break;
			case PBUS_SCPI_ARG_CHARACTER:
				append(out, size, "c:%.*s", (int)a->length, a->data);
				break;
			}
		}
		append(out, size, ")");
	}
	if (r->error)
		append(out, size, "%s! %d", r->command_count ? " " : "", r->error);
}

static struct pbus_scpi_tree *tree;

static void table(const char *path)
{
	size_t length;
	char *text = read_file(path, &length);
	pbus_check_begin("table-file");
	if (!CHECK_MSG(text != NULL, "cannot read %s", path)) {
		pbus_check_end();
		return;
	}
	pbus_check_end();
	struct pbus_scpi_parser *parser;
	if (pbus_scpi_parser_new(tree, 512, 16, 32, &parser) < 0)
		abort();
	unsigned line = 0;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		line++;
		if (l[0] == '#' || !l[0])
			continue;
		char *arrow = strstr(l, " => ");
		char name[64];
		snprintf(name, sizeof(name), "case-%u", line);
		pbus_check_begin(name);
		if (!CHECK_MSG(arrow != NULL, "no ' => ' in '%s'", l)) {
			pbus_check_end();
			continue;
		}
		*arrow = 0;
		char message[1024];
		size_t n = unescape(l, message);
		struct pbus_scpi_result r;
		int rc = pbus_scpi_parse(parser, message, n, &r);
		char got[2048];
		render(&r, got, sizeof(got));
		CHECK_MSG(strcmp(got, arrow + 4) == 0, "'%s': got '%s', expected '%s' (%s)", l, got,
			  arrow + 4, r.detail);
		CHECK_EQ(rc, r.error);
		CHECK_MSG(!r.error || r.detail[0], "'%s': error %d without detail", l, r.error);
		pbus_check_end();
	}
	pbus_scpi_parser_free(parser);
	free(text);
}

static void framing(void)
{
	CHECK_EQ(pbus_scpi_message_length("VOLT 1\nCURR", 11, 100), 7);
	CHECK_EQ(pbus_scpi_message_length("VOLT 1", 6, 100), 0);
	CHECK_EQ(pbus_scpi_message_length("LAB \"a\nb\"\n", 10, 100), 10);
	CHECK_EQ(pbus_scpi_message_length("DATA #13a\nb\n", 12, 100), 12);
	CHECK_EQ(pbus_scpi_message_length("DATA #15a\nb\n", 12, 100), 0);
	CHECK_EQ(pbus_scpi_message_length("VOLT 1 2 3 4", 12, 8), -EMSGSIZE);
	CHECK_EQ(pbus_scpi_message_length("DATA #0ab\n", 10, 100), 10);
}

static void formats(void)
{
	char b[64];
	CHECK_EQ(pbus_scpi_format_nr1(b, sizeof(b), -42), 3);
	CHECK_EQ_STR(b, "-42");
	pbus_scpi_format_nr2(b, sizeof(b), 12.5, 3);
	CHECK_EQ_STR(b, "12.500");
	pbus_scpi_format_nr3(b, sizeof(b), 12.5, 6);
	CHECK_EQ_STR(b, "1.25000E+01");
	pbus_scpi_format_nr3(b, sizeof(b), NAN, 6);
	CHECK_EQ_STR(b, "9.91E+37");
	pbus_scpi_format_nr3(b, sizeof(b), -INFINITY, 6);
	CHECK_EQ_STR(b, "-9.9E+37");
	pbus_scpi_format_bool(b, sizeof(b), true);
	CHECK_EQ_STR(b, "1");
	CHECK_EQ(pbus_scpi_format_string(b, sizeof(b), "say \"hi\"", 8), 12);
	CHECK_EQ_STR(b, "\"say \"\"hi\"\"\"");
	CHECK_EQ(pbus_scpi_format_string(b, 4, "abcdef", 6), 8);
	CHECK_EQ_STR(b, "\"ab");
	CHECK_EQ(pbus_scpi_format_block(b, sizeof(b), "xyz", 3), 6);
	CHECK_EQ_STR(b, "#13xyz");
	CHECK_EQ_STR(pbus_scpi_error_text(-113), "Undefined header");
	/* every code pbus-scpi queues has its SCPI-99 text */
	static const int daemon_codes[] = {-100, -104, -108, -113, -200, -203, -221, -222,
					   -223, -224, -240, -241, -350, -363, -410};
	for (size_t k = 0; k < sizeof(daemon_codes) / sizeof(daemon_codes[0]); k++)
		CHECK_MSG(strcmp(pbus_scpi_error_text(daemon_codes[k]), "Unknown error") != 0,
			  "code %d has no text", daemon_codes[k]);
	CHECK_EQ_STR(pbus_scpi_error_text(-203), "Command protected");
	CHECK_EQ_STR(pbus_scpi_error_text(-240), "Hardware error");
	CHECK_EQ_STR(pbus_scpi_error_text(-9999), "Unknown error");
}

static void refused(const char *text, const char *reason)
{
	struct pbus_scpi_tree *t = NULL;
	char error[128];
	CHECK_EQ(pbus_scpi_tree_load(text, strlen(text), &t, error, sizeof(error)), -EINVAL);
	CHECK_MSG(strstr(error, reason) != NULL, "'%s': got '%s', expected '%s'", text, error,
		  reason);
	CHECK(t == NULL);
}

static void loader(void)
{
	const char *head = "pbus-scpi-tree 2\nschema 0000000000000001\n";
	char buf[512];
	refused("pbus-scpi-tree 1\nschema 0000000000000001\n", "line 1: unsupported version");
	refused("hello\n", "line 1: not a pbus-scpi-tree file");
	refused("pbus-scpi-tree 2\nschema 0000000000000001", "line 2: no newline");
	snprintf(buf, sizeof(buf), "%sparam 0 x double both 0\nheader 1 X\n", head);
	refused(buf, "line 4: 'header' does not follow");
	snprintf(buf, sizeof(buf), "%sparam 0 x double both 0\nheader 0 volt\n", head);
	refused(buf, "line 4: bad node");
	snprintf(buf, sizeof(buf), "%sparam 0 x double both 0\nheader 0 X#\n", head);
	refused(buf, "line 4: '#' needs an array");
	snprintf(buf, sizeof(buf),
		 "%sparam 0 x double both 0\nheader 0 VOLT\nparam 1 y double both 0\nheader 1 "
		 "VOLTage\n", head);
	refused(buf, "line 6: node 'VOLTage' shares a form");
	snprintf(buf, sizeof(buf),
		 "%sparam 0 x double both 0\nheader 0 VOLT\nparam 1 y double query 0\nheader 1 "
		 "VOLT\n", head);
	refused(buf, "line 6: header queried by two");
	snprintf(buf, sizeof(buf), "%sparam 0 x enum both 0\n", head);
	refused(buf, "has no 'enum' lines");
	snprintf(buf, sizeof(buf), "%sparam 0 x foo both 0\n", head);
	refused(buf, "line 3: unknown type 'foo'");
	snprintf(buf, sizeof(buf), "%sparam 0 x none query 0\n", head);
	refused(buf, "line 3: type 'none' is a scalar set-only command");
	snprintf(buf, sizeof(buf), "%sstatus questionable 13 0 minor\n", head);
	refused(buf, "line 3: bad status bit '13'");
	snprintf(buf, sizeof(buf), "%sstatus standard 1 0 minor\n", head);
	refused(buf, "line 3: unknown status register 'standard'");
	snprintf(buf, sizeof(buf), "%sstatus operation 1 0 bad\n", head);
	refused(buf, "line 3: unknown status condition 'bad'");
	snprintf(buf, sizeof(buf), "%sstatus operation 1 0\n", head);
	refused(buf, "line 3: 'status' needs REGISTER BIT INDEX CONDITION");

	/* method records: in this order, each after its method */
	snprintf(buf, sizeof(buf), "%smethod 0 m both\nheader 0 M\n", head);
	refused(buf, "line 3: a method's access is 'set' or 'query'");
	snprintf(buf, sizeof(buf), "%sin 0 a double\n", head);
	refused(buf, "line 3: 'in' does not follow the 'method' line");
	snprintf(buf, sizeof(buf), "%smethod 0 m query\nout 0 a double\nin 0 b double\n", head);
	refused(buf, "line 5: 'in' does not follow the 'method' line");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nout 0 a double\n", head);
	refused(buf, "line 4: 'out' of a 'set' method");
	snprintf(buf, sizeof(buf), "%smethod 0 m query\nheader 0 M\n", head);
	refused(buf, "query method 'm' has no 'out' lines");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nin 0 a double[]\n", head);
	refused(buf, "line 4: argument type 'double[]' is no SCPI value");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nin 0 a integer:5:1\n", head);
	refused(buf, "line 4: bad type 'integer:5:1'");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nin 0 a enum\nheader 0 M\n", head);
	refused(buf, "argument 'a' has no 'enum' lines");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nheader 0 M\nerror 0 0 OK\n", head);
	refused(buf, "line 5: 'error' does not follow the arguments");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nerror 0 0 O-K\n", head);
	refused(buf, "line 4: bad error label 'O-K'");
	snprintf(buf, sizeof(buf), "%smethod 0 m set\nheader 0 M#\n", head);
	refused(buf, "line 4: '#' needs an array");
	snprintf(buf, sizeof(buf), "%sparam 0 x double set 0\nheader 0 M\nmethod 0 m set\nheader 0 M\n",
		 head);
	refused(buf, "line 6: header set by two");

	/* a method: its arguments, errors and header; a query-only parameter
	 * and a set-only method share a header */
	{
		struct pbus_scpi_tree *mt = NULL;
		char merr[128] = "";
		snprintf(buf, sizeof(buf),
			 "%sparam 3 x double query 0\nheader 3 M\n"
			 "method 2 m set\nin 2 a integer::\nin 2 b enum\nenum 2 4 UP\n"
			 "in 2 c integer:0:18446744073709551615\nerror 2 0 OK\nerror 2 7 TOO_LONG_A_LABEL\n"
			 "header 2 M\nmethod 5 q query\nout 5 r float\nheader 5 Q\n", head);
		REQUIRE_EQ(pbus_scpi_tree_load(buf, strlen(buf), &mt, merr, sizeof(merr)), 0);
		CHECK_EQ(pbus_scpi_tree_method_count(mt), 2);
		const struct pbus_scpi_method *m = pbus_scpi_tree_method(mt, 0);
		REQUIRE(m && pbus_scpi_tree_method(mt, 2) == NULL);
		CHECK_EQ(m->index, 2);
		REQUIRE_EQ(m->in_count, 3);
		CHECK_EQ(m->out_count, 0);
		CHECK_EQ_STR(m->in[0].type, "int64");
		CHECK(m->in[0].int_min == INT64_MIN && m->in[0].int_max == INT64_MAX);
		CHECK_EQ(m->in[1].kind, PBUS_SCPI_KIND_ENUM);
		REQUIRE_EQ(m->in[1].mnemonic_count, 1);
		CHECK_EQ(m->in[1].mnemonics[0].value, 4);
		CHECK_EQ_STR(m->in[2].type, "uint64");
		CHECK_EQ(m->in[2].int_min, 0);
		REQUIRE_EQ(m->error_count, 2);
		CHECK_EQ_STR(m->errors[1].text, "TOO_LONG_A_LABEL");
		CHECK_EQ(m->errors[1].value, 7);
		const struct pbus_scpi_method *q = pbus_scpi_tree_method(mt, 1);
		REQUIRE(q && q->out_count == 1 && q->in_count == 0);
		CHECK_EQ_STR(q->out[0].type, "float");
		CHECK_EQ_STR(q->out[0].name, "r");
		struct pbus_scpi_parser *mp;
		REQUIRE_EQ(pbus_scpi_parser_new(mt, 256, 4, 8, &mp), 0);
		struct pbus_scpi_result mr;
		CHECK_EQ(pbus_scpi_parse(mp, "M -9,UP,18\n", 11, &mr), 0);
		REQUIRE_EQ(mr.command_count, 1);
		CHECK(mr.commands[0].param->method == m);
		CHECK_EQ(mr.args[mr.commands[0].first_arg + 1].integer, 4);
		CHECK_EQ(pbus_scpi_parse(mp, "M?\n", 3, &mr), 0);
		CHECK(mr.commands[0].param->kind == PBUS_SCPI_KIND_REAL);
		CHECK_EQ(pbus_scpi_parse(mp, "M 1,UP,-1\n", 10, &mr), -222);
		CHECK_EQ(pbus_scpi_parse(mp, "Q? 1\n", 5, &mr), -108);
		CHECK_EQ(pbus_scpi_parse(mp, "Q?\n", 3, &mr), 0);
		pbus_scpi_parser_free(mp);
		pbus_scpi_tree_free(mt);
	}

	/* status records and an event command (type none) */
	struct pbus_scpi_tree *t = NULL;
	char error[128] = "";
	snprintf(buf, sizeof(buf),
		 "%sparam 7 p none set 0\nheader 7 STATus:PRESet\n"
		 "status questionable 4 3 major\nstatus operation 14 5 nonzero\n", head);
	REQUIRE_EQ(pbus_scpi_tree_load(buf, strlen(buf), &t, error, sizeof(error)), 0);
	CHECK_EQ(pbus_scpi_tree_status_count(t), 2);
	const struct pbus_scpi_status_source *q = pbus_scpi_tree_status(t, 0);
	const struct pbus_scpi_status_source *o = pbus_scpi_tree_status(t, 1);
	REQUIRE(q && o && pbus_scpi_tree_status(t, 2) == NULL);
	CHECK_EQ(q->reg, PBUS_SCPI_REGISTER_QUESTIONABLE);
	CHECK_EQ(q->bit, 4);
	CHECK_EQ(q->index, 3);
	CHECK_EQ(q->min_status, 2);
	CHECK_EQ(o->reg, PBUS_SCPI_REGISTER_OPERATION);
	CHECK_EQ(o->bit, 14);
	CHECK_EQ(o->min_status, 0);
	struct pbus_scpi_parser *parser;
	REQUIRE_EQ(pbus_scpi_parser_new(t, 256, 4, 4, &parser), 0);
	struct pbus_scpi_result r;
	CHECK_EQ(pbus_scpi_parse(parser, "STAT:PRES\n", 10, &r), 0);
	CHECK_EQ(r.command_count, 1);
	CHECK_EQ(r.commands[0].arg_count, 0);
	CHECK_EQ(pbus_scpi_parse(parser, "STAT:PRES 1\n", 12, &r), -108);
	CHECK_EQ(pbus_scpi_parse(parser, "STAT:PRES?\n", 11, &r), -113);
	pbus_scpi_parser_free(parser);
	pbus_scpi_tree_free(t);
	CHECK(pbus_scpi_tree_schema_hash(tree) != 0);
	CHECK_EQ(pbus_scpi_tree_param_count(tree), 21); /* 16 parameters, 5 methods */
	CHECK_EQ(pbus_scpi_tree_method_count(tree), 5);
	CHECK(pbus_scpi_tree_param(tree, 21) == NULL);
}

static void limits(void)
{
	struct pbus_scpi_parser *p;
	REQUIRE_EQ(pbus_scpi_parser_new(tree, 20, 2, 2, &p), 0);
	struct pbus_scpi_result r;
	CHECK_EQ(pbus_scpi_parse(p, "VOLT 1;CURR 2;OUTP 1\n", 21, &r), -223);
	CHECK_EQ(pbus_scpi_parse(p, "VOLT 1;CURR 2;OUT", 17, &r), -100);
	CHECK_EQ(r.command_count, 2);
	CHECK_EQ(pbus_scpi_parse(p, "TAPS 1,2,3", 10, &r), -223);
	CHECK_EQ(pbus_scpi_parse(NULL, "x", 1, &r), -EINVAL);
	CHECK_EQ(pbus_scpi_parser_new(tree, 0, 1, 1, &p), -EINVAL);
	pbus_scpi_parser_free(p);
}

int main(int argc, char **argv)
{
	pbus_check_suite("scpi");
	if (argc != 3) {
		fprintf(stderr, "usage: test-scpi TREE.scpi CASES.txt\n");
		return 2;
	}
	size_t length;
	char *text = read_file(argv[1], &length);
	char error[256] = "";
	pbus_check_begin("tree-load");
	int rc = text ? pbus_scpi_tree_load(text, length, &tree, error, sizeof(error)) : -ENOENT;
	CHECK_MSG(rc == 0, "%s: %s", argv[1], error);
	pbus_check_end();
	free(text);
	if (rc)
		CHECK_EXIT();
	table(argv[2]);
	RUN_CASE(framing);
	RUN_CASE(formats);
	RUN_CASE(loader);
	RUN_CASE(limits);
	pbus_scpi_tree_free(tree);
	CHECK_EXIT();
}
