/* SPDX-License-Identifier: MIT */
/*
 * users.c: the users file of pbus-web (docs/web.md, "The users file"):
 * one user a line, "name:hash:group,group...", the hash made by crypt(3)
 * of libxcrypt (yescrypt "$y$", as `pbus-web --hash-password` makes it, or
 * bcrypt "$2b$"/"$2y$"). A malformed file is refused whole, with the file
 * and line of the first problem: a half-read users file would lock out a
 * user or, worse, let one in with the groups of the wrong line.
 *
 * A password is checked with crypt_r() and a comparison that does not
 * stop at the first differing byte; an unknown user name is checked
 * against a dummy hash of the same kind, so that the answer takes as long
 * (docs/web.md, "Security").
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pbus-web.h"

/* A hash of a random password, made at load (web_users_load()): what an
 * unknown user's password is checked against. */
static char dummy_hash[CRYPT_OUTPUT_SIZE];

static int parse_error(char *error, size_t size, const char *source, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int parse_error(char *error, size_t size, const char *source, unsigned line, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(error, size, "%s:%u: %s", source, line, what);
	return -EINVAL;
}

/* A user or group name: 1..64 of [A-Za-z0-9_.-], not starting with '-'. */
static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || n > WEB_NAME_MAX || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
	}
	return true;
}

static bool valid_hash(const char *s)
{
	if (strncmp(s, "$y$", 3) != 0 && strncmp(s, "$2b$", 4) != 0 && strncmp(s, "$2y$", 4) != 0)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '$' || *p == '.' || *p == '/'))
			return false;
	return crypt_checksalt(s) == CRYPT_SALT_OK;
}

int web_users_parse(const char *text, size_t length, const char *source, struct web_users *ret,
		    char *error, size_t error_size)
{
	struct web_users u = {0};
	size_t capacity = 0;
	unsigned lineno = 0;
	size_t pos = 0;
	int r = 0;
	while (pos < length) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', length - pos);
		size_t n = nl ? (size_t)(nl - line) : length - pos;
		pos += n + 1;
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		if (memchr(line, '\0', n)) {
			r = parse_error(error, error_size, source, lineno, "a NUL byte");
			goto fail;
		}
		size_t skip = 0;
		while (skip < n && (line[skip] == ' ' || line[skip] == '\t'))
			skip++;
		if (skip == n || line[skip] == '#')
			continue;
		if (skip) {
			r = parse_error(error, error_size, source, lineno, "a line starts with blanks");
			goto fail;
		}
		const char *c1 = memchr(line, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;
		if (!c2) {
			r = parse_error(error, error_size, source, lineno, "not name:hash:groups");
			goto fail;
		}
		size_t name_len = (size_t)(c1 - line), hash_len = (size_t)(c2 - c1 - 1);
		const char *groups = c2 + 1;
		size_t groups_len = n - (size_t)(groups - line);
		if (!valid_name(line, name_len)) {
			r = parse_error(error, error_size, source, lineno,
					"user name '%.*s' is not 1 to %d of A-Z a-z 0-9 _ . -", (int)(name_len > 64 ? 64 : name_len),
					line, WEB_NAME_MAX);
			goto fail;
		}
		if (capacity == u.count) {
			size_t cap = capacity ? capacity * 2 : 8;
			struct web_user *p = realloc(u.users, cap * sizeof(*p));
			if (!p) {
				r = -ENOMEM;
				goto fail;
			}
			u.users = p;
			capacity = cap;
		}
		struct web_user *user = &u.users[u.count];
		memset(user, 0, sizeof(*user));
		memcpy(user->name, line, name_len);
		if (web_users_find(&u, user->name)) {
			r = parse_error(error, error_size, source, lineno, "user '%s' twice", user->name);
			goto fail;
		}
		user->hash = strndup(c1 + 1, hash_len);
		if (!user->hash) {
			r = -ENOMEM;
			goto fail;
		}
		u.count++;
		if (!valid_hash(user->hash)) {
			r = parse_error(error, error_size, source, lineno,
					"user '%s': the hash is not a yescrypt ($y$) or bcrypt ($2b$) hash "
					"(make one with pbus-web --hash-password)", user->name);
			goto fail;
		}
		size_t g = 0;
		while (g < groups_len) {
			const char *comma = memchr(groups + g, ',', groups_len - g);
			size_t len = comma ? (size_t)(comma - groups - g) : groups_len - g;
			if (!valid_name(groups + g, len)) {
				r = parse_error(error, error_size, source, lineno, "user '%s': group '%.*s' is not a name",
						user->name, (int)(len > 64 ? 64 : len), groups + g);
				goto fail;
			}
			if (user->group_count == WEB_GROUPS_MAX) {
				r = parse_error(error, error_size, source, lineno, "user '%s': more than %d groups",
						user->name, WEB_GROUPS_MAX);
				goto fail;
			}
			memcpy(user->groups[user->group_count++], groups + g, len);
			g += len + 1;
			if (comma && g == groups_len) {
				r = parse_error(error, error_size, source, lineno, "user '%s': a group list ends in ','",
						user->name);
				goto fail;
			}
		}
	}
	*ret = u;
	return 0;
fail:
	if (r == -ENOMEM)
		snprintf(error, error_size, "%s: out of memory", source);
	web_users_fini(&u);
	return r;
}

