/* SPDX-License-Identifier: MIT */
/*
 * set.c: SET (docs/socket-protocol.md §3.3): the checks, the all-or-nothing
 * write, a SET parked while another writer holds a parameter (tried again
 * from the server loop, never waited for), and replies held until the
 * state file has the persistent values and, for a SET with the APPLIED
 * flag, until pbus-hwd reports that it applied the values of parameters
 * with an output binding (the reports: read_hwd_reports()).
 */
#include "server-internal.h"

void free_ack(struct pending_ack *a)
{
	free(a->indexes);
	free(a->seqs);
	free(a->wait_seqs);
	free(a->hw_seqs);
	free(a->results);
	free(a);
}

void free_parked(struct parked_set *p)
{
	if (!p)
		return;
	free(p->writes);
	free(p->data);
	free(p);
}

static void send_set_reply(struct client *c, uint32_t id, int result, size_t count,
			   const int32_t *results, const uint64_t *seqs)
{
	pbus_proto_set_reply_encode(reply_buf(c), id, result, count, results, seqs);
}

/* Whether pbus-hwd has answered for write @k of @a: it applied that
 * version or a later one (*ret_result 0), or it failed to apply it
 * (-EIO); false while neither. */
static bool hardware_answered(const struct server *s, const struct pending_ack *a, size_t k,
			      int32_t *ret_result)
{
	uint32_t i = a->indexes[k];

	*ret_result = 0;
	if (!a->hw_seqs[k] || s->applied_seq[i] >= a->hw_seqs[k])
		return true;
	if (s->failed_seq[i] >= a->hw_seqs[k]) {
		*ret_result = -EIO;
		return true;
	}
	return false;
}

/* Send the acknowledgements whose values are on disk and applied by the
 * hardware as asked (or overdue), each followed by the replies held behind
 * it. The held bytes sent are dropped from the held stream once, at the
 * end (a burst of acknowledgements moves the rest of the stream once, not
 * once each). */
void check_acks(struct server *s, struct client *c, int64_t now)
{
	size_t sent = 0; /* bytes of c->held gone to c->tx in this call */

	while (c->acks) {
		struct pending_ack *a = c->acks;
		bool saved = true, applied = true;
		int32_t result = 0, e;
		size_t end;

		for (size_t k = 0; k < a->count && saved; k++)
			saved = !a->wait_seqs[k] ||
				pbus_param_saved_seq(s->params[a->indexes[k]]) >= a->wait_seqs[k];
		for (size_t k = 0; a->hw_seqs && k < a->count && applied; k++)
			applied = hardware_answered(s, a, k, &e);
		if ((!saved && now < a->deadline_ns) || (!applied && now < a->apply_deadline_ns)) {
			/* Replies stay in order: later ones wait too. */
			a->wake_ns = INT64_MAX;
			if (!saved)
				a->wake_ns = a->deadline_ns;
			if (!applied && a->apply_deadline_ns < a->wake_ns)
				a->wake_ns = a->apply_deadline_ns;
			break;
		}
		/* Each write the hardware did not apply says why: it failed
		 * (EIO), or no report came in time (ETIMEDOUT). Its value is
		 * in the table all the same (and its seq says so). */
		for (size_t k = 0; a->hw_seqs && k < a->count; k++) {
			if (!hardware_answered(s, a, k, &e))
				e = -ETIMEDOUT;
			if (e < 0) {
				a->results[k] = e;
				if (!result)
					result = e;
			}
		}
		if (result)
			log_msg(LOG_INFO, "server: a write by client %d (%s) was not applied by the "
				"hardware: %s", (int)c->pid, c->name, strerror(-result));
		if (saved) {
			pbus_proto_set_reply_encode(&c->tx, a->id, result, a->count, a->results, a->seqs);
		} else {
			log_msg(LOG_ERROR, "server: a write by client %d was not saved within %lld s",
				(int)c->pid, ACK_TIMEOUT_NS / 1000000000);
			send_error_to(s, c, &c->tx, a->id, -EIO,
				      "the values were written but could not be saved");
		}
		/* The replies to the requests between this SET and the next
		 * waiting one (or all that are held, if none waits). */
		end = a->next ? (size_t)(a->next->held_from - c->held_base) : c->held.size;
		if (end > c->held.size)
			end = c->held.size; /* cannot be; an allocation failure dropped replies */
		if (end > sent) {
			pbus_wire_bytes(&c->tx, c->held.data + sent, end - sent);
			sent = end;
		}
		c->acks = a->next;
		if (!c->acks)
			c->last_ack = NULL;
		c->ack_count--;
		free_ack(a);
	}
	pbus_wire_buf_consume(&c->held, sent);
	c->held_base += sent;
}

