/* SPDX-License-Identifier: MIT */
/*
 * rpc-stub.c: servers of Franca interfaces (struct pbus_stub,
 * docs/methods.md §3): a listening socket of the stub's own (an abstract
 * Unix socket name chosen by the kernel, so there is no file to squat or
 * to leave behind), registered with pbusd; each connection's CONNECT
 * handshake (interface and version), its calls (dispatched to the
 * generated code, which calls the application), its broadcast
 * subscriptions; broadcasts fired from any thread; and the process's
 * table of in-process servers that proxies of the same process call
 * directly.
 *
 * Threads. Connections are read and calls run in the loop thread. The
 * stub's lock guards the list of connections and the in-process
 * subscribers; a connection's out_lock guards its output, written by the
 * loop thread (replies) and by firing threads (broadcasts). A connection
 * closed by the loop thread is unlinked under the stub's lock and freed by
 * a job after the dispatch round.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock-internal.h"
#include "process-internal.h"
#include "rpc-internal.h"

#define STUB_READ_CHUNK (16u * 1024)
#define STUB_READ_BUDGET 16
/* The limits of docs/methods.md §3.4, pbusd's of socket-protocol.md §4:
 * connections in all, of one unprivileged uid, the places kept for root
 * and the server's own uid, and the time to send CONNECT (or the rest of
 * a frame). */
#define STUB_MAX_CONNECTIONS 256
#define STUB_MAX_PER_USER (STUB_MAX_CONNECTIONS / 4)
#define STUB_RESERVED 8
#define STUB_FRAME_TIMEOUT_NS (10 * 1000000000LL)

struct stub_conn {
	struct loop_source source;
	struct pbus_stub *stub;
	struct pbus_caller caller;
	struct loop_timer timer; /* CONNECT, or the rest of a frame, is due */
	bool connected; /* CONNECT accepted */
	bool closing;   /* flush what is queued, then close */
	struct pbus_frame_in in;
	pthread_mutex_t out_lock;
	struct pbus_wire_buf out; /* not yet taken by the socket */
	bool want_write;
	unsigned char *subscribed; /* per broadcast */
	uint64_t dropped;          /* broadcasts lost to a full queue */
	struct stub_conn *next;
};

struct local_sub {
	struct pbus_proxy *proxy;
	unsigned broadcast;
	struct local_sub *next;
};

struct pbus_stub {
	char address[PBUS_RPC_ADDRESS_MAX + 1];
	const struct pbus_rpc_interface *itf;
	pbus_stub_dispatch_fn dispatch;
	pbus_stub_subscription_fn on_subscription;
	void *server;
	struct pbus_loop *loop;
	struct registry *registry;
	bool registered;
	int listen_fd;
	struct loop_source listen_source;
	char endpoint[RPC_ENDPOINT_MAX + 1];
	gid_t *method_gids; /* per method: CallableBy's gid, or (gid_t)-1 (no group, or none of that name) */

	pthread_mutex_t lock;
	struct stub_conn *conns;
	struct local_sub *local_subs;
	unsigned *remote_subscribers; /* per broadcast: connections subscribed to it */

	atomic_bool alive;
	atomic_uint inflight;
	pthread_mutex_t call_lock; /* recursive: one call at a time, socket or in-process */
	unsigned refs; /* under pbus_rpc_local_lock: the table's and proxies' */
	struct pbus_stub *next_local;
	bool in_table;

	uint64_t next_caller_id;
	struct pbus_rpc_arena *arena; /* the callers' (loop thread) */
	struct pbus_rpc_buf reply;    /* loop thread */
	struct stub_conn *dead;       /* closed, freed by reap_job */
	struct loop_job reap_job;
};

pthread_mutex_t pbus_rpc_local_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pbus_stub *local_stubs;
static atomic_uint_fast64_t caller_ids = 1;

/* --- callers ---------------------------------------------------------------- */

PBUS_API uint64_t pbus_caller_id(const struct pbus_caller *c) { return c->id; }
PBUS_API pid_t pbus_caller_pid(const struct pbus_caller *c) { return c->pid; }
PBUS_API uid_t pbus_caller_uid(const struct pbus_caller *c) { return c->uid; }
PBUS_API gid_t pbus_caller_gid(const struct pbus_caller *c) { return c->gid; }
PBUS_API const char *pbus_caller_name(const struct pbus_caller *c) { return c->name; }

static __thread struct pbus_rpc_arena *thread_arena;

PBUS_API struct pbus_rpc_arena *pbus_caller_arena(const struct pbus_caller *c)
{
	if (c->arena)
		return c->arena;
	if (!thread_arena)
		thread_arena = pbus_rpc_arena_new();
	return thread_arena;
}

