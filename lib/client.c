/* SPDX-License-Identifier: MIT */
/*
 * client.c: the parameter server's client (parambus/client.h): one
 * connection to pbusd's socket (docs/socket-protocol.md), renewed by itself
 * when pbusd restarts.
 *
 * Descriptors. The caller sees one epoll descriptor that never changes. It
 * holds the connection's socket while there is one, and a timerfd that has
 * three jobs: the reconnect backoff, the deadline of a handshake in flight,
 * and "something is queued". The last one matters because a synchronous
 * request takes the notifications that arrive before its reply off the
 * socket: the socket is then no longer readable although there is work for
 * dispatch, so the timer is set to expire at once and keeps the descriptor
 * readable until dispatch has delivered the queue.
 *
 * Pipelining. Requests made by the caller are synchronous and one at a
 * time, but a reconnect sends HELLO and every SUBSCRIBE in one go and takes
 * the replies as dispatch finds them, so that dispatch never waits for the
 * server. The server answers requests in order, so a FIFO of what was sent
 * (struct pending) tells what each reply belongs to. A request that timed
 * out stays in the FIFO, abandoned, so that its late reply is recognised
 * and dropped instead of being taken for the answer to the next one.
 *
 * The queue. Notifications that arrive while a request waits, and the
 * DISCONNECTED / CONNECTED events, are copied into a queue, in order, as
 * frames whose id is the client's subscription id (the server's ids change
 * with every connection; the client's never do). Dispatch swaps the queue
 * with a second buffer before calling back, so that a callback may make
 * requests (which may queue more) while the values it was handed stay where
 * they are. Both buffers and the array of values given to callbacks are
 * kept and reused: in the steady state a notification costs a copy, no
 * allocation.
 *
 * Retrying. A request whose frame could not be sent because the peer had
 * already closed the socket (EPIPE: pbusd stopped while the client was
 * idle) never reached a server, so it is sent again once on a new
 * connection. A request whose reply is lost is not: a SET might have been
 * applied.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>

#include "owner-internal.h"
#include "schema-internal.h"
#include "clock-internal.h"
#include "segment-internal.h"
#include "segment-layout.h"
#include "protocol-internal.h"

#define CLIENT_TIMEOUT_DEFAULT_MS 5000
#define RECONNECT_FIRST_MS 1000
#define RECONNECT_MAX_MS 30000
#define CONNECT_RETRY_NS (10 * 1000000)  /* a full listen backlog: try again after */
#define INPUT_CHUNK (64u * 1024)          /* free room kept for one read */
#define READ_BUDGET 16                    /* reads per dispatch: a flood cannot hold it */
#define NS_PER_MS INT64_C(1000000)

/* Queue entries besides NOTIFY: the connection events (never on the wire). */
#define QUEUE_DISCONNECTED 0x100u
#define QUEUE_CONNECTED 0x101u

/* epoll tags: which of our descriptors an event is for. */
enum { TAG_TIMER = 1, TAG_SOCKET = 2 };

enum client_state {
	CLIENT_DISCONNECTED,
	CLIENT_HANDSHAKING, /* connected, HELLO sent, no HELLO_REPLY yet */
	CLIENT_CONNECTED
};

enum pending_kind {
	PENDING_HELLO,       /* the handshake */
	PENDING_RESUBSCRIBE, /* a subscription renewed after a reconnect */
	PENDING_REQUEST,     /* the caller's request, waited for now */
	PENDING_ABANDONED    /* a request that timed out: its reply is dropped */
};

/* One frame sent whose reply has not come yet. */
struct pending {
	uint32_t id;
	uint16_t kind;         /* enum pending_kind */
	uint16_t request_type; /* the frame's type; its reply is this + 1 */
	uint32_t subscription; /* client id, for SUBSCRIBE and RESUBSCRIBE */
};

struct subscription {
	uint32_t id;        /* the client's: stable across reconnects, never 0 */
	uint32_t server_id; /* on the current connection; 0: not subscribed now */
	bool active;        /* subscribed once: renew it after a reconnect */
	uint32_t *indexes;
	uint32_t count;
	struct pbus_subscribe_options options;
	pbus_client_notify_fn callback;
	void *userdata;
};

