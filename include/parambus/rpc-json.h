/* SPDX-License-Identifier: MIT */
/*
 * parambus/rpc-json.h: method arguments, replies and broadcasts as JSON,
 * driven by the compiled schema instead of generated code (`pbus call`,
 * `pbus listen`, scripts, test tools).
 *
 * The schema's type, method and broadcast records (docs/schema-format.md)
 * say what each argument is; these functions turn JSON text into the
 * wire encoding of docs/methods.md §4 and back, with the mapping of
 * docs/methods.md, "JSON". What they refuse, they refuse with one line in
 * @error naming the argument and the problem ("argument 'channel': 70000
 * is outside UInt16"); NULL @error is allowed.
 *
 * Threads: the functions keep no state; the schema is only read (any
 * number of threads at once). The returned JSON text is malloc'd: the
 * caller frees it with free().
 */
#ifndef PARAMBUS_RPC_JSON_H
#define PARAMBUS_RPC_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/common.h>
#include <parambus/rpc.h>
#include <parambus/schema.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pbus_rpc_json_flag {
	PBUS_RPC_JSON_PRETTY = 1u << 0 /* indented over several lines, else one line */
};

/*
 * Encode @json, an object of method @method's in-arguments by name (every
 * one, no other; "{}" or NULL for a method without any), after what @buf
 * holds. Returns 0, -ENOENT (no method @method), -EINVAL (not JSON, or
 * not of the arguments' types: @error says which and why), -ENOMEM.
 */
PBUS_API int pbus_rpc_json_encode_call(const struct pbus_schema *schema, uint32_t method,
				       const char *json, struct pbus_rpc_buf *buf, char *error,
				       size_t error_size);

/*
 * Decode the body of method @method's reply (its "error" first when the
 * method has an error enumeration, then its out-arguments by name) into a
 * JSON object in *ret_json. Returns 0, -ENOENT (no such method), -EPROTO
 * (the body is malformed: @error says where), -ENOMEM.
 */
PBUS_API int pbus_rpc_json_decode_reply(const struct pbus_schema *schema, uint32_t method,
					const void *body, size_t size, unsigned flags,
					char **ret_json, char *error, size_t error_size);

/* The arguments of broadcast @broadcast, likewise, as an object by name. */
PBUS_API int pbus_rpc_json_decode_broadcast(const struct pbus_schema *schema, uint32_t broadcast,
					    const void *body, size_t size, unsigned flags,
					    char **ret_json, char *error, size_t error_size);

/*
 * One value of type @type, named as the schema names types ("uint16",
 * "integer:-5:5", "string[]", "org.example.rpc.AllRpc.Basics"; only types
 * the schema's records use): encode @json into @buf, or decode exactly
 * @size bytes into *ret_json. Errors as above, -ENOENT for an unknown
 * type.
 */
PBUS_API int pbus_rpc_json_encode_value(const struct pbus_schema *schema, const char *type,
					const char *json, struct pbus_rpc_buf *buf, char *error,
					size_t error_size);
PBUS_API int pbus_rpc_json_decode_value(const struct pbus_schema *schema, const char *type,
					const void *body, size_t size, unsigned flags,
					char **ret_json, char *error, size_t error_size);

/*
 * The interface of @schema as the proxy and stub runtime wants it
 * (parambus/rpc.h): its name, version, methods (flags, CallableBy group)
 * and broadcasts, numbered as in the schema. Its strings are the
 * schema's: free it (pbus_rpc_json_interface_free()) before the schema.
 * Returns 0, -EINVAL, -ENOMEM.
 */
PBUS_API int pbus_rpc_json_interface_new(const struct pbus_schema *schema,
					 struct pbus_rpc_interface **ret_interface);
PBUS_API void pbus_rpc_json_interface_free(struct pbus_rpc_interface *itf);

#ifdef __cplusplus
}
#endif

#endif
