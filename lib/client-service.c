/* SPDX-License-Identifier: MIT */
/*
 * client-service.c: services through the client (parambus/client.h,
 * docs/socket-protocol.md §3.6): registering with pbusd, looking up and
 * watching addresses. Like subscriptions, registrations and watches
 * outlive connections: the client keeps them in its tables and sends them
 * again with the HELLO of every reconnect (client-connection.c's
 * send_handshake()), and a renewal pbusd refuses is dispatch's deferred
 * error. A watch's states, the reply to its LOOKUP and every SERVICE
 * notification, go through the queue of notifications (as frames of type
 * SERVICE whose id is the watch's), so that callbacks run from dispatch
 * only, in the order the states came.
 */
#include "client-internal.h"
#include "service-address-internal.h"

static struct client_service *find_registration(struct pbus_client *c, const char *address)
{
	for (size_t i = 0; i < c->service_count; i++)
		if (!strcmp(c->services[i].address, address))
			return &c->services[i];
	return NULL;
}

static struct client_service *find_registration_id(struct pbus_client *c, uint32_t id)
{
	for (size_t i = 0; i < c->service_count; i++)
		if (c->services[i].id == id)
			return &c->services[i];
	return NULL;
}

static struct client_service_watch *find_watch(struct pbus_client *c, const char *address)
{
	for (size_t i = 0; i < c->watch_count; i++)
		if (!strcmp(c->watches[i].address, address))
			return &c->watches[i];
	return NULL;
}

static struct client_service_watch *find_watch_id(struct pbus_client *c, uint32_t id)
{
	for (size_t i = 0; i < c->watch_count; i++)
		if (c->watches[i].id == id)
			return &c->watches[i];
	return NULL;
}

static uint32_t next_id(struct pbus_client *c)
{
	uint32_t id;

	do {
		id = ++c->next_service_id;
	} while (id == 0 || find_registration_id(c, id) || find_watch_id(c, id));
	return id;
}

/* An address of this client's pbusd: well formed, and its registry is
 * the instance the client is connected to. 0 or -EINVAL. */
static int check_address(const struct pbus_client *c, const char *address)
{
	char registry[PBUS_SERVICE_INSTANCE_MAX + 1];

	if (!address || pbus_service_address_check(address, strnlen(address, PBUS_SERVICE_ADDRESS_MAX + 1),
						   registry, sizeof(registry), NULL) < 0)
		return -EINVAL;
	return strcmp(registry, c->instance) ? -EINVAL : 0;
}

/* A SERVICE body as the caller sees it. -EPROTO for fields that do not fit
 * (a server that breaks §3.6). */
static int service_info(const void *body, size_t n, struct pbus_service_info *info)
{
	struct pbus_proto_service m;

	if (pbus_proto_service_decode(body, n, &m, NULL) < 0 || m.address.length > PBUS_SERVICE_ADDRESS_MAX ||
	    m.endpoint.length > PBUS_SERVICE_ENDPOINT_MAX)
		return -EPROTO;
	memset(info, 0, sizeof(*info));
	info->available = m.available != 0;
	info->major = m.major;
	info->minor = m.minor;
	info->pid = (pid_t)m.pid;
	info->uid = (uid_t)m.uid;
	memcpy(info->address, m.address.s, m.address.length);
	memcpy(info->endpoint, m.endpoint.s, m.endpoint.length);
	return 0;
}

/* Queue @body (a checked SERVICE) for watch @w's callback. */
static int queue_state(struct pbus_client *c, const struct client_service_watch *w, const void *body, size_t n)
{
	size_t start = pbus_wire_begin(&c->queue, PBUS_WIRE_SERVICE, w->id);

	pbus_wire_bytes(&c->queue, body, n);
	return pbus_wire_end(&c->queue, start);
}

/* --- renewals, notifications, dispatch (client-internal.h) ----------------- */

