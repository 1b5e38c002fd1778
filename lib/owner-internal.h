/* SPDX-License-Identifier: MIT */
/*
 * owner-internal.h: whom a client trusts to own an instance
 * (docs/security.md, "Who is trusted"). A segment's file and pbusd's socket
 * carry their owner's uid, which nobody else can forge: the kernel sets it.
 * A client believes an instance only if that uid is root, the client's own
 * effective uid, or one named in $PBUS_OWNER (a comma-separated list of user
 * names or numeric uids), so that a local user who creates files or sockets
 * under an instance's names while its pbusd is down is refused, not served.
 */
#ifndef PBUS_OWNER_INTERNAL_H
#define PBUS_OWNER_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The environment variable that names further trusted owners. */
#define PBUS_OWNER_ENV "PBUS_OWNER"

/* Is @uid a trusted owner of instances for this process? Reads
 * $PBUS_OWNER at each call (a handful of getpwnam_r() lookups at open or
 * connect time, never on a hot path). Thread-safe. */
bool pbus_owner_trusted(uid_t uid);

/* May a file with status @st be an instance's file? A regular file of a
 * trusted owner that others cannot write (mode without S_IWOTH). 0, or
 * -EPERM (untrusted owner or world-writable) / -EPROTO (not a regular file). */
int pbus_owner_check_file(const struct stat *st);

#endif
