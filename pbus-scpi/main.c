/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbus-scpi's options, its TCP listener and its one epoll loop
 * (docs/scpi.md, "The daemon"). Every socket is non-blocking: a client is
 * read when it has sent something and written when it can take more, so a
 * slow or silent client holds nobody up. Input is framed into program
 * messages (pbus_scpi_message_length()); a partial message waits in the
 * client's buffer; a line longer than --max-line is refused with -363 and
 * discarded up to its terminator. A client whose responses pile up (more
 * than SCPI_RESPONSE_MAX unread bytes) is not read until it reads them,
 * and neither is one whose program message waits for a method (its
 * session resumes it from the method loop, whose descriptor is here too);
 * such a client that hangs up is closed at once, its calls orphaned.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/options.h"
#include "../common/signals.h"
#include "hislip.h"
#include "pbus-scpi.h"

static const char usage[] =
	"Usage: pbus-scpi --instance NAME [OPTIONS]\n"
	"\n"
	"Serve a parambus instance's SCPI command tree over raw TCP (the LXI\n"
	"\"socket\" convention, port 5025) and HiSLIP (IVI-6.1, port 4880: status\n"
	"byte, device clear and service requests for VISA): IEEE 488.2 common\n"
	"commands, SYSTem:ERRor? and one error queue per client. pbus-scpi is a\n"
	"client of pbusd like any other: what it may write is what its user may\n"
	"write (docs/service.md).\n"
	"\n"
	"Options:\n"
	"  -i, --instance NAME      the instance (required)\n"
	"  -t, --tree FILE          the command tree `pbus-gen --scpi` wrote\n"
	"                           (default: /etc/parambus/NAME.scpi)\n"
	"  -L, --listen ADDR:PORT   where to listen (default 127.0.0.1:5025; use\n"
	"                           0.0.0.0:5025 or [::]:5025 for the network)\n"
	"  -H, --hislip ADDR:PORT   where to serve HiSLIP (IVI-6.1, VISA resource\n"
	"                           TCPIP::HOST::hislip0::INSTR; default 127.0.0.1:4880),\n"
	"                           or \"off\"\n"
	"  -s, --socket-dir DIR     pbusd's socket folder (default: the usual search)\n"
	"  -c, --max-clients N      clients at once (default 16), and as many HiSLIP sessions\n"
	"  -m, --max-line BYTES     longest program message (default 65536)\n"
	"  -T, --idle-timeout S     close a client silent for S seconds (default 0: never)\n"
	"      --status-interval MS follow the parameters behind STATus:QUEStionable and\n"
	"                           :OPERation at most every MS ms (default 50)\n"
	"      --call-timeout MS    give a method call MS ms to reply, then -200 \"timed\n"
	"                           out\" (default 10000); method commands run\n"
	"                           overlapped, *OPC, *OPC? and *WAI wait for them\n"
	"      --notify-fd FD       write \"PORT=N\\nHISLIP_PORT=N\\nREADY=1\\n\" to FD when\n"
	"                           listening, then close it\n"
	"  -l, --log-level LEVEL    error, warning, info (default) or debug\n"
	"  -h, --help               show this help\n"
	"  -V, --version            show the version\n"
	"\n"
	"Examples:\n"
	"  pbus-scpi --instance psu --tree build/dev/examples/psu/psu.scpi\n"
	"      serve psu's tree on 127.0.0.1, port 5025 and HiSLIP 4880\n"
	"  pbus-scpi -i psu -L 0.0.0.0:5025 --max-clients 4 --idle-timeout 600\n"
	"      on the network, 4 clients at most, silent ones closed after 10 min\n"
	"  printf '*IDN?\\nSOUR:VOLT 1500 mV;VOLT?\\n' | nc -q1 127.0.0.1 5025\n"
	"      two program messages by hand; from VISA the resource is\n"
	"      TCPIP::127.0.0.1::hislip0::INSTR (pyvisa-py: docs/scpi.md)\n"
	"\n"
	"Exit status: 0 after SIGTERM/SIGINT, 1 on an error (no tree, no pbusd,\n"
	"schema mismatch, address in use), 2 on a usage error.\n"
	"\n"
	"Full documentation: man 8 pbus-scpi\n";