/* Whether the SET's write of parameter @index waits for the hardware: the
 * SET asked (@flags), the parameter has an output binding, and pbus-hwd
 * runs (or will again: it is not given up). */
static bool waits_for_hardware(const struct server *s, unsigned flags, uint32_t index)
{
	return (flags & PBUS_WIRE_FLAG_APPLIED) && (s->output_bound[index / 64] >> (index % 64) & 1) &&
	       atomic_load_explicit(&s->hardware, memory_order_relaxed);
}

/* The end of a SET that the table took or refused (@first: what
 * pbus_table_write_many_try() returned, not -EAGAIN): tell subscribers and
 * the watcher about the writes, and reply, after the save if persistent
 * values were written, and after the hardware applied them if @flags asks.
 * @seen_filled: s->set_seen has the request's parameters already
 * (handle_set() made it; a retried SET has not). */
static void finish_set(struct server *s, struct client *c, uint32_t id, unsigned flags,
		       const struct pbus_write *writes, uint32_t count, int first, bool seen_filled)
{
	int32_t *results = s->set_results;
	uint64_t *seqs = s->set_seqs, *seen = s->set_seen;
	struct pending_ack *ack;
	bool persistent = false, hardware = false;
	int64_t now;

	/* Our own writes: we mark them changed, so that subscribers hear of
	 * them in this turn, and tell the watcher which versions are ours, so
	 * that it does not wake us for them again. A version the watcher sees
	 * before we record it here costs a wake-up, no more; one that is not
	 * ours never matches. */
	if (!seen_filled)
		memset(seen, 0, s->words * sizeof(*seen));
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = writes[k].index;

		if (writes[k].result == 0 && writes[k].seq)
			atomic_store_explicit(&s->own_version[i], writes[k].seq, memory_order_relaxed);
		results[k] = writes[k].result;
		seqs[k] = first == 0 ? writes[k].seq : 0;
		if (pbus_param_flags(s->params[i]) & PBUS_PARAM_PERSISTENT)
			persistent = true;
		if (waits_for_hardware(s, flags, i))
			hardware = true;
		if (!seen_filled)
			seen[i / 64] |= UINT64_C(1) << (i % 64);
	}
	/* Every parameter of the request (seen[]) is marked, one atomic OR
	 * per 64 of them. */
	for (size_t w = 0; w < s->words; w++)
		if (seen[w])
			atomic_fetch_or(&s->changed[w], seen[w]);
	collect_changes(s);
	if (first < 0 || (!persistent && !hardware))
		return send_set_reply(c, id, first, count, results, seqs);
	/* Persistent values: the reply waits until the saver has them on
	 * disk; values for the hardware, until pbus-hwd applied them. */
	ack = calloc(1, sizeof(*ack));
	if (ack) {
		ack->indexes = malloc(count * sizeof(*ack->indexes));
		ack->results = malloc(count * sizeof(*ack->results));
		ack->seqs = malloc(count * sizeof(*ack->seqs));
		ack->wait_seqs = calloc(count, sizeof(*ack->wait_seqs));
		if (hardware)
			ack->hw_seqs = calloc(count, sizeof(*ack->hw_seqs));
	}
	if (!ack || !ack->indexes || !ack->results || !ack->seqs || !ack->wait_seqs ||
	    (hardware && !ack->hw_seqs)) {
		if (ack)
			free_ack(ack);
		return send_error(s, c, id, -ENOMEM, "out of memory (the values were written)");
	}
	now = pbus_monotonic_ns();
	ack->id = id;
	ack->count = count;
	ack->deadline_ns = now + ACK_TIMEOUT_NS;
	ack->apply_deadline_ns = now + s->apply_timeout_ns;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = writes[k].index;

		ack->indexes[k] = i;
		ack->results[k] = results[k];
		ack->seqs[k] = seqs[k];
		if (pbus_param_flags(s->params[i]) & PBUS_PARAM_PERSISTENT)
			ack->wait_seqs[k] = seqs[k];
		if (hardware && waits_for_hardware(s, flags, i))
			ack->hw_seqs[k] = seqs[k];
	}
	ack->held_from = c->held_base + c->held.size;
	if (c->last_ack)
		c->last_ack->next = ack;
	else
		c->acks = ack;
	c->last_ack = ack;
	c->ack_count++;
	check_acks(s, c, pbus_monotonic_ns());
}

