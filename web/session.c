/* SPDX-License-Identifier: MIT */
/*
 * session.c: pbus-web's login sessions and login rate limits (docs/web.md,
 * "Security"). A login is a random 256-bit id (getrandom()), sent once as
 * the cookie pbus_session and kept here with a copy of its user; it ends
 * --session-ttl seconds after it was last used (sliding: every request
 * and every WebSocket message that carries it moves the end), at logout,
 * or when pbus-web stops (logins are not saved). Ids are compared without
 * stopping at the first differing byte.
 *
 * Login attempts are limited by token buckets, one per source address and
 * one per user name: every attempt takes a token of its address, every
 * failed one a token of its user name too, and a bucket refills by one
 * token every --login-refill seconds up to --login-burst. The tables are
 * bounded: when full, the fullest (least recently drained) bucket is
 * reused. lws thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "pbus-web.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int web_sessions_init(struct web_sessions *s, size_t max_logins, unsigned ttl_s, unsigned burst,
		      unsigned refill_s)
{
	memset(s, 0, sizeof(*s));
	s->logins = calloc(max_logins, sizeof(*s->logins));
	s->max_buckets = 1024;
	s->buckets = calloc(s->max_buckets, sizeof(*s->buckets));
	if (!s->logins || !s->buckets) {
		web_sessions_fini(s);
		return -ENOMEM;
	}
	s->max_logins = max_logins;
	s->ttl_ns = (int64_t)ttl_s * 1000000000;
	s->next_serial = 1;
	s->burst = burst;
	s->refill_ns = (int64_t)refill_s * 1000000000;
	return 0;
}

void web_sessions_fini(struct web_sessions *s)
{
	if (s->logins)
		explicit_bzero(s->logins, s->max_logins * sizeof(*s->logins));
	free(s->logins);
	free(s->buckets);
	memset(s, 0, sizeof(*s));
}

static bool expired(const struct web_sessions *s, const struct web_login *l, int64_t now)
{
	return now - l->last_used_ns >= s->ttl_ns;
}

int web_session_create(struct web_sessions *s, const struct web_user *user, char cookie[65],
		       struct web_login **ret)
{
	int64_t now = now_ns();
	struct web_login *free_slot = NULL;
	for (size_t i = 0; i < s->max_logins && !free_slot; i++) {
		struct web_login *l = &s->logins[i];
		if (!l->used || expired(s, l, now))
			free_slot = l;
	}
	if (!free_slot)
		return -EAGAIN;
	memset(free_slot, 0, sizeof(*free_slot));
	if (getrandom(free_slot->id, sizeof(free_slot->id), 0) != (ssize_t)sizeof(free_slot->id))
		return -EIO;
	free_slot->user = *user;
	free_slot->user.hash = NULL; /* not needed, and not kept */
	free_slot->last_used_ns = now;
	free_slot->serial = s->next_serial++;
	free_slot->used = true;
	for (size_t i = 0; i < WEB_SESSION_ID_BYTES; i++)
		snprintf(cookie + 2 * i, 3, "%02x", free_slot->id[i]);
	*ret = free_slot;
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

struct web_login *web_session_find(struct web_sessions *s, const char *hex, bool touch)
{
	unsigned char id[WEB_SESSION_ID_BYTES];
	if (!hex || strlen(hex) != 2 * WEB_SESSION_ID_BYTES)
		return NULL;
	for (size_t i = 0; i < WEB_SESSION_ID_BYTES; i++) {
		int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return NULL;
		id[i] = (unsigned char)(hi << 4 | lo);
	}
	int64_t now = now_ns();
	struct web_login *found = NULL;
	for (size_t i = 0; i < s->max_logins; i++) {
		struct web_login *l = &s->logins[i];
		unsigned char diff = 0;
		for (size_t k = 0; k < WEB_SESSION_ID_BYTES; k++)
			diff |= (unsigned char)(l->id[k] ^ id[k]);
		if (l->used && diff == 0)
			found = l;
	}
	if (!found)
		return NULL;
	if (expired(s, found, now)) {
		web_session_remove(s, found);
		return NULL;
	}
	if (touch)
		found->last_used_ns = now;
	return found;
}

struct web_login *web_session_by_serial(struct web_sessions *s, uint64_t serial)
{
	int64_t now = now_ns();
	for (size_t i = 0; i < s->max_logins; i++) {
		struct web_login *l = &s->logins[i];
		if (l->used && l->serial == serial)
			return expired(s, l, now) ? NULL : l;
	}
	return NULL;
}

void web_session_remove(struct web_sessions *s, struct web_login *login)
{
	(void)s;
	explicit_bzero(login, sizeof(*login));
}

/* The bucket of @key, refilled to now; a new one (full) if none. */
static struct web_bucket *bucket(struct web_sessions *s, const char *key, int64_t now)
{
	struct web_bucket *victim = NULL;
	for (size_t i = 0; i < s->max_buckets; i++) {
		struct web_bucket *b = &s->buckets[i];
		if (b->used && strcmp(b->key, key) == 0) {
			if (s->refill_ns > 0) {
				b->tokens += (double)(now - b->updated_ns) / (double)s->refill_ns;
				if (b->tokens > s->burst)
					b->tokens = s->burst;
			}
			b->updated_ns = now;
			return b;
		}
		/* an unused bucket, else the one drained least recently */
		if (!victim || (victim->used && (!b->used || b->updated_ns < victim->updated_ns)))
			victim = b;
	}
	if (!victim)
		victim = &s->buckets[0];
	snprintf(victim->key, sizeof(victim->key), "%s", key);
	victim->tokens = s->burst;
	victim->updated_ns = now;
	victim->used = true;
	return victim;
}

static unsigned wait_seconds(const struct web_sessions *s, const struct web_bucket *b)
{
	double ns = (1.0 - b->tokens) * (double)s->refill_ns;
	unsigned seconds = (unsigned)(ns / 1e9) + 1;
	return seconds ? seconds : 1;
}

unsigned web_login_allowed(struct web_sessions *s, const char *addr, const char *user)
{
	int64_t now = now_ns();
	char key[sizeof(s->buckets[0].key)];
	snprintf(key, sizeof(key), "addr:%s", addr);
	struct web_bucket *a = bucket(s, key, now);
	snprintf(key, sizeof(key), "user:%s", user);
	struct web_bucket *u = bucket(s, key, now);
	if (a->tokens < 1.0)
		return wait_seconds(s, a);
	if (u->tokens < 1.0)
		return wait_seconds(s, u);
	a->tokens -= 1.0;
	return 0;
}

void web_login_failed(struct web_sessions *s, const char *user)
{
	char key[sizeof(s->buckets[0].key)];
	snprintf(key, sizeof(key), "user:%s", user);
	struct web_bucket *u = bucket(s, key, now_ns());
	if (u->tokens >= 1.0)
		u->tokens -= 1.0;
}
