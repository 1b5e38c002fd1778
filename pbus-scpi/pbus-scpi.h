/* SPDX-License-Identifier: MIT */
/*
 * pbus-scpi.h: the private header of pbus-scpi, the SCPI shell of a
 * parambus instance (docs/scpi.md, "The daemon"). main.c owns the sockets
 * and the epoll loop; execute.c runs parsed program messages against
 * pbusd through its client and keeps each session's IEEE 488.2 state;
 * table.c reads the values queries answer from the instance's table.
 *
 * Threads: one. Ownership: struct scpi_server owns the pbusd client, the
 * tree, the parameter descriptions and the table mapped for queries; each
 * struct scpi_session (one per TCP client) owns its parser.
 */
#ifndef PBUS_SCPI_DAEMON_H
#define PBUS_SCPI_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <parambus/client.h>
#include <parambus/rpc.h>
#include <parambus/table.h>

#include "scpi.h"

#define SCPI_ERROR_QUEUE 16     /* SCPI-99 21.8: at least 10 */
#define SCPI_ERROR_DETAIL 160
#define SCPI_MAX_COMMANDS 64
#define SCPI_MAX_ARGS 1024
#define SCPI_RESPONSE_MAX (1u << 20) /* one response line */

/* The commands pbus-scpi adds to the tree (not parameters): their "index"
 * in the tree is above any schema index. */
enum scpi_builtin {
	SCPI_BUILTIN_FIRST = 0xffffff00u,
	SCPI_BUILTIN_ERROR_NEXT = SCPI_BUILTIN_FIRST,
	SCPI_BUILTIN_ERROR_COUNT,
	SCPI_BUILTIN_VERSION,
	/* STATus:QUEStionable[:EVENt]?, :CONDition?, :ENABle, :PTRansition,
	 * :NTRansition, then the same for STATus:OPERation (in the order of
	 * enum scpi_register_part) */
	SCPI_BUILTIN_QUES,
	SCPI_BUILTIN_OPER = SCPI_BUILTIN_QUES + 5,
	SCPI_BUILTIN_PRESET = SCPI_BUILTIN_OPER + 5,
};

enum scpi_register_part { SCPI_PART_EVENT, SCPI_PART_CONDITION, SCPI_PART_ENABLE, SCPI_PART_PTR,
			  SCPI_PART_NTR };

/* The two SCPI-99 register sets, as indexes of the arrays below. */
enum { SCPI_REG_QUES = 0, SCPI_REG_OPER = 1 };

/* One session's part of a status register set (SCPI-99 9.3): the event
 * register and its enable, and the transition filters. Bit 15 is never
 * set. */
struct scpi_register {
	uint16_t event, enable, ptr, ntr;
};

struct scpi_call; /* a method call in flight (method.c) */

struct scpi_server {
	struct pbus_client *client;
	struct pbus_scpi_tree *tree;
	uint32_t param_count;             /* the schema's */
	struct pbus_param_info *info;     /* [param_count], from the client's schema */
	uint32_t identity[4];             /* *IDN? fields; UINT32_MAX when absent */
	size_t max_line;
	/* The batch of settings being gathered (scratch for one message). */
	struct pbus_write *writes;
	size_t write_count;
	unsigned char *data;              /* the writes' values */
	size_t data_used, data_size;
	/* The status model (status.c): the condition registers, shared. */
	uint16_t condition[2];                   /* [SCPI_REG_QUES], [SCPI_REG_OPER] */
	struct pbus_scpi_status_source *status;  /* [status_count]: the tree's sources */
	bool *source_met;                        /* [status_count]: its condition holds now */
	size_t status_count;
	uint32_t status_subscription;
	struct scpi_session *sessions;           /* every session, for their event registers */
	/* Methods (method.c): NULL proxy when the tree has no method commands. */
	struct pbus_rpc_interface *itf;
	struct pbus_loop *loop;
	struct pbus_proxy *proxy;
	char address[PBUS_RPC_ADDRESS_MAX + 1];  /* local:INSTANCE:INTERFACE */
	unsigned call_timeout_ms;
	struct scpi_call *calls;                 /* every call in flight, orphans too */
	/* Queries (table.c): the instance's table, mapped read-only; NULL
	 * while it cannot be (then they ask pbusd). */
	char instance[64];
	struct pbus_table *table;
	int table_error;                         /* why the last open failed, or 0 */
	int64_t table_retry_ns;                  /* CLOCK_MONOTONIC: the next open after a failure */
	unsigned char *table_value;              /* [table_value_size]: the last value read */
	size_t table_value_size;
	uint64_t table_opens, table_reads, socket_reads;
};