/* The in-process caller's arena is reset when its call has returned. */
void rpc_thread_arena_reset(void);
void rpc_thread_arena_reset(void)
{
	pbus_rpc_arena_reset(thread_arena);
}

uint64_t rpc_next_caller_id(void);
uint64_t rpc_next_caller_id(void)
{
	return atomic_fetch_add(&caller_ids, 1);
}

/* --- the table of in-process servers ---------------------------------------- */

void *stub_server(struct pbus_stub *stub) { return stub->server; }
pthread_mutex_t *stub_call_lock(struct pbus_stub *stub) { return &stub->call_lock; }
atomic_uint *stub_inflight(struct pbus_stub *stub) { return &stub->inflight; }
bool stub_alive(struct pbus_stub *stub) { return atomic_load(&stub->alive); }

static bool same_interface(const struct pbus_rpc_interface *a, const struct pbus_rpc_interface *b)
{
	return a == b || (!strcmp(a->name, b->name) && a->major == b->major && b->minor <= a->minor);
}

bool stub_local_ref_locked(struct pbus_stub *stub, const struct pbus_rpc_interface *itf);

struct pbus_stub *stub_local_find_locked(const char *address, const struct pbus_rpc_interface *itf)
{
	for (struct pbus_stub *s = local_stubs; s; s = s->next_local)
		if (!strcmp(s->address, address) && stub_local_ref_locked(s, itf))
			return s;
	return NULL;
}

bool stub_local_ref_locked(struct pbus_stub *stub, const struct pbus_rpc_interface *itf)
{
	if (!atomic_load(&stub->alive) || !same_interface(stub->itf, itf))
		return false;
	stub->refs++;
	return true;
}

void stub_local_unref_locked(struct pbus_stub *stub)
{
	stub->refs--;
}

static void stub_destroy(struct pbus_stub *stub);

void stub_local_put(struct pbus_stub *stub)
{
	bool last;

	pthread_mutex_lock(&pbus_rpc_local_lock);
	last = --stub->refs == 0;
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	if (last)
		stub_destroy(stub);
}

int stub_local_subscribe(struct pbus_stub *stub, struct pbus_proxy *proxy, unsigned broadcast,
			 bool subscribe)
{
	struct local_sub **p;
	int r = 0;

	if (broadcast >= stub->itf->broadcast_count)
		return rpc_fail(-ENOENT, "no broadcast %u in %s", broadcast, stub->itf->name);
	pthread_mutex_lock(&stub->lock);
	for (p = &stub->local_subs; *p; p = &(*p)->next)
		if ((*p)->proxy == proxy && (*p)->broadcast == broadcast)
			break;
	if (subscribe && !*p) {
		struct local_sub *s = calloc(1, sizeof *s);

		if (s) {
			s->proxy = proxy;
			s->broadcast = broadcast;
			s->next = stub->local_subs;
			stub->local_subs = s;
		} else {
			r = -ENOMEM;
		}
	} else if (!subscribe && *p) {
		struct local_sub *s = *p;

		*p = s->next;
		free(s);
	}
	pthread_mutex_unlock(&stub->lock);
	return r;
}

/* --- output ---------------------------------------------------------------- */

static void conn_close(struct stub_conn *c);

/* Send what is queued (out_lock held); false if the connection broke. */
static bool conn_flush_locked(struct stub_conn *c)
{
	while (c->out.size) {
		ssize_t n = send(c->source.fd, c->out.data, c->out.size, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return false;
		}
		pbus_wire_buf_consume(&c->out, (size_t)n);
	}
	return true;
}

/* Arrange EPOLLOUT as needed after a flush (out_lock held). */
static void conn_want_write_locked(struct stub_conn *c)
{
	bool want = c->out.size > 0;

	if (want != c->want_write) {
		c->want_write = want;
		pbus_loop_modify(c->stub->loop, &c->source, EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0));
	}
}

/* Queue @n bytes (and @m more) and send what the socket takes; false if
 * the connection broke or its queue is over the limit. */
