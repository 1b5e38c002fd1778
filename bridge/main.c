/* SPDX-License-Identifier: MIT */
/*
 * main.c: pbus-bridge, a parambus instance on an MQTT broker (docs/fleet.md).
 *
 * The main thread runs one poll loop over pbusd's client descriptor, the
 * broker's socket (libmosquitto without its own thread), an eventfd the
 * command thread signals, and a signalfd. It keeps the latest value of
 * each published parameter in a slot (one per fleet entry): a change from
 * pbusd overwrites its slot and marks it dirty; dirty slots are handed to
 * libmosquitto only while it is connected and has nothing left to write.
 * So while the broker is away or slow, memory stays bounded (one value per
 * parameter, latest wins), and after each connect the birth and every
 * current value go out first. Deadband and rate are pbusd's: one
 * subscription per distinct (deadband, rate) pair of the fleet file.
 *
 * Commands arrive through on_message() and go, in order, to the command
 * thread (command_main()), which applies them through its own pbus_client
 * with the journal of command.c, and hands the answered jobs back; the
 * main thread publishes the replies.
 *
 * In Sparkplug mode (--mode sparkplug, sparkplug.c) the same loop drives
 * struct bridge_spb instead of the stateless plain mode: the MQTT session
 * is clean (Sparkplug's rule), its number is bdSeq and survives restarts
 * (STATE_DIR/INSTANCE.sparkplug-session), the births are NBIRTH (once per
 * session, and again on a Rebirth request) and DBIRTH (whenever pbusd is
 * there; DDEATH when it goes), the values go out batched as one DDATA, and
 * with --primary-host nothing is born until that host's STATE says online.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <parambus/client.h>

#include "../common/describe.h"
#include "../common/log.h"
#include "../common/options.h"
#include "../common/signals.h"
#include "pbus-bridge.h"

#define PBUSD_BACKOFF_FIRST_MS 50
#define PBUSD_BACKOFF_MAX_MS 2000

static const char usage[] =
	"Usage: pbus-bridge --instance NAME [OPTION]...\n"
	"Publish a parambus instance's parameters to an MQTT broker and apply\n"
	"commands from it through pbusd (docs/fleet.md).\n"
	"\n"
	"  -i, --instance NAME       the instance (its pbusd must run)\n"
	"  -f, --fleet FILE          the fleet file `pbus-gen --fleet` wrote\n"
	"                            (default /etc/parambus/NAME.fleet)\n"
	"  -b, --broker HOST[:PORT]  the broker (default 127.0.0.1:1883; 8883 with TLS)\n"
	"  -p, --prefix TOPIC        the first topic levels (default \"parambus\")\n"
	"      --mode MODE           the topic mode: plain (default) or sparkplug\n"
	"                            (Sparkplug B 3.0; docs/fleet.md \"Sparkplug B\")\n"
	"      --group ID            sparkplug: the Sparkplug group (required)\n"
	"      --edge-node ID        sparkplug: the edge node (default HOSTNAME-NAME)\n"
	"      --device ID           sparkplug: the instance's device (default NAME)\n"
	"      --primary-host ID     sparkplug: be born only while this host application's\n"
	"                            STATE (spBv1.0/STATE/ID) says online\n"
	"      --client-id ID        MQTT client id (default pbus-bridge-NAME); the\n"
	"                            persistent session is the broker's under this id\n"
	"  -u, --username USER       log in to the broker as USER\n"
	"      --password-file FILE  ... with the password in FILE's first line\n"
	"      --tls-ca FILE         use TLS, trusting the CAs in FILE (PEM)\n"
	"      --tls-cert FILE       client certificate (PEM), with --tls-key FILE\n"
	"      --tls-key FILE\n"
	"      --keepalive S         MQTT keep-alive in seconds (default 30)\n"
	"      --session-expiry S    how long the broker keeps the session (and the\n"
	"                            commands for it) while the bridge is away\n"
	"                            (default 86400)\n"
	"      --reconnect-max MS    longest wait between broker reconnects (default 5000)\n"
	"  -s, --state-dir DIR       where the journal of applied commands (and, for\n"
	"                            sparkplug, the session number bdSeq) lives\n"
	"                            (default /var/lib/parambus)\n"
	"      --socket-dir DIR      pbusd's socket folder (default: the client's search)\n"
	"      --notify-fd FD        write \"READY=1\\n\" to FD once the first values are\n"
	"                            on the broker\n"
	"  -l, --log-level LEVEL     error, warning, info (default) or debug\n"
	"  -h, --help                this text\n"
	"  -V, --version             the version\n"
	"\n"
	"Examples:\n"
	"  pbus-gen --fleet /etc/parambus/psu.fleet examples/psu/psu.fdepl\n"
	"      the fleet file: what is published, with which deadbands and rates\n"
	"  pbus-bridge -i psu --broker mqtt.plant.example:8883 --tls-ca plant-ca.pem\n"
	"      publish psu over TLS (add --username and --password-file to log in)\n"
	"  pbus-bridge -i psu --broker localhost --mode sparkplug --group plant1\n"
	"      as a Sparkplug B edge node of group plant1\n"
	"\n"
	"Exit status: 0 after SIGTERM/SIGINT, 1 on an error at start (bad fleet\n"
	"file, bad option), 2 on a usage error. The broker and pbusd may come and\n"
	"go: the bridge reconnects to both by itself.\n"
	"\n"
	"Full documentation: man 8 pbus-bridge\n";

/* One published or commanded parameter: its fleet entry, its view for the
 * mode, and its latest value. */
struct slot {
	const struct bridge_fleet_param *fleet;
	struct bridge_param_view view;
	char type[32];
	char *unit;
	char *json;                   /* the latest value, or NULL (plain) */
	size_t metric;                /* sparkplug: its metric, or SIZE_MAX (not published) */
	bool has_value;               /* sparkplug: the encoder holds its value */
	uint32_t status;
	uint64_t timestamp_ns, seq;
	bool dirty;
};

