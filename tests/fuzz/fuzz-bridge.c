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
 *      refusal names "fuzz:LINE: ".
 * One thread.
 */
#include "../../bridge/pbus-bridge.h"

#include <errno.h>
#include <math.h>
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

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0: fleet(text, n); break;
	case 1: command(text, n); break;
	default: journal(text, n); break;
	}
	return 0;
}
