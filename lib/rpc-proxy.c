/* SPDX-License-Identifier: MIT */
/*
 * rpc-proxy.c: proxies of Franca interfaces (struct pbus_proxy,
 * docs/methods.md §3): finding the server through pbusd, connecting to its
 * socket and shaking hands, calls from any number of threads, async calls,
 * broadcasts, availability events, reconnecting, and calling an
 * in-process server directly.
 *
 * One connection, many callers. A synchronous call sends its frame and
 * waits for the RETURN (or ERROR) with its id. Whoever waits first takes
 * the reader's role and reads the socket without the lock; every frame it
 * takes goes where it belongs: a waiting caller's reply is copied into its
 * call and the caller woken (a condition variable), an async completion or
 * a broadcast is queued for the loop thread. The loop thread reads the
 * socket too when nobody else does. So a lone caller's call is one write
 * and one blocking read, and no thread ever waits for another to read.
 *
 * Locks: proxy->lock guards the connection (descriptor, reader's role,
 * waiting calls, async calls, the event queue); the order is proxy->lock,
 * then a registry's. The registry's watch callback only records the news
 * (under svc_lock) and posts the reconnect job.
 *
 * In-process. While a server of the same address and interface lives in
 * this process (and no_inprocess is not set), proxy->local points at it
 * and the generated code calls the server's functions directly. A call
 * counts itself in local_inflight before it reads local; a server going
 * away clears local and then waits for local_inflight to drop to zero, so
 * no call can reach a freed server.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock-internal.h"
#include "rpc-internal.h"

#define PROXY_READ_CHUNK (16u * 1024)
#define NS_PER_MS INT64_C(1000000)

/* Queue entries that are not frames (never on the wire). */
#define EVENT_AVAILABLE 0x100u
#define EVENT_UNAVAILABLE 0x101u

void rpc_thread_arena_reset(void);
uint64_t rpc_next_caller_id(void);

/* A synchronous call or request waiting for its reply (on the caller's stack). */
struct waiting {
	uint32_t id;
	uint16_t reply_type; /* what a good reply is */
	bool done;
	int result;
	struct pbus_rpc_buf *reply; /* the RETURN's body goes here; NULL: dropped */
	char message[400];
	struct waiting *next;
};

struct async_call {
	struct loop_timer timer; /* first: the timer's expired() finds the call */
	struct pbus_proxy *proxy;
	uint32_t id;
	pbus_proxy_reply_fn fn;
	void (*user_fn)(void);
	void *userdata;
	int result;
	unsigned char *body;
	size_t length;
	bool completed;
	struct async_call *next;
};

struct pbus_proxy {
	char address[PBUS_RPC_ADDRESS_MAX + 1];
	const struct pbus_rpc_interface *itf;
	pbus_proxy_deliver_fn deliver;
	void *client;
	struct pbus_loop *loop;
	struct registry *registry;
	struct registry_watch watch;
	char name[PBUS_WIRE_NAME_MAX + 1];
	atomic_int timeout_ms;
	bool no_inprocess;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd; /* -1: not connected */
	bool connecting; /* a thread is connecting: the others wait */
	struct loop_source source;
	bool reading;
	int rcvtimeo_ms; /* what SO_RCVTIMEO is set to */
	struct pbus_frame_in in;
	int closed_code;          /* an ERROR about the connection (id 0): its code, or 0 */
	char closed_message[400]; /* and its message, for the calls that fail with it */
	uint32_t next_id;
	struct waiting *waiting;
	struct async_call *asyncs;
	unsigned char *wanted; /* per broadcast: subscribed by the application */
	uint32_t server_major, server_minor;
	struct pbus_wire_buf events, delivering; /* for the loop thread */
	struct loop_job events_job, reconnect_job;
	pbus_proxy_availability_fn avail_fn;
	void *avail_userdata;
	atomic_bool available;

	pthread_mutex_t svc_lock; /* the registry's news */
	struct rpc_service svc;
	bool svc_known;

	/* In-process. */
	struct pbus_stub *_Atomic local;
	struct pbus_stub *local_bound; /* = local, but cleared only once no call is in flight */
	atomic_uint local_inflight;
	struct pbus_caller local_caller;
	struct pbus_proxy *next_proxy; /* the process's proxies (pbus_rpc_local_lock) */

	struct pbus_rpc_arena *arena; /* loop thread: broadcasts, completions */
	bool freeing;
};

static struct pbus_proxy *all_proxies;

/* --- the text of failures ------------------------------------------------------- */

static __thread char last_error[256];

PBUS_API const char *pbus_rpc_last_error(void)
{
	return last_error;
}

int rpc_fail(int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	return error;
}

/* --- events for the loop thread ------------------------------------------------------ */

static void queue_event(struct pbus_proxy *p, unsigned type, const void *body, size_t n)
{
	size_t start = pbus_wire_begin(&p->events, type, 0);

	pbus_wire_bytes(&p->events, body, n);
	pbus_wire_end(&p->events, start);
	pbus_loop_post(p->loop, &p->events_job);
}

static void set_available_locked(struct pbus_proxy *p, bool available)
{
	if (atomic_load(&p->available) == available)
		return;
	atomic_store(&p->available, available);
	if (p->avail_fn)
		queue_event(p, available ? EVENT_AVAILABLE : EVENT_UNAVAILABLE, NULL, 0);
	pthread_cond_broadcast(&p->cond);
}

