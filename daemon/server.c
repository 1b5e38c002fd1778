/* SPDX-License-Identifier: MIT */
/*
 * server.c: pbusd's parameter server on a Unix-domain socket
 * (docs/socket-protocol.md).
 *
 * Two threads. The server thread owns every connection: one epoll loop over
 * the listening socket, the clients, three event descriptors — "values
 * changed" (from the watcher), "state saved" (from the saver in persist.c)
 * and a timer for rate-limited notifications and overdue acknowledgements —
 * and the pipe on which pbus-hwd reports what the hardware applied.
 * The watcher thread sleeps in a pbus_watch (a futex, no polling) over the
 * parameters somebody subscribed to — only those, so that writers of the
 * others never pay for a wake-up — and marks what changed in a bitmap. The
 * server thread marks its own writes (SETs) itself and notifies in the same
 * turn; the watcher wakes it only for versions it did not write.
 *
 * Coalescing: a subscription keeps one "pending" bit per parameter, not a
 * queue. A NOTIFY is built when the client's send buffer has room and the
 * subscription's interval allows; it carries the latest value of each
 * pending parameter at that moment. So a slow client costs at most one
 * bitmap per subscription and never delays anybody else.
 */
#include "server-internal.h"

void client_free(struct server *s, struct client *c)
{
	bool had_subs = c->subs != NULL;

	/* Its services end (their watchers are told) and its watches. */
	registry_client_closed(s, c);
	if (c->in_epoll)
		epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->admitted) {
		struct uid_share *share = find_share(s, c->uid);

		s->admitted_count--;
		if (share && --share->count == 0)
			*share = s->shares[--s->share_count];
	}
	free_parked(c->parked);
	while (c->subs) {
		struct subscription *next = c->subs->next;

		free_subscription(c->subs);
		c->subs = next;
	}
	while (c->acks) {
		struct pending_ack *next = c->acks->next;

		free_ack(c->acks);
		c->acks = next;
	}
	pbus_frame_in_free(&c->rx);
	free(c->groups);
	pbus_wire_buf_free(&c->tx);
	pbus_wire_buf_free(&c->held);
	for (struct client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	s->client_count--;
	free(c);
	if (had_subs)
		update_watch_set(s);
}

/* Ask epoll for what the client needs now: its requests, unless it is
 * paused (a SET of it parked, or too much held behind unsaved SETs: its
 * next requests wait in the socket); room to send, only while something
 * waits to be sent. */