int pbus_client_put_service_renewals(struct pbus_client *c)
{
	int r = 0;

	for (size_t i = 0; i < c->service_count && r == 0; i++) {
		const struct client_service *v = &c->services[i];
		struct pbus_proto_service_register m = {
			.address = {v->address, (uint32_t)strlen(v->address)},
			.major = v->major, .minor = v->minor,
			.endpoint = {v->endpoint, (uint32_t)strlen(v->endpoint)}};
		uint32_t id = pbus_client_next_request_id(c);

		r = pbus_proto_service_register_encode(&c->out, id, &m);
		if (r == 0)
			r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_REREGISTER,
									 .request_type = PBUS_WIRE_SERVICE_REGISTER,
									 .subscription = v->id});
	}
	for (size_t i = 0; i < c->watch_count && r == 0; i++) {
		const struct client_service_watch *w = &c->watches[i];
		struct pbus_proto_service_lookup m = {.address = {w->address, (uint32_t)strlen(w->address)},
						      .watch = 1};
		uint32_t id = pbus_client_next_request_id(c);

		r = pbus_proto_service_lookup_encode(&c->out, id, &m);
		if (r == 0)
			r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_REWATCH,
									 .request_type = PBUS_WIRE_SERVICE_LOOKUP,
									 .subscription = w->id});
	}
	return r;
}

/* Tell pbusd, without waiting, to end a watch nobody here wants (its
 * renewal or LOOKUP came back after the caller gave it up). */
static int send_unwatch(struct pbus_client *c, const struct pbus_proto_str *address)
{
	uint32_t id = pbus_client_next_request_id(c);
	int r = pbus_proto_str_encode(&c->out, PBUS_WIRE_SERVICE_UNWATCH, id, address->s, address->length);

	if (r == 0)
		r = pbus_client_push_pending(c, (struct pending){.id = id, .kind = PENDING_ABANDONED,
								 .request_type = PBUS_WIRE_SERVICE_UNWATCH});
	return r < 0 ? r : pbus_client_flush(c);
}

int pbus_client_service_watched(struct pbus_client *c, uint32_t watch, const void *body, size_t n)
{
	struct client_service_watch *w = find_watch_id(c, watch);
	struct pbus_service_info info;
	struct pbus_proto_service m;

	if (service_info(body, n, &info) < 0)
		return -EPROTO;
	if (!w) {
		pbus_proto_service_decode(body, n, &m, NULL);
		return send_unwatch(c, &m.address);
	}
	w->active = true;
	return queue_state(c, w, body, n);
}

int pbus_client_handle_service_renewal(struct pbus_client *c, const struct pending *p, unsigned type,
				       const void *body, size_t n)
{
	struct client_service *v;
	struct pbus_proto_error e;

	if (type == PBUS_WIRE_ERROR) {
		/* Kept, and tried again at the next reconnect; dispatch says
		 * why once (someone else took the address meanwhile). */
		c->deferred_error = pbus_proto_error_decode(body, n, &e, NULL) < 0 ? -EPROTO : e.code;
		return 0;
	}
	if (p->kind == PENDING_REWATCH)
		return pbus_client_service_watched(c, p->subscription, body, n);
	if (pbus_proto_empty_decode(PBUS_WIRE_SERVICE_REGISTERED, n, NULL) < 0)
		return -EPROTO;
	v = find_registration_id(c, p->subscription);
	if (v)
		v->registered = true;
	return 0;
}

int pbus_client_service_abandoned(struct pbus_client *c, const struct pending *p, unsigned type,
				  const void *body, size_t n)
{
	struct pbus_proto_service m;

	/* A watching LOOKUP that timed out: pbusd watches for nobody. */
	if (!p->subscription || type != PBUS_WIRE_SERVICE || find_watch_id(c, p->subscription) ||
	    pbus_proto_service_decode(body, n, &m, NULL) < 0)
		return 0;
	return send_unwatch(c, &m.address);
}

int pbus_client_handle_service_notify(struct pbus_client *c, const void *body, size_t n)
{
	struct pbus_service_info info;
	struct client_service_watch *w;

	if (service_info(body, n, &info) < 0)
		return -EPROTO;
	w = find_watch(c, info.address);
	if (!w || !w->active)
		return 0; /* unwatched meanwhile */
	return queue_state(c, w, body, n);
}

