/* SPDX-License-Identifier: MIT */
/*
 * pbus-web.h: the private header of pbus-web, the web front panel's daemon
 * (docs/web.md). main.c reads the options and runs libwebsockets' loop;
 * http.c is everything lws calls back (assets, /login, /logout, the
 * WebSocket sessions); session.c keeps the login sessions and the login
 * rate limits; users.c reads the users file and checks passwords;
 * panel.c is the pbusd side (the subscription, the latest values, the SET
 * thread); message.c encodes and decodes every WebSocket message;
 * request.c parses what pbus-web reads of HTTP itself (cookies, form and
 * JSON login bodies, Origin).
 *
 * Threads (docs/web.md, "Threading"):
 *  - the lws thread (main): every socket, every session, session.c, users.c
 *    after loading, message.c. Nothing it does blocks on pbusd.
 *  - the pbusd thread (panel.c): owns the subscribing pbus_client, builds
 *    the model at each connect, formats values, stores them in the panel
 *    under panel->lock and wakes the lws thread (lws_cancel_service()).
 *  - the SET thread (panel.c): owns a second pbus_client; takes SET jobs
 *    from a queue, runs them (a persistent SET waits for pbusd's save),
 *    posts results to a queue and wakes the lws thread.
 * panel->lock guards the model pointer, the latest values, the
 * connection state and both queues; it is never held across a request to
 * pbusd nor across a socket write.
 *
 * Ownership: struct web_panel owns the model (reference-counted: a
 * session building a message holds a reference outside the lock), the
 * values and the clients; struct web_sessions owns the login sessions;
 * struct web_users owns the users; each WebSocket's struct web_conn
 * (lws's per-session memory) owns its input buffer and its queue of
 * outgoing messages.
 */
#ifndef PBUS_WEB_H
#define PBUS_WEB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WEB_SESSION_ID_BYTES 32          /* 256 bits from getrandom() */
#define WEB_SESSION_COOKIE "pbus_session"
#define WEB_NAME_MAX 64                  /* user and group names */
#define WEB_GROUPS_MAX 16                /* groups per user */
#define WEB_LOGIN_BODY_MAX 4096
#define WEB_SET_MAX_WRITES 64            /* writes in one set message */
#define WEB_SET_TEXT_MAX 4096            /* bytes of one value's text */
#define WEB_ID_MAX 64                    /* bytes of a request id (JSON text) */

/* ------------------------------------------------------------------ users.c */

struct web_user {
	char name[WEB_NAME_MAX + 1];
	char *hash;                               /* crypt(3) text */
	char groups[WEB_GROUPS_MAX][WEB_NAME_MAX + 1];
	size_t group_count;
};

struct web_users {
	struct web_user *users;
	size_t count;
};

/* Parse a users file's text (@length bytes; lines "name:hash:group,...",
 * '#' comments, blank lines). 0, or -EINVAL with "FILE:LINE: problem" in
 * @error (@source names the file), or -ENOMEM. The caller frees with
 * web_users_fini(). Any thread; no crypt(3) call. */
int web_users_parse(const char *text, size_t length, const char *source, struct web_users *ret,
		    char *error, size_t error_size);
/* Read and parse @path; as above, or the read's -errno (named in @error). */
int web_users_load(const char *path, struct web_users *ret, char *error, size_t error_size);
void web_users_fini(struct web_users *users);
/* The user named @name, or NULL. */
const struct web_user *web_users_find(const struct web_users *users, const char *name);
/* Whether @password is @user's (@user NULL: a dummy hash is checked all
 * the same, and false is returned, so an unknown name costs as long). */
bool web_users_verify(const struct web_user *user, const char *password);
/* A yescrypt hash of @password into @buf; 0 or -errno. */
int web_hash_password(const char *password, char *buf, size_t size);
/* Whether @user may write a parameter of writable-by group @group ("":
 * any logged-in user). */
bool web_user_in_group(const struct web_user *user, const char *group);

/* ---------------------------------------------------------------- session.c */

struct web_login {
	unsigned char id[WEB_SESSION_ID_BYTES];
	struct web_user user;      /* a copy: the users file is not reloaded under it */
	int64_t last_used_ns;      /* CLOCK_MONOTONIC; sliding expiry */
	uint64_t serial;           /* never reused: a closed login's WebSockets notice */
	bool used;
};

/* A token bucket: @burst attempts, one more every @refill_ns. */
struct web_bucket {
	char key[WEB_NAME_MAX + 48]; /* "addr:..." or "user:..." */
	double tokens;
	int64_t updated_ns;
	bool used;
};

struct web_sessions {
	struct web_login *logins;
	size_t max_logins;
	int64_t ttl_ns;
	uint64_t next_serial;
	struct web_bucket *buckets;
	size_t max_buckets;
	unsigned burst;
	int64_t refill_ns;
};

int web_sessions_init(struct web_sessions *s, size_t max_logins, unsigned ttl_s, unsigned burst,
		      unsigned refill_s);
