/* SPDX-License-Identifier: MIT */
/*
 * server-internal.h: what the files of pbusd's socket server share (the
 * server's and its clients' state, and the functions one file offers the
 * others). server.c: the clients and the server thread's loop;
 * access.c: who may do what (docs/socket-protocol.md §4, §6); watcher.c:
 * the watcher thread; subscribe.c: subscriptions and NOTIFY; set.c: SET,
 * busy parameters and acknowledgements after a save or once the hardware
 * applied the values (pbus-hwd's reports); listen.c: the socket
 * and accepting connections; registry.c: the registry of services and
 * their watchers (§3.6).
 *
 * Threads: everything here belongs to the server thread, except what
 * struct server marks as shared with the watcher thread.
 */
#ifndef PBUSD_SERVER_INTERNAL_H
#define PBUSD_SERVER_INTERNAL_H

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
#include "../lib/process-internal.h"
#include "../lib/protocol-internal.h"
#include "../lib/service-address-internal.h"
#include "../common/hwd-report.h"
#include "pbusd.h"

/* The kernel's send buffer per client: what a client that stops reading
 * can have in flight (notifications are built only when everything before
 * them has gone into it; the kernel doubles the value). */
#define CLIENT_SNDBUF (16 << 10)
#define REPLY_BACKLOG_MAX (4u << 20) /* a client that stops reading is closed */
#define ACK_TIMEOUT_NS (10LL * 1000000000) /* a save that never comes: EIO */
#define APPLY_TIMEOUT_MS_DEFAULT 1000 /* --apply-timeout: then ETIMEDOUT */
/* Replies held behind SET replies that wait for a save (see struct
 * client's held): beyond either bound, the client's next requests wait in
 * its socket until the saves come. */
#define HELD_REPLIES_MAX (1u << 20)
#define PENDING_ACKS_MAX 256u
#define FRAME_TIMEOUT_MS_DEFAULT 10000 /* a HELLO, or the rest of a frame begun */
#define RESERVED_CLIENTS_DEFAULT 8
/* A SET whose parameter another live writer holds is tried again after
 * 1 ms, then after twice as long each time up to 10 ms, for at most 1 s. */
#define BUSY_RETRY_FIRST_NS (1000000LL)
#define BUSY_RETRY_MAX_NS (10LL * 1000000)
#define BUSY_TIMEOUT_NS (1000000000LL)
/* accept4() out of descriptors or memory: the listening socket rests. */
#define ACCEPT_RETRY_NS (100LL * 1000000)
/* Services (§3.6): registrations per connection, and in all by default
 * (--max-services). */
#define SERVICES_PER_CLIENT_MAX 64u
#define MAX_SERVICES_DEFAULT 1024u

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
	/* Its SUBSCRIBED reply was held (struct client's held) and ends at
	 * this point of the held stream: no NOTIFY before it has gone (0: not
	 * held). */
	uint64_t replied_at;
	struct subscription *next;
};

/* A registered service (registry.c): @owner's until it unregisters or
 * its connection closes. */
struct service {
	char address[PBUS_SERVICE_ADDRESS_MAX + 1];
	char endpoint[PBUS_SERVICE_ENDPOINT_MAX + 1];
	uint32_t major, minor;
	struct client *owner;
	struct service *next;
};

/* A connection that watches an address (registry.c), registered or not. */
struct service_watch {
	char address[PBUS_SERVICE_ADDRESS_MAX + 1];
	struct client *client;
	struct service_watch *next;
};

/* A SET reply held until the state file has the values, and (a SET with
 * the APPLIED flag) until pbus-hwd has applied them to their outputs. */
struct pending_ack {
	uint32_t id;
	uint64_t held_from;      /* where in the client's held stream the replies after it begin */
	int64_t deadline_ns;     /* for the save: then ERROR EIO */
	int64_t apply_deadline_ns; /* for the hardware: then ETIMEDOUT */
	int64_t wake_ns;         /* the earlier of the two it still waits for */
	size_t count;
	uint32_t *indexes;
	uint64_t *seqs;          /* the versions the writes produced, for the reply */
	uint64_t *wait_seqs;     /* the version to see saved; 0: not persistent */
	uint64_t *hw_seqs;       /* the version to see applied; 0: no wait */
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
	uint16_t flags;            /* the SET frame's (PBUS_WIRE_FLAG_APPLIED) */
};

struct client {
	int fd;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t group_count;
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
	/* SET replies waiting for a save or the hardware, oldest first. Replies keep the order
	 * of the requests (docs/socket-protocol.md §3): while one waits, the
	 * replies to the client's later requests are held in @held (a stream:
	 * @held_base bytes of it have gone to @tx so far), each ack marking
	 * where the replies after it begin. Notifications do not wait, except
 * those of a subscription whose SUBSCRIBED is held (its replied_at). */
	struct pending_ack *acks, *last_ack;
	uint32_t ack_count;
	struct pbus_wire_buf held;
	uint64_t held_base;
	struct parked_set *parked; /* a SET waiting for a busy parameter */
	int64_t paused_since_ns;   /* since when client_paused() (0: not) */
	uint32_t service_count, service_watch_count; /* its registrations and watches */
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
	uint32_t max_clients_per_user, reserved_clients, max_services;
	int64_t frame_timeout_ns;
	gid_t *param_gid;        /* write group per parameter, (gid_t)-1 if none */
	const struct pbus_param **params;

