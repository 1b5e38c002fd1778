/* SPDX-License-Identifier: MIT */
/*
 * stress-values.c: encoding and checking of self-checking values, and the
 * writer and reader loops shared by stress-table (processes), stress-threads
 * (threads) and crash-writer (see stress-values.h for the encoding).
 */
#include "stress-values.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "stress-common.h"

static size_t kind_length(const struct sv_kind *k, uint64_t stamp)
{
	uint64_t c = sv_stamp_counter(stamp) & SV_HALF_MASK;

	switch (k->type) {
	case SV_DOUBLE: return 8;
	case SV_STRING: return k->capacity - 8 * (size_t)(c % 4);
	case SV_BYTES: return k->capacity - 8 * (size_t)(c % 8);
	case SV_INT64_ARRAY: return k->capacity - 8 * (size_t)(c % 4);
	}
	return 0;
}

size_t sv_encode(const struct sv_kind *k, uint64_t stamp, unsigned char *buf)
{
	size_t len = kind_length(k, stamp);
	uint32_t half = sv_half(stamp);

	switch (k->type) {
	case SV_DOUBLE: {
		uint64_t bits = (uint64_t)half << 32 | half;

		memcpy(buf, &bits, 8);
		break;
	}
	case SV_STRING: {
		char word[9];

		snprintf(word, sizeof(word), "%08" PRIx32, half);
		for (size_t off = 0; off < len; off += 8)
			memcpy(buf + off, word, 8);
		break;
	}
	case SV_BYTES:
	case SV_INT64_ARRAY:
		for (size_t off = 0; off < len; off += 8)
			memcpy(buf + off, &stamp, 8);
		break;
	}
	return len;
}

int sv_bind(struct sv_worker *w, struct pbus_table *table, const char *const *names,
	    const struct sv_kind *kinds, size_t count)
{
	static const unsigned types[] = {
		[SV_DOUBLE] = PBUS_TYPE_DOUBLE,
		[SV_STRING] = PBUS_TYPE_STRING,
		[SV_BYTES] = PBUS_TYPE_BYTES,
		[SV_INT64_ARRAY] = PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_INT64,
	};

	w->table = table;
	w->count = count;
	for (size_t i = 0; i < count; i++) {
		struct pbus_param_info info;
		int r = pbus_table_find(table, names[i], &w->params[i]);

		if (r < 0)
			return r;
		if ((r = pbus_param_describe(w->params[i], &info)) < 0)
			return r;
		if (info.type != types[kinds[i].type] || info.value_size != kinds[i].capacity)
			return -EPROTO;
		w->index[i] = info.index;
		w->kinds[i] = kinds[i];
	}
	return 0;
}

