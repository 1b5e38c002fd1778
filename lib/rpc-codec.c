/* SPDX-License-Identifier: MIT */
/*
 * rpc-codec.c: the arguments of methods and broadcasts as bytes
 * (docs/methods.md §4): the out-of-line half of parambus/rpc.h's buffers
 * and readers (growing, strings, byte buffers, counts), and the arena that
 * decoded variable-size values live in.
 *
 * An arena is a list of blocks; allocation takes the next aligned bytes of
 * the newest block, or a new block (at least twice the last, at least the
 * request). Reset frees every block but the first, so a reader reset per
 * call reuses one block and allocates nothing in the steady state.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include <parambus/rpc.h>

#include "value-internal.h"

#define ARENA_FIRST_BLOCK 1024

struct arena_block {
	struct arena_block *next; /* older blocks */
	size_t size, used;
	alignas(max_align_t) unsigned char data[];
};

struct pbus_rpc_arena {
	struct arena_block *blocks; /* newest first */
};

PBUS_API struct pbus_rpc_arena *pbus_rpc_arena_new(void)
{
	return calloc(1, sizeof(struct pbus_rpc_arena));
}

PBUS_API void pbus_rpc_arena_reset(struct pbus_rpc_arena *a)
{
	struct arena_block *b;

	if (!a || !a->blocks)
		return;
	/* Keep the oldest (the first) block, free the rest. */
	while (a->blocks->next) {
		b = a->blocks;
		a->blocks = b->next;
		free(b);
	}
	a->blocks->used = 0;
}

PBUS_API void pbus_rpc_arena_free(struct pbus_rpc_arena *a)
{
	if (!a)
		return;
	while (a->blocks) {
		struct arena_block *b = a->blocks;

		a->blocks = b->next;
		free(b);
	}
	free(a);
}

PBUS_API void *pbus_rpc_arena_alloc(struct pbus_rpc_arena *a, size_t size)
{
	const size_t align = alignof(max_align_t);
	struct arena_block *b = a->blocks;
	size_t at;

	if (size == 0)
		size = 1;
	if (size > SIZE_MAX / 4)
		return NULL;
	at = b ? (b->used + align - 1) & ~(align - 1) : 0;
	if (!b || at + size > b->size) {
		size_t want = b ? b->size * 2 : ARENA_FIRST_BLOCK;

		if (want < size)
			want = size;
		b = malloc(sizeof *b + want);
		if (!b)
			return NULL;
		b->size = want;
		b->used = 0;
		b->next = a->blocks;
		a->blocks = b;
		at = 0;
	}
	b->used = at + size;
	memset(b->data + at, 0, size);
	return b->data + at;
}

PBUS_API char *pbus_rpc_arena_strdup(struct pbus_rpc_arena *a, const char *text)
{
	size_t n = strlen(text);
	char *s = pbus_rpc_arena_alloc(a, n + 1);

	if (s)
		memcpy(s, text, n + 1);
	return s;
}

/* --- buffers ---------------------------------------------------------------- */

PBUS_API void pbus_rpc_buf_release(struct pbus_rpc_buf *b)
{
	if (b->data != b->inline_data)
		free(b->data);
	b->data = b->inline_data;
	b->capacity = sizeof b->inline_data;
	b->size = 0;
}

PBUS_API unsigned char *pbus_rpc_buf_grow_(struct pbus_rpc_buf *b, size_t n)
{
	size_t want;
	unsigned char *data;

	if (b->error)
		return NULL;
	if (n > UINT32_MAX || b->size + n > UINT32_MAX) {
		b->error = -EMSGSIZE;
		return NULL;
	}
	if (b->size + n > b->capacity) {
		want = b->capacity * 2;
		while (want < b->size + n)
			want *= 2;
		if (b->data == b->inline_data) {
			data = malloc(want);
			if (data)
				memcpy(data, b->data, b->size);
		} else {
			data = realloc(b->data, want);
		}
		if (!data) {
			b->error = -ENOMEM;
			return NULL;
		}
		b->data = data;
		b->capacity = want;
	}
	b->size += n;
	return b->data + b->size - n;
}

PBUS_API void pbus_rpc_put_string(struct pbus_rpc_buf *b, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	unsigned char *p;

	if (n && !pbus_utf8_valid(text, n)) {
		pbus_rpc_buf_fail(b, -EINVAL);
		return;
	}
	if (n > UINT32_MAX) {
		pbus_rpc_buf_fail(b, -EMSGSIZE);
		return;
	}
	pbus_rpc_put_u32(b, (uint32_t)n);
	p = pbus_rpc_room(b, n);
	if (p && n)
		memcpy(p, text, n);
}

PBUS_API void pbus_rpc_put_bytes(struct pbus_rpc_buf *b, struct pbus_rpc_bytes v)
{
	unsigned char *p;

	pbus_rpc_put_u32(b, v.size);
	p = pbus_rpc_room(b, v.size);
	if (p && v.size)
		memcpy(p, v.data, v.size);
}

/* --- readers ---------------------------------------------------------------- */

PBUS_API bool pbus_rpc_get_count(struct pbus_rpc_reader *r, uint32_t *n, size_t min_size)
{
	size_t left;

	if (!pbus_rpc_get_u32(r, n))
		return false;
	left = (size_t)(r->end - r->p);
	if (min_size == 0 ? *n > left : *n > left / min_size) {
		*n = 0;
		return pbus_rpc_reader_fail(r, -EPROTO);
	}
	return true;
}

/* @n bytes of the body into the arena, with a NUL after them. */
static unsigned char *copy_out(struct pbus_rpc_reader *r, uint32_t n)
{
	unsigned char *p;

	if ((size_t)(r->end - r->p) < n) {
		pbus_rpc_reader_fail(r, -EPROTO);
		return NULL;
	}
	p = r->arena ? pbus_rpc_arena_alloc(r->arena, (size_t)n + 1) : NULL;
	if (!p) {
		pbus_rpc_reader_fail(r, -ENOMEM);
		return NULL;
	}
	memcpy(p, r->p, n);
	p[n] = 0;
	r->p += n;
	return p;
}

PBUS_API bool pbus_rpc_get_string(struct pbus_rpc_reader *r, char **v)
{
	uint32_t n;
	unsigned char *p;

	*v = NULL;
	if (!pbus_rpc_get_u32(r, &n))
		return false;
	if ((size_t)(r->end - r->p) < n || memchr(r->p, 0, n) || !pbus_utf8_valid(r->p, n))
		return pbus_rpc_reader_fail(r, -EPROTO);
	p = copy_out(r, n);
	if (!p)
		return false;
	*v = (char *)p;
	return true;
}

PBUS_API bool pbus_rpc_get_bytes(struct pbus_rpc_reader *r, struct pbus_rpc_bytes *v)
{
	uint32_t n;
	unsigned char *p;

	v->data = NULL;
	v->size = 0;
	if (!pbus_rpc_get_u32(r, &n))
		return false;
	p = copy_out(r, n);
	if (!p)
		return false;
	v->data = p;
	v->size = n;
	return true;
}

PBUS_API void *pbus_rpc_get_alloc(struct pbus_rpc_reader *r, size_t size)
{
	void *p;

	if (r->error)
		return NULL;
	p = r->arena ? pbus_rpc_arena_alloc(r->arena, size) : NULL;
	if (!p)
		pbus_rpc_reader_fail(r, -ENOMEM);
	return p;
}
