/* SPDX-License-Identifier: MIT */
/*
 * registry.c: pbusd as the registry of method servers
 * (docs/socket-protocol.md §3.6): SERVICE_REGISTER and _UNREGISTER, the
 * table of registrations, SERVICE_LOOKUP with its watches, SERVICE_UNWATCH,
 * and the SERVICE notifications that tell watchers of every change.
 *
 * pbusd only keeps the table: the calls go straight between a client and
 * the server's own socket (the endpoint). What pbusd vouches for is the
 * server's pid and uid, taken from its connection's SO_PEERCRED, which a
 * client compares with its peer's when it connects to the endpoint: so
 * nobody can pose as a registered server (docs/security.md).
 *
 * A registration lives as long as the connection that made it (or until it
 * unregisters): a server that dies is unregistered by the kernel closing
 * its socket, and its watchers are told at once. The table and the watches
 * are lists: they are bounded (--max-services, --max-subscriptions watches
 * per connection) and changed rarely, at a server's start and end.
 *
 * A notification to a watcher goes where a reply to it would go (its send
 * buffer, or behind a SET reply that waits for a save), so it follows the
 * reply of the SERVICE_LOOKUP that asked for it, and it obeys the
 * connection's bound on unread replies: a watcher that stops reading is
 * closed, it never holds up pbusd or the client whose change it is told of.
 *
 * Threads: the server thread's alone (pbusd.h).
 */
#include "server-internal.h"

/* @address as it may go into a one-line message: control bytes replaced
 * (a malformed address is the client's text). */
static const char *printable(const struct pbus_proto_str *address, char *buf, size_t size)
{
	size_t n = address->length < size - 1 ? address->length : size - 1;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)address->s[i];

		buf[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	buf[n] = 0;
	return buf;
}

/*
 * Is @address one this registry serves? 0 with it NUL-terminated in
 * @copy, or an ERROR EINVAL sent and -EINVAL: malformed, or registered
 * with another pbusd (its instance's part before '/' is not ours).
 */
static int check_address(struct server *s, struct client *c, uint32_t id, const struct pbus_proto_str *address,
			 char copy[PBUS_SERVICE_ADDRESS_MAX + 1])
{
	char registry[PBUS_SERVICE_INSTANCE_MAX + 1], text[PBUS_SERVICE_ADDRESS_MAX + 1];
	const char *problem = NULL;

	if (pbus_service_address_check(address->s, address->length, registry, sizeof(registry), &problem) < 0) {
		/* The problem first: a long address is cut to fit the line. */
		send_error(s, c, id, -EINVAL, "malformed service address: %s: '%.120s%s'", problem,
			   printable(address, text, sizeof(text)), address->length > 120 ? "..." : "");
		return -EINVAL;
	}
	memcpy(copy, address->s, address->length);
	copy[address->length] = 0;
	if (strcmp(registry, s->instance) != 0) {
		send_error(s, c, id, -EINVAL, "%s registers with pbusd '%s', this is '%s'", copy, registry,
			   s->instance);
		return -EINVAL;
	}
	return 0;
}

static struct service *find_service(struct server *s, const char *address)
{
	for (struct service *v = s->services; v; v = v->next)
		if (!strcmp(v->address, address))
			return v;
	return NULL;
}

static struct service_watch **find_watch(struct server *s, const struct client *c, const char *address)
{
	for (struct service_watch **w = &s->service_watches; *w; w = &(*w)->next)
		if ((*w)->client == c && !strcmp((*w)->address, address))
			return w;
	return NULL;
}

/* A SERVICE with @id (0: a notification) saying what is known of
 * @address now (@v, or NULL: not available), into @c's reply stream. */
static void put_service(struct client *c, uint32_t id, const char *address, const struct service *v)
{
	struct pbus_proto_service m = {.address = {address, (uint32_t)strlen(address)}};

	if (v) {
		m.available = 1;
		m.major = v->major;
		m.minor = v->minor;
		m.pid = (uint32_t)v->owner->pid;
		m.uid = (uint32_t)v->owner->uid;
		m.endpoint = (struct pbus_proto_str){v->endpoint, (uint32_t)strlen(v->endpoint)};
	}
	pbus_proto_service_encode(reply_buf(c), id, &m);
}