struct bridge {
	/* options */
	const char *instance, *socket_dir, *host, *prefix, *client_id, *username;
	char *password;
	const char *tls_ca, *tls_cert, *tls_key;
	int port, keepalive;
	unsigned session_expiry, reconnect_max_ms;
	int notify_fd;
	const struct bridge_mode *mode;
	struct bridge_fleet fleet;
	struct slot *slots;           /* [fleet.count] */
	char *interface;
	/* main thread */
	struct mosquitto *mosq;
	bool mqtt_connected, mqtt_socket_open;
	uint64_t session;
	unsigned mqtt_backoff_ms;
	int64_t mqtt_retry_at;        /* CLOCK_MONOTONIC ms */
	int last_mqtt_error;
	char mqtt_detail[256];        /* libmosquitto's last error line (OpenSSL's reason), or "" */
	struct pbus_client *client;
	bool pbusd_connected, values_in;
	unsigned pbusd_backoff_ms;
	int64_t pbusd_retry_at;
	int last_pbusd_error;
	bool birth_due, ready_sent;
	char *reply_default;
	struct bridge_job *unsent, **unsent_tail; /* answered, waiting for the broker */
	/* shared with the command thread */
	pthread_mutex_t lock;
	pthread_cond_t jobs_cond;
	struct bridge_job *jobs, **jobs_tail;
	size_t job_count;
	struct bridge_job *done, **done_tail;
	bool stopping;
	int wake_fd;
	/* the command thread */
	pthread_t command_thread;
	struct bridge_journal journal;
	struct pbus_client *set_client;
	/* Sparkplug (main thread); spb is NULL in plain mode */
	struct bridge_spb *spb;
	const char *spb_host;         /* --primary-host, or NULL */
	char *session_path;           /* the session number's file */
	size_t *spb_slot;             /* [metric]: its slot */
	size_t *spb_which;            /* a DDATA's metrics */
	bool spb_host_online, spb_state_seen;
	uint64_t spb_state_timestamp;
	bool spb_node_born, spb_device_born;
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void bridge_job_free(struct bridge_job *job)
{
	if (!job)
		return;
	free(job->command.text);
	free(job->response_topic);
	free(job->correlation);
	free(job->value_json);
	free(job);
}

/* ------------------------------------------------------------ values as JSON */

/* The JSON text of a value of @index (malloc'd), or NULL. */
static char *value_json(const struct pbus_client *client, uint32_t index, unsigned type, const void *value,
			size_t length)
{
	char small[256], *text = small;
	int n = pbus_client_format(client, index, value, length, small, sizeof(small));
	if (n < 0)
		return NULL;
	if ((size_t)n >= sizeof(small)) {
		if (!(text = malloc((size_t)n + 1)) ||
		    pbus_client_format(client, index, value, length, text, (size_t)n + 1) < 0) {
			free(text);
			return NULL;
		}
	}
	/* numbers and booleans as pbusd's formatter wrote them (the shortest
	 * text that reads back), when that text is valid JSON; everything
	 * else (text, enumerators, hex bytes, nan and inf) as a JSON string */
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	bool numeric = element != PBUS_TYPE_STRING && element != PBUS_TYPE_BYTES && element != PBUS_TYPE_ENUM;
	char *out = NULL;
	if (numeric) {
		if (asprintf(&out, (type & PBUS_TYPE_ARRAY_FLAG) ? "[%s]" : "%s", text) < 0)
			out = NULL;
		json_t *check = out ? json_loads(out, JSON_DECODE_ANY, NULL) : NULL;
		bool ok = check && ((type & PBUS_TYPE_ARRAY_FLAG) ? json_is_array(check)
								 : json_is_number(check) || json_is_boolean(check));
		json_decref(check);
		if (!ok) {
			free(out);
			out = NULL;
		}
	}
	if (!out) {
		json_t *j = json_string(text);
		out = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		json_decref(j);
	}
	if (text != small)
		free(text);
	return out;
}

/* ------------------------------------------------------------ the broker side */

static void publish(struct bridge *b, struct bridge_message *m, const struct bridge_job *job)
{
	mosquitto_property *props = NULL;
	if (job && job->correlation)
		mosquitto_property_add_binary(&props, MQTT_PROP_CORRELATION_DATA, job->correlation,
					      job->correlation_length);
	int rc = mosquitto_publish_v5(b->mosq, NULL, m->topic, (int)m->length, m->payload, m->qos, m->retain, props);
	mosquitto_property_free_all(&props);
	if (rc != MOSQ_ERR_SUCCESS)
		log_msg(LOG_DEBUG, "publish %s: %s", m->topic, mosquitto_strerror(rc));
}

static struct bridge_identity identity(const struct bridge *b)
{
	return (struct bridge_identity){.prefix = b->prefix, .instance = b->instance,
					.interface = b->interface,
					.schema_hash = b->fleet.schema_hash, .session = b->session,
					.pbusd_connected = b->pbusd_connected};
}

static void publish_birth(struct bridge *b)
{
	struct bridge_param_view *views = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*views));
	if (!views)
		return;
	for (size_t i = 0; i < b->fleet.count; i++)
		views[i] = b->slots[i].view;
	struct bridge_identity id = identity(b);
	struct bridge_message m;
	if (b->mode->birth(&id, views, b->fleet.count, &m) == 0) {
		publish(b, &m, NULL);
		bridge_message_free(&m);
	}
	free(views);
	b->birth_due = false;
}

static void flush_values(struct bridge *b)
{
	struct bridge_identity id = identity(b);
	for (size_t i = 0; i < b->fleet.count; i++) {
		struct slot *s = &b->slots[i];
		if (!s->dirty || !s->json)
			continue;
		struct bridge_value v = {.json = s->json, .status = s->status, .timestamp_ns = s->timestamp_ns,
					 .seq = s->seq};
		struct bridge_message m;
		if (b->mode->value(&id, &s->view, &v, &m) == 0) {
			publish(b, &m, NULL);
			bridge_message_free(&m);
		}
		s->dirty = false;
	}
}

static void publish_replies(struct bridge *b)
{
	struct bridge_identity id = identity(b);
	while (b->unsent && b->mqtt_connected) {
		struct bridge_job *job = b->unsent;
		b->unsent = job->next;
		if (!b->unsent)
			b->unsent_tail = &b->unsent;
		struct bridge_message m;
		if (b->spb) {
			/* Sparkplug has no replies: a refused write's metric is
			 * published again, so that a host sees the value it kept */
			for (size_t i = 0; !job->ok && job->param && i < b->fleet.count; i++)
				if (b->slots[i].fleet == job->param)
					b->slots[i].dirty = b->slots[i].has_value;
		} else if (b->mode->reply(&id, job, &m) == 0) {
			publish(b, &m, job);
			bridge_message_free(&m);
		}
		log_msg(LOG_INFO, "command %s on %s: %s%s%s", job->command.id[0] ? job->command.id : "-", job->topic,
			job->ok ? "applied" : "refused: ", job->ok ? "" : job->error,
			job->duplicate ? " (a duplicate: not applied again)" : "");
		bridge_job_free(job);
	}
}

/* ------------------------------------------------------------ Sparkplug */

static uint64_t realtime_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* The bdSeq of MQTT session @session (the first is 1): 0 ... 255, 0 ... */
static uint64_t bdseq_of(uint64_t session)
{
	return (session - 1) & 0xff;
}

static void spb_publish(struct bridge *b, int r, const struct bridge_spb_message *m)
{
	if (r < 0) {
		log_msg(LOG_ERROR, "sparkplug: a message not encoded: %s", strerror(-r));
		return;
	}
	int rc = mosquitto_publish_v5(b->mosq, NULL, m->topic, (int)m->length, m->payload, m->qos, m->retain, NULL);
	if (rc != MOSQ_ERR_SUCCESS)
		log_msg(LOG_DEBUG, "publish %s: %s", m->topic, mosquitto_strerror(rc));
}

/* DBIRTH: every metric with its current value, so the values waiting are
 * in it. */
static void spb_device_birth(struct bridge *b)
{
	struct bridge_spb_message m;
	spb_publish(b, bridge_spb_dbirth(b->spb, realtime_ms(), &m), &m);
	b->spb_device_born = true;
	for (size_t i = 0; i < b->fleet.count; i++)
		b->slots[i].dirty = false;
}

/* NBIRTH (seq 0, the session's bdSeq), then DBIRTH if pbusd is there. */
static void spb_births(struct bridge *b)
{
	struct bridge_spb_message m;
	spb_publish(b, bridge_spb_nbirth(b->spb, bdseq_of(b->session), realtime_ms(), &m), &m);
	b->spb_node_born = true;
	b->spb_device_born = false;
	b->birth_due = false;
	if (b->pbusd_connected)
		spb_device_birth(b);
	log_msg(LOG_INFO, "sparkplug: NBIRTH%s (bdSeq %" PRIu64 ")", b->spb_device_born ? " and DBIRTH" : "",
		bdseq_of(b->session));
}

static void spb_device_death(struct bridge *b)
{
	if (b->spb_device_born && b->mqtt_connected) {
		struct bridge_spb_message m;
		spb_publish(b, bridge_spb_ddeath(b->spb, realtime_ms(), &m), &m);
		log_msg(LOG_INFO, "sparkplug: DDEATH (pbusd is away)");
	}
	b->spb_device_born = false;
}

/* The changed values, in one DDATA. */
static void spb_flush(struct bridge *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->fleet.count; i++) {
		struct slot *s = &b->slots[i];
		if (s->dirty && s->metric != SIZE_MAX && s->has_value)
			b->spb_which[n++] = s->metric;
		s->dirty = false;
	}
	if (n == 0)
		return;
	struct bridge_spb_message m;
	int r = bridge_spb_ddata(b->spb, b->spb_which, n, realtime_ms(), &m);
	if (r != -ENODATA)
		spb_publish(b, r, &m);
}

