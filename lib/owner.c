/* SPDX-License-Identifier: MIT */
/*
 * owner.c: whom a client trusts to own an instance (owner-internal.h,
 * docs/security.md). The names an instance lives under (/dev/shm/pbus.NAME,
 * NAME.sock) can be taken by anybody while its pbusd is down; the owner's uid
 * cannot. So every reader, writer and socket client checks it.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "owner-internal.h"

/* Does @name (a user name or a decimal uid, @length bytes) name @uid? */
static bool names_uid(const char *name, size_t length, uid_t uid)
{
	char buf[256], pwbuf[1024];
	struct passwd pw, *found = NULL;
	char *end;
	unsigned long v;

	if (length == 0 || length >= sizeof(buf))
		return false;
	memcpy(buf, name, length);
	buf[length] = 0;
	if (buf[0] >= '0' && buf[0] <= '9') {
		errno = 0;
		v = strtoul(buf, &end, 10);
		return !*end && errno == 0 && v == (unsigned long)uid;
	}
	return getpwnam_r(buf, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found && found->pw_uid == uid;
}

bool pbus_owner_trusted(uid_t uid)
{
	const char *list = getenv(PBUS_OWNER_ENV);

	if (uid == 0 || uid == geteuid())
		return true;
	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (names_uid(list, n, uid))
			return true;
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

int pbus_owner_check_file(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return -EPROTO;
	if (!pbus_owner_trusted(st->st_uid) || (st->st_mode & S_IWOTH))
		return -EPERM;
	return 0;
}