struct pbus_client {
	char instance[PBUS_INSTANCE_NAME_MAX + 1];
	char *socket_dir; /* options->socket_dir, or NULL: the search of §1 */
	char name[PBUS_WIRE_NAME_MAX + 1];
	uint64_t hello_hash; /* sent in HELLO: the option, then the schema's */
	int64_t timeout_ns;
	bool no_reconnect;

	int epoll_fd, timer_fd, socket_fd;
	enum client_state state;
	bool want_write;        /* EPOLLOUT is registered for the socket */
	int64_t timer_deadline; /* CLOCK_MONOTONIC ns as armed; 0: disarmed */

	/* The connection. */
	struct pbus_wire_buf out; /* frames not sent yet */
	struct pbus_frame_in in;
	struct pending *pending;  /* FIFO, oldest first */
	size_t pending_count, pending_capacity;
	uint32_t handshake_pending; /* HELLO and RESUBSCRIBE entries in it */
	int64_t handshake_deadline;
	int handshake_error; /* the ERROR that refused the last HELLO */
	uint32_t next_request_id;
	uint32_t max_frame;

	/* The caller's request and its reply. */
	struct pbus_wire_buf request; /* the frame, kept for one resend */
	struct pbus_wire_buf reply;   /* the reply's body */
	uint32_t reply_id;
	uint16_t reply_type;
	bool reply_ready;

	/* Reconnecting. */
	int64_t reconnect_at; /* the next attempt; 0: none */
	unsigned backoff_ms;  /* the delay after the next failure */
	bool scheduled_attempt;
	int fatal;          /* -ESTALE ...: no more reconnects */
	int deferred_error; /* a renewal refused: dispatch reports it once */

	/* The schema of the first connection. */
	struct pbus_schema *schema;
	uint64_t schema_hash;

	struct subscription *subs;
	size_t sub_count, sub_capacity;
	uint32_t next_subscription_id;

	struct pbus_wire_buf queue, delivering;
	struct pbus_client_value *values; /* param_count of them, for callbacks */
	bool dispatching;
};

/* --- Small helpers ---------------------------------------------------------- */

static struct subscription *find_subscription(struct pbus_client *c, uint32_t id)
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

static uint32_t next_request_id(struct pbus_client *c)
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

/* --- The timer and the epoll set -------------------------------------------- */

/* Arm the timer for the earliest thing dispatch has to do: deliver the
 * queue (at once), give up a handshake, reconnect. */
static void update_timer(struct pbus_client *c)
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

/* --- Sending and receiving ---------------------------------------------------- */

/* Send what the socket takes now. 0, or -errno of the connection. */
static int flush_output(struct pbus_client *c)
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

static int queue_event(struct pbus_client *c, unsigned type, uint32_t subscription)
{
	size_t start = pbus_wire_begin(&c->queue, type, subscription);

	return pbus_wire_end(&c->queue, start);
}

/* A NOTIFY goes into the queue for dispatch as the same frame, with the
 * client's subscription id in its id field and its body from the count on
 * (the values, checked). */
static int handle_notify(struct pbus_client *c, const unsigned char *body, size_t n)
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

static int push_pending(struct pbus_client *c, struct pending p)
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
	if (p.kind == PENDING_HELLO || p.kind == PENDING_RESUBSCRIBE)
		c->handshake_pending++;
	return 0;
}

/* Tell the server to drop subscription @server_id, whose reply nobody waits
 * for (a SUBSCRIBE that timed out, a renewal of one removed meanwhile). */
static int send_forget(struct pbus_client *c, uint32_t server_id)
{
	uint32_t id = next_request_id(c);
	int r = pbus_proto_u32_encode(&c->out, PBUS_WIRE_UNSUBSCRIBE, id, server_id);

	if (r == 0)
		r = push_pending(c, (struct pending){.id = id, .kind = PENDING_ABANDONED,
						     .request_type = PBUS_WIRE_UNSUBSCRIBE});
	return r < 0 ? r : flush_output(c);
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
	struct subscription *s = find_subscription(c, p->subscription);
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
	return queue_event(c, QUEUE_CONNECTED, s->id);
}

/* One whole frame from the server. A negative return means the connection
 * cannot go on (the caller drops it). */
