/* SPDX-License-Identifier: MIT */
/*
 * fuzz-client.c: libFuzzer target for the client library (lib/client.c)
 * facing a hostile server: its frame handling, the matching of replies to
 * requests, subscriptions and notifications, and the protocol module's
 * decoders behind them.
 *
 * A server thread of this program stands in for pbusd on a real
 * Unix-domain socket: it answers the client's HELLO and SCHEMA_GET as pbusd
 * would, then sends the input's bytes and closes its side. The client,
 * connected through the public pbus_client_connect() with reconnects off,
 * meanwhile makes one request of each kind (SUBSCRIBE, GET, SET, STATS_GET,
 * PING, UNSUBSCRIBE) and dispatches notifications; their ids are 3 to 8, in
 * that order, so that a seed answering them reaches every reply path. An
 * answer it cannot use must fail its request (or close the connection),
 * never crash, leak or hang the client: ASan, UBSan and LeakSanitizer
 * watch, and a request returns within its timeout.
 *
 * tests/fuzz/run builds it with clang and runs it for a bounded time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <parambus/client.h>
#include <parambus/schema.h>

#include "../../lib/protocol-internal.h"

static const char schema_text[] =
	"pbus-schema 1\n"
	"interface fuzz.Client 1.0\n"
	"enum fuzz.Client.Mode OFF=0 ON=1\n"
	"param vset double unit=V min=0 max=30 default=1\n"
	"param name string size=16 default=abc\n"
	"param mode enum enum=fuzz.Client.Mode default=OFF\n"
	"param arr int16[] count=4 default=1,2\n";

static char dir[64], instance[64];
static int listen_fd = -1;
static uint64_t schema_hash;

static void setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pbus_schema *schema;

	snprintf(dir, sizeof(dir), "/tmp/pbus-fuzz-client-XXXXXX");
	snprintf(instance, sizeof(instance), "fuzzc%d", (int)getpid());
	if (!mkdtemp(dir) || pbus_schema_parse(schema_text, sizeof(schema_text) - 1, "fuzz.pbs", NULL, 0,
					       &schema) < 0)
		abort();
	schema_hash = pbus_schema_hash(schema);
	pbus_schema_free(schema);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.sock", dir, instance);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 4) < 0)
		abort();
}

struct peer {
	const uint8_t *data;
	size_t size;
};

/* One whole frame from @fd (blocking): its type and id; false at the end. */
static bool read_frame(int fd, unsigned *type, uint32_t *id)
{
	unsigned char head[PBUS_WIRE_HEADER_SIZE], skip[4096];
	uint32_t left;

	if (recv(fd, head, sizeof(head), MSG_WAITALL) != (ssize_t)sizeof(head))
		return false;
	left = pbus_le_load32(head) - PBUS_WIRE_HEADER_SIZE;
	*type = (unsigned)pbus_le_load(head + 4, 2);
	*id = pbus_le_load32(head + 8);
	while (left) {
		ssize_t n = recv(fd, skip, left < sizeof(skip) ? left : sizeof(skip), 0);

		if (n <= 0)
			return false;
		left -= (uint32_t)n;
	}
	return true;
}

static void send_all(int fd, const void *data, size_t size)
{
	const unsigned char *p = data;

	while (size) {
		ssize_t n = send(fd, p, size, MSG_NOSIGNAL);

		if (n <= 0)
			return; /* the client closed: fine */
		p += n;
		size -= (size_t)n;
	}
}

/* The stand-in for pbusd: an honest handshake, then the input. */
static void *serve(void *arg)
{
	const struct peer *peer = arg;
	struct pbus_wire_buf b = {0};
	unsigned type;
	uint32_t id;
	char buf[4096];
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		abort();
	if (read_frame(fd, &type, &id) && type == PBUS_WIRE_HELLO) {
		pbus_proto_hello_reply_encode(&b, id,
					      &(struct pbus_proto_hello_reply){
						      .version = PBUS_WIRE_VERSION,
						      .schema_hash = schema_hash,
						      .param_count = 4,
						      .max_frame = 65536,
						      .max_subscriptions = 4,
						      .server_pid = 1,
						      .instance = {instance, (uint32_t)strlen(instance)},
						      .interface = {"fuzz.Client", 11},
					      });
		send_all(fd, b.data, b.size);
		b.size = 0;
		if (read_frame(fd, &type, &id) && type == PBUS_WIRE_SCHEMA_GET) {
			pbus_proto_str_encode(&b, PBUS_WIRE_SCHEMA, id, schema_text, sizeof(schema_text) - 1);
			send_all(fd, b.data, b.size);
		}
	}
	pbus_wire_buf_free(&b);
	send_all(fd, peer->data, peer->size);
	shutdown(fd, SHUT_WR);
	/* Until the client goes. */
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	close(fd);
	return NULL;
}

static void on_notify(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
		      const struct pbus_client_value *values, size_t count, void *userdata)
{
	unsigned *seen = userdata;

	(void)client;
	(void)subscription;
	(void)event;
	/* Touch what the client hands over: every byte must be there. */
	for (size_t k = 0; k < count; k++)
		for (uint32_t i = 0; i < values[k].length; i++)
			*seen += ((const unsigned char *)values[k].value)[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pbus_client_options options = {.socket_dir = dir, .name = "fuzz", .timeout_ms = 100,
					       .no_reconnect = true};
	struct peer peer = {data, size};
	struct pbus_client *client = NULL;
	struct pbus_client_value values[3];
	const uint32_t indexes[3] = {0, 1, 3};
	double v = 2.5;
	struct pbus_write w = {.index = 0, .value = &v, .length = sizeof(v)};
	uint32_t subscription = 0;
	unsigned seen = 0;
	char *stats = NULL;
	pthread_t thread;

	if (listen_fd < 0)
		setup();
	if (pthread_create(&thread, NULL, serve, &peer) != 0)
		abort();
	if (pbus_client_connect(instance, &options, &client) == 0) {
		pbus_client_subscribe(client, indexes, 2, NULL, on_notify, &seen, &subscription);
		if (pbus_client_get(client, indexes, 3, values) == 0)
			on_notify(client, 0, PBUS_CLIENT_EVENT_VALUES, values, 3, &seen);
		pbus_client_set(client, &w, 1);
		if (pbus_client_stats_text(client, &stats) == 0)
			free(stats);
		pbus_client_ping(client, "ping", 4);
		for (int k = 0; k < 3; k++) {
			struct pollfd p = {.fd = pbus_client_fd(client), .events = POLLIN};

			poll(&p, 1, 0);
			if (pbus_client_dispatch(client) < 0)
				break;
		}
		if (subscription)
			pbus_client_unsubscribe(client, subscription);
		pbus_client_close(client);
	}
	pthread_join(thread, NULL);
	return 0;
}
