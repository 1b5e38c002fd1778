/* SPDX-License-Identifier: MIT */
/*
 * fuzz-rpc-args.c: libFuzzer target for the argument codec that pbus-gen
 * generates for methods and broadcasts (docs/methods.md §4), on
 * tests/gen/fixtures/rpc/alltypes-rpc.fdepl generated with --prefix ar
 * --rpc-types-source (tests/fuzz/run generates it into BUILD/fuzz/gen-rpc/).
 *
 * An input is one byte that picks what to decode, then the bytes to decode:
 * one value of a type of the fixture (every type with a decoder, and the
 * primitive types the generated code reads with pbus_rpc_get_*()), or the
 * argument list of a method's in- or out-arguments or of a broadcast,
 * decoded one argument after the other as the generated dispatch, reply
 * and deliver functions do (they are static there, so the lists are
 * spelled out below; `error` enumerations come first in a reply).
 *
 * Whatever decodes must, because the encoding is canonical:
 *  - encode again to exactly the bytes it was decoded from (every float
 *    and NaN bit pattern, Booleans 0/1, union indexes, polymorphic tags);
 *  - compare equal (ar_equal_*) to its deep copy (ar_copy_*), and the copy
 *    must still encode to those bytes after the arena of the original is
 *    freed (a copy that shares memory with its source reads freed memory:
 *    ASan), and after a copy onto itself (as the generated in-process
 *    calls do);
 * and what does not decode must fail with -EPROTO (or -ENOMEM). Nothing may
 * crash, leak or read out of bounds (ASan, UBSan, LeakSanitizer).
 *
 * With PBUS_FUZZ_LIST=1 in the environment it prints its table (one line
 * per selector byte: its name and the types it decodes) and exits:
 * tests/fuzz/run makes the seeds from it and tests/vectors/rpc-args.txt.
 */
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alltypes-rpc.h"

/* --- a uniform view of the codec of each type ----------------------------- */

struct codec {
	const char *name;
	size_t size;
	bool (*decode)(struct pbus_rpc_reader *r, void *v);
	int (*encode)(struct pbus_rpc_buf *b, const void *v);
	/* NULL: a fixed-size value, copied as bytes */
	int (*copy)(void *dst, const void *src, struct pbus_rpc_arena *a);
	bool (*equal)(const void *x, const void *y);
};

#define CODEC_COMMON_(name, T)                                                     \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                 \
	{                                                                          \
		return ar_decode_##name(r, (T *)v);                                \
	}                                                                          \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)               \
	{                                                                          \
		return ar_encode_##name(b, (const T *)v);                          \
	}
/* A type with ar_copy_* (it holds variable-size parts). */
#define CODEC(name, T)                                                             \
	CODEC_COMMON_(name, T)                                                     \
	static int copy_##name(void *d, const void *s, struct pbus_rpc_arena *a)   \
	{                                                                          \
		return ar_copy_##name((T *)d, (const T *)s, a);                    \
	}                                                                          \
	static bool eq_##name(const void *x, const void *y)                        \
	{                                                                          \
		return ar_equal_##name((const T *)x, (const T *)y);                \
	}
#define C_(name, T) {#name, sizeof(T), dec_##name, enc_##name, copy_##name, eq_##name}
/* A fixed-size struct: no ar_copy_*. */
#define CODEC_FIXED(name, T)                                                       \
	CODEC_COMMON_(name, T)                                                     \
	static bool eq_##name(const void *x, const void *y)                        \
	{                                                                          \
		return ar_equal_##name((const T *)x, (const T *)y);                \
	}
#define CF_(name, T) {#name, sizeof(T), dec_##name, enc_##name, NULL, eq_##name}
/* An enumeration: neither copy nor equal. */
#define CODEC_ENUM(name, T)                                                        \
	CODEC_COMMON_(name, T)                                                     \
	static bool eq_##name(const void *x, const void *y)                        \
	{                                                                          \
		return *(const T *)x == *(const T *)y;                             \
	}
