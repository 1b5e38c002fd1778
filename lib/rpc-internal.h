/* SPDX-License-Identifier: MIT */
/*
 * rpc-internal.h: what the files of the method runtime share (parambus/rpc.h,
 * docs/methods.md). rpc-loop.c: the event loop (descriptors, timers, jobs
 * posted from other threads); rpc-registry.c: a loop's connections to
 * pbusd as the registry of servers (one per pbusd, shared by the loop's
 * proxies and stubs); rpc-stub.c: servers (their socket, connections,
 * calls, broadcasts) and the process's table of in-process servers;
 * rpc-proxy.c: proxies (connecting, calls from any thread, async calls,
 * broadcasts, availability, reconnecting).
 *
 * Threads. The loop's dispatch runs in one thread (the loop thread); what
 * other threads may touch is named per struct below.
 */
#ifndef PBUS_RPC_INTERNAL_H
#define PBUS_RPC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <parambus/client.h>
#include <parambus/rpc.h>

#include "protocol-internal.h"

#define RPC_PROTOCOL_VERSION 1
#define RPC_TIMEOUT_DEFAULT_MS 5000
#define RPC_MAX_FRAME (1u << 20)
#define RPC_ENDPOINT_MAX 107      /* an abstract socket name, without its NUL */
#define RPC_INSTANCE_MAX 64
#define RPC_OUT_LIMIT (4u << 20)  /* bytes queued to one peer before it is dropped */

/* --- the loop (rpc-loop.c) ------------------------------------------------ */

/* A descriptor the loop watches. Set up and removed by its owner (from any
 * thread); @ready runs in the loop thread. A source removed gets no more
 * events, not even those of the round in progress. */
struct loop_source {
	int fd;
	void (*ready)(struct loop_source *source, uint32_t events);
	bool removed;
	uint32_t slot, gen; /* the loop's */
};

struct loop_slot {
	struct loop_source *source; /* NULL: free */
	uint32_t gen;
};

/* A one-shot timer: @expired runs in the loop thread at or after @at_ns
 * (CLOCK_MONOTONIC). Armed and cancelled from any thread. */
struct loop_timer {
	int64_t at_ns; /* 0: not armed */
	void (*expired)(struct loop_timer *timer);
	struct loop_timer *next;
};

/* Work handed to the loop thread from any thread. */
struct loop_job {
	void (*run)(struct loop_job *job);
	struct loop_job *next;
	bool queued;
};

struct registry;

struct pbus_loop {
	int epoll_fd, event_fd, timer_fd;
	struct loop_source event_source, timer_source;
	pthread_mutex_t lock; /* slots, timers, jobs, registries */
	pthread_mutex_t dispatch_lock; /* held by a dispatch round (recursive) */
	struct loop_slot *slots;
	size_t slot_count, slot_capacity;
	struct loop_timer *timers; /* armed, unordered */
	int64_t timer_armed_ns;    /* what timer_fd is set to; 0: disarmed */
	struct loop_job *jobs, **jobs_tail;
	struct registry *registries;
	atomic_bool quit;
	pthread_t thread;    /* the thread in dispatch, while dispatching */
	atomic_bool in_dispatch;
};

int pbus_loop_add(struct pbus_loop *loop, struct loop_source *source, uint32_t events);
int pbus_loop_modify(struct pbus_loop *loop, struct loop_source *source, uint32_t events);
void pbus_loop_remove(struct pbus_loop *loop, struct loop_source *source);
void pbus_loop_timer_set(struct pbus_loop *loop, struct loop_timer *timer, int64_t at_ns);
void pbus_loop_timer_cancel(struct pbus_loop *loop, struct loop_timer *timer);
/* Queue @job (once: a job already queued stays queued) and wake the loop. */
void pbus_loop_post(struct pbus_loop *loop, struct loop_job *job);
/* Drop @job if it is queued (e.g. its owner is being freed). */
void pbus_loop_unpost(struct pbus_loop *loop, struct loop_job *job);
/* Hold off dispatch rounds (none runs meanwhile, and the one running is
 * waited for): around freeing an object whose sources, jobs or timers are
 * on the loop. Recursive: a callback may free objects too. */
