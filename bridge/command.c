/* SPDX-License-Identifier: MIT */
/*
 * command.c: commands from the broker (docs/fleet.md, "Commands"): the
 * payload's decoder, and the journal that makes a command applied at most
 * once even when the broker delivers it again (QoS 1 redelivery after a
 * reconnect, or after the bridge restarted).
 *
 * Crash safety of the journal: before the SET, a record "B KEY" is
 * appended and fdatasync'ed; after it, "D KEY RESULT SEQ". A bridge that
 * dies between the two leaves a B without its D: that command's outcome is
 * unknown, and it is never applied again (at most once), its redelivery
 * answered with that. A record cut by a crash has no newline and is
 * ignored when the file is read back (it was never acted on: the SET comes
 * only after the fdatasync). The file is compacted at open (a new file
 * written, fsync'ed and renamed over the old one, then the folder
 * fsync'ed) and whenever it holds twice BRIDGE_JOURNAL_KEYS records.
 */
#include "pbus-bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_FORMAT "parambus-bridge-journal 1"
#define JOURNAL_LINE_MAX (2 * (BRIDGE_TOPIC_MAX + 1 + BRIDGE_ID_MAX) + 64)

/* --------------------------------------------------------------- decoding */

int bridge_refuse(char *error, size_t size, const char *format, ...)
{
	if (size) {
		va_list ap;
		va_start(ap, format);
		vsnprintf(error, size, format, ap);
		va_end(ap);
		/* one line, whatever the input put into it (jansson's texts quote it) */
		for (char *p = error; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
	}
	return -EINVAL;
}

/* A JSON number or boolean as text; NULL for anything else. */
static char *scalar_text(const json_t *v)
{
	if (json_is_true(v))
		return strdup("true");
	if (json_is_false(v))
		return strdup("false");
	if (json_is_integer(v) || json_is_real(v))
		return json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	return NULL;
}

int bridge_command_decode(const char *payload, size_t length, struct bridge_command *ret, char *error,
			  size_t error_size)
{
	json_error_t jerr;
	*ret = (struct bridge_command){0};
	json_t *root = json_loadb(payload, length, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return bridge_refuse(error, error_size, "not JSON: %s", jerr.text);
	int r = 0;
	char *text = NULL;
	if (!json_is_object(root)) {
		r = bridge_refuse(error, error_size, "a command is a JSON object {\"id\": ..., \"value\": ...}");
		goto out;
	}
	const char *key;
	json_t *member;
	json_object_foreach(root, key, member) {
		if (strcmp(key, "id") != 0 && strcmp(key, "value") != 0) {
			r = bridge_refuse(error, error_size, "unknown member '%.40s' (a command has \"id\" and \"value\")", key);
			goto out;
		}
	}
	json_t *id = json_object_get(root, "id");
	if (id) {
		size_t n = json_is_string(id) ? json_string_length(id) : 0;
		const char *s = json_is_string(id) ? json_string_value(id) : "";
		if (n == 0 || n > BRIDGE_ID_MAX) {
			r = bridge_refuse(error, error_size, "\"id\" must be a string of 1 to %d bytes", BRIDGE_ID_MAX);
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
				r = bridge_refuse(error, error_size, "\"id\" contains a control character");
				goto out;
			}
		memcpy(ret->id, s, n + 1);
	}
	json_t *value = json_object_get(root, "value");
	if (!value) {
		r = bridge_refuse(error, error_size, "no \"value\"");
		goto out;
	}
	if (json_is_string(value)) {
		size_t n = json_string_length(value);
		if (n > BRIDGE_VALUE_TEXT_MAX || memchr(json_string_value(value), '\0', n)) {
			r = bridge_refuse(error, error_size, "the value is longer than %d bytes or holds a NUL",
				   BRIDGE_VALUE_TEXT_MAX);
			goto out;
		}
		text = strdup(json_string_value(value));
	} else if (json_is_array(value)) {
		size_t cap = 64, used = 0, i;
		json_t *e;
		text = malloc(cap);
		if (!text) {
			r = -ENOMEM;
			goto out;
		}
		text[0] = '\0';
		json_array_foreach(value, i, e) {
			char *t = scalar_text(e);
			if (!t) {
				r = bridge_refuse(error, error_size, "element %zu of the value is not a number or a boolean", i);
				goto out;
			}
			size_t n = strlen(t);
			if (used + n + 2 > BRIDGE_VALUE_TEXT_MAX) {
				free(t);
				r = bridge_refuse(error, error_size, "the value is longer than %d bytes", BRIDGE_VALUE_TEXT_MAX);
				goto out;
			}
			while (used + n + 2 > cap)
				cap *= 2;
			char *grown = realloc(text, cap);
			if (!grown) {
				free(t);
				r = -ENOMEM;
				goto out;
			}
			text = grown;
			if (used)
				text[used++] = ',';
			memcpy(text + used, t, n + 1);
			used += n;
			free(t);
		}
	} else if (json_is_null(value) || json_is_object(value)) {
		r = bridge_refuse(error, error_size, "the value is %s (expected a number, a boolean, a string or an array)",
			   json_is_null(value) ? "null" : "an object");
		goto out;
	} else {
		text = scalar_text(value);
	}
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	ret->text = text;
	text = NULL;
out:
	free(text);
	json_decref(root);
	if (r < 0)
		*ret = (struct bridge_command){.id = ""};
	return r;
}

/* ---------------------------------------------------------------- journal */

static uint64_t key_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h;
}

static struct bridge_journal_entry *slot(const struct bridge_journal *j, const char *key)
{
	size_t mask = j->capacity - 1;
	for (size_t i = (size_t)key_hash(key) & mask;; i = (i + 1) & mask) {
		struct bridge_journal_entry *e = &j->entries[i];
		if (!e->key || strcmp(e->key, key) == 0)
			return e;
	}
}

static int grow(struct bridge_journal *j)
{
	size_t capacity = j->capacity ? j->capacity * 2 : 64;
	struct bridge_journal_entry *old = j->entries;
	size_t old_capacity = j->capacity;
	j->entries = calloc(capacity, sizeof(*j->entries));
	if (!j->entries) {
		j->entries = old;
		return -ENOMEM;
	}
	j->capacity = capacity;
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i].key)
			*slot(j, old[i].key) = old[i];
	free(old);
	return 0;
}

