/* SPDX-License-Identifier: MIT */
/*
 * parambus/table.h: the shared-memory parameter table, seen by its users.
 *
 * An instrument instance ("psu1") is one shared-memory segment created by
 * pbusd from a compiled schema. Any process opens it by name, looks up
 * parameters by name or index once, then reads and writes them.
 *
 *   struct pbus_table *t;
 *   const struct pbus_param *v;
 *   double volts;
 *   if (pbus_table_open("psu1", PBUS_OPEN_READ, &t) < 0 ||
 *       pbus_table_find(t, "measured_voltage", &v) < 0) ...
 *   pbus_param_get_double(v, &volts);       // lock-free, no system call
 *   pbus_table_close(t);
 *
 * Reads take no lock and make no system call; they never return a torn
 * value, a writer cannot starve them and a writer that died mid-write cannot
 * block them (docs/segment-format.md gives the protocol and the argument).
 * Writes take a per-parameter lock that a dead holder cannot wedge.
 *
 * Threads: a table is immutable after pbus_table_open(), so every function
 * on a table or its parameters may be called from any number of threads at
 * once, including reads and writes of the same parameter. A struct
 * pbus_watch, like a struct pbus_batch, is used by one thread at a time.
 */
#ifndef PARAMBUS_TABLE_H
#define PARAMBUS_TABLE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_table;
struct pbus_watch;

/* How a table is opened. */
enum pbus_open_flag {
	/* Read values, wait for changes. The segment is mapped read-only. */
	PBUS_OPEN_READ = 0,
	/* Also write parameters that are not read-only (a client). */
	PBUS_OPEN_WRITE = 1u << 0,
	/* Also write read-only parameters: the instrument's own code, which
	 * produces measurements and identity. Implies PBUS_OPEN_WRITE. */
	PBUS_OPEN_PROVIDER = (1u << 1) | (1u << 0)
};

/* The life of an instance as a reader sees it (pbus_table_state()). */
enum pbus_table_state {
	PBUS_TABLE_LIVE = 1,     /* pbusd runs and owns this segment */
	PBUS_TABLE_CLOSED = 2,   /* pbusd shut down cleanly; values are the last ones */
	PBUS_TABLE_REPLACED = 3, /* a restarted pbusd made a new segment: reopen */
	PBUS_TABLE_ORPHANED = 4  /* pbusd died; values are stale until it restarts */
};

/*
 * A parameter resolved by pbus_table_param() or pbus_table_find(). It lives
 * inside its table and stays valid until pbus_table_close(). Its fields are
 * private: they exist so that the readers below can be inlined (a function
 * call costs more than the read itself). Use the functions.
 *
 * It may be copied: the fields never change while the table is open, so a
 * copy (struct pbus_param mine = *param) reads, writes and describes the
 * same parameter and is valid exactly as long as the original. An array of
 * copies of your own saves a dependent load on every read against an array
 * of pointers; the generated bindings (pbus-gen) hold theirs that way.
 */
struct pbus_param {
	const unsigned char *slot_; /* the value slot in the mapped segment */
	uint32_t copy_stride_;      /* bytes from copy 0 to copy 1 */
	uint32_t value_size_;       /* capacity of the value in bytes */
	uint32_t index_;
	uint8_t type_;
	uint8_t copy_count_;        /* 2 (always, for scalars) or 4 */
	uint16_t flags_;            /* the descriptor's flags, and PBUS_PARAM_ANY_BITS_ */
	struct pbus_table *table_;
};

/* A parameter's flags (enum pbus_param_flag: PBUS_PARAM_READONLY,
 * PBUS_PARAM_PERSISTENT, PBUS_PARAM_NOREAD ...), its type (enum pbus_type,
 * with PBUS_TYPE_ARRAY_FLAG) and the capacity of its value in bytes; the
 * rest is in pbus_param_describe(). Cheap: fields of @param itself. */
static inline unsigned pbus_param_flags(const struct pbus_param *param)
{
	return param->flags_ & 0xffu;
}

static inline unsigned pbus_param_type(const struct pbus_param *param)
{
	return param->type_;
}

static inline uint32_t pbus_param_value_size(const struct pbus_param *param)
{
	return param->value_size_;
}

/* What comes with a value besides its bytes. */
struct pbus_sample {
	uint64_t timestamp_ns; /* CLOCK_REALTIME of the write, ns since the epoch */
	uint64_t seq;          /* version: grows by one per write, 0 = initial */
	uint32_t status;       /* enum pbus_status */
	uint32_t length;       /* bytes of the value (strings, bytes, arrays) */
};