/* Keep a SET that met a busy parameter (its values are in the client's
 * receive buffer, which moves on: copied) to be tried again from the loop. */
static void park_set(struct server *s, struct client *c, uint32_t id, unsigned flags,
		     const struct pbus_write *writes, uint32_t count)
{
	struct parked_set *p = calloc(1, sizeof(*p));
	size_t total = 0, at = 0;
	int64_t now = pbus_monotonic_ns();

	for (uint32_t k = 0; k < count; k++)
		total += writes[k].length;
	if (p) {
		p->writes = malloc(count * sizeof(*p->writes));
		p->data = malloc(total ? total : 1);
	}
	if (!p || !p->writes || !p->data) {
		free_parked(p);
		return send_error(s, c, id, -ENOMEM, "out of memory (nothing was written)");
	}
	for (uint32_t k = 0; k < count; k++) {
		p->writes[k] = writes[k];
		if (writes[k].length)
			memcpy(p->data + at, writes[k].value, writes[k].length);
		p->writes[k].value = p->data + at;
		at += writes[k].length;
	}
	p->id = id;
	p->flags = (uint16_t)flags;
	p->count = count;
	p->first_ns = now;
	p->next_ns = now + BUSY_RETRY_FIRST_NS;
	p->delay_ns = 2 * BUSY_RETRY_FIRST_NS;
	c->parked = p;
	c->paused_since_ns = now;
	client_update_events(s, c); /* its next requests wait in the socket */
}

/* Try a parked SET again: done (written, refused, or busy for too long:
 * EBUSY), or planned once more. Returns true if it is done. */
bool retry_parked(struct server *s, struct client *c, int64_t now)
{
	struct parked_set *p = c->parked;
	int r = pbus_table_write_many_try(s->table, p->writes, p->count);

	if (r == -EAGAIN && now - p->first_ns < BUSY_TIMEOUT_NS) {
		p->next_ns = now + p->delay_ns;
		if (p->next_ns > p->first_ns + BUSY_TIMEOUT_NS)
			p->next_ns = p->first_ns + BUSY_TIMEOUT_NS; /* the last try at 1 s */
		p->delay_ns = p->delay_ns * 2 > BUSY_RETRY_MAX_NS ? BUSY_RETRY_MAX_NS : p->delay_ns * 2;
		return false;
	}
	if (r == -EAGAIN) {
		/* Nothing was written: the busy writes say EBUSY, the others 0. */
		int32_t *results = s->set_results;
		uint32_t busy = 0;

		for (uint32_t k = 0; k < p->count; k++) {
			results[k] = p->writes[k].result == -EAGAIN ? -EBUSY : 0;
			if (results[k] && !busy)
				busy = p->writes[k].index + 1;
		}
		s->busy_sets++;
		log_msg(LOG_WARNING, "server: a SET of client %d (%s) refused: parameter '%s' has "
			"been held by another writer for %lld s (a stopped process?)", (int)c->pid,
			c->name, busy ? s->schema->params[busy - 1].name : "?",
			BUSY_TIMEOUT_NS / 1000000000);
		send_set_reply(c, p->id, -EBUSY, p->count, results, NULL);
	} else {
		finish_set(s, c, p->id, p->flags, p->writes, p->count, r, false);
	}
	return true;
}

