/* SPDX-License-Identifier: MIT */
/*
 * watcher.c: the watcher thread. It sleeps in a pbus_watch (a futex, no
 * polling) over the parameters somebody subscribed to, marks what changed
 * in a bitmap shared with the server thread, and wakes that thread through
 * an eventfd. The server thread hands it a new watch set when subscriptions
 * come and go.
 */
#include "server-internal.h"

void kick(int fd)
{
	uint64_t one = 1;

	(void)!write(fd, &one, sizeof(one));
}

void drain_fd(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

void *watcher_main(void *arg)
{
	struct server *s = arg;
	struct pbus_watch *watch = NULL;
	unsigned generation = ~0u;

	pthread_mutex_lock(&s->watch_lock);
	while (!atomic_load(&s->stopping)) {
		uint32_t index;
		int r;

		if (s->watch_generation != generation) {
			generation = s->watch_generation;
			s->current_watch = NULL;
			pbus_watch_free(watch);
			watch = NULL;
			if (s->watch_count &&
			    pbus_watch_new(s->table, s->watch_indexes, s->watch_count, &watch) < 0)
				log_msg(LOG_ERROR, "server: cannot watch the subscribed parameters");
			s->current_watch = watch;
			/* A write between a subscription's first NOTIFY and this
			 * watch would go unseen: have the server compare versions. */
			atomic_store(&s->rescan, true);
			kick(s->changed_fd);
		}
		if (!watch) {
			/* Nothing subscribed: sleep until that changes. */
			pthread_cond_wait(&s->watch_changed, &s->watch_lock);
			continue;
		}
		pthread_mutex_unlock(&s->watch_lock);
		r = pbus_watch_wait(watch, -1);
		if (r > 0) {
			bool foreign = false;

			while (pbus_watch_next(watch, &index) == 1) {
				/* The server thread marks what it wrote itself and
				 * notifies in the same turn (it records the version
				 * before it marks): leave it those, report the rest. */
				if (pbus_param_seq(s->params[index]) ==
				    atomic_load_explicit(&s->own_version[index], memory_order_relaxed))
					continue;
				atomic_fetch_or(&s->changed[index / 64], UINT64_C(1) << (index % 64));
				foreign = true;
			}
			if (foreign)
				kick(s->changed_fd);
		}
		pthread_mutex_lock(&s->watch_lock);
		if (r == -ESTALE)
			break;
	}
	s->current_watch = NULL;
	pthread_mutex_unlock(&s->watch_lock);
	pbus_watch_free(watch);
	return NULL;
}

/* Wake the watcher out of its wait: the subscribed set changed, or the
 * server stops. Called with watch_lock held. */
void wake_watcher(struct server *s)
{
	pthread_cond_signal(&s->watch_changed);
	if (s->current_watch)
		pbus_watch_interrupt(s->current_watch);
}

/* The server thread tells the watcher what is subscribed now. */
void update_watch_set(struct server *s)
{
	uint64_t *any = calloc(s->words, sizeof(*any));
	uint32_t *indexes;
	size_t n = 0;

	if (!any)
		return;
	for (struct client *c = s->clients; c; c = c->next)
		for (struct subscription *sub = c->subs; sub; sub = sub->next)
			for (size_t w = 0; w < s->words; w++)
				any[w] |= sub->member[w];
	indexes = calloc(s->param_count ? s->param_count : 1, sizeof(*indexes));
	if (!indexes) {
		free(any);
		return;
	}
	for (uint32_t i = 0; i < s->param_count; i++)
		if (any[i / 64] & (UINT64_C(1) << (i % 64)))
			indexes[n++] = i;
	free(any);
	pthread_mutex_lock(&s->watch_lock);
	if (n == s->watch_count && !memcmp(indexes, s->watch_indexes, n * sizeof(*indexes))) {
		pthread_mutex_unlock(&s->watch_lock);
		free(indexes);
		return;
	}
	free(s->watch_indexes);
	s->watch_indexes = indexes;
	s->watch_count = n;
	s->watch_generation++;
	wake_watcher(s);
	pthread_mutex_unlock(&s->watch_lock);
}
