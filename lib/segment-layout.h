/* SPDX-License-Identifier: MIT */
/*
 * segment-layout.h: the segment format v2 as C structs. This is a wire
 * format (docs/segment-format.md is its specification): fixed-width fields,
 * explicit offsets checked below, no pointers, native little-endian byte
 * order. Nothing here may change without a format version bump.
 *
 * Two shared-memory objects make an instance:
 *  - the value segment, the file /dev/shm/pbus.<instance>: header,
 *    descriptors, enums, string pool, value slots, per-parameter owner area.
 *    Owned by the instance's owner and writable only by trusted writers;
 *    everybody else maps it read-only, after checking who owns it.
 *  - the wake segment, a System V shared-memory segment whose id the value
 *    header names: the futex word, the waiter counts and the reader's turns,
 *    writable by every reader, because a reader that waits must say so and a
 *    read-only reader cannot write the value segment. Unlike a file, its size
 *    is fixed at creation and only its creator can remove it, so nobody can
 *    make its mappings fault; and nothing in it is trusted for a size or an
 *    identity. Tampering with it can delay a waiter's wake-up or a write by
 *    a bound docs/security.md states, never change, tear or hide a value.
 */
#ifndef PBUS_SEGMENT_LAYOUT_H
#define PBUS_SEGMENT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/table.h>

#define PBUS_SEGMENT_MAGIC "PARAMBUS"   /* 8 bytes, no NUL */
#define PBUS_WAKE_MAGIC "PBUSWAKE"      /* 8 bytes, no NUL */
#define PBUS_FORMAT_VERSION 2u
#define PBUS_INSTANCE_NAME_MAX 48
#define PBUS_PARAM_NAME_MAX 127
#define PBUS_PARAM_MAX 65535u
#define PBUS_VALUE_SIZE_MAX 65536u
#define PBUS_NO_ENUM 0xffffffffu
#define PBUS_NO_GID 0xffffffffu
#define PBUS_CACHE_LINE 64u
/* Values up to this size have 2 copies, larger ones 4 (docs/segment-format.md
 * §4.5): a reader of a large value takes about as long as a writer, so it
 * must be allowed to overlap more than one completed write. */
#define PBUS_TWO_COPY_LIMIT 256u

/* pbus_segment_header.state */
enum {
	PBUS_SEGMENT_CREATING = 0, /* being filled, not yet published */
	PBUS_SEGMENT_LIVE = 1,
	PBUS_SEGMENT_CLOSED = 2,
	PBUS_SEGMENT_REPLACED = 3
};

struct pbus_segment_header {
	char magic[8];               /* "PARAMBUS" */
	uint32_t format_version;     /* 2 */
	uint32_t header_size;        /* 256 */
	uint64_t segment_size;       /* bytes of the whole segment */
	uint64_t schema_hash;        /* FNV-1a-64 of the compiled schema */
	uint64_t instance_id;        /* random, chosen at creation */
	uint32_t param_count;
	uint32_t enum_count;
	uint32_t descriptor_size;    /* 128 */
	uint32_t state;              /* PBUS_SEGMENT_*, atomic */
	uint64_t descriptors_offset; /* param_count descriptors */
	uint64_t enums_offset;       /* enum_count enum records */
	uint64_t enumerators_offset; /* all enumerators, enum by enum */
	uint64_t strings_offset;     /* the string pool */
	uint64_t strings_size;
	uint64_t slots_offset;       /* value slots, 64-byte aligned */
	uint64_t slots_size;
	uint64_t aux_offset;         /* param_count pbus_param_aux */
	uint32_t owner_pid;          /* pbusd's process */
	uint32_t owner_start;        /* its start time token (see write lock) */
	uint64_t created_ns;         /* CLOCK_REALTIME at creation */
	uint32_t interface_name;     /* string pool offset */
	uint32_t interface_name_length;
	uint32_t interface_major;
	uint32_t interface_minor;
	char instance[64];           /* NUL-terminated name */
	uint32_t save_count;         /* futex word: bumped after each save */
	uint32_t wake_id;            /* System V shm id of the wake segment */
	uint64_t wake_size;          /* its size in bytes */
	uint64_t revocations;        /* bumped by every revoker of a bias (§4.3) */
	uint64_t reserved[2];
};

struct pbus_param_descriptor {
	uint32_t name;           /* string pool offset */
	uint32_t name_length;    /* bytes, without the NUL that follows */
	uint32_t unit;
	uint32_t unit_length;
	uint32_t description;
	uint32_t description_length;
	uint32_t group;          /* Unix group that may write, by name */
	uint32_t group_length;
	uint8_t type;            /* enum pbus_type */
	uint8_t update_class;    /* enum pbus_update_class */
	uint16_t flags;          /* enum pbus_param_flag */
	uint32_t value_size;     /* capacity in bytes */
	uint32_t element_size;   /* scalar/element size; 1 for string/bytes */
	uint32_t enum_index;     /* PBUS_NO_ENUM if none */
	uint64_t slot_offset;    /* from the segment's start */
	uint32_t copy_stride;    /* 16 + value_size rounded up to 8 */
	uint32_t slot_size;      /* 16 + copy_count * copy_stride rounded up to 64 */
	uint64_t min;            /* union pbus_number bits, by type */
	uint64_t max;
	uint64_t step;
	uint32_t default_value;  /* string pool offset of the default's bytes */
	uint32_t default_length;
	uint32_t gid;            /* the group's id as pbusd resolved it, or PBUS_NO_GID */
	uint32_t copy_count;     /* copies in the slot: 2, or 4 for values above 256 bytes
				  * (a power of two: readers and writers mask with it) */
	uint64_t reserved[3];
};

