/* SPDX-License-Identifier: MIT */
/*
 * listen.c: where pbusd listens (docs/socket-protocol.md §1): the socket
 * directory and its checks, socket activation, and accepting connections,
 * resting when descriptors run out (§4).
 */
#include "server-internal.h"

/* accept4() failed for want of resources (descriptors, memory): say so
 * once, and take the listening socket out of the epoll set for a while.
 * Level-triggered, it would wake us for the waiting connection again and
 * again, each accept4() failing alike; in the backlog the connection
 * waits until some descriptor is free. */
static void pause_accepting(struct server *s, int error)
{
	if (!s->accept_failing)
		log_msg(LOG_WARNING, "server: cannot accept connections: %s; new connections wait in the "
			"socket's backlog, trying again every %lld ms", strerror(error),
			ACCEPT_RETRY_NS / 1000000);
	s->accept_failing = true;
	if (!s->accept_paused && epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->listen_fd, NULL) == 0)
		s->accept_paused = true;
	s->accept_retry_ns = pbus_monotonic_ns() + ACCEPT_RETRY_NS;
}

void accept_clients(struct server *s)
{
	for (;;) {
		struct ucred cred;
		socklen_t length = sizeof(cred);
		struct client *c;
		char why[160];
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), r;

		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
			pause_accepting(s, errno);
			return;
		}
		if (s->accept_failing) {
			log_msg(LOG_INFO, "server: accepting connections again");
			s->accept_failing = false;
		}
		if (fd < 0)
			return;
		s->connections_total++;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) < 0 ||
		    !(c = client_new(s, fd, &cred))) {
			close(fd);
			continue;
		}
		r = admit(s, c, why, sizeof(why));
		if (r < 0) {
			s->rejected_connections++;
			reject(s, c, 0, r, "%s", why);
		}
	}
}

/* After a pause (pause_accepting()), listen again and take what waits. */
void resume_accepting(struct server *s, int64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &s->listen_fd};

	if (!s->accept_paused || now < s->accept_retry_ns)
		return;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0) {
		s->accept_retry_ns = now + ACCEPT_RETRY_NS;
		return;
	}
	s->accept_paused = false;
	accept_clients(s);
}

static char *default_socket_dir(void)
{
	const char *env = getenv("PBUS_SOCKET_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = NULL;

	if (env && *env)
		return strdup(env);
	if (geteuid() == 0)
		return strdup("/run/parambus");
	if (xdg && *xdg) {
		if (asprintf(&dir, "%s/parambus", xdg) < 0)
			return NULL;
		return dir;
	}
	if (asprintf(&dir, "/tmp/parambus-%u", (unsigned)geteuid()) < 0)
		return NULL;
	return dir;
}

/* The listening socket from systemd's socket activation, or -1. */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");

	if (!pid || !fds || atoi(pid) != getpid() || atoi(fds) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	return 3;
}

/* mkdir, mode 0755 whatever the umask (clients of every user must reach
 * the socket). 0, also if it exists, or -1 with errno. */
static int mkdir_0755(const char *dir)
{
	if (mkdir(dir, 0755) < 0)
		return errno == EEXIST ? 0 : -1;
	return chmod(dir, 0755);
}

/* mkdir -p, mode 0755. */
static int mkdir_parents(char *dir)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir_0755(dir) < 0) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir_0755(dir);
}

/*
 * Is @dir safe to hold our socket? Whoever can write the directory can
 * replace the socket with one of his own and take the requests meant for
 * us, a `pbus set` among them — and a directory under /tmp can be made by
 * anybody before pbusd first runs. So: a directory itself (not a symbolic
 * link to one), owned by our effective uid or root, that neither group nor
 * others may write (the sticky bit does not help: it keeps others from
 * removing our socket, not from binding theirs while ours is missing).
 * 0, or -EPERM / -ENOTDIR after one line in the log.
 */
static int check_socket_dir(const char *dir)
{
	uid_t me = geteuid();
	struct stat st;

	if (lstat(dir, &st) < 0) {
		int r = -errno;

		log_msg(LOG_ERROR, "server: socket directory %s: %s", dir, strerror(-r));
		return r;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		log_msg(LOG_ERROR, "server: socket directory %s is %s (owner uid %u, mode %04o), "
			"not a directory; refusing to serve there", dir,
			S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory",
			(unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -ENOTDIR;
	}
	if ((st.st_uid != me && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_msg(LOG_ERROR, "server: socket directory %s is unsafe: owner uid %u, mode %04o; "
			"it must belong to uid %u or root and be writable by its owner only, or "
			"anybody who can write it can replace the socket; refusing to serve there",
			dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)me);
		return -EPERM;
	}
	return 0;
}

int listen_on(struct server *s, const char *dir_option)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char *dir = dir_option ? strdup(dir_option) : default_socket_dir();
	int fd, r;

	s->listen_fd = activated_socket();
	if (s->listen_fd >= 0) {
		log_msg(LOG_INFO, "server: listening on the socket systemd passed");
		free(dir);
		return 0;
	}
	if (!dir || asprintf(&s->socket_path, "%s/%s.sock", dir, s->instance) < 0) {
		free(dir);
		log_msg(LOG_ERROR, "server: out of memory");
		return -ENOMEM;
	}
	if (mkdir_parents(dir) < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return r;
	}
	/* Whether we made it or found it. */
	r = check_socket_dir(dir);
	free(dir);
	if (r < 0)
		return r;
	if (strlen(s->socket_path) >= sizeof(addr.sun_path)) {
		log_msg(LOG_ERROR, "server: socket path %s is too long", s->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, s->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot make a socket: %s", strerror(-r));
		return r;
	}
	/* A socket file left by a pbusd that died: nobody listens on it, and
	 * we hold the instance, so it is ours to replace. */
	unlink(s->socket_path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || chmod(s->socket_path, 0666) < 0 ||
	    listen(fd, 128) < 0) {
		r = -errno;
		log_msg(LOG_ERROR, "server: cannot listen on %s: %s", s->socket_path, strerror(errno));
		close(fd);
		return r;
	}
	s->listen_fd = fd;
	s->unlink_socket = true;
	log_msg(LOG_INFO, "server: listening on %s", s->socket_path);
	return 0;
}
