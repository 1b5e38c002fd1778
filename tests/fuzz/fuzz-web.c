/* SPDX-License-Identifier: MIT */
/*
 * fuzz-web.c: what pbus-web parses itself (web/message.c, web/request.c,
 * web/users.c) under libFuzzer. The input's first byte chooses the parser,
 * the rest is its input:
 *   0  a WebSocket message (web_message_decode()): a decoded set has 1 to
 *      WEB_SET_MAX_WRITES writes, each by name or by index, its texts
 *      NUL-terminated within their limits, its id valid JSON; a refusal
 *      has a one-line reason;
 *   1  the input as a JSON string (web_out_json_string()) and as a value
 *      (web_out_value()): jansson reads it back, and valid UTF-8 without
 *      NUL comes back as the same bytes;
 *   2  a users file (web_users_parse()): accepted users have valid names,
 *      groups within limits; a refusal names "fuzz:LINE:";
 *   3  a Cookie header, a form body, a login body (JSON and form) and an
 *      Origin against a Host, split at the first NUL bytes.
 * One thread.
 */
#include "../../web/pbus-web.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-web: %s\n", what);
		abort();
	}
}

static int valid_utf8_no_nul(const unsigned char *s, size_t n)
{
	json_t *j = json_stringn((const char *)s, n); /* jansson checks UTF-8 */
	int ok = j != NULL && memchr(s, 0, n) == NULL;
	json_decref(j);
	return ok;
}

static void message(const char *text, size_t n)
{
	static struct web_in in;
	char error[256];
	int r = web_message_decode(text, n, &in, error, sizeof(error));
	if (r < 0) {
		require(r == -22 && error[0] && !strchr(error, '\n'), "a refusal without a one-line reason");
		return;
	}
	require(in.type == WEB_IN_SET || in.type == WEB_IN_PING, "an unknown type decoded");
	if (in.type == WEB_IN_PING)
		return;
	require(in.count >= 1 && in.count <= WEB_SET_MAX_WRITES, "a set's count");
	json_t *id = json_loads(in.id, JSON_DECODE_ANY, NULL);
	require(id != NULL && strlen(in.id) <= WEB_ID_MAX, "the id is not JSON");
	json_decref(id);
	for (size_t i = 0; i < in.count; i++) {
		require((in.writes[i].name[0] != '\0') == (in.writes[i].index < 0), "name xor index");
		require(strlen(in.writes[i].text) <= WEB_SET_TEXT_MAX, "a text too long");
	}
}

static void encode(const char *text, size_t n)
{
	char *copy = strndup(text, n);
	struct web_out o = {0};
	web_out_json_string(&o, copy);
	require(!o.failed, "out of memory");
	json_t *j = json_loadb(o.data, o.length, JSON_DECODE_ANY, NULL);
	require(json_is_string(j), "a JSON string that jansson does not read");
	if (valid_utf8_no_nul((const unsigned char *)text, n))
		require(json_string_length(j) == n && memcmp(json_string_value(j), text, n) == 0,
			"valid text changed on the way");
	json_decref(j);
	web_out_free(&o);
	for (unsigned type = 1; type <= 14; type++) {
		web_out_value(&o, type, copy);
		j = json_loadb(o.data, o.length, JSON_DECODE_ANY, NULL);
		require(j != NULL, "a value that is not JSON");
		json_decref(j);
		web_out_free(&o);
	}
	free(copy);
}

static void users(const char *text, size_t n)
{
	struct web_users u;
	char error[512];
	int r = web_users_parse(text, n, "fuzz", &u, error, sizeof(error));
	if (r < 0) {
		require(r == -22 ? strncmp(error, "fuzz:", 5) == 0 : r == -12, "a refusal without file:line");
		return;
	}
	for (size_t i = 0; i < u.count; i++) {
		require(u.users[i].name[0] && strlen(u.users[i].name) <= WEB_NAME_MAX, "a user name");
		require(u.users[i].group_count <= WEB_GROUPS_MAX, "groups");
		require(web_users_find(&u, u.users[i].name) == &u.users[i], "find");
	}
	web_users_fini(&u);
}

static void request(const char *text, size_t n)
{
	char *copy = malloc(n + 1); /* all of it: the second part follows the first NUL */
	memcpy(copy, text, n);
	copy[n] = '\0';
	const char *second = copy + strlen(copy) < copy + n ? copy + strlen(copy) + 1 : "";
	char buf[256], user[66], password[1024];
	if (web_cookie_get(copy, WEB_SESSION_COOKIE, buf, sizeof(buf)) == 0)
		require(strlen(buf) < sizeof(buf), "cookie");
	if (web_form_get(text, n, "user", buf, sizeof(buf)) == 0)
		require(strlen(buf) < sizeof(buf), "form");
	for (int json = 0; json < 2; json++)
		if (web_login_body(text, n, json, user, sizeof(user), password, sizeof(password)) == 0)
			require(strlen(user) < sizeof(user) && strlen(password) < sizeof(password), "login body");
	const char *allowed[] = {"https://panel.example"};
	bool ok = web_origin_allowed(copy, second, allowed, 1);
	if (ok && strcmp(copy, allowed[0]) != 0)
		require(strstr(copy, "://") != NULL && strcasecmp(strstr(copy, "://") + 3, second) == 0, "origin");
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	switch (data[0] % 4) {
	case 0: message(text, n); break;
	case 1: encode(text, n); break;
	case 2: users(text, n); break;
	default: request(text, n); break;
	}
	return 0;
}