struct pbus_enum_record {
	uint32_t name;           /* string pool offset */
	uint32_t name_length;
	uint32_t first;          /* index of its first enumerator */
	uint32_t count;
};

struct pbus_enumerator {
	int32_t value;
	uint32_t label;          /* string pool offset */
	uint32_t label_length;
	uint32_t reserved;
};

/* The start of every slot; the two copies follow at 16 and 16 + stride. */
struct pbus_slot_head {
	uint64_t seq;            /* version; the current value is copy[seq % copy_count] */
	uint64_t lock;           /* writer lock word (write-lock.c, §4.3) */
};

struct pbus_copy_head {
	uint64_t timestamp_ns;
	uint32_t status;
	uint32_t length;         /* bytes of the value that follows */
};

struct pbus_param_aux {
	uint64_t saved_seq;      /* newest version known to be on disk (owner only) */
	uint64_t writing;        /* token of the biased writer while it writes, else 0
				  * (that writer only, and revokers; write-lock.c) */
};

/* Anybody may write any of this: the first line is for people (ipcs, a
 * debugger) and never read by the library; the counts are hints whose
 * damage docs/security.md bounds. */
struct pbus_wake_header {
	char magic[8];           /* "PBUSWAKE" */
	uint32_t format_version; /* 2 */
	uint32_t param_count;
	uint64_t instance_id;    /* the value segment's */
	uint64_t reserved0[5];
	/* Second cache line: the words every waiter and writer touch. */
	uint32_t notify;         /* futex word: bumped on each watched change */
	uint32_t any_waiters;    /* waiters that watch every parameter */
	uint32_t param_waiters;  /* the sum of the per-parameter counts */
	uint32_t reserved1[13];
	/* Then param_count uint32_t waiter counts, and from
	 * pbus_wake_turns_offset() param_count uint64_t reader's-turn deadlines
	 * (CLOCK_MONOTONIC ns; 0 = none). */
};

#define PBUS_WAKE_WAITERS_OFFSET 128u

/* Where the per-parameter reader's-turn deadlines (u64) start. */
static inline uint64_t pbus_wake_turns_offset(uint32_t param_count)
{
	return (PBUS_WAKE_WAITERS_OFFSET + 4ull * param_count + 7) / 8 * 8;
}

static inline uint64_t pbus_wake_segment_bytes(uint32_t param_count)
{
	return pbus_wake_turns_offset(param_count) + 8ull * param_count;
}

/* The most a wake segment may exceed what its parameters need (it is
 * rounded up to a page; 64 KiB is the largest page size Linux has). */
#define PBUS_WAKE_SLACK_MAX 65536u

_Static_assert(sizeof(struct pbus_segment_header) == 256, "header is 256 bytes");
_Static_assert(offsetof(struct pbus_segment_header, schema_hash) == 24, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, instance_id) == 32, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, state) == 52, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, descriptors_offset) == 56, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, aux_offset) == 112, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, owner_pid) == 120, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, created_ns) == 128, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, interface_name) == 136, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, instance) == 152, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, save_count) == 216, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, wake_id) == 220, "header layout");
_Static_assert(offsetof(struct pbus_segment_header, wake_size) == 224, "header layout");
_Static_assert(sizeof(struct pbus_param_descriptor) == 128, "descriptor is 128 bytes");
_Static_assert(offsetof(struct pbus_param_descriptor, type) == 32, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, value_size) == 36, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, slot_offset) == 48, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, copy_stride) == 56, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, min) == 64, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, default_value) == 88, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, gid) == 96, "descriptor layout");
_Static_assert(offsetof(struct pbus_param_descriptor, copy_count) == 100, "descriptor layout");
_Static_assert(sizeof(struct pbus_enum_record) == 16, "enum record is 16 bytes");
_Static_assert(sizeof(struct pbus_enumerator) == 16, "enumerator is 16 bytes");
_Static_assert(sizeof(struct pbus_slot_head) == PBUS_SLOT_COPY0_OFFSET, "slot head");
_Static_assert(offsetof(struct pbus_slot_head, seq) == PBUS_SLOT_SEQ_OFFSET, "slot head");
_Static_assert(offsetof(struct pbus_copy_head, status) == PBUS_COPY_STATUS_OFFSET, "copy");
_Static_assert(offsetof(struct pbus_copy_head, length) == PBUS_COPY_LENGTH_OFFSET, "copy");
_Static_assert(sizeof(struct pbus_copy_head) == PBUS_COPY_VALUE_OFFSET, "copy head");
_Static_assert(sizeof(struct pbus_param_aux) == 16, "aux is 16 bytes");
_Static_assert(offsetof(struct pbus_segment_header, revocations) == 232, "header layout");
_Static_assert(PBUS_SCALAR_COPY_STRIDE == PBUS_COPY_VALUE_OFFSET + 8, "scalar copy stride");
_Static_assert(sizeof(struct pbus_wake_header) == PBUS_WAKE_WAITERS_OFFSET, "wake header");
_Static_assert(offsetof(struct pbus_wake_header, notify) == 64, "wake header");

static inline uint64_t pbus_round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

#endif