/*
 * Open the instance @instance ("psu1": letters, digits, '_', '-', '.'; at
 * most 48 bytes) with the access in @flags (enum pbus_open_flag).
 * -ENOENT: no such instance (is pbusd running?); -EACCES: the segment's
 * permissions refuse the access asked for; -EPERM: the segment belongs to
 * a user this process does not trust to own instances (root, itself, or a
 * user named in $PBUS_OWNER: docs/security.md) or others may write it;
 * -EPROTO: not a parambus segment, an unsupported format version, or not
 * this instance's. The caller owns *ret_table and frees it with
 * pbus_table_close().
 */
PBUS_API int pbus_table_open(const char *instance, unsigned flags,
			     struct pbus_table **ret_table);

/* Unmap and free. Parameters and watches of the table become invalid;
 * free the watches first. Accepts NULL. */
PBUS_API void pbus_table_close(struct pbus_table *table);

/* The instance name, the interface and the schema hash. Strings are valid
 * until pbus_table_close(). */
PBUS_API const char *pbus_table_instance(const struct pbus_table *table);
PBUS_API const char *pbus_table_interface(const struct pbus_table *table,
					  unsigned *ret_major, unsigned *ret_minor);
PBUS_API uint64_t pbus_table_schema_hash(const struct pbus_table *table);
PBUS_API uint32_t pbus_table_param_count(const struct pbus_table *table);

/* The process id of the instance's owner (pbusd), as the segment records
 * it; whether it still runs is pbus_table_state()'s business. */
PBUS_API int pbus_table_owner_pid(const struct pbus_table *table);

/* The access the table was opened with (enum pbus_open_flag). */
PBUS_API unsigned pbus_table_flags(const struct pbus_table *table);

/*
 * The instance's state (enum pbus_table_state), or -errno. Checks whether
 * pbusd still lives, so it makes a few system calls: call it when a value
 * looks old, or once a second, not per read. On REPLACED, open the instance
 * again to see the new segment.
 */
PBUS_API int pbus_table_state(const struct pbus_table *table);

/*
 * Whether the segment is still the instance's: false once pbusd shut down
 * (PBUS_TABLE_CLOSED) or a new pbusd replaced it (PBUS_TABLE_REPLACED),
 * true otherwise. One load from the segment and no system call, so it may
 * be asked before every read; the price is that a pbusd that died without
 * closing is not noticed (pbus_table_state() says PBUS_TABLE_ORPHANED):
 * for a reader that has another way to notice that, such as its
 * connection to pbusd (pbus-scpi). False for NULL. Thread-safe.
 */
PBUS_API bool pbus_table_current(const struct pbus_table *table);

/* Look a parameter up by index (0 … count-1) or by its full name. The
 * parameter is valid until pbus_table_close(). -ENOENT if absent. */
PBUS_API int pbus_table_param(const struct pbus_table *table, uint32_t index,
			      const struct pbus_param **ret_param);
PBUS_API int pbus_table_find(const struct pbus_table *table, const char *name,
			     const struct pbus_param **ret_param);

/* --- The schema of one parameter ----------------------------------------- */

union pbus_number {
	int64_t i; /* signed integer types, enum */
	uint64_t u; /* unsigned integer types, bool */
	double d;  /* float, double */
};

struct pbus_param_info {
	const char *name;        /* "voltage_setpoint" */
	const char *unit;        /* "V", or "" */
	const char *description; /* or "" */
	const char *group;       /* Unix group allowed to write, or "" */
	uint32_t index;
	unsigned type;         /* enum pbus_type */
	unsigned flags;        /* enum pbus_param_flag */
	unsigned update_class; /* enum pbus_update_class */
	uint32_t value_size;   /* capacity in bytes */
	uint32_t element_size; /* bytes per element: scalars, arrays; 1 for text */
	uint32_t enum_count;   /* enumerators, for enum parameters */
	union pbus_number min, max, step; /* valid where flags say HAS_* */
	const void *default_value; /* valid where HAS_DEFAULT */
	uint32_t default_length;
};

/*
 * What the schema says of a parameter. These functions are shorthands for
 * the table's schema view (parambus/view.h, pbus_table_view()) at the
 * parameter's index, with the same answers and error codes; a program that
 * also talks to pbusd can use the view for both.
 */

