/* SPDX-License-Identifier: MIT */
/*
 * pbus-bridge.h: the private header of pbus-bridge, the daemon that
 * publishes a parambus instance to an MQTT broker and applies commands from
 * it through pbusd (docs/fleet.md). main.c reads the options and runs the
 * loop (pbusd's subscription, the MQTT connection, the latest values);
 * fleet.c loads the fleet file `pbus-gen --fleet` writes; command.c decodes
 * commands and keeps the journal of applied ones; plain.c is the plain-
 * topics mode: every topic and payload the bridge publishes in that mode;
 * sparkplug.c is the Sparkplug B 3.0 mode's encoder and decoders.
 *
 * A mode (struct bridge_mode) is the encoder between parambus and the
 * broker's namespace: it names the topics and encodes the birth, the
 * death, the values and the replies. The loop in main.c decides *when*
 * (connects, changes, rate, backpressure); the mode decides *what*.
 * Sparkplug B does not fit that stateless shape: it has a session state
 * (the seq of every message, bdSeq per MQTT session, aliases), births per
 * node and per device, values batched into one DDATA, protobuf commands
 * and the primary host's STATE. So it is its own object (struct
 * bridge_spb, below) that main.c drives where the mode is "sparkplug";
 * the loop (connections, rate, backpressure, the journal) is still shared.
 *
 * Threads (docs/fleet.md, "Threading"):
 *  - the main thread owns the struct mosquitto (libmosquitto is used
 *    without its own thread: every mosquitto_* call is made here), the
 *    subscribing pbus_client, the fleet and the latest values;
 *  - the command thread owns a second pbus_client and the journal; it takes
 *    jobs from bridge->jobs, applies them (a SET of a persistent parameter
 *    waits for pbusd's save) and puts them, answered, on bridge->done,
 *    then wakes the main thread through bridge->wake_fd.
 * bridge->lock guards only the two queues and `stopping`.
 */
#ifndef PBUS_BRIDGE_H
#define PBUS_BRIDGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BRIDGE_FLEET_FORMAT "parambus-fleet"
#define BRIDGE_FLEET_VERSION 1
#define BRIDGE_TOPIC_MAX 128          /* bytes of a parameter's topic (below prefix/instance/) */
#define BRIDGE_NAME_MAX 127           /* bytes of a parameter's name */
#define BRIDGE_ID_MAX 64              /* bytes of a command's id */
#define BRIDGE_VALUE_TEXT_MAX 65536   /* bytes of a command's value, as text */
#define BRIDGE_JOBS_MAX 1024          /* commands waiting for the command thread */
#define BRIDGE_JOURNAL_KEYS 4096      /* commands remembered as applied */

/* ------------------------------------------------------------------ fleet.c */

struct bridge_fleet_param {
	uint32_t index;
	char name[BRIDGE_NAME_MAX + 1];
	char topic[BRIDGE_TOPIC_MAX + 1];
	bool publish, retain, command;
	double deadband;              /* >= 0 */
	double max_rate_hz;           /* 0: no limit */
};

/* The fleet file, loaded: immutable afterwards; one owner (main.c). */
struct bridge_fleet {
	uint64_t schema_hash;
	struct bridge_fleet_param *params; /* in index order, indexes unique */
	size_t count;
};

/*
 * Parse a fleet file's text (@length bytes, docs/fleet.md "The fleet file").
 * 0, or -EINVAL with "SOURCE:LINE: problem" in @error, or -ENOMEM. On
 * success the caller frees *ret with bridge_fleet_fini(); on failure *ret
 * is left empty. Any thread.
 */
int bridge_fleet_parse(const char *text, size_t length, const char *source, struct bridge_fleet *ret,
		       char *error, size_t error_size);
/* Read and parse @path; as above, or the read's -errno (named in @error). */
int bridge_fleet_load(const char *path, struct bridge_fleet *ret, char *error, size_t error_size);
void bridge_fleet_fini(struct bridge_fleet *fleet);
/* The entry whose topic is @topic (@length bytes), or NULL. */
const struct bridge_fleet_param *bridge_fleet_by_topic(const struct bridge_fleet *fleet, const char *topic,
							size_t length);

