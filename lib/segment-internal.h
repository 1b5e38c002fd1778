/* SPDX-License-Identifier: MIT */
/*
 * segment-internal.h: an instance's files (segment.c): their paths, the complete
 * validation of a mapped value segment, and attaching the wake segment
 * (docs/segment-format.md §1-§3, §7).
 */
#ifndef PBUS_SEGMENT_INTERNAL_H
#define PBUS_SEGMENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct pbus_table;

#define PBUS_SHM_DIR "/dev/shm"
#define PBUS_SHM_PREFIX "pbus."

/* Is @name a valid instance name? */
bool pbus_instance_name_valid(const char *name);

/* Path of an instance's file in PBUS_SHM_DIR: "" suffix for the value
 * segment, ".wake", ".lock". -ENAMETOOLONG if it does not fit. */
int pbus_shm_path(char *buf, size_t size, const char *instance, const char *suffix);

/* Check a mapped value segment of @size bytes completely, so that nothing a
 * corrupt or hostile segment holds can send a reader outside the mapping.
 * -EPROTO with nothing touched if anything is wrong. */
int pbus_segment_validate(const unsigned char *base, size_t size);

/* pbus_segment_validate(), and the segment is the one of @instance. */
int pbus_segment_validate_instance(const unsigned char *base, size_t size, const char *instance);

/* Attach the wake segment that the (validated) value header of @table
 * names, and check that the instance's owner made it (docs/segment-format.md
 * §3). An orphaned instance whose wake segment is gone gets a private
 * stand-in. */
int pbus_wake_attach(struct pbus_table *table);

#endif
