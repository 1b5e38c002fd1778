/* SPDX-License-Identifier: MIT */
/*
 * client-internal.h: what the files of the client library share: struct
 * pbus_client and the functions one file offers the others. client.c: the
 * public requests (connect, get, set, stats, ping) and the schema's
 * descriptions (answered by the client's schema view, view.c);
 * client-connection.c: the connection machinery (sending,
 * receiving, matching replies to requests, reconnecting, waiting for a
 * reply); client-subscribe.c: subscriptions, the queue of notifications and
 * dispatch; client-service.c: services registered and watched
 * (docs/socket-protocol.md §3.6), renewed like subscriptions.
 *
 * A client is one connection to pbusd's socket (docs/socket-protocol.md),
 * renewed by itself when pbusd restarts.
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
 * time, but a reconnect sends HELLO, every SUBSCRIBE, every
 * SERVICE_REGISTER and every watching SERVICE_LOOKUP in one go and takes
 * the replies as dispatch finds them, so that dispatch never waits for the
 * server. The server answers requests in order, so a FIFO of what was sent
 * (struct pending) tells what each reply belongs to. A request that timed
 * out stays in the FIFO, abandoned, so that its late reply is recognised
 * and dropped instead of being taken for the answer to the next one.
 *
 * The queue. Notifications that arrive while a request waits, and the
 * DISCONNECTED / CONNECTED events, are copied into a queue, in order, as
 * frames whose id is the client's subscription id (the server's ids change
 * with every connection; the client's never do); a watched service's
 * states likewise, as SERVICE frames whose id is the client's watch id. Dispatch swaps the queue
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
#ifndef PBUS_CLIENT_INTERNAL_H
#define PBUS_CLIENT_INTERNAL_H

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
#include "view-internal.h"

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
	PENDING_REREGISTER,  /* a service registered again after a reconnect */
	PENDING_REWATCH,     /* a service watched again after a reconnect */
	PENDING_REQUEST,     /* the caller's request, waited for now */
	PENDING_ABANDONED    /* a request that timed out: its reply is dropped */
};

/* The renewals a reconnect sends with its HELLO: the caller's requests
 * wait for their replies (the handshake counts them). */
static inline bool pending_in_handshake(unsigned kind)
{
	return kind == PENDING_HELLO || kind == PENDING_RESUBSCRIBE || kind == PENDING_REREGISTER ||
	       kind == PENDING_REWATCH;
}

/* One frame sent whose reply has not come yet. */
struct pending {
	uint32_t id;
	uint16_t kind;         /* enum pending_kind */
	uint16_t request_type; /* the frame's type; its reply is this + 1 */
	/* The client's id of what the reply is about: a subscription (SUBSCRIBE,
	 * RESUBSCRIBE), a registration (REREGISTER), a watch (REWATCH, and a
	 * caller's watching SERVICE_LOOKUP); 0: none. */
	uint32_t subscription;
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

/* A service this client registered: registered again after a reconnect. */
struct client_service {
	uint32_t id;     /* the client's, never 0 */
	bool registered; /* on the current connection */
	uint32_t major, minor;
	char address[PBUS_SERVICE_ADDRESS_MAX + 1];
	char endpoint[PBUS_SERVICE_ENDPOINT_MAX + 1];
};

/* An address this client watches: watched again after a reconnect. */
struct client_service_watch {
	uint32_t id;     /* the client's, never 0: the queue's frames name it */
	bool active;     /* watched on the current connection */
	char address[PBUS_SERVICE_ADDRESS_MAX + 1];
	pbus_client_service_fn callback;
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

	/* The schema of the first connection, and its view (what
	 * pbus_client_describe() and the like answer from). */
	struct pbus_schema *schema;
	struct pbus_view *view;
	uint64_t schema_hash;

	struct subscription *subs;
	size_t sub_count, sub_capacity;
	uint32_t next_subscription_id;

	struct client_service *services;
	size_t service_count, service_capacity;
	struct client_service_watch *watches;
	size_t watch_count, watch_capacity;
	uint32_t next_service_id; /* for both */

	struct pbus_wire_buf queue, delivering;
	struct pbus_client_value *values; /* param_count of them, for callbacks */
	bool dispatching;
};

/* client-subscribe.c */
struct subscription *pbus_client_subscription(struct pbus_client *c, uint32_t id);
int pbus_client_queue_event(struct pbus_client *c, unsigned type, uint32_t subscription);
int pbus_client_handle_notify(struct pbus_client *c, const unsigned char *body, size_t n);
int pbus_client_deliver(struct pbus_client *c);

/* client-service.c */
/* Encode the renewals of every registration and watch into c->out (after
 * a reconnect's HELLO). */
int pbus_client_put_service_renewals(struct pbus_client *c);
/* The reply to a REREGISTER or REWATCH. */
int pbus_client_handle_service_renewal(struct pbus_client *c, const struct pending *p, unsigned type,
				       const void *body, size_t n);
/* The reply to the caller's watching SERVICE_LOOKUP, the moment it is
 * read: the watch is active, its state queued. */
int pbus_client_service_watched(struct pbus_client *c, uint32_t watch, const void *body, size_t n);
/* The late reply to a SERVICE_LOOKUP whose caller gave up. */
int pbus_client_service_abandoned(struct pbus_client *c, const struct pending *p, unsigned type,
				  const void *body, size_t n);
/* A SERVICE notification (id 0). */
int pbus_client_handle_service_notify(struct pbus_client *c, const void *body, size_t n);
/* A queued SERVICE event for watch @watch: call back; false if the watch is gone. */
bool pbus_client_deliver_service(struct pbus_client *c, uint32_t watch, const void *body, size_t n);
void pbus_client_services_lost(struct pbus_client *c);
void pbus_client_services_free(struct pbus_client *c);

/* client-connection.c */
/* The id of the next frame sent (never 0). */
uint32_t pbus_client_next_request_id(struct pbus_client *c);
int pbus_client_push_pending(struct pbus_client *c, struct pending p);
void pbus_client_update_timer(struct pbus_client *c);
int pbus_client_flush(struct pbus_client *c);
int pbus_client_receive(struct pbus_client *c, int budget);
void pbus_client_connection_lost(struct pbus_client *c);
int pbus_client_find_socket(const char *socket_dir, const char *instance, struct sockaddr_un *sa);
int pbus_client_connect_socket(const struct sockaddr_un *sa, uid_t *ret_uid);
int pbus_client_put_subscribe(struct pbus_wire_buf *b, uint32_t id, const struct subscription *s);
int pbus_client_start_reconnect(struct pbus_client *c, bool scheduled);
int pbus_client_transact(struct pbus_client *c, uint32_t subscription, bool may_resend);
struct pbus_wire_buf *pbus_client_request_buf(struct pbus_client *c);
int pbus_client_finish(struct pbus_client *c, int r);
int pbus_client_first_connect(struct pbus_client *c);
/* A request of @type with an empty body whose reply is one str (SCHEMA_GET,
 * STATS_GET): 0 with *ret_text in the reply buffer (valid until the next
 * request), or pbus_client_transact()'s error, or -EPROTO. */
int pbus_client_str_request(struct pbus_client *c, unsigned type, bool may_resend,
			    struct pbus_proto_str *ret_text);

#endif
