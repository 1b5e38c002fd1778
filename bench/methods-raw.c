/* SPDX-License-Identifier: MIT */
/*
 * methods-raw.c: the limit of benchmark scenario 3, method calls
 * (../shared/BENCHMARKS.md, docs/benchmarks.md): a bare Unix-domain
 * SOCK_STREAM ping-pong that moves exactly the bytes a parambus method call
 * moves over its socket, and does nothing else.
 *
 *   empty  request 16 bytes (the 12-byte frame header of
 *          docs/socket-protocol.md §2 and a u32 method number), reply 12
 *          bytes (a header);
 *   copy   request 56 bytes (the same 16 and the 40 argument bytes), reply
 *          52 bytes (a header and the 40 bytes).
 *
 * The server reads a request whole with blocking read()s, copies its id and
 * (copy) its 40 argument bytes into the reply and writes the reply with one
 * blocking write(): no parsing, no poll, no allocation. The client does the
 * same from its side and checks that each reply carries its request's id and
 * arguments. ADDR is the socket's path. The command line and output are
 * those of every contender (methods-common.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "methods-common.h"

#define HEADER_SIZE 12
#define ID_OFFSET 8
#define ARGUMENTS_OFFSET (HEADER_SIZE + 4) /* in a request, after the method number */
#define FRAME_MAX (ARGUMENTS_OFFSET + METHODS_COPY_SIZE)

static size_t arguments_size(enum methods_method method)
{
	return method == METHODS_METHOD_COPY ? METHODS_COPY_SIZE : 0;
}

/* Fill @n bytes at @buf from @fd: 0, or -1 with errno set (0: the peer
 * closed the connection; a close between frames is the end, not an error). */
static int read_all(int fd, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = read(fd, (char *)buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = done ? EPROTO : 0;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(fd, (const char *)buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

static void set_address(struct sockaddr_un *addr, const char *path)
{
	*addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr->sun_path))
		methods_fail(path, ENAMETOOLONG);
	memcpy(addr->sun_path, path, strlen(path) + 1);
}

/* A frame header as docs/socket-protocol.md §2 lays it out: length, type,
 * flags, id. The type and the method number are placeholders: nobody reads
 * them. */
static void put_header(unsigned char *frame, uint32_t length)
{
	memset(frame, 0, HEADER_SIZE);
	memcpy(frame, &length, 4);
}

static int server(const struct methods_options *opts)
{
	const size_t request_size = ARGUMENTS_OFFSET + arguments_size(opts->method);
	const size_t reply_size = HEADER_SIZE + arguments_size(opts->method);
	unsigned char request[FRAME_MAX], reply[FRAME_MAX];
	struct sockaddr_un addr;
	int fd, conn;

	set_address(&addr, opts->address);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		methods_fail("socket", errno);
	unlink(opts->address);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		methods_fail(opts->address, errno);
	if (listen(fd, 4) < 0)
		methods_fail("listen", errno);
	put_header(reply, (uint32_t)reply_size);
	/* A client that goes away mid-reply ends its connection, not the server. */
	signal(SIGPIPE, SIG_IGN);
	methods_print_ready();
	for (;;) {
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			methods_fail("accept", errno);
		}
		while (read_all(conn, request, request_size) == 0) {
			memcpy(reply + ID_OFFSET, request + ID_OFFSET, 4);
			if (opts->method == METHODS_METHOD_COPY)
				memcpy(reply + HEADER_SIZE, request + ARGUMENTS_OFFSET,
				       METHODS_COPY_SIZE);
			if (write_all(conn, reply, reply_size) < 0)
				break;
		}
		if (errno && errno != ECONNRESET && errno != EPIPE)
			methods_fail("server", errno);
		close(conn);
	}
}

/* One call: call number @call's request out, its reply in, checked. */
static void call(int fd, const struct methods_options *opts, unsigned char *request,
		 unsigned char *reply, long call_number)
{
	const size_t request_size = ARGUMENTS_OFFSET + arguments_size(opts->method);
	const size_t reply_size = HEADER_SIZE + arguments_size(opts->method);
	uint32_t id = (uint32_t)call_number;
	struct methods_copy_args in, out;

	memcpy(request + ID_OFFSET, &id, 4);
	if (opts->method == METHODS_METHOD_COPY) {
		methods_copy_args_for_call(call_number, &in);
		methods_copy_args_encode(&in, request + ARGUMENTS_OFFSET);
	}
	if (write_all(fd, request, request_size) < 0)
		methods_fail("client: write", errno);
	if (read_all(fd, reply, reply_size) < 0)
		methods_fail("client: read", errno ? errno : ECONNRESET);
	if (memcmp(reply + ID_OFFSET, &id, 4))
		methods_fail_message("client", "a reply with another call's id");
	if (opts->method == METHODS_METHOD_COPY) {
		methods_copy_args_decode(reply + HEADER_SIZE, &out);
		if (!methods_copy_args_equal(&in, &out))
			methods_fail_message("client",
					     "a reply whose arguments differ from the call's");
	}
}

static int client(const struct methods_options *opts)
{
	unsigned char request[FRAME_MAX], reply[FRAME_MAX];
	struct sockaddr_un addr;
	int64_t start;
	int fd;

	set_address(&addr, opts->address);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		methods_fail("socket", errno);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		methods_fail(opts->address, errno);
	put_header(request, (uint32_t)(ARGUMENTS_OFFSET + arguments_size(opts->method)));
	for (long i = 0; i < opts->warmup; i++)
		call(fd, opts, request, reply, i);
	start = methods_now_ns();
	for (long i = 0; i < opts->calls; i++)
		call(fd, opts, request, reply, opts->warmup + i);
	methods_print_calls("raw", opts, methods_now_ns() - start);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct methods_options opts;

	methods_parse_options(
		argc, argv, "methods-raw", METHODS_ROLE_SERVER | METHODS_ROLE_CLIENT,
		"The limit of scenario 3: a bare Unix-domain stream socket ping-pong of\n"
		"parambus's frame sizes (empty: 16 bytes out, 12 back; copy: 56 out, 52\n"
		"back, the server copying the 40 argument bytes). ADDR is the socket's path.",
		&opts);
	return opts.role == METHODS_ROLE_SERVER ? server(&opts) : client(&opts);
}