/* Drop the entry in slot @e and re-insert the ones after it in its run. */
static void drop(struct bridge_journal *j, struct bridge_journal_entry *e)
{
	size_t mask = j->capacity - 1;
	size_t i = (size_t)(e - j->entries);
	free(e->key);
	e->key = NULL;
	j->count--;
	for (i = (i + 1) & mask; j->entries[i].key; i = (i + 1) & mask) {
		struct bridge_journal_entry moved = j->entries[i];
		j->entries[i].key = NULL;
		*slot(j, moved.key) = moved;
	}
}

/* Remember @key in @state; forgets the oldest beyond BRIDGE_JOURNAL_KEYS. */
static int remember(struct bridge_journal *j, const char *key, enum bridge_journal_state state, int result,
		    uint64_t seq)
{
	if ((j->count + 1) * 2 > j->capacity) {
		int r = grow(j);
		if (r < 0)
			return r;
	}
	struct bridge_journal_entry *e = slot(j, key);
	if (!e->key) {
		if (!(e->key = strdup(key)))
			return -ENOMEM;
		j->count++;
	}
	e->state = state;
	e->result = result;
	e->seq = seq;
	e->order = j->next_order++;
	if (j->count > BRIDGE_JOURNAL_KEYS) {
		struct bridge_journal_entry *oldest = NULL;
		for (size_t i = 0; i < j->capacity; i++)
			if (j->entries[i].key && (!oldest || j->entries[i].order < oldest->order))
				oldest = &j->entries[i];
		drop(j, oldest);
	}
	return 0;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The key from its hex form (@n digits) into @buf; false if malformed. */
static bool unhex(const char *hex, size_t n, char *buf, size_t size)
{
	if (n == 0 || n % 2 || n / 2 + 1 > size)
		return false;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		buf[i] = (char)(hi << 4 | lo);
	}
	buf[n / 2] = '\0';
	return true;
}

