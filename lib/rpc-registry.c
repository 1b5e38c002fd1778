/* SPDX-License-Identifier: MIT */
/*
 * rpc-registry.c: a loop's connections to pbusd as the registry of method
 * servers (docs/socket-protocol.md §3.6). One struct pbus_client per pbusd
 * (socket directory and instance) and loop, shared by the loop's stubs
 * (which register there) and proxies (which look up and watch there); its
 * descriptor is one of the loop's sources, so the client's own reconnects,
 * renewed registrations and watch notifications happen in the loop
 * thread. The client is used under the registry's lock (a pbus_client is
 * one thread's at a time); the lock order is a proxy's lock, then this.
 *
 * Several proxies of one address share the client's one watch of it: the
 * registry keeps the list and fans each change out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "rpc-internal.h"

struct registry {
	struct pbus_loop *loop;
	char *socket_dir;
	char instance[RPC_INSTANCE_MAX + 1];
	unsigned refs; /* under the loop's lock */
	pthread_mutex_t lock;
	struct pbus_client *client;
	struct loop_source source;
	struct registry_watch *watches;
	struct registry *next;
};

int rpc_address_parse(const char *address, char *registry, size_t size)
{
	if (!address || pbus_service_address_registry(address, registry, size) < 0)
		return rpc_fail(-EINVAL,
				"'%s' is not an address of the form local:INSTANCE:INTERFACE "
				"(e.g. local:psu:com.example.psu.PowerSupply)",
				address ? address : "(null)");
	return 0;
}

static void client_ready(struct loop_source *source, uint32_t events)
{
	struct registry *reg = (struct registry *)((char *)source - offsetof(struct registry, source));

	(void)events;
	pthread_mutex_lock(&reg->lock);
	pbus_client_dispatch(reg->client);
	pthread_mutex_unlock(&reg->lock);
}

static bool same_dir(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int registry_get(struct pbus_loop *loop, const char *socket_dir, const char *instance,
		 struct registry **ret)
{
	struct pbus_client_options o = {.socket_dir = socket_dir, .name = NULL};
	struct registry *reg;
	int r;

	pthread_mutex_lock(&loop->lock);
	for (reg = loop->registries; reg; reg = reg->next)
		if (!strcmp(reg->instance, instance) && same_dir(reg->socket_dir, socket_dir)) {
			reg->refs++;
			pthread_mutex_unlock(&loop->lock);
			*ret = reg;
			return 0;
		}
	pthread_mutex_unlock(&loop->lock);

	reg = calloc(1, sizeof *reg);
	if (!reg || (socket_dir && !(reg->socket_dir = strdup(socket_dir)))) {
		free(reg);
		return -ENOMEM;
	}
	snprintf(reg->instance, sizeof reg->instance, "%s", instance);
	reg->loop = loop;
	reg->refs = 1;
	pthread_mutex_init(&reg->lock, NULL);
	r = pbus_client_connect(instance, &o, &reg->client);
	if (r < 0) {
		free(reg->socket_dir);
		free(reg);
		return rpc_fail(r, "cannot reach pbusd of instance '%s' (the registry): %s", instance,
				strerror(-r));
	}
	reg->source = (struct loop_source){.fd = pbus_client_fd(reg->client), .ready = client_ready};
	pbus_loop_add(loop, &reg->source, EPOLLIN);
	pthread_mutex_lock(&loop->lock);
	reg->next = loop->registries;
	loop->registries = reg;
	pthread_mutex_unlock(&loop->lock);
	*ret = reg;
	return 0;
}

void registry_put(struct registry *reg)
{
	struct pbus_loop *loop;
	bool last;

	if (!reg)
		return;
	loop = reg->loop;
	pthread_mutex_lock(&loop->lock);
	last = --reg->refs == 0;
	if (last)
		for (struct registry **p = &loop->registries; *p; p = &(*p)->next)
			if (*p == reg) {
				*p = reg->next;
				break;
			}
	pthread_mutex_unlock(&loop->lock);
	if (!last)
		return;
	pbus_loop_remove(loop, &reg->source);
	pbus_client_close(reg->client);
	pthread_mutex_destroy(&reg->lock);
	free(reg->socket_dir);
	free(reg);
}

static void to_service(const struct pbus_service_info *info, struct rpc_service *svc)
{
	*svc = (struct rpc_service){.available = info->available, .major = info->major,
				    .minor = info->minor, .pid = info->pid, .uid = info->uid};
	snprintf(svc->endpoint, sizeof svc->endpoint, "%s", info->endpoint);
}

int registry_lookup(struct registry *reg, const char *address, struct rpc_service *ret)
{
	struct pbus_service_info info;
	int r;

	pthread_mutex_lock(&reg->lock);
	r = pbus_client_lookup_service(reg->client, address, &info);
	pthread_mutex_unlock(&reg->lock);
	if (r < 0)
		return rpc_fail(r == -ENOTCONN ? -ENOTCONN : r, "cannot look %s up with pbusd '%s': %s",
				address, reg->instance, strerror(-r));
	to_service(&info, ret);
	return 0;
}

int registry_register(struct registry *reg, const char *address, uint32_t major, uint32_t minor,
		      const char *endpoint)
{
	int r;

	pthread_mutex_lock(&reg->lock);
	r = pbus_client_register_service(reg->client, address, major, minor, endpoint);
	pthread_mutex_unlock(&reg->lock);
	if (r == -EADDRINUSE)
		return rpc_fail(r, "%s is served by another process already", address);
	if (r == -EPERM)
		return rpc_fail(r, "pbusd '%s' lets only root and its own user register servers",
				reg->instance);
	if (r < 0)
		return rpc_fail(r, "cannot register %s with pbusd '%s': %s", address, reg->instance,
				strerror(-r));
	return 0;
}

void registry_unregister(struct registry *reg, const char *address)
{
	pthread_mutex_lock(&reg->lock);
	pbus_client_unregister_service(reg->client, address);
	pthread_mutex_unlock(&reg->lock);
}

/* The client's callback (in dispatch, the registry's lock held): every
 * watcher of that address hears it. */
static void service_news(struct pbus_client *client, const struct pbus_service_info *info, void *userdata)
{
	struct registry *reg = userdata;
	struct rpc_service svc;

	(void)client;
	to_service(info, &svc);
	for (struct registry_watch *w = reg->watches; w; w = w->next)
		if (!strcmp(w->address, info->address))
			w->changed(w, &svc);
}

int registry_watch(struct registry *reg, struct registry_watch *watch)
{
	bool first = true;
	int r = 0;

	pthread_mutex_lock(&reg->lock);
	for (struct registry_watch *w = reg->watches; w; w = w->next)
		if (!strcmp(w->address, watch->address))
			first = false;
	watch->registry = reg;
	watch->next = reg->watches;
	reg->watches = watch;
	if (first)
		r = pbus_client_watch_service(reg->client, watch->address, service_news, reg);
	pthread_mutex_unlock(&reg->lock);
	return r;
}

void registry_unwatch(struct registry *reg, struct registry_watch *watch)
{
	bool last = true;

	pthread_mutex_lock(&reg->lock);
	for (struct registry_watch **p = &reg->watches; *p; p = &(*p)->next)
		if (*p == watch) {
			*p = watch->next;
			break;
		}
	for (struct registry_watch *w = reg->watches; w; w = w->next)
		if (!strcmp(w->address, watch->address))
			last = false;
	if (last)
		pbus_client_unwatch_service(reg->client, watch->address);
	pthread_mutex_unlock(&reg->lock);
}
