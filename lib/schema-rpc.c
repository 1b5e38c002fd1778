/* SPDX-License-Identifier: MIT */
/*
 * schema-rpc.c: the type, method and broadcast records of a compiled schema
 * (docs/schema-format.md, "Methods and broadcasts"): what a program without
 * generated code (`pbus call`, the JSON codec of rpc-json.c) needs to encode
 * and decode an interface's arguments.
 *
 * Every type reference is resolved when it is read: a named type that has
 * no record yet gets an entry of kind UNDEFINED that its record fills in
 * later (types may refer to each other in any order, and to themselves);
 * anonymous types (basic types, Integer ranges, implicit arrays) are
 * entered once per reference text. The table is indexed, never pointed
 * into, since it grows. At the end every entry must be defined, and the
 * derived facts are computed once: the concrete structs of each
 * polymorphic struct, the minimal encoded size of each type (the count
 * checks of docs/methods.md §4), and that no struct or union holds itself
 * by value.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc.h>
#include <parambus/schema.h>

#include "schema-internal.h"
#include "text-internal.h"

#define CALLS_MAX 65535u  /* methods, broadcasts: u16 numbers on the wire */
#define ARGS_MAX 1024u    /* arguments of one method or broadcast, fields of one type */

struct ctx {
	struct pbus_schema *s;
	char *error;
	size_t error_size;
	const char *source;
	unsigned line;
};

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->error && c->error_size) {
		if (c->line)
			snprintf(c->error, c->error_size, "%s:%u: %s", c->source, c->line, msg);
		else
			snprintf(c->error, c->error_size, "%s: %s", c->source, msg);
	}
	return -EINVAL;
}

static const char *const basic_names[] = {
	"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
	"int64", "uint64", "float", "double", "string", "bytes",
};
static const size_t basic_sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 4};