int bridge_journal_parse(struct bridge_journal *j, const char *text, size_t length, const char *source,
			 char *error, size_t error_size)
{
	size_t pos = 0;
	unsigned line_no = 0;
	while (pos < length) {
		line_no++;
		const char *nl = memchr(text + pos, '\n', length - pos);
		if (!nl)
			break; /* a record cut by a crash: never acted on */
		size_t n = (size_t)(nl - (text + pos));
		const char *line = text + pos;
		pos += n + 1;
		if (line_no == 1) {
			if (n != strlen(JOURNAL_FORMAT) || memcmp(line, JOURNAL_FORMAT, n) != 0)
				return bridge_refuse(error, error_size, "%s:1: not a pbus-bridge journal (expected '%s')", source,
					      JOURNAL_FORMAT);
			continue;
		}
		char copy[JOURNAL_LINE_MAX + 1];
		if (n > JOURNAL_LINE_MAX || n < 3 || memchr(line, '\0', n))
			return bridge_refuse(error, error_size, "%s:%u: malformed record", source, line_no);
		memcpy(copy, line, n);
		copy[n] = '\0';
		char key[BRIDGE_TOPIC_MAX + BRIDGE_ID_MAX + 2];
		char *words[4];
		int count = 0;
		for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			if (count == 4)
				return bridge_refuse(error, error_size, "%s:%u: malformed record", source, line_no);
			words[count++] = w;
		}
		if (count < 2 || !unhex(words[1], strlen(words[1]), key, sizeof(key)))
			return bridge_refuse(error, error_size, "%s:%u: malformed record", source, line_no);
		int r;
		if (strcmp(words[0], "B") == 0 && count == 2) {
			r = remember(j, key, BRIDGE_JOURNAL_BEGUN, 0, 0);
		} else if (strcmp(words[0], "D") == 0 && count == 4) {
			char *end;
			errno = 0;
			long result = strtol(words[2], &end, 10);
			if (errno || *end || result > 0 || result < -4095)
				return bridge_refuse(error, error_size, "%s:%u: bad result '%.12s'", source, line_no, words[2]);
			errno = 0;
			unsigned long long seq = strtoull(words[3], &end, 10);
			if (errno || *end || words[3][0] == '-')
				return bridge_refuse(error, error_size, "%s:%u: bad version '%.24s'", source, line_no, words[3]);
			r = remember(j, key, BRIDGE_JOURNAL_DONE, (int)result, seq);
		} else {
			return bridge_refuse(error, error_size, "%s:%u: unknown record", source, line_no);
		}
		if (r < 0)
			return r;
		j->records++;
	}
	return 0;
}

const struct bridge_journal_entry *bridge_journal_find(const struct bridge_journal *j, const char *key)
{
	if (!j->capacity)
		return NULL;
	const struct bridge_journal_entry *e = slot(j, key);
	return e->key ? e : NULL;
}

