/* SPDX-License-Identifier: MIT */
/*
 * attack: what a local user without rights can do to an instance, one
 * command each, for tests/security/test_table.py, which runs it as an
 * unprivileged user against the real pbusd and the demo simulator. It uses
 * only what such a user has: the value segment mapped read-only, the wake
 * segment (every reader may attach it read-write), and files of its own in
 * /dev/shm. docs/security.md says what each attack may achieve at worst.
 *
 *   attack post-turns NAME SECONDS   post reader's turns (now + 200 us) on every
 *                                    parameter, over and over, for SECONDS
 *   attack far-turns NAME            post turns 1000 s ahead on every parameter
 *   attack scribble-wake NAME        fill the whole wake segment with 0xa5
 *   attack zero-counts NAME SECONDS  keep every waiter count at 0 for SECONDS
 *   attack wake-counts NAME          set every waiter count to 1 (writers
 *                                    then wake on every write)
 *   attack resize NAME               try to resize, remove or re-permission the
 *                                    wake segment and to open the value segment
 *                                    for writing; one line per try
 *   attack lock NAME                 open (or create) the lock file and hold
 *                                    flock(LOCK_EX) until killed
 *   attack fake NAME COPY PARAM VALUE  make /dev/shm/pbus.NAME from COPY (a real
 *                                    segment's bytes), owned by us, live, with
 *                                    a wake segment of ours and PARAM's stored
 *                                    value replaced by the double VALUE; then
 *                                    stay alive until killed
 *
 * Each command prints "ready" once it is under way (the long ones) and one
 * line per result: "ok: ..." or "refused: ...".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "../../lib/segment-layout.h"
#include "../../lib/process-internal.h"
#include "../../lib/read-internal.h"
#include "../../lib/table-internal.h"

struct target {
	const struct pbus_segment_header *header;
	unsigned char *wake;
	uint32_t *waiters;
	uint64_t *turns;
	uint32_t param_count;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Map the value segment read-only and attach the wake segment it names, as
 * any reader may. */
static int open_target(const char *name, struct target *t)
{
	char path[256];
	struct stat st;
	void *base;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/pbus.%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		printf("refused: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		printf("refused: mmap: %s\n", strerror(errno));
		return -1;
	}
	t->header = base;
	t->param_count = t->header->param_count;
	t->wake = shmat((int)t->header->wake_id, NULL, 0);
	if (t->wake == (void *)-1) {
		printf("refused: shmat: %s\n", strerror(errno));
		return -1;
	}
	t->waiters = (uint32_t *)(void *)(t->wake + PBUS_WAKE_WAITERS_OFFSET);
	t->turns = (uint64_t *)(void *)(t->wake + pbus_wake_turns_offset(t->param_count));
	return 0;
}

static void set_counts(struct target *t, uint32_t value)
{
	struct pbus_wake_header *w = (void *)t->wake;

	__atomic_store_n(&w->any_waiters, value, __ATOMIC_SEQ_CST);
	__atomic_store_n(&w->param_waiters, value * t->param_count, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < t->param_count; i++)
		__atomic_store_n(&t->waiters[i], value, __ATOMIC_SEQ_CST);
}

static int post_turns(struct target *t, double seconds, int64_t ahead_ns)
{
	int64_t end = now_ns() + (int64_t)(seconds * 1e9);
	uint64_t posted = 0;

	printf("ready\n");
	fflush(stdout);
	do {
		for (uint32_t i = 0; i < t->param_count; i++) {
			uint64_t old = __atomic_load_n(&t->turns[i], __ATOMIC_RELAXED);
			uint64_t deadline = (uint64_t)(now_ns() + ahead_ns);

			/* Renew it the moment a writer or the deadline ends it. */
			if (old == 0 || (int64_t)old <= now_ns()) {
				__atomic_store_n(&t->turns[i], deadline, __ATOMIC_RELEASE);
				posted++;
			}
		}
	} while (seconds > 0 && now_ns() < end);
	printf("ok: posted %llu turns\n", (unsigned long long)posted);
	return 0;
}

static int zero_counts(struct target *t, double seconds)
{
	int64_t end = now_ns() + (int64_t)(seconds * 1e9);

	printf("ready\n");
	fflush(stdout);
	while (now_ns() < end)
		set_counts(t, 0);
	printf("ok: kept the counts at 0\n");
	return 0;
}

