/* SPDX-License-Identifier: MIT */
/*
 * fuzz-bridge.c: what pbus-bridge decodes itself (bridge/fleet.c,
 * bridge/command.c) under libFuzzer. The input's first byte chooses the
 * decoder, the rest is its input:
 *   0  a fleet file (bridge_fleet_parse()): an accepted file has rising
 *      indexes, valid names and topics, unique topics, each entry published
 *      or commanded, finite deadbands and rates within 0..1000; a refusal
 *      names "fuzz:LINE: " on one line;
 *   1  a command's payload (bridge_command_decode()): an accepted one has
 *      an id within its limit without control characters and a value text
 *      without NUL; a refusal has a one-line reason;
 *   2  a journal file (bridge_journal_parse()): every key found again by
 *      bridge_journal_find(), at most BRIDGE_JOURNAL_KEYS of them; a
 *      refusal names "fuzz:LINE: ";
 *   3  a Sparkplug NCMD (next byte odd) or DCMD payload
 *      (bridge_spb_decode_command(), bridge/sparkplug.c) against an edge
 *      node with a metric of every parambus type: an accepted DCMD write
 *      names a metric, has a value text without NUL within its limit and
 *      an id within BRIDGE_ID_MAX; an accepted NCMD one (Rebirth) has
 *      neither; a refused one has a one-line reason; a refused payload
 *      too;
 *   4  a Sparkplug value: the input as the stored encoding of the metric
 *      its next byte chooses, set and published in a DDATA and a DBIRTH,
 *      which the decoder must read back as a payload (and a DCMD of the
 *      DDATA's bytes must not crash it);
 *   5  a primary host's STATE payload (bridge_spb_decode_state()).
 * One thread.
 */
#include "../../bridge/pbus-bridge.h"

#include <errno.h>
#include <math.h>
#include <parambus/common.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-bridge: %s\n", what);
		abort();
	}
}

static void one_line(const char *error, const char *prefix)
{
	require(error[0] && !strchr(error, '\n'), "a refusal without a one-line reason");
	if (prefix)
		require(strncmp(error, prefix, strlen(prefix)) == 0, "a refusal that does not name fuzz:LINE:");
}

static void fleet(const char *text, size_t n)
{
	struct bridge_fleet f;
	char error[256];
	int r = bridge_fleet_parse(text, n, "fuzz", &f, error, sizeof(error));
	if (r < 0) {
		require(r == -EINVAL || r == -ENOMEM, "an unexpected error");
		if (r == -EINVAL)
			one_line(error, "fuzz:");
		return;
	}
	for (size_t i = 0; i < f.count; i++) {
		const struct bridge_fleet_param *p = &f.params[i];
		require(i == 0 || f.params[i - 1].index < p->index, "indexes not rising");
		require(p->publish || p->command, "neither published nor commanded");
		require(isfinite(p->deadband) && p->deadband >= 0, "a bad deadband");
		require(isfinite(p->max_rate_hz) && p->max_rate_hz >= 0 && p->max_rate_hz <= 1000, "a bad rate");
		require(p->name[0] && p->topic[0] && !strchr(p->topic, '+') && !strchr(p->topic, '#'), "a bad name or topic");
		require(bridge_fleet_by_topic(&f, p->topic, strlen(p->topic)) == p, "a topic twice");
	}
	bridge_fleet_fini(&f);
}

static void command(const char *text, size_t n)
{
	struct bridge_command c;
	char error[256];
	int r = bridge_command_decode(text, n, &c, error, sizeof(error));
	if (r < 0) {
		require(r == -EINVAL || r == -ENOMEM, "an unexpected error");
		if (r == -EINVAL)
			one_line(error, NULL);
		require(c.text == NULL, "a refused command kept its text");
		return;
	}
	require(strlen(c.id) <= BRIDGE_ID_MAX, "an id too long");
	for (const char *p = c.id; *p; p++)
		require((unsigned char)*p >= 0x20 && *p != 0x7f, "a control character in an id");
	require(c.text != NULL && strlen(c.text) <= BRIDGE_VALUE_TEXT_MAX, "a value text");
	free(c.text);
}

static void journal(const char *text, size_t n)
{
	struct bridge_journal j = {.fd = -1};
	char error[256];
	int r = bridge_journal_parse(&j, text, n, "fuzz", error, sizeof(error));
	if (r == -EINVAL)
		one_line(error, "fuzz:");
	require(j.count <= BRIDGE_JOURNAL_KEYS, "more keys than the journal keeps");
	size_t found = 0;
	for (size_t i = 0; i < j.capacity; i++)
		if (j.entries[i].key) {
			require(bridge_journal_find(&j, j.entries[i].key) == &j.entries[i], "a key not found again");
			found++;
		}
	require(found == j.count, "the count");
	bridge_journal_fini(&j);
}