/* The primary host's STATE (Sparkplug 3.0: the latest timestamp wins). */
static void spb_state(struct bridge *b, const struct mosquitto_message *msg)
{
	bool online;
	uint64_t timestamp;
	char error[256];
	if (bridge_spb_decode_state(msg->payload ? msg->payload : "", (size_t)msg->payloadlen, &online, &timestamp,
				    error, sizeof(error)) < 0) {
		log_msg(LOG_WARNING, "sparkplug: %s: %s (ignored)", msg->topic, error);
		return;
	}
	if (b->spb_state_seen && timestamp < b->spb_state_timestamp) {
		log_msg(LOG_INFO, "sparkplug: %s: a STATE older than the last one (ignored)", msg->topic);
		return;
	}
	b->spb_state_seen = true;
	b->spb_state_timestamp = timestamp;
	bool was = b->spb_host_online;
	b->spb_host_online = online;
	if (online && !was)
		log_msg(LOG_INFO, "sparkplug: primary host %s is online", b->spb_host);
	if (!online && b->spb_node_born) {
		/* NDEATH, disconnect, and start over: a new session waits for
		 * the host (Sparkplug 3.0, Edge Node Session Establishment) */
		log_msg(LOG_WARNING, "sparkplug: primary host %s went offline: NDEATH, reconnecting", b->spb_host);
		struct bridge_spb_message m;
		spb_publish(b, bridge_spb_ndeath(b->spb, bdseq_of(b->session), realtime_ms(), &m), &m);
		b->spb_node_born = b->spb_device_born = false;
		mosquitto_disconnect(b->mosq);
	} else if (!online) {
		log_msg(LOG_INFO, "sparkplug: primary host %s is offline: waiting", b->spb_host);
	}
}

static void queue_job(struct bridge *b, struct bridge_job *job);

/* NCMD (Rebirth) and DCMD (writes: one job each, applied as plain
 * commands are, under the key sparkplug.c made). */
static void spb_command(struct bridge *b, enum bridge_spb_topic kind, const struct mosquitto_message *msg)
{
	struct bridge_spb_command c;
	char error[256] = "";
	int r = bridge_spb_decode_command(b->spb, kind, msg->payload ? msg->payload : "", (size_t)msg->payloadlen, &c,
					  error, sizeof(error));
	if (r < 0) {
		log_msg(LOG_WARNING, "sparkplug: %s refused: %s", msg->topic, r == -EINVAL ? error : strerror(-r));
		return;
	}
	if (c.rebirth) {
		log_msg(LOG_INFO, "sparkplug: rebirth requested");
		b->birth_due = true;
	}
	for (size_t i = 0; i < c.count; i++) {
		struct bridge_spb_write *w = &c.writes[i];
		if (kind == BRIDGE_SPB_NCMD) {
			if (w->error[0])
				log_msg(LOG_WARNING, "sparkplug: %s refused: %s", msg->topic, w->error);
			continue;
		}
		struct bridge_job *job = calloc(1, sizeof(*job));
		if (!job) {
			log_msg(LOG_ERROR, "command on %s dropped: out of memory", msg->topic);
			break;
		}
		const struct slot *slot = w->metric != SIZE_MAX ? &b->slots[b->spb_slot[w->metric]] : NULL;
		job->param = slot ? slot->fleet : NULL;
		snprintf(job->topic, sizeof(job->topic), "%s", slot ? slot->fleet->topic : "?");
		snprintf(job->command.id, sizeof(job->command.id), "%s", w->id);
		snprintf(job->error, sizeof(job->error), "%s", w->error);
		job->command.text = w->text;
		w->text = NULL;
		queue_job(b, job);
	}
	bridge_spb_command_fini(&c);
}

