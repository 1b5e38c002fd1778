/* SPDX-License-Identifier: MIT */
/*
 * client.c: the parameter server's client (parambus/client.h): connecting,
 * the requests a caller makes (GET, SET, STATS, PING) and what the schema
 * says of a parameter, which the client's schema view answers (view.c).
 * How the connection works is client-internal.h's story; subscriptions are
 * client-subscribe.c's.
 */
#include "client-internal.h"

int pbus_client_connect(const char *instance, const struct pbus_client_options *options,
			struct pbus_client **ret_client)
{
	struct pbus_client_options o = {0};
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = TAG_TIMER};
	struct pbus_client *c;
	const char *name;
	size_t n;
	int r;

	if (options)
		o = *options;
	if (!instance || !pbus_instance_name_valid(instance) || !ret_client ||
	    (o.name && (strlen(o.name) > PBUS_WIRE_NAME_MAX || !pbus_utf8_valid(o.name, strlen(o.name)))))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->epoll_fd = c->timer_fd = c->socket_fd = -1;
	memcpy(c->instance, instance, strlen(instance) + 1);
	/* The program's name, cut at a character boundary to fit HELLO. */
	name = o.name ? o.name : program_invocation_short_name;
	n = strlen(name);
	if (n > PBUS_WIRE_NAME_MAX) {
		n = PBUS_WIRE_NAME_MAX;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(c->name, name, n);
	/* The protocol wants UTF-8; a program's name need not be. */
	if (!pbus_utf8_valid(c->name, n))
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c->name[i] >= 0x80)
				c->name[i] = '?';
	c->hello_hash = o.schema_hash;
	c->timeout_ns = (int64_t)(o.timeout_ms ? o.timeout_ms : CLIENT_TIMEOUT_DEFAULT_MS) * NS_PER_MS;
	c->no_reconnect = o.no_reconnect;
	c->backoff_ms = RECONNECT_FIRST_MS;
	c->max_frame = PBUS_WIRE_MAX_FRAME_DEFAULT;
	if (o.socket_dir && !(c->socket_dir = strdup(o.socket_dir))) {
		r = -ENOMEM;
		goto fail;
	}
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->epoll_fd < 0 || c->timer_fd < 0 ||
	    epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->timer_fd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	r = pbus_client_first_connect(c);
	if (r < 0)
		goto fail;
	*ret_client = c;
	return 0;
fail:
	pbus_client_close(c);
	return r;
}

void pbus_client_close(struct pbus_client *client)
{
	if (!client)
		return;
	if (client->socket_fd >= 0)
		close(client->socket_fd);
	if (client->timer_fd >= 0)
		close(client->timer_fd);
	if (client->epoll_fd >= 0)
		close(client->epoll_fd);
	for (size_t i = 0; i < client->sub_count; i++)
		free(client->subs[i].indexes);
	free(client->subs);
	pbus_client_services_free(client);
	free(client->pending);
	pbus_frame_in_free(&client->in);
	pbus_wire_buf_free(&client->out);
	pbus_wire_buf_free(&client->request);
	pbus_wire_buf_free(&client->reply);
	pbus_wire_buf_free(&client->queue);
	pbus_wire_buf_free(&client->delivering);
	free(client->values);
	pbus_view_free(client->view);
	pbus_schema_free(client->schema);
	free(client->socket_dir);
	free(client);
}

int pbus_client_fd(const struct pbus_client *client)
{
	return client ? client->epoll_fd : -EBADF;
}

bool pbus_client_connected(const struct pbus_client *client)
{
	return client && client->state == CLIENT_CONNECTED;
}

const struct pbus_schema *pbus_client_schema(const struct pbus_client *client)
{
	return client ? client->schema : NULL;
}

const struct pbus_view *pbus_client_view(const struct pbus_client *client)
{
	return client ? client->view : NULL;
}

/* The schema's side of a parameter is the client's view's to answer. */

int pbus_client_find(const struct pbus_client *client, const char *name, uint32_t *ret_index)
{
	return client ? pbus_view_find(client->view, name, ret_index) : -EINVAL;
}

int pbus_client_describe(const struct pbus_client *client, uint32_t index,
			 struct pbus_param_info *ret_info)
{
	return client ? pbus_view_describe(client->view, index, ret_info) : -EINVAL;
}

int pbus_client_enumerator(const struct pbus_client *client, uint32_t index, uint32_t i,
			   const char **ret_label, int32_t *ret_value)
{
	return client ? pbus_view_enumerator(client->view, index, i, ret_label, ret_value) : -EINVAL;
}

int pbus_client_parse(const struct pbus_client *client, uint32_t index, const char *text, void *buf,
		      size_t size, size_t *ret_length)
{
	return client ? pbus_view_parse(client->view, index, text, buf, size, ret_length) : -EINVAL;
}

int pbus_client_format(const struct pbus_client *client, uint32_t index, const void *value,
		       size_t length, char *buf, size_t size)
{
	return client ? pbus_view_format(client->view, index, value, length, buf, size) : -EINVAL;
}

int pbus_client_get(struct pbus_client *client, const uint32_t *indexes, size_t count,
		    struct pbus_client_value *values)
{
	struct pbus_client *c = client;
	struct pbus_proto_values m;
	const unsigned char *record;
	int r;