bool pbus_client_deliver_service(struct pbus_client *c, uint32_t watch, const void *body, size_t n)
{
	struct client_service_watch *w = find_watch_id(c, watch);
	struct pbus_service_info info;

	if (!w || service_info(body, n, &info) < 0)
		return false;
	/* (the callback may watch and unwatch: w is not used after it) */
	w->callback(c, &info, w->userdata);
	return true;
}

void pbus_client_services_lost(struct pbus_client *c)
{
	for (size_t i = 0; i < c->service_count; i++)
		c->services[i].registered = false;
	for (size_t i = 0; i < c->watch_count; i++)
		c->watches[i].active = false;
}

void pbus_client_services_free(struct pbus_client *c)
{
	free(c->services);
	free(c->watches);
	c->services = NULL;
	c->watches = NULL;
	c->service_count = c->watch_count = 0;
}

/* --- the public calls ----------------------------------------------------- */

static int grow(void **array, size_t count, size_t *capacity, size_t size)
{
	void *a;
	size_t n;

	if (count < *capacity)
		return 0;
	n = *capacity ? *capacity * 2 : 4;
	a = realloc(*array, n * size);
	if (!a)
		return -ENOMEM;
	*array = a;
	*capacity = n;
	return 0;
}

int pbus_client_register_service(struct pbus_client *client, const char *address, uint32_t major,
				 uint32_t minor, const char *endpoint)
{
	struct pbus_client *c = client;
	struct pbus_proto_service_register m;
	struct client_service *v;
	size_t endpoint_length;
	int r;

	if (!c || check_address(c, address) < 0 || !endpoint)
		return -EINVAL;
	endpoint_length = strnlen(endpoint, PBUS_SERVICE_ENDPOINT_MAX + 1);
	if (pbus_service_endpoint_check(endpoint, endpoint_length, NULL) < 0)
		return -EINVAL;
	/* Room first: a registration pbusd made must not be lost for want of it. */
	r = grow((void **)&c->services, c->service_count, &c->service_capacity, sizeof(*c->services));
	if (r < 0)
		return r;
	m = (struct pbus_proto_service_register){.address = {address, (uint32_t)strlen(address)},
						 .major = major, .minor = minor,
						 .endpoint = {endpoint, (uint32_t)endpoint_length}};
	r = pbus_proto_service_register_encode(pbus_client_request_buf(c), 0, &m);
	if (r == 0)
		r = pbus_client_transact(c, 0, true);
	if (r == 0 && pbus_proto_empty_decode(PBUS_WIRE_SERVICE_REGISTERED, c->reply.size, NULL) < 0)
		r = -EPROTO;
	if (r < 0)
		return pbus_client_finish(c, r);
	v = find_registration(c, address);
	if (!v) {
		v = &c->services[c->service_count];
		memset(v, 0, sizeof(*v));
		memcpy(v->address, address, m.address.length + 1);
		v->id = next_id(c);
		c->service_count++;
	}
	v->major = major;
	v->minor = minor;
	memcpy(v->endpoint, endpoint, endpoint_length);
	v->endpoint[endpoint_length] = 0;
	v->registered = true;
	return pbus_client_finish(c, 0);
}

int pbus_client_unregister_service(struct pbus_client *client, const char *address)
{
	struct pbus_client *c = client;
	struct client_service *v;
	int r = -ENOENT;

	if (!c || check_address(c, address) < 0)
		return -EINVAL;
	v = find_registration(c, address);
	/* Connected: pbusd is told (also of one the client does not remember:
	 * a registration whose reply timed out). Disconnected: pbusd forgot
	 * it with the connection. */
	if (c->state != CLIENT_DISCONNECTED) {
		r = pbus_proto_str_encode(pbus_client_request_buf(c), PBUS_WIRE_SERVICE_UNREGISTER, 0, address,
					  strlen(address));
		if (r == 0)
			r = pbus_client_transact(c, 0, false);
		if (r == 0 && pbus_proto_empty_decode(PBUS_WIRE_SERVICE_UNREGISTERED, c->reply.size, NULL) < 0)
			r = -EPROTO;
		v = find_registration(c, address);
		/* Gone either way: a lost connection took it along, and pbusd
		 * may not hold a renewal it refused. */
		if (v && (r == -ENOTCONN || r == -ENOENT))
			r = 0;
	}
	if (v) {
		memmove(v, v + 1, (size_t)(&c->services[c->service_count] - (v + 1)) * sizeof(*v));
		c->service_count--;
		if (r == -ENOENT)
			r = 0;
	}
	return pbus_client_finish(c, r);
}