static int try_resize(const char *name, struct target *t)
{
	struct shmid_ds ds;
	char path[256];
	int fd;

	if (shmctl((int)t->header->wake_id, IPC_STAT, &ds) == 0) {
		ds.shm_perm.mode = 0600;
		printf(shmctl((int)t->header->wake_id, IPC_SET, &ds) == 0 ? "ok: IPC_SET\n"
									     : "refused: IPC_SET: %s\n",
		       strerror(errno));
	}
	printf(shmctl((int)t->header->wake_id, IPC_RMID, NULL) == 0 ? "ok: IPC_RMID\n" : "refused: IPC_RMID: %s\n",
	       strerror(errno));
	snprintf(path, sizeof(path), "/dev/shm/pbus.%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("refused: open %s O_RDWR: %s\n", path, strerror(errno));
	} else {
		printf(ftruncate(fd, 0) == 0 ? "ok: ftruncate %s\n" : "refused: ftruncate %s\n", path);
		close(fd);
	}
	snprintf(path, sizeof(path), "/dev/shm/pbus.%s.wake", name);
	fd = open(path, O_RDWR);
	printf(fd < 0 ? "refused: open %s: %s\n" : "ok: open %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return 0;
}

static int hold_lock(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/pbus.%s.lock", name);
	fd = open(path, O_RDONLY | O_CREAT, 0644);
	if (fd < 0) {
		printf("refused: open %s: %s\n", path, strerror(errno));
		return 0;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		printf("refused: flock %s: %s\n", path, strerror(errno));
		return 0;
	}
	printf("ok: holding %s\n", path);
	fflush(stdout);
	for (;;)
		pause();
}

static int fake(const char *name, const char *copy, const char *param, double value)
{
	char path[256];
	struct pbus_segment_header *h;
	struct stat st;
	unsigned char *image;
	FILE *f = fopen(copy, "rb");
	int id, fd;

	if (!f || stat(copy, &st) < 0 || !(image = malloc((size_t)st.st_size)) ||
	    fread(image, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		printf("refused: read %s: %s\n", copy, strerror(errno));
		return 1;
	}
	fclose(f);
	h = (void *)image;
	/* Our own live-looking owner and wake segment. */
	id = shmget(IPC_PRIVATE, (size_t)h->wake_size, IPC_CREAT | 0666);
	if (id < 0) {
		printf("refused: shmget: %s\n", strerror(errno));
		return 1;
	}
	/* Gone with its last attachment, as an owner's (attached until we are
	 * killed: no leftover). */
	shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	h->wake_id = (uint32_t)id;
	h->owner_pid = (uint32_t)getpid();
	h->owner_start = pbus_process_start_token(getpid());
	h->state = PBUS_SEGMENT_LIVE;
	/* The value: rewrite the current copy of @param in place. */
	{
		const struct pbus_param_descriptor *d = (const void *)(image + h->descriptors_offset);
		const char *pool = (const char *)image + h->strings_offset;
		bool found = false;

		for (uint32_t i = 0; i < h->param_count; i++, d++) {
			if (strcmp(pool + d->name, param) || d->type != PBUS_TYPE_DOUBLE)
				continue;
			{
				uint64_t seq;
				unsigned char *slot = image + d->slot_offset;
				struct pbus_copy_head *c;

				memcpy(&seq, slot, 8);
				c = (void *)(slot + PBUS_SLOT_COPY0_OFFSET + (seq % d->copy_count) * d->copy_stride);
				c->status = PBUS_STATUS_OK;
				memcpy(c + 1, &value, 8);
				found = true;
			}
		}
		if (!found) {
			printf("refused: no double parameter %s\n", param);
			return 1;
		}
	}
	snprintf(path, sizeof(path), "/dev/shm/pbus.%s", name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, image, (size_t)st.st_size) != st.st_size) {
		printf("refused: create %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	printf("ok: made %s\n", path);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct target t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: see the head of tests/security/attack.c\n");
		return 2;
	}
	if (!strcmp(argv[1], "lock"))
		return hold_lock(argv[2]);
	if (!strcmp(argv[1], "fake") && argc == 6)
		return fake(argv[2], argv[3], argv[4], strtod(argv[5], NULL));
	if (open_target(argv[2], &t) < 0)
		return 1;
	if (!strcmp(argv[1], "post-turns") && argc == 4)
		return post_turns(&t, strtod(argv[3], NULL), PBUS_READER_TURN_NS);
	if (!strcmp(argv[1], "far-turns"))
		return post_turns(&t, 0, INT64_C(1000000000000));
	if (!strcmp(argv[1], "scribble-wake")) {
		memset(t.wake, 0xa5, (size_t)t.header->wake_size);
		printf("ok: scribbled %llu bytes\n", (unsigned long long)t.header->wake_size);
		return 0;
	}
	if (!strcmp(argv[1], "zero-counts") && argc == 4)
		return zero_counts(&t, strtod(argv[3], NULL));
	if (!strcmp(argv[1], "wake-counts")) {
		set_counts(&t, 1);
		printf("ok: counts at 1\n");
		return 0;
	}
	if (!strcmp(argv[1], "resize"))
		return try_resize(argv[2], &t);
	fprintf(stderr, "attack: unknown command %s\n", argv[1]);
	return 2;
}