static void run_events(struct loop_job *job)
{
	struct pbus_proxy *p = (struct pbus_proxy *)((char *)job - offsetof(struct pbus_proxy, events_job));
	struct async_call *done = NULL, **a;
	struct pbus_wire_buf swap;
	size_t at = 0;

	pthread_mutex_lock(&p->lock);
	swap = p->delivering;
	p->delivering = p->events;
	p->events = swap;
	p->events.size = 0;
	for (a = &p->asyncs; *a;) {
		if ((*a)->completed) {
			struct async_call *c = *a;

			*a = c->next;
			c->next = done;
			done = c;
		} else {
			a = &(*a)->next;
		}
	}
	pthread_mutex_unlock(&p->lock);

	while (at + PBUS_WIRE_HEADER_SIZE <= p->delivering.size) {
		struct pbus_wire_header h;
		const unsigned char *f = p->delivering.data + at;
		const unsigned char *body = f + PBUS_WIRE_HEADER_SIZE;

		h.length = pbus_le_load32(f);
		h.type = (uint16_t)pbus_le_load(f + 4, 2);
		at += h.length;
		if (h.type == EVENT_AVAILABLE || h.type == EVENT_UNAVAILABLE) {
			if (p->avail_fn)
				p->avail_fn(p->client, h.type == EVENT_AVAILABLE, p->avail_userdata);
		} else if (h.type == PBUS_WIRE_BROADCAST) {
			struct pbus_proto_call m;
			struct pbus_rpc_reader rd;

			if (pbus_proto_call_decode(PBUS_WIRE_BROADCAST, body, h.length - PBUS_WIRE_HEADER_SIZE,
						   &m, NULL) < 0 || m.index >= p->itf->broadcast_count ||
			    !p->wanted[m.index])
				continue;
			pbus_rpc_arena_reset(p->arena);
			pbus_rpc_reader_init(&rd, m.args, m.args_length, p->arena);
			p->deliver(p->client, m.index, &rd, NULL);
		}
	}
	p->delivering.size = 0;
	/* Completions, oldest first. */
	{
		struct async_call *rev = NULL;

		while (done) {
			struct async_call *n = done->next;

			done->next = rev;
			rev = done;
			done = n;
		}
		done = rev;
	}
	while (done) {
		struct async_call *c = done;
		struct pbus_rpc_reader rd;

		done = c->next;
		pbus_loop_timer_cancel(p->loop, &c->timer);
		pbus_rpc_arena_reset(p->arena);
		pbus_rpc_reader_init(&rd, c->body, c->length, p->arena);
		c->fn(p->client, c->result, c->result == 0 ? &rd : NULL, c->user_fn, c->userdata);
		free(c->body);
		free(c);
	}
}

/* --- frames -------------------------------------------------------------------------- */

static struct waiting *find_waiting(struct pbus_proxy *p, uint32_t id)
{
	for (struct waiting *w = p->waiting; w; w = w->next)
		if (w->id == id)
			return w;
	return NULL;
}

static struct async_call *find_async(struct pbus_proxy *p, uint32_t id)
{
	for (struct async_call *c = p->asyncs; c; c = c->next)
		if (c->id == id && !c->completed)
			return c;
	return NULL;
}

/* A reply (RETURN, ERROR, or a request's reply) with @h->id. */
static void take_reply(struct pbus_proxy *p, const struct pbus_wire_header *h, const unsigned char *body,
		       size_t n)
{
	struct waiting *w = find_waiting(p, h->id);
	struct async_call *c = w ? NULL : find_async(p, h->id);
	struct pbus_proto_error err;
	int result = 0;

	if (!w && !c)
		return; /* a call that timed out: its late reply */
	if (h->type == PBUS_WIRE_ERROR) {
		if (pbus_proto_error_decode(body, n, &err, NULL) < 0) {
			result = -EPROTO;
			err.message.s = "malformed ERROR";
			err.message.length = 15;
		} else {
			result = err.code;
		}
		if (w)
			snprintf(w->message, sizeof w->message, "%.*s", (int)err.message.length, err.message.s);
	} else if (w && h->type != w->reply_type) {
		result = -EPROTO;
		snprintf(w->message, sizeof w->message, "a %s came for a request that wants %s",
			 pbus_wire_type_name(h->type), pbus_wire_type_name(w->reply_type));
	}
	if (w) {
		if (result == 0 && w->reply) {
			unsigned char *dst;

			w->reply->size = 0;
			dst = pbus_rpc_room(w->reply, n);
			if (!dst)
				result = -ENOMEM;
			else if (n)
				memcpy(dst, body, n);
		}
		w->result = result;
		w->done = true;
		return;
	}
	c->result = h->type == PBUS_WIRE_RETURN ? result : (result ? result : -EPROTO);
	if (c->result == 0 && n) {
		c->body = malloc(n);
		if (c->body) {
			memcpy(c->body, body, n);
			c->length = n;
		} else {
			c->result = -ENOMEM;
		}
	}
	c->completed = true;
	pbus_loop_post(p->loop, &p->events_job);
}

/* Hand out every whole frame received (lock held); -EPROTO if the stream is
 * malformed. */