/* A polymorphic struct: the value is a pointer; encode and equal take it. */
#define CODEC_POLY(name, T)                                                        \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                 \
	{                                                                          \
		return ar_decode_##name(r, (T **)v);                               \
	}                                                                          \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)               \
	{                                                                          \
		return ar_encode_##name(b, *(T *const *)v);                        \
	}                                                                          \
	static int copy_##name(void *d, const void *s, struct pbus_rpc_arena *a)   \
	{                                                                          \
		return ar_copy_##name((T **)d, (T *const *)s, a);                  \
	}                                                                          \
	static bool eq_##name(const void *x, const void *y)                        \
	{                                                                          \
		return ar_equal_##name(*(T *const *)x, *(T *const *)y);            \
	}
/* A primitive, as generated code reads and writes it (pbus_rpc_get_*,
 * pbus_rpc_put_*); compared bit for bit, as the generated equal does. */
#define CODEC_PRIM(name, T)                                                        \
	static bool dec_##name(struct pbus_rpc_reader *r, void *v)                 \
	{                                                                          \
		return pbus_rpc_get_##name(r, (T *)v);                             \
	}                                                                          \
	static int enc_##name(struct pbus_rpc_buf *b, const void *v)               \
	{                                                                          \
		pbus_rpc_put_##name(b, *(const T *)v);                             \
		return b->error;                                                   \
	}                                                                          \
	static bool eq_##name(const void *x, const void *y)                        \
	{                                                                          \
		return memcmp(x, y, sizeof(T)) == 0;                               \
	}

CODEC(everything, struct ar_everything)
CODEC(basics, struct ar_basics)
CODEC_FIXED(ranges, struct ar_ranges)
CODEC_FIXED(shared_point, struct ar_shared_point)
CODEC_FIXED(base3_d, struct ar_base3_d)
CODEC_FIXED(empty, struct ar_empty)
CODEC_POLY(shape, struct ar_shape)
CODEC_POLY(circle, struct ar_circle)
CODEC_POLY(ring, struct ar_ring)
CODEC_POLY(square, struct ar_square)
CODEC(array_shape, struct ar_array_shape)
CODEC(value, struct ar_value)
CODEC(more_value, struct ar_more_value)
CODEC(names, struct ar_names)
CODEC(row, struct ar_row)
CODEC(matrix, struct ar_matrix)
CODEC(dictionary, struct ar_dictionary)
CODEC(registry, struct ar_registry)
CODEC(nested, struct ar_nested)
CODEC(path, struct ar_path)
CODEC(tree, struct ar_tree)
CODEC(array_tree, struct ar_array_tree)
CODEC(array_bool, struct ar_array_bool)
CODEC(array_int8, struct ar_array_int8)
CODEC(array_uint64, struct ar_array_uint64)
CODEC(array_float, struct ar_array_float)
CODEC(array_string, struct ar_array_string)
CODEC(array_bytes, struct ar_array_bytes)
CODEC(array_integer_m5_5, struct ar_array_integer_m5_5)
CODEC(array_level, struct ar_array_level)
CODEC(array_shared_point, struct ar_array_shared_point)
CODEC(array_value, struct ar_array_value)
CODEC(array_dictionary, struct ar_array_dictionary)
CODEC(array_names, struct ar_array_names)
CODEC_ENUM(level, enum ar_level)
CODEC_ENUM(more_level, enum ar_more_level)
CODEC_ENUM(shared_color, enum ar_shared_color)
CODEC_ENUM(failure, enum ar_failure)
CODEC_ENUM(lookup_error, enum ar_lookup_error)
CODEC_PRIM(bool, bool)
CODEC_PRIM(i8, int8_t)
CODEC_PRIM(u8, uint8_t)
CODEC_PRIM(i16, int16_t)
CODEC_PRIM(u16, uint16_t)
CODEC_PRIM(i32, int32_t)
CODEC_PRIM(u32, uint32_t)
CODEC_PRIM(i64, int64_t)
CODEC_PRIM(u64, uint64_t)
CODEC_PRIM(float, float)
CODEC_PRIM(double, double)

/* String and ByteBuffer arguments: pbus_rpc_get_string/_bytes, copied as
 * the generated copy_string_/copy_bytes_ do. */
