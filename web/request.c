/* SPDX-License-Identifier: MIT */
/*
 * request.c: the parts of HTTP that pbus-web reads itself, on top of what
 * libwebsockets parses (docs/web.md, "HTTP"): the session cookie of a
 * Cookie header (RFC 6265 §4.2), the fields of a login body (a form,
 * application/x-www-form-urlencoded, or JSON {"user","password"}), and
 * whether an Origin header names this server (RFC 6454 §7). Pure
 * functions of their input, without lws, so that the fuzz target
 * (tests/fuzz/fuzz-web.c) runs them alone.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "pbus-web.h"

int web_cookie_get(const char *header, const char *name, char *buf, size_t size)
{
	size_t name_len = strlen(name);
	const char *p = header;
	if (!header || !name_len || size == 0)
		return -EINVAL;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (eq && (size_t)(eq - p) == name_len && memcmp(p, name, name_len) == 0) {
			const char *v = eq + 1;
			size_t vlen = len - name_len - 1;
			while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
				v++;
				vlen -= 2;
			}
			if (vlen >= size)
				return -EMSGSIZE;
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			return 0;
		}
		p += len;
	}
	return -ENOENT;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Percent- and '+'-decode @n bytes at @s into @buf. */
static int form_decode(const char *s, size_t n, char *buf, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (i + 2 >= n)
				return -EINVAL;
			int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0')
			return -EINVAL;
		if (o + 1 >= size)
			return -EMSGSIZE;
		buf[o++] = c;
	}
	buf[o] = '\0';
	return 0;
}

int web_form_get(const char *body, size_t length, const char *name, char *buf, size_t size)
{
	size_t name_len = strlen(name);
	size_t i = 0;
	if (size == 0)
		return -EINVAL;
	while (i < length) {
		const char *p = body + i;
		const char *amp = memchr(p, '&', length - i);
		size_t len = amp ? (size_t)(amp - p) : length - i;
		const char *eq = memchr(p, '=', len);
		size_t key_len = eq ? (size_t)(eq - p) : len;
		char key[64];
		if (form_decode(p, key_len, key, sizeof(key)) == 0 && strlen(key) == name_len &&
		    memcmp(key, name, name_len) == 0)
			return eq ? form_decode(eq + 1, len - key_len - 1, buf, size) : -EINVAL;
		i += len + 1;
	}
	return -ENOENT;
}

static int json_field(json_t *root, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(root, key);
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return -EINVAL;
	if (json_string_length(v) >= size)
		return -EMSGSIZE;
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int web_login_body(const char *body, size_t length, bool json, char *user, size_t user_size,
		   char *password, size_t password_size)
{
	int r;
	if (!json) {
		r = web_form_get(body, length, "user", user, user_size);
		if (r == 0)
			r = web_form_get(body, length, "password", password, password_size);
		return r == -ENOENT ? -EINVAL : r;
	}
	json_t *root = json_loadb(body, length, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root) || json_object_size(root) != 2) {
		json_decref(root);
		return -EINVAL;
	}
	r = json_field(root, "user", user, user_size);
	if (r == 0)
		r = json_field(root, "password", password, password_size);
	json_decref(root);
	return r;
}

bool web_origin_allowed(const char *origin, const char *host, const char *const *allowed,
			size_t allowed_count)
{
	if (!origin || !*origin)
		return false;
	for (size_t i = 0; i < allowed_count; i++)
		if (strcmp(origin, allowed[i]) == 0)
			return true;
	const char *rest;
	if (strncasecmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	else
		return false;
	/* an origin is scheme://host[:port]: nothing after the host */
	if (!host || !*rest || strpbrk(rest, "/?#@ "))
		return false;
	return strcasecmp(rest, host) == 0;
}
