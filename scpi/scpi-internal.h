/* SPDX-License-Identifier: MIT */
/*
 * scpi-internal.h: the command tree's lookup structures, shared by tree.c
 * (which builds them) and parse.c (which walks them). Not thread-safe to
 * build; read-only afterwards.
 */
#ifndef PBUS_SCPI_INTERNAL_H
#define PBUS_SCPI_INTERNAL_H

#include "scpi.h"

#define SCPI_NONE UINT32_MAX
/* Edge suffixes: a fixed suffix is 1..999999; these two are special. */
#define SCPI_SUFFIX_ANY 0u            /* `#`: any suffix */
#define SCPI_SUFFIX_MARK 0xfffffffeu  /* the mnemonic exists with some suffix */

struct scpi_node {
	uint32_t query_param; /* index in tree->params, or SCPI_NONE */
	uint32_t set_param;
};

struct scpi_edge {
	uint32_t parent;      /* node; SCPI_NONE marks a free slot */
	uint32_t suffix;
	uint32_t child;
	uint8_t length;
	char form[PBUS_SCPI_MNEMONIC_MAX]; /* upper case, not NUL-terminated */
};

struct pbus_scpi_tree {
	uint64_t schema_hash;
	struct pbus_scpi_param *params;
	size_t param_count;
	struct pbus_scpi_mnemonic *mnemonics;
	size_t mnemonic_count;
	struct pbus_scpi_status_source *status;
	size_t status_count;
	struct pbus_scpi_method *methods;
	size_t method_count;
	struct pbus_scpi_param *args;     /* the methods' arguments */
	size_t arg_count;
	struct pbus_scpi_label *labels;   /* the methods' error enumerators */
	size_t label_count;
	struct scpi_node *nodes; /* nodes[0] is the root */
	size_t node_count, node_capacity;
	struct scpi_edge *edges; /* open addressing, capacity a power of two */
	size_t edge_capacity;
};

/* The edge (parent, suffix, form) or NULL; form is upper case. */
const struct scpi_edge *scpi_edge_find(const struct pbus_scpi_tree *tree, uint32_t parent,
				       uint32_t suffix, const char *form, size_t length);

#endif
