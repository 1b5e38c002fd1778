/* SPDX-License-Identifier: MIT */
/*
 * pbus-check-info.h: a check shared by the tests of the schema view (the
 * table's, tests/unit/test-table.c, and the client's,
 * tests/client/test-client.c): two descriptions of one parameter agree in
 * every field. Include after pbus-check.h and parambus/table.h.
 */
#ifndef PBUS_CHECK_INFO_H
#define PBUS_CHECK_INFO_H

#include <string.h>

#include <parambus/table.h>

#include "pbus-check.h"

static inline void pbus_check_same_info(const struct pbus_param_info *a, const struct pbus_param_info *b)
{
	CHECK_EQ_STR(a->name, b->name);
	CHECK_EQ_STR(a->unit, b->unit);
	CHECK_EQ_STR(a->description, b->description);
	CHECK_EQ_STR(a->group, b->group);
	CHECK_EQ(a->index, b->index);
	CHECK_EQ(a->type, b->type);
	CHECK_EQ(a->flags, b->flags);
	CHECK_EQ(a->update_class, b->update_class);
	CHECK_EQ(a->value_size, b->value_size);
	CHECK_EQ(a->element_size, b->element_size);
	CHECK_EQ(a->enum_count, b->enum_count);
	CHECK_MSG(a->min.u == b->min.u && a->max.u == b->max.u && a->step.u == b->step.u,
		  "%s: limits differ", a->name);
	CHECK_EQ(a->default_length, b->default_length);
	CHECK_MSG((a->default_value == NULL) == (b->default_value == NULL) &&
			  (!a->default_value ||
			   !memcmp(a->default_value, b->default_value, a->default_length)),
		  "%s: defaults differ", a->name);
}

#endif