static bool conn_send(struct stub_conn *c, const void *a, size_t n, const void *b, size_t m)
{
	bool ok = true;

	pthread_mutex_lock(&c->out_lock);
	if (c->out.size + n + m > RPC_OUT_LIMIT) {
		ok = false;
	} else if (c->out.size == 0) {
		/* Nothing queued: straight to the socket, the rest queued. */
		struct iovec iov[2] = {{(void *)a, n}, {(void *)b, m}};
		struct msghdr msg = {.msg_iov = iov, .msg_iovlen = m ? 2 : 1};
		ssize_t sent = sendmsg(c->source.fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			ok = false;
		} else {
			size_t done = sent < 0 ? 0 : (size_t)sent;

			if (done < n)
				pbus_wire_bytes(&c->out, (const unsigned char *)a + done, n - done);
			done = done > n ? done - n : 0;
			if (done < m)
				pbus_wire_bytes(&c->out, (const unsigned char *)b + done, m - done);
			ok = !c->out.failed;
			conn_want_write_locked(c);
		}
	} else {
		pbus_wire_bytes(&c->out, a, n);
		if (m)
			pbus_wire_bytes(&c->out, b, m);
		ok = !c->out.failed;
	}
	pthread_mutex_unlock(&c->out_lock);
	return ok;
}

static void conn_send_buf(struct stub_conn *c, struct pbus_wire_buf *b)
{
	if (!b->failed && b->size && !conn_send(c, b->data, b->size, NULL, 0))
		c->closing = true;
	pbus_wire_buf_free(b);
}

