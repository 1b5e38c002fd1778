/* SPDX-License-Identifier: MIT */
/*
 * test-rpc-codec.c: the codec pbus-gen generates for method and broadcast
 * arguments (docs/methods.md §4), on tests/gen/fixtures/rpc/alltypes-rpc.fidl
 * generated with --prefix ar --rpc-types-source (the codec alone, linked
 * against libparambus only).
 *
 *   test-rpc-codec VECTORS         run the cases, checking the encodings
 *                                  against tests/vectors/rpc-args.txt
 *   test-rpc-codec --write         print that file's vector lines
 *
 * Values of every type, edge values included, are encoded, decoded into an
 * arena, compared (the generated ar_equal_*), encoded again (same bytes)
 * and deep-copied; then malformed inputs (truncations at every byte, a
 * Boolean 2, union indexes and enumerators out of range, a polymorphic tag
 * not derived from the declared struct, counts beyond the body, nesting
 * beyond PBUS_RPC_MAX_DEPTH, bytes left over) must fail with -EPROTO, and
 * values without encoding must fail to encode with -EINVAL. Runs under ASan
 * in the asan tree: no leak, no read out of bounds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alltypes-rpc-values.h"
#include "alltypes-rpc.h"
#include "pbus-check.h"

/* --- a uniform view of the codec of each type ----------------------------- */

struct codec {
	const char *name;
	size_t size;
	int (*encode)(struct pbus_rpc_buf *b, const void *v);
	bool (*decode)(struct pbus_rpc_reader *r, void *v);
	bool (*equal)(const void *x, const void *y);
};

#define CODEC(name, T)                                                                     \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)                       \
	{                                                                                  \
		return ar_encode_##name(b, (const T *)v);                                  \
	}                                                                                  \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                         \
	{                                                                                  \
		return ar_decode_##name(r, (T *)v);                                        \
	}                                                                                  \
	static bool eq_##name(const void *x, const void *y)                                \
	{                                                                                  \
		return ar_equal_##name((const T *)x, (const T *)y);                        \
	}
#define CODEC_ENUM(name, T)                                                                \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)                       \
	{                                                                                  \
		return ar_encode_##name(b, (const T *)v);                                  \
	}                                                                                  \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                         \
	{                                                                                  \
		return ar_decode_##name(r, (T *)v);                                        \
	}                                                                                  \
	static bool eq_##name(const void *x, const void *y)                                \
	{                                                                                  \
		return *(const T *)x == *(const T *)y;                                     \
	}
/* A polymorphic struct's value is a pointer; encode and equal take it. */
#define CODEC_POLY(name, T)                                                                \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)                       \
	{                                                                                  \
		return ar_encode_##name(b, *(T *const *)v);                                \
	}                                                                                  \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                         \
	{                                                                                  \
		return ar_decode_##name(r, (T **)v);                                       \
	}                                                                                  \
	static bool eq_##name(const void *x, const void *y)                                \
	{                                                                                  \
		return ar_equal_##name(*(T *const *)x, *(T *const *)y);                    \
	}

CODEC(basics, struct ar_basics)
CODEC(ranges, struct ar_ranges)
CODEC_ENUM(level, enum ar_level)
CODEC_ENUM(more_level, enum ar_more_level)
CODEC_ENUM(shared_color, enum ar_shared_color)
CODEC(shared_point, struct ar_shared_point)
CODEC(base3_d, struct ar_base3_d)
CODEC(empty, struct ar_empty)
CODEC_POLY(shape, struct ar_shape)
CODEC_POLY(circle, struct ar_circle)
CODEC(value, struct ar_value)
CODEC(more_value, struct ar_more_value)
CODEC(names, struct ar_names)
CODEC(matrix, struct ar_matrix)
CODEC(dictionary, struct ar_dictionary)
CODEC(registry, struct ar_registry)
CODEC(nested, struct ar_nested)
CODEC(path, struct ar_path)
CODEC(tree, struct ar_tree)
CODEC(array_integer_m5_5, struct ar_array_integer_m5_5)
CODEC(everything, struct ar_everything)

