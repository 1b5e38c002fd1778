/* SPDX-License-Identifier: MIT */
/*
 * parambus/client.h: the parameter server's client, for programs that talk
 * to pbusd over its socket (docs/socket-protocol.md) instead of mapping the
 * table: get and set (atomic batches, checked for access rights by the
 * server), and subscriptions with coalescing notifications.
 *
 * Made for event loops: pbus_client_fd() is one descriptor that never
 * changes for the client's life — put it in your poll/epoll set for
 * reading and call pbus_client_dispatch() when it is readable (or from time
 * to time: dispatch also runs the reconnect timer). The client reconnects
 * by itself when pbusd restarts (1 s, doubling up to 30 s between
 * attempts) and subscribes again with the same subscription ids, so a
 * callback simply sees fresh values (and first, one call with
 * PBUS_CLIENT_EVENT_DISCONNECTED, then one with ..._CONNECTED).
 *
 * The request functions (get, set, subscribe, ...) are synchronous: they
 * send, then wait up to the client's timeout for the reply. Notifications
 * that arrive meanwhile are kept and delivered by the next dispatch, never
 * from inside a request.
 *
 * Ownership and threads: the caller owns a struct pbus_client and frees it
 * with pbus_client_close(). A client is used by one thread at a time;
 * callbacks run in that thread, inside pbus_client_dispatch(), and may call
 * request functions (not pbus_client_close()).
 */
#ifndef PARAMBUS_CLIENT_H
#define PARAMBUS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <parambus/common.h>
#include <parambus/schema.h>
#include <parambus/table.h>
#include <parambus/view.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_client;

struct pbus_client_options {
	/* Socket directory; NULL: the search of docs/socket-protocol.md §1. */
	const char *socket_dir;
	/* Schema hash the program was built for (the generated
	 * <PREFIX>_SCHEMA_HASH); 0 accepts any schema. */
	uint64_t schema_hash;
	/* Shown in `pbus stat`; NULL: the program's name. At most 64 bytes. */
	const char *name;
	/* Per-request timeout in ms; 0: 5000. */
	unsigned timeout_ms;
	/* Do not reconnect after the connection is lost (requests then fail
	 * with -ENOTCONN). */
	bool no_reconnect;
};

/*
 * Connect to instance @instance's pbusd, shake hands and fetch the schema.
 * @options may be NULL. Returns 0, or -ENOENT (no socket for the instance:
 * is pbusd running?), -ECONNREFUSED, -EACCES, -EPERM (the socket is served
 * by a user who is not a trusted owner: not root, not the caller's
 * effective uid, not one named in $PBUS_OWNER; nothing was sent to it),
 * -ESTALE (another schema), -EPROTONOSUPPORT, -ETIMEDOUT, -EPROTO, -ENOMEM.
 * On success the caller owns *ret_client. Every connection, reconnects
 * included, checks the server's uid (SO_PEERCRED) before it sends anything:
 * a reconnect to an untrusted server fails like one to no server.
 */
PBUS_API int pbus_client_connect(const char *instance, const struct pbus_client_options *options,
				 struct pbus_client **ret_client);

/*
 * Where a client of @instance connects (@socket_dir as in struct
 * pbus_client_options; NULL: the search of docs/socket-protocol.md §1),
 * into @path (@size bytes, cut to fit), and the uid of the process that
 * listens there (SO_PEERCRED), found by connecting and closing at once
 * without sending anything. For the message that explains a -EPERM of
 * pbus_client_connect(). Returns 0, or -ENOENT (no socket), -ECONNREFUSED,
 * -EAGAIN, -EINVAL, -ENAMETOOLONG.
 */
PBUS_API int pbus_client_server_uid(const char *instance, const char *socket_dir, char *path,
				    size_t size, uid_t *ret_uid);

/* Close the connection and free everything. Accepts NULL. */
PBUS_API void pbus_client_close(struct pbus_client *client);

/* The descriptor for the caller's poll/epoll set (readable: call
 * pbus_client_dispatch()). Owned by the client; stable across reconnects. */
PBUS_API int pbus_client_fd(const struct pbus_client *client);

/*
 * Handle what arrived: deliver notifications to their callbacks, notice a
 * lost connection, reconnect when its timer is due. Never blocks. Returns
 * the number of notifications delivered (>= 0), or -errno of a fatal error.
 */
PBUS_API int pbus_client_dispatch(struct pbus_client *client);

