/* SPDX-License-Identifier: MIT */
/*
 * client-connection.c: the client's connection to pbusd (client-internal.h):
 * the socket and its search path, the handshake, sending and receiving
 * frames, matching each reply to the request it answers, reconnecting with
 * backoff, and waiting for the caller's reply.
 */
#include "client-internal.h"

uint32_t pbus_client_next_request_id(struct pbus_client *c)
{
	if (++c->next_request_id == 0)
		c->next_request_id = 1;
	return c->next_request_id;
}

/* The code of an ERROR body; -EPROTO if it is malformed or not an errno. */
static int error_code(const void *body, size_t n)
{
	struct pbus_proto_error m;

	return pbus_proto_error_decode(body, n, &m, NULL) < 0 ? -EPROTO : m.code;
}

/* Arm the timer for the earliest thing dispatch has to do: deliver the
 * queue (at once), give up a handshake, reconnect. */
void pbus_client_update_timer(struct pbus_client *c)
{
	struct itimerspec its = {{0, 0}, {0, 0}};
	int64_t deadline = 0;

	if (c->queue.size > 0) {
		deadline = 1; /* long past: expires at once */
	} else {
		if (c->socket_fd >= 0 && c->handshake_pending)
			deadline = c->handshake_deadline;
		if (c->state == CLIENT_DISCONNECTED && c->reconnect_at &&
		    (!deadline || c->reconnect_at < deadline))
			deadline = c->reconnect_at;
	}
	if (deadline == c->timer_deadline)
		return;
	its.it_value.tv_sec = (time_t)(deadline / 1000000000);
	its.it_value.tv_nsec = (long)(deadline % 1000000000);
	if (timerfd_settime(c->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		c->timer_deadline = deadline;
}

static void set_write_interest(struct pbus_client *c, bool want)
{
	struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0u),
				 .data.u32 = TAG_SOCKET};

	if (want == c->want_write || c->socket_fd < 0)
		return;
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, c->socket_fd, &ev) == 0)
		c->want_write = want;
}

/* Send what the socket takes now. 0, or -errno of the connection. */
int pbus_client_flush(struct pbus_client *c)
{
	while (c->out.size > 0) {
		ssize_t n = send(c->socket_fd, c->out.data, c->out.size, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		pbus_wire_buf_consume(&c->out, (size_t)n);
	}
	set_write_interest(c, c->out.size > 0);
	return 0;
}

/* Read what the socket has, in at most @budget reads. 0, -ECONNRESET at the
 * end of the stream (after keeping what came before it), or -errno. */
static int read_input(struct pbus_client *c, int budget)
{
	struct pbus_frame_in *in = &c->in;

	while (budget-- > 0) {
		size_t room;
		ssize_t n;

		if (pbus_frame_in_room(in, INPUT_CHUNK / 4, INPUT_CHUNK, 0) < 0)
			return -ENOMEM;
		room = in->capacity - in->end;
		n = pbus_frame_in_recv(in, c->socket_fd);
		if (n < 0)
			return n == -EAGAIN ? 0 : (int)n;
		if (n == 0)
			return -ECONNRESET;
		if ((size_t)n < room)
			return 0; /* drained: level-triggered epoll tells us about more */
	}
	return 0;
}

int pbus_client_push_pending(struct pbus_client *c, struct pending p)
{
	if (c->pending_count == c->pending_capacity) {
		size_t capacity = c->pending_capacity ? c->pending_capacity * 2 : 8;
		struct pending *a = realloc(c->pending, capacity * sizeof(*a));

		if (!a)
			return -ENOMEM;
		c->pending = a;
		c->pending_capacity = capacity;
	}
	c->pending[c->pending_count++] = p;
	if (pending_in_handshake(p.kind))
		c->handshake_pending++;
	return 0;
}

/* Tell the server to drop subscription @server_id, whose reply nobody waits
 * for (a SUBSCRIBE that timed out, a renewal of one removed meanwhile). */
static int send_forget(struct pbus_client *c, uint32_t server_id)
{
	uint32_t id = pbus_client_next_request_id(c);
	int r = pbus_proto_u32_encode(&c->out, PBUS_WIRE_UNSUBSCRIBE, id, server_id);

	if (r == 0)
		r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_ABANDONED,
						     .request_type = PBUS_WIRE_UNSUBSCRIBE});
	return r < 0 ? r : pbus_client_flush(c);
}