#define C(name, T) {#name, sizeof(T), enc_##name, dec_##name, eq_##name}
static const struct codec codecs[] = {
	C(basics, struct ar_basics),
	C(ranges, struct ar_ranges),
	C(level, enum ar_level),
	C(more_level, enum ar_more_level),
	C(shared_color, enum ar_shared_color),
	C(shared_point, struct ar_shared_point),
	C(base3_d, struct ar_base3_d),
	C(empty, struct ar_empty),
	C(shape, struct ar_shape *),
	C(circle, struct ar_circle *),
	C(value, struct ar_value),
	C(more_value, struct ar_more_value),
	C(names, struct ar_names),
	C(matrix, struct ar_matrix),
	C(dictionary, struct ar_dictionary),
	C(registry, struct ar_registry),
	C(nested, struct ar_nested),
	C(path, struct ar_path),
	C(tree, struct ar_tree),
	C(array_integer_m5_5, struct ar_array_integer_m5_5),
	C(everything, struct ar_everything),
};

static const struct codec *codec(const char *name)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (strcmp(codecs[i].name, name) == 0)
			return &codecs[i];
	return NULL;
}

/* --- values: alltypes-rpc-values.h ------------------------------------------ */

/* The vectors: a type, a name, a builder. The storage is large enough for
 * any of the types. */
union storage {
	struct ar_everything e;
	struct ar_basics basics;
	struct ar_ranges ranges;
	enum ar_level level;
	enum ar_more_level more_level;
	enum ar_shared_color color;
	struct ar_shared_point point;
	struct ar_base3_d pos;
	struct ar_empty empty;
	struct ar_shape *shape;
	struct ar_circle *circle;
	struct ar_value value;
	struct ar_more_value more_value;
	struct ar_names names;
	struct ar_matrix matrix;
	struct ar_dictionary dict;
	struct ar_registry registry;
	struct ar_nested nested;
	struct ar_path path;
	struct ar_tree tree;
	struct ar_array_integer_m5_5 smalls;
};

struct vector {
	const char *type, *name;
	void (*build)(union storage *v);
};

static void v_basics_zero(union storage *v) { (void)v; }
static void v_basics_edge(union storage *v) { basics_edge(&v->basics); }
static void v_ranges(union storage *v)
{
	v->ranges.any = -1;
	v->ranges.small = 5;
	v->ranges.huge = (uint64_t)INT64_MAX + 1;
	v->ranges.capped = 10;
	v->ranges.floor = INT64_MAX;
}
static void v_level_low(union storage *v) { v->level = AR_LEVEL_LOW; }
static void v_level_high(union storage *v) { v->level = AR_LEVEL_HIGH; }
static void v_more_extra(union storage *v) { v->more_level = AR_MORE_LEVEL_EXTRA; }
static void v_more_inherited(union storage *v) { v->more_level = AR_MORE_LEVEL_LOW; }
static void v_color(union storage *v) { v->color = AR_SHARED_COLOR_GREEN; }
static void v_point(union storage *v) { v->point.x = 1; v->point.y = -2; }
static void v_pos(union storage *v) { v->pos.x = 1; v->pos.y = 2; v->pos.z = 3; }
static void v_empty(union storage *v) { (void)v; }
static void v_shape0(union storage *v) { v->shape = shape_of(0); }
static void v_shape1(union storage *v) { v->shape = shape_of(1); }
static void v_shape2(union storage *v) { v->shape = shape_of(2); }
static void v_shape3(union storage *v) { v->shape = shape_of(3); }
static void v_circle_ring(union storage *v) { v->circle = (struct ar_circle *)(void *)shape_of(2); }
static void v_value_number(union storage *v) { v->value.which = AR_VALUE_NUMBER; v->value.u.number = INT32_MIN; }
static void v_mv0(union storage *v) { more_value(&v->more_value, 0); }
static void v_mv1(union storage *v) { more_value(&v->more_value, 1); }
static void v_mv2(union storage *v) { more_value(&v->more_value, 2); }
static void v_mv3(union storage *v) { more_value(&v->more_value, 3); }
static void v_mv4(union storage *v) { more_value(&v->more_value, 4); }
static void v_mv5(union storage *v) { more_value(&v->more_value, 5); }
static void v_names_empty(union storage *v) { (void)v; }
static void v_names_1000(union storage *v)
{
	v->names.count = 1000;
	v->names.items = alloc(1000 * sizeof(char *));
	for (int i = 0; i < 1000; i++)
		v->names.items[i] = text(i % 2 ? "odd" : "");
}
static void v_dict_dup(union storage *v) { dictionary(&v->dict, 4); }
static void v_nested(union storage *v)
{
	v->nested.count = 1;
	v->nested.entries = alloc(sizeof(*v->nested.entries));
	v->nested.entries[0].key = UINT16_MAX;
	dictionary(&v->nested.entries[0].value, 1);
}
static void v_tree(union storage *v) { tree(&v->tree, 2); }
static void v_smalls(union storage *v)
{
	v->smalls.count = 3;
	v->smalls.items = alloc(3 * sizeof(int64_t));
	v->smalls.items[0] = -5;
	v->smalls.items[2] = 5;
}
static void v_everything(union storage *v) { everything(&v->e); }