/* Fill *ret_info; its strings are valid until pbus_table_close().
 * pbus_view_describe(pbus_table_view(table), index, ret_info). */
PBUS_API int pbus_param_describe(const struct pbus_param *param,
			     struct pbus_param_info *ret_info);

/* The parameter's name; valid until pbus_table_close(). */
PBUS_API const char *pbus_param_name(const struct pbus_param *param);

/* Enumerators of an enum parameter: the i-th label and value, and the two
 * directions of lookup. -ENOENT if absent, -EINVAL if not an enum.
 * pbus_view_enumerator(), pbus_view_enum_value(), pbus_view_enum_label(). */
PBUS_API int pbus_param_enumerator(const struct pbus_param *param, uint32_t i,
				   const char **ret_label, int32_t *ret_value);
PBUS_API int pbus_param_enum_value(const struct pbus_param *param,
				   const char *label, int32_t *ret_value);
PBUS_API int pbus_param_enum_label(const struct pbus_param *param,
				   int32_t value, const char **ret_label);

/* --- Reading -------------------------------------------------------------- */

/*
 * Read any parameter: copy up to @size bytes of its value into @buf and, if
 * @ret_sample is not NULL, its timestamp, version, status and length.
 * Returns the value's status (enum pbus_status, >= 0) or -errno; -EMSGSIZE
 * (and nothing copied) if @size is smaller than the value. Lock-free.
 */
PBUS_API int pbus_param_read(const struct pbus_param *param, void *buf, size_t size,
			     struct pbus_sample *ret_sample);

/* A string parameter as a NUL-terminated string; -EMSGSIZE if @size cannot
 * hold it and its NUL. Returns the status as pbus_param_read(). */
PBUS_API int pbus_param_get_string(const struct pbus_param *param, char *buf,
				   size_t size);

/* The version of the value (pbus_sample.seq) without reading it. */
PBUS_API uint64_t pbus_param_seq(const struct pbus_param *param);

/* --- Writing -------------------------------------------------------------- */

/* One write of a batch (pbus_table_write_many()); also used by the single
 * setters. */
struct pbus_write {
	uint32_t index;        /* the parameter */
	uint32_t status;       /* enum pbus_status to store with the value */
	uint64_t timestamp_ns; /* CLOCK_REALTIME ns; 0 means now */
	const void *value;     /* the value in its stored encoding (see docs) */
	size_t length;         /* bytes at value */
	int result;            /* out: 0, or why this write was refused */
	uint64_t seq;          /* out: the version the write produced */
};

/*
 * Check every write (access, type, length, range, step alignment is not
 * enforced, enum membership), then, only if all pass, claim every parameter
 * and apply them all (in parameter order; writes of one parameter in the
 * batch's order). All or nothing: returns 0, or the first refusal's -errno
 * with every write's own result in .result and no value changed; that
 * includes -EBUSY, a parameter that a writer which stopped (a debugger,
 * SIGSTOP) held for a second, named by its .result. Each parameter changes
 * atomically; the batch is not one snapshot for readers (each value is
 * consistent on its own).
 */
PBUS_API int pbus_table_write_many(struct pbus_table *table, struct pbus_write *writes,
				   size_t count);

/*
 * A prepared batch: a fixed list of scalar parameters that one loop writes
 * together, pass after pass (a measurement loop's outputs). Whatever does
 * not depend on the values (the parameters, their types, the access) is
 * checked once by pbus_batch_new(); each pbus_batch_write() then checks only
 * the values, and writes them all with one clock reading and one waiter
 * handshake. A 200-parameter pass costs a few ns a parameter, against the
 * clock reading alone (10-20 ns) for each typed setter call.
 *
 * The values come from one record of the caller's own layout, usually a C
 * struct or an array: field i is at @fields[i].offset, in the parameter's
 * stored encoding (bool: one byte 0 or 1; enum: int32_t; integers and
 * floats: their C type), naturally aligned.
 */
struct pbus_batch;

struct pbus_batch_field {
	const struct pbus_param *param; /* scalar: not a string, bytes or array */
	size_t offset;                  /* of its value in the record */
};

/*
 * Prepare a batch of @count (>= 1) fields of @table. -EINVAL: a field's
 * parameter is not a scalar of this table, or its offset is misaligned;
 * -EACCES: a parameter is read-only (and @table was not opened as
 * provider) or @table was opened for reading; -ENOMEM. A parameter may
 * appear more than once (its writes happen in order). The caller owns
 * *ret_batch and frees it with pbus_batch_free() before closing @table.
 */