static bool identifier(const char *name)
{
	if (!*name || !((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_'))
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return strlen(name) <= 255;
}

/* A fully qualified name: identifiers joined by dots, at least one dot. */
static bool fqn_valid(const char *name)
{
	size_t n = strlen(name);
	bool start = true, dot = false;

	if (n == 0 || n > 255)
		return false;
	for (const char *p = name; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';

		if (*p == '.') {
			if (start)
				return false;
			start = dot = true;
		} else if (!(alpha || (!start && *p >= '0' && *p <= '9'))) {
			return false;
		} else {
			start = false;
		}
	}
	return dot && !start;
}

uint32_t pbus_schema_type_find(const struct pbus_schema *s, const char *ref)
{
	if (!s || !ref)
		return PBUS_SCHEMA_NO_TYPE;
	for (uint32_t i = 0; i < s->type_count; i++)
		if (!strcmp(s->types[i].name, ref))
			return i;
	return PBUS_SCHEMA_NO_TYPE;
}

static int add_type(struct ctx *c, const char *name, unsigned kind, uint32_t *ret)
{
	struct pbus_schema *s = c->s;

	if (s->type_count >= PBUS_SCHEMA_TYPES_MAX)
		return fail(c, "more than %u types", PBUS_SCHEMA_TYPES_MAX);
	if (s->type_count == s->type_capacity) {
		uint32_t n = s->type_capacity ? s->type_capacity * 2 : 32;
		struct pbus_schema_type *t = realloc(s->types, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		s->types = t;
		s->type_capacity = n;
	}
	memset(&s->types[s->type_count], 0, sizeof(s->types[0]));
	s->types[s->type_count].name = strdup(name);
	if (!s->types[s->type_count].name)
		return -ENOMEM;
	s->types[s->type_count].kind = kind;
	s->types[s->type_count].line = c->line;
	s->types[s->type_count].element = s->types[s->type_count].key =
		s->types[s->type_count].value = PBUS_SCHEMA_NO_TYPE;
	*ret = s->type_count++;
	return 0;
}

/* An Integer bound: empty (unbounded), or a decimal in int64 or uint64. */
static int parse_bound(const char *text, bool *negative, uint64_t *magnitude_or_value)
{
	char *end;

	if (!*text)
		return 1;
	errno = 0;
	if (*text == '-') {
		long long v = strtoll(text, &end, 10);

		if (text[1] < '0' || text[1] > '9' || *end || errno)
			return -EINVAL;
		*negative = v < 0;
		*magnitude_or_value = (uint64_t)v;
		return 0;
	}
	if (*text < '0' || *text > '9')
		return -EINVAL;
	*magnitude_or_value = strtoull(text, &end, 10);
	if (*end || errno)
		return -EINVAL;
	*negative = false;
	return 0;
}

/* "integer" or "integer:LO:HI" (either side empty: unbounded), as
 * pbus-gen's RPC middle stage maps Franca's Integer(lo, hi): u64 on the
 * wire when lo >= 0 and hi > INT64_MAX, else i64; a bound is checked
 * when it is inside the wire type's range. */
static int parse_integer(struct ctx *c, const char *ref, struct pbus_schema_type *t)
{
	char lo_text[32], hi_text[32];
	const char *colon;
	bool lo_neg = true, hi_neg = false;
	uint64_t lo = (uint64_t)INT64_MIN, hi = (uint64_t)INT64_MAX;
	int r1, r2;

	t->kind = PBUS_SCHEMA_KIND_INTEGER;
	if (!strcmp(ref, "integer"))
		return 0;
	colon = strchr(ref + 8, ':');
	if (!colon || (size_t)(colon - (ref + 8)) >= sizeof(lo_text) || strlen(colon + 1) >= sizeof(hi_text))
		return fail(c, "malformed Integer type '%s' (integer:LO:HI)", ref);
	memcpy(lo_text, ref + 8, (size_t)(colon - (ref + 8)));
	lo_text[colon - (ref + 8)] = 0;
	strcpy(hi_text, colon + 1);
	r1 = parse_bound(lo_text, &lo_neg, &lo);
	r2 = parse_bound(hi_text, &hi_neg, &hi);
	if (r1 < 0 || r2 < 0)
		return fail(c, "malformed Integer type '%s' (bounds are 64-bit integers)", ref);
	if (r1 > 0)
		lo_neg = true, lo = (uint64_t)INT64_MIN;
	if (r2 > 0)
		hi_neg = false, hi = (uint64_t)INT64_MAX;
	/* lo > hi? compare as signed/unsigned 65-bit numbers */
	if ((!lo_neg && hi_neg) || (lo_neg == hi_neg && (lo_neg ? (int64_t)lo > (int64_t)hi : lo > hi)))
		return fail(c, "Integer type '%s': lower bound above upper bound", ref);
	if (!lo_neg && hi > (uint64_t)INT64_MAX) {
		t->is_unsigned = true;
		t->has_lo = lo > 0;
		t->has_hi = hi < UINT64_MAX;
	} else {
		if (!lo_neg && lo > (uint64_t)INT64_MAX)
			return fail(c, "Integer type '%s': lower bound above upper bound", ref);
		if (!hi_neg && hi > (uint64_t)INT64_MAX)
			hi = (uint64_t)INT64_MAX;
		t->has_lo = (int64_t)lo > INT64_MIN;
		t->has_hi = (int64_t)hi < INT64_MAX;
	}
	t->lo = lo;
	t->hi = hi;
	return 0;
}

/* Resolve reference text @ref (percent-decoded) to a type index. */
static int resolve(struct ctx *c, const char *ref, uint32_t *ret)
{
	struct pbus_schema *s = c->s;
	uint32_t i = pbus_schema_type_find(s, ref), element;
	size_t n = strlen(ref);
	int r;

	if (i != PBUS_SCHEMA_NO_TYPE) {
		*ret = i;
		return 0;
	}
	if (n > 2 && !strcmp(ref + n - 2, "[]")) {
		char *inner = strndup(ref, n - 2);

		if (!inner)
			return -ENOMEM;
		r = resolve(c, inner, &element);
		free(inner);
		if (r < 0)
			return r;
		if ((r = add_type(c, ref, PBUS_SCHEMA_KIND_ARRAY, &i)) < 0)
			return r;
		s->types[i].element = element;
		*ret = i;
		return 0;
	}
	for (unsigned k = 0; k < sizeof(basic_names) / sizeof(basic_names[0]); k++)
		if (!strcmp(ref, basic_names[k]))
			return add_type(c, ref, k, ret);
	if (!strcmp(ref, "integer") || !strncmp(ref, "integer:", 8)) {
		struct pbus_schema_type t = {0};

		if ((r = parse_integer(c, ref, &t)) < 0)
			return r;
		if ((r = add_type(c, ref, PBUS_SCHEMA_KIND_INTEGER, &i)) < 0)
			return r;
		s->types[i].is_unsigned = t.is_unsigned;
		s->types[i].has_lo = t.has_lo;
		s->types[i].has_hi = t.has_hi;
		s->types[i].lo = t.lo;
		s->types[i].hi = t.hi;
		*ret = i;
		return 0;
	}
	if (!fqn_valid(ref))
		return fail(c, "'%s' is not a type (a basic type, integer:LO:HI, a fully qualified name, "
			       "or one of these followed by [])", ref);
	if ((r = add_type(c, ref, PBUS_SCHEMA_KIND_UNDEFINED, &i)) < 0)
		return r;
	s->types[i].named = true;
	*ret = i;
	return 0;
}

/* "name:ref" (percent-decoded in place) into @m. */
static int parse_member(struct ctx *c, char *text, const char *what, struct pbus_schema_member *m)
{
	char *colon;
	int r;

	if (pbus_percent_decode(text) < 0)
		return fail(c, "malformed percent-encoding in %s", what);
	colon = strchr(text, ':');
	if (!colon)
		return fail(c, "%s '%s' is not NAME:TYPE", what, text);
	*colon = 0;
	if (!identifier(text))
		return fail(c, "%s name '%s' is not an identifier", what, text);
	m->name = strdup(text);
	if (!m->name)
		return -ENOMEM;
	r = resolve(c, colon + 1, &m->type);
	return r;
}

static int check_unique(struct ctx *c, const struct pbus_schema_member *m, uint32_t n, const char *what)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(m[i].name, m[k].name))
				return fail(c, "%s '%s' given twice", what, m[i].name);
	return 0;
}

static int parse_type_record(struct ctx *c, char **tok, int ntok)
{
	struct pbus_schema *s = c->s;
	struct pbus_schema_type *t;
	uint32_t i;
	const char *kind;
	int r;

	if (ntok < 3)
		return fail(c, "type record needs a name and a kind");
	if (s->method_count || s->broadcast_count)
		return fail(c, "type record after a method or broadcast record");
	if (pbus_percent_decode(tok[1]) < 0 || !fqn_valid(tok[1]))
		return fail(c, "type name '%s' is not a fully qualified name", tok[1]);
	i = pbus_schema_type_find(s, tok[1]);
	if (i != PBUS_SCHEMA_NO_TYPE && s->types[i].kind != PBUS_SCHEMA_KIND_UNDEFINED)
		return fail(c, "duplicate type '%s'", tok[1]);
	if (i == PBUS_SCHEMA_NO_TYPE) {
		if ((r = add_type(c, tok[1], PBUS_SCHEMA_KIND_UNDEFINED, &i)) < 0)
			return r;
		s->types[i].named = true;
	}
	s->types[i].line = c->line;
	kind = tok[2];
	if (!strcmp(kind, "enum")) {
		bool wide_needed = false;
		uint32_t n = (uint32_t)ntok - 4;

		if (ntok < 5 || (strcmp(tok[3], "i32") && strcmp(tok[3], "i64")))
			return fail(c, "type '%s': expected 'enum i32|i64 LABEL=VALUE...'", tok[1]);
		t = &s->types[i];
		t->enum_values = calloc(n, sizeof(*t->enum_values));
		t->enum_labels = calloc(n, sizeof(*t->enum_labels));
		if (!t->enum_values || !t->enum_labels)
			return -ENOMEM;
		t->kind = PBUS_SCHEMA_KIND_ENUM;
		t->wide = !strcmp(tok[3], "i64");
		for (int k = 4; k < ntok; k++) {
			char *eq = strchr(tok[k], '='), *end;
			long long v;

			if (!eq)
				return fail(c, "type '%s': enumerator '%s' is not LABEL=VALUE", t->name, tok[k]);
			*eq = 0;
			if (pbus_percent_decode(tok[k]) < 0 || pbus_percent_decode(eq + 1) < 0 || !identifier(tok[k]))
				return fail(c, "type '%s': enumerator label '%s' is not an identifier", t->name, tok[k]);
			errno = 0;
			v = strtoll(eq + 1, &end, 10);
			if (!eq[1] || *end || errno)
				return fail(c, "type '%s': enumerator '%s': value '%s' is not a 64-bit integer",
					    t->name, tok[k], eq + 1);
			for (uint32_t j = 0; j < t->enum_count; j++)
				if (!strcmp(t->enum_labels[j], tok[k]))
					return fail(c, "type '%s': duplicate label '%s'", t->name, tok[k]);
			t->enum_labels[t->enum_count] = strdup(tok[k]);
			if (!t->enum_labels[t->enum_count])
				return -ENOMEM;
			t->enum_values[t->enum_count++] = v;
			if (v < INT32_MIN || v > INT32_MAX)
				wide_needed = true;
		}
		if (wide_needed != t->wide)
			return fail(c, "type '%s': the width is %s, but its values %s", t->name, tok[3],
				    wide_needed ? "need i64" : "all fit i32");
		return 0;
	}
	if (!strcmp(kind, "struct") || !strcmp(kind, "union")) {
		bool is_struct = kind[0] == 's';
		bool have_tag = false;
		uint32_t fields = 0;
		struct pbus_schema_member *m;

		for (int k = 3; k < ntok; k++)
			if (!strchr(tok[k], '='))
				fields++;
		if (fields > ARGS_MAX)
			return fail(c, "type '%s': more than %u members", tok[1], ARGS_MAX);
		m = calloc(fields ? fields : 1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->types[i].members = m;
		s->types[i].kind = is_struct ? PBUS_SCHEMA_KIND_STRUCT : PBUS_SCHEMA_KIND_UNION;
		for (int k = 3; k < ntok; k++) {
			char *eq = strchr(tok[k], '=');

			if (eq) {
				*eq = 0;
				if (pbus_percent_decode(eq + 1) < 0)
					return fail(c, "type '%s': malformed percent-encoding", s->types[i].name);
				if (!strcmp(tok[k], "base") && !s->types[i].base) {
					if (!fqn_valid(eq + 1))
						return fail(c, "type '%s': base '%s' is not a fully qualified name",
							    s->types[i].name, eq + 1);
					s->types[i].base = strdup(eq + 1);
					if (!s->types[i].base)
						return -ENOMEM;
				} else if (!strcmp(tok[k], "tag") && is_struct && !have_tag) {
					char *end;
					unsigned long long v;

					errno = 0;
					v = strtoull(eq + 1, &end, 10);
					if (eq[1] < '0' || eq[1] > '9' || *end || errno || v > UINT32_MAX ||
					    (uint32_t)v != pbus_rpc_type_tag(s->types[i].name))
						return fail(c, "type '%s': tag '%s' is not its name's FNV-1a (%u)",
							    s->types[i].name, eq + 1,
							    pbus_rpc_type_tag(s->types[i].name));
					s->types[i].tag = (uint32_t)v;
					have_tag = true;
				} else {
					return fail(c, "type '%s': unknown or repeated key '%s'", s->types[i].name,
						    tok[k]);
				}
				continue;
			}
			/* resolve() may grow the table: index, never a pointer held */
			r = parse_member(c, tok[k], is_struct ? "field" : "member", &m[s->types[i].member_count]);
			s->types[i].member_count++;
			if (r < 0)
				return r;
		}
		s->types[i].polymorphic = have_tag;
		if (!is_struct && s->types[i].member_count == 0)
			return fail(c, "type '%s': a union needs a member", s->types[i].name);
		return check_unique(c, m, s->types[i].member_count, is_struct ? "field" : "member");
	}
	if (!strcmp(kind, "array")) {
		uint32_t e;

		if (ntok != 4)
			return fail(c, "type '%s': expected 'array ELEMENT'", tok[1]);
		if (pbus_percent_decode(tok[3]) < 0)
			return fail(c, "type '%s': malformed percent-encoding", tok[1]);
		if ((r = resolve(c, tok[3], &e)) < 0)
			return r;
		s->types[i].kind = PBUS_SCHEMA_KIND_ARRAY;
		s->types[i].element = e;
		return 0;
	}
	if (!strcmp(kind, "map")) {
		uint32_t k, v;

		if (ntok != 5)
			return fail(c, "type '%s': expected 'map KEY VALUE'", tok[1]);
		if (pbus_percent_decode(tok[3]) < 0 || pbus_percent_decode(tok[4]) < 0)
			return fail(c, "type '%s': malformed percent-encoding", tok[1]);
		if ((r = resolve(c, tok[3], &k)) < 0 || (r = resolve(c, tok[4], &v)) < 0)
			return r;
		s->types[i].kind = PBUS_SCHEMA_KIND_MAP;
		s->types[i].key = k;
		s->types[i].value = v;
		return 0;
	}
	return fail(c, "type '%s': unknown kind '%s' (enum, struct, union, array, map)", tok[1], kind);
}

/* "a:T,b:U" into a member array. */
static int parse_args(struct ctx *c, char *list, const char *what, struct pbus_schema_member **ret,
		      uint32_t *ret_count)
{
	uint32_t n = 1;
	char *save = NULL, *item;
	int r;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	if (n > ARGS_MAX)
		return fail(c, "more than %u %s", ARGS_MAX, what);
	*ret = calloc(n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		r = parse_member(c, item, what, &(*ret)[*ret_count]);
		(*ret_count)++;
		if (r < 0)
			return r;
	}
	if (*ret_count == 0)
		return fail(c, "empty list of %s", what);
	return check_unique(c, *ret, *ret_count, what);
}

static int parse_call_record(struct ctx *c, char **tok, int ntok, bool method)
{
	struct pbus_schema *s = c->s;
	struct pbus_schema_call *calls = method ? s->methods : s->broadcasts, *m;
	uint32_t *count = method ? &s->method_count : &s->broadcast_count;
	const char *what = method ? "method" : "broadcast";
	bool seen_in = false, seen_out = false, seen_error = false, seen_flags = false;
	int r;

	if (ntok < 2)
		return fail(c, "%s record needs a name", what);
	if (method && s->broadcast_count)
		return fail(c, "method record after a broadcast record");
	if (*count >= CALLS_MAX)
		return fail(c, "more than %u %ss", CALLS_MAX, what);
	calls = realloc(calls, (*count + 1) * sizeof(*calls));
	if (!calls)
		return -ENOMEM;
	if (method)
		s->methods = calls;
	else
		s->broadcasts = calls;
	m = &calls[*count];
	memset(m, 0, sizeof(*m));
	m->error = PBUS_SCHEMA_NO_TYPE;
	(*count)++;
	if (pbus_percent_decode(tok[1]) < 0)
		return fail(c, "malformed percent-encoding in %s name", what);
	{
		/* NAME or NAME:SELECTOR, both identifiers */
		char copy[300], *colon;

		snprintf(copy, sizeof(copy), "%s", tok[1]);
		colon = strchr(copy, ':');
		if (colon)
			*colon = 0;
		if (strlen(tok[1]) >= sizeof(copy) || !identifier(copy) || (colon && !identifier(colon + 1)))
			return fail(c, "%s name '%s' is not NAME or NAME:SELECTOR", what, tok[1]);
	}
	for (uint32_t i = 0; i + 1 < *count; i++)
		if (!strcmp(calls[i].name, tok[1]))
			return fail(c, "duplicate %s '%s'", what, tok[1]);
	m->name = strdup(tok[1]);
	if (!m->name)
		return -ENOMEM;
	for (int k = 2; k < ntok; k++) {
		char *eq = strchr(tok[k], '='), *value;

		if (!eq)
			return fail(c, "%s '%s': '%s' is not key=value", what, m->name, tok[k]);
		*eq = 0;
		value = eq + 1;
		if (method && !strcmp(tok[k], "in") && !seen_in) {
			seen_in = true;
			if ((r = parse_args(c, value, "in-arguments", &m->in, &m->in_count)) < 0)
				return r;
		} else if (!strcmp(tok[k], "out") && !seen_out) {
			seen_out = true;
			if ((r = parse_args(c, value, method ? "out-arguments" : "arguments", &m->out,
					    &m->out_count)) < 0)
				return r;
		} else if (method && !strcmp(tok[k], "error") && !seen_error) {
			seen_error = true;
			if (pbus_percent_decode(value) < 0)
				return fail(c, "method '%s': malformed percent-encoding", m->name);
			if ((r = resolve(c, value, &m->error)) < 0)
				return r;
		} else if (!strcmp(tok[k], "flags") && !seen_flags) {
			seen_flags = true;
			if (pbus_percent_decode(value) < 0)
				return fail(c, "%s '%s': malformed percent-encoding", what, m->name);
			if (method && !strcmp(value, "fireAndForget"))
				m->fire_and_forget = true;
			else if (!method && !strcmp(value, "selective"))
				m->selective = true;
			else if (*value)
				return fail(c, "%s '%s': unknown flag '%s'", what, m->name, value);
		} else if (method && !strcmp(tok[k], "group") && !m->group) {
			if (pbus_percent_decode(value) < 0 || !*value)
				return fail(c, "method '%s': malformed group", m->name);
			m->group = strdup(value);
			if (!m->group)
				return -ENOMEM;
		} else if (!strcmp(tok[k], "in") || !strcmp(tok[k], "out") || !strcmp(tok[k], "error") ||
			   !strcmp(tok[k], "flags") || !strcmp(tok[k], "group")) {
			return fail(c, "%s '%s': key '%s' repeated or not for a %s", what, m->name, tok[k], what);
		}
		/* other keys (desc, later ones) are ignored, as in param records */
	}
	if (m->fire_and_forget && (m->out_count || m->error != PBUS_SCHEMA_NO_TYPE))
		return fail(c, "method '%s': fireAndForget with out-arguments or an error", m->name);
	return 0;
}

int pbus_schema_rpc_record(struct pbus_schema *s, char **tok, int ntok, char *error,
			   size_t error_size, const char *source, unsigned line)
{
	struct ctx c = {s, error, error_size, source, line};

	if (!strcmp(tok[0], "type"))
		return parse_type_record(&c, tok, ntok);
	return parse_call_record(&c, tok, ntok, !strcmp(tok[0], "method"));
}

/* Structs and unions held by value must not hold themselves; arrays, maps
 * and polymorphic structs (pointers in C) end a chain. */
static int by_value_cycle(struct ctx *c, uint32_t i)
{
	struct pbus_schema_type *t = &c->s->types[i];
	int r;

	if (t->state == 2)
		return 0;
	if (t->state == 1)
		return fail(c, "type '%s' contains itself by value (only an array, a map or a polymorphic "
			       "struct may hold its own type)", t->name);
	t->state = 1;
	for (uint32_t k = 0; k < t->member_count; k++) {
		struct pbus_schema_type *m = &c->s->types[t->members[k].type];

		if ((m->kind == PBUS_SCHEMA_KIND_STRUCT && !m->polymorphic) || m->kind == PBUS_SCHEMA_KIND_UNION)
			if ((r = by_value_cycle(c, t->members[k].type)) < 0)
				return r;
	}
	c->s->types[i].state = 2;
	return 0;
}

/* docs/methods.md §4's smallest encodings; a recursion (through a
 * polymorphic struct) counts 0, as pbus-gen does. */
static size_t min_size(struct pbus_schema *s, uint32_t i)
{
	struct pbus_schema_type *t = &s->types[i];
	size_t sum = 0, least = SIZE_MAX;

	if (t->kind <= PBUS_SCHEMA_KIND_BYTES)
		return basic_sizes[t->kind];
	switch (t->kind) {
	case PBUS_SCHEMA_KIND_INTEGER:
		return 8;
	case PBUS_SCHEMA_KIND_ENUM:
		return t->wide ? 8 : 4;
	case PBUS_SCHEMA_KIND_ARRAY:
	case PBUS_SCHEMA_KIND_MAP:
		return 4;
	default:
		break;
	}
	if (t->state == 3)
		return t->min_size;
	if (t->state == 4)
		return 0;
	t->state = 4;
	for (uint32_t k = 0; k < t->member_count; k++) {
		size_t m = min_size(s, s->types[i].members[k].type);

		sum += m;
		if (m < least)
			least = m;
	}
	t = &s->types[i];
	if (t->kind == PBUS_SCHEMA_KIND_UNION)
		t->min_size = 4 + (t->member_count ? least : 0);
	else
		t->min_size = (t->polymorphic ? 4 : 0) + sum;
	t->state = 3;
	return t->min_size;
}

/* The struct @base names, if it has a record. */
static uint32_t base_of(const struct pbus_schema *s, uint32_t i)
{
	uint32_t b;

	if (!s->types[i].base)
		return PBUS_SCHEMA_NO_TYPE;
	b = pbus_schema_type_find(s, s->types[i].base);
	return b != PBUS_SCHEMA_NO_TYPE && s->types[b].kind == PBUS_SCHEMA_KIND_STRUCT ? b
										 : PBUS_SCHEMA_NO_TYPE;
}

int pbus_schema_rpc_finish(struct pbus_schema *s, char *error, size_t error_size, const char *source)
{
	struct ctx c = {s, error, error_size, source, 0};
	int r;

	for (uint32_t i = 0; i < s->type_count; i++) {
		struct pbus_schema_type *t = &s->types[i];

		c.line = t->line;
		if (t->kind == PBUS_SCHEMA_KIND_UNDEFINED)
			return fail(&c, "type '%s' has no type record", t->name);
		if (t->kind == PBUS_SCHEMA_KIND_MAP && s->types[t->key].kind == PBUS_SCHEMA_KIND_UNDEFINED)
			return fail(&c, "type '%s' has no type record", s->types[t->key].name);
	}
	for (uint32_t i = 0; i < s->method_count; i++)
		if (s->methods[i].error != PBUS_SCHEMA_NO_TYPE &&
		    s->types[s->methods[i].error].kind != PBUS_SCHEMA_KIND_ENUM) {
			c.line = 0;
			return fail(&c, "method '%s': its error '%s' is not an enumeration", s->methods[i].name,
				    s->types[s->methods[i].error].name);
		}
	/* polymorphic hierarchies: a struct derived from a polymorphic one is
	 * polymorphic; each collects the structs derived from it */
	for (uint32_t i = 0; i < s->type_count; i++) {
		uint32_t b = base_of(s, i), hops = 0;

		if (s->types[i].kind != PBUS_SCHEMA_KIND_STRUCT)
			continue;
		c.line = s->types[i].line;
		if (b != PBUS_SCHEMA_NO_TYPE && s->types[b].polymorphic && !s->types[i].polymorphic)
			return fail(&c, "type '%s' extends polymorphic '%s' but has no tag", s->types[i].name,
				    s->types[b].name);
		if (!s->types[i].polymorphic)
			continue;
		for (uint32_t a = i; a != PBUS_SCHEMA_NO_TYPE; a = base_of(s, a)) {
			struct pbus_schema_type *p = &s->types[a];
			uint32_t *grown;

			if (++hops > PBUS_SCHEMA_TYPES_MAX)
				return fail(&c, "type '%s' extends itself", s->types[i].name);
			if (!p->polymorphic)
				break;
			grown = realloc(p->concrete, (p->concrete_count + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			p->concrete = grown;
			/* itself first */
			if (a == i) {
				memmove(grown + 1, grown, p->concrete_count * sizeof(*grown));
				grown[0] = i;
			} else {
				grown[p->concrete_count] = i;
			}
			p->concrete_count++;
		}
	}
	for (uint32_t i = 0; i < s->type_count; i++)
		s->types[i].state = 0;
	for (uint32_t i = 0; i < s->type_count; i++) {
		c.line = s->types[i].line;
		if ((r = by_value_cycle(&c, i)) < 0)
			return r;
	}
	for (uint32_t i = 0; i < s->type_count; i++)
		s->types[i].state = 0;
	for (uint32_t i = 0; i < s->type_count; i++)
		s->types[i].min_size = min_size(s, i);
	return 0;
}

static void free_members(struct pbus_schema_member *m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}

static void free_calls(struct pbus_schema_call *calls, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(calls[i].name);
		free(calls[i].group);
		free_members(calls[i].in, calls[i].in_count);
		free_members(calls[i].out, calls[i].out_count);
	}
	free(calls);
}

void pbus_schema_rpc_free(struct pbus_schema *s)
{
	for (uint32_t i = 0; i < s->type_count; i++) {
		struct pbus_schema_type *t = &s->types[i];

		free(t->name);
		free(t->base);
		free_members(t->members, t->member_count);
		for (uint32_t k = 0; k < t->enum_count; k++)
			free(t->enum_labels[k]);
		free(t->enum_labels);
		free(t->enum_values);
		free(t->concrete);
	}
	free(s->types);
	free_calls(s->methods, s->method_count);
	free_calls(s->broadcasts, s->broadcast_count);
}

/* --- the public accessors (parambus/schema.h) ------------------------------ */

const char *pbus_schema_interface(const struct pbus_schema *schema, uint32_t *major, uint32_t *minor)
{
	if (!schema)
		return NULL;
	if (major)
		*major = schema->major;
	if (minor)
		*minor = schema->minor;
	return schema->interface;
}

uint32_t pbus_schema_method_count(const struct pbus_schema *schema)
{
	return schema ? schema->method_count : 0;
}

uint32_t pbus_schema_broadcast_count(const struct pbus_schema *schema)
{
	return schema ? schema->broadcast_count : 0;
}

static const struct pbus_schema_call *call_of(const struct pbus_schema *s, bool broadcast, uint32_t index)
{
	if (!s)
		return NULL;
	if (broadcast)
		return index < s->broadcast_count ? &s->broadcasts[index] : NULL;
	return index < s->method_count ? &s->methods[index] : NULL;
}

int pbus_schema_method_find(const struct pbus_schema *schema, const char *name)
{
	if (!schema || !name)
		return -EINVAL;
	for (uint32_t i = 0; i < schema->method_count; i++)
		if (!strcmp(schema->methods[i].name, name))
			return (int)i;
	return -ENOENT;
}

int pbus_schema_broadcast_find(const struct pbus_schema *schema, const char *name)
{
	if (!schema || !name)
		return -EINVAL;
	for (uint32_t i = 0; i < schema->broadcast_count; i++)
		if (!strcmp(schema->broadcasts[i].name, name))
			return (int)i;
	return -ENOENT;
}

const char *pbus_schema_method_name(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, false, index);

	return m ? m->name : NULL;
}

const char *pbus_schema_broadcast_name(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, true, index);

	return m ? m->name : NULL;
}

bool pbus_schema_method_fire_and_forget(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, false, index);

	return m && m->fire_and_forget;
}

const char *pbus_schema_method_group(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, false, index);

	return m ? m->group : NULL;
}