static void conn_error(struct stub_conn *c, uint32_t id, int code, bool close, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void conn_error(struct stub_conn *c, uint32_t id, int code, bool close, const char *fmt, ...)
{
	struct pbus_wire_buf b = {0};
	char message[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	pbus_proto_error_encode(&b, id, code, message);
	conn_send_buf(c, &b);
	if (close)
		c->closing = true;
}

/* --- handling frames --------------------------------------------------------- */

static void handle_connect(struct stub_conn *c, const struct pbus_wire_header *h,
			   const unsigned char *body, size_t n)
{
	const struct pbus_rpc_interface *itf = c->stub->itf;
	struct pbus_proto_connect m;
	struct pbus_proto_connected reply;
	struct pbus_wire_buf b = {0};
	char why[PBUS_PROTO_WHY_MAX];

	if (pbus_proto_connect_decode(body, n, &m, why) < 0) {
		conn_error(c, h->id, -EPROTO, true, "%s", why);
		return;
	}
	if (m.min_version > RPC_PROTOCOL_VERSION || m.max_version < RPC_PROTOCOL_VERSION) {
		conn_error(c, h->id, -EPROTONOSUPPORT, true,
			   "no common protocol version: client %u..%u, server %d", m.min_version,
			   m.max_version, RPC_PROTOCOL_VERSION);
		return;
	}
	if (m.interface.length != strlen(itf->name) ||
	    memcmp(m.interface.s, itf->name, m.interface.length)) {
		conn_error(c, h->id, -EPROTO, true, "this server serves %s, not %.*s", itf->name,
			   (int)m.interface.length, m.interface.s);
		return;
	}
	if (m.major != itf->major || m.minor > itf->minor) {
		conn_error(c, h->id, -EPROTO, true,
			   "interface version mismatch: server %s %u.%u, client %u.%u", itf->name,
			   itf->major, itf->minor, m.major, m.minor);
		return;
	}
	memcpy(c->caller.name, m.client_name.s, m.client_name.length);
	c->caller.name[m.client_name.length] = 0;
	c->connected = true;
	reply = (struct pbus_proto_connected){.version = RPC_PROTOCOL_VERSION,
					      .major = itf->major,
					      .minor = itf->minor,
					      .max_frame = RPC_MAX_FRAME,
					      .server_pid = (uint32_t)getpid()};
	pbus_proto_connected_encode(&b, h->id, &reply);
	conn_send_buf(c, &b);
}

static bool may_call(struct pbus_stub *stub, const struct pbus_caller *caller, unsigned method)
{
	const char *group = stub->itf->methods[method].callable_by;

	if (!group || !*group || caller->uid == 0 || caller->uid == geteuid())
		return true;
	return stub->method_gids[method] != (gid_t)-1 &&
	       pbus_gid_in(stub->method_gids[method], caller->gid, caller->groups, caller->group_count);
}

static void handle_call(struct stub_conn *c, const struct pbus_wire_header *h, const unsigned char *body,
			size_t n)
{
	struct pbus_stub *stub = c->stub;
	const struct pbus_rpc_interface *itf = stub->itf;
	struct pbus_proto_call m;
	struct pbus_rpc_reader rd;
	struct pbus_rpc_buf *out = &stub->reply;
	char why[PBUS_PROTO_WHY_MAX];
	bool reply;
	int r;

	if (pbus_proto_call_decode(PBUS_WIRE_CALL, body, n, &m, why) < 0) {
		conn_error(c, h->id, -EPROTO, true, "%s", why);
		return;
	}
	reply = !(m.flags & PBUS_PROTO_CALL_NO_REPLY);
	if (m.index >= itf->method_count) {
		if (reply)
			conn_error(c, h->id, -ENOSYS, false, "%s has no method %u (it has %u)", itf->name,
				   m.index, itf->method_count);
		return;
	}
	if (!may_call(stub, &c->caller, m.index)) {
		if (reply)
			conn_error(c, h->id, -EPERM, false,
				   "%s.%s may be called by group %s only (uid %u is not in it)",
				   itf->name, itf->methods[m.index].name, itf->methods[m.index].callable_by,
				   (unsigned)c->caller.uid);
		return;
	}
	pbus_rpc_arena_reset(stub->arena);
	pbus_rpc_reader_init(&rd, m.args, m.args_length, stub->arena);
	out->size = PBUS_PROTO_RETURN_HEAD;
	out->error = 0;
	pthread_mutex_lock(&stub->call_lock);
	r = stub->dispatch(stub->server, &c->caller, m.index, &rd, out);
	pthread_mutex_unlock(&stub->call_lock);
	if (r == 0 && out->error)
		r = out->error;
	if (rd.error == -EPROTO || r == -EPROTO) {
		conn_error(c, h->id, -EPROTO, true, "malformed arguments of %s.%s", itf->name,
			   itf->methods[m.index].name);
		return;
	}
	if (!reply)
		return;
	if (r < 0) {
		conn_error(c, h->id, r, false, "%s.%s failed: %s", itf->name, itf->methods[m.index].name,
			   strerror(-r));
		return;
	}
	if (out->size > RPC_MAX_FRAME) {
		conn_error(c, h->id, -EMSGSIZE, false, "the reply of %s.%s (%zu bytes) is above %u",
			   itf->name, itf->methods[m.index].name, out->size, RPC_MAX_FRAME);
		return;
	}
	pbus_proto_return_head(out->data, h->id, (uint32_t)out->size);
	if (!conn_send(c, out->data, out->size, NULL, 0))
		c->closing = true;
}

static void handle_subscription(struct stub_conn *c, const struct pbus_wire_header *h,
				const unsigned char *body, size_t n)
{
	struct pbus_stub *stub = c->stub;
	bool subscribe = h->type == PBUS_WIRE_BROADCAST_SUBSCRIBE;
	struct pbus_wire_buf b = {0};
	char why[PBUS_PROTO_WHY_MAX];
	uint16_t index;

	if (pbus_proto_u16_decode(h->type, body, n, &index, why) < 0) {
		conn_error(c, h->id, -EPROTO, true, "%s", why);
		return;
	}
	if (index >= stub->itf->broadcast_count) {
		conn_error(c, h->id, -ENOENT, false, "%s has no broadcast %u", stub->itf->name, index);
		return;
	}
	if (stub->on_subscription) {
		int r = stub->on_subscription(stub->server, &c->caller, index, subscribe);

		if (r < 0 && subscribe && stub->itf->broadcasts[index].selective) {
			conn_error(c, h->id, r, false, "the server refused the subscription to %s.%s",
				   stub->itf->name, stub->itf->broadcasts[index].name);
			return;
		}
	}
	pthread_mutex_lock(&stub->lock);
	if (subscribe && !c->subscribed[index])
		stub->remote_subscribers[index]++;
	else if (!subscribe && c->subscribed[index])
		stub->remote_subscribers[index]--;
	c->subscribed[index] = subscribe;
	pthread_mutex_unlock(&stub->lock);
	pbus_proto_empty_encode(&b, subscribe ? PBUS_WIRE_BROADCAST_SUBSCRIBED : PBUS_WIRE_BROADCAST_UNSUBSCRIBED,
				h->id);
	conn_send_buf(c, &b);
}

static void handle_frame(struct stub_conn *c, const struct pbus_wire_header *h, const unsigned char *body,
			 size_t n)
{
	struct pbus_wire_buf b = {0};

	if (!c->connected && h->type != PBUS_WIRE_CONNECT) {
		conn_error(c, h->id, -EPROTO, true, "the first message must be CONNECT, not %s",
			   pbus_wire_type_name(h->type));
		return;
	}
	switch (h->type) {
	case PBUS_WIRE_CONNECT:
		if (c->connected)
			conn_error(c, h->id, -EPROTO, true, "CONNECT after the handshake");
		else
			handle_connect(c, h, body, n);
		break;
	case PBUS_WIRE_CALL:
		handle_call(c, h, body, n);
		break;
	case PBUS_WIRE_BROADCAST_SUBSCRIBE:
	case PBUS_WIRE_BROADCAST_UNSUBSCRIBE:
		handle_subscription(c, h, body, n);
		break;
	case PBUS_WIRE_PING:
		pbus_proto_bytes_encode(&b, PBUS_WIRE_PONG, h->id, body, n);
		conn_send_buf(c, &b);
		break;
	default:
		conn_error(c, h->id, -EPROTO, true, "%s is not a request to a method server",
			   pbus_wire_type_name(h->type));
	}
}

/* --- connections --------------------------------------------------------------- */

static void conn_free(struct stub_conn *c)
{
	pbus_frame_in_free(&c->in);
	pbus_wire_buf_free(&c->out);
	pthread_mutex_destroy(&c->out_lock);
	free(c->subscribed);
	free(c->caller.groups);
	free(c);
}

static void reap(struct loop_job *job)
{
	struct pbus_stub *stub = (struct pbus_stub *)((char *)job - offsetof(struct pbus_stub, reap_job));
	struct stub_conn *dead;

	pthread_mutex_lock(&stub->lock);
	dead = stub->dead;
	stub->dead = NULL;
	pthread_mutex_unlock(&stub->lock);
	while (dead) {
		struct stub_conn *next = dead->next;

		conn_free(dead);
		dead = next;
	}
}

/* Unlink @c and close it (loop thread); freed after this round. Its
 * subscriptions end, and the server hears of them. */
static void conn_close(struct stub_conn *c)
{
	struct pbus_stub *stub = c->stub;
	unsigned n = stub->itf->broadcast_count;

	pbus_loop_remove(stub->loop, &c->source);
	pbus_loop_timer_cancel(stub->loop, &c->timer);
	pthread_mutex_lock(&stub->lock);
	for (struct stub_conn **p = &stub->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	for (unsigned i = 0; i < n; i++)
		if (c->subscribed[i] == 1) {
			stub->remote_subscribers[i]--;
			c->subscribed[i] = 2; /* told below */
		}
	c->next = stub->dead;
	stub->dead = c;
	pthread_mutex_unlock(&stub->lock);
	for (unsigned i = 0; i < n; i++)
		if (c->subscribed[i] == 2) {
			c->subscribed[i] = 0;
			if (stub->on_subscription)
				stub->on_subscription(stub->server, &c->caller, i, false);
		}
	close(c->source.fd);
	c->source.fd = -1;
	pbus_loop_post(stub->loop, &stub->reap_job);
}

static void conn_ready(struct loop_source *source, uint32_t events)
{
	struct stub_conn *c = (struct stub_conn *)source;
	struct pbus_stub *stub = c->stub;
	char why[PBUS_PROTO_WHY_MAX];
	bool eof = false;

	if (events & EPOLLOUT) {
		bool ok;

		pthread_mutex_lock(&c->out_lock);
		ok = conn_flush_locked(c);
		conn_want_write_locked(c);
		pthread_mutex_unlock(&c->out_lock);
		if (!ok) {
			conn_close(c);
			return;
		}
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
		goto check_closing;
	for (int k = 0; k < STUB_READ_BUDGET && !c->closing; k++) {
		struct pbus_wire_header h;
		const unsigned char *body;
		ssize_t got;
		size_t room;
		int r;

		if (pbus_frame_in_room(&c->in, STUB_READ_CHUNK, STUB_READ_CHUNK, RPC_MAX_FRAME + STUB_READ_CHUNK) < 0)
			break;
		room = c->in.capacity - c->in.end;
		got = pbus_frame_in_recv(&c->in, c->source.fd);
		if (got == 0 || (got < 0 && got != -EAGAIN)) {
			eof = true;
		}
		while (!c->closing && (r = pbus_frame_in_next(&c->in, RPC_MAX_FRAME, &h, &body, why)) != 0) {
			if (r < 0) {
				conn_error(c, h.id, r, true, "%s", why);
				break;
			}
			handle_frame(c, &h, body, h.length - PBUS_WIRE_HEADER_SIZE);
		}
		/* A short read emptied the socket (epoll, level-triggered,
		 * says when there is more), unless the peer has closed: then
		 * read on to its end. */
		if (got <= 0 || ((size_t)got < room && !(events & (EPOLLRDHUP | EPOLLHUP))))
			break;
	}
	if (eof) {
		conn_close(c);
		return;
	}
	/* Before CONNECT the timer runs from the accept; after it, while a
	 * frame is half received. */
	if (c->connected && !c->closing) {
		if (c->in.end == c->in.start)
			pbus_loop_timer_cancel(stub->loop, &c->timer);
		else if (!c->timer.at_ns)
			pbus_loop_timer_set(stub->loop, &c->timer, pbus_monotonic_ns() + STUB_FRAME_TIMEOUT_NS);
	}
check_closing:
	if (c->closing) {
		pthread_mutex_lock(&c->out_lock);
		conn_flush_locked(c);
		pthread_mutex_unlock(&c->out_lock);
		conn_close(c);
	}
	(void)stub;
}

/* A connection that sent no CONNECT, or only part of a frame, within the
 * frame timeout: ERROR EPROTO and close (the loop thread). */
static void conn_timed_out(struct loop_timer *timer)
{
	struct stub_conn *c = (struct stub_conn *)((char *)timer - offsetof(struct stub_conn, timer));
	size_t have = c->in.end - c->in.start;

	if (c->closing || c->source.fd < 0)
		return;
	if (!c->connected)
		conn_error(c, 0, -EPROTO, true, "no CONNECT within %lld s", STUB_FRAME_TIMEOUT_NS / 1000000000LL);
	else
		conn_error(c, 0, -EPROTO, true, "truncated frame: %zu byte%s came within %lld s", have,
			   have == 1 ? "" : "s", STUB_FRAME_TIMEOUT_NS / 1000000000LL);
	pthread_mutex_lock(&c->out_lock);
	conn_flush_locked(c);
	pthread_mutex_unlock(&c->out_lock);
	conn_close(c);
}

/* Whether the connection @fd of @cred may be served (docs/methods.md §3.4):
 * at most STUB_MAX_CONNECTIONS, of which an unprivileged uid (not root,
 * not the server's own) has at most STUB_MAX_PER_USER and never one of
 * the last STUB_RESERVED. A refused one gets ERROR EUSERS (id 0) at once
 * and is closed here. */
static bool admit(struct pbus_stub *stub, int fd, const struct ucred *cred)
{
	bool privileged = cred->uid == 0 || cred->uid == geteuid();
	unsigned all = 0, mine = 0;
	char message[400] = "";
	struct pbus_wire_buf b = {0};

	pthread_mutex_lock(&stub->lock);
	for (struct stub_conn *c = stub->conns; c; c = c->next) {
		all++;
		if (c->caller.uid == cred->uid)
			mine++;
	}
	pthread_mutex_unlock(&stub->lock);
	if (all >= STUB_MAX_CONNECTIONS)
		snprintf(message, sizeof message, "too many connections to %s (at most %d)", stub->address,
			 STUB_MAX_CONNECTIONS);
	else if (!privileged && mine >= STUB_MAX_PER_USER)
		snprintf(message, sizeof message, "too many connections to %s for uid %u (at most %d)",
			 stub->address, (unsigned)cred->uid, STUB_MAX_PER_USER);
	else if (!privileged && all >= STUB_MAX_CONNECTIONS - STUB_RESERVED)
		snprintf(message, sizeof message,
			 "%s is full: the last %d connections are kept for root and the server's user",
			 stub->address, STUB_RESERVED);
	if (!*message)
		return true;
	pbus_proto_error_encode(&b, 0, -EUSERS, message);
	if (b.data)
		(void)!send(fd, b.data, b.size, MSG_DONTWAIT | MSG_NOSIGNAL);
	pbus_wire_buf_free(&b);
	close(fd);
	return false;
}

static void listen_ready(struct loop_source *source, uint32_t events)
{
	struct pbus_stub *stub = (struct pbus_stub *)((char *)source - offsetof(struct pbus_stub, listen_source));

	(void)events;
	for (int k = 0; k < 16; k++) {
		struct ucred cred;
		socklen_t len = sizeof cred;
		struct stub_conn *c;
		int fd = accept4(stub->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		c = calloc(1, sizeof *c);
		if (c)
			c->subscribed = calloc(stub->itf->broadcast_count + 1, 1);
		if (!c || !c->subscribed || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			if (c)
				free(c->subscribed);
			free(c);
			close(fd);
			continue;
		}
		if (!admit(stub, fd, &cred)) {
			free(c->subscribed);
			free(c);
			continue;
		}
		c->stub = stub;
		c->source = (struct loop_source){.fd = fd, .ready = conn_ready};
		c->timer.expired = conn_timed_out;
		c->caller = (struct pbus_caller){.id = rpc_next_caller_id(), .pid = cred.pid,
						 .uid = cred.uid, .gid = cred.gid, .arena = stub->arena};
		pbus_process_groups(cred.pid, &c->caller.groups, &c->caller.group_count);
		pthread_mutex_init(&c->out_lock, NULL);
		pthread_mutex_lock(&stub->lock);
		c->next = stub->conns;
		stub->conns = c;
		pthread_mutex_unlock(&stub->lock);
		if (pbus_loop_add(stub->loop, &c->source, EPOLLIN | EPOLLRDHUP) < 0)
			conn_close(c);
		else
			pbus_loop_timer_set(stub->loop, &c->timer, pbus_monotonic_ns() + STUB_FRAME_TIMEOUT_NS);
	}
}

/* --- the stub -------------------------------------------------------------------- */

static int open_listener(struct pbus_stub *stub)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len = sizeof sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	/* Autobind: the kernel picks a free abstract name. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	len -= (socklen_t)offsetof(struct sockaddr_un, sun_path);
	if (len < 2 || len - 1 > RPC_ENDPOINT_MAX) {
		close(fd);
		return -EINVAL;
	}
	memcpy(stub->endpoint, sa.sun_path + 1, len - 1);
	stub->endpoint[len - 1] = 0;
	stub->listen_fd = fd;
	return 0;
}

static int resolve_groups(struct pbus_stub *stub)
{
	unsigned n = stub->itf->method_count;

	stub->method_gids = calloc(n + 1, sizeof *stub->method_gids);
	if (!stub->method_gids)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const char *g = stub->itf->methods[i].callable_by;
		struct group gr, *found = NULL;
		char buf[4096];

		stub->method_gids[i] = (gid_t)-1;
		if (!g || !*g)
			continue;
		if (getgrnam_r(g, &gr, buf, sizeof buf, &found) == 0 && found)
			stub->method_gids[i] = found->gr_gid;
	}
	return 0;
}

static void stub_destroy(struct pbus_stub *stub)
{
	free(stub->method_gids);
	free(stub->remote_subscribers);
	pbus_rpc_arena_free(stub->arena);
	pbus_rpc_buf_release(&stub->reply);
	pthread_mutex_destroy(&stub->lock);
	pthread_mutex_destroy(&stub->call_lock);
	free(stub);
}

PBUS_API int pbus_stub_new(const char *address, const struct pbus_rpc_interface *itf,
			   pbus_stub_dispatch_fn dispatch, pbus_stub_subscription_fn on_subscription,
			   void *server, const struct pbus_rpc_options *options,
			   struct pbus_stub **ret_stub)
{
	struct pbus_rpc_options none = {0};
	char instance[RPC_INSTANCE_MAX + 1];
	struct pbus_stub *stub;
	int r;

	if (!options)
		options = &none;
	r = rpc_address_parse(address, instance, sizeof instance);
	if (r < 0)
		return r;
	stub = calloc(1, sizeof *stub);
	if (!stub)
		return -ENOMEM;
	snprintf(stub->address, sizeof stub->address, "%s", address);
	stub->itf = itf;
	stub->dispatch = dispatch;
	stub->on_subscription = on_subscription;
	stub->server = server;
	stub->loop = options->loop ? options->loop : pbus_loop_default();
	stub->listen_fd = -1;
	stub->refs = 1;
	stub->reap_job.run = reap;
	pthread_mutex_init(&stub->lock, NULL);
	rpc_mutex_init_recursive(&stub->call_lock);
	pbus_rpc_buf_init(&stub->reply);
	atomic_store(&stub->alive, true);
	stub->arena = pbus_rpc_arena_new();
	stub->remote_subscribers = calloc(itf->broadcast_count + 1, sizeof *stub->remote_subscribers);
	if (!stub->loop || !stub->arena || !stub->remote_subscribers) {
		stub_destroy(stub);
		return -ENOMEM;
	}
	r = resolve_groups(stub);
	if (r == 0)
		r = open_listener(stub);
	if (r == 0)
		r = registry_get(stub->loop, options->socket_dir, instance, &stub->registry);
	if (r == 0)
		r = registry_register(stub->registry, address, itf->major, itf->minor, stub->endpoint);
	if (r < 0) {
		if (stub->registry)
			registry_put(stub->registry);
		if (stub->listen_fd >= 0)
			close(stub->listen_fd);
		stub_destroy(stub);
		return r;
	}
	stub->registered = true;
	stub->listen_source = (struct loop_source){.fd = stub->listen_fd, .ready = listen_ready};
	pbus_loop_add(stub->loop, &stub->listen_source, EPOLLIN);
	pthread_mutex_lock(&pbus_rpc_local_lock);
	stub->next_local = local_stubs;
	local_stubs = stub;
	stub->in_table = true;
	stub->refs++; /* the table's */
	proxy_local_appeared(address, stub);
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	*ret_stub = stub;
	return 0;
}

PBUS_API void pbus_stub_free(struct pbus_stub *stub)
{
	struct local_sub *subs;

	if (!stub)
		return;
	pbus_loop_lock_dispatch(stub->loop);
	atomic_store(&stub->alive, false);
	pthread_mutex_lock(&pbus_rpc_local_lock);
	for (struct pbus_stub **p = &local_stubs; *p; p = &(*p)->next_local)
		if (*p == stub) {
			*p = stub->next_local;
			break;
		}
	/* In-process proxies let go (after their calls in flight). */
	proxy_local_gone(stub);
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	if (stub->registered)
		registry_unregister(stub->registry, stub->address);
	registry_put(stub->registry);
	pbus_loop_remove(stub->loop, &stub->listen_source);
	close(stub->listen_fd);
	while (stub->conns)
		conn_close(stub->conns);
	pbus_loop_unpost(stub->loop, &stub->reap_job);
	reap(&stub->reap_job);
	pthread_mutex_lock(&stub->lock);
	subs = stub->local_subs;
	stub->local_subs = NULL;
	pthread_mutex_unlock(&stub->lock);
	while (subs) {
		struct local_sub *next = subs->next;

		free(subs);
		subs = next;
	}
	pthread_mutex_lock(&pbus_rpc_local_lock);
	stub->in_table = false;
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	pbus_loop_unlock_dispatch(stub->loop);
	stub_local_put(stub); /* the table's */
	stub_local_put(stub); /* the creator's */
}

PBUS_API bool pbus_stub_has_remote_subscribers(struct pbus_stub *stub, unsigned broadcast)
{
	bool any;

	if (broadcast >= stub->itf->broadcast_count)
		return false;
	pthread_mutex_lock(&stub->lock);
	any = stub->remote_subscribers[broadcast] > 0;
	pthread_mutex_unlock(&stub->lock);
	return any;
}

static bool among(uint64_t id, const uint64_t *ids, size_t n)
{
	if (!ids)
		return true;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

PBUS_API int pbus_stub_broadcast(struct pbus_stub *stub, unsigned broadcast,
				 const struct pbus_rpc_buf *encoded, const void *local_args,
				 const uint64_t *receivers, size_t receiver_count)
{
	unsigned char head[PBUS_PROTO_CALL_HEAD];
	int count = 0;

	if (broadcast >= stub->itf->broadcast_count)
		return rpc_fail(-ENOENT, "no broadcast %u in %s", broadcast, stub->itf->name);
	if (encoded && encoded->error)
		return rpc_fail(encoded->error, "the arguments of %s.%s could not be encoded",
				stub->itf->name, stub->itf->broadcasts[broadcast].name);
	if (encoded && encoded->size + PBUS_PROTO_CALL_HEAD > RPC_MAX_FRAME)
		return rpc_fail(-EMSGSIZE, "broadcast %s.%s of %zu bytes is above %u", stub->itf->name,
				stub->itf->broadcasts[broadcast].name, encoded->size, RPC_MAX_FRAME);
	if (encoded)
		pbus_proto_call_head(head, PBUS_WIRE_BROADCAST, 0,
				     (uint32_t)(encoded->size + PBUS_PROTO_CALL_HEAD), (uint16_t)broadcast, 0);
	pthread_mutex_lock(&stub->lock);
	if (encoded)
		for (struct stub_conn *c = stub->conns; c; c = c->next) {
			if (!c->subscribed[broadcast] || !among(c->caller.id, receivers, receiver_count))
				continue;
			if (conn_send(c, head, sizeof head, encoded->data, encoded->size))
				count++;
			else
				c->dropped++;
		}
	if (local_args)
		for (struct local_sub *s = stub->local_subs; s; s = s->next) {
			if (s->broadcast != broadcast)
				continue;
			/* An in-process proxy's caller id is its local caller's. */
			if (receivers &&
			    !among(pbus_caller_id(pbus_proxy_local_caller(s->proxy)), receivers, receiver_count))
				continue;
			proxy_local_deliver(s->proxy, broadcast, local_args);
			count++;
		}
	pthread_mutex_unlock(&stub->lock);
	return count;
}

PBUS_API size_t pbus_stub_subscribers(struct pbus_stub *stub, unsigned broadcast, uint64_t *ids,
				      size_t capacity)
{
	size_t n = 0;

	if (broadcast >= stub->itf->broadcast_count)
		return 0;
	pthread_mutex_lock(&stub->lock);
	for (struct stub_conn *c = stub->conns; c; c = c->next)
		if (c->subscribed[broadcast]) {
			if (n < capacity)
				ids[n] = c->caller.id;
			n++;
		}
	for (struct local_sub *s = stub->local_subs; s; s = s->next)
		if (s->broadcast == broadcast) {
			if (n < capacity)
				ids[n] = pbus_caller_id(pbus_proxy_local_caller(s->proxy));
			n++;
		}
	pthread_mutex_unlock(&stub->lock);
	return n;
}