void web_sessions_fini(struct web_sessions *s);
/* A new login for @user; its id in hex (64 digits and NUL) in @cookie.
 * 0, -EAGAIN (every place taken by a live login), -EIO (getrandom). */
int web_session_create(struct web_sessions *s, const struct web_user *user, char cookie[65],
		       struct web_login **ret);
/* The live login of cookie value @hex (expired ones are dropped), and its
 * expiry slid forward when @touch. NULL if none. */
struct web_login *web_session_find(struct web_sessions *s, const char *hex, bool touch);
/* The login of @serial if still live, else NULL (not touched). */
struct web_login *web_session_by_serial(struct web_sessions *s, uint64_t serial);
void web_session_remove(struct web_sessions *s, struct web_login *login);
/* Take one login attempt from the buckets of @addr and of @user (both
 * must have a token). 0, or the seconds until one comes (>= 1). */
unsigned web_login_allowed(struct web_sessions *s, const char *addr, const char *user);
/* A failed attempt for @user also takes a token of its own bucket. */
void web_login_failed(struct web_sessions *s, const char *user);

/* ---------------------------------------------------------------- request.c */

/* The value of cookie @name in Cookie header text @header into @buf
 * (NUL-terminated). 0, -ENOENT, -EMSGSIZE, -EINVAL. */
int web_cookie_get(const char *header, const char *name, char *buf, size_t size);
/* Field @name of an application/x-www-form-urlencoded body (percent and
 * '+' decoded; no NUL allowed). 0, -ENOENT, -EMSGSIZE, -EINVAL. */
int web_form_get(const char *body, size_t length, const char *name, char *buf, size_t size);
/* The user and password of a login body: JSON {"user","password"} when
 * @json, else a form. 0 or -EINVAL (-EMSGSIZE when a field is too long). */
int web_login_body(const char *body, size_t length, bool json, char *user, size_t user_size,
		   char *password, size_t password_size);
/* Whether @origin ("scheme://host[:port]") names @host (the Host header),
 * case-insensitively, or equals one of @allowed (@allowed_count). */
bool web_origin_allowed(const char *origin, const char *host, const char *const *allowed,
			size_t allowed_count);

/* ------------------------------------------------------------------ panel.c */

/* One parameter as the page sees it: built once per schema. */
struct web_param {
	char *name, *unit, *description, *group;
	uint32_t index;
	unsigned type, flags, update_class;
	uint32_t count;          /* array elements at most; 0 for a scalar */
	char *min, *max, *step, *def; /* JSON values, or NULL */
	char **labels;           /* enum labels */
	uint32_t label_count;
	bool readable;           /* not noread */
	bool live;               /* in a subscription */
	double deadband;         /* the schema's deadband=, or 0 */
	double max_rate_hz;      /* the schema's max-rate-hz=, or 0: none */
};

/* The schema as served: immutable; freed when the last reference goes. */
struct web_model {
	unsigned refs;           /* under panel->lock */
	uint64_t hash;
	char *interface;
	uint32_t count;
	struct web_param *params;
};

/* The latest value of one parameter (JSON text of the value). */
struct web_value {
	char *json;              /* NULL: none yet */
	uint32_t status;
	uint64_t timestamp_ns, seq;
	uint64_t gen;            /* panel->gen when stored */
};

struct web_set_write {
	uint32_t index;
	char *text;
};

/* A SET from a session, and then its result. */
struct web_set_job {
	uint64_t conn_serial;    /* the WebSocket it answers (it may be gone) */
	char id[WEB_ID_MAX + 1]; /* the request's id, JSON text */
	uint64_t model_hash;
	struct web_set_write writes[WEB_SET_MAX_WRITES];
	size_t count;
	/* the result */
	bool ok;
	char error[512];
	char *current;           /* JSON: the values of the batch now, or NULL */
	struct web_set_job *next;
};

/* One subscription to pbusd (panel.c): the parameters that share a
 * deadband and an interval. */
struct web_subscription {
	double deadband;
	uint32_t interval_us;
	uint32_t id;                   /* pbusd's */
	bool primed;                   /* its first values are in */
	uint32_t *indexes;
	size_t count;
};

/* At most this many subscriptions; parameters of further (deadband,
 * interval) pairs join the one without deadband at --interval, or the
 * first one if there is none. */
#define WEB_SUBSCRIPTIONS_MAX 16

struct web_panel {
	char instance[65];
	const char *socket_dir;
	unsigned interval_ms;
	struct lws_context *context;   /* woken by lws_cancel_service() */
	pthread_mutex_t lock;
	pthread_cond_t set_cond;
	pthread_cond_t ready_cond;      /* first_done changed */
	/* under lock */
	struct web_model *model;       /* NULL until the first connect */
	struct web_value *values;      /* [model->count] */
	uint64_t gen;                  /* grows by one per stored value */
	bool connected;
	bool primed;                   /* connected and the first values are in */
	uint64_t epoch;                /* grows at each connect and disconnect */
	bool stopping;
	bool first_done;               /* the first connect failed, or its values are in */
	struct web_set_job *jobs, **jobs_tail;       /* for the SET thread */
	struct web_set_job *results, **results_tail; /* for the lws thread */
	/* the threads */
	pthread_t pbusd_thread, set_thread;
	int stop_fd;                   /* eventfd: the pbusd thread stops */
	bool started;
	/* the pbusd thread's own: the subscriptions of this connection, one
	 * per set of parameters with one deadband and interval, and how many
	 * have not brought their first values yet */
	struct web_subscription *subs;
	size_t sub_count, unprimed;
};

