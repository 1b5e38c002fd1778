/* SPDX-License-Identifier: MIT */
/*
 * persist.c: persistent parameters survive a restart. pbusd keeps one state
 * file per instance (docs/persistence.md) and rewrites it whenever a
 * persistent parameter changes.
 *
 * Crash safety: a save writes a temporary file in the same directory,
 * fsyncs it, renames it over the state file and fsyncs the directory. A
 * rename is atomic, so at every instant the state file is either the
 * previous complete save or the new complete save, whatever moment pbusd
 * (or the machine) dies at; nothing that was saved is lost. The file also
 * ends with a checksum line, so a file damaged by other means is detected,
 * kept aside as .corrupt and not half-restored.
 *
 * The saver thread sleeps in pbus_watch_wait() (a futex: no polling) until
 * a persistent parameter changes, waits save_delay_ms more so that a burst
 * of changes makes one save, then saves and records for each parameter the
 * version now on disk (pbus_instance_mark_saved), which is what
 * `pbus set --wait-saved` waits for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/text-internal.h"
#include "pbusd.h"

#define STATE_FILE_MAX (16u << 20)
#define VALUE_TEXT_MAX (3 * 2 * 65536 + 16)

struct persist {
	struct pbus_table *owner;
	char *dir, *path, *instance;
	unsigned save_delay_ms;
	size_t count;
	uint32_t *indexes;   /* the persistent parameters */
	uint64_t *saved;     /* version last written to disk, per parameter */
	struct pbus_watch *watch;
	pthread_t thread;
	bool running;
	int stop;            /* atomic */
	int saved_fd;        /* eventfd to signal after a save, or -1 */
	char *value_buf, *text_buf, *encode_buf;
};

static void noop_handler(int sig)
{
	(void)sig;
}

/* A pbusd killed mid-save leaves NAME.state.tmp.PID; we hold the instance
 * now, so no other pbusd is writing one. */
static void remove_stale_temporaries(struct persist *p)
{
	char prefix[128];
	struct dirent *e;
	DIR *dir;
	int n = snprintf(prefix, sizeof(prefix), "%s.state.tmp.", p->instance);

	if (n < 0 || (size_t)n >= sizeof(prefix) || !(dir = opendir(p->dir)))
		return;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, prefix, (size_t)n) && unlinkat(dirfd(dir), e->d_name, 0) == 0)
			log_msg(LOG_INFO, "removed %s/%s, left by a save that was cut short", p->dir,
				e->d_name);
	closedir(dir);
}

