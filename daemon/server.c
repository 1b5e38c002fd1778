/* SPDX-License-Identifier: MIT */
/*
 * server.c: pbusd's parameter server on a Unix-domain socket
 * (docs/socket-protocol.md).
 *
 * Two threads. The server thread owns every connection: one epoll loop over
 * the listening socket, the clients, and three event descriptors — "values
 * changed" (from the watcher), "state saved" (from the saver in persist.c)
 * and a timer for rate-limited notifications and overdue acknowledgements.
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
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock-internal.h"
#include "../lib/read-internal.h"
#include "../lib/schema-internal.h"
#include "../lib/write-internal.h"
#include "../lib/protocol-internal.h"
#include "pbusd.h"

/* The kernel's send buffer per client: what a client that stops reading
 * can have in flight (notifications are built only when everything before
 * them has gone into it; the kernel doubles the value). */
#define CLIENT_SNDBUF (16 << 10)
#define REPLY_BACKLOG_MAX (4u << 20) /* a client that stops reading is closed */
#define ACK_TIMEOUT_NS (10LL * 1000000000) /* a save that never comes: EIO */
#define FRAME_TIMEOUT_MS_DEFAULT 10000 /* a HELLO, or the rest of a frame begun */
#define RESERVED_CLIENTS_DEFAULT 8
/* A SET whose parameter another live writer holds is tried again after
 * 1 ms, then after twice as long each time up to 10 ms, for at most 1 s. */
#define BUSY_RETRY_FIRST_NS (1000000LL)
#define BUSY_RETRY_MAX_NS (10LL * 1000000)
#define BUSY_TIMEOUT_NS (1000000000LL)
/* accept4() out of descriptors or memory: the listening socket rests. */
#define ACCEPT_RETRY_NS (100LL * 1000000)

struct subscription {
	uint32_t id;
	uint32_t min_interval_us;
	double deadband;
	uint32_t count;
	uint32_t *indexes;       /* the parameters, in the order subscribed */
	uint64_t *member;        /* bitmap over parameter indexes */
	uint64_t *pending;       /* bitmap over positions: changed since last NOTIFY */
	double *last_sent;       /* per position, for the deadband */
	uint32_t *last_status;
	uint64_t *last_seq;      /* per position: the version last looked at */
	bool any_pending, initial;
	int64_t next_allowed_ns; /* CLOCK_MONOTONIC */
	struct subscription *next;
};

/* A SET reply held until the state file has the values. */
struct pending_ack {
	uint32_t id;
	int64_t deadline_ns;
	size_t count;
	uint32_t *indexes;
	uint64_t *seqs;          /* the versions the writes produced, for the reply */
	uint64_t *wait_seqs;     /* the version to see saved; 0: not persistent */
	int32_t *results;
	struct pending_ack *next;
};

/* A SET that found a parameter held by another writer: nothing of it was
 * written. The server tries it again from its loop (never waiting for the
 * writer), and reads no further request of the client meanwhile, so that
 * its requests stay in order. */
struct parked_set {
	uint32_t id;
	uint32_t count;
	struct pbus_write *writes; /* the values point into data */
	unsigned char *data;
	int64_t first_ns;          /* the first try */
	int64_t next_ns;           /* the next try */
	int64_t delay_ns;          /* after the next try, if still busy */
};

struct client {
	int fd;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int group_count;
	bool privileged;         /* root or pbusd's own user */
	bool admitted;           /* counted in its uid's share (not refused at accept) */
	char name[PBUS_WIRE_NAME_MAX + 1];
	bool hello_done, closing;
	bool in_epoll;           /* its socket is in the epoll set */
	uint32_t events;         /* what the epoll set asks of its socket */
	struct pbus_frame_in rx;
	/* By when the client must have sent its HELLO (from connect) or the
	 * rest of the frame it began (from its first byte); 0: nothing is
	 * owed. A client that is late is closed (§4): a half-sent frame
	 * would otherwise hold its connection and buffer for ever. */
	int64_t owes_by_ns;
	struct pbus_wire_buf tx;
	struct subscription *subs;
	uint32_t sub_count, next_sub_id;
	struct pending_ack *acks, **acks_tail;
	struct parked_set *parked; /* a SET waiting for a busy parameter */
	int64_t parked_since_ns;
	uint64_t requests, notifications;
	struct client *next;
};

/* Admitted connections of one peer uid (--max-clients-per-user). */
struct uid_share {
	uid_t uid;
	uint32_t count;
};

struct server {
	struct pbus_table *table;
	const struct pbus_schema *schema;
	const char *schema_text;
	size_t schema_length;
	const char *instance;
	char *socket_path;
	bool unlink_socket;      /* ours to remove (not from socket activation) */
	uint32_t param_count, max_frame, max_clients, max_subscriptions;
	uint32_t max_clients_per_user, reserved_clients;
	int64_t frame_timeout_ns;
	gid_t *param_gid;        /* write group per parameter, (gid_t)-1 if none */
	const struct pbus_param **params;