static int handle_hello_reply(struct pbus_client *c, unsigned type, const void *body, size_t n)
{
	struct pbus_proto_hello_reply m;

	if (type == PBUS_WIRE_ERROR) {
		int code = error_code(body, n);

		c->handshake_error = code;
		/* Another schema or protocol will not change by trying again. */
		if (c->schema && (code == -ESTALE || code == -EPROTONOSUPPORT))
			c->fatal = code;
		return code;
	}
	/* (max_subscriptions: the server enforces it) */
	if (pbus_proto_hello_reply_decode(body, n, &m, NULL) < 0)
		return c->handshake_error = -EPROTO;
	if (m.version != PBUS_WIRE_VERSION) {
		c->handshake_error = -EPROTONOSUPPORT;
		if (c->schema)
			c->fatal = -EPROTONOSUPPORT;
		return -EPROTONOSUPPORT;
	}
	if (c->schema && (m.schema_hash != c->schema_hash || m.param_count != c->schema->param_count)) {
		/* The server checks the hash we sent; this is the belt to its braces. */
		c->fatal = c->handshake_error = -ESTALE;
		return -ESTALE;
	}
	c->schema_hash = m.schema_hash; /* the first connect checks it against the text */
	c->max_frame = m.max_frame < PBUS_WIRE_MAX_FRAME_LIMIT ? m.max_frame : PBUS_WIRE_MAX_FRAME_LIMIT;
	c->state = CLIENT_CONNECTED;
	c->handshake_error = 0;
	c->backoff_ms = RECONNECT_FIRST_MS;
	c->reconnect_at = 0;
	return 0;
}

static int handle_resubscribed(struct pbus_client *c, const struct pending *p, unsigned type,
			       const void *body, size_t n)
{
	struct subscription *s = pbus_client_subscription(c, p->subscription);
	uint32_t server_id;

	if (type == PBUS_WIRE_ERROR) {
		/* It stays in the table and is tried again at the next reconnect;
		 * dispatch says why it has no CONNECTED event. */
		c->deferred_error = error_code(body, n);
		return 0;
	}
	if (pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, body, n, &server_id, NULL) < 0)
		return -EPROTO;
	if (!s)
		return send_forget(c, server_id);
	s->server_id = server_id;
	return pbus_client_queue_event(c, QUEUE_CONNECTED, s->id);
}

/* One whole frame from the server. A negative return means the connection
 * cannot go on (the caller drops it). */
