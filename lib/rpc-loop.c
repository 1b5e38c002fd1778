/* SPDX-License-Identifier: MIT */
/*
 * rpc-loop.c: struct pbus_loop, the event loop that proxies and stubs run
 * on: an epoll descriptor (what pbus_loop_fd() returns) holding the
 * sources' descriptors, an eventfd that other threads write to hand work
 * over (posted jobs, quit) and a timerfd set to the earliest armed timer.
 *
 * Sources are found through slots: epoll carries a slot number and its
 * generation, never a pointer, and removing a source empties its slot. So
 * an event that epoll_wait returned for a source removed since (by an
 * earlier callback of the round, or by another thread) finds no source and
 * is skipped, even if the source's memory is gone.
 *
 * A dispatch round (the callbacks, timers and jobs after one epoll_wait)
 * runs with dispatch_lock held, and an owner that frees a source's object
 * from another thread takes it first (pbus_loop_lock_dispatch()): so no
 * callback of that object is running when it goes, and none runs after.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock-internal.h"
#include "rpc-internal.h"

#define LOOP_EVENTS 32

void rpc_mutex_init_recursive(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static void rearm_timer_locked(struct pbus_loop *loop)
{
	int64_t earliest = 0;
	struct itimerspec its = {0};

	for (struct loop_timer *t = loop->timers; t; t = t->next)
		if (!earliest || t->at_ns < earliest)
			earliest = t->at_ns;
	if (earliest == loop->timer_armed_ns)
		return;
	loop->timer_armed_ns = earliest;
	if (earliest) {
		its.it_value.tv_sec = earliest / 1000000000;
		its.it_value.tv_nsec = earliest % 1000000000;
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(loop->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

void pbus_loop_timer_set(struct pbus_loop *loop, struct loop_timer *timer, int64_t at_ns)
{
	pthread_mutex_lock(&loop->lock);
	if (!timer->at_ns) {
		timer->next = loop->timers;
		loop->timers = timer;
	}
	timer->at_ns = at_ns > 0 ? at_ns : 1;
	rearm_timer_locked(loop);
	pthread_mutex_unlock(&loop->lock);
}

static void unlink_timer_locked(struct pbus_loop *loop, struct loop_timer *timer)
{
	for (struct loop_timer **p = &loop->timers; *p; p = &(*p)->next)
		if (*p == timer) {
			*p = timer->next;
			break;
		}
	timer->at_ns = 0;
	timer->next = NULL;
}

void pbus_loop_timer_cancel(struct pbus_loop *loop, struct loop_timer *timer)
{
	pthread_mutex_lock(&loop->lock);
	if (timer->at_ns) {
		unlink_timer_locked(loop, timer);
		rearm_timer_locked(loop);
	}
	pthread_mutex_unlock(&loop->lock);
}

static void wake(struct pbus_loop *loop)
{
	uint64_t one = 1;
	ssize_t n = write(loop->event_fd, &one, sizeof one);

	(void)n; /* EAGAIN: the counter is already non-zero, the loop wakes anyway */
}

void pbus_loop_post(struct pbus_loop *loop, struct loop_job *job)
{
	pthread_mutex_lock(&loop->lock);
	if (!job->queued) {
		job->queued = true;
		job->next = NULL;
		*loop->jobs_tail = job;
		loop->jobs_tail = &job->next;
	}
	pthread_mutex_unlock(&loop->lock);
	/* From a callback of the round in progress the job runs at the end of
	 * this round: no need to wake the loop. */
	if (!pbus_loop_in_thread(loop))
		wake(loop);
}

void pbus_loop_unpost(struct pbus_loop *loop, struct loop_job *job)
{
	pthread_mutex_lock(&loop->lock);
	if (job->queued) {
		struct loop_job **p = &loop->jobs;

		while (*p && *p != job)
			p = &(*p)->next;
		if (*p) {
			*p = job->next;
			if (loop->jobs_tail == &job->next)
				loop->jobs_tail = p;
		}
		job->queued = false;
	}
	pthread_mutex_unlock(&loop->lock);
}