const char *pbus_schema_method_error(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, false, index);

	return m && m->error != PBUS_SCHEMA_NO_TYPE ? schema->types[m->error].name : NULL;
}

bool pbus_schema_broadcast_selective(const struct pbus_schema *schema, uint32_t index)
{
	const struct pbus_schema_call *m = call_of(schema, true, index);

	return m && m->selective;
}

static const struct pbus_schema_member *args_of(const struct pbus_schema *s, bool broadcast,
						uint32_t index, enum pbus_schema_args which,
						uint32_t *count)
{
	const struct pbus_schema_call *m = call_of(s, broadcast, index);

	*count = 0;
	if (!m || (broadcast && which == PBUS_SCHEMA_ARGS_IN))
		return NULL;
	*count = which == PBUS_SCHEMA_ARGS_IN ? m->in_count : m->out_count;
	return which == PBUS_SCHEMA_ARGS_IN ? m->in : m->out;
}

uint32_t pbus_schema_method_arg_count(const struct pbus_schema *schema, uint32_t index,
				      enum pbus_schema_args which)
{
	uint32_t n;

	args_of(schema, false, index, which, &n);
	return n;
}

int pbus_schema_method_arg(const struct pbus_schema *schema, uint32_t index, enum pbus_schema_args which,
			   uint32_t arg, const char **ret_name, const char **ret_type)
{
	uint32_t n;
	const struct pbus_schema_member *a = args_of(schema, false, index, which, &n);

	if (!a || arg >= n)
		return -ENOENT;
	if (ret_name)
		*ret_name = a[arg].name;
	if (ret_type)
		*ret_type = schema->types[a[arg].type].name;
	return 0;
}

uint32_t pbus_schema_broadcast_arg_count(const struct pbus_schema *schema, uint32_t index)
{
	uint32_t n;

	args_of(schema, true, index, PBUS_SCHEMA_ARGS_OUT, &n);
	return n;
}

int pbus_schema_broadcast_arg(const struct pbus_schema *schema, uint32_t index, uint32_t arg,
			      const char **ret_name, const char **ret_type)
{
	uint32_t n;
	const struct pbus_schema_member *a = args_of(schema, true, index, PBUS_SCHEMA_ARGS_OUT, &n);

	if (!a || arg >= n)
		return -ENOENT;
	if (ret_name)
		*ret_name = a[arg].name;
	if (ret_type)
		*ret_type = schema->types[a[arg].type].name;
	return 0;
}