static void record_error(struct sv_stats *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void record_error(struct sv_stats *st, const char *fmt, ...)
{
	va_list ap;

	if (st->bad++ == 0) {
		va_start(ap, fmt);
		vsnprintf(st->first_error, sizeof(st->first_error), fmt, ap);
		va_end(ap);
	}
}

/* One write of every parameter with @stamp. */
static int write_all(const struct sv_worker *w, uint64_t stamp, unsigned char **bufs,
		     struct pbus_write *writes)
{
	for (size_t i = 0; i < w->count; i++) {
		writes[i] = (struct pbus_write){
			.index = w->index[i],
			.status = sv_status(stamp),
			.timestamp_ns = stamp,
			.value = bufs[i],
			.length = sv_encode(&w->kinds[i], stamp, bufs[i]),
		};
	}
	return pbus_table_write_many(w->table, writes, w->count);
}

/* A deliberately broken write: the last parameter's last word is another
 * write's. Used only to prove that the readers notice. */
static int write_corrupt(const struct sv_worker *w, uint64_t stamp, unsigned char **bufs,
			 struct pbus_write *writes)
{
	size_t last = w->count - 1, len = sv_encode(&w->kinds[last], stamp, bufs[last]);
	int r;

	r = write_all(w, stamp, bufs, writes);
	if (r < 0)
		return r;
	sv_encode(&w->kinds[last], stamp, bufs[last]);
	bufs[last][len - 1] ^= 0x01;
	writes[0] = (struct pbus_write){
		.index = w->index[last], .status = sv_status(stamp), .timestamp_ns = stamp,
		.value = bufs[last], .length = len,
	};
	return pbus_table_write_many(w->table, writes, 1);
}

static unsigned char *alloc_value(size_t capacity)
{
	unsigned char *b = aligned_alloc(8, capacity + 8);

	if (!b)
		abort();
	memset(b, 0, capacity + 8);
	return b;
}

int sv_write_initial(const struct sv_worker *w)
{
	unsigned char *bufs[SV_MAX_PARAMS];
	struct pbus_write writes[SV_MAX_PARAMS];
	int r;

	for (size_t i = 0; i < w->count; i++)
		bufs[i] = alloc_value(w->kinds[i].capacity);
	r = write_all(w, sv_stamp(0, 1), bufs, writes);
	for (size_t i = 0; i < w->count; i++)
		free(bufs[i]);
	return r;
}

/* Count an operation in its 100 ms window. */
static void count_window(const struct sv_worker *w, int64_t now, int64_t *cur)
{
	int64_t idx;

	if (!w->windows || now < w->start_ns)
		return;
	idx = (now - w->start_ns) / SV_WINDOW_NS;
	if (idx >= (int64_t)w->nwin)
		return;
	if (idx != *cur) {
		*cur = idx;
		if (w->window_cpu)
			w->window_cpu[idx] = stress_thread_cpu_ns();
	}
	w->windows[idx]++;
}

static bool should_stop(const struct sv_worker *w, int64_t now)
{
	return (w->end_ns && now >= w->end_ns) ||
	       (w->stop && __atomic_load_n(w->stop, __ATOMIC_ACQUIRE));
}

int sv_writer_run(struct sv_worker *w)
{
	struct sv_stats *st = w->stats;
	unsigned char *bufs[SV_MAX_PARAMS];
	struct pbus_write writes[SV_MAX_PARAMS];
	uint64_t last_seq[SV_MAX_PARAMS] = {0};
	uint64_t counter = __atomic_load_n(&w->issued[w->writer_id], __ATOMIC_ACQUIRE) + 1;
	int64_t cur = -1, cpu0 = stress_thread_cpu_ns();

	for (size_t i = 0; i < w->count; i++)
		bufs[i] = alloc_value(w->kinds[i].capacity);
	for (;;) {
		int64_t t0 = stress_now_ns(), t1;
		uint64_t stamp = sv_stamp(w->writer_id, counter);
		int r;

		if (should_stop(w, t0))
			break;
		if (w->pause && __atomic_load_n(w->pause, __ATOMIC_ACQUIRE)) {
			/* Handshake with the parent: paused between two writes. */
			stress_add_wake(w->paused, 1);
			while (__atomic_load_n(w->pause, __ATOMIC_ACQUIRE) && !should_stop(w, 0))
				stress_futex_wait(w->pause, 1, -1);
			__atomic_store_n(w->paused, 0, __ATOMIC_RELEASE);
			continue;
		}
		/* Announce the counter before any of its bytes can be seen. */
		__atomic_store_n(&w->issued[w->writer_id], counter, __ATOMIC_RELEASE);
		if (w->inject_every && counter % w->inject_every == 0)
			r = write_corrupt(w, stamp, bufs, writes);
		else
			r = write_all(w, stamp, bufs, writes);
		t1 = stress_now_ns();
		if (t1 - t0 > st->max_ns)
			st->max_ns = t1 - t0;
		if (r == -EBUSY) {
			st->ebusy++;
			record_error(st, "writer %u: write of counter %" PRIu64 " refused: %s",
				     w->writer_id, counter, pbus_strerror(r));
		} else if (r < 0) {
			record_error(st, "writer %u: write of counter %" PRIu64 " failed: %s",
				     w->writer_id, counter, pbus_strerror(r));
		} else {
			for (size_t i = 0; i < w->count; i++) {
				if (writes[i].seq <= last_seq[i])
					record_error(st, "writer %u: %s: version went from %" PRIu64
						     " to %" PRIu64, w->writer_id,
						     pbus_param_name(w->params[i]), last_seq[i], writes[i].seq);
				last_seq[i] = writes[i].seq;
			}
		}
		if (r == 0 && w->first_write) {
			stress_add_wake(w->first_write, 1);
			w->first_write = NULL; /* once per run */
		}
		st->last_counter = counter;
		counter++;
		st->ops++;
		count_window(w, t1, &cur);
	}
	st->cpu_ns = stress_thread_cpu_ns() - cpu0;
	for (size_t i = 0; i < w->count; i++)
		free(bufs[i]);
	return st->bad ? 1 : 0;
}

/* What a reader remembers per parameter. */
struct reader_memory {
	uint64_t last_seq, last_stamp;
	uint64_t last_full[SV_WRITERS];  /* from full stamps */
	uint32_t last_half[SV_WRITERS];  /* counter mod 2^26, from any read */
	bool have_half[SV_WRITERS];
};

/*
 * Check one value. @full_stamp is the sample's timestamp when the read gave
 * one (0 otherwise). Returns false with @err filled if anything is wrong.
 */
static bool check_value(const struct sv_worker *w, size_t i, const unsigned char *v, size_t len,
			int status, uint64_t full_stamp, struct reader_memory *m, char *err,
			size_t errsize)
{
	const struct sv_kind *k = &w->kinds[i];
	const char *name = pbus_param_name(w->params[i]);
	uint32_t half = 0;
	uint64_t stamp = 0;
	unsigned wid;

	if (status < 0) {
		snprintf(err, errsize, "%s: read failed: %s", name, pbus_strerror(status));
		return false;
	}
	switch (k->type) {
	case SV_DOUBLE: {
		uint64_t bits;
		uint32_t lo, hi;

		if (len != 8) {
			snprintf(err, errsize, "%s: length %zu", name, len);
			return false;
		}
		memcpy(&bits, v, 8);
		lo = (uint32_t)bits;
		hi = (uint32_t)(bits >> 32);
		if (lo != hi || (lo & 0xe0000000u) != 0x20000000u) {
			snprintf(err, errsize, "%s: torn double 0x%016" PRIx64, name, bits);
			return false;
		}
		half = lo;
		break;
	}
	case SV_STRING: {
		char first[9];

		if (len < 8 || len % 8) {
			snprintf(err, errsize, "%s: string length %zu", name, len);
			return false;
		}
		memcpy(first, v, 8);
		first[8] = 0;
		for (size_t off = 8; off < len; off += 8)
			if (memcmp(v + off, v, 8)) {
				snprintf(err, errsize, "%s: torn string: word at %zu is '%.8s', word 0 '%s'",
					 name, off, (const char *)v + off, first);
				return false;
			}
		char *end;
		unsigned long h = strtoul(first, &end, 16);

		if (*end || (h & 0xe0000000u) != 0x20000000u) {
			snprintf(err, errsize, "%s: string '%s' is no stamp", name, first);
			return false;
		}
		half = (uint32_t)h;
		break;
	}
	case SV_BYTES:
	case SV_INT64_ARRAY:
		if (len < 8 || len % 8) {
			snprintf(err, errsize, "%s: length %zu", name, len);
			return false;
		}
		memcpy(&stamp, v, 8);
		for (size_t off = 8; off < len; off += 8) {
			uint64_t x;

			memcpy(&x, v + off, 8);
			if (x != stamp) {
				snprintf(err, errsize, "%s: torn value: word at byte %zu is 0x%" PRIx64
					 ", word 0 is 0x%" PRIx64 " (length %zu)", name, off, x, stamp, len);
				return false;
			}
		}
		if (full_stamp && stamp != full_stamp) {
			snprintf(err, errsize, "%s: value 0x%" PRIx64 " but timestamp 0x%" PRIx64,
				 name, stamp, full_stamp);
			return false;
		}
		if (sv_stamp_writer(stamp) >= SV_WRITERS || sv_stamp_counter(stamp) == 0) {
			snprintf(err, errsize, "%s: 0x%" PRIx64 " is no stamp", name, stamp);
			return false;
		}
		half = sv_half(stamp);
		break;
	}
	if (full_stamp) {
		if (sv_half(full_stamp) != half) {
			snprintf(err, errsize, "%s: value half 0x%08" PRIx32 " but timestamp 0x%" PRIx64,
				 name, half, full_stamp);
			return false;
		}
		stamp = full_stamp;
	}
	/* Length and status follow from counter mod 2^26 (in the half). */
	{
		uint64_t pseudo = sv_stamp((half >> 26) & 3, half & SV_HALF_MASK);

		if (len != kind_length(k, pseudo)) {
			snprintf(err, errsize, "%s: length %zu, but the value's write had %zu", name, len,
				 kind_length(k, pseudo));
			return false;
		}
		if ((uint32_t)status != sv_status(pseudo)) {
			snprintf(err, errsize, "%s: status %d, but the value's write had %u (half 0x%08"
				 PRIx32 ")", name, status, sv_status(pseudo), half);
			return false;
		}
	}
	/* Monotonic per writer: later reads never see an older write of the
	 * same writer. Counters mod 2^26 compare modulo. */
	wid = (half >> 26) & 3;
	if (m->have_half[wid]) {
		uint32_t diff = ((half & SV_HALF_MASK) - m->last_half[wid]) & SV_HALF_MASK;

		if (diff >= (SV_HALF_MASK >> 1)) {
			snprintf(err, errsize, "%s: writer %u went back from counter %u to %u (mod 2^26)",
				 name, wid, m->last_half[wid], half & SV_HALF_MASK);
			return false;
		}
	}
	m->have_half[wid] = true;
	m->last_half[wid] = half & SV_HALF_MASK;
	if (stamp) {
		uint64_t c = sv_stamp_counter(stamp);
		uint64_t issued = __atomic_load_n(&w->issued[wid], __ATOMIC_ACQUIRE);

		if (c < m->last_full[wid]) {
			snprintf(err, errsize, "%s: writer %u went back from counter %" PRIu64 " to %" PRIu64,
				 name, wid, m->last_full[wid], c);
			return false;
		}
		if (wid != 0 && c > issued) {
			snprintf(err, errsize, "%s: counter %" PRIu64 " of writer %u not written yet "
				 "(issued %" PRIu64 ")", name, c, wid, issued);
			return false;
		}
		m->last_full[wid] = c;
	}
	return true;
}

int sv_reader_run(struct sv_worker *w)
{
	struct sv_stats *st = w->stats;
	struct reader_memory *mem = calloc(w->count, sizeof(*mem));
	size_t cap = 0;
	unsigned char *buf;
	int64_t cur = -1, cpu0 = stress_thread_cpu_ns();
	char err[300];

	for (size_t i = 0; i < w->count; i++)
		if (w->kinds[i].capacity > cap)
			cap = w->kinds[i].capacity;
	buf = alloc_value(cap);
	if (!mem)
		abort();
	for (uint64_t iter = 0;; iter++) {
		size_t i = iter % w->count;
		const struct pbus_param *p = w->params[i];
		const struct sv_kind *k = &w->kinds[i];
		bool alternate = (iter / w->count) % 2 == 0;
		struct pbus_sample sample = {0};
		uint64_t seq_before, seq_after, full = 0;
		int64_t t0, t1, c0 = 0, c1 = 0;
		size_t len;
		int r;

		t0 = stress_now_ns();
		if (should_stop(w, t0))
			break;
		seq_before = pbus_param_seq(p);
		if (w->measure_cpu)
			c0 = stress_thread_cpu_ns();
		if (k->type == SV_DOUBLE && alternate) {
			/* The inline fast path. */
			double d = 0;

			r = pbus_param_get_double(p, &d);
			memcpy(buf, &d, 8);
			len = 8;
		} else if (k->type == SV_STRING && alternate) {
			r = pbus_param_get_string(p, (char *)buf, cap + 1);
			len = r >= 0 ? strlen((const char *)buf) : 0;
		} else {
			r = pbus_param_read(p, buf, cap, &sample);
			len = sample.length;
			full = sample.timestamp_ns;
		}
		seq_after = pbus_param_seq(p);
		if (w->measure_cpu)
			c1 = stress_thread_cpu_ns();
		t1 = stress_now_ns();
		if (seq_after != seq_before)
			st->overlapped++;
		if (t1 - t0 > st->max_ns)
			st->max_ns = t1 - t0;
		if (t1 - t0 > 10 * STRESS_NS_PER_MS)
			st->slow_wall++;
		if (w->measure_cpu) {
			if (c1 - c0 > st->max_cpu_ns) {
				st->max_cpu_ns = c1 - c0;
				st->max_cpu_versions = seq_after - seq_before;
			}
			if (c1 - c0 > st->max_cpu_by_param[i])
				st->max_cpu_by_param[i] = c1 - c0;
			if (c1 - c0 > STRESS_NS_PER_MS)
				st->over_1ms_cpu++;
			if (c1 - c0 > SV_READ_CPU_LIMIT_NS) {
				st->slow_cpu++;
				if (w->assert_read_cpu)
					record_error(st, "%s: one read took %.3f ms of the reader's CPU "
						     "time", pbus_param_name(p), (double)(c1 - c0) / 1e6);
			}
		}
		if (!check_value(w, i, buf, len, r, full, &mem[i], err, sizeof(err))) {
			record_error(st, "%s", err);
		} else if (full) {
			/* Same version, same value; versions never go back. */
			struct reader_memory *m = &mem[i];

			if (sample.seq < m->last_seq)
				record_error(st, "%s: version went back from %" PRIu64 " to %" PRIu64,
					     pbus_param_name(p), m->last_seq, sample.seq);
			else if (sample.seq == m->last_seq && m->last_stamp && full != m->last_stamp)
				record_error(st, "%s: version %" PRIu64 " read as 0x%" PRIx64 " and 0x%" PRIx64,
					     pbus_param_name(p), sample.seq, m->last_stamp, full);
			m->last_seq = sample.seq;
			m->last_stamp = full;
		}
		st->ops++;
		count_window(w, t1, &cur);
	}
	st->cpu_ns = stress_thread_cpu_ns() - cpu0;
	free(buf);
	free(mem);
	return st->bad ? 1 : 0;
}

uint64_t sv_check_windows(const char *who, const uint32_t *windows, const int64_t *window_cpu,
			  unsigned nwin, unsigned workers)
{
	uint64_t min = UINT64_MAX;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* The CPU a worker gets when the machine is shared fairly. */
	double fair_share = cpus > 0 && (unsigned)cpus < workers ? (double)cpus / workers : 1.0;

	for (unsigned i = 0; i < nwin; i++) {
		if (windows[i] < min)
			min = windows[i];
		if (windows[i] == 0) {
			/* Say whether the process ran at all around the gap: a window
			 * without CPU time is the scheduler's doing, one with CPU time
			 * but no completed operation is starvation by the library. */
			unsigned a = i, b = i;
			char cpu[128] = "";

			while (a > 0 && windows[a] == 0)
				a--;
			while (b + 1 < nwin && windows[b] == 0)
				b++;
			if (window_cpu && windows[a] && windows[b]) {
				double used = (double)(window_cpu[b] - window_cpu[a]);
				double fair = fair_share * (double)(b - a) * (double)SV_WINDOW_NS;

				snprintf(cpu, sizeof(cpu), "; it used %.1f ms of CPU between windows %u and %u",
					 used / 1e6, a, b);
				/* Starvation by the library leaves a process running
				 * (spinning, retrying) without completing anything; a
				 * process that got under a quarter of its fair share of
				 * the CPU across the gap was not run: the scheduler's or
				 * the host's doing, reported but not counted. */
				if (used < fair / 4) {
					printf("# %s: no operation in window %u while it got %.1f ms of CPU in "
					       "%.0f ms (fair share %.0f ms): descheduled, not starved\n",
					       who, i, used / 1e6, (double)(b - a) * SV_WINDOW_NS / 1e6,
					       fair / 1e6);
					continue;
				}
			}
			CHECK_FAIL("%s made no operation in the %.0f ms window %u (%.1f-%.1f s)%s", who,
				    (double)SV_WINDOW_NS / 1e6, i, (double)(i * SV_WINDOW_NS) / 1e9,
				    (double)((i + 1) * SV_WINDOW_NS) / 1e9, cpu);
		}
	}
	return nwin ? min : 0;
}
