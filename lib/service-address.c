/* SPDX-License-Identifier: MIT */
/*
 * service-address.c: service addresses and endpoints
 * (service-address-internal.h, docs/socket-protocol.md §3.6).
 *
 * An address is "local:INSTANCE:INTERFACE". The domain is "local" (this
 * machine: the only one so far). INSTANCE is 1..64 bytes of letters,
 * digits, '_', '-', '.' and '/'; its part before the first '/' names the
 * pbusd instance that is the registry, so one pbusd can hold the servers
 * of a whole instrument ("psu", "psu/ch1", "psu/ch2"). INTERFACE is a
 * Franca fully qualified name: identifiers joined by '.'. Everything is
 * ASCII, so an address is safe to print and to put in JSON as it is.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "service-address-internal.h"

static const char LOCAL[] = "local:";

static int problem(const char **ret_problem, const char *text)
{
	if (ret_problem)
		*ret_problem = text;
	return -EINVAL;
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Identifiers [A-Za-z_][A-Za-z0-9_]* joined by '.': at least one, no
 * empty one. */
static bool interface_valid(const char *s, size_t n)
{
	size_t i = 0;

	for (;;) {
		if (i == n || !is_letter(s[i]))
			return false;
		while (++i < n && (is_letter(s[i]) || is_digit(s[i])))
			;
		if (i == n)
			return true;
		if (s[i] != '.')
			return false;
		i++;
	}
}

int pbus_service_address_check(const char *address, size_t n, char *registry, size_t registry_size,
			       const char **ret_problem)
{
	const char *instance, *colon, *interface, *end = address + n;
	size_t instance_length, registry_length;

	if (n > PBUS_SERVICE_ADDRESS_MAX)
		return problem(ret_problem, "longer than 255 bytes");
	if (n < sizeof(LOCAL) - 1 || memcmp(address, LOCAL, sizeof(LOCAL) - 1) != 0)
		return problem(ret_problem, "the domain is not \"local\" (local:INSTANCE:INTERFACE)");
	instance = address + sizeof(LOCAL) - 1;
	colon = memchr(instance, ':', (size_t)(end - instance));
	if (!colon)
		return problem(ret_problem, "no interface (local:INSTANCE:INTERFACE)");
	instance_length = (size_t)(colon - instance);
	if (instance_length == 0 || instance_length > PBUS_SERVICE_INSTANCE_MAX)
		return problem(ret_problem, "the instance is not 1..64 bytes");
	registry_length = instance_length;
	for (size_t i = 0; i < instance_length; i++) {
		char c = instance[i];

		if (c == '/' && registry_length == instance_length)
			registry_length = i;
		if (!is_letter(c) && !is_digit(c) && c != '-' && c != '.' && c != '/')
			return problem(ret_problem,
				       "the instance has a character other than letters, digits, '_', '-', '.', '/'");
	}
	if (registry_length == 0)
		return problem(ret_problem, "the instance's part before '/' (the registry) is empty");
	interface = colon + 1;
	if (!interface_valid(interface, (size_t)(end - interface)))
		return problem(ret_problem,
			       "the interface is not a fully qualified name (identifiers joined by '.')");
	if (registry) {
		if (registry_size <= registry_length)
			return problem(ret_problem, "no room for the registry's name");
		memcpy(registry, instance, registry_length);
		registry[registry_length] = 0;
	}
	return 0;
}

int pbus_service_endpoint_check(const char *endpoint, size_t n, const char **ret_problem)
{
	if (n == 0 || n > PBUS_SERVICE_ENDPOINT_MAX)
		return problem(ret_problem, "the endpoint is not 1..107 bytes");
	if (memchr(endpoint, 0, n))
		return problem(ret_problem, "the endpoint has a NUL byte");
	return 0;
}

int pbus_service_address_registry(const char *address, char *registry, size_t size)
{
	if (!address || !registry)
		return -EINVAL;
	return pbus_service_address_check(address, strnlen(address, PBUS_SERVICE_ADDRESS_MAX + 1), registry,
					  size, NULL);
}