/* The session number's file (docs/fleet.md): one decimal line. */
static int session_load(const char *path, uint64_t *ret, char *error, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT) {
			*ret = 0;
			return 0;
		}
		int e = errno;
		snprintf(error, size, "%s: %s", path, strerror(e));
		return -e;
	}
	char line[32] = "";
	bool ok = fgets(line, sizeof(line), f) != NULL && fgetc(f) == EOF;
	fclose(f);
	char *end = NULL;
	errno = 0;
	unsigned long long v = ok && line[0] >= '0' && line[0] <= '9' ? strtoull(line, &end, 10) : 0;
	if (!ok || !end || errno || strcmp(end, "\n") != 0) {
		snprintf(error, size, "%s:1: not a session number (one decimal line)", path);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int session_save(const char *path, uint64_t session)
{
	char tmp[PATH_MAX + 8], text[32];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int n = snprintf(text, sizeof(text), "%" PRIu64 "\n", session);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write(fd, text, (size_t)n) == n && fsync(fd) == 0 ? 0 : -(errno ? errno : EIO);
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

static void mqtt_lost(struct bridge *b, const char *why)
{
	if (b->mqtt_connected)
		log_msg(LOG_WARNING, "broker %s:%d: connection lost (%s); reconnecting", b->host, b->port, why);
	b->mqtt_connected = false;
	/* the socket is closed by the next connect (libmosquitto closes it
	 * first); until then it is no longer polled */
	b->mqtt_socket_open = false;
	b->mqtt_retry_at = now_ms() + b->mqtt_backoff_ms;
	b->mqtt_backoff_ms = b->mqtt_backoff_ms * 2 > b->reconnect_max_ms ? b->reconnect_max_ms : b->mqtt_backoff_ms * 2;
}

static void on_connect(struct mosquitto *mosq, void *userdata, int rc, int flags, const mosquitto_property *props)
{
	(void)mosq;
	(void)props;
	struct bridge *b = userdata;
	if (rc != 0) {
		if (rc != b->last_mqtt_error)
			log_msg(LOG_ERROR, "broker %s:%d refused the connection: %s", b->host, b->port,
				mosquitto_reason_string(rc));
		b->last_mqtt_error = rc;
		mqtt_lost(b, "refused");
		return;
	}
	b->last_mqtt_error = 0;
	b->mqtt_connected = true;
	b->mqtt_backoff_ms = 100;
	log_msg(LOG_INFO, "broker %s:%d: connected (session %" PRIu64 "%s)", b->host, b->port, b->session,
		(flags & 1) ? ", resumed" : "");
	if (b->spb) {
		/* commands (retained ones are not: Sparkplug retains none), the
		 * primary host's retained STATE; the births follow in the loop */
		int options = MQTT_SUB_OPT_NO_LOCAL | MQTT_SUB_OPT_SEND_RETAIN_NEVER;
		mosquitto_subscribe_v5(b->mosq, NULL, bridge_spb_topic(b->spb, BRIDGE_SPB_NCMD_FILTER), 1, options, NULL);
		mosquitto_subscribe_v5(b->mosq, NULL, bridge_spb_topic(b->spb, BRIDGE_SPB_DCMD_FILTER), 1, options, NULL);
		if (b->spb_host)
			mosquitto_subscribe_v5(b->mosq, NULL, bridge_spb_topic(b->spb, BRIDGE_SPB_STATE), 1, 0, NULL);
		b->spb_node_born = b->spb_device_born = b->spb_host_online = false;
		b->birth_due = false;
		return;
	}
	char *filter = NULL;
	struct bridge_identity id = identity(b);
	if (b->mode->command_filter(&id, &filter) == 0) {
		mosquitto_subscribe_v5(b->mosq, NULL, filter, 1, MQTT_SUB_OPT_NO_LOCAL | MQTT_SUB_OPT_SEND_RETAIN_NEVER,
				       NULL);
		free(filter);
	}
	/* a fresh birth, then every current value: nothing stale is new, each
	 * value carries the time it was written */
	publish_birth(b);
	for (size_t i = 0; i < b->fleet.count; i++)
		b->slots[i].dirty = b->slots[i].json != NULL;
}

static void on_disconnect(struct mosquitto *mosq, void *userdata, int rc, const mosquitto_property *props)
{
	(void)mosq;
	(void)props;
	struct bridge *b = userdata;
	b->mqtt_socket_open = false;
	if (b->mqtt_connected)
		mqtt_lost(b, mosquitto_reason_string(rc));
}

static void queue_job(struct bridge *b, struct bridge_job *job)
{
	pthread_mutex_lock(&b->lock);
	if (b->job_count >= BRIDGE_JOBS_MAX) {
		pthread_mutex_unlock(&b->lock);
		snprintf(job->error, sizeof(job->error), "too many commands waiting (%d); not applied", BRIDGE_JOBS_MAX);
		*b->unsent_tail = job;
		b->unsent_tail = &job->next;
		return;
	}
	*b->jobs_tail = job;
	b->jobs_tail = &job->next;
	b->job_count++;
	pthread_cond_signal(&b->jobs_cond);
	pthread_mutex_unlock(&b->lock);
}

static void on_message(struct mosquitto *mosq, void *userdata, const struct mosquitto_message *msg,
		       const mosquitto_property *props)
{
	(void)mosq;
	struct bridge *b = userdata;
	if (b->spb) {
		enum bridge_spb_topic kind = bridge_spb_topic_kind(b->spb, msg->topic);
		if (kind == BRIDGE_SPB_STATE)
			spb_state(b, msg);
		else if (kind == BRIDGE_SPB_NCMD || kind == BRIDGE_SPB_DCMD)
			spb_command(b, kind, msg);
		else
			log_msg(LOG_DEBUG, "sparkplug: %s is not for this edge node's device (ignored)", msg->topic);
		return;
	}
	struct bridge_identity id = identity(b);
	char topic[BRIDGE_TOPIC_MAX + 1];
	if (!b->mode->command_topic(&id, msg->topic, topic, sizeof(topic)))
		return; /* not a command: a value another client published, say */
	struct bridge_job *job = calloc(1, sizeof(*job));
	if (!job) {
		log_msg(LOG_ERROR, "command on %s dropped: out of memory", msg->topic);
		return;
	}
	snprintf(job->topic, sizeof(job->topic), "%s", topic);
	job->param = bridge_fleet_by_topic(&b->fleet, topic, strlen(topic));
	char *response = NULL;
	if (mosquitto_property_read_string(props, MQTT_PROP_RESPONSE_TOPIC, &response, false))
		job->response_topic = response;
	else
		job->response_topic = strdup(b->reply_default);
	void *correlation = NULL;
	uint16_t correlation_length = 0;
	if (mosquitto_property_read_binary(props, MQTT_PROP_CORRELATION_DATA, &correlation, &correlation_length,
					   false)) {
		job->correlation = correlation;
		job->correlation_length = correlation_length;
	}
	int r = bridge_command_decode(msg->payload ? msg->payload : "", (size_t)msg->payloadlen, &job->command,
				      job->error, sizeof(job->error));
	if (r < 0 && r != -EINVAL)
		snprintf(job->error, sizeof(job->error), "%s", strerror(-r));
	if (!job->response_topic) {
		bridge_job_free(job);
		return;
	}
	queue_job(b, job);
}

/* libmosquitto's own log: its error lines (OpenSSL's reason for a failed
 * handshake) are kept to name the cause in the bridge's warning; the rest
 * goes to the debug log. Main thread (libmosquitto has no thread here). */
static void on_log(struct mosquitto *mosq, void *userdata, int level, const char *text)
{
	(void)mosq;
	struct bridge *b = userdata;
	if (level & MOSQ_LOG_ERR)
		snprintf(b->mqtt_detail, sizeof(b->mqtt_detail), "%s", text);
	else if (level & (MOSQ_LOG_WARNING | MOSQ_LOG_NOTICE))
		log_msg(LOG_DEBUG, "libmosquitto: %s", text);
}

static void mqtt_try_connect(struct bridge *b)
{
	struct bridge_identity id = identity(b);
	id.session = b->session + 1;
	struct bridge_message will;
	if (b->spb) {
		/* the session's number (bdSeq) is on disk before its CONNECT: a
		 * restarted bridge goes on with the next one */
		int r = session_save(b->session_path, b->session + 1);
		if (r < 0)
			log_msg(LOG_WARNING, "sparkplug: %s: %s (bdSeq may repeat after a restart)", b->session_path,
				strerror(-r));
		struct bridge_spb_message m;
		if (bridge_spb_ndeath(b->spb, bdseq_of(b->session + 1), realtime_ms(), &m) == 0)
			mosquitto_will_set(b->mosq, m.topic, (int)m.length, m.payload, m.qos, m.retain);
	} else if (b->mode->death(&id, &will) == 0) {
		mosquitto_will_set(b->mosq, will.topic, (int)will.length, will.payload, will.qos, will.retain);
		bridge_message_free(&will);
	}
	mosquitto_property *props = NULL;
	/* Sparkplug: Clean Start and no session kept (3.0, "MQTT Session") */
	mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL, b->spb ? 0 : b->session_expiry);
	int rc = mosquitto_connect_bind_v5(b->mosq, b->host, b->port, b->keepalive, NULL, props);
	mosquitto_property_free_all(&props);
	if (rc != MOSQ_ERR_SUCCESS) {
		int e = rc == MOSQ_ERR_ERRNO ? errno : 0;
		if (rc != b->last_mqtt_error)
			log_msg(LOG_WARNING, "broker %s:%d: %s%s%s (trying again)", b->host, b->port,
				e ? strerror(e) : mosquitto_strerror(rc), b->mqtt_detail[0] ? ": " : "", b->mqtt_detail);
		b->mqtt_detail[0] = '\0';
		b->last_mqtt_error = rc;
		b->mqtt_socket_open = false;
		b->mqtt_retry_at = now_ms() + b->mqtt_backoff_ms;
		b->mqtt_backoff_ms = b->mqtt_backoff_ms * 2 > b->reconnect_max_ms ? b->reconnect_max_ms
										  : b->mqtt_backoff_ms * 2;
		return;
	}
	b->session++;
	b->mqtt_socket_open = true;
}

/* ------------------------------------------------------------ the pbusd side */

/* Store @count values from pbusd in their slots, marked dirty. */
static void store_values(struct bridge *b, const struct pbus_client *client, const struct pbus_client_value *values,
			 size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const struct pbus_client_value *v = &values[i];
		/* the fleet is in index order: a binary search */
		size_t lo = 0, hi = b->fleet.count;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (b->fleet.params[mid].index < v->index)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == b->fleet.count || b->fleet.params[lo].index != v->index)
			continue;
		struct slot *s = &b->slots[lo];
		struct pbus_param_info info;
		if (pbus_client_describe(client, v->index, &info) < 0)
			continue;
		if (b->spb) {
			if (s->metric == SIZE_MAX)
				continue;
			/* an enum's metric is its label */
			char label[256] = "";
			if ((info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG) == PBUS_TYPE_ENUM &&
			    pbus_client_format(client, v->index, v->value, v->length, label, sizeof(label)) < 0)
				label[0] = '\0';
			int r = bridge_spb_set_value(b->spb, s->metric, v->value, v->length, label, v->status,
						     v->timestamp_ns);
			if (r < 0) {
				log_msg(LOG_WARNING, "value of %s not encoded: %s", s->fleet->name, strerror(-r));
				continue;
			}
			s->has_value = true;
			s->status = v->status;
			s->timestamp_ns = v->timestamp_ns;
			s->seq = v->seq;
			s->dirty = true;
			continue;
		}
		char *json = value_json(client, v->index, info.type, v->value, v->length);
		if (!json) {
			log_msg(LOG_WARNING, "value of %s not encoded: out of memory", s->fleet->name);
			continue;
		}
		free(s->json);
		s->json = json;
		s->status = v->status;
		s->timestamp_ns = v->timestamp_ns;
		s->seq = v->seq;
		s->dirty = true;
	}
}

static void on_notify(struct pbus_client *client, uint32_t subscription, enum pbus_client_event event,
		      const struct pbus_client_value *values, size_t count, void *userdata)
{
	(void)subscription;
	if (event == PBUS_CLIENT_EVENT_VALUES)
		store_values(userdata, client, values, count);
}