static int handle_frame(struct pbus_client *c, const struct pbus_wire_header *h,
			const unsigned char *body, size_t n)
{
	struct pending p;
	uint32_t server_id;

	if (h->type == PBUS_WIRE_NOTIFY)
		return h->id == 0 ? handle_notify(c, body, n) : -EPROTO;
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
	if (p.kind == PENDING_HELLO || p.kind == PENDING_RESUBSCRIBE)
		c->handshake_pending--;
	if (h->type != PBUS_WIRE_ERROR && h->type != p.request_type + 1u)
		return -EPROTO;
	switch (p.kind) {
	case PENDING_HELLO:
		return handle_hello_reply(c, h->type, body, n);
	case PENDING_RESUBSCRIBE:
		return handle_resubscribed(c, &p, h->type, body, n);
	case PENDING_ABANDONED:
		if (p.request_type == PBUS_WIRE_SUBSCRIBE && h->type == PBUS_WIRE_SUBSCRIBED &&
		    pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, body, n, &server_id, NULL) == 0)
			return send_forget(c, server_id);
		return 0;
	default:
		break;
	}
	/* The caller's request. A subscription takes its server id now, before
	 * the NOTIFY that may follow in the same read is looked at. */
	if (p.request_type == PBUS_WIRE_SUBSCRIBE && h->type == PBUS_WIRE_SUBSCRIBED &&
	    pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, body, n, &server_id, NULL) == 0) {
		struct subscription *s = find_subscription(c, p.subscription);

		if (s)
			s->server_id = server_id;
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
static int receive(struct pbus_client *c, int budget)
{
	int r = read_input(c, budget);
	int p = process_input(c);

	return p < 0 ? p : r;
}

/* --- Connecting ------------------------------------------------------------------ */

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
static void connection_lost(struct pbus_client *c)
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
	if (!c->schema)
		return; /* the first connect reports for itself */
	for (size_t i = 0; i < c->sub_count; i++)
		if (c->subs[i].server_id) {
			c->subs[i].server_id = 0;
			queue_event(c, QUEUE_DISCONNECTED, c->subs[i].id);
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
static int find_socket(const char *socket_dir, const char *instance, struct sockaddr_un *sa)
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
static int connect_socket(const struct sockaddr_un *sa, uid_t *ret_uid)
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
	r = find_socket(c->socket_dir, c->instance, &sa);
	if (r < 0)
		return r;
	fd = connect_socket(&sa, &uid);
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

static int put_subscribe(struct pbus_wire_buf *b, uint32_t id, const struct subscription *s)
{
	struct pbus_proto_subscribe m = {.min_interval_us = s->options.min_interval_us,
					 .deadband = s->options.deadband,
					 .indexes.count = s->count};

	return pbus_proto_subscribe_encode(b, id, &m, s->indexes);
}

/* Send HELLO and, after a reconnect, every subscription again, without
 * waiting: the replies are handled as they come. */
static int send_handshake(struct pbus_client *c)
{
	uint32_t id = next_request_id(c);
	struct pbus_proto_hello m = {.min_version = PBUS_WIRE_VERSION,
				     .max_version = PBUS_WIRE_VERSION,
				     .schema_hash = c->hello_hash,
				     .client_name = {c->name, (uint32_t)strlen(c->name)}};
	int r = pbus_proto_hello_encode(&c->out, id, &m);

	if (r == 0)
		r = push_pending(c, (struct pending){.id = id, .kind = PENDING_HELLO,
						     .request_type = PBUS_WIRE_HELLO});
	for (size_t i = 0; i < c->sub_count && r == 0; i++) {
		struct subscription *s = &c->subs[i];

		if (!s->active)
			continue;
		id = next_request_id(c);
		r = put_subscribe(&c->out, id, s);
		if (r == 0)
			r = push_pending(c, (struct pending){.id = id, .kind = PENDING_RESUBSCRIBE,
							     .request_type = PBUS_WIRE_SUBSCRIBE,
							     .subscription = s->id});
	}
	if (r == 0)
		r = flush_output(c);
	return r;
}

/* Start a reconnect: connect and send the handshake. @scheduled: the
 * timer's attempt (a failure moves the schedule on), else a request's. */
static int start_reconnect(struct pbus_client *c, bool scheduled)
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
		connection_lost(c);
		return r;
	}
	return 0;
}

