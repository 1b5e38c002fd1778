/* SPDX-License-Identifier: MIT */
/*
 * parambus/common.h: what every parambus header shares, libparambus-hw's
 * (parambus/hw/) included: the export macro, the version, the parameter
 * types, alarm statuses, flags and error strings.
 *
 * Conventions of the whole API (stated once here):
 *  - Functions return 0 (or a non-negative result) on success and a negative
 *    errno on failure: -ENOENT unknown name or instance, -ERANGE outside the
 *    limits, -EACCES not allowed (read-only parameter or no write access),
 *    -EINVAL wrong type or malformed input, -EMSGSIZE value too long,
 *    -ETIMEDOUT a wait timed out, -ESTALE the instance was closed or replaced.
 *  - Output parameters are named ret_* and come last; they are written on
 *    success only.
 *  - Objects are used by one thread at a time unless a function says
 *    otherwise; independent objects may be used in parallel.
 */
#ifndef PARAMBUS_COMMON_H
#define PARAMBUS_COMMON_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PBUS_STATIC_DEFINE)
#define PBUS_API
#else
#define PBUS_API __attribute__((visibility("default")))
#endif

/* The version of parambus, of both its libraries (the project's version in
 * CMakeLists.txt, which pkg-config reports). */
#define PBUS_VERSION_MAJOR 0
#define PBUS_VERSION_MINOR 1
#define PBUS_VERSION_PATCH 0

/* Parameter types. The numbers are part of the segment format. */
enum pbus_type {
	PBUS_TYPE_BOOL = 1,
	PBUS_TYPE_INT8 = 2,
	PBUS_TYPE_INT16 = 3,
	PBUS_TYPE_INT32 = 4,
	PBUS_TYPE_INT64 = 5,
	PBUS_TYPE_UINT8 = 6,
	PBUS_TYPE_UINT16 = 7,
	PBUS_TYPE_UINT32 = 8,
	PBUS_TYPE_UINT64 = 9,
	PBUS_TYPE_FLOAT = 10,
	PBUS_TYPE_DOUBLE = 11,
	PBUS_TYPE_STRING = 12,
	PBUS_TYPE_BYTES = 13,
	PBUS_TYPE_ENUM = 14,
	/* An array of a scalar type: PBUS_TYPE_ARRAY_FLAG | element type. */
	PBUS_TYPE_ARRAY_FLAG = 0x80
};

/* Alarm status carried by every value, as in EPICS. */
enum pbus_status {
	PBUS_STATUS_OK = 0,
	PBUS_STATUS_MINOR = 1,
	PBUS_STATUS_MAJOR = 2,
	PBUS_STATUS_INVALID = 3 /* never written, or the source is lost */
};

/* Parameter flags (part of the segment format). */
enum pbus_param_flag {
	PBUS_PARAM_READONLY = 1u << 0,        /* only the instrument's provider writes it */
	PBUS_PARAM_PERSISTENT = 1u << 1,      /* pbusd saves it and restores it at start */
	PBUS_PARAM_NOREAD = 1u << 2,          /* Franca noRead: clients cannot read it */
	PBUS_PARAM_NOSUBSCRIPTIONS = 1u << 3, /* Franca noSubscriptions */
	PBUS_PARAM_HAS_MIN = 1u << 4,
	PBUS_PARAM_HAS_MAX = 1u << 5,
	PBUS_PARAM_HAS_STEP = 1u << 6,
	PBUS_PARAM_HAS_DEFAULT = 1u << 7
};

/* How often a parameter changes (from the deployment file). */
enum pbus_update_class {
	PBUS_UPDATE_CONSTANT = 0,
	PBUS_UPDATE_RARE = 1,
	PBUS_UPDATE_SETTING = 2,
	PBUS_UPDATE_LIVE = 3
};

/*
 * A static string describing a negative errno in parambus's terms
 * ("no such parameter", "value out of range"), or strerror's text for others.
 * Thread-safe; the string is never freed.
 */
PBUS_API const char *pbus_strerror(int negative_errno);

/* "double", "string", "int32[]" ...; "?" for an unknown code. Thread-safe. */
PBUS_API const char *pbus_type_name(unsigned type);

/* "ok", "minor", "major", "invalid"; "?" for an unknown code. Thread-safe. */
PBUS_API const char *pbus_status_name(unsigned status);

/* "constant", "rare", "setting", "live"; "?" otherwise. Thread-safe. */
PBUS_API const char *pbus_update_class_name(unsigned update_class);

#ifdef __cplusplus
}
#endif

#endif