static int handle_frame(struct pbus_client *c, const struct pbus_wire_header *h,
			const unsigned char *body, size_t n)
{
	struct pending p;
	uint32_t server_id;

	if (h->type == PBUS_WIRE_NOTIFY)
		return h->id == 0 ? pbus_client_handle_notify(c, body, n) : -EPROTO;
	if (h->type == PBUS_WIRE_SERVICE && h->id == 0)
		return pbus_client_handle_service_notify(c, body, n);
	if (c->pending_count == 0 || h->id != c->pending[0].id) {
		/* An ERROR that answers nothing we sent is about the connection
		 * (too many clients, a frame it could not read); it closes next. */
		if (h->type == PBUS_WIRE_ERROR) {
			int code = error_code(body, n);

			if (c->state == CLIENT_HANDSHAKING)
				c->handshake_error = code;
			return code;
		}
		return -EPROTO;
	}
	p = c->pending[0];
	memmove(c->pending, c->pending + 1, (c->pending_count - 1) * sizeof(*c->pending));
	c->pending_count--;
	if (pending_in_handshake(p.kind))
		c->handshake_pending--;
	if (h->type != PBUS_WIRE_ERROR && h->type != p.request_type + 1u)
		return -EPROTO;
	switch (p.kind) {
	case PENDING_HELLO:
		return handle_hello_reply(c, h->type, body, n);
	case PENDING_RESUBSCRIBE:
		return handle_resubscribed(c, &p, h->type, body, n);
	case PENDING_REREGISTER:
	case PENDING_REWATCH:
		return pbus_client_handle_service_renewal(c, &p, h->type, body, n);
	case PENDING_ABANDONED:
		if (p.request_type == PBUS_WIRE_SUBSCRIBE && h->type == PBUS_WIRE_SUBSCRIBED &&
		    pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, body, n, &server_id, NULL) == 0)
			return send_forget(c, server_id);
		if (p.request_type == PBUS_WIRE_SERVICE_LOOKUP)
			return pbus_client_service_abandoned(c, &p, h->type, body, n);
		return 0;
	default:
		break;
	}
	/* The caller's request. A subscription takes its server id now, before
	 * the NOTIFY that may follow in the same read is looked at. */
	if (p.request_type == PBUS_WIRE_SUBSCRIBE && h->type == PBUS_WIRE_SUBSCRIBED &&
	    pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, body, n, &server_id, NULL) == 0) {
		struct subscription *s = pbus_client_subscription(c, p.subscription);

		if (s)
			s->server_id = server_id;
	}
	/* A watch likewise becomes active with its reply, before the SERVICE
	 * notifications that may follow it in the same read. */
	if (p.request_type == PBUS_WIRE_SERVICE_LOOKUP && p.subscription && h->type == PBUS_WIRE_SERVICE) {
		int r = pbus_client_service_watched(c, p.subscription, body, n);

		if (r < 0)
			return r;
	}
	c->reply.size = 0;
	pbus_wire_bytes(&c->reply, body, n);
	if (c->reply.failed) {
		c->reply.failed = false;
		return -ENOMEM;
	}
	c->reply_id = p.id;
	c->reply_type = h->type;
	c->reply_ready = true;
	return 0;
}

/* Take every whole frame out of the input. */
static int process_input(struct pbus_client *c)
{
	struct pbus_frame_in *in = &c->in;

	for (;;) {
		struct pbus_wire_header h;
		const unsigned char *body;
		int r = pbus_frame_in_next(in, PBUS_WIRE_MAX_FRAME_LIMIT, &h, &body, NULL);

		if (r < 0)
			return -EPROTO;
		if (r == 0) {
			size_t avail = pbus_frame_in_pending(in);

			/* A frame larger than the buffer: make room for all of it. */
			if (avail >= PBUS_WIRE_HEADER_SIZE &&
			    pbus_frame_in_room(in, h.length - avail, INPUT_CHUNK, 0) < 0)
				return -ENOMEM;
			return 0;
		}
		r = handle_frame(c, &h, body, h.length - PBUS_WIRE_HEADER_SIZE);
		if (r < 0)
			return r;
	}
}

/* Read and handle what came. 0 or why the connection ended. Frames read
 * before the end of the stream are handled first (an ERROR before a close
 * says why). */
int pbus_client_receive(struct pbus_client *c, int budget)
{
	int r = read_input(c, budget);
	int p = process_input(c);

	return p < 0 ? p : r;
}

static void schedule_after_failure(struct pbus_client *c)
{
	c->reconnect_at = pbus_monotonic_ns() + (int64_t)c->backoff_ms * NS_PER_MS;
	c->backoff_ms = c->backoff_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : c->backoff_ms * 2;
}

/*
 * Drop the connection. Every subscription that was live gets a
 * DISCONNECTED event; the next attempt is scheduled: 1 s after a connection
 * that was up, then twice the last delay up to 30 s after each failed
 * attempt — unless the failed attempt was a request's extra one, which
 * leaves the schedule alone.
 */
