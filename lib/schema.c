/* SPDX-License-Identifier: MIT */
/*
 * schema.c: the loader of compiled schemas (docs/schema-format.md). The
 * format is checked strictly: pbusd builds a segment from what this accepts,
 * so every limit the segment relies on (name lengths, sizes, counts, value
 * ranges) is enforced here, with a message naming the line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema-internal.h"
#include "segment-layout.h"
#include "text-internal.h"

#define SCHEMA_FILE_MAX (64u << 20)
#define MAX_TOKENS 64

struct parser {
	const char *source;
	unsigned line;
	char *error;
	size_t error_size;
	struct pbus_schema *schema;
	uint32_t param_capacity, enum_capacity, enumerator_capacity;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->error && ps->error_size)
		snprintf(ps->error, ps->error_size, "%s:%u: %s", ps->source, ps->line, msg);
	return -EINVAL;
}

uint64_t pbus_schema_hash_text(const char *text, size_t length)
{
	uint64_t h = PBUS_FNV_OFFSET;
	size_t pos = 0;

	if (!text)
		return h;
	while (pos < length) {
		const char *nl = memchr(text + pos, '\n', length - pos);
		size_t end = nl ? (size_t)(nl - text) + 1 : length;

		if (end - pos > 1 && text[pos] != '#' && text[pos] != '\n')
			h = pbus_fnv1a(h, text + pos, end - pos);
		pos = end;
	}
	return h;
}

/* Decode a percent-encoded token in place, naming it on failure. */
static int percent_decode(struct parser *ps, char *s)
{
	char copy[64];

	snprintf(copy, sizeof(copy), "%s", s);
	if (pbus_percent_decode(s) < 0)
		return fail(ps, "malformed percent-encoding in '%s'", copy);
	return 0;
}

static bool name_valid(const char *name)
{
	size_t n = strlen(name);
	bool segment_start = true;

	if (n == 0 || n > PBUS_PARAM_NAME_MAX)
		return false;
	for (const char *c = name; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
		bool digit = *c >= '0' && *c <= '9';

		if (*c == '.') {
			if (segment_start)
				return false;
			segment_start = true;
		} else if (segment_start ? !alpha : !(alpha || digit)) {
			return false;
		} else {
			segment_start = false;
		}
	}
	return !segment_start;
}

static const struct {
	const char *name;
	unsigned type;
} type_names[] = {
	{"bool", PBUS_TYPE_BOOL},     {"int8", PBUS_TYPE_INT8},     {"int16", PBUS_TYPE_INT16},
	{"int32", PBUS_TYPE_INT32},   {"int64", PBUS_TYPE_INT64},   {"uint8", PBUS_TYPE_UINT8},
	{"uint16", PBUS_TYPE_UINT16}, {"uint32", PBUS_TYPE_UINT32}, {"uint64", PBUS_TYPE_UINT64},
	{"float", PBUS_TYPE_FLOAT},   {"double", PBUS_TYPE_DOUBLE}, {"string", PBUS_TYPE_STRING},
	{"bytes", PBUS_TYPE_BYTES},   {"enum", PBUS_TYPE_ENUM},
};

static int type_from_name(const char *name, unsigned *ret)
{
	size_t n = strlen(name);
	bool array = n > 2 && !strcmp(name + n - 2, "[]");

	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strlen(type_names[i].name) == n - (array ? 2 : 0) &&
		    !strncmp(type_names[i].name, name, n - (array ? 2 : 0))) {
			unsigned t = type_names[i].type | (array ? PBUS_TYPE_ARRAY_FLAG : 0u);

			if (!pbus_type_valid(t))
				return -EINVAL;
			*ret = t;
			return 0;
		}
	return -EINVAL;
}

static int grow(void **array, uint32_t *capacity, uint32_t count, size_t element)
{
	if (count < *capacity)
		return 0;
	uint32_t n = *capacity ? *capacity * 2 : 16;
	void *p = realloc(*array, n * element);

	if (!p)
		return -ENOMEM;
	*array = p;
	*capacity = n;
	return 0;
}

