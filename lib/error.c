/* SPDX-License-Identifier: MIT */
/*
 * error.c: names for errors, types, statuses and update classes.
 */
#include <errno.h>
#include <string.h>

#include <parambus/common.h>

const char *pbus_strerror(int negative_errno)
{
	switch (-negative_errno) {
	case 0: return "success";
	case ENOENT: return "no such parameter or instance";
	case ERANGE: return "value out of range";
	case EACCES: return "permission denied (read-only parameter or no write access)";
	case EINVAL: return "invalid argument or wrong type";
	case EMSGSIZE: return "value too long";
	case ETIMEDOUT: return "timed out";
	case ESTALE: return "instance closed or replaced (reopen it)";
	case EBUSY: return "busy (held by another owner or writer)";
	case EPROTO: return "not a parambus segment of a supported format";
	case EMEDIUMTYPE:
		return "the instance was made from another schema (regenerate the bindings with pbus-gen "
		       "from its .fidl and .fdepl, or open the right instance)";
	case ESRCH: return "the instance's owner (pbusd) is not running";
	case EPERM: return "not permitted (no write right, or the instance belongs to an untrusted user)";
	case ENOBUFS: return "buffer too small";
	default: return strerror(-negative_errno);
	}
}

const char *pbus_type_name(unsigned type)
{
	static const char *const names[] = {
		"?", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
		"uint64", "float", "double", "string", "bytes", "enum",
	};
	static const char *const array_names[] = {
		"?", "bool[]", "int8[]", "int16[]", "int32[]", "int64[]", "uint8[]", "uint16[]",
		"uint32[]", "uint64[]", "float[]", "double[]",
	};
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;

	if (type & PBUS_TYPE_ARRAY_FLAG)
		return element < sizeof(array_names) / sizeof(array_names[0]) ? array_names[element] : "?";
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

const char *pbus_status_name(unsigned status)
{
	static const char *const names[] = {"ok", "minor", "major", "invalid"};

	return status < 4 ? names[status] : "?";
}

const char *pbus_update_class_name(unsigned update_class)
{
	static const char *const names[] = {"constant", "rare", "setting", "live"};

	return update_class < 4 ? names[update_class] : "?";
}