void pbus_client_connection_lost(struct pbus_client *c)
{
	enum client_state was = c->state;

	if (c->socket_fd < 0)
		return;
	epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, c->socket_fd, NULL);
	close(c->socket_fd);
	c->socket_fd = -1;
	c->want_write = false;
	c->state = CLIENT_DISCONNECTED;
	c->out.size = 0;
	c->out.failed = false;
	c->in.start = c->in.end = 0;
	c->pending_count = 0;
	c->handshake_pending = 0;
	pbus_client_services_lost(c);
	if (!c->schema)
		return; /* the first connect reports for itself */
	for (size_t i = 0; i < c->sub_count; i++)
		if (c->subs[i].server_id) {
			c->subs[i].server_id = 0;
			pbus_client_queue_event(c, QUEUE_DISCONNECTED, c->subs[i].id);
		}
	if (c->fatal || c->no_reconnect) {
		c->reconnect_at = 0;
		return;
	}
	if (was == CLIENT_CONNECTED) {
		c->backoff_ms = RECONNECT_FIRST_MS;
		schedule_after_failure(c);
	} else if (c->scheduled_attempt || !c->reconnect_at) {
		schedule_after_failure(c);
	}
}

static int socket_path(struct sockaddr_un *sa, const char *dir, const char *instance)
{
	int n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s.sock", dir, instance);

	return n < 0 || (size_t)n >= sizeof(sa->sun_path) ? -ENAMETOOLONG : 0;
}

/* docs/socket-protocol.md §1: PBUS_SOCKET_DIR, /run/parambus,
 * $XDG_RUNTIME_DIR/parambus, /tmp/parambus-UID; the first that has
 * NAME.sock. An explicit directory is the only one looked at. */
int pbus_client_find_socket(const char *socket_dir, const char *instance, struct sockaddr_un *sa)
{
	char xdg[PATH_MAX], tmp[64];
	const char *dirs[4];
	const char *env;
	size_t n = 0;
	struct stat st;

	if (socket_dir)
		return socket_path(sa, socket_dir, instance);
	env = getenv("PBUS_SOCKET_DIR");
	if (env && *env)
		dirs[n++] = env;
	dirs[n++] = "/run/parambus";
	env = getenv("XDG_RUNTIME_DIR");
	if (env && *env && (size_t)snprintf(xdg, sizeof(xdg), "%s/parambus", env) < sizeof(xdg))
		dirs[n++] = xdg;
	snprintf(tmp, sizeof(tmp), "/tmp/parambus-%u", (unsigned)getuid());
	dirs[n++] = tmp;
	for (size_t i = 0; i < n; i++)
		if (socket_path(sa, dirs[i], instance) == 0 && stat(sa->sun_path, &st) == 0)
			return 0;
	return -ENOENT;
}

/* Connect a nonblocking socket to @sa; the server's uid in *ret_uid (the
 * kernel's SO_PEERCRED: the uid of whoever listens, which nobody can
 * forge). The descriptor, or -errno. */
int pbus_client_connect_socket(const struct sockaddr_un *sa, uid_t *ret_uid)
{
	struct ucred cred;
	socklen_t length = sizeof(cred);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_uid = cred.uid;
	return fd;
}

/*
 * Connect the socket (nonblocking) and put it in the epoll set. The
 * server must be a trusted owner (owner-internal.h): the socket's
 * directory may have been made by anybody while pbusd was down, with a
 * socket of theirs in it, who would read our writes and answer our reads.
 * Nothing is sent before the check: an untrusted server is -EPERM.
 */
static int open_socket(struct pbus_client *c)
{
	struct sockaddr_un sa;
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = TAG_SOCKET};
	uid_t uid;
	int fd, r;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	r = pbus_client_find_socket(c->socket_dir, c->instance, &sa);
	if (r < 0)
		return r;
	fd = pbus_client_connect_socket(&sa, &uid);
	if (fd < 0)
		return fd;
	if (!pbus_owner_trusted(uid)) {
		close(fd);
		return -EPERM;
	}
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	c->socket_fd = fd;
	c->want_write = false;
	c->state = CLIENT_HANDSHAKING;
	c->handshake_error = 0;
	c->handshake_deadline = pbus_monotonic_ns() + c->timeout_ns;
	return 0;
}