struct daemon;

struct conn {
	struct daemon *daemon;
	int fd;
	bool used, discarding, want_out;
	char peer[64];
	char *in;
	size_t in_length;
	struct scpi_response out;
	size_t out_sent;
	struct timespec last;
	struct scpi_session session;
};

struct daemon {
	struct scpi_server server;
	int epoll, listen_fd, signal_fd;
	struct conn *conns;
	size_t max_clients, clients;
	size_t max_line;
	unsigned idle_timeout;
};

/* epoll data: small numbers are the fixed sources, others conn index + 16 */
enum { SOURCE_LISTEN = 1, SOURCE_SIGNAL = 2, SOURCE_PBUSD = 3, SOURCE_METHODS = 4, SOURCE_CONN = 16 };
/* HiSLIP's sources (hislip.c) are numbered from here up */
#define SOURCE_HISLIP (UINT64_C(1) << 32)

/* A --listen or --hislip (options_listen()) as a socket address; the
 * address must be numeric. */
static int parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *len)
{
	char host[256], service[8];
	unsigned port;
	if (options_listen(text, host, sizeof(host), &port) < 0)
		return -EINVAL;
	snprintf(service, sizeof(service), "%u", port);
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai;
	if (getaddrinfo(host, service, &hints, &ai) != 0)
		return -EINVAL;
	memcpy(addr, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int read_file(const char *path, char **ret, size_t *ret_length)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len == cap) {
			if (cap > (64u << 20)) {
				free(buf);
				fclose(f);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*ret = buf;
	*ret_length = len;
	return 0;
}

static void conn_close(struct daemon *d, struct conn *c, const char *why)
{
	log_msg(LOG_INFO, "client %s: closed (%s)", c->peer, why);
	epoll_ctl(d->epoll, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	scpi_session_fini(&c->session, &d->server);
	free(c->in);
	free(c->out.data);
	memset(c, 0, sizeof(*c));
	d->clients--;
}

static void conn_update_events(struct daemon *d, struct conn *c)
{
	size_t pending = c->out.length - c->out_sent;
	uint32_t events = EPOLLRDHUP;
	if (pending)
		events |= EPOLLOUT;
	if (pending < SCPI_RESPONSE_MAX && !scpi_session_waiting(&c->session))
		events |= EPOLLIN;
	struct epoll_event ev = {.events = events, .data.u64 = SOURCE_CONN + (uint64_t)(c - d->conns)};
	epoll_ctl(d->epoll, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what is pending. false when the client is gone. */
static bool conn_flush(struct daemon *d, struct conn *c)
{
	while (c->out_sent < c->out.length) {
		ssize_t n = send(c->fd, c->out.data + c->out_sent, c->out.length - c->out_sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_close(d, c, strerror(errno));
			return false;
		}
		c->out_sent += (size_t)n;
	}
	if (c->out_sent == c->out.length)
		c->out.length = c->out_sent = 0;
	conn_update_events(d, c);
	return true;
}

/* Run every complete message in the input buffer. */
static void conn_process(struct daemon *d, struct conn *c)
{
	size_t off = 0;
	while (off < c->in_length) {
		if (c->discarding) {
			char *nl = memchr(c->in + off, '\n', c->in_length - off);
			if (!nl) {
				off = c->in_length;
				break;
			}
			off = (size_t)(nl - c->in) + 1;
			c->discarding = false;
			continue;
		}
		ssize_t n = pbus_scpi_message_length(c->in + off, c->in_length - off, d->max_line);
		if (n == -EMSGSIZE) {
			scpi_session_error(&c->session, -363, "a message longer than %zu bytes was discarded",
					   d->max_line);
			c->discarding = true;
			continue;
		}
		if (n <= 0)
			break;
		enum scpi_exec_result r = scpi_execute(&d->server, &c->session, c->in + off, (size_t)n, &c->out);
		off += (size_t)n;
		if (r == SCPI_EXEC_WAITING)
			break; /* the rest waits in the buffer until the session resumes */
		/* a client that does not read its responses is not read either */
		if (c->out.length - c->out_sent >= SCPI_RESPONSE_MAX)
			break;
	}
	memmove(c->in, c->in + off, c->in_length - off);
	c->in_length -= off;
}

static void conn_readable(struct daemon *d, struct conn *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	while (!scpi_session_waiting(&c->session)) {
		size_t room = d->max_line - c->in_length;
		if (room == 0) {
			/* the buffer holds max_line bytes without a whole message */
			conn_process(d, c);
			if (c->in_length == d->max_line)
				break; /* blocked on unread responses */
			continue;
		}
		ssize_t n = recv(c->fd, c->in + c->in_length, room, MSG_DONTWAIT);
		if (n == 0) {
			conn_close(d, c, c->in_length ? "disconnected in the middle of a message" : "disconnected");
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_close(d, c, strerror(errno));
			return;
		}
		c->in_length += (size_t)n;
		conn_process(d, c);
		if (c->out.length - c->out_sent >= SCPI_RESPONSE_MAX)
			break;
	}
	conn_flush(d, c);
}

/* A waiting message can go on (called from the method loop's dispatch):
 * finish it, run what else is buffered, send. */
static void conn_resume(struct scpi_session *session, void *userdata)
{
	struct conn *c = userdata;
	struct daemon *d = c->daemon;
	if (scpi_resume(&d->server, session, &c->out) == SCPI_EXEC_DONE)
		conn_process(d, c);
	conn_flush(d, c);
}

static void accept_clients(struct daemon *d)
{
	for (;;) {
		char peer[64];
		int fd = scpi_accept(d->listen_fd, "SCPI", peer, sizeof(peer));
		if (fd < 0)
			return;
		if (d->clients == d->max_clients) {
			log_msg(LOG_WARNING, "client %s refused: %zu clients already (--max-clients)", peer,
				d->clients);
			close(fd);
			continue;
		}
		struct conn *c = NULL;
		for (size_t i = 0; i < d->max_clients; i++)
			if (!d->conns[i].used) {
				c = &d->conns[i];
				break;
			}
		c->fd = fd;
		c->used = true;
		snprintf(c->peer, sizeof(c->peer), "%s", peer);
		c->in = malloc(d->max_line);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
					 .data.u64 = SOURCE_CONN + (uint64_t)(c - d->conns)};
		if (!c->in || scpi_session_init(&c->session, &d->server) < 0 ||
		    epoll_ctl(d->epoll, EPOLL_CTL_ADD, fd, &ev) < 0) {
			log_msg(LOG_WARNING, "client %s: refused: out of memory", c->peer);
			scpi_session_fini(&c->session, &d->server);
			free(c->in);
			close(fd);
			memset(c, 0, sizeof(*c));
			continue;
		}
		c->daemon = d;
		c->session.resume = conn_resume;
		c->session.resume_userdata = c;
		clock_gettime(CLOCK_MONOTONIC, &c->last);
		d->clients++;
		log_msg(LOG_INFO, "client %s: connected", c->peer);
	}
}

static void close_idle(struct daemon *d)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < d->max_clients; i++) {
		struct conn *c = &d->conns[i];
		if (c->used && now.tv_sec - c->last.tv_sec >= (time_t)d->idle_timeout)
			conn_close(d, c, "idle");
	}
}

int main(int argc, char **argv)
{
	const char *instance = NULL, *tree_path = NULL, *listen_text = "127.0.0.1:5025",
		   *socket_dir = NULL, *hislip_text = "127.0.0.1:4880";
	unsigned long max_clients = 16, max_line = 65536, idle = 0, notify_fd = ULONG_MAX,
		      status_interval = 50, call_timeout = 10000;
	static const struct option longopts[] = {
		{"instance", required_argument, NULL, 'i'},
		{"tree", required_argument, NULL, 't'},
		{"listen", required_argument, NULL, 'L'},
		{"hislip", required_argument, NULL, 'H'},
		{"socket-dir", required_argument, NULL, 's'},
		{"max-clients", required_argument, NULL, 'c'},
		{"max-line", required_argument, NULL, 'm'},
		{"idle-timeout", required_argument, NULL, 'T'},
		{"notify-fd", required_argument, NULL, 'N'},
		{"status-interval", required_argument, NULL, 'S'},
		{"call-timeout", required_argument, NULL, 'C'},
		OPTIONS_COMMON_LONG,
		{0},
	};
	log_set_program("pbus-scpi");
	int opt;
	while ((opt = getopt_long(argc, argv, "i:t:L:H:s:c:m:T:" OPTIONS_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': instance = optarg; break;
		case 't': tree_path = optarg; break;
		case 'L': listen_text = optarg; break;
		case 'H': hislip_text = optarg; break;
		case 's': socket_dir = optarg; break;
		case 'c':
			if (options_count("max-clients", optarg, 1, 4096, &max_clients) < 0)
				return 2;
			break;
		case 'm':
			if (options_count("max-line", optarg, 64, 16u << 20, &max_line) < 0)
				return 2;
			break;
		case 'T':
			if (options_count("idle-timeout", optarg, 0, 86400 * 365, &idle) < 0)
				return 2;
			break;
		case 'S':
			if (options_count("status-interval", optarg, 0, 60000, &status_interval) < 0)
				return 2;
			break;
		case 'C':
			if (options_count("call-timeout", optarg, 1, 3600000, &call_timeout) < 0)
				return 2;
			break;
		case 'N':
			if (options_count("notify-fd", optarg, 0, INT_MAX, &notify_fd) < 0)
				return 2;
			break;
		default: {
			int r = options_common(opt, optarg, usage);
			if (r != OPTIONS_CONTINUE)
				return r;
			break;
		}
		}
	}
	if (!instance || optind != argc) {
		fprintf(stderr, "pbus-scpi: %s\n", instance ? "unexpected argument" : "--instance is required");
		fputs(usage, stderr);
		return 2;
	}
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (parse_listen(listen_text, &addr, &addr_len) < 0) {
		fprintf(stderr, "pbus-scpi: --listen '%s': use ADDRESS:PORT (127.0.0.1:5025, [::]:5025)\n",
			listen_text);
		return 2;
	}
	struct sockaddr_storage hislip_addr;
	socklen_t hislip_addr_len = 0;
	if (strcmp(hislip_text, "off") != 0 && parse_listen(hislip_text, &hislip_addr, &hislip_addr_len) < 0) {
		fprintf(stderr, "pbus-scpi: --hislip '%s': use ADDRESS:PORT (127.0.0.1:4880, [::]:4880) or off\n",
			hislip_text);
		return 2;
	}
	char default_tree[PATH_MAX];
	if (!tree_path) {
		snprintf(default_tree, sizeof(default_tree), "/etc/parambus/%s.scpi", instance);
		tree_path = default_tree;
	}

	/* the tree, with pbus-scpi's own commands */
	char *text = NULL, *full, error[256] = "";
	size_t length = 0, full_length;
	int rc = read_file(tree_path, &text, &length);
	if (rc < 0) {
		log_msg(LOG_ERROR, "read the command tree %s: %s", tree_path, strerror(-rc));
		return 1;
	}
	full = scpi_tree_text_with_builtins(text, length, &full_length);
	free(text);
	struct pbus_scpi_tree *tree = NULL;
	rc = full ? pbus_scpi_tree_load(full, full_length, &tree, error, sizeof(error)) : -ENOMEM;
	free(full);
	if (rc < 0) {
		log_msg(LOG_ERROR, "load the command tree %s: %s", tree_path, error[0] ? error : strerror(-rc));
		return 1;
	}

	/* pbusd: the tree's schema hash must be the instance's */
	struct pbus_client_options options = {
		.socket_dir = socket_dir,
		.schema_hash = pbus_scpi_tree_schema_hash(tree),
		.name = "pbus-scpi",
	};
	struct pbus_client *client;
	rc = pbus_client_connect(instance, &options, &client);
	if (rc < 0) {
		if (rc == -ESTALE)
			log_msg(LOG_ERROR, "connect to instance %s: the tree %s is of schema %016llx, not the instance's",
				instance, tree_path, (unsigned long long)options.schema_hash);
		else
			log_msg(LOG_ERROR, "connect to instance %s: %s", instance, pbus_strerror(rc));
		pbus_scpi_tree_free(tree);
		return 1;
	}

	struct daemon d = {.max_clients = max_clients, .max_line = max_line, .idle_timeout = (unsigned)idle};
	rc = scpi_server_init(&d.server, client, tree, max_line);
	d.conns = calloc(max_clients, sizeof(*d.conns));
	if (rc < 0 || !d.conns) {
		log_msg(LOG_ERROR, "start: %s", strerror(rc < 0 ? -rc : ENOMEM));
		return 1;
	}
	if (scpi_table_init(&d.server, instance) < 0) {
		log_msg(LOG_ERROR, "start: %s", strerror(ENOMEM));
		return 1;
	}
	rc = scpi_status_init(&d.server, (unsigned)status_interval);
	if (rc == -ENOMEM) {
		log_msg(LOG_ERROR, "start: %s", strerror(ENOMEM));
		return 1;
	}
	if (rc < 0)
		log_msg(LOG_WARNING, "STATus registers: cannot follow their %zu parameters (%s): "
			"their condition bits stay 0", d.server.status_count, pbus_strerror(rc));
	rc = scpi_methods_init(&d.server, instance, socket_dir, (unsigned)call_timeout);
	if (rc == -ENOMEM) {
		log_msg(LOG_ERROR, "start: %s", strerror(ENOMEM));
		return 1;
	}

	unsigned port;
	d.listen_fd = scpi_listen((struct sockaddr *)&addr, addr_len, &port);
	if (d.listen_fd < 0) {
		log_msg(LOG_ERROR, "listen on %s: %s", listen_text, strerror(-d.listen_fd));
		return 1;
	}

	d.signal_fd = signals_stop_fd();
	d.epoll = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = SOURCE_LISTEN};
	epoll_ctl(d.epoll, EPOLL_CTL_ADD, d.listen_fd, &ev);
	ev.data.u64 = SOURCE_SIGNAL;
	epoll_ctl(d.epoll, EPOLL_CTL_ADD, d.signal_fd, &ev);
	ev.data.u64 = SOURCE_PBUSD;
	epoll_ctl(d.epoll, EPOLL_CTL_ADD, pbus_client_fd(client), &ev);
	if (scpi_methods_fd(&d.server) >= 0) {
		ev.data.u64 = SOURCE_METHODS;
		epoll_ctl(d.epoll, EPOLL_CTL_ADD, scpi_methods_fd(&d.server), &ev);
	}

	struct hislip_server *hislip = NULL;
	if (hislip_addr_len) {
		struct hislip_options ho = {.max_sessions = max_clients, .max_message = max_line,
					    .idle_timeout = (unsigned)idle};
		rc = hislip_server_new(&d.server, d.epoll, SOURCE_HISLIP, (struct sockaddr *)&hislip_addr,
				       hislip_addr_len, &ho, &hislip);
		if (rc < 0) {
			log_msg(LOG_ERROR, "HiSLIP on %s: %s", hislip_text, strerror(-rc));
			return 1;
		}
		log_msg(LOG_INFO, "HiSLIP on %s (port %u)", hislip_text, hislip_server_port(hislip));
	}

	log_msg(LOG_INFO, "instance %s, tree %s: listening on %s (port %u)", instance, tree_path,
		listen_text, port);
	if (notify_fd != ULONG_MAX) {
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "PORT=%u\n", port);
		if (hislip)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n, "HISLIP_PORT=%u\n", hislip_server_port(hislip));
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "READY=1\n");
		if (write((int)notify_fd, msg, (size_t)n) != n)
			log_msg(LOG_WARNING, "write to --notify-fd %lu: %s", notify_fd, strerror(errno));
		close((int)notify_fd);
	}

	bool running = true;
	while (running) {
		struct epoll_event events[64];
		int timeout = d.idle_timeout ? 1000 : (pbus_client_connected(client) ? -1 : 1000);
		int n = epoll_wait(d.epoll, events, 64, timeout);
		if (n < 0 && errno != EINTR) {
			log_msg(LOG_ERROR, "epoll_wait: %s", strerror(errno));
			break;
		}
		/* pbusd's connection first: a lost pbusd is noticed before the
		 * queries that came with it, which must then not read its table
		 * (table.c) */
		for (int i = 0; i < n; i++)
			if (events[i].data.u64 == SOURCE_PBUSD) {
				int r = pbus_client_dispatch(client);
				if (r < 0)
					log_msg(LOG_WARNING, "pbusd connection: %s", pbus_strerror(r));
			}
		for (int i = 0; i < n; i++) {
			uint64_t src = events[i].data.u64;
			if (src == SOURCE_PBUSD) {
				continue; /* above */
			} else if (src == SOURCE_LISTEN) {
				accept_clients(&d);
			} else if (src == SOURCE_SIGNAL) {
				struct signalfd_siginfo si;
				if (read(d.signal_fd, &si, sizeof(si)) > 0)
					log_msg(LOG_INFO, "signal %u: stopping", si.ssi_signo);
				running = false;
			} else if (src >= SOURCE_HISLIP) {
				hislip_server_dispatch(hislip, src, events[i].events);
			} else if (src == SOURCE_METHODS) {
				scpi_methods_dispatch(&d.server);
			} else {
				struct conn *c = &d.conns[src - SOURCE_CONN];
				if (!c->used)
					continue;
				if (events[i].events & (EPOLLERR | EPOLLHUP)) {
					conn_close(&d, c, "connection error");
					continue;
				}
				if (scpi_session_waiting(&c->session) && (events[i].events & EPOLLRDHUP)) {
					/* not read while it waits: a hang-up ends it (the
					 * calls in flight are orphaned, their replies dropped) */
					conn_close(&d, c, "disconnected while waiting for a method");
					continue;
				}
				if (events[i].events & (EPOLLIN | EPOLLRDHUP))
					conn_readable(&d, c);
				else if (events[i].events & EPOLLOUT)
					conn_flush(&d, c);
			}
		}
		if (n <= 0 && !pbus_client_connected(client))
			pbus_client_dispatch(client);
		if (d.idle_timeout) {
			close_idle(&d);
			hislip_server_close_idle(hislip);
		}
	}
	hislip_server_free(hislip);
	for (size_t i = 0; i < d.max_clients; i++)
		if (d.conns[i].used)
			conn_close(&d, &d.conns[i], "shutdown");
	free(d.conns);
	scpi_methods_fini(&d.server);
	close(d.epoll);
	close(d.signal_fd);
	close(d.listen_fd);
	scpi_status_fini(&d.server);
	log_msg(LOG_INFO, "values read: %llu from the table (opened %llu times), %llu through pbusd",
		(unsigned long long)d.server.table_reads, (unsigned long long)d.server.table_opens,
		(unsigned long long)d.server.socket_reads);
	scpi_table_fini(&d.server);
	scpi_server_fini(&d.server);
	pbus_client_close(client);
	pbus_scpi_tree_free(tree);
	return 0;
}
