/* SPDX-License-Identifier: MIT */
/*
 * parambus/rpc.h: methods and broadcasts of Franca interfaces (docs/methods.md).
 *
 * The runtime under the code that pbus-gen generates per interface
 * (<prefix>_client_<Iface>_* proxies, <prefix>_server_<Iface>_* stubs):
 * applications call the generated functions and use this header for the
 * event loop (struct pbus_loop), the caller of a method on the server side
 * (struct pbus_caller) and memory of variable-size results (struct
 * pbus_rpc_arena). The rest (argument buffers and readers, struct
 * pbus_proxy and struct pbus_stub) is what generated code calls.
 *
 * Addresses are "domain:instance:interface" ("local:psu:com.example.psu.
 * PowerSupply"). The domain is "local" (this machine). The instance's part
 * before its first '/' names the pbusd instance that is the registry: a
 * stub registers there, a proxy looks its server up there; the calls
 * themselves go straight between the two processes over the server's own
 * socket, or, when both live in one process, straight into the server's
 * functions with nothing encoded.
 *
 * Threads (stated for every object below):
 *  - struct pbus_loop: pbus_loop_dispatch()/run() in one thread at a time
 *    (the loop thread); pbus_loop_quit() from any thread.
 *  - struct pbus_proxy: every call function is safe from any number of
 *    threads at once (calls from several threads share the connection and
 *    wait for their own replies); async completions, broadcasts and
 *    availability events run in the loop thread, inside dispatch.
 *    Freeing: from any thread once no call of it is in flight (a dispatch
 *    round in progress is waited for), not inside its own callbacks.
 *  - struct pbus_stub: the server's functions run one call at a time (in
 *    the loop thread for socket clients); broadcasts may be fired from any
 *    thread. Freeing: as a proxy.
 *  - Server functions and broadcast handlers must not create or free
 *    proxies or stubs, nor make a synchronous call that only their own
 *    loop thread could answer.
 *  - In-process (server and proxy in one process): a call runs the
 *    server's function in the caller's thread, at once, still one call at
 *    a time (an async call's completion too, before the async function
 *    returns); a broadcast runs the in-process subscribers' handlers in
 *    the firing thread.
 */
#ifndef PARAMBUS_RPC_H
#define PARAMBUS_RPC_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <parambus/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * The event loop
 * ====================================================================== */

struct pbus_loop;

/* A new loop; the caller frees it with pbus_loop_free() after every proxy
 * and stub on it. */
PBUS_API int pbus_loop_new(struct pbus_loop **ret_loop);
/* The process's default loop, made on first use (thread-safe), never
 * freed; NULL if it could not be made. Proxies and stubs made without a
 * loop use it. */
PBUS_API struct pbus_loop *pbus_loop_default(void);
PBUS_API void pbus_loop_free(struct pbus_loop *loop);
/* One descriptor for the application's own poll/epoll: readable whenever
 * pbus_loop_dispatch() has work. Never changes for the loop's life. */
PBUS_API int pbus_loop_fd(const struct pbus_loop *loop);
/* Wait up to @timeout_ms (0: not at all, -1: forever) for work and do it:
 * accept and serve calls, deliver replies, broadcasts and availability
 * events, reconnect. Returns the number of events handled, or a negative
 * errno. */
PBUS_API int pbus_loop_dispatch(struct pbus_loop *loop, int timeout_ms);
/* Dispatch until pbus_loop_quit(); returns 0, or dispatch's error. */
PBUS_API int pbus_loop_run(struct pbus_loop *loop);
/* Make pbus_loop_run() return (from any thread, or a callback); a quit
 * that comes while the loop is not running makes its next run return at
 * once. */
PBUS_API void pbus_loop_quit(struct pbus_loop *loop);

/* ======================================================================
 * Memory for variable-size values
 * ====================================================================== */

/*
 * An arena: decoded strings, byte buffers, arrays and maps live in one,
 * and go all at once. Reset keeps its first block, so a program that resets
 * one per call allocates nothing in the steady state.
 */
struct pbus_rpc_arena;

PBUS_API struct pbus_rpc_arena *pbus_rpc_arena_new(void);
PBUS_API void pbus_rpc_arena_reset(struct pbus_rpc_arena *arena);
PBUS_API void pbus_rpc_arena_free(struct pbus_rpc_arena *arena);
/* @size bytes, zeroed, aligned for any type; NULL when out of memory. */
PBUS_API void *pbus_rpc_arena_alloc(struct pbus_rpc_arena *arena, size_t size);
/* A copy of @text in the arena; NULL when out of memory. */
PBUS_API char *pbus_rpc_arena_strdup(struct pbus_rpc_arena *arena, const char *text);