/* --- Waiting for the server ------------------------------------------------------ */

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
		r = flush_output(c);
	if (r == 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		r = receive(c, READ_BUDGET);
	if (r < 0) {
		connection_lost(c);
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
		if (start_reconnect(c, false) < 0)
			return c->fatal ? c->fatal : -ENOTCONN;
	}
	while (c->handshake_pending) {
		int r = pump_once(c, deadline);

		if (r == -ETIMEDOUT) {
			connection_lost(c);
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
static int transact(struct pbus_client *c, uint32_t subscription, bool may_resend)
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
		id = next_request_id(c);
		pbus_le_store(c->request.data + 8, id, 4);
		pbus_wire_bytes(&c->out, c->request.data, c->request.size);
		if (c->out.failed) {
			c->out.failed = false;
			return -ENOMEM;
		}
		r = push_pending(c, (struct pending){.id = id, .kind = PENDING_REQUEST,
						     .request_type = (uint16_t)type,
						     .subscription = subscription});
		if (r < 0) {
			c->out.size -= c->request.size; /* unsent: nobody would take its reply */
			return r;
		}
		r = flush_output(c);
		if (r < 0) {
			/* The peer closed before taking the frame: no server saw it.
			 * Keep what it sent before closing, then start over once. */
			receive(c, READ_BUDGET);
			connection_lost(c);
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
 * with id 0, set when it is sent (transact()). */
static struct pbus_wire_buf *request_buf(struct pbus_client *c)
{
	c->request.size = 0;
	c->request.failed = false;
	return &c->request;
}

/* Every public call that may have queued something ends here. */
static int finish(struct pbus_client *c, int r)
{
	update_timer(c);
	return r;
}

/* --- The first connection -------------------------------------------------------- */

static int fetch_schema(struct pbus_client *c)
{
	struct pbus_schema *schema;
	struct pbus_proto_str text;
	int r = pbus_proto_empty_encode(request_buf(c), PBUS_WIRE_SCHEMA_GET, 0);

	if (r == 0)
		r = transact(c, 0, false);
	if (r < 0)
		return r;
	if (pbus_proto_str_decode(PBUS_WIRE_SCHEMA, c->reply.data, c->reply.size, &text, NULL) < 0)
		return -EPROTO;
	r = pbus_schema_parse(text.s, text.length, "pbusd", NULL, 0, &schema);
	if (r < 0)
		return r == -ENOMEM ? r : -EPROTO;
	if (pbus_schema_hash(schema) != c->schema_hash) {
		pbus_schema_free(schema);
		return -EPROTO;
	}
	c->values = calloc(schema->param_count ? schema->param_count : 1, sizeof(*c->values));
	if (!c->values) {
		pbus_schema_free(schema);
		return -ENOMEM;
	}
	c->schema = schema;
	c->hello_hash = c->schema_hash; /* from now on: this schema or none */
	return 0;
}

static int first_connect(struct pbus_client *c)
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
		receive(c, READ_BUDGET);
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

/* --- The public API ---------------------------------------------------------------- */

int pbus_client_connect(const char *instance, const struct pbus_client_options *options,
			struct pbus_client **ret_client)
{
	struct pbus_client_options o = {0};
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = TAG_TIMER};
	struct pbus_client *c;
	const char *name;
	size_t n;
	int r;

	if (options)
		o = *options;
	if (!instance || !pbus_instance_name_valid(instance) || !ret_client ||
	    (o.name && (strlen(o.name) > PBUS_WIRE_NAME_MAX || !pbus_utf8_valid(o.name, strlen(o.name)))))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->epoll_fd = c->timer_fd = c->socket_fd = -1;
	memcpy(c->instance, instance, strlen(instance) + 1);
	/* The program's name, cut at a character boundary to fit HELLO. */
	name = o.name ? o.name : program_invocation_short_name;
	n = strlen(name);
	if (n > PBUS_WIRE_NAME_MAX) {
		n = PBUS_WIRE_NAME_MAX;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(c->name, name, n);
	/* The protocol wants UTF-8; a program's name need not be. */
	if (!pbus_utf8_valid(c->name, n))
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c->name[i] >= 0x80)
				c->name[i] = '?';
	c->hello_hash = o.schema_hash;
	c->timeout_ns = (int64_t)(o.timeout_ms ? o.timeout_ms : CLIENT_TIMEOUT_DEFAULT_MS) * NS_PER_MS;
	c->no_reconnect = o.no_reconnect;
	c->backoff_ms = RECONNECT_FIRST_MS;
	c->max_frame = PBUS_WIRE_MAX_FRAME_DEFAULT;
	if (o.socket_dir && !(c->socket_dir = strdup(o.socket_dir))) {
		r = -ENOMEM;
		goto fail;
	}
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->epoll_fd < 0 || c->timer_fd < 0 ||
	    epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->timer_fd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	r = first_connect(c);
	if (r < 0)
		goto fail;
	*ret_client = c;
	return 0;
fail:
	pbus_client_close(c);
	return r;
}

void pbus_client_close(struct pbus_client *client)
{
	if (!client)
		return;
	if (client->socket_fd >= 0)
		close(client->socket_fd);
	if (client->timer_fd >= 0)
		close(client->timer_fd);
	if (client->epoll_fd >= 0)
		close(client->epoll_fd);
	for (size_t i = 0; i < client->sub_count; i++)
		free(client->subs[i].indexes);
	free(client->subs);
	free(client->pending);
	pbus_frame_in_free(&client->in);
	pbus_wire_buf_free(&client->out);
	pbus_wire_buf_free(&client->request);
	pbus_wire_buf_free(&client->reply);
	pbus_wire_buf_free(&client->queue);
	pbus_wire_buf_free(&client->delivering);
	free(client->values);
	pbus_schema_free(client->schema);
	free(client->socket_dir);
	free(client);
}

int pbus_client_fd(const struct pbus_client *client)
{
	return client ? client->epoll_fd : -EBADF;
}

bool pbus_client_connected(const struct pbus_client *client)
{
	return client && client->state == CLIENT_CONNECTED;
}

const struct pbus_schema *pbus_client_schema(const struct pbus_client *client)
{
	return client ? client->schema : NULL;
}

/* Call back for everything queued. The queue is swapped out first: what
 * callbacks' requests queue waits for the next dispatch. */
static int deliver(struct pbus_client *c)
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
		struct subscription *s = find_subscription(c, id);
		pbus_client_notify_fn callback;
		void *userdata;
		uint32_t count = 0;

		pos += length;
		if (!s)
			continue; /* unsubscribed meanwhile */
		callback = s->callback;
		userdata = s->userdata;
		if (type == PBUS_WIRE_NOTIFY) {
			/* (decoded when queued: handle_notify()) */
			const unsigned char *record = frame + PBUS_WIRE_HEADER_SIZE + 4;

			count = pbus_le_load32(frame + PBUS_WIRE_HEADER_SIZE);
			for (uint32_t i = 0; i < count; i++) {
				struct pbus_wire_value v;

				pbus_proto_values_next(&record, &v);
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
		r = flush_output(c);
	if (r == 0 && c->socket_fd >= 0 && (socket_events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		r = receive(c, READ_BUDGET);
	if (r < 0)
		connection_lost(c);
	now = pbus_monotonic_ns();
	if (c->socket_fd >= 0 && c->handshake_pending && now >= c->handshake_deadline)
		connection_lost(c); /* a server that accepts but does not answer */
	if (c->state == CLIENT_DISCONNECTED && c->reconnect_at && now >= c->reconnect_at &&
	    !c->fatal && !c->no_reconnect)
		start_reconnect(c, true);
	delivered = deliver(c);
	update_timer(c);
	if (c->fatal)
		return c->fatal;
	if (c->deferred_error) {
		r = c->deferred_error;
		c->deferred_error = 0;
		return r;
	}
	return delivered;
}

int pbus_client_find(const struct pbus_client *client, const char *name, uint32_t *ret_index)
{
	if (!client || !name || !ret_index)
		return -EINVAL;
	return pbus_schema_find(client->schema, name, ret_index);
}

static const char *text_or_empty(const char *s)
{
	return s ? s : "";
}

int pbus_client_describe(const struct pbus_client *client, uint32_t index,
			 struct pbus_param_info *ret_info)
{
	const struct pbus_schema_param *p;
	struct pbus_param_info info;

	if (!client || !ret_info)
		return -EINVAL;
	if (index >= client->schema->param_count)
		return -ENOENT;
	p = &client->schema->params[index];
	memset(&info, 0, sizeof(info));
	info.name = p->name;
	info.unit = text_or_empty(p->unit);
	info.description = text_or_empty(p->description);
	info.group = text_or_empty(p->group);
	info.index = index;
	info.type = p->ti.type;
	info.flags = p->ti.flags;
	info.update_class = p->update_class;
	info.value_size = p->ti.value_size;
	info.element_size = p->ti.element_size;
	info.enum_count = p->ti.enum_count;
	info.min = p->ti.min;
	info.max = p->ti.max;
	info.step = p->step;
	if (p->ti.flags & PBUS_PARAM_HAS_DEFAULT) {
		info.default_value = p->default_value;
		info.default_length = p->default_length;
	}
	*ret_info = info;
	return 0;
}

int pbus_client_enumerator(const struct pbus_client *client, uint32_t index, uint32_t i,
			   const char **ret_label, int32_t *ret_value)
{
	if (!client)
		return -EINVAL;
	if (index >= client->schema->param_count)
		return -ENOENT;
	return pbus_typeinfo_enumerator(&client->schema->params[index].ti, i, ret_label, ret_value);
}

int pbus_client_parse(const struct pbus_client *client, uint32_t index, const char *text, void *buf,
		      size_t size, size_t *ret_length)
{
	size_t length;
	int r;

	if (!client || !text || !ret_length || (!buf && size))
		return -EINVAL;
	if (index >= client->schema->param_count)
		return -ENOENT;
	r = pbus_value_parse(&client->schema->params[index].ti, text, buf, size, &length);
	if (r == 0)
		*ret_length = length;
	return r;
}

int pbus_client_format(const struct pbus_client *client, uint32_t index, const void *value,
		       size_t length, char *buf, size_t size)
{
	if (!client || (!value && length) || (!buf && size))
		return -EINVAL;
	if (index >= client->schema->param_count)
		return -ENOENT;
	return pbus_value_format(&client->schema->params[index].ti, value, length, buf, size);
}

int pbus_client_get(struct pbus_client *client, const uint32_t *indexes, size_t count,
		    struct pbus_client_value *values)
{
	struct pbus_client *c = client;
	struct pbus_proto_values m;
	const unsigned char *record;
	int r;

	if (!c || !indexes || !values || count == 0 || count > c->schema->param_count)
		return -EINVAL;
	r = pbus_proto_get_encode(request_buf(c), 0, indexes, count);
	if (r == 0)
		r = transact(c, 0, true);
	if (r < 0)
		return finish(c, r);
	if (pbus_proto_values_decode(PBUS_WIRE_VALUES, c->reply.data, c->reply.size, c->schema->param_count,
				     &m, NULL) < 0 ||
	    m.count != count)
		return finish(c, -EPROTO);
	record = m.records;
	for (size_t i = 0; i < count; i++) {
		struct pbus_wire_value v;

		pbus_proto_values_next(&record, &v);
		if (v.index != indexes[i])
			return finish(c, -EPROTO);
		values[i] = (struct pbus_client_value){
			.index = v.index, .status = v.status, .timestamp_ns = v.timestamp_ns,
			.seq = v.seq, .length = v.length, .value = v.value};
	}
	return finish(c, 0);
}

/* A failure without per-write answers: every write gets its code. */
static int fail_writes(struct pbus_write *writes, size_t count, int r)
{
	for (size_t i = 0; i < count; i++) {
		writes[i].result = r;
		writes[i].seq = 0;
	}
	return r;
}

int pbus_client_set(struct pbus_client *client, struct pbus_write *writes, size_t count)
{
	struct pbus_client *c = client;
	struct pbus_proto_set_reply m;
	int r;

	if (!c || !writes || count == 0 || count > c->schema->param_count)
		return -EINVAL;
	for (size_t i = 0; i < count; i++) {
		if (!writes[i].value && writes[i].length)
			return -EINVAL;
		if (writes[i].length > UINT32_MAX)
			return -EMSGSIZE;
	}
	r = pbus_proto_set_encode(request_buf(c), 0, writes, count);
	if (r == 0)
		r = transact(c, 0, true);
	if (r < 0)
		return finish(c, fail_writes(writes, count, r));
	if (pbus_proto_set_reply_decode(c->reply.data, c->reply.size, &m, NULL) < 0 || m.count != count)
		return finish(c, fail_writes(writes, count, -EPROTO));
	for (size_t i = 0; i < count; i++)
		pbus_proto_set_entry(&m, i, &writes[i].result, &writes[i].seq);
	return finish(c, m.result);
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
	} while (id == 0 || find_subscription(c, id));
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
	r = put_subscribe(request_buf(c), 0, s);
	if (r == 0)
		r = transact(c, id, true);
	s = find_subscription(c, id);
	if (r == 0 && pbus_proto_u32_decode(PBUS_WIRE_SUBSCRIBED, c->reply.data, c->reply.size, &server_id,
					    NULL) < 0)
		r = -EPROTO;
	if (r < 0) {
		remove_subscription(c, s);
		return finish(c, r);
	}
	s->active = true;
	*ret_subscription = id;
	return finish(c, 0);
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
	s = find_subscription(c, subscription);
	if (!s)
		return -ENOENT;
	/* Not subscribed on this connection (disconnected, or its renewal
	 * pending): there is nothing to tell the server now, and a renewal
	 * that comes back for it is undone when it arrives. */
	if (s->server_id && c->state == CLIENT_CONNECTED) {
		r = pbus_proto_u32_encode(request_buf(c), PBUS_WIRE_UNSUBSCRIBE, 0, s->server_id);
		if (r == 0)
			r = transact(c, 0, false);
		/* Gone either way: a lost connection took it along, and a server
		 * that does not know it has nothing to send for it. */
		if (r == -ENOTCONN || r == -ENOENT)
			r = 0;
		s = find_subscription(c, subscription);
	}
	if (s)
		remove_subscription(c, s);
	return finish(c, r);
}

/* One STATS request: the JSON text (in the reply buffer, valid until the
 * next request) and its length. 0, or -errno before finish(). */
static int stats_request(struct pbus_client *client, const char **ret_json, uint32_t *ret_length)
{
	struct pbus_proto_str json;
	int r = pbus_proto_empty_encode(request_buf(client), PBUS_WIRE_STATS_GET, 0);

	if (r == 0)
		r = transact(client, 0, true);
	if (r < 0)
		return r;
	if (pbus_proto_str_decode(PBUS_WIRE_STATS, client->reply.data, client->reply.size, &json, NULL) < 0)
		return -EPROTO;
	*ret_json = json.s;
	*ret_length = json.length;
	return 0;
}

int pbus_client_stats(struct pbus_client *client, char *buf, size_t size)
{
	const char *json;
	uint32_t length;
	int r;

	if (!client || (!buf && size))
		return -EINVAL;
	r = stats_request(client, &json, &length);
	if (r < 0)
		return finish(client, r);
	if (length > INT32_MAX)
		return finish(client, -EOVERFLOW);
	if (size) {
		size_t n = length < size - 1 ? length : size - 1;

		memcpy(buf, json, n);
		buf[n] = 0;
	}
	return finish(client, (int)length);
}

int pbus_client_stats_text(struct pbus_client *client, char **ret_json)
{
	const char *json;
	uint32_t length;
	char *copy;
	int r;

	if (!client || !ret_json)
		return -EINVAL;
	r = stats_request(client, &json, &length);
	if (r < 0)
		return finish(client, r);
	copy = malloc((size_t)length + 1);
	if (!copy)
		return finish(client, -ENOMEM);
	memcpy(copy, json, length);
	copy[length] = 0;
	*ret_json = copy;
	return finish(client, 0);
}

int pbus_client_server_uid(const char *instance, const char *socket_dir, char *path, size_t size,
			   uid_t *ret_uid)
{
	struct sockaddr_un sa;
	uid_t uid;
	int fd, r;

	if (!instance || !pbus_instance_name_valid(instance) || (!path && size) || !ret_uid)
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	r = find_socket(socket_dir, instance, &sa);
	if (r < 0)
		return r;
	if (size)
		snprintf(path, size, "%s", sa.sun_path);
	fd = connect_socket(&sa, &uid);
	if (fd < 0)
		return fd;
	close(fd);
	*ret_uid = uid;
	return 0;
}

int pbus_client_ping(struct pbus_client *client, const void *data, size_t length)
{
	int r;

	if (!client || (!data && length))
		return -EINVAL;
	if (length > PBUS_WIRE_MAX_FRAME_LIMIT)
		return -EMSGSIZE;
	r = pbus_proto_bytes_encode(request_buf(client), PBUS_WIRE_PING, 0, data, length);
	if (r == 0)
		r = transact(client, 0, true);
	if (r == 0 && (client->reply.size != length ||
		       (length && memcmp(client->reply.data, data, length))))
		r = -EPROTO;
	return finish(client, r);
}
