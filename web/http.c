/* SPDX-License-Identifier: MIT */
/*
 * http.c: everything libwebsockets calls back in pbus-web (docs/web.md):
 *
 *  - GET of the static assets from --assets (no directory listing, no
 *    path outside it, no hidden file; content type by extension);
 *  - POST /login and POST /logout (bodies of at most 4 KiB, Origin
 *    checked when sent, login attempts rate-limited: 429 + Retry-After);
 *  - the WebSocket upgrade at /ws, refused before the handshake (403 for
 *    a missing or foreign Origin, 400 without the subprotocol
 *    parambus.v1, 401 without a login under --read-access login, 503
 *    beyond --max-clients);
 *  - the WebSocket sessions: each has what it last sent (the generation
 *    of the values, the schema hash, the pbusd connection epoch) and is
 *    sent ONE message per writable callback, newest values first to go
 *    out when it can take them: a browser that does not read gets
 *    nothing queued but its few replies (set-result, error, pong: at most
 *    WEB_CONN_QUEUE, beyond which it is closed);
 *  - incoming messages: at most --max-message bytes (else closed with
 *    1009), text only (binary: 1003), UTF-8 checked by lws (1007), at
 *    most MESSAGE_RATE a second with a burst of MESSAGE_BURST (beyond:
 *    an error message), and closed after MAX_STRIKES refused messages.
 *
 * lws thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <parambus/common.h>

#include "../common/log.h"
#include "pbus-web.h"

#define WEB_CONN_QUEUE 32
#define MESSAGE_RATE 20.0
#define MESSAGE_BURST 40.0
#define MAX_STRIKES 10
#define MAX_SETS_IN_FLIGHT 16

/* One WebSocket (lws's per-session memory of protocol parambus.v1). */
struct web_conn {
	struct lws *wsi;
	struct web_conn *next, **prev;
	uint64_t serial;
	char peer[64];
	/* who: a copy of the login's user, while the login lives */
	bool has_login;
	uint64_t login_serial;
	struct web_user user;
	/* what was sent */
	bool hello_sent;
	uint64_t epoch_seen, hash_sent, gen_seen;
	bool connected_seen;
	/* replies waiting (LWS_PRE bytes, then the text) */
	struct web_out queue[WEB_CONN_QUEUE];
	size_t queue_first, queue_count;
	/* what is being received */
	char *in;
	size_t in_length;
	/* limits */
	double tokens;
	int64_t tokens_ns;
	unsigned strikes;
	unsigned sets_in_flight;
	/* closing: the code and reason sent at the next writable callback */
	int close_code;
	char close_reason[96];
};