struct scpi_error {
	int code;
	char detail[SCPI_ERROR_DETAIL];
};

/* A growing response line, at most SCPI_RESPONSE_MAX bytes. */
struct scpi_response {
	char *data;
	size_t length, capacity;
	size_t parts;   /* responses in this line so far */
	bool overflow;
};

enum scpi_exec_result { SCPI_EXEC_DONE, SCPI_EXEC_WAITING };

/* What a suspended program message waits for. */
enum scpi_wait {
	SCPI_WAIT_NONE,
	SCPI_WAIT_CALL,  /* the reply of a query method (session->awaited) */
	SCPI_WAIT_IDLE,  /* no pending operation (*OPC?, *WAI) */
};

struct scpi_session {
	struct pbus_scpi_parser *parser;
	struct scpi_error errors[SCPI_ERROR_QUEUE];
	size_t error_first, error_count;
	uint8_t esr, ese, sre;
	bool psc;
	struct scpi_register reg[2];  /* [SCPI_REG_QUES], [SCPI_REG_OPER] */
	struct scpi_session *next;    /* in scpi_server.sessions */
	/* Told when the session's status byte may have changed (after each
	 * program message, and by the status registers): HiSLIP sends its
	 * service requests from it (hislip.c). NULL when nobody listens. */
	void (*status_changed)(struct scpi_session *session, void *userdata);
	void *status_userdata;
	/* Pending operations (IEEE 488.2 12.5): the method calls in flight. */
	size_t pending;
	bool opc_armed;               /* *OPC: set ESR bit 0 when pending reaches 0 */
	/* The program message being run: its response line, and when it
	 * waits, a copy of it (re-parsed on resume) and where it stopped. */
	struct scpi_response line;
	enum scpi_wait wait;
	struct scpi_call *awaited;    /* SCPI_WAIT_CALL: its call, NULL once answered */
	bool call_failed;             /* the awaited call failed: the message ends */
	char *held;
	size_t held_length, held_capacity;
	size_t resume_at;             /* the command to go on with */
	/* Told (from the method loop) when a waiting message can go on: the
	 * transport then calls scpi_resume(), outside its own read path. */
	void (*resume)(struct scpi_session *session, void *userdata);
	void *resume_userdata;
};

int scpi_server_init(struct scpi_server *server, struct pbus_client *client,
		     struct pbus_scpi_tree *tree, size_t max_line);
void scpi_server_fini(struct scpi_server *server);

/* The tree text with pbus-scpi's own commands appended (malloc'd). */
char *scpi_tree_text_with_builtins(const char *text, size_t length, size_t *ret_length);

/* A session's parser and state, registered with @server for the status
 * model; _fini unregisters it. */
int scpi_session_init(struct scpi_session *session, struct scpi_server *server);
void scpi_session_fini(struct scpi_session *session, struct scpi_server *server);

/* --- table.c: the values of queries --- */

/* Map @instance's table read-only for queries (if it cannot be, they ask
 * pbusd, and the table is tried again later). 0, or -ENOMEM. */
int scpi_table_init(struct scpi_server *server, const char *instance);
void scpi_table_fini(struct scpi_server *server);
/* Parameter @index's value, status and version, as pbus_client_get() of
 * one parameter answers it (the same errors): from the table when the
 * socket would give the same (not a noread parameter, pbusd connected,
 * the segment the one it serves), else from pbusd. ret->value is valid
 * until the next call of this or of a request on the client. */
int scpi_read(struct scpi_server *server, uint32_t index, struct pbus_client_value *ret);

/* --- net.c: the TCP side of both transports --- */

/* A non-blocking listening socket on @addr; *ret_port gets the port bound
 * (the kernel's pick for port 0). The descriptor, or -errno. */
