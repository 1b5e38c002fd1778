/* SPDX-License-Identifier: MIT */
/*
 * subscribe.c: subscriptions and their notifications (docs/socket-protocol.md
 * §3.4): SUBSCRIBE and UNSUBSCRIBE, collecting what changed into each
 * subscription's pending bits, and building coalesced NOTIFYs when a
 * client's socket has room and its interval allows.
 */
#include "server-internal.h"

void free_subscription(struct subscription *sub)
{
	free(sub->indexes);
	free(sub->member);
	free(sub->pending);
	free(sub->last_sent);
	free(sub->last_status);
	free(sub->last_seq);
	free(sub);
}

static bool numeric_scalar(unsigned type)
{
	return type >= PBUS_TYPE_INT8 && type <= PBUS_TYPE_DOUBLE;
}

/* Finish a NOTIFY begun at @start with @count records (or drop it if empty). */
static void notify_end(struct server *s, struct client *c, size_t start, uint32_t count)
{
	if (count == 0 || c->tx.failed) {
		pbus_wire_cancel(&c->tx, start);
		return;
	}
	pbus_proto_values_end(&c->tx, PBUS_WIRE_NOTIFY, start, count);
	c->notifications++;
	s->notifications++;
	s->values_notified += count;
}

static size_t notify_begin(struct client *c, const struct subscription *sub)
{
	return pbus_proto_values_begin(&c->tx, PBUS_WIRE_NOTIFY, 0, sub->id);
}

/* Send the pending changes of @sub if it has room and time: the latest
 * value of each, in as many NOTIFYs as the frame limit needs. Returns the
 * time when it may send next if it must wait (0: nothing waits). */
static int64_t notify(struct server *s, struct client *c, struct subscription *sub, int64_t now)
{
	uint32_t count = 0, sent = 0;
	size_t start;

	if (!sub->any_pending)
		return 0;
	if (now < sub->next_allowed_ns)
		return sub->next_allowed_ns;
	start = notify_begin(c, sub);
	for (uint32_t k = 0; k < sub->count; k++) {
		uint32_t index = sub->indexes[k];
		unsigned type = s->schema->params[index].ti.type;
		struct pbus_sample sample;
		const unsigned char *value;
		size_t record;

		if (!(sub->pending[k / 64] & (UINT64_C(1) << (k % 64))))
			continue;
		/* A record is at most 28 bytes plus the value. */
		if (c->tx.size - start + 28 + s->schema->params[index].ti.value_size > s->max_frame) {
			notify_end(s, c, start, count);
			sent += count;
			start = notify_begin(c, sub);
			count = 0;
		}
		record = c->tx.size;
		if (append_value(s, &c->tx, index, &sample, &value) < 0)
			continue;
		/* Already sent this version (a change reported after we read it). */
		if (!sub->initial && sample.seq == sub->last_seq[k]) {
			pbus_wire_cancel(&c->tx, record);
			continue;
		}
		sub->last_seq[k] = sample.seq;
		if (!sub->initial && sub->deadband > 0 && numeric_scalar(type) &&
		    sample.status == sub->last_status[k] &&
		    fabs(pbus_scalar_as_double(type, value) - sub->last_sent[k]) < sub->deadband) {
			pbus_wire_cancel(&c->tx, record); /* too small a change */
			continue;
		}
		if (numeric_scalar(type))
			sub->last_sent[k] = pbus_scalar_as_double(type, value);
		sub->last_status[k] = sample.status;
		count++;
	}
	notify_end(s, c, start, count);
	sent += count;
	memset(sub->pending, 0, ((sub->count + 63) / 64) * sizeof(uint64_t));
	sub->any_pending = false;
	/* Only a NOTIFY sent starts an interval: changes that were all
	 * already sent or within the deadband do not delay the next one. */
	if (sent) {
		sub->initial = false;
		sub->next_allowed_ns = now + (int64_t)sub->min_interval_us * 1000;
	}
	return 0;
}

/* Send what every subscription of @c may send now; returns the earliest
 * deadline of one that must wait (0: none). Called right after a flush
 * (service_clients()): with anything left in the send buffer it builds
 * nothing and tells of no deadline, which is right only while the socket
 * is full and EPOLLOUT is sure to bring the caller back. */
int64_t notify_client(struct server *s, struct client *c, int64_t now)
{
	int64_t earliest = 0;

	/* Only when the kernel took everything sent before (this round's
	 * NOTIFYs of several subscriptions may then queue together): a client
	 * that does not read gets no more than its socket buffer in flight. If
	 * the socket is full, EPOLLOUT brings us back. */
	if (c->tx.size)
		return 0;

	for (struct subscription *sub = c->subs; sub; sub = sub->next) {
		int64_t at;

		if (sub->replied_at > c->held_base)
			continue; /* its SUBSCRIBED is still held: check_acks() comes back */
		at = notify(s, c, sub, now);

		if (at && (!earliest || at < earliest))
			earliest = at;
	}
	return earliest;
}

