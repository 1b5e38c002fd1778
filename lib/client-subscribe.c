/* SPDX-License-Identifier: MIT */
/*
 * client-subscribe.c: the client's subscriptions (client-internal.h): the
 * table of them, which outlives connections, the queue of notifications and
 * events, and dispatch, which delivers them to their callbacks.
 */
#include "client-internal.h"

struct subscription *pbus_client_subscription(struct pbus_client *c, uint32_t id)
{
	for (size_t i = 0; i < c->sub_count; i++)
		if (c->subs[i].id == id)
			return &c->subs[i];
	return NULL;
}

static struct subscription *find_server_subscription(struct pbus_client *c, uint32_t server_id)
{
	for (size_t i = 0; i < c->sub_count; i++)
		if (c->subs[i].server_id == server_id)
			return &c->subs[i];
	return NULL;
}

static void remove_subscription(struct pbus_client *c, struct subscription *s)
{
	size_t i = (size_t)(s - c->subs);

	free(s->indexes);
	memmove(&c->subs[i], &c->subs[i + 1], (c->sub_count - i - 1) * sizeof(*c->subs));
	c->sub_count--;
}

int pbus_client_queue_event(struct pbus_client *c, unsigned type, uint32_t subscription)
{
	size_t start = pbus_wire_begin(&c->queue, type, subscription);

	return pbus_wire_end(&c->queue, start);
}

/* A NOTIFY goes into the queue for dispatch as the same frame, with the
 * client's subscription id in its id field and its body from the count on
 * (the values, checked). */
int pbus_client_handle_notify(struct pbus_client *c, const unsigned char *body, size_t n)
{
	struct pbus_proto_values m;
	struct subscription *s;
	size_t start;

	if (pbus_proto_values_decode(PBUS_WIRE_NOTIFY, body, n, c->schema ? c->schema->param_count : 0, &m,
				     NULL) < 0)
		return -EPROTO;
	s = find_server_subscription(c, m.subscription);
	if (!s)
		return 0; /* one we gave up (a SUBSCRIBE that timed out) */
	start = pbus_wire_begin(&c->queue, PBUS_WIRE_NOTIFY, s->id);
	pbus_wire_bytes(&c->queue, body + 4, n - 4);
	return pbus_wire_end(&c->queue, start);
}

/* Call back for everything queued. The queue is swapped out first: what
 * callbacks' requests queue waits for the next dispatch. */
int pbus_client_deliver(struct pbus_client *c)
{
	struct pbus_wire_buf batch = c->queue;
	size_t pos = 0;
	int delivered = 0;

	c->queue = c->delivering;
	c->queue.size = 0;
	c->delivering = batch;
	c->dispatching = true;
	while (pos + PBUS_WIRE_HEADER_SIZE <= c->delivering.size) {
		const unsigned char *frame = c->delivering.data + pos;
		uint32_t length = pbus_le_load32(frame), id = pbus_le_load32(frame + 8);
		unsigned type = (unsigned)(frame[4] | frame[5] << 8);
		struct subscription *s;
		pbus_client_notify_fn callback;
		void *userdata;
		uint32_t count = 0;

		pos += length;
		if (type == PBUS_WIRE_SERVICE) {
			/* a watch's (client-service.c), unless unwatched meanwhile */
			delivered += pbus_client_deliver_service(c, id, frame + PBUS_WIRE_HEADER_SIZE,
								 length - PBUS_WIRE_HEADER_SIZE);
			continue;
		}
		s = pbus_client_subscription(c, id);
		if (!s)
			continue; /* unsubscribed meanwhile */
		callback = s->callback;
		userdata = s->userdata;
		if (type == PBUS_WIRE_NOTIFY) {
			/* (decoded when queued: pbus_client_handle_notify()) */
			const unsigned char *record = frame + PBUS_WIRE_HEADER_SIZE + 4;

			count = pbus_le_load32(frame + PBUS_WIRE_HEADER_SIZE);
			for (uint32_t i = 0; i < count; i++) {
				struct pbus_wire_value v;

				pbus_proto_values_next(&record, frame + length, &v);
				c->values[i] = (struct pbus_client_value){
					.index = v.index, .status = v.status,
					.timestamp_ns = v.timestamp_ns, .seq = v.seq,
					.length = v.length, .value = v.value};
			}
			callback(c, id, PBUS_CLIENT_EVENT_VALUES, c->values, count, userdata);
		} else {
			callback(c, id, type == QUEUE_CONNECTED ? PBUS_CLIENT_EVENT_CONNECTED
								: PBUS_CLIENT_EVENT_DISCONNECTED,
				 NULL, 0, userdata);
		}
		delivered++;
	}
	c->dispatching = false;
	c->delivering.size = 0;
	return delivered;
}