/* Franca ByteBuffer. */
struct pbus_rpc_bytes {
	const uint8_t *data;
	uint32_t size;
};

/* ======================================================================
 * The caller of a method (server side)
 * ====================================================================== */

/* Who called: valid during the server function it is given to. */
struct pbus_caller;

/* Unique among the callers of one server for the server's life (a
 * connection, or an in-process proxy); what selective broadcasts name. */
PBUS_API uint64_t pbus_caller_id(const struct pbus_caller *caller);
/* The peer's credentials at connect (SO_PEERCRED); the process's own for
 * an in-process caller. */
PBUS_API pid_t pbus_caller_pid(const struct pbus_caller *caller);
PBUS_API uid_t pbus_caller_uid(const struct pbus_caller *caller);
PBUS_API gid_t pbus_caller_gid(const struct pbus_caller *caller);
/* The name the client gave (its program's name by default). */
PBUS_API const char *pbus_caller_name(const struct pbus_caller *caller);
/* Memory for the variable-size out-arguments of this call: freed after
 * the reply is sent. */
PBUS_API struct pbus_rpc_arena *pbus_caller_arena(const struct pbus_caller *caller);

/* ======================================================================
 * For generated code: the interface, argument encoding, proxies, stubs
 * ====================================================================== */

/* Limits of docs/methods.md §4. */
#define PBUS_RPC_MAX_DEPTH 64        /* nesting of decoded values */
#define PBUS_RPC_INLINE_SIZE 256     /* bytes of a buffer kept inline (on the stack) */
#define PBUS_RPC_ADDRESS_MAX 255     /* bytes of an address */

enum pbus_rpc_method_flag {
	PBUS_RPC_FIRE_AND_FORGET = 1u << 0 /* no reply */
};

struct pbus_rpc_method {
	const char *name;
	unsigned flags;          /* enum pbus_rpc_method_flag */
	const char *callable_by; /* the group that may call it (.fdepl CallableBy), or NULL: everybody */
};

struct pbus_rpc_broadcast {
	const char *name;
	bool selective;
};

/* An interface as generated: methods and broadcasts numbered from 0 in
 * declaration order, those of a base interface (extends) first. */
struct pbus_rpc_interface {
	const char *name; /* fully qualified: "com.example.psu.PowerSupply" */
	uint32_t major, minor;
	uint16_t method_count, broadcast_count;
	const struct pbus_rpc_method *methods;
	const struct pbus_rpc_broadcast *broadcasts;
};

/* --- encoding: a growable buffer, its first PBUS_RPC_INLINE_SIZE bytes
 * inline, so a call with small arguments allocates nothing --------------- */

struct pbus_rpc_buf {
	unsigned char *data; /* inline_data, or the heap once grown */
	size_t size, capacity;
	int error; /* 0, or -ENOMEM / -EINVAL (e.g. a string not UTF-8): sticky */
	unsigned char inline_data[PBUS_RPC_INLINE_SIZE];
};

static inline void pbus_rpc_buf_init(struct pbus_rpc_buf *b)
{
	b->data = b->inline_data;
	b->size = 0;
	b->capacity = sizeof b->inline_data;
	b->error = 0;
}
/* Free what the buffer grew into (not the struct itself). */
PBUS_API void pbus_rpc_buf_release(struct pbus_rpc_buf *b);
PBUS_API unsigned char *pbus_rpc_buf_grow_(struct pbus_rpc_buf *b, size_t n);

/* @n more bytes at the end, or NULL once an error is set. */
static inline unsigned char *pbus_rpc_room(struct pbus_rpc_buf *b, size_t n)
{
	if (__builtin_expect(b->error != 0 || b->size + n > b->capacity, 0))
		return pbus_rpc_buf_grow_(b, n);
	b->size += n;
	return b->data + b->size - n;
}

static inline void pbus_rpc_put_le_(struct pbus_rpc_buf *b, uint64_t v, unsigned n)
{
	unsigned char *p = pbus_rpc_room(b, n);

	if (p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(p, &v, n);
#else
		for (unsigned i = 0; i < n; i++)
			p[i] = (unsigned char)(v >> (8 * i));
#endif
	}
}