PBUS_API int pbus_batch_new(struct pbus_table *table, const struct pbus_batch_field *fields,
			    size_t count, struct pbus_batch **ret_batch);
PBUS_API void pbus_batch_free(struct pbus_batch *batch);

/*
 * Check every value of @record (limits, enum membership, bools) and every
 * status, then, only if all pass, write them in field order, each with
 * @timestamp_ns (0: now, one reading for the batch) and its status
 * (@status[i], or PBUS_STATUS_OK for all if @status is NULL). Returns 0;
 * -EINVAL: no batch or record, a status above PBUS_STATUS_INVALID, or a
 * bool that is not 0 or 1; -ERANGE: a value outside its limits or not an enumerator (the
 * statuses are checked first, then the values in field order; the first
 * refusal is returned and nothing is written); -ESTALE: the instance is
 * gone; -EBUSY: a writer stopped while holding a parameter (after one
 * second); nothing is written then either.
 * Each parameter changes atomically; readers may see the pass half done.
 * Threads: one thread at a time per batch (any number of batches at once).
 */
PBUS_API int pbus_batch_write(struct pbus_batch *batch, const void *record,
			      const uint32_t *status, uint64_t timestamp_ns);

/*
 * The same pass without the all-or-nothing rule, for a loop whose values
 * are independent (no reader needs them as one): the same checks first
 * (nothing is written if one fails), then each field in field order,
 * claimed, published and let go on its own, as that many typed setter
 * calls would, but with one clock reading and one waiter handshake. A
 * parameter that a stopped writer holds ends the pass with -EBUSY (after
 * one second), the fields before it written; -ESTALE likewise. *ret_written
 * (if not NULL) is how many fields, from the first, were written: all of
 * them when it returns 0. Cheaper than pbus_batch_write() when another
 * thread writes some of the same parameters, because no parameter is held
 * while another is claimed.
 * Threads: as pbus_batch_write().
 */
PBUS_API int pbus_batch_write_each(struct pbus_batch *batch, const void *record,
				   const uint32_t *status, uint64_t timestamp_ns,
				   size_t *ret_written);

/* Write one parameter (value in its stored encoding), status ok, now. */
PBUS_API int pbus_param_set(const struct pbus_param *param, const void *value,
			    size_t length);

/* Typed setters: -EINVAL if the parameter has another type, -ERANGE outside
 * its limits, -EACCES if read-only (and not opened as provider) or the table
 * was opened for reading. */
PBUS_API int pbus_param_set_bool(const struct pbus_param *param, bool value);
PBUS_API int pbus_param_set_int8(const struct pbus_param *param, int8_t value);
PBUS_API int pbus_param_set_int16(const struct pbus_param *param, int16_t value);
PBUS_API int pbus_param_set_int32(const struct pbus_param *param, int32_t value);
PBUS_API int pbus_param_set_int64(const struct pbus_param *param, int64_t value);
PBUS_API int pbus_param_set_uint8(const struct pbus_param *param, uint8_t value);
PBUS_API int pbus_param_set_uint16(const struct pbus_param *param, uint16_t value);
PBUS_API int pbus_param_set_uint32(const struct pbus_param *param, uint32_t value);
PBUS_API int pbus_param_set_uint64(const struct pbus_param *param, uint64_t value);
PBUS_API int pbus_param_set_float(const struct pbus_param *param, float value);
PBUS_API int pbus_param_set_double(const struct pbus_param *param, double value);
PBUS_API int pbus_param_set_enum(const struct pbus_param *param, int32_t value);
PBUS_API int pbus_param_set_string(const struct pbus_param *param, const char *value);
PBUS_API int pbus_param_set_bytes(const struct pbus_param *param, const void *value,
				  size_t length);

/* --- Text ----------------------------------------------------------------- */

/*
 * Parse @text as a value of the parameter ("3.3", "true", "ON", "a,b,c" for
 * arrays, hex for bytes) into @buf in its stored encoding; *ret_length gets
 * its length. Checks the type and the limits: -EINVAL malformed, -ERANGE out
 * of limits, -EMSGSIZE too long. pbus_view_parse() of the table's view.
 */
PBUS_API int pbus_param_parse(const struct pbus_param *param, const char *text,
			      void *buf, size_t size, size_t *ret_length);

/* Format a value in its stored encoding as text, snprintf-style: returns the
 * length the full text needs (without NUL), writes at most @size bytes.
 * pbus_view_format() of the table's view. */