static int parse_u32(const char *text, uint32_t lo, uint32_t hi, uint32_t *ret)
{
	char *end;
	unsigned long v;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

static int parse_enum_record(struct parser *ps, char **tok, int ntok)
{
	struct pbus_schema *s = ps->schema;
	struct pbus_schema_enum *e;

	if (ntok < 3)
		return fail(ps, "enum record needs a name and at least one enumerator");
	if (s->param_count)
		return fail(ps, "enum '%s' after the first param record", tok[1]);
	for (uint32_t i = 0; i < s->enum_count; i++)
		if (!strcmp(s->enums[i].name, tok[1]))
			return fail(ps, "duplicate enum '%s'", tok[1]);
	if (grow((void **)&s->enums, &ps->enum_capacity, s->enum_count, sizeof(*s->enums)) < 0)
		return -ENOMEM;
	e = &s->enums[s->enum_count];
	e->name = strdup(tok[1]);
	if (!e->name)
		return -ENOMEM;
	e->first = s->enumerator_count;
	e->count = 0;
	s->enum_count++;
	for (int i = 2; i < ntok; i++) {
		char *eq = strchr(tok[i], '='), *end;
		long long v;
		uint32_t cap = ps->enumerator_capacity;

		if (!eq || eq == tok[i])
			return fail(ps, "enumerator '%s' is not LABEL=VALUE", tok[i]);
		*eq = 0;
		if (percent_decode(ps, tok[i]) < 0 || percent_decode(ps, eq + 1) < 0)
			return -EINVAL;
		errno = 0;
		v = strtoll(eq + 1, &end, 10);
		if (!eq[1] || *end || errno || v < INT32_MIN || v > INT32_MAX)
			return fail(ps, "enumerator '%s': value '%s' is not a 32-bit integer", tok[i], eq + 1);
		for (uint32_t k = e->first; k < s->enumerator_count; k++)
			if (!strcmp(s->enumerator_labels[k], tok[i]))
				return fail(ps, "enum '%s': duplicate label '%s'", e->name, tok[i]);
		if (grow((void **)&s->enumerator_values, &cap, s->enumerator_count, sizeof(int32_t)) < 0 ||
		    grow((void **)&s->enumerator_labels, &ps->enumerator_capacity, s->enumerator_count,
			 sizeof(char *)) < 0)
			return -ENOMEM;
		s->enumerator_values[s->enumerator_count] = (int32_t)v;
		s->enumerator_labels[s->enumerator_count] = strdup(tok[i]);
		if (!s->enumerator_labels[s->enumerator_count])
			return -ENOMEM;
		s->enumerator_count++;
		e->count++;
	}
	return 0;
}

static int dup_field(char **field, const char *value)
{
	*field = strdup(value);
	return *field ? 0 : -ENOMEM;
}

static int parse_flags(struct parser *ps, const char *list, unsigned *flags)
{
	char buf[256];
	char *save, *item;

	if (strlen(list) >= sizeof(buf))
		return fail(ps, "flags list too long");
	strcpy(buf, list);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (!strcmp(item, "readonly")) *flags |= PBUS_PARAM_READONLY;
		else if (!strcmp(item, "persistent")) *flags |= PBUS_PARAM_PERSISTENT;
		else if (!strcmp(item, "noread")) *flags |= PBUS_PARAM_NOREAD;
		else if (!strcmp(item, "nosubscriptions")) *flags |= PBUS_PARAM_NOSUBSCRIPTIONS;
		else return fail(ps, "unknown flag '%s'", item);
	}
	return 0;
}