static const struct vector vectors[] = {
	{"basics", "zero", v_basics_zero},
	{"basics", "edge", v_basics_edge},
	{"ranges", "edge", v_ranges},
	{"level", "low", v_level_low},
	{"level", "high", v_level_high},
	{"more_level", "extra", v_more_extra},
	{"more_level", "inherited", v_more_inherited},
	{"shared_color", "green", v_color},
	{"shared_point", "p", v_point},
	{"base3_d", "inherited", v_pos},
	{"empty", "empty", v_empty},
	{"shape", "shape", v_shape0},
	{"shape", "circle", v_shape1},
	{"shape", "ring", v_shape2},
	{"shape", "square", v_shape3},
	{"circle", "ring", v_circle_ring},
	{"value", "number", v_value_number},
	{"more_value", "number", v_mv0},
	{"more_value", "word", v_mv1},
	{"more_value", "basics", v_mv2},
	{"more_value", "flag", v_mv3},
	{"more_value", "shape", v_mv4},
	{"more_value", "raw", v_mv5},
	{"names", "empty", v_names_empty},
	{"dictionary", "duplicates", v_dict_dup},
	{"nested", "one", v_nested},
	{"tree", "depth2", v_tree},
	{"array_integer_m5_5", "bounds", v_smalls},
	{"everything", "all", v_everything},
};
#define VECTOR_COUNT (sizeof(vectors) / sizeof(vectors[0]))

/* --- helpers ------------------------------------------------------------------ */