/* Check the fleet against pbusd's schema and subscribe. 0 or -errno. */
static int pbusd_attach(struct bridge *b)
{
	const struct pbus_schema *schema = pbus_client_schema(b->client);
	uint32_t count = pbus_schema_param_count(schema);
	if (!b->interface) {
		const char *itf = pbus_schema_interface(schema, NULL, NULL);
		b->interface = strdup(itf ? itf : "");
	}
	for (size_t i = 0; i < b->fleet.count; i++) {
		struct slot *s = &b->slots[i];
		struct pbus_param_info info;
		if (s->fleet->index >= count || pbus_client_describe(b->client, s->fleet->index, &info) < 0 ||
		    strcmp(info.name, s->fleet->name) != 0) {
			log_msg(LOG_ERROR, "the fleet file's parameter %u '%s' is not the instance's", s->fleet->index,
				s->fleet->name);
			return -ESTALE;
		}
		if (!s->unit && !(s->unit = strdup(info.unit)))
			return -ENOMEM;
		unsigned element = info.type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
		snprintf(s->type, sizeof(s->type), "%s%s", pbus_type_name(element),
			 (info.type & PBUS_TYPE_ARRAY_FLAG) ? "[]" : "");
		s->view = (struct bridge_param_view){.fleet = s->fleet, .unit = s->unit, .type = s->type};
	}
	if (b->spb) {
		/* the metrics: every published parameter, in the fleet's order */
		struct bridge_spb_metric_def *defs = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*defs));
		if (!defs)
			return -ENOMEM;
		size_t n = 0;
		for (size_t i = 0; i < b->fleet.count; i++) {
			struct slot *s = &b->slots[i];
			s->metric = SIZE_MAX;
			s->has_value = false;
			struct pbus_param_info info;
			if (!s->fleet->publish || pbus_client_describe(b->client, s->fleet->index, &info) < 0)
				continue;
			size_t label_max = 0;
			const char *label;
			int32_t value;
			for (uint32_t k = 0; k < info.enum_count; k++)
				if (pbus_client_enumerator(b->client, s->fleet->index, k, &label, &value) == 0 &&
				    strlen(label) > label_max)
					label_max = strlen(label);
			defs[n] = (struct bridge_spb_metric_def){.name = s->fleet->name, .unit = s->unit, .type = info.type,
							    .value_size = info.value_size,
							    .label_max = label_max < 255 ? 255 : label_max,
							    .writable = s->fleet->command};
			b->spb_slot[n] = i;
			s->metric = n++;
		}
		int r = bridge_spb_prepare(b->spb, defs, n);
		free(defs);
		if (r < 0) {
			log_msg(LOG_ERROR, "sparkplug: the metrics: %s", strerror(-r));
			return r;
		}
	}
	/* one subscription per (deadband, rate) */
	bool *done = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*done));
	uint32_t *indexes = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*indexes));
	int r = done && indexes ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < b->fleet.count; i++) {
		const struct bridge_fleet_param *f = &b->fleet.params[i];
		if (done[i] || !f->publish)
			continue;
		size_t n = 0;
		for (size_t k = i; k < b->fleet.count; k++) {
			const struct bridge_fleet_param *g = &b->fleet.params[k];
			if (!done[k] && g->publish && g->deadband == f->deadband && g->max_rate_hz == f->max_rate_hz) {
				indexes[n++] = g->index;
				done[k] = true;
			}
		}
		struct pbus_subscribe_options options = {
			.deadband = f->deadband,
			.min_interval_us = f->max_rate_hz > 0 ? (uint32_t)ceil(1e6 / f->max_rate_hz) : 0,
		};
		uint32_t id;
		r = pbus_client_subscribe(b->client, indexes, n, &options, on_notify, b, &id);
		if (r < 0)
			log_msg(LOG_ERROR, "subscribe to %zu parameters of instance %s: %s", n, b->instance,
				pbus_strerror(r));
	}
	/* and every published value now, so that the first flush has them all */
	size_t n = 0;
	for (size_t i = 0; r == 0 && i < b->fleet.count; i++)
		if (b->fleet.params[i].publish)
			indexes[n++] = b->fleet.params[i].index;
	struct pbus_client_value *v = r == 0 && n ? calloc(n, sizeof(*v)) : NULL;
	if (v) {
		r = pbus_client_get(b->client, indexes, n, v);
		if (r == 0)
			store_values(b, b->client, v, n);
		else
			log_msg(LOG_ERROR, "read %zu parameters of instance %s: %s", n, b->instance, pbus_strerror(r));
		free(v);
	}
	if (r == 0)
		b->values_in = true;
	free(done);
	free(indexes);
	return r;
}

static void pbusd_try_connect(struct bridge *b)
{
	struct pbus_client_options options = {
		.socket_dir = b->socket_dir,
		.schema_hash = b->fleet.schema_hash,
		.name = "pbus-bridge",
		.no_reconnect = true,
	};
	int r = pbus_client_connect(b->instance, &options, &b->client);
	if (r == 0) {
		r = pbusd_attach(b);
		if (r < 0) {
			pbus_client_close(b->client);
			b->client = NULL;
		}
	} else {
		b->client = NULL;
	}
	if (r < 0) {
		if (r != b->last_pbusd_error)
			log_msg(LOG_WARNING, "pbusd of instance %s: %s%s (trying again)", b->instance, pbus_strerror(r),
				r == -ESTALE ? " (the fleet file is of another schema)" : "");
		b->last_pbusd_error = r;
		b->pbusd_retry_at = now_ms() + b->pbusd_backoff_ms;
		b->pbusd_backoff_ms = b->pbusd_backoff_ms * 2 > PBUSD_BACKOFF_MAX_MS ? PBUSD_BACKOFF_MAX_MS
										     : b->pbusd_backoff_ms * 2;
		return;
	}
	log_msg(LOG_INFO, "pbusd of instance %s: connected", b->instance);
	b->last_pbusd_error = 0;
	b->pbusd_backoff_ms = PBUSD_BACKOFF_FIRST_MS;
	b->pbusd_connected = true;
	if (!b->spb)
		b->birth_due = true; /* the state says pbusd is back (Sparkplug: a DBIRTH, from the loop) */
}

static void pbusd_lost(struct bridge *b)
{
	log_msg(LOG_WARNING, "pbusd of instance %s: connection lost (reconnecting)", b->instance);
	pbus_client_close(b->client);
	b->client = NULL;
	b->pbusd_connected = false;
	if (b->spb)
		spb_device_death(b);
	else
		b->birth_due = true;
	b->pbusd_retry_at = now_ms() + b->pbusd_backoff_ms;
}

/* ------------------------------------------------------------ the command thread */

static int set_client(struct bridge *b)
{
	if (b->set_client && pbus_client_connected(b->set_client))
		return 0;
	pbus_client_close(b->set_client);
	b->set_client = NULL;
	struct pbus_client_options options = {.socket_dir = b->socket_dir, .schema_hash = b->fleet.schema_hash,
					      .name = "pbus-bridge commands", .no_reconnect = true};
	return pbus_client_connect(b->instance, &options, &b->set_client);
}

static void run_job(struct bridge *b, struct bridge_job *job)
{
	if (job->error[0])
		return; /* refused when decoded */
	const struct bridge_fleet_param *f = job->param;
	if (!f) {
		snprintf(job->error, sizeof(job->error), "no parameter at topic '%s'", job->topic);
		return;
	}
	if (!f->command) {
		int r = set_client(b);
		struct pbus_param_info info;
		if (r == 0 && pbus_client_describe(b->set_client, f->index, &info) == 0 &&
		    (info.flags & PBUS_PARAM_READONLY))
			snprintf(job->error, sizeof(job->error), "set %s: parameter is read-only", f->name);
		else
			snprintf(job->error, sizeof(job->error),
				 "set %s: not commanded from the broker (FleetCommand is false)", f->name);
		return;
	}
	char key[BRIDGE_TOPIC_MAX + 2 + 2 * 64 + 1];
	if (job->command.id[0]) {
		snprintf(key, sizeof(key), "%s\n%s", job->topic, job->command.id);
	} else if (job->correlation && job->correlation_length <= 64) {
		size_t n = (size_t)snprintf(key, sizeof(key), "%s\nc:", job->topic);
		for (uint16_t i = 0; i < job->correlation_length; i++)
			n += (size_t)snprintf(key + n, sizeof(key) - n, "%02x", ((unsigned char *)job->correlation)[i]);
	} else {
		snprintf(job->error, sizeof(job->error),
			 "a command needs an \"id\" (or MQTT 5 correlation data of at most 64 bytes): it is applied "
			 "once whatever the broker redelivers");
		return;
	}
	const struct bridge_journal_entry *seen = bridge_journal_find(&b->journal, key);
	if (seen) {
		job->duplicate = true;
		if (seen->state == BRIDGE_JOURNAL_DONE && seen->result == 0) {
			job->ok = true;
			job->seq = seen->seq;
		} else if (seen->state == BRIDGE_JOURNAL_DONE) {
			snprintf(job->error, sizeof(job->error), "set %s: refused before: %s", f->name,
				 pbus_strerror(seen->result));
		} else {
			snprintf(job->error, sizeof(job->error),
				 "set %s: outcome unknown (the bridge stopped while applying this command); not applied "
				 "again", f->name);
		}
		return;
	}
	int r = set_client(b);
	if (r < 0) {
		snprintf(job->error, sizeof(job->error), "set %s: pbusd of instance %s: %s; not applied", f->name,
			 b->instance, pbus_strerror(r));
		return;
	}
	struct pbus_param_info info;
	if (pbus_client_describe(b->set_client, f->index, &info) < 0) {
		snprintf(job->error, sizeof(job->error), "set %s: no such parameter", f->name);
		return;
	}
	unsigned char *buf = malloc(info.value_size ? info.value_size : 1);
	size_t length = 0;
	if (!buf) {
		snprintf(job->error, sizeof(job->error), "set %s: out of memory", f->name);
		return;
	}
	r = pbus_client_parse(b->set_client, f->index, job->command.text, buf, info.value_size, &length);
	if (r < 0) {
		describe_refusal(pbus_client_view(b->set_client), f->index, job->command.text, r, "pbus-bridge", job->error,
				 sizeof(job->error));
		free(buf);
		return;
	}
	r = bridge_journal_begin(&b->journal, key);
	if (r < 0) {
		snprintf(job->error, sizeof(job->error), "set %s: the journal cannot be written (%s); not applied",
			 f->name, strerror(-r));
		free(buf);
		return;
	}
	struct pbus_write w = {.index = f->index, .value = buf, .length = length};
	r = pbus_client_set(b->set_client, &w, 1);
	free(buf);
	int recorded = r;
	if (r == -ENOTCONN || r == -EPROTO || r == -ETIMEDOUT) {
		/* the outcome is unknown: the B record stays alone, so that a
		 * redelivery is never applied again */
		snprintf(job->error, sizeof(job->error), "set %s: pbusd: %s (the value may or may not be written)",
			 f->name, pbus_strerror(r));
		pbus_client_close(b->set_client);
		b->set_client = NULL;
		return;
	}
	int jr = bridge_journal_done(&b->journal, key, recorded, w.seq);
	if (jr < 0)
		log_msg(LOG_ERROR, "journal %s: %s", b->journal.path, strerror(-jr));
	if (r == 0) {
		job->ok = true;
		job->seq = w.seq;
	} else {
		describe_refusal(pbus_client_view(b->set_client), f->index, job->command.text, w.result ? w.result : r,
				 "pbus-bridge", job->error, sizeof(job->error));
	}
	struct pbus_client_value v;
	if (pbus_client_get(b->set_client, &f->index, 1, &v) == 0)
		job->value_json = value_json(b->set_client, f->index, info.type, v.value, v.length);
}