static int process_input(struct pbus_proxy *p)
{
	struct pbus_wire_header h;
	const unsigned char *body;
	int r;

	while ((r = pbus_frame_in_next(&p->in, RPC_MAX_FRAME, &h, &body, NULL)) == 1) {
		size_t n = h.length - PBUS_WIRE_HEADER_SIZE;

		if (h.type == PBUS_WIRE_BROADCAST)
			queue_event(p, PBUS_WIRE_BROADCAST, body, n);
		else if (h.id != 0)
			take_reply(p, &h, body, n);
		else if (h.type == PBUS_WIRE_ERROR) {
			/* About the connection (a server that is full, a
			 * handshake too slow): it closes, and the calls
			 * waiting fail with its code and message. */
			struct pbus_proto_error err;

			if (pbus_proto_error_decode(body, n, &err, NULL) == 0 && err.code < 0) {
				p->closed_code = err.code;
				snprintf(p->closed_message, sizeof p->closed_message, "%.*s",
					 (int)err.message.length, err.message.s);
			}
			return -EPROTO;
		}
	}
	return r < 0 ? r : 0;
}

/* --- the connection ------------------------------------------------------------------- */

/* The connection is gone (lock held; nobody else reading: else
 * break_connection()): every waiting call fails with -ECONNRESET, the
 * server is unavailable (unless an in-process one serves). */
static void connection_lost(struct pbus_proxy *p)
{
	if (p->fd < 0)
		return;
	pbus_loop_remove(p->loop, &p->source);
	close(p->fd);
	p->fd = -1;
	p->in.start = p->in.end = 0;
	for (struct waiting *w = p->waiting; w; w = w->next)
		if (!w->done) {
			w->done = true;
			w->result = p->closed_code ? p->closed_code : -ECONNRESET;
			if (p->closed_code)
				snprintf(w->message, sizeof w->message, "%s", p->closed_message);
			else
				snprintf(w->message, sizeof w->message, "the server of %s went away", p->address);
		}
	for (struct async_call *c = p->asyncs; c; c = c->next)
		if (!c->completed) {
			c->completed = true;
			c->result = p->closed_code ? p->closed_code : -ECONNRESET;
		}
	p->closed_code = 0;
	pbus_loop_post(p->loop, &p->events_job);
	pthread_mutex_lock(&p->svc_lock);
	p->svc_known = false; /* look it up again */
	pthread_mutex_unlock(&p->svc_lock);
	/* Still available through an in-process server that replaced the socket. */
	if (!atomic_load(&p->local))
		set_available_locked(p, false);
	pthread_cond_broadcast(&p->cond);
}

/* End the connection from any thread (lock held): at once if nobody
 * reads it, else by shutting it down, so that the thread reading it sees
 * the end and calls connection_lost() itself (a descriptor is never
 * closed under a recv). */
static void break_connection(struct pbus_proxy *p)
{
	if (!p->reading)
		connection_lost(p);
	else if (p->fd >= 0)
		shutdown(p->fd, SHUT_RDWR);
}

static int set_rcvtimeo(struct pbus_proxy *p, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	if (ms == p->rcvtimeo_ms)
		return 0;
	if (ms <= 0)
		tv = (struct timeval){0, 1000};
	p->rcvtimeo_ms = ms;
	return setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ? -errno : 0;
}

/* Read once (lock NOT held; the caller has the reader's role): > 0 bytes,
 * 0 at the end of the stream, -EAGAIN at the timeout, -errno. */
