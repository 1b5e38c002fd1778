/* SPDX-License-Identifier: MIT */
/*
 * hislip.c: pbus-scpi's HiSLIP server (IVI-6.1; docs/scpi.md, "HiSLIP").
 * A HiSLIP session is two TCP connections to the same port: the
 * synchronous channel (Initialize, then Data/DataEnd program messages and
 * their responses) and the asynchronous channel (AsyncInitialize naming the
 * session, then status queries, device clear, locks, service requests).
 * Each session owns one struct scpi_session and runs its program messages
 * through scpi_execute(), as the raw socket does.
 *
 * Synchronized mode only (InitializeResponse and the device clear feature
 * bitmap say so): a program message runs when its DataEnd arrives, and its
 * response, if any query ran, goes back as Data.../DataEnd messages
 * carrying that DataEnd's MessageID. The RMT-delivered flag is tracked:
 * a new message arriving while a response is still unacknowledged is the
 * IEEE 488.2 "query interrupted" condition, queued as -410.
 *
 * Everything is non-blocking and bounded as on the raw socket: a
 * connection's input buffer is fixed, a program message is at most
 * --max-line bytes, a session whose responses pile up unread (on either
 * channel) is not read until they are, and nothing a client sends makes
 * the server wait. Output is only queued while a message is handled; the
 * sockets are written, and buffered input of sessions that were held back
 * is resumed, at the end of each event (pump()), so that closing a session
 * never happens under a caller that still uses it.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "hislip.h"
#include "pbus-scpi.h"

#define IN_SIZE 16384          /* a connection's receive buffer */
#define SMALL_MAX 256          /* the payload of any message but Data/DataEnd */
#define ASYNC_OUT_MAX 65536    /* unread asynchronous-channel output that stops reading */
#define CLIENT_MAX_DEFAULT (1u << 20) /* the client's maximum message size until it says */
#define CLIENT_MAX_FLOOR 64    /* smaller announcements are raised to this */
#define PROTOCOL_VERSION 0x0100u /* 1.0: major in the high byte */
#define STB_MAV 0x10u
#define STB_RQS 0x40u

enum role { ROLE_NEW, ROLE_SYNC, ROLE_ASYNC };

enum lock_result { LOCK_FAILURE = 0, LOCK_SUCCESS = 1, LOCK_SHARED_RELEASED = 2, LOCK_ERROR = 3 };

struct session;

struct conn {
	int fd;
	bool used;
	enum role role;
	struct session *session;
	char peer[64];
	unsigned char *in;
	size_t in_length;
	struct hislip_reader reader;
	struct hislip_header header; /* of the message being read */
	unsigned char small[SMALL_MAX];
	size_t small_length;
	bool skip;                   /* the current payload is dropped */
	unsigned char *out;
	size_t out_length, out_sent, out_capacity;
	struct timespec last;
};

struct session {
	bool used;
	uint16_t id;
	struct hislip_server *server;
	struct conn *sync, *async;
	struct scpi_session scpi;
	char *message;               /* the program message being gathered */
	size_t message_length;
	bool discarding;             /* until the next DataEnd: it was too long */
	struct scpi_response response;
	bool running;                /* a program message of s->message waits for a method */
	size_t run_offset;           /* where the next program message of s->message starts */
	uint32_t run_id;             /* the MessageID its response will carry */
	uint32_t last_id;            /* of the last Data, DataEnd or Trigger */
	bool rmt_expected;           /* a DataEnd was sent, not yet acknowledged */
	bool clearing;               /* AsyncDeviceClear seen, DeviceClearComplete not yet */
	bool last_mss, rqs;          /* service requests: MSS edge, RQS until polled */
	uint64_t client_max;         /* the largest message the client takes */
	bool shared;                 /* holds the shared lock */
	bool lock_waiting;           /* an AsyncLock request waits for its answer */
	char lock_name[SMALL_MAX + 1];
	struct timespec lock_deadline;
};

struct hislip_server {
	struct scpi_server *scpi;
	int epoll, listen_fd, timer_fd;
	uint64_t tag;
	unsigned port;
	struct hislip_options options;
	struct conn *conns;
	size_t conn_count;
	struct session *sessions;
	uint16_t next_id;
	struct session *exclusive;   /* holds the exclusive lock */
	char shared_name[SMALL_MAX + 1];
	size_t shared_count;
};

enum { TAG_LISTEN = 0, TAG_TIMER = 1, TAG_CONN = 2 };

static void session_close(struct hislip_server *h, struct session *s, const char *why);

/* --- output ---------------------------------------------------------------- */

static size_t pending(const struct conn *c)
{
	return c->out_length - c->out_sent;
}

/* Queue one message. Output is bounded by the callers: nobody reads a
 * session whose output is above its limit. */