int pbus_client_put_subscribe(struct pbus_wire_buf *b, uint32_t id, const struct subscription *s)
{
	struct pbus_proto_subscribe m = {.min_interval_us = s->options.min_interval_us,
					 .deadband = s->options.deadband,
					 .indexes.count = s->count};

	return pbus_proto_subscribe_encode(b, id, &m, s->indexes);
}

/* Send HELLO and, after a reconnect, every subscription, registration and
 * watch again, without waiting: the replies are handled as they come. */
static int send_handshake(struct pbus_client *c)
{
	uint32_t id = pbus_client_next_request_id(c);
	struct pbus_proto_hello m = {.min_version = PBUS_WIRE_VERSION,
				     .max_version = PBUS_WIRE_VERSION,
				     .schema_hash = c->hello_hash,
				     .client_name = {c->name, (uint32_t)strlen(c->name)}};
	int r = pbus_proto_hello_encode(&c->out, id, &m);

	if (r == 0)
		r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_HELLO,
						     .request_type = PBUS_WIRE_HELLO});
	for (size_t i = 0; i < c->sub_count && r == 0; i++) {
		struct subscription *s = &c->subs[i];

		if (!s->active)
			continue;
		id = pbus_client_next_request_id(c);
		r = pbus_client_put_subscribe(&c->out, id, s);
		if (r == 0)
			r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_RESUBSCRIBE,
							     .request_type = PBUS_WIRE_SUBSCRIBE,
							     .subscription = s->id});
	}
	if (r == 0)
		r = pbus_client_put_service_renewals(c);
	if (r == 0)
		r = pbus_client_flush(c);
	return r;
}

/* Start a reconnect: connect and send the handshake. @scheduled: the
 * timer's attempt (a failure moves the schedule on), else a request's. */
int pbus_client_start_reconnect(struct pbus_client *c, bool scheduled)
{
	int r;

	c->scheduled_attempt = scheduled;
	r = open_socket(c);
	if (r < 0) {
		if (scheduled || !c->reconnect_at)
			schedule_after_failure(c);
		return r;
	}
	r = send_handshake(c);
	if (r < 0) {
		pbus_client_connection_lost(c);
		return r;
	}
	return 0;
}

/* Wait until the socket has something (or takes output), at most until
 * @deadline, and handle it. 0, -ETIMEDOUT, or -ENOTCONN (-EPROTO) after
 * dropping a connection that ended (that sent a malformed frame). */