static ssize_t read_blocking(struct pbus_proxy *p, int fd)
{
	ssize_t n;

	if (pbus_frame_in_room(&p->in, PROXY_READ_CHUNK, PROXY_READ_CHUNK, RPC_MAX_FRAME + PROXY_READ_CHUNK) < 0)
		return -ENOMEM;
	do
		n = recv(fd, p->in.data + p->in.end, p->in.capacity - p->in.end, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	p->in.end += (size_t)n;
	return n;
}

/* Send a whole frame (lock held): 0, or -errno (the connection is then
 * broken: the caller calls connection_lost or shuts it down). */
static int send_all(struct pbus_proxy *p, const unsigned char *data, size_t n)
{
	while (n) {
		ssize_t s = send(p->fd, data, n, MSG_NOSIGNAL);

		if (s < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += s;
		n -= (size_t)s;
	}
	return 0;
}

/* Wait for @w's reply until @deadline (lock held on entry and exit),
 * reading the socket when nobody else does. */
static void wait_reply(struct pbus_proxy *p, struct waiting *w, int64_t deadline)
{
	while (!w->done) {
		int64_t left = deadline - pbus_monotonic_ns();

		if (left <= 0)
			break;
		if (!p->reading && p->fd >= 0) {
			int fd = p->fd;
			ssize_t n;
			int r;

			p->reading = true;
			set_rcvtimeo(p, (int)((left + NS_PER_MS - 1) / NS_PER_MS));
			pthread_mutex_unlock(&p->lock);
			n = read_blocking(p, fd);
			pthread_mutex_lock(&p->lock);
			p->reading = false;
			if (n > 0) {
				r = process_input(p);
				if (r < 0) {
					snprintf(w->message, sizeof w->message, "malformed frame from the server of %s",
						 p->address);
					connection_lost(p);
				}
			} else if (n != -EAGAIN) {
				connection_lost(p);
			}
			pthread_cond_broadcast(&p->cond);
		} else if (p->fd < 0) {
			break;
		} else {
			struct timespec ts;
			int64_t at = pbus_realtime_ns() + left;

			ts.tv_sec = at / 1000000000;
			ts.tv_nsec = at % 1000000000;
			pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		}
	}
}

static void unlink_waiting(struct pbus_proxy *p, struct waiting *w)
{
	for (struct waiting **q = &p->waiting; *q; q = &(*q)->next)
		if (*q == w) {
			*q = w->next;
			return;
		}
}

static uint32_t new_id(struct pbus_proxy *p)
{
	if (++p->next_id == 0)
		p->next_id = 1;
	return p->next_id;
}

/* A request of the connection (SUBSCRIBE ...) sent and waited for (lock held). */
static int request(struct pbus_proxy *p, struct pbus_wire_buf *frame, uint32_t id, uint16_t reply_type)
{
	struct waiting w = {.id = id, .reply_type = reply_type};
	int64_t deadline = pbus_monotonic_ns() + (int64_t)atomic_load(&p->timeout_ms) * NS_PER_MS;
	int r;

	w.next = p->waiting;
	p->waiting = &w;
	r = send_all(p, frame->data, frame->size);
	if (r < 0) {
		unlink_waiting(p, &w);
		break_connection(p);
		return rpc_fail(-ECONNRESET, "the server of %s went away", p->address);
	}
	wait_reply(p, &w, deadline);
	unlink_waiting(p, &w);
	if (!w.done)
		return rpc_fail(-ETIMEDOUT, "no reply from the server of %s", p->address);
	if (w.result < 0)
		return rpc_fail(w.result, "%s", w.message);
	return 0;
}

static void source_ready(struct loop_source *source, uint32_t events);

/* Connect to the server that @svc describes, shake hands and subscribe
 * the wanted broadcasts again (lock held, not connected). */
static int connect_to(struct pbus_proxy *p, const struct rpc_service *svc)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(svc->endpoint);
	struct ucred cred;
	socklen_t len = sizeof cred;
	struct pbus_wire_buf b = {0};
	struct pbus_proto_connect m;
	struct waiting w = {0};
	int fd, r;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rpc_fail(-errno, "socket: %s", strerror(errno));
	memcpy(sa.sun_path + 1, svc->endpoint, n);
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0) {
		r = -errno;
		close(fd);
		return rpc_fail(r == -ECONNREFUSED ? -ENOTCONN : r, "cannot connect to the server of %s: %s",
				p->address, strerror(-r));
	}
	/* Nobody else may answer in the registered server's name. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid != svc->pid ||
	    cred.uid != svc->uid) {
		close(fd);
		return rpc_fail(-EPERM, "the socket of %s is not served by the registered pid %d (uid %u)",
				p->address, (int)svc->pid, (unsigned)svc->uid);
	}
	p->fd = fd;
	p->rcvtimeo_ms = -1;
	p->in.start = p->in.end = 0;
	m = (struct pbus_proto_connect){
		.min_version = RPC_PROTOCOL_VERSION, .max_version = RPC_PROTOCOL_VERSION,
		.interface = {p->itf->name, (uint32_t)strlen(p->itf->name)},
		.major = p->itf->major, .minor = p->itf->minor,
		.client_name = {p->name, (uint32_t)strlen(p->name)}};
	w.id = new_id(p);
	r = pbus_proto_connect_encode(&b, w.id, &m);
	if (r == 0) {
		struct pbus_rpc_buf reply;
		struct pbus_proto_connected c;

		pbus_rpc_buf_init(&reply);
		w.reply_type = PBUS_WIRE_CONNECTED;
		w.reply = &reply;
		w.next = p->waiting;
		p->waiting = &w;
		r = send_all(p, b.data, b.size);
		/* A server that refuses the connection (methods.md §3.4) sends
		 * its ERROR at once and closes, maybe before CONNECT could be
		 * sent: read on, for its reason, whether the send went through
		 * or not. */
		if (r == 0 || r == -EPIPE || r == -ECONNRESET) {
			wait_reply(p, &w, pbus_monotonic_ns() + (int64_t)atomic_load(&p->timeout_ms) * NS_PER_MS);
			r = !w.done ? rpc_fail(-ETIMEDOUT, "no CONNECTED from the server of %s", p->address)
			    : w.result < 0 ? rpc_fail(w.result, "%s", w.message)
			    : pbus_proto_connected_decode(reply.data, reply.size, &c, NULL) < 0
				    ? rpc_fail(-EPROTO, "malformed CONNECTED from the server of %s", p->address)
				    : 0;
			if (r == 0) {
				p->server_major = c.major;
				p->server_minor = c.minor;
			}
		}
		unlink_waiting(p, &w);
		pbus_rpc_buf_release(&reply);
	}
	pbus_wire_buf_free(&b);
	if (r == 0) {
		p->source = (struct loop_source){.fd = p->fd, .ready = source_ready};
		r = pbus_loop_add(p->loop, &p->source, EPOLLIN | EPOLLRDHUP);
	}
	for (unsigned i = 0; r == 0 && i < p->itf->broadcast_count; i++) {
		uint32_t id;

		if (!p->wanted[i])
			continue;
		id = new_id(p);
		pbus_proto_u16_encode(&b, PBUS_WIRE_BROADCAST_SUBSCRIBE, id, (uint16_t)i);
		r = request(p, &b, id, PBUS_WIRE_BROADCAST_SUBSCRIBED);
		pbus_wire_buf_free(&b);
		if (r == -EPERM || r == -ENOENT)
			r = 0; /* refused again: the others still count */
	}
	if (r < 0) {
		if (p->fd >= 0) {
			if (!p->source.removed && p->source.fd == p->fd)
				pbus_loop_remove(p->loop, &p->source);
			close(p->fd);
			p->fd = -1;
		}
		return r;
	}
	set_available_locked(p, true);
	return 0;
}