static void *command_main(void *arg)
{
	struct bridge *b = arg;
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->jobs && !b->stopping)
			pthread_cond_wait(&b->jobs_cond, &b->lock);
		if (!b->jobs)
			break; /* stopping, and every command received is applied */
		struct bridge_job *job = b->jobs;
		b->jobs = job->next;
		if (!b->jobs)
			b->jobs_tail = &b->jobs;
		b->job_count--;
		job->next = NULL;
		pthread_mutex_unlock(&b->lock);
		run_job(b, job);
		/* a refusal shows the value the parameter kept */
		if (!job->value_json && job->param && b->set_client && pbus_client_connected(b->set_client)) {
			struct pbus_param_info info;
			struct pbus_client_value v;
			if (pbus_client_describe(b->set_client, job->param->index, &info) == 0 &&
			    !(info.flags & PBUS_PARAM_NOREAD) &&
			    pbus_client_get(b->set_client, &job->param->index, 1, &v) == 0)
				job->value_json = value_json(b->set_client, job->param->index, info.type, v.value,
							     v.length);
		}
		pthread_mutex_lock(&b->lock);
		*b->done_tail = job;
		b->done_tail = &job->next;
		uint64_t one = 1;
		if (write(b->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_msg(LOG_ERROR, "wake the main thread: %s", strerror(errno));
	}
	pthread_mutex_unlock(&b->lock);
	pbus_client_close(b->set_client);
	b->set_client = NULL;
	return NULL;
}

/* ------------------------------------------------------------ options, main */

static char *read_password(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "pbus-bridge: --password-file %s: %s\n", path, strerror(errno));
		return NULL;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	if (n <= 0) {
		free(line);
		fprintf(stderr, "pbus-bridge: --password-file %s: empty\n", path);
		return NULL;
	}
	line[strcspn(line, "\r\n")] = '\0';
	return line;
}

static bool prefix_ok(const char *p)
{
	if (!*p || strlen(p) > 128 || p[0] == '/' || p[strlen(p) - 1] == '/' || strstr(p, "//"))
		return false;
	for (; *p; p++)
		if (*p == '+' || *p == '#' || (unsigned char)*p < 0x20)
			return false;
	return true;
}

enum {
	OPT_MODE = 256, OPT_CLIENT_ID, OPT_PASSWORD_FILE, OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_KEEPALIVE,
	OPT_SESSION_EXPIRY, OPT_RECONNECT_MAX, OPT_SOCKET_DIR, OPT_NOTIFY_FD, OPT_GROUP, OPT_EDGE_NODE, OPT_DEVICE,
	OPT_PRIMARY_HOST
};

/* @text with '/' (a level) and other characters a Sparkplug ID cannot
 * hold replaced by '_', into @buf. */