static bool dec_string(struct pbus_rpc_reader *r, void *v) { return pbus_rpc_get_string(r, (char **)v); }
static int enc_string(struct pbus_rpc_buf *b, const void *v)
{
	pbus_rpc_put_string(b, *(char *const *)v);
	return b->error;
}
static int copy_string(void *d, const void *s, struct pbus_rpc_arena *a)
{
	const char *src = *(char *const *)s;

	*(char **)d = src ? pbus_rpc_arena_strdup(a, src) : NULL;
	return src && !*(char **)d ? -ENOMEM : 0;
}
static bool eq_string(const void *x, const void *y)
{
	const char *a = *(char *const *)x, *b = *(char *const *)y;

	return strcmp(a ? a : "", b ? b : "") == 0;
}
static bool dec_bytes(struct pbus_rpc_reader *r, void *v)
{
	return pbus_rpc_get_bytes(r, (struct pbus_rpc_bytes *)v);
}
static int enc_bytes(struct pbus_rpc_buf *b, const void *v)
{
	pbus_rpc_put_bytes(b, *(const struct pbus_rpc_bytes *)v);
	return b->error;
}
static int copy_bytes(void *d, const void *s, struct pbus_rpc_arena *a)
{
	struct pbus_rpc_bytes x = *(const struct pbus_rpc_bytes *)s;
	uint8_t *p = NULL;

	if (x.size) {
		p = pbus_rpc_arena_alloc(a, x.size);
		if (!p)
			return -ENOMEM;
		memcpy(p, x.data, x.size);
	}
	x.data = p;
	*(struct pbus_rpc_bytes *)d = x;
	return 0;
}
static bool eq_bytes(const void *x, const void *y)
{
	const struct pbus_rpc_bytes *a = x, *b = y;

	return a->size == b->size && (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}
/* Integer(-5, 5) as an argument: i64, range-checked as the generated
 * serve_basics_() and reply_basics_() do. */
static bool dec_small(struct pbus_rpc_reader *r, void *v)
{
	int64_t *x = v;

	if (pbus_rpc_get_i64(r, x) && (*x < -5 || *x > 5))
		pbus_rpc_reader_fail(r, -EPROTO);
	return r->error == 0;
}
static int enc_small(struct pbus_rpc_buf *b, const void *v)
{
	int64_t x = *(const int64_t *)v;

	if (x < -5 || x > 5)
		pbus_rpc_buf_fail(b, -EINVAL);
	pbus_rpc_put_i64(b, x);
	return b->error;
}
static bool eq_small(const void *x, const void *y) { return *(const int64_t *)x == *(const int64_t *)y; }

#define CP_(name, T) {#name, sizeof(T), dec_##name, enc_##name, NULL, eq_##name}

static const struct codec codecs[] = {
	C_(everything, struct ar_everything),
	C_(basics, struct ar_basics),
	CF_(ranges, struct ar_ranges),
	CF_(shared_point, struct ar_shared_point),
	CF_(base3_d, struct ar_base3_d),
	CF_(empty, struct ar_empty),
	C_(shape, struct ar_shape *),
	C_(circle, struct ar_circle *),
	C_(ring, struct ar_ring *),
	C_(square, struct ar_square *),
	C_(array_shape, struct ar_array_shape),
	C_(value, struct ar_value),
	C_(more_value, struct ar_more_value),
	C_(names, struct ar_names),
	C_(row, struct ar_row),
	C_(matrix, struct ar_matrix),
	C_(dictionary, struct ar_dictionary),
	C_(registry, struct ar_registry),
	C_(nested, struct ar_nested),
	C_(path, struct ar_path),
	C_(tree, struct ar_tree),
	C_(array_tree, struct ar_array_tree),
	C_(array_bool, struct ar_array_bool),
	C_(array_int8, struct ar_array_int8),
	C_(array_uint64, struct ar_array_uint64),
	C_(array_float, struct ar_array_float),
	C_(array_string, struct ar_array_string),
	C_(array_bytes, struct ar_array_bytes),
	C_(array_integer_m5_5, struct ar_array_integer_m5_5),
	C_(array_level, struct ar_array_level),
	C_(array_shared_point, struct ar_array_shared_point),
	C_(array_value, struct ar_array_value),
	C_(array_dictionary, struct ar_array_dictionary),
	C_(array_names, struct ar_array_names),
	CP_(level, enum ar_level),
	CP_(more_level, enum ar_more_level),
	CP_(shared_color, enum ar_shared_color),
	CP_(failure, enum ar_failure),
	CP_(lookup_error, enum ar_lookup_error),
	CP_(bool, bool),
	CP_(i8, int8_t),
	CP_(u8, uint8_t),
	CP_(i16, int16_t),
	CP_(u16, uint16_t),
	CP_(i32, int32_t),
	CP_(u32, uint32_t),
	CP_(i64, int64_t),
	CP_(u64, uint64_t),
	CP_(float, float),
	CP_(double, double),
	{"string", sizeof(char *), dec_string, enc_string, copy_string, eq_string},
	{"bytes", sizeof(struct pbus_rpc_bytes), dec_bytes, enc_bytes, copy_bytes, eq_bytes},
	{"small", sizeof(int64_t), dec_small, enc_small, NULL, eq_small},
};
#define CODEC_COUNT (sizeof(codecs) / sizeof(codecs[0]))

/* --- the argument lists of alltypes-rpc.fidl ------------------------------- */

#define MAX_ARGS 16

struct arglist {
	const char *name;
	const char *types[MAX_ARGS]; /* NULL-terminated */
};

/* In declaration order, as docs/methods.md §4 puts them in a body (a
 * method's error enumeration first in its reply). */
static const struct arglist arglists[] = {
	{"ping.in", {"u32"}},
	{"ping.out", {"u32"}},
	{"echo.in", {"everything"}},
	{"echo.out", {"failure", "everything"}},
	{"basics.in", {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "float", "double",
		       "string", "bytes", "small", "level"}},
	{"basics.out", {"bool", "i64", "double", "string", "bytes", "small", "level"}},
	{"shapes.in", {"shape", "array_shape"}},
	{"shapes.out", {"shape"}},
	{"lookup.in", {"string"}},
	{"lookup.out", {"lookup_error", "more_value", "dictionary"}},
	{"fixedOnly.in", {"shared_point", "base3_d"}},
	{"fixedOnly.out", {"shared_point", "level"}},
	{"nothing.in", {NULL}},
	{"nothing.out", {NULL}},
	{"reset.in", {"level", "string"}},
	{"describe_short.in", {"i32"}},
	{"describe_short.out", {"string"}},
	{"describe_long.in", {"i32", "bool"}},
	{"describe_long.out", {"string"}},
	{"tick", {"u64"}},
	{"changed", {"everything", "level"}},
	{"alarm", {"string", "shape", "path"}},
	{"empty", {NULL}},
};
#define ARGLIST_COUNT (sizeof(arglists) / sizeof(arglists[0]))

/* Each selector: the codecs it decodes, one after the other. */
struct selector {
	const char *name;
	bool list; /* an argument list: the body must be consumed exactly */
	unsigned count;
	const struct codec *codecs[MAX_ARGS];
};
static struct selector selectors[CODEC_COUNT + ARGLIST_COUNT];
static unsigned selector_count;

static const struct codec *find_codec(const char *name)
{
	for (size_t i = 0; i < CODEC_COUNT; i++)
		if (strcmp(codecs[i].name, name) == 0)
			return &codecs[i];
	fprintf(stderr, "fuzz-rpc-args: no codec %s\n", name);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *list = getenv("PBUS_FUZZ_LIST");

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < CODEC_COUNT; i++)
		selectors[selector_count++] = (struct selector){codecs[i].name, false, 1, {&codecs[i]}};
	for (size_t i = 0; i < ARGLIST_COUNT; i++) {
		struct selector *s = &selectors[selector_count++];

		*s = (struct selector){arglists[i].name, true, 0, {NULL}};
		for (unsigned k = 0; k < MAX_ARGS && arglists[i].types[k]; k++)
			s->codecs[s->count++] = find_codec(arglists[i].types[k]);
	}
	if (list && strcmp(list, "1") == 0) {
		for (unsigned i = 0; i < selector_count; i++) {
			printf("%u %s %s", i, selectors[i].list ? "list" : "type", selectors[i].name);
			for (unsigned k = 0; k < selectors[i].count; k++)
				printf(" %s", selectors[i].codecs[k]->name);
			printf("\n");
		}
		exit(0);
	}
	return 0;
}