static void queue(struct conn *c, uint8_t type, uint8_t control, uint32_t parameter,
		  const void *payload, size_t length)
{
	size_t need = c->out_length + HISLIP_HEADER_SIZE + length;
	if (need > c->out_capacity) {
		size_t cap = c->out_capacity ? c->out_capacity : 1024;
		while (cap < need)
			cap *= 2;
		unsigned char *out = realloc(c->out, cap);
		if (!out) {
			log_msg(LOG_WARNING, "hislip %s: out of memory for a %s of %zu bytes: dropped", c->peer,
				hislip_type_name(type), length);
			return;
		}
		c->out = out;
		c->out_capacity = cap;
	}
	struct hislip_header header = {.type = type, .control = control, .parameter = parameter, .length = length};
	hislip_header_encode(&header, c->out + c->out_length);
	if (length)
		memcpy(c->out + c->out_length + HISLIP_HEADER_SIZE, payload, length);
	c->out_length = need;
}

static void queue_error(struct conn *c, uint8_t type, uint8_t code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void queue_error(struct conn *c, uint8_t type, uint8_t code, const char *fmt, ...)
{
	char text[200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	log_msg(LOG_INFO, "hislip %s: %s %u: %s", c->peer, type == HISLIP_FATAL_ERROR ? "fatal error" : "error",
		code, text);
	queue(c, type, code, 0, text, (size_t)n);
}

/* Drop the queued messages not yet begun on the wire (device clear). */
static void drop_unsent(struct conn *c)
{
	size_t pos = 0;
	while (pos < c->out_length && pos < c->out_sent) {
		struct hislip_header h;
		hislip_header_decode(c->out + pos, &h);
		pos += HISLIP_HEADER_SIZE + (size_t)h.length;
	}
	c->out_length = pos;
	if (c->out_sent >= c->out_length)
		c->out_length = c->out_sent = 0;
}

/* --- connections ------------------------------------------------------------ */

static bool locked_out(const struct hislip_server *h, const struct session *s)
{
	if (h->exclusive && h->exclusive != s)
		return true;
	return h->shared_count && !s->shared && h->exclusive != s;
}

/* Whether a connection's input must wait (responses unread, or another
 * session holds the lock); a device clear in progress always drains. */
static bool blocked(const struct hislip_server *h, const struct conn *c)
{
	if (c->role == ROLE_ASYNC)
		return pending(c) >= ASYNC_OUT_MAX;
	if (c->role != ROLE_SYNC || !c->session)
		return false;
	const struct session *s = c->session;
	if (s->clearing)
		return false;
	if (pending(c) >= SCPI_RESPONSE_MAX || (s->async && pending(s->async) >= ASYNC_OUT_MAX))
		return true;
	if (s->running)
		return true; /* a message waits for a method: the next one waits too */
	return locked_out(h, s);
}

static void conn_update_events(struct hislip_server *h, struct conn *c)
{
	uint32_t events = EPOLLRDHUP;
	if (pending(c))
		events |= EPOLLOUT;
	if (!blocked(h, c) && c->in_length < IN_SIZE)
		events |= EPOLLIN;
	struct epoll_event ev = {.events = events, .data.u64 = h->tag + TAG_CONN + (uint64_t)(c - h->conns)};
	epoll_ctl(h->epoll, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_close(struct hislip_server *h, struct conn *c, const char *why)
{
	log_msg(LOG_INFO, "hislip %s: closed (%s)", c->peer, why);
	epoll_ctl(h->epoll, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
}

/* Close a connection and the session it belongs to, if any. */
static void conn_drop(struct hislip_server *h, struct conn *c, const char *why)
{
	if (c->session)
		session_close(h, c->session, why);
	else
		conn_close(h, c, why);
}

/* Send what is queued. false when the connection is gone. */
static bool conn_flush(struct hislip_server *h, struct conn *c)
{
	while (c->out_sent < c->out_length) {
		ssize_t n = send(c->fd, c->out + c->out_sent, c->out_length - c->out_sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_drop(h, c, strerror(errno));
			return false;
		}
		c->out_sent += (size_t)n;
	}
	if (c->out_sent == c->out_length) {
		c->out_length = c->out_sent = 0;
	} else if (c->out_sent >= 65536) {
		/* a client that never quite catches up: move the unsent frames to
		 * the front (the buffer always starts at a frame, drop_unsent()
		 * walks it), so the buffer stays as big as what is pending */
		size_t pos = 0;
		for (;;) {
			struct hislip_header hd;
			hislip_header_decode(c->out + pos, &hd);
			size_t next = pos + HISLIP_HEADER_SIZE + (size_t)hd.length;
			if (next > c->out_sent)
				break;
			pos = next;
		}
		memmove(c->out, c->out + pos, c->out_length - pos);
		c->out_length -= pos;
		c->out_sent -= pos;
	}
	return true;
}

/* A fatal error: say why, then close the session (or the lone connection). */
static void fatal(struct hislip_server *h, struct conn *c, uint8_t code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fatal(struct hislip_server *h, struct conn *c, uint8_t code, const char *fmt, ...)
{
	char text[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	queue_error(c, HISLIP_FATAL_ERROR, code, "%s", text);
	/* one try to deliver it; the socket buffer takes it unless the client
	 * has left responses unread, and then it is closed anyway */
	if (conn_flush(h, c))
		conn_drop(h, c, "fatal error");
}

/* --- sessions ---------------------------------------------------------------- */

static void status_changed(struct scpi_session *scpi, void *userdata);
static void session_resume(struct scpi_session *scpi, void *userdata);

static struct session *session_open(struct hislip_server *h, struct conn *c)
{
	struct session *s = NULL;
	for (size_t i = 0; i < h->options.max_sessions; i++)
		if (!h->sessions[i].used) {
			s = &h->sessions[i];
			break;
		}
	if (!s)
		return NULL;
	/* a session id not in use (at most max_sessions are) */
	for (;;) {
		uint16_t id = h->next_id++;
		bool taken = false;
		for (size_t i = 0; i < h->options.max_sessions && !taken; i++)
			taken = h->sessions[i].used && h->sessions[i].id == id;
		if (!taken) {
			s->id = id;
			break;
		}
	}
	s->message = malloc(h->options.max_message);
	if (!s->message || scpi_session_init(&s->scpi, h->scpi) < 0) {
		scpi_session_fini(&s->scpi, h->scpi);
		free(s->message);
		s->message = NULL;
		return NULL;
	}
	s->used = true;
	s->server = h;
	s->sync = c;
	s->last_id = HISLIP_FIRST_MESSAGE_ID - 2;
	s->client_max = CLIENT_MAX_DEFAULT;
	s->scpi.status_changed = status_changed;
	s->scpi.status_userdata = s;
	s->scpi.resume = session_resume;
	s->scpi.resume_userdata = s;
	return s;
}

static void locks_changed(struct hislip_server *h);

static void session_close(struct hislip_server *h, struct session *s, const char *why)
{
	log_msg(LOG_INFO, "hislip session %u: closed (%s)", s->id, why);
	bool held = h->exclusive == s || s->shared;
	if (h->exclusive == s)
		h->exclusive = NULL;
	if (s->shared && --h->shared_count == 0)
		h->shared_name[0] = 0;
	if (s->sync)
		conn_close(h, s->sync, why);
	if (s->async)
		conn_close(h, s->async, why);
	scpi_session_fini(&s->scpi, h->scpi);
	free(s->message);
	free(s->response.data);
	memset(s, 0, sizeof(*s));
	if (held)
		locks_changed(h);
}

/* A service request when MSS rises (IEEE 488.2 11.3.2: a new reason for
 * service); RQS then reads 1 in the next status query, which clears it. */
static void status_changed(struct scpi_session *scpi, void *userdata)
{
	struct session *s = userdata;
	uint8_t stb = scpi_session_stb(scpi);
	bool mss = (stb & STB_RQS) != 0;
	if (mss && !s->last_mss && s->async) {
		s->rqs = true;
		queue(s->async, HISLIP_ASYNC_SERVICE_REQUEST, stb | STB_RQS, 0, NULL, 0);
	}
	s->last_mss = mss;
}

/* --- locks (IVI-6.1 section 6.5: one exclusive lock, one shared lock by
 * name; a session locked out is not read on its synchronous channel) ---- */

static enum lock_result lock_try(struct hislip_server *h, struct session *s, const char *name)
{
	if (!name[0]) {
		if (h->exclusive == s)
			return LOCK_ERROR;
		if (h->exclusive || (h->shared_count && !s->shared))
			return LOCK_FAILURE;
		h->exclusive = s;
		return LOCK_SUCCESS;
	}
	if (s->shared || h->exclusive == s)
		return LOCK_ERROR;
	if (h->exclusive || (h->shared_count && strcmp(h->shared_name, name) != 0))
		return LOCK_FAILURE;
	if (!h->shared_count)
		snprintf(h->shared_name, sizeof(h->shared_name), "%s", name);
	h->shared_count++;
	s->shared = true;
	return LOCK_SUCCESS;
}

static enum lock_result lock_release(struct hislip_server *h, struct session *s)
{
	if (h->exclusive == s) {
		h->exclusive = NULL;
		return LOCK_SUCCESS;
	}
	if (s->shared) {
		s->shared = false;
		if (--h->shared_count == 0)
			h->shared_name[0] = 0;
		return LOCK_SHARED_RELEASED;
	}
	return LOCK_ERROR;
}

static long ms_until(const struct timespec *deadline, const struct timespec *now)
{
	return (long)(deadline->tv_sec - now->tv_sec) * 1000 + (deadline->tv_nsec - now->tv_nsec) / 1000000;
}

/* Arm the timer for the earliest waiting lock request (or disarm it). */
static void timer_arm(struct hislip_server *h)
{
	struct itimerspec its = {0};
	const struct timespec *first = NULL;
	for (size_t i = 0; i < h->options.max_sessions; i++) {
		const struct session *s = &h->sessions[i];
		if (s->used && s->lock_waiting &&
		    (!first || s->lock_deadline.tv_sec < first->tv_sec ||
		     (s->lock_deadline.tv_sec == first->tv_sec && s->lock_deadline.tv_nsec < first->tv_nsec)))
			first = &s->lock_deadline;
	}
	if (first) {
		its.it_value = *first;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(h->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The lock state changed: grant what waits and can be granted now. */
static void locks_changed(struct hislip_server *h)
{
	for (size_t i = 0; i < h->options.max_sessions; i++) {
		struct session *s = &h->sessions[i];
		if (!s->used || !s->lock_waiting)
			continue;
		enum lock_result r = lock_try(h, s, s->lock_name);
		if (r != LOCK_FAILURE) {
			s->lock_waiting = false;
			queue(s->async, HISLIP_ASYNC_LOCK_RESPONSE, (uint8_t)r, 0, NULL, 0);
		}
	}
	timer_arm(h);
}

static void lock_timeouts(struct hislip_server *h)
{
	uint64_t expirations;
	if (read(h->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_msg(LOG_WARNING, "hislip lock timer: %s", strerror(errno));
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < h->options.max_sessions; i++) {
		struct session *s = &h->sessions[i];
		if (s->used && s->lock_waiting && ms_until(&s->lock_deadline, &now) <= 0) {
			s->lock_waiting = false;
			queue(s->async, HISLIP_ASYNC_LOCK_RESPONSE, LOCK_FAILURE, 0, NULL, 0);
		}
	}
	timer_arm(h);
}

static void async_lock(struct hislip_server *h, struct session *s, const struct hislip_header *m,
		       const unsigned char *payload, size_t length)
{
	struct conn *c = s->async;
	if (m->control == 0) {
		enum lock_result r = lock_release(h, s);
		queue(c, HISLIP_ASYNC_LOCK_RESPONSE, (uint8_t)r, 0, NULL, 0);
		if (r != LOCK_ERROR)
			locks_changed(h);
		return;
	}
	if (m->control != 1) {
		queue_error(c, HISLIP_ERROR, HISLIP_ERROR_UNRECOGNIZED_CONTROL,
			    "AsyncLock control code %u: 0 releases, 1 requests", m->control);
		return;
	}
	if (s->lock_waiting || memchr(payload, 0, length)) {
		queue(c, HISLIP_ASYNC_LOCK_RESPONSE, LOCK_ERROR, 0, NULL, 0);
		return;
	}
	memcpy(s->lock_name, payload, length);
	s->lock_name[length] = 0;
	enum lock_result r = lock_try(h, s, s->lock_name);
	if (r == LOCK_FAILURE && m->parameter > 0) {
		/* wait up to the request's timeout (milliseconds) */
		s->lock_waiting = true;
		clock_gettime(CLOCK_MONOTONIC, &s->lock_deadline);
		s->lock_deadline.tv_sec += m->parameter / 1000;
		s->lock_deadline.tv_nsec += (long)(m->parameter % 1000) * 1000000;
		if (s->lock_deadline.tv_nsec >= 1000000000) {
			s->lock_deadline.tv_sec++;
			s->lock_deadline.tv_nsec -= 1000000000;
		}
		timer_arm(h);
		return;
	}
	queue(c, HISLIP_ASYNC_LOCK_RESPONSE, (uint8_t)r, 0, NULL, 0);
}

/* --- the synchronous channel -------------------------------------------------- */

/* Send a response as Data messages no larger than the client takes, the
 * last one DataEnd, all carrying @id. */
static void send_response(struct session *s, uint32_t id, const char *data, size_t length)
{
	size_t chunk = (size_t)(s->client_max - HISLIP_HEADER_SIZE);
	for (;;) {
		size_t n = length < chunk ? length : chunk;
		bool end = n == length;
		queue(s->sync, end ? HISLIP_DATA_END : HISLIP_DATA, 0, id, data, n);
		if (end)
			break;
		data += n;
		length -= n;
	}
	s->rmt_expected = true;
}

static void notify_status(struct session *s)
{
	if (s->scpi.status_changed)
		s->scpi.status_changed(&s->scpi, s->scpi.status_userdata);
}

/* Run the program messages of s->message from s->run_offset on: NL inside
 * it ends a message as on the raw socket, END ends the last one. When one
 * waits for a method, the session stays `running` (its synchronous channel
 * is not read) until session_resume() goes on from there. */
static void run_messages(struct hislip_server *h, struct session *s)
{
	struct scpi_response *out = &s->response;
	while (s->run_offset < s->message_length) {
		const char *m = s->message + s->run_offset;
		size_t left = s->message_length - s->run_offset;
		ssize_t n = pbus_scpi_message_length(m, left, h->options.max_message);
		size_t len = n > 0 ? (size_t)n : left;
		enum scpi_exec_result r = scpi_execute(h->scpi, &s->scpi, m, len, out);
		s->run_offset += len;
		notify_status(s);
		if (r == SCPI_EXEC_WAITING) {
			s->running = true;
			return;
		}
	}
	s->running = false;
	s->message_length = 0;
	s->run_offset = 0;
	if (out->length)
		send_response(s, s->run_id, out->data, out->length);
}

/* A DataEnd: its program message(s) run, the response carries @id. */
static void run_message(struct hislip_server *h, struct session *s, uint32_t id)
{
	s->response.length = 0;
	s->response.overflow = false;
	s->run_offset = 0;
	s->run_id = id;
	run_messages(h, s);
}

static void pump(struct hislip_server *h);

/* The session's waiting message can go on (from the method loop). */
static void session_resume(struct scpi_session *scpi, void *userdata)
{
	struct session *s = userdata;
	struct hislip_server *h = s->server;
	if (!s->running)
		return;
	enum scpi_exec_result r = scpi_resume(h->scpi, scpi, &s->response);
	notify_status(s);
	if (r == SCPI_EXEC_DONE)
		run_messages(h, s);
	pump(h);
}

/* The bookkeeping of every Data, DataEnd and Trigger (IVI-6.1 3.1.1). */
static void sync_message_arrived(struct session *s, const struct hislip_header *m)
{
	bool delivered = (m->control & HISLIP_RMT_DELIVERED) != 0;
	if (s->rmt_expected && !delivered)
		scpi_session_error(&s->scpi, -410, "a new message arrived before the response was read");
	s->rmt_expected = false;
	s->last_id = m->parameter;
}

static void device_clear_complete(struct session *s, const struct hislip_header *m)
{
	/* IEEE 488.2 5.8 device clear: input and output emptied, the parser
	 * ready for a new message; the status byte and the error queue stay. */
	queue(s->sync, HISLIP_DEVICE_CLEAR_ACKNOWLEDGE, 0, 0, NULL, 0); /* synchronized, no encryption */
	(void)m;
	s->clearing = false;
	s->message_length = 0;
	s->discarding = false;
	s->rmt_expected = false;
	s->last_id = HISLIP_FIRST_MESSAGE_ID - 2;
	log_msg(LOG_DEBUG, "hislip session %u: device clear", s->id);
}

/* --- the asynchronous channel ------------------------------------------------ */

static void async_status_query(struct session *s, const struct hislip_header *m)
{
	bool delivered = (m->control & HISLIP_RMT_DELIVERED) != 0;
	/* MAV (IVI-6.1 6.14): a response to the message the client names is
	 * sent and not yet acknowledged */
	bool mav = m->parameter == s->last_id && !delivered && s->rmt_expected;
	if (delivered)
		s->rmt_expected = false;
	uint8_t stb = (uint8_t)(scpi_session_stb(&s->scpi) & ~(STB_RQS | STB_MAV));
	if (mav)
		stb |= STB_MAV;
	if (s->rqs)
		stb |= STB_RQS;
	s->rqs = false;
	queue(s->async, HISLIP_ASYNC_STATUS_RESPONSE, stb, 0, NULL, 0);
}

static void async_device_clear(struct session *s)
{
	s->clearing = true;
	if (s->running) {
		/* the waiting message is dropped; its calls stay pending */
		scpi_session_clear(&s->scpi);
		s->running = false;
		s->run_offset = 0;
	}
	s->message_length = 0;
	s->discarding = false;
	if (s->sync)
		drop_unsent(s->sync);
	queue(s->async, HISLIP_ASYNC_DEVICE_CLEAR_ACKNOWLEDGE, 0, 0, NULL, 0);
}

static void async_maximum_message_size(struct hislip_server *h, struct session *s,
				       const unsigned char *p, size_t length)
{
	if (length != 8) {
		queue_error(s->async, HISLIP_ERROR, HISLIP_ERROR_UNIDENTIFIED,
			    "AsyncMaximumMessageSize carries 8 bytes, not %zu", length);
		return;
	}
	uint64_t size = 0;
	for (size_t i = 0; i < 8; i++)
		size = size << 8 | p[i];
	s->client_max = size < CLIENT_MAX_FLOOR ? CLIENT_MAX_FLOOR : size;
	uint64_t mine = (uint64_t)h->options.max_message + HISLIP_HEADER_SIZE;
	unsigned char out[8];
	for (size_t i = 0; i < 8; i++)
		out[i] = (unsigned char)(mine >> (56 - 8 * i));
	queue(s->async, HISLIP_ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE, 0, 0, out, sizeof(out));
}

static void async_lock_info(struct hislip_server *h, struct session *s)
{
	uint32_t holders = (uint32_t)h->shared_count;
	if (h->exclusive && !h->exclusive->shared)
		holders++;
	queue(s->async, HISLIP_ASYNC_LOCK_INFO_RESPONSE, h->exclusive ? 1 : 0, holders, NULL, 0);
}

/* --- initialization -------------------------------------------------------------- */

static void initialize(struct hislip_server *h, struct conn *c, const struct hislip_header *m)
{
	size_t n = c->small_length;
	if (!(n == 0 || (n == 7 && memcmp(c->small, "hislip0", 7) == 0))) {
		fatal(h, c, HISLIP_FATAL_BAD_INITIALIZATION,
		      "unknown sub-address '%.*s': this instrument is hislip0", (int)n, (const char *)c->small);
		return;
	}
	struct session *s = session_open(h, c);
	if (!s) {
		fatal(h, c, HISLIP_FATAL_TOO_MANY_CLIENTS, "%zu HiSLIP sessions already (--max-clients)",
		      h->options.max_sessions);
		return;
	}
	c->role = ROLE_SYNC;
	c->session = s;
	uint32_t version = m->parameter >> 16;
	if (version > PROTOCOL_VERSION)
		version = PROTOCOL_VERSION;
	/* control 0: the server prefers synchronized mode */
	queue(c, HISLIP_INITIALIZE_RESPONSE, 0, version << 16 | s->id, NULL, 0);
	log_msg(LOG_INFO, "hislip %s: session %u opened (client version %u.%u)", c->peer, s->id,
		m->parameter >> 24, (m->parameter >> 16) & 0xff);
}

static void async_initialize(struct hislip_server *h, struct conn *c, const struct hislip_header *m)
{
	uint16_t id = (uint16_t)m->parameter;
	struct session *s = NULL;
	for (size_t i = 0; i < h->options.max_sessions; i++)
		if (h->sessions[i].used && h->sessions[i].id == id && !h->sessions[i].async)
			s = &h->sessions[i];
	if (!s || m->parameter > 0xffff) {
		fatal(h, c, HISLIP_FATAL_BAD_INITIALIZATION,
		      "AsyncInitialize for session %u: no such session waits for its asynchronous channel",
		      m->parameter);
		return;
	}
	c->role = ROLE_ASYNC;
	c->session = s;
	s->async = c;
	/* control 0: no secure connection; parameter: vendor ID (none assigned) */
	queue(c, HISLIP_ASYNC_INITIALIZE_RESPONSE, 0, 0, NULL, 0);
	log_msg(LOG_INFO, "hislip %s: session %u asynchronous channel", c->peer, s->id);
}

/* --- messages ------------------------------------------------------------------- */

static bool is_data(uint8_t type)
{
	return type == HISLIP_DATA || type == HISLIP_DATA_END;
}

/* A header arrived: decide where its payload goes. false when the
 * connection is gone. */
static bool message_begin(struct hislip_server *h, struct conn *c)
{
	const struct hislip_header *m = &c->header;
	struct session *s = c->session;
	c->small_length = 0;
	c->skip = false;
	if (c->role == ROLE_NEW && m->type != HISLIP_INITIALIZE && m->type != HISLIP_ASYNC_INITIALIZE) {
		fatal(h, c, HISLIP_FATAL_BAD_INITIALIZATION,
		      "%s (type %u) before Initialize or AsyncInitialize", hislip_type_name(m->type), m->type);
		return false;
	}
	bool program = c->role == ROLE_SYNC && is_data(m->type);
	uint64_t limit = program ? h->options.max_message : SMALL_MAX;
	if (m->length > limit) {
		queue_error(c, HISLIP_ERROR, HISLIP_ERROR_TOO_LARGE, "a %s of %llu bytes; at most %llu",
			    hislip_type_name(m->type), (unsigned long long)m->length, (unsigned long long)limit);
		c->skip = true;
		if (program && !s->clearing) {
			scpi_session_error(&s->scpi, -363, "a HiSLIP message of %llu bytes was discarded",
					   (unsigned long long)m->length);
			s->message_length = 0;
			s->discarding = m->type == HISLIP_DATA;
			notify_status(s);
		}
		return true;
	}
	if (program) {
		if (s->clearing || s->discarding) {
			c->skip = true;
		} else if (s->message_length + m->length > h->options.max_message) {
			scpi_session_error(&s->scpi, -363, "a program message longer than %zu bytes was discarded",
					   h->options.max_message);
			s->message_length = 0;
			s->discarding = m->type == HISLIP_DATA;
			c->skip = true;
			notify_status(s);
		}
	}
	return true;
}

static void message_payload(struct conn *c, const uint8_t *data, size_t length)
{
	if (c->skip)
		return;
	if (c->role == ROLE_SYNC && is_data(c->header.type)) {
		struct session *s = c->session;
		memcpy(s->message + s->message_length, data, length);
		s->message_length += length;
		return;
	}
	memcpy(c->small + c->small_length, data, length);
	c->small_length += length;
}

/* A whole message arrived. false when the connection is gone. */
static bool message_end(struct hislip_server *h, struct conn *c)
{
	const struct hislip_header *m = &c->header;
	struct session *s = c->session;
	uint8_t type = m->type;
	if (c->skip && !(c->role == ROLE_SYNC && is_data(type)))
		return true; /* refused (too large) */
	if (c->role == ROLE_NEW) {
		if (type == HISLIP_INITIALIZE)
			initialize(h, c, m);
		else
			async_initialize(h, c, m);
		return c->used;
	}
	switch (type) {
	case HISLIP_INITIALIZE:
	case HISLIP_ASYNC_INITIALIZE:
		fatal(h, c, HISLIP_FATAL_BAD_INITIALIZATION, "%s on an initialized channel",
		      hislip_type_name(type));
		return false;
	case HISLIP_FATAL_ERROR:
		log_msg(LOG_INFO, "hislip %s: the client's fatal error %u: %.*s", c->peer, m->control,
			(int)c->small_length, (const char *)c->small);
		conn_drop(h, c, "the client's fatal error");
		return false;
	case HISLIP_ERROR:
		log_msg(LOG_INFO, "hislip %s: the client's error %u: %.*s", c->peer, m->control,
			(int)c->small_length, (const char *)c->small);
		return true;
	}
	if (type >= HISLIP_VENDOR_FIRST) {
		queue_error(c, HISLIP_ERROR, HISLIP_ERROR_UNRECOGNIZED_VENDOR, "vendor-defined message %u", type);
		return true;
	}
	if (c->role == ROLE_SYNC) {
		if (type != HISLIP_DATA && type != HISLIP_DATA_END && type != HISLIP_TRIGGER &&
		    type != HISLIP_DEVICE_CLEAR_COMPLETE) {
			queue_error(c, HISLIP_ERROR, HISLIP_ERROR_UNRECOGNIZED_TYPE,
				    "%s (type %u) on the synchronous channel", hislip_type_name(type), type);
			return true;
		}
		if (!s->async) {
			fatal(h, c, HISLIP_FATAL_NOT_INITIALIZED, "%s before the asynchronous channel is initialized",
			      hislip_type_name(type));
			return false;
		}
		if (type == HISLIP_DEVICE_CLEAR_COMPLETE) {
			device_clear_complete(s, m);
			return true;
		}
		if (s->clearing)
			return true; /* discarded until DeviceClearComplete */
		sync_message_arrived(s, m);
		if (type == HISLIP_TRIGGER) {
			/* the device trigger (GET) is *TRG, with *TRG's answer */
			s->response.length = 0;
			scpi_execute(h->scpi, &s->scpi, "*TRG\n", 5, &s->response);
			notify_status(s);
			if (s->response.length)
				send_response(s, m->parameter, s->response.data, s->response.length);
		} else if (type == HISLIP_DATA_END) {
			if (s->discarding) {
				s->discarding = false;
				s->message_length = 0;
			} else {
				run_message(h, s, m->parameter);
			}
		}
		return true;
	}
	/* the asynchronous channel */
	switch (type) {
	case HISLIP_ASYNC_LOCK:
		async_lock(h, s, m, c->small, c->small_length);
		break;
	case HISLIP_ASYNC_LOCK_INFO:
		async_lock_info(h, s);
		break;
	case HISLIP_ASYNC_STATUS_QUERY:
		async_status_query(s, m);
		break;
	case HISLIP_ASYNC_DEVICE_CLEAR:
		async_device_clear(s);
		break;
	case HISLIP_ASYNC_MAXIMUM_MESSAGE_SIZE:
		async_maximum_message_size(h, s, c->small, c->small_length);
		break;
	case HISLIP_ASYNC_REMOTE_LOCAL_CONTROL:
		/* no front panel: every remote/local state is accepted and changes nothing */
		if (m->control > 6)
			queue_error(c, HISLIP_ERROR, HISLIP_ERROR_UNRECOGNIZED_CONTROL,
				    "AsyncRemoteLocalControl control code %u: 0 to 6", m->control);
		else
			queue(c, HISLIP_ASYNC_REMOTE_LOCAL_RESPONSE, 0, 0, NULL, 0);
		break;
	default:
		queue_error(c, HISLIP_ERROR, HISLIP_ERROR_UNRECOGNIZED_TYPE,
			    "%s (type %u) on the asynchronous channel", hislip_type_name(type), type);
	}
	return true;
}

/* Handle the buffered input as far as it goes. false when the connection
 * is gone. */
static bool conn_process(struct hislip_server *h, struct conn *c)
{
	size_t off = 0;
	bool alive = true;
	while (alive && !blocked(h, c)) {
		struct hislip_read r;
		off += hislip_reader_next(&c->reader, c->in + off, c->in_length - off, &r);
		if (r.event == HISLIP_READ_NEED_MORE)
			break;
		switch (r.event) {
		case HISLIP_READ_BAD_PROLOGUE:
			fatal(h, c, HISLIP_FATAL_BAD_HEADER, "a message header not starting with \"HS\"");
			return false;
		case HISLIP_READ_HEADER:
			c->header = c->reader.header;
			alive = message_begin(h, c);
			break;
		case HISLIP_READ_PAYLOAD:
			message_payload(c, r.data, r.length);
			break;
		case HISLIP_READ_END:
			alive = message_end(h, c);
			break;
		default:
			break;
		}
	}
	if (!alive)
		return false;
	memmove(c->in, c->in + off, c->in_length - off);
	c->in_length -= off;
	return true;
}

static void conn_readable(struct hislip_server *h, struct conn *c, uint32_t events)
{
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	if (c->session) {
		/* the session is alive as long as either channel is */
		struct conn *other = c->session->sync == c ? c->session->async : c->session->sync;
		if (other)
			other->last = c->last;
	}
	while (!blocked(h, c) && c->in_length < IN_SIZE) {
		ssize_t n = recv(c->fd, c->in + c->in_length, IN_SIZE - c->in_length, MSG_DONTWAIT);
		if (n == 0) {
			bool mid = c->in_length || c->reader.in_message || c->reader.head_have ||
				   (c->session && c->session->message_length);
			conn_drop(h, c, mid ? "disconnected in the middle of a message" : "disconnected");
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_drop(h, c, strerror(errno));
			return;
		}
		c->in_length += (size_t)n;
		if (!conn_process(h, c))
			return;
	}
	if ((events & EPOLLRDHUP) && blocked(h, c))
		conn_drop(h, c, "disconnected while held back");
}

static void accept_clients(struct hislip_server *h)
{
	for (;;) {
		char peer[64];
		int fd = scpi_accept(h->listen_fd, "HiSLIP", peer, sizeof(peer));
		if (fd < 0)
			return;
		struct conn *c = NULL;
		for (size_t i = 0; i < h->conn_count; i++)
			if (!h->conns[i].used) {
				c = &h->conns[i];
				break;
			}
		if (!c) {
			log_msg(LOG_WARNING, "hislip %s refused: %zu connections already (--max-clients)", peer,
				h->conn_count);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->used = true;
		snprintf(c->peer, sizeof(c->peer), "%s", peer);
		c->in = malloc(IN_SIZE);
		hislip_reader_init(&c->reader);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
					 .data.u64 = h->tag + TAG_CONN + (uint64_t)(c - h->conns)};
		if (!c->in || epoll_ctl(h->epoll, EPOLL_CTL_ADD, fd, &ev) < 0) {
			log_msg(LOG_WARNING, "hislip %s: refused: out of memory", c->peer);
			free(c->in);
			close(fd);
			memset(c, 0, sizeof(*c));
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &c->last);
		log_msg(LOG_DEBUG, "hislip %s: connected", c->peer);
	}
}

/* After every event: resume what was held back and can go on, send what
 * is queued, and ask epoll for what each connection waits for. */
static void pump(struct hislip_server *h)
{
	for (size_t i = 0; i < h->conn_count; i++) {
		struct conn *c = &h->conns[i];
		if (c->used && c->in_length && !blocked(h, c))
			conn_process(h, c);
	}
	for (size_t i = 0; i < h->conn_count; i++) {
		struct conn *c = &h->conns[i];
		if (c->used && conn_flush(h, c) && c->used)
			conn_update_events(h, c);
	}
}

void hislip_server_dispatch(struct hislip_server *h, uint64_t tag, uint32_t events)
{
	uint64_t k = tag - h->tag;
	if (k == TAG_LISTEN) {
		accept_clients(h);
	} else if (k == TAG_TIMER) {
		lock_timeouts(h);
	} else if (k - TAG_CONN < h->conn_count) {
		struct conn *c = &h->conns[k - TAG_CONN];
		if (!c->used)
			return;
		if (events & EPOLLERR) {
			conn_drop(h, c, "connection error");
		} else if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
			conn_readable(h, c, events | (events & EPOLLHUP ? EPOLLRDHUP : 0));
		}
	}
	pump(h);
}

void hislip_server_close_idle(struct hislip_server *h)
{
	if (!h || !h->options.idle_timeout)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < h->conn_count; i++) {
		struct conn *c = &h->conns[i];
		if (c->used && now.tv_sec - c->last.tv_sec >= (time_t)h->options.idle_timeout)
			conn_drop(h, c, "idle");
	}
}

unsigned hislip_server_port(const struct hislip_server *h)
{
	return h->port;
}

int hislip_server_new(struct scpi_server *scpi, int epoll, uint64_t tag_base, const struct sockaddr *addr,
		      socklen_t addr_len, const struct hislip_options *options, struct hislip_server **ret_server)
{
	struct hislip_server *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->scpi = scpi;
	h->epoll = epoll;
	h->tag = tag_base;
	h->options = *options;
	h->listen_fd = h->timer_fd = -1;
	h->next_id = 1;
	/* two channels per session, and room to refuse one more with a FatalError */
	h->conn_count = 2 * options->max_sessions + 2;
	h->conns = calloc(h->conn_count, sizeof(*h->conns));
	h->sessions = calloc(options->max_sessions, sizeof(*h->sessions));
	int rc = -ENOMEM;
	if (!h->conns || !h->sessions)
		goto fail;
	h->listen_fd = scpi_listen(addr, addr_len, &h->port);
	if (h->listen_fd < 0) {
		rc = h->listen_fd;
		goto fail;
	}
	h->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (h->timer_fd < 0) {
		rc = -errno;
		goto fail;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag_base + TAG_LISTEN};
	if (epoll_ctl(epoll, EPOLL_CTL_ADD, h->listen_fd, &ev) < 0) {
		rc = -errno;
		goto fail;
	}
	ev.data.u64 = tag_base + TAG_TIMER;
	if (epoll_ctl(epoll, EPOLL_CTL_ADD, h->timer_fd, &ev) < 0) {
		rc = -errno;
		goto fail;
	}
	*ret_server = h;
	return 0;
fail:
	hislip_server_free(h);
	return rc;
}

void hislip_server_free(struct hislip_server *h)
{
	if (!h)
		return;
	for (size_t i = 0; h->sessions && i < h->options.max_sessions; i++)
		if (h->sessions[i].used)
			session_close(h, &h->sessions[i], "shutdown");
	for (size_t i = 0; h->conns && i < h->conn_count; i++)
		if (h->conns[i].used)
			conn_close(h, &h->conns[i], "shutdown");
	if (h->listen_fd >= 0) {
		epoll_ctl(h->epoll, EPOLL_CTL_DEL, h->listen_fd, NULL);
		close(h->listen_fd);
	}
	if (h->timer_fd >= 0) {
		epoll_ctl(h->epoll, EPOLL_CTL_DEL, h->timer_fd, NULL);
		close(h->timer_fd);
	}
	free(h->conns);
	free(h->sessions);
	free(h);
}