int persist_new(struct pbus_table *owner, const char *state_dir, const char *instance,
		unsigned save_delay_ms, struct persist **ret)
{
	struct persist *p = calloc(1, sizeof(*p));
	uint32_t n = pbus_table_param_count(owner);
	int r;

	if (!p)
		return -ENOMEM;
	p->owner = owner;
	p->saved_fd = -1;
	p->save_delay_ms = save_delay_ms;
	p->dir = strdup(state_dir);
	p->instance = strdup(instance);
	p->indexes = calloc(n ? n : 1, sizeof(*p->indexes));
	p->saved = calloc(n ? n : 1, sizeof(*p->saved));
	p->value_buf = malloc(65536 + 8);
	p->text_buf = malloc(VALUE_TEXT_MAX);
	p->encode_buf = malloc(VALUE_TEXT_MAX);
	if (!p->dir || !p->instance || !p->indexes || !p->saved || !p->value_buf || !p->text_buf ||
	    !p->encode_buf || asprintf(&p->path, "%s/%s.state", state_dir, instance) < 0) {
		p->path = NULL;
		persist_free(p);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct pbus_param *param;
		struct pbus_param_info info;

		if (pbus_table_param(owner, i, &param) == 0 && pbus_param_describe(param, &info) == 0 &&
		    (info.flags & PBUS_PARAM_PERSISTENT))
			p->indexes[p->count++] = i;
	}
	if (p->count && mkdir(state_dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		log_msg(LOG_ERROR, "cannot create state directory %s: %s", state_dir, strerror(errno));
		persist_free(p);
		return r;
	}
	remove_stale_temporaries(p);
	*ret = p;
	return 0;
}

void persist_free(struct persist *p)
{
	if (!p)
		return;
	pbus_watch_free(p->watch);
	free(p->dir);
	free(p->path);
	free(p->instance);
	free(p->indexes);
	free(p->saved);
	free(p->value_buf);
	free(p->text_buf);
	free(p->encode_buf);
	free(p);
}

/* --- Saving ---------------------------------------------------------------- */

struct buffer {
	char *data;
	size_t length, capacity;
};

static int buffer_add(struct buffer *b, const char *s, size_t n)
{
	if (b->length + n + 1 > b->capacity) {
		size_t cap = (b->length + n + 1) * 2;
		char *d = realloc(b->data, cap);

		if (!d)
			return -ENOMEM;
		b->data = d;
		b->capacity = cap;
	}
	memcpy(b->data + b->length, s, n);
	b->length += n;
	b->data[b->length] = 0;
	return 0;
}

static int write_all(int fd, const char *data, size_t n)
{
	while (n) {
		ssize_t w = write(fd, data, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write @b to the state file atomically and durably. */
static int replace_file(struct persist *p, const struct buffer *b)
{
	char *tmp = NULL;
	int fd, dirfd, r = 0;

	if (asprintf(&tmp, "%s.tmp.%d", p->path, (int)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = write_all(fd, b->data, b->length);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, p->path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		goto out;
	}
	/* The rename is durable once the directory is. */
	dirfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || fsync(dirfd) < 0)
		r = -errno;
	if (dirfd >= 0)
		close(dirfd);
out:
	free(tmp);
	return r;
}

int persist_save(struct persist *p)
{
	struct buffer b = {0};
	uint64_t *seqs = calloc(p->count ? p->count : 1, sizeof(*seqs));
	char line[128];
	bool changed = false;
	int r = -ENOMEM;

	if (!seqs)
		return -ENOMEM;
	snprintf(line, sizeof(line), "# parambus state file, written by pbusd: do not edit\n"
		 "pbus-state 1\ninstance %s\nschema 0x%016llx\n", p->instance,
		 (unsigned long long)pbus_table_schema_hash(p->owner));
	if (buffer_add(&b, line, strlen(line)) < 0)
		goto out;
	for (size_t i = 0; i < p->count; i++) {
		const struct pbus_param *param;
		struct pbus_sample sample;
		const char *name;
		int n;

		pbus_table_param(p->owner, p->indexes[i], &param);
		r = pbus_param_read(param, p->value_buf, 65536, &sample);
		if (r < 0)
			goto out;
		seqs[i] = sample.seq;
		if (sample.seq != p->saved[i])
			changed = true;
		/* Never written and without a default: nothing to restore. A
		 * value written since is saved whatever its status: pbus-hwd
		 * marks a setting invalid while its device fails, and the
		 * setting is still the one to apply when the device comes. */
		if (sample.seq == 0 && sample.status == PBUS_STATUS_INVALID)
			continue;
		n = pbus_param_format(param, p->value_buf, sample.length, p->text_buf, VALUE_TEXT_MAX);
		if (n < 0 || n >= VALUE_TEXT_MAX) {
			r = n < 0 ? n : -EMSGSIZE;
			goto out;
		}
		pbus_percent_encode(p->text_buf, (size_t)n, p->encode_buf, VALUE_TEXT_MAX);
		name = pbus_param_name(param);
		r = -ENOMEM;
		if (buffer_add(&b, name, strlen(name)) < 0 || buffer_add(&b, "=", 1) < 0 ||
		    buffer_add(&b, p->encode_buf, strlen(p->encode_buf)) < 0 || buffer_add(&b, "\n", 1) < 0)
			goto out;
	}
	if (!changed) {
		r = 0;
		goto out;
	}
	snprintf(line, sizeof(line), "end %016llx\n",
		 (unsigned long long)pbus_fnv1a(PBUS_FNV_OFFSET, b.data, b.length));
	r = -ENOMEM;
	if (buffer_add(&b, line, strlen(line)) < 0)
		goto out;
	r = replace_file(p, &b);
	if (r < 0)
		goto out; /* the caller says so, once */
	for (size_t i = 0; i < p->count; i++) {
		p->saved[i] = seqs[i];
		pbus_instance_mark_saved(p->owner, p->indexes[i], seqs[i]);
	}
	if (p->saved_fd >= 0) {
		uint64_t one = 1;

		(void)!write(p->saved_fd, &one, sizeof(one));
	}
	log_msg(LOG_DEBUG, "saved %s", p->path);
out:
	free(b.data);
	free(seqs);
	return r;
}

/* --- Restoring ------------------------------------------------------------- */

char *read_file(const char *path, size_t max, size_t *ret_length, int *ret_error)
{
	struct stat st;
	char *data;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*ret_error = 0;
	if (fd < 0) {
		*ret_error = -errno;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || st.st_size > (off_t)max ||
	    !(data = malloc((size_t)st.st_size + 1))) {
		*ret_error = -EFBIG;
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	data[got] = 0;
	*ret_length = got;
	return data;
}

/* The checksum line is the last line, covering every byte before it. */
static bool checksum_ok(const char *data, size_t length, size_t *ret_body)
{
	const char *last;
	unsigned long long want;
	char tail;

	if (length < 2 || data[length - 1] != '\n' || strlen(data) != length)
		return false;
	last = data + length - 1;
	while (last > data && last[-1] != '\n')
		last--;
	if (sscanf(last, "end %16llx%c", &want, &tail) != 2 || tail != '\n' ||
	    strlen(last) != 4 + 16 + 1)
		return false;
	*ret_body = (size_t)(last - data);
	return pbus_fnv1a(PBUS_FNV_OFFSET, data, *ret_body) == want;
}

static void keep_aside(const char *path)
{
	char *aside;

	if (asprintf(&aside, "%s.corrupt", path) < 0)
		return;
	if (rename(path, aside) == 0)
		log_msg(LOG_ERROR, "kept the damaged state file as %s; starting from defaults", aside);
	free(aside);
}

/* What became of a NAME=VALUE line of the state file. */
enum restore_outcome {
	RESTORED,
	SKIPPED_MALFORMED,       /* not NAME=VALUE, or a bad percent-encoding */
	SKIPPED_UNKNOWN,         /* no such parameter any more */
	SKIPPED_NOT_PERSISTENT,  /* the parameter is no longer persistent */
	SKIPPED_REFUSED,         /* the value does not pass the schema's checks */
	RESTORE_OUTCOMES
};

static enum restore_outcome restore_line(struct persist *p, char *line, unsigned lineno)
{
	const struct pbus_param *param;
	struct pbus_param_info info;
	char *eq = strchr(line, '=');
	size_t length;
	int r;

	if (!eq) {
		log_msg(LOG_WARNING, "%s:%u: not NAME=VALUE, skipped", p->path, lineno);
		return SKIPPED_MALFORMED;
	}
	*eq = 0;
	if (pbus_table_find(p->owner, line, &param) < 0) {
		log_msg(LOG_WARNING, "%s:%u: parameter '%s' is not in the schema any more, skipped",
			p->path, lineno, line);
		return SKIPPED_UNKNOWN;
	}
	pbus_param_describe(param, &info);
	if (!(info.flags & PBUS_PARAM_PERSISTENT)) {
		log_msg(LOG_WARNING, "%s:%u: parameter '%s' is not persistent any more, skipped",
			p->path, lineno, line);
		return SKIPPED_NOT_PERSISTENT;
	}
	if (pbus_percent_decode(eq + 1) < 0) {
		log_msg(LOG_WARNING, "%s:%u: '%s': malformed value encoding, skipped", p->path, lineno,
			line);
		return SKIPPED_MALFORMED;
	}
	r = pbus_param_parse(param, eq + 1, p->value_buf, 65536, &length);
	if (r == 0)
		r = pbus_param_set(param, p->value_buf, length);
	if (r < 0) {
		log_msg(LOG_WARNING, "%s:%u: '%s' = '%s': %s; keeping the default", p->path, lineno,
			line, eq + 1, pbus_strerror(r));
		return SKIPPED_REFUSED;
	}
	return RESTORED;
}

/* "3 restored values from X" and, if any were skipped, why, for the log. */
static void log_restored(const struct persist *p, const unsigned *outcomes)
{
	static const char *const why[RESTORE_OUTCOMES] = {
		[SKIPPED_MALFORMED] = "malformed",
		[SKIPPED_UNKNOWN] = "not in the schema",
		[SKIPPED_NOT_PERSISTENT] = "not persistent",
		[SKIPPED_REFUSED] = "refused by the schema's checks",
	};
	char skipped[256] = "";
	unsigned total = 0;
	size_t n = 0;

	for (int k = RESTORED + 1; k < RESTORE_OUTCOMES; k++)
		total += outcomes[k];
	if (total) {
		n = (size_t)snprintf(skipped, sizeof(skipped), " (%u skipped:", total);
		for (int k = RESTORED + 1; k < RESTORE_OUTCOMES && n < sizeof(skipped); k++)
			if (outcomes[k])
				n += (size_t)snprintf(skipped + n, sizeof(skipped) - n, "%s %u %s",
						      n > 0 && skipped[n - 1] != ':' ? "," : "", outcomes[k],
						      why[k]);
		if (n < sizeof(skipped))
			snprintf(skipped + n, sizeof(skipped) - n, ")");
	}
	log_msg(LOG_INFO, "restored %u saved value%s from %s%s", outcomes[RESTORED],
		outcomes[RESTORED] == 1 ? "" : "s", p->path, skipped);
}

int persist_restore(struct persist *p)
{
	size_t length, body;
	unsigned lineno = 0, outcomes[RESTORE_OUTCOMES] = {0};
	char *data, *save = NULL;
	int err;

	if (!p->count)
		return 0;
	data = read_file(p->path, STATE_FILE_MAX, &length, &err);
	if (!data) {
		if (err == -ENOENT) {
			log_msg(LOG_INFO, "no saved state at %s: starting from defaults", p->path);
			return 0;
		}
		log_msg(LOG_ERROR, "cannot read %s: %s", p->path, strerror(-err));
		return err;
	}
	if (!checksum_ok(data, length, &body) || !strstr(data, "\npbus-state 1\n")) {
		log_msg(LOG_ERROR, "%s is damaged (bad checksum or format)", p->path);
		keep_aside(p->path);
		free(data);
		return 0;
	}
	data[body] = 0;
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#' || !strncmp(line, "pbus-state ", 11))
			continue;
		if (!strncmp(line, "instance ", 9)) {
			if (strcmp(line + 9, p->instance))
				log_msg(LOG_WARNING, "%s was saved by instance '%s'", p->path, line + 9);
			continue;
		}
		if (!strncmp(line, "schema ", 7)) {
			unsigned long long h = strtoull(line + 7, NULL, 16);

			if (h != pbus_table_schema_hash(p->owner))
				log_msg(LOG_INFO, "%s was saved with another schema: restoring by name",
					p->path);
			continue;
		}
		outcomes[restore_line(p, line, lineno)]++;
	}
	free(data);
	/* What was just restored is what is on disk. */
	for (size_t i = 0; i < p->count; i++) {
		const struct pbus_param *param;

		pbus_table_param(p->owner, p->indexes[i], &param);
		p->saved[i] = pbus_param_seq(param);
		pbus_instance_mark_saved(p->owner, p->indexes[i], p->saved[i]);
	}
	log_restored(p, outcomes);
	return 0;
}

/* --- The saver thread ------------------------------------------------------ */

static bool stopping(struct persist *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* A save that failed (a full disk, a state directory gone) is tried again
 * this often until it succeeds, changes or not: the values must get to
 * disk even if nothing changes any more. */
#define SAVE_RETRY_NS (1000LL * 1000000)

static void *saver(void *arg)
{
	struct persist *p = arg;
	unsigned failures = 0;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	while (!stopping(p)) {
		int r = pbus_watch_wait(p->watch, failures ? SAVE_RETRY_NS : -1);

		if (r == -EINTR)
			continue;
		if (r < 0 && r != -ETIMEDOUT) {
			log_msg(LOG_ERROR, "waiting for changes failed: %s", pbus_strerror(r));
			break;
		}
		if (r != -ETIMEDOUT && p->save_delay_ms) {
			/* Let a burst of changes settle into one save. */
			struct timespec ts = {(time_t)(p->save_delay_ms / 1000),
					      (long)(p->save_delay_ms % 1000) * 1000000};

			nanosleep(&ts, NULL);
		}
		r = persist_save(p);
		if (r < 0 && failures++ == 0)
			log_msg(LOG_ERROR, "saving %s failed: %s; trying again every %lld s", p->path,
				strerror(-r), SAVE_RETRY_NS / 1000000000);
		else if (r == 0 && failures) {
			log_msg(LOG_WARNING, "saved %s again, after %u failed attempts", p->path, failures);
			failures = 0;
		}
	}
	return NULL;
}

void persist_set_saved_fd(struct persist *p, int fd)
{
	p->saved_fd = fd;
}

int persist_start(struct persist *p)
{
	struct sigaction sa;
	int r;

	if (!p->count)
		return 0;
	r = pbus_watch_new(p->owner, p->indexes, p->count, &p->watch);
	if (r < 0)
		return r;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = noop_handler; /* no SA_RESTART: the futex wait returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	r = -pthread_create(&p->thread, NULL, saver, p);
	if (r == 0)
		p->running = true;
	return r;
}

void persist_stop(struct persist *p)
{
	if (!p)
		return;
	if (p->running) {
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
		/* The signal interrupts the futex wait; repeat it, because it may
		 * land just before the thread enters the wait. */
		for (;;) {
			struct timespec deadline;

			pthread_kill(p->thread, SIGUSR1);
			clock_gettime(CLOCK_REALTIME, &deadline);
			deadline.tv_nsec += 10000000;
			if (deadline.tv_nsec >= 1000000000) {
				deadline.tv_sec++;
				deadline.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(p->thread, NULL, &deadline) == 0)
				break;
		}
		p->running = false;
	}
	if (p->count) {
		int r = persist_save(p);

		if (r < 0)
			log_msg(LOG_ERROR, "saving %s at shutdown failed: %s", p->path, strerror(-r));
	}
}
