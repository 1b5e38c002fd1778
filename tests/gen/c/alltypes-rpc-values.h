/* SPDX-License-Identifier: MIT */
/*
 * alltypes-rpc-values.h: values of every type of the RPC fixture
 * (tests/gen/fixtures/rpc/alltypes-rpc.fidl, prefix ar), edge values
 * included, for the tests that send them: the codec's round trip
 * (test-rpc-codec.c) and the generated proxies and stubs
 * (tests/rpc/test-generated.c). The builders allocate from values_arena,
 * which the including program sets.
 */
#ifndef ALLTYPES_RPC_VALUES_H
#define ALLTYPES_RPC_VALUES_H

#include <math.h>
#include <string.h>

#include "alltypes-rpc.h"

static struct pbus_rpc_arena *values_arena; /* what the builders allocate */

static void *alloc(size_t n)
{
	void *p = pbus_rpc_arena_alloc(values_arena, n);

	if (p == NULL)
		abort();
	return p;
}

static char *text(const char *s)
{
	return pbus_rpc_arena_strdup(values_arena, s);
}

static const uint8_t blob3[] = {0x00, 0xff, 0x7f};

static void basics_edge(struct ar_basics *v)
{
	v->b = true;
	v->i8 = INT8_MIN;
	v->u8 = UINT8_MAX;
	v->i16 = INT16_MIN;
	v->u16 = UINT16_MAX;
	v->i32 = INT32_MIN;
	v->u32 = UINT32_MAX;
	v->i64 = INT64_MIN;
	v->u64 = UINT64_MAX;
	v->f32 = -1.5f;
	v->f64 = NAN;
	v->text = text("h\xc3\xa9llo");
	v->blob.data = blob3;
	v->blob.size = 3;
}

static struct ar_shape *shape_of(int kind)
{
	switch (kind) {
	case 0: {
		struct ar_shape *s = alloc(sizeof(*s));
		s->type_tag = AR_SHAPE_TYPE_TAG;
		s->name = text("plain");
		return s;
	}
	case 1: {
		struct ar_circle *c = alloc(sizeof(*c));
		c->type_tag = AR_CIRCLE_TYPE_TAG;
		c->name = text("c");
		c->radius = 2.5;
		return (struct ar_shape *)(void *)c;
	}
	case 2: {
		struct ar_ring *g = alloc(sizeof(*g));
		g->type_tag = AR_RING_TYPE_TAG;
		g->name = text("");
		g->radius = 3;
		g->inner = -0.0;
		return (struct ar_shape *)(void *)g;
	}
	default: {
		struct ar_square *q = alloc(sizeof(*q));
		q->type_tag = AR_SQUARE_TYPE_TAG;
		q->name = text("sq");
		q->side = INFINITY;
		q->children.count = 2;
		q->children.items = alloc(2 * sizeof(struct ar_shape *));
		q->children.items[0] = shape_of(1);
		q->children.items[1] = shape_of(2);
		return (struct ar_shape *)(void *)q;
	}
	}
}

static void dictionary(struct ar_dictionary *d, unsigned n)
{
	static const char *keys[] = {"a", "b", "a", "long key"};

	d->count = n;
	d->entries = n ? alloc(n * sizeof(*d->entries)) : NULL;
	for (unsigned i = 0; i < n; i++) {
		d->entries[i].key = text(keys[i % 4]);
		d->entries[i].value = (int32_t)i - 1;
	}
}

static void tree(struct ar_tree *t, int depth)
{
	t->label = text(depth ? "node" : "leaf");
	dictionary(&t->attrs, depth == 1 ? 1 : 0);
	if (depth == 0)
		return;
	t->kids.count = 2;
	t->kids.items = alloc(2 * sizeof(*t->kids.items));
	tree(&t->kids.items[0], depth - 1);
	tree(&t->kids.items[1], 0);
}

static void more_value(struct ar_more_value *v, unsigned which)
{
	v->which = which;
	switch (which) {
	case AR_MORE_VALUE_NUMBER: v->u.number = -7; break;
	case AR_MORE_VALUE_WORD: v->u.word = text("word"); break;
	case AR_MORE_VALUE_BASICS: basics_edge(&v->u.basics); break;
	case AR_MORE_VALUE_FLAG: v->u.flag = true; break;
	case AR_MORE_VALUE_SHAPE: v->u.shape = shape_of(3); break;
	default: v->u.raw.data = blob3; v->u.raw.size = 3; break;
	}
}