/* The per-connection memory of the http protocol: a POST's body. */
struct web_http {
	char *body;
	size_t length;
	bool too_big, json, logout, posting;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct web_server *server_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

/* A header's text (NUL-terminated) into @buf, or "" when absent or too
 * long. Returns its length, or -1 when absent, -2 when too long. */
static int header(struct lws *wsi, enum lws_token_indexes h, char *buf, size_t size)
{
	int n = lws_hdr_total_length(wsi, h);
	buf[0] = '\0';
	if (n <= 0)
		return -1;
	if ((size_t)n >= size)
		return -2;
	if (lws_hdr_copy(wsi, buf, (int)size, h) < 0) {
		buf[0] = '\0';
		return -2;
	}
	return n;
}

/* ------------------------------------------------------------- responses */

/* Send a whole small response: @status, a JSON or text body, optional
 * extra headers (name with ':', value; NULL-terminated pairs). Returns
 * what the callback returns. */
static int respond(struct lws *wsi, unsigned status, const char *type, const char *body, const char *const *extra)
{
	unsigned char buf[LWS_PRE + 2048];
	unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	size_t length = strlen(body);
	if (lws_add_http_common_headers(wsi, status, type, length, &p, end))
		return -1;
	if (lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)"no-store",
					8, &p, end))
		return -1;
	for (size_t i = 0; extra && extra[i]; i += 2)
		if (lws_add_http_header_by_name(wsi, (const unsigned char *)extra[i],
						(const unsigned char *)extra[i + 1], (int)strlen(extra[i + 1]), &p, end))
			return -1;
	if (lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	if (length) {
		unsigned char *out = malloc(LWS_PRE + length);
		if (!out)
			return -1;
		memcpy(out + LWS_PRE, body, length);
		int n = lws_write(wsi, out + LWS_PRE, length, LWS_WRITE_HTTP_FINAL);
		free(out);
		if (n < 0)
			return -1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* A JSON error body {"error": "..."}. */
static int respond_error(struct lws *wsi, unsigned status, const char *error, const char *const *extra)
{
	struct web_out o = {0};
	web_out_append(&o, "{\"error\":", 9);
	web_out_json_string(&o, error);
	web_out_append(&o, "}", 1);
	int r = o.failed ? -1 : respond(wsi, status, "application/json", o.data, extra);
	web_out_free(&o);
	return r;
}

/* ---------------------------------------------------------------- assets */

static const struct {
	const char *ext, *type;
} content_types[] = {
	{"html", "text/html; charset=utf-8"}, {"htm", "text/html; charset=utf-8"},
	{"js", "text/javascript; charset=utf-8"}, {"mjs", "text/javascript; charset=utf-8"},
	{"css", "text/css; charset=utf-8"}, {"json", "application/json"},
	{"map", "application/json"}, {"webmanifest", "application/manifest+json"},
	{"svg", "image/svg+xml"}, {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"},
	{"gif", "image/gif"}, {"ico", "image/x-icon"}, {"webp", "image/webp"},
	{"woff", "font/woff"}, {"woff2", "font/woff2"}, {"txt", "text/plain; charset=utf-8"},
	{"wasm", "application/wasm"},
};

static const char *content_type(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(content_types) / sizeof(content_types[0]); i++)
			if (strcasecmp(dot + 1, content_types[i].ext) == 0)
				return content_types[i].type;
	return "application/octet-stream";
}

/* Whether @uri (decoded by lws) may name a file under the assets: it
 * starts with '/', no segment is empty (but the last) or starts with '.'
 * ("..", hidden files), no backslash or control character. */
static bool safe_path(const char *uri)
{
	if (uri[0] != '/')
		return false;
	for (const char *p = uri; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == '\\' || *p == 0x7f)
			return false;
		if (*p == '/' && (p[1] == '.' || (p[1] == '/')))
			return false;
	}
	return true;
}

static int serve_asset(struct lws *wsi, struct web_server *s, const char *uri)
{
	char rel[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
	if (!s->assets_real[0] || !safe_path(uri) || strlen(uri) > 1024) /* no folder: nothing */
		return respond_error(wsi, 404, "no such file", NULL);
	snprintf(rel, sizeof(rel), "%s%s", uri + 1, uri[strlen(uri) - 1] == '/' ? "index.html" : "");
	if (snprintf(path, sizeof(path), "%s/%s", s->assets_real, rel) >= (int)sizeof(path))
		return respond_error(wsi, 404, "no such file", NULL);
	struct stat st;
	size_t n = strlen(s->assets_real);
	/* symbolic links may lead elsewhere inside the assets, not outside */
	if (!realpath(path, real) || strncmp(real, s->assets_real, n) != 0 || real[n] != '/' ||
	    stat(real, &st) < 0 || !S_ISREG(st.st_mode))
		return respond_error(wsi, 404, "no such file", NULL);
	unsigned char extra[512], *p = extra, *end = extra + sizeof(extra);
	if (lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:", (const unsigned char *)"no-cache",
					8, &p, end))
		return -1;
	int r = lws_serve_http_file(wsi, real, content_type(real), (const char *)extra, (int)(p - extra));
	if (r < 0 || (r > 0 && lws_http_transaction_completed(wsi)))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ login, logout */

static const char *const *cookie_header(char *buf, size_t size, const char *value, bool clear, bool secure,
					 const char **pairs)
{
	snprintf(buf, size, WEB_SESSION_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict%s%s", value,
		 secure ? "; Secure" : "", clear ? "; Max-Age=0" : "");
	pairs[0] = "set-cookie:";
	pairs[1] = buf;
	pairs[2] = NULL;
	return pairs;
}

static int login(struct lws *wsi, struct web_server *s, struct web_http *h)
{
	char user[WEB_NAME_MAX + 2], password[1024], peer[64] = "?";
	if (h->too_big)
		return respond_error(wsi, 413, "a login body is at most 4096 bytes", NULL);
	int r = web_login_body(h->body ? h->body : "", h->length, h->json, user, sizeof(user), password,
			       sizeof(password));
	if (r < 0)
		return respond_error(wsi, 400,
				     h->json ? "send {\"user\": NAME, \"password\": PASSWORD}"
					     : "send the fields user and password (application/x-www-form-urlencoded)",
				     NULL);
	lws_get_peer_simple(wsi, peer, sizeof(peer));
	unsigned wait = web_login_allowed(&s->sessions, peer, user);
	if (wait) {
		char seconds[16];
		snprintf(seconds, sizeof(seconds), "%u", wait);
		const char *extra[] = {"retry-after:", seconds, NULL};
		log_msg(LOG_WARNING, "login of '%.64s' from %s refused: too many attempts", user, peer);
		explicit_bzero(password, sizeof(password));
		return respond_error(wsi, 429, "too many login attempts; try again later", extra);
	}
	const struct web_user *u = web_users_find(&s->users, user);
	bool ok = web_users_verify(u, password);
	explicit_bzero(password, sizeof(password));
	if (!ok) {
		web_login_failed(&s->sessions, user);
		log_msg(LOG_WARNING, "login of '%.64s' from %s: wrong user name or password", user, peer);
		return respond_error(wsi, 401, "wrong user name or password", NULL);
	}
	char cookie[65], line[256];
	const char *pairs[3];
	struct web_login *l;
	r = web_session_create(&s->sessions, u, cookie, &l);
	if (r < 0)
		return respond_error(wsi, 503, r == -EAGAIN ? "too many logins at once" : "no random numbers", NULL);
	log_msg(LOG_INFO, "login of '%s' from %s", u->name, peer);
	struct web_out o = {0};
	web_out_append(&o, "{\"user\":", 8);
	web_out_json_string(&o, u->name);
	web_out_append(&o, ",\"groups\":[", 11);
	for (size_t g = 0; g < u->group_count; g++) {
		if (g)
			web_out_append(&o, ",", 1);
		web_out_json_string(&o, u->groups[g]);
	}
	web_out_printf(&o, "],\"ttl\":%u}", s->session_ttl);
	r = o.failed ? -1
		     : respond(wsi, 200, "application/json", o.data,
			       cookie_header(line, sizeof(line), cookie, false, s->tls, pairs));
	web_out_free(&o);
	explicit_bzero(line, sizeof(line));
	explicit_bzero(cookie, sizeof(cookie));
	return r;
}

/* The login of the request's cookie (touched), or NULL. */
static struct web_login *request_login(struct lws *wsi, struct web_server *s)
{
	char cookies[4096], value[128];
	if (header(wsi, WSI_TOKEN_HTTP_COOKIE, cookies, sizeof(cookies)) <= 0)
		return NULL;
	if (web_cookie_get(cookies, WEB_SESSION_COOKIE, value, sizeof(value)) < 0)
		return NULL;
	return web_session_find(&s->sessions, value, true);
}

static int logout(struct lws *wsi, struct web_server *s)
{
	char line[256];
	const char *pairs[3];
	struct web_login *l = request_login(wsi, s);
	if (l) {
		log_msg(LOG_INFO, "logout of '%s'", l->user.name);
		web_session_remove(&s->sessions, l); /* its WebSockets close at their next check */
		for (struct web_conn *c = s->conns; c; c = c->next)
			if (c->has_login && !web_session_by_serial(&s->sessions, c->login_serial))
				lws_set_timer_usecs(c->wsi, 1);
	}
	return respond(wsi, 200, "application/json", l ? "{\"logged_out\":true}" : "{\"logged_out\":false}",
		       cookie_header(line, sizeof(line), "", true, s->tls, pairs));
}

/* Whether the request's Origin, if it sent one, is this server. */
static bool origin_ok(struct lws *wsi, struct web_server *s, bool required)
{
	char origin[512], host[512];
	int n = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin));
	if (n == -1)
		return !required;
	if (n < 0)
		return false;
	header(wsi, WSI_TOKEN_HOST, host, sizeof(host));
	return web_origin_allowed(origin, host, (const char *const *)s->allow_origins, s->allow_origin_count);
}