void handle_set(struct server *s, struct client *c, uint32_t id, unsigned flags, const void *body,
		size_t n)
{
	struct pbus_write *writes = s->set_writes;
	int32_t *results = s->set_results;
	uint64_t *seqs = s->set_seqs, *seen = s->set_seen;
	char why[PBUS_PROTO_WHY_MAX];
	uint32_t count;
	int first = 0;

	if (pbus_proto_set_decode(body, n, s->param_count, writes, &count, why) < 0)
		return reject(s, c, id, -EPROTO, "%s", why);
	memset(seqs, 0, count * sizeof(*seqs));
	/* Steps 1-3 of docs/socket-protocol.md §3.3 here; the value checks
	 * (4-6) are the table's, done by pbus_table_write_many_try() before it
	 * applies anything. */
	memset(seen, 0, s->words * sizeof(*seen));
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = writes[k].index;
		int e;

		if (i >= s->param_count) {
			e = -ENOENT;
		} else if (seen[i / 64] & (UINT64_C(1) << (i % 64))) {
			e = -EINVAL; /* the same parameter twice */
		} else {
			seen[i / 64] |= UINT64_C(1) << (i % 64);
			e = write_right(s, c, i);
		}
		results[k] = e;
		if (e < 0 && first == 0)
			first = e;
	}
	if (first == 0) {
		/* Never waits for another writer: the server thread serves
		 * everybody, and a writer stopped while it holds a parameter
		 * would stop them all. A busy parameter parks the SET. */
		first = pbus_table_write_many_try(s->table, writes, count);
		if (first == -EAGAIN)
			return park_set(s, c, id, flags, writes, count);
		return finish_set(s, c, id, flags, writes, count, first, true);
	}
	/* Refused already: still tell each write what is wrong with it. */
	first = 0;
	for (uint32_t k = 0; k < count; k++) {
		if (results[k] == 0)
			results[k] = pbus_value_check(&s->schema->params[writes[k].index].ti, writes[k].value,
						      writes[k].length);
		if (results[k] < 0 && first == 0)
			first = results[k];
	}
	send_set_reply(c, id, first, count, results, seqs);
}

/* pbus-hwd's reports (common/hwd-report.h): whole records, each written
 * at once, so a read of a multiple of their size gets whole ones; a
 * record begun is kept all the same (report_part). A report can only
 * raise a version: an old pbus-hwd's late report changes nothing. */
void read_hwd_reports(struct server *s)
{
	unsigned char buf[64 * PBUS_HWD_REPORT_SIZE];

	for (;;) {
		size_t have = s->report_part_size, at = 0;
		ssize_t n;

		memcpy(buf, s->report_part, have);
		n = read(s->report_fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				/* pbusd's supervisor closed the write end (pbusd
				 * stops): nothing more will come. */
				epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->report_fd, NULL);
				close(s->report_fd);
				s->report_fd = -1;
			}
			return;
		}
		have += (size_t)n;
		for (; have - at >= PBUS_HWD_REPORT_SIZE; at += PBUS_HWD_REPORT_SIZE) {
			struct pbus_hwd_report r;

			if (pbus_hwd_report_decode(buf + at, &r) < 0 || r.index >= s->param_count) {
				log_msg(LOG_WARNING, "server: pbus-hwd reported parameter %u result %d: "
					"not a report; ignored", r.index, r.result);
				continue;
			}
			if (r.result == 0 && r.seq > s->applied_seq[r.index])
				s->applied_seq[r.index] = r.seq;
			else if (r.result < 0 && r.seq > s->failed_seq[r.index])
				s->failed_seq[r.index] = r.seq;
		}
		s->report_part_size = have - at;
		memcpy(s->report_part, buf + at, s->report_part_size);
	}
}