int pbus_client_dispatch(struct pbus_client *client)
{
	struct pbus_client *c = client;
	struct epoll_event events[2];
	uint32_t socket_events = 0;
	int64_t now;
	int n, r, delivered;

	if (!c)
		return -EINVAL;
	if (c->dispatching)
		return -EBUSY; /* from a callback: the outer dispatch goes on */
	n = epoll_wait(c->epoll_fd, events, 2, 0);
	for (int i = 0; i < n; i++) {
		if (events[i].data.u32 == TAG_TIMER) {
			uint64_t expirations;

			if (read(c->timer_fd, &expirations, sizeof(expirations)) > 0)
				c->timer_deadline = 0; /* expired: armed no more */
		} else {
			socket_events = events[i].events;
		}
	}
	r = 0;
	if (c->socket_fd >= 0 && (socket_events & EPOLLOUT))
		r = pbus_client_flush(c);
	if (r == 0 && c->socket_fd >= 0 && (socket_events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		r = pbus_client_receive(c, READ_BUDGET);
	if (r < 0)
		pbus_client_connection_lost(c);
	now = pbus_monotonic_ns();
	if (c->socket_fd >= 0 && c->handshake_pending && now >= c->handshake_deadline)
		pbus_client_connection_lost(c); /* a server that accepts but does not answer */
	if (c->state == CLIENT_DISCONNECTED && c->reconnect_at && now >= c->reconnect_at &&
	    !c->fatal && !c->no_reconnect)
		pbus_client_start_reconnect(c, true);
	delivered = pbus_client_deliver(c);
	pbus_client_update_timer(c);
	if (c->fatal)
		return c->fatal;
	if (c->deferred_error) {
		r = c->deferred_error;
		c->deferred_error = 0;
		return r;
	}
	return delivered;
}

int pbus_client_subscribe(struct pbus_client *client, const uint32_t *indexes, size_t count,
			  const struct pbus_subscribe_options *options,
			  pbus_client_notify_fn callback, void *userdata, uint32_t *ret_subscription)
{
	struct pbus_client *c = client;
	struct subscription *s;
	uint32_t id, server_id;
	int r;

	if (!c || !indexes || count == 0 || count > c->schema->param_count || !callback ||
	    !ret_subscription || (options && !(options->deadband >= 0)))
		return -EINVAL;
	if (c->sub_count == c->sub_capacity) {
		size_t capacity = c->sub_capacity ? c->sub_capacity * 2 : 4;

		s = realloc(c->subs, capacity * sizeof(*s));
		if (!s)
			return -ENOMEM;
		c->subs = s;
		c->sub_capacity = capacity;
	}
	do {
		id = ++c->next_subscription_id;
	} while (id == 0 || pbus_client_subscription(c, id));
	s = &c->subs[c->sub_count];
	memset(s, 0, sizeof(*s));
	s->indexes = malloc(count * sizeof(*s->indexes));
	if (!s->indexes)
		return -ENOMEM;
	memcpy(s->indexes, indexes, count * sizeof(*s->indexes));
	s->id = id;
	s->count = (uint32_t)count;
	if (options)
		s->options = *options;
	s->callback = callback;
	s->userdata = userdata;
	c->sub_count++;
	/* In the table (inactive) before the request: the SUBSCRIBED reply
	 * assigns its server id the moment it is read. */
	r = pbus_client_put_subscribe(pbus_client_request_buf(c), 0, s);
	if (r == 0)
		r = pbus_client_transact(c, id, true);
	s = pbus_client_subscription(c, id);
	if (r == 0 && pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, c->reply.data, c->reply.size, &server_id,
					    NULL) < 0)
		r = -EPROTO;
	if (r < 0) {
		remove_subscription(c, s);
		return pbus_client_finish(c, r);
	}
	s->active = true;
	*ret_subscription = id;
	return pbus_client_finish(c, 0);
}

int pbus_client_subscribe_prefix(struct pbus_client *client, const char *prefix,
				 const struct pbus_subscribe_options *options,
				 pbus_client_notify_fn callback, void *userdata,
				 uint32_t *ret_subscription)
{
	uint32_t *indexes, n = 0;
	size_t length;
	int r;

	if (!client || !prefix)
		return -EINVAL;
	length = strlen(prefix);
	indexes = malloc((client->schema->param_count ? client->schema->param_count : 1) *
			 sizeof(*indexes));
	if (!indexes)
		return -ENOMEM;
	for (uint32_t i = 0; i < client->schema->param_count; i++) {
		const struct pbus_schema_param *p = &client->schema->params[i];

		if (!strncmp(p->name, prefix, length) &&
		    !(p->ti.flags & (PBUS_PARAM_NOREAD | PBUS_PARAM_NOSUBSCRIPTIONS)))
			indexes[n++] = i;
	}
	r = n ? pbus_client_subscribe(client, indexes, n, options, callback, userdata,
				      ret_subscription)
	      : -ENOENT;
	free(indexes);
	return r;
}

int pbus_client_unsubscribe(struct pbus_client *client, uint32_t subscription)
{
	struct pbus_client *c = client;
	struct subscription *s;
	int r = 0;

	if (!c)
		return -EINVAL;
	s = pbus_client_subscription(c, subscription);
	if (!s)
		return -ENOENT;
	/* Not subscribed on this connection (disconnected, or its renewal
	 * pending): there is nothing to tell the server now, and a renewal
	 * that comes back for it is undone when it arrives. */
	if (s->server_id && c->state == CLIENT_CONNECTED) {
		r = pbus_proto_u32_encode(pbus_client_request_buf(c), PBUS_WIRE_UNSUBSCRIBE, 0, s->server_id);
		if (r == 0)
			r = pbus_client_transact(c, 0, false);
		/* Gone either way: a lost connection took it along, and a server
		 * that does not know it has nothing to send for it. */
		if (r == -ENOTCONN || r == -ENOENT)
			r = 0;
		s = pbus_client_subscription(c, subscription);
	}
	if (s)
		remove_subscription(c, s);
	return pbus_client_finish(c, r);
}