/* Whether the client is connected now. */
PBUS_API bool pbus_client_connected(const struct pbus_client *client);

/* The instance's compiled schema (names, types, limits), as the server sent
 * it at the first connect; valid until pbus_client_close(). */
PBUS_API const struct pbus_schema *pbus_client_schema(const struct pbus_client *client);

/*
 * What the schema says of a parameter: pbus_client_find(), _describe(),
 * _enumerator(), _parse() and _format() are shorthands for the client's
 * schema view (parambus/view.h, pbus_client_view()), with the same answers
 * and error codes; the view also has the enum lookups by label and value.
 */

/* Index of parameter @name; -ENOENT if there is none. pbus_view_find(). */
PBUS_API int pbus_client_find(const struct pbus_client *client, const char *name,
			      uint32_t *ret_index);

/* A value as received. */
struct pbus_client_value {
	uint32_t index;
	uint32_t status;       /* enum pbus_status */
	uint64_t timestamp_ns; /* CLOCK_REALTIME of the write */
	uint64_t seq;
	uint32_t length;       /* bytes at value */
	const void *value;     /* stored encoding; valid until the next call on the client */
};

/*
 * Read @count parameters in one request. values[i] receives parameter
 * indexes[i]. Returns 0, or -ENOENT / -EACCES (see the protocol's GET),
 * -ENOTCONN, -ETIMEDOUT, -EPROTO.
 */
PBUS_API int pbus_client_get(struct pbus_client *client, const uint32_t *indexes, size_t count,
			     struct pbus_client_value *values);

/*
 * Write @count parameters as one atomic batch: all or none. Uses .index,
 * .value, .length of each struct pbus_write (status and timestamp are the
 * server's: ok, now) and fills .result and .seq. Returns 0, or the first
 * refusal (-EPERM, -EACCES, -ERANGE, -EINVAL, -EMSGSIZE, -ENOENT) with each
 * write's own .result; -EBUSY if another writer held a parameter for a
 * second (that write's .result is -EBUSY; nothing was written: try again
 * later); or -ENOTCONN, -ETIMEDOUT, -EPROTO. Persistent parameters are on
 * disk when it returns 0.
 */
PBUS_API int pbus_client_set(struct pbus_client *client, struct pbus_write *writes, size_t count);

/* Flags of pbus_client_set_flags(). */
enum pbus_client_set_flag {
	/*
	 * Return once the hardware has the values: each written parameter
	 * that has an output binding (hw=gpio-output, pwm-duty) run by
	 * pbus-hwd is applied to its device, at this version or a later one
	 * (docs/socket-protocol.md §3.3, "Applied"). Parameters without one,
	 * and every parameter while pbusd runs no pbus-hwd (--no-hardware, or
	 * given up), do not wait.
	 */
	PBUS_CLIENT_SET_APPLIED = 1u << 0,
};

/*
 * pbus_client_set() with @flags (a bitwise OR of enum pbus_client_set_flag;
 * 0 is pbus_client_set()). With PBUS_CLIENT_SET_APPLIED two more results
 * come after the values were written, every .seq non-zero: -EIO (pbus-hwd
 * failed to apply a write: the device is missing or failing; that write's
 * .result is -EIO) and -ETIMEDOUT (no word from pbus-hwd within pbusd's
 * --apply-timeout, 1 s by default; that write's .result is -ETIMEDOUT).
 * The values stay in the table either way. A -ETIMEDOUT with every .seq 0
 * is the client's own timeout (no reply), as for pbus_client_set().
 * -EINVAL for an unknown flag.
 */
PBUS_API int pbus_client_set_flags(struct pbus_client *client, struct pbus_write *writes, size_t count,
				   unsigned flags);

/*
 * Parse @text as a value of parameter @index (as pbus_param_parse() does for
 * a table) into @buf; *ret_length gets its length. -EINVAL, -ERANGE,
 * -EMSGSIZE, -ENOENT. pbus_view_parse() of the client's view.
 */
PBUS_API int pbus_client_parse(const struct pbus_client *client, uint32_t index, const char *text,
			       void *buf, size_t size, size_t *ret_length);

/* Format a value of parameter @index as text, snprintf-style.
 * pbus_view_format() of the client's view. */
PBUS_API int pbus_client_format(const struct pbus_client *client, uint32_t index, const void *value,
				size_t length, char *buf, size_t size);