/* Tell every watcher of @address its state now (@v, or NULL: gone). */
static void notify_watchers(struct server *s, const char *address, const struct service *v)
{
	for (struct service_watch *w = s->service_watches; w; w = w->next) {
		struct client *c = w->client;

		if (c->closing || strcmp(w->address, address))
			continue;
		put_service(c, 0, address, v);
		c->notifications++;
		s->notifications++;
		if (c->tx.size + c->held.size > REPLY_BACKLOG_MAX) {
			/* It stopped reading: closed like a client that does
			 * not read its replies (§4), by service_clients(). */
			log_msg(LOG_WARNING, "server: client %d (%s) does not read its service notifications; "
				"closing", (int)c->pid, c->name);
			c->closing = true;
			c->tx.size = 0;
			s->reap = true;
			continue;
		}
		client_update_events(s, c);
	}
}

static void remove_service(struct server *s, struct service *v)
{
	for (struct service **p = &s->services; *p; p = &(*p)->next)
		if (*p == v) {
			*p = v->next;
			break;
		}
	v->owner->service_count--;
	s->service_count--;
}

void handle_service_register(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX], address[PBUS_SERVICE_ADDRESS_MAX + 1];
	struct pbus_proto_service_register m;
	const char *problem = NULL;
	struct service *v;

	if (pbus_proto_service_register_decode(body, n, &m, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	if (!c->privileged)
		return send_error(s, c, id, -EPERM, "only root and pbusd's user (uid %u) may register services",
				  (unsigned)geteuid());
	if (check_address(s, c, id, &m.address, address) < 0)
		return;
	if (pbus_service_endpoint_check(m.endpoint.s, m.endpoint.length, &problem) < 0)
		return send_error(s, c, id, -EINVAL, "%s: malformed endpoint: %s", address, problem);
	v = find_service(s, address);
	if (v && v->owner != c)
		return send_error(s, c, id, -EADDRINUSE, "%s is served by pid %d", address, (int)v->owner->pid);
	if (!v) {
		if (c->service_count >= SERVICES_PER_CLIENT_MAX)
			return send_error(s, c, id, -EMFILE, "too many services (at most %u per connection)",
					  SERVICES_PER_CLIENT_MAX);
		if (s->service_count >= s->max_services)
			return send_error(s, c, id, -EMFILE, "too many services (at most %u in all)",
					  s->max_services);
		v = calloc(1, sizeof(*v));
		if (!v)
			return send_error(s, c, id, -ENOMEM, "out of memory");
		memcpy(v->address, address, sizeof(address));
		v->owner = c;
		v->next = s->services;
		s->services = v;
		s->service_count++;
		c->service_count++;
	}
	/* New, or the same connection's update (version, endpoint). */
	v->major = m.major;
	v->minor = m.minor;
	memcpy(v->endpoint, m.endpoint.s, m.endpoint.length);
	v->endpoint[m.endpoint.length] = 0;
	pbus_proto_empty_encode(reply_buf(c), PBUS_WIRE_SERVICE_REGISTERED, id);
	log_msg(LOG_DEBUG, "server: client %d (%s) serves %s %u.%u at @%s", (int)c->pid, c->name, address,
		v->major, v->minor, v->endpoint);
	notify_watchers(s, address, v);
}

void handle_service_unregister(struct server *s, struct client *c, uint32_t id, const void *body,
			       size_t n)
{
	char why[PBUS_PROTO_WHY_MAX], text[PBUS_SERVICE_ADDRESS_MAX + 1];
	struct pbus_proto_str address;

	if (pbus_proto_service_address_decode(PBUS_WIRE_SERVICE_UNREGISTER, body, n, &address, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	printable(&address, text, sizeof(text));
	for (struct service *v = s->services; v; v = v->next) {
		if (v->owner != c || address.length != strlen(v->address) ||
		    memcmp(v->address, address.s, address.length))
			continue;
		remove_service(s, v);
		pbus_proto_empty_encode(reply_buf(c), PBUS_WIRE_SERVICE_UNREGISTERED, id);
		notify_watchers(s, v->address, NULL);
		free(v);
		return;
	}
	send_error(s, c, id, -ENOENT, "%s is not registered by this connection", text);
}

void handle_service_lookup(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX], address[PBUS_SERVICE_ADDRESS_MAX + 1];
	struct pbus_proto_service_lookup m;
	struct service_watch *w;

	if (pbus_proto_service_lookup_decode(body, n, &m, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	if (check_address(s, c, id, &m.address, address) < 0)
		return;
	if (m.watch && !find_watch(s, c, address)) {
		if (c->service_watch_count >= s->max_subscriptions)
			return send_error(s, c, id, -EMFILE, "too many service watches (at most %u per connection)",
					  s->max_subscriptions);
		w = calloc(1, sizeof(*w));
		if (!w)
			return send_error(s, c, id, -ENOMEM, "out of memory");
		memcpy(w->address, address, sizeof(address));
		w->client = c;
		w->next = s->service_watches;
		s->service_watches = w;
		s->service_watch_count++;
		c->service_watch_count++;
	}
	/* The state now; a watcher's notifications follow this reply. */
	put_service(c, id, address, find_service(s, address));
}

void handle_service_unwatch(struct server *s, struct client *c, uint32_t id, const void *body, size_t n)
{
	char why[PBUS_PROTO_WHY_MAX], text[PBUS_SERVICE_ADDRESS_MAX + 1];
	struct pbus_proto_str address;
	struct service_watch **p, *w;

	if (pbus_proto_service_address_decode(PBUS_WIRE_SERVICE_UNWATCH, body, n, &address, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	printable(&address, text, sizeof(text));
	p = address.length <= PBUS_SERVICE_ADDRESS_MAX && !memchr(address.s, 0, address.length)
		    ? find_watch(s, c, text)
		    : NULL;
	if (!p)
		return send_error(s, c, id, -ENOENT, "%s is not watched by this connection", text);
	w = *p;
	*p = w->next;
	free(w);
	s->service_watch_count--;
	c->service_watch_count--;
	pbus_proto_empty_encode(reply_buf(c), PBUS_WIRE_SERVICE_UNWATCHED, id);
}

void registry_client_closed(struct server *s, struct client *c)
{
	/* Its own watches first: it is told nothing more. */
	for (struct service_watch **p = &s->service_watches; c->service_watch_count && *p;) {
		struct service_watch *w = *p;

		if (w->client != c) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		free(w);
		s->service_watch_count--;
		c->service_watch_count--;
	}
	while (c->service_count) {
		struct service *v = s->services;

		while (v->owner != c)
			v = v->next;
		remove_service(s, v);
		log_msg(LOG_DEBUG, "server: %s is served no more (client %d closed)", v->address, (int)c->pid);
		notify_watchers(s, v->address, NULL);
		free(v);
	}
}

void registry_free(struct server *s)
{
	while (s->services) {
		struct service *next = s->services->next;

		free(s->services);
		s->services = next;
	}
	while (s->service_watches) {
		struct service_watch *next = s->service_watches->next;

		free(s->service_watches);
		s->service_watches = next;
	}
	s->service_count = s->service_watch_count = 0;
}

void registry_stats(const struct server *s, struct pbus_wire_buf *json)
{
	char line[PBUS_SERVICE_ADDRESS_MAX + 160];
	int n;

	/* Addresses are ASCII without quotes or backslashes (their grammar):
	 * they go into the JSON as they are. */
	pbus_wire_bytes(json, "\"services\": [", 13);
	for (const struct service *v = s->services; v; v = v->next) {
		n = snprintf(line, sizeof(line),
			     "%s{\"address\": \"%s\", \"pid\": %d, \"uid\": %u, \"major\": %u, \"minor\": %u}",
			     v == s->services ? "" : ", ", v->address, (int)v->owner->pid, (unsigned)v->owner->uid,
			     v->major, v->minor);
		pbus_wire_bytes(json, line, (size_t)n);
	}
	n = snprintf(line, sizeof(line), "], \"service_watches\": %u", s->service_watch_count);
	pbus_wire_bytes(json, line, (size_t)n);
}