/* The keys of a param record this library interprets itself. */
static bool known_key(const char *key)
{
	static const char *const keys[] = { "size", "count", "enum", "unit", "min", "max", "step",
					    "default", "flags", "class", "group", "desc" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

static int add_extra(struct pbus_schema_param *p, const char *key, const char *value)
{
	struct pbus_schema_extra *extras, *e;

	extras = realloc(p->extras, (p->extra_count + 1) * sizeof(*extras));
	if (!extras)
		return -ENOMEM;
	p->extras = extras;
	e = &extras[p->extra_count];
	e->key = strdup(key);
	e->value = strdup(value);
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		return -ENOMEM;
	}
	p->extra_count++;
	return 0;
}

static int parse_param_record(struct parser *ps, char **tok, int ntok)
{
	struct pbus_schema *s = ps->schema;
	struct pbus_schema_param *p;
	const char *size_text = NULL, *count_text = NULL, *enum_text = NULL;
	const char *min_text = NULL, *max_text = NULL, *step_text = NULL, *default_text = NULL;
	unsigned element;
	int r;

	if (ntok < 3)
		return fail(ps, "param record needs a name and a type");
	if (s->param_count >= PBUS_PARAM_MAX)
		return fail(ps, "more than %u parameters", PBUS_PARAM_MAX);
	if (percent_decode(ps, tok[1]) < 0)
		return -EINVAL;
	if (!name_valid(tok[1]))
		return fail(ps, "invalid parameter name '%s'", tok[1]);
	if (grow((void **)&s->params, &ps->param_capacity, s->param_count, sizeof(*s->params)) < 0)
		return -ENOMEM;
	p = &s->params[s->param_count];
	memset(p, 0, sizeof(*p));
	s->param_count++;
	p->update_class = PBUS_UPDATE_SETTING;
	p->enum_index = PBUS_NO_ENUM;
	if (dup_field(&p->name, tok[1]) < 0)
		return -ENOMEM;
	if (type_from_name(tok[2], &p->ti.type) < 0)
		return fail(ps, "param '%s': unknown type '%s'", p->name, tok[2]);

	for (int i = 3; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');
		const char *key = tok[i], *value;

		if (!eq)
			return fail(ps, "param '%s': '%s' is not key=value", p->name, tok[i]);
		*eq = 0;
		value = eq + 1;
		if (percent_decode(ps, eq + 1) < 0)
			return -EINVAL;
		/* A repeated key is an error; unknown keys are for later versions. */
		for (int k = 3; k < i; k++)
			if (!strcmp(tok[k], key))
				return fail(ps, "param '%s': key '%s' given twice", p->name, key);
		if (!strcmp(key, "size")) size_text = value;
		else if (!strcmp(key, "count")) count_text = value;
		else if (!strcmp(key, "enum")) enum_text = value;
		else if (!strcmp(key, "min")) min_text = value;
		else if (!strcmp(key, "max")) max_text = value;
		else if (!strcmp(key, "step")) step_text = value;
		else if (!strcmp(key, "default")) default_text = value;
		else if (!strcmp(key, "unit") && dup_field(&p->unit, value) < 0) return -ENOMEM;
		else if (!strcmp(key, "desc") && dup_field(&p->description, value) < 0) return -ENOMEM;
		else if (!strcmp(key, "group") && dup_field(&p->group, value) < 0) return -ENOMEM;
		else if (!strcmp(key, "flags") && parse_flags(ps, value, &p->ti.flags) < 0) return -EINVAL;
		else if (!strcmp(key, "class")) {
			if (!strcmp(value, "constant")) p->update_class = PBUS_UPDATE_CONSTANT;
			else if (!strcmp(value, "rare")) p->update_class = PBUS_UPDATE_RARE;
			else if (!strcmp(value, "setting")) p->update_class = PBUS_UPDATE_SETTING;
			else if (!strcmp(value, "live")) p->update_class = PBUS_UPDATE_LIVE;
			else return fail(ps, "param '%s': unknown class '%s'", p->name, value);
		} else if (!known_key(key) && add_extra(p, key, value) < 0) {
			return -ENOMEM;
		}
	}

	element = pbus_element_type(p->ti.type);
	if (p->ti.type == PBUS_TYPE_STRING || p->ti.type == PBUS_TYPE_BYTES) {
		if (!size_text)
			return fail(ps, "param '%s': %s needs size=", p->name, tok[2]);
		if (parse_u32(size_text, 1, PBUS_VALUE_SIZE_MAX, &p->ti.value_size) < 0)
			return fail(ps, "param '%s': size '%s' not in 1..%u", p->name, size_text,
				    PBUS_VALUE_SIZE_MAX);
		p->ti.element_size = 1;
	} else if (p->ti.type & PBUS_TYPE_ARRAY_FLAG) {
		uint32_t count;

		if (!count_text)
			return fail(ps, "param '%s': an array needs count=", p->name);
		if (parse_u32(count_text, 1, PBUS_VALUE_SIZE_MAX, &count) < 0)
			return fail(ps, "param '%s': count '%s' not in 1..%u", p->name, count_text,
				    PBUS_VALUE_SIZE_MAX);
		p->ti.element_size = pbus_scalar_size(element);
		p->ti.value_size = count * p->ti.element_size;
		if (p->ti.value_size > PBUS_VALUE_SIZE_MAX)
			return fail(ps, "param '%s': array larger than %u bytes", p->name,
				    PBUS_VALUE_SIZE_MAX);
	} else {
		p->ti.element_size = p->ti.value_size = pbus_scalar_size(element);
	}
	if ((size_text && p->ti.type != PBUS_TYPE_STRING && p->ti.type != PBUS_TYPE_BYTES) ||
	    (count_text && !(p->ti.type & PBUS_TYPE_ARRAY_FLAG)))
		return fail(ps, "param '%s': size=/count= do not apply to %s", p->name, tok[2]);

	if (element == PBUS_TYPE_ENUM) {
		if (!enum_text)
			return fail(ps, "param '%s': enum type needs enum=", p->name);
		for (uint32_t i = 0; i < s->enum_count; i++)
			if (!strcmp(s->enums[i].name, enum_text)) {
				p->ti.enum_count = s->enums[i].count;
				p->ti.enum_values = s->enumerator_values + s->enums[i].first;
				p->ti.enum_labels = (const char *const *)s->enumerator_labels + s->enums[i].first;
				p->enum_index = i;
				goto enum_found;
			}
		return fail(ps, "param '%s': unknown enum '%s'", p->name, enum_text);
	} else if (enum_text) {
		return fail(ps, "param '%s': enum= applies to enum parameters only", p->name);
	}
enum_found:
	if (min_text || max_text || step_text) {
		union pbus_number n;

		if (p->ti.type == PBUS_TYPE_STRING || p->ti.type == PBUS_TYPE_BYTES ||
		    element == PBUS_TYPE_BOOL || element == PBUS_TYPE_ENUM)
			return fail(ps, "param '%s': min/max/step do not apply to %s", p->name, tok[2]);
		if (min_text) {
			if (pbus_number_parse(element, min_text, &n) < 0)
				return fail(ps, "param '%s': min '%s' is not a %s", p->name, min_text, tok[2]);
			p->ti.min = n;
			p->ti.flags |= PBUS_PARAM_HAS_MIN;
		}
		if (max_text) {
			if (pbus_number_parse(element, max_text, &n) < 0)
				return fail(ps, "param '%s': max '%s' is not a %s", p->name, max_text, tok[2]);
			p->ti.max = n;
			p->ti.flags |= PBUS_PARAM_HAS_MAX;
		}
		if (min_text && max_text) {
			struct pbus_typeinfo only_max = p->ti;

			only_max.flags &= ~(unsigned)PBUS_PARAM_HAS_MIN;
			if (pbus_number_check_limits(&only_max, element, p->ti.min) < 0)
				return fail(ps, "param '%s': min %s above max %s", p->name, min_text, max_text);
		}
		if (step_text) {
			if (pbus_number_parse(element, step_text, &n) < 0 ||
			    ((element == PBUS_TYPE_FLOAT || element == PBUS_TYPE_DOUBLE) ? !(n.d > 0)
			     : (element == PBUS_TYPE_INT8 || element == PBUS_TYPE_INT16 ||
				element == PBUS_TYPE_INT32 || element == PBUS_TYPE_INT64) ? n.i <= 0
											  : n.u == 0))
				return fail(ps, "param '%s': step '%s' is not a positive %s", p->name,
					    step_text, tok[2]);
			p->step = n;
			p->ti.flags |= PBUS_PARAM_HAS_STEP;
		}
	}
	if (default_text) {
		size_t length;

		p->default_value = malloc(p->ti.value_size ? p->ti.value_size : 1);
		if (!p->default_value)
			return -ENOMEM;
		r = pbus_value_parse(&p->ti, default_text, p->default_value, p->ti.value_size, &length);
		if (r == -ERANGE)
			return fail(ps, "param '%s': default '%s' outside its limits or its type's range", p->name, default_text);
		if (r == -EMSGSIZE)
			return fail(ps, "param '%s': default longer than its size", p->name);
		if (r < 0)
			return fail(ps, "param '%s': default '%s' is not a %s", p->name, default_text, tok[2]);
		p->default_length = (uint32_t)length;
		p->ti.flags |= PBUS_PARAM_HAS_DEFAULT;
	}
	return 0;
}

static int compare_names(const void *a, const void *b, void *arg)
{
	const struct pbus_schema *s = arg;

	return strcmp(s->params[*(const uint32_t *)a].name, s->params[*(const uint32_t *)b].name);
}

/* Refuse a name given twice: the names in order, neighbours compared.
 * (Lookups by name are the schema view's, view.c: a client builds one from
 * the schema.) */
static int refuse_duplicate_names(struct parser *ps)
{
	struct pbus_schema *s = ps->schema;
	uint32_t *by_name = malloc((s->param_count ? s->param_count : 1) * sizeof(*by_name));
	int r = 0;

	if (!by_name)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->param_count; i++)
		by_name[i] = i;
	qsort_r(by_name, s->param_count, sizeof(*by_name), compare_names, s);
	for (uint32_t i = 1; i < s->param_count && r == 0; i++)
		if (!strcmp(s->params[by_name[i - 1]].name, s->params[by_name[i]].name)) {
			ps->line = 0;
			r = fail(ps, "duplicate parameter '%s'", s->params[by_name[i]].name);
		}
	free(by_name);
	return r;
}