int web_users_load(const char *path, struct web_users *ret, char *error, size_t error_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		snprintf(error, error_size, "%s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (16 << 20)) {
		close(fd);
		snprintf(error, error_size, "%s: not a regular file of at most 16 MiB", path);
		return -EINVAL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (text && got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!text) {
		snprintf(error, error_size, "%s: out of memory", path);
		return -ENOMEM;
	}
	int r = web_users_parse(text, got, path, ret, error, error_size);
	free(text);
	if (r == 0 && !dummy_hash[0]) {
		unsigned char random[16];
		char password[33];
		if (getentropy(random, sizeof(random)) < 0)
			memset(random, 0x5a, sizeof(random));
		for (size_t i = 0; i < sizeof(random); i++)
			snprintf(password + 2 * i, 3, "%02x", random[i]);
		if (web_hash_password(password, dummy_hash, sizeof(dummy_hash)) < 0)
			dummy_hash[0] = '\0';
	}
	return r;
}

void web_users_fini(struct web_users *users)
{
	for (size_t i = 0; i < users->count; i++)
		free(users->users[i].hash);
	free(users->users);
	memset(users, 0, sizeof(*users));
}

const struct web_user *web_users_find(const struct web_users *users, const char *name)
{
	for (size_t i = 0; i < users->count; i++)
		if (strcmp(users->users[i].name, name) == 0)
			return &users->users[i];
	return NULL;
}

bool web_users_verify(const struct web_user *user, const char *password)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	if (!data)
		return false;
	const char *setting = user ? user->hash : dummy_hash;
	bool ok = false;
	if (*setting) {
		const char *out = crypt_r(password, setting, data);
		if (out && out[0] != '*') {
			size_t n = strlen(setting);
			unsigned char diff = (unsigned char)(strlen(out) != n);
			for (size_t i = 0; i < n && out[i]; i++)
				diff |= (unsigned char)(out[i] ^ setting[i]);
			ok = diff == 0;
		}
	}
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ok && user != NULL;
}

int web_hash_password(const char *password, char *buf, size_t size)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	if (!crypt_gensalt_rn("$y$", 0, NULL, 0, setting, sizeof(setting)))
		return errno ? -errno : -EINVAL;
	struct crypt_data *data = calloc(1, sizeof(*data));
	if (!data)
		return -ENOMEM;
	const char *out = crypt_r(password, setting, data);
	int r = 0;
	if (!out || out[0] == '*')
		r = -EINVAL;
	else if (strlen(out) >= size)
		r = -EMSGSIZE;
	else
		memcpy(buf, out, strlen(out) + 1);
	explicit_bzero(data, sizeof(*data));
	free(data);
	return r;
}

bool web_user_in_group(const struct web_user *user, const char *group)
{
	if (!user)
		return false;
	if (!group || !*group)
		return true;
	for (size_t i = 0; i < user->group_count; i++)
		if (strcmp(user->groups[i], group) == 0)
			return true;
	return false;
}