/*
 * Added for programs that show or check values before sending them (pbus
 * set names the limits in its messages): parameter @index's description
 * from the schema, as pbus_param_describe() gives it for a table; its
 * strings are valid until pbus_client_close(). -ENOENT if out of range.
 * pbus_view_describe() of the client's view.
 */
PBUS_API int pbus_client_describe(const struct pbus_client *client, uint32_t index,
				  struct pbus_param_info *ret_info);

/* The @i-th enumerator of enum parameter @index, as pbus_param_enumerator();
 * -ENOENT if absent, -EINVAL if not an enum. The label is valid until
 * pbus_client_close(). pbus_view_enumerator() of the client's view. */
PBUS_API int pbus_client_enumerator(const struct pbus_client *client, uint32_t index, uint32_t i,
				    const char **ret_label, int32_t *ret_value);

enum pbus_client_event {
	PBUS_CLIENT_EVENT_VALUES = 1,       /* values of the subscription changed */
	PBUS_CLIENT_EVENT_DISCONNECTED = 2, /* the connection was lost; reconnecting */
	PBUS_CLIENT_EVENT_CONNECTED = 3     /* connected again, subscription renewed */
};

/* A subscription's callback: @values (@count of them) for EVENT_VALUES,
 * none for the others. The values are valid during the call only. */
typedef void (*pbus_client_notify_fn)(struct pbus_client *client, uint32_t subscription,
				      enum pbus_client_event event,
				      const struct pbus_client_value *values, size_t count,
				      void *userdata);

struct pbus_subscribe_options {
	/* At most one notification per interval (0: no limit); a change
	 * within it is deferred to its end, not dropped. */
	uint32_t min_interval_us;
	double deadband;          /* ignore smaller changes of numeric scalars; 0: none */
};

/*
 * Subscribe to @count parameters; @options may be NULL (no limit, no
 * deadband). The first callback brings every parameter's current value.
 * *ret_subscription gets the id (never 0). Returns 0, or -EACCES, -ENOENT,
 * -EMFILE (too many subscriptions), -ENOTCONN, -ETIMEDOUT.
 */
PBUS_API int pbus_client_subscribe(struct pbus_client *client, const uint32_t *indexes, size_t count,
				   const struct pbus_subscribe_options *options,
				   pbus_client_notify_fn callback, void *userdata,
				   uint32_t *ret_subscription);

/* Every parameter whose name starts with @prefix ("" for all that may be
 * subscribed); -ENOENT if none. */
PBUS_API int pbus_client_subscribe_prefix(struct pbus_client *client, const char *prefix,
					  const struct pbus_subscribe_options *options,
					  pbus_client_notify_fn callback, void *userdata,
					  uint32_t *ret_subscription);

PBUS_API int pbus_client_unsubscribe(struct pbus_client *client, uint32_t subscription);

/* The server's statistics as JSON text (docs/socket-protocol.md §7), in
 * @buf; snprintf-style return, or -errno. Each call is one request, one
 * sample: a second call to learn the length gets another text (a counter
 * may have grown a digit); pbus_client_stats_text() takes any length at
 * once. */
PBUS_API int pbus_client_stats(struct pbus_client *client, char *buf, size_t size);

/* The server's statistics as JSON text, with one request whatever its
 * length: *ret_json gets a NUL-terminated string that the caller frees with
 * free(). 0, or -errno (as pbus_client_stats()). */
PBUS_API int pbus_client_stats_text(struct pbus_client *client, char **ret_json);

/* A PING of @length bytes and its PONG: the bare round trip, for
 * benchmarks. 0 or -errno. */
PBUS_API int pbus_client_ping(struct pbus_client *client, const void *data, size_t length);

/* ======================================================================
 * Services: pbusd as the registry of method servers
 * (docs/socket-protocol.md §3.6, docs/api-guide.md)
 * ====================================================================== */

/*
 * A server of a Franca interface registers its address with the pbusd of
 * its instance; clients look the address up there and connect to the
 * server's endpoint themselves. An address is "local:INSTANCE:INTERFACE"
 * ("local:psu/ch2:com.example.psu.PowerSupply"): the domain "local";
 * INSTANCE, 1..64 bytes of letters, digits, '_', '-', '.' and '/', whose
 * part before the first '/' is the name of the pbusd instance that is the
 * registry (a client registers and looks up only with the pbusd it is
 * connected to); INTERFACE, identifiers [A-Za-z_][A-Za-z0-9_]* joined by
 * '.'; at most 255 bytes in all. An endpoint is the name of an abstract
 * Unix socket without its leading NUL byte, 1..107 bytes.
 *
 * Nobody can pose as a registered server: a client that connects to the
 * endpoint checks that the peer's SO_PEERCRED pid and uid are those
 * pbusd recorded (struct pbus_service_info's pid and uid), and only root
 * and pbusd's own user may register (docs/security.md).
 */