static int pump_once(struct pbus_client *c, int64_t deadline)
{
	struct pollfd pfd = {.fd = c->socket_fd, .events = POLLIN};
	int64_t now = pbus_monotonic_ns();
	int r;

	if (c->socket_fd < 0)
		return -ENOTCONN;
	if (now >= deadline)
		return -ETIMEDOUT;
	if (c->out.size > 0)
		pfd.events |= POLLOUT;
	if (deadline - now > INT32_MAX / 2 * NS_PER_MS)
		deadline = now + INT32_MAX / 2 * NS_PER_MS; /* a huge timeout: come back later */
	r = poll(&pfd, 1, (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS));
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return 0;
	r = 0;
	if (pfd.revents & POLLOUT)
		r = pbus_client_flush(c);
	if (r == 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		r = pbus_client_receive(c, READ_BUDGET);
	if (r < 0) {
		pbus_client_connection_lost(c);
		return r == -EPROTO ? -EPROTO : -ENOTCONN; /* a server that sent garbage */
	}
	return 0;
}

/* Be connected with the handshake done, or say why not. A request made
 * while disconnected tries one reconnect at once (the backoff schedule
 * stays as it was): a program that writes after pbusd restarted should not
 * wait for the timer. */
static int ensure_connected(struct pbus_client *c, int64_t deadline)
{
	if (c->fatal)
		return c->fatal;
	if (c->state == CLIENT_DISCONNECTED) {
		if (!c->schema || c->no_reconnect)
			return -ENOTCONN;
		if (pbus_client_start_reconnect(c, false) < 0)
			return c->fatal ? c->fatal : -ENOTCONN;
	}
	while (c->handshake_pending) {
		int r = pump_once(c, deadline);

		if (r == -ETIMEDOUT) {
			pbus_client_connection_lost(c);
			return -ETIMEDOUT;
		}
		if (r < 0)
			return c->fatal ? c->fatal : r;
	}
	if (c->state != CLIENT_CONNECTED)
		return c->fatal ? c->fatal : -ENOTCONN;
	return 0;
}

static void abandon(struct pbus_client *c, uint32_t id)
{
	for (size_t i = 0; i < c->pending_count; i++)
		if (c->pending[i].id == id)
			c->pending[i].kind = PENDING_ABANDONED;
}

/*
 * Send the frame in c->request and wait for its reply, which is left in
 * c->reply (body) and c->reply_type. Returns 0 for the reply of the right
 * type, the code of an ERROR, or -ENOTCONN, -ETIMEDOUT, -EMSGSIZE, -ESTALE,
 * -ENOMEM. @may_resend: the frame means the same on a new connection (not
 * so for UNSUBSCRIBE, which names a server id).
 */
int pbus_client_transact(struct pbus_client *c, uint32_t subscription, bool may_resend)
{
	int64_t deadline = pbus_monotonic_ns() + c->timeout_ns;
	unsigned type;

	if (c->request.failed) {
		c->request.failed = false;
		return -ENOMEM;
	}
	type = (unsigned)(c->request.data[4] | c->request.data[5] << 8);
	for (int attempt = 0;; attempt++) {
		uint32_t id;
		int r = ensure_connected(c, deadline);

		if (r < 0)
			return r;
		if (c->request.size > c->max_frame)
			return -EMSGSIZE;
		id = pbus_client_next_request_id(c);
		pbus_le_store(c->request.data + 8, id, 4);
		pbus_wire_bytes(&c->out, c->request.data, c->request.size);
		if (c->out.failed) {
			c->out.failed = false;
			return -ENOMEM;
		}
		r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_REQUEST,
						     .request_type = (uint16_t)type,
						     .subscription = subscription});
		if (r < 0) {
			c->out.size -= c->request.size; /* unsent: nobody would take its reply */
			return r;
		}
		r = pbus_client_flush(c);
		if (r < 0) {
			/* The peer closed before taking the frame: no server saw it.
			 * Keep what it sent before closing, then start over once. */
			pbus_client_receive(c, READ_BUDGET);
			pbus_client_connection_lost(c);
			if (attempt == 0 && may_resend)
				continue;
			return c->fatal ? c->fatal : -ENOTCONN;
		}
		while (!(c->reply_ready && c->reply_id == id)) {
			r = pump_once(c, deadline);
			/* A reply read just before the connection ended still counts. */
			if (c->reply_ready && c->reply_id == id)
				break;
			if (r == -ETIMEDOUT) {
				abandon(c, id);
				return -ETIMEDOUT;
			}
			if (r < 0)
				return c->fatal ? c->fatal : r;
		}
		c->reply_ready = false;
		if (c->reply_type == PBUS_WIRE_ERROR)
			return error_code(c->reply.data, c->reply.size);
		return 0;
	}
}

/* The buffer for the caller's request frame, empty: the frame is encoded
 * with id 0, set when it is sent (pbus_client_transact()). */
struct pbus_wire_buf *pbus_client_request_buf(struct pbus_client *c)
{
	c->request.size = 0;
	c->request.failed = false;
	return &c->request;
}

/* Every public call that may have queued something ends here. */
int pbus_client_finish(struct pbus_client *c, int r)
{
	pbus_client_update_timer(c);
	return r;
}