void pbus_loop_lock_dispatch(struct pbus_loop *loop);
void pbus_loop_unlock_dispatch(struct pbus_loop *loop);
/* A mutex its holder may take again (the dispatch lock, a stub's call lock). */
void rpc_mutex_init_recursive(pthread_mutex_t *m);
/* Whether the calling thread is the loop's dispatching thread. */
bool pbus_loop_in_thread(struct pbus_loop *loop);

/* --- addresses ------------------------------------------------------------- */

/* Check "domain:instance:interface" (docs/methods.md §2): 0 with the
 * registry's instance name (the instance up to its first '/') in
 * @registry, or -EINVAL with pbus_rpc_last_error() saying why. */
int rpc_address_parse(const char *address, char *registry, size_t size);

/* Record the text of a failure for pbus_rpc_last_error(); returns @error. */
int rpc_fail(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- the registry (rpc-registry.c) ----------------------------------------- */

/* A service's state as pbusd tells it. */
struct rpc_service {
	bool available;
	uint32_t major, minor;
	pid_t pid;
	uid_t uid;
	char endpoint[RPC_ENDPOINT_MAX + 1];
};

/* Someone interested in an address's service: @changed runs in the loop
 * thread after a (re)connect to pbusd and on every change. */
struct registry_watch {
	char address[PBUS_RPC_ADDRESS_MAX + 1];
	void (*changed)(struct registry_watch *watch, const struct rpc_service *service);
	struct registry_watch *next;
	struct registry *registry;
};

/* The loop's connection to pbusd @instance (found or made); a reference
 * is taken, given back with registry_put(). Thread-safe. */
int registry_get(struct pbus_loop *loop, const char *socket_dir, const char *instance,
		 struct registry **ret);
void registry_put(struct registry *reg);
/* Synchronous requests to pbusd, thread-safe. */
int registry_lookup(struct registry *reg, const char *address, struct rpc_service *ret);
int registry_register(struct registry *reg, const char *address, uint32_t major, uint32_t minor,
		      const char *endpoint);
void registry_unregister(struct registry *reg, const char *address);
int registry_watch(struct registry *reg, struct registry_watch *watch);
void registry_unwatch(struct registry *reg, struct registry_watch *watch);

/* --- the stub's side, seen by proxies (rpc-stub.c) ------------------------- */

struct pbus_caller {
	uint64_t id;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups at connect */
	size_t group_count;
	char name[PBUS_WIRE_NAME_MAX + 1];
	struct pbus_rpc_arena *arena; /* NULL for an in-process caller: the thread's */
};

/* With pbus_rpc_local_lock held: the in-process server of @address for
 * @itf with a reference taken (stub_local_put() gives it back, without the
 * lock), or NULL. */
struct pbus_stub *stub_local_find_locked(const char *address, const struct pbus_rpc_interface *itf);
void stub_local_put(struct pbus_stub *stub);
/* With pbus_rpc_local_lock held: take a reference if @stub serves @itf and
 * is alive (true), or not (false); give one back (never the last). */
bool stub_local_ref_locked(struct pbus_stub *stub, const struct pbus_rpc_interface *itf);
void stub_local_unref_locked(struct pbus_stub *stub);
/* The in-process proxy @proxy subscribes to / unsubscribes from @broadcast
 * of @stub. */
int stub_local_subscribe(struct pbus_stub *stub, struct pbus_proxy *proxy, unsigned broadcast,
			 bool subscribe);
/* A stub's generated server object and whether it still serves; its calls
 * in flight, counted by proxies. */
void *stub_server(struct pbus_stub *stub);
/* Held around every call of the server's functions (recursive). */
pthread_mutex_t *stub_call_lock(struct pbus_stub *stub);
atomic_uint *stub_inflight(struct pbus_stub *stub);
bool stub_alive(struct pbus_stub *stub);

/* --- the proxy's side, seen by stubs (rpc-proxy.c) ------------------------- */

/* Deliver an in-process broadcast to @proxy (in the firing thread). */
void proxy_local_deliver(struct pbus_proxy *proxy, unsigned broadcast, const void *local_args);
/* The in-process server @stub is going away: every proxy bound to it
 * lets go, once its calls in flight have returned. */
void proxy_local_gone(struct pbus_stub *stub);
/* A new in-process server for @address: proxies waiting for it bind.
 * Both with pbus_rpc_local_lock held. */
void proxy_local_appeared(const char *address, struct pbus_stub *stub);

/* The process-wide lock of in-process servers and their proxies. */
extern pthread_mutex_t pbus_rpc_local_lock;


#endif