#define PBUS_SERVICE_ADDRESS_MAX 255
#define PBUS_SERVICE_INSTANCE_MAX 64
#define PBUS_SERVICE_ENDPOINT_MAX 107

/*
 * The registry's instance name of @address (its instance up to the first
 * '/': "psu" for "local:psu/ch2:com.example.psu.PowerSupply") into
 * @registry, NUL-terminated. 0, or -EINVAL: @address is not a valid
 * service address, or @size is too small (PBUS_SERVICE_INSTANCE_MAX + 1
 * always suffices). Any thread.
 */
PBUS_API int pbus_service_address_registry(const char *address, char *registry, size_t size);

/* A service as the registry knows it. */
struct pbus_service_info {
	bool available;        /* registered now; all below 0 or empty if not */
	uint32_t major, minor; /* the interface version the server implements */
	pid_t pid;             /* the registering process (SO_PEERCRED) */
	uid_t uid;             /* its user */
	char address[PBUS_SERVICE_ADDRESS_MAX + 1];
	char endpoint[PBUS_SERVICE_ENDPOINT_MAX + 1]; /* without the leading NUL */
};

/* A watch's callback, from pbus_client_dispatch(): @info is valid during
 * the call only. */
typedef void (*pbus_client_service_fn)(struct pbus_client *client, const struct pbus_service_info *info,
				       void *userdata);

/*
 * Register @address, served at abstract socket @endpoint by this process,
 * implementing version @major.@minor of its interface. The client
 * remembers it and registers it again after every reconnect (a renewal
 * refused, e.g. because another server took the address while pbusd was
 * down, is reported once by pbus_client_dispatch() as its -EADDRINUSE;
 * the registration stays remembered and is tried again at the next
 * reconnect). Registering an address this client holds again updates its
 * version and endpoint. The registration ends with
 * pbus_client_unregister_service(), pbus_client_close() or the end of the
 * process. Returns 0, or -EINVAL (a malformed address or endpoint, or one
 * whose registry is not this client's instance), -EPERM (only root and
 * pbusd's user may register), -EADDRINUSE (another connection holds the
 * address), -EMFILE (too many registrations: 64 per connection, pbusd's
 * --max-services in all), -ENOTCONN, -ETIMEDOUT. After -ETIMEDOUT the
 * address is not remembered, though pbusd may have registered it:
 * pbus_client_unregister_service() undoes that.
 */
PBUS_API int pbus_client_register_service(struct pbus_client *client, const char *address,
					  uint32_t major, uint32_t minor, const char *endpoint);

/* Forget @address and unregister it with pbusd (if connected). 0, or
 * -ENOENT (neither remembered nor registered by this client), -EINVAL,
 * -ETIMEDOUT. */
PBUS_API int pbus_client_unregister_service(struct pbus_client *client, const char *address);

/* Ask pbusd for @address's registration now, into *@ret_info (available
 * false if nobody serves it). 0, or -EINVAL, -ENOTCONN, -ETIMEDOUT. */
PBUS_API int pbus_client_lookup_service(struct pbus_client *client, const char *address,
					struct pbus_service_info *ret_info);

/*
 * Watch @address: @fn runs from pbus_client_dispatch() first with its
 * state now, then after every change (registered, replaced, unregistered,
 * its server's connection closed), and after every reconnect with the state
 * then (the watch is renewed). Changes that arrive during a request are
 * kept for the next dispatch, like notifications. Watching an address this
 * client watches already replaces @fn and @userdata (and brings the state
 * again). 0, or -EINVAL, -EMFILE (more watches than pbusd's
 * --max-subscriptions), -ENOTCONN, -ETIMEDOUT.
 */
PBUS_API int pbus_client_watch_service(struct pbus_client *client, const char *address,
				       pbus_client_service_fn fn, void *userdata);

/* Stop watching @address: no callback for it after this returns. 0, or
 * -ENOENT (not watched), -EINVAL. */
PBUS_API int pbus_client_unwatch_service(struct pbus_client *client, const char *address);

#ifdef __cplusplus
}
#endif

#endif