static inline void pbus_rpc_put_bool(struct pbus_rpc_buf *b, bool v) { pbus_rpc_put_le_(b, v ? 1 : 0, 1); }
static inline void pbus_rpc_put_u8(struct pbus_rpc_buf *b, uint8_t v) { pbus_rpc_put_le_(b, v, 1); }
static inline void pbus_rpc_put_i8(struct pbus_rpc_buf *b, int8_t v) { pbus_rpc_put_le_(b, (uint8_t)v, 1); }
static inline void pbus_rpc_put_u16(struct pbus_rpc_buf *b, uint16_t v) { pbus_rpc_put_le_(b, v, 2); }
static inline void pbus_rpc_put_i16(struct pbus_rpc_buf *b, int16_t v) { pbus_rpc_put_le_(b, (uint16_t)v, 2); }
static inline void pbus_rpc_put_u32(struct pbus_rpc_buf *b, uint32_t v) { pbus_rpc_put_le_(b, v, 4); }
static inline void pbus_rpc_put_i32(struct pbus_rpc_buf *b, int32_t v) { pbus_rpc_put_le_(b, (uint32_t)v, 4); }
static inline void pbus_rpc_put_u64(struct pbus_rpc_buf *b, uint64_t v) { pbus_rpc_put_le_(b, v, 8); }
static inline void pbus_rpc_put_i64(struct pbus_rpc_buf *b, int64_t v) { pbus_rpc_put_le_(b, (uint64_t)v, 8); }
static inline void pbus_rpc_put_float(struct pbus_rpc_buf *b, float v)
{
	uint32_t bits;

	memcpy(&bits, &v, 4);
	pbus_rpc_put_le_(b, bits, 4);
}
static inline void pbus_rpc_put_double(struct pbus_rpc_buf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, 8);
	pbus_rpc_put_le_(b, bits, 8);
}
/* A count of array elements, map entries (u32). */
static inline void pbus_rpc_put_count(struct pbus_rpc_buf *b, uint32_t n) { pbus_rpc_put_le_(b, n, 4); }
/* A String: u32 length, UTF-8 bytes. NULL is "". Not UTF-8: error -EINVAL. */
PBUS_API void pbus_rpc_put_string(struct pbus_rpc_buf *b, const char *text);
/* A ByteBuffer: u32 length, the bytes. */
PBUS_API void pbus_rpc_put_bytes(struct pbus_rpc_buf *b, struct pbus_rpc_bytes v);
/* Mark the buffer failed with @error (generated code: a union's member
 * index out of range, an enumeration value that is not an enumerator). */
static inline void pbus_rpc_buf_fail(struct pbus_rpc_buf *b, int error)
{
	if (b->error == 0)
		b->error = error;
}

/* --- decoding: bounds-checked, sticky error ------------------------------ */

struct pbus_rpc_reader {
	const unsigned char *p, *end;
	int error;       /* 0, or -EPROTO (malformed) / -ENOMEM: sticky */
	unsigned depth;  /* nesting, up to PBUS_RPC_MAX_DEPTH */
	struct pbus_rpc_arena *arena; /* where variable-size values go */
};

static inline void pbus_rpc_reader_init(struct pbus_rpc_reader *r, const void *data, size_t n,
					struct pbus_rpc_arena *arena)
{
	r->p = (const unsigned char *)data;
	r->end = r->p + n;
	r->error = 0;
	r->depth = 0;
	r->arena = arena;
}

/* Mark the reader failed (-EPROTO unless given otherwise); returns false. */
static inline bool pbus_rpc_reader_fail(struct pbus_rpc_reader *r, int error)
{
	if (r->error == 0)
		r->error = error;
	return false;
}