	int listen_fd, epoll_fd, changed_fd, saved_fd, timer_fd, stop_fd;
	pthread_t thread;
	bool thread_started;

	/* Shared with the watcher thread. */
	pthread_t watcher;
	bool watcher_started;
	pthread_mutex_t watch_lock;    /* guards the next four */
	pthread_cond_t watch_changed;
	uint32_t *watch_indexes;       /* the subscribed parameters */
	size_t watch_count;
	unsigned watch_generation;
	struct pbus_watch *current_watch; /* the watcher's, while it has one */
	atomic_bool stopping;
	atomic_bool rescan;       /* the watcher has a new watch: compare versions */
	_Atomic uint64_t *changed; /* bitmap over parameter indexes, set by the watcher
				    * and by the server thread for its own writes */
	uint64_t *changed_now;     /* the server thread's copy of it */
	/* Per parameter, the version the server thread's latest write of it
	 * published: the watcher does not wake the server thread for a change
	 * it made itself. */
	_Atomic uint64_t *own_version;
	size_t words;

	struct client *clients;
	uint32_t client_count;     /* every open connection, refused ones until they go */
	uint32_t admitted_count;   /* those within the limits */
	struct uid_share *shares;  /* per peer uid with admitted connections */
	size_t share_count, share_capacity;
	int64_t timer_at;          /* what timer_fd is armed for (0: disarmed) */
	/* accept4() failed for want of descriptors or memory: the listening
	 * socket is out of the epoll set until accept_retry_ns, so that the
	 * connection waits in the backlog instead of waking us in a loop. */
	bool accept_paused, accept_failing;
	int64_t accept_retry_ns;
	/* Scratch of handle_set(), param_count entries each: no allocation
	 * per request. */
	struct pbus_write *set_writes;
	int32_t *set_results;
	uint64_t *set_seqs, *set_seen;
	int64_t started_ns;
	/* Statistics (server thread). */
	uint64_t requests, notifications, values_notified, bytes_in, bytes_out, errors;
	uint64_t connections_total, rejected_connections, busy_sets;
};

static void kick(int fd)
{
	uint64_t one = 1;

	(void)!write(fd, &one, sizeof(one));
}

static void drain_fd(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

/* --- the watcher thread ----------------------------------------------------- */

static void *watcher_main(void *arg)
{
	struct server *s = arg;
	struct pbus_watch *watch = NULL;
	unsigned generation = ~0u;

	pthread_mutex_lock(&s->watch_lock);
	while (!atomic_load(&s->stopping)) {
		uint32_t index;
		int r;

		if (s->watch_generation != generation) {
			generation = s->watch_generation;
			s->current_watch = NULL;
			pbus_watch_free(watch);
			watch = NULL;
			if (s->watch_count &&
			    pbus_watch_new(s->table, s->watch_indexes, s->watch_count, &watch) < 0)
				log_msg(LOG_ERROR, "server: cannot watch the subscribed parameters");
			s->current_watch = watch;
			/* A write between a subscription's first NOTIFY and this
			 * watch would go unseen: have the server compare versions. */
			atomic_store(&s->rescan, true);
			kick(s->changed_fd);
		}
		if (!watch) {
			/* Nothing subscribed: sleep until that changes. */
			pthread_cond_wait(&s->watch_changed, &s->watch_lock);
			continue;
		}
		pthread_mutex_unlock(&s->watch_lock);
		r = pbus_watch_wait(watch, -1);
		if (r > 0) {
			bool foreign = false;

			while (pbus_watch_next(watch, &index) == 1) {
				/* The server thread marks what it wrote itself and
				 * notifies in the same turn (it records the version
				 * before it marks): leave it those, report the rest. */
				if (pbus_param_seq(s->params[index]) ==
				    atomic_load_explicit(&s->own_version[index], memory_order_relaxed))
					continue;
				atomic_fetch_or(&s->changed[index / 64], UINT64_C(1) << (index % 64));
				foreign = true;
			}
			if (foreign)
				kick(s->changed_fd);
		}
		pthread_mutex_lock(&s->watch_lock);
		if (r == -ESTALE)
			break;
	}
	s->current_watch = NULL;
	pthread_mutex_unlock(&s->watch_lock);
	pbus_watch_free(watch);
	return NULL;
}

/* Wake the watcher out of its wait: the subscribed set changed, or the
 * server stops. Called with watch_lock held. */
static void wake_watcher(struct server *s)
{
	pthread_cond_signal(&s->watch_changed);
	if (s->current_watch)
		pbus_watch_interrupt(s->current_watch);
}

/* The server thread tells the watcher what is subscribed now. */
static void update_watch_set(struct server *s)
{
	uint64_t *any = calloc(s->words, sizeof(*any));
	uint32_t *indexes;
	size_t n = 0;

	if (!any)
		return;
	for (struct client *c = s->clients; c; c = c->next)
		for (struct subscription *sub = c->subs; sub; sub = sub->next)
			for (size_t w = 0; w < s->words; w++)
				any[w] |= sub->member[w];
	indexes = calloc(s->param_count ? s->param_count : 1, sizeof(*indexes));
	if (!indexes) {
		free(any);
		return;
	}
	for (uint32_t i = 0; i < s->param_count; i++)
		if (any[i / 64] & (UINT64_C(1) << (i % 64)))
			indexes[n++] = i;
	free(any);
	pthread_mutex_lock(&s->watch_lock);
	if (n == s->watch_count && !memcmp(indexes, s->watch_indexes, n * sizeof(*indexes))) {
		pthread_mutex_unlock(&s->watch_lock);
		free(indexes);
		return;
	}
	free(s->watch_indexes);
	s->watch_indexes = indexes;
	s->watch_count = n;
	s->watch_generation++;
	wake_watcher(s);
	pthread_mutex_unlock(&s->watch_lock);
}

/* --- clients: credentials, buffers, closing --------------------------------- */

/* Supplementary groups of @pid, from /proc (taken at connect). */
static void read_groups(struct client *c)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)c->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 7, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (;;) {
			unsigned long g = strtoul(p, &end, 10);
			gid_t *groups;

			if (end == p)
				break;
			groups = realloc(c->groups, (size_t)(c->group_count + 1) * sizeof(*groups));
			if (!groups)
				break;
			c->groups = groups;
			c->groups[c->group_count++] = (gid_t)g;
			p = end;
		}
		break;
	}
	fclose(f);
}

