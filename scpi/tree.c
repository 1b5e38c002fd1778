/* SPDX-License-Identifier: MIT */
/*
 * tree.c: loading the command tree file that `pbus-gen --scpi` writes
 * (docs/scpi.md, "The tree file") into a trie whose edges live in one hash
 * table keyed by (parent node, suffix, upper-case form). Each node of a
 * header is inserted under its short and its long form, leading to the same
 * child, so that a lookup costs one probe per node of the header whatever
 * the tree's size. The file is input: every line is checked, and a bad one
 * is refused with its line number. A method's command is a parameter of
 * kind METHOD pointing at its method record (arguments, error
 * enumerators), so headers and conflicts treat both alike. One thread
 * builds the tree; it is read-only afterwards.
 */
#include "scpi-internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 1024
#define FIELDS_MAX 8

/* Method records come in order: method, in*, out*, error*, header*. */
enum method_phase { PHASE_IN, PHASE_OUT, PHASE_ERROR, PHASE_HEADER };

struct loader {
	struct pbus_scpi_tree *tree;
	unsigned line;
	char *error;
	size_t error_size;
	struct pbus_scpi_param *enum_owner; /* the record `enum` lines belong to */
	struct pbus_scpi_method *method;    /* the method whose records follow */
	enum method_phase phase;
};

struct counts {
	size_t params, mnemonics, nodes, status, methods, args, labels;
};

