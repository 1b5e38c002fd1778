/* SPDX-License-Identifier: MIT */
/*
 * alltypes-rpc-server.h: server functions of the RPC fixture
 * (tests/gen/fixtures/rpc/alltypes-rpc.fidl, prefix ar) that the test
 * servers share (tests/rpc/test-generated.c, tests/cli/rpc-server.c): ping
 * adds one, echo returns its input (BUSY for basics.i32 13) and fires
 * `changed`, basics derives each result from its arguments, shapes returns
 * the last of many, lookup finds any key but "missing" (NOT_FOUND), and
 * fixedOnly adds q.z to p.x. Each program adds the rest of its impl table.
 */
#ifndef ALLTYPES_RPC_SERVER_H
#define ALLTYPES_RPC_SERVER_H

#include <string.h>

#include "alltypes-rpc.h"

static int do_ping(struct ar_server_AllRpc *s, const struct pbus_caller *c, uint32_t seq, uint32_t *seq2)
{
	(void)s;
	(void)c;
	*seq2 = seq + 1;
	return 0;
}

static int do_echo(struct ar_server_AllRpc *s, const struct pbus_caller *c, const struct ar_everything *e,
		   enum ar_failure *error, struct ar_everything *e2)
{
	(void)c;
	*e2 = *e;
	*error = e->basics.i32 == 13 ? AR_FAILURE_BUSY : AR_FAILURE_NONE;
	ar_server_AllRpc_fire_changed(s, e, AR_LEVEL_HIGH);
	return 0;
}

static int do_basics(struct ar_server_AllRpc *s, const struct pbus_caller *c, bool b, int8_t i8, uint8_t u8,
		     int16_t i16, uint16_t u16, int32_t i32, uint32_t u32, int64_t i64, uint64_t u64, float f32,
		     double f64, const char *text_in, struct pbus_rpc_bytes blob, int64_t small,
		     enum ar_level level, bool *ob, int64_t *oi64, double *of64, char **otext,
		     struct pbus_rpc_bytes *oblob, int64_t *osmall, enum ar_level *olevel)
{
	char *t = pbus_rpc_arena_alloc(pbus_caller_arena(c), strlen(text_in) + 2);

	(void)s;
	*ob = !b;
	*oi64 = i64 + i8 + u8 + i16 + u16 + i32 + (int64_t)u32 + (int64_t)(u64 & 0xff);
	*of64 = f64 + f32;
	strcpy(t, text_in);
	strcat(t, "!");
	*otext = t;
	*oblob = blob;
	*osmall = -small;
	*olevel = level;
	return 0;
}

static int do_shapes(struct ar_server_AllRpc *s, const struct pbus_caller *c, const struct ar_shape *one,
		     const struct ar_array_shape *many, struct ar_shape **biggest)
{
	(void)s;
	(void)c;
	*biggest = (struct ar_shape *)(many->count ? many->items[many->count - 1] : one);
	return 0;
}

static int do_lookup(struct ar_server_AllRpc *s, const struct pbus_caller *c, const char *key,
		     enum ar_lookup_error *error, struct ar_more_value *found, struct ar_dictionary *dict)
{
	(void)s;
	if (!strcmp(key, "missing")) {
		*error = AR_LOOKUP_ERROR_NOT_FOUND;
		return 0;
	}
	*error = AR_LOOKUP_ERROR_NONE;
	found->which = AR_MORE_VALUE_WORD;
	found->u.word = pbus_rpc_arena_strdup(pbus_caller_arena(c), key);
	dict->count = 1;
	dict->entries = pbus_rpc_arena_alloc(pbus_caller_arena(c), sizeof *dict->entries);
	dict->entries[0].key = found->u.word;
	dict->entries[0].value = (int32_t)strlen(key);
	return 0;
}

static int do_fixed(struct ar_server_AllRpc *s, const struct pbus_caller *c, const struct ar_shared_point *p,
		    const struct ar_base3_d *q, struct ar_shared_point *r2, enum ar_level *l)
{
	(void)s;
	(void)c;
	r2->x = p->x + (int32_t)q->z;
	r2->y = p->y;
	*l = AR_LEVEL_LOW;
	return 0;
}

#endif