/* The edge node of the Sparkplug targets: one metric per parambus type. */
static const struct bridge_spb_metric_def spb_defs[] = {
	{"b", "", PBUS_TYPE_BOOL, 1, 0, true}, {"i8", "", PBUS_TYPE_INT8, 1, 0, true},
	{"i16", "", PBUS_TYPE_INT16, 2, 0, true}, {"i32", "V", PBUS_TYPE_INT32, 4, 0, true},
	{"i64", "", PBUS_TYPE_INT64, 8, 0, true}, {"u8", "", PBUS_TYPE_UINT8, 1, 0, true},
	{"u16", "", PBUS_TYPE_UINT16, 2, 0, true}, {"u32", "", PBUS_TYPE_UINT32, 4, 0, true},
	{"u64", "", PBUS_TYPE_UINT64, 8, 0, true}, {"f", "", PBUS_TYPE_FLOAT, 4, 0, true},
	{"d", "A", PBUS_TYPE_DOUBLE, 8, 0, false}, {"s", "", PBUS_TYPE_STRING, 64, 0, true},
	{"bytes", "", PBUS_TYPE_BYTES, 32, 0, true}, {"e", "", PBUS_TYPE_ENUM, 4, 16, true},
	{"ab", "", PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_BOOL, 20, 0, true},
	{"ai16", "", PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_INT16, 16, 0, true},
	{"au64", "", PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_UINT64, 32, 0, true},
	{"af", "", PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_FLOAT, 16, 0, true},
	{"ad", "", PBUS_TYPE_ARRAY_FLAG | PBUS_TYPE_DOUBLE, 32, 0, true},
};
#define SPB_METRICS (sizeof(spb_defs) / sizeof(spb_defs[0]))

static struct bridge_spb *edge_node(void)
{
	static struct bridge_spb *s;
	if (!s) {
		require(bridge_spb_new("g", "n", "d", "h", &s) == 0, "bridge_spb_new");
		require(bridge_spb_prepare(s, spb_defs, SPB_METRICS) == 0, "bridge_spb_prepare");
	}
	return s;
}

static void spb_command(const unsigned char *data, size_t n)
{
	if (n < 1)
		return;
	enum bridge_spb_topic kind = data[0] & 1 ? BRIDGE_SPB_NCMD : BRIDGE_SPB_DCMD;
	struct bridge_spb_command c;
	char error[256];
	int r = bridge_spb_decode_command(edge_node(), kind, data + 1, n - 1, &c, error, sizeof(error));
	if (r < 0) {
		require(r == -EINVAL || r == -ENOMEM, "an unexpected error");
		if (r == -EINVAL)
			one_line(error, NULL);
		require(c.writes == NULL && c.count == 0, "a refused payload kept writes");
		return;
	}
	for (size_t i = 0; i < c.count; i++) {
		const struct bridge_spb_write *w = &c.writes[i];
		if (w->error[0]) {
			one_line(w->error, NULL);
			require(w->text == NULL, "a refused write with a value");
			continue;
		}
		if (kind == BRIDGE_SPB_NCMD) {
			/* the node's one writable metric: Node Control/Rebirth */
			require(w->text == NULL && w->metric == SIZE_MAX, "an NCMD write with a value");
			continue;
		}
		require(w->metric < SPB_METRICS, "a write to no metric");
		require(w->text && strlen(w->text) < BRIDGE_VALUE_TEXT_MAX, "a value text");
		require(w->id[0] && strlen(w->id) <= BRIDGE_ID_MAX, "an id");
	}
	bridge_spb_command_fini(&c);
}

static void spb_value(const unsigned char *data, size_t n)
{
	if (n < 1)
		return;
	struct bridge_spb *s = edge_node();
	size_t i = data[0] % SPB_METRICS;
	char label[17];
	size_t l = n - 1 < 16 ? n - 1 : 16;
	memcpy(label, data + 1, l);
	label[l] = '\0';
	int r = bridge_spb_set_value(s, i, data + 1, n - 1, label, data[0] >> 5, (uint64_t)n * 1000003u);
	require(r == 0 || r == -EINVAL || r == -EMSGSIZE, "set_value: an unexpected error");
	struct bridge_spb_message m;
	struct bridge_spb_command c;
	char error[256];
	r = bridge_spb_ddata(s, &i, 1, 1, &m);
	if (r == 0) {
		/* a DDATA is a payload: decoding it as a DCMD refuses it (it has a seq) */
		require(bridge_spb_decode_command(s, BRIDGE_SPB_DCMD, m.payload, m.length, &c, error, sizeof(error)) ==
				-EINVAL && strstr(error, "seq"), "a DDATA not read back");
	} else {
		require(r == -ENODATA, "ddata: an unexpected error");
	}
	require(bridge_spb_dbirth(s, 2, &m) == 0 && m.length > 0, "a DBIRTH");
	require(bridge_spb_decode_command(s, BRIDGE_SPB_DCMD, m.payload, m.length, &c, error, sizeof(error)) ==
			-EINVAL, "a DBIRTH not read back");
}

static void spb_state(const char *text, size_t n)
{
	bool online;
	uint64_t timestamp;
	char error[256];
	int r = bridge_spb_decode_state(text, n, &online, &timestamp, error, sizeof(error));
	require(r == 0 || r == -EINVAL, "an unexpected error");
	if (r < 0)
		one_line(error, NULL);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	switch (data[0] % 6) {
	case 0: fleet(text, n); break;
	case 1: command(text, n); break;
	case 2: journal(text, n); break;
	case 3: spb_command(data + 1, n); break;
	case 4: spb_value(data + 1, n); break;
	default: spb_state(text, n); break;
	}
	return 0;
}