PBUS_API int pbus_param_format(const struct pbus_param *param, const void *value,
			       size_t length, char *buf, size_t size);

/* --- Waiting for changes -------------------------------------------------- */

/*
 * A watch over @count parameters (@indexes), or over every parameter if
 * @count is 0. It remembers the versions it has seen. Waiting costs no
 * polling: the waiter sleeps on a futex that writers wake only while
 * somebody watches what they wrote. Free with pbus_watch_free().
 */
PBUS_API int pbus_watch_new(struct pbus_table *table, const uint32_t *indexes,
			    size_t count, struct pbus_watch **ret_watch);
PBUS_API void pbus_watch_free(struct pbus_watch *watch);

/*
 * Sleep until a watched parameter has changed since the watch last saw it,
 * or @timeout_ns passes (negative: no timeout; 0: just check). Returns the
 * number of changed parameters (> 0), -ETIMEDOUT, -EINTR if a signal
 * arrived or pbus_watch_interrupt() was called, or -ESTALE if the instance
 * was closed or replaced.
 */
PBUS_API int pbus_watch_wait(struct pbus_watch *watch, int64_t timeout_ns);

/*
 * Make the pbus_watch_wait() that another thread is in (or the next one)
 * return -EINTR at once. The one call on a watch that may come from any
 * thread, while the watch exists.
 */
PBUS_API void pbus_watch_interrupt(struct pbus_watch *watch);

/* The changes found by the last pbus_watch_wait(), one index per call:
 * returns 1 and fills *ret_index, or 0 when there are no more. */
PBUS_API int pbus_watch_next(struct pbus_watch *watch, uint32_t *ret_index);

/* --- Inline readers -------------------------------------------------------
 *
 * The fast path. Each returns the value's status (enum pbus_status, >= 0)
 * or -EINVAL if the parameter has another type; no lock, no system call.
 * They follow the read protocol of docs/segment-format.md ("Reading"):
 * read the version, read the copy it names, read the version again, retry
 * only if a write completed meanwhile.
 */

/* Wire offsets used by the readers (docs/segment-format.md, "Slots"). */
#define PBUS_SLOT_SEQ_OFFSET 0
#define PBUS_SLOT_COPY0_OFFSET 16
#define PBUS_COPY_TIMESTAMP_OFFSET 0
#define PBUS_COPY_STATUS_OFFSET 8
#define PBUS_COPY_LENGTH_OFFSET 12
#define PBUS_COPY_VALUE_OFFSET 16
/* A scalar's copy: the 16-byte head and the value padded to 8 bytes. */
#define PBUS_SCALAR_COPY_STRIDE 24

/*
 * Memory ordering of the protocol's data accesses. Normally the value is
 * loaded relaxed and one acquire fence orders it before the version's
 * re-read. ThreadSanitizer does not model fences, so under it every data
 * load is an acquire load and every data store a release store instead:
 * stronger, and the same protocol.
 */
#if defined(__SANITIZE_THREAD__)
#define PBUS_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PBUS_TSAN_ 1
#endif
#endif
#ifdef PBUS_TSAN_
#define PBUS_DATA_LOAD_ORDER_ __ATOMIC_ACQUIRE
#define PBUS_DATA_STORE_ORDER_ __ATOMIC_RELEASE
#define PBUS_READ_FENCE_() ((void)0)
#define PBUS_WRITE_FENCE_() ((void)0)
#else
#define PBUS_DATA_LOAD_ORDER_ __ATOMIC_RELAXED
#define PBUS_DATA_STORE_ORDER_ __ATOMIC_RELAXED
#define PBUS_READ_FENCE_() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define PBUS_WRITE_FENCE_() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/*
 * The read protocol for values of 1, 2, 4 or 8 bytes, which always have two
 * copies (the value in copy seq & 1). @size is a constant in
 * every caller, so after inlining only one load of the switch remains. The
 * value is loaded with one atomic load of its own width, so even an
 * unsynchronised copy could not tear it; the version check is what makes the
 * value and its status belong to the same write. The value comes back in
 * *@ret zero-extended, so that the caller takes its bytes in whichever
 * register it needs (a double read as bits never passes through a vector
 * register), and the status is the field's low byte (docs/segment-format.md
 * §2.5: a writer stores 0 to 3), so the compiler knows it is not negative.
 * The segment is little-endian; so must the host be.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "parambus maps its little-endian segment directly: a little-endian host is required"