static int write_all(int fd, const char *data, size_t n)
{
	while (n) {
		ssize_t w = write(fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

static size_t key_hex(const char *key, char *buf)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		n += (size_t)sprintf(buf + n, "%02x", *p);
	return n;
}

static int append(struct bridge_journal *j, const char *line, size_t n)
{
	j->records++;
	if (j->fd < 0)
		return 0;
	int r = write_all(j->fd, line, n);
	if (r == 0 && fdatasync(j->fd) < 0)
		r = -errno;
	return r;
}

/* Write the entries (oldest first) to a new file and rename it over the
 * journal; then the folder is synced. */
static int compact(struct bridge_journal *j)
{
	if (!j->path)
		return 0;
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", j->path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, JOURNAL_FORMAT "\n", strlen(JOURNAL_FORMAT) + 1);
	/* oldest first, so that the order survives */
	size_t n = 0;
	struct bridge_journal_entry **sorted = calloc(j->count ? j->count : 1, sizeof(*sorted));
	if (!sorted)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < j->capacity; i++)
		if (j->entries[i].key)
			sorted[n++] = &j->entries[i];
	for (size_t a = 1; r == 0 && a < n; a++)
		for (size_t b = a; b > 0 && sorted[b - 1]->order > sorted[b]->order; b--) {
			struct bridge_journal_entry *t = sorted[b];
			sorted[b] = sorted[b - 1];
			sorted[b - 1] = t;
		}
	for (size_t i = 0; r == 0 && i < n; i++) {
		char line[JOURNAL_LINE_MAX + 2];
		size_t len = (size_t)sprintf(line, "%s ", sorted[i]->state == BRIDGE_JOURNAL_DONE ? "D" : "B");
		len += key_hex(sorted[i]->key, line + len);
		if (sorted[i]->state == BRIDGE_JOURNAL_DONE)
			len += (size_t)sprintf(line + len, " %d %" PRIu64, sorted[i]->result, sorted[i]->seq);
		line[len++] = '\n';
		r = write_all(fd, line, len);
	}
	free(sorted);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r == 0 && rename(tmp, j->path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", j->path);
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	if (j->fd >= 0)
		close(j->fd);
	j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (j->fd < 0)
		return -errno;
	j->records = n;
	return 0;
}

int bridge_journal_open(struct bridge_journal *j, const char *path, char *error, size_t error_size)
{
	*j = (struct bridge_journal){.fd = -1};
	if (!(j->path = strdup(path)))
		return -ENOMEM;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;
		char *text = NULL;
		int r = 0;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 64 * 1024 * 1024)
			r = -EINVAL;
		else if (!(text = malloc((size_t)st.st_size + 1)))
			r = -ENOMEM;
		size_t got = 0;
		while (r == 0 && got < (size_t)st.st_size) {
			ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				r = n < 0 ? -errno : -EIO;
			else
				got += (size_t)n;
		}
		close(fd);
		if (r == 0)
			r = bridge_journal_parse(j, text, got, path, error, error_size);
		else
			snprintf(error, error_size, "%s: %s", path, strerror(-r));
		free(text);
		if (r < 0) {
			bridge_journal_fini(j);
			return r;
		}
	} else if (errno != ENOENT) {
		int e = errno;
		snprintf(error, error_size, "%s: %s", path, strerror(e));
		bridge_journal_fini(j);
		return -e;
	}
	int r = compact(j);
	if (r < 0) {
		snprintf(error, error_size, "%s: write: %s", path, strerror(-r));
		bridge_journal_fini(j);
	}
	return r;
}

void bridge_journal_fini(struct bridge_journal *j)
{
	for (size_t i = 0; i < j->capacity; i++)
		free(j->entries[i].key);
	free(j->entries);
	free(j->path);
	if (j->fd >= 0)
		close(j->fd);
	*j = (struct bridge_journal){.fd = -1};
}

int bridge_journal_begin(struct bridge_journal *j, const char *key)
{
	char line[JOURNAL_LINE_MAX + 2];
	size_t n = (size_t)sprintf(line, "B ");
	n += key_hex(key, line + n);
	line[n++] = '\n';
	int r = append(j, line, n);
	if (r == 0)
		r = remember(j, key, BRIDGE_JOURNAL_BEGUN, 0, 0);
	return r;
}

int bridge_journal_done(struct bridge_journal *j, const char *key, int result, uint64_t seq)
{
	char line[JOURNAL_LINE_MAX + 2];
	size_t n = (size_t)sprintf(line, "D ");
	n += key_hex(key, line + n);
	n += (size_t)sprintf(line + n, " %d %" PRIu64 "\n", result, seq);
	int r = append(j, line, n);
	if (r == 0)
		r = remember(j, key, BRIDGE_JOURNAL_DONE, result, seq);
	if (r == 0 && j->records >= 2 * BRIDGE_JOURNAL_KEYS)
		r = compact(j);
	return r;
}