static int fail(struct loader *l, const char *format, ...)
{
	if (l->error_size > 0) {
		int n = snprintf(l->error, l->error_size, "line %u: ", l->line);
		if (n >= 0 && (size_t)n < l->error_size) {
			va_list ap;
			va_start(ap, format);
			vsnprintf(l->error + n, l->error_size - (size_t)n, format, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static uint64_t edge_hash(uint32_t parent, uint32_t suffix, const char *form, size_t length)
{
	uint64_t h = 0xcbf29ce484222325u;
	uint32_t words[2] = {parent, suffix};
	const unsigned char *p = (const unsigned char *)words;
	for (size_t i = 0; i < sizeof(words); i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	for (size_t i = 0; i < length; i++)
		h = (h ^ (unsigned char)form[i]) * 0x100000001b3u;
	return h;
}

static size_t edge_slot(const struct pbus_scpi_tree *tree, uint32_t parent, uint32_t suffix,
			const char *form, size_t length)
{
	size_t mask = tree->edge_capacity - 1;
	size_t i = (size_t)edge_hash(parent, suffix, form, length) & mask;
	for (;;) {
		const struct scpi_edge *e = &tree->edges[i];
		if (e->parent == SCPI_NONE ||
		    (e->parent == parent && e->suffix == suffix && e->length == length &&
		     memcmp(e->form, form, length) == 0))
			return i;
		i = (i + 1) & mask;
	}
}

const struct scpi_edge *scpi_edge_find(const struct pbus_scpi_tree *tree, uint32_t parent,
				       uint32_t suffix, const char *form, size_t length)
{
	if (length == 0 || length > PBUS_SCPI_MNEMONIC_MAX)
		return NULL;
	const struct scpi_edge *e = &tree->edges[edge_slot(tree, parent, suffix, form, length)];
	return e->parent == SCPI_NONE ? NULL : e;
}

/* The edge (parent, suffix, form), created to child if missing. */
static struct scpi_edge *edge_put(struct pbus_scpi_tree *tree, uint32_t parent, uint32_t suffix,
				  const char *form, size_t length, uint32_t child)
{
	struct scpi_edge *e = &tree->edges[edge_slot(tree, parent, suffix, form, length)];
	if (e->parent == SCPI_NONE) {
		e->parent = parent;
		e->suffix = suffix;
		e->child = child;
		e->length = (uint8_t)length;
		memcpy(e->form, form, length);
	}
	return e;
}

static int split(char *line, char **fields, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (n == max)
			return -1;
		fields[n++] = t;
	}
	return n;
}

static int number(const char *text, uint64_t max, uint64_t *ret)
{
	if (!*text || strlen(text) > 20)
		return -1;
	uint64_t v = 0;
	for (const char *p = text; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	return 0;
}

struct type_info {
	const char *token;
	enum pbus_scpi_kind kind;
	int64_t min, max;
};

static const struct type_info TYPES[] = {
	{"bool", PBUS_SCPI_KIND_BOOL, 0, 1},
	{"int8", PBUS_SCPI_KIND_INTEGER, INT8_MIN, INT8_MAX},
	{"uint8", PBUS_SCPI_KIND_INTEGER, 0, UINT8_MAX},
	{"int16", PBUS_SCPI_KIND_INTEGER, INT16_MIN, INT16_MAX},
	{"uint16", PBUS_SCPI_KIND_INTEGER, 0, UINT16_MAX},
	{"int32", PBUS_SCPI_KIND_INTEGER, INT32_MIN, INT32_MAX},
	{"uint32", PBUS_SCPI_KIND_INTEGER, 0, UINT32_MAX},
	{"int64", PBUS_SCPI_KIND_INTEGER, INT64_MIN, INT64_MAX},
	{"uint64", PBUS_SCPI_KIND_INTEGER, 0, INT64_MAX},
	{"float", PBUS_SCPI_KIND_REAL, 0, 0},
	{"double", PBUS_SCPI_KIND_REAL, 0, 0},
	{"string", PBUS_SCPI_KIND_STRING, 0, 0},
	{"bytes", PBUS_SCPI_KIND_BYTES, 0, 0},
	{"enum", PBUS_SCPI_KIND_ENUM, 0, 0},
	{"none", PBUS_SCPI_KIND_NONE, 0, 0},
};

/* A mnemonic as the tree writes it: upper-case head, lower-case tail (and
 * digits or '_' after the first letter for enumerators). */
static int mnemonic(const char *text, size_t length, bool enumerator, uint8_t *short_length)
{
	if (length == 0 || length > PBUS_SCPI_MNEMONIC_MAX || !isupper((unsigned char)text[0]))
		return -1;
	size_t i = 0;
	while (i < length && (isupper((unsigned char)text[i]) ||
			      (enumerator && i > 0 && (isdigit((unsigned char)text[i]) || text[i] == '_'))))
		i++;
	*short_length = (uint8_t)i;
	for (; i < length; i++)
		if (!(islower((unsigned char)text[i]) ||
		      (enumerator && (isdigit((unsigned char)text[i]) || text[i] == '_'))))
			return -1;
	return 0;
}

static int param_line(struct loader *l, char **f, int n)
{
	struct pbus_scpi_tree *tree = l->tree;
	if (n != 6 && n != 8)
		return fail(l, "'param' needs INDEX NAME TYPE ACCESS COUNT [UNIT FACTOR]");
	struct pbus_scpi_param *p = &tree->params[tree->param_count];
	memset(p, 0, sizeof(*p));
	uint64_t v;
	if (number(f[1], UINT32_MAX, &v) < 0)
		return fail(l, "bad parameter index '%.20s'", f[1]);
	p->index = (uint32_t)v;
	if (strlen(f[2]) >= sizeof(p->name))
		return fail(l, "parameter name too long");
	strcpy(p->name, f[2]);
	size_t tlen = strlen(f[3]);
	if (tlen >= sizeof(p->type))
		return fail(l, "unknown type '%.20s'", f[3]);
	strcpy(p->type, f[3]);
	p->is_array = tlen > 2 && strcmp(f[3] + tlen - 2, "[]") == 0;
	size_t base = p->is_array ? tlen - 2 : tlen;
	const struct type_info *t = NULL;
	for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
		if (strlen(TYPES[i].token) == base && memcmp(TYPES[i].token, f[3], base) == 0)
			t = &TYPES[i];
	if (!t || (p->is_array && t->kind != PBUS_SCPI_KIND_INTEGER &&
		   t->kind != PBUS_SCPI_KIND_REAL && t->kind != PBUS_SCPI_KIND_BOOL))
		return fail(l, "unknown type '%.20s'", f[3]);
	p->kind = t->kind;
	p->int_min = t->min;
	p->int_max = t->max;
	if (strcmp(f[4], "query") == 0)
		p->access = PBUS_SCPI_ACCESS_QUERY;
	else if (strcmp(f[4], "set") == 0)
		p->access = PBUS_SCPI_ACCESS_SET;
	else if (strcmp(f[4], "both") == 0)
		p->access = PBUS_SCPI_ACCESS_BOTH;
	else
		return fail(l, "unknown access '%.20s'", f[4]);
	if (p->kind == PBUS_SCPI_KIND_NONE && (p->is_array || p->access != PBUS_SCPI_ACCESS_SET))
		return fail(l, "type 'none' is a scalar set-only command");
	if (number(f[5], 65536, &v) < 0 || (v == 0) == p->is_array)
		return fail(l, "bad count '%.20s'", f[5]);
	p->count = (uint32_t)v;
	p->unit_factor = 1.0;
	if (n == 8) {
		if (strlen(f[6]) >= sizeof(p->unit))
			return fail(l, "unit '%.20s' too long", f[6]);
		for (const char *c = f[6]; *c; c++)
			if (!isupper((unsigned char)*c))
				return fail(l, "unit '%.20s' is not upper-case letters", f[6]);
		strcpy(p->unit, f[6]);
		char *end;
		errno = 0;
		p->unit_factor = strtod(f[7], &end);
		if (*end || errno || !(p->unit_factor > 0) || !isfinite(p->unit_factor))
			return fail(l, "bad unit factor '%.20s'", f[7]);
	}
	p->mnemonics = tree->mnemonics + tree->mnemonic_count;
	tree->param_count++;
	l->method = NULL;
	l->enum_owner = p->kind == PBUS_SCPI_KIND_ENUM ? p : NULL;
	return 0;
}

static int access_word(const char *word, unsigned *ret)
{
	if (strcmp(word, "query") == 0)
		*ret = PBUS_SCPI_ACCESS_QUERY;
	else if (strcmp(word, "set") == 0)
		*ret = PBUS_SCPI_ACCESS_SET;
	else if (strcmp(word, "both") == 0)
		*ret = PBUS_SCPI_ACCESS_BOTH;
	else
		return -1;
	return 0;
}

/* method INDEX NAME ACCESS: a METHOD parameter and its method record. */
static int method_line(struct loader *l, char **f, int n)
{
	struct pbus_scpi_tree *tree = l->tree;
	if (n != 4)
		return fail(l, "'method' needs INDEX NAME ACCESS");
	struct pbus_scpi_param *p = &tree->params[tree->param_count];
	struct pbus_scpi_method *m = &tree->methods[tree->method_count];
	memset(p, 0, sizeof(*p));
	memset(m, 0, sizeof(*m));
	uint64_t v;
	if (number(f[1], UINT16_MAX, &v) < 0)
		return fail(l, "bad method index '%.20s'", f[1]);
	p->index = m->index = (uint32_t)v;
	if (strlen(f[2]) >= sizeof(p->name))
		return fail(l, "method name too long");
	strcpy(p->name, f[2]);
	strcpy(p->type, "method");
	p->kind = PBUS_SCPI_KIND_METHOD;
	if (access_word(f[3], &p->access) < 0 || p->access == PBUS_SCPI_ACCESS_BOTH)
		return fail(l, "a method's access is 'set' or 'query', not '%.20s'", f[3]);
	p->unit_factor = 1.0;
	p->method = m;
	m->in = m->out = tree->args + tree->arg_count;
	m->errors = tree->labels + tree->label_count;
	tree->param_count++;
	tree->method_count++;
	l->method = m;
	l->phase = PHASE_IN;
	l->enum_owner = NULL;
	return 0;
}

/* in|out INDEX NAME TYPE: an argument of the method just read. */
static int arg_line(struct loader *l, char **f, int n, bool out)
{
	struct pbus_scpi_tree *tree = l->tree;
	struct pbus_scpi_method *m = l->method;
	uint64_t index;
	if (n != 4 || number(f[1], UINT32_MAX, &index) < 0)
		return fail(l, "'%s' needs INDEX NAME TYPE", f[0]);
	if (!m || m->index != index || l->phase > (out ? PHASE_OUT : PHASE_IN))
		return fail(l, "'%s' does not follow the 'method' line of its method (or its "
			       "in-arguments)", f[0]);
	const struct pbus_scpi_param *owner = &tree->params[tree->param_count - 1];
	if (out && owner->access != PBUS_SCPI_ACCESS_QUERY)
		return fail(l, "'out' of a 'set' method: its reply is discarded");
	struct pbus_scpi_param *a = &tree->args[tree->arg_count];
	memset(a, 0, sizeof(*a));
	a->index = (uint32_t)(out ? m->out_count : m->in_count);
	if (strlen(f[2]) >= sizeof(a->name))
		return fail(l, "argument name too long");
	strcpy(a->name, f[2]);
	a->unit_factor = 1.0;
	a->access = PBUS_SCPI_ACCESS_SET;
	const char *type = f[3];
	if (strncmp(type, "integer:", 8) == 0) {
		/* Franca Integer(lo, hi): i64, or u64 when lo >= 0 and hi > 2^63-1
		 * (docs/methods.md §4); either bound may be empty (unbounded) */
		const char *lo = type + 8, *colon = strchr(lo, ':');
		if (!colon)
			return fail(l, "bad type '%.40s'", type);
		long long bounds[2] = {INT64_MIN, INT64_MAX};
		bool wide = false;
		const char *text[2] = {lo, colon + 1};
		size_t len[2] = {(size_t)(colon - lo), strlen(colon + 1)};
		for (int k = 0; k < 2; k++) {
			if (!len[k])
				continue;
			char buf[32], *end;
			if (len[k] >= sizeof(buf))
				return fail(l, "bad type '%.40s'", type);
			memcpy(buf, text[k], len[k]);
			buf[len[k]] = 0;
			errno = 0;
			bounds[k] = strtoll(buf, &end, 10);
			if (*end || end == buf)
				return fail(l, "bad type '%.40s'", type);
			if (errno == ERANGE && k == 1 && buf[0] != '-') {
				wide = true; /* above INT64_MAX: a u64 on the wire */
				bounds[1] = INT64_MAX;
			} else if (errno) {
				return fail(l, "bad type '%.40s'", type);
			}
		}
		if (bounds[0] > bounds[1])
			return fail(l, "bad type '%.40s'", type);
		a->kind = PBUS_SCPI_KIND_INTEGER;
		strcpy(a->type, wide && bounds[0] >= 0 ? "uint64" : "int64");
		a->int_min = bounds[0];
		a->int_max = bounds[1];
	} else {
		const struct type_info *t = NULL;
		for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
			if (strcmp(TYPES[i].token, type) == 0)
				t = &TYPES[i];
		if (!t || t->kind == PBUS_SCPI_KIND_NONE)
			return fail(l, "argument type '%.40s' is no SCPI value", type);
		strcpy(a->type, t->token);
		a->kind = t->kind;
		a->int_min = t->min;
		a->int_max = t->max;
	}
	a->mnemonics = tree->mnemonics + tree->mnemonic_count;
	tree->arg_count++;
	if (out) {
		if (l->phase == PHASE_IN) {
			m->out = a;
			l->phase = PHASE_OUT;
		}
		m->out_count++;
	} else {
		m->in_count++;
		m->out = m->in + m->in_count;
	}
	l->enum_owner = a->kind == PBUS_SCPI_KIND_ENUM ? a : NULL;
	return 0;
}

/* error INDEX VALUE LABEL: an enumerator of the method's error enumeration. */
static int error_line(struct loader *l, char **f, int n)
{
	struct pbus_scpi_tree *tree = l->tree;
	struct pbus_scpi_method *m = l->method;
	uint64_t index;
	if (n != 4 || number(f[1], UINT32_MAX, &index) < 0)
		return fail(l, "'error' needs INDEX VALUE LABEL");
	if (!m || m->index != index || l->phase > PHASE_ERROR)
		return fail(l, "'error' does not follow the arguments of its method");
	struct pbus_scpi_label *e = &tree->labels[tree->label_count];
	char *end;
	errno = 0;
	long long value = strtoll(f[2], &end, 10);
	if (*end || errno || end == f[2])
		return fail(l, "bad enumerator value '%.20s'", f[2]);
	size_t len = strlen(f[3]);
	if (len == 0 || len >= sizeof(e->text))
		return fail(l, "error label '%.20s' longer than %zu bytes", f[3], sizeof(e->text) - 1);
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)f[3][i]) && f[3][i] != '_')
			return fail(l, "bad error label '%.20s'", f[3]);
	e->value = value;
	memcpy(e->text, f[3], len + 1);
	tree->label_count++;
	m->error_count++;
	l->phase = PHASE_ERROR;
	l->enum_owner = NULL;
	return 0;
}

static int enum_line(struct loader *l, char **f, int n)
{
	struct pbus_scpi_tree *tree = l->tree;
	struct pbus_scpi_param *p = l->enum_owner;
	uint64_t index;
	if (n != 4 || number(f[1], UINT32_MAX, &index) < 0)
		return fail(l, "'enum' needs INDEX VALUE MNEMONIC");
	if (!p || (l->method ? l->method->index : p->index) != index)
		return fail(l, "'enum' does not follow the 'param', 'in' or 'out' line of its "
			       "enumeration");
	struct pbus_scpi_mnemonic *m = &tree->mnemonics[tree->mnemonic_count];
	char *end;
	errno = 0;
	long long value = strtoll(f[2], &end, 10);
	if (*end || errno || end == f[2])
		return fail(l, "bad enumerator value '%.20s'", f[2]);
	m->value = value;
	size_t len = strlen(f[3]);
	if (mnemonic(f[3], len, true, &m->short_length) < 0)
		return fail(l, "bad mnemonic '%.20s'", f[3]);
	memcpy(m->text, f[3], len + 1);
	for (size_t i = 0; i < p->mnemonic_count; i++) {
		const struct pbus_scpi_mnemonic *o = &p->mnemonics[i];
		if (strcasecmp(o->text, m->text) == 0 ||
		    (o->short_length == m->short_length &&
		     strncasecmp(o->text, m->text, m->short_length) == 0))
			return fail(l, "mnemonic '%s' collides with '%s'", m->text, o->text);
	}
	tree->mnemonic_count++;
	p->mnemonic_count++;
	return 0;
}

static int header_line(struct loader *l, char **f, int n)
{
	struct pbus_scpi_tree *tree = l->tree;
	uint64_t index;
	if (n != 3 || number(f[1], UINT32_MAX, &index) < 0)
		return fail(l, "'header' needs INDEX NODE:NODE...");
	if (tree->param_count == 0 || tree->params[tree->param_count - 1].index != index)
		return fail(l, "'header' does not follow the 'param' line of its parameter");
	uint32_t slot = (uint32_t)(tree->param_count - 1);
	const struct pbus_scpi_param *p = &tree->params[slot];
	if (l->method)
		l->phase = PHASE_HEADER;
	l->enum_owner = NULL;
	uint32_t node = 0;
	unsigned nodes = 0, any = 0;
	char *save = NULL;
	for (char *t = strtok_r(f[2], ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		if (++nodes > PBUS_SCPI_NODES_MAX)
			return fail(l, "more than %d nodes", PBUS_SCPI_NODES_MAX);
		size_t len = 0;
		while (isalpha((unsigned char)t[len]))
			len++;
		uint8_t short_length;
		if (mnemonic(t, len, false, &short_length) < 0)
			return fail(l, "bad node '%.20s'", t);
		uint32_t suffix = 1;
		if (strcmp(t + len, "#") == 0) {
			suffix = SCPI_SUFFIX_ANY;
			any++;
		} else if (t[len]) {
			uint64_t v;
			if (t[len] == '0' || number(t + len, 999999, &v) < 0)
				return fail(l, "bad suffix in node '%.20s'", t);
			suffix = (uint32_t)v;
		}
		char upper[PBUS_SCPI_MNEMONIC_MAX];
		for (size_t i = 0; i < len; i++)
			upper[i] = (char)toupper((unsigned char)t[i]);
		const struct scpi_edge *e = scpi_edge_find(tree, node, suffix, upper, len);
		const struct scpi_edge *s = scpi_edge_find(tree, node, suffix, upper, short_length);
		uint32_t child;
		if (e && s && e->child != s->child)
			return fail(l, "node '%.20s' is ambiguous with another node of the tree", t);
		if (e || s) {
			child = e ? e->child : s->child;
			/* the other form must not belong to another mnemonic */
		} else {
			if (tree->node_count == tree->node_capacity)
				return fail(l, "too many nodes");
			child = (uint32_t)tree->node_count++;
			tree->nodes[child].query_param = SCPI_NONE;
			tree->nodes[child].set_param = SCPI_NONE;
		}
		if ((e == NULL) != (s == NULL) && len != short_length)
			return fail(l, "node '%.20s' shares a form with another mnemonic", t);
		edge_put(tree, node, suffix, upper, len, child);
		edge_put(tree, node, suffix, upper, short_length, child);
		edge_put(tree, node, SCPI_SUFFIX_MARK, upper, len, child);
		edge_put(tree, node, SCPI_SUFFIX_MARK, upper, short_length, child);
		node = child;
	}
	if (nodes == 0)
		return fail(l, "empty header");
	if (any > 1 || (any == 1) != (p->is_array && p->count > 0 && any == 1))
		return fail(l, "'#' needs an array parameter, once");
	struct scpi_node *leaf = &tree->nodes[node];
	if (p->access & PBUS_SCPI_ACCESS_QUERY) {
		if (leaf->query_param != SCPI_NONE && leaf->query_param != slot)
			return fail(l, "header queried by two parameters");
		leaf->query_param = slot;
	}
	if (p->access & PBUS_SCPI_ACCESS_SET) {
		if (leaf->set_param != SCPI_NONE && leaf->set_param != slot)
			return fail(l, "header set by two parameters");
		leaf->set_param = slot;
	}
	return 0;
}

/* status REGISTER BIT INDEX CONDITION */
static int status_line(struct loader *l, char **f, int n)
{
	static const char *const LEVELS[] = {"nonzero", "minor", "major", "invalid"};
	struct pbus_scpi_tree *tree = l->tree;
	struct pbus_scpi_status_source *s = &tree->status[tree->status_count];
	uint64_t v;
	if (n != 5)
		return fail(l, "'status' needs REGISTER BIT INDEX CONDITION");
	if (strcmp(f[1], "questionable") == 0)
		s->reg = PBUS_SCPI_REGISTER_QUESTIONABLE;
	else if (strcmp(f[1], "operation") == 0)
		s->reg = PBUS_SCPI_REGISTER_OPERATION;
	else
		return fail(l, "unknown status register '%.20s'", f[1]);
	if (number(f[2], 14, &v) < 0 || v == 13)
		return fail(l, "bad status bit '%.20s' (0 to 12, or 14)", f[2]);
	s->bit = (unsigned)v;
	if (number(f[3], UINT32_MAX, &v) < 0)
		return fail(l, "bad parameter index '%.20s'", f[3]);
	s->index = (uint32_t)v;
	size_t k;
	for (k = 0; k < 4 && strcmp(f[4], LEVELS[k]) != 0; k++)
		;
	if (k == 4)
		return fail(l, "unknown status condition '%.20s'", f[4]);
	s->min_status = (unsigned)k;
	tree->status_count++;
	l->method = NULL;
	l->enum_owner = NULL;
	return 0;
}

static int load_lines(struct loader *l, const char *text, size_t length, struct counts *count)
{
	bool count_only = count != NULL;
	char line[LINE_MAX_BYTES + 1];
	size_t pos = 0;
	bool magic = false, schema = false;
	l->line = 0;
	l->method = NULL;
	l->enum_owner = NULL;
	while (pos < length) {
		const char *nl = memchr(text + pos, '\n', length - pos);
		if (!nl)
			return (l->line++, fail(l, "no newline at the end of the file"));
		size_t len = (size_t)(nl - (text + pos));
		l->line++;
		if (len > LINE_MAX_BYTES)
			return fail(l, "longer than %d bytes", LINE_MAX_BYTES);
		memcpy(line, text + pos, len);
		line[len] = 0;
		pos += len + 1;
		if (memchr(line, 0, len))
			return fail(l, "NUL byte");
		if (len == 0 || line[0] == '#')
			continue;
		char *f[FIELDS_MAX];
		int n = split(line, f, FIELDS_MAX);
		if (n <= 0)
			return fail(l, "too many fields");
		if (!magic) {
			uint64_t v;
			if (n != 2 || strcmp(f[0], "pbus-scpi-tree") != 0)
				return fail(l, "not a pbus-scpi-tree file");
			if (number(f[1], 1000, &v) < 0 || v != PBUS_SCPI_TREE_VERSION)
				return fail(l, "unsupported version '%.20s' (this reads %d)", f[1],
					    PBUS_SCPI_TREE_VERSION);
			magic = true;
			continue;
		}
		if (!schema) {
			char *end;
			if (n != 2 || strcmp(f[0], "schema") != 0 || strlen(f[1]) != 16)
				return fail(l, "expected 'schema HASH'");
			errno = 0;
			unsigned long long h = strtoull(f[1], &end, 16);
			if (*end || errno)
				return fail(l, "bad schema hash");
			l->tree->schema_hash = h;
			schema = true;
			continue;
		}
		int r = 0;
		if (strcmp(f[0], "param") == 0)
			r = count_only ? (count->params++, 0) : param_line(l, f, n);
		else if (strcmp(f[0], "enum") == 0)
			r = count_only ? (count->mnemonics++, 0) : enum_line(l, f, n);
		else if (strcmp(f[0], "header") == 0)
			r = count_only ? (count->nodes += PBUS_SCPI_NODES_MAX, 0) : header_line(l, f, n);
		else if (strcmp(f[0], "status") == 0)
			r = count_only ? (count->status++, 0) : status_line(l, f, n);
		else if (strcmp(f[0], "method") == 0)
			r = count_only ? (count->params++, count->methods++, 0) : method_line(l, f, n);
		else if (strcmp(f[0], "in") == 0 || strcmp(f[0], "out") == 0)
			r = count_only ? (count->args++, 0) : arg_line(l, f, n, f[0][0] == 'o');
		else if (strcmp(f[0], "error") == 0)
			r = count_only ? (count->labels++, 0) : error_line(l, f, n);
		else
			r = fail(l, "unknown record '%.20s'", f[0]);
		if (r < 0)
			return r;
	}
	if (!schema)
		return (l->line++, fail(l, "no 'pbus-scpi-tree' and 'schema' lines"));
	return 0;
}

int pbus_scpi_tree_load(const char *text, size_t length, struct pbus_scpi_tree **ret_tree,
			char *error, size_t error_size)
{
	if ((!text && length) || !ret_tree || (!error && error_size))
		return -EINVAL;
	if (error_size)
		error[0] = 0;
	struct pbus_scpi_tree *tree = calloc(1, sizeof(*tree));
	if (!tree)
		return -ENOMEM;
	struct loader l = {tree, 0, error, error_size, NULL, NULL, PHASE_IN};
	struct counts c = {.nodes = 1};
	int r = load_lines(&l, text, length, &c);
	if (r < 0)
		goto out;
	/* Each node inserts at most four edges; keep the table at most half full. */
	size_t capacity = 16;
	while (capacity < c.nodes * 8)
		capacity *= 2;
	tree->params = calloc(c.params ? c.params : 1, sizeof(*tree->params));
	tree->mnemonics = calloc(c.mnemonics ? c.mnemonics : 1, sizeof(*tree->mnemonics));
	tree->nodes = calloc(c.nodes, sizeof(*tree->nodes));
	tree->edges = calloc(capacity, sizeof(*tree->edges));
	tree->status = calloc(c.status ? c.status : 1, sizeof(*tree->status));
	tree->methods = calloc(c.methods ? c.methods : 1, sizeof(*tree->methods));
	tree->args = calloc(c.args ? c.args : 1, sizeof(*tree->args));
	tree->labels = calloc(c.labels ? c.labels : 1, sizeof(*tree->labels));
	r = -ENOMEM;
	if (!tree->params || !tree->mnemonics || !tree->nodes || !tree->edges || !tree->status ||
	    !tree->methods || !tree->args || !tree->labels)
		goto out;
	tree->node_capacity = c.nodes;
	tree->node_count = 1;
	tree->nodes[0].query_param = tree->nodes[0].set_param = SCPI_NONE;
	tree->edge_capacity = capacity;
	for (size_t i = 0; i < capacity; i++)
		tree->edges[i].parent = SCPI_NONE;
	r = load_lines(&l, text, length, NULL);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < tree->param_count; i++)
		if (tree->params[i].kind == PBUS_SCPI_KIND_ENUM && tree->params[i].mnemonic_count == 0) {
			l.line = 0;
			r = fail(&l, "enumeration '%s' has no 'enum' lines", tree->params[i].name);
			goto out;
		}
	for (size_t i = 0; i < tree->arg_count; i++)
		if (tree->args[i].kind == PBUS_SCPI_KIND_ENUM && tree->args[i].mnemonic_count == 0) {
			l.line = 0;
			r = fail(&l, "argument '%s' has no 'enum' lines", tree->args[i].name);
			goto out;
		}
	for (size_t i = 0; i < tree->param_count; i++) {
		const struct pbus_scpi_param *p = &tree->params[i];
		if (p->kind == PBUS_SCPI_KIND_METHOD && p->access == PBUS_SCPI_ACCESS_QUERY &&
		    p->method->out_count == 0) {
			l.line = 0;
			r = fail(&l, "query method '%s' has no 'out' lines", p->name);
			goto out;
		}
	}
	*ret_tree = tree;
	return 0;
out:
	pbus_scpi_tree_free(tree);
	return r;
}

void pbus_scpi_tree_free(struct pbus_scpi_tree *tree)
{
	if (!tree)
		return;
	free(tree->params);
	free(tree->mnemonics);
	free(tree->nodes);
	free(tree->edges);
	free(tree->status);
	free(tree->methods);
	free(tree->args);
	free(tree->labels);
	free(tree);
}

uint64_t pbus_scpi_tree_schema_hash(const struct pbus_scpi_tree *tree)
{
	return tree ? tree->schema_hash : 0;
}

size_t pbus_scpi_tree_param_count(const struct pbus_scpi_tree *tree)
{
	return tree ? tree->param_count : 0;
}

const struct pbus_scpi_param *pbus_scpi_tree_param(const struct pbus_scpi_tree *tree, size_t i)
{
	return tree && i < tree->param_count ? &tree->params[i] : NULL;
}

size_t pbus_scpi_tree_method_count(const struct pbus_scpi_tree *tree)
{
	return tree ? tree->method_count : 0;
}

const struct pbus_scpi_method *pbus_scpi_tree_method(const struct pbus_scpi_tree *tree, size_t i)
{
	return tree && i < tree->method_count ? &tree->methods[i] : NULL;
}

size_t pbus_scpi_tree_status_count(const struct pbus_scpi_tree *tree)
{
	return tree ? tree->status_count : 0;
}

const struct pbus_scpi_status_source *pbus_scpi_tree_status(const struct pbus_scpi_tree *tree,
							    size_t i)
{
	return tree && i < tree->status_count ? &tree->status[i] : NULL;
}
