/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbusd, the owner of one instrument instance. It loads the compiled
 * schema, creates the instance's segment with the defaults, restores the
 * persistent parameters, publishes the segment, saves persistent parameters
 * whenever they change, and on SIGTERM/SIGINT saves, marks the segment
 * closed and removes it. It serves the parameters to clients over a
 * Unix-domain socket (server.c, docs/socket-protocol.md), and when the
 * schema has hardware bindings it runs pbus-hwd beside it (hwd-supervisor.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/options.h"
#include "pbusd.h"

static const char usage[] =
	"Usage: pbusd --schema FILE.pbs --instance NAME [OPTIONS]\n"
	"\n"
	"Own one parambus instance: create its shared-memory table from a compiled\n"
	"schema (made by pbus-gen), restore its persistent parameters, save them\n"
	"whenever they change, serve the parameters to clients on the Unix-domain\n"
	"socket NAME.sock, and remove the table on SIGTERM or SIGINT.\n"
	"\n"
	"Options:\n"
	"  -s, --schema FILE      compiled schema (.pbs) to serve (required)\n"
	"  -i, --instance NAME    instance name: letters, digits, '_', '-', '.' (required)\n"
	"  -d, --state-dir DIR    where NAME.state is kept (default: $PBUS_STATE_DIR,\n"
	"                         else /var/lib/parambus for root, else\n"
	"                         $XDG_STATE_HOME/parambus or ~/.local/state/parambus)\n"
	"  -m, --mode MODE        octal permissions of the table (default 0644:\n"
	"                         everybody reads, only pbusd's user writes; with\n"
	"                         --group, 0664: that group writes too; never\n"
	"                         writable by others)\n"
	"  -g, --group GROUP      group owning the table, whose members may map it\n"
	"                         for writing (unless --mode says otherwise)\n"
	"      --save-delay MS    wait MS after a change before saving, so that a\n"
	"                         burst of changes makes one save (default 20)\n"
	"      --notify-fd FD     write \"READY=1\\n\" to FD once the table is\n"
	"                         published, then close FD\n"
	"      --socket-dir DIR   where NAME.sock is made (default: $PBUS_SOCKET_DIR,\n"
	"                         else /run/parambus for root, else\n"
	"                         $XDG_RUNTIME_DIR/parambus or /tmp/parambus-UID);\n"
	"                         it must be pbusd's user's or root's, and writable\n"
	"                         by its owner only, or pbusd refuses to start\n"
	"      --no-socket        serve no socket (only the shared-memory table)\n"
	"      --max-clients N    socket clients at once (default 256)\n"
	"      --max-clients-per-user N  connections of one unprivileged user at once\n"
	"                         (default: a quarter of --max-clients, at least 1);\n"
	"                         root and pbusd's user are not limited by it\n"
	"      --reserved-clients N  of --max-clients, the last N places are kept\n"
	"                         for root and pbusd's user (default 8; less than\n"
	"                         --max-clients)\n"
	"      --max-frame BYTES  largest message (default 1048576; 4096..67108864)\n"
	"      --max-subscriptions N  per client (default 64); also the service\n"
	"                         watches per client\n"
	"      --max-services N   services registered with this pbusd in all\n"
	"                         (default 1024; at most 64 per client)\n"
	"      --frame-timeout MS a client that has not sent its HELLO MS after\n"
	"                         connecting, or the rest of a frame MS after its\n"
	"                         first byte, gets ERROR and is closed (default 10000)\n"
	"      --no-hardware      do not start pbus-hwd for the schema's hardware\n"
	"                         bindings (they start by default when it has any)\n"
	"      --hwd PATH         the pbus-hwd to run (default: the one next to\n"
	"                         pbusd, else pbus-hwd from PATH)\n"
	"      --apply-timeout MS a SET sent with the APPLIED flag (pbus set --applied,\n"
	"                         pbus-scpi) is answered once pbus-hwd has applied its\n"
	"                         values to their output bindings, or ETIMEDOUT after\n"
	"                         MS (default 1000; 1..600000)\n"
	"  -l, --log-level LEVEL  error, warning, info (default) or debug\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n"
	"\n"
	"Examples:\n"
	"  pbusd -s psu.pbs -i psu1          serve psu1 (schema made by pbus-gen)\n"
	"  pbusd -s psu.pbs -i psu1 --group instrument --log-level debug\n"
	"                                    members of 'instrument' may write\n"
	"  systemctl start pbusd@psu1        the same as a service (docs/service.md)\n"
	"\n"
	"Exit status: 0 after a clean shutdown, 1 on an error (bad schema, instance\n"
	"already served, ...), 2 on a usage error.\n"
	"\n"
	"Full documentation: man 8 pbusd\n";

/* A schema of 65535 parameters with long descriptions stays well below. */
#define SCHEMA_FILE_MAX (64u << 20)

struct options {
	const char *schema, *instance, *state_dir, *group, *hwd_path;
	bool no_hardware, no_socket;
	struct server_options server;
	unsigned mode;
	unsigned save_delay_ms;
	int notify_fd;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "pbusd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'pbusd --help'.\n");
	return 2;
}