#endif
static inline int pbus_param_read_scalar_(const struct pbus_param *param, unsigned type,
					  uint64_t *ret, unsigned size)
{
	const unsigned char *slot = param->slot_;
	const uint64_t *seqp = (const uint64_t *)(const void *)(slot + PBUS_SLOT_SEQ_OFFSET);
	uint64_t s1, v64 = 0, retry;
	const unsigned char *copy;
	const void *value;
	uint8_t v8 = 0;
	uint16_t v16 = 0;
	uint32_t v32 = 0, status;
	int r;

	if (param->type_ != type)
		return -EINVAL;
	s1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
	copy = slot + PBUS_SLOT_COPY0_OFFSET + (s1 & 1u) * PBUS_SCALAR_COPY_STRIDE;
	value = copy + PBUS_COPY_VALUE_OFFSET;
	switch (size) {
	case 1: v8 = __atomic_load_n((const uint8_t *)value, PBUS_DATA_LOAD_ORDER_); break;
	case 2: v16 = __atomic_load_n((const uint16_t *)value, PBUS_DATA_LOAD_ORDER_); break;
	case 4: v32 = __atomic_load_n((const uint32_t *)value, PBUS_DATA_LOAD_ORDER_); break;
	default: v64 = __atomic_load_n((const uint64_t *)value, PBUS_DATA_LOAD_ORDER_); break;
	}
	status = __atomic_load_n((const uint8_t *)(copy + PBUS_COPY_STATUS_OFFSET),
				 PBUS_DATA_LOAD_ORDER_);
	PBUS_READ_FENCE_();
	if (__builtin_expect(__atomic_load_n(seqp, __ATOMIC_RELAXED) != s1, 0)) {
		/* A write completed meanwhile: this copy may be reused. The
		 * out-of-line reader retries, and after a few misses takes a
		 * reader's turn (docs/segment-format.md §4.5), so no writer can
		 * starve it. It reads into a variable of its own, so that the
		 * caller's stays in a register on this path. */
		retry = 0; /* zero-extended, as the loads below */
		r = pbus_param_read(param, &retry, size, (struct pbus_sample *)0);
		*ret = retry;
		return r;
	}
	switch (size) {
	case 1: *ret = v8; break;
	case 2: *ret = v16; break;
	case 4: *ret = v32; break;
	default: *ret = v64; break;
	}
	return (int)status;
}

static inline int pbus_param_get_bool(const struct pbus_param *param, bool *ret)
{
	uint64_t raw;
	int r = pbus_param_read_scalar_(param, PBUS_TYPE_BOOL, &raw, 1);
	if (r >= 0)
		*ret = raw != 0;
	return r;
}

#define PBUS_DEFINE_INLINE_GETTER_(suffix, ctype, type_code)                             \
	static inline int pbus_param_get_##suffix(const struct pbus_param *param, ctype *ret) \
	{                                                                                \
		uint64_t bits;                                                           \
		int r = pbus_param_read_scalar_(param, type_code, &bits, (unsigned)sizeof(ctype)); \
		if (r >= 0)                                                              \
			__builtin_memcpy(ret, &bits, sizeof(ctype));                    \
		return r;                                                                \
	}

PBUS_DEFINE_INLINE_GETTER_(int8, int8_t, PBUS_TYPE_INT8)
PBUS_DEFINE_INLINE_GETTER_(int16, int16_t, PBUS_TYPE_INT16)
PBUS_DEFINE_INLINE_GETTER_(int32, int32_t, PBUS_TYPE_INT32)
PBUS_DEFINE_INLINE_GETTER_(int64, int64_t, PBUS_TYPE_INT64)
PBUS_DEFINE_INLINE_GETTER_(uint8, uint8_t, PBUS_TYPE_UINT8)
PBUS_DEFINE_INLINE_GETTER_(uint16, uint16_t, PBUS_TYPE_UINT16)
PBUS_DEFINE_INLINE_GETTER_(uint32, uint32_t, PBUS_TYPE_UINT32)
PBUS_DEFINE_INLINE_GETTER_(uint64, uint64_t, PBUS_TYPE_UINT64)
PBUS_DEFINE_INLINE_GETTER_(float, float, PBUS_TYPE_FLOAT)
PBUS_DEFINE_INLINE_GETTER_(double, double, PBUS_TYPE_DOUBLE)
PBUS_DEFINE_INLINE_GETTER_(enum, int32_t, PBUS_TYPE_ENUM)

#ifdef __cplusplus
}
#endif

#endif