static void hex(FILE *f, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

static size_t unhex(const char *s, unsigned char *out, size_t cap)
{
	size_t n = 0;
	unsigned x;

	while (s[0] && s[1] && s[0] != '\n' && n < cap) {
		if (sscanf(s, "%2x", &x) != 1)
			break;
		out[n++] = (unsigned char)x;
		s += 2;
	}
	return n;
}

/* Decode @n bytes as @c: 0, or the reader's error. */
static int decode(const struct codec *c, const void *data, size_t n, void *out,
		  struct pbus_rpc_arena *arena)
{
	struct pbus_rpc_reader r;
	bool ok;

	pbus_rpc_reader_init(&r, data, n, arena);
	ok = c->decode(&r, out);
	if (pbus_rpc_reader_end(&r) == 0 && !ok)
		return -EINVAL; /* decode said false without an error */
	return r.error;
}

/* --- cases -------------------------------------------------------------------- */

/* Every vector: encode, decode, equal, encode again, copy; and its bytes
 * against the vectors file. */
static void check_vector(const struct vector *v, const char *file_hex)
{
	const struct codec *c = codec(v->type);
	struct pbus_rpc_arena *arena = pbus_rpc_arena_new(), *copy_arena = pbus_rpc_arena_new();
	union storage *in = calloc(1, sizeof(*in)), *out = calloc(1, sizeof(*out));
	struct pbus_rpc_buf b, b2;
	unsigned char want[65536];

	REQUIRE(c != NULL && arena && copy_arena && in && out);
	v->build(in);
	pbus_rpc_buf_init(&b);
	pbus_rpc_buf_init(&b2);
	CHECK_EQ(c->encode(&b, in), 0);
	if (file_hex != NULL) {
		size_t n = unhex(file_hex, want, sizeof(want));
		CHECK_MSG(n == b.size && memcmp(want, b.data, n) == 0,
			  "%s %s: the encoding differs from tests/vectors/rpc-args.txt", v->type, v->name);
	}
	CHECK_EQ(decode(c, b.data, b.size, out, arena), 0);
	CHECK_MSG(c->equal(in, out), "%s %s: decoded value differs", v->type, v->name);
	CHECK_EQ(c->encode(&b2, out), 0);
	CHECK(b2.size == b.size && memcmp(b.data, b2.data, b.size) == 0);
	pbus_rpc_buf_release(&b2);
	/* truncated at every byte: never a value */
	for (size_t n = 0; n < b.size; n++) {
		memset(out, 0, sizeof(*out));
		pbus_rpc_arena_reset(arena);
		if (!CHECK_MSG(decode(c, b.data, n, out, arena) == -EPROTO,
			       "%s %s: truncated to %zu of %zu bytes decodes", v->type, v->name, n, b.size))
			break;
	}
	/* one byte too many */
	{
		unsigned char *more = malloc(b.size + 1);

		REQUIRE(more != NULL);
		memcpy(more, b.data, b.size);
		more[b.size] = 0;
		CHECK_EQ(decode(c, more, b.size + 1, out, arena), -EPROTO);
		free(more);
	}
	pbus_rpc_buf_release(&b);
	free(in);
	free(out);
	pbus_rpc_arena_free(arena);
	pbus_rpc_arena_free(copy_arena);
}

/* ar_copy_*: a deep copy outlives the arena of the original. */
static void copy_outlives_original(void)
{
	struct pbus_rpc_arena *a1 = pbus_rpc_arena_new(), *a2 = pbus_rpc_arena_new();
	struct ar_everything in, dec, cp, again;
	struct pbus_rpc_buf b;
	struct pbus_rpc_reader r;

	REQUIRE(a1 && a2);
	memset(&in, 0, sizeof(in));
	everything(&in);
	pbus_rpc_buf_init(&b);
	CHECK_EQ(ar_encode_everything(&b, &in), 0);
	pbus_rpc_reader_init(&r, b.data, b.size, a1);
	CHECK(ar_decode_everything(&r, &dec));
	CHECK_EQ(ar_copy_everything(&cp, &dec, a2), 0);
	pbus_rpc_arena_free(a1);
	CHECK(ar_equal_everything(&in, &cp));
	/* in place (dst == src) */
	again = cp;
	CHECK_EQ(ar_copy_everything(&again, &again, a2), 0);
	CHECK(ar_equal_everything(&in, &again));
	CHECK(again.basics.text != cp.basics.text);
	pbus_rpc_buf_release(&b);
	pbus_rpc_arena_free(a2);
}

/* Decode @hex as @type: must fail with -EPROTO. */
static void check_bad(const char *type, const char *name, const char *hexbytes)
{
	const struct codec *c = codec(type);
	struct pbus_rpc_arena *arena = pbus_rpc_arena_new();
	union storage *out = calloc(1, sizeof(*out));
	unsigned char data[4096];
	size_t n = unhex(hexbytes, data, sizeof(data));

	REQUIRE(c != NULL && arena && out);
	CHECK_MSG(decode(c, data, n, out, arena) == -EPROTO, "bad %s %s decodes", type, name);
	free(out);
	pbus_rpc_arena_free(arena);
}

/* Nesting: a Tree of k levels nests 2k values (the tree and its kids
 * array): 32 levels decode, 33 are refused. */
static void depth(void)
{
	for (int levels = 32; levels <= 33; levels++) {
		struct pbus_rpc_buf b;
		struct pbus_rpc_arena *arena = pbus_rpc_arena_new();
		struct ar_tree t;

		pbus_rpc_buf_init(&b);
		for (int i = 0; i < levels; i++) {
			pbus_rpc_put_u32(&b, 0);                     /* label "" */
			pbus_rpc_put_count(&b, i + 1 < levels ? 1 : 0); /* kids */
		}
		for (int i = 0; i < levels; i++)
			pbus_rpc_put_count(&b, 0);                   /* attrs */
		CHECK_EQ(decode(codec("tree"), b.data, b.size, &t, arena), levels == 32 ? 0 : -EPROTO);
		pbus_rpc_buf_release(&b);
		pbus_rpc_arena_free(arena);
	}
}

/* Values without encoding fail to encode with -EINVAL. */
static void unencodable(void)
{
	struct pbus_rpc_buf b;
	struct ar_more_value mv;
	enum ar_level level = (enum ar_level)1;
	struct ar_array_integer_m5_5 smalls;
	int64_t six = 6;
	struct ar_circle square_as_circle;
	struct ar_names names = {NULL, 2};

	pbus_rpc_buf_init(&b);
	memset(&mv, 0, sizeof(mv));
	mv.which = 6;
	CHECK_EQ(ar_encode_more_value(&b, &mv), -EINVAL);
	pbus_rpc_buf_init(&b);
	CHECK_EQ(ar_encode_level(&b, &level), -EINVAL);
	pbus_rpc_buf_init(&b);
	smalls.count = 1;
	smalls.items = &six;
	CHECK_EQ(ar_encode_array_integer_m5_5(&b, &smalls), -EINVAL);
	pbus_rpc_buf_init(&b);
	CHECK_EQ(ar_encode_shape(&b, NULL), -EINVAL);
	pbus_rpc_buf_init(&b);
	memset(&square_as_circle, 0, sizeof(square_as_circle));
	square_as_circle.type_tag = AR_SQUARE_TYPE_TAG; /* not derived from Circle */
	CHECK_EQ(ar_encode_circle(&b, &square_as_circle), -EINVAL);
	pbus_rpc_buf_init(&b);
	CHECK_EQ(ar_encode_names(&b, &names), -EINVAL);
	pbus_rpc_buf_init(&b);
	CHECK_EQ(pbus_rpc_type_tag("org.example.rpc.AllRpc.Shape"), AR_SHAPE_TYPE_TAG);
	pbus_rpc_buf_release(&b);
}

/* --- main ----------------------------------------------------------------------- */

static const char *find_line(char **lines, size_t count, const char *kind, const char *type,
			     const char *name)
{
	size_t k = strlen(kind), t = strlen(type), n = strlen(name);

	for (size_t i = 0; i < count; i++) {
		const char *l = lines[i];

		if (strncmp(l, kind, k) == 0 && l[k] == ' ' && strncmp(l + k + 1, type, t) == 0 &&
		    l[k + 1 + t] == ' ' && strncmp(l + k + t + 2, name, n) == 0 &&
		    l[k + t + 2 + n] == ' ')
			return l + k + t + n + 3;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char **lines = NULL;
	size_t count = 0, cap = 0;
	char buf[1 << 17];
	FILE *f;

	values_arena = pbus_rpc_arena_new();
	if (argc == 2 && strcmp(argv[1], "--write") == 0) {
		for (size_t i = 0; i < VECTOR_COUNT; i++) {
			union storage *v = calloc(1, sizeof(*v));
			struct pbus_rpc_buf b;

			vectors[i].build(v);
			pbus_rpc_buf_init(&b);
			codec(vectors[i].type)->encode(&b, v);
			printf("good %s %s ", vectors[i].type, vectors[i].name);
			if (b.size == 0)
				printf("-");
			hex(stdout, b.data, b.size);
			printf("\n");
			pbus_rpc_buf_release(&b);
			free(v);
		}
		pbus_rpc_arena_free(values_arena);
		return 0;
	}
	pbus_check_suite("gen/rpc-codec");
	if (argc != 2) {
		fprintf(stderr, "usage: %s VECTORS | --write\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "r");
	if (f == NULL) {
		perror(argv[1]);
		return 2;
	}
	while (fgets(buf, sizeof(buf), f)) {
		if (buf[0] == '#' || buf[0] == '\n')
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 64;
			lines = realloc(lines, cap * sizeof(*lines));
		}
		lines[count++] = strdup(buf);
	}
	fclose(f);

	for (size_t i = 0; i < VECTOR_COUNT; i++) {
		char name[120];
		const char *h = find_line(lines, count, "good", vectors[i].type, vectors[i].name);

		snprintf(name, sizeof(name), "vector/%s/%s", vectors[i].type, vectors[i].name);
		pbus_check_begin(name);
		CHECK_MSG(h != NULL, "no line 'good %s %s' in %s", vectors[i].type, vectors[i].name,
			  argv[1]);
		check_vector(&vectors[i], h);
		pbus_check_end();
	}
	/* every bad line of the file */
	for (size_t i = 0; i < count; i++) {
		char type[48], name[48], hexbytes[8192], cname[120];

		if (strncmp(lines[i], "bad ", 4) != 0)
			continue;
		if (sscanf(lines[i], "bad %47s %47s %8191s", type, name, hexbytes) != 3)
			hexbytes[0] = 0;
		snprintf(cname, sizeof(cname), "bad/%s/%s", type, name);
		pbus_check_begin(cname);
		check_bad(type, name, strcmp(hexbytes, "-") == 0 ? "" : hexbytes);
		pbus_check_end();
	}
	{
		/* a large array: 1000 strings */
		struct vector big = {"names", "1000", v_names_1000};

		pbus_check_begin("vector/names/1000");
		check_vector(&big, NULL);
		pbus_check_end();
	}
	RUN_CASE(copy_outlives_original);
	RUN_CASE(depth);
	RUN_CASE(unencodable);
	for (size_t i = 0; i < count; i++)
		free(lines[i]);
	free(lines);
	pbus_rpc_arena_free(values_arena);
	CHECK_EXIT();
}