	int listen_fd, epoll_fd, changed_fd, saved_fd, timer_fd, stop_fd;
	/* pbus-hwd's reports (set.c, read_hwd_reports()): the pipe, whether
	 * pbus-hwd runs (set by the main thread: server_hardware_gone()),
	 * per parameter the highest version it applied and the highest it
	 * failed to apply, and which parameters have an output binding. */
	int report_fd;
	atomic_bool hardware;
	int64_t apply_timeout_ns;
	uint64_t *applied_seq, *failed_seq;
	uint64_t *output_bound;   /* bitmap over parameter indexes */
	unsigned char report_part[PBUS_HWD_REPORT_SIZE]; /* a record begun */
	size_t report_part_size;
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
	/* The registry (registry.c): every registration and every watch. */
	struct service *services;
	struct service_watch *service_watches;
	uint32_t service_count, service_watch_count;
	/* A client was closed outside its turn in service_clients() (a
	 * watcher that stopped reading, told of another's change): free it
	 * before the loop sleeps. */
	bool reap;
	int64_t started_ns;
	/* Statistics (server thread). */
	uint64_t requests, notifications, values_notified, bytes_in, bytes_out, errors;
	uint64_t connections_total, rejected_connections, busy_sets;
};

/* server.c */
void client_free(struct server *s, struct client *c);
void client_update_events(struct server *s, struct client *c);
/* An ERROR into @b (its send buffer, or where reply_buf() says). */
void send_error_to(struct server *s, struct client *c, struct pbus_wire_buf *b, uint32_t id, int code,
		   const char *message);
void send_error(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Where a reply to @c goes now: its send buffer, or held behind a SET reply
 * that waits for a save. */
static inline struct pbus_wire_buf *reply_buf(struct client *c)
{
	return c->acks ? &c->held : &c->tx;
}

/* The client's requests wait in its socket: a SET of it is parked, or too
 * much is held behind SET replies that wait for a save. */
static inline bool client_paused(const struct client *c)
{
	return c->parked || c->ack_count >= PENDING_ACKS_MAX || c->held.size > HELD_REPLIES_MAX;
}

/* A protocol violation: an ERROR, then the connection is closed. */
void reject(struct server *s, struct client *c, uint32_t id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void client_read(struct server *s, struct client *c);
struct client *client_new(struct server *s, int fd, const struct ucred *cred);
void service_clients(struct server *s);
int server_prepare(struct pbus_table *owner, const struct pbus_schema *schema,
			  const char *schema_text, size_t schema_length, const char *instance,
			  const struct server_options *o, struct server **ret);

/* access.c */
bool uid_privileged(uid_t uid);
struct uid_share *find_share(struct server *s, uid_t uid);
bool readable(const struct server *s, uint32_t index);
int write_right(const struct server *s, const struct client *c, uint32_t index);
int admit(struct server *s, struct client *c, char *why, size_t size);

/* watcher.c */
void *watcher_main(void *arg);
void kick(int fd);
void drain_fd(int fd);
void wake_watcher(struct server *s);
void update_watch_set(struct server *s);

/* subscribe.c */
void free_subscription(struct subscription *sub);
int64_t notify_client(struct server *s, struct client *c, int64_t now);
void collect_changes(struct server *s);
void handle_subscribe(struct server *s, struct client *c, uint32_t id, const void *body, size_t n);
void handle_unsubscribe(struct server *s, struct client *c, uint32_t id, const void *body,
			size_t n);

/* set.c */
void free_ack(struct pending_ack *a);
void free_parked(struct parked_set *p);
void check_acks(struct server *s, struct client *c, int64_t now);
bool retry_parked(struct server *s, struct client *c, int64_t now);
void handle_set(struct server *s, struct client *c, uint32_t id, unsigned flags, const void *body,
		size_t n);
/* Take pbus-hwd's reports off the pipe into applied_seq[] / failed_seq[]
 * (the acknowledgements that wait for them are checked after). */
void read_hwd_reports(struct server *s);

/* registry.c */
void handle_service_register(struct server *s, struct client *c, uint32_t id, const void *body, size_t n);
void handle_service_unregister(struct server *s, struct client *c, uint32_t id, const void *body,
			       size_t n);
void handle_service_lookup(struct server *s, struct client *c, uint32_t id, const void *body, size_t n);
void handle_service_unwatch(struct server *s, struct client *c, uint32_t id, const void *body, size_t n);
/* @c closes: its watches end, its registrations too (their watchers told). */
void registry_client_closed(struct server *s, struct client *c);
/* Free the whole registry (the server stops). */
void registry_free(struct server *s);
/* "services": [...], "service_watches": N of STATS, appended to @json. */
void registry_stats(const struct server *s, struct pbus_wire_buf *json);

/* listen.c */
void accept_clients(struct server *s);
void resume_accepting(struct server *s, int64_t now);
int listen_on(struct server *s, const char *dir_option);

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

#endif