	if (!c || !indexes || !values || count == 0 || count > c->schema->param_count)
		return -EINVAL;
	r = pbus_proto_get_encode(pbus_client_request_buf(c), 0, indexes, count);
	if (r == 0)
		r = pbus_client_transact(c, 0, true);
	if (r < 0)
		return pbus_client_finish(c, r);
	if (pbus_proto_values_decode(PBUS_WIRE_VALUES, c->reply.data, c->reply.size, c->schema->param_count,
				     &m, NULL) < 0 ||
	    m.count != count)
		return pbus_client_finish(c, -EPROTO);
	record = m.records;
	for (size_t i = 0; i < count; i++) {
		struct pbus_wire_value v;

		pbus_proto_values_next(&record, m.end, &v);
		if (v.index != indexes[i])
			return pbus_client_finish(c, -EPROTO);
		values[i] = (struct pbus_client_value){
			.index = v.index, .status = v.status, .timestamp_ns = v.timestamp_ns,
			.seq = v.seq, .length = v.length, .value = v.value};
	}
	return pbus_client_finish(c, 0);
}

/* A failure without per-write answers: every write gets its code. */
static int fail_writes(struct pbus_write *writes, size_t count, int r)
{
	for (size_t i = 0; i < count; i++) {
		writes[i].result = r;
		writes[i].seq = 0;
	}
	return r;
}

int pbus_client_set(struct pbus_client *client, struct pbus_write *writes, size_t count)
{
	return pbus_client_set_flags(client, writes, count, 0);
}

int pbus_client_set_flags(struct pbus_client *client, struct pbus_write *writes, size_t count,
			  unsigned flags)
{
	struct pbus_client *c = client;
	struct pbus_proto_set_reply m;
	int r;

	if (!c || !writes || count == 0 || count > c->schema->param_count ||
	    (flags & ~(unsigned)PBUS_CLIENT_SET_APPLIED))
		return -EINVAL;
	for (size_t i = 0; i < count; i++) {
		if (!writes[i].value && writes[i].length)
			return -EINVAL;
		if (writes[i].length > UINT32_MAX)
			return -EMSGSIZE;
	}
	/* The API's flag is the wire's (§2): the same bit. */
	r = pbus_proto_set_encode(pbus_client_request_buf(c), 0,
				  flags & PBUS_CLIENT_SET_APPLIED ? PBUS_WIRE_FLAG_APPLIED : 0, writes, count);
	if (r == 0)
		r = pbus_client_transact(c, 0, true);
	if (r < 0)
		return pbus_client_finish(c, fail_writes(writes, count, r));
	if (pbus_proto_set_reply_decode(c->reply.data, c->reply.size, &m, NULL) < 0 || m.count != count)
		return pbus_client_finish(c, fail_writes(writes, count, -EPROTO));
	for (size_t i = 0; i < count; i++)
		pbus_proto_set_entry(&m, i, &writes[i].result, &writes[i].seq);
	return pbus_client_finish(c, m.result);
}

/* One STATS request: the JSON text (in the reply buffer, valid until the
 * next request) and its length. 0, or -errno before pbus_client_finish(). */
static int stats_request(struct pbus_client *client, const char **ret_json, uint32_t *ret_length)
{
	struct pbus_proto_str json;
	int r = pbus_client_str_request(client, PBUS_WIRE_STATS_GET, true, &json);

	if (r < 0)
		return r;
	*ret_json = json.s;
	*ret_length = json.length;
	return 0;
}

int pbus_client_stats(struct pbus_client *client, char *buf, size_t size)
{
	const char *json;
	uint32_t length;
	int r;

	if (!client || (!buf && size))
		return -EINVAL;
	r = stats_request(client, &json, &length);
	if (r < 0)
		return pbus_client_finish(client, r);
	if (length > INT32_MAX)
		return pbus_client_finish(client, -EOVERFLOW);
	if (size) {
		size_t n = length < size - 1 ? length : size - 1;

		memcpy(buf, json, n);
		buf[n] = 0;
	}
	return pbus_client_finish(client, (int)length);
}

int pbus_client_stats_text(struct pbus_client *client, char **ret_json)
{
	const char *json;
	uint32_t length;
	char *copy;
	int r;

	if (!client || !ret_json)
		return -EINVAL;
	r = stats_request(client, &json, &length);
	if (r < 0)
		return pbus_client_finish(client, r);
	copy = malloc((size_t)length + 1);
	if (!copy)
		return pbus_client_finish(client, -ENOMEM);
	memcpy(copy, json, length);
	copy[length] = 0;
	*ret_json = copy;
	return pbus_client_finish(client, 0);
}

int pbus_client_server_uid(const char *instance, const char *socket_dir, char *path, size_t size,
			   uid_t *ret_uid)
{
	struct sockaddr_un sa;
	uid_t uid;
	int fd, r;

	if (!instance || !pbus_instance_name_valid(instance) || (!path && size) || !ret_uid)
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	r = pbus_client_find_socket(socket_dir, instance, &sa);
	if (r < 0)
		return r;
	if (size)
		snprintf(path, size, "%s", sa.sun_path);
	fd = pbus_client_connect_socket(&sa, &uid);
	if (fd < 0)
		return fd;
	close(fd);
	*ret_uid = uid;
	return 0;
}

int pbus_client_ping(struct pbus_client *client, const void *data, size_t length)
{
	int r;

	if (!client || (!data && length))
		return -EINVAL;
	if (length > PBUS_WIRE_MAX_FRAME_LIMIT)
		return -EMSGSIZE;
	r = pbus_proto_bytes_encode(pbus_client_request_buf(client), PBUS_WIRE_PING, 0, data, length);
	if (r == 0)
		r = pbus_client_transact(client, 0, true);
	if (r == 0 && (client->reply.size != length ||
		       (length && memcmp(client->reply.data, data, length))))
		r = -EPROTO;
	return pbus_client_finish(client, r);
}
