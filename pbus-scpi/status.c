/* SPDX-License-Identifier: MIT */
/*
 * status.c: the SCPI-99 status registers STATus:QUEStionable and
 * STATus:OPERation (SCPI-99 volume 1 chapter 9 and volume 2 chapter 20).
 *
 * The condition registers are the instrument's, so they are the server's:
 * each bit follows the parameters that the tree's `status` records name
 * (docs/scpi.md, "Status reporting"), through one subscription to pbusd. A
 * bit is set while any of its parameters meets its condition: an alarm
 * status at least minor/major/invalid, or a value that is not zero.
 * Everything else is per session (the policy of docs/scpi.md): each
 * session's transition filters turn condition changes into its own event
 * register, whose bits enabled by its enable register make the status
 * byte's summary bits (3 QUEStionable, 7 OPERation).
 *
 * Threads: the one of the epoll loop; the subscription's callback runs in
 * pbus_client_dispatch().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "pbus-scpi.h"

static bool source_met(const struct pbus_scpi_status_source *s, const struct pbus_client_value *v)
{
	if (s->min_status)
		return v->status >= s->min_status;
	const unsigned char *p = v->value;
	for (uint32_t i = 0; i < v->length; i++)
		if (p[i])
			return true;
	return false;
}

/* Feed a new condition to every session's event registers (SCPI-99 9.3:
 * a 0->1 change passes the positive transition filter, a 1->0 change the
 * negative one) and tell the sessions whose summary may have changed. */
static void set_condition(struct scpi_server *server, uint16_t ques, uint16_t oper)
{
	uint16_t old_ques = server->condition[SCPI_REG_QUES];
	uint16_t old_oper = server->condition[SCPI_REG_OPER];
	if (ques == old_ques && oper == old_oper)
		return;
	server->condition[SCPI_REG_QUES] = ques;
	server->condition[SCPI_REG_OPER] = oper;
	for (struct scpi_session *s = server->sessions; s; s = s->next) {
		uint16_t before[2] = {s->reg[0].event, s->reg[1].event};
		const uint16_t now[2] = {ques, oper}, was[2] = {old_ques, old_oper};
		for (int k = 0; k < 2; k++) {
			struct scpi_register *r = &s->reg[k];
			uint16_t rise = (uint16_t)(now[k] & ~was[k]), fall = (uint16_t)(was[k] & ~now[k]);
			r->event |= (uint16_t)(((rise & r->ptr) | (fall & r->ntr)) & 0x7fff);
		}
		if ((s->reg[0].event != before[0] || s->reg[1].event != before[1]) && s->status_changed)
			s->status_changed(s, s->status_userdata);
	}
}

static void recompute(struct scpi_server *server)
{
	uint16_t c[2] = {0, 0};
	for (size_t i = 0; i < server->status_count; i++)
		if (server->source_met[i])
			c[server->status[i].reg == PBUS_SCPI_REGISTER_QUESTIONABLE ? SCPI_REG_QUES
										   : SCPI_REG_OPER] |=
				(uint16_t)(1u << server->status[i].bit);
	set_condition(server, c[SCPI_REG_QUES], c[SCPI_REG_OPER]);
}

static void on_values(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
		      const struct pbus_client_value *values, size_t count, void *userdata)
{
	(void)client;
	(void)subscription;
	struct scpi_server *server = userdata;
	if (event != PBUS_CLIENT_EVENT_VALUES)
		return; /* the conditions stay as they were until fresh values come */
	for (size_t k = 0; k < count; k++)
		for (size_t i = 0; i < server->status_count; i++)
			if (server->status[i].index == values[k].index)
				server->source_met[i] = source_met(&server->status[i], &values[k]);
	recompute(server);
}

int scpi_status_init(struct scpi_server *server, unsigned interval_ms)
{
	size_t n = pbus_scpi_tree_status_count(server->tree);
	server->status_count = 0;
	if (!n)
		return 0;
	server->status = calloc(n, sizeof(*server->status));
	server->source_met = calloc(n, sizeof(*server->source_met));
	uint32_t *indexes = calloc(n, sizeof(*indexes));
	if (!server->status || !server->source_met || !indexes) {
		free(indexes);
		return -ENOMEM;
	}
	size_t distinct = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pbus_scpi_status_source *s = pbus_scpi_tree_status(server->tree, i);
		if (s->index >= server->param_count) {
			free(indexes);
			return -EPROTO;
		}
		server->status[i] = *s;
		size_t k = 0;
		while (k < distinct && indexes[k] != s->index)
			k++;
		if (k == distinct)
			indexes[distinct++] = s->index;
	}
	server->status_count = n;
	struct pbus_subscribe_options o = {.min_interval_us = interval_ms * 1000u};
	int r = pbus_client_subscribe(server->client, indexes, distinct, &o, on_values, server,
				      &server->status_subscription);
	free(indexes);
	return r;
}

void scpi_status_fini(struct scpi_server *server)
{
	free(server->status);
	free(server->source_met);
	server->status = NULL;
	server->source_met = NULL;
	server->status_count = 0;
}

void scpi_status_refresh(struct scpi_server *server)
{
	if (server->status_count)
		pbus_client_dispatch(server->client);
}

void scpi_status_session_add(struct scpi_server *server, struct scpi_session *session)
{
	scpi_status_preset(session);
	session->next = server->sessions;
	server->sessions = session;
}

void scpi_status_session_remove(struct scpi_server *server, struct scpi_session *session)
{
	for (struct scpi_session **p = &server->sessions; *p; p = &(*p)->next)
		if (*p == session) {
			*p = session->next;
			break;
		}
	session->next = NULL;
}

void scpi_status_preset(struct scpi_session *session)
{
	/* SCPI-99 20.7: enables 0, positive transitions all, negative none;
	 * the event registers are left alone. */
	for (int k = 0; k < 2; k++) {
		session->reg[k].enable = 0;
		session->reg[k].ptr = 0x7fff;
		session->reg[k].ntr = 0;
	}
}