bool pbus_loop_in_thread(struct pbus_loop *loop)
{
	return atomic_load(&loop->in_dispatch) && pthread_equal(loop->thread, pthread_self());
}

static uint64_t source_key(const struct loop_source *source)
{
	return (uint64_t)source->slot << 32 | source->gen;
}

int pbus_loop_add(struct pbus_loop *loop, struct loop_source *source, uint32_t events)
{
	struct epoll_event ev = {.events = events};
	uint32_t i;

	pthread_mutex_lock(&loop->lock);
	for (i = 0; i < loop->slot_count && loop->slots[i].source; i++)
		;
	if (i == loop->slot_count) {
		if (loop->slot_count == loop->slot_capacity) {
			size_t cap = loop->slot_capacity ? 2 * loop->slot_capacity : 16;
			struct loop_slot *slots = realloc(loop->slots, cap * sizeof *slots);

			if (!slots) {
				pthread_mutex_unlock(&loop->lock);
				return -ENOMEM;
			}
			loop->slots = slots;
			loop->slot_capacity = cap;
		}
		loop->slots[loop->slot_count++] = (struct loop_slot){0};
	}
	loop->slots[i].source = source;
	source->slot = i;
	source->gen = ++loop->slots[i].gen;
	source->removed = false;
	pthread_mutex_unlock(&loop->lock);
	ev.data.u64 = source_key(source);
	if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, source->fd, &ev) < 0) {
		int e = -errno;

		pbus_loop_remove(loop, source);
		return e;
	}
	return 0;
}

int pbus_loop_modify(struct pbus_loop *loop, struct loop_source *source, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = source_key(source)};

	return epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, source->fd, &ev) < 0 ? -errno : 0;
}

void pbus_loop_remove(struct pbus_loop *loop, struct loop_source *source)
{
	bool was = false;

	pthread_mutex_lock(&loop->lock);
	if (!source->removed && source->slot < loop->slot_count &&
	    loop->slots[source->slot].source == source) {
		loop->slots[source->slot].source = NULL;
		was = true;
	}
	source->removed = true;
	pthread_mutex_unlock(&loop->lock);
	if (was && source->fd >= 0)
		epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, source->fd, NULL);
}

void pbus_loop_lock_dispatch(struct pbus_loop *loop)
{
	pthread_mutex_lock(&loop->dispatch_lock);
}

void pbus_loop_unlock_dispatch(struct pbus_loop *loop)
{
	pthread_mutex_unlock(&loop->dispatch_lock);
}

static void event_ready(struct loop_source *source, uint32_t events)
{
	uint64_t n;
	ssize_t r = read(source->fd, &n, sizeof n);

	(void)events;
	(void)r;
}

static void timer_ready(struct loop_source *source, uint32_t events)
{
	uint64_t n;
	ssize_t r = read(source->fd, &n, sizeof n);

	(void)events;
	(void)r;
}