int pbus_client_lookup_service(struct pbus_client *client, const char *address,
			       struct pbus_service_info *ret_info)
{
	struct pbus_client *c = client;
	struct pbus_proto_service_lookup m;
	int r;

	if (!c || check_address(c, address) < 0 || !ret_info)
		return -EINVAL;
	m = (struct pbus_proto_service_lookup){.address = {address, (uint32_t)strlen(address)}, .watch = 0};
	r = pbus_proto_service_lookup_encode(pbus_client_request_buf(c), 0, &m);
	if (r == 0)
		r = pbus_client_transact(c, 0, true);
	if (r == 0)
		r = service_info(c->reply.data, c->reply.size, ret_info);
	return pbus_client_finish(c, r);
}

int pbus_client_watch_service(struct pbus_client *client, const char *address, pbus_client_service_fn fn,
			      void *userdata)
{
	struct pbus_client *c = client;
	struct pbus_proto_service_lookup m;
	struct client_service_watch *w;
	uint32_t id;
	bool added = false;
	int r;

	if (!c || check_address(c, address) < 0 || !fn)
		return -EINVAL;
	w = find_watch(c, address);
	if (!w) {
		r = grow((void **)&c->watches, c->watch_count, &c->watch_capacity, sizeof(*c->watches));
		if (r < 0)
			return r;
		w = &c->watches[c->watch_count];
		memset(w, 0, sizeof(*w));
		memcpy(w->address, address, strlen(address) + 1);
		w->id = next_id(c);
		c->watch_count++;
		added = true;
	}
	w->callback = fn;
	w->userdata = userdata;
	id = w->id;
	/* In the table (inactive) before the request: the reply activates it
	 * and queues its state the moment it is read (client-connection.c). */
	m = (struct pbus_proto_service_lookup){.address = {address, (uint32_t)strlen(address)}, .watch = 1};
	r = pbus_proto_service_lookup_encode(pbus_client_request_buf(c), 0, &m);
	if (r == 0)
		r = pbus_client_transact(c, id, true);
	if (r < 0 && added && (w = find_watch_id(c, id))) {
		memmove(w, w + 1, (size_t)(&c->watches[c->watch_count] - (w + 1)) * sizeof(*w));
		c->watch_count--;
	}
	return pbus_client_finish(c, r);
}

int pbus_client_unwatch_service(struct pbus_client *client, const char *address)
{
	struct pbus_client *c = client;
	struct client_service_watch *w;
	int r = 0;

	if (!c || check_address(c, address) < 0)
		return -EINVAL;
	w = find_watch(c, address);
	if (!w)
		return -ENOENT;
	if (c->state != CLIENT_DISCONNECTED) {
		r = pbus_proto_str_encode(pbus_client_request_buf(c), PBUS_WIRE_SERVICE_UNWATCH, 0, address,
					  strlen(address));
		if (r == 0)
			r = pbus_client_transact(c, 0, false);
		/* Gone either way (see pbus_client_unregister_service()). */
		if (r == -ENOTCONN || r == -ENOENT)
			r = 0;
		w = find_watch(c, address);
	}
	if (w) {
		memmove(w, w + 1, (size_t)(&c->watches[c->watch_count] - (w + 1)) * sizeof(*w));
		c->watch_count--;
	}
	return pbus_client_finish(c, r);
}