/* Split @line (modified) at single spaces into at most MAX_TOKENS tokens. */
/* Whether the first word of a file is how Franca IDL or a deployment
 * starts (a comment, or its first keyword): the usual mistake of giving
 * pbusd the source instead of pbus-gen's output. */
static bool is_franca_keyword(const char *word)
{
	static const char *const words[] = {"package", "import", "specification", "define"};

	if (!strncmp(word, "//", 2) || !strncmp(word, "/*", 2))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i]))
			return true;
	return false;
}

static int split(struct parser *ps, char *line, char **tok)
{
	int n = 0;

	if (line[0] == ' ' || line[strlen(line) - 1] == ' ')
		return fail(ps, "leading or trailing space");
	for (char *p = line;;) {
		char *sp = strchr(p, ' ');

		if (n == MAX_TOKENS)
			return fail(ps, "more than %d tokens", MAX_TOKENS);
		tok[n++] = p;
		if (!sp)
			break;
		*sp = 0;
		p = sp + 1;
		if (*p == ' ' || !*p)
			return fail(ps, "two spaces in a row");
	}
	return n;
}

static int parse_text(struct parser *ps, const char *text, size_t length)
{
	struct pbus_schema *s = ps->schema;
	bool seen_version = false, seen_interface = false;
	size_t pos = 0;
	char *line = NULL;
	int r = 0;

	s->hash = pbus_schema_hash_text(text, length);
	if (length && text[length - 1] != '\n')
		return fail(ps, "the file does not end with a newline");
	while (pos < length && r == 0) {
		const char *nl = memchr(text + pos, '\n', length - pos);
		size_t n = (size_t)(nl - (text + pos));
		char *tok[MAX_TOKENS];
		int ntok;

		ps->line++;
		free(line);
		line = strndup(text + pos, n);
		pos += n + 1;
		if (!line)
			return -ENOMEM;
		if (strlen(line) != n) {
			r = fail(ps, "NUL byte in line");
			break;
		}
		if (n == 0 || line[0] == '#')
			continue;
		if (memchr(line, '\r', n)) {
			r = fail(ps, "carriage return in line (the format uses LF only)");
			break;
		}
		ntok = split(ps, line, tok);
		if (ntok < 0) {
			r = ntok;
			break;
		}
		if (!seen_version) {
			if (strcmp(tok[0], "pbus-schema") && is_franca_keyword(tok[0]))
				r = fail(ps, "this is Franca IDL or a deployment (.fidl, .fdepl), not a compiled "
					     "schema: compile it with 'pbus-gen --schema OUT.pbs FILE' "
					     "(docs/generator.md)");
			else if (strcmp(tok[0], "pbus-schema"))
				r = fail(ps, "expected 'pbus-schema 1' as the first record");
			else if (ntok != 2 || strcmp(tok[1], "1"))
				r = fail(ps, "unsupported schema format version '%s' (this library reads 1)",
					 ntok > 1 ? tok[1] : "");
			seen_version = true;
		} else if (!strcmp(tok[0], "interface")) {
			unsigned major, minor;
			char dot;

			if (seen_interface)
				r = fail(ps, "a second interface record");
			else if (ntok != 3 || sscanf(tok[2], "%u.%u%c", &major, &minor, &dot) != 2)
				r = fail(ps, "expected 'interface NAME MAJOR.MINOR'");
			else if ((r = percent_decode(ps, tok[1])) == 0) {
				s->interface = strdup(tok[1]);
				s->major = major;
				s->minor = minor;
				r = s->interface ? 0 : -ENOMEM;
			}
			seen_interface = true;
		} else if (!seen_interface) {
			r = fail(ps, "expected the interface record before '%s'", tok[0]);
		} else if (!strcmp(tok[0], "enum")) {
			r = ntok < 2 ? fail(ps, "enum record needs a name") : percent_decode(ps, tok[1]);
			if (r == 0)
				r = parse_enum_record(ps, tok, ntok);
		} else if (!strcmp(tok[0], "param")) {
			if (s->type_count || s->method_count || s->broadcast_count)
				r = fail(ps, "param record after a type, method or broadcast record");
			else
				r = parse_param_record(ps, tok, ntok);
		} else if (!strcmp(tok[0], "type") || !strcmp(tok[0], "method") ||
			   !strcmp(tok[0], "broadcast")) {
			r = pbus_schema_rpc_record(s, tok, ntok, ps->error, ps->error_size, ps->source,
						   ps->line);
		} else {
			r = fail(ps, "unknown record '%s'", tok[0]);
		}
	}
	free(line);
	if (r == 0 && !seen_version)
		r = fail(ps, "empty schema: expected 'pbus-schema 1'");
	if (r == 0 && !seen_interface)
		r = fail(ps, "no interface record");
	if (r == 0)
		r = refuse_duplicate_names(ps);
	if (r == 0)
		r = pbus_schema_rpc_finish(s, ps->error, ps->error_size, ps->source);
	return r;
}