static bool in_group(const struct client *c, gid_t gid)
{
	if (c->gid == gid)
		return true;
	for (int i = 0; i < c->group_count; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

static void free_subscription(struct subscription *sub)
{
	free(sub->indexes);
	free(sub->member);
	free(sub->pending);
	free(sub->last_sent);
	free(sub->last_status);
	free(sub->last_seq);
	free(sub);
}

static void free_ack(struct pending_ack *a)
{
	free(a->indexes);
	free(a->seqs);
	free(a->wait_seqs);
	free(a->results);
	free(a);
}

static void free_parked(struct parked_set *p)
{
	if (!p)
		return;
	free(p->writes);
	free(p->data);
	free(p);
}

/* The share of @uid, or NULL if it has no admitted connection. */
static struct uid_share *find_share(struct server *s, uid_t uid)
{
	for (size_t i = 0; i < s->share_count; i++)
		if (s->shares[i].uid == uid)
			return &s->shares[i];
	return NULL;
}

static void client_free(struct server *s, struct client *c)
{
	bool had_subs = c->subs != NULL;

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

/* Ask epoll for what the client needs now: its requests, unless a SET of
 * it is parked (its next requests wait in the socket); room to send, only
 * while something waits to be sent. */
static void client_update_events(struct server *s, struct client *c)
{
	uint32_t events = (c->parked ? 0 : EPOLLIN) | (c->tx.size ? EPOLLOUT : 0);
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

static void send_error(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void send_error(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	s->errors++;
	pbus_proto_error_encode(&c->tx, id, code, message);
	log_msg(LOG_DEBUG, "server: client %d (%s): error %d: %s", (int)c->pid, c->name, code, message);
}

/* A protocol violation: an ERROR, then the connection is closed (after the
 * ERROR went out, as far as the socket takes it). */
static void reject(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void reject(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	send_error(s, c, id, code, "%s", message);
	log_msg(LOG_INFO, "server: closing client %d (%s): %s", (int)c->pid, c->name, message);
	c->closing = true;
}

/* --- values and notifications ----------------------------------------------- */

static bool numeric_scalar(unsigned type)
{
	return type >= PBUS_TYPE_INT8 && type <= PBUS_TYPE_DOUBLE;
}

/* Append one value record of parameter @index as it is now, read straight
 * into @b (no copy in between). *ret_sample, if wanted, describes it, and
 * *ret_value points at the value's bytes in @b until @b next grows.
 * Inlined into its two loops: a GET of 201 calls it 201 times. */
static inline __attribute__((always_inline)) int
append_value(struct server *s, struct pbus_wire_buf *b, uint32_t index, struct pbus_sample *ret_sample,
	     const unsigned char **ret_value)
{
	const struct pbus_param *p = s->params[index];
	bool scalar = pbus_type_is_scalar(pbus_param_type(p));
	/* A scalar is read as its whole stored word, and the record trimmed. */
	unsigned char *record = pbus_wire_value_reserve(b, scalar ? 8 : pbus_param_value_size(p));
	struct pbus_sample sample;
	int r;

	if (!record)
		return -ENOMEM;
	if (scalar) {
		uint64_t word;

		r = pbus_read_scalar_sample(p, &word, &sample);
		memcpy(record + PBUS_WIRE_VALUE_HEAD, &word, 8);
	} else {
		r = pbus_param_read(p, record + PBUS_WIRE_VALUE_HEAD, pbus_param_value_size(p), &sample);
	}
	if (r < 0) {
		b->size = (size_t)(record - b->data);
		return r;
	}
	pbus_wire_value_commit(b, record, index, sample.status, sample.timestamp_ns, sample.seq,
			       sample.length);
	if (ret_sample)
		*ret_sample = sample;
	if (ret_value)
		*ret_value = record + PBUS_WIRE_VALUE_HEAD;
	return 0;
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
 * deadline of one that must wait (0: none). */
static int64_t notify_client(struct server *s, struct client *c, int64_t now)
{
	int64_t earliest = 0;

	/* Only when the kernel took everything sent before (this round's
	 * NOTIFYs of several subscriptions may then queue together): a client
	 * that does not read gets no more than its socket buffer in flight. If
	 * the socket is full, EPOLLOUT brings us back. */
	if (c->tx.size)
		return 0;

	for (struct subscription *sub = c->subs; sub; sub = sub->next) {
		int64_t at = notify(s, c, sub, now);

		if (at && (!earliest || at < earliest))
			earliest = at;
	}
	return earliest;
}

/* Mark what changed as pending in every subscription that has it. */
static void collect_changes(struct server *s)
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

/* --- requests ----------------------------------------------------------------- */

/* The flags checked per request come from the table's resolved parameters
 * (the descriptor's flags), which the read or write touches anyway, rather
 * than from the schema's larger records: at 60 requests a second every
 * line touched is a cache miss. */
static bool readable(const struct server *s, uint32_t index)
{
	return !(pbus_param_flags(s->params[index]) & PBUS_PARAM_NOREAD);
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
	pbus_proto_hello_reply_encode(&c->tx, id,
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
	start = pbus_proto_values_begin(&c->tx, PBUS_WIRE_VALUES, id, 0);
	for (uint32_t k = 0; k < count; k++)
		append_value(s, &c->tx, pbus_proto_index(&l, k), NULL, NULL);
	if (!c->tx.failed && c->tx.size - start > s->max_frame) {
		pbus_wire_cancel(&c->tx, start);
		send_error(s, c, id, -EMSGSIZE, "the %u values take more than the frame limit of %u bytes; "
			   "ask for fewer at a time", count, s->max_frame);
	} else if (pbus_proto_values_end(&c->tx, PBUS_WIRE_VALUES, start, count) < 0) {
		send_error(s, c, id, -ENOMEM, "out of memory");
	}
}

static void send_set_reply(struct client *c, uint32_t id, int result, size_t count,
			   const int32_t *results, const uint64_t *seqs)
{
	pbus_proto_set_reply_encode(&c->tx, id, result, count, results, seqs);
}

/* May @c write parameter @index? 0, -EACCES (read-only) or -EPERM. */
static int write_right(const struct server *s, const struct client *c, uint32_t index)
{
	if (pbus_param_flags(s->params[index]) & PBUS_PARAM_READONLY)
		return -EACCES;
	if (c->privileged)
		return 0;
	if (s->param_gid[index] != (gid_t)-1 && in_group(c, s->param_gid[index]))
		return 0;
	return -EPERM;
}

/* Send the acknowledgements whose values are on disk (or overdue). */
static void check_acks(struct server *s, struct client *c, int64_t now)
{
	while (c->acks) {
		struct pending_ack *a = c->acks;
		bool saved = true;

		for (size_t k = 0; k < a->count && saved; k++)
			saved = !a->wait_seqs[k] ||
				pbus_param_saved_seq(s->params[a->indexes[k]]) >= a->wait_seqs[k];
		if (!saved && now < a->deadline_ns)
			break; /* replies stay in order: later ones wait too */
		if (saved) {
			send_set_reply(c, a->id, 0, a->count, a->results, a->seqs);
		} else {
			log_msg(LOG_ERROR, "server: a write by client %d was not saved within %lld s",
				(int)c->pid, ACK_TIMEOUT_NS / 1000000000);
			send_error(s, c, a->id, -EIO, "the values were written but could not be saved");
		}
		c->acks = a->next;
		if (!c->acks)
			c->acks_tail = &c->acks;
		free_ack(a);
	}
}

/* The end of a SET that the table took or refused (@first: what
 * pbus_table_write_many_try() returned, not -EAGAIN): tell subscribers and
 * the watcher about the writes, and reply, after the save if persistent
 * values were written. @seen_filled: s->set_seen has the request's
 * parameters already (handle_set() made it; a retried SET has not). */
static void finish_set(struct server *s, struct client *c, uint32_t id, const struct pbus_write *writes,
		       uint32_t count, int first, bool seen_filled)
{
	int32_t *results = s->set_results;
	uint64_t *seqs = s->set_seqs, *seen = s->set_seen;
	struct pending_ack *ack;
	bool persistent = false;

	/* Our own writes: we mark them changed, so that subscribers hear of
	 * them in this turn, and tell the watcher which versions are ours, so
	 * that it does not wake us for them again. A version the watcher sees
	 * before we record it here costs a wake-up, no more; one that is not
	 * ours never matches. */
	if (!seen_filled)
		memset(seen, 0, s->words * sizeof(*seen));
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = writes[k].index;

		if (writes[k].result == 0 && writes[k].seq)
			atomic_store_explicit(&s->own_version[i], writes[k].seq, memory_order_relaxed);
		results[k] = writes[k].result;
		seqs[k] = first == 0 ? writes[k].seq : 0;
		if (pbus_param_flags(s->params[i]) & PBUS_PARAM_PERSISTENT)
			persistent = true;
		if (!seen_filled)
			seen[i / 64] |= UINT64_C(1) << (i % 64);
	}
	/* Every parameter of the request (seen[]) is marked, one atomic OR
	 * per 64 of them. */
	for (size_t w = 0; w < s->words; w++)
		if (seen[w])
			atomic_fetch_or(&s->changed[w], seen[w]);
	collect_changes(s);
	if (first < 0 || !persistent)
		return send_set_reply(c, id, first, count, results, seqs);
	/* Persistent values: the reply waits until the saver has them on disk. */
	ack = calloc(1, sizeof(*ack));
	if (ack) {
		ack->indexes = malloc(count * sizeof(*ack->indexes));
		ack->results = malloc(count * sizeof(*ack->results));
		ack->seqs = malloc(count * sizeof(*ack->seqs));
		ack->wait_seqs = calloc(count, sizeof(*ack->wait_seqs));
	}
	if (!ack || !ack->indexes || !ack->results || !ack->seqs || !ack->wait_seqs) {
		if (ack)
			free_ack(ack);
		return send_error(s, c, id, -ENOMEM, "out of memory (the values were written)");
	}
	ack->id = id;
	ack->count = count;
	ack->deadline_ns = pbus_monotonic_ns() + ACK_TIMEOUT_NS;
	for (uint32_t k = 0; k < count; k++) {
		ack->indexes[k] = writes[k].index;
		ack->results[k] = results[k];
		ack->seqs[k] = seqs[k];
		if (pbus_param_flags(s->params[writes[k].index]) & PBUS_PARAM_PERSISTENT)
			ack->wait_seqs[k] = seqs[k];
	}
	*c->acks_tail = ack;
	c->acks_tail = &ack->next;
	check_acks(s, c, pbus_monotonic_ns());
}

/* Keep a SET that met a busy parameter (its values are in the client's
 * receive buffer, which moves on: copied) to be tried again from the loop. */
static void park_set(struct server *s, struct client *c, uint32_t id, const struct pbus_write *writes,
		     uint32_t count)
{
	struct parked_set *p = calloc(1, sizeof(*p));
	size_t total = 0, at = 0;
	int64_t now = pbus_monotonic_ns();

	for (uint32_t k = 0; k < count; k++)
		total += writes[k].length;
	if (p) {
		p->writes = malloc(count * sizeof(*p->writes));
		p->data = malloc(total ? total : 1);
	}
	if (!p || !p->writes || !p->data) {
		free_parked(p);
		return send_error(s, c, id, -ENOMEM, "out of memory (nothing was written)");
	}
	for (uint32_t k = 0; k < count; k++) {
		p->writes[k] = writes[k];
		if (writes[k].length)
			memcpy(p->data + at, writes[k].value, writes[k].length);
		p->writes[k].value = p->data + at;
		at += writes[k].length;
	}
	p->id = id;
	p->count = count;
	p->first_ns = now;
	p->next_ns = now + BUSY_RETRY_FIRST_NS;
	p->delay_ns = 2 * BUSY_RETRY_FIRST_NS;
	c->parked = p;
	c->parked_since_ns = now;
	client_update_events(s, c); /* its next requests wait in the socket */
}

/* Try a parked SET again: done (written, refused, or busy for too long:
 * EBUSY), or planned once more. Returns true if it is done. */
static bool retry_parked(struct server *s, struct client *c, int64_t now)
{
	struct parked_set *p = c->parked;
	int r = pbus_table_write_many_try(s->table, p->writes, p->count);

	if (r == -EAGAIN && now - p->first_ns < BUSY_TIMEOUT_NS) {
		p->next_ns = now + p->delay_ns;
		if (p->next_ns > p->first_ns + BUSY_TIMEOUT_NS)
			p->next_ns = p->first_ns + BUSY_TIMEOUT_NS; /* the last try at 1 s */
		p->delay_ns = p->delay_ns * 2 > BUSY_RETRY_MAX_NS ? BUSY_RETRY_MAX_NS : p->delay_ns * 2;
		return false;
	}
	if (r == -EAGAIN) {
		/* Nothing was written: the busy writes say EBUSY, the others 0. */
		int32_t *results = s->set_results;
		uint32_t busy = 0;

		for (uint32_t k = 0; k < p->count; k++) {
			results[k] = p->writes[k].result == -EAGAIN ? -EBUSY : 0;
			if (results[k] && !busy)
				busy = p->writes[k].index + 1;
		}
		s->busy_sets++;
		log_msg(LOG_WARNING, "server: a SET of client %d (%s) refused: parameter '%s' has "
			"been held by another writer for %lld s (a stopped process?)", (int)c->pid,
			c->name, busy ? s->schema->params[busy - 1].name : "?",
			BUSY_TIMEOUT_NS / 1000000000);
		send_set_reply(c, p->id, -EBUSY, p->count, results, NULL);
	} else {
		finish_set(s, c, p->id, p->writes, p->count, r, false);
	}
	return true;
}

static void handle_set(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	struct pbus_write *writes = s->set_writes;
	int32_t *results = s->set_results;
	uint64_t *seqs = s->set_seqs, *seen = s->set_seen;
	char why[PBUS_PROTO_WHY_MAX];
	uint32_t count;
	int first = 0;

	if (pbus_proto_set_decode(body, n, s->param_count, writes, &count, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	memset(seqs, 0, count * sizeof(*seqs));
	/* Steps 1-3 of docs/socket-protocol.md §3.3 here; the value checks
	 * (4-6) are the table's, done by pbus_table_write_many_try() before it
	 * applies anything. */
	memset(seen, 0, s->words * sizeof(*seen));
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = writes[k].index;
		int e;

		if (i >= s->param_count) {
			e = -ENOENT;
		} else if (seen[i / 64] & (UINT64_C(1) << (i % 64))) {
			e = -EINVAL; /* the same parameter twice */
		} else {
			seen[i / 64] |= UINT64_C(1) << (i % 64);
			e = write_right(s, c, i);
		}
		results[k] = e;
		if (e < 0 && first == 0)
			first = e;
	}
	if (first == 0) {
		/* Never waits for another writer: the server thread serves
		 * everybody, and a writer stopped while it holds a parameter
		 * would stop them all. A busy parameter parks the SET. */
		first = pbus_table_write_many_try(s->table, writes, count);
		if (first == -EAGAIN)
			return park_set(s, c, id, writes, count);
		return finish_set(s, c, id, writes, count, first, true);
	}
	/* Refused already: still tell each write what is wrong with it. */
	first = 0;
	for (uint32_t k = 0; k < count; k++) {
		if (results[k] == 0)
			results[k] = pbus_value_check(&s->schema->params[writes[k].index].ti, writes[k].value,
						      writes[k].length);
		if (results[k] < 0 && first == 0)
			first = results[k];
	}
	send_set_reply(c, id, first, count, results, seqs);
}

static void handle_subscribe(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
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
	pbus_proto_u32_encode(&c->tx, PBUS_WIRE_SUBSCRIBED, id, sub->id);
	update_watch_set(s);
	/* The first NOTIFY, with every current value, follows the reply once
	 * that has gone out (service_clients()). */
	return;
fail:
	free(indexes);
}

static void handle_unsubscribe(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
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
		pbus_proto_empty_encode(&c->tx, PBUS_WIRE_UNSUBSCRIBED, id);
		update_watch_set(s);
		return;
	}
	send_error(s, c, id, -ENOENT, "no subscription %u on this connection", sub_id);
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
	pbus_wire_bytes(&json, "]}", 2);
	if (json.failed) {
		send_error(s, c, id, -ENOMEM, "out of memory");
	} else {
		pbus_proto_str_encode(&c->tx, PBUS_WIRE_STATS, id, (const char *)json.data, json.size);
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
		pbus_proto_str_encode(&c->tx, PBUS_WIRE_SCHEMA, h->id, s->schema_text, s->schema_length);
		return;
	case PBUS_WIRE_GET: return handle_get(s, c, h->id, body, n);
	case PBUS_WIRE_SET: return handle_set(s, c, h->id, body, n);
	case PBUS_WIRE_SUBSCRIBE: return handle_subscribe(s, c, h->id, body, n);
	case PBUS_WIRE_UNSUBSCRIBE: return handle_unsubscribe(s, c, h->id, body, n);
	case PBUS_WIRE_STATS_GET:
		if (pbus_proto_empty_decode(PBUS_WIRE_STATS_GET, n, why) < 0)
			return reject(s, c, h->id, -EPROTO, "%s", why);
		return handle_stats(s, c, h->id);
	case PBUS_WIRE_PING:
		pbus_proto_bytes_encode(&c->tx, PBUS_WIRE_PONG, h->id, body, n);
		return;
	default:
		return reject(s, c, h->id, -EPROTO, "%s is not a request", pbus_wire_type_name(h->type));
	}
}

/* Handle the complete frames in the client's receive buffer, in order,
 * until none is left, the client is closing or one of its SETs is parked. */
static void client_process(struct server *s, struct client *c)
{
	bool took = false;

	while (!c->closing && !c->parked) {
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
	/* A frame begun owes its rest from its first byte on (a client that
	 * trickles a byte at a time gains nothing). */
	if (pbus_frame_in_pending(&c->rx) && (took || !c->owes_by_ns))
		c->owes_by_ns = pbus_monotonic_ns() + s->frame_timeout_ns;
	else if (!pbus_frame_in_pending(&c->rx) && c->hello_done)
		c->owes_by_ns = 0;
}

/* Read what the client sent and handle every complete frame. */
static void client_read(struct server *s, struct client *c)
{
	if (c->parked) {
		/* Not asked for its requests: only a hang-up brings us here. The
		 * parked SET is still done, the requests after it read then. */
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
		if (c->closing || c->parked || (size_t)n < room)
			return;
	}
}

/* A parked SET is done: the client's requests flow again, the ones it
 * sent meanwhile first. The time parked does not count against a frame it
 * had begun (it was not read meanwhile). */
static void client_unpark(struct server *s, struct client *c, int64_t now)
{
	free_parked(c->parked);
	c->parked = NULL;
	if (c->owes_by_ns)
		c->owes_by_ns += now - c->parked_since_ns;
	client_process(s, c);
	if (c->parked || c->closing)
		return;
	if (!c->in_epoll) {
		/* It hung up meanwhile: what it sent before is still read. */
		client_read(s, c);
		return;
	}
	client_update_events(s, c);
}

/* --- the server thread ---------------------------------------------------------- */

/* A new connection on @fd from a peer with @cred. */
static struct client *client_new(struct server *s, int fd, const struct ucred *cred)
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
	c->privileged = cred->uid == 0 || cred->uid == geteuid();
	c->acks_tail = &c->acks;
	c->owes_by_ns = pbus_monotonic_ns() + s->frame_timeout_ns; /* its HELLO */
	snprintf(c->name, sizeof(c->name), "pid %d", (int)cred->pid);
	read_groups(c);
	c->next = s->clients;
	s->clients = c;
	s->client_count++;
	c->events = EPOLLIN;
	ev = (struct epoll_event){.events = c->events, .data.ptr = c};
	c->in_epoll = epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
	return c;
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
static int admit(struct server *s, struct client *c, char *why, size_t size)
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

/* accept4() failed for want of resources (descriptors, memory): say so
 * once, and take the listening socket out of the epoll set for a while.
 * Level-triggered, it would wake us for the waiting connection again and
 * again, each accept4() failing alike; in the backlog the connection
 * waits until some descriptor is free. */
static void pause_accepting(struct server *s, int error)
{
	if (!s->accept_failing)
		log_msg(LOG_WARNING, "server: cannot accept connections: %s; new connections wait in the "
			"socket's backlog, trying again every %lld ms", strerror(error),
			ACCEPT_RETRY_NS / 1000000);
	s->accept_failing = true;
	if (!s->accept_paused && epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->listen_fd, NULL) == 0)
		s->accept_paused = true;
	s->accept_retry_ns = pbus_monotonic_ns() + ACCEPT_RETRY_NS;
}

static void accept_clients(struct server *s)
{
	for (;;) {
		struct ucred cred;
		socklen_t length = sizeof(cred);
		struct client *c;
		char why[160];
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), r;

		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
			pause_accepting(s, errno);
			return;
		}
		if (s->accept_failing) {
			log_msg(LOG_INFO, "server: accepting connections again");
			s->accept_failing = false;
		}
		if (fd < 0)
			return;
		s->connections_total++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) < 0 ||
		    !(c = client_new(s, fd, &cred))) {
			close(fd);
			continue;
		}
		r = admit(s, c, why, sizeof(why));
		if (r < 0) {
			s->rejected_connections++;
			reject(s, c, 0, r, "%s", why);
		}
	}
}

/* After a pause (pause_accepting()), listen again and take what waits. */
static void resume_accepting(struct server *s, int64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &s->listen_fd};

	if (!s->accept_paused || now < s->accept_retry_ns)
		return;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0) {
		s->accept_retry_ns = now + ACCEPT_RETRY_NS;
		return;
	}
	s->accept_paused = false;
	accept_clients(s);
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
static void service_clients(struct server *s)
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
		if (!c->closing && c->parked && now >= c->parked->next_ns && retry_parked(s, c, now))
			client_unpark(s, c, now);
		if (!c->closing && c->parked && (!earliest || c->parked->next_ns < earliest))
			earliest = c->parked->next_ns;
		if (!c->closing && !c->parked && c->owes_by_ns && now >= c->owes_by_ns)
			client_late(s, c);
		if (!c->closing) {
			if (!c->parked && c->owes_by_ns && (!earliest || c->owes_by_ns < earliest))
				earliest = c->owes_by_ns;
			check_acks(s, c, now);
			if (c->acks && (!earliest || c->acks->deadline_ns < earliest))
				earliest = c->acks->deadline_ns;
			at = notify_client(s, c, now);
			if (at && (!earliest || at < earliest))
				earliest = at;
		}
		/* A closing client gets what is queued (its ERROR) as far as the
		 * socket takes it now, then goes. */
		if (client_flush(s, c) < 0 || c->closing)
			client_free(s, c);
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

/* --- setup ---------------------------------------------------------------------- */

static char *default_socket_dir(void)
{
	const char *env = getenv("PBUS_SOCKET_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = NULL;

	if (env && *env)
		return strdup(env);
	if (geteuid() == 0)
		return strdup("/run/parambus");
	if (xdg && *xdg) {
		if (asprintf(&dir, "%s/parambus", xdg) < 0)
			return NULL;
		return dir;
	}
	if (asprintf(&dir, "/tmp/parambus-%u", (unsigned)geteuid()) < 0)
		return NULL;
	return dir;
}

/* The listening socket from systemd's socket activation, or -1. */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");

	if (!pid || !fds || atoi(pid) != getpid() || atoi(fds) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	return 3;
}

/* mkdir, mode 0755 whatever the umask (clients of every user must reach
 * the socket). 0, also if it exists, or -1 with errno. */
static int mkdir_0755(const char *dir)
{
	if (mkdir(dir, 0755) < 0)
		return errno == EEXIST ? 0 : -1;
	return chmod(dir, 0755);
}

/* mkdir -p, mode 0755. */
static int mkdir_parents(char *dir)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir_0755(dir) < 0) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir_0755(dir);
}

/*
 * Is @dir safe to hold our socket? Whoever can write the directory can
 * replace the socket with one of his own and take the requests meant for
 * us, a `pbus set` among them — and a directory under /tmp can be made by
 * anybody before pbusd first runs. So: a directory itself (not a symbolic
 * link to one), owned by our effective uid or root, that neither group nor
 * others may write (the sticky bit does not help: it keeps others from
 * removing our socket, not from binding theirs while ours is missing).
 * 0, or -EPERM / -ENOTDIR after one line in the log.
 */
static int check_socket_dir(const char *dir)
{
	uid_t me = geteuid();
	struct stat st;

	if (lstat(dir, &st) < 0) {
		int r = -errno;

		log_msg(LOG_ERROR, "server: socket directory %s: %s", dir, strerror(-r));
		return r;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		log_msg(LOG_ERROR, "server: socket directory %s is %s (owner uid %u, mode %04o), "
			"not a directory; refusing to serve there", dir,
			S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory",
			(unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -ENOTDIR;
	}
	if ((st.st_uid != me && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_msg(LOG_ERROR, "server: socket directory %s is unsafe: owner uid %u, mode %04o; "
			"it must belong to uid %u or root and be writable by its owner only, or "
			"anybody who can write it can replace the socket; refusing to serve there",
			dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)me);
		return -EPERM;
	}
	return 0;
}

static int listen_on(struct server *s, const char *dir_option)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char *dir = dir_option ? strdup(dir_option) : default_socket_dir();
	int fd, r;

	s->listen_fd = activated_socket();
	if (s->listen_fd >= 0) {
		log_msg(LOG_INFO, "server: listening on the socket systemd passed");
		free(dir);
		return 0;
	}
	if (!dir || asprintf(&s->socket_path, "%s/%s.sock", dir, s->instance) < 0) {
		free(dir);
		log_msg(LOG_ERROR, "server: out of memory");
		return -ENOMEM;
	}
	if (mkdir_parents(dir) < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return r;
	}
	/* Whether we made it or found it. */
	r = check_socket_dir(dir);
	free(dir);
	if (r < 0)
		return r;
	if (strlen(s->socket_path) >= sizeof(addr.sun_path)) {
		log_msg(LOG_ERROR, "server: socket path %s is too long", s->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, s->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot make a socket: %s", strerror(-r));
		return r;
	}
	/* A socket file left by a pbusd that died: nobody listens on it, and
	 * we hold the instance, so it is ours to replace. */
	unlink(s->socket_path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || chmod(s->socket_path, 0666) < 0 ||
	    listen(fd, 128) < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot listen on %s: %s", s->socket_path, strerror(errno));
		close(fd);
		return r;
	}
	s->listen_fd = fd;
	s->unlink_socket = true;
	log_msg(LOG_INFO, "server: listening on %s", s->socket_path);
	return 0;
}

static int add_fd(struct server *s, int fd, int *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Everything but the socket and the threads (the fuzz target,
 * tests/fuzz/, drives a server made this way directly). */
static int server_prepare(struct pbus_table *owner, const struct pbus_schema *schema,
			  const char *schema_text, size_t schema_length, const char *instance,
			  const struct server_options *o, struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
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
	if (!s->changed || !s->changed_now || !s->own_version || !s->param_gid || !s->params ||
	    !s->set_writes || !s->set_results || !s->set_seqs || !s->set_seen) {
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
		if (group && !g)
			log_msg(LOG_WARNING, "server: parameter '%s': group '%s' does not exist; only "
				"pbusd's user and root may write it", schema->params[i].name, group);
	}
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->changed_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->saved_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->changed_fd < 0 || s->saved_fd < 0 || s->stop_fd < 0 || s->timer_fd < 0 ||
	    add_fd(s, s->changed_fd, &s->changed_fd) < 0 || add_fd(s, s->saved_fd, &s->saved_fd) < 0 ||
	    add_fd(s, s->stop_fd, &s->stop_fd) < 0 || add_fd(s, s->timer_fd, &s->timer_fd) < 0) {
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
	if (s->unlink_socket && s->socket_path)
		unlink(s->socket_path);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	{
		int fds[] = {s->epoll_fd, s->changed_fd, s->saved_fd, s->timer_fd, s->stop_fd};

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
	free(s->shares);
	free(s);
}