/* ------------------------------------------------------------ the http side */

static int callback_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct web_http *h = user;
	struct web_server *s;
	char uri[1100];
	switch (reason) {
	case LWS_CALLBACK_HTTP: {
		s = server_of(wsi);
		bool post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
		bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
		snprintf(uri, sizeof(uri), "%s", in ? (const char *)in : "");
		if (!in || strlen(in) != len || len >= sizeof(uri))
			return respond_error(wsi, 400, "a NUL byte or more than 1 KiB in the path", NULL);
		if (post) {
			if (strcmp(uri, "/login") != 0 && strcmp(uri, "/logout") != 0)
				return respond_error(wsi, 404, "no such endpoint", NULL);
			if (!origin_ok(wsi, s, false))
				return respond_error(wsi, 403, "Origin is not this server", NULL);
			char length[32], type[128];
			if (header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, length, sizeof(length)) > 0 &&
			    strtoull(length, NULL, 10) > WEB_LOGIN_BODY_MAX)
				return respond_error(wsi, 413, "a body is at most 4096 bytes", NULL);
			header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, type, sizeof(type));
			memset(h, 0, sizeof(*h));
			h->json = strncasecmp(type, "application/json", 16) == 0;
			h->logout = strcmp(uri, "/logout") == 0;
			h->posting = true;
			if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0 ||
			    strtoull(length, NULL, 10) == 0)
				return h->logout ? logout(wsi, s) : login(wsi, s, h);
			return 0; /* the body comes */
		}
		if (!get)
			return respond_error(wsi, 405, "only GET and POST", NULL);
		if (strcmp(uri, "/login") == 0 || strcmp(uri, "/logout") == 0)
			return respond_error(wsi, 405, "use POST", NULL);
		if (strcmp(uri, "/ws") == 0)
			return respond_error(wsi, 426, "the WebSocket needs an upgrade (subprotocol parambus.v1)", NULL);
		return serve_asset(wsi, s, uri);
	}
	case LWS_CALLBACK_HTTP_BODY:
		if (!h->posting)
			return -1;
		if (h->too_big || h->length + len > WEB_LOGIN_BODY_MAX) {
			h->too_big = true;
			return 0;
		}
		{
			char *b = realloc(h->body, h->length + len + 1);
			if (!b)
				return -1;
			h->body = b;
			memcpy(h->body + h->length, in, len);
			h->length += len;
			h->body[h->length] = '\0';
		}
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION: {
		s = server_of(wsi);
		int r = h->logout ? logout(wsi, s) : login(wsi, s, h);
		if (h->body)
			explicit_bzero(h->body, h->length);
		free(h->body);
		h->body = NULL;
		h->posting = false;
		return r;
	}
	case LWS_CALLBACK_HTTP_FILE_COMPLETION:
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: {
		s = server_of(wsi);
		char protocols[256];
		if (!in || strcmp(in, "websocket") != 0)
			return respond_error(wsi, 400, "only WebSocket upgrades", NULL) ? -1 : 1;
		if (header(wsi, WSI_TOKEN_GET_URI, uri, sizeof(uri)) < 0 || strcmp(uri, "/ws") != 0)
			return respond_error(wsi, 404, "the WebSocket is at /ws", NULL) ? -1 : 1;
		if (!origin_ok(wsi, s, true)) {
			log_msg(LOG_WARNING, "WebSocket refused: Origin missing or not this server");
			return respond_error(wsi, 403, "Origin missing or not this server", NULL) ? -1 : 1;
		}
		bool found = false;
		if (header(wsi, WSI_TOKEN_PROTOCOL, protocols, sizeof(protocols)) > 0) {
			char *save = NULL;
			for (char *t = strtok_r(protocols, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
				found |= strcmp(t, WEB_PROTOCOL) == 0;
		}
		if (!found)
			return respond_error(wsi, 400, "the WebSocket needs the subprotocol " WEB_PROTOCOL, NULL) ? -1 : 1;
		if (s->read_login && !request_login(wsi, s))
			return respond_error(wsi, 401, "log in first (--read-access login)", NULL) ? -1 : 1;
		if (s->conn_count >= s->max_clients) {
			log_msg(LOG_WARNING, "WebSocket refused: %zu clients already (--max-clients)", s->conn_count);
			return respond_error(wsi, 503, "too many clients", NULL) ? -1 : 1;
		}
		return 0;
	}
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (h && h->body) {
			explicit_bzero(h->body, h->length);
			free(h->body);
			h->body = NULL;
		}
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* ------------------------------------------------------- the WebSockets */

static void conn_close_soon(struct web_conn *c, int code, const char *reason)
{
	if (c->close_code)
		return;
	c->close_code = code;
	snprintf(c->close_reason, sizeof(c->close_reason), "%s", reason);
	lws_callback_on_writable(c->wsi);
}

/* Queue a reply (@o, made with LWS_PRE in front); a client that lets
 * WEB_CONN_QUEUE of them pile up is closed. */
static void conn_queue(struct web_conn *c, struct web_out *o)
{
	if (o->failed || c->queue_count == WEB_CONN_QUEUE) {
		web_out_free(o);
		conn_close_soon(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "replies not read");
		return;
	}
	c->queue[(c->queue_first + c->queue_count++) % WEB_CONN_QUEUE] = *o;
	memset(o, 0, sizeof(*o));
	lws_callback_on_writable(c->wsi);
}

static void conn_error(struct web_conn *c, const char *reason)
{
	struct web_out o = {0};
	web_out_reserve_front(&o, LWS_PRE);
	web_message_error(&o, reason);
	conn_queue(c, &o);
	if (++c->strikes >= MAX_STRIKES)
		conn_close_soon(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "too many refused messages");
}

static void conn_set_result(struct web_conn *c, const char *id, bool ok, const char *error, const char *current)
{
	struct web_out o = {0};
	web_out_reserve_front(&o, LWS_PRE);
	web_message_set_result(&o, id, ok, error, current);
	conn_queue(c, &o);
}

/* The user of @c if its login is still live (touched when @touch). */
static const struct web_user *conn_user(struct web_server *s, struct web_conn *c, bool touch)
{
	if (!c->has_login)
		return NULL;
	struct web_login *l = web_session_by_serial(&s->sessions, c->login_serial);
	if (!l)
		return NULL;
	if (touch)
		l->last_used_ns = now_ns();
	return &l->user;
}

static void handle_set(struct web_server *s, struct web_conn *c, const struct web_in *m)
{
	const struct web_user *user = conn_user(s, c, true);
	char error[320];
	if (!user) {
		conn_set_result(c, m->id, false, c->has_login ? "set: the login has expired; log in again"
							      : "set: writing needs a login", NULL);
		return;
	}
	if (c->sets_in_flight >= MAX_SETS_IN_FLIGHT) {
		conn_set_result(c, m->id, false, "set: too many sets in flight; wait for their results", NULL);
		return;
	}
	struct web_model *model = web_panel_model(&s->panel);
	pthread_mutex_lock(&s->panel.lock);
	bool connected = s->panel.connected;
	pthread_mutex_unlock(&s->panel.lock);
	if (!model || !connected) {
		web_model_unref(&s->panel, model);
		conn_set_result(c, m->id, false, "set: pbusd is not connected", NULL);
		return;
	}
	struct web_set_job *job = calloc(1, sizeof(*job));
	if (!job) {
		web_model_unref(&s->panel, model);
		conn_set_result(c, m->id, false, "set: out of memory", NULL);
		return;
	}
	job->conn_serial = c->serial;
	snprintf(job->id, sizeof(job->id), "%s", m->id);
	job->model_hash = model->hash;
	bool refused = false;
	for (size_t i = 0; i < m->count && !refused; i++) {
		const struct web_in_write *w = &m->writes[i];
		const struct web_param *p = NULL;
		if (w->index >= 0)
			p = (uint64_t)w->index < model->count ? &model->params[w->index] : NULL;
		else
			p = web_model_find(model, w->name);
		if (!p) {
			if (w->index >= 0)
				snprintf(error, sizeof(error), "set: no parameter %" PRId64, w->index);
			else
				snprintf(error, sizeof(error), "set: no parameter '%.128s'", w->name);
			refused = true;
		} else if (p->flags & PBUS_PARAM_READONLY) {
			snprintf(error, sizeof(error), "set %s: parameter is read-only", p->name);
			refused = true;
		} else if (!web_user_in_group(user, p->group)) {
			snprintf(error, sizeof(error), "set %s: permission denied (user '%s' is not in group '%s')",
				 p->name, user->name, p->group);
			refused = true;
		} else {
			job->writes[i].index = p->index;
			job->writes[i].text = strdup(w->text);
			job->count = i + 1;
			if (!job->writes[i].text) {
				snprintf(error, sizeof(error), "set: out of memory");
				refused = true;
			}
		}
	}
	web_model_unref(&s->panel, model);
	if (refused) {
		log_msg(LOG_INFO, "%s: %s", c->peer, error);
		web_set_job_free(job);
		conn_set_result(c, m->id, false, error, NULL);
		return;
	}
	c->sets_in_flight++;
	web_panel_submit(&s->panel, job);
}

static void handle_message(struct web_server *s, struct web_conn *c)
{
	/* the rate: a token bucket of MESSAGE_BURST, MESSAGE_RATE a second */
	int64_t now = now_ns();
	c->tokens += (double)(now - c->tokens_ns) / 1e9 * MESSAGE_RATE;
	if (c->tokens > MESSAGE_BURST)
		c->tokens = MESSAGE_BURST;
	c->tokens_ns = now;
	if (c->tokens < 1.0) {
		conn_error(c, "too many messages; slow down");
		return;
	}
	c->tokens -= 1.0;
	struct web_in *m = malloc(sizeof(*m));
	char error[256];
	if (!m) {
		conn_close_soon(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
		return;
	}
	if (web_message_decode(c->in, c->in_length, m, error, sizeof(error)) < 0) {
		conn_error(c, error);
	} else if (m->type == WEB_IN_PING) {
		conn_user(s, c, true);
		struct web_out o = {0};
		web_out_reserve_front(&o, LWS_PRE);
		web_message_pong(&o, m->id);
		conn_queue(c, &o);
	} else {
		handle_set(s, c, m);
	}
	free(m);
}

/* Send one thing @c has not had yet; true when something was written. */
static bool conn_send_next(struct web_server *s, struct web_conn *c)
{
	struct web_panel *panel = &s->panel;
	struct web_out o = {0};
	web_out_reserve_front(&o, LWS_PRE);
	const struct web_user *user = conn_user(s, c, false);
	if (!c->hello_sent) {
		/* the hello carries the identity: wait for the first values
		 * (not while pbusd is away) */
		pthread_mutex_lock(&panel->lock);
		bool wait = panel->connected && !panel->primed;
		pthread_mutex_unlock(&panel->lock);
		if (wait) {
			web_out_free(&o);
			return false;
		}
		struct web_model *model = web_panel_model(panel);
		pthread_mutex_lock(&panel->lock);
		bool writable = false;
		for (uint32_t i = 0; model && user && i < model->count; i++) {
			const struct web_param *p = &model->params[i];
			writable |= !(p->flags & PBUS_PARAM_READONLY) && web_user_in_group(user, p->group);
		}
		web_message_hello(&o, s->panel.instance, model, model == panel->model ? panel->values : NULL, user,
				  writable, panel->connected);
		pthread_mutex_unlock(&panel->lock);
		web_model_unref(panel, model);
		c->hello_sent = true;
	} else if (c->queue_count) {
		web_out_free(&o);
		o = c->queue[c->queue_first];
		c->queue_first = (c->queue_first + 1) % WEB_CONN_QUEUE;
		c->queue_count--;
	} else {
		pthread_mutex_lock(&panel->lock);
		uint64_t epoch = panel->epoch;
		bool connected = panel->connected;
		struct web_model *model = panel->model;
		if (model)
			model->refs++;
		if (epoch != c->epoch_seen && connected && model && model->hash != c->hash_sent) {
			pthread_mutex_unlock(&panel->lock);
			web_message_schema(&o, model, user);
			c->hash_sent = model->hash;
		} else if (epoch != c->epoch_seen) {
			web_message_pbusd(&o, connected);
			c->epoch_seen = epoch;
			c->gen_seen = 0;
			pthread_mutex_unlock(&panel->lock);
		} else if (connected && model && panel->gen > c->gen_seen) {
			web_message_values_begin(&o);
			bool first = true;
			for (uint32_t i = 0; i < model->count; i++) {
				const struct web_value *v = &panel->values[i];
				if (v->json && v->gen > c->gen_seen) {
					web_message_values_add(&o, first, i, v);
					first = false;
				}
			}
			web_message_values_end(&o);
			c->gen_seen = panel->gen;
			pthread_mutex_unlock(&panel->lock);
			if (first) { /* nothing (the values were dropped at a reconnect) */
				web_model_unref(panel, model);
				web_out_free(&o);
				return false;
			}
		} else {
			pthread_mutex_unlock(&panel->lock);
			web_model_unref(panel, model);
			web_out_free(&o);
			return false;
		}
		web_model_unref(panel, model);
	}
	if (o.failed) {
		web_out_free(&o);
		conn_close_soon(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
		return false;
	}
	size_t length = o.length - LWS_PRE;
	int n = lws_write(c->wsi, (unsigned char *)o.data + LWS_PRE, length, LWS_WRITE_TEXT);
	web_out_free(&o);
	if (n < (int)length) {
		conn_close_soon(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "write failed");
		return false;
	}
	return true;
}

/* Hand the SET thread's results to their WebSockets. */
static void deliver_results(struct web_server *s)
{
	struct web_set_job *job = web_panel_take_results(&s->panel);
	while (job) {
		struct web_set_job *next = job->next;
		for (struct web_conn *c = s->conns; c; c = c->next)
			if (c->serial == job->conn_serial) {
				c->sets_in_flight--;
				conn_set_result(c, job->id, job->ok, job->error, job->current);
				if (!job->ok)
					log_msg(LOG_INFO, "%s: %s", c->peer, job->error);
				break;
			}
		web_set_job_free(job);
		job = next;
	}
}

static int callback_panel(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct web_conn *c = user;
	struct web_server *s = server_of(wsi);
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		/* CONFIRM_UPGRADE checked the request; here the login is kept */
		memset(c, 0, sizeof(*c));
		if (s->conn_count >= s->max_clients)
			return 1;
		struct web_login *l = request_login(wsi, s);
		if (l) {
			c->has_login = true;
			c->login_serial = l->serial;
		} else if (s->read_login) {
			return 1;
		}
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED:
		c->wsi = wsi;
		c->serial = ++s->next_conn_serial;
		c->in = malloc(s->max_message);
		if (!c->in)
			return -1;
		lws_get_peer_simple(wsi, c->peer, sizeof(c->peer));
		c->tokens = MESSAGE_BURST;
		c->tokens_ns = now_ns();
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = &c->next;
		c->prev = &s->conns;
		s->conns = c;
		s->conn_count++;
		log_msg(LOG_INFO, "WebSocket %s: connected%s%s", c->peer, c->has_login ? " as " : "",
			c->has_login ? conn_user(s, c, false)->name : "");
		lws_set_timer_usecs(wsi, 1000000);
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if (c->close_code)
			return 0;
		if (lws_frame_is_binary(wsi)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, (unsigned char *)"text frames only", 16);
			return -1;
		}
		if (c->in_length + len > s->max_message) {
			char why[64];
			int n = snprintf(why, sizeof(why), "a message is at most %zu bytes", s->max_message);
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)why, (size_t)n);
			return -1;
		}
		memcpy(c->in + c->in_length, in, len);
		c->in_length += len;
		if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
			handle_message(s, c);
			c->in_length = 0;
		}
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (c->close_code) {
			lws_close_reason(wsi, (enum lws_close_status)c->close_code, (unsigned char *)c->close_reason,
					 strlen(c->close_reason));
			return -1;
		}
		if (conn_send_next(s, c))
			lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_TIMER:
		if (c->has_login && !conn_user(s, c, false)) {
			log_msg(LOG_INFO, "WebSocket %s: the login ended", c->peer);
			conn_close_soon(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "session expired or logged out");
		} else {
			lws_set_timer_usecs(wsi, 1000000);
		}
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (c->prev) {
			*c->prev = c->next;
			if (c->next)
				c->next->prev = c->prev;
			s->conn_count--;
			log_msg(LOG_INFO, "WebSocket %s: closed", c->peer);
		}
		while (c->queue_count) {
			web_out_free(&c->queue[c->queue_first]);
			c->queue_first = (c->queue_first + 1) % WEB_CONN_QUEUE;
			c->queue_count--;
		}
		free(c->in);
		c->in = NULL;
		c->prev = NULL;
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		deliver_results(s);
		for (struct web_conn *k = s->conns; k; k = k->next)
			lws_callback_on_writable(k->wsi);
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{"http", callback_http, sizeof(struct web_http), 0, 0, NULL, 0},
	{WEB_PROTOCOL, callback_panel, sizeof(struct web_conn), 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

const struct lws_protocols *const web_protocols = protocols;
