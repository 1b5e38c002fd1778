/* SPDX-License-Identifier: MIT */
/*
 * net.c: the TCP listener and the accept of pbus-scpi's two transports, the
 * raw socket (main.c) and HiSLIP (hislip.c): one place for how a listening
 * socket is made and how a client is taken in (non-blocking, close-on-exec,
 * no Nagle delay, named by its numeric address).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/log.h"
#include "pbus-scpi.h"

int scpi_listen(const struct sockaddr *addr, socklen_t addr_len, unsigned *ret_port)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, addr, addr_len) < 0 || listen(fd, 64) < 0) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	getsockname(fd, (struct sockaddr *)&bound, &bound_len);
	*ret_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						      : ((struct sockaddr_in *)&bound)->sin_port);
	return fd;
}

int scpi_accept(int listen_fd, const char *what, char *peer, size_t peer_size)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	int fd = accept4(listen_fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_msg(LOG_WARNING, "accept on the %s socket: %s", what, strerror(errno));
		return -1;
	}
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
	getnameinfo((struct sockaddr *)&addr, len, host, sizeof(host), port, sizeof(port),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(peer, peer_size, "%s:%s", host, port);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}