/* Mark what changed as pending in every subscription that has it. */
void collect_changes(struct server *s)
{
	uint64_t *bits = s->changed_now;
	bool any = false;

	for (size_t w = 0; w < s->words; w++) {
		bits[w] = atomic_exchange(&s->changed[w], 0);
		any |= bits[w] != 0;
	}
	if (atomic_exchange(&s->rescan, false)) {
		/* Whatever moved since a subscription last looked. */
		for (struct client *c = s->clients; c; c = c->next)
			for (struct subscription *sub = c->subs; sub; sub = sub->next)
				for (uint32_t k = 0; k < sub->count; k++)
					if (!sub->initial &&
					    pbus_param_seq(s->params[sub->indexes[k]]) != sub->last_seq[k]) {
						sub->pending[k / 64] |= UINT64_C(1) << (k % 64);
						sub->any_pending = true;
					}
	}
	if (!any)
		return;
	for (struct client *c = s->clients; c; c = c->next)
		for (struct subscription *sub = c->subs; sub; sub = sub->next) {
			bool hit = false;

			for (size_t w = 0; w < s->words && !hit; w++)
				hit = (bits[w] & sub->member[w]) != 0;
			if (!hit)
				continue;
			for (uint32_t k = 0; k < sub->count; k++) {
				uint32_t i = sub->indexes[k];

				if (bits[i / 64] & (UINT64_C(1) << (i % 64))) {
					sub->pending[k / 64] |= UINT64_C(1) << (k % 64);
					sub->any_pending = true;
				}
			}
		}
}

void handle_subscribe(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX];
	struct pbus_proto_subscribe m;
	struct subscription *sub;
	uint32_t *indexes = NULL;
	uint32_t min_interval;
	double deadband;
	int count;

	if (pbus_proto_subscribe_decode(body, n, s->param_count, &m, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	min_interval = m.min_interval_us;
	deadband = m.deadband;
	count = (int)m.indexes.count;
	indexes = malloc((size_t)count * sizeof(*indexes));
	if (!indexes)
		return send_error(s, c, id, -ENOMEM, "out of memory");
	for (int k = 0; k < count; k++)
		indexes[k] = pbus_proto_index(&m.indexes, (size_t)k);
	if (!(deadband >= 0) || !isfinite(deadband)) {
		send_error(s, c, id, -EINVAL, "deadband %g is not a finite number >= 0", deadband);
		goto fail;
	}
	for (int k = 0; k < count; k++) {
		uint32_t i = indexes[k];

		if (i >= s->param_count) {
			send_error(s, c, id, -ENOENT, "no parameter %u (the instance has %u)", i, s->param_count);
			goto fail;
		}
		if (s->schema->params[i].ti.flags & (PBUS_PARAM_NOREAD | PBUS_PARAM_NOSUBSCRIPTIONS)) {
			send_error(s, c, id, -EACCES, "parameter %u ('%s') cannot be subscribed (%s)", i,
				   s->schema->params[i].name,
				   s->schema->params[i].ti.flags & PBUS_PARAM_NOREAD ? "noRead"
										     : "noSubscriptions");
			goto fail;
		}
	}
	if (c->sub_count >= s->max_subscriptions) {
		send_error(s, c, id, -EMFILE, "too many subscriptions (at most %u per connection)",
			   s->max_subscriptions);
		goto fail;
	}
	sub = calloc(1, sizeof(*sub));
	if (sub) {
		sub->member = calloc(s->words, sizeof(uint64_t));
		sub->pending = calloc(((size_t)count + 63) / 64, sizeof(uint64_t));
		sub->last_sent = calloc((size_t)count, sizeof(double));
		sub->last_status = calloc((size_t)count, sizeof(uint32_t));
		sub->last_seq = calloc((size_t)count, sizeof(uint64_t));
	}
	if (!sub || !sub->member || !sub->pending || !sub->last_sent || !sub->last_status ||
	    !sub->last_seq) {
		if (sub)
			free_subscription(sub);
		send_error(s, c, id, -ENOMEM, "out of memory");
		goto fail;
	}
	sub->id = ++c->next_sub_id;
	sub->min_interval_us = min_interval;
	sub->deadband = deadband;
	sub->count = (uint32_t)count;
	sub->indexes = indexes;
	for (int k = 0; k < count; k++) {
		sub->member[indexes[k] / 64] |= UINT64_C(1) << (indexes[k] % 64);
		sub->pending[k / 64] |= UINT64_C(1) << (k % 64);
	}
	sub->any_pending = sub->initial = true;
	sub->next = c->subs;
	c->subs = sub;
	c->sub_count++;
	pbus_proto_u32_encode(reply_buf(c), PBUS_WIRE_SUBSCRIBED, id, sub->id);
	if (c->acks)
		sub->replied_at = c->held_base + c->held.size;
	update_watch_set(s);
	/* The first NOTIFY, with every current value, follows the reply once
	 * that has gone out (service_clients()). */
	return;
fail:
	free(indexes);
}

void handle_unsubscribe(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX];
	uint32_t sub_id;

	if (pbus_proto_u32_decode(PBUS_WIRE_UNSUBSCRIBE, body, n, &sub_id, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	for (struct subscription **p = &c->subs; *p; p = &(*p)->next) {
		struct subscription *sub = *p;

		if (sub->id != sub_id)
			continue;
		*p = sub->next;
		free_subscription(sub);
		c->sub_count--;
		pbus_proto_empty_encode(reply_buf(c), PBUS_WIRE_UNSUBSCRIBED, id);
		update_watch_set(s);
		return;
	}
	send_error(s, c, id, -ENOENT, "no subscription %u on this connection", sub_id);
}