static void everything(struct ar_everything *e)
{
	basics_edge(&e->basics);
	e->ranges.any = INT64_MAX;
	e->ranges.small = -5;
	e->ranges.huge = UINT64_MAX;
	e->ranges.capped = INT64_MIN;
	e->ranges.floor = 10;
	e->level = AR_LEVEL_HIGH;
	e->more = AR_MORE_LEVEL_EXTRA;
	e->color = AR_SHARED_COLOR_BLUE;
	e->point.x = -1;
	e->point.y = 1;
	e->pos.x = 1.0 / 3;
	e->pos.z = -1e300;
	e->shape = shape_of(3);
	e->value.which = AR_VALUE_WORD;
	e->value.u.word = text("");
	more_value(&e->more_value, AR_MORE_VALUE_SHAPE);
	e->names.count = 3;
	e->names.items = alloc(3 * sizeof(char *));
	e->names.items[0] = text("x");
	e->names.items[1] = text("");
	e->names.items[2] = text("zz");
	e->matrix.count = 2;
	e->matrix.items = alloc(2 * sizeof(*e->matrix.items));
	e->matrix.items[1].count = 2;
	e->matrix.items[1].items = alloc(2 * sizeof(double));
	e->matrix.items[1].items[0] = -NAN;
	e->matrix.items[1].items[1] = 4;
	dictionary(&e->dict, 4);
	e->registry.count = 1;
	e->registry.entries = alloc(sizeof(*e->registry.entries));
	e->registry.entries[0].key = AR_LEVEL_LOW;
	more_value(&e->registry.entries[0].value, AR_MORE_VALUE_BASICS);
	e->nested.count = 2;
	e->nested.entries = alloc(2 * sizeof(*e->nested.entries));
	e->nested.entries[0].key = 7;
	dictionary(&e->nested.entries[0].value, 2);
	e->nested.entries[1].key = 7;
	e->route.count = 1;
	e->route.items = alloc(sizeof(double));
	e->route.items[0] = 100.25;
	e->word = NULL; /* encodes as "" and decodes as "" */
	tree(&e->tree, 3);
	e->bools.count = 3;
	e->bools.items = alloc(3);
	e->bools.items[1] = true;
	e->i8s.count = 2;
	e->i8s.items = alloc(2);
	e->i8s.items[0] = -1;
	e->u64s.count = 1;
	e->u64s.items = alloc(8);
	e->u64s.items[0] = UINT64_MAX;
	e->floats.count = 1;
	e->floats.items = alloc(4);
	e->floats.items[0] = NAN;
	e->strings.count = 1;
	e->strings.items = alloc(sizeof(char *));
	e->strings.items[0] = text("s");
	e->blobs.count = 2;
	e->blobs.items = alloc(2 * sizeof(struct pbus_rpc_bytes));
	e->blobs.items[1].data = blob3;
	e->blobs.items[1].size = 3;
	e->smalls.count = 2;
	e->smalls.items = alloc(16);
	e->smalls.items[0] = -5;
	e->smalls.items[1] = 5;
	e->levels.count = 2;
	e->levels.items = alloc(2 * sizeof(enum ar_level));
	e->levels.items[0] = AR_LEVEL_LOW;
	e->levels.items[1] = AR_LEVEL_MID;
	e->points.count = 1;
	e->points.items = alloc(sizeof(*e->points.items));
	e->points.items[0].x = INT32_MAX;
	e->shapes.count = 4;
	e->shapes.items = alloc(4 * sizeof(struct ar_shape *));
	for (int i = 0; i < 4; i++)
		e->shapes.items[i] = shape_of(i);
	e->values.count = 3;
	e->values.items = alloc(3 * sizeof(*e->values.items));
	for (unsigned i = 0; i < 3; i++) {
		e->values.items[i].which = i;
		if (i == AR_VALUE_WORD)
			e->values.items[i].u.word = text("w");
		if (i == AR_VALUE_BASICS)
			e->values.items[i].u.basics.text = text("t");
	}
	e->dicts.count = 2;
	e->dicts.items = alloc(2 * sizeof(*e->dicts.items));
	dictionary(&e->dicts.items[0], 3);
	e->name_lists.count = 1;
	e->name_lists.items = alloc(sizeof(*e->name_lists.items));
}

#endif
