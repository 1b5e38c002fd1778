/* SPDX-License-Identifier: MIT */
/*
 * raw-echo.c: the limit of benchmark scenario 6's SCPI part
 * (../shared/BENCHMARKS.md, docs/benchmarks.md): a bare TCP server that
 * answers every line it reads with a line of a fixed size, doing nothing
 * else. It is built like pbus-scpi's network side (pbus-scpi/main.c): one
 * epoll loop, non-blocking sockets, TCP_NODELAY, a line framed at its LF,
 * so that bench/run-scpi.py can hold pbus-scpi's query rate against it
 * with the same clients and the same placement.
 *
 *   raw-echo REPLY_BYTES [MAX_CLIENTS]
 *
 * Listens on 127.0.0.1 on a port the kernel picks and prints "PORT=N\n" on
 * stdout once it listens; every LF-terminated line read from a client gets
 * REPLY_BYTES bytes back, the last one LF (the others '0'). Runs until
 * SIGTERM or SIGINT (default action).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUFFER_SIZE 65536

struct client {
	int fd;
	size_t used;          /* bytes of a partial line in in[] */
	char in[BUFFER_SIZE];
	size_t out_used, out_sent;
	char *out;
	size_t out_size;
};

static void die(const char *what)
{
	fprintf(stderr, "raw-echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int listen_loopback(int *ret_port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind 127.0.0.1:0");
	if (listen(fd, 64) < 0)
		die("listen");
	socklen_t len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		die("getsockname");
	*ret_port = ntohs(sa.sin_port);
	return fd;
}

static void client_close(int epoll_fd, struct client *c)
{
	epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	free(c);
}

/* Queue one reply per complete line of c->in. 0, or -1 on no memory. */
static int frame(struct client *c, const char *reply, size_t reply_bytes)
{
	size_t start = 0;
	for (;;) {
		char *lf = memchr(c->in + start, '\n', c->used - start);
		if (!lf)
			break;
		start = (size_t)(lf - c->in) + 1;
		if (c->out_used + reply_bytes > c->out_size) {
			size_t size = c->out_size ? c->out_size * 2 : 4096;
			while (size < c->out_used + reply_bytes)
				size *= 2;
			char *out = realloc(c->out, size);
			if (!out)
				return -1;
			c->out = out;
			c->out_size = size;
		}
		memcpy(c->out + c->out_used, reply, reply_bytes);
		c->out_used += reply_bytes;
	}
	memmove(c->in, c->in + start, c->used - start);
	c->used -= start;
	return 0;
}

/* Write what is queued. 0 when all is written, 1 if some waits, -1 gone. */
static int flush(struct client *c)
{
	while (c->out_sent < c->out_used) {
		ssize_t n = send(c->fd, c->out + c->out_sent, c->out_used - c->out_sent, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		c->out_sent += (size_t)n;
	}
	c->out_sent = c->out_used = 0;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: raw-echo REPLY_BYTES [MAX_CLIENTS]\n");
		return 2;
	}
	long reply_bytes = strtol(argv[1], NULL, 10);
	long max_clients = argc > 2 ? strtol(argv[2], NULL, 10) : 16;
	if (reply_bytes < 1 || reply_bytes > BUFFER_SIZE || max_clients < 1) {
		fprintf(stderr, "raw-echo: REPLY_BYTES 1..%d, MAX_CLIENTS at least 1\n", BUFFER_SIZE);
		return 2;
	}
	char *reply = malloc((size_t)reply_bytes);
	if (!reply)
		die("malloc");
	memset(reply, '0', (size_t)reply_bytes - 1);
	reply[reply_bytes - 1] = '\n';

	int port;
	int listen_fd = listen_loopback(&port);
	int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd < 0)
		die("epoll_create1");
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) < 0)
		die("epoll_ctl");
	printf("PORT=%d\n", port);
	fflush(stdout);

	long clients = 0;
	for (;;) {
		struct epoll_event events[32];
		int n = epoll_wait(epoll_fd, events, 32, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct client *c = events[i].data.ptr;
			if (!c) {
				int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					continue;
				if (clients >= max_clients) {
					close(fd);
					continue;
				}
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				c = calloc(1, sizeof(*c));
				if (!c) {
					close(fd);
					continue;
				}
				c->fd = fd;
				struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
				if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &cev) < 0) {
					close(fd);
					free(c);
					continue;
				}
				clients++;
				continue;
			}
			int gone = 0;
			if (events[i].events & EPOLLIN) {
				if (c->used == sizeof(c->in))
					c->used = 0;  /* a line longer than the buffer: dropped */
				ssize_t r = recv(c->fd, c->in + c->used, sizeof(c->in) - c->used, 0);
				if (r == 0 || (r < 0 && errno != EAGAIN))
					gone = 1;
				else if (r > 0) {
					c->used += (size_t)r;
					if (frame(c, reply, (size_t)reply_bytes) < 0)
						gone = 1;
				}
			}
			int pending = gone ? 0 : flush(c);
			if (gone || pending < 0) {
				client_close(epoll_fd, c);
				clients--;
				continue;
			}
			struct epoll_event cev = {.events = pending ? EPOLLOUT : EPOLLIN, .data.ptr = c};
			if ((events[i].events & EPOLLOUT) || pending)
				epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &cev);
		}
	}
}
