/* SPDX-License-Identifier: MIT */
/*
 * fuzz-server.c: libFuzzer target for pbusd's socket server: the frame
 * decoder and every request handler behind it (docs/socket-protocol.md).
 *
 * It is built with the server's files and reaches its internal functions
 * through daemon/server-internal.h: each input is the byte stream of one fresh connection (a
 * socketpair standing in for an accepted socket), fed to the same
 * client_read() and service_clients() the server thread runs, against a real
 * instance. Whatever the bytes, the server must neither crash, nor leak, nor
 * do anything undefined (ASan, UBSan, LeakSanitizer). What it answers is
 * not checked here: the replies are drained unread; that a malformed frame
 * gets ERROR and a close is tests/server/test_protocol.py's (malformed_*,
 * truncated_frame, garbage). tests/fuzz/run builds it with clang and runs
 * it for a bounded time.
 */
#include "../../daemon/server-internal.h"

#include <parambus/instance.h>

static const char schema_text[] =
	"pbus-schema 1\n"
	"interface fuzz.Server 1.0\n"
	"enum fuzz.Server.Mode OFF=0 ON=1\n"
	"param vset double unit=V min=0 max=30 default=1 flags=persistent group=nogroup-xyz\n"
	"param name string size=16 default=abc\n"
	"param flag bool default=false\n"
	"param mode enum enum=fuzz.Server.Mode default=OFF\n"
	"param arr int16[] count=4 default=1,2\n"
	"param meas double flags=readonly class=live\n"
	"param secret uint32 flags=noread\n"
	"param quiet int32 flags=nosubscriptions\n"
	"param blob bytes size=8\n";

static struct server *server;
static struct pbus_table *owner;
static struct pbus_schema *schema;

static void teardown(void)
{
	server_stop(server);
	pbus_instance_remove(owner);
	pbus_schema_free(schema);
}

static char instance[64];

static void setup(void)
{
	struct server_options options = {.max_frame = 65536, .max_subscriptions = 4};

	log_set_level(LOG_ERROR);
	snprintf(instance, sizeof(instance), "fuzz-server-%d", (int)getpid());
	if (pbus_schema_parse(schema_text, sizeof(schema_text) - 1, "fuzz.pbs", NULL, 0, &schema) < 0 ||
	    pbus_instance_create(instance, schema, NULL, &owner) < 0 || pbus_instance_publish(owner) < 0 ||
	    /* The server's name is fixed ("fuzz", the registry that the
	     * seeds' service addresses name); the table's is this process's. */
	    server_prepare(owner, schema, schema_text, sizeof(schema_text) - 1, "fuzz", &options,
			   &server) < 0) {
		fprintf(stderr, "fuzz-server: cannot set up the instance\n");
		abort();
	}
	atexit(teardown);
}

static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucred cred = {.pid = getpid(), .uid = 0, .gid = 0};
	struct client *c;
	int fds[2];
	size_t off = 0;

	if (!server)
		setup();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0)
		abort();
	/* Half the inputs come from an unprivileged peer (write rights). */
	if (size && (data[0] & 1))
		cred.uid = 12345;
	c = client_new(server, fds[0], &cred);
	if (!c)
		abort();
	/* In pieces, as a socket may deliver them. */
	while (off < size) {
		size_t piece = size - off < 4096 ? size - off : 4096;
		ssize_t n = send(fds[1], data + off, piece, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n <= 0) {
			drain(fds[1]);
			if (n < 0 && errno != EAGAIN)
				break;
		} else {
			off += (size_t)n;
		}
		client_read(server, c);
		if (c->closing)
			break;
		drain(fds[1]);
	}
	if (!c->closing)
		client_read(server, c);
	drain(fds[1]);
	/* Frees c if it is closing; otherwise free it here. */
	service_clients(server);
	for (struct client *k = server->clients; k; k = server->clients)
		client_free(server, k);
	close(fds[1]);
	return 0;
}
