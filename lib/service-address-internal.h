/* SPDX-License-Identifier: MIT */
/*
 * service-address-internal.h: the one place that says what a service
 * address and a service endpoint are (docs/socket-protocol.md §3.6), for
 * pbusd's registry (daemon/registry.c), the client library
 * (client-service.c) and the methods runtime. The public face of it is
 * pbus_service_address_registry() (parambus/client.h).
 *
 * No state; any thread.
 */
#ifndef PBUS_SERVICE_ADDRESS_INTERNAL_H
#define PBUS_SERVICE_ADDRESS_INTERNAL_H

#include <stddef.h>

#include <parambus/client.h> /* PBUS_SERVICE_*_MAX */

/*
 * Check the @n bytes at @address (not NUL-terminated) against the grammar
 * "local:INSTANCE:INTERFACE" of §3.6. 0 with the registry's instance name
 * (INSTANCE up to its first '/') in @registry (NUL-terminated; @registry
 * may be NULL), or -EINVAL with *@ret_problem (may be NULL) a static text
 * naming the problem ("the domain is not \"local\"") — also when
 * @registry_size is too small for the name (PBUS_SERVICE_INSTANCE_MAX + 1
 * always does).
 */
int pbus_service_address_check(const char *address, size_t n, char *registry, size_t registry_size,
			       const char **ret_problem);

/* Check the @n bytes of an endpoint (an abstract socket name without its
 * leading NUL): 1 ... PBUS_SERVICE_ENDPOINT_MAX bytes, no NUL. 0 or -EINVAL
 * with *@ret_problem (may be NULL). */
int pbus_service_endpoint_check(const char *endpoint, size_t n, const char **ret_problem);

#endif
