/* SPDX-License-Identifier: MIT */
/*
 * parambus/instance.h: creating and owning an instance. This is pbusd's side
 * of the table; an application only needs table.h.
 *
 * The owner creates the segment unpublished, fills it (defaults are written
 * by the library, the owner restores saved values), then publishes it: the
 * segment appears under its name atomically, fully initialised, and a
 * segment left by an earlier owner is marked REPLACED so that its readers
 * know to reopen. Only one owner per instance can exist at a time (a lock
 * held for the owner's life, released by the kernel if it dies).
 */
#ifndef PARAMBUS_INSTANCE_H
#define PARAMBUS_INSTANCE_H

#include <stdint.h>
#include <sys/types.h>

#include <parambus/schema.h>
#include <parambus/table.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_instance_options {
	/* Permission bits of the value segment: 0644 (default when 0) lets
	 * everybody read and the owner write; 0664 with @group also lets that
	 * group write. */
	unsigned mode;
	/* Group of the segment, or (gid_t)-1 to keep the creator's. */
	gid_t group;
};

/*
 * Create instance @instance from @schema, unpublished, and return the
 * owner's table (opened as PBUS_OPEN_PROVIDER) in *ret_table. Every
 * parameter holds its default (status ok) or zero (status invalid).
 * -EBUSY: another owner holds the instance; -EINVAL: bad name.
 */
PBUS_API int pbus_instance_create(const char *instance, const struct pbus_schema *schema,
				  const struct pbus_instance_options *options,
				  struct pbus_table **ret_table);

/* Make the segment visible under its name, replacing (and marking) any old
 * one. Call once, after restoring saved values. */
PBUS_API int pbus_instance_publish(struct pbus_table *owner);

/* Clean shutdown: mark the segment CLOSED, wake every waiter, remove the
 * names, and close the table. Accepts NULL. */
PBUS_API void pbus_instance_remove(struct pbus_table *owner);

/* Record that the value of parameter @index with version @seq is on disk
 * (pbusd's persistence). Wakes pbus_param_wait_saved() callers. */
PBUS_API int pbus_instance_mark_saved(struct pbus_table *owner, uint32_t index,
				      uint64_t seq);

/* The newest version of the parameter known to be saved (0: none since the
 * instance started). */
PBUS_API uint64_t pbus_param_saved_seq(const struct pbus_param *param);

/*
 * Wait until version @seq (or a newer one) of a persistent parameter is on
 * disk. Returns 0, -ETIMEDOUT, -EINTR, -ESTALE (instance closed or
 * replaced), -ESRCH (pbusd died: nothing will save it), or -EINVAL for a
 * parameter that is not persistent. @timeout_ns < 0: no timeout.
 */
PBUS_API int pbus_param_wait_saved(const struct pbus_param *param, uint64_t seq,
				   int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