static int parse_unsigned(const char *text, int base, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, base);
	if (!*text || *end || errno || v > max || text[0] == '-')
		return -1;
	*ret = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_SAVE_DELAY = 256, OPT_NOTIFY_FD, OPT_NO_HARDWARE, OPT_HWD, OPT_SOCKET_DIR,
	       OPT_NO_SOCKET, OPT_MAX_CLIENTS, OPT_MAX_FRAME, OPT_MAX_SUBSCRIPTIONS, OPT_FRAME_TIMEOUT,
	       OPT_MAX_SERVICES, OPT_APPLY_TIMEOUT,
	       OPT_MAX_CLIENTS_PER_USER, OPT_RESERVED_CLIENTS };
	static const struct option longopts[] = {
		{"schema", required_argument, NULL, 's'},
		{"instance", required_argument, NULL, 'i'},
		{"state-dir", required_argument, NULL, 'd'},
		{"mode", required_argument, NULL, 'm'},
		{"group", required_argument, NULL, 'g'},
		{"save-delay", required_argument, NULL, OPT_SAVE_DELAY},
		{"notify-fd", required_argument, NULL, OPT_NOTIFY_FD},
		{"no-hardware", no_argument, NULL, OPT_NO_HARDWARE},
		{"hwd", required_argument, NULL, OPT_HWD},
		{"apply-timeout", required_argument, NULL, OPT_APPLY_TIMEOUT},
		{"socket-dir", required_argument, NULL, OPT_SOCKET_DIR},
		{"no-socket", no_argument, NULL, OPT_NO_SOCKET},
		{"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
		{"max-clients-per-user", required_argument, NULL, OPT_MAX_CLIENTS_PER_USER},
		{"reserved-clients", required_argument, NULL, OPT_RESERVED_CLIENTS},
		{"max-frame", required_argument, NULL, OPT_MAX_FRAME},
		{"max-subscriptions", required_argument, NULL, OPT_MAX_SUBSCRIPTIONS},
		{"frame-timeout", required_argument, NULL, OPT_FRAME_TIMEOUT},
		{"max-services", required_argument, NULL, OPT_MAX_SERVICES},
		OPTIONS_COMMON_LONG,
		{NULL, 0, NULL, 0},
	};
	unsigned long v;
	int c;

	o->notify_fd = -1;
	o->save_delay_ms = 20;
	o->server.hwd_report_fd = -1;
	while ((c = getopt_long(argc, argv, "s:i:d:m:g:" OPTIONS_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->schema = optarg; break;
		case 'i': o->instance = optarg; break;
		case 'd': o->state_dir = optarg; break;
		case 'g': o->group = optarg; break;
		case 'm':
			if (parse_unsigned(optarg, 8, 0777, &v) < 0)
				return usage_error("--mode '%s' is not octal permissions (e.g. 0664)", optarg);
			if (v & 02)
				return usage_error("--mode '%s' lets everybody write the table, which no "
						   "client would then trust (docs/security.md)", optarg);
			o->mode = (unsigned)v;
			break;
		case OPT_SAVE_DELAY:
			if (parse_unsigned(optarg, 10, 60000, &v) < 0)
				return usage_error("--save-delay '%s' is not 0..60000 ms", optarg);
			o->save_delay_ms = (unsigned)v;
			break;
		case OPT_NOTIFY_FD:
			if (parse_unsigned(optarg, 10, INT_MAX, &v) < 0)
				return usage_error("--notify-fd '%s' is not a file descriptor", optarg);
			o->notify_fd = (int)v;
			/* Ours alone: pbus-hwd, started before we are ready, must
			 * not hold it open (whoever waits on it sees it close right
			 * after READY). A descriptor that is not open fails the
			 * write later, with a warning, as before. */
			fcntl(o->notify_fd, F_SETFD, FD_CLOEXEC);
			break;
		case OPT_NO_HARDWARE: o->no_hardware = true; break;
		case OPT_HWD: o->hwd_path = optarg; break;
		case OPT_APPLY_TIMEOUT:
			if (parse_unsigned(optarg, 10, 600000, &v) < 0 || v == 0)
				return usage_error("--apply-timeout '%s' is not 1..600000 ms", optarg);
			o->server.apply_timeout_ms = (uint32_t)v;
			break;
		case OPT_SOCKET_DIR: o->server.socket_dir = optarg; break;
		case OPT_NO_SOCKET: o->no_socket = true; break;
		case OPT_MAX_CLIENTS:
			if (parse_unsigned(optarg, 10, 100000, &v) < 0 || v == 0)
				return usage_error("--max-clients '%s' is not 1..100000", optarg);
			o->server.max_clients = (uint32_t)v;
			break;
		case OPT_MAX_CLIENTS_PER_USER:
			if (parse_unsigned(optarg, 10, 100000, &v) < 0 || v == 0)
				return usage_error("--max-clients-per-user '%s' is not 1..100000", optarg);
			o->server.max_clients_per_user = (uint32_t)v;
			break;
		case OPT_RESERVED_CLIENTS:
			if (parse_unsigned(optarg, 10, 99999, &v) < 0)
				return usage_error("--reserved-clients '%s' is not 0..99999", optarg);
			o->server.reserved_clients = (uint32_t)v;
			o->server.reserved_clients_given = true;
			break;
		case OPT_MAX_FRAME:
			if (parse_unsigned(optarg, 10, 64ul << 20, &v) < 0 || v < 4096)
				return usage_error("--max-frame '%s' is not 4096..67108864", optarg);
			o->server.max_frame = (uint32_t)v;
			break;
		case OPT_MAX_SUBSCRIPTIONS:
			if (parse_unsigned(optarg, 10, 100000, &v) < 0 || v == 0)
				return usage_error("--max-subscriptions '%s' is not 1..100000", optarg);
			o->server.max_subscriptions = (uint32_t)v;
			break;
		case OPT_MAX_SERVICES:
			if (parse_unsigned(optarg, 10, 100000, &v) < 0 || v == 0)
				return usage_error("--max-services '%s' is not 1..100000", optarg);
			o->server.max_services = (uint32_t)v;
			break;
		case OPT_FRAME_TIMEOUT:
			if (parse_unsigned(optarg, 10, 3600000, &v) < 0 || v < 100)
				return usage_error("--frame-timeout '%s' is not 100..3600000 ms", optarg);
			o->server.frame_timeout_ms = (uint32_t)v;
			break;
		default: {
			int r = options_common(c, optarg, usage);
			if (r == 0)
				exit(0);
			if (r != OPTIONS_CONTINUE)
				return r;
			break;
		}
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->schema)
		return usage_error("%s", "--schema FILE is required");
	if (!o->instance)
		return usage_error("%s", "--instance NAME is required");
	if (o->server.reserved_clients_given &&
	    o->server.reserved_clients >= (o->server.max_clients ? o->server.max_clients : 256)) {
		fprintf(stderr, "pbusd: --reserved-clients %u is not less than --max-clients %u\n"
			"Try 'pbusd --help'.\n", o->server.reserved_clients,
			o->server.max_clients ? o->server.max_clients : 256);
		return 2;
	}
	return 0;
}

/* The default state directory, as --help describes it. */
static char *default_state_dir(void)
{
	const char *env = getenv("PBUS_STATE_DIR"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char *dir = NULL;

	if (env && *env)
		return strdup(env);
	if (geteuid() == 0)
		return strdup("/var/lib/parambus");
	if (xdg && *xdg) {
		if (asprintf(&dir, "%s/parambus", xdg) < 0)
			return NULL;
	} else if (asprintf(&dir, "%s/.local/state/parambus", home ? home : "/tmp") < 0) {
		return NULL;
	}
	return dir;
}

/* Under systemd (Type=notify): "READY=1" to $NOTIFY_SOCKET, a datagram
 * socket ("@name" for the abstract namespace). */
static void notify_systemd(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t n;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || (n = strlen(path)) >= sizeof(addr.sun_path))
		return;
	memcpy(addr.sun_path, path, n);
	if (path[0] == '@')
		addr.sun_path[0] = 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&addr,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		log_msg(LOG_WARNING, "NOTIFY_SOCKET %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void notify_ready(int fd)
{
	static const char msg[] = "READY=1\n";

	notify_systemd();
	if (fd < 0)
		return;
	if (write(fd, msg, sizeof(msg) - 1) < 0)
		log_msg(LOG_WARNING, "--notify-fd %d: %s", fd, strerror(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct pbus_instance_options io = {.group = (gid_t)-1};
	struct pbus_schema *schema = NULL;
	struct pbus_table *owner = NULL;
	struct persist *persist = NULL;
	struct hwd_supervisor *hwd = NULL;
	struct server *server = NULL;
	char error[512], *state_dir = NULL, *schema_text = NULL;
	size_t schema_length = 0;
	sigset_t signals;
	int r, sig, status = 1;

	r = parse_options(argc, argv, &o);
	if (r)
		return r;
	/* A closed stderr (a log pipe that went away) must not kill the owner
	 * before it has saved and removed the instance. */
	signal(SIGPIPE, SIG_IGN);
	if (o.group) {
		struct group *g = getgrnam(o.group);

		if (!g) {
			fprintf(stderr, "pbusd: --group '%s': no such group\n", o.group);
			return 2;
		}
		io.group = g->gr_gid;
	}
	/* Naming a group is asking it to write, unless --mode says otherwise. */
	io.mode = o.mode ? o.mode : o.group ? 0664 : 0644;
	state_dir = o.state_dir ? strdup(o.state_dir) : default_state_dir();
	if (!state_dir) {
		log_msg(LOG_ERROR, "out of memory");
		return 1;
	}

	/* Signals are taken by sigwaitinfo() in this thread; block them before
	 * any thread exists so that every thread inherits the mask. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGHUP);
	sigaddset(&signals, SIGUSR1);
	sigaddset(&signals, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	sigdelset(&signals, SIGUSR1);

	/* The text is kept: the socket's clients get it (SCHEMA). */
	schema_text = read_file(o.schema, SCHEMA_FILE_MAX, &schema_length, &r);
	if (!schema_text) {
		log_msg(LOG_ERROR, "cannot read %s: %s", o.schema, strerror(-r));
		goto out;
	}
	error[0] = 0;
	r = pbus_schema_parse(schema_text, schema_length, o.schema, error, sizeof(error), &schema);
	if (r < 0) {
		log_msg(LOG_ERROR, "%s", error[0] ? error : pbus_strerror(r));
		goto out;
	}
	r = pbus_instance_create(o.instance, schema, &io, &owner);
	if (r == -EBUSY) {
		log_msg(LOG_ERROR, "instance '%s' is already served by another pbusd", o.instance);
		goto out;
	}
	if (r == -EINVAL) {
		log_msg(LOG_ERROR, "invalid instance name '%s' (letters, digits, '_', '-', '.'; at most 48)",
			o.instance);
		goto out;
	}
	if (r == -EEXIST) {
		log_msg(LOG_ERROR, "instance '%s': %s/pbus.%s.lock belongs to another user and only root "
			"can remove it (a local user may have made it to keep pbusd out: docs/security.md)",
			o.instance, "/dev/shm", o.instance);
		goto out;
	}
	if (r < 0) {
		log_msg(LOG_ERROR, "cannot create instance '%s': %s", o.instance, pbus_strerror(r));
		goto out;
	}
	r = persist_new(owner, state_dir, o.instance, o.save_delay_ms, &persist);
	if (r < 0 || (r = persist_restore(persist)) < 0)
		goto out;
	r = pbus_instance_publish(owner);
	if (r == -EPERM || r == -EACCES) {
		log_msg(LOG_ERROR, "cannot publish instance '%s': /dev/shm/pbus.%s belongs to another user "
			"and only root can replace it (docs/security.md)", o.instance, o.instance);
		goto out;
	}
	if (r < 0) {
		log_msg(LOG_ERROR, "cannot publish instance '%s': %s", o.instance, strerror(-r));
		goto out;
	}
	/* pbus-hwd is prepared before the server, which reads its reports
	 * (what the hardware applied: SETs with the APPLIED flag wait for
	 * them), and started after it. */
	if (hardware_bindings_present(schema) && !o.no_hardware) {
		r = hwd_supervisor_new(o.hwd_path, o.schema, o.instance, !o.no_socket, &hwd);
		if (r < 0) {
			log_msg(LOG_ERROR, "cannot start pbus-hwd: %s", strerror(-r));
		} else if (!o.no_socket) {
			o.server.hwd_report_fd = hwd_supervisor_take_report_fd(hwd);
			o.server.hardware = true;
		}
	}
	if (!o.no_socket) {
		/* It says why on failure. */
		r = server_start(owner, schema, schema_text, schema_length, o.instance, &o.server, &server);
		if (r < 0)
			goto out;
		persist_set_saved_fd(persist, server_saved_fd(server));
	}
	r = persist_start(persist);
	if (r < 0) {
		log_msg(LOG_ERROR, "cannot start the saver: %s", strerror(-r));
		goto out;
	}
	log_msg(LOG_INFO, "serving instance '%s' (%u parameters, schema %016llx) from %s",
		o.instance, pbus_table_param_count(owner),
		(unsigned long long)pbus_table_schema_hash(owner), o.schema);
	if (hardware_bindings_present(schema) && o.no_hardware)
		log_msg(LOG_INFO, "--no-hardware: not running the schema's hardware bindings");
	if (hwd)
		hwd_supervisor_start(hwd);
	notify_ready(o.notify_fd);

	for (;;) {
		int wait_ms = hwd_supervisor_timeout_ms(hwd);
		struct timespec timeout = {.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000L};

		sig = wait_ms < 0 ? sigwaitinfo(&signals, NULL) : sigtimedwait(&signals, NULL, &timeout);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig == SIGHUP)
			log_msg(LOG_INFO, "SIGHUP: nothing to reload yet");
		if (sig == SIGCHLD) {
			hwd_supervisor_child_exited(hwd);
			if (hwd_supervisor_given_up(hwd))
				server_hardware_gone(server);
		}
		hwd_supervisor_tick(hwd);
	}
	log_msg(LOG_INFO, "shutting down on %s", strsignal(sig));
	/* The bindings stop first: nothing writes the instance while it goes. */
	hwd_supervisor_stop(hwd);
	hwd = NULL;
	/* Then the clients: the final save below does not wait for them. */
	server_stop(server);
	server = NULL;
	persist_stop(persist);
	status = 0;
out:
	hwd_supervisor_stop(hwd);
	server_stop(server);
	persist_free(persist);
	pbus_instance_remove(owner);
	pbus_schema_free(schema);
	free(schema_text);
	free(state_dir);
	return status;
}