static inline bool pbus_rpc_get_le_(struct pbus_rpc_reader *r, uint64_t *v, unsigned n)
{
	if (__builtin_expect(r->error != 0 || (size_t)(r->end - r->p) < n, 0)) {
		*v = 0;
		return pbus_rpc_reader_fail(r, -EPROTO);
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*v = 0;
	memcpy(v, r->p, n);
#else
	*v = 0;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
#endif
	r->p += n;
	return true;
}

/* Each returns true, or false with the reader failed and *v zero. */
static inline bool pbus_rpc_get_bool(struct pbus_rpc_reader *r, bool *v)
{
	uint64_t x;

	*v = false;
	if (!pbus_rpc_get_le_(r, &x, 1))
		return false;
	if (x > 1)
		return pbus_rpc_reader_fail(r, -EPROTO);
	*v = x == 1;
	return true;
}
#define PBUS_RPC_GET_INT_(name, type, utype, n)                                      \
	static inline bool pbus_rpc_get_##name(struct pbus_rpc_reader *r, type *v)     \
	{                                                                              \
		uint64_t x;                                                            \
		bool ok = pbus_rpc_get_le_(r, &x, n);                                   \
		*v = (type)(utype)x;                                                   \
		return ok;                                                             \
	}
PBUS_RPC_GET_INT_(u8, uint8_t, uint8_t, 1)
PBUS_RPC_GET_INT_(i8, int8_t, uint8_t, 1)
PBUS_RPC_GET_INT_(u16, uint16_t, uint16_t, 2)
PBUS_RPC_GET_INT_(i16, int16_t, uint16_t, 2)
PBUS_RPC_GET_INT_(u32, uint32_t, uint32_t, 4)
PBUS_RPC_GET_INT_(i32, int32_t, uint32_t, 4)
PBUS_RPC_GET_INT_(u64, uint64_t, uint64_t, 8)
PBUS_RPC_GET_INT_(i64, int64_t, uint64_t, 8)
#undef PBUS_RPC_GET_INT_
static inline bool pbus_rpc_get_float(struct pbus_rpc_reader *r, float *v)
{
	uint64_t x;
	bool ok = pbus_rpc_get_le_(r, &x, 4);
	uint32_t bits = (uint32_t)x;

	memcpy(v, &bits, 4);
	return ok;
}
static inline bool pbus_rpc_get_double(struct pbus_rpc_reader *r, double *v)
{
	uint64_t x;
	bool ok = pbus_rpc_get_le_(r, &x, 8);

	memcpy(v, &x, 8);
	return ok;
}
/* A count (u32) of elements whose encoding takes at least @min_size bytes
 * each: more than the bytes left could hold (with @min_size 0: more than
 * the bytes left) is malformed. */
PBUS_API bool pbus_rpc_get_count(struct pbus_rpc_reader *r, uint32_t *n, size_t min_size);
/* A String: UTF-8 without NUL, copied into the arena with a NUL. */
PBUS_API bool pbus_rpc_get_string(struct pbus_rpc_reader *r, char **v);
/* A ByteBuffer, copied into the arena. */
PBUS_API bool pbus_rpc_get_bytes(struct pbus_rpc_reader *r, struct pbus_rpc_bytes *v);
/* @size zeroed bytes from the arena (an array's elements), or NULL with
 * the reader failed -ENOMEM. */
PBUS_API void *pbus_rpc_get_alloc(struct pbus_rpc_reader *r, size_t size);
/* Enter / leave a nested value (struct, union, array, map): false and
 * failed when deeper than PBUS_RPC_MAX_DEPTH. */
static inline bool pbus_rpc_enter(struct pbus_rpc_reader *r)
{
	if (++r->depth > PBUS_RPC_MAX_DEPTH)
		return pbus_rpc_reader_fail(r, -EPROTO);
	return r->error == 0;
}
static inline void pbus_rpc_leave(struct pbus_rpc_reader *r) { r->depth--; }
/* 0 if everything was read exactly, else the error (-EPROTO for bytes
 * left over). */
static inline int pbus_rpc_reader_end(struct pbus_rpc_reader *r)
{
	if (r->error == 0 && r->p != r->end)
		r->error = -EPROTO;
	return r->error;
}

/* The 32-bit FNV-1a hash of a polymorphic struct's fully qualified name:
 * its type tag on the wire (docs/methods.md §4). */
static inline uint32_t pbus_rpc_type_tag(const char *fqn)
{
	uint32_t h = 2166136261u;

	for (; *fqn; fqn++)
		h = (h ^ (unsigned char)*fqn) * 16777619u;
	return h;
}

/* --- the text of the last failure ---------------------------------------- */

/* One line about the last call of this thread that failed: the server's
 * message for a refused call, or what went wrong locally. "" if none. */
PBUS_API const char *pbus_rpc_last_error(void);

/* --- proxies (client side) ----------------------------------------------- */

struct pbus_proxy;

/* Options of a proxy or a stub; NULL or zero fields: the defaults. */
struct pbus_rpc_options {
	struct pbus_loop *loop;  /* NULL: pbus_loop_default() */
	const char *socket_dir;  /* where pbusd's socket is; NULL: docs/socket-protocol.md §1 */
	const char *name;        /* shown to servers and in `pbus stat`; NULL: the program's */
	unsigned timeout_ms;     /* synchronous calls' default timeout; 0: 5000 */
	bool no_inprocess;       /* a proxy: use the socket even when the server is in this process */
};

/* Generated: decode broadcast @broadcast's arguments from @args (from a
 * socket; @local_args NULL), or take them from @local_args (in-process;
 * @args NULL: the generated struct the stub's fire function filled), and
 * call the application's handler. */
typedef void (*pbus_proxy_deliver_fn)(void *client, unsigned broadcast,
				      struct pbus_rpc_reader *args, const void *local_args);
/* The server became available (true) or was lost (false). */
typedef void (*pbus_proxy_availability_fn)(void *client, bool available, void *userdata);
/* Generated: an async call's completion; decodes @reply when @result is 0
 * and calls @user_fn(…, @userdata). */
typedef void (*pbus_proxy_reply_fn)(void *client, int result, struct pbus_rpc_reader *reply,
				    void (*user_fn)(void), void *userdata);

/*
 * A proxy of @address for @itf. @client is the generated object, handed to
 * the callbacks. Connects at once if the server is registered (else the
 * proxy is unavailable and connects when it appears). Returns 0, or
 * -EINVAL (a malformed address), -ENOENT (no pbusd for the address's
 * instance), -EPERM (pbusd or the server is not a trusted owner), -ENOMEM.
 */
PBUS_API int pbus_proxy_new(const char *address, const struct pbus_rpc_interface *itf,
			    pbus_proxy_deliver_fn deliver, void *client,
			    const struct pbus_rpc_options *options, struct pbus_proxy **ret_proxy);
PBUS_API void pbus_proxy_free(struct pbus_proxy *proxy);
PBUS_API bool pbus_proxy_available(const struct pbus_proxy *proxy);
/* Wait (dispatching nothing) until the server is available: 0, or -ETIMEDOUT. */
PBUS_API int pbus_proxy_wait_available(struct pbus_proxy *proxy, int timeout_ms);
/* Call @fn(client, available, @userdata) in the loop thread: once with the
 * state now, then at every change. NULL stops the calls. */
PBUS_API void pbus_proxy_on_availability(struct pbus_proxy *proxy, pbus_proxy_availability_fn fn,
					 void *userdata);
/* The server's interface version (after a connect), else 0.0. */
PBUS_API void pbus_proxy_server_version(const struct pbus_proxy *proxy, uint32_t *major,
					uint32_t *minor);

/* A call being made: the arguments, then the reply's body. On the stack:
 * small calls allocate nothing. */
struct pbus_rpc_call {
	struct pbus_rpc_buf args;  /* reserved header room, then the in-arguments */
	struct pbus_rpc_buf reply; /* the RETURN's body */
};
#define PBUS_RPC_CALL_HEAD 16 /* frame header and method/flags, before the arguments */

static inline void pbus_rpc_call_init(struct pbus_rpc_call *call)
{
	pbus_rpc_buf_init(&call->args);
	pbus_rpc_buf_init(&call->reply);
	call->args.size = PBUS_RPC_CALL_HEAD;
}
static inline void pbus_rpc_call_release(struct pbus_rpc_call *call)
{
	if (call->args.data != call->args.inline_data || call->reply.data != call->reply.inline_data) {
		pbus_rpc_buf_release(&call->args);
		pbus_rpc_buf_release(&call->reply);
	}
}

/*
 * Call @method with the arguments encoded in @call and wait up to
 * @timeout_ms (-1: the proxy's default) for its reply, whose body is then
 * in call->reply. Returns 0, or a negative errno: -ETIMEDOUT, -ECONNRESET
 * (the server went away during the call), -ENOTCONN (no server), -EPROTO
 * (a version mismatch or a malformed reply), -EPERM (the caller's group may
 * not call it), -ENOSYS (the server has no such method), or the server
 * function's own negative result; pbus_rpc_last_error() says more.
 */
PBUS_API int pbus_proxy_call(struct pbus_proxy *proxy, unsigned method, struct pbus_rpc_call *call,
			     int timeout_ms);
/* A fireAndForget call: 0 once sent, or an error as above. */
PBUS_API int pbus_proxy_send(struct pbus_proxy *proxy, unsigned method, struct pbus_rpc_call *call);
/* Send and return at once; @reply_fn runs in the loop thread with the
 * result (or -ETIMEDOUT after @timeout_ms, -ECONNRESET, ...). 0 once sent,
 * or an error (then @reply_fn never runs). */
PBUS_API int pbus_proxy_call_async(struct pbus_proxy *proxy, unsigned method,
				   struct pbus_rpc_call *call, int timeout_ms,
				   pbus_proxy_reply_fn reply_fn, void (*user_fn)(void), void *userdata);
/* Receive broadcast @broadcast (renewed by itself after a reconnect):
 * 0, or -EPERM (a selective broadcast's server refused), -ENOTCONN (sent
 * when the server appears), ... */
PBUS_API int pbus_proxy_subscribe(struct pbus_proxy *proxy, unsigned broadcast);
PBUS_API int pbus_proxy_unsubscribe(struct pbus_proxy *proxy, unsigned broadcast);

/* In-process calls: the server object (the generated struct) of an
 * in-process server with this call counted in flight, or NULL (none: use
 * the socket). Every non-NULL enter is followed by one leave. */
PBUS_API void *pbus_proxy_local_enter(struct pbus_proxy *proxy);
PBUS_API void pbus_proxy_local_leave(struct pbus_proxy *proxy);
/* The caller an in-process server function is given. */
PBUS_API const struct pbus_caller *pbus_proxy_local_caller(struct pbus_proxy *proxy);

/* --- stubs (server side) ------------------------------------------------- */

struct pbus_stub;

/* Generated: decode method @method's in-arguments from @in, call the
 * application's function, encode the out-arguments into @out. Returns 0,
 * or a negative errno sent as the call's error (-EPROTO: @in malformed). */
typedef int (*pbus_stub_dispatch_fn)(void *server, const struct pbus_caller *caller,
				     unsigned method, struct pbus_rpc_reader *in,
				     struct pbus_rpc_buf *out);
/* A client subscribes (true) to or unsubscribes from (false) broadcast
 * @broadcast; for a selective broadcast a non-zero result (a negative
 * errno, e.g. -EPERM) refuses the subscription. May be NULL. */
typedef int (*pbus_stub_subscription_fn)(void *server, const struct pbus_caller *caller,
					 unsigned broadcast, bool subscribe);

/*
 * Serve @itf at @address: listen on a socket of its own, register it with
 * the address's pbusd (and again whenever pbusd restarts), and serve calls
 * in the loop thread. @server is the generated object. Returns 0, or
 * -EINVAL (a malformed address), -ENOENT (no pbusd), -EADDRINUSE (another
 * process serves the address), -EPERM (only root and pbusd's user may
 * register), -ENOMEM, ...
 */
PBUS_API int pbus_stub_new(const char *address, const struct pbus_rpc_interface *itf,
			   pbus_stub_dispatch_fn dispatch, pbus_stub_subscription_fn on_subscription,
			   void *server, const struct pbus_rpc_options *options,
			   struct pbus_stub **ret_stub);
/* Unregister, close every connection (their calls fail with -ECONNRESET)
 * and free; in-process proxies see the server gone after their calls in
 * flight have returned. */
PBUS_API void pbus_stub_free(struct pbus_stub *stub);
/* Whether anybody across a socket receives @broadcast (so that generated
 * code encodes it only then). */
PBUS_API bool pbus_stub_has_remote_subscribers(struct pbus_stub *stub, unsigned broadcast);
/*
 * Fire @broadcast: @encoded (NULL if nobody remote subscribes) to every
 * subscribed connection, and @local_args to every subscribed in-process
 * proxy's deliver function. With @receivers (selective broadcasts), only
 * to the subscribers whose pbus_caller_id() is among them. Returns the
 * number of receivers, or -EINVAL (@encoded failed), -ENOMEM. A receiver
 * that reads too slowly loses broadcasts (counted), never delays others.
 */
PBUS_API int pbus_stub_broadcast(struct pbus_stub *stub, unsigned broadcast,
				 const struct pbus_rpc_buf *encoded, const void *local_args,
				 const uint64_t *receivers, size_t receiver_count);
/* The ids of @broadcast's current subscribers (at most @capacity; returns
 * how many there are). */
PBUS_API size_t pbus_stub_subscribers(struct pbus_stub *stub, unsigned broadcast,
				      uint64_t *ids, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
