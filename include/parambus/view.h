/* SPDX-License-Identifier: MIT */
/*
 * parambus/view.h: a schema view, what the schema says of each parameter of
 * an instance, whichever way the program reaches it: through the table
 * (parambus/table.h) or through pbusd's socket (parambus/client.h). Names,
 * types, units, limits, enumerators, and values as text.
 *
 *   const struct pbus_view *view = pbus_table_view(table);  // or pbus_client_view(client)
 *   uint32_t index;
 *   struct pbus_param_info info;
 *   if (pbus_view_find(view, "voltage_setpoint", &index) == 0 &&
 *       pbus_view_describe(view, index, &info) == 0)
 *           printf("%s [%s]\n", info.name, info.unit);
 *
 * A parameter is named by its index, 0 … pbus_view_count() - 1, the same
 * index as pbus_table_param()'s and the socket protocol's; an index out of
 * range is -ENOENT. A table's view and a client's view of the same instance
 * give the same answers.
 *
 * Ownership: a view belongs to its table or client, which builds it once
 * (when the table is opened, when the client has the schema) and frees it
 * when it is closed: the view and every string it returns are valid until
 * pbus_table_close() or pbus_client_close(). Do not free it.
 *
 * Threads: a view never changes, so any number of threads may call these
 * functions on one view at once, also while another thread uses its table
 * or client, as long as nobody closes that.
 */
#ifndef PARAMBUS_VIEW_H
#define PARAMBUS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <parambus/common.h>
#include <parambus/table.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pbus_view;
struct pbus_client;

/* The view of @table, or NULL if @table is NULL. */
PBUS_API const struct pbus_view *pbus_table_view(const struct pbus_table *table);

/* The view of @client (the schema pbusd sent at the first connect), or NULL
 * if @client is NULL. */
PBUS_API const struct pbus_view *pbus_client_view(const struct pbus_client *client);

/* The number of parameters; 0 if @view is NULL. */
PBUS_API uint32_t pbus_view_count(const struct pbus_view *view);

/* The index of the parameter called @name (its full name); -ENOENT if there
 * is none, -EINVAL if an argument is NULL. */
PBUS_API int pbus_view_find(const struct pbus_view *view, const char *name, uint32_t *ret_index);

/* Fill *ret_info with parameter @index's description; its strings and
 * default value are valid as long as the view. -EINVAL, -ENOENT. */
PBUS_API int pbus_view_describe(const struct pbus_view *view, uint32_t index,
				struct pbus_param_info *ret_info);

/*
 * Enumerators of enum parameter (or enum array) @index: the @i-th label and
 * value, and the two directions of lookup. -ENOENT if the parameter or the
 * enumerator is absent, -EINVAL if the parameter is not an enum (or an
 * argument NULL). Either output pointer of pbus_view_enumerator() may be
 * NULL; labels are valid as long as the view.
 */
PBUS_API int pbus_view_enumerator(const struct pbus_view *view, uint32_t index, uint32_t i,
				  const char **ret_label, int32_t *ret_value);
PBUS_API int pbus_view_enum_value(const struct pbus_view *view, uint32_t index, const char *label,
				  int32_t *ret_value);
PBUS_API int pbus_view_enum_label(const struct pbus_view *view, uint32_t index, int32_t value,
				  const char **ret_label);

/*
 * Parse @text as a value of parameter @index ("3.3", "true", "ON", "a,b,c"
 * for arrays, hex for bytes) into @buf (@size bytes) in its stored
 * encoding; *ret_length gets its length. Checks the type and the limits:
 * -EINVAL malformed (or an argument NULL), -ERANGE out of limits or no
 * enumerator, -EMSGSIZE too long, -ENOENT no such parameter.
 */
PBUS_API int pbus_view_parse(const struct pbus_view *view, uint32_t index, const char *text,
			     void *buf, size_t size, size_t *ret_length);

/* Format a value of parameter @index in its stored encoding (@length bytes
 * at @value) as text, snprintf-style: returns the length the full text
 * needs (without NUL) and writes at most @size bytes. -EINVAL, -ENOENT. */
PBUS_API int pbus_view_format(const struct pbus_view *view, uint32_t index, const void *value,
			      size_t length, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
