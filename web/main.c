/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbus-web's options, its libwebsockets context and its loop
 * (docs/web.md). The lws thread (this one) serves every socket; panel.c
 * starts the pbusd thread and the SET thread, which wake it with
 * lws_cancel_service(). SIGTERM and SIGINT stop it cleanly: the threads
 * are joined first (they touch the context), then the context is
 * destroyed, which closes every socket.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <parambus/common.h>

#include "../common/log.h"
#include "../common/options.h"
#include "pbus-web.h"

#ifndef PBUS_WEB_ASSETS
#define PBUS_WEB_ASSETS "/usr/local/share/parambus/web"
#endif

#define MAX_ALLOW_ORIGINS 16

static const char usage[] =
	"Usage: pbus-web --instance NAME [OPTIONS]\n"
	"       pbus-web --hash-password < PASSWORD-FILE\n"
	"\n"
	"Serve a parambus instance's web front panel: the page's files from\n"
	"--assets, and one WebSocket per browser at /ws (subprotocol parambus.v1)\n"
	"that brings every parameter's schema and live values and takes the\n"
	"settings of logged-in users (docs/web.md). pbus-web is a client of pbusd\n"
	"like any other: pbusd checks every write again against pbus-web's user.\n"
	"\n"
	"Options:\n"
	"  -i, --instance NAME      the instance (required)\n"
	"  -L, --listen ADDR:PORT   where to listen (default 127.0.0.1:8080; use\n"
	"                           0.0.0.0:8080 for the network; port 0: any free one)\n"
	"  -a, --assets DIR         the page's files (default " PBUS_WEB_ASSETS ")\n"
	"  -s, --socket-dir DIR     pbusd's socket folder (default: the usual search)\n"
	"  -u, --users FILE         users who may log in: lines name:hash:group,...\n"
	"                           (hash from --hash-password); without it nobody\n"
	"                           can log in, so nobody can write\n"
	"  -r, --read-access MODE   open (default: anybody sees the values) or login\n"
	"      --session-ttl S      a login ends S seconds after its last use\n"
	"                           (default 3600)\n"
	"      --login-burst N      login attempts per source address (and failed ones\n"
	"                           per user name) at once (default 5) ...\n"
	"      --login-refill S     ... and one more every S seconds (default 10)\n"
	"  -c, --max-clients N      WebSockets at once (default 32)\n"
	"      --max-message BYTES  longest message from a browser (default 4096)\n"
	"      --allow-origin URL   a WebSocket may also come from a page of this\n"
	"                           origin (\"https://panel.example:443\"; repeatable)\n"
	"      --tls-cert FILE      serve HTTPS and WSS with this certificate (PEM) ...\n"
	"      --tls-key FILE       ... and its private key\n"
	"      --interval MS        at most one update of the values every MS ms\n"
	"                           (default 20)\n"
	"      --notify-fd FD       write \"PORT=N\\nREADY=1\\n\" to FD when listening,\n"
	"                           then close it\n"
	"      --hash-password      read a password from stdin, print its yescrypt\n"
	"                           hash for the users file, and exit\n"
	"  -l, --log-level LEVEL    error, warning, info (default) or debug\n"
	"  -h, --help               show this help\n"
	"  -V, --version            show the version\n"
	"\n"
	"Examples:\n"
	"  pbus-web -i psu\n"
	"      the panel of instance psu on http://127.0.0.1:8080/, read-only\n"
	"  printf '%s' \"$PW\" | pbus-web --hash-password\n"
	"      a password's hash for a line of the users file\n"
	"  pbus-web -i psu -L 0.0.0.0:443 -u /etc/parambus/web-users --tls-cert panel.pem --tls-key panel.key\n"
	"      HTTPS on the network; writes for the users of the file who log in\n"
	"\n"
	"Exit status: 0 after SIGTERM or SIGINT, 1 on an error at start (users\n"
	"file, certificate, address in use), 2 on a usage error.\n"
	"\n"
	"Full documentation: man 8 pbus-web\n";

static volatile sig_atomic_t stopping;
static struct lws_context *the_context;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
	if (the_context)
		lws_cancel_service(the_context);
}

static void lws_log(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	log_msg(level == LLL_ERR ? LOG_ERROR : level == LLL_WARN ? LOG_WARNING : LOG_DEBUG, "lws: %.*s", (int)n,
		line);
}

static int hash_password(void)
{
	char password[1024];
	if (!fgets(password, sizeof(password), stdin)) {
		fprintf(stderr, "pbus-web: --hash-password: no password on stdin\n");
		return 1;
	}
	password[strcspn(password, "\r\n")] = '\0';
	if (!password[0]) {
		fprintf(stderr, "pbus-web: --hash-password: the password is empty\n");
		return 1;
	}
	char hash[256];
	int r = web_hash_password(password, hash, sizeof(hash));
	explicit_bzero(password, sizeof(password));
	if (r < 0) {
		fprintf(stderr, "pbus-web: --hash-password: %s\n", strerror(-r));
		return 1;
	}
	printf("%s\n", hash);
	return 0;
}