/* --- the checks ---------------------------------------------------------------- */

#define SLOT_SIZE 1024
_Static_assert(sizeof(struct ar_everything) <= SLOT_SIZE, "a slot holds any value");

static alignas(max_align_t) unsigned char values[MAX_ARGS][SLOT_SIZE];
static alignas(max_align_t) unsigned char copies[MAX_ARGS][SLOT_SIZE];

static void __attribute__((noreturn)) mismatch(const struct selector *s, const char *what)
{
	fprintf(stderr, "fuzz-rpc-args: %s: %s\n", s->name, what);
	abort();
}

/* Encode @s's values from @slots; the bytes must be @want's @n. */
static void encodes_to(const struct selector *s, unsigned char (*slots)[SLOT_SIZE], const unsigned char *want,
		       size_t n, const char *what)
{
	struct pbus_rpc_buf b;

	pbus_rpc_buf_init(&b);
	for (unsigned k = 0; k < s->count; k++)
		s->codecs[k]->encode(&b, slots[k]);
	if (b.error != 0) {
		fprintf(stderr, "fuzz-rpc-args: %s: %s does not encode (%d)\n", s->name, what, b.error);
		abort();
	}
	if (b.size != n || memcmp(b.data, want, n) != 0) {
		fprintf(stderr, "fuzz-rpc-args: %s: %s encodes to %zu other bytes than the %zu decoded\n",
			s->name, what, b.size, n);
		abort();
	}
	pbus_rpc_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct selector *s;
	struct pbus_rpc_arena *arena, *copy_arena;
	struct pbus_rpc_reader r;
	size_t used;
	bool decoded;
	int end;

	if (size < 1)
		return 0;
	s = &selectors[data[0] % selector_count];
	data++;
	size--;
	arena = pbus_rpc_arena_new();
	copy_arena = pbus_rpc_arena_new();
	if (!arena || !copy_arena)
		abort();
	memset(values, 0, sizeof(values));
	memset(copies, 0, sizeof(copies));

	/* Decode as generated code does: one value after the other, the
	 * reader's error sticky, the verdict at the end. */
	pbus_rpc_reader_init(&r, data, size, arena);
	for (unsigned k = 0; k < s->count; k++)
		s->codecs[k]->decode(&r, values[k]);
	used = (size_t)(r.p - data);
	if (used > size)
		mismatch(s, "the reader went past the end");
	decoded = r.error == 0;
	end = r.error;
	if (s->list)
		end = pbus_rpc_reader_end(&r);
	if (r.depth != 0)
		mismatch(s, "the reader's depth is not back to 0");
	if (end != 0 && end != -EPROTO && end != -ENOMEM) {
		fprintf(stderr, "fuzz-rpc-args: %s: decoding failed with %d\n", s->name, end);
		abort();
	}
	if (decoded) {
		/* Decoded (a list with bytes left over too, up to them): the
		 * bytes it took must come out again. */
		encodes_to(s, values, data, used, "the decoded value");
		for (unsigned k = 0; k < s->count; k++) {
			const struct codec *c = s->codecs[k];

			if (!c->equal(values[k], values[k]))
				mismatch(s, "a decoded value is not equal to itself");
			if (c->copy) {
				if (c->copy(copies[k], values[k], copy_arena) != 0)
					mismatch(s, "a decoded value cannot be copied");
			} else {
				memcpy(copies[k], values[k], c->size);
			}
			if (!c->equal(values[k], copies[k]) || !c->equal(copies[k], values[k]))
				mismatch(s, "a copy is not equal to the decoded value");
		}
		/* The copy owns its memory: it outlives the decoded value's. */
		pbus_rpc_arena_free(arena);
		arena = NULL;
		encodes_to(s, copies, data, used, "the copy");
		/* Copied onto itself, as the generated in-process calls do. */
		for (unsigned k = 0; k < s->count; k++)
			if (s->codecs[k]->copy && s->codecs[k]->copy(copies[k], copies[k], copy_arena) != 0)
				mismatch(s, "a copy cannot be copied onto itself");
		encodes_to(s, copies, data, used, "the copy copied onto itself");
	}
	pbus_rpc_arena_free(arena);
	pbus_rpc_arena_free(copy_arena);
	return 0;
}