void client_update_events(struct server *s, struct client *c)
{
	uint32_t events = (client_paused(c) ? 0 : EPOLLIN) | (c->tx.size ? EPOLLOUT : 0);
	struct epoll_event ev = {.events = events, .data.ptr = c};

	if (events == c->events || !c->in_epoll)
		return;
	c->events = events;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what can be sent now; 0, or -errno if the connection is dead. */
static int client_flush(struct server *s, struct client *c)
{
	while (c->tx.size) {
		ssize_t n = send(c->fd, c->tx.data, c->tx.size, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s->bytes_out += (uint64_t)n;
		pbus_wire_buf_consume(&c->tx, (size_t)n);
	}
	client_update_events(s, c);
	return 0;
}

void send_error_to(struct server *s, struct client *c, struct pbus_wire_buf *b, uint32_t id, int code,
		   const char *message)
{
	s->errors++;
	pbus_proto_error_encode(b, id, code, message);
	log_msg(LOG_DEBUG, "server: client %d (%s): error %d: %s", (int)c->pid, c->name, code, message);
}

void send_error(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	send_error_to(s, c, reply_buf(c), id, code, message);
}

/* A protocol violation: an ERROR, then the connection is closed (after the
 * ERROR went out, as far as the socket takes it). The ERROR goes out at
 * once, before any reply held behind an unsaved SET: the connection ends. */
void reject(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	send_error_to(s, c, &c->tx, id, code, message);
	log_msg(LOG_INFO, "server: closing client %d (%s): %s", (int)c->pid, c->name, message);
	c->closing = true;
}

static void handle_hello(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	uint64_t ours = pbus_schema_hash(s->schema);
	unsigned major, minor;
	const char *interface = pbus_table_interface(s->table, &major, &minor);
	char why[PBUS_PROTO_WHY_MAX];
	struct pbus_proto_hello m;

	if (pbus_proto_hello_decode(body, n, &m, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	if (m.min_version > PBUS_WIRE_VERSION || m.max_version < PBUS_WIRE_VERSION ||
	    m.min_version > m.max_version)
		return reject(s, c, id, -EPROTONOSUPPORT,
			      "no common protocol version: client %u..%u, server 1..1", m.min_version,
			      m.max_version);
	if (m.schema_hash && m.schema_hash != ours)
		return reject(s, c, id, -ESTALE, "schema hash differs: instance 0x%016llx, client 0x%016llx",
			      (unsigned long long)ours, (unsigned long long)m.schema_hash);
	memcpy(c->name, m.client_name.s, m.client_name.length);
	c->name[m.client_name.length] = 0;
	for (char *p = c->name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	c->hello_done = true;
	pbus_proto_hello_reply_encode(reply_buf(c), id,
				      &(struct pbus_proto_hello_reply){
					      .version = PBUS_WIRE_VERSION,
					      .schema_hash = ours,
					      .param_count = s->param_count,
					      .max_frame = s->max_frame,
					      .max_subscriptions = s->max_subscriptions,
					      .server_pid = (uint32_t)getpid(),
					      .instance = {s->instance, (uint32_t)strlen(s->instance)},
					      .interface = {interface, (uint32_t)strlen(interface)},
				      });
	log_msg(LOG_DEBUG, "server: client %d (%s, uid %u) connected", (int)c->pid, c->name,
		(unsigned)c->uid);
}

static void handle_get(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX];
	struct pbus_proto_indexes l;
	struct pbus_wire_buf *b = reply_buf(c);
	uint32_t count;
	size_t start;

	if (pbus_proto_get_decode(body, n, s->param_count, &l, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	count = l.count;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = pbus_proto_index(&l, k);

		if (i >= s->param_count)
			return send_error(s, c, id, -ENOENT, "no parameter %u (the instance has %u)", i,
					  s->param_count);
		if (!readable(s, i))
			return send_error(s, c, id, -EACCES, "parameter %u ('%s') is not readable (noRead)",
					  i, s->schema->params[i].name);
	}
	start = pbus_proto_values_begin(b, PBUS_WIRE_VALUES, id, 0);
	for (uint32_t k = 0; k < count; k++)
		append_value(s, b, pbus_proto_index(&l, k), NULL, NULL);
	if (!b->failed && b->size - start > s->max_frame) {
		pbus_wire_cancel(b, start);
		send_error(s, c, id, -EMSGSIZE, "the %u values take more than the frame limit of %u bytes; "
			   "ask for fewer at a time", count, s->max_frame);
	} else if (pbus_proto_values_end(b, PBUS_WIRE_VALUES, start, count) < 0) {
		send_error(s, c, id, -ENOMEM, "out of memory");
	}
}

static void handle_stats(struct server *s, struct client *c, uint32_t id)
{
	struct pbus_wire_buf json = {0};
	char line[1024];
	uint32_t subs = 0;
	int n;

	for (struct client *k = s->clients; k; k = k->next)
		subs += k->sub_count;
	n = snprintf(line, sizeof(line),
		     "{\"instance\": \"%s\", \"uptime_s\": %.3f, \"clients\": %u, \"max_clients\": %u, "
		     "\"max_clients_per_user\": %u, \"reserved_clients\": %u, "
		     "\"subscriptions\": %u, \"requests\": %llu, \"notifications\": %llu, "
		     "\"values_notified\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, "
		     "\"errors\": %llu, \"connections_total\": %llu, \"rejected_connections\": %llu, "
		     "\"busy_sets\": %llu, \"clients_detail\": [",
		     s->instance, (double)(pbus_monotonic_ns() - s->started_ns) / 1e9, s->client_count,
		     s->max_clients, s->max_clients_per_user, s->reserved_clients, subs,
		     (unsigned long long)s->requests,
		     (unsigned long long)s->notifications, (unsigned long long)s->values_notified,
		     (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out,
		     (unsigned long long)s->errors, (unsigned long long)s->connections_total,
		     (unsigned long long)s->rejected_connections, (unsigned long long)s->busy_sets);
	pbus_wire_bytes(&json, line, (size_t)n);
	for (struct client *k = s->clients; k; k = k->next) {
		char name[2 * PBUS_WIRE_NAME_MAX + 1];
		size_t m = 0;

		/* The name is the client's text: escape it for JSON. */
		for (const char *p = k->name; *p && m + 2 < sizeof(name); p++) {
			if (*p == '"' || *p == '\\')
				name[m++] = '\\';
			name[m++] = *p;
		}
		name[m] = 0;
		n = snprintf(line, sizeof(line),
			     "%s{\"pid\": %d, \"uid\": %u, \"name\": \"%s\", \"subscriptions\": %u, "
			     "\"requests\": %llu, \"notifications\": %llu, \"tx_pending\": %zu}",
			     k == s->clients ? "" : ", ", (int)k->pid, (unsigned)k->uid, name, k->sub_count,
			     (unsigned long long)k->requests, (unsigned long long)k->notifications,
			     k->tx.size);
		pbus_wire_bytes(&json, line, (size_t)n);
	}
	pbus_wire_bytes(&json, "], ", 3);
	registry_stats(s, &json);
	pbus_wire_bytes(&json, "}", 1);
	if (json.failed) {
		send_error(s, c, id, -ENOMEM, "out of memory");
	} else {
		pbus_proto_str_encode(reply_buf(c), PBUS_WIRE_STATS, id, (const char *)json.data, json.size);
	}
	pbus_wire_buf_free(&json);
}

static void handle_frame(struct server *s, struct client *c, const struct pbus_wire_header *h,
			 const unsigned char *body)
{
	size_t n = h->length - PBUS_WIRE_HEADER_SIZE;
	char why[PBUS_PROTO_WHY_MAX];

	c->requests++;
	s->requests++;
	if (!c->hello_done && h->type != PBUS_WIRE_HELLO)
		return reject(s, c, h->id, -EPROTO, "%s before HELLO", pbus_wire_type_name(h->type));
	switch (h->type) {
	case PBUS_WIRE_HELLO:
		if (c->hello_done)
			return reject(s, c, h->id, -EPROTO, "HELLO twice");
		return handle_hello(s, c, h->id, body, n);
	case PBUS_WIRE_SCHEMA_GET:
		if (pbus_proto_empty_decode(PBUS_WIRE_SCHEMA_GET, n, why) < 0)
			return reject(s, c, h->id, -EPROTO, "%s", why);
		pbus_proto_str_encode(reply_buf(c), PBUS_WIRE_SCHEMA, h->id, s->schema_text, s->schema_length);
		return;
	case PBUS_WIRE_GET: return handle_get(s, c, h->id, body, n);
	case PBUS_WIRE_SET: return handle_set(s, c, h->id, h->flags, body, n);
	case PBUS_WIRE_SUBSCRIBE: return handle_subscribe(s, c, h->id, body, n);
	case PBUS_WIRE_UNSUBSCRIBE: return handle_unsubscribe(s, c, h->id, body, n);
	case PBUS_WIRE_STATS_GET:
		if (pbus_proto_empty_decode(PBUS_WIRE_STATS_GET, n, why) < 0)
			return reject(s, c, h->id, -EPROTO, "%s", why);
		return handle_stats(s, c, h->id);
	case PBUS_WIRE_PING:
		pbus_proto_bytes_encode(reply_buf(c), PBUS_WIRE_PONG, h->id, body, n);
		return;
	case PBUS_WIRE_SERVICE_REGISTER: return handle_service_register(s, c, h->id, body, n);
	case PBUS_WIRE_SERVICE_UNREGISTER: return handle_service_unregister(s, c, h->id, body, n);
	case PBUS_WIRE_SERVICE_LOOKUP: return handle_service_lookup(s, c, h->id, body, n);
	case PBUS_WIRE_SERVICE_UNWATCH: return handle_service_unwatch(s, c, h->id, body, n);
	default:
		return reject(s, c, h->id, -EPROTO, "%s is not a request", pbus_wire_type_name(h->type));
	}
}

/* Handle the complete frames in the client's receive buffer, in order,
 * until none is left, the client is closing or paused (client_paused()). */
static void client_process(struct server *s, struct client *c)
{
	bool took = false;

	while (!c->closing && !client_paused(c)) {
		struct pbus_wire_header h;
		const unsigned char *body;
		char why[PBUS_PROTO_WHY_MAX];
		int r = pbus_frame_in_next(&c->rx, s->max_frame, &h, &body, why);

		if (r == 0)
			break;
		if (r < 0) {
			reject(s, c, h.id, r, "%s", why);
			break;
		}
		handle_frame(s, c, &h, body);
		took = true;
		if (c->tx.size > REPLY_BACKLOG_MAX) {
			log_msg(LOG_WARNING, "server: client %d (%s) does not read its replies; closing",
				(int)c->pid, c->name);
			c->closing = true;
			c->tx.size = 0;
		}
	}
	if (client_paused(c) && !c->paused_since_ns)
		c->paused_since_ns = pbus_monotonic_ns();
	/* A frame begun owes its rest from its first byte on (a client that
	 * trickles a byte at a time gains nothing). */
	if (pbus_frame_in_pending(&c->rx) && (took || !c->owes_by_ns))
		c->owes_by_ns = pbus_monotonic_ns() + s->frame_timeout_ns;
	else if (!pbus_frame_in_pending(&c->rx) && c->hello_done)
		c->owes_by_ns = 0;
}

/* Read what the client sent and handle every complete frame. */
void client_read(struct server *s, struct client *c)
{
	if (client_paused(c)) {
		/* Not asked for its requests: only a hang-up brings us here. A
		 * parked SET is still done, a held reply still sent, and the
		 * requests after them read then. */
		if (c->in_epoll) {
			epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
			c->in_epoll = false;
		}
		return;
	}
	for (;;) {
		size_t room;
		ssize_t n;
		/* Room for the rest of a frame of up to max_frame and the start
		 * of the next. Whole frames are always taken before the next
		 * read, so what is pending is less than one frame. */
		int r = pbus_frame_in_room(&c->rx, 4096, 8192, (size_t)s->max_frame + 4096);

		if (r == -ENOMEM) {
			c->closing = true;
			return;
		}
		if (r < 0)
			break; /* cannot happen: see above */
		room = c->rx.capacity - c->rx.end;
		n = pbus_frame_in_recv(&c->rx, c->fd);
		if (n == 0 || (n < 0 && n != -EAGAIN)) {
			c->closing = true; /* gone, perhaps mid-frame: dropped */
			c->tx.size = 0;
			return;
		}
		if (n < 0)
			return;
		s->bytes_in += (uint64_t)n;
		client_process(s, c);
		/* Less than asked for: the socket is empty now (level-triggered
		 * epoll reports more), so spare the recv() that says EAGAIN. */
		if (c->closing || client_paused(c) || (size_t)n < room)
			return;
	}
}

/* The client is no longer paused (its parked SET is done, or its held
 * replies went out): its requests flow again, the ones it sent meanwhile
 * first. The time paused does not count against a frame it had begun (it
 * was not read meanwhile). */
static void client_resume(struct server *s, struct client *c, int64_t now)
{
	if (c->owes_by_ns)
		c->owes_by_ns += now - c->paused_since_ns;
	c->paused_since_ns = 0;
	client_process(s, c);
	if (client_paused(c) || c->closing)
		return;
	if (!c->in_epoll) {
		/* It hung up meanwhile: what it sent before is still read. */
		client_read(s, c);
		return;
	}
	client_update_events(s, c);
}

/* A new connection on @fd from a peer with @cred. */
struct client *client_new(struct server *s, int fd, const struct ucred *cred)
{
	struct client *c = calloc(1, sizeof(*c));
	struct epoll_event ev;

	if (!c)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){CLIENT_SNDBUF}, sizeof(int));
	c->fd = fd;
	c->pid = cred->pid;
	c->uid = cred->uid;
	c->gid = cred->gid;
	c->privileged = uid_privileged(cred->uid);
	c->owes_by_ns = pbus_monotonic_ns() + s->frame_timeout_ns; /* its HELLO */
	snprintf(c->name, sizeof(c->name), "pid %d", (int)cred->pid);
	pbus_process_groups(c->pid, &c->groups, &c->group_count); /* taken at connect */
	c->next = s->clients;
	s->clients = c;
	s->client_count++;
	c->events = EPOLLIN;
	ev = (struct epoll_event){.events = c->events, .data.ptr = c};
	c->in_epoll = epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
	return c;
}

/* Arm the timer for the earliest rate-limited notification or overdue
 * acknowledgement. */
static void arm_timer(struct server *s, int64_t at)
{
	struct itimerspec its = {0};

	if (at == s->timer_at)
		return; /* a system call per event saved */
	s->timer_at = at;
	if (at > 0) {
		its.it_value.tv_sec = at / 1000000000;
		its.it_value.tv_nsec = at % 1000000000;
	}
	timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* @c did not send its HELLO, or the rest of a frame, in time (§4). */
static void client_late(struct server *s, struct client *c)
{
	unsigned ms = (unsigned)(s->frame_timeout_ns / 1000000);
	size_t pending = pbus_frame_in_pending(&c->rx);

	if (pending >= 4)
		reject(s, c, 0, -EPROTO, "truncated frame: %zu of its %u bytes came within %u ms", pending,
		       pbus_le_load32(c->rx.data + c->rx.start), ms);
	else if (pending)
		reject(s, c, 0, -EPROTO, "truncated frame: %zu bytes of a header came within %u ms", pending,
		       ms);
	else
		reject(s, c, 0, -EPROTO, "no HELLO within %u ms of connecting", ms);
}

/* After any event: acknowledgements, notifications, sending, closing. */
void service_clients(struct server *s)
{
	int64_t now = pbus_monotonic_ns(), earliest = 0;
	struct client *next;

	for (struct client *c = s->clients; c; c = next) {
		int64_t at;

		next = c->next;
		/* Flush first: room in the socket lets waiting notifications go. */
		if (!c->closing && client_flush(s, c) < 0) {
			client_free(s, c);
			continue;
		}
		/* A parked SET: tried again when due; meanwhile the client's next
		 * frames are not read, so they cannot be late. */
		if (!c->closing && c->parked && now >= c->parked->next_ns && retry_parked(s, c, now)) {
			free_parked(c->parked);
			c->parked = NULL;
		}
		if (!c->closing) {
			check_acks(s, c, now);
			/* Its parked SET done and its held replies gone: its
			 * requests flow again. */
			if (c->paused_since_ns && !client_paused(c))
				client_resume(s, c, now);
		}
		if (!c->closing && c->parked && (!earliest || c->parked->next_ns < earliest))
			earliest = c->parked->next_ns;
		if (!c->closing && !client_paused(c) && c->owes_by_ns && now >= c->owes_by_ns)
			client_late(s, c);
		if (!c->closing) {
			if (!client_paused(c) && c->owes_by_ns && (!earliest || c->owes_by_ns < earliest))
				earliest = c->owes_by_ns;
			if (c->acks && (!earliest || c->acks->wake_ns < earliest))
				earliest = c->acks->wake_ns;
			/* What the steps above queued (replies a save released,
			 * a resumed client's replies) goes out before the
			 * NOTIFYs are built: notify_client() builds none while
			 * the send buffer holds anything, and tells of no
			 * deadline then, so a NOTIFY it skipped for bytes that
			 * the final flush sends would wait for another event. */
			if (client_flush(s, c) < 0) {
				client_free(s, c);
				continue;
			}
			at = notify_client(s, c, now);
			if (at && (!earliest || at < earliest))
				earliest = at;
		}
		/* A closing client gets what is queued (its ERROR) as far as the
		 * socket takes it now, then goes. */
		if (client_flush(s, c) < 0 || c->closing)
			client_free(s, c);
	}
	/* Watchers closed outside their turn (registry.c): a free may close
	 * more (a closing server's watchers), so until none is left. */
	while (s->reap) {
		s->reap = false;
		for (struct client *c = s->clients; c; c = next) {
			next = c->next;
			if (c->closing)
				client_free(s, c);
		}
	}
	if (s->accept_paused && (!earliest || s->accept_retry_ns < earliest))
		earliest = s->accept_retry_ns;
	arm_timer(s, earliest);
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	while (!atomic_load(&s->stopping)) {
		struct epoll_event events[32];
		int n = epoll_wait(s->epoll_fd, events, 32, -1);

		for (int i = 0; i < n; i++) {
			void *p = events[i].data.ptr;

			if (p == &s->listen_fd) {
				if (!s->accept_paused)
					accept_clients(s);
			} else if (p == &s->changed_fd) {
				drain_fd(s->changed_fd);
				collect_changes(s);
			} else if (p == &s->saved_fd || p == &s->timer_fd) {
				drain_fd(p == &s->saved_fd ? s->saved_fd : s->timer_fd);
			} else if (p == &s->stop_fd) {
				atomic_store(&s->stopping, true);
			} else if (p == &s->report_fd) {
				read_hwd_reports(s);
			} else {
				struct client *c = p;

				if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
					client_read(s, c);
			}
		}
		resume_accepting(s, pbus_monotonic_ns());
		service_clients(s);
	}
	return NULL;
}

static int add_fd(struct server *s, int fd, int *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* One warning per WritableBy group that does not exist on this system (a
 * fresh install, a typo), naming its parameters and what to do: a line per
 * parameter said the same thing seven times over for the demo. */
static void warn_missing_groups(const struct server *s, const struct pbus_schema *schema)
{
	for (uint32_t i = 0; i < s->param_count; i++) {
		const char *group = schema->params[i].group;
		char names[256];
		size_t used = 0;
		unsigned count = 0, listed = 0;
		bool first = true;

		if (!group || s->param_gid[i] != (gid_t)-1)
			continue;
		for (uint32_t j = 0; j < i && first; j++)
			if (schema->params[j].group && !strcmp(schema->params[j].group, group))
				first = false;
		if (!first)
			continue;
		names[0] = 0;
		for (uint32_t j = i; j < s->param_count; j++) {
			if (!schema->params[j].group || strcmp(schema->params[j].group, group))
				continue;
			count++;
			int n = snprintf(names + used, sizeof(names) - used, "%s%s", listed ? ", " : "",
					 schema->params[j].name);
			/* keep room for " and N more" */
			if (n > 0 && (size_t)n < sizeof(names) - used - 24) {
				used += (size_t)n;
				listed++;
			} else {
				names[used] = 0;
			}
		}
		if (listed < count)
			snprintf(names + used, sizeof(names) - used, " and %u more", count - listed);
		log_msg(LOG_WARNING,
			"server: group '%s' does not exist, so only pbusd's user and root may write %s %s "
			"(WritableBy in the deployment); to let others, create it (groupadd %s) and add "
			"their users (docs/security.md)",
			group, count == 1 ? "its parameter" : "its parameters", names, group);
	}
}

/* Everything but the socket and the threads (the fuzz target,
 * tests/fuzz/, drives a server made this way directly). */
int server_prepare(struct pbus_table *owner, const struct pbus_schema *schema,
			  const char *schema_text, size_t schema_length, const char *instance,
			  const struct server_options *o, struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s) {
		if (o->hardware && o->hwd_report_fd >= 0)
			close(o->hwd_report_fd);
		return -ENOMEM;
	}
	/* Ours from here on (closed by server_stop()). */
	s->report_fd = o->hardware ? o->hwd_report_fd : -1;
	atomic_init(&s->hardware, o->hardware && s->report_fd >= 0);
	s->apply_timeout_ns = (int64_t)(o->apply_timeout_ms ? o->apply_timeout_ms : APPLY_TIMEOUT_MS_DEFAULT) *
			      1000000;
	s->table = owner;
	s->schema = schema;
	s->schema_text = schema_text;
	s->schema_length = schema_length;
	s->instance = instance;
	s->param_count = pbus_schema_param_count(schema);
	s->max_frame = o->max_frame ? o->max_frame : PBUS_WIRE_MAX_FRAME_DEFAULT;
	s->max_clients = o->max_clients ? o->max_clients : 256;
	s->max_clients_per_user = o->max_clients_per_user ? o->max_clients_per_user
				  : s->max_clients / 4 ? s->max_clients / 4 : 1;
	s->reserved_clients = o->reserved_clients_given ? o->reserved_clients : RESERVED_CLIENTS_DEFAULT;
	if (!o->reserved_clients_given && s->reserved_clients >= s->max_clients)
		s->reserved_clients = s->max_clients - 1; /* a small --max-clients */
	s->max_subscriptions = o->max_subscriptions ? o->max_subscriptions : 64;
	s->max_services = o->max_services ? o->max_services : MAX_SERVICES_DEFAULT;
	s->frame_timeout_ns = (int64_t)(o->frame_timeout_ms ? o->frame_timeout_ms : FRAME_TIMEOUT_MS_DEFAULT) *
			      1000000;
	s->words = (s->param_count + 63) / 64 + 1;
	s->listen_fd = s->epoll_fd = s->changed_fd = s->saved_fd = s->timer_fd = s->stop_fd = -1;
	s->started_ns = pbus_monotonic_ns();
	pthread_mutex_init(&s->watch_lock, NULL);
	pthread_cond_init(&s->watch_changed, NULL);
	*ret = s;
	s->changed = calloc(s->words, sizeof(*s->changed));
	s->changed_now = calloc(s->words, sizeof(*s->changed_now));
	s->own_version = calloc(s->param_count + 1, sizeof(*s->own_version));
	s->param_gid = calloc(s->param_count + 1, sizeof(*s->param_gid));
	s->params = calloc(s->param_count + 1, sizeof(*s->params));
	s->set_writes = calloc(s->param_count + 1, sizeof(*s->set_writes));
	s->set_results = calloc(s->param_count + 1, sizeof(*s->set_results));
	s->set_seqs = calloc(s->param_count + 1, sizeof(*s->set_seqs));
	s->set_seen = calloc(s->words, sizeof(*s->set_seen));
	s->applied_seq = calloc(s->param_count + 1, sizeof(*s->applied_seq));
	s->failed_seq = calloc(s->param_count + 1, sizeof(*s->failed_seq));
	s->output_bound = calloc(s->words, sizeof(*s->output_bound));
	if (!s->changed || !s->changed_now || !s->own_version || !s->param_gid || !s->params ||
	    !s->set_writes || !s->set_results || !s->set_seqs || !s->set_seen || !s->applied_seq ||
	    !s->failed_seq || !s->output_bound) {
		log_msg(LOG_ERROR, "server: out of memory");
		return -ENOMEM;
	}
	if (s->reserved_clients >= s->max_clients) {
		log_msg(LOG_ERROR, "server: --reserved-clients %u must be less than --max-clients %u",
			s->reserved_clients, s->max_clients);
		return -EINVAL;
	}
	/* Every frame must fit max_frame: the schema text, and a NOTIFY (or
	 * VALUES) of the largest value. */
	if (schema_length + PBUS_WIRE_HEADER_SIZE + 4 > s->max_frame) {
		log_msg(LOG_ERROR, "server: --max-frame %u is below the schema's text (%zu bytes); at "
			"least %zu needed", s->max_frame, schema_length, schema_length + PBUS_WIRE_HEADER_SIZE + 4);
		return -EMSGSIZE;
	}
	for (uint32_t i = 0; i < s->param_count; i++) {
		size_t need = PBUS_WIRE_HEADER_SIZE + 8 + 28 + (size_t)schema->params[i].ti.value_size;

		if (need > s->max_frame) {
			log_msg(LOG_ERROR, "server: --max-frame %u cannot carry parameter '%s' (%u bytes); at "
				"least %zu needed", s->max_frame, schema->params[i].name,
				schema->params[i].ti.value_size, need);
			return -EMSGSIZE;
		}
	}
	for (uint32_t i = 0; i < s->param_count; i++) {
		const char *group = schema->params[i].group;
		struct group *g = group ? getgrnam(group) : NULL;

		pbus_table_param(owner, i, &s->params[i]);
		s->param_gid[i] = g ? g->gr_gid : (gid_t)-1;
		if (pbus_hwd_kind_is_output(pbus_schema_param_extra(schema, i, "hw")))
			s->output_bound[i / 64] |= UINT64_C(1) << (i % 64);
	}
	warn_missing_groups(s, schema);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->changed_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->saved_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->changed_fd < 0 || s->saved_fd < 0 || s->stop_fd < 0 || s->timer_fd < 0 ||
	    add_fd(s, s->changed_fd, &s->changed_fd) < 0 || add_fd(s, s->saved_fd, &s->saved_fd) < 0 ||
	    add_fd(s, s->stop_fd, &s->stop_fd) < 0 || add_fd(s, s->timer_fd, &s->timer_fd) < 0 ||
	    (s->report_fd >= 0 && add_fd(s, s->report_fd, &s->report_fd) < 0)) {
		int r = -errno;

		log_msg(LOG_ERROR, "server: cannot make its event descriptors: %s", strerror(-r));
		return r;
	}
	return 0;
}

int server_start(struct pbus_table *owner, const struct pbus_schema *schema, const char *schema_text,
		 size_t schema_length, const char *instance, const struct server_options *o,
		 struct server **ret)
{
	struct server *s = NULL;
	int r = server_prepare(owner, schema, schema_text, schema_length, instance, o, &s);

	if (r < 0)
		goto fail;
	r = listen_on(s, o->socket_dir);
	if (r < 0)
		goto fail;
	r = add_fd(s, s->listen_fd, &s->listen_fd);
	if (r < 0) {
		log_msg(LOG_ERROR, "server: cannot watch the listening socket: %s", strerror(-r));
		goto fail;
	}
	r = -pthread_create(&s->watcher, NULL, watcher_main, s);
	if (r < 0) {
		log_msg(LOG_ERROR, "server: cannot start the watcher thread: %s", strerror(-r));
		goto fail;
	}
	s->watcher_started = true;
	r = -pthread_create(&s->thread, NULL, server_main, s);
	if (r < 0) {
		log_msg(LOG_ERROR, "server: cannot start the server thread: %s", strerror(-r));
		goto fail;
	}
	s->thread_started = true;
	*ret = s;
	return 0;
fail:
	server_stop(s);
	return r;
}

int server_saved_fd(const struct server *s)
{
	return s ? s->saved_fd : -1;
}

void server_hardware_gone(struct server *s)
{
	if (s && atomic_exchange(&s->hardware, false))
		log_msg(LOG_INFO, "server: SETs with the APPLIED flag no longer wait for the hardware");
}

void server_stop(struct server *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, true);
	if (s->thread_started) {
		kick(s->stop_fd);
		pthread_join(s->thread, NULL);
	}
	if (s->watcher_started) {
		pthread_mutex_lock(&s->watch_lock);
		wake_watcher(s);
		pthread_mutex_unlock(&s->watch_lock);
		pthread_join(s->watcher, NULL);
	}
	while (s->clients)
		client_free(s, s->clients);
	registry_free(s);
	if (s->unlink_socket && s->socket_path)
		unlink(s->socket_path);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	{
		int fds[] = {s->epoll_fd, s->changed_fd, s->saved_fd, s->timer_fd, s->stop_fd, s->report_fd};

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	pthread_mutex_destroy(&s->watch_lock);
	pthread_cond_destroy(&s->watch_changed);
	free(s->watch_indexes);
	free(s->socket_path);
	free(s->changed);
	free(s->changed_now);
	free((void *)s->own_version);
	free(s->param_gid);
	free(s->params);
	free(s->set_writes);
	free(s->set_results);
	free(s->set_seqs);
	free(s->set_seen);
	free(s->applied_seq);
	free(s->failed_seq);
	free(s->output_bound);
	free(s->shares);
	free(s);
}