int pbus_client_str_request(struct pbus_client *c, unsigned type, bool may_resend,
			    struct pbus_proto_str *ret_text)
{
	int r = pbus_proto_empty_encode(pbus_client_request_buf(c), type, 0);

	if (r == 0)
		r = pbus_client_transact(c, 0, may_resend);
	if (r < 0)
		return r;
	if (pbus_proto_str_decode(type + 1, c->reply.data, c->reply.size, ret_text, NULL) < 0)
		return -EPROTO;
	return 0;
}

static const char *text_or_empty(const char *s)
{
	return s ? s : "";
}

/* The schema view of @schema: every parameter's description and type, as
 * the client's describe, parse and format answer them. 0 or -ENOMEM. */
static int make_view(const struct pbus_schema *schema, struct pbus_view **ret_view)
{
	struct pbus_view *view;
	int r = pbus_view_new(schema->param_count, &view);

	if (r < 0)
		return r;
	for (uint32_t i = 0; i < schema->param_count; i++) {
		const struct pbus_schema_param *p = &schema->params[i];
		struct pbus_view_entry *e = &view->entries[i];

		e->info.name = p->name;
		e->info.unit = text_or_empty(p->unit);
		e->info.description = text_or_empty(p->description);
		e->info.group = text_or_empty(p->group);
		e->info.index = i;
		e->info.type = p->ti.type;
		e->info.flags = p->ti.flags;
		e->info.update_class = p->update_class;
		e->info.value_size = p->ti.value_size;
		e->info.element_size = p->ti.element_size;
		e->info.enum_count = p->ti.enum_count;
		e->info.min = p->ti.min;
		e->info.max = p->ti.max;
		e->info.step = p->step;
		if (p->ti.flags & PBUS_PARAM_HAS_DEFAULT) {
			e->info.default_value = p->default_value;
			e->info.default_length = p->default_length;
		}
		e->ti = &p->ti;
	}
	pbus_view_index(view);
	*ret_view = view;
	return 0;
}

static int fetch_schema(struct pbus_client *c)
{
	struct pbus_schema *schema;
	struct pbus_proto_str text;
	int r = pbus_client_str_request(c, PBUS_WIRE_SCHEMA_GET, false, &text);

	if (r < 0)
		return r;
	r = pbus_schema_parse(text.s, text.length, "pbusd", NULL, 0, &schema);
	if (r < 0)
		return r == -ENOMEM ? r : -EPROTO;
	if (pbus_schema_hash(schema) != c->schema_hash) {
		pbus_schema_free(schema);
		return -EPROTO;
	}
	c->values = calloc(schema->param_count ? schema->param_count : 1, sizeof(*c->values));
	if (!c->values || make_view(schema, &c->view) < 0) {
		pbus_schema_free(schema);
		return -ENOMEM;
	}
	c->schema = schema;
	c->hello_hash = c->schema_hash; /* from now on: this schema or none */
	return 0;
}

int pbus_client_first_connect(struct pbus_client *c)
{
	int64_t deadline = pbus_monotonic_ns() + c->timeout_ns;
	int r;

	/* A full listen backlog refuses a nonblocking connect with EAGAIN;
	 * a busy pbusd takes the next one soon. */
	while ((r = open_socket(c)) == -EAGAIN) {
		struct timespec ts = {0, CONNECT_RETRY_NS};

		if (pbus_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
	if (r < 0)
		return r;
	r = send_handshake(c);
	if (r == -EPIPE || r == -ECONNRESET) {
		/* Refused at once (too many clients): the ERROR says why. */
		pbus_client_receive(c, READ_BUDGET);
		r = -ENOTCONN;
	}
	while (r == 0 && c->handshake_pending)
		r = pump_once(c, deadline);
	if (r == -ENOTCONN || (r == 0 && c->state != CLIENT_CONNECTED))
		r = c->handshake_error ? c->handshake_error : -ECONNRESET;
	if (r == 0)
		r = fetch_schema(c);
	return r;
}