static void spb_id_from(const char *text, char *buf, size_t size)
{
	snprintf(buf, size, "%s", text);
	for (char *p = buf; *p; p++)
		if (*p == '/' || *p == '+' || *p == '#' || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
}

/* Whether every value is on the broker, for --notify-fd. */
static bool values_out(const struct bridge *b)
{
	if (!b->mqtt_connected || !b->values_in || mosquitto_want_write(b->mosq) ||
	    (b->spb && !b->spb_device_born))
		return false;
	for (size_t i = 0; i < b->fleet.count; i++)
		if (b->slots[i].dirty)
			return false;
	return true;
}

static void free_jobs(struct bridge_job **list)
{
	while (*list) {
		struct bridge_job *j = *list;
		*list = j->next;
		bridge_job_free(j);
	}
}

int main(int argc, char **argv)
{
	static struct bridge bridge;
	struct bridge *b = &bridge;
	log_set_program("pbus-bridge");
	const char *fleet_path = NULL, *broker = "127.0.0.1", *state_dir = "/var/lib/parambus", *password_file = NULL;
	const char *mode = "plain", *group = NULL, *edge_node = NULL, *device = NULL;
	unsigned long keepalive = 30, expiry = 86400, reconnect_max = 5000, notify_fd = ULONG_MAX;
	b->prefix = "parambus";
	static const struct option options[] = {
		{"instance", required_argument, NULL, 'i'},
		{"fleet", required_argument, NULL, 'f'},
		{"broker", required_argument, NULL, 'b'},
		{"prefix", required_argument, NULL, 'p'},
		{"mode", required_argument, NULL, OPT_MODE},
		{"client-id", required_argument, NULL, OPT_CLIENT_ID},
		{"username", required_argument, NULL, 'u'},
		{"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
		{"tls-ca", required_argument, NULL, OPT_TLS_CA},
		{"tls-cert", required_argument, NULL, OPT_TLS_CERT},
		{"tls-key", required_argument, NULL, OPT_TLS_KEY},
		{"keepalive", required_argument, NULL, OPT_KEEPALIVE},
		{"session-expiry", required_argument, NULL, OPT_SESSION_EXPIRY},
		{"reconnect-max", required_argument, NULL, OPT_RECONNECT_MAX},
		{"state-dir", required_argument, NULL, 's'},
		{"socket-dir", required_argument, NULL, OPT_SOCKET_DIR},
		{"notify-fd", required_argument, NULL, OPT_NOTIFY_FD},
		{"group", required_argument, NULL, OPT_GROUP},
		{"edge-node", required_argument, NULL, OPT_EDGE_NODE},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"primary-host", required_argument, NULL, OPT_PRIMARY_HOST},
		OPTIONS_COMMON_LONG,
		{0},
	};
	int c, r;
	while ((c = getopt_long(argc, argv, "i:f:b:p:u:s:" OPTIONS_COMMON_SHORT, options, NULL)) != -1) {
		switch (c) {
		case 'i': b->instance = optarg; break;
		case 'f': fleet_path = optarg; break;
		case 'b': broker = optarg; break;
		case 'p': b->prefix = optarg; break;
		case OPT_MODE: mode = optarg; break;
		case OPT_GROUP: group = optarg; break;
		case OPT_EDGE_NODE: edge_node = optarg; break;
		case OPT_DEVICE: device = optarg; break;
		case OPT_PRIMARY_HOST: b->spb_host = optarg; break;
		case OPT_CLIENT_ID: b->client_id = optarg; break;
		case 'u': b->username = optarg; break;
		case OPT_PASSWORD_FILE: password_file = optarg; break;
		case OPT_TLS_CA: b->tls_ca = optarg; break;
		case OPT_TLS_CERT: b->tls_cert = optarg; break;
		case OPT_TLS_KEY: b->tls_key = optarg; break;
		case OPT_KEEPALIVE:
			if (options_count("keepalive", optarg, 5, 65535, &keepalive) < 0)
				return 2;
			break;
		case OPT_SESSION_EXPIRY:
			if (options_count("session-expiry", optarg, 0, UINT32_MAX, &expiry) < 0)
				return 2;
			break;
		case OPT_RECONNECT_MAX:
			if (options_count("reconnect-max", optarg, 100, 600000, &reconnect_max) < 0)
				return 2;
			break;
		case 's': state_dir = optarg; break;
		case OPT_SOCKET_DIR: b->socket_dir = optarg; break;
		case OPT_NOTIFY_FD:
			if (options_count("notify-fd", optarg, 0, INT_MAX, &notify_fd) < 0)
				return 2;
			break;
		default:
			r = options_common(c, optarg, usage);
			if (r != OPTIONS_CONTINUE)
				return r;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pbus-bridge: unexpected argument '%s'\nTry 'pbus-bridge --help'.\n", argv[optind]);
		return 2;
	}
	if (!b->instance) {
		fprintf(stderr, "pbus-bridge: --instance NAME is required\nTry 'pbus-bridge --help'.\n");
		return 2;
	}
	bool sparkplug = strcmp(mode, "sparkplug") == 0;
	if (strcmp(mode, "plain") != 0 && !sparkplug) {
		fprintf(stderr, "pbus-bridge: --mode '%s': this pbus-bridge knows the modes 'plain' and 'sparkplug'\n",
			mode);
		return 2;
	}
	b->mode = &bridge_mode_plain;
	static char default_node[256 + 128], default_device[128];
	if (!sparkplug && (group || edge_node || device || b->spb_host)) {
		fprintf(stderr, "pbus-bridge: --group, --edge-node, --device and --primary-host are for --mode sparkplug\n");
		return 2;
	}
	if (sparkplug) {
		if (!group) {
			fprintf(stderr, "pbus-bridge: --mode sparkplug needs --group ID\nTry 'pbus-bridge --help'.\n");
			return 2;
		}
		if (!edge_node) {
			char host_name[256] = "host", both[sizeof(default_node)];
			gethostname(host_name, sizeof(host_name) - 1);
			snprintf(both, sizeof(both), "%s-%s", host_name, b->instance);
			spb_id_from(both, default_node, sizeof(default_node));
			edge_node = default_node;
		}
		if (!device) {
			spb_id_from(b->instance, default_device, sizeof(default_device));
			device = default_device;
		}
		const char *names[] = {"--group", "--edge-node", "--device", "--primary-host"};
		const char *ids[] = {group, edge_node, device, b->spb_host};
		for (int i = 0; i < 4; i++)
			if (ids[i] && !bridge_spb_id_ok(ids[i])) {
				fprintf(stderr, "pbus-bridge: %s '%s': a Sparkplug ID is 1 to 128 bytes without '/', '+', "
						"'#' or control characters\n", names[i], ids[i]);
				return 2;
			}
		if (bridge_spb_new(group, edge_node, device, b->spb_host, &b->spb) < 0)
			return 1;
	}
	if (!prefix_ok(b->prefix)) {
		fprintf(stderr, "pbus-bridge: --prefix '%s': topic levels without wildcards, empty levels or a "
				"leading or trailing '/'\n", b->prefix);
		return 2;
	}
	if (!!b->tls_cert != !!b->tls_key) {
		fprintf(stderr, "pbus-bridge: --tls-cert and --tls-key go together\n");
		return 2;
	}
	if (password_file && !b->username) {
		fprintf(stderr, "pbus-bridge: --password-file needs --username\n");
		return 2;
	}
	/* HOST, HOST:PORT or [V6]:PORT */
	static char host[256];
	unsigned port = b->tls_ca ? 8883 : 1883;
	if (strchr(broker, '[') || (strchr(broker, ':') && strchr(broker, ':') == strrchr(broker, ':'))) {
		if (options_listen(broker, host, sizeof(host), &port) < 0 || port == 0) {
			fprintf(stderr, "pbus-bridge: --broker '%s': expected HOST, HOST:PORT or [IPV6-ADDRESS]:PORT "
					"(port 1 to 65535)\n", broker);
			return 2;
		}
	} else if (!*broker || strlen(broker) >= sizeof(host)) {
		fprintf(stderr, "pbus-bridge: --broker '%s': expected HOST, HOST:PORT or [IPV6-ADDRESS]:PORT\n", broker);
		return 2;
	} else {
		snprintf(host, sizeof(host), "%s", broker);
	}
	b->host = host;
	b->port = (int)port;
	b->keepalive = (int)keepalive;
	b->session_expiry = (unsigned)expiry;
	b->reconnect_max_ms = (unsigned)reconnect_max;
	b->notify_fd = notify_fd == ULONG_MAX ? -1 : (int)notify_fd;
	if (password_file && !(b->password = read_password(password_file)))
		return 1;

	/* the fleet file */
	char default_fleet[PATH_MAX], error[512] = "";
	if (!fleet_path) {
		snprintf(default_fleet, sizeof(default_fleet), "/etc/parambus/%s.fleet", b->instance);
		fleet_path = default_fleet;
	}
	r = bridge_fleet_load(fleet_path, &b->fleet, error, sizeof(error));
	if (r < 0) {
		log_msg(LOG_ERROR, "load the fleet file: %s", error[0] ? error : strerror(-r));
		return 1;
	}
	b->slots = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*b->slots));
	b->spb_slot = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*b->spb_slot));
	b->spb_which = calloc(b->fleet.count ? b->fleet.count : 1, sizeof(*b->spb_which));
	if (!b->slots || !b->spb_slot || !b->spb_which)
		return 1;
	for (size_t i = 0; i < b->fleet.count; i++) {
		b->slots[i].fleet = &b->fleet.params[i];
		b->slots[i].view = (struct bridge_param_view){.fleet = &b->fleet.params[i], .unit = "", .type = "?"};
		b->slots[i].metric = SIZE_MAX;
	}

	/* the journal: one per instance, named after it ('/' -> '_') */
	char journal_path[PATH_MAX];
	int jn = snprintf(journal_path, sizeof(journal_path), "%s/%s.bridge-journal", state_dir, b->instance);
	for (char *p = journal_path + strlen(state_dir) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	if (jn >= (int)sizeof(journal_path)) {
		log_msg(LOG_ERROR, "--state-dir: path too long");
		return 1;
	}
	r = bridge_journal_open(&b->journal, journal_path, error, sizeof(error));
	if (r < 0) {
		log_msg(LOG_ERROR, "the journal of applied commands: %s", error);
		return 1;
	}
	if (b->spb) {
		/* the MQTT session's number, bdSeq's source: beside the journal */
		size_t n = strlen(journal_path) - strlen(".bridge-journal");
		if (asprintf(&b->session_path, "%.*s.sparkplug-session", (int)n, journal_path) < 0)
			return 1;
		r = session_load(b->session_path, &b->session, error, sizeof(error));
		if (r < 0) {
			log_msg(LOG_ERROR, "sparkplug: the session number: %s", error);
			return 1;
		}
	}

	/* MQTT */
	static char client_id[256];
	if (!b->client_id) {
		snprintf(client_id, sizeof(client_id), "pbus-bridge-%s", b->instance);
		b->client_id = client_id;
	}
	mosquitto_lib_init();
	/* plain: a persistent session keeps the commands sent while the bridge
	 * is away; Sparkplug's sessions are clean (3.0, "MQTT Session") */
	b->mosq = mosquitto_new(b->client_id, b->spb != NULL, b);
	if (!b->mosq) {
		log_msg(LOG_ERROR, "mosquitto_new: %s", strerror(errno));
		return 1;
	}
	mosquitto_int_option(b->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
	mosquitto_int_option(b->mosq, MOSQ_OPT_TCP_NODELAY, 1);
	mosquitto_connect_v5_callback_set(b->mosq, on_connect);
	mosquitto_disconnect_v5_callback_set(b->mosq, on_disconnect);
	mosquitto_message_v5_callback_set(b->mosq, on_message);
	mosquitto_log_callback_set(b->mosq, on_log);
	if (b->username && mosquitto_username_pw_set(b->mosq, b->username, b->password) != MOSQ_ERR_SUCCESS) {
		log_msg(LOG_ERROR, "--username: refused by libmosquitto");
		return 1;
	}
	if (b->tls_ca) {
		int rc = mosquitto_tls_set(b->mosq, b->tls_ca, NULL, b->tls_cert, b->tls_key, NULL);
		if (rc != MOSQ_ERR_SUCCESS) {
			log_msg(LOG_ERROR, "TLS (--tls-ca %s): %s", b->tls_ca, mosquitto_strerror(rc));
			return 1;
		}
	}
	struct bridge_identity id = identity(b);
	if (b->mode->reply_topic(&id, &b->reply_default) < 0)
		return 1;

	/* threads and descriptors */
	int sig_fd = signals_stop_fd();
	b->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sig_fd < 0 || b->wake_fd < 0) {
		log_msg(LOG_ERROR, "signalfd/eventfd: %s", strerror(errno));
		return 1;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->jobs_cond, NULL);
	b->jobs_tail = &b->jobs;
	b->done_tail = &b->done;
	b->unsent_tail = &b->unsent;
	r = pthread_create(&b->command_thread, NULL, command_main, b);
	if (r) {
		log_msg(LOG_ERROR, "start the command thread: %s", strerror(r));
		return 1;
	}
	if (b->spb)
		log_msg(LOG_INFO, "instance %s, fleet %s (%zu parameters), broker %s:%d, Sparkplug B group %s, edge node "
			"%s, device %s%s%s, bdSeq %" PRIu64 " next", b->instance, fleet_path, b->fleet.count, b->host, b->port,
			group, edge_node, device, b->spb_host ? ", primary host " : "", b->spb_host ? b->spb_host : "",
			bdseq_of(b->session + 1));
	else
		log_msg(LOG_INFO, "instance %s, fleet %s (%zu parameters), broker %s:%d, topics %s/%s/", b->instance,
			fleet_path, b->fleet.count, b->host, b->port, b->prefix, b->instance);

	b->mqtt_backoff_ms = 100;
	b->pbusd_backoff_ms = PBUSD_BACKOFF_FIRST_MS;
	pbusd_try_connect(b);
	mqtt_try_connect(b);
	bool stop = false;
	while (!stop) {
		struct pollfd p[4];
		int n = 0;
		p[n++] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = b->wake_fd, .events = POLLIN};
		int pbus_at = -1, mqtt_at = -1;
		if (b->client) {
			pbus_at = n;
			p[n++] = (struct pollfd){.fd = pbus_client_fd(b->client), .events = POLLIN};
		}
		int sock = b->mqtt_socket_open ? mosquitto_socket(b->mosq) : -1;
		if (sock >= 0) {
			mqtt_at = n;
			p[n++] = (struct pollfd){.fd = sock,
						 .events = (short)(POLLIN | (mosquitto_want_write(b->mosq) ? POLLOUT : 0))};
		}
		if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR) {
			log_msg(LOG_ERROR, "poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			stop = true;
		if (p[1].revents) {
			uint64_t count;
			if (read(b->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
				log_msg(LOG_WARNING, "read the wake-up: %s", strerror(errno));
			pthread_mutex_lock(&b->lock);
			if (b->done) {
				*b->unsent_tail = b->done;
				b->unsent_tail = b->done_tail;
				b->done = NULL;
				b->done_tail = &b->done;
			}
			pthread_mutex_unlock(&b->lock);
		}
		if (pbus_at >= 0 && p[pbus_at].revents) {
			r = pbus_client_dispatch(b->client);
			if (r < 0 || !pbus_client_connected(b->client))
				pbusd_lost(b);
		}
		if (mqtt_at >= 0 && b->mqtt_socket_open) {
			int rc = MOSQ_ERR_SUCCESS;
			if (p[mqtt_at].revents & (POLLIN | POLLHUP | POLLERR))
				rc = mosquitto_loop_read(b->mosq, 1);
			if (rc == MOSQ_ERR_SUCCESS && b->mqtt_socket_open && (p[mqtt_at].revents & POLLOUT))
				rc = mosquitto_loop_write(b->mosq, 1);
			if (rc != MOSQ_ERR_SUCCESS && b->mqtt_socket_open)
				mqtt_lost(b, mosquitto_strerror(rc));
		}
		if (b->mqtt_socket_open && mosquitto_loop_misc(b->mosq) != MOSQ_ERR_SUCCESS)
			mqtt_lost(b, "keep-alive");
		int64_t t = now_ms();
		if (!b->client && t >= b->pbusd_retry_at)
			pbusd_try_connect(b);
		if (!b->mqtt_socket_open && t >= b->mqtt_retry_at)
			mqtt_try_connect(b);
		if (b->mqtt_connected && b->spb) {
			bool allowed = !b->spb_host || b->spb_host_online;
			if (allowed && (!b->spb_node_born || b->birth_due))
				spb_births(b);
			else if (b->spb_node_born && !b->spb_device_born && b->pbusd_connected)
				spb_device_birth(b);
			publish_replies(b);
			if (b->spb_device_born && !mosquitto_want_write(b->mosq))
				spb_flush(b);
		} else if (b->mqtt_connected) {
			if (b->birth_due)
				publish_birth(b);
			publish_replies(b);
			if (!mosquitto_want_write(b->mosq))
				flush_values(b);
		}
		if (!b->ready_sent && values_out(b)) {
			b->ready_sent = true;
			if (b->notify_fd >= 0) {
				if (write(b->notify_fd, "READY=1\n", 8) != 8)
					log_msg(LOG_WARNING, "write to --notify-fd: %s", strerror(errno));
				close(b->notify_fd);
				b->notify_fd = -1;
			}
			log_msg(LOG_INFO, "ready: the values are on the broker");
		}
	}

	/* a clean end: the commands received are applied and answered, then
	 * the death message, then goodbye */
	log_msg(LOG_INFO, "stopping");
	pthread_mutex_lock(&b->lock);
	b->stopping = true;
	pthread_cond_signal(&b->jobs_cond);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->command_thread, NULL);
	if (b->done) {
		*b->unsent_tail = b->done;
		b->unsent_tail = b->done_tail;
		b->done = NULL;
	}
	if (b->mqtt_connected) {
		publish_replies(b);
		struct bridge_identity end = identity(b);
		struct bridge_message m;
		struct bridge_spb_message spb_m;
		if (b->spb)
			spb_publish(b, bridge_spb_ndeath(b->spb, bdseq_of(b->session), realtime_ms(), &spb_m), &spb_m);
		else if (b->mode->death(&end, &m) == 0) {
			publish(b, &m, NULL);
			bridge_message_free(&m);
		}
		mosquitto_disconnect(b->mosq);
		for (int i = 0; i < 100 && mosquitto_want_write(b->mosq) && mosquitto_socket(b->mosq) >= 0; i++) {
			struct pollfd pw = {.fd = mosquitto_socket(b->mosq), .events = POLLOUT};
			if (poll(&pw, 1, 20) > 0 && mosquitto_loop_write(b->mosq, 1) != MOSQ_ERR_SUCCESS)
				break;
		}
	}
	free_jobs(&b->jobs);
	free_jobs(&b->done);
	free_jobs(&b->unsent);
	mosquitto_destroy(b->mosq);
	mosquitto_lib_cleanup();
	pbus_client_close(b->client);
	bridge_journal_fini(&b->journal);
	for (size_t i = 0; i < b->fleet.count; i++) {
		free(b->slots[i].json);
		free(b->slots[i].unit);
	}
	free(b->slots);
	free(b->spb_slot);
	free(b->spb_which);
	free(b->session_path);
	bridge_spb_free(b->spb);
	bridge_fleet_fini(&b->fleet);
	free(b->interface);
	free(b->reply_default);
	free(b->password);
	close(sig_fd);
	close(b->wake_fd);
	return 0;
}