int main(int argc, char **argv)
{
	const char *instance = NULL, *listen_text = "127.0.0.1:8080", *assets = PBUS_WEB_ASSETS,
		   *socket_dir = NULL, *users_path = NULL, *tls_cert = NULL, *tls_key = NULL;
	unsigned long max_clients = 32, max_message = 4096, ttl = 3600, interval = 20, notify_fd = ULONG_MAX,
		      burst = 5, refill = 10;
	bool read_login = false;
	char *origins[MAX_ALLOW_ORIGINS];
	size_t origin_count = 0;
	enum { OPT_TTL = 256, OPT_MAX_MESSAGE, OPT_ALLOW_ORIGIN, OPT_TLS_CERT, OPT_TLS_KEY, OPT_INTERVAL,
	       OPT_NOTIFY_FD, OPT_HASH, OPT_BURST, OPT_REFILL };
	static const struct option longopts[] = {
		{"instance", required_argument, NULL, 'i'},
		{"listen", required_argument, NULL, 'L'},
		{"assets", required_argument, NULL, 'a'},
		{"socket-dir", required_argument, NULL, 's'},
		{"users", required_argument, NULL, 'u'},
		{"read-access", required_argument, NULL, 'r'},
		{"session-ttl", required_argument, NULL, OPT_TTL},
		{"login-burst", required_argument, NULL, OPT_BURST},
		{"login-refill", required_argument, NULL, OPT_REFILL},
		{"max-clients", required_argument, NULL, 'c'},
		{"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
		{"allow-origin", required_argument, NULL, OPT_ALLOW_ORIGIN},
		{"tls-cert", required_argument, NULL, OPT_TLS_CERT},
		{"tls-key", required_argument, NULL, OPT_TLS_KEY},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"notify-fd", required_argument, NULL, OPT_NOTIFY_FD},
		{"hash-password", no_argument, NULL, OPT_HASH},
		OPTIONS_COMMON_LONG,
		{0},
	};
	log_set_program("pbus-web");
	int opt;
	while ((opt = getopt_long(argc, argv, "i:L:a:s:u:r:c:" OPTIONS_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': instance = optarg; break;
		case 'L': listen_text = optarg; break;
		case 'a': assets = optarg; break;
		case 's': socket_dir = optarg; break;
		case 'u': users_path = optarg; break;
		case 'r':
			if (strcmp(optarg, "open") != 0 && strcmp(optarg, "login") != 0) {
				fprintf(stderr, "pbus-web: --read-access '%s': use open or login\n", optarg);
				return 2;
			}
			read_login = strcmp(optarg, "login") == 0;
			break;
		case OPT_TTL:
			if (options_count("session-ttl", optarg, 1, 86400 * 30, &ttl) < 0)
				return 2;
			break;
		case OPT_BURST:
			if (options_count("login-burst", optarg, 1, 1000, &burst) < 0)
				return 2;
			break;
		case OPT_REFILL:
			if (options_count("login-refill", optarg, 1, 86400, &refill) < 0)
				return 2;
			break;
		case 'c':
			if (options_count("max-clients", optarg, 1, 1024, &max_clients) < 0)
				return 2;
			break;
		case OPT_MAX_MESSAGE:
			if (options_count("max-message", optarg, 256, 1 << 20, &max_message) < 0)
				return 2;
			break;
		case OPT_ALLOW_ORIGIN:
			if (origin_count == MAX_ALLOW_ORIGINS) {
				fprintf(stderr, "pbus-web: at most %d --allow-origin\n", MAX_ALLOW_ORIGINS);
				return 2;
			}
			origins[origin_count++] = optarg;
			break;
		case OPT_TLS_CERT: tls_cert = optarg; break;
		case OPT_TLS_KEY: tls_key = optarg; break;
		case OPT_INTERVAL:
			if (options_count("interval", optarg, 0, 60000, &interval) < 0)
				return 2;
			break;
		case OPT_NOTIFY_FD:
			if (options_count("notify-fd", optarg, 0, INT_MAX, &notify_fd) < 0)
				return 2;
			break;
		case OPT_HASH: return hash_password();
		default: {
			int r = options_common(opt, optarg, usage);
			if (r != OPTIONS_CONTINUE)
				return r;
			break;
		}
		}
	}
	if (!instance || optind != argc) {
		fprintf(stderr, "pbus-web: %s\n", instance ? "unexpected argument" : "--instance is required");
		fputs(usage, stderr);
		return 2;
	}
	if (strlen(instance) > 64) {
		fprintf(stderr, "pbus-web: --instance '%s': at most 64 bytes\n", instance);
		return 2;
	}
	if (!tls_cert != !tls_key) {
		fprintf(stderr, "pbus-web: --tls-cert and --tls-key go together\n");
		return 2;
	}
	char addr[128];
	unsigned port;
	if (options_listen(listen_text, addr, sizeof(addr), &port) < 0) {
		fprintf(stderr, "pbus-web: --listen '%s': use ADDRESS:PORT (127.0.0.1:8080, [::1]:8080)\n",
			listen_text);
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		const char *f = i ? tls_key : tls_cert;
		if (f && access(f, R_OK) < 0) {
			log_msg(LOG_ERROR, "%s %s: %s", i ? "--tls-key" : "--tls-cert", f, strerror(errno));
			return 1;
		}
	}

	static struct web_server s; /* large; lives for the whole run */
	char error[512];
	if (users_path) {
		int r = web_users_load(users_path, &s.users, error, sizeof(error));
		if (r < 0) {
			log_msg(LOG_ERROR, "users file: %s", error);
			return 1;
		}
		log_msg(LOG_INFO, "users file %s: %zu users", users_path, s.users.count);
	}
	if (!realpath(assets, s.assets_real)) {
		log_msg(LOG_WARNING, "--assets %s: %s: every file is 404 until it exists (restart then)", assets,
			strerror(errno));
		s.assets_real[0] = '\0';
	}
	s.read_login = read_login;
	s.allow_origins = origins;
	s.allow_origin_count = origin_count;
	s.max_clients = max_clients;
	s.max_message = max_message;
	s.session_ttl = (unsigned)ttl;
	s.tls = tls_cert != NULL;
	if (web_sessions_init(&s.sessions, 1024, (unsigned)ttl, (unsigned)burst, (unsigned)refill) < 0) {
		log_msg(LOG_ERROR, "start: %s", strerror(ENOMEM));
		return 1;
	}
	snprintf(s.panel.instance, sizeof(s.panel.instance), "%s", instance);
	s.panel.socket_dir = socket_dir;
	s.panel.interval_ms = (unsigned)interval;

	int lws_levels = LLL_ERR | LLL_WARN;
	if (log_get_level() >= LOG_DEBUG)
		lws_levels |= LLL_NOTICE | LLL_INFO;
	lws_set_log_level(lws_levels, lws_log);

	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = (int)port;
	info.iface = addr;
	info.protocols = web_protocols;
	info.user = &s;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE |
		       LWS_SERVER_OPTION_DISABLE_IPV6;
	if (strchr(addr, ':'))
		info.options &= ~(uint64_t)LWS_SERVER_OPTION_DISABLE_IPV6;
	info.timeout_secs = 10;
	info.max_http_header_data = 4096;
	info.max_http_header_pool = 64;
	info.vhost_name = "default";
	info.alpn = "http/1.1";
	if (tls_cert) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = tls_cert;
		info.ssl_private_key_filepath = tls_key;
	}
	struct lws_context *context = lws_create_context(&info);
	if (!context) {
		log_msg(LOG_ERROR, "listen on %s%s: libwebsockets could not start (address in use? see above)",
			listen_text, tls_cert ? " with TLS" : "");
		return 1;
	}
	struct lws_vhost *vhost = lws_get_vhost_by_name(context, "default");
	int bound = vhost ? lws_get_vhost_listen_port(vhost) : -1;
	if (bound <= 0) {
		log_msg(LOG_ERROR, "listen on %s: not listening", listen_text);
		lws_context_destroy(context);
		return 1;
	}
	s.panel.context = context;
	int r = web_panel_start(&s.panel);
	if (r < 0) {
		log_msg(LOG_ERROR, "start the threads: %s", strerror(-r));
		lws_context_destroy(context);
		return 1;
	}
	web_panel_wait_first(&s.panel, 3000);
	the_context = context;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	log_msg(LOG_INFO, "instance %s: serving %s://%s:%d/ (assets %s, reading %s, %zu users)", instance,
		tls_cert ? "https" : "http", addr, bound, s.assets_real[0] ? s.assets_real : "missing",
		read_login ? "after login" : "open", s.users.count);
	if (notify_fd != ULONG_MAX) {
		char msg[64];
		int n = snprintf(msg, sizeof(msg), "PORT=%d\nREADY=1\n", bound);
		if (write((int)notify_fd, msg, (size_t)n) != n)
			log_msg(LOG_WARNING, "write to --notify-fd %lu: %s", notify_fd, strerror(errno));
		close((int)notify_fd);
	}

	while (!stopping)
		if (lws_service(context, 0) < 0)
			break;
	log_msg(LOG_INFO, "stopping");
	web_panel_stop(&s.panel);
	the_context = NULL;
	lws_context_destroy(context);
	web_sessions_fini(&s.sessions);
	web_users_fini(&s.users);
	return 0;
}