int scpi_listen(const struct sockaddr *addr, socklen_t addr_len, unsigned *ret_port);
/* Take one client from @listen_fd: non-blocking, close-on-exec, TCP_NODELAY,
 * its "HOST:PORT" in @peer. The descriptor, or -1 when there is none now
 * (an unexpected failure is logged, naming the @what socket). */
int scpi_accept(int listen_fd, const char *what, char *peer, size_t peer_size);

/* --- status.c: STATus:QUEStionable and STATus:OPERation --- */

/* Follow the tree's status sources through one subscription to pbusd, at
 * most one notification per @interval_ms. 0, or pbus_client_subscribe()'s
 * error (then the conditions stay 0). */
int scpi_status_init(struct scpi_server *server, unsigned interval_ms);
void scpi_status_fini(struct scpi_server *server);
/* Take in the notifications that arrived (before a status query). */
void scpi_status_refresh(struct scpi_server *server);
void scpi_status_session_add(struct scpi_server *server, struct scpi_session *session);
void scpi_status_session_remove(struct scpi_server *server, struct scpi_session *session);
/* STATus:PRESet for one session. */
void scpi_status_preset(struct scpi_session *session);

/* The session's IEEE 488.2 status byte as *STB? reads it (MSS in bit 6,
 * MAV never: a response is not queued inside pbus-scpi). */
uint8_t scpi_session_stb(const struct scpi_session *session);

/* Queue an error (SCPI-99 21.8: a full queue's newest entry becomes -350)
 * and set its ESR bit. */
void scpi_session_error(struct scpi_session *session, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Run one program message (with its terminator); the response line, if
 * any query ran, is appended to @out with its "\n" once the message is
 * done. SCPI_EXEC_WAITING: the message waits (the session keeps a copy);
 * feed the session nothing until its resume callback, then scpi_resume(). */
enum scpi_exec_result scpi_execute(struct scpi_server *server, struct scpi_session *session,
				   const char *message, size_t length, struct scpi_response *out);
/* Go on with a waiting message; as scpi_execute(). */
enum scpi_exec_result scpi_resume(struct scpi_server *server, struct scpi_session *session,
				  struct scpi_response *out);
static inline bool scpi_session_waiting(const struct scpi_session *session)
{
	return session->wait != SCPI_WAIT_NONE;
}
/* Whether a waiting message may go on now. */
bool scpi_session_ready(const struct scpi_session *session);
/* Device clear (IEEE 488.2 5.8): a waiting message is dropped (a query
 * method's answer will not be sent), *OPC is disarmed; calls in flight
 * stay pending. */
void scpi_session_clear(struct scpi_session *session);
/* Queue a session's status change to whoever listens (status_changed). */
void scpi_session_notify(struct scpi_session *session);

/* Response building (execute.c), for method.c's answers. */
void scpi_out_begin(struct scpi_response *out);
void scpi_out_append(struct scpi_response *out, const char *text, size_t length);
/* A real as the shortest decimal that reads back (NR2 or NR3). */
void scpi_format_real(char *buf, size_t size, double value, bool is_float);

/* --- method.c: calls of the instrument's methods --- */

/* Make the proxy for @instance's interface when the tree has method
 * commands: 0, or a negative errno (logged; method commands then answer
 * -241). */
int scpi_methods_init(struct scpi_server *server, const char *instance, const char *socket_dir,
		      unsigned call_timeout_ms);
/* Free the proxy, the loop and every call still in flight. */
void scpi_methods_fini(struct scpi_server *server);
/* The loop's descriptor for epoll (-1 without methods), and its dispatch. */
int scpi_methods_fd(const struct scpi_server *server);
void scpi_methods_dispatch(struct scpi_server *server);
/* Start method command @c (flushes nothing: the caller did). A `set`
 * counts as pending until its reply; a `query` also becomes the session's
 * awaited call. 0, or a SCPI error code (queued). */
int scpi_method_start(struct scpi_server *server, struct scpi_session *session,
		      const struct pbus_scpi_command *c, const struct pbus_scpi_arg *args);
/* The session closes: its calls in flight are orphaned (their replies
 * dropped). */
void scpi_methods_session_gone(struct scpi_server *server, struct scpi_session *session);

#endif