int pbus_schema_parse(const char *text, size_t length, const char *source_name, char *error,
		      size_t error_size, struct pbus_schema **ret_schema)
{
	struct parser ps = {
		.source = source_name ? source_name : "schema",
		.error = error,
		.error_size = error_size,
	};
	int r;

	if (!ret_schema || (!text && length))
		return -EINVAL;
	if (error && error_size)
		error[0] = 0;
	ps.schema = calloc(1, sizeof(*ps.schema));
	if (!ps.schema)
		return -ENOMEM;
	r = parse_text(&ps, text ? text : "", length);
	if (r < 0) {
		if (r == -ENOMEM && error && error_size)
			snprintf(error, error_size, "%s: out of memory", ps.source);
		pbus_schema_free(ps.schema);
		return r;
	}
	*ret_schema = ps.schema;
	return 0;
}

int pbus_schema_load(const char *path, char *error, size_t error_size,
		     struct pbus_schema **ret_schema)
{
	struct stat st;
	char *text;
	ssize_t n;
	size_t got = 0;
	int fd, r;

	if (!path || !ret_schema)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (error && error_size)
			snprintf(error, error_size, "%s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)SCHEMA_FILE_MAX) {
		r = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		if (error && error_size)
			snprintf(error, error_size, "%s: not a regular file of at most 64 MiB", path);
		close(fd);
		return r;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	r = pbus_schema_parse(text, got, path, error, error_size, ret_schema);
	free(text);
	return r;
}

void pbus_schema_free(struct pbus_schema *schema)
{
	if (!schema)
		return;
	for (uint32_t i = 0; i < schema->param_count; i++) {
		struct pbus_schema_param *p = &schema->params[i];

		free(p->name);
		free(p->unit);
		free(p->description);
		free(p->group);
		free(p->default_value);
		for (uint32_t k = 0; k < p->extra_count; k++) {
			free(p->extras[k].key);
			free(p->extras[k].value);
		}
		free(p->extras);
	}
	for (uint32_t i = 0; i < schema->enum_count; i++)
		free(schema->enums[i].name);
	for (uint32_t i = 0; i < schema->enumerator_count; i++)
		free(schema->enumerator_labels[i]);
	free(schema->enumerator_labels);
	free(schema->enumerator_values);
	free(schema->enums);
	free(schema->params);
	free(schema->interface);
	pbus_schema_rpc_free(schema);
	free(schema);
}

uint64_t pbus_schema_hash(const struct pbus_schema *schema)
{
	return schema ? schema->hash : 0;
}

uint32_t pbus_schema_param_count(const struct pbus_schema *schema)
{
	return schema ? schema->param_count : 0;
}

const char *pbus_schema_param_name(const struct pbus_schema *schema, uint32_t index)
{
	return schema && index < schema->param_count ? schema->params[index].name : NULL;
}

const char *pbus_schema_param_extra(const struct pbus_schema *schema, uint32_t index,
				    const char *key)
{
	const struct pbus_schema_param *p;

	if (!schema || index >= schema->param_count || !key)
		return NULL;
	p = &schema->params[index];
	for (uint32_t k = 0; k < p->extra_count; k++)
		if (!strcmp(p->extras[k].key, key))
			return p->extras[k].value;
	return NULL;
}
