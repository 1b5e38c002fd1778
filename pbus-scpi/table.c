/* SPDX-License-Identifier: MIT */
/*
 * table.c: where pbus-scpi's queries read their values (docs/scpi.md,
 * "Queries read the table"). A GET through pbusd's socket costs a round
 * trip (two wake-ups); the instance's table, mapped read-only, has the
 * same values for the price of a copy. So a query reads the table
 * whenever the socket would have answered it with the same value, and
 * asks pbusd otherwise, so that what a client sees never changes, only
 * how fast:
 *
 *  - the table is mapped only if its permissions let pbus-scpi's user map
 *    it (docs/security.md), and only if it is of the tree's schema;
 *  - a `noread` parameter is never read here: pbusd refuses its GET, and
 *    it still goes to pbusd for that refusal;
 *  - the table answers only while the connection to pbusd is up
 *    (pbus_client_connected(): a pbusd that died is noticed there, and the
 *    GET then fails as it always did) and the segment is still the
 *    instance's (pbus_table_current(): one load). A segment that pbusd
 *    closed or that a restarted pbusd replaced is dropped and the
 *    instance's new one opened at once; an open that fails is tried
 *    again at most once a second, the queries meanwhile going to pbusd.
 *
 * Settings never come here: they go to pbusd as one SET (execute.c), where
 * the write rights apply, and pbusd acknowledges a SET only once it is in
 * the table, so a query after a setting reads the new value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/log.h"
#include "pbus-scpi.h"

#define TABLE_RETRY_NS 1000000000LL /* between failed opens */

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Open the instance's current segment: 0, or -errno (logged once per
 * change of the reason). */
static int table_open(struct scpi_server *server)
{
	struct pbus_table *table = NULL;
	const char *why = NULL;
	int r = pbus_table_open(server->instance, PBUS_OPEN_READ, &table);
	if (r == 0 && pbus_table_schema_hash(table) != pbus_scpi_tree_schema_hash(server->tree)) {
		r = -ESTALE;
		why = "another schema than the tree's";
	} else if (r == 0 && pbus_table_param_count(table) != server->param_count) {
		r = -EPROTO;
		why = "another parameter count than pbusd's";
	} else if (r == 0 && pbus_table_state(table) != PBUS_TABLE_LIVE) {
		r = -ESRCH;
		why = "not served by pbusd";
	}
	if (r < 0) {
		pbus_table_close(table);
		if (r != server->table_error)
			log_msg(server->table_error ? LOG_INFO : LOG_WARNING,
				"instance %s: queries go through pbusd: its table: %s", server->instance,
				why ? why : pbus_strerror(r));
		server->table_error = r;
		return r;
	}
	server->table = table;
	server->table_error = 0;
	server->table_opens++;
	log_msg(LOG_INFO, "instance %s: queries read its table (pbusd pid %d)", server->instance,
		pbus_table_owner_pid(table));
	return 0;
}

int scpi_table_init(struct scpi_server *server, const char *instance)
{
	size_t value_max = 8;
	for (uint32_t i = 0; i < server->param_count; i++)
		if (server->info[i].value_size > value_max)
			value_max = server->info[i].value_size;
	server->table_value = malloc(value_max);
	server->table_value_size = value_max;
	if (!server->table_value)
		return -ENOMEM;
	snprintf(server->instance, sizeof(server->instance), "%s", instance);
	if (table_open(server) < 0)
		server->table_retry_ns = monotonic_ns() + TABLE_RETRY_NS;
	return 0;
}

void scpi_table_fini(struct scpi_server *server)
{
	pbus_table_close(server->table);
	server->table = NULL;
	free(server->table_value);
	server->table_value = NULL;
}

/* The table, if a query may read it now; NULL: ask pbusd. */
static struct pbus_table *table_for_reads(struct scpi_server *server)
{
	if (!pbus_client_connected(server->client))
		return NULL; /* the GET reconnects, or fails as it always did */
	if (server->table && pbus_table_current(server->table))
		return server->table;
	if (server->table) {
		/* pbusd shut down or was replaced: its successor's segment, now */
		log_msg(LOG_INFO, "instance %s: the table of pbusd pid %d is no longer served",
			server->instance, pbus_table_owner_pid(server->table));
		pbus_table_close(server->table);
		server->table = NULL;
	} else if (monotonic_ns() < server->table_retry_ns) {
		return NULL;
	}
	if (table_open(server) < 0) {
		server->table_retry_ns = monotonic_ns() + TABLE_RETRY_NS;
		return NULL;
	}
	return server->table;
}

int scpi_read(struct scpi_server *server, uint32_t index, struct pbus_client_value *ret)
{
	const struct pbus_param *param;
	struct pbus_sample sample;
	struct pbus_table *table;
	if (index < server->param_count && !(server->info[index].flags & PBUS_PARAM_NOREAD) &&
	    (table = table_for_reads(server)) && pbus_table_param(table, index, &param) == 0) {
		int status = pbus_param_read(param, server->table_value, server->table_value_size, &sample);
		if (status >= 0) {
			server->table_reads++;
			ret->index = index;
			ret->status = (uint32_t)status;
			ret->timestamp_ns = sample.timestamp_ns;
			ret->seq = sample.seq;
			ret->length = sample.length;
			ret->value = server->table_value;
			return 0;
		}
	}
	server->socket_reads++;
	return pbus_client_get(server->client, &index, 1, ret);
}
