/* SPDX-License-Identifier: MIT */
/*
 * access.c: who may do what on pbusd's socket (docs/socket-protocol.md §4,
 * §6): a client's groups, its right to write a parameter, which parameters
 * it may read, and the connection limits (each uid's share, the places
 * kept for root and the instance's owner); who is privileged.
 */
#include "server-internal.h"

/* Root and pbusd's own user: they may write every parameter that is not
 * read-only (§6), take the places kept for them (§4) and register services
 * (§3.6). */
bool uid_privileged(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The share of @uid, or NULL if it has no admitted connection. */
struct uid_share *find_share(struct server *s, uid_t uid)
{
	for (size_t i = 0; i < s->share_count; i++)
		if (s->shares[i].uid == uid)
			return &s->shares[i];
	return NULL;
}

/* The flags checked per request come from the table's resolved parameters
 * (the descriptor's flags), which the read or write touches anyway, rather
 * than from the schema's larger records: at 60 requests a second every
 * line touched is a cache miss. */
bool readable(const struct server *s, uint32_t index)
{
	return !(pbus_param_flags(s->params[index]) & PBUS_PARAM_NOREAD);
}

/* May @c write parameter @index? 0, -EACCES (read-only) or -EPERM. */
int write_right(const struct server *s, const struct client *c, uint32_t index)
{
	if (pbus_param_flags(s->params[index]) & PBUS_PARAM_READONLY)
		return -EACCES;
	if (c->privileged)
		return 0;
	if (s->param_gid[index] != (gid_t)-1 && pbus_gid_in(s->param_gid[index], c->gid, c->groups, c->group_count))
		return 0;
	return -EPERM;
}

/*
 * May a new connection of @c's uid be served? The limits of
 * docs/socket-protocol.md §4, so that no user can lock out the others, nor
 * anybody root and the instance's owner: every connection counts against
 * --max-clients; an unprivileged one also against its uid's share
 * (--max-clients-per-user) and must leave the last --reserved-clients
 * places free. 0 and the connection is counted, or -EUSERS with the
 * message in @why.
 */
int admit(struct server *s, struct client *c, char *why, size_t size)
{
	struct uid_share *share = find_share(s, c->uid);

	if (s->admitted_count >= s->max_clients) {
		snprintf(why, size, "too many clients (at most %u)", s->max_clients);
		return -EUSERS;
	}
	if (!c->privileged && share && share->count >= s->max_clients_per_user) {
		snprintf(why, size, "too many connections for uid %u (at most %u)", (unsigned)c->uid,
			 s->max_clients_per_user);
		return -EUSERS;
	}
	if (!c->privileged && s->admitted_count >= s->max_clients - s->reserved_clients) {
		snprintf(why, size, "server full: the last %u connections are kept for root and the "
			 "instance's owner", s->reserved_clients);
		return -EUSERS;
	}
	if (!share) {
		if (s->share_count == s->share_capacity) {
			size_t capacity = s->share_capacity ? 2 * s->share_capacity : 8;
			struct uid_share *shares = realloc(s->shares, capacity * sizeof(*shares));

			if (!shares) {
				snprintf(why, size, "out of memory");
				return -ENOMEM;
			}
			s->shares = shares;
			s->share_capacity = capacity;
		}
		share = &s->shares[s->share_count++];
		*share = (struct uid_share){.uid = c->uid};
	}
	share->count++;
	s->admitted_count++;
	c->admitted = true;
	return 0;
}