/* ---------------------------------------------------------------- command.c */

/* A decoder's refusal: the message (printf-style) into @error, made one
 * line whatever the input put into it; returns -EINVAL. Any thread. */
int bridge_refuse(char *error, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* A command's payload, decoded. */
struct bridge_command {
	char id[BRIDGE_ID_MAX + 1];   /* "" when the payload has none */
	char *text;                   /* the value as `pbus set` text (malloc'd) */
};

/*
 * Decode a command's payload (@length bytes): a JSON object {"id": string,
 * "value": a JSON value} ("id" optional here; see docs/fleet.md) whose
 * value becomes text that pbus_client_parse() reads: a number as written,
 * true/false, a string as is, an array of numbers or booleans joined with
 * ','. 0, or -EINVAL with a one-line reason in @error, or -ENOMEM. The
 * caller frees ret->text with free(). Any thread.
 */
int bridge_command_decode(const char *payload, size_t length, struct bridge_command *ret, char *error,
			  size_t error_size);

/* What the journal knows of a command. */
enum bridge_journal_state {
	BRIDGE_JOURNAL_UNKNOWN = 0, /* never seen */
	BRIDGE_JOURNAL_BEGUN = 1,   /* the bridge stopped while applying it: outcome unknown */
	BRIDGE_JOURNAL_DONE = 2     /* answered: result and seq recorded */
};

struct bridge_journal_entry {
	char *key;                    /* topic '\n' id (malloc'd) */
	enum bridge_journal_state state;
	int result;                   /* 0 or -errno (DONE) */
	uint64_t seq;                 /* the version written (DONE, result 0) */
	uint64_t order;               /* last use: the oldest are forgotten first */
};

/*
 * The journal of commands applied (docs/fleet.md, "Commands applied once"):
 * an append-only file of records, each written and fdatasync'ed before
 * the bridge goes on (B before the SET, D after it), with the last
 * BRIDGE_JOURNAL_KEYS keys in memory. Owned by the command thread.
 */
struct bridge_journal {
	char *path;                   /* NULL: in memory only (tests, fuzzing) */
	int fd;
	struct bridge_journal_entry *entries;
	size_t count, capacity;       /* capacity: a power of two, open addressing */
	uint64_t next_order;
	size_t records;               /* records in the file, for compaction */
};

/* Parse a journal file's text; as bridge_fleet_parse() ("SOURCE:LINE:
 * problem"). A last line without its newline (a write cut by a crash) is
 * ignored. @j must be zeroed or fresh from a fini. */
int bridge_journal_parse(struct bridge_journal *j, const char *text, size_t length, const char *source,
			 char *error, size_t error_size);
/* Open (create) @path, load it, compact it. 0 or -errno / -EINVAL (@error). */
int bridge_journal_open(struct bridge_journal *j, const char *path, char *error, size_t error_size);
void bridge_journal_fini(struct bridge_journal *j);
/* The entry of @key, or NULL. */
const struct bridge_journal_entry *bridge_journal_find(const struct bridge_journal *j, const char *key);
/* Record @key begun / done, on disk (fdatasync) before returning. 0 or -errno. */
int bridge_journal_begin(struct bridge_journal *j, const char *key);
int bridge_journal_done(struct bridge_journal *j, const char *key, int result, uint64_t seq);

/* ------------------------------------------------------------------ main.c */

struct bridge;

/* A command for the command thread, and then its answer. */
struct bridge_job {
	const struct bridge_fleet_param *param; /* NULL: not a commandable topic */
	char topic[BRIDGE_TOPIC_MAX + 1];      /* the parameter's topic, as received */
	struct bridge_command command;
	char *response_topic;                  /* where the reply goes (malloc'd) */
	void *correlation;                     /* MQTT 5 correlation data, or NULL */
	uint16_t correlation_length;
	/* the answer */
	bool ok, duplicate;
	uint64_t seq;
	char error[512];
	char *value_json;                      /* the parameter's value now, or NULL */
	struct bridge_job *next;
};
void bridge_job_free(struct bridge_job *job);

/* ------------------------------------------------------------------ plain.c */

/* One message for the broker, built by a mode. */
struct bridge_message {
	char *topic;                  /* malloc'd */
	char *payload;                /* malloc'd */
	size_t length;
	int qos;
	bool retain;
};
void bridge_message_free(struct bridge_message *m);

/* The parameter's description that a mode needs (from pbusd's schema). */
struct bridge_param_view {
	const struct bridge_fleet_param *fleet;
	const char *unit;
	const char *type;             /* "double", "int32[]", ... */
};

/* A value to encode: its JSON text (the value alone) and its metadata. */
struct bridge_value {
	const char *json;
	uint32_t status;
	uint64_t timestamp_ns, seq;
};

struct bridge_identity {
	const char *prefix, *instance, *interface;
	uint64_t schema_hash;
	uint64_t session;             /* grows by one per MQTT connection */
	bool pbusd_connected;
};

struct bridge_mode {
	const char *name;
	/* The birth (online) and death (offline, also the will) messages. */
	int (*birth)(const struct bridge_identity *id, const struct bridge_param_view *params, size_t count,
		     struct bridge_message *ret);
	int (*death)(const struct bridge_identity *id, struct bridge_message *ret);
	/* One parameter's value. */
	int (*value)(const struct bridge_identity *id, const struct bridge_param_view *param,
		     const struct bridge_value *value, struct bridge_message *ret);
	/* The topic filter of commands, and whether @topic is a command: then
	 * its parameter topic goes to @param_topic (NUL-terminated). */
	int (*command_filter)(const struct bridge_identity *id, char **ret_filter);
	bool (*command_topic)(const struct bridge_identity *id, const char *topic, char *param_topic,
			      size_t size);
	/* The reply to an answered job (its topic: the job's response topic). */
	int (*reply)(const struct bridge_identity *id, const struct bridge_job *job, struct bridge_message *ret);
	/* The default reply topic, when a command names none. */
	int (*reply_topic)(const struct bridge_identity *id, char **ret_topic);
};

extern const struct bridge_mode bridge_mode_plain;

/* -------------------------------------------------------------- sparkplug.c */

/* What the Sparkplug encoder needs of a published parameter (from pbusd's
 * schema): its metric is the parameter's name, its alias its position + 1. */
struct bridge_spb_metric_def {
	const char *name;
	const char *unit;
	unsigned type;                /* enum pbus_type */
	uint32_t value_size;          /* capacity in bytes */
	size_t label_max;             /* enums: the longest label's bytes */
	bool writable;                /* FleetCommand: DCMD may write it */
};

/* A message made by the encoder: payload and topic are the encoder's,
 * valid until its next call. */
struct bridge_spb_message {
	const char *topic;
	const void *payload;
	size_t length;
	int qos;
	bool retain;
};

enum bridge_spb_topic {
	BRIDGE_SPB_OTHER = 0,
	BRIDGE_SPB_NCMD,              /* spBv1.0/G/NCMD/N */
	BRIDGE_SPB_DCMD,              /* spBv1.0/G/DCMD/N/D (this device) */
	BRIDGE_SPB_STATE,             /* spBv1.0/STATE/HOST (the primary host) */
	BRIDGE_SPB_NCMD_FILTER,       /* for bridge_spb_topic(): the subscriptions */
	BRIDGE_SPB_DCMD_FILTER,
	BRIDGE_SPB_NDEATH
};

/* One metric of a command: the metric it writes and its value as the text
 * pbus_client_parse() reads, with the id that names it in the journal; or
 * a refusal (@error non-empty). */
struct bridge_spb_write {
	size_t metric;                /* SIZE_MAX: unknown */
	char *text;                   /* malloc'd, or NULL when refused */
	char id[BRIDGE_ID_MAX + 1];
	char error[256];
};

struct bridge_spb_command {
	uint64_t timestamp;           /* the payload's */
	bool rebirth;                 /* NCMD: 'Node Control/Rebirth' = true */
	struct bridge_spb_write *writes;
	size_t count;
};

struct bridge_spb;

/* The encoder of edge node @node of @group with one device @device, whose
 * primary host is @host (NULL: none). -EINVAL if an ID holds '/', '+',
 * '#' or a control character, or is empty; -ENOMEM. Freed with
 * bridge_spb_free() (NULL accepted). One thread at a time. */
int bridge_spb_new(const char *group, const char *node, const char *device, const char *host,
		   struct bridge_spb **ret);
void bridge_spb_free(struct bridge_spb *s);
bool bridge_spb_id_ok(const char *id);
/* A topic (the subscriptions' filters, STATE, NDEATH); owned by @s. */
const char *bridge_spb_topic(const struct bridge_spb *s, enum bridge_spb_topic which);
/* The Sparkplug datatype of a parambus type (docs/fleet.md), 0 if none. */
uint32_t bridge_spb_datatype(unsigned type);
/* Build the metrics (once per schema: the only allocation). 0, -EINVAL
 * (a type without a datatype), -ENOMEM. Values are cleared. */
int bridge_spb_prepare(struct bridge_spb *s, const struct bridge_spb_metric_def *defs, size_t count);
/* Metric @i's value: @raw in parambus's stored encoding (@length bytes),
 * @label an enum's label; copied, no allocation. 0, -EINVAL, -EMSGSIZE. */
int bridge_spb_set_value(struct bridge_spb *s, size_t i, const void *raw, size_t length, const char *label,
			 uint32_t status, uint64_t timestamp_ns);
/* The messages. NBIRTH sets seq to 0; DBIRTH, DDATA and DDEATH take the
 * next seq (255 wraps to 0); NDEATH has none. DDATA carries the metrics
 * @which (by alias), -ENODATA if none has a value. 0 or -ENOMEM. */
int bridge_spb_nbirth(struct bridge_spb *s, uint64_t bdseq, uint64_t now_ms, struct bridge_spb_message *ret);
int bridge_spb_ndeath(struct bridge_spb *s, uint64_t bdseq, uint64_t now_ms, struct bridge_spb_message *ret);
int bridge_spb_dbirth(struct bridge_spb *s, uint64_t now_ms, struct bridge_spb_message *ret);
int bridge_spb_ddata(struct bridge_spb *s, const size_t *which, size_t n, uint64_t now_ms,
		     struct bridge_spb_message *ret);
int bridge_spb_ddeath(struct bridge_spb *s, uint64_t now_ms, struct bridge_spb_message *ret);
/* What a received topic is for this edge node. */
enum bridge_spb_topic bridge_spb_topic_kind(const struct bridge_spb *s, const char *topic);
size_t bridge_spb_metric_by_alias(const struct bridge_spb *s, uint64_t alias);
/* Decode an NCMD or DCMD payload (@kind). 0 (each write then accepted or
 * refused on its own), or -EINVAL with a one-line reason in @error for the
 * whole payload, or -ENOMEM. The caller frees with bridge_spb_command_fini(). */
int bridge_spb_decode_command(const struct bridge_spb *s, enum bridge_spb_topic kind, const void *data,
			      size_t length, struct bridge_spb_command *ret, char *error, size_t size);
void bridge_spb_command_fini(struct bridge_spb_command *c);
/* Decode a STATE payload {"online": bool, "timestamp": ms}. 0 or -EINVAL
 * (@error). Any thread. */
int bridge_spb_decode_state(const void *data, size_t length, bool *ret_online, uint64_t *ret_timestamp,
			    char *error, size_t size);

/* The RFC 3339 UTC text of @ns (CLOCK_REALTIME), nanoseconds included, into
 * @buf (at least 40 bytes). */
void bridge_time_text(uint64_t ns, char *buf, size_t size);
const char *bridge_status_name(uint32_t status);

#endif