/* Whether connect_to() failed for want of the server @svc named (gone or
 * replaced since): worth a fresh lookup. */
static bool stale(int r)
{
	return r == -ENOTCONN || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOENT || r == -EPERM;
}

/* Connect if not connected (lock held): with the registry's news if it
 * names a server, else (or if that one is gone) a lookup. One thread
 * connects; the others wait for it. */
static int ensure_connected(struct pbus_proxy *p)
{
	int64_t deadline = pbus_monotonic_ns() + (int64_t)atomic_load(&p->timeout_ms) * NS_PER_MS;
	struct rpc_service svc;
	bool known;
	int r = -ENOTCONN;

	while (p->connecting) {
		struct timespec ts;
		int64_t at = pbus_realtime_ns() + (deadline - pbus_monotonic_ns());

		if (pbus_monotonic_ns() >= deadline)
			return rpc_fail(-ETIMEDOUT, "no connection to the server of %s in time", p->address);
		ts.tv_sec = at / 1000000000;
		ts.tv_nsec = at % 1000000000;
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	if (p->fd >= 0)
		return 0;
	p->connecting = true;
	pthread_mutex_lock(&p->svc_lock);
	known = p->svc_known;
	svc = p->svc;
	pthread_mutex_unlock(&p->svc_lock);
	if (known && svc.available)
		r = connect_to(p, &svc);
	if ((!known || !svc.available || stale(r)) && r != 0) {
		if (!p->registry)
			r = rpc_fail(-ENOTCONN, "no server of %s (no pbusd to ask)", p->address);
		else if ((r = registry_lookup(p->registry, p->address, &svc)) == 0)
			r = svc.available ? connect_to(p, &svc)
					  : rpc_fail(-ENOTCONN, "no server of %s is registered with pbusd",
						     p->address);
	}
	p->connecting = false;
	pthread_cond_broadcast(&p->cond);
	return r;
}

/* The loop thread: the socket is readable and nobody else reads it. */
static void source_ready(struct loop_source *source, uint32_t events)
{
	struct pbus_proxy *p = (struct pbus_proxy *)((char *)source - offsetof(struct pbus_proxy, source));

	pthread_mutex_lock(&p->lock);
	if (!p->reading && p->fd >= 0) {
		for (int k = 0; k < 16; k++) {
			size_t room;
			ssize_t n;

			if (pbus_frame_in_room(&p->in, PROXY_READ_CHUNK, PROXY_READ_CHUNK,
					       RPC_MAX_FRAME + PROXY_READ_CHUNK) < 0)
				break;
			room = p->in.capacity - p->in.end;
			n = pbus_frame_in_recv(&p->in, p->fd);
			if (n == -EAGAIN)
				break;
			if (n <= 0 || process_input(p) < 0) {
				connection_lost(p);
				break;
			}
			/* The socket is empty (level-triggered: epoll says when it
			 * is not), unless the server has closed: read on to its end. */
			if ((size_t)n < room && !(events & (EPOLLRDHUP | EPOLLHUP)))
				break;
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
}

/* --- the registry's news ----------------------------------------------------------------- */

static void service_changed(struct registry_watch *watch, const struct rpc_service *svc)
{
	struct pbus_proxy *p = (struct pbus_proxy *)((char *)watch - offsetof(struct pbus_proxy, watch));

	pthread_mutex_lock(&p->svc_lock);
	p->svc = *svc;
	p->svc_known = true;
	pthread_mutex_unlock(&p->svc_lock);
	pbus_loop_post(p->loop, &p->reconnect_job);
}

static void reconnect(struct loop_job *job)
{
	struct pbus_proxy *p = (struct pbus_proxy *)((char *)job - offsetof(struct pbus_proxy, reconnect_job));

	bool mine;

	if (atomic_load(&p->local))
		return;
	pthread_mutex_lock(&p->svc_lock);
	mine = p->svc_known && p->svc.available && p->svc.pid == getpid();
	pthread_mutex_unlock(&p->svc_lock);
	/* The loop thread never waits for another thread's connect, nor for a
	 * server of this process (which may be served by this very loop):
	 * those connect at the next call. */
	pthread_mutex_lock(&p->lock);
	if (p->fd < 0 && !p->freeing && !p->connecting && !mine)
		ensure_connected(p);
	pthread_mutex_unlock(&p->lock);
}

/* --- in-process ------------------------------------------------------------------------------ */

static void bind_local(struct pbus_proxy *p, struct pbus_stub *stub)
{
	p->local_bound = stub;
	atomic_store(&p->local, stub);
	pthread_mutex_lock(&p->lock);
	set_available_locked(p, true);
	pthread_mutex_unlock(&p->lock);
}

/* Called with pbus_rpc_local_lock held, as are the two below: the
 * process's proxies do not change meanwhile. (So a server function or a
 * broadcast handler must not create or free proxies or stubs.) */
void proxy_local_appeared(const char *address, struct pbus_stub *stub)
{
	for (struct pbus_proxy *p = all_proxies; p; p = p->next_proxy) {
		if (p->no_inprocess || atomic_load(&p->local) || strcmp(p->address, address) ||
		    !stub_local_ref_locked(stub, p->itf))
			continue;
		/* An in-process server wins over the socket. */
		pthread_mutex_lock(&p->lock);
		break_connection(p);
		pthread_mutex_unlock(&p->lock);
		bind_local(p, stub);
		for (unsigned b = 0; b < p->itf->broadcast_count; b++)
			if (p->wanted[b])
				stub_local_subscribe(stub, p, b, true);
	}
}

void proxy_local_gone(struct pbus_stub *stub)
{
	for (struct pbus_proxy *p = all_proxies; p; p = p->next_proxy) {
		if (atomic_load(&p->local) != stub)
			continue;
		atomic_store(&p->local, NULL);
		while (atomic_load(&p->local_inflight))
			sched_yield();
		p->local_bound = NULL;
		for (unsigned b = 0; b < p->itf->broadcast_count; b++)
			stub_local_subscribe(stub, p, b, false);
		stub_local_unref_locked(stub);
		pthread_mutex_lock(&p->lock);
		set_available_locked(p, false);
		pthread_mutex_unlock(&p->lock);
	}
}

void proxy_local_deliver(struct pbus_proxy *proxy, unsigned broadcast, const void *local_args)
{
	if (broadcast < proxy->itf->broadcast_count && proxy->wanted[broadcast])
		proxy->deliver(proxy->client, broadcast, NULL, local_args);
}

PBUS_API void *pbus_proxy_local_enter(struct pbus_proxy *p)
{
	struct pbus_stub *s;

	atomic_fetch_add(&p->local_inflight, 1);
	s = atomic_load(&p->local);
	if (!s) {
		atomic_fetch_sub(&p->local_inflight, 1);
		return NULL;
	}
	pthread_mutex_lock(stub_call_lock(s));
	return stub_server(s);
}

PBUS_API void pbus_proxy_local_leave(struct pbus_proxy *p)
{
	/* Still bound: a server going away waits for local_inflight. */
	pthread_mutex_unlock(stub_call_lock(p->local_bound));
	rpc_thread_arena_reset();
	atomic_fetch_sub(&p->local_inflight, 1);
}

PBUS_API const struct pbus_caller *pbus_proxy_local_caller(struct pbus_proxy *p)
{
	return &p->local_caller;
}

/* --- the public calls ---------------------------------------------------------------------------- */

PBUS_API int pbus_proxy_new(const char *address, const struct pbus_rpc_interface *itf,
			    pbus_proxy_deliver_fn deliver, void *client,
			    const struct pbus_rpc_options *options, struct pbus_proxy **ret_proxy)
{
	struct pbus_rpc_options none = {0};
	char instance[RPC_INSTANCE_MAX + 1];
	struct pbus_proxy *p;
	struct pbus_stub *local = NULL;
	int r;

	if (!options)
		options = &none;
	r = rpc_address_parse(address, instance, sizeof instance);
	if (r < 0)
		return r;
	p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	snprintf(p->address, sizeof p->address, "%s", address);
	p->itf = itf;
	p->deliver = deliver;
	p->client = client;
	p->loop = options->loop ? options->loop : pbus_loop_default();
	snprintf(p->name, sizeof p->name, "%s",
		 options->name ? options->name : program_invocation_short_name);
	atomic_store(&p->timeout_ms, options->timeout_ms ? (int)options->timeout_ms : RPC_TIMEOUT_DEFAULT_MS);
	p->no_inprocess = options->no_inprocess;
	p->fd = -1;
	p->source.fd = -1;
	p->source.removed = true;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->svc_lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->events_job.run = run_events;
	p->reconnect_job.run = reconnect;
	p->wanted = calloc(itf->broadcast_count + 1, 1);
	p->arena = pbus_rpc_arena_new();
	p->local_caller = (struct pbus_caller){.id = rpc_next_caller_id(), .pid = getpid(),
					       .uid = geteuid(), .gid = getegid()};
	snprintf(p->local_caller.name, sizeof p->local_caller.name, "%s", p->name);
	if (!p->loop || !p->wanted || !p->arena) {
		pbus_proxy_free(p);
		return -ENOMEM;
	}
	pthread_mutex_lock(&pbus_rpc_local_lock);
	p->next_proxy = all_proxies;
	all_proxies = p;
	if (!p->no_inprocess)
		local = stub_local_find_locked(address, itf);
	if (local)
		bind_local(p, local);
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	r = registry_get(p->loop, options->socket_dir, instance, &p->registry);
	if (r < 0 && !local) {
		pbus_proxy_free(p);
		return r;
	}
	if (r == 0) {
		snprintf(p->watch.address, sizeof p->watch.address, "%s", address);
		p->watch.changed = service_changed;
		registry_watch(p->registry, &p->watch);
	}
	if (!local) {
		pthread_mutex_lock(&p->lock);
		r = ensure_connected(p);
		pthread_mutex_unlock(&p->lock);
		if (r == -EPERM) {
			pbus_proxy_free(p);
			return r;
		}
	}
	*ret_proxy = p;
	return 0;
}

PBUS_API void pbus_proxy_free(struct pbus_proxy *p)
{
	struct pbus_stub *local;

	if (!p)
		return;
	if (p->loop)
		pbus_loop_lock_dispatch(p->loop);
	pthread_mutex_lock(&pbus_rpc_local_lock);
	for (struct pbus_proxy **q = &all_proxies; *q; q = &(*q)->next_proxy)
		if (*q == p) {
			*q = p->next_proxy;
			break;
		}
	local = atomic_exchange(&p->local, NULL);
	pthread_mutex_unlock(&pbus_rpc_local_lock);
	if (local) {
		while (atomic_load(&p->local_inflight))
			sched_yield();
		p->local_bound = NULL;
		for (unsigned b = 0; b < p->itf->broadcast_count; b++)
			stub_local_subscribe(local, p, b, false);
		stub_local_put(local);
	}
	if (p->registry) {
		if (p->watch.changed)
			registry_unwatch(p->registry, &p->watch);
		registry_put(p->registry);
	}
	pthread_mutex_lock(&p->lock);
	p->freeing = true;
	connection_lost(p);
	pthread_mutex_unlock(&p->lock);
	if (p->loop) {
		pbus_loop_unpost(p->loop, &p->events_job);
		pbus_loop_unpost(p->loop, &p->reconnect_job);
	}
	while (p->asyncs) {
		struct async_call *c = p->asyncs;

		p->asyncs = c->next;
		pbus_loop_timer_cancel(p->loop, &c->timer);
		free(c->body);
		free(c);
	}
	if (p->loop)
		pbus_loop_unlock_dispatch(p->loop);
	pbus_frame_in_free(&p->in);
	pbus_wire_buf_free(&p->events);
	pbus_wire_buf_free(&p->delivering);
	pbus_rpc_arena_free(p->arena);
	free(p->wanted);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->svc_lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

PBUS_API bool pbus_proxy_available(const struct pbus_proxy *p)
{
	return atomic_load(&p->available);
}

PBUS_API int pbus_proxy_wait_available(struct pbus_proxy *p, int timeout_ms)
{
	int64_t deadline = pbus_monotonic_ns() + (int64_t)timeout_ms * NS_PER_MS;

	while (!atomic_load(&p->available)) {
		int r;

		pthread_mutex_lock(&p->lock);
		r = ensure_connected(p);
		pthread_mutex_unlock(&p->lock);
		if (r == 0 || atomic_load(&p->available))
			return 0;
		if (timeout_ms >= 0 && pbus_monotonic_ns() >= deadline)
			return rpc_fail(-ETIMEDOUT, "no server of %s within %d ms", p->address, timeout_ms);
		usleep(10000);
	}
	return 0;
}

PBUS_API void pbus_proxy_on_availability(struct pbus_proxy *p, pbus_proxy_availability_fn fn,
					 void *userdata)
{
	pthread_mutex_lock(&p->lock);
	p->avail_fn = fn;
	p->avail_userdata = userdata;
	/* The state now, first. */
	if (fn)
		queue_event(p, atomic_load(&p->available) ? EVENT_AVAILABLE : EVENT_UNAVAILABLE, NULL, 0);
	pthread_mutex_unlock(&p->lock);
}

PBUS_API void pbus_proxy_server_version(const struct pbus_proxy *p, uint32_t *major, uint32_t *minor)
{
	struct pbus_stub *local = atomic_load(&((struct pbus_proxy *)p)->local);

	*major = local ? p->itf->major : p->server_major;
	*minor = local ? p->itf->minor : p->server_minor;
}

/* Check @method and the arguments' encoding before anything is sent. */
static int check_call(struct pbus_proxy *p, unsigned method, const struct pbus_rpc_call *call)
{
	if (method >= p->itf->method_count)
		return rpc_fail(-EINVAL, "%s has no method %u", p->itf->name, method);
	if (call->args.error)
		return rpc_fail(call->args.error, "the arguments of %s.%s could not be encoded (%s)",
				p->itf->name, p->itf->methods[method].name, strerror(-call->args.error));
	if (call->args.size > RPC_MAX_FRAME)
		return rpc_fail(-EMSGSIZE, "the arguments of %s.%s (%zu bytes) are above %u", p->itf->name,
				p->itf->methods[method].name, call->args.size, RPC_MAX_FRAME);
	return 0;
}

PBUS_API int pbus_proxy_call(struct pbus_proxy *p, unsigned method, struct pbus_rpc_call *call,
			     int timeout_ms)
{
	struct waiting w = {.reply_type = PBUS_WIRE_RETURN, .reply = &call->reply};
	int64_t deadline;
	int r = check_call(p, method, call);

	if (r < 0)
		return r;
	if (timeout_ms < 0)
		timeout_ms = atomic_load(&p->timeout_ms);
	deadline = pbus_monotonic_ns() + (int64_t)timeout_ms * NS_PER_MS;
	pthread_mutex_lock(&p->lock);
	r = ensure_connected(p);
	if (r < 0) {
		pthread_mutex_unlock(&p->lock);
		return r;
	}
	w.id = new_id(p);
	pbus_proto_call_head(call->args.data, PBUS_WIRE_CALL, w.id, (uint32_t)call->args.size,
			     (uint16_t)method, 0);
	w.next = p->waiting;
	p->waiting = &w;
	r = send_all(p, call->args.data, call->args.size);
	if (r < 0) {
		unlink_waiting(p, &w);
		break_connection(p);
		pthread_mutex_unlock(&p->lock);
		return rpc_fail(-ECONNRESET, "the server of %s went away", p->address);
	}
	wait_reply(p, &w, deadline);
	unlink_waiting(p, &w);
	pthread_mutex_unlock(&p->lock);
	if (!w.done)
		return rpc_fail(-ETIMEDOUT, "%s.%s: no reply within %d ms", p->itf->name,
				p->itf->methods[method].name, timeout_ms);
	if (w.result < 0)
		return rpc_fail(w.result, "%s", w.message);
	return 0;
}

PBUS_API int pbus_proxy_send(struct pbus_proxy *p, unsigned method, struct pbus_rpc_call *call)
{
	int r = check_call(p, method, call);

	if (r < 0)
		return r;
	pthread_mutex_lock(&p->lock);
	r = ensure_connected(p);
	if (r == 0) {
		pbus_proto_call_head(call->args.data, PBUS_WIRE_CALL, new_id(p), (uint32_t)call->args.size,
				     (uint16_t)method, PBUS_PROTO_CALL_NO_REPLY);
		r = send_all(p, call->args.data, call->args.size);
		if (r < 0) {
			break_connection(p);
			r = rpc_fail(-ECONNRESET, "the server of %s went away", p->address);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

static void async_expired(struct loop_timer *timer)
{
	struct async_call *c = (struct async_call *)timer;
	struct pbus_proxy *p = c->proxy;

	pthread_mutex_lock(&p->lock);
	if (!c->completed) {
		c->completed = true;
		c->result = -ETIMEDOUT;
		pbus_loop_post(p->loop, &p->events_job);
	}
	pthread_mutex_unlock(&p->lock);
}

PBUS_API int pbus_proxy_call_async(struct pbus_proxy *p, unsigned method,
				   struct pbus_rpc_call *call, int timeout_ms,
				   pbus_proxy_reply_fn reply_fn, void (*user_fn)(void), void *userdata)
{
	struct async_call *c;
	int r = check_call(p, method, call);

	if (r < 0)
		return r;
	if (timeout_ms < 0)
		timeout_ms = atomic_load(&p->timeout_ms);
	c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->proxy = p;
	c->fn = reply_fn;
	c->user_fn = user_fn;
	c->userdata = userdata;
	c->timer.expired = async_expired;
	pthread_mutex_lock(&p->lock);
	r = ensure_connected(p);
	if (r == 0) {
		c->id = new_id(p);
		pbus_proto_call_head(call->args.data, PBUS_WIRE_CALL, c->id, (uint32_t)call->args.size,
				     (uint16_t)method, 0);
		c->next = p->asyncs;
		p->asyncs = c;
		r = send_all(p, call->args.data, call->args.size);
		if (r < 0) {
			p->asyncs = c->next;
			break_connection(p);
			r = rpc_fail(-ECONNRESET, "the server of %s went away", p->address);
		} else {
			pbus_loop_timer_set(p->loop, &c->timer,
					    pbus_monotonic_ns() + (int64_t)timeout_ms * NS_PER_MS);
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		free(c);
	return r;
}

static int subscription(struct pbus_proxy *p, unsigned broadcast, bool subscribe)
{
	struct pbus_stub *local;
	struct pbus_wire_buf b = {0};
	int r = 0;

	if (broadcast >= p->itf->broadcast_count)
		return rpc_fail(-EINVAL, "%s has no broadcast %u", p->itf->name, broadcast);
	p->wanted[broadcast] = subscribe;
	atomic_fetch_add(&p->local_inflight, 1);
	local = atomic_load(&p->local);
	if (local)
		r = stub_local_subscribe(local, p, broadcast, subscribe);
	atomic_fetch_sub(&p->local_inflight, 1);
	if (local)
		return r;
	pthread_mutex_lock(&p->lock);
	if (p->fd >= 0 || subscribe) {
		r = ensure_connected(p);
		if (r == 0) {
			uint32_t id = new_id(p);

			pbus_proto_u16_encode(&b, subscribe ? PBUS_WIRE_BROADCAST_SUBSCRIBE
							    : PBUS_WIRE_BROADCAST_UNSUBSCRIBE,
					      id, (uint16_t)broadcast);
			r = request(p, &b, id,
				    subscribe ? PBUS_WIRE_BROADCAST_SUBSCRIBED : PBUS_WIRE_BROADCAST_UNSUBSCRIBED);
			pbus_wire_buf_free(&b);
		}
		if (r < 0 && subscribe && r != -ENOTCONN)
			p->wanted[broadcast] = false;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

PBUS_API int pbus_proxy_subscribe(struct pbus_proxy *p, unsigned broadcast)
{
	return subscription(p, broadcast, true);
}

PBUS_API int pbus_proxy_unsubscribe(struct pbus_proxy *p, unsigned broadcast)
{
	return subscription(p, broadcast, false);
}