PBUS_API int pbus_loop_new(struct pbus_loop **ret_loop)
{
	struct pbus_loop *loop = calloc(1, sizeof *loop);
	int e;

	if (!loop)
		return -ENOMEM;
	loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	loop->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	loop->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	pthread_mutex_init(&loop->lock, NULL);
	rpc_mutex_init_recursive(&loop->dispatch_lock);
	loop->jobs_tail = &loop->jobs;
	loop->event_source = (struct loop_source){.fd = loop->event_fd, .ready = event_ready};
	loop->timer_source = (struct loop_source){.fd = loop->timer_fd, .ready = timer_ready};
	if (loop->epoll_fd < 0 || loop->event_fd < 0 || loop->timer_fd < 0) {
		e = -errno;
		pbus_loop_free(loop);
		return e;
	}
	e = pbus_loop_add(loop, &loop->event_source, EPOLLIN);
	if (e == 0)
		e = pbus_loop_add(loop, &loop->timer_source, EPOLLIN);
	if (e < 0) {
		pbus_loop_free(loop);
		return e;
	}
	*ret_loop = loop;
	return 0;
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static struct pbus_loop *default_loop;

static void make_default(void)
{
	if (pbus_loop_new(&default_loop) < 0)
		default_loop = NULL;
}

PBUS_API struct pbus_loop *pbus_loop_default(void)
{
	pthread_once(&default_once, make_default);
	return default_loop;
}

PBUS_API void pbus_loop_free(struct pbus_loop *loop)
{
	if (!loop || loop == default_loop)
		return;
	if (loop->epoll_fd >= 0)
		close(loop->epoll_fd);
	if (loop->event_fd >= 0)
		close(loop->event_fd);
	if (loop->timer_fd >= 0)
		close(loop->timer_fd);
	pthread_mutex_destroy(&loop->lock);
	pthread_mutex_destroy(&loop->dispatch_lock);
	free(loop->slots);
	free(loop);
}

PBUS_API int pbus_loop_fd(const struct pbus_loop *loop)
{
	return loop->epoll_fd;
}

/* Run the timers due now and the posted jobs; returns how many ran. */
static int run_due(struct pbus_loop *loop)
{
	int64_t now = pbus_monotonic_ns();
	int ran = 0;

	for (;;) {
		struct loop_timer *due = NULL;

		pthread_mutex_lock(&loop->lock);
		for (struct loop_timer *t = loop->timers; t; t = t->next)
			if (t->at_ns <= now) {
				due = t;
				break;
			}
		if (due)
			unlink_timer_locked(loop, due);
		else
			rearm_timer_locked(loop);
		pthread_mutex_unlock(&loop->lock);
		if (!due)
			break;
		due->expired(due);
		ran++;
	}
	for (;;) {
		struct loop_job *job;

		pthread_mutex_lock(&loop->lock);
		job = loop->jobs;
		if (job) {
			loop->jobs = job->next;
			if (!loop->jobs)
				loop->jobs_tail = &loop->jobs;
			job->queued = false;
		}
		pthread_mutex_unlock(&loop->lock);
		if (!job)
			break;
		job->run(job);
		ran++;
	}
	return ran;
}

PBUS_API int pbus_loop_dispatch(struct pbus_loop *loop, int timeout_ms)
{
	struct epoll_event events[LOOP_EVENTS];
	int n, handled = 0;

	n = epoll_wait(loop->epoll_fd, events, LOOP_EVENTS, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	pthread_mutex_lock(&loop->dispatch_lock);
	loop->thread = pthread_self();
	atomic_store(&loop->in_dispatch, true);
	for (int i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)(events[i].data.u64 >> 32);
		uint32_t gen = (uint32_t)events[i].data.u64;
		struct loop_source *source = NULL;

		pthread_mutex_lock(&loop->lock);
		if (slot < loop->slot_count && loop->slots[slot].gen == gen)
			source = loop->slots[slot].source;
		pthread_mutex_unlock(&loop->lock);
		if (!source)
			continue; /* removed since epoll_wait returned */
		source->ready(source, events[i].events);
		handled++;
	}
	handled += run_due(loop);
	atomic_store(&loop->in_dispatch, false);
	pthread_mutex_unlock(&loop->dispatch_lock);
	return handled;
}

/* A quit is consumed when run returns, not forgotten when it starts: a
 * pbus_loop_quit() from another thread that comes just before the loop
 * thread enters pbus_loop_run() still ends it (as libuv's uv_stop() and
 * sd-event's sd_event_exit() do). */
PBUS_API int pbus_loop_run(struct pbus_loop *loop)
{
	while (!atomic_exchange(&loop->quit, false)) {
		int r = pbus_loop_dispatch(loop, -1);

		if (r < 0)
			return r;
	}
	return 0;
}

PBUS_API void pbus_loop_quit(struct pbus_loop *loop)
{
	atomic_store(&loop->quit, true);
	wake(loop);
}