/* Start both threads (the pbusd thread connects and reconnects by itself).
 * 0 or -errno. */
int web_panel_start(struct web_panel *panel);
/* Wait until the pbusd thread's first connect has failed or brought its
 * first values, at most @ms: so that pbus-web reports ready with the
 * values it will serve. */
void web_panel_wait_first(struct web_panel *panel, unsigned ms);
/* Stop and join them, free everything. Accepts a panel never started. */
void web_panel_stop(struct web_panel *panel);
/* The model with a reference taken (NULL if none yet); lws thread. */
struct web_model *web_panel_model(struct web_panel *panel);
void web_model_unref(struct web_panel *panel, struct web_model *model);
/* Queue @job for the SET thread (it takes ownership). */
void web_panel_submit(struct web_panel *panel, struct web_set_job *job);
/* Take every finished job (a list; the caller frees with web_set_job_free). */
struct web_set_job *web_panel_take_results(struct web_panel *panel);
void web_set_job_free(struct web_set_job *job);
/* The parameter named @name in @model, or NULL. */
const struct web_param *web_model_find(const struct web_model *model, const char *name);

/* ---------------------------------------------------------------- message.c */

enum web_in_type { WEB_IN_SET = 1, WEB_IN_PING = 2 };

/* One write of an incoming set: by name or by index. */
struct web_in_write {
	char name[128];          /* "" when given by index */
	int64_t index;           /* -1 when given by name */
	char text[WEB_SET_TEXT_MAX + 1];
};

struct web_in {
	enum web_in_type type;
	char id[WEB_ID_MAX + 1]; /* JSON text of the id ("" for a ping without one) */
	struct web_in_write writes[WEB_SET_MAX_WRITES];
	size_t count;
};

/* Decode one text message (@length bytes, UTF-8 checked by lws). 0, or
 * -EINVAL with a one-line reason in @error. */
int web_message_decode(const char *text, size_t length, struct web_in *ret, char *error, size_t error_size);

/* A growing output text (malloc'd). */
struct web_out {
	char *data;
	size_t length, capacity;
	bool failed;             /* out of memory: the text is incomplete */
};
void web_out_reserve_front(struct web_out *o, size_t front); /* room lws needs before the text */
void web_out_append(struct web_out *o, const char *text, size_t length);
void web_out_printf(struct web_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @text as a JSON string, quotes included. */
void web_out_json_string(struct web_out *o, const char *text);
void web_out_free(struct web_out *o);

/* The messages pbus-web sends (docs/web.md, "Messages"). */
void web_message_hello(struct web_out *o, const char *instance, const struct web_model *model,
		       const struct web_value *values, const struct web_user *user, bool can_write,
		       bool connected);
void web_message_schema(struct web_out *o, const struct web_model *model, const struct web_user *user);
/* Begin/add/end of a values message. */
void web_message_values_begin(struct web_out *o);
void web_message_values_add(struct web_out *o, bool first, uint32_t index, const struct web_value *v);
void web_message_values_end(struct web_out *o);
void web_message_set_result(struct web_out *o, const char *id, bool ok, const char *error,
			    const char *current);
void web_message_pbusd(struct web_out *o, bool connected);
void web_message_error(struct web_out *o, const char *reason);
void web_message_pong(struct web_out *o, const char *id);
/* Value text @text of a parameter of @type as a JSON value (a number, true
 * or false where the type is one and the text a valid JSON number, else a
 * string) appended to @o. */
void web_out_value(struct web_out *o, unsigned type, const char *text);

/* ------------------------------------------------------------------- http.c */

#define WEB_PROTOCOL "parambus.v1"

struct web_conn;
struct lws_protocols;

/* Everything the lws thread has (lws_context_user()). */
struct web_server {
	struct web_panel panel;
	struct web_users users;
	struct web_sessions sessions;
	char assets_real[4096];     /* --assets, resolved (realpath) */
	bool read_login;            /* --read-access login */
	char **allow_origins;       /* --allow-origin values */
	size_t allow_origin_count;
	size_t max_clients, max_message;
	unsigned session_ttl;
	bool tls;
	struct web_conn *conns;     /* every open WebSocket */
	size_t conn_count;
	uint64_t next_conn_serial;
};

/* The protocols of the vhost: "http" (assets, login, upgrade checks)
 * and WEB_PROTOCOL (the WebSocket sessions). */
extern const struct lws_protocols *const web_protocols;

#endif
